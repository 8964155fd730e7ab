/* marionette bench targets: chain IK on a file of targets, the native side of the
 * WebAssembly benchmark (web/bench/bench_ik.mjs runs the module on the same file). */
#include <marionette/ik.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <limits.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"

const char mn_bench_targets_summary[] =
    "chain IK on a file of targets (the native side of the web benchmark)";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench targets FIGURE --base B --tip T --targets FILE [--method lm]\n"
            "                                [--tol 1e-5] [--check-pos 1e-4] [--check-rot 1e-3]\n"
            "\n"
            "FILE holds one target a line in B's frame ('world' for the figure's root): x y z, or\n"
            "x y z qw qx qy qz for a position and an orientation goal. Each solve starts from\n"
            "the rest pose, with the library's default options (no time budget). A target counts\n"
            "as solved when the position error is within --check-pos (and the rotation error\n"
            "within --check-rot). Prints one key=value line: n, solved, solve_rate (percent),\n"
            "mean_us and median_us (the solve's own clock, mn_ik_result.time_us), wall_mean_us.\n");
}

typedef struct targets_args {
    const char *file, *base, *tip, *targets, *method;
    double tol, check_pos, check_rot;
} targets_args;

#define AT(f, t) MN_CLI_AT(targets_args, f, t)
static const mn_cli_opt targets_opts[] = {
    {"--base", MN_CLI_STRING, AT(base, const char*), .bad = NULL},
    {"--tip", MN_CLI_STRING, AT(tip, const char*), .bad = NULL},
    {"--targets", MN_CLI_STRING, AT(targets, const char*), .bad = NULL},
    {"--method", MN_CLI_STRING, AT(method, const char*), .bad = NULL},
    {"--tol", MN_CLI_DOUBLE, AT(tol, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--tol needs a number > 0"},
    {"--check-pos", MN_CLI_DOUBLE, AT(check_pos, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--check-pos needs a number > 0"},
    {"--check-rot", MN_CLI_DOUBLE, AT(check_rot, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--check-rot needs a number > 0"},
};
#undef AT
const mn_cli_table mn_bench_targets_options = {
    .cmd = "bench targets",
    MN_CLI_OPTS(targets_opts),
    .unknown = "unknown option '%s'",
    .missing = "unknown option '%s'",
    .max_pos = 1,
    .too_many = "one FIGURE only",
    .dash_option = 1,
};

int mn_bench_targets(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    targets_args args = {NULL, NULL, NULL, NULL, "lm", 1e-5, 1e-4, 1e-3};
    int bad = mn_cli_parse(&mn_bench_targets_options, argc, argv, &args, &args.file, NULL);
    if (bad) return bad;
    const char *file = args.file, *base_name = args.base, *tip_name = args.tip,
               *targets = args.targets, *method = args.method;
    double tol = args.tol, check_pos = args.check_pos, check_rot = args.check_rot;
    if (!file || !base_name || !tip_name || !targets)
        return mn_cli_usage_error("bench targets", "need FIGURE, --base, --tip and --targets");
    int mth = mn_ik_method_parse(method);
    if (mth < 0) return mn_cli_usage_error("bench targets", "unknown method '%s'", method);

    mn_error err;
    mn_model* m = NULL;
    if (mn_figure_read(file, &m, NULL, NULL, &err) != MN_OK) return mn_cli_input_error(&err);
    int world = !strcmp(base_name, "world");
    int base = world ? -1 : mn_cli_find_joint(m, file, "--base", base_name);
    int tip = world || base >= 0 ? mn_cli_find_joint(m, file, "--tip", tip_name) : -1;
    if ((base < 0 && !world) || tip < 0) {
        mn_model_destroy(m);
        return MN_EXIT_INPUT;
    }
    FILE* f = fopen(targets, "r");
    mn_data* d = mn_data_create(m, 0);
    double* t = NULL;
    double* us = NULL;
    int rc = MN_EXIT_OK, n = 0, cap = 0, orient = -1;
    if (!f || !d) {
        fprintf(stderr, "marionette: bench targets: %s\n",
                !f ? "cannot open the targets file" : "out of memory");
        rc = MN_EXIT_INPUT;
        goto done;
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        double v[8];
        int k = sscanf(line, "%lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                       &v[5], &v[6]);
        if (k <= 0) continue;
        if ((k != 3 && k != 7) || (orient >= 0 && (k == 7) != orient)) {
            fprintf(stderr, "marionette: %s:%d: expected 3 or 7 numbers on every line\n", targets,
                    n + 1);
            rc = MN_EXIT_INPUT;
            goto done;
        }
        orient = k == 7;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            double* nt = realloc(t, sizeof(double) * 7 * (size_t)cap);
            if (!nt) {
                rc = MN_EXIT_INPUT;
                goto done;
            }
            t = nt;
        }
        memcpy(t + 7 * n, v, sizeof(double) * (size_t)k);
        n++;
    }
    us = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!us) {
        rc = MN_EXIT_INPUT;
        goto done;
    }
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.use_orientation = orient == 1;
    mn_ik_options o = mn_ik_default();
    o.method = (mn_ik_method)mth;
    o.tol_pos = o.tol_rot = tol;
    int solved = 0;
    double sum = 0, wall = 0;
    for (int k = 0; k < n; k++) {
        const double* v = t + 7 * k;
        p.target_pos = mn_v3(v[0], v[1], v[2]);
        if (p.use_orientation) p.target_rot = (mn_quat){v[3], v[4], v[5], v[6]};
        mn_data_reset(m, d);
        mn_clamp_to_limits(m, d->q);
        mn_ik_result r;
        double t0 = mn_bench_now_ns();
        mn_ik_solve(m, d, &p, &o, &r);
        wall += mn_bench_now_ns() - t0;
        us[k] = r.time_us;
        sum += r.time_us;
        solved += r.pos_err <= check_pos && (!p.use_orientation || r.rot_err <= check_rot);
    }
    printf("figure=%s base=%s tip=%s method=%s n=%d orientation=%d solved=%d solve_rate=%.2f "
           "mean_us=%.3f "
           "median_us=%.3f wall_mean_us=%.3f\n",
           file, base_name, tip_name, mn_ik_method_name(o.method), n, orient == 1, solved,
           n ? 100.0 * solved / n : 0.0, n ? sum / n : 0.0,
           n ? mn_bench_median(us, (size_t)n) : 0.0, n ? wall / n / 1000.0 : 0.0);
done:
    if (f) fclose(f);
    free(t);
    free(us);
    mn_data_destroy(d);
    mn_model_destroy(m);
    return rc;
}
