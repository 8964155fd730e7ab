/* Cyclic coordinate descent (Welman 1993, 4.2; after Wang and Chen 1991).
 *
 * One iteration visits the chain's joints from the most distal to the base (Welman 4.2.2)
 * and moves each by the closed-form maximiser of its one-variable objective
 *
 *     g(phi) = w_p P_id . R(phi) P_ic + w_o sum_j u_jd . R(phi) u_jc        (eq. 4.16-4.18)
 *
 * where P_ic and P_id run from the joint's pivot to the current and desired end-effector
 * positions and u_jc, u_jd are the current and desired axes of the tip frame:
 *
 *   - a hinge by phi = atan2(k3, k2 - k1) with k1, k2, k3 of eq. 4.20-4.22 (eq. 4.19, 4.23);
 *   - a slide by lambda = (P_d - P_c) . axis (eq. 4.24);
 *   - a ball by the rotation that maximises the same objective over all rotations (for a
 *     position goal alone, the shortest arc carrying P_ic onto P_id; with an orientation
 *     goal, Horn's quaternion solution of the weighted alignment).
 *
 * Each change is scaled by the joint weight w_i = min(1, 1 / stiffness) ("q_i = q_i +
 * w_i phi"), limited by o->max_step, clamped to the joint's limits, and the end-effector
 * frame is moved with it before the next joint is visited.
 *
 * Weights (Welman, the paragraph before eq. 4.19): w_o = w_rot and w_p = alpha (1 + rho)
 * with rho = min(|P_id|, |P_ic|) / max(|P_id|, |P_ic|). Welman asks alpha to be inversely
 * proportional to the world scale W so that the method is scale-invariant; as P_id . P_ic
 * is a squared length, alpha = w_pos / W^2 with W the chain's length makes both terms
 * dimensionless and of the same size. */
#include "ik/geo_common.h"

static void ccd_pass(mn_geo_chain* c, mn_data* d, void* ctx) {
    (void)ctx;
    int tip = c->ch.jnt[c->ch.njoint - 1];
    for (int k = c->ch.njoint - 1; k >= 0; k--) {
        mn_geo_goal g;
        g.npt = c->use_pos;
        g.pc[0] = mn_geo_effector(c, d);
        g.pd[0] = c->pd;
        g.wpt[0] = c->wp;
        g.use_rot = c->use_rot;
        g.Rc = d->xf[tip].R;
        g.Rd = c->Rd;
        g.wo = c->wo;
        mn_geo_step(c, d, k, &g, MN_GEO_WEIGHTED | MN_GEO_RHO);
    }
}

/* The sweep runs tip to base: the frames proximal to the joint being moved are still
 * current, and only the tip frame needs moving with it. */
static int ccd_setup(mn_geo_chain* c, mn_data* d, void* ctx) {
    (void)d;
    (void)ctx;
    c->tip_only = 1;
    return 0;
}

mn_status mn_ik_ccd(MN_IK_METHOD_ARGS) {
    return mn_geo_run(m, d, p, o, r, ccd_pass, ccd_setup, NULL, "ccd");
}
