/* Re-rooting from the command line: `convert --root` writes a CMU walk re-rooted at a hand
 * with every joint where the take puts it at every frame; `pose --root` and a scene's
 * "root" hang the stick figure from its hand; bad roots are errors naming where. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define WALK MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

static mn_model* read_bvh(const char* path, mn_motion* mo) {
    mn_model* m = NULL;
    mn_error err;
    mn_bvh_options o = mn_bvh_default();
    if (mn_bvh_read(path, &o, &m, mo, NULL, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return NULL;
    }
    return m;
}

/* Every joint of every frame (every step-th) of two BVH takes where the first puts it;
 * returns the largest distance, relative to the figure's size. */
static double take_gap(const char* pa, const char* pb, int step, const char* root) {
    mn_motion a, b;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    mn_model* ma = read_bvh(pa, &a);
    mn_model* mb = read_bvh(pb, &b);
    double worst = 1, size = 0;
    if (ma && mb && !strcmp(mb->jnt_name[0], root) && a.nframes == b.nframes && mb->nv == ma->nv) {
        worst = 0;
        mn_data* da = mn_data_create(ma, 0);
        mn_data* db = mn_data_create(mb, 0);
        for (int f = 0; f < a.nframes; f += step) {
            memcpy(da->q, a.q + (size_t)f * ma->nq, sizeof(double) * (size_t)ma->nq);
            memcpy(db->q, b.q + (size_t)f * mb->nq, sizeof(double) * (size_t)mb->nq);
            mn_fk(ma, da);
            mn_fk(mb, db);
            for (int j = 0; j < ma->njoint; j++) {
                int k = mn_model_find_joint(mb, ma->jnt_name[j]);
                if (k < 0) {
                    worst = 1e300;
                    break;
                }
                worst = fmax(worst, mn_vec3_dist(da->xf[j].p, db->xf[k].p));
                size = fmax(size, mn_vec3_norm(da->xf[j].p));
            }
        }
        mn_data_destroy(da);
        mn_data_destroy(db);
    }
    mn_motion_free(&a), mn_motion_free(&b);
    mn_model_destroy(ma), mn_model_destroy(mb);
    return size > 0 ? worst / size : worst;
}

/* A take with position channels on every joint (free joints below the root, bone lengths
 * held): re-rooted at a hand, every joint where it was. */
static void test_convert_root_positions(void) {
    char out_path[256], args[1024], *out, *err;
    const char* in = MN_TEST_DATA "/cmu_02_01_walk_positions.bvh";
    snprintf(out_path, sizeof out_path, "%s/positions_from_hand.bvh", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert '%s' '%s' --root LeftHand", in, out_path);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    double gap = take_gap(in, out_path, 1, "LeftHand");
    CHECK(gap < 1e-6);
    if (!(gap < 1e-6)) fprintf(stderr, "  re-rooted positions take: %g apart\n", gap);
    remove(out_path);
}

static void test_convert_root(void) {
    char out_path[256], args[1024], *out, *err;
    snprintf(out_path, sizeof out_path, "%s/walk_from_hand.bvh", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert '%s' '%s' --root LeftHand", WALK, out_path);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    mn_motion a, b;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    mn_model* ma = read_bvh(WALK, &a);
    mn_model* mb = read_bvh(out_path, &b);
    CHECK(ma && mb);
    if (ma && mb) {
        CHECK(!strcmp(mb->jnt_name[0], "LeftHand")); /* the hand is the root */
        CHECK(mb->jnt_parent[mn_model_find_joint(mb, "Hips")] >= 0);
        CHECK(a.nframes == b.nframes && mb->nv == ma->nv);
        mn_data* da = mn_data_create(ma, 0);
        mn_data* db = mn_data_create(mb, 0);
        double worst = 0, size = 0;
        for (int f = 0; f < a.nframes && a.nframes == b.nframes; f += 7) {
            memcpy(da->q, a.q + (size_t)f * ma->nq, sizeof(double) * (size_t)ma->nq);
            memcpy(db->q, b.q + (size_t)f * mb->nq, sizeof(double) * (size_t)mb->nq);
            mn_fk(ma, da);
            mn_fk(mb, db);
            for (int j = 0; j < ma->njoint; j++) {
                int k = mn_model_find_joint(mb, ma->jnt_name[j]);
                CHECK(k >= 0);
                if (k < 0) break;
                worst = fmax(worst, mn_vec3_dist(da->xf[j].p, db->xf[k].p));
                size = fmax(size, mn_vec3_norm(da->xf[j].p));
            }
        }
        /* BVH text: 9 significant digits of lengths and angles */
        CHECK(worst < 1e-6 * size);
        if (!(worst < 1e-6 * size)) fprintf(stderr, "  re-rooted walk: %g apart\n", worst);
        mn_data_destroy(da);
        mn_data_destroy(db);
    }
    mn_motion_free(&a), mn_motion_free(&b);
    mn_model_destroy(ma), mn_model_destroy(mb);
    remove(out_path);
    /* an unknown joint: an error naming the option, with the nearest name */
    snprintf(args, sizeof args, "convert '%s' '%s' --root LeftHnd", WALK, out_path);
    CHECK(run_cli(args, &out, &err) == 1 && strstr(err, "--root") && strstr(err, "LeftHand"));
    CHECK(fopen(out_path, "r") == NULL);
    free(out), free(err);
}

/* Hanging from a bar: the left hand is the root, pinned where it is, and the pelvis is
 * dragged down; the hand stays and every frame is met. */
static const char* hang =
    "{\"root\": \"left hand\", \"frames\": 10,\n"
    " \"handles\": [{\"name\": \"grip\", \"joint\": \"left hand\"},\n"
    "              {\"name\": \"pelvis\", \"joint\": \"pelvis\"}],\n"
    " \"constraints\": [{\"type\": \"pin\", \"handle\": \"grip\"}],\n"
    " \"drags\": [{\"handle\": \"pelvis\", \"path\": [[0, 0, 0], [0, -0.05, 0.05]], "
    "\"relative\": true}]}\n";

static void test_pose_root(void) {
    char scene[256], args[1024], *out, *err, *out2, *err2;
    snprintf(scene, sizeof scene, "%s", mn_test_write_temp(".json", hang, strlen(hang)));
    snprintf(args, sizeof args, "pose stickman --scene '%s'", scene);
    CHECK(run_cli(args, &out, &err) == 0);
    /* the first joint printed is the new root, a free joint (7 numbers) */
    const char* q = out ? strstr(out, "\nq ") : NULL;
    CHECK(q && !strncmp(q, "\nq left hand: ", 14));
    CHECK(out && strstr(out, "status=OK") && strstr(out, "unmet_frames=0"));
    /* --root gives the same, and the scene's "root" is what --root overrides */
    snprintf(args, sizeof args, "pose stickman --scene '%s' --root 'left hand'", scene);
    CHECK(run_cli(args, &out2, &err2) == 0);
    CHECK(out && out2 && !strcmp(out, out2));
    free(out2), free(err2);
    snprintf(args, sizeof args, "pose stickman --scene '%s' --root pelvis", scene);
    CHECK(run_cli(args, &out2, &err2) == 0);
    CHECK(out2 && strstr(out2, "\nq pelvis: "));
    free(out2), free(err2);
    free(out), free(err);
    remove(scene);
    /* a root the figure does not have: file, line and field */
    const char* bad = "{\n  \"root\": \"left hnd\"\n}\n";
    snprintf(scene, sizeof scene, "%s", mn_test_write_temp(".json", bad, strlen(bad)));
    snprintf(args, sizeof args, "pose stickman --scene '%s'", scene);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(err && strstr(err, ":2: root: no joint named \"left hnd\"") && strstr(err, "left hand"));
    free(out), free(err);
    remove(scene);
}

/* A scene's figure animated by a sequence document and re-rooted by its entry's "root" (Welman
 * 2.1.2, 6.3): the crouch's keys moved onto the figure hanging from its left foot
 * (mn_seq_reroot), so at each key (frames 0, 30, 60) every joint is where the figure keeps
 * its own root puts it; a root the sequence cannot follow names the entry's field. */
static void test_scene_sequence_root(void) {
    static const char* const scenes[2] = {
        "{\"figures\": [{\"name\": \"a\", \"sequence\": \"" MN_SOURCE
        "/docs/examples/crouch_keys.json\"}]}\n",
        "{\"figures\": [{\"name\": \"a\", \"sequence\": \"" MN_SOURCE
        "/docs/examples/crouch_keys.json\",\n \"root\": \"left foot\"}]}\n"};
    char bvh[2][256];
    for (int k = 0; k < 2; k++) {
        char scene[256], args[1024], *out, *err;
        snprintf(scene, sizeof scene, "%s",
                 mn_test_write_temp(".json", scenes[k], strlen(scenes[k])));
        snprintf(bvh[k], sizeof bvh[k], "%s/crouch%d.a.bvh", mn_test_temp_dir(), k);
        snprintf(args, sizeof args, "pose --scene '%s' --out '%s/crouch%d.bvh'", scene,
                 mn_test_temp_dir(), k);
        CHECK(run_cli(args, &out, &err) == 0);
        CHECK(out && strstr(out, "frames=61 status=OK") &&
              strstr(out, k ? "\nq a/left foot: " : "\nq a/pelvis: "));
        free(out), free(err);
        remove(scene);
    }
    /* every joint of the crouch by name (the BVH names "left_knee" what the figure names
     * "left knee") at frames 0, 30 and 60 */
    mn_motion a, b;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    mn_model* ma = read_bvh(bvh[0], &a);
    mn_model* mb = read_bvh(bvh[1], &b);
    double gap = 1e300;
    int matched = 0;
    CHECK(ma && mb && a.nframes == 61 && b.nframes == 61 && !strcmp(mb->jnt_name[0], "left_foot"));
    if (ma && mb && a.nframes == 61 && b.nframes == 61) {
        gap = 0;
        mn_data* da = mn_data_create(ma, 0);
        mn_data* db = mn_data_create(mb, 0);
        for (int f = 0; f <= 60; f += 30) {
            memcpy(da->q, a.q + (size_t)f * ma->nq, sizeof(double) * (size_t)ma->nq);
            memcpy(db->q, b.q + (size_t)f * mb->nq, sizeof(double) * (size_t)mb->nq);
            mn_fk(ma, da);
            mn_fk(mb, db);
            for (int j = 0; j < ma->njoint; j++) {
                char name[128];
                snprintf(name, sizeof name, "%s", ma->jnt_name[j]);
                for (char* c = name; *c; c++)
                    if (*c == ' ') *c = '_';
                int k = mn_model_find_joint(mb, name);
                if (k < 0) continue;
                matched += f == 0;
                gap = fmax(gap, mn_vec3_dist(da->xf[j].p, db->xf[k].p));
            }
        }
        mn_data_destroy(da);
        mn_data_destroy(db);
    }
    CHECK(ma && matched == ma->njoint && gap < 1e-6);
    if (!(gap < 1e-6))
        fprintf(stderr, "  re-rooted crouch keys: %g apart (%d joints)\n", gap, matched);
    mn_motion_free(&a), mn_motion_free(&b);
    mn_model_destroy(ma), mn_model_destroy(mb);
    remove(bvh[0]), remove(bvh[1]);
    /* a sequence document records its root: anim info says it, anim bake bakes the
     * re-rooted figure */
    const char* doc =
        "{\"figure\": \"stickman\", \"root\": \"left foot\",\n \"keys\": "
        "[{\"frame\": 0, \"pose\": {\"left knee~\": 0.4}}, {\"frame\": 4, \"pose\": {}}]}";
    char seq[256], sargs[1024], *sout, *serr;
    snprintf(seq, sizeof seq, "%s", mn_test_write_temp(".json", doc, strlen(doc)));
    snprintf(sargs, sizeof sargs, "anim info '%s'", seq);
    CHECK(run_cli(sargs, &sout, &serr) == 0);
    CHECK(sout && strstr(sout, "\nroot: left foot (the figure re-rooted there)\n"));
    free(sout), free(serr);
    snprintf(sargs, sizeof sargs, "anim bake '%s' --out '%s/rooted.bvh'", seq, mn_test_temp_dir());
    CHECK(run_cli(sargs, &sout, &serr) == 0 && sout && strstr(sout, "frames=5"));
    free(sout), free(serr);
    mn_motion rm;
    memset(&rm, 0, sizeof rm);
    snprintf(sargs, sizeof sargs, "%s/rooted.bvh", mn_test_temp_dir());
    mn_model* rmod = read_bvh(sargs, &rm);
    CHECK(rmod && !strcmp(rmod->jnt_name[0], "left_foot") && rm.nframes == 5);
    mn_motion_free(&rm);
    mn_model_destroy(rmod);
    remove(sargs);
    remove(seq);
    /* a root the figure does not have: the entry's line and field */
    const char* bad = "{\"figures\": [{\"name\": \"a\", \"sequence\": \"" MN_SOURCE
                      "/docs/examples/crouch_keys.json\",\n \"root\": \"left ft\"}]}\n";
    char scene[256], args[512], *out, *err;
    snprintf(scene, sizeof scene, "%s", mn_test_write_temp(".json", bad, strlen(bad)));
    snprintf(args, sizeof args, "pose --scene '%s'", scene);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(err && strstr(err, ":2: figures[0].root: no joint named \"left ft\""));
    free(out), free(err);
    remove(scene);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_convert_root);
    RUN(test_convert_root_positions);
    RUN(test_pose_root);
    RUN(test_scene_sequence_root);
    return mn_test_report();
}
