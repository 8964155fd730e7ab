/* Several figures in one scene (Welman 6.1, 7.3): two stick figures holding hands, both
 * feet of each locked, the first dragged back and down over 30 frames
 * (docs/examples/holding_hands.json), and both crouching together, each animated by a
 * sequence document (holding_hands_crouch.json), and one sequence document of both figures
 * (holding_hands_sequence.json). `pose --out` and `anim bake --out` write one BVH per
 * figure; read back, every lock holds within 1e-5 m at every frame and the hands stay joined. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define HANDS MN_SOURCE "/docs/examples/holding_hands.json"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

static mn_model* read_back(const char* path, const mn_model* names_of, mn_motion* mo) {
    mn_model* m = NULL;
    mn_error err;
    mn_bvh_options o = mn_bvh_default();
    o.names_of = names_of; /* "right_hand" -> "right hand" */
    if (mn_bvh_read(path, &o, &m, mo, NULL, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return NULL;
    }
    return m;
}

/* Poses `scene` (ann and bob holding hands, both feet of each locked), or with `bake` bakes
 * the sequence document `scene` of both figures, and reads the two BVH files back: every lock
 * within 1e-5 m at every one of `frames` frames. `crouch`: ann's pelvis goes down by more than
 * that at the middle frame (the keyed crouch); else it moves back and down with the drag. */
static void holding_hands_run(const char* scene, int frames, double crouch, int bake) {
    char out_path[256], args[1024], *out, *err;
    snprintf(out_path, sizeof out_path, "%s/hands.bvh", mn_test_temp_dir());
    snprintf(args, sizeof args, "%s '%s' --tol 1e-6 --out '%s'",
             bake ? "anim bake" : "pose --scene", scene, out_path);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "figures=2 ") && strstr(out, "unmet_frames=0"));
    if (bake)
        CHECK(out && strstr(out, "figure=ann out=") && strstr(out, "figure=bob out="));
    else
        CHECK(out && strstr(out, "status=OK") && strstr(out, "\nq ann/pelvis: ") &&
              strstr(out, "\nq bob/pelvis: "));
    free(out), free(err);
    mn_error e;
    mn_model* stick = mn_stickman_model(&e);
    char pa[256], pb[256];
    snprintf(pa, sizeof pa, "%s/hands.ann.bvh", mn_test_temp_dir());
    snprintf(pb, sizeof pb, "%s/hands.bob.bvh", mn_test_temp_dir());
    mn_motion ma, mb;
    memset(&ma, 0, sizeof ma), memset(&mb, 0, sizeof mb);
    mn_model* a = read_back(pa, stick, &ma);
    mn_model* b = read_back(pb, stick, &mb);
    CHECK(a && b && ma.nframes == frames && mb.nframes == frames);
    if (a && b && ma.nframes == frames && mb.nframes == frames) {
        mn_data* da = mn_data_create(a, 0);
        mn_data* db = mn_data_create(b, 0);
        const char* feet[2] = {"left foot", "right foot"};
        mn_vec3 fa0[2], fb0[2];
        mn_mat3 ra0[2], rb0[2];
        double feet_err = 0, rot_err = 0, hands_err = 0, moved = 0, pelvis0 = 0;
        for (int f = 0; f < frames; f++) {
            memcpy(da->q, ma.q + (size_t)f * a->nq, sizeof(double) * (size_t)a->nq);
            memcpy(db->q, mb.q + (size_t)f * b->nq, sizeof(double) * (size_t)b->nq);
            mn_fk(a, da);
            mn_fk(b, db);
            for (int i = 0; i < 2; i++) {
                int ja = mn_model_find_joint(a, feet[i]), jb = mn_model_find_joint(b, feet[i]);
                if (f == 0) {
                    fa0[i] = da->xf[ja].p, fb0[i] = db->xf[jb].p;
                    ra0[i] = da->xf[ja].R, rb0[i] = db->xf[jb].R;
                }
                feet_err = fmax(feet_err, mn_vec3_dist(da->xf[ja].p, fa0[i]));
                feet_err = fmax(feet_err, mn_vec3_dist(db->xf[jb].p, fb0[i]));
                for (int k = 0; k < 9; k++) {
                    rot_err = fmax(rot_err, fabs(da->xf[ja].R.m[k] - ra0[i].m[k]));
                    rot_err = fmax(rot_err, fabs(db->xf[jb].R.m[k] - rb0[i].m[k]));
                }
            }
            /* ann's right hand in bob's left, ann's left in bob's right */
            mn_vec3 ar = da->xf[mn_model_find_joint(a, "right hand")].p;
            mn_vec3 al = da->xf[mn_model_find_joint(a, "left hand")].p;
            mn_vec3 bl = db->xf[mn_model_find_joint(b, "left hand")].p;
            mn_vec3 br = db->xf[mn_model_find_joint(b, "right hand")].p;
            hands_err = fmax(hands_err, fmax(mn_vec3_dist(ar, bl), mn_vec3_dist(al, br)));
            if (f == 0) pelvis0 = da->xf[0].p.y;
            if (!crouch && f == frames - 1) moved = mn_vec3_dist(da->xf[0].p, mn_v3(0, 0.95, 0));
            if (crouch && f == frames / 2) moved = pelvis0 - da->xf[0].p.y;
        }
        CHECK(feet_err < 1e-5);
        CHECK(rot_err < 1e-5);
        CHECK(hands_err < 1e-5);
        CHECK(moved > (crouch ? crouch : 0.05)); /* ann's pelvis went down */
        if (!(feet_err < 1e-5 && hands_err < 1e-5 && rot_err < 1e-5))
            fprintf(stderr, "  feet %g, soles %g, hands %g\n", feet_err, rot_err, hands_err);
        /* bob stands 0.9 m in front of ann, facing her */
        memcpy(db->q, mb.q, sizeof(double) * (size_t)b->nq);
        mn_fk(b, db);
        CHECK(fabs(db->xf[mn_model_find_joint(b, "left foot")].p.z - 0.9) < 0.05);
        mn_data_destroy(da);
        mn_data_destroy(db);
    }
    mn_motion_free(&ma), mn_motion_free(&mb);
    mn_model_destroy(a), mn_model_destroy(b), mn_model_destroy(stick);
    remove(pa), remove(pb);
}

static void holding_hands(const char* scene, int frames, double crouch) {
    holding_hands_run(scene, frames, crouch, 0);
}

static void test_holding_hands(void) {
    holding_hands(HANDS, 30, 0);
}

/* Each figure animated by a sequence document (the keyed crouch of crouch_keys.json), bob
 * placed in front of ann through his keys: 61 frames, the pelvis 10 cm down at the middle. */
static void test_holding_hands_crouch(void) {
    holding_hands(MN_SOURCE "/docs/examples/holding_hands_crouch.json", 61, 0.1);
}

/* One sequence document of both figures (docs/examples/holding_hands_sequence.json): each
 * keyed inline, bob placed 0.9 m in front of ann, the hands joined and every foot locked;
 * `anim bake` solves both together over 61 frames and writes a BVH each. */
static void test_holding_hands_sequence(void) {
    holding_hands_run(MN_SOURCE "/docs/examples/holding_hands_sequence.json", 61, 0.1, 1);
    /* anim info prints the figures */
    char *out, *err;
    CHECK(run_cli("anim info '" MN_SOURCE "/docs/examples/holding_hands_sequence.json'", &out,
                  &err) == 0);
    CHECK(out && strstr(out, "figures: 2, frames 0 to 60") &&
          strstr(out, "\n  bob: stickman (stickman), 31 joints") &&
          strstr(out, "0 equal hands 1 on ann/right hand and bob/left hand"));
    free(out), free(err);
    /* a motion script applies to one figure */
    CHECK(run_cli("anim bake '" MN_SOURCE "/docs/examples/holding_hands_sequence.json' --out "
                  "x.bvh --script y.mscript",
                  &out, &err) == 2 &&
          err && strstr(err, "applies to one figure"));
    free(out), free(err);
}

/* At frame `frame` of the BVH `path` read back: joint's height (world_y), or the angle its
 * frame turns from the torso's. */
static double bvh_value(const char* path, const char* joint, int frame, int world_y) {
    mn_error e;
    mn_model* stick = mn_stickman_model(&e);
    mn_motion mo;
    memset(&mo, 0, sizeof mo);
    mn_model* m = read_back(path, stick, &mo);
    double v = NAN;
    if (m && frame < mo.nframes) {
        int j = mn_model_find_joint(m, joint);
        mn_data* d = mn_data_create(m, 0);
        memcpy(d->q, mo.q + (size_t)frame * m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        if (world_y) {
            v = d->xf[j].p.y;
        } else { /* the turn of joint's frame from the torso's */
            mn_mat3 Rt = mn_mat3_transpose(&d->xf[mn_model_find_joint(m, "torso")].R);
            mn_mat3 R = mn_mat3_mul(&Rt, &d->xf[j].R);
            v = acos(fmin(1, fmax(-1, (R.m[0] + R.m[4] + R.m[8] - 1) / 2)));
        }
        mn_data_destroy(d);
    }
    mn_motion_free(&mo);
    mn_model_destroy(m);
    mn_model_destroy(stick);
    return v;
}

/* A layer on one figure and a time warp on the other (holding_hands_layered.json): ann
 * twists and nods through an additive layer, bob's crouch is retimed; baked together, every
 * lock holds within 1e-5 m at each of the 61 frames and the hands stay joined, and the layer
 * and the warp show: ann's nod at frame 30 and bob's pelvis at frame 20 differ from the plain
 * document's. */
static void test_holding_hands_layered(void) {
    const char* plain = MN_SOURCE "/docs/examples/holding_hands_sequence.json";
    const char* layered = MN_SOURCE "/docs/examples/holding_hands_layered.json";
    double nod[2], bob_y[2];
    for (int k = 0; k < 2; k++) {
        holding_hands_run(k ? layered : plain, 61, 0.1, 1);
        char pa[256], pb[256], args[1024], *out, *err;
        snprintf(pa, sizeof pa, "%s/hands.ann.bvh", mn_test_temp_dir());
        snprintf(pb, sizeof pb, "%s/hands.bob.bvh", mn_test_temp_dir());
        snprintf(args, sizeof args, "anim bake '%s' --tol 1e-6 --out '%s/hands.bvh'",
                 k ? layered : plain, mn_test_temp_dir());
        CHECK(run_cli(args, &out, &err) == 0);
        free(out), free(err);
        nod[k] = bvh_value(pa, "head", 30, 0);
        bob_y[k] = bvh_value(pb, "pelvis", 20, 1);
        remove(pa), remove(pb);
    }
    CHECK(fabs(nod[1] - nod[0] - 0.4) < 1e-3); /* the layer's whole weight at frame 30 */
    CHECK(bob_y[1] - bob_y[0] > 0.02);         /* bob's crouch later: higher at frame 20 */
    char *out, *err;
    CHECK(run_cli("anim info '" MN_SOURCE "/docs/examples/holding_hands_layered.json'", &out,
                  &err) == 0);
    CHECK(out && strstr(out, "\n    layer 0 twist and nod: additive, 1 keys\n") &&
          strstr(out, "\n    time warp: 3 keys, output frames 0 to 60\n"));
    free(out), free(err);
}

/* Mistakes name the scene's file, line and field. */
static void test_figure_errors(void) {
    struct {
        const char* text;
        const char* want;
    } bad[] = {
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\"},\n"
         " {\"name\": \"b\", \"file\": \"stickman\"}],\n"
         " \"handles\": [{\"name\": \"h\",\n \"joint\": \"right hand\"}]}\n",
         ":4: handles[0].joint: which figure?"},
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\"},\n"
         " {\"name\": \"b\", \"file\": \"stickman\"}],\n"
         " \"handles\": [{\"name\": \"h\",\n \"joint\": \"b/right hnd\"}]}\n",
         ":4: handles[0].joint: no joint named \"right hnd\" in b"},
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\"},\n"
         " {\"name\": \"a\", \"file\": \"stickman\"}]}\n",
         ":2: figures[1].name: duplicate figure name"},
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\",\n \"root\": \"hnd\"}]}\n",
         ":2: figures[0].root: no joint named \"hnd\""},
        {"{\"figures\": []}\n", "figures: an empty list"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char scene[256], args[512], *out, *err;
        snprintf(scene, sizeof scene, "%s",
                 mn_test_write_temp(".json", bad[i].text, strlen(bad[i].text)));
        snprintf(args, sizeof args, "pose --scene '%s'", scene);
        int rc = run_cli(args, &out, &err);
        int ok = rc == 1 && err && strstr(err, bad[i].want);
        if (!ok) fprintf(stderr, "  case %zu: exit %d: %s", i, rc, err ? err : "");
        CHECK(ok);
        free(out), free(err);
        remove(scene);
    }
    /* a scene with figures takes no MODEL */
    char *out, *err;
    CHECK(run_cli("pose stickman --scene '" HANDS "'", &out, &err) == 2 &&
          strstr(err, "names its figures"));
    free(out), free(err);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_holding_hands);
    RUN(test_holding_hands_crouch);
    RUN(test_holding_hands_sequence);
    RUN(test_holding_hands_layered);
    RUN(test_figure_errors);
    return mn_test_report();
}
