/* Volume elements, grabs, the lattice of tetrahedra and the two-way coupling of skinning
 * and the soft body (Wu & Umetani 2023): the complementary constraint holds after every
 * step, driven controllers move the body and the body moves the free ones, the one-way
 * mode is the former simulation bit for bit, nothing allocates in a step, and violent
 * drags never leave a non-finite state. */
#include <marionette/skin.h>

#include <stdlib.h>
#include <string.h>

#include "softbody_bar.h"
#include "test.h"

static double tets_volume(const double* x, int ntets, const int* tets) {
    double v = 0;
    for (int t = 0; t < ntets; t++) {
        const double *a = x + 3 * tets[4 * t], *b = x + 3 * tets[4 * t + 1],
                     *c = x + 3 * tets[4 * t + 2], *d = x + 3 * tets[4 * t + 3];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double p[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double q[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
        v += (u[0] * (p[1] * q[2] - p[2] * q[1]) - u[1] * (p[0] * q[2] - p[2] * q[0]) +
              u[2] * (p[0] * q[1] - p[1] * q[0])) /
             6;
    }
    return v;
}

static int all_finite(const double* x, int n) {
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static mn_vec3 centroid(const mn_softbody* sb) {
    mn_vec3 c = mn_v3(0, 0, 0);
    double M = 0;
    for (int i = 0; i < sb->nverts; i++) {
        c = mn_vec3_add(
            c, mn_vec3_scale(mn_v3(sb->x[3 * i], sb->x[3 * i + 1], sb->x[3 * i + 2]), sb->mass[i]));
        M += sb->mass[i];
    }
    return mn_vec3_scale(c, 1 / M);
}

/* Tetrahedra keep their volume on the ground; masses come from the density; triangles in
 * the plane keep their area and the plane. */
static void test_elements(void) {
    double lo[3] = {-0.5, 0.2, -0.5}, hi[3] = {0.5, 1.2, 0.5}, pos[24];
    int tris[36];
    box_surface(lo, hi, pos, tris);
    mn_lattice* L = mn_lattice_create(8, pos, 12, tris, 4, NULL);
    CHECK(L && L->ntets == 6 * 64 && L->nnodes == 125);
    CHECK_NEAR(tets_volume(L->nodes, L->ntets, L->tets), 1.0, 1e-12);
    double mass[125];
    CHECK(mn_softbody_element_masses(125, L->nodes, 4, L->ntets, L->tets, 1000, mass, NULL) ==
          MN_OK);
    double M = 0;
    for (int i = 0; i < 125; i++)
        M += mass[i];
    CHECK_NEAR(M, 1000, 1e-9);
    mn_softbody_options o = mn_softbody_default();
    o.ground = 0;
    o.edge_compliance = 1e-4;
    mn_softbody* sb = mn_softbody_create(125, L->nodes, 0, NULL, mass, &o, NULL);
    CHECK(mn_softbody_add_elements(sb, 4, L->ntets, L->tets, NULL) == MN_OK);
    CHECK(sb->nedges == 3 * 4 * 5 * 5 + 3 * 4 * 4 * 5 /* face diagonals */ + 64 /* inner */);
    long a0 = mn_alloc_count();
    for (int s = 0; s < 120; s++)
        CHECK(mn_softbody_step(sb, 1.0 / 60, NULL) == MN_OK);
    CHECK(mn_alloc_count() == a0);
    CHECK(centroid(sb).y < 0.55); /* fell 0.2 m and rests on the ground */
    CHECK(fabs(tets_volume(sb->x, L->ntets, L->tets) - 1.0) < 0.02);
    mn_softbody_destroy(sb);

    /* a square of two triangles in the plane */
    double sq[12] = {0, 1, 0, 1, 1, 0, 1, 2, 0, 0, 2, 0};
    int tr[6] = {0, 1, 2, 0, 2, 3};
    o = mn_softbody_default();
    o.ground = 0;
    o.edge_compliance = 1e-3;
    sb = mn_softbody_create(4, sq, 0, NULL, NULL, &o, NULL);
    CHECK(mn_softbody_add_elements(sb, 3, 2, tr, NULL) == MN_OK);
    CHECK(sb->nedges == 5);
    for (int s = 0; s < 90; s++)
        CHECK(mn_softbody_step(sb, 1.0 / 60, NULL) == MN_OK);
    for (int i = 0; i < 4; i++)
        CHECK(sb->x[3 * i + 2] == 0);
    double area = 0.5 * ((sb->x[3] - sb->x[0]) * (sb->x[7] - sb->x[1]) -
                         (sb->x[4] - sb->x[1]) * (sb->x[6] - sb->x[0])) +
                  0.5 * ((sb->x[6] - sb->x[0]) * (sb->x[10] - sb->x[1]) -
                         (sb->x[7] - sb->x[1]) * (sb->x[9] - sb->x[0]));
    CHECK(fabs(area - 1) < 0.02);
    CHECK(sb->x[1] < 0.01); /* on the ground */

    /* bad elements: degenerate, out of range, mixed kinds */
    mn_error err;
    int flat[3] = {0, 1, 1};
    CHECK(mn_softbody_add_elements(sb, 3, 1, flat, &err) == MN_ERR_ARG &&
          strstr(err.message, "degenerate"));
    int far[3] = {0, 1, 9};
    CHECK(mn_softbody_add_elements(sb, 3, 1, far, &err) == MN_ERR_ARG &&
          strstr(err.message, "out of range"));
    int tet[4] = {0, 1, 2, 3};
    CHECK(mn_softbody_add_elements(sb, 5, 1, tet, &err) == MN_ERR_ARG);
    CHECK(sb->nelem == 2);
    CHECK(mn_softbody_element_masses(4, sq, 3, 2, tr, 0, mass, &err) == MN_ERR_ARG);
    mn_softbody_destroy(sb);
    mn_lattice_destroy(L);
}

/* A grab holds its vertex at the target through the constraint (compliance 0); released,
 * the body falls; too many grabs and bad targets are refused. */
static void test_grab(void) {
    mn_softbody_options o = mn_softbody_default();
    bar b = make_bar(2.0, 20, 2, &o);
    mn_softbody* sb = b.sb;
    CHECK(sb->nverts > MN_SOFTBODY_MAX_GRABS);
    int v = 0;
    mn_vec3 target = mn_v3(sb->x[0], sb->x[1] + 0.3, sb->x[2]);
    CHECK(mn_softbody_grab(sb, v, target, 0) == MN_OK);
    CHECK(mn_softbody_grab(sb, v, target, 0) == MN_OK && sb->ngrab == 1);
    for (int s = 0; s < 30; s++)
        CHECK(mn_softbody_step(sb, 1.0 / 60, NULL) == MN_OK);
    CHECK_NEAR(sb->x[1], target.y, 1e-12);
    CHECK(sb->inv_mass[0] > 0);              /* held by the constraint, not pinned */
    CHECK(centroid(sb).y < target.y - 0.05); /* the rest hangs below */
    CHECK(mn_softbody_grab(sb, -1, target, 0) == MN_ERR_ARG);
    CHECK(mn_softbody_grab(sb, 1, mn_v3(NAN, 0, 0), 0) == MN_ERR_ARG);
    CHECK(mn_softbody_grab(sb, 1, target, -1) == MN_ERR_ARG);
    for (int i = 1; i < MN_SOFTBODY_MAX_GRABS; i++)
        CHECK(mn_softbody_grab(sb, i, target, 1) == MN_OK);
    CHECK(mn_softbody_grab(sb, MN_SOFTBODY_MAX_GRABS, target, 1) == MN_ERR_NOMEM);
    mn_softbody_release(sb, -1);
    CHECK(sb->ngrab == 0);
    double y0 = centroid(sb).y;
    for (int s = 0; s < 10; s++)
        CHECK(mn_softbody_step(sb, 1.0 / 60, NULL) == MN_OK);
    CHECK(centroid(sb).y < y0 - 0.05);
    free_bar(&b);
}

/* With the coupling off, mn_coupled_step is the one-way simulation that marionette sim
 * ran before (the driven bone's own vertices pinned to it, a step, one fit), bit for bit. */
static void test_one_way_bit_for_bit(void) {
    mn_softbody_options o = mn_softbody_default();
    o.edge_compliance = 1e-6;
    bar a = make_bar(2.0, 10, 4, &o), b = make_bar(2.0, 10, 4, &o);
    int n = a.sb->nverts, m = a.rig->nctrl;
    uint8_t fixed[4] = {1, 0, 0, 0};
    /* by hand, as before */
    mn_fitter* f = mn_fitter_create(a.rig, fixed, NULL);
    for (int i = 0; i < n; i++)
        for (int s = 0; s < a.rig->k; s++)
            if (a.rig->w_idx[i * a.rig->k + s] == 0 && a.rig->w_val[i * a.rig->k + s] > 0.999)
                mn_softbody_pin(a.sb, i, 1);
    mn_xform pose[4];
    mn_rig_rest_pose(a.rig, pose);
    /* through the coupling, switched off */
    mn_coupling_options co = mn_coupling_default();
    co.enabled = 0;
    co.fit = mn_fit_default();
    mn_coupled* c = mn_coupled_create(b.sb, b.rig, fixed, &co, NULL);
    CHECK(c != NULL);
    int npinned = 0;
    for (int t = 1; t <= 60; t++) {
        mn_xform X;
        X.R = mn_mat3_axis_angle(mn_v3(0, 0, 1), 0.3 * sin(0.2 * t));
        X.p = mn_v3(0.1 * sin(0.1 * t), 0, 0);
        pose[0] = X;
        for (int i = 0; i < n; i++) {
            if (a.sb->inv_mass[i] != 0) continue;
            mn_vec3 xb = mn_v3(a.L->nodes[3 * i], a.L->nodes[3 * i + 1], a.L->nodes[3 * i + 2]);
            mn_vec3 y = mn_vec3_add(mn_mat3_mulv(&X.R, mn_vec3_sub(xb, a.rig->ctrl_pivot[0])), X.p);
            a.sb->pin_target[3 * i] = y.x;
            a.sb->pin_target[3 * i + 1] = y.y;
            a.sb->pin_target[3 * i + 2] = y.z;
        }
        CHECK(mn_softbody_step(a.sb, 1.0 / 60, NULL) == MN_OK);
        mn_fit(f, pose, a.sb->x, NULL, NULL);
        mn_coupled_drive(c, 0, &X);
        CHECK(mn_coupled_step(c, 1.0 / 60, NULL) == MN_OK);
    }
    for (int i = 0; i < n; i++)
        npinned += a.sb->inv_mass[i] == 0;
    CHECK(npinned > 0);
    CHECK(memcmp(a.sb->x, b.sb->x, (size_t)n * 3 * sizeof(double)) == 0);
    CHECK(memcmp(pose, mn_coupled_pose(c), (size_t)m * sizeof(mn_xform)) == 0);
    CHECK(a.sb->x[3 * (n - 1) + 1] < -0.05); /* it really moved */
    mn_coupled_destroy(c);
    mn_fitter_destroy(f);
    free_bar(&a);
    free_bar(&b);
}

/* The complementary constraint holds after every step (exactly, to rounding), no step
 * allocates, and the free bones hang where the body hangs. */
static void test_residual_and_follow(void) {
    mn_softbody_options o = mn_softbody_default();
    o.edge_compliance = 1e-5;
    o.substeps = 5;
    o.damping = 5; /* settles within the second after the swing */
    bar b = make_bar(2.0, 10, 4, &o);
    uint8_t driven[4] = {1, 0, 0, 0};
    mn_coupled* c = mn_coupled_create(b.sb, b.rig, driven, NULL, NULL);
    CHECK(c != NULL);
    double worst = 0;
    long allocs = 0;
    mn_coupled_result r;
    for (int t = 1; t <= 120; t++) { /* a swing of the root, then held still */
        mn_xform X = mn_coupled_pose(c)[0];
        X.R = mn_mat3_axis_angle(mn_v3(0, 0, 1), t <= 60 ? 0.4 * sin(2 * MN_PI * t / 60) : 0);
        mn_coupled_drive(c, 0, &X);
        long a0 = mn_alloc_count();
        CHECK(mn_coupled_step(c, 1.0 / 60, &r) == MN_OK);
        allocs += mn_alloc_count() - a0;
        worst = fmax(worst, r.residual);
        CHECK(r.iterations == 5 && r.fit_iterations >= 5);
    }
    if (getenv("MN_VERBOSE"))
        fprintf(stderr, "  worst residual %g, last speed %g\n", worst, r.max_speed);
    CHECK(allocs == 0);
    CHECK(worst < 1e-12);
    CHECK(all_finite(b.sb->x, 3 * b.sb->nverts));
    /* the last bone's tail is near the bar's far end (the body and the rig agree) */
    const mn_xform* P = mn_coupled_pose(c);
    mn_vec3 tail = mn_vec3_add(P[3].p, mn_mat3_mulv(&P[3].R, mn_v3(0.5, 0, 0)));
    mn_vec3 end = mn_v3(0, 0, 0);
    int ne = 0;
    for (int i = 0; i < b.sb->nverts; i++)
        if (b.L->nodes[3 * i] > 1.99) {
            end = mn_vec3_add(end, mn_v3(b.sb->x[3 * i], b.sb->x[3 * i + 1], b.sb->x[3 * i + 2]));
            ne++;
        }
    end = mn_vec3_scale(end, 1.0 / ne);
    if (getenv("MN_VERBOSE"))
        fprintf(stderr, "  end (%g %g %g) tail (%g %g %g)\n", end.x, end.y, end.z, tail.x, tail.y,
                tail.z);
    CHECK(end.y < -0.05);      /* it sags */
    CHECK(fabs(end.z) < 0.05); /* in the plane it was swung in */
    CHECK(r.max_speed < 0.5);  /* and has nearly settled */
    CHECK(mn_vec3_dist(tail, end) < 0.1);
    /* the one-way constraint is not kept by a plain simulation: its residual is not 0 */
    mn_softbody_step(b.sb, 1.0 / 60, NULL);
    CHECK(mn_coupled_residual(c) > 1e-6);
    mn_coupled_destroy(c);
    free_bar(&b);
}

/* Both ways: a driven controller moves the body (no gravity, nothing else pulls it), and
 * a body that falls takes its free controllers with it. */
static void test_two_way(void) {
    mn_softbody_options o = mn_softbody_default();
    o.gravity = mn_v3(0, 0, 0);
    o.substeps = 5;
    o.damping = 2;
    bar b = make_bar(1.0, 5, 2, &o);
    uint8_t driven[2] = {1, 0};
    mn_coupled* c = mn_coupled_create(b.sb, b.rig, driven, NULL, NULL);
    mn_vec3 c0 = centroid(b.sb);
    for (int t = 1; t <= 120; t++) {
        mn_xform X = mn_coupled_pose(c)[0];
        X.p = mn_v3(0, 0.5 * fmin(1.0, t / 30.0), 0);
        mn_coupled_drive(c, 0, &X);
        CHECK(mn_coupled_step(c, 1.0 / 60, NULL) == MN_OK);
    }
    mn_vec3 c1 = centroid(b.sb);
    if (getenv("MN_VERBOSE")) fprintf(stderr, "  body moved %g\n", c1.y - c0.y);
    CHECK(fabs(c1.y - c0.y - 0.5) < 0.01);
    CHECK(fabs(mn_coupled_pose(c)[1].p.y - 0.5) < 0.01); /* the free bone came along */
    /* the second bone driven too, and turned down by a quarter turn: the body's tip follows */
    uint8_t both[2] = {1, 1};
    CHECK(mn_coupled_set_driven(c, both, NULL) == MN_OK);
    mn_xform X1 = mn_coupled_pose(c)[1];
    X1.R = mn_mat3_axis_angle(mn_v3(0, 0, 1), -MN_PI / 2);
    for (int t = 1; t <= 120; t++) {
        mn_coupled_drive(c, 1, &X1);
        CHECK(mn_coupled_step(c, 1.0 / 60, NULL) == MN_OK);
    }
    double tip_y = 0;
    int ntip = 0;
    for (int i = 0; i < b.sb->nverts; i++)
        if (b.L->nodes[3 * i] > 0.99) tip_y += b.sb->x[3 * i + 1], ntip++;
    tip_y /= ntip;
    if (getenv("MN_VERBOSE")) fprintf(stderr, "  tip at y %g after the turn\n", tip_y);
    CHECK(tip_y < 0.5 - 0.3); /* the far half hangs down from the second bone's pivot */
    mn_coupled_destroy(c);
    free_bar(&b);

    /* every controller free: the body falls and the rig follows it */
    o = mn_softbody_default();
    o.substeps = 5;
    b = make_bar(1.0, 5, 2, &o);
    c = mn_coupled_create(b.sb, b.rig, NULL, NULL, NULL);
    for (int t = 1; t <= 30; t++)
        CHECK(mn_coupled_step(c, 1.0 / 60, NULL) == MN_OK);
    double fall = 0.5 * 9.81 * 0.25;
    CHECK(centroid(b.sb).y < -0.9 * fall);
    CHECK(fabs(mn_coupled_pose(c)[0].p.y - centroid(b.sb).y) < 0.02);
    mn_coupled_destroy(c);
    free_bar(&b);
}

/* A controller thrown 1 m back and forth every frame, 100 times: never a non-finite
 * position, and a failed step restores the body and the poses. */
static void test_violent_drag(void) {
    mn_softbody_options o = mn_softbody_default();
    o.substeps = 5;
    bar b = make_bar(2.0, 10, 4, &o);
    uint8_t driven[4] = {0, 1, 0, 0};
    mn_coupled* c = mn_coupled_create(b.sb, b.rig, driven, NULL, NULL);
    int n3 = 3 * b.sb->nverts, failed = 0;
    for (int t = 1; t <= 100; t++) {
        mn_xform X = mn_coupled_pose(c)[1];
        X.p = mn_vec3_add(X.p, mn_v3(t % 2 ? 1.0 : -1.0, t % 3 ? 1.0 : -1.0, 0));
        X.R = mn_mat3_axis_angle(mn_v3(0, 1, 0), t % 2 ? 1.5 : -1.5);
        mn_coupled_drive(c, 1, &X);
        mn_coupled_result r;
        mn_status st = mn_coupled_step(c, 1.0 / 60, &r);
        CHECK(st == MN_OK || (st == MN_ERR_NOCONVERGE && r.message[0]));
        failed += st != MN_OK;
        CHECK(all_finite(b.sb->x, n3) && all_finite(b.sb->v, n3));
        for (int j = 0; j < 4; j++)
            CHECK(mn_vec3_isfinite(mn_coupled_pose(c)[j].p));
    }
    if (getenv("MN_VERBOSE")) fprintf(stderr, "  failed steps %d\n", failed);
    mn_xform bad = mn_coupled_pose(c)[1];
    bad.p.x = NAN;
    mn_coupled_drive(c, 1, &bad);
    mn_coupled_result r;
    CHECK(mn_coupled_step(c, 1.0 / 60, &r) == MN_ERR_ARG && strstr(r.message, "target"));
    CHECK(mn_coupled_step(c, -1, &r) == MN_ERR_ARG);
    mn_coupled_destroy(c);
    free_bar(&b);
}

/* In the plane: a strip of triangles under a 2D rig of two points; the driven one turns
 * and the body and the free one follow, with every position and rotation in the plane. */
static void test_plane(void) {
    enum { NX = 11, NY = 3 };
    double pos[NX * NY * 3];
    int tris[(NX - 1) * (NY - 1) * 6], nt = 0;
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) {
            double* p = pos + 3 * (y * NX + x);
            p[0] = 0.2 * x, p[1] = 0.1 * y - 0.1, p[2] = 0;
        }
    for (int y = 0; y + 1 < NY; y++)
        for (int x = 0; x + 1 < NX; x++) {
            int a = y * NX + x, b = a + 1, c = a + NX, d = c + 1;
            int* T = tris + 3 * nt;
            T[0] = a, T[1] = b, T[2] = d, T[3] = a, T[4] = d, T[5] = c;
            nt += 2;
        }
    mn_softbody_options o = mn_softbody_default();
    o.substeps = 5;
    o.edge_compliance = 1e-5;
    mn_softbody* sb = mn_softbody_create(NX * NY, pos, 0, NULL, NULL, &o, NULL);
    CHECK(mn_softbody_add_elements(sb, 3, nt, tris, NULL) == MN_OK);
    double pos2[NX * NY * 2];
    for (int i = 0; i < NX * NY; i++)
        pos2[2 * i] = pos[3 * i], pos2[2 * i + 1] = pos[3 * i + 1];
    mn_rig* rig = mn_rig_create(2, NX * NY, pos2, sb->mass, NULL);
    mn_ctrl_def d = mn_ctrl_default();
    d.name = "left";
    d.pivot = mn_v3(0.3, 0, 0);
    mn_rig_add_ctrl(rig, &d, NULL);
    d.name = "right";
    d.pivot = mn_v3(1.7, 0, 0);
    mn_rig_add_ctrl(rig, &d, NULL);
    int idx[NX * NY * 2];
    double w[NX * NY * 2];
    for (int i = 0; i < NX * NY; i++) {
        double s = fmin(1, fmax(0, (pos[3 * i] - 0.4) / 1.2));
        idx[2 * i] = 0, idx[2 * i + 1] = 1, w[2 * i] = 1 - s, w[2 * i + 1] = s;
    }
    CHECK(mn_rig_set_weights(rig, 2, idx, w, NULL, NULL) == MN_OK);
    uint8_t driven[2] = {1, 0};
    mn_coupled* c = mn_coupled_create(sb, rig, driven, NULL, NULL);
    CHECK(c != NULL);
    mn_coupled_result r;
    double worst = 0;
    for (int t = 1; t <= 60; t++) {
        mn_xform X = mn_coupled_pose(c)[0];
        X.R = mn_mat3_axis_angle(mn_v3(0, 0, 1), 0.5 * fmin(1.0, t / 30.0));
        mn_coupled_drive(c, 0, &X);
        CHECK(mn_coupled_step(c, 1.0 / 60, &r) == MN_OK);
        worst = fmax(worst, r.residual);
    }
    CHECK(worst < 1e-12);
    for (int i = 0; i < NX * NY; i++)
        CHECK(sb->x[3 * i + 2] == 0);
    const mn_mat3* R = &mn_coupled_pose(c)[1].R;
    CHECK(R->m[2] == 0 && R->m[5] == 0 && R->m[6] == 0 && R->m[7] == 0 && R->m[8] == 1);
    /* the right end rose with the turn of the left point (0.5 rad about its pivot) */
    CHECK(mn_coupled_pose(c)[1].p.y > 0.2);
    mn_coupled_destroy(c);
    mn_rig_destroy(rig);
    mn_softbody_destroy(sb);
}

/* The lattice of a sphere: every surface vertex is carried exactly by its tetrahedron,
 * the volume is the sphere's within a cube's layer, a hole in the surface changes
 * nothing, and the node rig takes the surface's weights. */
static void test_lattice(void) {
    enum { NU = 24, NV = 12 };
    int n = NU * (NV - 1) + 2;
    double* pos = malloc((size_t)n * 3 * sizeof(double));
    int* tris = malloc((size_t)NU * NV * 2 * 3 * sizeof(int));
    int nt = 0;
    for (int v = 1; v < NV; v++)
        for (int u = 0; u < NU; u++) {
            double th = MN_PI * v / NV, ph = 2 * MN_PI * u / NU;
            double* p = pos + 3 * ((v - 1) * NU + u);
            p[0] = sin(th) * cos(ph), p[1] = cos(th), p[2] = sin(th) * sin(ph);
        }
    int top = n - 2, bot = n - 1;
    pos[3 * top] = 0, pos[3 * top + 1] = 1, pos[3 * top + 2] = 0;
    pos[3 * bot] = 0, pos[3 * bot + 1] = -1, pos[3 * bot + 2] = 0;
    for (int u = 0; u < NU; u++) {
        int u1 = (u + 1) % NU;
        int* T = tris + 3 * nt++;
        T[0] = top, T[1] = u1, T[2] = u;
        for (int v = 1; v + 1 < NV; v++) {
            int a = (v - 1) * NU + u, b = (v - 1) * NU + u1, c = v * NU + u, d = v * NU + u1;
            T = tris + 3 * nt++;
            T[0] = a, T[1] = b, T[2] = d;
            T = tris + 3 * nt++;
            T[0] = a, T[1] = d, T[2] = c;
        }
        T = tris + 3 * nt++;
        T[0] = bot, T[1] = (NV - 2) * NU + u, T[2] = (NV - 2) * NU + u1;
    }
    mn_lattice* L = mn_lattice_create(n, pos, nt, tris, 10, NULL);
    CHECK(L != NULL);
    double* back = malloc((size_t)n * 3 * sizeof(double));
    mn_lattice_surface(L, L->nodes, back);
    double err = 0;
    for (int i = 0; i < 3 * n; i++)
        err = fmax(err, fabs(back[i] - pos[i]));
    CHECK(err < 1e-12);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int q = 0; q < 4; q++) {
            CHECK(L->surf_bary[4 * i + q] >= 0 && L->surf_bary[4 * i + q] <= 1);
            s += L->surf_bary[4 * i + q];
        }
        CHECK_NEAR(s, 1, 1e-12);
    }
    double V = tets_volume(L->nodes, L->ntets, L->tets), ball = 4.0 / 3 * MN_PI;
    if (getenv("MN_VERBOSE"))
        fprintf(stderr, "  lattice: %d nodes %d tets volume %g (ball %g)\n", L->nnodes, L->ntets, V,
                ball);
    CHECK(V > ball && V < 1.5 * ball);
    for (int t = 0; t < L->ntets; t++)
        CHECK(tets_volume(L->nodes, 1, L->tets + 4 * t) > 0);
    /* a hole: ten triangles fewer, the same cubes */
    mn_lattice* H = mn_lattice_create(n, pos, nt - 10, tris + 30, 10, NULL);
    CHECK(H && H->ntets == L->ntets);
    mn_lattice_destroy(H);

    /* weights: the left half to controller 0, the right half to 1 */
    mn_rig* srig = mn_rig_create(3, n, pos, NULL, NULL);
    mn_ctrl_def d = mn_ctrl_default();
    d.name = "left";
    d.pivot = mn_v3(-0.5, 0, 0);
    mn_rig_add_ctrl(srig, &d, NULL);
    d.name = "right";
    d.pivot = mn_v3(0.5, 0, 0);
    mn_rig_add_ctrl(srig, &d, NULL);
    int* idx = malloc((size_t)n * sizeof(int));
    double* w = malloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        idx[i] = pos[3 * i] < 0 ? 0 : 1, w[i] = 1;
    CHECK(mn_rig_set_weights(srig, 1, idx, w, NULL, NULL) == MN_OK);
    mn_rig* nrig = mn_lattice_rig(L, srig, NULL, NULL);
    CHECK(nrig && nrig->nverts == L->nnodes && nrig->nctrl == 2);
    int left_ok = 1, right_ok = 1;
    for (int v = 0; v < L->nnodes; v++) {
        double w0 = 0;
        for (int s = 0; s < nrig->k; s++)
            if (nrig->w_idx[v * nrig->k + s] == 0) w0 += nrig->w_val[v * nrig->k + s];
        if (L->nodes[3 * v] < -0.3 && w0 < 0.99) left_ok = 0;
        if (L->nodes[3 * v] > 0.3 && w0 > 0.01) right_ok = 0;
    }
    CHECK(left_ok && right_ok);
    mn_rig_destroy(nrig);
    mn_rig_destroy(srig);

    /* bad input */
    mn_error e;
    CHECK(mn_lattice_create(n, pos, nt, tris, 0, &e) == NULL && strstr(e.message, "resolution"));
    CHECK(mn_lattice_create(n, pos, nt, tris, 257, &e) == NULL);
    tris[4] = n;
    CHECK(mn_lattice_create(n, pos, nt, tris, 10, &e) == NULL && strstr(e.message, "range"));
    free(idx);
    free(w);
    free(back);
    free(pos);
    free(tris);
    mn_lattice_destroy(L);
}

static void test_bad_coupling(void) {
    mn_softbody_options o = mn_softbody_default();
    bar b = make_bar(1.0, 5, 2, &o);
    double pos[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    mn_rig* small = mn_rig_create(3, 4, pos, NULL, NULL);
    mn_error err;
    CHECK(mn_coupled_create(b.sb, small, NULL, NULL, &err) == NULL && strstr(err.message, "4"));
    CHECK(mn_coupled_create(NULL, b.rig, NULL, NULL, &err) == NULL);
    mn_coupling_options co = mn_coupling_default();
    co.compliance_driven = -1;
    CHECK(mn_coupled_create(b.sb, b.rig, NULL, &co, &err) == NULL && err.status == MN_ERR_ARG);
    mn_rig_destroy(small);
    free_bar(&b);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_elements);
    RUN(test_grab);
    RUN(test_one_way_bit_for_bit);
    RUN(test_residual_and_follow);
    RUN(test_two_way);
    RUN(test_violent_drag);
    RUN(test_plane);
    RUN(test_lattice);
    RUN(test_bad_coupling);
    return mn_test_report();
}
