/* The path forms of the doc layer's readers and writers (src/doc): each reads the file whole
 * and gives its text to the memory reader with the path as the name for messages, or writes
 * the memory writer's text atomically (the sequence documents': seq_files.c; the conversion
 * of any figure file to a figure document: figure.c). */
#include <marionette/gltf.h>
#include <marionette/meshio.h>
#include <marionette/retarget.h>
#include <marionette/scene.h>
#include <marionette/sequence.h>

#include "doc/doc_codecs.h"
#include "doc/skel_layout.h"
#include "io/io_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- figures: BVH, skeleton text, figure documents ------------------------------------ */

typedef struct bvh_args {
    const mn_bvh_options* opt;
    mn_model** model;
    mn_motion* motion;
    mn_warnings* warn;
} bvh_args;

static mn_status bvh_text(const char* text, size_t len, const char* name, void* args,
                          mn_error* err) {
    bvh_args* a = args;
    return mn_bvh_read_mem(text, len, name, a->opt, a->model, a->motion, a->warn, err);
}

mn_status mn_bvh_read(const char* path, const mn_bvh_options* opt, mn_model** model,
                      mn_motion* motion, mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (motion) memset(motion, 0, sizeof *motion);
    if (!path || !model)
        return mn_error_set(err, MN_ERR_ARG, path ? path : "", 0, "",
                            "path and model are required");
    /* Messages name the file as given. */
    bvh_args a = {opt, model, motion, warn};
    return mn_io_read_path(path, bvh_text, &a, err);
}

mn_status mn_bvh_write(const char* path, const mn_model* m, const mn_motion* motion,
                       mn_error* err) {
    return mn_bvh_write_ex(path, m, motion, NULL, err);
}

mn_status mn_bvh_write_ex(const char* path, const mn_model* m, const mn_motion* motion,
                          const mn_bvh_write_options* opt, mn_error* err) {
    if (!path) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "path and model are required");
    mn_strbuf b;
    mn_status s = mn_bvh_write_text(&b, path, m, motion, opt, err);
    if (s != MN_OK) return s;
    return mn_strbuf_write(&b, path, err);
}

mn_status mn_skel_read(const char* path, mn_model** model, mn_warnings* warn, mn_error* err) {
    return mn_io_read_figure(path, mn_skel_read_mem, model, warn, err);
}

mn_status mn_skel_read_layout(const char* path, mn_model** model, mn_skel_layout** layout,
                              mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (layout) *layout = NULL;
    char* text = NULL;
    size_t len = 0;
    mn_status s = mn_read_file(path, &text, &len, err);
    if (s == MN_OK) s = mn_skel_read_layout_mem(text, len, path, model, layout, warn, err);
    free(text);
    return s;
}

mn_status mn_skel_write(const char* path, const mn_model* m, mn_error* err) {
    return mn_skel_write_layout(path, m, NULL, err);
}

mn_status mn_skel_write_layout(const char* path, const mn_model* m, const mn_skel_layout* layout,
                               mn_error* err) {
    if (!path || !m) return mn_error_set(err, MN_ERR_ARG, path ? path : "", 0, "", "NULL argument");
    if (!mn_skel_check_names(path, m, err)) return MN_ERR_ARG;
    char* text = NULL;
    size_t len = 0;
    mn_status s = mn_skel_write_layout_mem(m, layout, &text, &len, err);
    if (s == MN_OK) s = mn_write_file_atomic(path, text, len, err);
    free(text);
    return s;
}

mn_status mn_figure_doc_write(const char* path, const mn_model* m, const mn_motion* motion,
                              const mn_figure_skin* skin, mn_error* err) {
    if (!path) return mn_error_set(err, MN_ERR_ARG, "", 0, "path", "NULL");
    mn_strbuf b;
    mn_status s = mn_figure_doc_text(&b, path, m, motion, skin, err);
    if (s != MN_OK) return s;
    return mn_strbuf_write(&b, path, err);
}

mn_status mn_figure_doc_read(const char* path, mn_model** model, mn_motion* motion, mn_error* err) {
    if (model) *model = NULL;
    if (motion) memset(motion, 0, sizeof *motion);
    char* text = NULL;
    size_t len = 0;
    mn_status s = mn_read_file(path, &text, &len, err);
    if (s != MN_OK) return s;
    s = mn_figure_doc_read_mem(text, len, path, model, motion, err);
    free(text);
    return s;
}

/* ---- meshes, motion scripts, retargeting maps, scenes ----------------------------------- */

static mn_status obj_text(const char* text, size_t len, const char* name, void* args,
                          mn_error* err) {
    mn_io_out* a = args;
    return mn_obj_read_mem(text, len, name, a->out, a->warn, err);
}

mn_status mn_obj_read(const char* path, mn_mesh* mesh, mn_warnings* warn, mn_error* err) {
    if (!path || !mesh) return mn_error_set(err, MN_ERR_ARG, path, 0, "", "NULL argument");
    memset(mesh, 0, sizeof *mesh);
    mn_io_out a = {mesh, warn};
    return mn_io_read_path(path, obj_text, &a, err);
}

mn_status mn_obj_write(const char* path, int nverts, const double* pos, int ntris, const int* tris,
                       mn_error* err) {
    if (!path || nverts < 0 || (nverts > 0 && !pos) || ntris < 0 || (ntris > 0 && !tris))
        return mn_error_set(err, MN_ERR_ARG, path, 0, "", "bad arguments");
    for (int i = 0; i < 3 * nverts; i++)
        if (!isfinite(pos[i]))
            return mn_error_set(err, MN_ERR_ARG, path, 0, "v", "vertex %d is not finite",
                                i / 3 + 1);
    for (int i = 0; i < 3 * ntris; i++)
        if (tris[i] < 0 || tris[i] >= nverts)
            return mn_error_set(err, MN_ERR_ARG, path, 0, "f", "triangle %d index out of range",
                                i / 3 + 1);
    mn_strbuf b;
    mn_strbuf_init(&b);
    for (int i = 0; i < nverts; i++)
        mn_strbuf_printf(&b, "v %.12g %.12g %.12g\n", pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
    for (int i = 0; i < ntris; i++)
        mn_strbuf_printf(&b, "f %d %d %d\n", tris[3 * i] + 1, tris[3 * i + 1] + 1,
                         tris[3 * i + 2] + 1);
    return mn_strbuf_write(&b, path, err);
}

static mn_status apply_text(const char* text, size_t len, const char* name, void* s,
                            mn_error* err) {
    return mn_motion_script_apply_mem(text, len, name, s, err);
}

mn_status mn_motion_script_apply(const char* path, mn_seq* s, mn_error* err) {
    return mn_io_read_path(path, apply_text, s, err);
}

static mn_status map_text(const char* text, size_t len, const char* name, void* map,
                          mn_error* err) {
    return mn_retarget_map_read_mem(text, len, name, map, err);
}

mn_status mn_retarget_map_read(const char* path, mn_retarget_map* map, mn_error* err) {
    if (!path || !map) return mn_error_set(err, MN_ERR_ARG, "", 0, "map", "NULL argument");
    return mn_io_read_path(path, map_text, map, err);
}

static mn_status scene_text(const char* text, size_t len, const char* name, void* out,
                            mn_error* err) {
    return mn_scene_read_mem(text, len, name, out, err);
}

mn_status mn_scene_read(const char* path, mn_scene** out, mn_error* err) {
    if (out) *out = NULL;
    return mn_io_read_path(path, scene_text, out, err);
}

/* ---- glTF ------------------------------------------------------------------------------- */

mn_status mn_gltf_read_mem(const void* data, size_t len, const char* name, mn_gltf* out,
                           mn_warnings* warn, mn_error* err) {
    return mn_gltf_read_mem_files(data, len, name, mn_read_file_beneath, out, warn, err);
}

mn_status mn_gltf_write(const char* path, const mn_model* m, const mn_motion* motion,
                        const mn_gltf* skin, mn_error* err) {
    return mn_gltf_write_ex(path, m, motion, skin, NULL, err);
}

mn_status mn_gltf_write_ex(const char* path, const mn_model* m, const mn_motion* motion,
                           const mn_gltf* skin, const mn_gltf_write_options* opt, mn_error* err) {
    if (!path || !m) return mn_error_set(err, MN_ERR_ARG, path ? path : "", 0, "", "NULL argument");
    unsigned char* glb = NULL;
    size_t len = 0;
    mn_status s = mn_gltf_glb(path, m, motion, skin, opt, &glb, &len, err);
    if (s == MN_OK) s = mn_write_file_atomic(path, (const char*)glb, len, err);
    free(glb);
    return s;
}

static mn_status gltf_text(const char* text, size_t len, const char* name, void* args,
                           mn_error* err) {
    mn_io_out* a = args;
    return mn_gltf_read_mem(text, len, name, a->out, a->warn, err);
}

mn_status mn_gltf_read(const char* path, mn_gltf* out, mn_warnings* warn, mn_error* err) {
    if (out) memset(out, 0, sizeof *out);
    if (!path || !out) return mn_error_set(err, MN_ERR_ARG, path, 0, "", "NULL argument");
    mn_io_out a = {out, warn};
    return mn_io_read_path(path, gltf_text, &a, err);
}
