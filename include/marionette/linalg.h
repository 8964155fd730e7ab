/* Small dense linear algebra on caller-owned buffers. No allocation: every routine that
 * needs scratch takes it from an arena or a work array the caller sizes.
 *
 * Matrices are row-major: A[i*cols + j]. Sizes are small (up to a few hundred). Routines
 * overwrite their input with the factorisation unless the name says otherwise. */
#ifndef MARIONETTE_LINALG_H
#define MARIONETTE_LINALG_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LU with partial pivoting of an n x n A (in place, L unit lower below the diagonal, U on
 * and above). piv (n) records the row swaps. MN_ERR_SINGULAR when a pivot is <= tol*max|A|. */
mn_status mn_lu_factor(double* A, int n, int* piv);
/* Solves A x = b with the factors; b (n) is overwritten with x. */
void mn_lu_solve(const double* LU, int n, const int* piv, double* b);

/* Cholesky A = L L^T of a symmetric positive definite n x n A; L in the lower triangle
 * (the upper is left as it was). MN_ERR_SINGULAR when not positive definite. */
mn_status mn_cholesky_factor(double* A, int n);
void mn_cholesky_solve(const double* L, int n, double* b);

/* LDL^T with symmetric (Bunch-Kaufman) pivoting for symmetric indefinite A, such as a
 * KKT matrix [H G^T; G 0]. A is overwritten by the factors; piv (n) and the block
 * structure of D are recorded as in LAPACK's dsytrf. MN_ERR_SINGULAR when D has a zero
 * block (relative to tol*max|A|). */
mn_status mn_ldlt_factor(double* A, int n, int* piv);
void mn_ldlt_solve(const double* LDL, int n, const int* piv, double* b);

/* Thin SVD of an m x n A (any shape): A = U diag(s) V^T with s descending (min(m,n)
 * values). U is m x min(m,n), V is n x min(m,n); either may be NULL when not wanted. A is
 * destroyed. work must hold mn_svd_work_size(m, n) doubles. One-sided Jacobi: accurate to
 * about 1e-14 relative on well-conditioned input. */
size_t mn_svd_work_size(int m, int n);
mn_status mn_svd(double* A, int m, int n, double* s, double* U, double* V, double* work);

/* Minimum-norm least squares x = A^+ b by truncated SVD: singular values below
 * rcond * s_max are dropped. A (m x n) is destroyed, b (m) kept, x (n) written; rank is
 * the number of values kept (may be NULL). work: mn_tsvd_work_size(m, n) doubles. */
size_t mn_tsvd_work_size(int m, int n);
mn_status mn_tsvd_solve(double* A, int m, int n, const double* b, double rcond, double* x,
                        int* rank, double* work);

/* Damped least squares x = A^T (A A^T + lambda^2 I)^-1 b (Parent eq. 5.24): A (m x n) is
 * kept, b (m) kept, x (n) written. work: m*m + m doubles. */
mn_status mn_dls_solve(const double* A, int m, int n, const double* b, double lambda, double* x,
                       double* work);

/* y = A x, y = A^T x, C = A B, C = A^T A helpers for small matrices. */
void mn_matvec(const double* A, int m, int n, const double* x, double* y);
void mn_matvec_t(const double* A, int m, int n, const double* x, double* y);
void mn_matmul(const double* A, const double* B, int m, int k, int n, double* C);

#ifdef __cplusplus
}
#endif
#endif
