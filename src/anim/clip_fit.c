/* Compressed clips, offline: the encoding of one track within its share of the error.
 *
 * A track's keys: greedy insertion (the frame of largest error becomes the next key) on the
 * quantised values, for linear and for Catmull-Rom interpolation and three splits of the
 * track's share between quantisation and interpolation; the smallest encoding wins, against
 * a constant, the rest value, and a value at every frame. A dense track's segments are coded
 * losslessly on their grids: each frame's index predicted from the frames before it in the
 * segment, the residual Rice-coded (Robinson's SHORTEN, 1994: fixed polynomial predictors
 * and Rice codes per block, as FLAC), so the quantisation is the only error and it does not
 * accumulate along the segment. */
#include <stdlib.h>

#include "clip_encode.h"

/* Rotation vector of a unit quaternion (w, x, y, z), angle in [0, pi]. */
static void quat_to_rotvec(const double* q, double* r) {
    double w = q[0], x = q[1], y = q[2], z = q[3];
    if (w < 0) w = -w, x = -x, y = -y, z = -z;
    double s = sqrt(x * x + y * y + z * z);
    double k = s > 1e-300 ? 2 * atan2(s, w) / s : 2.0;
    r[0] = k * x, r[1] = k * y, r[2] = k * z;
}

/* The track's numbers at every frame (rotations unwrapped: of the rotation vectors r + 2 pi k
 * r/|r| of the same rotation, the one nearest the previous frame's). */
void mn_clip_track_values(const clip_track* t, const double* q, int nq, int n, double* v) {
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

/* A track's range is stored in 5 bytes per component: its low end in the 24 high bits of a
 * float32 (rounded down), its step in the 16 high bits (rounded up). */
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

/* The larger and smaller of two numbers that are not NaN (the take's values and squared
 * distances), without the library's calls. */
static inline double max_d(double a, double b) {
    return b > a ? b : a;
}
static inline double min_d(double a, double b) {
    return b < a ? b : a;
}

/* lround without the library call, the same number for |x| < 2^62: the cast truncates
 * exactly, and so does the fraction left. */
static inline long round_away(double x) {
    long k = (long)x;
    double fr = x - (double)k;
    return k + (fr >= 0.5) - (fr <= -0.5);
}

/* Quantisation of v (n x d) to `bits` over its range: lo rounded down and step rounded up
 * in float32 so that lo + (2^bits - 1) step covers the range. */
static void quantise(const double* v, int n, int d, int bits, float* lo, float* step, uint32_t* qv,
                     double* dq) {
    uint32_t top = (uint32_t)((1ull << bits) - 1);
    for (int c = 0; c < d; c++) {
        double mn = INFINITY, mx = -INFINITY;
        for (int f = 0; f < n; f++)
            mn = min_d(mn, v[(size_t)f * d + c]), mx = max_d(mx, v[(size_t)f * d + c]);
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
            long k = round_away(x);
            if (k < 0) k = 0;
            if (k > (long)top) k = (long)top;
            qv[(size_t)f * d + c] = (uint32_t)k;
            dq[(size_t)f * d + c] = (double)l + (double)k * (double)s;
        }
    }
}

/* Squared distance (compared with squared bounds: no square root in the loops). */
static double dist2_d(const double* a, const double* b, int d) {
    double s = 0;
    for (int c = 0; c < d; c++)
        s += (a[c] - b[c]) * (a[c] - b[c]);
    return s;
}

/* The errors of segment a..b (keys' values pa, pb; Catmull-Rom's tangents ma, mb) for D
 * components (a constant where the caller passes one, so that the loops over the frames
 * unroll and vectorise), each frame's sum in the order of c. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
segment_errors_d(int a, int b, const double* pa, const double* pb, const double* ma,
                 const double* mb, const double* v, int D, int cubic, double* err) {
    if (!cubic) {
        for (int f = a; f <= b; f++) {
            double u = (f - a) / (double)(b - a), e = 0;
            for (int c = 0; c < D; c++) {
                double o = pa[c] + u * (pb[c] - pa[c]), x = o - v[(size_t)f * D + c];
                e += x * x;
            }
            err[f] = e;
        }
        return;
    }
    double ta = a, h = (double)b - ta;
    for (int f = a; f <= b; f++) {
        double u = (f - ta) / h, u2 = u * u, u3 = u2 * u;
        double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2,
               h11 = u3 - u2, e = 0;
        for (int c = 0; c < D; c++) {
            double o = h00 * pa[c] + h10 * ma[c] + h01 * pb[c] + h11 * mb[c],
                   x = o - v[(size_t)f * D + c];
            e += x * x;
        }
        err[f] = e;
    }
}

/* The squared errors against v of the sparse track of keys key[0..nk-1] (values dq at those
 * frames) over segment k's frames key[k]..key[k+1], into err; returns the largest. The
 * segment's own numbers (its length, Catmull-Rom's tangents) are computed once, each with the
 * operations of cr_eval, so every value is bit for bit cr_eval's (and the sampler's). */
static double segment_errors(const int* key, int nk, const double* dq, const double* v, int d,
                             int cubic, int k, double* err) {
    int a = key[k], b = key[k + 1];
    const double *pa = dq + (size_t)a * d, *pb = dq + (size_t)b * d;
    double ma[3] = {0, 0, 0}, mb[3] = {0, 0, 0};
    if (cubic) {
        int p = k > 0 ? key[k - 1] : a, n = k + 2 < nk ? key[k + 2] : b;
        const double *pp = dq + (size_t)p * d, *pn = dq + (size_t)n * d;
        double ta = a, tb = b, h = tb - ta, sa = h / (tb - p), sb = h / (n - ta);
        for (int c = 0; c < d; c++)
            ma[c] = (pb[c] - pp[c]) * sa, mb[c] = (pn[c] - pa[c]) * sb;
    }
    if (d == 3)
        segment_errors_d(a, b, pa, pb, ma, mb, v, 3, cubic, err);
    else if (d == 1)
        segment_errors_d(a, b, pa, pb, ma, mb, v, 1, cubic, err);
    else
        segment_errors_d(a, b, pa, pb, ma, mb, v, d, cubic, err);
    double most = 0; /* errors are not NaN: the largest, whatever the order */
    for (int f = a; f <= b; f++)
        most = err[f] > most ? err[f] : most;
    return most;
}

/* Greedy keys on the quantised values dq until every frame is within eps of v; returns the
 * key count, or -1 when it exceeds max_keys. err holds per-frame errors (workspace).
 *
 * The worst frame is found from a tournament tree over blocks of BLOCK frames (w->tmax,
 * w->tidx: node 1 the root, node j's children 2 j and 2 j + 1, leaves from w->tleaf): a
 * block's largest error and the first frame holding it (NaN never wins, as in a scan with
 * >), a node the larger of its children's, the left one on a tie, so the root holds the
 * first frame of the largest error, as a scan of every frame would find it. A key changes
 * the errors of a few segments only: their blocks and the paths up from them are renewed. */
#define BLOCK 16
static void block_max(const double* err, int n, int b, fit_work* w) {
    double best = -INFINITY;
    int at = -1;
    for (int f = b * BLOCK; f < (b + 1) * BLOCK && f < n; f++)
        if (err[f] > best) best = err[f], at = f;
    int j = w->tleaf + b;
    w->tmax[j] = best, w->tidx[j] = at;
    for (j >>= 1; j >= 1; j >>= 1) {
        int l = 2 * j, r = l + 1, pick = w->tmax[r] > w->tmax[l] ? r : l;
        w->tmax[j] = w->tmax[pick], w->tidx[j] = w->tidx[pick];
    }
}

/* Leaves for nblocks blocks (the unused ones never win), the tree empty. */
static void tree_reset(fit_work* w, int nblocks) {
    int leaf = 1;
    while (leaf < nblocks)
        leaf <<= 1;
    w->tleaf = leaf;
    for (int j = 1; j < 2 * leaf; j++)
        w->tmax[j] = -INFINITY, w->tidx[j] = -1;
}

/* The segments still beyond eps bound the keys to come from below. Linear: a segment's
 * values depend on its two keys only, so every segment beyond eps needs a key inside it.
 * Catmull-Rom: a segment's values depend on the keys of the segments beside it too, and a
 * key changes its own segment and the two beside it (those whose tangents it moves), so at
 * least a third as many keys as segments beyond eps. When the keys so far and those still
 * needed pass max_keys, greedy insertion would return -1 later: it returns it now. */
static int keys_needed(int nbad, int cubic) {
    return cubic ? (nbad + 2) / 3 : nbad;
}

static int greedy_keys(const double* v, const double* dq, int n, int d, int cubic, double eps,
                       int max_keys, int* key, double* err, fit_work* w) {
    int nk = 2, nbad = 0;    /* nbad: segments with a frame beyond eps (w->bad, by first key) */
    double eps2 = eps * eps; /* errors are squared */
    key[0] = 0, key[1] = n - 1;
    w->bad[0] = 0;
    tree_reset(w, (n + BLOCK - 1) / BLOCK);
    int lo_seg = 0, hi_seg = 0; /* segments whose frames need their error recomputed */
    for (;;) {
        int last = hi_seg < nk - 2 ? hi_seg : nk - 2;
        for (int k = lo_seg; k <= last; k++) {
            double most = segment_errors(key, nk, dq, v, d, cubic, k, err);
            uint8_t now = most > eps2;
            nbad += now - w->bad[key[k]], w->bad[key[k]] = now;
        }
        /* the first frame of the largest error above eps: the blocks of the frames just
         * recomputed renewed */
        if (lo_seg <= last)
            for (int b = key[lo_seg] / BLOCK; b <= key[last + 1] / BLOCK; b++)
                block_max(err, n, b, w);
        int at = w->tmax[1] > eps2 ? w->tidx[1] : -1;
        if (at < 0) return nk;
        if (nk >= max_keys || nk + keys_needed(nbad, cubic) > max_keys) return -1;
        int k = 0, hi = nk - 1; /* the segment holding at: key[k] < at <= key[k + 1] */
        while (hi - k > 1) {
            int mid = (k + hi) >> 1;
            if (key[mid] < at)
                k = mid;
            else
                hi = mid;
        }
        if (key[k + 1] == at) { /* a key's own value is off: quantisation, cannot improve */
            return -1;
        }
        memmove(key + k + 2, key + k + 1, sizeof(int) * (size_t)(nk - k - 1));
        key[k + 1] = at;
        w->bad[at] = 0; /* a new segment: counted when its errors are */
        nk++;
        /* the new key's two segments change; with Catmull-Rom also the one on either side
         * (the tangents at the keys beside the new one) */
        lo_seg = cubic ? (k - 1 < 0 ? 0 : k - 1) : k;
        hi_seg = cubic ? k + 2 : k + 1;
    }
}

/* A lower bound on the keys of any sparse track of values v (n x d) within eps (so on
 * greedy_keys' count). Linear: between two keys the track is a line, whose second
 * difference is zero, so where three frames f - h, f, f + h lie between the same two keys
 * (keys at the ends allowed) their errors e, each at most eps, give
 * |v[f-h] - 2 v[f] + v[f+h]| = |e[f-h] - 2 e[f] + e[f+h]| <= 4 eps: where that second
 * difference is larger, a key lies strictly between f - h and f + h. Catmull-Rom: a cubic
 * between keys, whose fourth difference is zero: where |fourth difference of step h at f|
 * > 16 eps, a key lies strictly between f - 2 h and f + 2 h. Every such interval holds a key;
 * the fewest frames that hit every interval (as many as intervals chosen one after another
 * by their right ends: the classic greedy for stabbing intervals, which is optimal), plus
 * the two ends, bound the keys from below. need: workspace (n). */
#define SPAN_MAX 12 /* the steps h tried: 1 to SPAN_MAX */
static int keys_at_least(const double* v, int n, int d, double eps, int cubic, int* need) {
    double lim = (cubic ? 16 : 4) * eps * (1 + 1e-6); /* a margin for rounding */
    for (int f = 0; f < n; f++)
        need[f] = -1; /* the right end f: the largest left end of an interval ending there */
    for (int h = 1; h <= SPAN_MAX; h++) {
        int reach = cubic ? 2 * h : h;
        for (int f = reach; f + reach < n; f++) {
            double s2 = 0;
            for (int c = 0; c < d; c++) {
                const double* x = v + c;
                double y;
                if (cubic)
                    y = x[(size_t)(f - 2 * h) * d] - 4 * x[(size_t)(f - h) * d] +
                        6 * x[(size_t)f * d] - 4 * x[(size_t)(f + h) * d] +
                        x[(size_t)(f + 2 * h) * d];
                else
                    y = x[(size_t)(f - h) * d] - 2 * x[(size_t)f * d] + x[(size_t)(f + h) * d];
                s2 += y * y;
            }
            if (s2 > lim * lim) { /* a key in f - reach + 1 .. f + reach - 1 */
                int l = f - reach + 1, r = f + reach - 1;
                if (l > need[r]) need[r] = l;
            }
        }
    }
    int count = 2, last = -1;
    for (int r = 0; r < n; r++)
        if (need[r] > last) last = r, count++;
    return count;
}

/* A residual zigzag-mapped (as zigzag) in 32-bit integers: indices are below 2^MAX_BITS, so a
 * residual is below 3 2^24 in size and its zigzag code below 2^27. */
static inline uint32_t zigzag32(int32_t r) {
    return (uint32_t)r << 1 ^ (uint32_t)(r >> 31);
}
/* The fewest bits of a segment component's residuals (indices x[0], x[stride], ..., len of
 * them), its order and k; the header and first index excluded. The k tried for an order are
 * those around log2 of the residuals' mean (Rice's rule), all counted in one pass. The four
 * orders' residuals (order 0: from the first index; 1 and 2: fixed polynomial predictors;
 * 3: half the slope, as the writer predicts) are formed in one loop, in arrays without a branch
 * the compiler can vectorise: this count runs for every level the segment search tries. */
static size_t residual_bits(const uint32_t* x, size_t stride, int len, int* order_out, int* k_out) {
    enum { SEG = 1 << MAX_SEG_LOG2 };
    size_t best = SIZE_MAX;
    *order_out = 0, *k_out = 0;
    int m = len - 1; /* residuals 1..len-1, at z[.][0..m-1] */
    int32_t xs[SEG];
    uint32_t z[4][SEG];
    for (int r = 0; r < len; r++)
        xs[r] = (int32_t)x[(size_t)r * stride];
    if (m > 0) z[0][0] = z[1][0] = z[2][0] = z[3][0] = zigzag32(xs[1] - xs[0]);
    for (int r = 2; r < len; r++) {
        int32_t a = xs[r], b = xs[r - 1], c = xs[r - 2];
        z[0][r - 1] = zigzag32(a - xs[0]);
        z[1][r - 1] = zigzag32(a - b);
        z[2][r - 1] = zigzag32(a - 2 * b + c);
        z[3][r - 1] = zigzag32(a - (b + (b - c) / 2));
    }
    for (int order = 0; order <= 3; order++) {
        const uint32_t* zo = z[order];
        uint64_t sum = 0;
        uint32_t any = 0;
        for (int r = 0; r < m; r++)
            sum += zo[r], any |= zo[r];
        int k0 = 0;
        while (k0 < RICE_KMAX && ((uint64_t)(m > 0 ? m : 1) << (k0 + 1)) <= sum)
            k0++;
        int klo = k0 > 2 ? k0 - 2 : 0, khi = k0 + 1 <= RICE_KMAX ? k0 + 1 : RICE_KMAX,
            nk = khi - klo + 1;
        /* Without an escape the size is convex in k (each residual's quotient halves, less
         * a half, as k grows: its decrease never grows; the k + 1 bits add a line), so past
         * the first k whose next is no smaller none is smaller: the count stops there */
        uint32_t prev = UINT32_MAX;
        for (int j = 0; j < nk; j++) { /* rice_len summed, without a branch */
            uint32_t sh = (uint32_t)(klo + j), q = 0;
            if ((any >> sh) < RICE_QMAX) { /* no escape: q + 1 + k each */
                for (int r = 0; r < m; r++)
                    q += zo[r] >> sh;
                q += (uint32_t)(m > 0 ? m : 0) * (1 + sh);
                if (q >= prev) break;
                prev = q;
            } else {
                for (int r = 0; r < m; r++) {
                    uint32_t qr = zo[r] >> sh;
                    q += qr < RICE_QMAX ? qr + 1 + sh : RICE_QMAX + ESC_BITS;
                }
            }
            if (q < best) best = q, *order_out = order, *k_out = klo + j;
        }
    }
    return best;
}

/* The bits of a dense track of indices qv (n x d, every segment at level 0) in segments of
 * 2^sl frames. */
static size_t dense_cost(const uint32_t* qv, int n, int d, int bits, int sl) {
    int S = 1 << sl, nseg = (n + S - 1) / S, kp[3] = {0, 0, 0};
    size_t body = 0;
    for (int g = 0; g < nseg; g++) {
        int f0 = g * S, len = f0 + S < n ? S : n - f0;
        for (int c = 0; c < d; c++) {
            int order, k;
            body += residual_bits(qv + (size_t)f0 * d + c, (size_t)d, len, &order, &k);
            body += g == 0 ? SEG_HDR + (size_t)bits
                           : 1 + ORDER_BITS + eg_len(zigzag(k - kp[c]), 0) +
                                 eg_len(zigzag((int64_t)qv[(size_t)f0 * d + c] -
                                               (int64_t)qv[(size_t)(f0 - 1) * d + c]),
                                        k);
            kp[c] = k;
        }
    }
    return 8 + body;
}

/* The bits of the record and first index of segment g, component c of dense track t, Rice
 * parameter k: the first segment's on their own, the others' from the previous segment's
 * (level and k as their changes, the first index from the previous segment's last). */
static size_t first_bits(const track_code* t, int d, int g, int c, int k) {
    int f0 = g << t->seg_log2;
    unsigned l = t->sh[g * d + c];
    if (g == 0) return SEG_HDR + (size_t)level_width(t->bits, l);
    size_t hdr = ORDER_BITS + eg_len(zigzag((int64_t)l - t->sh[(g - 1) * d + c]), 0) +
                 eg_len(zigzag((int64_t)k - t->rk[(g - 1) * d + c]), 0);
    uint32_t p = link_predict(t->off[(size_t)(f0 - 1) * d + c], t->sh[(g - 1) * d + c], l,
                              level_top(t->bits, l));
    return hdr + eg_len(zigzag((int64_t)t->off[(size_t)f0 * d + c] - p), k);
}

/* Segment g, component c resized after the segment before changed (its last index, level or
 * k, from which this one's first index is predicted): its residuals' bits stay. */
size_t mn_clip_seg_relink(track_code* t, int d, int g, int c) {
    int k = g * d + c;
    size_t bits = t->sres[k] + first_bits(t, d, g, c, t->rk[k]);
    t->scost[k] = (uint32_t)bits;
    return bits;
}

/* The order and k of the fewest bits for segment g, component c of dense track t as its
 * indices are, and its size in bits (returned). */
size_t mn_clip_seg_code(track_code* t, int d, int n, int g, int c) {
    int S = 1 << t->seg_log2, f0 = g * S, f1 = f0 + S < n ? f0 + S : n;
    int order, k;
    size_t bits = residual_bits(t->off + (size_t)f0 * d + c, (size_t)d, f1 - f0, &order, &k);
    t->sres[g * d + c] = (uint32_t)bits;
    bits += first_bits(t, d, g, c, k);
    t->ord[g * d + c] = (uint8_t)order, t->rk[g * d + c] = (uint8_t)k;
    t->scost[g * d + c] = (uint32_t)bits;
    return bits;
}

/* Frames f0..f1-1 (in one segment), component c, of dense track t (values v, n x d): each
 * index on the grid of its segment's level, rounded from the value itself. */
void mn_clip_seg_indices(const double* v, track_code* t, int d, int f0, int f1, int c) {
    int s = t->sh[(f0 >> t->seg_log2) * d + c];
    if (s == 0) {
        for (int f = f0; f < f1; f++)
            t->off[(size_t)f * d + c] = t->qv[(size_t)f * d + c];
    } else {
        double mult = level_mult((unsigned)s);
        uint32_t top = level_top(t->bits, (unsigned)s);
        for (int f = f0; f < f1; f++) {
            double x = (v[(size_t)f * d + c] - (double)t->lo[c]) / (double)t->step[c] / mult;
            long k = round_away(x);
            if (k < 0) k = 0;
            if (k > (long)top) k = (long)top;
            t->off[(size_t)f * d + c] = (uint32_t)k;
        }
    }
}

/* Segment g, component c of dense track t (values v, n x d) at its level: every frame's index
 * on the level's grid (rounded from the values themselves), the order and k of the fewest
 * bits, and the segment component's size. Returns the size in bits. */
size_t mn_clip_seg_layout(const double* v, track_code* t, int d, int n, int g, int c) {
    int S = 1 << t->seg_log2, f0 = g * S, f1 = f0 + S < n ? f0 + S : n;
    mn_clip_seg_indices(v, t, d, f0, f1, c);
    return mn_clip_seg_code(t, d, n, g, c);
}

/* The decoded value of frame f, component c of a laid-out dense track (as the sampler
 * computes it, bit for bit). */
double mn_clip_seg_value(const track_code* t, int d, int f, int c) {
    int g = f >> t->seg_log2;
    return (double)t->lo[c] +
           (double)t->off[(size_t)f * d + c] * level_mult(t->sh[g * d + c]) * (double)t->step[c];
}

void mn_clip_code_value(const track_code* t, int d, int f, const double* rest, double* out) {
    if (t->mode == MODE_REST) {
        memcpy(out, rest, sizeof(double) * (size_t)d);
        return;
    }
    if (t->mode == MODE_CONST) {
        for (int c = 0; c < d; c++)
            out[c] = t->value[c];
        return;
    }
    if (t->mode == MODE_DENSE) {
        for (int c = 0; c < d; c++)
            out[c] = mn_clip_seg_value(t, d, f, c);
        return;
    }
    /* sparse: as clip_sample.c's track_at, operation for operation */
    const int* key = t->key;
    int nk = t->nkeys, lo = 0, hi = nk - 1;
    double frame = f;
    while (hi - lo > 1) {
        int mid = (lo + hi) >> 1;
        if ((double)key[mid] <= frame)
            lo = mid;
        else
            hi = mid;
    }
    double pa[3], pb[3], pp[3], pn[3], ta = key[lo], tb = key[hi], tp = ta, tn = tb;
#define KEY_VALUE(k, o)                                                                            \
    for (int c = 0; c < d; c++)                                                                    \
    (o)[c] = (double)t->lo[c] + (double)t->qv[(size_t)key[k] * d + c] * (double)t->step[c]
    KEY_VALUE(lo, pa);
    KEY_VALUE(hi, pb);
    if (!t->cubic) {
        double u = (frame - ta) / (tb - ta);
        for (int c = 0; c < d; c++)
            out[c] = pa[c] + u * (pb[c] - pa[c]);
        return;
    }
    if (lo > 0) {
        tp = key[lo - 1];
        KEY_VALUE(lo - 1, pp);
    } else {
        memcpy(pp, pa, sizeof pp);
    }
    if (hi + 1 < nk) {
        tn = key[hi + 1];
        KEY_VALUE(hi + 1, pn);
    } else {
        memcpy(pn, pb, sizeof pn);
    }
#undef KEY_VALUE
    cr_eval(d, tp, ta, tb, tn, pp, pa, pb, pn, frame, out);
}

void mn_clip_dense_layout(const double* v, track_code* t, int d, int n) {
    int S = 1 << t->seg_log2, nseg = (n + S - 1) / S;
    for (int g = 0; g < nseg; g++)
        for (int c = 0; c < d; c++)
            mn_clip_seg_layout(v, t, d, n, g, c);
}

/* The smallest encoding of track values v (n x d) within eps. rest: the model's value. */
void mn_clip_fit_track(const double* v, int n, int d, const double* rest, double eps, int tbits,
                       fit_work* w, fit_memo* memo, track_code* out) {
    /* rest and constant (their errors do not depend on eps: measured at the first fit) */
    fit_memo scratch = {.known = 0};
    fit_memo* k = memo ? memo : &scratch;
    if (!k->known) {
        double e = 0;
        for (int f = 0; f < n; f++)
            e = max_d(e, dist2_d(v + (size_t)f * d, rest, d));
        k->rest_e2 = e;
        for (int c = 0; c < d; c++) {
            k->mn[c] = INFINITY, k->mx[c] = -INFINITY;
            for (int f = 0; f < n; f++)
                k->mn[c] = min_d(k->mn[c], v[(size_t)f * d + c]),
                k->mx[c] = max_d(k->mx[c], v[(size_t)f * d + c]);
        }
        double vd[3];
        for (int c = 0; c < d; c++)
            vd[c] = (float)(0.5 * (k->mn[c] + k->mx[c]));
        e = 0;
        for (int f = 0; f < n; f++)
            e = max_d(e, dist2_d(v + (size_t)f * d, vd, d));
        k->const_e2 = e, k->known = 1;
        if (k == &scratch)
            for (int b = 0; b <= MAX_BITS; b++)
                k->qerr2[b] = -1;
    }
    if (k->rest_e2 <= eps * eps) {
        out->mode = MODE_REST, out->nbits = 0, out->nkeys = 0;
        return;
    }
    const double *mn = k->mn, *mx = k->mx;
    float val[3];
    for (int c = 0; c < d; c++)
        val[c] = (float)(0.5 * (mn[c] + mx[c]));
    if (k->const_e2 <= eps * eps) {
        out->mode = MODE_CONST, out->nbits = (size_t)32 * d, out->nkeys = 1;
        memcpy(out->value, val, sizeof val);
        return;
    }
    double range = 0;
    for (int c = 0; c < d; c++)
        range = max_d(range, mx[c] - mn[c]);
    /* dense: the fewest bits whose quantisation error is within eps */
    size_t hdr = (size_t)40 * d;
    out->mode = -1;
    out->nbits = SIZE_MAX;
    int b0 = (int)floor(log2(range * sqrt((double)d) / (2 * eps) + 1));
    if (b0 < 1) b0 = 1;
    for (int b = b0; b <= MAX_BITS; b++) {
        /* a bit count's quantisation and its code's size do not depend on eps: each is
         * worked out once per track */
        if (k->qerr2[b] > eps * eps) continue;
        float lo[3], st[3];
        quantise(v, n, d, b, lo, st, w->qv, w->dq);
        if (k->qerr2[b] < 0) {
            double q = 0;
            for (int f = 0; f < n; f++)
                q = max_d(q, dist2_d(w->dq + (size_t)f * d, v + (size_t)f * d, d));
            k->qerr2[b] = q;
            if (q > eps * eps) continue;
        }
        out->mode = MODE_DENSE, out->cubic = 0, out->bits = b, out->nkeys = n;
        if (!k->dense_bits[b]) {
            k->dense_bits[b] = SIZE_MAX;
            for (int sl = 3; sl <= w->seg_max_log2; sl++) {
                size_t cost = hdr + dense_cost(w->qv, n, d, b, sl);
                if (cost < k->dense_bits[b]) k->dense_bits[b] = cost, k->dense_sl[b] = sl;
            }
        }
        out->nbits = k->dense_bits[b], out->seg_log2 = k->dense_sl[b];
        memcpy(out->lo, lo, sizeof lo), memcpy(out->step, st, sizeof st);
        memcpy(out->qv, w->qv, sizeof(uint32_t) * (size_t)n * d);
        memset(out->sh, 0, (size_t)n * d);
        break;
    }
    /* sparse: split eps between quantisation and interpolation; an attempt whose keys could
     * not fit in the size to beat is not run (keys_at_least) */
    static const double split[3] = {0.25, 0.5, 0.75};
    int least[2] = {-1, -1}; /* counted when first asked */
    for (int si = 0; si < 3 && n > 2; si++) {
        int b = (int)ceil(log2(range * sqrt((double)d) / (2 * split[si] * eps) + 1));
        if (b < 1) b = 1;
        if (b > MAX_BITS) continue;
        float lo[3], st[3];
        int quantised = 0; /* when an attempt first runs */
        for (int cubic = 0; cubic <= 1; cubic++) {
            size_t per_key = (size_t)tbits + (size_t)d * b;
            size_t budget = out->nbits == SIZE_MAX ? SIZE_MAX : out->nbits;
            int max_keys = budget == SIZE_MAX ? n : (int)((budget - hdr - 16) / per_key);
            if (max_keys < 2) continue;
            if (max_keys > n) max_keys = n;
            /* an attempt that failed before at a bound at least as wide and a budget at least
             * as large is not run again (the encoder fits each track many times) */
            double* feps = memo ? &memo->eps[cubic][si] : NULL;
            int* fmax = memo ? &memo->max_keys[cubic][si] : NULL;
            if (feps && eps <= *feps && max_keys <= *fmax + *fmax / 2) continue;
            if (least[cubic] < 0) least[cubic] = keys_at_least(v, n, d, eps, cubic, w->need);
            if (least[cubic] > max_keys) continue; /* greedy_keys would give up: -1 */
            if (!quantised) quantise(v, n, d, b, lo, st, w->qv, w->dq), quantised = 1;
            int nk = greedy_keys(v, w->dq, n, d, cubic, eps, max_keys, w->key, w->err, w);
            if (nk < 0) {
                if (feps && eps > *feps) *feps = eps, *fmax = max_keys;
                continue;
            }
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
