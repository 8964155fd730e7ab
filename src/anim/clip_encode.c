/* Compressed clips, offline: mn_clip_compress as a list of stages (as the Animation Compression
 * Library's compress.transform.impl.h and ozz-animation's animation_optimizer.cc, kept apart
 * from the runtime sampler, clip_sample.c). Each stage reads and writes the encoder's state
 * (clip_encode.h) and returns a status:
 *
 *   values    every track's numbers at every frame, and at rest;
 *   shares    the guaranteed split of the error between the tracks;
 *   scale     all shares widened together, the largest factor that keeps the bound;
 *   widen     each track's own share widened in turn;
 *   segments  each dense segment's step coarsened against the error over its frames, then
 *             each index moved by one where that saves bits (clip_search.c);
 *   verify    the error measured over the whole take, and the stats.
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
 * space over the whole take stays within tol. */
#include <stdlib.h>

#include "clip_encode.h"

/* Track i's segments laid out from its code (a dense track's; the others have none). */
static void layout(enc* e, int i) {
    if (e->code[i].mode == MODE_DENSE)
        mn_clip_dense_layout(e->val[i], &e->code[i], e->trk[i].dim, e->n);
}

/* Track i fitted within its share times scale, and laid out (only a refitted track's layout
 * changes, so the block of the others' is reused as it is). */
static void fit(enc* e, int i, double scale) {
    mn_clip_fit_track(e->val[i], e->n, e->trk[i].dim, e->rest[i], e->base[i] * e->mult[i] * scale,
                      e->tbits, &e->w, &e->memo[i], &e->code[i]);
    layout(e, i);
}

/* The block of the current codes (every one laid out) into the clip (its bytes replaced). */
static mn_status assemble(enc* e) {
    return mn_clip_write(e->c, e->code, e->n, e->fps);
}

/* The clip's error over the whole take (and where, into e->wj, e->wf when `where`). */
static double clip_error(enc* e, int where) {
    return mn_clip_error_v(e->c, e->d, e->V, e->opt.shell, e->nv, e->tmp, where ? &e->wj : NULL,
                           where ? &e->wf : NULL, INFINITY);
}

/* Whether the clip is within tol over the whole take (measured up to the first frame beyond). */
static int clip_within(enc* e) {
    return mn_clip_error_v(e->c, e->d, e->V, e->opt.shell, e->nv, e->tmp, NULL, NULL, e->opt.tol) <=
           e->opt.tol;
}

/* The caches of the current clip (its block assembled) at every frame. */
static void cache_clip(enc* e) {
    const mn_model* m = e->m;
    for (int f = 0; f < e->n; f++)
        mn_clip_sample(e->c, f, e->Q + (size_t)f * m->nq);
    for (int j = 0; j < m->njoint; j = m->jnt_subtree_end[j]) /* every root */
        mn_clip_cache_frames(e, j, 0, e->n);
}

/* Whether the clip with track i's new code is within tol: track i's states at every frame
 * (from its code, as the sampler would give them: mn_clip_code_value) in place of the cached
 * ones, its joint's subtree checked (mn_clip_subtree_ok). qi: workspace (n x nq), left
 * holding the new states. */
static int track_ok(enc* e, int i, double* qi) {
    const mn_model* m = e->m;
    const clip_track* t = &e->trk[i];
    memcpy(qi, e->Q, sizeof(double) * (size_t)e->n * (size_t)m->nq);
    for (int f = 0; f < e->n; f++) {
        double* o = qi + (size_t)f * m->nq + t->qadr;
        if (e->code[i].mode == MODE_REST) {
            memcpy(o, m->q0 + t->qadr, sizeof(double) * (t->kind == TK_ROT ? 4 : (size_t)t->dim));
            continue;
        }
        double v[3];
        mn_clip_code_value(&e->code[i], t->dim, f, e->rest[i], v);
        if (t->kind == TK_ROT)
            rotvec_to_quat(v, o);
        else
            memcpy(o, v, sizeof(double) * (size_t)t->dim);
    }
    for (int f = 0; f < e->n; f++)
        if (!mn_clip_subtree_ok(e, e->trk[i].joint, f, qi + (size_t)f * m->nq, 0)) return 0;
    return 1;
}

/* ---- stages ----------------------------------------------------------------------------- */

/* values: the workspace, every track's numbers at every frame, and the take's vertices. */
static mn_status stage_values(enc* e, mn_error* err) {
    (void)err;
    const mn_model* m = e->m;
    int nframes = e->n;
    size_t n3 = (size_t)nframes * 3;
    e->val = calloc((size_t)e->nt + 1, sizeof(double*));
    e->rest = calloc((size_t)e->nt + 1, sizeof(double*));
    e->base = calloc((size_t)e->nt + 1, sizeof(double));
    e->mult = calloc((size_t)e->nt + 1, sizeof(double));
    e->code = calloc((size_t)e->nt + 1, sizeof(track_code));
    e->memo = calloc((size_t)e->nt + 1, sizeof(fit_memo));
    e->w.dq = malloc(sizeof(double) * n3);
    e->w.err = malloc(sizeof(double) * (size_t)nframes);
    e->w.qv = malloc(sizeof(uint32_t) * n3);
    e->w.key = malloc(sizeof(int) * (size_t)nframes);
    size_t tree = 2; /* twice the leaves: a power of two at least the blocks (clip_fit.c) */
    while (tree < 2 * ((size_t)nframes / 16 + 1))
        tree <<= 1;
    e->w.tmax = malloc(sizeof(double) * tree);
    e->w.tidx = malloc(sizeof(int) * tree);
    e->w.bad = malloc((size_t)nframes);
    e->w.need = malloc(sizeof(int) * (size_t)nframes);

    e->V = mn_clip_take_vertices(m, e->d, e->q, nframes, e->opt.shell, e->nv);
    e->tmp = malloc(sizeof(double) * (size_t)m->njoint * 3 * e->nv + 1);
    e->Q = malloc(sizeof(double) * (size_t)nframes * (size_t)m->nq);
    e->X = malloc(sizeof(mn_xform) * (size_t)nframes * (size_t)m->njoint + 1);
    e->vhint = calloc((size_t)m->njoint + 1, sizeof(int));
    if (!e->Q || !e->X || !e->val || !e->rest || !e->base || !e->mult || !e->code || !e->memo ||
        !e->w.dq || !e->w.err || !e->w.qv || !e->w.key || !e->w.tmax || !e->w.tidx || !e->w.bad ||
        !e->w.need || !e->V || !e->tmp || !e->vhint)
        return MN_ERR_NOMEM;
    for (int i = 0; i < e->nt; i++) {
        int dim = e->trk[i].dim;
        track_code* t = &e->code[i];
        e->val[i] = malloc(sizeof(double) * (size_t)nframes * dim);
        e->rest[i] = malloc(sizeof(double) * 3);
        t->key = malloc(sizeof(int) * (size_t)nframes);
        t->qv = malloc(sizeof(uint32_t) * (size_t)nframes * dim);
        t->off = malloc(sizeof(uint32_t) * (size_t)nframes * dim);
        t->scost = calloc((size_t)nframes * dim, sizeof(uint32_t));
        t->sres = calloc((size_t)nframes * dim, sizeof(uint32_t));
        t->sh = calloc((size_t)nframes * dim, 1);
        t->ord = calloc((size_t)nframes * dim, 1);
        t->rk = calloc((size_t)nframes * dim, 1);
        if (!e->val[i] || !e->rest[i] || !t->key || !t->qv || !t->off || !t->scost || !t->sres ||
            !t->sh || !t->ord || !t->rk)
            return MN_ERR_NOMEM;
        mn_clip_track_values(&e->trk[i], e->q, m->nq, nframes, e->val[i]);
        mn_clip_track_values(&e->trk[i], m->q0, m->nq, 1, e->rest[i]);
        e->mult[i] = 1;
        for (int k = 0; k < 6; k++)
            e->memo[i].eps[k / 3][k % 3] = -1;
        for (int b = 0; b <= MAX_BITS; b++)
            e->memo[i].qerr2[b] = -1;
    }
    return mn_clip_lock_points(e);
}

/* shares: the guaranteed split: reach R_j of every joint (bone lengths down to its farthest
 * joint, plus the shell) and the most tracks on a path from a root. */
static mn_status stage_shares(enc* e, mn_error* err) {
    (void)err;
    const mn_model* m = e->m;
    double* reach = calloc((size_t)m->njoint + 1, sizeof(double));
    int* ntr = calloc((size_t)m->njoint + 1, sizeof(int));
    if (!reach || !ntr) {
        free(reach), free(ntr);
        return MN_ERR_NOMEM;
    }
    int H = 1;
    for (int j = 0; j < m->njoint; j++) {
        int p = m->jnt_parent[j], ty = m->jnt_type[j];
        ntr[j] = (p >= 0 ? ntr[p] : 0) + (ty == MN_JOINT_FREE ? 2 : ty != MN_JOINT_FIXED);
        if (ntr[j] > H) H = ntr[j];
    }
    /* reach[j]: the longest chain of bones below j (children come after their parent, so
     * walking backwards finishes every child before its parent) */
    for (int j = m->njoint - 1; j >= 0; j--) {
        int p = m->jnt_parent[j];
        if (p < 0) continue;
        double len = mn_vec3_norm(m->jnt_offset[j]);
        if (m->jnt_type[j] == MN_JOINT_SLIDE) { /* its travel lengthens the chain */
            double tr = 0;
            for (int f = 0; f < e->n; f++)
                tr = fmax(tr, fabs(e->q[(size_t)f * m->nq + m->jnt_qadr[j]]));
            len += tr;
        }
        if (len + reach[j] > reach[p]) reach[p] = len + reach[j];
    }
    for (int j = 0; j < m->njoint; j++)
        reach[j] += e->opt.shell;
    for (int i = 0; i < e->nt; i++) {
        const clip_track* t = &e->trk[i];
        /* a lock below the track bounds it by its own tol (its point's distance added to
         * the reach) */
        double tol = e->opt.tol, r = reach[t->joint];
        for (int k = 0; k < e->nlk; k++)
            if (mn_model_is_ancestor(m, t->joint, e->lk[k].joint)) {
                tol = fmin(tol, e->lk[k].tol);
                r = fmax(r, mn_vec3_norm(e->lk[k].point) + reach[t->joint]);
            }
        double w = tol / H;
        int linear =
            t->kind == TK_VEC3 || (t->kind == TK_SCALAR && m->jnt_type[t->joint] == MN_JOINT_SLIDE);
        e->base[i] = linear ? w : w / fmax(r, 1e-300);
    }
    free(reach), free(ntr);
    return MN_OK;
}

/* scale: all shares widened together, the largest factor (bisection on a log scale) whose
 * clip is within tol. */
static mn_status stage_scale(enc* e, mn_error* err) {
    mn_status st;
    double good = 0;
    int at_good = 0; /* the codes are those at good (no refit at the end) */
    for (double s = 1; s > 1e-3; s *= 0.5) {
        for (int i = 0; i < e->nt; i++)
            fit(e, i, s);
        if ((st = assemble(e)) != MN_OK) return st;
        e->errv = clip_error(e, 1);
        if (e->errv <= e->opt.tol && mn_clip_locks_excess(e) <= 1) {
            good = s, at_good = 1;
            break;
        }
    }
    if (good == 0)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "tol",
                            "the tolerance %g is too small to quantise this take", e->opt.tol);
    double bad = 64 * good;
    for (int it = 0; it < 7; it++) {
        double s = sqrt(good * bad);
        for (int i = 0; i < e->nt; i++)
            fit(e, i, s);
        if ((st = assemble(e)) != MN_OK) return st;
        at_good = clip_within(e) && mn_clip_locks_excess(e) <= 1;
        if (at_good)
            good = s;
        else
            bad = s;
    }
    for (int i = 0; i < e->nt && !at_good; i++)
        fit(e, i, good);
    e->good = good;
    return MN_OK;
}

/* widen: each track's share widened in turn, kept when its code gets smaller and the clip
 * stays within tol. */
static mn_status stage_widen(enc* e, mn_error* err) {
    (void)err;
    static const double widen[6] = {2, 1.5, 1.5, 1.25, 1.25, 1.1};
    int nframes = e->n;
    size_t nq = (size_t)e->m->nq;
    mn_status st = assemble(e); /* the codes at the common factor: within tol */
    if (st != MN_OK) return st;
    cache_clip(e);
    double* qi = malloc(sizeof(double) * (size_t)nframes * nq);
    /* the old code's arrays are reused by the new fit: copies to go back to */
    int* key = malloc(sizeof(int) * (size_t)nframes);
    uint32_t* qv = malloc(sizeof(uint32_t) * (size_t)nframes * 3);
    if (!qi || !key || !qv) st = MN_ERR_NOMEM;
    for (int pass = 0; pass < 6 && st == MN_OK; pass++) {
        for (int i = 0; i < e->nt && st == MN_OK; i++) {
            if (e->code[i].mode == MODE_REST) continue;
            track_code keep = e->code[i];
            size_t before = keep.nbits;
            memcpy(key, keep.key, sizeof(int) * (size_t)nframes);
            memcpy(qv, keep.qv, sizeof(uint32_t) * (size_t)nframes * e->trk[i].dim);
            double old = e->mult[i];
            e->mult[i] *= widen[pass];
            fit(e, i, e->good);
            int ok = e->code[i].nbits < before;
            if (ok) ok = track_ok(e, i, qi);
            if (st == MN_OK && ok) { /* the caches follow */
                const clip_track* t = &e->trk[i];
                size_t w = t->kind == TK_ROT ? 4 : (size_t)t->dim;
                for (int f = 0; f < nframes; f++)
                    memcpy(e->Q + (size_t)f * nq + t->qadr, qi + (size_t)f * nq + t->qadr,
                           sizeof(double) * w);
                mn_clip_cache_frames(e, t->joint, 0, nframes);
            } else if (st == MN_OK) { /* back to the kept code (its arrays are the same) */
                e->mult[i] = old;
                e->code[i] = keep;
                memcpy(e->code[i].key, key, sizeof(int) * (size_t)nframes);
                memcpy(e->code[i].qv, qv, sizeof(uint32_t) * (size_t)nframes * e->trk[i].dim);
                layout(e, i); /* the layout arrays were the new fit's */
            }
        }
    }
    free(qi), free(key), free(qv);
    return st == MN_OK ? assemble(e) : st;
}

/* segments: the per-segment search and the index polish, on the clip's states at every
 * frame (clip_search.c). */
static mn_status stage_segments(enc* e, mn_error* err) {
    (void)err;
    cache_clip(e); /* the widened clip (the same states: kept current above; every track laid
                      out, and the search keeps the layouts current itself) */
    mn_clip_segment_search(e);
    mn_clip_index_polish(e);
    return assemble(e);
}

/* verify: the error over the whole take, measured (every accepted step was measured, so this
 * cannot fail). */
static mn_status stage_verify(enc* e, mn_error* err) {
    e->errv = clip_error(e, 1);
    if (e->errv > e->opt.tol || mn_clip_locks_excess(e) > 1)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "tol", "the clip misses the tolerance");
    return MN_OK;
}

typedef struct clip_stage {
    const char* name;
    mn_status (*run)(enc* e, mn_error* err);
} clip_stage;

static const clip_stage stages[] = {
    {"values", stage_values}, {"shares", stage_shares},     {"scale", stage_scale},
    {"widen", stage_widen},   {"segments", stage_segments}, {"verify", stage_verify},
};

/* ---- the driver ------------------------------------------------------------------------- */

static void enc_free(enc* e) {
    if (e->val)
        for (int i = 0; i < e->nt; i++)
            free(e->val[i]), free(e->rest[i]);
    if (e->code)
        for (int i = 0; i < e->nt; i++)
            free(e->code[i].key), free(e->code[i].qv), free(e->code[i].sh), free(e->code[i].ord),
                free(e->code[i].rk), free(e->code[i].scost), free(e->code[i].sres),
                free(e->code[i].off);
    free(e->val), free(e->rest), free(e->base), free(e->mult), free(e->code), free(e->memo);
    free(e->w.dq), free(e->w.err), free(e->w.qv), free(e->w.key);
    free(e->w.tmax), free(e->w.tidx), free(e->w.bad), free(e->w.need);
    free(e->V), free(e->tmp), free(e->Q), free(e->X), free(e->vhint), free(e->LP), free(e->lpo);
    mn_data_destroy(e->d);
}

static void fill_stats(const enc* e, mn_clip_stats* stats) {
    const mn_model* m = e->m;
    const mn_clip* c = e->c;
    memset(stats, 0, sizeof *stats);
    stats->frames = e->n;
    stats->tracks = e->nt;
    int moving = 0;
    for (int j = 0; j < m->njoint; j++)
        moving += m->jnt_type[j] != MN_JOINT_FIXED;
    for (int i = 0; i < e->nt; i++) {
        const clip_track* t = &c->trk[i];
        stats->rest += t->mode == MODE_REST;
        stats->constant += t->mode == MODE_CONST;
        stats->sparse += t->mode == MODE_SPARSE;
        stats->dense += t->mode == MODE_DENSE;
        stats->keys += t->mode == MODE_REST ? 0 : t->nkeys;
    }
    stats->raw_bytes = (size_t)moving * (size_t)e->n * 40;
    stats->bytes = c->size;
    stats->ratio = (double)stats->raw_bytes / (double)c->size;
    stats->max_error = e->errv;
    stats->worst_joint = e->wj;
    stats->worst_frame = e->wf;
    stats->scale = e->good;
    stats->lock_error = e->lock_err;
    stats->worst_lock = e->lock_worst;
}

/* The arguments checked (clip.h); the longest segment's log2 into *seg_max_log2. */
static mn_status check_args(const mn_model* m, const double* q, int nframes, double fps,
                            const mn_clip_options* opt, int* seg_max_log2, mn_error* err) {
    if (!m || !q || nframes < 1 || nframes > (1 << 24) || !(fps > 0) || !isfinite(fps) ||
        !(opt->tol > 0) || !isfinite(opt->tol) || !(opt->shell >= 0) || !isfinite(opt->shell))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "clip",
                            "no model or take, or a bad frame count, fps, tolerance or shell");
    *seg_max_log2 = opt->max_segment == 0 ? MAX_SEG_LOG2 : 0;
    for (int sl = 3; sl <= MAX_SEG_LOG2; sl++)
        if (opt->max_segment == 1 << sl) *seg_max_log2 = sl;
    if (!*seg_max_log2)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "max_segment",
                            "max_segment %d: 8, 16 or 32 frames (0: 32)", opt->max_segment);
    if (opt->vertices != 0 && opt->vertices != 2 && opt->vertices != 3)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "vertices",
                            "vertices %d: 3 (x, y and z of every joint, the default) or 2 (x and "
                            "y)",
                            opt->vertices);
    if (opt->nlocks < 0 || (opt->nlocks > 0 && !opt->locks))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "locks", "%d locks and no array",
                            opt->nlocks);
    for (int k = 0; k < opt->nlocks; k++) {
        const mn_clip_lock* l = &opt->locks[k];
        if (l->joint < 0 || l->joint >= m->njoint || l->start < 0 || l->end < l->start ||
            l->end >= nframes || !(l->tol > 0) || !isfinite(l->tol) ||
            !isfinite(l->point.x + l->point.y + l->point.z))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "locks",
                                "lock %d: a joint of the figure, frames 0 <= start <= end < %d, "
                                "a finite point and a positive tol",
                                k, nframes);
    }
    if (m->nq > 65535)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "clip", "more than 65535 state numbers");
    for (int f = 0; f < nframes; f++)
        if (mn_q_check(m, q + (size_t)f * (size_t)m->nq) != MN_OK)
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "clip", "frame %d is not finite", f);
    return MN_OK;
}

mn_clip* mn_clip_compress(const mn_model* m, const double* q, int nframes, double fps,
                          const mn_clip_options* o, mn_clip_stats* stats, mn_error* err) {
    mn_clip_options opt = o ? *o : mn_clip_default();
    int seg_max_log2 = 0;
    if (check_args(m, q, nframes, fps, &opt, &seg_max_log2, err) != MN_OK) return NULL;
    enc e;
    memset(&e, 0, sizeof e);
    e.m = m, e.q = q, e.n = nframes, e.fps = fps, e.opt = opt;
    e.tbits = bits_for((uint32_t)nframes - 1);
    e.w.seg_max_log2 = seg_max_log2;
    e.wj = e.wf = -1;
    e.nv = opt.vertices ? opt.vertices : 3;
    e.lk = opt.locks, e.nlk = opt.nlocks, e.lock_worst = -1;
    e.c = mn_clip_new(m);
    e.d = e.c ? mn_data_create(m, 0) : NULL;
    mn_status st = e.c && e.d ? MN_OK : MN_ERR_NOMEM;
    if (st == MN_OK) {
        e.c->nframes = nframes, e.c->fps = fps;
        e.nt = e.c->ntrack, e.trk = e.c->trk;
    }
    for (size_t k = 0; st == MN_OK && k < sizeof stages / sizeof stages[0]; k++)
        st = stages[k].run(&e, err);
    if (st == MN_OK && stats) fill_stats(&e, stats);
    mn_clip* c = e.c;
    enc_free(&e);
    if (st != MN_OK) {
        if (st == MN_ERR_NOMEM) mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "clip", "out of memory");
        mn_clip_destroy(c);
        return NULL;
    }
    return c;
}
