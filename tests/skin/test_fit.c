/* The LBS fit (seed lbs-inverse-kinematics.md): forward skinning, the energy and its
 * gradients against finite differences, exact recovery of synthetic poses in 3D and 2D,
 * bones kept rigid by their attachments, fixed controllers, singular fixed sets, bad
 * input, and no allocation in a fit. */
#include <marionette/skin.h>

#include <stdlib.h>
#include <string.h>

#include "skin/fit_internal.h"
#include "test.h"

/* Deterministic pseudo-random numbers in [-1, 1). */
static unsigned long long rng_state = 88172645463325252ull;
static double rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static mn_mat3 random_rotation(double max_angle) {
    mn_vec3 ax = mn_vec3_normalize(mn_v3(rnd(), rnd(), rnd()));
    return mn_mat3_axis_angle(ax, max_angle * rnd());
}

/* A tube along x of nring rings of nseg vertices, controllers every `spacing` along x;
 * each vertex is weighted to its two nearest controllers with a smooth falloff.
 * kind BONE + attach makes a chain. dim 2 gives a strip in the xy plane. */
static mn_rig* make_tube(int dim, int nctrl, int nring, int nseg, mn_ctrl_kind kind, int attach) {
    int n = nring * nseg;
    double* rest = malloc((size_t)n * (size_t)dim * sizeof(double));
    double len = (double)nctrl;
    for (int r = 0; r < nring; r++)
        for (int s = 0; s < nseg; s++) {
            int i = r * nseg + s;
            double x = len * r / (nring - 1);
            double a = 2 * MN_PI * s / nseg;
            if (dim == 3) {
                rest[3 * i] = x;
                rest[3 * i + 1] = 0.4 * cos(a);
                rest[3 * i + 2] = 0.4 * sin(a);
            } else {
                rest[2 * i] = x;
                rest[2 * i + 1] = -0.4 + 0.8 * s / (nseg - 1);
            }
        }
    double* mass = malloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        mass[i] = 0.5 + 0.25 * (1 + rnd());
    mn_rig* rig = mn_rig_create(dim, n, rest, mass, NULL);
    for (int j = 0; j < nctrl; j++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", j);
        mn_ctrl_def d = mn_ctrl_default();
        d.name = name;
        d.kind = kind;
        d.pivot = mn_v3(j, 0, 0);
        d.tail = mn_v3(j + 1, 0, 0);
        if (attach && j > 0) {
            d.parent = j - 1;
            d.attached = 1;
        }
        mn_rig_add_ctrl(rig, &d, NULL);
    }
    int* idx = malloc((size_t)n * 2 * sizeof(int));
    double* w = malloc((size_t)n * 2 * sizeof(double));
    for (int i = 0; i < n; i++) {
        double x = rig->rest[3 * i] - 0.5; /* bone centres at j + 0.5 */
        int j0 = (int)floor(x);
        if (j0 < 0) j0 = 0;
        if (j0 > nctrl - 2) j0 = nctrl - 2;
        double t = x - j0;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        t = t * t * (3 - 2 * t);
        idx[2 * i] = j0;
        idx[2 * i + 1] = j0 + 1;
        w[2 * i] = 1 - t;
        w[2 * i + 1] = t;
    }
    mn_rig_set_weights(rig, 2, idx, w, NULL, NULL);
    free(idx);
    free(w);
    free(rest);
    free(mass);
    return rig;
}

static void random_pose(const mn_rig* rig, mn_xform* pose, double angle, double shift) {
    mn_rig_rest_pose(rig, pose);
    for (int j = 0; j < rig->nctrl; j++) {
        if (rig->ctrl_kind[j] != MN_CTRL_CAGE) {
            pose[j].R = rig->dim == 3 ? random_rotation(angle)
                                      : mn_mat3_axis_angle(mn_v3(0, 0, 1), angle * rnd());
        }
        pose[j].p = mn_vec3_add(
            pose[j].p, mn_v3(shift * rnd(), shift * rnd(), rig->dim == 3 ? shift * rnd() : 0));
    }
    mn_rig_propagate(rig, pose);
}

static double pose_distance(const mn_xform* a, const mn_xform* b, int m) {
    double e = 0;
    for (int j = 0; j < m; j++) {
        for (int k = 0; k < 9; k++)
            e = fmax(e, fabs(a[j].R.m[k] - b[j].R.m[k]));
        e = fmax(e, mn_vec3_dist(a[j].p, b[j].p));
    }
    return e;
}

/* LBS by hand for one vertex, against mn_rig_deform. */
static void test_deform(void) {
    mn_rig* rig = make_tube(3, 4, 9, 6, MN_CTRL_POINT, 0);
    mn_xform pose[4];
    random_pose(rig, pose, 1.0, 0.3);
    double* out = malloc((size_t)rig->nverts * 3 * sizeof(double));
    mn_rig_deform(rig, pose, out);
    for (int i = 0; i < rig->nverts; i += 7) {
        mn_vec3 xb = mn_v3(rig->rest[3 * i], rig->rest[3 * i + 1], rig->rest[3 * i + 2]);
        mn_vec3 x = mn_v3(0, 0, 0);
        for (int s = 0; s < rig->k; s++) {
            int j = rig->w_idx[i * rig->k + s];
            double w = rig->w_val[i * rig->k + s];
            mn_xform S = mn_rig_skin_xform(rig, pose, j);
            x = mn_vec3_madd(x, w, mn_xform_apply(&S, xb));
        }
        CHECK_NEAR(out[3 * i], x.x, 1e-12);
        CHECK_NEAR(out[3 * i + 1], x.y, 1e-12);
        CHECK_NEAR(out[3 * i + 2], x.z, 1e-12);
    }
    /* the rest pose reproduces the rest mesh */
    mn_rig_rest_pose(rig, pose);
    mn_rig_deform(rig, pose, out);
    for (int i = 0; i < rig->nverts * 3; i++)
        CHECK_NEAR(out[i], rig->rest[i], 1e-12);
    /* skin matrix round trip */
    random_pose(rig, pose, 1.0, 0.3);
    mn_xform S = mn_rig_skin_xform(rig, pose, 2);
    mn_xform P = mn_rig_pose_from_skin(rig, 2, &S);
    CHECK(pose_distance(&P, &pose[2], 1) < 1e-12);
    free(out);
    mn_rig_destroy(rig);
}

/* Both paths of mn_rig_deform (blended skinning matrices up to 128 controllers, vertex by
 * vertex beyond), 3D and 2D, against the blend by hand at every vertex. */
static void test_deform_paths(void) {
    const int counts[2] = {7, 140};
    for (int dim = 2; dim <= 3; dim++)
        for (int c = 0; c < 2; c++) {
            int m = counts[c];
            mn_rig* rig = make_tube(dim, m, 2 * m + 1, dim == 3 ? 5 : 3, MN_CTRL_POINT, 0);
            mn_xform* pose = malloc((size_t)m * sizeof *pose);
            random_pose(rig, pose, 1.0, 0.3);
            double* out = malloc((size_t)rig->nverts * (size_t)dim * sizeof(double));
            mn_rig_deform(rig, pose, out);
            for (int i = 0; i < rig->nverts; i++) {
                mn_vec3 xb = mn_v3(rig->rest[3 * i], rig->rest[3 * i + 1], rig->rest[3 * i + 2]);
                mn_vec3 x = mn_v3(0, 0, 0);
                for (int s = 0; s < rig->k; s++) {
                    double w = rig->w_val[i * rig->k + s];
                    if (w == 0) continue;
                    mn_xform S = mn_rig_skin_xform(rig, pose, rig->w_idx[i * rig->k + s]);
                    x = mn_vec3_madd(x, w, mn_xform_apply(&S, xb));
                }
                CHECK_NEAR(out[dim * i], x.x, 1e-12 * m);
                CHECK_NEAR(out[dim * i + 1], x.y, 1e-12 * m);
                if (dim == 3) CHECK_NEAR(out[dim * i + 2], x.z, 1e-12 * m);
            }
            free(out);
            free(pose);
            mn_rig_destroy(rig);
        }
}

/* The energy from the per-controller sums equals 1/2 sum m |x - x^r|^2 computed
 * directly, and its gradients match central differences. */
static void test_energy_gradient(void) {
    mn_rig* rig = make_tube(3, 4, 11, 8, MN_CTRL_POINT, 0);
    int n = rig->nverts, m = rig->nctrl;
    mn_xform truth[4], pose[4];
    random_pose(rig, truth, 0.8, 0.2);
    double* x = malloc((size_t)n * 3 * sizeof(double));
    double* xr = malloc((size_t)n * 3 * sizeof(double));
    mn_rig_deform(rig, truth, x);
    for (int i = 0; i < 3 * n; i++)
        x[i] += 0.05 * rnd();
    random_pose(rig, pose, 0.8, 0.2);
    mn_fitter* f = mn_fitter_create(rig, NULL, NULL);
    CHECK(f != NULL);
    CHECK(mn_fit_set_targets(f, x) == MN_OK);
    mn_rig_deform(rig, pose, xr);
    double direct = 0;
    for (int i = 0; i < n; i++) {
        double e2 = 0;
        for (int c = 0; c < 3; c++)
            e2 += (x[3 * i + c] - xr[3 * i + c]) * (x[3 * i + c] - xr[3 * i + c]);
        direct += 0.5 * rig->mass[i] * e2;
    }
    CHECK_NEAR(mn_fit_energy(f, pose), direct, 1e-10 * direct);

    double gr[12], gt[12];
    mn_fit_gradient(f, pose, gr, gt);
    const double h = 1e-6;
    for (int j = 0; j < m; j++)
        for (int a = 0; a < 3; a++) {
            mn_xform pp[4], pm[4];
            memcpy(pp, pose, sizeof pp);
            memcpy(pm, pose, sizeof pm);
            mn_vec3 e = mn_v3(a == 0, a == 1, a == 2);
            mn_mat3 Ep = mn_mat3_exp(mn_vec3_scale(e, h)), Em = mn_mat3_exp(mn_vec3_scale(e, -h));
            pp[j].R = mn_mat3_mul(&Ep, &pose[j].R);
            pm[j].R = mn_mat3_mul(&Em, &pose[j].R);
            double fd = (mn_fit_energy(f, pp) - mn_fit_energy(f, pm)) / (2 * h);
            CHECK_NEAR(gr[3 * j + a], fd, 1e-6 * (1 + fabs(fd)));
            memcpy(pp, pose, sizeof pp);
            memcpy(pm, pose, sizeof pm);
            pp[j].p = mn_vec3_madd(pose[j].p, h, e);
            pm[j].p = mn_vec3_madd(pose[j].p, -h, e);
            fd = (mn_fit_energy(f, pp) - mn_fit_energy(f, pm)) / (2 * h);
            CHECK_NEAR(gt[3 * j + a], fd, 1e-6 * (1 + fabs(fd)));
        }
    /* the seed's formula with the corrected lever arm, summed over vertices directly */
    for (int j = 0; j < m; j++) {
        mn_vec3 g = mn_v3(0, 0, 0);
        for (int i = 0; i < n; i++)
            for (int s = 0; s < rig->k; s++) {
                if (rig->w_idx[i * rig->k + s] != j) continue;
                double w = rig->w_val[i * rig->k + s];
                mn_vec3 xb = mn_v3(rig->rest[3 * i], rig->rest[3 * i + 1], rig->rest[3 * i + 2]);
                mn_vec3 a = mn_mat3_mulv(&pose[j].R, mn_vec3_sub(xb, rig->ctrl_pivot[j]));
                mn_vec3 res = mn_v3(x[3 * i] - xr[3 * i], x[3 * i + 1] - xr[3 * i + 1],
                                    x[3 * i + 2] - xr[3 * i + 2]);
                g = mn_vec3_madd(g, -rig->mass[i] * w, mn_vec3_cross(a, res));
            }
        CHECK_NEAR(gr[3 * j], g.x, 1e-9 * (1 + fabs(g.x)));
        CHECK_NEAR(gr[3 * j + 1], g.y, 1e-9 * (1 + fabs(g.y)));
        CHECK_NEAR(gr[3 * j + 2], g.z, 1e-9 * (1 + fabs(g.z)));
    }
    /* the translation step is the exact minimiser over d: its gradient vanishes */
    mn_fit_translation_step(f, pose);
    mn_fit_gradient(f, pose, gr, gt);
    for (int i = 0; i < 3 * m; i++)
        CHECK_NEAR(gt[i], 0, 1e-9);
    mn_fitter_destroy(f);
    free(x);
    free(xr);
    mn_rig_destroy(rig);
}

/* Noise-free targets: the fit recovers the generating transforms (goal: 1e-6). */
static void recover(int dim, mn_ctrl_kind kind, int attach, int nctrl) {
    mn_rig* rig = make_tube(dim, nctrl, 13, dim == 3 ? 10 : 5, kind, attach);
    int n = rig->nverts, m = rig->nctrl;
    mn_xform* truth = malloc((size_t)m * sizeof *truth);
    mn_xform* pose = malloc((size_t)m * sizeof *pose);
    random_pose(rig, truth, 0.6, attach ? 0 : 0.2);
    double* x = malloc((size_t)n * (size_t)dim * sizeof(double));
    mn_rig_deform(rig, truth, x);
    mn_fitter* f = mn_fitter_create(rig, NULL, NULL);
    CHECK(f != NULL);
    mn_rig_rest_pose(rig, pose);
    CHECK(mn_fit_kabsch(f, pose, x, 1) == MN_OK);
    mn_fit_options o = mn_fit_default();
    o.max_iters = 200;
    mn_fit_result res;
    mn_fit(f, pose, x, &o, &res);
    double e = pose_distance(pose, truth, m);
    if (getenv("MN_VERBOSE") || e > 1e-6 || res.rms > 1e-7)
        fprintf(stderr, "  dim %d kind %d attach %d: pose error %g after %d iterations, rms %g\n",
                dim, kind, attach, e, res.iterations, res.rms);
    CHECK(e < 1e-6);
    CHECK(res.rms < 1e-7);
    CHECK(res.status == MN_OK);
    if (attach) /* bones stay rigid: every child's head on its parent's tail */
        for (int j = 1; j < m; j++) {
            mn_vec3 tail = mn_vec3_add(pose[j - 1].p, mn_mat3_mulv(&pose[j - 1].R, mn_v3(1, 0, 0)));
            CHECK(mn_vec3_dist(tail, pose[j].p) < 1e-12);
        }
    mn_fitter_destroy(f);
    free(x);
    free(truth);
    free(pose);
    mn_rig_destroy(rig);
}

static void test_recover_points_3d(void) {
    recover(3, MN_CTRL_POINT, 0, 5);
}
static void test_recover_bones_3d(void) {
    recover(3, MN_CTRL_BONE, 1, 6);
}
static void test_recover_points_2d(void) {
    recover(2, MN_CTRL_POINT, 0, 5);
}
static void test_recover_bones_2d(void) {
    recover(2, MN_CTRL_BONE, 1, 6);
}
static void test_recover_cage(void) {
    recover(3, MN_CTRL_CAGE, 0, 5);
}

/* The rotation step's metric applied without assembling it (the product the conjugate
 * gradients use) equals the assembled metric times a vector: free points (one free
 * translation each, eliminated through their Schur complement), an attached bone chain
 * (one free root), a fixed bone in the middle of the chain, a 2D chain, cages (no rotation
 * unknowns) and more controllers than the dense assembly takes (assembled pair by pair). */
static void metric_products(int dim, mn_ctrl_kind kind, int attach, int nctrl,
                            const uint8_t* fixed) {
    mn_rig* rig = make_tube(dim, nctrl, 2 * nctrl + 3, dim == 3 ? 6 : 4, kind, attach);
    int n = rig->nverts, m = rig->nctrl;
    mn_xform* pose = malloc((size_t)m * sizeof *pose);
    double* x = malloc((size_t)n * (size_t)dim * sizeof(double));
    double* buf = malloc(3 * 3 * (size_t)m * sizeof(double));
    random_pose(rig, pose, 0.6, attach ? 0 : 0.2);
    mn_rig_deform(rig, pose, x);
    for (int i = 0; i < n * dim; i++)
        x[i] += 0.05 * rnd();
    random_pose(rig, pose, 0.6, attach ? 0 : 0.2);
    mn_fitter* f = mn_fitter_create(rig, fixed, NULL);
    CHECK(f != NULL);
    CHECK(f && mn_fit_set_targets(f, x) == MN_OK);
    double *v = buf, *dense = buf + 3 * m, *implicit = buf + 6 * m;
    for (int i = 0; i < 3 * m; i++)
        v[i] = rnd();
    int nr = f ? mn_fit_metric_products(f, pose, v, dense, implicit) : 0;
    int expect = 0;
    for (int j = 0; j < m; j++)
        expect += (!fixed || !fixed[j]) && kind != MN_CTRL_CAGE ? (dim == 3 ? 3 : 1) : 0;
    CHECK(nr == expect);
    double scale = 0, diff = 0;
    for (int i = 0; i < nr; i++) {
        scale = fmax(scale, fabs(dense[i]));
        diff = fmax(diff, fabs(dense[i] - implicit[i]));
    }
    /* both round differently: the assembly's terms s_jk d_p d_q^T reach the tube's squared
     * length (170 controllers: 7e3) times the product, so 1e-10 of it; a wrong term would
     * differ by the product's own size */
    if (getenv("MN_VERBOSE") || !(diff <= 1e-10 * scale))
        fprintf(stderr, "  metric product dim %d kind %d attach %d m %d: |Hv| %g, difference %g\n",
                dim, kind, attach, m, scale, diff);
    CHECK(nr == 0 || scale > 0);
    CHECK(diff <= 1e-10 * scale);
    mn_fitter_destroy(f);
    free(buf);
    free(x);
    free(pose);
    mn_rig_destroy(rig);
}

static void test_metric_product(void) {
    metric_products(3, MN_CTRL_POINT, 0, 6, NULL);
    metric_products(3, MN_CTRL_BONE, 1, 7, NULL);
    uint8_t fixed[5] = {0, 0, 1, 0, 0};
    metric_products(3, MN_CTRL_BONE, 1, 5, fixed);
    metric_products(2, MN_CTRL_BONE, 1, 6, NULL);
    metric_products(2, MN_CTRL_POINT, 0, 5, NULL);
    metric_products(3, MN_CTRL_CAGE, 0, 5, NULL);
    metric_products(3, MN_CTRL_POINT, 0, 170, NULL);
    metric_products(3, MN_CTRL_BONE, 1, 170, NULL);
}

/* The inexact steps (conjugate gradients on the metric's product after a frame's first
 * iteration): a 12-bone chain (36 rotation unknowns) tracked over a moving sequence builds
 * the metric once per frame and takes the other steps with products; fitted from the rest
 * pose to poses a radian away, the conjugate gradients give up on some step (the metric
 * moves too much between iterates) and the metric is built again, and the fits still
 * converge; a 4-bone chain (12 unknowns) builds at every step and takes no product. */
static void test_inexact_steps(void) {
    mn_rig* rig = make_tube(3, 12, 27, 8, MN_CTRL_BONE, 1);
    int n = rig->nverts, m = rig->nctrl;
    mn_xform truth[12], pose[12];
    double* x = malloc((size_t)n * 3 * sizeof(double));
    mn_fitter* f = mn_fitter_create(rig, NULL, NULL);
    CHECK(f != NULL);
    mn_fit_options o = mn_fit_default();
    o.max_iters = 200;
    mn_fit_result res;
    int builds, products, total_builds = 0, total_products = 0, frames = 12;
    mn_rig_rest_pose(rig, pose);
    for (int t = 0; t < frames && f; t++) {
        mn_rig_rest_pose(rig, truth);
        for (int j = 0; j < m; j++) {
            double ph = 0.4 * j - 0.1 * t;
            mn_mat3 Rl = mn_mat3_axis_angle(mn_vec3_normalize(mn_v3(0.2, sin(ph), cos(ph))),
                                            0.3 * sin(ph + 0.05 * t));
            truth[j].R = j ? mn_mat3_mul(&truth[j - 1].R, &Rl) : Rl;
        }
        mn_rig_propagate(rig, truth);
        mn_rig_deform(rig, truth, x);
        if (t == 0) mn_fit_kabsch(f, pose, x, 1);
        CHECK(mn_fit(f, pose, x, &o, &res) == MN_OK);
        CHECK(res.rms < 1e-9);
        mn_fit_counts(f, &builds, &products, NULL);
        if (t > 0) {
            total_builds += builds;
            total_products += products;
        }
        if (getenv("MN_VERBOSE"))
            fprintf(stderr, "  track %d: %d iterations, %d builds, %d products, rms %g\n", t,
                    res.iterations, builds, products, res.rms);
    }
    CHECK(total_builds == frames - 1);
    CHECK(total_products >= frames - 1);
    int rebuilt = 0;
    for (int trial = 0; trial < 10 && f; trial++) {
        random_pose(rig, truth, 1.0, 0);
        mn_rig_deform(rig, truth, x);
        mn_rig_rest_pose(rig, pose);
        CHECK(mn_fit(f, pose, x, &o, &res) == MN_OK);
        CHECK(res.rms < 1e-9);
        CHECK(pose_distance(pose, truth, m) < 1e-6);
        mn_fit_counts(f, &builds, &products, NULL);
        rebuilt += builds >= 2;
    }
    CHECK(rebuilt > 0);
    mn_fitter_destroy(f);
    mn_rig_destroy(rig);

    rig = make_tube(3, 4, 13, 8, MN_CTRL_BONE, 1);
    f = mn_fitter_create(rig, NULL, NULL);
    CHECK(f != NULL);
    random_pose(rig, truth, 0.6, 0);
    mn_rig_deform(rig, truth, x);
    mn_rig_rest_pose(rig, pose);
    CHECK(f && mn_fit(f, pose, x, &o, &res) == MN_OK);
    mn_fit_counts(f, &builds, &products, NULL);
    CHECK(products == 0);
    CHECK(builds == res.iterations || builds == res.iterations + 1);
    mn_fitter_destroy(f);
    mn_rig_destroy(rig);
    free(x);
}

/* The travelling wave of test_inexact_steps at frame t (about z in 2D). */
static void wave_pose(const mn_rig* rig, double t, mn_xform* truth) {
    mn_rig_rest_pose(rig, truth);
    for (int j = 0; j < rig->nctrl; j++) {
        double ph = 0.4 * j - 0.1 * t;
        mn_vec3 axis =
            rig->dim == 3 ? mn_vec3_normalize(mn_v3(0.2, sin(ph), cos(ph))) : mn_v3(0, 0, 1);
        mn_mat3 Rl = mn_mat3_axis_angle(axis, 0.3 * sin(ph + 0.05 * t));
        truth[j].R = j ? mn_mat3_mul(&truth[j - 1].R, &Rl) : Rl;
    }
    mn_rig_propagate(rig, truth);
}

/* A fitter tracking a motion starts each frame from every bone's rigid fit corrected by
 * the corrections of the last fits (rigid_start): along the travelling wave it takes that
 * predicted start and fewer iterations than a fitter that forgets between frames, with
 * the same result; after a jump to an unrelated pose it still converges; mn_fitter_reset
 * makes a fit repeat bit for bit; none of it allocates; on noisy targets it tries no
 * second start, which could not halve the energy. In 3D and in 2D. */
static void test_predicted_start(void) {
    for (int dim = 3; dim >= 2; dim--) {
        mn_rig* rig = make_tube(dim, 12, 27, 8, MN_CTRL_BONE, 1);
        int n = rig->nverts, m = rig->nctrl, frames = 40;
        mn_xform truth[12], pf[12], pg[12], a[12], b[12];
        double* x = malloc((size_t)n * (size_t)dim * sizeof(double));
        mn_fitter* f = mn_fitter_create(rig, NULL, NULL);
        mn_fitter* g = mn_fitter_create(rig, NULL, NULL);
        CHECK(f != NULL && g != NULL);
        mn_fit_options o = mn_fit_default();
        o.max_iters = 200;
        mn_fit_result rf, rg;
        int it_f = 0, it_g = 0, predicted = 0;
        long allocs = 0;
        mn_rig_rest_pose(rig, pf);
        mn_rig_rest_pose(rig, pg);
        for (int t = 0; t < frames && f && g; t++) {
            wave_pose(rig, t, truth);
            mn_rig_deform(rig, truth, x);
            if (t == 0) {
                mn_fit_kabsch(f, pf, x, 1);
                mn_fit_kabsch(g, pg, x, 1);
            }
            long a0 = mn_alloc_count();
            CHECK(mn_fit(f, pf, x, &o, &rf) == MN_OK);
            allocs += mn_alloc_count() - a0;
            mn_fitter_reset(g);
            CHECK(mn_fit(g, pg, x, &o, &rg) == MN_OK);
            CHECK(mn_fit_start_taken(g) != 2);
            CHECK(rf.rms < 1e-9 && rg.rms < 1e-9);
            CHECK(pose_distance(pf, truth, m) < 1e-6 && pose_distance(pf, pg, m) < 1e-6);
            if (t >= 3) {
                predicted += mn_fit_start_taken(f) == 2;
                it_f += rf.iterations;
                it_g += rg.iterations;
            }
            if (getenv("MN_VERBOSE"))
                fprintf(stderr, "  dim %d frame %d: start %d, %d iterations (%d forgetting)\n", dim,
                        t, mn_fit_start_taken(f), rf.iterations, rg.iterations);
        }
        CHECK(predicted == frames - 3);
        CHECK(it_f < it_g);
        CHECK(allocs == 0);
        /* a jump: the prediction of the wave is no start for an unrelated pose */
        for (int trial = 0; trial < 3 && f; trial++) {
            random_pose(rig, truth, 1.0, 0);
            mn_rig_propagate(rig, truth);
            mn_rig_deform(rig, truth, x);
            mn_rig_rest_pose(rig, pf);
            CHECK(mn_fit(f, pf, x, &o, &rf) == MN_OK);
            CHECK(pose_distance(pf, truth, m) < 1e-6);
        }
        /* forgotten what came before, a fit repeats bit for bit */
        wave_pose(rig, 3, truth);
        mn_rig_deform(rig, truth, x);
        wave_pose(rig, 2, a);
        memcpy(b, a, sizeof a);
        if (f) {
            mn_fitter_reset(f);
            CHECK(mn_fit(f, a, x, &o, &rf) == MN_OK);
            mn_fitter_reset(f);
            CHECK(mn_fit(f, b, x, &o, &rg) == MN_OK);
            CHECK(memcmp(a, b, sizeof a) == 0 && rf.iterations == rg.iterations &&
                  rf.energy == rg.energy);
        }
        /* noisy targets moving slowly: the energy stays near the noise's, which no start
         * could halve, so after the first frame none is tried; a fitter that forgets
         * between frames tries them, refuses them, and fits the same poses bit for bit */
        double diag = mn_rig_bbox_diagonal(rig);
        int tried_f = 0, tried_g = 0, starts;
        mn_rig_rest_pose(rig, pf);
        mn_rig_rest_pose(rig, pg);
        for (int t = 0; t < 8 && f && g; t++) {
            wave_pose(rig, 0.2 * t, truth);
            mn_rig_deform(rig, truth, x);
            for (int i = 0; i < n * dim; i++)
                x[i] += 0.01 * diag * rnd();
            if (t == 0) mn_fitter_reset(f);
            CHECK(mn_fit(f, pf, x, &o, &rf) == MN_OK);
            mn_fit_counts(f, NULL, NULL, &starts);
            tried_f += t > 0 ? starts : 0;
            mn_fitter_reset(g);
            CHECK(mn_fit(g, pg, x, &o, &rg) == MN_OK);
            mn_fit_counts(g, NULL, NULL, &starts);
            tried_g += starts;
            CHECK(t == 0 || mn_fit_start_taken(g) == 0);
            CHECK(memcmp(pf, pg, sizeof pf) == 0 && rf.iterations == rg.iterations);
            if (getenv("MN_VERBOSE"))
                fprintf(stderr, "  dim %d noisy frame %d: %d iterations, rms %g\n", dim, t,
                        rf.iterations, rf.rms);
        }
        CHECK(tried_f == 0 && tried_g >= 8);
        mn_fitter_destroy(f);
        mn_fitter_destroy(g);
        free(x);
        mn_rig_destroy(rig);
    }
}

/* Warm-started from the previous frame: a slowly moving pose is tracked, every frame
 * allocation-free, fixed controllers keep their given pose exactly. */
static void test_track_fixed_no_alloc(void) {
    mn_rig* rig = make_tube(3, 6, 25, 12, MN_CTRL_BONE, 1);
    int n = rig->nverts, m = rig->nctrl;
    mn_xform truth[6], pose[6], start[6];
    uint8_t fixed[6] = {1, 0, 0, 0, 0, 0};
    mn_fitter* f = mn_fitter_create(rig, fixed, NULL);
    CHECK(f != NULL);
    double* x = malloc((size_t)n * 3 * sizeof(double));
    mn_rig_rest_pose(rig, pose);
    mn_fit_options o = mn_fit_default();
    o.max_iters = 100;
    double worst = 0;
    long allocs = 0;
    for (int t = 0; t < 20; t++) {
        mn_rig_rest_pose(rig, truth);
        double s = 0.05 * t;
        truth[0].R = mn_mat3_axis_angle(mn_v3(0, 0, 1), 0.2 * s);
        truth[0].p = mn_v3(0.1 * s, 0.05 * s, 0);
        for (int j = 1; j < m; j++)
            truth[j].R =
                mn_mat3_axis_angle(mn_vec3_normalize(mn_v3(0.3, 1, j)), s * (0.3 + 0.1 * j));
        mn_rig_propagate(rig, truth);
        mn_rig_deform(rig, truth, x);
        pose[0] = truth[0]; /* the user drives the root */
        memcpy(start, pose, sizeof start);
        long a0 = mn_alloc_count();
        mn_fit_result res;
        mn_fit(f, pose, x, &o, &res);
        allocs += mn_alloc_count() - a0;
        CHECK(memcmp(&pose[0], &start[0], sizeof pose[0]) == 0);
        worst = fmax(worst, pose_distance(pose, truth, m));
        if (pose_distance(pose, truth, m) > 1e-6)
            fprintf(stderr, "  frame %d: pose error %g, %d iterations, rms %g status %d\n", t,
                    pose_distance(pose, truth, m), res.iterations, res.rms, res.status);
    }
    CHECK(allocs == 0);
    CHECK(worst < 1e-6);
    mn_fitter_destroy(f);
    free(x);
    mn_rig_destroy(rig);
}

/* The user drives a bone in the middle of a chain (an elbow): the bones above and below
 * are recovered, and the driven bone stays exactly where it was put. */
static void test_fixed_middle_of_chain(void) {
    mn_rig* rig = make_tube(3, 5, 21, 10, MN_CTRL_BONE, 1);
    int n = rig->nverts;
    uint8_t fixed[5] = {0, 0, 1, 0, 0};
    mn_fitter* f = mn_fitter_create(rig, fixed, NULL);
    CHECK(f != NULL);
    double* x = malloc((size_t)n * 3 * sizeof(double));
    for (int trial = 0; trial < 5 && f; trial++) {
        mn_xform truth[5], pose[5];
        random_pose(rig, truth, 0.5, 0);
        mn_rig_deform(rig, truth, x);
        mn_rig_rest_pose(rig, pose);
        pose[2] = truth[2];
        mn_fit_kabsch(f, pose, x, 1);
        mn_fit_options o = mn_fit_default();
        o.max_iters = 300;
        mn_fit_result res;
        mn_fit(f, pose, x, &o, &res);
        CHECK(memcmp(&pose[2], &truth[2], sizeof pose[2]) == 0);
        double e = pose_distance(pose, truth, 5);
        if (getenv("MN_VERBOSE") || e > 1e-6)
            fprintf(stderr, "  fixed middle %d: pose error %g, %d iterations, rms %g\n", trial, e,
                    res.iterations, res.rms);
        CHECK(e < 1e-6);
    }
    mn_fitter_destroy(f);
    free(x);
    mn_rig_destroy(rig);
}

/* Controllers named like the joints of a model take the model's hierarchy. */
static void test_hierarchy_from_model(void) {
    mn_spec* sp = mn_spec_create("arm");
    mn_joint_def j = mn_joint_default();
    j.name = "shoulder";
    j.type = MN_JOINT_BALL;
    mn_spec_add_joint(sp, &j, NULL);
    j.name = "elbow";
    j.parent = 0;
    j.offset = mn_v3(1, 0, 0);
    mn_spec_add_joint(sp, &j, NULL);
    j.name = "wrist";
    j.parent = 1;
    mn_spec_add_joint(sp, &j, NULL);
    j.name = "hand";
    j.parent = 2;
    mn_spec_add_joint(sp, &j, NULL);
    mn_model* m = mn_model_compile(sp, NULL);
    CHECK(m != NULL);
    double rest[9] = {0.5, 0, 0, 1.5, 0, 0, 2.5, 0, 0};
    mn_rig* rig = mn_rig_create(3, 3, rest, NULL, NULL);
    const char* names[3] = {"shoulder", "elbow", "hand"}; /* the wrist has no controller */
    for (int k = 0; k < 3; k++) {
        mn_ctrl_def d = mn_ctrl_default();
        d.name = names[k];
        d.pivot = mn_v3(k == 2 ? 3 : k, 0, 0);
        mn_rig_add_ctrl(rig, &d, NULL);
    }
    CHECK(m && mn_rig_set_hierarchy(rig, m, NULL) == MN_OK);
    CHECK(rig->ctrl_parent[0] == -1 && !rig->ctrl_attached[0]);
    CHECK(rig->ctrl_parent[1] == 0 && rig->ctrl_attached[1]);
    CHECK(rig->ctrl_parent[2] == 1 && rig->ctrl_attached[2]); /* through the wrist */
    mn_rig* other = mn_rig_create(3, 3, rest, NULL, NULL);
    mn_ctrl_def d = mn_ctrl_default();
    d.name = "tail";
    mn_rig_add_ctrl(other, &d, NULL);
    mn_error err;
    CHECK(m && mn_rig_set_hierarchy(other, m, &err) == MN_ERR_NOTFOUND);
    mn_rig_destroy(other);
    mn_rig_destroy(rig);
    mn_model_destroy(m);
    mn_spec_destroy(sp);
}

static void test_singular_fixed_set(void) {
    mn_rig* rig = make_tube(3, 4, 9, 6, MN_CTRL_POINT, 0);
    /* a fifth controller that moves no vertex, not fixed: its translation is free */
    mn_ctrl_def d = mn_ctrl_default();
    d.name = "idle";
    d.pivot = mn_v3(9, 0, 0);
    CHECK(mn_rig_add_ctrl(rig, &d, NULL) == 4);
    mn_error err;
    mn_fitter* f = mn_fitter_create(rig, NULL, &err);
    CHECK(f == NULL);
    CHECK(err.status == MN_ERR_SINGULAR);
    CHECK(strstr(err.message, "idle") != NULL);
    uint8_t fixed[5] = {0, 0, 0, 0, 1};
    f = mn_fitter_create(rig, fixed, &err);
    CHECK(f != NULL);
    /* un-fixing it again fails and keeps the working set */
    uint8_t none[5] = {0};
    CHECK(mn_fitter_set_fixed(f, none, &err) == MN_ERR_SINGULAR);
    mn_xform pose[5];
    mn_rig_rest_pose(rig, pose);
    double* x = malloc((size_t)rig->nverts * 3 * sizeof(double));
    mn_rig_deform(rig, pose, x);
    mn_fit_result res;
    CHECK(mn_fit(f, pose, x, NULL, &res) == MN_OK);
    CHECK(res.rms < 1e-9);
    mn_fitter_destroy(f);
    mn_rig_destroy(rig);

    /* attachments plus fixing both a child and its parent's other child over-determine */
    rig = make_tube(3, 3, 9, 6, MN_CTRL_BONE, 1);
    d = mn_ctrl_default();
    d.name = "twin";
    d.kind = MN_CTRL_BONE;
    d.pivot = mn_v3(1, 0, 0);
    d.parent = 0;
    d.attached = 1;
    mn_rig_add_ctrl(rig, &d, NULL);
    uint8_t fx[4] = {0, 1, 0, 1}; /* both children of bone 0, both fixed at one joint */
    int* idx = calloc((size_t)rig->nverts * 2, sizeof(int));
    double* w = calloc((size_t)rig->nverts * 2, sizeof(double));
    for (int i = 0; i < rig->nverts; i++) {
        idx[2 * i] = i % 4;
        w[2 * i] = 1;
    }
    mn_rig_set_weights(rig, 2, idx, w, NULL, NULL);
    f = mn_fitter_create(rig, fx, &err);
    CHECK(f == NULL);
    CHECK(err.status == MN_ERR_SINGULAR);
    free(idx);
    free(w);
    free(x);
    mn_rig_destroy(rig);
}

static void test_bad_input(void) {
    mn_rig* rig = make_tube(3, 3, 7, 5, MN_CTRL_POINT, 0);
    int n = rig->nverts;
    mn_fitter* f = mn_fitter_create(rig, NULL, NULL);
    double* x = malloc((size_t)n * 3 * sizeof(double));
    mn_xform pose[3], before[3];
    mn_rig_rest_pose(rig, pose);
    mn_rig_deform(rig, pose, x);
    x[7] = NAN;
    memcpy(before, pose, sizeof pose);
    mn_fit_result res;
    CHECK(mn_fit(f, pose, x, NULL, &res) == MN_ERR_ARG);
    CHECK(memcmp(pose, before, sizeof pose) == 0);
    x[7] = 0;
    pose[1].p.y = INFINITY;
    CHECK(mn_fit(f, pose, x, NULL, &res) == MN_ERR_ARG);
    mn_fitter_destroy(f);

    /* weights: not summing to one -> normalised with a warning; no influence -> error */
    int idx[2 * 35];
    double w[2 * 35];
    for (int i = 0; i < n; i++) {
        idx[2 * i] = 0;
        idx[2 * i + 1] = 1;
        w[2 * i] = 0.6;
        w[2 * i + 1] = 0.6;
    }
    int nwarn = 0;
    mn_error err;
    CHECK(mn_rig_set_weights(rig, 2, idx, w, &nwarn, &err) == MN_OK);
    CHECK(nwarn == n);
    CHECK_NEAR(rig->w_val[0] + rig->w_val[1], 1.0, 1e-15);
    w[2 * 4] = w[2 * 4 + 1] = 0;
    CHECK(mn_rig_set_weights(rig, 2, idx, w, NULL, &err) == MN_ERR_ARG);
    CHECK(strstr(err.message, "vertex 4") != NULL);
    w[2 * 4] = NAN;
    CHECK(mn_rig_set_weights(rig, 2, idx, w, NULL, &err) == MN_ERR_ARG);
    w[2 * 4] = 0.5;
    idx[2 * 4] = 9;
    CHECK(mn_rig_set_weights(rig, 2, idx, w, NULL, &err) == MN_ERR_ARG);
    CHECK_NEAR(rig->w_val[0] + rig->w_val[1], 1.0, 1e-15); /* unchanged after failures */

    /* NaN rest positions, duplicate names */
    double bad[6] = {0, 0, 0, NAN, 0, 0};
    CHECK(mn_rig_create(3, 2, bad, NULL, &err) == NULL);
    CHECK(strstr(err.message, "vertex 1") != NULL);
    mn_ctrl_def d = mn_ctrl_default();
    d.name = "c0";
    CHECK(mn_rig_add_ctrl(rig, &d, &err) == -1);
    free(x);
    mn_rig_destroy(rig);
}

/* With noise the fit is at least as good as each bone's own rigid (Kabsch) fit. */
static void test_noise_vs_kabsch(void) {
    mn_rig* rig = make_tube(3, 5, 21, 10, MN_CTRL_POINT, 0);
    int n = rig->nverts;
    mn_xform truth[5], pose[5], kab[5];
    random_pose(rig, truth, 0.5, 0.1);
    double* x = malloc((size_t)n * 3 * sizeof(double));
    mn_rig_deform(rig, truth, x);
    double diag = mn_rig_bbox_diagonal(rig);
    for (int i = 0; i < 3 * n; i++)
        x[i] += 0.01 * diag * rnd();
    mn_fitter* f = mn_fitter_create(rig, NULL, NULL);
    mn_rig_rest_pose(rig, kab);
    mn_fit_kabsch(f, kab, x, 0);
    double rms_k, rms_f;
    mn_rig_error(rig, kab, x, &rms_k, NULL);
    memcpy(pose, kab, sizeof pose);
    mn_fit_result res;
    mn_fit(f, pose, x, NULL, &res);
    rms_f = res.rms;
    CHECK(rms_f <= rms_k);
    /* the generating pose leaves exactly the noise: the least-squares fit cannot do worse */
    double rms_t;
    mn_rig_error(rig, truth, x, &rms_t, NULL);
    CHECK(rms_f <= rms_t * (1 + 1e-9));
    mn_fitter_destroy(f);
    free(x);
    mn_rig_destroy(rig);
}

/* Every refusal and every budget that runs out says which argument or option is at fault;
 * NULL options mean mn_fit_default(). */
static void test_result_message(void) {
    mn_rig* rig = make_tube(3, 3, 7, 5, MN_CTRL_POINT, 0);
    int n = rig->nverts;
    mn_fitter* f = mn_fitter_create(rig, NULL, NULL);
    double* x = malloc((size_t)n * 3 * sizeof(double));
    mn_xform pose[3], rest[3];
    mn_rig_rest_pose(rig, rest);
    memcpy(pose, rest, sizeof pose);
    pose[1].R = mn_mat3_axis_angle(mn_v3(1, 0, 0), 0.4);
    mn_rig_deform(rig, pose, x);
    mn_fit_result res;
    CHECK(mn_fit(f, NULL, x, NULL, &res) == MN_ERR_ARG && strstr(res.message, "pose") != NULL);
    CHECK(mn_fit(f, rest, NULL, NULL, &res) == MN_ERR_ARG &&
          strstr(res.message, "targets") != NULL);
    CHECK(mn_fit(NULL, rest, x, NULL, &res) == MN_ERR_ARG && strstr(res.message, "fitter") != NULL);
    mn_fit_options o = mn_fit_default();
    o.max_iters = -1;
    CHECK(mn_fit(f, rest, x, &o, &res) == MN_ERR_ARG && strstr(res.message, "max_iters") != NULL);
    o = mn_fit_default();
    o.tol = NAN;
    CHECK(mn_fit(f, rest, x, &o, &res) == MN_ERR_ARG && strstr(res.message, "tol") != NULL);
    o = mn_fit_default();
    o.max_halvings = -2;
    memcpy(pose, rest, sizeof pose);
    CHECK(mn_fit(f, pose, x, &o, &res) == MN_ERR_ARG &&
          strstr(res.message, "max_halvings") != NULL);
    CHECK(memcmp(pose, rest, sizeof rest) == 0); /* nothing changed by a refusal */
    /* a zero budget from the rest pose cannot reach a rotated target */
    o = mn_fit_default();
    o.max_iters = 0;
    memcpy(pose, rest, sizeof pose);
    CHECK(mn_fit(f, pose, x, &o, &res) == MN_ERR_NOCONVERGE);
    CHECK(res.status == MN_ERR_NOCONVERGE && res.iterations == 0 &&
          strstr(res.message, "max_iters") != NULL);
    /* NULL options: the defaults, which converge */
    memcpy(pose, rest, sizeof pose);
    mn_fit_result r1, r2;
    mn_fitter_reset(f); /* each fit from the same state: only the options differ */
    CHECK(mn_fit(f, pose, x, NULL, &r1) == MN_OK && r1.message[0] == 0);
    o = mn_fit_default();
    memcpy(pose, rest, sizeof pose);
    mn_fitter_reset(f);
    CHECK(mn_fit(f, pose, x, &o, &r2) == MN_OK);
    CHECK(r1.iterations == r2.iterations && r1.energy == r2.energy);
    mn_fitter_destroy(f);
    free(x);
    mn_rig_destroy(rig);
}

/* Targets that are not finite are refused whichever way they hide in the per-frame sums
 * (a NaN, an infinity, infinities that cancel), and the fitter keeps the targets it had;
 * the energy from the sums stays exact for targets far from the origin. */
static void test_targets_refused_and_far(void) {
    mn_rig* rig = make_tube(3, 4, 11, 8, MN_CTRL_POINT, 0);
    int n = rig->nverts;
    mn_xform truth[4], pose[4];
    random_pose(rig, truth, 0.8, 0.2);
    random_pose(rig, pose, 0.8, 0.2);
    double* x = malloc((size_t)n * 3 * sizeof(double));
    double* xr = malloc((size_t)n * 3 * sizeof(double));
    mn_rig_deform(rig, truth, x);
    mn_fitter* f = mn_fitter_create(rig, NULL, NULL);
    CHECK(f != NULL);
    CHECK(mn_fit_set_targets(f, x) == MN_OK);
    double e0 = mn_fit_energy(f, pose);
    CHECK(e0 > 0);
    double* bad = malloc((size_t)n * 3 * sizeof(double));
    for (int c = 0; c < 3; c++) {
        memcpy(bad, x, (size_t)n * 3 * sizeof(double));
        if (c == 0) bad[3 * (n / 2) + 1] = NAN;
        if (c == 1) bad[3 * (n - 1) + 2] = INFINITY;
        if (c == 2) {
            bad[5] = INFINITY;
            bad[3 * (n / 3) + 2] = -INFINITY;
        }
        CHECK(mn_fit_set_targets(f, bad) == MN_ERR_ARG);
        CHECK(mn_fit_energy(f, pose) == e0); /* the previous targets, bit for bit */
        mn_fit_result res;
        mn_xform p2[4];
        memcpy(p2, pose, sizeof pose);
        CHECK(mn_fit(f, p2, bad, NULL, &res) == MN_ERR_ARG &&
              strstr(res.message, "targets") != NULL);
        CHECK(memcmp(p2, pose, sizeof pose) == 0);
    }
    /* far from the origin: the sums are centred on the targets, so the energy keeps its
     * digits (a direct sum over the vertices is the reference) */
    for (int i = 0; i < n; i++) {
        x[3 * i] += 1e5;
        x[3 * i + 1] -= 3e4;
        x[3 * i + 2] += 0.05 * rnd();
    }
    for (int j = 0; j < 4; j++)
        pose[j].p = mn_vec3_add(pose[j].p, mn_v3(1e5, -3e4, 0));
    CHECK(mn_fit_set_targets(f, x) == MN_OK);
    mn_rig_deform(rig, pose, xr);
    double direct = 0;
    for (int i = 0; i < n; i++) {
        double e2 = 0;
        for (int c = 0; c < 3; c++)
            e2 += (x[3 * i + c] - xr[3 * i + c]) * (x[3 * i + c] - xr[3 * i + c]);
        direct += 0.5 * rig->mass[i] * e2;
    }
    CHECK_NEAR(mn_fit_energy(f, pose), direct, 1e-8 * direct);
    mn_fitter_destroy(f);
    free(x);
    free(xr);
    free(bad);
    mn_rig_destroy(rig);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_deform);
    RUN(test_deform_paths);
    RUN(test_energy_gradient);
    RUN(test_recover_points_3d);
    RUN(test_recover_bones_3d);
    RUN(test_recover_points_2d);
    RUN(test_recover_bones_2d);
    RUN(test_recover_cage);
    RUN(test_metric_product);
    RUN(test_inexact_steps);
    RUN(test_predicted_start);
    RUN(test_track_fixed_no_alloc);
    RUN(test_fixed_middle_of_chain);
    RUN(test_hierarchy_from_model);
    RUN(test_singular_fixed_set);
    RUN(test_bad_input);
    RUN(test_result_message);
    RUN(test_noise_vs_kabsch);
    RUN(test_targets_refused_and_far);
    return mn_test_report();
}
