/* marionette io: file formats for figures and motion.
 *
 * Every reader takes a path (or an in-memory text with a name used in messages), returns
 * MN_OK or a status with err naming file, line and field, and on failure leaves its
 * outputs untouched (NULL / empty): nothing half-read escapes. Readers never let NaN or
 * infinity into a model or a motion. Writers write to a temporary file in the same
 * folder, fsync and rename, so a failed write leaves any existing file as it was.
 *
 * This layer may use Debian libraries (libxml2 for URDF, cJSON for glTF and JSON); the
 * core library does not.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_IO_H
#define MARIONETTE_IO_H

#include <stddef.h>

#include "base.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Non-fatal findings of a reader ("frame count says 3069, data has 3070 rows: using the
 * data"). Pass NULL when not wanted. */
typedef struct mn_warnings {
    int count;
    char first[512]; /* the first warning, "file:line: field: text" */
} mn_warnings;

/* A sequence of states of one model, sampled at a fixed rate. */
typedef struct mn_motion {
    int nframes;
    int nq;            /* = model->nq */
    double frame_time; /* seconds per frame */
    double* q;         /* nframes x nq, row per frame; owned (free with mn_motion_free) */
} mn_motion;

void mn_motion_free(mn_motion* mo);

/* ---- BVH ------------------------------------------------------------------------------- */
typedef struct mn_bvh_options {
    double scale; /* multiply every length by this (1 keeps the file's units) */
    /* The figure the file was written from, when known: a joint named as mn_bvh_write
     * writes one of its joint names (whitespace as '_') takes that name back ("right_arm"
     * -> "right arm"). NULL keeps the file's names. */
    const mn_model* names_of;
} mn_bvh_options;
/* scale 1, names_of NULL. */
mn_bvh_options mn_bvh_default(void);

/* Reads a BVH file: the HIERARCHY becomes a model (one joint per BVH joint: 3 rotation
 * channels -> BALL with that Euler order, 3 position + 3 rotation -> FREE, no channels ->
 * FIXED, End Site -> FIXED leaf named "<parent>_end"; any other channel list -> a series
 * of SLIDE/HINGE joints, the last carrying the BVH name), the MOTION a motion (may be
 * NULL). Any channel count and order, CRLF, a Frames line that disagrees with the data
 * (the data wins, a warning says so). Position channels replace the joint's offset, as in
 * the common readers, and are stored as q = channel - offset so that q = 0 is the rest
 * pose. opt NULL means mn_bvh_default(). */
mn_status mn_bvh_read(const char* path, const mn_bvh_options* opt, mn_model** model,
                      mn_motion* motion, mn_warnings* warn, mn_error* err);
mn_status mn_bvh_read_mem(const char* text, size_t len, const char* name, const mn_bvh_options* opt,
                          mn_model** model, mn_motion* motion, mn_warnings* warn, mn_error* err);
/* Writes a model and its motion (NULL: one frame, the rest pose) as BVH. Any model: a
 * joint's channels follow its type (see docs/bvh.md); FIXED leaves become End Sites; a
 * compound joint of hinges ("j.1", "j.2", "j") is one BVH joint with three rotation
 * channels; names are written with '_' for whitespace. A model read from BVH is written
 * back with its original joints and channel orders. */
mn_status mn_bvh_write(const char* path, const mn_model* m, const mn_motion* motion, mn_error* err);
/* How mn_bvh_write_ex places the figure: root_rot (a unit quaternion) turns every root
 * joint's frame, its OFFSET and its channels, so that FK of the file is root_rot applied to
 * FK of the model. BVH is +Y up by convention: a +Z-up figure (URDF) is stood up by -90
 * degrees about X, (w, x, y, z) = (sqrt(1/2), -sqrt(1/2), 0, 0). A turned root is written
 * as a joint of its own with 3 rotation channels (never folded into a compound joint). */
typedef struct mn_bvh_write_options {
    mn_quat root_rot;
} mn_bvh_write_options;
/* root_rot identity: what mn_bvh_write writes. */
mn_bvh_write_options mn_bvh_write_default(void);
/* mn_bvh_write with options (NULL: the defaults); MN_ERR_ARG for a root_rot that is not a
 * unit quaternion. */
mn_status mn_bvh_write_ex(const char* path, const mn_model* m, const mn_motion* motion,
                          const mn_bvh_write_options* opt, mn_error* err);
/* mn_bvh_write_ex into a malloc'd, NUL-terminated text (free it with free): the bytes
 * mn_bvh_write_ex writes, without a file; messages name no file. */
mn_status mn_bvh_write_mem(const mn_model* m, const mn_motion* motion,
                           const mn_bvh_write_options* opt, char** text, size_t* len,
                           mn_error* err);

/* A model and its motion as a glTF 2.0 binary: mn_gltf_write in gltf.h. */

/* ---- the thesis skeleton text format (Welman Fig. 6.1; grammar in docs/skeleton-format.md) */
mn_status mn_skel_read(const char* path, mn_model** model, mn_warnings* warn, mn_error* err);
mn_status mn_skel_read_mem(const char* text, size_t len, const char* name, mn_model** model,
                           mn_warnings* warn, mn_error* err);
mn_status mn_skel_write(const char* path, const mn_model* m, mn_error* err);
/* What a skeleton file holds beyond its model: comments and blank lines, the skeleton
 * block's groups and their names, each define joint block's attributes in their order, and
 * mirror lines (Welman Fig. 6.1). Read with the model; given back to the writer, which
 * writes the file as it was, with the model's values (docs/skeleton-format.md). */
typedef struct mn_skel_layout mn_skel_layout;
mn_status mn_skel_read_layout(const char* path, mn_model** model, mn_skel_layout** layout,
                              mn_warnings* warn, mn_error* err);
mn_status mn_skel_read_layout_mem(const char* text, size_t len, const char* name, mn_model** model,
                                  mn_skel_layout** layout, mn_warnings* warn, mn_error* err);
/* Writes m in the layout (NULL: as mn_skel_write). Elements that no longer fit the model
 * (a joint gone, a hierarchy changed) give way to the plain writer's; a joint defined by a
 * mirror line is left to the mirror only while the mirror gives it exactly. Whatever the
 * layout, the text reads back to m (the writer reads it back to check, and falls back to
 * mn_skel_write's text when it would not). */
mn_status mn_skel_write_layout(const char* path, const mn_model* m, const mn_skel_layout* layout,
                               mn_error* err);
/* The same into a malloc'd NUL-terminated text (free it). */
mn_status mn_skel_write_layout_mem(const mn_model* m, const mn_skel_layout* layout, char** text,
                                   size_t* len, mn_error* err);
void mn_skel_layout_free(mn_skel_layout* layout);
/* The built-in default figure: the thesis stick figure, as skeleton text. */
const char* mn_stickman_text(void);
/* The built-in default figure, compiled. */
mn_model* mn_stickman_model(mn_error* err);

/* ---- URDF (libxml2) -------------------------------------------------------------------- */
/* One model joint per URDF link: the root link FIXED, every other link carrying the joint
 * that moves it (revolute -> limited HINGE, continuous -> HINGE, prismatic -> SLIDE, fixed
 * -> FIXED; floating/planar rejected), named by the link. Joint origin xyz/rpy become
 * offset/orient. Meshes are ignored. Cycles, missing parents, two roots, duplicate names,
 * NaN numbers are errors. */
mn_status mn_urdf_read(const char* path, mn_model** model, mn_warnings* warn, mn_error* err);
mn_status mn_urdf_read_mem(const char* text, size_t len, const char* name, mn_model** model,
                           mn_warnings* warn, mn_error* err);

/* ---- any figure file ------------------------------------------------------------------- */
typedef enum mn_file_kind {
    MN_FILE_UNKNOWN = 0,
    MN_FILE_SKEL, /* .skel .scr .txt: thesis skeleton text */
    MN_FILE_BVH,
    MN_FILE_URDF,
    MN_FILE_GLTF /* .gltf .glb */
} mn_file_kind;
/* By extension, then by content. */
mn_file_kind mn_file_kind_of(const char* path);
/* Reads any figure file (motion may be NULL; URDF and skeleton files give none; a glTF
 * file's motion is its first animation as mn_gltf_motion_keys gives it: at its own key
 * times when they are evenly spaced, else at 30 frames per second within a bound; gltf.h
 * reaches every animation at its own key times). The name "stickman", when
 * no file has that name, is the built-in default figure; a BVH file written from it
 * (its joints named as mn_bvh_write writes the figure's: "right_arm") is read with the
 * figure's names ("right arm"; mn_bvh_options.names_of). */
mn_status mn_figure_read(const char* path, mn_model** model, mn_motion* motion, mn_warnings* warn,
                         mn_error* err);
/* The same from memory: name (its extension, else the content) picks the reader and names
 * the input in messages; a glTF file's external buffers are read beneath name's folder
 * through mn_read_file_beneath (none may lead out of it). No built-in "stickman" here: pass
 * mn_stickman_text() with the name "stickman". */
mn_status mn_figure_read_mem(const void* data, size_t len, const char* name, mn_model** model,
                             mn_motion* motion, mn_warnings* warn, mn_error* err);

/* ---- the figure document (JSON; docs/figure-document.md) ------------------------------ */
/* The skin part of a figure document: a skinning rig (skin.h), the model joint each
 * controller follows (-1 for none; may be NULL) and the mesh triangles (may be NULL). */
struct mn_rig;
typedef struct mn_figure_skin {
    const struct mn_rig* rig;
    const int* ctrl_joint;
    int ntris;
    const int* tris;
} mn_figure_skin;
/* Writes a model, its motion (NULL or no frames: none) and a skin (may be NULL) as a figure
 * document, atomically. Numbers are written so that they read back exactly. */
mn_status mn_figure_doc_write(const char* path, const mn_model* m, const mn_motion* motion,
                              const mn_figure_skin* skin, mn_error* err);
/* Reads any figure file (mn_figure_read) and writes it as a figure document; a glTF file's
 * skin (mn_rig_from_gltf) and triangles go with it. */
mn_status mn_figure_doc_convert(const char* in, const char* out, mn_warnings* warn, mn_error* err);
/* The figure document into a malloc'd, NUL-terminated text (free it with free): what
 * mn_figure_doc_write writes, without a file. */
mn_status mn_figure_doc_write_mem(const mn_model* m, const mn_motion* motion,
                                  const mn_figure_skin* skin, char** text, size_t* len,
                                  mn_error* err);
/* mn_figure_doc_convert from memory: the figure file's bytes (named as mn_figure_read_mem
 * says) to the figure document's text (malloc'd, NUL-terminated; free it with free). */
mn_status mn_figure_doc_convert_mem(const void* data, size_t len, const char* name, char** text,
                                    size_t* text_len, mn_warnings* warn, mn_error* err);
/* Reads a figure document's figure and motion (motion may be NULL; the skin is skipped).
 * err names the field ("joints[3].axis"). */
mn_status mn_figure_doc_read(const char* path, mn_model** model, mn_motion* motion, mn_error* err);
mn_status mn_figure_doc_read_mem(const char* text, size_t len, const char* name, mn_model** model,
                                 mn_motion* motion, mn_error* err);

/* ---- helpers shared by the writers ----------------------------------------------------- */
/* Atomically replaces path with len bytes of data (temp file, fsync, rename, fsync of the
 * folder: once it returns MN_OK the new content survives a crash). Only a
 * regular file is replaced, keeping its mode (a new file gets 0666 less the umask, applied by
 * the kernel: the umask is never changed, so threads writing at once are safe): a
 * symlink is neither followed nor replaced, and a device, FIFO or folder is refused, each
 * with a message saying so. The temporary (path.tmpXXXXXX) is removed on every failure,
 * and SIGINT, SIGTERM and SIGHUP are held while it exists, so a killed run leaves none. */
mn_status mn_write_file_atomic(const char* path, const char* data, size_t len, mn_error* err);
/* Is name (a file name) one of the writers' temporaries, NAME.tmpXXXXXX (6 letters or
 * digits)? Before writing, the writers remove from the output's folder those a killed run
 * left there (this user's, not held by a live writer, untouched for 2 s). */
int mn_io_is_temporary(const char* name);
/* The same for a set of n files, all or nothing: every output is checked, then every file
 * written to its temporary, then all renamed; a failure before the renames (a full disk, a
 * refused output) leaves every old file as it was and no temporary behind. */
mn_status mn_write_files_atomic(int n, const char* const* paths, const char* const* data,
                                const size_t* lens, mn_error* err);
/* The largest file any reader reads (256 MiB): a larger file is refused from its size,
 * before anything is allocated or read. */
#define MN_IO_MAX_FILE_BYTES ((size_t)256 << 20)
/* Reads a whole file (malloc'd, NUL-terminated); MN_ERR_IO with err on failure. Only a
 * regular file is read (opened non-blocking: a FIFO or device is refused, never waited
 * on), of at most MN_IO_MAX_FILE_BYTES. */
mn_status mn_read_file(const char* path, char** data, size_t* len, mn_error* err);
/* The one way to read a file an asset names (a glTF buffer URI): uri is a relative URI
 * reference (RFC 3986), percent-decoded first; an absolute path, a scheme, a backslash or
 * any ".." segment is refused, and the file is opened beneath dir ("" for the current
 * folder) so that no symlink leads out of it (openat2 RESOLVE_BENEATH, else a checked
 * realpath). A URI of a refused form is MN_ERR_UNSUPPORTED; a file that cannot be opened
 * or leads out of the folder, MN_ERR_IO. Only a regular file of at most max bytes (0 or more than
 * MN_IO_MAX_FILE_BYTES: MN_IO_MAX_FILE_BYTES) is read. Messages name the URI as written, never the
 * resolved path. */
mn_status mn_read_file_beneath(const char* dir, const char* uri, size_t max, char** data,
                               size_t* len, mn_error* err);

/* ---- text ------------------------------------------------------------------------------ */
/* Length (1 to 4) of the UTF-8 sequence at s (at most n bytes, n >= 1), or 0 when it is not
 * valid UTF-8 (RFC 3629: overlong forms, surrogates and code points above U+10FFFF are
 * invalid). It reads no byte after one that is not a continuation byte, so a NUL-terminated
 * string may be passed with n = 4. The one UTF-8 check of the readers, writers and the
 * command line's printing. */
int mn_utf8_len(const unsigned char* s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
