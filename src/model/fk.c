/* Forward kinematics: every joint's world frame in one pass, parent before child
 * (Parent ch. 5, "forward kinematics": the depth-first traversal that concatenates each
 * arc's placement and articulation; here the traversal order is baked into the model). */
#include "model/model_internal.h"

/* Re-normalises a quaternion in q when it drifted; a zero or non-finite one becomes the
 * identity, so NaN never propagates into frames. */
static void fix_quat(double* q) {
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (n2 > 1.0 - 1e-12 && n2 < 1.0 + 1e-12) return;
    if (!(n2 > 0) || !isfinite(n2)) {
        q[0] = 1, q[1] = q[2] = q[3] = 0;
        return;
    }
    double k = 1.0 / sqrt(n2);
    for (int i = 0; i < 4; i++) q[i] *= k;
}

void mn_fk(const mn_model* m, mn_data* d) {
    const mn_mat3 I = mn_mat3_identity();
    const mn_vec3 zero = {0, 0, 0};
    for (int j = 0; j < m->njoint; j++) {
        double* qj = d->q + m->jnt_qadr[j];
        int t = m->jnt_type[j];
        if (t == MN_JOINT_BALL) fix_quat(qj);
        else if (t == MN_JOINT_FREE) fix_quat(qj + 3);
        int p = m->jnt_parent[j];
        const mn_mat3* PR = p >= 0 ? &d->xf[p].R : &I;
        mn_vec3 Pp = p >= 0 ? d->xf[p].p : zero;
        mn_joint_compose(m, j, qj, PR, Pp, &d->xf[j].R, &d->xf[j].p);
    }
}

mn_vec3 mn_point_world(const mn_data* d, int joint, mn_vec3 local) {
    return mn_xform_apply(&d->xf[joint], local);
}
