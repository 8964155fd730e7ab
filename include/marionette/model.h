/* marionette model: spec (editable tree) -> model (compiled, immutable) -> data (state and
 * workspace), as MuJoCo's mjSpec -> mjModel -> mjData.
 *
 * A figure is a tree of joint frames (Welman 2.1.2 and 6.1.1; Parent ch. 5 "hierarchical
 * modeling"). Each joint j has a parent frame, a fixed placement (offset and rest
 * orientation) in it, and a motion of its own type:
 *
 *     T_j(q) = T_parent * Trans(offset) * Rot(orient) * Motion_j(q)
 *
 *     FIXED  no motion (0 DOF): URDF fixed joints, end sites, rigid attachments.
 *     HINGE  Rot(axis, q)          1 DOF, radians, about a unit axis of the joint frame.
 *     SLIDE  Trans(axis * q)       1 DOF, length, along a unit axis.
 *     BALL   Rot(quaternion)       3 DOF, state is a unit quaternion (4 numbers); swing
 *                                  cone about the axis and twist about it may be limited.
 *     FREE   Trans(p) Rot(quat)    6 DOF (root), state p then quaternion (7 numbers); p is
 *                                  in the parent frame: T = T_parent * Trans(offset + p) *
 *                                  Rot(orient) * Rot(quat).
 *
 * The state q has model->nq numbers; velocities and Jacobian columns have model->nv (one
 * per DOF). A BALL's 3 DOFs are an angular velocity in its own (moving) frame; a FREE's
 * first 3 DOFs a linear velocity in its parent frame and its last 3 an angular velocity
 * in its own frame. mn_integrate() adds a velocity to a state.
 *
 * The thesis models a compound joint as a series of 1-DOF joints with zero offset; that
 * is a chain of HINGEs here, and a BALL is the same thing with a quaternion state.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_MODEL_H
#define MARIONETTE_MODEL_H

#include <stdint.h>

#include "base.h"
#include "math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mn_joint_type {
    MN_JOINT_FIXED = 0,
    MN_JOINT_HINGE,
    MN_JOINT_SLIDE,
    MN_JOINT_BALL,
    MN_JOINT_FREE
} mn_joint_type;

/* "fixed", "hinge", ... */
const char* mn_joint_type_name(mn_joint_type t);
/* State numbers and DOFs of a joint type: FIXED 0/0, HINGE 1/1, SLIDE 1/1, BALL 4/3, FREE 7/6. */
int mn_joint_type_nq(mn_joint_type t);
int mn_joint_type_nv(mn_joint_type t);

/* Held DOFs (mn_joint_def.locked): the kinds of a joint's DOFs that the solvers do not
 * move. A held DOF keeps its value through every IK method and constraint solver (its
 * state still drives forward kinematics, and the caller may set it), unless the solve is
 * told to free it (mn_ik_options.free_locked, mn_csolve_options.free_locked). A SLIDE's
 * DOF and a FREE joint's first three are translations; a HINGE's, a BALL's and a FREE
 * joint's last three are rotations. The BVH reader holds the position channels of every
 * joint below a root (docs/bvh.md): they are the bone lengths of the take. */
enum {
    MN_LOCK_NONE = 0,
    MN_LOCK_TRANSLATION = 1, /* SLIDE, and a FREE joint's position */
    MN_LOCK_ROTATION = 2,    /* HINGE, BALL, and a FREE joint's rotation */
    MN_LOCK_ALL = 3
};
/* Is DOF k (0-based, < nv of the type) of a joint of type t a translation? */
static inline int mn_joint_dof_is_translation(int t, int k) {
    return t == MN_JOINT_SLIDE || (t == MN_JOINT_FREE && k < 3);
}

/* One joint of a spec; fill from mn_joint_default() and change what differs. */
typedef struct mn_joint_def {
    const char* name; /* unique, non-empty; copied by the spec */
    int parent;       /* index of the parent joint in the spec; -1 for a root */
    mn_joint_type type;
    mn_vec3 offset; /* origin of this joint's frame in the parent frame */
    mn_quat orient; /* rest orientation of the frame relative to the parent frame */
    mn_vec3 axis; /* HINGE/SLIDE axis, BALL twist axis; in the joint frame; normalised on compile */
    int limited;  /* HINGE/SLIDE: range applies; BALL: swing and twist apply */
    double range[2];  /* HINGE (rad), SLIDE (length): lower <= q <= upper */
    double swing;     /* BALL: half-angle of the swing cone about axis (rad) */
    double twist[2];  /* BALL: twist range about axis (rad) */
    double mass;      /* mass of the segment carried by this joint (>= 0) */
    mn_vec3 com;      /* centre of mass of that segment in the joint frame */
    double stiffness; /* > 0; 1 is neutral, larger moves less (Welman 4.1.4 K_i, 4.2.1 w_i) */
    double q0[7];     /* rest state (first nq numbers used); BALL/FREE quaternion w first */
    mn_euler_order rot_order; /* Euler order used when this joint is written as BVH channels */
    const char*
        object; /* name of a geometry attached to the joint (thesis "object"); may be NULL */
    int locked; /* MN_LOCK_* flags: the kinds of this joint's DOFs the solvers hold */
} mn_joint_def;

/* A def with: no name, parent -1, FIXED, zero offset, identity orient, axis +z, unlimited,
 * mass 0, stiffness 1, zero rest state (identity quaternion), Euler order ZXY, nothing held. */
mn_joint_def mn_joint_default(void);

/* ---- spec: an editable tree ------------------------------------------------------------ */
typedef struct mn_spec mn_spec;

mn_spec* mn_spec_create(const char* name);
void mn_spec_destroy(mn_spec* s);
mn_spec* mn_spec_clone(const mn_spec* s);
const char* mn_spec_name(const mn_spec* s);
mn_status mn_spec_set_name(mn_spec* s, const char* name);
/* Appends a joint; returns its index, or -1 with err set (duplicate name, bad parent, NaN). */
int mn_spec_add_joint(mn_spec* s, const mn_joint_def* def, mn_error* err);
int mn_spec_joint_count(const mn_spec* s);
/* The joint's def, for reading or editing in place (its name pointer is owned by the spec:
 * rename with mn_spec_rename). NULL when out of range. */
mn_joint_def* mn_spec_joint(mn_spec* s, int i);
const mn_joint_def* mn_spec_joint_const(const mn_spec* s, int i);
mn_status mn_spec_rename(mn_spec* s, int i, const char* name, mn_error* err);
mn_status mn_spec_set_object(mn_spec* s, int i, const char* object);
/* Another name joint i answers to (mn_model_find_joint), NULL for none: a URDF joint's own
 * name, where the figure's joint is named by the link it moves ("wrist_3_joint" for
 * "wrist_3_link"). Copied by the spec; not checked for uniqueness (names are found first). */
mn_status mn_spec_set_alias(mn_spec* s, int i, const char* alias);
const char* mn_spec_alias(const mn_spec* s, int i);
/* Index of the joint of that name, or -1. */
int mn_spec_find(const mn_spec* s, const char* name);

/* ---- model: compiled and immutable ----------------------------------------------------- */
/* Joints are stored parent before child (forward kinematics is one loop, a Jacobian walks
 * ancestors). All arrays live in one block owned by the model. */
typedef struct mn_model {
    char* name;
    int njoint; /* joint frames */
    int nq;     /* state numbers */
    int nv;     /* degrees of freedom */
    int nroot;  /* joints with no parent */

    /* per joint (njoint) */
    const char** jnt_name;
    const char** jnt_object; /* NULL when none */
    int* jnt_parent;         /* -1 for a root; always < own index */
    int* jnt_type;           /* mn_joint_type */
    int* jnt_qadr;           /* first state number */
    int* jnt_dofadr;         /* first DOF */
    int* jnt_depth;          /* 0 for a root */
    int* jnt_nchild;
    mn_vec3* jnt_offset;
    mn_quat* jnt_orient;
    mn_mat3* jnt_orient_mat;   /* rotation matrix of jnt_orient */
    uint8_t* jnt_orient_ident; /* 1 when jnt_orient is the identity (fast path) */
    int8_t* jnt_orient_perm;   /* njoint x 3: when jnt_orient is a signed permutation (a
                                  multiple of 90 degrees about axes, common in URDF), column c
                                  of the rotation is sign * e_(|v|-1) for v = perm[3j+c];
                                  0 when it is not (fast path) */
    mn_vec3* jnt_axis;         /* unit */
    int8_t* jnt_axis_kind;     /* 0, 1, 2 when the axis is +x, +y, +z; -1 otherwise */
    uint8_t* jnt_limited;
    double* jnt_range; /* njoint x 2 */
    double* jnt_swing;
    double* jnt_twist; /* njoint x 2 */
    double* jnt_mass;
    mn_vec3* jnt_com;
    double* jnt_stiffness;
    int* jnt_rot_order;   /* mn_euler_order */
    int* jnt_subtree_end; /* joints i..jnt_subtree_end[i]-1 are i's subtree */
    uint8_t* jnt_locked;  /* MN_LOCK_* flags of the def */

    /* per DOF (nv) */
    int* dof_jnt;
    double* dof_stiffness;
    uint8_t* dof_locked; /* 1 when the solvers hold the DOF (its kind is in jnt_locked) */
    int nlocked;         /* held DOFs */

    double* q0; /* rest state (nq) */
    double total_mass;

    size_t nbytes; /* size of the block */
    void* block;
    void* jnt_ops; /* private: the joints packed for the FK loops */

    /* per joint (njoint), after the rest so the fields above keep their places: the other
     * name each joint answers to (mn_spec_set_alias: a URDF joint's own name), NULL when none */
    const char** jnt_alias;
} mn_model;

/* Compiles a spec: checks it (names, parents, cycles, finite numbers, limits in order),
 * orders joints parent before child and lays out q. NULL with err set on failure. */
mn_model* mn_model_compile(const mn_spec* s, mn_error* err);
void mn_model_destroy(mn_model* m);
/* A spec that compiles back to the same model (for editing a loaded figure). */
mn_spec* mn_model_decompile(const mn_model* m);
/* Index of the joint of that name, else of that alias (a URDF joint's name), else -1. */
int mn_model_find_joint(const mn_model* m, const char* name);
/* For a message when mn_model_find_joint missed: the joints whose name or alias is nearest to
 * name by edit distance (insertions, deletions, substitutions and swaps of neighbours, letter
 * case ignored; a name that contains the one asked for, or is contained in it, counts as one
 * edit away), when within a third of the name's length (at least 2 edits). Writes at most cap
 * joint indices, all at the nearest distance, in joint order; returns their number. */
int mn_model_similar_joints(const mn_model* m, const char* name, int* out, int cap);
/* The same as text for the end of a message: "; did you mean \"wrist_3_joint\" (link
 * wrist_3_link)?" (an alias is followed by the joint's name), or "" when nothing is near.
 * Always NUL-terminated within cap; returns buf. */
const char* mn_model_joint_hint(const mn_model* m, const char* name, char* buf, size_t cap);
/* Is a an ancestor of b (or b itself)? */
int mn_model_is_ancestor(const mn_model* m, int a, int b);

/* ---- the workspace of a chain (Parent ch. 5) --------------------------------------------- */
typedef struct mn_workspace_options {
    int samples;      /* random configurations (default 100,000) */
    uint64_t seed;    /* the same seed, the same samples (default 1) */
    double voxel;     /* voxel edge in the figure's units; 0: 1/40 of the chain's reach */
    int axis;         /* the tip frame's tool axis for dexterity: 0 x, 1 y, 2 z (default) */
    double dexterous; /* a voxel is dexterous from this dexterity on (default 1: all) */
} mn_workspace_options;
mn_workspace_options mn_workspace_default(void);

/* The reachable and dexterous workspace of the chain from base (exclusive; -1 the world)
 * to tip, for the point `point` of tip's frame, in base's frame. */
typedef struct mn_workspace {
    int nsamples;
    mn_vec3* points;         /* nsamples end-effector points */
    mn_vec3 origin;          /* corner of the voxel grid (the samples' lower bounds) */
    double voxel;            /* edge */
    int dims[3];             /* voxels a side */
    int nvoxels;             /* voxels reached */
    int* voxel_index;        /* nvoxels x 3 grid indices */
    double* voxel_dexterity; /* nvoxels: tool-axis cells hit there / hit anywhere (0..1] */
    int ndexterous;          /* voxels with dexterity >= options.dexterous */
    int directions;          /* of the 128 equal-area cells, those the tool axis hits */
    double reach;            /* the chain's reach (sum of link lengths and slide travel) */
} mn_workspace;
/* Samples the chain's joint space (uniform within the limits; unlimited hinges one turn;
 * balls uniformly random rotations) and bins the end-effector point into voxels and the
 * tool axis into 128 equal-area cells of the sphere: reachable voxels, and each voxel's
 * dexterity. Estimated from inside: more samples only add voxels. Allocates w's arrays
 * (mn_workspace_free). MN_ERR_ARG: tip not below base, samples outside 1..1e8, a negative
 * voxel, an axis outside 0..2, a voxel so small the grid exceeds 2^19 a side. */
mn_status mn_workspace_sample(const mn_model* m, int base, int tip, mn_vec3 point,
                              const mn_workspace_options* o, mn_workspace* w, mn_error* err);
void mn_workspace_free(mn_workspace* w);

/* ---- re-rooting (Welman 2.1.2, 6.3) ------------------------------------------------------ */
/* The figure re-rooted at joint: a hand or a foot as the root, every joint where it was.
 * Every joint of m keeps its name and its world frame for the corresponding state
 * (mn_model_reroot_state). The motions on the path from the old root turn the other way:
 * each is carried by a joint of its own named after the joint whose motion it was with a
 * "~" added ("left elbow~"), at the old child's origin, the segment it moves kept as a FIXED
 * joint of the same name below it (a joint turns about its own origin, and seen from the
 * child the turn happens at the parent's); a hinge or slide turns about its negated axis by
 * the same q, a ball by the conjugate quaternion, a free joint below the root (a BVH rig's
 * position channels) by the inverse of its motion. The root's motion from the world (free, or
 * fixed) becomes the new root's: a fixed root is fixed where state q (NULL: the rest state)
 * puts the new root. Re-rooting the result at the old root joins the "~" joints with their
 * segments again: the original figure (offsets to rounding). NULL with err set: no such
 * joint, a root that is neither free nor fixed, a "~" joint. */
mn_model* mn_model_reroot(const mn_model* m, int joint, const double* q, mn_error* err);
/* The state qb of figure b that puts every joint of figure a where state qa of a puts it,
 * when b is a re-rooting of a (either way round: it is its own inverse). Motions by name
 * ("x" and "x~" are one motion turned round), a free root from the world frame of its
 * joint in a. MN_ERR_NOTFOUND when a motion of b has none in a. */
mn_status mn_model_reroot_state(const mn_model* a, const double* qa, const mn_model* b, double* qb,
                                mn_error* err);

/* ---- data: state and workspace --------------------------------------------------------- */
typedef struct mn_data {
    int njoint, nq, nv;
    double* q;      /* state (nq) */
    mn_xform* xf;   /* world frame of every joint after mn_fk (njoint) */
    mn_arena arena; /* scratch for solvers: no heap allocation after creation */
    size_t nbytes;
    void* block;
} mn_data;

/* The most the default arena reserves for dense (DOF x DOF) systems: 256 MiB. */
#define MN_DATA_DENSE_MAX ((size_t)256 << 20)
/* Data for a model with arena_bytes of scratch (0 picks a size that fits every solver of
 * the library for this model, with its dense part at most MN_DATA_DENSE_MAX: the rest
 * grows linearly with the joints, so FK works on a figure of any size, and a solver that
 * would need more on a figure of more than about 1,400 DOFs returns MN_ERR_NOMEM). q is set
 * to the rest state and frames computed. NULL when out of memory. */
mn_data* mn_data_create(const mn_model* m, size_t arena_bytes);
void mn_data_destroy(mn_data* d);
/* q <- rest state. */
void mn_data_reset(const mn_model* m, mn_data* d);
/* Copies the state (and frames) of src into dst; both of the same model. */
void mn_data_copy(const mn_model* m, mn_data* dst, const mn_data* src);

/* ---- forward kinematics and Jacobians -------------------------------------------------- */

/* World frame of every joint from d->q, in one pass parent before child (Parent ch. 5,
 * "forward kinematics"). Ball and free quaternions are used as unit quaternions (they are
 * normalised in q when off by more than rounding). */
void mn_fk(const mn_model* m, mn_data* d);

/* Frames of joint `root` and everything below it only (root's parent frame must be current;
 * root -1: the whole figure). For updating the part of a figure a solver moved. */
void mn_fk_subtree(const mn_model* m, mn_data* d, int root);
/* Frames of joint and its ancestors only, root first. */
void mn_fk_path(const mn_model* m, mn_data* d, int joint);

/* X <- X * T_j(qj): composes joint j's placement and motion onto a frame, in place; qj
 * points at the joint's first state number (may be NULL for a FIXED joint). The step every
 * forward kinematics of the library is made of, for solvers that walk their own paths. */
void mn_joint_apply(const mn_model* m, int joint, const double* qj, mn_xform* X);

/* Frames (n) of a path of FIXED, HINGE and SLIDE joints jnt[0..n-1], each the parent of the
 * next, relative to the frame of jnt[0]'s parent; qc holds one number per moving joint, in
 * order. The chain fast path without a mn_chain object. */
void mn_path_fk(const mn_model* m, const int* jnt, int n, const double* qc, mn_xform* frames);

/* World position of a point fixed in joint j's frame (after mn_fk). */
mn_vec3 mn_point_world(const mn_data* d, int joint, mn_vec3 local);
/* Its inverse: the point of joint j's frame that is at world position `world` (after
 * mn_fk), R_j^T (world - o_j); a handle's local point from where the user clicked. */
mn_vec3 mn_point_local(const mn_data* d, int joint, mn_vec3 world);

/* Jacobian of a point fixed in joint frame j with respect to all DOFs (after mn_fk):
 * jac is 6 x nv row-major; rows 0-2 the point's linear velocity, rows 3-5 the frame's
 * angular velocity, both in world coordinates. Columns of DOFs that do not move j are 0.
 * (Welman 3.1; Parent ch. 5: a hinge column is a x (p - o), a; a slide column a, 0.) */
void mn_jacobian(const mn_model* m, const mn_data* d, int joint, mn_vec3 local, double* jac);

/* The DOFs that move tip relative to base: those of the joints on the path from base
 * (exclusive) down to tip (inclusive), root-to-tip order. Returns their number, or -1 when
 * tip is not base or below it. dofs may be NULL to only count. */
int mn_chain_dofs(const mn_model* m, int base, int tip, int* dofs, int cap);

/* Jacobian restricted to those DOFs: jac is 6 x ndof (ndof from mn_chain_dofs). */
void mn_jacobian_chain(const mn_model* m, const mn_data* d, int base, int tip, mn_vec3 local,
                       double* jac);

/* Centre of mass of the subtree rooted at joint (or the whole figure for -1), and its
 * total mass in *mass (may be NULL). Zero vector when the mass is zero. */
mn_vec3 mn_com(const mn_model* m, const mn_data* d, int root, double* mass);
/* Jacobian of that centre of mass: 3 x nv. */
void mn_com_jacobian(const mn_model* m, const mn_data* d, int root, double* jac);

/* q <- q (+) scale * v: adds a velocity (nv) to a state (nq); ball and free quaternions
 * are updated on the manifold (q * exp(v dt)) and re-normalised. */
void mn_integrate(const mn_model* m, double* q, const double* v, double scale);
/* v = q1 (-) q0, the velocity that carries q0 to q1 in unit time. */
void mn_q_difference(const mn_model* m, const double* q1, const double* q0, double* v);
/* Projects q onto the joint limits (hinge/slide ranges, ball swing cone and twist). */
void mn_clamp_to_limits(const mn_model* m, double* q);
/* Is q finite, with unit quaternions (to 1e-6) and within limits (to tol)? */
int mn_q_within_limits(const mn_model* m, const double* q, double tol);
/* MN_OK when every number is finite (and quaternions non-zero); MN_ERR_ARG otherwise. */
mn_status mn_q_check(const mn_model* m, const double* q);
/* The state qj (7 numbers: position, then quaternion w, x, y, z) of free joint j moved by the
 * rigid motion P: the joint's frame T becomes P T, so its subtree moves with it. */
void mn_free_joint_place(const mn_model* m, int j, const mn_xform* P, double* qj);

/* ---- per-joint primitives --------------------------------------------------------------- */
/* The joint mathematics every solver of the library is made of, each written once here
 * (as MuJoCo keeps one mj_jac behind its wrappers): IK, constraints, skinning and
 * animation call these and never redo them. qj points at a joint's first state number,
 * vj at its first DOF. */

/* qj <- qj (+) scale * vj on the joint's manifold: hinge and slide add; a ball's
 * quaternion becomes q exp(scale v) (v an angular velocity in its own frame) and is
 * re-normalised; a free joint adds to its position and turns as a ball. */
void mn_joint_integrate(mn_joint_type t, double* qj, const double* vj, double scale);

/* Swing-twist split of a rotation q about the unit axis a: q = swing * twist with twist a
 * rotation about a. *twist gets its angle in [-pi, pi), *swing its rotation vector
 * (perpendicular to a). */
void mn_swing_twist(mn_quat q, mn_vec3 a, double* twist, mn_vec3* swing);
/* Projects a ball's rotation onto its limits: twist about the unit axis a into [tw_lo,
 * tw_hi], swing angle into [0, cone]. Returns the normalised q (w >= 0) when it is within
 * them, else the projection swing' * twist'. */
mn_quat mn_ball_clamp(mn_quat q, mn_vec3 a, double cone, double tw_lo, double tw_hi);

/* A hinge or slide value clamped to the joint's range (v itself when unlimited). */
static inline double mn_joint_clamp_value(const mn_model* m, int joint, double v) {
    if (!m->jnt_limited[joint]) return v;
    const double* r = m->jnt_range + 2 * joint;
    return v < r[0] ? r[0] : v > r[1] ? r[1] : v;
}
/* Projects joint `joint`'s state qj onto its limits (hinge/slide range; ball swing cone
 * and twist; nothing for unlimited, fixed and free joints). Returns 1 when qj changed. */
int mn_joint_clamp(const mn_model* m, int joint, double* qj);
/* Is qj finite (unit quaternion to 1e-6 for ball and free) and within limits to tol? */
int mn_joint_within_limits(const mn_model* m, int joint, const double* qj, double tol);

/* The velocity one DOF gives a point P and the frame carrying it (Welman 3.1; Parent
 * ch. 5, "Jacobian by cross products"): a rotation about the unit axis a through o gives
 * (a x (P - o), a); a translation along a gives (a, 0). */
static inline void mn_dof_rotation_column(mn_vec3 a, mn_vec3 o, mn_vec3 P, mn_vec3* lin,
                                          mn_vec3* ang) {
    *lin = mn_vec3_cross(a, mn_vec3_sub(P, o));
    *ang = a;
}
static inline void mn_dof_translation_column(mn_vec3 a, mn_vec3* lin, mn_vec3* ang) {
    *lin = a;
    *ang = mn_v3(0, 0, 0);
}

/* The Jacobian columns of joint `joint` for the point P: X is the joint's frame and Rp
 * the rotation of its parent frame, both in the coordinates the columns are wanted in
 * (world for mn_jacobian, a chain's base for the chain solvers). Writes the joint's
 * nv (0, 1, 3 or 6) linear and angular parts to lin[] and ang[] and returns nv:
 *     HINGE  (a x (P - o), a)      a = R axis, o = X.p
 *     SLIDE  (a, 0)
 *     BALL   (e_c x (P - o), e_c)  e_c the columns of X.R (an angular velocity in the
 *                                  joint's own frame, model.h)
 *     FREE   (f_c, 0) for the columns f_c of Rp, then the three BALL columns.
 * Every Jacobian of the library (mn_jacobian, mn_jacobian_chain, mn_com_jacobian,
 * mn_chain_fk_jacobian, the IK methods' chain Jacobian) is made of this. */
static inline int mn_joint_jacobian_columns(const mn_model* m, int joint, const mn_xform* X,
                                            const mn_mat3* Rp, mn_vec3 P, mn_vec3* lin,
                                            mn_vec3* ang) {
    switch (m->jnt_type[joint]) {
    case MN_JOINT_HINGE:
        mn_dof_rotation_column(mn_mat3_mulv(&X->R, m->jnt_axis[joint]), X->p, P, lin, ang);
        return 1;
    case MN_JOINT_SLIDE:
        mn_dof_translation_column(mn_mat3_mulv(&X->R, m->jnt_axis[joint]), lin, ang);
        return 1;
    case MN_JOINT_BALL:
        for (int c = 0; c < 3; c++)
            mn_dof_rotation_column(mn_mat3_col(&X->R, c), X->p, P, lin + c, ang + c);
        return 3;
    case MN_JOINT_FREE:
        for (int c = 0; c < 3; c++) {
            mn_dof_translation_column(Rp ? mn_mat3_col(Rp, c) : mn_v3(c == 0, c == 1, c == 2),
                                      lin + c, ang + c);
            mn_dof_rotation_column(mn_mat3_col(&X->R, c), X->p, P, lin + 3 + c, ang + 3 + c);
        }
        return 6;
    default:
        return 0;
    }
}

/* Welman 4.2.1, eq. 4.16-4.23: the CCD step of one hinge. Turning by phi about the unit
 * world axis a through the pivot, point goals (P_ic current, P_id desired, both relative
 * to the pivot, weight w) and frame goals (current axes u_jc, desired u_jd, weight w)
 * change the objective
 *     g(phi) = sum w P_id . R(phi) P_ic + sum w u_jd . R(phi) u_jc
 *            = k1 (1 - cos phi) + k2 cos phi + k3 sin phi                       (eq. 4.19)
 * with the sums
 *     k1 = sum w (P_id . a)(P_ic . a)                                           (eq. 4.20)
 *     k2 = sum w P_id . P_ic                                                    (eq. 4.21)
 *     k3 = a . sum w (P_ic x P_id)                                              (eq. 4.22)
 * Start from a zeroed mn_ccd_hinge, add goals, then take the angle. */
typedef struct mn_ccd_hinge {
    double k1, k2, k3;
} mn_ccd_hinge;
static inline void mn_ccd_hinge_add_point(mn_ccd_hinge* k, mn_vec3 a, mn_vec3 pc, mn_vec3 pd,
                                          double w) {
    k->k1 += w * mn_vec3_dot(pd, a) * mn_vec3_dot(pc, a); /* eq. 4.20 */
    k->k2 += w * mn_vec3_dot(pd, pc);                     /* eq. 4.21 */
    k->k3 += w * mn_vec3_dot(a, mn_vec3_cross(pc, pd));   /* eq. 4.22 */
}
/* The three axis pairs of the current frame Rc and the desired frame Rd, weight w each. */
static inline void mn_ccd_hinge_add_frame(mn_ccd_hinge* k, mn_vec3 a, const mn_mat3* Rc,
                                          const mn_mat3* Rd, double w) {
    for (int c = 0; c < 3; c++)
        mn_ccd_hinge_add_point(k, a, mn_mat3_col(Rc, c), mn_mat3_col(Rd, c), w);
}
/* The maximiser of g (eq. 4.23): phi = atan2(k3, k2 - k1), in (-pi, pi]. 0 when g does not
 * depend on phi to rounding (|k3| and |k2 - k1| below 1e-12 of the size of the sums:
 * every goal on the axis, or none), so that rounding noise never turns a joint half way
 * round; 0 as well when the sums are not finite. */
static inline double mn_ccd_hinge_angle(const mn_ccd_hinge* k) {
    double c = k->k2 - k->k1, s = k->k3;
    double size = fabs(k->k1) + fabs(k->k2) + fabs(k->k3);
    /* g(phi) = k1 + c cos phi + s sin phi is flat when its amplitude is rounding noise;
     * the comparison is false for NaN sums too */
    if (!(fabs(c) + fabs(s) > 1e-12 * size) || !(size < INFINITY)) return 0.0;
    return atan2(s, c); /* eq. 4.23: the stationary point with g'' < 0 */
}
/* Wang and Chen's configuration weight 1 + rho, rho = min(|pc|, |pd|) / max(|pc|, |pd|)
 * (Welman, the paragraph before eq. 4.19); 1 when both are zero. */
static inline double mn_ccd_rho_weight(mn_vec3 pc, mn_vec3 pd) {
    double a = mn_vec3_norm(pc), b = mn_vec3_norm(pd);
    double hi = a > b ? a : b, lo = a > b ? b : a;
    return 1.0 + (hi > 0 ? lo / hi : 0.0);
}

/* ---- chains: the view of one base-to-tip path --------------------------------------- */
/* The joints on the path from below `base` down to `tip`, root to tip, with where their
 * state numbers and DOFs are: the one chain view of the library, used by the chain FK
 * fast path, the IK methods and robot-arm code. The chain state qc holds the state
 * numbers of the chain's joints only, root to tip (a hinge or slide 1 number, a ball 4, a
 * free joint 7); a chain velocity (and a chain Jacobian column) one entry per DOF. */
typedef struct mn_chain {
    int base, tip;         /* joint indices in the model; base -1 for the world */
    int njoint;            /* joints from below base to tip inclusive */
    int ndof;              /* their DOFs */
    int* jnt;              /* njoint joint indices, root-to-tip */
    int* dof;              /* ndof DOF indices into the model's nv */
    int* qadr;             /* nq state indices into the model's q (one per DOF when simple) */
    int nq;                /* state numbers of the chain */
    int simple;            /* 1 when every moving joint is a hinge or slide (nq == ndof) */
    int* qoff;             /* njoint: first chain state number of each joint */
    int* doff;             /* njoint: first chain DOF of each joint */
    int* dof_path;         /* ndof: chain index of the joint owning each DOF */
    double* lo;            /* ndof: lower limit of a limited hinge or slide; -inf otherwise */
    double* hi;            /* ndof: upper limit; +inf otherwise */
    double* stiffness;     /* ndof: > 0 (Welman 4.1.4 K_i, 4.2.1 w_i) */
    const uint8_t* locked; /* ndof: 1 for a DOF the solvers hold (model dof_locked); NULL when
                              none is held on the chain, or after mn_chain_free_locked */
    int nlocked;           /* held DOFs on the chain */
    void* block;           /* mn_chain_create's allocation; NULL for mn_chain_init */
    const void* fk_prog;   /* private: the chain's forward-kinematics program (simple chains) */
} mn_chain;

/* Counts the joints, DOFs and state numbers on the path from below base to tip (each may
 * be NULL). Returns 0, or -1 when tip is not base or below it (base -1: any tip). */
int mn_chain_count(const mn_model* m, int base, int tip, int* njoint, int* ndof, int* nq);
/* Bytes of arena mn_chain_init takes for such a path (allocation padding included). */
size_t mn_chain_bytes(int njoint, int ndof, int nq);
/* Builds the view of a path of any joint types with its arrays in arena a (no heap).
 * MN_ERR_ARG when tip is not base or below it, MN_ERR_NOMEM when the arena is short.
 * The model's held DOFs are marked in c->locked and get no limits in lo/hi (they are not
 * the solvers' to move, nor to project). */
mn_status mn_chain_init(const mn_model* m, int base, int tip, mn_arena* a, mn_chain* c);
/* Frees the held DOFs for a solve that moves them (the user's "free translations"): the
 * chain then moves and limits every DOF. */
void mn_chain_free_locked(const mn_model* m, mn_chain* c);
/* qc <- the chain's numbers of the model state q, and back. */
void mn_chain_gather(const mn_chain* c, const double* q, double* qc);
void mn_chain_scatter(const mn_chain* c, const double* qc, double* q);
/* Frames (njoint) of the chain's joints relative to the base frame for the chain state qc
 * (any joint types: the batched 1-DOF path when simple, mn_joint_apply otherwise). */
void mn_chain_frames(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* frames);
/* qc <- qc (+) scale * v (ndof), joint by joint as mn_joint_integrate. Held DOFs keep
 * their value whatever v holds for them. */
void mn_chain_integrate(const mn_model* m, const mn_chain* c, double* qc, const double* v,
                        double scale);
/* Projects qc onto the chain's joint limits (mn_joint_clamp); held joints are left as they
 * are. */
void mn_chain_clamp(const mn_model* m, const mn_chain* c, double* qc);

/* The chain FK fast path: a compiled serial chain of 1-DOF joints with frames relative to
 * the base joint's frame, what robot-arm IK and the FK benchmark use. Fixed-size, no
 * allocation after creation. */
/* NULL with err set when tip is not below base, or the chain holds a BALL or FREE joint
 * (chains of 1-DOF joints are what the thesis and URDF describe). */
mn_chain* mn_chain_create(const mn_model* m, int base, int tip, mn_error* err);
void mn_chain_destroy(mn_chain* c);
/* Tip frame relative to the base frame for the chain's joint values qc (ndof). */
void mn_chain_fk(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* tip);
/* Tip frame (as above) and the 6 x ndof Jacobian of the point `local` in the tip frame, in
 * base coordinates (rows: linear, angular). Every DOF gets its column, held or not (the
 * kinematics; a solver reads c->locked). */
void mn_chain_fk_jacobian(const mn_model* m, const mn_chain* c, const double* qc, mn_vec3 local,
                          mn_xform* tip, double* jac);
/* Tip frame (as mn_chain_fk) and, for each DOF k, its joint's axis (axis[3k..3k+2], unit)
 * and origin (origin[3k..3k+2]) in base coordinates: what the chain's Jacobian is made of,
 * from the same walk, without writing the frames. */
void mn_chain_fk_axes(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* tip,
                      double* axis, double* origin);

#ifdef __cplusplus
}
#endif
#endif
