/* marionette bench anim: sampling speed of keyframed sequences (joint samples per second)
 * and the cost of constrained in-betweens (Welman 6.1.2, 6.3, 7.2.1). Reports; asserts
 * nothing about time. */
#include <marionette/anim.h>
#include <marionette/clip.h>
#include <marionette/io.h>
#include <marionette/sequence.h>

#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "plot.h"
#include "cli.h"
#include "options.h"

const char mn_bench_anim_summary[] =
    "sequence sampling (joint samples/s) and constrained in-betweens (ms/frame)";

#define CMU_SCALE (0.0254 / 0.45)

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench anim [--bvh FILE] [--samples N] [--frames N] [--svg FILE]\n"
            "                            [--solver lagrange|ccd|dls|all]\n"
            "       marionette bench anim --clip FILE... [--samples N]\n"
            "\n"
            "sampling: a sequence of the built-in stick figure (20 keys of varied poses, 10\n"
            "frames apart) and, with --bvh, of a BVH take (every 4th frame a key, lengths scaled\n"
            "to metres as for CMU), both with squad rotations and Catmull-Rom translations, is\n"
            "sampled at N (default 200000) fractional frames spread over the sequence. One line\n"
            "each: figure, joints (moving joints: each one joint sample), keys, ns_per_sample,\n"
            "joint_samples_per_s (thread CPU time, the best of 5 rounds).\n"
            "\n"
            "figures: two stick figures face to face, holding hands, both feet of each locked,\n"
            "crouching in turn (docs/examples/holding_hands_sequence.json, keys stretched over\n"
            "--frames), baked with both solved together, and the first figure alone with its\n"
            "feet locked: figures, frames, ms_per_frame (wall time), mean_iters, max_violation,\n"
            "unmet_frames.\n"
            "\n"
            "inbetween: the stick figure crouches 20 cm and stands up again over 4 keys while\n"
            "both feet are locked (position and orientation) and the right hand follows a\n"
            "Catmull-Rom path of 5 target keys; every frame of --frames (default 600) is an\n"
            "in-between re-satisfying the constraints with --solver (default lagrange; all:\n"
            "each of the three), warm-started, to a tolerance of 1e-5 m (ten times tighter\n"
            "than the goal of 1e-4 m), at most 20 steps (sweeps for ccd) a frame.\n"
            "One line per solver: frames, median_ms, p99_ms, max_ms (thread CPU time per frame),\n"
            "mean_iters, max_lock_error_m (largest distance of a foot or the hand from its\n"
            "target at any frame), plain_foot_error_m (the same feet in the plain in-betweens),\n"
            "unmet_frames (frames whose solve did not meet every constraint).\n"
            "--svg FILE also plots, per frame, how far the left foot is from its lock and the\n"
            "hand from its path in the plain and in the constrained in-betweens.\n"
            "\n"
            "clip (with --bvh): the take at 24 Hz (every 5th frame of 120 Hz, as the Animation\n"
            "Compression Library's CMU set) and at its own rate, in metres, compressed into a\n"
            "playback clip (clip.h) at 0.01 cm (the library's default threshold) and 0.05 cm,\n"
            "three virtual vertices 3 cm from every joint (the Animation Compression Library's\n"
            "measure), and at 24 Hz and 0.05 cm with segments of at most 8 and 16 frames\n"
            "(max_segment). One line each: frames, fps, tol_cm, raw_bytes (10 float32 per\n"
            "moving joint per frame), bytes, ratio, max_error_cm, tracks by kind, compress_s\n"
            "(wall clock), compress_cpu_s (thread CPU time), ns_per_sample (a pose at random "
            "frames, mn_clip_sample; thread CPU\n"
            "time, the best of 5 rounds), playback_ns_per_sample (a pose through a cursor moving\n"
            "forward by half a frame, looping), joint_samples_per_s (at random), memory_bytes\n"
            "(the loaded clip: block, seek points and segment records, mn_clip_memory).\n"
            "--clip FILE...: only the clip lines (without the shorter segments) of each take,\n"
            "then per rate (24 Hz, the take's own) and bound the totals over the takes\n"
            "(part=clip_total: raw_bytes, bytes, ratio, and locked_ratio with locks). With\n"
            "locks: the ankles locked where planted (slower than 10 cm/s over the ground for\n"
            "three frames or more) to 1e-4 m, the rest to tol_cm (part=clip_locked: locks,\n"
            "bytes, ratio, lock_error_cm, plain_ratio, of_plain = ratio / plain_ratio).\n"
            "reduce (with --bvh): whole-pose keys of the take at 120 Hz for the editor\n"
            "(mn_seq_add_motion, squad and Catmull-Rom) within 1 mm and 0.5 mm of every joint:\n"
            "keys, frames per key, max_error_m.\n"
            "read: a sequence document of N keys, then of N pins (N = 250 to 4000), read from\n"
            "memory: what, n, bytes, ok, ms (the reader is linear in keys and constraints).\n");
}

static double cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static unsigned lcg = 12345u;
static double rnd(void) {
    lcg = lcg * 1664525u + 1013904223u;
    return (lcg >> 8) / 16777216.0;
}

static int moving_joints(const mn_model* m) {
    int n = 0;
    for (int j = 0; j < m->njoint; j++)
        n += m->jnt_type[j] != MN_JOINT_FIXED;
    return n;
}

static void time_sampling(const char* name, const mn_seq* s, int nsamples) {
    const mn_model* m = mn_seq_model(s);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    double f0 = mn_seq_start(s), span = mn_seq_end(s) - f0;
    volatile double sink = 0;
    double best = 1e300;
    for (int round = 0; round < 5; round++) {
        double t0 = cpu_ns();
        for (int i = 0; i < nsamples; i++) {
            /* an irrational stride: every segment, every parameter */
            double f = f0 + span * ((double)i * 0.6180339887498949 -
                                    (double)(long)((double)i * 0.6180339887498949));
            mn_seq_sample(s, f, q);
            sink += q[m->nq - 1];
        }
        double dt = (cpu_ns() - t0) / nsamples;
        if (dt < best) best = dt;
    }
    int nj = moving_joints(m);
    printf("bench=anim part=sampling figure=%s joints=%d keys=%d rot=squad trans=catmull-rom "
           "ns_per_sample=%.1f "
           "joint_samples_per_s=%.3g\n",
           name, nj, mn_seq_key_count(s), best, nj / best * 1e9);
    (void)sink;
    free(q);
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Nanoseconds per pose of a clip: at random (an irrational stride, as time_sampling does for
 * sequences: every segment, every parameter) with mn_clip_sample, or (playback) through a
 * cursor moving forward by half a frame (a take played at twice its rate), looping. */
static double clip_ns_per_sample(const mn_clip* c, int nq, int nsamples, int playback) {
    double* q = malloc(sizeof(double) * (size_t)nq);
    double span = mn_clip_frames(c) - 1, best = 1e300;
    mn_clip_cursor* k = playback ? mn_clip_cursor_create(c) : NULL;
    volatile double sink = 0;
    for (int round = 0; round < 5; round++) {
        double t0 = cpu_ns(), f = 0;
        for (int i = 0; i < nsamples; i++) {
            if (k) {
                mn_clip_cursor_sample(k, f, q);
                f = f + 0.5 > span ? 0 : f + 0.5;
            } else {
                f = span * ((double)i * 0.6180339887498949 -
                            (double)(long)((double)i * 0.6180339887498949));
                mn_clip_sample(c, f, q);
            }
            sink += q[nq - 1];
        }
        double dt = (cpu_ns() - t0) / nsamples;
        if (dt < best) best = dt;
    }
    (void)sink;
    mn_clip_cursor_destroy(k);
    free(q);
    return best;
}

/* Locks on a CMU take of n frames at fps: each ankle (LeftFoot/RightFoot or LeftAnkle/
 * RightAnkle) where it is planted, slower than 10 cm/s over the ground for three frames or
 * more (frame 0, the take's T pose, left out), held to 1e-4 m. Returns the count. */
static int planted_locks(const mn_model* m, const double* q, int n, double fps, mn_clip_lock* lk,
                         int cap) {
    static const char* names[4] = {"LeftFoot", "RightFoot", "LeftAnkle", "RightAnkle"};
    mn_data* d = mn_data_create(m, 0);
    double* y = malloc(sizeof(double) * (size_t)n * 3);
    int nlk = 0;
    for (int side = 0; side < 4 && d && y; side++) {
        int j = mn_model_find_joint(m, names[side]);
        if (j < 0) continue;
        for (int f = 0; f < n; f++) {
            memcpy(d->q, q + (size_t)f * m->nq, sizeof(double) * (size_t)m->nq);
            mn_fk(m, d);
            y[3 * f] = d->xf[j].p.x, y[3 * f + 1] = d->xf[j].p.y, y[3 * f + 2] = d->xf[j].p.z;
        }
        int start = -1;
        for (int f = 1; f <= n; f++) {
            int planted = 0;
            if (f + 1 < n) {
                double dx = y[3 * f + 3] - y[3 * f], dz = y[3 * f + 5] - y[3 * f + 2];
                planted = sqrt(dx * dx + dz * dz) * fps < 0.1;
            }
            if (planted && start < 0) start = f;
            if (!planted && start >= 0) {
                if (f - start >= 3 && nlk < cap)
                    lk[nlk++] = (mn_clip_lock){j, {0, 0, 0}, start, f - 1, 1e-4};
                start = -1;
            }
        }
    }
    free(y);
    mn_data_destroy(d);
    return nlk;
}

/* Totals of the clip lines over takes, per rate (24 Hz, the take's own) and bound. */
typedef struct clip_total {
    size_t raw[2][2], bytes[2][2], locked[2][2];
    int takes;
} clip_total;

static void bench_clip(const mn_model* m, const mn_motion* mo, int nsamples, int caps,
                       clip_total* total) {
    for (int every = 5, r = 0; every >= 1; every -= 4, r++) {
        int n = (mo->nframes + every - 1) / every;
        double* q = malloc(sizeof(double) * (size_t)n * (size_t)m->nq);
        for (int f = 0; f < n; f++)
            memcpy(q + (size_t)f * m->nq, mo->q + (size_t)f * every * m->nq,
                   sizeof(double) * (size_t)m->nq);
        double fps = mo->frame_time > 0 ? 1 / mo->frame_time / every : 30;
        const double tol_cm[2] = {0.01, 0.05};
        /* the default segments, then at 24 Hz and 0.05 cm the shorter caps */
        for (int t = 0; t < 4; t++) {
            if (t >= 2 && (every != 5 || !caps)) break;
            int seg = t == 2 ? 8 : t == 3 ? 16 : 32;
            mn_clip_options o = mn_clip_default();
            o.tol = tol_cm[t ? 1 : 0] * 0.01;
            o.shell = 0.03;
            o.max_segment = seg;
            mn_clip_stats st;
            double t0 = wall_s(), c0 = cpu_ns();
            mn_clip* c = mn_clip_compress(m, q, n, fps, &o, &st, NULL);
            double dt = wall_s() - t0, dcpu = (cpu_ns() - c0) * 1e-9;
            if (!c) continue;
            /* with the planted ankles locked (--clip only) */
            mn_clip_stats sl;
            memset(&sl, 0, sizeof sl);
            mn_clip_lock lk[256];
            int nlk = total && t < 2 ? planted_locks(m, q, n, fps, lk, 256) : 0;
            if (nlk) {
                mn_clip_options ol = o;
                ol.locks = lk, ol.nlocks = nlk;
                mn_clip* cl = mn_clip_compress(m, q, n, fps, &ol, &sl, NULL);
                if (!cl) sl.bytes = 0;
                mn_clip_destroy(cl);
            }
            double ns = clip_ns_per_sample(c, m->nq, nsamples, 0);
            double play = clip_ns_per_sample(c, m->nq, nsamples, 1);
            int nj = moving_joints(m);
            printf("bench=anim part=clip figure=%s frames=%d fps=%.0f tol_cm=%g shell_cm=3 "
                   "vertices=3 max_segment=%d raw_bytes=%zu bytes=%zu ratio=%.2f "
                   "max_error_cm=%.4f rest=%d constant=%d sparse=%d dense=%d compress_s=%.2f "
                   "compress_cpu_s=%.3f ns_per_sample=%.1f playback_ns_per_sample=%.1f "
                   "joint_samples_per_s=%.3g memory_bytes=%zu\n",
                   m->name, n, fps, o.tol * 100, seg, st.raw_bytes, st.bytes, st.ratio,
                   st.max_error * 100, st.rest, st.constant, st.sparse, st.dense, dt, dcpu, ns,
                   play, nj / ns * 1e9, mn_clip_memory(c));
            if (nlk && sl.bytes)
                printf("bench=anim part=clip_locked figure=%s frames=%d fps=%.0f tol_cm=%g "
                       "locks=%d lock_tol_cm=0.01 bytes=%zu ratio=%.2f lock_error_cm=%.4f "
                       "max_error_cm=%.4f plain_ratio=%.2f of_plain=%.3f\n",
                       m->name, n, fps, o.tol * 100, nlk, sl.bytes, sl.ratio, sl.lock_error * 100,
                       sl.max_error * 100, st.ratio, sl.ratio / st.ratio);
            if (total && t < 2) {
                total->raw[r][t] += st.raw_bytes, total->bytes[r][t] += st.bytes;
                total->locked[r][t] += nlk && sl.bytes ? sl.bytes : st.bytes;
            }
            mn_clip_destroy(c);
        }
        free(q);
    }
    if (total) total->takes++;
}

static void clip_total_print(const clip_total* t) {
    const char* rate[2] = {"24", "take"};
    const double tol_cm[2] = {0.01, 0.05};
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 2; k++)
            if (t->bytes[r][k])
                printf("bench=anim part=clip_total takes=%d fps=%s tol_cm=%g raw_bytes=%zu "
                       "bytes=%zu ratio=%.2f locked_bytes=%zu locked_ratio=%.2f\n",
                       t->takes, rate[r], tol_cm[k], t->raw[r][k], t->bytes[r][k],
                       (double)t->raw[r][k] / (double)t->bytes[r][k], t->locked[r][k],
                       (double)t->raw[r][k] / (double)t->locked[r][k]);
}

/* --clip FILE...: the clip lines of each take and their totals, nothing else. */
static int bench_clip_takes(int ntake, char** takes, int nsamples) {
    clip_total total;
    memset(&total, 0, sizeof total);
    for (int i = 0; i < ntake; i++) {
        mn_bvh_options bo = mn_bvh_default();
        bo.scale = CMU_SCALE;
        mn_model* b = NULL;
        mn_motion mo;
        mn_error err;
        if (mn_bvh_read(takes[i], &bo, &b, &mo, NULL, &err) != MN_OK)
            return mn_cli_input_error(&err);
        bench_clip(b, &mo, nsamples, 0, &total);
        mn_motion_free(&mo);
        mn_model_destroy(b);
    }
    clip_total_print(&total);
    return MN_EXIT_OK;
}

static void bench_reduce(const mn_model* m, const mn_motion* mo) {
    const double tol[2] = {0.001, 0.0005};
    for (int t = 0; t < 2; t++) {
        mn_seq_def def = mn_seq_def_default();
        def.rot = MN_INTERP_SQUAD;
        def.trans = MN_INTERP_CATMULL_ROM;
        def.fps = mo->frame_time > 0 ? 1.0 / mo->frame_time : 30;
        mn_seq* s = mn_seq_create(m, &def, NULL);
        int nkeys = 0;
        double err = 0, t0 = wall_s();
        if (mn_seq_add_motion(s, mo->q, mo->nframes, 0, tol[t], &nkeys, &err, NULL) == MN_OK)
            printf("bench=anim part=reduce figure=%s frames=%d tol_m=%g keys=%d "
                   "frames_per_key=%.2f max_error_m=%.3g reduce_s=%.2f\n",
                   m->name, mo->nframes, tol[t], nkeys, (double)mo->nframes / nkeys, err,
                   wall_s() - t0);
        mn_seq_destroy(s);
    }
}

static mn_seq* stickman_seq(const mn_model* m) {
    mn_seq_def def = mn_seq_def_default();
    def.rot = MN_INTERP_SQUAD;
    def.trans = MN_INTERP_CATMULL_ROM;
    mn_seq* s = mn_seq_create(m, &def, NULL);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < 20; k++) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        for (int j = 0; j < m->njoint; j++) {
            if (m->jnt_type[j] != MN_JOINT_HINGE) continue;
            double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
            /* within the middle half of the range */
            q[m->jnt_qadr[j]] = lo + (hi - lo) * (0.25 + 0.5 * rnd());
        }
        q[0] = 0.3 * rnd(), q[1] = 0.1 * rnd(), q[2] = 0.2 * k;
        mn_quat r = mn_quat_axis_angle(mn_v3(0, 1, 0), 0.3 * rnd());
        q[3] = r.w, q[4] = r.x, q[5] = r.y, q[6] = r.z;
        mn_seq_set_key(s, 10 * k, q, NULL);
    }
    free(q);
    return s;
}

static mn_seq* bvh_seq(const mn_model* m, const mn_motion* mo) {
    mn_seq_def def = mn_seq_def_default();
    def.rot = MN_INTERP_SQUAD;
    def.trans = MN_INTERP_CATMULL_ROM;
    def.fps = mo->frame_time > 0 ? 1.0 / mo->frame_time : 30;
    mn_seq* s = mn_seq_create(m, &def, NULL);
    for (int f = 0; f < mo->nframes; f += 4)
        mn_seq_set_key(s, f, mo->q + (size_t)f * (size_t)mo->nq, NULL);
    return s;
}

/* A crouched key: the pelvis dragged down by `drop` with both feet pinned. */
static void crouch(const mn_model* m, double drop, double* q) {
    mn_data* d = mn_data_create(m, 0);
    mn_figure fig = {m, d};
    mn_csys* cs = mn_csys_create(&fig, 1, NULL, NULL);
    const char* feet[2] = {"left foot", "right foot"};
    for (int i = 0; i < 2; i++) {
        mn_handle_def h = mn_handle_default();
        h.joint = mn_model_find_joint(m, feet[i]);
        int hp = mn_csys_add_handle(cs, &h, NULL);
        h.type = MN_HANDLE_ORIENT;
        int ho = mn_csys_add_handle(cs, &h, NULL);
        mn_constraint_def c = mn_constraint_default();
        c.handle = hp;
        c.target = d->xf[h.joint].p;
        mn_csys_add_constraint(cs, &c, NULL);
        c.type = MN_CON_ORIENT;
        c.handle = ho;
        c.target_rot = mn_quat_from_mat3(&d->xf[h.joint].R);
        mn_csys_add_constraint(cs, &c, NULL);
    }
    mn_handle_def hp = mn_handle_default();
    hp.joint = mn_model_find_joint(m, "pelvis");
    int pel = mn_csys_add_handle(cs, &hp, NULL);
    mn_csys_drag(cs, pel, mn_vec3_add(d->xf[hp.joint].p, mn_v3(0, -drop, 0.03)), 1, 1);
    mn_csolve_options o = mn_csolve_default();
    o.max_iters = 200;
    o.tol = 1e-9;
    mn_csolve_result r;
    for (int i = 0; i < 10; i++)
        mn_csys_solve(cs, &o, &r);
    memcpy(q, d->q, sizeof(double) * (size_t)m->nq);
    mn_csys_destroy(cs);
    mn_data_destroy(d);
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* The in-betweens as a plot: per frame, the left foot's distance from its lock and the
 * hand's from its path, plain (interpolated only) and constrained (Welman Fig. 6.5 and
 * 7.2.1), in millimetres. Returns 0, or -1 when the file cannot be written. */
static int write_svg(const char* path, int frames, const double* foot_plain, const double* foot_con,
                     const double* hand_plain, const double* hand_con) {
    const double W = 720, H = 400, L = 64, R = 16, T = 40, B = 92;
    /* a log scale from 1e-4 mm (0.1 micrometre) to 1e3 mm: the constrained in-betweens sit
     * five orders of magnitude under the plain ones */
    const int dec_lo = -4, dec_hi = 3;
    mn_bench_svg svg;
    FILE* fp = mn_bench_svg_open(&svg);
    if (!fp) return -1;
    fprintf(fp,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%.0f\" y=\"22\" font-size=\"14\">Stick figure crouching between keys: "
            "distance from the lock or path (mm, log scale)</text>\n",
            W, H, W, H, L);
    for (int k = dec_lo; k <= dec_hi; k++) { /* horizontal grid and labels, one a decade */
        double y = H - B - (H - T - B) * (k - dec_lo) / (dec_hi - dec_lo);
        fprintf(fp,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n",
                L, y, W - R, y, L - 6, y + 4, k);
    }
    for (int k = 0; k <= 4; k++) {
        double x = L + (W - L - R) * k / 4;
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", x, H - B + 18,
                (int)((frames - 1) * k / 4));
    }
    fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">frame</text>\n",
            (L + W - R) / 2, H - B + 36);
    const double* series[4] = {foot_plain, hand_plain, foot_con, hand_con};
    const char* color[4] = {"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"};
    const char* dash[4] = {"", "6 4", "", "6 4"};
    const char* label[4] = {"left foot, plain in-betweens", "hand, plain in-betweens",
                            "left foot, constrained", "hand, constrained"};
    for (int i = 0; i < 4; i++) {
        fprintf(fp,
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\" "
                "points=\"",
                color[i], dash[i]);
        for (int f = 0; f < frames; f++)
            fprintf(
                fp, "%.1f,%.1f ", L + (W - L - R) * f / (frames - 1),
                H - B -
                    (H - T - B) *
                        (fmin(fmax(log10(fmax(series[i][f], 1e-300)), dec_lo), dec_hi) - dec_lo) /
                        (dec_hi - dec_lo));
        fprintf(
            fp,
            "\"/>\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
            "stroke-width=\"2\" stroke-dasharray=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
            L + 320 * (i / 2), H - 30 + 16 * (i % 2), L + 320 * (i / 2) + 25, H - 30 + 16 * (i % 2),
            color[i], dash[i], L + 320 * (i / 2) + 30, H - 26 + 16 * (i % 2), label[i]);
    }
    fprintf(fp, "</svg>\n");
    return mn_bench_svg_close(fp, &svg, path);
}

static void time_inbetween(const mn_model* m, int frames, const char* svg, mn_csolver method) {
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    double span = frames - 1;
    crouch(m, 0.2, q);
    mn_seq_set_key(s, 0, m->q0, NULL);
    mn_seq_set_key(s, span / 3, q, NULL);
    crouch(m, 0.1, q);
    mn_seq_set_key(s, 2 * span / 3, q, NULL);
    mn_seq_set_key(s, span, m->q0, NULL);
    const char* feet[2] = {"left foot", "right foot"};
    int hf[2];
    for (int i = 0; i < 2; i++) {
        mn_handle_def h = mn_handle_default();
        h.joint = mn_model_find_joint(m, feet[i]);
        hf[i] = mn_seq_add_handle(s, &h, NULL);
        h.type = MN_HANDLE_ORIENT;
        int ho = mn_seq_add_handle(s, &h, NULL);
        mn_seq_constraint_def c = mn_seq_constraint_default();
        c.con.handle = hf[i];
        c.lock = 1;
        mn_seq_add_constraint(s, &c, NULL);
        c.con.type = MN_CON_ORIENT;
        c.con.handle = ho;
        mn_seq_add_constraint(s, &c, NULL);
    }
    mn_data* d = mn_data_create(m, 0);
    mn_seq_sample_data(s, d, 0);
    mn_handle_def h = mn_handle_default();
    h.joint = mn_model_find_joint(m, "right hand");
    h.point = mn_v3(0, -0.08, 0);
    int hh = mn_seq_add_handle(s, &h, NULL);
    mn_seq_constraint_def c = mn_seq_constraint_default();
    c.con.handle = hh;
    c.target_interp = MN_INTERP_CATMULL_ROM;
    int ci = mn_seq_add_constraint(s, &c, NULL);
    mn_vec3 p0 = mn_point_world(d, h.joint, h.point);
    mn_vec3 off[5] = {
        {0, 0, 0}, {0.05, 0.1, 0.2}, {0.1, 0.25, 0.25}, {0.05, 0.15, 0.15}, {0, 0, 0}};
    for (int k = 0; k < 5; k++) {
        mn_target_key t = {span * k / 4, mn_vec3_add(p0, off[k]), mn_v3(0, 0, 0),
                           mn_quat_identity()};
        mn_seq_set_target_key(s, ci, &t, NULL);
    }
    mn_vec3 lock[2];
    for (int i = 0; i < 2; i++)
        lock[i] = mn_point_world(d, mn_seq_handle(s, hf[i])->joint, mn_v3(0, 0, 0));
    mn_seq_solver* v = mn_seq_solver_create(s, d, NULL);
    mn_seq_solve_options o = mn_seq_solve_options_default();
    o.solve.tol = 1e-5; /* ten times tighter than the goal of 1e-4 */
    o.solve.method = method;
    double* t = malloc(sizeof(double) * (size_t)frames);
    double* plot = calloc((size_t)frames * 4, sizeof(double)); /* foot, hand: plain, constrained */
    double worst = 0, plain = 0;
    long iters = 0;
    int unmet = 0;
    for (int f = 0; f < frames; f++) {
        mn_csolve_result r;
        double t0 = cpu_ns();
        mn_seq_solve_frame(v, f, &o, &r);
        t[f] = (cpu_ns() - t0) * 1e-6;
        iters += r.iterations;
        if (r.status != MN_OK) unmet++;
        mn_target_key tk;
        mn_seq_target_at(s, ci, f, &tk);
        worst = fmax(worst, mn_vec3_dist(mn_point_world(d, h.joint, h.point), tk.pos));
        plot[4 * f + 2] =
            1e3 * mn_vec3_dist(mn_point_world(d, mn_seq_handle(s, hf[0])->joint, mn_v3(0, 0, 0)),
                               lock[0]);
        plot[4 * f + 3] = 1e3 * mn_vec3_dist(mn_point_world(d, h.joint, h.point), tk.pos);
        for (int i = 0; i < 2; i++)
            worst =
                fmax(worst,
                     mn_vec3_dist(mn_point_world(d, mn_seq_handle(s, hf[i])->joint, mn_v3(0, 0, 0)),
                                  lock[i]));
    }
    mn_data* dp = mn_data_create(m, 0);
    for (int f = 0; f < frames; f++) {
        mn_seq_sample_data(s, dp, f);
        mn_target_key tk;
        mn_seq_target_at(s, ci, f, &tk);
        plot[4 * f + 0] =
            1e3 * mn_vec3_dist(mn_point_world(dp, mn_seq_handle(s, hf[0])->joint, mn_v3(0, 0, 0)),
                               lock[0]);
        plot[4 * f + 1] = 1e3 * mn_vec3_dist(mn_point_world(dp, h.joint, h.point), tk.pos);
        for (int i = 0; i < 2; i++)
            plain = fmax(plain, mn_vec3_dist(mn_point_world(dp, mn_seq_handle(s, hf[i])->joint,
                                                            mn_v3(0, 0, 0)),
                                             lock[i]));
    }
    qsort(t, (size_t)frames, sizeof *t, cmp);
    printf("bench=anim part=inbetween figure=stickman solver=%s "
           "constraints=feet_locked+hand_path frames=%d "
           "median_ms=%.4f p99_ms=%.4f max_ms=%.4f mean_iters=%.2f max_lock_error_m=%.2e "
           "plain_foot_error_m=%.4f unmet_frames=%d\n",
           mn_csolver_name(method), frames, t[frames / 2], t[(int)(0.99 * (frames - 1))],
           t[frames - 1], (double)iters / frames, worst, plain, unmet);
    if (svg) {
        double* col[4];
        for (int i = 0; i < 4; i++) {
            col[i] = malloc(sizeof(double) * (size_t)frames);
            for (int f = 0; f < frames; f++)
                col[i][f] = plot[4 * f + i];
        }
        if (write_svg(svg, frames, col[0], col[2], col[1], col[3]) != 0)
            fprintf(stderr, "marionette bench anim: %s: cannot write the plot\n", svg);
        else
            printf("bench=anim part=plot svg=%s\n", svg);
        for (int i = 0; i < 4; i++)
            free(col[i]);
    }
    free(plot);
    free(t);
    free(q);
    mn_data_destroy(dp);
    mn_seq_solver_destroy(v);
    mn_data_destroy(d);
    mn_seq_destroy(s);
}

/* A sequence document of the stick figure with nkeys keys and npins pins (text, malloc'd). */
static char* seq_doc(int nkeys, int npins, size_t* len) {
    size_t cap = 200 + (size_t)nkeys * 64 + (size_t)npins * 96, n = 0;
    char* t = malloc(cap);
    if (!t) return NULL;
    n += (size_t)snprintf(t + n, cap - n, "{\"figure\": \"stickman\", \"fps\": 30, \"keys\": [");
    for (int i = 0; i < nkeys; i++)
        n += (size_t)snprintf(t + n, cap - n, "%s{\"frame\": %d, \"pose\": {\"torso.2\": %.2f}}",
                              i ? ", " : "", 2 * i, 0.01 * (i % 7));
    n += (size_t)snprintf(t + n, cap - n,
                          "], \"handles\": [{\"name\": \"foot\", \"joint\": \"left foot\"}], "
                          "\"constraints\": [");
    for (int i = 0; i < npins; i++)
        n += (size_t)snprintf(t + n, cap - n,
                              "%s{\"type\": \"pin\", \"handle\": \"foot\", \"frames\": [%d, %d], "
                              "\"target\": [0.1, 0, %.3f]}",
                              i ? ", " : "", i, i + 1, 0.001 * i);
    n += (size_t)snprintf(t + n, cap - n, "]}\n");
    *len = n;
    return t;
}

/* Reading a sequence document of n keys, then of n pins: the reader is linear in both (a
 * build of the interpolation, one scratch system per constraint). */
static void time_read(void) {
    for (int n = 250; n <= 4000; n *= 2) {
        for (int pins = 0; pins < 2; pins++) {
            size_t len;
            char* text = seq_doc(pins ? 2 : n, pins ? n : 0, &len);
            if (!text) return;
            mn_model* m = NULL;
            mn_seq* s = NULL;
            mn_error err;
            double t0 = wall_s();
            mn_status st =
                mn_seq_read_mem(text, len, "bench.json", ".", NULL, NULL, &m, &s, NULL, &err);
            double t1 = wall_s();
            printf("bench=anim part=read what=%s n=%d bytes=%zu ok=%d ms=%.2f\n",
                   pins ? "pins" : "keys", n, len, st == MN_OK, (t1 - t0) * 1e3);
            mn_seq_destroy(s);
            mn_model_destroy(m);
            free(text);
        }
    }
}

/* The two-figure document of docs/examples/holding_hands_sequence.json with its keys at 0,
 * k and 2k (two == 0: the first figure alone, its feet locked). */
static char* figures_doc(int k, int two) {
    static const char* const fmt =
        "{\"fps\": 30, \"figures\": [{\"name\": \"ann\", \"file\": \"stickman\", \"keys\": ["
        "{\"frame\": 0, \"pose\": {\"right arm.2\": -0.85, \"left arm.2\": -0.85}},"
        "{\"frame\": %d, \"pose\": {\"pelvis\": {\"position\": [0, -0.2, 0.04], \"rotation\": "
        "[1, 0, 0, 0]}, \"torso.2\": 0.35, \"right arm.2\": -0.85, \"left arm.2\": -0.85, "
        "\"right leg.2\": -0.9, \"left leg.2\": -0.9, \"right knee\": 1.4, \"left knee\": 1.4, "
        "\"right foot.1\": -0.45, \"left foot.1\": -0.45}},"
        "{\"frame\": %d, \"pose\": {\"right arm.2\": -0.85, \"left arm.2\": -0.85}}]}%s],"
        "\"handles\": [%s{\"name\": \"a1\", \"joint\": \"ann/left foot\"}, {\"name\": \"a2\", "
        "\"joint\": \"ann/right foot\"}, {\"name\": \"a3\", \"type\": \"orientation\", \"joint\": "
        "\"ann/left foot\"}, {\"name\": \"a4\", \"type\": \"orientation\", \"joint\": \"ann/right "
        "foot\"}], \"constraints\": [%s{\"type\": \"pin\", \"handle\": \"a1\"}, {\"type\": "
        "\"pin\", \"handle\": \"a2\"}, {\"type\": \"orient\", \"handle\": \"a3\"}, {\"type\": "
        "\"orient\", \"handle\": \"a4\"}]}";
    static const char* const bob =
        ", {\"name\": \"bob\", \"file\": \"stickman\", \"position\": [0, 0, 0.9], \"rotation\": "
        "[0, 0, 1, 0], \"keys\": [{\"frame\": 0, \"pose\": {\"right arm.2\": -0.85, \"left "
        "arm.2\": -0.85}}]}";
    static const char* const bob_handles =
        "{\"name\": \"ar\", \"joint\": \"ann/right hand\"}, {\"name\": \"al\", \"joint\": "
        "\"ann/left hand\"}, {\"name\": \"br\", \"joint\": \"bob/right hand\"}, {\"name\": "
        "\"bl\", \"joint\": \"bob/left hand\"}, {\"name\": \"b1\", \"joint\": \"bob/left foot\"}, "
        "{\"name\": \"b2\", \"joint\": \"bob/right foot\"}, {\"name\": \"b3\", \"type\": "
        "\"orientation\", \"joint\": \"bob/left foot\"}, {\"name\": \"b4\", \"type\": "
        "\"orientation\", \"joint\": \"bob/right foot\"}, ";
    static const char* const bob_cons =
        "{\"type\": \"equal\", \"handle\": \"ar\", \"handle2\": \"bl\"}, {\"type\": \"equal\", "
        "\"handle\": \"al\", \"handle2\": \"br\"}, {\"type\": \"pin\", \"handle\": \"b1\"}, "
        "{\"type\": \"pin\", \"handle\": \"b2\"}, {\"type\": \"orient\", \"handle\": \"b3\"}, "
        "{\"type\": \"orient\", \"handle\": \"b4\"}, ";
    size_t cap = strlen(fmt) + strlen(bob) + strlen(bob_handles) + strlen(bob_cons) + 64;
    char* s = malloc(cap);
    if (s)
        snprintf(s, cap, fmt, k, 2 * k, two ? bob : "", two ? bob_handles : "",
                 two ? bob_cons : "");
    return s;
}

/* Several figures (Welman 6.1, 7.3): the bake of two figures solved together against the
 * first figure alone. */
static void bench_figures(int frames) {
    for (int two = 0; two < 2; two++) {
        char* text = figures_doc(frames / 2, two);
        mn_seq_figures f;
        mn_error err;
        if (!text || mn_seq_read_figures_mem(text, strlen(text), "figures.json", ".", NULL, &f,
                                             &err) != MN_OK) {
            printf("bench=anim part=figures ok=0 error=\"%s\"\n", text ? err.message : "memory");
            free(text);
            return;
        }
        mn_seq_bake_options o = mn_seq_bake_default();
        mn_motion mo[MN_SEQ_MAX_FIGURES];
        mn_seq_bake_result r;
        double t0 = wall_s();
        mn_status st = mn_seq_bake_figures(f.seq[0], &o, mo, &r, &err);
        double dt = wall_s() - t0;
        printf("bench=anim part=figures figures=%d frames=%ld ok=%d ms_per_frame=%.3f "
               "mean_iters=%.2f max_violation=%.2e unmet_frames=%ld\n",
               f.n, r.frames, st == MN_OK, r.frames ? dt * 1e3 / (double)r.frames : 0.0,
               r.frames ? (double)r.iters / (double)r.frames : 0.0, r.max_violation, r.unmet);
        for (int i = 0; st == MN_OK && i < f.n; i++)
            mn_motion_free(&mo[i]);
        mn_seq_figures_free(&f);
        free(text);
    }
}

typedef struct anim_args {
    const char *bvh, *svg, *solver;
    int nsamples, frames;
} anim_args;

static int parse_solver(const char* v, void* dest) {
    if (strcmp(v, "all") && mn_csolver_parse(v) < 0) return 0;
    *(const char**)dest = v;
    return 1;
}

#define AT(f, t) MN_CLI_AT(anim_args, f, t)
static const mn_cli_opt anim_opts[] = {
    {"--bvh", MN_CLI_STRING, AT(bvh, const char*), .bad = NULL},
    {"--svg", MN_CLI_STRING, AT(svg, const char*), .bad = NULL},
    {"--solver", MN_CLI_CALL, AT(solver, const char*), .bad = "unknown solver '%s'",
     .parse = parse_solver},
    {"--samples", MN_CLI_INT, AT(nsamples, int), 1, INT_MAX,
     .bad = "--samples needs a positive integer"},
    {"--frames", MN_CLI_INT, AT(frames, int), 4, INT_MAX, .bad = "--frames needs an integer >= 4"},
};
#undef AT
const mn_cli_table mn_bench_anim_options = {
    .cmd = "bench anim",
    MN_CLI_OPTS(anim_opts),
    .unknown = "unknown argument '%s'",
    .missing = "unknown argument '%s'",
    .dash_option = 1,
};

int mn_bench_anim(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--clip")) continue;
        /* --clip TAKE... [--samples N]: the takes run to the end or the next option */
        int k = i + 1, nsamples = 200000;
        while (k < argc && strncmp(argv[k], "--", 2))
            k++;
        for (int j = k; j < argc; j += 2) /* only --samples may follow the takes */
            if (strcmp(argv[j], "--samples") || j + 1 >= argc ||
                !mn_cli_parse_int(argv[j + 1], &nsamples) || nsamples < 1)
                return mn_cli_usage_error("bench anim", "after --clip's takes only "
                                                        "--samples N (a positive integer)");
        return bench_clip_takes(k - i - 1, argv + i + 1, nsamples);
    }
    anim_args args = {NULL, NULL, "lagrange", 200000, 600};
    int bad = mn_cli_parse(&mn_bench_anim_options, argc, argv, &args, NULL, NULL);
    if (bad) return bad;
    const char *bvh = args.bvh, *svg = args.svg, *solver = args.solver;
    int nsamples = args.nsamples, frames = args.frames;
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    if (!m) return mn_cli_input_error(&err);
    time_read();
    bench_figures(frames);
    mn_seq* s = stickman_seq(m);
    time_sampling("stickman", s, nsamples);
    mn_seq_destroy(s);
    if (bvh) {
        mn_bvh_options bo = mn_bvh_default();
        bo.scale = CMU_SCALE;
        mn_model* b = NULL;
        mn_motion mo;
        if (mn_bvh_read(bvh, &bo, &b, &mo, NULL, &err) != MN_OK) {
            mn_model_destroy(m);
            return mn_cli_input_error(&err);
        }
        mn_seq* sb = bvh_seq(b, &mo);
        time_sampling(b->name, sb, nsamples);
        mn_seq_destroy(sb);
        bench_clip(b, &mo, nsamples, 1, NULL);
        bench_reduce(b, &mo);
        mn_motion_free(&mo);
        mn_model_destroy(b);
    }
    for (int k = 0; k < MN_CSOLVE_COUNT; k++)
        if (!strcmp(solver, "all") || mn_csolver_parse(solver) == k)
            time_inbetween(m, frames, svg, (mn_csolver)k);
    mn_model_destroy(m);
    return MN_EXIT_OK;
}
