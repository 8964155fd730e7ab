/* `marionette anim crossfade | root-motion | loop | retime` end to end on the shipped CMU
 * takes: the key=value line and its JSON form, the written BVH read back (its frame count and
 * the in-place root on the spot), and bad input: a missing take, takes of two skeletons, a
 * warp that runs backwards, a blend longer than a take. */
#include <marionette/io.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define WALK MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh"
#define HOP MN_DATA "/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh"
#define WALK02 MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

/* The number after "key=" in a key=value line, NAN when absent. */
static double value_of(const char* line, const char* key) {
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char* p = line ? strstr(line, pat) : NULL;
    return p ? atof(p + strlen(pat)) : NAN;
}

static int frames_of(const char* path, mn_motion* mo, mn_model** m) {
    mn_bvh_options o = mn_bvh_default();
    mn_error err;
    return mn_bvh_read(path, &o, m, mo, NULL, &err) == MN_OK;
}

static void test_commands(void) {
    const char* dir = mn_test_temp_dir();
    CHECK(dir != NULL);
    if (!dir) return;
    char args[4096], path[1024];
    char *out, *err;
    snprintf(path, sizeof path, "%s/walk_hop.bvh", dir);
    snprintf(args, sizeof args,
             "anim crossfade '" WALK "' '" HOP
             "' --scale 0.056444 --at 650 --b-range 0 740 --out '%s'",
             path);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(value_of(out, "b_frame") == 375 && value_of(out, "frames") == 1377);
    CHECK(value_of(out, "locks") > 10 && value_of(out, "max_violation") < 1e-5);
    CHECK(strstr(out, " b_range=given ") && value_of(out, "b_max") == 740);
    mn_motion mo;
    mn_model* m = NULL;
    CHECK(frames_of(path, &mo, &m) && mo.nframes == 1377);
    if (m) mn_motion_free(&mo), mn_model_destroy(m), m = NULL;
    free(out), free(err);

    /* without --b-range the window ends before B's hop, which plays after the blend */
    snprintf(path, sizeof path, "%s/walk_hop_auto.bvh", dir);
    snprintf(args, sizeof args, "anim crossfade '" WALK "' '" HOP "' --scale 0.056444 --out '%s'",
             path);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, " b_range=auto "));
    double b0 = value_of(out, "b_frame"), is = value_of(out, "interest_start");
    CHECK(value_of(out, "a_frame") == 497 && is > 770 && is < 800);
    CHECK(b0 + value_of(out, "blend_frames") <= is && value_of(out, "b_max") < is);
    CHECK(value_of(out, "frames") == 497 + 1102 - b0);
    CHECK(frames_of(path, &mo, &m) && mo.nframes == 497 + 1102 - (int)b0);
    if (m) mn_motion_free(&mo), mn_model_destroy(m), m = NULL;
    free(out), free(err);

    snprintf(path, sizeof path, "%s/in_place.bvh", dir);
    snprintf(args, sizeof args,
             "anim root-motion '" WALK "' --scale 0.056444 --in-place --out '%s'", path);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(fabs(value_of(out, "distance") - 4.531) < 0.001);
    if (frames_of(path, &mo, &m)) {
        double worst = 0; /* the root's ground position stays at the origin */
        for (int f = 0; f < mo.nframes; f++)
            worst = fmax(worst, fabs(mo.q[(size_t)f * (size_t)mo.nq]) +
                                    fabs(mo.q[(size_t)f * (size_t)mo.nq + 2]));
        CHECK(worst < 1e-4);
        mn_motion_free(&mo), mn_model_destroy(m), m = NULL;
    } else {
        CHECK(0);
    }
    free(out), free(err);

    CHECK(run_cli("anim loop '" WALK "' --scale 0.056444 --json", &out, &err) == 0);
    CHECK(out && strstr(out, "\"start\":557") && strstr(out, "\"end\":700"));
    free(out), free(err);

    snprintf(path, sizeof path, "%s/slow.bvh", dir);
    snprintf(args, sizeof args,
             "anim retime '" MN_DATA
             "/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh' --scale 0.056444 --speed 0.5 "
             "--ballistic --out '%s'",
             path);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(value_of(out, "flights") == 10 && fabs(value_of(out, "gravity") - 9.85) < 0.01);
    free(out), free(err);
}

/* Bad input is refused before anything is written: every --out names a file in the test's
 * temporary folder, and it does not exist afterwards. */
static char out_path[1024];

/* Runs "ARGS --out OUT" with OUT in the temporary folder. */
static int run_out(const char* args, char** out, char** err) {
    char all[4096];
    snprintf(all, sizeof all, "%s --out '%s'", args, out_path);
    return run_cli(all, out, err);
}

static void test_bad_input(void) {
    char *out, *err;
    const char* dir = mn_test_temp_dir();
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(out_path, sizeof out_path, "%s/x.bvh", dir);
    CHECK(run_out("anim crossfade '" WALK "' nowhere.bvh", &out, &err) == 1 &&
          strstr(err, "nowhere.bvh"));
    free(out), free(err);
    CHECK(run_out("anim crossfade '" WALK "' '" WALK02 "'", &out, &err) == 1 &&
          strstr(err, "skeleton"));
    free(out), free(err);
    CHECK(run_out("anim crossfade '" WALK "' '" HOP "' --at 990", &out, &err) == 2 &&
          strstr(err, "blend"));
    free(out), free(err);
    CHECK(run_out("anim retime '" WALK "' --warp 0:0,10:-1", &out, &err) == 2 &&
          strstr(err, "backwards"));
    free(out), free(err);
    CHECK(run_out("anim retime '" WALK "' --warp 0:0,10", &out, &err) == 2 &&
          strstr(err, "--warp"));
    free(out), free(err);
    CHECK(run_cli("anim root-motion '" WALK "' --in-place --turn 10", &out, &err) == 2);
    free(out), free(err);
    CHECK(run_out("anim loop '" WALK "' --min-length 5000", &out, &err) == 2 &&
          strstr(err, "frames"));
    free(out), free(err);
    FILE* f = fopen(out_path, "rb");
    CHECK(f == NULL); /* nothing written */
    if (f) fclose(f);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_commands);
    RUN(test_bad_input);
    return mn_test_report();
}
