/* marionette ik: single-goal chain solvers behind one entry point.
 *
 * A problem names a chain (base joint, tip joint), a point fixed in the tip frame (the
 * end effector), and a target position and/or orientation in the base frame. The solve
 * starts from the state in d->q, changes only the chain's DOFs, and leaves the answer in
 * d->q with the frames of the base, its ancestors and everything below the base up to date
 * (frames of other branches, which the solve cannot move, are left as they were). Joint limits and
 * per-joint stiffness are respected by every method, and so are the model's held DOFs (model.h,
 * MN_LOCK_*): no method moves them unless o->free_locked. No heap allocation inside a solve:
 * scratch comes from d->arena.
 *
 * Seeds: Welman ch. 3 (pseudoinverse, SVD, null space), 4.1 (Jacobian transpose), 4.2
 * (CCD); Parent ch. 5 notes (analytic two-link, damped least squares eq. 5.24, null-space
 * eq. 5.25-5.28, the alternative Jacobian); Aristidou & Lasenby 2011 (FABRIK); Levenberg-Marquardt
 * with restarts.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_IK_H
#define MARIONETTE_IK_H

#include <stdint.h>

#include "base.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mn_ik_method {
    MN_IK_LM = 0,   /* Levenberg-Marquardt, limits, seeded random restarts (robot default) */
    MN_IK_DLS,      /* damped least squares, adaptive damping (Parent eq. 5.24) */
    MN_IK_PINV,     /* SVD pseudoinverse + optional null-space limit term (Welman 3, Parent 5.28) */
    MN_IK_JT,       /* Jacobian transpose with scaling K (Welman 4.1, eq. 4.10-4.11) */
    MN_IK_CCD,      /* cyclic coordinate descent (Welman 4.2, eq. 4.12-4.24) */
    MN_IK_FABRIK,   /* forward and backward reaching (Aristidou & Lasenby 2011) */
    MN_IK_ANALYTIC, /* two-bone law of cosines with a pole vector (Parent ch. 5) */
    MN_IK_ALTJAC,   /* the alternative Jacobian: the goal pulled to the effector (Parent ch. 5) */
    MN_IK_METHOD_COUNT
} mn_ik_method;

/* "lm", "dls", "pinv", "jt", "ccd", "fabrik", "analytic", "altjac". */
const char* mn_ik_method_name(mn_ik_method m);
/* -1 when not a method name. */
int mn_ik_method_parse(const char* name);

typedef struct mn_ik_problem {
    int base;            /* joint whose frame the target is given in; -1 for the world */
    int tip;             /* joint carrying the end effector; must be below base */
    mn_vec3 point;       /* end-effector point in the tip frame */
    int use_position;    /* match target_pos */
    int use_orientation; /* match target_rot (the tip frame's orientation) */
    mn_vec3 target_pos;  /* in the base frame */
    mn_quat target_rot;  /* unit, tip frame orientation in the base frame */
    double w_pos, w_rot; /* weights of the position and orientation goals (> 0) */
    mn_vec3
        pole; /* ANALYTIC: bend direction hint in the base frame; 0 = keep the current bend plane */
} mn_ik_problem;

/* Position-only problem with default weights, base -1 (the world) and tip -1 (to be set);
 * the struct is zeroed first. */
mn_ik_problem mn_ik_problem_default(void);

/* The position tolerance never exceeds this fraction of the chain's reach (the sum of its
 * link lengths and the end-effector point's offset): a tolerance in length units stays
 * meaningful on a figure of any size. */
#define MN_IK_TOL_REL 1e-3

/* Which answer LM returns (TRAC-IK's solve types, Beeson and Ames 2015). SPEED: the first
 * pose within tolerance. DISTANCE and MANIPULABILITY go on searching after it, by random
 * restarts, until max_restarts restarts or timeout_ms are spent (whichever comes first),
 * and return the best pose found within tolerance: DISTANCE the closest to the seed (the
 * sum of squared joint differences, a hinge whose range spans a whole turn or more taken
 * at its turn nearest the seed), MANIPULABILITY the largest sqrt(det(J J^T)) (Yoshikawa
 * 1985), J the goal's Jacobian. A seed that already meets the goal is returned as it is.
 * On a chain with ball or free joints DISTANCE sums the squared differences of the state
 * numbers (quaternion components for the rotations). */
typedef enum mn_ik_mode {
    MN_IK_SPEED = 0,
    MN_IK_DISTANCE,
    MN_IK_MANIPULABILITY,
    MN_IK_MODE_COUNT
} mn_ik_mode;

/* "speed", "distance", "manipulability". */
const char* mn_ik_mode_name(mn_ik_mode mode);
/* -1 when not a mode name. */
int mn_ik_mode_parse(const char* name);

typedef struct mn_ik_options {
    mn_ik_method method;
    double tol_pos;     /* success when |position error| <= tol_pos (model length units),
                         * capped at MN_IK_TOL_REL x the chain's reach */
    double tol_rot;     /* and |rotation error| <= tol_rot (radians) */
    int max_iters;      /* iteration budget of each attempt (the start and each restart) */
    double timeout_ms;  /* wall-clock budget; <= 0 for none */
    uint64_t seed;      /* random restarts (LM) are deterministic for a given seed */
    int max_restarts;   /* ways out of a stationary point: LM's restarts from random states
                           within limits, the other iterative methods' escapes; 0 for none */
    int respect_limits; /* 1: keep every DOF within its limits (default 1) */
    double max_step;    /* largest change of one DOF per iteration (rad or length); <= 0 none */
    double damping;     /* damping floor, relative to the chain's reach L: DLS lambda >= damping L,
                           LM lambda = kappa (|e|^2 / 2 + damping L^2) */
    int nullspace;      /* PINV: add the null-space term pulling joints to mid-range */
    double nullspace_gain;
    int timeout_cpu; /* 1: timeout_ms counts this thread's CPU time instead of wall time, so
                        a solve preempted on a loaded machine is not cut short (default 0) */
    int free_locked; /* 1: move the DOFs the model holds (mn_joint_def.locked: a BVH rig's
                        position channels below the root) like any other (default 0) */
    mn_ik_mode mode; /* LM: which answer (mn_ik_mode; default SPEED); other methods: SPEED */
    int jt_rk;       /* JT: 1 integrates the transpose's ODE by adaptive-stepsize Runge-Kutta
                        (Welman 4.1.5, the Cash-Karp pair) instead of the line-searched step
                        (default 0) */
} mn_ik_options;

/* Zeroed, then: LM, tol 1e-5 / 1e-5, 100 iterations, no timeout (wall clock), seed 1, 100
 * restarts, limits on, max_step 0.5, damping 1e-3, null space off with gain 0.1, held
 * DOFs held, mode SPEED, JT's line search (jt_rk 0). */
mn_ik_options mn_ik_default(void);

typedef struct mn_ik_result {
    mn_status status;  /* OK, UNREACHABLE (best pose found), NOCONVERGE, ARG, NOMEM */
    int iterations;    /* iterations done (over all restarts) */
    int restarts;      /* restarts (LM) or escapes used */
    double pos_err;    /* final |position error| */
    double rot_err;    /* final rotation error angle (rad) */
    double time_us;    /* wall time of the solve */
    char message[160]; /* why, when status is not OK */
} mn_ik_result;

/* Solves the problem from the state in d->q (the seed). Returns result->status (result
 * may be NULL). Bad input (NaN or infinite targets, tip not below base, zero quaternion,
 * tol <= 0, an empty or zero-length chain, a chain whose every DOF is held, a NaN seed)
 * returns MN_ERR_ARG with a message
 * naming the field and leaves d->q unchanged. A target that cannot be met returns
 * MN_ERR_UNREACHABLE with the closest pose found in d->q and its residual in the result;
 * MN_ERR_NOCONVERGE when the iteration or time budget ran out first. NULL options mean
 * mn_ik_default(). Guide: docs/ik.md. */
mn_status mn_ik_solve(const mn_model* m, mn_data* d, const mn_ik_problem* p, const mn_ik_options* o,
                      mn_ik_result* r);

/* Per-joint desired values and gains of the null-space term (Parent eq. 5.25-5.28, Welman
 * 3.2.1): with o->nullspace on and method PINV, the secondary goal becomes
 *     H = sum_i alpha_i (q_i - c_i)^2
 * over the chain's hinge and slide DOFs i, pursued in the null space of the Jacobian (the
 * end effector undisturbed to first order). Both arrays are indexed by the model's DOFs
 * (nv) and may be NULL:
 *   target[k]  c_k, the desired angle (radians) or length; NaN or a NULL array: the middle
 *              of the DOF's range (a DOF without limits is then not pulled);
 *   weight[k]  alpha_k >= 0; a NULL array: 1 / range^2 for a limited DOF (the mid-range
 *              bias of eq. 5.27), 1 for an unlimited one with a target.
 * Balls and free joints take no null-space term. A target that is infinite or a weight that
 * is negative or not finite is MN_ERR_ARG. ns NULL (or another method) is mn_ik_solve. */
typedef struct mn_ik_nullspace {
    const double* target;
    const double* weight;
} mn_ik_nullspace;
mn_status mn_ik_solve_nullspace(const mn_model* m, mn_data* d, const mn_ik_problem* p,
                                const mn_ik_options* o, const mn_ik_nullspace* ns, mn_ik_result* r);

/* ---- many targets in one call ------------------------------------------------------------ */

typedef struct mn_ik_batch_result {
    mn_status status;   /* OK when every target was met; ARG for bad input (nothing solved, d->q
                           unchanged); else the status of the first target not met */
    int iterations;     /* iterations over all targets */
    int solved;         /* targets met within tolerance */
    int first_unmet;    /* index of the first target not met; -1 when none */
    double max_pos_err; /* largest final position error over the targets */
    double max_rot_err; /* largest final rotation error (rad) */
    double time_us;     /* wall time of the whole batch */
    char message[160];  /* why, when status is not OK: "targets[k]: ..." */
} mn_ik_batch_result;

/* Solves p's chain for n targets in one call, each exactly as mn_ik_solve would (a loop in
 * the library, for callers whose own per-call cost would dominate: Python, WebAssembly).
 * targets holds n rows of width numbers: width 3 a position (it replaces p->target_pos),
 * width 7 a position then a quaternion w x y z (it replaces target_rot too); which goals
 * count stays p's use_position and use_orientation. Each target starts from the state d->q
 * holds at the call (the seed), or when follow is 1 from the previous target's answer (a
 * path tracked). q_out (n x nq, may be NULL) receives each answer and status_out (n, may be
 * NULL) each status; d->q is left at the last answer. Bad input (NULL targets with n > 0,
 * n < 0, width not 3 or 7, a target that is not finite or a zero quaternion where it is
 * used, anything mn_ik_solve refuses) returns MN_ERR_ARG before any solve, with d->q and the
 * outputs unchanged. No heap allocation (the seed is kept in d->arena). r may be NULL. */
mn_status mn_ik_solve_batch(const mn_model* m, mn_data* d, const mn_ik_problem* p,
                            const double* targets, int n, int width, int follow,
                            const mn_ik_options* o, double* q_out, mn_status* status_out,
                            mn_ik_batch_result* r);

#ifdef __cplusplus
}
#endif
#endif
