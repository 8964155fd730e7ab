/* mn_ik_solve_batch: many targets of one chain in one call, each solved by mn_ik_solve. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ik/ik_common.h"

static mn_status batch_fail(mn_ik_batch_result* r, mn_status s, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static mn_status batch_fail(mn_ik_batch_result* r, mn_status s, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
    r->status = s;
    return s;
}

static void set_target(mn_ik_problem* q, const double* t, int width) {
    q->target_pos = mn_v3(t[0], t[1], t[2]);
    if (width == 7) {
        q->target_rot.w = t[3];
        q->target_rot.x = t[4];
        q->target_rot.y = t[5];
        q->target_rot.z = t[6];
    }
}

mn_status mn_ik_solve_batch(const mn_model* m, mn_data* d, const mn_ik_problem* p,
                            const double* targets, int n, int width, int follow,
                            const mn_ik_options* o, double* q_out, mn_status* status_out,
                            mn_ik_batch_result* r) {
    mn_ik_batch_result local;
    if (!r) r = &local;
    memset(r, 0, sizeof *r);
    r->first_unmet = -1;
    int64_t t0 = mn_ik_now_ns();
    if (!m || !d || !p)
        return batch_fail(r, MN_ERR_ARG, "ik: model, data and problem are required");
    if (n < 0) return batch_fail(r, MN_ERR_ARG, "ik: n: %d targets", n);
    if (width != 3 && width != 7)
        return batch_fail(r, MN_ERR_ARG,
                          "ik: width: %d (3: positions, 7: positions and quaternions)", width);
    if (n > 0 && !targets) return batch_fail(r, MN_ERR_ARG, "ik: targets: NULL");
    if (d->nq != m->nq) return batch_fail(r, MN_ERR_ARG, "ik: data: made for another model");
    /* every target is checked before anything is solved: bad input changes nothing */
    for (int k = 0; k < n; k++) {
        const double* t = targets + (size_t)k * (size_t)width;
        for (int i = 0; i < width; i++)
            if (!isfinite(t[i]))
                return batch_fail(r, MN_ERR_ARG, "targets[%d]: %s: not finite", k,
                                  i < 3 ? "position" : "quaternion");
        if (width == 7 && p->use_orientation &&
            !(t[3] * t[3] + t[4] * t[4] + t[5] * t[5] + t[6] * t[6] > 1e-18))
            return batch_fail(r, MN_ERR_ARG, "targets[%d]: quaternion: zero", k);
    }
    size_t mark = mn_arena_mark(&d->arena);
    double* seed = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(m->nq > 0 ? m->nq : 1));
    if (!seed) return batch_fail(r, MN_ERR_NOMEM, "ik: the data's arena has no room for the seed");
    memcpy(seed, d->q, sizeof(double) * (size_t)m->nq);
    mn_ik_problem q = *p;
    mn_ik_result one;
    mn_status status = MN_OK;
    for (int k = 0; k < n; k++) {
        if (k > 0 && !follow) memcpy(d->q, seed, sizeof(double) * (size_t)m->nq);
        set_target(&q, targets + (size_t)k * (size_t)width, width);
        mn_status s = mn_ik_solve(m, d, &q, o, &one);
        if (s == MN_ERR_ARG) { /* the problem or options (the targets were checked above) */
            memcpy(d->q, seed, sizeof(double) * (size_t)m->nq);
            mn_arena_reset(&d->arena, mark);
            memset(r, 0, sizeof *r);
            r->first_unmet = -1;
            return batch_fail(r, s, "%s", one.message);
        }
        if (status_out) status_out[k] = s;
        if (q_out) memcpy(q_out + (size_t)k * (size_t)m->nq, d->q, sizeof(double) * (size_t)m->nq);
        r->iterations += one.iterations;
        if (one.pos_err > r->max_pos_err) r->max_pos_err = one.pos_err;
        if (one.rot_err > r->max_rot_err) r->max_rot_err = one.rot_err;
        if (s == MN_OK) {
            r->solved++;
        } else if (r->first_unmet < 0) {
            r->first_unmet = k;
            status = s;
            snprintf(r->message, sizeof r->message, "targets[%d]: %.120s", k, one.message);
        }
    }
    mn_arena_reset(&d->arena, mark);
    r->status = status;
    r->time_us = (double)(mn_ik_now_ns() - t0) * 1e-3;
    return status;
}
