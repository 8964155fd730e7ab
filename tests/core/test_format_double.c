/* mn_format_double (src/core/format_double.c, Schubfach): every text reads back through
 * strtod to the same bits, is valid JSON, has no digit too many (one fewer, correctly
 * rounded, does not read back), and is never longer than what the search over
 * printf's %.6g ... %.17g (the formatter it replaced, kept here as the reference) prints;
 * on random bit patterns, random short decimals, every power of two and of ten with their
 * neighbours, the smallest subnormals one by one, and the named edge cases. */
#include "test.h"

#include <marionette/base.h>
#include <marionette/math.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double from_bits(uint64_t b) {
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}
static uint64_t to_bits(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* The formatter this one replaced: the first of %.6g ... %.17g that reads back. */
static void reference(double v, char* buf) {
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, MN_DOUBLE_CHARS, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
}

/* JSON's number grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int json_number(const char* s) {
    if (*s == '-') s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return 0;
    if (*s == '.') {
        if (!(*++s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == 0;
}

static long checked, failures_shown;

/* One value: exact round trip, JSON, no longer than the reference. */
static void check_value(double v) {
    char s[MN_DOUBLE_CHARS], r[MN_DOUBLE_CHARS];
    const char* out = mn_format_double(v, s);
    checked++;
    reference(v, r);
    double back = strtod(s, NULL);
    int ok = out == s && json_number(s) && strlen(s) <= strlen(r) &&
             (to_bits(back) == to_bits(v) || (v == 0 && back == 0 && !strcmp(s, "0")));
    /* shortest: one digit fewer, correctly rounded (%.*e), does not read back */
    char d[40];
    int nd = 0, first = 0;
    for (const char* c = s; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9' && (first |= *c != '0')) d[nd++] = *c;
    while (nd > 0 && d[nd - 1] == '0')
        nd--;
    int digits = nd;
    if (digits > 1) {
        char fewer[40];
        snprintf(fewer, sizeof fewer, "%.*e", digits - 2, v);
        ok = ok && strtod(fewer, NULL) != v;
    }
    if (!ok && failures_shown++ < 10)
        fprintf(stderr, "  bits %016llx: wrote \"%s\", reference \"%s\"\n",
                (unsigned long long)to_bits(v), s, r);
    CHECK(ok);
}

static void test_random_bits(void) {
    for (int i = 0; i < 200000; i++) {
        double v = from_bits(rng_next());
        if (isfinite(v)) check_value(v);
    }
}

/* Values as files hold them: a few significant digits at every scale. */
static void test_random_short_decimals(void) {
    char t[64];
    for (int i = 0; i < 100000; i++) {
        uint64_t r = rng_next();
        int digits = 1 + (int)(r % 17), ex = (int)((r >> 8) % 600) - 300;
        long long m = (long long)((r >> 20) % 100000000000000000ull);
        snprintf(t, sizeof t, "%s%.*lld", r >> 63 ? "-" : "", digits, m);
        t[digits + (r >> 63 ? 1 : 0)] = 0;
        snprintf(t + strlen(t), 16, "e%d", ex);
        double v = strtod(t, NULL);
        if (isfinite(v)) check_value(v);
    }
}

static void test_powers_and_neighbours(void) {
    for (int e = -1074; e <= 1023; e++) {
        double v = ldexp(1.0, e);
        check_value(v);
        check_value(nextafter(v, 0));
        check_value(nextafter(v, INFINITY));
        check_value(-v);
    }
    for (int e = -323; e <= 308; e++) {
        char t[16];
        snprintf(t, sizeof t, "1e%d", e);
        double v = strtod(t, NULL);
        check_value(v);
        check_value(nextafter(v, 0));
        check_value(nextafter(v, INFINITY));
        char s[MN_DOUBLE_CHARS];
        /* a power of ten is written as its one digit: 1e-7, 0.001, 100000, 1e21 */
        mn_format_double(v, s);
        size_t mant = strcspn(s, "e"), ones = 0;
        for (size_t i = 0; i < mant; i++)
            ones += s[i] == '1';
        CHECK(strtod(s, NULL) == v && ones == 1 && strspn(s, "0.1") == mant);
    }
}

static void test_subnormals(void) {
    for (uint64_t t = 1; t <= 5000; t++)
        check_value(from_bits(t));
    check_value(from_bits((1ull << 52) - 1)); /* the largest subnormal */
    check_value(DBL_MIN);
    for (int i = 0; i < 20000; i++)
        check_value(from_bits(rng_next() & ((1ull << 52) - 1)));
}

static void test_integers(void) {
    for (int i = -2000; i <= 2000; i++)
        check_value(i);
    for (int i = 0; i < 20000; i++)
        check_value((double)(int64_t)(rng_next() >> (rng_next() % 64)));
    check_value(9007199254740992.0);
    check_value(9007199254740993.0);
}

static void expect(double v, const char* text) {
    char s[MN_DOUBLE_CHARS];
    mn_format_double(v, s);
    if (strcmp(s, text)) fprintf(stderr, "  %.17g: wrote \"%s\", expected \"%s\"\n", v, s, text);
    CHECK(!strcmp(s, text));
}

static void test_named_cases(void) {
    expect(0.0, "0");
    expect(-0.0, "0");
    expect(1.0, "1");
    expect(-1.5, "-1.5");
    expect(0.95, "0.95");
    expect(0.1 + 0.2, "0.30000000000000004");
    expect(MN_PI, "3.141592653589793");
    expect(100.0, "100");
    expect(123456.0, "123456");
    expect(1e6, "1e6");
    expect(1234567.0, "1234567");
    expect(1e21, "1e21");
    expect(1.5e300, "1.5e300");
    expect(0.0001, "0.0001");
    expect(1e-5, "1e-5");
    expect(1.25e-7, "1.25e-7");
    expect(DBL_MAX, "1.7976931348623157e308");
    expect(-DBL_MAX, "-1.7976931348623157e308");
    expect(DBL_MIN, "2.2250738585072014e-308");
    expect(from_bits(1), "5e-324");
    expect(from_bits(2), "1e-323");
    expect(from_bits((1ull << 52) - 1), "2.225073858507201e-308");
    expect(9007199254740992.0, "9007199254740992");
    expect(5e-324 * 3, "1.5e-323");
    expect(INFINITY, "inf");
    expect(-INFINITY, "-inf");
    expect(NAN, "nan");
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_named_cases);
    RUN(test_random_bits);
    RUN(test_random_short_decimals);
    RUN(test_powers_and_neighbours);
    RUN(test_subnormals);
    RUN(test_integers);
    fprintf(stderr, "%ld values checked\n", checked);
    return mn_test_report();
}
