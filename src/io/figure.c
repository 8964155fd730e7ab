/* Any figure file: pick the reader by extension, then by content. */
#include "io/bvh_internal.h"
#include "io/io_internal.h"

#include <marionette/gltf.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static int has_ext(const char* path, const char* ext) {
    size_t n = strlen(path), e = strlen(ext);
    return n > e && !strcasecmp(path + n - e, ext);
}

mn_file_kind mn_file_kind_of(const char* path) {
    if (!path) return MN_FILE_UNKNOWN;
    if (has_ext(path, ".bvh")) return MN_FILE_BVH;
    if (has_ext(path, ".urdf")) return MN_FILE_URDF;
    if (has_ext(path, ".gltf") || has_ext(path, ".glb")) return MN_FILE_GLTF;
    if (has_ext(path, ".skel") || has_ext(path, ".scr")) return MN_FILE_SKEL;
    /* Sniff the first bytes of a regular file (opened non-blocking: a FIFO would wait). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return MN_FILE_UNKNOWN;
    struct stat st;
    char head[513];
    ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof head - 1) : -1;
    close(fd);
    if (got < 0) return MN_FILE_UNKNOWN;
    size_t n = (size_t)got;
    head[n] = 0;
    if (n >= 4 && !memcmp(head, "glTF", 4)) return MN_FILE_GLTF;
    if (strstr(head, "HIERARCHY")) return MN_FILE_BVH;
    if (strstr(head, "<robot")) return MN_FILE_URDF;
    if (strstr(head, "define skeleton")) return MN_FILE_SKEL;
    if (strstr(head, "\"asset\"")) return MN_FILE_GLTF;
    return MN_FILE_UNKNOWN;
}

mn_status mn_figure_read_skin(const char* path, mn_model** model, mn_motion* motion, mn_gltf* skin,
                              mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (motion) memset(motion, 0, sizeof *motion);
    if (skin) memset(skin, 0, sizeof *skin);
    if (!path || !model) return mn_error_set(err, MN_ERR_ARG, "", 0, "path", "no file given");
    if (mn_file_kind_of(path) != MN_FILE_GLTF)
        return mn_figure_read(path, model, motion, warn, err);
    mn_gltf g;
    mn_status s = mn_gltf_read(path, &g, warn, err);
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
        s = mn_gltf_motion_keys(&g, *model, 0, path, motion, warn, err);
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

/* A BVH file; one written from the built-in figure ("right_arm") is read back with the
 * figure's names ("right arm", mn_bvh_options.names_of). */
static mn_status read_bvh(const char* path, mn_model** model, mn_motion* motion, mn_warnings* warn,
                          mn_error* err) {
    mn_status s = mn_bvh_read(path, NULL, model, motion, warn, err);
    if (s != MN_OK) return s;
    mn_model* stick = mn_stickman_model(NULL);
    if (stick && written_from(*model, stick)) {
        mn_bvh_options o = mn_bvh_default();
        o.names_of = stick;
        mn_model* named = NULL;
        mn_motion mo;
        mn_error e;
        /* the same file again (its warnings were given the first time) */
        if (mn_bvh_read(path, &o, &named, motion ? &mo : NULL, NULL, &e) == MN_OK) {
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
        return read_bvh(path, model, motion, warn, err);
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
