/* The data-flow network of function blocks (Welman 5.3.4, Fig. 5.3-5.4).
 *
 * Each handle block computes h(q) and dh/dq; each constraint block computes c(h) and its
 * Jacobian dc/dq = (dc/dh)(dh/dq) by the chain rule. Both cache their outputs; a change of
 * q "disables the cache" of the handle blocks connected to the DOFs that changed and of the
 * constraint blocks fed by them, so the next evaluation recomputes only those. Sparsity is
 * kept: a block stores only the columns of the DOFs that move it. */
#include "constrain/csys_internal.h"

#include <stdio.h>
#include <string.h>

void mn_csys_ensure_fk(mn_csys* s, int f) {
    if (s->fig[f].fk_valid) return;
    mn_fk(s->fig[f].m, s->fig[f].d);
    s->fig[f].fk_valid = 1;
}

/* Handle blocks (Welman 5.3.2): a handle type is its two functions in blocks.c. */
void mn_csys_eval_handle(mn_csys* s, int i) {
    csys_handle* h = &s->h[i];
    if (h->valid) return;
    mn_csys_ensure_fk(s, h->fig);
    const mn_model* m = s->fig[h->fig].m;
    const mn_data* d = s->fig[h->fig].d;
    const mn_handle_ops* ops = mn_handle_ops_of(h->type);
    int dof0 = s->fig[h->fig].dof0, nv = m->nv;
    ops->value(m, d, h->joint, h->point, &h->pos, &h->rot);
    int row0 = ops->jacobian(m, d, h->joint, h->point, s->jac6);
    /* keep only the handle's own columns: the sparsity of 5.3.4 */
    for (int r = 0; r < 3; r++) {
        const double* src = s->jac6 + (size_t)(row0 + r) * nv;
        double* dst = h->jac + (size_t)r * h->ndof;
        for (int k = 0; k < h->ndof; k++)
            dst[k] = src[h->dofs[k] - dof0];
    }
    h->valid = 1;
    s->evals++;
}

/* Constraint blocks (Welman 5.3.3): c from the handles' values, then dc/dq by the chain
 * rule, dc/dh (rows x 3, from the type's second function) times each handle's dh/dq,
 * scattered into the constraint's columns. */
void mn_csys_eval_con(mn_csys* s, int i) {
    csys_con* c = &s->c[i];
    if (c->valid) return;
    const mn_constraint_def* d = &c->def;
    c->nrows = 0;
    c->residual = 0;
    if (!d->enabled) {
        c->valid = 1;
        return;
    }
    mn_csys_eval_handle(s, d->handle);
    if (d->type == MN_CON_EQUAL) mn_csys_eval_handle(s, d->handle2);
    const csys_handle* h = &s->h[d->handle];
    const csys_handle* h2 = d->type == MN_CON_EQUAL ? &s->h[d->handle2] : NULL;
    const mn_constraint_ops* ops = mn_constraint_ops_of(d->type);
    mn_vec3 p2 = h2 ? h2->pos : mn_v3(0, 0, 0);
    int rows = ops->value(c, h->pos, &h->rot, p2, c->c);
    double G[9] = {0};
    if (rows > 0) ops->jacobian(c, h->pos, &h->rot, c->c, G);
    double* J = c->J;
    memset(J, 0, sizeof(double) * (size_t)rows * c->ncols);
    for (int pass = 0; pass < (h2 ? 2 : 1); pass++) {
        const csys_handle* hh = pass ? h2 : h;
        double sign = pass ? -1.0 : 1.0; /* c = h - h2 */
        int k = 0;
        for (int a = 0; a < hh->ndof; a++) {
            while (c->cols[k] != hh->dofs[a])
                k++;
            double j0 = hh->jac[a], j1 = hh->jac[hh->ndof + a], j2 = hh->jac[2 * hh->ndof + a];
            for (int r = 0; r < rows; r++)
                J[(size_t)r * c->ncols + k] +=
                    sign * (G[3 * r] * j0 + G[3 * r + 1] * j1 + G[3 * r + 2] * j2);
        }
    }
    double r2 = 0;
    for (int r = 0; r < rows; r++)
        r2 += c->c[r] * c->c[r];
    c->residual = sqrt(r2);
    c->nrows = rows;
    c->valid = 1;
    s->evals++;
}

int mn_csys_eval_all(mn_csys* s) {
    int rows = 0;
    for (int i = 0; i < s->nc; i++) {
        mn_csys_eval_con(s, i);
        rows += s->c[i].nrows;
    }
    for (int i = 0; i < s->nh; i++)
        if (s->h[i].drag != DRAG_NONE) mn_csys_eval_handle(s, i);
    s->nrows = rows;
    return rows;
}

/* Welman 5.3.4: a change of q percolates a "disable cache" signal up from the handle
 * blocks connected to the changed elements. */
void mn_csys_invalidate_moved(mn_csys* s, const double* v) {
    for (int i = 0; i < s->nh; i++) {
        csys_handle* h = &s->h[i];
        if (!h->valid) continue;
        int moved = !v;
        for (int k = 0; k < h->ndof && !moved; k++)
            moved = v[h->dofs[k]] != 0;
        if (moved) h->valid = 0;
    }
    for (int i = 0; i < s->nc; i++) {
        csys_con* c = &s->c[i];
        if (!c->valid) continue;
        if (!s->h[c->def.handle].valid ||
            (c->def.type == MN_CON_EQUAL && !s->h[c->def.handle2].valid))
            c->valid = 0;
    }
}

double mn_csys_drag_dist(const csys_handle* h) {
    if (h->type == MN_HANDLE_ORIENT) {
        mn_vec3 e = mn_rotation_error(&h->rot, &h->drag_R);
        return mn_vec3_norm(e);
    }
    return mn_vec3_dist(h->pos, h->drag_vec);
}

void mn_csys_invalidate(mn_csys* s) {
    if (!s) return;
    for (int f = 0; f < s->nfig; f++)
        s->fig[f].fk_valid = 0;
    mn_csys_invalidate_moved(s, NULL);
}

void mn_csys_save(mn_csys* s) {
    int o = 0;
    for (int f = 0; f < s->nfig; f++) {
        memcpy(s->qsave + o, s->fig[f].d->q, sizeof(double) * (size_t)s->fig[f].m->nq);
        o += s->fig[f].m->nq;
    }
}

void mn_csys_restore(mn_csys* s) {
    int o = 0;
    for (int f = 0; f < s->nfig; f++) {
        memcpy(s->fig[f].d->q, s->qsave + o, sizeof(double) * (size_t)s->fig[f].m->nq);
        o += s->fig[f].m->nq;
    }
    mn_csys_invalidate(s);
}

void mn_csys_clamp_figure(mn_csys* s, int f) {
    const mn_model* m = s->fig[f].m;
    double* q = s->fig[f].d->q;
    if (!s->hold || !m->nlocked) {
        mn_clamp_to_limits(m, q);
        return;
    }
    for (int j = 0; j < m->njoint; j++)
        if (!mn_csys_joint_held(m, j)) mn_joint_clamp(m, j, q + m->jnt_qadr[j]);
}

int mn_csys_apply_step(mn_csys* s, double* v, double max_step, int limits) {
    double vmax = 0;
    for (int k = 0; k < s->nv; k++) {
        if (!isfinite(v[k])) return 0;
        if (fabs(v[k]) > vmax) vmax = fabs(v[k]);
    }
    /* Held DOFs have K_i = 0, so no step has a component on them; a step from outside
     * the multipliers (an applied force) is cut here. */
    if (s->hold)
        for (int f = 0; f < s->nfig; f++) {
            const mn_model* m = s->fig[f].m;
            if (!m->nlocked) continue;
            for (int k = 0; k < m->nv; k++)
                if (m->dof_locked[k]) v[s->fig[f].dof0 + k] = 0;
        }
    /* Bounded motion per step: conflicting or ill-conditioned goals never fling a joint. */
    if (max_step > 0 && vmax > max_step) {
        double sc = max_step / vmax;
        for (int k = 0; k < s->nv; k++)
            v[k] *= sc;
    }
    for (int f = 0; f < s->nfig; f++) {
        const mn_model* m = s->fig[f].m;
        const double* vf = v + s->fig[f].dof0;
        int any = 0;
        for (int k = 0; k < m->nv && !any; k++)
            any = vf[k] != 0;
        if (!any) continue;
        double* q = s->fig[f].d->q;
        mn_integrate(m, q, vf, 1.0);
        if (limits) {
            mn_csys_clamp_figure(s, f);
            /* A hinge or slide pushed onto a limit is held there for the rest of the solve
             * (K_i = 0): an active set, so the other DOFs take over instead of the step
             * being clipped again and again. */
            for (int j = 0; j < m->njoint; j++) {
                int t = m->jnt_type[j];
                if (!m->jnt_limited[j] || (t != MN_JOINT_HINGE && t != MN_JOINT_SLIDE)) continue;
                int dof = m->jnt_dofadr[j];
                double qj = q[m->jnt_qadr[j]];
                if ((qj <= m->jnt_range[2 * j] && vf[dof] < 0) ||
                    (qj >= m->jnt_range[2 * j + 1] && vf[dof] > 0))
                    s->K[s->fig[f].dof0 + dof] = 0;
            }
        }
        s->fig[f].fk_valid = 0;
    }
    mn_csys_invalidate_moved(s, v);
    return 1;
}

mn_status mn_csys_evaluate(mn_csys* s) {
    if (!s) return MN_ERR_ARG;
    mn_csys_eval_all(s);
    return MN_OK;
}

int mn_csys_jacobian(const mn_csys* s, mn_jac_block* blocks, int cap) {
    if (!s) return 0;
    int n = 0, row = 0;
    for (int i = 0; i < s->nc; i++) {
        const csys_con* c = &s->c[i];
        if (!c->nrows) continue;
        if (blocks && n < cap) {
            blocks[n].constraint = i;
            blocks[n].row = row;
            blocks[n].nrows = c->nrows;
            blocks[n].ncols = c->ncols;
            blocks[n].cols = c->cols;
            blocks[n].val = c->J;
            blocks[n].c = c->c;
        }
        n++;
        row += c->nrows;
    }
    return n;
}

int mn_csys_summarise(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r) {
    double mp = 0, mr = 0, md = 0;
    int ok = 1;
    for (int i = 0; i < s->nc; i++) {
        const csys_con* c = &s->c[i];
        if (c->is_rot) {
            if (c->residual > mr) mr = c->residual;
            if (c->residual > o->tol_rot) ok = 0;
        } else {
            if (c->residual > mp) mp = c->residual;
            if (c->residual > o->tol) ok = 0;
        }
    }
    for (int i = 0; i < s->nh; i++)
        if (s->h[i].drag == DRAG_TARGET) {
            double e = mn_csys_drag_dist(&s->h[i]);
            if (e > md) md = e;
        }
    r->max_violation = mp;
    r->max_rot_violation = mr;
    r->max_drag_error = md;
    r->rows = s->nrows;
    return ok;
}

void mn_csys_report_unmet(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r,
                          const char* why) {
    int n = 0;
    size_t len = (size_t)snprintf(r->message, sizeof r->message, "%s:", why);
    for (int i = 0; i < s->nc; i++) {
        csys_con* c = &s->c[i];
        c->unmet = c->residual > (c->is_rot ? o->tol_rot : o->tol);
        if (!c->unmet) continue;
        n++;
        if (len < sizeof r->message) {
            const char* nm = c->name[0] ? c->name : mn_constraint_type_name(c->def.type);
            len += (size_t)snprintf(r->message + len, sizeof r->message - len, " %s#%d (%.3g)", nm,
                                    i, c->residual);
        }
    }
    r->nunmet = n;
}
