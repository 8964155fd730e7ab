/* marionette bench ik --tracking-batch: tracking solves per second on a robot arm.
 *
 * A trajectory of targets, each 1 cm and 3 degrees from the previous one: a twist of 1 cm
 * along a random direction and 3 degrees about a random axis, carried to the joints by the
 * damped pseudoinverse at the previous joint vector (as `bench ik --near`), so every target
 * is the pose of a joint vector within the limits, reachable on the branch the trajectory
 * is on. The whole trajectory is solved by one mn_ik_solve_batch call in follow mode (each
 * solve warm-started from the previous answer), and again by a loop of mn_ik_solve calls
 * from the previous answer, which must give the same answers. Runs alternate between the
 * two, on this thread's CPU time; the figures are the median and the range over the runs.
 * Speed goals are reported, never asserted. */
#include <marionette/ik.h>
#include <marionette/io.h>
#include <marionette/linalg.h>
#include <marionette/model.h>

#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"
#include "ik_tracking.h"

static void usage(FILE* f) {
    fprintf(f, "usage: marionette bench ik --tracking-batch --urdf FILE --base LINK --tip LINK\n"
               "                           [--n 20000] [--runs 5] [--seed S] [--tol 1e-5]\n"
               "                           [--step-cm 1] [--step-deg 3]\n"
               "\n"
               "Tracking: a trajectory of n targets, each --step-cm and --step-deg from the\n"
               "previous (through the joints, so each is reachable), solved by one\n"
               "mn_ik_solve_batch call in follow mode and by a loop of mn_ik_solve calls, in\n"
               "alternating runs on this thread's CPU time. Prints one key=value line:\n"
               "  robot dof n step_cm step_deg (measured means) solve_rate mean_iters\n"
               "  solves_per_s (batch; median over the runs) solves_per_s_min solves_per_s_max\n"
               "  loop_solves_per_s (mn_ik_solve one by one) us_per_solve same_answers\n");
}

static double cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t sm_state;
static double urand(void) {
    uint64_t z = (sm_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static void rand_dir(double v[3]) {
    double z = 2 * urand() - 1, phi = 2 * MN_PI * urand(), r = sqrt(1 - z * z);
    v[0] = r * cos(phi), v[1] = r * sin(phi), v[2] = z;
}

/* Rotation angle between two frames. */
static double rot_angle(const mn_mat3* A, const mn_mat3* B) {
    double tr = 0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            tr += A->m[3 * i + k] * B->m[3 * i + k];
    double c = 0.5 * (tr - 1);
    return acos(c > 1 ? 1 : c < -1 ? -1 : c);
}

typedef struct tracking_args {
    const char *urdf, *base, *tip;
    int n, runs, batch;
    double seed, tol, step_cm, step_deg;
} tracking_args;

#define AT(f, t) MN_CLI_AT(tracking_args, f, t)
static const mn_cli_opt tracking_opts[] = {
    {"--tracking-batch", MN_CLI_FLAG, AT(batch, int), .lo = 1},
    {"--urdf", MN_CLI_STRING, AT(urdf, const char*), .bad = NULL},
    {"--base", MN_CLI_STRING, AT(base, const char*), .bad = NULL},
    {"--tip", MN_CLI_STRING, AT(tip, const char*), .bad = NULL},
    {"--n", MN_CLI_INT, AT(n, int), 2, INT_MAX, .bad = "--n needs an integer >= 2"},
    {"--runs", MN_CLI_INT, AT(runs, int), 1, INT_MAX, .bad = "--runs needs a positive integer"},
    {"--seed", MN_CLI_DOUBLE, AT(seed, double), 0, DBL_MAX,
     .bad = "--seed needs a non-negative integer"},
    {"--tol", MN_CLI_DOUBLE, AT(tol, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--tol needs a positive number"},
    {"--step-cm", MN_CLI_DOUBLE, AT(step_cm, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--step-cm needs a positive number"},
    {"--step-deg", MN_CLI_DOUBLE, AT(step_deg, double), 0, DBL_MAX,
     .bad = "--step-deg needs a number >= 0"},
};
#undef AT
const mn_cli_table mn_bench_ik_tracking_options = {
    .cmd = "bench ik",
    MN_CLI_OPTS(tracking_opts),
    .unknown = "unknown or incomplete option '%s'",
    .missing = "unknown or incomplete option '%s'",
    .max_pos = -1,
    .dash_option = 1,
    .help = "bench ik --tracking-batch",
};

int mn_bench_ik_tracking(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    tracking_args args = {NULL, NULL, NULL, 20000, 5, 0, 7, 1e-5, 1, 3};
    const char** pos = calloc((size_t)argc + 1, sizeof *pos);
    int npos = 0;
    int bad = pos ? mn_cli_parse(&mn_bench_ik_tracking_options, argc, argv, &args, pos, &npos)
                  : MN_EXIT_INPUT;
    /* the word "ik" (the benchmark's name) may stand among the options */
    for (int k = 0; k < npos && !bad; k++)
        if (strcmp(pos[k], "ik"))
            bad = mn_cli_usage_error("bench ik", "unknown or incomplete option '%s'", pos[k]);
    free(pos);
    if (bad) return bad;
    const char *urdf = args.urdf, *base_name = args.base, *tip_name = args.tip;
    int n = args.n, runs = args.runs;
    double seedd = args.seed, tol = args.tol, step_cm = args.step_cm, step_deg = args.step_deg;
    if (!urdf || !base_name || !tip_name)
        return mn_cli_usage_error("bench ik", "--urdf, --base and --tip are required");
    mn_error err;
    mn_model* m = NULL;
    if (mn_urdf_read(urdf, &m, NULL, &err) != MN_OK) return mn_cli_input_error(&err);
    int base = mn_model_find_joint(m, base_name), tip = mn_model_find_joint(m, tip_name);
    mn_chain* c = base >= 0 && tip >= 0 ? mn_chain_create(m, base, tip, &err) : NULL;
    if (!c || c->ndof > 16) {
        if (base < 0 || tip < 0)
            mn_error_set(&err, MN_ERR_NOTFOUND, urdf, 0, base < 0 ? "--base" : "--tip",
                         "no link named '%s'", base < 0 ? base_name : tip_name);
        else if (c)
            mn_error_set(&err, MN_ERR_ARG, urdf, 0, "--tip", "more than 16 DOFs");
        mn_chain_destroy(c);
        mn_model_destroy(m);
        return mn_cli_input_error(&err);
    }
    int nd = c->ndof, nq = m->nq;
    double* targets = malloc(sizeof(double) * 7 * (size_t)n);
    double* qa = malloc(sizeof(double) * (size_t)nq * (size_t)n);
    double* qb = malloc(sizeof(double) * (size_t)nq * (size_t)n);
    mn_status* sa = malloc(sizeof(mn_status) * (size_t)n);
    double seedq[16], qg[16];
    for (int k = 0; k < nd; k++) /* the middle of the limits, continuous joints at 0 */
        seedq[k] = qg[k] =
            isfinite(c->lo[k]) && isfinite(c->hi[k]) ? 0.5 * (c->lo[k] + c->hi[k]) : 0.0;
    /* ---- the trajectory ---- */
    sm_state = (uint64_t)seedd;
    double sum_dp = 0, sum_da = 0;
    mn_xform prev;
    mn_chain_fk(m, c, qg, &prev);
    for (int i = 0; i < n; i++) {
        if (i > 0) {
            double v[3], a[3], xi[6], dq[16], J[6 * 16], work[64];
            rand_dir(v);
            rand_dir(a);
            for (int k = 0; k < 3; k++)
                xi[k] = 0.01 * step_cm * v[k], xi[3 + k] = step_deg * MN_PI / 180.0 * a[k];
            mn_xform X;
            mn_chain_fk_jacobian(m, c, qg, mn_v3(0, 0, 0), &X, J);
            mn_dls_solve(J, 6, nd, xi, 1e-3, dq, work);
            for (int k = 0; k < nd; k++) {
                double q2 = qg[k] + dq[k];
                qg[k] = q2 < c->lo[k] ? c->lo[k] : q2 > c->hi[k] ? c->hi[k] : q2;
            }
        }
        mn_xform T;
        mn_chain_fk(m, c, qg, &T);
        if (i > 0) {
            sum_dp += mn_vec3_norm(mn_vec3_sub(T.p, prev.p));
            sum_da += rot_angle(&T.R, &prev.R);
        }
        prev = T;
        mn_quat r = mn_quat_from_mat3(&T.R);
        double* t = targets + 7 * (size_t)i;
        t[0] = T.p.x, t[1] = T.p.y, t[2] = T.p.z;
        t[3] = r.w, t[4] = r.x, t[5] = r.y, t[6] = r.z;
    }
    /* ---- the solves ---- */
    mn_data* d = mn_data_create(m, 0);
    mn_ik_options o = mn_ik_default();
    o.tol_pos = tol;
    o.tol_rot = tol;
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.use_orientation = 1;
    double* rate = malloc(sizeof(double) * (size_t)runs);
    double* loop_rate = malloc(sizeof(double) * (size_t)runs);
    mn_ik_batch_result br;
    int same = 1;
    for (int run = 0; run < runs; run++) {
        mn_data_reset(m, d);
        mn_chain_scatter(c, seedq, d->q);
        double t0 = cpu_ns();
        mn_ik_solve_batch(m, d, &p, targets, n, 7, 1, &o, qa, sa, &br);
        rate[run] = n / ((cpu_ns() - t0) * 1e-9);

        mn_data_reset(m, d);
        mn_chain_scatter(c, seedq, d->q);
        t0 = cpu_ns();
        for (int i = 0; i < n; i++) {
            const double* t = targets + 7 * (size_t)i;
            p.target_pos = mn_v3(t[0], t[1], t[2]);
            p.target_rot = mn_q4(t[3], t[4], t[5], t[6]);
            mn_ik_solve(m, d, &p, &o, NULL);
            memcpy(qb + (size_t)i * (size_t)nq, d->q, sizeof(double) * (size_t)nq);
        }
        loop_rate[run] = n / ((cpu_ns() - t0) * 1e-9);
        if (memcmp(qa, qb, sizeof(double) * (size_t)nq * (size_t)n) != 0) same = 0;
    }
    double med = mn_bench_median(rate, (size_t)runs), lo = rate[0], hi = rate[runs - 1];
    double lmed = mn_bench_median(loop_rate, (size_t)runs);
    printf("robot=%s dof=%d n=%d step_cm=%.3f step_deg=%.3f solve_rate=%.4f mean_iters=%.3f "
           "max_pos_err=%.3g max_rot_err=%.3g solves_per_s=%.0f solves_per_s_min=%.0f "
           "solves_per_s_max=%.0f loop_solves_per_s=%.0f us_per_solve=%.3f runs=%d "
           "same_answers=%d\n",
           m->name, nd, n, 100 * sum_dp / (n - 1), sum_da / (n - 1) * 180 / MN_PI,
           100.0 * br.solved / n, (double)br.iterations / n, br.max_pos_err, br.max_rot_err, med,
           lo, hi, lmed, 1e6 / med, runs, same);
    free(rate);
    free(loop_rate);
    free(targets);
    free(qa);
    free(qb);
    free(sa);
    mn_data_destroy(d);
    mn_chain_destroy(c);
    mn_model_destroy(m);
    return MN_EXIT_OK;
}
