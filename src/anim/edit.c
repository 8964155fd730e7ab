/* Edit operations on a sequence (Welman 6.1.2: "copy, cut, paste, insert and delete
 * ranges of key frames; stretch, shrink and slide a range"). Every edit is described the
 * same way, by the keys it removes (as they were) and the keys it adds, and applied by one
 * function; undoing applies the description the other way round, so any edit is exactly
 * invertible (frames and states are restored bit for bit, not recomputed). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_internal.h"

void mn_keyset_free(mn_keyset* k) {
    if (!k) return;
    free(k->frame);
    free(k->q);
    free(k->tcb);
    memset(k, 0, sizeof *k);
}

void mn_seq_edit_free(mn_seq_edit* e) {
    if (!e) return;
    mn_keyset_free(&e->removed);
    mn_keyset_free(&e->added);
}

void mn_seq_edit_invert(mn_seq_edit* e) {
    if (!e) return;
    mn_keyset t = e->removed;
    e->removed = e->added;
    e->added = t;
}

static int ks_init(mn_keyset* k, int cap, int nq) {
    memset(k, 0, sizeof *k);
    k->nq = nq;
    k->frame = malloc(sizeof(double) * (size_t)(cap + 1));
    k->q = malloc(sizeof(double) * (size_t)(cap + 1) * (size_t)(nq ? nq : 1));
    k->tcb = malloc(sizeof(double) * 3 * (size_t)(cap + 1));
    if (!k->frame || !k->q || !k->tcb) {
        mn_keyset_free(k);
        return 0;
    }
    return 1;
}

static void ks_push(mn_keyset* k, double frame, const double* q, const double* tcb) {
    k->frame[k->n] = frame;
    memcpy(k->q + (size_t)k->n * (size_t)k->nq, q, sizeof(double) * (size_t)k->nq);
    memcpy(k->tcb + 3 * k->n, tcb, sizeof(double) * 3);
    k->n++;
}

static const double* kq(const mn_seq* s, int k) {
    return s->key_q + (size_t)k * (size_t)s->m->nq;
}

/* Applies (removed -> added) to s after checking that every removed key is there as
 * recorded and that the added keys do not collide with what stays. */
static mn_status apply(mn_seq* s, const mn_keyset* removed, const mn_keyset* added) {
    size_t nq = (size_t)s->m->nq;
    for (int i = 0; i < removed->n; i++) {
        int k = mn_seq_find_key(s, removed->frame[i]);
        if (k < 0 || memcmp(kq(s, k), removed->q + (size_t)i * nq, sizeof(double) * nq) != 0 ||
            memcmp(s->key_tcb + 3 * k, removed->tcb + 3 * i, sizeof(double) * 3) != 0)
            return MN_ERR_ARG;
    }
    for (int i = 0; i < added->n; i++) {
        for (int j = 0; j < i; j++)
            if (added->frame[j] == added->frame[i]) return MN_ERR_ARG;
        int k = mn_seq_find_key(s, added->frame[i]);
        if (k < 0) continue;
        int gone = 0;
        for (int j = 0; j < removed->n && !gone; j++)
            gone = removed->frame[j] == added->frame[i];
        if (!gone) return MN_ERR_ARG;
    }
    /* room first, so that nothing fails half way */
    if (!mn_seq_reserve_keys(s, s->nkey + added->n)) return MN_ERR_NOMEM;
    for (int i = 0; i < removed->n; i++)
        mn_seq_drop_key(s, mn_seq_find_key(s, removed->frame[i]));
    for (int i = 0; i < added->n; i++)
        mn_seq_put_key(s, added->frame[i], added->q + (size_t)i * nq, added->tcb + 3 * i);
    return mn_seq_rebuild(s);
}

mn_status mn_seq_undo(mn_seq* s, const mn_seq_edit* e) {
    if (!s || !e) return MN_ERR_ARG;
    return apply(s, &e->added, &e->removed);
}

/* Adds to `removed` every key of s that an added key would land on and that is not
 * already removed (a paste over a key replaces it). */
static void take_collisions(const mn_seq* s, mn_keyset* removed, const mn_keyset* added) {
    for (int i = 0; i < added->n; i++) {
        int k = mn_seq_find_key(s, added->frame[i]);
        if (k < 0) continue;
        int have = 0;
        for (int j = 0; j < removed->n && !have; j++)
            have = removed->frame[j] == added->frame[i];
        if (!have) ks_push(removed, s->key_frame[k], kq(s, k), s->key_tcb + 3 * k);
    }
}

/* Runs an edit described by (removed, added): applies it and hands the description to e
 * (or frees it). */
static mn_status commit(mn_seq* s, mn_seq_edit* tmp, mn_seq_edit* e) {
    take_collisions(s, &tmp->removed, &tmp->added);
    mn_status st = apply(s, &tmp->removed, &tmp->added);
    if (st == MN_OK && e)
        *e = *tmp;
    else
        mn_seq_edit_free(tmp);
    return st;
}

static int range_ok(double f0, double f1) {
    return isfinite(f0) && isfinite(f1) && f1 > f0;
}

static mn_status begin(const mn_seq* s, mn_seq_edit* tmp, int extra) {
    int cap = s->nkey * 2 + extra;
    if (!ks_init(&tmp->removed, cap, s->m->nq)) return MN_ERR_NOMEM;
    if (!ks_init(&tmp->added, cap, s->m->nq)) {
        mn_keyset_free(&tmp->removed);
        return MN_ERR_NOMEM;
    }
    return MN_OK;
}

mn_status mn_seq_copy(const mn_seq* s, double f0, double f1, mn_keyset* clip) {
    if (!s || !clip || !range_ok(f0, f1)) return MN_ERR_ARG;
    if (!ks_init(clip, s->nkey, s->m->nq)) return MN_ERR_NOMEM;
    clip->span = f1 - f0;
    for (int k = 0; k < s->nkey; k++)
        if (s->key_frame[k] >= f0 && s->key_frame[k] < f1)
            ks_push(clip, s->key_frame[k] - f0, kq(s, k), s->key_tcb + 3 * k);
    return MN_OK;
}

mn_status mn_seq_cut(mn_seq* s, double f0, double f1, mn_keyset* clip, mn_seq_edit* e) {
    if (!s || !range_ok(f0, f1)) return MN_ERR_ARG;
    mn_seq_edit tmp;
    if (begin(s, &tmp, 0) != MN_OK) return MN_ERR_NOMEM;
    for (int k = 0; k < s->nkey; k++)
        if (s->key_frame[k] >= f0 && s->key_frame[k] < f1)
            ks_push(&tmp.removed, s->key_frame[k], kq(s, k), s->key_tcb + 3 * k);
    if (clip && mn_seq_copy(s, f0, f1, clip) != MN_OK) {
        mn_seq_edit_free(&tmp);
        return MN_ERR_NOMEM;
    }
    mn_status st = commit(s, &tmp, e);
    if (st != MN_OK && clip) mn_keyset_free(clip);
    return st;
}

static int clip_ok(const mn_seq* s, const mn_keyset* c) {
    if (!c || c->nq != s->m->nq || c->n < 0 || !(c->span > 0) || !isfinite(c->span)) return 0;
    for (int i = 0; i < c->n; i++)
        if (!(c->frame[i] >= 0 && c->frame[i] < c->span) ||
            mn_q_check(s->m, c->q + (size_t)i * (size_t)c->nq) != MN_OK)
            return 0;
    return 1;
}

mn_status mn_seq_paste(mn_seq* s, const mn_keyset* clip, double at, mn_seq_edit* e) {
    if (!s || !isfinite(at) || !clip_ok(s, clip)) return MN_ERR_ARG;
    mn_seq_edit tmp;
    if (begin(s, &tmp, clip->n) != MN_OK) return MN_ERR_NOMEM;
    double end = at + clip->span;
    for (int k = 0; k < s->nkey; k++)
        if (s->key_frame[k] >= at && s->key_frame[k] < end)
            ks_push(&tmp.removed, s->key_frame[k], kq(s, k), s->key_tcb + 3 * k);
    for (int i = 0; i < clip->n; i++)
        ks_push(&tmp.added, at + clip->frame[i], clip->q + (size_t)i * (size_t)clip->nq,
                clip->tcb + 3 * i);
    return commit(s, &tmp, e);
}

mn_status mn_seq_insert(mn_seq* s, const mn_keyset* clip, double at, mn_seq_edit* e) {
    if (!s || !isfinite(at) || !clip_ok(s, clip)) return MN_ERR_ARG;
    mn_seq_edit tmp;
    if (begin(s, &tmp, clip->n) != MN_OK) return MN_ERR_NOMEM;
    for (int k = 0; k < s->nkey; k++) {
        if (s->key_frame[k] < at) continue;
        ks_push(&tmp.removed, s->key_frame[k], kq(s, k), s->key_tcb + 3 * k);
        ks_push(&tmp.added, s->key_frame[k] + clip->span, kq(s, k), s->key_tcb + 3 * k);
    }
    for (int i = 0; i < clip->n; i++)
        ks_push(&tmp.added, at + clip->frame[i], clip->q + (size_t)i * (size_t)clip->nq,
                clip->tcb + 3 * i);
    return commit(s, &tmp, e);
}

mn_status mn_seq_delete(mn_seq* s, double f0, double f1, mn_seq_edit* e) {
    if (!s || !range_ok(f0, f1)) return MN_ERR_ARG;
    mn_seq_edit tmp;
    if (begin(s, &tmp, 0) != MN_OK) return MN_ERR_NOMEM;
    double span = f1 - f0;
    for (int k = 0; k < s->nkey; k++) {
        double f = s->key_frame[k];
        if (f < f0) continue;
        ks_push(&tmp.removed, f, kq(s, k), s->key_tcb + 3 * k);
        if (f >= f1) ks_push(&tmp.added, f - span, kq(s, k), s->key_tcb + 3 * k);
    }
    return commit(s, &tmp, e);
}

mn_status mn_seq_stretch(mn_seq* s, double f0, double f1, double factor, mn_seq_edit* e) {
    if (!s || !range_ok(f0, f1) || !(factor > 0) || !isfinite(factor)) return MN_ERR_ARG;
    mn_seq_edit tmp;
    if (begin(s, &tmp, 0) != MN_OK) return MN_ERR_NOMEM;
    double shift = (factor - 1) * (f1 - f0);
    for (int k = 0; k < s->nkey; k++) {
        double f = s->key_frame[k];
        if (f < f0) continue;
        double g = f < f1 ? f0 + factor * (f - f0) : f + shift;
        if (g == f) continue;
        ks_push(&tmp.removed, f, kq(s, k), s->key_tcb + 3 * k);
        ks_push(&tmp.added, g, kq(s, k), s->key_tcb + 3 * k);
    }
    return commit(s, &tmp, e);
}

mn_status mn_seq_slide(mn_seq* s, double f0, double f1, double delta, mn_seq_edit* e) {
    if (!s || !range_ok(f0, f1) || !isfinite(delta)) return MN_ERR_ARG;
    mn_seq_edit tmp;
    if (begin(s, &tmp, 0) != MN_OK) return MN_ERR_NOMEM;
    double d0 = f0 + delta, d1 = f1 + delta;
    for (int k = 0; k < s->nkey; k++) {
        double f = s->key_frame[k];
        int in = f >= f0 && f < f1;
        if (in || (f >= d0 && f < d1)) ks_push(&tmp.removed, f, kq(s, k), s->key_tcb + 3 * k);
        if (in) ks_push(&tmp.added, f + delta, kq(s, k), s->key_tcb + 3 * k);
    }
    return commit(s, &tmp, e);
}
