/* Dense linear algebra on caller-owned buffers: the SVD of a redundant arm's Jacobian,
 * a pseudoinverse step near a singularity with and without damping, and a KKT system
 * solved by LDL^T.
 *
 *   example_linalg_solve
 */
#include <marionette/linalg.h>

#include <math.h>
#include <stdio.h>

int main(void) {
    /* Position Jacobian (3 x 4) of a planar-ish 4-joint arm almost stretched out: the
     * second row is nearly a multiple of the first, so one direction is hard to move in. */
    double J[12] = {0.0, 0.1, 0.2, 0.3, 0.0, 0.1001, 0.2, 0.2999, 1.0, 0.9, 0.7, 0.4};
    double A[12], s[3], U[9], V[12];
    double work[64]; /* >= mn_svd_work_size(3, 4) and mn_tsvd_work_size(3, 4) */
    if (mn_tsvd_work_size(3, 4) > 64) return 1;

    for (int i = 0; i < 12; i++)
        A[i] = J[i];
    if (mn_svd(A, 3, 4, s, U, V, work) != MN_OK) return 1;
    printf("singular values: %.4g %.4g %.4g (condition %.3g)\n", s[0], s[1], s[2], s[0] / s[2]);

    /* Ask the tip to move 1 cm along the weak direction u_3. */
    double dx[3] = {0.01 * U[2], 0.01 * U[5], 0.01 * U[8]};
    double dq[4];
    int rank;

    /* Pseudoinverse: the step blows up like 1 / s_min (Welman 3.2.2). */
    for (int i = 0; i < 12; i++)
        A[i] = J[i];
    mn_tsvd_solve(A, 3, 4, dx, 0, dq, &rank, work);
    printf("pseudoinverse   |dq| = %8.4f rad (rank %d)\n",
           sqrt(dq[0] * dq[0] + dq[1] * dq[1] + dq[2] * dq[2] + dq[3] * dq[3]), rank);

    /* Truncated SVD: drop the weak direction instead (Welman 5.2.4); the whole request
     * lies along it here, so the arm does not move at all. */
    for (int i = 0; i < 12; i++)
        A[i] = J[i];
    mn_tsvd_solve(A, 3, 4, dx, 1e-3, dq, &rank, work);
    printf("truncated SVD   |dq| = %8.4f rad (rank %d)\n",
           sqrt(dq[0] * dq[0] + dq[1] * dq[1] + dq[2] * dq[2] + dq[3] * dq[3]), rank);

    /* Damped least squares: bounded step, partial progress (Parent eq. 5.24). */
    mn_dls_solve(J, 3, 4, dx, 0.01, dq, work);
    printf("damped (0.01)   |dq| = %8.4f rad\n",
           sqrt(dq[0] * dq[0] + dq[1] * dq[1] + dq[2] * dq[2] + dq[3] * dq[3]));

    /* A KKT system [H G^T; G 0] [x; y] = [f; g]: minimise 1/2 x^T H x - f^T x subject to
     * x0 + x1 + x2 = 1. It is symmetric indefinite, so Cholesky fails and LDL^T works. */
    double K[16] = {4, 1, 0, 1, 1, 3, 1, 1, 0, 1, 2, 1, 1, 1, 1, 0};
    double rhs[4] = {1, 2, 0, 1};
    double K2[16];
    int piv[4];
    for (int i = 0; i < 16; i++)
        K2[i] = K[i];
    printf("cholesky on the KKT matrix: %s\n", mn_status_name(mn_cholesky_factor(K2, 4)));
    if (mn_ldlt_factor(K, 4, piv) != MN_OK) return 1;
    mn_ldlt_solve(K, 4, piv, rhs);
    printf("LDL^T: x = (%.4f, %.4f, %.4f), multiplier %.4f, x0 + x1 + x2 = %.15g\n", rhs[0], rhs[1],
           rhs[2], rhs[3], rhs[0] + rhs[1] + rhs[2]);
    return 0;
}
