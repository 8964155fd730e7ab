/* Any figure file: pick the reader by extension, then by content. */
#include "doc/bvh_internal.h"
#include "io/io_internal.h"

#include <marionette/gltf.h>
#include <marionette/meshio.h>
#include <marionette/skin.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

mn_file_kind mn_file_kind_of(const char* path) {
    if (!path) return MN_FILE_UNKNOWN;
    mn_file_kind k = mn_file_kind_of_mem(path, "", 0);
    if (k != MN_FILE_UNKNOWN) return k;
    /* Sniff the first bytes of a regular file (opened non-blocking: a FIFO would wait). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return MN_FILE_UNKNOWN;
    struct stat st;
    char head[512];
    ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof head) : -1;
    close(fd);
    if (got < 0) return MN_FILE_UNKNOWN;
    return mn_file_kind_of_mem(NULL, head, (size_t)got);
}

/* Was m read from a BVH that mn_bvh_write wrote from figure f? Every joint is one of f's
 * joints by its name as written (End Sites aside: FIXED leaves "<parent>_end"), and at least
 * one name was changed by the writing (whitespace written '_'), so reading with f's names
 * changes something. */
static int written_from(const mn_model* m, const mn_model* f) {
    char** w = calloc((size_t)f->njoint + 1, sizeof *w);
    int ok = w != NULL, changed = 0;
    for (int k = 0; ok && k < f->njoint; k++)
        ok = (w[k] = mn_bvh_name_written(f->jnt_name[k])) != NULL;
    for (int j = 0; ok && j < m->njoint; j++) {
        const char* n = m->jnt_name[j];
        size_t len = strlen(n);
        if (m->jnt_type[j] == MN_JOINT_FIXED && m->jnt_nchild[j] == 0 && len > 4 &&
            !strcmp(n + len - 4, "_end"))
            continue;
        int hit = 0;
        for (int k = 0; k < f->njoint && !hit; k++)
            if (!strcmp(w[k], n)) hit = 1, changed |= strcmp(w[k], f->jnt_name[k]) != 0;
        ok = hit;
    }
    for (int k = 0; w && k < f->njoint; k++)
        free(w[k]);
    free(w);
    return ok && changed;
}

/* A BVH file (path, or data of len bytes named name); one written from the built-in figure
 * ("right_arm") is read back with the figure's names ("right arm", mn_bvh_options.names_of). */
static mn_status read_bvh(const char* path, const void* data, size_t len, const char* name,
                          mn_bvh_options opt, mn_model** model, mn_motion* motion,
                          mn_warnings* warn, mn_error* err) {
    mn_status s = path ? mn_bvh_read(path, &opt, model, motion, warn, err)
                       : mn_bvh_read_mem(data, len, name, &opt, model, motion, warn, err);
    if (s != MN_OK) return s;
    mn_model* stick = mn_stickman_model(NULL);
    if (stick && written_from(*model, stick)) {
        opt.names_of = stick;
        mn_model* named = NULL;
        mn_motion mo;
        mn_error e;
        /* the same file again (its warnings were given the first time) */
        s = path ? mn_bvh_read(path, &opt, &named, motion ? &mo : NULL, NULL, &e)
                 : mn_bvh_read_mem(data, len, name, &opt, &named, motion ? &mo : NULL, NULL, &e);
        if (s == MN_OK) {
            mn_model_destroy(*model);
            *model = named;
            if (motion) {
                mn_motion_free(motion);
                *motion = mo;
            }
        }
    }
    mn_model_destroy(stick);
    return MN_OK;
}

mn_status mn_io_figure_read_mem(const void* data, size_t len, const char* name, double scale,
                                mn_model** model, mn_motion* motion, mn_gltf* skin,
                                mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (motion) memset(motion, 0, sizeof *motion);
    if (skin) memset(skin, 0, sizeof *skin);
    if (!name) name = "<memory>";
    if (!data || !model) return mn_error_set(err, MN_ERR_ARG, name, 0, "", "NULL argument");
    mn_file_kind kind = mn_file_kind_of_mem(name, data, len);
    if (scale > 0 && scale != 1 && kind != MN_FILE_BVH)
        return mn_error_set(err, MN_ERR_PARSE, name, 0, "scale",
                            "a scale applies to BVH figures only");
    switch (kind) {
    case MN_FILE_BVH: {
        mn_bvh_options bo = mn_bvh_default();
        if (scale > 0) bo.scale = scale;
        return read_bvh(NULL, data, len, name, bo, model, motion, warn, err);
    }
    case MN_FILE_URDF:
        return mn_urdf_read_mem(data, len, name, model, warn, err);
    case MN_FILE_SKEL:
        return mn_skel_read_mem(data, len, name, model, warn, err);
    case MN_FILE_GLTF:
        break;
    default:
        return mn_error_set(err, MN_ERR_PARSE, name, 0, "",
                            "unknown figure format (expected .bvh, .urdf, .skel, .gltf or .glb)");
    }
    mn_gltf g;
    mn_status s = mn_gltf_read_mem(data, len, name, &g, warn, err);
    if (s != MN_OK) return s;
    /* the model is built from the same mn_gltf the skin is kept from: its joints are the
     * skin's, in the skin's order */
    *model = mn_gltf_model(&g, err);
    if (!*model) {
        mn_gltf_free(&g);
        return err ? err->status : MN_ERR_PARSE;
    }
    /* The first animation is the file's motion (mn_gltf_motion_keys). */
    if (motion && g.nanims > 0) {
        s = mn_gltf_motion_keys(&g, *model, 0, name, motion, warn, err);
        if (s != MN_OK) {
            mn_model_destroy(*model);
            *model = NULL;
            mn_gltf_free(&g);
            return s;
        }
    }
    if (skin && g.nverts > 0)
        *skin = g;
    else
        mn_gltf_free(&g);
    return MN_OK;
}

mn_status mn_figure_read_skin_mem(const void* data, size_t len, const char* name, mn_model** model,
                                  mn_motion* motion, mn_gltf* skin, mn_warnings* warn,
                                  mn_error* err) {
    return mn_io_figure_read_mem(data, len, name, 0, model, motion, skin, warn, err);
}

mn_status mn_figure_read_mem(const void* data, size_t len, const char* name, mn_model** model,
                             mn_motion* motion, mn_warnings* warn, mn_error* err) {
    return mn_io_figure_read_mem(data, len, name, 0, model, motion, NULL, warn, err);
}

typedef struct skin_args {
    mn_model** model;
    mn_motion* motion;
    mn_gltf* skin;
    mn_warnings* warn;
} skin_args;

static mn_status skin_text(const char* text, size_t len, const char* name, void* args,
                           mn_error* err) {
    skin_args* a = args;
    return mn_io_figure_read_mem(text, len, name, 0, a->model, a->motion, a->skin, a->warn, err);
}

mn_status mn_figure_read_skin(const char* path, mn_model** model, mn_motion* motion, mn_gltf* skin,
                              mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (motion) memset(motion, 0, sizeof *motion);
    if (skin) memset(skin, 0, sizeof *skin);
    if (!path || !model) return mn_error_set(err, MN_ERR_ARG, "", 0, "path", "no file given");
    if (mn_file_kind_of(path) != MN_FILE_GLTF)
        return mn_figure_read(path, model, motion, warn, err);
    skin_args a = {model, motion, skin, warn};
    return mn_io_read_path(path, skin_text, &a, err);
}

mn_status mn_figure_read(const char* path, mn_model** model, mn_motion* motion, mn_warnings* warn,
                         mn_error* err) {
    if (model) *model = NULL;
    if (motion) memset(motion, 0, sizeof *motion);
    if (!path || !model) return mn_error_set(err, MN_ERR_ARG, "", 0, "path", "no file given");
    /* "stickman", when no file has that name, is the built-in default figure. */
    if (!strcmp(path, "stickman") && access(path, F_OK) != 0) {
        *model = mn_stickman_model(err);
        return *model ? MN_OK : (err ? err->status : MN_ERR_PARSE);
    }
    switch (mn_file_kind_of(path)) {
    case MN_FILE_BVH:
        return read_bvh(path, NULL, 0, NULL, mn_bvh_default(), model, motion, warn, err);
    case MN_FILE_URDF:
        return mn_urdf_read(path, model, warn, err);
    case MN_FILE_SKEL:
        return mn_skel_read(path, model, warn, err);
    case MN_FILE_GLTF:
        return mn_figure_read_skin(path, model, motion, NULL, warn, err);
    default:
        break;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return mn_error_set(err, MN_ERR_IO, path, 0, "", "cannot open: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return mn_error_set(err, MN_ERR_IO, path, 0, "", "not a regular file");
    return mn_error_set(err, MN_ERR_PARSE, path, 0, "",
                        "unknown figure format (expected .bvh, .urdf, .skel, .gltf or .glb)");
}

/* ---- any figure file as a figure document (mn_figure_doc_write_mem, src/doc) ---------- */

mn_status mn_figure_doc_convert_mem(const void* data, size_t len, const char* name, char** text,
                                    size_t* text_len, mn_warnings* warn, mn_error* err) {
    if (text) *text = NULL;
    if (text_len) *text_len = 0;
    if (!text) return mn_error_set(err, MN_ERR_ARG, name ? name : "", 0, "text", "NULL");
    mn_model* m = NULL;
    mn_motion mo;
    mn_gltf g;
    mn_status s = mn_figure_read_skin_mem(data, len, name, &m, &mo, &g, warn, err);
    if (s != MN_OK) return s;
    mn_rig* rig = NULL;
    int* cj = NULL;
    mn_figure_skin skin = {0};
    if (g.nverts > 0) {
        s = mn_rig_from_gltf(&g, &rig, &cj, err);
        if (s == MN_OK) {
            /* controllers carry the skin joint index; the document names model joints */
            for (int c = 0; c < rig->nctrl; c++)
                cj[c] = mn_model_find_joint(m, g.joint_name[cj[c]]);
            skin.rig = rig;
            skin.ctrl_joint = cj;
            skin.ntris = g.ntris;
            skin.tris = g.tris;
        }
    }
    if (s == MN_OK)
        s = mn_figure_doc_write_mem(m, &mo, skin.rig ? &skin : NULL, text, text_len, err);
    free(cj);
    mn_rig_destroy(rig);
    mn_gltf_free(&g);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return s;
}

mn_status mn_figure_doc_convert(const char* in, const char* out, mn_warnings* warn, mn_error* err) {
    if (!in || !out) return mn_error_set(err, MN_ERR_ARG, "", 0, "path", "NULL");
    char* data = NULL;
    size_t len = 0;
    mn_status s;
    /* "stickman", when no file has that name, is the built-in default figure */
    int builtin = !strcmp(in, "stickman") && access(in, F_OK) != 0;
    if (builtin) {
        len = strlen(mn_stickman_text());
        s = MN_OK;
    } else {
        s = mn_read_file(in, &data, &len, err);
    }
    char* text = NULL;
    size_t tlen = 0;
    if (s == MN_OK)
        s = mn_figure_doc_convert_mem(builtin ? mn_stickman_text() : data, len,
                                      builtin ? "stickman" : in, &text, &tlen, warn, err);
    free(data);
    if (s == MN_OK) s = mn_write_file_atomic(out, text, tlen, err);
    free(text);
    return s;
}
