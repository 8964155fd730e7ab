/* Dense kernels of the fit (private to the skin layer): a Cholesky for its rotation
 * metric, and a product with three right-hand sides for its translation step.
 *
 * The Cholesky is the same factorisation as mn_cholesky_factor / mn_cholesky_solve (Golub & Van
 * Loan, "Matrix Computations", alg. 4.2.1, by columns), arranged for the metric's size (3 x the
 * rotating controllers, 30 to 100): each column's dot products are taken four rows at a
 * time on two-lane vectors, so the column of L costs about a quarter of the loads. The
 * sums are grouped differently, so the factors agree with mn_cholesky_factor's to
 * rounding, not bit for bit. No allocation. */
#ifndef MARIONETTE_SKIN_DENSE_H
#define MARIONETTE_SKIN_DENSE_H

#include "core/v2d.h" /* mn_v2d, for the kernels here and the fit's per-vertex pass */

/* A = L L^T of a symmetric n x n A (row-major; only the lower triangle is read, L is
 * written there, 1 / L_ii into dinv (n)). Returns 1, or 0 when A is not positive definite
 * to working precision (a pivot <= n DBL_EPSILON max_i A_ii) or holds a NaN or an
 * infinity. */
int mn_chol_factor(double* A, int n, double* dinv);
/* Solves L L^T x = b with the factor and dinv of a call that returned 1; b (n) becomes x. */
void mn_chol_solve(const double* L, const double* dinv, int n, double* b);

/* x_a = Z b_a for the three vectors b_a = b + a n and x_a = x + a n (a = 0, 1, 2) and a
 * row-major n x n Z, the first rows entries of each x_a only (rows <= n; the rest are
 * left as they are): each row of Z is read once for the three. x must not overlap b. */
void mn_matvec3(const double* Z, int n, int rows, const double* b, double* x);

#endif
