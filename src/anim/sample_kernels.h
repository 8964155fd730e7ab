/* Private to the anim layer: the arithmetic kernels of sampling and blending (sample.c,
 * layers.c). Each computes what the general routine of the core layer computes, to within a
 * few ulps: sine and cosine by core/sincos_inline.h's reduction and polynomials (within 2e-16
 * of mn_sincos), atan2 by fdlibm's polynomial (core/atan_inline.h, within two ulps of libm),
 * the renormalisation of a quaternion that is unit up to rounding by a Taylor step instead of
 * a square root and a division, and the batches below run them over several rotation units
 * at once, two on the two lanes of a vector where they can. The sampling tables (tables.c)
 * keep the general routines, so the tables are unchanged. */
#ifndef MN_ANIM_SAMPLE_KERNELS_H
#define MN_ANIM_SAMPLE_KERNELS_H

#include <math.h>

#include "anim_internal.h"
#include "core/atan_inline.h"
#include "core/sincos_inline.h"

/* sin and cos of x: core/sincos_inline.h's mn_sincos_fast (the two-part reduction by pi/2,
 * within 2e-16 of mn_sincos_inline) without its branch for |x| <= pi/4, where the reduction
 * is exact (fn = 0) and gives the same bits: the angles of a sample are random, and that
 * branch would be mispredicted about every other time. */
static inline void mn_anim_sincos(double x, double* s, double* c) {
    mn_sincos_reduced(x, s, c);
}

/* ---- batches ---------------------------------------------------------------------------
 * Sampling runs stage by stage over up to MN_ANIM_BATCH rotation units at once (their
 * numbers side by side, structure of arrays): all the units' sines and cosines, then all
 * their angles, and so on. One unit's work is a long chain of dependent operations (a sine,
 * an arc cosine, another sine, a decomposition into three arctangents), too long for the
 * processor to look past into the next unit's; the loops below have short bodies of
 * independent iterations, which overlap. */
#define MN_ANIM_BATCH 16

/* mn_anim_sincos on two lanes: the reduction, the two polynomials of poly_sincos (each now
 * over the two angles) and the quadrant as sign flips and selects; the same operations per
 * angle, so the same bits. |x| < 1e5 (mn_anim_sincos_n sees to the others). */
static inline void mn_anim_sincos2(mn_v2d x, mn_v2d* s, mn_v2d* c) {
    const double S1 = MN_SIN_K[0], S2 = MN_SIN_K[1], S3 = MN_SIN_K[2], S4 = MN_SIN_K[3],
                 S5 = MN_SIN_K[4], S6 = MN_SIN_K[5];
    const double C1 = MN_COS_K[0], C2 = MN_COS_K[1], C3 = MN_COS_K[2], C4 = MN_COS_K[3],
                 C5 = MN_COS_K[4], C6 = MN_COS_K[5];
    const double round_magic = 6755399441055744.0; /* 1.5 * 2^52 */
    mn_v2d t = x * INV_PIO2 + round_magic;
    mn_v2d fn = t - round_magic;
    mn_v2d y = (x - fn * PIO2_1) - fn * PIO2_2;
    mn_v2d z = y * y, v = z * y;
    mn_v2d rs = S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * S6))));
    mn_v2d rc = C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6))));
    mn_v2d ps = y + v * rs;
    mn_v2d hz = 0.5 * z, w = 1.0 - hz;
    mn_v2d pc = w + (((1.0 - w) - hz) + z * (z * rc));
    mn_v2l n = (mn_v2l)t, one = {1, 1}, two = {2, 2};
    mn_v2l odd = -(n & one); /* all ones in an odd quadrant */
    mn_v2d ss = mn_v2d_select(odd, pc, ps), cc = mn_v2d_select(odd, ps, pc);
    *s = (mn_v2d)((mn_v2l)ss ^ ((n & two) << 62));
    *c = (mn_v2d)((mn_v2l)cc ^ (((n + one) & two) << 62));
}

/* The pairs on two lanes, then mn_anim_sincos for an odd one out and for arguments beyond the
 * reduction's range (none in a sample but by accident). */
static inline void mn_anim_sincos_n(const double* x, double* s, double* c, int n) {
    int i = 0;
    for (; i + 1 < n; i += 2) {
        mn_v2d vs, vc;
        mn_anim_sincos2(mn_v2d_load(x + i), &vs, &vc);
        mn_v2d_store(s + i, vs);
        mn_v2d_store(c + i, vc);
    }
    for (; i < n; i++)
        mn_anim_sincos(x[i], &s[i], &c[i]);
    for (i = 0; i < n; i++)
        if (!(fabs(x[i]) < 1e5)) mn_sincos_inline(x[i], &s[i], &c[i]);
}

/* 1 / sqrt(n2). A slerp of unit quaternions is unit up to rounding, so n2 = 1 + e with e
 * near 1e-16: there 1 - e/2 + 3e^2/8 is n2^-1/2 to within 5|e|^3/16 (below 1e-19 for |e| <
 * 1e-6), without the square root and the division whose latency a sample waits for. */
static inline double mn_anim_inv_norm(double n2) {
    double e = n2 - 1;
    if (fabs(e) < 1e-6) return 1 - e * (0.5 - 0.375 * e);
    return 1 / sqrt(n2);
}

/* q <- q / |q| (w, x, y, z). */
static inline void mn_anim_normalize4(double* q) {
    double inv = mn_anim_inv_norm(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    q[0] *= inv, q[1] *= inv, q[2] *= inv, q[3] *= inv;
}

/* The angle acos(d) of two unit quaternions with dot product d in (-1, 1), as atan2 of its
 * sine and cosine; sqrt((1 - d)(1 + d)) keeps the sine's digits near d = +-1, where
 * 1 - d^2 loses them. */
static inline double mn_anim_acos(double d) {
    return mn_atan2_inline(sqrt((1 - d) * (1 + d)), d);
}

/* The kernel over all, then libm for the special arguments (none in a sample but by
 * accident): the first loop has neither a branch nor a call. */
static inline void mn_anim_atan2_n(const double* y, const double* x, double* a, int n) {
    int i = 0;
    for (; i + 1 < n; i += 2)
        mn_v2d_store(a + i, mn_atan2_kernel2(mn_v2d_load(y + i), mn_v2d_load(x + i)));
    for (; i < n; i++)
        a[i] = mn_atan2_kernel(y[i], x[i]);
    for (i = 0; i < n; i++)
        if (mn_atan2_special(y[i], x[i])) a[i] = atan2(y[i], x[i]);
}

/* mn_angle_near (core/math.c): a moved by whole turns to within pi of ref. */
static inline double mn_anim_angle_near(double a, double ref) {
    double d = ref - a;
    if (d >= -MN_PI && d <= MN_PI) return a;
    return a + 2 * MN_PI * nearbyint(d / (2 * MN_PI));
}

/* mn_euler_nearest (core/math.c) over all three angles, without limits. */
static inline void mn_anim_euler_nearest(const double e[3], const double ref[3], double out[3]) {
    double a[3], b[3], da = 0, db = 0;
    a[0] = mn_anim_angle_near(e[0], ref[0]);
    a[1] = mn_anim_angle_near(e[1], ref[1]);
    a[2] = mn_anim_angle_near(e[2], ref[2]);
    b[0] = mn_anim_angle_near(e[0] + MN_PI, ref[0]);
    b[1] = mn_anim_angle_near(MN_PI - e[1], ref[1]);
    b[2] = mn_anim_angle_near(e[2] + MN_PI, ref[2]);
    for (int i = 0; i < 3; i++) {
        da += (a[i] - ref[i]) * (a[i] - ref[i]);
        db += (b[i] - ref[i]) * (b[i] - ref[i]);
    }
    const double* w = da <= db ? a : b;
    out[0] = w[0], out[1] = w[1], out[2] = w[2];
}

/* The hinge angles of n run units un[i] from their rotations rot[i] (w, x, y, z), each on the
 * branch nearest ref[i], clamped to the limits, into q (mn_anim_run_angles, a batch of at most
 * MN_ANIM_BATCH). */
void mn_anim_run_angles_n(const mn_seq* s, const seq_unit* const* un, const double* const* rot,
                          const double* const* ref, double* q, int n);

#endif
