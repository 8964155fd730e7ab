/* Compressed clips: the block (its layout is at the top of include/marionette/clip.h),
 * written from the encoder's codes and parsed back with every field checked, and the clip
 * objects around it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "clip_internal.h"

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

/* An Exp-Golomb code of order k (eg_len). */
static void put_eg(bitbuf* b, uint32_t z, int k) {
    uint32_t w = (z >> k) + 1;
    int nb = bits_for(w) - 1;
    mn_clip_put_bits64(b, 1ull << nb, nb + 1); /* nb zeros and a one */
    mn_clip_put_bits(b, w & ((1u << nb) - 1), nb);
    mn_clip_put_bits(b, z & ((1u << k) - 1), k);
}

/* An Exp-Golomb code of order k at bit *pos of p (avail bits): 0, 1 when it runs past the
 * block, 2 when it starts with more than 25 zeros or holds 2^26 or more (no index residual
 * does). */
static int get_eg(const uint8_t* p, size_t* pos, size_t avail, int k, uint64_t* z) {
    if (*pos >= avail) return 1;
    int nb = low_zeros(read_word(p, *pos) | 1ull << 26);
    if (nb > 25) return 2;
    size_t at = *pos + (size_t)nb + 1;
    if (at + (size_t)nb + (size_t)k > avail) return 1;
    uint64_t w = (1ull << nb | read_bits(p, at, nb)) - 1;
    at += (size_t)nb;
    *z = w << k | read_bits(p, at, k);
    *pos = at + (size_t)k;
    return *z >> 26 ? 2 : 0;
}

/* Appends a track's encoding (mode byte, header, bit-packed data, byte-aligned). */
static void write_track(bitbuf* b, const track_code* t, int d, int tbits) {
    uint8_t mode =
        (uint8_t)(t->mode | (t->cubic ? 4 : 0) | ((t->mode >= MODE_SPARSE ? t->bits - 1 : 0) << 3));
    mn_clip_put_bytes(b, &mode, 1);
    if (t->mode == MODE_CONST) {
        for (int c = 0; c < d; c++)
            mn_clip_put_f32(b, t->value[c]);
    } else if (t->mode >= MODE_SPARSE) {
        if (t->mode == MODE_SPARSE) mn_clip_put_u16(b, (unsigned)t->nkeys);
        for (int c = 0; c < d; c++) {
            uint32_t u = f32_u(t->lo[c]);
            uint8_t x[3] = {(uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
            mn_clip_put_bytes(b, x, 3);
        }
        for (int c = 0; c < d; c++) {
            uint32_t u = f32_u(t->step[c]);
            uint8_t x[2] = {(uint8_t)(u >> 16), (uint8_t)(u >> 24)};
            mn_clip_put_bytes(b, x, 2);
        }
        b->nbit = (b->nbit + 7) & ~(size_t)7;
        if (t->mode == MODE_SPARSE) {
            for (int k = 0; k < t->nkeys; k++)
                mn_clip_put_bits(b, (uint32_t)t->key[k], tbits);
            for (int k = 0; k < t->nkeys; k++)
                for (int c = 0; c < d; c++)
                    mn_clip_put_bits(b, t->qv[(size_t)t->key[k] * d + c], t->bits);
        } else {
            int n = t->nkeys, sl = t->seg_log2, S = 1 << sl, nseg = (n + S - 1) / S;
            mn_clip_put_bits(b, (uint32_t)sl, 8);
            for (int g = 0; g < nseg; g++) {
                int f0 = g * S, f1 = f0 + S < n ? f0 + S : n;
                for (int c = 0; c < d; c++) {
                    int k = g * d + c, rk = t->rk[k];
                    uint32_t x = t->off[(size_t)f0 * d + c];
                    if (g == 0) {
                        mn_clip_put_bits(b, t->sh[k], LEVEL_BITS);
                        mn_clip_put_bits(b, t->ord[k], ORDER_BITS);
                        mn_clip_put_bits(b, (uint32_t)rk, RICE_BITS);
                        mn_clip_put_bits(b, x, level_width(t->bits, t->sh[k]));
                        continue;
                    }
                    put_eg(b, zigzag((int64_t)t->sh[k] - t->sh[k - d]), 0);
                    mn_clip_put_bits(b, t->ord[k], ORDER_BITS);
                    put_eg(b, zigzag((int64_t)rk - t->rk[k - d]), 0);
                    uint32_t p = link_predict(t->off[(size_t)(f0 - 1) * d + c], t->sh[k - d],
                                              t->sh[k], level_top(t->bits, t->sh[k]));
                    put_eg(b, zigzag((int64_t)x - p), rk);
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
                        if (q < RICE_QMAX) /* q zeros, a one, the k low bits: one write */
                            mn_clip_put_bits64(b, (1 | (uint64_t)(z & ((1u << k) - 1)) << 1) << q,
                                               (int)q + 1 + k);
                        else
                            mn_clip_put_bits64(b, (uint64_t)z << RICE_QMAX, RICE_QMAX + ESC_BITS);
                    }
            }
        }
    }
    b->nbit = (b->nbit + 7) & ~(size_t)7;
}

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

/* Room for dense track t's seek points (nseg segments, one at every 4th frame of a segment
 * from its first) and segment records, after those of the tracks before it. */
static mn_status seek_reserve(mn_clip* c, clip_track* t, int nseg) {
    t->spg = t->seg_log2 > SEEK_LOG2 ? 1 << (t->seg_log2 - SEEK_LOG2) : 1;
    t->seek0 = c->nseek, t->seg0 = c->nseg;
    size_t need = c->nseek + (size_t)nseg * (size_t)t->spg;
    if (need > c->seek_cap) {
        size_t cap = c->seek_cap ? c->seek_cap : 64;
        while (cap < need)
            cap *= 2;
        seek_point* sp = realloc(c->seek, sizeof(seek_point) * cap);
        if (!sp) return MN_ERR_NOMEM;
        c->seek = sp, c->seek_cap = cap;
    }
    c->nseek = need;
    need = c->nseg + (size_t)nseg;
    if (need > c->seg_cap) {
        size_t cap = c->seg_cap ? c->seg_cap : 64;
        while (cap < need)
            cap *= 2;
        seg_info* si = realloc(c->seg, sizeof(seg_info) * cap);
        if (!si) return MN_ERR_NOMEM;
        c->seg = si, c->seg_cap = cap;
    }
    c->nseg = need;
    return MN_OK;
}

#define BAD(off, field, ...) bad(err, (size_t)(off), field, __VA_ARGS__)
/* Dense track i (t) at byte o of the block: its segment table and every segment's record
 * and residuals checked (and its seek points recorded); *op: the byte after it. */
static mn_status parse_dense(mn_clip* c, clip_track* t, int i, size_t* op, mn_error* err) {
    const uint8_t* p = c->block;
    size_t n = c->size, o = *op;
    int d = t->dim;
    if (o + 1 > n) return BAD(o, "segments", "track %d: the block ends", i);
    t->seg_log2 = p[o] & 7;
    /* 8 to 32 frames: at least one seek point per segment, and every seek point at a frame
     * that is a multiple of 2^SEEK_LOG2 (seek_frame_major) */
    if (t->seg_log2 < 3 || t->seg_log2 > MAX_SEG_LOG2 || (p[o] >> 3))
        return BAD(o, "segments", "track %d: bad segment length (8 to 32 frames)", i);
    int S = 1 << t->seg_log2, nseg = (c->nframes + S - 1) / S;
    if (seek_reserve(c, t, nseg) != MN_OK)
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "clip", "out of memory");
    size_t avail = (n - o) * 8, pos = 8;
    int64_t last[3] = {0, 0, 0};
    unsigned lvp[3] = {0, 0, 0}, rkp[3] = {0, 0, 0};
    for (int g = 0; g < nseg; g++) {
        int ord[3], rk[3];
        uint32_t top[3];
        int64_t first[3], a[3], b[3];
        for (int k = 0; k < d; k++) {
            unsigned lv;
            if (g == 0) { /* the record on its own */
                if (pos + SEG_HDR > avail) return BAD(o, "segments", "track %d: the block ends", i);
                lv = read_bits(p + o, pos, LEVEL_BITS);
                ord[k] = (int)read_bits(p + o, pos + LEVEL_BITS, ORDER_BITS);
                rk[k] = (int)read_bits(p + o, pos + LEVEL_BITS + ORDER_BITS, RICE_BITS);
                pos += SEG_HDR;
            } else { /* the changes of level and k from the previous segment's */
                uint64_t zl = 0, zk = 0;
                int el = get_eg(p + o, &pos, avail, 0, &zl), ek = 1;
                if (!el && pos + ORDER_BITS <= avail) {
                    ord[k] = (int)read_bits(p + o, pos, ORDER_BITS);
                    pos += ORDER_BITS;
                    ek = get_eg(p + o, &pos, avail, 0, &zk);
                }
                if (el == 2 || ek == 2)
                    return BAD(o, "segments",
                               "track %d: segment %d: a change of level or Rice parameter "
                               "longer than any",
                               i, g);
                if (el || ek) return BAD(o, "segments", "track %d: the block ends", i);
                int64_t l = (int64_t)lvp[k] + unzigzag(zl), r = (int64_t)rkp[k] + unzigzag(zk);
                if (l < 0 || l > MAX_LEVEL || r < 0 || r > 31)
                    return BAD(o, "segments",
                               "track %d: segment %d: a level or Rice parameter "
                               "out of range",
                               i, g);
                lv = (unsigned)l, rk[k] = (int)r;
            }
            if ((int)(lv >> 3) > t->bits || rk[k] > RICE_KMAX)
                return BAD(o, "segments",
                           "track %d: segment %d: a step coarser than the track or a "
                           "Rice parameter above %d",
                           i, g, RICE_KMAX);
            top[k] = level_top(t->bits, lv);
            if (g == 0) { /* the first index on its own */
                int fw = level_width(t->bits, lv);
                if (pos + (size_t)fw > avail)
                    return BAD(o, "segments", "track %d: the block ends", i);
                first[k] = read_bits(p + o, pos, fw);
                pos += (size_t)fw;
            } else { /* from the previous segment's last: an Exp-Golomb code of order k */
                uint64_t z = 0;
                int ez = get_eg(p + o, &pos, avail, rk[k], &z);
                if (ez == 1) return BAD(o, "segments", "track %d: the block ends", i);
                if (ez == 2)
                    return BAD(o, "segments", "track %d: segment %d starts off its grid", i, g);
                first[k] =
                    (int64_t)link_predict((uint32_t)last[k], lvp[k], lv, top[k]) + unzigzag(z);
            }
            if (first[k] < 0 || first[k] > (int64_t)top[k])
                return BAD(o, "segments", "track %d: segment %d starts off its grid", i, g);
            a[k] = b[k] = first[k];
            lvp[k] = lv, rkp[k] = (unsigned)rk[k];
            seg_info* si = &c->seg[t->seg0 + (size_t)g];
            si->scale[k] = level_mult(lv) * t->step[k];
            si->first[k] = (int32_t)first[k];
            si->ord[k] = (uint8_t)ord[k], si->rk[k] = (uint8_t)rk[k];
        }
        seek_point* s0 = &c->seek[t->seek0 + (size_t)g * t->spg];
        s0->pos = (uint32_t)pos;
        for (int k = 0; k < d; k++)
            s0->x[k] = s0->y[k] = (int32_t)first[k];
        int len = g == nseg - 1 ? c->nframes - g * S : S;
        for (int r = 1; r < len; r++) {
            for (int k = 0; k < d; k++) {
                if (pos >= avail) return BAD(o, "segments", "track %d: the block ends", i);
                uint64_t z = rice_get(p + o, &pos, rk[k]);
                if (pos > avail) return BAD(o, "segments", "track %d: the block ends", i);
                int64_t v = predict(ord[k], r, first[k], a[k], b[k]) + unzigzag(z);
                if (v < 0 || v > (int64_t)top[k])
                    return BAD(o, "segments", "track %d: frame %d leaves its segment's grid", i,
                               g * S + r);
                b[k] = a[k], a[k] = v;
            }
            if (r & ((1 << SEEK_LOG2) - 1)) continue;
            seek_point* sp = &c->seek[t->seek0 + (size_t)g * t->spg + (r >> SEEK_LOG2)];
            sp->pos = (uint32_t)pos;
            for (int k = 0; k < d; k++)
                sp->x[k] = (int32_t)a[k], sp->y[k] = (int32_t)b[k];
        }
        for (int k = 0; k < d; k++)
            last[k] = a[k];
    }
    *op = o + (pos + 7) / 8;
    return MN_OK;
}

/* The seek points reordered frame by frame: those of every dense track at the same frame
 * side by side (clip_track.seek0 becomes the track's place among them), so that a sample,
 * which reads one seek point of every dense track at one frame, reads a few neighbouring
 * cache lines instead of one far apart per track. A track's points were recorded in its
 * frames' order, one per SEEK frames (seek_reserve). */
static mn_status seek_frame_major(mn_clip* c) {
    size_t nb = ((size_t)c->nframes + (1u << SEEK_LOG2) - 1) >> SEEK_LOG2, nd = 0;
    for (int i = 0; i < c->ntrack; i++)
        nd += c->trk[i].mode == MODE_DENSE;
    c->ndense = nd;
    if (!nd) return MN_OK;
    seek_point* fm = malloc(sizeof(seek_point) * nb * nd);
    if (!fm) return MN_ERR_NOMEM;
    size_t rank = 0;
    for (int i = 0; i < c->ntrack; i++) {
        clip_track* t = &c->trk[i];
        if (t->mode != MODE_DENSE) continue;
        for (size_t b = 0; b < nb; b++)
            fm[b * nd + rank] = c->seek[t->seek0 + b];
        t->seek0 = rank++;
    }
    free(c->seek);
    c->seek = fm, c->nseek = c->seek_cap = nb * nd;
    return MN_OK;
}

mn_status mn_clip_parse(mn_clip* c, mn_error* err) {
    const uint8_t* p = c->block;
    size_t n = c->size;
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
    c->nseek = c->nseg = 0;
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
            mn_status st = parse_dense(c, t, i, &o, err);
            if (st != MN_OK) return st;
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
    if (seek_frame_major(c) != MN_OK)
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "clip", "out of memory");
    return MN_OK;
}

mn_clip* mn_clip_new(const mn_model* m) {
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
    free(c->seek);
    free(c->seg);
    free(c);
}

mn_clip* mn_clip_load(const mn_model* m, const void* bytes, size_t nbytes, mn_error* err) {
    if (!m || (!bytes && nbytes)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "clip", "no model or no bytes");
        return NULL;
    }
    mn_clip* c = mn_clip_new(m);
    uint8_t* b = c ? calloc(nbytes + PAD, 1) : NULL;
    if (!b) {
        mn_clip_destroy(c);
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "clip", "out of memory");
        return NULL;
    }
    if (nbytes) memcpy(b, bytes, nbytes);
    c->block = b, c->size = nbytes;
    if (mn_clip_parse(c, err) != MN_OK) {
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
size_t mn_clip_memory(const mn_clip* c) {
    if (!c) return 0;
    return sizeof *c + sizeof(clip_track) * (size_t)c->ntrack + c->size + PAD +
           sizeof(seek_point) * c->nseek + sizeof(seg_info) * c->nseg;
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
    o.vertices = 3;
    return o;
}

mn_status mn_clip_write(mn_clip* c, const track_code* code, int nframes, double fps) {
    bitbuf b = {0};
    mn_clip_put_bytes(&b, CLIP_MAGIC, 4);
    uint32_t nf = (uint32_t)nframes;
    uint8_t h[4] = {(uint8_t)nf, (uint8_t)(nf >> 8), (uint8_t)(nf >> 16), (uint8_t)(nf >> 24)};
    mn_clip_put_bytes(&b, h, 4);
    mn_clip_put_f32(&b, (float)fps);
    mn_clip_put_u16(&b, (unsigned)c->m->nq);
    mn_clip_put_u16(&b, (unsigned)c->ntrack);
    int tbits = bits_for((uint32_t)nframes - 1);
    uint8_t tb = (uint8_t)tbits;
    mn_clip_put_bytes(&b, &tb, 1);
    for (int i = 0; i < c->ntrack; i++)
        write_track(&b, &code[i], c->trk[i].dim, tbits);
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
    return mn_clip_parse(c, NULL);
}
