/* Keyframes whose in-betweens keep their constraints (Welman 6.1.2, 6.3, Fig. 6.5): the
 * built-in stick figure goes from standing to a rough crouch over 30 frames with both feet
 * locked; each frame is interpolated (squad) and then re-satisfied with the Lagrange
 * solver. Prints how far the left foot strays in the plain and the constrained in-betweens.
 *
 *   example_anim_inbetween
 */
#include <marionette/anim.h>
#include <marionette/io.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    if (!m) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    mn_seq_def def = mn_seq_def_default();
    def.rot = MN_INTERP_SQUAD;
    def.trans = MN_INTERP_CATMULL_ROM;
    mn_seq* s = mn_seq_create(m, &def, &err);
    /* key 0: the rest pose; key 30: pelvis 20 cm lower, hips, knees and ankles bent */
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
    mn_seq_set_key(s, 0, q, NULL);
    q[1] = -0.2;
    const char* names[] = {"right leg.2", "left leg.2",   "right knee",
                           "left knee",   "right foot.1", "left foot.1"};
    const double values[] = {-0.9, -0.9, 1.4, 1.4, -0.45, -0.45};
    for (int i = 0; i < 6; i++)
        q[m->jnt_qadr[mn_model_find_joint(m, names[i])]] = values[i];
    mn_seq_set_key(s, 30, q, NULL);
    /* both feet locked where they stand at frame 0, in position and orientation */
    const char* feet[2] = {"left foot", "right foot"};
    for (int i = 0; i < 2; i++) {
        mn_handle_def h = mn_handle_default();
        h.joint = mn_model_find_joint(m, feet[i]);
        mn_seq_constraint_def c = mn_seq_constraint_default();
        c.con.handle = mn_seq_add_handle(s, &h, NULL);
        c.lock = 1;
        mn_seq_add_constraint(s, &c, NULL);
        h.type = MN_HANDLE_ORIENT;
        c.con.type = MN_CON_ORIENT;
        c.con.handle = mn_seq_add_handle(s, &h, NULL);
        mn_seq_add_constraint(s, &c, NULL);
    }
    mn_data* d = mn_data_create(m, 0);
    mn_seq_solver* v = mn_seq_solver_create(s, d, &err);
    if (!v) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    int foot = mn_model_find_joint(m, "left foot");
    mn_data* plain = mn_data_create(m, 0);
    mn_seq_sample_data(s, plain, 0);
    mn_vec3 at = plain->xf[foot].p;
    mn_seq_solve_options o = mn_seq_solve_options_default();
    printf("frame  plain_foot_m  constrained_foot_m  iterations\n");
    for (int f = 0; f <= 30; f += 5) {
        mn_csolve_result r;
        mn_seq_solve_frame(v, f, &o, &r);
        mn_seq_sample_data(s, plain, f);
        printf("%5d  %12.4f  %18.2e  %10d\n", f, mn_vec3_dist(plain->xf[foot].p, at),
               mn_vec3_dist(d->xf[foot].p, at), r.iterations);
    }
    mn_seq_solver_destroy(v);
    mn_data_destroy(plain);
    mn_data_destroy(d);
    mn_seq_destroy(s);
    free(q);
    mn_model_destroy(m);
    return 0;
}
