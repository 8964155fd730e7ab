/* Shared machinery of the geometric chain IK methods: chain set-up, closed-form joint
 * steps (Welman 4.2.1), limits, and bookkeeping. See geo_common.h. */
#include "ik/geo_common.h"

#include <string.h>

/* ---- chain ----------------------------------------------------------------------------- */

mn_status mn_geo_chain_build(const mn_model* m, mn_data* d, const mn_ik_problem* p,
                             const mn_ik_options* o, mn_geo_chain* c) {
    memset(c, 0, sizeof *c);
    mn_ikc ik;
    mn_status st = mn_ikc_build(m, d, p->base, p->tip, p->point, o->free_locked, &d->arena, &ik);
    if (st != MN_OK) return st;
    c->m = m;
    c->ch = ik.ch;
    c->w = ik.w;
    int n = c->ch.njoint;
    c->qbest = mn_arena_alloc(&d->arena, (size_t)(2 * c->ch.nq + c->ch.ndof + 1) * sizeof(double));
    if (!c->qbest) return MN_ERR_NOMEM;
    c->qtmp = c->qbest + c->ch.nq;
    c->vtmp = c->qtmp + c->ch.nq;

    c->base = p->base >= 0 ? d->xf[p->base] : mn_xform_identity();
    c->point = p->point;
    c->use_pos = p->use_position != 0;
    c->use_rot = p->use_orientation != 0;
    c->pd = mn_xform_apply(&c->base, p->target_pos);
    mn_mat3 Rt = mn_quat_to_mat3(mn_quat_normalize(p->target_rot));
    c->Rd = mn_mat3_mul(&c->base.R, &Rt);

    /* W, the world scale of Welman's alpha = k / W: the length of the chain. */
    double W = 0;
    for (int i = 1; i < n; i++)
        W += mn_vec3_dist(d->xf[c->ch.jnt[i]].p, d->xf[c->ch.jnt[i - 1]].p);
    if (n > 0) W += mn_vec3_norm(mn_mat3_mulv(&d->xf[p->tip].R, p->point));
    c->reach = W > 1e-12 ? W : 1.0;
    double wpos = p->w_pos > 0 ? p->w_pos : 1.0, wrot = p->w_rot > 0 ? p->w_rot : 1.0;
    c->wp = c->use_pos ? wpos / (c->reach * c->reach) : 0.0;
    c->wo = c->use_rot ? wrot : 0.0;
    c->limits = o->respect_limits != 0;
    c->max_step = o->max_step;
    c->cpu_clock = o->timeout_cpu != 0;
    c->deadline = mn_ik_deadline(o->timeout_ms, c->cpu_clock);
    return MN_OK;
}

mn_vec3 mn_geo_effector(const mn_geo_chain* c, const mn_data* d) {
    return mn_xform_apply(&d->xf[c->ch.jnt[c->ch.njoint - 1]], c->point);
}

/* Angle of the rotation A B^T, accurate near zero (atan2 of the sine and cosine parts). */
static double rotation_angle(const mn_mat3* A, const mn_mat3* B) {
    mn_mat3 M = mn_mat3_mul(A, &(mn_mat3){{B->m[0], B->m[3], B->m[6], B->m[1], B->m[4], B->m[7],
                                           B->m[2], B->m[5], B->m[8]}});
    const double* x = M.m;
    mn_vec3 v = mn_v3(x[7] - x[5], x[2] - x[6], x[3] - x[1]);
    return atan2(0.5 * mn_vec3_norm(v), 0.5 * (x[0] + x[4] + x[8] - 1.0));
}

void mn_geo_errors(const mn_geo_chain* c, const mn_data* d, double* pos_err, double* rot_err) {
    *pos_err = c->use_pos ? mn_vec3_dist(c->pd, mn_geo_effector(c, d)) : 0.0;
    *rot_err = c->use_rot ? rotation_angle(&c->Rd, &d->xf[c->ch.jnt[c->ch.njoint - 1]].R) : 0.0;
}

double mn_geo_merit(const mn_geo_chain* c, double pos_err, double rot_err) {
    double e = pos_err / c->reach;
    return e * e + rot_err * rot_err;
}

int mn_geo_met(const mn_ik_options* o, const mn_geo_chain* c, double pos_err, double rot_err) {
    return (!c->use_pos || pos_err <= o->tol_pos) && (!c->use_rot || rot_err <= o->tol_rot);
}

/* ---- rotations ------------------------------------------------------------------------- */

mn_quat mn_geo_shortest_arc(mn_vec3 u, mn_vec3 v) {
    double nu = mn_vec3_norm(u), nv = mn_vec3_norm(v);
    if (!(nu > 1e-300) || !(nv > 1e-300)) return mn_quat_identity();
    u = mn_vec3_scale(u, 1.0 / nu);
    v = mn_vec3_scale(v, 1.0 / nv);
    double dot = mn_vec3_dot(u, v);
    if (dot < -1.0 + 1e-12) {
        /* opposite: half a turn about any axis across u */
        mn_vec3 perp = mn_vec3_perpendicular(u);
        return mn_q4(0, perp.x, perp.y, perp.z);
    }
    mn_vec3 x = mn_vec3_cross(u, v);
    return mn_quat_normalize(mn_q4(1.0 + dot, x.x, x.y, x.z));
}

/* Eigenvector of the largest eigenvalue of a symmetric 4x4 matrix by cyclic Jacobi
 * rotations (Numerical Recipes 11.1): a fixed small budget, deterministic. */
static void sym4_top_eigenvector(double A[4][4], double v[4]) {
    double V[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
    double scale = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            scale += A[i][j] * A[i][j];
    for (int sweep = 0; sweep < 32; sweep++) {
        double off = 0;
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++)
                off += A[i][j] * A[i][j];
        if (!(off > 1e-30 * scale)) break;
        for (int p = 0; p < 4; p++)
            for (int q = p + 1; q < 4; q++) {
                if (A[p][q] == 0.0) continue;
                double theta = (A[q][q] - A[p][p]) / (2.0 * A[p][q]);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double cs = 1.0 / sqrt(t * t + 1.0), sn = t * cs;
                for (int k = 0; k < 4; k++) { /* A <- A P (columns p, q) */
                    double akp = A[k][p], akq = A[k][q];
                    A[k][p] = cs * akp - sn * akq;
                    A[k][q] = sn * akp + cs * akq;
                }
                for (int k = 0; k < 4; k++) { /* A <- P^T A (rows p, q) */
                    double apk = A[p][k], aqk = A[q][k];
                    A[p][k] = cs * apk - sn * aqk;
                    A[q][k] = sn * apk + cs * aqk;
                }
                for (int k = 0; k < 4; k++) { /* V <- V P */
                    double vkp = V[k][p], vkq = V[k][q];
                    V[k][p] = cs * vkp - sn * vkq;
                    V[k][q] = sn * vkp + cs * vkq;
                }
            }
    }
    int best = 0;
    for (int i = 1; i < 4; i++)
        if (A[i][i] > A[best][best]) best = i;
    for (int i = 0; i < 4; i++)
        v[i] = V[i][best];
}

mn_quat mn_geo_best_rotation(const mn_vec3* a, const mn_vec3* b, const double* w, int n) {
    /* S[r][c] = sum w a_r b_c (Horn's M, "left" a to "right" b) */
    double S[3][3] = {{0}};
    for (int k = 0; k < n; k++) {
        double av[3] = {a[k].x, a[k].y, a[k].z}, bv[3] = {b[k].x, b[k].y, b[k].z};
        for (int r = 0; r < 3; r++)
            for (int cc = 0; cc < 3; cc++)
                S[r][cc] += w[k] * av[r] * bv[cc];
    }
    double xx = S[0][0], xy = S[0][1], xz = S[0][2], yx = S[1][0], yy = S[1][1], yz = S[1][2];
    double zx = S[2][0], zy = S[2][1], zz = S[2][2];
    double N[4][4] = {{xx + yy + zz, yz - zy, zx - xz, xy - yx},
                      {yz - zy, xx - yy - zz, xy + yx, zx + xz},
                      {zx - xz, xy + yx, -xx + yy - zz, yz + zy},
                      {xy - yx, zx + xz, yz + zy, -xx - yy + zz}};
    double v[4];
    sym4_top_eigenvector(N, v);
    mn_quat q = mn_quat_normalize(mn_q4(v[0], v[1], v[2], v[3]));
    if (q.w < 0) q = mn_q4(-q.w, -q.x, -q.y, -q.z);
    return q;
}

/* ---- joint steps ----------------------------------------------------------------------- */

/* x <- dR (x - o) + o + t for the frames of chain joints k..n-1: every frame distal to
 * joint k moves rigidly with it. */
static void move_frames(const mn_geo_chain* c, mn_data* d, int k, const mn_mat3* dR, mn_vec3 o,
                        mn_vec3 t) {
    for (int i = c->tip_only ? c->ch.njoint - 1 : k; i < c->ch.njoint; i++) {
        mn_xform* X = &d->xf[c->ch.jnt[i]];
        X->R = mn_mat3_mul(dR, &X->R);
        X->p = mn_vec3_add(mn_vec3_add(o, mn_mat3_mulv(dR, mn_vec3_sub(X->p, o))), t);
    }
}

/* Moves a hinge (angle) or slide (length) of chain joint k by delta, within its limits, and
 * the frames distal to it: a turn about the joint's world axis through its origin, or a
 * shift along it. Returns the size of the change applied. */
static double apply_1dof(mn_geo_chain* c, mn_data* d, int k, double delta) {
    int j = c->ch.jnt[k];
    double* qj = d->q + c->m->jnt_qadr[j];
    double qn = mn_geo_limit(c, j, qj[0] + delta);
    double dv = qn - qj[0];
    if (dv == 0.0 || !isfinite(dv)) return 0.0;
    qj[0] = qn;
    const mn_xform* X = &d->xf[j];
    mn_vec3 a = mn_mat3_mulv(&X->R, c->m->jnt_axis[j]);
    if (c->m->jnt_type[j] == MN_JOINT_HINGE) {
        mn_mat3 dR = mn_mat3_axis_angle(a, dv);
        move_frames(c, d, k, &dR, X->p, mn_v3(0, 0, 0));
    } else {
        mn_mat3 I = mn_mat3_identity();
        move_frames(c, d, k, &I, X->p, mn_vec3_scale(a, dv));
    }
    return fabs(dv);
}

/* A BALL's state is R_j = R_pre R(qb); a world rotation D about its pivot gives
 * R(qb') = R(qb) (R_j^T D R_j): the local increment multiplies on the right (model.h:
 * a ball's DOFs are an angular velocity in its own frame). */
static double apply_ball(mn_geo_chain* c, mn_data* d, int k, mn_quat dq) {
    const mn_model* m = c->m;
    int j = c->ch.jnt[k];
    /* a free joint whose position is held turns as a ball: its quaternion follows the position */
    double* qj = d->q + m->jnt_qadr[j] + (m->jnt_type[j] == MN_JOINT_FREE ? 3 : 0);
    mn_xform* X = &d->xf[j];
    mn_quat qR = mn_quat_from_mat3(&X->R);
    mn_quat qb = mn_quat_normalize(mn_q4(qj[0], qj[1], qj[2], qj[3]));
    mn_quat dl = mn_quat_mul(mn_quat_mul(mn_quat_conj(qR), dq), qR);
    mn_quat qn = mn_quat_normalize(mn_quat_mul(qb, dl));
    if (c->limits && m->jnt_limited[j] && m->jnt_type[j] == MN_JOINT_BALL)
        qn = mn_ball_clamp(qn, m->jnt_axis[j], m->jnt_swing[j], m->jnt_twist[2 * j],
                           m->jnt_twist[2 * j + 1]);
    if (!mn_quat_isfinite(qn)) return 0.0;
    mn_quat actual = mn_quat_mul(mn_quat_conj(qb), qn); /* local increment after limits */
    mn_quat dw = mn_quat_mul(mn_quat_mul(qR, actual), mn_quat_conj(qR));
    if (dw.w < 0) dw = mn_q4(-dw.w, -dw.x, -dw.y, -dw.z);
    double ang = 2.0 * atan2(sqrt(dw.x * dw.x + dw.y * dw.y + dw.z * dw.z), dw.w);
    qj[0] = qn.w, qj[1] = qn.x, qj[2] = qn.y, qj[3] = qn.z;
    if (ang == 0.0) return 0.0;
    mn_mat3 dR = mn_quat_to_mat3(mn_quat_normalize(dw));
    move_frames(c, d, k, &dR, X->p, mn_v3(0, 0, 0));
    return ang;
}

static double clamp_abs(double v, double lim) {
    if (lim > 0 && v > lim) return lim;
    if (lim > 0 && v < -lim) return -lim;
    return v;
}

double mn_geo_step(mn_geo_chain* c, mn_data* d, int k, const mn_geo_goal* g, int flags) {
    const mn_model* m = c->m;
    int j = c->ch.jnt[k];
    int type = m->jnt_type[j];
    if (mn_geo_free_as_ball(c, k)) type = MN_JOINT_BALL;
    if (type != MN_JOINT_HINGE && type != MN_JOINT_SLIDE && type != MN_JOINT_BALL) return 0.0;
    if (mn_geo_held(c, k)) return 0.0;
    const mn_xform* X = &d->xf[j];
    mn_vec3 o = X->p;
    double wk = (flags & MN_GEO_WEIGHTED) ? c->w[k] : 1.0;
    double lim = (flags & MN_GEO_WEIGHTED) ? c->max_step : 0.0;

    /* Point pairs relative to the pivot (Welman Fig. 4.3: P_ic and P_id), with Wang and
     * Chen's configuration weight rho = min(|P_id|, |P_ic|) / max(|P_id|, |P_ic|). */
    mn_vec3 pic[2], pid[2];
    double wt[2];
    for (int i = 0; i < g->npt; i++) {
        pic[i] = mn_vec3_sub(g->pc[i], o);
        pid[i] = mn_vec3_sub(g->pd[i], o);
        wt[i] = g->wpt[i];
        if (flags & MN_GEO_RHO) wt[i] *= mn_ccd_rho_weight(pic[i], pid[i]);
    }
    double wo = g->use_rot ? g->wo : 0.0;

    if (type == MN_JOINT_HINGE) {
        /* Welman 4.2.1 eq. 4.19-4.23: g(phi) = k1 (1 - cos phi) + k2 cos phi + k3 sin phi,
         * maximal at phi = atan2(k3, k2 - k1) (the stationary point with g'' < 0). */
        mn_vec3 a = mn_mat3_mulv(&X->R, m->jnt_axis[j]);
        mn_ccd_hinge kh = {0, 0, 0};
        for (int i = 0; i < g->npt; i++)
            mn_ccd_hinge_add_point(&kh, a, pic[i], pid[i], wt[i]);
        if (wo > 0) mn_ccd_hinge_add_frame(&kh, a, &g->Rc, &g->Rd, wo);
        double phi = mn_ccd_hinge_angle(&kh);
        return apply_1dof(c, d, k, clamp_abs(wk * phi, lim));
    }
    if (type == MN_JOINT_SLIDE) {
        /* Welman eq. 4.24: lambda = (P_d - P_c) . axis, a weighted mean over the points */
        mn_vec3 a = mn_mat3_mulv(&X->R, m->jnt_axis[j]);
        double num = 0, den = 0;
        for (int i = 0; i < g->npt; i++) {
            num += wt[i] * mn_vec3_dot(mn_vec3_sub(pid[i], pic[i]), a);
            den += wt[i];
        }
        if (!(den > 0)) return 0.0;
        return apply_1dof(c, d, k, clamp_abs(wk * num / den, lim));
    }
    /* BALL: the same objective over all rotations, sum w P_id . R P_ic + wo sum u_jd . R u_jc;
     * one point alone leaves the twist free, and the shortest arc is the natural choice. */
    mn_quat dq;
    if (g->npt == 1 && wo <= 0) {
        dq = mn_geo_shortest_arc(pic[0], pid[0]);
    } else {
        mn_vec3 A[5], B[5];
        double w[5];
        int n = 0;
        for (int i = 0; i < g->npt; i++)
            A[n] = pic[i], B[n] = pid[i], w[n++] = wt[i];
        for (int cc = 0; cc < 3 && wo > 0; cc++)
            A[n] = mn_mat3_col(&g->Rc, cc), B[n] = mn_mat3_col(&g->Rd, cc), w[n++] = wo;
        if (n == 0) return 0.0;
        dq = mn_geo_best_rotation(A, B, w, n);
    }
    if (dq.w < 0) dq = mn_q4(-dq.w, -dq.x, -dq.y, -dq.z);
    mn_vec3 v = mn_v3(dq.x, dq.y, dq.z);
    double s = mn_vec3_norm(v);
    if (!(s > 0)) return 0.0;
    double ang = clamp_abs(wk * 2.0 * atan2(s, dq.w), lim);
    return apply_ball(c, d, k, mn_quat_axis_angle(mn_vec3_scale(v, 1.0 / s), ang));
}

double mn_geo_rotate(mn_geo_chain* c, mn_data* d, int k, mn_quat dq) {
    int j = c->ch.jnt[k];
    int type = c->m->jnt_type[j];
    if (mn_geo_held(c, k)) return 0.0;
    if (type == MN_JOINT_BALL || mn_geo_free_as_ball(c, k)) return apply_ball(c, d, k, dq);
    if (type != MN_JOINT_HINGE) return 0.0;
    /* the twist of dq about the hinge's world axis */
    mn_vec3 a = mn_mat3_mulv(&d->xf[j].R, c->m->jnt_axis[j]);
    double p = dq.x * a.x + dq.y * a.y + dq.z * a.z;
    double phi = (p != 0.0 || dq.w != 0.0) ? mn_angle_wrap(2.0 * atan2(p, dq.w)) : 0.0;
    return apply_1dof(c, d, k, phi);
}

void mn_geo_clamp_chain(const mn_geo_chain* c, mn_data* d) {
    const mn_model* m = c->m;
    if (!c->limits) return;
    int changed = 0;
    for (int k = 0; k < c->ch.njoint; k++) {
        int j = c->ch.jnt[k];
        if (mn_geo_held(c, k)) continue;
        changed |= mn_joint_clamp(m, j, d->q + m->jnt_qadr[j]);
    }
    if (changed) mn_fk(m, d);
}

void mn_geo_save(mn_geo_chain* c, const mn_data* d) {
    for (int i = 0; i < c->ch.nq; i++)
        c->qbest[i] = d->q[c->ch.qadr[i]];
}

void mn_geo_restore(const mn_geo_chain* c, mn_data* d) {
    for (int i = 0; i < c->ch.nq; i++)
        d->q[c->ch.qadr[i]] = c->qbest[i];
    mn_fk(c->m, d);
}

/* ---- the shared iteration -------------------------------------------------------------- */

/* Can the effector get to the target at all, ignoring limits? (distance from the chain's
 * first pivot within the chain's length) */
static int within_reach(const mn_geo_chain* c, const mn_data* d) {
    if (!c->use_pos) return 1;
    return mn_vec3_dist(c->pd, d->xf[c->ch.jnt[0]].p) < c->reach * (1.0 - 1e-9);
}

typedef struct geo_loop {
    mn_geo_chain* c;
    mn_data* d;
    mn_geo_pass pass;
    void* ctx;
} geo_loop;

static int geo_iterate(void* vx) {
    geo_loop* x = vx;
    x->pass(x->c, x->d, x->ctx);
    mn_fk(x->c->m, x->d);
    return MN_IK_MOVED; /* the driver judges progress by the merit */
}

static double geo_measure(void* vx, double* pe, double* re) {
    geo_loop* x = vx;
    mn_geo_errors(x->c, x->d, pe, re);
    return mn_geo_merit(x->c, *pe, *re);
}

static void geo_save(void* vx) {
    geo_loop* x = vx;
    mn_geo_save(x->c, x->d);
}

static void geo_restore(void* vx) {
    geo_loop* x = vx;
    mn_geo_restore(x->c, x->d);
}

/* mn_ik_escape_velocity applied to the chain's numbers of d->q (scratch in c->qtmp). */
static void geo_escape(void* vx) {
    geo_loop* x = vx;
    mn_geo_chain* c = x->c;
    mn_ikc ik;
    memset(&ik, 0, sizeof ik);
    ik.m = c->m;
    ik.ch = c->ch;
    mn_chain_gather(&c->ch, x->d->q, c->qtmp);
    mn_ik_escape_velocity(&ik, c->qtmp, MN_IK_ESCAPE_ANGLE, c->limits, c->vtmp);
    mn_chain_integrate(c->m, &c->ch, c->qtmp, c->vtmp, 1.0);
    if (c->limits) mn_chain_clamp(c->m, &c->ch, c->qtmp);
    mn_chain_scatter(&c->ch, c->qtmp, x->d->q);
    mn_fk(c->m, x->d);
}

static int geo_may_escape(void* vx) {
    geo_loop* x = vx;
    return within_reach(x->c, x->d);
}

mn_status mn_geo_iterate(mn_geo_chain* c, mn_data* d, const mn_ik_options* o, mn_ik_result* r,
                         mn_geo_pass pass, void* ctx, const char* name) {
    mn_geo_clamp_chain(c, d);
    geo_loop x = {c, d, pass, ctx};
    mn_ik_loop L = {.ctx = &x,
                    .iterate = geo_iterate,
                    .measure = geo_measure,
                    .save = geo_save,
                    .restore = geo_restore,
                    .escape = geo_escape,
                    .may_escape = geo_may_escape,
                    .use_pos = c->use_pos,
                    .use_rot = c->use_rot,
                    .cheap = 0};
    return mn_ik_drive(&L, o, r, name);
}

mn_status mn_geo_run(const mn_model* m, mn_data* d, const mn_ik_problem* p, const mn_ik_options* o,
                     mn_ik_result* r, mn_geo_pass pass, mn_geo_setup setup, void* ctx,
                     const char* name) {
    size_t mark = mn_arena_mark(&d->arena);
    mn_geo_chain c;
    mn_status st = mn_geo_chain_build(m, d, p, o, &c);
    if (st == MN_OK && setup && setup(&c, d, ctx) != 0) st = MN_ERR_NOMEM;
    if (st != MN_OK) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, st, "%s: workspace too small for the chain", name);
    }
    st = mn_geo_iterate(&c, d, o, r, pass, ctx, name);
    mn_arena_reset(&d->arena, mark);
    return st;
}
