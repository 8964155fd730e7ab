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
 * ball limits are projected after the step, as Welman 4.1.6 clamps after integrating.
 *
 * When progress stalls (a local minimum, typically a joint pinned at a limit) the solve
 * restarts from a state drawn uniformly within the limits by a generator seeded from
 * o->seed, as TRAC-IK's KDL thread does, until the tolerance is met, max_restarts or the
 * time budget runs out. The best state seen is returned. The best residual reached again
 * from max(8, max_restarts / 4) different starts marks the target unreachable; the best
 * pose is then polished to its stationary point (no stall test), which for a target out
 * of reach is the chain stretched towards it. */
#include <math.h>
#include <string.h>

#include "ik/ik_common.h"
#include "ik/ik_methods.h"

/* A start is abandoned after LM_STALL_ITERS iterations without the error dropping below
 * LM_PROGRESS times its value at the last progress. A start that will succeed is nearly
 * always in Gauss-Newton's fast regime by then; the others are cheaper to replace. The
 * constants here were tuned on the robot benchmark (bench/bench_ik.c, mean iterations
 * over panda, iiwa, UR5 and xArm6). */
#define LM_STALL_ITERS 6
#define LM_PROGRESS 0.8
/* kappa: start, factor after an accepted step, factor after a rejected one. */
#define LM_KAPPA_START 1.0
#define LM_KAPPA_DOWN 0.3
#define LM_KAPPA_UP 10.0
/* kappa bounds: beyond the upper one the step is hopeless and the start is abandoned. */
#define LM_KAPPA_MIN 1e-3
#define LM_KAPPA_MAX 1e8
/* Starts that end at the best residual before the goal is called unreachable: at least
 * this many, and a quarter of max_restarts. */
#define LM_SAME_MINIMA 8

typedef struct lm_work {
    double* J;      /* rows x n */
    double* A;      /* max(rows, n)^2 */
    double* y;      /* max(rows, n) */
    double* dq;     /* n */
    double* q;      /* nqc: current */
    double* qt;     /* nqc: trial */
    double* qbest;  /* nqc */
    double* J0;     /* rows x n: the weighted Jacobian before scaling */
    double* dqfix;  /* n: steps of the DOFs held at a limit */
    unsigned char* fixed; /* n */
    mn_xform* xf2;  /* njnt: the trial pose's frames */
} lm_work;

/* The damped step dq for error e (rows) and the weighted Jacobian in w->J. Returns 0, or
 * -1 when the system could not be factored (lambda 0 at an exact singularity). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int damped_step_n(const mn_ikc* c, int rows, const double* e, double lambda, lm_work* w) {
    int n = c->ch.ndof;
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
 * the remaining joints doing the clipped joint's share. Up to three passes. */
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
            if (w->fixed[k] || (t <= c->ch.hi[k] && t >= c->ch.lo[k])) continue;
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
        for (int k = 0; k < n; k++) w->fixed[k] = 0;
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
    /* Two chain views that differ only in their frame buffers: the current pose's frames
     * (for the next Jacobian) survive a rejected trial step, so it costs no second FK. */
    mn_ikc cur = *S->c, trial = *S->c;
    trial.xf = S->w.xf2;
    const mn_ikc* c = &cur;
    const mn_ik_goal* g = S->g;
    const mn_ik_options* o = S->o;
    lm_work* w = &S->w;
    int n = c->ch.ndof, rows = g->rows;
    double e[6], et[6], pe, re, pet, ret;
    mn_xform tip;
    mn_vec3 pt;
    mn_ikc_fk(c, w->q, g->point, &tip, &pt);
    double err = mn_ik_goal_error(g, &tip, pt, e, &pe, &re);
    double kappa = LM_KAPPA_START, ref = err;
    int since = 0, it = 0, outcome;
    for (;;) {
        if (err < S->best) {
            S->best = err;
            S->best_pe = pe;
            S->best_re = re;
            memcpy(w->qbest, w->q, sizeof(double) * (size_t)c->ch.nq);
        }
        if (mn_ik_goal_met(g, pe, re, o)) { outcome = LM_MET; break; }
        if (kappa > LM_KAPPA_MAX) { outcome = LM_STATIONARY; break; }
        if (it >= o->max_iters) { outcome = LM_BUDGET; break; }
        if (!polish && since >= LM_STALL_ITERS) { outcome = LM_STALLED; break; }
        /* The wall clock is read every 4 iterations (a vDSO call, ~20 ns), the CPU-time
         * clock every 32 (a system call, ~0.5 us). */
        if ((S->iters & (o->timeout_cpu ? 31 : 3)) == 0 && S->deadline != INT64_MAX &&
            mn_ik_clock_ns(o->timeout_cpu) > S->deadline) {
            S->timed_out = 1;
            outcome = LM_BUDGET;
            break;
        }
        it++;
        S->iters++;
        mn_ikc_jacobian(c, g, pt, w->J);
        double lambda = kappa * (0.5 * err + S->bias);
        if (limited_step(c, rows, e, lambda, w, w->q, o->respect_limits) != 0) {
            kappa = kappa * 10 + 1;
            since++;
            continue;
        }
        double mx = mn_ik_max_abs(w->dq, n);
        double scale = (o->max_step > 0 && mx > o->max_step) ? o->max_step / mx : 1.0;
        memcpy(w->qt, w->q, sizeof(double) * (size_t)c->ch.nq);
        mn_ikc_integrate(c, w->qt, w->dq, scale);
        if (o->respect_limits) mn_ikc_clamp(c, w->qt);
        mn_xform tipt;
        mn_vec3 ptt;
        mn_ikc_fk(&trial, w->qt, g->point, &tipt, &ptt);
        double errt = mn_ik_goal_error(g, &tipt, ptt, et, &pet, &ret);
        if (errt < err) {
            double* qswap = w->q;
            w->q = w->qt;
            w->qt = qswap;
            mn_xform* xswap = cur.xf;
            cur.xf = trial.xf;
            trial.xf = xswap;
            tip = tipt;
            pt = ptt;
            memcpy(e, et, sizeof(double) * (size_t)rows);
            err = errt;
            pe = pet;
            re = ret;
            kappa = kappa * LM_KAPPA_DOWN > LM_KAPPA_MIN ? kappa * LM_KAPPA_DOWN : LM_KAPPA_MIN;
        } else {
            kappa *= LM_KAPPA_UP;
        }
        /* Progress: a drop below LM_PROGRESS of the reference restarts the stall count. */
        if (err < LM_PROGRESS * ref) {
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
    mn_ik_goal g;
    mn_status s = mn_ik_begin(m, d, p, r, &c, &g);
    if (s != MN_OK) return s;
    int n = c.ch.ndof, big = n > 6 ? n : 6;
    lm_solve S;
    memset(&S, 0, sizeof S);
    lm_work* w = &S.w;
    w->J = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(6 * n));
    w->A = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(big * big));
    w->y = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)big);
    w->dq = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)n);
    w->q = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(3 * c.ch.nq));
    w->J0 = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(6 * n));
    w->dqfix = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)n);
    w->fixed = mn_arena_alloc(&d->arena, (size_t)n);
    w->xf2 = mn_arena_alloc(&d->arena, sizeof(mn_xform) * (size_t)(c.ch.njoint + 1));
    if (!w->J || !w->A || !w->y || !w->dq || !w->q || !w->J0 || !w->dqfix || !w->fixed || !w->xf2) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, MN_ERR_NOMEM, "ik: arena too small for the chain");
    }
    memset(w->fixed, 0, (size_t)n);
    w->qt = w->q + c.ch.nq;
    w->qbest = w->qt + c.ch.nq;
    S.c = &c;
    S.g = &g;
    S.o = o;
    double L = c.reach > 0 ? c.reach : 1.0;
    S.bias = o->damping * L * L; /* b L^2; the default 1e-3 was tuned with bench ik --near */
    S.deadline = mn_ik_deadline(o->timeout_ms, o->timeout_cpu);

    mn_chain_gather(&c.ch, d->q, w->q);
    if (o->respect_limits) mn_ikc_clamp(&c, w->q);
    /* The seed is the first "best" pose: with an error that overflows (a target at 1e300)
     * nothing compares smaller, and the seed is what comes back. */
    {
        double e[6];
        mn_xform tip;
        mn_vec3 pt;
        mn_ikc_fk(&c, w->q, g.point, &tip, &pt);
        S.best = mn_ik_goal_error(&g, &tip, pt, e, &S.best_pe, &S.best_re);
        memcpy(w->qbest, w->q, sizeof(double) * (size_t)c.ch.nq);
    }
    mn_rng rng;
    mn_rng_seed(&rng, o->seed);
    int nsame = 0, restarts = 0, met = 0, unreachable = 0;
    double best_minimum = INFINITY; /* lowest residual a start stopped at */
    int same_needed = o->max_restarts / 4 > LM_SAME_MINIMA ? o->max_restarts / 4 : LM_SAME_MINIMA;
    for (;;) {
        double err, minimum = best_minimum;
        int outcome = lm_start(&S, 0, &err);
        if (outcome == LM_MET) { met = 1; break; }
        if (S.timed_out) break;
        /* A local minimum. When the lowest one found so far keeps coming back (to 0.1%)
         * from same_needed different starts, the goal is out of reach within the limits.
         * A robot arm's limits make local minima with small basins of the true answer
         * common, so a few repeats prove nothing. */
        double tol = 1e-3 * minimum + S.bias * 1e-9;
        if (err < minimum - tol || nsame == 0) {
            best_minimum = err; /* a new lowest minimum */
            nsame = 1;
        } else if (fabs(err - minimum) <= tol) {
            if (++nsame >= same_needed) { unreachable = 1; break; }
        }
        if (restarts >= o->max_restarts) break;
        restarts++;
        mn_ikc_random(&c, &rng, w->q);
        if (o->respect_limits) mn_ikc_clamp(&c, w->q);
    }
    if (!met && !S.timed_out) {
        /* Polish the best pose to its stationary point, so an unreachable goal gets the
         * closest pose (the arm stretched towards it), not the first stalled one. */
        double err;
        memcpy(w->q, w->qbest, sizeof(double) * (size_t)c.ch.nq);
        if (lm_start(&S, 1, &err) == LM_MET) met = 1;
    }

    mn_chain_scatter(&c.ch, w->qbest, d->q);
    mn_arena_reset(&d->arena, mark);
    mn_fk_subtree(m, d, c.ch.jnt[0]); /* the part of the figure the chain moves */
    r->iterations = S.iters;
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
