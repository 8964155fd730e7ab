/* Analytic two-bone IK with a pole vector (Parent ch. 5 notes, "solving a simple system
 * by analysis": the interior angles from the law of cosines), for limbs: a shoulder (a
 * BALL, or hinges sharing one pivot), an elbow (one HINGE or BALL), and optionally a
 * wrist (joints sharing a third pivot) that takes the orientation goal.
 *
 * With A the shoulder pivot, B the elbow pivot, X the point the arm must place (the
 * effector, or with an orientation goal and a wrist, the wrist pivot that puts the
 * effector on target once the wrist turns), L1 = |B - A|, L2 = |X - B| and the target T
 * at distance d from A, clamped to the reach [|L1 - L2|, L1 + L2]:
 *
 *   elbow     |X - A|^2 = L1^2 + L2^2 + 2 L1 L2 cos(beta)   (law of cosines, beta the
 *             angle between the bones). A hinge's rotation phi enters as
 *             u . R(phi) v = c0 + c1 cos phi + c2 sin phi (u = B - A, v = X - B, Rodrigues),
 *             solved in closed form: phi = psi +- acos(K / |c|), the root within limits
 *             nearest the current value. A ball turns about the bend-plane normal.
 *   shoulder  the angle alpha at A between the bone and the line to T:
 *             cos(alpha) = (L1^2 + d^2 - L2^2) / (2 L1 d); the elbow goes to
 *             B* = A + L1 (cos(alpha) u + sin(alpha) v) with u the unit direction to T and
 *             v the pole direction made perpendicular to u (the bend side); the shoulder
 *             is the rotation carrying (B, X) onto (B*, A + d u): for a ball, exactly,
 *             by the two-vector alignment; for three hinges, that rotation split onto
 *             them by the Paden-Kahan subproblems; other hinge groups by sweeps of the
 *             closed-form hinge step of CCD.
 *   wrist     the rotation that carries the tip frame onto the target orientation.
 *
 * A target out of reach leaves the arm straight and pointing at it (UNREACHABLE), never
 * NaN. Joint limits clamp each part; the solution is unique up to the pole, so the joint
 * stiffness, which weights how iterative methods share a motion, does not change it. */
#include "ik/geo_common.h"

enum { MAX_SWEEPS = 64 };

/* Sweeps the closed-form step over chain joints k0..k1 (distal first) until they stop
 * moving; one sweep is exact for a single ball. */
static void sweep_group(mn_geo_chain* c, mn_data* d, int k0, int k1, int elbow_k, int xpivot_k,
                        mn_vec3 Bs, mn_vec3 Xs, int orient) {
    int tip = c->ch.jnt[c->ch.njoint - 1];
    for (int s = 0; s < MAX_SWEEPS; s++) {
        double moved = 0;
        for (int k = k1; k >= k0; k--) {
            mn_geo_goal g;
            g.npt = 0;
            if (elbow_k >= 0) {
                g.pc[0] = d->xf[c->ch.jnt[elbow_k]].p;
                g.pd[0] = Bs;
                g.pc[1] = xpivot_k >= 0 ? d->xf[c->ch.jnt[xpivot_k]].p : mn_geo_effector(c, d);
                g.pd[1] = Xs;
                g.wpt[0] = g.wpt[1] = 1.0;
                g.npt = 2;
            }
            g.use_rot = orient;
            g.Rc = d->xf[tip].R;
            g.Rd = c->Rd;
            g.wo = orient ? 1.0 : 0.0;
            moved += mn_geo_step(c, d, k, &g, 0);
        }
        if (k0 == k1 && c->m->jnt_type[c->ch.jnt[k0]] == MN_JOINT_BALL) break;
        if (!(moved > 1e-15)) break;
    }
}

/* Paden-Kahan subproblem 1 (Murray, Li and Sastry 1994, 3.2.3): the angle about unit axis
 * w that turns vector p onto vector q (their components across w). */
static double pk_sub1(mn_vec3 w, mn_vec3 p, mn_vec3 q) {
    mn_vec3 pp = mn_vec3_madd(p, -mn_vec3_dot(w, p), w),
            qq = mn_vec3_madd(q, -mn_vec3_dot(w, q), w);
    return atan2(mn_vec3_dot(w, mn_vec3_cross(pp, qq)), mn_vec3_dot(pp, qq));
}

/* Three hinges sharing one pivot, with world axes w1 (proximal), w2, w3 in the current
 * pose, realise the world rotation D = exp(w1 t1) exp(w2 t2) exp(w3 t3) (the product of
 * exponentials about the current pose). D w3 = exp(w1 t1) exp(w2 t2) w3 is Paden-Kahan
 * subproblem 2 for (t1, t2) (of its two roots the smaller motion), and t3 is subproblem 1.
 * Returns 0, or -1 when w1 and w2 are parallel (gimbal lock: the caller sweeps instead). */
static int pk_three_hinges(mn_vec3 w1, mn_vec3 w2, mn_vec3 w3, mn_quat D, double t[3]) {
    mn_vec3 p = w3, q = mn_quat_rotate(D, w3);
    double c12 = mn_vec3_dot(w1, w2);
    mn_vec3 x = mn_vec3_cross(w1, w2);
    double nx2 = mn_vec3_dot(x, x);
    if (!(nx2 > 1e-12)) return -1;
    double den = c12 * c12 - 1.0;
    double al = (c12 * mn_vec3_dot(w2, p) - mn_vec3_dot(w1, q)) / den;
    double be = (c12 * mn_vec3_dot(w1, q) - mn_vec3_dot(w2, p)) / den;
    double g2 = (mn_vec3_dot(p, p) - al * al - be * be - 2 * al * be * c12) / nx2;
    double gam = g2 > 0 ? sqrt(g2) : 0.0;
    double best = INFINITY;
    for (int s = -1; s <= 1; s += 2) {
        mn_vec3 z = mn_vec3_add(mn_vec3_add(mn_vec3_scale(w1, al), mn_vec3_scale(w2, be)),
                                mn_vec3_scale(x, s * gam));
        double t2 = pk_sub1(w2, p, z), t1 = pk_sub1(w1, z, q);
        /* t3: what is left, exp(-w2 t2) exp(-w1 t1) D, about w3 */
        mn_quat rest =
            mn_quat_mul(mn_quat_mul(mn_quat_axis_angle(w2, -t2), mn_quat_axis_angle(w1, -t1)), D);
        mn_vec3 r = fabs(w3.x) < 0.9 ? mn_vec3_cross(w3, mn_v3(1, 0, 0))
                                     : mn_vec3_cross(w3, mn_v3(0, 1, 0));
        double t3 = pk_sub1(w3, r, mn_quat_rotate(rest, r));
        double cost = fabs(t1) + fabs(t2) + fabs(t3);
        if (cost < best) best = cost, t[0] = t1, t[1] = t2, t[2] = t3;
    }
    return 0;
}

/* The elbow hinge angle change that makes |X - A| = dist (or as near as its axis and
 * limits allow). */
static double elbow_hinge(const mn_geo_chain* c, const mn_data* d, int j, mn_vec3 A, mn_vec3 B,
                          mn_vec3 X, double dist) {
    mn_vec3 a = mn_mat3_mulv(&d->xf[j].R, c->m->jnt_axis[j]);
    mn_vec3 u = mn_vec3_sub(B, A), v = mn_vec3_sub(X, B);
    double c0 = mn_vec3_dot(u, a) * mn_vec3_dot(a, v);
    double c1 = mn_vec3_dot(u, v) - c0, c2 = mn_vec3_dot(u, mn_vec3_cross(a, v));
    double L1 = mn_vec3_norm(u), L2 = mn_vec3_norm(v);
    double R = hypot(c1, c2);
    if (!(R > 1e-12 * L1 * L2)) return 0.0; /* axis along a bone: the hinge cannot bend the arm */
    double K = 0.5 * (dist * dist - L1 * L1 - L2 * L2) - c0;
    double x = K / R;
    x = x > 1 ? 1 : x < -1 ? -1 : x;
    double psi = atan2(c2, c1), delta = acos(x);
    double q = d->q[c->m->jnt_qadr[j]];
    double cand[2] = {mn_angle_wrap(psi + delta), mn_angle_wrap(psi - delta)};
    int best = -1;
    for (int i = 0; i < 2; i++)
        if (mn_geo_limit(c, j, q + cand[i]) == q + cand[i] &&
            (best < 0 || fabs(cand[i]) < fabs(cand[best])))
            best = i;
    if (best >= 0) return cand[best];
    /* neither root within limits: the clamped value whose reach comes closest */
    double bestv = 0, beste = INFINITY;
    for (int i = 0; i < 2; i++) {
        double phi = mn_geo_limit(c, j, q + cand[i]) - q;
        double r2 = L1 * L1 + L2 * L2 + 2 * (c0 + c1 * cos(phi) + c2 * sin(phi));
        double e = fabs(sqrt(r2 > 0 ? r2 : 0) - dist);
        if (e < beste) beste = e, bestv = phi;
    }
    return bestv;
}

/* A shoulder of three hinges: the rotation carrying (B, X) onto (B*, X*) (exact when the
 * bones are consistent) split onto the hinges in closed form, distal first so each turns
 * about its current axis. Other shoulders are left to the sweeps. */
static void solve_shoulder(mn_geo_chain* c, mn_data* d, int k0, int k1, int elbow_k, int xpivot_k,
                           mn_vec3 Bs, mn_vec3 Xs) {
    const mn_model* m = c->m;
    int hk[3], nh = 0;
    for (int k = k0; k <= k1; k++) {
        int type = m->jnt_type[c->ch.jnt[k]];
        if (type == MN_JOINT_FIXED || mn_geo_held(c, k)) continue;
        if (type != MN_JOINT_HINGE || nh == 3) return;
        hk[nh++] = k;
    }
    if (nh != 3) return;
    mn_vec3 A = d->xf[c->ch.jnt[k0]].p;
    mn_vec3 B = d->xf[c->ch.jnt[elbow_k]].p;
    mn_vec3 X = xpivot_k >= 0 ? d->xf[c->ch.jnt[xpivot_k]].p : mn_geo_effector(c, d);
    mn_vec3 a[2] = {mn_vec3_sub(B, A), mn_vec3_sub(X, A)},
            b[2] = {mn_vec3_sub(Bs, A), mn_vec3_sub(Xs, A)};
    double w[2] = {1, 1};
    mn_quat D = mn_geo_best_rotation(a, b, w, 2);
    mn_vec3 ax[3];
    for (int i = 0; i < 3; i++) {
        int j = c->ch.jnt[hk[i]];
        ax[i] = mn_vec3_normalize(mn_mat3_mulv(&d->xf[j].R, m->jnt_axis[j]));
    }
    double t[3];
    if (pk_three_hinges(ax[0], ax[1], ax[2], D, t) != 0) return;
    for (int i = 2; i >= 0; i--)
        mn_geo_rotate(c, d, hk[i], mn_quat_axis_angle(ax[i], t[i]));
}

mn_status mn_ik_analytic(MN_IK_METHOD_ARGS) {
    size_t mark = mn_arena_mark(&d->arena);
    mn_geo_chain c;
    mn_status st = mn_geo_chain_build(m, d, p, o, &c);
    if (st != MN_OK) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, st, "analytic: workspace too small for the chain");
    }
    r->iterations = 0;
    r->restarts = 0;
    if (!c.use_pos) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, MN_ERR_UNSUPPORTED, "analytic: needs a position goal");
    }

    /* Group the moving joints by pivot: shoulder, elbow, optional wrist. */
    double eps = 1e-9 * c.reach;
    int gfirst[3], glast[3], ng = 0;
    mn_vec3 gpos[3];
    for (int k = 0; k < c.ch.njoint; k++) {
        int type = m->jnt_type[c.ch.jnt[k]];
        /* a free root is held, and so are the joints the model holds */
        if (type == MN_JOINT_FIXED || type == MN_JOINT_FREE || mn_geo_held(&c, k)) continue;
        if (type != MN_JOINT_HINGE && type != MN_JOINT_BALL) {
            mn_arena_reset(&d->arena, mark);
            return mn_ik_fail(r, MN_ERR_UNSUPPORTED,
                              "analytic: joint '%s' is a %s; only hinge and ball joints",
                              m->jnt_name[c.ch.jnt[k]], mn_joint_type_name((mn_joint_type)type));
        }
        mn_vec3 o_k = d->xf[c.ch.jnt[k]].p;
        if (ng > 0 && mn_vec3_dist(o_k, gpos[ng - 1]) <= eps) {
            glast[ng - 1] = k;
            continue;
        }
        if (ng == 3) {
            mn_arena_reset(&d->arena, mark);
            return mn_ik_fail(
                r, MN_ERR_UNSUPPORTED,
                "analytic: more than three pivots (shoulder, elbow, wrist) on the chain");
        }
        gfirst[ng] = glast[ng] = k;
        gpos[ng++] = o_k;
    }
    if (ng < 2) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(
            r, MN_ERR_ARG,
            "analytic: zero-length upper bone (the elbow pivot is on the shoulder pivot)");
    }
    if (gfirst[1] != glast[1]) {
        mn_arena_reset(&d->arena, mark);
        return mn_ik_fail(r, MN_ERR_UNSUPPORTED,
                          "analytic: the elbow must be one hinge or one ball joint");
    }
    int elbow_k = gfirst[1];
    int wrist = ng == 3;
    int orient_wrist = wrist && c.use_rot;
    int xpivot_k = orient_wrist ? gfirst[2] : -1;
    /* Bone lengths do not depend on the pose: check them before touching the state. */
    {
        mn_vec3 E0 = mn_geo_effector(&c, d);
        double l2 = mn_vec3_dist(orient_wrist ? gpos[2] : E0, gpos[1]);
        if (!(l2 > eps) || !(mn_vec3_dist(E0, gpos[1]) > eps)) {
            mn_arena_reset(&d->arena, mark);
            return mn_ik_fail(
                r, MN_ERR_ARG,
                "analytic: zero-length lower bone (the effector is on the elbow pivot)");
        }
    }
    mn_geo_clamp_chain(&c, d); /* a seed outside the limits starts from its projection */
    mn_vec3 A = d->xf[c.ch.jnt[gfirst[0]]].p, B = d->xf[c.ch.jnt[elbow_k]].p;
    mn_vec3 E = mn_geo_effector(&c, d);
    mn_vec3 X = orient_wrist ? d->xf[c.ch.jnt[xpivot_k]].p : E;
    mn_vec3 T = c.pd;
    if (orient_wrist) { /* the wrist position that puts the effector on target */
        int tip = c.ch.jnt[c.ch.njoint - 1];
        mn_vec3 v = mn_mat3_tmulv(&d->xf[tip].R, mn_vec3_sub(E, X));
        T = mn_vec3_sub(c.pd, mn_mat3_mulv(&c.Rd, v));
    }
    double L1 = mn_vec3_dist(B, A), L2 = mn_vec3_dist(X, B);
    double dist = mn_vec3_dist(T, A);
    double dmin = fabs(L1 - L2), dmax = L1 + L2;
    double dc = dist < dmin ? dmin : dist > dmax ? dmax : dist;
    int out_of_reach = dist > dmax + o->tol_pos || dist < dmin - o->tol_pos;

    /* Bend-side direction: the pole (base frame) or the current bend. */
    mn_vec3 u = mn_vec3_sub(T, A);
    u = mn_vec3_norm(u) > eps ? mn_vec3_normalize(u) : mn_vec3_normalize(mn_vec3_sub(X, A));
    if (!(mn_vec3_norm(u) > 0)) u = mn_vec3_normalize(mn_vec3_sub(B, A));
    mn_vec3 pole = mn_mat3_mulv(&c.base.R, p->pole);
    if (!(mn_vec3_norm(pole) > 0)) pole = mn_vec3_sub(B, mn_vec3_lerp(A, X, 0.5));
    mn_vec3 side = mn_vec3_madd(pole, -mn_vec3_dot(pole, u), u);
    if (!(mn_vec3_norm(side) > 1e-9 * (mn_vec3_norm(pole) + eps))) side = mn_vec3_perpendicular(u);
    side = mn_vec3_normalize(side);

    /* 1. the elbow: the bone angle that gives |X - A| = dc (law of cosines) */
    int je = c.ch.jnt[elbow_k];
    if (m->jnt_type[je] == MN_JOINT_HINGE) {
        double phi = elbow_hinge(&c, d, je, A, B, X, dc);
        mn_vec3 ax = mn_mat3_mulv(&d->xf[je].R, m->jnt_axis[je]);
        mn_geo_rotate(&c, d, elbow_k, mn_quat_axis_angle(ax, phi));
    } else {
        mn_vec3 ub = mn_vec3_sub(B, A), vb = mn_vec3_sub(X, B);
        mn_vec3 nrm = mn_vec3_cross(ub, vb);
        if (!(mn_vec3_norm(nrm) > 1e-9 * L1 * L2)) nrm = mn_vec3_cross(ub, side);
        if (!(mn_vec3_norm(nrm) > 1e-9 * L1)) nrm = mn_vec3_perpendicular(ub);
        nrm = mn_vec3_normalize(nrm);
        double beta0 = atan2(mn_vec3_dot(mn_vec3_cross(ub, vb), nrm), mn_vec3_dot(ub, vb));
        double cb = (dc * dc - L1 * L1 - L2 * L2) / (2 * L1 * L2);
        double beta = acos(cb > 1 ? 1 : cb < -1 ? -1 : cb);
        mn_geo_rotate(&c, d, elbow_k, mn_quat_axis_angle(nrm, beta - beta0));
    }

    /* 2. the shoulder: bone to B*, the arm's line to T, bend on the pole side */
    B = d->xf[je].p;
    X = orient_wrist ? d->xf[c.ch.jnt[xpivot_k]].p : mn_geo_effector(&c, d);
    double dact = mn_vec3_dist(X, A);
    double ca = dact > eps ? (L1 * L1 + dact * dact - L2 * L2) / (2 * L1 * dact) : 1.0;
    double alpha = acos(ca > 1 ? 1 : ca < -1 ? -1 : ca);
    mn_vec3 Bs = mn_vec3_add(
        A, mn_vec3_scale(mn_vec3_madd(mn_vec3_scale(u, cos(alpha)), sin(alpha), side), L1));
    mn_vec3 Xs = mn_vec3_madd(A, dact, u);
    solve_shoulder(&c, d, gfirst[0], glast[0], elbow_k, xpivot_k, Bs, Xs);
    sweep_group(&c, d, gfirst[0], glast[0], elbow_k, xpivot_k, Bs, Xs, 0);

    /* 3. the wrist: the tip frame onto the target orientation */
    if (orient_wrist) sweep_group(&c, d, gfirst[2], glast[2], -1, -1, Bs, Xs, 1);

    mn_fk(m, d);
    mn_geo_errors(&c, d, &r->pos_err, &r->rot_err);
    r->iterations = 1;
    mn_arena_reset(&d->arena, mark);
    if (mn_geo_met(o, &c, r->pos_err, r->rot_err)) {
        r->status = MN_OK;
        r->message[0] = '\0';
        return MN_OK;
    }
    if (out_of_reach)
        return mn_ik_fail(r, MN_ERR_UNREACHABLE,
                          "analytic: target %.4g from the shoulder, reach is [%.4g, %.4g]: arm "
                          "stretched toward it",
                          dist, dmin, dmax);
    return mn_ik_fail(r, MN_ERR_UNREACHABLE,
                      "analytic: joint limits or the elbow axis keep the effector %.3g from the "
                      "target (%.3g rad)",
                      r->pos_err, r->rot_err);
}
