/* marionette retarget SRC --to TARGET [--map MAP] --out OUT.bvh|OUT.glb: a take of one
 * skeleton onto another, with the figures of the clean-up next to a naive copy of joint
 * angles. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <marionette/gltf.h>
#include <marionette/retarget.h>
#include <marionette/sequence.h>

#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "batch.h"
#include "cli.h"
#include "options.h"

const char mn_cmd_retarget_summary[] =
    "move a motion onto another skeleton (aligned, root scaled, feet pinned) and report skate";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette retarget SRC --to TARGET [--map MAP] --out OUT.bvh|.glb|.json\n"
            "                           [--no-cleanup] [--no-hands] [--contact-height H]\n"
            "                           [--contact-speed V]\n"
            "       marionette retarget SRC --to TARGET [--map MAP] --dry-run [--json]\n"
            "       marionette retarget SRC... --to TARGET --out-dir DIR [--format bvh|glb]\n"
            "                           [-j N] [--force] [the options above]\n"
            "\n"
            "Moves the motion of SRC (a BVH take, or a glTF file's first animation) onto the\n"
            "figure TARGET (any figure file, or 'stickman' for the built-in stick figure) and\n"
            "writes every frame to OUT: BVH, or a glTF 2.0 binary (.glb) with the figure, its\n"
            "animation and, when TARGET is a skinned glTF file, its skinned mesh, or a sequence\n"
            "document (.json: a key per frame and the heel and toe contact track of each foot,\n"
            "docs/sequence.md); OUT is replaced atomically. Joints are paired by the built-in rig "
            "tables, or by the map\n"
            "file MAP (lines 'ROLE SOURCE TARGET', see docs/retarget.md). Bones take the\n"
            "source's world rotations from rest, aligned for the rest poses (T-pose onto\n"
            "A-pose); the root path is scaled by the leg lengths;\n"
            "then the feet follow the source's scaled ankle paths and are pinned while the\n"
            "source foot is in contact, and the hands are pulled along the scaled wrist paths\n"
            "(Lagrange solver). --no-cleanup skips that step, --no-hands the hands. The heel,\n"
            "the toe and the ankle are each found planted when within H leg lengths of their\n"
            "lowest height nearby (default 0.12) and slower than V leg lengths per second\n"
            "(default 0.2), until they rise above 0.18 or move faster than 0.3; the ankle is\n"
            "held while planted, and rolls about the heel or toe while only that is down.\n"
            "\n"
            "Prints key=value lines: the figures, frames, scale, contacts, then for the naive\n"
            "copy of joint angles (naive_*) and for the result (retarget_*): skate_max_mm and\n"
            "skate_mean_mm (horizontal slide of a foot during a contact), foot_err and hand_err\n"
            "(mean and max distance of ankles and wrists from the scaled source paths), and\n"
            "limit_violations (frame and joint pairs outside a hinge or slide range), and\n"
            "planted_skate_max_mm: the largest slide of a target ankle over any interval a\n"
            "generic detector calls planted (the source ankle within 15%% of the leg length of\n"
            "its lowest height, slower than 25%% of it per second, 3 frames) in which the\n"
            "source moves less than 2.5%% of the leg length (planted_source_mm). Lengths\n"
            "are thousandths of the target's unit (millimetres for a figure in metres).\n"
            "\n"
            "--dry-run writes nothing: it prints the rig tables detected (source_rig,\n"
            "target_rig; 'map' for a map file) and one line per role used, role=ROLE\n"
            "source=JOINT target=JOINT (a name with spaces in double quotes); --json prints\n"
            "the same as JSON.\n"
            "\n"
            "With --out-dir, every SRC is retargeted to DIR/<SRC's name>.bvh (or .glb) by N\n"
            "worker threads (-j N, default one per core); a progress bar with the rate and the\n"
            "time left on a terminal, else a line per file; a take that fails does not stop\n"
            "the others, a summary lists the failures, and the exit status is 1 when any\n"
            "failed. The key=value lines are not printed then. An output newer than its SRC,\n"
            "TARGET and MAP is up to date and not redone (a stopped batch resumes); --force\n"
            "redoes every file. Ctrl-C finishes the files being written and prints\n"
            "'interrupted: N of M done'.\n");
}

static int ends_with(const char* s, const char* e) {
    size_t n = strlen(s), k = strlen(e);
    return n >= k && !strcasecmp(s + n - k, e);
}

static void print_metrics(const char* prefix, const mn_retarget_metrics* m) {
    printf("%s_skate_max_mm=%.3f\n%s_skate_mean_mm=%.3f\n", prefix, m->skate_max_mm, prefix,
           m->skate_mean_mm);
    printf("%s_foot_err_mean_mm=%.3f\n%s_foot_err_max_mm=%.3f\n", prefix, m->foot_err_mean_mm,
           prefix, m->foot_err_max_mm);
    printf("%s_hand_err_mean_mm=%.3f\n%s_hand_err_max_mm=%.3f\n", prefix, m->hand_err_mean_mm,
           prefix, m->hand_err_max_mm);
    printf("%s_limit_violations=%ld\n%s_limit_excess_max_deg=%.3f\n", prefix, m->limit_violations,
           prefix, m->limit_excess_max_deg);
    printf("%s_planted_skate_max_mm=%.3f\n%s_planted_source_mm=%.3f\n", prefix,
           m->planted_skate_max_mm, prefix, m->planted_source_mm);
}

/* A joint name as a key=value value: in double quotes when it holds a space. */
static void print_name(const char* key, const char* name) {
    const char* safe = mn_cli_safe(name);
    printf(strchr(safe, ' ') || strchr(safe, '"') ? " %s=\"%s\"" : " %s=%s", key, safe);
}

/* --dry-run: the mapping that would be used, one line per role. */
static int dry_run(const char* src, const char* to, const char* map_path) {
    mn_error err;
    mn_model *S = NULL, *T = NULL;
    mn_retarget_map map;
    int rc = MN_EXIT_OK;
    if (mn_figure_read(src, &S, NULL, NULL, &err) != MN_OK ||
        mn_figure_read(to, &T, NULL, NULL, &err) != MN_OK ||
        (map_path ? mn_retarget_map_read(map_path, &map, &err)
                  : mn_retarget_map_detect(S, T, &map, &err)) != MN_OK) {
        rc = mn_cli_input_error(&err);
    } else {
        /* checked against the figures as a run would */
        mn_retarget* rt = mn_retarget_create(S, T, &map, NULL, &err);
        if (!rt) {
            rc = mn_cli_input_error(&err);
        } else {
            printf("source_rig=%s target_rig=%s\n",
                   map_path ? "map" : mn_rig_name(mn_rig_detect(S)),
                   map_path ? "map" : mn_rig_name(mn_rig_detect(T)));
            for (int r = 0; r < MN_ROLE_COUNT; r++) {
                if (!map.source[r][0] || !map.target[r][0]) continue;
                printf("role=%s", mn_role_name((mn_role)r));
                print_name("source", map.source[r]);
                print_name("target", map.target[r]);
                printf("\n");
            }
            mn_retarget_destroy(rt);
        }
    }
    mn_model_destroy(S);
    mn_model_destroy(T);
    return rc;
}

/* The contact tracks of the retargeter's take, on the target's feet (when source is 0) or
 * the source's. */
static void contact_tracks(const mn_retarget* rt, const mn_model* m, int source, int nframes,
                           mn_seq_doc_info* info) {
    mn_retarget_info ri;
    mn_retarget_get_info(rt, &ri);
    info->ncontact = 0;
    for (int k = 0; k < 2; k++) {
        int j = source ? ri.source_foot[k] : ri.target_foot[k];
        mn_seq_contact_track* t = &info->contact[info->ncontact];
        memset(t, 0, sizeof *t);
        if (j < 0 || strlen(m->jnt_name[j]) >= sizeof t->joint) continue;
        strcpy(t->joint, m->jnt_name[j]);
        for (int toe = 0; toe < 2; toe++) {
            int bit = toe ? MN_CONTACT_TOE : MN_CONTACT_HEEL;
            for (int f = 0; f < nframes;) {
                if (!(mn_retarget_contact(rt, k, f) & bit)) {
                    f++;
                    continue;
                }
                int g = f;
                while (g < nframes && (mn_retarget_contact(rt, k, g) & bit))
                    g++;
                if (mn_seq_contact_add(t, toe, f, g - 1) != MN_OK) break; /* full */
                f = g;
            }
        }
        info->ncontact++;
    }
}

void mn_cli_take_contacts(const mn_model* m, const mn_motion* mo, mn_seq_doc_info* info) {
    info->ncontact = 0;
    if (mn_rig_detect(m) < 0 || mo->nframes < 1) return;
    mn_retarget_options o = mn_retarget_options_default();
    o.cleanup = 0;
    mn_retarget* rt = mn_retarget_create(m, m, NULL, &o, NULL);
    if (rt && mn_retarget_set_take(rt, mo->q, mo->nframes, mo->frame_time, NULL) == MN_OK)
        contact_tracks(rt, m, 1, mo->nframes, info);
    mn_retarget_destroy(rt);
}

/* OUT.json: a sequence document of the target, a key per frame, with its contact tracks. */
static mn_status write_sequence(const char* out, const char* to, const mn_model* T,
                                const mn_motion* res, const mn_retarget* rt, mn_error* err) {
    mn_seq_def def = mn_seq_def_default();
    def.fps = 1.0 / res->frame_time;
    mn_seq* s = mn_seq_create(T, &def, err);
    if (!s) return err->status;
    mn_seq_doc_info* info = calloc(1, sizeof *info);
    mn_status st = info ? MN_OK : mn_error_set(err, MN_ERR_NOMEM, out, 0, "out", "out of memory");
    if (st == MN_OK) st = mn_seq_add_motion(s, res->q, res->nframes, 0, 0, NULL, NULL, err);
    if (st == MN_OK) {
        /* the figure as the document names it: the built-in one, or the file's full path */
        char* full = strcmp(to, "stickman") ? realpath(to, NULL) : NULL;
        const char* fig = full ? full : to;
        if (strlen(fig) >= sizeof info->figure)
            st = mn_error_set(err, MN_ERR_ARG, out, 0, "figure", "the figure's path is too long");
        else
            memcpy(info->figure, fig, strlen(fig) + 1);
        free(full);
        contact_tracks(rt, T, 0, res->nframes, info);
        if (st == MN_OK) st = mn_seq_write_doc(out, s, info, err);
    }
    free(info);
    mn_seq_destroy(s);
    return st;
}

typedef struct retarget_ctx {
    const char* to;
    const char* map_path;
    mn_retarget_options opt;
    int print; /* the key=value lines and warnings (not in a batch) */
} retarget_ctx;

/* One take onto the target: reads SRC and TARGET, writes OUT. */
static mn_status retarget_one(const char* src, const char* out, void* ctxp, mn_error* errp) {
    const retarget_ctx* ctx = ctxp;
    const char *to = ctx->to, *map_path = ctx->map_path;
    mn_retarget_options opt = ctx->opt;
    int glb = ends_with(out, ".glb"), json = ends_with(out, ".json");
    mn_error err;
    mn_warnings w = {0};
    mn_model *S = NULL, *T = NULL;
    mn_motion mo = {0}, tmo = {0};
    mn_retarget_map map;
    mn_retarget* rt = NULL;
    mn_gltf skin;
    memset(&skin, 0, sizeof skin);
    double *q = NULL, *qn = NULL;
    mn_status rc = MN_ERR_ARG;
    if (mn_figure_read(src, &S, &mo, &w, &err) != MN_OK) goto fail;
    if (ctx->print) mn_cli_print_warnings(&w);
    if (mo.nframes < 1) {
        mn_error_set(&err, MN_ERR_ARG, src, 0, "motion", "the source has no motion to retarget");
        goto fail;
    }
    w.count = 0;
    /* a skinned glTF target keeps its mesh for a .glb (the model is built from that file) */
    if (mn_figure_read_skin(to, &T, &tmo, glb ? &skin : NULL, &w, &err) != MN_OK) goto fail;
    if (ctx->print) mn_cli_print_warnings(&w);
    if (map_path && mn_retarget_map_read(map_path, &map, &err) != MN_OK) goto fail;
    rt = mn_retarget_create(S, T, map_path ? &map : NULL, &opt, &err);
    if (!rt) goto fail;
    if (mn_retarget_set_take(rt, mo.q, mo.nframes, mo.frame_time, &err) != MN_OK) goto fail;
    size_t n = (size_t)mo.nframes * (size_t)T->nq;
    q = malloc(n * sizeof *q);
    qn = malloc(n * sizeof *qn);
    if (!q || !qn) {
        mn_error_set(&err, MN_ERR_NOMEM, src, 0, "retarget", "out of memory for %d frames",
                     mo.nframes);
        goto fail;
    }
    for (int f = 0; f < mo.nframes; f++)
        mn_retarget_frame(rt, f, MN_RETARGET_NAIVE, qn + (size_t)f * T->nq);
    int unmet = 0;
    for (int f = 0; f < mo.nframes; f++)
        if (mn_retarget_frame(rt, f, MN_RETARGET_MAPPED, q + (size_t)f * T->nq) != MN_OK) unmet++;
    mn_retarget_metrics mn_, mr;
    mn_retarget_measure(rt, qn, mo.nframes, &mn_);
    mn_retarget_measure(rt, q, mo.nframes, &mr);
    mn_motion res = {mo.nframes, T->nq, mo.frame_time, q};
    if ((json  ? write_sequence(out, to, T, &res, rt, &err)
         : glb ? mn_gltf_write(out, T, &res, skin.nverts > 0 ? &skin : NULL, &err)
               : mn_bvh_write(out, T, &res, &err)) != MN_OK)
        goto fail;

    rc = MN_OK;
    if (!ctx->print) goto done;
    mn_retarget_info info;
    mn_retarget_get_info(rt, &info);
    printf("source=%s\ntarget=%s\n", mn_cli_safe(src), mn_cli_safe(to));
    printf("source_rig=%s\ntarget_rig=%s\n", info.rig[0] ? mn_cli_safe(info.rig[0]) : "map",
           info.rig[1] ? mn_cli_safe(info.rig[1]) : "map");
    printf("frames=%d\nfps=%.9g\nroles=%d\nscale=%.9g\n", mo.nframes, 1.0 / mo.frame_time,
           info.mapped_roles, info.scale);
    printf("contacts_left=%d\ncontacts_right=%d\nplanted=%d\nplanted_still=%d\ncleanup=%d\n",
           info.contacts[0], info.contacts[1], mr.planted, mr.planted_still, opt.cleanup);
    print_metrics("naive", &mn_);
    print_metrics("retarget", &mr);
    printf("unconverged_frames=%d\nout=%s\n", unmet, mn_cli_safe(out));
    goto done;
fail:
    *errp = err;
    rc = err.status ? err.status : MN_ERR_ARG;
done:
    free(q);
    free(qn);
    mn_retarget_destroy(rt);
    mn_gltf_free(&skin);
    mn_motion_free(&mo);
    mn_motion_free(&tmo);
    mn_model_destroy(S);
    mn_model_destroy(T);
    return rc;
}

typedef struct retarget_args {
    const char *to, *map, *out, *out_dir, *format;
    mn_retarget_options opt;
    int jobs, force, dry;
} retarget_args;

#define AT(f, t) MN_CLI_AT(retarget_args, f, t)
static const mn_cli_opt retarget_opts[] = {
    {"-j", MN_CLI_INT, AT(jobs, int), 1, INT_MAX, .bad = "-j needs a number of workers >= 1",
     .missing = "-j needs a number of workers >= 1", .alias = "--jobs"},
    {"--out-dir", MN_CLI_STRING, AT(out_dir, const char*), .bad = NULL},
    {"--format", MN_CLI_STRING, AT(format, const char*), .bad = NULL},
    {"--to", MN_CLI_STRING, AT(to, const char*), .bad = NULL},
    {"--map", MN_CLI_STRING, AT(map, const char*), .bad = NULL},
    {"--out", MN_CLI_STRING, AT(out, const char*), .bad = NULL},
    {"--contact-height", MN_CLI_DOUBLE, AT(opt.contact_height, double), 0, DBL_MAX,
     .bad = "--contact-height needs a number >= 0"},
    {"--contact-speed", MN_CLI_DOUBLE, AT(opt.contact_speed, double), 0, DBL_MAX,
     .bad = "--contact-speed needs a number >= 0"},
    {"--force", MN_CLI_FLAG, AT(force, int), .lo = 1},
    {"--dry-run", MN_CLI_FLAG, AT(dry, int), .lo = 1},
    {"--no-cleanup", MN_CLI_FLAG, AT(opt.cleanup, int), .lo = 0},
    {"--no-hands", MN_CLI_FLAG, AT(opt.hands, int), .lo = 0},
};
#undef AT
const mn_cli_table mn_cmd_retarget_options = {
    .cmd = "retarget",
    MN_CLI_OPTS(retarget_opts),
    .unknown = "unknown option '%s'",
    .missing = "%s needs a value",
    .max_pos = -1,
};

int mn_cmd_retarget(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    retarget_args a = {NULL, NULL, NULL, NULL, NULL, mn_retarget_options_default(), 0, 0, 0};
    const char** pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!pos) return MN_EXIT_INPUT;
    int nsrc = 0;
    int bad = mn_cli_parse(&mn_cmd_retarget_options, argc, argv, &a, pos, &nsrc);
    if (bad) {
        free(pos);
        return bad;
    }
    char** srcs = (char**)pos;
    const char *src, *to = a.to, *map_path = a.map, *out = a.out, *out_dir = a.out_dir,
                     *fmt = a.format;
    mn_retarget_options opt = a.opt;
    int jobs = a.jobs, force = a.force, dry = a.dry;
    src = nsrc ? srcs[0] : NULL;
    retarget_ctx ctx = {to, map_path, opt, 1};
    int rc;
    if (!src)
        rc = mn_cli_usage_error("retarget", "missing SRC");
    else if (!to)
        rc = mn_cli_usage_error("retarget", "missing --to TARGET");
    else if (dry) {
        rc = nsrc > 1 || out || out_dir
                 ? mn_cli_usage_error("retarget", "--dry-run takes one SRC and no output")
                 : dry_run(src, to, map_path);
    } else if (out_dir) {
        if (out || (fmt && strcmp(fmt, "bvh") && strcmp(fmt, "glb")))
            rc = mn_cli_usage_error("retarget", out ? "--out and --out-dir exclude each other"
                                                    : "--format must be bvh or glb");
        else {
            ctx.print = 0;
            /* an output is also made from the target figure and the map */
            const char* deps[3] = {to, map_path, NULL};
            rc = mn_cli_batch("retarget", srcs, nsrc, out_dir,
                              fmt && !strcmp(fmt, "glb") ? ".glb" : ".bvh", jobs, force, deps,
                              retarget_one, &ctx);
        }
    } else if (nsrc > 1)
        rc = mn_cli_usage_error("retarget", "one SRC only (many go with --out-dir DIR)");
    else if (jobs || fmt || force)
        rc = mn_cli_usage_error("retarget", "-j, --format and --force go with --out-dir");
    else if (!out)
        rc = mn_cli_usage_error("retarget", "missing --out OUT.bvh or OUT.glb");
    else if (!ends_with(out, ".bvh") && !ends_with(out, ".glb") && !ends_with(out, ".json"))
        rc = mn_cli_usage_error("retarget",
                                "OUT must end in .bvh, .glb (glTF binary) or .json (sequence)");
    else {
        mn_error err;
        rc = retarget_one(src, out, &ctx, &err) == MN_OK ? MN_EXIT_OK : mn_cli_input_error(&err);
    }
    free(srcs);
    return rc;
}
