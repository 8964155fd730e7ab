/* The figure document: every shipped figure converts, reads back, and poses the same. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static const char* figures[] = {
    "stickman",
    MN_DATA "/robots/franka_panda/panda.urdf",
    MN_DATA "/robots/kuka_iiwa/model.urdf",
    MN_DATA "/robots/nao/nao.urdf",
    MN_DATA "/robots/ur5/ur5_robot.urdf",
    MN_DATA "/robots/xarm6/xarm6_robot.urdf",
    MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh",
    MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh",
    MN_DATA "/skinned/RiggedSimple.glb",
    MN_DATA "/skinned/RiggedFigure.glb",
    MN_DATA "/skinned/SimpleSkin.gltf",
    MN_DATA "/skinned/CesiumMan.glb",
    MN_DATA "/skinned/Fox.glb",
};

static uint64_t rng = 88172645463325252ull;
static double uniform(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* Largest distance between the joint positions and rotations of the two figures after FK. */
static double fk_gap(const mn_model* a, mn_data* da, const mn_model* b, mn_data* db) {
    mn_fk(a, da);
    mn_fk(b, db);
    double gap = 0;
    for (int j = 0; j < a->njoint; j++) {
        const double* x = da->xf[j].R.m;
        const double* y = db->xf[j].R.m;
        for (int k = 0; k < 12; k++)
            gap = fmax(gap, fabs(x[k] - y[k]));
    }
    return gap;
}

static int same3(mn_vec3 a, mn_vec3 b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
}

static void test_round_trip(void) {
    char out[512];
    snprintf(out, sizeof out, "%s/figure.json", mn_test_temp_dir());
    for (size_t f = 0; f < sizeof figures / sizeof *figures; f++) {
        mn_error err;
        mn_model *a = NULL, *b = NULL;
        mn_motion ma, mb;
        CHECK(mn_figure_doc_convert(figures[f], out, NULL, &err) == MN_OK);
        CHECK(mn_figure_read(figures[f], &a, &ma, NULL, &err) == MN_OK);
        mn_status s = mn_figure_doc_read(out, &b, &mb, &err);
        if (s != MN_OK) fprintf(stderr, "%s: %s\n", figures[f], err.message);
        CHECK(s == MN_OK);
        if (!a || !b) {
            mn_model_destroy(a);
            mn_model_destroy(b);
            mn_motion_free(&ma);
            mn_motion_free(&mb);
            continue;
        }
        CHECK(a->njoint == b->njoint && a->nq == b->nq && a->nv == b->nv);
        for (int j = 0; j < a->njoint && j < b->njoint; j++) {
            CHECK(!strcmp(a->jnt_name[j], b->jnt_name[j]));
            CHECK(a->jnt_parent[j] == b->jnt_parent[j] && a->jnt_type[j] == b->jnt_type[j]);
            CHECK(a->jnt_limited[j] == b->jnt_limited[j] && a->jnt_mass[j] == b->jnt_mass[j]);
            /* every member, to the bit but for the sign of zero (the document leaves out the
             * defaults and writes -0 as 0); the axis and rest orientation to rounding, as the
             * model normalises them again when it is compiled */
            CHECK(same3(a->jnt_offset[j], b->jnt_offset[j]) && same3(a->jnt_com[j], b->jnt_com[j]));
            CHECK(mn_vec3_norm(mn_vec3_sub(a->jnt_axis[j], b->jnt_axis[j])) <= 1e-15);
            CHECK(fabs(a->jnt_orient[j].w - b->jnt_orient[j].w) +
                      fabs(a->jnt_orient[j].x - b->jnt_orient[j].x) +
                      fabs(a->jnt_orient[j].y - b->jnt_orient[j].y) +
                      fabs(a->jnt_orient[j].z - b->jnt_orient[j].z) <=
                  1e-15);
            CHECK(a->jnt_range[2 * j] == b->jnt_range[2 * j] &&
                  a->jnt_range[2 * j + 1] == b->jnt_range[2 * j + 1]);
            CHECK(a->jnt_twist[2 * j] == b->jnt_twist[2 * j] &&
                  a->jnt_twist[2 * j + 1] == b->jnt_twist[2 * j + 1]);
            CHECK(a->jnt_swing[j] == b->jnt_swing[j] && a->jnt_stiffness[j] == b->jnt_stiffness[j]);
            CHECK(a->jnt_rot_order[j] == b->jnt_rot_order[j]);
            CHECK(!a->jnt_object[j] == !b->jnt_object[j]);
        }
        for (int i = 0; i < a->nq && a->nq == b->nq; i++)
            CHECK(a->q0[i] == b->q0[i]);
        CHECK(ma.nframes == mb.nframes);
        if (ma.nframes == mb.nframes && ma.nframes > 0)
            CHECK(!memcmp(ma.q, mb.q, sizeof(double) * (size_t)ma.nframes * (size_t)a->nq));
        mn_data* da = mn_data_create(a, 0);
        mn_data* db = mn_data_create(b, 0);
        CHECK(da && db);
        if (da && db && a->nq == b->nq) {
            CHECK(fk_gap(a, da, b, db) <= 1e-12);
            /* random states: every DOF moved from the rest pose */
            double* v = malloc(sizeof(double) * (size_t)(a->nv + 1));
            for (int trial = 0; trial < 5; trial++) {
                for (int i = 0; i < a->nv; i++)
                    v[i] = 2 * uniform() - 1;
                mn_data_reset(a, da);
                mn_integrate(a, da->q, v, 1.0);
                memcpy(db->q, da->q, sizeof(double) * (size_t)a->nq);
                CHECK(fk_gap(a, da, b, db) <= 1e-12);
            }
            free(v);
        }
        mn_data_destroy(da);
        mn_data_destroy(db);
        mn_model_destroy(a);
        mn_model_destroy(b);
        mn_motion_free(&ma);
        mn_motion_free(&mb);
    }
    remove(out);
}

static void test_skin_written(void) {
    char out[512];
    snprintf(out, sizeof out, "%s/skinned.json", mn_test_temp_dir());
    mn_error err;
    CHECK(mn_figure_doc_convert(MN_DATA "/skinned/RiggedSimple.glb", out, NULL, &err) == MN_OK);
    size_t n = 0;
    char* text = mn_test_read_file(out, &n);
    CHECK(text != NULL);
    if (text) {
        CHECK(strstr(text, "\"skin\":{\"dim\":3,\"vertices\":[") != NULL);
        CHECK(strstr(text, "\"controllers\":[") != NULL);
        CHECK(strstr(text, "\"weight_index\":[") != NULL);
    }
    free(text);
    /* figures without a skin carry none */
    CHECK(mn_figure_doc_convert("stickman", out, NULL, &err) == MN_OK);
    text = mn_test_read_file(out, &n);
    CHECK(text && !strstr(text, "\"skin\""));
    free(text);
    remove(out);
}

/* Members at their defaults are left out, and read back as mn_joint_default() gives them. */
static void test_defaults_left_out(void) {
    mn_error err;
    char* text = NULL;
    size_t n = 0;
    CHECK(mn_figure_doc_convert_mem(mn_stickman_text(), strlen(mn_stickman_text()), "stickman",
                                    &text, &n, NULL, &err) == MN_OK);
    CHECK(text && !strstr(text, "\"stiffness\":1,") && !strstr(text, "\"object\":null") &&
          !strstr(text, "\"orient\":[1,0,0,0]") && !strstr(text, "\"limited\":false"));
    free(text);
    const char* doc = "{\"format\":\"marionette-figure\",\"version\":1,\"joints\":["
                      "{\"name\":\"r\",\"parent\":-1,\"type\":\"free\"},"
                      "{\"name\":\"b\",\"parent\":0,\"type\":\"ball\"},"
                      "{\"name\":\"h\",\"parent\":1,\"type\":\"hinge\"}]}";
    mn_model* m = NULL;
    CHECK(mn_figure_doc_read_mem(doc, strlen(doc), "d.json", &m, NULL, &err) == MN_OK);
    CHECK(m && m->njoint == 3 && m->nq == 7 + 4 + 1);
    if (m && m->njoint == 3) {
        mn_joint_def d = mn_joint_default();
        for (int j = 0; j < 3; j++) {
            CHECK(m->jnt_offset[j].x == 0 && m->jnt_offset[j].y == 0 && m->jnt_offset[j].z == 0);
            CHECK(m->jnt_orient[j].w == 1 && m->jnt_axis[j].z == 1 && !m->jnt_limited[j]);
            CHECK(m->jnt_range[2 * j] == d.range[0] && m->jnt_range[2 * j + 1] == d.range[1]);
            CHECK(m->jnt_swing[j] == d.swing && m->jnt_twist[2 * j + 1] == d.twist[1]);
            CHECK(m->jnt_mass[j] == 0 && m->jnt_stiffness[j] == 1 && !m->jnt_object[j]);
            CHECK(m->jnt_rot_order[j] == (int)d.rot_order);
        }
        const double q0[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
        CHECK(!memcmp(m->q0, q0, sizeof q0));
    }
    mn_model_destroy(m);
}

static const char* joint_ok =
    "{\"name\":\"a\",\"parent\":-1,\"type\":\"hinge\",\"offset\":[0,0,0],\"orient\":[1,0,0,0],"
    "\"axis\":[0,0,1],\"limited\":false,\"range\":[-1,1],\"swing\":3,\"twist\":[-3,3],\"mass\":1,"
    "\"com\":[0,0,0],\"stiffness\":1,\"q0\":[0],\"rot_order\":\"zxy\",\"object\":null}";

static void test_malformed(void) {
    struct {
        const char* from; /* replaced in a good document ... */
        const char* to;   /* ... by this */
        const char* field;
    } cases[] = {
        {"\"marionette-figure\"", "\"other\"", "format"},
        {"\"version\":1", "\"version\":2", "version"},
        {"\"hinge\"", "\"spring\"", "joints[0].type"},
        {"\"offset\":[0,0,0]", "\"offset\":[0,0]", "joints[0].offset"},
        {"\"parent\":-1", "\"parent\":0", "joints[0].parent"},
        {"\"q0\":[0]", "\"q0\":[0,1]", "joints[0].q0"},
        {"\"limited\":false", "\"limited\":0", "joints[0].limited"},
        {"\"rot_order\":\"zxy\"", "\"rot_order\":\"abc\"", "joints[0].rot_order"},
        {"\"object\":null", "\"object\":3", "joints[0].object"},
        {"\"frame_time\":0.5", "\"frame_time\":-1", "motion.frame_time"},
        {"[[0.25]]", "[[0.25,1]]", "motion.frames[0]"},
        {"\"joints\":[", "\"joints\":7,\"x\":[", "joints"},
        {"{\"format\"", "{{\"format\"", ""},
        /* a member given twice (cJSON would take the first) */
        {"\"version\":1", "\"version\":1,\"version\":2", "json"},
        /* finite numbers whose length overflows: normalised, they would be zero */
        {"\"axis\":[0,0,1]", "\"axis\":[0,1e300,1e300]", "joints[0].a"},
        {"\"orient\":[1,0,0,0]", "\"orient\":[1e300,1e300,0,0]", "joints[0].a"},
    };
    char good[2048];
    snprintf(good, sizeof good,
             "{\"format\":\"marionette-figure\",\"version\":1,\"name\":\"t\",\"joints\":[%s],"
             "\"motion\":{\"frame_time\":0.5,\"frames\":[[0.25]]}}",
             joint_ok);
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    CHECK(mn_figure_doc_read_mem(good, strlen(good), "good.json", &m, &mo, &err) == MN_OK);
    CHECK(m && m->njoint == 1 && mo.nframes == 1 && mo.q[0] == 0.25);
    mn_model_destroy(m);
    mn_motion_free(&mo);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char bad[2048];
        const char* at = strstr(good, cases[i].from);
        CHECK(at != NULL);
        if (!at) continue;
        snprintf(bad, sizeof bad, "%.*s%s%s", (int)(at - good), good, cases[i].to,
                 at + strlen(cases[i].from));
        m = (mn_model*)1;
        mn_status s = mn_figure_doc_read_mem(bad, strlen(bad), "bad.json", &m, &mo, &err);
        CHECK(s == MN_ERR_PARSE);
        CHECK(m == NULL && mo.nframes == 0 && mo.q == NULL);
        CHECK(!strcmp(err.field, cases[i].field));
        CHECK(!strncmp(err.message, "bad.json", 8));
        if (strcmp(err.field, cases[i].field)) fprintf(stderr, "case %zu: %s\n", i, err.message);
    }
    /* a missing file names it; a failed write leaves nothing */
    CHECK(mn_figure_doc_read("/nonexistent/x.json", &m, NULL, &err) == MN_ERR_IO);
    CHECK(mn_figure_doc_convert("stickman", "/nonexistent/dir/x.json", NULL, &err) == MN_ERR_IO);
}

/* A re-rooted figure written as a figure document records the root it was written with: the
 * tree is written as it stands (the new root first, its reversed motions "x~"), so it reads
 * back rooted there, joint for joint, with the same forward kinematics, and re-rooting it
 * at the old root gives the original figure's. */
static void test_rerooted_written(void) {
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    mn_model* r = mn_model_reroot(m, mn_model_find_joint(m, "left hand"), NULL, &err);
    char* text = NULL;
    size_t len = 0;
    mn_model* b = NULL;
    CHECK(r && mn_figure_doc_write_mem(r, NULL, NULL, &text, &len, &err) == MN_OK);
    CHECK(text && mn_figure_doc_read_mem(text, len, "rerooted.json", &b, NULL, &err) == MN_OK);
    if (r && b) {
        CHECK(b->njoint == r->njoint && b->nq == r->nq && !strcmp(b->jnt_name[0], "left hand") &&
              mn_model_find_joint(b, "left elbow~") >= 0);
        mn_data* dr = mn_data_create(r, 0);
        mn_data* db = mn_data_create(b, 0);
        for (int i = 0; i < r->nq; i++) /* a state off the rest pose */
            dr->q[i] =
                r->q0[i] + (r->jnt_type[0] == MN_JOINT_FREE && i >= 3 && i < 7 ? 0 : 0.1 * sin(i));
        mn_clamp_to_limits(r, dr->q);
        memcpy(db->q, dr->q, sizeof(double) * (size_t)r->nq);
        mn_fk(r, dr);
        mn_fk(b, db);
        double gap = 0;
        for (int j = 0; j < r->njoint; j++)
            gap = fmax(gap, mn_vec3_dist(dr->xf[j].p, db->xf[j].p));
        CHECK(gap < 1e-12);
        mn_model* back = mn_model_reroot(b, mn_model_find_joint(b, "pelvis"), NULL, &err);
        CHECK(back && back->njoint == m->njoint && !strcmp(back->jnt_name[0], "pelvis"));
        mn_model_destroy(back);
        mn_data_destroy(dr);
        mn_data_destroy(db);
    }
    free(text);
    mn_model_destroy(b);
    mn_model_destroy(r);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_round_trip);
    RUN(test_skin_written);
    RUN(test_defaults_left_out);
    RUN(test_malformed);
    RUN(test_rerooted_written);
    return mn_test_report();
}
