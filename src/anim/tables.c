/* The sampling tables of a sequence, rebuilt after every change (Welman 6.1.2: in-betweens
 * are computed from the keys on the fly; here everything that depends only on the keys is
 * computed once, so a sample is a segment look-up and a few polynomial evaluations).
 *
 * Scalar channels become one cubic per segment:
 *   LINEAR                p_k + u (p_k+1 - p_k)
 *   CATMULL_ROM, KB       cubic Hermite with Kochanek-Bartels tangents (Kochanek and Bartels
 *                         1984, eq. 8-9, with their adjustment for unequal key spacing);
 *                         Catmull-Rom is KB with tension = continuity = bias = 0
 *   SQUAD (one hinge)     Shoemake's squad of rotations about one fixed axis, which is a
 *                         cubic in the angle (see scalar_squad)
 * Rotation units keep, per segment, the two keys' quaternions in one hemisphere, the squad
 * inner points s_k = q_k exp(-(log(q_k^-1 q_k+1) + log(q_k^-1 q_k-1)) / 4) (Shoemake 1987),
 * and the slerp angles. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_internal.h"

static int eff_rot(const mn_seq* s, int j) {
    return s->jnt_rot[j] ? s->jnt_rot[j] : (int)s->rot_default;
}
static int eff_trans(const mn_seq* s, int j) {
    return s->jnt_trans[j] ? s->jnt_trans[j] : (int)s->trans_default;
}

/* Coordinate axis (0, 1, 2) and sign of a unit axis along one, or -1. */
static int axis_kind(mn_vec3 a, double* sign) {
    const double e = 1e-12;
    if (fabs(fabs(a.x) - 1) < e && fabs(a.y) < e && fabs(a.z) < e)
        return *sign = a.x > 0 ? 1 : -1, 0;
    if (fabs(fabs(a.y) - 1) < e && fabs(a.x) < e && fabs(a.z) < e)
        return *sign = a.y > 0 ? 1 : -1, 1;
    if (fabs(fabs(a.z) - 1) < e && fabs(a.x) < e && fabs(a.y) < e)
        return *sign = a.z > 0 ? 1 : -1, 2;
    return -1;
}

static int euler_order_of(int a, int b, int c) {
    static const int axes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                   {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int o = 0; o < 6; o++)
        if (axes[o][0] == a && axes[o][1] == b && axes[o][2] == c) return o;
    return -1;
}

/* The next joint of a compound joint after j (Welman 6.1.1: a series of 1-DOF joints with
 * zero offset): a HINGE child at j's origin with the identity orientation, or -1. */
static int run_next(const mn_model* m, int j) {
    for (int c = j + 1; c < m->njoint; c++) {
        if (m->jnt_parent[c] != j || m->jnt_type[c] != MN_JOINT_HINGE) continue;
        mn_vec3 o = m->jnt_offset[c];
        if (o.x != 0 || o.y != 0 || o.z != 0 || !m->jnt_orient_ident[c]) continue;
        return c;
    }
    return -1;
}

/* Shoemake's squad of a rotation about one fixed axis, written in the angle: with s_k the
 * inner angles, squad(u) = L1 + 2u(1-u)(L2 - L1), L1 = lerp(p_k, p_k+1, u), L2 = lerp(s_k,
 * s_k+1, u): a cubic. */
static double squad_inner(const double* p, int k, int n) {
    if (k == 0 || k == n - 1) return p[k];
    return p[k] - ((p[k + 1] - p[k]) + (p[k - 1] - p[k])) / 4;
}

/* Kochanek-Bartels tangents of segment k (keys k, k+1) in units of the segment parameter. */
static void kb_tangents(const double* f, const double* p, const double* tcb, int k, int n,
                        double* m0, double* m1) {
    double d = f[k + 1] - f[k];
    double dprev = k > 0 ? f[k] - f[k - 1] : d, dnext = k + 2 < n ? f[k + 2] - f[k + 1] : d;
    double pprev = k > 0 ? p[k - 1] : p[k], pnext = k + 2 < n ? p[k + 2] : p[k + 1];
    const double* a = tcb + 3 * k;
    const double* b = tcb + 3 * (k + 1);
    /* outgoing tangent at k */
    double t = a[0], c = a[1], bi = a[2];
    double out = ((1 - t) * (1 + c) * (1 + bi) / 2) * (p[k] - pprev) +
                 ((1 - t) * (1 - c) * (1 - bi) / 2) * (p[k + 1] - p[k]);
    *m0 = out * 2 * d / (dprev + d);
    /* incoming tangent at k+1 */
    t = b[0], c = b[1], bi = b[2];
    double in = ((1 - t) * (1 - c) * (1 + bi) / 2) * (p[k + 1] - p[k]) +
                ((1 - t) * (1 + c) * (1 - bi) / 2) * (pnext - p[k + 1]);
    *m1 = in * 2 * d / (d + dnext);
}

static void scalar_coeffs(const mn_seq* s, int mode, const double* p, const double* zero_tcb, int k,
                          double c[4]) {
    int n = s->nkey;
    c[0] = p[k], c[1] = c[2] = c[3] = 0;
    if (k >= n - 1 || mode == MN_INTERP_CONSTANT) return;
    double dp = p[k + 1] - p[k];
    if (mode == MN_INTERP_LINEAR || mode == MN_INTERP_SLERP) {
        c[1] = dp;
    } else if (mode == MN_INTERP_SQUAD) {
        double d0 = squad_inner(p, k, n) - p[k];
        double d1 = (squad_inner(p, k + 1, n) - squad_inner(p, k, n)) - dp;
        c[1] = dp + 2 * d0;
        c[2] = 2 * d1 - 2 * d0;
        c[3] = -2 * d1;
    } else { /* CATMULL_ROM, KB: cubic Hermite */
        double m0, m1;
        kb_tangents(s->key_frame, p, mode == MN_INTERP_KB ? s->key_tcb : zero_tcb, k, n, &m0, &m1);
        c[1] = m0;
        c[2] = -3 * p[k] - 2 * m0 + 3 * p[k + 1] - m1;
        c[3] = 2 * p[k] + m0 - 2 * p[k + 1] + m1;
    }
}

static mn_quat qload(const double* r) {
    return mn_q4(r[0], r[1], r[2], r[3]);
}
static void qstore(double* r, mn_quat q) {
    r[0] = q.w, r[1] = q.x, r[2] = q.y, r[3] = q.z;
}

/* Key k's rotation of unit u and, for runs and balls in Euler angles, its angles. */
static mn_quat unit_key(const mn_seq* s, const seq_unit* u, int k, double e[3]) {
    const double* q = s->key_q + (size_t)k * (size_t)s->m->nq;
    if (u->kind == UNIT_RUN) {
        e[0] = e[1] = e[2] = 0;
        for (int i = 0; i < u->n; i++)
            e[i] = u->sign[i] * q[u->qadr[i]];
        return mn_euler_to_quat((mn_euler_order)u->order, e);
    }
    mn_quat r = mn_quat_normalize(qload(q + u->qadr[0]));
    if (u->kind == UNIT_BALL_EULER) mn_euler_from_quat((mn_euler_order)u->order, r, e);
    return r;
}

static void slerp_setup(const double* a, const double* b, double* th, double* is, double* cs) {
    double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    if (d > 1) d = 1;
    if (d < -1) d = -1;
    double t = acos(d), sn = sin(t);
    *th = t;
    *is = sn > 1e-9 ? 1.0 / sn : 0.0;
    *cs = cos(t);
}

/* Follows a run's hinge angles along segment k's rotation path from the first key's angles
 * and keeps the path only when it stays within the limits and arrives at the second key's
 * angles; otherwise the segment is interpolated linearly in the angles (an interpolated
 * rotation that the compound joint cannot follow without leaving its limits or flipping
 * branch would be a flip in the joint variables). */
static void track_run(const mn_seq* s, const seq_unit* u, int k, double* rec) {
    double* tr =
        s->seg_track + ((size_t)k * (size_t)s->nrun + (size_t)u->run) * (RUN_TRACK + 1) * 3;
    double prev[3], prev2[3], e[3];
    memcpy(prev, rec + R_EA, sizeof prev);
    memcpy(prev2, prev, sizeof prev);
    memcpy(tr, prev, sizeof prev);
    int ok = 1;
    /* finer steps inside, so the branch is followed through fast changes near gimbal lock */
    const int sub = 8;
    for (int i = 1; i <= RUN_TRACK * sub; i++) {
        mn_euler_from_quat((mn_euler_order)u->order,
                           mn_anim_unit_rotation(u, rec, (double)i / (RUN_TRACK * sub)), e);
        /* predict linearly from the last two steps: through a gimbal lock the middle angle
         * keeps going rather than bouncing back */
        double ref[3];
        for (int a = 0; a < 3; a++)
            ref[a] = i > 1 ? 2 * prev[a] - prev2[a] : prev[a];
        memcpy(prev2, prev, sizeof prev);
        mn_euler_nearest(e, ref, 3, NULL, NULL, prev);
        for (int a = 0; a < u->n; a++) {
            double v = u->sign[a] * prev[a];
            if (!mn_joint_within_limits(s->m, u->jnt[a], &v, 1e-9)) ok = 0;
        }
        if (i % sub == 0) memcpy(tr + 3 * (i / sub), prev, sizeof prev);
    }
    for (int a = 0; a < u->n; a++)
        if (fabs(prev[a] - rec[R_EB + a]) > 1e-6) ok = 0;
    if (!ok) rec[R_LIN] = 1;
}

void mn_seq_free_tables(mn_seq* s) {
    free(s->sc_qadr);
    free(s->unit);
    free(s->run_first);
    free(s->run_len);
    free(s->seg_scalar);
    free(s->seg_rot);
    free(s->seg_track);
    s->sc_qadr = NULL, s->unit = NULL, s->run_first = s->run_len = NULL,
    s->seg_scalar = s->seg_rot = NULL;
    s->seg_track = NULL;
    s->nscalar = s->nunit = s->nrun = 0;
    s->has_limited_ball = 0;
}

mn_status mn_seq_rebuild(mn_seq* s) {
    const mn_model* m = s->m;
    mn_seq_free_tables(s);

    int nj = m->njoint;
    s->sc_qadr = malloc(sizeof(int) * (size_t)(m->nq + 1));
    int* sc_mode = malloc(sizeof(int) * (size_t)(m->nq + 1));
    s->unit = malloc(sizeof(seq_unit) * (size_t)(nj + 1));
    s->run_first = malloc(sizeof(int) * (size_t)(nj + 1));
    s->run_len = malloc(sizeof(int) * (size_t)(nj + 1));
    char* done = calloc((size_t)nj + 1, 1);
    if (!s->sc_qadr || !sc_mode || !s->unit || !s->run_first || !s->run_len || !done) {
        free(sc_mode);
        free(done);
        return MN_ERR_NOMEM;
    }
    /* channels and units */
    for (int j = 0; j < nj; j++) {
        if (done[j]) continue;
        int t = m->jnt_type[j], qa = m->jnt_qadr[j];
        int rm = eff_rot(s, j), tm = eff_trans(s, j);
        if (t == MN_JOINT_SLIDE) {
            s->sc_qadr[s->nscalar] = qa, sc_mode[s->nscalar++] = tm;
        } else if (t == MN_JOINT_HINGE) {
            /* a compound joint interpolated as one rotation? */
            int run[3] = {j, -1, -1}, n = 1;
            double sg[3];
            int kind[3];
            kind[0] = axis_kind(m->jnt_axis[j], &sg[0]);
            if ((rm == MN_INTERP_SLERP || rm == MN_INTERP_SQUAD) && kind[0] >= 0) {
                while (n < 3) {
                    int c = run_next(m, run[n - 1]);
                    if (c < 0 || done[c] || eff_rot(s, c) != rm) break;
                    int kc = axis_kind(m->jnt_axis[c], &sg[n]);
                    int dup = kc < 0;
                    for (int i = 0; i < n; i++)
                        dup |= kc == kind[i];
                    if (dup) break;
                    kind[n] = kc;
                    run[n++] = c;
                }
            }
            if (n >= 2) {
                seq_unit* u = &s->unit[s->nunit++];
                memset(u, 0, sizeof *u);
                u->kind = UNIT_RUN;
                u->mode = rm;
                u->joint = j;
                u->n = n;
                u->run = s->nrun;
                int k2 = n == 3 ? kind[2] : 3 - kind[0] - kind[1];
                u->order = euler_order_of(kind[0], kind[1], k2);
                for (int i = 0; i < n; i++) {
                    int jj = run[i];
                    u->qadr[i] = m->jnt_qadr[jj];
                    u->sign[i] = sg[i];
                    u->jnt[i] = jj;
                    done[jj] = 1;
                }
                double e[3] = {0, 0, 0};
                for (int i = 0; i < n; i++)
                    e[i] = u->sign[i] * m->q0[u->qadr[i]];
                mn_quat r = mn_euler_to_quat((mn_euler_order)u->order, e);
                u->rest[0] = r.w, u->rest[1] = r.x, u->rest[2] = r.y, u->rest[3] = r.z;
                s->run_first[s->nrun] = j;
                s->run_len[s->nrun++] = n;
            } else {
                s->sc_qadr[s->nscalar] = qa, sc_mode[s->nscalar++] = rm;
            }
        } else if (t == MN_JOINT_BALL || t == MN_JOINT_FREE) {
            if (t == MN_JOINT_FREE)
                for (int i = 0; i < 3; i++)
                    s->sc_qadr[s->nscalar] = qa + i, sc_mode[s->nscalar++] = tm;
            seq_unit* u = &s->unit[s->nunit++];
            memset(u, 0, sizeof *u);
            u->kind = rm == MN_INTERP_LINEAR ? UNIT_BALL_EULER : UNIT_QUAT;
            u->mode = rm;
            u->joint = j;
            u->qadr[0] = qa + (t == MN_JOINT_FREE ? 3 : 0);
            u->order = m->jnt_rot_order[j];
            if (t == MN_JOINT_BALL && m->jnt_limited[j]) s->has_limited_ball = 1;
        }
        done[j] = 1;
    }
    free(done);

    int nk = s->nkey;
    if (nk == 0) {
        free(sc_mode);
        return MN_OK;
    }
    s->seg_scalar = malloc(sizeof(double) * 4 * (size_t)nk * (size_t)(s->nscalar + 1));
    s->seg_rot = malloc(sizeof(double) * R_STRIDE * (size_t)nk * (size_t)(s->nunit + 1));
    double* p = malloc(sizeof(double) * (size_t)nk);
    double* zero_tcb = calloc(3 * (size_t)nk, sizeof(double));
    mn_quat* Q = malloc(sizeof(mn_quat) * (size_t)nk * 2);
    double* E = malloc(sizeof(double) * 3 * (size_t)nk);
    s->seg_track =
        malloc(sizeof(double) * 3 * (RUN_TRACK + 1) * (size_t)nk * (size_t)(s->nrun + 1));
    if (!s->seg_scalar || !s->seg_rot || !p || !zero_tcb || !Q || !E || !s->seg_track) {
        free(sc_mode), free(p), free(zero_tcb), free(Q), free(E);
        return MN_ERR_NOMEM;
    }
    size_t nq = (size_t)m->nq;
    for (int c = 0; c < s->nscalar; c++) {
        for (int k = 0; k < nk; k++)
            p[k] = s->key_q[(size_t)k * nq + (size_t)s->sc_qadr[c]];
        for (int k = 0; k < nk; k++)
            scalar_coeffs(s, sc_mode[c], p, zero_tcb, k,
                          s->seg_scalar + 4 * ((size_t)k * (size_t)s->nscalar + (size_t)c));
    }
    mn_quat* S = Q + nk;
    for (int ui = 0; ui < s->nunit; ui++) {
        const seq_unit* u = &s->unit[ui];
        for (int k = 0; k < nk; k++) {
            double e[3];
            mn_quat q = unit_key(s, u, k, e);
            if (k > 0 && mn_quat_dot(q, Q[k - 1]) < 0) q = mn_q4(-q.w, -q.x, -q.y, -q.z);
            Q[k] = q;
            if (u->kind == UNIT_BALL_EULER && k > 0)
                mn_euler_nearest(e, E + 3 * (k - 1), 3, NULL, NULL, e);
            memcpy(E + 3 * k, e, sizeof e);
        }
        for (int k = 0; k < nk; k++) {
            if (k == 0 || k == nk - 1) {
                S[k] = Q[k];
                continue;
            }
            S[k] = mn_anim_squad_inner(Q[k - 1], Q[k], Q[k + 1]);
        }
        for (int k = 0; k < nk; k++) {
            double* r = s->seg_rot + R_STRIDE * ((size_t)k * (size_t)s->nunit + (size_t)ui);
            int k1 = k + 1 < nk ? k + 1 : k;
            qstore(r + R_QA, Q[k]);
            qstore(r + R_QB, Q[k1]);
            qstore(r + R_SA, S[k]);
            qstore(r + R_SB, S[k1]);
            slerp_setup(r + R_QA, r + R_QB, &r[R_TH], &r[R_IS], &r[R_COS]);
            slerp_setup(r + R_SA, r + R_SB, &r[R_THS], &r[R_ISS], &r[R_COSS]);
            memcpy(r + R_EA, E + 3 * k, sizeof(double) * 3);
            memcpy(r + R_EB, E + 3 * k1, sizeof(double) * 3);
            r[R_LIN] = 0;
            if (u->kind == UNIT_RUN) track_run(s, u, k, r);
        }
    }
    free(sc_mode), free(p), free(zero_tcb), free(Q), free(E);
    return MN_OK;
}
