/* The fit's translation step and energy (seed lbs-inverse-kinematics.md, "Find Optimized
 * Translation"; the derivation is at the top of fit.c): the per-rig sums Q_jk and S1_j,
 * the KKT system of the translations with the attachments and fixed controllers,
 * factorised once per rig and fixed set, and g with its derivative by the A_j. */
#include "skin/fit_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- per-rig sums ---------------------------------------------------------------------- */

int mn_ft_build_pairs(mn_fitter* f) {
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

/* Lists the constraint rows for a fixed set and factorises the per-axis KKT matrix. */
mn_status mn_ft_factor_kkt(mn_fitter* f, const uint8_t* fixed, mn_error* err) {
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

/* GA_j = dg/dA_j = sum_k A_k Q_kj - B_j for every j (when want_grad); returns g. */
double mn_ft_energy_and_grad(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int want_grad) {
    int m = f->m;
    double* GA = f->GA;
    double* A = f->Abuf;
    double lin = 0, quad = 0;
    for (int j = 0; j < m; j++) {
        mn_ft_make_A(f, R, d, j, A + 12 * j);
        for (int u = 0; u < 12; u++)
            lin += A[12 * j + u] * f->B[12 * j + u];
    }
    if (want_grad) {
        memset(GA, 0, (size_t)m * 12 * sizeof(double));
        for (int p = 0; p < f->npairs; p++) {
            int a = f->pair_a[p], b = f->pair_b[p];
            const double* Q = f->Q + 16 * p;
            mn_ft_add_AQ(GA + 12 * b, A + 12 * a, Q);             /* A_a Q_ab into GA_b */
            if (a != b) mn_ft_add_AQ(GA + 12 * a, A + 12 * b, Q); /* Q_ab is symmetric */
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
 * translation step needs, at a quarter of the cost of mn_ft_energy_and_grad. */
void mn_ft_translation_grad(mn_fitter* f, const mn_mat3* R, const mn_vec3* d) {
    int m = f->m;
    double* GA = f->GA;
    double* A = f->Abuf;
    for (int j = 0; j < m; j++) {
        mn_ft_make_A(f, R, d, j, A + 12 * j);
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
 * constant matrix (mn_ft_factor_kkt), the three axes in one pass. Needs GA at (R, d). Stores the
 * multipliers in f->lambda. */
void mn_ft_translation_solve(mn_fitter* f, const mn_mat3* R, mn_vec3* d) {
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
