/* Sampling a sequence at any frame (Welman 6.1.2: the in-betweens are computed on the fly
 * from the keys). Reads only the const sequence and its tables, writes only the caller's
 * state: reentrant and allocation-free. */
#include <math.h>
#include <string.h>

#include "anim_internal.h"
#include "sample_kernels.h"

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

/* The weights (wa, wb) of slerp_pre (Shoemake 1985) on the record's angle th (R_TH or R_THS,
 * its 1/sin and cosine beside it), from the sine and cosine of u th at x[k], when there is an
 * arc (1/sin > 0); else lerp. */
static inline void pre_weights(const double* rec, int th, const double* sn, const double* cs, int k,
                               double u, double* wa, double* wb) {
    if (rec[th + 1] > 0) {
        *wb = sn[k] * rec[th + 1];
        *wa = cs[k] - rec[th == R_TH ? R_COS : R_COSS] * *wb;
    } else {
        *wa = 1 - u, *wb = u;
    }
}

/* mn_anim_unit_rotation for sampling, for n <= MN_ANIM_BATCH units at once (sample_kernels.h):
 * out[i] (w, x, y, z) the rotation of unit un[i] on its segment record rec[i] at u, unit.
 * Squad's outer slerp and the normalisations with the kernels of sample_kernels.h, within a
 * few ulps of mn_anim_unit_rotation (which the tables keep). Only the arcs that need them get
 * a sine or an arc cosine (keys a frame apart, or a squad whose inner points lie on its path,
 * are lerps, as in mn_anim_unit_rotation). */
static void unit_rotations(const seq_unit* const* un, const double* const* rec, double* const* out,
                           int n, double u) {
    double x[2 * MN_ANIM_BATCH], sn[2 * MN_ANIM_BATCH], cs[2 * MN_ANIM_BATCH];
    int nx = 0;
    for (int i = 0; i < n; i++) {
        int mode = un[i]->mode;
        if (mode == MN_INTERP_CONSTANT) continue;
        if (rec[i][R_IS] > 0) x[nx++] = u * rec[i][R_TH];
        if (mode == MN_INTERP_SQUAD && rec[i][R_ISS] > 0) x[nx++] = u * rec[i][R_THS];
    }
    mn_anim_sincos_n(x, sn, cs, nx);
    /* slerp(q_k, q_k+1, u), and for squad slerp(s_k, s_k+1, u) */
    double p[4 * MN_ANIM_BATCH], t[4 * MN_ANIM_BATCH], d[MN_ANIM_BATCH];
    int sq[MN_ANIM_BATCH], nsq = 0;
    nx = 0;
    for (int i = 0; i < n; i++) {
        const double* r = rec[i];
        double* o = out[i];
        int mode = un[i]->mode;
        if (mode == MN_INTERP_CONSTANT) {
            memcpy(o, r + R_QA, 4 * sizeof(double));
            continue;
        }
        double wa, wb;
        pre_weights(r, R_TH, sn, cs, nx, u, &wa, &wb);
        nx += r[R_IS] > 0;
        if (mode != MN_INTERP_SQUAD) {
            for (int c = 0; c < 4; c++)
                o[c] = wa * r[R_QA + c] + wb * r[R_QB + c];
            mn_anim_normalize4(o);
            continue;
        }
        double *pp = p + 4 * nsq, *tt = t + 4 * nsq;
        for (int c = 0; c < 4; c++)
            pp[c] = wa * r[R_QA + c] + wb * r[R_QB + c];
        pre_weights(r, R_THS, sn, cs, nx, u, &wa, &wb);
        nx += r[R_ISS] > 0;
        for (int c = 0; c < 4; c++)
            tt[c] = wa * r[R_SA + c] + wb * r[R_SB + c];
        d[nsq] = pp[0] * tt[0] + pp[1] * tt[1] + pp[2] * tt[2] + pp[3] * tt[3];
        sq[nsq++] = i;
    }
    if (nsq == 0) return;
    /* squad = slerp(p, t, 2u(1-u)) without the shorter-arc flip (Shoemake 1987), with the
     * weights of mn_anim_slerp_weights (anim_internal.h); the arcs' angles in a batch */
    double h = 2 * u * (1 - u), ay[MN_ANIM_BATCH], ax[MN_ANIM_BATCH], st[MN_ANIM_BATCH];
    int arc[MN_ANIM_BATCH], na = 0;
    for (int k = 0; k < nsq; k++) {
        double dd = d[k] < -1 ? -1 : d[k];
        st[k] = d[k] < 0.9999 ? sqrt(1 - dd * dd) : 0;
        d[k] = dd;
        if (st[k] > 1e-9) ay[na] = sqrt((1 - dd) * (1 + dd)), ax[na] = dd, arc[na++] = k;
    }
    mn_anim_atan2_n(ay, ax, x, na);
    for (int k = 0; k < na; k++)
        x[k] *= h;
    mn_anim_sincos_n(x, sn, cs, na);
    for (int k = 0, a = 0; k < nsq; k++) {
        double wa = 1 - h, wb = h;
        if (a < na && arc[a] == k) {
            wb = sn[a] / st[k];
            wa = cs[a] - d[k] * wb;
            a++;
        }
        double* o = out[sq[k]];
        for (int c = 0; c < 4; c++)
            o[c] = wa * p[4 * k + c] + wb * t[4 * k + c];
        mn_anim_normalize4(o);
    }
}

/* The axes of each mn_euler_order (core/math.c). */
static const int EULER_AXES[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

void mn_anim_run_angles_n(const mn_seq* s, const seq_unit* const* un, const double* const* rot,
                          const double* const* ref, double* q, int n) {
    /* mn_euler_from_mat3 (core/math.c) of each rotation's matrix, term for term: its three
     * arctangents' arguments first, then all the arctangents */
    /* (zeroed: the compiler cannot see that the first loop fills the first 3n) */
    double ay[3 * MN_ANIM_BATCH] = {0}, ax[3 * MN_ANIM_BATCH] = {0}, e[3 * MN_ANIM_BATCH];
    for (int b = 0; b < n; b++) {
        const int* axes = EULER_AXES[(unsigned)un[b]->order < 6u ? un[b]->order : MN_EULER_XYZ];
        int i = axes[0], j = axes[1], k = axes[2];
        const double* r = rot[b];
        double w = r[0], x = r[1], y = r[2], z = r[3];
        double xx = x * x, yy = y * y, zz = z * z;
        double xy = x * y, xz = x * z, yz = y * z;
        double wx = w * x, wy = w * y, wz = w * z;
        /* mn_quat_to_mat3 */
        const double M[9] = {1 - 2 * (yy + zz), 2 * (xy - wz),     2 * (xz + wy),
                             2 * (xy + wz),     1 - 2 * (xx + zz), 2 * (yz - wx),
                             2 * (xz - wy),     2 * (yz + wx),     1 - 2 * (xx + yy)};
#define R(a, c) M[3 * (a) + (c)]
        double sg = ((i + 1) % 3 == j) ? 1.0 : -1.0;
        double cb = sqrt(R(i, i) * R(i, i) + R(i, j) * R(i, j));
        double *py = ay + 3 * b, *px = ax + 3 * b;
        py[1] = sg * R(i, k), px[1] = cb;
        if (cb > 1e-14) {
            double ca = R(k, k), sa = -sg * R(j, k);
            py[0] = sa, px[0] = ca;
            py[2] = sg * ca * R(j, i) + sa * R(k, i);
            px[2] = ca * R(j, j) + sg * sa * R(k, j);
        } else { /* gimbal lock: the first angle takes it all, the last is 0 = atan2(0, 1) */
            py[0] = sg * R(k, j), px[0] = R(j, j);
            py[2] = 0, px[2] = 1;
        }
#undef R
    }
    mn_anim_atan2_n(ay, ax, e, 3 * n);
    for (int b = 0; b < n; b++) {
        double w[3];
        mn_anim_euler_nearest(e + 3 * b, ref[b], w);
        const seq_unit* u = un[b];
        for (int i = 0; i < u->n; i++)
            q[u->qadr[i]] = mn_joint_clamp_value(s->m, u->jnt[i], u->sign[i] * w[i]);
    }
}

void mn_anim_run_angles(const mn_seq* s, const seq_unit* un, mn_quat r, const double* ref,
                        double* q) {
    double rv[4] = {r.w, r.x, r.y, r.z};
    const double* rp = rv;
    mn_anim_run_angles_n(s, &un, &rp, &ref, q, 1);
}

static void sample_unit(const mn_seq* s, const seq_unit* un, const double* rec, double u,
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
    /* a run on a segment linear in the angles (sample_units does the rotations) */
    for (int i = 0; i < un->n; i++) {
        double w = rec[R_EA + i] + u * (rec[R_EB + i] - rec[R_EA + i]);
        q[un->qadr[i]] = mn_joint_clamp_value(s->m, un->jnt[i], un->sign[i] * w);
    }
}

/* Every rotation unit of segment k at u, MN_ANIM_BATCH at a time: the rotations of quaternion
 * units into q and of runs on segments that are not linear into rot (w, x, y, z); each run's
 * reference for its branch: the hinge angles tracked along the segment's rotation path,
 * linearly between the table's points (tables.c). With held NULL the runs' rotations are
 * mapped back to their hinge angles in q, on the branch tracked continuously along the
 * segment from the first key's angles (no flips); else run i is held as its rotation
 * (rot[4i..], ref[3i..], held[i] = 1) for layers.c. The other units one at a time. */
static void sample_units(const mn_seq* s, int k, double u, double* q, double* rot, double* ref,
                         double* held) {
    const seq_unit* bu[MN_ANIM_BATCH];
    const double* brec[MN_ANIM_BATCH];
    double* bout[MN_ANIM_BATCH];
    const seq_unit* ru[MN_ANIM_BATCH];
    const double *rrot[MN_ANIM_BATCH], *rref[MN_ANIM_BATCH];
    double lrot[4 * MN_ANIM_BATCH], lref[3 * MN_ANIM_BATCH];
    const double* rec0 = s->seg_rot + R_STRIDE * (size_t)k * (size_t)s->nunit;
    const double* track =
        s->nrun ? s->seg_track + (size_t)k * (size_t)s->nrun * (RUN_TRACK + 1) * 3 : NULL;
    double x = u * RUN_TRACK;
    int i0 = (int)x;
    if (i0 >= RUN_TRACK) i0 = RUN_TRACK - 1;
    double a = x - i0;
    for (int c0 = 0; c0 < s->nunit; c0 += MN_ANIM_BATCH) {
        int c1 = c0 + MN_ANIM_BATCH < s->nunit ? c0 + MN_ANIM_BATCH : s->nunit, nb = 0, nr = 0;
        for (int i = c0; i < c1; i++) {
            const seq_unit* un = &s->unit[i];
            const double* rec = rec0 + R_STRIDE * (size_t)i;
            if (un->kind == UNIT_QUAT) {
                bu[nb] = un, brec[nb] = rec, bout[nb++] = q + un->qadr[0];
            } else if (un->kind == UNIT_RUN && rec[R_LIN] == 0) {
                double *ro = held ? rot + 4 * i : lrot + 4 * nr,
                       *rf = held ? ref + 3 * i : lref + 3 * nr;
                const double* tr = track + (size_t)un->run * (RUN_TRACK + 1) * 3 + 3 * i0;
                for (int c = 0; c < 3; c++)
                    rf[c] = tr[c] + a * (tr[3 + c] - tr[c]);
                bu[nb] = un, brec[nb] = rec, bout[nb++] = ro;
                if (held)
                    held[i] = 1;
                else
                    ru[nr] = un, rrot[nr] = ro, rref[nr++] = rf;
            } else {
                sample_unit(s, un, rec, u, q);
            }
        }
        unit_rotations(bu, brec, bout, nb, u);
        if (nr) mn_anim_run_angles_n(s, ru, rrot, rref, q, nr);
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
    sample_units(s, k, u, q, NULL, NULL, NULL);
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
    sample_units(s, k, u, q, rot, ref, held);
}
