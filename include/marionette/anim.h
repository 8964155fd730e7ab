/* marionette anim: keyframed sequences of one figure, sampled at any time, edited with
 * invertible operations, and in-betweens that keep their constraints; several figures
 * animated together, each by its own sequence, constraints between them (Welman 6.1, 7.3:
 * mn_seq_set_figures).
 *
 * Welman 6.1.2 is the specification of the sequence: a list of key poses of one figure at
 * frame times, in-betweens computed on the fly by interpolating the joint variables, and
 * copy, cut, paste, insert, delete, stretch, shrink and slide over ranges of keys. 6.3 and
 * Fig. 6.5 say what goes wrong with plain in-betweens (locked feet sink through the floor
 * between two keys whose pelvis heights differ); here every sampled frame is interpolated
 * and then the constraints active at that frame are re-satisfied with the constrain layer
 * (constrain.h), warm-started from the previous frame. 7.2.1 ("Looking ahead") adds animated
 * constraints (a target that is itself keyed over time) and balance over a sequence.
 *
 * Time is measured in frames (doubles: fractional frames are allowed); fps converts to
 * seconds. A key sits at a frame and holds a whole state q (model->nq numbers).
 *
 * Interpolation, per joint, with a sequence default for rotations and one for translations:
 *   rotations   CONSTANT  the value of the key at or before t (stepped);
 *               LINEAR    linear in the joint angles (a ball: in its Euler angles, in the
 *                         joint's rot_order, unwrapped);
 *               SLERP     quaternion spherical linear interpolation;
 *               SQUAD     Shoemake's spherical quadrangle spline through the keys;
 *               CATMULL_ROM, KB  (hinges only) a spline in the angle, as for translations.
 *               A run of hinges with zero offset between them, each the parent of
 *               the next, axes along distinct coordinate axes (the thesis's compound
 *               joints: a shoulder of three hinges, a wrist of two) is interpolated as ONE
 *               rotation under SLERP and SQUAD and mapped back to its hinge angles: of the
 *               two Euler solutions, each angle unwrapped by whole turns, the one nearest
 *               the linear in-between of the two keys' angles (so no flips: the branch
 *               continues the previous key's), then clamped to the joint limits. A run of
 *               two hinges takes the rotation's two angles about its axes.
 *   translations CONSTANT, LINEAR, CATMULL_ROM, KB (Kochanek-Bartels: tension,
 *               continuity and bias per key), applied to slides and free positions.
 *
 * Sampling (mn_seq_sample) reads a const sequence, writes a state, allocates nothing and
 * keeps no state: any number of threads may sample one sequence into their own buffers.
 * Edits and setters rebuild the sequence's precomputed tables (they allocate). */
#ifndef MARIONETTE_ANIM_H
#define MARIONETTE_ANIM_H

#include "base.h"
#include "constrain.h"
#include "math.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mn_interp {
    MN_INTERP_DEFAULT = 0, /* per joint: use the sequence's default */
    MN_INTERP_CONSTANT,
    MN_INTERP_LINEAR,
    MN_INTERP_SLERP,       /* rotations */
    MN_INTERP_SQUAD,       /* rotations */
    MN_INTERP_CATMULL_ROM, /* translations; the angle of a hinge */
    MN_INTERP_KB,          /* translations; the angle of a hinge */
    MN_INTERP_COUNT
} mn_interp;

/* "default", "constant", "linear", "slerp", "squad", "catmull-rom", "kb"; NULL when out
 * of range. parse returns -1 for an unknown name. */
const char* mn_interp_name(mn_interp i);
int mn_interp_parse(const char* name);

typedef struct mn_seq mn_seq;

typedef struct mn_seq_def {
    double fps;      /* frames per second (> 0), default 30 */
    mn_interp rot;   /* default for rotations: CONSTANT, LINEAR, SLERP, SQUAD (default SLERP) */
    mn_interp trans; /* default for translations: CONSTANT, LINEAR, CATMULL_ROM, KB
                        (default LINEAR) */
    int max_handles; /* initial room for handles and constraints (default 32 each; they grow
                        as needed, to 4096 each) */
    int max_constraints;
} mn_seq_def;
mn_seq_def mn_seq_def_default(void);

/* A sequence of one figure. The model must outlive the sequence. NULL with err set on bad
 * arguments. */
mn_seq* mn_seq_create(const mn_model* m, const mn_seq_def* def, mn_error* err);
void mn_seq_destroy(mn_seq* s);
/* A deep copy (keys, interpolation, handles, constraints, target keys). */
mn_seq* mn_seq_clone(const mn_seq* s);
const mn_model* mn_seq_model(const mn_seq* s);
double mn_seq_fps(const mn_seq* s);
mn_status mn_seq_set_fps(mn_seq* s, double fps);

/* ---- keys ------------------------------------------------------------------------------ */

/* Sets the key at `frame` (finite) to the state q (nq numbers, finite; ball and free
 * quaternions are normalised): replaces the key at exactly that frame, else inserts one.
 * Its tension, continuity and bias start at 0 (a new key) or are kept (a replaced one).
 * Returns the key's index (keys are kept in frame order), or -1 with err set. */
int mn_seq_set_key(mn_seq* s, double frame, const double* q, mn_error* err);
/* Adds n new keys at once: key i at frames[i] with the state q + i * nq and the tension,
 * continuity and bias tcb + 3 * i (tcb NULL: 0 0 0), normalised as mn_seq_set_key does. The
 * interpolation is built once, after the last (mn_seq_set_key builds it at every call, so n
 * calls cost n times the work of one build: a reader of n keys uses this). A frame that is
 * not finite, a state that is not, or a frame that already has a key (in s or earlier in the
 * batch) is refused with *bad its index (the keys before it are set). */
mn_status mn_seq_add_keys(mn_seq* s, int n, const double* frames, const double* q,
                          const double* tcb, int* bad, mn_error* err);
/* Removes key k. */
mn_status mn_seq_remove_key(mn_seq* s, int k);
int mn_seq_key_count(const mn_seq* s);
/* Index of the key at exactly `frame`, or -1. */
int mn_seq_find_key(const mn_seq* s, double frame);
double mn_seq_key_frame(const mn_seq* s, int k);
/* The key's state (nq numbers), NULL when out of range. */
const double* mn_seq_key_q(const mn_seq* s, int k);
/* Kochanek-Bartels parameters of key k (each in [-1, 1]); used by KB channels. */
mn_status mn_seq_set_key_tcb(mn_seq* s, int k, double tension, double continuity, double bias);
mn_status mn_seq_key_tcb(const mn_seq* s, int k, double tcb[3]);
/* First and last key frames (0, 0 when there are no keys). */
double mn_seq_start(const mn_seq* s);
double mn_seq_end(const mn_seq* s);

/* ---- interpolation --------------------------------------------------------------------- */

/* The sequence defaults (MN_INTERP_DEFAULT keeps the current one). MN_ERR_ARG for a mode
 * that does not apply (SLERP for translations, KB as the rotation default). */
mn_status mn_seq_set_default_interp(mn_seq* s, mn_interp rot, mn_interp trans);
void mn_seq_default_interp(const mn_seq* s, mn_interp* rot, mn_interp* trans);
/* A joint's own modes (MN_INTERP_DEFAULT: follow the sequence). rot applies to hinges,
 * balls and a free joint's rotation; trans to slides and a free joint's position. CATMULL_ROM
 * and KB as rot only on a hinge. A run of hinges takes the mode of its first joint. */
mn_status mn_seq_set_joint_interp(mn_seq* s, int joint, mn_interp rot, mn_interp trans);
void mn_seq_joint_interp(const mn_seq* s, int joint, mn_interp* rot, mn_interp* trans);

/* Hinge runs interpolated as one rotation: the number of runs, and run r's first joint and
 * length (2 or 3). For inspection and tests. */
int mn_seq_run_count(const mn_seq* s);
mn_status mn_seq_run(const mn_seq* s, int r, int* first_joint, int* length);

/* ---- sampling -------------------------------------------------------------------------- */

/* The in-between at `frame` (clamped to the first and last keys) into q (nq numbers).
 * Reentrant, allocation-free. MN_ERR_ARG when there are no keys or frame is not finite. */
mn_status mn_seq_sample(const mn_seq* s, double frame, double* q);
/* The same into d->q, then forward kinematics (d's frames are current). */
mn_status mn_seq_sample_data(const mn_seq* s, mn_data* d, double frame);

/* ---- keys from a motion -------------------------------------------------------------- */

/* Keys from a sampled motion (a BVH take): frames 0..nframes-1 of q (nframes x nq, row per
 * frame) become keys at frames first_frame + i. With tol <= 0 every frame is a key. With
 * tol > 0 the keys are reduced: starting from the first and last frames, a key is added at
 * the frame whose in-between (with the sequence's interpolation) is farthest from the
 * motion, until every joint origin of every frame is within tol (length) of the motion's;
 * then every inner key is dropped again when the frames up to two keys either side of it
 * stay within tol without it. *nkeys receives the keys added and *max_error the largest
 * joint position error left (each may be NULL). Keys already in the sequence within the
 * range are replaced. */
mn_status mn_seq_add_motion(mn_seq* s, const double* q, int nframes, double first_frame, double tol,
                            int* nkeys, double* max_error, mn_error* err);

/* ---- edit operations (Welman 6.1.2) ---------------------------------------------------- */
/* Ranges are half-open: [f0, f1) holds the keys with f0 <= frame < f1; its span is f1 - f0.
 * Each edit fills an mn_seq_edit (may be NULL) with exactly what undoing it needs: the keys
 * it removed or changed, as they were, and the keys it added. mn_seq_undo applies the
 * inverse and restores the sequence bit for bit; undoing the inverse (mn_seq_edit_invert)
 * redoes it. */

/* A set of keys: frames, states and Kochanek-Bartels parameters, owned. */
typedef struct mn_keyset {
    int n; /* keys */
    int nq;
    double span;   /* clips: the length of the range they were taken from */
    double* frame; /* n; clips: relative to the start of the range */
    double* q;     /* n x nq */
    double* tcb;   /* n x 3 */
} mn_keyset;
void mn_keyset_free(mn_keyset* k);

typedef struct mn_seq_edit {
    mn_keyset removed; /* keys as they were before the edit (absolute frames) */
    mn_keyset added;   /* keys the edit put in (absolute frames) */
} mn_seq_edit;
void mn_seq_edit_free(mn_seq_edit* e);
/* Swaps removed and added: the edit that undoes e. */
void mn_seq_edit_invert(mn_seq_edit* e);
/* Applies the inverse of e: removes the keys it added, puts back the keys it removed.
 * MN_ERR_ARG (and nothing changes) when the sequence is not in the state e left it in. */
mn_status mn_seq_undo(mn_seq* s, const mn_seq_edit* e);

/* Copies the keys of [f0, f1) into clip (frames relative to f0, span f1 - f0). */
mn_status mn_seq_copy(const mn_seq* s, double f0, double f1, mn_keyset* clip);
/* Copies them into clip and removes them, leaving a gap (keys after f1 stay put). */
mn_status mn_seq_cut(mn_seq* s, double f0, double f1, mn_keyset* clip, mn_seq_edit* e);
/* Places clip's keys at `at` + their relative frames, replacing the keys in
 * [at, at + span). */
mn_status mn_seq_paste(mn_seq* s, const mn_keyset* clip, double at, mn_seq_edit* e);
/* Opens a gap of clip->span at `at` (keys at or after `at` move later by span) and places
 * clip's keys in it. */
mn_status mn_seq_insert(mn_seq* s, const mn_keyset* clip, double at, mn_seq_edit* e);
/* Removes the keys of [f0, f1) and closes the gap (later keys move earlier by f1 - f0). */
mn_status mn_seq_delete(mn_seq* s, double f0, double f1, mn_seq_edit* e);
/* Stretches (factor > 1) or shrinks (0 < factor < 1) [f0, f1) about f0: a key at f moves
 * to f0 + factor (f - f0); later keys move by (factor - 1)(f1 - f0). */
mn_status mn_seq_stretch(mn_seq* s, double f0, double f1, double factor, mn_seq_edit* e);
/* Slides the keys of [f0, f1) by delta frames; keys outside the range that lie in
 * [f0 + delta, f1 + delta) are replaced. */
mn_status mn_seq_slide(mn_seq* s, double f0, double f1, double delta, mn_seq_edit* e);

/* ---- constraints over frame ranges (Welman 6.3, 7.2.1) ----------------------------------- */

/* Handles of the sequence's figure (figure index 0; mn_handle_def as in constrain.h).
 * Returns the index, or -1 with err set (checked as the constrain layer checks them). */
int mn_seq_add_handle(mn_seq* s, const mn_handle_def* def, mn_error* err);
int mn_seq_handle_count(const mn_seq* s);
const mn_handle_def* mn_seq_handle(const mn_seq* s, int h);
/* Index of the handle of that name, or -1. */
int mn_seq_find_handle(const mn_seq* s, const char* name);

typedef struct mn_seq_constraint_def {
    mn_constraint_def con;   /* the constraint (handles are the sequence's) */
    double start, end;       /* active for start <= frame <= end */
    int lock;                /* PIN and ORIENT: the target is where the handle is at `start`
                                in the constrained in-betweens of the constraints already
                                holding then (the plain in-between when none does): a foot
                                locked where it stands, the ball of a foot put down while its
                                heel is locked */
    mn_interp target_interp; /* target keys: LINEAR (default) or CATMULL_ROM (SQUAD for
                                orientations) */
} mn_seq_constraint_def;
/* A PIN (mn_constraint_default) active over every frame, no lock, LINEAR target keys. */
mn_seq_constraint_def mn_seq_constraint_default(void);

/* Adds a constraint; returns its index, or -1 with err set. */
int mn_seq_add_constraint(mn_seq* s, const mn_seq_constraint_def* def, mn_error* err);
int mn_seq_constraint_count(const mn_seq* s);
/* Takes constraint c (and its target keys) out of the sequence for good; the constraints
 * after it move down one index. Solvers made before (mn_seq_solver_create) are stale. */
mn_status mn_seq_remove_constraint(mn_seq* s, int c);
const mn_seq_constraint_def* mn_seq_constraint(const mn_seq* s, int c);
/* Index of the constraint of that name, or -1. */
int mn_seq_find_constraint(const mn_seq* s, const char* name);

/* An animated constraint (Welman 7.2.1): a key of constraint c's target at `frame`: PIN
 * (pos: location), PLANE (pos: origin, dir: normal), LINE (pos: origin, dir: direction),
 * ORIENT (rot: unit quaternion). Between the target keys the target is interpolated
 * (constant before the first and after the last); a constraint with target keys ignores
 * its def's target and lock. Replaces a target key at the same frame. */
typedef struct mn_target_key {
    double frame;
    mn_vec3 pos;
    mn_vec3 dir;
    mn_quat rot;
} mn_target_key;
mn_status mn_seq_set_target_key(mn_seq* s, int c, const mn_target_key* key, mn_error* err);
int mn_seq_target_key_count(const mn_seq* s, int c);
const mn_target_key* mn_seq_target_key(const mn_seq* s, int c, int k);
/* Constraint c's target at `frame` from its target keys (MN_ERR_ARG when it has none). */
mn_status mn_seq_target_at(const mn_seq* s, int c, double frame, mn_target_key* out);

/* Balance over a sequence (Welman 7.2.1): adds a whole-figure centre-of-mass handle and a
 * BALANCE constraint (polygon, up, margin as in mn_constraint_def) active over
 * [start, end]; mn_seq_solve_options.balance switches it on and off. Returns the
 * constraint's index, or -1 with err set. */
int mn_seq_add_balance(mn_seq* s, const mn_vec3* polygon, int npolygon, mn_vec3 up, double margin,
                       double start, double end, mn_error* err);

/* The sequence s moved onto `to`, a re-rooting of s's figure (mn_model_reroot, either way
 * round; Welman 2.1.2, 6.3): every key mapped by mn_model_reroot_state, so each key puts
 * every joint where it did; the frames, tcb, fps, default interpolation and time warp kept, a
 * joint's own interpolation carried by the joint carrying its motion ("x~" takes x's), the
 * handles (by joint name: a segment keeps its name and frame), constraints and target keys
 * carried. Between keys the in-betweens are the re-rooted figure's (its new root's motion
 * interpolated). NULL with err set: MN_ERR_UNSUPPORTED for a sequence of several figures,
 * with layers, or with the centre of mass of a subtree; MN_ERR_NOTFOUND when `to` is not a
 * re-rooting of s's figure. */
mn_seq* mn_seq_reroot(const mn_seq* s, const mn_model* to, mn_error* err);

/* ---- several figures (Welman 6.1, 7.3) ------------------------------------------------- */

/* The most figures one sequence moves together (the constrain layer's limit). */
#define MN_SEQ_MAX_FIGURES 8

/* Makes s the sequence of n figures (1..MN_SEQ_MAX_FIGURES) animated together: s animates
 * figure 0 and holds the handles and constraints of all of them; figure f (1..n-1) is animated
 * by others[f - 1], a sequence of its own model with keys (its handles and constraints are not
 * used). Handles then name a figure 0..n-1 (mn_handle_def.figure) and constraints join handles
 * of different figures (two hands held). The other sequences are not owned: they must outlive
 * s and not be edited while a solver of s lives. Set before any handle is added (MN_ERR_ARG
 * otherwise, and for a NULL, a repeated or a keyless sequence); n = 1 makes s a sequence of
 * one figure again. */
mn_status mn_seq_set_figures(mn_seq* s, int n, const mn_seq* const* others, mn_error* err);
/* The number of figures (1 for a sequence of one) and the sequence animating figure f (s
 * itself for 0; NULL when out of range). */
int mn_seq_figure_count(const mn_seq* s);
const mn_seq* mn_seq_figure(const mn_seq* s, int f);
/* The first and last frames over every figure: for one figure its first and last key frames;
 * for several, the output frames (the clock the figures share) from the earliest first to the
 * latest last, each figure's through its time warp (layers.h: the warp's output frames, its
 * key frames without one). */
double mn_seq_figures_start(const mn_seq* s);
double mn_seq_figures_end(const mn_seq* s);

/* ---- constrained in-betweens ----------------------------------------------------------- */

typedef struct mn_seq_solver mn_seq_solver;

typedef struct mn_seq_solve_options {
    mn_csolve_options solve; /* the constrain layer's options (LAGRANGE by default) */
    int warm_start;          /* 1 (default): a frame within one frame of the last one solved
                                starts from that frame's solution carried forward by the change
                                of the plain in-between (the previous corrections kept, so
                                nothing pops); 0: every frame starts from its plain in-between */
    double relax;            /* fraction of the carried correction dropped per frame (0..1,
                                default 0.2): the solution relaxes back toward the plain
                                in-betweens where the constraints allow it, so a key that
                                meets its constraints is reached as keyed */
    int balance;             /* 1 (default): balance constraints take part; 0: they are off */
    int constraints;         /* 1 (default); 0: plain in-betweens (for comparison) */
} mn_seq_solve_options;
mn_seq_solve_options mn_seq_solve_options_default(void);

/* A solver of constrained in-betweens of s on the figure data d (of s's model): builds a
 * constraint system with the sequence's handles and constraints and every buffer it needs.
 * Locks are resolved here, by playing the frames up to the last lock's start once (the
 * sequence must have keys; d is used as the workspace). The sequence must not be edited
 * while the solver lives; s and d must outlive it. NULL with err set on failure. */
mn_seq_solver* mn_seq_solver_create(const mn_seq* s, mn_data* d, mn_error* err);
/* The solver of a sequence of n figures (mn_seq_set_figures): d[f] is a data of figure f's
 * model. Every frame interpolates each figure's keys (blended with its layers), then solves
 * the constraints of all the figures in one system (Welman 6.1, 7.3: the figures move
 * together, a hand of one held by the other's). With several figures the frames asked are
 * the output frames they share: figure f is sampled at mn_seq_warp(its sequence, frame)
 * (layers.h), and the constraints' frames, locks and target keys are output frames.
 * mn_seq_solver_create is this with n = 1 (and refuses a sequence of more). */
mn_seq_solver* mn_seq_solver_create_figures(const mn_seq* s, mn_data* const* d, int n,
                                            mn_error* err);
void mn_seq_solver_destroy(mn_seq_solver* v);
/* The underlying constraint system (for residuals and inspection). */
mn_csys* mn_seq_solver_csys(mn_seq_solver* v);
/* Forgets the last solved frame: the next frame starts cold. */
void mn_seq_solver_reset(mn_seq_solver* v);

/* Frame `frame` into d (every figure's data, for a solver of several figures): the plain
 * in-between, then (when constraints are on and any is active) the active constraints
 * re-satisfied, targets at their animated values. d->q and its frames are updated. Allocation-free.
 * The plain in-between is the blend of the keys and the sequence's layers (layers.h). The frame
 * solved last, asked again with the same options, gives the same state and result without another
 * solve (a retimed bake holding a frame). r (may be NULL) receives the constrain layer's result
 * (status OK and zero iterations when no constraint is active). */
mn_status mn_seq_solve_frame(mn_seq_solver* v, double frame, const mn_seq_solve_options* o,
                             mn_csolve_result* r);

#ifdef __cplusplus
}
#endif
#endif
