/* Shared helpers of the chain IK methods: see ik_common.h. */
#include "ik/ik_common.h"

#include <marionette/linalg.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- the chain ------------------------------------------------------------------------ */

mn_status mn_ikc_build(const mn_model* m, const mn_data* d, int base, int tip, mn_vec3 point,
                       int free_locked, mn_arena* a, mn_ikc* c) {
    memset(c, 0, sizeof *c);
    if (tip == base) return MN_ERR_ARG;
    mn_status s = mn_chain_init(m, base, tip, a, &c->ch);
    if (s != MN_OK) return s;
    if (free_locked) mn_chain_free_locked(m, &c->ch);
    int nj = c->ch.njoint, nd = c->ch.ndof;
    double* isqs = mn_arena_alloc(a, sizeof(double) * (size_t)(nd + nj + 1));
    mn_xform* xf = mn_arena_alloc(a, sizeof(mn_xform) * (size_t)(nj + 1));
    if (!isqs || !xf) return MN_ERR_NOMEM;
    double* w = isqs + nd;
    c->unit_stiffness = 1;
    for (int k = 0; k < nd; k++) {
        isqs[k] = 1.0 / sqrt(c->ch.stiffness[k]);
        if (isqs[k] != 1.0) c->unit_stiffness = 0;
    }
    double reach = mn_vec3_norm(point);
    for (int i = 0; i < nj; i++) {
        int j = c->ch.jnt[i], type = m->jnt_type[j];
        double st = m->jnt_stiffness[j];
        w[i] = st > 1.0 ? 1.0 / st : 1.0;
        if ((type == MN_JOINT_SLIDE || type == MN_JOINT_FREE) &&
            !(c->ch.locked && c->ch.locked[c->ch.doff[i]]))
            c->has_slide = 1;
        reach += mn_vec3_norm(m->jnt_offset[j]);
    }
    /* a robot arm: hinges only (fixed joints aside), an FK program, nothing held */
    int arm = c->ch.simple && c->ch.fk_prog && !c->ch.locked && nd <= 64;
    for (int i = 0; i < nj && arm; i++)
        if (m->jnt_type[c->ch.jnt[i]] != MN_JOINT_HINGE &&
            m->jnt_type[c->ch.jnt[i]] != MN_JOINT_FIXED)
            arm = 0;
    if (arm) {
        c->ax = mn_arena_alloc(a, sizeof(double) * (size_t)(6 * nd));
        if (!c->ax) return MN_ERR_NOMEM;
        c->org = c->ax + 3 * nd;
    }
    c->m = m;
    c->isqs = isqs;
    c->w = w;
    c->base_xf = base >= 0 ? d->xf[base] : mn_xform_identity();
    c->reach = reach;
    c->xf = xf;
    return MN_OK;
}

mn_status mn_ik_begin(const mn_model* m, mn_data* d, const mn_ik_problem* p, const mn_ik_options* o,
                      mn_ik_result* r, mn_ikc* c, mn_ik_goal* g) {
    size_t mark = mn_arena_mark(&d->arena);
    mn_status s = mn_ikc_build(m, d, p->base, p->tip, p->point, o->free_locked, &d->arena, c);
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

void mn_ikc_fk_axes(const mn_ikc* c, const double* qc, mn_vec3 point, mn_xform* tip, mn_vec3* p) {
    mn_xform X;
    mn_chain_fk_axes(c->m, &c->ch, qc, &X, c->ax, c->org);
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
    for (int i = 0; i < 9; i++)
        s += T->R.m[i];
    return isfinite(s) && isfinite(T->p.x + T->p.y + T->p.z);
}

/* log(A B^T), the rotation vector carrying B onto A (mn_rotation_error), without the
 * quaternion: for an angle below 90 degrees (every iteration near the goal) the axis times
 * the sine is the skew part of E = A B^T and the cosine (trace E - 1) / 2, both well
 * conditioned; larger angles take mn_rotation_error's robust path. */
static mn_vec3 rotation_error(const mn_mat3* A, const mn_mat3* B) {
    const double *a = A->m, *b = B->m;
    double E[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            E[3 * i + j] =
                a[3 * i] * b[3 * j] + a[3 * i + 1] * b[3 * j + 1] + a[3 * i + 2] * b[3 * j + 2];
    double c = 0.5 * (E[0] + E[4] + E[8] - 1.0);
    if (!(c > 0)) return mn_rotation_error(A, B);
    mn_vec3 v = mn_v3(0.5 * (E[7] - E[5]), 0.5 * (E[2] - E[6]), 0.5 * (E[3] - E[1]));
    double s = mn_vec3_norm(v);
    /* angle / sin(angle): 1 + s^2 / 6 to double precision below s = 1e-4 */
    double k = s < 1e-4 ? 1.0 + s * s / 6.0 : atan2(s, c) / s;
    return mn_vec3_scale(v, k);
}

double mn_ik_goal_error(const mn_ik_goal* g, const mn_xform* tip, mn_vec3 p, double* e,
                        double* pos_err, double* rot_err) {
    double pe = 0, re = 0, e2 = 0;
    if (!pose_finite(tip, p)) {
        for (int i = 0; i < g->rows; i++)
            e[i] = 0;
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
        mn_vec3 w = rotation_error(&g->R, &tip->R);
        re = mn_vec3_norm(w);
        e[k] = g->wr * w.x;
        e[k + 1] = g->wr * w.y;
        e[k + 2] = g->wr * w.z;
    }
    for (int i = 0; i < g->rows; i++)
        e2 += e[i] * e[i];
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

/* The columns of a ball or free joint, chain index i (kept out of the 1-DOF loop). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void
multi_dof_columns(const mn_ikc* c, const mn_ik_goal* g, int i, mn_vec3 p, double* J) {
    mn_vec3 lin[6], ang[6];
    /* the parent frame in base coordinates: the previous joint's, or the base itself */
    const mn_mat3* Rp = i > 0 ? &c->xf[i - 1].R : NULL;
    int nv = mn_joint_jacobian_columns(c->m, c->ch.jnt[i], &c->xf[i], Rp, p, lin, ang);
    for (int k = 0; k < nv; k++)
        put_column(g, J, c->ch.ndof, c->ch.doff[i] + k, lin[k], ang[k]);
}

/* The held DOFs' columns: zero (kept out of the hinge and slide loop). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void
zero_held_columns(const mn_ikc* c, int rows, double* J) {
    int n = c->ch.ndof;
    for (int k = 0; k < n; k++)
        if (c->ch.locked[k])
            for (int r = 0; r < rows; r++)
                J[r * n + k] = 0.0;
}

void mn_ikc_jacobian(const mn_ikc* c, const mn_ik_goal* g, mn_vec3 p, double* J) {
    const mn_model* m = c->m;
    int n = c->ch.ndof;
    for (int i = 0; i < c->ch.njoint; i++) {
        int j = c->ch.jnt[i], k = c->ch.doff[i];
        const mn_xform* T = &c->xf[i];
        mn_vec3 lin, ang;
        switch (m->jnt_type[j]) { /* hinges and slides (robot arms) without the column arrays */
        case MN_JOINT_HINGE:
            mn_dof_rotation_column(mn_mat3_mulv(&T->R, m->jnt_axis[j]), T->p, p, &lin, &ang);
            put_column(g, J, n, k, lin, ang);
            break;
        case MN_JOINT_SLIDE:
            mn_dof_translation_column(mn_mat3_mulv(&T->R, m->jnt_axis[j]), &lin, &ang);
            put_column(g, J, n, k, lin, ang);
            break;
        case MN_JOINT_BALL:
        case MN_JOINT_FREE:
            multi_dof_columns(c, g, i, p, J);
            break;
        default:
            break;
        }
    }
    if (c->ch.locked) zero_held_columns(c, g->rows, J);
}

void mn_ikc_jacobian_axes(const mn_ikc* c, const mn_ik_goal* g, mn_vec3 p, double* J) {
    int n = c->ch.ndof;
    const double *ax = c->ax, *o = c->org;
    for (int k = 0; k < n; k++) {
        mn_vec3 a = mn_v3(ax[3 * k], ax[3 * k + 1], ax[3 * k + 2]), lin, ang;
        mn_dof_rotation_column(a, mn_v3(o[3 * k], o[3 * k + 1], o[3 * k + 2]), p, &lin, &ang);
        put_column(g, J, n, k, lin, ang);
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
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

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

double mn_rng_uniform(mn_rng* r) {
    return (double)(mn_rng_next(r) >> 11) * 0x1.0p-53;
}

/* A uniformly distributed rotation (Shoemake, Graphics Gems III). */
static mn_quat random_rotation(mn_rng* r) {
    double u1 = mn_rng_uniform(r), u2 = 2 * MN_PI * mn_rng_uniform(r),
           u3 = 2 * MN_PI * mn_rng_uniform(r);
    double a = sqrt(1 - u1), b = sqrt(u1);
    return mn_q4(b * cos(u3), a * sin(u2), a * cos(u2), b * sin(u3));
}

void mn_ikc_random(const mn_ikc* c, mn_rng* r, double* qc) {
    const mn_model* m = c->m;
    for (int i = 0; i < c->ch.njoint; i++) {
        int j = c->ch.jnt[i], type = m->jnt_type[j], k = c->ch.doff[i];
        double* qj = qc + c->ch.qoff[i];
        /* a held joint keeps its value (a free joint's held position is kept anyway) */
        if (c->ch.locked && type != MN_JOINT_FIXED &&
            c->ch.locked[type == MN_JOINT_FREE ? k + 3 : k])
            continue;
        if (type == MN_JOINT_HINGE || type == MN_JOINT_SLIDE) {
            double lo = c->ch.lo[k], hi = c->ch.hi[k];
            if (type == MN_JOINT_HINGE) {
                if (!isfinite(lo)) lo = -MN_PI;
                if (!isfinite(hi)) hi = MN_PI;
            }
            if (isfinite(lo) && isfinite(hi)) qj[0] = lo + (hi - lo) * mn_rng_uniform(r);
            continue;
        }
        if (type == MN_JOINT_FREE)
            qj += 3;
        else if (type != MN_JOINT_BALL)
            continue;
        mn_quat q;
        if (type == MN_JOINT_BALL && m->jnt_limited[j]) {
            /* Twist uniform in its range, swing direction uniform, swing angle uniform over
             * the cone's cap (cos uniform). */
            /* (u, v, a) right-handed and orthonormal */
            mn_vec3 a = m->jnt_axis[j], u = mn_vec3_neg(mn_vec3_perpendicular(a)),
                    v = mn_vec3_cross(a, u);
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
        for (int k = 0; k < j; k++)
            d -= Aj[k] * Aj[k] * A[k * n + k];
        if (!(d > 0)) return -1;
        double inv = 1.0 / d;
        for (int i = j + 1; i < n; i++) {
            double* Ai = A + i * n;
            double s = Ai[j];
            for (int k = 0; k < j; k++)
                s -= Ai[k] * Aj[k] * A[k * n + k];
            Ai[j] = s; /* (L D)_ij */
        }
        Aj[j] = inv;
    }
    for (int i = 0; i < n; i++) { /* L y = b, L_ik = (LD)_ik / d_k */
        const double* Ai = A + i * n;
        double s = b[i];
        for (int k = 0; k < i; k++)
            s -= Ai[k] * A[k * n + k] * b[k];
        b[i] = s;
    }
    for (int i = 0; i < n; i++)
        b[i] *= A[i * n + i];          /* D z = y */
    for (int i = n - 1; i >= 0; i--) { /* L^T x = z */
        double s = b[i];
        for (int k = i + 1; k < n; k++)
            s -= A[k * n + i] * A[i * n + i] * b[k];
        b[i] = s;
    }
    return 0;
}

/* The 3x3 and 6x6 systems of the solvers get their own unrolled copies. */
int mn_ik_spd_solve(double* A, int n, double* b) {
    switch (n) {
    case 3:
        return spd_solve_n(A, 3, b);
    case 6:
        return spd_solve_n(A, 6, b);
    default:
        return spd_solve_n(A, n, b);
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

/* ---- the one iteration driver ----------------------------------------------------------- */

void mn_ik_escape_velocity(const mn_ikc* c, const double* qc, double angle, int limits, double* v) {
    const mn_model* m = c->m;
    for (int k = 0; k < c->ch.ndof; k++)
        v[k] = 0;
    for (int i = 0; i < c->ch.njoint; i++) {
        int j = c->ch.jnt[i], k = c->ch.doff[i];
        if (c->ch.locked && m->jnt_type[j] != MN_JOINT_FIXED && c->ch.locked[k]) continue;
        if (m->jnt_type[j] == MN_JOINT_HINGE) {
            /* the other way when the hinge already sits at its upper limit */
            v[k] = limits && qc[c->ch.qoff[i]] >= c->ch.hi[k] ? -angle : angle;
        } else if (m->jnt_type[j] == MN_JOINT_BALL) {
            mn_vec3 e = mn_vec3_scale(mn_vec3_perpendicular(m->jnt_axis[j]), angle);
            v[k] = e.x, v[k + 1] = e.y, v[k + 2] = e.z;
        }
    }
}

static int goals_met(const mn_ik_loop* L, const mn_ik_options* o, double pe, double re) {
    return (!L->use_pos || pe <= o->tol_pos) && (!L->use_rot || re <= o->tol_rot);
}

mn_status mn_ik_drive(const mn_ik_loop* L, const mn_ik_options* o, mn_ik_result* r,
                      const char* name) {
    enum { STATIONARY, STALLED, SPENT }; /* how an attempt ended */
    double pe, re;
    double merit = L->measure(L->ctx, &pe, &re), best = merit, prev = merit, ref = merit;
    L->save(L->ctx);
    /* the wall clock is a vDSO call (~20 ns), the CPU-time clock a system call (~0.5 us):
     * cheap iterations read them every 4th and 32nd time */
    int mask = L->cheap ? (o->timeout_cpu ? 31 : 3) : 0;
    mn_rng rng;
    if (L->restart) mn_rng_seed(&rng, o->seed);
    double seen[MN_IK_MAX_ESCAPES]; /* residuals the escapes left */
    double lowest = INFINITY;       /* the lowest residual an attempt ended at */
    int nlowest = 0;                /* attempts that ended there */
    int same_needed =
        o->max_restarts / 4 > MN_IK_SAME_MINIMA ? o->max_restarts / 4 : MN_IK_SAME_MINIMA;
    int it = 0, ait = 0, since = 0, moves = 0, escapes = 0, polish = 0;
    int unreachable = 0, timed_out = 0;
    int met = goals_met(L, o, pe, re);
    /* The modes' search (mn_ik_mode): the answers the attempts reach, kept by found. A seed
     * that meets the goal is the answer as it is. */
    int search = o->mode != MN_IK_SPEED && L->found && L->take_found && L->restart;
    int nfound = search ? L->found_before : 0;
    /* a start that is the answer needs no clock (a closed form's, LM) */
    int64_t deadline = met ? INT64_MAX : mn_ik_deadline(o->timeout_ms, o->timeout_cpu);
    for (;;) {
        if (met) {
            if (!search || it == 0) break;
            L->found(L->ctx);
            nfound++;
            if (moves >= o->max_restarts || mn_ik_timed_out(deadline, o->timeout_cpu)) break;
            moves++; /* the next attempt */
            L->restart(L->ctx, &rng);
            ait = since = 0;
            prev = ref = merit = L->measure(L->ctx, &pe, &re);
            met = goals_met(L, o, pe, re);
            continue;
        }
        int end = SPENT;
        if (ait < o->max_iters) {
            /* not at it == 0: the deadline was read from the clock just before */
            if (it && (it & mask) == 0 && mn_ik_timed_out(deadline, o->timeout_cpu)) {
                timed_out = 1;
                break;
            }
            it++;
            ait++;
            int step = L->iterate(L->ctx);
            merit = L->measure(L->ctx, &pe, &re);
            if (merit < best) {
                best = merit;
                L->save(L->ctx);
            }
            if ((met = goals_met(L, o, pe, re))) continue;
            if (merit < MN_IK_PROGRESS * ref) {
                ref = merit;
                since = 0;
            } else {
                since++;
            }
            if (step == MN_IK_STUCK || (step == MN_IK_MOVED && !(prev - merit > 1e-10 * prev))) {
                end = STATIONARY;
            } else {
                prev = merit;
                if (!L->restart || polish || since < MN_IK_STALL_ITERS) continue;
                end = STALLED;
            }
        }
        /* The attempt is over. The polish has no way out; otherwise: */
        if (polish) {
            unreachable = 1;
            break;
        }
        /* 1. The escape from a stationary point. The same residual as an earlier escape
         * left is a minimum the goal cannot get past, and so is a target out of reach;
         * otherwise it is a saddle such as the straight chain pulled inwards of Welman
         * Fig. 4.2, and the escape bends the chain off it. */
        int out = 0;
        if (end == STATIONARY && L->escape && escapes < MN_IK_MAX_ESCAPES &&
            moves < o->max_restarts) {
            int same = 0;
            for (int k = 0; k < escapes; k++)
                if (fabs(seen[k] - merit) <= 1e-6 * merit + L->same_abs) same = 1;
            if (!same && (!L->may_escape || L->may_escape(L->ctx))) {
                seen[escapes++] = merit;
                moves++;
                L->escape(L->ctx);
                out = 1;
            }
        }
        /* 2. A restart, unless the lowest residual keeps coming back; with none left, the
         * polish. */
        if (!out && L->restart) {
            double tol = 1e-3 * lowest + L->same_abs;
            if (nlowest == 0 || merit < lowest - tol) {
                lowest = merit;
                nlowest = 1;
            } else if (fabs(merit - lowest) <= tol && ++nlowest >= same_needed) {
                unreachable = 1;
            }
            if (!unreachable && moves < o->max_restarts) {
                moves++;
                L->restart(L->ctx, &rng);
            } else if (nfound) {
                break; /* the search is over: no polish */
            } else {
                polish = 1;
                L->restore(L->ctx);
            }
            ait = 0;
            out = 1;
        }
        if (!out) { /* no way out */
            if (end == STATIONARY) unreachable = 1;
            break;
        }
        prev = ref = merit = L->measure(L->ctx, &pe, &re);
        since = 0;
        if (merit < best) {
            best = merit;
            L->save(L->ctx);
        }
        met = goals_met(L, o, pe, re);
    }
    if (nfound) { /* the search's best answer */
        L->take_found(L->ctx);
        merit = L->measure(L->ctx, &pe, &re);
        met = 1;
    } else if (!met && merit > best) {
        L->restore(L->ctx);
        merit = L->measure(L->ctx, &pe, &re);
    }
    r->iterations = it;
    r->restarts = moves;
    r->pos_err = pe;
    r->rot_err = re;
    if (met) {
        r->message[0] = '\0';
        return r->status = MN_OK;
    }
    if (unreachable)
        return mn_ik_fail(r, MN_ERR_UNREACHABLE,
                          "%s: target: unreachable, stalled %.3g from it (%.3g rad) after %d "
                          "iterations and %d restarts: out of reach, held by joint limits or at "
                          "a stationary pose",
                          name, pe, re, it, moves);
    return mn_ik_fail(r, MN_ERR_NOCONVERGE,
                      "%s: %s ran out after %d iterations and %d restarts, %.3g from the target "
                      "(%.3g rad)",
                      name, timed_out ? "time budget" : "iteration budget", it, moves, pe, re);
}

/* ---- the Jacobian methods' iteration ------------------------------------------------------ */

double mn_ik_descent_direction(const mn_ikc* c, const double* J, const double* e, int rows,
                               double* dq) {
    int n = c->ch.ndof;
    for (int j = 0; j < n; j++) {
        double v = 0;
        for (int r = 0; r < rows; r++)
            v += J[r * n + j] * e[r];
        dq[j] = v / c->ch.stiffness[j];
    }
    double num = 0, den = 0;
    for (int r = 0; r < rows; r++) {
        double v = 0;
        for (int j = 0; j < n; j++)
            v += J[r * n + j] * dq[j];
        num += e[r] * v;
        den += v * v;
    }
    return (num > 0 && den > 0) ? num / den : 0.0;
}

mn_status mn_ik_svd_alloc(mn_arena* a, int rows, int n, mn_ik_svd* w) {
    int k = rows < n ? rows : n;
    w->s = mn_arena_alloc(a, sizeof(double) * (size_t)(2 * k));
    w->U = mn_arena_alloc(a, sizeof(double) * (size_t)(rows * k));
    w->V = mn_arena_alloc(a, sizeof(double) * (size_t)(n * k));
    w->work = mn_arena_alloc(a, sizeof(double) * mn_svd_work_size(rows, n));
    if (!w->s || !w->U || !w->V || !w->work) return MN_ERR_NOMEM;
    w->t = w->s + k;
    return MN_OK;
}

int mn_ik_svd_scaled(const mn_ikc* c, double* J, int rows, mn_ik_svd* w) {
    int n = c->ch.ndof;
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < n; j++)
            J[r * n + j] *= c->isqs[j];
    mn_status st = mn_svd(J, rows, n, w->s, w->U, w->V, w->work);
    return st == MN_OK || st == MN_ERR_NOCONVERGE ? 0 : -1;
}

typedef struct jac_loop {
    const mn_ikc* c;
    const mn_ik_goal* g;
    const mn_ik_options* o;
    mn_ik_step_fn step;
    void* ctx;
    double *J, *dq, *q, *qt, *qbest;
    double e[6], err;
    mn_vec3 pt;
} jac_loop;

/* Tries q (+) h dq, halving h until the error drops (at most tries times); on success q
 * holds the new state. */
static int line_search(jac_loop* x, double h, int tries) {
    const mn_ikc* c = x->c;
    double et[6], pet, ret;
    mn_xform tip;
    mn_vec3 pt;
    double mx = mn_ik_max_abs(x->dq, c->ch.ndof);
    for (int t = 0; t < tries && mx * h > 1e-14; t++, h *= 0.5) {
        memcpy(x->qt, x->q, sizeof(double) * (size_t)c->ch.nq);
        mn_ikc_integrate(c, x->qt, x->dq, h);
        if (x->o->respect_limits) mn_ikc_clamp(c, x->qt);
        mn_ikc_fk(c, x->qt, x->g->point, &tip, &pt);
        if (mn_ik_goal_error(x->g, &tip, pt, et, &pet, &ret) < x->err * (1 - 1e-10)) {
            memcpy(x->q, x->qt, sizeof(double) * (size_t)c->ch.nq);
            return 1;
        }
    }
    return 0;
}

static int jac_iterate(void* vx) {
    jac_loop* x = vx;
    const mn_ikc* c = x->c;
    int n = c->ch.ndof;
    double max_step = x->o->max_step;
    mn_ikc_jacobian(c, x->g, x->pt, x->J);
    if (x->step(x->ctx, c, x->q, x->J, x->e, x->g->rows, x->dq) == 0) {
        double mx = mn_ik_max_abs(x->dq, n);
        if (line_search(x, (max_step > 0 && mx > max_step) ? max_step / mx : 1.0, 12))
            return MN_IK_MOVED;
    }
    /* The method's step failed: fall back to steepest descent (the Jacobian transpose with
     * the optimal step length, Welman 4.1), which lowers the error for a small enough step
     * unless the gradient vanishes. */
    mn_vec3 pt;
    mn_ikc_fk(c, x->q, x->g->point, NULL, &pt);
    mn_ikc_jacobian(c, x->g, pt, x->J);
    double h = mn_ik_descent_direction(c, x->J, x->e, x->g->rows, x->dq);
    if (!(h > 0)) return MN_IK_STUCK;
    double mx = mn_ik_max_abs(x->dq, n) * h;
    if (max_step > 0 && mx > max_step) h *= max_step / mx;
    return line_search(x, h, 30) ? MN_IK_MOVED : MN_IK_STUCK;
}

static double jac_measure(void* vx, double* pe, double* re) {
    jac_loop* x = vx;
    mn_xform tip;
    mn_ikc_fk(x->c, x->q, x->g->point, &tip, &x->pt);
    x->err = mn_ik_goal_error(x->g, &tip, x->pt, x->e, pe, re);
    return x->err;
}

static void jac_save(void* vx) {
    jac_loop* x = vx;
    memcpy(x->qbest, x->q, sizeof(double) * (size_t)x->c->ch.nq);
}

static void jac_restore(void* vx) {
    jac_loop* x = vx;
    memcpy(x->q, x->qbest, sizeof(double) * (size_t)x->c->ch.nq);
}

static void jac_escape(void* vx) {
    jac_loop* x = vx;
    mn_ik_escape_velocity(x->c, x->q, MN_IK_ESCAPE_ANGLE, x->o->respect_limits, x->dq);
    mn_ikc_integrate(x->c, x->q, x->dq, 1.0);
    if (x->o->respect_limits) mn_ikc_clamp(x->c, x->q);
}

/* A position target farther from the first pivot than the links beyond it reach cannot be
 * met from anywhere: no escape (a slide makes the reach open-ended). */
static int jac_may_escape(void* vx) {
    jac_loop* x = vx;
    const mn_ikc* c = x->c;
    if (!x->g->use_pos || c->has_slide || c->ch.njoint == 0) return 1;
    double arm = mn_vec3_norm(x->g->point);
    mn_ikc_fk(c, x->q, x->g->point, NULL, NULL);
    if (c->ch.locked) { /* held translations: the links as the pose has them */
        for (int i = 1; i < c->ch.njoint; i++)
            arm += mn_vec3_dist(c->xf[i].p, c->xf[i - 1].p);
    } else {
        for (int i = 1; i < c->ch.njoint; i++)
            arm += mn_vec3_norm(c->m->jnt_offset[c->ch.jnt[i]]);
    }
    return mn_vec3_dist(x->g->pos, c->xf[0].p) < arm * (1.0 - 1e-9);
}

mn_status mn_ik_iterate(const mn_model* m, mn_data* d, const mn_ikc* c, const mn_ik_goal* g,
                        const mn_ik_options* o, mn_ik_result* r, mn_ik_step_fn step, void* ctx,
                        const char* name) {
    int n = c->ch.ndof, nq = c->ch.nq;
    jac_loop x;
    memset(&x, 0, sizeof x);
    x.J = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(6 * n));
    x.dq = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)n);
    x.q = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)(3 * nq));
    if (!x.J || !x.dq || !x.q)
        return mn_ik_fail(r, MN_ERR_NOMEM, "ik: arena too small for the chain");
    x.qt = x.q + nq;
    x.qbest = x.qt + nq;
    x.c = c;
    x.g = g;
    x.o = o;
    x.step = step;
    x.ctx = ctx;
    mn_chain_gather(&c->ch, d->q, x.q);
    if (o->respect_limits) mn_ikc_clamp(c, x.q);
    mn_ik_loop L = {.ctx = &x,
                    .iterate = jac_iterate,
                    .measure = jac_measure,
                    .save = jac_save,
                    .restore = jac_restore,
                    .escape = jac_escape,
                    .may_escape = jac_may_escape,
                    .use_pos = g->use_pos,
                    .use_rot = g->use_rot,
                    .cheap = 1};
    mn_status s = mn_ik_drive(&L, o, r, name);
    mn_chain_scatter(&c->ch, x.q, d->q);
    mn_fk_subtree(m, d, c->ch.jnt[0]); /* the part of the figure the chain moves */
    return s;
}

mn_status mn_ik_run_jacobian(const mn_model* m, mn_data* d, const mn_ik_problem* p,
                             const mn_ik_options* o, mn_ik_result* r, mn_ik_step_fn step,
                             mn_ik_setup_fn setup, void* ctx, const char* name) {
    size_t mark = mn_arena_mark(&d->arena);
    mn_ikc c;
    mn_ik_goal g;
    mn_status s = mn_ik_begin(m, d, p, o, r, &c, &g);
    if (s != MN_OK) return s;
    if (setup && setup(ctx, &c, &g, o, &d->arena) != MN_OK) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, MN_ERR_NOMEM, "ik: arena too small for the chain");
    }
    s = mn_ik_iterate(m, d, &c, &g, o, r, step, ctx, name);
    mn_arena_reset(&d->arena, mark);
    return s;
}
