/* Dense kernels on two-lane vectors (see dense.h). The Cholesky: Golub & Van Loan, "Matrix
 * Computations", alg. 4.2.1 (Cholesky-Crout by columns): column j of L is
 *   l_jj = sqrt(a_jj - L[j, :j] . L[j, :j]),  l_ij = (a_ij - L[i, :j] . L[j, :j]) / l_jj,
 * independent dot products of contiguous row prefixes. Here two columns are made at a
 * time, four rows of each sharing the loads of L[j, :j] and L[j + 1, :j], and the
 * vectors are GCC/Clang vector extensions, which compile to SSE2 on x86-64 and to plain
 * scalar code where there is no vector unit. */
#include "skin/dense.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

static inline double hsum(mn_v2d a) {
    return a[0] + a[1];
}

/* a . b over len entries */
static inline double dot_v(const double* a, const double* b, int len) {
    mn_v2d s0 = {0, 0}, s1 = {0, 0};
    int k = 0;
    for (; k + 4 <= len; k += 4) {
        s0 += mn_v2d_load(a + k) * mn_v2d_load(b + k);
        s1 += mn_v2d_load(a + k + 2) * mn_v2d_load(b + k + 2);
    }
    if (k + 2 <= len) {
        s0 += mn_v2d_load(a + k) * mn_v2d_load(b + k);
        k += 2;
    }
    double s = hsum(s0 + s1);
    if (k < len) s += a[k] * b[k];
    return s;
}

/* Four rows r0..r3 against two columns' rows x, y over len entries:
 * sx[r] = rows[r] . x, sy[r] = rows[r] . y. Six loads for eight two-lane multiply-adds. */
static inline void dot4x2(const double* r0, const double* r1, const double* r2, const double* r3,
                          const double* x, const double* y, int len, double sx[4], double sy[4]) {
    mn_v2d a0 = {0, 0}, a1 = {0, 0}, a2 = {0, 0}, a3 = {0, 0};
    mn_v2d b0 = {0, 0}, b1 = {0, 0}, b2 = {0, 0}, b3 = {0, 0};
    int k = 0;
    for (; k + 2 <= len; k += 2) {
        mn_v2d xk = mn_v2d_load(x + k), yk = mn_v2d_load(y + k);
        mn_v2d q0 = mn_v2d_load(r0 + k), q1 = mn_v2d_load(r1 + k), q2 = mn_v2d_load(r2 + k),
               q3 = mn_v2d_load(r3 + k);
        a0 += q0 * xk;
        b0 += q0 * yk;
        a1 += q1 * xk;
        b1 += q1 * yk;
        a2 += q2 * xk;
        b2 += q2 * yk;
        a3 += q3 * xk;
        b3 += q3 * yk;
    }
    sx[0] = hsum(a0), sx[1] = hsum(a1), sx[2] = hsum(a2), sx[3] = hsum(a3);
    sy[0] = hsum(b0), sy[1] = hsum(b1), sy[2] = hsum(b2), sy[3] = hsum(b3);
    if (k < len) {
        sx[0] += r0[k] * x[k], sy[0] += r0[k] * y[k];
        sx[1] += r1[k] * x[k], sy[1] += r1[k] * y[k];
        sx[2] += r2[k] * x[k], sy[2] += r2[k] * y[k];
        sx[3] += r3[k] * x[k], sy[3] += r3[k] * y[k];
    }
}

int mn_chol_factor(double* A, int n, double* dinv) {
    if (!A || !dinv || n <= 0) return 0;
    double dmax = 0;
    for (int i = 0; i < n; i++)
        if (A[(size_t)i * n + i] > dmax) dmax = A[(size_t)i * n + i];
    if (!(dmax > 0) || !(dmax <= DBL_MAX)) return 0;
    double tol = n * DBL_EPSILON * dmax;
    /* two columns j, j + 1 at a time: their dot products over the first j entries share
     * the loads of the rows below; column j + 1 then takes the term of column j */
    for (int j = 0; j < n; j += 2) {
        double* rj = A + (size_t)j * n;
        double d = rj[j] - dot_v(rj, rj, j);
        /* a NaN or an infinity anywhere in row j's part of L ends up here, as does one on
         * the diagonal: the comparison fails for NaN */
        if (!(d > tol) || !(d <= DBL_MAX)) return 0;
        double ljj = sqrt(d), inv = 1.0 / ljj;
        rj[j] = ljj;
        dinv[j] = inv;
        if (j + 1 == n) break;
        double* rk = rj + n; /* row j + 1 */
        double lkj = (rk[j] - dot_v(rk, rj, j)) * inv;
        rk[j] = lkj;
        double dk = rk[j + 1] - dot_v(rk, rk, j) - lkj * lkj;
        if (!(dk > tol) || !(dk <= DBL_MAX)) return 0;
        double lkk = sqrt(dk), invk = 1.0 / lkk;
        rk[j + 1] = lkk;
        dinv[j + 1] = invk;
        int i = j + 2;
        for (; i + 4 <= n; i += 4) {
            double* r0 = A + (size_t)i * n;
            double sx[4], sy[4];
            dot4x2(r0, r0 + n, r0 + 2 * n, r0 + 3 * n, rj, rk, j, sx, sy);
            for (int q = 0; q < 4; q++) {
                double* rq = r0 + (size_t)q * n;
                double lij = (rq[j] - sx[q]) * inv;
                rq[j] = lij;
                rq[j + 1] = (rq[j + 1] - sy[q] - lij * lkj) * invk;
            }
        }
        for (; i < n; i++) {
            double* ri = A + (size_t)i * n;
            double lij = (ri[j] - dot_v(ri, rj, j)) * inv;
            ri[j] = lij;
            ri[j + 1] = (ri[j + 1] - dot_v(ri, rk, j) - lij * lkj) * invk;
        }
    }
    return 1;
}

/* Four rows r0..r3 against one vector x over len entries: s[r] = rows[r] . x, four
 * independent sums sharing the loads of x. */
static inline void dot4x1(const double* r0, const double* r1, const double* r2, const double* r3,
                          const double* x, int len, double s[4]) {
    mn_v2d a0 = {0, 0}, a1 = {0, 0}, a2 = {0, 0}, a3 = {0, 0};
    int k = 0;
    for (; k + 2 <= len; k += 2) {
        mn_v2d xk = mn_v2d_load(x + k);
        a0 += mn_v2d_load(r0 + k) * xk;
        a1 += mn_v2d_load(r1 + k) * xk;
        a2 += mn_v2d_load(r2 + k) * xk;
        a3 += mn_v2d_load(r3 + k) * xk;
    }
    s[0] = hsum(a0), s[1] = hsum(a1), s[2] = hsum(a2), s[3] = hsum(a3);
    if (k < len) {
        s[0] += r0[k] * x[k];
        s[1] += r1[k] * x[k];
        s[2] += r2[k] * x[k];
        s[3] += r3[k] * x[k];
    }
}

void mn_chol_solve(const double* L, const double* dinv, int n, double* b) {
    if (!L || !dinv || !b || n <= 0) return;
    /* Both triangular solves go by blocks of four rows (the last one shorter), so that
     * four independent sums run side by side and b is read or written once per block. */
    /* L y = b: the block's dot products with the solved part, then the block itself */
    for (int i = 0; i < n; i += 4) {
        int bs = n - i < 4 ? n - i : 4;
        const double* r0 = L + (size_t)i * n;
        double s[4];
        if (bs == 4)
            dot4x1(r0, r0 + n, r0 + 2 * (size_t)n, r0 + 3 * (size_t)n, b, i, s);
        else
            for (int q = 0; q < bs; q++)
                s[q] = dot_v(r0 + (size_t)q * n, b, i);
        for (int q = 0; q < bs; q++) {
            const double* rq = r0 + (size_t)q * n;
            double v = b[i + q] - s[q];
            for (int t = 0; t < q; t++)
                v -= rq[i + t] * b[i + t];
            b[i + q] = v * dinv[i + q];
        }
    }
    /* L^T x = y: column access of L, done as row-wise updates to stay contiguous: the
     * block itself from its last row up, then b[0, i) -= L[block, 0:i]^T x[block] */
    for (int i = ((n - 1) / 4) * 4; i >= 0; i -= 4) {
        int bs = n - i < 4 ? n - i : 4;
        const double* r0 = L + (size_t)i * n;
        for (int q = bs - 1; q >= 0; q--) {
            double v = b[i + q];
            for (int t = q + 1; t < bs; t++)
                v -= r0[(size_t)t * n + (size_t)(i + q)] * b[i + t];
            b[i + q] = v * dinv[i + q];
        }
        if (bs == 4) {
            const double *r1 = r0 + n, *r2 = r0 + 2 * (size_t)n, *r3 = r0 + 3 * (size_t)n;
            double x0 = b[i], x1 = b[i + 1], x2 = b[i + 2], x3 = b[i + 3];
            int k = 0;
            for (; k + 2 <= i; k += 2) {
                mn_v2d v =
                    mn_v2d_load(b + k) - (x0 * mn_v2d_load(r0 + k) + x1 * mn_v2d_load(r1 + k) +
                                          x2 * mn_v2d_load(r2 + k) + x3 * mn_v2d_load(r3 + k));
                mn_v2d_store(b + k, v);
            }
            if (k < i) b[k] -= x0 * r0[k] + x1 * r1[k] + x2 * r2[k] + x3 * r3[k];
        } else {
            for (int q = 0; q < bs; q++) {
                const double* rq = r0 + (size_t)q * n;
                double xq = b[i + q];
                for (int k = 0; k < i; k++)
                    b[k] -= rq[k] * xq;
            }
        }
    }
}

void mn_matvec3(const double* Z, int n, int rows, const double* b, double* x) {
    const double *b0 = b, *b1 = b + n, *b2 = b + 2 * (size_t)n;
    for (int i = 0; i < rows; i++) {
        const double* z = Z + (size_t)i * n;
        mn_v2d s0 = {0, 0}, s1 = {0, 0}, s2 = {0, 0};
        int k = 0;
        for (; k + 2 <= n; k += 2) {
            mn_v2d zk = mn_v2d_load(z + k);
            s0 += zk * mn_v2d_load(b0 + k);
            s1 += zk * mn_v2d_load(b1 + k);
            s2 += zk * mn_v2d_load(b2 + k);
        }
        double x0 = hsum(s0), x1 = hsum(s1), x2 = hsum(s2);
        if (k < n) {
            x0 += z[k] * b0[k];
            x1 += z[k] * b1[k];
            x2 += z[k] * b2[k];
        }
        x[i] = x0;
        x[n + i] = x1;
        x[2 * (size_t)n + i] = x2;
    }
}
