/* marionette bench figread: read speed of the URDF, skeleton text and BVH readers, on given
 * files and on generated figures of 1,000 to 100,000 joints (the readers must be linear in
 * their input). */
#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"

const char mn_bench_figread_summary[] =
    "skeleton text, BVH, URDF and glTF read time: stickman, files, 1k-100k joint chains";

static void usage(FILE* f) {
    fprintf(f, "usage: marionette bench figread [FILE...] [--reps N] [--sizes N,N,...]\n"
               "                                [--formats skel,bvh,urdf,gltf] [--no-chains]\n"
               "\n"
               "Reads each .urdf or skeleton (.skel, .scr) file from memory N times (default 201)\n"
               "and the built-in stickman text, and prints one key=value line per input: file,\n"
               "bytes, joints, dof, read_us (median parse + compile), p90_us, mb_s.\n"
               "\n"
               "Then, for each size (default 1000,10000,100000 joints), generates in memory a\n"
               "figure of that many joints in each format and reads it (parse + compile; glTF:\n"
               "load, animation included, and mn_gltf_model), as\n"
               "often as fits in about a second of reading, at least 3 times. One line per\n"
               "format and size: format, joints, dof, depth (of the deepest joint), bytes, reps,\n"
               "read_s (median), mb_s. The skeleton text, URDF and glTF figures are one chain;\n"
               "BVH nests at most 256 levels, so its figure is chains of 250 joints under the\n"
               "root. The glTF figure skins one triangle and animates every joint. --formats\n"
               "picks the formats (default all four).\n"
               "Last, one line per format: format, growth (the exponent k of a least-squares\n"
               "fit read_s ~ joints^k over the sizes; 1 is linear).\n");
}

typedef mn_status (*reader_fn)(const char*, size_t, const char*, mn_model**, mn_warnings*,
                               mn_error*);

static int has_ext(const char* s, const char* ext) {
    size_t n = strlen(s), e = strlen(ext);
    return n >= e && !strcmp(s + n - e, ext);
}

static int bench_text(const char* label, const char* text, size_t len, reader_fn fn, int reps) {
    double* t = malloc(sizeof(double) * (size_t)reps);
    if (!t) return MN_EXIT_INPUT;
    mn_model* m = NULL;
    mn_error err;
    int njoint = 0, nv = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = mn_bench_now_ns();
        mn_status s = fn(text, len, label, &m, NULL, &err);
        t[r] = (mn_bench_now_ns() - t0) * 1e-3;
        if (s != MN_OK) {
            free(t);
            return mn_cli_input_error(&err);
        }
        njoint = m->njoint, nv = m->nv;
        mn_model_destroy(m);
    }
    double med = mn_bench_median(t, (size_t)reps), p90 = mn_bench_quantile(t, (size_t)reps, 0.9);
    const char* base = strrchr(label, '/');
    printf("file=%s bytes=%zu joints=%d dof=%d read_us=%.1f p90_us=%.1f mb_s=%.1f\n",
           base ? base + 1 : label, len, njoint, nv, med, p90, med > 0 ? len / med : 0.0);
    free(t);
    return MN_EXIT_OK;
}

/* ---- generated chains ------------------------------------------------------------------ */

typedef struct text {
    char* s;
    size_t len, cap;
    int failed;
} text;

static void put(text* t, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(text* t, const char* fmt, ...) {
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? 2 * t->cap : 1 << 16;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char* s = realloc(t->s, cap);
        if (!s) {
            t->failed = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

enum { FMT_SKEL, FMT_BVH, FMT_URDF, FMT_GLTF, NFMT };
static const char* const fmt_name[NFMT] = {"skel", "bvh", "urdf", "gltf"};
/* Joints per BVH chain (the reader nests at most 256 levels). */
#define BVH_CHAIN 250

/* One chain of n joints: a free root, then hinges 0.1 m apart, limited to +-90 degrees. */
static void gen_skel(text* t, int n) {
    put(t, "define skeleton \"chain\"\n");
    for (int i = 0; i < n; i++)
        put(t, "  joint \"j%d\"\n", i);
    put(t, "end skeleton\n");
    for (int i = 1; i < n; i++)
        put(t, "define joint \"j%d\"\n  offset 0 0.1 0\n  hinge z -90 90\nend joint\n", i);
}

/* A root with 6 channels and chains of BVH_CHAIN ball joints below it, n joints in all, and
 * one frame of motion. */
static void gen_bvh(text* t, int n) {
    put(t, "HIERARCHY\nROOT j0\n{\n  OFFSET 0 0 0\n"
           "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n");
    for (int i = 1; i < n;) {
        int len = n - i < BVH_CHAIN ? n - i : BVH_CHAIN;
        for (int k = 0; k < len; k++)
            put(t, "JOINT j%d\n{\n  OFFSET 0 0.1 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n",
                i + k);
        for (int k = 0; k < len; k++)
            put(t, "}\n");
        i += len;
    }
    put(t, "}\nMOTION\nFrames: 1\nFrame Time: 0.033333\n");
    for (int i = 0; i < 6 + 3 * (n - 1); i++)
        put(t, i ? " 0" : "0");
    put(t, "\n");
}

/* One chain of n links joined by revolute joints. */
static void gen_urdf(text* t, int n) {
    put(t, "<?xml version=\"1.0\"?>\n<robot name=\"chain\">\n");
    for (int i = 0; i < n; i++)
        put(t, "  <link name=\"l%d\"/>\n", i);
    for (int i = 1; i < n; i++)
        put(t,
            "  <joint name=\"q%d\" type=\"revolute\">\n"
            "    <parent link=\"l%d\"/>\n    <child link=\"l%d\"/>\n"
            "    <origin xyz=\"0 0 0.1\" rpy=\"0 0 0\"/>\n    <axis xyz=\"0 0 1\"/>\n"
            "    <limit lower=\"-1.57\" upper=\"1.57\" effort=\"10\" velocity=\"1\"/>\n"
            "  </joint>\n",
            i, i - 1, i);
    put(t, "</robot>\n");
}

/* One chain of n joint nodes 0.1 m apart, skinning a one-triangle mesh, with an animation
 * of one rotation channel per joint (each with its own output accessor). The 148 bytes of
 * the buffer: positions (3 VEC3 float), joints (3 VEC4 ushort), weights (3 VEC4 float),
 * key times (0, 1) and two rotations (VEC4 float). */
static void gen_gltf(text* t, int n) {
    static const char data[] =
        "AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACAPwAA"
        "AAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAIA/AAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAIA/"
        "AAAAAAAAAADNzMw9Urh+Pw==";
    put(t,
        "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,%d]}],"
        "\n\"nodes\":[\n",
        n);
    for (int i = 0; i < n; i++) {
        put(t, "{\"name\":\"j%d\",\"translation\":[0,0.1,0]", i);
        if (i + 1 < n) put(t, ",\"children\":[%d]", i + 1);
        put(t, "},\n");
    }
    put(t, "{\"name\":\"mesh\",\"mesh\":0,\"skin\":0}],\n\"meshes\":[{\"primitives\":[{"
           "\"attributes\":{\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2}}]}],\n"
           "\"skins\":[{\"joints\":[");
    for (int i = 0; i < n; i++)
        put(t, i ? ",%d" : "%d", i);
    put(t, "]}],\n\"animations\":[{\"channels\":[\n");
    for (int i = 0; i < n; i++)
        put(t, "%s{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"rotation\"}}\n", i ? "," : "",
            i, i);
    put(t, "],\"samplers\":[\n");
    for (int i = 0; i < n; i++)
        put(t, "%s{\"input\":3,\"output\":%d}\n", i ? "," : "", 4 + i);
    put(t,
        "]}],\n\"buffers\":[{\"byteLength\":148,\"uri\":"
        "\"data:application/octet-stream;base64,%s\"}],\n"
        "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":36},"
        "{\"buffer\":0,\"byteOffset\":36,\"byteLength\":24},"
        "{\"buffer\":0,\"byteOffset\":60,\"byteLength\":48},"
        "{\"buffer\":0,\"byteOffset\":108,\"byteLength\":8},"
        "{\"buffer\":0,\"byteOffset\":116,\"byteLength\":32}],\n"
        "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":3,"
        "\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[1,1,0]},"
        "{\"bufferView\":1,\"componentType\":5123,\"count\":3,\"type\":\"VEC4\"},"
        "{\"bufferView\":2,\"componentType\":5126,\"count\":3,\"type\":\"VEC4\"},"
        "{\"bufferView\":3,\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\","
        "\"min\":[0],\"max\":[1]}",
        data);
    for (int i = 0; i < n; i++)
        put(t, ",\n{\"bufferView\":4,\"componentType\":5126,\"count\":2,\"type\":\"VEC4\"}");
    put(t, "]}\n");
}

static mn_status read_gltf(const text* t, mn_model** m, mn_error* err) {
    mn_gltf g;
    mn_status s = mn_gltf_read_mem(t->s, t->len, "chain.gltf", &g, NULL, err);
    if (s) return s;
    *m = mn_gltf_model(&g, err);
    mn_gltf_free(&g);
    return *m ? MN_OK : err->status;
}

static mn_status read_fmt(int f, const text* t, mn_model** m, mn_error* err) {
    if (f == FMT_GLTF) return read_gltf(t, m, err);
    if (f == FMT_BVH) return mn_bvh_read_mem(t->s, t->len, "chain.bvh", NULL, m, NULL, NULL, err);
    if (f == FMT_URDF) return mn_urdf_read_mem(t->s, t->len, "chain.urdf", m, NULL, err);
    return mn_skel_read_mem(t->s, t->len, "chain.skel", m, NULL, err);
}

/* Reads the generated figure of n joints in format f; stores the median time in *sec. */
static int bench_chain(int f, int n, double* sec) {
    text t = {NULL, 0, 0, 0};
    if (f == FMT_SKEL)
        gen_skel(&t, n);
    else if (f == FMT_BVH)
        gen_bvh(&t, n);
    else if (f == FMT_URDF)
        gen_urdf(&t, n);
    else
        gen_gltf(&t, n);
    if (t.failed) {
        free(t.s);
        fprintf(stderr, "marionette bench figread: out of memory\n");
        return MN_EXIT_INPUT;
    }
    enum { MAX_REPS = 1000 };
    double times[MAX_REPS], spent = 0;
    int reps = 0, njoint = 0, nv = 0, depth = 0;
    /* At least 3 reads, then as many as fit in about a second. */
    while (reps < MAX_REPS && (reps < 3 || spent < 1.0)) {
        mn_model* m = NULL;
        mn_error err;
        double t0 = mn_bench_now_ns();
        mn_status s = read_fmt(f, &t, &m, &err);
        double dt = (mn_bench_now_ns() - t0) * 1e-9;
        if (s != MN_OK) {
            free(t.s);
            return mn_cli_input_error(&err);
        }
        njoint = m->njoint, nv = m->nv, depth = 0;
        for (int j = 0; j < m->njoint; j++)
            if (m->jnt_depth[j] > depth) depth = m->jnt_depth[j];
        mn_model_destroy(m);
        times[reps++] = dt;
        spent += dt;
    }
    *sec = mn_bench_median(times, (size_t)reps);
    printf("format=%s joints=%d dof=%d depth=%d bytes=%zu reps=%d read_s=%.4f mb_s=%.1f\n",
           fmt_name[f], njoint, nv, depth, t.len, reps, *sec, t.len / *sec * 1e-6);
    free(t.s);
    return MN_EXIT_OK;
}

/* Exponent k of the least-squares fit log t = k log n + c. */
static double growth(const int* n, const double* t, int count) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < count; i++) {
        double x = log((double)n[i]), y = log(t[i]);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    double d = count * sxx - sx * sx;
    return d > 0 ? (count * sxy - sx * sy) / d : 0;
}

static int parse_sizes(const char* s, int* sizes, int cap) {
    int n = 0;
    while (*s && n < cap) {
        char* end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 2 || v > 100000 || (*end && *end != ',')) return 0;
        sizes[n++] = (int)v;
        s = *end ? end + 1 : end;
    }
    return *s ? 0 : n;
}

typedef struct figread_args {
    int reps, chains;
    int sizes[9]; /* the count, then up to 8 joint counts */
    int use[NFMT];
} figread_args;

static int parse_size_list(const char* v, void* dest) {
    int* n = dest;
    n[0] = parse_sizes(v, n + 1, 8);
    return n[0] > 0;
}

static int parse_formats(const char* list, void* dest) {
    int* use = dest;
    for (int f = 0; f < NFMT; f++) {
        size_t n = strlen(fmt_name[f]);
        const char* at = strstr(list, fmt_name[f]);
        use[f] = at && (at == list || at[-1] == ',') && (at[n] == 0 || at[n] == ',');
    }
    return 1;
}

#define AT(f, t) MN_CLI_AT(figread_args, f, t)
static const mn_cli_opt figread_opts[] = {
    {"--reps", MN_CLI_INT, AT(reps, int), 1, INT_MAX, .bad = "--reps needs a positive integer"},
    {"--sizes", MN_CLI_CALL, AT(sizes[0], int),
     .bad = "--sizes needs up to 8 joint counts in [2, 100000], comma-separated",
     .parse = parse_size_list},
    {"--formats", MN_CLI_CALL, AT(use[0], int), .bad = NULL, .parse = parse_formats},
    {"--no-chains", MN_CLI_FLAG, AT(chains, int), .lo = 0},
};
#undef AT
const mn_cli_table mn_bench_figread_options = {
    .cmd = "bench figread",
    MN_CLI_OPTS(figread_opts),
    .unknown = "unknown option '%s'",
    .missing = "unknown option '%s'",
    .max_pos = -1,
    .dash_option = 1,
};

int mn_bench_figread(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    figread_args args = {201, 1, {3, 1000, 10000, 100000}, {1, 1, 1, 1}};
    int nfiles = 0;
    const char** files = calloc((size_t)argc + 1, sizeof *files);
    if (!files) return MN_EXIT_INPUT;
    int bad = mn_cli_parse(&mn_bench_figread_options, argc, argv, &args, files, &nfiles);
    if (bad) {
        free(files);
        return bad;
    }
    int reps = args.reps, chains = args.chains, nsizes = args.sizes[0];
    const int *sizes = args.sizes + 1, *use = args.use;
    const char* st = mn_stickman_text();
    int rc = bench_text("stickman", st, strlen(st), mn_skel_read_mem, reps);
    for (int k = 0; k < nfiles && rc == MN_EXIT_OK; k++) {
        const char* path = files[k];
        char* text;
        size_t len;
        mn_error err;
        if (mn_read_file(path, &text, &len, &err) != MN_OK) {
            free(files);
            return mn_cli_input_error(&err);
        }
        reader_fn fn = has_ext(path, ".urdf") ? mn_urdf_read_mem : mn_skel_read_mem;
        rc = bench_text(path, text, len, fn, reps);
        free(text);
    }
    free(files);
    for (int f = 0; f < NFMT && chains && rc == MN_EXIT_OK; f++) {
        if (!use[f]) continue;
        double t[8];
        for (int k = 0; k < nsizes && rc == MN_EXIT_OK; k++)
            rc = bench_chain(f, sizes[k], &t[k]);
        if (rc == MN_EXIT_OK && nsizes > 1)
            printf("format=%s growth=%.2f\n", fmt_name[f], growth(sizes, t, nsizes));
    }
    return rc;
}
