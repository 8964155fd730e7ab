/* Pose an arm three ways: the analytic two-bone solver with a pole vector, then FABRIK
 * and CCD on the same target, and print where the elbow went.
 *
 *   example_ik_two_bone [X Y Z]
 */
#include <marionette/ik.h>
#include <marionette/model.h>

#include <stdio.h>
#include <stdlib.h>

static int add(mn_spec* s, const char* name, int parent, mn_joint_type type, mn_vec3 offset,
               mn_vec3 axis) {
    mn_joint_def j = mn_joint_default();
    j.name = name;
    j.parent = parent;
    j.type = type;
    j.offset = offset;
    j.axis = axis;
    mn_error err;
    int i = mn_spec_add_joint(s, &j, &err);
    if (i < 0) fprintf(stderr, "%s\n", err.message);
    return i;
}

int main(int argc, char** argv) {
    mn_vec3 target = mn_v3(0.35, 0.30, 0.20);
    if (argc == 4) target = mn_v3(atof(argv[1]), atof(argv[2]), atof(argv[3]));

    /* shoulder (ball), elbow (hinge bending one way only), hand: a 0.3 m + 0.28 m arm */
    mn_spec* s = mn_spec_create("arm");
    int sh = add(s, "shoulder", -1, MN_JOINT_BALL, mn_v3(0, 0, 0), mn_v3(1, 0, 0));
    int el = add(s, "elbow", sh, MN_JOINT_HINGE, mn_v3(0.30, 0, 0), mn_v3(0, 0, 1));
    add(s, "hand", el, MN_JOINT_FIXED, mn_v3(0.28, 0, 0), mn_v3(0, 0, 1));
    mn_joint_def* e = mn_spec_joint(s, el);
    e->limited = 1;
    e->range[0] = 0.0;
    e->range[1] = 2.6;
    mn_error err;
    mn_model* m = mn_model_compile(s, &err);
    mn_spec_destroy(s);
    if (!m) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    mn_data* d = mn_data_create(m, 0);

    mn_ik_problem p = mn_ik_problem_default();
    p.tip = mn_model_find_joint(m, "hand");
    p.target_pos = target;
    p.pole = mn_v3(0, -1, 0); /* elbow down */

    const mn_ik_method methods[3] = {MN_IK_ANALYTIC, MN_IK_FABRIK, MN_IK_CCD};
    for (int i = 0; i < 3; i++) {
        mn_data_reset(m, d);
        mn_ik_options o = mn_ik_default();
        o.method = methods[i];
        o.max_iters = 1000;
        mn_ik_result r;
        mn_status st = mn_ik_solve(m, d, &p, &o, &r);
        mn_vec3 elbow = d->xf[el].p;
        printf("%-8s %-11s iters=%-4d error=%.2e elbow at (%.3f, %.3f, %.3f) bend=%.3f rad\n",
               mn_ik_method_name(methods[i]), mn_status_name(st), r.iterations, r.pos_err, elbow.x,
               elbow.y, elbow.z, d->q[m->jnt_qadr[el]]);
        if (st != MN_OK) printf("         %s\n", r.message);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
    return 0;
}
