/* Private to the model layer. */
#ifndef MN_MODEL_INTERNAL_H
#define MN_MODEL_INTERNAL_H

#include <marionette/model.h>

#include "core/sincos_inline.h"

/* Checks one def (spec.c): name, type, finite numbers, axis, limits, mass, stiffness; parent in
 * [-1, njoint). The field named in err is the joint name plus the attribute. */
mn_status mn_def_check(const mn_joint_def* d, int njoint, mn_error* err);
/* The def's rest state (nq numbers), quaternions normalised (identity when zero). */
void mn_def_rest_state(const mn_joint_def* d, double* q);

/* A joint packed for the forward-kinematics loops: everything one step reads, contiguous,
 * built once when the model is compiled (m->jnt_ops). */
typedef struct mn_jop {
    double off[3];
    double O[9]; /* rest orientation matrix (used when orient == 2) */
    double axis[3];
    int8_t type;   /* mn_joint_type */
    int8_t kind;   /* hinge axis: 0-2 = +x,+y,+z; 3-5 = -x,-y,-z; -1 general */
    int8_t orient; /* 0 identity, 1 signed permutation (perm), 2 general (O) */
    int8_t perm[3];
    int8_t from[3]; /* orient 1: column k of R O is sgn[k] times column from[k] of R */
    double sgn[3];
} mn_jop;

/* A step of a chain's FK program (chain.c, built by mn_chain_init for a chain of 1-DOF
 * joints). The walk keeps the running frame as a matrix S whose columns are those of the
 * true rotation R up to a signed permutation P known when the chain is built (R = S P):
 * the rest orientations of URDF joints are mostly quarter turns, which then cost nothing
 * at run time, and a hinge about a coordinate axis turns two columns of S in place. */
enum {
    MN_CS_FIXED = 0, /* no motion */
    MN_CS_ROT_X,     /* a hinge turning S about its own x, y or z column (sine times sgn) */
    MN_CS_ROT_Y,
    MN_CS_ROT_Z,
    MN_CS_ROT_AXIS, /* a hinge about a general axis (Rodrigues) */
    MN_CS_SLIDE
};
enum { /* mn_cstep.has_off: the offset is zero, along one of S's columns, or general */
       MN_CS_OFF_NONE = 0,
       MN_CS_OFF_X,
       MN_CS_OFF_Y,
       MN_CS_OFF_Z,
       MN_CS_OFF_FULL
};
typedef struct mn_cstep {
    double off[3];  /* the offset in S's columns: p += S off */
    double M[9];    /* general orientation in S's columns, S <- S M (when general) */
    double axis[3]; /* ROT_AXIS and SLIDE: the axis in S's columns after the orientation */
    double sgn;     /* ROT_X/Y/Z: +-1, the sign of the sine */
    int8_t op;      /* MN_CS_* */
    int8_t general; /* 1: apply M */
    int8_t has_off; /* MN_CS_OFF_* */
    int8_t ident;   /* 1: P is the identity after this step (S is the true frame) */
    int8_t perm[3]; /* P after this step: true column k = sign * S column |perm[k]| - 1 */
} mn_cstep;
/* A chain's program: the start S0 (a signed permutation chosen so that P is the identity
 * after the last step, and the walk ends on the true tip frame) and one step per joint. */
typedef struct mn_cprog {
    double S0[9];
    mn_cstep step[];
} mn_cprog;

/* Fills m->jnt_ops from the model's arrays. */
void mn_model_pack_ops(mn_model* m);

/* One joint step in place on the running frame (R row-major, p), Parent ch. 5: concatenate
 * the placement, then the articulation:
 *   p += R (offset [+ free translation]);  R = R O;  then the joint's motion.
 * For a hinge, s and c are sin and cos of its angle (computed by the caller so that a chain
 * can compute them all first: they are independent and overlap). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
mn_jop_step(const mn_jop* op, const double* qj, double s, double c, double* R, double* p,
            const int multi_dof) {
    double o0 = op->off[0], o1 = op->off[1], o2 = op->off[2];
    if (multi_dof && op->type == MN_JOINT_FREE) o0 += qj[0], o1 += qj[1], o2 += qj[2];
    p[0] += R[0] * o0 + R[1] * o1 + R[2] * o2;
    p[1] += R[3] * o0 + R[4] * o1 + R[5] * o2;
    p[2] += R[6] * o0 + R[7] * o1 + R[8] * o2;
    double M[9];
    if (op->orient == 1) { /* (R O) column k = sign * R column |perm|-1 */
        for (int k = 0; k < 3; k++) {
            int from = op->from[k];
            double sg = op->sgn[k];
            M[k] = sg * R[from], M[3 + k] = sg * R[3 + from], M[6 + k] = sg * R[6 + from];
        }
        for (int i = 0; i < 9; i++)
            R[i] = M[i];
    } else if (op->orient == 2) {
        const double* O = op->O;
        for (int r = 0; r < 3; r++) {
            M[3 * r + 0] = R[3 * r] * O[0] + R[3 * r + 1] * O[3] + R[3 * r + 2] * O[6];
            M[3 * r + 1] = R[3 * r] * O[1] + R[3 * r + 1] * O[4] + R[3 * r + 2] * O[7];
            M[3 * r + 2] = R[3 * r] * O[2] + R[3 * r + 1] * O[5] + R[3 * r + 2] * O[8];
        }
        for (int i = 0; i < 9; i++)
            R[i] = M[i];
    }
    const double* Qp = NULL;
    if (!multi_dof && op->type != MN_JOINT_HINGE && op->type != MN_JOINT_SLIDE) return;
    switch (op->type) {
    case MN_JOINT_HINGE: {
        int k = op->kind;
        if (k >= 3) {
            s = -s;
            k -= 3;
        }
        if (k >= 0) { /* columns (u, v) = the two axes orthogonal to axis k, in cyclic order */
            int u = k == 2 ? 0 : k + 1, v = k == 0 ? 2 : k - 1;
            for (int r = 0; r < 3; r++) {
                double cu = R[3 * r + u], cv = R[3 * r + v];
                R[3 * r + u] = c * cu + s * cv;
                R[3 * r + v] = -s * cu + c * cv;
            }
        } else { /* Rodrigues */
            const double* ax = op->axis;
            double t = 1.0 - c;
            double Q[9] = {t * ax[0] * ax[0] + c,         t * ax[0] * ax[1] - s * ax[2],
                           t * ax[0] * ax[2] + s * ax[1], t * ax[0] * ax[1] + s * ax[2],
                           t * ax[1] * ax[1] + c,         t * ax[1] * ax[2] - s * ax[0],
                           t * ax[0] * ax[2] - s * ax[1], t * ax[1] * ax[2] + s * ax[0],
                           t * ax[2] * ax[2] + c};
            for (int r = 0; r < 3; r++) {
                M[3 * r + 0] = R[3 * r] * Q[0] + R[3 * r + 1] * Q[3] + R[3 * r + 2] * Q[6];
                M[3 * r + 1] = R[3 * r] * Q[1] + R[3 * r + 1] * Q[4] + R[3 * r + 2] * Q[7];
                M[3 * r + 2] = R[3 * r] * Q[2] + R[3 * r + 1] * Q[5] + R[3 * r + 2] * Q[8];
            }
            for (int i = 0; i < 9; i++)
                R[i] = M[i];
        }
        return;
    }
    case MN_JOINT_SLIDE: {
        const double* ax = op->axis;
        double d = qj[0];
        p[0] += d * (R[0] * ax[0] + R[1] * ax[1] + R[2] * ax[2]);
        p[1] += d * (R[3] * ax[0] + R[4] * ax[1] + R[5] * ax[2]);
        p[2] += d * (R[6] * ax[0] + R[7] * ax[1] + R[8] * ax[2]);
        return;
    }
    case MN_JOINT_BALL:
        Qp = qj;
        break;
    case MN_JOINT_FREE:
        Qp = qj + 3;
        break;
    default:
        return;
    }
    mn_mat3 Q = mn_quat_to_mat3(mn_q4(Qp[0], Qp[1], Qp[2], Qp[3]));
    const double* q9 = Q.m;
    for (int r = 0; r < 3; r++) {
        M[3 * r + 0] = R[3 * r] * q9[0] + R[3 * r + 1] * q9[3] + R[3 * r + 2] * q9[6];
        M[3 * r + 1] = R[3 * r] * q9[1] + R[3 * r + 1] * q9[4] + R[3 * r + 2] * q9[7];
        M[3 * r + 2] = R[3 * r] * q9[2] + R[3 * r + 1] * q9[5] + R[3 * r + 2] * q9[8];
    }
    for (int i = 0; i < 9; i++)
        R[i] = M[i];
}

/* Any joint type. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
mn_jop_apply_sc(const mn_jop* op, const double* qj, double s, double c, double* R, double* p) {
    mn_jop_step(op, qj, s, c, R, p, 1);
}

/* FIXED, HINGE and SLIDE only (the chain fast path): the multi-DOF branches compile away. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
mn_jop_apply_1dof(const mn_jop* op, const double* qj, double s, double c, double* R, double* p) {
    mn_jop_step(op, qj, s, c, R, p, 0);
}

/* The same step computing a hinge's sine and cosine itself. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
mn_jop_apply(const mn_jop* op, const double* qj, double* R, double* p) {
    double s = 0, c = 1;
    if (op->type == MN_JOINT_HINGE) mn_sincos_inline(qj[0], &s, &c);
    mn_jop_apply_sc(op, qj, s, c, R, p);
}

#endif
