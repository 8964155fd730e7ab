/* The fit's per-frame pass over the targets (the derivation is at the top of fit.c): the
 * sums B_j and c0, the one pass whose cost grows with the vertices; and the pose in and out
 * of the fitter's state. */
#include "skin/fit_impl.h"

#include <string.h>

static int check_targets(const mn_fitter* f, const double* x) {
    for (int i = 0; i < f->nverts * f->dim; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* The pass of mn_ft_load_targets for dim 2 or 3 (a constant where it is called, so that each
 * gets its own loop): B (m x 12) and returns c0 relative to oa. */
static inline __attribute__((always_inline)) double
targets_pass(const mn_fitter* f, const double* x, mn_vec3 oa, int dim, double* B) {
    /* B_j segment by segment (a controller's influences within a block of vertices, whose
     * targets stay in the cache while the block's segments read them), in registers:
     * m_i w_ij (x_i - oa) z_i^T (row-major 3 x 4) as six two-lane vectors, two entries at a
     * time into two sets of sums so that no sum waits on the one before, then added into
     * B_j. A vertex's weights sum to one (the rig normalises them), so the same pass gives
     * c0 = sum_j sum_i m_i w_ij |x_i - oa|^2, and B_j's last columns sum to
     * sum_i m_i (x_i - oa). */
    memset(B, 0, (size_t)f->m * 12 * sizeof(double));
    mn_v2d o01 = {oa.x, oa.y}, cxy = {0, 0};
    double cz = 0;
    for (int sg = 0; sg < f->nseg; sg++) {
        int j = f->seg_j[sg];
        mn_v2d a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, ac = a0;
        mn_v2d b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, bc = a0;
        double az = 0, bz = 0;
        int s = f->seg_off[sg], e = f->seg_off[sg + 1];
#define MN_B_TERM(S, c0_, c1_, c2_, c3_, c4_, c5_, cc_, cz_)                                       \
    do {                                                                                           \
        int v_ = f->col_i[S];                                                                      \
        double w_ = f->col_w[S];                                                                   \
        const double* p_ = x + (size_t)dim * (size_t)v_;                                           \
        mn_v2d xv_ = (mn_v2d){p_[0], p_[1]} - o01, q_ = w_ * xv_;                                  \
        double z2_ = dim == 3 ? p_[2] - oa.z : 0, x2_ = w_ * z2_;                                  \
        const double* z_ = f->z4 + 4 * (size_t)v_;                                                 \
        mn_v2d za_ = mn_v2d_load(z_), zb_ = mn_v2d_load(z_ + 2);                                   \
        c0_ += q_[0] * za_;                                                                        \
        c1_ += q_[0] * zb_;                                                                        \
        c2_ += q_[1] * za_;                                                                        \
        c3_ += q_[1] * zb_;                                                                        \
        c4_ += x2_ * za_;                                                                          \
        c5_ += x2_ * zb_;                                                                          \
        cc_ += q_ * xv_;                                                                           \
        cz_ += x2_ * z2_;                                                                          \
    } while (0)
        for (; s + 2 <= e; s += 2) {
            MN_B_TERM(s, a0, a1, a2, a3, a4, a5, ac, az);
            MN_B_TERM(s + 1, b0, b1, b2, b3, b4, b5, bc, bz);
        }
        if (s < e) MN_B_TERM(s, a0, a1, a2, a3, a4, a5, ac, az);
#undef MN_B_TERM
        cxy += ac + bc;
        cz += az + bz;
        double* Bj = B + 12 * j;
        mn_v2d_store(Bj, mn_v2d_load(Bj) + (a0 + b0));
        mn_v2d_store(Bj + 2, mn_v2d_load(Bj + 2) + (a1 + b1));
        mn_v2d_store(Bj + 4, mn_v2d_load(Bj + 4) + (a2 + b2));
        mn_v2d_store(Bj + 6, mn_v2d_load(Bj + 6) + (a3 + b3));
        mn_v2d_store(Bj + 8, mn_v2d_load(Bj + 8) + (a4 + b4));
        mn_v2d_store(Bj + 10, mn_v2d_load(Bj + 10) + (a5 + b5));
    }
    return cxy[0] + cxy[1] + cz;
}

/* The one pass over the vertices per frame (seed "Find Optimized Translation": the
 * right-hand side W^T M X', here for every A_j at once):
 *   B_j = sum_i m_i w_ij (x_i - o) z_i^T,  c0 = 1/2 sum_i m_i |x_i - o|^2,
 * with o the targets' mass-weighted centroid. The pass goes by blocks of vertices and
 * within a block by controller (seg_*, col_*, targets_pass), summed in registers rather
 * than added into memory vertex by vertex, and c0 and the centroid come out of the same
 * sums. All are taken relative to an origin oa from 16 evenly spaced targets (inside the
 * figure, which is all the sums' conditioning needs; a full pass for the centroid first
 * cost a sixth to a third of a 200,000-vertex frame). The pass's own sums give o, and the
 * difference is removed by exact algebra on m-sized sums (B_j -= (o - oa) S1_j^T,
 * c0 -= 1/2 M |o - oa|^2). The sums go to a second buffer that replaces B only when c0,
 * a sum of squares, is finite: a non-finite target makes it NaN or infinite, and only then
 * are the targets checked one by one, f keeping its previous targets. */
int mn_ft_load_targets(mn_fitter* f, const double* x) {
    int dim = f->dim, m = f->m, n = f->nverts;
    const double* mass = f->rig->mass;
    double ox = 0, oy = 0, oz = 0, ms = 0;
    int step = n > 16 ? n / 16 : 1, i;
    for (i = 0; i < n; i += step) {
        const double* p = x + (size_t)dim * (size_t)i;
        ox += mass[i] * p[0];
        oy += mass[i] * p[1];
        oz += dim == 3 ? mass[i] * p[2] : 0;
        ms += mass[i];
    }
    mn_vec3 oa = mn_vec3_scale(mn_v3(ox, oy, oz), 1.0 / ms);
    double* B = f->Bnew;
    double c0 = dim == 3 ? targets_pass(f, x, oa, 3, B) : targets_pass(f, x, oa, 2, B);
    double sx = 0, sy = 0, sz = 0;
    for (int j = 0; j < m; j++) {
        sx += B[12 * j + 3];
        sy += B[12 * j + 7];
        sz += B[12 * j + 11];
    }
    if (!isfinite(c0) && !check_targets(f, x)) return 0;
    f->Bnew = f->B; /* the new sums become B */
    f->B = B;
    double im = 1.0 / f->total_mass;
    double dl[3] = {sx * im, sy * im, sz * im}; /* o - oa */
    for (int j = 0; j < m; j++) {
        const double* S = f->S1 + 4 * j;
        double* Bj = B + 12 * j;
        for (int rr = 0; rr < 3; rr++)
            for (int c = 0; c < 4; c++)
                Bj[4 * rr + c] -= dl[rr] * S[c];
    }
    c0 -= f->total_mass * (dl[0] * dl[0] + dl[1] * dl[1] + dl[2] * dl[2]);
    f->target_origin = mn_v3(oa.x + dl[0], oa.y + dl[1], oa.z + dl[2]);
    f->c0 = 0.5 * (c0 > 0 ? c0 : 0);
    f->have_targets = 1;
    return 1;
}

mn_status mn_fit_set_targets(mn_fitter* f, const double* x) {
    if (!f || !x) return MN_ERR_ARG;
    return mn_ft_load_targets(f, x) ? MN_OK : MN_ERR_ARG;
}

/* Pose <-> internal state (positions relative to the target origin). */
void mn_ft_load_pose(mn_fitter* f, const mn_xform* pose) {
    for (int j = 0; j < f->m; j++) {
        f->R[j] = f->rig->ctrl_kind[j] == MN_CTRL_CAGE ? mn_mat3_identity() : pose[j].R;
        f->d[j] = mn_vec3_sub(pose[j].p, f->target_origin);
    }
}

/* (A turned controller's rotation is a product of the fit's rotations, exact to rounding,
 * which a fit's few dozen steps grow to 1e-14 at most; it is brought back to a rotation
 * here, once per fit.) */
void mn_ft_store_pose(const mn_fitter* f, mn_xform* pose) {
    for (int j = 0; j < f->m; j++) {
        if (f->fixed[j]) continue; /* bit for bit as given */
        pose[j].R =
            f->rot_off[j] >= 0 || f->up[j] >= 0 ? mn_ft_reorthonormalize(&f->R[j]) : f->R[j];
        pose[j].p = mn_vec3_add(f->d[j], f->target_origin);
        if (f->dim == 2) pose[j].p.z = 0;
    }
}
