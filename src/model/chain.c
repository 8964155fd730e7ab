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
           align16(sizeof(double) * (size_t)(3 * ndof + 1)) + align16((size_t)ndof + 1);
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
static void chain_sincos(const mn_chain* c, const double* qc, double* s, double* co) {
    for (int k = 0; k < c->ndof; k++)
        mn_sincos_inline(qc[k], &s[k], &co[k]);
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

void mn_chain_frames(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* frames) {
    if (c->simple) { /* hinges and slides: the batched fast path */
        mn_path_fk(m, c->jnt, c->njoint, qc, frames);
        return;
    }
    mn_xform X = mn_xform_identity();
    for (int i = 0; i < c->njoint; i++) {
        mn_joint_apply(m, c->jnt[i], qc + c->qoff[i], &X);
        frames[i] = X;
    }
}

/* The walk of mn_chain_fk and mn_chain_fk_jacobian: the tip frame in R, p and, when axis
 * is not NULL (a constant after inlining, so mn_chain_fk carries none of it), each moving
 * joint's world axis, origin and type. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
chain_walk(const mn_model* m, const mn_chain* c, const double* qc, double* R, double* p,
           double* axis, double* origin, int* kind) {
    double sn[MN_CHAIN_MAX], cs[MN_CHAIN_MAX];
    chain_sincos(c, qc, sn, cs);
    const mn_jop* ops = m->jnt_ops;
    int v = 0;
    for (int i = 0; i < c->njoint; i++) {
        const mn_jop* op = &ops[c->jnt[i]];
        int t = op->type;
        if (t == MN_JOINT_FIXED) {
            mn_jop_apply_1dof(op, NULL, 0, 1, R, p);
            continue;
        }
        mn_jop_apply_1dof(op, qc + v, sn[v], cs[v], R, p);
        if (axis) {
            const double* a = op->axis;
            axis[3 * v] = R[0] * a[0] + R[1] * a[1] + R[2] * a[2];
            axis[3 * v + 1] = R[3] * a[0] + R[4] * a[1] + R[5] * a[2];
            axis[3 * v + 2] = R[6] * a[0] + R[7] * a[1] + R[8] * a[2];
            origin[3 * v] = p[0], origin[3 * v + 1] = p[1], origin[3 * v + 2] = p[2];
            kind[v] = t;
        }
        v++;
    }
}

void mn_chain_fk(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* tip) {
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {0, 0, 0};
    chain_walk(m, c, qc, R, p, NULL, NULL, NULL);
    for (int i = 0; i < 9; i++)
        tip->R.m[i] = R[i];
    tip->p = mn_v3(p[0], p[1], p[2]);
}

void mn_chain_fk_jacobian(const mn_model* m, const mn_chain* c, const double* qc, mn_vec3 local,
                          mn_xform* tip, double* jac) {
    double axis[3 * MN_CHAIN_MAX], origin[3 * MN_CHAIN_MAX];
    int kind[MN_CHAIN_MAX];
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {0, 0, 0};
    chain_walk(m, c, qc, R, p, axis, origin, kind);
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
