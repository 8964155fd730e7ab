/* Forward kinematics and the Jacobian of a robot arm from URDF.
 *
 *   example_fk_chain robot.urdf BASE_LINK TIP_LINK
 *
 * Prints the tip pose for a few joint vectors and the 6 x N Jacobian at the last one. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s robot.urdf BASE_LINK TIP_LINK\n", argv[0]);
        return 2;
    }
    mn_model* m = NULL;
    mn_error err;
    if (mn_urdf_read(argv[1], &m, NULL, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    int base = mn_model_find_joint(m, argv[2]), tip = mn_model_find_joint(m, argv[3]);
    mn_chain* chain = base >= 0 && tip >= 0 ? mn_chain_create(m, base, tip, &err) : NULL;
    if (!chain) {
        fprintf(stderr, "no chain from %s to %s\n", argv[2], argv[3]);
        mn_model_destroy(m);
        return 1;
    }
    double q[64] = {0}, J[6 * 64];
    mn_xform T;
    for (int step = 0; step < 3; step++) {
        for (int i = 0; i < chain->ndof; i++)
            q[i] = 0.2 * step * (i % 2 ? -1 : 1);
        mn_chain_fk_jacobian(m, chain, q, mn_v3(0, 0, 0), &T, J);
        mn_quat r = mn_quat_from_mat3(&T.R);
        printf("q = %.1f...: tip at (%.4f %.4f %.4f), orientation (%.4f %.4f %.4f %.4f)\n", q[0],
               T.p.x, T.p.y, T.p.z, r.w, r.x, r.y, r.z);
    }
    printf("Jacobian (rows: vx vy vz wx wy wz):\n");
    for (int r = 0; r < 6; r++) {
        for (int c = 0; c < chain->ndof; c++)
            printf(" %8.4f", J[r * chain->ndof + c]);
        printf("\n");
    }
    mn_chain_destroy(chain);
    mn_model_destroy(m);
    return 0;
}
