/* Rotations: sincos, axis-angle, quaternion <-> matrix, exp/log maps, slerp, Euler angles.
 * Conventions are written at the top of include/marionette/math.h. */
#include <marionette/math.h>

#include <ctype.h>
#include <stddef.h>

#include "core/sincos_inline.h"

/* ---- sincos: see core/sincos_inline.h -------------------------------------------------- */
void mn_sincos(double x, double* s, double* c) {
    mn_sincos_inline(x, s, c);
}

/* ---- axis-angle ------------------------------------------------------------------------ */
mn_mat3 mn_mat3_axis_angle(mn_vec3 a, double angle) {
    double s, c;
    mn_sincos(angle, &s, &c);
    double t = 1.0 - c;
    mn_mat3 r = {{t * a.x * a.x + c, t * a.x * a.y - s * a.z, t * a.x * a.z + s * a.y,
                  t * a.x * a.y + s * a.z, t * a.y * a.y + c, t * a.y * a.z - s * a.x,
                  t * a.x * a.z - s * a.y, t * a.y * a.z + s * a.x, t * a.z * a.z + c}};
    return r;
}

mn_quat mn_quat_axis_angle(mn_vec3 a, double angle) {
    double s, c;
    mn_sincos(0.5 * angle, &s, &c);
    return mn_q4(c, s * a.x, s * a.y, s * a.z);
}

/* Shepperd's method: pick the largest of w, x, y, z to divide by. */
mn_quat mn_quat_from_mat3(const mn_mat3* R) {
    const double* m = R->m;
    double tr = m[0] + m[4] + m[8];
    mn_quat q;
    if (tr >= m[0] && tr >= m[4] && tr >= m[8]) {
        double r = sqrt(1.0 + tr), s = 0.5 / r;
        q = mn_q4(0.5 * r, (m[7] - m[5]) * s, (m[2] - m[6]) * s, (m[3] - m[1]) * s);
    } else if (m[0] >= m[4] && m[0] >= m[8]) {
        double r = sqrt(1.0 + m[0] - m[4] - m[8]), s = 0.5 / r;
        q = mn_q4((m[7] - m[5]) * s, 0.5 * r, (m[1] + m[3]) * s, (m[2] + m[6]) * s);
    } else if (m[4] >= m[8]) {
        double r = sqrt(1.0 - m[0] + m[4] - m[8]), s = 0.5 / r;
        q = mn_q4((m[2] - m[6]) * s, (m[1] + m[3]) * s, 0.5 * r, (m[5] + m[7]) * s);
    } else {
        double r = sqrt(1.0 - m[0] - m[4] + m[8]), s = 0.5 / r;
        q = mn_q4((m[3] - m[1]) * s, (m[2] + m[6]) * s, (m[5] + m[7]) * s, 0.5 * r);
    }
    if (q.w < 0) q = mn_q4(-q.w, -q.x, -q.y, -q.z);
    return mn_quat_normalize(q);
}

/* Nearest rotation (the orthogonal polar factor). Shepperd's quaternion of M is a rotation
 * close to it but not the nearest one away from the identity; the residual E = R0^T M is
 * near the identity, where the quaternion projection agrees with the polar factor to second
 * order, so two such corrections reach it to rounding. */
mn_mat3 mn_mat3_orthonormalize(const mn_mat3* M) {
    mn_mat3 R = mn_quat_to_mat3(mn_quat_from_mat3(M));
    for (int it = 0; it < 2; it++) {
        mn_mat3 E = mn_mat3_tmul(&R, M);
        mn_mat3 C = mn_quat_to_mat3(mn_quat_from_mat3(&E));
        R = mn_mat3_mul(&R, &C);
    }
    return R;
}

/* ---- exp / log ------------------------------------------------------------------------- */
mn_quat mn_quat_exp(mn_vec3 r) {
    double th2 = mn_vec3_dot(r, r);
    double w, k;
    if (th2 < 1e-12) { /* Taylor: cos(t/2), sin(t/2)/t */
        w = 1.0 - th2 / 8.0 + th2 * th2 / 384.0;
        k = 0.5 - th2 / 48.0 + th2 * th2 / 3840.0;
    } else {
        double th = sqrt(th2), s, c;
        mn_sincos(0.5 * th, &s, &c);
        w = c;
        k = s / th;
    }
    return mn_q4(w, k * r.x, k * r.y, k * r.z);
}

mn_vec3 mn_quat_log(mn_quat q) {
    if (q.w < 0) q = mn_q4(-q.w, -q.x, -q.y, -q.z);
    double sn = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    if (sn < 1e-300) return mn_v3(0, 0, 0);
    double k = 2.0 * atan2(sn, q.w) / sn;
    return mn_v3(k * q.x, k * q.y, k * q.z);
}

mn_mat3 mn_mat3_exp(mn_vec3 r) {
    return mn_quat_to_mat3(mn_quat_exp(r));
}

mn_vec3 mn_mat3_log(const mn_mat3* R) {
    return mn_quat_log(mn_quat_from_mat3(R));
}

double mn_angle_wrap(double a) {
    a = fmod(a + MN_PI, 2 * MN_PI);
    if (a < 0) a += 2 * MN_PI;
    return a - MN_PI;
}

double mn_angle_near(double a, double ref) {
    double d = ref - a;
    if (d >= -MN_PI && d <= MN_PI) return a; /* the common case: no whole turn apart */
    return a + 2 * MN_PI * nearbyint(d / (2 * MN_PI));
}

mn_vec3 mn_vec3_perpendicular(mn_vec3 u) {
    mn_vec3 e = fabs(u.x) < 0.9 * mn_vec3_norm(u) ? mn_v3(1, 0, 0) : mn_v3(0, 1, 0);
    return mn_vec3_normalize(mn_vec3_cross(u, e));
}

mn_vec3 mn_rotation_error(const mn_mat3* A, const mn_mat3* B) {
    mn_mat3 Bt = mn_mat3_transpose(B);
    mn_mat3 E = mn_mat3_mul(A, &Bt);
    return mn_mat3_log(&E);
}

/* ---- slerp ----------------------------------------------------------------------------- */
mn_quat mn_quat_slerp(mn_quat a, mn_quat b, double t) {
    double d = mn_quat_dot(a, b);
    if (d < 0) {
        b = mn_q4(-b.w, -b.x, -b.y, -b.z);
        d = -d;
    }
    /* Angle from atan2 of |a - b| and |a + b|: accurate for nearly equal quaternions. */
    mn_quat diff = mn_q4(a.w - b.w, a.x - b.x, a.y - b.y, a.z - b.z);
    mn_quat sum = mn_q4(a.w + b.w, a.x + b.x, a.y + b.y, a.z + b.z);
    double th = 2.0 * atan2(mn_quat_norm(diff), mn_quat_norm(sum));
    double ka, kb;
    if (th < 1e-6) {
        ka = 1.0 - t;
        kb = t;
    } else {
        double st = sin(th);
        ka = sin((1.0 - t) * th) / st;
        kb = sin(t * th) / st;
    }
    return mn_quat_normalize(
        mn_q4(ka * a.w + kb * b.w, ka * a.x + kb * b.x, ka * a.y + kb * b.y, ka * a.z + kb * b.z));
}

double mn_quat_angle_between(mn_quat a, mn_quat b) {
    return mn_vec3_norm(mn_quat_log(mn_quat_mul(mn_quat_conj(a), b)));
}

/* ---- Euler angles ---------------------------------------------------------------------- */
static const int EULER_AXES[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
static const char* const EULER_NAMES[6] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};

static mn_vec3 unit_axis(int i) {
    return mn_v3(i == 0, i == 1, i == 2);
}

/* An order outside the enum is read as XYZ (these calls have no status to return). */
static const int* euler_axes(mn_euler_order order) {
    return EULER_AXES[(unsigned)order < 6u ? order : MN_EULER_XYZ];
}

mn_mat3 mn_euler_to_mat3(mn_euler_order order, const double e[3]) {
    const int* ax = euler_axes(order);
    mn_mat3 R = mn_mat3_axis_angle(unit_axis(ax[0]), e[0]);
    for (int k = 1; k < 3; k++) {
        mn_mat3 Rk = mn_mat3_axis_angle(unit_axis(ax[k]), e[k]);
        R = mn_mat3_mul(&R, &Rk);
    }
    return R;
}

mn_quat mn_euler_to_quat(mn_euler_order order, const double e[3]) {
    const int* ax = euler_axes(order);
    mn_quat q = mn_quat_axis_angle(unit_axis(ax[0]), e[0]);
    for (int k = 1; k < 3; k++)
        q = mn_quat_mul(q, mn_quat_axis_angle(unit_axis(ax[k]), e[k]));
    return q;
}

/* R = R_i(a) R_j(b) R_k(c). With s = +1 for a cyclic order (XYZ, YZX, ZXY) and -1 otherwise:
 *   sin b = s R[i][k],  a = atan2(-s R[j][k], R[k][k]).
 * c then comes from row j of R_i(a)^T R = R_j(b) R_k(c), whose entries at columns i and j are
 * s sin c and cos c: computed from a rather than independently, the pair stays consistent
 * near gimbal lock, where a and c alone are ill-conditioned but the rotation is not. With
 * (cos a, sin a) = (R[k][k], -s R[j][k]) / cos b, and cos b > 0 dropped (atan2 needs only
 * the direction), no sine or cosine is evaluated. At lock (cos b = 0) only a + s c is
 * defined: a takes it all, a = atan2(s R[k][j], R[j][j]). */
void mn_euler_from_mat3(mn_euler_order order, const mn_mat3* Rm, double e[3]) {
    const int* ax = euler_axes(order);
    int i = ax[0], j = ax[1], k = ax[2];
    double s = ((i + 1) % 3 == j) ? 1.0 : -1.0;
#define R(r, c) Rm->m[3 * (r) + (c)]
    /* entries of a rotation: their squares neither overflow nor matter below 1e-14 */
    double cb = sqrt(R(i, i) * R(i, i) + R(i, j) * R(i, j));
    e[1] = atan2(s * R(i, k), cb);
    if (cb > 1e-14) {
        double ca = R(k, k), sa = -s * R(j, k);
        e[0] = atan2(sa, ca);
        e[2] = atan2(s * ca * R(j, i) + sa * R(k, i), ca * R(j, j) + s * sa * R(k, j));
    } else {
        e[0] = atan2(s * R(k, j), R(j, j));
        e[2] = 0.0;
    }
#undef R
}

void mn_euler_from_quat(mn_euler_order order, mn_quat q, double e[3]) {
    mn_mat3 R = mn_quat_to_mat3(mn_quat_normalize(q));
    mn_euler_from_mat3(order, &R, e);
}

/* The two Tait-Bryan solutions of one rotation are e and (e0 + pi, pi - e1, e2 + pi); with
 * every angle free to move by whole turns, the one nearest a reference keeps a compound
 * joint's hinge angles (Welman 6.1.1) continuous along a motion, without flips of branch
 * (Welman 6.1.2: in-betweens stay on the branch of the keys). */
void mn_euler_nearest(const double e[3], const double ref[3], int n, const double* lo,
                      const double* hi, double out[3]) {
    double alt[3] = {e[0] + MN_PI, MN_PI - e[1], e[2] + MN_PI}, a[3], b[3], da = 0, db = 0;
    for (int i = 0; i < 3; i++) {
        a[i] = mn_angle_near(e[i], ref[i]);
        b[i] = mn_angle_near(alt[i], ref[i]);
    }
    for (int i = 0; i < n && i < 3; i++) {
        da += (a[i] - ref[i]) * (a[i] - ref[i]);
        db += (b[i] - ref[i]) * (b[i] - ref[i]);
    }
    if (lo && hi)
        for (int i = 0; i < n && i < 3; i++) {
            double ea = a[i] < lo[i] ? lo[i] - a[i] : a[i] > hi[i] ? a[i] - hi[i] : 0;
            double eb = b[i] < lo[i] ? lo[i] - b[i] : b[i] > hi[i] ? b[i] - hi[i] : 0;
            da += 4 * ea * ea;
            db += 4 * eb * eb;
        }
    const double* w = da <= db ? a : b;
    out[0] = w[0], out[1] = w[1], out[2] = w[2];
}

const char* mn_euler_order_name(mn_euler_order order) {
    return (unsigned)order < 6u ? EULER_NAMES[order] : NULL;
}

int mn_euler_order_parse(const char* s) {
    if (!s) return -1;
    for (int o = 0; o < 6; o++) {
        const char* n = EULER_NAMES[o];
        if (toupper((unsigned char)s[0]) == n[0] && toupper((unsigned char)s[1]) == n[1] &&
            toupper((unsigned char)s[2]) == n[2] && s[3] == 0)
            return o;
    }
    return -1;
}
