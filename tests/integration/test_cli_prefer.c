/* `marionette solve --prefer JOINT=VALUE[@WEIGHT]`: per-joint desired values of the
 * null-space term (Parent eq. 5.25-5.28) from the command line. The Panda's third joint,
 * which the position goal leaves free, ends on the side it is asked for while the goal is
 * met; bad values are errors naming the option. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define PANDA MN_DATA "/robots/franka_panda/panda.urdf"
#define SOLVE                                                                                      \
    "solve '" PANDA "' --base panda_link0 --tip panda_link8 --target 0.4,0.1,0.5 "                 \
    "--method pinv --max-iters 500 --seed-q 0,0,0,-1.5,0,1.5,0 --timeout-ms 0"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

/* The third value of the printed "q" line. */
static double third_q(const char* out) {
    const char* q = out ? strstr(out, "\nq ") : NULL;
    double v[3] = {0, 0, 0};
    if (!q || sscanf(q + 3, "%lf,%lf,%lf", &v[0], &v[1], &v[2]) != 3) return NAN;
    return v[2];
}

static void test_prefer(void) {
    char *out, *err;
    CHECK(run_cli(SOLVE, &out, &err) == 0 && strstr(out, "status OK"));
    double plain = third_q(out);
    free(out), free(err);
    CHECK(run_cli(SOLVE " --prefer panda_joint3=0.8@5", &out, &err) == 0 &&
          strstr(out, "status OK"));
    double up = third_q(out);
    free(out), free(err);
    CHECK(run_cli(SOLVE " --prefer panda_joint3=-0.8@5", &out, &err) == 0 &&
          strstr(out, "status OK"));
    double down = third_q(out);
    free(out), free(err);
    CHECK(up > plain + 0.3 && up > 0.4);
    CHECK(down < plain - 0.3 && down < -0.4);
    if (!(up > 0.4 && down < -0.4))
        fprintf(stderr, "  joint 3: plain %g, +0.8: %g, -0.8: %g\n", plain, up, down);
    /* bad values */
    CHECK(run_cli(SOLVE " --prefer panda_jont3=1", &out, &err) == 1 && strstr(err, "--prefer") &&
          strstr(err, "panda_joint3"));
    free(out), free(err);
    CHECK(run_cli(SOLVE " --prefer panda_joint3=1@-2", &out, &err) == 1 && strstr(err, "WEIGHT"));
    free(out), free(err);
    CHECK(run_cli(SOLVE " --prefer panda_joint3", &out, &err) == 1 && strstr(err, "JOINT=VALUE"));
    free(out), free(err);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_prefer);
    return mn_test_report();
}
