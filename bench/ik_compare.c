/* marionette bench ik --compare: Welman 1993, 4.3, Fig. 4.4 and 4.5, for every method.
 *
 * Welman compares the Jacobian transpose and CCD on "a pair of inverse kinematic problems"
 * for a manipulator of 7 degrees of freedom with no joint limits, a position goal well
 * inside the reach (Fig. 4.4) and one near its edge, where the chain must approach a
 * singular configuration (Fig. 4.5), each solved "to varying degrees of accuracy" from
 * 1e-1 down to 1e-6, and plots the time against the accuracy requested.
 *
 * The thesis gives neither the link lengths nor the poses, so this bench documents its
 * own: seven unit links, hinge axes alternating z, y, z, y, ... (each link along the
 * previous frame's x), reach 7; the initial pose and both targets come from forward
 * kinematics of fixed poses, so both targets are certainly reachable:
 *
 *     initial  q = ( 0.4,  0.3, -0.4,  0.3,  0.4,  0.3, -0.4)
 *     inside   q = ( 1.2,  0.7, -0.9,  1.0,  0.8, -0.6,  0.7)    about half the reach
 *     edge     q = (-0.3,  0.10, 0.08, -0.09, 0.07, 0.06, -0.05)  about 99% of the reach
 *
 * Every method of ik.h runs through mn_ik_solve with its defaults except tol_pos = tol,
 * a large iteration budget, limits off (the chain has none) and a CPU-time budget per
 * solve (--timeout-ms). Each case is solved --repeat times from the initial pose; the median
 * wall time (us, as mn_ik_solve measures it) and the median CPU time of the thread
 * (cpu_us, which a loaded machine disturbs less) are reported; the table and the plot use
 * the CPU time. A method this build or this chain does not support reports its
 * status and is left out of the plot.
 *
 * With --urdf FILE --base B --tip T the same experiment runs on a robot arm's chain from B
 * to T: the poses take the same joint values, joint by joint root to tip (the eighth joint
 * onwards repeating the first seven), each clamped into its joint's limits, with the rest
 * of the figure at its rest pose; the targets are in B's frame and the limits are respected.
 * Welman's "edge" pose, all angles near zero, is the arm near its URDF zero configuration:
 * stretched out for many arms (the UR5), near the edge of the reach.
 *
 * Output: one key=value line per (method, target, tol):
 *     method=ccd target=inside tol=1e-03 solved=1 status=OK iters=24 us=16.2 cpu_us=15.9
 * pos_err=8.2e-04 then the same as a table on lines starting with '#', and an SVG plot (--svg FILE)
 * of time against accuracy on log-log axes, one panel per target, one line per method. */
#include "ik_compare.h"

#include <marionette/ik.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"

enum { NTOL = 6, NTARGET = 2, NDOF = 7 };
static const double tols[NTOL] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
static const char* const target_names[NTARGET] = {"inside", "edge"};
static const double q_initial[NDOF] = {0.4, 0.3, -0.4, 0.3, 0.4, 0.3, -0.4};
static const double q_targets[NTARGET][NDOF] = {{1.2, 0.7, -0.9, 1.0, 0.8, -0.6, 0.7},
                                                {-0.3, 0.10, 0.08, -0.09, 0.07, 0.06, -0.05}};

typedef struct cell {
    int solved;
    mn_status status;
    int iters;
    double us, cpu_us, pos_err;
} cell;

/* CPU time of this thread in microseconds: on a shared machine a solve preempted by other
 * jobs is charged only for what it computed. */
static double thread_cpu_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench ik --compare [--svg ik_compare.svg] [--repeat 5]\n"
            "                                     [--timeout-ms 2000] [--method NAME]\n"
            "                                     [--urdf FILE --base LINK --tip LINK] [--jt-rk]\n"
            "\n"
            "Welman 1993, 4.3 (Fig. 4.4, 4.5): a 7-DOF chain (unit links, hinges alternating\n"
            "about z and y, no limits), a position target inside the reach and one near its\n"
            "edge, solved to tolerances 1e-1 .. 1e-6 by every method from the same initial pose.\n"
            "--urdf FILE --base LINK --tip LINK: the chain of a robot arm instead, its joints\n"
            "given the same values (root to tip, clamped into their limits), limits respected,\n"
            "targets in LINK's frame (the 'edge' pose is near the URDF zero configuration).\n"
            "Prints one line per case:\n"
            "  method target tol solved status iters us cpu_us (medians of --repeat) pos_err\n"
            "then a table (lines starting with '#') and writes an SVG plot of time against\n"
            "accuracy, log-log, one panel per target (--svg, default ik_compare.svg).\n"
            "--jt-rk: adds the row jt-rk, jt integrating its ODE by adaptive Runge-Kutta\n"
            "  (Welman 4.1.5, mn_ik_options jt_rk) instead of the line-searched step.\n"
            "--method NAME runs only that method (lm, dls, pinv, jt, ccd, fabrik, analytic,\n"
            "altjac).\n");
}

static mn_model* welman_chain(void) {
    static const char* names[NDOF] = {"j1", "j2", "j3", "j4", "j5", "j6", "j7"};
    mn_spec* s = mn_spec_create("welman7");
    if (!s) return NULL;
    int parent = -1;
    mn_error err;
    for (int i = 0; i < NDOF; i++) {
        mn_joint_def j = mn_joint_default();
        j.name = names[i];
        j.parent = parent;
        j.type = MN_JOINT_HINGE;
        j.offset = mn_v3(i ? 1.0 : 0.0, 0, 0);
        j.axis = (i % 2) ? mn_v3(0, 1, 0) : mn_v3(0, 0, 1);
        parent = mn_spec_add_joint(s, &j, &err);
        if (parent < 0) {
            mn_spec_destroy(s);
            return NULL;
        }
    }
    mn_joint_def e = mn_joint_default();
    e.name = "end";
    e.parent = parent;
    e.offset = mn_v3(1.0, 0, 0);
    if (mn_spec_add_joint(s, &e, &err) < 0) {
        mn_spec_destroy(s);
        return NULL;
    }
    mn_model* m = mn_model_compile(s, &err);
    mn_spec_destroy(s);
    return m;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* ---- SVG ------------------------------------------------------------------------------- */

typedef struct sbuf {
    char* s;
    size_t len, cap;
    int failed;
} sbuf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
sb_printf(sbuf* b, const char* fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char* t = realloc(b->s, cap);
        if (!t) {
            b->failed = 1;
            return;
        }
        b->s = t;
        b->cap = cap;
    }
}

/* The rows: every method, then JT with the Runge-Kutta integration of its ODE (--jt-rk). */
#define NROW (MN_IK_METHOD_COUNT + 1)
#define ROW_JT_RK MN_IK_METHOD_COUNT

static const char* row_name(int row) {
    return row == ROW_JT_RK ? "jt-rk" : mn_ik_method_name((mn_ik_method)row);
}

static const char* const colors[NROW] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                         "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};

/* Time (us) against tolerance, log-log; tolerance decreasing to the right as in Welman's
 * plots. One panel per target, a shared legend. */
static int write_svg(const char* path, cell res[NROW][NTARGET][NTOL], const int* run,
                     const char* chain, int dof) {
    const double W = 900, H = 420, pw = 360, ph = 280, top = 50, left[2] = {80, 500};
    double lo = INFINITY, hi = 0;
    for (int mth = 0; mth < NROW; mth++)
        for (int t = 0; t < NTARGET; t++)
            for (int k = 0; k < NTOL; k++)
                if (run[mth] && res[mth][t][k].solved && res[mth][t][k].cpu_us > 0) {
                    if (res[mth][t][k].cpu_us < lo) lo = res[mth][t][k].cpu_us;
                    if (res[mth][t][k].cpu_us > hi) hi = res[mth][t][k].cpu_us;
                }
    if (!(hi > 0)) lo = 1, hi = 10;
    double ylo = floor(log10(lo)), yhi = ceil(log10(hi));
    if (yhi <= ylo) yhi = ylo + 1;
    sbuf b = {0};
    sb_printf(&b,
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
              "viewBox=\"0 0 %.0f %.0f\" "
              "font-family=\"sans-serif\" font-size=\"12\">\n"
              "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
              "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">Welman Fig. "
              "4.4/4.5: time against "
              "accuracy, %d-DOF chain (%s)</text>\n",
              W, H, W, H, W / 2, dof, chain);
    for (int t = 0; t < NTARGET; t++) {
        double x0 = left[t], y0 = top;
        sb_printf(&b, "<g>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">target %s</text>\n",
                  x0 + pw / 2, y0 - 8, target_names[t]);
        sb_printf(&b,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                  "stroke=\"black\"/>\n",
                  x0, y0, pw, ph);
        for (int k = 0; k < NTOL; k++) { /* x grid: one tick per tolerance */
            double x = x0 + pw * k / (NTOL - 1);
            sb_printf(&b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">1e-%d</text>\n",
                      x, y0, x, y0 + ph, x, y0 + ph + 16, k + 1);
        }
        for (double e = ylo; e <= yhi + 1e-9; e += 1) { /* y grid: decades */
            double y = y0 + ph - ph * (e - ylo) / (yhi - ylo);
            sb_printf(&b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">1e%+d</text>\n",
                      x0, y, x0 + pw, y, x0 - 5, y + 4, (int)e);
        }
        sb_printf(&b,
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">tolerance (convergence "
                  "criterion)</text>\n",
                  x0 + pw / 2, y0 + ph + 34);
        sb_printf(&b,
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f "
                  "%.1f)\">time "
                  "(CPU microseconds)</text>\n",
                  x0 - 52, y0 + ph / 2, x0 - 52, y0 + ph / 2);
        for (int mth = 0; mth < NROW; mth++) {
            if (!run[mth]) continue;
            int open = 0;
            for (int k = 0; k < NTOL; k++) {
                const cell* c = &res[mth][t][k];
                if (!c->solved || !(c->cpu_us > 0)) {
                    if (open) sb_printf(&b, "\"/>\n");
                    open = 0;
                    continue;
                }
                double x = x0 + pw * k / (NTOL - 1);
                double y = y0 + ph - ph * (log10(c->cpu_us) - ylo) / (yhi - ylo);
                if (!open)
                    sb_printf(&b,
                              "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                              colors[mth]);
                sb_printf(&b, "%.1f,%.1f ", x, y);
                open = 1;
            }
            if (open) sb_printf(&b, "\"/>\n");
            for (int k = 0; k < NTOL; k++) {
                const cell* c = &res[mth][t][k];
                if (!c->solved || !(c->cpu_us > 0)) continue;
                double x = x0 + pw * k / (NTOL - 1);
                double y = y0 + ph - ph * (log10(c->cpu_us) - ylo) / (yhi - ylo);
                sb_printf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x, y,
                          colors[mth]);
            }
        }
        sb_printf(&b, "</g>\n");
    }
    double lx = 80, ly = H - 22;
    for (int mth = 0; mth < NROW; mth++) {
        if (!run[mth]) continue;
        sb_printf(&b,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                  "stroke-width=\"3\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                  lx, ly, lx + 22, ly, colors[mth], lx + 27, ly + 4, row_name(mth));
        lx += 110;
    }
    sb_printf(&b, "</svg>\n");
    if (b.failed) {
        free(b.s);
        fprintf(stderr, "marionette bench ik: out of memory writing the plot\n");
        return MN_EXIT_INPUT;
    }
    mn_error err;
    mn_status st = mn_write_file_atomic(path, b.s, b.len, &err);
    free(b.s);
    if (st != MN_OK) return mn_cli_input_error(&err);
    return MN_EXIT_OK;
}

/* ---- the experiment ---------------------------------------------------------------------- */

/* The chain's moving joints from below base down to tip, root to tip; their number (at most
 * cap), 0 when tip is not below base. */
static int chain_moving(const mn_model* m, int base, int tip, int* out, int cap) {
    if (base >= 0 && (base == tip || !mn_model_is_ancestor(m, base, tip))) return 0;
    int n = 0;
    for (int j = tip; j >= 0 && j != base; j = m->jnt_parent[j])
        if (m->jnt_type[j] == MN_JOINT_HINGE || m->jnt_type[j] == MN_JOINT_SLIDE) n++;
    if (n > cap) return 0;
    int i = n - 1;
    for (int j = tip; j >= 0 && j != base; j = m->jnt_parent[j])
        if (m->jnt_type[j] == MN_JOINT_HINGE || m->jnt_type[j] == MN_JOINT_SLIDE) out[i--] = j;
    return n;
}

/* Poses the chain's joints with Welman's values (repeating after the seventh), each clamped
 * into its limits; the rest of the figure at its rest pose. */
static void set_pose(const mn_model* m, mn_data* d, const int* jnt, int n, const double* q7) {
    memcpy(d->q, m->q0, sizeof(double) * (size_t)m->nq);
    for (int i = 0; i < n; i++) {
        int j = jnt[i];
        double v = q7[i % NDOF];
        if (m->jnt_limited[j]) {
            if (v < m->jnt_range[2 * j]) v = m->jnt_range[2 * j];
            if (v > m->jnt_range[2 * j + 1]) v = m->jnt_range[2 * j + 1];
        }
        d->q[m->jnt_qadr[j]] = v;
    }
}

/* A label safe inside SVG text: letters, digits and "_-. /" kept, anything else '_'. */
static void svg_label(const char* s, char* out, size_t cap) {
    size_t n = 0;
    for (; s && *s && n + 1 < cap; s++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 strchr("_-. /", c);
        out[n++] = ok ? c : '_';
    }
    out[n] = 0;
}

typedef struct compare_args {
    const char *svg, *urdf, *base, *tip;
    int repeat, only, jt_rk, compare;
    double timeout_ms;
} compare_args;

static int parse_method(const char* v, void* dest) {
    *(int*)dest = mn_ik_method_parse(v);
    return *(int*)dest >= 0;
}

#define AT(f, t) MN_CLI_AT(compare_args, f, t)
static const mn_cli_opt compare_opts[] = {
    {"--compare", MN_CLI_FLAG, AT(compare, int), .lo = 1},
    {"--jt-rk", MN_CLI_FLAG, AT(jt_rk, int), .lo = 1},
    {"--svg", MN_CLI_STRING, AT(svg, const char*), .bad = NULL},
    {"--urdf", MN_CLI_STRING, AT(urdf, const char*), .bad = NULL},
    {"--base", MN_CLI_STRING, AT(base, const char*), .bad = NULL},
    {"--tip", MN_CLI_STRING, AT(tip, const char*), .bad = NULL},
    {"--repeat", MN_CLI_INT, AT(repeat, int), 1, 1000,
     .bad = "--repeat: '%s' is not an integer in [1, 1000]"},
    {"--timeout-ms", MN_CLI_DOUBLE, AT(timeout_ms, double), MN_CLI_POSITIVE, DBL_MAX,
     .bad = "--timeout-ms: '%s' is not a positive number"},
    {"--method", MN_CLI_CALL, AT(only, int), .bad = "--method: unknown method '%s'",
     .parse = parse_method},
};
#undef AT
const mn_cli_table mn_bench_ik_compare_options = {
    .cmd = "bench ik",
    MN_CLI_OPTS(compare_opts),
    .unknown = "unknown option '%s'",
    .missing = "%s: missing value (or unknown option)",
    .dash_option = 1,
    .help = "bench ik --compare",
};

int mn_bench_ik_compare(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    compare_args args = {"ik_compare.svg", NULL, NULL, NULL, 5, -1, 0, 0, 2000};
    int bad = mn_cli_parse(&mn_bench_ik_compare_options, argc, argv, &args, NULL, NULL);
    if (bad) return bad;
    const char *svg = args.svg, *urdf = args.urdf, *base_name = args.base, *tip_name = args.tip;
    int repeat = args.repeat, only = args.only, jt_rk = args.jt_rk;
    double timeout_ms = args.timeout_ms;

    if ((base_name || tip_name) && !urdf)
        return mn_cli_usage_error("bench ik", "--base and --tip go with --urdf");
    if (urdf && (!base_name || !tip_name))
        return mn_cli_usage_error("bench ik", "--urdf needs --base and --tip");

    mn_model* m = NULL;
    if (urdf) {
        mn_error err;
        mn_warnings warn = {0};
        if (mn_urdf_read(urdf, &m, &warn, &err) != MN_OK) return mn_cli_input_error(&err);
        mn_cli_print_warnings(&warn);
    } else {
        m = welman_chain();
    }
    mn_data* d = m ? mn_data_create(m, 0) : NULL;
    double* times = malloc(sizeof(double) * 2 * (size_t)repeat);
    int* jnt = m ? malloc(sizeof(int) * (size_t)(m->njoint + 1)) : NULL;
    static cell res[NROW][NTARGET][NTOL];
    int run[NROW];
    int rc = MN_EXIT_INPUT, base = -1, tip = -1, ndof = 0;
    if (!m || !d || !times || !jnt) {
        fprintf(stderr, "marionette bench ik: %s\n",
                urdf ? "out of memory" : "could not build the 7-DOF chain");
        goto done;
    }
    if (urdf) {
        base = mn_cli_find_joint(m, urdf, "--base", base_name);
        tip = base < 0 ? -1 : mn_cli_find_joint(m, urdf, "--tip", tip_name);
        if (base < 0 || tip < 0) goto done;
    } else {
        tip = mn_model_find_joint(m, "end");
    }
    ndof = chain_moving(m, base, tip, jnt, m->njoint);
    if (ndof == 0) {
        mn_error err;
        mn_error_set(&err, MN_ERR_ARG, urdf, 0, "--tip",
                     "'%s' is not below '%s' with a moving joint between", tip_name, base_name);
        mn_cli_input_error(&err);
        goto done;
    }
    /* the chain's length when stretched: the offsets from below the base to the tip */
    double reach = 0;
    for (int j = tip; j >= 0 && j != base; j = m->jnt_parent[j])
        reach += mn_vec3_norm(m->jnt_offset[j]);
    char chain[128];
    svg_label(urdf ? m->name : "welman7", chain, sizeof chain);
    mn_vec3 targets[NTARGET];
    for (int t = 0; t < NTARGET; t++) {
        set_pose(m, d, jnt, ndof, q_targets[t]);
        mn_fk(m, d);
        targets[t] = d->xf[tip].p;
        if (base >= 0) { /* in the base's frame, as the solve takes it */
            mn_xform inv = mn_xform_inverse(&d->xf[base]);
            targets[t] = mn_xform_apply(&inv, targets[t]);
        }
    }
    printf("bench=ik_compare chain=%s dof=%d reach=%.4g inside_dist=%.4f edge_dist=%.4f "
           "repeat=%d timeout_ms=%g jt=%s\n",
           chain, ndof, reach, mn_vec3_norm(targets[0]), mn_vec3_norm(targets[1]), repeat,
           timeout_ms, jt_rk ? "line-search,rk" : "line-search");

    for (int mth = 0; mth < NROW; mth++) {
        run[mth] =
            mth == ROW_JT_RK ? jt_rk && (only < 0 || only == MN_IK_JT) : only < 0 || only == mth;
        if (!run[mth]) continue;
        for (int t = 0; t < NTARGET; t++)
            for (int k = 0; k < NTOL; k++) {
                mn_ik_problem p = mn_ik_problem_default();
                p.base = base;
                p.tip = tip;
                p.target_pos = targets[t];
                mn_ik_options o = mn_ik_default();
                o.method = mth == ROW_JT_RK ? MN_IK_JT : (mn_ik_method)mth;
                o.jt_rk = mth == ROW_JT_RK;
                o.tol_pos = tols[k];
                o.max_iters = 1000000;
                o.timeout_ms = timeout_ms;
                o.timeout_cpu = 1; /* a solve preempted by other jobs is not cut short */
                o.respect_limits = urdf != NULL; /* Welman's chain has none */
                mn_ik_result r;
                cell* c = &res[mth][t][k];
                double* cpu = times + repeat;
                for (int rep = 0; rep < repeat; rep++) {
                    set_pose(m, d, jnt, ndof, q_initial);
                    double c0 = thread_cpu_us();
                    mn_ik_solve(m, d, &p, &o, &r);
                    cpu[rep] = thread_cpu_us() - c0;
                    times[rep] = r.time_us;
                }
                qsort(times, (size_t)repeat, sizeof *times, cmp_double);
                qsort(cpu, (size_t)repeat, sizeof *cpu, cmp_double);
                c->status = r.status;
                c->solved = r.status == MN_OK;
                c->iters = r.iterations;
                c->us = times[repeat / 2];
                c->cpu_us = cpu[repeat / 2];
                c->pos_err = r.pos_err;
                printf("method=%s target=%s tol=%.0e solved=%d status=%s iters=%d us=%.1f "
                       "cpu_us=%.1f pos_err=%.2e\n",
                       row_name(mth), target_names[t], tols[k], c->solved,
                       mn_status_name(c->status), c->iters, c->us, c->cpu_us, c->pos_err);
                fflush(stdout);
            }
    }

    /* the table: microseconds (or the status when not solved), one row per method */
    for (int t = 0; t < NTARGET; t++) {
        printf("# target %s (%.4f from the base, reach %.4g): median CPU microseconds to "
               "tolerance\n# %-9s",
               target_names[t], mn_vec3_norm(targets[t]), reach, "method");
        for (int k = 0; k < NTOL; k++)
            printf(" %12.0e", tols[k]);
        printf("\n");
        for (int mth = 0; mth < NROW; mth++) {
            if (!run[mth]) continue;
            printf("# %-9s", row_name(mth));
            for (int k = 0; k < NTOL; k++) {
                const cell* c = &res[mth][t][k];
                if (c->solved)
                    printf(" %12.1f", c->cpu_us);
                else
                    printf(" %12s", mn_status_name(c->status));
            }
            printf("\n");
        }
    }
    rc = write_svg(svg, res, run, chain, ndof);
    if (rc == MN_EXIT_OK) printf("# plot written to %s\n", svg);
done:
    free(jnt);
    free(times);
    mn_data_destroy(d);
    mn_model_destroy(m);
    return rc;
}
