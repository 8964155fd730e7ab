/* Private helpers shared by the readers and writers of the doc layer (and, above it, io's). */
#ifndef MN_DOC_INTERNAL_H
#define MN_DOC_INTERNAL_H

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

/* ---- reading: one error setter, one UTF-8 check, one name map ---------------------------- */

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

/* The files a document names beside itself (a sequence's figure, a glTF file's buffers and
 * images) are opened above this layer: the doc layer opens nothing (no <unistd.h>, no
 * <fcntl.h>, no path given to fopen). io fills this table with its confined opener and its
 * path readers (mn_io_files, src/io/seq_files.c); the WebAssembly module, which has no file
 * system, passes NULL, read as mn_doc_no_files. */
struct mn_gltf;
/* mn_read_file_beneath: a file named by an untrusted document, beneath dir */
typedef mn_status (*mn_doc_read_beneath_fn)(const char* dir, const char* uri, size_t max,
                                            char** data, size_t* len, mn_error* err);
typedef struct mn_doc_files {
    /* access(path, F_OK) == 0: is there a file of that name? */
    int (*exists)(const char* path);
    /* mn_file_kind_of: the kind of the file at path */
    mn_file_kind (*kind_of)(const char* path);
    mn_doc_read_beneath_fn read_beneath;
    /* a figure of any kind read from memory (URDF needs libxml2, above this layer); scale and
     * skin as mn_figure_read_skin_mem, a BVH scaled when scale > 0 */
    mn_status (*figure_mem)(const void* data, size_t len, const char* name, double scale,
                            mn_model** model, mn_motion* motion, struct mn_gltf* skin,
                            mn_warnings* warn, mn_error* err);
    /* mn_bvh_read and mn_figure_read_skin: a trusted document's figure, by path */
    mn_status (*bvh_read)(const char* path, const mn_bvh_options* opt, mn_model** model,
                          mn_motion* motion, mn_warnings* warn, mn_error* err);
    mn_status (*figure_read_skin)(const char* path, mn_model** model, mn_motion* motion,
                                  struct mn_gltf* skin, mn_warnings* warn, mn_error* err);
} mn_doc_files;
/* No file system: no file exists, and every read fails with MN_ERR_UNSUPPORTED naming the
 * file ("no files are read here"). */
extern const mn_doc_files mn_doc_no_files;
/* files, or mn_doc_no_files when NULL. */
const mn_doc_files* mn_doc_files_or_none(const mn_doc_files* files);

/* Parses a finite double from s (strtod, then a finiteness and range check); returns 0 on
 * failure. *end, when given, points after the number. */
int mn_parse_double(const char* s, char** end, double* out);

#endif
