/* marionette constrain: handles, constraints, the function-block network, and three
 * solvers that pin, drag and balance whole figures.
 *
 * Welman ch. 5 is the specification:
 *   - a HANDLE is a geometric quantity computed from a figure's state (5.3.2): a point
 *     fixed in a joint frame, the orientation of a joint frame, the centre of mass of
 *     the figure or of a subtree. A handle type is two functions: its value h(q) and its
 *     Jacobian dh/dq.
 *   - a CONSTRAINT is a function c(h1, ..., hn) of handles that is zero when met (5.3.3):
 *     point to a location, point to a plane, point to a line, orientation to an
 *     orientation, point equal to another point (on the same or another figure), centre
 *     of mass above a support polygon (balance, ch. 7). Each has a weight and can be
 *     switched off; targets may change every frame (that is dragging).
 *   - the NETWORK (5.3.4): handle and constraint blocks compute f(x) and df/dx, cache
 *     both, are invalidated when a DOF they depend on changes, and assemble a sparse
 *     constraint Jacobian J_c: a block only holds columns for the DOFs that move it (a
 *     constraint on the left foot has no entries for the arms).
 *   - the SOLVERS:
 *       LAGRANGE  maintained constraints (5.2, eq. 5.5-5.7): the multipliers come from
 *                 J_c K J_c^T lambda = rhs by Cholesky, or truncated SVD when the
 *                 Cholesky pivots say the system is ill-conditioned (5.2.4); constraint
 *                 violations are fed back (5.2.5). Drags are soft goals solved in the
 *                 same small system, so every constraint holds while a handle follows.
 *       CCD       the penalty method of 5.4: leaves-to-root traversal summing the k1, k2,
 *                 k3 coefficients (eq. 4.20-4.22) of every goal below a joint (eq. 5.8);
 *                 reports which goals conflict when progress stops.
 *       DLS       damped least squares over all goals stacked, with strict priorities:
 *                 each priority level moves only in the null space of the levels above
 *                 (a pinned foot beats a reaching hand).
 *
 * A system (mn_csys) is created once for one or more figures (model + data) with room for
 * a number of handles and constraints; adding handles, adding and editing constraints,
 * dragging and solving never allocate. Every solve writes per-constraint residuals and a
 * status, never writes NaN into a state, and bounds the motion of every step. No solver
 * moves (or projects) a DOF its model holds (model.h, MN_LOCK_*) unless told to free it:
 * its mobility K_i (Welman 4.1.4) is 0 for the solve.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_CONSTRAIN_H
#define MARIONETTE_CONSTRAIN_H

#include "base.h"
#include "math.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most vertices a balance constraint's support polygon may have. */
#define MN_MAX_POLYGON 16

typedef enum mn_handle_type {
    MN_HANDLE_POINT = 0, /* world position of a point fixed in a joint frame (3 values) */
    MN_HANDLE_ORIENT,    /* world orientation of a joint frame (3 DOF: rotation) */
    MN_HANDLE_COM        /* centre of mass of a subtree (joint) or the figure (joint -1) */
} mn_handle_type;

/* "point", "orientation", "com"; NULL when out of range. */
const char* mn_handle_type_name(mn_handle_type t);

typedef struct mn_handle_def {
    mn_handle_type type;
    int figure;       /* index of the figure in the system (0 for the first) */
    int joint;        /* joint index in that figure's model; COM: -1 for the whole figure */
    mn_vec3 point;    /* POINT: the point in the joint frame */
    const char* name; /* optional, copied (up to 63 characters); used in messages */
} mn_handle_def;

/* A POINT handle on figure 0, joint 0, at the joint origin, no name. */
mn_handle_def mn_handle_default(void);

typedef enum mn_constraint_type {
    MN_CON_PIN = 0, /* point handle at a fixed location: c = h - target (3 rows) */
    MN_CON_PLANE,   /* point handle in a plane: c = n . (h - origin) (1 row) */
    MN_CON_LINE,    /* point handle on a line: c = components of h - origin across dir (2 rows) */
    MN_CON_ORIENT,  /* orientation handle at an orientation: c = log(R R_t^T) (3 rows) */
    MN_CON_EQUAL,   /* two point handles coincide: c = h - h2 (3 rows) */
    MN_CON_BALANCE, /* COM (or point) handle above a convex support polygon: inequality,
                       c = signed distance outside the polygon shrunk by margin (0 or 1 row) */
    MN_CON_TYPE_COUNT
} mn_constraint_type;

/* "pin", "plane", "line", "orient", "equal", "balance"; NULL when out of range. */
const char* mn_constraint_type_name(mn_constraint_type t);
/* -1 when not a type name. */
int mn_constraint_type_parse(const char* name);

typedef struct mn_constraint_def {
    mn_constraint_type type;
    int handle;         /* the handle constrained */
    int handle2;        /* EQUAL: the other handle */
    mn_vec3 target;     /* PIN: location (world) */
    mn_quat target_rot; /* ORIENT: unit quaternion of the frame in the world */
    mn_vec3 origin;     /* PLANE/LINE: a point on it */
    mn_vec3 dir;        /* PLANE: normal; LINE: direction (any non-zero length) */
    int npolygon;       /* BALANCE: vertices of a convex support polygon (3..MN_MAX_POLYGON) */
    mn_vec3 polygon[MN_MAX_POLYGON]; /* world points; projected along up onto the ground */
    mn_vec3 up;                      /* BALANCE: vertical direction (normalised) */
    double margin;                   /* BALANCE: keep the COM this far inside the polygon (>= 0) */
    double weight;    /* > 0: relative importance when goals conflict (CCD, DLS, truncated SVD) */
    int priority;     /* DLS: 0 is the highest; lower levels move in the null space of higher */
    int enabled;      /* 0: kept but ignored */
    const char* name; /* optional, copied; used in messages and reports */
    int axis;         /* ORIENT: 0 holds the whole orientation; 1, 2, 3 hold only the direction
                         of the frame's x, y or z axis (the target's same axis; 2 rows, the turn
                         about that axis stays free: Welman 6.3, "lock Y orientation only") */
} mn_constraint_def;

/* A PIN with target 0, identity orientation, up +y, margin 0, weight 1, priority 0, enabled,
 * handle2 -1, no polygon, no name. */
mn_constraint_def mn_constraint_default(void);

/* A figure the system moves: its model and its data (the state d->q is read and written). */
typedef struct mn_figure {
    const mn_model* model;
    mn_data* data;
} mn_figure;

typedef struct mn_csys_def {
    int max_handles;     /* room for this many handles (default 32) */
    int max_constraints; /* and constraints (default 32) */
} mn_csys_def;
/* 32 handles, 32 constraints. */
mn_csys_def mn_csys_default(void);

typedef struct mn_csys mn_csys;

/* A system over nfigure figures (1..8); def NULL means mn_csys_default(). All memory is
 * allocated here, once. NULL with err set on bad arguments or when out of memory. The
 * figures must outlive the system. */
mn_csys* mn_csys_create(const mn_figure* figures, int nfigure, const mn_csys_def* def,
                        mn_error* err);
void mn_csys_destroy(mn_csys* s);

int mn_csys_figure_count(const mn_csys* s);
/* Total DOFs of all figures: the length of the global velocity vector. Figure f's DOFs
 * start at mn_csys_dof_offset(s, f). */
int mn_csys_nv(const mn_csys* s);
int mn_csys_dof_offset(const mn_csys* s, int figure);

/* Adds a handle; returns its index, or -1 with err set: unknown figure or joint, NaN
 * point, a COM handle on a massless subtree, the system full. Nothing changes on error. */
int mn_csys_add_handle(mn_csys* s, const mn_handle_def* def, mn_error* err);
int mn_csys_handle_count(const mn_csys* s);
/* Index of the handle of that name, or -1. */
int mn_csys_find_handle(const mn_csys* s, const char* name);
/* Current value of handle h: the position (POINT, COM) and the frame orientation (ORIENT;
 * identity for the others). Either output may be NULL. Evaluates through the cache. */
mn_status mn_csys_handle_value(mn_csys* s, int h, mn_vec3* pos, mn_mat3* rot);

/* Adds a constraint; returns its index, or -1 with err set (field names the def member):
 * unknown handle, a handle of the wrong type, NaN numbers, a zero-length plane normal or
 * line direction, a non-unit target quaternion, an equality of a handle with itself or
 * one that closes a cycle of equalities, a support polygon that is empty, degenerate or
 * not convex, weight <= 0, the system full. Nothing changes on error. */
int mn_csys_add_constraint(mn_csys* s, const mn_constraint_def* def, mn_error* err);
int mn_csys_constraint_count(const mn_csys* s);
int mn_csys_find_constraint(const mn_csys* s, const char* name);
/* The stored def of constraint c (read only); NULL when out of range. */
const mn_constraint_def* mn_csys_constraint(const mn_csys* s, int c);
/* Change a constraint between frames: the PIN target, the ORIENT target, on/off, weight.
 * MN_ERR_ARG for NaN, a non-unit quaternion, weight <= 0, the wrong constraint type. */
mn_status mn_csys_set_target(mn_csys* s, int c, mn_vec3 target);
mn_status mn_csys_set_target_rot(mn_csys* s, int c, mn_quat target);
/* Move a PLANE (origin, normal) or a LINE (origin, direction); MN_ERR_ARG for NaN, a zero
 * normal or direction, the wrong constraint type. */
mn_status mn_csys_set_plane(mn_csys* s, int c, mn_vec3 origin, mn_vec3 dir);
mn_status mn_csys_set_enabled(mn_csys* s, int c, int enabled);
/* Takes constraint c out of the system for good (mn_csys_set_enabled only switches it off):
 * the constraints after it move down one index, its slot is free for another, and an
 * equality removed no longer joins its handles (a new equality may close that cycle). */
mn_status mn_csys_remove_constraint(mn_csys* s, int c);
mn_status mn_csys_set_weight(mn_csys* s, int c, double weight);

/* Per-joint mobility (Welman 4.1.4, 6.2): the joint's DOFs move scale times as readily as
 * their stiffness says (K_i = scale / stiffness_i). 0 freezes the joint: no solver (Lagrange,
 * DLS, CCD-penalty) moves it; large values make loose links, small ones a stiff rod. The
 * editor's drag modes freeze every joint outside the dragged chain. scale >= 0 and finite;
 * the default is 1. figure indexes the system's figures. */
mn_status mn_csys_set_joint_scale(mn_csys* s, int figure, int joint, double scale);
/* The joint's scale (1 unless set), or -1 for a bad figure or joint. */
double mn_csys_joint_scale(const mn_csys* s, int figure, int joint);
/* Every joint of every figure back to scale 1. */
void mn_csys_reset_joint_scales(mn_csys* s);

/* Comfort, a secondary goal of drags (Welman 7, "comfort and naturalness"; 5.2.2's applied
 * forces). While a solve has drags, its first step also moves each movable DOF toward the rest
 * state, as a spring whose stiffness is the DOF's own (mn_joint_def.stiffness over its mobility
 * scale) times a comfort weight would, and pushes a limited hinge or slide out of a margin
 * inside each of its limits: the motion gain x weight x (rest - q), at most a fifth of max_step
 * a DOF (frozen joints and those held at a limit take none), with whatever of it would move a
 * constraint or a drag taken out by the multipliers (eq. 5.5 with the rows undamped: it moves
 * in their null space, so no lock and no drag gives way to it). Over the frames of a drag the
 * pose goes toward the one nearest rest in the springs' energy among those the constraints and
 * drags allow: stiff and heavily weighted joints stay nearest. Free joints (a figure's place
 * and heading) take none; Lagrange and DLS, CCD ignores it. Off unless set. */
typedef struct mn_comfort {
    double gain;         /* share of the way to rest asked per solve, 0..1 (0: no pull) */
    double limit_margin; /* share of a limited hinge's or slide's range kept free inside
                            each limit, 0..0.5 (0: none) */
    double limit_gain;   /* share of an intrusion into that margin undone per solve, 0..1 */
} mn_comfort;
/* gain 0.05, limit_margin 0.1, limit_gain 0.5. */
mn_comfort mn_comfort_default(void);
/* Sets comfort for every later solve; NULL (or gain and limit_gain 0) switches it off.
 * MN_ERR_ARG for a value out of its range or not finite. */
mn_status mn_csys_set_comfort(mn_csys* s, const mn_comfort* c);
/* Comfort's weight of a joint: its spring is w times as stiff (default 1; 0: no pull toward
 * rest, as for the limb a drag pulls). MN_ERR_ARG for a bad figure or joint, w < 0 or not
 * finite. */
mn_status mn_csys_set_comfort_weight(mn_csys* s, int figure, int joint, double w);
/* The rest state comfort pulls figure `figure` toward: q (the model's nq numbers, unit
 * quaternions; copied), or NULL for the model's rest state (the default). MN_ERR_ARG for a
 * bad figure or a state that is not finite. */
mn_status mn_csys_set_rest(mn_csys* s, int figure, const double* q);

/* Dragging: pull handle h (POINT or COM) toward a world target while every constraint
 * holds. The drag is a soft goal with the given weight (> 0) and priority (DLS); it
 * stays until released and its target may change every frame. */
mn_status mn_csys_drag(mn_csys* s, int h, mn_vec3 target, double weight, int priority);
/* Turn an ORIENT handle's frame toward a world orientation (unit quaternion) the same way. */
mn_status mn_csys_drag_rot(mn_csys* s, int h, mn_quat target, double weight, int priority);
/* An applied force on handle h instead of a target (Welman 4.1.1: g_a = J_h^T f). */
mn_status mn_csys_push(mn_csys* s, int h, mn_vec3 force);
mn_status mn_csys_release(mn_csys* s, int h);
/* Distance from the dragged handle to its target, or the angle to it for an orientation
 * (0 when h is not dragged by a target). */
double mn_csys_drag_error(mn_csys* s, int h);

/* Tell the system that the caller changed some figure's d->q: every cached block is
 * dropped and frames are recomputed on the next evaluation. */
void mn_csys_invalidate(mn_csys* s);

/* ---- the network, for inspection and tests --------------------------------------------- */

/* Evaluates every enabled constraint: C (rows, see mn_csys_row_count) and the residual of
 * each constraint (|c| in metres or radians, 0 when disabled or an inactive inequality). */
mn_status mn_csys_evaluate(mn_csys* s);
/* Rows of C and J_c after the last evaluation. */
int mn_csys_row_count(const mn_csys* s);

/* One block of the sparse constraint Jacobian: rows row..row+nrows-1 of J_c belong to
 * constraint `constraint`; their non-zero columns are cols[0..ncols-1] (global DOF
 * indices, ascending), values val[r * ncols + k]. Pointers stay valid until the next
 * evaluation. */
typedef struct mn_jac_block {
    int constraint;
    int row, nrows;
    int ncols;
    const int* cols;
    const double* val;
    const double* c; /* the block's rows of C */
} mn_jac_block;

/* Fills up to cap blocks after mn_csys_evaluate; returns the number of blocks (may exceed
 * cap: call again with more room). */
int mn_csys_jacobian(const mn_csys* s, mn_jac_block* blocks, int cap);
/* Block evaluations done so far (handle and constraint function evaluations), to observe
 * the cache: a second evaluation with no change of q computes nothing. */
long mn_csys_eval_count(const mn_csys* s);

/* ---- solving --------------------------------------------------------------------------- */

typedef enum mn_csolver {
    MN_CSOLVE_LAGRANGE = 0,
    MN_CSOLVE_CCD,
    MN_CSOLVE_DLS,
    MN_CSOLVE_COUNT
} mn_csolver;

/* "lagrange", "ccd", "dls"; parse returns -1 for an unknown name. */
const char* mn_csolver_name(mn_csolver s);
int mn_csolver_parse(const char* name);

/* Length tolerances never exceed this fraction of a figure's size: a tolerance in length
 * units stays meaningful on a figure of any size. */
#define MN_CSOLVE_TOL_REL 1e-3

typedef struct mn_csolve_options {
    mn_csolver method;
    double tol;          /* success when every position violation <= tol (length; tol
                          * and drag_tol are capped at MN_CSOLVE_TOL_REL x the size of
                          * the smallest figure, the sum of its link lengths) ... */
    double tol_rot;      /* ... and every orientation violation <= tol_rot (radians) */
    double drag_tol;     /* a drag counts as reached within this distance */
    int max_iters;       /* Newton steps (LAGRANGE, DLS) or sweeps (CCD) per solve */
    double rcond;        /* truncated SVD replaces Cholesky when (smallest / largest
                            Cholesky pivot)^2 < rcond; the SVD then drops singular
                            values below sqrt(rcond) times the largest */
    double feedback;     /* beta in J_c q' = -beta C: 1 removes the violation in one
                            linearised step; 0 only maintains (eq. 5.3) */
    double feedback_k;   /* Welman eq. 5.7's spring term -k J_c^T C (added to q'); 0 off */
    double drag_damping; /* damping (length) of drag rows; also DLS's damping of all goals
                            (capped at 10 MN_CSOLVE_TOL_REL x the smallest figure's size).
                            A drag's error is clamped to a tenth of the figures' size per step */
    double max_step;     /* largest change of one DOF in one step (rad or length) */
    int respect_limits;  /* project onto joint limits after each step */
    double min_progress; /* relative decrease of the error below which a step counts as stalled */
    int free_locked;     /* 1: move the DOFs the models hold (mn_joint_def.locked: a BVH rig's
                            position channels below the root) like any other */
} mn_csolve_options;

/* LAGRANGE, tol 1e-4, tol_rot 1e-4, drag_tol 1e-4, 20 iterations, rcond 1e-10, feedback 1,
 * feedback_k 0, drag_damping 0.01, max_step 0.25, limits on, min_progress 1e-3, held DOFs
 * held. */
mn_csolve_options mn_csolve_default(void);

typedef struct mn_csolve_result {
    mn_status status;         /* OK: every enabled constraint within tolerance; UNREACHABLE:
                                 progress stopped short (conflicting constraints, flagged by
                                 mn_csys_unmet); NOCONVERGE: budget ran out; ARG; NOMEM */
    int iterations;           /* steps or sweeps done */
    int svd_fallbacks;        /* steps that used truncated SVD instead of Cholesky */
    int rows;                 /* rows of J_c at the last step */
    double max_violation;     /* largest position residual (length) */
    double max_rot_violation; /* largest orientation residual (rad) */
    double max_drag_error;    /* largest distance (or angle) of a dragged handle from its target */
    int nunmet;               /* constraints left outside tolerance */
    char message[200];        /* why, when status is not OK (names the unmet constraints) */
} mn_csolve_result;

/* One solve (one frame of interaction): from the figures' current states, iterate until
 * every constraint holds and every drag has reached its target, or the budget runs out.
 * Constraints come first: a drag that stops making progress is dropped for the rest of
 * the solve, and the last steps only restore the constraints. A state outside the joint
 * limits is projected first when respect_limits. The figures' d->q and frames are
 * updated; a state that is not finite is refused (MN_ERR_ARG) and never produced. o NULL
 * means mn_csolve_default(); r may be NULL (the status is returned either way). */
mn_status mn_csys_solve(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r);

/* Residual of constraint c after the last evaluation or solve (0 when disabled). */
double mn_csys_residual(const mn_csys* s, int c);
/* 1 when constraint c was left outside tolerance by the last solve (a conflict). */
int mn_csys_unmet(const mn_csys* s, int c);

#ifdef __cplusplus
}
#endif
#endif
