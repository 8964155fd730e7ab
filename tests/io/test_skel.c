/* The thesis skeleton text format: the stickman, the Fig. 6.1 text itself, read -> write
 * -> read round trips (identical joints, FK equal to 1e-12), mirror images checked
 * through FK, compound joints, and a table of malformed inputs. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

#define DEG (MN_PI / 180.0)

static unsigned long long rng_state = 0x2545F4914F6CDD1Dull;
static double rnd(double lo, double hi) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

static mn_model* read_text(const char* text, const char* name) {
    mn_model* m = NULL;
    mn_error err;
    mn_error_clear(&err);
    mn_status s = mn_skel_read_mem(text, strlen(text), name, &m, NULL, &err);
    if (s) fprintf(stderr, "%s\n", err.message);
    CHECK(s == MN_OK && m != NULL);
    return m;
}

/* Writes m to a temporary file and reads it back. */
static mn_model* write_read(const mn_model* m, char** text_out) {
    const char* path = mn_test_write_temp(".skel", "", 0);
    mn_error err;
    mn_status s = mn_skel_write(path, m, &err);
    if (s) fprintf(stderr, "%s\n", err.message);
    CHECK(s == MN_OK);
    mn_model* r = NULL;
    s = mn_skel_read(path, &r, NULL, &err);
    if (s) fprintf(stderr, "%s\n", err.message);
    CHECK(s == MN_OK && r != NULL);
    if (text_out) *text_out = mn_test_read_file(path, NULL);
    return r;
}

/* Random state: hinges/slides inside their limits (or +-pi), balls and free joints a
 * random rotation, free translation random. */
static void random_q(const mn_model* m, double* q) {
    for (int j = 0; j < m->njoint; j++) {
        double* x = q + m->jnt_qadr[j];
        switch (m->jnt_type[j]) {
        case MN_JOINT_HINGE:
        case MN_JOINT_SLIDE:
            x[0] = m->jnt_limited[j] ? rnd(m->jnt_range[2 * j], m->jnt_range[2 * j + 1])
                                     : rnd(-MN_PI, MN_PI);
            break;
        case MN_JOINT_BALL: {
            mn_quat r = mn_quat_normalize(mn_q4(rnd(-1, 1), rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)));
            x[0] = r.w, x[1] = r.x, x[2] = r.y, x[3] = r.z;
            break;
        }
        case MN_JOINT_FREE: {
            mn_quat r = mn_quat_normalize(mn_q4(rnd(-1, 1), rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)));
            x[0] = rnd(-1, 1), x[1] = rnd(-1, 1), x[2] = rnd(-1, 1);
            x[3] = r.w, x[4] = r.x, x[5] = r.y, x[6] = r.z;
            break;
        }
        default:
            break;
        }
    }
}

static double frame_diff(const mn_xform* a, const mn_xform* b) {
    double e = 0;
    for (int i = 0; i < 9; i++)
        e = fmax(e, fabs(a->R.m[i] - b->R.m[i]));
    e = fmax(e, mn_vec3_dist(a->p, b->p));
    return e;
}

/* Same joints (names, tree, types, placement, axes, limits, segment, rest state) and the
 * same FK at random states. */
static void check_same_model(const mn_model* a, const mn_model* b) {
    CHECK(a->njoint == b->njoint && a->nq == b->nq && a->nv == b->nv);
    if (a->njoint != b->njoint || a->nq != b->nq) return;
    for (int j = 0; j < a->njoint; j++) {
        int ok = !strcmp(a->jnt_name[j], b->jnt_name[j]) && a->jnt_parent[j] == b->jnt_parent[j] &&
                 a->jnt_type[j] == b->jnt_type[j] && a->jnt_qadr[j] == b->jnt_qadr[j];
        if (!ok) fprintf(stderr, "joint %d: %s vs %s\n", j, a->jnt_name[j], b->jnt_name[j]);
        CHECK(ok);
        if (!ok) return;
        int t = a->jnt_type[j];
        CHECK(mn_vec3_dist(a->jnt_offset[j], b->jnt_offset[j]) == 0);
        CHECK(fabs(mn_quat_dot(a->jnt_orient[j], b->jnt_orient[j])) > 1 - 1e-15);
        if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE || t == MN_JOINT_BALL)
            CHECK(mn_vec3_dist(a->jnt_axis[j], b->jnt_axis[j]) == 0);
        CHECK(a->jnt_limited[j] == b->jnt_limited[j]);
        if (a->jnt_limited[j] && (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE)) {
            CHECK(a->jnt_range[2 * j] == b->jnt_range[2 * j]);
            CHECK(a->jnt_range[2 * j + 1] == b->jnt_range[2 * j + 1]);
        }
        if (a->jnt_limited[j] && t == MN_JOINT_BALL) {
            CHECK(a->jnt_swing[j] == b->jnt_swing[j]);
            CHECK(a->jnt_twist[2 * j] == b->jnt_twist[2 * j]);
            CHECK(a->jnt_twist[2 * j + 1] == b->jnt_twist[2 * j + 1]);
        }
        CHECK(a->jnt_mass[j] == b->jnt_mass[j]);
        CHECK(a->jnt_locked[j] == b->jnt_locked[j]);
        CHECK(mn_vec3_dist(a->jnt_com[j], b->jnt_com[j]) == 0);
        CHECK(a->jnt_stiffness[j] == b->jnt_stiffness[j]);
        CHECK(a->jnt_rot_order[j] == b->jnt_rot_order[j]);
        CHECK((a->jnt_object[j] == NULL) == (b->jnt_object[j] == NULL));
        if (a->jnt_object[j] && b->jnt_object[j])
            CHECK(!strcmp(a->jnt_object[j], b->jnt_object[j]));
    }
    for (int k = 0; k < a->nq; k++)
        CHECK(a->q0[k] == b->q0[k]);
    CHECK_NEAR(a->total_mass, b->total_mass, 1e-12);
    mn_data* da = mn_data_create(a, 0);
    mn_data* db = mn_data_create(b, 0);
    CHECK(da && db);
    if (!da || !db) return;
    double worst = 0;
    for (int t = 0; t < 20; t++) {
        random_q(a, da->q);
        memcpy(db->q, da->q, sizeof(double) * (size_t)a->nq);
        mn_fk(a, da);
        mn_fk(b, db);
        for (int j = 0; j < a->njoint; j++)
            worst = fmax(worst, frame_diff(&da->xf[j], &db->xf[j]));
    }
    CHECK_NEAR(worst, 0, 1e-12);
    mn_data_destroy(da);
    mn_data_destroy(db);
}

/* ---- the stickman ---------------------------------------------------------------------- */
static const char* thesis_names[11] = {"pelvis",     "torso",     "right arm", "right hand",
                                       "left arm",   "left hand", "head",      "right leg",
                                       "right foot", "left leg",  "left foot"};

static void test_stickman(void) {
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    CHECK(m != NULL);
    if (!m) return;
    for (int i = 0; i < 11; i++)
        CHECK(mn_model_find_joint(m, thesis_names[i]) >= 0);
    /* as designed: a free pelvis and compound hinges: torso, head, shoulders, hips 3 DOF,
     * wrists and ankles 2 DOF, elbows and knees 1 DOF */
    CHECK(m->njoint == 31);
    CHECK(m->nv == 36);
    CHECK(m->nq == 37);
    CHECK(m->nroot == 1);
    CHECK_NEAR(m->total_mass, 70.0, 1e-9);
    int pelvis = mn_model_find_joint(m, "pelvis");
    CHECK(m->jnt_type[pelvis] == MN_JOINT_FREE && m->jnt_parent[pelvis] == -1);
    /* the thesis hierarchy between the named joints */
    struct {
        const char *child, *parent;
    } tree[] = {
        {"torso", "pelvis"},          {"right arm", "torso"},
        {"right elbow", "right arm"}, {"right hand", "right elbow"},
        {"left arm", "torso"},        {"left elbow", "left arm"},
        {"left hand", "left elbow"},  {"head", "torso"},
        {"right leg", "pelvis"},      {"right knee", "right leg"},
        {"right foot", "right knee"}, {"left leg", "pelvis"},
        {"left knee", "left leg"},    {"left foot", "left knee"},
    };
    for (size_t i = 0; i < sizeof tree / sizeof tree[0]; i++) {
        int c = mn_model_find_joint(m, tree[i].child), p = mn_model_find_joint(m, tree[i].parent);
        CHECK(c >= 0 && p >= 0 && mn_model_is_ancestor(m, p, c));
        /* the frames in between are the child's own compound frames "child.k" */
        for (int j = m->jnt_parent[c]; j != p && j >= 0; j = m->jnt_parent[j])
            CHECK(!strncmp(m->jnt_name[j], tree[i].child, strlen(tree[i].child)));
    }
    int a1 = mn_model_find_joint(m, "right arm.1"), a2 = mn_model_find_joint(m, "right arm.2"),
        a3 = mn_model_find_joint(m, "right arm");
    CHECK(a1 >= 0 && m->jnt_parent[a2] == a1 && m->jnt_parent[a3] == a2);
    CHECK(m->jnt_mass[a1] == 0 && m->jnt_mass[a3] == 1.9);
    /* every hinge is limited; every joint frame has a limit in a human range */
    for (int j = 0; j < m->njoint; j++)
        if (m->jnt_type[j] == MN_JOINT_HINGE) {
            CHECK(m->jnt_limited[j]);
            CHECK(m->jnt_range[2 * j] >= -MN_PI && m->jnt_range[2 * j + 1] <= MN_PI);
            CHECK(m->jnt_range[2 * j] <= 0 && m->jnt_range[2 * j + 1] >= 0);
        }
    /* proportions at rest: about 1.75 m tall, left side on +x, facing +z */
    mn_data* d = mn_data_create(m, 0);
    mn_fk(m, d);
    int head = mn_model_find_joint(m, "head"), rf = mn_model_find_joint(m, "right foot"),
        lh = mn_model_find_joint(m, "left hand"), rh = mn_model_find_joint(m, "right hand");
    double top = mn_point_world(d, head, mn_v3(0, 0.25, 0)).y;
    CHECK(top > 1.70 && top < 1.80);
    CHECK(d->xf[rf].p.y > 0.03 && d->xf[rf].p.y < 0.12);
    CHECK(d->xf[lh].p.x > 0.1 && d->xf[rh].p.x < -0.1);
    double mass;
    mn_vec3 com = mn_com(m, d, -1, &mass);
    CHECK_NEAR(mass, 70, 1e-9);
    CHECK(com.y > 0.85 && com.y < 1.10); /* a standing adult's centre of mass: ~55% of height */
    CHECK_NEAR(com.x, 0, 1e-12);
    /* the foot's centre of mass lies forward of the ankle (+z) */
    CHECK(mn_point_world(d, rf, m->jnt_com[rf]).z > d->xf[rf].p.z);
    mn_data_destroy(d);
    /* mn_stickman_text is what the model was read from */
    mn_model* again = read_text(mn_stickman_text(), "stickman");
    if (again) check_same_model(m, again);
    mn_model_destroy(again);
    mn_model_destroy(m);
}

/* ---- Fig. 6.1 as printed (typographic quotes and minus sign of the thesis text) -------- */
static const char fig61[] =
    "# Example .scr file for a stick figure.\n"
    "define skeleton \xE2\x80\x9Cstickman\xE2\x80\x9D\n"
    "  joint \xE2\x80\x9Cpelvis\xE2\x80\x9D\n"
    "  group \xE2\x80\x9CUpper body\xE2\x80\x9D\n"
    "    joint \xE2\x80\x9Ctorso\xE2\x80\x9D\n"
    "    group \xE2\x80\x9CRight Arm\xE2\x80\x9D\n"
    "      joint \xE2\x80\x9Cright arm\xE2\x80\x9D\n"
    "      joint \xE2\x80\x9Cright hand\xE2\x80\x9D\n"
    "    end group\n"
    "    group \xE2\x80\x9CLeft arm\xE2\x80\x9D\n"
    "      joint \xE2\x80\x9Cleft arm\xE2\x80\x9D\n"
    "      joint \xE2\x80\x9Cleft hand\xE2\x80\x9D\n"
    "    end group\n"
    "    joint \xE2\x80\x9Chead\xE2\x80\x9D # \xE2\x80\x9Chead\xE2\x80\x9D is a child of "
    "\xE2\x80\x9Ctorso\xE2\x80\x9D\n"
    "  end group\n"
    "  group \xE2\x80\x9CRight leg\xE2\x80\x9D\n"
    "    joint \xE2\x80\x9Cright leg\xE2\x80\x9D\n"
    "    joint \xE2\x80\x9Cright foot\xE2\x80\x9D\n"
    "  end group\n"
    "  group \xE2\x80\x9CLeft leg\xE2\x80\x9D\n"
    "    joint \xE2\x80\x9Cleft leg\xE2\x80\x9D\n"
    "    joint \xE2\x80\x9Cleft foot\xE2\x80\x9D\n"
    "  end group\n"
    "end skeleton\n"
    "\n"
    "define joint \xE2\x80\x9Cright leg\xE2\x80\x9D\n"
    "  object \xE2\x80\x9Cr_lleg.pol\xE2\x80\x9D\n"
    "  offset 0 \xE2\x88\x92"
    "0.32 0\n"
    "  hinge x 0 170\n"
    "  mass 1\n"
    "  orientation 0 0 0\n"
    "  mirror \xE2\x80\x9Cleft leg\xE2\x80\x9D\n"
    "end joint\n";

static void test_fig61(void) {
    mn_model* m = read_text(fig61, "fig6_1.scr");
    if (!m) return;
    CHECK(m->njoint == 11);
    CHECK(m->nv == 6 + 2);
    for (int i = 0; i < 11; i++)
        CHECK(mn_model_find_joint(m, thesis_names[i]) >= 0);
    int pelvis = mn_model_find_joint(m, "pelvis"), torso = mn_model_find_joint(m, "torso"),
        head = mn_model_find_joint(m, "head"), rl = mn_model_find_joint(m, "right leg"),
        ll = mn_model_find_joint(m, "left leg"), rh = mn_model_find_joint(m, "right hand"),
        ra = mn_model_find_joint(m, "right arm"), lf = mn_model_find_joint(m, "left foot");
    CHECK(m->jnt_type[pelvis] == MN_JOINT_FREE); /* the skeleton's translation */
    CHECK(m->jnt_parent[head] == torso);         /* after the arm groups: torso again */
    CHECK(m->jnt_parent[torso] == pelvis);
    CHECK(m->jnt_parent[rl] == pelvis && m->jnt_parent[ll] == pelvis);
    CHECK(m->jnt_parent[rh] == ra);
    CHECK(m->jnt_parent[lf] == ll);
    CHECK(m->jnt_type[torso] == MN_JOINT_FIXED); /* no DOF line: fixed */
    CHECK(m->jnt_type[rl] == MN_JOINT_HINGE && m->jnt_limited[rl]);
    CHECK_NEAR(m->jnt_range[2 * rl], 0, 0);
    CHECK_NEAR(m->jnt_range[2 * rl + 1], 170 * DEG, 1e-15);
    CHECK_NEAR(m->jnt_offset[rl].y, -0.32, 0);
    CHECK(m->jnt_object[rl] && !strcmp(m->jnt_object[rl], "r_lleg.pol"));
    CHECK_NEAR(m->jnt_mass[rl], 1, 0);
    /* the mirror: same limits, x axis kept (an axial vector along x), offset x negated */
    CHECK(m->jnt_type[ll] == MN_JOINT_HINGE && m->jnt_limited[ll]);
    CHECK(m->jnt_range[2 * ll] == m->jnt_range[2 * rl]);
    CHECK(m->jnt_range[2 * ll + 1] == m->jnt_range[2 * rl + 1]);
    CHECK_NEAR(m->jnt_axis[ll].x, 1, 0);
    CHECK_NEAR(m->jnt_offset[ll].y, -0.32, 0);
    CHECK_NEAR(m->total_mass, 2, 0);
    mn_model* r = write_read(m, NULL);
    if (r) check_same_model(m, r);
    mn_model_destroy(r);
    mn_model_destroy(m);
}

/* Fig. 6.1 as files are often written: the mirror line and the mirrored side spelled out
 * as well, with comments between and inside blocks. The explicit block is the joint (here
 * a knee that bends 160 degrees, not the mirror's 170); the mirror line is a note. */
static void test_fig61_both_sides(void) {
    static const char both[] = "# both legs written out\n"
                               "define skeleton \"s\"   # a comment after a keyword line\n"
                               "  joint \"pelvis\"\n"
                               "  group \"Right leg\" # the right side\n"
                               "    joint \"right leg\"\n"
                               "  end group\n"
                               "  # a comment between groups\n"
                               "  group \"Left leg\"\n"
                               "    joint \"left leg\"\n"
                               "  end group\n"
                               "end skeleton\n"
                               "define joint \"right leg\"\n"
                               "  offset 0.1 -0.32 0   # hip width\n"
                               "  hinge x 0 170\n"
                               "  # the left side mirrors this one\n"
                               "  mirror \"left leg\"\n"
                               "end joint\n"
                               "# and the left side, spelled out anyway\n"
                               "define joint \"left leg\"\n"
                               "  offset -0.1 -0.32 0\n"
                               "  hinge x 0 160\n"
                               "end joint\n";
    mn_model* m = read_text(both, "both.scr");
    CHECK(m != NULL);
    if (!m) return;
    int rl = mn_model_find_joint(m, "right leg"), ll = mn_model_find_joint(m, "left leg");
    CHECK(rl >= 0 && ll >= 0);
    CHECK_NEAR(m->jnt_range[2 * rl + 1], 170 * DEG, 1e-15);
    CHECK_NEAR(m->jnt_range[2 * ll + 1], 160 * DEG, 1e-15); /* its own block */
    CHECK_NEAR(m->jnt_offset[ll].x, -0.1, 0);
    CHECK_NEAR(m->jnt_offset[rl].x, 0.1, 0);
    mn_model_destroy(m);
    /* the same file without the explicit left block: the mirror defines it */
    const char* cut = strstr(both, "# and the left side");
    char only_mirror[sizeof both];
    size_t n = (size_t)(cut - both);
    memcpy(only_mirror, both, n);
    only_mirror[n] = 0;
    m = read_text(only_mirror, "mirror_only.scr");
    CHECK(m != NULL);
    if (!m) return;
    ll = mn_model_find_joint(m, "left leg");
    CHECK_NEAR(m->jnt_range[2 * ll + 1], 170 * DEG, 1e-15);
    CHECK_NEAR(m->jnt_offset[ll].x, -0.1, 0);
    mn_model_destroy(m);
}

/* ---- the file's layout kept -------------------------------------------------------------- */

/* Fig. 6.1 as docs/skeleton-format.md reconstructs it: groups with their names, comments,
 * one side spelled out and the other a mirror. */
static const char fig61_text[] =
    "# Example .scr file for a stick figure.\n"
    "define skeleton \"stickman\"\n"
    "  joint \"pelvis\"\n"
    "  group \"Upper body\"\n"
    "    joint \"torso\"\n"
    "    group \"Right Arm\"\n"
    "      joint \"right arm\"\n"
    "      joint \"right hand\"\n"
    "    end group\n"
    "    group \"Left arm\"\n"
    "      joint \"left arm\"\n"
    "      joint \"left hand\"\n"
    "    end group\n"
    "    joint \"head\"            # \"head\" is a child of \"torso\"\n"
    "  end group\n"
    "  group \"Right leg\"\n"
    "    joint \"right leg\"\n"
    "    joint \"right foot\"\n"
    "  end group\n"
    "  group \"Left leg\"\n"
    "    joint \"left leg\"\n"
    "    joint \"left foot\"\n"
    "  end group\n"
    "end skeleton\n"
    "\n"
    "define joint \"right leg\"\n"
    "  object \"r_lleg.pol\"\n"
    "  offset 0 -0.32 0\n"
    "  hinge x 0 170\n"
    "  mass 1\n"
    "  orientation 0 0 0\n"
    "  mirror \"left leg\"\n"
    "end joint\n";

/* Reads text with its layout, writes it back: the same bytes; and the text read again
 * gives the same model. */
static void check_layout_round_trip(const char* text, const char* name) {
    mn_model* m = NULL;
    mn_skel_layout* l = NULL;
    mn_error err;
    CHECK(mn_skel_read_layout_mem(text, strlen(text), name, &m, &l, NULL, &err) == MN_OK);
    if (!m || !l) {
        mn_model_destroy(m);
        mn_skel_layout_free(l);
        return;
    }
    char* out = NULL;
    size_t n = 0;
    CHECK(mn_skel_write_layout_mem(m, l, &out, &n, &err) == MN_OK);
    CHECK(out && n == strlen(text) && !strcmp(out, text));
    if (out && strcmp(out, text)) fprintf(stderr, "%s written back:\n%s\n", name, out);
    mn_model* b = out ? read_text(out, name) : NULL;
    CHECK(b && b->njoint == m->njoint && b->nq == m->nq);
    /* and through a file */
    const char* path = mn_test_write_temp(".skel", "", 0);
    CHECK(path && mn_skel_write_layout(path, m, l, &err) == MN_OK);
    size_t fn = 0;
    char* file = path ? mn_test_read_file(path, &fn) : NULL;
    CHECK(file && fn == n && out && !memcmp(file, out, n));
    free(file);
    free(out);
    mn_model_destroy(b);
    mn_model_destroy(m);
    mn_skel_layout_free(l);
}

static void test_layout_fig61(void) {
    check_layout_round_trip(fig61_text, "fig61.scr");
    /* a mirror and the mirrored side defined as well, comments in every place */
    static const char both[] = "# both legs written out\n"
                               "define skeleton \"s\"   # a comment after a keyword line\n"
                               "  joint \"pelvis\"\n"
                               "  group \"Right leg\" # the right side\n"
                               "    joint \"right leg\"\n"
                               "  end group\n"
                               "  # a comment between groups\n"
                               "  group \"Left leg\"\n"
                               "    joint \"left leg\"\n"
                               "  end group\n"
                               "end skeleton\n"
                               "define joint \"right leg\"\n"
                               "  offset 0.1 -0.32 0   # hip width\n"
                               "  hinge x 0 170\n"
                               "  # the left side mirrors this one\n"
                               "  mirror \"left leg\" # mirrored\n"
                               "end joint # right\n"
                               "\n"
                               "# and the left side, spelled out anyway\n"
                               "define joint \"left leg\"\n"
                               "  offset -0.1 -0.32 0\n"
                               "  hinge x 0 160\n"
                               "end joint\n"
                               "# the end";
    check_layout_round_trip(both, "both.scr");
    /* the plain writer keeps none of it */
    mn_model* m = read_text(fig61_text, "fig61.scr");
    char* text = NULL;
    mn_model* b = m ? write_read(m, &text) : NULL;
    CHECK(text && !strstr(text, "mirror") && !strstr(text, "Upper body") &&
          !strstr(text, "is a child of"));
    free(text);
    mn_model_destroy(b);
    mn_model_destroy(m);
}

/* A model changed after reading keeps the layout where it still fits: the right leg's mass
 * changed, the mirror no longer gives the left leg, which is then written out (the mirror
 * line kept); a hierarchy changed gives the plain writer's text. Either reads back to the
 * changed model. */
static void test_layout_after_edits(void) {
    mn_model* m = NULL;
    mn_skel_layout* l = NULL;
    mn_error err;
    CHECK(mn_skel_read_layout_mem(fig61_text, strlen(fig61_text), "fig61.scr", &m, &l, NULL,
                                  &err) == MN_OK);
    if (!m || !l) return;
    int rl = mn_model_find_joint(m, "right leg");
    m->jnt_mass[rl] = 2.5;
    char* out = NULL;
    size_t n = 0;
    CHECK(mn_skel_write_layout_mem(m, l, &out, &n, &err) == MN_OK);
    CHECK(out && strstr(out, "  mass 2.5\n  orientation 0 0 0\n  mirror \"left leg\"\n"));
    CHECK(out && strstr(out, "define joint \"left leg\"") && strstr(out, "group \"Upper body\""));
    CHECK(out && strstr(out, "# \"head\" is a child of \"torso\""));
    mn_model* b = out ? read_text(out, "edited.scr") : NULL;
    int bl = b ? mn_model_find_joint(b, "left leg") : -1,
        br = b ? mn_model_find_joint(b, "right leg") : -1;
    CHECK(bl >= 0 && br >= 0 && b->jnt_mass[br] == 2.5 && b->jnt_mass[bl] == 1);
    free(out);
    mn_model_destroy(b);
    /* a layout of another figure: the plain text */
    mn_model* other = mn_stickman_model(&err);
    CHECK(other && mn_skel_write_layout_mem(other, l, &out, &n, &err) == MN_OK);
    CHECK(out && strstr(out, "# Skeleton in the thesis text format") && !strstr(out, "Upper body"));
    b = out ? read_text(out, "other.scr") : NULL;
    CHECK(b && other && b->njoint == other->njoint);
    free(out);
    mn_model_destroy(b);
    mn_model_destroy(other);
    mn_model_destroy(m);
    mn_skel_layout_free(l);
}

/* ---- round trips ----------------------------------------------------------------------- */
static const char every_feature[] =
    "define skeleton \"every \\\"feature\\\"\"\n"
    "  group \"first root\"\n"
    "    joint \"base\"\n"
    "    joint \"slider\"\n"
    "    group \"g\"\n"
    "      joint \"shoulder\"\n"
    "      joint \"elbow\"\n"
    "    end group\n"
    "    joint \"spin\"\n"
    "  end group\n"
    "  group \"second root\"\n"
    "    joint \"floater\"\n"
    "    joint \"tip\"\n"
    "  end group\n"
    "end skeleton\n"
    "define joint \"base\" fixed offset 0.1 0.2 0.3 end joint\n"
    "define joint \"slider\"\n"
    "  offset 0 0.5 0 orientation 10 -20 30\n"
    "  slide 1 2 2 -0.25 0.75 rest 0.125\n"
    "  stiffness 2.5 order XYZ mass 0.75 com 0.1 0 0 locked translation\n"
    "end joint\n"
    "define joint \"shoulder\" offset 0.3 0 0\n"
    "  ball axis y swing 80 twist -45 30 rest 0.9 0.1 0.2 0.3\n"
    "  hinge z -10 120 rest 15 locked rotation\n"
    "  object \"arm \\\\ mesh\"\n"
    "end joint\n"
    "define joint \"elbow\" offset 0 -0.3 0 hinge 0.6 0.8 0 0 150 end joint\n"
    "define joint \"spin\" hinge y end joint   # unlimited\n"
    "define joint \"floater\" free rest 1 2 3 0.5 0.5 0.5 0.5 end joint\n"
    "define joint \"tip\" offset 0 0 1 ball end joint\n";

static void test_round_trip(void) {
    /* the stickman, Fig. 6.1 (above) and a file with every keyword */
    mn_error err;
    mn_model* s = mn_stickman_model(&err);
    char* text1 = NULL;
    char* text2 = NULL;
    mn_model* r = s ? write_read(s, &text1) : NULL;
    if (r) check_same_model(s, r);
    /* written again, the text is the same: the writer is stable */
    mn_model* r2 = r ? write_read(r, &text2) : NULL;
    CHECK(text1 && text2 && !strcmp(text1, text2));
    /* compound joints are written back as compounds, with the thesis names only */
    CHECK(text1 && strstr(text1, "define joint \"right arm\"") &&
          !strstr(text1, "\"right arm.1\""));
    free(text1), free(text2);
    mn_model_destroy(r2);
    mn_model_destroy(r);
    mn_model_destroy(s);

    mn_model* e = read_text(every_feature, "every.skel");
    if (e) {
        CHECK(e->nroot == 2);
        CHECK(e->nv == 0 + 1 + 3 + 1 + 1 + 1 + 6 + 3);
        int sh = mn_model_find_joint(e, "shoulder"), sh1 = mn_model_find_joint(e, "shoulder.1");
        CHECK(sh >= 0 && sh1 >= 0 && e->jnt_type[sh1] == MN_JOINT_BALL && e->jnt_limited[sh1]);
        CHECK_NEAR(e->jnt_swing[sh1], 80 * DEG, 1e-15);
        CHECK(e->jnt_object[sh] && !strcmp(e->jnt_object[sh], "arm \\ mesh"));
        CHECK_NEAR(e->q0[e->jnt_qadr[sh]], 15 * DEG, 1e-15);
        int el = mn_model_find_joint(e, "elbow");
        CHECK_NEAR(e->jnt_axis[el].x, 0.6, 1e-15);
        int sl = mn_model_find_joint(e, "slider");
        CHECK(e->jnt_type[sl] == MN_JOINT_SLIDE && e->jnt_rot_order[sl] == MN_EULER_XYZ);
        CHECK_NEAR(e->jnt_stiffness[sl], 2.5, 0);
        /* locked: every frame of the joint holds the DOFs of that kind */
        CHECK(e->jnt_locked[sl] == MN_LOCK_TRANSLATION && e->dof_locked[e->jnt_dofadr[sl]] == 1);
        CHECK(e->jnt_locked[sh] == MN_LOCK_ROTATION && e->jnt_locked[sh1] == MN_LOCK_ROTATION);
        CHECK(e->nlocked == 1 + 3 + 1);
        /* orientation 10 -20 30 (XYZ degrees) */
        double ang[3] = {10 * DEG, -20 * DEG, 30 * DEG};
        mn_quat q = mn_euler_to_quat(MN_EULER_XYZ, ang);
        CHECK(fabs(mn_quat_dot(q, e->jnt_orient[sl])) > 1 - 1e-15);
        int base = mn_model_find_joint(e, "base");
        CHECK(e->jnt_type[base] == MN_JOINT_FIXED && e->jnt_parent[base] < 0);
        CHECK(!strcmp(e->name, "every \"feature\""));
        mn_model* back = write_read(e, NULL);
        if (back) check_same_model(e, back);
        mn_model_destroy(back);
        mn_model_destroy(e);
    }

    /* a URDF robot written as a skeleton reads back to the same model */
    mn_model* panda = NULL;
    if (mn_urdf_read(MN_DATA "/robots/franka_panda/panda.urdf", &panda, NULL, &err) == MN_OK) {
        mn_model* back = write_read(panda, NULL);
        if (back) {
            CHECK(back->njoint == panda->njoint && back->nv == panda->nv);
            /* URDF rest orientations go through XYZ Euler angles: equal to rounding */
            mn_data* a = mn_data_create(panda, 0);
            mn_data* b = mn_data_create(back, 0);
            double worst = 0;
            for (int t = 0; t < 10; t++) {
                random_q(panda, a->q);
                memcpy(b->q, a->q, sizeof(double) * (size_t)panda->nq);
                mn_fk(panda, a);
                mn_fk(back, b);
                for (int j = 0; j < panda->njoint; j++)
                    worst = fmax(worst, frame_diff(&a->xf[j], &b->xf[j]));
            }
            CHECK_NEAR(worst, 0, 1e-12);
            mn_data_destroy(a);
            mn_data_destroy(b);
        }
        mn_model_destroy(back);
        mn_model_destroy(panda);
    } else {
        CHECK(0);
    }
}

/* Figures read from BVH (FREE roots, BALL joints with their Euler orders, End Sites)
 * write and read back unchanged. */
static void test_bvh_figures(void) {
    const char* files[] = {MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh",
                           MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh",
                           MN_DATA "/mocap/other_skeleton/Boxing_Toes.bvh"};
    for (int i = 0; i < 3; i++) {
        mn_model* m = NULL;
        mn_error err;
        mn_bvh_options opt = mn_bvh_default();
        mn_status s = mn_bvh_read(files[i], &opt, &m, NULL, NULL, &err);
        if (s) fprintf(stderr, "%s\n", err.message);
        CHECK(s == MN_OK && m);
        if (!m) continue;
        mn_model* back = write_read(m, NULL);
        if (back) check_same_model(m, back);
        mn_model_destroy(back);
        mn_model_destroy(m);
    }
}

/* ---- mirror ---------------------------------------------------------------------------- */
/* M = diag(-1, 1, 1): positions x -> -x, rotations M R M. */
static double mirror_diff(const mn_xform* right, const mn_xform* left) {
    static const double M[3] = {-1, 1, 1};
    double e =
        fabs(-right->p.x - left->p.x) + fabs(right->p.y - left->p.y) + fabs(right->p.z - left->p.z);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            e = fmax(e, fabs(M[i] * right->R.m[3 * i + k] * M[k] - left->R.m[3 * i + k]));
    return e;
}

/* Poses the "right ..." frames at random, the "left ..." frames with the mirrored values
 * (hinge and slide: the same; ball: (w, x, -y, -z)), everything else at rest, and checks
 * that every left frame and segment centre is the mirror image of the right one. */
static void check_mirror(const mn_model* m, int trials) {
    mn_data* d = mn_data_create(m, 0);
    if (!d) {
        CHECK(0);
        return;
    }
    int pairs = 0;
    double worst = 0;
    for (int t = 0; t < trials; t++) {
        mn_data_reset(m, d);
        double* rq = malloc(sizeof(double) * (size_t)m->nq);
        random_q(m, rq);
        for (int j = 0; j < m->njoint; j++) {
            const char* n = m->jnt_name[j];
            if (strncmp(n, "right ", 6)) continue;
            char ln[300];
            snprintf(ln, sizeof ln, "left %s", n + 6);
            int l = mn_model_find_joint(m, ln);
            CHECK(l >= 0);
            if (l < 0) continue;
            CHECK(m->jnt_type[l] == m->jnt_type[j]);
            const double* src = rq + m->jnt_qadr[j];
            double* rqd = d->q + m->jnt_qadr[j];
            double* lqd = d->q + m->jnt_qadr[l];
            switch (m->jnt_type[j]) {
            case MN_JOINT_HINGE:
            case MN_JOINT_SLIDE:
                rqd[0] = lqd[0] = src[0];
                break;
            case MN_JOINT_BALL:
                for (int i = 0; i < 4; i++)
                    rqd[i] = src[i];
                lqd[0] = src[0], lqd[1] = src[1], lqd[2] = -src[2], lqd[3] = -src[3];
                break;
            default:
                break;
            }
        }
        free(rq);
        mn_fk(m, d);
        for (int j = 0; j < m->njoint; j++) {
            const char* n = m->jnt_name[j];
            if (strncmp(n, "right ", 6)) continue;
            char ln[300];
            snprintf(ln, sizeof ln, "left %s", n + 6);
            int l = mn_model_find_joint(m, ln);
            if (l < 0) continue;
            worst = fmax(worst, mirror_diff(&d->xf[j], &d->xf[l]));
            mn_vec3 cr = mn_point_world(d, j, m->jnt_com[j]),
                    cl = mn_point_world(d, l, m->jnt_com[l]);
            worst = fmax(worst, mn_vec3_dist(mn_v3(-cr.x, cr.y, cr.z), cl));
            if (t == 0) pairs++;
        }
        /* the limits of each pair are the same and the mirrored pose is within them
         * (balls are posed at random, without regard to their cone) */
        int has_ball = 0;
        for (int j = 0; j < m->njoint; j++)
            has_ball |= m->jnt_type[j] == MN_JOINT_BALL;
        if (!has_ball) CHECK(mn_q_within_limits(m, d->q, 1e-12));
    }
    CHECK(pairs > 0);
    CHECK_NEAR(worst, 0, 1e-12);
    mn_data_destroy(d);
}

static const char mirror_text[] =
    "define skeleton \"m\"\n"
    "  joint \"hips\"\n"
    "  group \"r\" joint \"right a\" joint \"right b\" joint \"right c\" end group\n"
    "  group \"l\" joint \"left a\" joint \"left b\" joint \"left c\" end group\n"
    "end skeleton\n"
    "define joint \"hips\" fixed offset 0 1 0 end joint\n"
    "define joint \"right a\" offset -0.2 0.1 0.05 orientation 20 -35 50\n"
    "  hinge 0.3 -0.4 0.5 -30 80 ball axis 0.2 0.9 -0.1 swing 60 twist -20 50\n"
    "  mass 2 com -0.05 -0.2 0.03 mirror \"left a\" end joint\n"
    "define joint \"right b\" offset 0.02 -0.4 0.1 orientation -10 5 70\n"
    "  slide 1 0.5 -0.2 -0.1 0.3 hinge y -90 10 mass 1 com 0.03 -0.1 0.02 mirror \"left b\" end "
    "joint\n"
    "define joint \"right c\" offset 0 -0.3 0 hinge z -5 45 mirror \"left c\" end joint\n";

static void test_mirror(void) {
    mn_error err;
    mn_model* s = mn_stickman_model(&err);
    if (s) {
        check_mirror(s, 20);
        /* limits: the same numbers on both sides */
        int r = mn_model_find_joint(s, "right arm.1"), l = mn_model_find_joint(s, "left arm.1");
        CHECK(s->jnt_range[2 * r] == s->jnt_range[2 * l] &&
              s->jnt_range[2 * r + 1] == s->jnt_range[2 * l + 1]);
        CHECK(s->jnt_axis[l].z == -1); /* the z axis, an axial vector, flips */
        mn_model_destroy(s);
    }
    mn_model* m = read_text(mirror_text, "mirror.skel");
    if (m) {
        check_mirror(m, 50);
        mn_model_destroy(m);
    }
}

#define SK "define skeleton \"s\"\n  joint \"a\"\n  joint \"b\"\nend skeleton\n"

/* ---- defaults and structure ------------------------------------------------------------ */
static void test_structure(void) {
    /* groups at the top level give several roots; a root without DOF lines is free */
    mn_model* m = read_text("define skeleton \"s\" group \"a\" joint \"r1\" joint \"c\" end group "
                            "joint \"r2\" end skeleton define joint \"c\" end joint",
                            "s.skel");
    if (m) {
        CHECK(m->nroot == 2);
        int r1 = mn_model_find_joint(m, "r1"), r2 = mn_model_find_joint(m, "r2"),
            c = mn_model_find_joint(m, "c");
        CHECK(m->jnt_type[r1] == MN_JOINT_FREE && m->jnt_type[r2] == MN_JOINT_FREE);
        CHECK(m->jnt_parent[c] == r1 && m->jnt_type[c] == MN_JOINT_FIXED);
        mn_model_destroy(m);
    }
    /* free below a root (BVH joints with position channels) reads and writes back */
    m = read_text(SK "define joint \"b\" offset 0 1 0 free rest 0.5 0 0 0 1 0 0 end joint\n",
                  "f.skel");
    if (m) {
        int b = mn_model_find_joint(m, "b");
        CHECK(m->jnt_type[b] == MN_JOINT_FREE && m->jnt_parent[b] >= 0);
        CHECK(m->q0[m->jnt_qadr[b] + 4] == 1);
        mn_model* back = write_read(m, NULL);
        if (back) check_same_model(m, back);
        mn_model_destroy(back);
        mn_model_destroy(m);
    }
    /* a rest value outside the limits reads, with a warning naming it */
    mn_warnings w;
    memset(&w, 0, sizeof w);
    mn_error err;
    const char* warm = "define skeleton \"s\" joint \"a\" end skeleton\n"
                       "define joint \"a\"\n hinge x -10 10 rest 20 end joint\n";
    m = NULL;
    CHECK(mn_skel_read_mem(warm, strlen(warm), "w.skel", &m, &w, &err) == MN_OK);
    CHECK(w.count == 1 && strstr(w.first, "w.skel:3: rest: 20 is outside the limits of the hinge"));
    mn_model_destroy(m);
    /* a compound root: the placement on the first frame, the segment on the last */
    m = read_text("define skeleton \"s\" joint \"j\" end skeleton\n"
                  "define joint \"j\" offset 1 2 3 slide x slide y hinge z mass 4 com 0 1 0 "
                  "object \"o\" end joint",
                  "s.skel");
    if (m) {
        int j1 = mn_model_find_joint(m, "j.1"), j2 = mn_model_find_joint(m, "j.2"),
            j = mn_model_find_joint(m, "j");
        CHECK(j1 >= 0 && j2 >= 0 && j >= 0);
        CHECK(m->jnt_parent[j1] == -1 && m->jnt_parent[j2] == j1 && m->jnt_parent[j] == j2);
        CHECK(m->jnt_offset[j1].z == 3 && m->jnt_offset[j].z == 0);
        CHECK(m->jnt_mass[j] == 4 && m->jnt_mass[j1] == 0);
        CHECK(m->jnt_object[j] && !m->jnt_object[j1]);
        CHECK(!m->jnt_limited[j]);
        mn_model_destroy(m);
    }
}

/* ---- malformed inputs ------------------------------------------------------------------ */

typedef struct bad_case {
    const char* what;
    const char* text;
    size_t len; /* 0: strlen */
    const char* expect;
} bad_case;

static void test_malformed(void) {
    static const bad_case cases[] = {
        {"empty file", "", 0, "bad.skel:1: define skeleton: empty file"},
        {"only a comment", "# nothing\n", 0, "bad.skel:2: define skeleton: no skeleton defined"},
        {"truncated skeleton", "define skeleton \"s\"\n joint \"a\"\n", 0,
         "bad.skel:3: define skeleton: \"s\" (line 1): missing end skeleton"},
        {"truncated joint", SK "define joint \"b\" hinge x 0", 0,
         "bad.skel:5: hinge: expected 2 numbers, got only 1"},
        {"missing end joint", SK "define joint \"b\"\n hinge x\n", 0,
         "bad.skel:7: define joint: \"b\" (line 5): missing end joint"},
        {"unterminated name", "define skeleton \"s\n", 0,
         "bad.skel:1: name: unterminated quoted name"},
        {"unknown top keyword", "defin skeleton \"s\"", 0, "bad.skel:1: defin: unknown keyword"},
        {"unknown skeleton keyword", "define skeleton \"s\"\n  bone \"a\"\nend skeleton\n", 0,
         "bad.skel:2: bone: unknown keyword in define skeleton"},
        {"unknown lock kind", SK "define joint \"a\"\n  locked bones\nend joint\n", 0,
         "bad.skel:6: locked: expected none, translation, rotation or all, got bones"},
        {"lock kind missing", SK "define joint \"a\"\n  locked\n", 0,
         "bad.skel:7: locked: expected none, translation, rotation or all, got end of file"},
        {"unknown joint keyword", SK "define joint \"a\"\n  wobble 3\nend joint\n", 0,
         "bad.skel:6: wobble: unknown keyword in define joint \"a\""},
        {"wrong count", SK "define joint \"b\"\n  offset 1 2\nend joint\n", 0,
         "bad.skel:7: offset: expected 3 numbers, got only 2"},
        {"NaN", SK "define joint \"b\"\n  offset 1 nan 2\nend joint\n", 0,
         "bad.skel:6: offset: \"nan\": not a finite number"},
        {"infinity", SK "define joint \"b\"\n  mass inf\nend joint\n", 0,
         "bad.skel:6: mass: \"inf\": not a finite number"},
        {"huge number", SK "define joint \"b\"\n  offset 1e300 0 0\nend joint\n", 0,
         "bad.skel:6: offset: \"1e300\": number out of range"},
        {"overflow", SK "define joint \"b\"\n  hinge x -1e999 0\nend joint\n", 0,
         "bad.skel:6: hinge: \"-1e999\": not a finite number"},
        {"not a number", SK "define joint \"b\"\n  com 0 zero 0\nend joint\n", 0,
         "bad.skel:6: com: expected 3 numbers, got only 1"},
        {"duplicate joint", "define skeleton \"s\"\n joint \"a\"\n joint \"a\"\nend skeleton\n", 0,
         "bad.skel:3: joint: duplicate joint \"a\" (first at line 2)"},
        {"duplicate define", SK "define joint \"a\" end joint\ndefine joint \"a\" end joint\n", 0,
         "bad.skel:6: define joint: \"a\" is defined twice (first at line 5)"},
        {"define of an unknown joint", SK "define joint \"zz\" end joint\n", 0,
         "bad.skel:5: define joint: \"zz\" is not a joint of skeleton \"s\""},
        {"mirror of an unknown joint", SK "define joint \"a\"\n mirror \"zz\"\nend joint\n", 0,
         "bad.skel:6: mirror: \"zz\" is not a joint of skeleton \"s\""},
        {"two mirrors onto one joint",
         "define skeleton \"s\"\n  joint \"a\"\n  joint \"b\"\n  joint \"c\"\nend skeleton\n"
         "define joint \"a\" mirror \"c\" end joint\n"
         "define joint \"b\" mirror \"c\" end joint\n",
         0, "bad.skel:7: mirror: \"c\" already has attributes (a mirror at line 6)"},
        {"mirror of itself", SK "define joint \"a\" mirror \"a\" end joint\n", 0,
         "bad.skel:5: mirror: a joint cannot mirror itself"},
        {"end group without group",
         "define skeleton \"s\"\n joint \"a\"\n end group\nend skeleton\n", 0,
         "bad.skel:3: end group: no open group to end"},
        {"group not closed", "define skeleton \"s\"\n group \"g\"\n joint \"a\"\nend skeleton\n", 0,
         "bad.skel:4: end skeleton: group opened at line 2 is not closed"},
        {"two skeletons", SK SK, 0, "bad.skel:5: define skeleton: a second skeleton"},
        {"no joints", "define skeleton \"s\" end skeleton", 0,
         "bad.skel:1: define skeleton: \"s\" has no joints"},
        {"zero axis", SK "define joint \"b\" hinge 0 0 0 end joint\n", 0,
         "bad.skel:5: hinge: zero axis"},
        {"limits in the wrong order", SK "define joint \"b\" hinge x 90 -90 end joint\n", 0,
         "bad.skel:5: hinge: lower limit 90 is above upper limit -90"},
        {"bad axis", SK "define joint \"b\" hinge w 0 1 end joint\n", 0,
         "bad.skel:5: hinge: expected an axis (x, y, z or three numbers), got w"},
        {"fixed in a compound", SK "define joint \"b\" hinge x fixed end joint\n", 0,
         "bad.skel:5: fixed: must be the only DOF line"},
        {"too many DOF lines",
         SK "define joint \"b\" hinge x hinge x hinge x hinge x hinge x "
            "hinge x hinge x hinge x hinge x end joint\n",
         0, "bad.skel:5: hinge: more than 8 DOF lines"},
        {"attribute twice", SK "define joint \"b\" mass 1 mass 2 end joint\n", 0,
         "bad.skel:5: mass: given twice"},
        {"negative mass", SK "define joint \"b\" mass -1 end joint\n", 0,
         "bad.skel:5: mass: negative mass"},
        {"zero stiffness", SK "define joint \"b\" stiffness 0 end joint\n", 0,
         "bad.skel:5: stiffness: must be > 0"},
        {"swing out of range", SK "define joint \"b\" ball swing 200 end joint\n", 0,
         "bad.skel:5: swing: 200 is not in [0, 180] degrees"},
        {"rest out of place", SK "define joint \"b\" rest 3 end joint\n", 0,
         "bad.skel:5: rest: must follow the DOF line"},
        {"bad rotation order", SK "define joint \"b\" order XXY end joint\n", 0,
         "bad.skel:5: order: expected a rotation order"},
        {"compound name clash",
         "define skeleton \"s\" joint \"a\" joint \"a.1\" end skeleton\n"
         "define joint \"a\" hinge x hinge y end joint\n",
         0, "bad.skel:1: joint: \"a.1\": duplicate joint name"},
        {"bad UTF-8 in a name", "define skeleton \"s\xff\" joint \"a\" end skeleton", 0,
         "bad.skel:1: encoding: not valid UTF-8"},
        {"overlong UTF-8", "define skeleton \"s\" joint \"\xC0\xAF\" end skeleton", 0,
         "bad.skel:1: encoding: not valid UTF-8"},
        {"bad UTF-8 in a comment", "# caf\xe9\ndefine skeleton \"s\" joint \"a\" end skeleton", 0,
         "bad.skel:1: encoding: not valid UTF-8"},
        {"NUL byte", "define skeleton \"s\"\n\0joint \"a\" end skeleton", 40,
         "bad.skel:2: encoding: control character 0x00"},
        {"empty name", "define skeleton \"\" joint \"a\" end skeleton", 0,
         "bad.skel:1: define skeleton: empty name"},
        {"name where a keyword belongs", SK "define joint \"b\" \"mass\" 1 end joint", 0,
         "bad.skel:5: define joint: expected a keyword"},
        {"garbage after a number", SK "define joint \"b\"\n  mass 1e6x\nend joint\n", 0,
         "bad.skel:6: mass: \"1e6x\": not a number"},
        {"tab in a name", "define skeleton \"a\tb\" joint \"a\" end skeleton", 0,
         "bad.skel:1: encoding: control character 0x09 in a name"},
        {"end of what", SK "define joint \"b\" end skeleton", 0,
         "bad.skel:5: end: expected \"end joint\""},
    };
    int n = (int)(sizeof cases / sizeof cases[0]);
    CHECK(n >= 15);
    for (int i = 0; i < n; i++) {
        mn_model* m = (mn_model*)(void*)&m; /* not NULL: the reader must clear it */
        mn_error err;
        mn_error_clear(&err);
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
        mn_status s = mn_skel_read_mem(cases[i].text, len, "bad.skel", &m, NULL, &err);
        int ok = s != MN_OK && m == NULL && strstr(err.message, cases[i].expect) != NULL;
        if (!ok)
            fprintf(stderr, "case \"%s\": status %s, message \"%s\" (expected \"%s\")\n",
                    cases[i].what, mn_status_name(s), err.message, cases[i].expect);
        CHECK(ok);
        CHECK(err.status == s);
        if (s == MN_OK && m) mn_model_destroy(m);
    }
}

/* 1500 nested groups, each with a joint and a side branch: the reader's group stack
 * and the writer's recursion at branches both go 1500 deep. */
static void test_deep_nesting(void) {
    enum { N = 1500 };
    size_t cap = (size_t)N * 80 + 100, len = 0;
    char* t = malloc(cap);
    if (!t) {
        CHECK(0);
        return;
    }
    len += (size_t)snprintf(t + len, cap - len, "define skeleton \"deep\" joint \"root\"\n");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(t + len, cap - len,
                                "group \"g\" joint \"a%d\" group \"s\" joint \"s%d\" end group\n",
                                i, i);
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(t + len, cap - len, "end group\n");
    len += (size_t)snprintf(t + len, cap - len, "end skeleton\n");
    mn_model* m = NULL;
    mn_error err;
    mn_status s = mn_skel_read_mem(t, len, "deep.skel", &m, NULL, &err);
    if (s) fprintf(stderr, "%s\n", err.message);
    CHECK(s == MN_OK && m && m->njoint == 2 * N + 1);
    if (m) {
        int last = mn_model_find_joint(m, "a1499"), side = mn_model_find_joint(m, "s1499");
        CHECK(m->jnt_depth[last] == N && m->jnt_parent[side] == last);
        mn_model* back = write_read(m, NULL);
        if (back) check_same_model(m, back);
        mn_model_destroy(back);
    }
    mn_model_destroy(m);
    free(t);
}

/* A figure whose groups nest 100,000 deep, each joint's first child carrying the rest of
 * the figure and its last child a leaf: the writer puts every first child in a group
 * inside the one before. It is written without recursion (this shape once exhausted the C
 * stack), its indentation stops growing at 32 levels (so the text stays linear in the
 * figure), and it reads back as the same figure. */
static void test_deep_groups_written(void) {
    enum { N = 100000 };
    size_t cap = (size_t)N * 64 + 100, len = 0;
    char* t = malloc(cap);
    if (!t) {
        CHECK(0);
        return;
    }
    len += (size_t)snprintf(t + len, cap - len, "define skeleton \"comb\"\n");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(t + len, cap - len, "joint \"c%d\" group \"g\"\n", i);
    len += (size_t)snprintf(t + len, cap - len, "joint \"tip\"\n");
    for (int i = N - 1; i >= 0; i--)
        len += (size_t)snprintf(t + len, cap - len, "end group joint \"leaf%d\"\n", i);
    len += (size_t)snprintf(t + len, cap - len, "end skeleton\n");
    mn_model* m = NULL;
    mn_error err;
    mn_status s = mn_skel_read_mem(t, len, "comb.skel", &m, NULL, &err);
    if (s) fprintf(stderr, "%s\n", err.message);
    CHECK(s == MN_OK && m && m->njoint == 2 * N + 1);
    char* text = NULL;
    mn_model* back = m ? write_read(m, &text) : NULL;
    if (m && back) {
        CHECK(back->njoint == m->njoint);
        int same = back->njoint == m->njoint;
        for (int j = 0; same && j < m->njoint; j++)
            same = !strcmp(m->jnt_name[j], back->jnt_name[j]) &&
                   m->jnt_parent[j] == back->jnt_parent[j];
        CHECK(same);
        CHECK(m->jnt_depth[mn_model_find_joint(m, "tip")] == N);
    }
    if (text) {
        /* the most leading spaces on any line: 2 per level, at most 32 levels */
        size_t most = 0, run = 0;
        int at_start = 1;
        for (const char* p = text; *p; p++) {
            if (*p == '\n')
                at_start = 1, run = 0;
            else if (at_start && *p == ' ')
                run++, most = run > most ? run : most;
            else
                at_start = 0;
        }
        CHECK(most == 64);
    }
    free(text);
    mn_model_destroy(back);
    mn_model_destroy(m);
    free(t);
}

static void test_io_errors(void) {
    mn_model* m = NULL;
    mn_error err;
    CHECK(mn_skel_read(MN_TEST_DATA "/no/such.skel", &m, NULL, &err) == MN_ERR_IO && m == NULL);
    CHECK(strstr(err.message, "such.skel") != NULL);
    m = mn_stickman_model(&err);
    if (!m) return;
    /* a folder that does not exist: an error, and no file appears */
    CHECK(mn_skel_write(MN_TEST_DATA "/no/such/dir/x.skel", m, &err) == MN_ERR_IO);
    /* an existing file is replaced as a whole */
    const char* path = mn_test_write_temp(".skel", "old", 3);
    CHECK(mn_skel_write(path, m, &err) == MN_OK);
    char* text = mn_test_read_file(path, NULL);
    CHECK(text && !strncmp(text, "# Skeleton", 10));
    free(text);
    CHECK(mn_skel_write(NULL, m, &err) == MN_ERR_ARG);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_stickman);
    RUN(test_fig61);
    RUN(test_fig61_both_sides);
    RUN(test_layout_fig61);
    RUN(test_layout_after_edits);
    RUN(test_round_trip);
    RUN(test_bvh_figures);
    RUN(test_mirror);
    RUN(test_structure);
    RUN(test_malformed);
    RUN(test_deep_nesting);
    RUN(test_deep_groups_written);
    RUN(test_io_errors);
    return mn_test_report();
}
