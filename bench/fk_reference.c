/* The hand-unrolled Panda FK (fk_reference.h). The chain, from the URDF: seven hinges about
 * their z axes; joint i's frame sits at offset o_i in its parent's, turned by Rx(+-90
 * degrees) (exactly a signed swap of two columns), then turns by q_i about z:
 *
 *   joint  offset            orient        joint  offset            orient
 *   1      (0, 0, 0.333)     identity      5      (-0.0825, 0.384, 0) Rx(-90)
 *   2      0                 Rx(-90)       6      0                 Rx(+90)
 *   3      (0, -0.316, 0)    Rx(+90)       7      (0.088, 0, 0)     Rx(+90)
 *   4      (0.0825, 0, 0)    Rx(+90)       8      (0, 0, 0.107)     fixed (the flange)
 *
 * The running frame is three columns x, y, z and a position p. Rx(+90) maps the columns
 * (x, y, z) to (x, z, -y), Rx(-90) to (x, -z, y); a turn by q about z maps (x, y) to
 * (c x + s y, c y - s x). An offset (a, b, 0) adds a x + b y to p. */
#include "fk_reference.h"

#include <marionette/math.h>

#include <math.h>

typedef struct v3 {
    double x, y, z;
} v3;

static inline v3 lin(double a, v3 u, double b, v3 v) {
    v3 r = {a * u.x + b * v.x, a * u.y + b * v.y, a * u.z + b * v.z};
    return r;
}
static inline v3 neg(v3 u) {
    v3 r = {-u.x, -u.y, -u.z};
    return r;
}
static inline v3 axpy(double a, v3 u, v3 p) {
    v3 r = {p.x + a * u.x, p.y + a * u.y, p.z + a * u.z};
    return r;
}

/* R <- R Rx(+90) Rz(q): (x, y, z) -> (c x + s z, c z - s x, -y). */
#define TURN_PLUS(c, s)                                                                            \
    do {                                                                                           \
        v3 x2 = lin(c, x, s, z), y2 = lin(c, z, -(s), x), z2 = neg(y);                             \
        x = x2, y = y2, z = z2;                                                                    \
    } while (0)
/* R <- R Rx(-90) Rz(q): (x, y, z) -> (c x - s z, -c z - s x, y). */
#define TURN_MINUS(c, s)                                                                           \
    do {                                                                                           \
        v3 x2 = lin(c, x, -(s), z), y2 = lin(-(c), z, -(s), x), z2 = y;                            \
        x = x2, y = y2, z = z2;                                                                    \
    } while (0)

#define PANDA_FK_BODY(SINCOS)                                                                      \
    double s[7], c[7];                                                                             \
    for (int i = 0; i < 7; i++)                                                                    \
        SINCOS(q[i], &s[i], &c[i]);                                                                \
    v3 x = {c[0], s[0], 0}, y = {-s[0], c[0], 0}, z = {0, 0, 1}, p = {0, 0, 0.333};                \
    TURN_MINUS(c[1], s[1]);                                                                        \
    p = axpy(-0.316, y, p);                                                                        \
    TURN_PLUS(c[2], s[2]);                                                                         \
    p = axpy(0.0825, x, p);                                                                        \
    TURN_PLUS(c[3], s[3]);                                                                         \
    p = axpy(-0.0825, x, p);                                                                       \
    p = axpy(0.384, y, p);                                                                         \
    TURN_MINUS(c[4], s[4]);                                                                        \
    TURN_PLUS(c[5], s[5]);                                                                         \
    p = axpy(0.088, x, p);                                                                         \
    TURN_PLUS(c[6], s[6]);                                                                         \
    p = axpy(0.107, z, p);                                                                         \
    R[0] = x.x, R[1] = y.x, R[2] = z.x;                                                            \
    R[3] = x.y, R[4] = y.y, R[5] = z.y;                                                            \
    R[6] = x.z, R[7] = y.z, R[8] = z.z;                                                            \
    P[0] = p.x, P[1] = p.y, P[2] = p.z

void mn_bench_panda_fk(const double q[7], double R[9], double P[3],
                       void (*sincos_fn)(double, double*, double*)) {
    PANDA_FK_BODY(sincos_fn);
}

void mn_bench_panda_fk_mn(const double q[7], double R[9], double P[3]) {
    PANDA_FK_BODY(mn_sincos);
}

static inline void libm_sincos(double a, double* s, double* c) {
    *s = sin(a);
    *c = cos(a);
}

void mn_bench_panda_fk_libm(const double q[7], double R[9], double P[3]) {
    PANDA_FK_BODY(libm_sincos);
}
