/* Shared helpers of the chain IK methods: see ik_common.h. */
#include "ik/ik_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- the chain ------------------------------------------------------------------------ */

mn_status mn_ikc_build(const mn_model* m, const mn_data* d, int base, int tip, mn_vec3 point,
                       mn_arena* a, mn_ikc* c) {
    memset(c, 0, sizeof *c);
    if (tip == base) return MN_ERR_ARG;
    mn_status s = mn_chain_init(m, base, tip, a, &c->ch);
    if (s != MN_OK) return s;
    int nj = c->ch.njoint, nd = c->ch.ndof;
    double* isqs = mn_arena_alloc(a, sizeof(double) * (size_t)(nd + nj + 1));
    mn_xform* xf = mn_arena_alloc(a, sizeof(mn_xform) * (size_t)(nj + 1));
    if (!isqs || !xf) return MN_ERR_NOMEM;
    double* w = isqs + nd;
    for (int k = 0; k < nd; k++) isqs[k] = 1.0 / sqrt(c->ch.stiffness[k]);
    double reach = mn_vec3_norm(point);
    for (int i = 0; i < nj; i++) {
        int j = c->ch.jnt[i], type = m->jnt_type[j];
        double st = m->jnt_stiffness[j];
        w[i] = st > 1.0 ? 1.0 / st : 1.0;
        if (type == MN_JOINT_SLIDE || type == MN_JOINT_FREE) c->has_slide = 1;
        reach += mn_vec3_norm(m->jnt_offset[j]);
    }
    c->m = m;
    c->isqs = isqs;
    c->w = w;
    c->base_xf = base >= 0 ? d->xf[base] : mn_xform_identity();
    c->reach = reach;
    c->xf = xf;
    return MN_OK;
}

mn_status mn_ik_begin(const mn_model* m, mn_data* d, const mn_ik_problem* p, mn_ik_result* r, mn_ikc* c,
                      mn_ik_goal* g) {
    size_t mark = mn_arena_mark(&d->arena);
    mn_status s = mn_ikc_build(m, d, p->base, p->tip, p->point, &d->arena, c);
    if (s != MN_OK) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, s, "ik: arena too small for the chain");
    }
    *g = mn_ik_goal_make(p, c);
    return MN_OK;
}

/* T_j = T_parent Trans(offset) Rot(orient) Motion_j(q) (model.h), relative to the base: the
 * model's own joint step, along the chain's path. */
void mn_ikc_fk(const mn_ikc* c, const double* qc, mn_vec3 point, mn_xform* tip, mn_vec3* p) {
    mn_xform X = mn_xform_identity();
    if (c->ch.njoint > 0) {
        mn_chain_frames(c->m, &c->ch, qc, c->xf);
        X = c->xf[c->ch.njoint - 1];
    }
    if (tip) *tip = X;
    if (p) *p = mn_xform_apply(&X, point);
}

/* ---- goals ----------------------------------------------------------------------------- */

mn_ik_goal mn_ik_goal_make(const mn_ik_problem* p, const mn_ikc* c) {
    mn_ik_goal g;
    g.use_pos = p->use_position != 0;
    g.use_rot = p->use_orientation != 0;
    g.rows = 3 * (g.use_pos + g.use_rot);
    g.point = p->point;
    g.pos = p->target_pos;
    g.R = mn_quat_to_mat3(mn_quat_normalize(p->target_rot));
    g.wp = p->w_pos;
    /* A rotation error in radians times a length makes the two kinds of rows commensurate
     * (Welman 4.1.4: scale-invariant behaviour). */
    double L = c->reach > 0 ? c->reach : 1.0;
    g.wr = p->w_rot * L;
    return g;
}

/* Is every number of the pose finite? A step that overflowed must not pass for a good one:
 * the rotation of a NaN matrix would come out as the identity (its quaternion is
 * normalised to the identity), an error of zero. */
static int pose_finite(const mn_xform* T, mn_vec3 p) {
    double s = p.x + p.y + p.z;
    for (int i = 0; i < 9; i++) s += T->R.m[i];
    return isfinite(s) && isfinite(T->p.x + T->p.y + T->p.z);
}

double mn_ik_goal_error(const mn_ik_goal* g, const mn_xform* tip, mn_vec3 p, double* e,
                        double* pos_err, double* rot_err) {
    double pe = 0, re = 0, e2 = 0;
    if (!pose_finite(tip, p)) {
        for (int i = 0; i < g->rows; i++) e[i] = 0;
        if (pos_err) *pos_err = g->use_pos ? INFINITY : 0;
        if (rot_err) *rot_err = g->use_rot ? INFINITY : 0;
        return INFINITY;
    }
    int k = 0;
    if (g->use_pos) {
        mn_vec3 d = mn_vec3_sub(g->pos, p);
        pe = mn_vec3_norm(d);
        e[0] = g->wp * d.x;
        e[1] = g->wp * d.y;
        e[2] = g->wp * d.z;
        k = 3;
    }
    if (g->use_rot) {
        mn_vec3 w = mn_rotation_error(&g->R, &tip->R);
        re = mn_vec3_norm(w);
        e[k] = g->wr * w.x;
        e[k + 1] = g->wr * w.y;
        e[k + 2] = g->wr * w.z;
    }
    for (int i = 0; i < g->rows; i++) e2 += e[i] * e[i];
    if (pos_err) *pos_err = pe;
    if (rot_err) *rot_err = re;
    return e2;
}

int mn_ik_goal_met(const mn_ik_goal* g, double pos_err, double rot_err, const mn_ik_options* o) {
    return (!g->use_pos || pos_err <= o->tol_pos) && (!g->use_rot || rot_err <= o->tol_rot);
}

/* One column: linear part lin, angular part ang, weighted into the active rows. */
static inline void put_column(const mn_ik_goal* g, double* J, int n, int col, mn_vec3 lin,
                              mn_vec3 ang) {
    int r = 0;
    if (g->use_pos) {
        J[col] = g->wp * lin.x;
        J[n + col] = g->wp * lin.y;
        J[2 * n + col] = g->wp * lin.z;
        r = 3;
    }
    if (g->use_rot) {
        J[r * n + col] = g->wr * ang.x;
        J[(r + 1) * n + col] = g->wr * ang.y;
        J[(r + 2) * n + col] = g->wr * ang.z;
    }
}

void mn_ikc_jacobian(const mn_ikc* c, const mn_ik_goal* g, mn_vec3 p, double* J) {
    const mn_model* m = c->m;
    int n = c->ch.ndof;
    for (int i = 0; i < c->ch.njoint; i++) {
        mn_vec3 lin[6], ang[6];
        /* the parent frame in base coordinates: the previous joint's, or the base itself */
        const mn_mat3* Rp = i > 0 ? &c->xf[i - 1].R : NULL;
        int nv = mn_joint_jacobian_columns(m, c->ch.jnt[i], &c->xf[i], Rp, p, lin, ang);
        for (int a = 0; a < nv; a++) put_column(g, J, n, c->ch.doff[i] + a, lin[a], ang[a]);
    }
}

double mn_ik_max_abs(const double* v, int n) {
    double mx = 0;
    for (int i = 0; i < n; i++) {
        double a = fabs(v[i]);
        if (a > mx) mx = a;
    }
    return mx;
}

/* ---- random numbers --------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t* x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void mn_rng_seed(mn_rng* r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t mn_rng_next(mn_rng* r) {
    uint64_t* s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double mn_rng_uniform(mn_rng* r) { return (double)(mn_rng_next(r) >> 11) * 0x1.0p-53; }

/* A uniformly distributed rotation (Shoemake, Graphics Gems III). */
static mn_quat random_rotation(mn_rng* r) {
    double u1 = mn_rng_uniform(r), u2 = 2 * MN_PI * mn_rng_uniform(r), u3 = 2 * MN_PI * mn_rng_uniform(r);
    double a = sqrt(1 - u1), b = sqrt(u1);
    return mn_q4(b * cos(u3), a * sin(u2), a * cos(u2), b * sin(u3));
}

void mn_ikc_random(const mn_ikc* c, mn_rng* r, double* qc) {
    const mn_model* m = c->m;
    for (int i = 0; i < c->ch.njoint; i++) {
        int j = c->ch.jnt[i], type = m->jnt_type[j], k = c->ch.doff[i];
        double* qj = qc + c->ch.qoff[i];
        if (type == MN_JOINT_HINGE || type == MN_JOINT_SLIDE) {
            double lo = c->ch.lo[k], hi = c->ch.hi[k];
            if (type == MN_JOINT_HINGE) {
                if (!isfinite(lo)) lo = -MN_PI;
                if (!isfinite(hi)) hi = MN_PI;
            }
            if (isfinite(lo) && isfinite(hi)) qj[0] = lo + (hi - lo) * mn_rng_uniform(r);
            continue;
        }
        if (type == MN_JOINT_FREE) qj += 3;
        else if (type != MN_JOINT_BALL) continue;
        mn_quat q;
        if (type == MN_JOINT_BALL && m->jnt_limited[j]) {
            /* Twist uniform in its range, swing direction uniform, swing angle uniform over
             * the cone's cap (cos uniform). */
            /* (u, v, a) right-handed and orthonormal */
            mn_vec3 a = m->jnt_axis[j], u = mn_vec3_neg(mn_vec3_perpendicular(a)), v = mn_vec3_cross(a, u);
            double lo = m->jnt_twist[2 * j], hi = m->jnt_twist[2 * j + 1];
            double tw = lo + (hi - lo) * mn_rng_uniform(r);
            double phi = 2 * MN_PI * mn_rng_uniform(r);
            double cs = 1.0 - (1.0 - cos(m->jnt_swing[j])) * mn_rng_uniform(r);
            mn_vec3 sax = mn_vec3_add(mn_vec3_scale(u, cos(phi)), mn_vec3_scale(v, sin(phi)));
            q = mn_quat_mul(mn_quat_axis_angle(sax, acos(cs)), mn_quat_axis_angle(a, tw));
        } else {
            q = random_rotation(r);
        }
        qj[0] = q.w;
        qj[1] = q.x;
        qj[2] = q.y;
        qj[3] = q.z;
    }
}

/* ---- time ------------------------------------------------------------------------------- */

int64_t mn_ik_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t mn_ik_clock_ns(int cpu) {
    if (!cpu) return mn_ik_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int mn_ik_timed_out(int64_t deadline, int cpu) {
    return deadline != INT64_MAX && mn_ik_clock_ns(cpu) > deadline;
}

int64_t mn_ik_deadline(double timeout_ms, int cpu) {
    if (!(timeout_ms > 0)) return INT64_MAX;
    if (timeout_ms > 1e12) return INT64_MAX;
    return mn_ik_clock_ns(cpu) + (int64_t)(timeout_ms * 1e6);
}

/* ---- small dense solve ---------------------------------------------------------------- */

#if defined(__GNUC__)
#define MN_IK_INLINE static inline __attribute__((always_inline))
#else
#define MN_IK_INLINE static inline
#endif

/* Square-root-free Cholesky (L D L^T) with the reciprocals of D kept, so the whole solve
 * costs n divisions and no square root: on the 6x6 systems of LM the divisions' latency,
 * not the multiply-adds, is what takes the time. A's lower triangle is overwritten with
 * L D (column j scaled by d_j), its diagonal with 1 / d_j. */
MN_IK_INLINE int spd_solve_n(double* A, int n, double* b) {
    for (int j = 0; j < n; j++) {
        double* Aj = A + j * n;
        /* d_j = A_jj - sum_k L_jk^2 d_k, with (L D)_jk stored: L_jk^2 d_k = (LD)_jk^2 / d_k. */
        double d = Aj[j];
        for (int k = 0; k < j; k++) d -= Aj[k] * Aj[k] * A[k * n + k];
        if (!(d > 0)) return -1;
        double inv = 1.0 / d;
        for (int i = j + 1; i < n; i++) {
            double* Ai = A + i * n;
            double s = Ai[j];
            for (int k = 0; k < j; k++) s -= Ai[k] * Aj[k] * A[k * n + k];
            Ai[j] = s; /* (L D)_ij */
        }
        Aj[j] = inv;
    }
    for (int i = 0; i < n; i++) { /* L y = b, L_ik = (LD)_ik / d_k */
        const double* Ai = A + i * n;
        double s = b[i];
        for (int k = 0; k < i; k++) s -= Ai[k] * A[k * n + k] * b[k];
        b[i] = s;
    }
    for (int i = 0; i < n; i++) b[i] *= A[i * n + i]; /* D z = y */
    for (int i = n - 1; i >= 0; i--) { /* L^T x = z */
        double s = b[i];
        for (int k = i + 1; k < n; k++) s -= A[k * n + i] * A[i * n + i] * b[k];
        b[i] = s;
    }
    return 0;
}

/* The 3x3 and 6x6 systems of the solvers get their own unrolled copies. */
int mn_ik_spd_solve(double* A, int n, double* b) {
    switch (n) {
    case 3: return spd_solve_n(A, 3, b);
    case 6: return spd_solve_n(A, 6, b);
    default: return spd_solve_n(A, n, b);
    }
}

mn_status mn_ik_fail(mn_ik_result* r, mn_status s, const char* fmt, ...) {
    r->status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- the iteration shared by the Jacobian methods --------------------------------------- */

/* A small random velocity: 0.02 rad for rotations, 0.02 reach for translations. */
static void perturbation(const mn_ikc* c, mn_rng* rng, double* v) {
    const mn_model* m = c->m;
    double L = c->reach > 0 ? c->reach : 1.0;
    for (int i = 0; i < c->ch.njoint; i++) {
        int type = m->jnt_type[c->ch.jnt[i]], k = c->ch.doff[i];
        int nv = mn_joint_type_nv((mn_joint_type)type);
        for (int a = 0; a < nv; a++) {
            int linear = type == MN_JOINT_SLIDE || (type == MN_JOINT_FREE && a < 3);
            v[k + a] = 0.02 * (2 * mn_rng_uniform(rng) - 1) * (linear ? L : 1.0);
        }
    }
}

/* Line search along the steepest-descent direction dq = S^-1 J^T e scaled by its optimal
 * length <e, J dq> / |J dq|^2. On success q holds the new state and 1 is returned. */
static int descent_step(const mn_ikc* c, const mn_ik_goal* g, const mn_ik_options* o, const double* J,
                        const double* e, double err, double* q, double* qt, double* dq, mn_xform* tip,
                        mn_vec3* pt, double* et, double* pet, double* ret) {
    int n = c->ch.ndof, rows = g->rows;
    for (int j = 0; j < n; j++) {
        double v = 0;
        for (int r = 0; r < rows; r++) v += J[r * n + j] * e[r];
        dq[j] = v / c->ch.stiffness[j];
    }
    double num = 0, den = 0;
    for (int r = 0; r < rows; r++) {
        double v = 0;
        for (int j = 0; j < n; j++) v += J[r * n + j] * dq[j];
        num += e[r] * v;
        den += v * v;
    }
    if (!(num > 0 && den > 0)) return 0;
    double mx = mn_ik_max_abs(dq, n) * num / den;
    double h = num / den;
    if (o->max_step > 0 && mx > o->max_step) h *= o->max_step / mx;
    for (int tries = 0; tries < 30; tries++, h *= 0.5) {
        memcpy(qt, q, sizeof(double) * (size_t)c->ch.nq);
        mn_ikc_integrate(c, qt, dq, h);
        if (o->respect_limits) mn_ikc_clamp(c, qt);
        mn_ikc_fk(c, qt, g->point, tip, pt);
        double errt = mn_ik_goal_error(g, tip, *pt, et, pet, ret);
        if (errt < err * (1 - 1e-12)) {
            memcpy(q, qt, sizeof(double) * (size_t)c->ch.nq);
            return 1;
        }
    }
    return 0;
}

mn_status mn_ik_iterate(const mn_model* m, mn_data* d, const mn_ikc* c, const mn_ik_goal* g,
                        const mn_ik_options* o, mn_ik_result* r, mn_ik_step_fn step, void* ctx) {
    int n = c->ch.ndof, nq = c->ch.nq, rows = g->rows;
    double* J = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(6 * n));
    double* dq = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)n);
    double* q = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(3 * nq));
    if (!J || !dq || !q) return mn_ik_fail(r, MN_ERR_NOMEM, "ik: arena too small for the chain");
    double *qt = q + nq, *qbest = qt + nq;
    mn_chain_gather(&c->ch, d->q, q);
    if (o->respect_limits) mn_ikc_clamp(c, q);
    mn_rng rng;
    mn_rng_seed(&rng, o->seed);
    int64_t deadline = mn_ik_deadline(o->timeout_ms, o->timeout_cpu);

    double e[6], et[6], pe, re, pet, ret;
    mn_xform tip;
    mn_vec3 pt;
    mn_ikc_fk(c, q, g->point, &tip, &pt);
    double err = mn_ik_goal_error(g, &tip, pt, e, &pe, &re);
    double best = err, best_pe = pe, best_re = re;
    memcpy(qbest, q, sizeof(double) * (size_t)nq);
    double seen[4];
    int nseen = 0, iters = 0, met = 0, unreachable = 0, timed_out = 0;

    while (!(met = mn_ik_goal_met(g, pe, re, o)) && iters < o->max_iters) {
        if ((iters & (o->timeout_cpu ? 31 : 3)) == 0 && deadline != INT64_MAX &&
            mn_ik_clock_ns(o->timeout_cpu) > deadline) {
            timed_out = 1;
            break;
        }
        iters++;
        mn_ikc_jacobian(c, g, pt, J);
        int ok = step(ctx, c, q, J, e, rows, dq) == 0;
        int accepted = 0;
        if (ok) {
            double mx = mn_ik_max_abs(dq, n);
            double h = (o->max_step > 0 && mx > o->max_step) ? o->max_step / mx : 1.0;
            for (int tries = 0; tries < 12 && mx * h > 1e-14; tries++, h *= 0.5) {
                memcpy(qt, q, sizeof(double) * (size_t)nq);
                mn_ikc_integrate(c, qt, dq, h);
                if (o->respect_limits) mn_ikc_clamp(c, qt);
                mn_ikc_fk(c, qt, g->point, &tip, &pt);
                double errt = mn_ik_goal_error(g, &tip, pt, et, &pet, &ret);
                if (errt < err * (1 - 1e-10)) {
                    memcpy(q, qt, sizeof(double) * (size_t)nq);
                    memcpy(e, et, sizeof(double) * (size_t)rows);
                    err = errt;
                    pe = pet;
                    re = ret;
                    accepted = 1;
                    break;
                }
            }
        }
        if (!accepted) {
            /* The method's step failed: fall back to steepest descent (the Jacobian
             * transpose with the optimal step length, Welman 4.1), which lowers the error
             * for a small enough step unless the gradient vanishes. */
            mn_ikc_fk(c, q, g->point, &tip, &pt);
            mn_ikc_jacobian(c, g, pt, J);
            accepted = descent_step(c, g, o, J, e, err, q, qt, dq, &tip, &pt, et, &pet, &ret);
        }
        if (!accepted) {
            /* A stationary point. The same residual twice: a minimum the goal cannot get
             * past. Otherwise step off it (a saddle, Welman Fig. 4.2). */
            int same = 0;
            for (int k = 0; k < nseen; k++)
                if (fabs(seen[k] - err) <= 1e-6 * err + 1e-300) same++;
            if (same >= 1) {
                unreachable = 1;
                break;
            }
            if (nseen < 4) seen[nseen++] = err;
            else {
                unreachable = 1;
                break;
            }
            perturbation(c, &rng, dq);
            mn_ikc_integrate(c, q, dq, 1.0);
            if (o->respect_limits) mn_ikc_clamp(c, q);
        }
        mn_ikc_fk(c, q, g->point, &tip, &pt);
        err = mn_ik_goal_error(g, &tip, pt, e, &pe, &re);
        if (err < best) {
            best = err;
            best_pe = pe;
            best_re = re;
            memcpy(qbest, q, sizeof(double) * (size_t)nq);
        }
    }
    if (met && err <= best) {
        best_pe = pe;
        best_re = re;
        memcpy(qbest, q, sizeof(double) * (size_t)nq);
    }
    mn_chain_scatter(&c->ch, qbest, d->q);
    mn_fk_subtree(m, d, c->ch.jnt[0]); /* the part of the figure the chain moves */
    r->iterations = iters;
    r->restarts = 0;
    r->pos_err = best_pe;
    r->rot_err = best_re;
    if (met) return r->status = MN_OK;
    if (unreachable)
        return mn_ik_fail(r, MN_ERR_UNREACHABLE,
                          "ik: target: unreachable, best pose misses by %.3g (position) %.3g rad (rotation)",
                          best_pe, best_re);
    return mn_ik_fail(r, MN_ERR_NOCONVERGE, "ik: %s ran out after %d iterations",
                      timed_out ? "time budget" : "iteration budget", iters);
}
