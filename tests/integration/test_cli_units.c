/* `marionette convert` to glTF in glTF's axes and unit (glTF 2.0, 3.4: +Y up, metres): a
 * URDF (+Z up) turned at its root, read back to the URDF's FK turned (x, z, -y), --z-up
 * keeping its axes, and the same for BVH (+Y up by convention); a BVH's lengths scaled to metres by
 * the figure's height (the CMU walk's 25 units, Boxing_Toes' 173 cm), said on stderr, read back to
 * the BVH's FK times the scale;
 * --scale S instead, --scale 1 keeping the file's lengths; the usage errors. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define PANDA MN_DATA "/robots/franka_panda/panda.urdf"
#define WALK MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"
#define TOES MN_DATA "/mocap/other_skeleton/Boxing_Toes.bvh"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

/* The largest distance between joint j of b (frame fb) and the same-named joint of a
 * (frame fa) mapped by scale and, when turn, (x, y, z) -> (x, z, -y); -1 when a joint of
 * a is missing in b (but for the leaves a BVH b writes as nameless End Sites). */
static double worst(const char* fa, int frame_a, const char* fb, int frame_b, double scale,
                    int turn) {
    mn_model *a = NULL, *b = NULL;
    mn_motion ma, mb;
    mn_error e;
    double w = -1;
    if (mn_figure_read(fa, &a, &ma, NULL, &e) != MN_OK) return -1;
    if (mn_figure_read(fb, &b, &mb, NULL, &e) != MN_OK) {
        mn_motion_free(&ma);
        mn_model_destroy(a);
        return -1;
    }
    mn_data *da = mn_data_create(a, 0), *db = mn_data_create(b, 0);
    if (frame_a >= 0 && frame_a < ma.nframes)
        memcpy(da->q, ma.q + (size_t)frame_a * (size_t)a->nq, sizeof(double) * (size_t)a->nq);
    if (frame_b >= 0 && frame_b < mb.nframes)
        memcpy(db->q, mb.q + (size_t)frame_b * (size_t)b->nq, sizeof(double) * (size_t)b->nq);
    mn_fk(a, da);
    mn_fk(b, db);
    w = 0;
    for (int j = 0; j < a->njoint && w >= 0; j++) {
        int k = mn_model_find_joint(b, a->jnt_name[j]);
        size_t nb = strlen(fb);
        if (k < 0 && nb > 4 && !strcmp(fb + nb - 4, ".bvh") && a->jnt_nchild[j] == 0)
            continue; /* a fixed leaf: a BVH End Site, which keeps no name */
        if (k < 0) {
            w = -1;
            break;
        }
        mn_vec3 p = da->xf[j].p, q = db->xf[k].p;
        mn_vec3 r = turn ? mn_v3(p.x, p.z, -p.y) : p;
        w = fmax(w, fmax(fabs(scale * r.x - q.x),
                         fmax(fabs(scale * r.y - q.y), fabs(scale * r.z - q.z))));
    }
    mn_data_destroy(da);
    mn_data_destroy(db);
    mn_motion_free(&ma);
    mn_motion_free(&mb);
    mn_model_destroy(a);
    mn_model_destroy(b);
    return w;
}

static void test_urdf_stands_up(void) {
    char glb[300], args[1024], *out, *err;
    snprintf(glb, sizeof glb, "%s/panda.glb", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert '" PANDA "' '%s'", glb);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(err && strstr(err, "is +Z up (URDF): turned so that +Y is up, as glTF is (--z-up "
                             "keeps +Z up)"));
    free(out), free(err);
    double w = worst(PANDA, -1, glb, -1, 1, 1);
    printf("  panda.glb: FK of the URDF turned to +Y up, largest difference %.3g m\n", w);
    CHECK(w >= 0 && w < 1e-6);
    CHECK(!(worst(PANDA, -1, glb, -1, 1, 0) < 1e-3)); /* not the URDF's own axes */
    /* --z-up: the URDF's axes */
    snprintf(args, sizeof args, "convert '" PANDA "' '%s' --z-up", glb);
    CHECK(run_cli(args, &out, &err) == 0 && err && !strstr(err, "turned"));
    free(out), free(err);
    w = worst(PANDA, -1, glb, -1, 1, 0);
    CHECK(w >= 0 && w < 1e-6);
    /* BVH, +Y up by convention, the same way: the root turned in the file's frame 0 */
    char bvh[300];
    snprintf(bvh, sizeof bvh, "%s/panda.bvh", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert '" PANDA "' '%s'", bvh);
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "as BVH is (--z-up keeps +Z up)"));
    free(out), free(err);
    w = worst(PANDA, -1, bvh, 0, 1, 1);
    printf("  panda.bvh: FK of the URDF turned to +Y up, largest difference %.3g m\n", w);
    CHECK(w >= 0 && w < 1e-9);
    snprintf(args, sizeof args, "convert '" PANDA "' '%s' --z-up", bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    w = worst(PANDA, -1, bvh, 0, 1, 0);
    CHECK(w >= 0 && w < 1e-9);
    /* the UR5 with a motion-free file the same way */
    snprintf(args, sizeof args, "convert '" MN_DATA "/robots/ur5/ur5_robot.urdf' '%s'", glb);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    w = worst(MN_DATA "/robots/ur5/ur5_robot.urdf", -1, glb, -1, 1, 1);
    CHECK(w >= 0 && w < 1e-6);
}

static void test_bvh_in_metres(void) {
    char glb[300], args[1024], *out, *err;
    snprintf(glb, sizeof glb, "%s/walk.glb", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert '" WALK "' '%s'", glb);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(err && strstr(err, "cmu_02_01_walk.bvh is 25.22 tall at rest: taken as CMU units, "
                             "written at scale 0.056444 (1.42 m tall; --scale 1 keeps the "
                             "file's lengths)"));
    free(out), free(err);
    for (int f = 0; f < 344; f += 171) {
        double w = worst(WALK, f, glb, f, 0.056444, 0);
        CHECK(w >= 0 && w < 1e-6);
    }
    /* --scale 1 keeps the file's lengths; --scale 0.01 any other */
    snprintf(args, sizeof args, "convert '" WALK "' '%s' --scale 1", glb);
    CHECK(run_cli(args, &out, &err) == 0 && err && !strstr(err, "taken as"));
    free(out), free(err);
    double w = worst(WALK, 100, glb, 100, 1, 0);
    CHECK(w >= 0 && w < 1e-4);
    snprintf(args, sizeof args, "convert '" WALK "' '%s' --scale 0.01", glb);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    w = worst(WALK, 100, glb, 100, 0.01, 0);
    CHECK(w >= 0 && w < 1e-6);
    /* Boxing_Toes: centimetres */
    snprintf(args, sizeof args, "convert '" TOES "' '%s'", glb);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(err && strstr(err, "taken as centimetres, written at scale 0.01 (1.73 m tall"));
    free(out), free(err);
    /* a BVH IN at --scale gives other outputs that scale too */
    char bvh[300];
    snprintf(bvh, sizeof bvh, "%s/walk_m.bvh", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert '" WALK "' '%s' --scale 0.056444", bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    w = worst(WALK, 200, bvh, 200, 0.056444, 0);
    CHECK(w >= 0 && w < 1e-6);
    /* BVH output keeps the file's lengths unless asked */
    snprintf(args, sizeof args, "convert '" WALK "' '%s'", bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    w = worst(WALK, 200, bvh, 200, 1, 0);
    CHECK(w >= 0 && w < 1e-4);
}

static void test_usage(void) {
    char args[1024], *out, *err;
    snprintf(args, sizeof args, "convert '" WALK "' '%s/x.glb' --scale 0", mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 2 && err && strstr(err, "--scale needs a number > 0"));
    free(out), free(err);
    snprintf(args, sizeof args, "convert '" WALK "' '%s/x.glb' --z-up", mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 2 && err && strstr(err, "--z-up is for a URDF IN"));
    free(out), free(err);
    snprintf(args, sizeof args, "convert '" PANDA "' '%s/x.skel' --scale 2", mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 2 && err && strstr(err, "--scale is for a .glb OUT"));
    free(out), free(err);
    /* a skinned mesh is written in its own unit only */
    snprintf(args, sizeof args, "convert '" MN_DATA "/skinned/CesiumMan.glb' '%s/x.glb' --scale 2",
             mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 1 && err &&
          strstr(err, "skinned mesh is written in its own"));
    free(out), free(err);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_urdf_stands_up);
    RUN(test_bvh_in_metres);
    RUN(test_usage);
    return mn_test_report();
}
