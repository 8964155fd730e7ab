/* Helpers shared by the chain IK methods (the .c files of src/ik): a chain view built in the data's
 * arena, forward kinematics and the Jacobian relative to the base frame, the weighted
 * error of a goal, joint limits per DOF, a seeded random number generator, a monotonic
 * clock, and a small dense solver for the damped normal equations.
 *
 * Nothing here allocates from the heap: every array lives in the arena the caller passes,
 * so a method takes a mark, builds its chain and scratch, and resets the mark on return.
 *
 * The chain state qc holds the state numbers of the chain's joints only, root to tip
 * (a hinge or slide 1 number, a ball 4, a free joint 7); its velocity (and every
 * Jacobian column) has one entry per DOF, as model.h describes for the whole figure. */
#ifndef MN_IK_COMMON_H
#define MN_IK_COMMON_H

#include <stdint.h>

#include <marionette/ik.h>

/* ---- the chain ------------------------------------------------------------------------ */
/* The chain every IK method works on: the model's chain view (mn_chain: path, state and
 * DOF addresses, 1-DOF limits, stiffness) plus what the solvers add to it. */
typedef struct mn_ikc {
    const mn_model* m;
    mn_chain ch;        /* the path from below base to tip, root to tip */
    const double* isqs; /* ndof: 1 / sqrt(stiffness), the column scale of the Jacobian */
    const double* w;    /* njoint: Welman 4.2.1's joint weight w_i = min(1, 1 / stiffness) */
    mn_xform base_xf;   /* world frame of the base (identity for the world) */
    double reach;       /* sum of link lengths on the path plus |end-effector point| */
    int has_slide;      /* a translation DOF that is not held is on the path (a slide or a
                           free joint) */
    int unit_stiffness; /* every DOF's stiffness is 1: isqs is all ones (no column scaling) */
    mn_xform* xf;       /* njoint scratch: joint frames relative to the base, after fk */
    /* A chain of hinges with an FK program, nothing held (a robot arm): mn_ikc_fk_axes
     * gives each DOF's axis and origin (3 x ndof each, base frame) in one walk without the
     * frames, and mn_ikc_jacobian_axes the Jacobian from them. NULL otherwise. */
    double *ax, *org;
} mn_ikc;

/* Builds the chain in arena a for base..tip; the base frame is taken from d's frames
 * (which must be current). The model's held DOFs stay held (c->ch.locked) unless
 * free_locked. MN_ERR_ARG when tip is not below base, MN_ERR_NOMEM when the arena is too
 * small. The point is used only for the reach. */
mn_status mn_ikc_build(const mn_model* m, const mn_data* d, int base, int tip, mn_vec3 point,
                       int free_locked, mn_arena* a, mn_ikc* c);

/* Forward kinematics of the chain relative to the base frame (Parent ch. 5, depth-first
 * composition along one path, mn_chain_frames): fills c->xf, the tip frame *tip and the
 * base-frame position *p of the end-effector point (tip and p may be NULL). */
void mn_ikc_fk(const mn_ikc* c, const double* qc, mn_vec3 point, mn_xform* tip, mn_vec3* p);

/* The fused forward kinematics of a chain with c->ax (mn_chain_fk_axes): the tip frame, the
 * effector position, and every DOF's axis and origin in c->ax, c->org; c->xf is not
 * written. */
void mn_ikc_fk_axes(const mn_ikc* c, const double* qc, mn_vec3 point, mn_xform* tip, mn_vec3* p);

/* ---- a goal in the base frame ---------------------------------------------------------- */
typedef struct mn_ik_goal {
    int use_pos, use_rot;
    int rows;      /* 3 or 6: active error rows, position first */
    mn_vec3 point; /* end effector in the tip frame */
    mn_vec3 pos;   /* target position, base frame */
    mn_mat3 R;     /* target orientation, base frame */
    double wp;     /* weight of the position rows */
    double wr;     /* weight of the rotation rows: w_rot * reach (length units) */
} mn_ik_goal;

/* The goal of a checked problem for chain c. */
mn_ik_goal mn_ik_goal_make(const mn_ik_problem* p, const mn_ikc* c);

/* The first steps of every Jacobian method: the chain view in d's arena and the goal. On
 * failure the arena is as it was and r says why. */
mn_status mn_ik_begin(const mn_model* m, mn_data* d, const mn_ik_problem* p, const mn_ik_options* o,
                      mn_ik_result* r, mn_ikc* c, mn_ik_goal* g);

/* Weighted error e (goal->rows) of the pose (tip frame, effector position), position
 * rows wp (target - p), rotation rows wr log(R_target R^T) (the rotation that carries
 * the tip onto the target, base frame). pos_err and rot_err (may be NULL) get the
 * unweighted norms of the active goals (0 for an inactive one). Returns |e|^2; INFINITY
 * (and infinite errors) when the pose is not finite, so such a step is never accepted. */
double mn_ik_goal_error(const mn_ik_goal* g, const mn_xform* tip, mn_vec3 p, double* e,
                        double* pos_err, double* rot_err);

/* The weighted Jacobian of the goal's active rows (rows x ndof, row-major) at the pose
 * of the last mn_ikc_fk, p the effector position it returned: the columns of
 * mn_joint_jacobian_columns in base coordinates (Welman 4.1.3 eq. 4.7-4.8). The column of
 * a held DOF is zero, so no method's step moves it. */
void mn_ikc_jacobian(const mn_ikc* c, const mn_ik_goal* g, mn_vec3 p, double* J);

/* mn_ikc_jacobian from the axes and origins of the last mn_ikc_fk_axes (hinge columns
 * (a x (p - o), a)). */
void mn_ikc_jacobian_axes(const mn_ikc* c, const mn_ik_goal* g, mn_vec3 p, double* J);

/* Is the pose within tolerance for every active goal? */
int mn_ik_goal_met(const mn_ik_goal* g, double pos_err, double rot_err, const mn_ik_options* o);

/* ---- moving and limiting the chain ----------------------------------------------------- */
/* qc <- qc (+) scale * v (ndof) and the projection onto the limits: mn_chain_integrate and
 * mn_chain_clamp. */
static inline void mn_ikc_integrate(const mn_ikc* c, double* qc, const double* v, double scale) {
    mn_chain_integrate(c->m, &c->ch, qc, v, scale);
}
static inline void mn_ikc_clamp(const mn_ikc* c, double* qc) {
    mn_chain_clamp(c->m, &c->ch, qc);
}

/* Largest |v_i| over the chain, for step clamping. */
double mn_ik_max_abs(const double* v, int n);

/* ---- random numbers (xoshiro256**, seeded by splitmix64) -------------------------------- */
typedef struct mn_rng {
    uint64_t s[4];
} mn_rng;
void mn_rng_seed(mn_rng* r, uint64_t seed);
uint64_t mn_rng_next(mn_rng* r);
/* Uniform in [0, 1). */
double mn_rng_uniform(mn_rng* r);
/* Uniform state within limits: 1-DOF ranges (continuous hinges in [-pi, pi], unlimited
 * slides keep their value), balls a uniform rotation projected onto their limits, free
 * joints keep their position and get a uniform rotation; held DOFs keep their value. */
void mn_ikc_random(const mn_ikc* c, mn_rng* r, double* qc);

/* ---- time: the one clock of every method ---------------------------------------------- */
/* Monotonic wall clock in nanoseconds. */
int64_t mn_ik_now_ns(void);
/* The clock a budget is counted on: the wall clock, or this thread's CPU time when cpu. */
int64_t mn_ik_clock_ns(int cpu);
/* Deadline on mn_ik_clock_ns(cpu) of a budget started now: INT64_MAX when timeout_ms <= 0. */
int64_t mn_ik_deadline(double timeout_ms, int cpu);
/* Has the deadline passed? (never for INT64_MAX, without reading the clock) */
int mn_ik_timed_out(int64_t deadline, int cpu);

/* ---- small dense solve ---------------------------------------------------------------- */
/* Solves the symmetric positive definite n x n system A x = b in place by a square-root-
 * free Cholesky, L D L^T (A is overwritten, b becomes x). Returns 0, or -1 when A is not
 * positive definite. Meant for the 3x3 and 6x6 damped normal equations of the solvers. */
int mn_ik_spd_solve(double* A, int n, double* b);

/* The one failure helper of every method: fills r's message (printf-style) and returns
 * status s, storing it in r->status. */
mn_status mn_ik_fail(mn_ik_result* r, mn_status s, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- the one iteration driver ----------------------------------------------------------- */
/* Every iterative method (LM, DLS, PINV, JT, CCD, FABRIK) runs under mn_ik_drive; a method
 * supplies its iteration, how to measure, keep and restore its state, and the moves it
 * offers out of a stationary point. */

/* What one iteration did. */
enum {
    MN_IK_STUCK = 0,  /* no step lowers the error from here: a stationary point */
    MN_IK_MOVED = 1,  /* a step was taken; the driver judges by the merit whether it helped */
    MN_IK_ONGOING = 2 /* the method judges for itself that this is no stationary point: LM
                         after an accepted step, or a rejected one with the damping raised
                         (same state, try again), as long as the damping is below its bound.
                         A heavily damped step is short without the point being stationary,
                         so the merit's drop does not tell. */
};

typedef struct mn_ik_loop {
    void* ctx;
    /* One iteration from the current state: MN_IK_STUCK, MN_IK_MOVED or MN_IK_ONGOING. */
    int (*iterate)(void* ctx);
    /* The current state's merit (lower is better) and its position and rotation errors. */
    double (*measure)(void* ctx, double* pos_err, double* rot_err);
    void (*save)(void* ctx); /* the current state is the best seen */
    /* Back to the best seen, with the method's own state (LM: the damping) as at a start. */
    void (*restore)(void* ctx);
    /* The moves out of a stationary point; NULL for a move the method does not offer.
     * escape: applies the escape velocity of mn_ik_escape_velocity (within limits).
     * may_escape: may the chain escape from here? NULL: yes. (A target out of reach: no.)
     * restart: a new start from a state drawn uniformly within the limits by rng
     * (mn_ikc_random), the method's own state as at the first start. */
    void (*escape)(void* ctx);
    int (*may_escape)(void* ctx);
    void (*restart)(void* ctx, mn_rng* rng);
    /* The search of the modes other than SPEED (mn_ik_mode), NULL for a method without it:
     * found: the current state meets the goal, keep it if it is the best answer so far;
     * take_found: make the best answer kept the current state. */
    void (*found)(void* ctx);
    void (*take_found)(void* ctx);
    int found_before;     /* found already kept answers before the first iteration (LM's
                             closed form); only when the start does not meet the goal */
    double same_abs;      /* two merits closer than this (absolute) are the same residual */
    int use_pos, use_rot; /* the active goals, met within o->tol_pos and o->tol_rot */
    int cheap;            /* iterations are cheap: read the clock every 4th (CPU time: 32nd) */
} mn_ik_loop;

/* The driver. It iterates until the active goals are within tolerance, and counts the
 * budget: o->max_iters iterations per attempt (the first start, and each restart) and
 * o->timeout_ms over the whole solve, on the clock o->timeout_cpu chooses.
 *
 * An attempt ends at a stationary point: an iteration that finds no step (MN_IK_STUCK),
 * or a step (MN_IK_MOVED) that lowers the merit by less than 1e-10 of it (MN_IK_ONGOING
 * never). For a method that restarts, an attempt also ends when it stalls (the merit not
 * below MN_IK_PROGRESS of its value at the last progress for MN_IK_STALL_ITERS
 * iterations) or spends its iteration budget.
 *
 * The way out, the same for every method, which differ only in the moves they offer:
 *  1. the escape, at a stationary point (Welman Fig. 4.2: the straight chain pulled
 *     inwards, where every joint's motion is orthogonal to the error): every hinge bent and
 *     every ball turned across its twist axis by MN_IK_ESCAPE_ANGLE (mn_ik_escape_velocity),
 *     at most MN_IK_MAX_ESCAPES times, never from a residual an earlier escape left (to
 *     1e-6: the same minimum), nor when the method says the chain cannot get out
 *     (may_escape);
 *  2. otherwise a restart from a uniform random state within the limits, drawn by a
 *     generator seeded from o->seed (the same seed, the same answer), unless the lowest
 *     residual an attempt ended at (to 1e-3) has come back from max(MN_IK_SAME_MINIMA,
 *     o->max_restarts / 4) attempts: then the goal is out of reach.
 * Escapes and restarts together are at most o->max_restarts (counted in r->restarts).
 *
 * A method with found and restart and a mode other than SPEED goes on after the goal is met:
 * found keeps the answer, and a restart starts the next attempt, until o->max_restarts
 * moves or the time budget are spent; then take_found brings the best answer back and the
 * solve is OK.
 *
 * With no way out left, the solve ends as UNREACHABLE: a method without restarts at once;
 * a method with restarts (whose attempts were cut short) after the polish, which goes back
 * to the best state and iterates it, without the stall test and with a fresh iteration
 * budget, to its stationary point (for a target out of reach, the chain stretched towards
 * it). Running out of time, or of iterations with no way out, is NOCONVERGE. The driver
 * keeps the best state seen and leaves it current (or the state that met the goal); fills
 * r (iterations over all attempts, restarts, errors, status and a message starting with
 * name). */
mn_status mn_ik_drive(const mn_ik_loop* L, const mn_ik_options* o, mn_ik_result* r,
                      const char* name);

#define MN_IK_MAX_ESCAPES 4
/* The stall test of the attempts of a method that restarts, tuned on the robot benchmark
 * (bench/bench_ik.c, mean iterations of LM over panda, iiwa, UR5 and xArm6): an attempt
 * that will succeed is nearly always in its fast final regime by then; the others are
 * cheaper to replace. */
#define MN_IK_STALL_ITERS 6
#define MN_IK_PROGRESS 0.8
/* Attempts that end at the lowest residual before the goal is called out of reach: at
 * least this many, and a quarter of o->max_restarts. A robot arm's limits make local
 * minima with small basins of the true answer common, so a few repeats prove nothing. */
#define MN_IK_SAME_MINIMA 8

#define MN_IK_ESCAPE_ANGLE 0.1
/* The escape velocity v (ndof) at chain state qc: angle on every hinge (-angle for one at
 * its upper limit when limits are respected), a rotation by angle about an axis across the
 * twist axis of every ball, nothing on slides, free joints and held DOFs. */
void mn_ik_escape_velocity(const mn_ikc* c, const double* qc, double angle, int limits, double* v);

/* The steepest-descent direction dq = S^-1 J^T e (S the stiffnesses; Welman 4.1, eq. 4.10
 * with K = S^-1) and the step length h = <e, J dq> / |J dq|^2 that minimises the
 * linearised error along it (0 when there is none). */
double mn_ik_descent_direction(const mn_ikc* c, const double* J, const double* e, int rows,
                               double* dq);

/* ---- the Jacobian methods (DLS, PINV, JT) ------------------------------------------------ */
/* The SVD of the stiffness-scaled Jacobian J~ = J S^-1/2 (each DOF's stiffness the metric
 * of its motion, Welman 4.1.4) that DLS and PINV work on: k = min(rows, ndof) singular
 * values s (descending), U rows x k, V ndof x k, and k numbers of scratch t. */
typedef struct mn_ik_svd {
    double *s, *U, *V, *work, *t;
} mn_ik_svd;
/* Takes the workspace from arena a; MN_ERR_NOMEM when it is short. */
mn_status mn_ik_svd_alloc(mn_arena* a, int rows, int ndof, mn_ik_svd* w);
/* J <- J S^-1/2 and its SVD into w. Returns 0, or -1 when the SVD failed. */
int mn_ik_svd_scaled(const mn_ikc* c, double* J, int rows, mn_ik_svd* w);

/* One method's step: from the chain state qc, the weighted Jacobian J (rows x ndof, may be
 * overwritten) and error e (rows), write the joint velocity dq (ndof). Returns 0, or -1
 * when no step could be formed. */
typedef int (*mn_ik_step_fn)(void* ctx, const mn_ikc* c, const double* qc, double* J,
                             const double* e, int rows, double* dq);

/* A Jacobian method's scratch for its step, taken from arena a (MN_ERR_NOMEM when short). */
typedef mn_status (*mn_ik_setup_fn)(void* ctx, const mn_ikc* c, const mn_ik_goal* g,
                                    const mn_ik_options* o, mn_arena* a);
/* The whole of a Jacobian method behind mn_ik_solve: the chain and goal in d->arena, the
 * method's setup (may be NULL), mn_ik_iterate with its step, and the arena mark restored. */
mn_status mn_ik_run_jacobian(const mn_model* m, mn_data* d, const mn_ik_problem* p,
                             const mn_ik_options* o, mn_ik_result* r, mn_ik_step_fn step,
                             mn_ik_setup_fn setup, void* ctx, const char* name);

/* The damped least-squares step of DLS (dls.c), shared with the alternative Jacobian
 * (altjac.c), which solves with it on its own Jacobian: the SVD workspace and the damping
 * (a floor o->damping L, raised near a singularity), set up by mn_ik_dls_setup. */
typedef struct mn_ik_dls_ctx {
    mn_ik_svd w;
    double lambda0, eps, lambda_max;
} mn_ik_dls_ctx;
mn_status mn_ik_dls_setup(void* ctx, const mn_ikc* c, const mn_ik_goal* g, const mn_ik_options* o,
                          mn_arena* a);
int mn_ik_dls_step(void* ctx, const mn_ikc* c, const double* qc, double* J, const double* e,
                   int rows, double* dq);

/* The alternative Jacobian of altjac.c (Parent ch. 5): the columns of mn_ikc_jacobian for
 * the goal position g->pos carried by the tip instead of the end effector, at the pose of
 * the last mn_ikc_fk (g->rows x ndof, weighted as mn_ikc_jacobian's). */
void mn_ik_altjac_jacobian(const mn_ikc* c, const mn_ik_goal* g, double* J);

/* Runs a Jacobian method from d->q on chain c (built in d->arena by the caller, who holds
 * the arena mark) under mn_ik_drive: per iteration the step, a cap by o->max_step, the
 * projection onto the limits, and a backtracking line search that halves the step until
 * the error drops (which keeps every method monotone); when the method's step cannot
 * lower the error, steepest descent (mn_ik_descent_direction) is tried before the point
 * is taken for stationary. Writes the best state to d->q (and d's frames), fills r; name
 * (the method's) starts its messages. */
mn_status mn_ik_iterate(const mn_model* m, mn_data* d, const mn_ikc* c, const mn_ik_goal* g,
                        const mn_ik_options* o, mn_ik_result* r, mn_ik_step_fn step, void* ctx,
                        const char* name);

#endif
