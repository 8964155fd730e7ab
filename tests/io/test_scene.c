/* Scene files: a good scene read, bound to the stick figure and solved; a table of
 * malformed scenes, each rejected with the right field and line and nothing applied; drag
 * paths sampled over frames; a bind with room for more handles and constraints. */
#include <marionette/io.h>
#include <marionette/scene.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

static const char hips_scene[] =
    "{\n"
    "  \"solver\": \"lagrange\",\n"
    "  \"handles\": [\n"
    "    {\"name\": \"right hand\", \"joint\": \"right hand\"},\n"
    "    {\"name\": \"right hip\", \"joint\": \"pelvis\", \"point\": [-0.26, -0.05, 0.06]},\n"
    "    {\"name\": \"left hand\", \"joint\": \"left hand\"},\n"
    "    {\"name\": \"left hip\", \"joint\": \"pelvis\", \"point\": [0.26, -0.05, 0.06]},\n"
    "    {\"name\": \"left foot\", \"joint\": \"left foot\"},\n"
    "    {\"name\": \"right foot\", \"joint\": \"right foot\"},\n"
    "    {\"name\": \"com\", \"type\": \"com\"},\n"
    "    {\"name\": \"head\", \"joint\": \"head\"}\n"
    "  ],\n"
    "  \"constraints\": [\n"
    "    {\"name\": \"c1\", \"type\": \"equal\", \"handle\": \"right hand\", \"handle2\": \"right "
    "hip\"},\n"
    "    {\"name\": \"c2\", \"type\": \"equal\", \"handle\": \"left hand\", \"handle2\": \"left "
    "hip\"},\n"
    "    {\"type\": \"pin\", \"handle\": \"left foot\"},\n"
    "    {\"type\": \"pin\", \"handle\": \"right foot\"},\n"
    "    {\"type\": \"plane\", \"handle\": \"head\", \"origin\": [0, 0, 0], \"normal\": [1, 0, 0], "
    "\"enabled\": false}\n"
    "  ],\n"
    "  \"frames\": 5,\n"
    "  \"drags\": [{\"handle\": \"head\", \"path\": [[0, 0, 0], [0, -0.02, 0], [0, 0, 0]], "
    "\"priority\": 1}]\n"
    "}\n";

static void test_good_scene(void) {
    mn_error err;
    mn_scene* sc = NULL;
    CHECK(mn_scene_read_mem(hips_scene, strlen(hips_scene), "hips.json", &sc, &err) == MN_OK);
    if (!sc) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    CHECK(mn_scene_frames(sc) == 5);
    CHECK(mn_scene_solver(sc) == MN_CSOLVE_LAGRANGE);
    mn_model* m = mn_stickman_model(&err);
    CHECK(m != NULL);
    if (!m) {
        mn_scene_destroy(sc);
        return;
    }
    mn_data* d = mn_data_create(m, 0);
    mn_csys* s = NULL;
    CHECK(mn_scene_bind(sc, m, d, &s, &err) == MN_OK);
    if (!s) fprintf(stderr, "%s\n", err.message);
    CHECK(mn_csys_handle_count(s) == 8 && mn_csys_constraint_count(s) == 5);
    CHECK(mn_csys_find_constraint(s, "c2") == 1);
    CHECK(mn_csys_constraint(s, 4)->enabled == 0);
    int head = mn_csys_find_handle(s, "head");
    /* the path: frame 0 at the start, frame 2 (the middle of 5) at the low point */
    CHECK(mn_scene_apply_frame(sc, s, 0) == MN_OK);
    CHECK_NEAR(mn_csys_drag_error(s, head), 0, 1e-12);
    CHECK(mn_scene_apply_frame(sc, s, 1) == MN_OK);
    CHECK_NEAR(mn_csys_drag_error(s, head), 0.01, 1e-12);
    CHECK(mn_scene_apply_frame(sc, s, 2) == MN_OK);
    CHECK_NEAR(mn_csys_drag_error(s, head), 0.02, 1e-12);
    CHECK(mn_scene_apply_frame(sc, s, 5) == MN_ERR_ARG);
    mn_csolve_options o = mn_csolve_default();
    o.max_iters = 100;
    mn_csolve_result r;
    for (int f = 0; f < mn_scene_frames(sc); f++) {
        mn_scene_apply_frame(sc, s, f);
        mn_csys_solve(s, &o, &r);
    }
    CHECK(r.status == MN_OK);
    CHECK(r.max_violation < 1e-4);
    CHECK(mn_csys_residual(s, 0) < 1e-4 && mn_csys_residual(s, 1) < 1e-4);
    mn_csys_destroy(s);
    mn_data_destroy(d);
    mn_model_destroy(m);
    mn_scene_destroy(sc);
}

/* An applied force on a handle (Welman 4.1.1, 5.2.3) from the scene: the feet pinned, the
 * right hand pushed up by a force each frame; the hand rises and the feet stay. */
static void test_force(void) {
    const char* text = "{\"frames\": 10,\n"
                       " \"handles\": [{\"name\": \"lf\", \"joint\": \"left foot\"},\n"
                       "  {\"name\": \"rf\", \"joint\": \"right foot\"},\n"
                       "  {\"name\": \"hand\", \"joint\": \"right hand\"}],\n"
                       " \"constraints\": [{\"type\": \"pin\", \"handle\": \"lf\"},\n"
                       "  {\"type\": \"pin\", \"handle\": \"rf\"}],\n"
                       " \"drags\": [{\"handle\": \"hand\", \"force\": [0, 2, 0]}]}\n";
    mn_error err;
    mn_scene* sc = NULL;
    CHECK(mn_scene_read_mem(text, strlen(text), "force.json", &sc, &err) == MN_OK);
    mn_model* m = mn_stickman_model(&err);
    mn_data* d = m ? mn_data_create(m, 0) : NULL;
    mn_csys* s = NULL;
    CHECK(sc && d && mn_scene_bind(sc, m, d, &s, &err) == MN_OK);
    if (s) {
        int hand = mn_csys_find_handle(s, "hand");
        mn_vec3 h0, h1;
        mn_csys_handle_value(s, hand, &h0, NULL);
        mn_csolve_result r;
        for (int f = 0; f < mn_scene_frames(sc); f++) {
            CHECK(mn_scene_apply_frame(sc, s, f) == MN_OK);
            mn_csys_solve(s, NULL, &r);
            CHECK(r.status == MN_OK);
        }
        mn_csys_handle_value(s, hand, &h1, NULL);
        CHECK(h1.y > h0.y + 0.05);
        CHECK(mn_csys_residual(s, 0) < 1e-4 && mn_csys_residual(s, 1) < 1e-4);
        mn_csys_destroy(s);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
    mn_scene_destroy(sc);
}

typedef struct bad_case {
    const char* what;
    const char* text;
    const char* field;
    int line;
    int at_bind; /* the error shows when bound to the stick figure (2: to two of them) */
} bad_case;

#define H2                                                                                         \
    "{\"handles\": [\n {\"name\": \"a\", \"joint\": \"left hand\"},\n {\"name\": \"b\", "          \
    "\"joint\": \"pelvis\"},\n"

static const bad_case bad[] = {
    {"truncated JSON", "{\n  \"handles\": [\n", "json", 2, 0},
    {"not an object", "[1, 2]\n", "scene", 1, 0},
    {"unknown member", "{\n \"handels\": []\n}\n", "handels", 2, 0},
    {"handles not an array", "{\n \"handles\": 3\n}\n", "handles", 2, 0},
    {"handle without joint", "{\"handles\": [\n {\"name\": \"a\"}\n]}\n", "handles[0]", 2, 0},
    {"unknown handle type",
     "{\"handles\": [\n {\"name\": \"a\",\n \"type\": \"elbow\", \"joint\": \"x\"}\n]}\n",
     "handles[0].type", 3, 0},
    {"duplicate handle", H2 " {\"name\": \"a\", \"joint\": \"head\"}\n]}\n", "handles[2].name", 4,
     0},
    {"unknown handle in a constraint",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"constraints\": [\n  {\"type\": \"pin\", "
        "\"handle\": \"zz\"}]}\n",
     "constraints[0].handle", 6, 0},
    {"infinite target",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"constraints\": [\n  {\"type\": \"pin\",\n "
        "\"handle\": \"a\", \"target\": [0, 1e999, 0]}]}\n",
     "constraints[0].target[1]", 7, 0},
    {"degenerate plane",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"constraints\": [\n  {\"type\": \"plane\", "
        "\"handle\": \"a\",\n \"origin\": [0,0,0],\n \"normal\": [0, 0, 0]}]}\n",
     "constraints[0].normal", 8, 0},
    {"degenerate line",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"constraints\": [\n  {\"type\": \"line\", "
        "\"handle\": \"a\", \"origin\": [0,0,0],\n \"direction\": [0, 0, 0]}]}\n",
     "constraints[0].direction", 7, 0},
    {"cyclic equalities",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"constraints\": [\n"
        "  {\"type\": \"equal\", \"handle\": \"a\", \"handle2\": \"b\"},\n"
        "  {\"type\": \"equal\", \"handle\": \"b\", \"handle2\": \"c\"},\n"
        "  {\"type\": \"equal\", \"handle\": \"c\",\n \"handle2\": \"a\"}]}\n",
     "constraints[2].handle2", 9, 0},
    {"orient axis not x, y or z",
     "{\"handles\": [{\"name\": \"o\", \"type\": \"orientation\", \"joint\": \"head\"}],\n "
     "\"constraints\": [\n {\"type\": \"orient\", \"handle\": \"o\",\n \"axis\": \"xy\"}]}\n",
     "constraints[0].axis", 4, 0},
    {"axis on a pin",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"constraints\": [\n  {\"type\": \"pin\", "
        "\"handle\": \"a\",\n \"axis\": \"x\"}]}\n",
     "constraints[0].axis", 7, 0},
    {"empty support polygon",
     "{\"handles\": [{\"name\": \"com\", \"type\": \"com\"}],\n \"constraints\": [\n {\"type\": "
     "\"balance\", \"handle\": \"com\",\n \"polygon\": []}]}\n",
     "constraints[0].polygon", 4, 0},
    {"member of another type",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"constraints\": [\n  {\"type\": \"plane\", "
        "\"handle\": \"a\", \"origin\": [0,0,0], \"normal\": [0,1,0],\n \"target\": [0,0,0]}]}\n",
     "constraints[0].target", 7, 0},
    {"drag with two goals",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"drags\": [\n {\"handle\": \"a\", "
        "\"target\": [0,0,0], \"offset\": [0,0,0]}]}\n",
     "drags[0]", 6, 0},
    {"bad solver", "{\n \"solver\": \"magic\"}\n", "solver", 2, 0},
    {"orientation drag with a path",
     "{\"handles\": [{\"name\": \"o\", \"type\": \"orientation\", \"joint\": \"head\"}],\n "
     "\"drags\": [{\"handle\": \"o\",\n \"path\": [[0,0,0]]}]}\n",
     "drags[0].path", 3, 0},
    {"orientation drag with a point target",
     "{\"handles\": [{\"name\": \"o\", \"type\": \"orientation\", \"joint\": \"head\"}],\n "
     "\"drags\": [{\"handle\": \"o\",\n \"target\": [0,0,0]}]}\n",
     "drags[0].target", 3, 0},
    {"frames zero", "{\n \"frames\": 0}\n", "frames", 2, 0},
    {"frames beyond the bound", "{\n \"frames\": 100001}\n", "frames", 2, 0},
    {"a member given twice", "{\"frames\": 2,\n \"handles\": [],\n \"frames\": 3}\n", "json", 3, 0},
    {"root empty", "{\n \"root\": \"\"}\n", "root", 2, 0},
    {"figures empty", "{\n \"figures\": []}\n", "figures", 2, 0},
    {"figure name with a slash",
     "{\"figures\": [\n {\"name\": \"a/b\", \"file\": \"stickman\"}]}\n", "figures[0].name", 2, 0},
    {"figure without a file", "{\"figures\": [\n {\"name\": \"a\"}]}\n", "figures[0]", 2, 0},
    {"figure with a file and a sequence",
     "{\"figures\": [\n {\"name\": \"a\", \"file\": \"s\", \"sequence\": \"q.json\"}]}\n",
     "figures[0]", 2, 0},
    {"figures and a root",
     "{\"figures\": [{\"name\": \"a\", \"file\": \"s\"}],\n \"root\": \"x\"}\n", "root", 2, 0},
    {"handle of no figure",
     "{\"figures\": [{\"name\": \"a\", \"file\": \"s\"}, {\"name\": \"b\", \"file\": \"s\"}],\n"
     " \"handles\": [{\"name\": \"h\",\n \"joint\": \"head\", \"figure\": \"c\"}]}\n",
     "handles[0].figure", 3, 2},
    {"force and target",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"drags\": [{\"handle\": \"a\",\n "
        "\"force\": [0, 1, 0], \"target\": [0, 0, 0]}]}\n",
     "drags[0]", 5, 0},
    {"force not a vector",
     H2 " {\"name\": \"c\", \"joint\": \"head\"}],\n \"drags\": [{\"handle\": \"a\",\n "
        "\"force\": [0, 1]}]}\n",
     "drags[0].force", 6, 0},
    {"root a number", "{\"frames\": 2,\n \"root\": 3}\n", "root", 2, 0},
    {"unknown joint", H2 " {\"name\": \"c\",\n \"joint\": \"tail\"}]}\n", "handles[2].joint", 5, 1},
    {"non-convex polygon",
     "{\"handles\": [{\"name\": \"com\", \"type\": \"com\"}],\n \"constraints\": [\n {\"type\": "
     "\"balance\", \"handle\": \"com\",\n"
     " \"polygon\": [[0,0,0], [1,0,0], [0.2,0,0.2], [0,0,1]]}]}\n",
     "constraints[0].polygon", 4, 1},
};

static void test_malformed(void) {
    mn_model* m = mn_stickman_model(NULL);
    mn_data* d = mn_data_create(m, 0);
    double* q0 = malloc(sizeof(double) * (size_t)m->nq);
    memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const bad_case* b = &bad[i];
        mn_error err;
        mn_error_clear(&err);
        mn_scene* sc = NULL;
        mn_status st = mn_scene_read_mem(b->text, strlen(b->text), "bad.json", &sc, &err);
        mn_csys* s = NULL;
        if (b->at_bind) {
            CHECK(st == MN_OK);
            /* at_bind 2: bound to two stick figures (the scene's "figures") */
            mn_figure two[2] = {{m, d}, {m, d}};
            if (sc)
                st = b->at_bind == 2 ? mn_scene_bind_figures(sc, two, 2, &s, &err)
                                     : mn_scene_bind(sc, m, d, &s, &err);
            CHECK(s == NULL);
        } else {
            CHECK(sc == NULL);
        }
        CHECK(st != MN_OK);
        int ok = st != MN_OK && !strcmp(err.field, b->field) && err.line == b->line &&
                 !strcmp(err.file, "bad.json");
        if (!ok)
            fprintf(stderr, "case '%s': got field '%s' line %d: %s\n", b->what, err.field, err.line,
                    err.message);
        CHECK(ok);
        CHECK(strchr(err.message, '\n') == NULL);
        CHECK(!memcmp(q0, d->q, sizeof(double) * (size_t)m->nq)); /* nothing applied */
        mn_scene_destroy(sc);
    }
    free(q0);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_orientation_drag(void) {
    const char* text = "{\"handles\": [{\"name\": \"o\", \"type\": \"orientation\", \"joint\": "
                       "\"pelvis\"}],\n"
                       " \"drags\": [{\"handle\": \"o\", \"target\": [0.9553364891, 0, "
                       "0.2955202067, 0]}]}\n"; /* 0.6 rad about y */
    mn_error err;
    mn_scene* sc = NULL;
    CHECK(mn_scene_read_mem(text, strlen(text), "rot.json", &sc, &err) == MN_OK);
    if (!sc) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    mn_model* m = mn_stickman_model(NULL);
    mn_data* d = mn_data_create(m, 0);
    mn_csys* s = NULL;
    CHECK(mn_scene_bind(sc, m, d, &s, &err) == MN_OK);
    CHECK(mn_scene_apply_frame(sc, s, 0) == MN_OK);
    CHECK_NEAR(mn_csys_drag_error(s, 0), 0.6, 1e-9);
    mn_csolve_options o = mn_csolve_default();
    mn_csolve_result r;
    CHECK(mn_csys_solve(s, &o, &r) == MN_OK);
    CHECK(mn_csys_drag_error(s, 0) < 1e-4);
    mn_csys_destroy(s);
    mn_data_destroy(d);
    mn_model_destroy(m);
    mn_scene_destroy(sc);
}

/* Bound with room to spare (the editor's locks, then its drag's handle and a balance): the
 * scene's handles and constraints at their indices, then exactly the spare room, and a bad
 * spare count refused with nothing built. */
static void test_spare(void) {
    mn_error err;
    mn_scene* sc = NULL;
    CHECK(mn_scene_read_mem(hips_scene, strlen(hips_scene), "hips.json", &sc, &err) == MN_OK);
    mn_model* m = mn_stickman_model(&err);
    mn_data* d = m ? mn_data_create(m, 0) : NULL;
    if (!sc || !d) {
        mn_data_destroy(d);
        mn_model_destroy(m);
        mn_scene_destroy(sc);
        CHECK(0);
        return;
    }
    mn_figure fig = {m, d};
    mn_csys* s = (mn_csys*)&err;
    CHECK(mn_scene_bind_spare(sc, &fig, 1, -1, 0, &s, &err) == MN_ERR_ARG && s == NULL);
    CHECK(mn_scene_bind_spare(sc, &fig, 1, 0, 5000, &s, &err) == MN_ERR_ARG && s == NULL);
    CHECK(mn_scene_bind_spare(sc, &fig, 1, 2, 1, &s, &err) == MN_OK && s != NULL);
    if (!s) {
        mn_data_destroy(d);
        mn_model_destroy(m);
        mn_scene_destroy(sc);
        return;
    }
    CHECK(mn_csys_handle_count(s) == 8 && mn_csys_constraint_count(s) == 5);
    CHECK(mn_csys_find_handle(s, "left hip") == 3 && mn_csys_find_constraint(s, "c2") == 1);
    mn_handle_def h = mn_handle_default();
    h.joint = mn_model_find_joint(m, "left hand");
    CHECK(mn_csys_add_handle(s, &h, &err) == 8 && mn_csys_add_handle(s, &h, &err) == 9);
    CHECK(mn_csys_add_handle(s, &h, &err) < 0 && err.status == MN_ERR_NOMEM);
    mn_constraint_def c = mn_constraint_default();
    c.type = MN_CON_PIN;
    c.handle = 8;
    c.target = mn_v3(0, 1, 0);
    CHECK(mn_csys_add_constraint(s, &c, &err) == 5);
    CHECK(mn_csys_add_constraint(s, &c, &err) < 0 && err.status == MN_ERR_NOMEM);
    mn_csys_destroy(s);
    mn_data_destroy(d);
    mn_model_destroy(m);
    mn_scene_destroy(sc);
}

static void test_file_errors(void) {
    mn_error err;
    mn_scene* sc = (mn_scene*)&err; /* must be reset to NULL */
    CHECK(mn_scene_read(MN_TEST_DATA "/no-such-scene.json", &sc, &err) == MN_ERR_IO);
    CHECK(sc == NULL);
    const char* path = mn_test_write_temp(".json", hips_scene, strlen(hips_scene));
    CHECK(mn_scene_read(path, &sc, &err) == MN_OK);
    mn_scene_destroy(sc);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_good_scene);
    RUN(test_force);
    RUN(test_malformed);
    RUN(test_orientation_drag);
    RUN(test_spare);
    RUN(test_file_errors);
    return mn_test_report();
}
