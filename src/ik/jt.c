/* Jacobian transpose (Welman 4.1, eq. 4.4 and 4.10-4.12): the goal pulls on the end
 * effector with a "force" F = e (position rows) and a torque (rotation rows), which the
 * transpose maps to joint velocities scaled per joint,
 *
 *     dq = h K J^T F,     K_i = 1 / (w_i phi_i),
 *
 * with phi_i the DOF's stiffness (Welman's per-joint responsiveness) and w_i = 1: the
 * world-scale part of K (eq. 4.11's w_i, proportional to link length) is taken over by
 * the adaptive step h, which makes the method scale-invariant as a whole. Two ways to take
 * the step (Welman 4.1.5, "Integration"):
 *
 * - the default: h is the step that minimises the linearised error along d = K J^T F,
 *
 *       h = <e, J d> / |J d|^2
 *
 *   (Buss and Kim 2005, "Selectively damped least squares", sec. 2's choice of alpha for
 *   the transpose), the adaptive step size 4.1.5 recommends in place of a fixed Euler step,
 *   with a cheaper control;
 *
 * - o->jt_rk: the thesis's own recommendation, the ODE q' = K J(q)^T F(q) integrated by an
 *   adaptive-stepsize Runge-Kutta method from [PFTV90] (Numerical Recipes' rkqs: the
 *   Cash-Karp embedded 5(4) pair, the step shrunk by 0.9 (eps / err)^(1/4) after a rejected
 *   step, at most 10x, and grown by 0.9 (eps / err)^(1/5), at most 5x, after an accepted
 *   one), "taking small steps when required but allowing the stepsize h to increase when
 *   small steps are unnecessary". The local error is measured against the step itself
 *   (relative tolerance JT_RK_EPS of the largest DOF change), so the control is the same on
 *   a figure of any scale; the step size carries over from one iteration to the next, the
 *   first is the linearised optimum above.
 *
 * Either way mn_ik_iterate then caps the step by o->max_step, clamps to the limits (Welman
 * 4.1.6) and halves it until the error drops. Steepest descent converges linearly: give
 * this method a generous o->max_iters. Like Welman's Fig. 4.2 says, a straight chain pulled
 * inwards gets no force along the chain; the escape of mn_ik_drive handles it. */
#include <math.h>
#include <string.h>

#include "ik/ik_common.h"
#include "ik/ik_methods.h"

static int jt_step(void* ctx, const mn_ikc* c, const double* qc, double* J, const double* e,
                   int rows, double* dq) {
    (void)ctx;
    (void)qc;
    double h = mn_ik_descent_direction(c, J, e, rows, dq);
    if (!(h > 0)) return -1;
    for (int j = 0; j < c->ch.ndof; j++)
        dq[j] *= h;
    return 0;
}

/* ---- the adaptive Runge-Kutta integration (Welman 4.1.5, [PFTV90]) --------------------- */

#define JT_RK_EPS 1e-2 /* local error relative to the step */
#define JT_RK_TRIES 12 /* rejected steps before the iteration falls back */
#define JT_RK_SAFETY 0.9

/* Cash-Karp 5(4) tableau (Cash and Karp 1990; Numerical Recipes 2nd ed., sec. 16.2). */
static const double ck_a[6][5] = {
    {0},
    {1.0 / 5},
    {3.0 / 40, 9.0 / 40},
    {3.0 / 10, -9.0 / 10, 6.0 / 5},
    {-11.0 / 54, 5.0 / 2, -70.0 / 27, 35.0 / 27},
    {1631.0 / 55296, 175.0 / 512, 575.0 / 13824, 44275.0 / 110592, 253.0 / 4096}};
static const double ck_c[6] = {37.0 / 378, 0, 250.0 / 621, 125.0 / 594, 0, 512.0 / 1771};
/* fifth minus fourth order weights: the error estimate */
static const double ck_dc[6] = {37.0 / 378 - 2825.0 / 27648,
                                0,
                                250.0 / 621 - 18575.0 / 48384,
                                125.0 / 594 - 13525.0 / 55296,
                                -277.0 / 14336,
                                512.0 / 1771 - 1.0 / 4};

typedef struct jt_rk_ctx {
    const mn_ik_goal* g;
    int limits;
    double max_step; /* o->max_step: the step is capped by shortening h, so that it stays a
                        step along the flow (mn_ik_iterate's cap would cut the chord) */
    double h;        /* the step size carried to the next iteration; 0 before the first */
    double* k;       /* 6 x ndof: the stages */
    double *v, *qs, *Js;
} jt_rk_ctx;

/* k = K J(q)^T F(q) at chain state q (the ODE's right-hand side). */
static void rk_rhs(jt_rk_ctx* x, const mn_ikc* c, const double* q, double* k) {
    mn_xform tip;
    mn_vec3 p;
    double e[6];
    mn_ikc_fk(c, q, x->g->point, &tip, &p);
    mn_ik_goal_error(x->g, &tip, p, e, NULL, NULL);
    mn_ikc_jacobian(c, x->g, p, x->Js);
    mn_ik_descent_direction(c, x->Js, e, x->g->rows, k);
}

/* One Cash-Karp step of size h from qc, k[0] given: dq = h sum c_i k_i; returns the error
 * estimate relative to the step, max |h sum dc_i k_i| / (JT_RK_EPS max |dq|). */
static double rk_try(jt_rk_ctx* x, const mn_ikc* c, const double* qc, double h, double* dq) {
    int n = c->ch.ndof, nq = c->ch.nq;
    for (int s = 1; s < 6; s++) {
        for (int j = 0; j < n; j++) {
            double v = 0;
            for (int i = 0; i < s; i++)
                v += ck_a[s][i] * x->k[i * n + j];
            x->v[j] = v;
        }
        memcpy(x->qs, qc, sizeof(double) * (size_t)nq);
        mn_ikc_integrate(c, x->qs, x->v, h);
        if (x->limits) mn_ikc_clamp(c, x->qs);
        rk_rhs(x, c, x->qs, x->k + s * n);
    }
    double big = 0, err = 0;
    for (int j = 0; j < n; j++) {
        double v = 0, de = 0;
        for (int i = 0; i < 6; i++) {
            v += ck_c[i] * x->k[i * n + j];
            de += ck_dc[i] * x->k[i * n + j];
        }
        dq[j] = h * v;
        big = fmax(big, fabs(dq[j]));
        err = fmax(err, fabs(h * de));
    }
    if (!(big > 0)) return isfinite(err) ? 0 : INFINITY;
    double r = err / (JT_RK_EPS * big);
    return isfinite(r) ? r : INFINITY;
}

static int jt_rk_step(void* vctx, const mn_ikc* c, const double* qc, double* J, const double* e,
                      int rows, double* dq) {
    jt_rk_ctx* x = vctx;
    int n = c->ch.ndof;
    double hopt = mn_ik_descent_direction(c, J, e, rows, x->k); /* k_1 = K J^T F */
    double kmax = mn_ik_max_abs(x->k, n);
    if (!(hopt > 0) || !(kmax > 0)) return -1;
    double h = x->h > 0 ? x->h : hopt;
    if (x->max_step > 0 && h * kmax > 0.8 * x->max_step) h = 0.8 * x->max_step / kmax;
    for (int t = 0; t < JT_RK_TRIES; t++) {
        double err = rk_try(x, c, qc, h, dq);
        if (err <= 1.0) {
            /* accepted: grow for the next step, at most 5x */
            x->h = err > 1.89e-4 ? JT_RK_SAFETY * h * pow(err, -0.2) : 5.0 * h;
            return 0;
        }
        double shrink = isfinite(err) ? JT_RK_SAFETY * pow(err, -0.25) : 0.1;
        h *= shrink > 0.1 ? shrink : 0.1;
    }
    x->h = h;
    return -1;
}

static mn_status jt_rk_setup(void* vctx, const mn_ikc* c, const mn_ik_goal* g,
                             const mn_ik_options* o, mn_arena* a) {
    jt_rk_ctx* x = vctx;
    int n = c->ch.ndof;
    x->g = g;
    x->limits = o->respect_limits;
    x->max_step = o->max_step;
    x->h = 0;
    x->k = mn_arena_alloc(a, sizeof(double) * (size_t)(6 * n + n + 6 * n));
    x->qs = mn_arena_alloc(a, sizeof(double) * (size_t)c->ch.nq);
    if (!x->k || !x->qs) return MN_ERR_NOMEM;
    x->v = x->k + 6 * n;
    x->Js = x->v + n;
    return MN_OK;
}

mn_status mn_ik_jt(MN_IK_METHOD_ARGS) {
    if (o->jt_rk) {
        jt_rk_ctx x;
        return mn_ik_run_jacobian(m, d, p, o, r, jt_rk_step, jt_rk_setup, &x, "jt");
    }
    return mn_ik_run_jacobian(m, d, p, o, r, jt_step, NULL, NULL, "jt");
}
