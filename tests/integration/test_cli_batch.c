/* `marionette convert` and `marionette retarget` over many inputs (--out-dir, -j): every
 * good file written as the one-file command writes it, a bad file reported and skipped,
 * the summary and the exit status, the progress bar on a terminal. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define TAKES                                                                                      \
    "'" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' '" MN_DATA                           \
    "/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh' '" MN_DATA                              \
    "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh' '" MN_DATA                                  \
    "/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh'"
static const char* const stems[4] = {"cmu_02_01_walk", "cmu_01_01_forward_jumps",
                                     "cmu_131_01_start_walk_stop", "cmu_131_03_start_hop_stop"};
static const int frames[4] = {344, 2752, 994, 1102};

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

/* A truncated take: the batch reports it and goes on. */
static const char broken[] = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n";

static void test_convert_many(void) {
    char bad[256], dir[512], args[8192], *out, *err;
    snprintf(bad, sizeof bad, "%s", mn_test_write_temp(".bvh", broken, sizeof broken - 1));
    snprintf(dir, sizeof dir, "%s/converted", mn_test_temp_dir());
    /* the bad file in the middle: the ones after it are converted too */
    snprintf(args, sizeof args,
             "convert %s '%s' '" MN_DATA
             "/mocap/other_skeleton/Boxing_Toes.bvh' --out-dir '%s' -j 2",
             TAKES, bad, dir);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(out && out[0] == 0); /* nothing on stdout */
    CHECK(err && strstr(err, "5 of 6 files written") && strstr(err, "1 failed:") &&
          strstr(err, "2 workers"));
    /* the failure, why (file, line, field), in the summary and in its own line */
    char why[600];
    snprintf(why, sizeof why, "%s: %s:5: HIERARCHY: file ends inside joint 'Hips'", bad, bad);
    CHECK(err && strstr(err, why));
    snprintf(why, sizeof why, "FAILED %s:", bad);
    CHECK(err && strstr(err, why));
    CHECK(err && strstr(err, "ok " MN_DATA "/mocap/other_skeleton/Boxing_Toes.bvh -> "));
    free(out), free(err);
    /* every good take is there, as the one-file command writes it */
    for (int k = 0; k < 4; k++) {
        char path[700], one[300];
        snprintf(path, sizeof path, "%s/%s.bvh", dir, stems[k]);
        mn_model* m = NULL;
        mn_motion mo;
        mn_error e;
        CHECK(mn_bvh_read(path, NULL, &m, &mo, NULL, &e) == MN_OK);
        CHECK(mo.nframes == frames[k]);
        mn_motion_free(&mo);
        mn_model_destroy(m);
        if (k == 0) {
            snprintf(one, sizeof one, "%s", mn_test_write_temp(".bvh", "", 0));
            snprintf(args, sizeof args,
                     "convert '" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' '%s'", one);
            CHECK(run_cli(args, &out, &err) == 0);
            free(out), free(err);
            size_t n1, n2;
            char* a = mn_test_read_file(path, &n1);
            char* b = mn_test_read_file(one, &n2);
            CHECK(a && b && n1 == n2 && memcmp(a, b, n1) == 0);
            free(a), free(b);
        }
    }
    char nothing[700];
    snprintf(nothing, sizeof nothing, "%s/%s", dir, strrchr(bad, '/') + 1);
    CHECK(access(nothing, F_OK) != 0); /* no half-written file for the bad one */
    /* all good, one worker, to glb: exit 0 */
    snprintf(args, sizeof args, "convert %s --out-dir '%s/glb' --to glb -j 1", TAKES,
             mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(err && strstr(err, "4 of 4 files written") && strstr(err, "1 worker") &&
          !strstr(err, "failed"));
    free(out), free(err);
    char glb[700];
    snprintf(glb, sizeof glb, "%s/glb/cmu_02_01_walk.glb", mn_test_temp_dir());
    CHECK(access(glb, F_OK) == 0);
    /* usage errors: two inputs of one name, a bad -j, --to without --out-dir */
    snprintf(args, sizeof args, "convert %s %s --out-dir '%s'", TAKES, TAKES, dir);
    CHECK(run_cli(args, &out, &err) == 2 && err && strstr(err, "would both write"));
    free(out), free(err);
    snprintf(args, sizeof args, "convert %s --out-dir '%s' -j 0", TAKES, dir);
    CHECK(run_cli(args, &out, &err) == 2);
    free(out), free(err);
    CHECK(run_cli("convert stickman x.bvh --to glb", &out, &err) == 2);
    free(out), free(err);
    /* an output folder that cannot be made: exit 1, said why */
    snprintf(args, sizeof args, "convert %s --out-dir /proc/nope/out", TAKES);
    CHECK(run_cli(args, &out, &err) == 1 && err && strstr(err, "output folder"));
    free(out), free(err);
}

/* On a terminal: a progress bar with the rate and the time left (run under script(1),
 * which gives the command a pseudo-terminal; skipped where it is missing). */
static void test_progress_on_terminal(void) {
    if (system("command -v script > /dev/null 2>&1") != 0) {
        printf("  script(1) not found: the terminal progress bar is not checked\n");
        return;
    }
    char log[300], cmd[8192];
    snprintf(log, sizeof log, "%s", mn_test_write_temp(".log", "", 0));
    snprintf(
        cmd, sizeof cmd,
        "script -qec \"'%s' convert %s --out-dir '%s/tty' -j 2\" '%s' > /dev/null 2>&1 < /dev/null",
        MN_CLI, TAKES, mn_test_temp_dir(), log);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char* text = mn_test_read_file(log, NULL);
    CHECK(text && strstr(text, "] 4/4 files, ") && strstr(text, " files/s, ") &&
          strstr(text, " left") && strstr(text, "\r["));
    CHECK(text && !strstr(text, "ok /")); /* the bar, not the plain lines */
    free(text);
}

static void test_retarget_many(void) {
    char bad[256], dir[512], args[8192], *out, *err;
    snprintf(bad, sizeof bad, "%s", mn_test_write_temp(".bvh", broken, sizeof broken - 1));
    snprintf(dir, sizeof dir, "%s/retargeted", mn_test_temp_dir());
    snprintf(args, sizeof args,
             "retarget '%s' '" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' '" MN_DATA
             "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh' --to stickman --out-dir '%s'",
             bad, dir);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(out && out[0] == 0); /* no key=value lines in a batch */
    CHECK(err && strstr(err, "2 of 3 files written") && strstr(err, "1 failed:") &&
          strstr(err, "HIERARCHY: file ends inside joint"));
    free(out), free(err);
    for (int k = 0; k < 2; k++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s.bvh", dir, k ? "cmu_131_01_start_walk_stop" : stems[0]);
        mn_model* m = NULL;
        mn_motion mo;
        mn_error e;
        CHECK(mn_bvh_read(path, NULL, &m, &mo, NULL, &e) == MN_OK);
        CHECK(mo.nframes == (k ? 994 : 344));
        CHECK(m && mn_model_find_joint(m, "left_knee") >= 0); /* the stick figure */
        mn_motion_free(&mo);
        mn_model_destroy(m);
    }
    /* usage: many sources without --out-dir */
    snprintf(args, sizeof args, "retarget %s --to stickman --out x.bvh", TAKES);
    CHECK(run_cli(args, &out, &err) == 2 && err && strstr(err, "--out-dir"));
    free(out), free(err);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_convert_many);
    RUN(test_progress_on_terminal);
    RUN(test_retarget_many);
    return mn_test_report();
}
