/* The top-level constraint solve: options, their defaults and the dispatch to one of the
 * three solvers (lagrange.c: LAGRANGE and DLS, Welman 5.2; ccd.c: CCD, Welman 5.4). The
 * solvers call the network (network.c) and never this file, so the files of the layer depend
 * on each other in one direction: blocks <- network <- solvers <- solve. */
#include "constrain/csys_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char* const solver_names[MN_CSOLVE_COUNT] = {"lagrange", "ccd", "dls"};

const char* mn_csolver_name(mn_csolver s) {
    return (int)s >= 0 && s < MN_CSOLVE_COUNT ? solver_names[s] : NULL;
}

int mn_csolver_parse(const char* name) {
    if (!name) return -1;
    for (int i = 0; i < MN_CSOLVE_COUNT; i++)
        if (!strcmp(name, solver_names[i])) return i;
    return -1;
}

mn_csolve_options mn_csolve_default(void) {
    mn_csolve_options o;
    memset(&o, 0, sizeof o);
    o.method = MN_CSOLVE_LAGRANGE;
    o.tol = 1e-4;
    o.tol_rot = 1e-4;
    o.drag_tol = 1e-4;
    o.max_iters = 20;
    o.rcond = 1e-10;
    o.feedback = 1;
    o.feedback_k = 0;
    o.drag_damping = 0.01;
    o.max_step = 0.25;
    o.respect_limits = 1;
    o.min_progress = 1e-3;
    return o;
}

/* The first option out of range, as "options.FIELD: what", or NULL when all are valid. */
static const char* option_at_fault(const mn_csolve_options* o) {
    if ((int)o->method < 0 || o->method >= MN_CSOLVE_COUNT) return "options.method: unknown solver";
    if (!(o->tol > 0)) return "options.tol: must be > 0";
    if (!(o->tol_rot > 0)) return "options.tol_rot: must be > 0";
    if (!(o->drag_tol > 0)) return "options.drag_tol: must be > 0";
    if (o->max_iters < 0) return "options.max_iters: must be >= 0";
    if (!(o->rcond >= 0)) return "options.rcond: must be >= 0";
    if (!isfinite(o->feedback)) return "options.feedback: not finite";
    if (!isfinite(o->feedback_k)) return "options.feedback_k: not finite";
    if (!(o->drag_damping >= 0)) return "options.drag_damping: must be >= 0";
    if (!isfinite(o->max_step)) return "options.max_step: not finite";
    if (!isfinite(o->min_progress)) return "options.min_progress: not finite";
    return NULL;
}

mn_status mn_csys_solve(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r) {
    mn_csolve_result dummy;
    if (!r) r = &dummy;
    memset(r, 0, sizeof *r);
    mn_csolve_options oo = o ? *o : mn_csolve_default();
    const char* bad = option_at_fault(&oo);
    if (!s || bad) {
        r->status = MN_ERR_ARG;
        snprintf(r->message, sizeof r->message, "%s", s ? bad : "system: NULL");
        return r->status;
    }
    for (int f = 0; f < s->nfig; f++)
        if (mn_q_check(s->fig[f].m, s->fig[f].d->q) != MN_OK) {
            r->status = MN_ERR_ARG;
            snprintf(r->message, sizeof r->message, "q: figure %d state is not finite", f);
            return r->status;
        }
    /* Length tolerances are in the figures' units; on a small figure they would be met
     * before any step. They are capped at MN_CSOLVE_TOL_REL of the smallest figure's size
     * (the sum of its link lengths): on figures of normal size the defaults lie far below
     * the cap and nothing changes. */
    double size = 0;
    for (int f = 0; f < s->nfig; f++) {
        const mn_model* m = s->fig[f].m;
        double sz = 0;
        for (int j = 0; j < m->njoint; j++)
            sz += mn_vec3_norm(m->jnt_offset[j]);
        if (sz > 0 && (size == 0 || sz < size)) size = sz;
    }
    if (size > 0) {
        double cap = MN_CSOLVE_TOL_REL * size;
        if (oo.tol > cap) oo.tol = cap;
        if (oo.drag_tol > cap) oo.drag_tol = cap;
        /* The damping is a length too: on a small figure it would swamp every step. */
        if (oo.drag_damping > 10 * cap) oo.drag_damping = 10 * cap;
    }
    for (int i = 0; i < s->nc; i++)
        s->c[i].unmet = 0;
    memcpy(s->K, s->K0, sizeof(double) * (size_t)s->nv);
    /* Held DOFs (model.h, MN_LOCK_*): mobility 0 (Welman 4.1.4: K_i scales how readily DOF i
     * moves), so no step of the multiplier solvers moves them; CCD skips them. */
    s->hold = !oo.free_locked;
    if (s->hold)
        for (int f = 0; f < s->nfig; f++) {
            const mn_model* m = s->fig[f].m;
            for (int k = 0; k < m->nv && m->nlocked; k++)
                if (m->dof_locked[k]) s->K[s->fig[f].dof0 + k] = 0;
        }
    mn_csys_save(s);
    /* A state that starts outside the joint limits is projected first (steps only clamp
     * the joints they move, and the cache relies on that). */
    if (oo.respect_limits)
        for (int f = 0; f < s->nfig; f++)
            if (!mn_q_within_limits(s->fig[f].m, s->fig[f].d->q, 1e-12)) {
                mn_csys_clamp_figure(s, f);
                s->fig[f].fk_valid = 0;
                mn_csys_invalidate_moved(s, NULL);
            }
    mn_status st;
    switch (oo.method) {
    case MN_CSOLVE_CCD:
        st = mn_csys_solve_ccd(s, &oo, r);
        break;
    case MN_CSOLVE_DLS:
        st = mn_csys_solve_dls(s, &oo, r);
        break;
    default:
        st = mn_csys_solve_lagrange(s, &oo, r);
        break;
    }
    /* Never leave NaN in a state: fall back to the state the solve started from. */
    for (int f = 0; f < s->nfig; f++)
        if (mn_q_check(s->fig[f].m, s->fig[f].d->q) != MN_OK) {
            mn_csys_restore(s);
            mn_csys_eval_all(s);
            r->status = st = MN_ERR_SINGULAR;
            snprintf(r->message, sizeof r->message,
                     "q: numerical failure (a non-finite state); the starting state is restored");
            break;
        }
    for (int f = 0; f < s->nfig; f++)
        mn_csys_ensure_fk(s, f);
    r->status = st;
    return st;
}
