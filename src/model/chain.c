/* A serial chain of 1-DOF joints with frames relative to its base: the fast path for robot
 * arms. FK walks only the chain; the Jacobian reuses the axes and origins of that pass. */
#include "model/model_internal.h"
#include "core/sincos_inline.h"

#include <stdlib.h>
#include <string.h>

#define MN_CHAIN_MAX 256

/* A chain joint packed for the FK loop: everything it reads, contiguous. */
typedef struct chain_op {
    double off[3];
    double O[9];      /* orientation matrix (used when orient == 2) */
    double axis[3];
    int8_t type;      /* mn_joint_type */
    int8_t kind;      /* hinge axis: 0-2 = +x,+y,+z; 3-5 = -x,-y,-z; -1 general */
    int8_t orient;    /* 0 identity, 1 signed permutation, 2 general */
    int8_t perm[3];
} chain_op;

static void pack_op(const mn_model* m, int j, chain_op* op) {
    op->off[0] = m->jnt_offset[j].x, op->off[1] = m->jnt_offset[j].y, op->off[2] = m->jnt_offset[j].z;
    for (int i = 0; i < 9; i++) op->O[i] = m->jnt_orient_mat[j].m[i];
    op->axis[0] = m->jnt_axis[j].x, op->axis[1] = m->jnt_axis[j].y, op->axis[2] = m->jnt_axis[j].z;
    op->type = (int8_t)m->jnt_type[j];
    op->kind = m->jnt_axis_kind[j];
    const int8_t* perm = m->jnt_orient_perm + 3 * j;
    op->orient = m->jnt_orient_ident[j] ? 0 : perm[0] ? 1 : 2;
    for (int c = 0; c < 3; c++) op->perm[c] = perm[c];
}

mn_chain* mn_chain_create(const mn_model* m, int base, int tip, mn_error* err) {
    if (!m || tip < 0 || tip >= m->njoint || base < -1 || base >= m->njoint) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "chain", "joint index out of range");
        return NULL;
    }
    if (base >= 0 && !mn_model_is_ancestor(m, base, tip)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "chain", "tip '%s' is not below base '%s'", m->jnt_name[tip],
                     m->jnt_name[base]);
        return NULL;
    }
    int nj = 0, nd = 0;
    for (int k = tip; k != base; k = m->jnt_parent[k]) {
        int t = m->jnt_type[k];
        if (t == MN_JOINT_BALL || t == MN_JOINT_FREE) {
            mn_error_set(err, MN_ERR_UNSUPPORTED, "", 0, m->jnt_name[k],
                         "chain: %s joints are not supported by the chain fast path", mn_joint_type_name(t));
            return NULL;
        }
        nj++;
        nd += mn_joint_type_nv(t);
    }
    if (nj > MN_CHAIN_MAX) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "chain", "more than %d joints", MN_CHAIN_MAX);
        return NULL;
    }
    mn_chain* c = calloc(1, sizeof *c);
    int* block = calloc((size_t)(nj + 2 * nd + 1), sizeof(int));
    chain_op* ops = calloc((size_t)nj + 1, sizeof(chain_op));
    if (!c || !block || !ops) {
        free(c);
        free(block);
        free(ops);
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "chain", "out of memory");
        return NULL;
    }
    c->block = block;
    c->ops = ops;
    c->base = base;
    c->tip = tip;
    c->njoint = nj;
    c->ndof = nd;
    c->jnt = block;
    c->dof = block + nj;
    c->qadr = block + nj + nd;
    int a = nj, b = nd;
    for (int k = tip; k != base; k = m->jnt_parent[k]) {
        c->jnt[--a] = k;
        pack_op(m, k, &ops[a]);
        if (mn_joint_type_nv((mn_joint_type)m->jnt_type[k])) {
            --b;
            c->dof[b] = m->jnt_dofadr[k];
            c->qadr[b] = m->jnt_qadr[k];
        }
    }
    return c;
}

void mn_chain_destroy(mn_chain* c) {
    if (!c) return;
    free(c->block);
    free(c->ops);
    free(c);
}

/* One chain joint applied in place to the running frame (R row-major, p): the same math as
 * mn_joint_compose for FIXED, HINGE and SLIDE joints, written on plain arrays so the whole
 * chain stays in registers (Parent ch. 5: concatenate placement, then articulation). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void chain_step(const chain_op* op, double q, double s, double c, double* R, double* p) {
    const double* o = op->off;
    p[0] += R[0] * o[0] + R[1] * o[1] + R[2] * o[2];
    p[1] += R[3] * o[0] + R[4] * o[1] + R[5] * o[2];
    p[2] += R[6] * o[0] + R[7] * o[1] + R[8] * o[2];
    if (op->orient == 1) { /* (R O) column c = sign * R column |perm|-1 */
        double M[9];
        for (int k = 0; k < 3; k++) {
            int from = op->perm[k] > 0 ? op->perm[k] - 1 : -op->perm[k] - 1;
            double sg = op->perm[k] > 0 ? 1.0 : -1.0;
            M[k] = sg * R[from], M[3 + k] = sg * R[3 + from], M[6 + k] = sg * R[6 + from];
        }
        for (int i = 0; i < 9; i++) R[i] = M[i];
    } else if (op->orient == 2) {
        const double* O = op->O;
        double M[9];
        for (int r = 0; r < 3; r++) {
            M[3 * r + 0] = R[3 * r] * O[0] + R[3 * r + 1] * O[3] + R[3 * r + 2] * O[6];
            M[3 * r + 1] = R[3 * r] * O[1] + R[3 * r + 1] * O[4] + R[3 * r + 2] * O[7];
            M[3 * r + 2] = R[3 * r] * O[2] + R[3 * r + 1] * O[5] + R[3 * r + 2] * O[8];
        }
        for (int i = 0; i < 9; i++) R[i] = M[i];
    }
    if (op->type == MN_JOINT_HINGE) {
        int k = op->kind;
        if (k >= 3) {
            s = -s;
            k -= 3;
        }
        if (k >= 0) { /* columns (u, v) = the two axes orthogonal to axis k, in cyclic order */
            int u = k == 2 ? 0 : k + 1, v = k == 0 ? 2 : k - 1;
            for (int r = 0; r < 3; r++) {
                double cu = R[3 * r + u], cv = R[3 * r + v];
                R[3 * r + u] = c * cu + s * cv;
                R[3 * r + v] = -s * cu + c * cv;
            }
        } else {
            const double* ax = op->axis;
            double tt = 1.0 - c;
            double Q[9] = {tt * ax[0] * ax[0] + c, tt * ax[0] * ax[1] - s * ax[2], tt * ax[0] * ax[2] + s * ax[1],
                           tt * ax[0] * ax[1] + s * ax[2], tt * ax[1] * ax[1] + c, tt * ax[1] * ax[2] - s * ax[0],
                           tt * ax[0] * ax[2] - s * ax[1], tt * ax[1] * ax[2] + s * ax[0], tt * ax[2] * ax[2] + c};
            double M[9];
            for (int r = 0; r < 3; r++) {
                M[3 * r + 0] = R[3 * r] * Q[0] + R[3 * r + 1] * Q[3] + R[3 * r + 2] * Q[6];
                M[3 * r + 1] = R[3 * r] * Q[1] + R[3 * r + 1] * Q[4] + R[3 * r + 2] * Q[7];
                M[3 * r + 2] = R[3 * r] * Q[2] + R[3 * r + 1] * Q[5] + R[3 * r + 2] * Q[8];
            }
            for (int i = 0; i < 9; i++) R[i] = M[i];
        }
    } else if (op->type == MN_JOINT_SLIDE) {
        const double* ax = op->axis;
        p[0] += q * (R[0] * ax[0] + R[1] * ax[1] + R[2] * ax[2]);
        p[1] += q * (R[3] * ax[0] + R[4] * ax[1] + R[5] * ax[2]);
        p[2] += q * (R[6] * ax[0] + R[7] * ax[1] + R[8] * ax[2]);
    }
}

/* sin and cos of every hinge first: independent of each other, so they overlap. */
static void chain_sincos(const mn_chain* c, const double* qc, double* s, double* co) {
    for (int k = 0; k < c->ndof; k++) mn_sincos_inline(qc[k], &s[k], &co[k]);
}

void mn_chain_fk(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* tip) {
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {0, 0, 0};
    double sn[MN_CHAIN_MAX], cs[MN_CHAIN_MAX];
    chain_sincos(c, qc, sn, cs);
    const chain_op* ops = c->ops;
    int v = 0;
    for (int i = 0; i < c->njoint; i++) {
        const chain_op* op = &ops[i];
        if (op->type == MN_JOINT_FIXED) {
            chain_step(op, 0, 0, 1, R, p);
        } else {
            chain_step(op, qc[v], sn[v], cs[v], R, p);
            v++;
        }
    }
    (void)m;
    for (int i = 0; i < 9; i++) tip->R.m[i] = R[i];
    tip->p = mn_v3(p[0], p[1], p[2]);
}

void mn_chain_fk_jacobian(const mn_model* m, const mn_chain* c, const double* qc, mn_vec3 local,
                          mn_xform* tip, double* jac) {
    double axis[3 * MN_CHAIN_MAX], origin[3 * MN_CHAIN_MAX];
    int kind[MN_CHAIN_MAX];
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {0, 0, 0};
    double sn[MN_CHAIN_MAX], cs[MN_CHAIN_MAX];
    chain_sincos(c, qc, sn, cs);
    const chain_op* ops = c->ops;
    int v = 0;
    (void)m;
    for (int i = 0; i < c->njoint; i++) {
        const chain_op* op = &ops[i];
        int t = op->type;
        if (t == MN_JOINT_FIXED) chain_step(op, 0, 0, 1, R, p);
        else chain_step(op, qc[v], sn[v], cs[v], R, p);
        if (t != MN_JOINT_FIXED) {
            const double* a = op->axis;
            axis[3 * v] = R[0] * a[0] + R[1] * a[1] + R[2] * a[2];
            axis[3 * v + 1] = R[3] * a[0] + R[4] * a[1] + R[5] * a[2];
            axis[3 * v + 2] = R[6] * a[0] + R[7] * a[1] + R[8] * a[2];
            origin[3 * v] = p[0], origin[3 * v + 1] = p[1], origin[3 * v + 2] = p[2];
            kind[v] = t;
            v++;
        }
    }
    for (int i = 0; i < 9; i++) tip->R.m[i] = R[i];
    tip->p = mn_v3(p[0], p[1], p[2]);
    double P[3] = {p[0] + R[0] * local.x + R[1] * local.y + R[2] * local.z,
                   p[1] + R[3] * local.x + R[4] * local.y + R[5] * local.z,
                   p[2] + R[6] * local.x + R[7] * local.y + R[8] * local.z};
    int n = c->ndof;
    for (int k = 0; k < n; k++) {
        const double* a = axis + 3 * k;
        if (kind[k] == MN_JOINT_HINGE) {
            double rx = P[0] - origin[3 * k], ry = P[1] - origin[3 * k + 1], rz = P[2] - origin[3 * k + 2];
            jac[k] = a[1] * rz - a[2] * ry;
            jac[n + k] = a[2] * rx - a[0] * rz;
            jac[2 * n + k] = a[0] * ry - a[1] * rx;
            jac[3 * n + k] = a[0], jac[4 * n + k] = a[1], jac[5 * n + k] = a[2];
        } else {
            jac[k] = a[0], jac[n + k] = a[1], jac[2 * n + k] = a[2];
            jac[3 * n + k] = 0, jac[4 * n + k] = 0, jac[5 * n + k] = 0;
        }
    }
}
