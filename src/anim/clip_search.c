/* Compressed clips, offline: the per-segment search, after the shares of the error are set.
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
 * optimised quantisation, as video coders choose their levels). */
#include <stdlib.h>

#include "clip_encode.h"

/* Writes dense track i's decoded values at frames f0..f1-1 into the states Q (n x nq). */
static void put_decoded(enc* e, int i, int f0, int f1, double* Q) {
    const clip_track* t = &e->trk[i];
    int d = t->dim, nq = e->m->nq;
    for (int f = f0; f < f1; f++) {
        double v[3];
        for (int c = 0; c < d; c++)
            v[c] = mn_clip_seg_value(&e->code[i], d, f, c);
        double* o = Q + (size_t)f * nq + t->qadr;
        if (t->kind == TK_ROT)
            rotvec_to_quat(v, o);
        else
            memcpy(o, v, sizeof(double) * (size_t)d);
    }
}

/* Whether frames f0..f1-1 of the states Q are within tol of the take's vertices V after a
 * change to track i: its joint's subtree is checked, the rest of the clip being within tol
 * (mn_clip_subtree_ok_moved; with locks, mn_clip_subtree_ok). */
static int frames_ok(enc* e, int i, const double* Q, int f0, int f1) {
    const mn_model* m = e->m;
    int j = e->trk[i].joint;
    for (int f = f0; f < f1; f++) {
        const double* qf = Q + (size_t)f * m->nq;
        if (!(e->nlk ? mn_clip_subtree_ok(e, j, f, qf, 1)
                     : mn_clip_subtree_ok_moved(e, j, f, qf + m->jnt_qadr[j])))
            return 0;
    }
    return 1;
}

/* The size of segment g + 1's component c (0 after the last segment), recounted: its first
 * index is predicted from segment g's last. */
static size_t next_cost(track_code* t, int d, int n, int g, int c) {
    return (size_t)(g + 1) << t->seg_log2 < (size_t)n ? mn_clip_seg_relink(t, d, g + 1, c) : 0;
}

/* Frame f of dense track i, component c laid out at a level (mult, top): whether the frame is
 * within tol with its rounded index or else, a frame beyond tol, with the index on the
 * value's other side, then one step beyond the nearest on its own side (*moved set: an index
 * other than the rounded one). The error at a frame is that of all its tracks together, and
 * another index of this one can offset the others' (the indices of a frame are chosen
 * jointly against the object-space error, as a vector quantiser chooses its code vector,
 * instead of each rounded on its own). The frame's states in Q are left as last tried. */
static int frame_fits(enc* e, int i, int c, int f, double mult, uint32_t top, int* moved) {
    track_code* t = &e->code[i];
    int dim = e->trk[i].dim;
    put_decoded(e, i, f, f + 1, e->Q);
    if (frames_ok(e, i, e->Q, f, f + 1)) return 1;
    uint32_t* x = &t->off[(size_t)f * dim + c];
    double want = (e->val[i][(size_t)f * dim + c] - (double)t->lo[c]) / (double)t->step[c] / mult;
    int64_t x0 = *x, sg = want > (double)x0 ? 1 : -1;
    static const int tries[2] = {1, -1};
    *moved = 1;
    for (int r = 0; r < 2; r++) {
        int64_t y = x0 + sg * tries[r];
        if (y < 0 || y > (int64_t)top) continue;
        *x = (uint32_t)y;
        put_decoded(e, i, f, f + 1, e->Q);
        if (frames_ok(e, i, e->Q, f, f + 1)) return 1;
    }
    return 0;
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
static int try_level(enc* e, int i, int g, int c, int s, int* hint, int* fail_at) {
    double* Q = e->Q;
    track_code* t = &e->code[i];
    int dim = e->trk[i].dim, n = e->n, S = 1 << t->seg_log2;
    int f0 = g * S, f1 = f0 + S < n ? f0 + S : n, k = g * dim + c, sh0 = t->sh[k];
    *fail_at = -1;
    if (s > MAX_LEVEL || (s >> 3) > t->bits) return 0;
    /* the next segment's first index is predicted from this one's last: its size changes too */
    int next = f1 < n ? k + dim : -1;
    uint32_t cost0 = t->scost[k], off0[1 << MAX_SEG_LOG2], next0 = next >= 0 ? t->scost[next] : 0;
    uint32_t res0 = t->sres[k];
    uint8_t ord0 = t->ord[k], rk0 = t->rk[k];
    for (int f = f0; f < f1; f++)
        off0[f - f0] = t->off[(size_t)f * dim + c];
    t->sh[k] = (uint8_t)s;
    /* the states of the frames visited, to put back when the try fails (the others are not
     * touched) */
    size_t w = e->trk[i].kind == TK_ROT ? 4 : (size_t)dim;
    double saved[1 << MAX_SEG_LOG2][4];
    uint32_t visited = 0;
    int ok = 0, moved = 0; /* moved: an index other than the rounded one */
    double mult = level_mult((unsigned)s), mult0 = level_mult((unsigned)sh0);
    uint32_t top = level_top(t->bits, (unsigned)s);
    /* the frame that failed the last try first, before the segment is laid out and counted: a
     * frame that fails with every index fails the try, whatever its size */
    if (*hint >= f0 && *hint < f1) {
        int f = *hint, m0 = 0;
        double keep[4];
        memcpy(keep, Q + (size_t)f * e->m->nq + e->trk[i].qadr, sizeof(double) * w);
        mn_clip_seg_indices(e->val[i], t, dim, f, f + 1, c);
        int fits = frame_fits(e, i, c, f, mult, top, &m0);
        memcpy(Q + (size_t)f * e->m->nq + e->trk[i].qadr, keep, sizeof(double) * w);
        if (!fits) {
            *fail_at = f;
            t->sh[k] = (uint8_t)sh0, t->off[(size_t)f * dim + c] = off0[f - f0];
            return 0;
        }
    }
    size_t cost = mn_clip_seg_layout(e->val[i], t, dim, n, g, c); /* before the next one's */
    if (cost + next_cost(t, dim, n, g, c) < cost0 + next0) {
        /* Each frame's outcome depends on that frame alone and one failing frame fails the
         * try, so the order of the frames does not change the result: the likeliest to fail
         * is checked first, the frame that failed the last try of this segment component
         * (*hint: the tries go from coarse to fine levels, and the same frame tends to fail
         * them in turn) or else the frame whose value moves most, then the others in order. */
        int first = f0;
        double most = -1;
        for (int f = f0; f < f1; f++) {
            double ch =
                fabs((double)t->off[(size_t)f * dim + c] * mult - (double)off0[f - f0] * mult0);
            if (ch > most) most = ch, first = f;
        }
        if (*hint >= f0 && *hint < f1) first = *hint;
        ok = 1;
        for (int r = 0; r < f1 - f0 && ok; r++) {
            int f = r == 0 ? first : f0 + r - 1 < first ? f0 + r - 1 : f0 + r;
            memcpy(saved[f - f0], Q + (size_t)f * e->m->nq + e->trk[i].qadr, sizeof(double) * w);
            visited |= 1u << (f - f0);
            ok = frame_fits(e, i, c, f, mult, top, &moved);
            if (!ok) *fail_at = *hint = f;
        }
        /* sizes counted again only when an index moved (else they are the layout's, smaller) */
        if (ok && moved) {
            cost = mn_clip_seg_code(t, dim, n, g, c);
            ok = cost + next_cost(t, dim, n, g, c) < cost0 + next0;
        }
        if (ok) {
            mn_clip_cache_frames(e, e->trk[i].joint, f0, f1);
            return 1;
        }
    }
    t->sh[k] = (uint8_t)sh0, t->scost[k] = cost0, t->sres[k] = res0, t->ord[k] = ord0;
    t->rk[k] = rk0;
    if (next >= 0) t->scost[next] = next0; /* its order and k depend on its own indices only */
    for (int f = f0; f < f1; f++) {
        t->off[(size_t)f * dim + c] = off0[f - f0];
        if (visited >> (f - f0) & 1)
            memcpy(Q + (size_t)f * e->m->nq + e->trk[i].qadr, saved[f - f0], sizeof(double) * w);
    }
    return 0;
}

/* After the search: each frame's index moved by one towards fewer bits where the frame stays
 * within tol (rate-distortion optimised quantisation, as video coders choose their levels). */
void mn_clip_index_polish(enc* e) {
    double* Q = e->Q;
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
                    /* the last frame's index predicts the next segment's first, and the
                     * next segment's record holds the change of k */
                    int next = f1 < n ? k + dim : -1;
                    uint32_t x0 = *x, cost0 = t->scost[k], next0 = next >= 0 ? t->scost[next] : 0;
                    uint32_t res0 = t->sres[k];
                    uint8_t ord0 = t->ord[k], rk0 = t->rk[k];
                    int kept = 0;
                    for (int dx = -1; dx <= 1 && !kept; dx += 2) {
                        if ((dx < 0 && x0 == 0) || (dx > 0 && x0 >= top)) continue;
                        *x = x0 + (uint32_t)dx;
                        size_t cost = mn_clip_seg_code(t, dim, n, g, c);
                        cost += next >= 0 ? mn_clip_seg_relink(t, dim, g + 1, c) : 0;
                        if (cost < cost0 + next0) {
                            put_decoded(e, i, f, f + 1, Q);
                            if (frames_ok(e, i, Q, f, f + 1)) {
                                mn_clip_cache_frames(e, e->trk[i].joint, f, f + 1);
                                kept = 1;
                                break;
                            }
                        }
                        *x = x0;
                        t->scost[k] = cost0, t->sres[k] = res0, t->ord[k] = ord0;
                        t->rk[k] = rk0;
                        if (next >= 0) t->scost[next] = next0;
                        put_decoded(e, i, f, f + 1, Q);
                    }
                }
            }
    }
}

/* ver: per joint, per frame, the count of accepted steps when a track that moves the check of
 * that joint's subtree last changed there: its own tracks, its subtree's and its
 * ancestors'. A step of joint's tracks at frames f0..f1-1 is recorded as clock on the joints
 * whose checks it moves, joint's subtree and ancestors. */
static void touch(const mn_model* m, uint32_t* ver, int n, int joint, int f0, int f1,
                  uint32_t clock) {
    for (int a = joint, end = m->jnt_subtree_end[joint]; a < end; a++)
        for (int f = f0; f < f1; f++)
            ver[(size_t)a * n + f] = clock;
    for (int a = m->jnt_parent[joint]; a >= 0; a = m->jnt_parent[a])
        for (int f = f0; f < f1; f++)
            ver[(size_t)a * n + f] = clock;
}

/* The latest change at frames f0..f1-1 that can move the check of joint's subtree. */
static uint32_t latest(const uint32_t* ver, int n, int joint, int f0, int f1) {
    uint32_t v = 0;
    for (int f = f0; f < f1; f++)
        v = ver[(size_t)joint * n + f] > v ? ver[(size_t)joint * n + f] : v;
    return v;
}

/* A try's outcome depends on the states at its segment's frames of the tracks that move its
 * joint's subtree (the joint's, its subtree's and its ancestors': the check is on the
 * subtree, below the ancestors' frames, mn_clip_subtree_ok) and on the track's segments on
 * either side (the previous one's last index and level, the next one's size); a segment
 * component that took no step is skipped in the next round when none of that changed since
 * (the same tries would fail again: the same clip where it is checked). A step of one leg's
 * track leaves the other leg's and the arms' tries as they were. */
/* Per segment component, per jump: the frame at which its last try failed with every index
 * it may take there (-1: none, the try failed on size or was kept), and the count of
 * accepted steps then plus one. Such a try fails again while the states that move that
 * frame's check are as they were: each frame's outcome depends on that frame alone, the
 * level's indices are rounded from the take's values, and one failing frame fails the try
 * whatever the size and the other frames. */
typedef struct seg_memo {
    uint32_t stamp[9];
    int8_t at[9];
} seg_memo;

void mn_clip_segment_search(enc* e) {
    static const int jumps[9] = {24, 16, 12, 8, 6, 4, 3, 2, 1};
    int n = e->n;
    const mn_model* m = e->m;
    uint32_t clock = 0, *ver = calloc((size_t)n * (size_t)m->njoint + 1, sizeof(uint32_t));
    uint32_t** failed = calloc((size_t)e->nt + 1, sizeof(uint32_t*));
    seg_memo** memo = calloc((size_t)e->nt + 1, sizeof(seg_memo*));
    for (int i = 0; i < e->nt && ver && failed && memo; i++)
        if (e->code[i].mode == MODE_DENSE) {
            /* one entry per segment component */
            int S = 1 << e->code[i].seg_log2;
            size_t nsc = (size_t)((n + S - 1) / S) * (size_t)e->trk[i].dim + 1;
            failed[i] = calloc(nsc, sizeof(uint32_t));
            memo[i] = calloc(nsc, sizeof(seg_memo));
        }
    for (int pass = 0, changed = 1; changed && pass < 64; pass++) {
        changed = 0;
        for (int i = 0; i < e->nt; i++) {
            track_code* t = &e->code[i];
            if (t->mode != MODE_DENSE) continue;
            int dim = e->trk[i].dim, S = 1 << t->seg_log2, nseg = (n + S - 1) / S;
            for (int g = 0; g < nseg; g++) {
                int f0 = g * S, f1 = f0 + S < n ? f0 + S : n;
                int lo = f0 > 0 ? f0 - 1 : 0, hi = f1 + S < n ? f1 + S : n, jt = e->trk[i].joint;
                for (int c = 0; c < dim; c++) {
                    uint32_t* fl = failed && failed[i] ? &failed[i][g * dim + c] : NULL;
                    /* failed[.]: 1 + the latest change around it when it last took no step */
                    if (fl && *fl && *fl == 1 + latest(ver, n, jt, lo, hi)) continue;
                    seg_memo* mo = memo && memo[i] ? &memo[i][g * dim + c] : NULL;
                    int took = 0, hint = -1, sh = t->sh[g * dim + c];
                    for (int j = 0; j < 9 && !took; j++) {
                        if (mo && mo->stamp[j] &&
                            latest(ver, n, jt, f0 + mo->at[j], f0 + mo->at[j] + 1) < mo->stamp[j])
                            continue; /* fails again at mo->at[j] */
                        int at;
                        if (mo && mo->stamp[j]) hint = f0 + mo->at[j]; /* failed there last */
                        took = try_level(e, i, g, c, sh + jumps[j], &hint, &at);
                        if (mo)
                            mo->stamp[j] = at >= 0 ? clock + 1 : 0, mo->at[j] = (int8_t)(at - f0);
                    }
                    if (took) {
                        changed = 1, clock++;
                        if (ver) touch(m, ver, n, jt, f0, f1, clock);
                    } else if (fl) {
                        *fl = 1 + latest(ver, n, jt, lo, hi);
                    }
                }
            }
        }
    }
    for (int i = 0; i < e->nt && failed; i++)
        free(failed[i]);
    for (int i = 0; i < e->nt && memo; i++)
        free(memo[i]);
    free(failed), free(memo), free(ver);
}
