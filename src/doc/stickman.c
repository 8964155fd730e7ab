/* The built-in default figure: the stick figure of Welman (1993), Fig. 6.1, in the same
 * skeleton text format, with its hierarchy and joint names exactly as in the figure.
 *
 * Proportions follow adult anthropometry (segment lengths after Winter's fractions of
 * height for a 1.75 m figure; segment masses after de Leva's table, 70 kg in all, with
 * the thesis's "arm" and "leg" segments split at an elbow and a knee, which the thesis
 * figure leaves out but posing with IK needs: without them a hand or a foot can only move
 * on a sphere). y is up, the figure faces +z, its left side is +x. Joints that have several
 * degrees of freedom in a human (lumbar spine, neck, shoulders, wrists, hips, ankles) are
 * compound joints: series of limited hinges at one place (Welman 6.1.1), which IK solvers
 * and BVH export both handle. The left limbs are the `mirror` images of the right ones,
 * as in the figure. The knees rest slightly bent (hip -3, knee 6, ankle -3 degrees, the
 * foot flat) and the elbows 10 degrees: from a dead-straight limb no solver can shorten it,
 * since bending a straight knee moves the hip only to second order (the singular case of
 * Welman Fig. 4.2). The root has stiffness 10 (Welman 4.1.4): turning or moving the whole
 * figure costs more than bending a limb, as a standing person would have it. */
#include <marionette/io.h>

#include <string.h>

static const char stickman_text[] =
    "# The stick figure of Welman (1993), Fig. 6.1: marionette's default figure.\n"
    "# y up, facing +z, the figure's left side on +x. Metres, degrees, kilograms.\n"
    "# About 1.75 m tall and 70 kg; the 11 thesis joints plus elbows and knees,\n"
    "# 31 joint frames, 36 DOFs.\n"
    "# A compound joint \"j\" of n DOF lines is the frames \"j.1\" ... \"j.(n-1)\", \"j\".\n"
    "define skeleton \"stickman\"\n"
    "  joint \"pelvis\"\n"
    "  group \"Upper body\"\n"
    "    joint \"torso\"\n"
    "    group \"Right arm\"\n"
    "      joint \"right arm\"\n"
    "      joint \"right elbow\"\n"
    "      joint \"right hand\"\n"
    "    end group\n"
    "    group \"Left arm\"\n"
    "      joint \"left arm\"\n"
    "      joint \"left elbow\"\n"
    "      joint \"left hand\"\n"
    "    end group\n"
    "    joint \"head\"          # \"head\" is a child of \"torso\"\n"
    "  end group\n"
    "  group \"Right leg\"\n"
    "    joint \"right leg\"\n"
    "    joint \"right knee\"\n"
    "    joint \"right foot\"\n"
    "  end group\n"
    "  group \"Left leg\"\n"
    "    joint \"left leg\"\n"
    "    joint \"left knee\"\n"
    "    joint \"left foot\"\n"
    "  end group\n"
    "end skeleton\n"
    "\n"
    "define joint \"pelvis\"       # the root: translation and rotation of the whole figure\n"
    "  offset 0 0.95 0\n"
    "  free\n"
    "  stiffness 10             # turning the whole figure costs more than bending a limb\n"
    "  mass 8\n"
    "  com 0 0.02 0\n"
    "end joint\n"
    "\n"
    "define joint \"torso\"        # lumbar spine: side bend, flexion, twist\n"
    "  offset 0 0.10 0\n"
    "  hinge z -35 35\n"
    "  hinge x -30 90           # + bends forwards\n"
    "  hinge y -45 45\n"
    "  mass 23.5\n"
    "  com 0 0.22 0\n"
    "end joint\n"
    "\n"
    "define joint \"head\"         # neck: side bend, nod, turn\n"
    "  offset 0 0.45 0\n"
    "  hinge z -40 40\n"
    "  hinge x -50 60           # + nods forwards\n"
    "  hinge y -70 70\n"
    "  mass 5.5\n"
    "  com 0 0.13 0.02\n"
    "end joint\n"
    "\n"
    "define joint \"right arm\"    # shoulder: abduction, flexion, rotation; the arm hangs down\n"
    "  offset -0.19 0.40 0\n"
    "  hinge z -170 30          # - raises the arm sideways\n"
    "  hinge x -180 60          # - raises the arm forwards\n"
    "  hinge y -90 90           # rotation about the arm\n"
    "  mass 1.9\n"
    "  com 0 -0.14 0\n"
    "  mirror \"left arm\"\n"
    "end joint\n"
    "\n"
    "define joint \"right elbow\"  # elbow: flexion (the forearm swings forwards)\n"
    "  offset 0 -0.30 0\n"
    "  hinge x -150 0 rest -10  # - bends the elbow; slightly bent at rest\n"
    "  mass 1.1\n"
    "  com 0 -0.12 0\n"
    "  mirror \"left elbow\"\n"
    "end joint\n"
    "\n"
    "define joint \"right hand\"   # wrist: flexion, deviation\n"
    "  offset 0 -0.27 0\n"
    "  hinge x -80 70           # - turns the palm forwards\n"
    "  hinge z -20 35\n"
    "  mass 0.5\n"
    "  com 0 -0.08 0\n"
    "  mirror \"left hand\"\n"
    "end joint\n"
    "\n"
    "define joint \"right leg\"    # hip: abduction, flexion, rotation; the leg hangs down\n"
    "  offset -0.09 -0.05 0\n"
    "  hinge z -45 30           # - spreads the leg sideways\n"
    "  hinge x -120 30 rest -3  # - raises the leg forwards\n"
    "  hinge y -45 45\n"
    "  mass 9\n"
    "  com 0 -0.19 0\n"
    "  mirror \"left leg\"\n"
    "end joint\n"
    "\n"
    "define joint \"right knee\"   # knee: flexion (the shank swings backwards)\n"
    "  offset 0 -0.43 0\n"
    "  hinge x 0 150 rest 6     # + bends the knee; slightly bent at rest\n"
    "  mass 3\n"
    "  com 0 -0.17 0\n"
    "  mirror \"left knee\"\n"
    "end joint\n"
    "\n"
    "define joint \"right foot\"   # ankle: flexion, inversion\n"
    "  offset 0 -0.40 0\n"
    "  hinge x -35 50 rest -3   # + points the toes down; - up to 35 degrees in a squat\n"
    "  hinge z -25 35\n"
    "  mass 1\n"
    "  com 0 -0.04 0.06\n"
    "  mirror \"left foot\"\n"
    "end joint\n";

const char* mn_stickman_text(void) {
    return stickman_text;
}

mn_model* mn_stickman_model(mn_error* err) {
    mn_model* m = NULL;
    if (mn_skel_read_mem(stickman_text, sizeof stickman_text - 1, "stickman", &m, NULL, err) !=
        MN_OK)
        return NULL;
    return m;
}
