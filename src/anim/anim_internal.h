/* Private to the anim layer: the layout of a sequence and its precomputed sampling tables. */
#ifndef MN_ANIM_INTERNAL_H
#define MN_ANIM_INTERNAL_H

#include <marionette/anim.h>

/* Sampling splits a state into channels:
 *   scalar channels  one state number each (a hinge angle, a slide, one coordinate of a
 *                    free position, a hinge of a run under LINEAR or a spline); every mode
 *                    is a cubic in the segment parameter u, so sampling is one Horner
 *                    evaluation per number;
 *   rotation units   a ball, a free joint's quaternion, or a run of hinges as one rotation,
 *                    under SLERP or SQUAD (or LINEAR in Euler angles for a ball, CONSTANT). */
enum { UNIT_QUAT = 0, UNIT_RUN, UNIT_BALL_EULER };

typedef struct seq_unit {
    int kind;       /* UNIT_* */
    int mode;       /* effective mn_interp */
    int joint;      /* first joint */
    int n;          /* run: 2 or 3 hinges */
    int qadr[3];    /* quaternion: qadr[0] is w; run: one per hinge */
    int order;      /* run, ball Euler: mn_euler_order of the rotation */
    double sign[3]; /* run: hinge angle = sign * Euler angle */
    int run;        /* run: index among the runs */
    int limited[3];
    double lo[3], hi[3];
} seq_unit;

/* Per segment and rotation unit: the record below (doubles). */
enum {
    R_QA = 0, /* key k quaternion (w, x, y, z), same hemisphere as key k-1 */
    R_QB = 4, /* key k+1 */
    R_SA = 8, /* squad inner points */
    R_SB = 12,
    R_TH = 16, /* slerp angle between QA and QB, and 1 / sin of it (0: use nlerp) */
    R_IS = 17,
    R_THS = 18, /* the same between SA and SB */
    R_ISS = 19,
    R_EA = 20, /* run, ball Euler: the keys' Euler angles (unwrapped continuously) */
    R_EB = 23,
    R_LIN = 26, /* run: 1 when this segment falls back to linear in the angles (the
                   rotation's path leaves the joint limits or ends on another branch) */
    R_COS = 27, /* cos of the slerp angles (QA-QB, SA-SB) */
    R_COSS = 28,
    R_STRIDE = 30
};

/* Runs: the hinge angles tracked continuously along each segment's rotation path at
 * RUN_TRACK + 1 evenly spaced parameters, the reference for picking the branch. */
#define RUN_TRACK 16

typedef struct seq_con {
    mn_seq_constraint_def def;
    char name[64];
    int ntk, cap_tk;
    mn_target_key* tk; /* sorted by frame */
} seq_con;

struct mn_seq {
    const mn_model* m;
    double fps;
    mn_interp rot_default, trans_default;
    int* jnt_rot; /* per joint mn_interp (DEFAULT: follow the sequence) */
    int* jnt_trans;

    int nkey, cap_key;
    double* key_frame; /* nkey, ascending, distinct */
    double* key_q;     /* nkey x nq */
    double* key_tcb;   /* nkey x 3 */

    /* handles and constraints */
    int max_h, max_c;
    int nh, nc;
    mn_handle_def* h;
    char (*h_name)[64];
    seq_con* c;

    /* sampling tables, rebuilt after every change */
    int nscalar;
    int* sc_qadr; /* nscalar state indices */
    int nunit;
    seq_unit* unit;
    int nrun;
    int* run_first; /* hinge runs interpolated as one rotation: first joint, length */
    int* run_len;
    double* seg_scalar; /* nkey x nscalar x 4 cubic coefficients (c0 + c1 u + c2 u^2 + c3 u^3) */
    double* seg_rot;    /* nkey x nunit x R_STRIDE */
    double* seg_track;  /* nkey x nrun x (RUN_TRACK + 1) x 3 */
    int has_limited_ball;
};

/* Room for n keys (1) or 0 when out of memory. */
int mn_seq_reserve_keys(mn_seq* s, int n);
/* Inserts or replaces a key without rebuilding (the edit operations batch their changes);
 * tcb NULL: keep a replaced key's, zero for a new one. Returns the index, -1 when out of
 * memory. */
int mn_seq_put_key(mn_seq* s, double frame, const double* q, const double* tcb);
/* Removes key k without rebuilding. */
void mn_seq_drop_key(mn_seq* s, int k);
/* Rebuilds the sampling tables; MN_ERR_NOMEM on allocation failure. */
mn_status mn_seq_rebuild(mn_seq* s);
/* Index of the segment holding frame (0..nkey-1) and the parameter u in [0, 1). */
int mn_seq_locate(const mn_seq* s, double frame, double* u);
/* Euler angles of a unit quaternion for a Tait-Bryan order (both solutions are e and
 * (e0 + pi, pi - e1, e2 + pi)). */
void mn_anim_euler_from_quat(int order, mn_quat q, double e[3]);
/* Of the two solutions e and (e0 + pi, pi - e1, e2 + pi), each angle moved by whole turns,
 * the one nearest ref. */
void mn_anim_pick_branch(const double e[3], const double ref[3], double out[3]);
/* The interpolated rotation of a quaternion or run unit on one segment record. */
mn_quat mn_anim_unit_rotation(const seq_unit* un, const double* rec, double u);

#endif
