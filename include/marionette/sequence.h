/* marionette sequence documents: a keyframed sequence (anim.h) as JSON, with its figure,
 * frame rate, interpolation, keys, and the scene document's handles and constraints
 * (scene.h) active over frame ranges, with animated targets. Schema in docs/sequence.md.
 *
 * Reading checks everything the scene reader checks and names the file, the line and the
 * field of the first problem ("walk.json:12: keys[3].pose.torso.1: expected a number");
 * on failure nothing is returned. Writing prints every number so that it reads back to the
 * same double: a write-read round trip is exact. */
#ifndef MARIONETTE_SEQUENCE_H
#define MARIONETTE_SEQUENCE_H

#include <stddef.h>

#include "anim.h"
#include "base.h"
#include "io.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A contact track: the frames in which a foot's heel and its toe are down (docs/sequence.md
 * "Contacts"; retarget and anim import write them, docs/retarget.md). Intervals are
 * [first, last] frames, inclusive, in increasing order, not overlapping. */
#define MN_SEQ_CONTACT_TRACKS 4
#define MN_SEQ_CONTACT_MAX 128
typedef struct mn_seq_contact_track {
    char joint[64]; /* the foot's joint (its ankle) */
    int nheel, ntoe;
    double heel[MN_SEQ_CONTACT_MAX][2];
    double toe[MN_SEQ_CONTACT_MAX][2];
} mn_seq_contact_track;

/* What a sequence document names besides the sequence: its figure, its contact tracks. */
typedef struct mn_seq_doc_info {
    char figure[256]; /* the "figure" member: a figure file or "stickman" */
    double scale;     /* the "scale" member (BVH figures), 0 when absent */
    int ncontact;     /* the "contacts" member: a track per foot */
    mn_seq_contact_track contact[MN_SEQ_CONTACT_TRACKS];
    char root[64]; /* the "root" member: the joint the figure was re-rooted at, "" for none */
} mn_seq_doc_info;

/* How a sequence document is read. Zeroed by mn_seq_read_default(); NULL means the defaults.
 * By default the document is untrusted (a file someone else wrote): its "figure" is a
 * relative path read beneath the document's folder through the one safe opener
 * (mn_read_file_beneath in io.h: percent-decoded first; an absolute path, a scheme, a
 * backslash or a ".." segment is refused; a symlink may not lead out of the folder; only a
 * regular file is read), and an error names the document, the line, the field "figure" and
 * the path as written, never the resolved path. */
typedef struct mn_seq_read_options {
    /* 1: the document is trusted (the local user's own file, as on the command line): its
     * figure may be an absolute path or lead out of its folder ("..", symlinks). */
    int trusted;
} mn_seq_read_options;
mn_seq_read_options mn_seq_read_default(void);

/* Reads a sequence document. The figure is read from the "figure" member (a path relative
 * to the document's folder, or the built-in "stickman"; see mn_seq_read_options for what is
 * read); *model receives it and must outlive the sequence (destroy the sequence first). opt
 * and info may be NULL. On failure *model and *seq are NULL and err names file, line and
 * field. */
mn_status mn_seq_read(const char* path, const mn_seq_read_options* opt, mn_model** model,
                      mn_seq** seq, mn_seq_doc_info* info, mn_error* err);
/* mn_seq_read, and when the figure is a glTF file with a skinned mesh, that file in *skin
 * (mn_figure_read_skin in gltf.h: the model is built from it, so mn_gltf_write can write the
 * figure with its mesh); *skin is zeroed for any other figure and on failure. Free it with
 * mn_gltf_free. */
struct mn_gltf;
mn_status mn_seq_read_skin(const char* path, const mn_seq_read_options* opt, mn_model** model,
                           mn_seq** seq, mn_seq_doc_info* info, struct mn_gltf* skin,
                           mn_error* err);
/* The same from memory: name is used in messages, base_dir (may be NULL: the current
 * folder) is the document's folder, beneath which a relative figure path is read. With
 * figure non-NULL, that model is used instead of reading the document's figure (and *model
 * is set to NULL). */
mn_status mn_seq_read_mem(const char* text, size_t len, const char* name, const char* base_dir,
                          const mn_seq_read_options* opt, const mn_model* figure, mn_model** model,
                          mn_seq** seq, mn_seq_doc_info* info, mn_error* err);

/* A sequence document of several figures (docs/sequence.md "Several figures"; Welman 6.1,
 * 7.3): a "figures" array, each figure its own file, name, placement, interpolation and keys,
 * and handles ("figure/joint") and constraints over all of them. seq[0] animates figure 0 and
 * holds the handles and constraints of all; seq[f] animates figure f (mn_seq_set_figures).
 * Each figure's keys are moved where its "position" and "rotation" place it. */
typedef struct mn_seq_figures {
    int n;
    char name[MN_SEQ_MAX_FIGURES][64];
    char file[MN_SEQ_MAX_FIGURES][256]; /* as the document names it */
    mn_xform place[MN_SEQ_MAX_FIGURES];
    mn_model* model[MN_SEQ_MAX_FIGURES];
    mn_seq* seq[MN_SEQ_MAX_FIGURES];
} mn_seq_figures;

/* Reads a sequence document of one figure or several into *out (free with
 * mn_seq_figures_free; zeroed on failure, err naming file, line and field). A document of one
 * figure reads as a document of one figure named after its file (its contact tracks are not
 * returned: mn_seq_read returns them). mn_seq_read refuses a document with "figures"
 * (MN_ERR_UNSUPPORTED, field "figures"). */
mn_status mn_seq_read_figures(const char* path, const mn_seq_read_options* opt, mn_seq_figures* out,
                              mn_error* err);
mn_status mn_seq_read_figures_mem(const char* text, size_t len, const char* name,
                                  const char* base_dir, const mn_seq_read_options* opt,
                                  mn_seq_figures* out, mn_error* err);
void mn_seq_figures_free(mn_seq_figures* f);

/* The largest value a document's pose gives a hinge (radians: about 159 turns) and a slide
 * or a free joint's position (the figure's length unit); beyond is refused, naming the
 * field, as a number that is not finite is. */
#define MN_SEQ_MAX_ANGLE 1000.0
#define MN_SEQ_MAX_LENGTH 1e6

/* mn_seq_read_skin from memory (name and base_dir as mn_seq_read_mem). */
mn_status mn_seq_read_skin_mem(const char* text, size_t len, const char* name, const char* base_dir,
                               const mn_seq_read_options* opt, mn_model** model, mn_seq** seq,
                               mn_seq_doc_info* info, struct mn_gltf* skin, mn_error* err);

/* Writes s as a sequence document naming `figure` (and scale when > 0). The file is
 * replaced atomically. */
mn_status mn_seq_write(const char* path, const mn_seq* s, const char* figure, double scale,
                       mn_error* err);
/* The same into a malloc'd, NUL-terminated text (free it with free). */
mn_status mn_seq_write_mem(const mn_seq* s, const char* figure, double scale, char** text,
                           size_t* len, mn_error* err);
/* mn_seq_write with what info names: figure, scale and the contact tracks (checked as the
 * reader checks them: MN_ERR_ARG naming the field, nothing written). */
mn_status mn_seq_write_doc(const char* path, const mn_seq* s, const mn_seq_doc_info* info,
                           mn_error* err);
mn_status mn_seq_write_doc_mem(const mn_seq* s, const mn_seq_doc_info* info, char** text,
                               size_t* len, mn_error* err);
/* Adds frames [first, last] to a track's heel (toe 0) or toe (toe 1) list, after its last
 * interval (a frame right after it extends it). MN_ERR_ARG when out of order or full. */
mn_status mn_seq_contact_add(mn_seq_contact_track* t, int toe, double first, double last);

/* ---- baking: every frame of a sequence, its constraints re-satisfied --------------------- */

typedef struct mn_seq_bake_options {
    double step;                /* frames between samples (default 1) */
    int plain;                  /* 1: the plain in-betweens, no constraint solve */
    mn_seq_solve_options solve; /* default: mn_seq_solve_options_default(), tolerances 1e-5 */
    long max_frames;            /* the most frames sampled (0: MN_SEQ_BAKE_MAX_FRAMES) */
    const volatile int* cancel; /* when set and *cancel turns nonzero, the bake stops */
} mn_seq_bake_options;
mn_seq_bake_options mn_seq_bake_default(void);

/* What a bake did: frames sampled, frames with an active constraint, the solver steps in
 * all, frames whose constraints were not met within the budget, and the largest residual of
 * an active position constraint (metres). */
typedef struct mn_seq_bake_result {
    long frames, constrained, iters, unmet;
    double max_violation;
} mn_seq_bake_result;

/* The most frames a bake samples (a larger step is needed beyond; at 30 frames a second,
 * over 9 hours), and the most bytes its motion may take (frames times the figure's numbers
 * times 8). Both are checked before any frame is sampled or any memory taken. */
#define MN_SEQ_BAKE_MAX_FRAMES 1000000L
#define MN_SEQ_BAKE_MAX_BYTES ((double)(512L << 20))

/* Samples s (of the model m) from its first key to its last, every opt->step frames, and at
 * each frame re-satisfies the active constraints (warm-started from the last frame) unless
 * opt->plain: *out receives the motion (free it with mn_motion_free), at fps / step frames
 * per second. opt and result may be NULL. On failure *out is empty: more frames than
 * opt->max_frames or bytes than MN_SEQ_BAKE_MAX_BYTES (MN_ERR_ARG, field "step", before any
 * work), a constraint violation or a state that is not finite (MN_ERR_SINGULAR, naming the
 * frame: no motion of infinities is returned), *opt->cancel set (MN_ERR_NOCONVERGE). */
mn_status mn_seq_bake(const mn_seq* s, const mn_model* m, const mn_seq_bake_options* opt,
                      mn_motion* out, mn_seq_bake_result* result, mn_error* err);

/* The bake of a sequence of several figures (mn_seq_set_figures, Welman 6.1, 7.3): out[f]
 * (mn_seq_figure_count(s) motions) receives figure f's motion, all of them over the frames
 * from the first key of any figure to the last of any, every frame solved for all the
 * figures together. Otherwise as mn_seq_bake (a time warp of s is not applied). */
mn_status mn_seq_bake_figures(const mn_seq* s, const mn_seq_bake_options* opt, mn_motion* out,
                              mn_seq_bake_result* result, mn_error* err);

/* ---- motion scripts (docs/motion-script.md; Welman 7.2.1) --------------------------------- */

/* Applies a motion script to s: its handles and its constraints over time intervals (locks,
 * pins, orientations, planes, lines, paths to follow, balance) are added to the sequence.
 * The script is checked whole first: on any error s is unchanged and err names the file,
 * the line and the field. */
mn_status mn_motion_script_apply(const char* path, mn_seq* s, mn_error* err);
mn_status mn_motion_script_apply_mem(const char* text, size_t len, const char* name, mn_seq* s,
                                     mn_error* err);

#ifdef __cplusplus
}
#endif
#endif
