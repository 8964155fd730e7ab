/* marionette layers: a sequence (anim.h) gains layers blended over its keys, and a time-warp
 * curve per sequence or layer.
 *
 * A layer is a sequence of the same figure (its own keys and interpolation) with a mode, a
 * weight curve and a joint mask, as Blender's NLA strips and Unreal's layered blends are:
 *   OVERRIDE  the layer's pose replaces the result so far by the factor a = weight * mask:
 *             angles and lengths lerp, quaternions slerp along the shorter arc (normalised);
 *   ADDITIVE  the layer's difference from the figure's rest pose is added, scaled by a:
 *             angles and lengths add a (layer - rest); a quaternion composes
 *             result * slerp(1, rest^-1 layer, a) (the rest-relative delta, shorter arc).
 * Layers apply in order over the base (the sequence's own keys). The weight curve is keys
 * (frame, weight in [0, 1]) eased between keys (smoothstep) and constant outside them; no keys
 * is weight 1. The mask is a weight in [0, 1] per joint; NULL is every joint at 1.
 *
 * The time warp maps output frames to the sequence's own frames: keys (t, s) with t
 * increasing and s non-decreasing, a monotone piecewise cubic through them (Fritsch and
 * Carlson 1980: the slopes of the PCHIP interpolant, or a speed ds/dt given per key), so it
 * holds (equal s), eases in and out (speed 0) and speeds up (steeper than 1) without ever
 * running backwards; outside its keys it continues at speed 1. A sequence's warp is applied by
 * the bake (output frames t0..tn of the warp); a layer's maps the base's frames to the
 * layer's. Constraints are active and locked in the sequence's own frames, so a retimed bake
 * keeps every lock.
 *
 * mn_seq_sample_blend is reentrant and allocation-free (the caller passes the work buffer). */
#ifndef MARIONETTE_LAYERS_H
#define MARIONETTE_LAYERS_H

#include "anim.h"
#include "base.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mn_layer_mode { MN_LAYER_OVERRIDE = 0, MN_LAYER_ADDITIVE = 1 } mn_layer_mode;
/* "override", "additive"; NULL when out of range. parse returns -1 for an unknown name. */
const char* mn_layer_mode_name(mn_layer_mode m);
int mn_layer_mode_parse(const char* name);

/* The most layers a sequence takes. */
#define MN_SEQ_MAX_LAYERS 64

/* Adds an empty layer (no keys, weight 1, no mask) on top; returns its index, or -1 with err
 * set (a layer of a layer, more than MN_SEQ_MAX_LAYERS, a name over 63 bytes). The layer's
 * sequence has s's fps and default interpolation; give it keys with anim.h's key calls on
 * mn_seq_layer(s, i). A layer without keys is skipped when blending. */
int mn_seq_add_layer(mn_seq* s, const char* name, mn_layer_mode mode, mn_error* err);
mn_status mn_seq_remove_layer(mn_seq* s, int i);
int mn_seq_layer_count(const mn_seq* s);
/* The layer's sequence (owned by s), NULL when out of range. */
mn_seq* mn_seq_layer(const mn_seq* s, int i);
const char* mn_seq_layer_name(const mn_seq* s, int i);
mn_layer_mode mn_seq_layer_mode(const mn_seq* s, int i);
/* Index of the layer of that name, or -1. */
int mn_seq_find_layer(const mn_seq* s, const char* name);

/* The layer's weight keys (n >= 0; frames strictly increasing and finite, weights in [0, 1]);
 * replaces the old ones. MN_ERR_ARG naming "weights" (and nothing changes) otherwise. */
mn_status mn_seq_set_layer_weights(mn_seq* s, int i, int n, const double* frames,
                                   const double* weights, mn_error* err);
int mn_seq_layer_weight_count(const mn_seq* s, int i);
/* Weight key k of layer i into frame and weight. */
mn_status mn_seq_layer_weight_key(const mn_seq* s, int i, int k, double* frame, double* weight);
/* The layer's weight at a frame (0 when out of range). */
double mn_seq_layer_weight(const mn_seq* s, int i, double frame);
/* The layer's joint mask (njoint weights in [0, 1]; NULL: every joint 1). */
mn_status mn_seq_set_layer_mask(mn_seq* s, int i, const double* mask, mn_error* err);
/* The mask (njoint numbers), NULL when the layer has none. */
const double* mn_seq_layer_mask(const mn_seq* s, int i);

/* Doubles of work mn_seq_sample_blend needs (nq when s has layers, else 0). */
int mn_seq_blend_work_size(const mn_seq* s);
/* The base's in-between at `frame` (mn_seq_sample) with every layer blended over it, each
 * layer sampled at its own warped frame; then clamped to the joint limits. work holds
 * mn_seq_blend_work_size(s) doubles (may be NULL when that is 0). Reentrant, allocation-free. */
mn_status mn_seq_sample_blend(const mn_seq* s, double frame, double* q, double* work);

/* Blends the pose l over q (both nq numbers of m) by the factor w times mask[joint] (mask NULL:
 * 1), as a layer of that mode blends. Allocation-free. */
void mn_pose_blend(const mn_model* m, double* q, const double* l, double w, const double* mask,
                   mn_layer_mode mode);

/* ---- time warp ----------------------------------------------------------------------- */

/* The sequence's (or a layer's) time warp: n keys (n = 0 removes it, else n >= 2) at output
 * frames t (finite, strictly increasing) taking the sequence's frames src (finite,
 * non-decreasing); speed NULL, or per key a slope ds/dt >= 0 (NaN: the PCHIP slope there).
 * Refused (MN_ERR_ARG naming "time_warp", nothing changes) when a key is out of order or the
 * curve with the given speeds would run backwards (Fritsch-Carlson: a^2 + b^2 <= 9 for the
 * speeds over a segment's slope, and speed 0 on a hold). */
mn_status mn_seq_set_warp(mn_seq* s, int n, const double* t, const double* src, const double* speed,
                          mn_error* err);
int mn_seq_warp_count(const mn_seq* s);
/* Warp key k: its output frame, sequence frame and slope (the given or the computed one). */
mn_status mn_seq_warp_key(const mn_seq* s, int k, double* t, double* src, double* speed);
/* The sequence frame at output frame t (t itself without a warp). */
double mn_seq_warp(const mn_seq* s, double t);
/* The output frames the warp covers (the sequence's first and last key frames without one). */
double mn_seq_out_start(const mn_seq* s);
double mn_seq_out_end(const mn_seq* s);

#ifdef __cplusplus
}
#endif
#endif
