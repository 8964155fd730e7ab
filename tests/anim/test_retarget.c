/* Retargeting (include/marionette/retarget.h): the CMU walk onto the stick figure with and
 * without clean-up, measured in the same run; the mapping checked against an identity
 * retarget (the stick figure onto itself gives back its own joint angles); rest-pose
 * alignment (a T-pose source drives the arms of a figure that rests with them down); the
 * Euler branch identity; no allocation per frame; the map file and its malformed table. */
#include <marionette/io.h>
#include <marionette/retarget.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define WALK MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"
#define WALK_3DSMAX MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh"
#define BOXING MN_DATA "/mocap/other_skeleton/Boxing_Toes.bvh"
#define CESIUM MN_DATA "/skinned/CesiumMan.glb"

static mn_model* read_bvh(const char* path, mn_motion* mo) {
    mn_model* m = NULL;
    mn_error err;
    if (mn_bvh_read(path, NULL, &m, mo, NULL, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return NULL;
    }
    return m;
}

static void test_role_names(void) {
    for (int r = 0; r < MN_ROLE_COUNT; r++) {
        CHECK(mn_role_name((mn_role)r) != NULL);
        CHECK(mn_role_parse(mn_role_name((mn_role)r)) == r);
    }
    CHECK(mn_role_parse("pelvis") == -1);
    CHECK(mn_role_name(MN_ROLE_COUNT) == NULL);
    CHECK(!strcmp(mn_role_name(MN_ROLE_L_THIGH), "left_thigh"));
}

static const char* detect_file(const char* path) {
    mn_model* m = NULL;
    mn_error err;
    if (mn_figure_read(path, &m, NULL, NULL, &err) != MN_OK) return NULL;
    const char* name = mn_rig_name(mn_rig_detect(m));
    mn_model_destroy(m);
    return name;
}

static void test_rig_detect(void) {
    const char* n;
    CHECK((n = detect_file(WALK)) && !strcmp(n, "cmu-motionbuilder"));
    CHECK((n = detect_file(WALK_3DSMAX)) && !strcmp(n, "cmu-3dsmax"));
    CHECK((n = detect_file(BOXING)) && !strcmp(n, "biovision"));
    CHECK((n = detect_file(CESIUM)) && !strcmp(n, "gltf-armature"));
    CHECK((n = detect_file("stickman")) && !strcmp(n, "stickman"));
    CHECK((n = detect_file(MN_DATA "/skinned/Fox.glb")) && !strcmp(n, "gltf-fox"));
    /* a robot arm is no rig */
    CHECK(detect_file(MN_DATA "/robots/franka_panda/panda.urdf") == NULL);
}

/* R_a(x) R_b(y) R_c(z) = R_a(x + pi) R_b(pi - y) R_c(z + pi) for every Tait-Bryan order: the
 * second branch the decomposition chooses between. */
static void test_euler_branches(void) {
    double e[3] = {0.3, -0.7, 1.1}, f[3] = {0.3 + MN_PI, MN_PI + 0.7, 1.1 + MN_PI};
    for (int o = 0; o < 6; o++) {
        mn_mat3 A = mn_euler_to_mat3((mn_euler_order)o, e),
                B = mn_euler_to_mat3((mn_euler_order)o, f);
        for (int k = 0; k < 9; k++)
            CHECK_NEAR(A.m[k], B.m[k], 1e-12);
    }
}

/* The stick figure onto itself: every hinge angle comes back (the alignment is the identity,
 * each compound joint's Euler decomposition inverts its forward kinematics). */
static void test_identity_retarget(void) {
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    CHECK(m != NULL);
    if (!m) return;
    int n = 40;
    double* take = malloc(sizeof(double) * (size_t)(n * m->nq));
    srand(7);
    for (int f = 0; f < n; f++) {
        double* q = take + (size_t)f * m->nq;
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        q[0] = 0.01 * f; /* the root walks along x */
        q[2] = 0.02 * f;
        mn_quat r = mn_quat_axis_angle(mn_v3(0, 1, 0), 0.01 * f);
        q[3] = r.w, q[4] = r.x, q[5] = r.y, q[6] = r.z;
        for (int j = 1; j < m->njoint; j++) {
            if (m->jnt_type[j] != MN_JOINT_HINGE) continue;
            double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
            /* inside the limits, away from the middle angle's gimbal lock */
            double t = 0.2 + 0.6 * rand() / (double)RAND_MAX;
            double v = lo + t * (hi - lo);
            q[m->jnt_qadr[j]] = fmax(-1.2, fmin(1.2, v));
        }
    }
    mn_retarget_options o = mn_retarget_options_default();
    o.cleanup = 0;
    mn_retarget* rt = mn_retarget_create(m, m, NULL, &o, &err);
    CHECK(rt != NULL);
    if (rt && mn_retarget_set_take(rt, take, n, 1.0 / 30, &err) == MN_OK) {
        double* q = malloc(sizeof(double) * (size_t)m->nq);
        double worst = 0;
        for (int f = 0; f < n; f++) {
            CHECK(mn_retarget_frame(rt, f, MN_RETARGET_MAPPED, q) == MN_OK);
            const double* want = take + (size_t)f * m->nq;
            for (int j = 1; j < m->njoint; j++)
                if (m->jnt_type[j] == MN_JOINT_HINGE)
                    worst = fmax(worst, fabs(q[m->jnt_qadr[j]] - want[m->jnt_qadr[j]]));
            /* the root turns as the source's */
            mn_quat a = mn_q4(q[3], q[4], q[5], q[6]),
                    b = mn_q4(want[3], want[4], want[5], want[6]);
            CHECK(mn_quat_angle_between(a, b) < 1e-9);
        }
        CHECK(worst < 1e-9);
        mn_retarget_info info;
        mn_retarget_get_info(rt, &info);
        CHECK_NEAR(info.scale, 1.0, 1e-12);
        free(q);
    }
    mn_retarget_destroy(rt);
    free(take);
    mn_model_destroy(m);
}

/* Frame 0 of the CMU walk is a T-pose; the stick figure rests with its arms down. The
 * aligned mapping raises its arms to the horizontal; a naive copy of the (near zero) joint
 * angles leaves them hanging. */
static void test_tpose_alignment(void) {
    mn_motion mo = {0};
    mn_model* S = read_bvh(WALK, &mo);
    mn_error err;
    mn_model* T = mn_stickman_model(&err);
    CHECK(S && T);
    if (!S || !T) return;
    mn_retarget_options o = mn_retarget_options_default();
    o.cleanup = 0;
    mn_retarget* rt = mn_retarget_create(S, T, NULL, &o, &err);
    CHECK(rt && mn_retarget_set_take(rt, mo.q, 1, mo.frame_time, &err) == MN_OK);
    mn_data* d = mn_data_create(T, 0);
    double* q = malloc(sizeof(double) * (size_t)T->nq);
    int la = mn_model_find_joint(T, "left arm"), le = mn_model_find_joint(T, "left elbow");
    int ra = mn_model_find_joint(T, "right arm"), re = mn_model_find_joint(T, "right elbow");
    for (int mode = 0; mode < 2; mode++) {
        CHECK(mn_retarget_frame(rt, 0, (mn_retarget_mode)mode, q) == MN_OK);
        memcpy(d->q, q, sizeof(double) * (size_t)T->nq);
        mn_fk(T, d);
        mn_vec3 l = mn_vec3_normalize(mn_vec3_sub(d->xf[le].p, d->xf[la].p));
        mn_vec3 r = mn_vec3_normalize(mn_vec3_sub(d->xf[re].p, d->xf[ra].p));
        if (mode == MN_RETARGET_MAPPED) {
            CHECK(l.x > 0.95); /* the left arm points left (+x), level */
            CHECK(r.x < -0.95);
        } else {
            CHECK(l.y < -0.9); /* still hanging down */
            CHECK(r.y < -0.9);
        }
    }
    free(q);
    mn_data_destroy(d);
    mn_retarget_destroy(rt);
    /* and the other way: the stick figure at rest (arms down) onto the CMU skeleton, whose
     * rest is a T-pose, lowers its arms */
    rt = mn_retarget_create(T, S, NULL, &o, &err);
    CHECK(rt && mn_retarget_set_take(rt, T->q0, 1, 0.01, &err) == MN_OK);
    q = malloc(sizeof(double) * (size_t)S->nq);
    d = mn_data_create(S, 0);
    CHECK(mn_retarget_frame(rt, 0, MN_RETARGET_MAPPED, q) == MN_OK);
    memcpy(d->q, q, sizeof(double) * (size_t)S->nq);
    mn_fk(S, d);
    la = mn_model_find_joint(S, "LeftArm"), le = mn_model_find_joint(S, "LeftForeArm");
    ra = mn_model_find_joint(S, "RightArm"), re = mn_model_find_joint(S, "RightForeArm");
    mn_vec3 l = mn_vec3_normalize(mn_vec3_sub(d->xf[le].p, d->xf[la].p));
    mn_vec3 r = mn_vec3_normalize(mn_vec3_sub(d->xf[re].p, d->xf[ra].p));
    CHECK(l.y < -0.95 && r.y < -0.95);
    free(q);
    mn_data_destroy(d);
    mn_retarget_destroy(rt);
    mn_motion_free(&mo);
    mn_model_destroy(S);
    mn_model_destroy(T);
}

/* The largest change of one hinge between neighbouring frames (a flip of an Euler branch
 * shows as a jump of about pi). From frame 2: frame 0 of the CMU takes is an added T-pose
 * that the source itself jumps from. */
static double max_hinge_step(const mn_model* m, const double* q, int n) {
    double worst = 0;
    for (int f = 2; f < n; f++)
        for (int j = 0; j < m->njoint; j++)
            if (m->jnt_type[j] == MN_JOINT_HINGE) {
                int a = m->jnt_qadr[j];
                worst =
                    fmax(worst, fabs(q[(size_t)f * m->nq + a] - q[(size_t)(f - 1) * m->nq + a]));
            }
    return worst;
}

typedef struct walk_result {
    mn_retarget_metrics naive, clean;
    double naive_step, clean_step;
    int contacts[2], unmet, finite;
    long allocs;
} walk_result;

static int run_walk(const char* src_path, const char* dst_path, walk_result* w) {
    memset(w, 0, sizeof *w);
    mn_motion mo = {0};
    mn_model* S = read_bvh(src_path, &mo);
    mn_error err;
    mn_model* T = NULL;
    if (mn_figure_read(dst_path, &T, NULL, NULL, &err) != MN_OK) T = NULL;
    if (!S || !T) {
        mn_motion_free(&mo);
        mn_model_destroy(S);
        return 0;
    }
    mn_retarget* rt = mn_retarget_create(S, T, NULL, NULL, &err);
    int ok = rt && mn_retarget_set_take(rt, mo.q, mo.nframes, mo.frame_time, &err) == MN_OK;
    if (!ok) fprintf(stderr, "%s\n", err.message);
    size_t n = (size_t)mo.nframes * T->nq;
    double* qn = malloc(n * sizeof(double));
    double* qc = malloc(n * sizeof(double));
    if (ok) {
        long a0 = mn_alloc_count();
        for (int f = 0; f < mo.nframes; f++)
            mn_retarget_frame(rt, f, MN_RETARGET_NAIVE, qn + (size_t)f * T->nq);
        for (int f = 0; f < mo.nframes; f++)
            if (mn_retarget_frame(rt, f, MN_RETARGET_MAPPED, qc + (size_t)f * T->nq) != MN_OK)
                w->unmet++;
        mn_retarget_measure(rt, qn, mo.nframes, &w->naive);
        mn_retarget_measure(rt, qc, mo.nframes, &w->clean);
        w->allocs = mn_alloc_count() - a0;
        w->finite = 1;
        for (size_t i = 0; i < n; i++)
            if (!isfinite(qc[i]) || !isfinite(qn[i])) w->finite = 0;
        w->naive_step = max_hinge_step(T, qn, mo.nframes);
        w->clean_step = max_hinge_step(T, qc, mo.nframes);
        mn_retarget_info info;
        mn_retarget_get_info(rt, &info);
        w->contacts[0] = info.contacts[0];
        w->contacts[1] = info.contacts[1];
    }
    free(qn);
    free(qc);
    mn_retarget_destroy(rt);
    mn_motion_free(&mo);
    mn_model_destroy(S);
    mn_model_destroy(T);
    return ok;
}

static void print_walk(const char* name, const walk_result* w) {
    printf("  %s: contacts %d+%d; skate max naive %.1f mm, cleaned %.3f mm; foot error max "
           "naive %.1f, cleaned %.3f mm; hand error max naive %.1f, cleaned %.3f mm; limit "
           "violations naive %ld, cleaned %ld\n",
           name, w->contacts[0], w->contacts[1], w->naive.skate_max_mm, w->clean.skate_max_mm,
           w->naive.foot_err_max_mm, w->clean.foot_err_max_mm, w->naive.hand_err_max_mm,
           w->clean.hand_err_max_mm, w->naive.limit_violations, w->clean.limit_violations);
}

/* The goal of the issue: the CMU walk onto the stick figure skates at most 5 mm per
 * contact with the clean-up, where the naive copy skates by more; hands and feet follow;
 * no joint limit is violated; no allocation per frame. */
static void test_walk_onto_stickman(void) {
    walk_result w;
    CHECK(run_walk(WALK, "stickman", &w));
    print_walk("CMU walk -> stick figure", &w);
    /* the subject takes about three steps with each foot */
    CHECK(w.contacts[0] >= 2 && w.contacts[1] >= 2);
    CHECK(w.clean.contacts == w.contacts[0] + w.contacts[1]);
    CHECK(w.clean.skate_max_mm <= 5.0);
    CHECK(w.naive.skate_max_mm > 5.0 && w.naive.skate_max_mm > 10 * w.clean.skate_max_mm);
    CHECK(w.clean.foot_err_max_mm <= 1.0);
    CHECK(w.clean.hand_err_max_mm <= 10.0);
    CHECK(w.naive.hand_err_max_mm > 100.0);
    CHECK(w.clean.limit_violations == 0);
    CHECK(w.naive.limit_violations > 0);
    CHECK(w.unmet == 0);
    CHECK(w.finite);
    /* continuous: no Euler branch flips (120 frames a second) */
    CHECK(w.clean_step < 0.3);
    CHECK(w.allocs == 0);
}

static void test_other_rigs(void) {
    walk_result w;
    CHECK(run_walk(WALK_3DSMAX, "stickman", &w));
    print_walk("CMU 3ds Max walk -> stick figure", &w);
    CHECK(w.clean.skate_max_mm <= 5.0 && w.naive.skate_max_mm > 5.0);
    CHECK(w.clean.limit_violations == 0 && w.finite && w.allocs == 0);
    CHECK(w.clean.foot_err_max_mm <= 1.0);

    CHECK(run_walk(WALK, CESIUM, &w));
    print_walk("CMU walk -> CesiumMan (glTF)", &w);
    CHECK(w.clean.skate_max_mm <= 5.0 && w.naive.skate_max_mm > 5.0);
    CHECK(w.clean.foot_err_max_mm <= 1.0 && w.clean.hand_err_max_mm <= 10.0);
    CHECK(w.finite && w.allocs == 0);

    /* onto another BVH rig, in centimetres: the figures are thousandths of a centimetre,
     * and 5 mm is 500 of them */
    CHECK(run_walk(WALK, BOXING, &w));
    print_walk("CMU walk -> Biovision rig (figures in 1e-3 cm)", &w);
    CHECK(w.clean.skate_max_mm <= 500);
    CHECK(w.naive.skate_max_mm > 10 * w.clean.skate_max_mm);
    CHECK(w.finite && w.allocs == 0);
}

/* The heel contacts found on the CMU walk are stances: while one lasts the source ankle moves
 * little (scaled to the stick figure, under 5 cm of horizontal travel: the heel rolls), and
 * between two contacts of one foot it swings through a step (over 50 cm). */
static void test_contacts_are_stances(void) {
    mn_motion mo = {0};
    mn_model* S = read_bvh(WALK, &mo);
    mn_error err;
    mn_model* T = mn_stickman_model(&err);
    CHECK(S && T);
    if (!S || !T) return;
    mn_retarget* rt = mn_retarget_create(S, T, NULL, NULL, &err);
    CHECK(rt && mn_retarget_set_take(rt, mo.q, mo.nframes, mo.frame_time, &err) == MN_OK);
    mn_retarget_info info;
    mn_retarget_get_info(rt, &info);
    mn_data* d = mn_data_create(S, 0);
    int ank[2] = {mn_model_find_joint(S, "LeftFoot"), mn_model_find_joint(S, "RightFoot")};
    mn_vec3 start[2], last_end[2];
    int have_end[2] = {0, 0}, stances = 0, swings = 0;
    double worst_stance = 0, least_swing = INFINITY;
    for (int f = 0; f < mo.nframes; f++) {
        memcpy(d->q, mo.q + (size_t)f * S->nq, sizeof(double) * (size_t)S->nq);
        mn_fk(S, d);
        for (int k = 0; k < 2; k++) {
            mn_vec3 p = d->xf[ank[k]].p;
            p.y = 0; /* horizontal: the CMU rig is y-up */
            int c = mn_retarget_contact(rt, k, f) & MN_CONTACT_HOLD,
                cp = f > 0 && (mn_retarget_contact(rt, k, f - 1) & MN_CONTACT_HOLD);
            if (c && !cp) {
                start[k] = p;
                if (have_end[k]) {
                    least_swing = fmin(least_swing, info.scale * mn_vec3_dist(p, last_end[k]));
                    swings++;
                }
            }
            if (c) worst_stance = fmax(worst_stance, info.scale * mn_vec3_dist(p, start[k]));
            if (!c && cp) {
                last_end[k] = p;
                have_end[k] = 1;
                stances++;
            }
        }
    }
    CHECK(stances >= 4 && swings >= 2);
    CHECK(worst_stance < 0.05);
    CHECK(least_swing > 0.5);
    printf("  stances %d, largest stance travel %.1f mm, shortest swing %.0f mm\n", stances,
           worst_stance * 1000, least_swing * 1000);
    mn_data_destroy(d);
    mn_retarget_destroy(rt);
    mn_motion_free(&mo);
    mn_model_destroy(S);
    mn_model_destroy(T);
}

/* What is written is what was measured: the cleaned walk written as BVH and read back puts
 * the stick figure's ankles and wrists where the states put them (to the file's printed
 * precision), and its feet do not slide during the contacts. */
static void test_written_take(void) {
    mn_motion mo = {0};
    mn_model* S = read_bvh(WALK, &mo);
    mn_error err;
    mn_model* T = mn_stickman_model(&err);
    CHECK(S && T);
    if (!S || !T) return;
    mn_retarget* rt = mn_retarget_create(S, T, NULL, NULL, &err);
    CHECK(rt && mn_retarget_set_take(rt, mo.q, mo.nframes, mo.frame_time, &err) == MN_OK);
    double* q = malloc(sizeof(double) * (size_t)mo.nframes * (size_t)T->nq);
    for (int f = 0; f < mo.nframes; f++)
        mn_retarget_frame(rt, f, MN_RETARGET_MAPPED, q + (size_t)f * T->nq);
    char path[512];
    snprintf(path, sizeof path, "%s", mn_test_write_temp(".bvh", "", 0));
    mn_motion out = {mo.nframes, T->nq, mo.frame_time, q};
    CHECK(mn_bvh_write(path, T, &out, &err) == MN_OK);
    mn_model* B = NULL;
    mn_motion bm = {0};
    mn_bvh_options bo = mn_bvh_default();
    bo.names_of = T; /* "left_foot" in the file is the figure's "left foot" */
    CHECK(mn_bvh_read(path, &bo, &B, &bm, NULL, &err) == MN_OK);
    remove(path);
    if (B && bm.nframes == mo.nframes) {
        static const char* names[4] = {"left foot", "right foot", "left hand", "right hand"};
        int jt[4], jb[4];
        for (int k = 0; k < 4; k++) {
            jt[k] = mn_model_find_joint(T, names[k]);
            jb[k] = mn_model_find_joint(B, names[k]);
            CHECK(jb[k] >= 0);
        }
        mn_data *dt = mn_data_create(T, 0), *db = mn_data_create(B, 0);
        double worst = 0, slide[2] = {0, 0}, worst_slide = 0;
        mn_vec3 last[2] = {{0, 0, 0}, {0, 0, 0}};
        for (int f = 0; f < mo.nframes && jb[0] >= 0 && jb[1] >= 0 && jb[2] >= 0 && jb[3] >= 0;
             f++) {
            memcpy(dt->q, q + (size_t)f * T->nq, sizeof(double) * (size_t)T->nq);
            memcpy(db->q, bm.q + (size_t)f * B->nq, sizeof(double) * (size_t)B->nq);
            mn_fk(T, dt);
            mn_fk(B, db);
            for (int k = 0; k < 4; k++)
                worst = fmax(worst, mn_vec3_dist(dt->xf[jt[k]].p, db->xf[jb[k]].p));
            for (int k = 0; k < 2; k++) {
                mn_vec3 p = db->xf[jb[k]].p;
                p.y = 0;
                int c = mn_retarget_contact(rt, k, f) & MN_CONTACT_HOLD,
                    cp = f > 0 && (mn_retarget_contact(rt, k, f - 1) & MN_CONTACT_HOLD);
                if (c && !cp) slide[k] = 0;
                if (c && cp) slide[k] += mn_vec3_dist(p, last[k]);
                worst_slide = fmax(worst_slide, slide[k]);
                last[k] = p;
            }
        }
        CHECK(worst < 1e-4);
        CHECK(worst_slide < 0.005);
        printf("  read back: joints within %.2g m of the states; feet slide at most %.3f mm in a "
               "contact\n",
               worst, worst_slide * 1000);
        mn_data_destroy(dt);
        mn_data_destroy(db);
    } else {
        CHECK(0);
    }
    mn_motion_free(&bm);
    mn_model_destroy(B);
    free(q);
    mn_retarget_destroy(rt);
    mn_motion_free(&mo);
    mn_model_destroy(S);
    mn_model_destroy(T);
}

/* The Daz table: the Biovision boxing rig renamed the Daz way (hip, abdomen, chest, lShldr,
 * ...) is recognised as such, and the CMU walk retargets onto it without skate. */
static void test_daz_names(void) {
    static const char* ren[][2] = {{"Hips", "hip"},
                                   {"Ab", "abdomen"},
                                   {"Chest", "chest"},
                                   {"Neck", "neck"},
                                   {"Head", "head"},
                                   {"LeftCollar", "lCollar"},
                                   {"LeftShoulder", "lShldr"},
                                   {"LeftElbow", "lForeArm"},
                                   {"LeftWrist", "lHand"},
                                   {"RightCollar", "rCollar"},
                                   {"RightShoulder", "rShldr"},
                                   {"RightElbow", "rForeArm"},
                                   {"RightWrist", "rHand"},
                                   {"LeftHip", "lThigh"},
                                   {"LeftKnee", "lShin"},
                                   {"LeftAnkle", "lFoot"},
                                   {"LeftToes", "lToe"},
                                   {"RightHip", "rThigh"},
                                   {"RightKnee", "rShin"},
                                   {"RightAnkle", "rFoot"},
                                   {"RightToes", "rToe"}};
    mn_motion bm = {0}, mo = {0};
    mn_model* B = read_bvh(BOXING, &bm);
    mn_model* S = read_bvh(WALK, &mo);
    CHECK(B && S);
    if (!B || !S) return;
    mn_spec* spec = mn_model_decompile(B);
    mn_error err;
    for (size_t i = 0; i < sizeof ren / sizeof ren[0]; i++)
        CHECK(mn_spec_rename(spec, mn_spec_find(spec, ren[i][0]), ren[i][1], &err) == MN_OK);
    mn_model* D = mn_model_compile(spec, &err);
    mn_spec_destroy(spec);
    const char* rig = D ? mn_rig_name(mn_rig_detect(D)) : NULL;
    CHECK(rig && !strcmp(rig, "daz"));
    mn_retarget* rt = D ? mn_retarget_create(S, D, NULL, NULL, &err) : NULL;
    CHECK(rt && mn_retarget_set_take(rt, mo.q, mo.nframes, mo.frame_time, &err) == MN_OK);
    if (rt) {
        double* q = malloc(sizeof(double) * (size_t)mo.nframes * (size_t)D->nq);
        for (int f = 0; f < mo.nframes; f++)
            mn_retarget_frame(rt, f, MN_RETARGET_MAPPED, q + (size_t)f * D->nq);
        mn_retarget_metrics m;
        CHECK(mn_retarget_measure(rt, q, mo.nframes, &m) == MN_OK);
        mn_retarget_info info;
        mn_retarget_get_info(rt, &info);
        CHECK(info.mapped_roles == MN_ROLE_COUNT);
        CHECK(m.contacts >= 4 && m.skate_max_mm <= 500); /* centimetres: 5 mm */
        free(q);
    }
    mn_retarget_destroy(rt);
    mn_model_destroy(D);
    mn_motion_free(&bm);
    mn_motion_free(&mo);
    mn_model_destroy(B);
    mn_model_destroy(S);
}

/* Heel and toe apart: on the CMU walk each stance is a roll, the heel down first (alone, or
 * on the same frame as the toe when the foot lands flat) and the toe up last, and in the
 * middle both are down. The same take at a quarter of the frame rate
 * (30 Hz, as the Bandai Namco takes) finds the same contacts, frame for frame within one
 * frame of the slower rate at each end, and the figure scaled tenfold exactly the same:
 * thresholds are in leg lengths and seconds. */
static void contact_runs(const char* path, int step, double scale, unsigned char* out[2],
                         int* nout) {
    mn_motion mo = {0};
    mn_model* S = NULL;
    mn_error err;
    mn_bvh_options bo = mn_bvh_default();
    bo.scale = scale;
    if (mn_bvh_read(path, &bo, &S, &mo, NULL, &err) != MN_OK) S = NULL;
    mn_model* T = mn_stickman_model(&err);
    int n = (mo.nframes + step - 1) / step;
    double* q = malloc(sizeof(double) * (size_t)n * (size_t)(S ? S->nq : 1));
    for (int f = 0; S && f < n; f++)
        memcpy(q + (size_t)f * S->nq, mo.q + (size_t)f * step * S->nq, sizeof(double) * S->nq);
    mn_retarget* rt = S && T ? mn_retarget_create(S, T, NULL, NULL, &err) : NULL;
    CHECK(rt && mn_retarget_set_take(rt, q, n, mo.frame_time * step, &err) == MN_OK);
    for (int k = 0; k < 2; k++) {
        out[k] = calloc((size_t)n, 1);
        for (int f = 0; rt && f < n; f++)
            out[k][f] = (unsigned char)mn_retarget_contact(rt, k, f);
    }
    *nout = n;
    free(q);
    mn_retarget_destroy(rt);
    mn_motion_free(&mo);
    mn_model_destroy(S);
    mn_model_destroy(T);
}

static void test_heel_then_toe(void) {
    unsigned char *c[2], *c4[2];
    int n, n4;
    contact_runs(WALK, 1, 1, c, &n);
    contact_runs(WALK, 4, 1, c4, &n4);
    /* the same figure ten times larger (or in other units): the same contacts, frame for
     * frame */
    unsigned char* c10[2];
    int n10;
    contact_runs(WALK, 1, 10, c10, &n10);
    CHECK(n10 == n);
    for (int k = 0; k < 2; k++) {
        CHECK(n10 == n && !memcmp(c10[k], c[k], (size_t)n));
        free(c10[k]);
    }
    int stances = 0, rolls = 0, heel_first = 0, flat = 0, agree = 0, frames = 0;
    for (int k = 0; k < 2; k++) {
        for (int f = 0; f < n;) {
            if (!(c[k][f] & MN_CONTACT_FOOT)) {
                f++;
                continue;
            }
            int g = f, both = 0;
            while (g < n && (c[k][g] & MN_CONTACT_FOOT))
                both += (c[k][g++] & MN_CONTACT_FOOT) == MN_CONTACT_FOOT;
            /* a stance inside the take: the heel lands first and the toe leaves last */
            if (f > 0 && g < n) {
                stances++;
                rolls += (c[k][f] & MN_CONTACT_HEEL) && (c[k][g - 1] & MN_CONTACT_TOE) &&
                         !(c[k][g - 1] & MN_CONTACT_HEEL);
                heel_first += (c[k][f] & MN_CONTACT_FOOT) == MN_CONTACT_HEEL;
                flat += both > 0;
            }
            f = g;
        }
        /* 30 Hz against 120 Hz: frame 4i of the fast take against frame i of the slow one,
         * away from the edges of a contact (one slow frame) */
        for (int i = 1; i + 1 < n4 && 4 * i + 4 < n; i++) {
            int a = c[k][4 * i - 4] & MN_CONTACT_ANY, b = c[k][4 * i] & MN_CONTACT_ANY,
                d = c[k][4 * i + 4] & MN_CONTACT_ANY;
            if (a != b || b != d) continue;
            frames++;
            agree += (c4[k][i] & MN_CONTACT_ANY) == b;
        }
    }
    printf("  %d stances, %d roll heel then toe (%d with the heel alone first), %d with both "
           "down; 30 Hz agrees on %d of %d frames\n",
           stances, rolls, heel_first, flat, agree, frames);
    CHECK(stances >= 4);
    CHECK(rolls == stances && 2 * heel_first >= stances);
    CHECK(flat == stances);
    CHECK(frames > n / 8 && agree == frames);
    for (int k = 0; k < 2; k++) {
        free(c[k]);
        free(c4[k]);
    }
}

/* ---- every planted interval, checked independently -------------------------------------
 * The issue's own definition, coded here apart from the library's detector: a foot is
 * planted while its ankle is within 15 % of the leg length of its lowest height over the
 * take and moves slower than 25 % of the leg length per second (a central difference over
 * the neighbouring frames), for at least three frames. Over every such interval in which
 * the source ankle travels less than 20 mm (scaled onto the target), the target's ankle
 * must travel at most 5 mm (horizontal path lengths; and read with 3-D speeds and paths, the
 * same holds). Those are lengths on the stick
 * figure; on another target they scale with its leg length (CesiumMan's legs are shorter,
 * so it is held to less; the Fox's figure is some 40 times larger). */

#define TAKE_0101 MN_DATA "/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh"
#define TAKE_13103 MN_DATA "/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh"
#define FOX MN_DATA "/skinned/Fox.glb"

/* The principal axis along which the hips sit above the ankles at rest. */
static mn_vec3 rest_up(const mn_model* m, int hips, int ankle) {
    mn_data* d = mn_data_create(m, 0);
    mn_data_reset(m, d);
    mn_fk(m, d);
    mn_vec3 v = mn_vec3_sub(d->xf[hips].p, d->xf[ankle].p);
    mn_data_destroy(d);
    double a[3] = {fabs(v.x), fabs(v.y), fabs(v.z)};
    int k = a[0] >= a[1] && a[0] >= a[2] ? 0 : a[1] >= a[2] ? 1 : 2;
    double s = (k == 0 ? v.x : k == 1 ? v.y : v.z) > 0 ? 1 : -1;
    return mn_v3(k == 0 ? s : 0, k == 1 ? s : 0, k == 2 ? s : 0);
}

static double rest_leg(const mn_model* m, int thigh, int shin, int ankle) {
    mn_data* d = mn_data_create(m, 0);
    mn_data_reset(m, d);
    mn_fk(m, d);
    double l =
        mn_vec3_dist(d->xf[thigh].p, d->xf[shin].p) + mn_vec3_dist(d->xf[shin].p, d->xf[ankle].p);
    mn_data_destroy(d);
    return l;
}

/* World positions of joint j over a take (nframes x m->nq states). */
static mn_vec3* joint_path(const mn_model* m, const double* q, int nframes, int j) {
    mn_vec3* p = malloc(sizeof(mn_vec3) * (size_t)nframes);
    mn_data* d = mn_data_create(m, 0);
    for (int f = 0; f < nframes; f++) {
        memcpy(d->q, q + (size_t)f * m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        p[f] = d->xf[j].p;
    }
    mn_data_destroy(d);
    return p;
}

/* Horizontal distance (whole: the 3-D distance, for the second reading of the check). */
static int whole;
static double hdist(mn_vec3 a, mn_vec3 b, mn_vec3 up) {
    mn_vec3 v = mn_vec3_sub(a, b);
    return whole ? mn_vec3_norm(v) : mn_vec3_norm(mn_vec3_madd(v, -mn_vec3_dot(v, up), up));
}

typedef struct planted_result {
    int intervals, still; /* planted intervals; those where the source moves < 20 mm */
    double worst_mm;      /* largest target travel over a still interval */
    double worst_src_mm;  /* the source's travel over that interval */
    int worst_foot, worst_from, worst_to;
} planted_result;

/* The independent check of one foot: src and dst ankle paths, leg length and up of the
 * source; scale takes source lengths onto the target's (mm: 1000 per target unit). */
static void check_planted(const mn_vec3* src, const mn_vec3* dst, int n, double dt, double leg,
                          mn_vec3 up_s, mn_vec3 up_t, double scale, double unit_mm, int foot,
                          planted_result* r) {
    /* unit_mm: millimetres of the stick figure per unit of the target */
    double lo = INFINITY;
    for (int f = 0; f < n; f++)
        lo = fmin(lo, mn_vec3_dot(up_s, src[f]));
    int run = 0;
    for (int f = 0; f <= n; f++) {
        int planted = 0;
        if (f < n) {
            int a = f > 0 ? f - 1 : f, b = f < n - 1 ? f + 1 : f;
            double v = b > a ? hdist(src[b], src[a], up_s) / ((b - a) * dt) : 0;
            planted = mn_vec3_dot(up_s, src[f]) - lo <= 0.15 * leg && v < 0.25 * leg;
        }
        if (planted) {
            run++;
            continue;
        }
        if (run >= 3) {
            double ps = 0, pt = 0;
            for (int g = f - run + 1; g < f; g++) {
                ps += hdist(src[g], src[g - 1], up_s) * scale * unit_mm;
                pt += hdist(dst[g], dst[g - 1], up_t) * unit_mm;
            }
            r->intervals++;
            if (ps < 20) {
                r->still++;
                if (pt > r->worst_mm) {
                    r->worst_mm = pt;
                    r->worst_src_mm = ps;
                    r->worst_foot = foot;
                    r->worst_from = f - run;
                    r->worst_to = f - 1;
                }
            }
        }
        run = 0;
    }
}

/* One take onto one target, cleaned up, checked on both feet. */
/* r[0]: horizontal, r[1]: 3-D. */
static int planted_take(const char* src_path, const char* dst_path, double stick_leg,
                        planted_result r[2]) {
    memset(r, 0, 2 * sizeof *r);
    mn_motion mo = {0};
    mn_model *S = NULL, *T = NULL;
    mn_error err;
    int ok = mn_figure_read(src_path, &S, &mo, NULL, &err) == MN_OK &&
             mn_figure_read(dst_path, &T, NULL, NULL, &err) == MN_OK;
    mn_retarget_map map;
    ok = ok && mn_retarget_map_detect(S, T, &map, &err) == MN_OK;
    mn_retarget* rt = ok ? mn_retarget_create(S, T, &map, NULL, &err) : NULL;
    ok = rt && mn_retarget_set_take(rt, mo.q, mo.nframes, mo.frame_time, &err) == MN_OK;
    if (!ok) fprintf(stderr, "%s -> %s: %s\n", src_path, dst_path, err.message);
    double* q = ok ? malloc(sizeof(double) * (size_t)mo.nframes * (size_t)T->nq) : NULL;
    if (q) {
        for (int f = 0; f < mo.nframes; f++)
            mn_retarget_frame(rt, f, MN_RETARGET_MAPPED, q + (size_t)f * T->nq);
        int hs = mn_model_find_joint(S, map.source[MN_ROLE_HIPS]);
        int ht = mn_model_find_joint(T, map.target[MN_ROLE_HIPS]);
        for (int k = 0; k < 2; k++) {
            int th = k ? MN_ROLE_R_THIGH : MN_ROLE_L_THIGH;
            int sj[3], tj[3];
            for (int i = 0; i < 3; i++) {
                sj[i] = mn_model_find_joint(S, map.source[th + i]);
                tj[i] = mn_model_find_joint(T, map.target[th + i]);
            }
            double leg = rest_leg(S, sj[0], sj[1], sj[2]);
            double scale = rest_leg(T, tj[0], tj[1], tj[2]) / leg;
            mn_vec3* ps = joint_path(S, mo.q, mo.nframes, sj[2]);
            mn_vec3* pt = joint_path(T, q, mo.nframes, tj[2]);
            for (whole = 0; whole < 2; whole++)
                check_planted(ps, pt, mo.nframes, mo.frame_time, leg, rest_up(S, hs, sj[2]),
                              rest_up(T, ht, tj[2]), scale, 1000 * stick_leg / (scale * leg), k,
                              &r[whole]);
            whole = 0;
            free(ps);
            free(pt);
        }
    }
    free(q);
    mn_retarget_destroy(rt);
    mn_motion_free(&mo);
    mn_model_destroy(S);
    mn_model_destroy(T);
    return ok;
}

static void test_planted_every_take(void) {
    static const char* takes[] = {WALK, TAKE_0101, WALK_3DSMAX, TAKE_13103};
    static const char* targets[] = {"stickman", CESIUM, FOX};
    mn_error err;
    mn_model* stick = mn_stickman_model(&err);
    double stick_leg =
        rest_leg(stick, mn_model_find_joint(stick, "left leg"),
                 mn_model_find_joint(stick, "left knee"), mn_model_find_joint(stick, "left foot"));
    mn_model_destroy(stick);
    for (size_t i = 0; i < sizeof takes / sizeof takes[0]; i++)
        for (size_t j = 0; j < sizeof targets / sizeof targets[0]; j++) {
            planted_result rr[2];
            CHECK(planted_take(takes[i], targets[j], stick_leg, rr));
            const char* a = strrchr(takes[i], '/');
            const char* b = strrchr(targets[j], '/');
            for (int w = 0; w < 2; w++) {
                const planted_result* r = &rr[w];
                printf("  %s -> %s (%s): %d planted intervals, %d still; worst slide %.2f mm "
                       "(source %.2f mm, %s foot, frames %d-%d; mm of the stick figure)\n",
                       a ? a + 1 : takes[i], b ? b + 1 : targets[j], w ? "3-D" : "horizontal",
                       r->intervals, r->still, r->worst_mm, r->worst_src_mm,
                       r->worst_foot ? "right" : "left", r->worst_from, r->worst_to);
                CHECK(r->still > 0);
                CHECK(r->worst_mm <= 5.0);
            }
        }
}

/* A shipped rig with its joints renamed (pairs old, new), detected as rig, and the CMU walk
 * retargeted onto it with its feet held (figures of the renamed rig's unit). */
static void renamed_rig(const char* path, const char* const (*ren)[2], size_t nren,
                        const char* rig_want, double skate_max) {
    mn_motion mo = {0};
    mn_model* B = NULL;
    mn_error err;
    CHECK(mn_figure_read(path, &B, NULL, NULL, &err) == MN_OK);
    mn_model* S = read_bvh(WALK, &mo);
    if (!B || !S) return;
    mn_spec* spec = mn_model_decompile(B);
    for (size_t i = 0; i < nren; i++)
        CHECK(mn_spec_rename(spec, mn_spec_find(spec, ren[i][0]), ren[i][1], &err) == MN_OK);
    mn_model* D = mn_model_compile(spec, &err);
    mn_spec_destroy(spec);
    const char* rig = D ? mn_rig_name(mn_rig_detect(D)) : NULL;
    CHECK(rig && !strcmp(rig, rig_want));
    mn_retarget_map map;
    CHECK(D && mn_retarget_map_detect(S, D, &map, &err) == MN_OK);
    /* the map holds the joints' own names, namespace and all (ren[0]: the left thigh) */
    CHECK(!strcmp(map.target[MN_ROLE_L_THIGH], ren[0][1]));
    mn_retarget* rt = D ? mn_retarget_create(S, D, NULL, NULL, &err) : NULL;
    CHECK(rt && mn_retarget_set_take(rt, mo.q, mo.nframes, mo.frame_time, &err) == MN_OK);
    if (rt) {
        double* q = malloc(sizeof(double) * (size_t)mo.nframes * (size_t)D->nq);
        for (int f = 0; f < mo.nframes; f++)
            mn_retarget_frame(rt, f, MN_RETARGET_MAPPED, q + (size_t)f * D->nq);
        mn_retarget_metrics m;
        CHECK(mn_retarget_measure(rt, q, mo.nframes, &m) == MN_OK);
        mn_retarget_info info;
        mn_retarget_get_info(rt, &info);
        printf("  %s: %d roles, skate %.3f, planted skate %.3f (thousandths of its unit)\n",
               rig_want, info.mapped_roles, m.skate_max_mm, m.planted_skate_max_mm);
        CHECK(info.mapped_roles >= 19);
        CHECK(m.contacts >= 4 && m.skate_max_mm <= skate_max &&
              m.planted_skate_max_mm <= skate_max);
        free(q);
    }
    mn_retarget_destroy(rt);
    mn_model_destroy(D);
    mn_motion_free(&mo);
    mn_model_destroy(B);
    mn_model_destroy(S);
}

/* Mixamo names ("mixamorig:" namespace) on the CMU MotionBuilder rig, Bandai Namco names on
 * the Biovision boxing rig: each is recognised by its own table without a map file. */
static void test_mixamo_bandai_names(void) {
    static const char* const mixamo[][2] = {
        {"LeftUpLeg", "mixamorig:LeftUpLeg"},   {"Hips", "mixamorig:Hips"},
        {"LowerBack", "mixamorig:Spine"},       {"Spine", "mixamorig:Spine1"},
        {"Spine1", "mixamorig:Spine2"},         {"Neck", "mixamorig:Neck"},
        {"HeadMesh", "mixamorig:Head"},         {"LeftShoulder", "mixamorig:LeftShoulder"},
        {"LeftArm", "mixamorig:LeftArm"},       {"LeftForeArm", "mixamorig:LeftForeArm"},
        {"LeftHand", "mixamorig:LeftHand"},     {"RightShoulder", "mixamorig:RightShoulder"},
        {"RightArm", "mixamorig:RightArm"},     {"RightForeArm", "mixamorig:RightForeArm"},
        {"RightHand", "mixamorig:RightHand"},   {"LeftLeg", "mixamorig:LeftLeg"},
        {"LeftFoot", "mixamorig:LeftFoot"},     {"LeftToeBase", "mixamorig:LeftToeBase"},
        {"RightUpLeg", "mixamorig:RightUpLeg"}, {"RightLeg", "mixamorig:RightLeg"},
        {"RightFoot", "mixamorig:RightFoot"},   {"RightToeBase", "mixamorig:RightToeBase"}};
    renamed_rig(WALK, mixamo, sizeof mixamo / sizeof mixamo[0], "mixamo", 5.0 / 0.0565);
    static const char* const bandai[][2] = {
        {"LeftHip", "UpperLeg_L"},     {"Ab", "Spine"},
        {"LeftCollar", "Shoulder_L"},  {"LeftShoulder", "UpperArm_L"},
        {"LeftElbow", "LowerArm_L"},   {"LeftWrist", "Hand_L"},
        {"RightCollar", "Shoulder_R"}, {"RightShoulder", "UpperArm_R"},
        {"RightElbow", "LowerArm_R"},  {"RightWrist", "Hand_R"},
        {"LeftKnee", "LowerLeg_L"},    {"LeftAnkle", "Foot_L"},
        {"LeftToes", "Toes_L"},        {"RightHip", "UpperLeg_R"},
        {"RightKnee", "LowerLeg_R"},   {"RightAnkle", "Foot_R"},
        {"RightToes", "Toes_R"}};
    renamed_rig(BOXING, bandai, sizeof bandai / sizeof bandai[0], "bandai-namco", 500);
}

static void test_bad_arguments(void) {
    mn_error err;
    mn_model* T = mn_stickman_model(&err);
    CHECK(mn_retarget_create(NULL, T, NULL, NULL, &err) == NULL && err.status == MN_ERR_ARG);
    mn_retarget_options o = mn_retarget_options_default();
    o.hand_weight = 0;
    CHECK(mn_retarget_create(T, T, NULL, &o, &err) == NULL && err.status == MN_ERR_ARG);
    o = mn_retarget_options_default();
    o.contact_speed = NAN;
    CHECK(mn_retarget_create(T, T, NULL, &o, &err) == NULL);
    /* a robot arm has no legs: no rig table, a message asking for a map */
    mn_model* arm = NULL;
    CHECK(mn_figure_read(MN_DATA "/robots/franka_panda/panda.urdf", &arm, NULL, NULL, &err) ==
          MN_OK);
    CHECK(mn_retarget_create(arm, T, NULL, NULL, &err) == NULL && err.status == MN_ERR_NOTFOUND &&
          strstr(err.message, "map"));
    mn_model_destroy(arm);
    mn_retarget* rt = mn_retarget_create(T, T, NULL, NULL, &err);
    CHECK(rt != NULL);
    double q[64];
    CHECK(mn_retarget_frame(rt, 0, MN_RETARGET_MAPPED, q) == MN_ERR_ARG); /* no take yet */
    double take[2 * 64];
    memcpy(take, T->q0, sizeof(double) * (size_t)T->nq);
    memcpy(take + T->nq, T->q0, sizeof(double) * (size_t)T->nq);
    take[T->nq + 1] = NAN;
    CHECK(mn_retarget_set_take(rt, take, 2, 0.01, &err) == MN_ERR_ARG &&
          strstr(err.message, "frame 1"));
    CHECK(mn_retarget_set_take(rt, take, 1, 0, &err) == MN_ERR_ARG);
    CHECK(mn_retarget_set_take(rt, take, 1, 0.01, &err) == MN_OK);
    CHECK(mn_retarget_frame(rt, 1, MN_RETARGET_MAPPED, q) == MN_ERR_ARG);
    CHECK(mn_retarget_frame(rt, 0, (mn_retarget_mode)7, q) == MN_ERR_ARG);
    mn_retarget_metrics mt;
    CHECK(mn_retarget_measure(rt, take, 2, &mt) == MN_ERR_ARG);
    mn_retarget_destroy(rt);
    mn_model_destroy(T);
}

static const char good_map[] = "# CMU MotionBuilder onto the stick figure\n"
                               "hips Hips pelvis\n"
                               "spine LowerBack torso   # the lumbar compound joint\n"
                               "neck Neck head\n"
                               "left_upperarm LeftArm \"left arm\"\n"
                               "left_forearm LeftForeArm \"left elbow\"\n"
                               "right_upperarm RightArm \"right arm\"\n"
                               "right_forearm RightForeArm \"right elbow\"\n"
                               "left_thigh LeftUpLeg \"left leg\"\r\n"
                               "left_shin LeftLeg \"left knee\"\n"
                               "left_foot LeftFoot \"left foot\"\n"
                               "right_thigh RightUpLeg \"right leg\"\n"
                               "right_shin RightLeg \"right knee\"\n"
                               "right_foot RightFoot \"right foot\"\n"
                               "left_toe LeftToeBase -\n";

static void test_map_file(void) {
    mn_retarget_map map;
    mn_error err;
    CHECK(mn_retarget_map_read_mem(good_map, sizeof good_map - 1, "walk.map", &map, &err) == MN_OK);
    CHECK(!strcmp(map.source[MN_ROLE_L_THIGH], "LeftUpLeg"));
    CHECK(!strcmp(map.target[MN_ROLE_L_THIGH], "left leg"));
    CHECK(map.line[MN_ROLE_L_THIGH] == 9);
    CHECK(!strcmp(map.source[MN_ROLE_L_TOE], "LeftToeBase") && map.target[MN_ROLE_L_TOE][0] == 0);
    CHECK(map.source[MN_ROLE_L_HAND][0] == 0 && map.line[MN_ROLE_L_HAND] == 0);
    /* a file on disk, used for a whole take: the same as the built-in tables without hands */
    const char* path = mn_test_write_temp(".map", good_map, sizeof good_map - 1);
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    CHECK(mn_retarget_map_read(p, &map, &err) == MN_OK && !strcmp(map.file, p));
    mn_motion mo = {0};
    mn_model* S = read_bvh(WALK, &mo);
    mn_model* T = mn_stickman_model(&err);
    mn_retarget* rt = mn_retarget_create(S, T, &map, NULL, &err);
    CHECK(rt != NULL);
    mn_retarget_info info;
    mn_retarget_get_info(rt, &info);
    CHECK(info.mapped_roles == 13 && info.rig[0] == NULL);
    mn_retarget_destroy(rt);
    remove(p);
    /* names the figures do not have: the map file, line and role */
    static const char bad_joint[] = "hips Hips pelvis\nleft_thigh LeftUpLeg \"left thigh\"\n";
    CHECK(mn_retarget_map_read_mem(bad_joint, sizeof bad_joint - 1, "b.map", &map, &err) == MN_OK);
    CHECK(mn_retarget_create(S, T, &map, NULL, &err) == NULL);
    CHECK(err.status == MN_ERR_NOTFOUND && err.line == 2 &&
          !strcmp(err.field, "left_thigh target") && strstr(err.message, "b.map:2") &&
          strstr(err.message, "left thigh"));
    /* roles out of order along a chain */
    static const char swapped[] =
        "hips Hips pelvis\nleft_thigh LeftLeg \"left leg\"\nleft_shin LeftUpLeg \"left knee\"\n"
        "right_thigh RightUpLeg \"right leg\"\nright_shin RightLeg \"right knee\"\n"
        "left_foot LeftFoot \"left foot\"\nright_foot RightFoot \"right foot\"\n";
    CHECK(mn_retarget_map_read_mem(swapped, sizeof swapped - 1, "s.map", &map, &err) == MN_OK);
    CHECK(mn_retarget_create(S, T, &map, NULL, &err) == NULL && err.line == 3 &&
          !strcmp(err.field, "left_shin source"));
    /* a missing leg */
    static const char no_foot[] = "hips Hips pelvis\nleft_thigh LeftUpLeg \"left leg\"\n";
    CHECK(mn_retarget_map_read_mem(no_foot, sizeof no_foot - 1, "f.map", &map, &err) == MN_OK);
    CHECK(mn_retarget_create(S, T, &map, NULL, &err) == NULL && strstr(err.message, "both sides"));
    mn_motion_free(&mo);
    mn_model_destroy(S);
    mn_model_destroy(T);
}

static void test_map_malformed(void) {
    static const struct {
        const char* text;
        int line;
        const char* field;
    } cases[] = {
        {"waist Hips pelvis\n", 1, "role"},
        {"# ok\nhips Hips\n", 2, "target"},
        {"hips\n", 1, "source"},
        {"hips Hips pelvis extra\n", 1, "line"},
        {"hips Hips pelvis\nhips Hips pelvis\n", 2, "hips"},
        {"hips \"Hips pelvis\n", 1, "source"},
        {"hips Hips \"pelvis\n", 1, "target"},
        {"hips \"\" pelvis\n", 1, "source"},
        {"hips Hips "
         "a_name_that_is_far_too_long_to_be_a_joint_name_of_any_figure_we_know_of_at_all\n",
         1, "target"},
        {"\"hips\" Hips pelvis\n", 1, "role"},
        {"hips Hips \"pel\x01vis\"\n", 1, "target"},
        {"left_thigh a b\nhips a\x00 b\n", 2, "text"},
        {"# nothing but a comment\n\n", 0, "map"},
        {"", 0, "map"},
    };
    static const size_t lens[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25, 0, 0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mn_retarget_map map = mn_retarget_map_default();
        strcpy(map.source[0], "untouched");
        mn_error err;
        size_t len = lens[i] ? lens[i] : strlen(cases[i].text);
        mn_status s = mn_retarget_map_read_mem(cases[i].text, len, "m.map", &map, &err);
        if (s != MN_ERR_PARSE || err.line != cases[i].line || strcmp(err.field, cases[i].field)) {
            fprintf(stderr, "case %zu: status %d line %d field '%s': %s\n", i, s, err.line,
                    err.field, err.message);
            CHECK(0);
        }
        CHECK(!strcmp(map.source[0], "untouched")); /* nothing written on error */
        CHECK(strstr(err.message, "m.map") != NULL);
    }
    mn_retarget_map map;
    mn_error err;
    CHECK(mn_retarget_map_read(MN_TEST_DATA "/no/such/file.map", &map, &err) == MN_ERR_IO);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_role_names);
    RUN(test_rig_detect);
    RUN(test_euler_branches);
    RUN(test_identity_retarget);
    RUN(test_tpose_alignment);
    RUN(test_walk_onto_stickman);
    RUN(test_other_rigs);
    RUN(test_contacts_are_stances);
    RUN(test_written_take);
    RUN(test_daz_names);
    RUN(test_mixamo_bandai_names);
    RUN(test_heel_then_toe);
    RUN(test_planted_every_take);
    RUN(test_bad_arguments);
    RUN(test_map_file);
    RUN(test_map_malformed);
    return mn_test_report();
}
