/* What the doc layer knows of files: the kind of a figure file from its name and first
 * bytes, and the file table of a layer that opens none (doc_internal.h, mn_doc_files). */
#include "doc/doc_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int has_ext(const char* path, const char* ext) {
    size_t n = strlen(path), e = strlen(ext);
    return n > e && !strcasecmp(path + n - e, ext);
}

mn_file_kind mn_file_kind_of_mem(const char* name, const void* data, size_t len) {
    if (name) {
        if (has_ext(name, ".bvh")) return MN_FILE_BVH;
        if (has_ext(name, ".urdf")) return MN_FILE_URDF;
        if (has_ext(name, ".gltf") || has_ext(name, ".glb")) return MN_FILE_GLTF;
        if (has_ext(name, ".skel") || has_ext(name, ".scr")) return MN_FILE_SKEL;
    }
    char head[513];
    size_t n = len < sizeof head - 1 ? len : sizeof head - 1;
    if (n) memcpy(head, data, n);
    head[n] = 0;
    if (n >= 4 && !memcmp(head, "glTF", 4)) return MN_FILE_GLTF;
    if (strstr(head, "HIERARCHY")) return MN_FILE_BVH;
    if (strstr(head, "<robot")) return MN_FILE_URDF;
    if (strstr(head, "define skeleton")) return MN_FILE_SKEL;
    if (strstr(head, "\"asset\"")) return MN_FILE_GLTF;
    return MN_FILE_UNKNOWN;
}

static int no_file(const char* path) {
    return 0;
}

static mn_file_kind no_kind(const char* path) {
    return MN_FILE_UNKNOWN;
}

static mn_status no_read_beneath(const char* dir, const char* uri, size_t max, char** data,
                                 size_t* len, mn_error* err) {
    if (data) *data = NULL;
    if (len) *len = 0;
    return mn_error_set(err, MN_ERR_UNSUPPORTED, uri ? uri : "", 0, "", "no files are read here");
}

static mn_status no_figure_mem(const void* data, size_t len, const char* name, double scale,
                               mn_model** model, mn_motion* motion, struct mn_gltf* skin,
                               mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    return mn_error_set(err, MN_ERR_UNSUPPORTED, name ? name : "", 0, "",
                        "no figure files are read here");
}

static mn_status no_bvh_read(const char* path, const mn_bvh_options* opt, mn_model** model,
                             mn_motion* motion, mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    return mn_error_set(err, MN_ERR_UNSUPPORTED, path ? path : "", 0, "", "no files are read here");
}

static mn_status no_figure_read_skin(const char* path, mn_model** model, mn_motion* motion,
                                     struct mn_gltf* skin, mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    return mn_error_set(err, MN_ERR_UNSUPPORTED, path ? path : "", 0, "", "no files are read here");
}

const mn_doc_files mn_doc_no_files = {no_file,       no_kind,     no_read_beneath,
                                      no_figure_mem, no_bvh_read, no_figure_read_skin};

const mn_doc_files* mn_doc_files_or_none(const mn_doc_files* files) {
    return files ? files : &mn_doc_no_files;
}
