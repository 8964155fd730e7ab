/* marionette bench linalg: speed of the small dense linear algebra on the sizes the solvers
 * use (a 6 x 7 Jacobian for a robot arm, a 60 x 60 system for a constrained figure). */
#include <marionette/linalg.h>

#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "options.h"

const char mn_bench_linalg_summary[] =
    "SVD 6x7, LDLT/Cholesky/LU 60x60 and DLS/TSVD 6x7 times (ns)";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench linalg [--reps N] [--cpu]\n"
            "\n"
            "Times the dense kernels on seeded random inputs and prints one key=value per line,\n"
            "each the median over 31 batches of nanoseconds per call:\n"
            "  svd_6x7_ns       thin SVD with U and V of a 6 x 7 matrix (IK Jacobian size)\n"
            "  svd_6x7_s_ns     the same, singular values only\n"
            "  tsvd_6x7_ns      truncated-SVD least squares, 6 x 7\n"
            "  dls_6x7_ns       damped least squares, 6 x 7\n"
            "  ldlt_60_ns       Bunch-Kaufman LDL^T of a 60 x 60 KKT matrix (40 + 20)\n"
            "  cholesky_60_ns   Cholesky of a 60 x 60 SPD matrix\n"
            "  lu_60_ns         LU with partial pivoting of a 60 x 60 matrix\n"
            "  *_solve_60_ns    the matching solve with the factors\n"
            "Factorisations overwrite their input, so every call starts from a fresh copy; the\n"
            "time of that copy alone is measured the same way and subtracted.\n"
            "--reps N scales the calls per batch (default 1, i.e. 20000 SVDs per batch).\n"
            "--cpu times with this thread's CPU clock instead of CLOCK_MONOTONIC (steadier\n"
            "when other jobs share the machine); the keys are the same.\n");
}

/* CLOCK_MONOTONIC (wall time) by default; --cpu switches to this thread's CPU time, which
 * is steadier on a machine shared with other jobs. */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(bench_clock, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

#define BATCHES 31

/* Median nanoseconds per iteration over BATCHES batches of `reps` iterations. */
#define TIME_MEDIAN(out, reps, body)                                                               \
    do {                                                                                           \
        double samples_[BATCHES];                                                                  \
        for (int b_ = 0; b_ < BATCHES; b_++) {                                                     \
            double t0_ = now_ns();                                                                 \
            for (long r_ = 0; r_ < (reps); r_++) {                                                 \
                body;                                                                              \
            }                                                                                      \
            samples_[b_] = (now_ns() - t0_) / (double)(reps);                                      \
        }                                                                                          \
        qsort(samples_, BATCHES, sizeof(double), cmp_double);                                      \
        (out) = samples_[BATCHES / 2];                                                             \
    } while (0)

/* splitmix64 -> Gaussian, seeded: the inputs are the same on every run. */
static uint64_t rng;
static double gauss(void) {
    double u[2];
    for (int i = 0; i < 2; i++) {
        uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        u[i] = ((double)(z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

#define POOL 64 /* distinct 6 x 7 inputs, cycled so branch history does not repeat */
#define N60 60

static double pool[POOL][42];
static double spd[N60 * N60], kkt[N60 * N60], gen[N60 * N60], fac[N60 * N60], rhs[N60], sol[N60];
static double work[4096];
static int piv[N60];

static void build_inputs(void) {
    rng = 20261122;
    /* 6 x 7 rows scaled like a Jacobian: 3 position rows (lengths ~0.3 m), 3 rotation rows. */
    for (int p = 0; p < POOL; p++)
        for (int i = 0; i < 42; i++)
            pool[p][i] = (i < 21 ? 0.3 : 1.0) * gauss();
    double B[N60 * N60];
    for (int i = 0; i < N60 * N60; i++)
        B[i] = gauss();
    /* SPD: B^T B + n I. */
    mn_matmul_tn(B, B, N60, N60, N60, spd);
    for (int i = 0; i < N60; i++)
        spd[i * N60 + i] += N60;
    /* KKT [H G^T; G 0] with H the leading 40 x 40 of spd, G 20 x 40 Gaussian. */
    const int nh = 40;
    memset(kkt, 0, sizeof kkt);
    for (int i = 0; i < nh; i++)
        for (int j = 0; j < nh; j++)
            kkt[i * N60 + j] = spd[i * N60 + j];
    for (int r = nh; r < N60; r++)
        for (int j = 0; j < nh; j++)
            kkt[r * N60 + j] = kkt[j * N60 + r] = gauss();
    for (int i = 0; i < N60 * N60; i++)
        gen[i] = gauss();
    for (int i = 0; i < N60; i++)
        rhs[i] = gauss();
}

typedef struct linalg_args {
    int scale, cpu;
} linalg_args;

static const mn_cli_opt linalg_opts[] = {
    {"--reps", MN_CLI_INT, MN_CLI_AT(linalg_args, scale, int), 1, INT_MAX,
     .bad = "--reps needs a positive integer"},
    {"--cpu", MN_CLI_FLAG, MN_CLI_AT(linalg_args, cpu, int), .lo = 1},
};
const mn_cli_table mn_bench_linalg_options = {
    .cmd = "bench linalg",
    MN_CLI_OPTS(linalg_opts),
    .unknown = "unknown argument '%s'",
    .missing = "unknown argument '%s'",
    .dash_option = 1,
};

int mn_bench_linalg(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    linalg_args args = {1, 0};
    int bad = mn_cli_parse(&mn_bench_linalg_options, argc, argv, &args, NULL, NULL);
    if (bad) return bad;
    int scale = args.scale;
    if (args.cpu) bench_clock = CLOCK_THREAD_CPUTIME_ID;
    build_inputs();
    if (mn_svd_work_size(6, 7) > sizeof work / sizeof work[0] ||
        mn_tsvd_work_size(6, 7) > sizeof work / sizeof work[0]) {
        fprintf(stderr, "marionette bench linalg: work array too small\n");
        return MN_EXIT_INPUT;
    }
    /* Check once that every input factors, so the times are of successful calls. */
    memcpy(fac, kkt, sizeof fac);
    int ok = mn_ldlt_factor(fac, N60, piv) == MN_OK;
    memcpy(fac, spd, sizeof fac);
    ok = ok && mn_cholesky_factor(fac, N60) == MN_OK;
    memcpy(fac, gen, sizeof fac);
    ok = ok && mn_lu_factor(fac, N60, piv) == MN_OK;
    if (!ok) {
        fprintf(stderr, "marionette bench linalg: a benchmark input did not factor\n");
        return MN_EXIT_INPUT;
    }

    const long small = 20000L * scale, big = 200L * scale;
    double A[42], s[6], U[36], V[42], x[7];
    volatile double sink = 0;
    double copy42, svd, svd_s, tsvd, dls;
    unsigned k = 0;
    /* Warm up (clock frequency, caches, branch predictors) on the first kernel. */
    for (long r = 0; r < 4 * small; r++) {
        memcpy(A, pool[k++ % POOL], sizeof A);
        mn_svd(A, 6, 7, s, U, V, work);
        sink += s[5];
    }
    TIME_MEDIAN(copy42, small, {
        memcpy(A, pool[k++ % POOL], sizeof A);
        sink += A[k % 42];
    });
    TIME_MEDIAN(svd, small, {
        memcpy(A, pool[k++ % POOL], sizeof A);
        mn_svd(A, 6, 7, s, U, V, work);
        sink += s[5];
    });
    TIME_MEDIAN(svd_s, small, {
        memcpy(A, pool[k++ % POOL], sizeof A);
        mn_svd(A, 6, 7, s, NULL, NULL, work);
        sink += s[5];
    });
    TIME_MEDIAN(tsvd, small, {
        memcpy(A, pool[k++ % POOL], sizeof A);
        mn_tsvd_solve(A, 6, 7, rhs, 1e-6, x, NULL, work);
        sink += x[6];
    });
    TIME_MEDIAN(dls, small, {
        mn_dls_solve(pool[k++ % POOL], 6, 7, rhs, 0.05, x, work);
        sink += x[6];
    });

    double copy60, ldlt, chol, lu, ldlt_s, chol_s, lu_s;
    TIME_MEDIAN(copy60, big, {
        memcpy(fac, kkt, sizeof fac);
        sink += fac[k++ % (N60 * N60)];
    });
    TIME_MEDIAN(ldlt, big, {
        memcpy(fac, kkt, sizeof fac);
        mn_ldlt_factor(fac, N60, piv);
        sink += fac[N60 * N60 - 1];
    });
    TIME_MEDIAN(ldlt_s, big, {
        memcpy(sol, rhs, sizeof sol);
        mn_ldlt_solve(fac, N60, piv, sol);
        sink += sol[0];
    });
    TIME_MEDIAN(chol, big, {
        memcpy(fac, spd, sizeof fac);
        mn_cholesky_factor(fac, N60);
        sink += fac[N60 * N60 - 1];
    });
    TIME_MEDIAN(chol_s, big, {
        memcpy(sol, rhs, sizeof sol);
        mn_cholesky_solve(fac, N60, sol);
        sink += sol[0];
    });
    TIME_MEDIAN(lu, big, {
        memcpy(fac, gen, sizeof fac);
        mn_lu_factor(fac, N60, piv);
        sink += fac[N60 * N60 - 1];
    });
    TIME_MEDIAN(lu_s, big, {
        memcpy(sol, rhs, sizeof sol);
        mn_lu_solve(fac, N60, piv, sol);
        sink += sol[0];
    });
    (void)sink;

    printf("clock=%s\n", bench_clock == CLOCK_MONOTONIC ? "monotonic" : "thread_cpu");
    printf("svd_6x7_ns=%.0f\n", svd - copy42);
    printf("svd_6x7_s_ns=%.0f\n", svd_s - copy42);
    printf("tsvd_6x7_ns=%.0f\n", tsvd - copy42);
    printf("dls_6x7_ns=%.0f\n", dls);
    printf("ldlt_60_ns=%.0f\n", ldlt - copy60);
    printf("cholesky_60_ns=%.0f\n", chol - copy60);
    printf("lu_60_ns=%.0f\n", lu - copy60);
    printf("ldlt_solve_60_ns=%.0f\n", ldlt_s);
    printf("cholesky_solve_60_ns=%.0f\n", chol_s);
    printf("lu_solve_60_ns=%.0f\n", lu_s);
    return MN_EXIT_OK;
}
