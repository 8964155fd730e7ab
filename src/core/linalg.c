/* Small dense linear algebra on caller-owned buffers: LU, Cholesky, Bunch-Kaufman LDL^T,
 * one-sided Jacobi SVD, truncated-SVD least squares and damped least squares.
 *
 * Everything is row-major (A[i*cols + j]) and nothing allocates: scratch comes from the
 * caller's work array. The numerics follow the standard references:
 *  - LU with partial pivoting and Cholesky: Golub & Van Loan, "Matrix Computations",
 *    4th ed., algorithms 3.4.1 and 4.2.1.
 *  - LDL^T: Bunch & Kaufman (1977) partial pivoting with 1x1 and 2x2 blocks, laid out
 *    as LAPACK's dsytf2/dsytrs (lower storage) so that piv means the same thing.
 *  - SVD: one-sided Jacobi (Hestenes 1958) with the rotation of Rutishauser and the
 *    stopping rule of Demmel & Veselic (1992), which gives singular values to high
 *    relative accuracy.
 *  - The truncated SVD solve is the one Welman 5.2.4 recommends for the Lagrange
 *    multiplier system; damped least squares is Parent eq. 5.24. */
#include <marionette/linalg.h>

#include <float.h>
#include <math.h>
#include <string.h>

/* Relative pivot tolerance for the factorisations: a pivot below n * eps * max|A| is
 * treated as zero (see linalg.h). */
static double pivot_tol(int n) {
    return (double)n * DBL_EPSILON;
}

/* Dot product with four partial sums: breaks the add latency chain (the compiler may not
 * reassociate) and is also a little more accurate than one running sum. */
static double dot(const double* a, const double* b, int len) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= len; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < len; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* Plain running-sum dot for the short vectors of the SVD (length 6 or 7 in IK), where the
 * unrolled form's tail handling costs more than it saves. */
static double dot_short(const double* a, const double* b, int len) {
    double s = 0;
    for (int i = 0; i < len; i++)
        s += a[i] * b[i];
    return s;
}

static int all_finite(const double* a, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(a[i])) return 0;
    return 1;
}

/* ---- LU with partial pivoting ----------------------------------------------------------- */

mn_status mn_lu_factor(double* A, int n, int* piv) {
    if (!A || !piv || n <= 0) return MN_ERR_ARG;
    size_t nn = (size_t)n * (size_t)n;
    double amax = 0;
    for (size_t i = 0; i < nn; i++) {
        double v = fabs(A[i]);
        if (!(v <= DBL_MAX)) return MN_ERR_ARG; /* NaN or infinity */
        if (v > amax) amax = v;
    }
    double tol = pivot_tol(n) * amax;
    mn_status st = amax > 0 ? MN_OK : MN_ERR_SINGULAR;
    /* Right-looking elimination (Golub & Van Loan alg. 3.4.1): rows are contiguous, so the
     * row swap and the rank-1 update both stream through memory. */
    for (int k = 0; k < n; k++) {
        int p = k;
        double best = fabs(A[(size_t)k * n + k]);
        for (int i = k + 1; i < n; i++) {
            double v = fabs(A[(size_t)i * n + k]);
            if (v > best) best = v, p = i;
        }
        piv[k] = p;
        if (p != k) {
            double* rk = A + (size_t)k * n;
            double* rp = A + (size_t)p * n;
            for (int j = 0; j < n; j++) {
                double t = rk[j];
                rk[j] = rp[j];
                rp[j] = t;
            }
        }
        const double* rk = A + (size_t)k * n;
        double ukk = rk[k];
        if (!(fabs(ukk) > tol)) {
            /* Keep going so the factors are complete and finite, but report it. */
            st = MN_ERR_SINGULAR;
            continue;
        }
        double inv = 1.0 / ukk;
        for (int i = k + 1; i < n; i++) {
            double* ri = A + (size_t)i * n;
            double l = ri[k] * inv;
            ri[k] = l;
            if (l == 0) continue;
            for (int j = k + 1; j < n; j++)
                ri[j] -= l * rk[j];
        }
    }
    return st;
}

void mn_lu_solve(const double* LU, int n, const int* piv, double* b) {
    if (!LU || !piv || !b || n <= 0) return;
    for (int k = 0; k < n; k++) {
        int p = piv[k];
        if (p != k) {
            double t = b[k];
            b[k] = b[p];
            b[p] = t;
        }
    }
    /* L y = P b, L unit lower. */
    for (int i = 1; i < n; i++)
        b[i] -= dot(LU + (size_t)i * n, b, i);
    /* U x = y. */
    for (int i = n - 1; i >= 0; i--) {
        const double* ri = LU + (size_t)i * n;
        b[i] = (b[i] - dot(ri + i + 1, b + i + 1, n - i - 1)) / ri[i];
    }
}

/* ---- Cholesky --------------------------------------------------------------------------- */

mn_status mn_cholesky_factor(double* A, int n) {
    if (!A || n <= 0) return MN_ERR_ARG;
    double dmax = 0;
    for (int i = 0; i < n; i++) {
        const double* ri = A + (size_t)i * n;
        if (!all_finite(ri, (size_t)i + 1)) return MN_ERR_ARG;
        if (ri[i] > dmax) dmax = ri[i];
    }
    if (!(dmax > 0)) return MN_ERR_SINGULAR;
    double tol = pivot_tol(n) * dmax;
    /* Column-oriented Cholesky-Crout (Golub & Van Loan alg. 4.2.1 by columns): column j of
     * L is a batch of independent dot products of contiguous row prefixes, so they overlap
     * in the pipeline, and one reciprocal per column replaces the divisions. Only the lower
     * triangle is read or written. */
    for (int j = 0; j < n; j++) {
        double* rj = A + (size_t)j * n;
        double d = rj[j] - dot(rj, rj, j);
        if (!(d > tol)) return MN_ERR_SINGULAR;
        double ljj = sqrt(d), inv = 1.0 / ljj;
        rj[j] = ljj;
        for (int i = j + 1; i < n; i++) {
            double* ri = A + (size_t)i * n;
            ri[j] = (ri[j] - dot(ri, rj, j)) * inv;
        }
    }
    return MN_OK;
}

void mn_cholesky_solve(const double* L, int n, double* b) {
    if (!L || !b || n <= 0) return;
    for (int i = 0; i < n; i++) {
        const double* ri = L + (size_t)i * n;
        b[i] = (b[i] - dot(ri, b, i)) / ri[i];
    }
    /* L^T x = y: column access of L, done as row-wise axpys to stay contiguous. */
    for (int i = n - 1; i >= 0; i--) {
        const double* ri = L + (size_t)i * n;
        double xi = b[i] / ri[i];
        b[i] = xi;
        for (int j = 0; j < i; j++)
            b[j] -= ri[j] * xi;
    }
}

/* ---- LDL^T with Bunch-Kaufman pivoting ---------------------------------------------------- */

#define AT(i, j) A[(size_t)(i) * (size_t)n + (size_t)(j)]

static void swap_d(double* a, double* b) {
    double t = *a;
    *a = *b;
    *b = t;
}

mn_status mn_ldlt_factor(double* A, int n, int* piv) {
    if (!A || !piv || n <= 0) return MN_ERR_ARG;
    /* Only the lower triangle is referenced, as in LAPACK's dsytf2 with uplo = 'L'. */
    double amax = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) {
            double v = fabs(AT(i, j));
            if (!(v <= DBL_MAX)) return MN_ERR_ARG;
            if (v > amax) amax = v;
        }
    }
    if (!(amax > 0)) return MN_ERR_SINGULAR;
    double tol = pivot_tol(n) * amax;
    /* Stack buffers for the pivot columns (no heap); larger matrices take the strided
     * path, which computes the same thing. */
    enum { LDLT_BUF = 256 };
    double buf0[LDLT_BUF], buf1[LDLT_BUF];
    /* Bunch & Kaufman's alpha = (1 + sqrt 17) / 8 bounds element growth per step. */
    const double alpha = (1.0 + sqrt(17.0)) / 8.0;
    int k = 0;
    while (k < n) {
        int kstep = 1, kp;
        double absakk = fabs(AT(k, k));
        int imax = k;
        double colmax = 0;
        for (int i = k + 1; i < n; i++) {
            double v = fabs(AT(i, k));
            if (v > colmax) colmax = v, imax = i;
        }
        if (!(absakk > tol || colmax > tol)) {
            /* The whole remaining column is zero: D has a zero 1x1 block. */
            return MN_ERR_SINGULAR;
        }
        if (absakk >= alpha * colmax) {
            kp = k;
        } else {
            /* Largest off-diagonal entry in row/column imax of the trailing matrix. */
            double rowmax = 0;
            for (int j = k; j < imax; j++) {
                double v = fabs(AT(imax, j));
                if (v > rowmax) rowmax = v;
            }
            for (int j = imax + 1; j < n; j++) {
                double v = fabs(AT(j, imax));
                if (v > rowmax) rowmax = v;
            }
            if (absakk >= alpha * colmax * (colmax / rowmax)) {
                kp = k;
            } else if (fabs(AT(imax, imax)) >= alpha * rowmax) {
                kp = imax;
            } else {
                kp = imax;
                kstep = 2;
            }
        }
        int kk = k + kstep - 1;
        if (kp != kk) {
            /* Symmetric interchange of rows and columns kk and kp in A(k:n, k:n). */
            for (int i = kp + 1; i < n; i++)
                swap_d(&AT(i, kk), &AT(i, kp));
            for (int j = kk + 1; j < kp; j++)
                swap_d(&AT(j, kk), &AT(kp, j));
            swap_d(&AT(kk, kk), &AT(kp, kp));
            if (kstep == 2) swap_d(&AT(k + 1, k), &AT(kp, k));
        }
        if (kstep == 1) {
            /* A(k+1:n, k+1:n) -= l d l^T with l = A(k+1:n, k) / d; column k becomes l. */
            double d11 = 1.0 / AT(k, k);
            int len = n - k - 1;
            if (len <= LDLT_BUF) {
                /* Rows are contiguous, column k is not: gather it once so the row
                 * updates stream through memory (and vectorise). */
                for (int j = 0; j < len; j++)
                    buf0[j] = AT(k + 1 + j, k);
                for (int i = k + 1; i < n; i++) {
                    double r = d11 * buf0[i - k - 1];
                    if (r == 0) continue;
                    double* ri = A + (size_t)i * n + k + 1;
                    for (int j = 0; j <= i - k - 1; j++)
                        ri[j] -= r * buf0[j];
                }
            } else {
                for (int i = k + 1; i < n; i++) {
                    double r = d11 * AT(i, k);
                    if (r == 0) continue;
                    double* ri = A + (size_t)i * n;
                    for (int j = k + 1; j <= i; j++)
                        ri[j] -= r * AT(j, k);
                }
            }
            for (int i = k + 1; i < n; i++)
                AT(i, k) *= d11;
            piv[k] = kp;
        } else {
            /* 2x2 pivot D = [d11 d21; d21 d22]: W = A(k+2:n, k:k+1) D^-1 (dsytf2's
             * scaled form, which avoids forming D^-1 explicitly), then
             * A(k+2:n, k+2:n) -= A(k+2:n, k:k+1) W^T and W replaces the two columns. */
            if (k < n - 2) {
                double d21 = AT(k + 1, k);
                double d11 = AT(k + 1, k + 1) / d21;
                double d22 = AT(k, k) / d21;
                double t = 1.0 / (d11 * d22 - 1.0);
                d21 = t / d21;
                int len = n - k - 2;
                if (len <= LDLT_BUF) {
                    for (int j = 0; j < len; j++) {
                        double a0 = AT(k + 2 + j, k), a1 = AT(k + 2 + j, k + 1);
                        buf0[j] = d21 * (d11 * a0 - a1);
                        buf1[j] = d21 * (d22 * a1 - a0);
                    }
                    for (int i = k + 2; i < n; i++) {
                        double* ri = A + (size_t)i * n;
                        double a0 = ri[k], a1 = ri[k + 1];
                        double* rr = ri + k + 2;
                        for (int j = 0; j <= i - k - 2; j++)
                            rr[j] -= a0 * buf0[j] + a1 * buf1[j];
                        ri[k] = buf0[i - k - 2];
                        ri[k + 1] = buf1[i - k - 2];
                    }
                } else {
                    for (int j = k + 2; j < n; j++) {
                        double wk = d21 * (d11 * AT(j, k) - AT(j, k + 1));
                        double wkp1 = d21 * (d22 * AT(j, k + 1) - AT(j, k));
                        for (int i = j; i < n; i++)
                            AT(i, j) -= AT(i, k) * wk + AT(i, k + 1) * wkp1;
                        AT(j, k) = wk;
                        AT(j, k + 1) = wkp1;
                    }
                }
            }
            piv[k] = piv[k + 1] = -(kp + 1);
        }
        k += kstep;
    }
    return MN_OK;
}

void mn_ldlt_solve(const double* A, int n, const int* piv, double* b) {
    if (!A || !piv || !b || n <= 0) return;
    /* Forward: L D y = P b (LAPACK dsytrs, lower). */
    int k = 0;
    while (k < n) {
        if (piv[k] >= 0) {
            int kp = piv[k];
            if (kp != k) swap_d(&b[k], &b[kp]);
            double bk = b[k];
            for (int i = k + 1; i < n; i++)
                b[i] -= AT(i, k) * bk;
            b[k] = bk / AT(k, k);
            k += 1;
        } else {
            int kp = -piv[k] - 1;
            if (kp != k + 1) swap_d(&b[k + 1], &b[kp]);
            double b0 = b[k], b1 = b[k + 1];
            for (int i = k + 2; i < n; i++)
                b[i] -= AT(i, k) * b0 + AT(i, k + 1) * b1;
            double akm1k = AT(k + 1, k);
            double akm1 = AT(k, k) / akm1k;
            double ak = AT(k + 1, k + 1) / akm1k;
            double denom = akm1 * ak - 1.0;
            double bkm1 = b0 / akm1k, bkk = b1 / akm1k;
            b[k] = (ak * bkm1 - bkk) / denom;
            b[k + 1] = (akm1 * bkk - bkm1) / denom;
            k += 2;
        }
    }
    /* Backward: L^T P^T x = y. */
    k = n - 1;
    while (k >= 0) {
        if (piv[k] >= 0) {
            double s = b[k];
            for (int i = k + 1; i < n; i++)
                s -= AT(i, k) * b[i];
            b[k] = s;
            int kp = piv[k];
            if (kp != k) swap_d(&b[k], &b[kp]);
            k -= 1;
        } else {
            /* 2x2 block occupying k-1, k. */
            double s1 = b[k], s0 = b[k - 1];
            for (int i = k + 1; i < n; i++) {
                s1 -= AT(i, k) * b[i];
                s0 -= AT(i, k - 1) * b[i];
            }
            b[k] = s1;
            b[k - 1] = s0;
            int kp = -piv[k] - 1;
            if (kp != k) swap_d(&b[k], &b[kp]);
            k -= 2;
        }
    }
}

void mn_ldlt_inertia(const double* A, int n, const int* piv, int* npos, int* nneg, int* nzero) {
    int pos = 0, neg = 0, zero = 0;
    if (A && piv && n > 0) {
        for (int k = 0; k < n; k++) {
            if (piv[k] >= 0) {
                double d = AT(k, k);
                if (d > 0)
                    pos++;
                else if (d < 0)
                    neg++;
                else
                    zero++;
            } else if (k + 1 < n) {
                /* det = d11 d22 - d21^2 < 0 by the pivot choice: one eigenvalue of each
                 * sign. The general rule is kept so the count never depends on that. */
                double a = AT(k, k), c = AT(k + 1, k + 1), b = AT(k + 1, k);
                double det = a * c - b * b, tr = a + c;
                if (det < 0) {
                    pos++;
                    neg++;
                } else if (det > 0) {
                    if (tr > 0)
                        pos += 2;
                    else
                        neg += 2;
                } else {
                    zero++; /* the other eigenvalue is the trace */
                    if (tr > 0)
                        pos++;
                    else if (tr < 0)
                        neg++;
                    else
                        zero++;
                }
                k++;
            }
        }
    }
    if (npos) *npos = pos;
    if (nneg) *nneg = neg;
    if (nzero) *nzero = zero;
}

#undef AT

/* ---- SVD: one-sided Jacobi --------------------------------------------------------------- */

size_t mn_svd_work_size(int m, int n) {
    if (m <= 0 || n <= 0) return 0;
    size_t k = (size_t)(m < n ? m : n), l = (size_t)(m < n ? n : m);
    /* k vectors of length l being orthogonalised, the k x k accumulated rotation, and k
     * squared norms. */
    return k * l + k * k + k;
}

/* Completes vector j of the k orthonormal vectors X (each of length l, contiguous) when
 * its singular value is zero: Gram-Schmidt, twice, of the coordinate vector e_c least
 * covered by the vectors marked in done (non-zero entries of a mask over 0..k-1). With at
 * most k - 1 < l vectors done, sum_c |residual of e_c|^2 = l - (k - 1) >= 1, so the chosen
 * residual has squared norm at least 1 / l: never a cancellation to noise. */
static void complete_basis(double* X, int k, int l, int j, const double* done) {
    double* x = X + (size_t)j * l;
    int best = 0;
    double best_cover = INFINITY;
    for (int c = 0; c < l; c++) {
        double cover = 0;
        for (int i = 0; i < k; i++)
            if (done[i] != 0) cover += X[(size_t)i * l + c] * X[(size_t)i * l + c];
        if (cover < best_cover) best_cover = cover, best = c;
    }
    memset(x, 0, (size_t)l * sizeof *x);
    x[best] = 1;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < k; i++) {
            if (done[i] == 0) continue;
            const double* y = X + (size_t)i * l;
            double d = dot_short(x, y, l);
            for (int t = 0; t < l; t++)
                x[t] -= d * y[t];
        }
    }
    double inv = 1.0 / sqrt(dot_short(x, x, l));
    for (int t = 0; t < l; t++)
        x[t] *= inv;
}

/* mn_svd: vectors whose squared norm (entries scaled to at most 1) is below this carry a
 * singular value under ~1e-145 max|a_ij|: products of two of them would underflow, so they
 * are left alone and reported as exact zeros (their vectors are completed). */
static const double negligible2 = 1e-290;

/* mn_svd's working copy X (k x l: the columns of a tall A, the rows of a wide one) and
 * Q = I; returns 0 for a non-finite entry. */
static int svd_load(const double* A, int m, int n, double* X, double* Q, int* ex_out) {
    const int tall = m >= n;
    const int k = tall ? n : m, l = tall ? m : n;
    /* Copy with an exact power-of-two scaling so that squared norms neither overflow nor
     * underflow; singular values are scaled back at the end. */
    double amax = 0;
    size_t mn = (size_t)m * (size_t)n;
    for (size_t i = 0; i < mn; i++) {
        double v = fabs(A[i]);
        if (!(v <= DBL_MAX)) return 0;
        if (v > amax) amax = v;
    }
    int ex = 0;
    if (amax > 0) frexp(amax, &ex);
    /* 2^-ex itself overflows when A is subnormal; ldexp per entry is exact there. */
    const int by_mul = ex > -1000;
    const double scale = by_mul ? ldexp(1.0, -ex) : 1.0;
    if (tall) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double a = A[(size_t)i * n + j];
                X[(size_t)j * l + i] = by_mul ? a * scale : ldexp(a, -ex);
            }
    } else {
        for (size_t i = 0; i < mn; i++)
            X[i] = by_mul ? A[i] * scale : ldexp(A[i], -ex);
    }
    memset(Q, 0, (size_t)k * k * sizeof *Q);
    for (int j = 0; j < k; j++)
        Q[(size_t)j * k + j] = 1;
    *ex_out = ex;
    return 1;
}

/* mn_svd's one-sided Jacobi sweeps on the k vectors x_j (length l) of X, the rotations
 * accumulated into Q when accumulate; returns 1 when converged. */
static int svd_sweeps(double* X, double* Q, double* nrm, int k, int l, int accumulate) {
    /* Sweeps over all pairs (p, q) in round-robin ("tournament") order: each sweep is k-1
     * rounds of disjoint pairs (the circle method, with a bye when k is odd). Rotations
     * of disjoint pairs commute, so a round first computes every rotation from the current
     * columns and then applies them: the square roots and divisions of different pairs,
     * which dominate at IK sizes, overlap in the pipeline instead of forming one long
     * dependency chain (about 25% faster than row-cyclic order on 6 x 7, with the same
     * number of sweeps). A pair is rotated until its columns are orthogonal to working
     * precision, |x_p . x_q| <= tol |x_p| |x_q| (Demmel & Veselic, "Jacobi's method is
     * more accurate than QR", 1992, sec. 4), which gives the singular values to high
     * relative accuracy. The squared norms are recomputed at the start of every sweep and
     * updated through each rotation in between (alpha' = alpha - t gamma,
     * beta' = beta + t gamma). */
    const double tol = DBL_EPSILON * (double)l, tol2 = tol * tol;
    const int max_sweeps = 60;
    const int K = k + (k & 1); /* players in the tournament; player k is the bye */
    enum { BATCH = 16 };
    int converged = 0;
    for (int sweep = 0; sweep < max_sweeps && !converged; sweep++) {
        for (int j = 0; j < k; j++) {
            const double* xj = X + (size_t)j * l;
            nrm[j] = dot_short(xj, xj, l);
        }
        converged = 1;
        for (int round = 0; round < K - 1; round++) {
            for (int first = 0; first < K / 2; first += BATCH) {
                int P[BATCH], R[BATCH], nr = 0;
                double C[BATCH], S[BATCH], TG[BATCH];
                int last = first + BATCH < K / 2 ? first + BATCH : K / 2;
                for (int i = first; i < last; i++) {
                    /* Circle method: player K-1 is fixed, the others turn one place per
                     * round. */
                    int p = i == 0 ? K - 1 : (round + i) % (K - 1);
                    int q = i == 0 ? round : (round - i + K - 1) % (K - 1);
                    if (p >= k || q >= k) continue; /* the bye */
                    double alpha = nrm[p], beta = nrm[q];
                    if (alpha <= negligible2 || beta <= negligible2) continue;
                    double gamma = dot_short(X + (size_t)p * l, X + (size_t)q * l, l);
                    double ab = alpha * beta;
                    if (ab > 1e-200 ? !(gamma * gamma > tol2 * ab)
                                    : !(fabs(gamma) > tol * sqrt(alpha) * sqrt(beta)))
                        continue;
                    /* Rutishauser's rotation: with zeta = (beta - alpha) / (2 gamma),
                     * t = tan is the smaller root of t^2 + 2 zeta t - 1 = 0. Written with
                     * d = beta - alpha, g = +-2 gamma (the sign of d), r = |(d, g)|,
                     * w = r + |d| and u = sqrt(2 r w) (no cancellation: every term is
                     * positive): t = g / w = 2 r g / u^2, c = w / u, s = g / u. Two square
                     * roots and one division, which at IK sizes are the critical resource,
                     * instead of the textbook's three divisions and two roots. The columns
                     * are scaled below 1 in magnitude, so nothing here can overflow. */
                    double d = beta - alpha, g = d >= 0 ? 2.0 * gamma : -2.0 * gamma;
                    double big = fabs(d) > fabs(g) ? fabs(d) : fabs(g);
                    if (big < 1e-140) d /= big, g /= big; /* tiny pair: c, s are scale-free */
                    double r = sqrt(d * d + g * g);
                    double w = r + fabs(d);
                    double u = sqrt(2.0 * r * w);
                    if (!(u > 0)) continue;
                    double iu = 1.0 / u;
                    double sn = g * iu, t = 2.0 * r * sn * iu;
                    P[nr] = p, R[nr] = q, C[nr] = w * iu, S[nr] = sn, TG[nr] = t * gamma;
                    nr++;
                }
                if (nr) converged = 0;
                for (int e = 0; e < nr; e++) {
                    int p = P[e], q = R[e];
                    double c = C[e], sn = S[e];
                    double *xp = X + (size_t)p * l, *xq = X + (size_t)q * l;
                    for (int i = 0; i < l; i++) {
                        double a = xp[i], b = xq[i];
                        xp[i] = c * a - sn * b;
                        xq[i] = sn * a + c * b;
                    }
                    if (accumulate) {
                        double *qp = Q + (size_t)p * k, *qq = Q + (size_t)q * k;
                        for (int i = 0; i < k; i++) {
                            double a = qp[i], b = qq[i];
                            qp[i] = c * a - sn * b;
                            qq[i] = sn * a + c * b;
                        }
                    }
                    double np = nrm[p] - TG[e];
                    nrm[p] = np > 0 ? np : 0;
                    nrm[q] += TG[e];
                }
            }
        }
    }
    return converged;
}

/* The singular values (the column norms, scaled back by 2^ex) into s, sorted descending,
 * the vectors moved along. */
static void svd_sort(double* X, double* Q, double* nrm, int k, int l, int ex, double* s) {
    /* Singular values are the column norms; sort descending, moving the vectors along. */
    for (int j = 0; j < k; j++) {
        const double* xj = X + (size_t)j * l;
        double n2 = dot_short(xj, xj, l);
        nrm[j] = n2 > negligible2 ? sqrt(n2) : 0.0;
    }
    for (int i = 0; i < k - 1; i++) {
        int best = i;
        for (int j = i + 1; j < k; j++)
            if (nrm[j] > nrm[best]) best = j;
        if (best == i) continue;
        swap_d(&nrm[i], &nrm[best]);
        double *xi = X + (size_t)i * l, *xb = X + (size_t)best * l;
        for (int t = 0; t < l; t++)
            swap_d(&xi[t], &xb[t]);
        double *qi = Q + (size_t)i * k, *qb = Q + (size_t)best * k;
        for (int t = 0; t < k; t++)
            swap_d(&qi[t], &qb[t]);
    }
    if (ex > -1000 && ex < 1000) {
        const double unscale = ldexp(1.0, ex);
        for (int j = 0; j < k; j++)
            s[j] = nrm[j] * unscale;
    } else {
        for (int j = 0; j < k; j++)
            s[j] = ldexp(nrm[j], ex);
    }
}

/* The singular vectors: want_x (l x k) from X, want_q (k x k) from Q; either may be NULL. */
static void svd_vectors(double* X, const double* Q, double* nrm, int k, int l, double* want_x,
                        double* want_q) {
    /* The vectors of the orthogonalised side: x_j / sigma_j, completed to an orthonormal
     * set where sigma_j is zero (rank deficiency). */
    if (want_x) {
        /* nrm becomes the mask of finished vectors (non-zero = done). */
        double* done = nrm;
        int zeros = 0;
        for (int j = 0; j < k; j++) {
            double sj = nrm[j];
            double* xj = X + (size_t)j * l;
            if (sj > 0) {
                double inv = 1.0 / sj;
                for (int t = 0; t < l; t++)
                    xj[t] *= inv;
                done[j] = 1;
            } else {
                done[j] = 0;
                zeros = 1;
            }
        }
        if (zeros) {
            for (int j = 0; j < k; j++) {
                if (done[j] != 0) continue;
                complete_basis(X, k, l, j, done);
                done[j] = 1;
            }
        }
        /* want_x is l x k row-major: entry (i, j) = x_j[i]. */
        for (int i = 0; i < l; i++)
            for (int j = 0; j < k; j++)
                want_x[(size_t)i * k + j] = X[(size_t)j * l + i];
    }
    if (want_q) {
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++)
                want_q[(size_t)i * k + j] = Q[(size_t)j * k + i];
    }
}

mn_status mn_svd(double* A, int m, int n, double* s, double* U, double* V, double* work) {
    if (!A || !s || !work || m <= 0 || n <= 0) return MN_ERR_ARG;
    const int tall = m >= n;
    const int k = tall ? n : m, l = tall ? m : n;
    double* X = work;                /* k x l: x_j are columns (tall) or rows of A */
    double* Q = X + (size_t)k * l;   /* k x k: q_j = column j of the rotations */
    double* nrm = Q + (size_t)k * k; /* k squared norms */
    int ex = 0;
    if (!svd_load(A, m, n, X, Q, &ex)) return MN_ERR_ARG;
    /* the rotations are only for output */
    int converged = svd_sweeps(X, Q, nrm, k, l, (tall ? V : U) != NULL);
    svd_sort(X, Q, nrm, k, l, ex, s);
    svd_vectors(X, Q, nrm, k, l, tall ? U : V, tall ? V : U);
    return converged ? MN_OK : MN_ERR_NOCONVERGE;
}

/* ---- truncated SVD least squares ----------------------------------------------------------- */

size_t mn_tsvd_work_size(int m, int n) {
    if (m <= 0 || n <= 0) return 0;
    size_t k = (size_t)(m < n ? m : n);
    return mn_svd_work_size(m, n) + (size_t)m * k + (size_t)n * k + 2 * k;
}

mn_status mn_tsvd_solve(double* A, int m, int n, const double* b, double rcond, double* x,
                        int* rank, double* work) {
    if (rank) *rank = 0;
    if (!A || !b || !x || !work || m <= 0 || n <= 0) return MN_ERR_ARG;
    /* From here on a failure leaves x = 0, never stale or NaN values. */
    memset(x, 0, (size_t)n * sizeof *x);
    if (!(rcond >= 0) || !isfinite(rcond) || !all_finite(b, (size_t)m)) return MN_ERR_ARG;
    const int k = m < n ? m : n;
    double* U = work + mn_svd_work_size(m, n);
    double* V = U + (size_t)m * k;
    double* s = V + (size_t)n * k;
    double* y = s + k;
    mn_status st = mn_svd(A, m, n, s, U, V, work);
    if (st != MN_OK && st != MN_ERR_NOCONVERGE) return st;
    /* x = V_r diag(1/s_r) U_r^T b over the kept values (Welman 5.2.4: zeroing the small
     * singular values throws away the ill-conditioned components). */
    double cut = rcond * s[0];
    int r = 0;
    while (r < k && s[r] > 0 && s[r] >= cut)
        r++;
    for (int j = 0; j < r; j++)
        y[j] = 0;
    for (int i = 0; i < m; i++) {
        const double* ui = U + (size_t)i * k;
        double bi = b[i];
        for (int j = 0; j < r; j++)
            y[j] += ui[j] * bi;
    }
    for (int j = 0; j < r; j++)
        y[j] /= s[j];
    for (int i = 0; i < n; i++)
        x[i] = dot(V + (size_t)i * k, y, r);
    if (rank) *rank = r;
    return st;
}

/* ---- damped least squares ------------------------------------------------------------------ */

mn_status mn_dls_solve(const double* A, int m, int n, const double* b, double lambda, double* x,
                       double* work) {
    if (!A || !b || !x || !work || m <= 0 || n <= 0) return MN_ERR_ARG;
    if (!isfinite(lambda) || !all_finite(A, (size_t)m * n) || !all_finite(b, (size_t)m)) {
        memset(x, 0, (size_t)n * sizeof *x);
        return MN_ERR_ARG;
    }
    /* Parent eq. 5.24: x = A^T (A A^T + lambda^2 I)^-1 b. By the push-through identity
     * this equals (A^T A + lambda^2 I)^-1 A^T b, so the smaller of the two SPD systems is
     * formed (m x m for a wide Jacobian, n x n for a tall A) and solved by Cholesky. Only
     * the lower triangle of M is needed. */
    double l2 = lambda * lambda;
    double* M = work;
    if (m <= n) {
        double* y = work + (size_t)m * m;
        for (int i = 0; i < m; i++) {
            const double* ai = A + (size_t)i * n;
            for (int j = 0; j <= i; j++)
                M[(size_t)i * m + j] = dot(ai, A + (size_t)j * n, n);
            M[(size_t)i * m + i] += l2;
        }
        mn_status st = mn_cholesky_factor(M, m);
        if (st != MN_OK) {
            memset(x, 0, (size_t)n * sizeof *x);
            return st;
        }
        memcpy(y, b, (size_t)m * sizeof *y);
        mn_cholesky_solve(M, m, y);
        mn_matvec_t(A, m, n, y, x);
    } else {
        /* M = A^T A (+ lambda^2 I) accumulated by rows of A: rank-1 updates that stream
         * through memory. */
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++)
                M[(size_t)i * n + j] = 0;
        for (int r = 0; r < m; r++) {
            const double* ar = A + (size_t)r * n;
            for (int i = 0; i < n; i++) {
                double a = ar[i];
                if (a == 0) continue;
                double* mi = M + (size_t)i * n;
                for (int j = 0; j <= i; j++)
                    mi[j] += a * ar[j];
            }
        }
        for (int i = 0; i < n; i++)
            M[(size_t)i * n + i] += l2;
        mn_status st = mn_cholesky_factor(M, n);
        if (st != MN_OK) {
            memset(x, 0, (size_t)n * sizeof *x);
            return st;
        }
        mn_matvec_t(A, m, n, b, x);
        mn_cholesky_solve(M, n, x);
    }
    return MN_OK;
}

/* ---- small products ------------------------------------------------------------------------ */

void mn_matvec(const double* A, int m, int n, const double* x, double* y) {
    for (int i = 0; i < m; i++)
        y[i] = dot(A + (size_t)i * n, x, n);
}

void mn_matvec_t(const double* A, int m, int n, const double* x, double* y) {
    for (int j = 0; j < n; j++)
        y[j] = 0;
    for (int i = 0; i < m; i++) {
        const double* ai = A + (size_t)i * n;
        double xi = x[i];
        for (int j = 0; j < n; j++)
            y[j] += ai[j] * xi;
    }
}

void mn_matmul(const double* A, const double* B, int m, int k, int n, double* C) {
    for (int i = 0; i < m; i++) {
        double* ci = C + (size_t)i * n;
        for (int j = 0; j < n; j++)
            ci[j] = 0;
        const double* ai = A + (size_t)i * k;
        for (int p = 0; p < k; p++) {
            double a = ai[p];
            const double* bp = B + (size_t)p * n;
            for (int j = 0; j < n; j++)
                ci[j] += a * bp[j];
        }
    }
}

void mn_matmul_tn(const double* A, const double* B, int k, int m, int n, double* C) {
    for (size_t i = 0; i < (size_t)m * n; i++)
        C[i] = 0;
    for (int p = 0; p < k; p++) {
        const double* ap = A + (size_t)p * m;
        const double* bp = B + (size_t)p * n;
        for (int i = 0; i < m; i++) {
            double a = ap[i];
            double* ci = C + (size_t)i * n;
            for (int j = 0; j < n; j++)
                ci[j] += a * bp[j];
        }
    }
}
