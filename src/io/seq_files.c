/* The path forms of the sequence documents' readers and writers (src/doc/sequence_doc.c,
 * seq_figures.c, seq_contacts_write.c), and the file table through which the doc layer reads
 * the figure a document names (mn_io_files: the confined opener, the figure readers). */
#include <marionette/gltf.h>
#include <marionette/sequence.h>

#include "doc/doc_codecs.h"
#include "io/io_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int file_exists(const char* path) {
    return access(path, F_OK) == 0;
}

const mn_doc_files mn_io_files = {file_exists,           mn_file_kind_of, mn_read_file_beneath,
                                  mn_io_figure_read_mem, mn_bvh_read,     mn_figure_read_skin};

/* ---- sequence documents ---------------------------------------------------------------- */

mn_status mn_seq_read_mem(const char* text, size_t len, const char* name, const char* base_dir,
                          const mn_seq_read_options* opt, const mn_model* figure, mn_model** model,
                          mn_seq** seq, mn_seq_doc_info* info, mn_error* err) {
    return mn_seqdoc_read_mem(text, len, name, base_dir, &mn_io_files, opt, figure, model, seq,
                              info, NULL, err);
}

mn_status mn_seq_read_skin_mem(const char* text, size_t len, const char* name, const char* base_dir,
                               const mn_seq_read_options* opt, mn_model** model, mn_seq** seq,
                               mn_seq_doc_info* info, mn_gltf* skin, mn_error* err) {
    return mn_seqdoc_read_mem(text, len, name, base_dir, &mn_io_files, opt, NULL, model, seq, info,
                              skin, err);
}

typedef struct read_args {
    const mn_seq_read_options* opt;
    mn_model** model;
    mn_seq** seq;
    mn_seq_doc_info* info;
    mn_gltf* skin;
} read_args;

/* The figure is found next to the document: its folder is the base. */
static mn_status read_text(const char* text, size_t len, const char* path, void* args,
                           mn_error* err) {
    const read_args* a = args;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char* slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        dir[0] = 0;
    return mn_seqdoc_read_mem(text, len, path, dir, &mn_io_files, a->opt, NULL, a->model, a->seq,
                              a->info, a->skin, err);
}

mn_status mn_seq_read(const char* path, const mn_seq_read_options* opt, mn_model** model,
                      mn_seq** seq, mn_seq_doc_info* info, mn_error* err) {
    if (model) *model = NULL;
    if (seq) *seq = NULL;
    read_args a = {opt, model, seq, info, NULL};
    return mn_io_read_path(path, read_text, &a, err);
}

mn_status mn_seq_read_skin(const char* path, const mn_seq_read_options* opt, mn_model** model,
                           mn_seq** seq, mn_seq_doc_info* info, mn_gltf* skin, mn_error* err) {
    if (model) *model = NULL;
    if (seq) *seq = NULL;
    if (skin) memset(skin, 0, sizeof *skin);
    read_args a = {opt, model, seq, info, skin};
    return mn_io_read_path(path, read_text, &a, err);
}

mn_status mn_seq_write(const char* path, const mn_seq* s, const char* figure, double scale,
                       mn_error* err) {
    char* text = NULL;
    size_t len = 0;
    mn_status st = mn_seq_write_mem(s, figure, scale, &text, &len, err);
    if (st != MN_OK) return st;
    st = mn_write_file_atomic(path, text, len, err);
    free(text);
    return st;
}

mn_status mn_seq_write_doc(const char* path, const mn_seq* s, const mn_seq_doc_info* info,
                           mn_error* err) {
    char* text = NULL;
    size_t len = 0;
    mn_status st = mn_seq_write_doc_mem(s, info, &text, &len, err);
    if (st != MN_OK) return st;
    st = mn_write_file_atomic(path, text, len, err);
    free(text);
    return st;
}

mn_status mn_seq_read_figures_mem(const char* text, size_t len, const char* name,
                                  const char* base_dir, const mn_seq_read_options* opt,
                                  mn_seq_figures* out, mn_error* err) {
    return mn_seqdoc_read_figures_mem(text, len, name, base_dir, &mn_io_files, opt, out, err);
}

typedef struct figs_args {
    const mn_seq_read_options* opt;
    mn_seq_figures* out;
} figs_args;

static mn_status read_figs_text(const char* text, size_t len, const char* path, void* args,
                                mn_error* err) {
    const figs_args* a = args;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char* slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        dir[0] = 0;
    return mn_seq_read_figures_mem(text, len, path, dir, a->opt, a->out, err);
}

mn_status mn_seq_read_figures(const char* path, const mn_seq_read_options* opt, mn_seq_figures* out,
                              mn_error* err) {
    if (out) memset(out, 0, sizeof *out);
    if (!out) return mn_error_set(err, MN_ERR_ARG, path, 0, "sequence", "NULL output");
    figs_args a = {opt, out};
    return mn_io_read_path(path, read_figs_text, &a, err);
}

mn_status mn_seq_write_figures(const char* path, const mn_seq_figures* f, mn_error* err) {
    char* text = NULL;
    size_t len = 0;
    mn_status st = mn_seq_write_figures_mem(f, &text, &len, err);
    if (st != MN_OK) return st;
    st = mn_write_file_atomic(path, text, len, err);
    free(text);
    return st;
}
