/* The shortest decimal that reads back to the same double (mn_format_double, base.h).
 *
 * The digits come from Schubfach: R. Giulietti, "The Schubfach way to render doubles"
 * (2021; the algorithm of Java's Double.toString since JDK 19). For v = c 2^q it takes
 * k = floor(log10(2^q)) (3/4 2^q at the irregular spacing of a power of two), so that
 * s = floor(v 10^-k) has 16 or 17 digits, and computes s together with the ends of the
 * rounding interval Rv, all scaled by 10^-k and kept to the resolution of a quarter
 * (section 9), with one 126-bit approximation g of 10^-k (pow10_table.h, written by
 * scripts/gen_pow10_table.py) and round-to-odd products (9.9, figure 8). The decimal is
 * then s' 10^(k+1) (one digit fewer) when exactly one of the two multiples of ten around
 * s lies in Rv, else s or s + 1, whichever lies in Rv, the one closer to v when both
 * do, the even one on a tie (figure 7). Fewer digits never read back: the interval is
 * narrower than 10^(k+1).
 *
 * The layout is printf's %g with the fewest digits: fixed notation while the decimal
 * exponent x of the first digit lies in [-4, max(6, digits)), otherwise one digit, the
 * rest after a point and "e" with the exponent's own digits (1e-07 is written 1e-7).
 * So no text is longer than what the earlier search over %.6g ... %.17g printed, the
 * test of tests/core/test_format_double.c. */
#include <marionette/base.h>

#include "core/format_double.h"
#include "core/pow10_table.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* floor(log10(2^e)), floor(log10(3/4 2^e)), floor(log2(10^e)) for |e| < 1700 (9.6). */
static int flog10pow2(int e) {
    return (int)(((int64_t)e * 661971961083LL) >> 41);
}
static int flog10_three_quarters_pow2(int e) {
    return (int)(((int64_t)e * 661971961083LL - 274743187321LL) >> 41);
}
static int flog2pow10(int e) {
    return (int)(((int64_t)e * 913124641741LL) >> 38);
}

/* The high 64 bits of the 128-bit product a b. */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;
#endif
static uint64_t mul_high(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    return (uint64_t)(((u128)a * b) >> 64);
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

/* Round to odd of cp g 2^-127, g = g1 2^63 + g0 (section 9.9, figure 8). */
static uint64_t round_odd(uint64_t g1, uint64_t g0, uint64_t cp) {
    const uint64_t mask63 = (1ull << 63) - 1;
    uint64_t x1 = mul_high(g0, cp), y0 = g1 * cp, y1 = mul_high(g1, cp);
    uint64_t z = (y0 >> 1) + x1;
    uint64_t vbp = y1 + (z >> 63);
    return vbp | (((z & mask63) + mask63) >> 63);
}

/* v = c 2^q (c > 0) as the shortest f 10^e of its rounding interval (figure 7). */
static void schubfach(int q, uint64_t c, uint64_t* f, int* e) {
    const uint64_t c_min = 1ull << 52;
    uint64_t out = c & 1, cb = c << 2, cbr = cb + 2, cbl;
    int k;
    if (c != c_min || q == -1074) {
        cbl = cb - 2;
        k = flog10pow2(q);
    } else {
        cbl = cb - 1;
        k = flog10_three_quarters_pow2(q);
    }
    int h = q + flog2pow10(-k) + 2;
    const uint64_t* g = mn_pow10_g[k - MN_POW10_K_MIN];
    uint64_t vb = round_odd(g[0], g[1], cb << h);
    uint64_t vbl = round_odd(g[0], g[1], cbl << h);
    uint64_t vbr = round_odd(g[0], g[1], cbr << h);
    uint64_t s = vb >> 2;
    /* Rv is narrower than 10^(k+1): it holds at most one multiple of it. (Java checks
     * this only for s >= 100, as its text has at least two digits.) */
    uint64_t sp10 = s / 10 * 10, tp10 = sp10 + 10;
    int upin = vbl + out <= sp10 << 2, wpin = (tp10 << 2) + out <= vbr;
    if (upin != wpin) {
        *f = upin ? sp10 : tp10;
        *e = k;
        return;
    }
    uint64_t t = s + 1;
    int uin = vbl + out <= s << 2, win = (t << 2) + out <= vbr;
    *e = k;
    if (uin != win) {
        *f = uin ? s : t;
        return;
    }
    uint64_t cmp_lo = (s + t) << 1;
    *f = vb < cmp_lo || (vb == cmp_lo && (s & 1) == 0) ? s : t;
}

/* Writes the n digits of f 10^e (no trailing zero in f) laid out as %g would. */
static char* layout(char* p, const char* dig, int n, int e) {
    int x = n - 1 + e; /* the exponent of the first digit */
    if (x >= -4 && x < (n > 6 ? n : 6)) {
        if (x < 0) {
            *p++ = '0';
            *p++ = '.';
            for (int i = -1; i > x; i--)
                *p++ = '0';
            memcpy(p, dig, (size_t)n);
            return p + n;
        }
        for (int i = 0; i < n || i <= x; i++) {
            if (i == x + 1) *p++ = '.';
            *p++ = i < n ? dig[i] : '0';
        }
        return p;
    }
    *p++ = dig[0];
    if (n > 1) {
        *p++ = '.';
        memcpy(p, dig + 1, (size_t)n - 1);
        p += n - 1;
    }
    *p++ = 'e';
    if (x < 0) *p++ = '-', x = -x;
    char xd[4];
    int nx = 0;
    do
        xd[nx++] = (char)('0' + x % 10);
    while ((x /= 10) > 0);
    while (nx > 0)
        *p++ = xd[--nx];
    return p;
}

int mn_format_double_len(double v, char* buf) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t t = bits & ((1ull << 52) - 1);
    int bq = (int)(bits >> 52) & 0x7ff;
    char* p = buf;
    if (bq == 0x7ff) {
        strcpy(buf, t ? "nan" : bits >> 63 ? "-inf" : "inf");
        return (int)strlen(buf);
    }
    if (bq == 0 && t == 0) {
        strcpy(buf, "0"); /* -0 too */
        return 1;
    }
    if (bits >> 63) *p++ = '-';
    uint64_t f;
    int e = 0;
    if (bq != 0) {
        int mq = 1075 - bq;
        uint64_t c = (1ull << 52) | t;
        if (mq > 0 && mq < 53 && ((c >> mq) << mq) == c)
            f = c >> mq; /* an integer below 2^53: its own digits */
        else
            schubfach(-mq, c, &f, &e);
    } else {
        schubfach(-1074, t, &f, &e);
    }
    /* the digits, two at a time from the last, then no trailing zero */
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                                "31323334353637383940414243444546474849505152535455565758596061"
                                "62636465666768697071727374757677787980818283848586878889909192"
                                "93949596979899";
    char dig[20];
    int at = 20;
    while (f >= 100) {
        uint64_t q = f / 100;
        unsigned r = (unsigned)(f - q * 100);
        dig[--at] = pairs[2 * r + 1];
        dig[--at] = pairs[2 * r];
        f = q;
    }
    if (f >= 10) {
        dig[--at] = pairs[2 * f + 1];
        dig[--at] = pairs[2 * f];
    } else {
        dig[--at] = (char)('0' + f);
    }
    int n = 20 - at;
    while (dig[at + n - 1] == '0')
        n--, e++;
    p = layout(p, dig + at, n, e);
    *p = 0;
    return (int)(p - buf);
}

const char* mn_format_double(double v, char* buf) {
    mn_format_double_len(v, buf);
    return buf;
}
