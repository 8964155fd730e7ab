/* The chain view of model.h (one base-to-tip path, built once) and the FK fast path of a
 * serial chain of 1-DOF joints with frames relative to its base, for robot arms: FK walks
 * only the chain; the Jacobian reuses the axes and origins of that pass. */
#include "model/model_internal.h"

#include <stdlib.h>
#include <string.h>

#define MN_CHAIN_MAX 256

int mn_chain_count(const mn_model* m, int base, int tip, int* njoint, int* ndof, int* nq) {
    if (!m || tip < 0 || tip >= m->njoint || base < -1 || base >= m->njoint) return -1;
    int nj = 0, nd = 0, nqc = 0, j = tip;
    for (; j >= 0 && j != base; j = m->jnt_parent[j]) {
        nj++;
        nd += mn_joint_type_nv((mn_joint_type)m->jnt_type[j]);
        nqc += mn_joint_type_nq((mn_joint_type)m->jnt_type[j]);
    }
    if (j != base) return -1;
    if (njoint) *njoint = nj;
    if (ndof) *ndof = nd;
    if (nq) *nq = nqc;
    return 0;
}

static size_t align16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

size_t mn_chain_bytes(int njoint, int ndof, int nq) {
    return align16(sizeof(int) * (size_t)(3 * njoint + 2 * ndof + nq + 1)) +
           align16(sizeof(double) * (size_t)(3 * ndof + 1)) + align16((size_t)ndof + 1) +
           align16(sizeof(mn_cprog) + sizeof(mn_cstep) * (size_t)(njoint + 1));
}

/* ---- the FK program of a chain of 1-DOF joints ---------------------------------------------
 * Forward kinematics along one path (Parent ch. 5), compiled for the path. R = S P with P a
 * signed permutation (model_internal.h, mn_cstep): true column k of R is
 * sg[k] * column pi[k] of S. Composing T_j = Trans(offset) Rot(orient) Motion(q) (model.h)
 * onto R = S P, for each joint:
 *   offset       R o = S (P o): the offset in S's columns;
 *   orientation  a signed permutation O changes P only (R O = S (P O)); a general one is
 *                folded into S (S <- S (P O), P <- I);
 *   hinge        R Rot(a, q) = S Rot(P a, q) P: for a coordinate axis a = +-e_k, P a is
 *                +-e_w, a turn of S about its own column w (the sine's sign from both);
 *                otherwise Rodrigues about the axis P a;
 *   slide        R a q = S (P a) q.
 * Every value is the one the joint-by-joint step gives (mn_jop_step) up to exact sign
 * changes, or, for general orientations and axes, to rounding. */

/* P <- P O for a quarter-turn orientation O: (R O) column k is sign * R column from. */
static void compose_perm(const mn_jop* op, int* pi, int* sg) {
    int npi[3], nsg[3];
    for (int k = 0; k < 3; k++) {
        npi[k] = pi[op->from[k]];
        nsg[k] = (int)op->sgn[k] * sg[op->from[k]];
    }
    for (int k = 0; k < 3; k++)
        pi[k] = npi[k], sg[k] = nsg[k];
}

/* The perm part of P through the chain from P = I (a general orientation resets it to I):
 * P at the end (pi, sg) and the index of the last general orientation (-1 when none). */
static int prog_end(const mn_model* m, const mn_chain* c, int* pi, int* sg) {
    const mn_jop* ops = m->jnt_ops;
    int last = -1;
    pi[0] = 0, pi[1] = 1, pi[2] = 2, sg[0] = sg[1] = sg[2] = 1;
    for (int i = 0; i < c->njoint; i++) {
        const mn_jop* op = &ops[c->jnt[i]];
        if (op->orient == 1) {
            compose_perm(op, pi, sg);
        } else if (op->orient == 2) {
            pi[0] = 0, pi[1] = 1, pi[2] = 2, sg[0] = sg[1] = sg[2] = 1;
            last = i;
        }
    }
    return last;
}

/* The chain's program (mn_cstep, the derivation above). P starts at Pend^-1, from the
 * start when there is no general orientation (S0 = Pend), else at the last general one
 * (whose M becomes M Pend; S0 = I): then P is the identity after the last step and the
 * walk ends on the true tip frame. Built once per chain view, in mn_chain_init. */
static void compile_prog(const mn_model* m, const mn_chain* c, mn_cprog* prog) {
    const mn_jop* ops = m->jnt_ops;
    int pe[3], se[3];
    int last = prog_end(m, c, pe, se);
    int pi[3] = {0, 1, 2}, sg[3] = {1, 1, 1};
    for (int e = 0; e < 9; e++)
        prog->S0[e] = (e % 4 == 0 && last >= 0) ? 1.0 : 0.0;
    if (last < 0)
        for (int k = 0; k < 3; k++) {
            pi[pe[k]] = k, sg[pe[k]] = se[k];
            prog->S0[3 * pe[k] + k] = se[k];
        }
    for (int i = 0; i < c->njoint; i++) {
        const mn_jop* op = &ops[c->jnt[i]];
        mn_cstep* st = &prog->step[i];
        st->off[0] = st->off[1] = st->off[2] = 0;
        for (int k = 0; k < 3; k++)
            st->off[pi[k]] = sg[k] * op->off[k];
        int nz = (st->off[0] != 0) + (st->off[1] != 0) + (st->off[2] != 0);
        st->has_off = nz == 0           ? MN_CS_OFF_NONE
                      : nz > 1          ? MN_CS_OFF_FULL
                      : st->off[0] != 0 ? MN_CS_OFF_X
                      : st->off[1] != 0 ? MN_CS_OFF_Y
                                        : MN_CS_OFF_Z;
        st->general = op->orient == 2;
        if (op->orient == 1) {
            compose_perm(op, pi, sg);
        } else if (op->orient == 2) { /* M = P O: row pi[k] of M is sg[k] times row k of O */
            double M[9];
            for (int k = 0; k < 3; k++)
                for (int col = 0; col < 3; col++)
                    M[3 * pi[k] + col] = sg[k] * op->O[3 * k + col];
            for (int k = 0; k < 3; k++)
                pi[k] = k, sg[k] = 1;
            /* at the last one: P <- Pend^-1 and M <- M Pend, (M Pend) column k = se[k] M
             * column pe[k] */
            if (i == last) {
                for (int r = 0; r < 3; r++)
                    for (int k = 0; k < 3; k++)
                        st->M[3 * r + k] = se[k] * M[3 * r + pe[k]];
                for (int k = 0; k < 3; k++)
                    pi[pe[k]] = k, sg[pe[k]] = se[k];
            } else {
                for (int e = 0; e < 9; e++)
                    st->M[e] = M[e];
            }
        }
        st->axis[0] = st->axis[1] = st->axis[2] = 0; /* P axis */
        for (int k = 0; k < 3; k++)
            st->axis[pi[k]] = sg[k] * op->axis[k];
        st->sgn = 1;
        if (op->type == MN_JOINT_HINGE && op->kind >= 0) {
            int a = op->kind % 3, u = (a + 1) % 3, v = (a + 2) % 3;
            int U = pi[u], V = pi[v];
            /* S_U <- c S_U + s' S_V, S_V <- c S_V - s' S_U with s' = sign(axis) sg[u] sg[v]
             * s: a turn about S's column w by s' when (U, V) is in cyclic order, by -s'
             * otherwise */
            int sgn = (op->kind >= 3 ? -1 : 1) * sg[u] * sg[v];
            if (V != (U + 1) % 3) sgn = -sgn;
            st->op = (int8_t)(MN_CS_ROT_X + (3 - U - V));
            st->sgn = sgn;
        } else if (op->type == MN_JOINT_HINGE) {
            st->op = MN_CS_ROT_AXIS;
        } else if (op->type == MN_JOINT_SLIDE) {
            st->op = MN_CS_SLIDE;
        } else {
            st->op = MN_CS_FIXED;
        }
        st->ident = pi[0] == 0 && pi[1] == 1 && pi[2] == 2 && sg[0] > 0 && sg[1] > 0 && sg[2] > 0;
        for (int k = 0; k < 3; k++)
            st->perm[k] = (int8_t)((pi[k] + 1) * sg[k]);
    }
}

mn_status mn_chain_init(const mn_model* m, int base, int tip, mn_arena* a, mn_chain* c) {
    int nj, nd, nq;
    memset(c, 0, sizeof *c);
    if (mn_chain_count(m, base, tip, &nj, &nd, &nq) != 0) return MN_ERR_ARG;
    int* ib = mn_arena_alloc(a, sizeof(int) * (size_t)(3 * nj + 2 * nd + nq + 1));
    double* db = mn_arena_alloc(a, sizeof(double) * (size_t)(3 * nd + 1));
    if (!ib || !db) return MN_ERR_NOMEM;
    c->base = base;
    c->tip = tip;
    c->njoint = nj;
    c->ndof = nd;
    c->nq = nq;
    c->jnt = ib;
    c->qoff = ib + nj;
    c->doff = c->qoff + nj;
    c->dof = c->doff + nj;
    c->dof_path = c->dof + nd;
    c->qadr = c->dof_path + nd;
    c->lo = db;
    c->hi = db + nd;
    c->stiffness = db + 2 * nd;
    for (int i = nj - 1, j = tip; i >= 0; i--, j = m->jnt_parent[j])
        c->jnt[i] = j;
    int iq = 0, id = 0;
    c->simple = 1;
    for (int i = 0; i < nj; i++) {
        int j = c->jnt[i], type = m->jnt_type[j];
        int jq = mn_joint_type_nq((mn_joint_type)type), jd = mn_joint_type_nv((mn_joint_type)type);
        c->qoff[i] = iq;
        c->doff[i] = id;
        for (int k = 0; k < jq; k++)
            c->qadr[iq + k] = m->jnt_qadr[j] + k;
        for (int k = 0; k < jd; k++) {
            int dof = m->jnt_dofadr[j] + k;
            double st = m->dof_stiffness[dof];
            c->dof[id + k] = dof;
            c->dof_path[id + k] = i;
            c->lo[id + k] = -INFINITY;
            c->hi[id + k] = INFINITY;
            c->stiffness[id + k] = st > 0 ? st : 1.0;
        }
        if ((type == MN_JOINT_HINGE || type == MN_JOINT_SLIDE) && m->jnt_limited[j] &&
            !m->dof_locked[m->jnt_dofadr[j]]) {
            c->lo[id] = m->jnt_range[2 * j];
            c->hi[id] = m->jnt_range[2 * j + 1];
        }
        if (type == MN_JOINT_BALL || type == MN_JOINT_FREE) c->simple = 0;
        for (int k = 0; k < jd; k++)
            c->nlocked += m->dof_locked[m->jnt_dofadr[j] + k];
        iq += jq;
        id += jd;
    }
    if (c->nlocked) {
        uint8_t* lk = mn_arena_alloc(a, (size_t)nd);
        if (!lk) return MN_ERR_NOMEM;
        for (int k = 0; k < nd; k++)
            lk[k] = m->dof_locked[c->dof[k]];
        c->locked = lk;
    }
    if (c->simple && nj > 0) {
        mn_cprog* prog = mn_arena_alloc(a, sizeof(mn_cprog) + sizeof(mn_cstep) * (size_t)nj);
        if (!prog) return MN_ERR_NOMEM;
        compile_prog(m, c, prog);
        c->fk_prog = prog;
    }
    return MN_OK;
}

void mn_chain_free_locked(const mn_model* m, mn_chain* c) {
    if (!c->locked) return;
    for (int i = 0; i < c->njoint; i++) { /* the ranges a held hinge or slide went without */
        int j = c->jnt[i], t = m->jnt_type[j], k = c->doff[i];
        if ((t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) && m->jnt_limited[j]) {
            c->lo[k] = m->jnt_range[2 * j];
            c->hi[k] = m->jnt_range[2 * j + 1];
        }
    }
    c->locked = NULL;
    c->nlocked = 0;
}

/* Does chain joint i hold any of its DOFs? */
static int joint_held(const mn_chain* c, int i, int nv) {
    for (int k = 0; k < nv; k++)
        if (c->locked[c->doff[i] + k]) return 1;
    return 0;
}

mn_chain* mn_chain_create(const mn_model* m, int base, int tip, mn_error* err) {
    if (!m || tip < 0 || tip >= m->njoint || base < -1 || base >= m->njoint) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "chain", "joint index out of range");
        return NULL;
    }
    int nj, nd, nq;
    if (mn_chain_count(m, base, tip, &nj, &nd, &nq) != 0) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "chain", "tip '%s' is not below base '%s'",
                     m->jnt_name[tip], m->jnt_name[base]);
        return NULL;
    }
    for (int k = tip; k != base; k = m->jnt_parent[k]) {
        int t = m->jnt_type[k];
        if (t == MN_JOINT_BALL || t == MN_JOINT_FREE) {
            mn_error_set(err, MN_ERR_UNSUPPORTED, "", 0, m->jnt_name[k],
                         "chain: %s joints are not supported by the chain fast path",
                         mn_joint_type_name(t));
            return NULL;
        }
    }
    if (nj > MN_CHAIN_MAX) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "chain", "more than %d joints", MN_CHAIN_MAX);
        return NULL;
    }
    size_t bytes = mn_chain_bytes(nj, nd, nq);
    mn_chain* c = calloc(1, sizeof *c);
    void* block = malloc(bytes);
    mn_arena a;
    mn_arena_init(&a, block, bytes);
    if (!c || !block || mn_chain_init(m, base, tip, &a, c) != MN_OK) {
        free(c);
        free(block);
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "chain", "out of memory");
        return NULL;
    }
    c->block = block;
    return c;
}

void mn_chain_destroy(mn_chain* c) {
    if (!c) return;
    free(c->block);
    free(c);
}

void mn_chain_gather(const mn_chain* c, const double* q, double* qc) {
    for (int i = 0; i < c->nq; i++)
        qc[i] = q[c->qadr[i]];
}

void mn_chain_scatter(const mn_chain* c, const double* qc, double* q) {
    for (int i = 0; i < c->nq; i++)
        q[c->qadr[i]] = qc[i];
}

/* mn_chain_integrate with held DOFs: their velocity is taken as 0, and a joint whose DOFs
 * are all held is not touched (a quaternion is not even re-normalised). */
static void integrate_held(const mn_model* m, const mn_chain* c, double* qc, const double* v,
                           double scale) {
    for (int i = 0; i < c->njoint; i++) {
        int t = m->jnt_type[c->jnt[i]], nv = mn_joint_type_nv((mn_joint_type)t), free = 0;
        double vj[6];
        for (int k = 0; k < nv; k++) {
            int held = c->locked[c->doff[i] + k];
            vj[k] = held ? 0.0 : v[c->doff[i] + k];
            free += !held;
        }
        if (free) mn_joint_integrate((mn_joint_type)t, qc + c->qoff[i], vj, scale);
    }
}

void mn_chain_integrate(const mn_model* m, const mn_chain* c, double* qc, const double* v,
                        double scale) {
    if (c->locked) {
        integrate_held(m, c, qc, v, scale);
        return;
    }
    if (c->simple) { /* hinges and slides: one number per DOF */
        for (int i = 0; i < c->ndof; i++)
            qc[i] += scale * v[i];
        return;
    }
    for (int i = 0; i < c->njoint; i++)
        mn_joint_integrate((mn_joint_type)m->jnt_type[c->jnt[i]], qc + c->qoff[i], v + c->doff[i],
                           scale);
}

void mn_chain_clamp(const mn_model* m, const mn_chain* c, double* qc) {
    if (c->simple) { /* the ranges, unrolled from mn_joint_clamp: lo/hi are +-inf when unlimited
                        or held */
        for (int i = 0; i < c->ndof; i++) {
            if (qc[i] < c->lo[i]) qc[i] = c->lo[i];
            if (qc[i] > c->hi[i]) qc[i] = c->hi[i];
        }
        return;
    }
    for (int i = 0; i < c->njoint; i++) {
        int j = c->jnt[i];
        if (c->locked && joint_held(c, i, mn_joint_type_nv((mn_joint_type)m->jnt_type[j])))
            continue;
        mn_joint_clamp(m, j, qc + c->qoff[i]);
    }
}

/* sin and cos of every hinge first: independent of each other, so they overlap. */
static inline void chain_sincos(const mn_chain* c, const double* qc, double* s, double* co) {
    for (int k = 0; k < c->ndof; k++)
        mn_sincos_fast(qc[k], &s[k], &co[k]);
}

void mn_path_fk(const mn_model* m, const int* jnt, int n, const double* qc, mn_xform* frames) {
    const mn_jop* ops = m->jnt_ops;
    double sn[MN_CHAIN_MAX], cs[MN_CHAIN_MAX];
    int nd = 0;
    for (int i = 0; i < n && i < MN_CHAIN_MAX; i++)
        if (ops[jnt[i]].type != MN_JOINT_FIXED) {
            mn_sincos_inline(qc[nd], &sn[nd], &cs[nd]);
            nd++;
        }
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {0, 0, 0};
    int v = 0;
    for (int i = 0; i < n; i++) {
        const mn_jop* op = &ops[jnt[i]];
        if (op->type == MN_JOINT_FIXED) {
            mn_jop_apply_1dof(op, NULL, 0, 1, R, p);
        } else if (v < MN_CHAIN_MAX) {
            mn_jop_apply_1dof(op, qc + v, sn[v], cs[v], R, p);
            v++;
        } else { /* beyond the batch: one at a time */
            double s, c;
            mn_sincos_inline(qc[v], &s, &c);
            mn_jop_apply_1dof(op, qc + v, s, c, R, p);
            v++;
        }
        for (int k = 0; k < 9; k++)
            frames[i].R.m[k] = R[k];
        frames[i].p = mn_v3(p[0], p[1], p[2]);
    }
}

/* The walk of a chain's FK program (compile_prog): the tip frame as S (row-major) and p,
 * with R = S P for the last step's P. When frames is not NULL each joint's S and p are
 * written to it (made true frames afterwards by unpermute); when axis is not NULL, each
 * moving joint's axis in base coordinates (S times the axis in S's columns: a column of S
 * for a coordinate hinge, exactly), its origin and type, for the Jacobian. The branches
 * and NULL tests are constants after inlining into each caller. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
prog_walk(const mn_chain* c, const double* qc, double* Sout, double* pout, mn_xform* frames,
          double* axis, double* origin, int* kind) {
    const mn_cprog* cp = c->fk_prog;
    const mn_cstep* prog = cp->step;
    double sn[MN_CHAIN_MAX], cs[MN_CHAIN_MAX];
    chain_sincos(c, qc, sn, cs);
    double S0 = cp->S0[0], S1 = cp->S0[1], S2 = cp->S0[2], S3 = cp->S0[3], S4 = cp->S0[4],
           S5 = cp->S0[5], S6 = cp->S0[6], S7 = cp->S0[7], S8 = cp->S0[8];
    double p0 = 0, p1 = 0, p2 = 0;
    int v = 0, nj = c->njoint;
    for (int i = 0; i < nj; i++) {
        const mn_cstep* st = &prog[i];
        switch (st->has_off) { /* p += S off, for an offset along one of S's columns */
        case MN_CS_OFF_NONE:
            break;
        case MN_CS_OFF_X:
            p0 += S0 * st->off[0], p1 += S3 * st->off[0], p2 += S6 * st->off[0];
            break;
        case MN_CS_OFF_Y:
            p0 += S1 * st->off[1], p1 += S4 * st->off[1], p2 += S7 * st->off[1];
            break;
        case MN_CS_OFF_Z:
            p0 += S2 * st->off[2], p1 += S5 * st->off[2], p2 += S8 * st->off[2];
            break;
        default: {
            const double* o = st->off;
            p0 += S0 * o[0] + S1 * o[1] + S2 * o[2];
            p1 += S3 * o[0] + S4 * o[1] + S5 * o[2];
            p2 += S6 * o[0] + S7 * o[1] + S8 * o[2];
            break;
        }
        }
        if (st->general) {
            const double* M = st->M;
            double t0 = S0 * M[0] + S1 * M[3] + S2 * M[6], t1 = S0 * M[1] + S1 * M[4] + S2 * M[7],
                   t2 = S0 * M[2] + S1 * M[5] + S2 * M[8];
            double t3 = S3 * M[0] + S4 * M[3] + S5 * M[6], t4 = S3 * M[1] + S4 * M[4] + S5 * M[7],
                   t5 = S3 * M[2] + S4 * M[5] + S5 * M[8];
            double t6 = S6 * M[0] + S7 * M[3] + S8 * M[6], t7 = S6 * M[1] + S7 * M[4] + S8 * M[7],
                   t8 = S6 * M[2] + S7 * M[5] + S8 * M[8];
            S0 = t0, S1 = t1, S2 = t2, S3 = t3, S4 = t4, S5 = t5, S6 = t6, S7 = t7, S8 = t8;
        }
        int op = st->op;
        if (op != MN_CS_FIXED) {
            double sv = sn[v], co = cs[v], si = sv * st->sgn, a, b;
            switch (op) {
            case MN_CS_ROT_X: /* columns 1, 2 */
                a = S1, b = S2, S1 = co * a + si * b, S2 = co * b - si * a;
                a = S4, b = S5, S4 = co * a + si * b, S5 = co * b - si * a;
                a = S7, b = S8, S7 = co * a + si * b, S8 = co * b - si * a;
                break;
            case MN_CS_ROT_Y: /* columns 2, 0 */
                a = S2, b = S0, S2 = co * a + si * b, S0 = co * b - si * a;
                a = S5, b = S3, S5 = co * a + si * b, S3 = co * b - si * a;
                a = S8, b = S6, S8 = co * a + si * b, S6 = co * b - si * a;
                break;
            case MN_CS_ROT_Z: /* columns 0, 1 */
                a = S0, b = S1, S0 = co * a + si * b, S1 = co * b - si * a;
                a = S3, b = S4, S3 = co * a + si * b, S4 = co * b - si * a;
                a = S6, b = S7, S6 = co * a + si * b, S7 = co * b - si * a;
                break;
            case MN_CS_ROT_AXIS: { /* Rodrigues, as mn_jop_step */
                const double* ax = st->axis;
                double s = sv, t = 1.0 - co;
                double Q[9] = {t * ax[0] * ax[0] + co,        t * ax[0] * ax[1] - s * ax[2],
                               t * ax[0] * ax[2] + s * ax[1], t * ax[0] * ax[1] + s * ax[2],
                               t * ax[1] * ax[1] + co,        t * ax[1] * ax[2] - s * ax[0],
                               t * ax[0] * ax[2] - s * ax[1], t * ax[1] * ax[2] + s * ax[0],
                               t * ax[2] * ax[2] + co};
                double t0 = S0 * Q[0] + S1 * Q[3] + S2 * Q[6],
                       t1 = S0 * Q[1] + S1 * Q[4] + S2 * Q[7],
                       t2 = S0 * Q[2] + S1 * Q[5] + S2 * Q[8];
                double t3 = S3 * Q[0] + S4 * Q[3] + S5 * Q[6],
                       t4 = S3 * Q[1] + S4 * Q[4] + S5 * Q[7],
                       t5 = S3 * Q[2] + S4 * Q[5] + S5 * Q[8];
                double t6 = S6 * Q[0] + S7 * Q[3] + S8 * Q[6],
                       t7 = S6 * Q[1] + S7 * Q[4] + S8 * Q[7],
                       t8 = S6 * Q[2] + S7 * Q[5] + S8 * Q[8];
                S0 = t0, S1 = t1, S2 = t2, S3 = t3, S4 = t4, S5 = t5, S6 = t6, S7 = t7, S8 = t8;
                break;
            }
            default: { /* MN_CS_SLIDE */
                const double* ax = st->axis;
                double d = qc[v];
                p0 += d * (S0 * ax[0] + S1 * ax[1] + S2 * ax[2]);
                p1 += d * (S3 * ax[0] + S4 * ax[1] + S5 * ax[2]);
                p2 += d * (S6 * ax[0] + S7 * ax[1] + S8 * ax[2]);
                break;
            }
            }
            if (axis) {
                double a0, a1, a2;
                if (op <= MN_CS_ROT_Z) { /* the axis is +-e_w: +-S's column w, exactly */
                    int w = op - MN_CS_ROT_X;
                    const double* ax = st->axis;
                    a0 = w == 0 ? S0 * ax[0] : w == 1 ? S1 * ax[1] : S2 * ax[2];
                    a1 = w == 0 ? S3 * ax[0] : w == 1 ? S4 * ax[1] : S5 * ax[2];
                    a2 = w == 0 ? S6 * ax[0] : w == 1 ? S7 * ax[1] : S8 * ax[2];
                } else {
                    const double* ax = st->axis;
                    a0 = S0 * ax[0] + S1 * ax[1] + S2 * ax[2];
                    a1 = S3 * ax[0] + S4 * ax[1] + S5 * ax[2];
                    a2 = S6 * ax[0] + S7 * ax[1] + S8 * ax[2];
                }
                axis[3 * v] = a0, axis[3 * v + 1] = a1, axis[3 * v + 2] = a2;
                origin[3 * v] = p0, origin[3 * v + 1] = p1, origin[3 * v + 2] = p2;
                kind[v] = op == MN_CS_SLIDE ? MN_JOINT_SLIDE : MN_JOINT_HINGE;
            }
            v++;
        }
        if (frames) {
            double* F = frames[i].R.m;
            F[0] = S0, F[1] = S1, F[2] = S2, F[3] = S3, F[4] = S4, F[5] = S5, F[6] = S6, F[7] = S7,
            F[8] = S8;
            frames[i].p = mn_v3(p0, p1, p2);
        }
    }
    Sout[0] = S0, Sout[1] = S1, Sout[2] = S2, Sout[3] = S3, Sout[4] = S4, Sout[5] = S5;
    Sout[6] = S6, Sout[7] = S7, Sout[8] = S8;
    pout[0] = p0, pout[1] = p1, pout[2] = p2;
}

/* R = S P: true column k is sign * S's column |perm[k]| - 1. */
static inline void unpermute(const mn_cstep* st, const double* S, double* R) {
    if (st->ident) {
        for (int i = 0; i < 9; i++)
            R[i] = S[i];
        return;
    }
    for (int k = 0; k < 3; k++) {
        int from = st->perm[k] > 0 ? st->perm[k] - 1 : -st->perm[k] - 1;
        double g = st->perm[k] > 0 ? 1.0 : -1.0;
        R[k] = g * S[from], R[3 + k] = g * S[3 + from], R[6 + k] = g * S[6 + from];
    }
}

void mn_chain_frames(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* frames) {
    if (c->simple && c->fk_prog) { /* hinges and slides: the chain's program */
        const mn_cstep* prog = ((const mn_cprog*)c->fk_prog)->step;
        double S[9], p[3];
        prog_walk(c, qc, S, p, frames, NULL, NULL, NULL);
        for (int i = 0; i < c->njoint; i++) /* each frame's S made the true R, in place */
            if (!prog[i].ident) {
                double F[9];
                for (int k = 0; k < 9; k++)
                    F[k] = frames[i].R.m[k];
                unpermute(&prog[i], F, frames[i].R.m);
            }
        return;
    }
    if (c->simple) {
        mn_path_fk(m, c->jnt, c->njoint, qc, frames);
        return;
    }
    mn_xform X = mn_xform_identity();
    for (int i = 0; i < c->njoint; i++) {
        mn_joint_apply(m, c->jnt[i], qc + c->qoff[i], &X);
        frames[i] = X;
    }
}

void mn_chain_fk(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* tip) {
    (void)m;
    if (c->njoint == 0) {
        *tip = mn_xform_identity();
        return;
    }
    double p[3];
    prog_walk(c, qc, tip->R.m, p, NULL, NULL, NULL, NULL); /* P is I at the end */
    tip->p = mn_v3(p[0], p[1], p[2]);
}

void mn_chain_fk_jacobian(const mn_model* m, const mn_chain* c, const double* qc, mn_vec3 local,
                          mn_xform* tip, double* jac) {
    (void)m;
    double axis[3 * MN_CHAIN_MAX], origin[3 * MN_CHAIN_MAX];
    int kind[MN_CHAIN_MAX];
    double p[3], R[9];
    if (c->njoint == 0) {
        *tip = mn_xform_identity();
        return;
    }
    prog_walk(c, qc, R, p, NULL, axis, origin, kind);
    for (int i = 0; i < 9; i++)
        tip->R.m[i] = R[i];
    tip->p = mn_v3(p[0], p[1], p[2]);
    double P[3] = {p[0] + R[0] * local.x + R[1] * local.y + R[2] * local.z,
                   p[1] + R[3] * local.x + R[4] * local.y + R[5] * local.z,
                   p[2] + R[6] * local.x + R[7] * local.y + R[8] * local.z};
    int n = c->ndof;
    mn_vec3 Pv = mn_v3(P[0], P[1], P[2]);
    for (int k = 0; k < n; k++) {
        mn_vec3 a = mn_v3(axis[3 * k], axis[3 * k + 1], axis[3 * k + 2]), lin, ang;
        if (kind[k] == MN_JOINT_HINGE)
            mn_dof_rotation_column(a, mn_v3(origin[3 * k], origin[3 * k + 1], origin[3 * k + 2]),
                                   Pv, &lin, &ang);
        else
            mn_dof_translation_column(a, &lin, &ang);
        jac[k] = lin.x, jac[n + k] = lin.y, jac[2 * n + k] = lin.z;
        jac[3 * n + k] = ang.x, jac[4 * n + k] = ang.y, jac[5 * n + k] = ang.z;
    }
}

void mn_chain_fk_axes(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* tip,
                      double* axis, double* origin) {
    (void)m;
    if (c->njoint == 0) {
        *tip = mn_xform_identity();
        return;
    }
    int kind[MN_CHAIN_MAX];
    double p[3];
    prog_walk(c, qc, tip->R.m, p, NULL, axis, origin, kind);
    tip->p = mn_v3(p[0], p[1], p[2]);
}
