/* The toy figure shared by the sequence and layer tests (test_sequence.c, test_layers.c):
 * one joint of each kind with state (free, ball, hinge, slide). */
#ifndef MN_ANIM_TOY_MODEL_H
#define MN_ANIM_TOY_MODEL_H

#include <marionette/model.h>

/* A free root, a ball, a hinge and a slide. */
static mn_model* toy(void) {
    mn_spec* s = mn_spec_create("toy");
    mn_joint_def d = mn_joint_default();
    d.name = "root";
    d.type = MN_JOINT_FREE;
    mn_spec_add_joint(s, &d, NULL);
    d = mn_joint_default();
    d.name = "ball";
    d.parent = 0;
    d.type = MN_JOINT_BALL;
    d.offset = mn_v3(0, 1, 0);
    mn_spec_add_joint(s, &d, NULL);
    d = mn_joint_default();
    d.name = "hinge";
    d.parent = 1;
    d.type = MN_JOINT_HINGE;
    d.offset = mn_v3(0, 0.5, 0);
    d.axis = mn_v3(1, 0, 0);
    mn_spec_add_joint(s, &d, NULL);
    d = mn_joint_default();
    d.name = "slide";
    d.parent = 2;
    d.type = MN_JOINT_SLIDE;
    d.offset = mn_v3(0, 0.5, 0);
    d.axis = mn_v3(0, 1, 0);
    mn_spec_add_joint(s, &d, NULL);
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

#endif
