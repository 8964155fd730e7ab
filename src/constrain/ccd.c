/* The CCD-based penalty method on branching chains with many goals (Welman 5.4).
 *
 * One sweep visits every joint from the leaves in towards the root: joints are stored
 * parent before child, so walking indices downwards solves every subtree before the joint
 * above it, which is the recursive traversal of 5.4. At a joint, the error measure is the
 * sum over the goals below it (eq. 5.8), so the coefficients k1, k2, k3 of eq. 4.20-4.22
 * are summed over those goals and the maximiser of
 *     g(phi) = k1 (1 - cos phi) + k2 cos phi + k3 sin phi                      (eq. 4.19)
 * is phi = atan2(k3, k2 - k1) (eq. 4.23; atan2 picks the maximising branch of the two
 * candidates directly). Translation DOFs take the weighted mean of the position errors
 * along their axis (eq. 4.24). Each change is scaled by the joint's weight w_i = 1 /
 * stiffness (4.2.1), and the goals' end-effectors are moved with the joint at once, so the
 * next joint sees the updated positions. Sweeps repeat until every goal is met or progress
 * stops; the goals still unmet then conflict and are reported.
 *
 * Goals: a pinned point (its target), a point in a plane or on a line (its current
 * projection), two equal points (each the other's current position), a pinned
 * orientation, balance (the projection into the support polygon), and drags.
 *
 * Past the thesis, which keeps CCD to geometric goals: a centre of mass is a goal too. A
 * joint moves the part of the figure below it rigidly, so with M the mass of the handle's
 * subtree, M_s the mass the joint moves and c_s its centre, the centre of mass moves by
 * M_s / M times the motion of c_s: the joint sees c_s as its end-effector, with the
 * desired point c_s + (M / M_s)(T - com) and the weight (M_s / M)^2. */
#include "constrain/csys_internal.h"

#include <marionette/linalg.h>

#include <stdio.h>
#include <string.h>

enum { G_PIN = 0, G_PLANE, G_LINE, G_EQUAL, G_ROT, G_BAL, G_DRAG };

typedef struct ccd_goal {
    int mode;
    int fig, joint; /* joint: the handle's joint; for a centre of mass its subtree root or -1 */
    int com;        /* the effector is a centre of mass */
    int rot;        /* an orientation goal (G_ROT, or a drag of an orientation handle) */
    int axis;       /* G_ROT: 0 the whole frame, 1..3 only that axis's direction */
    int handle;     /* the handle whose point or frame is the end-effector */
    int con;        /* constraint index, -1 for a drag */
    int other;      /* G_EQUAL: partner goal */
    double w;       /* goal weight */
    mn_vec3 p;      /* current end-effector point (points) */
    mn_mat3 R;      /* current end-effector frame (G_ROT) */
    mn_vec3 target;
    mn_mat3 Rt;
    int limb_met; /* the last limb step (limb_step) that moved the goal met it */
} ccd_goal;

typedef struct ccd_ctx {
    mn_csys* s;
    ccd_goal* g;
    int ng;
    mn_vec3* seg; /* world centre of every segment, all figures (jnt0 offsets) */
    int any_com;
    int balls[MN_CSYS_MAX_FIGURES]; /* the figure has a joint that may be ball_like */
    int absorb;                     /* leave out the goals the joints below restore */
    double tol, tol_rot;            /* the solve's tolerances (the limb step's stop) */
    int* top; /* every joint of every figure (jnt0 offsets): the top of its limb, or -1 */
} ccd_ctx;

size_t mn_csys_ccd_bytes(int max_goals, int njoint, int nq) {
    return sizeof(ccd_goal) * (size_t)(max_goals > 0 ? max_goals : 1) + 16 +
           sizeof(mn_vec3) * (size_t)(njoint > 0 ? njoint : 1) +
           sizeof(double) * (size_t)(nq > 0 ? nq : 1) +
           sizeof(int) * (size_t)(njoint > 0 ? njoint : 1);
}

/* Builds the goal list from the enabled constraints and drags (drags last); returns its
 * length. Equalities that involve a centre of mass are left to the other solvers. */
static int build_goals(mn_csys* s, ccd_goal* g) {
    int n = 0;
    for (int i = 0; i < s->nc; i++) {
        const csys_con* c = &s->c[i];
        const mn_constraint_def* d = &c->def;
        if (!d->enabled) continue;
        const csys_handle* h = &s->h[d->handle];
        if (d->type == MN_CON_EQUAL &&
            (h->type == MN_HANDLE_COM || s->h[d->handle2].type == MN_HANDLE_COM))
            continue;
        ccd_goal* a = &g[n];
        a->limb_met = 0;
        a->fig = h->fig, a->joint = h->joint, a->com = h->type == MN_HANDLE_COM, a->rot = 0;
        a->axis = 0;
        a->handle = d->handle, a->con = i, a->other = -1, a->w = d->weight;
        switch (d->type) {
        case MN_CON_PIN:
            a->mode = G_PIN, a->target = d->target;
            break;
        case MN_CON_PLANE:
            a->mode = G_PLANE;
            break;
        case MN_CON_LINE:
            a->mode = G_LINE;
            break;
        case MN_CON_BALANCE:
            a->mode = G_BAL;
            break;
        case MN_CON_ORIENT:
            a->mode = G_ROT, a->rot = 1, a->Rt = mn_quat_to_mat3(d->target_rot);
            a->axis = d->axis;
            break;
        case MN_CON_EQUAL: {
            const csys_handle* h2 = &s->h[d->handle2];
            a->mode = G_EQUAL, a->other = n + 1, a->w = 0.5 * d->weight;
            ccd_goal* b = &g[n + 1];
            *b = *a;
            b->fig = h2->fig, b->joint = h2->joint, b->handle = d->handle2, b->other = n;
            n++;
            break;
        }
        default:
            break;
        }
        n++;
    }
    for (int i = 0; i < s->nh; i++) {
        const csys_handle* h = &s->h[i];
        if (h->drag == DRAG_NONE) continue;
        ccd_goal* a = &g[n++];
        a->limb_met = 0;
        a->mode = G_DRAG, a->fig = h->fig, a->joint = h->joint, a->com = h->type == MN_HANDLE_COM;
        a->rot = h->type == MN_HANDLE_ORIENT, a->axis = 0;
        if (a->rot) a->Rt = h->drag_R;
        a->handle = i, a->con = -1, a->other = -1;
        a->w = h->drag == DRAG_TARGET ? h->drag_weight : 1;
        a->target = h->drag_vec; /* a force pulls toward h + f: filled per sweep */
    }
    return n;
}

/* Where the goal wants a point that is now at p. */
static mn_vec3 desired_at(const ccd_ctx* x, const ccd_goal* a, mn_vec3 p) {
    const mn_csys* s = x->s;
    switch (a->mode) {
    case G_PLANE: {
        const csys_con* c = &s->c[a->con];
        return mn_vec3_madd(p, -mn_vec3_dot(c->n, mn_vec3_sub(p, c->def.origin)), c->n);
    }
    case G_LINE: {
        const csys_con* c = &s->c[a->con];
        return mn_vec3_madd(c->def.origin, mn_vec3_dot(c->n, mn_vec3_sub(p, c->def.origin)), c->n);
    }
    case G_BAL: {
        /* back inside the shrunk polygon along the distance gradient */
        const csys_con* c = &s->c[a->con];
        double xy[2] = {mn_vec3_dot(c->u1, p), mn_vec3_dot(c->u2, p)}, gr[2];
        double v =
            mn_polygon_sd((const double(*)[2])c->poly, c->def.npolygon, xy, gr) + c->def.margin;
        if (!(v > 0)) return p;
        mn_vec3 g3 = mn_vec3_add(mn_vec3_scale(c->u1, gr[0]), mn_vec3_scale(c->u2, gr[1]));
        return mn_vec3_madd(p, -v, g3);
    }
    case G_EQUAL:
        return x->g[a->other].p;
    default:
        return a->target;
    }
}

/* The joints [lo, hi) of figure f whose mass a centre-of-mass goal averages. */
static void com_range(const ccd_ctx* x, const ccd_goal* a, int* lo, int* hi) {
    const mn_model* m = x->s->fig[a->fig].m;
    *lo = a->joint < 0 ? 0 : a->joint;
    *hi = a->joint < 0 ? m->njoint : m->jnt_subtree_end[a->joint];
}

/* Mass and centre of the joints [lo, hi) of figure f. */
static double mass_centre(const ccd_ctx* x, int f, int lo, int hi, mn_vec3* c) {
    const mn_model* m = x->s->fig[f].m;
    const mn_vec3* seg = x->seg + x->s->fig[f].jnt0;
    double M = 0;
    mn_vec3 acc = mn_v3(0, 0, 0);
    for (int k = lo; k < hi; k++) {
        M += m->jnt_mass[k];
        acc = mn_vec3_madd(acc, m->jnt_mass[k], seg[k]);
    }
    *c = M > 0 ? mn_vec3_scale(acc, 1.0 / M) : acc;
    return M;
}

/* A joint that the sweep may turn: not fixed, frozen or held. */
static int mobile(const ccd_ctx* x, int f, int k) {
    const mn_csys* s = x->s;
    const mn_model* m = s->fig[f].m;
    int t = m->jnt_type[k];
    if (t != MN_JOINT_HINGE && t != MN_JOINT_BALL && t != MN_JOINT_FREE) return 0;
    if (s->hold && mn_csys_joint_held(m, k)) return 0;
    int dof = m->jnt_dofadr[k] + (t == MN_JOINT_FREE ? 3 : 0);
    return s->K0[s->fig[f].dof0 + dof] * m->dof_stiffness[dof] > 0;
}

/* Whether joint k turns freely about its centre, as a ball does, with all of its turning
 * strictly below joint js: a mobile ball without limits, or the lowest of three mobile hinges on
 * one centre (no offset between them) with independent axes and no limits, the compound joint of
 * Welman 6.1.1. (A stick figure's hip "leg.1", "leg.2", "leg" has limits: what it reaches is not a
 * ball's, and taking it for one leaves its goals to joints that cannot meet them.) */
static int ball_like(const ccd_ctx* x, int f, int k, int js) {
    const mn_model* m = x->s->fig[f].m;
    if (m->jnt_type[k] == MN_JOINT_BALL) return mobile(x, f, k) && !m->jnt_limited[k];
    mn_vec3 ax[3];
    int n = 0;
    for (int c = k; c > js && n < 3; c = m->jnt_parent[c]) {
        if (m->jnt_type[c] != MN_JOINT_HINGE || !mobile(x, f, c) || m->jnt_limited[c]) return 0;
        ax[n++] = mn_mat3_mulv(&x->s->fig[f].d->xf[c].R, m->jnt_axis[c]);
        if (n < 3 && mn_vec3_norm(m->jnt_offset[c]) > 0) return 0;
    }
    return n == 3 && fabs(mn_vec3_dot(ax[0], mn_vec3_cross(ax[1], ax[2]))) >
                         0.1 * mn_vec3_norm(ax[0]) * mn_vec3_norm(ax[1]) * mn_vec3_norm(ax[2]);
}

/* ---- the limb step (past the thesis) ------------------------------------------------------
 * A stick figure's foot held in position and orientation by a leg of six limited hinges (hip
 * three, knee, ankle two) has as many goal rows as DOFs: coordinate descent on it, one hinge
 * at a time, converges linearly (each sweep's change the last one's times 0.88 to 0.99), and
 * the joints above weigh the foot against their own goals all the while. The recursive
 * traversal of 5.4 asks for the distal sub-problem solved before the joint above; for such
 * a limb it is solved as a block: when the sweep reaches the limb's top joint, a few
 * damped Gauss-Newton steps on the limb's hinges alone (Parent eq. 5.24 on the limb's own
 * Jacobian, the joints projected onto their limits) meet its goals, and the joints above
 * leave them out (absorbed()) as long as the limb meets them.
 *
 * A limb: a path of hinges (fixed joints between them allowed) from a top joint down to the
 * deepest joint of its goals, whose subtree holds goals of the pin and whole-frame orient
 * constraints only, all on that path, at most LIMB_MAX_DOF hinges and LIMB_MAX_ROWS rows. */
#define LIMB_MAX_DOF 8
#define LIMB_MAX_ROWS 12
#define LIMB_ITERS 10

static int is_ancestor_or_self(const mn_model* m, int anc, int j) {
    while (j > anc)
        j = m->jnt_parent[j];
    return j == anc;
}

/* Whether joint k may belong to a limb, and its goals' deepest joint in *tip. */
static int limb_joint(const ccd_ctx* x, int f, int k, int* tip) {
    const mn_model* m = x->s->fig[f].m;
    int t = m->jnt_type[k];
    if (t != MN_JOINT_FIXED && (t != MN_JOINT_HINGE || !mobile(x, f, k))) return 0;
    int je = m->jnt_subtree_end[k], deep = -1;
    for (int i = 0; i < x->ng; i++) {
        const ccd_goal* a = &x->g[i];
        if (a->fig != f) continue;
        if (a->com) return 0;
        if (a->joint < k || a->joint >= je) continue;
        if (a->con < 0 || !(a->mode == G_PIN || (a->mode == G_ROT && a->axis == 0))) return 0;
        if (deep < 0 || is_ancestor_or_self(m, deep, a->joint))
            deep = a->joint;
        else if (!is_ancestor_or_self(m, a->joint, deep))
            return 0; /* goals on two branches */
    }
    *tip = deep;
    return deep >= 0;
}

/* The top joint of the limb joint k belongs to, or -1: k and every joint up to the top are
 * limb joints with the same deepest goal, the top's parent is not, and the limb is small
 * enough. */
static int find_limb_top(const ccd_ctx* x, int f, int k) {
    const mn_model* m = x->s->fig[f].m;
    int tip, t2;
    if (!limb_joint(x, f, k, &tip)) return -1;
    int top = k;
    while (m->jnt_parent[top] >= 0 && limb_joint(x, f, m->jnt_parent[top], &t2) && t2 == tip)
        top = m->jnt_parent[top];
    int nd = 0, rows = 0;
    for (int j = tip; j >= top; j = m->jnt_parent[j]) {
        if (m->jnt_type[j] == MN_JOINT_HINGE) nd++;
        if (j == top) break;
    }
    for (int i = 0; i < x->ng; i++) {
        const ccd_goal* a = &x->g[i];
        if (a->fig == f && a->joint >= top && a->joint < m->jnt_subtree_end[top]) rows += 3;
    }
    return nd >= 2 && nd <= LIMB_MAX_DOF && rows <= LIMB_MAX_ROWS ? top : -1;
}

/* The limbs of the goals the sweeps weigh now into x->top: once per solve, and again when the
 * drags are dropped. */
static void find_limbs(ccd_ctx* x) {
    for (int f = 0; f < x->s->nfig; f++) {
        const mn_model* m = x->s->fig[f].m;
        int* top = x->top + x->s->fig[f].jnt0;
        for (int k = 0; k < m->njoint; k++)
            top[k] = find_limb_top(x, f, k);
    }
}

static int limb_top(const ccd_ctx* x, int f, int k) {
    return x->top[x->s->fig[f].jnt0 + k];
}

/* The limb's error rows (pins: target - p; orients: log(Rt R^T) times the figure size, so
 * that both are lengths) at the frames in d; returns their largest violation in *pe, *re. */
static int limb_error(const ccd_ctx* x, int f, int top, double* e, double* pe, double* re) {
    const mn_csys* s = x->s;
    const mn_model* m = s->fig[f].m;
    const mn_data* d = s->fig[f].d;
    int n = 0;
    *pe = *re = 0;
    for (int i = 0; i < x->ng; i++) {
        const ccd_goal* a = &x->g[i];
        if (a->fig != f || a->joint < top || a->joint >= m->jnt_subtree_end[top]) continue;
        double sw = sqrt(a->w);
        mn_vec3 v;
        if (a->mode == G_PIN) {
            v = mn_vec3_sub(a->target, mn_point_world(d, a->joint, s->h[a->handle].point));
            *pe = fmax(*pe, mn_vec3_norm(v));
        } else {
            v = mn_rotation_error(&a->Rt, &d->xf[a->joint].R);
            *re = fmax(*re, mn_vec3_norm(v));
            v = mn_vec3_scale(v, s->world_scale);
        }
        e[n++] = sw * v.x, e[n++] = sw * v.y, e[n++] = sw * v.z;
    }
    return n;
}

/* The limb's Jacobian (rows x nd, the rows of limb_error) from the frames in d: a hinge's
 * column for a goal below it is (a x (p - o), a). hinge[] gets the limb's hinges, top first. */
static int limb_jacobian(const ccd_ctx* x, int f, int top, int tip, double* J, int* hinge) {
    const mn_csys* s = x->s;
    const mn_model* m = s->fig[f].m;
    const mn_data* d = s->fig[f].d;
    int nd = 0;
    for (int j = tip;; j = m->jnt_parent[j]) {
        if (m->jnt_type[j] == MN_JOINT_HINGE) nd++;
        if (j == top) break;
    }
    int c = nd;
    for (int j = tip;; j = m->jnt_parent[j]) {
        if (m->jnt_type[j] == MN_JOINT_HINGE) {
            hinge[--c] = j;
            mn_vec3 ax = mn_mat3_mulv(&d->xf[j].R, m->jnt_axis[j]), o = d->xf[j].p;
            int r = 0;
            for (int i = 0; i < x->ng; i++) {
                const ccd_goal* a = &x->g[i];
                if (a->fig != f || a->joint < top || a->joint >= m->jnt_subtree_end[top]) continue;
                double sw = sqrt(a->w);
                mn_vec3 col = mn_v3(0, 0, 0);
                if (is_ancestor_or_self(m, j, a->joint))
                    col = a->mode == G_PIN
                              ? mn_vec3_cross(
                                    ax, mn_vec3_sub(
                                            mn_point_world(d, a->joint, s->h[a->handle].point), o))
                              : mn_vec3_scale(ax, s->world_scale);
                J[(r + 0) * nd + c] = sw * col.x;
                J[(r + 1) * nd + c] = sw * col.y;
                J[(r + 2) * nd + c] = sw * col.z;
                r += 3;
            }
        }
        if (j == top) break;
    }
    return nd;
}

/* Solves the limb below top for its goals (the limb step above), then brings its goals'
 * effectors and segment centres up to date for the joints above. */
static void limb_step(ccd_ctx* x, int f, int top, int limits) {
    mn_csys* s = x->s;
    const mn_model* m = s->fig[f].m;
    mn_data* d = s->fig[f].d;
    int tip;
    if (!limb_joint(x, f, top, &tip)) return;
    double e[LIMB_MAX_ROWS], J[LIMB_MAX_ROWS * LIMB_MAX_DOF], dq[LIMB_MAX_DOF], q0[LIMB_MAX_DOF];
    double work[LIMB_MAX_ROWS * LIMB_MAX_ROWS + LIMB_MAX_ROWS];
    int hinge[LIMB_MAX_DOF];
    mn_fk_subtree(m, d, top);
    double pe, re;
    int rows = limb_error(x, f, top, e, &pe, &re);
    for (int it = 0; it < LIMB_ITERS; it++) {
        if (pe <= 1e-3 * x->tol && re <= 1e-3 * x->tol_rot) break;
        double e2 = 0;
        for (int r = 0; r < rows; r++)
            e2 += e[r] * e[r];
        int nd = limb_jacobian(x, f, top, tip, J, hinge);
        for (int k = 0; k < nd; k++)
            q0[k] = d->q[m->jnt_qadr[hinge[k]]];
        /* Levenberg's damping, a hundredth of the error (the last steps are Gauss-Newton's),
         * and an active set for the limits: a hinge the step would push past a limit is
         * held there and the others solved again without it */
        double lam = 0.01 * sqrt(e2) + 1e-9 * s->world_scale, eb[LIMB_MAX_ROWS];
        int held[LIMB_MAX_DOF] = {0}, ok = 1;
        for (int pass = 0; pass <= nd && ok; pass++) {
            memcpy(eb, e, sizeof(double) * (size_t)rows);
            for (int k = 0; k < nd; k++) {
                if (!held[k]) continue;
                int j = hinge[k];
                double lim = dq[k] > 0 ? m->jnt_range[2 * j + 1] : m->jnt_range[2 * j];
                dq[k] = lim - q0[k];
                for (int r = 0; r < rows; r++) {
                    eb[r] -= J[r * nd + k] * dq[k];
                    J[r * nd + k] = 0;
                }
            }
            double sol[LIMB_MAX_DOF];
            if (mn_dls_solve(J, rows, nd, eb, lam, sol, work) != MN_OK) {
                ok = 0;
                break;
            }
            int more = 0;
            for (int k = 0; k < nd; k++) {
                if (held[k]) continue;
                dq[k] = sol[k];
                int j = hinge[k];
                if (limits && m->jnt_limited[j] &&
                    (q0[k] + dq[k] > m->jnt_range[2 * j + 1] ||
                     q0[k] + dq[k] < m->jnt_range[2 * j]))
                    held[k] = more = 1;
            }
            if (!more) break;
        }
        if (!ok) break;
        int better = 0;
        for (double h = 1; h > 1e-3 && !better; h *= 0.5) {
            for (int k = 0; k < nd; k++) {
                int j = hinge[k];
                double v = q0[k] + h * dq[k];
                if (limits && m->jnt_limited[j])
                    v = fmin(fmax(v, m->jnt_range[2 * j]), m->jnt_range[2 * j + 1]);
                d->q[m->jnt_qadr[j]] = v;
            }
            mn_fk_subtree(m, d, top);
            double pe1, re1, e1[LIMB_MAX_ROWS], s1 = 0;
            limb_error(x, f, top, e1, &pe1, &re1);
            for (int r = 0; r < rows; r++)
                s1 += e1[r] * e1[r];
            if (s1 < e2) {
                better = 1;
                memcpy(e, e1, sizeof(double) * (size_t)rows);
                pe = pe1, re = re1;
            }
        }
        if (!better) {
            for (int k = 0; k < nd; k++)
                d->q[m->jnt_qadr[hinge[k]]] = q0[k];
            mn_fk_subtree(m, d, top);
            break;
        }
    }
    int je = m->jnt_subtree_end[top];
    int met = pe <= x->tol && re <= x->tol_rot;
    for (int i = 0; i < x->ng; i++) {
        ccd_goal* a = &x->g[i];
        if (a->com || a->fig != f || a->joint < top || a->joint >= je) continue;
        a->p = mn_point_world(d, a->joint, s->h[a->handle].point);
        a->R = d->xf[a->joint].R;
        a->limb_met = met;
    }
    if (x->any_com) {
        mn_vec3* seg = x->seg + s->fig[f].jnt0;
        for (int k = top; k < je; k++)
            seg[k] = mn_xform_apply(&d->xf[k], m->jnt_com[k]);
    }
}

/* Whether the joints strictly between joint js and goal a's joint restore the goal by
 * themselves when js moves, so that js need not weigh it. This is the recursive traversal
 * of 5.4 taken at its word: the distal sub-problems are solved before, and again after,
 * the joint above them; a goal they can meet on their own only drags the joint above into
 * a compromise with the goals they cannot meet (a pinned foot holding the pelvis back from
 * the drag that the legs could follow), and the sweeps then settle on the penalty
 * compromise, constraints missed by millimetres, instead of on the constrained solution.
 * A frame (or one axis of it) is restored by any ball_like joint on the path; a point by a
 * ball_like joint b on the path with a turning joint below it, when the point's desired place pd
 * lies inside the annulus the links from b reach, with a margin of 0.5% of their length
 * (a chain near full stretch restores a point slowly, so it keeps weighing there). Only constraints
 * are taken out: drags, balance and centres of mass weigh at every joint above them. */
static int absorbed(const ccd_ctx* x, const ccd_goal* a, int js, mn_vec3 pd) {
    if (!x->absorb || a->mode == G_DRAG || a->mode == G_BAL || a->com) return 0;
    /* a goal of a limb below js: the limb step meets it */
    for (int k = a->joint; k > js; k = x->s->fig[a->fig].m->jnt_parent[k])
        if (limb_top(x, a->fig, k) == k) return a->limb_met;
    if (!x->balls[a->fig]) return 0;
    const mn_csys* s = x->s;
    const mn_model* m = s->fig[a->fig].m;
    const mn_data* d = s->fig[a->fig].d;
    if (a->rot) {
        for (int k = a->joint; k > js; k = m->jnt_parent[k])
            if (ball_like(x, a->fig, k, js)) return 1;
        return 0;
    }
    mn_vec3 below = s->h[a->handle].point; /* the link below joint k, in k's frame */
    double len = mn_vec3_norm(below), lmax = len, total = len;
    int turning = 0;
    for (int k = a->joint; k > js; k = m->jnt_parent[k]) {
        if (turning && total > 0 && ball_like(x, a->fig, k, js)) {
            double r = mn_vec3_dist(pd, d->xf[k].p);
            double rmin = fmax(0.0, 2 * lmax - total);
            if (r < 0.9999 * total && r > rmin + 1e-3 * total) return 1;
        }
        if (mobile(x, a->fig, k) && total > 0) {
            /* a hinge bends its chain in the plane across its axis only when its links lie
             * across it; otherwise the distances it gives are not the annulus's */
            if (m->jnt_type[k] == MN_JOINT_HINGE &&
                (fabs(mn_vec3_dot(m->jnt_axis[k], below)) > 0.05 * mn_vec3_norm(below) ||
                 fabs(mn_vec3_dot(m->jnt_axis[k], m->jnt_offset[k])) >
                     0.05 * mn_vec3_norm(m->jnt_offset[k])))
                return 0;
            turning = 1;
        }
        below = m->jnt_offset[k];
        double l = mn_vec3_norm(below);
        total += l;
        lmax = fmax(lmax, l);
    }
    return 0;
}

/* The end-effector that joint range [js, je) of figure f moves for goal a, where the goal
 * wants it, and the goal's weight there. 0 when the joint does not move the goal relative
 * to its target: not below it, or an equality whose two points both are (they move
 * rigidly together). */
static int effector(const ccd_ctx* x, const ccd_goal* a, int f, int js, int je, mn_vec3* pc,
                    mn_vec3* pd, double* w) {
    if (a->fig != f) return 0;
    if (a->com) {
        int lo, hi;
        com_range(x, a, &lo, &hi);
        int mlo, mhi;
        if (js >= lo && js < hi)
            mlo = js, mhi = je; /* the joint is inside the subtree */
        else if (js < lo && lo < je)
            mlo = lo, mhi = hi; /* an ancestor moves all of it */
        else
            return 0;
        mn_vec3 com, cs;
        double M = mass_centre(x, f, lo, hi, &com);
        double Ms = mass_centre(x, f, mlo, mhi, &cs);
        if (!(M > 0) || !(Ms > 0)) return 0;
        double ratio = Ms / M;
        *pc = cs;
        *pd = mn_vec3_madd(cs, 1.0 / ratio, mn_vec3_sub(desired_at(x, a, com), com));
        *w = a->w * ratio * ratio;
        return 1;
    }
    if (a->joint < js || a->joint >= je) return 0;
    if (a->mode == G_EQUAL) {
        const ccd_goal* b = &x->g[a->other];
        if (b->fig == f && b->joint >= js && b->joint < je) return 0;
    }
    *pc = a->p;
    *pd = desired_at(x, a, a->p);
    if (absorbed(x, a, js, *pd)) return 0;
    *w = a->w;
    return 1;
}

/* Moves the effectors (and segment centres) below joint range [js, je) of figure f: a
 * rotation R about o, then a translation t. */
static void move_goals(ccd_ctx* x, int f, int js, int je, const mn_mat3* R, mn_vec3 o, mn_vec3 t) {
    for (int i = 0; i < x->ng; i++) {
        ccd_goal* a = &x->g[i];
        if (a->com || a->fig != f || a->joint < js || a->joint >= je) continue;
        if (R) {
            a->p = mn_vec3_add(o, mn_mat3_mulv(R, mn_vec3_sub(a->p, o)));
            a->R = mn_mat3_mul(R, &a->R);
        }
        a->p = mn_vec3_add(a->p, t);
    }
    if (!x->any_com) return;
    mn_vec3* seg = x->seg + x->s->fig[f].jnt0;
    for (int k = js; k < je; k++) {
        if (R) seg[k] = mn_vec3_add(o, mn_mat3_mulv(R, mn_vec3_sub(seg[k], o)));
        seg[k] = mn_vec3_add(seg[k], t);
    }
}

/* Eq. 4.19-4.23 summed over the goals below the joint (eq. 5.8): the rotation angle about
 * the world axis ax through o that maximises the summed objective. */
static double best_angle(const ccd_ctx* x, int f, int js, int je, mn_vec3 ax, mn_vec3 o) {
    mn_ccd_hinge k = {0, 0, 0};
    for (int i = 0; i < x->ng; i++) {
        const ccd_goal* a = &x->g[i];
        if (a->rot) {
            if (a->fig != f || a->joint < js || a->joint >= je) continue;
            if (absorbed(x, a, js, a->p)) continue;
            if (a->axis) /* one axis held: its direction as a point about o */
                mn_ccd_hinge_add_point(&k, ax, mn_mat3_col(&a->R, a->axis - 1),
                                       mn_mat3_col(&a->Rt, a->axis - 1), a->w);
            else
                mn_ccd_hinge_add_frame(&k, ax, &a->R, &a->Rt, a->w);
            continue;
        }
        mn_vec3 P, D;
        double w;
        if (!effector(x, a, f, js, je, &P, &D, &w)) continue;
        mn_vec3 pc = mn_vec3_sub(P, o), pd = mn_vec3_sub(D, o);
        mn_ccd_hinge_add_point(&k, ax, pc, pd, w * mn_ccd_rho_weight(pc, pd) / x->s->world_scale);
    }
    return mn_ccd_hinge_angle(&k);
}

/* Eq. 4.24 summed: weighted mean position error along a translation axis. */
static double best_shift(const ccd_ctx* x, int f, int js, int je, mn_vec3 ax) {
    double num = 0, den = 0;
    for (int i = 0; i < x->ng; i++) {
        const ccd_goal* a = &x->g[i];
        mn_vec3 P, D;
        double w;
        if (a->rot || !effector(x, a, f, js, je, &P, &D, &w)) continue;
        num += w * mn_vec3_dot(mn_vec3_sub(D, P), ax);
        den += w;
    }
    return den > 0 ? num / den : 0;
}

static int goals_below(const ccd_ctx* x, int f, int js, int je) {
    for (int i = 0; i < x->ng; i++) {
        const ccd_goal* a = &x->g[i];
        if (a->fig != f) continue;
        if (a->com) return 1;
        if (a->joint >= js && a->joint < je) return 1;
    }
    return 0;
}

/* The direction in which the summed objective g rises fastest when joint range [js, je)
 * turns about a point o: the summed moment sum w (pc x pd) of its goals (the k3 of eq.
 * 4.22 for every axis at once); zero when no goal pulls. */
static mn_vec3 moment_axis(const ccd_ctx* x, int f, int js, int je, mn_vec3 o) {
    mn_vec3 mo = mn_v3(0, 0, 0);
    for (int i = 0; i < x->ng; i++) {
        const ccd_goal* a = &x->g[i];
        if (a->rot) {
            if (a->fig != f || a->joint < js || a->joint >= je) continue;
            if (absorbed(x, a, js, a->p)) continue;
            for (int c = 0; c < 3; c++) {
                if (a->axis && c != a->axis - 1) continue;
                mo = mn_vec3_madd(mo, a->w,
                                  mn_vec3_cross(mn_mat3_col(&a->R, c), mn_mat3_col(&a->Rt, c)));
            }
            continue;
        }
        mn_vec3 P, D;
        double w;
        if (!effector(x, a, f, js, je, &P, &D, &w)) continue;
        mn_vec3 pc = mn_vec3_sub(P, o), pd = mn_vec3_sub(D, o);
        w *= mn_ccd_rho_weight(pc, pd) / x->s->world_scale;
        mo = mn_vec3_madd(mo, w, mn_vec3_cross(pc, pd));
    }
    return mo;
}

/* Turns joint j's ball (or a free joint's rotation) quat by phi about the world axis ax
 * through o, and its goals with it; Rj is the joint's world frame, updated. */
static void ball_turn(ccd_ctx* x, int f, int j, double* quat, mn_mat3* Rj, mn_vec3 o, mn_vec3 ax,
                      double phi) {
    const mn_model* m = x->s->fig[f].m;
    mn_quat dq = mn_quat_axis_angle(mn_mat3_tmulv(Rj, ax), phi);
    mn_quat q = mn_q4(quat[0], quat[1], quat[2], quat[3]);
    q = mn_quat_normalize(mn_quat_mul(q, dq));
    quat[0] = q.w, quat[1] = q.x, quat[2] = q.y, quat[3] = q.z;
    mn_mat3 Rl = mn_quat_to_mat3(dq);
    *Rj = mn_mat3_mul(Rj, &Rl);
    mn_mat3 Rw = mn_mat3_axis_angle(ax, phi);
    move_goals(x, f, j, m->jnt_subtree_end[j], &Rw, o, mn_v3(0, 0, 0));
}

/* A ball's step (BALL, or the rotation of a FREE): first about the axis of the summed
 * moment, where one point goal is met in a single turn, then the rotation sequence about
 * the joint frame's own axes. */
static void ball_rotations(ccd_ctx* x, int f, int j, double* quat, mn_mat3 Rj, mn_vec3 o,
                           double wi) {
    const mn_model* m = x->s->fig[f].m;
    int je = m->jnt_subtree_end[j];
    mn_vec3 mo = moment_axis(x, f, j, je, o);
    double mn = mn_vec3_norm(mo);
    if (mn > 0 && isfinite(mn)) {
        mn_vec3 ax = mn_vec3_scale(mo, 1.0 / mn);
        double phi = wi * best_angle(x, f, j, je, ax, o);
        if (phi != 0 && isfinite(phi)) ball_turn(x, f, j, quat, &Rj, o, ax, phi);
    }
    for (int k = 0; k < 3; k++) {
        mn_vec3 ax = mn_mat3_col(&Rj, k);
        double phi = wi * best_angle(x, f, j, je, ax, o);
        if (phi == 0 || !isfinite(phi)) continue;
        ball_turn(x, f, j, quat, &Rj, o, ax, phi);
    }
}

/* The triangle step of joint k (past the thesis). When the only goal k weighs is one point
 * that the ball joint b above it (the next joint that turns) will swing into place, CCD's
 * own step at k (the point as near its target as k alone can put it) is the wrong distal
 * sub-problem: with the chain near full stretch, a point to be pulled in toward b lies
 * along the chain, k's step barely shortens it, and the sweeps crawl (a pelvis dragged
 * down over straight legs: hundreds of sweeps). What b needs from k is the point's
 * distance to b's centre made equal to its target's; then b's turn about the moment axis
 * meets it. For a hinge the angle about its axis; for a ball the turn in the plane of the
 * point, k and b, continuing the bend the chain has (a straight chain, with no bend to
 * continue, takes CCD's step). Returns the world axis and the angle in *ax, *phi, or 0
 * when the step does not apply. */
static int triangle_step(const ccd_ctx* x, int f, int k, mn_vec3 o, mn_vec3 hinge_ax, mn_vec3* ax,
                         double* phi) {
    const mn_model* m = x->s->fig[f].m;
    const mn_data* d = x->s->fig[f].d;
    int je = m->jnt_subtree_end[k];
    const ccd_goal* one = NULL;
    mn_vec3 P = mn_v3(0, 0, 0), D = P;
    for (int i = 0; i < x->ng; i++) {
        const ccd_goal* a = &x->g[i];
        if (a->fig != f) continue;
        if (a->rot) {
            if (a->joint < k || a->joint >= je) continue;
            if (!absorbed(x, a, k, a->p)) return 0;
            continue;
        }
        mn_vec3 pc, pd;
        double w;
        if (!effector(x, a, f, k, je, &pc, &pd, &w)) continue;
        if (one || a->mode == G_DRAG || a->com) return 0;
        one = a, P = pc, D = pd;
    }
    if (!one) return 0;
    int b = m->jnt_parent[k];
    while (b >= 0 && !mobile(x, f, b))
        b = m->jnt_parent[b];
    /* b weighs the point (no ball between them restores it) and reaches its target */
    if (b < 0 || m->jnt_type[b] != MN_JOINT_BALL || !ball_like(x, f, b, -1) ||
        absorbed(x, one, b, D) || !absorbed(x, one, m->jnt_parent[b], D))
        return 0;
    mn_vec3 ob = d->xf[b].p;
    mn_vec3 u = mn_vec3_sub(P, o), v = mn_vec3_sub(ob, o);
    double r = mn_vec3_dist(D, ob);
    mn_vec3 a3 = hinge_ax;
    if (m->jnt_type[k] == MN_JOINT_BALL) {
        mn_vec3 n = mn_vec3_cross(u, v);
        double nn = mn_vec3_norm(n);
        if (!(nn > 1e-6 * mn_vec3_norm(u) * mn_vec3_norm(v))) return 0;
        a3 = mn_vec3_scale(n, 1.0 / nn);
    }
    /* v . R(phi) u = A + B cos phi + C sin phi (eq. 4.19's form) equal to c, the value that
     * gives |R(phi) u - v| = r */
    double A = mn_vec3_dot(v, a3) * mn_vec3_dot(u, a3);
    double B = mn_vec3_dot(v, u) - A, C = mn_vec3_dot(a3, mn_vec3_cross(u, v));
    double c = 0.5 * (mn_vec3_dot(u, u) + mn_vec3_dot(v, v) - r * r);
    double rho = sqrt(B * B + C * C);
    if (!(rho > 0)) return 0;
    /* a distance k cannot give (a hinge whose axis is not across its links): CCD's step */
    if (!(fabs(c - A) <= rho)) return 0;
    double al = atan2(C, B), be = acos((c - A) / rho);
    double p1 = remainder(al + be, 2 * MN_PI), p2 = remainder(al - be, 2 * MN_PI);
    *phi = fabs(p1) < fabs(p2) ? p1 : p2;
    *ax = a3;
    return isfinite(*phi);
}

/* One leaves-to-root sweep over figure f. */
static void sweep(ccd_ctx* x, int f, int limits) {
    mn_csys* s = x->s;
    const mn_model* m = s->fig[f].m;
    mn_data* d = s->fig[f].d;
    for (int j = m->njoint - 1; j >= 0; j--) {
        int je = m->jnt_subtree_end[j];
        int type = m->jnt_type[j];
        if (type == MN_JOINT_FIXED || !goals_below(x, f, j, je)) continue;
        int top = limb_top(x, f, j);
        if (top == j) {
            limb_step(x, f, j, limits);
            continue;
        }
        if (top >= 0) continue; /* inside a limb: its top's step moves it */
        /* a held joint takes no step; a free joint may hold its position only */
        if (s->hold && mn_csys_joint_held(m, j)) continue;
        int hold_pos = s->hold && type == MN_JOINT_FREE && m->dof_locked[m->jnt_dofadr[j]];
        /* the joint's mobility (mn_csys_set_joint_scale): 0 freezes it (Welman 6.2) */
        int dof = m->jnt_dofadr[j];
        double sc = s->K0[s->fig[f].dof0 + dof] * m->dof_stiffness[dof];
        if (!(sc > 0)) continue;
        double wi = fmin(1.0, sc / m->jnt_stiffness[j]);
        double* qj = d->q + m->jnt_qadr[j];
        mn_mat3 Rj = d->xf[j].R;
        mn_vec3 o = d->xf[j].p;
        mn_vec3 tax;
        double tphi;
        if (type == MN_JOINT_BALL && triangle_step(x, f, j, o, mn_v3(0, 0, 0), &tax, &tphi)) {
            if (tphi != 0) ball_turn(x, f, j, qj, &Rj, o, tax, wi * tphi);
        } else if (type == MN_JOINT_HINGE || type == MN_JOINT_SLIDE) {
            mn_vec3 ax = mn_mat3_mulv(&Rj, m->jnt_axis[j]);
            double step = type == MN_JOINT_SLIDE ? best_shift(x, f, j, je, ax)
                          : triangle_step(x, f, j, o, ax, &tax, &tphi)
                              ? tphi
                              : best_angle(x, f, j, je, ax, o);
            double nq = qj[0] + wi * step;
            if (limits && m->jnt_limited[j])
                nq = fmin(fmax(nq, m->jnt_range[2 * j]), m->jnt_range[2 * j + 1]);
            double dqv = nq - qj[0];
            if (dqv == 0 || !isfinite(dqv)) continue;
            qj[0] = nq;
            if (type == MN_JOINT_HINGE) {
                mn_mat3 Rw = mn_mat3_axis_angle(ax, dqv);
                move_goals(x, f, j, je, &Rw, o, mn_v3(0, 0, 0));
            } else {
                move_goals(x, f, j, je, NULL, o, mn_vec3_scale(ax, dqv));
            }
        } else if (type == MN_JOINT_BALL) {
            ball_rotations(x, f, j, qj, Rj, o, wi);
        } else if (type == MN_JOINT_FREE) {
            /* translation along the axes of the frame the position is expressed in */
            mn_mat3 Rq = mn_quat_to_mat3(mn_quat_normalize(mn_q4(qj[3], qj[4], qj[5], qj[6])));
            mn_mat3 Rqt = mn_mat3_transpose(&Rq);
            mn_mat3 Rpre = mn_mat3_mul(&Rj, &Rqt);
            mn_vec3 shift = mn_v3(0, 0, 0);
            for (int k = 0; k < 3 && !hold_pos; k++) {
                mn_vec3 ax = mn_mat3_col(&Rpre, k);
                double lam = wi * best_shift(x, f, j, je, ax);
                if (!isfinite(lam) || lam == 0) continue;
                qj[k] += lam;
                shift = mn_vec3_madd(shift, lam, ax);
                move_goals(x, f, j, je, NULL, o, mn_vec3_scale(ax, lam));
            }
            o = mn_vec3_add(o, shift);
            ball_rotations(x, f, j, qj + 3, Rj, o, wi);
        }
    }
    if (limits) mn_csys_clamp_figure(s, f);
    s->fig[f].fk_valid = 0;
}

/* Fresh end-effectors and segment centres from the figures' frames. */
static void refresh(ccd_ctx* x) {
    mn_csys* s = x->s;
    for (int f = 0; f < s->nfig; f++) {
        mn_csys_ensure_fk(s, f);
        if (!x->any_com) continue;
        const mn_model* m = s->fig[f].m;
        const mn_data* d = s->fig[f].d;
        mn_vec3* seg = x->seg + s->fig[f].jnt0;
        for (int k = 0; k < m->njoint; k++)
            seg[k] = mn_xform_apply(&d->xf[k], m->jnt_com[k]);
    }
    for (int i = 0; i < x->ng; i++) {
        ccd_goal* a = &x->g[i];
        const csys_handle* h = &s->h[a->handle];
        if (!a->com) {
            const mn_data* d = s->fig[a->fig].d;
            a->p = mn_point_world(d, a->joint, h->point);
            a->R = d->xf[a->joint].R;
        }
        if (a->mode == G_DRAG && !a->rot) {
            mn_vec3 now = a->p;
            if (a->com) {
                int lo, hi;
                com_range(x, a, &lo, &hi);
                mass_centre(x, a->fig, lo, hi, &now);
            }
            a->target = h->drag == DRAG_TARGET
                            ? h->drag_vec
                            : mn_vec3_add(now, h->drag_vec); /* a force pulls toward h + f */
        }
    }
}

/* The penalty the sweeps lower: the weighted squared residuals, and the drags' error when
 * they take part. Evaluates the network and fills r's residuals. */
static double merit(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r, int drags_on,
                    int* ok) {
    mn_csys_eval_all(s);
    *ok = mn_csys_summarise(s, o, r);
    double mk = 0;
    for (int i = 0; i < s->nc; i++)
        mk += s->c[i].def.weight * s->c[i].residual * s->c[i].residual;
    if (drags_on) mk += r->max_drag_error * r->max_drag_error;
    return mk;
}

/* Copies every figure's state into or out of q (nq, figures one after the other). */
static void copy_states(mn_csys* s, double* q, int out) {
    for (int f = 0, at = 0; f < s->nfig; f++) {
        const mn_model* m = s->fig[f].m;
        double* qf = s->fig[f].d->q;
        size_t n = sizeof(double) * (size_t)m->nq;
        if (out)
            memcpy(q + at, qf, n);
        else
            memcpy(qf, q + at, n);
        at += m->nq;
    }
    if (!out) {
        for (int f = 0; f < s->nfig; f++)
            s->fig[f].fk_valid = 0;
        mn_csys_invalidate_moved(s, NULL);
    }
}

/* dq = (the figures' states) (-) q0, in the tangent space (nv). */
static void sweep_step(mn_csys* s, const double* q0, double* dq) {
    for (int f = 0, at = 0; f < s->nfig; f++) {
        const mn_model* m = s->fig[f].m;
        mn_q_difference(m, s->fig[f].d->q, q0 + at, dq + s->fig[f].dof0);
        at += m->nq;
    }
}

/* Aitken's extrapolation of the sweeps (past the thesis). Where goals couple (a foot held
 * in position and orientation by a leg of hinges), the sweeps converge linearly: each
 * sweep's change is nearly the last one's times a ratio rho < 1, the error of a
 * coordinate descent dominated by its slowest mode (the crouch bake: rho = 0.88 to 0.99,
 * 50 sweeps and more for 1e-5 m). When two successive changes point the same way, the
 * rest of that geometric series, dq rho / (1 - rho), is the gain returned (0: no
 * extrapolation); the solve takes it, or a third or a ninth of it, whichever first lowers
 * the penalty, and otherwise stays where the sweep left it. A change that does not shrink
 * (rho from 0.98 to 1.5, the same direction) is a steady drift along a valley (the limb
 * step's root and a leg held at a limit sharing one direction): the longest extrapolation,
 * 50 changes, is tried first. */
static double aitken_gain(const mn_csys* s, const double* dq, const double* dq_prev) {
    double dd = 0, dp = 0, pp = 0;
    for (int k = 0; k < s->nv; k++) {
        dd += dq[k] * dq[k];
        dp += dq[k] * dq_prev[k];
        pp += dq_prev[k] * dq_prev[k];
    }
    if (!(dd > 0) || !(pp > 0)) return 0;
    double rho = sqrt(dd / pp), cosa = dp / sqrt(dd * pp);
    if (!(cosa > 0.9) || !(rho > 0.1) || !(rho < 1.5)) return 0;
    /* a change that does not shrink (rho near or above 1) is a steady drift along a
     * valley: the longest extrapolation is tried first, the penalty picks how far */
    return rho < 0.98 ? fmin(rho / (1 - rho), 50.0) : 50.0;
}

/* Moves every figure by gain * dq from the states q0, within the limits when asked. */
static void extrapolate_from(mn_csys* s, const double* q0, const double* dq, double gain,
                             int limits) {
    copy_states(s, (double*)q0, 0);
    for (int f = 0; f < s->nfig; f++) {
        const mn_model* m = s->fig[f].m;
        mn_integrate(m, s->fig[f].d->q, dq + s->fig[f].dof0, gain);
        if (limits) mn_csys_clamp_figure(s, f);
        s->fig[f].fk_valid = 0;
    }
    mn_csys_invalidate_moved(s, NULL);
}

mn_status mn_csys_solve_ccd(mn_csys* s, const mn_csolve_options* o, mn_csolve_result* r) {
    ccd_ctx x;
    x.s = s;
    x.g = (ccd_goal*)s->ccd;
    x.ng = build_goals(s, x.g);
    x.seg = (mn_vec3*)((unsigned char*)s->ccd +
                       ((sizeof(ccd_goal) * (size_t)(2 * s->max_c + s->max_h) + 15) & ~(size_t)15));
    x.any_com = 0;
    x.absorb = 1;
    x.tol = o->tol;
    x.tol_rot = o->tol_rot;
    for (int f = 0; f < s->nfig; f++) {
        const mn_model* m = s->fig[f].m;
        x.balls[f] = 0;
        for (int j = 0; j < m->njoint && !x.balls[f]; j++)
            x.balls[f] = m->jnt_type[j] == MN_JOINT_BALL ||
                         (m->jnt_type[j] == MN_JOINT_HINGE && !m->jnt_limited[j]);
    }
    for (int i = 0; i < x.ng; i++)
        x.any_com |= x.g[i].com;
    int njt = 0;
    for (int f = 0; f < s->nfig; f++)
        njt += s->fig[f].m->njoint;
    double* qprev = (double*)(x.seg + njt);
    x.top = (int*)(qprev + s->nq);
    int limbs_ng = -1; /* the goal count the limbs in x.top were found for */
    /* the multiplier solvers' step vectors, unused by CCD: the last two sweeps' changes */
    double *dq = s->v, *dq_prev = s->dv;
    int have_prev = 0;
    int ng = x.ng, drags_on = 1, ok = 0;
    double best = 1e300;
    int stalled = 0, it = 0, stopped = 0;
    for (;;) {
        double mk = merit(s, o, r, drags_on, &ok);
        if (ok && (!drags_on || r->max_drag_error <= o->drag_tol)) break;
        if (mk < best * (1 - o->min_progress)) {
            best = mk;
            stalled = 0;
        } else if (++stalled >= 3) {
            /* Constraints first: a stall with the drags on drops the drags (they are the
             * last goals in the list) and lets the constraints pull back. */
            if (drags_on && ng > 0 && x.g[ng - 1].mode == G_DRAG) {
                drags_on = 0;
            } else if (x.absorb) {
                /* A stall while joints leave goals to the joints below them: those
                 * cannot meet them after all (limits, or a reach that the annulus of
                 * absorbed() does not describe), so every joint weighs every goal again,
                 * the penalty method as the thesis has it. */
                x.absorb = 0;
            } else { /* the constraints conflict */
                stopped = 1;
                break;
            }
            stalled = 0;
            best = 1e300;
            have_prev = 0;
            continue;
        }
        if (it >= o->max_iters || ng == 0) break;
        /* the last quarter of the budget always sweeps without the drags */
        if (it >= o->max_iters - o->max_iters / 4 && drags_on) drags_on = 0, have_prev = 0;
        if (ok && !drags_on) break;
        refresh(&x);
        x.ng = ng;
        if (!drags_on)
            while (x.ng > 0 && x.g[x.ng - 1].mode == G_DRAG)
                x.ng--;
        copy_states(s, qprev, 1);
        if (x.ng != limbs_ng) find_limbs(&x), limbs_ng = x.ng; /* the goals changed */
        for (int f = 0; f < s->nfig; f++)
            sweep(&x, f, o->respect_limits);
        x.ng = ng;
        mn_csys_invalidate_moved(s, NULL);
        it++;
        sweep_step(s, qprev, dq);
        double gain = have_prev ? aitken_gain(s, dq, dq_prev) : 0;
        if (gain > 0) {
            int ok2;
            double mk0 = merit(s, o, r, drags_on, &ok2), mk1 = mk0;
            if (!ok2) {
                copy_states(s, qprev, 1);
                for (; gain >= 0.5; gain /= 3) {
                    extrapolate_from(s, qprev, dq, gain, o->respect_limits);
                    mk1 = merit(s, o, r, drags_on, &ok2);
                    if (mk1 < mk0) break;
                }
                if (!(mk1 < mk0)) copy_states(s, qprev, 0);
                have_prev = 0;
                continue;
            }
        }
        double* t = dq_prev;
        dq_prev = dq, dq = t;
        have_prev = 1;
    }
    r->iterations = it;
    if (mn_csys_summarise(s, o, r)) {
        r->status = MN_OK;
        for (int i = 0; i < s->nc; i++)
            s->c[i].unmet = 0;
        return MN_OK;
    }
    r->status = stopped ? MN_ERR_UNREACHABLE : MN_ERR_NOCONVERGE;
    mn_csys_report_unmet(s, o, r, stopped ? "conflicting goals" : "sweep budget ran out");
    return r->status;
}
