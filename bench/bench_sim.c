/* marionette bench sim: the soft body coupled both ways to its rig (Wu & Umetani 2023,
 * src/skin/coupling.c), per frame: the body's own step (prediction, edges, tetrahedra,
 * velocities), the fit of the free controllers in every substep and the coupling's
 * projections, with the fit's error and the complementary constraint's residual.
 *
 * Cases:
 *   scenes     the shipped scenes of docs/examples/sim, as `marionette sim` runs them;
 *   reference  the size of the paper's tet drag (1,926 vertices, 34,944 tets, 5 substeps):
 *              a box lattice of 1,872 nodes (8,712 tets) and one of 34,944 tets (6,902
 *              nodes): the reference's two figures are not a lattice's ratio, so both;
 *   scaling    bars of 1,000 to 100,000 nodes, the same per frame, and the exponents;
 *   free       every controller free on a body moved only by its controllers: the fit's
 *              error relative to the size.
 * The bodies are lattice bars (mn_lattice_create of a box) with a chain of 8 bones along x,
 * weights blending the two nearest bone centres, the root bone driven (swung about z by
 * 0.3 sin(0.1 t) rad at frame t), density 100, edge compliance 1e-6, dt 1/60 s. Times are
 * thread CPU time in microseconds, the median over frames 21 to 120 (the first 20 let the
 * fit's warm starts settle); never asserted. */
#include <marionette/simscene.h>
#include <marionette/skin.h>

#include <limits.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"
#include "plot.h"

const char mn_bench_sim_summary[] =
    "soft body coupled to its rig: step, fit and coupling per frame, residual, scaling";

static void usage(FILE* f) {
    fprintf(f, "usage: marionette bench sim [--case scenes|reference|scaling|free] [--frames N]\n"
               "                            [--svg FILE] [--scenes DIR]\n"
               "\n"
               "Without --case, every case. The scenes case runs the scenes of --scenes DIR\n"
               "(default docs/examples/sim) as marionette sim does.\n"
               "\n"
               "One key=value line per body: nodes, tets, edges, controllers, substeps, then per\n"
               "frame (median over frames 21..N, default N = 120, thread CPU time) us_frame (the\n"
               "whole step), us_sim (the body's own constraints), us_fit (the fits of the\n"
               "substeps), us_couple (the coupling's projections, with the velocities and the\n"
               "next substep's prediction in their pass); fit_iters (per substep),\n"
               "fit_rms_rel (the last fit's RMS error over the bounding-box diagonal),\n"
               "residual_max (the complementary constraint after each step, relative to the\n"
               "diagonal times the total mass; docs/softbody.md). The scaling case ends with the\n"
               "fitted exponents; --svg FILE plots its times, log-log.\n");
}

typedef struct body {
    mn_lattice* L;
    mn_softbody* sb;
    mn_rig* rig;
    double len;
} body;

static void free_body(body* b) {
    mn_rig_destroy(b->rig);
    mn_softbody_destroy(b->sb);
    mn_lattice_destroy(b->L);
}

/* A box [0, lx] x [-ly/2, ly/2] x [-lz/2, lz/2] as a lattice of res cubes along x, with a
 * chain of nb bones along x. */
static int make_body(body* b, double lx, double ly, double lz, int res, int nb, int substeps) {
    memset(b, 0, sizeof *b);
    b->len = lx;
    double pos[24];
    static const int T[36] = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                              2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};
    for (int i = 0; i < 8; i++) {
        pos[3 * i] = (i & 1) ? lx : 0;
        pos[3 * i + 1] = (i & 2) ? ly / 2 : -ly / 2;
        pos[3 * i + 2] = (i & 4) ? lz / 2 : -lz / 2;
    }
    mn_error err;
    b->L = mn_lattice_create(8, pos, 12, T, res, &err);
    if (!b->L) return fprintf(stderr, "bench sim: %s\n", err.message), -1;
    int n = b->L->nnodes;
    double* mass = malloc((size_t)n * sizeof(double));
    int* idx = malloc((size_t)n * 2 * sizeof(int));
    double* w = malloc((size_t)n * 2 * sizeof(double));
    int rc = -1;
    if (!mass || !idx || !w) goto done;
    mn_softbody_element_masses(n, b->L->nodes, 4, b->L->ntets, b->L->tets, 100, mass, NULL);
    mn_softbody_options o = mn_softbody_default();
    o.edge_compliance = 1e-6;
    o.substeps = substeps;
    b->sb = mn_softbody_create(n, b->L->nodes, 0, NULL, mass, &o, &err);
    if (!b->sb || mn_softbody_add_elements(b->sb, 4, b->L->ntets, b->L->tets, &err) != MN_OK)
        goto done;
    b->rig = mn_rig_create(3, n, b->L->nodes, mass, &err);
    if (!b->rig) goto done;
    double bl = lx / nb;
    for (int j = 0; j < nb; j++) {
        char name[16];
        snprintf(name, sizeof name, "bone%d", j);
        mn_ctrl_def d = mn_ctrl_default();
        d.name = name;
        d.kind = MN_CTRL_BONE;
        d.pivot = mn_v3(j * bl, 0, 0);
        d.tail = mn_v3((j + 1) * bl, 0, 0);
        d.parent = j - 1;
        d.attached = j > 0;
        if (mn_rig_add_ctrl(b->rig, &d, &err) < 0) goto done;
    }
    for (int i = 0; i < n; i++) {
        double u = b->L->nodes[3 * i] / bl - 0.5;
        int j0 = (int)floor(u);
        j0 = j0 < 0 ? 0 : j0 > nb - 2 ? nb - 2 : j0;
        double s = fmin(1, fmax(0, u - j0));
        idx[2 * i] = j0, idx[2 * i + 1] = j0 + 1;
        w[2 * i] = 1 - s, w[2 * i + 1] = s;
    }
    if (mn_rig_set_weights(b->rig, 2, idx, w, NULL, &err) != MN_OK) goto done;
    rc = 0;
done:
    if (rc) fprintf(stderr, "bench sim: %s\n", err.message);
    free(mass);
    free(idx);
    free(w);
    return rc;
}

typedef struct figures {
    double frame, sim, fit, couple, fit_iters, fit_rms_rel, residual_max;
} figures;

static double median(double* v, int n) {
    return mn_bench_median(v, (size_t)n);
}

/* nframes frames of the driven swing; medians over frames 21.. */
static int run(body* b, int nframes, const uint8_t* driven, figures* out) {
    mn_error err;
    mn_coupled* c = mn_coupled_create(b->sb, b->rig, driven, NULL, &err);
    if (!c) return fprintf(stderr, "bench sim: %s\n", err.message), -1;
    int nm = nframes - 20;
    double* v = malloc((size_t)nm * 5 * sizeof(double));
    if (!v) {
        mn_coupled_destroy(c);
        return -1;
    }
    double diag = mn_rig_bbox_diagonal(b->rig);
    memset(out, 0, sizeof *out);
    int k = 0;
    for (int t = 1; t <= nframes; t++) {
        for (int j = 0; j < b->rig->nctrl; j++) {
            if (!driven[j]) continue;
            mn_xform X = mn_coupled_pose(c)[j];
            X.R = mn_mat3_axis_angle(mn_v3(0, 0, 1), 0.3 * sin(0.1 * t));
            mn_coupled_drive(c, j, &X);
        }
        mn_coupled_result r;
        double t0 = mn_bench_cpu_ns();
        mn_status st = mn_coupled_step(c, 1.0 / 60, &r);
        double t1 = mn_bench_cpu_ns();
        if (st != MN_OK) {
            fprintf(stderr, "bench sim: frame %d: %s\n", t, r.message);
            break;
        }
        out->residual_max = fmax(out->residual_max, r.residual);
        if (t > 20) {
            v[k] = (t1 - t0) / 1e3;
            v[nm + k] = r.us_sim;
            v[2 * nm + k] = r.us_fit;
            v[3 * nm + k] = r.us_couple;
            v[4 * nm + k] = (double)r.fit_iterations / r.iterations;
            k++;
        }
        out->fit_rms_rel = r.fit_rms / diag;
    }
    if (k > 0) {
        out->frame = median(v, k);
        out->sim = median(v + nm, k);
        out->fit = median(v + 2 * nm, k);
        out->couple = median(v + 3 * nm, k);
        out->fit_iters = median(v + 4 * nm, k);
    }
    free(v);
    mn_coupled_destroy(c);
    return k == nm ? 0 : -1;
}

static int driven_count(const mn_sim* s) {
    int n = 0;
    for (int j = 0; j < s->rig->nctrl; j++)
        n += s->driven[j];
    return n;
}

static void print_line(const char* cas, const body* b, const figures* f) {
    printf("bench=sim case=%s nodes=%d tets=%d edges=%d controllers=%d substeps=%d "
           "us_frame=%.1f us_sim=%.1f us_fit=%.1f us_couple=%.1f fit_iters=%.2f "
           "fit_rms_rel=%.3g residual_max=%.3g\n",
           cas, b->sb->nverts, b->L->ntets, b->sb->nedges, b->rig->nctrl, b->sb->opt.substeps,
           f->frame, f->sim, f->fit, f->couple, f->fit_iters, f->fit_rms_rel, f->residual_max);
}

static void bench_reference(int nframes) {
    static const struct {
        double lx, ly, lz;
        int res;
    } box[2] = {{1.2, 1.1, 1.1, 12}, {2.8, 1.6, 1.3, 28}};
    for (int k = 0; k < 2; k++) {
        body b;
        figures f;
        uint8_t driven[8] = {1, 0, 0, 0, 0, 0, 0, 0};
        if (make_body(&b, box[k].lx, box[k].ly, box[k].lz, box[k].res, 8, 5) == 0 &&
            run(&b, nframes, driven, &f) == 0) {
            print_line("reference", &b, &f);
            printf("bench=sim case=reference-goal nodes=%d us_frame=%.1f goal_us_frame=1500\n",
                   b.sb->nverts, f.frame);
        }
        free_body(&b);
    }
}

/* A body moved only by its controllers: every bone driven along one rigid motion of the
 * chain (turned about the root's pivot and carried), no gravity; then a fitter with every
 * controller free on the body alone: how far the body is from the rig's span. */
static void bench_free(int nframes) {
    body b;
    if (make_body(&b, 2.0, 0.4, 0.4, 20, 8, 5) != 0) {
        free_body(&b);
        return;
    }
    b.sb->opt.gravity = mn_v3(0, 0, 0);
    uint8_t all[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    mn_error err;
    mn_coupled* c = mn_coupled_create(b.sb, b.rig, all, NULL, &err);
    mn_fitter* f = mn_fitter_create(b.rig, NULL, &err);
    mn_xform pose[8];
    mn_rig_rest_pose(b.rig, pose);

    double worst = 0, diag = mn_rig_bbox_diagonal(b.rig), res = 0;
    for (int t = 1; t <= nframes; t++) {
        /* the whole chain turned and carried as one (a motion in the rig's span) */
        double a = 0.3 * sin(0.05 * t);
        mn_mat3 R = mn_mat3_axis_angle(mn_v3(0, 0, 1), a);
        mn_vec3 move = mn_v3(0.2 * sin(0.03 * t), 0.1 * (1 - cos(0.04 * t)), 0);
        for (int j = 0; j < 8; j++) {
            mn_xform X;
            X.R = R;
            X.p = mn_vec3_add(mn_mat3_mulv(&R, b.rig->ctrl_pivot[j]), move);
            mn_coupled_drive(c, j, &X);
        }
        mn_coupled_result r;
        if (mn_coupled_step(c, 1.0 / 60, &r) != MN_OK) break;
        res = fmax(res, r.residual);
        mn_fit_result fr;
        mn_fit(f, pose, b.sb->x, NULL, &fr);
        if (t > 20) worst = fmax(worst, fr.rms / diag);
    }
    printf("bench=sim case=free nodes=%d controllers=8 fit_rms_rel_max=%.3g residual_max=%.3g "
           "goal_fit_rms_rel=1e-5\n",
           b.sb->nverts, worst, res);
    mn_fitter_destroy(f);
    mn_coupled_destroy(c);
    free_body(&b);
}

static void bench_scenes(const char* dir, int nframes) {
    static const char* const names[] = {"tube",      "jelly",          "gingerbread",
                                        "cesiumman", "cesiumman_take", "fox"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.json", dir, names[k]);
        mn_sim_read_options o = mn_sim_read_default();
        o.trusted = 1;
        mn_sim* s = NULL;
        mn_error err;
        if (mn_sim_read(path, &o, &s, NULL, &err) != MN_OK) {
            fprintf(stderr, "bench sim: %s\n", err.message);
            continue;
        }
        int n = nframes < s->frames ? nframes : s->frames, nm = n - 20, k2 = 0;
        double* v = malloc((size_t)(nm > 0 ? nm : 1) * 4 * sizeof(double));
        double res = 0, rms = 0, diag = mn_rig_bbox_diagonal(s->rig);
        for (int f = 1; v && f <= n; f++) {
            mn_coupled_result r;
            double t0 = mn_bench_cpu_ns();
            if (mn_sim_step(s, f, &r) != MN_OK) break;
            double t1 = mn_bench_cpu_ns();
            res = fmax(res, r.residual);
            rms = fmax(rms, r.fit_rms / diag);
            if (f > 20) {
                v[k2] = (t1 - t0) / 1e3;
                v[nm + k2] = r.us_sim;
                v[2 * nm + k2] = r.us_fit;
                v[3 * nm + k2] = r.us_couple;
                k2++;
            }
        }
        if (k2 == nm && nm > 0)
            printf(
                "bench=sim case=scene scene=%s nodes=%d elements=%d mesh_verts=%d controllers=%d "
                "driven=%d us_frame=%.1f us_sim=%.1f us_fit=%.1f us_couple=%.1f "
                "fit_rms_rel_max=%.3g residual_max=%.3g\n",
                names[k], s->body->nverts, s->lattice ? s->lattice->ntets : s->body->nelem,
                s->mesh.nverts, s->rig->nctrl, driven_count(s), median(v, k2), median(v + nm, k2),
                median(v + 2 * nm, k2), median(v + 3 * nm, k2), rms, res);
        free(v);
        mn_sim_destroy(s);
    }
}

static void bench_scaling(int nframes, const char* svg) {
    static const int res[] = {10, 15, 22, 33, 50, 75, 112};
    enum { NS = sizeof res / sizeof res[0] };
    double nodes[NS], frame[NS], sim[NS], fit[NS], couple[NS];
    int done = 0;
    for (int k = 0; k < NS; k++) {
        body b;
        figures f;
        uint8_t driven[8] = {1, 0, 0, 0, 0, 0, 0, 0};
        /* a bar 4 : 1 : 1, res cubes along it */
        if (make_body(&b, 4.0, 1.0, 1.0, res[k], 8, 5) == 0 && run(&b, nframes, driven, &f) == 0) {
            print_line("scaling", &b, &f);
            nodes[done] = b.sb->nverts;
            frame[done] = f.frame;
            sim[done] = f.sim;
            fit[done] = f.fit;
            couple[done] = f.couple;
            done++;
        }
        free_body(&b);
    }
    if (done >= 2)
        printf("bench=sim case=scaling-exponent sizes=%d exponent_frame=%.3f exponent_sim=%.3f "
               "exponent_fit=%.3f exponent_couple=%.3f\n",
               done, mn_bench_fit_exponent(nodes, frame, done),
               mn_bench_fit_exponent(nodes, sim, done), mn_bench_fit_exponent(nodes, fit, done),
               mn_bench_fit_exponent(nodes, couple, done));
    if (svg && done >= 2) {
        mn_plot_series s[4] = {{"whole step", done, nodes, frame},
                               {"body's constraints", done, nodes, sim},
                               {"fit (every substep)", done, nodes, fit},
                               {"coupling", done, nodes, couple}};
        if (mn_bench_loglog_svg(svg, "Coupled soft body: time per frame (5 substeps)",
                                "lattice nodes", "microseconds per frame", s, 4) != 0)
            fprintf(stderr, "marionette bench sim: %s: cannot write the plot\n", svg);
        else
            printf("bench=sim case=scaling-plot svg=%s\n", svg);
    }
}

typedef struct sim_args {
    const char *which, *svg, *scenes;
    int nframes;
} sim_args;

#define AT(f, t) MN_CLI_AT(sim_args, f, t)
static const mn_cli_opt sim_opts[] = {
    {"--case", MN_CLI_STRING, AT(which, const char*), .bad = NULL},
    {"--svg", MN_CLI_STRING, AT(svg, const char*), .bad = NULL},
    {"--scenes", MN_CLI_STRING, AT(scenes, const char*), .bad = NULL},
    {"--frames", MN_CLI_INT, AT(nframes, int), 21, 100000,
     .bad = "--frames needs an integer in 21..100000"},
};
#undef AT
const mn_cli_table mn_bench_sim_options = {
    .cmd = "bench sim",
    MN_CLI_OPTS(sim_opts),
    .unknown = "unknown argument '%s'",
    .missing = "unknown argument '%s'",
    .dash_option = 1,
};

int mn_bench_sim(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    sim_args args = {NULL, NULL, "docs/examples/sim", 120};
    int bad = mn_cli_parse(&mn_bench_sim_options, argc, argv, &args, NULL, NULL);
    if (bad) return bad;
    const char *which = args.which, *svg = args.svg, *scenes = args.scenes;
    int nframes = args.nframes;
    if (which && strcmp(which, "scenes") && strcmp(which, "reference") &&
        strcmp(which, "scaling") && strcmp(which, "free"))
        return mn_cli_usage_error("bench sim", "unknown case '%s'", which);
    if (!which || !strcmp(which, "scenes")) bench_scenes(scenes, nframes);
    if (!which || !strcmp(which, "reference")) bench_reference(nframes);
    if (!which || !strcmp(which, "free")) bench_free(nframes);
    if (!which || !strcmp(which, "scaling")) bench_scaling(nframes, svg);
    return MN_EXIT_OK;
}
