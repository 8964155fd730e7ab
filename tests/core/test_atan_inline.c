/* The inline arctangent of the sampling kernels (core/atan_inline.h) against libm's atan2:
 * within two ulps over every octant and around the reduction's switch at tan(pi/8), libm's
 * own special values for zeros, infinities and NaN, and the two-lane kernel the same bits as
 * the one-lane one. */
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/atan_inline.h"

static uint64_t rng_state = 12345;
static double rng_uniform(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* |a - b| in ulps of b. */
static double ulps(double a, double b) {
    if (a == b) return 0;
    double u = nextafter(fabs(b), INFINITY) - fabs(b);
    return fabs(a - b) / u;
}

static double sgn(void) {
    return rng_uniform() < 0.5 ? -1 : 1;
}

static void test_against_libm(void) {
    double worst = 0;
    long bad = 0;
    for (long i = 0; i < 2000000; i++) {
        double y, x;
        switch (i % 5) {
        case 0: /* the unit square */
            y = 2 * rng_uniform() - 1, x = 2 * rng_uniform() - 1;
            break;
        case 1: /* wide magnitudes */
            y = sgn() * pow(10, -30 + 60 * rng_uniform());
            x = sgn() * pow(10, -30 + 60 * rng_uniform());
            break;
        case 2: /* around the switch at tan(pi/8), both ways round */
            x = sgn() * (0.1 + rng_uniform());
            y = sgn() * fabs(x) * 0.41421356237309503 * (1 + 1e-7 * (2 * rng_uniform() - 1));
            if (rng_uniform() < 0.5) {
                double t = x;
                x = y, y = t;
            }
            break;
        case 3: /* near the negative x axis, where the result is near +-pi */
            y = sgn() * 1e-9 * rng_uniform(), x = -1 + 1e-9 * rng_uniform();
            break;
        default: /* near the diagonals */
            x = sgn() * (0.1 + rng_uniform());
            y = sgn() * fabs(x) * (1 + 1e-9 * (2 * rng_uniform() - 1));
        }
        double a = mn_atan2_inline(y, x), r = atan2(y, x), u = ulps(a, r);
        if (u > worst) worst = u;
        if (!(u <= 2)) bad++;
    }
    CHECK(bad == 0);
    printf("     atan2: max %.0f ulp from libm over 2e6 arguments\n", worst);
}

static void test_special_values(void) {
    const double v[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN};
    int n = (int)(sizeof v / sizeof v[0]), differ = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double a = mn_atan2_inline(v[i], v[j]), r = atan2(v[i], v[j]);
            if (isnan(r) ? !isnan(a) : memcmp(&a, &r, sizeof a) != 0) differ++;
        }
    CHECK(differ == 0);
    /* subnormal arguments: no special value, within the two ulps */
    const double w[] = {1.0, -1.0, 1e-310, -1e-310, 3e-320, -2.5};
    int nw = (int)(sizeof w / sizeof w[0]);
    double worst = 0;
    for (int i = 0; i < nw; i++)
        for (int j = 0; j < nw; j++)
            worst = fmax(worst, ulps(mn_atan2_inline(w[i], w[j]), atan2(w[i], w[j])));
    CHECK(worst <= 2);
}

static void test_two_lanes(void) {
    long differ = 0;
    for (long i = 0; i < 200000; i++) {
        double y[2], x[2];
        for (int k = 0; k < 2; k++)
            y[k] = 2 * rng_uniform() - 1, x[k] = (2 * rng_uniform() - 1) * (i % 3 ? 1 : 1e-6);
        mn_v2d r = mn_atan2_kernel2(mn_v2d_load(y), mn_v2d_load(x));
        for (int k = 0; k < 2; k++) {
            double s = mn_atan2_kernel(y[k], x[k]), rk = r[k];
            differ += memcmp(&s, &rk, sizeof s) != 0;
        }
    }
    CHECK(differ == 0);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_against_libm);
    RUN(test_special_values);
    RUN(test_two_lanes);
    return mn_test_report();
}
