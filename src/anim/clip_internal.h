/* Private parts of compressed clips (include/marionette/clip.h), shared by the files of the
 * clip: clip_bits.c (bit I/O), clip_format.c (the block: written and parsed), clip_sample.c
 * (the runtime sampler), clip_measure.c (the virtual-vertex error) and the offline encoder
 * (clip_encode.h). */
#ifndef MN_ANIM_CLIP_INTERNAL_H
#define MN_ANIM_CLIP_INTERNAL_H

#include <marionette/clip.h>

#include <math.h>

#include "clip_bits.h"
#include "core/sincos_inline.h"

enum { TK_SCALAR = 0, TK_VEC3, TK_ROT };
enum { MODE_REST = 0, MODE_CONST, MODE_SPARSE, MODE_DENSE };
/* version 4: segments one after the other (no offset table), a segment's record and first
 * index coded from the previous segment's */
#define CLIP_MAGIC "MNC4"
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
#define RICE_KMAX 26

static inline double level_mult(unsigned lv) {
    static const double pow2_minus3[16] = {0x1p-3, 0x1p-2, 0x1p-1, 0x1p0, 0x1p1, 0x1p2,
                                           0x1p3,  0x1p4,  0x1p5,  0x1p6, 0x1p7, 0x1p8,
                                           0x1p9,  0x1p10, 0x1p11, 0x1p12};
    return (double)(8 + (lv & 7)) * pow2_minus3[lv >> 3 & 15];
}

typedef struct clip_track {
    int kind, dim, qadr, joint;
    /* decoded header */
    int mode, cubic, bits, nkeys;
    double lo[3], step[3], value[3];
    size_t data;  /* byte offset of the bit-packed part in the block */
    int seg_log2; /* dense: segment length (log2) */
    size_t seek0; /* dense: while the block is parsed, its first seek point; then its place
                     among the dense tracks (mn_clip.seek) */
    int spg;
    size_t seg0; /* dense: its first segment in the clip's table of segments */
} clip_track;

/* A seek point of a dense track (built when the block is parsed, not stored in it): the
 * decoder's state at frame 4 j of a segment (j = 0: its first frame, after its records), so
 * that sampling a frame goes on from the nearest one at or before it instead of from the
 * segment's start. */
#define SEEK_LOG2 2
typedef struct seek_point {
    uint32_t pos;       /* the next residual's bit offset (from the track's data) */
    int32_t x[3], y[3]; /* the frame's indices and the previous frame's, per component */
} seek_point;

/* A dense segment's records as decoded when the block is parsed (beside the seek points):
 * per component the value of one index step (the level's multiple times the track's step:
 * exact in double, so low + x scale is bit for bit low + x multiple step), the first
 * frame's index, the predictor order and the Rice parameter. */
typedef struct seg_info {
    double scale[3];
    int32_t first[3];
    uint8_t ord[3], rk[3];
} seg_info;

struct mn_clip {
    const mn_model* m;
    int nframes, ntrack, tbits;
    double fps;
    clip_track* trk;
    uint8_t* block; /* size + PAD zero bytes */
    size_t size;
    /* the dense tracks' seek points, frame by frame: the one of the ndense tracks' k-th
     * (clip_track.seek0) at frame f, index (f >> SEEK_LOG2) ndense + k */
    seek_point* seek;
    size_t nseek, seek_cap, ndense;
    seg_info* seg; /* the dense tracks' segments (clip_track.seg0) */
    size_t nseg, seg_cap;
};

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

static inline void rotvec_to_quat(const double* r, double* q) {
    double th2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    double w, k;
    if (th2 <= 2.4674011002723395) { /* angle at most pi/2: (cos, sin / angle) of the half
                                         angle from its square, no square root or division */
        mn_sinc_cos_sq(0.25 * th2, &k, &w);
        k *= 0.5;
    } else { /* (cos, sin) of the half angle: unit to rounding, no normalising needed */
        double th = sqrt(th2), s, c;
        mn_sincos_inline(0.5 * th, &s, &c); /* mn_sincos's numbers, without the call */
        w = c, k = s / th;
    }
    q[0] = w, q[1] = k * r[0], q[2] = k * r[1], q[3] = k * r[2];
}

/* A track's encoding, as the encoder chose it and the format writes it. */
typedef struct track_code {
    int mode, cubic, bits, nkeys;
    float lo[3], step[3], value[3];
    int* key;     /* nkeys frame indices (sparse) */
    uint32_t* qv; /* quantised values: nframes x dim (all frames; keys pick theirs) */
    size_t nbits; /* encoded size in bits (without the mode byte) */
    int seg_log2; /* dense: segments of 2^seg_log2 frames */
    /* dense, per segment g and component c (index g d + c): the level of the segment's step
     * (level_mult(sh) steps of the track's grid), its predictor order and Rice parameter, and
     * its size in bits, of which sres its residuals'; off: every frame's index on its
     * segment's grid (n x d) */
    uint8_t *sh, *ord, *rk;
    uint32_t *scost, *sres, *off;
} track_code;

/* Dense tracks are cut into segments of 2^sl frames (8 to 32; the last may be shorter), one
 * after the other (random access per segment from the seek points the parser records, as
 * the Animation Compression Library's segments). A segment's component c stores the level of
 * its step (7 bits: the track's step times level_mult), its predictor order (2 bits) and Rice
 * parameter k (5 bits), its first frame's index on the level's grid (the first segment: in
 * level_width bits; the others: predicted from the previous segment's last index,
 * link_predict, the residual as an Exp-Golomb code of order k, eg_len), then the residuals of
 * its other frames, frame by frame, each Rice-coded: the index minus its prediction from the
 * frames decoded before it in the segment, order 0 the first frame, order 1 the previous
 * frame, order 2 the line through the two previous ones (the fixed polynomial predictors of
 * Robinson's SHORTEN, 1994, and FLAC), order 3 the previous frame plus half the last
 * difference (motion that slows), zigzag-mapped to 0, 1, 2, ... (0, -1, 1, -2, ...) and
 * written as Rice's code (Rice, JPL publication 79-22, 1979; Golomb 1966 with m = 2^k, as
 * SHORTEN and FLAC): the quotient z >> k in unary (q zeros and a one), then the k low bits. A
 * quotient of RICE_QMAX or more is RICE_QMAX zeros and z in ESC_BITS bits. Order and k are
 * chosen per segment and component for the fewest bits. */
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
/* A segment's first index after the first segment: its residual from link_predict,
 * zigzag-mapped, as an Exp-Golomb code of order k (the segment component's Rice parameter):
 * w = (z >> k) + 1 of nb + 1 bits as nb zeros, a one and w's nb low bits, then z's k low
 * bits. Unlike a Rice code its length grows with the logarithm of z, so a jump between
 * segments costs a few bits more, never an escape. */
static inline size_t eg_len(uint32_t z, int k) {
    int nb = bits_for((z >> k) + 1) - 1;
    return 2 * (size_t)nb + 1 + (size_t)k;
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

/* The prediction of a segment's first index on the grid of level l (largest index top) from
 * the previous segment's last, x on the grid of level lp: the same value, rounded to the
 * nearest index (exact integers: the levels' multiples are (8 + m) 2^s / 8). */
static inline uint32_t link_predict(uint32_t x, unsigned lp, unsigned l, uint32_t top) {
    uint64_t num = (uint64_t)x * ((uint64_t)(8 + (lp & 7)) << (lp >> 3 & 15));
    uint64_t den = (uint64_t)(8 + (l & 7)) << (l >> 3 & 15);
    uint64_t p = (num + den / 2) / den;
    return p > top ? top : (uint32_t)p;
}

/* The prediction of frame r (r >= 1) of a segment from the frames decoded before it: first,
 * the segment's first index; a and b, the previous two (b the older; at r = 1 both first). */
static inline int64_t predict(int order, int r, int64_t first, int64_t a, int64_t b) {
    if (order == 0) return first;
    if (order == 1 || r == 1) return a;
    if (order == 2) return 2 * a - b;
    return a + (a - b) / 2; /* 3: half the slope, for motion that slows */
}

/* predict without a branch, for the sampler (a component's order changes from segment to
 * segment, so a branch on it would often be mispredicted): at r = 1 the decoder holds the
 * first index as both previous frames (a = b), where every order but 0 gives a, as predict
 * does. (a - b) / 2 rounds towards zero, as C's division. */
static inline int64_t predict_flat(int order, int64_t first, int64_t a, int64_t b) {
    int64_t d = a - b, half = (d - (d >> 63)) >> 1;
    int64_t step = order == 2 ? d : order == 3 ? half : 0;
    return order == 0 ? first : a + step;
}

/* clip_format.c */
mn_clip* mn_clip_new(const mn_model* m); /* no block yet */
/* The block of codes (one per track) of a clip of nframes at fps, parsed into c (its bytes
 * replaced). */
mn_status mn_clip_write(mn_clip* c, const track_code* code, int nframes, double fps);
mn_status mn_clip_parse(mn_clip* c, mn_error* err);

/* clip_sample.c: track i alone at frame into its numbers of q (as mn_clip_sample). */
void mn_clip_sample_track(const mn_clip* c, int i, double frame, double* q);

/* clip_measure.c: virtual vertices (nv = 2 or 3 points x 3 numbers per joint) */
void mn_clip_vertices(const mn_model* m, const mn_data* d, double shell, int nv, double* out);
/* The take's vertices at every frame (nframes x njoint x 3 nv), NULL when out of memory. */
double* mn_clip_take_vertices(const mn_model* m, mn_data* d, const double* q, int n, double shell,
                              int nv);
/* The error of clip c against the take's vertices V, and where it is (either may be NULL);
 * the measure stops after the first frame where it exceeds stop (INFINITY: every frame). */
double mn_clip_error_v(const mn_clip* c, mn_data* d, const double* V, double shell, int nv,
                       double* tmp, int* wj, int* wf, double stop);

#endif
