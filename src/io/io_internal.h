/* Private helpers shared by the readers and writers of the io layer. */
#ifndef MN_IO_INTERNAL_H
#define MN_IO_INTERNAL_H

#include <marionette/io.h>

#include <stdarg.h>
#include <stddef.h>

/* A growable text buffer for writers. On allocation failure it sets failed and drops
 * further output; check failed before writing the result out. */
typedef struct mn_strbuf {
    char* data;
    size_t len, cap;
    int failed;
} mn_strbuf;

void mn_strbuf_init(mn_strbuf* b);
void mn_strbuf_free(mn_strbuf* b);
void mn_strbuf_append(mn_strbuf* b, const char* s, size_t n);
void mn_strbuf_printf(mn_strbuf* b, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Writes the text to path (mn_write_file_atomic; MN_ERR_NOMEM, "out of memory", when the
 * buffer failed) and frees the buffer: the end of every writer. */
mn_status mn_strbuf_write(mn_strbuf* b, const char* path, mn_error* err);
/* Appends a double so that it reads back to the same value (mn_format_double: "%.17g",
 * shortened when a shorter form is exact). */
void mn_strbuf_double(mn_strbuf* b, double v);
/* Appends s as a JSON string: quoted, with '"' and '\\' escaped and control characters
 * written as \u00XX. */
void mn_strbuf_json_str(mn_strbuf* b, const char* s);

/* Records a warning (keeps the first message, counts all). w may be NULL. */
void mn_warn(mn_warnings* w, const char* file, int line, const char* field, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* ---- reading: one path helper, one error setter, one UTF-8 check, one name map ---------- */

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

/* mn_error_set with a va_list: the one formatted error setter behind every reader's
 * messages ("file:line: field: text"). Returns s. */
mn_status mn_io_errorv(mn_error* err, mn_status s, const char* file, int line, const char* field,
                       const char* fmt, va_list ap);

/* mn_utf8_len (one UTF-8 sequence) is public: io.h. */
/* Is s[0..n) valid UTF-8 text without control characters (C0 and DEL)? */
int mn_utf8_text(const char* s, size_t n);
/* Does the JSON text (which parsed) hold an object with a member name given twice? 1 with
 * the byte offsets of the second one's name and of the first's (json_dup.c), else 0. */
int mn_json_duplicate(const char* text, size_t len, size_t* second, size_t* first);

/* A fixed-capacity hash map from NUL-terminated names to ints (open addressing, FNV-1a).
 * Keys are not copied: they must outlive the map. Sized once for the most names it will
 * hold, so look-ups and insertions take constant expected time. */
typedef struct mn_name_map {
    const char** key;
    int* val;
    size_t mask;
} mn_name_map;
/* Room for up to n names; 0 when out of memory. */
int mn_name_map_init(mn_name_map* m, size_t n);
void mn_name_map_free(mn_name_map* m);
/* The value of key, or -1. */
int mn_name_map_get(const mn_name_map* m, const char* key);
/* Inserts key -> val (val >= 0) and returns -1, or returns the value already stored for key
 * and changes nothing. At most the n of mn_name_map_init names may be put. */
int mn_name_map_put(mn_name_map* m, const char* key, int val);

/* m's joint names, then their aliases -> joint indices (mn_model_find_joint's answers, for
 * many look-ups: it scans). 0 when out of memory. */
int mn_name_map_of_model(mn_name_map* map, const mn_model* m);

/* The checks of mn_read_file_beneath without the opening: uri percent-decoded into *rel
 * (malloc'd; free it), or an error naming the URI as written (a scheme, an absolute path, a
 * backslash, a ".." segment: MN_ERR_UNSUPPORTED; bad percent-encoding: MN_ERR_PARSE). */
mn_status mn_uri_relative(const char* uri, char** rel, mn_error* err);

/* mn_file_kind_of on bytes already read: by name's extension (name may be NULL), then by the
 * first bytes. */
mn_file_kind mn_file_kind_of_mem(const char* name, const void* data, size_t len);
/* The one in-memory figure reader behind mn_figure_read_mem and mn_figure_read_skin(_mem):
 * the reader picked by mn_file_kind_of_mem; scale > 0 scales a BVH figure (any other kind
 * with a scale other than 1 is refused, field "scale"); skin as mn_figure_read_skin. */
struct mn_gltf;
mn_status mn_io_figure_read_mem(const void* data, size_t len, const char* name, double scale,
                                mn_model** model, mn_motion* motion, struct mn_gltf* skin,
                                mn_warnings* warn, mn_error* err);

/* Tests only: makes mn_read_file_beneath use its realpath check instead of openat2. */
void mn_io_beneath_force_fallback(int on);

/* Parses a finite double from s (strtod, then a finiteness and range check); returns 0 on
 * failure. *end, when given, points after the number. */
int mn_parse_double(const char* s, char** end, double* out);

#endif
