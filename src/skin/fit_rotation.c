/* The fit's rotation step (seed lbs-inverse-kinematics.md, "Find Optimized Rotation"; the
 * derivation is at the top of fit.c): the gradient by the increments over the hierarchy,
 * the Gauss-Newton metric (assembled, or applied by products for the conjugate
 * gradients), the direction and the Cayley update. */
#include "skin/fit_impl.h"
#include "skin/fit_internal.h"

#include <string.h>

/* The hierarchy (seed, "For hierarchical structure skeleton ... we update related control
 * points in a specified order, from root to leaves"): a rotation increment of controller
 * p turns p and, through the attachments, every controller hanging from it, about p's
 * pivot, the way a skeleton's subtree turns with its joint. up[j] is the controller whose
 * increment carries j (its parent when attached and j is not fixed), -1 for none. The
 * unknowns of the rotation step are these increments; attachments hold by construction,
 * and the translation step then moves the free controllers. */

/* out_p = sum over j carried by p (p included) of gR_j + (d_j - d_p) x gd_j, at the rotation
 * unknowns' offsets, for per-controller derivatives GA_j = dg/dA_j (3 x 4): gR_j the
 * derivative for a turn of j about its own pivot, gd_j = GA_j's last column. The sum over
 * the carried set in O(m), children into parents (a child's index is larger than its
 * parent's): with g1_p = sum_j (gR_j + (d_j - d_p) x gd_j) and G_p = sum_j gd_j over the
 * controllers j carried by p, a child c of p brings g1_c + (d_c - d_p) x G_c. */
static void carried_contract(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, const double* GA,
                             double* out) {
    mn_vec3* g1 = f->gsum;
    mn_vec3* G2 = f->gsum + f->m;
    for (int j = 0; j < f->m; j++) {
        const double* G = GA + 12 * j;
        g1[j] = mn_ft_rot_grad(f, G, R, j);
        G2[j] = mn_v3(G[3], G[7], G[11]);
    }
    for (int j = f->m - 1; j >= 0; j--) {
        int p = f->up[j];
        if (p < 0) continue;
        g1[p] =
            mn_vec3_add(g1[p], mn_vec3_add(g1[j], mn_vec3_cross(mn_vec3_sub(d[j], d[p]), G2[j])));
        G2[p] = mn_vec3_add(G2[p], G2[j]);
    }
    for (int j = 0; j < f->m; j++) {
        int o = f->rot_off[j];
        if (o < 0) continue;
        if (f->dim == 3) {
            out[o] = g1[j].x;
            out[o + 1] = g1[j].y;
            out[o + 2] = g1[j].z;
        } else {
            out[o] = g1[j].z;
        }
    }
}

/* Directional derivative of g along the increments: for each p,
 *   dg/dp_p = sum over j carried by p (p itself included) of gR_j + (d_j - d_p) x gd_j,
 * with gR_j the rotation gradient and gd_j = dg/dd_j. At the translation step's minimiser
 * this is the gradient of the reduced energy (the increments keep every attachment, so
 * the multipliers do not enter). Needs GA at (R, d). */
void mn_ft_rotation_gradient(mn_fitter* f, const mn_mat3* R, const mn_vec3* d) {
    carried_contract(f, R, d, f->GA, f->grad);
    /* A fixed controller attached to a free parent is not carried by the increments: its
     * attachment row then moves with them, and the multiplier adds its share (envelope
     * theorem: the constraint d_c - d_p - R_p e = 0 changes by -dq x (d_c - d_q) when q
     * turns a controller chain that carries p). */
    for (int k = 0; k < f->nc; k++) {
        int c = f->con_a[k], p = f->con_b[k];
        if (p < 0 || f->up[c] == p) continue;
        mn_vec3 lam = mn_v3(f->lambda[k], f->lambda[(size_t)f->ncap + (size_t)k],
                            f->lambda[2 * (size_t)f->ncap + (size_t)k]);
        for (int q = p; q >= 0; q = f->up[q]) {
            int o = f->rot_off[q];
            if (o < 0) continue;
            mn_vec3 g = mn_vec3_cross(mn_vec3_sub(d[c], d[q]), lam);
            if (f->dim == 3) {
                f->grad[o] -= g.x;
                f->grad[o + 1] -= g.y;
                f->grad[o + 2] -= g.z;
            } else {
                f->grad[o] -= g.z;
            }
        }
    }
}

/* Gauss-Newton metric of the increments (the rotation step's scaling). A vertex i moves
 * by dx_i = sum_p dp_p x sum_{j carried by p} w_ij b_ijp, b_ijp = A_j z_i - d_p (its image
 * under j relative to p's pivot), so
 *   H_pq = sum_i m_i J_ip^T J_iq = tr(N) I - N^T,
 *   N = sum_{j by p, k by q} A_j Q_jk A_k^T - (A_j q_jk) d_q^T - d_p (A_k q_jk)^T + s_jk d_p d_q^T
 * with q_jk the last column of Q_jk and s_jk = Q_jk[3][3]. The four sums over the carried
 * sets are accumulated up the hierarchy once per iteration (dense m x m, children after
 * parents), so the metric costs O(pairs + m^2), not O(vertices).
 *
 * The translations of the free controllers (unattached, unfixed: the translation step
 * re-optimises them) are eliminated from the metric by their Schur complement,
 *   H <- H_rr - H_rt H_tt^-1 H_tr,  H_pt = [v_pt]x,  v_pt = sum (A_j q_jk - s_jk d_p),
 *   H_tt = (sum s_jk) (x) I (constant: inverted once per fixed set),
 * so that a controller's rotation is measured with its translation following. This makes
 * the step the Gauss-Newton step of the reduced problem and the fit converges in a few
 * iterations. */
static void add_block(mn_fitter* f, int P, int Qc, const double N[9], double sign) {
    int nr = f->nrot, op = f->rot_off[P], oq = f->rot_off[Qc];
    double tr = N[0] + N[4] + N[8];
    if (f->dim == 3) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                f->H[(size_t)(op + r) * nr + (size_t)(oq + c)] +=
                    sign * ((r == c ? tr : 0) - N[3 * c + r]);
    } else {
        f->H[(size_t)op * nr + (size_t)oq] += sign * (tr - N[8]);
    }
}

/* Per pair (a, b): M1 = A_a Q A_b^T, va = A_a q, vb = A_b q, s; A holds every A_j. */
static void pair_terms(const mn_fitter* f, const double* A, int pr, double M1[9], double va[3],
                       double vb[3], double* s) {
    int a = f->pair_a[pr], b = f->pair_b[pr];
    const double* Q = f->Q + 16 * pr;
    const double* Aa = A + 12 * a;
    const double* Ab = A + 12 * b;
    double AaQ[12];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            AaQ[4 * r + c] = Aa[4 * r] * Q[c] + Aa[4 * r + 1] * Q[4 + c] +
                             Aa[4 * r + 2] * Q[8 + c] + Aa[4 * r + 3] * Q[12 + c];
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            M1[3 * r + c] = AaQ[4 * r] * Ab[4 * c] + AaQ[4 * r + 1] * Ab[4 * c + 1] +
                            AaQ[4 * r + 2] * Ab[4 * c + 2] + AaQ[4 * r + 3] * Ab[4 * c + 3];
        va[r] = AaQ[4 * r + 3];
        vb[r] =
            Ab[4 * r] * Q[3] + Ab[4 * r + 1] * Q[7] + Ab[4 * r + 2] * Q[11] + Ab[4 * r + 3] * Q[15];
    }
    *s = Q[15];
}

static void n_block(const double* X, mn_vec3 dp, mn_vec3 dq, double N[9]) {
    /* X - X[9:12] q^T - p (X[12:15] - X[15] q)^T */
    double p[3] = {dp.x, dp.y, dp.z}, q[3] = {dq.x, dq.y, dq.z};
    double u[3] = {X[12] - X[15] * q[0], X[13] - X[15] * q[1], X[14] - X[15] * q[2]};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            N[3 * r + c] = X[3 * r + c] - X[9 + r] * q[c] - p[r] * u[c];
}

/* dst[0, n) += src[0, n) for an even n, the two not overlapping */
static inline void add_into(double* dst, const double* src, int n) {
    for (int t = 0; t < n; t += 2)
        mn_v2d_store(dst + t, mn_v2d_load(dst + t) + mn_v2d_load(src + t));
}

/* The dense metric's Schur complement of the free translations (build_metric_dense), from
 * the carried sums in f->X, which it then uses as scratch. */
static void metric_schur(mn_fitter* f, const mn_vec3* d) {
    int m = f->m, nr = f->nrot;
    double* X = f->X;
    /* Schur complement of the free translations:
     *   Vm (nfree x 3 nrl): row t holds v_pt for the rotating p, nonzero only where p's
     *     carried set shares vertices with t's (the pattern vpat, fixed per rig and set),
     *   Wm = Kinv Vm (dense: Kinv is), T^T = Vm^T Wm over Vm's nonzero blocks only,
     *   H_pq -= tr(Z) I - Z^T with Z = T's block (p, q) = sum_u w_pu v_qu^T.
     * Only the blocks q <= p are formed (H's lower triangle); the inner loops run over
     * contiguous rows. */
    int nf = f->nfree, nl = f->nrl, w3 = 3 * nl;
    double* Vm = f->V;
    double* Wm = f->Wv;
    for (int t = 0; t < nf; t++) {
        double* row = Vm + (size_t)t * w3;
        int ft = f->free_list[t];
        const int* pl = f->vpat + (size_t)t * nl;
        for (int e = 0; e < f->vpat_n[t]; e++) {
            int l = pl[e], p = f->rot_list[l];
            const double* x = X + 16 * ((size_t)p * m + ft);
            row[3 * l] = x[9] - x[15] * d[p].x;
            row[3 * l + 1] = x[10] - x[15] * d[p].y;
            row[3 * l + 2] = x[11] - x[15] * d[p].z;
        }
    }
    if (nf == 1) {
        /* one free controller (a skeleton's root): T = k v v^T, so the blocks are made
         * directly, H_pq -= k ((v_p . v_q) I - v_q v_p^T), without the products above */
        double k = f->Kinv[0];
        const int* pl = f->vpat;
        for (int e1 = 0; e1 < f->vpat_n[0]; e1++)
            for (int e2 = 0; e2 <= e1; e2++) {
                int lp = pl[e1], lq = pl[e2];
                const double* vp = Vm + 3 * lp;
                const double* vq = Vm + 3 * lq;
                if (f->dim != 3) {
                    double Z[9];
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 3; c++)
                            Z[3 * r + c] = k * vp[r] * vq[c];
                    add_block(f, f->rot_list[lp], f->rot_list[lq], Z, -1.0);
                    continue;
                }
                double tr = k * (vp[0] * vq[0] + vp[1] * vq[1] + vp[2] * vq[2]);
                double* h =
                    f->H + (size_t)f->rot_off[f->rot_list[lp]] * nr + f->rot_off[f->rot_list[lq]];
                for (int r = 0; r < 3; r++, h += nr)
                    for (int c = 0; c < 3; c++)
                        h[c] += k * vp[c] * vq[r] - (r == c ? tr : 0.0);
            }
        return;
    }
    memset(Wm, 0, (size_t)nf * w3 * sizeof(double));
    for (int t = 0; t < nf; t++) {
        const double* vt = Vm + (size_t)t * w3;
        const int* pl = f->vpat + (size_t)t * nl;
        for (int u = 0; u < nf; u++) {
            double k = f->Kinv[(size_t)t * nf + u];
            double* wu = Wm + (size_t)u * w3;
            for (int e = 0; e < f->vpat_n[t]; e++) {
                int c = 3 * pl[e];
                wu[c] += k * vt[c];
                wu[c + 1] += k * vt[c + 1];
                wu[c + 2] += k * vt[c + 2];
            }
        }
    }
    double* Tt = X; /* X is no longer needed: (3 nrl)^2 <= 16 m^2. Tt[j][i] = T[i][j] */
    for (int j = 0; j < w3; j++)
        memset(Tt + (size_t)j * w3 + 3 * (j / 3), 0, (size_t)(w3 - 3 * (j / 3)) * sizeof(double));
    for (int u = 0; u < nf; u++) {
        const double* wu = Wm + (size_t)u * w3;
        const double* vu = Vm + (size_t)u * w3;
        const int* pl = f->vpat + (size_t)u * nl;
        for (int e = 0; e < f->vpat_n[u]; e++) {
            int lq = pl[e];
            for (int c = 0; c < 3; c++) {
                double a = vu[3 * lq + c];
                double* row = Tt + (size_t)(3 * lq + c) * w3;
                for (int i = 3 * lq; i < w3; i++)
                    row[i] += a * wu[i];
            }
        }
    }
    for (int lp = 0; lp < nl; lp++)
        for (int lq = 0; lq <= lp; lq++) {
            double Z[9];
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    Z[3 * r + c] = Tt[(size_t)(3 * lq + c) * w3 + (size_t)(3 * lp + r)];
            add_block(f, f->rot_list[lp], f->rot_list[lq], Z, -1.0);
        }
}

static void build_metric_dense(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int coupled) {
    int m = f->m;
    double* X = f->X;
    memset(X, 0, (size_t)m * (size_t)m * 16 * sizeof(double));
    for (int pr = 0; pr < f->npairs; pr++) {
        int a = f->pair_a[pr], b = f->pair_b[pr];
        double M1[9], va[3], vb[3], s;
        pair_terms(f, f->dA, pr, M1, va, vb, &s);
        double* e = X + 16 * ((size_t)a * m + b);
        for (int u = 0; u < 9; u++)
            e[u] += M1[u];
        for (int u = 0; u < 3; u++) {
            e[9 + u] += va[u];
            e[12 + u] += vb[u];
        }
        e[15] += s;
        if (a != b) {
            double* t = X + 16 * ((size_t)b * m + a);
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    t[3 * r + c] += M1[3 * c + r];
            for (int u = 0; u < 3; u++) {
                t[9 + u] += vb[u];
                t[12 + u] += va[u];
            }
            t[15] += s;
        }
    }
    /* sums over the carried sets: rows, then columns, children into parents (the
     * columns row by row, to stay in the cache) */
    for (int j = m - 1; j >= 0; j--) {
        int u = f->up[j];
        if (u >= 0) add_into(X + 16 * (size_t)u * m, X + 16 * (size_t)j * m, 16 * m);
    }
    for (int p = 0; p < m; p++) {
        double* row = X + 16 * (size_t)p * m;
        for (int k = m - 1; k >= 0; k--) {
            int u = f->up[k];
            if (u >= 0) add_into(row + 16 * (size_t)u, row + 16 * (size_t)k, 16);
        }
    }
    /* H is symmetric and the Cholesky factorisation reads its lower triangle only: the
     * blocks q <= p suffice (rot_off grows with the controller index) */
    int nr = f->nrot;
    for (int p = 0; p < m; p++) {
        int op = f->rot_off[p];
        if (op < 0) continue;
        for (int q = 0; q <= p; q++) {
            int oq = f->rot_off[q];
            if (oq < 0 || (!coupled && p != q)) continue;
            /* H_pq = tr(N) I - N^T (add_block), written in place: every block of the
             * lower triangle is visited once, so H needs no clearing here */
            double N[9];
            n_block(X + 16 * ((size_t)p * m + q), d[p], d[q], N);
            double tr = N[0] + N[4] + N[8];
            if (f->dim == 3) {
                double* h = f->H + (size_t)op * nr + oq;
                h[0] = tr - N[0], h[1] = -N[3], h[2] = -N[6];
                h += nr;
                h[0] = -N[1], h[1] = tr - N[4], h[2] = -N[7];
                h += nr;
                h[0] = -N[2], h[1] = -N[5], h[2] = tr - N[8];
            } else {
                f->H[(size_t)op * nr + oq] = tr - N[8];
            }
        }
    }
    if (coupled && f->kinv_ok && f->nfree > 0) metric_schur(f, d);
}

/* Many controllers: the same metric pair by pair, walking the carried sets (no Schur). */
static void build_metric_pairs(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int coupled) {
    for (int pr = 0; pr < f->npairs; pr++) {
        int a = f->pair_a[pr], b = f->pair_b[pr];
        double X[16];
        pair_terms(f, f->dA, pr, X, X + 9, X + 12, X + 15);
        for (int P = a; P >= 0; P = f->up[P]) {
            if (f->rot_off[P] < 0) continue;
            for (int Qc = b; Qc >= 0; Qc = f->up[Qc]) {
                if (f->rot_off[Qc] < 0 || (!coupled && P != Qc)) continue;
                double N[9], NT[9];
                n_block(X, d[P], d[Qc], N);
                add_block(f, P, Qc, N, 1.0);
                if (a != b) { /* the pair (b, a): N^T into block (Qc, P) */
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 3; c++)
                            NT[3 * r + c] = N[3 * c + r];
                    add_block(f, Qc, P, NT, 1.0);
                }
            }
        }
    }
}

void mn_ft_build_metric(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int coupled) {
    if (!f->X || !coupled) memset(f->H, 0, (size_t)f->nrot * (size_t)f->nrot * sizeof(double));
    for (int j = 0; j < f->m; j++) /* every A_j once (dA is free scratch here) */
        mn_ft_make_A(f, R, d, j, f->dA + 12 * j);
    if (f->X)
        build_metric_dense(f, R, d, coupled);
    else
        build_metric_pairs(f, R, d, coupled);
}

/* out = H v, the product with the metric mn_ft_build_metric assembles (coupled), without
 * assembling it: v turns every controller by the increments (a point y moving with
 * controller j moves at w_j x y + t_j, with w_j and t_j = -v_q x d_q summed over the
 * controllers q carrying j, j included), so A_j changes at dA_j = [w_j]x A_j + [0 | t_j];
 * the free translations take the rates that minimise the vertices' kinetic
 * energy 1/2 sum_jk <dA_j Q_jk, dA_k> (their Schur complement, as in build_metric_dense),
 * and H v is that energy's derivative with respect to the increments: the pairs' sums
 * GdA_j = sum_k dA_k Q_kj contracted over the carried sets like the gradient
 * (carried_contract). O(pairs + m) per product, where assembling H costs O(pairs + m^2)
 * and factorising it O(m^3). A holds the A_j at (R, d). */
static void metric_apply(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, const double* A,
                         const double* v, double* out) {
    int m = f->m;
    for (int j = 0; j < m; j++) {
        int u = f->up[j], o = f->rot_off[j];
        mn_vec3 w = u >= 0 ? f->omg[u] : mn_v3(0, 0, 0);
        mn_vec3 t = u >= 0 ? f->tv[u] : mn_v3(0, 0, 0);
        if (o >= 0) {
            mn_vec3 vj = f->dim == 3 ? mn_v3(v[o], v[o + 1], v[o + 2]) : mn_v3(0, 0, v[o]);
            w = mn_vec3_add(w, vj);
            t = mn_vec3_sub(t, mn_vec3_cross(vj, d[j]));
        }
        f->omg[j] = w;
        f->tv[j] = t;
        const double* a = A + 12 * j;
        double* da = f->dAv + 12 * j;
        for (int c = 0; c < 4; c++) {
            mn_vec3 r = mn_vec3_cross(w, mn_v3(a[c], a[4 + c], a[8 + c]));
            if (c == 3) r = mn_vec3_add(r, t);
            da[c] = r.x;
            da[4 + c] = r.y;
            da[8 + c] = r.z;
        }
    }
    double* G = f->GdA;
    memset(G, 0, (size_t)m * 12 * sizeof(double));
    for (int p = 0; p < f->npairs; p++) {
        int a = f->pair_a[p], b = f->pair_b[p];
        const double* Q = f->Q + 16 * p;
        mn_ft_add_AQ(G + 12 * b, f->dAv + 12 * a, Q);
        if (a != b) mn_ft_add_AQ(G + 12 * a, f->dAv + 12 * b, Q);
    }
    int nf = f->nfree;
    if (f->X && f->kinv_ok && nf > 0) {
        /* the free translations' derivatives gt, their rates wt = -K^-1 gt (per axis), and
         * the pairs' sums of the rates: [0 | wt] Q_jk adds wt Q_jk's last row, summed
         * beforehand over the j that t carries (Qt) */
        double* gt = f->wfree;
        double* wt = f->wfree + 3 * (size_t)nf;
        memset(gt, 0, 3 * (size_t)nf * sizeof(double));
        for (int j = 0; j < m; j++) {
            int t = f->top[j];
            if (t < 0) continue;
            for (int ax = 0; ax < 3; ax++)
                gt[(size_t)ax * nf + t] += G[12 * j + 4 * ax + 3];
        }
        for (int ax = 0; ax < 3; ax++)
            for (int t = 0; t < nf; t++) {
                double sum = 0;
                if (ax < f->dim)
                    for (int q = 0; q < nf; q++)
                        sum += f->Kinv[(size_t)t * nf + q] * gt[(size_t)ax * nf + q];
                wt[(size_t)ax * nf + t] = -sum;
            }
        for (int e = 0; e < f->qt_n; e++) {
            int t = f->qt_tk[2 * e];
            const double* q = f->Qt + 4 * (size_t)e;
            double* Gk = G + 12 * f->qt_tk[2 * e + 1];
            for (int r = 0; r < 3; r++) {
                double w = wt[(size_t)r * nf + t];
                for (int c = 0; c < 4; c++)
                    Gk[4 * r + c] += w * q[c];
            }
        }
    }
    carried_contract(f, R, d, G, out);
}

/* The rotation step's direction from an earlier metric: conjugate gradients on
 * H dir = -grad with the current metric's product (metric_apply) and, as preconditioner,
 * the factor of the metric built at an earlier iterate (in f->H). An inexact Newton step
 * (Dembo, Eisenstat and Steihaug, "Inexact Newton Methods", SIAM J. Numer. Anal. 19, 1982;
 * Kelley, "Iterative Methods for Linear and Nonlinear Equations", 1995, 6.1 and 7.2,
 * Newton-Krylov with a frozen preconditioner): the metric changes little between
 * iterates, so the preconditioned system is close to the identity and a few products,
 * each O(pairs + m), replace assembling and factorising the metric. floor is the decrease
 * below which the fit has converged: when the earlier metric's own step predicts less than
 * a tenth of it, that step is returned without products (returns 1), and eta is raised to
 * what brings the decrease left to a tenth of floor. The iteration stops when the
 * preconditioned residual falls to eta of its start (returns 1) or after maxit products
 * (returns 0; dir holds the last iterate, a descent direction). */
int mn_ft_pcg_direction(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, double eta, int maxit,
                        double floor) {
    int n = f->nrot;
    double *x = f->cg, *r = x + n, *z = r + n, *p = z + n, *Hp = f->Hp;
    for (int i = 0; i < n; i++) {
        x[i] = 0;
        r[i] = z[i] = -f->grad[i];
    }
    mn_chol_solve(f->H, f->Hdinv, n, z);
    double rz = 0;
    for (int i = 0; i < n; i++)
        rz += r[i] * z[i];
    memcpy(p, z, (size_t)n * sizeof(double));
    int ok = 0, k = 0;
    if (!(0.5 * rz > 0.1 * floor)) {
        memcpy(f->dir, z, (size_t)n * sizeof(double));
        return 1;
    }
    /* (the step's error in the metric's norm is about eta times the step) */
    eta = fmin(PCG_ETA, fmax(eta, sqrt(0.1 * floor / (0.5 * rz))));
    double stop = eta * eta * rz;
    while (rz > 0 && k < maxit) {
        metric_apply(f, R, d, f->Abuf, p, Hp);
        k++;
        f->n_products++;
        double pHp = 0;
        for (int i = 0; i < n; i++)
            pHp += p[i] * Hp[i];
        if (!(pHp > 0)) break;
        double al = rz / pHp, rzn = 0;
        for (int i = 0; i < n; i++) {
            x[i] += al * p[i];
            r[i] -= al * Hp[i];
            z[i] = r[i];
        }
        mn_chol_solve(f->H, f->Hdinv, n, z);
        for (int i = 0; i < n; i++)
            rzn += r[i] * z[i];
        if (rzn <= stop) {
            ok = 1;
            break;
        }
        double be = rzn / rz;
        for (int i = 0; i < n; i++)
            p[i] = z[i] + be * p[i];
        rz = rzn;
    }
    memcpy(f->dir, x, (size_t)n * sizeof(double));
    return ok;
}

void mn_fit_counts(const mn_fitter* f, int* builds, int* products, int* starts) {
    if (builds) *builds = f ? f->n_builds : 0;
    if (products) *products = f ? f->n_products : 0;
    if (starts) *starts = f ? f->n_starts : 0;
}

int mn_fit_start_taken(const mn_fitter* f) {
    return f ? f->start_kind : 0;
}

int mn_fit_metric_products(mn_fitter* f, const mn_xform* pose, const double* v, double* dense,
                           double* implicit) {
    if (!f || !pose || !v || !dense || !implicit || !f->have_targets || f->nrot == 0) return 0;
    mn_ft_load_pose(f, pose);
    mn_ft_translation_grad(f, f->R, f->d);
    mn_ft_translation_solve(f, f->R, f->d);
    mn_ft_energy_and_grad(f, f->R, f->d, 1);
    mn_ft_build_metric(f, f->R, f->d, 1);
    int n = f->nrot;
    for (int i = 0; i < n; i++) { /* H's lower triangle holds it */
        double s = 0;
        for (int k = 0; k < n; k++)
            s += (k <= i ? f->H[(size_t)i * n + k] : f->H[(size_t)k * n + i]) * v[k];
        dense[i] = s;
    }
    metric_apply(f, f->R, f->d, f->Abuf, v, implicit);
    return n;
}

/* Solves H dir = -grad with a little Levenberg damping (a controller whose vertices lie
 * on a line cannot sense rotation about it). Falls back to the scaled gradient. */
int mn_ft_rotation_direction(mn_fitter* f) {
    int nr = f->nrot;
    double dmax = 0;
    for (int i = 0; i < nr; i++)
        dmax = fmax(dmax, f->H[(size_t)i * nr + (size_t)i]);
    if (!(dmax > 0)) dmax = 1;
    /* H is rebuilt before every call, so it is factorised in place. */
    for (int i = 0; i < nr; i++)
        f->H[(size_t)i * nr + (size_t)i] += 1e-10 * dmax;
    if (mn_chol_factor(f->H, nr, f->Hdinv)) {
        for (int i = 0; i < nr; i++)
            f->dir[i] = -f->grad[i];
        mn_chol_solve(f->H, f->Hdinv, nr, f->dir);
        return 1;
    }
    for (int i = 0; i < nr; i++)
        f->dir[i] = -f->grad[i] / dmax;
    return 0;
}

/* Applies alpha * dir, root to leaves: controller j moves by M_j = M_up(j) o G_j where
 * G_j turns about j's pivot by mn_ft_cayley(alpha dir_j) (identity for a controller without a
 * rotation unknown). R_j <- Phi_j R_j, d_j <- M_j(d_j). Any map of the
 * increments to rotations that agrees with exp to first order keeps the Gauss-Newton
 * step's convergence (a retraction: Absil, Mahony and Sepulchre, "Optimization Algorithms
 * on Matrix Manifolds", 2008, 4.1 and 8.4); the line search measures the energy where the
 * map leads. */
void mn_ft_apply_rotation(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, double alpha,
                          mn_mat3* Rout, mn_vec3* dout) {
    for (int j = 0; j < f->m; j++) {
        int o = f->rot_off[j];
        mn_mat3 E = mn_mat3_identity();
        if (o >= 0) {
            mn_vec3 dp =
                f->dim == 3 ? mn_v3(alpha * f->dir[o], alpha * f->dir[o + 1], alpha * f->dir[o + 2])
                            : mn_v3(0, 0, alpha * f->dir[o]);
            E = mn_ft_cayley(dp);
        }
        mn_vec3 tau = mn_vec3_sub(d[j], mn_mat3_mulv(&E, d[j]));
        int u = f->up[j];
        if (u >= 0) {
            f->phi[j] = mn_mat3_mul(&f->phi[u], &E);
            f->tau[j] = mn_vec3_add(mn_mat3_mulv(&f->phi[u], tau), f->tau[u]);
        } else {
            f->phi[j] = E;
            f->tau[j] = tau;
        }
        Rout[j] = (o >= 0 || u >= 0) ? mn_mat3_mul(&f->phi[j], &R[j]) : R[j];
        dout[j] = mn_vec3_add(mn_mat3_mulv(&f->phi[j], d[j]), f->tau[j]);
    }
}
