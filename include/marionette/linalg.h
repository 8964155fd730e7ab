/* Small dense linear algebra on caller-owned buffers. No allocation: every routine that
 * needs scratch takes it from a work array the caller sizes.
 *
 * Matrices are row-major: A[i*cols + j]. Sizes are small (up to a few hundred). Routines
 * overwrite their input with the factorisation unless the name says otherwise.
 *
 * Argument checks: the factorisations and solvers return MN_ERR_ARG for NULL pointers,
 * non-positive sizes and NaN or infinite entries. A pivot counts as zero when it is at most
 * tol * max|A| with tol = n * DBL_EPSILON (the "tol" below). The *_solve functions that
 * return void trust their caller: pass them factors from a call that returned MN_OK.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_LINALG_H
#define MARIONETTE_LINALG_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LU with partial pivoting of an n x n A (in place, L unit lower below the diagonal, U on
 * and above). piv (n) records the row swaps as LAPACK's dgetrf does (0-based): at step k,
 * row k was exchanged with row piv[k] >= k. MN_ERR_SINGULAR when a pivot is <= tol*max|A|
 * (the factors are still completed and finite, but must not be used to solve). */
mn_status mn_lu_factor(double* A, int n, int* piv);
/* Solves A x = b with the factors; b (n) is overwritten with x. */
void mn_lu_solve(const double* LU, int n, const int* piv, double* b);

/* Cholesky A = L L^T of a symmetric positive definite n x n A; only the lower triangle is
 * read, L is written there (the upper is left as it was). MN_ERR_SINGULAR when not
 * positive definite to working precision: a pivot d_i <= tol * max_i A_ii. */
mn_status mn_cholesky_factor(double* A, int n);
/* Solves L L^T x = b with the factor; b (n) is overwritten with x. */
void mn_cholesky_solve(const double* L, int n, double* b);

/* P A P^T = L D L^T with symmetric (Bunch-Kaufman) pivoting for symmetric indefinite A,
 * such as a KKT matrix [H G^T; G 0]; D is block diagonal with 1x1 and 2x2 blocks. Only the
 * lower triangle of A is read and overwritten by the factors (upper left as it was).
 * piv (n) and the block structure of D are recorded as in LAPACK's dsytrf (uplo 'L'),
 * 0-based: piv[k] >= 0 is a 1x1 block with rows/columns k and piv[k] exchanged;
 * piv[k] = piv[k+1] = -(p+1) is a 2x2 block at k, k+1 with k+1 and p exchanged.
 * MN_ERR_SINGULAR when D has a zero block (a pivot column <= tol*max|A|), for example a
 * KKT matrix whose G is rank deficient. */
mn_status mn_ldlt_factor(double* A, int n, int* piv);
/* Solves A x = b with the factors; b (n) is overwritten with x. */
void mn_ldlt_solve(const double* LDL, int n, const int* piv, double* b);
/* Inertia of A from its LDL^T factors (Sylvester's law: A and D have the same numbers of
 * positive, negative and zero eigenvalues). A 2x2 block of Bunch-Kaufman always has a
 * negative determinant, so it counts one of each. A KKT matrix [H G^T; G 0] with G of
 * full row rank m has inertia (n - m, m, 0) exactly when H is positive definite on the
 * null space of G, i.e. when the constrained problem is a proper minimum. Any of the
 * counts may be NULL. */
void mn_ldlt_inertia(const double* LDL, int n, const int* piv, int* npos, int* nneg, int* nzero);

/* Thin SVD of an m x n A (any shape): A = U diag(s) V^T with s descending (min(m,n)
 * values). U is m x min(m,n), V is n x min(m,n); either may be NULL when not wanted (the
 * call is faster without them). A is destroyed; s, U, V and work must not overlap A or
 * each other. work must hold mn_svd_work_size(m, n) doubles.
 * One-sided Jacobi (Hestenes) on the min(m,n) columns (m >= n) or rows (m < n): A is
 * reproduced to about 1e-14 relative, U and V are orthonormal to about 1e-15, and every
 * singular value above about 1e-145 * max|a_ij| is found to high relative accuracy when A
 * is a well-conditioned matrix with badly scaled columns (m >= n) or rows (m < n);
 * smaller ones are returned as exact zeros (the method works with squared norms). Rank
 * deficient and zero matrices are fine: the vectors of a zero singular value are
 * completed to an orthonormal set. No allocation. About 1.5 us for a 6 x 7 Jacobian
 * (marionette bench linalg). MN_ERR_ARG for NULL, sizes <= 0, NaN or infinite entries;
 * MN_ERR_NOCONVERGE (results still usable) if 60 sweeps did not converge. */
size_t mn_svd_work_size(int m, int n);
mn_status mn_svd(double* A, int m, int n, double* s, double* U, double* V, double* work);

/* Minimum-norm least squares x = A^+ b by truncated SVD (Welman 5.2.4): singular values
 * below rcond * s_max (and zero ones) are dropped. A (m x n) is destroyed, b (m) kept,
 * x (n) written; rank is the number of values kept (may be NULL). A zero A gives x = 0,
 * rank 0. rcond must be finite and >= 0 (0 keeps every non-zero value). Returns what
 * mn_svd returned (x is the solution for MN_OK and MN_ERR_NOCONVERGE); any other failure
 * past the NULL/size checks leaves x = 0.
 * work: mn_tsvd_work_size(m, n) doubles. */
size_t mn_tsvd_work_size(int m, int n);
mn_status mn_tsvd_solve(double* A, int m, int n, const double* b, double rcond, double* x,
                        int* rank, double* work);

/* Damped least squares x = A^T (A A^T + lambda^2 I)^-1 b (Parent eq. 5.24): A (m x n) is
 * kept, b (m) kept, x (n) written. work: m*m + m doubles. The smaller of the two
 * equivalent SPD systems is solved by Cholesky: A A^T + lambda^2 I (m x m) when m <= n,
 * else A^T A + lambda^2 I (n x n), as x = (A^T A + lambda^2 I)^-1 A^T b is the same x.
 * MN_ERR_SINGULAR (and x = 0) when that system is singular to working precision, which
 * happens only for lambda ~ 0 with a rank-deficient A (a tall A of full column rank then
 * gets its least-squares solution). MN_ERR_ARG (and x = 0) for a NaN or infinite lambda,
 * A or b. */
mn_status mn_dls_solve(const double* A, int m, int n, const double* b, double lambda, double* x,
                       double* work);

/* Small products; outputs must not alias inputs.
 * y (m) = A x for A m x n, x (n). */
void mn_matvec(const double* A, int m, int n, const double* x, double* y);
/* y (n) = A^T x for A m x n, x (m). */
void mn_matvec_t(const double* A, int m, int n, const double* x, double* y);
/* C (m x n) = A B for A m x k, B k x n. */
void mn_matmul(const double* A, const double* B, int m, int k, int n, double* C);
/* C (m x n) = A^T B for A k x m, B k x n (C = A^T A with B = A, n = m). */
void mn_matmul_tn(const double* A, const double* B, int k, int m, int n, double* C);

#ifdef __cplusplus
}
#endif
#endif
