/* Operations on states: integrate a velocity, difference of two states, joint limits. */
#include "model/model_internal.h"

static mn_quat load_quat(const double* q) { return mn_q4(q[0], q[1], q[2], q[3]); }
static void store_quat(double* q, mn_quat r) { q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z; }

void mn_integrate(const mn_model* m, double* q, const double* v, double scale) {
    for (int j = 0; j < m->njoint; j++) {
        double* qj = q + m->jnt_qadr[j];
        const double* vj = v + m->jnt_dofadr[j];
        switch (m->jnt_type[j]) {
        case MN_JOINT_HINGE:
        case MN_JOINT_SLIDE: qj[0] += scale * vj[0]; break;
        case MN_JOINT_FREE:
            for (int i = 0; i < 3; i++) qj[i] += scale * vj[i];
            qj += 3;
            vj += 3;
            /* fall through */
        case MN_JOINT_BALL: {
            /* local angular velocity: q <- q exp(v dt) */
            mn_quat dq = mn_quat_exp(mn_v3(scale * vj[0], scale * vj[1], scale * vj[2]));
            store_quat(qj, mn_quat_normalize(mn_quat_mul(load_quat(qj), dq)));
            break;
        }
        default: break;
        }
    }
}

void mn_q_difference(const mn_model* m, const double* q1, const double* q0, double* v) {
    for (int j = 0; j < m->njoint; j++) {
        const double* a = q1 + m->jnt_qadr[j];
        const double* b = q0 + m->jnt_qadr[j];
        double* vj = v + m->jnt_dofadr[j];
        switch (m->jnt_type[j]) {
        case MN_JOINT_HINGE:
        case MN_JOINT_SLIDE: vj[0] = a[0] - b[0]; break;
        case MN_JOINT_FREE:
            for (int i = 0; i < 3; i++) vj[i] = a[i] - b[i];
            a += 3, b += 3, vj += 3;
            /* fall through */
        case MN_JOINT_BALL: {
            mn_vec3 w = mn_quat_log(mn_quat_mul(mn_quat_conj(load_quat(b)), load_quat(a)));
            vj[0] = w.x, vj[1] = w.y, vj[2] = w.z;
            break;
        }
        default: break;
        }
    }
}

static double wrap_pi(double a) {
    a = fmod(a + MN_PI, 2 * MN_PI);
    if (a < 0) a += 2 * MN_PI;
    return a - MN_PI;
}

/* Swing-twist split about unit axis a: q = swing * twist, twist about a. Returns the twist
 * angle in (-pi, pi] and the swing rotation vector. */
static void swing_twist(mn_quat q, mn_vec3 a, double* twist, mn_vec3* swing) {
    if (q.w < 0) q = mn_q4(-q.w, -q.x, -q.y, -q.z);
    double p = q.x * a.x + q.y * a.y + q.z * a.z;
    double tn = sqrt(q.w * q.w + p * p);
    mn_quat t = tn > 1e-12 ? mn_q4(q.w / tn, p * a.x / tn, p * a.y / tn, p * a.z / tn) : mn_quat_identity();
    *twist = tn > 1e-12 ? wrap_pi(2.0 * atan2(p, q.w)) : 0.0;
    *swing = mn_quat_log(mn_quat_mul(q, mn_quat_conj(t)));
}

static mn_quat clamp_ball(const mn_model* m, int j, mn_quat q) {
    mn_vec3 a = m->jnt_axis[j];
    double tw;
    mn_vec3 sw;
    swing_twist(mn_quat_normalize(q), a, &tw, &sw);
    double lo = m->jnt_twist[2 * j], hi = m->jnt_twist[2 * j + 1];
    int changed = 0;
    if (tw < lo) tw = lo, changed = 1;
    if (tw > hi) tw = hi, changed = 1;
    double cone = m->jnt_swing[j], ang = mn_vec3_norm(sw);
    if (ang > cone) {
        sw = ang > 0 ? mn_vec3_scale(sw, cone / ang) : sw;
        changed = 1;
    }
    if (!changed) return q;
    return mn_quat_mul(mn_quat_exp(sw), mn_quat_axis_angle(a, tw));
}

void mn_clamp_to_limits(const mn_model* m, double* q) {
    for (int j = 0; j < m->njoint; j++) {
        if (!m->jnt_limited[j]) continue;
        double* qj = q + m->jnt_qadr[j];
        int t = m->jnt_type[j];
        if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) {
            if (qj[0] < m->jnt_range[2 * j]) qj[0] = m->jnt_range[2 * j];
            if (qj[0] > m->jnt_range[2 * j + 1]) qj[0] = m->jnt_range[2 * j + 1];
        } else if (t == MN_JOINT_BALL) {
            store_quat(qj, clamp_ball(m, j, load_quat(qj)));
        }
    }
}

int mn_q_within_limits(const mn_model* m, const double* q, double tol) {
    if (mn_q_check(m, q) != MN_OK) return 0;
    for (int j = 0; j < m->njoint; j++) {
        const double* qj = q + m->jnt_qadr[j];
        int t = m->jnt_type[j];
        if (t == MN_JOINT_BALL || t == MN_JOINT_FREE) {
            const double* r = t == MN_JOINT_FREE ? qj + 3 : qj;
            double n2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
            if (fabs(n2 - 1.0) > 1e-6) return 0;
        }
        if (!m->jnt_limited[j]) continue;
        if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) {
            if (qj[0] < m->jnt_range[2 * j] - tol || qj[0] > m->jnt_range[2 * j + 1] + tol) return 0;
        } else if (t == MN_JOINT_BALL) {
            double tw;
            mn_vec3 sw;
            swing_twist(mn_quat_normalize(load_quat(qj)), m->jnt_axis[j], &tw, &sw);
            if (tw < m->jnt_twist[2 * j] - tol || tw > m->jnt_twist[2 * j + 1] + tol) return 0;
            if (mn_vec3_norm(sw) > m->jnt_swing[j] + tol) return 0;
        }
    }
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
