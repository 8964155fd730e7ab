/* marionette bench drag: the pelvis of the 31-joint CMU skeleton dragged down 30 cm and back
 * over 120 frames with both feet pinned (position and orientation) and both hands pinned to
 * the hips, for each constraint solver. Prints one key=value line per solver; asserts
 * nothing about time. */
#include <marionette/constrain.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <limits.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"

const char mn_bench_drag_summary[] =
    "drag the CMU skeleton's pelvis with feet and hands pinned (Welman ch. 5 solvers)";

/* CMU's BVH units are not metres: 1 unit = (1 / 0.45) inch = 0.0254 / 0.45 m (CMU FAQ),
 * which makes subject 2 about 1.7 m tall. */
#define CMU_SCALE (0.0254 / 0.45)
#define DEFAULT_FILE "data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"

static void usage(FILE* f) {
    fprintf(
        f, "usage: marionette bench drag [FILE] [--solver lagrange|ccd|dls|all] [--frames N]\n"
           "                             [--depth METRES] [--scale S] [--iters N] [--tol T]\n"
           "\n"
           "FILE is a CMU MotionBuilder-skeleton BVH (default " DEFAULT_FILE ",\n"
           "relative to the current folder: run from the source tree). Lengths are scaled by S\n"
           "(default 0.0254/0.45 = 0.05644, CMU units to metres). From the first frame (a\n"
           "T-pose) the hands are first brought onto the hips (not timed); then the pelvis is\n"
           "dragged straight down by --depth (default 0.30) and back up over --frames (default\n"
           "120) while both feet stay pinned in position and orientation and both hands stay\n"
           "on the hips. Each frame is one solve of at most --iters steps (default 20) to the\n"
           "tolerance --tol (metres and radians, default 1e-5, ten times tighter than the goal\n"
           "of 1e-4). One line per solver:\n"
           "  solver, frames, dof, rows, median_ms, max_ms (wall clock per frame),\n"
           "  median_cpu_ms, max_cpu_ms (thread CPU time per frame), mean_iters, max_violation_m,\n"
           "  max_rot_violation_rad, final_violation_m (drift), max_drag_error_m,\n"
           "  bottom_drag_error_m, reached (1 when the pelvis was within 1 mm of every target),\n"
           "  unmet_frames (frames whose solve did not meet every constraint).\n");
}

typedef struct scene {
    mn_csys* s;
    int pelvis;
} scene;

/* CPU time of this thread in nanoseconds: unlike wall time it does not count the time the
 * process waits while other work runs on a shared machine. */
static double thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int find(const mn_model* m, const char* a, const char* b) {
    int j = mn_model_find_joint(m, a);
    return j >= 0 ? j : mn_model_find_joint(m, b);
}

/* Handles and constraints of the benchmark; NULL csys with err on a missing joint. */
static scene build(const mn_model* m, mn_data* d, mn_error* err) {
    scene sc = {NULL, -1};
    int hips = find(m, "Hips", "hip");
    int lfoot = find(m, "LeftFoot", "lFoot"), rfoot = find(m, "RightFoot", "rFoot");
    int lhand = find(m, "LeftHand", "lHand"), rhand = find(m, "RightHand", "rHand");
    if (hips < 0 || lfoot < 0 || rfoot < 0 || lhand < 0 || rhand < 0) {
        mn_error_set(err, MN_ERR_NOTFOUND, NULL, 0, "joint",
                     "need Hips, LeftFoot, RightFoot, LeftHand, RightHand");
        return sc;
    }
    mn_figure fig = {m, d};
    mn_csys* s = mn_csys_create(&fig, 1, NULL, err);
    if (!s) return sc;
    mn_handle_def h = mn_handle_default();
    int feet[2] = {lfoot, rfoot};
    for (int i = 0; i < 2; i++) {
        h.type = MN_HANDLE_POINT, h.joint = feet[i];
        int hp = mn_csys_add_handle(s, &h, err);
        h.type = MN_HANDLE_ORIENT;
        int ho = mn_csys_add_handle(s, &h, err);
        mn_constraint_def c = mn_constraint_default();
        c.handle = hp;
        mn_csys_handle_value(s, hp, &c.target, NULL);
        mn_csys_add_constraint(s, &c, err);
        c = mn_constraint_default();
        c.type = MN_CON_ORIENT, c.handle = ho;
        mn_mat3 R;
        mn_csys_handle_value(s, ho, NULL, &R);
        c.target_rot = mn_quat_from_mat3(&R);
        mn_csys_add_constraint(s, &c, err);
    }
    /* hands on hips (Welman 5.3.4's example): a point on each side of the pelvis, in the
     * Hips frame (x to the figure's left, y up, z forward) */
    int hands[2] = {lhand, rhand};
    for (int i = 0; i < 2; i++) {
        h.type = MN_HANDLE_POINT, h.joint = hands[i], h.point = mn_v3(0, 0, 0);
        int a = mn_csys_add_handle(s, &h, err);
        h.joint = hips, h.point = mn_v3(i == 0 ? 0.17 : -0.17, 0.02, 0.02);
        int b = mn_csys_add_handle(s, &h, err);
        mn_constraint_def c = mn_constraint_default();
        c.type = MN_CON_EQUAL, c.handle = a, c.handle2 = b;
        mn_csys_add_constraint(s, &c, err);
    }
    h.type = MN_HANDLE_POINT, h.joint = hips, h.point = mn_v3(0, 0, 0);
    sc.pelvis = mn_csys_add_handle(s, &h, err);
    if (sc.pelvis < 0 || mn_csys_constraint_count(s) != 6) {
        mn_csys_destroy(s);
        return sc;
    }
    sc.s = s;
    return sc;
}

static int run(const mn_model* m, mn_data* d, const double* q_start, mn_csolver method, int frames,
               double depth, int iters, double tol) {
    memcpy(d->q, q_start, sizeof(double) * (size_t)m->nq);
    mn_error err;
    scene sc = build(m, d, &err);
    if (!sc.s) return mn_cli_input_error(&err);
    mn_csys* s = sc.s;
    mn_csolve_options o = mn_csolve_default();
    o.max_iters = 200;
    mn_csolve_result r;
    mn_csys_solve(s, &o, &r); /* setup, not timed: hands onto the hips with Lagrange */
    int setup_ok = r.status == MN_OK;
    o.method = method;
    o.max_iters = iters;
    o.tol = o.tol_rot = o.drag_tol = tol;
    mn_vec3 p0;
    mn_csys_handle_value(s, sc.pelvis, &p0, NULL);
    double* ms = malloc(sizeof(double) * (size_t)frames);
    double* cpu = malloc(sizeof(double) * (size_t)frames);
    double maxv = 0, maxr = 0, maxd = 0, bottom = 0, sum_iters = 0;
    int unmet = 0;
    for (int f = 1; f <= frames; f++) {
        double u = (double)f / frames;
        double down = depth * (u <= 0.5 ? 2 * u : 2 * (1 - u));
        mn_vec3 t = mn_vec3_add(p0, mn_v3(0, -down, 0));
        mn_csys_drag(s, sc.pelvis, t, 1, 1);
        double t0 = mn_bench_now_ns(), c0 = thread_cpu_ns();
        mn_csys_solve(s, &o, &r);
        cpu[f - 1] = (thread_cpu_ns() - c0) * 1e-6;
        ms[f - 1] = (mn_bench_now_ns() - t0) * 1e-6;
        sum_iters += r.iterations;
        if (r.status != MN_OK) unmet++;
        if (r.max_violation > maxv) maxv = r.max_violation;
        if (r.max_rot_violation > maxr) maxr = r.max_rot_violation;
        double de = mn_csys_drag_error(s, sc.pelvis);
        if (de > maxd) maxd = de;
        if (f == frames / 2) bottom = de;
    }
    double final_v = r.max_violation;
    double mx = 0, cmx = 0;
    for (int f = 0; f < frames; f++) {
        if (ms[f] > mx) mx = ms[f];
        if (cpu[f] > cmx) cmx = cpu[f];
    }
    double med = mn_bench_median(ms, (size_t)frames);
    double cmed = mn_bench_median(cpu, (size_t)frames);
    printf("bench=drag solver=%s frames=%d dof=%d rows=%d setup_ok=%d median_ms=%.4f max_ms=%.4f "
           "median_cpu_ms=%.4f max_cpu_ms=%.4f mean_iters=%.2f "
           "max_violation_m=%.3g max_rot_violation_rad=%.3g final_violation_m=%.3g "
           "max_drag_error_m=%.3g "
           "bottom_drag_error_m=%.3g reached=%d unmet_frames=%d\n",
           mn_csolver_name(method), frames, m->nv, r.rows, setup_ok, med, mx, cmed, cmx,
           sum_iters / frames, maxv, maxr, final_v, maxd, bottom, maxd <= 1e-3, unmet);
    free(ms);
    free(cpu);
    mn_csys_destroy(s);
    return MN_EXIT_OK;
}

typedef struct drag_args {
    const char *file, *solver;
    int frames, iters;
    double depth, scale, tol;
} drag_args;

#define AT(f, t) MN_CLI_AT(drag_args, f, t)
static const mn_cli_opt drag_opts[] = {
    {"--solver", MN_CLI_STRING, AT(solver, const char*), .bad = NULL},
    {"--frames", MN_CLI_INT, AT(frames, int), 2, INT_MAX, .bad = "--frames needs an integer >= 2"},
    {"--iters", MN_CLI_INT, AT(iters, int), 1, INT_MAX, .bad = "--iters needs a positive integer"},
    {"--depth", MN_CLI_DOUBLE, AT(depth, double), 0, DBL_MAX, .bad = "--depth needs a length >= 0"},
    {"--tol", MN_CLI_DOUBLE, AT(tol, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--tol needs a number > 0"},
    {"--scale", MN_CLI_DOUBLE, AT(scale, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--scale needs a number > 0"},
};
#undef AT
const mn_cli_table mn_bench_drag_options = {
    .cmd = "bench drag",
    MN_CLI_OPTS(drag_opts),
    .unknown = "unknown option '%s'",
    .missing = "unknown option '%s'",
    .max_pos = 1,
    .too_many = "one FILE only",
    .dash_option = 1,
};

int mn_bench_drag(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    drag_args args = {NULL, "all", 120, 20, 0.30, CMU_SCALE, 1e-5};
    int bad = mn_cli_parse(&mn_bench_drag_options, argc, argv, &args, &args.file, NULL);
    if (bad) return bad;
    const char *file = args.file, *solver = args.solver;
    int frames = args.frames, iters = args.iters;
    double depth = args.depth, scale = args.scale, tol = args.tol;
    if (!file) file = DEFAULT_FILE;
    int only = -1;
    if (strcmp(solver, "all")) {
        only = mn_csolver_parse(solver);
        if (only < 0) return mn_cli_usage_error("bench drag", "unknown solver '%s'", solver);
    }
    mn_bvh_options bo = mn_bvh_default();
    bo.scale = scale;
    mn_model* m = NULL;
    mn_motion mo;
    memset(&mo, 0, sizeof mo);
    mn_error err;
    if (mn_bvh_read(file, &bo, &m, &mo, NULL, &err) != MN_OK) return mn_cli_input_error(&err);
    mn_data* d = mn_data_create(m, 0);
    double* q0 = malloc(sizeof(double) * (size_t)m->nq);
    if (mo.nframes > 0)
        memcpy(q0, mo.q, sizeof(double) * (size_t)m->nq);
    else
        memcpy(q0, m->q0, sizeof(double) * (size_t)m->nq);
    int rc = MN_EXIT_OK;
    for (int k = 0; k < MN_CSOLVE_COUNT && rc == MN_EXIT_OK; k++)
        if (only < 0 || only == k) rc = run(m, d, q0, (mn_csolver)k, frames, depth, iters, tol);
    free(q0);
    mn_motion_free(&mo);
    mn_data_destroy(d);
    mn_model_destroy(m);
    return rc;
}
