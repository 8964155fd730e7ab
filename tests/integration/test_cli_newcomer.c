/* The command line as a new user meets it: fk --json with orientations and every frame,
 * sim making its output folder, a malformed --target as a usage error (exit 2), the demo
 * explaining its listing, fk's world frames as solve's targets (--world). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

static void test_fk_json_orientations(void) {
    char *out, *err;
    CHECK(run_cli("fk stickman --json", &out, &err) == 0);
    /* the rest pose: every frame unrotated, positions in full precision, in the shortest
     * form that reads back to the same double */
    CHECK(out && strstr(out, "{\"name\":\"pelvis\",\"position\":[0,0.95,0],"
                             "\"orientation\":[1,0,0,0]}"));
    free(out), free(err);
    /* a turned joint: the UR5's upper arm is turned 90 degrees about y at rest */
    CHECK(run_cli("fk '" MN_DATA "/robots/ur5/ur5_robot.urdf' --json", &out, &err) == 0);
    const char* p = out ? strstr(out, "\"name\":\"upper_arm_link\"") : NULL;
    const char* o = p ? strstr(p, "\"orientation\":[") : NULL;
    double w = 0, x = 0, y = 0, z = 0;
    CHECK(o && sscanf(o, "\"orientation\":[%lf,%lf,%lf,%lf]", &w, &x, &y, &z) == 4);
    CHECK(fabs(w - sqrt(0.5)) < 1e-9 && fabs(y - sqrt(0.5)) < 1e-9 && fabs(x) < 1e-9 &&
          fabs(z) < 1e-9);
    free(out), free(err);
    /* text: 9 significant digits */
    CHECK(run_cli("fk stickman", &out, &err) == 0);
    CHECK(out && strstr(out, "pelvis 0 0.95 0\n"));
    free(out), free(err);
    /* every frame of a take */
    CHECK(run_cli("fk '" MN_DATA
                  "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' --every-frame --json",
                  &out, &err) == 0);
    CHECK(out && strstr(out, "{\"frame\":343,\"time\":") && !strstr(out, "{\"frame\":344,"));
    free(out), free(err);
    CHECK(run_cli("fk stickman --every-frame --frame 2", &out, &err) == 2);
    free(out), free(err);
}

static void test_sim_makes_its_folder(void) {
    char dir[512], args[700], *out, *err;
    snprintf(dir, sizeof dir, "%s/sim-out", mn_test_temp_dir());
    snprintf(args, sizeof args, "sim --frames 2 --out '%s'", dir);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    char f[600];
    snprintf(f, sizeof f, "%s/tracks.json", dir);
    struct stat st;
    CHECK(stat(f, &st) == 0 && st.st_size > 0);
    CHECK(run_cli("sim --frames 2 --out /proc/nope/sim-out", &out, &err) == 1 && err &&
          strstr(err, "cannot create the output folder"));
    free(out), free(err);
}

static void test_malformed_target_is_usage(void) {
    char *out, *err;
    const char* bad[] = {"1,2", "1,2,x", "1,2,3,4", "1,2,3,0,0,0,0"};
    for (int k = 0; k < 4; k++) {
        char args[300];
        snprintf(args, sizeof args, "solve stickman --base torso --tip 'left hand' --target %s",
                 bad[k]);
        CHECK(run_cli(args, &out, &err) == 2 && err && strstr(err, "--target"));
        free(out), free(err);
    }
}

/* fk's output feeds solve: a world position and orientation printed by `fk --json` for a
 * bent figure, reached from the rest pose with --world; read in the base's frame (without
 * --world) the same numbers are another place, out of reach. */
static void test_fk_feeds_solve(void) {
    char *out, *err, args[1024];
    const char* q =
        "0,0.95,0,1,0,0,0,0.2,0.3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0";
    snprintf(args, sizeof args, "fk stickman --json --q %s", q);
    CHECK(run_cli(args, &out, &err) == 0);
    const char* p = out ? strstr(out, "\"name\":\"left hand\"") : NULL;
    double v[7];
    CHECK(p &&
          sscanf(
              p,
              "\"name\":\"left hand\",\"position\":[%lf,%lf,%lf],\"orientation\":[%lf,%lf,%lf,%lf]",
              &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 7);
    free(out), free(err);
    snprintf(args, sizeof args,
             "solve stickman --base pelvis --tip 'left hand' --target %.17g,%.17g,%.17g --world "
             "--timeout-ms 0",
             v[0], v[1], v[2]);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "status OK"));
    free(out), free(err);
    snprintf(args, sizeof args,
             "solve stickman --base pelvis --tip 'left hand' --target %.17g,%.17g,%.17g "
             "--timeout-ms 0",
             v[0], v[1], v[2]);
    CHECK(run_cli(args, &out, &err) == 1 && out && strstr(out, "status UNREACHABLE"));
    free(out), free(err);
}

/* A URDF joint's own name is accepted wherever a joint is named, and a miss names the
 * nearest joints, in the command line's checks and in the files' readers alike. */
static void test_urdf_joint_names(void) {
    char *out, *err, *out2, *err2;
    const char* ur5 = "'" MN_DATA "/robots/ur5/ur5_robot.urdf'";
    char args[1024];
    snprintf(args, sizeof args,
             "solve %s --base base_link --tip wrist_3_joint --target 0.3,0.2,0.4 --timeout-ms 0",
             ur5);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "status OK"));
    snprintf(args, sizeof args,
             "solve %s --base base_link --tip wrist_3_link --target 0.3,0.2,0.4 --timeout-ms 0",
             ur5);
    CHECK(run_cli(args, &out2, &err2) == 0);
    /* the same joint: the same answer */
    const char *q1 = out ? strstr(out, "\nq ") : NULL, *q2 = out2 ? strstr(out2, "\nq ") : NULL;
    CHECK(q1 && q2 && strncmp(q1, q2, (size_t)(strchr(q1 + 1, '\n') - q1)) == 0);
    free(out), free(err), free(out2), free(err2);
    snprintf(args, sizeof args,
             "solve %s --base base_link --tip wrist3_joint --target 0.3,0.2,0.4 --timeout-ms 0",
             ur5);
    CHECK(run_cli(args, &out, &err) == 1 && out && !out[0]);
    CHECK(err && strstr(err, "marionette: no joint \"wrist3_joint\" in ") &&
          strstr(err, "ur5_robot.urdf (--tip); did you mean \"wrist_3_joint\" (link "
                      "wrist_3_link)?\n"));
    free(out), free(err);
    /* the stick figure: a name typed with an underscore for the space */
    CHECK(run_cli("solve stickman --base pelvis --tip left_hand --target 0.3,0.2,0.4", &out,
                  &err) == 1);
    CHECK(err && strstr(err, "no joint \"left_hand\" in stickman (--tip); did you mean "
                             "\"left hand\"?"));
    free(out), free(err);
    /* a scene naming a URDF joint, and one with a typo */
    const char* text = "{\"handles\": [{\"name\": \"h\", \"joint\": \"wrist_3_joint\"}]}";
    const char* scene = mn_test_write_temp(".json", text, strlen(text));
    snprintf(args, sizeof args, "pose %s --scene '%s'", ur5, scene);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    text = "{\"handles\": [{\"name\": \"h\", \"joint\": \"wrist_3_jiont\"}]}";
    scene = mn_test_write_temp(".json", text, strlen(text));
    snprintf(args, sizeof args, "pose %s --scene '%s'", ur5, scene);
    CHECK(run_cli(args, &out, &err) == 1 && err && strstr(err, "handles[0].joint") &&
          strstr(err, "did you mean \"wrist_3_joint\" (link wrist_3_link)?"));
    free(out), free(err);
}

/* fit's text output prints what its --help promises: every controller's skinning matrix,
 * the same (to 9 digits) as --json gives. */
static void test_fit_prints_matrices(void) {
    char *out, *err, *jout, *jerr;
    const char* args = "fit --rig '" MN_DATA "/meshseq/cylinder/cylinder.obj' --frames '" MN_DATA
                       "/meshseq/cylinder/poses-1/cylinder-1.obj' '" MN_DATA
                       "/meshseq/cylinder/poses-1/cylinder-2.obj'";
    CHECK(run_cli(args, &out, &err) == 0);
    char jargs[1024];
    snprintf(jargs, sizeof jargs, "%s --json", args);
    CHECK(run_cli(jargs, &jout, &jerr) == 0);
    /* two frames of four bones: eight controller lines, each after its frame's line */
    int lines = 0;
    for (const char* p = out; p && (p = strstr(p, "\n  controller=")) != NULL; p++)
        lines++;
    CHECK(lines == 8);
    const char* f2 = out ? strstr(out, "frame=2 ") : NULL;
    const char* t = f2 ? strstr(f2, "  controller=bone1 R=") : NULL;
    const char* jf2 = jout ? strstr(jout, "cylinder-2.obj") : NULL;
    const char* j = jf2 ? strstr(jf2, "{\"name\":\"bone1\",\"R\":[") : NULL;
    double a[12], b[12];
    CHECK(t && sscanf(t, "  controller=bone1 R=%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf t=%lf,%lf,%lf",
                      &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8], &a[9], &a[10],
                      &a[11]) == 12);
    CHECK(j && sscanf(j,
                      "{\"name\":\"bone1\",\"R\":[%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,"
                      "%lf],\"t\":[%lf,%lf,%lf]",
                      &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9], &b[10],
                      &b[11]) == 12);
    for (int k = 0; k < 12; k++)
        CHECK(fabs(a[k] - b[k]) <= 1e-8 * (fabs(b[k]) + 1e-30));
    free(out), free(err), free(jout), free(jerr);
    CHECK(run_cli("fit --help", &out, &err) == 0 && out && strstr(out, "controller=NAME R="));
    free(out), free(err);
    /* a misspelt controller gets the nearest name */
    CHECK(run_cli("fit --rig '" MN_DATA
                  "/meshseq/cylinder/cylinder.obj' --fixed bone_1 --frames '" MN_DATA
                  "/meshseq/cylinder/poses-1/cylinder-1.obj'",
                  &out, &err) == 1);
    CHECK(err && strstr(err, "--fixed: no controller named \"bone_1\"; did you mean \"bone1\"?"));
    free(out), free(err);
}

/* The most significant digits of any number in text: a number is a token between
 * separators (start, space, '=', ',', '[', '(' before; end, space, newline, ',', ']', ')'
 * after) that strtod reads whole; digits of the mantissa from the first non-zero one. */
static int max_digits(const char* text) {
    int most = 0;
    for (const char* p = text; p && *p; p++) {
        if (p != text && !strchr(" =,[(\n", p[-1])) continue;
        char* e;
        strtod(p, &e);
        if (e == p || (*e && !strchr(" \n,])", *e))) continue;
        int n = 0, started = 0;
        for (const char* c = p; c < e && *c != 'e' && *c != 'E'; c++)
            if (*c >= '0' && *c <= '9') {
                if (*c != '0') started = 1;
                if (started) n++;
            }
        /* trailing zeros of an integer part count ("360" has 3) */
        if (n > most) most = n;
        p = e - 1;
    }
    return most;
}

/* Text output is for people: 9 significant digits at most, in every command that prints
 * numbers; --json keeps full precision, in the shortest form that reads back. */
static void test_nine_digits(void) {
    char out_bvh[600], args[1500], *out, *err;
    snprintf(out_bvh, sizeof out_bvh, "%s/walk_stick.bvh", mn_test_temp_dir());
    const char* ur5 = "'" MN_DATA "/robots/ur5/ur5_robot.urdf'";
    char cmds[7][1400];
    snprintf(cmds[0], sizeof cmds[0],
             "solve %s --base base_link --tip wrist_3_joint --target 0.3,0.2,0.4 --timeout-ms 0",
             ur5);
    snprintf(cmds[1], sizeof cmds[1],
             "pose stickman --scene '%s/../docs/examples/hands_on_hips.json'", MN_DATA);
    snprintf(cmds[2], sizeof cmds[2],
             "fit --rig '%s/meshseq/cylinder/cylinder.obj' --frames "
             "'%s/meshseq/cylinder/poses-1/cylinder-2.obj'",
             MN_DATA, MN_DATA);
    snprintf(cmds[3], sizeof cmds[3], "fk %s --q 0.1,0.2,0.3,0.4,0.5,0.6", ur5);
    snprintf(cmds[4], sizeof cmds[4], "info %s", ur5);
    snprintf(cmds[5], sizeof cmds[5],
             "retarget '%s/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' --to stickman --out '%s'",
             MN_DATA, out_bvh);
    snprintf(cmds[6], sizeof cmds[6], "anim info '%s/../docs/examples/crouch_sequence.json'",
             MN_DATA);
    for (int k = 0; k < 7; k++) {
        int rc = run_cli(cmds[k], &out, &err);
        int most = out ? max_digits(out) : 99;
        int least = k == 6 ? 1 : 4; /* anim info: frame numbers and counts only */
        if (rc != 0 || most > 9 || most < least)
            printf("     %s: exit %d, %d digits\n%s%s", cmds[k], rc, most, out ? out : "",
                   err ? err : "");
        CHECK(rc == 0 && most <= 9 && most >= least); /* and some real numbers were printed */
        free(out), free(err);
    }
    remove(out_bvh);
    /* --json: full precision, and it reads back to the same values text rounds */
    snprintf(args, sizeof args, "%s --json", cmds[0]);
    CHECK(run_cli(args, &out, &err) == 0 && out && max_digits(out) > 9);
    double jq[6], tq[6];
    const char* p = out ? strstr(out, "\"q\":[") : NULL;
    CHECK(p && sscanf(p, "\"q\":[%lf,%lf,%lf,%lf,%lf,%lf]", &jq[0], &jq[1], &jq[2], &jq[3], &jq[4],
                      &jq[5]) == 6);
    free(out), free(err);
    CHECK(run_cli(cmds[0], &out, &err) == 0);
    p = out ? strstr(out, "\nq ") : NULL;
    CHECK(p && sscanf(p, "\nq %lf,%lf,%lf,%lf,%lf,%lf", &tq[0], &tq[1], &tq[2], &tq[3], &tq[4],
                      &tq[5]) == 6);
    for (int k = 0; k < 6; k++)
        CHECK(fabs(tq[k] - jq[k]) <= 1e-8 * fabs(jq[k]) + 1e-300);
    free(out), free(err);
    snprintf(args, sizeof args, "info %s --json", ur5);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "\"offset\":[0,0,0.089159]"));
    free(out), free(err);
}

/* fk --every-frame stops at a pose it cannot print (here a glTF whose animated scales
 * reach 3e38 on nine nested nodes at the second key) before printing anything: no half
 * JSON document on stdout, one message naming the file, exit status 1. */
static void test_fk_fails_whole(void) {
    /* ten nodes in a chain, one unit apart; one sampler scales the first nine by 1 at 0 s
     * and by 3e38 at 1 s (the buffer: times 0, 1 and the two scales as floats) */
    char text[4096];
    size_t n =
        (size_t)snprintf(text, sizeof text,
                         "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":"
                         "[0]}],\"nodes\":[");
    for (int k = 0; k < 10; k++)
        n += (size_t)snprintf(
            text + n, sizeof text - n, "%s{\"name\":\"j%d\",\"translation\":[1,0,0]%s%.0d%s}",
            k ? "," : "", k, k < 9 ? ",\"children\":[" : "", k < 9 ? k + 1 : 0, k < 9 ? "]" : "");
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "],\"animations\":[{\"name\":\"grow\",\"channels\":[");
    for (int k = 0; k < 9; k++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "%s{\"sampler\":0,\"target\":{\"node\":%d,\"path\":\"scale\"}}",
                              k ? "," : "", k);
    n += (size_t)snprintf(
        text + n, sizeof text - n,
        "],\"samplers\":[{\"input\":0,\"output\":1}]}],\"buffers\":[{\"uri\":\"data:application/"
        "octet-stream;base64,AAAAAAAAgD8AAIA/AACAPwAAgD/msWF/5rFhf+axYX8=\",\"byteLength\":32}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":32}],\"accessors\":["
        "{\"bufferView\":0,\"byteOffset\":0,\"componentType\":5126,\"count\":2,\"type\":"
        "\"SCALAR\",\"min\":[0],\"max\":[1]},{\"bufferView\":0,\"byteOffset\":8,"
        "\"componentType\":5126,\"count\":2,\"type\":\"VEC3\"}]}");
    CHECK(n < sizeof text);
    char path[512], args[1200], *out, *err;
    snprintf(path, sizeof path, "%s", mn_test_write_temp("grow.gltf", text, n));
    const char* how[] = {"--every-frame --json", "--every-frame", "--time 1 --json"};
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "fk '%s' %s", path, how[k]);
        CHECK(run_cli(args, &out, &err) == 1 && out && !out[0] && err &&
              strstr(err, "grow.gltf: ") && !strchr(strchr(err, '\n') + 1, '\n'));
        free(out), free(err);
    }
    /* the first key alone is a pose like any other */
    snprintf(args, sizeof args, "fk '%s' --frame 0 --json", path);
    CHECK(run_cli(args, &out, &err) == 0 && out &&
          strstr(out, "\"name\":\"j9\",\"position\":[10,0,0]"));
    free(out), free(err);
}

/* A BVH written from the built-in figure reads back with its names ("right arm", not
 * "right_arm") in every command; --names-from gives any other figure's names back. */
static void test_bvh_names_back(void) {
    char dir[512], args[2600], *out, *err;
    snprintf(dir, sizeof dir, "%s", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert stickman '%s/s.bvh'", dir);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(args, sizeof args, "info '%s/s.bvh'", dir);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "\n    right arm  ball") &&
          !strstr(out, "right_arm"));
    free(out), free(err);
    snprintf(args, sizeof args,
             "solve '%s/s.bvh' --base pelvis --tip 'left hand' --target 0.2,0.3,0.1 --timeout-ms 0",
             dir);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "status OK"));
    free(out), free(err);
    /* a figure of its own with a space in a name: skeleton -> BVH -> figure document */
    snprintf(args, sizeof args, "convert stickman '%s/own.skel'", dir);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    char path[600];
    snprintf(path, sizeof path, "%s/own.skel", dir);
    char* text = mn_test_read_file(path, NULL);
    /* rename the figure's "right arm" to "right upper": no longer the built-in figure */
    for (char* p = text; p && (p = strstr(p, "right arm")) != NULL;)
        memcpy(p, "right upp", 9);
    FILE* f = text ? fopen(path, "wb") : NULL;
    if (f) fputs(text, f), fclose(f);
    free(text);
    snprintf(args, sizeof args, "convert '%s/own.skel' '%s/own.bvh'", dir, dir);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(args, sizeof args, "info '%s/own.bvh' --json", dir);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "\"name\":\"right_upp\""));
    free(out), free(err);
    snprintf(args, sizeof args, "convert '%s/own.bvh' '%s/back.json' --names-from '%s/own.skel'",
             dir, dir, dir);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(path, sizeof path, "%s/back.json", dir);
    text = mn_test_read_file(path, NULL);
    CHECK(text && strstr(text, "\"name\":\"right upp\"") && strstr(text, "\"name\":\"left arm\"") &&
          !strstr(text, "right_upp"));
    free(text);
    /* in a batch too */
    snprintf(
        args, sizeof args,
        "convert '%s/own.bvh' --out-dir '%s/skels' --format skel --names-from '%s/own.skel' -j 1",
        dir, dir, dir);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(path, sizeof path, "%s/skels/own.skel", dir);
    text = mn_test_read_file(path, NULL);
    CHECK(text && strstr(text, "\"right upp\""));
    free(text);
    /* a figure that is not a BVH has its own names: --names-from is for BVH input */
    snprintf(args, sizeof args, "convert stickman '%s/x.skel' --names-from stickman", dir);
    CHECK(run_cli(args, &out, &err) == 2);
    free(out), free(err);
}

static void test_demo_explains(void) {
    char *out, *err;
    CHECK(run_cli("demo", &out, &err) == 0);
    CHECK(out && strstr(out, "36 DOF, state size 37") && strstr(out, "'torso.1' and 'torso.2'") &&
          strstr(out, "unit quaternion"));
    free(out), free(err);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_fk_json_orientations);
    RUN(test_sim_makes_its_folder);
    RUN(test_malformed_target_is_usage);
    RUN(test_fk_feeds_solve);
    RUN(test_urdf_joint_names);
    RUN(test_fit_prints_matrices);
    RUN(test_nine_digits);
    RUN(test_fk_fails_whole);
    RUN(test_bvh_names_back);
    RUN(test_demo_explains);
    return mn_test_report();
}
