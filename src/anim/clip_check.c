/* Compressed clips, offline: the checks of the encoder against the take. A change to the
 * tracks of one joint moves that joint's subtree only, and the rest of the clip is within its
 * bounds (every accepted step was checked), so a frame is checked on the subtree, below the
 * cached frame of the joint's parent; locks (mn_clip_lock) are checked with the vertices. */
#include <stdlib.h>

#include "clip_encode.h"

/* Every lock's points as the take places them over its frames. */
mn_status mn_clip_lock_points(enc* e) {
    if (!e->nlk) return MN_OK;
    size_t total = 0;
    e->lpo = malloc(sizeof(size_t) * (size_t)e->nlk);
    if (!e->lpo) return MN_ERR_NOMEM;
    for (int k = 0; k < e->nlk; k++)
        e->lpo[k] = total, total += 3 * (size_t)(e->lk[k].end - e->lk[k].start + 1);
    e->LP = malloc(sizeof(double) * total);
    if (!e->LP) return MN_ERR_NOMEM;
    const mn_model* m = e->m;
    for (int f = 0; f < e->n; f++) {
        memcpy(e->d->q, e->q + (size_t)f * m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, e->d);
        for (int k = 0; k < e->nlk; k++) {
            const mn_clip_lock* l = &e->lk[k];
            if (f < l->start || f > l->end) continue;
            const mn_xform* X = &e->d->xf[l->joint];
            double* r = e->LP + e->lpo[k] + 3 * (size_t)(f - l->start);
            const double pt[3] = {l->point.x, l->point.y, l->point.z};
            const double p[3] = {X->p.x, X->p.y, X->p.z};
            for (int a = 0; a < 3; a++)
                r[a] = p[a] + X->R.m[3 * a] * pt[0] + X->R.m[3 * a + 1] * pt[1] +
                       X->R.m[3 * a + 2] * pt[2];
        }
    }
    return MN_OK;
}

/* Lock k's point at frame f placed by frame X, its distance from the take's. */
static double lock_dist(const enc* e, int k, int f, const mn_xform* X) {
    const mn_clip_lock* l = &e->lk[k];
    const double* r = e->LP + e->lpo[k] + 3 * (size_t)(f - l->start);
    const double pt[3] = {l->point.x, l->point.y, l->point.z}, p[3] = {X->p.x, X->p.y, X->p.z};
    double e2 = 0;
    for (int a = 0; a < 3; a++) {
        double w = p[a] + X->R.m[3 * a] * pt[0] + X->R.m[3 * a + 1] * pt[1] +
                   X->R.m[3 * a + 2] * pt[2] - r[a];
        e2 += w * w;
    }
    return sqrt(e2);
}

/* Whether every lock active at frame f on a joint of lo..hi-1 holds, with frames xf. */
static int locks_hold(const enc* e, int f, int lo, int hi, const mn_xform* xf) {
    for (int k = 0; k < e->nlk; k++) {
        const mn_clip_lock* l = &e->lk[k];
        if (l->joint < lo || l->joint >= hi || f < l->start || f > l->end) continue;
        if (!(lock_dist(e, k, f, &xf[l->joint]) <= l->tol)) return 0;
    }
    return 1;
}

/* The clip (assembled) against every lock over its frames: the largest distance relative to
 * the lock's tol (<= 1: all hold), and where (into e->lock_err, e->lock_worst). */
double mn_clip_locks_excess(enc* e) {
    double worst = 0;
    e->lock_err = 0, e->lock_worst = e->nlk ? 0 : -1;
    for (int f = 0; f < e->n && e->nlk; f++) {
        int any = 0;
        for (int k = 0; k < e->nlk; k++)
            any |= f >= e->lk[k].start && f <= e->lk[k].end;
        if (!any) continue;
        mn_clip_sample(e->c, f, e->d->q);
        mn_fk(e->m, e->d);
        for (int k = 0; k < e->nlk; k++) {
            const mn_clip_lock* l = &e->lk[k];
            if (f < l->start || f > l->end) continue;
            double dk = lock_dist(e, k, f, &e->d->xf[l->joint]);
            if (dk > e->lock_err) e->lock_err = dk, e->lock_worst = k;
            if (dk / l->tol > worst) worst = dk / l->tol;
        }
    }
    return worst;
}

/* The states of joint's subtree: joints are numbered depth first and their states follow
 * that order (mn_model), so they are the numbers from joint's up to those of the joint after
 * the subtree. */
static void subtree_states(const mn_model* m, int joint, size_t* lo, size_t* count) {
    int end = m->jnt_subtree_end[joint];
    *lo = (size_t)m->jnt_qadr[joint];
    *count = (size_t)(end < m->njoint ? m->jnt_qadr[end] : m->nq) - *lo;
}

int mn_clip_subtree_ok(enc* e, int joint, int f, const double* qf, int squared) {
    const mn_model* m = e->m;
    mn_data* d = e->d;
    int p = m->jnt_parent[joint], end = m->jnt_subtree_end[joint], nv = e->nv;
    size_t lo, count;
    subtree_states(m, joint, &lo, &count);
    memcpy(d->q + lo, qf + lo, sizeof(double) * count);
    if (p >= 0) d->xf[p] = e->X[(size_t)f * m->njoint + p];
    mn_fk_subtree(m, d, joint);
    double shell = e->opt.shell, tol = e->opt.tol;
    const double* r = e->V + (size_t)f * (size_t)m->njoint * 3 * nv;
    for (int j = joint; j < end; j++) {
        const mn_xform* x = &d->xf[j];
        const double pj[3] = {x->p.x, x->p.y, x->p.z};
        for (int a = 0; a < nv; a++) { /* as mn_clip_vertices and mn_clip_error_v */
            const double* y = r + 3 * nv * j + 3 * a;
            double e2 = 0;
            for (int k = 0; k < 3; k++) {
                double dk = (pj[k] + shell * x->R.m[3 * k + a]) - y[k];
                e2 += dk * dk;
            }
            if (squared ? !(e2 <= tol * tol) : sqrt(e2) > tol) return 0;
        }
    }
    return !e->nlk || locks_hold(e, f, joint, end, d->xf);
}

/* The squared distance from y of vertex a of frame x (its origin plus shell along axis a)
 * moved by (D, t). */
static inline double moved_e2(const double* D, const double* t, const mn_xform* x, int a,
                              double shell, const double* y) {
    const double w[3] = {x->p.x + shell * x->R.m[a], x->p.y + shell * x->R.m[3 + a],
                         x->p.z + shell * x->R.m[6 + a]};
    double e2 = 0;
    for (int k = 0; k < 3; k++) {
        double dk = D[3 * k] * w[0] + D[3 * k + 1] * w[1] + D[3 * k + 2] * w[2] + t[k] - y[k];
        e2 += dk * dk;
    }
    return e2;
}

int mn_clip_subtree_ok_moved(enc* e, int joint, int f, const double* qj) {
    const mn_model* m = e->m;
    int p = m->jnt_parent[joint], end = m->jnt_subtree_end[joint], nv = e->nv;
    const mn_xform* X = e->X + (size_t)f * m->njoint;
    static const mn_xform identity = {{{1, 0, 0, 0, 1, 0, 0, 0, 1}}, {0, 0, 0}};
    mn_xform N = p >= 0 ? X[p] : identity; /* the joint's new frame */
    mn_joint_apply(m, joint, qj, &N);
    /* the motion D = N O^-1 (O the cached frame): D R = N.R O.R^T, D p = N.p - D.R O.p */
    const double *O = X[joint].R.m, *n = N.R.m, op[3] = {X[joint].p.x, X[joint].p.y, X[joint].p.z};
    double D[9], t[3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            D[3 * r + c] =
                n[3 * r] * O[3 * c] + n[3 * r + 1] * O[3 * c + 1] + n[3 * r + 2] * O[3 * c + 2];
    const double np[3] = {N.p.x, N.p.y, N.p.z};
    for (int r = 0; r < 3; r++)
        t[r] = np[r] - (D[3 * r] * op[0] + D[3 * r + 1] * op[1] + D[3 * r + 2] * op[2]);
    /* the bound less half a millionth of it and a picometre: the rounding of the two ways
     * apart, at any size of figure and bound */
    double shell = e->opt.shell, tl = e->opt.tol * (1 - 5e-7) - 1e-12, lim = tl > 0 ? tl * tl : -1;
    const double* ref = e->V + (size_t)f * (size_t)m->njoint * 3 * nv;
    /* the vertex that failed last first, then every vertex of the subtree */
    int h = e->vhint[joint];
    if (h >= joint * nv && h < end * nv &&
        !(moved_e2(D, t, &X[h / nv], h % nv, shell, ref + 3 * h) <= lim))
        return 0;
    for (int j = joint; j < end; j++)
        for (int a = 0; a < nv; a++)
            if (!(moved_e2(D, t, &X[j], a, shell, ref + 3 * (nv * j + a)) <= lim)) {
                e->vhint[joint] = nv * j + a;
                return 0;
            }
    return 1;
}

void mn_clip_cache_frames(enc* e, int joint, int f0, int f1) {
    const mn_model* m = e->m;
    mn_data* d = e->d;
    int p = m->jnt_parent[joint], end = m->jnt_subtree_end[joint];
    size_t lo, count;
    subtree_states(m, joint, &lo, &count);
    for (int f = f0; f < f1; f++) {
        mn_xform* X = e->X + (size_t)f * m->njoint;
        memcpy(d->q + lo, e->Q + (size_t)f * m->nq + lo, sizeof(double) * count);
        if (p >= 0) d->xf[p] = X[p];
        mn_fk_subtree(m, d, joint);
        memcpy(X + joint, d->xf + joint, sizeof(mn_xform) * (size_t)(end - joint));
    }
}
