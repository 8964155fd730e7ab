/* marionette convert IN OUT: to the skeleton text format, BVH or the figure document. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <marionette/gltf.h>
#include <marionette/meshio.h>

#include "batch.h"
#include "cli.h"
#include "options.h"

const char mn_cmd_convert_summary[] = "convert a figure to skeleton text (.skel), BVH, glTF binary "
                                      "(.glb) or a figure document (.json)";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette convert IN OUT [--anim NAME] [--names-from FIGURE] [--scale S]\n"
            "                                 [--z-up] [--keep-attributes] [--root JOINT]\n"
            "       marionette convert IN... --out-dir DIR [--format bvh|skel|glb|json] [-j N]\n"
            "                                [--force] [--names-from FIGURE]\n"
            "\n"
            "Reads IN (.skel, .bvh, .urdf, .gltf/.glb, or a figure document .json: its figure\n"
            "and motion, the skin left behind) and writes OUT by its extension:\n"
            "  .bvh   the figure and, when IN has motion, every frame (else the rest pose)\n"
            "  .skel  the figure in the thesis skeleton text format (motion is dropped; from a\n"
            "         skeleton file, its comments, groups and mirror lines are kept)\n"
            "  .json  the figure document (docs/figure-document.md): the figure, its motion\n"
            "         and, for glTF, the skin\n"
            "  .glb   glTF 2.0 binary: a node per joint and, when IN has motion, an animation\n"
            "         with a key per frame; from a skinned glTF, its skinned mesh too:\n"
            "         positions, joints and weights (--keep-attributes: its normals, texture\n"
            "         coordinates and tangents as well, and its materials with their\n"
            "         textures, samplers and images, embedded; see docs/gltf.md)\n"
            "A glTF IN gives its first animation, or the one named by --anim, one frame per key\n"
            "when its keys are evenly spaced (else 30 Hz; see docs/gltf.md).\n"
            "OUT is replaced atomically: on any error it is left as it was.\n"
            "Axes and units of a .glb OUT (glTF is +Y up, in metres): a URDF IN (+Z up) is\n"
            "turned at its root so that +Y is up, and so for a .bvh OUT (BVH's convention);\n"
            "--z-up keeps +Z up. A BVH IN's unit is guessed from the figure's height at rest\n"
            "(0.3-3: metres; 15-45: CMU units, scale 0.056444; 45-80: inches; 80-300:\n"
            "centimetres; 800-3000: millimetres) and its lengths scaled to metres, with a\n"
            "note. --scale S multiplies every length by S instead (--scale 1 keeps the file's\n"
            "lengths); for other outputs it needs a BVH IN.\n"
            "BVH names have no spaces ('right arm' is written 'right_arm'). A BVH written from\n"
            "the built-in figure gets its names back by itself; --names-from FIGURE (any figure\n"
            "file) gives a BVH IN the names of the figure it was written from (docs/bvh.md).\n"
            "--root JOINT writes the figure re-rooted at JOINT (a hand or a foot as the root),\n"
            "every joint where it was at every frame (docs/model.md, \"Re-rooting\").\n"
            "\n"
            "With --out-dir, every IN is converted to DIR/<IN's name>.EXT (EXT from --format,\n"
            "default bvh; DIR is created) by N worker threads (-j N, default one per core).\n"
            "An output newer than its IN (and the --names-from FIGURE) is up to date and not\n"
            "redone, so a batch that was stopped resumes where it stopped; --force redoes\n"
            "every file. Ctrl-C finishes the files being written and prints 'interrupted: N\n"
            "of M done'. (--to is the old spelling of --format, accepted for one release.)\n"
            "A progress bar with the rate and the time left is drawn on a terminal, else one\n"
            "line per file ('ok IN -> OUT' or 'FAILED IN: why'); a file that fails does not\n"
            "stop the others; a summary lists the failures. Exit status 1 when any failed.\n");
}

static int ends_with(const char* s, const char* e) {
    size_t n = strlen(s), k = strlen(e);
    return n >= k && !strcasecmp(s + n - k, e);
}

typedef struct convert_ctx {
    const char* anim;
    double scale;             /* --scale; NAN: not given */
    int z_up;                 /* --z-up: a URDF IN keeps +Z up in a .glb */
    int keep;                 /* --keep-attributes: a skinned mesh's normals and UVs go along */
    const mn_model* names_of; /* --names-from: the figure whose names a BVH IN gets back */
    const char* root;         /* --root: the joint the figure is re-rooted at */
    int quiet;                /* a batch: no warnings or notes on stderr */
} convert_ctx;

/* The figure re-rooted at joint `root` (mn_model_reroot), every frame of its motion
 * carried over; a fixed root is fixed where the first frame puts the new root. */
static mn_status reroot_figure(const char* in, const char* root, mn_model** m, mn_motion* mo,
                               int skinned, mn_error* err) {
    int j = mn_model_find_joint(*m, root);
    if (j < 0) {
        char hint[256];
        return mn_error_set(err, MN_ERR_NOTFOUND, in, 0, "--root", "no joint named \"%s\"%s", root,
                            mn_model_joint_hint(*m, root, hint, sizeof hint));
    }
    if (skinned)
        return mn_error_set(err, MN_ERR_ARG, in, 0, "--root",
                            "a skinned figure keeps its root (its skin is bound to the joints "
                            "as they are)");
    mn_model* rm = mn_model_reroot(*m, j, mo->nframes > 0 ? mo->q : NULL, err);
    if (!rm) {
        mn_error why = *err;
        const char* msg = why.message; /* "joint: why" without its field */
        size_t fl = strlen(why.field);
        if (fl && !strncmp(msg, why.field, fl) && msg[fl] == ':') msg += fl + (msg[fl + 1] ? 2 : 1);
        return mn_error_set(err, why.status, in, 0, "--root", "%s", msg);
    }
    double* q = NULL;
    if (mo->nframes > 0) {
        q = malloc(sizeof(double) * (size_t)mo->nframes * (size_t)(rm->nq ? rm->nq : 1));
        if (!q) {
            mn_model_destroy(rm);
            return mn_error_set(err, MN_ERR_NOMEM, in, 0, "--root", "out of memory");
        }
        for (int f = 0; f < mo->nframes; f++)
            if (mn_model_reroot_state(*m, mo->q + (size_t)f * (*m)->nq, rm, q + (size_t)f * rm->nq,
                                      err) != MN_OK) {
                free(q);
                mn_model_destroy(rm);
                return err->status;
            }
        free(mo->q);
        mo->q = q;
        mo->nq = rm->nq;
    }
    mn_model_destroy(*m);
    *m = rm;
    return MN_OK;
}

/* One conversion, by OUT's extension. */
static mn_status convert_one(const char* in, const char* out, void* ctxp, mn_error* err) {
    const convert_ctx* ctx = ctxp;
    const char* anim = ctx->anim;
    mn_warnings w = {0};
    mn_file_kind kind = mn_file_kind_of(in);
    int named = ctx->names_of && kind == MN_FILE_BVH;
    /* a BVH IN read at --scale gives every output that scale; a .glb scales at writing */
    int read_scaled = !isnan(ctx->scale) && kind == MN_FILE_BVH && !ends_with(out, ".glb");
    if (!isnan(ctx->scale) && kind != MN_FILE_BVH && !ends_with(out, ".glb"))
        return mn_error_set(err, MN_ERR_ARG, in, 0, "--scale", "is for a .glb OUT or a BVH IN");
    /* a figure document IN: read back (what the WebAssembly module reads and writes too) */
    int from_doc = ends_with(in, ".json");
    if (ends_with(out, ".json") && !named && !read_scaled && !ctx->root && !from_doc) {
        mn_status s = mn_figure_doc_convert(in, out, &w, err);
        if (s == MN_OK && !ctx->quiet) mn_cli_print_warnings(&w);
        return s;
    }
    int to_bvh = ends_with(out, ".bvh"), to_glb = ends_with(out, ".glb"),
        to_skel = ends_with(out, ".skel") || ends_with(out, ".scr");
    int from_gltf = !from_doc && mn_file_kind_of(in) == MN_FILE_GLTF;
    mn_model* m = NULL;
    mn_motion mo;
    mn_gltf g;
    memset(&g, 0, sizeof g);
    memset(&mo, 0, sizeof mo);
    if (from_gltf) {
        /* the animation asked for (default the first), at its own key times when evenly
         * spaced; a skinned mesh goes along into a .glb */
        if (mn_gltf_read(in, &g, &w, err) != MN_OK) return err->status;
        m = mn_gltf_model(&g, err);
        int a = anim ? mn_gltf_find_anim(&g, anim) : g.nanims > 0 ? 0 : -1;
        mn_status rs = !m              ? err->status
                       : anim && a < 0 ? mn_error_set(err, MN_ERR_NOTFOUND, in, 0, "--anim",
                                                      "no animation named '%s'", anim)
                       : a >= 0        ? mn_gltf_motion_keys(&g, m, a, in, &mo, &w, err)
                                       : MN_OK;
        if (rs != MN_OK) {
            mn_model_destroy(m);
            mn_gltf_free(&g);
            return rs;
        }
    } else if (from_doc) {
        if (mn_figure_doc_read(in, &m, &mo, err) != MN_OK) return err->status;
    } else if (named || read_scaled) {
        mn_bvh_options o = mn_bvh_default();
        o.names_of = ctx->names_of;
        if (read_scaled) o.scale = ctx->scale;
        if (mn_bvh_read(in, &o, &m, &mo, &w, err) != MN_OK) return err->status;
    } else if (mn_figure_read(in, &m, &mo, &w, err) != MN_OK) {
        return err->status;
    }
    if (!ctx->quiet) mn_cli_print_warnings(&w);
    if (ctx->root) {
        mn_status rs = reroot_figure(in, ctx->root, &m, &mo, g.nverts > 0, err);
        if (rs != MN_OK) {
            mn_motion_free(&mo);
            mn_model_destroy(m);
            mn_gltf_free(&g);
            return rs;
        }
    }
    /* glTF's axes (+Y up) and unit (the metre): a URDF (+Z up) turned at its root, a BVH's
     * lengths scaled to metres by its height unless --scale says otherwise */
    mn_gltf_write_options go = mn_gltf_write_default();
    go.keep_attributes = ctx->keep;
    mn_bvh_write_options bo = mn_bvh_write_default();
    if ((to_glb || to_bvh) && kind == MN_FILE_URDF && !ctx->z_up) {
        go.root_rot = bo.root_rot = mn_q4(sqrt(0.5), -sqrt(0.5), 0, 0);
        if (!ctx->quiet)
            fprintf(stderr,
                    "marionette: note: %s is +Z up (URDF): turned so that +Y is up, as %s is "
                    "(--z-up keeps +Z up)\n",
                    mn_cli_safe(in), to_glb ? "glTF" : "BVH");
    }
    if (to_glb && !isnan(ctx->scale)) {
        go.scale = ctx->scale;
    } else if (to_glb && kind == MN_FILE_BVH) {
        const char* units;
        double h;
        go.scale = mn_gltf_guess_scale(m, go.root_rot, &h, &units);
        if (!ctx->quiet)
            fprintf(stderr,
                    "marionette: note: %s is %.4g tall at rest: taken as %s, written at scale "
                    "%g (%.3g m tall; --scale 1 keeps the file's lengths)\n",
                    mn_cli_safe(in), h, units, go.scale, h * go.scale);
    }
    /* the joints' polygon objects (a skeleton text's `object`), read beside IN, go into a
     * .glb as meshes on their joints */
    mn_objects obj;
    memset(&obj, 0, sizeof obj);
    int has_objects = 0;
    for (int j = 0; j < m->njoint && to_glb; j++)
        has_objects |= m->jnt_object[j] && m->jnt_object[j][0];
    if (has_objects) {
        char dir[1024];
        const char* slash = strrchr(in, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - in) : 0, in);
        mn_warnings ow = {0};
        if (mn_objects_read(m, dir, &obj, &ow, err) != MN_OK) {
            mn_motion_free(&mo);
            mn_model_destroy(m);
            mn_gltf_free(&g);
            return err->status;
        }
        if (!ctx->quiet) mn_cli_print_warnings(&ow);
        go.objects = &obj;
    }
    /* skeleton text to skeleton text keeps the file's comments, groups and mirror lines */
    mn_skel_layout* layout = NULL;
    if (to_skel && kind == MN_FILE_SKEL && !ctx->root) {
        mn_model* again = NULL;
        mn_error e2;
        if (mn_skel_read_layout(in, &again, &layout, NULL, &e2) == MN_OK) mn_model_destroy(again);
    }
    mn_status s = ends_with(out, ".json")
                      ? mn_figure_doc_write(out, m, mo.nframes > 0 ? &mo : NULL, NULL, err)
                  : to_bvh ? mn_bvh_write_ex(out, m, mo.nframes > 0 ? &mo : NULL, &bo, err)
                  : to_glb ? mn_gltf_write_ex(out, m, mo.nframes > 0 ? &mo : NULL,
                                              g.nverts > 0 ? &g : NULL, &go, err)
                           : mn_skel_write_layout(out, m, layout, err);
    mn_objects_free(&obj);
    mn_skel_layout_free(layout);
    mn_gltf_free(&g);
    if (to_skel && mo.nframes > 0 && s == MN_OK && !ctx->quiet)
        fprintf(
            stderr,
            "marionette: note: %s holds the figure only; the %d motion frames were not written\n",
            mn_cli_safe(out), mo.nframes);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return s;
}

typedef struct convert_args {
    const char *anim, *out_dir, *format, *names_from, *root;
    int jobs, force, z_up, keep;
    double scale; /* NAN unless --scale is given */
} convert_args;

#define AT(f, t) MN_CLI_AT(convert_args, f, t)
static const mn_cli_opt convert_opts[] = {
    {"-j", MN_CLI_INT, AT(jobs, int), 1, INT_MAX, .bad = "-j needs a number of workers >= 1",
     .alias = "--jobs"},
    {"--force", MN_CLI_FLAG, AT(force, int), .lo = 1},
    {"--z-up", MN_CLI_FLAG, AT(z_up, int), .lo = 1},
    {"--keep-attributes", MN_CLI_FLAG, AT(keep, int), .lo = 1},
    {"--scale", MN_CLI_DOUBLE, AT(scale, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--scale needs a number > 0"},
    {"--anim", MN_CLI_STRING, AT(anim, const char*), .bad = "%s needs a value"},
    {"--out-dir", MN_CLI_STRING, AT(out_dir, const char*), .bad = "%s needs a value"},
    {"--format", MN_CLI_STRING, AT(format, const char*), .bad = "%s needs a value", .alias = "--to",
     .note = "--to is now --format (the output format; --to names a target figure in "
             "retarget); --to is accepted until the next release"},
    {"--names-from", MN_CLI_STRING, AT(names_from, const char*), .bad = "%s needs a value"},
    {"--root", MN_CLI_STRING, AT(root, const char*), .bad = "%s needs a value"},
};
#undef AT
const mn_cli_table mn_cmd_convert_options = {
    .cmd = "convert",
    MN_CLI_OPTS(convert_opts),
    .unknown = "unknown option '%s'",
    .max_pos = -1,
};

/* Many inputs into --out-dir (docs/batch.md). */
static int convert_many(const convert_args* a, char** pos, int npos, convert_ctx* ctx) {
    const char* to = a->format ? a->format : "bvh";
    mn_model* names_of = NULL;
    mn_error err;
    int rc = -1;
    if (strcmp(to, "bvh") && strcmp(to, "skel") && strcmp(to, "glb") && strcmp(to, "json"))
        rc = mn_cli_usage_error("convert", "--format must be bvh, skel, glb or json");
    else if (npos == 0)
        rc = mn_cli_usage_error("convert", "need input files");
    if (rc < 0 && a->names_from &&
        mn_figure_read(a->names_from, &names_of, NULL, NULL, &err) != MN_OK)
        rc = mn_cli_input_error(&err);
    if (rc < 0) {
        char ext[16];
        snprintf(ext, sizeof ext, ".%s", to);
        ctx->quiet = 1;
        ctx->names_of = names_of;
        const char* deps[2] = {a->names_from, NULL};
        rc = mn_cli_batch("convert", pos, npos, a->out_dir, ext, a->jobs, a->force, deps,
                          convert_one, ctx);
    }
    mn_model_destroy(names_of);
    return rc;
}

/* One IN to one OUT, with the checks of what goes with what. */
static int convert_single(const convert_args* a, char** pos, int npos, convert_ctx* ctx) {
    const char* in = npos > 0 ? pos[0] : NULL;
    const char* out = npos > 1 ? pos[1] : NULL;
    if (a->format || a->jobs || a->force)
        return mn_cli_usage_error("convert", "--format, -j and --force go with --out-dir");
    if (npos > 2)
        return mn_cli_usage_error("convert", "too many arguments (many inputs need --out-dir)");
    if (!in || !out) return mn_cli_usage_error("convert", "need IN and OUT");
    int to_bvh = ends_with(out, ".bvh"),
        to_skel = ends_with(out, ".skel") || ends_with(out, ".scr"),
        to_glb = ends_with(out, ".glb"), to_json = ends_with(out, ".json");
    if (to_json && a->anim)
        return mn_cli_usage_error("convert", "--anim is for .bvh, .skel and .glb output");
    if (!to_bvh && !to_skel && !to_glb && !to_json)
        return mn_cli_usage_error("convert", "OUT must end in .bvh, .skel, .glb or .json");
    if (a->anim && !to_json && mn_file_kind_of(in) != MN_FILE_GLTF)
        return mn_cli_usage_error("convert", "--anim is for glTF input");
    if (!isnan(a->scale) && !to_glb && mn_file_kind_of(in) != MN_FILE_BVH)
        return mn_cli_usage_error("convert", "--scale is for a .glb OUT or a BVH IN");
    if (a->z_up && ((!to_glb && !to_bvh) || mn_file_kind_of(in) != MN_FILE_URDF))
        return mn_cli_usage_error("convert", "--z-up is for a URDF IN and a .glb or .bvh OUT");
    if (a->names_from && mn_file_kind_of(in) != MN_FILE_BVH)
        return mn_cli_usage_error("convert", "--names-from is for a BVH IN");
    mn_model* names_of = NULL;
    mn_error err;
    if (a->names_from && mn_figure_read(a->names_from, &names_of, NULL, NULL, &err) != MN_OK)
        return mn_cli_input_error(&err);
    ctx->names_of = names_of;
    int rc = convert_one(in, out, ctx, &err) == MN_OK ? MN_EXIT_OK : mn_cli_input_error(&err);
    mn_model_destroy(names_of);
    return rc;
}

int mn_cmd_convert(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    convert_args a;
    memset(&a, 0, sizeof a);
    a.scale = NAN;
    const char** pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!pos) return MN_EXIT_INPUT;
    int npos = 0;
    int rc = mn_cli_parse(&mn_cmd_convert_options, argc, argv, &a, pos, &npos);
    if (!rc) {
        convert_ctx ctx = {a.anim, a.scale, a.z_up, a.keep, NULL, a.root, 0};
        rc = a.out_dir ? convert_many(&a, (char**)pos, npos, &ctx)
                       : convert_single(&a, (char**)pos, npos, &ctx);
    }
    free(pos);
    return rc;
}
