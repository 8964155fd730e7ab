/* `marionette anim info` and `marionette anim bake` end to end: usage, the summary of the
 * shipped example, a bake whose BVH keeps the locked feet still (and a plain bake that does
 * not), and bad input naming the file, line and field. */
#include <marionette/clip.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "glb_check.h"
#include "test.h"

#define EXAMPLE MN_SOURCE "/docs/examples/crouch_sequence.json"
#define FOX MN_DATA "/skinned/Fox.glb"
#define FOX_SEQ MN_SOURCE "/docs/examples/fox_sequence.json"

/* Runs the CLI with args (a shell-quoted string); captures stdout and stderr separately. */
static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

static void test_usage(void) {
    char *out, *err;
    const char* cmds[] = {"anim --help", "anim info --help", "anim bake --help"};
    for (int i = 0; i < 3; i++) {
        CHECK(run_cli(cmds[i], &out, &err) == 0 && out && strstr(out, "usage: marionette anim"));
        free(out), free(err);
    }
    CHECK(run_cli("anim", &out, &err) == 2);
    free(out), free(err);
    CHECK(run_cli("anim frobnicate x.json", &out, &err) == 2 && strstr(err, "frobnicate"));
    free(out), free(err);
    CHECK(run_cli("anim bake '" EXAMPLE "'", &out, &err) == 2 && strstr(err, "--out"));
    free(out), free(err);
    CHECK(run_cli("anim bake '" EXAMPLE "' --out x.txt", &out, &err) == 2);
    free(out), free(err);
    CHECK(run_cli("--help", &out, &err) == 0 && strstr(out, "anim"));
    free(out), free(err);
}

static void test_info(void) {
    char *out, *err;
    CHECK(run_cli("anim info '" EXAMPLE "'", &out, &err) == 0);
    CHECK(out && strstr(out, "keys: 3, frames 0 to 60 (2 s)") && strstr(out, "constraints: 5"));
    CHECK(out && strstr(out, "interpolation: rotation squad, translation catmull-rom"));
    CHECK(out && strstr(out, "right arm.1 (3 hinges)") &&
          strstr(out, "4 target keys (catmull-rom)"));
    free(out), free(err);
}

/* The largest distance of joint j from where it is at frame 0, over a BVH's frames. */
static double drift(const char* bvh, const char* joint) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_error e;
    mn_model* stick = mn_stickman_model(&e);
    mn_bvh_options opt = mn_bvh_default();
    opt.names_of = stick; /* the file's "left_foot" is the figure's "left foot" */
    mn_status st = mn_bvh_read(bvh, &opt, &m, &mo, NULL, &e);
    mn_model_destroy(stick);
    if (st != MN_OK) {
        fprintf(stderr, "%s\n", e.message);
        return -1;
    }
    int j = mn_model_find_joint(m, joint);
    mn_data* d = mn_data_create(m, 0);
    double worst = 0;
    mn_vec3 p0 = {0, 0, 0};
    for (int f = 0; f < mo.nframes && j >= 0; f++) {
        memcpy(d->q, mo.q + (size_t)f * (size_t)mo.nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        if (f == 0) p0 = d->xf[j].p;
        worst = fmax(worst, mn_vec3_dist(d->xf[j].p, p0));
    }
    int n = mo.nframes;
    mn_data_destroy(d);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return j >= 0 && n == 61 ? worst : -1;
}

static void test_bake(void) {
    char *out, *err;
    char bvh[300], plain[300];
    snprintf(bvh, sizeof bvh, "%s", mn_test_write_temp(".bvh", "", 0));
    snprintf(plain, sizeof plain, "%s", mn_test_write_temp(".bvh", "", 0));
    char args[1024];
    snprintf(args, sizeof args, "anim bake '" EXAMPLE "' --out '%s'", bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "frames=61") && strstr(out, "mode=lagrange") &&
          strstr(out, "unmet_frames=0"));
    free(out), free(err);
    snprintf(args, sizeof args, "anim bake '" EXAMPLE "' --out '%s' --plain", plain);
    CHECK(run_cli(args, &out, &err) == 0 && strstr(out, "mode=plain"));
    free(out), free(err);
    /* BVH keeps angles in degrees with limited digits: the feet stay within 0.5 mm */
    double held = drift(bvh, "left foot"), loose = drift(plain, "left foot");
    printf("  left foot moves %.2e m in the baked BVH, %.3f m in the plain bake\n", held, loose);
    CHECK(held >= 0 && held < 5e-4);
    CHECK(loose > 0.01);
    /* the same as a glTF binary */
    char glb[300];
    snprintf(glb, sizeof glb, "%s", mn_test_write_temp(".glb", "", 0));
    snprintf(args, sizeof args, "anim bake '" EXAMPLE "' --out '%s'", glb);
    CHECK(run_cli(args, &out, &err) == 0 && strstr(out, "frames=61"));
    free(out), free(err);
    size_t n = 0;
    char* g = mn_test_read_file(glb, &n);
    CHECK(g && n > 12 && !memcmp(g, "glTF", 4));
    free(g);
    remove(glb);
    remove(bvh);
    remove(plain);
}

/* A .glb written from a skinned glTF figure carries the mesh (as many vertices and triangles
 * as the source, the same skinned rest pose) and its animation puts every joint where the
 * BVH the same command writes does, to 1e-6 of the figure's size (the .glb holds floats). */
static void check_skinned(const char* what, const char* glb, const char* bvh, const int* frames,
                          int n, int nframes) {
    glb_check c;
    CHECK(glb_check_files(glb, FOX, bvh, frames, n, &c));
    printf("  %s: %d vertices (source %d), %d keys, %d joints, rest mesh gap %.2g, joint gap "
           "%.2g of the figure size %.3g\n",
           what, c.nverts, c.src_nverts, c.nkeys, c.joints, c.rest_gap / c.size,
           c.motion_gap / c.size, c.size);
    CHECK(c.src_nverts > 0 && c.nverts == c.src_nverts && c.ntris == c.src_ntris);
    CHECK(c.nkeys == nframes && c.bvh_frames == nframes && c.joints == 24);
    CHECK(c.size > 50 && c.rest_gap < 1e-6 * c.size && c.motion_gap < 1e-6 * c.size);
}

/* anim bake of a sequence whose figure is a skinned glTF: the .glb keeps the fox's mesh. */
static void test_bake_skinned(void) {
    char *out, *err, args[1024], glb[300], bvh[300];
    snprintf(glb, sizeof glb, "%s", mn_test_write_temp(".glb", "", 0));
    snprintf(bvh, sizeof bvh, "%s", mn_test_write_temp(".bvh", "", 0));
    snprintf(args, sizeof args, "anim bake '%s' --out '%s'", FOX_SEQ, glb);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "frames=37") &&
          strstr(out, "unmet_frames=0"));
    free(out), free(err);
    snprintf(args, sizeof args, "anim bake '%s' --out '%s'", FOX_SEQ, bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    int frames[] = {0, 7, 12, 18, 30, 36};
    check_skinned("anim bake fox_sequence.json", glb, bvh, frames, 6, 37);
    /* the hips moved (centimetres): frame 18 is not the rest pose */
    mn_gltf g;
    mn_error e;
    if (mn_gltf_read(glb, &g, NULL, &e) == MN_OK) {
        double w0[12 * 24], w1[12 * 24];
        CHECK(g.njoints == 24 && mn_gltf_sample(&g, 0, 0, w0) == MN_OK &&
              mn_gltf_sample(&g, 0, g.anims[0].key_times[18], w1) == MN_OK);
        CHECK(g.name && !strcmp(g.name, "fox")); /* the skin keeps Fox.glb's name */
        int hip = -1;
        for (int j = 0; j < g.njoints; j++)
            if (!strcmp(g.joint_name[j], "b_Hip_01")) hip = j;
        double dy = hip >= 0 ? w0[12 * hip + 7] - w1[12 * hip + 7] : 0;
        double dz = hip >= 0 ? w0[12 * hip + 11] - w1[12 * hip + 11] : 0;
        CHECK(sqrt(dy * dy + dz * dz) > 3);
        mn_gltf_free(&g);
    }
    remove(glb);
    remove(bvh);
}

static void test_bad_input(void) {
    char *out, *err;
    const char* text = "{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0,\n \"pose\": "
                       "{\"torso.1\": \"a\"}}]}";
    char path[300];
    snprintf(path, sizeof path, "%s", mn_test_write_temp(".json", text, strlen(text)));
    char args[1024];
    snprintf(args, sizeof args, "anim info '%s'", path);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(err && strstr(err, ":3: keys[0].pose.torso.1: expected a finite number"));
    free(out), free(err);
    char bvh[300];
    snprintf(bvh, sizeof bvh, "%s", mn_test_write_temp(".bvh", "keep", 4));
    snprintf(args, sizeof args, "anim bake '%s' --out '%s'", path, bvh);
    CHECK(run_cli(args, &out, &err) == 1);
    free(out), free(err);
    /* nothing written over the existing file */
    char* kept = mn_test_read_file(bvh, NULL);
    CHECK(kept && !strcmp(kept, "keep"));
    free(kept);
    remove(bvh);
    remove(path);
}

/* Bounds of a bake: keys 10 million frames apart in a 89-byte document are refused before
 * any work (the limit and the frames named, nothing written); a constraint whose violation
 * is not finite exits 1 (not 0 with max_violation=inf), nothing written. */
static void test_bake_bounds(void) {
    char *out, *err;
    const char* amp = "{\"figure\":\"stickman\",\"fps\":30,\"keys\":[{\"frame\":0,\"pose\":{}},"
                      "{\"frame\":9999998,\"pose\":{}}]}";
    char path[300], bvh[300], args[1024];
    snprintf(path, sizeof path, "%s", mn_test_write_temp(".json", amp, strlen(amp)));
    snprintf(bvh, sizeof bvh, "%s", mn_test_write_temp(".bvh", "keep", 4));
    snprintf(args, sizeof args, "anim bake '%s' --out '%s'", path, bvh);
    CHECK(run_cli(args, &out, &err) == 2);
    CHECK(err && strstr(err, "9999999 frames") && strstr(err, "more than 1000000"));
    free(out), free(err);
    /* within the limit with a larger step: frames 0, 1000, ..., 9999000 and one more that
     * holds the last key (at 9999998, not a whole number of steps away) */
    snprintf(args, sizeof args, "anim bake '%s' --out '%s' --plain --step 1000", path, bvh);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "frames=10001 "));
    free(out), free(err);
    remove(path);
    const char* inf =
        "{\"figure\": \"stickman\", \"fps\": 30, \"keys\": [{\"frame\": 0, \"pose\": "
        "{}}, {\"frame\": 2, \"pose\": {}}],\n \"handles\": [{\"name\": \"foot\", "
        "\"joint\": \"left foot\"}],\n \"constraints\": [{\"type\": \"pin\", \"handle\": "
        "\"foot\", \"target\": [1e300, 0, 0]}]}";
    snprintf(path, sizeof path, "%s", mn_test_write_temp(".json", inf, strlen(inf)));
    FILE* f = fopen(bvh, "wb");
    CHECK(f && fwrite("keep", 1, 4, f) == 4);
    if (f) fclose(f);
    snprintf(args, sizeof args, "anim bake '%s' --out '%s'", path, bvh);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(err && strstr(err, "not finite") && (!out || !strstr(out, "inf")));
    free(out), free(err);
    char* kept = mn_test_read_file(bvh, NULL);
    CHECK(kept && !strcmp(kept, "keep"));
    free(kept);
    remove(bvh);
    remove(path);
}

static void test_import(void) {
    char *out, *err;
    char doc[300];
    snprintf(doc, sizeof doc, "%s", mn_test_write_temp(".json", "", 0));
    char args[1024];
    snprintf(args, sizeof args,
             "anim import '" MN_DATA
             "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' --scale 0.056444 --tol 0.01 --out '%s'",
             doc);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "frames=344") && strstr(out, "keys="));
    int keys = 0;
    const char* k = out ? strstr(out, "keys=") : NULL;
    if (k) keys = atoi(k + 5);
    CHECK(keys > 2 && keys < 344);
    free(out), free(err);
    /* the document reads back and names the take as its figure */
    snprintf(args, sizeof args, "anim info '%s'", doc);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "cmu_02_01_walk") &&
          strstr(out, "fps: 120"));
    free(out), free(err);
    CHECK(run_cli("anim import '" MN_DATA
                  "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' --out x.txt",
                  &out, &err) == 2);
    free(out), free(err);
    remove(doc);
}

/* marionette anim compress: the figures as key=value, and a clip file that loads onto the
 * take's figure and keeps the take within the tolerance. */
/* marionette anim compress of a sequence document: baked, its locked feet held to
 * --lock-tol, the ratio without the locks printed beside; a bad --lock-tol refused. */
static void test_compress_locks(void) {
    char *out, *err;
    CHECK(run_cli("anim compress '" MN_DATA "/../docs/examples/crouch_sequence.json' --tol 0.0005",
                  &out, &err) == 0);
    double lock_error = 1, ratio = 0, unlocked = 0;
    const char* l = out ? strstr(out, "lock_error=") : NULL;
    const char* r = out ? strstr(out, " ratio=") : NULL;
    const char* u = out ? strstr(out, "unlocked_ratio=") : NULL;
    CHECK(l && r && u && strstr(out, "locks=8") && strstr(out, "lock_tol=0.0001"));
    if (l && r && u) {
        lock_error = atof(l + 11), ratio = atof(r + 7), unlocked = atof(u + 15);
        CHECK(lock_error <= 1e-4 && ratio > 0 && unlocked > ratio); /* the locks cost bytes here */
    }
    free(out), free(err);
    CHECK(run_cli("anim compress '" MN_DATA "/../docs/examples/crouch_sequence.json' --lock-tol 0",
                  &out, &err) == 2);
    free(out), free(err);
}

static void test_compress(void) {
    char *out, *err;
    char clip[300];
    snprintf(clip, sizeof clip, "%s", mn_test_write_temp(".mnc", "", 0));
    char args[1024];
    snprintf(args, sizeof args,
             "anim compress '" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' --scale "
             "0.056444 --every 5 --tol 0.0005 --out '%s'",
             clip);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "frames=69") && strstr(out, "raw_bytes=85560") &&
          strstr(out, "ratio=") && strstr(out, "max_error="));
    size_t bytes = 0;
    const char* b = out ? strstr(out, " bytes=") : NULL;
    if (b) bytes = (size_t)atol(b + 7);
    free(out), free(err);
    size_t size = 0;
    char* data = mn_test_read_file(clip, &size);
    CHECK(data && size == bytes && size > 0);
    mn_bvh_options bo = mn_bvh_default();
    bo.scale = 0.056444;
    mn_model* m = NULL;
    mn_motion mo;
    mn_error e;
    CHECK(mn_bvh_read(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", &bo, &m, &mo, NULL,
                      &e) == MN_OK);
    mn_clip* c = m && data ? mn_clip_load(m, data, size, &e) : NULL;
    CHECK(c && mn_clip_frames(c) == 69);
    if (c) {
        double* q = malloc(sizeof(double) * 69 * (size_t)m->nq);
        for (int f = 0; f < 69; f++)
            memcpy(q + (size_t)f * m->nq, mo.q + (size_t)f * 5 * m->nq,
                   sizeof(double) * (size_t)m->nq);
        double worst = 1;
        CHECK(mn_clip_error(c, q, 69, 0.03, &worst, NULL, NULL) == MN_OK);
        CHECK(worst <= 0.0005);
        free(q);
    }
    mn_clip_destroy(c);
    if (m) mn_motion_free(&mo);
    mn_model_destroy(m);
    free(data);
    CHECK(run_cli("anim compress '" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' --tol 0",
                  &out, &err) == 2);
    free(out), free(err);
    remove(clip);
}

/* marionette pose --out: every frame of a scene written out. */
static void test_pose_out(void) {
    char *out, *err;
    char bvh[300];
    snprintf(bvh, sizeof bvh, "%s", mn_test_write_temp(".bvh", "", 0));
    char args[1024];
    snprintf(args, sizeof args,
             "pose stickman --scene '" MN_SOURCE "/docs/examples/crouch_stickman.json' --out '%s'",
             bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    mn_model* m = NULL;
    mn_motion mo;
    mn_error e;
    CHECK(mn_bvh_read(bvh, NULL, &m, &mo, NULL, &e) == MN_OK);
    if (m) {
        /* the scene's frames, the pelvis going down */
        CHECK(mo.nframes > 1);
        mn_data* d = mn_data_create(m, 0);
        int p = mn_model_find_joint(m, "pelvis");
        memcpy(d->q, mo.q, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        double y0 = d->xf[p].p.y;
        memcpy(d->q, mo.q + (size_t)(mo.nframes - 1) * (size_t)mo.nq,
               sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        CHECK(d->xf[p].p.y < y0 - 0.05);
        mn_data_destroy(d);
        mn_motion_free(&mo);
        mn_model_destroy(m);
    }
    snprintf(args, sizeof args,
             "pose stickman --scene '" MN_SOURCE
             "/docs/examples/crouch_stickman.json' --out x.txt");
    CHECK(run_cli(args, &out, &err) == 2);
    free(out), free(err);
    remove(bvh);
}

/* pose --out with a skinned glTF model: the .glb keeps the fox's mesh, and the head came down
 * while the paws stayed pinned. */
static void test_pose_out_skinned(void) {
    char *out, *err, args[1024], glb[300], bvh[300];
    snprintf(glb, sizeof glb, "%s", mn_test_write_temp(".glb", "", 0));
    snprintf(bvh, sizeof bvh, "%s", mn_test_write_temp(".bvh", "", 0));
    snprintf(args, sizeof args,
             "pose '" FOX "' --scene '" MN_SOURCE "/docs/examples/fox_sniff.json' --out '%s'", glb);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "frames=24 status=OK"));
    free(out), free(err);
    snprintf(args, sizeof args,
             "pose '" FOX "' --scene '" MN_SOURCE "/docs/examples/fox_sniff.json' --out '%s'", bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    int frames[] = {0, 5, 11, 23};
    check_skinned("pose Fox.glb --scene fox_sniff.json", glb, bvh, frames, 4, 24);
    mn_gltf g;
    mn_error e;
    if (mn_gltf_read(glb, &g, NULL, &e) == MN_OK) {
        double w0[12 * 24], w1[12 * 24];
        CHECK(g.njoints == 24 && mn_gltf_sample(&g, 0, 0, w0) == MN_OK &&
              mn_gltf_sample(&g, 0, g.anims[0].duration, w1) == MN_OK);
        for (int j = 0; j < g.njoints; j++) {
            double d =
                sqrt((w1[12 * j + 3] - w0[12 * j + 3]) * (w1[12 * j + 3] - w0[12 * j + 3]) +
                     (w1[12 * j + 7] - w0[12 * j + 7]) * (w1[12 * j + 7] - w0[12 * j + 7]) +
                     (w1[12 * j + 11] - w0[12 * j + 11]) * (w1[12 * j + 11] - w0[12 * j + 11]));
            /* frame 0 already carries one twenty-fourth of the drag */
            if (!strcmp(g.joint_name[j], "b_Head_05")) CHECK(d > 20);
            if (!strcmp(g.joint_name[j], "b_LeftFoot02_018") ||
                !strcmp(g.joint_name[j], "b_RightHand_08"))
                CHECK(d < 1e-3);
        }
        mn_gltf_free(&g);
    }
    remove(glb);
    remove(bvh);
}

/* pose --frame N on a glTF file starts from the N-th key time of its animation (--anim
 * picks which one): the pinned paws hold where they stand at that key, not at the rest
 * pose. */
static void test_pose_gltf_frame(void) {
    char *out, *err, args[1024], glb[300];
    snprintf(glb, sizeof glb, "%s", mn_test_write_temp(".glb", "", 0));
    snprintf(args, sizeof args,
             "pose '" FOX "' --scene '" MN_SOURCE
             "/docs/examples/fox_sniff.json' --anim Walk --frame 5 --out '%s'",
             glb);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "frames=24 status=OK"));
    free(out), free(err);
    mn_gltf fox, g;
    mn_error e;
    int have_fox = mn_gltf_read(FOX, &fox, NULL, &e) == MN_OK;
    CHECK(have_fox);
    if (have_fox && mn_gltf_read(glb, &g, NULL, &e) == MN_OK) {
        int walk = mn_gltf_find_anim(&fox, "Walk");
        double ws[12 * 24], w0[12 * 24], wr[12 * 24];
        CHECK(walk == 1 && g.njoints == 24 && fox.njoints == 24 &&
              mn_gltf_sample(&fox, walk, fox.anims[walk].key_times[5], ws) == MN_OK &&
              mn_gltf_sample(&g, 0, g.anims[0].duration, w0) == MN_OK &&
              mn_gltf_sample(&fox, -1, 0, wr) == MN_OK);
        int paws = 0;
        for (int j = 0; j < g.njoints; j++) {
            if (strcmp(g.joint_name[j], "b_LeftFoot02_018") != 0 &&
                strcmp(g.joint_name[j], "b_RightHand_08") != 0)
                continue;
            paws++;
            double d = 0, dr = 0;
            for (int k = 0; k < 3; k++) {
                double a = w0[12 * j + 4 * k + 3], b = ws[12 * j + 4 * k + 3];
                d += (a - b) * (a - b);
                dr += (wr[12 * j + 4 * k + 3] - b) * (wr[12 * j + 4 * k + 3] - b);
            }
            CHECK(sqrt(d) < 1e-3); /* held where Walk's key 5 put it */
            CHECK(sqrt(dr) > 1);   /* and that is not where the rest pose has it */
        }
        CHECK(paws == 2);
        mn_gltf_free(&g);
    }
    if (have_fox) mn_gltf_free(&fox);
    /* a key the animation does not have, an animation the file does not have */
    const char* bad[] = {"--anim Walk --frame 18", "--anim Nope", "--frame 83"};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args,
                 "pose '" FOX "' --scene '" MN_SOURCE "/docs/examples/fox_sniff.json' %s", bad[i]);
        CHECK(run_cli(args, &out, &err) == 1 && err && strstr(err, "Fox.glb") &&
              strstr(err, i == 1 ? "--anim" : "--frame"));
        free(out), free(err);
    }
    /* --anim is for glTF files */
    CHECK(run_cli("pose stickman --scene '" MN_SOURCE
                  "/docs/examples/crouch_stickman.json' --anim Walk",
                  &out, &err) == 2);
    free(out), free(err);
    remove(glb);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_usage);
    RUN(test_info);
    RUN(test_bake);
    RUN(test_bake_skinned);
    RUN(test_bad_input);
    RUN(test_bake_bounds);
    RUN(test_import);
    RUN(test_compress);
    RUN(test_compress_locks);
    RUN(test_pose_out);
    RUN(test_pose_out_skinned);
    RUN(test_pose_gltf_frame);
    return mn_test_report();
}
