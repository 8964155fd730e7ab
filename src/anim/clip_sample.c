/* Compressed clips: the runtime sampler. Reads the block directly, allocates nothing and keeps
 * no state (reentrant): a constant or rest track is its value, a sparse track's keys are found
 * by bisection and interpolated (linear or Catmull-Rom), a dense track's frame is decoded from
 * the seek point before it in its segment (clip_internal.h; a cursor goes on from its last
 * sample when that is nearer). */
#include <stdlib.h>

#include "clip_internal.h"

static inline void value_at(const mn_clip* c, const clip_track* t, size_t vbase, int k,
                            double* out) {
    const uint8_t* p = c->block + t->data;
    for (int i = 0; i < t->dim; i++)
        out[i] =
            t->lo[i] +
            (double)read_bits(p, vbase + ((size_t)k * t->dim + i) * t->bits, t->bits) * t->step[i];
}

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

/* Where a dense track's decoding stands: segment g decoded up to its frame r, the next
 * residual at bit pos (from the track's data), and the last two indices of each component. */
typedef struct seg_state {
    int g, r; /* g = -1: nothing decoded */
    size_t pos;
    int64_t x[3], y[3];
} seg_state;

/* The residuals of the segment's frames after s->r up to r decoded in turn (si: the
 * segment's records). */
static inline void seg_advance(const clip_track* t, const uint8_t* p, const seg_info* si,
                               seg_state* s, int r) {
    rice_reader rd = {p, s->pos, 0, 0};
    int d = t->dim;
    for (int k = s->r + 1; k <= r; k++)
        for (int i = 0; i < d; i++) {
            int64_t v = predict_flat(si->ord[i], si->first[i], s->x[i], s->y[i]) +
                        unzigzag(rice_next(&rd, si->rk[i]));
            s->y[i] = s->x[i], s->x[i] = v;
        }
    s->r = r > s->r ? r : s->r, s->pos = rd.pos;
}

/* Frame f of a dense track into out, and frame f + 1 of the same segment into nx when nx is
 * not NULL. s: the state to go on from (a cursor's) when it is at f's segment, not past f and
 * not before the seek point at or before f; otherwise the decoding starts from that seek
 * point. s is left at f. */
static inline void dense_at(const mn_clip* c, const clip_track* t, int f, double* out, double* nx,
                            seg_state* s) {
    const uint8_t* p = c->block + t->data;
    int g = f >> t->seg_log2, r = f & ((1 << t->seg_log2) - 1), d = t->dim;
    int j = r >> SEEK_LOG2;
    const seg_info* si = &c->seg[t->seg0 + (size_t)g];
    if (s->g != g || s->r > r || s->r < (j << SEEK_LOG2)) {
        const seek_point* sp = &c->seek[(size_t)(f >> SEEK_LOG2) * c->ndense + t->seek0];
        for (int i = 0; i < d; i++)
            s->x[i] = sp->x[i], s->y[i] = sp->y[i];
        s->g = g, s->r = j << SEEK_LOG2, s->pos = sp->pos;
    }
    if (s->r < r) seg_advance(t, p, si, s, r);
    for (int i = 0; i < d; i++)
        out[i] = t->lo[i] + (double)s->x[i] * si->scale[i];
    if (!nx) return;
    rice_reader rd = {p, s->pos, 0, 0};
    for (int i = 0; i < d; i++) {
        int64_t v = predict_flat(si->ord[i], si->first[i], s->x[i], s->y[i]) +
                    unzigzag(rice_next(&rd, si->rk[i]));
        nx[i] = t->lo[i] + (double)v * si->scale[i];
    }
}

/* Track t at frame (clamped) into v; s: a dense track's decoding state (see dense_at). */
static inline void track_at(const mn_clip* c, const clip_track* t, double frame, double* v,
                            seg_state* s) {
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
                dense_at(c, t, k, a, b, s);
            } else { /* the next segment's first frame: its record, s kept at k */
                dense_at(c, t, k, a, NULL, s);
                seg_state s1 = {.g = -1};
                dense_at(c, t, k + 1, b, NULL, &s1);
            }
            for (int i = 0; i < t->dim; i++)
                a[i] += u * (b[i] - a[i]);
        } else {
            dense_at(c, t, k, a, NULL, s);
        }
        for (int i = 0; i < t->dim; i++)
            v[i] = a[i];
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

/* The state at frame into q (see mn_clip_sample); st: one decoding state per track. Tracks
 * go in batches: each one's numbers decoded, then the batch's rotation vectors turned into
 * quaternions in a loop of their own, whose iterations do not depend on one another (the
 * processor overlaps them; within the decoding loop each waited for its track's codes). */
#define BATCH 32
static void clip_sample(const mn_clip* c, double frame, double* q, seg_state* st) {
    if (frame < 0) frame = 0;
    if (frame > c->nframes - 1) frame = c->nframes - 1;
    const double* q0 = c->m->q0;
    for (int i0 = 0; i0 < c->ntrack; i0 += BATCH) {
        int i1 = i0 + BATCH < c->ntrack ? i0 + BATCH : c->ntrack, nrot = 0;
        double rv[BATCH][3];
        double* ro[BATCH];
        for (int i = i0; i < i1; i++) {
            const clip_track* t = &c->trk[i];
            double* o = q + t->qadr;
            if (t->mode == MODE_REST) {
                int w = t->kind == TK_ROT ? 4 : t->dim;
                for (int k = 0; k < w; k++)
                    o[k] = q0[t->qadr + k];
                continue;
            }
            seg_state local;
            local.g = -1;
            if (t->kind == TK_ROT) {
                track_at(c, t, frame, rv[nrot], st ? &st[i] : &local);
                ro[nrot++] = o;
                continue;
            }
            double v[3];
            track_at(c, t, frame, v, st ? &st[i] : &local);
            for (int k = 0; k < t->dim; k++)
                o[k] = v[k];
        }
        for (int r = 0; r < nrot; r++)
            rotvec_to_quat(rv[r], ro[r]);
    }
}

void mn_clip_sample_track(const mn_clip* c, int i, double frame, double* q) {
    const clip_track* t = &c->trk[i];
    double* o = q + t->qadr;
    if (t->mode == MODE_REST) {
        memcpy(o, c->m->q0 + t->qadr, sizeof(double) * (t->kind == TK_ROT ? 4 : (size_t)t->dim));
        return;
    }
    if (frame < 0) frame = 0;
    if (frame > c->nframes - 1) frame = c->nframes - 1;
    double v[3];
    seg_state local;
    local.g = -1;
    track_at(c, t, frame, v, &local);
    if (t->kind == TK_ROT)
        rotvec_to_quat(v, o);
    else
        for (int k = 0; k < t->dim; k++)
            o[k] = v[k];
}

mn_status mn_clip_sample(const mn_clip* c, double frame, double* q) {
    if (!c || !q || !isfinite(frame)) return MN_ERR_ARG;
    clip_sample(c, frame, q, NULL);
    return MN_OK;
}

/* ---- cursors ---------------------------------------------------------------------------- */

struct mn_clip_cursor {
    const mn_clip* c;
    seg_state* st; /* one per track */
};

mn_clip_cursor* mn_clip_cursor_create(const mn_clip* c) {
    if (!c) return NULL;
    mn_clip_cursor* k = calloc(1, sizeof *k);
    seg_state* st = k ? calloc((size_t)c->ntrack + 1, sizeof *st) : NULL;
    if (!st) {
        free(k);
        return NULL;
    }
    for (int i = 0; i < c->ntrack; i++)
        st[i].g = -1;
    k->c = c, k->st = st;
    return k;
}

void mn_clip_cursor_destroy(mn_clip_cursor* k) {
    if (!k) return;
    free(k->st);
    free(k);
}

mn_status mn_clip_cursor_sample(mn_clip_cursor* k, double frame, double* q) {
    if (!k || !q || !isfinite(frame)) return MN_ERR_ARG;
    clip_sample(k->c, frame, q, k->st);
    return MN_OK;
}
