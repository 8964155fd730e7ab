/* marionette bench fit: the LBS fit (seed lbs-inverse-kinematics.md) per frame, warm-started
 * from the previous frame, on
 *   - the cylinder sequences (libigl layout, exact ground truth),
 *   - CesiumMan and Fox: targets made by skinning their own glTF animations, noise-free
 *     and with Gaussian noise of 1% of the bounding-box diagonal (compared with each
 *     joint's own rigid Kabsch fit under the same weights),
 *   - a synthetic 10,000-vertex, 32-controller rig,
 *   - scaling: a tube with a 24-bone chain at 1,000 to 200,000 vertices, beside one
 *     forward LBS pass of the same mesh (fit_over_lbs) and the fitted exponents.
 * One key=value line per case; times in microseconds (median over repetitions of the
 * per-frame mean) and never asserted. */
#include <marionette/gltf.h>
#include <marionette/meshio.h>
#include <marionette/skin.h>

#include <limits.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "plot.h"
#include "cli.h"
#include "options.h"

const char mn_bench_fit_summary[] = "LBS fit per frame: cylinder, CesiumMan, Fox (clean and "
                                    "noisy), 10k-vertex rig, scaling to 200k";

static void usage(FILE* f) {
    fprintf(
        f, "usage: marionette bench fit [--data DIR] [--reps N] [--case NAME] [--svg FILE]\n"
           "\n"
           "DIR is the project's data folder (default: data). Cases: cylinder, cesiumman, fox,\n"
           "synthetic, scaling (default: all). Each prints key=value lines: us_per_frame (median "
           "over N\n"
           "repetitions, default 5, of the per-frame mean of warm-started frames, thread CPU\n"
           "time; us_per_frame_min the least of them), wall_us_per_frame (the same in wall\n"
           "time), iterations, rms_rel (RMS vertex\n"
           "error / bounding-box diagonal), transform_err (largest difference to the generating\n"
           "skinning matrices: rotation entries, translations over the diagonal; skin_scale_dev\n"
           "says how far the glTF's own float32 matrices are from rotations), and for noisy\n"
           "targets rms_fit and\n"
           "rms_kabsch (a per-joint rigid fit with the same weights). The scaling case prints per\n"
           "size lbs_us (one forward LBS pass of the same mesh, same run) and fit_over_lbs, then\n"
           "exponent_fit and exponent_lbs (least-squares k of time ~ vertices^k) and\n"
           "exponent_fit_large (the two largest sizes); --svg FILE plots both times, log-log.\n");
}

/* CPU time of this thread in nanoseconds: the machine the benchmarks run on is shared,
 * and wall time then counts other processes' slices too. Both are reported. */
static double cpu_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Deterministic Gaussian noise (xorshift + Box-Muller). */
static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static double uniform01(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void) {
    return sqrt(-2.0 * log(uniform01())) * cos(2 * MN_PI * uniform01());
}

/* Largest difference between the fitted and the generating skinning matrices: rotation
 * entries as they are, translations divided by the bounding-box diagonal. The generating
 * rotation is the nearest rotation of the glTF's float32 skinning matrix. */
static double transform_error(const mn_rig* rig, const mn_xform* pose, const mn_xform* truth) {
    double e = 0, diag = mn_rig_bbox_diagonal(rig);
    for (int j = 0; j < rig->nctrl; j++) {
        mn_xform a = mn_rig_skin_xform(rig, pose, j), b = mn_rig_skin_xform(rig, truth, j);
        mn_mat3 Rb = mn_mat3_orthonormalize(&b.R);
        for (int k = 0; k < 9; k++)
            e = fmax(e, fabs(a.R.m[k] - Rb.m[k]));
        e = fmax(e, mn_vec3_dist(a.p, b.p) / diag);
    }
    return e;
}

typedef struct run_stats {
    double us_per_frame;     /* warm-started frames, thread CPU time: median over repetitions */
    double us_per_frame_min; /* the least over repetitions (the least disturbed) */
    double wall_us_per_frame;
    double us_first; /* the cold first frame (Kabsch + fit) */
    double iters_mean;
    double rms_rel_max, rms_mean, transform_err_max;
    double rms_kabsch_mean;
} run_stats;

/* Fits every frame of a sequence (nframes x nverts x 3), frame 0 from a Kabsch start, the
 * rest warm-started; timing excludes the error measurements. */
static int run_sequence(const mn_rig* rig, const double* frames, int nframes, const mn_xform* truth,
                        int reps, int print_frames, const char* label, run_stats* out) {
    mn_error err;
    mn_fitter* f = mn_fitter_create(rig, NULL, &err);
    if (!f) {
        fprintf(stderr, "marionette bench fit: %s: %s\n", label, err.message);
        return 0;
    }
    int m = rig->nctrl, n = rig->nverts;
    mn_xform* pose = malloc((size_t)m * sizeof *pose);
    mn_xform* kab = malloc((size_t)m * sizeof *kab);
    double* per_rep = malloc((size_t)reps * sizeof(double));
    double* per_rep_wall = malloc((size_t)reps * sizeof(double));
    double* first = malloc((size_t)reps * sizeof(double));
    double diag = mn_rig_bbox_diagonal(rig);
    mn_fit_options o = mn_fit_default();
    o.vertex_error = 0;
    memset(out, 0, sizeof *out);
    for (int r = 0; r < reps; r++) {
        mn_rig_rest_pose(rig, pose);
        double total = 0, total_wall = 0;
        long iters = 0;
        for (int t = 0; t < nframes; t++) {
            const double* x = frames + (size_t)t * (size_t)n * 3;
            double w0 = mn_bench_now_ns(), t0 = cpu_now_ns();
            if (t == 0) mn_fit_kabsch(f, pose, x, 1);
            mn_fit_result res;
            mn_fit(f, pose, x, &o, &res);
            double dt = (cpu_now_ns() - t0) / 1000.0, dw = (mn_bench_now_ns() - w0) / 1000.0;
            if (t == 0)
                first[r] = dt;
            else {
                total += dt;
                total_wall += dw;
            }
            iters += res.iterations;
            if (r == 0) {
                double rms, mx;
                mn_rig_error(rig, pose, x, &rms, &mx);
                double te = truth ? transform_error(rig, pose, truth + (size_t)t * (size_t)m) : -1;
                out->rms_rel_max = fmax(out->rms_rel_max, rms / diag);
                out->rms_mean += rms / nframes;
                out->transform_err_max = fmax(out->transform_err_max, te);
                /* the per-joint rigid baseline on the same frame */
                mn_rig_rest_pose(rig, kab);
                mn_fit_kabsch(f, kab, x, 0);
                double rk;
                mn_rig_error(rig, kab, x, &rk, NULL);
                out->rms_kabsch_mean += rk / nframes;
                if (print_frames)
                    printf("bench=fit case=%s frame=%d verts=%d ctrl=%d iterations=%d us=%.1f "
                           "rms=%.3g rms_rel=%.3g "
                           "max_err=%.3g transform_err=%.3g\n",
                           label, t + 1, n, m, res.iterations, dt, rms, rms / diag, mx, te);
            }
        }
        per_rep[r] = nframes > 1 ? total / (nframes - 1) : first[r];
        per_rep_wall[r] = nframes > 1 ? total_wall / (nframes - 1) : first[r];
        out->iters_mean = (double)iters / nframes;
    }
    out->us_per_frame_min = per_rep[0];
    for (int r = 1; r < reps; r++)
        out->us_per_frame_min = fmin(out->us_per_frame_min, per_rep[r]);
    out->us_per_frame = mn_bench_median(per_rep, (size_t)reps);
    out->wall_us_per_frame = mn_bench_median(per_rep_wall, (size_t)reps);
    out->us_first = mn_bench_median(first, (size_t)reps);
    free(per_rep);
    free(per_rep_wall);
    free(first);
    free(pose);
    free(kab);
    mn_fitter_destroy(f);
    return 1;
}

static void bench_cylinder(const char* data, int reps) {
    for (int attach = 0; attach <= 1; attach++) {
        char obj[1024], dmat[1024], tgf[1024];
        snprintf(obj, sizeof obj, "%s/meshseq/cylinder/cylinder.obj", data);
        snprintf(dmat, sizeof dmat, "%s/meshseq/cylinder/cylinder.DMAT", data);
        snprintf(tgf, sizeof tgf, "%s/meshseq/cylinder/cylinder.tgf", data);
        mn_rig* rig;
        mn_error err;
        if (mn_rig_read_libigl(obj, dmat, tgf, attach, &rig, NULL, NULL, &err) != MN_OK) {
            fprintf(stderr, "marionette bench fit: %s\n", err.message);
            return;
        }
        for (int seq = 1; seq <= 2; seq++) {
            double* frames = malloc(4 * (size_t)rig->nverts * 3 * sizeof(double));
            mn_xform* truth = malloc(4 * (size_t)rig->nctrl * sizeof *truth);
            int ok = 1;
            for (int k = 1; k <= 4 && ok; k++) {
                char p[1024];
                snprintf(p, sizeof p, "%s/meshseq/cylinder/poses-%d/cylinder-%d.obj", data, seq, k);
                mn_mesh mesh;
                ok = mn_obj_read(p, &mesh, NULL, &err) == MN_OK && mesh.nverts == rig->nverts;
                if (ok)
                    memcpy(frames + (size_t)(k - 1) * rig->nverts * 3, mesh.pos,
                           (size_t)rig->nverts * 3 * sizeof(double));
                mn_mesh_free(&mesh);
                snprintf(p, sizeof p, "%s/meshseq/cylinder/poses-%d/cylinder-%d.Tmat", data, seq,
                         k);
                int nb;
                mn_xform* T = NULL;
                ok = ok && mn_tmat_read(p, &nb, &T, &err) == MN_OK && nb == rig->nctrl;
                for (int b = 0; ok && b < nb; b++)
                    truth[(k - 1) * rig->nctrl + b] = mn_rig_pose_from_skin(rig, b, &T[b]);
                free(T);
            }
            if (!ok) {
                fprintf(stderr, "marionette bench fit: %s\n", err.message);
            } else {
                char label[64];
                snprintf(label, sizeof label, "cylinder-poses-%d-%s", seq,
                         attach ? "attached" : "free");
                run_stats s;
                if (run_sequence(rig, frames, 4, truth, reps, 1, label, &s))
                    printf("bench=fit case=%s frames=4 verts=%d ctrl=%d us_per_frame=%.1f "
                           "us_per_frame_min=%.1f wall_us_per_frame=%.1f us_first=%.1f "
                           "iterations=%.1f "
                           "rms_rel_max=%.3g transform_err_max=%.3g goal_rms_rel=1e-05\n",
                           label, rig->nverts, rig->nctrl, s.us_per_frame, s.us_per_frame_min,
                           s.wall_us_per_frame, s.us_first, s.iters_mean, s.rms_rel_max,
                           s.transform_err_max);
            }
            free(frames);
            free(truth);
        }
        mn_rig_destroy(rig);
    }
}

static void bench_gltf(const char* data, const char* file, const char* label, int reps) {
    char path[1024];
    snprintf(path, sizeof path, "%s/skinned/%s", data, file);
    mn_gltf g;
    mn_error err;
    if (mn_gltf_read(path, &g, NULL, &err) != MN_OK) {
        fprintf(stderr, "marionette bench fit: %s\n", err.message);
        return;
    }
    mn_rig* rig;
    int* cj;
    if (mn_rig_from_gltf(&g, &rig, &cj, &err) != MN_OK || g.nanims < 1) {
        fprintf(stderr, "marionette bench fit: %s: %s\n", path,
                g.nanims < 1 ? "no animation" : err.message);
        mn_gltf_free(&g);
        return;
    }
    double dur = g.anims[0].duration;
    int nframes = (int)(dur * 30.0) + 1;
    if (nframes < 2) nframes = 2;
    if (nframes > 300) nframes = 300;
    int n = rig->nverts, m = rig->nctrl;
    double* frames = malloc((size_t)nframes * (size_t)n * 3 * sizeof(double));
    double* noisy = malloc((size_t)nframes * (size_t)n * 3 * sizeof(double));
    mn_xform* truth = malloc((size_t)nframes * (size_t)m * sizeof *truth);
    double* jw = malloc((size_t)g.njoints * 12 * sizeof(double));
    double* sk = malloc((size_t)g.njoints * 12 * sizeof(double));
    double scale_dev = 0;
    for (int t = 0; t < nframes; t++) {
        mn_gltf_sample(&g, 0, dur * t / (nframes - 1), jw);
        mn_gltf_skin_matrices(&g, jw, sk);
        mn_gltf_skin_vertices(&g, sk, frames + (size_t)t * n * 3);
        for (int c = 0; c < m; c++) {
            const double* S = sk + 12 * cj[c];
            mn_xform X;
            for (int r = 0; r < 3; r++) {
                for (int q = 0; q < 3; q++)
                    X.R.m[3 * r + q] = S[4 * r + q];
            }
            X.p = mn_v3(S[3], S[7], S[11]);
            /* how far the skinning matrix is from a rotation (scale in the animation) */
            mn_mat3 RtR = mn_mat3_tmul(&X.R, &X.R);
            for (int q = 0; q < 9; q++)
                scale_dev = fmax(scale_dev, fabs(RtR.m[q] - (q % 4 == 0)));
            truth[(size_t)t * m + c] = mn_rig_pose_from_skin(rig, c, &X);
        }
    }
    double diag = mn_rig_bbox_diagonal(rig);
    for (size_t i = 0; i < (size_t)nframes * n * 3; i++)
        noisy[i] = frames[i] + 0.01 * diag * gauss();
    run_stats s;
    if (run_sequence(rig, frames, nframes, truth, reps, 0, label, &s))
        printf("bench=fit case=%s targets=clean frames=%d verts=%d ctrl=%d us_per_frame=%.1f "
               "us_per_frame_min=%.1f wall_us_per_frame=%.1f us_first=%.1f "
               "iterations=%.2f rms_rel_max=%.3g transform_err_max=%.3g skin_scale_dev=%.2g "
               "goal_transform_err=1e-06\n",
               label, nframes, n, m, s.us_per_frame, s.us_per_frame_min, s.wall_us_per_frame,
               s.us_first, s.iters_mean, s.rms_rel_max, s.transform_err_max, scale_dev);
    if (run_sequence(rig, noisy, nframes, NULL, reps, 0, label, &s))
        printf("bench=fit case=%s targets=noise-1pct frames=%d verts=%d ctrl=%d us_per_frame=%.1f "
               "us_per_frame_min=%.1f wall_us_per_frame=%.1f iterations=%.2f "
               "rms_fit=%.6g rms_kabsch=%.6g fit_over_kabsch=%.4f\n",
               label, nframes, n, m, s.us_per_frame, s.us_per_frame_min, s.wall_us_per_frame,
               s.iters_mean, s.rms_mean, s.rms_kabsch_mean, s.rms_mean / s.rms_kabsch_mean);
    free(frames);
    free(noisy);
    free(truth);
    free(jw);
    free(sk);
    free(cj);
    mn_rig_destroy(rig);
    mn_gltf_free(&g);
}

/* A tube of nring x nseg vertices along x, m controllers along it (points, or an
 * attached bone chain), each vertex weighted to its 4 nearest controllers, and nframes
 * frames of a travelling bending wave (targets and the generating poses). */
typedef struct tube {
    mn_rig* rig;
    double* frames;  /* nframes x n x 3 */
    mn_xform* truth; /* nframes x m */
} tube;

static int make_tube(int nring, int nseg, int m, int bones, int nframes, tube* out) {
    int n = nring * nseg;
    memset(out, 0, sizeof *out);
    double* rest = malloc((size_t)n * 3 * sizeof(double));
    int* idx = malloc((size_t)n * 4 * sizeof(int));
    double* w = malloc((size_t)n * 4 * sizeof(double));
    out->frames = malloc((size_t)nframes * (size_t)n * 3 * sizeof(double));
    out->truth = malloc((size_t)nframes * m * sizeof *out->truth);
    if (!rest || !idx || !w || !out->frames || !out->truth) goto fail;
    for (int r = 0; r < nring; r++)
        for (int s = 0; s < nseg; s++) {
            double a = 2 * MN_PI * s / nseg, x = (double)m * r / (nring - 1);
            double* p = rest + 3 * ((size_t)r * nseg + s);
            p[0] = x;
            p[1] = 0.3 * cos(a);
            p[2] = 0.3 * sin(a);
        }
    mn_rig* rig = mn_rig_create(3, n, rest, NULL, NULL);
    out->rig = rig;
    if (!rig) goto fail;
    for (int j = 0; j < m; j++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", j);
        mn_ctrl_def d = mn_ctrl_default();
        d.name = name;
        d.kind = bones ? MN_CTRL_BONE : MN_CTRL_POINT;
        d.pivot = mn_v3(j, 0, 0);
        d.tail = mn_v3(j + 1, 0, 0);
        if (bones && j > 0) {
            d.parent = j - 1;
            d.attached = 1;
        }
        mn_rig_add_ctrl(rig, &d, NULL);
    }
    for (int i = 0; i < n; i++) {
        double x = rest[3 * i] - 0.5;
        int j0 = (int)floor(x) - 1;
        for (int s = 0; s < 4; s++) {
            int j = j0 + s;
            j = j < 0 ? 0 : j >= m ? m - 1 : j;
            double dd = fabs(x - j);
            idx[4 * i + s] = j;
            w[4 * i + s] = exp(-2.0 * dd * dd);
        }
        /* merge repeated clamped indices */
        for (int s = 1; s < 4; s++)
            for (int q = 0; q < s; q++)
                if (idx[4 * i + s] == idx[4 * i + q] && w[4 * i + s] > 0) {
                    w[4 * i + q] += w[4 * i + s];
                    w[4 * i + s] = 0;
                }
    }
    /* normalise (no warning wanted here) */
    for (int i = 0; i < n; i++) {
        double sum = w[4 * i] + w[4 * i + 1] + w[4 * i + 2] + w[4 * i + 3];
        for (int s = 0; s < 4; s++)
            w[4 * i + s] /= sum;
    }
    if (mn_rig_set_weights(rig, 4, idx, w, NULL, NULL) != MN_OK) goto fail;
    for (int t = 0; t < nframes; t++) {
        mn_xform* P = out->truth + (size_t)t * m;
        mn_rig_rest_pose(rig, P);
        for (int j = 0; j < m; j++) {
            double ph = 0.3 * j - 0.15 * t;
            P[j].R = mn_mat3_axis_angle(mn_vec3_normalize(mn_v3(0.2, sin(ph), cos(ph))),
                                        0.25 * sin(ph + 0.05 * t));
            if (!bones)
                P[j].p =
                    mn_vec3_add(P[j].p, mn_v3(0.02 * sin(ph), 0.1 * cos(ph), 0.05 * t / nframes));
        }
        if (bones) {
            /* a chain: world rotations accumulate down the bones */
            for (int j = 1; j < m; j++)
                P[j].R = mn_mat3_mul(&P[j - 1].R, &P[j].R);
            mn_rig_propagate(rig, P);
        }
        mn_rig_deform(rig, P, out->frames + (size_t)t * n * 3);
    }
    free(rest);
    free(idx);
    free(w);
    return 1;
fail:
    free(rest);
    free(idx);
    free(w);
    free(out->frames);
    free(out->truth);
    mn_rig_destroy(out->rig);
    memset(out, 0, sizeof *out);
    return 0;
}

static void free_tube(tube* t) {
    free(t->frames);
    free(t->truth);
    mn_rig_destroy(t->rig);
}

/* 10,000 vertices on a bent tube, 32 controllers along it (points or an attached bone
 * chain); 60 frames. */
static void bench_synthetic(int reps, int bones) {
    const int nring = 500, nseg = 20, m = 32, nframes = 60;
    tube tb;
    if (!make_tube(nring, nseg, m, bones, nframes, &tb)) {
        fprintf(stderr, "marionette bench fit: synthetic: out of memory\n");
        return;
    }
    run_stats s;
    const char* label = bones ? "synthetic-10k-bones" : "synthetic-10k-points";
    if (run_sequence(tb.rig, tb.frames, nframes, tb.truth, reps, 0, label, &s))
        printf("bench=fit case=%s frames=%d verts=%d ctrl=%d us_per_frame=%.1f "
               "us_per_frame_min=%.1f wall_us_per_frame=%.1f us_first=%.1f "
               "iterations=%.2f rms_rel_max=%.3g transform_err_max=%.3g goal_us=1000\n",
               label, nframes, tb.rig->nverts, m, s.us_per_frame, s.us_per_frame_min,
               s.wall_us_per_frame, s.us_first, s.iters_mean, s.rms_rel_max, s.transform_err_max);
    free_tube(&tb);
}

/* One forward LBS pass (mn_rig_deform) of the rig, thread CPU time in microseconds: the
 * median over repetitions, each the mean of enough passes to last about a millisecond. */
static double time_lbs(const mn_rig* rig, const mn_xform* pose, double* out, int reps) {
    int inner = 1 + (int)(4e5 / (4.0 * rig->nverts));
    double* v = malloc((size_t)reps * sizeof(double));
    mn_rig_deform(rig, pose, out); /* warm */
    for (int r = 0; r < reps; r++) {
        double t0 = cpu_now_ns();
        for (int q = 0; q < inner; q++)
            mn_rig_deform(rig, pose, out);
        v[r] = (cpu_now_ns() - t0) / 1000.0 / inner;
    }
    double med = mn_bench_median(v, (size_t)reps);
    free(v);
    return med;
}

/* Log-log plot of time against vertices: the fit per frame and one LBS pass. */
static int write_scaling_svg(const char* path, int n, const double* verts, const double* fit,
                             const double* lbs, int m) {
    char title[128];
    snprintf(title, sizeof title,
             "LBS fit per frame and one forward LBS pass, tube with a %d-bone chain", m);
    mn_plot_series series[2] = {{"fit per frame", n, verts, fit}, {"one LBS pass", n, verts, lbs}};
    return mn_bench_loglog_svg(path, title, "vertices", "microseconds (thread CPU)", series, 2);
}

/* How the fit's time grows with the mesh: the tube with a chain of bones at 1k to 200k
 * vertices (the controllers fixed), the fit per warm-started frame beside one forward LBS
 * pass of the same mesh in the same run. */
static void bench_scaling(int reps, const char* svg) {
    enum { NS = 5 };
    const int sizes[NS] = {1000, 10000, 50000, 100000, 200000};
    const int nseg = 20, m = 24;
    double verts[NS], fit[NS], lbs[NS];
    int done = 0;
    for (int q = 0; q < NS; q++) {
        int nring = sizes[q] / nseg;
        int nframes = sizes[q] >= 50000 ? 12 : 30;
        int r = sizes[q] >= 50000 ? (reps < 3 ? reps : 3) : reps;
        tube tb;
        if (!make_tube(nring, nseg, m, 1, nframes, &tb)) {
            fprintf(stderr, "marionette bench fit: scaling: out of memory at %d vertices\n",
                    sizes[q]);
            break;
        }
        run_stats s;
        char label[32];
        snprintf(label, sizeof label, "scaling-%d", sizes[q]);
        double* out = malloc((size_t)tb.rig->nverts * 3 * sizeof(double));
        if (out && run_sequence(tb.rig, tb.frames, nframes, tb.truth, r, 0, label, &s)) {
            double l = time_lbs(tb.rig, tb.truth + (size_t)(nframes / 2) * m, out, r < 5 ? 5 : r);
            verts[done] = tb.rig->nverts;
            fit[done] = s.us_per_frame;
            lbs[done] = l;
            printf("bench=fit case=scaling verts=%d ctrl=%d frames=%d us_per_frame=%.1f "
                   "lbs_us=%.2f fit_over_lbs=%.2f "
                   "iterations=%.2f rms_rel_max=%.3g transform_err_max=%.3g goal_fit_over_lbs=10\n",
                   tb.rig->nverts, m, nframes, s.us_per_frame, l, s.us_per_frame / l, s.iters_mean,
                   s.rms_rel_max, s.transform_err_max);
            done++;
        }
        free(out);
        free_tube(&tb);
    }
    if (done >= 2)
        printf("bench=fit case=scaling-exponent sizes=%d exponent_fit=%.3f exponent_lbs=%.3f "
               "exponent_fit_large=%.3f\n",
               done, mn_bench_fit_exponent(verts, fit, done),
               mn_bench_fit_exponent(verts, lbs, done),
               mn_bench_fit_exponent(verts + done - 2, fit + done - 2, 2));
    if (svg && done >= 2) {
        if (write_scaling_svg(svg, done, verts, fit, lbs, m) != 0)
            fprintf(stderr, "marionette bench fit: %s: cannot write the plot\n", svg);
        else
            printf("bench=fit case=scaling-plot svg=%s\n", svg);
    }
}

typedef struct fit_args {
    const char *data, *which, *svg;
    int reps;
} fit_args;

#define AT(f, t) MN_CLI_AT(fit_args, f, t)
static const mn_cli_opt fit_opts[] = {
    {"--data", MN_CLI_STRING, AT(data, const char*), .bad = NULL},
    {"--case", MN_CLI_STRING, AT(which, const char*), .bad = NULL},
    {"--svg", MN_CLI_STRING, AT(svg, const char*), .bad = NULL},
    {"--reps", MN_CLI_INT, AT(reps, int), 1, INT_MAX, .bad = "--reps needs a positive integer"},
};
#undef AT
const mn_cli_table mn_bench_fit_options = {
    .cmd = "bench fit",
    MN_CLI_OPTS(fit_opts),
    .unknown = "unknown argument '%s'",
    .missing = "unknown argument '%s'",
    .dash_option = 1,
};

int mn_bench_fit(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    fit_args args = {"data", NULL, NULL, 5};
    int bad = mn_cli_parse(&mn_bench_fit_options, argc, argv, &args, NULL, NULL);
    if (bad) return bad;
    const char *data = args.data, *which = args.which, *svg = args.svg;
    int reps = args.reps;
    if (which && strcmp(which, "cylinder") && strcmp(which, "cesiumman") && strcmp(which, "fox") &&
        strcmp(which, "synthetic") && strcmp(which, "scaling"))
        return mn_cli_usage_error("bench fit", "unknown case '%s'", which);
    if (!which || !strcmp(which, "cylinder")) bench_cylinder(data, reps);
    if (!which || !strcmp(which, "cesiumman")) bench_gltf(data, "CesiumMan.glb", "cesiumman", reps);
    if (!which || !strcmp(which, "fox")) bench_gltf(data, "Fox.glb", "fox", reps);
    if (!which || !strcmp(which, "synthetic")) {
        bench_synthetic(reps, 0);
        bench_synthetic(reps, 1);
    }
    if (!which || !strcmp(which, "scaling")) bench_scaling(reps, svg);
    return MN_EXIT_OK;
}
