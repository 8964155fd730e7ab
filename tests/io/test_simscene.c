/* Soft-body scene documents (docs/softbody.md): the shipped scenes read and run (3D lattice,
 * a character driven by its animation, the plane), the baked glb reads back with the
 * controllers where the simulation put them, the mesh is read beneath the scene's folder
 * unless trusted, and a table of malformed scenes, each refused with its line and field. */
#include <marionette/simscene.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

#define SCENES MN_SOURCE "/docs/examples/sim"

static mn_sim* read_scene(const char* path, int trusted) {
    mn_sim_read_options o = mn_sim_read_default();
    o.trusted = trusted;
    mn_sim* s = NULL;
    mn_error err;
    if (mn_sim_read(path, &o, &s, NULL, &err) != MN_OK)
        fprintf(stderr, "  %s: %s\n", path, err.message);
    return s;
}

static int finite_all(const double* x, int n) {
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* The tube: a lattice body, one driven bone at the top, three free ones that swing. */
static void test_tube(void) {
    mn_sim* s = read_scene(SCENES "/tube.json", 0);
    CHECK(s != NULL);
    if (!s) return;
    CHECK(s->kind == MN_SIM_LATTICE && s->lattice && s->rig->nctrl == 4);
    CHECK(s->driven[0] && !s->driven[1] && !s->driven[3]);
    CHECK(s->npaths == 1 && s->paths[0].nkeys == 21 && s->paths[0].loop);
    CHECK_NEAR(s->dt, 1.0 / 60, 1e-15);
    mn_vec3 tip0 = mn_coupled_pose(s->coupled)[3].p;
    long a0 = mn_alloc_count();
    double worst = 0;
    for (int f = 1; f <= 30; f++) {
        mn_coupled_result r;
        CHECK(mn_sim_step(s, f, &r) == MN_OK);
        worst = fmax(worst, r.residual);
    }
    CHECK(mn_alloc_count() == a0); /* no allocation in a frame */
    CHECK(worst < 1e-12);
    /* the top bone is where its path is at 0.5 s (a key: exact) */
    mn_xform top = mn_coupled_pose(s->coupled)[0];
    CHECK_NEAR(top.p.x, 0.5 * sin(MN_PI * 0.5), 1e-9);
    /* and the free bones followed the swinging body */
    CHECK(mn_vec3_dist(mn_coupled_pose(s->coupled)[3].p, tip0) > 0.1);
    double* x = malloc((size_t)s->mesh.nverts * 3 * sizeof(double));
    mn_sim_mesh_now(s, x);
    CHECK(finite_all(x, 3 * s->mesh.nverts));
    free(x);
    mn_sim_destroy(s);
}

/* The plane: the gingerbread figure stays in z = 0, its feet where they were held. */
static void test_plane(void) {
    mn_sim* s = read_scene(SCENES "/gingerbread.json", 0);
    CHECK(s != NULL);
    if (!s) return;
    CHECK(s->kind == MN_SIM_PLANE && s->rig->dim == 2 && s->body->elem_corners == 3);
    int foot = mn_rig_find_ctrl(s->rig, "left_foot");
    CHECK(foot >= 0 && s->driven[foot]);
    mn_vec3 f0 = mn_coupled_pose(s->coupled)[foot].p;
    for (int f = 1; f <= 40; f++)
        CHECK(mn_sim_step(s, f, NULL) == MN_OK);
    int flat = 1;
    for (int i = 0; i < s->body->nverts; i++)
        flat &= s->body->x[3 * i + 2] == 0;
    CHECK(flat);
    CHECK(mn_vec3_dist(mn_coupled_pose(s->coupled)[foot].p, f0) == 0);
    int hand = mn_rig_find_ctrl(s->rig, "right_hand");
    CHECK(hand >= 0 && s->driven[hand]);
    mn_sim_destroy(s);
}

/* CesiumMan: driven by its walk, its hands and head free; the baked glb has its skeleton and
 * mesh, and its free joints are where the fitted controllers were. */
static void test_character_and_glb(void) {
    mn_sim* s = read_scene(SCENES "/cesiumman.json", 1);
    CHECK(s != NULL);
    if (!s) return;
    CHECK(s->gltf.nverts == s->mesh.nverts && s->model && s->anim == 0);
    int head = mn_rig_find_ctrl(s->rig, "joint4");
    CHECK(head >= 0 && !s->driven[head]);
    enum { NF = 12 };
    int m = s->rig->nctrl;
    mn_xform* track = malloc((size_t)NF * m * sizeof(mn_xform));
    for (int f = 1; f <= NF; f++) {
        CHECK(mn_sim_step(s, f, NULL) == MN_OK);
        memcpy(track + (size_t)(f - 1) * m, mn_coupled_pose(s->coupled), (size_t)m * sizeof *track);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/cesium-sim.glb", mn_test_temp_dir());
    mn_error err;
    CHECK(mn_sim_write_glb(s, path, track, NF, &err) == MN_OK);
    mn_gltf g;
    CHECK(mn_gltf_read(path, &g, NULL, &err) == MN_OK);
    CHECK(g.nverts == s->gltf.nverts && g.njoints == s->gltf.njoints && g.nanims == 1);
    if (g.nanims == 1 && g.anims[0].nkeys == NF) {
        /* the head joint at the last key: its skinning matrix maps its bind position where
         * the fitted controller put its pivot */
        double* world = malloc((size_t)g.njoints * 12 * sizeof(double));
        double* skin = malloc((size_t)g.njoints * 12 * sizeof(double));
        mn_gltf_sample(&g, 0, g.anims[0].key_times[NF - 1], world);
        mn_gltf_skin_matrices(&g, world, skin);
        int j = s->ctrl_joint[head];
        mn_vec3 piv = s->rig->ctrl_pivot[head];
        const double* S = skin + 12 * j;
        mn_vec3 y = mn_v3(S[0] * piv.x + S[1] * piv.y + S[2] * piv.z + S[3],
                          S[4] * piv.x + S[5] * piv.y + S[6] * piv.z + S[7],
                          S[8] * piv.x + S[9] * piv.y + S[10] * piv.z + S[11]);
        mn_vec3 want = track[(size_t)(NF - 1) * m + head].p;
        if (getenv("MN_VERBOSE"))
            fprintf(stderr, "  head (%g %g %g) want (%g %g %g)\n", y.x, y.y, y.z, want.x, want.y,
                    want.z);
        CHECK(mn_vec3_dist(y, want) < 1e-5);
        free(world);
        free(skin);
    } else {
        CHECK(!"one animation of one key per frame");
    }
    mn_gltf_free(&g);
    free(track);
    mn_sim_destroy(s);
}

/* CesiumMan's flesh moves with the walk and off the rig's reproduction (the deviation the
 * coupling leaves it: its jiggle), and settles once the animation stops (at 2 s; not looped
 * here). */
static void test_settles(void) {
    mn_sim* s = read_scene(SCENES "/cesiumman.json", 1);
    CHECK(s != NULL);
    if (!s) return;
    s->loop = 0;
    double moving = 0, late = 0, dev = 0;
    for (int f = 1; f <= 240; f++) {
        mn_coupled_result r;
        CHECK(mn_sim_step(s, f, &r) == MN_OK);
        if (f <= 120) moving = fmax(moving, r.max_speed), dev = fmax(dev, r.fit_rms);
        if (f > 220) late = fmax(late, r.max_speed);
    }
    if (getenv("MN_VERBOSE"))
        fprintf(stderr, "  walking: speed %g, deviation %g; settled: %g\n", moving, dev, late);
    CHECK(moving > 0.5);
    CHECK(dev > 1e-3);
    CHECK(late < 0.1 * moving && late < 0.2);
    mn_sim_destroy(s);
}

/* CesiumMan driven by a CMU walk retargeted onto it: the take's frames become the driven
 * controllers' poses, and the hips walk off while the free head rides along. */
static void test_take(void) {
    mn_sim* s = read_scene(SCENES "/cesiumman_take.json", 1);
    CHECK(s != NULL);
    if (!s) return;
    CHECK(s->take_frames == 344 && s->anim < 0); /* the take's own frames */
    CHECK(s->take_dt == 0.0083333);
    int hips = mn_rig_find_ctrl(s->rig, "joint0"), head = mn_rig_find_ctrl(s->rig, "joint4");
    CHECK(hips >= 0 && head >= 0 && s->driven[hips] && !s->driven[head]);
    mn_vec3 h0 = mn_coupled_pose(s->coupled)[hips].p;
    for (int f = 1; f <= 60; f++)
        CHECK(mn_sim_step(s, f, NULL) == MN_OK);
    mn_vec3 h1 = mn_coupled_pose(s->coupled)[hips].p;
    double walked = sqrt((h1.x - h0.x) * (h1.x - h0.x) + (h1.z - h0.z) * (h1.z - h0.z));
    if (getenv("MN_VERBOSE")) fprintf(stderr, "  hips walked %g m in 1 s\n", walked);
    CHECK(walked > 0.3 && walked < 3);
    /* the free head stays on the neck (attached), above the hips */
    CHECK(mn_coupled_pose(s->coupled)[head].p.y > h1.y + 0.3);
    mn_sim_destroy(s);
}

/* A mesh beyond the scene's folder is read only when the caller trusts the document. */
static void test_confined_mesh(void) {
    char dir[600], path[700], text[300];
    snprintf(dir, sizeof dir, "%s/scenes", mn_test_temp_dir());
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/out.json", dir);
    snprintf(text, sizeof text,
             "{\"mesh\": \"../../../../../../../../" SCENES
             "/gingerbread.obj\", \"controllers\": [{\"name\": \"a\", \"pivot\": [0, 1]}]}");
    FILE* f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    mn_sim* s = NULL;
    mn_error err;
    mn_sim_read_options o = mn_sim_read_default();
    CHECK(mn_sim_read(path, &o, &s, NULL, &err) != MN_OK && s == NULL);
    CHECK(strstr(err.message, "cannot read the mesh") && strstr(err.field, "mesh") &&
          err.line == 1);
    o.trusted = 1;
    CHECK(mn_sim_read(path, &o, &s, NULL, &err) == MN_OK && s && s->kind == MN_SIM_PLANE);
    mn_sim_destroy(s);
    /* a limit on the nodes, as a server sets */
    o.max_nodes = 100;
    s = NULL;
    CHECK(mn_sim_read(path, &o, &s, NULL, &err) != MN_OK && strstr(err.message, "at most 100"));
}

#define TUBE "\"mesh\": {\"tube\": {\"length\": 1, \"radius\": 0.2, \"rings\": 5}}"
#define BONE "{\"name\": \"b\", \"kind\": \"bone\", \"pivot\": [0,0,0], \"tail\": [0,1,0]}"

/* Each malformed scene: refused, with the field and the line of the fault. */
static void test_malformed(void) {
    static const struct {
        const char* text;
        const char* field;
        int line;
        const char* says;
    } bad[] = {
        {"[1]", "scene", 1, "JSON object"},
        {"{\"body\": {}}", "scene", 1, "missing member \"mesh\""},
        {"{" TUBE ",\n \"bogus\": 1}", "bogus", 2, "unknown member"},
        {"{\"mesh\": {\"tube\": {\"axis\": \"w\"}}}", "mesh.tube.axis", 1, "expected x"},
        {"{\"mesh\": {\"box\": {}}}", "mesh", 1, "tube"},
        {"{\"mesh\": {\"tube\": {\"rings\": 1000, \"segments\": 1000}}}", "mesh.tube", 1,
         "more than"},
        {"{" TUBE ", \"controllers\": [" BONE "],\n \"body\": {\"kind\": \"jelly\"}}", "body.kind",
         2, "lattice, surface or plane"},
        {"{" TUBE ", \"controllers\": [" BONE "], \"body\": {\n\"resolution\": 0}}",
         "body.resolution", 2, "[1, 256]"},
        {"{" TUBE "}", "scene", 1, "missing member \"controllers\""},
        {"{" TUBE
         ",\n \"controllers\": [{\"name\": \"b\", \"kind\": \"bone\", \"pivot\": [0,0,0]}]}",
         "controllers[0]", 2, "tail"},
        {"{" TUBE ", \"controllers\": [" BONE ",\n {\"name\": \"c\", \"pivot\": [0,1,0], "
         "\"parent\": \"z\"}]}",
         "controllers[1].parent", 2, "no controller \"z\""},
        {"{" TUBE ", \"controllers\": [" BONE "],\n \"driven\": [\"q\"]}", "driven[0]", 2,
         "no controller \"q\""},
        {"{" TUBE ", \"controllers\": [" BONE "], \"drive\": {\"paths\": {\"b\": {\"keys\": [\n"
         "{\"t\": 1}, {\"t\": 0.5}]}}}}",
         "drive.paths.b.keys[1].t", 2, "increase"},
        {"{" TUBE ", \"controllers\": [" BONE "], \"drive\": {\"paths\": {\"b\": {\"keys\": [\n"
         "{\"t\": 0, \"r\": [0,0,0,0]}]}}}}",
         "drive.paths.b.keys[0].r", 2, ""},
        {"{" TUBE ", \"controllers\": [" BONE "], \"drive\": {\"paths\": {\"b\": {\"keys\": [\n"
         "{\"t\": 0, \"r\": [1,0,0,0], \"angle\": 1}]}}}}",
         "drive.paths.b.keys[0]", 2, "both"},
        {"{" TUBE ", \"controllers\": [" BONE "],\n \"drive\": {\"animation\": 0}}",
         "drive.animation", 2, "only a glTF"},
        {"{" TUBE ", \"controllers\": [" BONE "],\n \"drive\": {\"take\": \"walk.bvh\"}}",
         "drive.take", 2, "a take drives a glTF character"},
        {"{" TUBE ", \"controllers\": [" BONE "], \"simulation\": {\n\"frames\": 0}}",
         "simulation.frames", 2, "[1, 100000]"},
        {"{" TUBE ", \"controllers\": [" BONE "], \"simulation\": {\"substeps\": 5000}}",
         "simulation.substeps", 1, "[1, 1000]"},
        {"{" TUBE ", \"controllers\": [" BONE "], \"weights\": {\n\"influences\": 9}}",
         "weights.influences", 2, "[1, 8]"},
        {"{" TUBE ", \"controllers\": [" BONE "], \"body\": {\"kind\": \"plane\"}}", "body", 1,
         "z = 0"},
        {"{\"mesh\": \"x.txt\", \"controllers\": [" BONE "]}", "mesh", 1, ".obj"},
        {"{\"mesh\": \"nowhere.obj\", \"controllers\": [" BONE "]}", "mesh", 1,
         "cannot read the mesh"},
        {"{" TUBE ", \"controllers\": [" BONE "], \"coupling\": {\n\"compliance_driven\": -1}}",
         "coupling.compliance_driven", 2, "[0,"},
        {"{" TUBE ",\n \"controllers\": [" BONE "]", "json", 2, "malformed JSON"},
    };
    int n = (int)(sizeof bad / sizeof bad[0]);
    for (int k = 0; k < n; k++) {
        mn_sim* s = (mn_sim*)(void*)1;
        mn_error err;
        mn_error_clear(&err);
        mn_status st =
            mn_sim_read_mem(bad[k].text, strlen(bad[k].text), "bad.json", NULL, &s, NULL, &err);
        int ok = st != MN_OK && s == NULL && !strcmp(err.field, bad[k].field) &&
                 err.line == bad[k].line && strstr(err.message, bad[k].says) &&
                 !strncmp(err.message, "bad.json:", 9);
        if (!ok)
            fprintf(stderr, "  case %d: status %d field '%s' line %d: %s\n", k, st, err.field,
                    err.line, err.message);
        CHECK(ok);
    }
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_tube);
    RUN(test_plane);
    RUN(test_character_and_glb);
    RUN(test_take);
    RUN(test_settles);
    RUN(test_confined_mesh);
    RUN(test_malformed);
    return mn_test_report();
}
