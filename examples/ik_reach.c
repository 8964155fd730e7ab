/* Reach a target with the built-in stick figure's left arm, with every IK method.
 *
 *   example_ik_reach [x y z]     (target in the torso frame, metres)
 */
#include <marionette/ik.h>
#include <marionette/io.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    if (!m) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    mn_ik_problem p = mn_ik_problem_default();
    p.base = mn_model_find_joint(m, "torso");
    p.tip = mn_model_find_joint(m, "left hand");
    p.target_pos =
        argc == 4 ? mn_v3(atof(argv[1]), atof(argv[2]), atof(argv[3])) : mn_v3(0.35, 0.3, 0.25);
    for (int method = 0; method < MN_IK_METHOD_COUNT; method++) {
        mn_data* d = mn_data_create(m, 0); /* every method starts from the rest pose */
        mn_ik_options o = mn_ik_default();
        o.method = (mn_ik_method)method;
        o.tol_pos = 1e-5;
        mn_ik_result r;
        mn_ik_solve(m, d, &p, &o, &r);
        printf("%-9s %-11s error %.2e after %4d iterations, %8.1f us %s\n",
               mn_ik_method_name(o.method), mn_status_name(r.status), r.pos_err, r.iterations,
               r.time_us, r.message);
        mn_data_destroy(d);
    }
    mn_model_destroy(m);
    return 0;
}
