/* Closed-form IK of 6R arms with a spherical wrist and of S-R-S 7R arms: see closed_form.h.
 *
 * The solve follows the product-of-exponentials reduction of Murray, Li and Sastry (1994,
 * sec. 3.3.2, the elbow manipulator's example): with g = T M^-1 the motion the joints must
 * make, the shoulder's axes keep S and the wrist's keep W, so
 *   1. |g W - S| depends on the elbow alone: Paden-Kahan subproblem 3 (rotation about one
 *      axis to a given distance) gives its two angles;
 *   2. the shoulder's two rotations carry the elbow-turned W onto g W: subproblem 2
 *      (rotations about two meeting axes), two answers;
 *   3. the wrist's first two rotations carry a point of its last axis where the rest of g
 *      takes it (subproblem 2, two answers), and its last rotation follows from a point off
 *      its axis (subproblem 1).
 * Pieper (1968, "The kinematics of manipulators under computer control") showed such arms
 * solvable in closed form; the subproblems make the solve independent of how the URDF
 * places the frames. A seventh joint held at a given value (SRS7) is a known factor before
 * the shoulder or next to the elbow. */
#include "ik/closed_form.h"

#include <math.h>
#include <string.h>

static mn_vec3 v3(const double* a) {
    return mn_v3(a[0], a[1], a[2]);
}

/* exp(xi theta) for the hinge of unit axis w through r, from c = cos theta and s = sin
 * theta: R = I + s [w] + (1 - c) [w]^2 (Rodrigues), p = r - R r (Murray, Li and Sastry
 * eq. 2.36). */
static mn_xform hinge_exp_cs(const double* w, const double* r, double c, double s) {
    mn_xform X;
    double t = 1.0 - c, x = w[0], y = w[1], z = w[2];
    double* R = X.R.m;
    R[0] = t * x * x + c, R[1] = t * x * y - s * z, R[2] = t * x * z + s * y;
    R[3] = t * x * y + s * z, R[4] = t * y * y + c, R[5] = t * y * z - s * x;
    R[6] = t * x * z - s * y, R[7] = t * y * z + s * x, R[8] = t * z * z + c;
    X.p = mn_v3(r[0] - (R[0] * r[0] + R[1] * r[1] + R[2] * r[2]),
                r[1] - (R[3] * r[0] + R[4] * r[1] + R[5] * r[2]),
                r[2] - (R[6] * r[0] + R[7] * r[1] + R[8] * r[2]));
    return X;
}

static mn_xform hinge_exp(const double* w, const double* r, double th) {
    return hinge_exp_cs(w, r, cos(th), sin(th));
}

/* An angle's cosine and sine, and the angle. */
typedef struct angle {
    double t, c, s;
} angle;

/* Subproblem 1: the rotation about (w, r) carrying p to q (projected onto the plane
 * normal to w). */
static angle sub1(mn_vec3 w, mn_vec3 r, mn_vec3 p, mn_vec3 q) {
    mn_vec3 u = mn_vec3_sub(p, r), v = mn_vec3_sub(q, r);
    u = mn_vec3_sub(u, mn_vec3_scale(w, mn_vec3_dot(w, u)));
    v = mn_vec3_sub(v, mn_vec3_scale(w, mn_vec3_dot(w, v)));
    double y = mn_vec3_dot(w, mn_vec3_cross(u, v)), x = mn_vec3_dot(u, v), h = sqrt(x * x + y * y);
    angle a = {atan2(y, x), 1, 0};
    if (h > 0) a.c = x / h, a.s = y / h;
    return a;
}

/* Subproblem 2: exp(w1 t1) exp(w2 t2) p = q for the two axes through r. Writes up to two
 * (t1, t2) and returns how many (0 when q is farther from the axes' reach than rounding
 * explains). */
static int sub2(mn_vec3 w1, mn_vec3 w2, mn_vec3 r, mn_vec3 p, mn_vec3 q, angle* t1, angle* t2) {
    mn_vec3 u = mn_vec3_sub(p, r), v = mn_vec3_sub(q, r);
    double k = mn_vec3_dot(w1, w2), den = k * k - 1.0;
    mn_vec3 x = mn_vec3_cross(w1, w2);
    double x2 = mn_vec3_dot(x, x);
    if (!(x2 > 1e-12)) return 0;
    double a = (k * mn_vec3_dot(w2, u) - mn_vec3_dot(w1, v)) / den;
    double b = (k * mn_vec3_dot(w1, v) - mn_vec3_dot(w2, u)) / den;
    double uu = mn_vec3_dot(u, u);
    double g2 = (uu - a * a - b * b - 2 * a * b * k) / x2;
    if (g2 < -1e-9 * (uu + 1e-300)) return 0;
    double g = g2 > 0 ? sqrt(g2) : 0;
    int ns = g > 0 ? 2 : 1;
    for (int s = 0; s < ns; s++) {
        mn_vec3 z = mn_vec3_add(mn_vec3_add(mn_vec3_scale(w1, a), mn_vec3_scale(w2, b)),
                                mn_vec3_scale(x, s ? -g : g));
        mn_vec3 c = mn_vec3_add(z, r);
        t2[s] = sub1(w2, r, p, c);
        t1[s] = sub1(w1, r, c, q);
    }
    return ns;
}

/* Subproblem 3: the angles t of the rotation about (w, r) with |exp(w t) p - q| = d. */
static int sub3(mn_vec3 w, mn_vec3 r, mn_vec3 p, mn_vec3 q, double d, angle* t) {
    mn_vec3 u = mn_vec3_sub(p, r), v = mn_vec3_sub(q, r);
    double wu = mn_vec3_dot(w, u), wv = mn_vec3_dot(w, v);
    mn_vec3 up = mn_vec3_sub(u, mn_vec3_scale(w, wu)), vp = mn_vec3_sub(v, mn_vec3_scale(w, wv));
    double d2 = d * d - (wu - wv) * (wu - wv);
    double nu = mn_vec3_norm(up), nv = mn_vec3_norm(vp);
    if (!(nu * nv > 1e-300)) return 0;
    double t0 = atan2(mn_vec3_dot(w, mn_vec3_cross(up, vp)), mn_vec3_dot(up, vp));
    double c = (nu * nu + nv * nv - d2) / (2 * nu * nv);
    if (c > 1 + 1e-9 || c < -1 - 1e-9 || isnan(c)) return 0;
    double a = c >= 1 ? 0 : c <= -1 ? MN_PI : acos(c);
    t[0].t = t0 - a;
    t[1].t = t0 + a;
    for (int k = 0; k < 2; k++)
        t[k].c = cos(t[k].t), t[k].s = sin(t[k].t);
    return a > 0 ? 2 : 1;
}

/* ---- the family of a chain ------------------------------------------------------------ */

/* The closest points of the lines (r0, w0) and (r1, w1) (unit axes): their midpoint in
 * *mid, their distance returned; -1 for parallel lines. */
static double lines_meet(mn_vec3 r0, mn_vec3 w0, mn_vec3 r1, mn_vec3 w1, mn_vec3* mid) {
    double b = mn_vec3_dot(w0, w1), den = 1 - b * b;
    if (!(den > 1e-10)) return -1;
    mn_vec3 d = mn_vec3_sub(r0, r1);
    double s = (b * mn_vec3_dot(w1, d) - mn_vec3_dot(w0, d)) / den;
    double t = (mn_vec3_dot(w1, d) - b * mn_vec3_dot(w0, d)) / den;
    mn_vec3 a = mn_vec3_add(r0, mn_vec3_scale(w0, s)), c = mn_vec3_add(r1, mn_vec3_scale(w1, t));
    *mid = mn_vec3_scale(mn_vec3_add(a, c), 0.5);
    return mn_vec3_dist(a, c);
}

static double point_line(mn_vec3 p, mn_vec3 r, mn_vec3 w) {
    mn_vec3 u = mn_vec3_sub(p, r);
    return mn_vec3_norm(mn_vec3_sub(u, mn_vec3_scale(w, mn_vec3_dot(w, u))));
}

/* Does the layout with `fixed` given (-1: none) fit: the first two solved DOFs adjacent
 * and meeting at S, the last three meeting at W (no two parallel), the one left between
 * them (the elbow) off both points, the fixed DOF before the shoulder or among the elbow's
 * neighbours? */
/* The last three axes meet (at *W), no two parallel: a spherical wrist. */
static int wrist_point(const mn_ik_cf* cf, double tol, mn_vec3* W) {
    int n = cf->n;
    mn_vec3 W2;
    double dw =
        lines_meet(v3(cf->r[n - 3]), v3(cf->w[n - 3]), v3(cf->r[n - 2]), v3(cf->w[n - 2]), W);
    if (dw < 0 || dw > tol) return 0;
    if (lines_meet(v3(cf->r[n - 2]), v3(cf->w[n - 2]), v3(cf->r[n - 1]), v3(cf->w[n - 1]), &W2) < 0)
        return 0;
    return point_line(*W, v3(cf->r[n - 1]), v3(cf->w[n - 1])) <= tol;
}

static int layout(mn_ik_cf* cf, int fixed, double tol, mn_vec3 W) {
    int n = cf->n, solved[7], ns = 0;
    for (int k = 0; k < n; k++)
        if (k != fixed) solved[ns++] = k;
    if (ns != 6) return 0;
    int p0 = solved[0], p1 = solved[1], e = solved[2];
    if (p1 != p0 + 1 || solved[3] != n - 3 || (fixed > p0 && fixed < p1) || fixed >= n - 3)
        return 0;
#define AX(k) v3(cf->w[k])
#define PT(k) v3(cf->r[k])
    mn_vec3 S;
    double ds = lines_meet(PT(p0), AX(p0), PT(p1), AX(p1), &S);
    if (ds < 0 || ds > tol) return 0;
    if (point_line(S, PT(e), AX(e)) < 1e3 * tol || point_line(W, PT(e), AX(e)) < 1e3 * tol)
        return 0;
#undef AX
#undef PT
    cf->fixed = fixed;
    cf->pair[0] = p0, cf->pair[1] = p1, cf->elbow = e;
    cf->wrist[0] = n - 3, cf->wrist[1] = n - 2, cf->wrist[2] = n - 1;
    cf->S[0] = S.x, cf->S[1] = S.y, cf->S[2] = S.z;
    cf->W[0] = W.x, cf->W[1] = W.y, cf->W[2] = W.z;
    return 1;
}

static int parallel(const double* a, const double* b) {
    return mn_vec3_norm(mn_vec3_cross(v3(a), v3(b))) < 1e-9;
}

/* The UR6 layout: axes 2-4 parallel (the first not), 5 and 6 meeting at W (not parallel),
 * the fifth not parallel to the second (it sets the last axis's tilt), the planar arm's
 * points off its middle axis. */
static int layout_ur(mn_ik_cf* cf, double tol) {
    if (!parallel(cf->w[1], cf->w[2]) || !parallel(cf->w[1], cf->w[3])) return 0;
    if (parallel(cf->w[0], cf->w[1]) || parallel(cf->w[4], cf->w[1])) return 0;
    mn_vec3 W;
    double dw = lines_meet(v3(cf->r[4]), v3(cf->w[4]), v3(cf->r[5]), v3(cf->w[5]), &W);
    if (dw < 0 || dw > tol) return 0;
    mn_vec3 w3 = v3(cf->w[2]), r3 = v3(cf->r[2]);
    if (point_line(v3(cf->r[1]), r3, w3) < 1e3 * tol ||
        point_line(v3(cf->r[3]), r3, w3) < 1e3 * tol)
        return 0;
    cf->fixed = -1;
    cf->W[0] = W.x, cf->W[1] = W.y, cf->W[2] = W.z;
    return 1;
}

/* The family of the axes in cf->w, cf->r (cf->n of them), with S, W and the DOFs' roles. */
static int family(mn_ik_cf* cf, double tol) {
    mn_vec3 W;
    int wrist = wrist_point(cf, tol, &W);
    cf->family = MN_IK_CF_NONE;
    if (cf->n == 6) {
        if (wrist && layout(cf, -1, tol, W))
            cf->family = MN_IK_CF_WRIST6;
        else if (layout_ur(cf, tol))
            cf->family = MN_IK_CF_UR6;
        return cf->family;
    }
    /* the joint next to the elbow first (an S-R-S arm's third), then the first */
    static const int order[3] = {2, 3, 0};
    for (int k = 0; k < 3 && wrist; k++)
        if (layout(cf, order[k], tol, W)) {
            cf->family = MN_IK_CF_SRS7;
            break;
        }
    return cf->family;
}

int mn_ik_cf_detect(const mn_ikc* c, const double* axis, const double* origin, mn_ik_cf* cf) {
    memset(cf, 0, sizeof *cf);
    cf->fixed = -1;
    const mn_model* m = c->m;
    int n = c->ch.ndof;
    if ((n != 6 && n != 7) || !c->ch.simple || c->ch.locked || c->ch.nq != n || !c->ch.fk_prog)
        return 0;
    for (int i = 0; i < c->ch.njoint; i++) {
        int t = m->jnt_type[c->ch.jnt[i]];
        if (t != MN_JOINT_HINGE && t != MN_JOINT_FIXED) return 0;
    }
    cf->n = n;
    double tol = 1e-7 * (c->reach > 0 ? c->reach : 1.0);
    /* Whether axes meet, are parallel or pass a point of other axes does not change as the
     * joints move (each joint turns the axes beyond it rigidly about its own): the axes of
     * the pose at hand, when given, turn a chain of no family away without a walk. */
    if (axis) {
        memcpy(&cf->w[0][0], axis, sizeof(double) * (size_t)(3 * n));
        memcpy(&cf->r[0][0], origin, sizeof(double) * (size_t)(3 * n));
        if (family(cf, tol) == MN_IK_CF_NONE) return 0;
    }
    /* the axes and origins at q = 0 from one walk of the chain's program (arrays of its
     * own: the chain view's hold the caller's pose) */
    double zero[7] = {0, 0, 0, 0, 0, 0, 0};
    mn_chain_fk_axes(m, &c->ch, zero, &cf->M, &cf->w[0][0], &cf->r[0][0]);
    return family(cf, tol);
}

/* ---- the solve ------------------------------------------------------------------------ */

/* Is some turn of angle v within DOF k's limits (if any)? */
static int fits(const mn_ik_cf* cf, int k, double v) {
    if (!cf->lo) return 1;
    double lo = cf->lo[k], hi = cf->hi[k];
    if (!(hi - lo < 2 * MN_PI)) return 1;                    /* a whole turn, or unlimited */
    double t = v + 2 * MN_PI * ceil((lo - v) / (2 * MN_PI)); /* the first turn >= lo */
    return t <= hi;
}

/* An angle of atan2 (or of two, summed) in (-pi, pi]. */
static double wrap_pi(double a) {
    if (a > MN_PI) return a - 2 * MN_PI;
    if (a <= -MN_PI) return a + 2 * MN_PI;
    return a;
}

/* A cos t + B sin t = C: up to two t. */
static int cos_sin_eq(double A, double B, double C, angle* t) {
    double h = sqrt(A * A + B * B);
    if (!(h > 1e-12)) return 0;
    double x = C / h;
    if (!(x <= 1 + 1e-9 && x >= -1 - 1e-9)) return 0;
    double a = x >= 1 ? 0 : x <= -1 ? MN_PI : acos(x), ph = atan2(B, A);
    t[0].t = ph + a;
    t[1].t = ph - a;
    for (int k = 0; k < 2; k++)
        t[k].c = cos(t[k].t), t[k].s = sin(t[k].t);
    return a > 0 ? 2 : 1;
}

/* exp(w t) v for a direction v (Rodrigues). */
static mn_vec3 turn(mn_vec3 w, angle t, mn_vec3 v) {
    double k = mn_vec3_dot(w, v) * (1 - t.c);
    return mn_vec3_add(mn_vec3_add(mn_vec3_scale(v, t.c), mn_vec3_scale(mn_vec3_cross(w, v), t.s)),
                       mn_vec3_scale(w, k));
}

/* w . exp(a t) b = C for the angle t: a cos t + b sin t form of Rodrigues. */
static int turn_dot(mn_vec3 w, mn_vec3 a, mn_vec3 b, double C, angle* t) {
    double ab = mn_vec3_dot(a, b), aw = mn_vec3_dot(a, w);
    return cos_sin_eq(mn_vec3_dot(w, b) - ab * aw, mn_vec3_dot(w, mn_vec3_cross(a, b)), C - ab * aw,
                      t);
}

/* The UR6 solve (Hawkins 2013's steps, in subproblems). With g = T M^-1 and P where the
 * last two axes meet:
 *   1. joints 2-4 turn about parallel axes, so the component along them of g P, after the
 *      first joint turned them, is that of P at q = 0: the first angle (two);
 *   2. the same component of the last axis, g's image of it, is set by the fifth angle
 *      alone (two);
 *   3. the sixth turns R5^T w2 onto g^T R1 w2 (subproblem 1; free at the singular wrist,
 *      where it takes qlast);
 *   4. what is left, e2 e3 e4 = e1^-1 g e6^-1 e5^-1, is the planar arm: the third angle by
 *      subproblem 3 (two), the second and the fourth by subproblem 1. */
static int solve_ur(const mn_ik_cf* cf, const mn_xform* T, double qlast,
                    double q[MN_IK_CF_MAX][7]) {
    mn_xform Minv = mn_xform_inverse(&cf->M);
    mn_xform g = mn_xform_mul(T, &Minv);
    mn_vec3 w1 = v3(cf->w[0]), w2 = v3(cf->w[1]), w3 = v3(cf->w[2]), w4 = v3(cf->w[3]);
    mn_vec3 w5 = v3(cf->w[4]), w6 = v3(cf->w[5]);
    mn_vec3 r1 = v3(cf->r[0]), r2 = v3(cf->r[1]), r3 = v3(cf->r[2]), r4 = v3(cf->r[3]);
    mn_vec3 P = v3(cf->W);
    mn_vec3 d = mn_vec3_sub(mn_xform_apply(&g, P), r1);
    angle t1[2];
    int n1 = turn_dot(d, w1, w2, mn_vec3_dot(w2, mn_vec3_sub(P, r1)), t1);
    mn_vec3 g6 = mn_mat3_mulv(&g.R, w6);
    mn_vec3 p4 = mn_vec3_add(r4, mn_vec3_perpendicular(w4));
    int count = 0;
    for (int i1 = 0; i1 < n1; i1++) {
        if (!fits(cf, 0, t1[i1].t)) continue;
        mn_vec3 n2 = turn(w1, t1[i1], w2); /* the parallel axes' direction after joint 1 */
        angle t5[2];
        int n5 = turn_dot(w2, w5, w6, mn_vec3_dot(n2, g6), t5);
        mn_xform E1 = hinge_exp_cs(cf->w[0], cf->r[0], t1[i1].c, t1[i1].s);
        mn_xform E1i = mn_xform_inverse(&E1);
        mn_xform G1 = mn_xform_mul(&E1i, &g);
        for (int i5 = 0; i5 < n5; i5++) {
            if (!fits(cf, 4, t5[i5].t)) continue;
            angle m5 = {-t5[i5].t, t5[i5].c, -t5[i5].s};
            mn_vec3 v = turn(w5, m5, w2);        /* R5^T w2 */
            mn_vec3 u = mn_mat3_tmulv(&g.R, n2); /* g^T R1 w2 */
            angle t6 = sub1(w6, mn_v3(0, 0, 0), u, v);
            mn_vec3 vp = mn_vec3_sub(v, mn_vec3_scale(w6, mn_vec3_dot(w6, v)));
            if (mn_vec3_norm(vp) < 1e-9) t6 = (angle){qlast, cos(qlast), sin(qlast)};
            if (!fits(cf, 5, t6.t)) continue;
            mn_xform E5 = hinge_exp_cs(cf->w[4], cf->r[4], t5[i5].c, t5[i5].s);
            mn_xform E6 = hinge_exp_cs(cf->w[5], cf->r[5], t6.c, t6.s);
            mn_xform E56 = mn_xform_mul(&E5, &E6);
            mn_xform E56i = mn_xform_inverse(&E56);
            mn_xform Q = mn_xform_mul(&G1, &E56i); /* e2 e3 e4 */
            mn_vec3 Qr4 = mn_xform_apply(&Q, r4);
            angle t3[2];
            int n3 = sub3(w3, r3, r4, r2, mn_vec3_dist(Qr4, r2), t3);
            for (int i3 = 0; i3 < n3 && count < MN_IK_CF_MAX; i3++) {
                if (!fits(cf, 2, t3[i3].t)) continue;
                mn_xform E3 = hinge_exp_cs(cf->w[2], cf->r[2], t3[i3].c, t3[i3].s);
                angle t2 = sub1(w2, r2, mn_xform_apply(&E3, r4), Qr4);
                if (!fits(cf, 1, t2.t)) continue;
                mn_xform E2 = hinge_exp_cs(cf->w[1], cf->r[1], t2.c, t2.s);
                mn_xform E23 = mn_xform_mul(&E2, &E3);
                mn_xform E23i = mn_xform_inverse(&E23);
                mn_xform E4 = mn_xform_mul(&E23i, &Q);
                angle t4 = sub1(w4, r4, p4, mn_xform_apply(&E4, p4));
                if (!fits(cf, 3, t4.t)) continue;
                double* out = q[count++];
                out[0] = wrap_pi(t1[i1].t), out[1] = wrap_pi(t2.t), out[2] = wrap_pi(t3[i3].t);
                out[3] = wrap_pi(t4.t), out[4] = wrap_pi(t5[i5].t), out[5] = wrap_pi(t6.t);
            }
        }
    }
    return count;
}

int mn_ik_cf_solve(const mn_ik_cf* cf, const mn_xform* T, double qfixed, double qlast,
                   double q[MN_IK_CF_MAX][7]) {
    if (cf->family == MN_IK_CF_NONE) return 0;
    if (cf->family == MN_IK_CF_UR6) return solve_ur(cf, T, qlast, q);
    const int f = cf->fixed, e = cf->elbow, a = cf->pair[0], b = cf->pair[1];
    const int w0 = cf->wrist[0], w1 = cf->wrist[1], w2 = cf->wrist[2];
    mn_xform Minv = mn_xform_inverse(&cf->M);
    mn_xform g = mn_xform_mul(T, &Minv);
    /* the known factors: before the shoulder (into g), or before (A) or after (B) the elbow */
    mn_xform A = mn_xform_identity(), B = mn_xform_identity();
    if (f >= 0) {
        mn_xform F = hinge_exp(cf->w[f], cf->r[f], qfixed);
        if (f < a) {
            mn_xform Fi = mn_xform_inverse(&F);
            g = mn_xform_mul(&Fi, &g);
        } else if (f < e) {
            A = F;
        } else {
            B = F;
        }
    }
    mn_vec3 S = v3(cf->S), W = v3(cf->W);
    mn_vec3 gW = mn_xform_apply(&g, W);
    mn_xform Ai = mn_xform_inverse(&A);
    angle te[2];
    int ne = sub3(v3(cf->w[e]), v3(cf->r[e]), mn_xform_apply(&B, W), mn_xform_apply(&Ai, S),
                  mn_vec3_dist(gW, S), te);
    int count = 0;
    mn_vec3 p3 = mn_vec3_add(W, v3(cf->w[w2]));                        /* on the last axis */
    mn_vec3 p4 = mn_vec3_add(W, mn_vec3_perpendicular(v3(cf->w[w2]))); /* off it */
    for (int ie = 0; ie < ne; ie++) {
        if (!fits(cf, e, te[ie].t)) continue;
        mn_xform E = hinge_exp_cs(cf->w[e], cf->r[e], te[ie].c, te[ie].s);
        mn_xform Y = mn_xform_mul(&A, &E);
        Y = mn_xform_mul(&Y, &B);
        angle ta[2], tb[2];
        int ns = sub2(v3(cf->w[a]), v3(cf->w[b]), S, mn_xform_apply(&Y, W), gW, ta, tb);
        for (int is = 0; is < ns; is++) {
            if (!fits(cf, a, ta[is].t) || !fits(cf, b, tb[is].t)) continue;
            mn_xform Ea = hinge_exp_cs(cf->w[a], cf->r[a], ta[is].c, ta[is].s);
            mn_xform Eb = hinge_exp_cs(cf->w[b], cf->r[b], tb[is].c, tb[is].s);
            mn_xform P = mn_xform_mul(&Ea, &Eb);
            P = mn_xform_mul(&P, &Y);
            mn_xform Pi = mn_xform_inverse(&P);
            mn_xform H = mn_xform_mul(&Pi, &g); /* what the wrist must do */
            angle t0[2], t1[2];
            int nw = sub2(v3(cf->w[w0]), v3(cf->w[w1]), W, p3, mn_xform_apply(&H, p3), t0, t1);
            for (int iw = 0; iw < nw && count < MN_IK_CF_MAX; iw++) {
                if (!fits(cf, w0, t0[iw].t) || !fits(cf, w1, t1[iw].t)) continue;
                /* K = (E0 E1)^-1 H, applied to p4: E1^-1 (E0^-1 (H p4)) */
                mn_xform E0 = hinge_exp_cs(cf->w[w0], cf->r[w0], t0[iw].c, t0[iw].s);
                mn_xform E1 = hinge_exp_cs(cf->w[w1], cf->r[w1], t1[iw].c, t1[iw].s);
                mn_xform K = mn_xform_mul(&E0, &E1);
                K = mn_xform_inverse(&K);
                K = mn_xform_mul(&K, &H);
                angle t2 = sub1(v3(cf->w[w2]), W, p4, mn_xform_apply(&K, p4));
                if (!fits(cf, w2, t2.t)) continue;
                double* out = q[count++];
                if (f >= 0) out[f] = qfixed;
                out[e] = wrap_pi(te[ie].t);
                out[a] = wrap_pi(ta[is].t);
                out[b] = wrap_pi(tb[is].t);
                out[w0] = wrap_pi(t0[iw].t);
                out[w1] = wrap_pi(t1[iw].t);
                out[w2] = wrap_pi(t2.t);
            }
        }
    }
    return count;
}

mn_xform mn_ik_cf_fk(const mn_ik_cf* cf, const double* q) {
    mn_xform X = mn_xform_identity();
    for (int k = 0; k < cf->n; k++) {
        mn_xform E = hinge_exp(cf->w[k], cf->r[k], q[k]);
        X = mn_xform_mul(&X, &E);
    }
    return mn_xform_mul(&X, &cf->M);
}
