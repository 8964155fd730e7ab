/* marionette scene: a JSON file that names handles, constraints and drags on one figure
 * (schema and examples in docs/scene.md). A scene is read once, then bound to a model and
 * its data, which builds a constraint system (constrain.h) with joint names resolved; drags
 * may follow a path over frames.
 *
 * Every error names the file, the line and the field ("pose.json:12: constraints[1].normal:
 * degenerate plane normal (zero length)"); a scene that fails to read or bind applies
 * nothing: no system is returned and the figure's state is not touched.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_SCENE_H
#define MARIONETTE_SCENE_H

#include <stddef.h>

#include "base.h"
#include "constrain.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mn_scene mn_scene;

/* Reads and checks a scene (syntax, keys, types, finite numbers, handle references,
 * degenerate planes and lines, empty polygons, cyclic equalities). */
mn_status mn_scene_read(const char* path, mn_scene** out, mn_error* err);
/* The same from memory; name is used in messages. */
mn_status mn_scene_read_mem(const char* text, size_t len, const char* name, mn_scene** out,
                            mn_error* err);
void mn_scene_destroy(mn_scene* sc);

/* The most frames a scene runs: its "frames" member, and the frames from the first key to
 * the last of the sequences that animate its figures (pose refuses more before any solve).
 * 100000 frames of conflicting constraints take pose up to about 90 s (docs/scene.md). */
#define MN_SCENE_MAX_FRAMES 100000
/* Frames the scene's drags run over (the "frames" member, default 1). */
int mn_scene_frames(const mn_scene* sc);
/* The "solver" member as an mn_csolver, or -1 when the scene does not name one. */
int mn_scene_solver(const mn_scene* sc);
/* The "iterations" member (per-frame budget), or 0 when not given. */
int mn_scene_iterations(const mn_scene* sc);
/* The "root" member: the joint the figure is re-rooted at before the scene is bound
 * (mn_model_reroot: a hand or a foot as the root, every joint where it was), or NULL when
 * the scene keeps the figure's own root. */
const char* mn_scene_root(const mn_scene* sc);
/* The joint of m the scene re-roots figure `figure` at (-1: the scene's "root" member of a
 * one-figure scene; else the "root" of that entry of "figures") in *joint, -1 when none;
 * MN_ERR_NOTFOUND naming the scene's file, line and the field when m has no such joint. */
mn_status mn_scene_root_joint(const mn_scene* sc, int figure, const mn_model* m, int* joint,
                              mn_error* err);

/* Several figures (Welman 6.1, 7.3): the "figures" array, each entry a name, a figure file
 * (relative to the scene's folder) or a sequence document animating one, where it stands
 * ("position", "rotation") and its "root". Joints are addressed "figure/joint" (or with a handle's
 * "figure" member); a scene without "figures" holds one figure, given apart, as before. 0 when
 * none. */
int mn_scene_figure_count(const mn_scene* sc);
const char* mn_scene_figure_name(const mn_scene* sc, int i);
const char* mn_scene_figure_file(const mn_scene* sc, int i);
/* The sequence document (anim) that animates figure i instead of a "file", NULL when none:
 * its keys move the figure frame by frame and the scene's constraints hold at every frame. */
const char* mn_scene_figure_sequence(const mn_scene* sc, int i);
/* Where figure i stands: its "position" and "rotation" (identity when not given). */
mn_xform mn_scene_figure_place(const mn_scene* sc, int i);
/* err: cause's message placed at the scene's file, line and "figures[i].field" (a figure
 * file that cannot be read, say). Returns the status. */
mn_status mn_scene_figure_error(const mn_scene* sc, int i, const char* field, const mn_error* cause,
                                mn_error* err);

/* Builds a system over (m, d): joint names resolved, pins and orientations without a
 * target fixed where their handle is now, drag start points recorded. On failure *out is
 * NULL, err names the field, and d is untouched. The system is the caller's to destroy;
 * it refers to m and d. */
mn_status mn_scene_bind(mn_scene* sc, const mn_model* m, mn_data* d, mn_csys** out, mn_error* err);
/* The same over the scene's figures, in the order of its "figures" (one figure for a scene
 * without them): constraints may join handles of different figures. */
mn_status mn_scene_bind_figures(mn_scene* sc, const mn_figure* figs, int nfig, mn_csys** out,
                                mn_error* err);
/* mn_scene_bind_figures with room for spare_handles more handles and spare_constraints more
 * constraints (0 to 4096 each) in the system, for the caller to add (a drag's handle, a
 * balance): the scene's handles and constraints keep their indices, in the scene's order. */
mn_status mn_scene_bind_spare(mn_scene* sc, const mn_figure* figs, int nfig, int spare_handles,
                              int spare_constraints, mn_csys** out, mn_error* err);
/* Sets every drag's target for frame f in [0, frames): a path is sampled linearly with
 * its points spread evenly over the frames. Needs a successful bind. */
mn_status mn_scene_apply_frame(const mn_scene* sc, mn_csys* s, int frame);

#ifdef __cplusplus
}
#endif
#endif
