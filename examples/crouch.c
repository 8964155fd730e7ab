/* Whole-figure posing with constraints: the built-in stick figure crouches with both feet
 * pinned (position and orientation) and the pelvis kept level while the pelvis is dragged
 * 12 cm down, frame by frame, with the Lagrange-multiplier solver (Welman 5.2).
 *
 *   example_crouch [lagrange|ccd|dls]
 */
#include <marionette/constrain.h>
#include <marionette/io.h>

#include <stdio.h>

int main(int argc, char** argv) {
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    if (!m) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    mn_data* d = mn_data_create(m, 0);
    mn_figure fig = {m, d};
    mn_csys* sys = mn_csys_create(&fig, 1, NULL, &err);
    if (!sys) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    /* Handles: each foot (its position and its frame) and the pelvis. */
    const char* feet[2] = {"left foot", "right foot"};
    for (int i = 0; i < 2; i++) {
        mn_handle_def h = mn_handle_default();
        h.joint = mn_model_find_joint(m, feet[i]);
        h.name = feet[i];
        int hp = mn_csys_add_handle(sys, &h, &err);
        h.type = MN_HANDLE_ORIENT;
        h.name = NULL; /* handle names are unique */
        int ho = mn_csys_add_handle(sys, &h, &err);
        if (hp < 0 || ho < 0) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        mn_vec3 at;
        mn_mat3 R;
        mn_csys_handle_value(sys, ho, &at, &R);
        mn_constraint_def pin = mn_constraint_default();
        pin.handle = hp;
        pin.target = d->xf[h.joint].p; /* where the foot stands */
        mn_constraint_def flat = mn_constraint_default();
        flat.type = MN_CON_ORIENT;
        flat.handle = ho;
        flat.target_rot = mn_quat_from_mat3(&R);
        if (mn_csys_add_constraint(sys, &pin, &err) < 0 ||
            mn_csys_add_constraint(sys, &flat, &err) < 0) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
    }
    mn_handle_def hp = mn_handle_default();
    hp.joint = mn_model_find_joint(m, "pelvis");
    int pelvis = mn_csys_add_handle(sys, &hp, &err);
    mn_vec3 start = d->xf[hp.joint].p;
    hp.type = MN_HANDLE_ORIENT;
    mn_constraint_def level = mn_constraint_default();
    level.type = MN_CON_ORIENT;
    level.handle = mn_csys_add_handle(sys, &hp, &err);
    level.target_rot = mn_quat_identity(); /* the pelvis frame stays as at rest */
    if (pelvis < 0 || mn_csys_add_constraint(sys, &level, &err) < 0) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }

    mn_csolve_options o = mn_csolve_default();
    if (argc > 1 && mn_csolver_parse(argv[1]) >= 0)
        o.method = (mn_csolver)mn_csolver_parse(argv[1]);
    for (int frame = 0; frame <= 10; frame++) {
        mn_vec3 target = mn_vec3_add(start, mn_v3(0, -0.012 * frame, 0));
        mn_csys_drag(sys, pelvis, target, 1.0, 1);
        mn_csolve_result r;
        mn_csys_solve(sys, &o, &r);
        int knee = mn_model_find_joint(m, "left knee");
        printf("frame %2d: pelvis at y=%.3f (target %.3f), feet off by %.1e m, left knee %.0f deg, "
               "%s\n",
               frame, d->xf[hp.joint].p.y, target.y, r.max_violation,
               d->q[m->jnt_qadr[knee]] * 180 / MN_PI, mn_status_name(r.status));
    }
    mn_csys_destroy(sys);
    mn_data_destroy(d);
    mn_model_destroy(m);
    return 0;
}
