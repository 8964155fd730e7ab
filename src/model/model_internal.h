/* Private to the model layer. */
#ifndef MN_MODEL_INTERNAL_H
#define MN_MODEL_INTERNAL_H

#include <marionette/model.h>

/* Checks one def: name, type, finite numbers, axis, limits, mass, stiffness; parent in
 * [-1, njoint). The field named in err is the joint name plus the attribute. */
mn_status mn_def_check(const mn_joint_def* d, int njoint, mn_error* err);
/* The def's rest state (nq numbers), quaternions normalised (identity when zero). */
void mn_def_rest_state(const mn_joint_def* d, double* q);

/* Local placement and motion of joint j composed onto the parent frame (PR, Pp):
 *   R = PR * orient * Motion_R(q),  p = Pp + PR * (offset [+ free p]) [+ R_o * axis * slide]
 * qj points at the joint's first state number. Used by mn_fk and the chain fast path. */
static inline void mn_joint_compose(const mn_model* m, int j, const double* qj, const mn_mat3* PR,
                                    mn_vec3 Pp, mn_mat3* R, mn_vec3* p) {
    int type = m->jnt_type[j];
    mn_vec3 off = m->jnt_offset[j];
    if (type == MN_JOINT_FREE) off = mn_vec3_add(off, mn_v3(qj[0], qj[1], qj[2]));
    *p = mn_vec3_add(Pp, mn_mat3_mulv(PR, off));
    mn_mat3 M;
    const int8_t* perm = m->jnt_orient_perm + 3 * j;
    if (m->jnt_orient_ident[j]) {
        M = *PR;
    } else if (perm[0]) { /* (PR O) column c = sign * PR column |perm|-1 */
        for (int c = 0; c < 3; c++) {
            int k = perm[c] > 0 ? perm[c] - 1 : -perm[c] - 1;
            double sg = perm[c] > 0 ? 1.0 : -1.0;
            M.m[c] = sg * PR->m[k], M.m[3 + c] = sg * PR->m[3 + k], M.m[6 + c] = sg * PR->m[6 + k];
        }
    } else {
        M = mn_mat3_mul(PR, &m->jnt_orient_mat[j]);
    }
    switch (type) {
    case MN_JOINT_HINGE: {
        double s, c, a = qj[0];
        int k = m->jnt_axis_kind[j];
        if (k >= 3) {
            a = -a;
            k -= 3;
        }
        mn_sincos(a, &s, &c);
        double* r = M.m;
        if (k == 0) { /* M * Rx: col1' = c col1 + s col2, col2' = -s col1 + c col2 */
            for (int i = 0; i < 3; i++) {
                double c1 = r[3 * i + 1], c2 = r[3 * i + 2];
                r[3 * i + 1] = c * c1 + s * c2;
                r[3 * i + 2] = -s * c1 + c * c2;
            }
        } else if (k == 1) { /* M * Ry: col0' = c col0 - s col2, col2' = s col0 + c col2 */
            for (int i = 0; i < 3; i++) {
                double c0 = r[3 * i], c2 = r[3 * i + 2];
                r[3 * i] = c * c0 - s * c2;
                r[3 * i + 2] = s * c0 + c * c2;
            }
        } else if (k == 2) { /* M * Rz: col0' = c col0 + s col1, col1' = -s col0 + c col1 */
            for (int i = 0; i < 3; i++) {
                double c0 = r[3 * i], c1 = r[3 * i + 1];
                r[3 * i] = c * c0 + s * c1;
                r[3 * i + 1] = -s * c0 + c * c1;
            }
        } else {
            mn_vec3 ax = m->jnt_axis[j];
            double t = 1.0 - c;
            mn_mat3 Rq = {{t * ax.x * ax.x + c, t * ax.x * ax.y - s * ax.z, t * ax.x * ax.z + s * ax.y,
                           t * ax.x * ax.y + s * ax.z, t * ax.y * ax.y + c, t * ax.y * ax.z - s * ax.x,
                           t * ax.x * ax.z - s * ax.y, t * ax.y * ax.z + s * ax.x, t * ax.z * ax.z + c}};
            M = mn_mat3_mul(&M, &Rq);
        }
        *R = M;
        break;
    }
    case MN_JOINT_SLIDE:
        *p = mn_vec3_madd(*p, qj[0], mn_mat3_mulv(&M, m->jnt_axis[j]));
        *R = M;
        break;
    case MN_JOINT_BALL: {
        mn_mat3 Q = mn_quat_to_mat3(mn_q4(qj[0], qj[1], qj[2], qj[3]));
        *R = mn_mat3_mul(&M, &Q);
        break;
    }
    case MN_JOINT_FREE: {
        mn_mat3 Q = mn_quat_to_mat3(mn_q4(qj[3], qj[4], qj[5], qj[6]));
        *R = mn_mat3_mul(&M, &Q);
        break;
    }
    default:
        *R = M;
        break;
    }
}

#endif
