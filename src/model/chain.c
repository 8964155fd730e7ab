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

void mn_chain_fk(const mn_model* m, const mn_chain* c, const double* qc, mn_xform* tip) {
    mn_mat3 R = mn_mat3_identity();
    mn_vec3 p = {0, 0, 0};
    int v = 0;
    for (int i = 0; i < c->njoint; i++) {
        int j = c->jnt[i];
        const double* qj = m->jnt_type[j] != MN_JOINT_FIXED ? qc + v++ : NULL;
        mn_mat3 Rn;
        mn_vec3 pn;
        mn_joint_compose(m, j, qj, &R, p, &Rn, &pn);
        R = Rn;
        p = pn;
    }
    tip->R = R;
    tip->p = p;
}

void mn_chain_fk_jacobian(const mn_model* m, const mn_chain* c, const double* qc, mn_vec3 local,
                          mn_xform* tip, double* jac) {
    mn_vec3 axis[MN_CHAIN_MAX], origin[MN_CHAIN_MAX];
    int kind[MN_CHAIN_MAX];
    mn_mat3 R = mn_mat3_identity();
    mn_vec3 p = {0, 0, 0};
    int v = 0;
    for (int i = 0; i < c->njoint; i++) {
        int j = c->jnt[i];
        int t = m->jnt_type[j];
        const double* qj = t != MN_JOINT_FIXED ? qc + v : NULL;
        mn_mat3 Rn;
        mn_vec3 pn;
        mn_joint_compose(m, j, qj, &R, p, &Rn, &pn);
        R = Rn;
        p = pn;
        if (t != MN_JOINT_FIXED) {
            axis[v] = mn_mat3_mulv(&R, m->jnt_axis[j]);
            origin[v] = p;
            kind[v] = t;
            v++;
        }
    }
    tip->R = R;
    tip->p = p;
    mn_vec3 P = mn_xform_apply(tip, local);
    int n = c->ndof;
    for (int k = 0; k < n; k++) {
        mn_vec3 a = axis[k];
        if (kind[k] == MN_JOINT_HINGE) {
            mn_vec3 l = mn_vec3_cross(a, mn_vec3_sub(P, origin[k]));
            jac[k] = l.x, jac[n + k] = l.y, jac[2 * n + k] = l.z;
            jac[3 * n + k] = a.x, jac[4 * n + k] = a.y, jac[5 * n + k] = a.z;
        } else {
            jac[k] = a.x, jac[n + k] = a.y, jac[2 * n + k] = a.z;
            jac[3 * n + k] = 0, jac[4 * n + k] = 0, jac[5 * n + k] = 0;
        }
    }
}
