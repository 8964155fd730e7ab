/* The built-in stick figure (Welman Fig. 6.1) and the skeleton text format.
 *
 *   example_stickman [out.skel]
 *
 * Loads the stickman, raises its right arm forwards and bends its torso, prints where
 * the eleven thesis joints are, and writes the figure as skeleton text when given a path
 * (read it back with mn_skel_read: the same model). */
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>

static const char* names[] = {"pelvis",     "torso",    "head",      "right arm",
                              "right hand", "left arm", "left hand", "right leg",
                              "right foot", "left leg", "left foot"};

int main(int argc, char** argv) {
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    if (!m) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    printf("%s: %d joint frames, %d DOF, %.1f kg\n", m->name, m->njoint, m->nv, m->total_mass);
    mn_data* d = mn_data_create(m, 0);
    /* "right arm.2" is the shoulder's flexion hinge (x): negative raises the arm forwards */
    d->q[m->jnt_qadr[mn_model_find_joint(m, "right arm.2")]] = -90 * MN_PI / 180;
    d->q[m->jnt_qadr[mn_model_find_joint(m, "torso.2")]] = 20 * MN_PI / 180;
    mn_fk(m, d);
    for (int i = 0; i < 11; i++) {
        mn_vec3 p = d->xf[mn_model_find_joint(m, names[i])].p;
        printf("  %-11s (%6.3f %6.3f %6.3f)\n", names[i], p.x, p.y, p.z);
    }
    double mass;
    mn_vec3 c = mn_com(m, d, -1, &mass);
    printf("centre of mass (%.3f %.3f %.3f)\n", c.x, c.y, c.z);
    int rc = 0;
    if (argc > 1) {
        if (mn_skel_write(argv[1], m, &err) != MN_OK) {
            fprintf(stderr, "%s\n", err.message);
            rc = 1;
        } else {
            printf("wrote %s\n", argv[1]);
        }
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
    return rc;
}
