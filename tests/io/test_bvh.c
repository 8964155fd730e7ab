/* BVH reader and writer: the copied mocap files, round trips, line endings, scale,
 * unusual channel lists against an independent forward kinematics, the decimal parser
 * against strtod, and a table of malformed files. */
#include <marionette/io.h>
#include <marionette/model.h>

#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEG (MN_PI / 180.0)

typedef struct bvh_case {
    const char* path;
    int bvh_joints, end_sites, channels, frames;
    double frame_time;
    const char* root;
    double first[6];   /* first row: root position and rotation channels as written */
    const char* order; /* root rotation order */
} bvh_case;

static const bvh_case cases[] = {
    {MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh",
     31,
     7,
     96,
     344,
     0.0083333,
     "Hips",
     {10.4194, 16.7048, -30.1003, 0, 0, 0},
     "ZYX"},
    {MN_DATA "/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh",
     31,
     7,
     96,
     2752,
     0.0083333,
     "Hips",
     {9.3722, 17.8693, -17.3198, 0, 0, 0},
     "ZYX"},
    {MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh",
     31,
     7,
     96,
     994,
     0.0083333,
     "Hips",
     {5.2300, 16.9002, -33.8986, -5.4029, 9.8098, 10.4956},
     "ZYX"},
    {MN_DATA "/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh",
     31,
     7,
     96,
     1102,
     0.0083333,
     "Hips",
     {5.1723, 16.9371, -29.1264, -2.2661, 1.9474, 8.3808},
     "ZYX"},
    {MN_DATA "/mocap/other_skeleton/Boxing_Toes.bvh",
     21,
     5,
     66,
     3070,
     0.01,
     "Hips",
     {-6.101614, 91.753342, 50.165031, 1.327254, -1.993820, 179.842245},
     "ZXY"},
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

static double quat_dist(mn_quat a, mn_quat b) {
    double d = fabs(mn_quat_dot(a, b));
    return 1.0 - (d > 1 ? 1 : d);
}

/* Largest distance of a joint from the root over the rest pose: the figure's size. */
static double figure_size(const mn_model* m, mn_data* d) {
    mn_data_reset(m, d);
    mn_fk(m, d);
    double s = 0;
    for (int j = 0; j < m->njoint; j++) {
        double r = mn_vec3_dist(d->xf[j].p, d->xf[0].p);
        if (r > s) s = r;
    }
    return s > 0 ? s : 1;
}

static void test_read_files(void) {
    for (int i = 0; i < NCASES; i++) {
        const bvh_case* c = &cases[i];
        mn_model* m = NULL;
        mn_motion mo;
        mn_warnings w = {0, ""};
        mn_error err;
        mn_status st = mn_bvh_read(c->path, NULL, &m, &mo, &w, &err);
        CHECK(st == MN_OK);
        if (st) {
            fprintf(stderr, "%s\n", err.message);
            continue;
        }
        CHECK(m->njoint == c->bvh_joints + c->end_sites);
        CHECK(mo.nframes == c->frames);
        CHECK_NEAR(mo.frame_time, c->frame_time, 1e-12);
        CHECK(mo.nq == m->nq);
        /* Every joint with 3 rotation channels is a BALL, the root FREE: nv = channels. */
        CHECK(m->nv == c->channels);
        int nend = 0;
        for (int j = 0; j < m->njoint; j++) {
            if (m->jnt_type[j] == MN_JOINT_FIXED) {
                nend++;
                CHECK(m->jnt_nchild[j] == 0);
                const char* n = m->jnt_name[j];
                const char* pn = m->jnt_name[m->jnt_parent[j]];
                CHECK(strncmp(n, pn, strlen(pn)) == 0 && strcmp(n + strlen(pn), "_end") == 0);
            }
        }
        CHECK(nend == c->end_sites);
        int r = mn_model_find_joint(m, c->root);
        CHECK(r >= 0 && m->jnt_type[r] == MN_JOINT_FREE && m->jnt_parent[r] < 0);
        if (r >= 0) {
            CHECK(strcmp(mn_euler_order_name((mn_euler_order)m->jnt_rot_order[r]), c->order) == 0);
            const double* q = mo.q + m->jnt_qadr[r];
            mn_vec3 off = m->jnt_offset[r];
            CHECK_NEAR(q[0] + off.x, c->first[0], 1e-12);
            CHECK_NEAR(q[1] + off.y, c->first[1], 1e-12);
            CHECK_NEAR(q[2] + off.z, c->first[2], 1e-12);
            double e[3] = {c->first[3] * DEG, c->first[4] * DEG, c->first[5] * DEG};
            mn_quat ref = mn_euler_to_quat((mn_euler_order)m->jnt_rot_order[r], e);
            CHECK(quat_dist(ref, mn_q4(q[3], q[4], q[5], q[6])) < 1e-14);
        }
        /* The whole first row, read here with strtod: joints are in file order (parent
         * before child, depth first), the root takes 6 columns and every BALL 3. */
        {
            size_t n;
            char* text = mn_test_read_file(c->path, &n);
            char* p = text ? strstr(text, "Frame Time:") : NULL;
            if (p) p = strchr(p, '\n');
            CHECK(p != NULL);
            double row[96];
            for (int k = 0; p && k < c->channels; k++)
                row[k] = strtod(p, &p);
            int col = 0, order_ok = 1;
            double worst = 0;
            const char* ch = text;
            for (int j = 0; p && j < m->njoint; j++) {
                int t = m->jnt_type[j], a = m->jnt_qadr[j];
                if (t == MN_JOINT_FIXED) continue;
                /* this joint's CHANNELS line: the rotation order as the file spells it */
                ch = strstr(ch, "CHANNELS");
                if (!ch) break;
                char names[6][16] = {{0}}, order[4] = {0};
                int nch = 0, k = 0;
                sscanf(ch, "CHANNELS %d %15s %15s %15s %15s %15s %15s", &nch, names[0], names[1],
                       names[2], names[3], names[4], names[5]);
                for (int i = 0; i < nch && i < 6; i++)
                    if (strstr(names[i], "rotation") && k < 3) order[k++] = names[i][0];
                ch += 8;
                order_ok &= mn_euler_order_parse(order) == m->jnt_rot_order[j];
                const double* e = row + col + (t == MN_JOINT_FREE ? 3 : 0);
                double r[3] = {e[0] * DEG, e[1] * DEG, e[2] * DEG};
                mn_quat ref = mn_euler_to_quat((mn_euler_order)mn_euler_order_parse(order), r);
                const double* q = mo.q + a + (t == MN_JOINT_FREE ? 3 : 0);
                double dq = quat_dist(ref, mn_q4(q[0], q[1], q[2], q[3]));
                if (dq > worst) worst = dq;
                col += t == MN_JOINT_FREE ? 6 : 3;
            }
            CHECK(col == c->channels);
            CHECK(order_ok);
            CHECK(worst < 1e-14);
            free(text);
        }
        /* Every state is finite, every quaternion unit. */
        CHECK(mo.q != NULL);
        int bad = 0;
        for (int f = 0; f < mo.nframes && mo.q; f++)
            if (mn_q_check(m, mo.q + (size_t)f * (size_t)m->nq) != MN_OK) bad++;
        CHECK(bad == 0);
        /* Only Boxing_Toes has a Frames line that disagrees with its data. */
        if (strstr(c->path, "Boxing")) {
            CHECK(w.count == 1);
            CHECK(strstr(w.first, "Boxing_Toes.bvh:128:") != NULL);
            CHECK(strstr(w.first, "3069") != NULL && strstr(w.first, "3070") != NULL);
        } else {
            CHECK(w.count == 0);
        }
        mn_motion_free(&mo);
        mn_model_destroy(m);
    }
}

/* Compares every joint's world position (matched by name) of two model/motion pairs on
 * frames 0, step, 2 step, ... to tol relative to the figure size. */
static void compare_motions(const mn_model* a, const mn_motion* ma, const mn_model* b,
                            const mn_motion* mb, int step, double tol) {
    CHECK(ma->nframes == mb->nframes);
    mn_data* da = mn_data_create(a, 0);
    mn_data* db = mn_data_create(b, 0);
    int* map = malloc((size_t)a->njoint * sizeof *map);
    for (int j = 0; j < a->njoint; j++) {
        map[j] = mn_model_find_joint(b, a->jnt_name[j]);
        CHECK(map[j] >= 0);
    }
    double size = figure_size(a, da), worst = 0;
    for (int f = 0; f < ma->nframes && f < mb->nframes; f += step) {
        memcpy(da->q, ma->q + (size_t)f * (size_t)a->nq, (size_t)a->nq * sizeof(double));
        memcpy(db->q, mb->q + (size_t)f * (size_t)b->nq, (size_t)b->nq * sizeof(double));
        mn_fk(a, da);
        mn_fk(b, db);
        for (int j = 0; j < a->njoint; j++) {
            if (map[j] < 0) continue;
            double e = mn_vec3_dist(da->xf[j].p, db->xf[map[j]].p) / size;
            if (e > worst) worst = e;
        }
    }
    CHECK(worst <= tol);
    printf("  round trip: worst relative position error %.3g over %d joints\n", worst, a->njoint);
    free(map);
    mn_data_destroy(da);
    mn_data_destroy(db);
}

static void test_round_trip_files(void) {
    for (int i = 0; i < NCASES; i++) {
        mn_model *m = NULL, *m2 = NULL;
        mn_motion mo, mo2;
        mn_error err;
        CHECK(mn_bvh_read(cases[i].path, NULL, &m, &mo, NULL, &err) == MN_OK);
        if (!m) continue;
        const char* out = mn_test_write_temp(".bvh", "", 0);
        CHECK(mn_bvh_write(out, m, &mo, &err) == MN_OK);
        mn_warnings w = {0, ""};
        CHECK(mn_bvh_read(out, NULL, &m2, &mo2, &w, &err) == MN_OK);
        CHECK(w.count == 0);
        if (m2) {
            CHECK(m2->njoint == m->njoint && m2->nq == m->nq);
            for (int j = 0; j < m->njoint && m2->njoint == m->njoint; j++) {
                CHECK(strcmp(m->jnt_name[j], m2->jnt_name[j]) == 0);
                CHECK(m->jnt_type[j] == m2->jnt_type[j]);
                CHECK(m->jnt_rot_order[j] == m2->jnt_rot_order[j]);
                CHECK(mn_vec3_dist(m->jnt_offset[j], m2->jnt_offset[j]) == 0);
            }
            CHECK_NEAR(mo2.frame_time, mo.frame_time, 0);
            compare_motions(m, &mo, m2, &mo2, 7, 1e-9);
            /* Writing what was read back gives the same text: the same words, and the same
             * numbers except Euler angles next to gimbal lock, where the extraction's
             * condition number 1/cos(middle angle) shows in the 12th decimal. */
            const char* out2 = mn_test_write_temp(".bvh", "", 0);
            CHECK(mn_bvh_write(out2, m2, &mo2, &err) == MN_OK);
            size_t n1, n2;
            char* t1 = mn_test_read_file(out, &n1);
            char* t2 = mn_test_read_file(out2, &n2);
            CHECK(t1 && t2);
            if (t1 && t2) {
                long words = 0, differ = 0;
                char *s1 = t1, *s2 = t2, *e1, *e2;
                for (;;) {
                    s1 += strspn(s1, " \t\r\n");
                    s2 += strspn(s2, " \t\r\n");
                    size_t l1 = strcspn(s1, " \t\r\n"), l2 = strcspn(s2, " \t\r\n");
                    if (!l1 || !l2) {
                        CHECK(l1 == l2);
                        break;
                    }
                    words++;
                    if (l1 != l2 || memcmp(s1, s2, l1) != 0) {
                        double a = strtod(s1, &e1), b = strtod(s2, &e2);
                        differ++;
                        CHECK(e1 == s1 + l1 && e2 == s2 + l2 && fabs(a - b) <= 1e-9);
                    }
                    s1 += l1;
                    s2 += l2;
                }
                CHECK(words > 1000 && differ * 10000 < words);
            }
            free(t1);
            free(t2);
        }
        mn_motion_free(&mo);
        mn_motion_free(&mo2);
        mn_model_destroy(m);
        mn_model_destroy(m2);
    }
}

/* The memory form gives the bytes the path form writes (plain and stood up at the root),
 * and refuses what the path form refuses, naming no file and giving no text. */
static void test_write_mem(void) {
    mn_bvh_write_options up = mn_bvh_write_default();
    up.root_rot = mn_q4(sqrt(0.5), -sqrt(0.5), 0, 0);
    for (int i = 0; i < NCASES; i++) {
        mn_model* m = NULL;
        mn_motion mo;
        mn_error err;
        CHECK(mn_bvh_read(cases[i].path, NULL, &m, &mo, NULL, &err) == MN_OK);
        if (!m) continue;
        for (int k = 0; k < 2; k++) {
            const mn_bvh_write_options* opt = k ? &up : NULL;
            const char* out = mn_test_write_temp(".bvh", "", 0);
            CHECK(mn_bvh_write_ex(out, m, &mo, opt, &err) == MN_OK);
            size_t nf = 0, nm = 0;
            char* file = mn_test_read_file(out, &nf);
            char* text = NULL;
            CHECK(mn_bvh_write_mem(m, &mo, opt, &text, &nm, &err) == MN_OK);
            CHECK(file && text && nf == nm && memcmp(file, text, nf) == 0 && text[nm] == 0);
            free(file);
            free(text);
        }
        char* text = (char*)1;
        size_t n = 7;
        mn_bvh_write_options bad = mn_bvh_write_default();
        bad.root_rot = mn_q4(2, 0, 0, 0);
        CHECK(mn_bvh_write_mem(m, &mo, &bad, &text, &n, &err) == MN_ERR_ARG);
        CHECK(!text && n == 0 && strcmp(err.file, "") == 0 && strcmp(err.field, "root_rot") == 0);
        double keep = mo.q[0];
        mo.q[0] = NAN;
        CHECK(mn_bvh_write_mem(m, &mo, NULL, &text, &n, &err) == MN_ERR_ARG);
        CHECK(!text && strcmp(err.field, "motion") == 0);
        mo.q[0] = keep;
        CHECK(mn_bvh_write_mem(NULL, &mo, NULL, &text, &n, &err) == MN_ERR_ARG && !text);
        CHECK(mn_bvh_write_mem(m, &mo, NULL, NULL, &n, &err) == MN_ERR_ARG);
        mn_motion_free(&mo);
        mn_model_destroy(m);
    }
}

/* The same file with LF and with CRLF line endings reads to the same model and motion. */
static void test_crlf_lf(void) {
    size_t n;
    char* crlf = mn_test_read_file(cases[0].path, &n);
    CHECK(crlf != NULL);
    if (!crlf) return;
    CHECK(strstr(crlf, "\r\n") != NULL);
    char* lf = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (crlf[i] != '\r') lf[k++] = crlf[i];
    /* and one with lone CR (classic Mac) line endings */
    char* cr = malloc(n + 1);
    for (size_t i = 0; i < k; i++)
        cr[i] = lf[i] == '\n' ? '\r' : lf[i];
    mn_model *a = NULL, *b = NULL, *c = NULL;
    mn_motion ma, mb, mc;
    mn_error err;
    CHECK(mn_bvh_read_mem(crlf, n, "crlf.bvh", NULL, &a, &ma, NULL, &err) == MN_OK);
    CHECK(mn_bvh_read_mem(lf, k, "lf.bvh", NULL, &b, &mb, NULL, &err) == MN_OK);
    CHECK(mn_bvh_read_mem(cr, k, "cr.bvh", NULL, &c, &mc, NULL, &err) == MN_OK);
    if (a && b && c) {
        CHECK(a->njoint == b->njoint && a->nq == b->nq && a->nq == c->nq);
        CHECK(ma.nframes == mb.nframes && ma.nframes == mc.nframes);
        CHECK(memcmp(ma.q, mb.q, (size_t)ma.nframes * (size_t)a->nq * sizeof(double)) == 0);
        CHECK(memcmp(ma.q, mc.q, (size_t)ma.nframes * (size_t)a->nq * sizeof(double)) == 0);
    }
    mn_motion_free(&ma);
    mn_motion_free(&mb);
    mn_motion_free(&mc);
    mn_model_destroy(a);
    mn_model_destroy(b);
    mn_model_destroy(c);
    free(crlf);
    free(lf);
    free(cr);
}

/* scale multiplies offsets and position channels: every world position scales with it. */
static void test_scale(void) {
    mn_bvh_options o = mn_bvh_default();
    CHECK(o.scale == 1.0);
    o.scale = 0.056444; /* CMU units to metres (mocap.cs.cmu.edu FAQ) */
    mn_model *a = NULL, *b = NULL;
    mn_motion ma, mb;
    mn_error err;
    CHECK(mn_bvh_read(cases[2].path, NULL, &a, &ma, NULL, &err) == MN_OK);
    CHECK(mn_bvh_read(cases[2].path, &o, &b, &mb, NULL, &err) == MN_OK);
    if (!a || !b) return;
    mn_data* da = mn_data_create(a, 0);
    mn_data* db = mn_data_create(b, 0);
    double size = figure_size(a, da), worst = 0;
    for (int f = 0; f < ma.nframes; f += 50) {
        memcpy(da->q, ma.q + (size_t)f * (size_t)a->nq, (size_t)a->nq * sizeof(double));
        memcpy(db->q, mb.q + (size_t)f * (size_t)b->nq, (size_t)b->nq * sizeof(double));
        mn_fk(a, da);
        mn_fk(b, db);
        for (int j = 0; j < a->njoint; j++) {
            double e =
                mn_vec3_dist(mn_vec3_scale(da->xf[j].p, o.scale), db->xf[j].p) / (size * o.scale);
            if (e > worst) worst = e;
        }
    }
    CHECK(worst < 1e-12);
    CHECK_NEAR(b->jnt_offset[1].y, a->jnt_offset[1].y * o.scale, 1e-15);
    o.scale = 0;
    mn_model* c = (mn_model*)1;
    CHECK(mn_bvh_read(cases[2].path, &o, &c, NULL, NULL, &err) == MN_ERR_ARG && c == NULL);
    o.scale = NAN;
    CHECK(mn_bvh_read(cases[2].path, &o, &c, NULL, NULL, &err) == MN_ERR_ARG);
    mn_data_destroy(da);
    mn_data_destroy(db);
    mn_motion_free(&ma);
    mn_motion_free(&mb);
    mn_model_destroy(a);
    mn_model_destroy(b);
}

/* ---- unusual channel lists against an independent FK ------------------------------------ */

/* A figure with every kind of channel list; the reference FK below reads the same text
 * the way the common readers (Blender, assimp) do: position channels replace the offset's
 * components, the joint translates in its parent's frame and then rotates by the rotation
 * channels in the order listed. */
static const char unusual_bvh[] =
    "HIERARCHY\n"
    "ROOT Root\n"
    "{\n"
    "  OFFSET 1 2 3\n"
    "  CHANNELS 4 Zposition Xposition Yrotation Yposition\n"
    "  JOINT TwoRot\n"
    "  {\n"
    "    OFFSET 0 5 0\n"
    "    CHANNELS 2 Yrotation Xrotation\n"
    "    JOINT RotFirst\n"
    "    {\n"
    "      OFFSET 0 4 1\n"
    "      CHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition\n"
    "      JOINT PosOnly {\n"
    "        OFFSET 2 0 0\n"
    "        CHANNELS 3 Xposition Yposition Zposition\n"
    "        JOINT ProperEuler\n"
    "        {\n"
    "          OFFSET 0 0 3\n"
    "          CHANNELS 3 Zrotation Xrotation Zrotation\n"
    "          End Site\n"
    "          {\n"
    "            OFFSET 0 1 0\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "  JOINT Still\n"
    "  {\n"
    "    OFFSET -1 0 0\n"
    "    CHANNELS 0\n"
    "    JOINT OneSlide\n"
    "    {\n"
    "      OFFSET -2 0 0\n"
    "      CHANNELS 1 Yposition\n"
    "      End Site\n"
    "      {\n"
    "        OFFSET 0 0 -1\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "MOTION\n"
    "Frames: 3\n"
    "Frame Time: 0.04\n"
    "0 0 0 0   0 0   0 0 0 0 0 0   0 0 0   0 0 0   0\n"
    "0.5 -1 30 2   10 -20   15 25 -35 1.5 2.5 -0.5   3 -1 2   40 -30 60   0.25\n"
    "-2 4 -120 7   -80 45   170 -89 5 0 0 0   -1 -1 -1   -170 10 20   -3\n";

typedef struct ref_joint {
    const char* name;
    int parent;
    double off[3];
    int nch;
    int ch[6]; /* 0..2 position x y z, 3..5 rotation x y z */
} ref_joint;

static const ref_joint ref_joints[] = {
    {"Root", -1, {1, 2, 3}, 4, {2, 0, 4, 1}},
    {"TwoRot", 0, {0, 5, 0}, 2, {4, 3}},
    {"RotFirst", 1, {0, 4, 1}, 6, {5, 3, 4, 0, 1, 2}},
    {"PosOnly", 2, {2, 0, 0}, 3, {0, 1, 2}},
    {"ProperEuler", 3, {0, 0, 3}, 3, {5, 3, 5}},
    {"ProperEuler_end", 4, {0, 1, 0}, 0, {0}},
    {"Still", 0, {-1, 0, 0}, 0, {0}},
    {"OneSlide", 6, {-2, 0, 0}, 1, {1}},
    {"OneSlide_end", 7, {0, 0, -1}, 0, {0}},
};
#define NREF (int)(sizeof ref_joints / sizeof ref_joints[0])

/* World positions of the reference joints for one row of channels (3x3 matrices). */
static void ref_fk(const double* row, mn_vec3* pos) {
    mn_mat3 R[NREF];
    int col = 0;
    for (int i = 0; i < NREF; i++) {
        const ref_joint* r = &ref_joints[i];
        double t[3] = {r->off[0], r->off[1], r->off[2]};
        mn_mat3 L = mn_mat3_identity();
        for (int k = 0; k < r->nch; k++) {
            double v = row[col + k];
            int c = r->ch[k];
            if (c < 3) {
                t[c] = v;
            } else {
                mn_vec3 ax = mn_v3(c == 3, c == 4, c == 5);
                mn_mat3 A = mn_mat3_axis_angle(ax, v * DEG);
                L = mn_mat3_mul(&L, &A);
            }
        }
        col += r->nch;
        mn_vec3 tl = mn_v3(t[0], t[1], t[2]);
        if (r->parent < 0) {
            R[i] = L;
            pos[i] = tl;
        } else {
            R[i] = mn_mat3_mul(&R[r->parent], &L);
            pos[i] = mn_vec3_add(pos[r->parent], mn_mat3_mulv(&R[r->parent], tl));
        }
    }
}

static void check_against_ref(const mn_model* m, const mn_motion* mo) {
    const double rows[3][19] = {
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0.5, -1, 30, 2, 10, -20, 15, 25, -35, 1.5, 2.5, -0.5, 3, -1, 2, 40, -30, 60, 0.25},
        {-2, 4, -120, 7, -80, 45, 170, -89, 5, 0, 0, 0, -1, -1, -1, -170, 10, 20, -3},
    };
    CHECK(mo->nframes == 3);
    mn_data* d = mn_data_create(m, 0);
    double worst = 0;
    for (int f = 0; f < 3 && f < mo->nframes; f++) {
        mn_vec3 ref[NREF];
        ref_fk(rows[f], ref);
        memcpy(d->q, mo->q + (size_t)f * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        mn_fk(m, d);
        for (int i = 0; i < NREF; i++) {
            int j = mn_model_find_joint(m, ref_joints[i].name);
            CHECK(j >= 0);
            if (j < 0) continue;
            double e = mn_vec3_dist(d->xf[j].p, ref[i]);
            if (e > worst) worst = e;
        }
    }
    CHECK(worst < 1e-12);
    if (worst >= 1e-12) fprintf(stderr, "  worst error against the reference FK %g\n", worst);
    mn_data_destroy(d);
}

static void test_unusual_channels(void) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    mn_status st = mn_bvh_read_mem(unusual_bvh, sizeof unusual_bvh - 1, "unusual.bvh", NULL, &m,
                                   &mo, NULL, &err);
    CHECK(st == MN_OK);
    if (st) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    /* Series joints: 4 + 2 + 6 + 3 + 3 one-DOF joints, Still and two End Sites fixed. */
    CHECK(m->njoint == 4 + 2 + 6 + 3 + 3 + 1 + 1 + 2);
    CHECK(m->nv == 19 && m->nq == 19);
    int j = mn_model_find_joint(m, "Root:0:Zposition");
    CHECK(j >= 0 && m->jnt_type[j] == MN_JOINT_SLIDE && m->jnt_parent[j] < 0);
    j = mn_model_find_joint(m, "Root");
    CHECK(j >= 0 && m->jnt_type[j] == MN_JOINT_HINGE); /* rotations come last in a series */
    j = mn_model_find_joint(m, "OneSlide");
    CHECK(j >= 0 && m->jnt_type[j] == MN_JOINT_SLIDE);
    j = mn_model_find_joint(m, "Still");
    CHECK(j >= 0 && m->jnt_type[j] == MN_JOINT_FIXED);
    check_against_ref(m, &mo);

    /* Round trip: the same joints and channel lists come back. */
    const char* out = mn_test_write_temp(".bvh", "", 0);
    CHECK(mn_bvh_write(out, m, &mo, &err) == MN_OK);
    size_t n;
    char* text = mn_test_read_file(out, &n);
    CHECK(text != NULL);
    if (text) {
        CHECK(strstr(text, "CHANNELS 4 Zposition Xposition Yrotation Yposition\n") != NULL);
        CHECK(strstr(text, "CHANNELS 2 Yrotation Xrotation\n") != NULL);
        CHECK(strstr(text,
                     "CHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition\n") !=
              NULL);
        CHECK(strstr(text, "CHANNELS 3 Xposition Yposition Zposition\n") != NULL);
        CHECK(strstr(text, "CHANNELS 3 Zrotation Xrotation Zrotation\n") != NULL);
        /* a lone position channel is written as all three (readers such as Blender's
         * take a missing one as 0, not as the OFFSET) */
        CHECK(strstr(text, "CHANNELS 1 Yposition\n") == NULL);
        CHECK(strstr(text, "JOINT OneSlide\n\t\t{\n\t\t\tOFFSET -2 0 0\n\t\t\tCHANNELS 3 "
                           "Xposition Yposition Zposition\n") != NULL);
        CHECK(strstr(text, "JOINT Still\n") != NULL && strstr(text, "CHANNELS 0\n") != NULL);
        CHECK(strstr(text, ":0:") == NULL); /* no series name leaks into the file */
        free(text);
    }
    mn_model* m2 = NULL;
    mn_motion mo2;
    CHECK(mn_bvh_read(out, NULL, &m2, &mo2, NULL, &err) == MN_OK);
    if (m2) {
        /* OneSlide's three position channels read back as three slides */
        CHECK(m2->njoint == m->njoint + 2);
        check_against_ref(m2, &mo2);
        compare_motions(m, &mo, m2, &mo2, 1, 1e-12);
        mn_motion_free(&mo2);
        mn_model_destroy(m2);
    }
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

/* ---- writing any model ----------------------------------------------------------------- */

static double urand(uint64_t* s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* A model with every joint type, rest orientations and slanted axes: written as BVH and
 * read back, every joint (End Sites by their new names) lands where it was. */
static void test_write_any_model(void) {
    mn_spec* s = mn_spec_create("any");
    mn_joint_def d = mn_joint_default();
    mn_vec3 ax = mn_vec3_normalize(mn_v3(1, 2, -0.5));
    struct {
        const char* name;
        int parent;
        mn_joint_type type;
        mn_vec3 off;
        mn_quat orient;
        mn_vec3 axis;
        mn_euler_order order;
    } js[] = {
        {"base",
         -1,
         MN_JOINT_FREE,
         {0.1, 0.9, -0.2},
         {0.9, 0.1, 0.3, -0.2},
         {0, 0, 1},
         MN_EULER_XYZ},
        {"hinge_slanted", 0, MN_JOINT_HINGE, {0, 0.3, 0}, {1, 0, 0, 0}, ax, MN_EULER_ZXY},
        {"hinge_oriented",
         1,
         MN_JOINT_HINGE,
         {0.2, 0.1, 0},
         {0.8, 0.3, -0.1, 0.4},
         {0, 1, 0},
         MN_EULER_YZX},
        {"slide_oriented", 2, MN_JOINT_SLIDE, {0, 0, 0.4}, {0.7, -0.2, 0.5, 0.1}, ax, MN_EULER_ZYX},
        {"slide_x", 3, MN_JOINT_SLIDE, {0.1, 0, 0}, {1, 0, 0, 0}, {1, 0, 0}, MN_EULER_ZYX},
        {"ball", 4, MN_JOINT_BALL, {0, -0.3, 0.1}, {0.6, 0.2, 0.2, -0.3}, {0, 0, 1}, MN_EULER_XZY},
        {"fixed_turn",
         5,
         MN_JOINT_FIXED,
         {0.2, 0.2, 0},
         {0.5, 0.5, 0.5, 0.5},
         {0, 0, 1},
         MN_EULER_YXZ},
        {"hinge_z", 6, MN_JOINT_HINGE, {0, 0.25, 0}, {1, 0, 0, 0}, {0, 0, 1}, MN_EULER_ZXY},
        {"tip", 7, MN_JOINT_FIXED, {0, 0.1, 0.05}, {0.9, 0, 0.4, 0}, {0, 0, 1}, MN_EULER_ZXY},
        {"side_tip", 5, MN_JOINT_FIXED, {0.3, 0, 0}, {1, 0, 0, 0}, {0, 0, 1}, MN_EULER_ZXY},
    };
    int n = (int)(sizeof js / sizeof js[0]);
    for (int i = 0; i < n; i++) {
        d = mn_joint_default();
        d.name = js[i].name;
        d.parent = js[i].parent;
        d.type = js[i].type;
        d.offset = js[i].off;
        d.orient = mn_quat_normalize(js[i].orient);
        d.axis = js[i].axis;
        d.rot_order = js[i].order;
        CHECK(mn_spec_add_joint(s, &d, NULL) == i);
    }
    mn_error err;
    mn_model* m = mn_model_compile(s, &err);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    if (!m) return;
    mn_motion mo = {20, m->nq, 0.02, calloc(20 * (size_t)m->nq, sizeof(double))};
    uint64_t seed = 7;
    for (int f = 0; f < mo.nframes; f++) {
        double* q = mo.q + (size_t)f * (size_t)m->nq;
        for (int j = 0; j < m->njoint; j++) {
            double* a = q + m->jnt_qadr[j];
            switch (m->jnt_type[j]) {
            case MN_JOINT_HINGE:
                a[0] = (urand(&seed) - 0.5) * 6;
                break;
            case MN_JOINT_SLIDE:
                a[0] = urand(&seed) - 0.5;
                break;
            case MN_JOINT_FREE:
                for (int k = 0; k < 3; k++)
                    a[k] = urand(&seed) - 0.5;
                a += 3;
                /* fall through */
            case MN_JOINT_BALL: {
                mn_quat r = mn_quat_normalize(mn_q4(urand(&seed) - 0.5, urand(&seed) - 0.5,
                                                    urand(&seed) - 0.5, urand(&seed) - 0.5));
                a[0] = r.w, a[1] = r.x, a[2] = r.y, a[3] = r.z;
                break;
            }
            default:
                break;
            }
        }
    }
    /* a gimbal-locked pose: the ball at +90 degrees about its order's middle axis (Z) */
    {
        double* q = mo.q + (size_t)m->nq * 3 + m->jnt_qadr[mn_model_find_joint(m, "ball")];
        mn_quat r = mn_quat_axis_angle(mn_v3(0, 0, 1), MN_PI / 2);
        q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z;
    }
    const char* out = mn_test_write_temp(".bvh", "", 0);
    CHECK(mn_bvh_write(out, m, &mo, &err) == MN_OK);
    mn_model* m2 = NULL;
    mn_motion mo2;
    CHECK(mn_bvh_read(out, NULL, &m2, &mo2, NULL, &err) == MN_OK);
    if (m2) {
        /* slide_x's three position channels (a reader needs all three) read back as three
         * slides, the hinges as balls */
        CHECK(m2->njoint == m->njoint + 2);
        CHECK(m2->jnt_type[mn_model_find_joint(m2, "hinge_z")] == MN_JOINT_BALL);
        /* End Sites come back named after their parent. */
        CHECK(mn_model_find_joint(m2, "hinge_z_end") >= 0);
        CHECK(mn_model_find_joint(m2, "ball_end") >= 0);
        CHECK(mn_model_find_joint(m2, "tip") < 0);
        mn_data* da = mn_data_create(m, 0);
        mn_data* db = mn_data_create(m2, 0);
        double worst = 0;
        for (int f = 0; f < mo.nframes; f++) {
            memcpy(da->q, mo.q + (size_t)f * (size_t)m->nq, (size_t)m->nq * sizeof(double));
            memcpy(db->q, mo2.q + (size_t)f * (size_t)m2->nq, (size_t)m2->nq * sizeof(double));
            mn_fk(m, da);
            mn_fk(m2, db);
            for (int j = 0; j < m->njoint; j++) {
                const char* name = m->jnt_name[j];
                char buf[64];
                if (strcmp(name, "tip") == 0) name = "hinge_z_end";
                if (strcmp(name, "side_tip") == 0) {
                    snprintf(buf, sizeof buf, "ball_end");
                    name = buf;
                }
                int k = mn_model_find_joint(m2, name);
                CHECK(k >= 0);
                if (k < 0) continue;
                double e = mn_vec3_dist(da->xf[j].p, db->xf[k].p);
                if (e > worst) worst = e;
                /* frames of joints that are not End Sites keep their orientation too */
                if (m->jnt_nchild[j] > 0) {
                    mn_quat qa = mn_quat_from_mat3(&da->xf[j].R),
                            qb = mn_quat_from_mat3(&db->xf[k].R);
                    CHECK(quat_dist(qa, qb) < 1e-12);
                }
            }
        }
        CHECK(worst < 1e-12);
        if (worst >= 1e-12) fprintf(stderr, "  worst %g\n", worst);
        mn_data_destroy(da);
        mn_data_destroy(db);
        mn_motion_free(&mo2);
        mn_model_destroy(m2);
    }
    /* NULL motion writes one frame of the rest pose. */
    CHECK(mn_bvh_write(out, m, NULL, &err) == MN_OK);
    CHECK(mn_bvh_read(out, NULL, &m2, &mo2, NULL, &err) == MN_OK);
    CHECK(mo2.nframes == 1);
    mn_motion_free(&mo2);
    mn_model_destroy(m2);
    /* Misuse: NaN state, wrong nq, bad frame time. The existing file stays as it was. */
    size_t before_n;
    char* before = mn_test_read_file(out, &before_n);
    mo.q[5] = NAN;
    CHECK(mn_bvh_write(out, m, &mo, &err) == MN_ERR_ARG);
    mo.q[5] = 0;
    mo.nq++;
    CHECK(mn_bvh_write(out, m, &mo, &err) == MN_ERR_ARG);
    mo.nq--;
    mo.frame_time = -1;
    CHECK(mn_bvh_write(out, m, &mo, &err) == MN_ERR_ARG);
    mo.frame_time = 0.02;
    int hz = m->jnt_qadr[mn_model_find_joint(m, "hinge_z")];
    double keep = mo.q[hz];
    mo.q[hz] = 1e300; /* a hinge angle no BVH reader takes */
    CHECK(mn_bvh_write(out, m, &mo, &err) == MN_ERR_ARG);
    mo.q[hz] = keep;
    CHECK(mn_bvh_write(MN_TEST_DATA "/no/such/folder/x.bvh", m, &mo, &err) == MN_ERR_IO);
    size_t after_n;
    char* after = mn_test_read_file(out, &after_n);
    CHECK(before && after && before_n == after_n && memcmp(before, after, before_n) == 0);
    free(before);
    free(after);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

/* ---- files every reader opens ------------------------------------------------------------ */

/* Every HIERARCHY line of text, split on whitespace as Blender's importer and other
 * tokenising readers split it, reads as BVH: ROOT/JOINT and one name word, CHANNELS with
 * its count of names, no or three position channels (X Y Z) and no or three rotation
 * channels about three different axes. Returns the number of joints. */
static int check_tokenised(const char* text) {
    int joints = 0;
    char line[1024];
    const char* p = text;
    while (*p) {
        size_t n = strcspn(p, "\n");
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, p, n);
        line[n] = 0;
        p += n + (p[n] == '\n');
        char* words[80];
        int nw = 0;
        for (char* w = strtok(line, " \t\r"); w && nw < 80; w = strtok(NULL, " \t\r"))
            words[nw++] = w;
        if (nw == 0) continue;
        if (!strcmp(words[0], "MOTION")) break;
        if (!strcmp(words[0], "ROOT") || !strcmp(words[0], "JOINT")) {
            CHECK(nw == 2); /* the name is one word */
            joints++;
        } else if (!strcmp(words[0], "CHANNELS")) {
            int count = atoi(words[1]), pos = 0, rot = 0, axes = 0;
            CHECK(count == nw - 2);
            for (int k = 2; k < nw; k++) {
                int is_pos = strstr(words[k], "position") != NULL;
                int axis = words[k][0] - 'X';
                CHECK(axis >= 0 && axis < 3);
                if (is_pos) {
                    CHECK(rot == 0 && axis == pos); /* X Y Z, before the rotations */
                    pos++;
                } else {
                    CHECK(!((axes >> axis) & 1));
                    axes |= 1 << axis;
                    rot++;
                }
            }
            CHECK(pos == 0 || pos == 3);
            CHECK(rot == 0 || rot == 3);
        }
    }
    return joints;
}

/* The joint of b that carries joint j of a: the same name, or for a hinge of a compound
 * joint folded into one BVH joint ("torso.1"), the joint at the end of its run. */
static int carrier(const mn_model* a, int j, const mn_model* b) {
    for (int k = 0; k < 4 && j >= 0; k++) {
        int c = mn_model_find_joint(b, a->jnt_name[j]);
        if (c >= 0) return c;
        int next = -1;
        for (int i = j + 1; i < a->njoint; i++)
            if (a->jnt_parent[i] == j) {
                next = i;
                break;
            }
        j = next;
    }
    return -1;
}

/* a's motion against b's: every joint of a (through carrier()) at every frame, to tol of
 * the figure's size; returns the worst relative error. */
static double fk_agreement(const mn_model* a, const mn_motion* ma, const mn_model* b,
                           const mn_motion* mb) {
    CHECK(ma->nframes == mb->nframes);
    mn_data* da = mn_data_create(a, 0);
    mn_data* db = mn_data_create(b, 0);
    double size = figure_size(a, da), worst = 0;
    for (int f = 0; f < ma->nframes && f < mb->nframes; f++) {
        memcpy(da->q, ma->q + (size_t)f * (size_t)a->nq, (size_t)a->nq * sizeof(double));
        memcpy(db->q, mb->q + (size_t)f * (size_t)b->nq, (size_t)b->nq * sizeof(double));
        mn_fk(a, da);
        mn_fk(b, db);
        for (int j = 0; j < a->njoint; j++) {
            int k = carrier(a, j, b);
            if (k < 0 && a->jnt_type[j] == MN_JOINT_FIXED && a->jnt_nchild[j] == 0)
                continue; /* an End Site: it comes back named after its parent */
            CHECK(k >= 0);
            if (k < 0) continue;
            double e = mn_vec3_dist(da->xf[j].p, db->xf[k].p) / size;
            if (e > worst) worst = e;
        }
    }
    mn_data_destroy(da);
    mn_data_destroy(db);
    return worst;
}

/* A motion of nframes random poses of m (hinges and slides within +-1, random rotations). */
static mn_motion random_motion(const mn_model* m, int nframes, uint64_t seed) {
    mn_motion mo = {nframes, m->nq, 1.0 / 30, calloc((size_t)nframes * (size_t)m->nq + 1, 8)};
    for (int f = 0; f < nframes; f++) {
        double* q = mo.q + (size_t)f * (size_t)m->nq;
        for (int j = 0; j < m->njoint; j++) {
            double* a = q + m->jnt_qadr[j];
            int t = m->jnt_type[j];
            if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) a[0] = 2 * urand(&seed) - 1;
            if (t == MN_JOINT_FREE)
                for (int k = 0; k < 3; k++)
                    *a++ = urand(&seed) - 0.5;
            if (t == MN_JOINT_FREE || t == MN_JOINT_BALL) {
                mn_quat r = mn_quat_normalize(mn_q4(urand(&seed) - 0.5, urand(&seed) - 0.5,
                                                    urand(&seed) - 0.5, urand(&seed) - 0.5));
                a[0] = r.w, a[1] = r.x, a[2] = r.y, a[3] = r.z;
            }
        }
    }
    return mo;
}

/* The stick figure (compound joints of hinges, mirrored axes, names with spaces), a URDF
 * arm and a CMU take: written as BVH that whitespace-tokenising readers (Blender's) open,
 * read back to the same forward kinematics at every frame, and the figure's names. */
static void test_files_every_reader_opens(void) {
    mn_error err;
    for (int c = 0; c < 3; c++) {
        mn_model* m = NULL;
        mn_motion mo;
        memset(&mo, 0, sizeof mo);
        const char* what = c == 0 ? "stick figure" : c == 1 ? "UR5 arm" : "CMU walk";
        if (c == 0) m = mn_stickman_model(&err);
        if (c == 1) CHECK(mn_urdf_read(MN_DATA "/robots/ur5/ur5_robot.urdf", &m, NULL, &err) == 0);
        if (c == 2) CHECK(mn_bvh_read(cases[0].path, NULL, &m, &mo, NULL, &err) == MN_OK);
        CHECK(m != NULL);
        if (!m) continue;
        if (c < 2) mo = random_motion(m, 25, 11 + (uint64_t)c);
        const char* out = mn_test_write_temp(".bvh", "", 0);
        CHECK(mn_bvh_write(out, m, &mo, &err) == MN_OK);
        size_t n;
        char* text = mn_test_read_file(out, &n);
        CHECK(text != NULL);
        int bvh_joints = text ? check_tokenised(text) : 0;
        if (c == 0 && text) {
            /* a compound joint is one BVH joint: 15 joints for the 31 frames */
            CHECK(bvh_joints == 15);
            CHECK(strstr(text, "JOINT right_arm\n") && !strstr(text, "right_arm.1"));
            CHECK(strstr(text, "\tJOINT torso\n\t{\n\t\tOFFSET 0 0.1 0\n\t\tCHANNELS 3 Zrotation "
                               "Xrotation Yrotation\n"));
            /* the wrist, two hinges (x, z), padded with y */
            CHECK(strstr(text, "JOINT right_hand\n") &&
                  strstr(text, "CHANNELS 3 Xrotation Zrotation Yrotation\n"));
        }
        if (c == 2 && text) {
            /* a mocap rig keeps its joints and channel lists */
            size_t n0;
            char* orig = mn_test_read_file(cases[0].path, &n0);
            CHECK(bvh_joints == cases[0].bvh_joints);
            const char* a = orig;
            const char* b = text;
            int lines = 0;
            while (orig && (a = strstr(a, "CHANNELS")) && (b = strstr(b, "CHANNELS"))) {
                size_t la = strcspn(a, "\r\n"), lb = strcspn(b, "\r\n");
                while (la > 0 && (a[la - 1] == ' '))
                    la--;
                CHECK(la == lb && memcmp(a, b, la) == 0);
                a += la, b += lb, lines++;
            }
            CHECK(lines == cases[0].bvh_joints);
            free(orig);
        }
        free(text);
        /* read back with the figure's names */
        mn_bvh_options opt = mn_bvh_default();
        opt.names_of = m;
        mn_model* m2 = NULL;
        mn_motion mo2;
        CHECK(mn_bvh_read(out, &opt, &m2, &mo2, NULL, &err) == MN_OK);
        if (m2) {
            double worst = fk_agreement(m, &mo, m2, &mo2);
            printf("  %s: %d joints -> %d, worst position error %.3g of the figure's size\n", what,
                   m->njoint, m2->njoint, worst);
            CHECK(worst <= 1e-9);
            /* every BVH joint has the figure's name back ("right arm", not "right_arm") */
            for (int j = 0; j < m2->njoint; j++)
                CHECK(mn_model_find_joint(m, m2->jnt_name[j]) >= 0 ||
                      strstr(m2->jnt_name[j], "_end") != NULL);
            if (c == 0) CHECK(mn_model_find_joint(m2, "right arm") >= 0);
            mn_motion_free(&mo2);
            mn_model_destroy(m2);
        }
        /* without the figure the names are the file's */
        CHECK(mn_bvh_read(out, NULL, &m2, &mo2, NULL, &err) == MN_OK);
        if (m2 && c == 0)
            CHECK(mn_model_find_joint(m2, "right_arm") >= 0 &&
                  mn_model_find_joint(m2, "right arm") < 0);
        mn_motion_free(&mo2);
        mn_model_destroy(m2);
        mn_motion_free(&mo);
        mn_model_destroy(m);
    }
    /* two names that write alike are refused, naming both joints */
    mn_spec* s = mn_spec_create("alike");
    mn_joint_def d = mn_joint_default();
    d.name = "a b";
    d.type = MN_JOINT_BALL;
    mn_spec_add_joint(s, &d, NULL);
    d.name = "a_b";
    d.parent = 0;
    d.offset = mn_v3(0, 1, 0);
    mn_spec_add_joint(s, &d, NULL);
    mn_model* m = mn_model_compile(s, &err);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    const char* out = mn_test_write_temp(".bvh", "", 0);
    CHECK(m && mn_bvh_write(out, m, NULL, &err) == MN_ERR_ARG);
    CHECK(strstr(err.message, "'a_b'") != NULL);
    mn_model_destroy(m);
}

/* ---- numbers --------------------------------------------------------------------------- */

/* The decimal parser gives exactly what strtod gives, on the fast path and off it. */
static void test_numbers_exact(void) {
    static const char* fixed[] = {"0",
                                  "-0",
                                  ".5",
                                  "5.",
                                  "-.0083333",
                                  "1e5",
                                  "1E-5",
                                  "+3.25",
                                  "123456789.012345678",
                                  "0.1",
                                  "0.30000000000000004",
                                  "900719925.4740993",
                                  "999999999.99999999999",
                                  "1234567890.123456789e-3",
                                  "4.9406564584124654e-324",
                                  "2.2250738585072011e-308",
                                  "0.000000000000000000000000000001234",
                                  "99999999999999999999e-15"};
    int nf = (int)(sizeof fixed / sizeof fixed[0]);
    int nrand = 2000, nrows = nf + nrand;
    size_t cap = (size_t)nrows * 48 + 256;
    char* text = malloc(cap);
    char** vals = malloc((size_t)nrows * sizeof *vals);
    size_t len =
        (size_t)snprintf(text, cap,
                         "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xposition\n}\nMOTION\n"
                         "Frames: %d\nFrame Time: 1\n",
                         nrows);
    uint64_t seed = 11;
    for (int i = 0; i < nrows; i++) {
        char num[40];
        if (i < nf) {
            snprintf(num, sizeof num, "%s", fixed[i]);
        } else {
            int digits = 1 + (int)(urand(&seed) * 22), e = (int)(urand(&seed) * 30) - 20;
            int k = 0;
            if (urand(&seed) < 0.5) num[k++] = '-';
            /* at most 9 digits before the point: the reader's range is |x| <= 1e9 */
            int dot = (int)(urand(&seed) * ((digits < 9 ? digits : 9) + 1));
            for (int d = 0; d < digits; d++) {
                if (d == dot) num[k++] = '.';
                num[k++] = (char)('0' + (int)(urand(&seed) * 10));
            }
            if (urand(&seed) < 0.3)
                k += snprintf(num + k, sizeof num - (size_t)k, "e%d", e < 0 ? e : -e / 4);
            num[k] = 0;
        }
        vals[i] = strdup(num);
        len += (size_t)snprintf(text + len, cap - len, "%s\n", num);
    }
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    CHECK(mn_bvh_read_mem(text, len, "numbers.bvh", NULL, &m, &mo, NULL, &err) == MN_OK);
    if (!m) fprintf(stderr, "  %s\n", err.message);
    int wrong = 0;
    for (int i = 0; m && i < nrows && i < mo.nframes; i++) {
        double ref = strtod(vals[i], NULL);
        if (fabs(ref) > 1e9) continue;
        if (memcmp(&(double){mo.q[i]}, &ref, sizeof ref) != 0 && !(mo.q[i] == 0 && ref == 0)) {
            if (wrong++ < 5)
                fprintf(stderr, "  '%s' read as %.17g, strtod %.17g\n", vals[i], mo.q[i], ref);
        }
    }
    CHECK(wrong == 0);
    for (int i = 0; i < nrows; i++)
        free(vals[i]);
    free(vals);
    free(text);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

/* ---- malformed input ------------------------------------------------------------------- */

#define HDR                                                                                        \
    "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition "         \
    "Zrotation Yrotation Xrotation\n"
#define ARM                                                                                        \
    "  JOINT Arm\n  {\n    OFFSET 1 0 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    End "   \
    "Site\n    {\n      OFFSET 1 0 0\n    }\n  }\n}\n"
#define MOT "MOTION\nFrames: 2\nFrame Time: 0.01\n"
#define ROW "0 1 2 3 4 5 6 7 8\n"

typedef struct bad_case {
    const char* what;
    const char* text;
    size_t len; /* 0: strlen */
    mn_status status;
    int line;
    const char* needle; /* text the message must contain */
} bad_case;

static void test_malformed(void) {
    static char deep[256 * 40 + 200];
    {
        size_t k = (size_t)sprintf(deep, "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\n");
        for (int i = 0; i < 257; i++)
            k += (size_t)sprintf(deep + k, "JOINT j%d\n{\nOFFSET 0 1 0\n", i);
    }
    static char long_name[600];
    snprintf(long_name, sizeof long_name, HDR "  JOINT %0300d\n", 7);
    static const char binary[] =
        "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n\0\x01\x02\xff garbage\n}\n";
    const bad_case bad[] = {
        {"empty file", "", 0, MN_ERR_PARSE, 1, "expected HIERARCHY"},
        {"not BVH", "hello world\n", 0, MN_ERR_PARSE, 1, "expected HIERARCHY"},
        {"no root", "HIERARCHY\nMOTION\n", 0, MN_ERR_PARSE, 2, "no ROOT"},
        {"truncated in hierarchy", HDR "  JOINT Arm\n  {\n    OFFSET 1 0", 0, MN_ERR_PARSE, 8,
         "missing z"},
        {"truncated after a brace", HDR "  JOINT Arm\n  {\n", 0, MN_ERR_PARSE, 8,
         "file ends inside joint 'Arm'"},
        {"truncated row", HDR ARM MOT ROW "0 1 2 3", 0, MN_ERR_PARSE, 20,
         "expected 9 numbers, found 4"},
        {"row too short", HDR ARM MOT "0 1 2 3 4 5 6 7\n" ROW, 0, MN_ERR_PARSE, 19,
         "frame 0: expected 9 numbers, found 8"},
        {"row too long", HDR ARM MOT ROW "0 1 2 3 4 5 6 7 8 9\n", 0, MN_ERR_PARSE, 20,
         "frame 1: expected 9 numbers, found 10"},
        {"channel count too small",
         HDR "  JOINT Arm\n  {\n    OFFSET 1 0 0\n    CHANNELS 3 Zrotation Xrotation\n", 0,
         MN_ERR_PARSE, 9, "expected 3 channel names, found 2"},
        {"channel count too large",
         HDR "  JOINT Arm\n  {\n    OFFSET 1 0 0\n    CHANNELS 2 Zrotation Xrotation Yrotation\n",
         0, MN_ERR_PARSE, 9, "expected 2 channel names, found 3"},
        {"channel count not a number",
         HDR "  JOINT Arm\n  {\n    OFFSET 1 0 0\n    CHANNELS three\n", 0, MN_ERR_PARSE, 9,
         "expected a count"},
        {"unknown channel",
         HDR "  JOINT Arm\n  {\n    OFFSET 1 0 0\n    CHANNELS 3 Zrotation Wrotation Yrotation\n",
         0, MN_ERR_PARSE, 9, "unknown channel 'Wrotation'"},
        {"position channel twice",
         HDR "  JOINT Arm\n  {\n    OFFSET 1 0 0\n    CHANNELS 2 Xposition Xposition\n", 0,
         MN_ERR_PARSE, 9, "Xposition given twice"},
        {"NaN offset", HDR "  JOINT Arm\n  {\n    OFFSET 1 nan 0\n", 0, MN_ERR_PARSE, 8,
         "not a number"},
        {"inf offset", HDR "  JOINT Arm\n  {\n    OFFSET 1 0 inf\n", 0, MN_ERR_PARSE, 8,
         "not a number"},
        {"huge offset", HDR "  JOINT Arm\n  {\n    OFFSET 1 1e300 0\n", 0, MN_ERR_PARSE, 8,
         "out of range"},
        {"overflowing number", HDR ARM MOT ROW "0 1 2 3 4 1e400 6 7 8\n", 0, MN_ERR_PARSE, 20,
         "column 6"},
        {"NaN in a row", HDR ARM MOT "0 1 2 NaN 4 5 6 7 8\n" ROW, 0, MN_ERR_PARSE, 19,
         "column 4: not a number"},
        {"huge in a row", HDR ARM MOT ROW "0 1 2 3 4 5 6 7 2e9\n", 0, MN_ERR_PARSE, 20,
         "out of range"},
        {"duplicate names",
         HDR "  JOINT Arm\n  {\n    OFFSET 1 0 0\n    CHANNELS 0\n  }\n  JOINT Arm\n  {\n    "
             "OFFSET 2 0 0\n  }\n}\n",
         0, MN_ERR_PARSE, 11, "duplicate joint name 'Arm'"},
        {"bad UTF-8 name", HDR "  JOINT Ar\xc3\x28m\n  {\n", 0, MN_ERR_PARSE, 6, "not valid UTF-8"},
        {"overlong UTF-8 name",
         HDR "  JOINT \xc0\xaf"
             "Arm\n  {\n",
         0, MN_ERR_PARSE, 6, "not valid UTF-8"},
        {"binary garbage", binary, sizeof binary - 1, MN_ERR_PARSE, 5, "unexpected"},
        {"missing brace", HDR "  JOINT Arm\n    OFFSET 1 0 0\n", 0, MN_ERR_PARSE, 7,
         "expected '{'"},
        {"extra closing brace", HDR ARM "}\n" MOT, 0, MN_ERR_PARSE, 16, "expected ROOT or MOTION"},
        {"children in an End Site", HDR "  End Site\n  {\n    OFFSET 0 1 0\n    JOINT x\n", 0,
         MN_ERR_PARSE, 9, "End Site has no children"},
        {"no OFFSET", HDR "  JOINT Arm\n  {\n  }\n}\n" MOT, 0, MN_ERR_PARSE, 6, "has no OFFSET"},
        {"OFFSET short", HDR "  JOINT Arm\n  {\n    OFFSET 1 0\n  }\n", 0, MN_ERR_PARSE, 8,
         "missing z"},
        {"nesting too deep", deep, 0, MN_ERR_PARSE, 0, "deeper than 256"},
        {"Frames not a count", HDR ARM "MOTION\nFrames: many\nFrame Time: 0.01\n", 0, MN_ERR_PARSE,
         17, "expected a count"},
        {"Frames negative", HDR ARM "MOTION\nFrames: -2\nFrame Time: 0.01\n", 0, MN_ERR_PARSE, 17,
         "expected a count"},
        {"no Frame Time", HDR ARM "MOTION\nFrames: 2\n" ROW, 0, MN_ERR_PARSE, 18, "Frame Time"},
        {"zero Frame Time", HDR ARM "MOTION\nFrames: 2\nFrame Time: 0\n", 0, MN_ERR_PARSE, 18,
         "positive"},
        {"letters in a row", HDR ARM MOT ROW "0 1 2 3 4 5 six 7 8\n", 0, MN_ERR_PARSE, 20,
         "column 7: not a number: 'six'"},
        {"hex number", HDR ARM MOT "0 1 2 3 4 5 0x6 7 8\n", 0, MN_ERR_PARSE, 19, "'0x6'"},
        {"channels on an End Site", HDR "  End Site\n  {\n    CHANNELS 1 Xrotation\n", 0,
         MN_ERR_PARSE, 8, "End Site has no channels"},
        {"keyword garbage", HDR "  JIONT Arm\n", 0, MN_ERR_PARSE, 6, "unexpected 'JIONT'"},
        {"name too long", long_name, 0, MN_ERR_PARSE, 6, "longer than 256 bytes"},
        {"UTF-16 text", "\xff\xfeH\0I\0E\0R\0A\0R\0C\0H\0Y\0\n\0", 22, MN_ERR_PARSE, 1,
         "expected HIERARCHY"},
        {"control character in a name", HDR "  JOINT Ar\x01m\n  {\n", 0, MN_ERR_PARSE, 6,
         "not valid UTF-8"},
        {"End Site crowd",
         HDR "  End Site\n  {\n    OFFSET 0 1 0\n  }\n  End Site\n  {\n    OFFSET 0 1 0\n  }\n}\n"
             "MOTION\nFrames: 1\nFrame Time: 1\n1 2 3 4 5 6 7\n",
         0, MN_ERR_PARSE, 18, "expected 6 numbers, found 7"},
        {"CRLF row too long",
         "HIERARCHY\r\nROOT a\r\n{\r\nOFFSET 0 0 0\r\nCHANNELS 1 "
         "Xrotation\r\n}\r\nMOTION\r\nFrames: 2\r\n"
         "Frame Time: 1\r\n1\r\n\r\n1 2\r\n",
         0, MN_ERR_PARSE, 12, "frame 1: expected 1 numbers, found 2"},
    };
    int n = (int)(sizeof bad / sizeof bad[0]);
    CHECK(n >= 15);
    for (int i = 0; i < n; i++) {
        const bad_case* b = &bad[i];
        size_t len = b->len ? b->len : strlen(b->text);
        mn_model* m = (mn_model*)&len; /* must come back NULL */
        mn_motion mo = {5, 5, 1, (double*)&len};
        mn_error err;
        mn_error_clear(&err);
        mn_status st = mn_bvh_read_mem(b->text, len, "bad.bvh", NULL, &m, &mo, NULL, &err);
        int ok = st == b->status && m == NULL && mo.q == NULL && mo.nframes == 0;
        char where[32];
        snprintf(where, sizeof where, "bad.bvh:%d:", b->line);
        if (b->line > 0)
            ok = ok && strncmp(err.message, where, strlen(where)) == 0 && err.line == b->line;
        ok = ok && strstr(err.message, b->needle) != NULL;
        if (!ok) {
            fprintf(stderr, "  case '%s': status %s, message '%s'\n", b->what, mn_status_name(st),
                    err.message);
            mn_test_failures++;
        }
        if (st == MN_OK) {
            mn_model_destroy(m);
            mn_motion_free(&mo);
        }
    }
}

/* More than 100000 joints is refused; 100000 is read. */
static void test_joint_limit(void) {
    for (int extra = 0; extra < 2; extra++) {
        int n = 100000 - 1 + extra; /* children of the root */
        size_t cap = (size_t)n * 40 + 256, k = 0;
        char* text = malloc(cap);
        k +=
            (size_t)snprintf(text + k, cap - k, "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 0\n");
        for (int i = 0; i < n; i++)
            k += (size_t)snprintf(text + k, cap - k, "JOINT j%d\n{\nOFFSET 0 1 0\n}\n", i);
        k += (size_t)snprintf(text + k, cap - k, "}\n");
        mn_model* m = NULL;
        mn_error err;
        mn_status st = mn_bvh_read_mem(text, k, "many.bvh", NULL, &m, NULL, NULL, &err);
        if (extra) {
            CHECK(st == MN_ERR_PARSE && m == NULL &&
                  strstr(err.message, "more than 100000 joints"));
        } else {
            CHECK(st == MN_OK && m && m->njoint == 100000);
        }
        mn_model_destroy(m);
        free(text);
    }
}

/* Frame counts that disagree with the data: the data wins and a warning names the line. */
static void test_frames_mismatch(void) {
    const char* text = HDR ARM "MOTION\nFrames: 5\nFrame Time: 0.01\n" ROW ROW "\n\n";
    mn_model* m = NULL;
    mn_motion mo;
    mn_warnings w = {0, ""};
    mn_error err;
    CHECK(mn_bvh_read_mem(text, strlen(text), "few.bvh", NULL, &m, &mo, &w, &err) == MN_OK);
    CHECK(mo.nframes == 2 && w.count == 1);
    CHECK(strstr(w.first, "few.bvh:17: Frames:") == w.first);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    /* skeleton only: no MOTION section */
    const char* skel = HDR ARM;
    w.count = 0;
    CHECK(mn_bvh_read_mem(skel, strlen(skel), "skel.bvh", NULL, &m, &mo, &w, &err) == MN_OK);
    CHECK(m && m->njoint == 3 && mo.nframes == 0 && w.count == 1);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    /* motion not wanted */
    CHECK(mn_bvh_read_mem(text, strlen(text), "few.bvh", NULL, &m, NULL, NULL, &err) == MN_OK);
    mn_model_destroy(m);
    /* "End Site" and keywords in other cases, names with spaces, brace on the name line */
    const char* odd =
        "\xef\xbb\xbfhierarchy\nroot Bip01 Pelvis {\n offset 0 0 0\n channels 3 zrotation "
        "xrotation yrotation\n"
        " joint \xc3\x84rm \xe8\x85\x95\n {\n offset 1 0 0\n }\n"
        " end site\n {\n offset 0 1 0\n }\n}\nmotion\nframes: 1\nframe time: 0.5\n10 20 30\n";
    CHECK(mn_bvh_read_mem(odd, strlen(odd), "odd.bvh", NULL, &m, &mo, NULL, &err) == MN_OK);
    CHECK(m && mn_model_find_joint(m, "Bip01 Pelvis") >= 0 &&
          mn_model_find_joint(m, "Bip01 Pelvis_end") >= 0);
    CHECK(m && mn_model_find_joint(m, "\xc3\x84rm \xe8\x85\x95") >= 0); /* UTF-8 names are kept */
    mn_motion_free(&mo);
    mn_model_destroy(m);
    /* several End Sites on one joint get numbered names */
    const char* ends =
        HDR "  End Site\n  {\n    OFFSET 0 1 0\n  }\n  End Site\n  {\n    OFFSET 0 2 0\n  }\n"
            "  End Site\n  {\n    OFFSET 0 3 0\n  }\n}\n";
    CHECK(mn_bvh_read_mem(ends, strlen(ends), "ends.bvh", NULL, &m, NULL, NULL, &err) == MN_OK);
    CHECK(m && m->njoint == 4 && mn_model_find_joint(m, "Hips_end") >= 0 &&
          mn_model_find_joint(m, "Hips_end2") >= 0 && mn_model_find_joint(m, "Hips_end3") >= 0);
    mn_model_destroy(m);
    /* compact spellings: braces run together, "Frames:2", "Frame Time :0.5", tabs */
    const char* tight =
        "HIERARCHY\nROOT a{\n\tOFFSET 0 0 0\n\tCHANNELS 1 Xrotation\n\tJOINT b\n\t{OFFSET 1 0 0\n"
        "\t\tEnd Site{\n\t\tOFFSET 0 1 0\n}}}\nMOTION\nFrames:2\nFrame Time :0.5\n\t1\n2\t\n";
    mn_error_clear(&err);
    CHECK(mn_bvh_read_mem(tight, strlen(tight), "tight.bvh", NULL, &m, &mo, NULL, &err) == MN_OK);
    if (!m) fprintf(stderr, "  %s\n", err.message);
    CHECK(m && m->njoint == 3 && mo.nframes == 2 && mo.frame_time == 0.5);
    if (m && mo.nframes == 2) CHECK_NEAR(mo.q[1], 2 * DEG, 1e-17);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_read_files);
    RUN(test_round_trip_files);
    RUN(test_write_mem);
    RUN(test_crlf_lf);
    RUN(test_scale);
    RUN(test_unusual_channels);
    RUN(test_write_any_model);
    RUN(test_files_every_reader_opens);
    RUN(test_numbers_exact);
    RUN(test_malformed);
    RUN(test_frames_mismatch);
    RUN(test_joint_limit);
    return mn_test_report();
}
