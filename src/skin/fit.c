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
 *     pivot; the unknowns of the step are these increments (mn_ft_rotation_gradient in
 *     fit_rotation.c).
 *     The step follows the gradient of the energy reached after the translation step,
 *     scaled by the Gauss-Newton metric of the increments with the free translations
 *     eliminated (mn_ft_build_metric; after the first iteration by conjugate gradients on
 *     its product, mn_ft_pcg_direction; both in fit_rotation.c), with a backtracking line
 *     search, and is applied as R <- cay(dp) R, the Cayley transform, a rotation that
 *     agrees with exp([dp]x) to second order (the seed's first-order (I + [dp]x) R
 *     would need re-orthonormalising).
 *
 * Speed: g and its derivatives depend on the vertices only through per-controller sums.
 * With z_i = [xbar_i; 1] and A_j = [R_j | d_j - R_j dbar_j] (3 x 4),
 *     g = 1/2 sum m_i |x_i|^2 - sum_j <A_j, B_j> + 1/2 sum_jk <A_j Q_jk, A_k>,
 *     Q_jk = sum_i m_i w_ij w_ik z_i z_i^T (4 x 4, per rig),
 *     B_j  = sum_i m_i w_ij x_i z_i^T     (3 x 4, per frame: the one O(nnz) pass),
 * so an iteration of the fit costs O(controller pairs + m^2) sums and a dense 3m x 3m
 * factorisation, not O(vertices), and a product with the metric O(controller pairs + m)
 * (metric_apply); the B_j pass goes by blocks of vertices, within a block by controller
 * (mn_ft_load_targets in fit_targets.c). The translation step's system and the energy are
 * in fit_translation.c; the files share the fitter's state through fit_impl.h.
 * Coordinates are taken relative to the rest centroid and the targets' centroid to keep
 * those sums well conditioned, and the line search compares energies through their
 * difference (delta_energy), which has no cancellation. */
#include "skin/fit_impl.h"
#include "skin/fit_internal.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

double mn_fit_energy(mn_fitter* f, const mn_xform* pose) {
    if (!f || !pose || !f->have_targets) return NAN;
    mn_ft_load_pose(f, pose);
    return mn_ft_energy_and_grad(f, f->R, f->d, 0);
}

void mn_fit_gradient(mn_fitter* f, const mn_xform* pose, double* grad_rot, double* grad_trans) {
    if (!f || !pose || !f->have_targets) return;
    mn_ft_load_pose(f, pose);
    mn_ft_energy_and_grad(f, f->R, f->d, 1);
    for (int j = 0; j < f->m; j++) {
        mn_vec3 g = mn_ft_rot_grad(f, f->GA + 12 * j, f->R, j);
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
    mn_ft_load_pose(f, pose);
    mn_ft_energy_and_grad(f, f->R, f->d, 1);
    mn_ft_translation_solve(f, f->R, f->d);
    mn_ft_store_pose(f, pose);
}

/* The per-frame pass's data (fit_targets.c): (z_i, 1) and the influences (weight times
 * mass, no empty slots) by blocks of SEG_VERTS vertices, within a block by controller
 * (segments), within a controller by vertex. Returns 0 when out of memory. */
static int build_segments(mn_fitter* f) {
    const mn_rig* r = f->rig;
    int m = f->m;

    f->z4 = malloc((size_t)r->nverts * 4 * sizeof(double));
    size_t nnz = 0;
    for (size_t t = 0; t < (size_t)r->nverts * (size_t)r->k; t++)
        nnz += r->w_val[t] != 0;
    f->col_i = malloc((nnz ? nnz : 1) * sizeof(int));
    f->col_w = malloc((nnz ? nnz : 1) * sizeof(double));
    int* cnt = malloc(((size_t)m + 1) * sizeof(int));
    if (!f->z4 || !f->col_i || !f->col_w || !cnt) {
        free(cnt);
        return 0;
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
                return 0;
            }
        } else {
            f->seg_off[ns] = at;
        }
    }
    free(cnt);
    return 1;
}

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
    if (!build_segments(f)) goto nomem;
    for (int j = 0; j < m; j++)
        f->piv[j] = mn_vec3_sub(r->ctrl_pivot[j], o);
    if (!mn_ft_build_pairs(f)) goto nomem;

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
    mn_status st = mn_ft_factor_kkt(f, fixed, err);
    if (st != MN_OK) {
        if (f->have_fixed) {
            mn_error keep;
            mn_ft_factor_kkt(f, f->fixed_prev, &keep);
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

/* Reduced energy after the trial increments: the translation step, then g. */
static double reduced_energy(mn_fitter* f, double alpha) {
    mn_ft_apply_rotation(f, f->R, f->d, alpha, f->Rt, f->dt);
    mn_ft_translation_grad(f, f->Rt, f->dt);
    mn_ft_translation_solve(f, f->Rt, f->dt);
    return mn_ft_energy_and_grad(f, f->Rt, f->dt, 1); /* GA for the next gradient, if accepted */
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
    mn_ft_translation_grad(f, f->Rt, f->dt);
    mn_ft_translation_solve(f, f->Rt, f->dt);
    return mn_ft_energy_and_grad(f, f->Rt, f->dt, 1);
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
 * columns of R and of the weighted cross-covariance, here with mn_ft_cayley(w) for exp(w), which
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
            mn_mat3 E = mn_ft_cayley(w);
            Rj = mn_mat3_mul(&E, &Rj); /* a product of rotations: brought back once below */
            if (!(w2 > 1e-12)) break;
        }
        f->Rext[j] = mn_ft_reorthonormalize(&Rj);
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
        f->corr[j] = mn_ft_reorthonormalize(&C);
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
    if (!mn_ft_load_targets(f, targets)) return fit_refuse(res, "%s: not finite", "targets");
    mn_ft_load_pose(f, pose);
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
    mn_ft_translation_grad(f, f->R, f->d);
    mn_ft_translation_solve(f, f->R, f->d);
    double g = mn_ft_energy_and_grad(f, f->R, f->d, 1);
    if (f->nrot > 0 && !(g <= fmax(RIGID_TRY, 2 * f->last_g) * f->c0)) g = rigid_start(f, g);
    double floor_abs = 1e-30 * (f->c0 + DBL_MIN);
    mn_status st = MN_ERR_NOCONVERGE;
    int it = 0;
    if (f->nrot == 0 || g <= floor_abs) st = MN_OK;
    int have_factor = 0; /* f->H holds the factorised metric of an earlier iteration */
    int rebuild = 0;     /* the last inexact direction failed: build the metric */
    for (; it < o.max_iters && st != MN_OK; it++) {
        /* GA and lambda are those of (R, d) after the translation step */
        mn_ft_rotation_gradient(f, f->R, f->d);
        double slope = 0;
        int inexact = 0;
        if (have_factor && !rebuild) {
            /* The direction by conjugate gradients preconditioned with the earlier metric
             * (mn_ft_pcg_direction); when they do not converge within PCG_MAX products the
             * metric is built at the current pose instead. */
            double eta = sqrt(g / (f->c0 + DBL_MIN));
            double floor = fmax(o.tol * g, 1e-20 * f->c0);
            if (mn_ft_pcg_direction(f, f->R, f->d, eta, PCG_MAX, floor)) {
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
            mn_ft_build_metric(f, f->R, f->d, o.coupled_rotation);
            f->n_builds++;
            have_factor =
                mn_ft_rotation_direction(f) && o.coupled_rotation && f->nrot >= PCG_MIN_NROT;
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
    mn_ft_store_pose(f, pose);
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

mn_status mn_fit_kabsch(mn_fitter* f, mn_xform* pose, const double* targets, int then_translate) {
    if (!f || !targets || !pose) return MN_ERR_ARG;
    if (mn_fit_set_targets(f, targets) != MN_OK) return MN_ERR_ARG;
    mn_ft_load_pose(f, pose);
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
        mn_ft_energy_and_grad(f, f->R, f->d, 1);
        mn_ft_translation_solve(f, f->R, f->d);
    }
    mn_ft_store_pose(f, pose);
    return MN_OK;
}
