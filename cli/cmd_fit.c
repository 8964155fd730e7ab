/* marionette fit: controller transforms that reproduce a sequence of meshes with a
 * skinning rig (the LBS inverse kinematics of seed lbs-inverse-kinematics.md). */
#include <marionette/gltf.h>
#include <marionette/meshio.h>
#include <marionette/skin.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "options.h"

const char mn_cmd_fit_summary[] = "fit skinning controllers (bones, points) to a mesh sequence";

static void usage(FILE* f) {
    fprintf(
        f,
        "usage: marionette fit --rig RIG --frames F1.obj [F2.obj ...] [options]\n"
        "\n"
        "RIG is a glTF skinned mesh (.gltf/.glb: one controller per weighting joint) or\n"
        "libigl's triple OBJ DMAT TGF (rest mesh, weights, skeleton: one bone per TGF edge;\n"
        "'--rig X.obj' alone looks for X.DMAT and X.tgf). Each frame is an OBJ with the\n"
        "rig's vertex count. Frames are fitted in order, each warm-started from the one\n"
        "before (the first from a per-bone Kabsch fit).\n"
        "\n"
        "options:\n"
        "  --fixed NAMES    comma-separated controllers held at their rest pose\n"
        "  --attach         libigl rigs: keep each bone's head on its parent bone's tail\n"
        "  --iters N        iteration budget per frame (default 50)\n"
        "  --json           print a JSON document instead of key=value lines\n"
        "  --out FILE       write the output to FILE (atomically) instead of stdout\n"
        "  --tmat DIR       also write DIR/<frame>.Tmat (libigl layout [R^T; t] per bone);\n"
        "                   frames must have different base names, and the Tmat set\n"
        "                   and --out are written all or none\n"
        "\n"
        "Output per frame: a line 'frame=K file=F rms=.. rms_rel=.. max_err=.. iterations=..\n"
        "status=..' (vertex errors in the mesh's units; rms_rel relative to the rig's\n"
        "bounding-box diagonal), then one line per controller with its skinning matrix\n"
        "x -> R x + t: '  controller=NAME R=r11,r12,r13,r21,..,r33 t=x,y,z' (R row-major,\n"
        "9 significant digits). --json: the same with full precision, {\"rig\",\n"
        "\"vertices\", \"bbox_diagonal\", \"controllers\", \"frames\": [{\"file\", \"rms\",\n"
        "\"max_err\", \"iterations\", \"status\", \"transforms\": [{\"name\", \"R\", \"t\"}]}]}.\n"
        "Nothing is written when any input is bad.\n");
}

static int ends_with(const char* s, const char* suf) {
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcasecmp(s + n - k, suf) == 0;
}

/* "dir/name.obj" -> "name" */
static void stem(const char* path, char* out, size_t cap) {
    const char* b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(out, cap, "%s", b);
    char* dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

static char** sort_paths;
static int cmp_path(const void* a, const void* b) {
    return strcmp(sort_paths[*(const int*)a], sort_paths[*(const int*)b]);
}

typedef struct frame_out {
    mn_fit_result res;
    mn_xform* pose;
} frame_out;

/* The rig: a skinned glTF (g is filled and *have_gltf set: the rig points into it) or
 * libigl's triple (OBJ, DMAT, TGF; the last two found beside the OBJ when not named). */
static mn_status read_rig(const char* rig_path, const char* dmat_path, const char* tgf_path,
                          int attach, mn_rig** rig, mn_gltf* g, int* have_gltf, mn_warnings* warn,
                          mn_error* err) {
    if (ends_with(rig_path, ".gltf") || ends_with(rig_path, ".glb")) {
        if (mn_gltf_read(rig_path, g, warn, err) != MN_OK) return err->status;
        *have_gltf = 1;
        if (mn_rig_from_gltf(g, rig, NULL, err) != MN_OK) {
            mn_error e2 = *err;
            return mn_error_set(err, e2.status, rig_path, 0, e2.field, "%s", e2.message);
        }
        return MN_OK;
    }
    char dbuf[1024], tbuf[1024];
    if (!dmat_path || !tgf_path) {
        char base[1000];
        snprintf(base, sizeof base, "%s", rig_path);
        char* dot = strrchr(base, '.');
        if (dot) *dot = 0;
        if (!dmat_path) {
            snprintf(dbuf, sizeof dbuf, "%s.DMAT", base);
            dmat_path = dbuf;
        }
        if (!tgf_path) {
            snprintf(tbuf, sizeof tbuf, "%s.tgf", base);
            tgf_path = tbuf;
        }
    }
    return mn_rig_read_libigl(rig_path, dmat_path, tgf_path, attach, rig, NULL, warn, err);
}

/* --fixed NAMES (comma-separated controllers) into fixed; an unknown name is refused with
 * the nearest controller's name suggested. */
static mn_status fixed_set(const mn_rig* rig, const char* rig_path, const char* fixed_names,
                           uint8_t* fixed, mn_error* err) {
    char* list = malloc(strlen(fixed_names) + 1);
    if (!list) return mn_error_set(err, MN_ERR_NOMEM, "", 0, "--fixed", "out of memory");
    strcpy(list, fixed_names);
    for (char* tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int j = mn_rig_find_ctrl(rig, tok);
        if (j < 0) {
            /* the nearest controller name, as joint names are suggested */
            int limit = mn_name_distance_limit(tok), best = limit + 1, near = -1;
            for (int c = 0; c < rig->nctrl; c++) {
                int dist = mn_name_distance(tok, rig->ctrl_name[c], limit);
                if (dist < best) best = dist, near = c;
            }
            mn_error_set(err, MN_ERR_NOTFOUND, rig_path, 0, "--fixed",
                         "no controller named \"%s\"%s%s%s", tok,
                         near >= 0 ? "; did you mean \"" : "",
                         near >= 0 ? rig->ctrl_name[near] : "", near >= 0 ? "\"?" : "");
            free(list);
            return MN_ERR_NOTFOUND;
        }
        fixed[j] = 1;
    }
    free(list);
    return MN_OK;
}

/* Fits every frame, each warm-started from the one before (the first from a per-bone
 * Kabsch fit), into outs. Returns 0, 1 for an error in err, or 2 for a failure already
 * said (a non-finite result) or out of memory. */
static int fit_frames(const mn_rig* rig, mn_fitter* fitter, const char** frames,
                      const double* const* targets, frame_out* outs, int nframes, int iters,
                      mn_error* err) {
    mn_fit_options opt = mn_fit_default();
    opt.max_iters = iters;
    mn_xform* pose = malloc((size_t)rig->nctrl * sizeof *pose);
    if (!pose) return 2;
    mn_rig_rest_pose(rig, pose);
    int rc = 0;
    for (int k = 0; k < nframes && !rc; k++) {
        if (k == 0) mn_fit_kabsch(fitter, pose, targets[0], 1);
        mn_status st = mn_fit(fitter, pose, targets[k], &opt, &outs[k].res);
        if (st != MN_OK && st != MN_ERR_NOCONVERGE) {
            mn_error_set(err, st, frames[k], 0, "v", "cannot fit this frame (%s: %s)",
                         mn_status_name(st), outs[k].res.message);
            rc = 1;
            break;
        }
        double errs[2] = {outs[k].res.rms, outs[k].res.max_err};
        int finite = mn_cli_finite(frames[k], "v", errs, 2);
        for (int j = 0; finite && j < rig->nctrl; j++) {
            mn_xform S = mn_rig_skin_xform(rig, pose, j);
            double v[12] = {S.p.x, S.p.y, S.p.z};
            memcpy(v + 3, S.R.m, sizeof S.R.m);
            finite = mn_cli_finite(frames[k], "v", v, 12);
        }
        if (!finite)
            rc = 2;
        else
            memcpy(outs[k].pose, pose, (size_t)rig->nctrl * sizeof *pose);
    }
    free(pose);
    return rc;
}

/* The results: key=value lines per frame and controller, or one JSON document. */
static void print_results(FILE* mem, int json, const mn_rig* rig, const char* rig_path,
                          const char** frames, const frame_out* outs, int nframes) {
    double diag = mn_rig_bbox_diagonal(rig);
    if (json) {
        fprintf(mem, "{\"rig\":");
        mn_cli_json_string(mem, rig_path);
        fprintf(mem, ",\"vertices\":%d,\"bbox_diagonal\":%s,\"controllers\":[", rig->nverts,
                mn_cli_json_num(diag));
        for (int j = 0; j < rig->nctrl; j++) {
            fprintf(mem, j ? "," : "");
            mn_cli_json_string(mem, rig->ctrl_name[j]);
        }
        fprintf(mem, "],\"frames\":[");
    }
    for (int k = 0; k < nframes; k++) {
        const mn_fit_result* r = &outs[k].res;
        if (json) {
            fprintf(mem, "%s{\"file\":", k ? "," : "");
            mn_cli_json_string(mem, frames[k]);
            fprintf(mem,
                    ",\"rms\":%s,\"max_err\":%s,\"iterations\":%d,\"status\":\"%s\","
                    "\"transforms\":[",
                    mn_cli_json_num(r->rms), mn_cli_json_num(r->max_err), r->iterations,
                    mn_status_name(r->status));
            for (int j = 0; j < rig->nctrl; j++) {
                mn_xform S = mn_rig_skin_xform(rig, outs[k].pose, j);
                fprintf(mem, "%s{\"name\":", j ? "," : "");
                mn_cli_json_string(mem, rig->ctrl_name[j]);
                fprintf(mem, ",\"R\":[");
                for (int q = 0; q < 9; q++)
                    fprintf(mem, "%s%s", q ? "," : "", mn_cli_json_num(S.R.m[q]));
                fprintf(mem, "],\"t\":[%s,%s,%s]}", mn_cli_json_num(S.p.x), mn_cli_json_num(S.p.y),
                        mn_cli_json_num(S.p.z));
            }
            fprintf(mem, "]}");
        } else {
            fprintf(mem,
                    "frame=%d file=%s rms=%.9g rms_rel=%.3g max_err=%.9g iterations=%d status=%s\n",
                    k + 1, mn_cli_safe(frames[k]), r->rms, r->rms / diag, r->max_err, r->iterations,
                    mn_status_name(r->status));
            for (int j = 0; j < rig->nctrl; j++) {
                mn_xform S = mn_rig_skin_xform(rig, outs[k].pose, j);
                fprintf(mem, "  controller=%s R=", mn_cli_safe(rig->ctrl_name[j]));
                for (int q = 0; q < 9; q++)
                    fprintf(mem, "%s%.9g", q ? "," : "", S.R.m[q] + 0.0);
                fprintf(mem, " t=%.9g,%.9g,%.9g\n", S.p.x + 0.0, S.p.y + 0.0, S.p.z + 0.0);
            }
        }
    }
    if (json) fprintf(mem, "]}\n");
}

/* Two outputs with one path (frames with one base name) would write one file: refused,
 * naming both. Returns 0, 1 for an error in err, 2 when out of memory. */
static int outputs_unique(char** opaths, int nout, const char** frames, int nframes,
                          const char* tmat_dir, mn_error* err) {
    int* order = malloc(((size_t)nout + 1) * sizeof *order);
    if (!order) return 2;
    for (int i = 0; i < nout; i++)
        order[i] = i;
    sort_paths = opaths;
    qsort(order, (size_t)nout, sizeof *order, cmp_path);
    int rc = 0;
    for (int i = 1; i < nout && !rc; i++)
        if (!strcmp(opaths[order[i - 1]], opaths[order[i]])) {
            int a = order[i - 1] < order[i] ? order[i - 1] : order[i],
                b = a == order[i] ? order[i - 1] : order[i];
            mn_error_set(err, MN_ERR_ARG, opaths[a], 0, tmat_dir ? "--tmat" : "--out",
                         "written twice (by %s and by %s): outputs must have different names",
                         a < nframes && tmat_dir ? frames[a] : "--out",
                         b < nframes && tmat_dir ? frames[b] : "--out");
            rc = 1;
        }
    free(order);
    return rc;
}

/* Every frame's OBJ into targets (positions only) and a pose buffer per frame into outs.
 * Returns 0, 1 for an error in err, 2 when out of memory. */
static int read_frames(const mn_rig* rig, const char** frames, double** targets, frame_out* outs,
                       int nframes, mn_error* err) {
    for (int k = 0; k < nframes; k++) {
        mn_mesh mesh;
        if (mn_obj_read(frames[k], &mesh, NULL, err) != MN_OK) return 1;
        if (mesh.nverts != rig->nverts) {
            mn_error_set(err, MN_ERR_PARSE, frames[k], 0, "v", "%d vertices, the rig has %d",
                         mesh.nverts, rig->nverts);
            mn_mesh_free(&mesh);
            return 1;
        }
        targets[k] = mesh.pos; /* keep the positions, drop the triangles */
        free(mesh.tris);
        outs[k].pose = malloc((size_t)rig->nctrl * sizeof(mn_xform));
        if (!outs[k].pose) return 2;
    }
    return 0;
}

/* The Tmat set: DIR/<frame's base name>.Tmat per frame, paths and texts into opaths[k],
 * otexts[k], olens[k]. Returns 0, 1 for an error in err, 2 when out of memory. */
static int tmat_texts(const mn_rig* rig, const char** frames, const frame_out* outs, int nframes,
                      const char* tmat_dir, char** opaths, char** otexts, size_t* olens,
                      mn_error* err) {
    mn_xform* S = malloc((size_t)rig->nctrl * sizeof *S);
    if (!S) return 2;
    int rc = 0;
    for (int k = 0; k < nframes && !rc; k++) {
        size_t flen = strlen(frames[k]) + 1, cap = strlen(tmat_dir) + flen + 8;
        char* name = malloc(flen);
        opaths[k] = malloc(cap);
        if (!name || !opaths[k]) {
            free(name);
            rc = 2;
            break;
        }
        stem(frames[k], name, flen);
        snprintf(opaths[k], cap, "%s/%s.Tmat", tmat_dir, name);
        free(name);
        for (int j = 0; j < rig->nctrl; j++)
            S[j] = mn_rig_skin_xform(rig, outs[k].pose, j);
        if (mn_tmat_format(opaths[k], rig->nctrl, S, &otexts[k], &olens[k], err) != MN_OK) rc = 1;
    }
    free(S);
    return rc;
}

typedef struct fit_args {
    const char *rig_path, *dmat_path, *tgf_path, *fixed_names, *out_path, *tmat_dir;
    mn_cli_list frames; /* room for argc names */
    int iters, json, attach;
} fit_args;

/* --rig FILE, and after an OBJ rig its .dmat and .tgf files when they follow. */
static int take_rig(void* args, int argc, char** argv, int* i) {
    fit_args* a = args;
    a->rig_path = argv[++*i];
    if (ends_with(a->rig_path, ".obj")) {
        while (*i + 1 < argc && argv[*i + 1][0] != '-') {
            if (ends_with(argv[*i + 1], ".dmat"))
                a->dmat_path = argv[++*i];
            else if (ends_with(argv[*i + 1], ".tgf"))
                a->tgf_path = argv[++*i];
            else
                break;
        }
    }
    return 0;
}

#define AT(f, t) MN_CLI_AT(fit_args, f, t)
static const mn_cli_opt fit_opts[] = {
    {"--rig", MN_CLI_TAKE, AT(rig_path, const char*), .take = take_rig},
    {"--frames", MN_CLI_PATHS, AT(frames, mn_cli_list), .bad = NULL},
    {"--fixed", MN_CLI_STRING, AT(fixed_names, const char*), .bad = NULL},
    {"--iters", MN_CLI_INT, AT(iters, int), 1, INT_MAX, .bad = "--iters needs a positive integer"},
    {"--json", MN_CLI_FLAG, AT(json, int), .lo = 1},
    {"--attach", MN_CLI_FLAG, AT(attach, int), .lo = 1},
    {"--out", MN_CLI_STRING, AT(out_path, const char*), .bad = NULL},
    {"--tmat", MN_CLI_STRING, AT(tmat_dir, const char*), .bad = NULL},
};
#undef AT
const mn_cli_table mn_cmd_fit_options = {
    .cmd = "fit",
    MN_CLI_OPTS(fit_opts),
    .unknown = "unknown argument '%s'",
    .missing = "unknown argument '%s'",
    .dash_option = 1,
};

/* The command's arguments into a (whose frames has room for argc names); returns 0 or the
 * usage error's exit code, said. */
static int parse_args(int argc, char** argv, fit_args* a) {
    int rc = mn_cli_parse(&mn_cmd_fit_options, argc, argv, a, NULL, NULL);
    if (rc) return rc;
    if (!a->rig_path || a->frames.n == 0)
        return mn_cli_usage_error("fit", "--rig and --frames are required");
    return 0;
}

int mn_cmd_fit(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    fit_args args = {.iters = 50};
    args.frames = (mn_cli_list){calloc((size_t)argc, sizeof(const char*)), 0, argc};
    if (!args.frames.v) return mn_cli_usage_error("fit", "out of memory");
    int bad = parse_args(argc, argv, &args);
    if (bad) {
        free(args.frames.v);
        return bad;
    }
    const char *rig_path = args.rig_path, *fixed_names = args.fixed_names,
               *out_path = args.out_path, *tmat_dir = args.tmat_dir;
    const char** frames = args.frames.v;
    int nframes = args.frames.n, iters = args.iters, json = args.json;

    mn_error err;
    mn_error_clear(&err);
    mn_warnings warn = {0};
    mn_rig* rig = NULL;
    mn_gltf g;
    int have_gltf = 0, rc = MN_EXIT_INPUT;
    mn_fitter* fitter = NULL;
    uint8_t* fixed = NULL;
    double** targets = calloc((size_t)nframes, sizeof *targets);
    frame_out* outs = calloc((size_t)nframes, sizeof *outs);
    char* text = NULL;
    size_t text_len = 0;
    FILE* mem = NULL;
    int nout = 0;
    char** opaths = NULL;
    char** otexts = NULL;
    size_t* olens = NULL;
    if (!targets || !outs) goto done;

    /* ---- the rig ---- */
    if (read_rig(rig_path, args.dmat_path, args.tgf_path, args.attach, &rig, &g, &have_gltf, &warn,
                 &err) != MN_OK)
        goto input_error;
    mn_cli_print_warnings(&warn);

    /* ---- the fixed set ---- */
    fixed = calloc((size_t)rig->nctrl, 1);
    if (!fixed) goto done;
    if (fixed_names && fixed_set(rig, rig_path, fixed_names, fixed, &err) != MN_OK) {
        if (err.status == MN_ERR_NOMEM) goto done;
        goto input_error;
    }
    fitter = mn_fitter_create(rig, fixed, &err);
    if (!fitter) goto input_error;

    /* ---- read every frame before fitting or writing anything ---- */
    int rd = read_frames(rig, frames, targets, outs, nframes, &err);
    if (rd == 1) goto input_error;
    if (rd) goto done;

    /* ---- fit, warm-starting each frame from the previous ---- */
    int fr =
        fit_frames(rig, fitter, frames, (const double* const*)targets, outs, nframes, iters, &err);
    if (fr == 1) goto input_error;
    if (fr) goto done;

    /* ---- output ---- */
    mem = open_memstream(&text, &text_len);
    if (!mem) goto done;
    print_results(mem, json, rig, rig_path, frames, outs, nframes);
    if (fclose(mem) != 0) {
        mem = NULL;
        goto done;
    }
    mem = NULL;
    /* ---- the Tmat set and --out: every file written, or none ---- */
    nout = (tmat_dir ? nframes : 0) + (out_path ? 1 : 0);
    opaths = calloc((size_t)nout + 1, sizeof *opaths);
    otexts = calloc((size_t)nout + 1, sizeof *otexts);
    olens = calloc((size_t)nout + 1, sizeof *olens);
    if (!opaths || !otexts || !olens) goto done;
    if (tmat_dir) {
        int tm = tmat_texts(rig, frames, outs, nframes, tmat_dir, opaths, otexts, olens, &err);
        if (tm == 1) goto input_error;
        if (tm) goto done;
    }
    if (out_path) {
        opaths[nout - 1] = malloc(strlen(out_path) + 1);
        if (!opaths[nout - 1]) goto done;
        strcpy(opaths[nout - 1], out_path);
        otexts[nout - 1] = text;
        olens[nout - 1] = text_len;
    }
    /* Two frames with one base name would write one file: refuse rather than overwrite. */
    int uq = outputs_unique(opaths, nout, frames, nframes, tmat_dir, &err);
    if (uq == 1) goto input_error;
    if (uq) goto done;
    if (nout > 0 && mn_write_files_atomic(nout, (const char* const*)opaths,
                                          (const char* const*)otexts, olens, &err) != MN_OK)
        goto input_error;
    if (!out_path) fwrite(text, 1, text_len, stdout);
    rc = MN_EXIT_OK;
    goto done;
input_error:
    rc = mn_cli_input_error(&err);
done:
    for (int i = 0; opaths && i < nout; i++)
        free(opaths[i]);
    for (int i = 0; otexts && i < nout - (out_path ? 1 : 0); i++)
        free(otexts[i]);
    free(opaths);
    free(otexts);
    free(olens);
    if (mem) fclose(mem);
    free(text);
    for (int k = 0; targets && k < nframes; k++)
        free(targets[k]);
    for (int k = 0; outs && k < nframes; k++)
        free(outs[k].pose);
    free(targets);
    free(outs);
    free(fixed);
    mn_fitter_destroy(fitter);
    mn_rig_destroy(rig);
    if (have_gltf) mn_gltf_free(&g);
    free(frames);
    return rc;
}
