/* Closed-form inverse kinematics of the arm families that have one, found from a chain's
 * geometry (src/ik/closed_form.c). LM (lm.c) takes such an answer as its start: a pose goal
 * on a chain of such a family is met at once, verified by the chain's forward kinematics,
 * and the numeric iteration remains the way when it is not.
 *
 * The chain is written as a product of exponentials (Brockett 1984; Murray, Li and Sastry
 * 1994, "A Mathematical Introduction to Robotic Manipulation", sec. 3.2): the tip frame at
 * q is exp(xi_0 q_0) ... exp(xi_{n-1} q_{n-1}) M, each xi_k the hinge's axis w_k through
 * the point r_k at q = 0 and M the tip frame at q = 0, all in the base frame. A family is
 * solved by Paden-Kahan subproblems (Murray, Li and Sastry sec. 3.3.2). */
#ifndef MN_IK_CLOSED_FORM_H
#define MN_IK_CLOSED_FORM_H

#include "ik/ik_common.h"

enum {
    MN_IK_CF_NONE = 0,
    /* six hinges: the first two axes meet (the shoulder point S), the last three meet (the
     * wrist centre W: a spherical wrist), the third (the elbow) passes through neither
     * (Pieper 1968: a 6R arm with three concurrent axes has a closed form; the elbow's
     * angle is the one that sets |W - S|) */
    MN_IK_CF_WRIST6,
    /* seven hinges of which one, `fixed`, takes a given value and the other six are a
     * WRIST6 arm: an S-R-S arm such as the LBR iiwa (shoulder axes 1-3 concurrent, wrist
     * axes 5-7 concurrent), the redundancy parameterised by joint 3 instead of the arm
     * angle of Shimizu et al. 2008 ("Analytical inverse kinematic computation for 7-DOF
     * redundant manipulators with joint limits") */
    MN_IK_CF_SRS7,
    /* six hinges, the second, third and fourth parallel (a planar 3R arm turned by the
     * first), the fifth and sixth meeting: the Universal Robots family, whose wrist is not
     * spherical (Hawkins 2013, "Analytic inverse kinematics for the Universal Robots UR-5/
     * UR-10 arms"), here in the same subproblems */
    MN_IK_CF_UR6
};

#define MN_IK_CF_MAX 8 /* answers of one solve: 2 elbows x 2 shoulders x 2 wrists */

typedef struct mn_ik_cf {
    int family;              /* MN_IK_CF_* */
    int n;                   /* DOFs of the chain: 6 or 7 */
    int fixed;               /* the DOF given, not solved (SRS7); -1 for none */
    int pair[2];             /* the shoulder's two DOFs, meeting at S */
    int elbow;               /* the elbow's DOF */
    int wrist[3];            /* the wrist's three DOFs, meeting at W */
    double w[7][3], r[7][3]; /* each DOF's unit axis and a point on it at q = 0, base frame */
    double S[3], W[3];       /* WRIST6, SRS7: the shoulder and wrist points; UR6: W where the
                                last two axes meet */
    mn_xform M;              /* the tip frame at q = 0 */
    /* per DOF limits, NULL for none (set by the caller after mn_ik_cf_detect): a branch of
     * the solve with an angle no turn of which is within them is dropped at once */
    const double *lo, *hi;
} mn_ik_cf;

/* The family of chain c (a chain of hinges only, nothing held), its geometry in cf; returns
 * cf->family (MN_IK_CF_NONE for none). Axes that meet within 1e-7 of the chain's reach
 * count as meeting: the answer is verified by the caller. axis and origin (may be NULL):
 * the chain's axes and origins at any pose (mn_ikc_fk_axes), which settle a chain of no
 * family without a walk of its own. */
int mn_ik_cf_detect(const mn_ikc* c, const double* axis, const double* origin, mn_ik_cf* cf);

/* The answers for the tip frame T (base frame; the frame itself, not an effector point):
 * writes up to MN_IK_CF_MAX joint vectors of cf->n angles in (-pi, pi] (the fixed DOF is
 * qfixed) and returns how many. Each answer is exact when T is reachable and the pose not
 * singular; answers are not checked against limits or by FK here. qlast is the last
 * joint's angle where the pose leaves it free (UR6 with the last two axes aligned). */
int mn_ik_cf_solve(const mn_ik_cf* cf, const mn_xform* T, double qfixed, double qlast,
                   double q[MN_IK_CF_MAX][7]);

/* The tip frame of cf's product of exponentials at q (n angles), for the tests. */
mn_xform mn_ik_cf_fk(const mn_ik_cf* cf, const double* q);

#endif
