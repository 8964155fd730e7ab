/* Inline sincos for the hot loops of the library (forward kinematics). Private header. */
#ifndef MN_SINCOS_INLINE_H
#define MN_SINCOS_INLINE_H

#include <math.h>

#include "core/v2d.h"

/* ---- sincos ----------------------------------------------------------------------------
 * Cody-Waite reduction by pi/2 with a three-part constant, then minimax polynomials on
 * [-pi/4, pi/4] (the classic coefficients of Sun's fdlibm kernels). Forward kinematics calls
 * this once per hinge, so it is the hot spot of a chain FK. */
static const double PIO2_1 = 1.57079632673412561417e+00;  /* first 33 bits of pi/2 */
static const double PIO2_2 = 6.07710050630396597660e-11;  /* next 33 bits */
static const double PIO2_3 = 2.02226624871116645580e-21;  /* next 33 bits */
static const double PIO2_3T = 8.47842766036889956997e-32; /* pi/2 - (PIO2_1 + PIO2_2 + PIO2_3) */
static const double INV_PIO2 = 6.36619772367581382433e-01;

/* The two kernels on [-pi/4, pi/4]:
 *   sin x = x + x^3 (S1 + z (S2 + z (S3 + z (S4 + z (S5 + z S6))))),  z = x^2,
 *   cos x = w + (((1 - w) - z/2) + z^2 (C1 + z (C2 + ... + z C6))),   w = 1 - z/2,
 * computed at once: the two Horner recurrences have the same degree and go in the two lanes
 * of one vector (the same operations in the same order as one at a time, so the same bits,
 * for half the multiplies and adds; the chain FK 5 % faster). */
static const double MN_SIN_K[6] = {-1.66666666666666324348e-01, 8.33333333332248946124e-03,
                                   -1.98412698298579493134e-04, 2.75573137070700676789e-06,
                                   -2.50507602534068634195e-08, 1.58969099521155010221e-10};
static const double MN_COS_K[6] = {4.16666666666666019037e-02, -1.38888888888741095749e-03,
                                   2.48015872894767294178e-05, -2.75573143513906633035e-07,
                                   2.08757232129817482790e-09, -1.13596475577881948265e-11};

/* The two kernels' Horner recurrences at z = x^2, side by side: (S1 + z (S2 + ...), C1 + ...). */
static inline mn_v2d poly_sincos_r(double z) {
    const mn_v2d K1 = {MN_SIN_K[0], MN_COS_K[0]}, K2 = {MN_SIN_K[1], MN_COS_K[1]},
                 K3 = {MN_SIN_K[2], MN_COS_K[2]}, K4 = {MN_SIN_K[3], MN_COS_K[3]},
                 K5 = {MN_SIN_K[4], MN_COS_K[4]}, K6 = {MN_SIN_K[5], MN_COS_K[5]};
    mn_v2d zz = {z, z};
    return K1 + zz * (K2 + zz * (K3 + zz * (K4 + zz * (K5 + zz * K6))));
}

/* cos x from z = x^2 and the cosine recurrence r (fdlibm's __kernel_cos, y = 0). */
static inline double poly_cos(double z, double r) {
    double rc = z * r, hz = 0.5 * z, w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + z * rc);
}

static inline void poly_sincos(double x, double* ps, double* pc) {
    double z = x * x, v = z * x;
    mn_v2d r = poly_sincos_r(z);
    *ps = x + v * r[0];
    *pc = poly_cos(z, r[1]);
}

/* sin(y) / y and cos(y) from z = y^2 alone, |y| <= pi/4: the kernels above are polynomials
 * in z (sin y = y (1 + z P(z))), so an angle known by its square needs no square root. */
static inline void mn_sinc_cos_sq(double z, double* sinc, double* c) {
    mn_v2d r = poly_sincos_r(z);
    *sinc = 1.0 + z * r[0];
    *c = poly_cos(z, r[1]);
}

static inline void mn_sincos_inline(double x, double* s, double* c) {
    double ax = fabs(x);
    if (ax <= 0.78539816339744830962) {
        if (x == 0) { /* keeps the sign of zero */
            *s = x;
            *c = 1.0;
            return;
        }
        poly_sincos(x, s, c);
        return;
    }
    if (!(ax < 1e5)) { /* large, inf or NaN: libm */
        *s = sin(x);
        *c = cos(x);
        return;
    }
    /* fn = nearbyint(x / (pi/2)) without a call: adding and subtracting 1.5 * 2^52 rounds
     * a number below 2^51 in magnitude to the nearest integer, ties to even, as nearbyint
     * does in the default rounding mode. fn < 2^17, so fn * PIO2_k is exact; x - fn PIO2_1
     * is exact (Sterbenz), and the next subtraction is made exact with TwoSum so that
     * arguments near a multiple of pi/2 keep their relative accuracy. */
    const double round_magic = 6755399441055744.0; /* 1.5 * 2^52 */
    double t = x * INV_PIO2 + round_magic;
    double fn = t - round_magic;
    double r = x - fn * PIO2_1, w = fn * PIO2_2;
    double hi = r - w, bb = hi - r;
    double lo = (r - (hi - bb)) - (w + bb);
    double y = hi + ((lo - fn * PIO2_3) - fn * PIO2_3T);
    double ps, pc;
    poly_sincos(y, &ps, &pc);
    /* quadrant n = fn mod 4: (s, c) = (ps, pc), (pc, -ps), (-ps, -pc), (-pc, ps); selected
     * without a branch (random angles would mispredict one) */
    long n = (long)fn;
    double ss = (n & 1) ? pc : ps, cc = (n & 1) ? ps : pc;
    double sgs = (n & 2) ? -1.0 : 1.0, sgc = ((n + 1) & 2) ? -1.0 : 1.0;
    *s = sgs * ss;
    *c = sgc * cc;
}

/* The same for |x| < 1e5 with a two-part constant: y = (x - fn PIO2_1) - fn PIO2_2, whose
 * first subtraction is exact and whose error is the last rounding (half an ulp of y) and
 * fn PIO2_3 (below 2e-21 fn): within an ulp of y of mn_sincos_inline's reduction, an
 * absolute error below 2e-16 in the sine and cosine, and about a third of its cost. The
 * quadrant comes from the low bits of the rounding sum and is applied with a table. For
 * the chain FK, whose frames are compared to 1e-15. Larger, infinite or NaN x: as
 * mn_sincos_inline. */
/* mn_sincos_fast's reduction and quadrant table for every x, small ones too (no branch on
 * |x| <= pi/4: the reduction is exact there, fn = 0, and gives the same bits; sampling,
 * whose angles are random, would mispredict that branch about every other time). */
static inline void mn_sincos_reduced(double x, double* s, double* c) {
    if (!(fabs(x) < 1e5)) {
        mn_sincos_inline(x, s, c);
        return;
    }
    static const double sign_s[4] = {1, 1, -1, -1}, sign_c[4] = {1, -1, -1, 1};
    const double round_magic = 6755399441055744.0; /* 1.5 * 2^52: see mn_sincos_inline */
    double t = x * INV_PIO2 + round_magic;
    double fn = t - round_magic;
    double y = (x - fn * PIO2_1) - fn * PIO2_2;
    double pp[2];
    poly_sincos(y, &pp[0], &pp[1]);
    /* fn's low bits are those of t's mantissa (t = 1.5 2^52 + fn, ulp 1) */
    union {
        double d;
        unsigned long long u;
    } bits = {t};
    unsigned n = (unsigned)(bits.u & 3);
    *s = sign_s[n] * pp[n & 1];
    *c = sign_c[n] * pp[(n & 1) ^ 1];
}

static inline void mn_sincos_fast(double x, double* s, double* c) {
    if (fabs(x) <= 0.78539816339744830962) { /* no reduction: as mn_sincos_inline */
        double ps;
        poly_sincos(x, &ps, c);
        *s = x == 0 ? x : ps;
        return;
    }
    mn_sincos_reduced(x, s, c);
}

#endif
