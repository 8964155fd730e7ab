/* In-betweens that keep their constraints (Welman 6.3, Fig. 6.5), animated constraints and
 * balance over a sequence (Welman 7.2.1), on the built-in stick figure: feet locked across two
 * keys whose pelvis heights differ, a hand following a keyed path while the feet stay
 * pinned, the centre of mass kept over the feet while the figure bends forwards; no pops
 * between frames, and no heap allocation per frame. */
#include <marionette/anim.h>
#include <marionette/io.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

static mn_model* M;

static int J(const char* name) {
    int j = mn_model_find_joint(M, name);
    CHECK(j >= 0);
    return j;
}

/* A crouch of the stick figure: from the rest pose, the pelvis dragged down by `drop` (and
 * forwards by `fwd`) with both feet pinned in position and orientation. */
static void crouch(double drop, double fwd, double* q) {
    mn_data* d = mn_data_create(M, 0);
    mn_figure fig = {M, d};
    mn_csys* cs = mn_csys_create(&fig, 1, NULL, NULL);
    const char* feet[2] = {"left foot", "right foot"};
    for (int i = 0; i < 2; i++) {
        mn_handle_def h = mn_handle_default();
        h.joint = J(feet[i]);
        int hp = mn_csys_add_handle(cs, &h, NULL);
        h.type = MN_HANDLE_ORIENT;
        int ho = mn_csys_add_handle(cs, &h, NULL);
        mn_constraint_def c = mn_constraint_default();
        c.handle = hp;
        c.target = d->xf[h.joint].p;
        mn_csys_add_constraint(cs, &c, NULL);
        c.type = MN_CON_ORIENT;
        c.handle = ho;
        c.target_rot = mn_quat_from_mat3(&d->xf[h.joint].R);
        mn_csys_add_constraint(cs, &c, NULL);
    }
    mn_handle_def hp = mn_handle_default();
    hp.joint = J("pelvis");
    int pel = mn_csys_add_handle(cs, &hp, NULL);
    mn_vec3 goal = mn_vec3_add(d->xf[hp.joint].p, mn_v3(0, -drop, fwd));
    mn_csys_drag(cs, pel, goal, 1, 1);
    mn_csolve_options o = mn_csolve_default();
    o.max_iters = 200;
    o.tol = 1e-9;
    o.drag_tol = 1e-6;
    mn_csolve_result r;
    for (int i = 0; i < 20 && mn_csys_drag_error(cs, pel) > 1e-5; i++)
        mn_csys_solve(cs, &o, &r);
    CHECK(d->xf[hp.joint].p.y < goal.y + 0.2 * drop); /* most of the way down */
    CHECK(r.max_violation < 1e-8);
    memcpy(q, d->q, sizeof(double) * (size_t)M->nq);
    mn_csys_destroy(cs);
    mn_data_destroy(d);
}

/* The sequence of Fig. 6.5: standing at frame 0, crouched at frame 30, both feet locked
 * (position and orientation) over the whole range. */
static mn_seq* fig65(double drop, int* hfeet) {
    mn_seq* s = mn_seq_create(M, NULL, NULL);
    double* q = malloc(sizeof(double) * (size_t)M->nq);
    mn_seq_set_key(s, 0, M->q0, NULL);
    crouch(drop, 0.05, q);
    mn_seq_set_key(s, 30, q, NULL);
    free(q);
    const char* feet[2] = {"left foot", "right foot"};
    for (int i = 0; i < 2; i++) {
        mn_handle_def h = mn_handle_default();
        h.joint = J(feet[i]);
        h.name = feet[i];
        hfeet[i] = mn_seq_add_handle(s, &h, NULL);
        CHECK(hfeet[i] >= 0);
        h.type = MN_HANDLE_ORIENT;
        h.name = NULL;
        int ho = mn_seq_add_handle(s, &h, NULL);
        mn_seq_constraint_def c = mn_seq_constraint_default();
        c.con.handle = hfeet[i];
        c.start = 0;
        c.end = 30;
        c.lock = 1;
        CHECK(mn_seq_add_constraint(s, &c, NULL) >= 0);
        c.con.type = MN_CON_ORIENT;
        c.con.handle = ho;
        CHECK(mn_seq_add_constraint(s, &c, NULL) >= 0);
    }
    return s;
}

static void test_fig65_feet_stay(void) {
    int hf[2];
    mn_seq* s = fig65(0.25, hf);
    mn_data* d = mn_data_create(M, 0);
    mn_seq_solver* v = mn_seq_solver_create(s, d, NULL);
    CHECK(v != NULL);
    /* where the feet are locked: where they stand at frame 0 */
    mn_seq_sample_data(s, d, 0);
    mn_vec3 lock[2];
    for (int i = 0; i < 2; i++)
        lock[i] = mn_point_world(d, mn_seq_handle(s, hf[i])->joint, mn_v3(0, 0, 0));
    /* without the option: the plain in-betweens */
    double plain = 0;
    for (double f = 0; f <= 30; f += 0.25) {
        mn_seq_sample_data(s, d, f);
        for (int i = 0; i < 2; i++)
            plain =
                fmax(plain,
                     mn_vec3_dist(mn_point_world(d, mn_seq_handle(s, hf[i])->joint, mn_v3(0, 0, 0)),
                                  lock[i]));
    }
    printf("  fig 6.5: pelvis 0.25 m lower at the second key; plain in-betweens move the feet by "
           "up to %.4f m\n",
           plain);
    CHECK(plain > 1e-3); /* the thesis's problem is there to solve */
    /* with the option: every in-between keeps the feet within 1e-4 m, and nothing pops */
    mn_seq_solve_options o = mn_seq_solve_options_default();
    o.solve.tol = 1e-6;
    double worst = 0, maxstep = 0, maxstep_plain = 0;
    int iters = 0, frames = 0;
    double* prev = malloc(sizeof(double) * (size_t)M->nq);
    double* pplain = malloc(sizeof(double) * (size_t)M->nq);
    double* qplain = malloc(sizeof(double) * (size_t)M->nq);
    for (double f = 0; f <= 30; f += 0.25, frames++) {
        mn_csolve_result r;
        CHECK(mn_seq_solve_frame(v, f, &o, &r) == MN_OK);
        iters += r.iterations;
        for (int i = 0; i < 2; i++)
            worst =
                fmax(worst,
                     mn_vec3_dist(mn_point_world(d, mn_seq_handle(s, hf[i])->joint, mn_v3(0, 0, 0)),
                                  lock[i]));
        CHECK(mn_q_within_limits(M, d->q, 1e-9));
        mn_seq_sample(s, f, qplain);
        if (f > 0) {
            double dv = 0, dp = 0;
            for (int i = 0; i < M->nq; i++)
                dv = fmax(dv, fabs(d->q[i] - prev[i])), dp = fmax(dp, fabs(qplain[i] - pplain[i]));
            maxstep = fmax(maxstep, dv);
            maxstep_plain = fmax(maxstep_plain, dp);
        }
        memcpy(prev, d->q, sizeof(double) * (size_t)M->nq);
        memcpy(pplain, qplain, sizeof(double) * (size_t)M->nq);
    }
    printf("  with constraints: feet within %.2e m at %d in-betweens, %.2f iterations per frame; "
           "largest change of\n"
           "  a joint variable between quarter frames %.4f (plain in-betweens: %.4f)\n",
           worst, frames, (double)iters / frames, maxstep, maxstep_plain);
    CHECK(worst <= 1e-4);
    CHECK(maxstep < 3 * maxstep_plain);
    /* the keys are reached: at frame 30 the solved pose is the key's (its feet were pinned) */
    mn_seq_sample(s, 30, qplain);
    double dk = 0;
    for (int i = 0; i < M->nq; i++)
        dk = fmax(dk, fabs(d->q[i] - qplain[i]));
    printf("  largest difference from the second key at its frame: %.2e (corrections relax back)\n",
           dk);
    CHECK(dk < 1e-3);
    /* started cold, the key (which meets its constraints) is reached exactly */
    o.warm_start = 0;
    CHECK(mn_seq_solve_frame(v, 30, &o, NULL) == MN_OK);
    CHECK(memcmp(d->q, qplain, sizeof(double) * (size_t)M->nq) == 0);
    free(prev), free(pplain), free(qplain);
    mn_seq_solver_destroy(v);
    mn_data_destroy(d);
    mn_seq_destroy(s);
}

/* A hand on a Catmull-Rom path of target keys (Welman 7.2.1) while the feet stay locked. */
static void test_animated_target(void) {
    int hf[2];
    mn_seq* s = fig65(0.12, hf);
    mn_data* d = mn_data_create(M, 0);
    mn_seq_sample_data(s, d, 0);
    mn_handle_def h = mn_handle_default();
    h.joint = J("right hand");
    h.point = mn_v3(0, -0.08, 0);
    h.name = "right palm";
    int hh = mn_seq_add_handle(s, &h, NULL);
    mn_seq_constraint_def c = mn_seq_constraint_default();
    c.con.handle = hh;
    c.con.name = "reach";
    c.start = 0;
    c.end = 30;
    c.target_interp = MN_INTERP_CATMULL_ROM;
    int ci = mn_seq_add_constraint(s, &c, NULL);
    CHECK(ci >= 0);
    mn_vec3 p0 = mn_point_world(d, h.joint, h.point);
    mn_vec3 path[4] = {p0, mn_vec3_add(p0, mn_v3(0.05, 0.15, 0.2)),
                       mn_vec3_add(p0, mn_v3(0.1, 0.35, 0.25)),
                       mn_vec3_add(p0, mn_v3(0.05, 0.45, 0.1))};
    for (int k = 0; k < 4; k++) {
        mn_target_key t = {10.0 * k, path[k], mn_v3(0, 0, 0), mn_quat_identity()};
        CHECK(mn_seq_set_target_key(s, ci, &t, NULL) == MN_OK);
    }
    CHECK(mn_seq_target_key_count(s, ci) == 4);
    /* the target between keys 1 and 2 is Catmull-Rom's (evenly spaced: the matrix form) */
    mn_target_key t;
    CHECK(mn_seq_target_at(s, ci, 14, &t) == MN_OK);
    double u = 0.4;
    mn_vec3 want;
    double* w = &want.x;
    for (int a = 0; a < 3; a++) {
        double p[4];
        for (int k = 0; k < 4; k++)
            p[k] = (&path[k].x)[a];
        w[a] =
            0.5 * (2 * p[1] + (-p[0] + p[2]) * u + (2 * p[0] - 5 * p[1] + 4 * p[2] - p[3]) * u * u +
                   (-p[0] + 3 * p[1] - 3 * p[2] + p[3]) * u * u * u);
    }
    CHECK(mn_vec3_dist(t.pos, want) < 1e-12);
    CHECK(mn_seq_target_at(s, ci, -5, &t) == MN_OK && mn_vec3_dist(t.pos, path[0]) == 0);
    CHECK(mn_seq_target_at(s, ci, 99, &t) == MN_OK && mn_vec3_dist(t.pos, path[3]) == 0);

    mn_seq_solver* v = mn_seq_solver_create(s, d, NULL);
    mn_seq_solve_options o = mn_seq_solve_options_default();
    o.solve.tol = 1e-6;
    mn_vec3 lock[2];
    mn_data* d0 = mn_data_create(M, 0);
    mn_seq_sample_data(s, d0, 0);
    for (int i = 0; i < 2; i++)
        lock[i] = mn_point_world(d0, mn_seq_handle(s, hf[i])->joint, mn_v3(0, 0, 0));
    double worst_hand = 0, worst_feet = 0, plain_hand = 0;
    for (double f = 0; f <= 30; f += 0.5) {
        mn_csolve_result r;
        CHECK(mn_seq_solve_frame(v, f, &o, &r) == MN_OK);
        mn_seq_target_at(s, ci, f, &t);
        worst_hand = fmax(worst_hand, mn_vec3_dist(mn_point_world(d, h.joint, h.point), t.pos));
        for (int i = 0; i < 2; i++)
            worst_feet =
                fmax(worst_feet,
                     mn_vec3_dist(mn_point_world(d, mn_seq_handle(s, hf[i])->joint, mn_v3(0, 0, 0)),
                                  lock[i]));
        mn_seq_sample_data(s, d0, f);
        plain_hand = fmax(plain_hand, mn_vec3_dist(mn_point_world(d0, h.joint, h.point), t.pos));
    }
    printf("  hand on its path within %.2e m (plain in-betweens: %.3f m), feet within %.2e m\n",
           worst_hand, plain_hand, worst_feet);
    CHECK(worst_hand <= 1e-4);
    CHECK(worst_feet <= 1e-4);
    CHECK(plain_hand > 0.1);
    /* outside the constraint's range it is off: frame 31 is the plain last key */
    mn_seq_solve_frame(v, 31, &o, NULL);
    CHECK(memcmp(d->q, mn_seq_key_q(s, 1), sizeof(double) * (size_t)M->nq) == 0);
    /* bad target keys */
    mn_error err;
    t.pos.x = NAN;
    CHECK(mn_seq_set_target_key(s, ci, &t, &err) == MN_ERR_ARG && !strcmp(err.field, "target"));
    CHECK(mn_seq_set_target_key(s, 99, &t, &err) == MN_ERR_ARG);
    mn_data_destroy(d0);
    mn_seq_solver_destroy(v);
    mn_data_destroy(d);
    mn_seq_destroy(s);
}

/* An animated plane: the left hand slides on a plane that rises over the sequence. */
static void test_animated_plane(void) {
    int hf[2];
    mn_seq* s = fig65(0.05, hf);
    mn_data* d = mn_data_create(M, 0);
    mn_seq_sample_data(s, d, 0);
    mn_handle_def h = mn_handle_default();
    h.joint = J("left hand");
    int hh = mn_seq_add_handle(s, &h, NULL);
    mn_seq_constraint_def c = mn_seq_constraint_default();
    c.con.type = MN_CON_PLANE;
    c.con.handle = hh;
    c.con.dir = mn_v3(0, 1, 0);
    int ci = mn_seq_add_constraint(s, &c, NULL);
    CHECK(ci >= 0);
    mn_vec3 p = mn_point_world(d, h.joint, h.point);
    mn_target_key a = {0, p, mn_v3(0, 1, 0), mn_quat_identity()},
                  b = {30, mn_vec3_add(p, mn_v3(0, 0.3, 0)), mn_v3(0, 1, 0.2), mn_quat_identity()};
    CHECK(mn_seq_set_target_key(s, ci, &a, NULL) == MN_OK);
    CHECK(mn_seq_set_target_key(s, ci, &b, NULL) == MN_OK);
    mn_target_key bad = b;
    bad.dir = mn_v3(0, 0, 0);
    mn_error err;
    CHECK(mn_seq_set_target_key(s, ci, &bad, &err) == MN_ERR_ARG && !strcmp(err.field, "normal"));
    mn_seq_solver* v = mn_seq_solver_create(s, d, NULL);
    mn_seq_solve_options o = mn_seq_solve_options_default();
    double worst = 0;
    for (double f = 0; f <= 30; f += 1) {
        CHECK(mn_seq_solve_frame(v, f, &o, NULL) == MN_OK);
        mn_target_key t;
        mn_seq_target_at(s, ci, f, &t);
        mn_vec3 n = mn_vec3_normalize(t.dir);
        worst = fmax(worst,
                     fabs(mn_vec3_dot(n, mn_vec3_sub(mn_point_world(d, h.joint, h.point), t.pos))));
    }
    CHECK(worst <= 1e-4);
    mn_seq_solver_destroy(v);
    mn_data_destroy(d);
    mn_seq_destroy(s);
}

/* Balance over a sequence (Welman 7.2.1): the figure bends far forwards with its arms out;
 * with the option the centre of mass stays over the support polygon at every frame. */
static void test_balance(void) {
    mn_seq* s = mn_seq_create(M, NULL, NULL);
    double* q = malloc(sizeof(double) * (size_t)M->nq);
    memcpy(q, M->q0, sizeof(double) * (size_t)M->nq);
    mn_seq_set_key(s, 0, q, NULL);
    q[M->jnt_qadr[J("torso.2")]] = 85 * MN_PI / 180;
    q[M->jnt_qadr[J("right arm.2")]] = -90 * MN_PI / 180;
    q[M->jnt_qadr[J("left arm.2")]] = -90 * MN_PI / 180;
    mn_seq_set_key(s, 20, q, NULL);
    free(q);
    int hf[2];
    const char* feet[2] = {"left foot", "right foot"};
    for (int i = 0; i < 2; i++) {
        mn_handle_def h = mn_handle_default();
        h.joint = J(feet[i]);
        hf[i] = mn_seq_add_handle(s, &h, NULL);
        mn_seq_constraint_def c = mn_seq_constraint_default();
        c.con.handle = hf[i];
        c.lock = 1;
        CHECK(mn_seq_add_constraint(s, &c, NULL) >= 0);
    }
    mn_vec3 poly[4] = {{-0.15, 0, -0.08}, {0.15, 0, -0.08}, {0.15, 0, 0.12}, {-0.15, 0, 0.12}};
    mn_error err;
    int cb = mn_seq_add_balance(s, poly, 4, mn_v3(0, 1, 0), 0.01, 0, 20, &err);
    CHECK(cb >= 0);
    /* a non-convex polygon is refused and adds nothing */
    int nh = mn_seq_handle_count(s), nc = mn_seq_constraint_count(s);
    mn_vec3 bow[4] = {{-0.1, 0, 0}, {0.1, 0, 0}, {0, 0, 0.02}, {0, 0, 0.2}};
    CHECK(mn_seq_add_balance(s, bow, 4, mn_v3(0, 1, 0), 0, 0, 20, &err) < 0);
    CHECK(mn_seq_handle_count(s) == nh && mn_seq_constraint_count(s) == nc);

    mn_data* d = mn_data_create(M, 0);
    mn_seq_solver* v = mn_seq_solver_create(s, d, NULL);
    mn_seq_solve_options o = mn_seq_solve_options_default();
    double zmax_off = -1, zmax_on = -1;
    for (int pass = 0; pass < 2; pass++) {
        o.balance = pass;
        mn_seq_solver_reset(v);
        for (double f = 0; f <= 20; f += 0.5) {
            mn_csolve_result r;
            CHECK(mn_seq_solve_frame(v, f, &o, &r) == MN_OK);
            mn_vec3 com = mn_com(M, d, -1, NULL);
            if (pass)
                zmax_on = fmax(zmax_on, com.z);
            else
                zmax_off = fmax(zmax_off, com.z);
        }
    }
    printf("  balance: centre of mass reaches z = %.3f m without the option, %.4f m with it (front "
           "edge 0.12, margin 0.01)\n",
           zmax_off, zmax_on);
    CHECK(zmax_off > 0.12);
    CHECK(zmax_on <= 0.11 + 1e-4);
    mn_seq_solver_destroy(v);
    mn_data_destroy(d);
    mn_seq_destroy(s);
}

static void test_no_allocation(void) {
    int hf[2];
    mn_seq* s = fig65(0.2, hf);
    mn_data* d = mn_data_create(M, 0);
    mn_seq_solver* v = mn_seq_solver_create(s, d, NULL);
    mn_seq_solve_options o = mn_seq_solve_options_default();
    long before = mn_alloc_count();
    for (double f = 0; f <= 32; f += 0.5)
        CHECK(mn_seq_solve_frame(v, f, &o, NULL) == MN_OK);
    o.warm_start = 0;
    for (double f = 32; f >= 0; f -= 3)
        CHECK(mn_seq_solve_frame(v, f, &o, NULL) == MN_OK);
    CHECK(mn_alloc_count() == before);
    mn_seq_solver_destroy(v);
    mn_data_destroy(d);
    mn_seq_destroy(s);
}

static void test_bad_constraints(void) {
    mn_seq* s = mn_seq_create(M, NULL, NULL);
    mn_error err;
    mn_handle_def h = mn_handle_default();
    h.joint = 999;
    CHECK(mn_seq_add_handle(s, &h, &err) < 0 && err.status != MN_OK);
    h.joint = J("head");
    h.name = "head";
    CHECK(mn_seq_add_handle(s, &h, &err) == 0);
    CHECK(mn_seq_add_handle(s, &h, &err) < 0 && !strcmp(err.field, "name"));
    mn_seq_constraint_def c = mn_seq_constraint_default();
    c.con.handle = 5;
    CHECK(mn_seq_add_constraint(s, &c, &err) < 0);
    c.con.handle = 0;
    c.start = 10, c.end = 5;
    CHECK(mn_seq_add_constraint(s, &c, &err) < 0 && !strcmp(err.field, "frames"));
    c.start = 0, c.end = 5;
    c.con.type = MN_CON_PLANE;
    c.lock = 1;
    CHECK(mn_seq_add_constraint(s, &c, &err) < 0 && !strcmp(err.field, "lock"));
    c.lock = 0;
    c.con.dir = mn_v3(0, 0, 0);
    CHECK(mn_seq_add_constraint(s, &c, &err) < 0 && !strcmp(err.field, "normal"));
    CHECK(mn_seq_constraint_count(s) == 0);
    /* a solver needs keys */
    mn_data* d = mn_data_create(M, 0);
    CHECK(mn_seq_solver_create(s, d, &err) == NULL && !strcmp(err.field, "keys"));
    mn_data_destroy(d);
    mn_seq_destroy(s);
}

/* Both feet of figure f locked over [0, 30] (position and orientation). */
static void lock_feet(mn_seq* s, int f) {
    const char* feet[2] = {"left foot", "right foot"};
    for (int i = 0; i < 2; i++) {
        mn_handle_def h = mn_handle_default();
        h.figure = f;
        h.joint = J(feet[i]);
        int hp = mn_seq_add_handle(s, &h, NULL);
        h.type = MN_HANDLE_ORIENT;
        int ho = mn_seq_add_handle(s, &h, NULL);
        CHECK(hp >= 0 && ho >= 0);
        mn_seq_constraint_def c = mn_seq_constraint_default();
        c.con.handle = hp;
        c.start = 0;
        c.end = 30;
        c.lock = 1;
        CHECK(mn_seq_add_constraint(s, &c, NULL) >= 0);
        c.con.type = MN_CON_ORIENT;
        c.con.handle = ho;
        CHECK(mn_seq_add_constraint(s, &c, NULL) >= 0);
    }
}

/* Two figures in one sequence (Welman 6.1, 7.3): figure 0 crouches (Fig. 6.5), figure 1
 * stands beside it and crouches less; the near hands are held together and both feet
 * of each locked. Every frame solved for both together keeps every lock and the hands within
 * the tolerance, with no heap allocation per frame; the solver and the handles refuse what
 * does not fit the figures. */
static void test_two_figures(void) {
    double* q = malloc(sizeof(double) * (size_t)M->nq);
    mn_seq* s = mn_seq_create(M, NULL, NULL);
    mn_seq* b = mn_seq_create(M, NULL, NULL);
    mn_error err;
    CHECK(mn_seq_set_figures(s, 2, (const mn_seq* const*)&b, &err) != MN_OK); /* b has no keys */
    mn_seq_set_key(s, 0, M->q0, NULL);
    crouch(0.2, 0.05, q);
    mn_seq_set_key(s, 30, q, NULL);
    /* the hands nearest each other: figure 0's on the +x side, figure 1's on the -x side,
     * figure 1 standing so that they are 5 cm apart at rest */
    mn_data* d0 = mn_data_create(M, 0);
    int ja = J("left hand"), jb = J("right hand");
    if (d0->xf[ja].p.x < d0->xf[jb].p.x) ja = J("right hand"), jb = J("left hand");
    double side = d0->xf[ja].p.x - d0->xf[jb].p.x + 0.05;
    int px = M->jnt_qadr[J("pelvis")];
    memcpy(q, M->q0, sizeof(double) * (size_t)M->nq);
    q[px] += side;
    mn_seq_set_key(b, 0, q, NULL);
    crouch(0.1, 0.0, q);
    q[px] += side;
    mn_seq_set_key(b, 30, q, NULL);
    free(q);
    CHECK(mn_seq_set_figures(s, 2, (const mn_seq* const*)&b, &err) == MN_OK);
    CHECK(mn_seq_figure_count(s) == 2 && mn_seq_figure(s, 1) == b && !mn_seq_figure(s, 2));
    mn_handle_def h = mn_handle_default();
    h.figure = 2;
    h.joint = ja;
    CHECK(mn_seq_add_handle(s, &h, &err) < 0 && !strcmp(err.field, "figure"));
    h.figure = 0;
    int ha = mn_seq_add_handle(s, &h, NULL);
    h.figure = 1;
    h.joint = jb;
    int hb = mn_seq_add_handle(s, &h, NULL);
    CHECK(mn_seq_set_figures(s, 1, NULL, &err) != MN_OK); /* set before the handles */
    mn_seq_constraint_def c = mn_seq_constraint_default();
    c.con.type = MN_CON_EQUAL;
    c.con.handle = ha;
    c.con.handle2 = hb;
    CHECK(mn_seq_add_constraint(s, &c, NULL) >= 0);
    lock_feet(s, 0);
    lock_feet(s, 1);
    mn_data* d1 = mn_data_create(M, 0);
    CHECK(mn_seq_solver_create(s, d0, &err) == NULL && !strcmp(err.field, "data"));
    mn_data* d[2] = {d0, d1};
    mn_seq_solver* v = mn_seq_solver_create_figures(s, d, 2, &err);
    CHECK(v != NULL);
    mn_seq_solve_options o = mn_seq_solve_options_default();
    o.solve.tol = o.solve.tol_rot = 1e-7;
    const char* feet[2] = {"left foot", "right foot"};
    mn_vec3 foot0[2][2];
    double feet_err = 0, hands_err = 0, drop = 0;
    long before = mn_alloc_count();
    for (int k = 0; v && k <= 60; k++) {
        CHECK(mn_seq_solve_frame(v, k * 0.5, &o, NULL) == MN_OK);
        for (int f = 0; f < 2; f++)
            for (int i = 0; i < 2; i++) {
                mn_vec3 p = d[f]->xf[J(feet[i])].p;
                if (k == 0) foot0[f][i] = p;
                feet_err = fmax(feet_err, mn_vec3_dist(p, foot0[f][i]));
            }
        hands_err = fmax(hands_err, mn_vec3_dist(d0->xf[ja].p, d1->xf[jb].p));
        if (k == 0) drop = d0->xf[J("pelvis")].p.y;
        if (k == 60) drop -= d0->xf[J("pelvis")].p.y;
    }
    CHECK(mn_alloc_count() == before);
    CHECK(feet_err < 1e-6);
    CHECK(hands_err < 1e-6);
    CHECK(drop > 0.1); /* figure 0 crouched */
    /* figure 1 stands where its keys put it (the hands joined at the first frame move the
     * feet a little before they are locked) */
    CHECK(fabs(foot0[1][0].x - foot0[0][0].x - side) < 0.03);
    if (!(feet_err < 1e-6 && hands_err < 1e-6))
        fprintf(stderr, "  feet %g, hands %g, drop %g\n", feet_err, hands_err, drop);
    mn_seq_solver_destroy(v);
    mn_data_destroy(d0);
    mn_data_destroy(d1);
    mn_seq_destroy(s);
    mn_seq_destroy(b);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    M = mn_stickman_model(NULL);
    RUN(test_fig65_feet_stay);
    RUN(test_animated_target);
    RUN(test_animated_plane);
    RUN(test_balance);
    RUN(test_no_allocation);
    RUN(test_bad_constraints);
    RUN(test_two_figures);
    mn_model_destroy(M);
    return mn_test_report();
}
