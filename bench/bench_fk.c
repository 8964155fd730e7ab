/* marionette bench fk: forward kinematics and Jacobian speed on one figure file. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "bvh_parse_bench.h"
#include "fk_reference.h"
#include "cli.h"
#include "options.h"

const char mn_bench_fk_summary[] =
    "FK and FK+Jacobian time of a figure or a chain; BVH parse speed";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench fk FILE [--base LINK --tip LINK] [--reps N]\n"
            "\n"
            "Times forward kinematics of the whole figure, or of the chain from --base to --tip\n"
            "(frames relative to the base), and FK plus the full 6 x N Jacobian (of the tip, or\n"
            "of the deepest joint of the figure). Prints one key=value line:\n"
            "  model, dof, joints, fk_ns, fkjac_ns (medians), and parse_mb_s for BVH files.\n"
            "For a chain, in 7 alternating rounds on this thread's CPU time: fk_ns_min and\n"
            "fk_ns_max (the range over the rounds), flops and sincos_flops (the library's chain\n"
            "FK counted from its code), and on the Panda arm (panda_link0 to panda_link8) the\n"
            "hand-unrolled reference of bench/fk_reference.c: ref_ns (with the library's\n"
            "mn_sincos), ref_libm_ns (with libm's sin and cos) and fk_over_ref.\n");
}

/* Median nanoseconds per call over 15 batches of `reps` calls, on this thread's CPU time
 * (a loaded machine preempts; CPU time does not charge that to the code timed). */
#define TIME_IT(out, reps, body)                                                                   \
    do {                                                                                           \
        double samples_[15];                                                                       \
        for (int b_ = 0; b_ < 15; b_++) {                                                          \
            double t0_ = mn_bench_cpu_ns();                                                        \
            for (int r_ = 0; r_ < (reps); r_++) {                                                  \
                body;                                                                              \
            }                                                                                      \
            samples_[b_] = (mn_bench_cpu_ns() - t0_) / (reps);                                     \
        }                                                                                          \
        (out) = mn_bench_median(samples_, 15);                                                     \
    } while (0)

/* Rounds of the chain figures, alternating between the library and the reference. */
#define MN_FK_ROUNDS 7

/* Floating-point operations (additions, subtractions and multiplications) of the library's
 * chain FK path (mn_chain_fk, src/model/chain.c) for chain c at the angles qc, counted
 * from its code joint by joint (docs/performance.md):
 *   sine and cosine  32 (the two fdlibm kernels sharing x^2) for |q| <= pi/4; 41 with the
 *                    reduction by pi/2 (7) and the quadrant's signs (2) otherwise
 *   hinge about a coordinate axis   1 (the sine's sign) + 18 (two columns turned: 3 rows
 *                    of 4 multiplications and 2 additions); a general axis 80 (Rodrigues'
 *                    matrix 35, the 3x3 product 45)
 *   slide            21; offset 6 along one axis, 18 otherwise, 0 when zero
 *   orientation      0 when a signed permutation (quarter turns), else a 3x3 product 45
 * *sincos gets the part spent in sines and cosines. */
static int mn_bench_chain_fk_flops(const mn_model* m, const mn_chain* c, const double* qc,
                                   int* sincos) {
    int f = 0, sc = 0, v = 0;
    for (int i = 0; i < c->njoint; i++) {
        int j = c->jnt[i], t = m->jnt_type[j];
        mn_vec3 o = m->jnt_offset[j], a = m->jnt_axis[j];
        int nz = (o.x != 0) + (o.y != 0) + (o.z != 0);
        f += nz == 0 ? 0 : nz == 1 ? 6 : 18;
        if (!m->jnt_orient_ident[j] && m->jnt_orient_perm[3 * j] == 0) f += 45;
        if (t == MN_JOINT_HINGE) {
            int coord = (a.x != 0) + (a.y != 0) + (a.z != 0) == 1;
            int s = fabs(qc[v]) <= 0.78539816339744830962 ? 32 : 41;
            sc += s;
            f += s + (coord ? 19 : 80);
            v++;
        } else if (t == MN_JOINT_SLIDE) {
            f += 21;
            v++;
        }
    }
    *sincos = sc;
    return f;
}

/* Does the hand-unrolled Panda FK give the library's tip frame of chain c (to 1e-12, on
 * random angles)? */
static int panda_reference_matches(const mn_model* m, const mn_chain* c) {
    uint64_t st = 12345;
    for (int t = 0; t < 100; t++) {
        double q[7], R[9], P[3];
        for (int i = 0; i < 7; i++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            q[i] = ((double)(st >> 11) / 9007199254740992.0 - 0.5) * 6.0;
        }
        mn_xform X;
        mn_chain_fk(m, c, q, &X);
        mn_bench_panda_fk_mn(q, R, P);
        for (int i = 0; i < 9; i++)
            if (!(fabs(R[i] - X.R.m[i]) <= 1e-12)) return 0;
        if (!(fabs(P[0] - X.p.x) <= 1e-12 && fabs(P[1] - X.p.y) <= 1e-12 &&
              fabs(P[2] - X.p.z) <= 1e-12))
            return 0;
    }
    return 1;
}

typedef struct fk_args {
    const char *file, *base, *tip;
    int reps;
} fk_args;

#define AT(f, t) MN_CLI_AT(fk_args, f, t)
static const mn_cli_opt fk_opts[] = {
    {"--base", MN_CLI_STRING, AT(base, const char*), .bad = NULL},
    {"--tip", MN_CLI_STRING, AT(tip, const char*), .bad = NULL},
    {"--reps", MN_CLI_INT, AT(reps, int), 1, INT_MAX, .bad = "--reps needs a positive integer"},
};
#undef AT
const mn_cli_table mn_bench_fk_options = {
    .cmd = "bench fk",
    MN_CLI_OPTS(fk_opts),
    .unknown = "unknown option '%s'",
    .missing = "unknown option '%s'",
    .max_pos = 1,
    .too_many = "one FILE only",
    .dash_option = 1,
};

int mn_bench_fk(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    fk_args args = {NULL, NULL, NULL, 20000};
    int bad = mn_cli_parse(&mn_bench_fk_options, argc, argv, &args, &args.file, NULL);
    if (bad) return bad;
    const char *file = args.file, *base_name = args.base, *tip_name = args.tip;
    int reps = args.reps;
    if (!file) return mn_cli_usage_error("bench fk", "missing FILE");
    if (!base_name != !tip_name)
        return mn_cli_usage_error("bench fk", "--base and --tip go together");

    mn_error err;
    mn_model* m = NULL;
    mn_status s = mn_figure_read(file, &m, NULL, NULL, &err);
    if (s != MN_OK) return mn_cli_input_error(&err);
    mn_data* d = mn_data_create(m, 0);
    double fk_ns = 0, fkjac_ns = 0;
    char extra[256] = "";
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
        /* The hand-unrolled reference when the chain is the Panda's (it reproduces the
         * library's tip frame to 1e-12 on random angles). */
        int panda = dof == 7 && panda_reference_matches(m, c);
        double lib[MN_FK_ROUNDS], fj[MN_FK_ROUNDS], ref[MN_FK_ROUNDS], libm[MN_FK_ROUNDS];
        for (int round = 0; round < MN_FK_ROUNDS; round++) { /* alternating, CPU time */
            TIME_IT(lib[round], reps, {
                qc[k] += 1e-9;
                if (++k == dof) k = 0;
                mn_chain_fk(m, c, qc, &T);
                sink += T.p.x;
            });
            TIME_IT(fj[round], reps, {
                qc[k] += 1e-9;
                if (++k == dof) k = 0;
                mn_chain_fk_jacobian(m, c, qc, mn_v3(0, 0, 0), &T, J);
                sink += J[k];
            });
            if (!panda) continue;
            double R[9], P[3];
            TIME_IT(ref[round], reps, {
                qc[k] += 1e-9;
                if (++k == dof) k = 0;
                mn_bench_panda_fk_mn(qc, R, P);
                sink += P[0];
            });
            TIME_IT(libm[round], reps, {
                qc[k] += 1e-9;
                if (++k == dof) k = 0;
                mn_bench_panda_fk_libm(qc, R, P);
                sink += P[0];
            });
        }
        fk_ns = mn_bench_median(lib, MN_FK_ROUNDS);
        fkjac_ns = mn_bench_median(fj, MN_FK_ROUNDS);
        int sc_flops, flops = mn_bench_chain_fk_flops(m, c, qc, &sc_flops);
        snprintf(extra, sizeof extra, " fk_ns_min=%.1f fk_ns_max=%.1f flops=%d sincos_flops=%d",
                 lib[0], lib[MN_FK_ROUNDS - 1], flops, sc_flops);
        if (panda) {
            double rm = mn_bench_median(ref, MN_FK_ROUNDS),
                   lm = mn_bench_median(libm, MN_FK_ROUNDS);
            size_t len = strlen(extra);
            snprintf(
                extra + len, sizeof extra - len,
                " ref_ns=%.1f ref_ns_min=%.1f ref_ns_max=%.1f ref_libm_ns=%.1f fk_over_ref=%.2f",
                rm, ref[0], ref[MN_FK_ROUNDS - 1], lm, fk_ns / rm);
        }
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
    printf("model=%s dof=%d joints=%d fk_ns=%.1f fkjac_ns=%.1f%s", m->name, dof, joints, fk_ns,
           fkjac_ns, extra);
    if (mn_file_kind_of(file) == MN_FILE_BVH)
        printf(" parse_mb_s=%.1f", mn_bench_bvh_parse_mb_s(file));
    printf("\n");
    (void)sink;
    mn_data_destroy(d);
    mn_model_destroy(m);
    return MN_EXIT_OK;
}
