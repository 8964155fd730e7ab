/* marionette bench fk: forward kinematics and Jacobian speed on one figure file. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "bvh_parse_bench.h"
#include "cli.h"

const char mn_bench_fk_summary[] =
    "FK and FK+Jacobian time of a figure or a chain; BVH parse speed";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench fk FILE [--base LINK --tip LINK] [--reps N]\n"
            "\n"
            "Times forward kinematics of the whole figure, or of the chain from --base to --tip\n"
            "(frames relative to the base), and FK plus the full 6 x N Jacobian (of the tip, or\n"
            "of the deepest joint of the figure). Prints one key=value line:\n"
            "  model, dof, joints, fk_ns, fkjac_ns (medians), and parse_mb_s for BVH files.\n");
}

/* Median nanoseconds per call over 31 batches of `reps` calls. */
#define TIME_IT(out, reps, body)                                                                   \
    do {                                                                                           \
        double samples_[31];                                                                       \
        for (int b_ = 0; b_ < 31; b_++) {                                                          \
            double t0_ = mn_bench_now_ns();                                                        \
            for (int r_ = 0; r_ < (reps); r_++) {                                                  \
                body;                                                                              \
            }                                                                                      \
            samples_[b_] = (mn_bench_now_ns() - t0_) / (reps);                                     \
        }                                                                                          \
        (out) = mn_bench_median(samples_, 31);                                                     \
    } while (0)

int mn_bench_fk(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    const char *file = NULL, *base_name = NULL, *tip_name = NULL;
    int reps = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--base") && i + 1 < argc)
            base_name = argv[++i];
        else if (!strcmp(argv[i], "--tip") && i + 1 < argc)
            tip_name = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (!mn_cli_parse_int(argv[++i], &reps) || reps < 1)
                return mn_cli_usage_error("bench fk", "--reps needs a positive integer");
        } else if (argv[i][0] == '-')
            return mn_cli_usage_error("bench fk", "unknown option '%s'", argv[i]);
        else if (!file)
            file = argv[i];
        else
            return mn_cli_usage_error("bench fk", "one FILE only");
    }
    if (!file) return mn_cli_usage_error("bench fk", "missing FILE");
    if (!base_name != !tip_name)
        return mn_cli_usage_error("bench fk", "--base and --tip go together");

    mn_error err;
    mn_model* m = NULL;
    mn_status s = mn_figure_read(file, &m, NULL, NULL, &err);
    if (s != MN_OK) return mn_cli_input_error(&err);
    mn_data* d = mn_data_create(m, 0);
    double fk_ns = 0, fkjac_ns = 0;
    int dof, joints;
    volatile double sink = 0;
    if (base_name) {
        int base = mn_cli_find_joint(m, file, "--base", base_name);
        int tip = base < 0 ? -1 : mn_cli_find_joint(m, file, "--tip", tip_name);
        if (base < 0 || tip < 0) {
            mn_data_destroy(d);
            mn_model_destroy(m);
            return MN_EXIT_INPUT;
        }
        mn_chain* c = mn_chain_create(m, base, tip, &err);
        if (!c) {
            mn_data_destroy(d);
            mn_model_destroy(m);
            return mn_cli_input_error(&err);
        }
        dof = c->ndof;
        joints = c->njoint;
        double qc[256], J[6 * 256];
        for (int i = 0; i < dof; i++)
            qc[i] = 0.1 * (i + 1);
        mn_xform T;
        int k = 0; /* the joint nudged each call (a wrapping counter: no division in the loop) */
        TIME_IT(fk_ns, reps, {
            qc[k] += 1e-9;
            if (++k == dof) k = 0;
            mn_chain_fk(m, c, qc, &T);
            sink += T.p.x;
        });
        TIME_IT(fkjac_ns, reps, {
            qc[k] += 1e-9;
            if (++k == dof) k = 0;
            mn_chain_fk_jacobian(m, c, qc, mn_v3(0, 0, 0), &T, J);
            sink += J[k];
        });
        mn_chain_destroy(c);
    } else {
        dof = m->nv;
        joints = m->njoint;
        int tip = 0;
        for (int j = 0; j < m->njoint; j++)
            if (m->jnt_depth[j] > m->jnt_depth[tip]) tip = j;
        double* J = malloc(sizeof(double) * 6 * (size_t)(dof ? dof : 1));
        int qi = 0;
        TIME_IT(fk_ns, reps, {
            if (m->nq) d->q[qi] += 1e-12;
            if (++qi >= m->nq) qi = 0;
            mn_fk(m, d);
            sink += d->xf[m->njoint - 1].p.x;
        });
        TIME_IT(fkjac_ns, reps, {
            if (m->nq) d->q[qi] += 1e-12;
            if (++qi >= m->nq) qi = 0;
            mn_fk(m, d);
            mn_jacobian(m, d, tip, mn_v3(0, 0, 0), J);
            sink += J[0];
        });
        free(J);
    }
    printf("model=%s dof=%d joints=%d fk_ns=%.1f fkjac_ns=%.1f", m->name, dof, joints, fk_ns,
           fkjac_ns);
    if (mn_file_kind_of(file) == MN_FILE_BVH)
        printf(" parse_mb_s=%.1f", mn_bench_bvh_parse_mb_s(file));
    printf("\n");
    (void)sink;
    mn_data_destroy(d);
    mn_model_destroy(m);
    return MN_EXIT_OK;
}
