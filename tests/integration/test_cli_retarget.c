/* `marionette retarget` and `marionette bench retarget` end to end: exit codes, the
 * key=value figures, the written BVH read back, errors naming the map file's line. */
#include <marionette/io.h>
#include <marionette/model.h>
#include <marionette/sequence.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glb_check.h"
#include "test.h"

#define WALK MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"
#define CESIUM MN_DATA "/skinned/CesiumMan.glb"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

/* The number after "key=" in text, or NAN. */
static double value_of(const char* text, const char* key) {
    char k[96];
    snprintf(k, sizeof k, "%s=", key);
    const char* p = text ? strstr(text, k) : NULL;
    while (p && p != text && p[-1] != '\n' && p[-1] != ' ')
        p = strstr(p + 1, k);
    return p ? atof(p + strlen(k)) : NAN;
}

static void temp_path(char* buf, size_t n, const char* suffix) {
    snprintf(buf, n, "%s", mn_test_write_temp(suffix, "", 0));
    remove(buf);
}

static void test_retarget_walk(void) {
    char out_bvh[256], args[1024];
    temp_path(out_bvh, sizeof out_bvh, ".bvh");
    snprintf(args, sizeof args, "retarget '%s' --to stickman --out '%s'", WALK, out_bvh);
    char *out, *err;
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "source_rig=cmu-motionbuilder") && strstr(out, "target_rig=stickman"));
    CHECK(value_of(out, "frames") == 344);
    CHECK(value_of(out, "retarget_skate_max_mm") <= 5.0);
    CHECK(value_of(out, "naive_skate_max_mm") > value_of(out, "retarget_skate_max_mm"));
    CHECK(value_of(out, "retarget_limit_violations") == 0);
    CHECK(value_of(out, "naive_limit_violations") > 0);
    CHECK(value_of(out, "contacts_left") >= 2 && value_of(out, "contacts_right") >= 2);
    CHECK(value_of(out, "unconverged_frames") == 0);
    free(out), free(err);
    /* the written take is the stick figure with every frame */
    mn_model* m = NULL;
    mn_motion mo = {0};
    mn_error e;
    CHECK(mn_bvh_read(out_bvh, NULL, &m, &mo, NULL, &e) == MN_OK);
    if (m) {
        CHECK(mo.nframes == 344);
        /* names are written with '_' for spaces (docs/bvh.md, "Names") */
        CHECK(mn_model_find_joint(m, "left_knee") >= 0 && mn_model_find_joint(m, "pelvis") >= 0);
        for (long i = 0; i < (long)mo.nframes * mo.nq; i++)
            if (!isfinite(mo.q[i])) {
                CHECK(0);
                break;
            }
    }
    mn_motion_free(&mo);
    mn_model_destroy(m);
    remove(out_bvh);
}

/* The CMU walk onto the skinned CesiumMan as a .glb: the character's mesh goes along, and
 * the animation puts every joint where the BVH of the same command does, to 1e-6 of the
 * figure's size; the figures printed are those of the BVH run. */
static void test_retarget_skinned_glb(void) {
    char out_glb[256], out_bvh[256], args[1024];
    temp_path(out_glb, sizeof out_glb, ".glb");
    temp_path(out_bvh, sizeof out_bvh, ".bvh");
    char *out, *err, *out2, *err2;
    snprintf(args, sizeof args, "retarget '%s' --to '%s' --out '%s'", WALK, CESIUM, out_glb);
    CHECK(run_cli(args, &out, &err) == 0);
    snprintf(args, sizeof args, "retarget '%s' --to '%s' --out '%s'", WALK, CESIUM, out_bvh);
    CHECK(run_cli(args, &out2, &err2) == 0);
    CHECK(value_of(out, "frames") == 344 && value_of(out, "unconverged_frames") == 0);
    CHECK(value_of(out, "retarget_skate_max_mm") == value_of(out2, "retarget_skate_max_mm"));
    CHECK(value_of(out, "retarget_skate_max_mm") <= 5.0);
    free(out), free(err), free(out2), free(err2);
    glb_check c;
    int frames[] = {0, 57, 171, 250, 343};
    CHECK(glb_check_files(out_glb, CESIUM, out_bvh, frames, 5, &c));
    printf(
        "  walk onto CesiumMan: %d vertices (source %d), %d keys, %d joints, rest mesh gap %.2g, "
        "joint gap %.2g of the figure size %.3g\n",
        c.nverts, c.src_nverts, c.nkeys, c.joints, c.rest_gap / c.size, c.motion_gap / c.size,
        c.size);
    CHECK(c.src_nverts > 0 && c.nverts == c.src_nverts && c.ntris == c.src_ntris);
    CHECK(c.nkeys == 344 && c.bvh_frames == 344 && c.joints == 19);
    CHECK(c.size > 0.5 && c.rest_gap < 1e-6 * c.size && c.motion_gap < 1e-6 * c.size);
    /* onto a bones-only figure, the .glb holds the figure and its animation */
    snprintf(args, sizeof args, "retarget '%s' --to stickman --out '%s'", WALK, out_glb);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    mn_gltf g;
    mn_error e;
    CHECK(mn_gltf_read(out_glb, &g, NULL, &e) == MN_OK);
    CHECK(g.nverts == 0 && g.nanims == 1 && g.anims[0].nkeys == 344);
    mn_gltf_free(&g);
    remove(out_glb);
    remove(out_bvh);
}

static void test_retarget_errors(void) {
    char *out, *err, args[1024], out_bvh[256];
    temp_path(out_bvh, sizeof out_bvh, ".bvh");
    CHECK(run_cli("retarget --help", &out, &err) == 0 && strstr(out, "usage:"));
    free(out), free(err);
    CHECK(run_cli("bench retarget --help", &out, &err) == 0 && strstr(out, "usage:"));
    free(out), free(err);
    CHECK(run_cli("retarget '" WALK "' --out x.bvh", &out, &err) == 2 && strstr(err, "--to"));
    free(out), free(err);
    CHECK(run_cli("retarget '" WALK "' --to stickman", &out, &err) == 2 && strstr(err, "--out"));
    free(out), free(err);
    CHECK(run_cli("retarget '" WALK "' --to stickman --out x.gltf", &out, &err) == 2 &&
          strstr(err, ".glb"));
    free(out), free(err);
    CHECK(run_cli("retarget '" WALK "' --to stickman --out x.bvh --bogus", &out, &err) == 2);
    free(out), free(err);
    snprintf(args, sizeof args, "retarget no_such_take.bvh --to stickman --out '%s'", out_bvh);
    CHECK(run_cli(args, &out, &err) == 1 && strstr(err, "no_such_take.bvh"));
    free(out), free(err);
    /* a map naming a joint the stick figure lacks: file, line, role; nothing written */
    static const char map[] = "# walk onto the stick figure\nhips Hips pelvis\n"
                              "left_thigh LeftUpLeg \"left thigh\"\n";
    char map_path[256];
    snprintf(map_path, sizeof map_path, "%s", mn_test_write_temp(".map", map, sizeof map - 1));
    snprintf(args, sizeof args, "retarget '%s' --to stickman --map '%s' --out '%s'", WALK, map_path,
             out_bvh);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(err && strstr(err, ":3:") && strstr(err, "left_thigh target") &&
          strstr(err, "left thigh"));
    CHECK(access(out_bvh, F_OK) != 0);
    free(out), free(err);
    /* a malformed map */
    static const char bad[] = "hips Hips\n";
    char bad_path[256];
    snprintf(bad_path, sizeof bad_path, "%s", mn_test_write_temp(".map", bad, sizeof bad - 1));
    snprintf(args, sizeof args, "retarget '%s' --to stickman --map '%s' --out '%s'", WALK, bad_path,
             out_bvh);
    CHECK(run_cli(args, &out, &err) == 1 && err && strstr(err, ":1:") && strstr(err, "target"));
    CHECK(access(out_bvh, F_OK) != 0);
    free(out), free(err);
    remove(map_path);
    remove(bad_path);
}

static void test_bench_retarget(void) {
    char *out, *err;
    CHECK(run_cli("bench retarget '" WALK "' --to stickman --reps 1", &out, &err) == 0);
    CHECK(out && strstr(out, "variant=cleanup") && strstr(out, "variant=naive"));
    CHECK(out && strstr(out, "take=cmu_02_01_walk.bvh target=stickman"));
    CHECK(value_of(out, "fps") > 0);
    CHECK(value_of(out, "planted_skate_max_mm") <= 5.0);
    free(out), free(err);
}

/* --dry-run prints the mapping chosen, writes nothing; --json the same as JSON; a figure
 * the tables do not know is refused with a word on the map file. */
static void test_retarget_dry_run(void) {
    char *out, *err;
    CHECK(run_cli("retarget '" WALK "' --to '" MN_DATA "/skinned/Fox.glb' --dry-run", &out, &err) ==
          0);
    CHECK(out && strstr(out, "source_rig=cmu-motionbuilder target_rig=gltf-fox\n"));
    CHECK(out && strstr(out, "role=left_thigh source=LeftUpLeg target=b_LeftLeg01_015\n"));
    CHECK(out && strstr(out, "role=right_toe source=RightToeBase target=b_RightFoot02_022\n"));
    free(out), free(err);
    CHECK(run_cli("retarget '" WALK "' --to stickman --dry-run --json", &out, &err) == 0);
    CHECK(out && out[0] == '[' &&
          strstr(out, "{\"role\":\"left_thigh\",\"source\":\"LeftUpLeg\",\"target\":\"left "
                      "leg\"}"));
    free(out), free(err);
    CHECK(run_cli("retarget '" MN_DATA "/skinned/RiggedSimple.glb' --to stickman --dry-run", &out,
                  &err) == 1);
    CHECK(err && strstr(err, "give a map file (--map)"));
    free(out), free(err);
}

/* --out OUT.json: a sequence document of the target with a key per frame and the heel and
 * toe tracks of both feet, read back by the sequence reader; anim import writes the take's
 * own tracks, on the same frames (the detector runs on the source either way). */
static void test_retarget_sequence(void) {
    char out_json[256], imp_json[256], args[1024];
    temp_path(out_json, sizeof out_json, ".json");
    temp_path(imp_json, sizeof imp_json, ".json");
    snprintf(args, sizeof args, "retarget '%s' --to stickman --out '%s'", WALK, out_json);
    char *out, *err;
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(args, sizeof args, "anim import '%s' --out '%s'", WALK, imp_json);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    mn_seq_doc_info* info = calloc(2, sizeof *info);
    mn_seq_read_options o = mn_seq_read_default();
    o.trusted = 1;
    mn_model *m = NULL, *m2 = NULL;
    mn_seq *s = NULL, *s2 = NULL;
    mn_error e;
    CHECK(mn_seq_read(out_json, &o, &m, &s, &info[0], &e) == MN_OK);
    CHECK(mn_seq_read(imp_json, &o, &m2, &s2, &info[1], &e) == MN_OK);
    CHECK(s && mn_seq_key_count(s) == 344);
    CHECK(info[0].ncontact == 2 && !strcmp(info[0].contact[0].joint, "left foot") &&
          !strcmp(info[0].contact[1].joint, "right foot"));
    CHECK(info[1].ncontact == 2 && !strcmp(info[1].contact[0].joint, "LeftFoot"));
    for (int k = 0; k < 2; k++) {
        const mn_seq_contact_track *a = &info[0].contact[k], *b = &info[1].contact[k];
        CHECK(a->nheel >= 3 && a->ntoe >= 3);
        CHECK(a->nheel == b->nheel && a->ntoe == b->ntoe);
        for (int i = 0; i < a->nheel && i < b->nheel; i++)
            CHECK(a->heel[i][0] == b->heel[i][0] && a->heel[i][1] == b->heel[i][1]);
        /* a roll: each toe interval ends no earlier than the heel interval it overlaps */
        for (int i = 0; i < a->nheel && i < a->ntoe; i++)
            CHECK(a->toe[i][1] >= a->heel[i][1]);
    }
    free(info);
    mn_seq_destroy(s);
    mn_seq_destroy(s2);
    mn_model_destroy(m);
    mn_model_destroy(m2);
    remove(out_json);
    remove(imp_json);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_retarget_walk);
    RUN(test_retarget_skinned_glb);
    RUN(test_retarget_errors);
    RUN(test_bench_retarget);
    RUN(test_retarget_dry_run);
    RUN(test_retarget_sequence);
    return mn_test_report();
}
