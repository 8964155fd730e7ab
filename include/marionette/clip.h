/* marionette anim: compressed clips for playback. A take (a state per frame) is stored as
 * one track per channel of the figure, each with its own error-bounded keys, quantised, in
 * one self-contained block of bytes; sampling reads the block directly, allocates nothing
 * and keeps no state (reentrant).
 *
 * The error is the one animation compressors are measured by (the Animation Compression
 * Library's object-space "virtual vertex" metric, on which its published figures are
 * measured): for every joint and every frame, three points at distance `shell` from the
 * joint along its own x, y and z axes are placed by the take's forward kinematics and by the
 * clip's; the error is the largest distance between the two placements, in the figure's
 * length unit. mn_clip_compress guarantees it is at most `tol` at every frame of the take
 * (it measures it after compressing). With `vertices` 2 it bounds the x and y points only
 * (a looser bound: the z point of a clip held to two points may be off by more).
 *
 * Channels and their tracks:
 *   ball joint, free joint's rotation   a rotation track: the rotation vector (the
 *                                       quaternion's logarithm, unwrapped along the take),
 *                                       three numbers;
 *   free joint's position               a 3-vector track;
 *   hinge angle, slide                  a scalar track.
 * Each track is, whichever is smallest within its share of the error: the rest value (the
 * model's q0: nothing stored), one constant, sparse keys (frame indices and values) with
 * linear or Catmull-Rom interpolation between them, or a value at every frame. Values are
 * quantised to the fewest bits (per track) over the track's range.
 *
 * A dense track's segments (8 to 32 frames) each choose their own step per component, a level
 * of the track's ((8 + m) 2^(s - 3) times it, m < 8, s < 16): the coarsest the search finds
 * that keeps the object-space error within `tol` on the segment's frames (a per-segment
 * search, as the Animation Compression Library's per-segment bit rates). Within a segment a
 * frame's index on that grid is predicted from the frames before it and the residual is
 * Rice-coded. When the block is loaded, the parser (which decodes every residual to check it)
 * records where each segment starts and the decoder's state every 8 frames of a segment (in
 * memory beside the block, not stored in it); sampling a frame goes on from the nearest of
 * those points before it, so at most 7 frames are decoded per track (allocation-free).
 *
 * The block (little-endian, version 4; a block of another version is refused, naming it):
 *   "MNC4", u32 frames, f32 fps, u16 nq, u16 tracks, u8 frame-index bits;
 *   per track: u8 mode (bits 0-1: 0 rest, 1 constant, 2 sparse, 3 dense; bit 2: Catmull-Rom;
 *   bits 3-7: value bits - 1), then constant: d f32; sparse: u16 keys, d u24 low (a float32's
 *   high 24 bits), d u16 step (a float32's high 16 bits), key frames and values bit-packed
 *   (byte-aligned at the end); dense: the same low and step, u8 segment length log2, then the
 *   segments one after the other: per component a record, then per further frame and
 *   component the residual (index less its prediction: 0 the first frame, 1 the previous,
 *   2 the line through the previous two, 3 the previous plus half their difference),
 *   zigzag-mapped and Rice-coded (the quotient in unary, zeros ended by a one, then k bits;
 *   20 zeros escape to 27 bits). The first segment's record: level 7 bits, predictor order
 *   2 bits, Rice parameter k 5 bits, the first frame's index on the level's grid; a later
 *   segment's: the level's change from the previous segment's (zigzag-mapped, Exp-Golomb of
 *   order 0), the order (2 bits), k's change (the same code), and the first index less the
 *   previous segment's last rescaled to this grid (rounded to nearest; zigzag-mapped,
 *   Exp-Golomb of order k: w = (z >> k) + 1 as floor(log2 w) zeros, a one and w's low bits,
 *   then z's k low bits): value = low + index (8 + m) 2^(s - 3) step. d is the track's
 *   dimension (1 or 3). */
#ifndef MARIONETTE_CLIP_H
#define MARIONETTE_CLIP_H

#include <stddef.h>

#include "anim.h"
#include "base.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mn_clip mn_clip;

/* A point held to its own bound over a range of frames (a locked foot): `point`, in joint
 * `joint`'s frame, stays within `tol` of where the take puts it at frames start..end. */
typedef struct mn_clip_lock {
    int joint;
    mn_vec3 point;
    int start, end; /* 0 <= start <= end < frames */
    double tol;     /* > 0, figure units (a lock's own tolerance: 1e-4 m by default) */
} mn_clip_lock;

typedef struct mn_clip_options {
    double tol;      /* largest error of a virtual vertex at any frame (figure units; default
                        1e-4, the Animation Compression Library's 0.01 cm on a figure in metres) */
    double shell;    /* distance of the virtual vertices from their joint (default 0.03: 3 cm) */
    int max_segment; /* the longest segment of a dense track, in frames: 8, 16 or 32 (0, the
                        default: 32). Shorter segments compress less; a frame is decoded
                        from the seek point before it (every 4 frames), so they sample
                        about as fast (docs/animation.md) */
    int vertices;    /* virtual vertices per joint held to tol: 3 (x, y and z axes: the
                        Animation Compression Library's measure; 0 is 3, the default) or 2 (x
                        and y only) */
    const mn_clip_lock* locks; /* nlocks points held to their own bounds besides tol (NULL:
                                  none); the array is read during mn_clip_compress only */
    int nlocks;
} mn_clip_options;
mn_clip_options mn_clip_default(void);

typedef struct mn_clip_stats {
    int frames;
    int tracks;       /* channels of the figure (rotations, positions, scalars) */
    int rest;         /* tracks at the model's rest value (nothing stored) */
    int constant;     /* tracks of one stored value */
    int sparse;       /* tracks of keys */
    int dense;        /* tracks of a value at every frame */
    long keys;        /* values stored over all tracks (a dense track: one per frame) */
    size_t raw_bytes; /* 10 float32 (rotation 4, translation 3, scale 3) per moving joint
                         per frame: the raw size animation compressors report */
    size_t bytes;     /* the block */
    double ratio;     /* raw_bytes / bytes */
    double max_error; /* the largest virtual-vertex error over all joints and frames (of
                         the options' vertices) */
    int worst_joint;  /* where it is */
    int worst_frame;
    double scale;      /* how far the per-track error shares were widened beyond the
                          guaranteed split (1: none) */
    double lock_error; /* the largest distance of a lock's point from the take's over its
                          frames (0 without locks) */
    int worst_lock;    /* where it is (-1 without locks) */
} mn_clip_stats;

/* Compresses frames 0..nframes-1 of q (nframes x nq, one row per frame, finite; ball and
 * free quaternions unit) of model m at fps frames per second. NULL with err set on bad
 * arguments or out of memory. The model must outlive the clip. */
mn_clip* mn_clip_compress(const mn_model* m, const double* q, int nframes, double fps,
                          const mn_clip_options* o, mn_clip_stats* stats, mn_error* err);
/* A clip of model m from a block (a copy is made). Every field is checked against the
 * model and the block's length: NULL with err set (naming the byte offset and the field)
 * when the block is not a clip of this model. */
mn_clip* mn_clip_load(const mn_model* m, const void* bytes, size_t nbytes, mn_error* err);
void mn_clip_destroy(mn_clip* c);
/* The block (mn_clip_size bytes), for writing out. */
const void* mn_clip_bytes(const mn_clip* c);
size_t mn_clip_size(const mn_clip* c);
int mn_clip_frames(const mn_clip* c);
double mn_clip_fps(const mn_clip* c);
/* The bytes a loaded clip holds: its block, and the seek points and segment records built
 * when it was loaded (what random access reads beside the block; 28 bytes per dense track
 * every 4 frames and 48 per segment). 0 for NULL. */
size_t mn_clip_memory(const mn_clip* c);

/* The state at `frame` (clamped to 0..frames-1; fractional frames interpolate) into q (nq
 * numbers). Reentrant, allocation-free. MN_ERR_ARG when frame is not finite. */
mn_status mn_clip_sample(const mn_clip* c, double frame, double* q);

/* The locks of sequence s's locked constraints (mn_seq_constraint_def.lock: PIN and ORIENT)
 * on a take of n frames sampled from frame `first` every `step` frames (as mn_seq_bake
 * samples it): a PIN holds its handle's point over the frames of its range, an ORIENT the
 * three points `shell` from its joint along the joint's axes (an orientation held to tol at
 * that distance). Writes up to cap locks into out (out may be NULL when cap is 0) and
 * returns how many there are. */
int mn_clip_locks_from_seq(const mn_seq* s, double first, double step, int n, double tol,
                           double shell, mn_clip_lock* out, int cap);

/* A playback cursor: sampling through it gives the same numbers as mn_clip_sample, bit for
 * bit, but a dense track goes on decoding from where the cursor's last sample left it when
 * the new frame is later in the same segment (playback moving forward), instead of from the
 * seek point before it. Created once (it allocates); sampling through it allocates nothing. Not
 * reentrant: one cursor per thread of playback; the clip must outlive it. */
typedef struct mn_clip_cursor mn_clip_cursor;
mn_clip_cursor* mn_clip_cursor_create(const mn_clip* c); /* NULL: no clip or out of memory */
void mn_clip_cursor_destroy(mn_clip_cursor* k);
/* As mn_clip_sample (MN_ERR_ARG when frame is not finite). */
mn_status mn_clip_cursor_sample(mn_clip_cursor* k, double frame, double* q);

/* The virtual-vertex error (see above: three vertices per joint) of the clip against a take
 * of the same model (q: nframes x nq): largest over joints and frames, and where (either
 * pointer may be NULL). */
mn_status mn_clip_error(const mn_clip* c, const double* q, int nframes, double shell,
                        double* max_error, int* worst_joint, int* worst_frame);
/* The same with `vertices` (2 or 3) per joint. */
mn_status mn_clip_error_vertices(const mn_clip* c, const double* q, int nframes, double shell,
                                 int vertices, double* max_error, int* worst_joint,
                                 int* worst_frame);

#ifdef __cplusplus
}
#endif
#endif
