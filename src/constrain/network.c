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

/* Handle function blocks: position, orientation, centre of mass (Welman 5.3.2). */
void mn_csys_eval_handle(mn_csys* s, int i) {
    csys_handle* h = &s->h[i];
    if (h->valid) return;
    mn_csys_ensure_fk(s, h->fig);
    const mn_model* m = s->fig[h->fig].m;
    const mn_data* d = s->fig[h->fig].d;
    int dof0 = s->fig[h->fig].dof0, nv = m->nv;
    int row0 = 0; /* first row of the 6 x nv Jacobian used */
    if (h->type == MN_HANDLE_COM) {
        h->pos = mn_com(m, d, h->joint, NULL);
        h->rot = mn_mat3_identity();
        mn_com_jacobian(m, d, h->joint, s->jac6);
    } else {
        h->pos = mn_point_world(d, h->joint, h->point);
        h->rot = d->xf[h->joint].R;
        mn_jacobian(m, d, h->joint, h->point, s->jac6);
        if (h->type == MN_HANDLE_ORIENT) row0 = 3;
    }
    for (int r = 0; r < 3; r++) {
        const double* src = s->jac6 + (size_t)(row0 + r) * nv;
        double* dst = h->jac + (size_t)r * h->ndof;
        for (int k = 0; k < h->ndof; k++) dst[k] = src[h->dofs[k] - dof0];
    }
    h->valid = 1;
    s->evals++;
}

/* Inverse of the left Jacobian of SO(3) at phi: d/dt log(R R_t^T) = Jl^-1(phi) w for a
 * frame turning at world angular velocity w. */
static mn_mat3 so3_jl_inv(mn_vec3 phi) {
    double th2 = mn_vec3_dot(phi, phi), th = sqrt(th2);
    double c;
    if (th < 1e-4) c = 1.0 / 12.0 + th2 / 720.0;
    else c = (1.0 - th * sin(th) / (2.0 * (1.0 - cos(th)))) / th2;
    mn_mat3 S = mn_mat3_skew(phi);
    mn_mat3 S2 = mn_mat3_mul(&S, &S);
    mn_mat3 r = mn_mat3_identity();
    for (int k = 0; k < 9; k++) r.m[k] += -0.5 * S.m[k] + c * S2.m[k];
    return r;
}

/* Signed distance of x from a counter-clockwise convex polygon (negative inside) and its
 * gradient g: inside, the outward normal of the nearest edge; outside, the unit vector
 * from the nearest boundary point. */
static double polygon_sd(const double (*poly)[2], int n, const double x[2], double g[2]) {
    int inside = 1;
    double best_in = -1e300, best_out = 1e300;
    double gin[2] = {0, 0}, gout[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        const double* a = poly[i];
        const double* b = poly[(i + 1) % n];
        double ex = b[0] - a[0], ey = b[1] - a[1];
        double len2 = ex * ex + ey * ey;
        if (!(len2 > 0)) continue;
        double len = sqrt(len2);
        double nx = ey / len, ny = -ex / len;
        double side = nx * (x[0] - a[0]) + ny * (x[1] - a[1]);
        if (side > 0) inside = 0;
        if (side > best_in) {
            best_in = side;
            gin[0] = nx, gin[1] = ny;
        }
        double t = ((x[0] - a[0]) * ex + (x[1] - a[1]) * ey) / len2;
        t = t < 0 ? 0 : (t > 1 ? 1 : t);
        double dx = x[0] - (a[0] + t * ex), dy = x[1] - (a[1] + t * ey);
        double dd = sqrt(dx * dx + dy * dy);
        if (dd < best_out) {
            best_out = dd;
            if (dd > 0) gout[0] = dx / dd, gout[1] = dy / dd;
            else gout[0] = nx, gout[1] = ny;
        }
    }
    if (inside) {
        g[0] = gin[0], g[1] = gin[1];
        return best_in;
    }
    g[0] = gout[0], g[1] = gout[1];
    return best_out;
}

/* Constraint function blocks (Welman 5.3.3): c and dc/dq. */
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
    const csys_handle* h = &s->h[d->handle];
    /* dc/dh as up to 3 rows of 3 (G), applied to dh/dq below. */
    double G[9] = {0};
    int rows = 0;
    switch (d->type) {
    case MN_CON_PIN: {
        mn_vec3 e = mn_vec3_sub(h->pos, d->target);
        c->c[0] = e.x, c->c[1] = e.y, c->c[2] = e.z;
        G[0] = G[4] = G[8] = 1;
        rows = 3;
        break;
    }
    case MN_CON_EQUAL: {
        mn_csys_eval_handle(s, d->handle2);
        mn_vec3 e = mn_vec3_sub(h->pos, s->h[d->handle2].pos);
        c->c[0] = e.x, c->c[1] = e.y, c->c[2] = e.z;
        G[0] = G[4] = G[8] = 1;
        rows = 3;
        break;
    }
    case MN_CON_PLANE: {
        c->c[0] = mn_vec3_dot(c->n, mn_vec3_sub(h->pos, d->origin));
        G[0] = c->n.x, G[1] = c->n.y, G[2] = c->n.z;
        rows = 1;
        break;
    }
    case MN_CON_LINE: {
        mn_vec3 e = mn_vec3_sub(h->pos, d->origin);
        c->c[0] = mn_vec3_dot(c->u1, e);
        c->c[1] = mn_vec3_dot(c->u2, e);
        G[0] = c->u1.x, G[1] = c->u1.y, G[2] = c->u1.z;
        G[3] = c->u2.x, G[4] = c->u2.y, G[5] = c->u2.z;
        rows = 2;
        break;
    }
    case MN_CON_ORIENT: {
        mn_mat3 Rt = mn_quat_to_mat3(d->target_rot);
        mn_vec3 e = mn_rotation_error(&h->rot, &Rt);
        c->c[0] = e.x, c->c[1] = e.y, c->c[2] = e.z;
        mn_mat3 Ji = so3_jl_inv(e);
        memcpy(G, Ji.m, sizeof G);
        rows = 3;
        break;
    }
    case MN_CON_BALANCE: {
        /* Ch. 7 balance: the ground projection of the centre of mass stays inside the
         * support polygon shrunk by margin; an inequality with one row when violated. */
        double x[2] = {mn_vec3_dot(c->u1, h->pos), mn_vec3_dot(c->u2, h->pos)}, g[2] = {0, 0};
        double sd = polygon_sd((const double(*)[2])c->poly, d->npolygon, x, g) + d->margin;
        if (sd > 0) {
            c->c[0] = sd;
            mn_vec3 g3 = mn_vec3_add(mn_vec3_scale(c->u1, g[0]), mn_vec3_scale(c->u2, g[1]));
            G[0] = g3.x, G[1] = g3.y, G[2] = g3.z;
            rows = 1;
        }
        break;
    }
    default: break;
    }
    /* Chain rule into the constraint's columns: scatter each handle's rows. */
    double* J = c->J;
    memset(J, 0, sizeof(double) * (size_t)rows * c->ncols);
    for (int pass = 0; pass < (d->type == MN_CON_EQUAL ? 2 : 1); pass++) {
        const csys_handle* hh = pass ? &s->h[d->handle2] : h;
        double sign = pass ? -1.0 : 1.0;
        int k = 0;
        for (int a = 0; a < hh->ndof; a++) {
            while (c->cols[k] != hh->dofs[a]) k++;
            double j0 = hh->jac[a], j1 = hh->jac[hh->ndof + a], j2 = hh->jac[2 * hh->ndof + a];
            for (int r = 0; r < rows; r++)
                J[(size_t)r * c->ncols + k] += sign * (G[3 * r] * j0 + G[3 * r + 1] * j1 + G[3 * r + 2] * j2);
        }
    }
    double r2 = 0;
    for (int r = 0; r < rows; r++) r2 += c->c[r] * c->c[r];
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
        for (int k = 0; k < h->ndof && !moved; k++) moved = v[h->dofs[k]] != 0;
        if (moved) h->valid = 0;
    }
    for (int i = 0; i < s->nc; i++) {
        csys_con* c = &s->c[i];
        if (!c->valid) continue;
        if (!s->h[c->def.handle].valid || (c->def.type == MN_CON_EQUAL && !s->h[c->def.handle2].valid))
            c->valid = 0;
    }
}

void mn_csys_invalidate(mn_csys* s) {
    if (!s) return;
    for (int f = 0; f < s->nfig; f++) s->fig[f].fk_valid = 0;
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

int mn_csys_apply_step(mn_csys* s, double* v, double max_step, int limits) {
    double vmax = 0;
    for (int k = 0; k < s->nv; k++) {
        if (!isfinite(v[k])) return 0;
        if (fabs(v[k]) > vmax) vmax = fabs(v[k]);
    }
    /* Bounded motion per step: conflicting or ill-conditioned goals never fling a joint. */
    if (max_step > 0 && vmax > max_step) {
        double sc = max_step / vmax;
        for (int k = 0; k < s->nv; k++) v[k] *= sc;
    }
    for (int f = 0; f < s->nfig; f++) {
        const mn_model* m = s->fig[f].m;
        const double* vf = v + s->fig[f].dof0;
        int any = 0;
        for (int k = 0; k < m->nv && !any; k++) any = vf[k] != 0;
        if (!any) continue;
        double* q = s->fig[f].d->q;
        mn_integrate(m, q, vf, 1.0);
        if (limits) {
            mn_clamp_to_limits(m, q);
            /* A hinge or slide pushed onto a limit is held there for the rest of the solve
             * (K_i = 0): an active set, so the other DOFs take over instead of the step
             * being clipped again and again. */
            for (int j = 0; j < m->njoint; j++) {
                int t = m->jnt_type[j];
                if (!m->jnt_limited[j] || (t != MN_JOINT_HINGE && t != MN_JOINT_SLIDE)) continue;
                int dof = m->jnt_dofadr[j];
                double qj = q[m->jnt_qadr[j]];
                if ((qj <= m->jnt_range[2 * j] && vf[dof] < 0) || (qj >= m->jnt_range[2 * j + 1] && vf[dof] > 0))
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
            double e = mn_vec3_dist(s->h[i].pos, s->h[i].drag_vec);
            if (e > md) md = e;
        }
    r->max_violation = mp;
    r->max_rot_violation = mr;
    r->max_drag_error = md;
    r->rows = s->nrows;
    return ok;
}

void mn_csys_report_unmet(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r, const char* why) {
    int n = 0;
    size_t len = (size_t)snprintf(r->message, sizeof r->message, "%s:", why);
    for (int i = 0; i < s->nc; i++) {
        csys_con* c = &s->c[i];
        c->unmet = c->residual > (c->is_rot ? o->tol_rot : o->tol);
        if (!c->unmet) continue;
        n++;
        if (len < sizeof r->message) {
            const char* nm = c->name[0] ? c->name : mn_constraint_type_name(c->def.type);
            len += (size_t)snprintf(r->message + len, sizeof r->message - len, " %s#%d (%.3g)", nm, i, c->residual);
        }
    }
    r->nunmet = n;
}

mn_status mn_csys_solve(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r) {
    mn_csolve_result dummy;
    if (!r) r = &dummy;
    memset(r, 0, sizeof *r);
    mn_csolve_options oo = o ? *o : mn_csolve_default();
    if (!s || (int)oo.method < 0 || oo.method >= MN_CSOLVE_COUNT || !(oo.tol > 0) || !(oo.tol_rot > 0) ||
        !(oo.drag_tol > 0) || oo.max_iters < 0 || !(oo.rcond >= 0) || !isfinite(oo.feedback) ||
        !isfinite(oo.feedback_k) || !(oo.drag_damping >= 0) || !isfinite(oo.max_step) || !isfinite(oo.min_progress)) {
        r->status = MN_ERR_ARG;
        snprintf(r->message, sizeof r->message, "options: a tolerance, budget or gain is out of range");
        return r->status;
    }
    for (int f = 0; f < s->nfig; f++)
        if (mn_q_check(s->fig[f].m, s->fig[f].d->q) != MN_OK) {
            r->status = MN_ERR_ARG;
            snprintf(r->message, sizeof r->message, "q: figure %d state is not finite", f);
            return r->status;
        }
    for (int i = 0; i < s->nc; i++) s->c[i].unmet = 0;
    memcpy(s->K, s->K0, sizeof(double) * (size_t)s->nv);
    mn_csys_save(s);
    mn_status st;
    switch (oo.method) {
    case MN_CSOLVE_CCD: st = mn_csys_solve_ccd(s, &oo, r); break;
    case MN_CSOLVE_DLS: st = mn_csys_solve_dls(s, &oo, r); break;
    default: st = mn_csys_solve_lagrange(s, &oo, r); break;
    }
    /* Never leave NaN in a state: fall back to the state the solve started from. */
    for (int f = 0; f < s->nfig; f++)
        if (mn_q_check(s->fig[f].m, s->fig[f].d->q) != MN_OK) {
            mn_csys_restore(s);
            mn_csys_eval_all(s);
            r->status = st = MN_ERR_SINGULAR;
            snprintf(r->message, sizeof r->message, "numerical failure: state restored");
            break;
        }
    for (int f = 0; f < s->nfig; f++) mn_csys_ensure_fk(s, f);
    r->status = st;
    return st;
}
