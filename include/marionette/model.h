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

/* One joint of a spec; fill from mn_joint_default() and change what differs. */
typedef struct mn_joint_def {
    const char* name;     /* unique, non-empty; copied by the spec */
    int parent;           /* index of the parent joint in the spec; -1 for a root */
    mn_joint_type type;
    mn_vec3 offset;       /* origin of this joint's frame in the parent frame */
    mn_quat orient;       /* rest orientation of the frame relative to the parent frame */
    mn_vec3 axis;         /* HINGE/SLIDE axis, BALL twist axis; in the joint frame; normalised on compile */
    int limited;          /* HINGE/SLIDE: range applies; BALL: swing and twist apply */
    double range[2];      /* HINGE (rad), SLIDE (length): lower <= q <= upper */
    double swing;         /* BALL: half-angle of the swing cone about axis (rad) */
    double twist[2];      /* BALL: twist range about axis (rad) */
    double mass;          /* mass of the segment carried by this joint (>= 0) */
    mn_vec3 com;          /* centre of mass of that segment in the joint frame */
    double stiffness;     /* > 0; 1 is neutral, larger moves less (Welman 4.1.4 K_i, 4.2.1 w_i) */
    double q0[7];         /* rest state (first nq numbers used); BALL/FREE quaternion w first */
    mn_euler_order rot_order; /* Euler order used when this joint is written as BVH channels */
    const char* object;   /* name of a geometry attached to the joint (thesis "object"); may be NULL */
} mn_joint_def;

/* A def with: no name, parent -1, FIXED, zero offset, identity orient, axis +z, unlimited,
 * mass 0, stiffness 1, zero rest state (identity quaternion), Euler order ZXY. */
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
/* Index of the joint of that name, or -1. */
int mn_spec_find(const mn_spec* s, const char* name);

/* ---- model: compiled and immutable ----------------------------------------------------- */
/* Joints are stored parent before child (forward kinematics is one loop, a Jacobian walks
 * ancestors). All arrays live in one block owned by the model. */
typedef struct mn_model {
    char* name;
    int njoint;             /* joint frames */
    int nq;                 /* state numbers */
    int nv;                 /* degrees of freedom */
    int nroot;              /* joints with no parent */

    /* per joint (njoint) */
    const char** jnt_name;
    const char** jnt_object;     /* NULL when none */
    int* jnt_parent;             /* -1 for a root; always < own index */
    int* jnt_type;               /* mn_joint_type */
    int* jnt_qadr;               /* first state number */
    int* jnt_dofadr;             /* first DOF */
    int* jnt_depth;              /* 0 for a root */
    int* jnt_nchild;
    mn_vec3* jnt_offset;
    mn_quat* jnt_orient;
    mn_mat3* jnt_orient_mat;     /* rotation matrix of jnt_orient */
    uint8_t* jnt_orient_ident;   /* 1 when jnt_orient is the identity (fast path) */
    int8_t* jnt_orient_perm;     /* njoint x 3: when jnt_orient is a signed permutation (a
                                    multiple of 90 degrees about axes, common in URDF), column c
                                    of the rotation is sign * e_(|v|-1) for v = perm[3j+c];
                                    0 when it is not (fast path) */
    mn_vec3* jnt_axis;           /* unit */
    int8_t* jnt_axis_kind;       /* 0, 1, 2 when the axis is +x, +y, +z; -1 otherwise */
    uint8_t* jnt_limited;
    double* jnt_range;           /* njoint x 2 */
    double* jnt_swing;
    double* jnt_twist;           /* njoint x 2 */
    double* jnt_mass;
    mn_vec3* jnt_com;
    double* jnt_stiffness;
    int* jnt_rot_order;          /* mn_euler_order */
    int* jnt_subtree_end;        /* joints i..jnt_subtree_end[i]-1 are i's subtree */

    /* per DOF (nv) */
    int* dof_jnt;
    double* dof_stiffness;

    double* q0;                  /* rest state (nq) */
    double total_mass;

    size_t nbytes;               /* size of the block */
    void* block;
    void* jnt_ops;               /* private: the joints packed for the FK loops */
} mn_model;

/* Compiles a spec: checks it (names, parents, cycles, finite numbers, limits in order),
 * orders joints parent before child and lays out q. NULL with err set on failure. */
mn_model* mn_model_compile(const mn_spec* s, mn_error* err);
void mn_model_destroy(mn_model* m);
/* A spec that compiles back to the same model (for editing a loaded figure). */
mn_spec* mn_model_decompile(const mn_model* m);
int mn_model_find_joint(const mn_model* m, const char* name);
/* Is a an ancestor of b (or b itself)? */
int mn_model_is_ancestor(const mn_model* m, int a, int b);

/* ---- data: state and workspace --------------------------------------------------------- */
typedef struct mn_data {
    int njoint, nq, nv;
    double* q;            /* state (nq) */
    mn_xform* xf;         /* world frame of every joint after mn_fk (njoint) */
    mn_arena arena;       /* scratch for solvers: no heap allocation after creation */
    size_t nbytes;
    void* block;
} mn_data;

/* Data for a model with arena_bytes of scratch (0 picks a size that fits every solver of
 * the library for this model). q is set to the rest state and frames computed. */
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

/* ---- chains: a fast path for one base-to-tip chain ------------------------------------- */
/* A compiled serial chain with frames relative to the base joint's frame: what robot-arm
 * IK and the FK benchmark use. Fixed-size, no allocation after creation. */
typedef struct mn_chain {
    int base, tip;        /* joint indices in the model */
    int njoint;           /* joints from below base to tip inclusive */
    int ndof;             /* their DOFs (hinges and slides only: see mn_chain_create) */
    int* jnt;             /* njoint joint indices, root-to-tip */
    int* dof;             /* ndof DOF indices into the model's nv */
    int* qadr;            /* ndof state indices */
    void* block;
} mn_chain;

/* NULL with err set when tip is not below base, or the chain holds a BALL or FREE joint
 * (chains of 1-DOF joints are what the thesis and URDF describe). */
mn_chain* mn_chain_create(const mn_model* m, int base, int tip, mn_error* err);
void mn_chain_destroy(mn_chain* c);
/* Tip frame relative to the base frame for the chain's joint values qc (ndof). */
void mn_chain_fk(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* tip);
/* Tip frame (as above) and the 6 x ndof Jacobian of the point `local` in the tip frame, in
 * base coordinates (rows: linear, angular). */
void mn_chain_fk_jacobian(const mn_model* m, const mn_chain* c, const double* qc, mn_vec3 local,
                          mn_xform* tip, double* jac);

#ifdef __cplusplus
}
#endif
#endif
