/* The two-way coupling of skinning and the soft body: Wu & Umetani, "Two-Way Coupling of
 * Skinning Transformations and Position Based Dynamics" (SCA 2023), on the fit of the seed
 * (lbs-inverse-kinematics.md).
 *
 * The body's positions x split into the rig's reproduction x^r(theta) and a deviation
 * u = x - x^r. The seed's fit makes theta minimise g = 1/2 u^T M u; its translation step
 * ("Find Optimized Translation") is the stationarity W^T M u = 0 over the free
 * translations. The paper's complementary constraint asks the same of every controller,
 * driven ones included:
 *
 *     C_j(x) = sum_i m_i w_ij (x_i - x_i^r) = 0        (one row per controller and axis)
 *
 * so the deviation stays in the M-orthogonal complement of the span of the skinning
 * weights: the body carries its own (elastic, secondary) motion there, and its motion in
 * the span belongs to the controllers. C is linear in x with gradient W^T M, so one XPBD
 * projection (Macklin et al. 2016, eq. 18; lambda = 0 at a substep's start) is exact:
 *
 *     (W^T M M^-1 M W + alpha~) dlambda = -C,   dx = M^-1 M W dlambda = W dlambda,
 *
 * and W^T M W is the top-left block of the seed's KKT matrix: constant, factorised once
 * (here with the per-row compliance alpha / h^2 on its diagonal) and only back-substituted
 * per substep. Pinned vertices (infinite mass) drop out of the block; a change of the
 * pinned or driven set refactorises, with no allocation.
 *
 * The translation rows hold where a driven controller's vertices are, not how they are
 * turned; the paper's rotation rows do (its 2D reference solves them per controller):
 * with a_i = R_j (xbar_i - dbar_j),
 *
 *     C_j^rot = sum_i m_i w_ij a_i x (x_i - x_i^r),     dx_i = w_ij dlambda x a_i,
 *     K_j dlambda = -C_j^rot,   K_j = sum_i m_i w_ij^2 (|a_i|^2 I - a_i a_i^T)
 *
 * (a 3 x 3 system per driven controller, a scalar in 2D), projected before the translation
 * rows so that those hold exactly at the end of the substep.
 *
 * A substep: the body's prediction and constraints (softbody.c, softbody_solve.c), the fit
 * of the free controllers to x warm-started from the last substep (the seed: "the inverse
 * kinematics step is performed in each time step"), the rotation rows, the translation rows
 * and in their pass the velocity update and the next substep's prediction. Neither row
 * forms x^r: C_j = sum_i m_i w_ij (x_i - x^r_i) is a sum over the influences of x minus
 * constant sums over the pairs of controllers that share a vertex, turned by the poses
 * (row_values_pairs, project_rotations). */
#include <marionette/linalg.h>
#include <marionette/skin.h>

#include "skin/softbody_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The rotation rows' regularisation: a share of the mean moment added to each axis (see
 * project_rotations). */
#define ROT_FLOOR 0.05

struct mn_coupled {
    mn_softbody* sb;
    const mn_rig* rig;
    mn_fitter* fit;
    mn_coupling_options opt;
    int n, m, dim;
    uint8_t* driven;      /* m */
    uint8_t* driven_prev; /* m: the set before a change, restored when it fails */
    mn_xform* pose;       /* m */
    mn_xform* start;      /* m: the driven poses at the start of a step */
    mn_xform* target;     /* m: and at its end */
    mn_xform* saved;      /* m: the poses at the start of a step, restored on failure */
    double* xr;           /* n x 3: the rig's reproduction */
    double* tg;           /* n x dim: the fit's targets (2D: x packed to pairs) */
    /* controllers' influences, by controller (CSR) */
    int* cptr;   /* m + 1 */
    int* cvert;  /* nnz */
    double* cwt; /* nnz */
    double* cd;  /* nnz x 3: xbar_i - dbar_j */
    double* cmw; /* nnz: m_i w_ij */
    /* the rotation rows' rest moments over each controller's unpinned vertices (made with
     * the factor): K0 = sum m w^2 (|d|^2 I - d d^T) (9), S1 = sum m w^2 d (3), S0 = sum m w^2;
     * at a pose R, K = R K0 R^T and the lever arms' sum R S1 */
    double* rot0; /* m x 13 */
    /* the translation rows */
    int nrows;
    int* row_ctrl; /* nrows */
    int* ctrl_row; /* m: row or -1 */
    double* S;     /* m x m: factor of W^T M W + alpha~ over the rows */
    double* C;     /* 3 x m: right-hand sides */
    double factored_h;
    uint8_t* pinned; /* n: the pinned set the factor was made for */
    /* the translation rows' values without x^r (row_values): C_j = sum_i m_i w_ij x_i -
     * sum_k (R_k D_jk + S_jk p_k) over the pairs of controllers that share a vertex */
    int* slot_row; /* n x k: the row of the slot's controller, or -1 */
    int npairs;
    int* pair;      /* npairs x 2: (j, k) */
    double* pair_s; /* npairs: S_jk = sum_i m_i w_ij w_ik */
    double* pair_d; /* npairs x 3: D_jk = sum_i m_i w_ij w_ik (xbar_i - dbar_k) */
    int* pair_at;   /* m x m: the pair (j, k), or -1 */
    /* npairs x 16, over the unpinned vertices (made with the factor; project_rotations):
     * E_jk = sum m w_ij w_ik (xbar_i - dbar_j) (3), F_jk = sum m w_ij w_ik (xbar_i - dbar_j)
     * (xbar_i - dbar_k)^T (9), D'_jk (3), S'_jk */
    double* pair_u;
    double scale; /* L * M */
    double fit_rms;
};

mn_coupling_options mn_coupling_default(void) {
    mn_coupling_options o;
    memset(&o, 0, sizeof o);
    o.enabled = 1;
    o.compliance_driven = 0;
    o.compliance_free = 0;
    o.driven_rotation = 1;
    o.fit = mn_fit_default();
    o.fit.max_iters = 8;
    o.fit.vertex_error = 0;
    return o;
}

static double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void mn_coupled_destroy(mn_coupled* c) {
    if (!c) return;
    mn_fitter_destroy(c->fit);
    free(c->driven);
    free(c->driven_prev);
    free(c->pose);
    free(c->start);
    free(c->target);
    free(c->saved);
    free(c->xr);
    free(c->tg);
    free(c->cptr);
    free(c->cvert);
    free(c->cwt);
    free(c->cd);
    free(c->cmw);
    free(c->rot0);
    free(c->row_ctrl);
    free(c->ctrl_row);
    free(c->S);
    free(c->C);
    free(c->pinned);
    free(c->slot_row);
    free(c->pair);
    free(c->pair_s);
    free(c->pair_d);
    free(c->pair_at);
    free(c->pair_u);
    free(c);
}

/* Builds and factorises W^T M W + alpha~ over the rows (controllers with a row: driven ones,
 * and free ones unless compliance_free < 0; a controller whose vertices are all pinned has
 * nothing to move and no row). No allocation. */
static mn_status factor_rows(mn_coupled* c, double h, mn_error* err) {
    const mn_rig* rig = c->rig;
    const mn_softbody* sb = c->sb;
    int m = c->m, k = rig->k;
    for (int i = 0; i < c->n; i++)
        c->pinned[i] = sb->inv_mass[i] == 0;
    for (int j = 0; j < m; j++) {
        double* R0 = c->rot0 + 13 * (size_t)j;
        memset(R0, 0, 13 * sizeof(double));
        for (int p = c->cptr[j]; p < c->cptr[j + 1]; p++) {
            int i = c->cvert[p];
            if (c->pinned[i]) continue;
            const double* d = c->cd + 3 * (size_t)p;
            double mw2 = sb->mass[i] * c->cwt[p] * c->cwt[p],
                   dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            for (int r = 0; r < 3; r++)
                for (int q = 0; q < 3; q++)
                    R0[3 * r + q] += mw2 * ((r == q ? dd : 0) - d[r] * d[q]);
            R0[9] += mw2 * d[0], R0[10] += mw2 * d[1], R0[11] += mw2 * d[2];
            R0[12] += mw2;
        }
    }
    memset(c->pair_u, 0, (size_t)(c->npairs > 0 ? c->npairs : 1) * 16 * sizeof(double));
    for (int i = 0; i < c->n; i++) {
        if (c->pinned[i]) continue;
        const double* xb = rig->rest + 3 * (size_t)i;
        for (int a = 0; a < k; a++) {
            double wa = rig->w_val[(size_t)i * k + a];
            if (!(wa > 0)) continue;
            int ja = rig->w_idx[(size_t)i * k + a];
            mn_vec3 pa = rig->ctrl_pivot[ja];
            double da[3] = {xb[0] - pa.x, xb[1] - pa.y, xb[2] - pa.z};
            for (int b = 0; b < k; b++) {
                double wb = rig->w_val[(size_t)i * k + b];
                if (!(wb > 0)) continue;
                int jb = rig->w_idx[(size_t)i * k + b];
                mn_vec3 pb = rig->ctrl_pivot[jb];
                double db[3] = {xb[0] - pb.x, xb[1] - pb.y, xb[2] - pb.z};
                double mww = sb->mass[i] * wa * wb;
                double* U = c->pair_u + 16 * (size_t)c->pair_at[ja * m + jb];
                for (int r = 0; r < 3; r++) {
                    U[r] += mww * da[r];
                    for (int q = 0; q < 3; q++)
                        U[3 + 3 * r + q] += mww * da[r] * db[q];
                    U[12 + r] += mww * db[r];
                }
                U[15] += mww;
            }
        }
    }
    c->nrows = 0;
    for (int j = 0; j < m; j++) {
        c->ctrl_row[j] = -1;
        if (!c->driven[j] && c->opt.compliance_free < 0) continue;
        double free_w = 0;
        for (int p = c->cptr[j]; p < c->cptr[j + 1]; p++)
            if (!c->pinned[c->cvert[p]]) free_w += c->cwt[p];
        if (!(free_w > 0)) continue;
        c->ctrl_row[j] = c->nrows;
        c->row_ctrl[c->nrows++] = j;
    }
    int nr = c->nrows;
    for (size_t q = 0; q < (size_t)c->n * k; q++)
        c->slot_row[q] = rig->w_val[q] > 0 ? c->ctrl_row[rig->w_idx[q]] : -1;
    double* S = c->S;
    memset(S, 0, (size_t)nr * nr * sizeof(double));
    for (int i = 0; i < c->n; i++) {
        if (c->pinned[i]) continue;
        const int* idx = rig->w_idx + (size_t)i * k;
        const double* w = rig->w_val + (size_t)i * k;
        double mi = sb->mass[i];
        for (int a = 0; a < k; a++) {
            int ra = w[a] > 0 ? c->ctrl_row[idx[a]] : -1;
            if (ra < 0) continue;
            for (int b = 0; b < k; b++) {
                int rb = w[b] > 0 ? c->ctrl_row[idx[b]] : -1;
                if (rb >= 0) S[(size_t)ra * nr + rb] += mi * w[a] * w[b];
            }
        }
    }
    for (int r = 0; r < nr; r++) {
        int j = c->row_ctrl[r];
        double alpha = c->driven[j] ? c->opt.compliance_driven : c->opt.compliance_free;
        S[(size_t)r * nr + r] += alpha / (h * h);
    }
    c->factored_h = h;
    if (nr > 0 && mn_cholesky_factor(S, nr) != MN_OK) {
        c->factored_h = 0;
        return mn_error_set(err, MN_ERR_SINGULAR, "", 0, "rig",
                            "W^T M W is singular: controllers share exactly the same weights");
    }
    return MN_OK;
}

/* The pairs of controllers that share a vertex with their S_jk and
 * D_jk (row_values). Setup time: allocates; 0 when out of memory. */
static int build_pairs(mn_coupled* c) {
    const mn_rig* rig = c->rig;
    int m = c->m, k = rig->k;
    int* at = malloc((size_t)m * m * sizeof(int));
    if (!at) return 0;
    for (size_t q = 0; q < (size_t)m * m; q++)
        at[q] = -1;
    c->npairs = 0;
    for (int i = 0; i < c->n; i++)
        for (int a = 0; a < k; a++) {
            double wa = rig->w_val[(size_t)i * k + a];
            for (int b = 0; wa > 0 && b < k; b++) {
                int q = rig->w_idx[(size_t)i * k + a] * m + rig->w_idx[(size_t)i * k + b];
                if (rig->w_val[(size_t)i * k + b] > 0 && at[q] < 0) at[q] = c->npairs++;
            }
        }
    int np = c->npairs > 0 ? c->npairs : 1;
    c->pair = malloc((size_t)np * 2 * sizeof(int));
    c->pair_s = calloc((size_t)np, sizeof(double));
    c->pair_d = calloc((size_t)np * 3, sizeof(double));
    c->pair_u = calloc((size_t)np * 16, sizeof(double));
    c->pair_at = at;
    if (!c->pair || !c->pair_s || !c->pair_d || !c->pair_u) return 0;
    for (int q = 0; q < m * m; q++)
        if (at[q] >= 0) c->pair[2 * at[q]] = q / m, c->pair[2 * at[q] + 1] = q % m;
    for (int i = 0; i < c->n; i++) {
        const double* xb = rig->rest + 3 * (size_t)i;
        for (int a = 0; a < k; a++) {
            double wa = rig->w_val[(size_t)i * k + a];
            if (!(wa > 0)) continue;
            double mwa = c->sb->mass[i] * wa;
            for (int b = 0; b < k; b++) {
                double wb = rig->w_val[(size_t)i * k + b];
                if (!(wb > 0)) continue;
                int kk = rig->w_idx[(size_t)i * k + b];
                int p = at[rig->w_idx[(size_t)i * k + a] * m + kk];
                mn_vec3 piv = rig->ctrl_pivot[kk];
                c->pair_s[p] += mwa * wb;
                c->pair_d[3 * p] += mwa * wb * (xb[0] - piv.x);
                c->pair_d[3 * p + 1] += mwa * wb * (xb[1] - piv.y);
                c->pair_d[3 * p + 2] += mwa * wb * (xb[2] - piv.z);
            }
        }
    }
    return 1;
}

static int pins_changed(const mn_coupled* c) {
    for (int i = 0; i < c->n; i++)
        if (c->pinned[i] != (c->sb->inv_mass[i] == 0)) return 1;
    return 0;
}

mn_coupled* mn_coupled_create(mn_softbody* sb, const mn_rig* rig, const uint8_t* driven,
                              const mn_coupling_options* opt, mn_error* err) {
    if (!sb || !rig) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "coupling", "NULL body or rig");
        return NULL;
    }
    if (rig->nverts != sb->nverts) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "rig", "%d vertices, the body has %d", rig->nverts,
                     sb->nverts);
        return NULL;
    }
    if (rig->nctrl < 1 || rig->k < 1) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "rig", "no controllers or no weights");
        return NULL;
    }
    mn_coupling_options o = opt ? *opt : mn_coupling_default();
    if (!(o.compliance_driven >= 0) || !isfinite(o.compliance_driven) ||
        !isfinite(o.compliance_free)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "options",
                     "compliance_driven >= 0, compliances finite");
        return NULL;
    }
    mn_coupled* c = calloc(1, sizeof *c);
    if (!c) goto nomem;
    c->sb = sb;
    c->rig = rig;
    c->opt = o;
    int n = sb->nverts, m = rig->nctrl, k = rig->k;
    c->n = n;
    c->m = m;
    c->dim = rig->dim;
    c->driven = calloc((size_t)m, 1);
    c->driven_prev = calloc((size_t)m, 1);
    c->pose = malloc((size_t)m * sizeof *c->pose);
    c->start = malloc((size_t)m * sizeof *c->start);
    c->target = malloc((size_t)m * sizeof *c->target);
    c->saved = malloc((size_t)m * sizeof *c->saved);
    c->xr = malloc((size_t)n * 3 * sizeof(double));
    c->tg = malloc((size_t)n * rig->dim * sizeof(double));
    c->cptr = calloc((size_t)m + 1, sizeof(int));
    c->row_ctrl = malloc((size_t)m * sizeof(int));
    c->ctrl_row = malloc((size_t)m * sizeof(int));
    c->S = malloc((size_t)m * m * sizeof(double));
    c->C = malloc((size_t)3 * m * sizeof(double));
    c->pinned = malloc((size_t)n);
    c->slot_row = malloc((size_t)n * k * sizeof(int));
    if (!c->driven || !c->driven_prev || !c->pose || !c->start || !c->target || !c->saved ||
        !c->xr || !c->tg || !c->cptr || !c->row_ctrl || !c->ctrl_row || !c->S || !c->C ||
        !c->pinned || !c->slot_row || !build_pairs(c))
        goto nomem;
    if (driven) memcpy(c->driven, driven, (size_t)m);
    for (int j = 0; j < m; j++)
        c->driven[j] = c->driven[j] != 0;
    /* the influences by controller */
    int nnz = 0;
    for (int i = 0; i < n; i++)
        for (int a = 0; a < k; a++)
            if (rig->w_val[(size_t)i * k + a] > 0)
                c->cptr[rig->w_idx[(size_t)i * k + a] + 1]++, nnz++;
    for (int j = 0; j < m; j++)
        c->cptr[j + 1] += c->cptr[j];
    c->cvert = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int));
    c->cwt = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(double));
    c->cd = malloc((size_t)(nnz > 0 ? nnz : 1) * 3 * sizeof(double));
    c->cmw = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(double));
    c->rot0 = malloc((size_t)m * 13 * sizeof(double));
    int* fill = calloc((size_t)m, sizeof(int));
    if (!c->cvert || !c->cwt || !c->cd || !c->cmw || !c->rot0 || !fill) {
        free(fill);
        goto nomem;
    }
    for (int i = 0; i < n; i++)
        for (int a = 0; a < k; a++) {
            double w = rig->w_val[(size_t)i * k + a];
            if (!(w > 0)) continue;
            int j = rig->w_idx[(size_t)i * k + a], p = c->cptr[j] + fill[j]++;
            c->cvert[p] = i;
            c->cwt[p] = w;
            c->cmw[p] = sb->mass[i] * w;
            c->cd[3 * p] = rig->rest[3 * (size_t)i] - rig->ctrl_pivot[j].x;
            c->cd[3 * p + 1] = rig->rest[3 * (size_t)i + 1] - rig->ctrl_pivot[j].y;
            c->cd[3 * p + 2] = rig->rest[3 * (size_t)i + 2] - rig->ctrl_pivot[j].z;
        }
    free(fill);
    double M = 0;
    for (int i = 0; i < n; i++)
        M += sb->mass[i];
    c->scale = mn_rig_bbox_diagonal(rig) * M;
    if (!(c->scale > 0)) c->scale = 1;
    c->fit = mn_fitter_create(rig, c->driven, err);
    if (!c->fit) {
        mn_coupled_destroy(c);
        return NULL;
    }
    mn_rig_rest_pose(rig, c->pose);
    memcpy(c->target, c->pose, (size_t)m * sizeof *c->pose);
    if (o.enabled && factor_rows(c, 1.0 / 600, err) != MN_OK) {
        mn_coupled_destroy(c);
        return NULL;
    }
    return c;
nomem:
    mn_coupled_destroy(c);
    mn_error_set(err, MN_ERR_NOMEM, "", 0, "coupling", "out of memory");
    return NULL;
}

mn_status mn_coupled_set_driven(mn_coupled* c, const uint8_t* driven, mn_error* err) {
    if (!c) return mn_error_set(err, MN_ERR_ARG, "", 0, "coupling", "NULL");
    mn_status st = mn_fitter_set_fixed(c->fit, driven, err); /* keeps its old set on failure */
    if (st != MN_OK) return st;
    memcpy(c->driven_prev, c->driven, (size_t)c->m);
    for (int j = 0; j < c->m; j++)
        c->driven[j] = driven && driven[j] ? 1 : 0;
    if (c->opt.enabled &&
        (st = factor_rows(c, c->factored_h > 0 ? c->factored_h : 1.0 / 600, err)) != MN_OK) {
        /* back to the old set, which factorised before */
        memcpy(c->driven, c->driven_prev, (size_t)c->m);
        mn_fitter_set_fixed(c->fit, c->driven, NULL);
        factor_rows(c, c->factored_h > 0 ? c->factored_h : 1.0 / 600, NULL);
        return st;
    }
    for (int j = 0; j < c->m; j++)
        c->target[j] = c->pose[j];
    return MN_OK;
}

mn_xform* mn_coupled_pose(mn_coupled* c) {
    return c ? c->pose : NULL;
}

void mn_coupled_drive(mn_coupled* c, int j, const mn_xform* target) {
    if (!c || j < 0 || j >= c->m || !target || !c->driven[j]) return;
    c->target[j] = *target;
}

/* The driven poses a share t of the way from the step's start to its targets: positions
 * linearly, rotations along the shortest arc. */
static void driven_at(mn_coupled* c, double t) {
    for (int j = 0; j < c->m; j++) {
        if (!c->driven[j]) continue;
        if (t >= 1) {
            c->pose[j] = c->target[j];
            continue;
        }
        mn_quat a = mn_quat_from_mat3(&c->start[j].R), b = mn_quat_from_mat3(&c->target[j].R);
        mn_quat q = mn_quat_slerp(a, b, t);
        c->pose[j].R = mn_quat_to_mat3(q);
        c->pose[j].p = mn_vec3_lerp(c->start[j].p, c->target[j].p, t);
    }
}

/* x^r of vertex i from the poses (seed eq. "x_i^r"). */
static inline void rig_position(const mn_coupled* c, int i, double y[3]) {
    const mn_rig* rig = c->rig;
    int k = rig->k;
    const double* xb = rig->rest + 3 * (size_t)i;
    y[0] = y[1] = y[2] = 0;
    for (int a = 0; a < k; a++) {
        double w = rig->w_val[(size_t)i * k + a];
        if (!(w > 0)) continue;
        int j = rig->w_idx[(size_t)i * k + a];
        mn_vec3 d = mn_v3(xb[0] - rig->ctrl_pivot[j].x, xb[1] - rig->ctrl_pivot[j].y,
                          xb[2] - rig->ctrl_pivot[j].z);
        mn_vec3 r = mn_vec3_add(mn_mat3_mulv(&c->pose[j].R, d), c->pose[j].p);
        y[0] += w * r.x;
        y[1] += w * r.y;
        y[2] += w * r.z;
    }
}

/* x^r into xr (n x 3). */
static void rig_positions(const mn_coupled* c) {
    for (int i = 0; i < c->n; i++)
        rig_position(c, i, c->xr + 3 * (size_t)i);
}

const double* mn_coupled_rigged(const mn_coupled* c) {
    if (!c) return NULL;
    rig_positions(c); /* at the poses of now */
    return c->xr;
}

/* The translation rows' values C (3 x m) at the current x without x^r: C_j = sum_i m_i w_ij
 * (x_i - x^r_i) with x^r_i = sum_k w_ik (R_k (xbar_i - dbar_k) + p_k) is
 * sum_i m_i w_ij x_i - sum_k (R_k D_jk + S_jk p_k), the pairs' sums constant (build_pairs):
 * one pass over the vertices' weights instead of x^r and then C. */
static void row_values_pairs(mn_coupled* c) {
    int nr = c->nrows;
    double* restrict C = c->C;
    const double* restrict x = c->sb->x;
    for (int r = 0; r < nr; r++) { /* by controller: the sums in registers, two of each */
        int j = c->row_ctrl[r], p = c->cptr[j], end = c->cptr[j + 1];
        double s[6] = {0, 0, 0, 0, 0, 0};
        for (; p + 2 <= end; p += 2)
            for (int q = 0; q < 2; q++) {
                const double* xi = x + 3 * (size_t)c->cvert[p + q];
                double mw = c->cmw[p + q];
                s[3 * q] += mw * xi[0];
                s[3 * q + 1] += mw * xi[1];
                s[3 * q + 2] += mw * xi[2];
            }
        for (; p < end; p++) {
            const double* xi = x + 3 * (size_t)c->cvert[p];
            double mw = c->cmw[p];
            s[0] += mw * xi[0];
            s[1] += mw * xi[1];
            s[2] += mw * xi[2];
        }
        C[r] = s[0] + s[3], C[nr + r] = s[1] + s[4], C[2 * nr + r] = s[2] + s[5];
    }
    for (int p = 0; p < c->npairs; p++) {
        int r = c->ctrl_row[c->pair[2 * p]];
        if (r < 0) continue;
        const mn_xform* P = c->pose + c->pair[2 * p + 1];
        const double* D = c->pair_d + 3 * p;
        mn_vec3 y = mn_mat3_mulv(&P->R, mn_v3(D[0], D[1], D[2]));
        double S = c->pair_s[p];
        C[r] -= y.x + S * P->p.x;
        C[nr + r] -= y.y + S * P->p.y;
        C[2 * nr + r] -= y.z + S * P->p.z;
    }
}

/* C = A B and C = A B^T (3 x 3, row-major). */
static void mat3_mul(const double* A, const double* B, double* C) {
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
            C[3 * r + q] = A[3 * r] * B[q] + A[3 * r + 1] * B[3 + q] + A[3 * r + 2] * B[6 + q];
}

static void mat3_mul_t(const double* A, const double* B, double* C) {
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
            C[3 * r + q] =
                A[3 * r] * B[3 * q] + A[3 * r + 1] * B[3 * q + 1] + A[3 * r + 2] * B[3 * q + 2];
}

/* Twice the axial vector of G's antisymmetric part: (G_yz - G_zy, G_zx - G_xz, G_xy - G_yx). */
static void vee(const double* G, double v[3]) {
    v[0] = G[5] - G[7];
    v[1] = G[6] - G[2];
    v[2] = G[1] - G[3];
}

/* The rotation rows of the driven controllers, one after the other (Gauss-Seidel). */
static void project_rotations(mn_coupled* c, double h) {
    double* x = c->sb->x;
    double alpha = c->opt.compliance_driven / (h * h);
    for (int j = 0; j < c->m; j++) {
        if (!c->driven[j]) continue;
        const mn_mat3* R = &c->pose[j].R;
        const double* R0 = c->rot0 + 13 * (size_t)j;
        double S0 = R0[12];
        if (!(S0 > 0)) continue;
        /* The moments about the pivot C = sum m w a x (x - x^r) and the translation row
         * T = sum m w (x - x^r) over the unpinned vertices, a = R d, d = xbar - dbar_j:
         * with x^r_i = sum_k w_ik (R_k d_ik + p_k), the x^r parts are sums over the pairs
         * (j, k) of constant moments (pair_u), and one pass over the vertices gathers
         * P = sum m w d x^T and sum m w x: sum m w (R d) x x = vee(R P), and
         * sum m w w_k (R d) x (R_k e) = vee(R F R_k^T). */
        double P[9] = {0}, X[3] = {0, 0, 0};
        for (int p = c->cptr[j]; p < c->cptr[j + 1]; p++) {
            int i = c->cvert[p];
            if (c->pinned[i]) continue;
            const double* d = c->cd + 3 * (size_t)p;
            const double* xi = x + 3 * (size_t)i;
            double mw = c->cmw[p], md[3] = {mw * d[0], mw * d[1], mw * d[2]};
            for (int r = 0; r < 3; r++) {
                P[3 * r] += md[r] * xi[0];
                P[3 * r + 1] += md[r] * xi[1];
                P[3 * r + 2] += md[r] * xi[2];
            }
            X[0] += mw * xi[0], X[1] += mw * xi[1], X[2] += mw * xi[2];
        }
        double G[9], Cr[3], T[3] = {X[0], X[1], X[2]};
        mat3_mul(R->m, P, G);
        vee(G, Cr);
        for (int q = 0; q < c->npairs; q++) {
            if (c->pair[2 * q] != j) continue;
            const mn_xform* Pk = c->pose + c->pair[2 * q + 1];
            const double* U = c->pair_u + 16 * (size_t)q;
            mn_vec3 Dk = mn_mat3_mulv(&Pk->R, mn_v3(U[12], U[13], U[14]));
            T[0] -= Dk.x + U[15] * Pk->p.x;
            T[1] -= Dk.y + U[15] * Pk->p.y;
            T[2] -= Dk.z + U[15] * Pk->p.z;
            mn_vec3 Ep = mn_vec3_cross(mn_mat3_mulv(R, mn_v3(U[0], U[1], U[2])), Pk->p);
            double RF[9], RFR[9], v[3];
            mat3_mul(R->m, U + 3, RF);
            mat3_mul_t(RF, Pk->R.m, RFR);
            vee(RFR, v);
            Cr[0] -= Ep.x + v[0], Cr[1] -= Ep.y + v[1], Cr[2] -= Ep.z + v[2];
        }
        /* K = R K0 R^T and the w^2-weighted centroid c = R S1 / S0 of the lever arms, then
         * about c (parallel axes): C' = C - c x T, K' = K - S0 (|c|^2 I - c c^T). Where the
         * translation rows hold (T = 0) the two rows are the same constraint, but a correction
         * about c leaves T as it is (sum m w^2 (a - c) = 0), so the rotation and translation
         * projections do not undo each other from substep to substep. */
        double RK[9], K[9];
        mat3_mul(R->m, R0, RK);
        mat3_mul_t(RK, R->m, K);
        mn_vec3 cc = mn_vec3_scale(mn_mat3_mulv(R, mn_v3(R0[9], R0[10], R0[11])), 1 / S0);
        mn_vec3 cT = mn_vec3_cross(cc, mn_v3(T[0], T[1], T[2]));
        Cr[0] -= cT.x, Cr[1] -= cT.y, Cr[2] -= cT.z;
        double c2 = mn_vec3_dot(cc, cc), cv[3] = {cc.x, cc.y, cc.z};
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++)
                K[3 * r + q] -= S0 * ((r == q ? c2 : 0) - cv[r] * cv[q]);
        double dl[3];
        if (c->dim == 2) { /* about z only: K_zz dl_z = -C_z */
            double den = K[8] + alpha;
            if (!(den > 0)) continue;
            dl[0] = dl[1] = 0;
            dl[2] = -Cr[2] / den;
        } else {
            /* A thin region (a forearm) has almost no moment about its own axis: K is nearly
             * singular there, and an exact projection would answer rounding-sized moments
             * with large turns. Each axis gets at least ROT_FLOOR of K's mean moment. */
            double floor_ = ROT_FLOOR * (K[0] + K[4] + K[8]) / 3;
            for (int r = 0; r < 3; r++)
                K[4 * r] += alpha + floor_;
            if (mn_cholesky_factor(K, 3) != MN_OK) continue;
            dl[0] = -Cr[0], dl[1] = -Cr[1], dl[2] = -Cr[2];
            mn_cholesky_solve(K, 3, dl);
        }
        mn_vec3 L = mn_v3(dl[0], dl[1], dl[2]);
        for (int p = c->cptr[j]; p < c->cptr[j + 1]; p++) {
            int i = c->cvert[p];
            if (c->pinned[i]) continue;
            const double* d = c->cd + 3 * (size_t)p;
            mn_vec3 a = mn_mat3_mulv(R, mn_v3(d[0], d[1], d[2]));
            mn_vec3 dx = mn_vec3_scale(mn_vec3_cross(L, mn_vec3_sub(a, cc)), c->cwt[p]);
            x[3 * i] += dx.x, x[3 * i + 1] += dx.y, x[3 * i + 2] += dx.z;
        }
    }
}

/* project_translations' pass over the vertices (predict: next >= 0, a constant in each of
 * the two calls, so that the loop has no test of it). */
static inline void apply_rows(mn_coupled* c, double h, double damp, int next, int ns, int predict) {
    const mn_rig* rig = c->rig;
    mn_softbody* sb = c->sb;
    int nr = c->nrows, k = rig->k;
    double* restrict x = sb->x;
    double* restrict v = sb->v;
    double* restrict prev = sb->prev;
    double* restrict x4 = sb->x4;
    const double* restrict wi = sb->inv_mass;
    const double* restrict pin = sb->pin_target;
    const double* restrict C = c->C;
    double f = damp / h, gx = h * sb->opt.gravity.x, gy = h * sb->opt.gravity.y,
           gz = h * sb->opt.gravity.z, left = predict ? (double)(ns - next) : 1;
    for (int i = 0; i < c->n; i++) {
        double* xi = x + 3 * (size_t)i;
        double* vi = v + 3 * (size_t)i;
        double* pi = prev + 3 * (size_t)i;
        double x0 = xi[0], x1 = xi[1], x2 = xi[2];
        if (wi[i] != 0) {
            const int* sr = c->slot_row + (size_t)i * k;
            const double* w = rig->w_val + (size_t)i * k;
            for (int a = 0; a < k && nr > 0; a++) {
                int r = sr[a];
                if (r < 0) continue;
                x0 += w[a] * C[r];
                x1 += w[a] * C[nr + r];
                x2 += w[a] * C[2 * nr + r];
            }
            double v0 = (x0 - pi[0]) * f, v1 = (x1 - pi[1]) * f, v2 = (x2 - pi[2]) * f;
            if (predict) { /* mn_sb_predict_vertex */
                pi[0] = x0, pi[1] = x1, pi[2] = x2;
                v0 += gx, v1 += gy, v2 += gz;
                x0 += h * v0, x1 += h * v1, x2 += h * v2;
            }
            vi[0] = v0, vi[1] = v1, vi[2] = v2;
        } else if (predict) { /* pinned: a share of the way to the target */
            pi[0] = x0, pi[1] = x1, pi[2] = x2;
            x0 += (pin[3 * i] - x0) / left;
            x1 += (pin[3 * i + 1] - x1) / left;
            x2 += (pin[3 * i + 2] - x2) / left;
        }
        xi[0] = x0, xi[1] = x1, xi[2] = x2;
        if (predict) { /* and the constraint passes' copy (mn_sb_project's packed) */
            double* r4 = x4 + 4 * (size_t)i;
            r4[0] = x0, r4[1] = x1, r4[2] = x2, r4[3] = wi[i];
        }
    }
}

/* The translation rows, exactly: S dlambda = -C with the prefactorised S, dx = W dlambda;
 * in the same pass over the vertices, the substep's velocities (mn_sb_velocities) and, when
 * next >= 0, the prediction of substep next (mn_sb_predict). */
static void project_translations(mn_coupled* c, double h, double damp, int next, int ns) {
    int nr = c->nrows;
    if (nr > 0) {
        row_values_pairs(c);
        for (int ax = 0; ax < 3; ax++) {
            double* b = c->C + (size_t)ax * nr;
            for (int r = 0; r < nr; r++)
                b[r] = -b[r];
            mn_cholesky_solve(c->S, nr, b);
        }
    }
    if (next >= 0)
        apply_rows(c, h, damp, next, ns, 1);
    else
        apply_rows(c, h, damp, next, ns, 0);
}

double mn_coupled_residual(mn_coupled* c) {
    if (!c || !c->opt.enabled) return 0;
    row_values_pairs(c);
    double worst = 0;
    for (int r = 0; r < c->nrows; r++) {
        double v = sqrt(c->C[r] * c->C[r] + c->C[c->nrows + r] * c->C[c->nrows + r] +
                        c->C[2 * c->nrows + r] * c->C[2 * c->nrows + r]);
        if (v > worst) worst = v;
    }
    return worst / c->scale;
}

static void fit_now(mn_coupled* c, mn_coupled_result* r) {
    const double* tg = c->sb->x;
    if (c->dim == 2) {
        for (int i = 0; i < c->n; i++) {
            c->tg[2 * i] = c->sb->x[3 * i];
            c->tg[2 * i + 1] = c->sb->x[3 * i + 1];
        }
        tg = c->tg;
    }
    mn_fit_result fr;
    mn_fit(c->fit, c->pose, tg, &c->opt.fit, &fr);
    r->fit_iterations += fr.iterations;
    c->fit_rms = fr.rms;
}

/* One-way (enabled = 0): the vertices that driven controllers alone move (weight above
 * 0.999) are pinned and driven to where those controllers take them, the body steps, and
 * the free controllers are fitted once (marionette sim's scheme before the coupling). */
static void one_way_pins(mn_coupled* c) {
    const mn_rig* rig = c->rig;
    int k = rig->k;
    for (int i = 0; i < c->n; i++)
        for (int a = 0; a < k; a++) {
            int j = rig->w_idx[(size_t)i * k + a];
            if (!c->driven[j] || !(rig->w_val[(size_t)i * k + a] > 0.999)) continue;
            if (c->sb->inv_mass[i] != 0) mn_softbody_pin(c->sb, i, 1);
            const double* xb = rig->rest + 3 * (size_t)i;
            mn_vec3 d = mn_v3(xb[0] - rig->ctrl_pivot[j].x, xb[1] - rig->ctrl_pivot[j].y,
                              xb[2] - rig->ctrl_pivot[j].z);
            mn_vec3 y = mn_vec3_add(mn_mat3_mulv(&c->target[j].R, d), c->target[j].p);
            c->sb->pin_target[3 * i] = y.x;
            c->sb->pin_target[3 * i + 1] = y.y;
            c->sb->pin_target[3 * i + 2] = y.z;
        }
}

static int poses_finite(const mn_coupled* c) {
    for (int j = 0; j < c->m; j++) {
        const mn_xform* P = c->pose + j;
        for (int q = 0; q < 9; q++)
            if (!isfinite(P->R.m[q])) return 0;
        if (!mn_vec3_isfinite(P->p)) return 0;
    }
    return 1;
}

mn_status mn_coupled_step(mn_coupled* c, double dt, mn_coupled_result* r) {
    mn_coupled_result dummy;
    if (!r) r = &dummy;
    memset(r, 0, sizeof *r);
    if (!c || !(dt > 0) || !isfinite(dt)) {
        r->status = MN_ERR_ARG;
        snprintf(r->message, sizeof r->message, "%s",
                 c ? "dt: must be finite and > 0" : "coupling: NULL");
        return r->status;
    }
    for (int j = 0; j < c->m; j++) {
        if (!c->driven[j]) continue;
        const mn_xform* T = c->target + j;
        int ok = mn_vec3_isfinite(T->p);
        for (int q = 0; q < 9; q++)
            ok = ok && isfinite(T->R.m[q]);
        if (!ok) {
            r->status = MN_ERR_ARG;
            snprintf(r->message, sizeof r->message,
                     "target: driven controller %d is not finite (nothing changed)", j);
            return r->status;
        }
    }
    mn_softbody* sb = c->sb;
    int ns = sb->opt.substeps;
    double h = dt / ns;
    double damp = fmax(0.0, 1.0 - sb->opt.damping * h);
    memcpy(c->saved, c->pose, (size_t)c->m * sizeof *c->pose);
    memcpy(c->start, c->pose, (size_t)c->m * sizeof *c->pose);
    double t0 = cpu_us();
    if (!c->opt.enabled) {
        one_way_pins(c);
        mn_softbody_result sr;
        mn_softbody_step(sb, dt, &sr);
        double t1 = cpu_us();
        r->us_sim = t1 - t0;
        r->iterations = sr.iterations;
        if (sr.status != MN_OK) {
            memcpy(c->pose, c->saved, (size_t)c->m * sizeof *c->pose);
            r->status = sr.status;
            memcpy(r->message, sr.message, sizeof r->message);
            return r->status;
        }
        driven_at(c, 1);
        fit_now(c, r);
        r->us_fit = cpu_us() - t1;
        r->fit_rms = c->fit_rms;
        r->max_speed = sr.max_speed;
        r->status = MN_OK;
        return MN_OK;
    }
    if (h != c->factored_h || pins_changed(c)) {
        mn_error e;
        if (factor_rows(c, h, &e) != MN_OK) { /* nothing has moved yet */
            r->status = e.status;
            snprintf(r->message, sizeof r->message, "%.150s", e.message);
            return r->status;
        }
    }
    mn_sb_save(sb);
    double a = cpu_us();
    mn_sb_predict(sb, h, 0, ns); /* the next ones in project_translations */
    for (int s = 0; s < ns; s++) {
        mn_sb_project(sb, h, s > 0);
        double b = cpu_us();
        driven_at(c, (double)(s + 1) / ns);
        fit_now(c, r);
        double d = cpu_us();
        if (c->opt.driven_rotation) project_rotations(c, h);
        /* and the velocities, and the next substep's prediction */
        project_translations(c, h, damp, s + 1 < ns ? s + 1 : -1, ns);
        double e = cpu_us();
        r->us_sim += b - a;
        r->us_fit += d - b;
        r->us_couple += e - d;
        a = e;
    }
    r->iterations = ns;
    mn_softbody_result sr;
    memset(&sr, 0, sizeof sr);
    if (!mn_sb_finish(sb, &sr) || !poses_finite(c)) {
        if (sr.status == MN_OK) {
            memcpy(sb->x, sb->saved, (size_t)c->n * 3 * sizeof(double));
            memcpy(sb->v, sb->saved + (size_t)c->n * 3, (size_t)c->n * 3 * sizeof(double));
            snprintf(sr.message, sizeof sr.message,
                     "pose: a fitted controller is not finite (state restored)");
        }
        memcpy(c->pose, c->saved, (size_t)c->m * sizeof *c->pose);
        mn_fitter_reset(c->fit);
        r->status = MN_ERR_NOCONVERGE;
        memcpy(r->message, sr.message, sizeof r->message);
        return r->status;
    }
    r->max_speed = sr.max_speed;
    r->fit_rms = c->fit_rms;
    r->residual = mn_coupled_residual(c);
    r->status = MN_OK;
    return MN_OK;
}
