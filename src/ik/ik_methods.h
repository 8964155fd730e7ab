/* The chain IK methods behind mn_ik_solve (src/ik/solve.c), one file each.
 *
 * Contract: mn_ik_solve has already checked the problem and options (finite targets, a
 * unit target quaternion, tip below base, a non-empty chain, tolerances > 0), computed
 * d's frames for the seed state in d->q, and will time the call and fill time_us. A method
 * changes only the chain's DOFs, keeps them within limits when o->respect_limits, takes
 * scratch only from d->arena (restoring its mark before returning), and leaves d->q with
 * the best state found and d's frames up to date for it. It fills r->status (OK when both
 * active goals are within tolerance, UNREACHABLE when it stopped short because the target
 * cannot be met, NOCONVERGE when the budget ran out), r->iterations, r->restarts, r->pos_err,
 * r->rot_err, and r->message when not OK. */
#ifndef MN_IK_METHODS_H
#define MN_IK_METHODS_H

#include <marionette/ik.h>

#define MN_IK_METHOD_ARGS                                                                          \
    const mn_model *m, mn_data *d, const mn_ik_problem *p, const mn_ik_options *o, mn_ik_result *r

mn_status mn_ik_lm(MN_IK_METHOD_ARGS);       /* lm.c */
mn_status mn_ik_dls(MN_IK_METHOD_ARGS);      /* dls.c */
mn_status mn_ik_pinv(MN_IK_METHOD_ARGS);     /* pinv.c */
mn_status mn_ik_jt(MN_IK_METHOD_ARGS);       /* jt.c */
mn_status mn_ik_ccd(MN_IK_METHOD_ARGS);      /* ccd.c */
mn_status mn_ik_fabrik(MN_IK_METHOD_ARGS);   /* fabrik.c */
mn_status mn_ik_analytic(MN_IK_METHOD_ARGS); /* analytic.c */
mn_status mn_ik_altjac(MN_IK_METHOD_ARGS);   /* altjac.c */
/* pinv.c: with per-DOF desired values and weights of the null-space term */
mn_status mn_ik_pinv_nullspace(MN_IK_METHOD_ARGS, const mn_ik_nullspace* ns);

#endif
