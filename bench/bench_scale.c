/* marionette bench scale: how the costs grow.
 *
 *   chain  IK of a serial chain of n hinges, n = 7 to 200 (axes cycling z, y, x, links of
 *          1/n so the reach stays 1), position goal (3 rows) for every iterative method and
 *          the pose goal (6 rows) for LM: targets the pose of a random joint vector, seeds
 *          that vector moved so that the tip is about 10 cm away.
 *   csys   the whole-figure constraint solve (Welman ch. 5) on a figure of a floating root,
 *          a spine of 4 balls and 40 limbs (ball, hinge, hinge, end), 218 DOFs, with k = 1
 *          to 40 of the limbs' ends pinned 1 cm from where they are, for each solver.
 *
 * Times are this thread's CPU time, the median over alternating rounds; each size's line
 * gives the time per solve and per iteration; the exponent k of time ~ n^k is the
 * least-squares slope in log-log. --svg DIR writes the plots (scale-chain.svg,
 * scale-chain-iter.svg, scale-csys.svg). Times are reported, never asserted. */
#include <marionette/constrain.h>
#include <marionette/ik.h>
#include <marionette/model.h>

#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"
#include "plot.h"

const char mn_bench_scale_summary[] =
    "how IK (7-200 DOF) and constraint-solve (1-40 constraints) times grow: exponents, plots";

static void usage(FILE* f) {
    fprintf(f, "usage: marionette bench scale [--case chain|csys|all] [--rounds N] [--svg DIR]\n"
               "\n"
               "chain: IK of serial chains of 7 to 200 hinges (reach 1), 24 queries per size\n"
               "  (the tip about 10 cm from the target, no restarts, at most 500 iterations,\n"
               "  tol 1e-4), for lm, dls, pinv, jt, ccd, fabrik (position goal) and lm-pose (pose\n"
               "  goal). One line per method and size:\n"
               "    case=chain method dof us_per_solve us_per_iter mean_iters solve_rate\n"
               "  and per method: case=chain-exponent k_solve k_iter (time ~ dof^k).\n"
               "csys: constraint solve of a 218-DOF figure (floating root, 4-ball spine, 40\n"
               "  limbs) with 1 to 40 limb ends pinned 1 cm away, 12 solves per size, per\n"
               "  solver (lagrange, dls, ccd):\n"
               "    case=csys solver constraints rows us_per_solve us_per_iter mean_iters\n"
               "    solve_rate, and case=csys-exponent k_solve k_iter (time ~ constraints^k).\n"
               "  --solver NAME runs that solver only (the others' lines are placeholders).\n"
               "Thread CPU time, median over --rounds alternating rounds (default 3). --svg DIR\n"
               "writes scale-chain.svg, scale-chain-iter.svg and scale-csys.svg there.\n");
}

static uint64_t sm_state = 99;
static double urand(void) {
    uint64_t z = (sm_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) {
    return 2 * urand() - 1;
}

/* ---- chains -------------------------------------------------------------------------------- */

/* n hinges, axes z, y, x, z, ..., each 1/n above the last, and an end site. */
static mn_model* serial_chain(int n) {
    mn_spec* s = mn_spec_create("serial");
    char name[32];
    const mn_vec3 axes[3] = {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}};
    for (int i = 0; i <= n; i++) {
        mn_joint_def d = mn_joint_default();
        snprintf(name, sizeof name, i < n ? "j%d" : "end", i);
        d.name = name;
        d.parent = i - 1;
        d.type = i < n ? MN_JOINT_HINGE : MN_JOINT_FIXED;
        d.axis = axes[i % 3];
        d.offset = mn_v3(0, 0, i == 0 ? 0 : 1.0 / n);
        mn_spec_add_joint(s, &d, NULL);
    }
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

enum { NCHAIN = 11, NMETHOD = 7, NQUERY = 24 };
static const int chain_sizes[NCHAIN] = {7, 10, 14, 20, 28, 40, 56, 80, 113, 160, 200};
static const char* method_label[NMETHOD] = {"lm", "dls", "pinv", "jt", "ccd", "fabrik", "lm-pose"};
static const mn_ik_method method_of[NMETHOD] = {MN_IK_LM,  MN_IK_DLS,    MN_IK_PINV, MN_IK_JT,
                                                MN_IK_CCD, MN_IK_FABRIK, MN_IK_LM};

typedef struct figures {
    double us_solve, us_iter, iters, rate;
} figures;

/* The queries of one chain: seeds (NQUERY x n) and targets (position, quaternion). */
typedef struct chain_queries {
    double* seed;
    mn_vec3 pos[NQUERY];
    mn_quat rot[NQUERY];
} chain_queries;

static void make_queries(const mn_model* m, int n, chain_queries* cq) {
    mn_data* d = mn_data_create(m, 0);
    cq->seed = malloc(sizeof(double) * (size_t)(n * NQUERY));
    for (int qi = 0; qi < NQUERY; qi++) {
        for (int k = 0; k < n; k++) /* the answer: a chain curled at random */
            d->q[k] = 2.0 * srand1() / sqrt((double)n);
        mn_fk(m, d);
        cq->pos[qi] = d->xf[n].p;
        cq->rot[qi] = mn_quat_from_mat3(&d->xf[n].R);
        mn_vec3 tip = d->xf[n].p;
        /* the seed: the answer moved along a random joint direction until the tip is
         * 10 cm away */
        double dir[256], scale = 0.05;
        for (int k = 0; k < n; k++)
            dir[k] = srand1();
        double q0[256];
        memcpy(q0, d->q, sizeof(double) * (size_t)n);
        for (int it = 0; it < 40; it++) {
            for (int k = 0; k < n; k++)
                d->q[k] = q0[k] + scale * dir[k];
            mn_fk(m, d);
            double dist = mn_vec3_dist(d->xf[n].p, tip);
            if (fabs(dist - 0.1) < 0.005) break;
            scale *= dist > 0 ? 0.1 / dist : 2.0;
            if (scale > 1) scale = 1;
        }
        memcpy(cq->seed + (size_t)qi * (size_t)n, d->q, sizeof(double) * (size_t)n);
    }
    mn_data_destroy(d);
}

static void run_chain_method(const mn_model* m, mn_data* d, int n, const chain_queries* cq,
                             int method, figures* f) {
    mn_ik_options o = mn_ik_default();
    o.method = method_of[method];
    o.tol_pos = 1e-4;
    o.tol_rot = 1e-4;
    o.max_iters = 500;
    o.max_restarts = 0;
    mn_ik_problem p = mn_ik_problem_default();
    p.base = -1;
    p.tip = n;
    p.use_orientation = method == NMETHOD - 1;
    int ok = 0;
    long iters = 0;
    double t0 = mn_bench_cpu_ns();
    for (int qi = 0; qi < NQUERY; qi++) {
        memcpy(d->q, cq->seed + (size_t)qi * (size_t)n, sizeof(double) * (size_t)n);
        p.target_pos = cq->pos[qi];
        p.target_rot = cq->rot[qi];
        mn_ik_result r;
        ok += mn_ik_solve(m, d, &p, &o, &r) == MN_OK;
        iters += r.iterations;
    }
    double us = (mn_bench_cpu_ns() - t0) * 1e-3;
    f->us_solve = us / NQUERY;
    f->iters = (double)iters / NQUERY;
    f->us_iter = us / (double)(iters > 0 ? iters : 1);
    f->rate = 100.0 * ok / NQUERY;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* Median of each figure over the rounds. */
static figures median_figures(figures* r, int rounds) {
    double v[64];
    figures out;
    double* fields[4] = {&out.us_solve, &out.us_iter, &out.iters, &out.rate};
    for (int f = 0; f < 4; f++) {
        for (int i = 0; i < rounds; i++)
            v[i] = ((double*)&r[i])[f];
        qsort(v, (size_t)rounds, sizeof(double), cmp_double);
        *fields[f] = v[rounds / 2];
    }
    return out;
}

static void bench_chain(int rounds, const char* svg) {
    static double xs[NCHAIN], solve[NMETHOD][NCHAIN], iter[NMETHOD][NCHAIN];
    for (int c = 0; c < NCHAIN; c++) {
        int n = chain_sizes[c];
        mn_model* m = serial_chain(n);
        mn_data* d = mn_data_create(m, 0);
        chain_queries cq;
        make_queries(m, n, &cq);
        figures r[NMETHOD][16];
        for (int round = 0; round < rounds; round++) /* alternating: method by method */
            for (int k = 0; k < NMETHOD; k++)
                run_chain_method(m, d, n, &cq, k, &r[k][round]);
        xs[c] = n;
        for (int k = 0; k < NMETHOD; k++) {
            figures f = median_figures(r[k], rounds);
            solve[k][c] = f.us_solve;
            iter[k][c] = f.us_iter;
            printf("bench=scale case=chain method=%s dof=%d us_per_solve=%.2f us_per_iter=%.3f "
                   "mean_iters=%.2f solve_rate=%.1f\n",
                   method_label[k], n, f.us_solve, f.us_iter, f.iters, f.rate);
        }
        fflush(stdout);
        free(cq.seed);
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
    mn_plot_series ss[NMETHOD], si[NMETHOD];
    for (int k = 0; k < NMETHOD; k++) {
        printf("bench=scale case=chain-exponent method=%s dof_min=%d dof_max=%d k_solve=%.2f "
               "k_iter=%.2f\n",
               method_label[k], chain_sizes[0], chain_sizes[NCHAIN - 1],
               mn_bench_fit_exponent(xs, solve[k], NCHAIN),
               mn_bench_fit_exponent(xs, iter[k], NCHAIN));
        ss[k] = (mn_plot_series){method_label[k], NCHAIN, xs, solve[k]};
        si[k] = (mn_plot_series){method_label[k], NCHAIN, xs, iter[k]};
    }
    if (svg) {
        char path[1024];
        snprintf(path, sizeof path, "%s/scale-chain.svg", svg);
        if (mn_bench_loglog_svg(path, "IK of a serial chain: time per solve (10 cm away)",
                                "DOFs (hinges)", "microseconds per solve (thread CPU)", ss,
                                NMETHOD) == 0)
            printf("bench=scale case=chain-plot svg=%s\n", path);
        else
            fprintf(stderr, "marionette bench scale: %s: cannot write the plot\n", path);
        snprintf(path, sizeof path, "%s/scale-chain-iter.svg", svg);
        if (mn_bench_loglog_svg(path, "IK of a serial chain: time per iteration", "DOFs (hinges)",
                                "microseconds per iteration (thread CPU)", si, NMETHOD) == 0)
            printf("bench=scale case=chain-iter-plot svg=%s\n", path);
        else
            fprintf(stderr, "marionette bench scale: %s: cannot write the plot\n", path);
    }
}

/* ---- the whole-figure constraint solve ------------------------------------------------------ */

enum { NLIMB = 40, NSPINE = 4, NCSYS = 9, NSOLVER = 3, NSOLVE = 12 };
static const int csys_sizes[NCSYS] = {1, 2, 4, 8, 12, 16, 24, 32, 40};

/* A floating root, a spine of balls and NLIMB limbs of a ball and two hinges with an end
 * site each, spread around the spine. The end sites' indices go to ends. */
static mn_model* many_limbs(int* ends) {
    mn_spec* s = mn_spec_create("many_limbs");
    char name[32];
    mn_joint_def d = mn_joint_default();
    d.name = "root";
    d.type = MN_JOINT_FREE;
    d.mass = 1;
    mn_spec_add_joint(s, &d, NULL);
    int spine[NSPINE];
    for (int i = 0; i < NSPINE; i++) {
        d = mn_joint_default();
        snprintf(name, sizeof name, "spine%d", i);
        d.name = name;
        d.parent = i == 0 ? 0 : spine[i - 1];
        d.type = MN_JOINT_BALL;
        d.offset = mn_v3(0, 0.15, 0);
        d.mass = 1;
        spine[i] = mn_spec_add_joint(s, &d, NULL);
    }
    int end_spec[NLIMB];
    for (int l = 0; l < NLIMB; l++) {
        double ang = 2 * MN_PI * l / NLIMB;
        int parent = spine[l % NSPINE];
        for (int k = 0; k < 4; k++) {
            d = mn_joint_default();
            snprintf(name, sizeof name, "limb%d_%d", l, k);
            d.name = name;
            d.parent = parent;
            d.type = k == 0 ? MN_JOINT_BALL : k < 3 ? MN_JOINT_HINGE : MN_JOINT_FIXED;
            d.axis = mn_v3(0, 0, 1);
            d.offset = k == 0 ? mn_v3(0.1 * cos(ang), 0, 0.1 * sin(ang))
                              : mn_v3(0.15 * cos(ang), -0.05, 0.15 * sin(ang));
            d.mass = k < 3 ? 0.2 : 0;
            if (k == 1) d.q0[0] = 0.3;
            if (k == 2) d.q0[0] = 0.4;
            parent = mn_spec_add_joint(s, &d, NULL);
        }
        end_spec[l] = parent;
    }
    mn_model* m = mn_model_compile(s, NULL);
    for (int l = 0; l < NLIMB && m; l++) {
        snprintf(name, sizeof name, "limb%d_3", l);
        ends[l] = mn_model_find_joint(m, name);
    }
    (void)end_spec;
    mn_spec_destroy(s);
    return m;
}

static const mn_csolver solver_of[NSOLVER] = {MN_CSOLVE_LAGRANGE, MN_CSOLVE_DLS, MN_CSOLVE_CCD};

/* NSOLVE solves of k pins, each from the rest pose with the pinned ends moved 1 cm in
 * random directions (the same directions for every solver). */
static void run_csys(const mn_model* m, mn_data* d, const int* ends, int k, int solver,
                     const mn_vec3* moves, figures* f, int* rows) {
    mn_figure fig = {m, d};
    mn_csys_def def = mn_csys_default();
    def.max_handles = NLIMB;
    def.max_constraints = NLIMB;
    mn_csys* s = mn_csys_create(&fig, 1, &def, NULL);
    mn_data_reset(m, d);
    mn_fk(m, d);
    int cons[NLIMB];
    for (int c = 0; c < k; c++) {
        mn_handle_def h = mn_handle_default();
        h.joint = ends[c * NLIMB / k];
        int hi = mn_csys_add_handle(s, &h, NULL);
        mn_constraint_def cd = mn_constraint_default();
        cd.handle = hi;
        cd.target = d->xf[h.joint].p;
        cons[c] = mn_csys_add_constraint(s, &cd, NULL);
    }
    mn_csolve_options o = mn_csolve_default();
    o.method = solver_of[solver];
    o.tol = 1e-4;
    o.max_iters = solver_of[solver] == MN_CSOLVE_CCD ? 200 : 50;
    int ok = 0;
    long iters = 0;
    double us = 0;
    for (int t = 0; t < NSOLVE; t++) {
        mn_data_reset(m, d);
        mn_fk(m, d);
        mn_csys_invalidate(s);
        for (int c = 0; c < k; c++) {
            int j = ends[c * NLIMB / k];
            mn_csys_set_target(s, cons[c],
                               mn_vec3_add(d->xf[j].p, mn_vec3_scale(moves[t * NLIMB + c], 0.01)));
        }
        mn_csolve_result r;
        double t0 = mn_bench_cpu_ns();
        ok += mn_csys_solve(s, &o, &r) == MN_OK;
        us += (mn_bench_cpu_ns() - t0) * 1e-3;
        iters += r.iterations;
        *rows = r.rows;
    }
    f->us_solve = us / NSOLVE;
    f->iters = (double)iters / NSOLVE;
    f->us_iter = us / (double)(iters > 0 ? iters : 1);
    f->rate = 100.0 * ok / NSOLVE;
    mn_csys_destroy(s);
}

static void bench_csys(int rounds, const char* svg, int only) {
    int ends[NLIMB];
    mn_model* m = many_limbs(ends);
    if (!m) {
        fprintf(stderr, "marionette bench scale: the figure did not compile\n");
        return;
    }
    mn_data* d = mn_data_create(m, 0);
    static mn_vec3 moves[NSOLVE * NLIMB];
    for (int i = 0; i < NSOLVE * NLIMB; i++)
        moves[i] = mn_vec3_normalize(mn_v3(srand1(), srand1(), srand1()));
    static double xs[NCSYS], solve[NSOLVER][NCSYS], iter[NSOLVER][NCSYS];
    for (int c = 0; c < NCSYS; c++) {
        int k = csys_sizes[c];
        xs[c] = k;
        figures r[NSOLVER][16];
        int rows = 0;
        for (int round = 0; round < rounds; round++)
            for (int sv = 0; sv < NSOLVER; sv++)
                if (only < 0 || solver_of[sv] == (mn_csolver)only)
                    run_csys(m, d, ends, k, sv, moves, &r[sv][round], &rows);
                else
                    r[sv][round] = (figures){1, 1, 1, 0};
        for (int sv = 0; sv < NSOLVER; sv++) {
            figures f = median_figures(r[sv], rounds);
            solve[sv][c] = f.us_solve;
            iter[sv][c] = f.us_iter;
            printf("bench=scale case=csys solver=%s dof=%d constraints=%d rows=%d "
                   "us_per_solve=%.1f us_per_iter=%.2f mean_iters=%.2f solve_rate=%.1f\n",
                   mn_csolver_name(solver_of[sv]), m->nv, k, 3 * k, f.us_solve, f.us_iter, f.iters,
                   f.rate);
        }
        (void)rows;
        fflush(stdout);
    }
    mn_plot_series ss[NSOLVER];
    for (int sv = 0; sv < NSOLVER; sv++) {
        printf("bench=scale case=csys-exponent solver=%s constraints_min=%d constraints_max=%d "
               "k_solve=%.2f k_iter=%.2f k_iter_large=%.2f\n",
               mn_csolver_name(solver_of[sv]), csys_sizes[0], csys_sizes[NCSYS - 1],
               mn_bench_fit_exponent(xs, solve[sv], NCSYS),
               mn_bench_fit_exponent(xs, iter[sv], NCSYS),
               mn_bench_fit_exponent(xs + NCSYS - 4, iter[sv] + NCSYS - 4, 4));
        ss[sv] = (mn_plot_series){mn_csolver_name(solver_of[sv]), NCSYS, xs, solve[sv]};
    }
    if (svg) {
        char path[1024];
        snprintf(path, sizeof path, "%s/scale-csys.svg", svg);
        if (mn_bench_loglog_svg(path, "Whole-figure constraint solve, 218 DOFs: time per solve",
                                "pinned limb ends (3 rows each)",
                                "microseconds per solve (thread CPU)", ss, NSOLVER) == 0)
            printf("bench=scale case=csys-plot svg=%s\n", path);
        else
            fprintf(stderr, "marionette bench scale: %s: cannot write the plot\n", path);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

typedef struct scale_args {
    const char *which, *svg;
    int rounds, only;
} scale_args;

static int parse_case(const char* v, void* dest) {
    if (strcmp(v, "chain") && strcmp(v, "csys") && strcmp(v, "all")) return 0;
    *(const char**)dest = v;
    return 1;
}

static int parse_solver(const char* v, void* dest) {
    *(int*)dest = mn_csolver_parse(v);
    return *(int*)dest >= 0;
}

#define AT(f, t) MN_CLI_AT(scale_args, f, t)
static const mn_cli_opt scale_opts[] = {
    {"--case", MN_CLI_CALL, AT(which, const char*), .bad = "--case: chain, csys or all, not '%s'",
     .parse = parse_case},
    {"--rounds", MN_CLI_INT, AT(rounds, int), 1, 16, .bad = "--rounds needs an integer in 1..16"},
    {"--solver", MN_CLI_CALL, AT(only, int), .bad = "--solver: lagrange, dls or ccd, not '%s'",
     .parse = parse_solver},
    {"--svg", MN_CLI_STRING, AT(svg, const char*), .bad = NULL},
};
#undef AT
const mn_cli_table mn_bench_scale_options = {
    .cmd = "bench scale",
    MN_CLI_OPTS(scale_opts),
    .unknown = "unknown or incomplete option '%s'",
    .missing = "unknown or incomplete option '%s'",
    .dash_option = 1,
};

int mn_bench_scale(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    scale_args args = {"all", NULL, 3, -1};
    int bad = mn_cli_parse(&mn_bench_scale_options, argc, argv, &args, NULL, NULL);
    if (bad) return bad;
    const char *which = args.which, *svg = args.svg;
    int rounds = args.rounds, only = args.only;
    if (!strcmp(which, "chain") || !strcmp(which, "all")) bench_chain(rounds, svg);
    if (!strcmp(which, "csys") || !strcmp(which, "all")) bench_csys(rounds, svg, only);
    return MN_EXIT_OK;
}
