/* Independent tests of math.h: every rotation routine is checked against matrices built
 * here from first principles (elementary rotations, Rodrigues' formula) or against libm,
 * never against another routine of the same file.
 *
 * Conventions under test (top of math.h): quaternions (w, x, y, z); row-major mat3 with
 * x_w = R x_l; order XYZ means R = Rx(e0) Ry(e1) Rz(e2). */
#include "test.h"

#include <marionette/linalg.h>
#include <marionette/math.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- seeded RNG (splitmix64) --------------------------------------------------------------- */

static uint64_t rng_state;
static void rng_seed(uint64_t s) {
    rng_state = s * 0x9E3779B97F4A7C15ull + 7;
}
static double rng_uniform(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static double rng_range(double lo, double hi) {
    return lo + (hi - lo) * rng_uniform();
}
static mn_vec3 rng_unit(void) {
    for (;;) {
        mn_vec3 v = mn_v3(rng_range(-1, 1), rng_range(-1, 1), rng_range(-1, 1));
        double n = mn_vec3_norm(v);
        if (n > 0.1 && n <= 1) return mn_vec3_scale(v, 1 / n);
    }
}

/* ---- references built from first principles -------------------------------------------------- */

/* Elementary right-handed rotation about axis 0 (x), 1 (y) or 2 (z), libm sin/cos. */
static mn_mat3 elementary(int axis, double a) {
    double c = cos(a), s = sin(a);
    mn_mat3 r;
    if (axis == 0) {
        mn_mat3 t = {{1, 0, 0, 0, c, -s, 0, s, c}};
        r = t;
    } else if (axis == 1) {
        mn_mat3 t = {{c, 0, s, 0, 1, 0, -s, 0, c}};
        r = t;
    } else {
        mn_mat3 t = {{c, -s, 0, s, c, 0, 0, 0, 1}};
        r = t;
    }
    return r;
}

static mn_mat3 mat_mul(mn_mat3 a, mn_mat3 b) {
    mn_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++)
                s += a.m[3 * i + k] * b.m[3 * k + j];
            r.m[3 * i + j] = s;
        }
    return r;
}

/* Rodrigues: R = I + sin(t) K + (1 - cos(t)) K^2 for a unit axis. */
static mn_mat3 rodrigues(mn_vec3 u, double t) {
    mn_mat3 K = {{0, -u.z, u.y, u.z, 0, -u.x, -u.y, u.x, 0}};
    mn_mat3 K2 = mat_mul(K, K);
    mn_mat3 r;
    for (int i = 0; i < 9; i++)
        r.m[i] = (i % 4 == 0 ? 1.0 : 0.0) + sin(t) * K.m[i] + (1 - cos(t)) * K2.m[i];
    return r;
}

/* Rotation matrix of a unit quaternion from the sandwich product q v q*, column by column,
 * using only the Hamilton product written out here. */
static mn_mat3 quat_matrix_ref(mn_quat q) {
    mn_mat3 r;
    for (int c = 0; c < 3; c++) {
        double v[3] = {c == 0, c == 1, c == 2};
        /* p = q (0, v) */
        double pw = -q.x * v[0] - q.y * v[1] - q.z * v[2];
        double px = q.w * v[0] + q.y * v[2] - q.z * v[1];
        double py = q.w * v[1] + q.z * v[0] - q.x * v[2];
        double pz = q.w * v[2] + q.x * v[1] - q.y * v[0];
        /* p q* with q* = (w, -x, -y, -z): vector part only */
        double rx = -pw * q.x + px * q.w - py * q.z + pz * q.y;
        double ry = -pw * q.y + py * q.w - pz * q.x + px * q.z;
        double rz = -pw * q.z + pz * q.w - px * q.y + py * q.x;
        r.m[c] = rx;
        r.m[3 + c] = ry;
        r.m[6 + c] = rz;
    }
    return r;
}

static double mat_maxdiff(const mn_mat3* a, const mn_mat3* b) {
    double e = 0;
    for (int i = 0; i < 9; i++)
        e = fmax(e, fabs(a->m[i] - b->m[i]));
    return e;
}

/* Angle of the rotation A B^T, from the trace and the skew part (atan2 keeps it accurate
 * for small and large angles). */
static double rot_distance(const mn_mat3* A, const mn_mat3* B) {
    mn_mat3 Bt = {
        {B->m[0], B->m[3], B->m[6], B->m[1], B->m[4], B->m[7], B->m[2], B->m[5], B->m[8]}};
    mn_mat3 E = mat_mul(*A, Bt);
    double tr = E.m[0] + E.m[4] + E.m[8];
    double sx = E.m[7] - E.m[5], sy = E.m[2] - E.m[6], sz = E.m[3] - E.m[1];
    return atan2(0.5 * sqrt(sx * sx + sy * sy + sz * sz), 0.5 * (tr - 1));
}

static double det3(const mn_mat3* R) {
    const double* m = R->m;
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
           m[2] * (m[3] * m[7] - m[4] * m[6]);
}

static double orth_error(const mn_mat3* R) {
    double e = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = 0;
            for (int k = 0; k < 3; k++)
                d += R->m[3 * k + i] * R->m[3 * k + j];
            e = fmax(e, fabs(d - (i == j)));
        }
    return e;
}

/* Order name -> axis indices, independently of the library's table. */
static void order_axes(mn_euler_order o, int ax[3]) {
    const char* n = mn_euler_order_name(o);
    for (int k = 0; k < 3; k++)
        ax[k] = n ? n[k] - 'X' : 0;
}

static mn_mat3 euler_ref(mn_euler_order o, const double e[3]) {
    int ax[3];
    order_axes(o, ax);
    return mat_mul(mat_mul(elementary(ax[0], e[0]), elementary(ax[1], e[1])),
                   elementary(ax[2], e[2]));
}

static mn_quat quat_mul_ref(mn_quat a, mn_quat b) {
    return mn_q4(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                 a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                 a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                 a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}

/* The same rotation as euler_ref, as a product of elementary quaternions. */
static mn_quat euler_quat_ref(mn_euler_order o, const double e[3]) {
    int ax[3];
    order_axes(o, ax);
    mn_quat q = mn_quat_identity();
    for (int k = 0; k < 3; k++) {
        double h = 0.5 * e[k];
        mn_quat r = mn_q4(cos(h), ax[k] == 0 ? sin(h) : 0, ax[k] == 1 ? sin(h) : 0,
                          ax[k] == 2 ? sin(h) : 0);
        q = quat_mul_ref(q, r);
    }
    return q;
}

/* ---- Euler angles ------------------------------------------------------------------------ */

static void test_euler_names(void) {
    const char* expect[6] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
    for (int o = 0; o < 6; o++) {
        const char* n = mn_euler_order_name((mn_euler_order)o);
        CHECK(n && !strcmp(n, expect[o]));
        CHECK(mn_euler_order_parse(expect[o]) == o);
        char lower[4] = {(char)(expect[o][0] + 32), (char)(expect[o][1] + 32),
                         (char)(expect[o][2] + 32), 0};
        CHECK(mn_euler_order_parse(lower) == o);
    }
    CHECK(mn_euler_order_name((mn_euler_order)6) == NULL);
    CHECK(mn_euler_order_name((mn_euler_order)-1) == NULL);
    const char* bad[] = {"", "X", "XY", "XYZW", "XYX", "XXZ", "ABC", "xyz ", " XYZ"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(mn_euler_order_parse(bad[i]) == -1);
    CHECK(mn_euler_order_parse(NULL) == -1);
}

static void test_euler_to_matrix_all_orders(void) {
    rng_seed(1);
    for (int o = 0; o < 6; o++) {
        for (int t = 0; t < 200; t++) {
            double e[3] = {rng_range(-4, 4), rng_range(-4, 4), rng_range(-4, 4)};
            mn_mat3 ref = euler_ref((mn_euler_order)o, e);
            mn_mat3 R = mn_euler_to_mat3((mn_euler_order)o, e);
            CHECK(mat_maxdiff(&R, &ref) <= 1e-15 * 4);
            mn_mat3 Rq = quat_matrix_ref(mn_euler_to_quat((mn_euler_order)o, e));
            CHECK(mat_maxdiff(&Rq, &ref) <= 1e-15 * 4);
        }
    }
    /* One hand-checked value: XYZ with (90, 0, 0) deg maps y to z. */
    double e[3] = {MN_PI / 2, 0, 0};
    mn_mat3 R = mn_euler_to_mat3(MN_EULER_XYZ, e);
    mn_vec3 y = mn_mat3_mulv(&R, mn_v3(0, 1, 0));
    CHECK_NEAR(y.x, 0, 1e-15);
    CHECK_NEAR(y.y, 0, 1e-15);
    CHECK_NEAR(y.z, 1, 1e-15);
    /* ZYX (yaw, pitch, roll): R = Rz Ry Rx, so a pure pitch of 90 deg maps x to -z. */
    double f[3] = {0, MN_PI / 2, 0};
    R = mn_euler_to_mat3(MN_EULER_ZYX, f);
    mn_vec3 x = mn_mat3_mulv(&R, mn_v3(1, 0, 0));
    CHECK_NEAR(x.z, -1, 1e-15);
}

static void test_euler_round_trip_generic(void) {
    rng_seed(2);
    for (int o = 0; o < 6; o++) {
        for (int t = 0; t < 500; t++) {
            double e[3] = {rng_range(-3.1, 3.1), rng_range(-1.5, 1.5), rng_range(-3.1, 3.1)};
            mn_mat3 R = euler_ref((mn_euler_order)o, e);
            double g[3], h[3];
            mn_euler_from_mat3((mn_euler_order)o, &R, g);
            /* Away from gimbal lock the angles themselves are unique. */
            for (int k = 0; k < 3; k++)
                CHECK_NEAR(g[k], e[k], 1e-12);
            mn_quat q = mn_quat_from_mat3(&R);
            mn_euler_from_quat((mn_euler_order)o, q, h);
            for (int k = 0; k < 3; k++)
                CHECK_NEAR(h[k], e[k], 1e-12);
        }
    }
}

/* Near and at gimbal lock only a + c (or a - c) is defined: compare rotations. */
static void test_euler_round_trip_gimbal(void) {
    const double offsets[] = {0,     1e-15, 1e-14, 1e-13, 1e-12, 3e-12,
                              1e-11, 1e-10, 1e-9,  1e-8,  1e-6,  1e-4};
    rng_seed(3);
    double worst = 0, worst_bad = 0, worst_offset = 0;
    int bad = 0, worst_order = 0;
    for (int o = 0; o < 6; o++) {
        for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
            for (int sign = -1; sign <= 1; sign += 2) {
                for (int t = 0; t < 20; t++) {
                    double e[3] = {rng_range(-3, 3), sign * (MN_PI / 2 - offsets[i]),
                                   rng_range(-3, 3)};
                    mn_mat3 R = euler_ref((mn_euler_order)o, e);
                    /* Half the time through a quaternion, so that the near-zero entries
                     * carry absolute rounding noise, as matrices from FK products do. */
                    if (t % 2) R = quat_matrix_ref(euler_quat_ref((mn_euler_order)o, e));
                    double g[3];
                    mn_euler_from_mat3((mn_euler_order)o, &R, g);
                    CHECK(g[1] >= -MN_PI / 2 && g[1] <= MN_PI / 2);
                    for (int k = 0; k < 3; k++)
                        CHECK(isfinite(g[k]));
                    mn_mat3 back = euler_ref((mn_euler_order)o, g);
                    double d = rot_distance(&back, &R);
                    worst = fmax(worst, d);
                    /* A correct conversion loses nothing here; the documented lock branch
                     * (last angle zero when cos b is below ~1e-12) costs O(cos b). */
                    /* The quaternion entry point goes through the same conversion. */
                    double h[3];
                    mn_euler_from_quat((mn_euler_order)o, euler_quat_ref((mn_euler_order)o, e), h);
                    mn_mat3 back_q = euler_ref((mn_euler_order)o, h);
                    d = fmax(d, rot_distance(&back_q, &R));
                    if (!(d <= 5e-12)) {
                        bad++;
                        if (d > worst_bad)
                            worst_bad = d, worst_offset = offsets[i], worst_order = o;
                    }
                }
            }
        }
    }
    CHECK(bad == 0);
    if (bad)
        fprintf(stderr,
                "  %d of 2880 beyond 5e-12 rad; worst %.3g rad (order %s, pi/2 - |b| = %g)\n", bad,
                worst_bad, mn_euler_order_name((mn_euler_order)worst_order), worst_offset);
    /* At the lock (b = +-pi/2 to double precision), the last angle is documented to be
     * zero: the first one takes the whole rotation about the shared axis. */
    for (int o = 0; o < 6; o++) {
        double e[3] = {0.7, (o % 2 ? -1 : 1) * MN_PI / 2, -0.4}, g[3];
        mn_mat3 R = euler_ref((mn_euler_order)o, e);
        mn_euler_from_mat3((mn_euler_order)o, &R, g);
        CHECK(fabs(g[2]) <= 1e-15);
        if (!(fabs(g[2]) <= 1e-15))
            fprintf(stderr, "  order %s at lock: last angle %.3g\n",
                    mn_euler_order_name((mn_euler_order)o), g[2]);
        mn_mat3 back = euler_ref((mn_euler_order)o, g);
        CHECK(rot_distance(&back, &R) <= 1e-12);
    }
    printf("     worst gimbal round-trip rotation error %.3g rad\n", worst);
}

/* ---- quaternion <-> matrix, axis-angle ---------------------------------------------------------
 */

static void test_quat_matrix(void) {
    rng_seed(4);
    for (int t = 0; t < 2000; t++) {
        mn_vec3 u = rng_unit();
        double ang = rng_range(0, MN_PI);
        if (t < 12)
            ang = (t % 4 == 0) ? 0 : (t % 4 == 1) ? MN_PI : (t % 4 == 2) ? MN_PI - 1e-9 : 1e-9;
        if (t >= 12 && t < 15) u = mn_v3(t == 12, t == 13, t == 14), ang = MN_PI; /* trace -1 */
        mn_quat q = mn_q4(cos(ang / 2), sin(ang / 2) * u.x, sin(ang / 2) * u.y, sin(ang / 2) * u.z);
        mn_mat3 ref = rodrigues(u, ang);
        mn_mat3 R = mn_quat_to_mat3(q);
        CHECK(mat_maxdiff(&R, &ref) <= 4e-16 * 4);
        mn_mat3 Rs = quat_matrix_ref(q);
        CHECK(mat_maxdiff(&R, &Rs) <= 4e-16 * 4);
        /* Back: w >= 0 and equal to q up to sign. */
        mn_quat p = mn_quat_from_mat3(&ref);
        CHECK(p.w >= 0);
        CHECK_NEAR(mn_quat_norm(p), 1, 2e-16 * 4);
        double sgn = mn_quat_dot(p, q) < 0 ? -1 : 1;
        CHECK_NEAR(p.w, sgn * q.w, 1e-15 * 2);
        CHECK_NEAR(p.x, sgn * q.x, 1e-15 * 2);
        CHECK_NEAR(p.y, sgn * q.y, 1e-15 * 2);
        CHECK_NEAR(p.z, sgn * q.z, 1e-15 * 2);
        /* Axis-angle builders against Rodrigues. */
        mn_mat3 Ra = mn_mat3_axis_angle(u, ang);
        CHECK(mat_maxdiff(&Ra, &ref) <= 1e-15 * 2);
        mn_quat qa = mn_quat_axis_angle(u, ang);
        CHECK_NEAR(qa.w, q.w, 1e-15);
        CHECK_NEAR(qa.x, q.x, 1e-15);
        CHECK_NEAR(qa.y, q.y, 1e-15);
        CHECK_NEAR(qa.z, q.z, 1e-15);
        /* The inline rotate agrees with the matrix. */
        mn_vec3 v = mn_v3(rng_range(-2, 2), rng_range(-2, 2), rng_range(-2, 2));
        mn_vec3 a = mn_quat_rotate(q, v), b = mn_mat3_mulv(&ref, v);
        CHECK(mn_vec3_dist(a, b) <= 1e-14);
    }
    /* Composition: q1 q2 is "first q2, then q1", as matrices R1 R2. */
    mn_quat q1 = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(1, 2, 3)), 0.7);
    mn_quat q2 = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(-2, 0.5, 1)), 2.1);
    mn_mat3 R1 = rodrigues(mn_vec3_normalize(mn_v3(1, 2, 3)), 0.7);
    mn_mat3 R2 = rodrigues(mn_vec3_normalize(mn_v3(-2, 0.5, 1)), 2.1);
    mn_mat3 R12 = mn_quat_to_mat3(mn_quat_mul(q1, q2)), ref12 = mat_mul(R1, R2);
    CHECK(mat_maxdiff(&R12, &ref12) <= 1e-15 * 4);
}

/* ---- exp / log ---------------------------------------------------------------------------------
 */

static void check_exp_log(mn_vec3 r) {
    double th = mn_vec3_norm(r);
    /* Reference exp with libm; sin(th/2)/th by its series for tiny th. */
    double k = th < 1e-8 ? 0.5 - th * th / 48 : sin(th / 2) / th;
    mn_quat ref = mn_q4(cos(th / 2), k * r.x, k * r.y, k * r.z);
    mn_quat q = mn_quat_exp(r);
    CHECK_NEAR(q.w, ref.w, 2e-16 * 2);
    CHECK_NEAR(q.x, ref.x, 2e-16 * 2);
    CHECK_NEAR(q.y, ref.y, 2e-16 * 2);
    CHECK_NEAR(q.z, ref.z, 2e-16 * 2);
    mn_mat3 R = mn_mat3_exp(r);
    mn_mat3 Rr = th > 0 ? rodrigues(mn_vec3_scale(r, 1 / th), th) : mn_mat3_identity();
    CHECK(mat_maxdiff(&R, &Rr) <= 1e-15 * 2);
    /* log(exp r) = r; relative for small r (smooth near zero), absolute otherwise. At
     * exactly pi, -r is the same rotation. */
    mn_vec3 l = mn_quat_log(q);
    double tol = th < 1 ? 4e-16 * th + 1e-300 : 2e-15;
    if (th > MN_PI - 1e-6) {
        double e1 = mn_vec3_dist(l, r), e2 = mn_vec3_dist(l, mn_vec3_neg(r));
        CHECK(fmin(e1, e2) <= 1e-8); /* log is ill-conditioned right at pi */
        CHECK(mn_vec3_norm(l) <= MN_PI + 1e-15);
    } else {
        CHECK(mn_vec3_dist(l, r) <= tol);
        if (!(mn_vec3_dist(l, r) <= tol))
            fprintf(stderr, "  |r| = %g: log(exp r) err %.3g\n", th, mn_vec3_dist(l, r));
    }
    mn_vec3 lm = mn_mat3_log(&R);
    if (th > MN_PI - 1e-6) {
        /* A matrix near pi determines the axis only to ~eps / (pi - th). */
        double e1 = mn_vec3_dist(lm, r), e2 = mn_vec3_dist(lm, mn_vec3_neg(r));
        CHECK(fmin(e1, e2) <= 1e-7);
    } else {
        double tm = th < 1 ? 4e-16 * th * 4 + 1e-300 : 2e-15 * 4;
        CHECK(mn_vec3_dist(lm, r) <= tm);
        if (!(mn_vec3_dist(lm, r) <= tm))
            fprintf(stderr, "  |r| = %g: log(exp R) err %.3g\n", th, mn_vec3_dist(lm, r));
    }
}

static void test_exp_log(void) {
    rng_seed(5);
    const double mags[] = {
        0,    1e-300, 1e-20, 1e-12, 1e-9,         1e-7,         1e-6,          1e-5,
        1e-3, 0.1,    1,     3,     MN_PI - 1e-4, MN_PI - 1e-7, MN_PI - 1e-10, MN_PI};
    for (size_t i = 0; i < sizeof mags / sizeof mags[0]; i++)
        for (int t = 0; t < 50; t++)
            check_exp_log(mn_vec3_scale(rng_unit(), mags[i]));
    for (int t = 0; t < 2000; t++)
        check_exp_log(mn_vec3_scale(rng_unit(), rng_range(0, MN_PI)));
    /* log of -q is the same rotation; log of a rotation by more than pi wraps. */
    mn_quat q = mn_quat_exp(mn_v3(0, 0, 4.0));
    mn_vec3 l = mn_quat_log(q);
    CHECK_NEAR(l.z, 4.0 - 2 * MN_PI, 1e-15 * 4);
    mn_vec3 ln = mn_quat_log(mn_q4(-q.w, -q.x, -q.y, -q.z));
    CHECK_NEAR(ln.z, l.z, 1e-15);
    /* Identity. */
    mn_vec3 z = mn_quat_log(mn_quat_identity());
    CHECK(z.x == 0 && z.y == 0 && z.z == 0);
    mn_mat3 I = mn_mat3_identity();
    z = mn_mat3_log(&I);
    CHECK(z.x == 0 && z.y == 0 && z.z == 0);
}

/* ---- slerp ------------------------------------------------------------------------------------
 */

/* Rotation angle between a and b computed here: 2 atan2(|v|, |w|) of a* b. */
static double quat_angle_ref(mn_quat a, mn_quat b) {
    mn_quat d = mn_quat_mul(mn_quat_conj(a), b);
    return 2 * atan2(sqrt(d.x * d.x + d.y * d.y + d.z * d.z), fabs(d.w));
}

static void test_slerp(void) {
    rng_seed(6);
    for (int t = 0; t < 500; t++) {
        mn_quat a = mn_quat_exp(mn_vec3_scale(rng_unit(), rng_range(0, MN_PI)));
        mn_quat b = mn_quat_exp(mn_vec3_scale(rng_unit(), rng_range(0, MN_PI)));
        if (t % 2) b = mn_q4(-b.w, -b.x, -b.y, -b.z); /* same rotation, other hemisphere */
        double ang = quat_angle_ref(a, b);
        CHECK_NEAR(mn_quat_angle_between(a, b), ang, 1e-14);
        /* Endpoints (as rotations: slerp may return -b). */
        mn_quat s0 = mn_quat_slerp(a, b, 0), s1 = mn_quat_slerp(a, b, 1);
        CHECK(quat_angle_ref(s0, a) <= 1e-14);
        CHECK(quat_angle_ref(s1, b) <= 1e-14);
        /* Shortest arc and constant speed: angle(a, s(t)) = t * angle(a, b) <= pi. */
        for (int i = 1; i < 10; i++) {
            double u = i / 10.0;
            mn_quat s = mn_quat_slerp(a, b, u);
            CHECK_NEAR(mn_quat_norm(s), 1, 1e-15 * 2);
            CHECK_NEAR(quat_angle_ref(a, s), u * ang, 1e-13);
            CHECK_NEAR(quat_angle_ref(s, b), (1 - u) * ang, 1e-13);
        }
        /* Midpoint against the exp/log form a exp(0.5 log(a* b)) (shorter arc). */
        mn_quat d = mn_quat_mul(mn_quat_conj(a), b);
        if (d.w < 0) d = mn_q4(-d.w, -d.x, -d.y, -d.z);
        double vn = sqrt(d.x * d.x + d.y * d.y + d.z * d.z), half = atan2(vn, d.w) / 2;
        mn_quat h = vn > 0 ? mn_q4(cos(half), sin(half) * d.x / vn, sin(half) * d.y / vn,
                                   sin(half) * d.z / vn)
                           : mn_quat_identity();
        mn_quat mid_ref = mn_quat_mul(a, h), mid = mn_quat_slerp(a, b, 0.5);
        CHECK(quat_angle_ref(mid, mid_ref) <= 1e-13);
        CHECK(mn_quat_dot(mid, mid_ref) > 0 || mn_quat_dot(mid, a) >= 0);
    }
    /* A nearly identical pair: 1e-9 rad apart. */
    mn_quat a = mn_quat_exp(mn_v3(0.3, -0.2, 0.9));
    mn_vec3 ax = mn_vec3_normalize(mn_v3(1, 1, 0));
    for (int i = 0; i < 3; i++) {
        double gap = i == 0 ? 1e-9 : i == 1 ? 1e-12 : 1e-15;
        mn_quat b =
            mn_quat_mul(a, mn_q4(cos(gap / 2), sin(gap / 2) * ax.x, sin(gap / 2) * ax.y, 0));
        mn_quat s = mn_quat_slerp(a, b, 0.3);
        mn_quat expect = mn_quat_mul(
            a, mn_q4(cos(0.3 * gap / 2), sin(0.3 * gap / 2) * ax.x, sin(0.3 * gap / 2) * ax.y, 0));
        CHECK(mn_quat_isfinite(s));
        CHECK_NEAR(mn_quat_norm(s), 1, 2e-16 * 2);
        CHECK_NEAR(s.w, expect.w, 4e-16);
        CHECK_NEAR(s.x, expect.x, 4e-16);
        CHECK_NEAR(s.y, expect.y, 4e-16);
        CHECK_NEAR(s.z, expect.z, 4e-16);
    }
    /* Identical inputs. */
    mn_quat s = mn_quat_slerp(a, a, 0.7);
    CHECK_NEAR(s.w, a.w, 2e-16 * 2);
    CHECK_NEAR(s.z, a.z, 2e-16 * 2);
    /* Opposite hemispheres of the same rotation: stays that rotation. */
    s = mn_quat_slerp(a, mn_q4(-a.w, -a.x, -a.y, -a.z), 0.5);
    CHECK(quat_angle_ref(s, a) <= 1e-15 * 4);
}

/* ---- sincos ------------------------------------------------------------------------------------
 */

/* Distance in units in the last place of the reference value. */
static double ulps(double got, double ref) {
    if (got == ref) return 0;
    double u = nextafter(fabs(ref), INFINITY) - fabs(ref);
    return fabs(got - ref) / u;
}

/* fdlibm's kernels on [-pi/4, pi/4] one at a time, as written in Sun's k_sin.c and k_cos.c
 * (for |x| < pi/4, no tail): the library evaluates the two at once in the lanes of a vector
 * and must give these bits. */
static double ref_kernel_sin(double x) {
    const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
    double z = x * x, v = z * x;
    double r = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
    return x + v * (S1 + z * r);
}

static double ref_kernel_cos(double x) {
    const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
    double z = x * x;
    double r = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
    double hz = 0.5 * z, w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + z * r);
}

static void test_sincos(void) {
    rng_seed(7);
    /* within pi/4 no reduction: the kernels' bits exactly */
    long differ = 0;
    for (long i = 0; i < 200000; i++) {
        double x = rng_range(-0.78539816339744830962, 0.78539816339744830962), s, c;
        if (i % 8 == 0) x *= 1e-6;
        mn_sincos(x, &s, &c);
        double rs = ref_kernel_sin(x), rc = ref_kernel_cos(x);
        differ += memcmp(&s, &rs, sizeof s) != 0 || memcmp(&c, &rc, sizeof c) != 0;
    }
    CHECK(differ == 0);
    double worst_abs = 0, worst_ulp = 0, worst_ulp_x = 0;
    long bad = 0;
    for (long i = 0; i < 1000000; i++) {
        double x = rng_range(-1e4, 1e4);
        if (i % 4 == 0) x = rng_range(-10, 10); /* a quarter in the small range */
        double s, c;
        mn_sincos(x, &s, &c);
        double rs = sin(x), rc = cos(x);
        if (fabs(x) < 10) {
            double e = fmax(fabs(s - rs), fabs(c - rc));
            worst_abs = fmax(worst_abs, e);
            if (!(e <= 4e-16)) bad++;
        } else {
            double u = fmax(ulps(s, rs), ulps(c, rc));
            if (u > worst_ulp) worst_ulp = u, worst_ulp_x = x;
            if (!(u <= 2.0)) bad++;
        }
    }
    CHECK(bad == 0);
    printf("     sincos: max abs error %.3g (|x| < 10), max %.2f ulp (|x| >= 10, at x = %.17g)\n",
           worst_abs, worst_ulp, worst_ulp_x);

    /* Special values. */
    double s, c;
    mn_sincos(0.0, &s, &c);
    CHECK(s == 0 && !signbit(s) && c == 1);
    mn_sincos(-0.0, &s, &c);
    CHECK(s == 0 && signbit(s) && c == 1); /* sin(-0) = -0, as libm */
    mn_sincos(NAN, &s, &c);
    CHECK(isnan(s) && isnan(c));
    mn_sincos(INFINITY, &s, &c);
    CHECK(isnan(s) && isnan(c));
    mn_sincos(-INFINITY, &s, &c);
    CHECK(isnan(s) && isnan(c));
    /* Multiples of pi/2 (the doubles nearest them): the tiny results must be relatively
     * accurate, which tests the argument reduction. */
    double worst_k = 0;
    int worst_at = 0, bad_k = 0;
    for (int k = -2000; k <= 2000; k++) {
        double x = k * (MN_PI / 2);
        mn_sincos(x, &s, &c);
        double u = fmax(ulps(s, sin(x)), ulps(c, cos(x)));
        if (!(u <= 2.0)) bad_k++;
        if (u > worst_k) worst_k = u, worst_at = k;
    }
    CHECK(bad_k == 0);
    if (bad_k)
        fprintf(stderr, "  near k pi/2: %d of 4001 beyond 2 ulp, worst %.3g ulp at k = %d\n", bad_k,
                worst_k, worst_at);
    /* Near the switch to libm, and huge arguments (libm exactly). */
    const double big[] = {9.99999e4,  1e5 - 1e-9, 1e5,   1e5 + 1e-9, 1e6,
                          12345678.9, 1e22,       1e300, DBL_MAX,    -DBL_MAX};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        mn_sincos(big[i], &s, &c);
        CHECK(ulps(s, sin(big[i])) <= 2.0);
        CHECK(ulps(c, cos(big[i])) <= 2.0);
    }
    /* Tiny and subnormal arguments: sin x = x. */
    const double tiny[] = {1e-8, -1e-20, 1e-300, 5e-324};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        mn_sincos(tiny[i], &s, &c);
        CHECK(s == tiny[i]);
        CHECK(c == 1 || tiny[i] == 1e-8);
    }
}

/* ---- orthonormalize, rotation error, transforms ---------------------------------------------- */

/* Polar factor U V^T of M (the nearest rotation in the Frobenius norm) from the SVD. */
static mn_mat3 polar_rotation(const mn_mat3* M) {
    double A[9], s[3], U[9], V[9], work[32];
    memcpy(A, M->m, sizeof A);
    CHECK(mn_svd(A, 3, 3, s, U, V, work) == MN_OK);
    mn_mat3 P;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            P.m[3 * i + j] =
                U[3 * i] * V[3 * j] + U[3 * i + 1] * V[3 * j + 1] + U[3 * i + 2] * V[3 * j + 2];
    return P;
}

static void test_orthonormalize(void) {
    rng_seed(8);
    double worst_general = 0;
    for (int t = 0; t < 500; t++) {
        mn_mat3 R = rodrigues(rng_unit(), rng_range(0, MN_PI));
        /* An exact rotation is kept. */
        mn_mat3 O = mn_mat3_orthonormalize(&R);
        CHECK(mat_maxdiff(&O, &R) <= 1e-15 * 4);
        /* A drifted one (as after integrating (I + [w]x) R, Wu & Umetani's slip) becomes a
         * proper rotation close to it. */
        double eps = t % 2 ? 1e-6 : 1e-3;
        mn_mat3 M = R;
        for (int i = 0; i < 9; i++)
            M.m[i] += eps * rng_range(-1, 1);
        O = mn_mat3_orthonormalize(&M);
        CHECK(orth_error(&O) <= 1e-15 * 4);
        CHECK_NEAR(det3(&O), 1, 1e-15 * 4);
        CHECK(mat_maxdiff(&O, &M) <= 10 * eps);
        mn_mat3 P = polar_rotation(&M);
        CHECK(rot_distance(&O, &P) <= 3 * eps);
        worst_general = fmax(worst_general, rot_distance(&O, &P) / eps);
        /* Near the identity the quaternion route agrees with the nearest rotation (the
         * polar factor) to second order in the drift. */
        mn_mat3 N = mn_mat3_identity();
        for (int i = 0; i < 9; i++)
            N.m[i] += eps * rng_range(-1, 1);
        mn_mat3 ON = mn_mat3_orthonormalize(&N), PN = polar_rotation(&N);
        CHECK(rot_distance(&ON, &PN) <= 2 * eps * eps + 1e-15);
    }
    /* math.h calls the result the nearest rotation; away from the identity it differs
     * from the polar factor at first order in the drift (printed, see the report). */
    printf("     orthonormalize: max angle to the polar factor / drift = %.3g (general R)\n",
           worst_general);
    mn_mat3 D = {{1.001, 0.002, 0, -0.002, 0.999, 0.001, 0, -0.001, 1.0}};
    mn_mat3 O = mn_mat3_orthonormalize(&D);
    CHECK(orth_error(&O) <= 1e-15 * 4);
    CHECK_NEAR(det3(&O), 1, 1e-15 * 4);
}

static void test_rotation_error(void) {
    rng_seed(9);
    for (int t = 0; t < 500; t++) {
        mn_mat3 B = rodrigues(rng_unit(), rng_range(0, MN_PI));
        mn_vec3 r = mn_vec3_scale(rng_unit(), t < 50 ? rng_range(0, 1e-6) : rng_range(0, 3.0));
        double th = mn_vec3_norm(r);
        mn_mat3 E = th > 0 ? rodrigues(mn_vec3_scale(r, 1 / th), th) : mn_mat3_identity();
        mn_mat3 A = mat_mul(E, B); /* A = exp(r) B: the error is r, in the world frame */
        mn_vec3 e = mn_rotation_error(&A, &B);
        CHECK(mn_vec3_dist(e, r) <= 1e-14 + 1e-14 * th);
        mn_vec3 z = mn_rotation_error(&B, &B);
        CHECK(mn_vec3_norm(z) <= 1e-15 * 4);
    }
}

static void test_xform_and_mat3(void) {
    rng_seed(10);
    for (int t = 0; t < 200; t++) {
        mn_xform A, B;
        A.R = rodrigues(rng_unit(), rng_range(0, 3));
        A.p = mn_v3(rng_range(-2, 2), rng_range(-2, 2), rng_range(-2, 2));
        B.R = rodrigues(rng_unit(), rng_range(0, 3));
        B.p = mn_v3(rng_range(-2, 2), rng_range(-2, 2), rng_range(-2, 2));
        mn_vec3 x = mn_v3(rng_range(-2, 2), rng_range(-2, 2), rng_range(-2, 2));
        /* x_w = R x + p, written out. */
        mn_vec3 ax = mn_xform_apply(&A, x);
        mn_vec3 ref = mn_v3(A.R.m[0] * x.x + A.R.m[1] * x.y + A.R.m[2] * x.z + A.p.x,
                            A.R.m[3] * x.x + A.R.m[4] * x.y + A.R.m[5] * x.z + A.p.y,
                            A.R.m[6] * x.x + A.R.m[7] * x.y + A.R.m[8] * x.z + A.p.z);
        CHECK(mn_vec3_dist(ax, ref) <= 1e-15 * 4);
        /* A B applies B first. */
        mn_xform AB = mn_xform_mul(&A, &B);
        CHECK(mn_vec3_dist(mn_xform_apply(&AB, x), mn_xform_apply(&A, mn_xform_apply(&B, x))) <=
              1e-14);
        /* Inverse both ways. */
        mn_xform Ai = mn_xform_inverse(&A);
        mn_xform I1 = mn_xform_mul(&Ai, &A), I2 = mn_xform_mul(&A, &Ai);
        mn_mat3 Id = mn_mat3_identity();
        CHECK(mat_maxdiff(&I1.R, &Id) <= 1e-15 * 4);
        CHECK(mat_maxdiff(&I2.R, &Id) <= 1e-15 * 4);
        CHECK(mn_vec3_norm(I1.p) <= 1e-15 * 8);
        CHECK(mn_vec3_norm(I2.p) <= 1e-15 * 8);
        CHECK(mn_vec3_dist(mn_xform_apply(&Ai, ax), x) <= 1e-14);
        /* mat3 helpers against the reference product. */
        mn_mat3 M = mn_mat3_mul(&A.R, &B.R), Mr = mat_mul(A.R, B.R);
        CHECK(mat_maxdiff(&M, &Mr) <= 1e-15);
        mn_mat3 At = mn_mat3_transpose(&A.R);
        mn_mat3 T = mn_mat3_tmul(&A.R, &B.R), Tr = mat_mul(At, B.R);
        CHECK(mat_maxdiff(&T, &Tr) <= 1e-15);
        CHECK(mn_vec3_dist(mn_mat3_tmulv(&A.R, x), mn_mat3_mulv(&At, x)) <= 1e-15);
        mn_vec3 c1 = mn_mat3_col(&A.R, 1);
        CHECK(c1.x == A.R.m[1] && c1.y == A.R.m[4] && c1.z == A.R.m[7]);
        mn_mat3 S = mn_mat3_skew(A.p);
        CHECK(mn_vec3_dist(mn_mat3_mulv(&S, x), mn_vec3_cross(A.p, x)) <= 1e-15);
    }
    mn_xform I = mn_xform_identity();
    mn_vec3 v = mn_xform_apply(&I, mn_v3(1, 2, 3));
    CHECK(v.x == 1 && v.y == 2 && v.z == 3);
    CHECK(mn_quat_normalize(mn_q4(0, 0, 0, 0)).w == 1);
    CHECK(mn_vec3_normalize(mn_v3(0, 0, 0)).x == 0);
}

/* mn_angle_near and mn_euler_nearest: whole turns only, the branch nearest the reference,
 * the limits' penalty and the count of angles that decide. */
static void test_euler_nearest(void) {
    rng_seed(11);
    for (int t = 0; t < 2000; t++) {
        double a = rng_range(-40, 40), ref = rng_range(-40, 40), r = mn_angle_near(a, ref);
        CHECK(fabs(r - ref) <= MN_PI + 1e-12);
        double turns = (r - a) / (2 * MN_PI);
        CHECK(fabs(turns - nearbyint(turns)) < 1e-9);
        if (fabs(ref - a) <= MN_PI) CHECK(r == a);
    }
    for (int o = 0; o < 6; o++) {
        for (int t = 0; t < 300; t++) {
            double e0[3] = {rng_range(-3, 3), rng_range(-1.4, 1.4), rng_range(-3, 3)}, e[3];
            mn_mat3 R = euler_ref((mn_euler_order)o, e0);
            mn_euler_from_mat3((mn_euler_order)o, &R, e);
            /* the reference: one of the two branches, moved by whole turns, plus noise */
            double alt[3] = {e[0] + MN_PI, MN_PI - e[1], e[2] + MN_PI}, ref[3], out[3];
            const double* br = t % 2 ? alt : e;
            for (int i = 0; i < 3; i++)
                ref[i] = br[i] + 2 * MN_PI * (double)((t + i) % 5 - 2) + rng_range(-0.05, 0.05);
            mn_euler_nearest(e, ref, 3, NULL, NULL, out);
            for (int i = 0; i < 3; i++)
                CHECK(fabs(out[i] - ref[i]) < 0.06);
            mn_mat3 back = euler_ref((mn_euler_order)o, out);
            CHECK(rot_distance(&back, &R) < 1e-12);
        }
    }
    /* only the first n angles decide */
    double e[3] = {0.1, 1.4, 0.2}, out[3];
    double ref[3] = {0.1 + MN_PI, 1.4, 0.2};
    mn_euler_nearest(e, ref, 3, NULL, NULL, out);
    CHECK(out[0] == e[0] && out[1] == e[1] && out[2] == e[2]);
    mn_euler_nearest(e, ref, 1, NULL, NULL, out);
    CHECK_NEAR(out[0], 0.1 + MN_PI, 1e-15);
    CHECK_NEAR(out[1], MN_PI - 1.4, 1e-15);
    /* a limit on the first angle that e leaves moves the choice to the other branch */
    double on[3] = {0.1, 1.4, 0.2}, lo[3] = {2, -INFINITY, -INFINITY},
           hi[3] = {4, INFINITY, INFINITY};
    mn_euler_nearest(e, on, 1, NULL, NULL, out);
    CHECK(out[0] == e[0]);
    mn_euler_nearest(e, on, 1, lo, hi, out);
    CHECK_NEAR(out[0], 0.1 + MN_PI, 1e-15);
    /* out may be e itself */
    double f[3] = {0.1, 1.4, 0.2};
    mn_euler_nearest(f, ref, 1, NULL, NULL, f);
    CHECK_NEAR(f[0], 0.1 + MN_PI, 1e-15);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_euler_names);
    RUN(test_euler_to_matrix_all_orders);
    RUN(test_euler_round_trip_generic);
    RUN(test_euler_round_trip_gimbal);
    RUN(test_euler_nearest);
    RUN(test_quat_matrix);
    RUN(test_exp_log);
    RUN(test_slerp);
    RUN(test_sincos);
    RUN(test_orthonormalize);
    RUN(test_rotation_error);
    RUN(test_xform_and_mat3);
    return mn_test_report();
}
