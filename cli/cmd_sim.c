/* marionette sim: a soft body under gravity with one controller driven along a path; the
 * LBS fit recovers the other controllers from the simulated mesh at every time step
 * (seed lbs-inverse-kinematics.md: the inverse kinematics step runs in each time step of
 * a position-based simulation), so the result is a rig animation that reproduces the
 * simulated motion. Headless: writes the controller tracks (JSON and BVH) and OBJ frames. */
#include <marionette/meshio.h>
#include <marionette/skin.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

const char mn_cmd_sim_summary[] =
    "soft-body scene with a bone chain: simulate, fit the rig each step, write tracks";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette sim [--scene cylinder|jelly] [--frames N] [--dt S] [--out DIR]\n"
            "                      [--obj-every K] [--substeps N]\n"
            "\n"
            "Scenes (built in):\n"
            "  cylinder  a soft tube (4 bones along it) hanging from its top bone, which is\n"
            "            swung along a circle; the rest swings and follows under gravity.\n"
            "  jelly     a soft squat jelly figure (3 bones) standing on the ground, its base\n"
            "            driven back and forth; volume preserved.\n"
            "Every frame: XPBD step (distance + volume constraints, gravity, ground, substeps),\n"
            "then the fit with the driven bone fixed (warm-started from the previous frame).\n"
            "\n"
            "Writes into DIR (default sim-out, created when missing): tracks.json (per frame: "
            "time, fit\n"
            "error, every bone's R and p), tracks.bvh (the bone chain as a skeleton), and every\n"
            "K-th frame (default 10, 0 for none) sim-NNNN.obj (simulated mesh) and fit-NNNN.obj\n"
            "(the rig's reproduction). Prints one key=value summary line.\n");
}

typedef struct scene {
    const char* name;
    int axis; /* 0: along x, 1: along y */
    int hang; /* bones run down from the top end (the driven bone there) */
    double length, radius;
    int nbones, nring, nseg;
    double edge_compliance, volume_compliance, ground;
} scene;

/* A closed tube along the scene's axis: nring rings of nseg vertices and two cap
 * centres; outward-facing triangles. */
static void tube_mesh(const scene* sc, double** pos_out, int* nverts, int** tris_out, int* ntris) {
    int nr = sc->nring, ns = sc->nseg, n = nr * ns + 2, nt = 2 * ns * (nr - 1) + 2 * ns;
    double* pos = malloc((size_t)n * 3 * sizeof(double));
    int* tris = malloc((size_t)nt * 3 * sizeof(int));
    if (!pos || !tris) {
        free(pos);
        free(tris);
        *pos_out = NULL;
        *tris_out = NULL;
        return;
    }
    for (int r = 0; r < nr; r++)
        for (int s = 0; s < ns; s++) {
            double a = 2 * MN_PI * s / ns, u = sc->length * r / (nr - 1);
            double c = sc->radius * cos(a), d = sc->radius * sin(a);
            double* p = pos + 3 * (r * ns + s);
            if (sc->axis == 0) {
                p[0] = u;
                p[1] = c;
                p[2] = d;
            } else {
                p[0] = d;
                p[1] = u;
                p[2] = c;
            }
        }
    int c0 = nr * ns, c1 = c0 + 1;
    for (int k = 0; k < 3; k++) {
        pos[3 * c0 + k] = 0;
        pos[3 * c1 + k] = 0;
    }
    pos[3 * c1 + sc->axis] = sc->length;
    int t = 0;
    for (int r = 0; r + 1 < nr; r++)
        for (int s = 0; s < ns; s++) {
            int a = r * ns + s, b = r * ns + (s + 1) % ns, c = a + ns, d = b + ns;
            int* T = tris + 3 * t;
            T[0] = a, T[1] = b, T[2] = d;
            T[3] = a, T[4] = d, T[5] = c;
            t += 2;
        }
    for (int s = 0; s < ns; s++) {
        int* T = tris + 3 * t;
        T[0] = c0, T[1] = (s + 1) % ns, T[2] = s;
        T[3] = c1, T[4] = (nr - 1) * ns + s, T[5] = (nr - 1) * ns + (s + 1) % ns;
        t += 2;
    }
    /* make the winding outward (positive volume) */
    double v = 0;
    for (int k = 0; k < nt; k++) {
        const double *A = pos + 3 * tris[3 * k], *B = pos + 3 * tris[3 * k + 1],
                     *C = pos + 3 * tris[3 * k + 2];
        v += A[0] * (B[1] * C[2] - B[2] * C[1]) + A[1] * (B[2] * C[0] - B[0] * C[2]) +
             A[2] * (B[0] * C[1] - B[1] * C[0]);
    }
    if (v < 0)
        for (int k = 0; k < nt; k++) {
            int tmp = tris[3 * k + 1];
            tris[3 * k + 1] = tris[3 * k + 2];
            tris[3 * k + 2] = tmp;
        }
    *pos_out = pos;
    *nverts = n;
    *tris_out = tris;
    *ntris = nt;
}

/* A chain of bones along the axis, each attached to the one before, and weights to the
 * two nearest bone centres with a smooth step between them. */
static mn_rig* scene_rig(const scene* sc, const double* pos, int n, mn_error* err) {
    mn_rig* rig = mn_rig_create(3, n, pos, NULL, err);
    if (!rig) return NULL;
    double bl = sc->length / sc->nbones;
    for (int b = 0; b < sc->nbones; b++) {
        char name[16];
        snprintf(name, sizeof name, "bone%d", b);
        mn_ctrl_def d = mn_ctrl_default();
        d.name = name;
        d.kind = MN_CTRL_BONE;
        double h[3] = {0, 0, 0}, t[3] = {0, 0, 0};
        h[sc->axis] = sc->hang ? sc->length - b * bl : b * bl;
        t[sc->axis] = sc->hang ? sc->length - (b + 1) * bl : (b + 1) * bl;
        d.pivot = mn_v3(h[0], h[1], h[2]);
        d.tail = mn_v3(t[0], t[1], t[2]);
        d.parent = b - 1;
        d.attached = b > 0;
        if (mn_rig_add_ctrl(rig, &d, err) < 0) {
            mn_rig_destroy(rig);
            return NULL;
        }
    }
    int* idx = malloc((size_t)n * 2 * sizeof(int));
    double* w = malloc((size_t)n * 2 * sizeof(double));
    mn_status st = MN_ERR_NOMEM;
    if (idx && w) {
        for (int i = 0; i < n; i++) {
            double along = sc->hang ? sc->length - pos[3 * i + sc->axis] : pos[3 * i + sc->axis];
            double u = along / bl - 0.5; /* in bone-centre units */
            int j0 = (int)floor(u);
            if (j0 < 0) j0 = 0;
            if (j0 > sc->nbones - 2) j0 = sc->nbones - 2;
            double s = u - j0;
            s = s < 0 ? 0 : s > 1 ? 1 : s;
            s = s * s * (3 - 2 * s);
            idx[2 * i] = j0;
            idx[2 * i + 1] = j0 + 1;
            w[2 * i] = 1 - s;
            w[2 * i + 1] = s;
        }
        st = mn_rig_set_weights(rig, 2, idx, w, NULL, err);
    }
    free(idx);
    free(w);
    if (st != MN_OK) {
        mn_rig_destroy(rig);
        return NULL;
    }
    return rig;
}

/* The driven bone's pose at time t: the hanging tube's top swings along a circle and
 * rocks; the jelly's base slides back and forth and rocks. */
static mn_xform driven_pose(const scene* sc, double t) {
    mn_xform X;
    double w = 2 * MN_PI * 0.5; /* 0.5 Hz */
    if (sc->hang) {
        X.R = mn_mat3_axis_angle(mn_v3(0, 0, 1), 0.3 * sin(w * t));
        X.p = mn_v3(0.5 * sin(w * t), sc->length, 0.5 * (cos(w * t) - 1));
    } else {
        X.R = mn_mat3_axis_angle(mn_v3(0, 0, 1), 0.15 * sin(w * t));
        X.p = mn_v3(0.3 * sin(w * t), 0, 0);
    }
    return X;
}

static void json_pose(FILE* f, const mn_xform* P) {
    fprintf(f, "{\"R\": [");
    for (int q = 0; q < 9; q++)
        fprintf(f, "%s%.10g", q ? ", " : "", P->R.m[q]);
    fprintf(f, "], \"p\": [%.10g, %.10g, %.10g]}", P->p.x, P->p.y, P->p.z);
}

/* The bone chain as BVH: the root bone with position and rotation channels, each child
 * with rotations relative to its parent (ZXY, degrees), an End Site at the last tail. */
static void write_bvh(FILE* f, const mn_rig* rig, const mn_xform* track, int nframes, double dt) {
    int m = rig->nctrl;
    fprintf(f, "HIERARCHY\n");
    for (int j = 0; j < m; j++) {
        for (int k = 0; k < j; k++)
            fputc('\t', f);
        mn_vec3 off =
            j == 0 ? rig->ctrl_pivot[0] : mn_vec3_sub(rig->ctrl_pivot[j], rig->ctrl_pivot[j - 1]);
        fprintf(f, "%s %s\n", j == 0 ? "ROOT" : "JOINT", rig->ctrl_name[j]);
        for (int k = 0; k < j; k++)
            fputc('\t', f);
        fprintf(f, "{\n");
        for (int k = 0; k <= j; k++)
            fputc('\t', f);
        fprintf(f, "OFFSET %.9g %.9g %.9g\n", off.x, off.y, off.z);
        for (int k = 0; k <= j; k++)
            fputc('\t', f);
        if (j == 0)
            fprintf(f, "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n");
        else
            fprintf(f, "CHANNELS 3 Zrotation Xrotation Yrotation\n");
    }
    mn_vec3 end = mn_vec3_sub(rig->ctrl_tail[m - 1], rig->ctrl_pivot[m - 1]);
    for (int k = 0; k < m; k++)
        fputc('\t', f);
    fprintf(f, "End Site\n");
    for (int k = 0; k < m; k++)
        fputc('\t', f);
    fprintf(f, "{\n");
    for (int k = 0; k <= m; k++)
        fputc('\t', f);
    fprintf(f, "OFFSET %.9g %.9g %.9g\n", end.x, end.y, end.z);
    for (int j = m; j >= 0; j--) {
        for (int k = 0; k < j; k++)
            fputc('\t', f);
        fprintf(f, "}\n");
    }
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

static double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Writes the text of a memory stream to path atomically. */
static int write_text(const char* path, char* text, size_t len, mn_error* err) {
    return mn_write_file_atomic(path, text, len, err) == MN_OK;
}

int mn_cmd_sim(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    scene sc = {"cylinder", 1, 1, 3.0, 0.3, 4, 25, 16, 1e-7, 0, -INFINITY};
    int nframes = 120, obj_every = 10, substeps = 10;
    double dt = 1.0 / 60.0;
    const char* out = "sim-out";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--scene") && i + 1 < argc) {
            const char* s = argv[++i];
            if (!strcmp(s, "cylinder")) {
                /* defaults above */
            } else if (!strcmp(s, "jelly")) {
                scene j = {"jelly", 1, 0, 1.2, 0.5, 3, 13, 16, 1e-6, 0, 0.0};
                sc = j;
            } else {
                return mn_cli_usage_error("sim", "unknown scene '%s' (cylinder or jelly)", s);
            }
        } else if (!strcmp(argv[i], "--frames") && i + 1 < argc) {
            if (!mn_cli_parse_int(argv[++i], &nframes) || nframes < 1 || nframes > 100000)
                return mn_cli_usage_error("sim", "--frames needs an integer in 1..100000");
        } else if (!strcmp(argv[i], "--dt") && i + 1 < argc) {
            if (!mn_cli_parse_double(argv[++i], &dt) || !(dt > 0) || dt > 1)
                return mn_cli_usage_error("sim", "--dt needs seconds in (0, 1]");
        } else if (!strcmp(argv[i], "--substeps") && i + 1 < argc) {
            if (!mn_cli_parse_int(argv[++i], &substeps) || substeps < 1 || substeps > 1000)
                return mn_cli_usage_error("sim", "--substeps needs an integer in 1..1000");
        } else if (!strcmp(argv[i], "--obj-every") && i + 1 < argc) {
            if (!mn_cli_parse_int(argv[++i], &obj_every) || obj_every < 0)
                return mn_cli_usage_error("sim", "--obj-every needs a non-negative integer");
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out = argv[++i];
        } else {
            return mn_cli_usage_error("sim", "unknown argument '%s'", argv[i]);
        }
    }

    /* the output folder (one level) is made when missing */
    if (mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "marionette sim: %s: cannot create the output folder: %s\n",
                mn_cli_safe(out), strerror(errno));
        return MN_EXIT_INPUT;
    }
    mn_error err;
    mn_error_clear(&err);
    int rc = MN_EXIT_INPUT, n = 0, nt = 0;
    double* pos = NULL;
    int* tris = NULL;
    mn_rig* rig = NULL;
    mn_softbody* sb = NULL;
    mn_fitter* fit = NULL;
    mn_xform* track = NULL;
    mn_fit_result* results = NULL;
    double* xfit = NULL;
    char* text = NULL;
    size_t len = 0;
    FILE* mem = NULL;
    uint8_t* fixed = NULL;
    tube_mesh(&sc, &pos, &n, &tris, &nt);
    if (!pos) goto nomem;
    rig = scene_rig(&sc, pos, n, &err);
    if (!rig) goto fail;
    mn_softbody_options so = mn_softbody_default();
    so.edge_compliance = sc.edge_compliance;
    so.volume_compliance = sc.volume_compliance;
    so.ground = sc.ground;
    so.substeps = substeps;
    so.damping = 1.0;
    sb = mn_softbody_create(n, pos, nt, tris, NULL, &so, &err);
    if (!sb) goto fail;
    {
        /* struts that keep the tube's cross-sections round and resist kinking and
         * bending: across each ring, and from each vertex to the ones 2 and 6 rings on */
        int ns = sc.nseg, nr = sc.nring, np = 0;
        int* pairs = malloc((size_t)(nr * ns) * 3 * 2 * sizeof(int));
        if (!pairs) goto nomem;
        for (int r = 0; r < nr; r++)
            for (int s2 = 0; s2 < ns; s2++) {
                int a = r * ns + s2;
                if (s2 < ns / 2) {
                    pairs[2 * np] = a;
                    pairs[2 * np + 1] = r * ns + s2 + ns / 2;
                    np++;
                }
                if (r + 2 < nr) {
                    pairs[2 * np] = a;
                    pairs[2 * np + 1] = a + 2 * ns;
                    np++;
                }
                if (r + 6 < nr) {
                    pairs[2 * np] = a;
                    pairs[2 * np + 1] = a + 6 * ns + (s2 + ns / 2) % ns - s2;
                    np++;
                }
            }
        mn_status ps = mn_softbody_add_distances(sb, np, pairs, &err);
        free(pairs);
        if (ps != MN_OK) goto fail;
    }
    fixed = calloc((size_t)rig->nctrl, 1);
    if (!fixed) goto nomem;
    fixed[0] = 1; /* the driven bone */
    fit = mn_fitter_create(rig, fixed, &err);
    if (!fit) goto fail;
    /* pin the vertices that only the driven bone moves */
    for (int i = 0; i < n; i++)
        for (int s = 0; s < rig->k; s++)
            if (rig->w_idx[i * rig->k + s] == 0 && rig->w_val[i * rig->k + s] > 0.999)
                mn_softbody_pin(sb, i, 1);
    track = malloc((size_t)nframes * (size_t)rig->nctrl * sizeof *track);
    results = malloc((size_t)nframes * sizeof *results);
    xfit = malloc((size_t)n * 3 * sizeof(double));
    if (!track || !results || !xfit) goto nomem;

    mn_xform* pose = malloc((size_t)rig->nctrl * sizeof *pose);
    if (!pose) goto nomem;
    mn_rig_rest_pose(rig, pose);
    double t_sim = 0, t_fit = 0, rms_rel_max = 0, diag = mn_rig_bbox_diagonal(rig);
    mn_fit_options fo = mn_fit_default();
    char path[2048];
    for (int f = 0; f < nframes; f++) {
        double t = (f + 1) * dt;
        pose[0] = driven_pose(&sc, t);
        for (int i = 0; i < n; i++) {
            if (sb->inv_mass[i] != 0) continue;
            mn_vec3 xb = mn_v3(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
            mn_vec3 y = mn_vec3_add(mn_mat3_mulv(&pose[0].R, mn_vec3_sub(xb, rig->ctrl_pivot[0])),
                                    pose[0].p);
            sb->pin_target[3 * i] = y.x;
            sb->pin_target[3 * i + 1] = y.y;
            sb->pin_target[3 * i + 2] = y.z;
        }
        double c0 = cpu_us();
        mn_softbody_result sr;
        mn_status st = mn_softbody_step(sb, dt, &sr);
        double c1 = cpu_us();
        if (st != MN_OK) {
            mn_error_set(&err, st, "", 0, "sim",
                         "the simulation became unstable at frame %d (try more substeps): %s",
                         f + 1, sr.message);
            free(pose);
            goto fail;
        }
        mn_fit(fit, pose, sb->x, &fo, &results[f]);
        t_sim += c1 - c0;
        t_fit += cpu_us() - c1;
        rms_rel_max = fmax(rms_rel_max, results[f].rms / diag);
        memcpy(track + (size_t)f * rig->nctrl, pose, (size_t)rig->nctrl * sizeof *pose);
        if (obj_every > 0 && (f % obj_every == 0 || f == nframes - 1)) {
            snprintf(path, sizeof path, "%s/sim-%04d.obj", out, f + 1);
            if (mn_obj_write(path, n, sb->x, nt, tris, &err) != MN_OK) {
                free(pose);
                goto fail;
            }
            mn_rig_deform(rig, pose, xfit);
            snprintf(path, sizeof path, "%s/fit-%04d.obj", out, f + 1);
            if (mn_obj_write(path, n, xfit, nt, tris, &err) != MN_OK) {
                free(pose);
                goto fail;
            }
        }
    }
    free(pose);

    /* tracks.json */
    mem = open_memstream(&text, &len);
    if (!mem) goto nomem;
    fprintf(mem,
            "{\n  \"scene\": \"%s\",\n  \"dt\": %.9g,\n  \"vertices\": %d,\n  \"controllers\": [",
            sc.name, dt, n);
    for (int j = 0; j < rig->nctrl; j++) {
        fprintf(mem, j ? ", " : "");
        mn_cli_json_string(mem, rig->ctrl_name[j]);
    }
    fprintf(mem, "],\n  \"parents\": [");
    for (int j = 0; j < rig->nctrl; j++)
        fprintf(mem, "%s%d", j ? ", " : "", rig->ctrl_parent[j]);
    fprintf(mem, "],\n  \"driven\": [\"bone0\"],\n  \"frames\": [\n");
    for (int f = 0; f < nframes; f++) {
        fprintf(
            mem,
            "    {\"t\": %.9g, \"rms\": %.6g, \"max_err\": %.6g, \"iterations\": %d, \"poses\": [",
            (f + 1) * dt, results[f].rms, results[f].max_err, results[f].iterations);
        for (int j = 0; j < rig->nctrl; j++) {
            fprintf(mem, j ? ", " : "");
            json_pose(mem, track + (size_t)f * rig->nctrl + j);
        }
        fprintf(mem, "]}%s\n", f + 1 < nframes ? "," : "");
    }
    fprintf(mem, "  ]\n}\n");
    fclose(mem);
    mem = NULL;
    snprintf(path, sizeof path, "%s/tracks.json", out);
    if (!write_text(path, text, len, &err)) goto fail;
    free(text);
    text = NULL;
    /* tracks.bvh */
    mem = open_memstream(&text, &len);
    if (!mem) goto nomem;
    write_bvh(mem, rig, track, nframes, dt);
    fclose(mem);
    mem = NULL;
    snprintf(path, sizeof path, "%s/tracks.bvh", out);
    if (!write_text(path, text, len, &err)) goto fail;

    printf("scene=%s frames=%d verts=%d bones=%d dt=%.6g substeps=%d sim_us_per_step=%.1f "
           "fit_us_per_step=%.1f "
           "rms_rel_max=%.3g volume_ratio=%.4f out=%s\n",
           sc.name, nframes, n, rig->nctrl, dt, substeps, t_sim / nframes, t_fit / nframes,
           rms_rel_max, mn_softbody_volume(sb) / sb->rest_volume, out);
    rc = MN_EXIT_OK;
    goto done;
nomem:
    mn_error_set(&err, MN_ERR_NOMEM, "", 0, "sim", "out of memory");
fail:
    rc = mn_cli_input_error(&err);
done:
    if (mem) fclose(mem);
    free(text);
    free(pos);
    free(tris);
    free(fixed);
    free(track);
    free(results);
    free(xfit);
    mn_fitter_destroy(fit);
    mn_softbody_destroy(sb);
    mn_rig_destroy(rig);
    return rc;
}
