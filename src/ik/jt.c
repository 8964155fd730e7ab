/* Jacobian transpose (Welman 4.1, eq. 4.4 and 4.10-4.12): the goal pulls on the end
 * effector with a "force" F = e (position rows) and a torque (rotation rows), which the
 * transpose maps to joint velocities scaled per joint,
 *
 *     dq = h K J^T F,     K_i = 1 / (w_i phi_i),
 *
 * with phi_i the DOF's stiffness (Welman's per-joint responsiveness) and w_i = 1: the
 * world-scale part of K (eq. 4.11's w_i, proportional to link length) is taken over by
 * the adaptive step h, which makes the method scale-invariant as a whole. h is the step
 * that minimises the linearised error along d = K J^T F,
 *
 *     h = <e, J d> / |J d|^2
 *
 * (Buss and Kim 2005, "Selectively damped least squares", sec. 2's choice of alpha for the
 * transpose), the adaptive step size Welman 4.1.5 recommends in place of a fixed Euler
 * step; mn_ik_iterate then caps it by o->max_step, clamps to the limits (Welman 4.1.6)
 * and halves it until the error drops. Steepest descent converges linearly: give this
 * method a generous o->max_iters. Like Welman's Fig. 4.2 says, a straight chain pulled
 * inwards gets no force along the chain; the escape of mn_ik_drive handles it. */
#include <math.h>

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

mn_status mn_ik_jt(MN_IK_METHOD_ARGS) {
    return mn_ik_run_jacobian(m, d, p, o, r, jt_step, NULL, NULL, "jt");
}
