/* The per-joint primitives of model.h: manifold integration and joint limits. The Jacobian
 * columns and the CCD hinge step are inline in model.h (the solvers' hot loops). */
#include "model/model_internal.h"

static mn_quat load_quat(const double* q) {
    return mn_q4(q[0], q[1], q[2], q[3]);
}
static void store_quat(double* q, mn_quat r) {
    q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z;
}

void mn_joint_integrate(mn_joint_type t, double* qj, const double* vj, double scale) {
    switch (t) {
    case MN_JOINT_HINGE:
    case MN_JOINT_SLIDE:
        qj[0] += scale * vj[0];
        return;
    case MN_JOINT_FREE:
        for (int i = 0; i < 3; i++)
            qj[i] += scale * vj[i];
        qj += 3;
        vj += 3;
        /* fall through */
    case MN_JOINT_BALL: {
        /* local angular velocity: q <- q exp(v dt) */
        mn_quat dq = mn_quat_exp(mn_v3(scale * vj[0], scale * vj[1], scale * vj[2]));
        store_quat(qj, mn_quat_normalize(mn_quat_mul(load_quat(qj), dq)));
        return;
    }
    default:
        return;
    }
}

void mn_swing_twist(mn_quat q, mn_vec3 a, double* twist, mn_vec3* swing) {
    if (q.w < 0) q = mn_q4(-q.w, -q.x, -q.y, -q.z);
    double p = q.x * a.x + q.y * a.y + q.z * a.z;
    double tn = sqrt(q.w * q.w + p * p);
    /* tn = 0: a half turn about an axis across a, no twist */
    mn_quat t =
        tn > 1e-12 ? mn_q4(q.w / tn, p * a.x / tn, p * a.y / tn, p * a.z / tn) : mn_quat_identity();
    *twist = tn > 1e-12 ? mn_angle_wrap(2.0 * atan2(p, q.w)) : 0.0;
    *swing = mn_quat_log(mn_quat_mul(q, mn_quat_conj(t)));
}

/* The projection of the normalised q (w >= 0); *changed says whether a limit acted. */
static mn_quat ball_project(mn_quat q, mn_vec3 a, double cone, double tw_lo, double tw_hi,
                            int* changed) {
    q = mn_quat_normalize(q);
    if (q.w < 0) q = mn_q4(-q.w, -q.x, -q.y, -q.z);
    double tw;
    mn_vec3 sw;
    mn_swing_twist(q, a, &tw, &sw);
    *changed = 0;
    if (tw < tw_lo) tw = tw_lo, *changed = 1;
    if (tw > tw_hi) tw = tw_hi, *changed = 1;
    double ang = mn_vec3_norm(sw);
    if (ang > cone) {
        sw = mn_vec3_scale(sw, (cone > 0 ? cone : 0.0) / ang);
        *changed = 1;
    }
    if (!*changed) return q;
    return mn_quat_normalize(mn_quat_mul(mn_quat_exp(sw), mn_quat_axis_angle(a, tw)));
}

mn_quat mn_ball_clamp(mn_quat q, mn_vec3 a, double cone, double tw_lo, double tw_hi) {
    int changed;
    return ball_project(q, a, cone, tw_lo, tw_hi, &changed);
}

int mn_joint_clamp(const mn_model* m, int j, double* qj) {
    if (!m->jnt_limited[j]) return 0;
    switch (m->jnt_type[j]) {
    case MN_JOINT_HINGE:
    case MN_JOINT_SLIDE: {
        double v = mn_joint_clamp_value(m, j, qj[0]);
        if (v == qj[0]) return 0;
        qj[0] = v;
        return 1;
    }
    case MN_JOINT_BALL: {
        int changed;
        mn_quat c = ball_project(load_quat(qj), m->jnt_axis[j], m->jnt_swing[j],
                                 m->jnt_twist[2 * j], m->jnt_twist[2 * j + 1], &changed);
        if (!changed) return 0; /* within the limits: q is left exactly as it was */
        store_quat(qj, c);
        return 1;
    }
    default:
        return 0;
    }
}

int mn_joint_within_limits(const mn_model* m, int j, const double* qj, double tol) {
    int t = m->jnt_type[j], nq = mn_joint_type_nq((mn_joint_type)t);
    for (int i = 0; i < nq; i++)
        if (!isfinite(qj[i])) return 0;
    if (t == MN_JOINT_BALL || t == MN_JOINT_FREE) {
        const double* r = t == MN_JOINT_FREE ? qj + 3 : qj;
        double n2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
        if (fabs(n2 - 1.0) > 1e-6) return 0;
    }
    if (!m->jnt_limited[j]) return 1;
    if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE)
        return qj[0] >= m->jnt_range[2 * j] - tol && qj[0] <= m->jnt_range[2 * j + 1] + tol;
    if (t == MN_JOINT_BALL) {
        double tw;
        mn_vec3 sw;
        mn_swing_twist(mn_quat_normalize(load_quat(qj)), m->jnt_axis[j], &tw, &sw);
        if (tw < m->jnt_twist[2 * j] - tol || tw > m->jnt_twist[2 * j + 1] + tol) return 0;
        if (mn_vec3_norm(sw) > m->jnt_swing[j] + tol) return 0;
    }
    return 1;
}
