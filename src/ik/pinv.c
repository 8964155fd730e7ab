/* Pseudoinverse by SVD with the optional null-space term (Welman ch. 3, eq. 3.7-3.8;
 * Parent eq. 5.20-5.28):
 *
 *     dq = J^+ e + (I - J^+ J) z,     z = -gain grad H,   H = sum_i ((q_i - c_i) / r_i)^2
 *
 * J^+ comes from the SVD of the stiffness-scaled Jacobian J~ = J S^-1/2 with singular
 * values below 1e-6 s_max dropped (Welman 5.2.4: truncation throws away the
 * ill-conditioned directions); the step is taken in the scaled coordinates and mapped back,
 * so a stiff joint moves less (Welman 4.1.4). The null-space term (on with o->nullspace)
 * pulls each limited 1-DOF joint towards the middle c_i of its range r_i (Parent eq. 5.27,
 * alpha_i = 1 / r_i^2), or towards the desired values c_i with the gains alpha_i given per
 * DOF (mn_ik_solve_nullspace, Welman 3.2.1's secondary goals) without disturbing the end effector
 * to first order (eq. 5.26): (I - V_r V_r^T) projects onto the null space of J~. Parent's eq. 5.28
 * writes the same term as (J^+ J - I) z with z = +grad H. The gain fades as the goal is approached
 * (see pinv_step). The iteration (line search, limits) is mn_ik_iterate's. */
#include <math.h>

#include "ik/ik_common.h"
#include "ik/ik_methods.h"

#define PINV_RCOND 1e-6

typedef struct pinv_ctx {
    mn_ik_svd w;
    double* z;
    int nullspace;
    double gain;
    const mn_ik_nullspace* ns; /* per-DOF desired values and weights, or NULL */
} pinv_ctx;

static int pinv_step(void* vctx, const mn_ikc* c, const double* qc, double* J, const double* e,
                     int rows, double* dq) {
    pinv_ctx* x = vctx;
    int n = c->ch.ndof, k = rows < n ? rows : n;
    if (mn_ik_svd_scaled(c, J, rows, &x->w) != 0) return -1;
    double cut = PINV_RCOND * x->w.s[0];
    int rank = 0;
    while (rank < k && x->w.s[rank] > 0 && x->w.s[rank] >= cut)
        rank++;
    for (int i = 0; i < rank; i++) {
        double ue = 0;
        for (int r = 0; r < rows; r++)
            ue += x->w.U[r * k + i] * e[r];
        x->w.t[i] = ue / x->w.s[i];
    }
    for (int j = 0; j < n; j++) {
        double v = 0;
        for (int i = 0; i < rank; i++)
            v += x->w.V[j * k + i] * x->w.t[i];
        dq[j] = v; /* scaled coordinates for now */
    }
    if (x->nullspace && x->gain > 0) {
        /* z~ = S^-1/2 (-gain grad H), projected by I - V_r V_r^T. The null-space motion
         * leaves the goal alone only to first order; its second-order drift would hold the
         * error at about |dq_null|^2, so the gain fades with the error once that is below
         * 1% of the reach, and the last iterations converge like the plain pseudoinverse. */
        const mn_model* m = c->m;
        double en = 0;
        for (int r = 0; r < rows; r++)
            en += e[r] * e[r];
        en = sqrt(en) / (0.01 * (c->reach > 0 ? c->reach : 1.0));
        double gain = x->gain * (en < 1 ? en : 1);
        for (int j = 0; j < n; j++)
            x->z[j] = 0;
        const double* tg = x->ns ? x->ns->target : NULL;
        const double* wt = x->ns ? x->ns->weight : NULL;
        for (int i = 0; i < c->ch.njoint; i++) {
            int type = m->jnt_type[c->ch.jnt[i]], kd = c->ch.doff[i], dof = c->ch.dof[kd];
            if (type != MN_JOINT_HINGE && type != MN_JOINT_SLIDE) continue;
            double lo = c->ch.lo[kd], hi = c->ch.hi[kd];
            int limited = isfinite(lo) && isfinite(hi) && hi > lo;
            /* eq. 5.27: H = sum alpha_i (q_i - c_i)^2, grad_i = 2 alpha_i (q_i - c_i) */
            int has_target = tg && !isnan(tg[dof]);
            if (!has_target && !limited) continue;
            double ci = has_target ? tg[dof] : 0.5 * (lo + hi);
            double alpha = wt ? wt[dof] : limited ? 1.0 / ((hi - lo) * (hi - lo)) : 1.0;
            x->z[kd] = -gain * 2.0 * alpha * (qc[c->ch.qoff[i]] - ci) * c->isqs[kd];
        }
        for (int i = 0; i < rank; i++) {
            double vz = 0;
            for (int j = 0; j < n; j++)
                vz += x->w.V[j * k + i] * x->z[j];
            x->w.t[i] = vz;
        }
        for (int j = 0; j < n; j++) {
            double p = 0;
            for (int i = 0; i < rank; i++)
                p += x->w.V[j * k + i] * x->w.t[i];
            dq[j] += x->z[j] - p;
        }
    }
    for (int j = 0; j < n; j++)
        dq[j] *= c->isqs[j];
    return 0;
}

static mn_status pinv_setup(void* vctx, const mn_ikc* c, const mn_ik_goal* g,
                            const mn_ik_options* o, mn_arena* a) {
    pinv_ctx* x = vctx;
    x->nullspace = o->nullspace;
    x->gain = o->nullspace_gain;
    x->z = mn_arena_alloc(a, sizeof(double) * (size_t)c->ch.ndof);
    if (!x->z) return MN_ERR_NOMEM;
    return mn_ik_svd_alloc(a, g->rows, c->ch.ndof, &x->w);
}

mn_status mn_ik_pinv(MN_IK_METHOD_ARGS) {
    return mn_ik_pinv_nullspace(m, d, p, o, r, NULL);
}

mn_status mn_ik_pinv_nullspace(MN_IK_METHOD_ARGS, const mn_ik_nullspace* ns) {
    pinv_ctx x;
    x.ns = ns;
    return mn_ik_run_jacobian(m, d, p, o, r, pinv_step, pinv_setup, &x, "pinv");
}
