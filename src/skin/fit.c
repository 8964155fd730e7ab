/* The fit: controller poses from vertex positions (seed lbs-inverse-kinematics.md).
 *
 * The seed alternates two steps on g = 1/2 (X - X^r)^T M (X - X^r):
 *   translation ("Find Optimized Translation"): rotations held, g is quadratic in the d_j
 *     and the linear constraints G dd = r (attachments, fixed controllers) give the KKT
 *     system [W^T M W  G^T; G 0] [dd; lambda] = [W^T M X'; r]. That matrix is symmetric
 *     but indefinite (the seed's "positive definite" is a slip), so it is factorised by
 *     LDL^T with Bunch-Kaufman pivoting, once per rig and fixed set; a step only builds the
 *     right-hand side and back-substitutes. The constraint rows' right-hand side r is the
 *     residual h - G d rather than the seed's 0, so that an attached controller is put back
 *     on its parent exactly (the seed's "update the translation of related children").
 *     W^T M W is (w^T M w) (x) I, so the system separates into one per axis. (The seed's
 *     dbar_i in x_i^r should read dbar_j; it does here.)
 *   rotation ("Find Optimized Rotation"): translations held, the gradient of g with
 *     respect to each controller's infinitesimal rotation R_j <- exp([p_j]x) R_j is
 *       dg/dp_j = -sum_i m_i w_ij (R_j (xbar_i - dbar_j)) x (x_i - x_i^r)
 *     with the lever arm R_j (xbar_i - dbar_j), not the seed's rest-space arm (a slip).
 *     For a hierarchy (seed: "update related control points ... from root to leaves") an
 *     increment of controller p turns p and the controllers attached below it about p's
 *     pivot; the unknowns of the step are these increments (rotation_gradient below).
 *     The step follows the gradient of the energy reached after the translation step,
 *     scaled by the Gauss-Newton metric of the increments with the free translations
 *     eliminated (build_metric; after the first iteration by conjugate gradients on its
 *     product, pcg_direction), with a backtracking line search, and is applied as
 *     R <- cay(dp) R, the Cayley transform, a rotation that agrees with exp([dp]x) to second
 *     order (the seed's first-order (I + [dp]x) R would need re-orthonormalising).
 *
 * Speed: g and its derivatives depend on the vertices only through per-controller sums.
 * With z_i = [xbar_i; 1] and A_j = [R_j | d_j - R_j dbar_j] (3 x 4),
 *     g = 1/2 sum m_i |x_i|^2 - sum_j <A_j, B_j> + 1/2 sum_jk <A_j Q_jk, A_k>,
 *     Q_jk = sum_i m_i w_ij w_ik z_i z_i^T (4 x 4, per rig),
 *     B_j  = sum_i m_i w_ij x_i z_i^T     (3 x 4, per frame: the one O(nnz) pass),
 * so an iteration of the fit costs O(controller pairs + m^2) sums and a dense 3m x 3m
 * factorisation, not O(vertices), and a product with the metric O(controller pairs + m)
 * (metric_apply); the B_j pass goes by blocks of vertices, within a block by controller
 * (load_targets).
 * Coordinates are taken relative to the rest centroid and the targets' centroid to keep
 * those sums well conditioned, and the line search compares energies through their
 * difference (delta_energy), which has no cancellation. */
#include <marionette/linalg.h>
#include <marionette/skin.h>

#include "skin/dense.h"
#include "skin/fit_internal.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Up to this many controllers the rotation metric is assembled densely (m x m sums,
 * with the free translations eliminated); beyond it pair by pair. */
#define DENSE_MAX 160

/* After the first iteration of a fit, a rotation step takes its direction by conjugate
 * gradients preconditioned with the metric of an earlier iteration (pcg_direction) when
 * they bring the preconditioned residual to eta of its start within PCG_MAX products;
 * otherwise it builds the metric. eta = min(PCG_ETA, sqrt(g / c0)), but no smaller than
 * the convergence test needs: a forcing term that shrinks with the energy, so that the
 * inexact steps keep Gauss-Newton's fast convergence on a small residual (Dembo,
 * Eisenstat and Steihaug 1982, theorem 3.3; Eisenstat and Walker, "Choosing the Forcing
 * Terms in an Inexact Newton Method", SIAM J. Sci. Comput. 17, 1996). Below PCG_MIN_NROT
 * rotation unknowns, building and factorising the metric costs less than the products. */
#define PCG_ETA 1e-2
#define PCG_MAX 6
#define PCG_MIN_NROT 30

/* The per-frame pass over the targets goes by blocks of this many vertices (load_targets). */
#define SEG_VERTS 256

/* The second start (rigid_start): tried when the warm start leaves more than this share of
 * the targets' spread c0 (and more than twice what the last converged fit left: no start
 * can halve the energy of noisy targets near the noise's own), with this many
 * rotation-extraction steps per controller. */
#define RIGID_TRY 1e-4
#define RIGID_ITERS 4

/* The predicted start (rigid_start) is kept without trying the plain rigid one when it
 * leaves at most this share of c0 above what the last converged fit left, a fifth of the
 * least that plain rigid fits leave on the rigs measured (5e-6 to 5e-5 c0). */
#define PREDICT_KEEP 1e-6

struct mn_fitter {
    const mn_rig* rig;
    int m, dim, nverts;
    uint8_t* fixed;      /* m */
    uint8_t* fixed_prev; /* m: the previous set, restored when a new one fails */
    int have_fixed;      /* a set has been factorised */
    int* rot_off;        /* m: first rotation unknown of a rotating controller, -1 if none */
    int* up;             /* m: the controller whose increments carry j (see below), -1 */
    mn_mat3* phi;        /* m: scratch, accumulated increments */
    mn_vec3* tau;
    mn_vec3* gsum;  /* 2 m: scratch of rotation_gradient */
    int nrot;       /* rotation unknowns (3 per controller in 3D, 1 in 2D) */
    int nrl;        /* rotating controllers */
    int* rot_list;  /* nrl: their indices, increasing */
    int* vpat;      /* nfree x nrl: per free controller, the rotating ones (indices
                       into rot_list) whose carried sets share vertices with it */
    int* vpat_n;    /* nfree: their number */
    int nfree;      /* free controllers: unattached, unfixed */
    int* free_list; /* nfree */
    int* top;       /* m: index in free_list of the free controller carrying j, -1 */
    double* Kinv;   /* nfree x nfree: inverse of the free translations' metric */
    int kinv_ok;
    double* X;  /* m x m x 16 sums for the dense metric (NULL when m > DENSE_MAX) */
    double* V;  /* m x nfree x 3 */
    double* Wv; /* m x nfree x 3 */

    /* rig sums */
    mn_vec3 rest_origin; /* mass-weighted rest centroid */
    mn_vec3* piv;        /* m: pivots relative to rest_origin */
    double* zc;          /* nverts x 3: rest positions relative to rest_origin */
    double* z4;          /* nverts x 4: (zc_i, 1) */
    int nseg;            /* segments: a controller's influences within a block of vertices */
    int* seg_j;          /* nseg: the controller */
    int* seg_off;        /* nseg + 1: its influences are col_*[seg_off[s] .. seg_off[s + 1]) */
    int* col_i;          /* nnz: vertex */
    double* col_w;       /* nnz: its weight times its mass (> 0) */
    int npairs;
    int* pair_a; /* npairs, a <= b */
    int* pair_b;
    double* Q;    /* npairs x 16 */
    int* pair_of; /* m x m: index of pair (min, max) or -1 */
    double* S1;   /* m x 4: sum_i m_i w_ij z_i */
    double total_mass;

    /* translation KKT, per axis: (m + nc) square, factorised */
    int nc, ncap;
    int* con_a;       /* nc: constrained controller (child / fixed) */
    int* con_b;       /* nc: parent controller, -1 for a fixed row */
    double con_scale; /* constraint rows are scaled by this to balance the KKT */
    double* kkt;      /* (m + ncap)^2 */
    int* piv_kkt;
    double* rhs;     /* 3 x (m + ncap) */
    double* sol;     /* 3 x (m + ncap) */
    double* kkt_inv; /* (m + nc)^2: the inverse of the KKT matrix */

    /* frame */
    mn_vec3 target_origin;
    double c0;    /* 1/2 sum m_i |x_i - target_origin|^2 */
    double* B;    /* m x 12 */
    double* Bnew; /* m x 12: the next frame's B while it is summed */
    int have_targets;

    /* iteration state and scratch */
    mn_mat3* R;      /* m */
    mn_vec3* d;      /* m: positions relative to target_origin */
    mn_mat3* Rt;     /* m: trial rotations */
    mn_vec3* dt;     /* m: trial positions */
    double* GA;      /* m x 12: dg/dA_j */
    double* Abuf;    /* m x 12: the A_j of the last evaluation */
    double* A0;      /* m x 12: A_j at the start of a rotation step */
    double* GA0;     /* m x 12: the gradient there */
    double* dA;      /* m x 12: scratch */
    double* lambda;  /* 3 x ncap */
    double* lambda0; /* 3 x ncap: lambda at the start of a rotation step */
    int need_lambda; /* some fixed controller hangs from a free one: rotation_gradient
                        reads lambda, so the translation step computes it */
    double* grad;    /* nrot */
    double* dir;     /* nrot */
    double* H;       /* nrot x nrot */
    double* Hdinv;   /* nrot: 1 / the diagonal of H's factor */

    /* the metric's product (metric_apply) and the conjugate gradients (pcg_direction) */
    double* dAv;   /* m x 12: the rate of every A_j along the increments */
    double* GdA;   /* m x 12: its derivative sum_k dA_k Q_kj */
    mn_vec3* omg;  /* m: angular rate of every controller */
    mn_vec3* tv;   /* m: and the rate of its origin */
    double* wfree; /* 2 x 3 x nfree: the free translations' derivatives, then rates */
    double* Qt;    /* qt_n x 4: sum of Q_jk's last row over the j carried by a free one t */
    int* qt_tk;    /* 2 x qt_n: t and k of each nonzero Qt entry */
    int qt_n;
    double* cg;               /* 4 x nrot: x, r, z, p of the conjugate gradients */
    int n_builds, n_products; /* of the last mn_fit: metrics built, products taken, */
    int n_starts;             /* starts tried beside the warm one */
    double* Hp;               /* nrot */
    double* svd_work;

    /* the second start's prediction (rigid_start) */
    mn_mat3* Rext;  /* m: this fit's rigid extraction of every rotating controller */
    int have_ext;   /* this fit computed Rext */
    mn_mat3* corr;  /* 2 m: the last two fits' corrections Rext^T R (newest first) */
    int ncorr;      /* how many of them follow one another: 0, 1 or 2 */
    int start_kind; /* the start this fit took: 0 warm, 1 rigid, 2 predicted */
    double last_g;  /* the energy the last fit converged to over its c0; 0 if it did not */
};

mn_fit_options mn_fit_default(void) {
    mn_fit_options o;
    memset(&o, 0, sizeof o);
    o.max_iters = 50;
    o.tol = 1e-10;
    o.max_halvings = 12;
    o.coupled_rotation = 1;
    o.vertex_error = 1;
    return o;
}

void mn_fitter_destroy(mn_fitter* f) {
    if (!f) return;
    free(f->fixed);
    free(f->fixed_prev);
    free(f->rot_off);
    free(f->up);
    free(f->rot_list);
    free(f->vpat);
    free(f->vpat_n);
    free(f->top);
    free(f->free_list);
    free(f->Kinv);
    free(f->X);
    free(f->V);
    free(f->Wv);
    free(f->phi);
    free(f->tau);
    free(f->gsum);
    free(f->piv);
    free(f->zc);
    free(f->z4);
    free(f->seg_j);
    free(f->seg_off);
    free(f->col_i);
    free(f->col_w);
    free(f->pair_a);
    free(f->pair_b);
    free(f->Q);
    free(f->pair_of);
    free(f->S1);
    free(f->con_a);
    free(f->con_b);
    free(f->kkt);
    free(f->piv_kkt);
    free(f->rhs);
    free(f->sol);
    free(f->kkt_inv);
    free(f->B);
    free(f->Bnew);
    free(f->R);
    free(f->d);
    free(f->Rt);
    free(f->dt);
    free(f->GA);
    free(f->Abuf);
    free(f->A0);
    free(f->GA0);
    free(f->dA);
    free(f->lambda);
    free(f->lambda0);
    free(f->grad);
    free(f->dir);
    free(f->H);
    free(f->Hdinv);
    free(f->svd_work);
    free(f->dAv);
    free(f->GdA);
    free(f->omg);
    free(f->tv);
    free(f->wfree);
    free(f->Qt);
    free(f->qt_tk);
    free(f->cg);
    free(f->Hp);
    free(f->Rext);
    free(f->corr);
    free(f);
}

/* ---- per-rig sums ---------------------------------------------------------------------- */

static int build_pairs(mn_fitter* f) {
    const mn_rig* r = f->rig;
    int m = f->m, k = r->k;
    f->pair_of = malloc((size_t)m * (size_t)m * sizeof(int));
    if (!f->pair_of) return 0;
    for (size_t t = 0; t < (size_t)m * (size_t)m; t++)
        f->pair_of[t] = -1;
    /* count distinct pairs first */
    int np = 0;
    for (int i = 0; i < r->nverts; i++)
        for (int s = 0; s < k; s++) {
            if (r->w_val[i * k + s] == 0) continue;
            for (int t = s; t < k; t++) {
                if (r->w_val[i * k + t] == 0) continue;
                int a = r->w_idx[i * k + s], b = r->w_idx[i * k + t];
                if (a > b) {
                    int tmp = a;
                    a = b;
                    b = tmp;
                }
                if (f->pair_of[a * m + b] < 0) f->pair_of[a * m + b] = np++;
            }
        }
    /* every controller gets its diagonal pair, even one that moves no vertex */
    for (int j = 0; j < m; j++)
        if (f->pair_of[j * m + j] < 0) f->pair_of[j * m + j] = np++;
    f->npairs = np;
    f->pair_a = malloc((size_t)np * sizeof(int));
    f->pair_b = malloc((size_t)np * sizeof(int));
    f->Q = calloc((size_t)np * 16, sizeof(double));
    f->S1 = calloc((size_t)m * 4, sizeof(double));
    if (!f->pair_a || !f->pair_b || !f->Q || !f->S1) return 0;
    for (int a = 0; a < m; a++)
        for (int b = a; b < m; b++) {
            int p = f->pair_of[a * m + b];
            if (p >= 0) {
                f->pair_a[p] = a;
                f->pair_b[p] = b;
                f->pair_of[b * m + a] = p;
            }
        }
    for (int i = 0; i < r->nverts; i++) {
        const double* z3 = f->zc + 3 * i;
        double z[4] = {z3[0], z3[1], z3[2], 1.0}, zz[16];
        for (int u = 0; u < 4; u++)
            for (int v = 0; v < 4; v++)
                zz[4 * u + v] = r->mass[i] * z[u] * z[v];
        for (int s = 0; s < k; s++) {
            double ws = r->w_val[i * k + s];
            if (ws == 0) continue;
            int a = r->w_idx[i * k + s];
            for (int u = 0; u < 4; u++)
                f->S1[4 * a + u] += r->mass[i] * ws * z[u];
            for (int t = s; t < k; t++) {
                double wt = r->w_val[i * k + t];
                if (wt == 0) continue;
                int b = r->w_idx[i * k + t];
                /* the pair (a, b) with a != b appears once per vertex but stands for both
                 * orders; (a, a) appears once. Q_ab is symmetric in its 4x4 indices. */
                double* Q = f->Q + 16 * f->pair_of[a * m + b];
                double ww = ws * wt;
                if (a == b && s != t) ww *= 2.0; /* the same controller in two slots */
                for (int u = 0; u < 16; u++)
                    Q[u] += ww * zz[u];
            }
        }
    }
    return 1;
}

/* ---- translation step: the KKT system -------------------------------------------------- */

/* Lists the constraint rows for a fixed set and factorises the per-axis KKT matrix. */
static mn_status factor_kkt(mn_fitter* f, const uint8_t* fixed, mn_error* err) {
    const mn_rig* r = f->rig;
    int m = f->m, nc = 0;
    for (int j = 0; j < m; j++) {
        if (fixed[j]) {
            f->con_a[nc] = j;
            f->con_b[nc++] = -1;
        }
        if (r->ctrl_attached[j] && !(fixed[j] && fixed[r->ctrl_parent[j]])) {
            f->con_a[nc] = j;
            f->con_b[nc++] = r->ctrl_parent[j];
        }
    }
    int n = m + nc;
    /* balance the constraint rows against the mass sums */
    double kmax = 0;
    for (int j = 0; j < m; j++)
        kmax = fmax(kmax, f->Q[16 * f->pair_of[j * m + j] + 15]);
    f->con_scale = kmax > 0 ? kmax : 1.0;

    /* Is the translation determined? W^T M W must be positive definite on the null space
     * of G, i.e. K + rho G^T G positive definite, and G must have full row rank. Checked
     * on an m x m Cholesky so that the failing controller can be named. */
    double* K = f->kkt;
    memset(K, 0, (size_t)m * (size_t)m * sizeof(double));
    for (int p = 0; p < f->npairs; p++) {
        int a = f->pair_a[p], b = f->pair_b[p];
        K[a * m + b] = K[b * m + a] = f->Q[16 * p + 15];
    }
    double rho = f->con_scale;
    for (int c = 0; c < nc; c++) {
        int a = f->con_a[c], b = f->con_b[c];
        K[a * m + a] += rho;
        if (b >= 0) {
            K[b * m + b] += rho;
            K[a * m + b] -= rho;
            K[b * m + a] -= rho;
        }
    }
    /* row-by-row Cholesky so that the first failing row names its controller */
    for (int i = 0; i < m; i++) {
        for (int j = 0; j <= i; j++) {
            double s = K[i * m + j];
            for (int q = 0; q < j; q++)
                s -= K[i * m + q] * K[j * m + q];
            if (j < i) {
                K[i * m + j] = s / K[j * m + j];
            } else if (!(s > 1e-10 * f->con_scale)) {
                return mn_error_set(
                    err, MN_ERR_SINGULAR, "", 0, "fixed",
                    "the translation of controller '%s' is not determined: it moves no vertex "
                    "and is neither fixed nor attached",
                    r->ctrl_name[i]);
            } else {
                K[i * m + i] = sqrt(s);
            }
        }
    }
    /* G full row rank: Gaussian elimination on a copy of G (nc x m) */
    double* G = f->kkt; /* reuse: nc * m <= (m + ncap)^2 */
    memset(G, 0, (size_t)nc * (size_t)m * sizeof(double));
    for (int c = 0; c < nc; c++) {
        G[c * m + f->con_a[c]] = 1;
        if (f->con_b[c] >= 0) G[c * m + f->con_b[c]] = -1;
    }
    for (int c = 0, col = 0; c < nc; c++) {
        int piv = -1;
        for (; col < m && piv < 0; col++)
            for (int rr = c; rr < nc; rr++)
                if (fabs(G[rr * m + col]) > 1e-9) {
                    piv = rr;
                    break;
                }
        if (piv < 0)
            return mn_error_set(err, MN_ERR_SINGULAR, "", 0, "fixed",
                                "the fixed set over-determines controller '%s' (fixed and attached "
                                "constraints repeat each other)",
                                r->ctrl_name[f->con_a[c]]);
        col--;
        if (piv != c)
            for (int t = 0; t < m; t++) {
                double tmp = G[c * m + t];
                G[c * m + t] = G[piv * m + t];
                G[piv * m + t] = tmp;
            }
        for (int rr = c + 1; rr < nc; rr++) {
            double fct = G[rr * m + col] / G[c * m + col];
            if (fct != 0)
                for (int t = 0; t < m; t++)
                    G[rr * m + t] -= fct * G[c * m + t];
        }
        col++;
    }

    /* the KKT matrix [K  s G^T; s G  0] */
    memset(f->kkt, 0, (size_t)n * (size_t)n * sizeof(double));
    double* A = f->kkt;
    for (int p = 0; p < f->npairs; p++) {
        int a = f->pair_a[p], b = f->pair_b[p];
        A[a * n + b] = A[b * n + a] = f->Q[16 * p + 15];
    }
    double s = f->con_scale;
    for (int c = 0; c < nc; c++) {
        int row = m + c, a = f->con_a[c], b = f->con_b[c];
        A[row * n + a] = A[a * n + row] = s;
        if (b >= 0) A[row * n + b] = A[b * n + row] = -s;
    }
    mn_status st = mn_ldlt_factor(A, n, f->piv_kkt);
    if (st != MN_OK)
        return mn_error_set(err, MN_ERR_SINGULAR, "", 0, "fixed",
                            "the translation system is singular");
    /* The matrix is constant per rig and fixed set, and a step solves it for three axes:
     * its inverse, column by column from the factors, turns each step's three
     * back-substitutions (2 n^2 multiply-adds each, pivoting included) into one pass over
     * an n x n matrix for the three axes at once (mn_matvec3). */
    for (int c = 0; c < n; c++) {
        double* col = f->kkt_inv + (size_t)c * n; /* symmetric: column c = row c */
        memset(col, 0, (size_t)n * sizeof(double));
        col[c] = 1;
        mn_ldlt_solve(A, n, f->piv_kkt, col);
    }
    f->nc = nc;
    memcpy(f->fixed, fixed, (size_t)m);
    return MN_OK;
}

/* A_j = [R_j | d_j - R_j piv_j] (row-major 3 x 4). */
static void make_A(const mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int j, double A[12]) {
    mn_vec3 t = mn_vec3_sub(d[j], mn_mat3_mulv(&R[j], f->piv[j]));
    const double* Rm = R[j].m;
    double tv[3] = {t.x, t.y, t.z};
    for (int r = 0; r < 3; r++) {
        A[4 * r] = Rm[3 * r];
        A[4 * r + 1] = Rm[3 * r + 1];
        A[4 * r + 2] = Rm[3 * r + 2];
        A[4 * r + 3] = tv[r];
    }
}

/* G += A Q for a 3 x 4 A and a symmetric 4 x 4 Q (row-major), on two-lane vectors. */
static inline void add_AQ(double* G, const double* A, const double* Q) {
    mn_v2d q[8];
    for (int k = 0; k < 8; k++)
        q[k] = mn_v2d_load(Q + 2 * k);
    for (int r = 0; r < 3; r++) {
        const double* a = A + 4 * r;
        mn_v2d lo = mn_v2d_load(G + 4 * r), hi = mn_v2d_load(G + 4 * r + 2);
        lo += a[0] * q[0] + a[1] * q[2] + a[2] * q[4] + a[3] * q[6];
        hi += a[0] * q[1] + a[1] * q[3] + a[2] * q[5] + a[3] * q[7];
        mn_v2d_store(G + 4 * r, lo);
        mn_v2d_store(G + 4 * r + 2, hi);
    }
}

/* GA_j = dg/dA_j = sum_k A_k Q_kj - B_j for every j (when want_grad); returns g. */
static double energy_and_grad(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int want_grad) {
    int m = f->m;
    double* GA = f->GA;
    double* A = f->Abuf;
    double lin = 0, quad = 0;
    for (int j = 0; j < m; j++) {
        make_A(f, R, d, j, A + 12 * j);
        for (int u = 0; u < 12; u++)
            lin += A[12 * j + u] * f->B[12 * j + u];
    }
    if (want_grad) {
        memset(GA, 0, (size_t)m * 12 * sizeof(double));
        for (int p = 0; p < f->npairs; p++) {
            int a = f->pair_a[p], b = f->pair_b[p];
            const double* Q = f->Q + 16 * p;
            add_AQ(GA + 12 * b, A + 12 * a, Q);             /* A_a Q_ab into GA_b */
            if (a != b) add_AQ(GA + 12 * a, A + 12 * b, Q); /* Q_ab is symmetric */
        }
    }
    for (int p = 0; p < f->npairs && !want_grad; p++) {
        int a = f->pair_a[p], b = f->pair_b[p];
        const double* Q = f->Q + 16 * p;
        const double* Aa = A + 12 * a;
        const double* Ab = A + 12 * b;
        double AaQ[12];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 4; c++)
                AaQ[4 * r + c] = Aa[4 * r] * Q[c] + Aa[4 * r + 1] * Q[4 + c] +
                                 Aa[4 * r + 2] * Q[8 + c] + Aa[4 * r + 3] * Q[12 + c];
        double dot = 0;
        for (int u = 0; u < 12; u++)
            dot += AaQ[u] * Ab[u];
        quad += (a == b ? 1.0 : 2.0) * dot;
    }
    if (want_grad) /* quad = sum_j <A_j, sum_k A_k Q_kj>; then GA_j -= B_j */
        for (int u = 0; u < m * 12; u++) {
            quad += A[u] * GA[u];
            GA[u] -= f->B[u];
        }
    double g = f->c0 - lin + 0.5 * quad;
    return g > 0 ? g : 0;
}

/* Only the translation columns of GA (dg/dd_j = sum_k A_k q_kj - B_j[:, 3]): what the
 * translation step needs, at a quarter of the cost of energy_and_grad. */
static void translation_grad(mn_fitter* f, const mn_mat3* R, const mn_vec3* d) {
    int m = f->m;
    double* GA = f->GA;
    double* A = f->Abuf;
    for (int j = 0; j < m; j++) {
        make_A(f, R, d, j, A + 12 * j);
        for (int r = 0; r < 3; r++)
            GA[12 * j + 4 * r + 3] = -f->B[12 * j + 4 * r + 3];
    }
    for (int p = 0; p < f->npairs; p++) {
        int a = f->pair_a[p], b = f->pair_b[p];
        const double* Q = f->Q + 16 * p;
        const double* Aa = A + 12 * a;
        const double* Ab = A + 12 * b;
        for (int r = 0; r < 3; r++) {
            GA[12 * b + 4 * r + 3] += Aa[4 * r] * Q[3] + Aa[4 * r + 1] * Q[7] +
                                      Aa[4 * r + 2] * Q[11] + Aa[4 * r + 3] * Q[15];
            if (a != b)
                GA[12 * a + 4 * r + 3] += Ab[4 * r] * Q[3] + Ab[4 * r + 1] * Q[7] +
                                          Ab[4 * r + 2] * Q[11] + Ab[4 * r + 3] * Q[15];
        }
    }
}

/* The translation step (seed "Find Optimized Translation"): d <- d + dd with
 * [K sG^T; sG 0][dd; lambda/s] = [-dg/dd; s (h - G d)], per axis, by the inverse of that
 * constant matrix (factor_kkt), the three axes in one pass. Needs GA at (R, d). Stores the
 * multipliers in f->lambda. */
static void translation_solve(mn_fitter* f, const mn_mat3* R, mn_vec3* d) {
    int m = f->m, n = m + f->nc;
    double s = f->con_scale;
    for (int ax = 0; ax < 3; ax++) { /* the z axis of a 2D rig solves to zero */
        double* b = f->rhs + (size_t)ax * (size_t)n;
        for (int j = 0; j < m; j++)
            b[j] = ax < f->dim ? -f->GA[12 * j + 4 * ax + 3] : 0;
    }
    for (int c = 0; c < f->nc; c++) {
        int a = f->con_a[c], p = f->con_b[c];
        mn_vec3 res = mn_v3(0, 0, 0);
        if (p >= 0) {
            mn_vec3 e = mn_vec3_sub(f->piv[a], f->piv[p]);
            mn_vec3 h = mn_vec3_add(d[p], mn_mat3_mulv(&R[p], e));
            res = mn_vec3_sub(h, d[a]);
        }
        f->rhs[m + c] = s * res.x;
        f->rhs[(size_t)n + m + c] = s * res.y;
        f->rhs[2 * (size_t)n + m + c] = f->dim == 3 ? s * res.z : 0;
    }
    mn_matvec3(f->kkt_inv, n, f->need_lambda ? n : m, f->rhs, f->sol);
    for (int ax = 0; ax < 3 && f->need_lambda; ax++) {
        const double* x = f->sol + (size_t)ax * (size_t)n;
        for (int c = 0; c < f->nc; c++)
            f->lambda[(size_t)ax * (size_t)f->ncap + (size_t)c] = s * x[m + c];
    }
    const double* x0 = f->sol;
    const double* x1 = f->sol + n;
    const double* x2 = f->sol + 2 * (size_t)n;
    for (int j = 0; j < m; j++)
        d[j] = mn_vec3_add(d[j], mn_v3(x0[j], x1[j], f->dim == 3 ? x2[j] : 0));
}

/* Partial gradient of g with respect to the left-multiplied rotation vector of j, from
 * G = dg/dA_j: with M = G E_j^T R_j^T, E_j = [I | -piv_j], dg/dp = vee(M - M^T). */
static mn_vec3 rot_grad(const mn_fitter* f, const double* G, const mn_mat3* R, int j) {
    mn_vec3 pv = f->piv[j];
    double pj[3] = {pv.x, pv.y, pv.z};
    mn_mat3 GE; /* G E_j^T = G[:, 0:3] - G[:, 3] piv^T */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            GE.m[3 * r + c] = G[4 * r + c] - G[4 * r + 3] * pj[c];
    mn_mat3 Rt = mn_mat3_transpose(&R[j]);
    mn_mat3 M = mn_mat3_mul(&GE, &Rt);
    return mn_v3(M.m[7] - M.m[5], M.m[2] - M.m[6], M.m[3] - M.m[1]);
}

/* ---- public pieces ----------------------------------------------------------------------- */

static int check_targets(const mn_fitter* f, const double* x) {
    for (int i = 0; i < f->nverts * f->dim; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* The pass of load_targets for dim 2 or 3 (a constant where it is called, so that each
 * gets its own loop): B (m x 12) and returns c0 relative to oa. */
static inline __attribute__((always_inline)) double
targets_pass(const mn_fitter* f, const double* x, mn_vec3 oa, int dim, double* B) {
    /* B_j segment by segment (a controller's influences within a block of vertices, whose
     * targets stay in the cache while the block's segments read them), in registers:
     * m_i w_ij (x_i - oa) z_i^T (row-major 3 x 4) as six two-lane vectors, two entries at a
     * time into two sets of sums so that no sum waits on the one before, then added into
     * B_j. A vertex's weights sum to one (the rig normalises them), so the same pass gives
     * c0 = sum_j sum_i m_i w_ij |x_i - oa|^2, and B_j's last columns sum to
     * sum_i m_i (x_i - oa). */
    memset(B, 0, (size_t)f->m * 12 * sizeof(double));
    mn_v2d o01 = {oa.x, oa.y}, cxy = {0, 0};
    double cz = 0;
    for (int sg = 0; sg < f->nseg; sg++) {
        int j = f->seg_j[sg];
        mn_v2d a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, ac = a0;
        mn_v2d b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, bc = a0;
        double az = 0, bz = 0;
        int s = f->seg_off[sg], e = f->seg_off[sg + 1];
#define MN_B_TERM(S, c0_, c1_, c2_, c3_, c4_, c5_, cc_, cz_)                                       \
    do {                                                                                           \
        int v_ = f->col_i[S];                                                                      \
        double w_ = f->col_w[S];                                                                   \
        const double* p_ = x + (size_t)dim * (size_t)v_;                                           \
        mn_v2d xv_ = (mn_v2d){p_[0], p_[1]} - o01, q_ = w_ * xv_;                                  \
        double z2_ = dim == 3 ? p_[2] - oa.z : 0, x2_ = w_ * z2_;                                  \
        const double* z_ = f->z4 + 4 * (size_t)v_;                                                 \
        mn_v2d za_ = mn_v2d_load(z_), zb_ = mn_v2d_load(z_ + 2);                                   \
        c0_ += q_[0] * za_;                                                                        \
        c1_ += q_[0] * zb_;                                                                        \
        c2_ += q_[1] * za_;                                                                        \
        c3_ += q_[1] * zb_;                                                                        \
        c4_ += x2_ * za_;                                                                          \
        c5_ += x2_ * zb_;                                                                          \
        cc_ += q_ * xv_;                                                                           \
        cz_ += x2_ * z2_;                                                                          \
    } while (0)
        for (; s + 2 <= e; s += 2) {
            MN_B_TERM(s, a0, a1, a2, a3, a4, a5, ac, az);
            MN_B_TERM(s + 1, b0, b1, b2, b3, b4, b5, bc, bz);
        }
        if (s < e) MN_B_TERM(s, a0, a1, a2, a3, a4, a5, ac, az);
#undef MN_B_TERM
        cxy += ac + bc;
        cz += az + bz;
        double* Bj = B + 12 * j;
        mn_v2d_store(Bj, mn_v2d_load(Bj) + (a0 + b0));
        mn_v2d_store(Bj + 2, mn_v2d_load(Bj + 2) + (a1 + b1));
        mn_v2d_store(Bj + 4, mn_v2d_load(Bj + 4) + (a2 + b2));
        mn_v2d_store(Bj + 6, mn_v2d_load(Bj + 6) + (a3 + b3));
        mn_v2d_store(Bj + 8, mn_v2d_load(Bj + 8) + (a4 + b4));
        mn_v2d_store(Bj + 10, mn_v2d_load(Bj + 10) + (a5 + b5));
    }
    return cxy[0] + cxy[1] + cz;
}

/* The one pass over the vertices per frame (seed "Find Optimized Translation": the
 * right-hand side W^T M X', here for every A_j at once):
 *   B_j = sum_i m_i w_ij (x_i - o) z_i^T,  c0 = 1/2 sum_i m_i |x_i - o|^2,
 * with o the targets' mass-weighted centroid. The pass goes by blocks of vertices and
 * within a block by controller (seg_*, col_*, targets_pass), summed in registers rather
 * than added into memory vertex by vertex, and c0 and the centroid come out of the same
 * sums. All are taken relative to an origin oa from 16 evenly spaced targets (inside the
 * figure, which is all the sums' conditioning needs; a full pass for the centroid first
 * cost a sixth to a third of a 200,000-vertex frame). The pass's own sums give o, and the
 * difference is removed by exact algebra on m-sized sums (B_j -= (o - oa) S1_j^T,
 * c0 -= 1/2 M |o - oa|^2). The sums go to a second buffer that replaces B only when c0,
 * a sum of squares, is finite: a non-finite target makes it NaN or infinite, and only then
 * are the targets checked one by one, f keeping its previous targets. */
static int load_targets(mn_fitter* f, const double* x) {
    int dim = f->dim, m = f->m, n = f->nverts;
    const double* mass = f->rig->mass;
    double ox = 0, oy = 0, oz = 0, ms = 0;
    int step = n > 16 ? n / 16 : 1, i;
    for (i = 0; i < n; i += step) {
        const double* p = x + (size_t)dim * (size_t)i;
        ox += mass[i] * p[0];
        oy += mass[i] * p[1];
        oz += dim == 3 ? mass[i] * p[2] : 0;
        ms += mass[i];
    }
    mn_vec3 oa = mn_vec3_scale(mn_v3(ox, oy, oz), 1.0 / ms);
    double* B = f->Bnew;
    double c0 = dim == 3 ? targets_pass(f, x, oa, 3, B) : targets_pass(f, x, oa, 2, B);
    double sx = 0, sy = 0, sz = 0;
    for (int j = 0; j < m; j++) {
        sx += B[12 * j + 3];
        sy += B[12 * j + 7];
        sz += B[12 * j + 11];
    }
    if (!isfinite(c0) && !check_targets(f, x)) return 0;
    f->Bnew = f->B; /* the new sums become B */
    f->B = B;
    double im = 1.0 / f->total_mass;
    double dl[3] = {sx * im, sy * im, sz * im}; /* o - oa */
    for (int j = 0; j < m; j++) {
        const double* S = f->S1 + 4 * j;
        double* Bj = B + 12 * j;
        for (int rr = 0; rr < 3; rr++)
            for (int c = 0; c < 4; c++)
                Bj[4 * rr + c] -= dl[rr] * S[c];
    }
    c0 -= f->total_mass * (dl[0] * dl[0] + dl[1] * dl[1] + dl[2] * dl[2]);
    f->target_origin = mn_v3(oa.x + dl[0], oa.y + dl[1], oa.z + dl[2]);
    f->c0 = 0.5 * (c0 > 0 ? c0 : 0);
    f->have_targets = 1;
    return 1;
}

mn_status mn_fit_set_targets(mn_fitter* f, const double* x) {
    if (!f || !x) return MN_ERR_ARG;
    return load_targets(f, x) ? MN_OK : MN_ERR_ARG;
}

/* Pose <-> internal state (positions relative to the target origin). */
static void load_pose(mn_fitter* f, const mn_xform* pose) {
    for (int j = 0; j < f->m; j++) {
        f->R[j] = f->rig->ctrl_kind[j] == MN_CTRL_CAGE ? mn_mat3_identity() : pose[j].R;
        f->d[j] = mn_vec3_sub(pose[j].p, f->target_origin);
    }
}

static mn_mat3 reorthonormalize(const mn_mat3* P);

/* (A turned controller's rotation is a product of the fit's rotations, exact to rounding,
 * which a fit's few dozen steps grow to 1e-14 at most; it is brought back to a rotation
 * here, once per fit.) */
static void store_pose(const mn_fitter* f, mn_xform* pose) {
    for (int j = 0; j < f->m; j++) {
        if (f->fixed[j]) continue; /* bit for bit as given */
        pose[j].R = f->rot_off[j] >= 0 || f->up[j] >= 0 ? reorthonormalize(&f->R[j]) : f->R[j];
        pose[j].p = mn_vec3_add(f->d[j], f->target_origin);
        if (f->dim == 2) pose[j].p.z = 0;
    }
}

double mn_fit_energy(mn_fitter* f, const mn_xform* pose) {
    if (!f || !pose || !f->have_targets) return NAN;
    load_pose(f, pose);
    return energy_and_grad(f, f->R, f->d, 0);
}

void mn_fit_gradient(mn_fitter* f, const mn_xform* pose, double* grad_rot, double* grad_trans) {
    if (!f || !pose || !f->have_targets) return;
    load_pose(f, pose);
    energy_and_grad(f, f->R, f->d, 1);
    for (int j = 0; j < f->m; j++) {
        mn_vec3 g = rot_grad(f, f->GA + 12 * j, f->R, j);
        if (grad_rot) {
            grad_rot[3 * j] = g.x;
            grad_rot[3 * j + 1] = g.y;
            grad_rot[3 * j + 2] = g.z;
        }
        if (grad_trans)
            for (int ax = 0; ax < 3; ax++)
                grad_trans[3 * j + ax] = f->GA[12 * j + 4 * ax + 3];
    }
}

void mn_fit_translation_step(mn_fitter* f, mn_xform* pose) {
    if (!f || !pose || !f->have_targets) return;
    load_pose(f, pose);
    energy_and_grad(f, f->R, f->d, 1);
    translation_solve(f, f->R, f->d);
    store_pose(f, pose);
}

/* ---- creation ---------------------------------------------------------------------------- */

mn_fitter* mn_fitter_create(const mn_rig* r, const uint8_t* fixed, mn_error* err) {
    if (!r || r->nctrl <= 0 || !r->w_idx) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "rig", "the rig needs controllers and weights");
        return NULL;
    }
    mn_fitter* f = calloc(1, sizeof *f);
    if (!f) goto nomem;
    int m = r->nctrl;
    f->rig = r;
    f->m = m;
    f->dim = r->dim;
    f->nverts = r->nverts;
    f->fixed = calloc((size_t)m, 1);
    f->fixed_prev = calloc((size_t)m, 1);
    f->rot_off = malloc((size_t)m * sizeof(int));
    f->up = malloc((size_t)m * sizeof(int));
    f->rot_list = malloc((size_t)m * sizeof(int));
    f->top = malloc((size_t)m * sizeof(int));
    f->free_list = malloc((size_t)m * sizeof(int));
    f->Kinv = malloc((size_t)m * (size_t)m * sizeof(double));
    if (m <= DENSE_MAX) {
        f->X = malloc((size_t)m * (size_t)m * 16 * sizeof(double));
        f->V = malloc((size_t)m * (size_t)m * 3 * sizeof(double));
        f->Wv = malloc((size_t)m * (size_t)m * 3 * sizeof(double));
        f->vpat = malloc((size_t)m * (size_t)m * sizeof(int));
        f->vpat_n = malloc((size_t)m * sizeof(int));
        f->Qt = malloc((size_t)m * (size_t)m * 4 * sizeof(double));
        f->qt_tk = malloc((size_t)m * (size_t)m * 2 * sizeof(int));
        if (!f->X || !f->V || !f->Wv || !f->vpat || !f->vpat_n || !f->Qt || !f->qt_tk) goto nomem;
    }
    f->phi = malloc((size_t)m * sizeof(mn_mat3));
    f->tau = malloc((size_t)m * sizeof(mn_vec3));
    f->gsum = malloc(2 * (size_t)m * sizeof(mn_vec3));
    f->piv = malloc((size_t)m * sizeof(mn_vec3));
    f->zc = malloc((size_t)r->nverts * 3 * sizeof(double));
    if (!f->fixed || !f->fixed_prev || !f->rot_off || !f->up || !f->rot_list || !f->top ||
        !f->free_list || !f->Kinv || !f->phi || !f->tau || !f->gsum || !f->piv || !f->zc)
        goto nomem;
    mn_vec3 o = mn_v3(0, 0, 0);
    double tm = 0;
    for (int i = 0; i < r->nverts; i++) {
        o = mn_vec3_madd(o, r->mass[i],
                         mn_v3(r->rest[3 * i], r->rest[3 * i + 1], r->rest[3 * i + 2]));
        tm += r->mass[i];
    }
    o = mn_vec3_scale(o, 1.0 / tm);
    f->total_mass = tm;
    f->rest_origin = o;
    for (int i = 0; i < r->nverts; i++)
        for (int c = 0; c < 3; c++)
            f->zc[3 * i + c] = r->rest[3 * i + c] - (&o.x)[c];
    /* the per-frame pass's data: (z_i, 1) and the influences (weight times mass, no empty
     * slots) by blocks of SEG_VERTS vertices, within a block by controller (segments), within
     * a controller by vertex */
    f->z4 = malloc((size_t)r->nverts * 4 * sizeof(double));
    size_t nnz = 0;
    for (size_t t = 0; t < (size_t)r->nverts * (size_t)r->k; t++)
        nnz += r->w_val[t] != 0;
    f->col_i = malloc((nnz ? nnz : 1) * sizeof(int));
    f->col_w = malloc((nnz ? nnz : 1) * sizeof(double));
    int* cnt = malloc(((size_t)m + 1) * sizeof(int));
    if (!f->z4 || !f->col_i || !f->col_w || !cnt) {
        free(cnt);
        goto nomem;
    }
    for (int i = 0; i < r->nverts; i++) {
        for (int c = 0; c < 3; c++)
            f->z4[4 * i + c] = f->zc[3 * i + c];
        f->z4[4 * i + 3] = 1.0;
    }
    f->nseg = 0;
    for (int pass = 0; pass < 2; pass++) { /* count the segments, then fill */
        int ns = 0, at = 0;
        for (int i0 = 0; i0 < r->nverts; i0 += SEG_VERTS) {
            int i1 = r->nverts - i0 < SEG_VERTS ? r->nverts : i0 + SEG_VERTS;
            memset(cnt, 0, ((size_t)m + 1) * sizeof(int));
            for (int i = i0; i < i1; i++)
                for (int s = 0; s < r->k; s++)
                    if (r->w_val[(size_t)i * r->k + s] != 0)
                        cnt[r->w_idx[(size_t)i * r->k + s] + 1]++;
            for (int j = 0; j < m; j++) {
                if (pass && cnt[j + 1] > 0) {
                    f->seg_j[ns] = j;
                    f->seg_off[ns] = at;
                }
                ns += cnt[j + 1] > 0;
                int c = cnt[j + 1];
                cnt[j + 1] = at; /* the block's start of controller j */
                at += c;
            }
            if (!pass) continue;
            for (int i = i0; i < i1; i++)
                for (int s = 0; s < r->k; s++) {
                    double w = r->w_val[(size_t)i * r->k + s];
                    if (w == 0) continue;
                    int e = cnt[r->w_idx[(size_t)i * r->k + s] + 1]++;
                    f->col_i[e] = i;
                    f->col_w[e] = w * r->mass[i];
                }
        }
        if (!pass) {
            f->nseg = ns;
            f->seg_j = malloc((ns ? (size_t)ns : 1) * sizeof(int));
            f->seg_off = malloc(((size_t)ns + 1) * sizeof(int));
            if (!f->seg_j || !f->seg_off) {
                free(cnt);
                goto nomem;
            }
        } else {
            f->seg_off[ns] = at;
        }
    }
    free(cnt);
    for (int j = 0; j < m; j++)
        f->piv[j] = mn_vec3_sub(r->ctrl_pivot[j], o);
    if (!build_pairs(f)) goto nomem;

    int nattach = 0;
    for (int j = 0; j < m; j++)
        nattach += r->ctrl_attached[j];
    f->ncap = m + nattach;
    size_t nmax = (size_t)m + (size_t)f->ncap;
    f->con_a = malloc((size_t)f->ncap * sizeof(int));
    f->con_b = malloc((size_t)f->ncap * sizeof(int));
    f->kkt = malloc(nmax * nmax * sizeof(double));
    f->piv_kkt = malloc(nmax * sizeof(int));
    f->rhs = malloc(3 * nmax * sizeof(double));
    f->sol = malloc(3 * nmax * sizeof(double));
    f->kkt_inv = malloc(nmax * nmax * sizeof(double));
    f->lambda = calloc(3 * (size_t)f->ncap, sizeof(double));
    f->lambda0 = calloc(3 * (size_t)f->ncap, sizeof(double));
    f->B = calloc((size_t)m * 12, sizeof(double));
    f->Bnew = calloc((size_t)m * 12, sizeof(double));
    f->GA = malloc((size_t)m * 12 * sizeof(double));
    f->Abuf = malloc((size_t)m * 12 * sizeof(double));
    f->A0 = malloc((size_t)m * 12 * sizeof(double));
    f->GA0 = malloc((size_t)m * 12 * sizeof(double));
    f->dA = malloc((size_t)m * 12 * sizeof(double));
    f->R = malloc((size_t)m * sizeof(mn_mat3));
    f->Rt = malloc((size_t)m * sizeof(mn_mat3));
    f->d = malloc((size_t)m * sizeof(mn_vec3));
    f->dt = malloc((size_t)m * sizeof(mn_vec3));
    size_t nrot_max = (size_t)m * (r->dim == 3 ? 3 : 1);
    f->grad = malloc(nrot_max * sizeof(double));
    f->dir = malloc(nrot_max * sizeof(double));
    f->H = malloc(nrot_max * nrot_max * sizeof(double) + 8);
    f->Hdinv = malloc(nrot_max * sizeof(double) + 8);
    f->svd_work = malloc(mn_svd_work_size(3, 3) * sizeof(double) + 64);
    f->dAv = malloc((size_t)m * 12 * sizeof(double));
    f->GdA = malloc((size_t)m * 12 * sizeof(double));
    f->omg = malloc((size_t)m * sizeof(mn_vec3));
    f->tv = malloc((size_t)m * sizeof(mn_vec3));
    f->wfree = malloc(6 * (size_t)m * sizeof(double));
    f->cg = malloc(4 * nrot_max * sizeof(double));
    f->Hp = malloc(nrot_max * sizeof(double));
    f->Rext = malloc((size_t)m * sizeof(mn_mat3));
    f->corr = malloc(2 * (size_t)m * sizeof(mn_mat3));
    if (!f->dAv || !f->GdA || !f->omg || !f->tv || !f->wfree || !f->cg || !f->Hp || !f->Rext ||
        !f->corr)
        goto nomem;
    if (!f->con_a || !f->con_b || !f->kkt || !f->piv_kkt || !f->rhs || !f->sol || !f->kkt_inv ||
        !f->lambda || !f->lambda0 || !f->B || !f->Bnew || !f->GA || !f->Abuf || !f->A0 || !f->GA0 ||
        !f->dA || !f->R || !f->Rt || !f->d || !f->dt || !f->grad || !f->dir || !f->H || !f->Hdinv ||
        !f->svd_work)
        goto nomem;
    uint8_t* none = calloc((size_t)m, 1);
    if (!none) goto nomem;
    mn_status st = mn_fitter_set_fixed(f, fixed ? fixed : none, err);
    free(none);
    if (st != MN_OK) {
        mn_fitter_destroy(f);
        return NULL;
    }
    return f;
nomem:
    mn_fitter_destroy(f);
    mn_error_set(err, MN_ERR_NOMEM, "", 0, "fitter", "out of memory");
    return NULL;
}

void mn_fitter_reset(mn_fitter* f) {
    if (!f) return;
    f->ncorr = 0;
    f->last_g = 0;
}

mn_status mn_fitter_set_fixed(mn_fitter* f, const uint8_t* fixed, mn_error* err) {
    if (!f || !fixed) return mn_error_set(err, MN_ERR_ARG, "", 0, "fixed", "NULL argument");
    /* keep the old factorisation if the new set fails: factor into place, and on failure
     * restore by refactoring the old set (which succeeded before). */
    int m = f->m;
    memcpy(f->fixed_prev, f->fixed, (size_t)m);
    mn_status st = factor_kkt(f, fixed, err);
    if (st != MN_OK) {
        if (f->have_fixed) {
            mn_error keep;
            factor_kkt(f, f->fixed_prev, &keep);
        }
        return st;
    }
    f->have_fixed = 1;
    f->ncorr = 0; /* the corrections were taken with the other set */
    f->last_g = 0;
    int nrot = 0, nrl = 0;
    for (int j = 0; j < m; j++) {
        f->up[j] = f->rig->ctrl_attached[j] && !fixed[j] ? f->rig->ctrl_parent[j] : -1;
        if (fixed[j] || f->rig->ctrl_kind[j] == MN_CTRL_CAGE) {
            f->rot_off[j] = -1;
        } else {
            f->rot_list[nrl++] = j;
            f->rot_off[j] = nrot;
            nrot += f->dim == 3 ? 3 : 1;
        }
    }
    f->nrot = nrot;
    f->nrl = nrl;
    f->need_lambda = 0;
    for (int k = 0; k < f->nc; k++)
        if (f->con_b[k] >= 0 && f->up[f->con_a[k]] != f->con_b[k]) f->need_lambda = 1;
    /* the free controllers and the inverse of their translations' metric (sums of
     * s_jk over the controllers each carries); without it the Schur step is skipped */
    int nfree = 0;
    for (int j = 0; j < m; j++)
        if (f->up[j] < 0 && !fixed[j]) f->free_list[nfree++] = j;
    f->nfree = nfree;
    for (int j = 0; j < m; j++) {
        int t = j;
        while (f->up[t] >= 0)
            t = f->up[t];
        f->top[j] = -1;
        for (int q = 0; q < nfree; q++)
            if (f->free_list[q] == t) f->top[j] = q;
    }
    f->kinv_ok = 0;
    if (nfree > 0 && f->X) {
        /* the pattern of the Schur coupling: the pairs, summed up the hierarchy as the
         * metric's sums are (rows, then columns, children into parents) */
        uint8_t* P = (uint8_t*)f->X; /* scratch: m^2 bytes */
        for (size_t t = 0; t < (size_t)m * (size_t)m; t++)
            P[t] = f->pair_of[t] >= 0;
        for (int j = m - 1; j >= 0; j--)
            if (f->up[j] >= 0)
                for (int c = 0; c < m; c++)
                    P[(size_t)f->up[j] * m + c] |= P[(size_t)j * m + c];
        for (int k = m - 1; k >= 0; k--)
            if (f->up[k] >= 0)
                for (int p = 0; p < m; p++)
                    P[(size_t)p * m + f->up[k]] |= P[(size_t)p * m + k];
        for (int t = 0; t < nfree; t++) {
            int n = 0;
            for (int l = 0; l < nrl; l++)
                if (P[(size_t)f->rot_list[l] * m + f->free_list[t]])
                    f->vpat[(size_t)t * nrl + n++] = l;
            f->vpat_n[t] = n;
        }
        double* S = f->X; /* scratch: nfree^2 <= 16 m^2 */
        memset(S, 0, (size_t)nfree * (size_t)nfree * sizeof(double));
        for (int p = 0; p < f->npairs; p++) {
            int ta = f->top[f->pair_a[p]], tb = f->top[f->pair_b[p]];
            if (ta < 0 || tb < 0) continue;
            double sv = f->Q[16 * p + 15];
            S[(size_t)ta * nfree + tb] += sv;
            if (f->pair_a[p] != f->pair_b[p]) S[(size_t)tb * nfree + ta] += sv;
        }
        /* the pairs' sums of a free controller's translation, for metric_apply */
        memset(f->Qt, 0, (size_t)nfree * (size_t)m * 4 * sizeof(double));
        for (int p = 0; p < f->npairs; p++) {
            int a = f->pair_a[p], b = f->pair_b[p], ta = f->top[a], tb = f->top[b];
            const double* q = f->Q + 16 * p + 12;
            for (int c = 0; c < 4; c++) {
                if (ta >= 0) f->Qt[((size_t)ta * m + b) * 4 + c] += q[c];
                if (a != b && tb >= 0) f->Qt[((size_t)tb * m + a) * 4 + c] += q[c];
            }
        }
        /* kept where t's carried set meets k's vertices, in place (the list only shrinks) */
        f->qt_n = 0;
        for (int t = 0; t < nfree; t++)
            for (int k = 0; k < m; k++) {
                const double* q = f->Qt + ((size_t)t * m + k) * 4;
                if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0) continue;
                memmove(f->Qt + 4 * (size_t)f->qt_n, q, 4 * sizeof(double));
                f->qt_tk[2 * f->qt_n] = t;
                f->qt_tk[2 * f->qt_n + 1] = k;
                f->qt_n++;
            }
        if (mn_cholesky_factor(S, nfree) == MN_OK) {
            for (int u = 0; u < nfree; u++) {
                double* col = f->Kinv + (size_t)u * nfree; /* symmetric: row u = column u */
                for (int t = 0; t < nfree; t++)
                    col[t] = t == u;
                mn_cholesky_solve(S, nfree, col);
            }
            f->kinv_ok = 1;
        }
    }
    return MN_OK;
}

/* ---- the rotation step ------------------------------------------------------------------- */

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
        g1[j] = rot_grad(f, G, R, j);
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
static void rotation_gradient(mn_fitter* f, const mn_mat3* R, const mn_vec3* d) {
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
    if (!coupled || !f->kinv_ok || f->nfree == 0) return;
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

static void build_metric(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int coupled) {
    if (!f->X || !coupled) memset(f->H, 0, (size_t)f->nrot * (size_t)f->nrot * sizeof(double));
    for (int j = 0; j < f->m; j++) /* every A_j once (dA is free scratch here) */
        make_A(f, R, d, j, f->dA + 12 * j);
    if (f->X)
        build_metric_dense(f, R, d, coupled);
    else
        build_metric_pairs(f, R, d, coupled);
}

/* out = H v, the product with the metric build_metric assembles (coupled), without
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
        add_AQ(G + 12 * b, f->dAv + 12 * a, Q);
        if (a != b) add_AQ(G + 12 * a, f->dAv + 12 * b, Q);
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
static int pcg_direction(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, double eta, int maxit,
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
    load_pose(f, pose);
    translation_grad(f, f->R, f->d);
    translation_solve(f, f->R, f->d);
    energy_and_grad(f, f->R, f->d, 1);
    build_metric(f, f->R, f->d, 1);
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
static int rotation_direction(mn_fitter* f) {
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

/* The nearest rotation to a matrix P that is one to rounding (a product of rotations):
 * one Newton-Schulz step of the polar decomposition, P (3 I - P^T P) / 2 (Higham,
 * "Functions of Matrices", 2008, eq. 8.20; Bjorck & Bowie 1971), which squares the
 * distance to the rotation, where mn_mat3_orthonormalize takes any matrix and three
 * quaternion round trips. */
static mn_mat3 reorthonormalize(const mn_mat3* P) {
    mn_mat3 S = mn_mat3_tmul(P, P), T;
    for (int k = 0; k < 9; k++)
        T.m[k] = (k % 4 == 0 ? 1.5 : 0.0) - 0.5 * S.m[k];
    return mn_mat3_mul(P, &T);
}

/* The Cayley transform (I - [v]x / 2)^-1 (I + [v]x / 2), the rotation of the unit
 * quaternion along (1, v / 2): the angle 2 atan(|v| / 2) = |v| - |v|^3 / 12 + ... about
 * v's axis, so it agrees with exp([v]x) to second order, without a sine or a cosine. */
static mn_mat3 cayley(mn_vec3 v) {
    double s = 1.0 / sqrt(1.0 + 0.25 * mn_vec3_dot(v, v));
    mn_quat q = {s, 0.5 * s * v.x, 0.5 * s * v.y, 0.5 * s * v.z};
    return mn_quat_to_mat3(q);
}

/* Applies alpha * dir, root to leaves: controller j moves by M_j = M_up(j) o G_j where
 * G_j turns about j's pivot by cayley(alpha dir_j) (identity for a controller without a
 * rotation unknown). R_j <- Phi_j R_j, d_j <- M_j(d_j). Any map of the
 * increments to rotations that agrees with exp to first order keeps the Gauss-Newton
 * step's convergence (a retraction: Absil, Mahony and Sepulchre, "Optimization Algorithms
 * on Matrix Manifolds", 2008, 4.1 and 8.4); the line search measures the energy where the
 * map leads. */
static void apply_rotation(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, double alpha,
                           mn_mat3* Rout, mn_vec3* dout) {
    for (int j = 0; j < f->m; j++) {
        int o = f->rot_off[j];
        mn_mat3 E = mn_mat3_identity();
        if (o >= 0) {
            mn_vec3 dp =
                f->dim == 3 ? mn_v3(alpha * f->dir[o], alpha * f->dir[o + 1], alpha * f->dir[o + 2])
                            : mn_v3(0, 0, alpha * f->dir[o]);
            E = cayley(dp);
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

/* Reduced energy after the trial increments: the translation step, then g. */
static double reduced_energy(mn_fitter* f, double alpha) {
    apply_rotation(f, f->R, f->d, alpha, f->Rt, f->dt);
    translation_grad(f, f->Rt, f->dt);
    translation_solve(f, f->Rt, f->dt);
    return energy_and_grad(f, f->Rt, f->dt, 1); /* GA for the next gradient, if accepted */
}

/* g(trial) - g(current) without the cancellation of g itself: g is quadratic in the A_j,
 * so with dA = A' - A, dg = sum_j <dA_j, (GA_j + GA'_j) / 2> exactly (the gradient changes
 * by dA Q), from the gradients at both points, which hold no cancellation. Needs A0/GA0 of
 * the current point and Abuf/GA of the trial. */
static double delta_energy(const mn_fitter* f) {
    double s = 0;
    for (int u = 0; u < 12 * f->m; u++)
        s += (f->Abuf[u] - f->A0[u]) * (f->GA0[u] + f->GA[u]);
    return 0.5 * s;
}

static int pose_finite(const mn_xform* pose, int m) {
    for (int j = 0; j < m; j++) {
        if (!mn_vec3_isfinite(pose[j].p)) return 0;
        for (int k = 0; k < 9; k++)
            if (!isfinite(pose[j].R.m[k])) return 0;
    }
    return 1;
}

/* A start's energy: the translation step at (Rt, dt), then g with GA, Abuf and lambda. */
static double try_start(mn_fitter* f) {
    f->n_starts++;
    translation_grad(f, f->Rt, f->dt);
    translation_solve(f, f->Rt, f->dt);
    return energy_and_grad(f, f->Rt, f->dt, 1);
}

/* The kept start's gradient, A and multipliers go to (to_saved) or come back from the
 * saved copies A0, GA0, lambda0. */
static void swap_start_state(mn_fitter* f, int to_saved) {
    size_t a = (size_t)f->m * 12 * sizeof(double), l = 3 * (size_t)f->ncap * sizeof(double);
    if (to_saved) {
        memcpy(f->A0, f->Abuf, a);
        memcpy(f->GA0, f->GA, a);
        memcpy(f->lambda0, f->lambda, l);
    } else {
        memcpy(f->Abuf, f->A0, a);
        memcpy(f->GA, f->GA0, a);
        memcpy(f->lambda, f->lambda0, l);
    }
}

/* The trial start (Rt, dt) becomes the current one. */
static void take_start(mn_fitter* f) {
    memcpy(f->R, f->Rt, (size_t)f->m * sizeof *f->R);
    memcpy(f->d, f->dt, (size_t)f->m * sizeof *f->d);
    swap_start_state(f, 1);
}

/* A second start beside the warm one: every rotating controller turned to its own best
 * rigid fit of the targets under its weights (the cold start's Kabsch fit, mn_fit_kabsch,
 * but reached from the current rotation by the iteration of Mueller, Bender, Chentanez
 * and Macklin, "A Robust Method to Extract the Rotational Part of Deformations", MIG
 * 2016: R <- exp(w) R with w = sum_c r_c x a_c / |sum_c r_c . a_c|, r_c and a_c the
 * columns of R and of the weighted cross-covariance, here with cayley(w) for exp(w), which
 * has the same fixed point w = 0; RIGID_ITERS steps, no SVD), then the
 * translation step. When a pose moves much between frames, the bones' own rotations are a
 * far better start than the last frame's (on the scaling benchmark's travelling wave the
 * energy after the translation step is 0.2 instead of 25 to 80) and save an iteration.
 * The start with the lower energy is kept, the warm one unless the other halves it, so
 * that a slowly moving pose is tracked as before. It is tried only when the warm start
 * leaves more than RIGID_TRY c0: rigid fits per bone cannot represent the blend between
 * bones and leave 5e-6 to 5e-5 c0 on the rigs measured (the benchmark's tube, CesiumMan,
 * Fox), so below that they could not halve the energy and the try would only cost time.
 * Nor is it tried when the warm start leaves less than twice the energy the last fit
 * converged to: with noisy targets no start can halve an energy near the noise's own (on
 * CesiumMan's and Fox's noisy frames every try was refused).
 *
 * What the rigid fit misses, the blend, changes little from one frame of a motion to the
 * next. So each converged fit that computed the rigid fits Rext_j keeps its correction in
 * the bone's own frame, C_j = Rext_j^T R_j (mn_fit), and the next fit first tries the
 * predicted start Rext_j P_j: P_j = C_j after one such fit, and after two in a row the
 * correction carried on at its last rate, P_j = C_j (C'_j^T C_j) with C'_j the older one
 * (a linear extrapolation on the rotation group). On the scaling benchmark's tube the
 * energy at the start goes from 1e-5 c0 (rigid) to 3e-7 (one correction) and 3e-8 (two),
 * and the fit needs two Gauss-Newton steps instead of three. When the prediction leaves
 * more than PREDICT_KEEP c0 (a jump in the motion, or the first frames), the plain rigid
 * start is tried too and the lower kept.
 * Needs GA, Abuf, lambda at (R, d) after the translation step; returns g of the start
 * kept, with those at it. */
static double rigid_start(mn_fitter* f, double g) {
    int m = f->m;
    for (int j = 0; j < m; j++) {
        f->Rext[j] = f->R[j];
        if (f->rot_off[j] < 0) continue;
        const double* S = f->S1 + 4 * j;
        const double* B = f->B + 12 * j;
        double W = S[3];
        if (!(W > 0)) continue;
        /* C = sum m w (x - mt)(z - mr)^T = B[:, 0:3] - W mt mr^T */
        double C[9];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                C[3 * r + c] = B[4 * r + c] - B[4 * r + 3] * S[c] / W;
        if (f->dim == 2) {
            f->Rext[j] = mn_mat3_axis_angle(mn_v3(0, 0, 1), atan2(C[3] - C[1], C[0] + C[4]));
            continue;
        }
        mn_mat3 Rj = f->R[j];
        for (int k = 0; k < RIGID_ITERS; k++) {
            const double* Rm = Rj.m;
            mn_vec3 w = mn_v3(0, 0, 0);
            double dot = 0;
            for (int c = 0; c < 3; c++) {
                mn_vec3 rc = mn_v3(Rm[c], Rm[3 + c], Rm[6 + c]);
                mn_vec3 ac = mn_v3(C[c], C[3 + c], C[6 + c]);
                w = mn_vec3_add(w, mn_vec3_cross(rc, ac));
                dot += mn_vec3_dot(rc, ac);
            }
            w = mn_vec3_scale(w, 1.0 / (fabs(dot) + 1e-300));
            double w2 = mn_vec3_dot(w, w);
            if (!(w2 < 1.0)) w = mn_vec3_scale(w, 1.0 / sqrt(w2)); /* at most a radian */
            mn_mat3 E = cayley(w);
            Rj = mn_mat3_mul(&E, &Rj); /* a product of rotations: brought back once below */
            if (!(w2 > 1e-12)) break;
        }
        f->Rext[j] = reorthonormalize(&Rj);
    }
    f->have_ext = 1;
    swap_start_state(f, 1); /* the warm start's state, in case it is kept */
    double best = g;
    f->start_kind = 0;
    if (f->ncorr > 0) {
        const mn_mat3 *C1 = f->corr, *C2 = f->corr + m;
        for (int j = 0; j < m; j++) {
            f->dt[j] = f->d[j];
            f->Rt[j] = f->R[j];
            if (f->rot_off[j] < 0) continue;
            mn_mat3 P = C1[j]; /* (a product of rotations: one to rounding) */
            if (f->ncorr > 1) {
                mn_mat3 D = mn_mat3_tmul(&C2[j], &C1[j]);
                P = mn_mat3_mul(&P, &D);
            }
            f->Rt[j] = mn_mat3_mul(&f->Rext[j], &P);
        }
        double gp = try_start(f);
        if (gp < 0.5 * g) {
            take_start(f);
            best = gp;
            f->start_kind = 2;
            if (gp <= (f->last_g + PREDICT_KEEP) * f->c0) return gp;
        }
    }
    for (int j = 0; j < m; j++) {
        f->dt[j] = f->d[j];
        f->Rt[j] = f->rot_off[j] >= 0 ? f->Rext[j] : f->R[j];
    }
    double gk = try_start(f);
    if (gk < (f->start_kind ? best : 0.5 * g)) {
        take_start(f);
        f->start_kind = 1;
        return gk;
    }
    swap_start_state(f, 0);
    return best;
}

/* After a fit: the energy it converged to (over c0; 0 if it did not), and, when it
 * converged and computed the rigid fits, its corrections for the next one's prediction
 * (rigid_start), the last one's moving to second place; any other fit leaves none. The corrections
 * are brought back to rotations: an error of scale or shear would grow by 1 + sqrt 2 a frame
 * through the extrapolation, and the fit, whose increments are rotations, would converge to a pose
 * off by it. */
static void keep_corrections(mn_fitter* f, int converged, double g) {
    int m = f->m;
    f->last_g = converged ? g / (f->c0 + DBL_MIN) : 0;
    if (!f->have_ext || !converged) {
        f->ncorr = 0;
        return;
    }
    memcpy(f->corr + m, f->corr, (size_t)m * sizeof *f->corr);
    for (int j = 0; j < m; j++) {
        mn_mat3 C = mn_mat3_tmul(&f->Rext[j], &f->R[j]);
        f->corr[j] = reorthonormalize(&C);
    }
    f->ncorr = f->ncorr < 2 ? f->ncorr + 1 : 2;
}

/* Refuses a call: the result says which argument or option is at fault. */
static mn_status fit_refuse(mn_fit_result* res, const char* fmt, const char* what) {
    if (res) {
        memset(res, 0, sizeof *res);
        res->status = MN_ERR_ARG;
        snprintf(res->message, sizeof res->message, fmt, what);
    }
    return MN_ERR_ARG;
}

mn_status mn_fit(mn_fitter* f, mn_xform* pose, const double* targets, const mn_fit_options* opt,
                 mn_fit_result* res) {
    mn_fit_options o = opt ? *opt : mn_fit_default();
    mn_fit_result rr;
    memset(&rr, 0, sizeof rr);
    if (!f) return fit_refuse(res, "%s: NULL", "fitter");
    if (!pose) return fit_refuse(res, "%s: NULL", "pose");
    if (!targets) return fit_refuse(res, "%s: NULL", "targets");
    if (!pose_finite(pose, f->m)) return fit_refuse(res, "%s: not finite", "pose");
    if (o.max_iters < 0) return fit_refuse(res, "options.%s: must be >= 0", "max_iters");
    if (!(o.tol >= 0)) return fit_refuse(res, "options.%s: must be >= 0", "tol");
    if (o.max_halvings < 0) return fit_refuse(res, "options.%s: must be >= 0", "max_halvings");
    if (!load_targets(f, targets)) return fit_refuse(res, "%s: not finite", "targets");
    load_pose(f, pose);
    f->n_builds = f->n_products = f->n_starts = 0;
    f->have_ext = 0;
    f->start_kind = 0;
    for (int j = 0; j < f->m; j++) {
        if (f->fixed[j]) continue;
        if (f->dim == 2) { /* a rotation about z, whatever the warm start holds */
            f->R[j] = mn_mat3_axis_angle(mn_v3(0, 0, 1), atan2(f->R[j].m[3], f->R[j].m[0]));
            f->d[j].z = 0;
        } else {
            f->R[j] = mn_mat3_orthonormalize(&f->R[j]);
        }
    }

    /* first translation step */
    translation_grad(f, f->R, f->d);
    translation_solve(f, f->R, f->d);
    double g = energy_and_grad(f, f->R, f->d, 1);
    if (f->nrot > 0 && !(g <= fmax(RIGID_TRY, 2 * f->last_g) * f->c0)) g = rigid_start(f, g);
    double floor_abs = 1e-30 * (f->c0 + DBL_MIN);
    mn_status st = MN_ERR_NOCONVERGE;
    int it = 0;
    if (f->nrot == 0 || g <= floor_abs) st = MN_OK;
    int have_factor = 0; /* f->H holds the factorised metric of an earlier iteration */
    int rebuild = 0;     /* the last inexact direction failed: build the metric */
    for (; it < o.max_iters && st != MN_OK; it++) {
        /* GA and lambda are those of (R, d) after the translation step */
        rotation_gradient(f, f->R, f->d);
        double slope = 0;
        int inexact = 0;
        if (have_factor && !rebuild) {
            /* The direction by conjugate gradients preconditioned with the earlier metric
             * (pcg_direction); when they do not converge within PCG_MAX products the
             * metric is built at the current pose instead. */
            double eta = sqrt(g / (f->c0 + DBL_MIN));
            double floor = fmax(o.tol * g, 1e-20 * f->c0);
            if (pcg_direction(f, f->R, f->d, eta, PCG_MAX, floor)) {
                for (int i = 0; i < f->nrot; i++)
                    slope += f->grad[i] * f->dir[i];
                /* the convergence test of a built metric's step (below): the decrease the
                 * conjugate gradients predict is that step's to a share of about eta^2 */
                if (!(slope < 0) || -0.5 * slope <= o.tol * g || -0.5 * slope <= 1e-20 * f->c0) {
                    st = MN_OK;
                    break;
                }
                inexact = 1;
            }
        }
        rebuild = 0;
        if (!inexact) {
            slope = 0;
            build_metric(f, f->R, f->d, o.coupled_rotation);
            f->n_builds++;
            have_factor = rotation_direction(f) && o.coupled_rotation && f->nrot >= PCG_MIN_NROT;
            for (int i = 0; i < f->nrot; i++)
                slope += f->grad[i] * f->dir[i];
            /* the Gauss-Newton model predicts a decrease of -slope / 2: when that is below
             * the tolerance (or 1e-20 c0: the slope comes from gradients, which carry no
             * cancellation), the fit has converged */
            if (!(slope < 0) || -0.5 * slope <= o.tol * g || -0.5 * slope <= 1e-20 * f->c0) {
                st = MN_OK;
                break;
            }
        }
        /* the current point's A and gradient, for the energy differences */
        memcpy(f->A0, f->Abuf, (size_t)f->m * 12 * sizeof(double));
        memcpy(f->GA0, f->GA, (size_t)f->m * 12 * sizeof(double));
        if (inexact) memcpy(f->lambda0, f->lambda, 3 * (size_t)f->ncap * sizeof(double));
        double alpha = 1, dg = 0;
        int ok = 0;
        for (int h = 0; h <= o.max_halvings; h++, alpha *= 0.5) {
            reduced_energy(f, alpha);
            dg = delta_energy(f);
            if (dg <= 1e-4 * alpha * slope) {
                ok = 1;
                break;
            }
        }
        if (!ok && inexact) {
            /* the inexact direction found no decrease: back to the current point's
             * gradient and multipliers, and a new metric */
            memcpy(f->Abuf, f->A0, (size_t)f->m * 12 * sizeof(double));
            memcpy(f->GA, f->GA0, (size_t)f->m * 12 * sizeof(double));
            memcpy(f->lambda, f->lambda0, 3 * (size_t)f->ncap * sizeof(double));
            rebuild = 1;
            continue;
        }
        if (!ok) {
            st = MN_OK; /* no decrease left: converged */
            break;
        }
        memcpy(f->R, f->Rt, (size_t)f->m * sizeof *f->R);
        memcpy(f->d, f->dt, (size_t)f->m * sizeof *f->d);
        double dec = -dg;
        g = g + dg > 0 ? g + dg : 0;
        /* (g, tracked by differences, may read 0 near an exact fit: the slope test above
         * decides convergence there) */
        if (dec <= o.tol * g) {
            st = MN_OK;
            it++;
            break;
        }
    }
    keep_corrections(f, st == MN_OK, g);
    store_pose(f, pose);
    rr.status = st;
    rr.iterations = it;
    if (st != MN_OK)
        snprintf(rr.message, sizeof rr.message, "max_iters: the budget of %d alternations ran out",
                 o.max_iters);
    rr.energy = g;
    if (o.vertex_error) {
        mn_rig_error(f->rig, pose, targets, &rr.rms, &rr.max_err);
    } else {
        rr.rms = sqrt(2.0 * g / f->total_mass);
        rr.max_err = -1;
    }
    if (res) *res = rr;
    return st;
}

/* ---- cold start -------------------------------------------------------------------------- */

mn_status mn_fit_kabsch(mn_fitter* f, mn_xform* pose, const double* targets, int then_translate) {
    if (!f || !targets || !pose) return MN_ERR_ARG;
    if (mn_fit_set_targets(f, targets) != MN_OK) return MN_ERR_ARG;
    load_pose(f, pose);
    for (int j = 0; j < f->m; j++) {
        if (f->fixed[j]) continue;
        const double* S = f->S1 + 4 * j;
        const double* B = f->B + 12 * j;
        double W = S[3];
        if (!(W > 0)) continue;
        double mr[3] = {S[0] / W, S[1] / W, S[2] / W};  /* weighted rest mean */
        double mt[3] = {B[3] / W, B[7] / W, B[11] / W}; /* weighted target mean */
        mn_mat3 Rj = mn_mat3_identity();
        if (f->rig->ctrl_kind[j] != MN_CTRL_CAGE) {
            /* weighted cross-covariance C = sum m w (x - mt)(z - mr)^T; R = polar(C) */
            double C[9];
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    C[3 * r + c] = B[4 * r + c] - W * mt[r] * mr[c];
            if (f->dim == 2) {
                double ang = atan2(C[3] - C[1], C[0] + C[4]);
                Rj = mn_mat3_axis_angle(mn_v3(0, 0, 1), ang);
            } else {
                double s[3], U[9], V[9];
                if (mn_svd(C, 3, 3, s, U, V, f->svd_work) == MN_OK &&
                    s[1] > 1e-12 * (s[0] + DBL_MIN)) {
                    mn_mat3 Um, Vm;
                    memcpy(Um.m, U, sizeof U);
                    memcpy(Vm.m, V, sizeof V);
                    mn_mat3 Vt = mn_mat3_transpose(&Vm);
                    mn_mat3 Rm = mn_mat3_mul(&Um, &Vt);
                    double det = Rm.m[0] * (Rm.m[4] * Rm.m[8] - Rm.m[5] * Rm.m[7]) -
                                 Rm.m[1] * (Rm.m[3] * Rm.m[8] - Rm.m[5] * Rm.m[6]) +
                                 Rm.m[2] * (Rm.m[3] * Rm.m[7] - Rm.m[4] * Rm.m[6]);
                    if (det < 0) {
                        for (int r = 0; r < 3; r++)
                            Um.m[3 * r + 2] = -Um.m[3 * r + 2];
                        Rm = mn_mat3_mul(&Um, &Vt);
                    }
                    Rj = mn_mat3_orthonormalize(&Rm);
                }
            }
        }
        f->R[j] = Rj;
        /* d_j = mt + R (piv - mr) */
        mn_vec3 off = mn_mat3_mulv(&Rj, mn_vec3_sub(f->piv[j], mn_v3(mr[0], mr[1], mr[2])));
        f->d[j] = mn_vec3_add(mn_v3(mt[0], mt[1], mt[2]), off);
    }
    if (then_translate) {
        energy_and_grad(f, f->R, f->d, 1);
        translation_solve(f, f->R, f->d);
    }
    store_pose(f, pose);
    return MN_OK;
}
