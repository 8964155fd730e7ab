/* Inline arctangents for the hot loops of the library (sampling and blending of sequences:
 * every compound joint's rotation decomposed into hinge angles, every slerp's angle).
 * Private header. */
#ifndef MN_ATAN_INLINE_H
#define MN_ATAN_INLINE_H

#include <math.h>

#include "core/v2d.h"

/* ---- atan2 ---------------------------------------------------------------------------
 * The octant first: t = min(|x|, |y|) / max(|x|, |y|) lies in [0, 1], and above tan(pi/8)
 * atan t = pi/4 + atan((t - 1) / (t + 1)), the quotient taken at once as (min - max) /
 * (min + max); either way the argument lies within 0.4143 of zero, where Sun's fdlibm s_atan.c
 * minimax polynomial (odd, degree 23, two interleaved Horner chains; built for |x| < 7/16)
 * holds to within an ulp. Then pi/2 - z when |y| > |x| and pi - z when x < 0, with pi/4,
 * pi/2 and pi in two parts, as fdlibm's e_atan2.c places the angle. Every choice is a
 * select, not a branch: the arguments of a sample are random, and a mispredicted branch
 * costs more than the arithmetic. Within two ulps of libm's atan2 (tests/core). Zero,
 * infinite and NaN arguments go to libm's atan2 (its special values exactly). */
/* The arithmetic of mn_atan2_inline for nonzero finite arguments (no call, no branch: loops
 * over it vectorise). */
static inline double mn_atan2_kernel(double y, double x) {
    const double T0 = 3.33333333333329318027e-01, T1 = -1.99999999998764832476e-01,
                 T2 = 1.42857142725034663711e-01, T3 = -1.11111104054623557880e-01,
                 T4 = 9.09088713343650656196e-02, T5 = -7.69187620504482999495e-02,
                 T6 = 6.66107313738753120669e-02, T7 = -5.83357013379057348645e-02,
                 T8 = 4.97687799461593236017e-02, T9 = -3.65315727442169155270e-02,
                 T10 = 1.62858201153657823623e-02;
    const double pio4_hi = 7.85398163397448278999e-01, pio4_lo = 3.06161699786838301793e-17;
    const double pio2_hi = 1.57079632679489655800e+00, pio2_lo = 6.12323399573676603587e-17;
    const double pi_hi = 3.14159265358979311600e+00, pi_lo = 1.22464679914735317720e-16;
    double ax = fabs(x), ay = fabs(y);
    int swap = ay > ax;
    double mn = swap ? ax : ay, mx = swap ? ay : ax;
    int oct = mn > 0.41421356237309503 * mx;
    double num = oct ? mn - mx : mn, den = oct ? mn + mx : mx;
    double t = num / den, z = t * t, w = z * z;
    double s1 = z * (T0 + w * (T2 + w * (T4 + w * (T6 + w * (T8 + w * T10)))));
    double s2 = w * (T1 + w * (T3 + w * (T5 + w * (T7 + w * T9))));
    double hi = oct ? pio4_hi : 0.0, lo = oct ? pio4_lo : 0.0;
    double a = hi - ((t * (s1 + s2) - lo) - t); /* atan(mn / mx) in [0, pi/4] */
    a = swap ? pio2_hi - (a - pio2_lo) : a;     /* atan(|y| / |x|) */
    a = x < 0 ? pi_hi - (a - pi_lo) : a;
    return y < 0 ? -a : a;
}

/* mn_atan2_kernel on two lanes at once (the same operations per lane, so the same bits). */
typedef long long mn_v2l __attribute__((vector_size(16)));
static inline mn_v2d mn_v2d_select(mn_v2l m, mn_v2d a, mn_v2d b) {
    return (mn_v2d)(((mn_v2l)a & m) | ((mn_v2l)b & ~m));
}
static inline mn_v2d mn_atan2_kernel2(mn_v2d y, mn_v2d x) {
    const double T0 = 3.33333333333329318027e-01, T1 = -1.99999999998764832476e-01,
                 T2 = 1.42857142725034663711e-01, T3 = -1.11111104054623557880e-01,
                 T4 = 9.09088713343650656196e-02, T5 = -7.69187620504482999495e-02,
                 T6 = 6.66107313738753120669e-02, T7 = -5.83357013379057348645e-02,
                 T8 = 4.97687799461593236017e-02, T9 = -3.65315727442169155270e-02,
                 T10 = 1.62858201153657823623e-02;
    const mn_v2l sign = {(long long)0x8000000000000000ULL, (long long)0x8000000000000000ULL};
    const mn_v2d zero = {0, 0}, one8 = {0.41421356237309503, 0.41421356237309503};
    const mn_v2d pio4_hi = {7.85398163397448278999e-01, 7.85398163397448278999e-01},
                 pio4_lo = {3.06161699786838301793e-17, 3.06161699786838301793e-17},
                 pio2_hi = {1.57079632679489655800e+00, 1.57079632679489655800e+00},
                 pio2_lo = {6.12323399573676603587e-17, 6.12323399573676603587e-17},
                 pi_hi = {3.14159265358979311600e+00, 3.14159265358979311600e+00},
                 pi_lo = {1.22464679914735317720e-16, 1.22464679914735317720e-16};
    mn_v2d ax = (mn_v2d)((mn_v2l)x & ~sign), ay = (mn_v2d)((mn_v2l)y & ~sign);
    mn_v2l swap = ay > ax;
    mn_v2d mn = mn_v2d_select(swap, ax, ay), mx = mn_v2d_select(swap, ay, ax);
    mn_v2l oct = mn > one8 * mx;
    mn_v2d num = mn_v2d_select(oct, mn - mx, mn), den = mn_v2d_select(oct, mn + mx, mx);
    mn_v2d t = num / den, z = t * t, w = z * z;
    mn_v2d s1 = z * (T0 + w * (T2 + w * (T4 + w * (T6 + w * (T8 + w * T10)))));
    mn_v2d s2 = w * (T1 + w * (T3 + w * (T5 + w * (T7 + w * T9))));
    mn_v2d hi = mn_v2d_select(oct, pio4_hi, zero), lo = mn_v2d_select(oct, pio4_lo, zero);
    mn_v2d a = hi - ((t * (s1 + s2) - lo) - t);
    a = mn_v2d_select(swap, pio2_hi - (a - pio2_lo), a);
    a = mn_v2d_select(x < zero, pi_hi - (a - pi_lo), a);
    return (mn_v2d)((mn_v2l)a ^ ((mn_v2l)y & sign & (y < zero)));
}

/* Arguments the kernel does not take: a zero, an infinity, a NaN (or an underflow of the
 * product, which libm takes as well). */
static inline int mn_atan2_special(double y, double x) {
    double p = fabs(x) * fabs(y);
    return !(p > 0 && p < INFINITY);
}

static inline double mn_atan2_inline(double y, double x) {
    return mn_atan2_special(y, x) ? atan2(y, x) : mn_atan2_kernel(y, x);
}

#endif
