/* Sequence documents: an exact write-read round trip (every key, mode, handle, constraint
 * and target key), reading from a file with the figure beside it, and a table of malformed
 * documents, each refused with the file, line and field named and nothing returned. */
#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/layers.h>
#include <marionette/sequence.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static mn_seq* build(const mn_model* m) {
    mn_seq_def def = mn_seq_def_default();
    def.fps = 24;
    def.rot = MN_INTERP_SQUAD;
    def.trans = MN_INTERP_CATMULL_ROM;
    mn_seq* s = mn_seq_create(m, &def, NULL);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < 4; k++) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        for (int i = 7; i < m->nq; i++)
            q[i] = 0.1 * sin(0.77 * i + 1.3 * k) / 3.0;
        q[1] = -0.1 * k / 7.0;
        mn_quat r = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(0.1, 1, 0.05 * k)), 0.3 * k + 0.1);
        q[3] = r.w, q[4] = r.x, q[5] = r.y, q[6] = r.z;
        mn_clamp_to_limits(m, q);
        mn_seq_set_key(s, k * 12.5 + (k == 3 ? 0.1 : 0), q, NULL);
    }
    free(q);
    mn_seq_set_key_tcb(s, 1, 0.25, -0.5, 1.0 / 3.0);
    mn_seq_set_joint_interp(s, mn_model_find_joint(m, "right elbow"), MN_INTERP_KB,
                            MN_INTERP_DEFAULT);
    mn_seq_set_joint_interp(s, mn_model_find_joint(m, "pelvis"), MN_INTERP_SLERP, MN_INTERP_LINEAR);
    const char* feet[2] = {"left foot", "right foot"};
    for (int i = 0; i < 2; i++) {
        mn_handle_def h = mn_handle_default();
        h.joint = mn_model_find_joint(m, feet[i]);
        h.name = feet[i];
        int hp = mn_seq_add_handle(s, &h, NULL);
        mn_seq_constraint_def c = mn_seq_constraint_default();
        c.con.handle = hp;
        c.start = 0, c.end = 30;
        c.lock = 1;
        CHECK(mn_seq_add_constraint(s, &c, NULL) >= 0);
    }
    mn_handle_def h = mn_handle_default();
    h.joint = mn_model_find_joint(m, "right hand");
    h.point = mn_v3(0, -0.08, 1.0 / 3.0);
    h.name = "palm";
    int hh = mn_seq_add_handle(s, &h, NULL);
    h.type = MN_HANDLE_ORIENT;
    h.name = "hand frame";
    int ho = mn_seq_add_handle(s, &h, NULL);
    mn_seq_constraint_def c = mn_seq_constraint_default();
    c.con.handle = hh;
    c.con.name = "reach";
    c.con.weight = 2.5;
    c.target_interp = MN_INTERP_CATMULL_ROM;
    int ci = mn_seq_add_constraint(s, &c, NULL);
    for (int k = 0; k < 3; k++) {
        mn_target_key t = {10.0 * k / 3.0, mn_v3(0.1 * k, 1.1 + 0.01 * k, 0.3 / 7.0),
                           mn_v3(0, 0, 0), mn_quat_identity()};
        mn_seq_set_target_key(s, ci, &t, NULL);
    }
    c = mn_seq_constraint_default();
    c.con.type = MN_CON_ORIENT;
    c.con.handle = ho;
    c.con.target_rot = mn_quat_axis_angle(mn_v3(0, 0, 1), 0.7);
    c.start = 5, c.end = 9.5;
    mn_seq_add_constraint(s, &c, NULL);
    c.con.axis = 2; /* only the y axis's direction (Welman 6.3) */
    c.con.weight = 0.25;
    CHECK(mn_seq_add_constraint(s, &c, NULL) >= 0);
    c = mn_seq_constraint_default();
    c.con.type = MN_CON_PLANE;
    c.con.handle = hh;
    c.con.origin = mn_v3(0, 1, 0);
    c.con.dir = mn_v3(0, 1, 0);
    c.con.enabled = 0;
    int cp = mn_seq_add_constraint(s, &c, NULL);
    mn_target_key pk = {3, mn_v3(0, 1.2, 0), mn_v3(0, 1, 0.1), mn_quat_identity()};
    mn_seq_set_target_key(s, cp, &pk, NULL);
    mn_vec3 poly[4] = {{-0.2, 0, -0.1}, {0.2, 0, -0.1}, {0.2, 0, 0.2}, {-0.2, 0, 0.2}};
    CHECK(mn_seq_add_balance(s, poly, 4, mn_v3(0, 1, 0), 0.015, 0, 37.6, NULL) >= 0);
    return s;
}

static void test_round_trip(void) {
    mn_model* m = mn_stickman_model(NULL);
    mn_seq* s = build(m);
    char* t1 = NULL;
    size_t n1 = 0;
    mn_error err;
    CHECK(mn_seq_write_mem(s, "stickman", 0, &t1, &n1, &err) == MN_OK);
    mn_model* m2 = NULL;
    mn_seq* s2 = NULL;
    mn_seq_doc_info info;
    CHECK(mn_seq_read_mem(t1, n1, "rt.json", NULL, NULL, NULL, &m2, &s2, &info, &err) == MN_OK);
    if (!s2) {
        fprintf(stderr, "%s\n", err.message);
        free(t1);
        return;
    }
    CHECK(!strcmp(info.figure, "stickman") && m2 && m2->nq == m->nq);
    CHECK(mn_seq_fps(s2) == 24);
    CHECK(mn_seq_key_count(s2) == mn_seq_key_count(s));
    for (int k = 0; k < mn_seq_key_count(s); k++) {
        CHECK(mn_seq_key_frame(s2, k) == mn_seq_key_frame(s, k));
        for (int i = 0; i < m->nq; i++)
            CHECK(mn_seq_key_q(s2, k)[i] == mn_seq_key_q(s, k)[i]);
        double a[3], b[3];
        mn_seq_key_tcb(s, k, a);
        mn_seq_key_tcb(s2, k, b);
        CHECK(a[0] == b[0] && a[1] == b[1] && a[2] == b[2]);
    }
    for (int j = 0; j < m->njoint; j++) {
        mn_interp a, b, c, d;
        mn_seq_joint_interp(s, j, &a, &b);
        mn_seq_joint_interp(s2, j, &c, &d);
        CHECK(a == c && b == d);
    }
    CHECK(mn_seq_handle_count(s2) == mn_seq_handle_count(s));
    CHECK(mn_seq_constraint_count(s2) == mn_seq_constraint_count(s));
    for (int c = 0; c < mn_seq_constraint_count(s); c++) {
        const mn_seq_constraint_def *a = mn_seq_constraint(s, c), *b = mn_seq_constraint(s2, c);
        CHECK(a->con.type == b->con.type && a->con.handle == b->con.handle && a->lock == b->lock);
        CHECK(a->con.axis == b->con.axis);
        CHECK(a->con.weight == b->con.weight && a->con.enabled == b->con.enabled &&
              a->target_interp == b->target_interp);
        CHECK(mn_seq_target_key_count(s, c) == mn_seq_target_key_count(s2, c));
        for (int k = 0; k < mn_seq_target_key_count(s, c); k++)
            CHECK(memcmp(mn_seq_target_key(s, c, k), mn_seq_target_key(s2, c, k),
                         sizeof(mn_target_key)) == 0);
    }
    /* samples agree bit for bit */
    double* qa = malloc(sizeof(double) * (size_t)m->nq);
    double* qb = malloc(sizeof(double) * (size_t)m->nq);
    for (double f = -1; f < 40; f += 0.37) {
        mn_seq_sample(s, f, qa);
        mn_seq_sample(s2, f, qb);
        CHECK(memcmp(qa, qb, sizeof(double) * (size_t)m->nq) == 0);
    }
    /* and writing again gives the same text */
    char* t2 = NULL;
    size_t n2 = 0;
    CHECK(mn_seq_write_mem(s2, "stickman", 0, &t2, &n2, &err) == MN_OK);
    CHECK(n1 == n2 && !memcmp(t1, t2, n1));
    free(qa), free(qb), free(t1), free(t2);
    mn_seq_destroy(s2);
    mn_model_destroy(m2);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

static void test_file_with_figure(void) {
    /* a BVH figure beside the document, read with a scale */
    char dir[] = "/tmp/mn_seqdoc_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char bvh[300], doc[300];
    snprintf(bvh, sizeof bvh, "%s/walk.bvh", dir);
    snprintf(doc, sizeof doc, "%s/walk.json", dir);
    mn_bvh_options bo = mn_bvh_default();
    bo.scale = 0.056444;
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    CHECK(mn_bvh_read(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", &bo, &m, &mo, NULL,
                      &err) == MN_OK);
    mn_model* mraw = NULL;
    CHECK(mn_bvh_read(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", NULL, &mraw, NULL,
                      NULL, &err) == MN_OK);
    CHECK(mn_bvh_write(bvh, mraw, NULL, &err) == MN_OK);
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    for (int f = 0; f < 40; f += 10)
        mn_seq_set_key(s, f, mo.q + (size_t)f * (size_t)mo.nq, NULL);
    CHECK(mn_seq_write(doc, s, "walk.bvh", 0.056444, &err) == MN_OK);
    mn_model* m2 = NULL;
    mn_seq* s2 = NULL;
    mn_seq_doc_info info;
    CHECK(mn_seq_read(doc, NULL, &m2, &s2, &info, &err) == MN_OK);
    if (s2) {
        CHECK(info.scale == 0.056444 && m2->njoint == m->njoint);
        CHECK(mn_seq_key_count(s2) == 4);
        for (int i = 0; i < m->nq; i++)
            CHECK_NEAR(mn_seq_key_q(s2, 2)[i], mn_seq_key_q(s, 2)[i], 1e-12);
        for (int j = 0; j < m->njoint; j++)
            CHECK_NEAR(m2->jnt_offset[j].y, m->jnt_offset[j].y, 1e-9);
    } else {
        fprintf(stderr, "%s\n", err.message);
    }
    mn_seq_destroy(s2);
    mn_model_destroy(m2);
    mn_seq_destroy(s);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    mn_model_destroy(mraw);
    /* a missing figure: the field is "figure" */
    FILE* f = fopen(doc, "w");
    fputs("{\"figure\": \"nowhere.bvh\", \"keys\": [{\"frame\": 0, \"pose\": {}}]}", f);
    fclose(f);
    CHECK(mn_seq_read(doc, NULL, &m2, &s2, NULL, &err) != MN_OK && !strcmp(err.field, "figure") &&
          m2 == NULL && s2 == NULL);
    CHECK(mn_seq_read("/nonexistent/x.json", NULL, &m2, &s2, NULL, &err) == MN_ERR_IO);
    unlink(doc);
    unlink(bvh);
    rmdir(dir);
}

typedef struct bad {
    const char* text;
    int line;
    const char* field;
} bad;

static void test_malformed(void) {
    mn_model* stick = mn_stickman_model(NULL);
    static const bad table[] = {
        {"{\"figure\": \"stickman\",\n \"keys\": [\n", 2, "json"},
        /* a document of several figures is read by mn_seq_read_figures */
        {"{\"fps\": 30,\n \"figures\": [{\"name\": \"a\", \"file\": \"stickman\", \"keys\": "
         "[{\"frame\": 0, \"pose\": {}}]}]}",
         2, "figures"},
        /* layers and time warps (layers.h) */
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": {}}",
         2, "layers"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\"}]}",
         2, "layers[0]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"mode\": \"multiply\", \"keys\": []}]}",
         2, "layers[0].mode"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"keys\": [{\"frame\": 0, \"pose\": {}}]},\n {\"name\": \"a\", "
         "\"keys\": [{\"frame\": 0, \"pose\": {}}]}]}",
         3, "layers[1].name"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"wieghts\": [], \"keys\": []}]}",
         2, "layers[0].wieghts"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"weights\": [[0, 1.5]], \"keys\": []}]}",
         2, "layers[0].weights[0][1]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"weights\": [[5, 1],\n [2, 0]], \"keys\": []}]}",
         3, "layers[0].weights[1][0]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"weights\": [0, 1], \"keys\": []}]}",
         2, "layers[0].weights[0]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"mask\": [\"right arm.1\",\n \"tail\"], \"keys\": []}]}",
         3, "layers[0].mask[1]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"mask\": {\"head\": 2}, \"keys\": []}]}",
         2, "layers[0].mask.head"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"mask\": 3, \"keys\": []}]}",
         2, "layers[0].mask"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \n \"keys\": [{\"frame\": 0, \"pose\": {\"elbow\": 1}}]}]}",
         3, "layers[0].keys[0].pose.elbow"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"layers\": "
         "[{\"name\": \"a\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"time_warp\": [[0, 0], "
         "[10, -5]]}]}",
         3, "layers[0].time_warp[1][1]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"time_warp\": "
         "[[0, 0]]}",
         2, "time_warp"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"time_warp\": "
         "[[0, 0], [0, 5]]}",
         2, "time_warp[1][0]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"time_warp\": "
         "[[0, 0], [10, 10, -1]]}",
         2, "time_warp[1][2]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"time_warp\": "
         "[[0, 0], [10, \"x\"]]}",
         2, "time_warp[1][1]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"time_warp\": "
         "[[0, 0, 9], [10, 10]]}",
         2, "time_warp"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"time_warp\": "
         "[[0, 0, 1], [10, 0, 0]]}",
         2, "time_warp"},
        {"[1, 2]", 1, "sequence"},
        {"{\"keys\": [{\"frame\": 0, \"pose\": {}}]}", 1, "sequence"},
        {"{\"figure\": \"stickman\"}", 1, "sequence"},
        {"{\"figure\": \"stickman\", \"keys\": []}", 1, "keys"},
        {"{\"figure\": \"stickman\", \"fsp\": 30, \"keys\": []}", 1, "fsp"},
        {"{\"figure\": \"stickman\", \"fps\": 0, \"keys\": []}", 1, "fps"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0, \"pose\": {}},\n {\"frame\": 0, "
         "\"pose\": {}}]}",
         3, "keys[1].frame"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"pose\": {}}]}", 2, "keys[0]"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 1e999, \"pose\": {}}]}", 2,
         "keys[0].frame"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0,\n \"pose\": {\"torso.1\": "
         "\"a\"}}]}",
         3, "keys[0].pose.torso.1"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0,\n \"pose\": {\"elbow\": 1}}]}", 3,
         "keys[0].pose.elbow"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0, \"pose\": {\n\"pelvis\": "
         "{\"position\": [0, 1], \"rotation\": [1, 0, 0, 0]}}}]}",
         3, "keys[0].pose.pelvis.position"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0, \"pose\": {\n\"pelvis\": "
         "{\"rotation\": [0, 0, 0, 0]}}}]}",
         3, "keys[0].pose.pelvis.rotation"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0, \"pose\": {},\n \"tcb\": [0, 2, "
         "0]}]}",
         3, "keys[0].tcb"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n "
         "\"interpolation\": {\"rotation\": \"cubic\"}}",
         2, "interpolation.rotation"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n "
         "\"interpolation\": {\"rotation\": \"kb\"}}",
         2, "interpolation.rotation"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n "
         "\"interpolation\": {\"joints\": {\"pelvis\": {\"rotation\": \"kb\"}}}}",
         2, "interpolation.joints.pelvis"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"nose\"}]}",
         2, "handles[0].joint"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"},\n {\"name\": \"h\", \"joint\": \"head\"}]}",
         3, "handles[1].name"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"}],\n \"constraints\": [{\"type\": \"pin\", "
         "\"handle\": \"g\"}]}",
         3, "constraints[0].handle"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"}],\n \"constraints\": [{\"type\": \"pin\", "
         "\"handle\": \"h\", \"frames\": [5, 1]}]}",
         3, "constraints[0].frames"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"}],\n \"constraints\": [{\"type\": \"plane\", "
         "\"handle\": \"h\", \"origin\": [0, 0, 0],\n \"normal\": [0, 0, 0]}]}",
         4, "constraints[0].normal"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"}],\n \"constraints\": [{\"type\": \"pin\", "
         "\"handle\": \"h\", \"lock\": true, \"target\": [0, 1, 0]}]}",
         3, "constraints[0].lock"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"}],\n \"constraints\": [{\"type\": \"pin\", "
         "\"handle\": \"h\",\n \"target_keys\": [{\"frame\": 0, \"target\": [0, 1]}]}]}",
         4, "constraints[0].target_keys[0].target"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"}],\n \"constraints\": [{\"type\": \"pin\", "
         "\"handle\": \"h\",\n \"target_keys\": [{\"frame\": 0, \"origin\": [0, 1, 0]}]}]}",
         4, "constraints[0].target_keys[0]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"}],\n \"constraints\": [{\"type\": \"plane\", "
         "\"handle\": \"h\",\n \"target_keys\": [{\"frame\": 0, \"origin\": [0, 1, 0], \"normal\": "
         "[0, 0, 0]}]}]}",
         4, "constraints[0].target_keys[0].normal"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"c\", \"type\": \"com\"}],\n \"constraints\": [{\"type\": \"balance\", "
         "\"handle\": \"c\",\n \"polygon\": [[0, 0, 0], [1, 0, 0], [1, 0, 1], [0.5, 0, 0.2]]}]}",
         4, "constraints[0].polygon"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"}],\n \"constraints\": [{\"type\": \"equal\", "
         "\"handle\": \"h\", \"handle2\": \"h\"}]}",
         3, "constraints[0]"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"type\": \"orientation\", \"joint\": \"head\"}],\n "
         "\"constraints\": [{\"type\": \"orient\", \"handle\": \"h\",\n \"axis\": \"w\"}]}",
         4, "constraints[0].axis"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"type\": \"orientation\", \"joint\": \"head\"}],\n "
         "\"constraints\": [{\"type\": \"orient\", \"handle\": \"h\",\n \"axis\": 2}]}",
         4, "constraints[0].axis"},
        {"{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n \"handles\": "
         "[{\"name\": \"h\", \"joint\": \"head\"}],\n \"constraints\": [{\"type\": \"pin\", "
         "\"handle\": \"h\",\n \"axis\": \"y\"}]}",
         4, "constraints[0].axis"},
        /* a member given twice: the line of the second (cJSON would take the first, a loop
         * over the pose the last) */
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0, \"pose\": {\"torso.2\": 0.1,\n "
         "\"torso.2\": 0.5}}]}",
         3, "json"},
        {"{\"figure\": \"stickman\", \"fps\": 30,\n \"keys\": [{\"frame\": 0, \"pose\": {}}],\n "
         "\"fps\": 60}",
         3, "json"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0, \"frame\": 1, \"pose\": {}}]}", 2,
         "json"},
        /* pose values beyond the bounds (1000 radians, 1e6 in length) */
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0, \"pose\": {\"torso.2\": "
         "1e300}}]}",
         2, "keys[0].pose.torso.2"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0, \"pose\": {\"torso.2\": "
         "-1000.5}}]}",
         2, "keys[0].pose.torso.2"},
        {"{\"figure\": \"stickman\",\n \"keys\": [{\"frame\": 0, \"pose\": {\n\"pelvis\": "
         "{\"position\": [0, 1e7, 0], \"rotation\": [1, 0, 0, 0]}}}]}",
         3, "keys[0].pose.pelvis.position"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        mn_model* m = (mn_model*)1;
        mn_seq* s = (mn_seq*)1;
        mn_error err;
        mn_status st = mn_seq_read_mem(table[i].text, strlen(table[i].text), "bad.json", NULL, NULL,
                                       NULL, &m, &s, NULL, &err);
        int ok = st != MN_OK && m == NULL && s == NULL && err.line == table[i].line &&
                 !strncmp(err.field, table[i].field, strlen(table[i].field)) &&
                 !strcmp(err.file, "bad.json");
        if (!ok)
            fprintf(stderr, "table[%zu]: status %d line %d field '%s': %s\n", i, st, err.line,
                    err.field, err.message);
        CHECK(ok);
        /* the same with a given figure */
        st = mn_seq_read_mem(table[i].text, strlen(table[i].text), "bad.json", NULL, NULL, stick,
                             &m, &s, NULL, &err);
        CHECK(st != MN_OK && s == NULL);
    }
    mn_model_destroy(stick);
}

/* Documents of several figures (docs/sequence.md "Several figures"): each mistake names the
 * file, the line and the field, and nothing is returned. */
#define FIG_A "{\"name\": \"a\", \"file\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}]}"
#define FIG_B "{\"name\": \"b\", \"file\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}]}"
#define TWO "{\"figures\": [" FIG_A ",\n" FIG_B "]"

static void test_malformed_figures(void) {
    static const struct {
        const char* text;
        int line;
        const char* field;
        const char* message;
    } table[] = {
        {"{\"fps\": 30,\n \"figures\": []}", 2, "figures", "an empty list"},
        {"{\"fps\": 30,\n \"figures\": [" FIG_A "," FIG_A "," FIG_A "," FIG_A "," FIG_A "," FIG_A
         "," FIG_A "," FIG_A "," FIG_A "]}",
         2, "figures", "more than 8 figures"},
        {"{\"figures\": [" FIG_A ",\n" FIG_A "]}", 2, "figures[1].name", "duplicate figure"},
        {"{\"figures\": [\n{\"name\": \"a/b\", \"file\": \"stickman\", \"keys\": []}]}", 2,
         "figures[0].name", "has no '/'"},
        {"{\"figures\": [\n{\"name\": \"a\", \"keys\": []}]}", 2, "figures[0]", "file"},
        {"{\"figures\": [{\"name\": \"a\",\n \"file\": \"nosuch.bvh\", \"keys\": []}]}", 2,
         "figures[0].file", "cannot read the figure"},
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\",\n \"sequence\": \"w.json\", "
         "\"keys\": []}]}",
         2, "figures[0].sequence", "unknown member"},
        {"{\"figures\": [\n{\"name\": \"a\", \"file\": \"stickman\"}]}", 2, "figures[0]",
         "missing member \"keys\""},
        {"{\"figures\": [" FIG_A ",\n{\"name\": \"b\", \"file\": \"stickman\", \"keys\": "
         "[{\"frame\": 0, \"pose\": {\"tail\": 1}}]}]}",
         2, "figures[1].keys[0].pose.tail", "no joint named"},
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\", \"keys\": [],\n \"rotation\": "
         "[0, 0, 0, 0]}]}",
         2, "figures[0].rotation", ""},
        {"{\"figures\": [" FIG_A "],\n \"keys\": []}", 2, "keys", "each figure has its own"},
        {"{\"figures\": [" FIG_A "],\n \"figure\": \"stickman\"}", 2, "figure", "own \"file\""},
        {"{\"figures\": [" FIG_A "],\n \"layers\": []}", 2, "layers", "each figure has its own"},
        {"{\"figures\": [" FIG_A "],\n \"time_warp\": []}", 2, "time_warp",
         "each figure has its own"},
        {"{\"figures\": [" FIG_A "],\n \"contacts\": []}", 2, "contacts",
         "each figure has its own"},
        {"{\"figures\": [" FIG_A "],\n \"root\": \"head\"}", 2, "root", "names its own"},
        /* a figure's own layers, time warp, contact tracks and root, named inside it */
        {"{\"figures\": [" FIG_A ",\n{\"name\": \"b\", \"file\": \"stickman\", \"keys\": "
         "[{\"frame\": 0, \"pose\": {}}],\n \"layers\": [{\"mode\": \"blend\", \"keys\": []}]}]}",
         3, "figures[1].layers[0].mode", "unknown mode"},
        {"{\"figures\": [" FIG_A ",\n{\"name\": \"b\", \"file\": \"stickman\", \"keys\": "
         "[{\"frame\": 0, \"pose\": {}}], \"layers\": [{\"keys\": [{\"frame\": 0,\n \"pose\": "
         "{\"tail\": 1}}]}]}]}",
         3, "figures[1].layers[0].keys[0].pose.tail", "no joint named"},
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\", \"keys\": [{\"frame\": 0, "
         "\"pose\": {}}],\n \"time_warp\": [[0, 0]]}]}",
         2, "figures[0].time_warp", "at least two keys"},
        {"{\"figures\": [" FIG_A ",\n{\"name\": \"b\", \"file\": \"stickman\", \"keys\": "
         "[{\"frame\": 0, \"pose\": {}}], \"time_warp\": [[0, 0], [10, 10],\n [5, 20]]}]}",
         3, "figures[1].time_warp[2][0]", "output frames must increase"},
        {"{\"figures\": [" FIG_A ",\n{\"name\": \"b\", \"file\": \"stickman\", \"keys\": "
         "[{\"frame\": 0, \"pose\": {}}], \"contacts\": [{\"joint\": \"left paw\",\n \"heel\": "
         "[[0, 5]]}]}]}",
         2, "figures[1].contacts[0].joint", "no joint named \"left paw\""},
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\", \"keys\": [{\"frame\": 0, "
         "\"pose\": {}}],\n \"root\": \"left paw\"}]}",
         2, "figures[0].root", "no joint named \"left paw\""},
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\", \"keys\": [{\"frame\": 0, "
         "\"pose\": {}}],\n \"root\": \"\"}]}",
         2, "figures[0].root", "non-empty string"},
        /* ten deep: a free root's position in a key of a figure's layer */
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\", \"keys\": [{\"frame\": 0, "
         "\"pose\": {}}], \"layers\": [{\"keys\": [{\"frame\": 0,\n \"pose\": {\"pelvis\": "
         "{\"position\": [0, \"x\", 0]}}}]}]}]}",
         2, "figures[0].layers[0].keys[0].pose.pelvis.position[1]", ""},
        {"{\"figures\": [{\"name\": \"a\", \"file\": \"stickman\", \"root\": \"left hand\",\n "
         "\"keys\": [{\"frame\": 0, \"pose\": {\"left elbow\": 1}}]}]}",
         2, "figures[0].keys[0].pose.left elbow", "a fixed joint has no value"},
        {"{\"figures\": [" FIG_A "],\n \"frames\": 3}", 2, "frames", "unknown member"},
        {TWO ",\n \"handles\": [{\"name\": \"h\", \"joint\": \"right hand\"}]}", 3,
         "handles[0].joint", "which figure?"},
        {TWO ",\n \"handles\": [{\"name\": \"h\", \"joint\": \"b/right hnd\"}]}", 3,
         "handles[0].joint", "no joint named \"right hnd\" in b"},
        {TWO ",\n \"handles\": [{\"name\": \"h\", \"joint\": \"hand\", \"figure\": \"c\"}]}", 3,
         "handles[0].figure", "no figure named \"c\""},
        {TWO ", \"handles\": [{\"name\": \"h\", \"joint\": \"a/right hand\"}],\n \"constraints\": "
             "[{\"type\": \"equal\", \"handle\": \"h\", \"handle2\": \"g\"}]}",
         3, "constraints[0].handle2", ""},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        mn_seq_figures f;
        mn_error err;
        mn_status st = mn_seq_read_figures_mem(table[i].text, strlen(table[i].text), "bad.json",
                                               NULL, NULL, &f, &err);
        int ok = st != MN_OK && f.n == 0 && f.seq[0] == NULL && err.line == table[i].line &&
                 !strcmp(err.field, table[i].field) && !strcmp(err.file, "bad.json") &&
                 strstr(err.message, table[i].message);
        if (!ok)
            fprintf(stderr, "figures table[%zu]: status %d line %d field '%s': %s\n", i, st,
                    err.line, err.field, err.message);
        CHECK(ok);
    }
    /* the document of two figures is read whole: a handle on each, the equality between them */
    const char* good =
        TWO ", \"handles\": [{\"name\": \"h\", \"joint\": \"a/right hand\"},\n"
            "{\"name\": \"g\", \"joint\": \"left hand\", \"figure\": \"b\"}],\n"
            "\"constraints\": [{\"type\": \"equal\", \"handle\": \"h\", \"handle2\": "
            "\"g\"}]}";
    mn_seq_figures f;
    mn_error err;
    CHECK(mn_seq_read_figures_mem(good, strlen(good), "good.json", NULL, NULL, &f, &err) == MN_OK);
    CHECK(f.n == 2 && !strcmp(f.name[1], "b") && mn_seq_figure_count(f.seq[0]) == 2 &&
          mn_seq_figure(f.seq[0], 1) == f.seq[1] && mn_seq_handle(f.seq[0], 1)->figure == 1 &&
          mn_seq_constraint_count(f.seq[0]) == 1);
    /* a robot (its root fixed, not free) cannot be placed: its keys hold no root position */
    const char* robot = "{\"figures\": [{\"name\": \"arm\", \"file\": \"" MN_DATA
                        "/robots/ur5/ur5_robot.urdf\", \"keys\": [{\"frame\": 0, \"pose\": "
                        "{}}],\n \"position\": [1, 0, 0]}]}";
    mn_seq_read_options trusted = mn_seq_read_default();
    trusted.trusted = 1;
    mn_seq_figures fr;
    CHECK(mn_seq_read_figures_mem(robot, strlen(robot), "robot.json", NULL, &trusted, &fr, &err) ==
              MN_ERR_PARSE &&
          fr.n == 0 && err.line == 2 && !strcmp(err.field, "figures[0].position") &&
          strstr(err.message, "root is not free"));
    /* placed where it stands, the robot reads */
    const char* robot2 = "{\"figures\": [{\"name\": \"arm\", \"file\": \"" MN_DATA
                         "/robots/ur5/ur5_robot.urdf\", \"keys\": [{\"frame\": 0, \"pose\": "
                         "{}}]}]}";
    CHECK(mn_seq_read_figures_mem(robot2, strlen(robot2), "robot.json", NULL, &trusted, &fr,
                                  &err) == MN_OK &&
          fr.n == 1);
    mn_seq_figures_free(&fr);
    /* mn_seq_write refuses several figures (mn_seq_write_figures writes them), nothing written */
    char* text = NULL;
    CHECK(mn_seq_write_mem(f.seq[0], "stickman", 0, &text, NULL, &err) == MN_ERR_UNSUPPORTED &&
          !text && !strcmp(err.field, "figures") && strstr(err.message, "mn_seq_write_figures"));
    mn_seq_figures_free(&f);
}

/* Two sequences the same, bit for bit: keys, interpolation, layers (recursively), warp. */
static int same_seq(const mn_seq* a, const mn_seq* b) {
    const mn_model *ma = mn_seq_model(a), *mb = mn_seq_model(b);
    if (ma->nq != mb->nq || ma->njoint != mb->njoint || mn_seq_fps(a) != mn_seq_fps(b) ||
        mn_seq_key_count(a) != mn_seq_key_count(b))
        return 0;
    for (int k = 0; k < mn_seq_key_count(a); k++) {
        double ta[3], tb[3];
        mn_seq_key_tcb(a, k, ta);
        mn_seq_key_tcb(b, k, tb);
        if (memcmp(&(double){mn_seq_key_frame(a, k)}, &(double){mn_seq_key_frame(b, k)}, 8) ||
            memcmp(mn_seq_key_q(a, k), mn_seq_key_q(b, k), sizeof(double) * (size_t)ma->nq) ||
            memcmp(ta, tb, sizeof ta))
            return 0;
    }
    for (int j = 0; j < ma->njoint; j++) {
        mn_interp r1, t1, r2, t2;
        mn_seq_joint_interp(a, j, &r1, &t1);
        mn_seq_joint_interp(b, j, &r2, &t2);
        if (r1 != r2 || t1 != t2 || strcmp(ma->jnt_name[j], mb->jnt_name[j])) return 0;
    }
    if (mn_seq_warp_count(a) != mn_seq_warp_count(b)) return 0;
    for (int k = 0; k < mn_seq_warp_count(a); k++) {
        double wa[3], wb[3];
        mn_seq_warp_key(a, k, &wa[0], &wa[1], &wa[2]);
        mn_seq_warp_key(b, k, &wb[0], &wb[1], &wb[2]);
        if (memcmp(wa, wb, sizeof wa)) return 0;
    }
    if (mn_seq_layer_count(a) != mn_seq_layer_count(b)) return 0;
    for (int i = 0; i < mn_seq_layer_count(a); i++) {
        const double *ka = mn_seq_layer_mask(a, i), *kb = mn_seq_layer_mask(b, i);
        if (mn_seq_layer_mode(a, i) != mn_seq_layer_mode(b, i) ||
            strcmp(mn_seq_layer_name(a, i), mn_seq_layer_name(b, i)) || !ka != !kb ||
            (ka && memcmp(ka, kb, sizeof(double) * (size_t)ma->njoint)) ||
            mn_seq_layer_weight_count(a, i) != mn_seq_layer_weight_count(b, i) ||
            !same_seq(mn_seq_layer(a, i), mn_seq_layer(b, i)))
            return 0;
        for (int k = 0; k < mn_seq_layer_weight_count(a, i); k++) {
            double fa, wa, fb, wb;
            mn_seq_layer_weight_key(a, i, k, &fa, &wa);
            mn_seq_layer_weight_key(b, i, k, &fb, &wb);
            if (fa != fb || wa != wb) return 0;
        }
    }
    return 1;
}

/* Two documents of several figures read the same: figures, sequences, handles, constraints. */
static int same_figures(const mn_seq_figures* a, const mn_seq_figures* b) {
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++) {
        if (strcmp(a->name[i], b->name[i]) || strcmp(a->file[i], b->file[i]) ||
            memcmp(&a->place[i], &b->place[i], sizeof a->place[i]) ||
            strcmp(a->info[i]->root, b->info[i]->root) ||
            a->info[i]->ncontact != b->info[i]->ncontact ||
            memcmp(a->info[i]->contact, b->info[i]->contact,
                   sizeof a->info[i]->contact[0] * (size_t)a->info[i]->ncontact) ||
            !same_seq(a->seq[i], b->seq[i])) {
            fprintf(stderr, "  figure %d differs\n", i);
            return 0;
        }
    }
    const mn_seq *s = a->seq[0], *t = b->seq[0];
    if (mn_seq_handle_count(s) != mn_seq_handle_count(t) ||
        mn_seq_constraint_count(s) != mn_seq_constraint_count(t))
        return 0;
    for (int h = 0; h < mn_seq_handle_count(s); h++) {
        const mn_handle_def *x = mn_seq_handle(s, h), *y = mn_seq_handle(t, h);
        if (x->figure != y->figure || x->joint != y->joint || x->type != y->type ||
            memcmp(&x->point, &y->point, sizeof x->point) || strcmp(x->name, y->name))
            return 0;
    }
    for (int c = 0; c < mn_seq_constraint_count(s); c++) {
        const mn_seq_constraint_def *x = mn_seq_constraint(s, c), *y = mn_seq_constraint(t, c);
        if (x->con.type != y->con.type || x->con.handle != y->con.handle ||
            x->con.handle2 != y->con.handle2 || x->lock != y->lock ||
            memcmp(&x->con.target, &y->con.target, sizeof x->con.target) ||
            memcmp(&x->start, &y->start, sizeof x->start) ||
            memcmp(&x->end, &y->end, sizeof x->end))
            return 0;
    }
    return 1;
}

/* A document of several figures written back (mn_seq_write_figures): read, write, read gives
 * the same figures bit for bit (placed keys included), and writing that again the same text
 * (the writer's canonical form: every joint of every key, members in one order, comments
 * dropped). The example of docs/sequence.md, its layered variant, and a document with a
 * re-rooted, placed figure, contact tracks and a com handle. */
static void test_figures_round_trip(void) {
    static const char* const docs[] = {MN_SOURCE "/docs/examples/holding_hands_sequence.json",
                                       MN_SOURCE "/docs/examples/holding_hands_layered.json", NULL};
    const char* inline_doc =
        "{\"fps\": 24, \"figures\": [\n"
        " {\"name\": \"ann\", \"file\": \"stickman\", \"rotation\": [0.9, 0, 0.3, 0.1],\n"
        "  \"keys\": [{\"frame\": 0, \"pose\": {\"torso.1\": 0.1, \"pelvis\": {\"position\": [0.1, "
        "0.2, 0.3], \"rotation\": [0.8, 0.1, 0.2, 0.3]}}}, {\"frame\": 7.5, \"pose\": {}}],\n"
        "  \"layers\": [{\"mode\": \"override\", \"mask\": [\"pelvis\"], \"keys\": [{\"frame\": 0, "
        "\"pose\": {\"pelvis\": {\"position\": [0.3, 0, 0.1]}}}]},\n"
        "   {\"mode\": \"additive\", \"name\": \"nod\", \"mask\": {\"head.2\": 0.5}, \"keys\": "
        "[{\"frame\": 1, \"pose\": {\"head.2\": 0.3}}], \"time_warp\": [[0, 0], [9, 3, 0.5]]}],\n"
        "  \"contacts\": [{\"joint\": \"left foot\", \"heel\": [[0, 3], [5, 7]], \"toe\": [[1, "
        "2]]}]},\n"
        " {\"name\": \"cy\", \"file\": \"stickman\", \"root\": \"right hand\", \"position\": [2, "
        "0.1, -0.3],\n"
        "  \"keys\": [{\"frame\": 2, \"pose\": {\"right elbow~\": -0.5, \"right hand\": "
        "{\"position\": [0.5, 1.2, 0.1]}}}],\n"
        "  \"time_warp\": [[0, 0], [10, 2], [20, 12]]}],\n"
        " \"handles\": [{\"name\": \"c\", \"type\": \"com\", \"figure\": \"cy\"}, {\"name\": "
        "\"p\", "
        "\"joint\": \"ann/right hand\", \"point\": [0, 0.1, 0]}],\n"
        " \"constraints\": [{\"type\": \"equal\", \"handle\": \"p\", \"handle2\": \"c\", "
        "\"frames\": "
        "[1, 5]}]}";
    for (int d = 0; d < 3; d++) {
        mn_seq_figures f, g, h;
        mn_error err;
        mn_seq_read_options tr = mn_seq_read_default();
        tr.trusted = 1;
        mn_status st = docs[d] ? mn_seq_read_figures(docs[d], &tr, &f, &err)
                               : mn_seq_read_figures_mem(inline_doc, strlen(inline_doc),
                                                         "inline.json", NULL, NULL, &f, &err);
        CHECK(st == MN_OK);
        if (st != MN_OK) {
            fprintf(stderr, "  %s\n", err.message);
            continue;
        }
        char *t1 = NULL, *t2 = NULL;
        size_t n1 = 0, n2 = 0;
        CHECK(mn_seq_write_figures_mem(&f, &t1, &n1, &err) == MN_OK && t1);
        CHECK(mn_seq_read_figures_mem(t1, n1, "again.json", NULL, NULL, &g, &err) == MN_OK);
        CHECK(same_figures(&f, &g));
        CHECK(mn_seq_write_figures_mem(&g, &t2, &n2, &err) == MN_OK);
        CHECK(t2 && n1 == n2 && !memcmp(t1, t2, n1));
        /* and through a file */
        char path[512];
        snprintf(path, sizeof path, "%s/figs.json", mn_test_temp_dir());
        CHECK(mn_seq_write_figures(path, &g, &err) == MN_OK);
        CHECK(mn_seq_read_figures(path, NULL, &h, &err) == MN_OK && same_figures(&f, &h));
        if (d == 2) { /* the re-rooted figure: its root, the root it was written with */
            CHECK(!strcmp(h.info[1]->root, "right hand") &&
                  !strcmp(h.model[1]->jnt_name[0], "right hand") &&
                  mn_model_find_joint(h.model[1], "right elbow~") >= 0 &&
                  strstr(t1, "\"root\": \"right hand\"") && h.info[0]->ncontact == 1);
            CHECK(mn_seq_layer_count(h.seq[0]) == 2 && mn_seq_warp_count(h.seq[1]) == 3);
        }
        remove(path);
        free(t1), free(t2);
        mn_seq_figures_free(&f);
        mn_seq_figures_free(&g);
        mn_seq_figures_free(&h);
    }
    /* a figure's name the reader would refuse is not written */
    mn_seq_figures f;
    mn_error err;
    CHECK(mn_seq_read_figures_mem(inline_doc, strlen(inline_doc), "inline.json", NULL, NULL, &f,
                                  &err) == MN_OK);
    /* a placed figure's key moved after reading: written with the placement undone, it reads
     * back where it was moved (to rounding), the keys not moved bit for bit */
    double q[64];
    const mn_model* am = f.model[0];
    memcpy(q, mn_seq_key_q(f.seq[0], 1), sizeof(double) * (size_t)am->nq);
    q[0] = 0.5, q[1] = 0.25, q[2] = -0.125;
    CHECK(mn_seq_set_key(f.seq[0], mn_seq_key_frame(f.seq[0], 1), q, NULL) == 1);
    char* moved = NULL;
    size_t nmoved = 0;
    mn_seq_figures g;
    CHECK(mn_seq_write_figures_mem(&f, &moved, &nmoved, &err) == MN_OK);
    CHECK(moved &&
          mn_seq_read_figures_mem(moved, nmoved, "moved.json", NULL, NULL, &g, &err) == MN_OK);
    if (moved && g.n == 2) {
        double gap = 0;
        for (int i = 0; i < am->nq; i++)
            gap = fmax(gap, fabs(mn_seq_key_q(g.seq[0], 1)[i] - q[i]));
        CHECK(gap < 1e-12);
        CHECK(!memcmp(mn_seq_key_q(g.seq[0], 0), mn_seq_key_q(f.seq[0], 0),
                      sizeof(double) * (size_t)am->nq));
        mn_seq_figures_free(&g);
    }
    free(moved);
    /* a document of one figure, read as one figure, is written as a "figures" array of one
     * that reads the same; one read at a scale is not (no scale next to "figures") */
    const char* one =
        "{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {\"torso.1\": "
        "0.2}}], \"time_warp\": [[0, 0], [5, 2]]}";
    mn_seq_figures o1, o2;
    char* otext = NULL;
    size_t olen = 0;
    CHECK(mn_seq_read_figures_mem(one, strlen(one), "one.json", NULL, NULL, &o1, &err) == MN_OK);
    CHECK(mn_seq_write_figures_mem(&o1, &otext, &olen, &err) == MN_OK && otext &&
          strstr(otext, "\"figures\""));
    CHECK(otext &&
          mn_seq_read_figures_mem(otext, olen, "one2.json", NULL, NULL, &o2, &err) == MN_OK &&
          o2.n == 1 && same_seq(o1.seq[0], o2.seq[0]));
    free(otext);
    otext = NULL;
    o1.info[0]->scale = 0.05;
    CHECK(mn_seq_write_figures_mem(&o1, &otext, &olen, &err) == MN_ERR_UNSUPPORTED && !otext &&
          !strcmp(err.field, "scale"));
    mn_seq_figures_free(&o1);
    mn_seq_figures_free(&o2);
    char* text = NULL;
    snprintf(f.name[1], sizeof f.name[1], "a/b");
    CHECK(mn_seq_write_figures_mem(&f, &text, NULL, &err) == MN_ERR_ARG && !text &&
          !strcmp(err.field, "figures[1]"));
    mn_seq_figures_free(&f);
}

/* A document's "root": the figure re-rooted there as it is read, every joint where the
 * rest puts it, written back with it; a figure of several re-rooted on its own. */
static void test_root(void) {
    const char* text = "{\"figure\": \"stickman\", \"root\": \"left hand\", \"fps\": 30,\n"
                       "\"keys\": [{\"frame\": 0, \"pose\": {}},\n"
                       "{\"frame\": 10, \"pose\": {\"left elbow~\": 0.5}}]}";
    mn_model *m = NULL, *stick = mn_stickman_model(NULL);
    mn_seq* s = NULL;
    mn_seq_doc_info info;
    mn_error err;
    CHECK(mn_seq_read_mem(text, strlen(text), "root.json", NULL, NULL, NULL, &m, &s, &info, &err) ==
          MN_OK);
    CHECK(m && !strcmp(m->jnt_name[0], "left hand") && !strcmp(info.root, "left hand"));
    CHECK(m && m->njoint > stick->njoint && mn_model_find_joint(m, "left elbow~") >= 0);
    /* the rest of the re-rooted figure puts every joint where the stick figure's rest does */
    mn_data *d = mn_data_create(m, 0), *ds = mn_data_create(stick, 0);
    mn_fk(m, d);
    mn_fk(stick, ds);
    double worst = 0;
    for (int j = 0; j < stick->njoint; j++) {
        int k = mn_model_find_joint(m, stick->jnt_name[j]);
        CHECK(k >= 0);
        if (k >= 0) worst = fmax(worst, mn_vec3_norm(mn_vec3_sub(d->xf[k].p, ds->xf[j].p)));
    }
    CHECK(worst < 1e-12);
    mn_data_destroy(d);
    mn_data_destroy(ds);
    /* written back with its root, read again */
    char* out = NULL;
    size_t len = 0;
    CHECK(mn_seq_write_doc_mem(s, &info, &out, &len, &err) == MN_OK && out &&
          strstr(out, "\"root\": \"left hand\""));
    mn_model* m2 = NULL;
    mn_seq* s2 = NULL;
    CHECK(out &&
          mn_seq_read_mem(out, len, "root2.json", NULL, NULL, NULL, &m2, &s2, NULL, &err) == MN_OK);
    CHECK(m2 && m2->njoint == m->njoint && !strcmp(m2->jnt_name[0], "left hand"));
    free(out);
    mn_seq_destroy(s2);
    mn_model_destroy(m2);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    /* several figures: b hangs from its right hand, a keeps its pelvis */
    const char* two = "{\"figures\": [" FIG_A ",\n{\"name\": \"b\", \"file\": \"stickman\", "
                      "\"root\": \"right hand\", \"keys\": [{\"frame\": 0, \"pose\": {}}]}]}";
    mn_seq_figures f;
    CHECK(mn_seq_read_figures_mem(two, strlen(two), "two.json", NULL, NULL, &f, &err) == MN_OK);
    CHECK(f.n == 2 && !strcmp(f.model[0]->jnt_name[0], "pelvis") &&
          !strcmp(f.model[1]->jnt_name[0], "right hand"));
    mn_seq_figures_free(&f);
    mn_model_destroy(stick);
}

/* A document of one figure records the root it was written with: "root" re-roots the figure
 * (every joint where it stands at rest), the keys name the re-rooted figure's joints, and
 * mn_seq_write_doc writes the root back. */
static void test_one_figure_root(void) {
    const char* doc =
        "{\"figure\": \"stickman\", \"root\": \"left foot\",\n \"keys\": [{\"frame\": "
        "0, \"pose\": {\"left knee~\": 0.4}}, {\"frame\": 10, \"pose\": {}}]}";
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_seq_doc_info info;
    mn_error err;
    CHECK(mn_seq_read_mem(doc, strlen(doc), "root.json", NULL, NULL, NULL, &m, &s, &info, &err) ==
          MN_OK);
    if (!s) return;
    CHECK(!strcmp(info.root, "left foot") && !strcmp(m->jnt_name[0], "left foot"));
    /* the rest pose is the figure's: every joint where the original puts it */
    mn_model* orig = mn_stickman_model(NULL);
    mn_data* a = mn_data_create(orig, 0);
    mn_data* b = mn_data_create(m, 0);
    mn_fk(orig, a);
    mn_fk(m, b);
    double worst = 0;
    for (int j = 0; j < orig->njoint; j++)
        worst = fmax(worst,
                     mn_vec3_dist(a->xf[j].p, b->xf[mn_model_find_joint(m, orig->jnt_name[j])].p));
    CHECK(worst < 1e-12);
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    CHECK(mn_seq_write_doc_mem(s, &info, &t1, &n1, &err) == MN_OK &&
          strstr(t1, "\"root\": \"left foot\""));
    mn_model* m2 = NULL;
    mn_seq* s2 = NULL;
    mn_seq_doc_info info2;
    CHECK(mn_seq_read_mem(t1, n1, "again.json", NULL, NULL, NULL, &m2, &s2, &info2, &err) == MN_OK);
    CHECK(s2 && same_seq(s, s2) && !strcmp(info2.root, "left foot"));
    CHECK(mn_seq_write_doc_mem(s2, &info2, &t2, &n2, &err) == MN_OK && n1 == n2 &&
          !memcmp(t1, t2, n1));
    /* the given figure re-rooted there (returned), or used when already rooted there */
    mn_model* m3 = NULL;
    mn_seq* s3 = NULL;
    CHECK(mn_seq_read_mem(doc, strlen(doc), "root.json", NULL, NULL, orig, &m3, &s3, NULL, &err) ==
              MN_OK &&
          m3 && !strcmp(m3->jnt_name[0], "left foot"));
    mn_seq_destroy(s3);
    s3 = NULL;
    mn_model* m4 = NULL;
    CHECK(mn_seq_read_mem(doc, strlen(doc), "root.json", NULL, NULL, m3, &m4, &s3, NULL, &err) ==
              MN_OK &&
          !m4 && mn_seq_model(s3) == m3);
    /* a root the figure does not have, an empty one */
    const char* bad =
        "{\"figure\": \"stickman\",\n \"root\": \"left paw\", \"keys\": [{\"frame\": 0, "
        "\"pose\": {}}]}";
    mn_model* m5 = NULL;
    mn_seq* s5 = NULL;
    CHECK(mn_seq_read_mem(bad, strlen(bad), "bad.json", NULL, NULL, NULL, &m5, &s5, NULL, &err) ==
              MN_ERR_NOTFOUND &&
          !m5 && !s5 && err.line == 2 && !strcmp(err.field, "root") &&
          strstr(err.message, "left paw"));
    const char* empty = "{\"figure\": \"stickman\",\n \"root\": \"\", \"keys\": [{\"frame\": 0, "
                        "\"pose\": {}}]}";
    CHECK(mn_seq_read_mem(empty, strlen(empty), "bad.json", NULL, NULL, NULL, &m5, &s5, NULL,
                          &err) == MN_ERR_PARSE &&
          err.line == 2 && !strcmp(err.field, "root"));
    mn_seq_destroy(s3);
    mn_seq_destroy(s2);
    mn_seq_destroy(s);
    mn_model_destroy(m3);
    mn_model_destroy(m2);
    mn_model_destroy(m);
    mn_data_destroy(a);
    mn_data_destroy(b);
    mn_model_destroy(orig);
    free(t1), free(t2);
}

/* Contact tracks (docs/sequence.md "Contacts"): written with the document, read back the
 * same, with the mn_seq_contact_add rules; a malformed track is refused naming line and
 * field; a document without tracks has none. */
static void test_contacts(void) {
    mn_model* m = mn_stickman_model(NULL);
    mn_seq* s = build(m);
    mn_seq_doc_info* in = calloc(2, sizeof *in);
    mn_seq_doc_info* out = in + 1;
    snprintf(in->figure, sizeof in->figure, "stickman");
    in->ncontact = 2;
    snprintf(in->contact[0].joint, sizeof in->contact[0].joint, "left foot");
    snprintf(in->contact[1].joint, sizeof in->contact[1].joint, "right foot");
    CHECK(mn_seq_contact_add(&in->contact[0], 0, 3, 10) == MN_OK);
    CHECK(mn_seq_contact_add(&in->contact[0], 0, 11, 14) == MN_OK); /* extends [3, 10] */
    CHECK(mn_seq_contact_add(&in->contact[0], 0, 20.5, 30) == MN_OK);
    CHECK(mn_seq_contact_add(&in->contact[0], 0, 25, 40) == MN_ERR_ARG); /* overlaps */
    CHECK(mn_seq_contact_add(&in->contact[0], 1, 8, 7) == MN_ERR_ARG);   /* backwards */
    CHECK(mn_seq_contact_add(&in->contact[0], 1, 9, 16) == MN_OK);
    CHECK(in->contact[0].nheel == 2 && in->contact[0].heel[0][1] == 14 && in->contact[0].ntoe == 1);
    char* text = NULL;
    size_t len = 0;
    mn_error err;
    CHECK(mn_seq_write_doc_mem(s, in, &text, &len, &err) == MN_OK);
    mn_model* m2 = NULL;
    mn_seq* s2 = NULL;
    CHECK(text &&
          mn_seq_read_mem(text, len, "c.json", NULL, NULL, NULL, &m2, &s2, out, &err) == MN_OK);
    CHECK(out->ncontact == 2 && !strcmp(out->contact[1].joint, "right foot"));
    CHECK(!memcmp(&out->contact[0], &in->contact[0], sizeof in->contact[0]));
    CHECK(out->contact[1].nheel == 0 && out->contact[1].ntoe == 0);
    /* the keys are the plain writer's */
    char* plain = NULL;
    CHECK(mn_seq_write_mem(s, "stickman", 0, &plain, NULL, &err) == MN_OK);
    CHECK(plain && text && !strncmp(plain, text, strlen(plain) - 3));
    free(plain);
    free(text);
    mn_seq_destroy(s2);
    mn_model_destroy(m2);
    /* a joint the figure lacks is refused before anything is written */
    snprintf(in->contact[1].joint, sizeof in->contact[1].joint, "right paw");
    text = NULL;
    CHECK(mn_seq_write_doc_mem(s, in, &text, &len, &err) == MN_ERR_ARG && text == NULL);
    CHECK(!strcmp(err.field, "contacts[1]"));
    static const struct {
        const char* contacts;
        int line;
        const char* field;
    } bad[] = {
        {"{}", 2, "contacts"},
        {"[{\"heel\": []}]", 2, "contacts[0]"},
        {"[{\"joint\": \"left paw\"}]", 2, "contacts[0].joint"},
        {"[{\"joint\": \"left foot\"},\n{\"joint\": \"left foot\"}]", 3, "contacts[1].joint"},
        {"[{\"joint\": \"left foot\", \"heal\": []}]", 2, "contacts[0].heal"},
        {"[{\"joint\": \"left foot\",\n \"heel\": [[1, 2], [3]]}]", 3, "contacts[0].heel[1]"},
        {"[{\"joint\": \"left foot\",\n \"heel\": [[4, 2]]}]", 3, "contacts[0].heel[0]"},
        {"[{\"joint\": \"left foot\",\n \"toe\": [[1, 5],\n [5, 9]]}]", 4, "contacts[0].toe[1]"},
        {"[{\"joint\": \"left foot\",\n \"toe\": [[1, \"a\"]]}]", 3, "contacts[0].toe[0]"},
        {"[{\"joint\": \"left foot\",\n \"toe\": [[1, 1e999]]}]", 3, "contacts[0].toe[0]"},
        {"[{\"joint\": \"a\"}, {\"joint\": \"b\"}, {\"joint\": \"c\"}, {\"joint\": \"d\"}, "
         "{\"joint\": \"e\"}]",
         2, "contacts"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc[1024];
        snprintf(doc, sizeof doc,
                 "{\"figure\": \"stickman\", \"keys\": [{\"frame\": 0, \"pose\": {}}],\n"
                 " \"contacts\": %s}",
                 bad[i].contacts);
        mn_model* bm = (mn_model*)1;
        mn_seq* bs = (mn_seq*)1;
        mn_status st =
            mn_seq_read_mem(doc, strlen(doc), "bad.json", NULL, NULL, NULL, &bm, &bs, out, &err);
        int ok = st != MN_OK && bm == NULL && bs == NULL && err.line == bad[i].line &&
                 !strcmp(err.field, bad[i].field);
        if (!ok)
            fprintf(stderr, "bad[%zu]: status %d line %d field '%s': %s\n", i, st, err.line,
                    err.field, err.message);
        CHECK(ok);
    }
    free(in);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* A document with layers, a time warp and contact tracks: written by mn_seq_write_doc and
 * read back, every part survives (the tracks are appended after the layers). */
static void test_contacts_with_layers(void) {
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_seq_doc_info* info = calloc(2, sizeof *info);
    mn_error err;
    CHECK(mn_seq_read(MN_SOURCE "/docs/examples/layered_sequence.json", NULL, &m, &s, info, &err) ==
          MN_OK);
    int nlayers = s ? mn_seq_layer_count(s) : 0;
    CHECK(nlayers > 0);
    info->ncontact = 1;
    snprintf(info->contact[0].joint, sizeof info->contact[0].joint, "left foot");
    CHECK(mn_seq_contact_add(&info->contact[0], 0, 2, 9) == MN_OK);
    char* text = NULL;
    size_t len = 0;
    CHECK(s && mn_seq_write_doc_mem(s, info, &text, &len, &err) == MN_OK);
    mn_model* m2 = NULL;
    mn_seq* s2 = NULL;
    CHECK(text && mn_seq_read_mem(text, len, "l.json", NULL, NULL, NULL, &m2, &s2, info + 1,
                                  &err) == MN_OK);
    CHECK(s2 && mn_seq_layer_count(s2) == nlayers);
    CHECK(info[1].ncontact == 1 && info[1].contact[0].nheel == 1 &&
          info[1].contact[0].heel[0][1] == 9);
    for (int i = 0; s2 && i < nlayers; i++)
        CHECK(!strcmp(mn_seq_layer_name(s, i), mn_seq_layer_name(s2, i)));
    free(text);
    free(info);
    mn_seq_destroy(s2);
    mn_model_destroy(m2);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* Each skin joint is the model joint of the same index and name. */
static int skin_matches_model(const mn_gltf* g, const mn_model* m) {
    if (!g || !m || g->njoints != m->njoint) return 0;
    for (int j = 0; j < g->njoints; j++)
        if (strcmp(g->joint_name[j], m->jnt_name[j]) ||
            mn_model_find_joint(m, g->joint_name[j]) != j)
            return 0;
    return 1;
}

/* mn_figure_read_skin: the skin of a skinned glTF with the model built from it, the same
 * model and motion as mn_figure_read; nothing for other figures and on failure. */
static void test_figure_read_skin(void) {
    mn_model *m = NULL, *m2 = NULL;
    mn_motion mo, mo2;
    mn_gltf g;
    mn_error err;
    CHECK(mn_figure_read_skin(MN_DATA "/skinned/Fox.glb", &m, &mo, &g, NULL, &err) == MN_OK);
    CHECK(mn_figure_read(MN_DATA "/skinned/Fox.glb", &m2, &mo2, NULL, &err) == MN_OK);
    CHECK(g.nverts == 1728 && g.ntris > 0 && skin_matches_model(&g, m));
    CHECK(m && m2 && m->njoint == m2->njoint && m->nq == m2->nq);
    CHECK(mo.nframes > 1 && mo.nframes == mo2.nframes && mo.nq == mo2.nq);
    if (mo.q && mo2.q && mo.nframes == mo2.nframes && mo.nq == mo2.nq)
        CHECK(!memcmp(mo.q, mo2.q, sizeof(double) * (size_t)mo.nframes * (size_t)mo.nq));
    mn_gltf_free(&g);
    mn_motion_free(&mo);
    mn_motion_free(&mo2);
    mn_model_destroy(m);
    mn_model_destroy(m2);
    /* a BVH figure and a skeleton-only glTF carry no skin; skin may be NULL */
    memset(&g, 0x5A, sizeof g);
    CHECK(mn_figure_read_skin(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", &m, &mo, &g,
                              NULL, &err) == MN_OK);
    CHECK(m && mo.nframes == 344 && g.nverts == 0 && g.njoints == 0 && g.joint_name == NULL);
    char glb[300];
    snprintf(glb, sizeof glb, "%s", mn_test_write_temp(".glb", "", 0));
    CHECK(mn_gltf_write(glb, m, &mo, NULL, &err) == MN_OK);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    memset(&g, 0x5A, sizeof g);
    CHECK(mn_figure_read_skin(glb, &m, NULL, &g, NULL, &err) == MN_OK);
    CHECK(m && m->njoint > 20 && g.nverts == 0 && g.njoints == 0 && g.priv == NULL);
    mn_model_destroy(m);
    CHECK(mn_figure_read_skin(MN_DATA "/skinned/CesiumMan.glb", &m, NULL, NULL, NULL, &err) ==
          MN_OK);
    CHECK(m && m->njoint == 19);
    mn_model_destroy(m);
    /* failure: nothing returned */
    memset(&g, 0x5A, sizeof g);
    CHECK(mn_figure_read_skin("no_such_figure.glb", &m, &mo, &g, NULL, &err) != MN_OK);
    CHECK(m == NULL && g.njoints == 0 && g.priv == NULL && mo.q == NULL);
    CHECK(strstr(err.message, "no_such_figure.glb") != NULL);
    remove(glb);
}

/* mn_seq_read_skin: a sequence whose figure is a skinned glTF keeps its skin. */
static void test_seq_read_skin(void) {
    /* the examples and the document below name figures outside their folders */
    mn_seq_read_options trust = mn_seq_read_default();
    trust.trusted = 1;
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_gltf g;
    mn_error err;
    CHECK(mn_seq_read_skin(MN_SOURCE "/docs/examples/fox_sequence.json", &trust, &m, &s, NULL, &g,
                           &err) == MN_OK);
    CHECK(s && mn_seq_key_count(s) == 4 && g.nverts == 1728 && skin_matches_model(&g, m));
    mn_seq_destroy(s);
    mn_model_destroy(m);
    mn_gltf_free(&g);
    memset(&g, 0x5A, sizeof g);
    CHECK(mn_seq_read_skin(MN_SOURCE "/docs/examples/crouch_sequence.json", &trust, &m, &s, NULL,
                           &g, &err) == MN_OK);
    CHECK(s && g.nverts == 0 && g.njoints == 0 && g.priv == NULL);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    /* the figure read, then an error further on: nothing returned, the skin freed */
    static const char doc[] =
        "{\n  \"figure\": \"" MN_DATA "/skinned/Fox.glb\",\n"
        "  \"keys\": [{\"frame\": 0, \"pose\": {\"nope\": [1, 0, 0, 0]}}]\n}\n";
    char path[300];
    snprintf(path, sizeof path, "%s", mn_test_write_temp(".json", doc, sizeof doc - 1));
    memset(&g, 0x5A, sizeof g);
    mn_status st = mn_seq_read_skin(path, &trust, &m, &s, NULL, &g, &err);
    CHECK(st != MN_OK);
    CHECK(m == NULL && s == NULL && g.njoints == 0 && g.priv == NULL);
    CHECK(strstr(err.message, "nope") && err.line == 3);
    remove(path);
}

/* Many keys and many constraints: read in one build of the interpolation and one scratch
 * system per constraint (each key rebuilt the tables before, each constraint a system sized
 * by all the others). The keys read are the keys one by one
 * would give, sample for sample; a second key at a frame is still named with its line. (The
 * time is not asserted: `marionette bench anim` prints it, part=read; 500 keys took 29 s
 * before, 0.1 s now.) */
static void test_many_keys_and_pins(void) {
    enum { N = 500, NPINS = 1000 };
    size_t cap = (size_t)(N + NPINS) * 200 + 400, n = 0;
    char* t = malloc(cap);
    n += (size_t)snprintf(t + n, cap - n,
                          "{\"figure\": \"stickman\", \"fps\": 30,\n \"interpolation\": "
                          "{\"rotation\": \"squad\"},\n \"keys\": [\n");
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(t + n, cap - n,
                              "%s{\"frame\": %d, \"pose\": {\"torso.2\": %.3f, \"left knee\": "
                              "%.3f}}\n",
                              i ? "," : "", 3 * i, 0.01 * (i % 7), 0.02 * (i % 5));
    n += (size_t)snprintf(t + n, cap - n,
                          "],\n \"handles\": [{\"name\": \"foot\", \"joint\": \"left foot\"}],\n "
                          "\"constraints\": [\n");
    for (int i = 0; i < NPINS; i++)
        n += (size_t)snprintf(t + n, cap - n,
                              "%s{\"type\": \"pin\", \"handle\": \"foot\", \"frames\": [%d, %d], "
                              "\"target\": [0.1, 0, %.3f]}\n",
                              i ? "," : "", i, i + 1, 0.001 * i);
    n += (size_t)snprintf(t + n, cap - n, "]}\n");
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_error err;
    CHECK(mn_seq_read_mem(t, n, "many.json", ".", NULL, NULL, &m, &s, NULL, &err) == MN_OK);
    CHECK(s && mn_seq_key_count(s) == N && mn_seq_constraint_count(s) == NPINS);
    if (s) {
        /* the same keys set one at a time */
        mn_seq_def def = mn_seq_def_default();
        def.fps = 30;
        def.rot = MN_INTERP_SQUAD;
        mn_seq* one = mn_seq_create(m, &def, NULL);
        for (int k = 0; k < N; k++)
            if (k < 20 || k > N - 20)
                mn_seq_set_key(one, mn_seq_key_frame(s, k), mn_seq_key_q(s, k), NULL);
        /* the first and last 20 keys: sampled alike inside them */
        double* a = malloc(sizeof(double) * (size_t)m->nq * 2);
        double* b = a + m->nq;
        int same = 1;
        for (double f = 0; f < 50; f += 0.3) {
            mn_seq_sample(s, f, a);
            mn_seq_sample(one, f, b);
            for (int i = 0; i < m->nq; i++)
                same &= fabs(a[i] - b[i]) < 1e-12;
        }
        CHECK(same);
        free(a);
        mn_seq_destroy(one);
    }
    mn_seq_destroy(s);
    mn_model_destroy(m);
    /* a second key at a frame, far into the array: its index and line */
    char* dup = strstr(t, "{\"frame\": 1200,");
    CHECK(dup != NULL);
    if (dup) memcpy(dup, "{\"frame\": 1197,", 16);
    m = NULL, s = NULL;
    CHECK(mn_seq_read_mem(t, n, "many.json", ".", NULL, NULL, &m, &s, NULL, &err) != MN_OK);
    CHECK(!m && !s && err.line == 404 && !strcmp(err.field, "keys[400].frame") &&
          strstr(err.message, "second key"));
    free(t);
}

/* A bake whose violation is not finite (a target at 1e300 m) is an error naming the frame,
 * and no motion of infinities comes back. */
static void test_bake_not_finite(void) {
    mn_model* m = mn_stickman_model(NULL);
    mn_seq_def def = mn_seq_def_default();
    mn_seq* s = mn_seq_create(m, &def, NULL);
    mn_seq_set_key(s, 0, m->q0, NULL);
    mn_seq_set_key(s, 4, m->q0, NULL);
    mn_handle_def h = mn_handle_default();
    h.joint = mn_model_find_joint(m, "left foot");
    mn_error err;
    int hi = mn_seq_add_handle(s, &h, &err);
    mn_seq_constraint_def c = mn_seq_constraint_default();
    c.con.type = MN_CON_PIN;
    c.con.handle = hi;
    c.con.target = mn_v3(1e300, 0, 0);
    CHECK(hi >= 0 && mn_seq_add_constraint(s, &c, &err) >= 0);
    mn_motion mo;
    mn_seq_bake_result r;
    mn_status st = mn_seq_bake(s, m, NULL, &mo, &r, &err);
    CHECK(st == MN_ERR_SINGULAR && strstr(err.message, "frame 0") &&
          strstr(err.message, "not finite") && mo.q == NULL && mo.nframes == 0);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_bake_not_finite);
    RUN(test_many_keys_and_pins);
    RUN(test_round_trip);
    RUN(test_file_with_figure);
    RUN(test_malformed);
    RUN(test_malformed_figures);
    RUN(test_figures_round_trip);
    RUN(test_one_figure_root);
    RUN(test_root);
    RUN(test_contacts);
    RUN(test_contacts_with_layers);
    RUN(test_figure_read_skin);
    RUN(test_seq_read_skin);
    return mn_test_report();
}
