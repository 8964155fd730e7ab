/* Compressed clips (include/marionette/clip.h): a take reduced track by track to keys within
 * an error bound, quantised, and sampled straight from the bytes.
 *
 * Why tracks and not whole poses: a sequence's keys are whole poses (Welman 6.1.2), so a key
 * placed to catch one joint's jitter is paid for by every joint; motion capture jitters by
 * about a millimetre at the root and the extremities at different frames, and whole-pose keys
 * end up at nearly every frame (docs/animation.md). Here every channel gets its own keys.
 *
 * The error budget. A rotation error of angle a at joint j moves a point at distance r from
 * j by 2 r sin(a/2) <= r a, and the errors along a chain add at most (triangle inequality,
 * telescoping the chain one joint at a time), so with R_j the longest reach from j to a
 * virtual vertex below it (the sum of the bone lengths on the way plus the shell) and H the
 * most tracks on any path from the root, tracks with
 *     rotation error <= w / R_j,   translation error <= w,   w = tol / H
 * keep every virtual vertex within tol. A track's error is measured in its own numbers (a
 * rotation vector's change bounds the rotation's angle: the exponential map is 1-Lipschitz).
 * That split is safe but wasteful (the worst cases do not line up), so the shares are then
 * widened, all together by a factor found by bisection and then track by track (by 2, 1.5,
 * 1.5, 1.25, 1.25, 1.1 in six passes), each step kept only when the error measured in object
 * space over the whole take stays within tol.
 *
 * Dense tracks are cut into segments (8 to 32 frames, whichever is smallest), each with its
 * own step per component, a level of the track's grid: (8 + m) 2^(s - 3) times its step.
 * Each segment's levels are coarsened (level_mult, in jumps of 24 levels down to 1, the
 * largest that passes, round after round over all tracks) while the object-space error over
 * that segment's frames stays within tol and the segment gets smaller: the error a track is
 * allowed varies over the take with what the other tracks leave of the budget there (the
 * Animation Compression Library's per-segment bit rates, searched against the same error).
 * A frame that a coarser level puts beyond tol may take the index on its value's other side
 * (or one beyond the nearest) when that brings it back: the frame's indices over all tracks
 * are chosen together against the object-space error (as a vector quantiser picks a code
 * vector) rather than each rounded on its own. After the search each index moves by one
 * where that shortens its segment's code and keeps its frame within tol (rate-distortion
 * optimised quantisation, as video coders choose their levels).
 * A segment's values are coded losslessly on their grids: each frame's index predicted from
 * the frames before it in the segment, the residual Rice-coded (Robinson's SHORTEN, 1994:
 * fixed polynomial predictors and Rice codes per block, as FLAC), so the quantisation is the
 * only error and it does not accumulate along the segment.
 *
 * A track's keys: greedy insertion (the frame of largest error becomes the next key) on the
 * quantised values, for linear and for Catmull-Rom interpolation and three splits of the
 * track's share between quantisation and interpolation; the smallest encoding wins, against
 * a constant, the rest value, and a value at every frame. */
#include <marionette/clip.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TK_SCALAR = 0, TK_VEC3, TK_ROT };
enum { MODE_REST = 0, MODE_CONST, MODE_SPARSE, MODE_DENSE };
#define CLIP_MAGIC "MNC3" /* version 3: predicted, Rice-coded segments */
#define HEADER_BYTES 17
#define MAX_BITS 24
/* a dense segment's component: its step's level (7 bits: the track's step times
 * (8 + m) 2^(s - 3), m the low 3 bits, s the high 4), its predictor order (2 bits) and its
 * Rice parameter (5 bits) */
#define LEVEL_BITS 7
#define ORDER_BITS 2
#define RICE_BITS 5
#define SEG_HDR (LEVEL_BITS + ORDER_BITS + RICE_BITS)
#define MAX_LEVEL 127
#define MAX_SEG_LOG2 5
#define RICE_QMAX 20 /* a quotient of 20 or more is escaped: 20 zeros, then the value */
#define ESC_BITS 27  /* holds any residual of indices below 2^24 (|r| < 3 2^24) */
#define RICE_KMAX 26
#define PAD 16 /* zero bytes after the block, for the 64-bit reads */

static const double pow2_minus3[16] = {0x1p-3, 0x1p-2, 0x1p-1, 0x1p0, 0x1p1, 0x1p2,
                                       0x1p3,  0x1p4,  0x1p5,  0x1p6, 0x1p7, 0x1p8,
                                       0x1p9,  0x1p10, 0x1p11, 0x1p12};
static inline double level_mult(unsigned lv) {
    return (double)(8 + (lv & 7)) * pow2_minus3[lv >> 3 & 15];
}

typedef struct clip_track {
    int kind, dim, qadr, joint;
    /* decoded header */
    int mode, cubic, bits, nkeys;
    double lo[3], step[3], value[3];
    size_t data;         /* byte offset of the bit-packed part in the block */
    int seg_log2, obits; /* dense: segment length (log2) and bits of a segment's offset */
    size_t table, body;  /* dense: bit offsets (from data) of the segment table and records */
    uint8_t width[MAX_LEVEL + 1]; /* dense: level_width of each level (no division when
                                     sampling) */
} clip_track;

struct mn_clip {
    const mn_model* m;
    int nframes, ntrack, tbits;
    double fps;
    clip_track* trk;
    uint8_t* block; /* size + PAD zero bytes */
    size_t size;
};

/* ---- bits ------------------------------------------------------------------------------ */

/* The 57 or more bits from `bit` on, the first in the lowest bit. */
static inline uint64_t read_word(const uint8_t* p, size_t bit) {
    const uint8_t* b = p + (bit >> 3);
    uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&w, b, 8); /* the block carries PAD bytes of padding */
#else
    for (int i = 7; i >= 0; i--)
        w = (w << 8) | b[i];
#endif
    return w >> (bit & 7);
}

static inline uint32_t read_bits(const uint8_t* p, size_t bit, int n) {
    return (uint32_t)(read_word(p, bit) & ((1ull << n) - 1));
}

static inline int low_zeros(uint64_t w) { /* w != 0 */
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(w);
#else
    int n = 0;
    while (!(w & 1))
        w >>= 1, n++;
    return n;
#endif
}

/* A Rice code of parameter k at *bit (the format is at dense_cost below); advances *bit. */
static inline uint64_t rice_get(const uint8_t* p, size_t* bit, int k) {
    uint64_t w = read_word(p, *bit);
    int q = low_zeros(w | 1ull << RICE_QMAX);
    if (q < RICE_QMAX) {
        *bit += (size_t)(q + 1 + k);
        return (uint64_t)q << k | ((w >> (q + 1)) & ((1ull << k) - 1));
    }
    *bit += RICE_QMAX + ESC_BITS;
    return (w >> RICE_QMAX) & ((1ull << ESC_BITS) - 1);
}

typedef struct bitbuf {
    uint8_t* p;
    size_t nbit, cap; /* cap in bytes */
    int oom;
} bitbuf;

static void put_bits(bitbuf* b, uint32_t v, int n) {
    size_t need = (b->nbit + (size_t)n + 7) / 8 + PAD;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < need)
            cap *= 2;
        uint8_t* p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        memset(p + b->cap, 0, cap - b->cap);
        b->p = p, b->cap = cap;
    }
    for (int i = 0; i < n; i++, b->nbit++)
        if (v >> i & 1) b->p[b->nbit >> 3] |= (uint8_t)(1u << (b->nbit & 7));
}

static void put_bytes(bitbuf* b, const void* src, size_t n) {
    b->nbit = (b->nbit + 7) & ~(size_t)7; /* byte-aligned */
    const uint8_t* s = src;
    for (size_t i = 0; i < n; i++)
        put_bits(b, s[i], 8);
}

static void put_u16(bitbuf* b, unsigned v) {
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put_bytes(b, x, 2);
}

static void put_f32(bitbuf* b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint8_t x[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    put_bytes(b, x, 4);
}

static uint32_t get_u32(const uint8_t* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static double get_f32(const uint8_t* p) {
    uint32_t u = get_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int bits_for(uint32_t n) { /* bits to hold 0..n (at least 1) */
    int b = 1;
    while (b < 32 && (n >> b))
        b++;
    return b;
}

/* ---- tracks of a model ----------------------------------------------------------------- */

static int count_tracks(const mn_model* m, clip_track* t) {
    int n = 0;
    for (int j = 0; j < m->njoint; j++) {
        int ty = m->jnt_type[j], a = m->jnt_qadr[j];
        if (ty == MN_JOINT_FIXED) continue;
        if (ty == MN_JOINT_FREE) {
            if (t) t[n] = (clip_track){.kind = TK_VEC3, .dim = 3, .qadr = a, .joint = j};
            n++;
            if (t) t[n] = (clip_track){.kind = TK_ROT, .dim = 3, .qadr = a + 3, .joint = j};
            n++;
        } else if (ty == MN_JOINT_BALL) {
            if (t) t[n] = (clip_track){.kind = TK_ROT, .dim = 3, .qadr = a, .joint = j};
            n++;
        } else {
            if (t) t[n] = (clip_track){.kind = TK_SCALAR, .dim = 1, .qadr = a, .joint = j};
            n++;
        }
    }
    return n;
}

/* Rotation vector of a unit quaternion (w, x, y, z), angle in [0, pi]. */
static void quat_to_rotvec(const double* q, double* r) {
    double w = q[0], x = q[1], y = q[2], z = q[3];
    if (w < 0) w = -w, x = -x, y = -y, z = -z;
    double s = sqrt(x * x + y * y + z * z);
    double k = s > 1e-300 ? 2 * atan2(s, w) / s : 2.0;
    r[0] = k * x, r[1] = k * y, r[2] = k * z;
}

static inline void rotvec_to_quat(const double* r, double* q) {
    double th2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    double w, k;
    if (th2 < 1e-12) { /* the series: unit to rounding */
        w = 1 - th2 / 8, k = 0.5 - th2 / 48;
    } else { /* (cos, sin) of the half angle: unit to rounding, no normalising needed */
        double th = sqrt(th2), s, c;
        mn_sincos(0.5 * th, &s, &c);
        w = c, k = s / th;
    }
    q[0] = w, q[1] = k * r[0], q[2] = k * r[1], q[3] = k * r[2];
}

/* The track's numbers at every frame (rotations unwrapped: of the rotation vectors r + 2 pi k
 * r/|r| of the same rotation, the one nearest the previous frame's). */
static void track_values(const clip_track* t, const double* q, int nq, int n, double* v) {
    for (int f = 0; f < n; f++) {
        const double* x = q + (size_t)f * (size_t)nq + t->qadr;
        double* o = v + (size_t)f * (size_t)t->dim;
        if (t->kind != TK_ROT) {
            for (int c = 0; c < t->dim; c++)
                o[c] = x[c];
            continue;
        }
        quat_to_rotvec(x, o);
        if (f == 0) continue;
        const double* p = o - 3;
        double th = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
        double u[3] = {1, 0, 0};
        if (th > 1e-12)
            for (int c = 0; c < 3; c++)
                u[c] = o[c] / th;
        double best = INFINITY, r[3] = {o[0], o[1], o[2]};
        for (int k = -3; k <= 3; k++) {
            double c3[3], d = 0;
            for (int c = 0; c < 3; c++) {
                c3[c] = o[c] + 2 * MN_PI * k * u[c];
                d += (c3[c] - p[c]) * (c3[c] - p[c]);
            }
            if (d < best) best = d, memcpy(r, c3, sizeof r);
        }
        memcpy(o, r, sizeof r);
    }
}

/* ---- interpolation (shared by the encoder and the sampler) ------------------------------ */

/* Hermite on [ta, tb] at t with Catmull-Rom tangents from the neighbours (tp < ta, tn > tb;
 * at an end the neighbour is the key itself: a one-sided tangent). */
static inline void cr_eval(int d, double tp, double ta, double tb, double tn, const double* pp,
                           const double* pa, const double* pb, const double* pn, double t,
                           double* out) {
    double h = tb - ta, u = (t - ta) / h, u2 = u * u, u3 = u2 * u;
    double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
    double sa = h / (tb - tp), sb = h / (tn - ta);
    for (int c = 0; c < d; c++) {
        double ma = (pb[c] - pp[c]) * sa, mb = (pn[c] - pa[c]) * sb;
        out[c] = h00 * pa[c] + h10 * ma + h01 * pb[c] + h11 * mb;
    }
}

/* ---- encoding one track --------------------------------------------------------------- */

typedef struct track_code {
    int mode, cubic, bits, nkeys;
    float lo[3], step[3], value[3];
    int* key;     /* nkeys frame indices (sparse) */
    uint32_t* qv; /* quantised values: nframes x dim (all frames; keys pick theirs) */
    size_t nbits; /* encoded size in bits (without the mode byte) */
    int seg_log2; /* dense: segments of 2^seg_log2 frames */
    /* dense, per segment g and component c (index g d + c): the level of the segment's step
     * (level_mult(sh) steps of the track's grid), its predictor order and Rice parameter, and
     * its size in bits; off: every frame's index on its segment's grid (n x d) */
    uint8_t *sh, *ord, *rk;
    uint32_t *scost, *off;
} track_code;

/* A track's range is stored in 5 bytes per component: its low end in the 24 high bits of a
 * float32 (rounded down), its step in the 16 high bits (rounded up). */
static uint32_t f32_u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float f32_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t lo_bits(float l) { /* the low 8 bits dropped, rounded down */
    uint32_t u = f32_u(l);
    if ((u & 0xff) && (u >> 31)) u += 0x100; /* a negative number: away from zero */
    return u & ~0xffu;
}
static uint32_t step_bits(float s) { /* s > 0: the low 16 bits dropped, rounded up */
    uint32_t u = f32_u(s);
    if (u & 0xffff) u += 0x10000;
    return u & ~0xffffu;
}

/* Quantisation of v (n x d) to `bits` over its range: lo rounded down and step rounded up
 * in float32 so that lo + (2^bits - 1) step covers the range. */
static void quantise(const double* v, int n, int d, int bits, float* lo, float* step, uint32_t* qv,
                     double* dq) {
    uint32_t top = (uint32_t)((1ull << bits) - 1);
    for (int c = 0; c < d; c++) {
        double mn = INFINITY, mx = -INFINITY;
        for (int f = 0; f < n; f++)
            mn = fmin(mn, v[(size_t)f * d + c]), mx = fmax(mx, v[(size_t)f * d + c]);
        float l = (float)mn;
        if (l > mn) l = nextafterf(l, -INFINITY);
        l = f32_bits(lo_bits(l));
        float s = (float)((mx - l) / top);
        while ((double)l + (double)top * (double)s < mx)
            s = nextafterf(s, INFINITY);
        if (!(s > 0)) s = 1e-30f;
        s = f32_bits(step_bits(s));
        lo[c] = l, step[c] = s;
        for (int f = 0; f < n; f++) {
            double x = (v[(size_t)f * d + c] - (double)l) / (double)s;
            long k = lround(x);
            if (k < 0) k = 0;
            if (k > (long)top) k = (long)top;
            qv[(size_t)f * d + c] = (uint32_t)k;
            dq[(size_t)f * d + c] = (double)l + (double)k * (double)s;
        }
    }
}

static double dist_d(const double* a, const double* b, int d) {
    double s = 0;
    for (int c = 0; c < d; c++)
        s += (a[c] - b[c]) * (a[c] - b[c]);
    return sqrt(s);
}

/* Value of the sparse track of keys key[0..nk-1] (values dq at those frames) at frame f. */
static void sparse_eval(const int* key, int nk, const double* dq, int d, int cubic, int k, double f,
                        double* out) {
    int a = key[k], b = key[k + 1];
    if (!cubic) {
        double u = (f - a) / (double)(b - a);
        for (int c = 0; c < d; c++)
            out[c] = dq[(size_t)a * d + c] + u * (dq[(size_t)b * d + c] - dq[(size_t)a * d + c]);
        return;
    }
    int p = k > 0 ? key[k - 1] : a, n = k + 2 < nk ? key[k + 2] : b;
    cr_eval(d, p, a, b, n, dq + (size_t)p * d, dq + (size_t)a * d, dq + (size_t)b * d,
            dq + (size_t)n * d, f, out);
}

/* Greedy keys on the quantised values dq until every frame is within eps of v; returns the
 * key count, or -1 when it exceeds max_keys. err holds per-frame errors (workspace). */
static int greedy_keys(const double* v, const double* dq, int n, int d, int cubic, double eps,
                       int max_keys, int* key, double* err) {
    int nk = 2;
    key[0] = 0, key[1] = n - 1;
    int lo_seg = 0, hi_seg = 0; /* segments whose frames need their error recomputed */
    for (;;) {
        for (int k = lo_seg; k <= hi_seg && k < nk - 1; k++)
            for (int f = key[k]; f <= key[k + 1]; f++) {
                double o[3];
                sparse_eval(key, nk, dq, d, cubic, k, f, o);
                err[f] = dist_d(o, v + (size_t)f * d, d);
            }
        int at = -1;
        double worst = eps;
        for (int f = 0; f < n; f++)
            if (err[f] > worst) worst = err[f], at = f;
        if (at < 0) return nk;
        if (nk >= max_keys) return -1;
        int k = 0;
        while (key[k + 1] < at)
            k++;
        if (key[k + 1] == at) { /* a key's own value is off: quantisation, cannot improve */
            return -1;
        }
        memmove(key + k + 2, key + k + 1, sizeof(int) * (size_t)(nk - k - 1));
        key[k + 1] = at;
        nk++;
        lo_seg = k - 2 < 0 ? 0 : k - 2;
        hi_seg = k + 3;
    }
}

typedef struct fit_work {
    double *dq, *err;
    uint32_t* qv;
    int* key;
    int seg_max_log2; /* the longest segment a dense track may take (mn_clip_options) */
} fit_work;

/* Dense tracks are cut into segments of 2^sl frames (8 to 32; the last may be shorter), each
 * decodable on its own (random access per segment, as the Animation Compression Library's
 * segments). A segment's component c stores the level of its step (7 bits: the track's step
 * times level_mult), its predictor order (2 bits) and Rice parameter k (5 bits), its first
 * frame's index on the level's grid (level_width bits), then the residuals of its other frames,
 * frame by frame, each Rice-coded: the index minus its prediction from the frames decoded
 * before it in the segment, order 0 the first frame, order 1 the previous frame, order 2 the
 * line through the two previous ones (the fixed polynomial predictors of Robinson's SHORTEN,
 * 1994, and FLAC), order 3 the previous frame plus half the last difference (motion that
 * slows), zigzag-mapped to 0, 1, 2, ... (0, -1, 1, -2, ...) and written as Rice's code (Rice,
 * JPL publication 79-22, 1979; Golomb 1966 with m = 2^k, as SHORTEN and FLAC): the quotient
 * z >> k in unary (q zeros and a one), then the k low bits. A quotient of RICE_QMAX or more is
 * RICE_QMAX zeros and z in ESC_BITS bits. Order and k are chosen per segment and component for
 * the fewest bits. A table of the segments' bit offsets (obits each) comes first. */
static inline uint32_t zigzag(int64_t r) {
    return r >= 0 ? (uint32_t)(2 * r) : (uint32_t)(-2 * r - 1);
}
static inline int64_t unzigzag(uint64_t z) { /* without a branch: the sign is a coin toss */
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}
static inline size_t rice_len(uint32_t z, int k) {
    uint32_t q = z >> k;
    return q < RICE_QMAX ? q + 1 + (size_t)k : RICE_QMAX + ESC_BITS;
}

/* The largest index of a level's grid over the track's range (0 .. 2^bits - 1 steps), and the
 * bits of a first frame's index. */
static inline uint32_t level_top(int bits, unsigned lv) {
    uint64_t num = ((1ull << bits) - 1) << 3, den = (uint64_t)(8 + (lv & 7)) << (lv >> 3 & 15);
    return (uint32_t)((num + den - 1) / den);
}
static inline int level_width(int bits, unsigned lv) {
    return bits_for(level_top(bits, lv));
}

/* The prediction of frame r (r >= 1) of a segment from the frames decoded before it: first,
 * the segment's first index; a and b, the previous two (b the older; at r = 1 both first). */
static inline int64_t predict(int order, int r, int64_t first, int64_t a, int64_t b) {
    if (order == 0) return first;
    if (order == 1 || r == 1) return a;
    if (order == 2) return 2 * a - b;
    return a + (a - b) / 2; /* 3: half the slope, for motion that slows */
}

/* The fewest bits of a segment component's residuals (indices x[0], x[stride], ..., len of
 * them), its order and k; the header and first index excluded. */
static size_t residual_bits(const uint32_t* x, size_t stride, int len, int* order_out, int* k_out) {
    size_t best = SIZE_MAX;
    *order_out = 0, *k_out = 0;
    for (int order = 0; order <= 3; order++) {
        uint32_t z[1 << MAX_SEG_LOG2];
        uint64_t sum = 0;
        int64_t first = x[0], a = first, b = first;
        for (int r = 1; r < len; r++) {
            int64_t v = x[(size_t)r * stride];
            z[r] = zigzag(v - predict(order, r, first, a, b));
            sum += z[r];
            b = a, a = v;
        }
        /* the best k is near log2 of the mean (Rice's rule); try around it */
        int k0 = 0;
        while (k0 < RICE_KMAX && ((uint64_t)(len > 1 ? len - 1 : 1) << (k0 + 1)) <= sum)
            k0++;
        for (int k = k0 > 2 ? k0 - 2 : 0; k <= k0 + 1 && k <= RICE_KMAX; k++) {
            size_t bits = 0;
            for (int r = 1; r < len; r++)
                bits += rice_len(z[r], k);
            if (bits < best) best = bits, *order_out = order, *k_out = k;
        }
    }
    return best;
}

static size_t dense_cost(const uint32_t* qv, int n, int d, int bits, int sl, int* obits_out) {
    int S = 1 << sl, nseg = (n + S - 1) / S;
    size_t body = 0;
    for (int g = 0; g < nseg; g++) {
        int f0 = g * S, len = f0 + S < n ? S : n - f0;
        for (int c = 0; c < d; c++) {
            int order, k;
            body += SEG_HDR + (size_t)bits +
                    residual_bits(qv + (size_t)f0 * d + c, (size_t)d, len, &order, &k);
        }
    }
    int obits = bits_for((uint32_t)body);
    if (obits_out) *obits_out = obits;
    return 8 + (size_t)nseg * obits + body;
}

/* The order and k of the fewest bits for segment g, component c of dense track t as its
 * indices are, and its size in bits (returned). */
static size_t seg_code(track_code* t, int d, int n, int g, int c) {
    int S = 1 << t->seg_log2, f0 = g * S, f1 = f0 + S < n ? f0 + S : n, s = t->sh[g * d + c];
    int order, k;
    size_t bits = SEG_HDR + (size_t)level_width(t->bits, (unsigned)s) +
                  residual_bits(t->off + (size_t)f0 * d + c, (size_t)d, f1 - f0, &order, &k);
    t->ord[g * d + c] = (uint8_t)order, t->rk[g * d + c] = (uint8_t)k;
    t->scost[g * d + c] = (uint32_t)bits;
    return bits;
}

/* Segment g, component c of dense track t (values v, n x d) at its level: every frame's index
 * on the level's grid (rounded from the values themselves), the order and k of the fewest
 * bits, and the segment component's size. Returns the size in bits. */
static size_t seg_layout(const double* v, track_code* t, int d, int n, int g, int c) {
    int S = 1 << t->seg_log2, f0 = g * S, f1 = f0 + S < n ? f0 + S : n, s = t->sh[g * d + c];
    if (s == 0) {
        for (int f = f0; f < f1; f++)
            t->off[(size_t)f * d + c] = t->qv[(size_t)f * d + c];
    } else {
        double mult = level_mult((unsigned)s);
        uint32_t top = level_top(t->bits, (unsigned)s);
        for (int f = f0; f < f1; f++) {
            double x = (v[(size_t)f * d + c] - (double)t->lo[c]) / (double)t->step[c] / mult;
            long k = lround(x);
            if (k < 0) k = 0;
            if (k > (long)top) k = (long)top;
            t->off[(size_t)f * d + c] = (uint32_t)k;
        }
    }
    return seg_code(t, d, n, g, c);
}

/* The decoded value of frame f, component c of a laid-out dense track (as the sampler
 * computes it, bit for bit). */
static double seg_value(const track_code* t, int d, int f, int c) {
    int g = f >> t->seg_log2;
    return (double)t->lo[c] +
           (double)t->off[(size_t)f * d + c] * level_mult(t->sh[g * d + c]) * (double)t->step[c];
}

/* The bits of a laid-out dense track's segments (offset table excluded) and the table's
 * entry width. */
static size_t dense_body(const track_code* t, int d, int n, int* obits) {
    int S = 1 << t->seg_log2, nseg = (n + S - 1) / S;
    size_t body = 0;
    for (int k = 0; k < nseg * d; k++)
        body += t->scost[k];
    *obits = bits_for((uint32_t)body);
    return body;
}

static void dense_layout(const double* v, track_code* t, int d, int n) {
    int S = 1 << t->seg_log2, nseg = (n + S - 1) / S;
    for (int g = 0; g < nseg; g++)
        for (int c = 0; c < d; c++)
            seg_layout(v, t, d, n, g, c);
}

/* The smallest encoding of track values v (n x d) within eps. rest: the model's value. */
static void fit_track(const double* v, int n, int d, const double* rest, double eps, int tbits,
                      fit_work* w, track_code* out) {
    /* rest and constant */
    double e = 0;
    for (int f = 0; f < n; f++)
        e = fmax(e, dist_d(v + (size_t)f * d, rest, d));
    if (e <= eps) {
        out->mode = MODE_REST, out->nbits = 0, out->nkeys = 0;
        return;
    }
    double mn[3], mx[3];
    for (int c = 0; c < d; c++) {
        mn[c] = INFINITY, mx[c] = -INFINITY;
        for (int f = 0; f < n; f++)
            mn[c] = fmin(mn[c], v[(size_t)f * d + c]), mx[c] = fmax(mx[c], v[(size_t)f * d + c]);
    }
    float val[3];
    double vd[3];
    for (int c = 0; c < d; c++)
        val[c] = (float)(0.5 * (mn[c] + mx[c])), vd[c] = val[c];
    e = 0;
    for (int f = 0; f < n; f++)
        e = fmax(e, dist_d(v + (size_t)f * d, vd, d));
    if (e <= eps) {
        out->mode = MODE_CONST, out->nbits = (size_t)32 * d, out->nkeys = 1;
        memcpy(out->value, val, sizeof val);
        return;
    }
    double range = 0;
    for (int c = 0; c < d; c++)
        range = fmax(range, mx[c] - mn[c]);
    /* dense: the fewest bits whose quantisation error is within eps */
    size_t hdr = (size_t)40 * d;
    out->mode = -1;
    out->nbits = SIZE_MAX;
    int b0 = (int)floor(log2(range * sqrt((double)d) / (2 * eps) + 1));
    if (b0 < 1) b0 = 1;
    for (int b = b0; b <= MAX_BITS; b++) {
        float lo[3], st[3];
        quantise(v, n, d, b, lo, st, w->qv, w->dq);
        double q = 0;
        for (int f = 0; f < n; f++)
            q = fmax(q, dist_d(w->dq + (size_t)f * d, v + (size_t)f * d, d));
        if (q > eps) continue;
        out->mode = MODE_DENSE, out->cubic = 0, out->bits = b, out->nkeys = n;
        out->nbits = SIZE_MAX;
        for (int sl = 3; sl <= w->seg_max_log2; sl++) {
            size_t cost = hdr + dense_cost(w->qv, n, d, b, sl, NULL);
            if (cost < out->nbits) out->nbits = cost, out->seg_log2 = sl;
        }
        memcpy(out->lo, lo, sizeof lo), memcpy(out->step, st, sizeof st);
        memcpy(out->qv, w->qv, sizeof(uint32_t) * (size_t)n * d);
        memset(out->sh, 0, (size_t)n * d);
        break;
    }
    /* sparse: split eps between quantisation and interpolation */
    static const double split[3] = {0.25, 0.5, 0.75};
    for (int si = 0; si < 3 && n > 2; si++) {
        int b = (int)ceil(log2(range * sqrt((double)d) / (2 * split[si] * eps) + 1));
        if (b < 1) b = 1;
        if (b > MAX_BITS) continue;
        float lo[3], st[3];
        quantise(v, n, d, b, lo, st, w->qv, w->dq);
        for (int cubic = 0; cubic <= 1; cubic++) {
            size_t per_key = (size_t)tbits + (size_t)d * b;
            size_t budget = out->nbits == SIZE_MAX ? SIZE_MAX : out->nbits;
            int max_keys = budget == SIZE_MAX ? n : (int)((budget - hdr - 16) / per_key);
            if (max_keys < 2) continue;
            if (max_keys > n) max_keys = n;
            int nk = greedy_keys(v, w->dq, n, d, cubic, eps, max_keys, w->key, w->err);
            if (nk < 0) continue;
            size_t bits = hdr + 16 + (size_t)nk * per_key;
            if (bits >= out->nbits) continue;
            out->mode = MODE_SPARSE, out->cubic = cubic, out->bits = b, out->nkeys = nk;
            out->nbits = bits;
            memcpy(out->lo, lo, sizeof lo), memcpy(out->step, st, sizeof st);
            memcpy(out->key, w->key, sizeof(int) * (size_t)nk);
            memcpy(out->qv, w->qv, sizeof(uint32_t) * (size_t)n * d);
        }
    }
}

/* Appends a track's encoding (mode byte, header, bit-packed data, byte-aligned). */
static void write_track(bitbuf* b, const track_code* t, int d, int tbits) {
    uint8_t mode =
        (uint8_t)(t->mode | (t->cubic ? 4 : 0) | ((t->mode >= MODE_SPARSE ? t->bits - 1 : 0) << 3));
    put_bytes(b, &mode, 1);
    if (t->mode == MODE_CONST) {
        for (int c = 0; c < d; c++)
            put_f32(b, t->value[c]);
    } else if (t->mode >= MODE_SPARSE) {
        if (t->mode == MODE_SPARSE) put_u16(b, (unsigned)t->nkeys);
        for (int c = 0; c < d; c++) {
            uint32_t u = f32_u(t->lo[c]);
            uint8_t x[3] = {(uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
            put_bytes(b, x, 3);
        }
        for (int c = 0; c < d; c++) {
            uint32_t u = f32_u(t->step[c]);
            uint8_t x[2] = {(uint8_t)(u >> 16), (uint8_t)(u >> 24)};
            put_bytes(b, x, 2);
        }
        b->nbit = (b->nbit + 7) & ~(size_t)7;
        if (t->mode == MODE_SPARSE) {
            for (int k = 0; k < t->nkeys; k++)
                put_bits(b, (uint32_t)t->key[k], tbits);
            for (int k = 0; k < t->nkeys; k++)
                for (int c = 0; c < d; c++)
                    put_bits(b, t->qv[(size_t)t->key[k] * d + c], t->bits);
        } else {
            int n = t->nkeys, sl = t->seg_log2, S = 1 << sl, nseg = (n + S - 1) / S, obits;
            dense_body(t, d, n, &obits);
            uint8_t h = (uint8_t)(sl | obits << 3);
            put_bits(b, h, 8);
            size_t table = b->nbit, off = 0;
            b->nbit += (size_t)nseg * obits;
            put_bits(b, 0, 0);
            size_t body = b->nbit;
            for (int g = 0; g < nseg; g++) {
                int f0 = g * S, f1 = f0 + S < n ? f0 + S : n;
                size_t save = b->nbit;
                b->nbit = table + (size_t)g * obits;
                put_bits(b, (uint32_t)off, obits);
                b->nbit = save;
                for (int c = 0; c < d; c++) {
                    int k = g * d + c;
                    put_bits(b, t->sh[k], LEVEL_BITS);
                    put_bits(b, t->ord[k], ORDER_BITS);
                    put_bits(b, t->rk[k], RICE_BITS);
                    put_bits(b, t->off[(size_t)f0 * d + c], level_width(t->bits, t->sh[k]));
                }
                for (int f = f0 + 1; f < f1; f++)
                    for (int c = 0; c < d; c++) {
                        const uint32_t* x = t->off + c;
                        int64_t first = x[(size_t)f0 * d], a = x[(size_t)(f - 1) * d];
                        int64_t bb = f - 2 >= f0 ? x[(size_t)(f - 2) * d] : first;
                        uint32_t z = zigzag((int64_t)x[(size_t)f * d] -
                                            predict(t->ord[g * d + c], f - f0, first, a, bb));
                        int k = t->rk[g * d + c];
                        uint32_t q = z >> k;
                        if (q < RICE_QMAX) {
                            put_bits(b, 0, (int)q);
                            put_bits(b, 1, 1);
                            put_bits(b, z & ((1u << k) - 1), k);
                        } else {
                            put_bits(b, 0, RICE_QMAX);
                            put_bits(b, z, ESC_BITS);
                        }
                    }
                off = b->nbit - body;
            }
        }
    }
    b->nbit = (b->nbit + 7) & ~(size_t)7;
}

/* ---- the block: parse and sample -------------------------------------------------------- */

static mn_status bad(mn_error* err, size_t off, const char* field, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static mn_status bad(mn_error* err, size_t off, const char* field, const char* fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mn_error_set(err, MN_ERR_PARSE, NULL, 0, field, "byte %zu: %s", off, msg);
}

static mn_status parse(mn_clip* c, mn_error* err) {
    const uint8_t* p = c->block;
    size_t n = c->size;
#define BAD(off, field, ...) bad(err, (size_t)(off), field, __VA_ARGS__)
    if (n >= 4 && !memcmp(p, "MNC", 3) && p[3] != CLIP_MAGIC[3])
        return BAD((size_t)3, "version",
                   "a clip of format version %c; this library reads version %c only (compress "
                   "the take again)",
                   p[3], CLIP_MAGIC[3]);
    if (n < HEADER_BYTES || memcmp(p, CLIP_MAGIC, 4))
        return BAD((size_t)0, "magic", "not a marionette clip (no " CLIP_MAGIC " header)");
    c->nframes = (int)get_u32(p + 4);
    if (get_u32(p + 4) < 1 || get_u32(p + 4) > (1u << 24))
        return BAD(4, "frames", "frame count %u out of range (1 to 2^24)", get_u32(p + 4));
    c->fps = get_f32(p + 8);
    if (!(c->fps > 0) || !isfinite(c->fps))
        return BAD(8, "fps", "frame rate is not a positive number");
    unsigned nq = p[12] | (unsigned)p[13] << 8, nt = p[14] | (unsigned)p[15] << 8;
    if ((int)nq != c->m->nq)
        return BAD(12, "nq", "state size %u, the figure's is %d", nq, c->m->nq);
    if ((int)nt != c->ntrack)
        return BAD(14, "tracks", "%u tracks, the figure has %d", nt, c->ntrack);
    c->tbits = p[16];
    if (c->tbits != bits_for((uint32_t)c->nframes - 1))
        return BAD(16, "frame_bits", "frame-index bits %d, expected %d", c->tbits,
                   bits_for((uint32_t)c->nframes - 1));
    size_t o = HEADER_BYTES;
    for (int i = 0; i < c->ntrack; i++) {
        clip_track* t = &c->trk[i];
        int d = t->dim;
        if (o + 1 > n) return BAD(o, "track", "track %d: the block ends", i);
        uint8_t mode = p[o++];
        t->mode = mode & 3, t->cubic = mode >> 2 & 1, t->bits = (mode >> 3) + 1;
        if (t->mode < MODE_SPARSE && (mode >> 2))
            return BAD(o - 1, "mode", "track %d: stray bits in its mode byte", i);
        if (t->mode == MODE_DENSE && t->cubic)
            return BAD(o - 1, "mode", "track %d: a dense track is linear", i);
        if (t->mode >= MODE_SPARSE && t->bits > MAX_BITS)
            return BAD(o - 1, "bits", "track %d: %d bits per value (at most %d)", i, t->bits,
                       MAX_BITS);
        if (t->mode == MODE_REST) continue;
        if (t->mode == MODE_CONST) {
            if (o + 4 * (size_t)d > n) return BAD(o, "value", "track %d: the block ends", i);
            for (int k = 0; k < d; k++, o += 4) {
                t->value[k] = get_f32(p + o);
                if (!isfinite(t->value[k]))
                    return BAD(o, "value", "track %d: a value is not finite", i);
            }
            t->nkeys = 1;
            continue;
        }
        if (t->mode == MODE_SPARSE) {
            if (o + 2 > n) return BAD(o, "keys", "track %d: the block ends", i);
            t->nkeys = p[o] | p[o + 1] << 8;
            if (t->nkeys < 2 || t->nkeys > c->nframes)
                return BAD(o, "keys", "track %d: %d keys (2 to %d)", i, t->nkeys, c->nframes);
            o += 2;
        } else {
            t->nkeys = c->nframes;
        }
        if (o + 5 * (size_t)d > n) return BAD(o, "range", "track %d: the block ends", i);
        for (int k = 0; k < d; k++) {
            const uint8_t* x = p + o + 3 * (size_t)k;
            const uint8_t* y = p + o + 3 * (size_t)d + 2 * (size_t)k;
            t->lo[k] = f32_bits((uint32_t)x[0] << 8 | (uint32_t)x[1] << 16 | (uint32_t)x[2] << 24);
            t->step[k] = f32_bits((uint32_t)y[0] << 16 | (uint32_t)y[1] << 24);
            if (!isfinite(t->lo[k]) || !isfinite(t->step[k]) || !(t->step[k] >= 0))
                return BAD(o, "range", "track %d: a range is not finite", i);
        }
        o += 5 * (size_t)d;
        t->data = o;
        if (t->mode == MODE_DENSE) {
            for (unsigned lv = 0; lv <= MAX_LEVEL; lv++)
                t->width[lv] = (uint8_t)level_width(t->bits, lv);
            if (o + 1 > n) return BAD(o, "segments", "track %d: the block ends", i);
            t->seg_log2 = p[o] & 7, t->obits = p[o] >> 3;
            if (t->seg_log2 < 1 || t->seg_log2 > MAX_SEG_LOG2 || t->obits < 1)
                return BAD(o, "segments", "track %d: bad segment length or offset bits", i);
            int S = 1 << t->seg_log2, nseg = (c->nframes + S - 1) / S;
            t->table = 8, t->body = 8 + (size_t)nseg * (size_t)t->obits;
            size_t avail = (n - o) * 8, pos = t->body;
            if (pos > avail) return BAD(o, "segments", "track %d: the block ends", i);
            for (int g = 0; g < nseg; g++) {
                if (read_bits(p + o, t->table + (size_t)g * t->obits, t->obits) != pos - t->body)
                    return BAD(o, "segments", "track %d: segment %d is not where its offset says",
                               i, g);
                int ord[3], rk[3];
                uint32_t top[3];
                int64_t first[3], a[3], b[3];
                for (int k = 0; k < d; k++) {
                    if (pos + SEG_HDR > avail)
                        return BAD(o, "segments", "track %d: the block ends", i);
                    unsigned lv = read_bits(p + o, pos, LEVEL_BITS);
                    ord[k] = (int)read_bits(p + o, pos + LEVEL_BITS, ORDER_BITS);
                    rk[k] = (int)read_bits(p + o, pos + LEVEL_BITS + ORDER_BITS, RICE_BITS);
                    pos += SEG_HDR;
                    if ((int)(lv >> 3) > t->bits || rk[k] > RICE_KMAX)
                        return BAD(o, "segments",
                                   "track %d: segment %d: a step coarser than the track or a "
                                   "Rice parameter above %d",
                                   i, g, RICE_KMAX);
                    top[k] = level_top(t->bits, lv);
                    int fw = level_width(t->bits, lv);
                    if (pos + (size_t)fw > avail)
                        return BAD(o, "segments", "track %d: the block ends", i);
                    first[k] = a[k] = b[k] = read_bits(p + o, pos, fw);
                    pos += (size_t)fw;
                    if (first[k] > top[k])
                        return BAD(o, "segments", "track %d: segment %d starts off its grid", i, g);
                }
                int len = g == nseg - 1 ? c->nframes - g * S : S;
                for (int r = 1; r < len; r++)
                    for (int k = 0; k < d; k++) {
                        if (pos >= avail) return BAD(o, "segments", "track %d: the block ends", i);
                        uint64_t z = rice_get(p + o, &pos, rk[k]);
                        if (pos > avail) return BAD(o, "segments", "track %d: the block ends", i);
                        int64_t v = predict(ord[k], r, first[k], a[k], b[k]) + unzigzag(z);
                        if (v < 0 || v > (int64_t)top[k])
                            return BAD(o, "segments",
                                       "track %d: frame %d leaves its segment's grid", i,
                                       g * S + r);
                        b[k] = a[k], a[k] = v;
                    }
            }
            o += (pos + 7) / 8;
            continue;
        }
        size_t nb = (size_t)t->nkeys * (size_t)c->tbits;
        nb += (size_t)t->nkeys * (size_t)d * (size_t)t->bits;
        if (o + (nb + 7) / 8 > n) return BAD(o, "data", "track %d: the block ends", i);
        {
            int prev = -1;
            for (int k = 0; k < t->nkeys; k++) {
                int f = (int)read_bits(p + o, (size_t)k * c->tbits, c->tbits);
                if (f <= prev || f >= c->nframes || (k == 0 && f != 0) ||
                    (k == t->nkeys - 1 && f != c->nframes - 1))
                    return BAD(o, "key_frames",
                               "track %d: key frames must rise from 0 to the last frame", i);
                prev = f;
            }
        }
        o += (nb + 7) / 8;
    }
    if (o != n) return BAD(o, "size", "%zu bytes after the last track", n - o);
#undef BAD
    return MN_OK;
}

static inline void value_at(const mn_clip* c, const clip_track* t, size_t vbase, int k,
                            double* out) {
    const uint8_t* p = c->block + t->data;
    for (int i = 0; i < t->dim; i++)
        out[i] =
            t->lo[i] +
            (double)read_bits(p, vbase + ((size_t)k * t->dim + i) * t->bits, t->bits) * t->step[i];
}

/* Frame f of a dense track into out, and frame f + 1 of the same segment into nx when nx is
 * not NULL: the segment's record, then the residuals of its frames up to f (or f + 1) decoded
 * in turn. */
/* A reader of Rice codes that keeps the next bits in a word (one memory read per few codes). */
typedef struct rice_reader {
    const uint8_t* p;
    size_t pos;
    uint64_t w; /* the bits from pos on, nb of them valid */
    int nb;
} rice_reader;

static inline uint64_t rice_next(rice_reader* b, int k) {
    if (b->nb < RICE_QMAX + ESC_BITS) {
        b->w = read_word(b->p, b->pos);
        b->nb = 64 - (int)(b->pos & 7);
    }
    uint64_t w = b->w, z;
    int q = low_zeros(w | 1ull << RICE_QMAX), len;
    if (q < RICE_QMAX) {
        len = q + 1 + k;
        z = (uint64_t)q << k | ((w >> (q + 1)) & ((1ull << k) - 1));
    } else {
        len = RICE_QMAX + ESC_BITS;
        z = (w >> RICE_QMAX) & ((1ull << ESC_BITS) - 1);
    }
    b->w = w >> len, b->nb -= len, b->pos += (size_t)len;
    return z;
}

static inline void dense_at(const mn_clip* c, const clip_track* t, int f, double* out, double* nx) {
    const uint8_t* p = c->block + t->data;
    int g = f >> t->seg_log2, r = f & ((1 << t->seg_log2) - 1), d = t->dim;
    size_t pos = t->body + read_bits(p, t->table + (size_t)g * t->obits, t->obits);
    int ord[3], rk[3];
    double mult[3];
    int64_t first[3], x[3], y[3];
    for (int i = 0; i < d; i++) {
        uint32_t h = read_bits(p, pos, SEG_HDR);
        unsigned lv = h & MAX_LEVEL;
        ord[i] = h >> LEVEL_BITS & 3, rk[i] = (int)(h >> (LEVEL_BITS + ORDER_BITS));
        mult[i] = level_mult(lv);
        int fw = t->width[lv];
        first[i] = x[i] = y[i] = read_bits(p, pos + SEG_HDR, fw);
        pos += SEG_HDR + (size_t)fw;
    }
    rice_reader rd = {p, pos, 0, 0};
    for (int k = 1; k <= r; k++)
        for (int i = 0; i < d; i++) {
            int64_t v = predict(ord[i], k, first[i], x[i], y[i]) + unzigzag(rice_next(&rd, rk[i]));
            y[i] = x[i], x[i] = v;
        }
    for (int i = 0; i < d; i++)
        out[i] = t->lo[i] + (double)x[i] * mult[i] * t->step[i];
    if (!nx) return;
    for (int i = 0; i < d; i++) {
        int64_t v = predict(ord[i], r + 1, first[i], x[i], y[i]) + unzigzag(rice_next(&rd, rk[i]));
        nx[i] = t->lo[i] + (double)v * mult[i] * t->step[i];
    }
}

static inline void track_at(const mn_clip* c, const clip_track* t, double frame, double* v) {
    if (t->mode == MODE_CONST) {
        for (int i = 0; i < t->dim; i++)
            v[i] = t->value[i];
        return;
    }
    if (t->mode == MODE_DENSE) {
        int k = (int)frame;
        if (k >= c->nframes - 1) k = c->nframes - 1;
        double u = frame - k, a[3], b[3];
        if (u > 0 && k + 1 < c->nframes) {
            if ((k + 1) >> t->seg_log2 == k >> t->seg_log2) {
                dense_at(c, t, k, a, b);
            } else {
                dense_at(c, t, k, a, NULL);
                dense_at(c, t, k + 1, b, NULL);
            }
            for (int i = 0; i < t->dim; i++)
                a[i] += u * (b[i] - a[i]);
        } else {
            dense_at(c, t, k, a, NULL);
        }
        memcpy(v, a, sizeof(double) * (size_t)t->dim);
        return;
    }
    const uint8_t* p = c->block + t->data;
    int tb = c->tbits, nk = t->nkeys;
    int lo = 0, hi = nk - 1; /* key[lo] <= frame < key[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) >> 1;
        if ((double)read_bits(p, (size_t)mid * tb, tb) <= frame)
            lo = mid;
        else
            hi = mid;
    }
    size_t vb = (size_t)nk * tb;
    double ta = read_bits(p, (size_t)lo * tb, tb), tbk = read_bits(p, (size_t)hi * tb, tb);
    double pa[3], pb[3];
    value_at(c, t, vb, lo, pa);
    value_at(c, t, vb, hi, pb);
    if (!t->cubic) {
        double u = (frame - ta) / (tbk - ta);
        for (int i = 0; i < t->dim; i++)
            v[i] = pa[i] + u * (pb[i] - pa[i]);
        return;
    }
    double pp[3], pn[3], tp = ta, tn = tbk;
    if (lo > 0) {
        tp = read_bits(p, (size_t)(lo - 1) * tb, tb);
        value_at(c, t, vb, lo - 1, pp);
    } else {
        memcpy(pp, pa, sizeof pp);
    }
    if (hi + 1 < nk) {
        tn = read_bits(p, (size_t)(hi + 1) * tb, tb);
        value_at(c, t, vb, hi + 1, pn);
    } else {
        memcpy(pn, pb, sizeof pn);
    }
    cr_eval(t->dim, tp, ta, tbk, tn, pp, pa, pb, pn, frame, v);
}

mn_status mn_clip_sample(const mn_clip* c, double frame, double* q) {
    if (!c || !q || !isfinite(frame)) return MN_ERR_ARG;
    if (frame < 0) frame = 0;
    if (frame > c->nframes - 1) frame = c->nframes - 1;
    const double* q0 = c->m->q0;
    for (int i = 0; i < c->ntrack; i++) {
        const clip_track* t = &c->trk[i];
        double* o = q + t->qadr;
        if (t->mode == MODE_REST) {
            memcpy(o, q0 + t->qadr, sizeof(double) * (t->kind == TK_ROT ? 4 : (size_t)t->dim));
            continue;
        }
        double v[3];
        track_at(c, t, frame, v);
        if (t->kind == TK_ROT)
            rotvec_to_quat(v, o);
        else
            for (int k = 0; k < t->dim; k++)
                o[k] = v[k];
    }
    return MN_OK;
}

/* ---- clips ------------------------------------------------------------------------------ */

static mn_clip* clip_new(const mn_model* m) {
    mn_clip* c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->m = m;
    c->ntrack = count_tracks(m, NULL);
    c->trk = calloc((size_t)(c->ntrack ? c->ntrack : 1), sizeof(clip_track));
    if (!c->trk) {
        free(c);
        return NULL;
    }
    count_tracks(m, c->trk);
    return c;
}

void mn_clip_destroy(mn_clip* c) {
    if (!c) return;
    free(c->trk);
    free(c->block);
    free(c);
}

mn_clip* mn_clip_load(const mn_model* m, const void* bytes, size_t nbytes, mn_error* err) {
    if (!m || (!bytes && nbytes)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "clip", "no model or no bytes");
        return NULL;
    }
    mn_clip* c = clip_new(m);
    uint8_t* b = c ? calloc(nbytes + PAD, 1) : NULL;
    if (!b) {
        mn_clip_destroy(c);
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "clip", "out of memory");
        return NULL;
    }
    if (nbytes) memcpy(b, bytes, nbytes);
    c->block = b, c->size = nbytes;
    if (parse(c, err) != MN_OK) {
        mn_clip_destroy(c);
        return NULL;
    }
    return c;
}

const void* mn_clip_bytes(const mn_clip* c) {
    return c ? c->block : NULL;
}
size_t mn_clip_size(const mn_clip* c) {
    return c ? c->size : 0;
}
int mn_clip_frames(const mn_clip* c) {
    return c ? c->nframes : 0;
}
double mn_clip_fps(const mn_clip* c) {
    return c ? c->fps : 0;
}

mn_clip_options mn_clip_default(void) {
    mn_clip_options o;
    memset(&o, 0, sizeof o);
    o.tol = 1e-4;
    o.shell = 0.03;
    return o;
}

/* Virtual vertices of every joint of d: 2 points x 3 numbers per joint. */
static void vertices(const mn_model* m, const mn_data* d, double shell, double* out) {
    for (int j = 0; j < m->njoint; j++) {
        const mn_xform* x = &d->xf[j];
        const double p[3] = {x->p.x, x->p.y, x->p.z};
        for (int a = 0; a < 2; a++) /* the joint's x and y axes: columns of R */
            for (int r = 0; r < 3; r++)
                out[6 * j + 3 * a + r] = p[r] + shell * x->R.m[3 * r + a];
    }
}

/* The error of clip c against the take's vertices V (nframes x njoint x 6). */
static double clip_error_v(const mn_clip* c, mn_data* d, const double* V, double shell, double* tmp,
                           int* wj, int* wf) {
    const mn_model* m = c->m;
    double worst = -1;
    for (int f = 0; f < c->nframes; f++) {
        mn_clip_sample(c, f, d->q);
        mn_fk(m, d);
        vertices(m, d, shell, tmp);
        const double* r = V + (size_t)f * (size_t)m->njoint * 6;
        for (int j = 0; j < m->njoint; j++)
            for (int a = 0; a < 2; a++) {
                const double* x = tmp + 6 * j + 3 * a;
                const double* y = r + 6 * j + 3 * a;
                double e = sqrt((x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1]) +
                                (x[2] - y[2]) * (x[2] - y[2]));
                if (e > worst) {
                    worst = e;
                    if (wj) *wj = j;
                    if (wf) *wf = f;
                }
            }
    }
    return worst;
}

static double* take_vertices(const mn_model* m, mn_data* d, const double* q, int n, double shell) {
    double* V = malloc(sizeof(double) * (size_t)n * (size_t)m->njoint * 6 + 1);
    if (!V) return NULL;
    for (int f = 0; f < n; f++) {
        memcpy(d->q, q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        vertices(m, d, shell, V + (size_t)f * (size_t)m->njoint * 6);
    }
    return V;
}

mn_status mn_clip_error(const mn_clip* c, const double* q, int nframes, double shell,
                        double* max_error, int* worst_joint, int* worst_frame) {
    if (!c || !q || nframes != c->nframes || !(shell >= 0)) return MN_ERR_ARG;
    mn_data* d = mn_data_create(c->m, 0);
    double* V = d ? take_vertices(c->m, d, q, nframes, shell) : NULL;
    double* tmp = malloc(sizeof(double) * (size_t)c->m->njoint * 6 + 1);
    if (!d || !V || !tmp) {
        mn_data_destroy(d), free(V), free(tmp);
        return MN_ERR_NOMEM;
    }
    double e = clip_error_v(c, d, V, shell, tmp, worst_joint, worst_frame);
    if (max_error) *max_error = e;
    mn_data_destroy(d), free(V), free(tmp);
    return MN_OK;
}

/* ---- compression ------------------------------------------------------------------------ */

typedef struct enc {
    const mn_model* m;
    int n, nt, tbits;
    double fps;
    clip_track* trk;
    double** val;  /* per track: n x dim */
    double** rest; /* per track: dim */
    double* base;  /* per track: the guaranteed share (before widening) */
    double* mult;  /* per track: widening */
    track_code* code;
    fit_work w;
    int searched; /* the dense layouts are the search's: assemble keeps them */
} enc;

static void fit(enc* e, int i, double scale) {
    fit_track(e->val[i], e->n, e->trk[i].dim, e->rest[i], e->base[i] * e->mult[i] * scale, e->tbits,
              &e->w, &e->code[i]);
}

/* The block of the current codes into a clip (its bytes replaced). */
static mn_status assemble(enc* e, mn_clip* c) {
    bitbuf b = {0};
    put_bytes(&b, CLIP_MAGIC, 4);
    uint32_t nf = (uint32_t)e->n;
    uint8_t h[4] = {(uint8_t)nf, (uint8_t)(nf >> 8), (uint8_t)(nf >> 16), (uint8_t)(nf >> 24)};
    put_bytes(&b, h, 4);
    put_f32(&b, (float)e->fps);
    put_u16(&b, (unsigned)e->m->nq);
    put_u16(&b, (unsigned)e->nt);
    uint8_t tb = (uint8_t)e->tbits;
    put_bytes(&b, &tb, 1);
    for (int i = 0; i < e->nt; i++) {
        if (e->code[i].mode == MODE_DENSE)
            if (!e->searched) dense_layout(e->val[i], &e->code[i], e->trk[i].dim, e->n);
        write_track(&b, &e->code[i], e->trk[i].dim, e->tbits);
    }
    if (b.oom) {
        free(b.p);
        return MN_ERR_NOMEM;
    }
    size_t size = b.nbit / 8;
    uint8_t* blk = realloc(b.p, size + PAD);
    if (!blk) {
        free(b.p);
        return MN_ERR_NOMEM;
    }
    memset(blk + size, 0, PAD);
    free(c->block);
    c->block = blk, c->size = size;
    return parse(c, NULL);
}

/* Writes dense track i's decoded values at frames f0..f1-1 into the states Q (n x nq). */
static void put_decoded(enc* e, int i, int f0, int f1, double* Q) {
    const clip_track* t = &e->trk[i];
    int d = t->dim, nq = e->m->nq;
    for (int f = f0; f < f1; f++) {
        double v[3];
        for (int c = 0; c < d; c++)
            v[c] = seg_value(&e->code[i], d, f, c);
        double* o = Q + (size_t)f * nq + t->qadr;
        if (t->kind == TK_ROT)
            rotvec_to_quat(v, o);
        else
            memcpy(o, v, sizeof(double) * (size_t)d);
    }
}

/* Whether frames f0..f1-1 of the states Q are within tol of the take's vertices V. */
static int frames_ok(enc* e, mn_data* d, const double* V, const double* Q, int f0, int f1,
                     double shell, double tol, double* tmp) {
    const mn_model* m = e->m;
    for (int f = f0; f < f1; f++) {
        memcpy(d->q, Q + (size_t)f * m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        vertices(m, d, shell, tmp);
        const double* r = V + (size_t)f * (size_t)m->njoint * 6;
        for (int k = 0; k < 2 * m->njoint; k++) {
            const double *x = tmp + 3 * k, *y = r + 3 * k;
            double e2 = (x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1]) +
                        (x[2] - y[2]) * (x[2] - y[2]);
            if (!(e2 <= tol * tol)) return 0;
        }
    }
    return 1;
}

/* The per-segment search (the Animation Compression Library's per-segment bit rates): each
 * component of each segment of each dense track coarsens its step level by level while the
 * object-space error over the segment's frames stays within tol and the segment gets
 * smaller. A dense track's value at a frame depends on its own segment only, so the
 * segment's frames are the only ones a change can move: the check is exact. Round-robin
 * passes over all of them, so that no track takes a segment's whole slack first: steps of 8
 * levels (a factor of 2) until none is taken, then 4, 2 and 1. Q holds the clip's states at
 * every frame, kept current. */
/* Segment g, component c of dense track i at level s: kept when it is smaller and the
 * segment's frames stay within tol, else put back. Returns whether it was kept. */
static int try_level(enc* e, int i, int g, int c, int s, mn_data* d, const double* V, double* Q,
                     double shell, double tol, double* tmp) {
    track_code* t = &e->code[i];
    int dim = e->trk[i].dim, n = e->n, S = 1 << t->seg_log2;
    int f0 = g * S, f1 = f0 + S < n ? f0 + S : n, k = g * dim + c, sh0 = t->sh[k];
    if (s > MAX_LEVEL || (s >> 3) > t->bits) return 0;
    uint32_t cost0 = t->scost[k], off0[1 << MAX_SEG_LOG2];
    uint8_t ord0 = t->ord[k], rk0 = t->rk[k];
    for (int f = f0; f < f1; f++)
        off0[f - f0] = t->off[(size_t)f * dim + c];
    t->sh[k] = (uint8_t)s;
    if (seg_layout(e->val[i], t, dim, n, g, c) < cost0) {
        /* a frame beyond tol tries the index on the value's other side, then one step beyond
         * the nearest on its own side: the error at a frame is that of all its tracks
         * together, and another index of this one can offset the others' (the indices of a
         * frame are chosen jointly against the object-space error, as a vector quantiser
         * chooses its code vector, instead of each rounded on its own) */
        double mult = level_mult((unsigned)s);
        uint32_t top = level_top(t->bits, (unsigned)s);
        int ok = 1;
        for (int f = f0; f < f1 && ok; f++) {
            put_decoded(e, i, f, f + 1, Q);
            if (frames_ok(e, d, V, Q, f, f + 1, shell, tol, tmp)) continue;
            uint32_t* x = &t->off[(size_t)f * dim + c];
            double want =
                (e->val[i][(size_t)f * dim + c] - (double)t->lo[c]) / (double)t->step[c] / mult;
            int64_t x0 = *x, sg = want > (double)x0 ? 1 : -1;
            static const int tries[2] = {1, -1};
            ok = 0;
            for (int r = 0; r < 2 && !ok; r++) {
                int64_t y = x0 + sg * tries[r];
                if (y < 0 || y > (int64_t)top) continue;
                *x = (uint32_t)y;
                put_decoded(e, i, f, f + 1, Q);
                ok = frames_ok(e, d, V, Q, f, f + 1, shell, tol, tmp);
            }
        }
        if (ok && seg_code(t, dim, n, g, c) < cost0) return 1;
    }
    t->sh[k] = (uint8_t)sh0, t->scost[k] = cost0, t->ord[k] = ord0, t->rk[k] = rk0;
    for (int f = f0; f < f1; f++)
        t->off[(size_t)f * dim + c] = off0[f - f0];
    put_decoded(e, i, f0, f1, Q);
    return 0;
}

/* After the search: each frame's index moved by one towards fewer bits where the frame stays
 * within tol (rate-distortion optimised quantisation, as video coders choose their levels). */
static void index_polish(enc* e, mn_data* d, const double* V, double* Q, double shell, double tol,
                         double* tmp) {
    for (int i = 0; i < e->nt; i++) {
        track_code* t = &e->code[i];
        if (t->mode != MODE_DENSE) continue;
        int dim = e->trk[i].dim, n = e->n, S = 1 << t->seg_log2, nseg = (n + S - 1) / S;
        for (int g = 0; g < nseg; g++)
            for (int c = 0; c < dim; c++) {
                int k = g * dim + c, f0 = g * S, f1 = f0 + S < n ? f0 + S : n;
                uint32_t top = level_top(t->bits, t->sh[k]);
                for (int f = f0; f < f1; f++) {
                    uint32_t* x = &t->off[(size_t)f * dim + c];
                    uint32_t x0 = *x, cost0 = t->scost[k];
                    uint8_t ord0 = t->ord[k], rk0 = t->rk[k];
                    int kept = 0;
                    for (int dx = -1; dx <= 1 && !kept; dx += 2) {
                        if ((dx < 0 && x0 == 0) || (dx > 0 && x0 >= top)) continue;
                        *x = x0 + (uint32_t)dx;
                        if (seg_code(t, dim, n, g, c) < cost0) {
                            put_decoded(e, i, f, f + 1, Q);
                            if (frames_ok(e, d, V, Q, f, f + 1, shell, tol, tmp)) {
                                kept = 1;
                                break;
                            }
                        }
                        *x = x0;
                        t->scost[k] = cost0, t->ord[k] = ord0, t->rk[k] = rk0;
                        put_decoded(e, i, f, f + 1, Q);
                    }
                }
            }
    }
}

static void segment_search(enc* e, mn_data* d, const double* V, double* Q, double shell, double tol,
                           double* tmp) {
    static const int jumps[9] = {24, 16, 12, 8, 6, 4, 3, 2, 1};
    for (int pass = 0, changed = 1; changed && pass < 64; pass++) {
        changed = 0;
        for (int i = 0; i < e->nt; i++) {
            track_code* t = &e->code[i];
            if (t->mode != MODE_DENSE) continue;
            int dim = e->trk[i].dim, n = e->n, S = 1 << t->seg_log2, nseg = (n + S - 1) / S;
            for (int g = 0; g < nseg; g++)
                for (int c = 0; c < dim; c++)
                    for (int j = 0; j < 9; j++)
                        if (try_level(e, i, g, c, t->sh[g * dim + c] + jumps[j], d, V, Q, shell,
                                      tol, tmp)) {
                            changed = 1;
                            break;
                        }
        }
    }
}

static void enc_free(enc* e) {
    if (e->val)
        for (int i = 0; i < e->nt; i++)
            free(e->val[i]), free(e->rest[i]);
    if (e->code)
        for (int i = 0; i < e->nt; i++)
            free(e->code[i].key), free(e->code[i].qv), free(e->code[i].sh), free(e->code[i].ord),
                free(e->code[i].rk), free(e->code[i].scost), free(e->code[i].off);
    free(e->val), free(e->rest), free(e->base), free(e->mult), free(e->code);
    free(e->w.dq), free(e->w.err), free(e->w.qv), free(e->w.key);
}

mn_clip* mn_clip_compress(const mn_model* m, const double* q, int nframes, double fps,
                          const mn_clip_options* o, mn_clip_stats* stats, mn_error* err) {
    mn_clip_options opt = o ? *o : mn_clip_default();
    if (!m || !q || nframes < 1 || nframes > (1 << 24) || !(fps > 0) || !isfinite(fps) ||
        !(opt.tol > 0) || !isfinite(opt.tol) || !(opt.shell >= 0) || !isfinite(opt.shell)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "clip",
                     "no model or take, or a bad frame count, fps, tolerance or shell");
        return NULL;
    }
    int seg_max_log2 = opt.max_segment == 0 ? MAX_SEG_LOG2 : 0;
    for (int sl = 3; sl <= MAX_SEG_LOG2; sl++)
        if (opt.max_segment == 1 << sl) seg_max_log2 = sl;
    if (!seg_max_log2) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "max_segment",
                     "max_segment %d: 8, 16 or 32 frames (0: 32)", opt.max_segment);
        return NULL;
    }
    if (m->nq > 65535) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "clip", "more than 65535 state numbers");
        return NULL;
    }
    for (int f = 0; f < nframes; f++)
        if (mn_q_check(m, q + (size_t)f * (size_t)m->nq) != MN_OK) {
            mn_error_set(err, MN_ERR_ARG, NULL, 0, "clip", "frame %d is not finite", f);
            return NULL;
        }
    mn_clip* c = clip_new(m);
    mn_data* d = c ? mn_data_create(m, 0) : NULL;
    enc e;
    memset(&e, 0, sizeof e);
    e.m = m, e.n = nframes, e.fps = fps, e.tbits = bits_for((uint32_t)nframes - 1);
    e.w.seg_max_log2 = seg_max_log2;
    double *V = NULL, *tmp = NULL;
    mn_status st = MN_ERR_NOMEM;
    if (!c || !d) goto done;
    c->nframes = nframes, c->fps = fps;
    e.nt = c->ntrack, e.trk = c->trk;
    size_t n3 = (size_t)nframes * 3;
    e.val = calloc((size_t)e.nt + 1, sizeof(double*));
    e.rest = calloc((size_t)e.nt + 1, sizeof(double*));
    e.base = calloc((size_t)e.nt + 1, sizeof(double));
    e.mult = calloc((size_t)e.nt + 1, sizeof(double));
    e.code = calloc((size_t)e.nt + 1, sizeof(track_code));
    e.w.dq = malloc(sizeof(double) * n3);
    e.w.err = malloc(sizeof(double) * (size_t)nframes);
    e.w.qv = malloc(sizeof(uint32_t) * n3);
    e.w.key = malloc(sizeof(int) * (size_t)nframes);
    V = take_vertices(m, d, q, nframes, opt.shell);
    tmp = malloc(sizeof(double) * (size_t)m->njoint * 6 + 1);
    if (!e.val || !e.rest || !e.base || !e.mult || !e.code || !e.w.dq || !e.w.err || !e.w.qv ||
        !e.w.key || !V || !tmp)
        goto done;
    for (int i = 0; i < e.nt; i++) {
        int dim = e.trk[i].dim;
        e.val[i] = malloc(sizeof(double) * (size_t)nframes * dim);
        e.rest[i] = malloc(sizeof(double) * 3);
        e.code[i].key = malloc(sizeof(int) * (size_t)nframes);
        e.code[i].qv = malloc(sizeof(uint32_t) * (size_t)nframes * dim);
        e.code[i].off = malloc(sizeof(uint32_t) * (size_t)nframes * dim);
        e.code[i].scost = calloc((size_t)nframes * dim, sizeof(uint32_t));
        e.code[i].sh = calloc((size_t)nframes * dim, 1);
        e.code[i].ord = calloc((size_t)nframes * dim, 1);
        e.code[i].rk = calloc((size_t)nframes * dim, 1);
        if (!e.val[i] || !e.rest[i] || !e.code[i].key || !e.code[i].qv || !e.code[i].off ||
            !e.code[i].scost || !e.code[i].sh || !e.code[i].ord || !e.code[i].rk)
            goto done;
        track_values(&e.trk[i], q, m->nq, nframes, e.val[i]);
        track_values(&e.trk[i], m->q0, m->nq, 1, e.rest[i]);
        e.mult[i] = 1;
    }
    /* the guaranteed split: reach R_j of every joint (bone lengths down to its farthest
     * joint, plus the shell) and the most tracks on a path from a root */
    {
        double* reach = calloc((size_t)m->njoint + 1, sizeof(double));
        int* ntr = calloc((size_t)m->njoint + 1, sizeof(int));
        if (!reach || !ntr) {
            free(reach), free(ntr);
            goto done;
        }
        int H = 1;
        for (int j = 0; j < m->njoint; j++) {
            int p = m->jnt_parent[j], ty = m->jnt_type[j];
            ntr[j] = (p >= 0 ? ntr[p] : 0) + (ty == MN_JOINT_FREE ? 2 : ty != MN_JOINT_FIXED);
            if (ntr[j] > H) H = ntr[j];
        }
        /* reach[j]: the longest chain of bones below j (children come after their parent,
         * so walking backwards finishes every child before its parent) */
        for (int j = m->njoint - 1; j >= 0; j--) {
            int p = m->jnt_parent[j];
            if (p < 0) continue;
            double len = mn_vec3_norm(m->jnt_offset[j]);
            if (m->jnt_type[j] == MN_JOINT_SLIDE) { /* its travel lengthens the chain */
                double tr = 0;
                for (int f = 0; f < nframes; f++)
                    tr = fmax(tr, fabs(q[(size_t)f * m->nq + m->jnt_qadr[j]]));
                len += tr;
            }
            if (len + reach[j] > reach[p]) reach[p] = len + reach[j];
        }
        for (int j = 0; j < m->njoint; j++)
            reach[j] += opt.shell;
        double w = opt.tol / H;
        for (int i = 0; i < e.nt; i++) {
            const clip_track* t = &e.trk[i];
            int linear = t->kind == TK_VEC3 ||
                         (t->kind == TK_SCALAR && m->jnt_type[t->joint] == MN_JOINT_SLIDE);
            e.base[i] = linear ? w : w / fmax(reach[t->joint], 1e-300);
        }
        free(reach), free(ntr);
    }
    /* widen all shares together: the largest factor (bisection on a log scale) whose clip
     * is within tol, then each track's own */
    double good = 0, bad = 0;
    int wj = -1, wf = -1;
    double errv = 0;
    for (double s = 1; s > 1e-3; s *= 0.5) {
        for (int i = 0; i < e.nt; i++)
            fit(&e, i, s);
        if ((st = assemble(&e, c)) != MN_OK) goto done;
        errv = clip_error_v(c, d, V, opt.shell, tmp, &wj, &wf);
        if (errv <= opt.tol) {
            good = s;
            break;
        }
    }
    if (good == 0) {
        st = MN_ERR_ARG;
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "tol",
                     "the tolerance %g is too small to quantise this take", opt.tol);
        goto done;
    }
    bad = 64 * good;
    for (int it = 0; it < 7; it++) {
        double s = sqrt(good * bad);
        for (int i = 0; i < e.nt; i++)
            fit(&e, i, s);
        if ((st = assemble(&e, c)) != MN_OK) goto done;
        if (clip_error_v(c, d, V, opt.shell, tmp, NULL, NULL) <= opt.tol)
            good = s;
        else
            bad = s;
    }
    for (int i = 0; i < e.nt; i++)
        fit(&e, i, good);
    static const double widen[6] = {2, 1.5, 1.5, 1.25, 1.25, 1.1};
    for (int pass = 0; pass < 6; pass++) {
        for (int i = 0; i < e.nt; i++) {
            if (e.code[i].mode == MODE_REST) continue;
            track_code keep = e.code[i];
            size_t before = keep.nbits;
            /* the old code's arrays are reused by the new fit: keep copies */
            int* key = malloc(sizeof(int) * (size_t)nframes);
            uint32_t* qv = malloc(sizeof(uint32_t) * (size_t)nframes * e.trk[i].dim);
            if (!key || !qv) {
                free(key), free(qv);
                goto done;
            }
            memcpy(key, keep.key, sizeof(int) * (size_t)nframes);
            memcpy(qv, keep.qv, sizeof(uint32_t) * (size_t)nframes * e.trk[i].dim);
            double old = e.mult[i];
            e.mult[i] *= widen[pass];
            fit(&e, i, good);
            int ok = e.code[i].nbits < before;
            if (ok) {
                if ((st = assemble(&e, c)) != MN_OK) {
                    free(key), free(qv);
                    goto done;
                }
                ok = clip_error_v(c, d, V, opt.shell, tmp, NULL, NULL) <= opt.tol;
            }
            if (!ok) { /* back to the kept code (its arrays are the same buffers) */
                e.mult[i] = old;
                e.code[i] = keep;
                memcpy(e.code[i].key, key, sizeof(int) * (size_t)nframes);
                memcpy(e.code[i].qv, qv, sizeof(uint32_t) * (size_t)nframes * e.trk[i].dim);
            }
            free(key), free(qv);
        }
    }
    if ((st = assemble(&e, c)) != MN_OK) goto done;
    {
        double* Q = malloc(sizeof(double) * (size_t)nframes * (size_t)m->nq);
        if (!Q) goto done;
        for (int f = 0; f < nframes; f++)
            mn_clip_sample(c, f, Q + (size_t)f * m->nq);
        for (int i = 0; i < e.nt; i++) /* the search keeps the layout current itself */
            if (e.code[i].mode == MODE_DENSE)
                dense_layout(e.val[i], &e.code[i], e.trk[i].dim, nframes);
        e.searched = 1;
        segment_search(&e, d, V, Q, opt.shell, opt.tol, tmp);
        index_polish(&e, d, V, Q, opt.shell, opt.tol, tmp);
        free(Q);
    }
    if ((st = assemble(&e, c)) != MN_OK) goto done;
    errv = clip_error_v(c, d, V, opt.shell, tmp, &wj, &wf);
    if (errv > opt.tol) { /* cannot happen: every accepted step was measured */
        st = MN_ERR_ARG;
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "tol", "the clip misses the tolerance");
        goto done;
    }
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->frames = nframes;
        stats->tracks = e.nt;
        int moving = 0;
        for (int j = 0; j < m->njoint; j++)
            moving += m->jnt_type[j] != MN_JOINT_FIXED;
        for (int i = 0; i < e.nt; i++) {
            const clip_track* t = &c->trk[i];
            stats->rest += t->mode == MODE_REST;
            stats->constant += t->mode == MODE_CONST;
            stats->sparse += t->mode == MODE_SPARSE;
            stats->dense += t->mode == MODE_DENSE;
            stats->keys += t->mode == MODE_REST ? 0 : t->nkeys;
        }
        stats->raw_bytes = (size_t)moving * (size_t)nframes * 40;
        stats->bytes = c->size;
        stats->ratio = (double)stats->raw_bytes / (double)c->size;
        stats->max_error = errv;
        stats->worst_joint = wj;
        stats->worst_frame = wf;
        stats->scale = good;
    }
    st = MN_OK;
done:
    enc_free(&e);
    free(V), free(tmp);
    mn_data_destroy(d);
    if (st != MN_OK) {
        if (st == MN_ERR_NOMEM) mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "clip", "out of memory");
        mn_clip_destroy(c);
        return NULL;
    }
    return c;
}
