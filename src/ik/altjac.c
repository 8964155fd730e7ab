/* The alternative Jacobian (Parent, Computer Animation, ch. 5, "Alternative Jacobian"):
 * "instead of trying to push the end effector toward the goal position, a formulation has
 * been proposed that pulls the goal to the end effector". The goal G is taken as riding on
 * the tip: its Jacobian columns are those of the end effector's with G in place of the
 * end-effector point E (Parent eq. 1.57's cross products),
 *
 *     hinge:  (a_i x (G - p_i), a_i)      slide:  (a_i, 0)      ball: each axis likewise,
 *
 * the velocity of G carried rigidly by the tip frame. The step solves J_G dq = e, e the
 * weighted error (G - E and the rotation rows, as every method of this folder), by the
 * damped least squares of dls.c (Parent eq. 5.24, damping raised near a singularity of J_G).
 * The two Jacobians agree when E = G, so the final convergence is the DLS method's; far
 * from the goal the columns measure each joint's lever arm to where the effector is to go
 * rather than to where it is. The rotation rows are the same in both (a rotation does not
 * depend on the point). The iteration (line search, limits, the saddle escape) is
 * mn_ik_iterate's. */
#include "ik/ik_common.h"
#include "ik/ik_methods.h"

typedef struct altjac_ctx {
    mn_ik_dls_ctx dls;
    const mn_ik_goal* g;
} altjac_ctx;

void mn_ik_altjac_jacobian(const mn_ikc* c, const mn_ik_goal* g, double* J) {
    /* mn_ikc_jacobian's columns are the velocity of the point it is given, carried by the
     * chain: given the goal, J_G */
    mn_ikc_jacobian(c, g, g->pos, J);
}

static int altjac_step(void* vctx, const mn_ikc* c, const double* qc, double* J, const double* e,
                       int rows, double* dq) {
    altjac_ctx* x = vctx;
    if (x->g->use_pos) mn_ik_altjac_jacobian(c, x->g, J); /* orientation alone: J_G = J */
    return mn_ik_dls_step(&x->dls, c, qc, J, e, rows, dq);
}

static mn_status altjac_setup(void* vctx, const mn_ikc* c, const mn_ik_goal* g,
                              const mn_ik_options* o, mn_arena* a) {
    altjac_ctx* x = vctx;
    x->g = g;
    return mn_ik_dls_setup(&x->dls, c, g, o, a);
}

mn_status mn_ik_altjac(MN_IK_METHOD_ARGS) {
    altjac_ctx x;
    return mn_ik_run_jacobian(m, d, p, o, r, altjac_step, altjac_setup, &x, "altjac");
}
