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
    for (int i = 0; i < 4; i++)
        q[i] *= k;
}

/* mn_xform is 12 contiguous doubles (R row-major, then p): the steps work on it in place. */
static inline double* frame_R(mn_xform* X) {
    return X->R.m;
}
static inline double* frame_p(mn_xform* X) {
    return &X->p.x;
}

static void fk_range(const mn_model* m, mn_data* d, int lo, int hi) {
    const mn_jop* ops = m->jnt_ops;
    static const mn_xform identity = {{{1, 0, 0, 0, 1, 0, 0, 0, 1}}, {0, 0, 0}};
    for (int j = lo; j < hi; j++) {
        double* qj = d->q + m->jnt_qadr[j];
        int t = m->jnt_type[j];
        if (t == MN_JOINT_BALL)
            fix_quat(qj);
        else if (t == MN_JOINT_FREE)
            fix_quat(qj + 3);
        /* On local copies: the compiler keeps them in registers (d->xf may alias qj). */
        int p = m->jnt_parent[j];
        const mn_xform* P = p >= 0 ? &d->xf[p] : &identity;
        double R[9], pos[3] = {P->p.x, P->p.y, P->p.z};
        for (int i = 0; i < 9; i++)
            R[i] = P->R.m[i];
        mn_jop_apply(&ops[j], qj, R, pos);
        mn_xform* X = &d->xf[j];
        for (int i = 0; i < 9; i++)
            X->R.m[i] = R[i];
        X->p = mn_v3(pos[0], pos[1], pos[2]);
    }
}

void mn_fk(const mn_model* m, mn_data* d) {
    fk_range(m, d, 0, m->njoint);
}

void mn_fk_subtree(const mn_model* m, mn_data* d, int root) {
    if (root < 0)
        fk_range(m, d, 0, m->njoint);
    else
        fk_range(m, d, root, m->jnt_subtree_end[root]);
}

void mn_fk_path(const mn_model* m, mn_data* d, int joint) {
    if (joint < 0) return;
    int path[64], n = 0;
    for (int k = joint; k >= 0; k = m->jnt_parent[k]) {
        if (n == 64) { /* a deeper tree: the whole figure */
            mn_fk(m, d);
            return;
        }
        path[n++] = k;
    }
    for (int i = n - 1; i >= 0; i--)
        fk_range(m, d, path[i], path[i] + 1);
}

void mn_joint_apply(const mn_model* m, int joint, const double* qj, mn_xform* X) {
    mn_jop_apply(&((const mn_jop*)m->jnt_ops)[joint], qj, frame_R(X), frame_p(X));
}

mn_vec3 mn_point_world(const mn_data* d, int joint, mn_vec3 local) {
    return mn_xform_apply(&d->xf[joint], local);
}

mn_vec3 mn_point_local(const mn_data* d, int joint, mn_vec3 world) {
    const mn_xform* X = &d->xf[joint];
    return mn_mat3_tmulv(&X->R, mn_vec3_sub(world, X->p));
}
