/* Sampling a sequence at any frame (Welman 6.1.2: the in-betweens are computed on the fly
 * from the keys). Reads only the const sequence and its tables, writes only the caller's
 * state: reentrant and allocation-free. */
#include <math.h>
#include <string.h>

#include "anim_internal.h"

int mn_seq_locate(const mn_seq* s, double frame, double* u) {
    const double* f = s->key_frame;
    int n = s->nkey;
    *u = 0;
    if (!(frame > f[0])) return 0;
    if (frame >= f[n - 1]) return n - 1;
    int lo = 0, hi = n - 1; /* f[lo] <= frame < f[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) >> 1;
        if (f[mid] <= frame)
            lo = mid;
        else
            hi = mid;
    }
    *u = (frame - f[lo]) / (f[lo + 1] - f[lo]);
    return lo;
}

/* Slerp with the angle, its cosine and 1/sin precomputed (Shoemake 1985): one sine and
 * cosine per call, sin((1-u)t) = sin t cos(ut) - cos t sin(ut); nlerp when they coincide. */
static inline void slerp_pre(const double* a, const double* b, double th, double is, double cs,
                             double u, double* r) {
    double wa, wb;
    if (is > 0) {
        double s1, c1;
        mn_sincos(u * th, &s1, &c1);
        wb = s1 * is;
        wa = c1 - cs * wb;
    } else {
        wa = 1 - u, wb = u;
    }
    for (int i = 0; i < 4; i++)
        r[i] = wa * a[i] + wb * b[i];
}

/* Slerp of two unit quaternions without the shorter-arc flip (squad's outer slerp). */
static inline void slerp_full(const double* a, const double* b, double u, double* r) {
    double wa, wb;
    mn_anim_slerp_weights(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3], u, &wa, &wb);
    for (int i = 0; i < 4; i++)
        r[i] = wa * a[i] + wb * b[i];
}

mn_quat mn_anim_squad_inner(mn_quat prev, mn_quat q, mn_quat next) {
    mn_quat inv = mn_quat_conj(q);
    mn_vec3 r1 = mn_quat_log(mn_quat_mul(inv, next)), r2 = mn_quat_log(mn_quat_mul(inv, prev));
    return mn_quat_normalize(
        mn_quat_mul(q, mn_quat_exp(mn_vec3_scale(mn_vec3_add(r1, r2), -0.25))));
}

mn_quat mn_anim_unit_rotation(const seq_unit* un, const double* rec, double u) {
    double r[4];
    if (un->mode == MN_INTERP_CONSTANT) {
        memcpy(r, rec + R_QA, sizeof r);
    } else if (un->mode == MN_INTERP_SQUAD) {
        /* squad(q_k, q_k+1, s_k, s_k+1, u) = slerp(slerp(q_k, q_k+1, u), slerp(s_k, s_k+1, u),
         * 2u(1-u)) (Shoemake 1987) */
        double p[4], t[4];
        slerp_pre(rec + R_QA, rec + R_QB, rec[R_TH], rec[R_IS], rec[R_COS], u, p);
        slerp_pre(rec + R_SA, rec + R_SB, rec[R_THS], rec[R_ISS], rec[R_COSS], u, t);
        slerp_full(p, t, 2 * u * (1 - u), r);
    } else {
        slerp_pre(rec + R_QA, rec + R_QB, rec[R_TH], rec[R_IS], rec[R_COS], u, r);
    }
    double n2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
    double inv = 1.0 / sqrt(n2);
    return mn_q4(r[0] * inv, r[1] * inv, r[2] * inv, r[3] * inv);
}

/* The reference for a run's branch at parameter u of segment k: the hinge angles tracked
 * along the segment's rotation path, linearly between the table's points. */
static void run_reference(const mn_seq* s, int k, const seq_unit* un, double u, double* ref) {
    const double* tr =
        s->seg_track + ((size_t)k * (size_t)s->nrun + (size_t)un->run) * (RUN_TRACK + 1) * 3;
    double x = u * RUN_TRACK;
    int i0 = (int)x;
    if (i0 >= RUN_TRACK) i0 = RUN_TRACK - 1;
    double a = x - i0;
    for (int i = 0; i < 3; i++)
        ref[i] = tr[3 * i0 + i] + a * (tr[3 * i0 + 3 + i] - tr[3 * i0 + i]);
}

void mn_anim_run_angles(const mn_seq* s, const seq_unit* un, mn_quat r, const double* ref,
                        double* q) {
    double e[3], w[3];
    mn_mat3 R = mn_quat_to_mat3(r);
    mn_euler_from_mat3((mn_euler_order)un->order, &R, e);
    mn_euler_nearest(e, ref, 3, NULL, NULL, w);
    for (int i = 0; i < un->n; i++)
        q[un->qadr[i]] = mn_joint_clamp_value(s->m, un->jnt[i], un->sign[i] * w[i]);
}

/* A run's rotation on a segment that is not linear: rot (w, x, y, z) and ref, its branch's
 * reference; 0 when the segment falls back to linear in the angles (nothing written). */
static int run_rotation(const mn_seq* s, int k, const seq_unit* un, const double* rec, double u,
                        double* rot, double* ref) {
    if (rec[R_LIN] != 0) return 0;
    mn_quat r = mn_anim_unit_rotation(un, rec, u); /* already unit */
    rot[0] = r.w, rot[1] = r.x, rot[2] = r.y, rot[3] = r.z;
    run_reference(s, k, un, u, ref);
    return 1;
}

static void sample_unit(const mn_seq* s, int k, const seq_unit* un, const double* rec, double u,
                        double* q) {
    if (un->kind == UNIT_BALL_EULER) {
        double e[3];
        if (un->mode == MN_INTERP_CONSTANT) u = 0;
        for (int i = 0; i < 3; i++)
            e[i] = rec[R_EA + i] + u * (rec[R_EB + i] - rec[R_EA + i]);
        mn_quat r = mn_euler_to_quat((mn_euler_order)un->order, e);
        double* o = q + un->qadr[0];
        o[0] = r.w, o[1] = r.x, o[2] = r.y, o[3] = r.z;
        return;
    }
    if (un->kind == UNIT_QUAT) {
        mn_quat r = mn_anim_unit_rotation(un, rec, u);
        double* o = q + un->qadr[0];
        o[0] = r.w, o[1] = r.x, o[2] = r.y, o[3] = r.z;
        return;
    }
    /* a run of hinges: the rotation mapped back to the hinge angles, on the branch tracked
     * continuously along the segment from the first key's angles (no flips) */
    double rot[4], ref[3];
    if (run_rotation(s, k, un, rec, u, rot, ref)) {
        mn_anim_run_angles(s, un, mn_q4(rot[0], rot[1], rot[2], rot[3]), ref, q);
        return;
    }
    for (int i = 0; i < un->n; i++) {
        double w = rec[R_EA + i] + u * (rec[R_EB + i] - rec[R_EA + i]);
        q[un->qadr[i]] = mn_joint_clamp_value(s->m, un->jnt[i], un->sign[i] * w);
    }
}

mn_status mn_seq_sample(const mn_seq* s, double frame, double* q) {
    if (!s || !q || s->nkey == 0 || !isfinite(frame)) return MN_ERR_ARG;
    const mn_model* m = s->m;
    double u;
    int k = mn_seq_locate(s, frame, &u);
    if (u == 0) {
        /* at a key (or clamped to the ends): the key itself */
        memcpy(q, s->key_q + (size_t)k * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        return MN_OK;
    }
    /* every state number belongs to one scalar channel or one rotation unit */
    const double* c = s->seg_scalar + 4 * (size_t)k * (size_t)s->nscalar;
    const int* qa = s->sc_qadr;
    for (int i = 0, n = s->nscalar; i < n; i++, c += 4)
        q[qa[i]] = ((c[3] * u + c[2]) * u + c[1]) * u + c[0];
    const double* rec = s->seg_rot + R_STRIDE * (size_t)k * (size_t)s->nunit;
    for (int i = 0, n = s->nunit; i < n; i++, rec += R_STRIDE)
        sample_unit(s, k, &s->unit[i], rec, u, q);
    if (s->has_limited_ball) mn_clamp_to_limits(m, q);
    return MN_OK;
}

mn_status mn_seq_sample_data(const mn_seq* s, mn_data* d, double frame) {
    if (!s || !d || d->nq != s->m->nq) return MN_ERR_ARG;
    mn_status st = mn_seq_sample(s, frame, d->q);
    if (st == MN_OK) mn_fk(s->m, d);
    return st;
}

void mn_seq_sample_runs(const mn_seq* s, double frame, double* q, double* rot, double* ref,
                        double* held) {
    const mn_model* m = s->m;
    double u;
    int k = mn_seq_locate(s, frame, &u);
    for (int i = 0; i < s->nunit; i++)
        held[i] = 0;
    if (u == 0) {
        memcpy(q, s->key_q + (size_t)k * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        return;
    }
    const double* c = s->seg_scalar + 4 * (size_t)k * (size_t)s->nscalar;
    const int* qa = s->sc_qadr;
    for (int i = 0, n = s->nscalar; i < n; i++, c += 4)
        q[qa[i]] = ((c[3] * u + c[2]) * u + c[1]) * u + c[0];
    const double* rec = s->seg_rot + R_STRIDE * (size_t)k * (size_t)s->nunit;
    for (int i = 0, n = s->nunit; i < n; i++, rec += R_STRIDE) {
        const seq_unit* un = &s->unit[i];
        if (un->kind == UNIT_RUN && run_rotation(s, k, un, rec, u, rot + 4 * i, ref + 3 * i))
            held[i] = 1;
        else
            sample_unit(s, k, un, rec, u, q);
    }
}
