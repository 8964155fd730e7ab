/* marionette convert IN OUT: to the skeleton text format, BVH or the figure document. */
#include <string.h>
#include <strings.h>

#include <marionette/gltf.h>

#include "cli.h"

const char mn_cmd_convert_summary[] = "convert a figure to skeleton text (.skel), BVH, glTF binary "
                                      "(.glb) or a figure document (.json)";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette convert IN OUT [--anim NAME]\n"
            "\n"
            "Reads IN (.skel, .bvh, .urdf, .gltf/.glb) and writes OUT by its extension:\n"
            "  .bvh   the figure and, when IN has motion, every frame (else the rest pose)\n"
            "  .skel  the figure in the thesis skeleton text format (motion is dropped)\n"
            "  .json  the figure document (docs/figure-document.md): the figure, its motion\n"
            "         and, for glTF, the skin\n"
            "  .glb   glTF 2.0 binary: a node per joint and, when IN has motion, an animation\n"
            "         with a key per frame; from a skinned glTF, its skinned mesh too\n"
            "A glTF IN gives its first animation, or the one named by --anim, one frame per key\n"
            "when its keys are evenly spaced (else 30 Hz; see docs/gltf.md).\n"
            "OUT is replaced atomically: on any error it is left as it was.\n");
}

static int ends_with(const char* s, const char* e) {
    size_t n = strlen(s), k = strlen(e);
    return n >= k && !strcasecmp(s + n - k, e);
}

int mn_cmd_convert(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    const char *in = NULL, *out = NULL, *anim = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--anim")) {
            if (i + 1 >= argc)
                return mn_cli_usage_error("convert", "--anim needs an animation name");
            anim = argv[++i];
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return mn_cli_usage_error("convert", "unknown option '%s'", argv[i]);
        if (!in)
            in = argv[i];
        else if (!out)
            out = argv[i];
        else
            return mn_cli_usage_error("convert", "too many arguments");
    }
    if (!in || !out) return mn_cli_usage_error("convert", "need IN and OUT");
    int to_bvh = ends_with(out, ".bvh"),
        to_skel = ends_with(out, ".skel") || ends_with(out, ".scr");
    if (ends_with(out, ".json")) {
        if (anim) return mn_cli_usage_error("convert", "--anim is for .bvh, .skel and .glb output");
        mn_warnings w = {0};
        mn_error err;
        if (mn_figure_doc_convert(in, out, &w, &err) != MN_OK) return mn_cli_input_error(&err);
        mn_cli_print_warnings(&w);
        return MN_EXIT_OK;
    }
    int to_glb = ends_with(out, ".glb");
    if (!to_bvh && !to_skel && !to_glb)
        return mn_cli_usage_error("convert", "OUT must end in .bvh, .skel, .glb or .json");
    int from_gltf = mn_file_kind_of(in) == MN_FILE_GLTF;
    if (anim && !from_gltf) return mn_cli_usage_error("convert", "--anim is for glTF input");
    mn_model* m = NULL;
    mn_motion mo;
    mn_warnings w = {0};
    mn_error err;
    mn_gltf g;
    memset(&g, 0, sizeof g);
    memset(&mo, 0, sizeof mo);
    if (from_gltf) {
        /* the animation asked for (default the first), at its own key times when evenly
         * spaced; a skinned mesh goes along into a .glb */
        if (mn_gltf_read(in, &g, &w, &err) != MN_OK) return mn_cli_input_error(&err);
        m = mn_gltf_model(&g, &err);
        int a = anim ? mn_gltf_find_anim(&g, anim) : g.nanims > 0 ? 0 : -1;
        mn_status rs = !m              ? err.status
                       : anim && a < 0 ? mn_error_set(&err, MN_ERR_NOTFOUND, in, 0, "--anim",
                                                      "no animation named '%s'", anim)
                       : a >= 0        ? mn_gltf_motion_keys(&g, m, a, in, &mo, &w, &err)
                                       : MN_OK;
        if (rs != MN_OK) {
            mn_model_destroy(m);
            mn_gltf_free(&g);
            return mn_cli_input_error(&err);
        }
    } else if (mn_figure_read(in, &m, &mo, &w, &err) != MN_OK) {
        return mn_cli_input_error(&err);
    }
    mn_cli_print_warnings(&w);
    mn_status s = to_bvh   ? mn_bvh_write(out, m, mo.nframes > 0 ? &mo : NULL, &err)
                  : to_glb ? mn_gltf_write(out, m, mo.nframes > 0 ? &mo : NULL,
                                           g.nverts > 0 ? &g : NULL, &err)
                           : mn_skel_write(out, m, &err);
    mn_gltf_free(&g);
    if (to_skel && mo.nframes > 0 && s == MN_OK)
        fprintf(
            stderr,
            "marionette: note: %s holds the figure only; the %d motion frames were not written\n",
            mn_cli_safe(out), mo.nframes);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return s == MN_OK ? MN_EXIT_OK : mn_cli_input_error(&err);
}
