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
 * the equivalent n x n (J~^T J~ + lambda I) dq~ = J~^T e. Both are solved by Cholesky.
 *
 * The damping follows Sugihara (2011, "Solvability-unconcerned inverse kinematics by the
 * Levenberg-Marquardt method"): lambda = kappa (|e|^2 / 2 + b L^2), large far from the goal
 * and near a singularity (where |e| stays large), vanishing as the error does, which gives
 * the quadratic convergence of Gauss-Newton at the end. kappa adapts as in Marquardt's
 * method: a step that does not lower the error is rejected and kappa grows; an accepted
 * step lets it shrink. Joint limits are kept by projecting each step onto them (projected
 * LM, as Welman 4.1.6 clamps after the integration step).
 *
 * When progress stalls (a local minimum, typically a joint pinned at a limit) the solve
 * restarts from a state drawn uniformly within the limits by a generator seeded from
 * o->seed, as TRAC-IK's KDL thread does, until the tolerance is met, max_restarts or the
 * time budget runs out. The best state seen is returned. The same residual reached from
 * three different starts marks the target unreachable; the best pose is then polished to
 * its stationary point (no stall test), which for a target out of reach is the chain
 * stretched towards it. */
#include <math.h>
#include <string.h>

#include "ik/ik_common.h"
#include "ik/ik_methods.h"

/* Iterations without a 1% drop of the error after which a restart is due. */
#define LM_STALL_ITERS 6
/* kappa bounds: beyond the upper one the step is hopeless and the start is abandoned. */
#define LM_KAPPA_MIN 1e-3
#define LM_KAPPA_MAX 1e8
/* The damping floor b L^2, relative to the chain's reach squared. */
#define LM_BIAS 1e-6

typedef struct lm_work {
    double* J;      /* rows x n */
    double* A;      /* max(rows, n)^2 */
    double* y;      /* max(rows, n) */
    double* dq;     /* n */
    double* q;      /* nqc: current */
    double* qt;     /* nqc: trial */
    double* qbest;  /* nqc */
} lm_work;

/* The damped step dq for error e (rows) and the weighted Jacobian in w->J. Returns 0, or
 * -1 when the system could not be factored (lambda 0 at an exact singularity). */
static int damped_step(const mn_ikc* c, int rows, const double* e, double lambda, lm_work* w) {
    int n = c->ndof;
    double* J = w->J;
    /* Column scaling by stiffness. */
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < n; k++) J[r * n + k] *= c->isqs[k];
    if (n >= rows) {
        double* A = w->A;
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j <= i; j++) {
                double s = 0;
                const double *a = J + i * n, *b = J + j * n;
                for (int k = 0; k < n; k++) s += a[k] * b[k];
                A[i * rows + j] = s;
            }
            A[i * rows + i] += lambda;
            w->y[i] = e[i];
        }
        if (mn_ik_spd_solve(A, rows, w->y) != 0) return -1;
        for (int k = 0; k < n; k++) {
            double s = 0;
            for (int r = 0; r < rows; r++) s += J[r * n + k] * w->y[r];
            w->dq[k] = s * c->isqs[k];
        }
    } else {
        double* A = w->A;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j <= i; j++) {
                double s = 0;
                for (int r = 0; r < rows; r++) s += J[r * n + i] * J[r * n + j];
                A[i * n + j] = s;
            }
            A[i * n + i] += lambda;
            double b = 0;
            for (int r = 0; r < rows; r++) b += J[r * n + i] * e[r];
            w->y[i] = b;
        }
        if (mn_ik_spd_solve(A, n, w->y) != 0) return -1;
        for (int k = 0; k < n; k++) w->dq[k] = w->y[k] * c->isqs[k];
    }
    return 0;
}

/* State of one solve shared by its starts. */
typedef struct lm_solve {
    const mn_ikc* c;
    const mn_ik_goal* g;
    const mn_ik_options* o;
    lm_work w;
    double bias;          /* damping floor b L^2 */
    int64_t deadline;
    int iters;            /* over all starts */
    int timed_out;
    double best, best_pe, best_re; /* best squared error seen, its errors (qbest) */
} lm_solve;

enum { LM_MET, LM_STALLED, LM_STATIONARY, LM_BUDGET };

/* One start from w.q: iterates until the goal is met, progress stalls (not in polish
 * mode), no step lowers the error (a stationary point), or the budget is spent. *err_out
 * gets the final squared error. */
static int lm_start(lm_solve* S, int polish, double* err_out) {
    const mn_ikc* c = S->c;
    const mn_ik_goal* g = S->g;
    const mn_ik_options* o = S->o;
    lm_work* w = &S->w;
    int n = c->ndof, rows = g->rows;
    double e[6], et[6], pe, re, pet, ret;
    mn_xform tip;
    mn_vec3 pt;
    mn_ikc_fk(c, w->q, g->point, &tip, &pt);
    double err = mn_ik_goal_error(g, &tip, pt, e, &pe, &re);
    double kappa = 1.0, ref = err;
    int since = 0, it = 0, outcome;
    for (;;) {
        if (err < S->best) {
            S->best = err;
            S->best_pe = pe;
            S->best_re = re;
            memcpy(w->qbest, w->q, sizeof(double) * (size_t)c->nqc);
        }
        if (mn_ik_goal_met(g, pe, re, o)) { outcome = LM_MET; break; }
        if (kappa > LM_KAPPA_MAX) { outcome = LM_STATIONARY; break; }
        if (it >= o->max_iters) { outcome = LM_BUDGET; break; }
        if (!polish && since >= LM_STALL_ITERS) { outcome = LM_STALLED; break; }
        if ((S->iters & 1) == 0 && mn_ik_now_ns() > S->deadline) {
            S->timed_out = 1;
            outcome = LM_BUDGET;
            break;
        }
        it++;
        S->iters++;
        mn_ikc_jacobian(c, g, pt, w->J);
        double lambda = kappa * (0.5 * err + S->bias);
        if (damped_step(c, rows, e, lambda, w) != 0) {
            kappa = kappa * 10 + 1;
            since++;
            continue;
        }
        double mx = mn_ik_max_abs(w->dq, n);
        double scale = (o->max_step > 0 && mx > o->max_step) ? o->max_step / mx : 1.0;
        memcpy(w->qt, w->q, sizeof(double) * (size_t)c->nqc);
        mn_ikc_integrate(c, w->qt, w->dq, scale);
        if (o->respect_limits) mn_ikc_clamp(c, w->qt);
        mn_ikc_fk(c, w->qt, g->point, &tip, &pt);
        double errt = mn_ik_goal_error(g, &tip, pt, et, &pet, &ret);
        if (errt < err) {
            memcpy(w->q, w->qt, sizeof(double) * (size_t)c->nqc);
            memcpy(e, et, sizeof(double) * (size_t)rows);
            err = errt;
            pe = pet;
            re = ret;
            kappa = kappa * 0.3 > LM_KAPPA_MIN ? kappa * 0.3 : LM_KAPPA_MIN;
        } else {
            kappa *= 4.0;
            mn_ikc_fk(c, w->q, g->point, &tip, &pt); /* the pose of the next Jacobian */
        }
        /* Progress: a 2% drop of the error restarts the stall count. */
        if (err < 0.98 * ref) {
            ref = err;
            since = 0;
        } else {
            since++;
        }
    }
    *err_out = err;
    return outcome;
}

mn_status mn_ik_lm(MN_IK_METHOD_ARGS) {
    size_t mark = mn_arena_mark(&d->arena);
    mn_ikc c;
    mn_status s = mn_ikc_build(m, d, p->base, p->tip, p->point, &d->arena, &c);
    if (s != MN_OK) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, s, "ik: arena too small for the chain");
    }
    int n = c.ndof, big = n > 6 ? n : 6;
    mn_ik_goal g = mn_ik_goal_make(p, &c);
    lm_solve S;
    memset(&S, 0, sizeof S);
    lm_work* w = &S.w;
    w->J = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(6 * n));
    w->A = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(big * big));
    w->y = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)big);
    w->dq = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)n);
    w->q = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(3 * c.nqc));
    if (!w->J || !w->A || !w->y || !w->dq || !w->q) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, MN_ERR_NOMEM, "ik: arena too small for the chain");
    }
    w->qt = w->q + c.nqc;
    w->qbest = w->qt + c.nqc;
    S.c = &c;
    S.g = &g;
    S.o = o;
    double L = c.reach > 0 ? c.reach : 1.0;
    S.bias = LM_BIAS * L * L;
    S.deadline = mn_ik_deadline(o->timeout_ms);
    S.best = INFINITY;

    mn_ikc_gather(&c, d->q, w->q);
    if (o->respect_limits) mn_ikc_clamp(&c, w->q);
    mn_rng rng;
    mn_rng_seed(&rng, o->seed);
    double minima[3];
    int nmin = 0, restarts = 0, met = 0, unreachable = 0;
    for (;;) {
        double err;
        int outcome = lm_start(&S, 0, &err);
        if (outcome == LM_MET) { met = 1; break; }
        if (S.timed_out) break;
        /* A local minimum: the same residual (to 0.1%) from three starts marks the goal as
         * out of reach within the limits. */
        int same = 0;
        for (int k = 0; k < nmin; k++)
            if (fabs(minima[k] - err) <= 1e-3 * err + S.bias * 1e-9) same++;
        if (same >= 2) { unreachable = 1; break; }
        minima[nmin < 3 ? nmin++ : (restarts % 3)] = err;
        if (restarts >= o->max_restarts) break;
        restarts++;
        mn_ikc_random(&c, &rng, w->q);
        if (o->respect_limits) mn_ikc_clamp(&c, w->q);
    }
    if (!met && !S.timed_out) {
        /* Polish the best pose to its stationary point, so an unreachable goal gets the
         * closest pose (the arm stretched towards it), not the first stalled one. */
        double err;
        memcpy(w->q, w->qbest, sizeof(double) * (size_t)c.nqc);
        if (lm_start(&S, 1, &err) == LM_MET) met = 1;
    }

    mn_ikc_scatter(&c, w->qbest, d->q);
    mn_arena_reset(&d->arena, mark);
    mn_fk(m, d);
    r->iters = S.iters;
    r->restarts = restarts;
    r->pos_err = S.best_pe;
    r->rot_err = S.best_re;
    if (met) return r->status = MN_OK;
    if (unreachable || (!S.timed_out && restarts >= o->max_restarts))
        return mn_ik_fail(r, MN_ERR_UNREACHABLE,
                          "ik: target: unreachable, best pose misses by %.3g (position) %.3g rad (rotation)",
                          S.best_pe, S.best_re);
    return mn_ik_fail(r, MN_ERR_NOCONVERGE, "ik: %s ran out after %d iterations, %d restarts",
                      S.timed_out ? "time budget" : "iteration budget", S.iters, restarts);
}
