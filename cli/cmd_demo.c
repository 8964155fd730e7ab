/* marionette demo: the built-in default figure (the thesis stick figure), its skeleton, and
 * a short inverse-kinematics demonstration. What `make run` starts. */
#include <marionette/ik.h>

#include <string.h>

#include "cli.h"
#include "options.h"
#include "figure_print.h"

const char mn_cmd_demo_summary[] =
    "print the built-in stick figure and pull its hands and feet with IK";

static void usage(FILE* f) {
    fprintf(f, "usage: marionette demo [--method lm|dls|pinv|jt|ccd|fabrik|analytic|altjac]\n"
               "\n"
               "Loads the built-in default figure (the stick figure of Welman 1993, Fig. 6.1),\n"
               "prints its skeleton, then moves the left hand, the right hand and the right foot\n"
               "to targets with the chosen IK method (default lm), printing each result.\n");
}

static int pull(const mn_model* m, mn_data* d, const char* base, const char* tip, mn_vec3 delta,
                mn_ik_method method) {
    int b = mn_model_find_joint(m, base), t = mn_model_find_joint(m, tip);
    if (b < 0 || t < 0) {
        fprintf(stderr, "marionette demo: the default figure has no joint '%s'\n",
                b < 0 ? base : tip);
        return 0;
    }
    mn_ik_problem p = mn_ik_problem_default();
    p.base = b;
    p.tip = t;
    /* the target: the tip's current position moved by delta, in the base frame */
    mn_vec3 world = mn_vec3_add(d->xf[t].p, delta);
    mn_xform inv = mn_xform_inverse(&d->xf[b]);
    p.target_pos = mn_xform_apply(&inv, world);
    mn_ik_options o = mn_ik_default();
    o.method = method;
    o.tol_pos = 1e-4;
    mn_ik_result r;
    mn_vec3 before = d->xf[t].p;
    mn_ik_solve(m, d, &p, &o, &r);
    mn_vec3 after = d->xf[t].p;
    printf("  pull %-11s (chain from %s) by (%+.2f %+.2f %+.2f): %s, %d iterations, %.1f us\n", tip,
           base, delta.x, delta.y, delta.z, mn_status_name(r.status), r.iterations, r.time_us);
    printf("      from (%.3f %.3f %.3f) to (%.3f %.3f %.3f), target missed by %.2g\n", before.x,
           before.y, before.z, after.x, after.y, after.z, r.pos_err);
    return r.status == MN_OK || r.status == MN_ERR_UNREACHABLE;
}

static int parse_method(const char* v, void* dest) {
    int k = mn_ik_method_parse(v);
    if (k >= 0) *(mn_ik_method*)dest = (mn_ik_method)k;
    return k >= 0;
}

/* The only option is the method: the args "struct" is the mn_ik_method itself. */
static const mn_cli_opt demo_opts[] = {
    {"--method", MN_CLI_CALL, 0, .bad = "unknown method '%s'", .parse = parse_method},
};
const mn_cli_table mn_cmd_demo_options = {
    .cmd = "demo",
    MN_CLI_OPTS(demo_opts),
    .unknown = "unknown argument '%s'",
    .missing = "unknown argument '%s'",
    .dash_option = 1,
};

int mn_cmd_demo(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    mn_ik_method method = MN_IK_LM;
    int bad = mn_cli_parse(&mn_cmd_demo_options, argc, argv, &method, NULL, NULL);
    if (bad) return bad;
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    if (!m) return mn_cli_input_error(&err);
    mn_data* d = mn_data_create(m, 0);
    printf("marionette: the built-in default figure\n");
    mn_cli_print_summary(stdout, m);
    {
        int nball = 0, nfree = 0;
        for (int j = 0; j < m->njoint; j++) {
            nball += m->jnt_type[j] == MN_JOINT_BALL;
            nfree += m->jnt_type[j] == MN_JOINT_FREE;
        }
        printf("  A joint that turns several ways (a shoulder, a hip, the lumbar spine) is, as in\n"
               "  the thesis, hinges at one place: 'torso.1' and 'torso.2' are the first two\n"
               "  hinges of the spine 'torso', the frames between them. %d DOF: the degrees of\n"
               "  freedom, one per hinge plus 6 for the root 'pelvis' (it moves and turns);\n"
               "  state size %d: the numbers that hold a pose, one more per turning root or ball\n"
               "  joint (%d here), whose rotation is stored as a unit quaternion (4 numbers for\n"
               "  3 DOF).\n",
               m->nv, m->nq, nball + nfree);
    }
    mn_cli_print_tree(stdout, m);
    mn_fk(m, d);
    printf("\nrest pose (world positions, metres):\n");
    for (int j = 0; j < m->njoint; j++)
        if (m->jnt_object[j] || m->jnt_nchild[j] == 0)
            printf("  %-12s %7.3f %7.3f %7.3f\n", m->jnt_name[j], d->xf[j].p.x, d->xf[j].p.y,
                   d->xf[j].p.z);
    printf("\ninverse kinematics with %s:\n", mn_ik_method_name(method));
    int ok = pull(m, d, "torso", "left hand", mn_v3(0.15, 0.35, 0.2), method);
    ok &= pull(m, d, "torso", "right hand", mn_v3(-0.1, 0.5, 0.1), method);
    ok &= pull(m, d, "pelvis", "right foot", mn_v3(0.0, 0.25, 0.3), method);
    mn_data_destroy(d);
    mn_model_destroy(m);
    printf("\nnext: marionette --help, or marionette info/fk/convert/solve on your own figures\n");
    return ok ? MN_EXIT_OK : MN_EXIT_INPUT;
}
