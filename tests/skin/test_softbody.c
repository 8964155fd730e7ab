/* The XPBD soft body and the fit inside it: gravity, constraints, ground, pins, volume,
 * determinism, and no allocation in a simulation step or the fit that follows it. */
#include <marionette/skin.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

/* A closed box of 8 corners, 12 outward triangles, centred at c with half-size h. */
static void box(mn_vec3 c, double h, double pos[24], int tris[36]) {
    for (int i = 0; i < 8; i++) {
        pos[3 * i] = c.x + ((i & 1) ? h : -h);
        pos[3 * i + 1] = c.y + ((i & 2) ? h : -h);
        pos[3 * i + 2] = c.z + ((i & 4) ? h : -h);
    }
    static const int T[36] = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                              2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};
    memcpy(tris, T, sizeof T);
}

static mn_vec3 centre(const mn_softbody* sb) {
    mn_vec3 c = mn_v3(0, 0, 0);
    for (int i = 0; i < sb->nverts; i++)
        c = mn_vec3_add(c, mn_v3(sb->x[3 * i], sb->x[3 * i + 1], sb->x[3 * i + 2]));
    return mn_vec3_scale(c, 1.0 / sb->nverts);
}

static void test_volume_and_free_fall(void) {
    double pos[24];
    int tris[36];
    box(mn_v3(0, 5, 0), 0.5, pos, tris);
    mn_softbody_options o = mn_softbody_default();
    o.damping = 0;
    o.edge_compliance = 0;
    mn_softbody* sb = mn_softbody_create(8, pos, 12, tris, NULL, &o, NULL);
    CHECK(sb != NULL);
    CHECK_NEAR(mn_softbody_volume(sb), 1.0, 1e-12); /* outward winding: +1 */
    /* internal constraints do not move the centre of mass: free fall for 1 s. The
     * substepped symplectic Euler gives y0 - g T^2 / 2 (1 + 1/N) for N substeps in all. */
    int steps = 60;
    for (int s = 0; s < steps; s++)
        CHECK(mn_softbody_step(sb, 1.0 / steps, NULL) == MN_OK);
    int N = steps * o.substeps;
    CHECK_NEAR(centre(sb).y, 5 - 0.5 * 9.81 * (1 + 1.0 / N), 1e-9);
    CHECK_NEAR(centre(sb).x, 0, 1e-12);
    CHECK_NEAR(mn_softbody_volume(sb), 1.0, 1e-6); /* no deformation in free fall */
    mn_softbody_destroy(sb);
}

static void test_ground_pins_determinism(void) {
    double pos[24];
    int tris[36];
    box(mn_v3(0, 0.6, 0), 0.5, pos, tris);
    mn_softbody_options o = mn_softbody_default();
    o.ground = 0;
    o.edge_compliance = 1e-3;
    mn_softbody* a = mn_softbody_create(8, pos, 12, tris, NULL, &o, NULL);
    mn_softbody* b = mn_softbody_create(8, pos, 12, tris, NULL, &o, NULL);
    /* pin corner 7 and drive it sideways */
    mn_softbody_pin(a, 7, 1);
    mn_softbody_pin(b, 7, 1);
    double vol0 = mn_softbody_volume(a);
    long allocs = 0;
    for (int s = 0; s < 120; s++) {
        for (mn_softbody* sb = a;; sb = b) {
            sb->pin_target[21] = 0.5 + 0.005 * s;
            long a0 = mn_alloc_count();
            CHECK(mn_softbody_step(sb, 1.0 / 60, NULL) == MN_OK);
            allocs += mn_alloc_count() - a0;
            if (sb == b) break;
        }
    }
    CHECK(allocs == 0);
    CHECK(memcmp(a->x, b->x, 24 * sizeof(double)) == 0); /* bit for bit */
    for (int i = 0; i < 8; i++)
        CHECK(a->x[3 * i + 1] >= -1e-12);
    CHECK_NEAR(a->x[21], 0.5 + 0.005 * 119, 1e-12); /* the pinned corner is where it was driven */
    /* the volume constraint (compliance 0) holds the volume while the box hangs */
    CHECK(fabs(mn_softbody_volume(a) - vol0) < 0.02 * vol0);
    /* releasing a pin restores its mass */
    mn_softbody_pin(a, 7, 0);
    CHECK(a->inv_mass[7] > 0);
    mn_softbody_destroy(a);
    mn_softbody_destroy(b);
}

static void test_bad_input(void) {
    double pos[24];
    int tris[36];
    box(mn_v3(0, 0, 0), 0.5, pos, tris);
    mn_error err;
    tris[5] = 8;
    CHECK(mn_softbody_create(8, pos, 12, tris, NULL, NULL, &err) == NULL);
    CHECK(err.status == MN_ERR_ARG);
    tris[5] = 3;
    pos[4] = NAN;
    CHECK(mn_softbody_create(8, pos, 12, tris, NULL, NULL, &err) == NULL);
    pos[4] = 0.5;
    mn_softbody_options o = mn_softbody_default();
    o.substeps = 0;
    CHECK(mn_softbody_create(8, pos, 12, tris, NULL, &o, &err) == NULL);
    mn_softbody* sb = mn_softbody_create(8, pos, 12, tris, NULL, NULL, &err);
    CHECK(mn_softbody_step(sb, -1, NULL) == MN_ERR_ARG);
    CHECK(mn_softbody_step(sb, NAN, NULL) == MN_ERR_ARG);
    int pairs[2] = {0, 0};
    CHECK(mn_softbody_add_distances(sb, 1, pairs, &err) == MN_ERR_ARG);
    pairs[1] = 9;
    CHECK(mn_softbody_add_distances(sb, 1, pairs, &err) == MN_ERR_ARG);
    pairs[1] = 7;
    CHECK(mn_softbody_add_distances(sb, 1, pairs, &err) == MN_OK);
    CHECK_NEAR(sb->rest_len[sb->nedges - 1], sqrt(3.0), 1e-12);
    mn_softbody_destroy(sb);
}

/* The seed's use: a soft bar hangs from its driven first bone; every step the fit
 * recovers the other bone from the simulated vertices, allocation-free, and the fitted
 * rig follows the bar (its error stays well below the bar's own motion). */
static void test_fit_inside_simulation(void) {
    const int nx = 9;
    int n = nx * 4, nt = 0;
    double pos[36 * 3];
    int tris[(8 * 4 * 2 + 4) * 3];
    for (int i = 0; i < nx; i++)
        for (int k = 0; k < 4; k++) {
            double* p = pos + 3 * (4 * i + k);
            p[0] = 2.0 * i / (nx - 1);
            p[1] = (k == 1 || k == 2) ? 0.1 : -0.1;
            p[2] = (k >= 2) ? 0.1 : -0.1;
        }
    /* side quads between consecutive square rings, and the two end caps */
    static const int ring[4] = {0, 1, 2, 3};
    for (int i = 0; i + 1 < nx; i++)
        for (int k = 0; k < 4; k++) {
            int a = 4 * i + ring[k], b = 4 * i + ring[(k + 1) % 4], c = a + 4, d = b + 4;
            int* T = tris + 3 * nt;
            T[0] = a, T[1] = b, T[2] = d, T[3] = a, T[4] = d, T[5] = c;
            nt += 2;
        }
    int caps[12] = {0,
                    2,
                    1,
                    0,
                    3,
                    2,
                    4 * (nx - 1),
                    4 * (nx - 1) + 1,
                    4 * (nx - 1) + 2,
                    4 * (nx - 1),
                    4 * (nx - 1) + 2,
                    4 * (nx - 1) + 3};
    memcpy(tris + 3 * nt, caps, sizeof caps);
    nt += 4;
    mn_softbody_options o = mn_softbody_default();
    o.edge_compliance = 0;
    o.substeps = 40;
    mn_softbody* sb = mn_softbody_create(n, pos, nt, tris, NULL, &o, NULL);
    CHECK(sb != NULL);
    int diag[2 * 128], nd = 0;
    for (int i = 0; i < nx; i++) { /* cross struts, and struts 2 and 4 rings on against bending */
        diag[2 * nd] = 4 * i, diag[2 * nd + 1] = 4 * i + 2, nd++;
        diag[2 * nd] = 4 * i + 1, diag[2 * nd + 1] = 4 * i + 3, nd++;
        for (int k = 0; k < 4; k++) {
            if (i + 2 < nx)
                diag[2 * nd] = 4 * i + k, diag[2 * nd + 1] = 4 * (i + 2) + (k + 2) % 4, nd++;
            if (i + 4 < nx)
                diag[2 * nd] = 4 * i + k, diag[2 * nd + 1] = 4 * (i + 4) + (k + 2) % 4, nd++;
        }
    }
    CHECK(mn_softbody_add_distances(sb, nd, diag, NULL) == MN_OK);

    mn_rig* rig = mn_rig_create(3, n, pos, NULL, NULL);
    mn_ctrl_def d = mn_ctrl_default();
    d.kind = MN_CTRL_BONE;
    d.name = "root";
    d.tail = mn_v3(1, 0, 0);
    mn_rig_add_ctrl(rig, &d, NULL);
    d.name = "tip";
    d.pivot = mn_v3(1, 0, 0);
    d.tail = mn_v3(2, 0, 0);
    d.parent = 0;
    d.attached = 1;
    mn_rig_add_ctrl(rig, &d, NULL);
    int idx[36 * 2];
    double w[36 * 2];
    for (int i = 0; i < n; i++) {
        double x = pos[3 * i], s = x < 0.75 ? 0 : x > 1.25 ? 1 : (x - 0.75) / 0.5;
        idx[2 * i] = 0, idx[2 * i + 1] = 1, w[2 * i] = 1 - s, w[2 * i + 1] = s;
        if (x < 0.3) mn_softbody_pin(sb, i, 1);
    }
    CHECK(mn_rig_set_weights(rig, 2, idx, w, NULL, NULL) == MN_OK);
    uint8_t fixed[2] = {1, 0};
    mn_fitter* f = mn_fitter_create(rig, fixed, NULL);
    CHECK(f != NULL);
    mn_xform pose[2];
    mn_rig_rest_pose(rig, pose);
    long allocs = 0;
    double worst = 0, tip_drop = 0;
    for (int s = 0; s < 90; s++) {
        double a = 0.3 * sin(0.1 * s);
        pose[0].R = mn_mat3_axis_angle(mn_v3(0, 0, 1), a);
        for (int i = 0; i < n; i++)
            if (sb->inv_mass[i] == 0) {
                mn_vec3 y =
                    mn_mat3_mulv(&pose[0].R, mn_v3(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]));
                sb->pin_target[3 * i] = y.x, sb->pin_target[3 * i + 1] = y.y,
                                   sb->pin_target[3 * i + 2] = y.z;
            }
        long a0 = mn_alloc_count();
        CHECK(mn_softbody_step(sb, 1.0 / 60, NULL) == MN_OK);
        mn_fit_result res;
        mn_fit(f, pose, sb->x, NULL, &res);
        allocs += mn_alloc_count() - a0;
        worst = fmax(worst, res.rms);
        tip_drop = fmax(tip_drop, -sb->x[3 * (n - 1) + 1]);
    }
    CHECK(allocs == 0);
    if (getenv("MN_VERBOSE")) fprintf(stderr, "  tip drop %g, worst rms %g\n", tip_drop, worst);
    CHECK(tip_drop > 0.1);         /* the bar really moves under gravity */
    CHECK(worst < 0.2 * tip_drop); /* and the rig follows it */
    /* the fitted tip bone hangs down like the bar does */
    mn_vec3 tail = mn_vec3_add(pose[1].p, mn_mat3_mulv(&pose[1].R, mn_v3(1, 0, 0)));
    mn_vec3 bar_tip = mn_v3(0, 0, 0);
    for (int k = 0; k < 4; k++)
        bar_tip = mn_vec3_add(
            bar_tip, mn_vec3_scale(mn_v3(sb->x[3 * (n - 4 + k)], sb->x[3 * (n - 4 + k) + 1],
                                         sb->x[3 * (n - 4 + k) + 2]),
                                   0.25));
    if (getenv("MN_VERBOSE"))
        fprintf(stderr, "  tail (%g %g %g) bar tip (%g %g %g)\n", tail.x, tail.y, tail.z, bar_tip.x,
                bar_tip.y, bar_tip.z);
    CHECK(mn_vec3_dist(tail, bar_tip) < 0.25 * tip_drop + 0.02);
    mn_fitter_destroy(f);
    mn_rig_destroy(rig);
    mn_softbody_destroy(sb);
}

/* The step's result: substeps done, the largest speed; an unstable step restores the state
 * it started from and says which field went wrong; NULL options mean the defaults. */
static void test_step_result(void) {
    double pos[24];
    int tris[36];
    box(mn_v3(0, 0, 0), 0.5, pos, tris);
    mn_error err;
    mn_softbody* sb = mn_softbody_create(8, pos, 12, tris, NULL, NULL, &err);
    mn_softbody_options def = mn_softbody_default();
    CHECK(sb && sb->opt.substeps == def.substeps && sb->opt.edge_compliance == def.edge_compliance);
    mn_softbody_result r;
    CHECK(mn_softbody_step(sb, 1.0 / 60, &r) == MN_OK);
    CHECK(r.status == MN_OK && r.iterations == def.substeps && r.message[0] == 0);
    double vmax = 0;
    for (int i = 0; i < 8; i++)
        vmax = fmax(vmax, sqrt(sb->v[3 * i] * sb->v[3 * i] + sb->v[3 * i + 1] * sb->v[3 * i + 1] +
                               sb->v[3 * i + 2] * sb->v[3 * i + 2]));
    CHECK(vmax > 0);
    CHECK_NEAR(r.max_speed, vmax, 1e-15);
    CHECK(mn_softbody_step(sb, 0, &r) == MN_ERR_ARG);
    CHECK(r.status == MN_ERR_ARG && strstr(r.message, "dt") != NULL);
    mn_softbody_destroy(sb);

    /* gravity that overflows within one step */
    mn_softbody_options o = mn_softbody_default();
    o.gravity = mn_v3(0, -1e308, 0);
    sb = mn_softbody_create(8, pos, 12, tris, NULL, &o, &err);
    CHECK(sb != NULL);
    double x0[24], v0[24];
    CHECK(mn_softbody_step(sb, 1.0 / 60, &r) == MN_OK || r.status == MN_ERR_NOCONVERGE);
    memcpy(x0, sb->x, sizeof x0);
    memcpy(v0, sb->v, sizeof v0);
    CHECK(mn_softbody_step(sb, 1e6, &r) == MN_ERR_NOCONVERGE);
    CHECK(r.status == MN_ERR_NOCONVERGE && strstr(r.message, "x: vertex") != NULL);
    CHECK(memcmp(x0, sb->x, sizeof x0) == 0 && memcmp(v0, sb->v, sizeof v0) == 0);
    for (int i = 0; i < 24; i++)
        CHECK(isfinite(sb->x[i]) && isfinite(sb->v[i]));
    mn_softbody_destroy(sb);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_volume_and_free_fall);
    RUN(test_ground_pins_determinism);
    RUN(test_bad_input);
    RUN(test_step_result);
    RUN(test_fit_inside_simulation);
    return mn_test_report();
}
