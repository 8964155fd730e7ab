/* marionette workspace MODEL --base B --tip T: the reachable and dexterous workspace of a
 * chain (Parent ch. 5), sampled (mn_workspace_sample), as numbers and as a PLY point cloud
 * or an SVG of two views. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <float.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "options.h"

const char mn_cmd_workspace_summary[] =
    "the reachable and dexterous workspace of a chain, as numbers, PLY or SVG";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette workspace MODEL --base B --tip T [--point x,y,z] [--samples N]\n"
            "                            [--voxel L] [--axis x|y|z] [--seed S] [--out FILE]\n"
            "\n"
            "Samples the joint space of the chain from B (exclusive; 'world' for the figure's\n"
            "root) down to T: every DOF uniform within its limits (unlimited hinges over one\n"
            "turn, balls as random rotations), --samples N times (default 100000). The point\n"
            "--point of T's frame (default its origin) falls in voxels of edge --voxel (default\n"
            "1/40 of the chain's reach), in B's frame. A voxel is reachable when a sample falls\n"
            "in it; its dexterity is the share of the directions the tool axis (--axis of T's\n"
            "frame, default z) takes anywhere that it takes there (128 equal-area cells of the\n"
            "sphere); dexterous voxels take them all (Parent ch. 5: the reachable and\n"
            "the dexterous workspace). Prints key=value: samples, voxel, voxels (reachable),\n"
            "dexterous, the volumes (voxels x voxel^3), directions, reach and the bounds.\n"
            "  --out FILE.ply  the reachable voxels' centres with their dexterity (ASCII PLY)\n"
            "  --out FILE.svg  the voxels seen from above (x, y) and from the side (x, z),\n"
            "                  darker where more dexterous\n"
            "Output is replaced atomically. Exit status 1 for a bad figure or chain.\n");
}

static int find(const mn_model* m, const char* name, const char* file, const char* opt, int* out) {
    if (!strcmp(name, "world")) {
        *out = -1;
        return 1;
    }
    *out = mn_model_find_joint(m, name);
    if (*out >= 0) return 1;
    char hint[256];
    fprintf(stderr, "marionette: %s: %s: no joint named \"%s\"%s\n", mn_cli_safe(file), opt,
            mn_cli_safe(name), mn_cli_safe(mn_model_joint_hint(m, name, hint, sizeof hint)));
    return 0;
}

/* Appends to a growing text buffer; 0 when out of memory. */
typedef struct text {
    char* s;
    size_t n, cap;
} text;
static int put(text* t, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int put(text* t, const char* fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return 0;
        if (t->s && t->n + (size_t)k < t->cap) {
            t->n += (size_t)k;
            return 1;
        }
        size_t cap = (t->cap ? 2 * t->cap : 1 << 16) + (size_t)k;
        char* s = realloc(t->s, cap);
        if (!s) return 0;
        t->s = s, t->cap = cap;
    }
}

static mn_vec3 centre(const mn_workspace* w, int v) {
    const int* i = w->voxel_index + 3 * v;
    return mn_v3(w->origin.x + (i[0] + 0.5) * w->voxel, w->origin.y + (i[1] + 0.5) * w->voxel,
                 w->origin.z + (i[2] + 0.5) * w->voxel);
}

static int ply(const mn_workspace* w, text* t) {
    int ok = put(t,
                 "ply\nformat ascii 1.0\ncomment marionette workspace: reachable voxels (Parent "
                 "ch. 5), voxel %.9g\nelement vertex %d\nproperty float x\nproperty float y\n"
                 "property float z\nproperty float dexterity\nend_header\n",
                 w->voxel, w->nvoxels);
    for (int v = 0; ok && v < w->nvoxels; v++) {
        mn_vec3 c = centre(w, v);
        ok = put(t, "%.9g %.9g %.9g %.4g\n", c.x, c.y, c.z, w->voxel_dexterity[v]);
    }
    return ok;
}

/* Two views side by side: from above (x right, y up) and from the side (x right, z up);
 * each cell of a view shows the most dexterous voxel behind it. */
static int svg(const mn_workspace* w, text* t) {
    int nx = w->dims[0], ny = w->dims[1], nz = w->dims[2];
    double* top = calloc((size_t)nx * (size_t)ny, sizeof(double));
    double* side = calloc((size_t)nx * (size_t)nz, sizeof(double));
    if (!top || !side) {
        free(top), free(side);
        return 0;
    }
    for (int v = 0; v < w->nvoxels; v++) {
        const int* i = w->voxel_index + 3 * v;
        double dx = 0.05 + w->voxel_dexterity[v]; /* > 0: reached */
        size_t a = (size_t)i[0] * (size_t)ny + (size_t)i[1],
               b = (size_t)i[0] * (size_t)nz + (size_t)i[2];
        if (dx > top[a]) top[a] = dx;
        if (dx > side[b]) side[b] = dx;
    }
    double cell = 400.0 / (nx > ny ? (nx > nz ? nx : nz) : (ny > nz ? ny : nz));
    double W = 2 * nx * cell + 60, H = (ny > nz ? ny : nz) * cell + 60;
    int ok = put(t,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                 "font-family=\"sans-serif\" font-size=\"12\">\n"
                 "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                 "<text x=\"20\" y=\"16\">from above (x, y)</text>\n"
                 "<text x=\"%.0f\" y=\"16\">from the side (x, z)</text>\n",
                 W, H, nx * cell + 40);
    for (int view = 0; ok && view < 2; view++) {
        int nb = view ? nz : ny;
        const double* g = view ? side : top;
        double x0 = 20 + view * (nx * cell + 20), y0 = 30;
        for (int a = 0; ok && a < nx; a++)
            for (int b = 0; ok && b < nb; b++) {
                double v = g[(size_t)a * (size_t)nb + (size_t)b];
                if (!(v > 0)) continue;
                int shade = (int)(220 - 190 * (v - 0.05)); /* light: reachable, dark: dexterous */
                ok = put(t,
                         "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                         "fill=\"rgb(%d,%d,255)\"/>\n",
                         x0 + a * cell, y0 + (nb - 1 - b) * cell, cell, cell, shade, shade);
            }
    }
    if (ok) ok = put(t, "</svg>\n");
    free(top), free(side);
    return ok;
}

typedef struct workspace_args {
    const char *file, *base, *tip, *out;
    mn_workspace_options o;
    mn_vec3 point;
    int seed; /* -1 unless --seed is given */
} workspace_args;

static int parse_point(const char* v, void* dest) {
    double x[4];
    if (mn_cli_parse_list(v, x, 4) != 3) return 0;
    *(mn_vec3*)dest = mn_v3(x[0], x[1], x[2]);
    return 1;
}

static int parse_axis(const char* v, void* dest) {
    int ax = !strcmp(v, "x") ? 0 : !strcmp(v, "y") ? 1 : !strcmp(v, "z") ? 2 : -1;
    if (ax >= 0) *(int*)dest = ax;
    return ax >= 0;
}

#define AT(f, t) MN_CLI_AT(workspace_args, f, t)
static const mn_cli_opt workspace_opts[] = {
    {"--base", MN_CLI_STRING, AT(base, const char*), .bad = NULL},
    {"--tip", MN_CLI_STRING, AT(tip, const char*), .bad = NULL},
    {"--out", MN_CLI_STRING, AT(out, const char*), .bad = NULL},
    {"--point", MN_CLI_CALL, AT(point, mn_vec3), .bad = "--point: needs x,y,z (finite numbers)",
     .parse = parse_point},
    {"--samples", MN_CLI_INT, AT(o.samples, int), 1, 100000000,
     .bad = "--samples needs an integer in 1..1e8"},
    {"--voxel", MN_CLI_DOUBLE, AT(o.voxel, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--voxel needs a length > 0"},
    {"--seed", MN_CLI_INT, AT(seed, int), 0, INT_MAX, .bad = "--seed needs an integer >= 0"},
    {"--axis", MN_CLI_CALL, AT(o.axis, int), .bad = "--axis is x, y or z", .parse = parse_axis},
};
#undef AT
const mn_cli_table mn_cmd_workspace_options = {
    .cmd = "workspace",
    MN_CLI_OPTS(workspace_opts),
    .unknown = "unknown or incomplete option '%s'",
    .missing = "unknown or incomplete option '%s'",
    .max_pos = 1,
    .too_many = "one MODEL only",
};

int mn_cmd_workspace(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    workspace_args args = {NULL, NULL, NULL, NULL, mn_workspace_default(), mn_v3(0, 0, 0), -1};
    int bad = mn_cli_parse(&mn_cmd_workspace_options, argc, argv, &args, &args.file, NULL);
    if (bad) return bad;
    if (args.seed >= 0) args.o.seed = (uint64_t)args.seed;
    const char *file = args.file, *base_name = args.base, *tip_name = args.tip, *out = args.out;
    mn_workspace_options o = args.o;
    mn_vec3 point = args.point;
    if (!file) return mn_cli_usage_error("workspace", "missing MODEL");
    if (!base_name || !tip_name) return mn_cli_usage_error("workspace", "needs --base and --tip");
    int to_ply = 0;
    if (out) {
        const char* ext = strrchr(out, '.');
        to_ply = ext && !strcasecmp(ext, ".ply");
        if (!ext || (!to_ply && strcasecmp(ext, ".svg")))
            return mn_cli_usage_error("workspace", "--out '%s': OUT must end in .ply or .svg", out);
    }
    mn_error err;
    mn_model* m = NULL;
    mn_warnings w = {0};
    if (mn_figure_read(file, &m, NULL, &w, &err) != MN_OK) return mn_cli_input_error(&err);
    mn_cli_print_warnings(&w);
    int base, tip, rc = MN_EXIT_OK;
    if (!find(m, base_name, file, "--base", &base) || !find(m, tip_name, file, "--tip", &tip)) {
        mn_model_destroy(m);
        return MN_EXIT_INPUT;
    }
    mn_workspace ws;
    if (mn_workspace_sample(m, base, tip, point, &o, &ws, &err) != MN_OK) {
        mn_error e2;
        mn_error_set(&e2, err.status, file, 0, !strcmp(err.field, "tip") ? "--tip" : err.field,
                     "%s", err.message);
        mn_model_destroy(m);
        return mn_cli_input_error(&e2);
    }
    double v3 = ws.voxel * ws.voxel * ws.voxel;
    mn_vec3 hi = mn_vec3_add(
        ws.origin, mn_v3(ws.dims[0] * ws.voxel, ws.dims[1] * ws.voxel, ws.dims[2] * ws.voxel));
    printf("file=%s base=%s tip=%s samples=%d voxel=%.6g voxels=%d dexterous=%d "
           "reachable_volume=%.6g dexterous_volume=%.6g directions=%d reach=%.6g "
           "min=%.6g,%.6g,%.6g max=%.6g,%.6g,%.6g\n",
           mn_cli_safe(file), mn_cli_safe(base_name), mn_cli_safe(tip_name), ws.nsamples, ws.voxel,
           ws.nvoxels, ws.ndexterous, ws.nvoxels * v3, ws.ndexterous * v3, ws.directions, ws.reach,
           ws.origin.x, ws.origin.y, ws.origin.z, hi.x, hi.y, hi.z);
    if (out) {
        text t = {NULL, 0, 0};
        if (!(to_ply ? ply(&ws, &t) : svg(&ws, &t))) {
            fprintf(stderr, "marionette: %s: out of memory\n", mn_cli_safe(out));
            rc = MN_EXIT_INPUT;
        } else if (mn_write_file_atomic(out, t.s, t.n, &err) != MN_OK) {
            rc = mn_cli_input_error(&err);
        }
        free(t.s);
    }
    mn_workspace_free(&ws);
    mn_model_destroy(m);
    return rc;
}
