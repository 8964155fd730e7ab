/* marionette anim: summarise a sequence document, bake it (every frame sampled, the
 * constraints re-satisfied at each) to a BVH file or a glTF binary, or import a BVH take. */
#define _GNU_SOURCE /* realpath */
#include <marionette/anim.h>
#include <marionette/clip.h>
#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/layers.h>
#include <marionette/scene.h>
#include <marionette/sequence.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "anim_figures.h"
#include "anim_takes.h"
#include "cli.h"
#include "options.h"

const char mn_cmd_anim_summary[] =
    "summarise a sequence document (info), bake its frames to BVH or glTF (bake), import a take, "
    "compress, crossfade, root-motion, loop and retime takes";

static void usage(FILE* f) {
    fprintf(
        f,
        "usage: marionette anim info SEQ.json [--script SCRIPT] [--out OUT.json]\n"
        "       marionette anim bake SEQ.json --out OUT.bvh|OUT.glb [--script SCRIPT] [--plain]\n"
        "                            [--solver lagrange|ccd|dls] [--iters N] [--tol T] [--step F]\n"
        "       marionette anim import TAKE.bvh --out SEQ.json [--tol METRES] [--scale S]\n"
        "                            [--rotation MODE] [--translation MODE]\n"
        "       marionette anim compress TAKE.bvh|SEQ.json [--scale S] [--tol T] [--shell D]\n"
        "                            [--every K] [--lock-tol T] [--vertices 2|3]\n"
        "                            [--max-segment N] [--out CLIP.mnc]\n"
        "       marionette anim crossfade A.bvh B.bvh --out OUT.bvh [--at F] [--length N]\n"
        "                            [--b-range B0 B1 | --b-frame B] [--no-lock] [--scale S]\n"
        "       marionette anim root-motion TAKE.bvh [--out OUT.bvh] [--in-place | --turn DEG]\n"
        "                            [--scale S]\n"
        "       marionette anim loop TAKE.bvh [--out OUT.bvh] [--min-length N] [--blend N]\n"
        "                            [--cycles N] [--scale S]\n"
        "       marionette anim retime TAKE.bvh --out OUT.bvh --warp T:S[:V],... | --speed F\n"
        "                            [--ballistic] [--scale S]\n"
        "\n"
        "A sequence document (docs/sequence.md) holds the keys of one figure and the\n"
        "constraints over frame ranges that its in-betweens keep; a motion script\n"
        "(docs/motion-script.md) given with --script adds handles and constraints over\n"
        "time intervals to it. A document with \"figures\" holds several figures animated\n"
        "together (constraints between them): info prints each, bake solves them together\n"
        "and writes one file per figure, OUT with the figure's name before its extension.\n"
        "  info    prints the figure, frame rate, keys, interpolation, the hinge runs\n"
        "          interpolated as one rotation, handles and constraints; --out writes the\n"
        "          sequence back as a document, as the library writes it (what the editor\n"
        "          saves; the same text the WebAssembly module writes), replaced atomically.\n"
        "  bake    samples every frame from the first key to the last (every F frames with\n"
        "          --step) and writes the figure and its motion as BVH, or as a glTF 2.0 binary\n"
        "          (a node per joint, one animation, and the skinned mesh when the figure is a\n"
        "          skinned glTF file). At each frame the active constraints are re-satisfied\n"
        "          (warm-started from the last frame) with the solver (default lagrange), at\n"
        "          most N steps (default 20) to the tolerance T (the figure's length unit and\n"
        "          radians, default 1e-5); --plain writes the plain in-betweens. Prints one\n"
        "          key=value line: frames, fps, constrained frames, mean_iters, max_violation\n"
        "          (largest residual of an active position constraint, in the figure's length\n"
        "          unit: metres once the document's scale is applied), unmet_frames. OUT is\n"
        "          replaced atomically.\n");
    fprintf(f,
            "  import  opens a BVH take as a sequence: every frame a key, or with --tol the\n"
            "          whole-pose keys (greedy insertion, then a removal pass) whose in-betweens\n"
            "          put every joint within METRES of the take (lengths scaled by S first).\n"
            "          Interpolation: --rotation\n"
            "          (default squad) and --translation (default catmull-rom). Writes SEQ.json\n"
            "          naming the take as its figure (relative to SEQ's folder when the take is\n"
            "          inside it) and prints one key=value line: frames, keys, ratio (frames\n"
            "          per key), max_error_m.\n"
            "  compress  a BVH take (every K-th frame, lengths scaled by S), or a sequence\n"
            "          document baked (every frame, its constraints re-satisfied), as a\n"
            "          compressed clip (docs/animation.md) whose joints stay within T (figure\n"
            "          units, default 1e-4) of the take at every frame, measured at virtual\n"
            "          vertices D from each joint (default 0.03) along its x, y and z axes\n"
            "          (--vertices 2: x and y only); --max-segment N (8, 16 or 32, the default)\n"
            "          caps a track's segment: shorter segments sample faster and compress less.\n"
            "          A sequence's locked feet (lock: true) stay within --lock-tol (default\n"
            "          1e-4) of the baked frames over their ranges, whatever T. Prints one\n"
            "          key=value line (with locks also the ratio without them); --out writes the\n"
            "          clip.\n");
    fprintf(
        f,
        "  crossfade  take A into take B (one skeleton, one frame rate): A up to frame F\n"
        "          (default its middle), then N frames (default half a second) easing into B,\n"
        "          then the rest of B, turned and moved to stand where A does. B starts at the\n"
        "          frame (within B0..B1) whose feet and root velocity follow A's best over the\n"
        "          blend; planted feet are then locked (--no-lock: not). Without --b-range the\n"
        "          frames searched end before B's motion of interest, the part of B least like\n"
        "          any frame of A (a hop after a walk), so that it plays after the blend; when\n"
        "          nothing in B stands out, B's first half (printed: b_min, b_max,\n"
        "          interest_start, interest_end).\n"
        "  root-motion  the root's ground motion and heading as a track: prints distance,\n"
        "          speed and turn; --out writes the take with the track put back (the round\n"
        "          trip), played in place (--in-place) or along a path turning DEG degrees a\n"
        "          second (--turn).\n"
        "  loop    the cycle whose ends match best (at least N frames, default a second),\n"
        "          its last frames (--blend, default a quarter) eased into the frames before\n"
        "          its start; --out writes it --cycles times, each starting where the last\n"
        "          ended.\n"
        "  retime  the take played along a time warp: keys T:S (output frame T shows the\n"
        "          take's frame S; V the speed dS/dT there, else a monotone spline), or at F\n"
        "          times the speed; --ballistic keeps every flight (both feet off the ground) on\n"
        "          the parabola of the gravity the take's own flights imply.\n"
        "Lengths in crossfade, root-motion and loop are the take's units times S; +y is up.\n");
}

static int ends_with(const char* s, const char* e) {
    size_t n = strlen(s), k = strlen(e);
    return n >= k && !strcasecmp(s + n - k, e);
}

static const char* fmt_frame(double f, char* buf) {
    if (f <= -1e299 || f >= 1e299 || !isfinite(f)) return f < 0 ? "-inf" : "inf";
    snprintf(buf, 32, "%.9g", f);
    return buf;
}

/* read_seq's answer for a document of several figures (anim_figures.c reads it). */
#define READ_FIGURES (-1)

/* Reads a sequence document and applies a motion script to it (script may be NULL). With
 * skin non-NULL, a skinned glTF figure's mesh and skin go there (zeroed otherwise). */
static int read_seq(const char* path, const char* script, mn_model** m, mn_seq** s,
                    mn_seq_doc_info* di, mn_gltf* skin) {
    mn_error err;
    /* The local user's own file: its figure may be anywhere (an absolute path, ".."). */
    mn_seq_read_options opt = mn_seq_read_default();
    opt.trusted = 1;
    mn_status st = skin ? mn_seq_read_skin(path, &opt, m, s, di, skin, &err)
                        : mn_seq_read(path, &opt, m, s, di, &err);
    if (st == MN_ERR_UNSUPPORTED && !strcmp(err.field, "figures")) return READ_FIGURES;
    if (st != MN_OK) {
        /* a scene document (docs/scene.md) given for a sequence: say so, not which member
         * of it a sequence lacks */
        mn_scene* sc = NULL;
        mn_error serr;
        if (st == MN_ERR_PARSE && mn_scene_read(path, &sc, &serr) == MN_OK) {
            mn_scene_destroy(sc);
            fprintf(stderr,
                    "marionette: %s: this is a scene document (docs/scene.md), not a sequence: "
                    "use marionette pose FIGURE --scene %s\n",
                    mn_cli_safe(path), mn_cli_safe(path));
            return MN_EXIT_INPUT;
        }
        return mn_cli_input_error(&err);
    }
    if (script && mn_motion_script_apply(script, *s, &err) != MN_OK) {
        mn_seq_destroy(*s);
        mn_model_destroy(*m);
        mn_gltf_free(skin);
        *s = NULL;
        *m = NULL;
        return mn_cli_input_error(&err);
    }
    return MN_EXIT_OK;
}

/* The layers (layers.h): mode, weight keys, masked joints, keys, time warps. */
static void print_layers(const mn_seq* s) {
    const mn_model* m = mn_seq_model(s);
    int nl = mn_seq_layer_count(s);
    if (nl) printf("layers: %d\n", nl);
    for (int i = 0; i < nl; i++) {
        const mn_seq* l = mn_seq_layer(s, i);
        const char* name = mn_seq_layer_name(s, i);
        printf("  %d %s %s, %d keys, frames %g to %g", i, name[0] ? mn_cli_safe(name) : "(unnamed)",
               mn_layer_mode_name(mn_seq_layer_mode(s, i)), mn_seq_key_count(l), mn_seq_start(l),
               mn_seq_end(l));
        int nw = mn_seq_layer_weight_count(s, i);
        printf(", weight ");
        for (int k = 0; k < nw; k++) {
            double f, w;
            mn_seq_layer_weight_key(s, i, k, &f, &w);
            printf("%s%g@%g", k ? " " : "", w, f);
        }
        if (!nw) printf("1");
        const double* mask = mn_seq_layer_mask(s, i);
        int nm = 0;
        for (int j = 0; mask && j < m->njoint; j++)
            nm += mask[j] > 0;
        if (mask)
            printf(", mask %d of %d joints", nm, m->njoint);
        else
            printf(", every joint");
        if (mn_seq_warp_count(l)) printf(", time warp of %d keys", mn_seq_warp_count(l));
        printf("\n");
    }
    int nw = mn_seq_warp_count(s);
    if (nw)
        printf("time warp: %d keys, output frames %g to %g\n", nw, mn_seq_out_start(s),
               mn_seq_out_end(s));
}

static int info(const char* path, const char* script, const char* out) {
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_seq_doc_info di;
    int code = read_seq(path, script, &m, &s, &di, NULL);
    if (code == READ_FIGURES && script)
        return mn_cli_usage_error("anim", "a motion script applies to one figure (--script)");
    if (code == READ_FIGURES && out)
        return mn_cli_usage_error("anim",
                                  "a document of several figures is not written back yet (--out)");
    if (code == READ_FIGURES) return mn_anim_info_figures(path);
    if (code != MN_EXIT_OK) return code;
    int nk = mn_seq_key_count(s);
    double f0 = mn_seq_start(s), f1 = mn_seq_end(s), fps = mn_seq_fps(s);
    mn_interp rot, trans;
    mn_seq_default_interp(s, &rot, &trans);
    printf("file: %s\n", mn_cli_safe(path));
    printf("figure: %s (%s), %d joints, %d DOF\n", mn_cli_safe(di.figure), mn_cli_safe(m->name),
           m->njoint, m->nv);
    if (di.root[0]) printf("root: %s (the figure re-rooted there)\n", mn_cli_safe(di.root));
    printf("fps: %.9g\nkeys: %d, frames %.9g to %.9g (%.9g s)\n", fps, nk, f0, f1, (f1 - f0) / fps);
    printf("key frames:");
    for (int k = 0; k < nk && k < 40; k++)
        printf(" %.9g", mn_seq_key_frame(s, k));
    printf("%s\n", nk > 40 ? " ..." : "");
    printf("interpolation: rotation %s, translation %s\n", mn_interp_name(rot),
           mn_interp_name(trans));
    for (int j = 0; j < m->njoint; j++) {
        mn_seq_joint_interp(s, j, &rot, &trans);
        if (rot == MN_INTERP_DEFAULT && trans == MN_INTERP_DEFAULT) continue;
        printf("  joint %s: rotation %s, translation %s\n", mn_cli_safe(m->jnt_name[j]),
               mn_interp_name(rot), mn_interp_name(trans));
    }
    int nr = mn_seq_run_count(s);
    printf("hinge runs interpolated as one rotation: %d\n", nr);
    for (int r = 0; r < nr; r++) {
        int first, len;
        mn_seq_run(s, r, &first, &len);
        printf("  %s (%d hinges)\n", mn_cli_safe(m->jnt_name[first]), len);
    }
    int nh = mn_seq_handle_count(s), nc = mn_seq_constraint_count(s);
    printf("handles: %d\n", nh);
    for (int h = 0; h < nh; h++) {
        const mn_handle_def* d = mn_seq_handle(s, h);
        printf("  %s: %s on %s\n", d->name ? mn_cli_safe(d->name) : "(unnamed)",
               mn_handle_type_name(d->type),
               d->joint >= 0 ? m->jnt_name[d->joint] : "the whole figure");
    }
    printf("constraints: %d\n", nc);
    for (int c = 0; c < nc; c++) {
        const mn_seq_constraint_def* d = mn_seq_constraint(s, c);
        char a[32], b[32];
        const mn_handle_def* h = mn_seq_handle(s, d->con.handle);
        printf("  %d %s%s%s on %s, frames %s to %s", c, mn_constraint_type_name(d->con.type),
               d->con.name ? " " : "", d->con.name ? d->con.name : "",
               h->name ? h->name : "(unnamed)", fmt_frame(d->start, a), fmt_frame(d->end, b));
        int ntk = mn_seq_target_key_count(s, c);
        if (d->lock && !ntk) printf(", locked where it is at the first frame");
        if (ntk) printf(", %d target keys (%s)", ntk, mn_interp_name(d->target_interp));
        if (!d->con.enabled) printf(", disabled");
        printf("\n");
    }
    print_layers(s);
    mn_error err;
    if (out && mn_seq_write_doc(out, s, &di, &err) != MN_OK) code = mn_cli_input_error(&err);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    return code;
}

typedef struct bake_args {
    const char *out, *script;
    mn_seq_bake_options o;
    double tol; /* NAN unless --tol is given */
} bake_args;

static int parse_solver(const char* v, void* dest) {
    int sv = mn_csolver_parse(v);
    if (sv >= 0) *(mn_csolver*)dest = (mn_csolver)sv;
    return sv >= 0;
}

/* The tables of anim's subcommands: messages say "anim"; a missing value is an unknown
 * option. */
#define ANIM_TABLE(rows, npos, many)                                                               \
    {                                                                                              \
        .cmd = "anim", MN_CLI_OPTS(rows), .unknown = "unknown option '%s'",                        \
        .missing = "unknown option '%s'", .max_pos = (npos), .too_many = (many)                    \
    }

#define AT(f, t) MN_CLI_AT(bake_args, f, t)
static const mn_cli_opt bake_opts[] = {
    {"--out", MN_CLI_STRING, AT(out, const char*), .bad = NULL},
    {"--script", MN_CLI_STRING, AT(script, const char*), .bad = NULL},
    {"--plain", MN_CLI_FLAG, AT(o.plain, int), .lo = 1},
    {"--solver", MN_CLI_CALL, AT(o.solve.solve.method, mn_csolver),
     .bad = "unknown solver '%s' (lagrange, ccd, dls)", .parse = parse_solver},
    {"--iters", MN_CLI_INT, AT(o.solve.solve.max_iters, int), 1, INT_MAX,
     .bad = "--iters needs a positive integer"},
    {"--tol", MN_CLI_DOUBLE, AT(tol, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--tol needs a positive number"},
    {"--step", MN_CLI_DOUBLE, AT(o.step, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--step needs a positive number"},
};
#undef AT
const mn_cli_table mn_cmd_anim_bake_options = ANIM_TABLE(bake_opts, 1, "too many arguments");

static int bake(int argc, char** argv) {
    const char* in = NULL;
    bake_args args = {NULL, NULL, mn_seq_bake_default(), NAN};
    int bad = mn_cli_parse(&mn_cmd_anim_bake_options, argc - 1, argv + 1, &args, &in, NULL);
    if (bad) return bad;
    const char *out = args.out, *script = args.script;
    mn_seq_bake_options o = args.o;
    if (!isnan(args.tol)) o.solve.solve.tol = o.solve.solve.tol_rot = args.tol;
    if (!in) return mn_cli_usage_error("anim", "bake needs SEQ.json");
    if (!out) return mn_cli_usage_error("anim", "bake needs --out OUT.bvh or OUT.glb");
    int glb = ends_with(out, ".glb");
    if (!ends_with(out, ".bvh") && !glb)
        return mn_cli_usage_error("anim", "OUT must end in .bvh or .glb");
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_error err;
    mn_gltf skin;
    int code = read_seq(in, script, &m, &s, NULL, glb ? &skin : NULL);
    if (code == READ_FIGURES && script)
        return mn_cli_usage_error("anim", "a motion script applies to one figure (--script)");
    if (code == READ_FIGURES) return mn_anim_bake_figures(in, out, &o);
    if (code != MN_EXIT_OK) return code;
    if (!glb) memset(&skin, 0, sizeof skin);
    mn_motion mo;
    mn_seq_bake_result r;
    mn_status st = mn_seq_bake(s, m, &o, &mo, &r, &err);
    if (st == MN_OK) {
        st = glb ? mn_gltf_write(out, m, &mo, skin.nverts > 0 ? &skin : NULL, &err)
                 : mn_bvh_write(out, m, &mo, &err);
        printf("file=%s out=%s frames=%ld fps=%.9g mode=%s constrained_frames=%ld mean_iters=%.2f "
               "max_violation=%.2e "
               "unmet_frames=%ld\n",
               mn_cli_safe(in), mn_cli_safe(out), r.frames, mn_seq_fps(s) / o.step,
               o.plain ? "plain" : mn_csolver_name(o.solve.solve.method), r.constrained,
               r.frames ? (double)r.iters / (double)r.frames : 0.0, r.max_violation, r.unmet);
    }
    mn_motion_free(&mo);
    mn_gltf_free(&skin);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    if (st == MN_ERR_ARG && !strcmp(err.field, "step"))
        return mn_cli_usage_error("anim", "%s (--step)", err.message);
    if (st != MN_OK && !err.file[0]) {
        fprintf(stderr, "marionette: %s: %s\n", mn_cli_safe(in), err.message);
        return MN_EXIT_INPUT;
    }
    return st == MN_OK ? MN_EXIT_OK : mn_cli_input_error(&err);
}

/* The figure path an imported document names: relative to the document's folder when the
 * take is inside it (so that a document written into a project folder moves with it and
 * passes the reader's default, confined to the document's folder: docs/sequence.md), else
 * the take as given (made absolute when it is relative to a folder other than the
 * document's). */
static const char* figure_name(const char* in, const char* out, char* buf, size_t cap) {
    char dir[4096];
    const char* slash = strrchr(out, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == out)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - out), out);
    char* rdir = realpath(dir, NULL);
    char* rin = realpath(in, NULL);
    const char* name = NULL;
    if (rdir && rin) {
        size_t dl = strlen(rdir);
        if (dl == 1) dl = 0; /* the root folder */
        const char* rel = rin + dl;
        /* inside the folder, and read back the same by the confined reader (which
         * percent-decodes and refuses a backslash or a scheme-like first segment) */
        if (!strncmp(rin, rdir, dl) && rel[0] == '/' && rel[1] && !strpbrk(rel + 1, "%\\") &&
            !memchr(rel + 1, ':', strcspn(rel + 1, "/")) && strlen(rel + 1) < cap) {
            snprintf(buf, cap, "%s", rel + 1);
            name = buf;
        }
    }
    free(rdir);
    free(rin);
    if (name) return name;
    /* a relative take named from the current folder, the document elsewhere */
    if (slash && in[0] != '/') {
        char cwd[2048];
        if (getcwd(cwd, sizeof cwd)) {
            snprintf(buf, cap, "%s/%s", cwd, in);
            return buf;
        }
    }
    return in;
}

typedef struct import_args {
    const char* out;
    double tol, scale;
    int rot, trans;
} import_args;

static int parse_interp(const char* v, void* dest) {
    int k = mn_interp_parse(v);
    if (k > 0) *(int*)dest = k;
    return k > 0;
}

#define AT(f, t) MN_CLI_AT(import_args, f, t)
static const mn_cli_opt import_opts[] = {
    {"--out", MN_CLI_STRING, AT(out, const char*), .bad = NULL},
    {"--tol", MN_CLI_DOUBLE, AT(tol, double), 0, DBL_MAX, .bad = "--tol needs a number >= 0"},
    {"--scale", MN_CLI_DOUBLE, AT(scale, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--scale needs a positive number"},
    {"--rotation", MN_CLI_CALL, AT(rot, int), .bad = "unknown interpolation '%s'",
     .parse = parse_interp},
    {"--translation", MN_CLI_CALL, AT(trans, int), .bad = "unknown interpolation '%s'",
     .parse = parse_interp},
};
#undef AT
const mn_cli_table mn_cmd_anim_import_options = ANIM_TABLE(import_opts, 1, "too many arguments");

static int import_take(int argc, char** argv) {
    const char* in = NULL;
    import_args args = {NULL, 0, 0, MN_INTERP_SQUAD, MN_INTERP_CATMULL_ROM};
    int bad = mn_cli_parse(&mn_cmd_anim_import_options, argc - 1, argv + 1, &args, &in, NULL);
    if (bad) return bad;
    const char* out = args.out;
    double tol = args.tol, scale = args.scale;
    int rot = args.rot, trans = args.trans;
    if (!in || !out) return mn_cli_usage_error("anim", "import needs TAKE.bvh and --out SEQ.json");
    if (!ends_with(out, ".json")) return mn_cli_usage_error("anim", "SEQ must end in .json");
    mn_bvh_options bo = mn_bvh_default();
    if (scale > 0) bo.scale = scale;
    mn_model* m = NULL;
    mn_motion mo;
    mn_warnings w = {0};
    mn_error err;
    if (mn_bvh_read(in, &bo, &m, &mo, &w, &err) != MN_OK) return mn_cli_input_error(&err);
    mn_cli_print_warnings(&w);
    mn_seq_def def = mn_seq_def_default();
    def.fps = mo.frame_time > 0 ? 1.0 / mo.frame_time : 30;
    if (!(def.fps > 0) || !isfinite(def.fps)) def.fps = 30;
    mn_seq* s = mn_seq_create(m, &def, &err);
    int code = MN_EXIT_OK;
    if (!s || mn_seq_set_default_interp(s, (mn_interp)rot, (mn_interp)trans) != MN_OK) {
        if (s)
            code = mn_cli_usage_error("anim", "--rotation or --translation does not apply");
        else
            code = mn_cli_input_error(&err);
    } else if (mo.nframes < 1) {
        fprintf(stderr, "marionette: %s: the take has no frames\n", mn_cli_safe(in));
        code = MN_EXIT_INPUT;
    } else {
        int nkeys = 0;
        double maxerr = 0;
        if (mn_seq_add_motion(s, mo.q, mo.nframes, 0, tol, &nkeys, &maxerr, &err) != MN_OK)
            code = mn_cli_input_error(&err);
        else {
            char fig[4096];
            const char* fname = figure_name(in, out, fig, sizeof fig);
            /* with the take's contact tracks when a rig table knows its figure */
            mn_seq_doc_info* info = calloc(1, sizeof *info);
            if (info) {
                size_t fl = strlen(fname);
                memcpy(info->figure, fname, fl < sizeof info->figure ? fl : 0);
                info->scale = scale;
                mn_cli_take_contacts(m, &mo, info);
            }
            if (!info || strlen(fname) >= sizeof info->figure
                    ? mn_seq_write(out, s, fname, scale, &err) != MN_OK
                    : mn_seq_write_doc(out, s, info, &err) != MN_OK)
                code = mn_cli_input_error(&err);
            else
                printf("file=%s out=%s frames=%d keys=%d ratio=%.2f tol_m=%g max_error_m=%.3g\n",
                       mn_cli_safe(in), mn_cli_safe(out), mo.nframes, nkeys,
                       (double)mo.nframes / nkeys, tol, maxerr);
            free(info);
        }
    }
    mn_seq_destroy(s);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return code;
}

/* The take of anim compress: a BVH take (every `every`-th frame, lengths scaled), or a
 * sequence document baked (its constraints re-satisfied at every frame) with the locks of
 * its locked constraints at lock_tol. */
typedef struct compress_input {
    mn_model* m;
    mn_seq* s;
    mn_motion mo;
    double fps;
    mn_clip_lock* locks;
    int nlocks;
} compress_input;

static int compress_read(const char* in, double scale, int every, double lock_tol, double shell,
                         compress_input* ci) {
    mn_error err;
    memset(ci, 0, sizeof *ci);
    if (ends_with(in, ".json")) {
        int code = read_seq(in, NULL, &ci->m, &ci->s, NULL, NULL);
        if (code != MN_EXIT_OK) return code;
        mn_seq_bake_options bo = mn_seq_bake_default();
        mn_seq_bake_result r;
        if (mn_seq_bake(ci->s, ci->m, &bo, &ci->mo, &r, &err) != MN_OK) {
            fprintf(stderr, "marionette: %s: %s\n", mn_cli_safe(in), err.message);
            return MN_EXIT_INPUT;
        }
        ci->fps = mn_seq_fps(ci->s) / bo.step;
        int n = ci->mo.nframes;
        ci->nlocks = mn_clip_locks_from_seq(ci->s, mn_seq_start(ci->s), bo.step, n, lock_tol, shell,
                                            NULL, 0);
        ci->locks = ci->nlocks ? malloc(sizeof(mn_clip_lock) * (size_t)ci->nlocks) : NULL;
        if (ci->nlocks && !ci->locks) {
            fprintf(stderr, "marionette: %s: out of memory\n", mn_cli_safe(in));
            return MN_EXIT_INPUT;
        }
        mn_clip_locks_from_seq(ci->s, mn_seq_start(ci->s), bo.step, n, lock_tol, shell, ci->locks,
                               ci->nlocks);
        return MN_EXIT_OK;
    }
    mn_bvh_options bo = mn_bvh_default();
    if (scale > 0) bo.scale = scale;
    mn_warnings w = {0};
    if (mn_bvh_read(in, &bo, &ci->m, &ci->mo, &w, &err) != MN_OK) return mn_cli_input_error(&err);
    mn_cli_print_warnings(&w);
    int n = (ci->mo.nframes + every - 1) / every;
    ci->fps = ci->mo.frame_time > 0 ? 1.0 / ci->mo.frame_time / every : 30;
    if (!(ci->fps > 0) || !isfinite(ci->fps)) ci->fps = 30;
    for (int f = 1; f < n; f++) /* every K-th frame, in place */
        memmove(ci->mo.q + (size_t)f * (size_t)ci->m->nq,
                ci->mo.q + (size_t)f * every * (size_t)ci->m->nq,
                sizeof(double) * (size_t)ci->m->nq);
    ci->mo.nframes = n;
    return MN_EXIT_OK;
}

static void compress_free(compress_input* ci) {
    if (ci->m) mn_motion_free(&ci->mo);
    free(ci->locks);
    mn_seq_destroy(ci->s);
    mn_model_destroy(ci->m);
}

typedef struct compress_args {
    const char* out;
    double scale, lock_tol;
    int every;
    mn_clip_options co;
} compress_args;

static int parse_segment(const char* v, void* dest) {
    int n;
    if (!mn_cli_parse_int(v, &n) || (n != 8 && n != 16 && n != 32)) return 0;
    *(int*)dest = n;
    return 1;
}

#define AT(f, t) MN_CLI_AT(compress_args, f, t)
static const mn_cli_opt compress_opts[] = {
    {"--out", MN_CLI_STRING, AT(out, const char*), .bad = NULL},
    {"--scale", MN_CLI_DOUBLE, AT(scale, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--scale needs a positive number"},
    {"--tol", MN_CLI_DOUBLE, AT(co.tol, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--tol needs a positive number"},
    {"--lock-tol", MN_CLI_DOUBLE, AT(lock_tol, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--lock-tol needs a positive number"},
    {"--shell", MN_CLI_DOUBLE, AT(co.shell, double), 0, DBL_MAX,
     .bad = "--shell needs a number >= 0"},
    {"--every", MN_CLI_INT, AT(every, int), 1, INT_MAX, .bad = "--every needs a positive integer"},
    {"--vertices", MN_CLI_INT, AT(co.vertices, int), 2, 3, .bad = "--vertices needs 2 or 3"},
    {"--max-segment", MN_CLI_CALL, AT(co.max_segment, int),
     .bad = "--max-segment needs 8, 16 or 32", .parse = parse_segment},
};
#undef AT
const mn_cli_table mn_cmd_anim_compress_options =
    ANIM_TABLE(compress_opts, 1, "too many arguments");

static int compress_take(int argc, char** argv) {
    const char* in = NULL;
    compress_args args = {NULL, 0, 1e-4, 1, mn_clip_default()};
    int bad = mn_cli_parse(&mn_cmd_anim_compress_options, argc - 1, argv + 1, &args, &in, NULL);
    if (bad) return bad;
    const char* out = args.out;
    double scale = args.scale, lock_tol = args.lock_tol;
    int every = args.every;
    mn_clip_options co = args.co;
    if (!in) return mn_cli_usage_error("anim", "compress needs TAKE.bvh or SEQ.json");
    compress_input ci;
    int code = compress_read(in, scale, every, lock_tol, co.shell, &ci);
    if (code != MN_EXIT_OK) {
        compress_free(&ci);
        return code;
    }
    mn_model* m = ci.m;
    int n = ci.mo.nframes;
    mn_error err;
    if (n < 1) {
        fprintf(stderr, "marionette: %s: the take has no frames\n", mn_cli_safe(in));
        compress_free(&ci);
        return MN_EXIT_INPUT;
    }
    /* with locks: the plain clip first, for its ratio */
    double plain_ratio = 0;
    if (ci.nlocks) {
        mn_clip_stats sp;
        mn_clip* p = mn_clip_compress(m, ci.mo.q, n, ci.fps, &co, &sp, &err);
        if (!p) {
            compress_free(&ci);
            return mn_cli_input_error(&err);
        }
        plain_ratio = sp.ratio;
        mn_clip_destroy(p);
    }
    co.locks = ci.locks, co.nlocks = ci.nlocks;
    mn_clip_stats st;
    mn_clip* c = mn_clip_compress(m, ci.mo.q, n, ci.fps, &co, &st, &err);
    if (!c) {
        code = mn_cli_input_error(&err);
    } else {
        /* the safe writer as every other output: no symlink followed, no FIFO waited on, the
         * old file whole when the write fails */
        if (out && mn_write_file_atomic(out, (const char*)mn_clip_bytes(c), mn_clip_size(c),
                                        &err) != MN_OK)
            code = mn_cli_input_error(&err);
        if (code == MN_EXIT_OK) {
            printf("file=%s frames=%d fps=%.9g tracks=%d rest=%d constant=%d sparse=%d "
                   "dense=%d keys=%ld raw_bytes=%zu bytes=%zu ratio=%.2f tol=%g shell=%g "
                   "vertices=%d max_error=%.4g worst_joint=%s worst_frame=%d",
                   mn_cli_safe(in), st.frames, ci.fps, st.tracks, st.rest, st.constant, st.sparse,
                   st.dense, st.keys, st.raw_bytes, st.bytes, st.ratio, co.tol, co.shell,
                   co.vertices ? co.vertices : 3, st.max_error,
                   mn_cli_safe(m->jnt_name[st.worst_joint]),
                   ci.s ? st.worst_frame : st.worst_frame * every);
            if (ci.nlocks)
                printf(" locks=%d lock_tol=%g lock_error=%.4g unlocked_ratio=%.2f", ci.nlocks,
                       lock_tol, st.lock_error, plain_ratio);
            printf("\n");
        }
        mn_clip_destroy(c);
    }
    compress_free(&ci);
    return code;
}

/* anim info SEQ.json [--script SCRIPT] [--out OUT.json]: every mistake gets the one message */
typedef struct info_args {
    const char *script, *out;
} info_args;
static const char anim_info_usage[] = "info takes one SEQ.json [--script SCRIPT] [--out OUT.json]";
static const mn_cli_opt anim_info_opts[] = {
    {"--script", MN_CLI_STRING, MN_CLI_AT(info_args, script, const char*), .bad = NULL},
    {"--out", MN_CLI_STRING, MN_CLI_AT(info_args, out, const char*), .bad = NULL},
};
const mn_cli_table mn_cmd_anim_info_options = {
    .cmd = "anim",
    MN_CLI_OPTS(anim_info_opts),
    .unknown = anim_info_usage,
    .missing = anim_info_usage,
    .max_pos = 1,
    .too_many = anim_info_usage,
};

int mn_cmd_anim(int argc, char** argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? MN_EXIT_USAGE : MN_EXIT_OK;
    }
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    if (!strcmp(argv[1], "info")) {
        const char* seq = NULL;
        info_args a = {NULL, NULL};
        int n = 0;
        if (mn_cli_parse(&mn_cmd_anim_info_options, argc - 1, argv + 1, &a, &seq, &n))
            return MN_EXIT_USAGE;
        if (n == 0) return mn_cli_usage_error("anim", "%s", anim_info_usage);
        return info(seq, a.script, a.out);
    }
    if (!strcmp(argv[1], "bake")) return bake(argc, argv);
    if (!strcmp(argv[1], "import")) return import_take(argc, argv);
    if (!strcmp(argv[1], "compress")) return compress_take(argc, argv);
    if (!strcmp(argv[1], "crossfade")) return mn_anim_crossfade(argc, argv);
    if (!strcmp(argv[1], "root-motion")) return mn_anim_root_motion(argc, argv);
    if (!strcmp(argv[1], "loop")) return mn_anim_loop(argc, argv);
    if (!strcmp(argv[1], "retime")) return mn_anim_retime(argc, argv);
    return mn_cli_usage_error("anim",
                              "unknown subcommand '%s' (info, bake, import, compress, crossfade, "
                              "root-motion, loop, retime)",
                              argv[1]);
}
