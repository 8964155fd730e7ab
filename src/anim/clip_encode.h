/* The offline encoder of compressed clips (src/anim/clip_encode.c and the stages it runs):
 * its state, the fit of one track (clip_fit.c) and the per-segment search (clip_search.c). */
#ifndef MN_ANIM_CLIP_ENCODE_H
#define MN_ANIM_CLIP_ENCODE_H

#include "clip_internal.h"

typedef struct fit_work {
    double *dq, *err;
    uint32_t* qv;
    int* key;
    /* greedy_keys: a tournament tree over blocks of frames (the largest error and where;
     * leaves from tleaf), and per frame whether the segment starting there is beyond eps */
    double* tmax;
    int *tidx, tleaf;
    uint8_t* bad;
    int* need;        /* keys_at_least: per frame, the intervals ending there */
    int seg_max_log2; /* the longest segment a dense track may take (mn_clip_options) */
} fit_work;

/* What the fits of one track learnt: per interpolation (linear, Catmull-Rom) and split of
 * its share, the widest bound at which greedy insertion failed and its budget then (eps -1:
 * never failed); what does not depend on the bound (the largest squared distance from the
 * rest value and from the constant, the ranges), once known (known); and per bit count of
 * the dense code, its largest squared quantisation error (-1: not yet quantised) and, once
 * counted, its size and segment length (dense_bits 0: not yet). */
typedef struct fit_memo {
    double eps[2][3];
    int max_keys[2][3];
    int known;
    double rest_e2, const_e2, mn[3], mx[3];
    double qerr2[MAX_BITS + 1];
    size_t dense_bits[MAX_BITS + 1];
    int dense_sl[MAX_BITS + 1];
} fit_memo;

/* The encoder's state, passed from stage to stage (clip_encode.c). */
typedef struct enc {
    const mn_model* m;
    int n, nt, tbits;
    double fps;
    clip_track* trk;
    double** val;  /* per track: n x dim */
    double** rest; /* per track: dim */
    double* base;  /* per track: the guaranteed share (before widening) */
    double* mult;  /* per track: widening */
    track_code* code;
    fit_memo* memo; /* per track */
    fit_work w;
    /* the take and the clip being built */
    const double* q; /* n x nq */
    mn_clip_options opt;
    mn_clip* c;
    mn_data* d;
    int nv;      /* virtual vertices per joint (2 or 3) */
    double* V;   /* the take's virtual vertices (n x njoint x 3 nv) */
    double* tmp; /* one frame's vertices */
    /* the current clip (every accepted step within tol) at every frame, kept current from the
     * widen stage on: its states (n x nq) and joint frames (n x njoint) */
    double* Q;
    mn_xform* X;
    int* vhint; /* per joint: the subtree vertex that last failed a moved check (joint and
                   vertex, joint * nv + a) */
    /* locks (mn_clip_options.locks): each lock's take points over its frames (LP + lpo[k],
     * 3 numbers per frame); the largest distance found at the end, and where */
    const mn_clip_lock* lk;
    int nlk;
    double* LP;
    size_t* lpo;
    double lock_err;
    int lock_worst;
    double good; /* the common widening of the shares (mn_clip_stats.scale) */
    double errv; /* the clip's error, and where */
    int wj, wf;
} enc;

/* clip_fit.c */
/* The track's numbers at frames 0..n-1 of q (n x nq) into v (n x dim). */
void mn_clip_track_values(const clip_track* t, const double* q, int nq, int n, double* v);
/* The smallest encoding of track values v (n x d) within eps. rest: the model's value. memo
 * (may be NULL): the track's, read and updated. */
void mn_clip_fit_track(const double* v, int n, int d, const double* rest, double eps, int tbits,
                       fit_work* w, fit_memo* memo, track_code* out);
/* Every segment of dense track t laid out at its levels (indices, order, k, sizes). */
void mn_clip_dense_layout(const double* v, track_code* t, int d, int n);
/* Segment g, component c of dense track t: laid out at its level from values v, or coded as
 * its indices are; both return its size in bits. */
size_t mn_clip_seg_layout(const double* v, track_code* t, int d, int n, int g, int c);
/* The indices of frames f0..f1-1 (in one segment), component c, rounded from the values v at
 * the segment's level, as mn_clip_seg_layout lays them out. */
void mn_clip_seg_indices(const double* v, track_code* t, int d, int f0, int f1, int c);
size_t mn_clip_seg_code(track_code* t, int d, int n, int g, int c);
/* Segment g, component c's size again after the segment before changed (its residuals stay;
 * its first index's prediction moves). */
size_t mn_clip_seg_relink(track_code* t, int d, int g, int c);
/* The decoded value of frame f, component c of a laid-out dense track (bit for bit the
 * sampler's). */
double mn_clip_seg_value(const track_code* t, int d, int f, int c);
/* Frame f of a track as its code stands (rest: the model's value), bit for bit what the
 * sampler gives for the block written from it: the widening checks a code without writing
 * the block. */
void mn_clip_code_value(const track_code* t, int d, int f, const double* rest, double* out);

/* clip_check.c: a change to the tracks of one joint moves that joint's subtree only, and
 * the rest of the clip is within tol: the check of a frame is that of the subtree. */
/* Whether the subtree of joint is within tol (and its locks within theirs) at frame f with
 * the states qf (nq): its joints' frames from qf below the cached frame of joint's parent.
 * squared: compare squared distances (as the search does) rather than distances. */
int mn_clip_subtree_ok(enc* e, int joint, int f, const double* qf, int squared);
/* As mn_clip_subtree_ok where only joint's own states, qj, differ from the cached clip at
 * frame f: its subtree moves rigidly, so each vertex is the cached one under that motion,
 * checked alone, the vertex that failed last first. Held to tol less half a millionth of it
 * and a picometre (the rigid motion rounds otherwise than the chain of frames: a frame it
 * passes is within tol by their account too). Locks are not checked: with locks,
 * mn_clip_subtree_ok. */
int mn_clip_subtree_ok_moved(enc* e, int joint, int f, const double* qj);
/* The cached frames of joint's subtree at frames f0..f1-1 recomputed from e->Q. */
void mn_clip_cache_frames(enc* e, int joint, int f0, int f1);
/* Every lock's points as the take places them over its frames (e->LP, e->lpo). */
mn_status mn_clip_lock_points(enc* e);
/* The clip (assembled) against every lock over its frames: the largest distance relative to
 * the lock's tol (<= 1: all hold); the largest distance and its lock into e->lock_err and
 * e->lock_worst. */
double mn_clip_locks_excess(enc* e);

/* clip_search.c: on the caches of the current clip (e->Q, e->X), kept current. */
void mn_clip_segment_search(enc* e);
void mn_clip_index_polish(enc* e);

#endif
