/* The constraint system: figures, handles, constraints and drags, created once with all
 * the memory a solve needs (Welman 5.3.1-5.3.3: skeletons, handles and constraints as
 * objects the solver queries). */
#include "constrain/csys_internal.h"

#include <marionette/linalg.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mn_handle_def mn_handle_default(void) {
    mn_handle_def d;
    memset(&d, 0, sizeof d);
    d.type = MN_HANDLE_POINT;
    return d;
}

mn_constraint_def mn_constraint_default(void) {
    mn_constraint_def d;
    memset(&d, 0, sizeof d);
    d.type = MN_CON_PIN;
    d.handle2 = -1;
    d.target_rot = mn_quat_identity();
    d.up = mn_v3(0, 1, 0);
    d.dir = mn_v3(0, 1, 0);
    d.weight = 1;
    d.enabled = 1;
    return d;
}

mn_csys_def mn_csys_default(void) {
    mn_csys_def d;
    memset(&d, 0, sizeof d);
    d.max_handles = 32;
    d.max_constraints = 32;
    return d;
}

/* ---- creation: one block for everything ------------------------------------------------ */

typedef struct layout {
    size_t off;
} layout;

/* Reserves n bytes, 16-aligned, and returns the offset. */
static size_t take(layout* l, size_t n) {
    size_t o = (l->off + 15) & ~(size_t)15;
    l->off = o + n;
    return o;
}

mn_csys* mn_csys_create(const mn_figure* figures, int nfigure, const mn_csys_def* def,
                        mn_error* err) {
    mn_error_clear(err);
    mn_csys_def dd = def ? *def : mn_csys_default();
    if (!figures || nfigure < 1 || nfigure > MN_CSYS_MAX_FIGURES) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "figures", "need 1 to %d figures",
                     MN_CSYS_MAX_FIGURES);
        return NULL;
    }
    if (dd.max_handles < 1 || dd.max_constraints < 1 || dd.max_handles > 4096 ||
        dd.max_constraints > 4096) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "max_handles", "capacities must be in 1..4096");
        return NULL;
    }
    int nv = 0, nq = 0, maxnv = 1, maxj = 1, njt = 0;
    for (int f = 0; f < nfigure; f++) {
        const mn_model* m = figures[f].model;
        const mn_data* d = figures[f].data;
        if (!m || !d || d->nq != m->nq || d->nv != m->nv || d->njoint != m->njoint) {
            mn_error_set(err, MN_ERR_ARG, NULL, 0, "figures",
                         "figure %d: missing or mismatched model and data", f);
            return NULL;
        }
        if (mn_q_check(m, d->q) != MN_OK) {
            mn_error_set(err, MN_ERR_ARG, NULL, 0, "q", "figure %d: state is not finite", f);
            return NULL;
        }
        nv += m->nv;
        nq += m->nq;
        if (m->nv > maxnv) maxnv = m->nv;
        if (m->njoint > maxj) maxj = m->njoint;
        njt += m->njoint;
    }
    int nvv = nv > 0 ? nv : 1;
    int max_rows = 3 * dd.max_constraints + 3 * dd.max_handles;
    layout l = {0};
    size_t o_self = take(&l, sizeof(mn_csys));
    size_t o_h = take(&l, sizeof(csys_handle) * (size_t)dd.max_handles);
    size_t o_c = take(&l, sizeof(csys_con) * (size_t)dd.max_constraints);
    size_t o_hd = take(&l, sizeof(int) * (size_t)dd.max_handles * nvv);
    size_t o_hj = take(&l, sizeof(double) * 3 * (size_t)dd.max_handles * nvv);
    size_t o_hdj = take(&l, sizeof(double) * 3 * (size_t)dd.max_handles * nvv);
    size_t o_cc = take(&l, sizeof(int) * (size_t)dd.max_constraints * nvv);
    size_t o_cj = take(&l, sizeof(double) * 3 * (size_t)dd.max_constraints * nvv);
    size_t o_blk = take(&l, sizeof(csys_block) * (size_t)(dd.max_constraints + dd.max_handles));
    size_t o_K = take(&l, sizeof(double) * nvv);
    size_t o_K0 = take(&l, sizeof(double) * nvv);
    size_t o_A = take(&l, sizeof(double) * (size_t)max_rows * max_rows);
    size_t o_F = take(&l, sizeof(double) * (size_t)max_rows * max_rows);
    size_t o_b = take(&l, sizeof(double) * (size_t)max_rows);
    size_t o_lam = take(&l, sizeof(double) * (size_t)max_rows);
    size_t o_damp = take(&l, sizeof(double) * (size_t)max_rows);
    size_t o_dense = take(&l, sizeof(double) * nvv);
    size_t o_v = take(&l, sizeof(double) * nvv);
    size_t o_dv = take(&l, sizeof(double) * nvv);
    size_t o_svd = take(&l, sizeof(double) * mn_tsvd_work_size(max_rows, max_rows));
    size_t o_j6 = take(&l, sizeof(double) * 6 * (size_t)maxnv);
    size_t o_qs = take(&l, sizeof(double) * (size_t)(nq > 0 ? nq : 1));
    size_t o_qt = take(&l, sizeof(double) * (size_t)(nq > 0 ? nq : 1));
    size_t o_kt = take(&l, sizeof(double) * nvv);
    size_t o_mark = take(&l, sizeof(int) * (size_t)maxj);
    size_t o_uf = take(&l, sizeof(int) * (size_t)dd.max_handles);
    size_t o_rest = take(&l, sizeof(double) * (size_t)(nq > 0 ? nq : 1));
    size_t o_cw = take(&l, sizeof(double) * nvv);
    size_t o_cv = take(&l, sizeof(double) * nvv);
    size_t o_ccd = take(&l, mn_csys_ccd_bytes(2 * dd.max_constraints + dd.max_handles, njt, nq));
    unsigned char* block = calloc(1, l.off + 16);
    if (!block) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "max_handles",
                     "out of memory for the constraint system");
        return NULL;
    }
    mn_csys* s = (mn_csys*)(block + o_self);
    s->nfig = nfigure;
    s->nv = nv;
    s->nq = nq;
    s->max_h = dd.max_handles;
    s->max_c = dd.max_constraints;
    s->max_rows = max_rows;
    s->h = (csys_handle*)(block + o_h);
    s->c = (csys_con*)(block + o_c);
    for (int i = 0; i < dd.max_handles; i++) {
        s->h[i].dofs = (int*)(block + o_hd) + (size_t)i * nvv;
        s->h[i].jac = (double*)(block + o_hj) + (size_t)i * 3 * nvv;
        s->h[i].djac = (double*)(block + o_hdj) + (size_t)i * 3 * nvv;
    }
    for (int i = 0; i < dd.max_constraints; i++) {
        s->c[i].cols = (int*)(block + o_cc) + (size_t)i * nvv;
        s->c[i].J = (double*)(block + o_cj) + (size_t)i * 3 * nvv;
    }
    s->blk = (csys_block*)(block + o_blk);
    s->K = (double*)(block + o_K);
    s->K0 = (double*)(block + o_K0);
    s->A = (double*)(block + o_A);
    s->F = (double*)(block + o_F);
    s->b = (double*)(block + o_b);
    s->lam = (double*)(block + o_lam);
    s->damp = (double*)(block + o_damp);
    s->dense = (double*)(block + o_dense);
    s->v = (double*)(block + o_v);
    s->dv = (double*)(block + o_dv);
    s->svd_work = (double*)(block + o_svd);
    s->jac6 = (double*)(block + o_j6);
    s->qsave = (double*)(block + o_qs);
    s->qstep = (double*)(block + o_qt);
    s->kstep = (double*)(block + o_kt);
    s->mark = (int*)(block + o_mark);
    s->uf = (int*)(block + o_uf);
    s->rest = (double*)(block + o_rest);
    s->cw = (double*)(block + o_cw);
    s->cv = (double*)(block + o_cv);
    for (int k = 0; k < nvv; k++)
        s->cw[k] = 1;
    s->ccd = block + o_ccd;
    int dof0 = 0, jnt0 = 0, rest0 = 0;
    double scale = 0;
    for (int f = 0; f < nfigure; f++) {
        const mn_model* m = figures[f].model;
        s->fig[f].m = m;
        s->fig[f].d = figures[f].data;
        s->fig[f].dof0 = dof0;
        s->fig[f].jnt0 = jnt0;
        jnt0 += m->njoint;
        /* Welman 4.1.4: K_i scales how readily DOF i moves; stiffness is its inverse. */
        for (int k = 0; k < m->nv; k++)
            s->K[dof0 + k] = s->K0[dof0 + k] = 1.0 / m->dof_stiffness[k];
        dof0 += m->nv;
        memcpy(s->rest + rest0, m->q0, sizeof(double) * (size_t)m->nq);
        rest0 += m->nq;
        mn_fk(m, figures[f].data);
        s->fig[f].fk_valid = 1;
        for (int j = 0; j < m->njoint; j++) {
            double dist = mn_vec3_dist(figures[f].data->xf[j].p, figures[f].data->xf[0].p);
            if (dist > scale) scale = dist;
        }
    }
    s->world_scale = scale > 1e-9 ? scale : 1.0;
    return s;
}

void mn_csys_destroy(mn_csys* s) {
    free(s);
}

int mn_csys_figure_count(const mn_csys* s) {
    return s ? s->nfig : 0;
}
int mn_csys_nv(const mn_csys* s) {
    return s ? s->nv : 0;
}
int mn_csys_dof_offset(const mn_csys* s, int f) {
    return s && f >= 0 && f < s->nfig ? s->fig[f].dof0 : -1;
}
int mn_csys_handle_count(const mn_csys* s) {
    return s ? s->nh : 0;
}
int mn_csys_constraint_count(const mn_csys* s) {
    return s ? s->nc : 0;
}
long mn_csys_eval_count(const mn_csys* s) {
    return s ? s->evals : 0;
}
int mn_csys_row_count(const mn_csys* s) {
    return s ? s->nrows : 0;
}

int mn_csys_find_handle(const mn_csys* s, const char* name) {
    if (!s || !name || !name[0]) return -1;
    for (int i = 0; i < s->nh; i++)
        if (!strcmp(s->h[i].name, name)) return i;
    return -1;
}

int mn_csys_find_constraint(const mn_csys* s, const char* name) {
    if (!s || !name || !name[0]) return -1;
    for (int i = 0; i < s->nc; i++)
        if (!strcmp(s->c[i].name, name)) return i;
    return -1;
}

const mn_constraint_def* mn_csys_constraint(const mn_csys* s, int c) {
    return s && c >= 0 && c < s->nc ? &s->c[c].def : NULL;
}

/* ---- handles --------------------------------------------------------------------------- */

static int cmp_int(const void* a, const void* b) {
    int x = *(const int*)a, y = *(const int*)b;
    return (x > y) - (x < y);
}

/* The DOFs a handle depends on (Welman 5.3.2: "a handle will depend on only a subset of
 * the joints"): the joint and its ancestors; for a centre of mass also the subtree. */
static int handle_dofs(mn_csys* s, int f, mn_handle_type type, int joint, int* out) {
    const mn_model* m = s->fig[f].m;
    int* mark = s->mark;
    memset(mark, 0, sizeof(int) * (size_t)m->njoint);
    if (type == MN_HANDLE_COM && joint < 0) {
        for (int j = 0; j < m->njoint; j++)
            mark[j] = 1;
    } else {
        for (int j = joint; j >= 0; j = m->jnt_parent[j])
            mark[j] = 1;
        if (type == MN_HANDLE_COM)
            for (int j = joint; j < m->jnt_subtree_end[joint]; j++)
                mark[j] = 1;
    }
    int n = 0;
    for (int j = 0; j < m->njoint; j++) {
        if (!mark[j]) continue;
        int nvj = mn_joint_type_nv((mn_joint_type)m->jnt_type[j]);
        for (int k = 0; k < nvj; k++)
            out[n++] = s->fig[f].dof0 + m->jnt_dofadr[j] + k;
    }
    qsort(out, (size_t)n, sizeof(int), cmp_int);
    return n;
}

int mn_csys_add_handle(mn_csys* s, const mn_handle_def* def, mn_error* err) {
    mn_error_clear(err);
    if (!s || !def) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "handle", "NULL argument");
        return -1;
    }
    const char* nm = def->name ? def->name : "";
    if (s->nh >= s->max_h) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "handles",
                     "handle '%s': the system holds at most %d handles", nm, s->max_h);
        return -1;
    }
    if ((int)def->type < 0 || def->type > MN_HANDLE_COM) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "type", "handle '%s': unknown handle type %d", nm,
                     (int)def->type);
        return -1;
    }
    if (def->figure < 0 || def->figure >= s->nfig) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "figure", "handle '%s': no figure %d", nm,
                     def->figure);
        return -1;
    }
    const mn_model* m = s->fig[def->figure].m;
    int lo = def->type == MN_HANDLE_COM ? -1 : 0;
    if (def->joint < lo || def->joint >= m->njoint) {
        mn_error_set(err, MN_ERR_NOTFOUND, NULL, 0, "joint",
                     "handle '%s': no joint %d in figure %d", nm, def->joint, def->figure);
        return -1;
    }
    if (!mn_vec3_isfinite(def->point)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "point", "handle '%s': point is not finite", nm);
        return -1;
    }
    if (def->name && mn_csys_find_handle(s, def->name) >= 0) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "name", "handle '%s': duplicate name", nm);
        return -1;
    }
    double mass = 0;
    if (def->type == MN_HANDLE_COM) {
        mn_csys_ensure_fk(s, def->figure);
        mn_com(m, s->fig[def->figure].d, def->joint, &mass);
        if (!(mass > 0)) {
            mn_error_set(err, MN_ERR_ARG, NULL, 0, "joint",
                         "handle '%s': centre of mass of a massless subtree", nm);
            return -1;
        }
    }
    int i = s->nh;
    csys_handle* h = &s->h[i];
    h->type = def->type;
    h->fig = def->figure;
    h->joint = def->joint;
    h->point = def->type == MN_HANDLE_POINT ? def->point : mn_v3(0, 0, 0);
    snprintf(h->name, sizeof h->name, "%s", nm);
    h->mass = mass;
    h->ndof = handle_dofs(s, def->figure, def->type, def->joint, h->dofs);
    h->valid = 0;
    h->drag = DRAG_NONE;
    s->uf[i] = i;
    s->nh++;
    return i;
}

/* ---- constraints ----------------------------------------------------------------------- */

static int uf_find(int* uf, int i) {
    while (uf[i] != i)
        i = uf[i] = uf[uf[i]];
    return i;
}

/* Two unit vectors across n, forming a right-handed frame (u1, u2, n). */
static void basis_across(mn_vec3 n, mn_vec3* u1, mn_vec3* u2) {
    mn_vec3 a =
        fabs(n.x) < 0.6 ? mn_v3(1, 0, 0) : (fabs(n.y) < 0.6 ? mn_v3(0, 1, 0) : mn_v3(0, 0, 1));
    *u1 = mn_vec3_normalize(mn_vec3_sub(a, mn_vec3_scale(n, mn_vec3_dot(a, n))));
    *u2 = mn_vec3_cross(n, *u1);
}

/* ORIENT with an axis: n is the target direction of that axis, u1 and u2 span the plane
 * across it (the two rows measure the axis's departure along them). */
static void orient_axis_basis(const mn_constraint_def* d, csys_con* out) {
    if (d->axis < 1 || d->axis > 3) return;
    mn_mat3 Rt = mn_quat_to_mat3(mn_quat_normalize(d->target_rot));
    out->n = mn_mat3_col(&Rt, d->axis - 1);
    basis_across(out->n, &out->u1, &out->u2);
}

static int point_like(const csys_handle* h) {
    return h->type != MN_HANDLE_ORIENT;
}

/* Checks a def against the system; on success fills the derived members of out. */
static mn_status check_con(mn_csys* s, const mn_constraint_def* d, csys_con* out, mn_error* err) {
    const char* nm = d->name ? d->name : "";
    const char* tn = mn_constraint_type_name(d->type);
    if (!tn)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "type", "constraint '%s': unknown type %d",
                            nm, (int)d->type);
    if (d->handle < 0 || d->handle >= s->nh)
        return mn_error_set(err, MN_ERR_NOTFOUND, NULL, 0, "handle",
                            "%s constraint '%s': no handle %d", tn, nm, d->handle);
    const csys_handle* h = &s->h[d->handle];
    if (!(d->weight > 0) || !isfinite(d->weight))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "weight",
                            "%s constraint '%s': weight must be > 0", tn, nm);
    if (d->priority < 0 || d->priority > 1000)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "priority",
                            "%s constraint '%s': priority must be in 0..1000", tn, nm);
    if (d->type == MN_CON_ORIENT ? h->type != MN_HANDLE_ORIENT : !point_like(h))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "handle",
                            "%s constraint '%s': handle '%s' is a %s handle", tn, nm, h->name,
                            mn_handle_type_name(h->type));
    if (d->type != MN_CON_ORIENT && d->axis != 0)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "axis",
                            "%s constraint '%s': an axis belongs to orient constraints", tn, nm);
    memset(out->poly, 0, sizeof out->poly);
    out->n = out->u1 = out->u2 = mn_v3(0, 0, 0);
    out->is_rot = d->type == MN_CON_ORIENT;
    switch (d->type) {
    case MN_CON_PIN:
        if (!mn_vec3_isfinite(d->target))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "target",
                                "pin constraint '%s': target is not finite", nm);
        break;
    case MN_CON_ORIENT: {
        double qn = mn_quat_norm(d->target_rot);
        if (!mn_quat_isfinite(d->target_rot) || fabs(qn - 1) > 1e-6)
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "target",
                                "orient constraint '%s': target is not a unit quaternion", nm);
        if (d->axis < 0 || d->axis > 3)
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "axis",
                                "orient constraint '%s': axis must be 0 (all), 1, 2 or 3 (x, y, z)",
                                nm);
        orient_axis_basis(d, out);
        break;
    }
    case MN_CON_PLANE:
    case MN_CON_LINE: {
        const char* what = d->type == MN_CON_PLANE ? "normal" : "direction";
        if (!mn_vec3_isfinite(d->origin))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "origin",
                                "%s constraint '%s': origin is not finite", tn, nm);
        double len = mn_vec3_norm(d->dir);
        if (!mn_vec3_isfinite(d->dir) || !(len > 1e-12))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, what,
                                "%s constraint '%s': degenerate %s (zero length)", tn, nm, what);
        out->n = mn_vec3_scale(d->dir, 1.0 / len);
        basis_across(out->n, &out->u1, &out->u2);
        break;
    }
    case MN_CON_EQUAL: {
        if (d->handle2 < 0 || d->handle2 >= s->nh)
            return mn_error_set(err, MN_ERR_NOTFOUND, NULL, 0, "handle2",
                                "equal constraint '%s': no handle %d", nm, d->handle2);
        if (!point_like(&s->h[d->handle2]))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "handle2",
                                "equal constraint '%s': handle '%s' is an orientation handle", nm,
                                s->h[d->handle2].name);
        if (d->handle2 == d->handle)
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "handle2",
                                "equal constraint '%s': a handle equal to itself", nm);
        if (uf_find(s->uf, d->handle) == uf_find(s->uf, d->handle2))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "handle2",
                                "equal constraint '%s': cyclic equalities ('%s' and '%s' are "
                                "already equal through others)",
                                nm, h->name, s->h[d->handle2].name);
        break;
    }
    case MN_CON_BALANCE: {
        if (d->npolygon < 1)
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "polygon",
                                "balance constraint '%s': empty support polygon", nm);
        if (d->npolygon < 3 || d->npolygon > MN_MAX_POLYGON)
            return mn_error_set(
                err, MN_ERR_ARG, NULL, 0, "polygon",
                "balance constraint '%s': support polygon needs 3 to %d vertices, has %d", nm,
                MN_MAX_POLYGON, d->npolygon);
        double len = mn_vec3_norm(d->up);
        if (!mn_vec3_isfinite(d->up) || !(len > 1e-12))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "up",
                                "balance constraint '%s': up is zero or not finite", nm);
        if (!(d->margin >= 0) || !isfinite(d->margin))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "margin",
                                "balance constraint '%s': margin must be >= 0", nm);
        out->n = mn_vec3_scale(d->up, 1.0 / len);
        basis_across(out->n, &out->u1, &out->u2);
        double area = 0;
        for (int i = 0; i < d->npolygon; i++) {
            if (!mn_vec3_isfinite(d->polygon[i]))
                return mn_error_set(err, MN_ERR_ARG, NULL, 0, "polygon",
                                    "balance constraint '%s': vertex %d is not finite", nm, i);
            out->poly[i][0] = mn_vec3_dot(d->polygon[i], out->u1);
            out->poly[i][1] = mn_vec3_dot(d->polygon[i], out->u2);
        }
        int np = d->npolygon;
        for (int i = 0; i < np; i++) {
            const double* a = out->poly[i];
            const double* b = out->poly[(i + 1) % np];
            area += a[0] * b[1] - a[1] * b[0];
        }
        area *= 0.5;
        if (area < 0) { /* make it counter-clockwise */
            for (int i = 0; i < np / 2; i++)
                for (int k = 0; k < 2; k++) {
                    double t = out->poly[i][k];
                    out->poly[i][k] = out->poly[np - 1 - i][k];
                    out->poly[np - 1 - i][k] = t;
                }
            area = -area;
        }
        double ext = 0;
        for (int i = 0; i < np; i++)
            ext = fmax(ext, fmax(fabs(out->poly[i][0]), fabs(out->poly[i][1])));
        if (!(area > 1e-12 * (ext * ext + 1e-300)))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "polygon",
                                "balance constraint '%s': degenerate support polygon (zero area)",
                                nm);
        for (int i = 0; i < np; i++) {
            const double* a = out->poly[i];
            const double* b = out->poly[(i + 1) % np];
            const double* c = out->poly[(i + 2) % np];
            double cr = (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]);
            if (cr < -1e-12 * (ext * ext))
                return mn_error_set(
                    err, MN_ERR_ARG, NULL, 0, "polygon",
                    "balance constraint '%s': support polygon is not convex at vertex %d", nm,
                    (i + 1) % np);
        }
        break;
    }
    default:
        break;
    }
    return MN_OK;
}

/* Columns of a constraint: its handle's DOFs, or the union of both for an equality. */
static int union_cols(const csys_handle* a, const csys_handle* b, int* out) {
    int i = 0, j = 0, n = 0;
    while (i < a->ndof || (b && j < b->ndof)) {
        if (!b || j >= b->ndof || (i < a->ndof && a->dofs[i] < b->dofs[j]))
            out[n++] = a->dofs[i++];
        else if (i >= a->ndof || b->dofs[j] < a->dofs[i])
            out[n++] = b->dofs[j++];
        else {
            out[n++] = a->dofs[i++];
            j++;
        }
    }
    return n;
}

int mn_csys_add_constraint(mn_csys* s, const mn_constraint_def* def, mn_error* err) {
    mn_error_clear(err);
    if (!s || !def) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "constraint", "NULL argument");
        return -1;
    }
    const char* nm = def->name ? def->name : "";
    if (s->nc >= s->max_c) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "constraints",
                     "constraint '%s': the system holds at most %d constraints", nm, s->max_c);
        return -1;
    }
    if (def->name && def->name[0] && mn_csys_find_constraint(s, def->name) >= 0) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "name", "constraint '%s': duplicate name", nm);
        return -1;
    }
    csys_con* c = &s->c[s->nc];
    if (check_con(s, def, c, err) != MN_OK) return -1;
    c->def = *def;
    c->def.name = NULL;
    if (def->type == MN_CON_ORIENT) c->def.target_rot = mn_quat_normalize(def->target_rot);
    if (def->type != MN_CON_EQUAL) c->def.handle2 = -1;
    snprintf(c->name, sizeof c->name, "%s", nm);
    c->ncols = union_cols(&s->h[def->handle],
                          def->type == MN_CON_EQUAL ? &s->h[def->handle2] : NULL, c->cols);
    c->valid = 0;
    c->nrows = 0;
    c->residual = 0;
    c->unmet = 0;
    if (def->type == MN_CON_EQUAL)
        s->uf[uf_find(s->uf, def->handle)] = uf_find(s->uf, def->handle2);
    s->nc++;
    return s->nc - 1;
}

mn_status mn_csys_remove_constraint(mn_csys* s, int c) {
    if (!s || c < 0 || c >= s->nc) return MN_ERR_ARG;
    /* the slots keep their own column and Jacobian buffers: the removed one's go last */
    int* cols = s->c[c].cols;
    double* J = s->c[c].J;
    memmove(&s->c[c], &s->c[c + 1], sizeof(csys_con) * (size_t)(s->nc - 1 - c));
    s->nc--;
    s->c[s->nc].cols = cols;
    s->c[s->nc].J = J;
    /* the equalities that remain join their handles again */
    for (int i = 0; i < s->nh; i++)
        s->uf[i] = i;
    for (int i = 0; i < s->nc; i++)
        if (s->c[i].def.type == MN_CON_EQUAL)
            s->uf[uf_find(s->uf, s->c[i].def.handle)] = uf_find(s->uf, s->c[i].def.handle2);
    return MN_OK;
}

mn_status mn_csys_set_target(mn_csys* s, int c, mn_vec3 target) {
    if (!s || c < 0 || c >= s->nc || s->c[c].def.type != MN_CON_PIN || !mn_vec3_isfinite(target))
        return MN_ERR_ARG;
    s->c[c].def.target = target;
    s->c[c].valid = 0;
    return MN_OK;
}

mn_status mn_csys_set_target_rot(mn_csys* s, int c, mn_quat target) {
    if (!s || c < 0 || c >= s->nc || s->c[c].def.type != MN_CON_ORIENT ||
        !mn_quat_isfinite(target) || fabs(mn_quat_norm(target) - 1) > 1e-6)
        return MN_ERR_ARG;
    s->c[c].def.target_rot = mn_quat_normalize(target);
    orient_axis_basis(&s->c[c].def, &s->c[c]);
    s->c[c].valid = 0;
    return MN_OK;
}

mn_status mn_csys_set_joint_scale(mn_csys* s, int figure, int joint, double scale) {
    if (!s || figure < 0 || figure >= s->nfig || !(scale >= 0) || !isfinite(scale))
        return MN_ERR_ARG;
    const mn_model* m = s->fig[figure].m;
    if (joint < 0 || joint >= m->njoint) return MN_ERR_ARG;
    int a = m->jnt_dofadr[joint], n = mn_joint_type_nv((mn_joint_type)m->jnt_type[joint]);
    for (int k = a; k < a + n; k++)
        s->K0[s->fig[figure].dof0 + k] = scale / m->dof_stiffness[k];
    return MN_OK;
}

double mn_csys_joint_scale(const mn_csys* s, int figure, int joint) {
    if (!s || figure < 0 || figure >= s->nfig) return -1;
    const mn_model* m = s->fig[figure].m;
    if (joint < 0 || joint >= m->njoint) return -1;
    if (mn_joint_type_nv((mn_joint_type)m->jnt_type[joint]) == 0) return 1;
    int k = m->jnt_dofadr[joint];
    return s->K0[s->fig[figure].dof0 + k] * m->dof_stiffness[k];
}

void mn_csys_reset_joint_scales(mn_csys* s) {
    if (!s) return;
    for (int f = 0; f < s->nfig; f++) {
        const mn_model* m = s->fig[f].m;
        for (int k = 0; k < m->nv; k++)
            s->K0[s->fig[f].dof0 + k] = 1.0 / m->dof_stiffness[k];
    }
}

/* Moves a PLANE (origin, normal) or a LINE (origin, direction) between frames: animated
 * constraints (Welman 7.2.1). */
mn_status mn_csys_set_plane(mn_csys* s, int c, mn_vec3 origin, mn_vec3 dir) {
    if (!s || c < 0 || c >= s->nc ||
        (s->c[c].def.type != MN_CON_PLANE && s->c[c].def.type != MN_CON_LINE) ||
        !mn_vec3_isfinite(origin) || !mn_vec3_isfinite(dir))
        return MN_ERR_ARG;
    double len = mn_vec3_norm(dir);
    if (!(len > 1e-12)) return MN_ERR_ARG;
    s->c[c].def.origin = origin;
    s->c[c].def.dir = dir;
    s->c[c].n = mn_vec3_scale(dir, 1.0 / len);
    basis_across(s->c[c].n, &s->c[c].u1, &s->c[c].u2);
    s->c[c].valid = 0;
    return MN_OK;
}

mn_status mn_csys_set_enabled(mn_csys* s, int c, int enabled) {
    if (!s || c < 0 || c >= s->nc) return MN_ERR_ARG;
    s->c[c].def.enabled = enabled != 0;
    s->c[c].valid = 0;
    return MN_OK;
}

mn_status mn_csys_set_weight(mn_csys* s, int c, double weight) {
    if (!s || c < 0 || c >= s->nc || !(weight > 0) || !isfinite(weight)) return MN_ERR_ARG;
    s->c[c].def.weight = weight;
    return MN_OK;
}

/* ---- drags ----------------------------------------------------------------------------- */

mn_status mn_csys_drag(mn_csys* s, int h, mn_vec3 target, double weight, int priority) {
    if (!s || h < 0 || h >= s->nh || !point_like(&s->h[h])) return MN_ERR_ARG;
    if (!mn_vec3_isfinite(target) || !(weight > 0) || !isfinite(weight) || priority < 0 ||
        priority > 1000)
        return MN_ERR_ARG;
    csys_handle* hd = &s->h[h];
    hd->drag = DRAG_TARGET;
    hd->drag_vec = target;
    hd->drag_weight = weight;
    hd->drag_priority = priority;
    return MN_OK;
}

mn_status mn_csys_drag_rot(mn_csys* s, int h, mn_quat target, double weight, int priority) {
    if (!s || h < 0 || h >= s->nh || s->h[h].type != MN_HANDLE_ORIENT) return MN_ERR_ARG;
    if (!mn_quat_isfinite(target) || fabs(mn_quat_norm(target) - 1) > 1e-6 || !(weight > 0) ||
        !isfinite(weight) || priority < 0 || priority > 1000)
        return MN_ERR_ARG;
    csys_handle* hd = &s->h[h];
    hd->drag = DRAG_TARGET;
    hd->drag_R = mn_quat_to_mat3(mn_quat_normalize(target));
    hd->drag_weight = weight;
    hd->drag_priority = priority;
    return MN_OK;
}

mn_status mn_csys_push(mn_csys* s, int h, mn_vec3 force) {
    if (!s || h < 0 || h >= s->nh || !point_like(&s->h[h]) || !mn_vec3_isfinite(force))
        return MN_ERR_ARG;
    s->h[h].drag = DRAG_FORCE;
    s->h[h].drag_vec = force;
    s->h[h].drag_weight = 1;
    s->h[h].drag_priority = 0;
    return MN_OK;
}

mn_status mn_csys_release(mn_csys* s, int h) {
    if (!s || h < 0 || h >= s->nh) return MN_ERR_ARG;
    s->h[h].drag = DRAG_NONE;
    return MN_OK;
}

double mn_csys_drag_error(mn_csys* s, int h) {
    if (!s || h < 0 || h >= s->nh || s->h[h].drag != DRAG_TARGET) return 0;
    mn_csys_eval_handle(s, h);
    return mn_csys_drag_dist(&s->h[h]);
}

mn_status mn_csys_handle_value(mn_csys* s, int h, mn_vec3* pos, mn_mat3* rot) {
    if (!s || h < 0 || h >= s->nh) return MN_ERR_ARG;
    mn_csys_eval_handle(s, h);
    if (pos) *pos = s->h[h].pos;
    if (rot) *rot = s->h[h].type == MN_HANDLE_ORIENT ? s->h[h].rot : mn_mat3_identity();
    return MN_OK;
}

double mn_csys_residual(const mn_csys* s, int c) {
    return s && c >= 0 && c < s->nc ? s->c[c].residual : 0;
}

int mn_csys_unmet(const mn_csys* s, int c) {
    return s && c >= 0 && c < s->nc ? s->c[c].unmet : 0;
}

mn_comfort mn_comfort_default(void) {
    mn_comfort c = {.gain = 0.05, .limit_margin = 0.1, .limit_gain = 0.5};
    return c;
}

mn_status mn_csys_set_comfort(mn_csys* s, const mn_comfort* c) {
    if (!s) return MN_ERR_ARG;
    if (!c) {
        s->comfort_on = 0;
        return MN_OK;
    }
    if (!(c->gain >= 0 && c->gain <= 1) || !(c->limit_margin >= 0 && c->limit_margin <= 0.5) ||
        !(c->limit_gain >= 0 && c->limit_gain <= 1))
        return MN_ERR_ARG;
    s->comfort = *c;
    s->comfort_on = c->gain > 0 || (c->limit_gain > 0 && c->limit_margin > 0);
    return MN_OK;
}

mn_status mn_csys_set_rest(mn_csys* s, int figure, const double* q) {
    if (!s || figure < 0 || figure >= s->nfig) return MN_ERR_ARG;
    const mn_model* m = s->fig[figure].m;
    int at = 0;
    for (int f = 0; f < figure; f++)
        at += s->fig[f].m->nq;
    if (q && mn_q_check(m, q) != MN_OK) return MN_ERR_ARG;
    memcpy(s->rest + at, q ? q : m->q0, sizeof(double) * (size_t)m->nq);
    return MN_OK;
}

mn_status mn_csys_set_comfort_weight(mn_csys* s, int figure, int joint, double w) {
    if (!s || figure < 0 || figure >= s->nfig || !(w >= 0) || !isfinite(w)) return MN_ERR_ARG;
    const mn_model* m = s->fig[figure].m;
    if (joint < 0 || joint >= m->njoint) return MN_ERR_ARG;
    int a = m->jnt_dofadr[joint], n = mn_joint_type_nv((mn_joint_type)m->jnt_type[joint]);
    for (int k = a; k < a + n; k++)
        s->cw[s->fig[figure].dof0 + k] = w;
    return MN_OK;
}
