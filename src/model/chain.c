/* A serial chain of 1-DOF joints with frames relative to its base: the fast path for robot
 * arms. FK walks only the chain; the Jacobian reuses the axes and origins of that pass. */
#include "model/model_internal.h"

#include <stdlib.h>
#include <string.h>

#define MN_CHAIN_MAX 256

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
    if (!c || !block) {
        free(c);
        free(block);
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "chain", "out of memory");
        return NULL;
    }
    c->block = block;
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
    free(c);
}

/* sin and cos of every hinge first: independent of each other, so they overlap. */
static void chain_sincos(const mn_chain* c, const double* qc, double* s, double* co) {
    for (int k = 0; k < c->ndof; k++) mn_sincos_inline(qc[k], &s[k], &co[k]);
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
        for (int k = 0; k < 9; k++) frames[i].R.m[k] = R[k];
        frames[i].p = mn_v3(p[0], p[1], p[2]);
    }
}

void mn_chain_fk(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* tip) {
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {0, 0, 0};
    double sn[MN_CHAIN_MAX], cs[MN_CHAIN_MAX];
    chain_sincos(c, qc, sn, cs);
    const mn_jop* ops = m->jnt_ops;
    int v = 0;
    for (int i = 0; i < c->njoint; i++) {
        const mn_jop* op = &ops[c->jnt[i]];
        if (op->type == MN_JOINT_FIXED) {
            mn_jop_apply_1dof(op, NULL, 0, 1, R, p);
        } else {
            mn_jop_apply_1dof(op, qc + v, sn[v], cs[v], R, p);
            v++;
        }
    }
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
    const mn_jop* ops = m->jnt_ops;
    int v = 0;
    for (int i = 0; i < c->njoint; i++) {
        const mn_jop* op = &ops[c->jnt[i]];
        int t = op->type;
        if (t == MN_JOINT_FIXED) mn_jop_apply_1dof(op, NULL, 0, 1, R, p);
        else mn_jop_apply_1dof(op, qc + v, sn[v], cs[v], R, p);
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
