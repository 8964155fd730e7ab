/* marionette math: vectors, quaternions, rotation matrices, rigid transforms.
 *
 * Conventions, fixed once for the whole library:
 *  - double precision everywhere; angles in radians; lengths in metres unless a file's
 *    own units are kept on purpose (the readers say so).
 *  - right-handed coordinates.
 *  - quaternions are (w, x, y, z), unit length for rotations; q and -q are the same rotation.
 *  - mat3 is row-major: m[3*r + c]. A rotation matrix maps local to world: x_w = R x_l.
 *    The columns of a frame's R are its axes expressed in world coordinates.
 *  - a rigid transform (mn_xform) is x_w = R x_l + p.
 *  - Euler angles: order XYZ means R = Rx(e[0]) Ry(e[1]) Rz(e[2]) (intrinsic rotations,
 *    applied in the order named, which is how BVH channel lists read).
 *  - rotation vector r = angle * unit axis; exp maps it to a rotation, log back (|r| <= pi).
 *
 * Small value types are passed by value and the simple operations are inline, as in
 * Box2D's math_functions.h; the heavier conversions live in src/core/math.c.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_MATH_H
#define MARIONETTE_MATH_H

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MN_PI 3.14159265358979323846

typedef struct mn_vec3 {
    double x, y, z;
} mn_vec3;

typedef struct mn_quat {
    double w, x, y, z;
} mn_quat;

/* Row-major 3x3 matrix. */
typedef struct mn_mat3 {
    double m[9];
} mn_mat3;

/* Rigid transform x_w = R x_l + p. */
typedef struct mn_xform {
    mn_mat3 R;
    mn_vec3 p;
} mn_xform;

typedef enum mn_euler_order {
    MN_EULER_XYZ = 0,
    MN_EULER_XZY,
    MN_EULER_YXZ,
    MN_EULER_YZX,
    MN_EULER_ZXY,
    MN_EULER_ZYX
} mn_euler_order;

/* ---- vec3 ------------------------------------------------------------------------------ */
static inline mn_vec3 mn_v3(double x, double y, double z) {
    mn_vec3 v = {x, y, z};
    return v;
}
static inline mn_vec3 mn_vec3_add(mn_vec3 a, mn_vec3 b) {
    return mn_v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline mn_vec3 mn_vec3_sub(mn_vec3 a, mn_vec3 b) {
    return mn_v3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline mn_vec3 mn_vec3_scale(mn_vec3 a, double s) {
    return mn_v3(a.x * s, a.y * s, a.z * s);
}
static inline mn_vec3 mn_vec3_neg(mn_vec3 a) {
    return mn_v3(-a.x, -a.y, -a.z);
}
/* a + s b */
static inline mn_vec3 mn_vec3_madd(mn_vec3 a, double s, mn_vec3 b) {
    return mn_v3(a.x + s * b.x, a.y + s * b.y, a.z + s * b.z);
}
static inline double mn_vec3_dot(mn_vec3 a, mn_vec3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline mn_vec3 mn_vec3_cross(mn_vec3 a, mn_vec3 b) {
    return mn_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double mn_vec3_norm(mn_vec3 a) {
    return sqrt(mn_vec3_dot(a, a));
}
static inline double mn_vec3_dist(mn_vec3 a, mn_vec3 b) {
    return mn_vec3_norm(mn_vec3_sub(a, b));
}
/* Unit vector along a; the zero vector stays zero. */
static inline mn_vec3 mn_vec3_normalize(mn_vec3 a) {
    double n = mn_vec3_norm(a);
    return n > 0 ? mn_vec3_scale(a, 1.0 / n) : a;
}
static inline mn_vec3 mn_vec3_lerp(mn_vec3 a, mn_vec3 b, double t) {
    return mn_v3(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z));
}
static inline int mn_vec3_isfinite(mn_vec3 a) {
    return isfinite(a.x) && isfinite(a.y) && isfinite(a.z);
}

/* ---- mat3 ------------------------------------------------------------------------------ */
static inline mn_mat3 mn_mat3_identity(void) {
    mn_mat3 r = {{1, 0, 0, 0, 1, 0, 0, 0, 1}};
    return r;
}
static inline mn_vec3 mn_mat3_mulv(const mn_mat3* R, mn_vec3 v) {
    const double* m = R->m;
    return mn_v3(m[0] * v.x + m[1] * v.y + m[2] * v.z, m[3] * v.x + m[4] * v.y + m[5] * v.z,
                 m[6] * v.x + m[7] * v.y + m[8] * v.z);
}
/* R^T v */
static inline mn_vec3 mn_mat3_tmulv(const mn_mat3* R, mn_vec3 v) {
    const double* m = R->m;
    return mn_v3(m[0] * v.x + m[3] * v.y + m[6] * v.z, m[1] * v.x + m[4] * v.y + m[7] * v.z,
                 m[2] * v.x + m[5] * v.y + m[8] * v.z);
}
/* A B */
static inline mn_mat3 mn_mat3_mul(const mn_mat3* A, const mn_mat3* B) {
    mn_mat3 r;
    const double *a = A->m, *b = B->m;
    for (int i = 0; i < 3; i++) {
        r.m[3 * i + 0] = a[3 * i] * b[0] + a[3 * i + 1] * b[3] + a[3 * i + 2] * b[6];
        r.m[3 * i + 1] = a[3 * i] * b[1] + a[3 * i + 1] * b[4] + a[3 * i + 2] * b[7];
        r.m[3 * i + 2] = a[3 * i] * b[2] + a[3 * i + 1] * b[5] + a[3 * i + 2] * b[8];
    }
    return r;
}
/* A^T B */
static inline mn_mat3 mn_mat3_tmul(const mn_mat3* A, const mn_mat3* B) {
    mn_mat3 r;
    const double *a = A->m, *b = B->m;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r.m[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
    return r;
}
static inline mn_mat3 mn_mat3_transpose(const mn_mat3* A) {
    const double* a = A->m;
    mn_mat3 r = {{a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]}};
    return r;
}
/* Column c of R (a frame's axis c in world coordinates). */
static inline mn_vec3 mn_mat3_col(const mn_mat3* R, int c) {
    return mn_v3(R->m[c], R->m[3 + c], R->m[6 + c]);
}
/* Skew matrix [v]x with [v]x w = v x w. */
static inline mn_mat3 mn_mat3_skew(mn_vec3 v) {
    mn_mat3 r = {{0, -v.z, v.y, v.z, 0, -v.x, -v.y, v.x, 0}};
    return r;
}

/* ---- quaternion ------------------------------------------------------------------------ */
static inline mn_quat mn_quat_identity(void) {
    mn_quat q = {1, 0, 0, 0};
    return q;
}
static inline mn_quat mn_q4(double w, double x, double y, double z) {
    mn_quat q = {w, x, y, z};
    return q;
}
static inline mn_quat mn_quat_mul(mn_quat a, mn_quat b) {
    return mn_q4(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                 a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                 a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                 a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}
static inline mn_quat mn_quat_conj(mn_quat a) {
    return mn_q4(a.w, -a.x, -a.y, -a.z);
}
static inline double mn_quat_dot(mn_quat a, mn_quat b) {
    return a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline double mn_quat_norm(mn_quat a) {
    return sqrt(mn_quat_dot(a, a));
}
/* Unit quaternion along a; the zero quaternion becomes the identity. */
static inline mn_quat mn_quat_normalize(mn_quat a) {
    double n = mn_quat_norm(a);
    if (!(n > 0)) return mn_quat_identity();
    return mn_q4(a.w / n, a.x / n, a.y / n, a.z / n);
}
/* q v q* for a unit q. */
static inline mn_vec3 mn_quat_rotate(mn_quat q, mn_vec3 v) {
    mn_vec3 u = mn_v3(q.x, q.y, q.z);
    mn_vec3 t = mn_vec3_scale(mn_vec3_cross(u, v), 2.0);
    return mn_vec3_add(mn_vec3_madd(v, q.w, t), mn_vec3_cross(u, t));
}
static inline int mn_quat_isfinite(mn_quat q) {
    return isfinite(q.w) && isfinite(q.x) && isfinite(q.y) && isfinite(q.z);
}
/* Rotation matrix of a unit quaternion. */
static inline mn_mat3 mn_quat_to_mat3(mn_quat q) {
    double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
    double xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
    double wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
    mn_mat3 r = {{1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy), 2 * (xy + wz), 1 - 2 * (xx + zz),
                  2 * (yz - wx), 2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)}};
    return r;
}

/* ---- rigid transforms ------------------------------------------------------------------ */
static inline mn_xform mn_xform_identity(void) {
    mn_xform t;
    t.R = mn_mat3_identity();
    t.p = mn_v3(0, 0, 0);
    return t;
}
static inline mn_vec3 mn_xform_apply(const mn_xform* T, mn_vec3 x) {
    return mn_vec3_add(mn_mat3_mulv(&T->R, x), T->p);
}
/* A B: first B, then A. */
static inline mn_xform mn_xform_mul(const mn_xform* A, const mn_xform* B) {
    mn_xform r;
    r.R = mn_mat3_mul(&A->R, &B->R);
    r.p = mn_xform_apply(A, B->p);
    return r;
}
static inline mn_xform mn_xform_inverse(const mn_xform* A) {
    mn_xform r;
    r.R = mn_mat3_transpose(&A->R);
    r.p = mn_vec3_neg(mn_mat3_mulv(&r.R, A->p));
    return r;
}

/* ---- in src/core/math.c ---------------------------------------------------------------- */

/* sin and cos of x at once, accurate to about 1 ulp, several times faster than two libm
 * calls for |x| < 1e5 (falls back to libm beyond). */
void mn_sincos(double x, double* s, double* c);

/* Rotation about a unit axis by angle (Rodrigues). */
mn_mat3 mn_mat3_axis_angle(mn_vec3 unit_axis, double angle);
mn_quat mn_quat_axis_angle(mn_vec3 unit_axis, double angle);
/* Unit quaternion of a rotation matrix (Shepperd's method), w >= 0. */
mn_quat mn_quat_from_mat3(const mn_mat3* R);
/* Nearest rotation (orthogonal polar factor) of an almost-orthonormal matrix. */
mn_mat3 mn_mat3_orthonormalize(const mn_mat3* R);

/* Exponential and logarithm maps between rotation vectors and unit quaternions. log
 * returns the rotation vector of angle in [0, pi]; both are smooth near zero. */
mn_quat mn_quat_exp(mn_vec3 rotvec);
mn_vec3 mn_quat_log(mn_quat q);
mn_mat3 mn_mat3_exp(mn_vec3 rotvec);
mn_vec3 mn_mat3_log(const mn_mat3* R);

/* Spherical linear interpolation along the shorter arc; t in [0, 1]. */
mn_quat mn_quat_slerp(mn_quat a, mn_quat b, double t);
/* Angle in [0, pi] of the rotation from a to b. */
double mn_quat_angle_between(mn_quat a, mn_quat b);

/* Euler angles (radians) in the given order -> rotation, and back. mn_euler_from_mat3
 * returns the middle angle in [-pi/2, pi/2] (Tait-Bryan); at gimbal lock the first angle
 * takes the whole remaining rotation and the last is zero. An order outside the enum is read
 * as XYZ. */
mn_mat3 mn_euler_to_mat3(mn_euler_order order, const double e[3]);
mn_quat mn_euler_to_quat(mn_euler_order order, const double e[3]);
void mn_euler_from_mat3(mn_euler_order order, const mn_mat3* R, double e[3]);
void mn_euler_from_quat(mn_euler_order order, mn_quat q, double e[3]);
/* Of the two Tait-Bryan solutions e and (e0 + pi, pi - e1, e2 + pi) of one rotation, each
 * angle moved by whole turns to lie within pi of ref (mn_angle_near), the one nearest ref:
 * the least sum over the first n (1..3) angles of the squared distance to ref plus, when lo
 * and hi are given, 4 times the squared excess outside [lo[i], hi[i]] (use -INFINITY and
 * INFINITY for an unbounded angle). All three angles are written to out (which may be e).
 * Ties take e's branch. */
void mn_euler_nearest(const double e[3], const double ref[3], int n, const double* lo,
                      const double* hi, double out[3]);
/* "XYZ", "ZXY", ... ; NULL for an invalid order. */
const char* mn_euler_order_name(mn_euler_order order);
/* Parses "XYZ" etc. (case-insensitive); returns -1 when not an order. */
int mn_euler_order_parse(const char* s);

/* Rotation error of A relative to B as a rotation vector: log(A B^T), world frame. */
mn_vec3 mn_rotation_error(const mn_mat3* A, const mn_mat3* B);
/* The angle a wrapped into [-pi, pi). */
double mn_angle_wrap(double a);
/* The angle a moved by whole turns to lie within pi of ref (a itself when it does). */
double mn_angle_near(double a, double ref);
/* A unit vector perpendicular to u (u non-zero): u x e for the coordinate axis e least
 * aligned with u, normalised. */
mn_vec3 mn_vec3_perpendicular(mn_vec3 u);

#ifdef __cplusplus
}
#endif
#endif
