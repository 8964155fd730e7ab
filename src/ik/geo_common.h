/* Shared machinery of the geometric chain IK methods (ccd.c, fabrik.c, analytic.c).
 *
 * The geometric methods move one joint at a time by a closed-form step (Welman 4.2.1):
 * a hinge by the angle that maximises k1 (1 - cos phi) + k2 cos phi + k3 sin phi
 * (eq. 4.19-4.23), a slide by the projected displacement (eq. 4.24), a ball by the
 * rotation that best aligns the weighted point pairs and frame axes (the same objective
 * over all rotations: Wahba's problem, solved by Horn's quaternion method). Each step is
 * scaled by the joint's weight w_i = min(1, 1 / stiffness) (Welman 4.2.1, "stiffness"),
 * limited to o->max_step, projected onto the joint limits, and then applied to the world
 * frames of the chain's joints distal to it, so the next step sees the moved chain
 * without a full forward-kinematics pass (Welman 4.2.2: "the current end-effector frame
 * is updated to reflect the change before proceeding to the next joint").
 *
 * Everything lives in d->arena; nothing here allocates from the heap. */
#ifndef MN_IK_GEO_COMMON_H
#define MN_IK_GEO_COMMON_H

#include <stdint.h>

#include "ik/ik_common.h"
#include "ik/ik_methods.h"

/* One chain base..tip with its goal, in world coordinates. */
typedef struct mn_geo_chain {
    const mn_model* m;
    mn_chain ch;     /* the chain view (mn_ikc_build's): path, state addresses, limits */
    const double* w; /* ch.njoint: Welman's w_i = min(1, 1 / stiffness) */
    double* qbest;   /* ch.nq: best state seen (scratch) */
    double* qtmp;    /* ch.nq scratch */
    double* vtmp;    /* ch.ndof scratch */
    mn_xform base;   /* world frame of the base (identity for the world) */
    mn_vec3 point;   /* end effector in the tip frame */
    int use_pos, use_rot;
    mn_vec3 pd;       /* target position, world */
    mn_mat3 Rd;       /* target orientation of the tip frame, world */
    double reach;     /* W: sum of the distances between successive pivots and the effector */
    double wp, wo;    /* position weight per unit length^2 (w_pos / W^2) and orientation weight */
    int limits;       /* respect joint limits */
    double max_step;  /* largest change of one DOF per step; <= 0 for none */
    int64_t deadline; /* ns on mn_ik_clock_ns(cpu_clock); INT64_MAX for none */
    int cpu_clock;    /* o->timeout_cpu: the budget counts this thread's CPU time */
    int tip_only;     /* steps move only the tip frame (CCD: a tip-to-base sweep never reads
                         the frames between the moved joint and the tip) */
} mn_geo_chain;

/* Builds the chain for a checked problem from d's current frames, in d->arena (the caller
 * holds the mark). MN_ERR_NOMEM when the arena is too small. */
mn_status mn_geo_chain_build(const mn_model* m, mn_data* d, const mn_ik_problem* p,
                             const mn_ik_options* o, mn_geo_chain* c);

/* World position of the end effector and its frame's rotation from d's frames. */
mn_vec3 mn_geo_effector(const mn_geo_chain* c, const mn_data* d);
/* Position error |pd - p| (0 when inactive) and rotation error angle (0 when inactive). */
void mn_geo_errors(const mn_geo_chain* c, const mn_data* d, double* pos_err, double* rot_err);
/* One scalar for progress tests: (pos_err / W)^2 + rot_err^2 over the active goals. */
double mn_geo_merit(const mn_geo_chain* c, double pos_err, double rot_err);
/* Are the active goals within the options' tolerances? */
int mn_geo_met(const mn_ik_options* o, const mn_geo_chain* c, double pos_err, double rot_err);

/* What one joint step should achieve: up to two world points carried by the joint,
 * each with the world position it should move to and a weight, and optionally the tip
 * frame's rotation with the rotation it should take. */
typedef struct mn_geo_goal {
    int npt;
    mn_vec3 pc[2], pd[2];
    double wpt[2];
    int use_rot;
    mn_mat3 Rc, Rd;
    double wo;
} mn_geo_goal;

enum {
    MN_GEO_WEIGHTED = 1, /* scale the step by the joint's w_i and limit it by max_step */
    MN_GEO_RHO = 2       /* multiply each point weight by Welman's (1 + rho), eq. before 4.19 */
};

/* Moves chain joint k (index into c->jnt) by its closed-form best step towards goal g,
 * within limits; updates d->q and the world frames of chain joints k..n-1 (the rest of
 * the figure's frames are stale until mn_fk). Returns the size of the change applied
 * (radians or length); 0 for a FIXED joint or no change. */
double mn_geo_step(mn_geo_chain* c, mn_data* d, int k, const mn_geo_goal* g, int flags);

/* Applies a world rotation dR about chain joint k's pivot (a BALL or HINGE; for a hinge
 * only the component about its axis is used), within limits but unweighted; updates q
 * and frames as mn_geo_step. Returns the angle applied. */
double mn_geo_rotate(mn_geo_chain* c, mn_data* d, int k, mn_quat dR);

/* Projects the chain's joints onto their limits (when c->limits), so a seed state outside
 * them still ends within them; runs mn_fk when anything moved. */
void mn_geo_clamp_chain(const mn_geo_chain* c, mn_data* d);

/* Saves the chain's state as the best seen, and restores it (then runs mn_fk). */
void mn_geo_save(mn_geo_chain* c, const mn_data* d);
void mn_geo_restore(const mn_geo_chain* c, mn_data* d);

/* Rotation (unit quaternion) maximising sum_k w[k] b[k] . (R a[k]) (Wahba's problem) by
 * the largest eigenvector of Horn's 4x4 matrix (Horn 1987, "closed-form solution of
 * absolute orientation using unit quaternions", sec. 4). */
mn_quat mn_geo_best_rotation(const mn_vec3* a, const mn_vec3* b, const double* w, int n);
/* The shortest-arc rotation carrying direction u onto direction v (identity if either is 0). */
mn_quat mn_geo_shortest_arc(mn_vec3 u, mn_vec3 v);
/* Is chain joint k a hinge, slide or ball the solve holds (its first DOF held; a free
 * joint's rotation is held when its fourth is)? Held joints take no step. */
static inline int mn_geo_held(const mn_geo_chain* c, int k) {
    int t = c->m->jnt_type[c->ch.jnt[k]];
    if (!c->ch.locked || t == MN_JOINT_FIXED) return 0;
    return c->ch.locked[c->ch.doff[k] + (t == MN_JOINT_FREE ? 3 : 0)];
}
/* Is chain joint k a free joint whose position is held and rotation is not (a BVH joint
 * with position channels below the root)? The geometric steps turn it as a ball. A free
 * joint whose position is not held is left alone by them, as a free root is. */
static inline int mn_geo_free_as_ball(const mn_geo_chain* c, int k) {
    int i = c->ch.doff[k];
    return c->ch.locked && c->m->jnt_type[c->ch.jnt[k]] == MN_JOINT_FREE && c->ch.locked[i] &&
           !c->ch.locked[i + 3];
}
/* A hinge or slide value within the joint's range when the chain respects limits. */
static inline double mn_geo_limit(const mn_geo_chain* c, int j, double v) {
    return c->limits ? mn_joint_clamp_value(c->m, j, v) : v;
}

/* The iteration of CCD and FABRIK: projects the seed onto the limits (when respected),
 * then runs pass() (and mn_fk) under mn_ik_drive, whose merit is mn_geo_merit; a
 * stationary point with the target out of reach (farther from the first pivot than the
 * chain is long) ends the solve as UNREACHABLE without an escape. Leaves the best state in
 * d with frames current; fills r. name is the method's name for messages. */
typedef void (*mn_geo_pass)(mn_geo_chain* c, mn_data* d, void* ctx);
mn_status mn_geo_iterate(mn_geo_chain* c, mn_data* d, const mn_ik_options* o, mn_ik_result* r,
                         mn_geo_pass pass, void* ctx, const char* name);

/* The whole of a geometric iterative method behind mn_ik_solve: the chain in d->arena,
 * the method's setup (may be NULL; nonzero when the arena is short), mn_geo_iterate, and
 * the arena mark restored. */
typedef int (*mn_geo_setup)(mn_geo_chain* c, mn_data* d, void* ctx);
mn_status mn_geo_run(const mn_model* m, mn_data* d, const mn_ik_problem* p, const mn_ik_options* o,
                     mn_ik_result* r, mn_geo_pass pass, mn_geo_setup setup, void* ctx,
                     const char* name);

#endif
