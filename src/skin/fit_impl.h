/* The fitter's state and the pieces its files share (private to the skin layer).
 *
 * The fit (seed lbs-inverse-kinematics.md; the derivation is at the top of fit.c) is one
 * idea in four files, cut along its own steps:
 *   fit.c              the driver: creation, the fixed set, the starts, the Gauss-Newton loop;
 *   fit_translation.c  the per-rig sums, the translation step's KKT system and the energy;
 *   fit_rotation.c     the rotation step: gradient, metric, conjugate gradients, Cayley update;
 *   fit_targets.c      the per-frame pass over the targets (the one O(vertices) pass), the
 *                      pose in and out of the fitter's state. */
#ifndef MARIONETTE_SKIN_FIT_IMPL_H
#define MARIONETTE_SKIN_FIT_IMPL_H

#include <marionette/linalg.h>
#include <marionette/skin.h>

#include "skin/dense.h"

#include <math.h>

/* Up to this many controllers the rotation metric is assembled densely (m x m sums,
 * with the free translations eliminated); beyond it pair by pair. */
#define DENSE_MAX 160

/* After the first iteration of a fit, a rotation step takes its direction by conjugate
 * gradients preconditioned with the metric of an earlier iteration (mn_ft_pcg_direction) when
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

struct mn_fitter {
    const mn_rig* rig;
    int m, dim, nverts;
    uint8_t* fixed;      /* m */
    uint8_t* fixed_prev; /* m: the previous set, restored when a new one fails */
    int have_fixed;      /* a set has been factorised */
    int* rot_off;        /* m: first rotation unknown of a rotating controller, -1 if none */
    int* up;             /* m: the controller whose increments carry j (fit_rotation.c), -1 */
    mn_mat3* phi;        /* m: scratch, accumulated increments */
    mn_vec3* tau;
    mn_vec3* gsum;  /* 2 m: scratch of mn_ft_rotation_gradient */
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
    int need_lambda; /* some fixed controller hangs from a free one: mn_ft_rotation_gradient
                        reads lambda, so the translation step computes it */
    double* grad;    /* nrot */
    double* dir;     /* nrot */
    double* H;       /* nrot x nrot */
    double* Hdinv;   /* nrot: 1 / the diagonal of H's factor */

    /* the metric's product (metric_apply) and the conjugate gradients (mn_ft_pcg_direction) */
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

/* ---- fit_translation.c ---------------------------------------------------------------- */

int mn_ft_build_pairs(mn_fitter* f);
mn_status mn_ft_factor_kkt(mn_fitter* f, const uint8_t* fixed, mn_error* err);
double mn_ft_energy_and_grad(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int want_grad);
void mn_ft_translation_grad(mn_fitter* f, const mn_mat3* R, const mn_vec3* d);
void mn_ft_translation_solve(mn_fitter* f, const mn_mat3* R, mn_vec3* d);

/* ---- fit_targets.c -------------------------------------------------------------------- */

int mn_ft_load_targets(mn_fitter* f, const double* x);
void mn_ft_load_pose(mn_fitter* f, const mn_xform* pose);
void mn_ft_store_pose(const mn_fitter* f, mn_xform* pose);

/* ---- fit_rotation.c ------------------------------------------------------------------- */

void mn_ft_rotation_gradient(mn_fitter* f, const mn_mat3* R, const mn_vec3* d);
void mn_ft_build_metric(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int coupled);
int mn_ft_pcg_direction(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, double eta, int maxit,
                        double floor);
int mn_ft_rotation_direction(mn_fitter* f);
void mn_ft_apply_rotation(mn_fitter* f, const mn_mat3* R, const mn_vec3* d, double alpha,
                          mn_mat3* Rout, mn_vec3* dout);

/* ---- small pieces used by several files ------------------------------------------------- */

/* A_j = [R_j | d_j - R_j piv_j] (row-major 3 x 4). */
static inline void mn_ft_make_A(const mn_fitter* f, const mn_mat3* R, const mn_vec3* d, int j,
                                double A[12]) {
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
static inline void mn_ft_add_AQ(double* G, const double* A, const double* Q) {
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

/* Partial gradient of g with respect to the left-multiplied rotation vector of j, from
 * G = dg/dA_j: with M = G E_j^T R_j^T, E_j = [I | -piv_j], dg/dp = vee(M - M^T). */
static inline mn_vec3 mn_ft_rot_grad(const mn_fitter* f, const double* G, const mn_mat3* R, int j) {
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

/* The nearest rotation to a matrix P that is one to rounding (a product of rotations):
 * one Newton-Schulz step of the polar decomposition, P (3 I - P^T P) / 2 (Higham,
 * "Functions of Matrices", 2008, eq. 8.20; Bjorck & Bowie 1971), which squares the
 * distance to the rotation, where mn_mat3_orthonormalize takes any matrix and three
 * quaternion round trips. */
static inline mn_mat3 mn_ft_reorthonormalize(const mn_mat3* P) {
    mn_mat3 S = mn_mat3_tmul(P, P), T;
    for (int k = 0; k < 9; k++)
        T.m[k] = (k % 4 == 0 ? 1.5 : 0.0) - 0.5 * S.m[k];
    return mn_mat3_mul(P, &T);
}

/* The Cayley transform (I - [v]x / 2)^-1 (I + [v]x / 2), the rotation of the unit
 * quaternion along (1, v / 2): the angle 2 atan(|v| / 2) = |v| - |v|^3 / 12 + ... about
 * v's axis, so it agrees with exp([v]x) to second order, without a sine or a cosine. */
static inline mn_mat3 mn_ft_cayley(mn_vec3 v) {
    double s = 1.0 / sqrt(1.0 + 0.25 * mn_vec3_dot(v, v));
    mn_quat q = {s, 0.5 * s * v.x, 0.5 * s * v.y, 0.5 * s * v.z};
    return mn_quat_to_mat3(q);
}

#endif
