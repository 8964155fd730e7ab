/* The workspace of a chain (Parent ch. 5), checked against a planar arm of three unlimited
 * hinges (links 1, 0.6, 0.3) whose workspaces are known in closed form: reachable the
 * annulus 0.1 <= r <= 1.9, dexterous (every heading of the last link) 0.7 <= r <= 1.3. */
#include <marionette/model.h>

#include <stdlib.h>

#include "test.h"

static mn_model* planar3(void) {
    mn_spec* s = mn_spec_create("planar3");
    double len[4] = {0, 1, 0.6, 0.3};
    const char* names[4] = {"j1", "j2", "j3", "tool"};
    for (int i = 0; i < 4; i++) {
        mn_joint_def d = mn_joint_default();
        d.name = names[i];
        d.parent = i - 1;
        d.type = i < 3 ? MN_JOINT_HINGE : MN_JOINT_FIXED;
        d.axis = mn_v3(0, 0, 1);
        d.offset = mn_v3(len[i], 0, 0);
        mn_spec_add_joint(s, &d, NULL);
    }
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

/* The dexterity of the voxel holding p, -1 when none does. */
static double dexterity_at(const mn_workspace* w, mn_vec3 p) {
    int i[3] = {(int)floor((p.x - w->origin.x) / w->voxel),
                (int)floor((p.y - w->origin.y) / w->voxel),
                (int)floor((p.z - w->origin.z) / w->voxel)};
    for (int v = 0; v < w->nvoxels; v++)
        if (w->voxel_index[3 * v] == i[0] && w->voxel_index[3 * v + 1] == i[1] &&
            w->voxel_index[3 * v + 2] == i[2])
            return w->voxel_dexterity[v];
    return -1;
}

static void test_planar_arm(void) {
    mn_model* m = planar3();
    mn_workspace_options o = mn_workspace_default();
    o.samples = 400000;
    o.voxel = 0.1;
    o.axis = 0;        /* the last link's direction */
    o.dexterous = 1.0; /* every heading the arm has anywhere (Parent: "all orientations") */
    mn_workspace w;
    mn_error err;
    CHECK(mn_workspace_sample(m, -1, 3, mn_v3(0, 0, 0), &o, &w, &err) == MN_OK);
    /* every sample in the annulus and the plane */
    double rmin = 1e9, rmax = 0, zmax = 0;
    for (int s = 0; s < w.nsamples; s++) {
        mn_vec3 p = w.points[s];
        double r = hypot(p.x, p.y);
        rmin = fmin(rmin, r), rmax = fmax(rmax, r), zmax = fmax(zmax, fabs(p.z));
    }
    CHECK(rmin >= 0.1 - 1e-9 && rmax <= 1.9 + 1e-9 && zmax < 1e-12);
    CHECK(rmin < 0.15 && rmax > 1.88); /* and the samples reach its edges */
    /* the reachable area: voxels x 0.01 against pi (1.9^2 - 0.1^2), the boundary voxels
     * adding their part */
    double area = w.nvoxels * 0.01, want = MN_PI * (1.9 * 1.9 - 0.1 * 0.1);
    CHECK(area > want && area < 1.15 * want);
    /* the tool axis stays in the plane: 16 of the 128 cells (one band) */
    CHECK(w.directions == 16);
    /* dexterous inside 0.7..1.3, not near the rim */
    CHECK(dexterity_at(&w, mn_v3(1.0, 0.05, 0)) >= 0.9);
    CHECK(dexterity_at(&w, mn_v3(-0.2, 0.95, 0)) >= 0.9);
    CHECK(dexterity_at(&w, mn_v3(1.85, 0.05, 0)) < 0.5);
    double dex_area = w.ndexterous * 0.01, dex_want = MN_PI * (1.3 * 1.3 - 0.7 * 0.7);
    CHECK(dex_area > 0.7 * dex_want && dex_area < 1.3 * dex_want);
    if (getenv("MN_DEBUG") || !(dex_area > 0.7 * dex_want && dex_area < 1.3 * dex_want))
        fprintf(stderr, "  dexterous area %g, closed form %g\n", dex_area, dex_want);
    /* the same seed, the same samples */
    mn_workspace w2;
    CHECK(mn_workspace_sample(m, -1, 3, mn_v3(0, 0, 0), &o, &w2, &err) == MN_OK);
    CHECK(w2.nvoxels == w.nvoxels && w2.points[1234].x == w.points[1234].x);
    mn_workspace_free(&w2);
    mn_workspace_free(&w);
    /* bad requests */
    CHECK(mn_workspace_sample(m, 3, 0, mn_v3(0, 0, 0), &o, &w, &err) == MN_ERR_ARG);
    o.axis = 3;
    CHECK(mn_workspace_sample(m, -1, 3, mn_v3(0, 0, 0), &o, &w, &err) == MN_ERR_ARG);
    o.axis = 0, o.samples = 0;
    CHECK(mn_workspace_sample(m, -1, 3, mn_v3(0, 0, 0), &o, &w, &err) == MN_ERR_ARG);
    o.samples = 100, o.voxel = 1e-9;
    CHECK(mn_workspace_sample(m, -1, 3, mn_v3(0, 0, 0), &o, &w, &err) == MN_ERR_ARG &&
          w.points == NULL);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_planar_arm);
    return mn_test_report();
}
