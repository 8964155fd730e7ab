/* marionette takes: operations on sampled motions (a take: nframes x nq states of one figure
 * at a frame rate, as a BVH file holds): planted feet, a crossfade from one take into another
 * with the feet's phases aligned and the planted feet locked across the blend, root motion
 * taken out into its own track and put back (in place, or along a turning path), a seamless
 * loop, and a retiming that keeps a flight phase ballistic.
 *
 * The up axis is the figure's (mn_take_feet: +y unless given). A take's root is its first
 * joint, a FREE joint (BVH roots are). Outputs are allocated by the call and freed with free();
 * nothing is written on failure. */
#ifndef MARIONETTE_TAKES_H
#define MARIONETTE_TAKES_H

#include "base.h"
#include "layers.h"
#include "math.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The feet of a figure: the joints whose origins touch the ground (ankles), the leg length
 * (hip to ankle at rest, the scale of every threshold below) and the up axis. */
typedef struct mn_take_feet {
    int joint[2]; /* left, right */
    double leg;   /* length */
    mn_vec3 up;   /* unit */
} mn_take_feet;

/* The feet found by name: for each side ("left"/"right", or a leading "l"/"r"), a joint named
 * with "ankle", else "foot" (case-insensitive); the leg is the length of the ankle's two
 * bones above it (shin and thigh; zero-length joints of a compound joint skipped). up NULL:
 * +y. MN_ERR_NOTFOUND naming "feet" when a side has no such joint. */
mn_status mn_take_feet_find(const mn_model* m, const mn_vec3* up, mn_take_feet* feet,
                            mn_error* err);

/* Planted intervals of one foot over a take: frames where the foot is within height_frac x leg
 * of its lowest height in the take and slower than speed_frac x leg per second (central
 * differences), for at least min_frames frames in a row; runs closer than gap frames are
 * merged. Writes up to cap intervals [start, end] (inclusive) into iv (2 x cap) and returns how
 * many there are (more than cap: the first cap are written). Allocates (the foot's path). */
int mn_take_planted(const mn_model* m, const double* q, int nframes, double fps,
                    const mn_take_feet* feet, int side, double height_frac, double speed_frac,
                    int min_frames, int gap, int* iv, int cap);

/* ---- crossfade ------------------------------------------------------------------------ */

typedef struct mn_crossfade_options {
    double at;          /* the frame of take A where the blend starts (default: -1, the
                           middle of A) */
    int length;         /* blend frames (default 0: half a second) */
    int align_phase;    /* 1 (default): B starts at the frame whose feet best match A's over
                           the blend (positions relative to the root, in the root's heading
                           frame); 0: B starts at b_frame */
    int b_frame;        /* B's first frame when align_phase is 0 */
    int b_min, b_max;   /* align_phase: B's frames searched (default 0 and -1: all of B) */
    int lock_feet;      /* 1 (default): planted feet of the result locked (pins re-satisfied at
                           every frame, the sequence solver of anim.h) */
    double lock_height; /* planted: within this x leg of the lowest height (default 0.2) */
    double lock_speed;  /* and slower than this x leg per second (default 0.35) */
} mn_crossfade_options;
mn_crossfade_options mn_crossfade_default(void);

typedef struct mn_crossfade_result {
    int a_frame, b_frame; /* where the blend starts in A and in B */
    int length;           /* blend frames */
    double phase_cost;    /* per frame of the blend, the squared distance (length^2) of the
                             feet (both, relative to the root) and of the root velocity times
                             0.3 s between A and B */
    int nframes;          /* frames of the result: a_frame + (nb - b_frame) */
    int locks;            /* planted intervals locked */
    double max_violation; /* largest lock residual (length) */
    double* q;            /* nframes x nq, free() it */
} mn_crossfade_result;

/* Take A (na frames) into take B (nb frames) of the same figure at one frame rate: A up to
 * a_frame, then over `length` frames an override blend (layers.h) of A and B eased from 0 to 1,
 * then the rest of B; B is moved and turned about the up axis so that its root at b_frame
 * stands where A's does at a_frame, facing the same way. */
mn_status mn_crossfade(const mn_model* m, const double* qa, int na, const double* qb, int nb,
                       double fps, const mn_take_feet* feet, const mn_crossfade_options* opt,
                       mn_crossfade_result* r, mn_error* err);

/* The frames of B a crossfade from A searches by default (`anim crossfade` without
 * --b-range): B's motion of interest is what A does not show. Each frame of B is scored by
 * the mean squared distance (length^2 per joint) of its pose (every joint relative to the
 * root's ground position and heading, and its velocity times 0.1 s) from the nearest frame of
 * A, smoothed over 0.1 s. When the peak of the score stands out (more than twice its median
 * and more than (0.1 leg)^2),
 * the frames around the peak above half-way between median and peak are the motion of
 * interest, and the window is [0, start - length] (length 0: half a second), so that the
 * blend ends before it and the rest of B, which the crossfade plays after the blend, holds
 * it; otherwise [0, nb / 2], B's first half. */
typedef struct mn_crossfade_window_result {
    int b_min, b_max;                 /* the window: mn_crossfade_options.b_min, b_max */
    int interest_start, interest_end; /* B's motion of interest (-1, -1: none stands out) */
    double novelty_median;            /* the score's median and peak (length^2) */
    double novelty_peak;
} mn_crossfade_window_result;
mn_status mn_crossfade_window(const mn_model* m, const double* qa, int na, const double* qb, int nb,
                              double fps, const mn_take_feet* feet, int length,
                              mn_crossfade_window_result* r, mn_error* err);

/* ---- root motion ---------------------------------------------------------------------- */

/* The root's ground-plane motion and heading per frame: track is nframes x 3 (the root's
 * position in the ground plane as two coordinates along ground axes e1, e2, and the heading:
 * the root rotation's twist about up, radians, unwrapped). e1, e2 with up right-handed: for
 * +y up, e1 = +z and e2 = +x. in_place (nframes x nq, may be q) receives the take with the
 * track taken out: the root's ground position 0 and its heading 0 (the rest of its rotation
 * and its height kept). mn_take_root_apply puts a track back (the round trip is exact to
 * rounding). */
mn_status mn_take_root_extract(const mn_model* m, const double* q, int nframes, mn_vec3 up,
                               double* track, double* in_place);
mn_status mn_take_root_apply(const mn_model* m, const double* in_place, int nframes, mn_vec3 up,
                             const double* track, double* q);
/* The track bent along a path that turns at `turn` radians per second (positive: about +up):
 * each frame's ground step is turned by the heading added so far, so the figure walks the
 * same steps along an arc. In place (track updated). */
void mn_take_root_turn(double* track, int nframes, double fps, double turn);

/* ---- loop ----------------------------------------------------------------------------- */

typedef struct mn_loop_result {
    int start, end; /* the cycle: frames start..end-1 of the take, end - start frames */
    int blend;      /* frames blended before the seam */
    double match;   /* mean squared distance (length^2) of the joints (root motion out)
                       between frames start and end */
    double step[3]; /* the root track's change over one cycle, in the heading frame of
                       its start: ground e1, e2, heading */
    double* q;      /* (end - start) x nq: one cycle, root motion kept; free() it */
} mn_loop_result;

/* A seamless loop of a take: the cycle [start, end) of at least min_len frames whose ends
 * match best (joint positions relative to the root's ground position and heading), searched
 * over the whole take (min_len 0: a second; blend 0: a quarter of the cycle); the last `blend`
 * frames of the cycle eased into the frames before start, so that the cycle's last frame is
 * followed by its first as frame start - 1 is by start. */
mn_status mn_take_loop(const mn_model* m, const double* q, int nframes, double fps, mn_vec3 up,
                       int min_len, int blend, mn_loop_result* r, mn_error* err);
/* The cycle repeated `cycles` times, the root track continued across each seam (each cycle
 * starts where the last ended, turned by its heading): cycles x (end - start) frames into
 * out (allocated, free() it). */
mn_status mn_take_loop_repeat(const mn_model* m, const mn_loop_result* r, mn_vec3 up, int cycles,
                              double** out, int* nframes);

/* ---- retiming -------------------------------------------------------------------------- */

typedef struct mn_retime_result {
    int nframes;    /* output frames: the warp's output frames t0..tn, one per frame */
    int flights;    /* flight phases kept ballistic */
    double gravity; /* the take's gravity: fitted to the root's height over its flights
                       (length per second^2; 0 without flights) */
    double apex[2]; /* the first flight's apex above its take-off: in the take, retimed */
    double* q;      /* nframes x nq, free() it */
} mn_retime_result;

/* A take retimed by a time warp (layers.h: keys (t, s, speed) from output frames to the
 * take's frames, speed NaN for the monotone PCHIP slope): every output frame is the take's
 * in-between (slerp, linear) at s(t). With ballistic, each flight phase (both feet's lowest
 * joints above their lowest height in the take by 5 % of the leg, for at least three frames)
 * keeps the root on a parabola under the gravity the take's own flights imply (the
 * least-squares parabola of the root's height over them, over all of them at once): in the
 * output, between the retimed take-off and landing, the root moves at constant ground
 * velocity and its height is the parabola of that gravity through its take-off and landing
 * heights; a flight slowed down rises higher, as it would under that gravity. */
mn_status mn_take_retime(const mn_model* m, const double* q, int nframes, double fps,
                         const mn_take_feet* feet, int nwarp, const double* t, const double* s,
                         const double* speed, int ballistic, mn_retime_result* r, mn_error* err);

#ifdef __cplusplus
}
#endif
#endif
