/* Private to the anim layer: the layout of a sequence and its precomputed sampling tables. */
#ifndef MN_ANIM_INTERNAL_H
#define MN_ANIM_INTERNAL_H

#include <marionette/anim.h>

#include <math.h>

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
    int jnt[3];     /* run: the hinges (their limits: mn_joint_clamp_value) */
    double rest[4]; /* run: the rotation of the rest angles (an additive layer's reference) */
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

    struct seq_ext* ext; /* layers and time warp (layers.c), NULL when none */

    /* several figures (Welman 6.1, 7.3; mn_seq_set_figures): handles of figure f > 0 are on
     * the figure fig[f] animates (not owned); nfig 0 or 1: this sequence's figure only */
    int nfig;
    const mn_seq* fig[MN_SEQ_MAX_FIGURES];
};

/* The sequence animating figure f of s (s itself for figure 0). */
static inline const mn_seq* mn_seq_fig(const mn_seq* s, int f) {
    return f == 0 ? s : s->fig[f];
}
static inline int mn_seq_nfig(const mn_seq* s) {
    return s->nfig > 1 ? s->nfig : 1;
}

/* A sequence's layers and time warp (layers.h, layers.c), freed with the sequence and copied
 * by mn_seq_clone (sequence.c). */
#include <marionette/layers.h>

typedef struct seq_layer {
    mn_seq* seq; /* owned: the layer's keys, interpolation and time warp */
    mn_layer_mode mode;
    char name[64];
    int nw;
    double* w_frame; /* nw, increasing */
    double* w_value; /* nw, in [0, 1] */
    double* mask;    /* njoint, NULL: every joint 1 */
} seq_layer;

struct seq_ext {
    int is_layer; /* this sequence is a layer: it takes no layers of its own */
    int nlayer;
    seq_layer layer[MN_SEQ_MAX_LAYERS];
    int nwarp;
    double* warp; /* nwarp x 3: t, s, slope */
};

/* Layer l's storage freed and zeroed. */
void mn_seq_layer_free(seq_layer* l);

/* Room for n keys (1) or 0 when out of memory. */
int mn_seq_reserve_keys(mn_seq* s, int n);
/* Inserts or replaces a key without rebuilding (the edit operations batch their changes);
 * tcb NULL: keep a replaced key's, zero for a new one. Returns the index, -1 when out of
 * memory. */
int mn_seq_put_key(mn_seq* s, double frame, const double* q, const double* tcb);
/* Removes key k without rebuilding. */
void mn_seq_drop_key(mn_seq* s, int k);
/* Frees the sampling tables (and empties them). */
void mn_seq_free_tables(mn_seq* s);
/* Rebuilds the sampling tables; MN_ERR_NOMEM on allocation failure. */
mn_status mn_seq_rebuild(mn_seq* s);
/* Index of the segment holding frame (0..nkey-1) and the parameter u in [0, 1). */
int mn_seq_locate(const mn_seq* s, double frame, double* u);
/* Shoemake's (1987) squad inner point at q between its neighbours prev and next (all in
 * one hemisphere): q exp(-(log(q^-1 next) + log(q^-1 prev)) / 4), normalised. */
mn_quat mn_anim_squad_inner(mn_quat prev, mn_quat q, mn_quat next);
/* The weights (wa, wb) of slerp(a, b, u) = wa a + wb b for unit quaternions with dot
 * product d, without the shorter-arc flip (squad's outer slerp); lerp weights when a and b
 * (nearly) coincide. */
static inline void mn_anim_slerp_weights(double d, double u, double* wa, double* wb) {
    *wa = 1 - u, *wb = u;
    if (d < 0.9999) {
        if (d < -1) d = -1;
        double st = sqrt(1 - d * d);
        if (st > 1e-9) {
            double s1, c1;
            mn_sincos(u * acos(d), &s1, &c1);
            *wb = s1 / st;
            *wa = c1 - d * *wb;
        }
    }
}
/* The interpolated rotation of a quaternion or run unit on one segment record. */
mn_quat mn_anim_unit_rotation(const seq_unit* un, const double* rec, double u);
/* A run unit's hinge angles into q from its rotation r: of the two Euler solutions, each angle
 * unwrapped, the one nearest ref (the branch's reference), clamped to the hinge limits. */
void mn_anim_run_angles(const mn_seq* s, const seq_unit* un, mn_quat r, const double* ref,
                        double* q);
/* mn_seq_sample without the limit clamp of balls, except that a run unit i whose segment is
 * not linear is held as its rotation: rot[4i..] (w, x, y, z), ref[3i..] its branch reference,
 * held[i] = 1, and its hinge angles are not written (layers.c blends the rotations and
 * decomposes once). At a key every unit is written (held 0). rot, ref, held: nunit x 4, 3, 1. */
void mn_seq_sample_runs(const mn_seq* s, double frame, double* q, double* rot, double* ref,
                        double* held);

#endif
