/* Maintained constraints with Lagrange multipliers (Welman 5.2), and full-body damped least
 * squares with priorities.
 *
 * LAGRANGE. The simplified equation of motion q' = K g (eq. 5.2) with the net force split
 * into applied and constraint forces, g = g_a + g_c, g_c = J_c^T lambda (eq. 5.6), and the
 * constraint condition J_c q' = 0 (eq. 5.3) give J_c K J_c^T lambda = -J_c K g_a (eq. 5.5).
 * Two changes make it a per-frame solver rather than a slow simulation:
 *   - feedback in the multiplier system: J_c q' = -beta C, so one linearised step removes
 *     the violation (beta = 1) instead of the loose spring -k J_c^T C of eq. 5.7 (which is
 *     kept as an option, feedback_k); a few Newton-like steps per frame bring violations
 *     under tolerance and there is no drift;
 *   - a drag is a soft goal J_d q' = target - h with damping mu, solved in the same small
 *     system: rows [J_c; J_d], D = diag(0, mu^2). That minimises |q'|_K^-1^2 +
 *     |J_d q' - e|^2 / mu^2 subject to J_c q' = -beta C, i.e. the applied force on the
 *     handle is the one that moves it as far toward the target as the constraints allow.
 * An applied force f on a handle enters as g_a = J_h^T f (Welman 4.1.1).
 *
 * DLS. All goals stacked, each scaled by sqrt(weight) and damped by lambda (Parent eq.
 * 5.24), solved level by level in priority order: level k solves its goals while the rows
 * of levels 0..k-1 are held (J_A dq = 0, zero damping), the task-priority scheme of
 * full-body IK (Siciliano and Slotine; Baerlocher and Boulic), written in the row space so
 * it costs small dense solves only. */
#include "constrain/csys_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Applied forces: v = K g_a with g_a = sum J_h^T f_h. */
static void applied_velocity(mn_csys* s, double* v) {
    for (int i = 0; i < s->nh; i++) {
        const csys_handle* h = &s->h[i];
        if (h->drag != DRAG_FORCE) continue;
        double f[3] = {h->drag_vec.x, h->drag_vec.y, h->drag_vec.z};
        for (int k = 0; k < h->ndof; k++) {
            double g = 0;
            for (int r = 0; r < 3; r++)
                g += h->jac[(size_t)r * h->ndof + k] * f[r];
            v[h->dofs[k]] += s->K[h->dofs[k]] * g;
        }
    }
}

/* Comfort (constrain.h, mn_csys_set_comfort): the applied force g_c = w (rest - q) / K of a
 * spring as stiff as the DOF (K = mobility scale / stiffness) times its comfort weight w, so
 * its motion K g_c is gain w (rest - q) (at most the whole way) for every DOF that moves (K > 0:
 * not frozen, not held at a limit); the constrained steps' fixed point is the pose nearest rest in
 * the springs' energy sum w (q - rest)^2 / K, stiff joints deviating least. Plus the push out of
 * the limits' margins; free joints take none. s->dv holds rest - q. */
void mn_csys_comfort_velocity(mn_csys* s, double* v, double max_step) {
    double cap = 0.2 * max_step;
    const mn_comfort* c = &s->comfort;
    int rq = 0;
    for (int f = 0; f < s->nfig; f++) {
        const mn_model* m = s->fig[f].m;
        const double* q = s->fig[f].d->q;
        int d0 = s->fig[f].dof0;
        double* diff = s->dv + d0;
        mn_q_difference(m, s->rest + rq, q, diff);
        rq += m->nq;
        for (int j = 0; j < m->njoint; j++) {
            int t = m->jnt_type[j];
            if (t == MN_JOINT_FREE || t == MN_JOINT_FIXED) continue;
            int a = m->jnt_dofadr[j], n = mn_joint_type_nv((mn_joint_type)t);
            for (int k = a; k < a + n; k++) {
                if (!(s->K[d0 + k] > 0)) continue;
                double u = fmin(1.0, c->gain * s->cw[d0 + k]) * diff[k];
                if (m->jnt_limited[j] && (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) &&
                    c->limit_margin > 0) {
                    double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
                    double mg = c->limit_margin * (hi - lo), x = q[m->jnt_qadr[j]];
                    if (x < lo + mg) u += c->limit_gain * (lo + mg - x);
                    if (x > hi - mg) u -= c->limit_gain * (x - (hi - mg));
                }
                v[d0 + k] += fmax(-cap, fmin(cap, u));
            }
        }
    }
}

/* Comfort's part of a step, added to v: its motion with whatever would move a row (a
 * constraint or a drag) taken out, the rows undamped (J cv = 0: neither a lock nor a drag
 * gives way to it; a damped drag row let it pull against the drag, which then gave way
 * suddenly: a stick figure's spine jumped 0.29 rad when the shoulder reached its limit).
 * Directions the rows hardly move (truncated SVD) stay in it. Uses s->b and s->damp. */
static void add_comfort(mn_csys* s, const mn_csolve_options* o, double* v, mn_csolve_result* r) {
    int n = s->nrows;
    double* cv = s->cv;
    memset(cv, 0, sizeof(double) * (size_t)s->nv);
    mn_csys_comfort_velocity(s, cv, o->max_step);
    mn_csys_rows_mul(s, n, cv, s->b);
    for (int i = 0; i < n; i++) {
        s->b[i] = -s->b[i];
        s->damp[i] = 0;
    }
    if (mn_csys_solve_rows(s, n, s->damp, s->b, o->rcond, cv)) r->svd_fallbacks++;
    for (int k = 0; k < s->nv; k++)
        v[k] += cv[k];
}

/* Is some handle dragged toward a target? */
static int any_target(const mn_csys* s) {
    for (int i = 0; i < s->nh; i++)
        if (s->h[i].drag == DRAG_TARGET) return 1;
    return 0;
}

/* Comfort acts on the first step of a solve with drags, unless the last solve left a drag
 * short of its target: a drag that cannot keep up (its target beyond what the constraints
 * allow, a balance row appearing and going as the centre of mass reaches its polygon's edge)
 * then has every joint to catch up with, instead of falling further behind while comfort
 * holds some and catching up at once (a stick figure's spine turned 0.29 rad in a frame). */
static int comfort_now(const mn_csys* s) {
    return s->step_index == 0 && s->comfort_on && !s->drag_behind && s->drags_on && any_target(s);
}

static double con_merit(const mn_csys* s) {
    double m = 0;
    for (int i = 0; i < s->nc; i++)
        m += s->c[i].def.weight * s->c[i].residual * s->c[i].residual;
    return m;
}

static double drag_merit(const mn_csys* s) {
    double m = 0;
    for (int i = 0; i < s->nh; i++)
        if (s->h[i].drag == DRAG_TARGET) {
            double e = mn_csys_drag_dist(&s->h[i]);
            m += s->h[i].drag_weight * e * e;
        }
    return m;
}

static int drags_reached(const mn_csys* s, const mn_csolve_options* o) {
    for (int i = 0; i < s->nh; i++)
        if (s->h[i].drag == DRAG_TARGET && mn_csys_drag_dist(&s->h[i]) > o->drag_tol) return 0;
    return 1;
}

static int any_force(const mn_csys* s) {
    for (int i = 0; i < s->nh; i++)
        if (s->h[i].drag == DRAG_FORCE) return 1;
    return 0;
}

typedef mn_status (*step_fn)(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r);

/* One Lagrange step: q' = K (g_a + J^T lambda) - k K J_c^T C. */
static mn_status lagrange_step(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r) {
    mn_csys_build_blocks(s, s->drags_on, 0, o->feedback, o->drag_damping);
    mn_csys_form_A(s);
    int n = s->nrows;
    double* v = s->v;
    memset(v, 0, sizeof(double) * (size_t)s->nv);
    if (comfort_now(s)) add_comfort(s, o, v, r);
    for (int i = 0; i < n; i++)
        s->lam[i] = 0;
    for (int bi = 0; bi < s->nblk; bi++) {
        const csys_block* B = &s->blk[bi];
        for (int k = 0; k < B->nrows; k++) {
            s->b[B->row0 + k] = B->rhs[k] * B->scale;
            s->damp[B->row0 + k] = B->damping;
        }
    }
    if (s->step_index == 0 && any_force(s)) {
        applied_velocity(s, v);
        mn_csys_rows_mul(s, n, v, s->lam); /* J K g_a */
        for (int i = 0; i < n; i++)
            s->b[i] -= s->lam[i];
    }
    if (mn_csys_solve_rows(s, n, s->damp, s->b, o->rcond, v)) r->svd_fallbacks++;
    if (o->feedback_k != 0)
        for (int i = 0; i < s->nc; i++) {
            const csys_con* c = &s->c[i];
            for (int rr = 0; rr < c->nrows; rr++)
                for (int k = 0; k < c->ncols; k++)
                    v[c->cols[k]] -= o->feedback_k * s->K[c->cols[k]] *
                                     c->J[(size_t)rr * c->ncols + k] * c->c[rr];
        }
    return mn_csys_apply_step(s, v, o->max_step, o->respect_limits) ? MN_OK : MN_ERR_SINGULAR;
}

/* One prioritised DLS step. */
static mn_status dls_step(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r) {
    mn_csys_build_blocks(s, s->drags_on, 1, 1.0, 0);
    mn_csys_form_A(s);
    int n = s->nrows;
    double* v = s->v;
    double lam2 = o->drag_damping * o->drag_damping;
    memset(v, 0, sizeof(double) * (size_t)s->nv);
    if (s->step_index == 0 && any_force(s)) applied_velocity(s, v);
    if (comfort_now(s)) add_comfort(s, o, v, r);
    int bi = 0;
    while (bi < s->nblk) {
        int prio = s->blk[bi].priority, be = bi;
        while (be < s->nblk && s->blk[be].priority == prio)
            be++;
        int n0 = s->blk[bi].row0;
        int n1 = be < s->nblk ? s->blk[be].row0 : n;
        /* residual of this level after the levels above: b_k - J_k v */
        mn_csys_rows_mul(s, n1, v, s->lam);
        for (int i = 0; i < n0; i++) {
            s->b[i] = 0;
            s->damp[i] = 0;
        }
        for (int b2 = bi; b2 < be; b2++) {
            const csys_block* B = &s->blk[b2];
            for (int k = 0; k < B->nrows; k++) {
                int i = B->row0 + k;
                s->b[i] = B->rhs[k] * B->scale - s->lam[i];
                s->damp[i] = lam2;
            }
        }
        if (mn_csys_solve_rows(s, n1, s->damp, s->b, o->rcond, v)) r->svd_fallbacks++;
        bi = be;
    }
    return mn_csys_apply_step(s, v, o->max_step, o->respect_limits) ? MN_OK : MN_ERR_SINGULAR;
}

/* Every figure's state (and the mobilities) into / out of s->qstep (s->kstep). */
static void save_step(mn_csys* s) {
    memcpy(s->kstep, s->K, sizeof(double) * (size_t)s->nv);
    int o = 0;
    for (int f = 0; f < s->nfig; f++) {
        memcpy(s->qstep + o, s->fig[f].d->q, sizeof(double) * (size_t)s->fig[f].m->nq);
        o += s->fig[f].m->nq;
    }
}
static void undo_step(mn_csys* s) {
    memcpy(s->K, s->kstep, sizeof(double) * (size_t)s->nv);
    int o = 0;
    for (int f = 0; f < s->nfig; f++) {
        memcpy(s->fig[f].d->q, s->qstep + o, sizeof(double) * (size_t)s->fig[f].m->nq);
        o += s->fig[f].m->nq;
    }
    mn_csys_invalidate(s);
}

/* A constraint's error counts this many times a drag's in the merit a step with drags must
 * lower. */
#define CON_MERIT_WEIGHT 100.0

/* The merit of a step with drags: the drags' error and the equality constraints'. Balance,
 * an inequality, has no rows until a step crosses it: the step could not see it, and the
 * next step, with its row, brings the centre of mass back. */
static double step_merit(const mn_csys* s) {
    double m = drag_merit(s);
    for (int i = 0; i < s->nc; i++)
        if (s->c[i].def.type != MN_CON_BALANCE)
            m += CON_MERIT_WEIGHT * s->c[i].def.weight * s->c[i].residual * s->c[i].residual;
    return m;
}

/* The per-frame loop shared by both: evaluate, stop when met, step, watch progress.
 * Constraints come first: when a drag stops making progress (its target is beyond what
 * the constraints allow) it is dropped for the rest of the solve and the remaining steps
 * only restore the constraints; when the constraints themselves stop improving they
 * conflict, and the solve stops and reports them.
 *
 * A Lagrange step with drags is kept only when it lowers the merit |drag error|^2 + w |C|^2
 * over the equality constraints (after one step restoring the constraints when it did not:
 * a second-order correction, Nocedal and Wright 15.6), else it is undone and the drags'
 * damping raised fourfold (Levenberg-Marquardt, Nocedal and Wright 10.3); a kept step
 * halves the damping again, down to the option's. Near the edge of what the locks allow a
 * drag's target is out of reach and its rows are near singular: the undamped step there is
 * many times max_step, cut to it it still swings a leg by 0.25 rad, and the next step swings
 * it back, so a smooth drag of a hand on a motion-capture skeleton with both feet locked
 * jumped back and forth between frames (0.27 rad). Kept only when it helps, each frame
 * moves downhill from the last and the pose follows the mouse. When the drags stop pulling
 * the constraints' progress is judged afresh (their error then is the drags' doing, not a
 * conflict). */
static mn_status iterate(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r,
                         step_fn step) {
    double best_c = 1e300, best_d = 1e300;
    int cstall = 0, dstall = 0, it = 0, stopped = 0;
    mn_csolve_options lm = *o; /* lm.drag_damping: the adapted damping */
    double merit_before = -1;  /* the merit before the last step with drags; -1: none */
    int nrej = 0;              /* steps rejected in a row */
    int drags_were_on = 1;
    s->drags_on = 1;
    for (;;) {
        int rejected = 0;
        mn_csys_eval_all(s);
        int ok = mn_csys_summarise(s, o, r);
        int forced = it == 0 && any_force(s);
        if (merit_before >= 0 && s->drags_on) {
            double merit = step_merit(s);
            rejected = merit > merit_before;
            merit_before = -1;
            if (rejected) {
                undo_step(s);
                mn_csys_eval_all(s);
                ok = mn_csys_summarise(s, o, r);
                lm.drag_damping *= 4;
                nrej++;
            } else {
                nrej = 0;
                if (lm.drag_damping > o->drag_damping)
                    lm.drag_damping = fmax(o->drag_damping, 0.5 * lm.drag_damping);
            }
        }
        if (ok && !forced && (!s->drags_on || drags_reached(s, o))) break;
        /* a rejected step leaves the state as it was: no progress to judge, unless the
         * damping has grown 64-fold (three in a row) and the drag is still stuck */
        if (s->drags_on && (!rejected || nrej >= 3)) {
            double dm = drag_merit(s);
            if (dm < best_d * (1 - o->min_progress)) {
                best_d = dm;
                dstall = 0;
            } else if (++dstall >= 2) {
                s->drags_on = 0;
            }
        }
        double cm = con_merit(s);
        /* the constraints' progress is judged from where the drags stopped pulling */
        if (drags_were_on && !s->drags_on) best_c = 1e300, cstall = 0;
        drags_were_on = s->drags_on;
        if (cm < best_c * (1 - o->min_progress)) {
            best_c = cm;
            cstall = 0;
        } else if (!ok && !s->drags_on && ++cstall >= 3) {
            stopped = 1;
            break;
        }
        if (it >= o->max_iters) break;
        /* the last steps of the budget only restore the constraints */
        if (it >= o->max_iters - 3 && o->max_iters > 6) s->drags_on = 0;
        if (ok && !s->drags_on && !forced) break;
        s->step_index = it;
        if (s->drags_on && !forced && step == lagrange_step) {
            save_step(s);
            merit_before = step_merit(s);
        }
        mn_status st = step(s, &lm, r);
        it++;
        /* a step that raised the merit first gets a step that only restores the constraints
         * (its own linearisation error in them would otherwise refuse a good step) */
        if (st == MN_OK && merit_before >= 0) {
            mn_csys_eval_all(s);
            if (step_merit(s) > merit_before && !mn_csys_summarise(s, o, r)) {
                s->drags_on = 0;
                s->step_index = it;
                st = step(s, &lm, r);
                s->drags_on = 1;
            }
        }
        if (st != MN_OK) {
            r->iterations = it;
            r->status = st;
            snprintf(r->message, sizeof r->message, "step was not finite: stopped");
            return st;
        }
    }
    s->drags_on = 1;
    r->iterations = it;
    s->drag_behind = !drags_reached(s, o);
    if (mn_csys_summarise(s, o, r)) {
        r->status = MN_OK;
        r->nunmet = 0;
        for (int i = 0; i < s->nc; i++)
            s->c[i].unmet = 0;
        return MN_OK;
    }
    r->status = stopped ? MN_ERR_UNREACHABLE : MN_ERR_NOCONVERGE;
    mn_csys_report_unmet(s, o, r, stopped ? "conflicting constraints" : "iteration budget ran out");
    return r->status;
}

mn_status mn_csys_solve_lagrange(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r) {
    return iterate(s, o, r, lagrange_step);
}

mn_status mn_csys_solve_dls(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r) {
    return iterate(s, o, r, dls_step);
}
