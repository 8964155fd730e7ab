/* Damped least squares (Parent eq. 5.24) with damping that adapts near singularities.
 *
 *     dq = S^-1/2 J~^T (J~ J~^T + lambda^2 I)^-1 e = S^-1/2 sum_i s_i / (s_i^2 + lambda^2) v_i
 * u_i^T e
 *
 * over the singular triple (s_i, u_i, v_i) of the stiffness-scaled Jacobian J~ = J S^-1/2
 * (each DOF's stiffness is the metric of its motion, Welman 4.1.4). Far from a singularity
 * lambda is the small floor o->damping L (L the chain's reach, so the damping scales with
 * the figure); when the smallest singular value s_min falls below eps = 0.1 L, lambda^2
 * grows to lambda_max^2 = (0.1 L)^2 as (1 - (s_min / eps)^2) lambda_max^2 (Maciejewski and
 * Klein 1988; Chiaverini 1997): the step is exact where the arm is well conditioned and
 * bounded where it is not. That extra damping is scaled by min(1, |e|^2 / eps^2) so it
 * fades as the goal is approached. The iteration (line search, limits, saddle escape for Welman
 * Fig. 4.2) is mn_ik_iterate's. */
#include <math.h>

#include "ik/ik_common.h"
#include "ik/ik_methods.h"

int mn_ik_dls_step(void* vctx, const mn_ikc* c, const double* qc, double* J, const double* e,
                   int rows, double* dq) {
    mn_ik_dls_ctx* x = vctx;
    int n = c->ch.ndof, k = rows < n ? rows : n;
    if (mn_ik_svd_scaled(c, J, rows, &x->w) != 0) return -1;
    double smin = x->w.s[k - 1];
    if (rows > n) smin = 0; /* fewer DOFs than goals: some direction is always missing */
    double l2 = x->lambda0 * x->lambda0;
    if (smin < x->eps) {
        /* The singular-region damping fades with the error, so that a goal near a
         * singular pose is still met with Gauss-Newton's fast final convergence: a small
         * error asks for a small step, which the undamped step does not blow up. */
        double f = smin / x->eps, e2 = 0;
        for (int r = 0; r < rows; r++)
            e2 += e[r] * e[r];
        double fe = e2 / (x->eps * x->eps);
        l2 += (1 - f * f) * x->lambda_max * x->lambda_max * (fe < 1 ? fe : 1);
    }
    /* t = diag(s / (s^2 + lambda^2)) U^T e */
    for (int i = 0; i < k; i++) {
        double ue = 0;
        for (int r = 0; r < rows; r++)
            ue += x->w.U[r * k + i] * e[r];
        double si = x->w.s[i];
        x->w.t[i] = si > 0 ? si / (si * si + l2) * ue : 0;
    }
    for (int j = 0; j < n; j++) {
        double v = 0;
        for (int i = 0; i < k; i++)
            v += x->w.V[j * k + i] * x->w.t[i];
        dq[j] = v * c->isqs[j];
    }
    (void)qc;
    return 0;
}

mn_status mn_ik_dls_setup(void* vctx, const mn_ikc* c, const mn_ik_goal* g, const mn_ik_options* o,
                          mn_arena* a) {
    mn_ik_dls_ctx* x = vctx;
    double L = c->reach > 0 ? c->reach : 1.0;
    x->lambda0 = o->damping * L;
    x->eps = 0.1 * L;
    x->lambda_max = 0.1 * L;
    return mn_ik_svd_alloc(a, g->rows, c->ch.ndof, &x->w);
}

mn_status mn_ik_dls(MN_IK_METHOD_ARGS) {
    mn_ik_dls_ctx x;
    return mn_ik_run_jacobian(m, d, p, o, r, mn_ik_dls_step, mn_ik_dls_setup, &x, "dls");
}
