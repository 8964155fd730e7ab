/* marionette sim: a soft-body scene (docs/softbody.md) run headless: the body coupled both
 * ways to its rig (Wu & Umetani 2023; the fit of seed lbs-inverse-kinematics.md runs in
 * every substep), frame after frame, written as the simulated mesh (OBJ), the controllers'
 * tracks (JSON, and BVH for a chain of bones) and a glTF binary with the controllers baked
 * as its animation. */
#include <marionette/meshio.h>
#include <marionette/simscene.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "options.h"
#include "sim_scenes.inc"

const char mn_cmd_sim_summary[] =
    "soft-body scene coupled to its rig: simulate, fit every substep, bake the controllers";

static void usage(FILE* f) {
    fprintf(
        f,
        "usage: marionette sim [SCENE.json | --scene tube|jelly] [--frames N] [--dt S]\n"
        "                      [--substeps N] [--one-way] [--out DIR] [--obj-every K]\n"
        "\n"
        "SCENE.json is a soft-body scene document (docs/softbody.md): a mesh (OBJ, a skinned\n"
        "glTF, or a generated tube), the body made of it (a lattice of tetrahedra, the\n"
        "surface, or triangles in the plane), the controllers, which are driven and how\n"
        "(keyed paths, the glTF's own animation), the material, the time step and the\n"
        "coupling. Without one, the built-in scene tube (also docs/examples/sim/tube.json):\n"
        "  tube   a soft tube hanging from its top bone, swung along a circle;\n"
        "  jelly  a squat jelly on the ground, its base bone slid back and forth\n"
        "  (cylinder is the old name of tube).\n"
        "\n"
        "Every frame the driven controllers go where their drives put them, and in every\n"
        "substep the body's constraints are projected, the free controllers fitted to it and\n"
        "the complementary constraint projected (--one-way: instead, the vertices of driven\n"
        "controllers pinned and one fit a frame, as before the coupling). --frames, --dt and\n"
        "--substeps override the scene's.\n"
        "\n"
        "Writes into DIR (default sim-out, created when missing): tracks.json (per frame: time,\n"
        "fit error, residual, every controller's R and p), anim.glb (the controllers baked as\n"
        "an animation: a glTF character's own skeleton and mesh, else one joint per\n"
        "controller), tracks.bvh (when the controllers are a chain of bones), and every K-th\n"
        "frame (default 10, 0 for none) sim-NNNN.obj (the simulated mesh) and fit-NNNN.obj (the\n"
        "rig's reproduction of the body). Prints one key=value summary line.\n");
}

static void json_pose(FILE* f, const mn_xform* P) {
    fprintf(f, "{\"R\": [");
    for (int q = 0; q < 9; q++)
        fprintf(f, "%s%.10g", q ? ", " : "", P->R.m[q]);
    fprintf(f, "], \"p\": [%.10g, %.10g, %.10g]}", P->p.x, P->p.y, P->p.z);
}

/* Is the rig a chain of bones (each controller's parent the one before)? */
static int is_chain(const mn_rig* rig) {
    for (int j = 0; j < rig->nctrl; j++)
        if (rig->ctrl_kind[j] != MN_CTRL_BONE || rig->ctrl_parent[j] != j - 1) return 0;
    return 1;
}

/* The bone chain as BVH: the root bone with position and rotation channels, each child
 * with rotations relative to its parent (ZXY, degrees), an End Site at the last tail. */
static void write_bvh(FILE* f, const mn_rig* rig, const mn_xform* track, int nframes, double dt) {
    int m = rig->nctrl;
    fprintf(f, "HIERARCHY\n");
    for (int j = 0; j < m; j++) {
        mn_vec3 off =
            j == 0 ? rig->ctrl_pivot[0] : mn_vec3_sub(rig->ctrl_pivot[j], rig->ctrl_pivot[j - 1]);
        fprintf(f, "%*s%s %s\n%*s{\n%*sOFFSET %.9g %.9g %.9g\n%*s", j, "", j ? "JOINT" : "ROOT",
                rig->ctrl_name[j], j, "", j + 1, "", off.x, off.y, off.z, j + 1, "");
        if (j == 0)
            fprintf(f, "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n");
        else
            fprintf(f, "CHANNELS 3 Zrotation Xrotation Yrotation\n");
    }
    mn_vec3 end = mn_vec3_sub(rig->ctrl_tail[m - 1], rig->ctrl_pivot[m - 1]);
    fprintf(f, "%*sEnd Site\n%*s{\n%*sOFFSET %.9g %.9g %.9g\n", m, "", m, "", m + 1, "", end.x,
            end.y, end.z);
    for (int j = m; j >= 0; j--)
        fprintf(f, "%*s}\n", j, "");
    fprintf(f, "MOTION\nFrames: %d\nFrame Time: %.9g\n", nframes, dt);
    for (int t = 0; t < nframes; t++) {
        const mn_xform* P = track + (size_t)t * m;
        fprintf(f, "%.9g %.9g %.9g", P[0].p.x, P[0].p.y, P[0].p.z);
        for (int j = 0; j < m; j++) {
            mn_mat3 local = j == 0 ? P[0].R : mn_mat3_tmul(&P[j - 1].R, &P[j].R);
            double e[3];
            mn_euler_from_mat3(MN_EULER_ZXY, &local, e);
            fprintf(f, " %.9g %.9g %.9g", e[0] * 180 / MN_PI, e[1] * 180 / MN_PI,
                    e[2] * 180 / MN_PI);
        }
        fprintf(f, "\n");
    }
}

typedef struct frame_out {
    double t, rms, residual;
    int fit_iters;
} frame_out;

/* The tracks as JSON into a memory stream, then written atomically. */
static mn_status write_tracks(const char* path, const char* scene, const mn_sim* s,
                              const mn_xform* track, const frame_out* fr, int nframes,
                              mn_error* err) {
    char* text = NULL;
    size_t len = 0;
    FILE* mem = open_memstream(&text, &len);
    if (!mem) return mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
    const mn_rig* rig = s->rig;
    fprintf(mem, "{\n  \"scene\": ");
    mn_cli_json_string(mem, scene);
    fprintf(mem, ",\n  \"dt\": %.9g,\n  \"vertices\": %d,\n  \"controllers\": [", s->dt,
            s->mesh.nverts);
    for (int j = 0; j < rig->nctrl; j++) {
        fprintf(mem, j ? ", " : "");
        mn_cli_json_string(mem, rig->ctrl_name[j]);
    }
    fprintf(mem, "],\n  \"parents\": [");
    for (int j = 0; j < rig->nctrl; j++)
        fprintf(mem, "%s%d", j ? ", " : "", rig->ctrl_parent[j]);
    fprintf(mem, "],\n  \"driven\": [");
    for (int j = 0, k = 0; j < rig->nctrl; j++)
        if (s->driven[j]) {
            fprintf(mem, k++ ? ", " : "");
            mn_cli_json_string(mem, rig->ctrl_name[j]);
        }
    fprintf(mem, "],\n  \"frames\": [\n");
    for (int f = 0; f < nframes; f++) {
        fprintf(mem,
                "    {\"t\": %.9g, \"rms\": %.6g, \"residual\": %.6g, \"iterations\": %d, "
                "\"poses\": [",
                fr[f].t, fr[f].rms, fr[f].residual, fr[f].fit_iters);
        for (int j = 0; j < rig->nctrl; j++) {
            fprintf(mem, j ? ", " : "");
            json_pose(mem, track + (size_t)f * rig->nctrl + j);
        }
        fprintf(mem, "]}%s\n", f + 1 < nframes ? "," : "");
    }
    fprintf(mem, "  ]\n}\n");
    fclose(mem);
    mn_status st = mn_write_file_atomic(path, text, len, err);
    free(text);
    return st;
}

static mn_status write_bvh_file(const char* path, const mn_sim* s, const mn_xform* track,
                                int nframes, mn_error* err) {
    char* text = NULL;
    size_t len = 0;
    FILE* mem = open_memstream(&text, &len);
    if (!mem) return mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
    write_bvh(mem, s->rig, track, nframes, s->dt);
    fclose(mem);
    mn_status st = mn_write_file_atomic(path, text, len, err);
    free(text);
    return st;
}

/* The coupling's one-way mode: rebuilt with the same driven set and poses. */
static mn_status one_way_coupling(mn_sim* s, mn_error* err) {
    mn_coupling_options co = mn_coupling_default();
    co.enabled = 0;
    co.fit = mn_fit_default();
    mn_coupled* c = mn_coupled_create(s->body, s->rig, s->driven, &co, err);
    if (!c) return err->status ? err->status : MN_ERR_ARG;
    memcpy(mn_coupled_pose(c), mn_coupled_pose(s->coupled),
           (size_t)s->rig->nctrl * sizeof(mn_xform));
    for (int j = 0; j < s->rig->nctrl; j++)
        mn_coupled_drive(c, j, &mn_coupled_pose(c)[j]);
    mn_coupled_destroy(s->coupled);
    s->coupled = c;
    return MN_OK;
}

/* Frame f's meshes: the simulated one (sim-F.obj) and the rig's reproduction carried to
 * the mesh as the body is (fit-F.obj); xm, xr and xrm are scratch of the mesh's and the
 * body's sizes. */
static mn_status write_objs(mn_sim* s, const char* out, int f, double* xm, double* xr, double* xrm,
                            mn_error* err) {
    int nv = s->mesh.nverts, nb = s->body->nverts;
    char path[2048];
    mn_sim_mesh_now(s, xm);
    snprintf(path, sizeof path, "%s/sim-%04d.obj", out, f);
    mn_status st = mn_obj_write(path, nv, xm, s->mesh.ntris, s->mesh.tris, err);
    if (st != MN_OK) return st;
    mn_rig_deform(s->rig, mn_coupled_pose(s->coupled), xr);
    if (s->rig->dim == 2) /* pairs to triples, from the end (in place) */
        for (int i = nb - 1; i >= 0; i--) {
            double a = xr[2 * i], b = xr[2 * i + 1];
            xr[3 * i] = a, xr[3 * i + 1] = b, xr[3 * i + 2] = 0;
        }
    if (s->lattice)
        mn_lattice_surface(s->lattice, xr, xrm);
    else
        memcpy(xrm, xr, (size_t)nv * 3 * sizeof(double));
    snprintf(path, sizeof path, "%s/fit-%04d.obj", out, f);
    return mn_obj_write(path, nv, xrm, s->mesh.ntris, s->mesh.tris, err);
}

typedef struct sim_args {
    const char *scene, *builtin, *out;
    int frames, obj_every, substeps, one_way;
    double dt;
} sim_args;

/* --scene tube | jelly (cylinder: tube). */
static int parse_scene(const char* v, void* dest) {
    if (!strcmp(v, "cylinder")) v = "tube";
    if (strcmp(v, "tube") && strcmp(v, "jelly")) return 0;
    *(const char**)dest = v;
    return 1;
}

#define AT(f, t) MN_CLI_AT(sim_args, f, t)
static const mn_cli_opt sim_opts[] = {
    {"--scene", MN_CLI_CALL, AT(builtin, const char*), .bad = "unknown scene '%s' (tube or jelly)",
     .parse = parse_scene},
    {"--frames", MN_CLI_INT, AT(frames, int), 1, MN_SIM_MAX_FRAMES,
     .bad = "--frames needs an integer in 1.." MN_CLI_STR(MN_SIM_MAX_FRAMES)},
    {"--dt", MN_CLI_DOUBLE, AT(dt, double), MN_CLI_POSITIVE, 1,
     .bad = "--dt needs seconds in (0, 1]"},
    {"--substeps", MN_CLI_INT, AT(substeps, int), 1, 1000,
     .bad = "--substeps needs an integer in 1..1000"},
    {"--obj-every", MN_CLI_INT, AT(obj_every, int), 0, INT_MAX,
     .bad = "--obj-every needs a non-negative integer"},
    {"--out", MN_CLI_STRING, AT(out, const char*), .bad = NULL},
    {"--one-way", MN_CLI_FLAG, AT(one_way, int), .lo = 1},
};
#undef AT
const mn_cli_table mn_cmd_sim_options = {
    .cmd = "sim",
    MN_CLI_OPTS(sim_opts),
    .unknown = "unknown argument '%s'",
    .missing = "unknown argument '%s'",
    .max_pos = 1,
    .dash_option = 1,
};

int mn_cmd_sim(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    sim_args a = {NULL, "tube", "sim-out", 0, 10, 0, 0, 0};
    int bad = mn_cli_parse(&mn_cmd_sim_options, argc, argv, &a, &a.scene, NULL);
    if (bad) return bad;
    const char *scene = a.scene, *builtin = a.builtin, *out = a.out;
    int frames = a.frames, obj_every = a.obj_every, substeps = a.substeps, one_way = a.one_way;
    double dt = a.dt;
    mn_error err;
    mn_error_clear(&err);
    mn_sim* s = NULL;
    mn_sim_read_options ro = mn_sim_read_default();
    ro.trusted = 1; /* the user's own files, named on the command line */
    mn_status st;
    if (scene) {
        st = mn_sim_read(scene, &ro, &s, NULL, &err);
    } else {
        const char* text = !strcmp(builtin, "jelly") ? mn_sim_scene_jelly : mn_sim_scene_tube;
        char name[32];
        snprintf(name, sizeof name, "%s.json", builtin);
        st = mn_sim_read_mem(text, strlen(text), name, &ro, &s, NULL, &err);
    }
    if (st != MN_OK) return mn_cli_input_error(&err);
    if (frames) s->frames = frames;
    if (dt > 0) s->dt = dt;
    if (substeps) s->body->opt.substeps = substeps;
    if (one_way && one_way_coupling(s, &err) != MN_OK) {
        mn_sim_destroy(s);
        return mn_cli_input_error(&err);
    }
    /* the output folder (one level) is made when missing */
    if (mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "marionette sim: %s: cannot create the output folder: %s\n",
                mn_cli_safe(out), strerror(errno));
        mn_sim_destroy(s);
        return MN_EXIT_INPUT;
    }
    int rc = MN_EXIT_INPUT, m = s->rig->nctrl, nv = s->mesh.nverts, nb = s->body->nverts;
    mn_xform* track = malloc((size_t)s->frames * (size_t)m * sizeof *track);
    frame_out* fr = malloc((size_t)s->frames * sizeof *fr);
    double* xm = malloc((size_t)nv * 3 * sizeof(double));
    double* xr = malloc((size_t)nb * 3 * sizeof(double));
    double* xrm = malloc((size_t)nv * 3 * sizeof(double));
    if (!track || !fr || !xm || !xr || !xrm) {
        mn_error_set(&err, MN_ERR_NOMEM, "", 0, "sim", "out of memory");
        goto fail;
    }
    double t_sim = 0, t_fit = 0, t_couple = 0, res_max = 0, rms_max = 0;
    double diag = mn_rig_bbox_diagonal(s->rig);
    char path[2048];
    for (int f = 1; f <= s->frames; f++) {
        mn_coupled_result r;
        if (mn_sim_step(s, f, &r) != MN_OK) {
            mn_error_set(&err, r.status, "", 0, "sim",
                         "the simulation became unstable at frame %d (try more substeps): %s", f,
                         r.message);
            goto fail;
        }
        t_sim += r.us_sim, t_fit += r.us_fit, t_couple += r.us_couple;
        res_max = fmax(res_max, r.residual);
        rms_max = fmax(rms_max, r.fit_rms / diag);
        memcpy(track + (size_t)(f - 1) * m, mn_coupled_pose(s->coupled), (size_t)m * sizeof *track);
        fr[f - 1] = (frame_out){f * s->dt, r.fit_rms, r.residual, r.fit_iterations};
        if (obj_every > 0 && ((f - 1) % obj_every == 0 || f == s->frames) &&
            write_objs(s, out, f, xm, xr, xrm, &err) != MN_OK)
            goto fail;
    }
    snprintf(path, sizeof path, "%s/tracks.json", out);
    if (write_tracks(path, scene ? scene : builtin, s, track, fr, s->frames, &err) != MN_OK)
        goto fail;
    snprintf(path, sizeof path, "%s/anim.glb", out);
    if (mn_sim_write_glb(s, path, track, s->frames, &err) != MN_OK) goto fail;
    if (is_chain(s->rig)) {
        snprintf(path, sizeof path, "%s/tracks.bvh", out);
        if (write_bvh_file(path, s, track, s->frames, &err) != MN_OK) goto fail;
    }
    int ndriven = 0;
    for (int j = 0; j < m; j++)
        ndriven += s->driven[j];
    printf("scene=%s frames=%d verts=%d nodes=%d tets=%d controllers=%d driven=%d dt=%.6g "
           "substeps=%d coupling=%s sim_us_per_step=%.1f fit_us_per_step=%.1f "
           "couple_us_per_step=%.1f residual_max=%.3g "
           "rms_rel_max=%.3g out=%s\n",
           mn_cli_safe(scene ? scene : builtin), s->frames, nv, nb,
           s->lattice ? s->lattice->ntets : s->body->nelem, m, ndriven, s->dt,
           s->body->opt.substeps, one_way ? "one-way" : "two-way", t_sim / s->frames,
           t_fit / s->frames, t_couple / s->frames, res_max, rms_max, mn_cli_safe(out));
    rc = MN_EXIT_OK;
    goto done;
fail:
    rc = mn_cli_input_error(&err);
done:
    free(track);
    free(fr);
    free(xm);
    free(xr);
    free(xrm);
    mn_sim_destroy(s);
    return rc;
}
