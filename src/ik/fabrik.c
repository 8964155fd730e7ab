/* FABRIK, forward and backward reaching inverse kinematics (Aristidou and Lasenby 2011,
 * "FABRIK: a fast, iterative solver for the inverse kinematics problem", Graphical
 * Models 73(5), Algorithm 1 and sec. 4-5), on a chain of HINGE, SLIDE and BALL joints.
 *
 * The chain is seen as its pivots p_0 .. p_L: the distinct world positions of its joints'
 * origins (joints that share a position, as the 1-DOF joints of a compound joint or a BVH
 * channel list do, share a pivot) and last the end effector. One iteration:
 *
 *   1. forward reaching (Algorithm 1, stage 1): p'_L = target; for i = L-1 .. 1,
 *      p'_i = p'_{i+1} + d_i (p_i - p'_{i+1}) / |p_i - p'_{i+1}|, with d_i the current
 *      length of segment i. With an orientation goal the segment from the last joint
 *      pivot to the effector is rigid in the tip frame, so p'_{L-1} = target - R_d v with
 *      v that segment in tip coordinates (the end-effector frame of sec. 5).
 *   2. backward reaching (stage 2) in joint space: from the root out, each joint turns
 *      (or slides) to carry the next pivot as close as it can to its reached position
 *      p'_{i+1}: a hinge by the angle between the projections of the two vectors onto its
 *      plane (Welman eq. 4.23 with a position goal alone is exactly that projection), a
 *      ball by the shortest arc, a slide by eq. 4.24; each change is clamped to the joint
 *      limits (hinge ranges, ball swing cone and twist: the orientational constraints of
 *      sec. 4.2, applied where the paper applies them, during the outward pass) and
 *      scaled by the joint weight w_i = min(1, 1 / stiffness).
 *
 * Stage 2 working on joint values keeps every iteration an exact, feasible pose: the
 * pivots the next iteration starts from are where the limited joints really put them.
 *
 * Hinges, slides and limited joints cannot always follow stage 1 (a hinge moves its next
 * pivot on a circle only), so they also pull the effector toward the target with the
 * CCD objective, and the pivot term's weight halves whenever an iteration gains less
 * than 0.1%: free ball chains keep FABRIK's motion, constrained chains do not stall.
 * Positions alone do not fix how a hinge chain twists, so with an orientation goal every
 * joint also turns the tip frame toward the target orientation (the w_o term of Welman
 * eq. 4.17), which also settles the free twist of ball joints. */
#include "ik/geo_common.h"

typedef struct fabrik {
    int nn;          /* pivots, the effector's last */
    int* node_k;     /* nn: chain index of the first joint at the pivot; -1 for the effector */
    int* next;       /* chain n: pivot that joint k carries towards its reached position, -1 none */
    mn_vec3* t;      /* nn: reached positions of stage 1 */
    mn_vec3* p;      /* nn: current positions */
    double pw;       /* weight of the pivot term against the effector term, 1 down to 0 */
    double last_err; /* effector error at the start of the previous pass */
} fabrik;

static mn_vec3 node_pos(const mn_geo_chain* c, const mn_data* d, const fabrik* f, int i) {
    int k = f->node_k[i];
    return k >= 0 ? d->xf[c->ch.jnt[k]].p : mn_geo_effector(c, d);
}

static int fabrik_build(mn_geo_chain* c, mn_data* d, void* ctx) {
    fabrik* f = ctx;
    int n = c->ch.njoint;
    f->node_k = mn_arena_alloc(&d->arena, (size_t)(n + 1) * sizeof(int));
    f->next = mn_arena_alloc(&d->arena, (size_t)n * sizeof(int));
    f->t = mn_arena_alloc(&d->arena, (size_t)(n + 1) * sizeof(mn_vec3));
    f->p = mn_arena_alloc(&d->arena, (size_t)(n + 1) * sizeof(mn_vec3));
    if (!f->node_k || !f->next || !f->t || !f->p) return -1;
    f->pw = 1.0;
    f->last_err = INFINITY;
    double eps = 1e-9 * c->reach;
    int* at = f->next; /* first holds each joint's own pivot, then the next one */
    f->nn = 1;
    f->node_k[0] = 0;
    mn_vec3 last = d->xf[c->ch.jnt[0]].p;
    at[0] = 0;
    for (int k = 1; k < n; k++) {
        mn_vec3 o = d->xf[c->ch.jnt[k]].p;
        int type = c->m->jnt_type[c->ch.jnt[k]];
        if (type != MN_JOINT_FIXED && mn_vec3_dist(o, last) > eps) {
            f->node_k[f->nn++] = k;
            last = o;
        }
        at[k] = f->nn - 1;
    }
    if (mn_vec3_dist(mn_geo_effector(c, d), last) > eps) f->node_k[f->nn++] = -1;
    for (int k = 0; k < n; k++)
        at[k] = at[k] + 1 < f->nn ? at[k] + 1 : -1;
    return 0;
}

static void fabrik_pass(mn_geo_chain* c, mn_data* d, void* ctx) {
    fabrik* f = ctx;
    int L = f->nn - 1, tip = c->ch.jnt[c->ch.njoint - 1];
    for (int i = 0; i <= L; i++)
        f->p[i] = node_pos(c, d, f, i);
    double err = c->use_pos ? mn_vec3_dist(f->p[L], c->pd) : 0.0;
    if (err > (1.0 - 1e-3) * f->last_err) f->pw *= 0.5;
    f->last_err = err;

    /* stage 1, forward reaching: from the target in to the root */
    f->t[L] = c->use_pos ? c->pd : f->p[L];
    int start = L - 1;
    if (c->use_rot && L >= 1 && f->node_k[L] < 0) {
        mn_vec3 v = mn_mat3_tmulv(&d->xf[tip].R, mn_vec3_sub(f->p[L], f->p[L - 1]));
        f->t[L - 1] = mn_vec3_sub(f->t[L], mn_mat3_mulv(&c->Rd, v));
        start = L - 2;
    }
    for (int i = start; i >= 1; i--) {
        double len = mn_vec3_dist(f->p[i + 1], f->p[i]);
        mn_vec3 dir = mn_vec3_sub(f->p[i], f->t[i + 1]);
        if (!(mn_vec3_norm(dir) > 1e-12 * c->reach)) dir = mn_vec3_sub(f->p[i], f->p[i + 1]);
        f->t[i] = mn_vec3_madd(f->t[i + 1], len, mn_vec3_normalize(dir));
    }
    f->t[0] = f->p[0];

    /* stage 2, backward reaching in joint space: from the root out */
    for (int k = 0; k < c->ch.njoint; k++) {
        int i = f->next[k];
        mn_geo_goal g;
        g.npt = 0;
        g.use_rot = 0;
        g.wo = 0;
        if (i >= 0) {
            g.npt = 1;
            g.pc[0] = node_pos(c, d, f, i);
            g.pd[0] = f->t[i];
            g.wpt[0] = c->use_pos || i < L ? (c->wp > 0 ? c->wp : 1.0) : 0.0;
        }
        if (c->use_rot) {
            g.use_rot = 1;
            g.Rc = d->xf[tip].R;
            g.Rd = c->Rd;
            g.wo = c->wo;
        }
        if (g.npt == 1 && !(g.wpt[0] > 0)) g.npt = 0;
        /* A hinge can put the next pivot only on a circle about its axis, and a limited
         * joint only within its range: when the reached position is off what the joint
         * can do, stage 1 keeps proposing it and the iteration stalls short of the
         * target. Such joints therefore also pull the effector toward the target, as CCD
         * would (Welman eq. 4.19 with two points): hinges and slides always, balls once
         * progress stalls; the pivot term's weight f->pw halves at each stall, so a
         * stuck FABRIK turns into CCD while a free one keeps FABRIK's shape of motion. */
        int type = mn_geo_free_as_ball(c, k) ? MN_JOINT_BALL : c->m->jnt_type[c->ch.jnt[k]];
        double we = type == MN_JOINT_BALL ? 1.0 - f->pw : 1.0;
        if (g.npt == 1 && i < L && c->use_pos && we > 0) {
            g.wpt[0] *= f->pw;
            g.pc[1] = mn_geo_effector(c, d);
            g.pd[1] = c->pd;
            g.wpt[1] = we * (c->wp > 0 ? c->wp : 1.0);
            g.npt = 2;
        }
        if (g.npt == 0 && !g.use_rot) continue;
        mn_geo_step(c, d, k, &g, MN_GEO_WEIGHTED);
    }
}

mn_status mn_ik_fabrik(MN_IK_METHOD_ARGS) {
    fabrik f;
    return mn_geo_run(m, d, p, o, r, fabrik_pass, fabrik_build, &f, "fabrik");
}
