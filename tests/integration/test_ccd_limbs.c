/* The CCD penalty method (Welman 5.4) on the stick figure, whose legs are limited hinges
 * (hip three, knee, ankle two): both feet held in position and orientation where they stand,
 * the pelvis lowered 15 cm and brought back over 30 frames, one solve a frame at the default
 * sweep budget. The limb step of src/constrain/ccd.c (each leg solved as a block for its
 * foot, the joints above leaving the feet to it) meets every frame within 1e-5 m in a few
 * sweeps; coordinate descent one hinge at a time converged linearly there (a frame took 20
 * sweeps and more). And the crouch bake of docs/examples (feet locked, a hand on a keyed
 * path, an ankle at its limit on some frames) with `--solver ccd` at the default settings:
 * every frame met. */
#include <marionette/constrain.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static int handle(mn_csys* s, mn_handle_type type, int joint) {
    mn_handle_def h = mn_handle_default();
    h.type = type;
    h.joint = joint;
    int i = mn_csys_add_handle(s, &h, NULL);
    CHECK(i >= 0);
    return i;
}

static void test_stickman_feet(void) {
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    CHECK(m != NULL);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    mn_fk(m, d);
    mn_figure fig = {m, d};
    mn_csys* s = mn_csys_create(&fig, 1, NULL, NULL);
    const char* feet[2] = {"left foot", "right foot"};
    for (int i = 0; i < 2; i++) {
        int j = mn_model_find_joint(m, feet[i]);
        CHECK(j >= 0);
        mn_constraint_def c = mn_constraint_default();
        c.handle = handle(s, MN_HANDLE_POINT, j);
        c.target = d->xf[j].p;
        CHECK(mn_csys_add_constraint(s, &c, NULL) >= 0);
        c = mn_constraint_default();
        c.type = MN_CON_ORIENT;
        c.handle = handle(s, MN_HANDLE_ORIENT, j);
        c.target_rot = mn_quat_from_mat3(&d->xf[j].R);
        CHECK(mn_csys_add_constraint(s, &c, NULL) >= 0);
    }
    int pelvis = mn_model_find_joint(m, "pelvis");
    CHECK(pelvis >= 0 && m->jnt_type[pelvis] == MN_JOINT_FREE);
    double y0 = d->q[m->jnt_qadr[pelvis] + 1];
    mn_csolve_options o = mn_csolve_default();
    o.method = MN_CSOLVE_CCD;
    o.tol = o.tol_rot = 1e-5;
    int unmet = 0, sweeps = 0;
    double worst = 0;
    for (int f = 1; f <= 30; f++) {
        double u = f / 30.0, down = 0.15 * (u <= 0.5 ? 2 * u : 2 * (1 - u));
        d->q[m->jnt_qadr[pelvis] + 1] = y0 - down; /* the pelvis keyed lower */
        mn_csys_invalidate(s);
        mn_csolve_result r;
        unmet += mn_csys_solve(s, &o, &r) != MN_OK;
        sweeps += r.iterations;
        worst = fmax(worst, fmax(r.max_violation, r.max_rot_violation));
    }
    if (getenv("MN_TEST_VERBOSE") || unmet || sweeps > 30 * 5)
        fprintf(stderr, "  ccd stick figure: %d frames unmet, %d sweeps, worst %g\n", unmet, sweeps,
                worst);
    CHECK(unmet == 0);
    CHECK(worst <= 1e-5);
    CHECK(sweeps <= 30 * 5); /* a few sweeps a frame */
    CHECK(mn_q_within_limits(m, d->q, 1e-9));
    mn_csys_destroy(s);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_crouch_bake(void) {
    char out_path[600], args[1400], *out = NULL, *err = NULL;
    snprintf(out_path, sizeof out_path, "%s/crouch_ccd.bvh", mn_test_temp_dir());
    snprintf(args, sizeof args,
             "anim bake '" MN_SOURCE "/docs/examples/crouch_sequence.json' --out '%s' --solver ccd",
             out_path);
    int rc = mn_test_run_program(MN_CLI, args, &out, &err);
    const char* u = out ? strstr(out, "unmet_frames=") : NULL;
    const char* v = out ? strstr(out, "max_violation=") : NULL;
    if (rc != 0 || !u || atoi(u + 13) != 0)
        fprintf(stderr, "  %s%s", out ? out : "", err ? err : "");
    CHECK(rc == 0);
    CHECK(u && atoi(u + 13) == 0);
    CHECK(v && atof(v + 14) <= 1e-5);
    free(out), free(err);
    remove(out_path);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_stickman_feet);
    RUN(test_crouch_bake);
    return mn_test_report();
}
