/* Tests for the small dense linear algebra (linalg.h): LU, Cholesky, Bunch-Kaufman LDL^T,
 * one-sided Jacobi SVD, truncated-SVD least squares, damped least squares.
 *
 * Matrices come from a seeded RNG. Where possible the expected answer is known by
 * construction (A = U diag(s) V^T with prescribed s) or computed independently here: the
 * singular values are checked against the eigenvalues of A^T A found by a separate
 * two-sided cyclic Jacobi eigen-solver, and DLS against the explicit formula with a
 * Gauss-Jordan inverse. No heap allocation is allowed inside the library calls. */
#include "test.h"

#include <marionette/linalg.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAXN 64
#define MAXMN (MAXN * MAXN)

/* ---- seeded RNG (splitmix64) and matrix builders ------------------------------------------ */

static uint64_t rng_state;
static void rng_seed(uint64_t s) {
    rng_state = s * 0x9E3779B97F4A7C15ull + 1;
}
static double rng_uniform(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static double rng_normal(void) {
    double u = rng_uniform(), v = rng_uniform();
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(2.0 * 3.14159265358979323846 * v);
}
static void rand_fill(double* a, int count) {
    for (int i = 0; i < count; i++)
        a[i] = rng_normal();
}

/* Q (rows x cols, rows >= cols) with orthonormal columns: modified Gram-Schmidt, twice, of
 * a Gaussian matrix. */
static void rand_orthonormal(double* Q, int rows, int cols) {
    rand_fill(Q, rows * cols);
    for (int j = 0; j < cols; j++) {
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < j; i++) {
                double d = 0;
                for (int r = 0; r < rows; r++)
                    d += Q[r * cols + i] * Q[r * cols + j];
                for (int r = 0; r < rows; r++)
                    Q[r * cols + j] -= d * Q[r * cols + i];
            }
        }
        double nn = 0;
        for (int r = 0; r < rows; r++)
            nn += Q[r * cols + j] * Q[r * cols + j];
        nn = sqrt(nn);
        for (int r = 0; r < rows; r++)
            Q[r * cols + j] /= nn;
    }
}

/* A (m x n) = U diag(s) V^T with random orthonormal U (m x k), V (n x k), k = min(m, n). */
static void build_with_singular_values(double* A, int m, int n, const double* s) {
    static double U[MAXMN], V[MAXMN];
    int k = m < n ? m : n;
    rand_orthonormal(U, m, k);
    rand_orthonormal(V, n, k);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double a = 0;
            for (int p = 0; p < k; p++)
                a += U[i * k + p] * s[p] * V[j * k + p];
            A[i * n + j] = a;
        }
}

static double frob(const double* A, int count) {
    double s = 0;
    for (int i = 0; i < count; i++)
        s += A[i] * A[i];
    return sqrt(s);
}
static int all_finite_vec(const double* x, int n) {
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}
static double norm_inf_vec(const double* x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s = fmax(s, fabs(x[i]));
    return s;
}

/* max |Q^T Q - I| for Q rows x cols. */
static double orthonormality_error(const double* Q, int rows, int cols) {
    double e = 0;
    for (int i = 0; i < cols; i++)
        for (int j = 0; j < cols; j++) {
            double d = 0;
            for (int r = 0; r < rows; r++)
                d += Q[r * cols + i] * Q[r * cols + j];
            e = fmax(e, fabs(d - (i == j ? 1.0 : 0.0)));
        }
    return e;
}

/* ---- independent references -------------------------------------------------------------- */

/* Eigenvalues of a symmetric k x k S by the classical two-sided cyclic Jacobi method
 * (Golub & Van Loan 8.5.2), sorted descending. S is destroyed. */
static void jacobi_eigenvalues(double* S, int k, double* w) {
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0, total = 0;
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) {
                total += S[i * k + j] * S[i * k + j];
                if (i != j) off += S[i * k + j] * S[i * k + j];
            }
        if (off <= 1e-34 * total) break;
        for (int p = 0; p < k - 1; p++)
            for (int q = p + 1; q < k; q++) {
                double apq = S[p * k + q];
                if (apq == 0) continue;
                double theta = (S[q * k + q] - S[p * k + p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                /* S <- J^T S J with J the rotation in the (p, q) plane. */
                for (int r = 0; r < k; r++) {
                    double a = S[r * k + p], b = S[r * k + q];
                    S[r * k + p] = c * a - s * b;
                    S[r * k + q] = s * a + c * b;
                }
                for (int r = 0; r < k; r++) {
                    double a = S[p * k + r], b = S[q * k + r];
                    S[p * k + r] = c * a - s * b;
                    S[q * k + r] = s * a + c * b;
                }
            }
    }
    for (int i = 0; i < k; i++)
        w[i] = S[i * k + i];
    for (int i = 0; i < k; i++)
        for (int j = i + 1; j < k; j++)
            if (w[j] > w[i]) {
                double t = w[i];
                w[i] = w[j];
                w[j] = t;
            }
}

/* Inverse of an n x n matrix by Gauss-Jordan with full pivoting (reference only). */
static int gauss_jordan_inverse(const double* A, int n, double* inv) {
    static double M[MAXN * 2 * MAXN];
    int w = 2 * n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < w; j++)
            M[i * w + j] = j < n ? A[i * n + j] : (j - n == i ? 1.0 : 0.0);
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(M[r * w + c]) > fabs(M[p * w + c])) p = r;
        if (M[p * w + c] == 0) return 0;
        for (int j = 0; j < w; j++) {
            double t = M[c * w + j];
            M[c * w + j] = M[p * w + j];
            M[p * w + j] = t;
        }
        double d = M[c * w + c];
        for (int j = 0; j < w; j++)
            M[c * w + j] /= d;
        for (int r = 0; r < n; r++) {
            if (r == c) continue;
            double f = M[r * w + c];
            for (int j = 0; j < w; j++)
                M[r * w + j] -= f * M[c * w + j];
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            inv[i * n + j] = M[i * w + n + j];
    return 1;
}

/* ||A x - b|| / (||A|| ||x|| + ||b||), Frobenius / 2-norms. */
static double relative_residual(const double* A, int m, int n, const double* x, const double* b) {
    double r2 = 0;
    for (int i = 0; i < m; i++) {
        double r = -b[i];
        for (int j = 0; j < n; j++)
            r += A[i * n + j] * x[j];
        r2 += r * r;
    }
    return sqrt(r2) / (frob(A, m * n) * frob(x, n) + frob(b, m));
}

/* ---- SVD ---------------------------------------------------------------------------------- */

typedef enum { WELL, ILL, RANKDEF, ZERO } svd_kind;

typedef struct svd_case {
    int m, n;
    svd_kind kind;
    double cond; /* ratio s_max / s_min for WELL/ILL */
    int rank;    /* for RANKDEF */
    uint64_t seed;
} svd_case;

static const svd_case svd_cases[] = {
    {1, 1, WELL, 1, 0, 1},        {1, 1, ZERO, 1, 0, 2},       {2, 2, WELL, 10, 0, 3},
    {3, 3, WELL, 100, 0, 4},      {6, 7, WELL, 50, 0, 5},      {7, 6, WELL, 50, 0, 6},
    {6, 7, ILL, 1e10, 0, 7},      {7, 6, ILL, 1e12, 0, 8},     {6, 6, WELL, 1, 0, 9},
    {3, 8, WELL, 20, 0, 10},      {12, 5, WELL, 1e3, 0, 11},   {30, 20, WELL, 1e2, 0, 12},
    {20, 30, WELL, 1e2, 0, 13},   {40, 40, ILL, 1e13, 0, 14},  {6, 7, RANKDEF, 1, 4, 15},
    {7, 6, RANKDEF, 1, 3, 16},    {10, 10, RANKDEF, 1, 1, 17}, {5, 9, ZERO, 1, 0, 18},
    {9, 5, ZERO, 1, 0, 19},       {1, 6, WELL, 1, 0, 20},      {6, 1, WELL, 1, 0, 21},
    {6, 7, WELL, 1e3, 0, 22},     {50, 3, ILL, 1e9, 0, 23},    {3, 50, ILL, 1e9, 0, 24},
    {60, 60, WELL, 1e4, 0, 25},   {60, 60, RANKDEF, 1, 1, 26}, {60, 40, RANKDEF, 1, 2, 27},
    {30, 60, RANKDEF, 1, 29, 28}, {60, 60, ZERO, 1, 0, 29},
};

static void test_svd_table(void) {
    static double A[MAXMN], A0[MAXMN], U[MAXMN], V[MAXMN], work[MAXMN * 4], R[MAXMN], S[MAXMN];
    double s[MAXN], s_true[MAXN], eig[MAXN];
    for (size_t c = 0; c < sizeof svd_cases / sizeof svd_cases[0]; c++) {
        const svd_case* tc = &svd_cases[c];
        int m = tc->m, n = tc->n, k = m < n ? m : n;
        rng_seed(tc->seed);
        /* Prescribed singular values, log-spaced from 1 down to 1/cond (times a scale). */
        double scale = 0.5 + 3 * rng_uniform();
        for (int i = 0; i < k; i++) {
            double f = k > 1 ? (double)i / (k - 1) : 0;
            s_true[i] = scale * pow(tc->cond, -f);
            if (tc->kind == RANKDEF && i >= tc->rank) s_true[i] = 0;
            if (tc->kind == ZERO) s_true[i] = 0;
        }
        build_with_singular_values(A, m, n, s_true);
        memcpy(A0, A, sizeof(double) * m * n);
        CHECK(mn_svd_work_size(m, n) <= sizeof work / sizeof work[0]);

        long before = mn_alloc_count();
        mn_status st = mn_svd(A, m, n, s, U, V, work);
        CHECK(mn_alloc_count() == before);
        CHECK(st == MN_OK);
        if (st != MN_OK) fprintf(stderr, "  case %zu: status %s\n", c, mn_status_name(st));

        double anorm = frob(A0, m * n);
        double tol = 1e-13 * (anorm > 0 ? anorm : 1);
        /* Descending, non-negative. */
        for (int i = 0; i < k; i++)
            CHECK(s[i] >= 0);
        for (int i = 0; i + 1 < k; i++)
            CHECK(s[i] >= s[i + 1]);
        /* Reconstruction A = U diag(s) V^T. */
        double rec = 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double a = 0;
                for (int p = 0; p < k; p++)
                    a += U[i * k + p] * s[p] * V[j * k + p];
                R[i * n + j] = a - A0[i * n + j];
            }
        rec = frob(R, m * n);
        CHECK(rec <= 1e-12 * (anorm > 0 ? anorm : 1));
        if (!(rec <= 1e-12 * (anorm > 0 ? anorm : 1)))
            fprintf(stderr, "  case %zu (%dx%d): reconstruction %.3g\n", c, m, n, rec);
        /* Orthonormal U and V, also when the rank is deficient. */
        double eu = orthonormality_error(U, m, k), ev = orthonormality_error(V, n, k);
        CHECK(eu <= 1e-12);
        CHECK(ev <= 1e-12);
        if (!(eu <= 1e-12 && ev <= 1e-12))
            fprintf(stderr, "  case %zu (%dx%d): orthonormality U %.3g V %.3g\n", c, m, n, eu, ev);
        /* Against the prescribed values: each to 1e-13 relative to s_max (all kinds), and
         * the large ones of the ill-conditioned cases to high relative accuracy. */
        for (int i = 0; i < k; i++) {
            CHECK_NEAR(s[i], s_true[i], tol + 1e-13 * s_true[0]);
            if (s_true[i] > 1e-6 * s_true[0]) CHECK_NEAR(s[i] / s_true[i], 1.0, 1e-9);
        }
        /* Against an independent computation: eigenvalues of A^T A (or A A^T, whichever is
         * k x k) from the two-sided Jacobi eigen-solver above. Squaring loses the small
         * values, so compare to an absolute tolerance relative to s_max. */
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) {
                double d = 0;
                if (m >= n)
                    for (int r = 0; r < m; r++)
                        d += A0[r * n + i] * A0[r * n + j];
                else
                    for (int r = 0; r < n; r++)
                        d += A0[i * n + r] * A0[j * n + r];
                S[i * k + j] = d;
            }
        jacobi_eigenvalues(S, k, eig);
        double smax = s[0] > 0 ? s[0] : 1;
        for (int i = 0; i < k; i++) {
            double se = sqrt(fmax(eig[i], 0));
            /* sigma^2 known to ~eps smax^2, so sigma to ~eps smax^2 / sigma (or sqrt(eps)
             * smax when sigma is tiny). */
            double t = fmax(1e-13 * smax * smax / fmax(se, 1e-300), 1e-13 * smax);
            t = fmin(t, 1e-7 * smax);
            CHECK_NEAR(s[i], se, t);
        }
    }
}

/* Singular values of the columns of X (rows x cols, cols <= rows, row-major) by a plain
 * cyclic one-sided Jacobi in long double: a slower, higher-precision reference. */
static void hestenes_long_double(const double* X, int rows, int cols, double* sv) {
    static long double W[MAXMN];
    for (int i = 0; i < rows * cols; i++)
        W[i] = X[i];
    for (int sweep = 0; sweep < 80; sweep++) {
        int rotated = 0;
        for (int p = 0; p < cols - 1; p++)
            for (int q = p + 1; q < cols; q++) {
                long double a = 0, b = 0, g = 0;
                for (int r = 0; r < rows; r++) {
                    long double xp = W[r * cols + p], xq = W[r * cols + q];
                    a += xp * xp, b += xq * xq, g += xp * xq;
                }
                if (g == 0 || fabsl(g) <= 1e-19L * sqrtl(a * b)) continue;
                rotated = 1;
                long double z = (b - a) / (2 * g);
                long double t = (z >= 0 ? 1 : -1) / (fabsl(z) + sqrtl(1 + z * z));
                long double c = 1 / sqrtl(1 + t * t), s = c * t;
                for (int r = 0; r < rows; r++) {
                    long double xp = W[r * cols + p], xq = W[r * cols + q];
                    W[r * cols + p] = c * xp - s * xq;
                    W[r * cols + q] = s * xp + c * xq;
                }
            }
        if (!rotated) break;
    }
    for (int j = 0; j < cols; j++) {
        long double n2 = 0;
        for (int r = 0; r < rows; r++)
            n2 += W[r * cols + j] * W[r * cols + j];
        sv[j] = (double)sqrtl(n2);
    }
    for (int i = 0; i < cols; i++)
        for (int j = i + 1; j < cols; j++)
            if (sv[j] > sv[i]) {
                double t = sv[i];
                sv[i] = sv[j];
                sv[j] = t;
            }
}

/* One-sided Jacobi finds every singular value to high relative accuracy when the matrix
 * is a well-conditioned one with badly scaled columns (tall) or rows (wide), Demmel &
 * Veselic 1992: here values spread over 12 orders of magnitude, each checked to 1e-12
 * relative, which the squared (A^T A) route could not give. */
static void test_svd_graded(void) {
    static double B[MAXMN], A[MAXMN], At[MAXMN], work[MAXMN * 4];
    double s[MAXN], ref[MAXN];
    const int shapes[][2] = {{7, 6}, {6, 7}, {12, 4}, {4, 12}, {3, 3}};
    for (int c = 0; c < 5; c++) {
        int m = shapes[c][0], n = shapes[c][1], k = m < n ? m : n;
        rng_seed(1100 + (uint64_t)c);
        rand_fill(B, m * n);
        /* Scale the k vectors the Jacobi method works on: columns if tall, rows if wide. */
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                int v = m >= n ? j : i;
                A[i * n + j] = B[i * n + j] * pow(10.0, -12.0 * v / (k - 1));
            }
        /* Reference on the column form (transpose a wide matrix). */
        if (m >= n) {
            hestenes_long_double(A, m, n, ref);
        } else {
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++)
                    At[j * m + i] = A[i * n + j];
            hestenes_long_double(At, n, m, ref);
        }
        CHECK(mn_svd(A, m, n, s, NULL, NULL, work) == MN_OK);
        for (int i = 0; i < k; i++) {
            CHECK_NEAR(s[i] / ref[i], 1.0, 1e-12);
        }
        CHECK(s[k - 1] < 1e-10 * s[0]);
    }
}

/* The projector I - 11^T/n has rank n - 1 and its null vector (1,...,1)/sqrt(n) touches
 * every coordinate equally: completing U and V for the zero value must still give a unit
 * vector (each coordinate vector's residual is only 1/sqrt(n) long). */
static void test_svd_completion(void) {
    static double A[MAXMN], U[MAXMN], V[MAXMN], work[MAXMN * 4];
    double s[MAXN];
    const int sizes[] = {2, 4, 9, 33};
    for (int c = 0; c < 4; c++) {
        int n = sizes[c];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                A[i * n + j] = (i == j) - 1.0 / n;
        CHECK(mn_svd(A, n, n, s, U, V, work) == MN_OK);
        for (int i = 0; i < n - 1; i++)
            CHECK_NEAR(s[i], 1.0, 1e-14);
        CHECK(s[n - 1] <= 1e-15);
        CHECK(orthonormality_error(U, n, n) <= 1e-14);
        CHECK(orthonormality_error(V, n, n) <= 1e-14);
        for (int i = 0; i < n; i++) {
            CHECK_NEAR(fabs(U[i * n + n - 1]), 1.0 / sqrt(n), 1e-7);
            CHECK_NEAR(fabs(V[i * n + n - 1]), 1.0 / sqrt(n), 1e-7);
        }
    }
}

/* Many small matrices with awkward structure: repeated and zero rows and columns,
 * entries of wildly different scales, exact zeros, tiny and huge magnitudes. Every result
 * must be finite, ordered, orthonormal and reproduce A. */
static void test_svd_structured_stress(void) {
    double A[100], A0[100], U[100], V[100], s[10], work[512];
    int failures = 0;
    rng_seed(1200);
    for (int c = 0; c < 3000; c++) {
        int m = 1 + (int)(rng_uniform() * 10), n = 1 + (int)(rng_uniform() * 10);
        int k = m < n ? m : n;
        double base_scale = pow(10.0, -200.0 + 400.0 * rng_uniform());
        for (int i = 0; i < m * n; i++) {
            double u = rng_uniform();
            A[i] = u < 0.2 ? 0.0 : rng_normal() * (u < 0.3 ? 1e-12 : 1.0);
        }
        int kind = c % 5;
        if (kind == 1 && m > 1) /* a repeated row */
            for (int j = 0; j < n; j++)
                A[(m - 1) * n + j] = A[j];
        if (kind == 2 && n > 1) /* a zero column */
            for (int i = 0; i < m; i++)
                A[i * n + n - 1] = 0;
        if (kind == 3) /* rank one */
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++)
                    A[i * n + j] = A[i * n] * A[j] + (i == 0 && j == 0);
        if (kind == 4) /* one huge row */
            for (int j = 0; j < n; j++)
                A[j] *= 1e9;
        for (int i = 0; i < m * n; i++)
            A0[i] = A[i] *= base_scale;
        mn_status st = mn_svd(A, m, n, s, U, V, work);
        double anorm = norm_inf_vec(A0, m * n), err = 0; /* max |a_ij|: no squares to underflow */
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double a = 0;
                for (int p = 0; p < k; p++)
                    a += U[i * k + p] * s[p] * V[j * k + p];
                err = fmax(err, fabs(a - A0[i * n + j]));
            }
        int ok = st == MN_OK && orthonormality_error(U, m, k) <= 1e-13 &&
                 orthonormality_error(V, n, k) <= 1e-13 && err <= 1e-14 * (m + n) * anorm;
        for (int i = 0; i < k; i++)
            ok = ok && isfinite(s[i]) && s[i] >= 0 && (i == 0 || s[i] <= s[i - 1]);
        if (!ok && failures++ < 3)
            fprintf(
                stderr,
                "  case %d (%dx%d, kind %d, scale %.3g): status %s, error %.3g, U %.3g, V %.3g\n",
                c, m, n, kind, base_scale, mn_status_name(st), anorm > 0 ? err / anorm : err,
                orthonormality_error(U, m, k), orthonormality_error(V, n, k));
    }
    CHECK(failures == 0);
}

/* U and V are optional; s alone must match the full call. */
static void test_svd_optional_outputs(void) {
    double A[42], A1[42], A2[42], s1[6], s2[6], s3[6], U[36], V[42], work[128];
    rng_seed(99);
    rand_fill(A, 42);
    memcpy(A1, A, sizeof A);
    memcpy(A2, A, sizeof A);
    CHECK(mn_svd(A, 6, 7, s1, U, V, work) == MN_OK);
    CHECK(mn_svd(A1, 6, 7, s2, NULL, NULL, work) == MN_OK);
    CHECK(mn_svd(A2, 6, 7, s3, U, NULL, work) == MN_OK);
    for (int i = 0; i < 6; i++) {
        CHECK(s1[i] == s2[i]);
        CHECK(s1[i] == s3[i]);
    }
}

/* Entries near the overflow and underflow thresholds: the exact power-of-two scaling keeps
 * the squared norms finite. */
static void test_svd_extreme_scale(void) {
    double base[12], A[12], s0[3], s[3], work[64];
    rng_seed(5);
    rand_fill(base, 12);
    memcpy(A, base, sizeof A);
    CHECK(mn_svd(A, 4, 3, s0, NULL, NULL, work) == MN_OK);
    const double scales[] = {1e300, 1e-300, 1e-310};
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < 12; i++)
            A[i] = base[i] * scales[c];
        CHECK(mn_svd(A, 4, 3, s, NULL, NULL, work) == MN_OK);
        for (int i = 0; i < 3; i++) {
            CHECK(isfinite(s[i]));
            /* Subnormal inputs have lost digits already; normal ones must be exact-ish. */
            double tol = scales[c] < 1e-305 ? 1e-6 : 1e-13;
            CHECK_NEAR(s[i] / (s0[i] * scales[c]), 1.0, tol);
        }
    }
}

static void test_svd_bad_input(void) {
    double A[6] = {1, 2, 3, 4, 5, 6}, s[2], work[64];
    CHECK(mn_svd(NULL, 2, 3, s, NULL, NULL, work) == MN_ERR_ARG);
    CHECK(mn_svd(A, 0, 3, s, NULL, NULL, work) == MN_ERR_ARG);
    CHECK(mn_svd(A, 2, -1, s, NULL, NULL, work) == MN_ERR_ARG);
    CHECK(mn_svd(A, 2, 3, NULL, NULL, NULL, work) == MN_ERR_ARG);
    CHECK(mn_svd(A, 2, 3, s, NULL, NULL, NULL) == MN_ERR_ARG);
    A[4] = NAN;
    CHECK(mn_svd(A, 2, 3, s, NULL, NULL, work) == MN_ERR_ARG);
    A[4] = INFINITY;
    CHECK(mn_svd(A, 2, 3, s, NULL, NULL, work) == MN_ERR_ARG);
    CHECK(mn_svd_work_size(0, 3) == 0);
    CHECK(mn_svd_work_size(6, 7) >= 6 * 7 + 6 * 6);
}

/* ---- LU ----------------------------------------------------------------------------------- */

static void test_lu_random(void) {
    static double A[MAXMN], A0[MAXMN];
    double b[MAXN], x[MAXN];
    int piv[MAXN];
    const int sizes[] = {1, 2, 3, 6, 7, 13, 30, 60};
    for (int c = 0; c < 8; c++) {
        int n = sizes[c];
        rng_seed(100 + (uint64_t)n);
        rand_fill(A, n * n);
        for (int i = 0; i < n; i++)
            A[i * n + i] *= 0.01; /* force row exchanges */
        rand_fill(b, n);
        memcpy(A0, A, sizeof(double) * n * n);
        memcpy(x, b, sizeof(double) * n);
        long before = mn_alloc_count();
        CHECK(mn_lu_factor(A, n, piv) == MN_OK);
        mn_lu_solve(A, n, piv, x);
        CHECK(mn_alloc_count() == before);
        double r = relative_residual(A0, n, n, x, b);
        CHECK(r <= 1e-14);
        for (int k = 0; k < n; k++)
            CHECK(piv[k] >= k && piv[k] < n);
        /* P A = L U reconstructed. */
        static double PA[MAXMN];
        memcpy(PA, A0, sizeof(double) * n * n);
        for (int k = 0; k < n; k++)
            if (piv[k] != k)
                for (int j = 0; j < n; j++) {
                    double t = PA[k * n + j];
                    PA[k * n + j] = PA[piv[k] * n + j];
                    PA[piv[k] * n + j] = t;
                }
        double e = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int p = 0; p <= i && p <= j; p++)
                    s += (p == i ? 1.0 : A[i * n + p]) * A[p * n + j];
                e = fmax(e, fabs(s - PA[i * n + j]));
            }
        CHECK(e <= 1e-13 * norm_inf_vec(A0, n * n) * n);
        /* |L| <= 1 with partial pivoting. */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++)
                CHECK(fabs(A[i * n + j]) <= 1.0);
    }
}

static void test_lu_singular_and_args(void) {
    int piv[4];
    double P[4] = {0, 1, 1, 0}, b[2] = {2, 3};
    CHECK(mn_lu_factor(P, 2, piv) == MN_OK); /* needs the exchange */
    mn_lu_solve(P, 2, piv, b);
    CHECK_NEAR(b[0], 3, 1e-15);
    CHECK_NEAR(b[1], 2, 1e-15);
    double S[9] = {1, 2, 3, 2, 4, 6, 1, 0, 1}; /* row 2 = 2 row 1 */
    CHECK(mn_lu_factor(S, 3, piv) == MN_ERR_SINGULAR);
    for (int i = 0; i < 9; i++)
        CHECK(isfinite(S[i]));
    double Z[4] = {0, 0, 0, 0};
    CHECK(mn_lu_factor(Z, 2, piv) == MN_ERR_SINGULAR);
    double N1[4] = {1, NAN, 0, 1};
    CHECK(mn_lu_factor(N1, 2, piv) == MN_ERR_ARG);
    CHECK(mn_lu_factor(NULL, 2, piv) == MN_ERR_ARG);
    CHECK(mn_lu_factor(P, 0, piv) == MN_ERR_ARG);
    CHECK(mn_lu_factor(P, 2, NULL) == MN_ERR_ARG);
    /* Numerically singular: rank 9 of 10 built from a product, pivot ~ eps. */
    static double A[100];
    double s[10];
    rng_seed(7);
    for (int i = 0; i < 10; i++)
        s[i] = i < 9 ? 1.0 : 0.0;
    build_with_singular_values(A, 10, 10, s);
    int p10[10];
    CHECK(mn_lu_factor(A, 10, p10) == MN_ERR_SINGULAR);
}

/* ---- Cholesky ----------------------------------------------------------------------------- */

static void test_cholesky(void) {
    static double B[MAXMN], A[MAXMN], A0[MAXMN];
    double b[MAXN], x[MAXN];
    const int sizes[] = {1, 2, 6, 7, 20, 60};
    for (int c = 0; c < 6; c++) {
        int n = sizes[c];
        rng_seed(200 + (uint64_t)n);
        rand_fill(B, n * n);
        mn_matmul_tn(B, B, n, n, n, A);
        for (int i = 0; i < n; i++)
            A[i * n + i] += 1e-3;
        /* Mark the strict upper triangle: it must be neither read nor written. */
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                A[i * n + j] = 12345.0;
        memcpy(A0, A, sizeof(double) * n * n);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                A0[i * n + j] = A0[j * n + i];
        rand_fill(b, n);
        memcpy(x, b, sizeof(double) * n);
        long before = mn_alloc_count();
        CHECK(mn_cholesky_factor(A, n) == MN_OK);
        mn_cholesky_solve(A, n, x);
        CHECK(mn_alloc_count() == before);
        CHECK(relative_residual(A0, n, n, x, b) <= 1e-14);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                CHECK(A[i * n + j] == 12345.0);
        /* L L^T = A. */
        double e = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++) {
                double s = 0;
                for (int p = 0; p <= j; p++)
                    s += A[i * n + p] * A[j * n + p];
                e = fmax(e, fabs(s - A0[i * n + j]));
            }
        CHECK(e <= 1e-13 * norm_inf_vec(A0, n * n));
    }
    double I2[4] = {1, 2, 2, 1}; /* indefinite */
    CHECK(mn_cholesky_factor(I2, 2) == MN_ERR_SINGULAR);
    double Z[4] = {0, 0, 0, 0};
    CHECK(mn_cholesky_factor(Z, 2) == MN_ERR_SINGULAR);
    double N[4] = {-1, 0, 0, 1};
    CHECK(mn_cholesky_factor(N, 2) == MN_ERR_SINGULAR);
    /* Positive semidefinite of rank 3 (Gram matrix of 3 vectors in R^6). */
    static double G[36], W[18];
    rng_seed(201);
    rand_fill(W, 18);
    mn_matmul_tn(W, W, 3, 6, 6, G);
    CHECK(mn_cholesky_factor(G, 6) == MN_ERR_SINGULAR);
    double NaNm[4] = {1, 0, NAN, 1};
    CHECK(mn_cholesky_factor(NaNm, 2) == MN_ERR_ARG);
    CHECK(mn_cholesky_factor(NULL, 2) == MN_ERR_ARG);
}

/* ---- LDL^T -------------------------------------------------------------------------------- */

/* Builds the KKT matrix [H G^T; G 0] (nh + ng square) with H SPD and G ng x nh random, of
 * rank ng - deficiency (the last rows repeat combinations of the first). */
static void build_kkt(double* K, int nh, int ng, int deficiency) {
    static double B[MAXMN], H[MAXMN], G[MAXMN];
    int n = nh + ng;
    rand_fill(B, nh * nh);
    mn_matmul_tn(B, B, nh, nh, nh, H);
    for (int i = 0; i < nh; i++)
        H[i * nh + i] += 0.1 * nh;
    rand_fill(G, ng * nh);
    for (int r = ng - deficiency; r < ng; r++)
        for (int j = 0; j < nh; j++)
            G[r * nh + j] = 0.5 * G[0 * nh + j] - 2.0 * G[1 * nh + j];
    memset(K, 0, sizeof(double) * n * n);
    for (int i = 0; i < nh; i++)
        for (int j = 0; j < nh; j++)
            K[i * n + j] = H[i * nh + j];
    for (int r = 0; r < ng; r++)
        for (int j = 0; j < nh; j++) {
            K[(nh + r) * n + j] = G[r * nh + j];
            K[j * n + nh + r] = G[r * nh + j];
        }
}

static int count_2x2_blocks(const int* piv, int n) {
    int c = 0;
    for (int k = 0; k < n; k++)
        if (piv[k] < 0) c++, k++;
    return c;
}

static void test_ldlt_kkt(void) {
    static double K[MAXMN], K0[MAXMN], Kinv[MAXMN];
    double b[MAXN], x[MAXN];
    int piv[MAXN];
    const int shapes[][2] = {{3, 1}, {6, 3}, {7, 6}, {12, 4}, {30, 10}, {40, 20}, {2, 2}};
    int blocks = 0;
    for (int c = 0; c < 7; c++) {
        int nh = shapes[c][0], ng = shapes[c][1], n = nh + ng;
        rng_seed(300 + (uint64_t)c);
        build_kkt(K, nh, ng, 0);
        memcpy(K0, K, sizeof(double) * n * n);
        rand_fill(b, n);
        memcpy(x, b, sizeof(double) * n);
        long before = mn_alloc_count();
        mn_status st = mn_ldlt_factor(K, n, piv);
        mn_ldlt_solve(K, n, piv, x);
        CHECK(mn_alloc_count() == before);
        CHECK(st == MN_OK);
        double r = relative_residual(K0, n, n, x, b);
        CHECK(r <= 1e-14);
        if (!(r <= 1e-14)) fprintf(stderr, "  kkt %d+%d: residual %.3g\n", nh, ng, r);
        /* The answer agrees with an independent inverse. */
        CHECK(gauss_jordan_inverse(K0, n, Kinv));
        double xr[MAXN];
        mn_matvec(Kinv, n, n, b, xr);
        double dx = 0;
        for (int i = 0; i < n; i++)
            dx = fmax(dx, fabs(x[i] - xr[i]));
        CHECK(dx <= 1e-10 * norm_inf_vec(xr, n));
        /* piv follows the dsytrf layout. */
        for (int k = 0; k < n; k++) {
            if (piv[k] >= 0) {
                CHECK(piv[k] >= k && piv[k] < n);
            } else {
                CHECK(k + 1 < n && piv[k + 1] == piv[k]);
                CHECK(-piv[k] - 1 >= k + 1 && -piv[k] - 1 < n);
                k++;
            }
        }
        blocks += count_2x2_blocks(piv, n);
    }
    CHECK(blocks > 0); /* the zero block forces 2x2 pivots somewhere */

    /* The smallest indefinite case needs a 2x2 block: [0 1; 1 0]. */
    double P[4] = {0, 1, 1, 0}, pb[2] = {2, 5};
    int pp[2];
    CHECK(mn_ldlt_factor(P, 2, pp) == MN_OK);
    CHECK(pp[0] < 0 && pp[1] == pp[0]);
    mn_ldlt_solve(P, 2, pp, pb);
    CHECK_NEAR(pb[0], 5, 1e-15);
    CHECK_NEAR(pb[1], 2, 1e-15);
}

static void test_ldlt_random_symmetric(void) {
    static double A[MAXMN], A0[MAXMN];
    double b[MAXN], x[MAXN], xc[MAXN];
    int piv[MAXN];
    for (int c = 0; c < 20; c++) {
        rng_seed(400 + (uint64_t)c);
        int n = 1 + (int)(rng_uniform() * 60);
        rand_fill(A, n * n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++)
                A[j * n + i] = A[i * n + j] = 0.5 * (A[i * n + j] + A[j * n + i]);
        /* Half the cases with a zero diagonal (pure saddle / rotation-like). */
        if (c % 2)
            for (int i = 0; i < n; i++)
                A[i * n + i] = 0;
        if (n == 1) A[0] = 2.5;
        memcpy(A0, A, sizeof(double) * n * n);
        rand_fill(b, n);
        memcpy(x, b, sizeof(double) * n);
        CHECK(mn_ldlt_factor(A, n, piv) == MN_OK);
        mn_ldlt_solve(A, n, piv, x);
        double r = relative_residual(A0, n, n, x, b);
        CHECK(r <= 1e-13);
        if (!(r <= 1e-13)) fprintf(stderr, "  sym n=%d: residual %.3g\n", n, r);
    }
    /* On an SPD matrix it agrees with Cholesky. */
    static double B[400];
    int n = 20;
    rng_seed(450);
    rand_fill(B, n * n);
    mn_matmul_tn(B, B, n, n, n, A);
    for (int i = 0; i < n; i++)
        A[i * n + i] += 1;
    memcpy(A0, A, sizeof(double) * n * n);
    rand_fill(b, n);
    memcpy(x, b, sizeof(double) * n);
    memcpy(xc, b, sizeof(double) * n);
    CHECK(mn_ldlt_factor(A, n, piv) == MN_OK);
    mn_ldlt_solve(A, n, piv, x);
    CHECK(mn_cholesky_factor(A0, n) == MN_OK);
    mn_cholesky_solve(A0, n, xc);
    for (int i = 0; i < n; i++)
        CHECK_NEAR(x[i], xc[i], 1e-12 * norm_inf_vec(xc, n));
}

/* Beyond 256 unknowns the factorisation switches to its strided path for the first
 * columns: both paths must agree with the residual bound. Zero diagonals force 2x2
 * pivots from the first column on. */
static void test_ldlt_large(void) {
    enum { NB = 300 };
    static double A[NB * NB], A0[NB * NB];
    static double b[NB], x[NB];
    static int piv[NB];
    for (int c = 0; c < 2; c++) {
        rng_seed(470 + (uint64_t)c);
        if (c == 0) {
            rand_fill(A, NB * NB);
            for (int i = 0; i < NB; i++) {
                A[i * NB + i] = 0;
                for (int j = 0; j < i; j++)
                    A[j * NB + i] = A[i * NB + j];
            }
        } else {
            /* KKT with 260 primal and 40 constraint rows (H = I + B^T B / n). */
            const int nh = 260;
            memset(A, 0, sizeof A);
            static double Bm[NB * NB];
            rand_fill(Bm, nh * nh);
            mn_matmul_tn(Bm, Bm, nh, nh, nh, A0);
            for (int i = 0; i < nh; i++)
                for (int j = 0; j < nh; j++)
                    A[i * NB + j] = A0[i * nh + j] / nh + (i == j);
            for (int r = nh; r < NB; r++)
                for (int j = 0; j < nh; j++)
                    A[r * NB + j] = A[j * NB + r] = rng_normal();
        }
        memcpy(A0, A, sizeof A);
        rand_fill(b, NB);
        memcpy(x, b, sizeof b);
        long before = mn_alloc_count();
        CHECK(mn_ldlt_factor(A, NB, piv) == MN_OK);
        mn_ldlt_solve(A, NB, piv, x);
        CHECK(mn_alloc_count() == before);
        double r = relative_residual(A0, NB, NB, x, b);
        CHECK(r <= 1e-13);
        if (!(r <= 1e-13)) fprintf(stderr, "  large case %d: residual %.3g\n", c, r);
        if (c == 0) CHECK(piv[0] < 0 && count_2x2_blocks(piv, NB) > 10);
        printf("     n = %d: %d 2x2 blocks\n", NB, count_2x2_blocks(piv, NB));
    }
}

/* Sylvester's law of inertia: the signs of D match the signs of the eigenvalues, which
 * the test's own Jacobi eigen-solver provides. */
static void test_ldlt_inertia(void) {
    static double A[MAXMN], S[MAXMN], K[MAXMN];
    double w[MAXN];
    int piv[MAXN];
    for (int c = 0; c < 12; c++) {
        rng_seed(480 + (uint64_t)c);
        int n = 2 + (int)(rng_uniform() * 40);
        rand_fill(A, n * n);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < i; j++)
                A[j * n + i] = A[i * n + j];
            if (c % 3 == 0) A[i * n + i] = 0;
            if (c % 3 == 1) A[i * n + i] += 0.3 * n; /* mostly positive */
        }
        memcpy(S, A, sizeof(double) * n * n);
        jacobi_eigenvalues(S, n, w);
        int epos = 0, eneg = 0;
        for (int i = 0; i < n; i++)
            epos += w[i] > 0, eneg += w[i] < 0;
        CHECK(mn_ldlt_factor(A, n, piv) == MN_OK);
        int pos = -1, neg = -1, zero = -1;
        mn_ldlt_inertia(A, n, piv, &pos, &neg, &zero);
        CHECK(pos == epos && neg == eneg && zero == 0);
        if (!(pos == epos && neg == eneg))
            fprintf(stderr, "  n=%d: inertia (%d,%d,%d), eigenvalues (%d,%d)\n", n, pos, neg, zero,
                    epos, eneg);
    }
    /* KKT: (nh, ng, 0) for H SPD; H indefinite on null(G) shows up as a missing positive. */
    const int nh = 12, ng = 4, n = nh + ng;
    rng_seed(490);
    build_kkt(K, nh, ng, 0);
    int pos, neg, zero;
    CHECK(mn_ldlt_factor(K, n, piv) == MN_OK);
    mn_ldlt_inertia(K, n, piv, &pos, &neg, &zero);
    CHECK(pos == nh && neg == ng && zero == 0);
    build_kkt(K, nh, ng, 0);
    for (int i = 0; i < n; i++)
        K[0 * n + i] = K[i * n + 0] = 0;
    K[0] = -5.0; /* H gets a negative direction e_0; G's columns keep full row rank */
    for (int r = 0; r < ng; r++)
        K[(nh + r) * n + 0] = K[0 * n + nh + r] = 0;
    memcpy(S, K, sizeof(double) * n * n);
    jacobi_eigenvalues(S, n, w);
    int epos = 0;
    for (int i = 0; i < n; i++)
        epos += w[i] > 0;
    CHECK(mn_ldlt_factor(K, n, piv) == MN_OK);
    mn_ldlt_inertia(K, n, piv, &pos, &neg, &zero);
    CHECK(pos == nh - 1 && neg == ng + 1 && pos == epos);
    mn_ldlt_inertia(K, n, piv, NULL, NULL, NULL); /* all optional */
}

static void test_ldlt_singular(void) {
    static double K[MAXMN];
    int piv[MAXN];
    /* G rank deficient: the KKT matrix is singular. */
    const int shapes[][3] = {{6, 3, 1}, {12, 4, 2}, {30, 10, 1}, {40, 20, 3}};
    for (int c = 0; c < 4; c++) {
        rng_seed(500 + (uint64_t)c);
        build_kkt(K, shapes[c][0], shapes[c][1], shapes[c][2]);
        mn_status st = mn_ldlt_factor(K, shapes[c][0] + shapes[c][1], piv);
        CHECK(st == MN_ERR_SINGULAR);
        if (st != MN_ERR_SINGULAR)
            fprintf(stderr, "  singular kkt case %d: %s\n", c, mn_status_name(st));
    }
    double Z[9] = {0};
    CHECK(mn_ldlt_factor(Z, 3, piv) == MN_ERR_SINGULAR);
    double S[4] = {1, 1, 1, 1};
    CHECK(mn_ldlt_factor(S, 2, piv) == MN_ERR_SINGULAR);
    double N[4] = {1, 0, INFINITY, 1};
    CHECK(mn_ldlt_factor(N, 2, piv) == MN_ERR_ARG);
    CHECK(mn_ldlt_factor(NULL, 2, piv) == MN_ERR_ARG);
    CHECK(mn_ldlt_factor(S, 0, piv) == MN_ERR_ARG);
    /* The upper triangle is never read: garbage there changes nothing. */
    double A1[9] = {4, NAN, NAN, 1, 0, NAN, 2, 3, -1}, b[3] = {1, 2, 3};
    double A2[9] = {4, 1, 2, 1, 0, 3, 2, 3, -1};
    int p1[3];
    CHECK(mn_ldlt_factor(A1, 3, p1) == MN_OK);
    mn_ldlt_solve(A1, 3, p1, b);
    CHECK(relative_residual(A2, 3, 3, b, (double[]){1, 2, 3}) <= 1e-15);
}

/* Many small systems with awkward structure for the three factorisations: exact zeros,
 * repeated rows, zero diagonals, scales from 1e-150 to 1e150. Each call either reports
 * MN_ERR_SINGULAR or solves with a small backward error (relative residual); never a NaN. */
static void test_factor_structured_stress(void) {
    double A[144], A0[144], b[12], x[12];
    int piv[12], failures = 0;
    rng_seed(1300);
    for (int c = 0; c < 6000; c++) {
        int n = 1 + (int)(rng_uniform() * 12), which = c % 3, kind = (c / 3) % 4;
        double scale = pow(10.0, -150.0 + 300.0 * rng_uniform());
        for (int i = 0; i < n * n; i++)
            A[i] = rng_uniform() < 0.3 ? 0.0 : rng_normal();
        if (kind == 1 && n > 1) /* a repeated row (and column, for the symmetric ones) */
            for (int j = 0; j < n; j++)
                A[(n - 1) * n + j] = A[j];
        if (kind == 2)
            for (int i = 0; i < n; i++)
                A[i * n + i] = 0;
        if (which > 0) { /* symmetric: mirror the lower triangle */
            for (int i = 0; i < n; i++)
                for (int j = i + 1; j < n; j++)
                    A[i * n + j] = A[j * n + i];
            if (which == 1) { /* SPD-ish for Cholesky: A^T A, sometimes singular */
                double T[144];
                mn_matmul_tn(A, A, n, n, n, T);
                memcpy(A, T, sizeof(double) * n * n);
            }
        }
        for (int i = 0; i < n * n; i++)
            A0[i] = A[i] *= scale;
        rand_fill(b, n);
        memcpy(x, b, sizeof(double) * n);
        mn_status st;
        if (which == 0) {
            st = mn_lu_factor(A, n, piv);
            if (st == MN_OK) mn_lu_solve(A, n, piv, x);
        } else if (which == 1) {
            st = mn_cholesky_factor(A, n);
            if (st == MN_OK) mn_cholesky_solve(A, n, x);
        } else {
            st = mn_ldlt_factor(A, n, piv);
            if (st == MN_OK) mn_ldlt_solve(A, n, piv, x);
        }
        int ok = st == MN_OK || st == MN_ERR_SINGULAR;
        if (st == MN_OK) {
            ok = ok && all_finite_vec(x, n);
            /* Residual relative to max|A| max|x| (no squares, so no underflow). */
            double r = 0;
            for (int i = 0; i < n; i++) {
                double t = -b[i];
                for (int j = 0; j < n; j++)
                    t += A0[i * n + j] * x[j];
                r = fmax(r, fabs(t));
            }
            double den = norm_inf_vec(A0, n * n) * norm_inf_vec(x, n) * n + norm_inf_vec(b, n);
            ok = ok && r <= 1e-12 * den;
        }
        if (!ok && failures++ < 3)
            fprintf(stderr, "  case %d (%s, n=%d, kind %d, scale %.3g): status %s\n", c,
                    which == 0   ? "lu"
                    : which == 1 ? "cholesky"
                                 : "ldlt",
                    n, kind, scale, mn_status_name(st));
    }
    CHECK(failures == 0);
}

/* ---- truncated SVD ------------------------------------------------------------------------ */

static void test_tsvd_min_norm(void) {
    static double A[MAXMN], A0[MAXMN], B[MAXMN], C[MAXMN], work[MAXMN * 8];
    double b[MAXN], x[MAXN], r[MAXN], g[MAXN];
    /* Rank-deficient A = B C (B m x r, C r x n): the min-norm LS solution satisfies the
     * normal equations A^T (A x - b) = 0 and lies in the row space of C (orthogonal to the
     * null space of A). */
    const int shapes[][3] = {{6, 7, 4}, {7, 6, 3}, {10, 10, 5}, {20, 8, 2}, {5, 30, 5}};
    for (int c = 0; c < 5; c++) {
        int m = shapes[c][0], n = shapes[c][1], rk = shapes[c][2];
        rng_seed(600 + (uint64_t)c);
        rand_fill(B, m * rk);
        rand_fill(C, rk * n);
        mn_matmul(B, C, m, rk, n, A);
        memcpy(A0, A, sizeof(double) * m * n);
        rand_fill(b, m);
        int rank = -1;
        CHECK(mn_tsvd_work_size(m, n) <= sizeof work / sizeof work[0]);
        long before = mn_alloc_count();
        CHECK(mn_tsvd_solve(A, m, n, b, 1e-10, x, &rank, work) == MN_OK);
        CHECK(mn_alloc_count() == before);
        CHECK(rank == rk);
        mn_matvec(A0, m, n, x, r);
        for (int i = 0; i < m; i++)
            r[i] -= b[i];
        mn_matvec_t(A0, m, n, r, g);
        CHECK(norm_inf_vec(g, n) <= 1e-11 * frob(A0, m * n) * (frob(b, m) + 1));
        /* Row space of C: orthonormalise its rows, project x out. */
        static double Qt[MAXMN];
        /* Qt (n x rk) orthonormal basis of the row space = columns of C^T. */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < rk; j++)
                Qt[i * rk + j] = C[j * n + i];
        for (int j = 0; j < rk; j++) {
            for (int pass = 0; pass < 2; pass++)
                for (int i = 0; i < j; i++) {
                    double d = 0;
                    for (int t = 0; t < n; t++)
                        d += Qt[t * rk + i] * Qt[t * rk + j];
                    for (int t = 0; t < n; t++)
                        Qt[t * rk + j] -= d * Qt[t * rk + i];
                }
            double nn = 0;
            for (int t = 0; t < n; t++)
                nn += Qt[t * rk + j] * Qt[t * rk + j];
            for (int t = 0; t < n; t++)
                Qt[t * rk + j] /= sqrt(nn);
        }
        double xo[MAXN];
        memcpy(xo, x, sizeof(double) * n);
        for (int j = 0; j < rk; j++) {
            double d = 0;
            for (int t = 0; t < n; t++)
                d += Qt[t * rk + j] * x[t];
            for (int t = 0; t < n; t++)
                xo[t] -= d * Qt[t * rk + j];
        }
        CHECK(frob(xo, n) <= 1e-12 * frob(x, n));
    }
}

static void test_tsvd_full_rank_tall(void) {
    static double A[MAXMN], A0[MAXMN], N[MAXMN], work[MAXMN * 8];
    double b[MAXN], x[MAXN], xn[MAXN];
    const int shapes[][2] = {{7, 6}, {12, 5}, {40, 20}, {6, 6}, {3, 1}};
    for (int c = 0; c < 5; c++) {
        int m = shapes[c][0], n = shapes[c][1];
        rng_seed(700 + (uint64_t)c);
        rand_fill(A, m * n);
        memcpy(A0, A, sizeof(double) * m * n);
        rand_fill(b, m);
        int rank;
        CHECK(mn_tsvd_solve(A, m, n, b, 1e-12, x, &rank, work) == MN_OK);
        CHECK(rank == n);
        /* Normal equations A^T A x = A^T b by Cholesky. */
        mn_matmul_tn(A0, A0, m, n, n, N);
        mn_matvec_t(A0, m, n, b, xn);
        CHECK(mn_cholesky_factor(N, n) == MN_OK);
        mn_cholesky_solve(N, n, xn);
        for (int i = 0; i < n; i++)
            CHECK_NEAR(x[i], xn[i], 1e-11 * (norm_inf_vec(xn, n) + 1));
    }
}

static void test_tsvd_truncation(void) {
    static double A[42], A0[42], work[512];
    double s[6] = {2, 1, 0.5, 1e-3, 1e-9, 1e-12}, b[6], x[7], xfull[7];
    rng_seed(800);
    build_with_singular_values(A, 6, 7, s);
    memcpy(A0, A, sizeof A);
    rand_fill(b, 6);
    int rank;
    CHECK(mn_tsvd_solve(A, 6, 7, b, 1e-6, x, &rank, work) == MN_OK);
    CHECK(rank == 4);
    /* Dropping sigma = 1e-9 and 1e-12 keeps the solution bounded by |b| / 1e-3. */
    CHECK(frob(x, 7) <= 1e3 * frob(b, 6) * 1.0001);
    memcpy(A, A0, sizeof A);
    CHECK(mn_tsvd_solve(A, 6, 7, b, 0, xfull, &rank, work) == MN_OK);
    CHECK(rank == 6);
    CHECK(frob(xfull, 7) > 1e8); /* the full pseudoinverse blows up */
    /* Zero matrix: x = 0, rank 0. */
    double Z[6] = {0}, zb[2] = {1, 2}, zx[3] = {5, 5, 5};
    CHECK(mn_tsvd_solve(Z, 2, 3, zb, 1e-9, zx, &rank, work) == MN_OK);
    CHECK(rank == 0);
    CHECK(zx[0] == 0 && zx[1] == 0 && zx[2] == 0);
    /* Bad arguments. */
    double Q[6] = {1, 2, 3, 4, 5, 6};
    CHECK(mn_tsvd_solve(Q, 2, 3, zb, -1, zx, &rank, work) == MN_ERR_ARG);
    CHECK(mn_tsvd_solve(Q, 2, 3, zb, NAN, zx, &rank, work) == MN_ERR_ARG);
    double nb[2] = {1, NAN};
    zx[0] = zx[1] = zx[2] = 5;
    CHECK(mn_tsvd_solve(Q, 2, 3, nb, 1e-9, zx, &rank, work) == MN_ERR_ARG);
    CHECK(zx[0] == 0 && zx[1] == 0 && zx[2] == 0 && rank == 0);
    double QN[6] = {1, 2, NAN, 4, 5, 6};
    zx[0] = 5;
    CHECK(mn_tsvd_solve(QN, 2, 3, zb, 1e-9, zx, &rank, work) == MN_ERR_ARG);
    CHECK(zx[0] == 0);
    CHECK(mn_tsvd_solve(Q, 2, 3, zb, 1e-9, NULL, &rank, work) == MN_ERR_ARG);
}

/* ---- damped least squares ----------------------------------------------------------------- */

static void test_dls(void) {
    static double A[MAXMN], M[MAXMN], Minv[MAXMN], T[MAXMN], work[MAXMN + MAXN];
    double b[MAXN], x[MAXN], y[MAXN], xr[MAXN], xp[MAXN];
    const int shapes[][2] = {{6, 7}, {3, 7}, {6, 20}, {7, 6}, {1, 4}};
    const double lambdas[] = {1.0, 0.1, 0.01};
    for (int c = 0; c < 5; c++) {
        int m = shapes[c][0], n = shapes[c][1];
        rng_seed(900 + (uint64_t)c);
        rand_fill(A, m * n);
        rand_fill(b, m);
        for (int li = 0; li < 3; li++) {
            double lam = lambdas[li];
            long before = mn_alloc_count();
            CHECK(mn_dls_solve(A, m, n, b, lam, x, work) == MN_OK);
            CHECK(mn_alloc_count() == before);
            /* Explicit formula with an independent inverse. */
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++) {
                    double d = i == j ? lam * lam : 0;
                    for (int t = 0; t < n; t++)
                        d += A[i * n + t] * A[j * n + t];
                    M[i * m + j] = d;
                }
            CHECK(gauss_jordan_inverse(M, m, Minv));
            mn_matvec(Minv, m, m, b, y);
            mn_matvec_t(A, m, n, y, xr);
            for (int i = 0; i < n; i++)
                CHECK_NEAR(x[i], xr[i], 1e-11 * (norm_inf_vec(xr, n) + 1));
        }
        /* As lambda -> 0 it tends to the pseudoinverse solution (full row rank cases);
         * the gap shrinks like lambda^2. */
        if (m <= n) {
            memcpy(T, A, sizeof(double) * m * n);
            static double tw[MAXMN * 8];
            CHECK(mn_tsvd_solve(T, m, n, b, 1e-14, xp, NULL, tw) == MN_OK);
            double prev = INFINITY;
            for (double lam = 1e-1; lam >= 1e-5; lam *= 0.1) {
                CHECK(mn_dls_solve(A, m, n, b, lam, x, work) == MN_OK);
                double d = 0;
                for (int i = 0; i < n; i++)
                    d = fmax(d, fabs(x[i] - xp[i]));
                CHECK(d < prev);
                if (lam <= 1e-3) CHECK(d <= prev * 0.02);
                prev = d;
            }
            CHECK(prev <= 1e-7 * (norm_inf_vec(xp, n) + 1));
        }
    }
    /* A tall A goes through the n x n system: at lambda = 0 it is plain least squares
     * (equal to the pseudoinverse solution); rank deficient, it is reported. */
    {
        double At[40], T[40], bt[8], xt[5], xl[5], tw[512], w2[72];
        rng_seed(950);
        rand_fill(At, 40); /* 8 x 5 */
        rand_fill(bt, 8);
        memcpy(T, At, sizeof T);
        CHECK(mn_tsvd_solve(T, 8, 5, bt, 1e-14, xl, NULL, tw) == MN_OK);
        CHECK(mn_dls_solve(At, 8, 5, bt, 0, xt, w2) == MN_OK);
        for (int i = 0; i < 5; i++)
            CHECK_NEAR(xt[i], xl[i], 1e-12 * (norm_inf_vec(xl, 5) + 1));
        for (int r = 0; r < 8; r++)
            At[r * 5 + 4] = 2 * At[r * 5 + 1];
        CHECK(mn_dls_solve(At, 8, 5, bt, 0, xt, w2) == MN_ERR_SINGULAR);
        CHECK(xt[0] == 0 && xt[4] == 0);
        CHECK(mn_dls_solve(At, 8, 5, bt, 1e-3, xt, w2) == MN_OK);
        CHECK(all_finite_vec(xt, 5));
    }
    /* lambda = 0 with A A^T singular: reported, and x stays finite (zero). */
    double R[6] = {1, 2, 3, 2, 4, 6}, rb[2] = {1, 1}, rx[3] = {7, 7, 7}, rw[8];
    CHECK(mn_dls_solve(R, 2, 3, rb, 0, rx, rw) == MN_ERR_SINGULAR);
    CHECK(rx[0] == 0 && rx[1] == 0 && rx[2] == 0);
    CHECK(mn_dls_solve(R, 2, 3, rb, 0.1, rx, rw) == MN_OK);
    CHECK(mn_dls_solve(R, 2, 3, rb, NAN, rx, rw) == MN_ERR_ARG);
    CHECK(mn_dls_solve(R, 2, 3, rb, INFINITY, rx, rw) == MN_ERR_ARG);
    R[2] = NAN;
    rx[0] = 7;
    CHECK(mn_dls_solve(R, 2, 3, rb, 0.1, rx, rw) == MN_ERR_ARG);
    CHECK(rx[0] == 0 && rx[1] == 0 && rx[2] == 0);
    CHECK(mn_dls_solve(NULL, 2, 3, rb, 0.1, rx, rw) == MN_ERR_ARG);
    CHECK(mn_dls_solve(R, 2, 3, rb, 0.1, rx, NULL) == MN_ERR_ARG);
}

/* ---- products ------------------------------------------------------------------------------ */

static void test_products(void) {
    double A[12], B[20], C[15], x[4], y[3], z[4], D[20];
    rng_seed(1000);
    rand_fill(A, 12); /* 3 x 4 */
    rand_fill(B, 20); /* 4 x 5 */
    rand_fill(x, 4);
    mn_matmul(A, B, 3, 4, 5, C);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            double s = 0;
            for (int p = 0; p < 4; p++)
                s += A[i * 4 + p] * B[p * 5 + j];
            CHECK_NEAR(C[i * 5 + j], s, 1e-15);
        }
    mn_matvec(A, 3, 4, x, y);
    for (int i = 0; i < 3; i++)
        CHECK_NEAR(
            y[i], A[i * 4] * x[0] + A[i * 4 + 1] * x[1] + A[i * 4 + 2] * x[2] + A[i * 4 + 3] * x[3],
            1e-15);
    mn_matvec_t(A, 3, 4, y, z);
    for (int j = 0; j < 4; j++)
        CHECK_NEAR(z[j], A[j] * y[0] + A[4 + j] * y[1] + A[8 + j] * y[2], 1e-15);
    /* A^T B with A 4 x 3 (= B's first 12) and B 4 x 5. */
    mn_matmul_tn(A, B, 4, 3, 5, D);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            double s = 0;
            for (int p = 0; p < 4; p++)
                s += A[p * 3 + i] * B[p * 5 + j];
            CHECK_NEAR(D[i * 5 + j], s, 1e-15);
        }
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_svd_table);
    RUN(test_svd_graded);
    RUN(test_svd_completion);
    RUN(test_svd_structured_stress);
    RUN(test_svd_optional_outputs);
    RUN(test_svd_extreme_scale);
    RUN(test_svd_bad_input);
    RUN(test_lu_random);
    RUN(test_lu_singular_and_args);
    RUN(test_cholesky);
    RUN(test_ldlt_kkt);
    RUN(test_ldlt_random_symmetric);
    RUN(test_ldlt_large);
    RUN(test_ldlt_inertia);
    RUN(test_ldlt_singular);
    RUN(test_factor_structured_stress);
    RUN(test_tsvd_min_norm);
    RUN(test_tsvd_full_rank_tall);
    RUN(test_tsvd_truncation);
    RUN(test_dls);
    RUN(test_products);
    return mn_test_report();
}
