/* Jacobians of points fixed in joint frames and of the centre of mass.
 *
 * Welman 3.1 and Parent ch. 5 ("Jacobian by cross products"): a rotary DOF with world axis a
 * through origin o moves a point P with velocity a x (P - o) and turns the frame with angular
 * velocity a; a prismatic DOF moves it along a. A BALL's three DOFs are rotations about the
 * columns of its own frame; a FREE's translation DOFs move along its parent frame's axes. */
#include "model/model_internal.h"

#include <string.h>

/* Writes the 6 rows of the columns of joint k's DOFs for point P into jac (row stride ld),
 * starting at column col: mn_joint_jacobian_columns with d's world frames. */
static void joint_columns(const mn_model* m, const mn_data* d, int k, mn_vec3 P, double* jac,
                          int ld, int col) {
    mn_vec3 lin[6], ang[6];
    int p = m->jnt_parent[k];
    int n = mn_joint_jacobian_columns(m, k, &d->xf[k], p >= 0 ? &d->xf[p].R : NULL, P, lin, ang);
    for (int c = 0; c < n; c++) {
        double* J = jac + col + c;
        J[0] = lin[c].x, J[ld] = lin[c].y, J[2 * ld] = lin[c].z;
        J[3 * ld] = ang[c].x, J[4 * ld] = ang[c].y, J[5 * ld] = ang[c].z;
    }
}

void mn_jacobian(const mn_model* m, const mn_data* d, int joint, mn_vec3 local, double* jac) {
    int nv = m->nv;
    memset(jac, 0, (size_t)6 * (size_t)nv * sizeof(double));
    mn_vec3 P = mn_point_world(d, joint, local);
    for (int k = joint; k >= 0; k = m->jnt_parent[k])
        if (mn_joint_type_nv((mn_joint_type)m->jnt_type[k]))
            joint_columns(m, d, k, P, jac, nv, m->jnt_dofadr[k]);
}

int mn_chain_dofs(const mn_model* m, int base, int tip, int* dofs, int cap) {
    if (!m || tip < 0 || tip >= m->njoint || base < -1 || base >= m->njoint) return -1;
    if (base >= 0 && !mn_model_is_ancestor(m, base, tip)) return -1;
    int n = 0;
    for (int k = tip; k != base; k = m->jnt_parent[k])
        n += mn_joint_type_nv((mn_joint_type)m->jnt_type[k]);
    if (!dofs) return n;
    if (n > cap) return -1;
    int at = n;
    for (int k = tip; k != base; k = m->jnt_parent[k]) {
        int nv = mn_joint_type_nv((mn_joint_type)m->jnt_type[k]);
        at -= nv;
        for (int v = 0; v < nv; v++)
            dofs[at + v] = m->jnt_dofadr[k] + v;
    }
    return n;
}

void mn_jacobian_chain(const mn_model* m, const mn_data* d, int base, int tip, mn_vec3 local,
                       double* jac) {
    int n = mn_chain_dofs(m, base, tip, NULL, 0);
    if (n <= 0) return;
    mn_vec3 P = mn_point_world(d, tip, local);
    int at = n;
    for (int k = tip; k != base; k = m->jnt_parent[k]) {
        int nv = mn_joint_type_nv((mn_joint_type)m->jnt_type[k]);
        if (!nv) continue;
        at -= nv;
        joint_columns(m, d, k, P, jac, n, at);
    }
}

mn_vec3 mn_com(const mn_model* m, const mn_data* d, int root, double* mass) {
    int lo = root >= 0 ? root : 0, hi = root >= 0 ? m->jnt_subtree_end[root] : m->njoint;
    double M = 0;
    mn_vec3 c = {0, 0, 0};
    for (int i = lo; i < hi; i++) {
        double mi = m->jnt_mass[i];
        if (mi <= 0) continue;
        c = mn_vec3_madd(c, mi, mn_point_world(d, i, m->jnt_com[i]));
        M += mi;
    }
    if (mass) *mass = M;
    return M > 0 ? mn_vec3_scale(c, 1.0 / M) : mn_v3(0, 0, 0);
}

/* d com / dq = sum_i m_i J_i(com_i) / M: each DOF's column gathers the mass-weighted
 * velocities of the segments below it in the subtree. */
void mn_com_jacobian(const mn_model* m, const mn_data* d, int root, double* jac) {
    int nv = m->nv;
    memset(jac, 0, (size_t)3 * (size_t)nv * sizeof(double));
    double M;
    mn_com(m, d, root, &M);
    if (M <= 0) return;
    int lo = root >= 0 ? root : 0, hi = root >= 0 ? m->jnt_subtree_end[root] : m->njoint;
    double tmp[6 * 6];
    for (int i = lo; i < hi; i++) {
        double w = m->jnt_mass[i] / M;
        if (w <= 0) continue;
        mn_vec3 P = mn_point_world(d, i, m->jnt_com[i]);
        for (int k = i; k >= 0; k = m->jnt_parent[k]) {
            int kn = mn_joint_type_nv((mn_joint_type)m->jnt_type[k]);
            if (!kn) continue;
            joint_columns(m, d, k, P, tmp, kn, 0);
            for (int v = 0; v < kn; v++)
                for (int r = 0; r < 3; r++)
                    jac[r * nv + m->jnt_dofadr[k] + v] += w * tmp[r * kn + v];
        }
    }
}
