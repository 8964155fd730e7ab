/* Private helpers of the io layer: the paths, above the doc layer's helpers (doc_internal.h),
 * which io shares. */
#ifndef MN_IO_INTERNAL_H
#define MN_IO_INTERNAL_H

#include "doc/doc_internal.h"

/* Writes the text to path (mn_write_file_atomic; MN_ERR_NOMEM, "out of memory", when the
 * buffer failed) and frees the buffer: the end of every writer. */
mn_status mn_strbuf_write(mn_strbuf* b, const char* path, mn_error* err);

/* ---- reading: one path helper --------------------------------------------------------------- */

/* A reader of an in-memory text: name is what messages call the input (the path when the
 * text came from a file); args carries the reader's own arguments. */
typedef mn_status (*mn_io_text_fn)(const char* text, size_t len, const char* name, void* args,
                                   mn_error* err);
/* Reads the file at path whole (mn_read_file) and passes its text to fn with the path as the
 * name, so every message names the file as the caller gave it. The text is freed after. */
mn_status mn_io_read_path(const char* path, mn_io_text_fn fn, void* args, mn_error* err);
/* A figure reader of an in-memory text (mn_skel_read_mem, mn_urdf_read_mem). */
typedef mn_status (*mn_io_figure_fn)(const char* text, size_t len, const char* name,
                                     mn_model** model, mn_warnings* warn, mn_error* err);
/* The path form of such a reader: *model = NULL, arguments checked, file read, fn called. */
mn_status mn_io_read_figure(const char* path, mn_io_figure_fn fn, mn_model** model,
                            mn_warnings* warn, mn_error* err);
/* The args of the readers whose only outputs are one result and the warnings. */
typedef struct mn_io_out {
    void* out;
    mn_warnings* warn;
} mn_io_out;

/* The one in-memory figure reader behind mn_figure_read_mem and mn_figure_read_skin(_mem):
 * the reader picked by mn_file_kind_of_mem; scale > 0 scales a BVH figure (any other kind
 * with a scale other than 1 is refused, field "scale"); skin as mn_figure_read_skin. */
struct mn_gltf;
mn_status mn_io_figure_read_mem(const void* data, size_t len, const char* name, double scale,
                                mn_model** model, mn_motion* motion, struct mn_gltf* skin,
                                mn_warnings* warn, mn_error* err);

/* The doc layer's file table filled with io's opener and path readers (doc_files.c). */
extern const mn_doc_files mn_io_files;

/* Tests only: makes mn_read_file_beneath use its realpath check instead of openat2. */
void mn_io_beneath_force_fallback(int on);

#endif
