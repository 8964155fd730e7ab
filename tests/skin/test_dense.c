/* The fit's dense kernels (src/skin/dense.c) against the library's reference ones: the
 * two-column Cholesky against mn_cholesky_factor / mn_cholesky_solve on random symmetric
 * positive definite matrices of every size from 1 to 80 (odd and even, tails of every
 * length), its refusals (indefinite, singular, NaN, infinity), and the three-vector
 * product against plain sums. */
#include <marionette/linalg.h>

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "skin/dense.h"
#include "test.h"

static unsigned long long rng_state = 0x2545F4914F6CDD1Dull;
static double rnd(void) { /* [-1, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

/* A = B B^T + n I / 10 (lower and upper filled), B n x n random; also a pattern like the
 * fit's metric when banded: entries farther than band from the diagonal are zero. */
static void random_spd(double* A, int n, int band) {
    double* B = malloc((size_t)n * (size_t)n * sizeof(double));
    for (int i = 0; i < n * n; i++)
        B[i] = rnd();
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double s = 0;
            for (int k = 0; k < n; k++)
                if (band < 0 || (abs(i - k) <= band && abs(j - k) <= band))
                    s += B[i * n + k] * B[j * n + k];
            A[i * n + j] = A[j * n + i] = s + (i == j ? 0.1 * n : 0.0);
        }
    free(B);
}

static void test_cholesky_matches_reference(void) {
    const int nmax = 80;
    double* A = malloc((size_t)nmax * nmax * sizeof(double));
    double* L1 = malloc((size_t)nmax * nmax * sizeof(double));
    double* L2 = malloc((size_t)nmax * nmax * sizeof(double));
    double dinv[80], b1[80], b2[80], x[80];
    for (int n = 1; n <= nmax; n++) {
        for (int pattern = 0; pattern < 2; pattern++) {
            random_spd(A, n, pattern ? 4 : -1);
            memcpy(L1, A, (size_t)n * n * sizeof(double));
            memcpy(L2, A, (size_t)n * n * sizeof(double));
            CHECK(mn_cholesky_factor(L1, n) == MN_OK);
            CHECK(mn_chol_factor(L2, n, dinv) == 1);
            double lmax = 0, diff = 0;
            for (int i = 0; i < n; i++) {
                CHECK_NEAR(dinv[i], 1.0 / L2[i * n + i], 1e-15 / L2[i * n + i]);
                for (int j = 0; j <= i; j++) {
                    lmax = fmax(lmax, fabs(L1[i * n + j]));
                    diff = fmax(diff, fabs(L1[i * n + j] - L2[i * n + j]));
                }
            }
            CHECK(diff <= 1e-12 * lmax);
            /* the solve: the same solution, and it solves A x = b */
            for (int i = 0; i < n; i++)
                x[i] = rnd();
            for (int i = 0; i < n; i++) {
                double s = 0;
                for (int j = 0; j < n; j++)
                    s += A[i * n + j] * x[j];
                b1[i] = b2[i] = s;
            }
            mn_cholesky_solve(L1, n, b1);
            mn_chol_solve(L2, dinv, n, b2);
            for (int i = 0; i < n; i++) {
                CHECK_NEAR(b2[i], b1[i], 1e-10 * (1 + fabs(b1[i])));
                CHECK_NEAR(b2[i], x[i], 1e-9 * (1 + fabs(x[i])));
            }
        }
    }
    free(A);
    free(L1);
    free(L2);
}

static void test_cholesky_refusals(void) {
    double dinv[6];
    /* indefinite: the last pivot is negative */
    double I2[4] = {1, 2, 2, 1};
    CHECK(mn_chol_factor(I2, 2, dinv) == 0);
    /* singular to working precision: rank one */
    double R1[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK(mn_chol_factor(R1, 3, dinv) == 0);
    /* zero, and an odd size whose failing pivot is in the second column of a pair */
    double Z[4] = {0, 0, 0, 0};
    CHECK(mn_chol_factor(Z, 2, dinv) == 0);
    double P[9] = {4, 0, 0, 0, -1, 0, 0, 0, 4};
    CHECK(mn_chol_factor(P, 3, dinv) == 0);
    /* NaN or infinity below the diagonal, on it, in a later row */
    double A[36];
    for (int c = 0; c < 4; c++) {
        random_spd(A, 6, -1);
        int i = c == 0 ? 1 : c == 1 ? 5 : c == 2 ? 3 : 4;
        int j = c == 0 ? 0 : c == 1 ? 2 : c == 2 ? 3 : 4;
        A[i * 6 + j] = c % 2 ? INFINITY : NAN;
        CHECK(mn_chol_factor(A, 6, dinv) == 0);
    }
    CHECK(mn_chol_factor(NULL, 2, dinv) == 0);
    CHECK(mn_chol_factor(Z, 0, dinv) == 0);
}

static void test_matvec3(void) {
    for (int n = 1; n <= 13; n++)
        for (int rows = 0; rows <= n; rows++) {
            double Z[169], b[39], x[39];
            for (int i = 0; i < n * n; i++)
                Z[i] = rnd();
            for (int i = 0; i < 3 * n; i++) {
                b[i] = rnd();
                x[i] = 7.0; /* rows past the first rows stay as they are */
            }
            mn_matvec3(Z, n, rows, b, x);
            for (int a = 0; a < 3; a++)
                for (int i = 0; i < n; i++) {
                    double s = 0;
                    for (int k = 0; k < n; k++)
                        s += Z[i * n + k] * b[a * n + k];
                    CHECK_NEAR(x[a * n + i], i < rows ? s : 7.0, 1e-14 * n);
                }
        }
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_cholesky_matches_reference);
    RUN(test_cholesky_refusals);
    RUN(test_matvec3);
    return mn_test_report();
}
