/* Operations on whole states: integrate a velocity, difference of two states, joint limits
 * (each joint by the per-joint primitives of joint.c). */
#include "model/model_internal.h"

static mn_quat load_quat(const double* q) {
    return mn_q4(q[0], q[1], q[2], q[3]);
}

void mn_integrate(const mn_model* m, double* q, const double* v, double scale) {
    for (int j = 0; j < m->njoint; j++)
        mn_joint_integrate((mn_joint_type)m->jnt_type[j], q + m->jnt_qadr[j], v + m->jnt_dofadr[j],
                           scale);
}

void mn_q_difference(const mn_model* m, const double* q1, const double* q0, double* v) {
    for (int j = 0; j < m->njoint; j++) {
        const double* a = q1 + m->jnt_qadr[j];
        const double* b = q0 + m->jnt_qadr[j];
        double* vj = v + m->jnt_dofadr[j];
        switch (m->jnt_type[j]) {
        case MN_JOINT_HINGE:
        case MN_JOINT_SLIDE:
            vj[0] = a[0] - b[0];
            break;
        case MN_JOINT_FREE:
            for (int i = 0; i < 3; i++)
                vj[i] = a[i] - b[i];
            a += 3, b += 3, vj += 3;
            /* fall through */
        case MN_JOINT_BALL: {
            mn_vec3 w = mn_quat_log(mn_quat_mul(mn_quat_conj(load_quat(b)), load_quat(a)));
            vj[0] = w.x, vj[1] = w.y, vj[2] = w.z;
            break;
        }
        default:
            break;
        }
    }
}

void mn_clamp_to_limits(const mn_model* m, double* q) {
    for (int j = 0; j < m->njoint; j++)
        mn_joint_clamp(m, j, q + m->jnt_qadr[j]);
}

int mn_q_within_limits(const mn_model* m, const double* q, double tol) {
    if (mn_q_check(m, q) != MN_OK) return 0;
    for (int j = 0; j < m->njoint; j++)
        if (!mn_joint_within_limits(m, j, q + m->jnt_qadr[j], tol)) return 0;
    return 1;
}

mn_status mn_q_check(const mn_model* m, const double* q) {
    if (!m || !q) return MN_ERR_ARG;
    for (int i = 0; i < m->nq; i++)
        if (!isfinite(q[i])) return MN_ERR_ARG;
    for (int j = 0; j < m->njoint; j++) {
        int t = m->jnt_type[j];
        if (t != MN_JOINT_BALL && t != MN_JOINT_FREE) continue;
        const double* r = q + m->jnt_qadr[j] + (t == MN_JOINT_FREE ? 3 : 0);
        if (r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3] < 1e-12) return MN_ERR_ARG;
    }
    return MN_OK;
}

/* T = Trans(off + p) Rot(orient) Rot(quat) moved by P: p' = P.R (off + p) + P.p - off,
 * quat' = orient^-1 P.R orient quat. */
void mn_free_joint_place(const mn_model* m, int j, const mn_xform* P, double* q) {
    mn_vec3 off = m->jnt_offset[j];
    mn_vec3 p = mn_vec3_add(mn_mat3_mulv(&P->R, mn_vec3_add(off, mn_v3(q[0], q[1], q[2]))),
                            mn_vec3_sub(P->p, off));
    mn_quat o = m->jnt_orient[j], pr = mn_quat_from_mat3(&P->R);
    mn_quat r = mn_quat_mul(mn_quat_mul(mn_quat_conj(o), pr),
                            mn_quat_mul(o, mn_q4(q[3], q[4], q[5], q[6])));
    r = mn_quat_normalize(r);
    q[0] = p.x, q[1] = p.y, q[2] = p.z;
    q[3] = r.w, q[4] = r.x, q[5] = r.y, q[6] = r.z;
}
