/* Levenberg-Marquardt chain IK with joint limits and seeded random restarts: the default
 * method for robot arms.
 *
 * Each iteration solves the damped normal equations of the weighted error e (3 or 6 rows,
 * ik_common.h) and the Jacobian J (rows x n) of the chain relative to its base:
 *
 *     dq = S^-1/2 J~^T (J~ J~^T + lambda I)^-1 e,    J~ = J S^-1/2,
 *
 * the damped least-squares step of Parent eq. 5.24 with each DOF's stiffness s_i (model
 * dof_stiffness) as the metric of joint motion, so a stiffer joint moves less (Welman
 * 4.1.4). The system is formed on the small side: rows x rows when n >= rows, otherwise
 * the equivalent n x n (J~^T J~ + lambda I) dq~ = J~^T e. Both are solved by a
 * square-root-free Cholesky (mn_ik_spd_solve).
 *
 * The damping follows Sugihara (2011, "Solvability-unconcerned inverse kinematics by the
 * Levenberg-Marquardt method"): lambda = kappa (|e|^2 / 2 + b L^2), b = o->damping and
 * L the chain's reach: large far from the goal and near a singularity (where |e| stays
 * large), down to the floor b L^2 as the error vanishes, which gives nearly the quadratic
 * convergence of Gauss-Newton at the end. kappa adapts as in Marquardt's
 * method: a step that does not lower the error is rejected and kappa grows; an accepted
 * step lets it shrink. Joint limits are kept by an active set (limited_step): a DOF whose
 * step would cross its limit stops at it and the others are solved again without it;
 * ball limits are projected after the step, as Welman 4.1.6 clamps after integrating. A
 * hinge whose range spans a whole turn is the exception: its limit is no barrier to the
 * pose, and a step past it goes on a turn back inside the range (lm_wrap).
 *
 * The iteration runs under the one driver (mn_ik_drive, ik_common.h), which holds the
 * budgets, the best state and the way out of a stationary point. LM judges stationarity
 * itself (MN_IK_ONGOING): a rejected step only raises the damping, and a heavily damped
 * accepted step is short without the pose being stationary; only a damping beyond
 * LM_KAPPA_MAX, where no step lowers the error, is MN_IK_STUCK. The move LM offers out
 * of a stalled attempt or a stationary point is the driver's restart from a state drawn
 * uniformly within the limits (seeded from o->seed, as TRAC-IK's KDL thread does), with
 * kappa back at its start. It does not offer the escape: a restart leaves a saddle such as
 * Welman Fig. 4.2's as surely, and a local minimum too, which the escape's small bend
 * falls back into. The driver polishes the best pose to its stationary point when
 * the restarts are spent, which for a target out of reach is the chain stretched towards
 * it.
 *
 * Before the first iteration a pose goal on an arm of a family with a closed form (a 6R arm
 * with a spherical wrist, an S-R-S 7R arm, a Universal Robots arm: closed_form.h) is solved
 * in closed form, and the answer nearest the seed, checked by the chain's FK, is the start
 * (lm_closed_form): when it meets the goal the driver returns it without an iteration. */
#include <math.h>
#include <string.h>

#include "ik/closed_form.h"
#include "ik/ik_common.h"
#include "ik/ik_methods.h"

/* kappa: start, factor after an accepted step, factor after a rejected one. */
#define LM_KAPPA_START 1.0
#define LM_KAPPA_DOWN 0.3
#define LM_KAPPA_UP 10.0
/* kappa bounds: beyond the upper one no step lowers the error (a stationary point). */
#define LM_KAPPA_MIN 1e-3
#define LM_KAPPA_MAX 1e8

typedef struct lm_work {
    double* J;            /* rows x n */
    double* A;            /* max(rows, n)^2 */
    double* y;            /* max(rows, n) */
    double* dq;           /* n */
    double* q;            /* nqc: current */
    double* qt;           /* nqc: trial */
    double* qbest;        /* nqc */
    double* J0;           /* rows x n: the weighted Jacobian before scaling */
    double* dqfix;        /* n: steps of the DOFs held at a limit */
    unsigned char* fixed; /* n */
    unsigned char* wrap;  /* n: a hinge whose range spans a whole turn (lm_wraps) */
    double* qseed;        /* nqc: the seed (DISTANCE) */
    double* qfound;       /* nqc: the best answer of the modes' search */
    int nwrap;            /* how many */
    mn_xform* xf2;        /* njnt: the trial pose's frames */
    double* ax2;          /* 6 x n: the trial pose's axes and origins (mn_ikc.ax) */
} lm_work;

/* The damped step dq for error e (rows) and the weighted Jacobian in w->J. Returns 0, or
 * -1 when the system could not be factored (lambda 0 at an exact singularity). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int
damped_step_n(const mn_ikc* c, int rows, const double* e, double lambda, lm_work* w) {
    int n = c->ch.ndof;
    double* J = w->J;
    /* Column scaling by stiffness (none when every stiffness is 1). */
    if (!c->unit_stiffness)
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < n; k++)
                J[r * n + k] *= c->isqs[k];
    if (n >= rows) {
        double* A = w->A;
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j <= i; j++) {
                double s = 0;
                const double *a = J + i * n, *b = J + j * n;
                for (int k = 0; k < n; k++)
                    s += a[k] * b[k];
                A[i * rows + j] = s;
            }
            A[i * rows + i] += lambda;
            w->y[i] = e[i];
        }
        if (mn_ik_spd_solve(A, rows, w->y) != 0) return -1;
        for (int k = 0; k < n; k++) {
            double s = 0;
            for (int r = 0; r < rows; r++)
                s += J[r * n + k] * w->y[r];
            w->dq[k] = s * c->isqs[k];
        }
    } else {
        double* A = w->A;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j <= i; j++) {
                double s = 0;
                for (int r = 0; r < rows; r++)
                    s += J[r * n + i] * J[r * n + j];
                A[i * n + j] = s;
            }
            A[i * n + i] += lambda;
            double b = 0;
            for (int r = 0; r < rows; r++)
                b += J[r * n + i] * e[r];
            w->y[i] = b;
        }
        if (mn_ik_spd_solve(A, n, w->y) != 0) return -1;
        for (int k = 0; k < n; k++)
            w->dq[k] = w->y[k] * c->isqs[k];
    }
    return 0;
}

/* Unrolled for the 6-row pose goal and the 3-row position goal. */
static int damped_step(const mn_ikc* c, int rows, const double* e, double lambda, lm_work* w) {
    if (rows == 6) return damped_step_n(c, 6, e, lambda, w);
    return damped_step_n(c, 3, e, lambda, w);
}

/* The damped step with the joint limits as an active set: a DOF whose step would cross
 * its limit is held at the limit (its step is what reaches it), its contribution is taken
 * out of the error, and the step of the other DOFs is solved again without its column.
 * Plain clipping after the step (Welman 4.1.6) leaves the other joints moving as if the
 * clipped one had moved, which stalls near limits; this is the projected step that keeps
 * the remaining joints doing the clipped joint's share. Up to three passes. A hinge whose
 * range spans a whole turn is never held: its limit is no barrier to the pose, and
 * lm_wrap takes it a turn back into its range (the same pose). */
static int limited_step(const mn_ikc* c, int rows, const double* e, double lambda, lm_work* w,
                        const double* q, int limits) {
    int n = c->ch.ndof;
    if (!limits || !c->ch.simple) return damped_step(c, rows, e, lambda, w);
    memcpy(w->J0, w->J, sizeof(double) * (size_t)(rows * n));
    if (damped_step(c, rows, e, lambda, w) != 0) return -1;
    int nfixed = 0;
    for (int pass = 0; pass < 3; pass++) {
        int any = 0;
        for (int k = 0; k < n; k++) {
            double t = q[k] + w->dq[k];
            if (w->fixed[k] || w->wrap[k] || (t <= c->ch.hi[k] && t >= c->ch.lo[k])) continue;
            w->fixed[k] = 1;
            w->dqfix[k] = (t > c->ch.hi[k] ? c->ch.hi[k] : c->ch.lo[k]) - q[k];
            any = 1;
            nfixed++;
        }
        if (!any) break;
        double e2[6];
        for (int r = 0; r < rows; r++) {
            double v = e[r];
            for (int k = 0; k < n; k++) {
                double jk = w->J0[r * n + k];
                if (w->fixed[k]) {
                    v -= jk * w->dqfix[k];
                    jk = 0;
                }
                w->J[r * n + k] = jk;
            }
            e2[r] = v;
        }
        if (damped_step(c, rows, e2, lambda, w) != 0) break;
        for (int k = 0; k < n; k++)
            if (w->fixed[k]) w->dq[k] = w->dqfix[k];
    }
    if (nfixed)
        for (int k = 0; k < n; k++)
            w->fixed[k] = 0;
    return 0;
}

/* Hinges whose range spans a whole turn or more (a UR arm's +-2 pi, an elbow's +-pi): the
 * pose repeats every 2 pi, so a limit of such a hinge is no barrier. Held at it, the chain
 * stalls at a minimum that exists only in the joint coordinates (a third of the attempts
 * that end without the goal on the UR5 and the xArm6 of bench ik end so). Returns how many;
 * 0 unless limits are respected on a chain of hinges and slides. */
static int lm_wraps(const mn_ikc* c, int limits, unsigned char* wrap) {
    int n = c->ch.ndof, nw = 0;
    for (int k = 0; k < n; k++) {
        int j = c->ch.jnt[c->ch.dof_path[k]];
        wrap[k] = limits && c->ch.simple && c->m->jnt_type[j] == MN_JOINT_HINGE &&
                  isfinite(c->ch.lo[k]) && isfinite(c->ch.hi[k]) &&
                  c->ch.hi[k] - c->ch.lo[k] >= 2 * MN_PI - 1e-9;
        nw += wrap[k];
    }
    return nw;
}

/* A wrapping hinge stepped past a limit goes a whole turn back (then the projection onto
 * the limits, which it now meets, as any other DOF). */
static void lm_wrap(const mn_ikc* c, const unsigned char* wrap, double* q) {
    for (int k = 0; k < c->ch.ndof; k++) {
        if (!wrap[k]) continue;
        if (q[k] > c->ch.hi[k])
            q[k] -= 2 * MN_PI;
        else if (q[k] < c->ch.lo[k])
            q[k] += 2 * MN_PI;
    }
}

/* The state of one solve: the current pose (state, frames, error) and the damping. */
typedef struct lm_loop {
    /* Two chain views that differ only in their frame buffers: the current pose's frames
     * (for the next Jacobian) survive a rejected trial step, so it costs no second FK. */
    mn_ikc cur, trial;
    const mn_ik_goal* g;
    const mn_ik_options* o;
    lm_work w;
    double bias;              /* damping floor b L^2 */
    double kappa;             /* the adaptive factor of the damping */
    double e[6], err, pe, re; /* the current pose's weighted error, |e|^2 and the errors */
    double found_score;       /* the best answer's score (lower is better) */
    mn_vec3 pt;               /* its effector position */
} lm_loop;

/* A pose's FK for the Jacobian that follows: the fused walk on a robot arm (mn_ikc.ax), the
 * frames otherwise. */
static inline void lm_fk(const mn_ikc* c, const double* q, mn_vec3 point, mn_xform* tip,
                         mn_vec3* pt) {
    if (c->ax)
        mn_ikc_fk_axes(c, q, point, tip, pt);
    else
        mn_ikc_fk(c, q, point, tip, pt);
}

static inline void lm_jacobian(const mn_ikc* c, const mn_ik_goal* g, mn_vec3 pt, double* J) {
    if (c->ax)
        mn_ikc_jacobian_axes(c, g, pt, J);
    else
        mn_ikc_jacobian(c, g, pt, J);
}

/* The current pose's frames and error, after its state changed wholesale. */
static void lm_pose(lm_loop* x) {
    mn_xform tip;
    lm_fk(&x->cur, x->w.q, x->g->point, &tip, &x->pt);
    x->err = mn_ik_goal_error(x->g, &tip, x->pt, x->e, &x->pe, &x->re);
}

/* One Levenberg-Marquardt iteration: the damped step with the limits as an active set, a
 * cap by o->max_step, the projection onto the limits; accepted when it lowers the error
 * (kappa shrinks), otherwise rejected (kappa grows). */
static int lm_iterate(void* vx) {
    lm_loop* x = vx;
    const mn_ikc* c = &x->cur;
    const mn_ik_goal* g = x->g;
    const mn_ik_options* o = x->o;
    lm_work* w = &x->w;
    int n = c->ch.ndof, rows = g->rows;
    lm_jacobian(c, g, x->pt, w->J);
    double lambda = x->kappa * (0.5 * x->err + x->bias);
    if (limited_step(c, rows, x->e, lambda, w, w->q, o->respect_limits) != 0) {
        x->kappa = x->kappa * 10 + 1;
        return x->kappa > LM_KAPPA_MAX ? MN_IK_STUCK : MN_IK_ONGOING;
    }
    double mx = mn_ik_max_abs(w->dq, n);
    double scale = (o->max_step > 0 && mx > o->max_step) ? o->max_step / mx : 1.0;
    memcpy(w->qt, w->q, sizeof(double) * (size_t)c->ch.nq);
    mn_ikc_integrate(c, w->qt, w->dq, scale);
    if (w->nwrap) lm_wrap(c, w->wrap, w->qt);
    if (o->respect_limits) mn_ikc_clamp(c, w->qt);
    double et[6], pet, ret;
    mn_xform tipt;
    mn_vec3 ptt;
    lm_fk(&x->trial, w->qt, g->point, &tipt, &ptt);
    double errt = mn_ik_goal_error(g, &tipt, ptt, et, &pet, &ret);
    if (!(errt < x->err)) {
        x->kappa *= LM_KAPPA_UP;
        return x->kappa > LM_KAPPA_MAX ? MN_IK_STUCK : MN_IK_ONGOING;
    }
    double* qswap = w->q;
    w->q = w->qt;
    w->qt = qswap;
    mn_xform* xswap = x->cur.xf;
    x->cur.xf = x->trial.xf;
    x->trial.xf = xswap;
    double* aswap = x->cur.ax;
    x->cur.ax = x->trial.ax;
    x->trial.ax = aswap;
    aswap = x->cur.org;
    x->cur.org = x->trial.org;
    x->trial.org = aswap;
    x->pt = ptt;
    memcpy(x->e, et, sizeof(double) * (size_t)rows);
    x->err = errt;
    x->pe = pet;
    x->re = ret;
    x->kappa = x->kappa * LM_KAPPA_DOWN > LM_KAPPA_MIN ? x->kappa * LM_KAPPA_DOWN : LM_KAPPA_MIN;
    return MN_IK_ONGOING;
}

static double lm_measure(void* vx, double* pe, double* re) {
    lm_loop* x = vx;
    *pe = x->pe;
    *re = x->re;
    return x->err;
}

static void lm_save(void* vx) {
    lm_loop* x = vx;
    memcpy(x->w.qbest, x->w.q, sizeof(double) * (size_t)x->cur.ch.nq);
}

static void lm_restore(void* vx) {
    lm_loop* x = vx;
    memcpy(x->w.q, x->w.qbest, sizeof(double) * (size_t)x->cur.ch.nq);
    lm_pose(x);
    x->kappa = LM_KAPPA_START;
}

static void lm_restart(void* vx, mn_rng* rng) {
    lm_loop* x = vx;
    mn_ikc_random(&x->cur, rng, x->w.q);
    if (x->o->respect_limits) mn_ikc_clamp(&x->cur, x->w.q);
    lm_pose(x);
    x->kappa = LM_KAPPA_START;
}

/* ---- the modes' search (mn_ik_mode) -------------------------------------------------- */

/* A hinge of a whole turn or more (lm_wraps), or a continuous one, taken at its turn nearest
 * the seed within its range: the same pose, less joint motion (DISTANCE). */
static void lm_nearest_turns(const mn_ikc* c, const unsigned char* wrap, const double* seed,
                             double* q) {
    for (int k = 0; k < c->ch.ndof; k++) {
        int j = c->ch.jnt[c->ch.dof_path[k]];
        double lo = c->ch.lo[k], hi = c->ch.hi[k];
        int continuous = c->m->jnt_type[j] == MN_JOINT_HINGE && !isfinite(lo) && !isfinite(hi);
        if (!wrap[k] && !continuous) continue;
        double t = q[k] + 2 * MN_PI * nearbyint((seed[k] - q[k]) / (2 * MN_PI));
        if (t > hi) t -= 2 * MN_PI;
        if (t < lo) t += 2 * MN_PI;
        if (t >= lo && t <= hi) q[k] = t;
    }
}

/* Manipulability sqrt(det(J J^T)) of the goal's Jacobian at the current pose (Yoshikawa
 * 1985), J J^T (or J^T J for a chain of fewer DOFs than rows) by the same Cholesky as the
 * step: the product of its pivots; 0 at a singular pose. */
static double lm_manipulability(lm_loop* x) {
    const mn_ikc* c = &x->cur;
    lm_work* w = &x->w;
    int n = c->ch.ndof, rows = x->g->rows, k = n < rows ? n : rows;
    lm_jacobian(c, x->g, x->pt, w->J);
    double* A = w->A;
    for (int i = 0; i < k; i++)
        for (int j = 0; j <= i; j++) {
            double s = 0;
            if (n >= rows)
                for (int l = 0; l < n; l++)
                    s += w->J[i * n + l] * w->J[j * n + l];
            else
                for (int r = 0; r < rows; r++)
                    s += w->J[r * n + i] * w->J[r * n + j];
            A[i * k + j] = s;
        }
    for (int i = 0; i < k; i++)
        w->y[i] = 0;
    if (mn_ik_spd_solve(A, k, w->y) != 0) return 0;
    double det = 1;
    for (int i = 0; i < k; i++)
        det /= A[i * k + i]; /* the factor keeps 1 / d_i on the diagonal */
    return det > 0 ? sqrt(det) : 0;
}

static void lm_found(void* vx) {
    lm_loop* x = vx;
    lm_work* w = &x->w;
    int nq = x->cur.ch.nq;
    double score;
    if (x->o->mode == MN_IK_DISTANCE) {
        if (x->cur.ch.simple) lm_nearest_turns(&x->cur, w->wrap, w->qseed, w->q);
        score = 0;
        for (int k = 0; k < nq; k++)
            score += (w->q[k] - w->qseed[k]) * (w->q[k] - w->qseed[k]);
    } else {
        score = -lm_manipulability(x);
    }
    if (score < x->found_score) {
        x->found_score = score;
        memcpy(w->qfound, w->q, sizeof(double) * (size_t)nq);
    }
}

static void lm_take_found(void* vx) {
    lm_loop* x = vx;
    memcpy(x->w.q, x->w.qfound, sizeof(double) * (size_t)x->cur.ch.nq);
    lm_pose(x);
}

/* ---- the closed form's start (closed_form.h) ------------------------------------------ */

/* Angle v (a closed form's, in (-pi, pi]) at its turn nearest the seed's value s within
 * [lo, hi]; 0 when no turn of it is within the range. */
static int cf_turn(double v, double s, double lo, double hi, double* out) {
    double k0 = nearbyint((s - v) / (2 * MN_PI)), best = INFINITY;
    for (int d = -1; d <= 1; d++) {
        double t = v + 2 * MN_PI * (k0 + d);
        if (t >= lo && t <= hi && fabs(t - s) < fabs(best - s)) best = t;
    }
    if (!isfinite(best)) return 0;
    *out = best;
    return 1;
}

/* The closed-form answers of the goal with the fixed DOF (if any) at qf, each at the turns
 * nearest the seed within the limits (answers out of them dropped): written to out, their
 * count returned. */
static int cf_answers(const lm_loop* x, const mn_ik_cf* cf, const mn_xform* T, double qf,
                      const double* seed, double out[MN_IK_CF_MAX][7]) {
    double q[MN_IK_CF_MAX][7];
    int ns = mn_ik_cf_solve(cf, T, qf, seed[cf->n - 1], q), nk = 0;
    const mn_chain* ch = &x->cur.ch;
    int limits = x->o->respect_limits;
    for (int s = 0; s < ns; s++) {
        int ok = 1;
        for (int k = 0; k < cf->n && ok; k++) {
            double lo = limits ? ch->lo[k] : -INFINITY, hi = limits ? ch->hi[k] : INFINITY;
            if (k == cf->fixed)
                out[nk][k] = q[s][k];
            else
                ok = cf_turn(q[s][k], seed[k], lo, hi, &out[nk][k]);
        }
        nk += ok;
    }
    return nk;
}

static double cf_dist2(const double* a, const double* b, int n) {
    double s = 0;
    for (int k = 0; k < n; k++)
        s += (a[k] - b[k]) * (a[k] - b[k]);
    return s;
}

/* A closed form for the chain's family (a pose goal on a 6R arm with a spherical wrist, an
 * S-R-S 7R arm or a Universal Robots arm, closed_form.h) as LM's start. The answers come with
 * an S-R-S arm's given joint at the seed's value or, when no answer there is within the
 * limits, at the nearest of 16 values across its range that gives one. In SPEED the answer
 * nearest the seed becomes the current pose when the chain's own FK says it meets the goal
 * (the driver then returns it without an iteration), or when it is at least closer to the
 * goal than the seed (LM iterates from it). In the searching modes every one of those answers
 * that meets the goal is kept by found, and the search starts from the seed as before.
 * Returns 1 when answers were kept that way. */
static int lm_closed_form(lm_loop* x) {
    const mn_ik_goal* g = x->g;
    lm_work* w = &x->w;
    if (!g->use_pos || !g->use_rot) return 0;
    int search = x->o->mode != MN_IK_SPEED;
    if (mn_ik_goal_met(g, x->pe, x->re, x->o)) return 0; /* the seed is the answer as it is */
    mn_ik_cf cf;
    if (mn_ik_cf_detect(&x->cur, x->cur.ax, x->cur.org, &cf) == MN_IK_CF_NONE) return 0;
    if (x->o->respect_limits) cf.lo = x->cur.ch.lo, cf.hi = x->cur.ch.hi;
    int n = cf.n;
    double seed[7];
    memcpy(seed, w->q, sizeof(double) * (size_t)n);
    mn_xform T;
    T.R = g->R;
    T.p = mn_vec3_sub(g->pos, mn_mat3_mulv(&g->R, g->point)); /* the tip frame's origin */
    double ans[MN_IK_CF_MAX][7];
    /* the given joint's values: the seed's, then 16 across its range nearest it first */
    double vals[17];
    int nv = 1;
    vals[0] = cf.fixed >= 0 ? seed[cf.fixed] : 0;
    if (cf.fixed >= 0) {
        double lo = x->cur.ch.lo[cf.fixed], hi = x->cur.ch.hi[cf.fixed];
        if (!x->o->respect_limits || !isfinite(lo) || !isfinite(hi)) lo = -MN_PI, hi = MN_PI;
        for (int i = 0; i < 16; i++) {
            double v = lo + (hi - lo) * (i + 0.5) / 16, dv = fabs(v - vals[0]);
            int at = nv++;
            while (at > 1 && fabs(vals[at - 1] - vals[0]) > dv) {
                vals[at] = vals[at - 1];
                at--;
            }
            vals[at] = v;
        }
    }
    for (int iv = 0; iv < nv; iv++) {
        int na = cf_answers(x, &cf, &T, vals[iv], seed, ans);
        if (na == 0) continue;
        if (search) {
            int kept = 0;
            for (int s = 0; s < na; s++) {
                memcpy(w->q, ans[s], sizeof(double) * (size_t)n);
                lm_pose(x);
                if (mn_ik_goal_met(g, x->pe, x->re, x->o)) {
                    lm_found(x);
                    kept = 1;
                }
            }
            memcpy(w->q, seed, sizeof(double) * (size_t)n);
            lm_pose(x);
            return kept;
        }
        int best = 0;
        for (int s = 1; s < na; s++)
            if (cf_dist2(ans[s], seed, n) < cf_dist2(ans[best], seed, n)) best = s;
        double e0 = x->err;
        memcpy(w->q, ans[best], sizeof(double) * (size_t)n);
        lm_pose(x);
        if (mn_ik_goal_met(g, x->pe, x->re, x->o) || x->err < e0) return 0;
        memcpy(w->q, seed, sizeof(double) * (size_t)n); /* no better than the seed */
        lm_pose(x);
        return 0;
    }
    return 0;
}

mn_status mn_ik_lm(MN_IK_METHOD_ARGS) {
    size_t mark = mn_arena_mark(&d->arena);
    mn_ikc c;
    mn_ik_goal g;
    mn_status s = mn_ik_begin(m, d, p, o, r, &c, &g);
    if (s != MN_OK) return s;
    int n = c.ch.ndof, big = n > 6 ? n : 6;
    lm_loop x;
    memset(&x, 0, sizeof x);
    lm_work* w = &x.w;
    w->J = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(6 * n));
    w->A = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(big * big));
    w->y = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)big);
    w->dq = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)n);
    w->q = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(5 * c.ch.nq));
    w->J0 = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(6 * n));
    w->dqfix = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)n);
    w->fixed = mn_arena_alloc(&d->arena, (size_t)(2 * n));
    w->xf2 = mn_arena_alloc(&d->arena, sizeof(mn_xform) * (size_t)(c.ch.njoint + 1));
    w->ax2 = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(6 * n));
    if (!w->ax2 || !w->J || !w->A || !w->y || !w->dq || !w->q || !w->J0 || !w->dqfix || !w->fixed ||
        !w->xf2) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, MN_ERR_NOMEM, "ik: arena too small for the chain");
    }
    memset(w->fixed, 0, (size_t)n);
    w->wrap = w->fixed + n;
    w->nwrap = lm_wraps(&c, o->respect_limits, w->wrap);
    w->qt = w->q + c.ch.nq;
    w->qbest = w->qt + c.ch.nq;
    w->qseed = w->qbest + c.ch.nq;
    w->qfound = w->qseed + c.ch.nq;
    x.cur = c;
    x.trial = c;
    x.trial.xf = w->xf2;
    if (c.ax) x.trial.ax = w->ax2, x.trial.org = w->ax2 + 3 * n;
    x.g = &g;
    x.o = o;
    double L = c.reach > 0 ? c.reach : 1.0;
    x.bias = o->damping * L * L; /* b L^2; the default 1e-3 was tuned with bench ik --near */
    x.kappa = LM_KAPPA_START;
    mn_chain_gather(&c.ch, d->q, w->q);
    if (o->respect_limits) mn_ikc_clamp(&c, w->q);
    memcpy(w->qseed, w->q, sizeof(double) * (size_t)c.ch.nq);
    x.found_score = INFINITY;
    /* The seed is the first "best" pose: with an error that overflows (a target at 1e300)
     * nothing compares smaller, and the seed is what comes back. */
    lm_pose(&x);
    int found_before = lm_closed_form(&x);
    mn_ik_loop lp = {.ctx = &x,
                     .iterate = lm_iterate,
                     .measure = lm_measure,
                     .save = lm_save,
                     .restore = lm_restore,
                     .restart = lm_restart,
                     .found = lm_found,
                     .take_found = lm_take_found,
                     .found_before = found_before,
                     .same_abs = x.bias * 1e-9,
                     .use_pos = g.use_pos,
                     .use_rot = g.use_rot,
                     .cheap = 1};
    s = mn_ik_drive(&lp, o, r, "lm");
    mn_chain_scatter(&c.ch, w->q, d->q);
    mn_arena_reset(&d->arena, mark);
    mn_fk_subtree(m, d, c.ch.jnt[0]); /* the part of the figure the chain moves */
    return s;
}
