/* URDF reader: the five robots load with the right DOFs, chains and limits; FK of every
 * link at random joint values equals an independent composition of 4x4 homogeneous
 * matrices read straight from the XML; a table of malformed files fails cleanly with a
 * message naming the line and field. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

#define ROBOTS MN_DATA "/robots/"

static const char* robot_path(const char* rel) {
    static char buf[4][512];
    static int slot;
    char* b = buf[slot++ & 3];
    snprintf(b, 512, "%s%s", ROBOTS, rel);
    return b;
}

static mn_model* load(const char* rel, mn_warnings* w) {
    mn_model* m = NULL;
    mn_error err;
    mn_status s = mn_urdf_read(robot_path(rel), &m, w, &err);
    if (s != MN_OK) fprintf(stderr, "%s\n", err.message);
    CHECK(s == MN_OK);
    CHECK(m != NULL);
    return m;
}

/* Small deterministic generator (the test must be reproducible). */
static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;
static double rnd(double lo, double hi) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

/* ---- the independent reference: 4x4 homogeneous matrices, row-major ------------------ */
typedef struct {
    double a[16];
} mat4;

static mat4 m4_identity(void) {
    mat4 r;
    memset(&r, 0, sizeof r);
    r.a[0] = r.a[5] = r.a[10] = r.a[15] = 1;
    return r;
}
static mat4 m4_mul(const mat4* A, const mat4* B) {
    mat4 r;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++)
                s += A->a[4 * i + k] * B->a[4 * k + j];
            r.a[4 * i + j] = s;
        }
    return r;
}
static mat4 m4_trans(double x, double y, double z) {
    mat4 r = m4_identity();
    r.a[3] = x, r.a[7] = y, r.a[11] = z;
    return r;
}
/* Rotation by angle t about the unit axis (x, y, z): Rodrigues written out. */
static mat4 m4_rot(double x, double y, double z, double t) {
    double c = cos(t), s = sin(t), v = 1 - c;
    mat4 r = m4_identity();
    r.a[0] = c + x * x * v, r.a[1] = x * y * v - z * s, r.a[2] = x * z * v + y * s;
    r.a[4] = y * x * v + z * s, r.a[5] = c + y * y * v, r.a[6] = y * z * v - x * s;
    r.a[8] = z * x * v - y * s, r.a[9] = z * y * v + x * s, r.a[10] = c + z * z * v;
    return r;
}
static void read3(xmlNodePtr n, const char* attr, double* v, double d0, double d1, double d2) {
    v[0] = d0, v[1] = d1, v[2] = d2;
    if (!n) return;
    xmlChar* s = xmlGetProp(n, (const xmlChar*)attr);
    if (!s) return;
    CHECK(sscanf((const char*)s, "%lf %lf %lf", &v[0], &v[1], &v[2]) == 3);
    xmlFree(s);
}
static xmlNodePtr elem(xmlNodePtr n, const char* name) {
    for (xmlNodePtr c = n->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && !strcmp((const char*)c->name, name)) return c;
    return NULL;
}
static char* prop(xmlNodePtr n, const char* name) {
    return n ? (char*)xmlGetProp(n, (const xmlChar*)name) : NULL;
}

/* World frame of every link by composing parent * Trans(xyz) Rz(yaw) Ry(pitch) Rx(roll)
 * * motion(q), with q taken from the model's state for the link's joint. Compares with
 * mn_fk's frames. Returns the number of links compared. */
static int check_fk_against_xml(const char* rel, const mn_model* m, mn_data* d) {
    xmlDocPtr doc = xmlReadFile(robot_path(rel), NULL, XML_PARSE_NONET);
    CHECK(doc != NULL);
    if (!doc) return 0;
    xmlNodePtr robot = xmlDocGetRootElement(doc);
    int nl = m->njoint;
    mat4* T = calloc((size_t)nl, sizeof *T);
    char* done = calloc((size_t)nl, 1);
    /* the root link: the model joint with no parent */
    for (int j = 0; j < nl; j++)
        if (m->jnt_parent[j] < 0) T[j] = m4_identity(), done[j] = 1;
    int progress = 1;
    while (progress) {
        progress = 0;
        for (xmlNodePtr n = robot->children; n; n = n->next) {
            if (n->type != XML_ELEMENT_NODE || strcmp((const char*)n->name, "joint")) continue;
            char* pl = prop(elem(n, "parent"), "link");
            char* cl = prop(elem(n, "child"), "link");
            char* type = prop(n, "type");
            int pj = mn_model_find_joint(m, pl), cj = mn_model_find_joint(m, cl);
            CHECK(pj >= 0 && cj >= 0);
            if (pj >= 0 && cj >= 0 && done[pj] && !done[cj]) {
                double xyz[3], rpy[3], ax[3];
                read3(elem(n, "origin"), "xyz", xyz, 0, 0, 0);
                read3(elem(n, "origin"), "rpy", rpy, 0, 0, 0);
                read3(elem(n, "axis"), "xyz", ax, 1, 0, 0);
                double len = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
                for (int k = 0; k < 3; k++)
                    ax[k] /= len;
                mat4 o = m4_trans(xyz[0], xyz[1], xyz[2]);
                mat4 rz = m4_rot(0, 0, 1, rpy[2]), ry = m4_rot(0, 1, 0, rpy[1]),
                     rx = m4_rot(1, 0, 0, rpy[0]);
                o = m4_mul(&o, &rz);
                o = m4_mul(&o, &ry);
                o = m4_mul(&o, &rx);
                mat4 motion = m4_identity();
                if (!strcmp(type, "revolute") || !strcmp(type, "continuous")) {
                    CHECK(m->jnt_type[cj] == MN_JOINT_HINGE);
                    motion = m4_rot(ax[0], ax[1], ax[2], d->q[m->jnt_qadr[cj]]);
                } else if (!strcmp(type, "prismatic")) {
                    CHECK(m->jnt_type[cj] == MN_JOINT_SLIDE);
                    double s = d->q[m->jnt_qadr[cj]];
                    motion = m4_trans(ax[0] * s, ax[1] * s, ax[2] * s);
                } else {
                    CHECK(m->jnt_type[cj] == MN_JOINT_FIXED);
                }
                mat4 t = m4_mul(&T[pj], &o);
                T[cj] = m4_mul(&t, &motion);
                done[cj] = 1;
                progress = 1;
            }
            xmlFree(pl), xmlFree(cl), xmlFree(type);
        }
    }
    int compared = 0;
    double worst = 0;
    for (int j = 0; j < nl; j++) {
        CHECK(done[j]);
        if (!done[j]) continue;
        const mn_xform* X = &d->xf[j];
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++) {
                double e = fabs(X->R.m[3 * r + c] - T[j].a[4 * r + c]);
                if (e > worst) worst = e;
            }
        }
        double e = fmax(fabs(X->p.x - T[j].a[3]),
                        fmax(fabs(X->p.y - T[j].a[7]), fabs(X->p.z - T[j].a[11])));
        if (e > worst) worst = e;
        compared++;
    }
    CHECK_NEAR(worst, 0, 1e-12);
    free(T);
    free(done);
    xmlFreeDoc(doc);
    return compared;
}

/* Random q inside the limits (continuous joints over +-2 pi), then FK and the check. */
static void fk_random(const char* rel, int trials) {
    mn_model* m = load(rel, NULL);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    CHECK(d != NULL);
    for (int t = 0; t < trials && d; t++) {
        for (int j = 0; j < m->njoint; j++) {
            int ty = m->jnt_type[j];
            if (ty != MN_JOINT_HINGE && ty != MN_JOINT_SLIDE) continue;
            double lo = -2 * MN_PI, hi = 2 * MN_PI;
            if (m->jnt_limited[j]) lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
            d->q[m->jnt_qadr[j]] = rnd(lo, hi);
        }
        mn_fk(m, d);
        CHECK(check_fk_against_xml(rel, m, d) == m->njoint);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* ---- tests ----------------------------------------------------------------------------- */
static void test_dof_counts(void) {
    struct {
        const char* file;
        int nv, nlink;
    } cases[] = {
        {"franka_panda/panda.urdf", 9, 13}, {"kuka_iiwa/model.urdf", 7, 8},
        {"ur5/ur5_robot.urdf", 6, 11},      {"xarm6/xarm6_robot.urdf", 6, 8},
        {"nao/nao.urdf", 42, 79}, /* 26 revolute + 16 continuous */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mn_model* m = load(cases[i].file, NULL);
        if (!m) continue;
        CHECK(m->nv == cases[i].nv);
        CHECK(m->nq == cases[i].nv);
        CHECK(m->njoint == cases[i].nlink);
        CHECK(m->nroot == 1);
        for (int k = 0; k < m->nq; k++)
            CHECK(isfinite(m->q0[k]));
        mn_model_destroy(m);
    }
}

static void test_chains(void) {
    struct {
        const char* file;
        const char *base, *tip;
        int ndof;
    } cases[] = {
        {"franka_panda/panda.urdf", "panda_link0", "panda_link8", 7},
        {"kuka_iiwa/model.urdf", "lbr_iiwa_link_0", "lbr_iiwa_link_7", 7},
        {"ur5/ur5_robot.urdf", "base_link", "tool0", 6},
        {"xarm6/xarm6_robot.urdf", "link_base", "link6", 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mn_model* m = load(cases[i].file, NULL);
        if (!m) continue;
        int b = mn_model_find_joint(m, cases[i].base), t = mn_model_find_joint(m, cases[i].tip);
        CHECK(b >= 0 && t >= 0);
        mn_error err;
        mn_chain* c = mn_chain_create(m, b, t, &err);
        CHECK(c != NULL);
        if (c) {
            CHECK(c->ndof == cases[i].ndof);
            mn_chain_destroy(c);
        }
        CHECK(mn_chain_dofs(m, b, t, NULL, 0) == cases[i].ndof);
        /* the reverse direction is not a chain */
        CHECK(mn_chain_create(m, t, b, &err) == NULL);
        mn_model_destroy(m);
    }
}

static void test_fk_matches_xml(void) {
    fk_random("franka_panda/panda.urdf", 5);
    fk_random("kuka_iiwa/model.urdf", 5);
    fk_random("ur5/ur5_robot.urdf", 5);
    fk_random("xarm6/xarm6_robot.urdf", 5);
    fk_random("nao/nao.urdf", 3);
}

static void test_limits_and_axes(void) {
    mn_warnings w;
    memset(&w, 0, sizeof w);
    mn_model* m = load("franka_panda/panda.urdf", &w);
    if (m) {
        int j4 = mn_model_find_joint(m, "panda_link4");
        CHECK(j4 >= 0 && m->jnt_type[j4] == MN_JOINT_HINGE && m->jnt_limited[j4]);
        CHECK_NEAR(m->jnt_range[2 * j4], -3.0718, 1e-15);
        CHECK_NEAR(m->jnt_range[2 * j4 + 1], -0.0698, 1e-15);
        /* zero lies outside [-3.07, -0.07]: the rest state is moved to the nearer limit */
        CHECK_NEAR(m->q0[m->jnt_qadr[j4]], -0.0698, 1e-15);
        int f2 = mn_model_find_joint(m, "panda_rightfinger");
        CHECK(f2 >= 0 && m->jnt_type[f2] == MN_JOINT_SLIDE && m->jnt_limited[f2]);
        CHECK_NEAR(m->jnt_range[2 * f2 + 1], 0.04, 1e-15);
        CHECK_NEAR(m->jnt_axis[f2].y, -1, 1e-15);
        int hand = mn_model_find_joint(m, "panda_hand");
        CHECK(hand >= 0 && m->jnt_type[hand] == MN_JOINT_FIXED);
        /* the finger's <mimic> is ignored with a warning naming it */
        CHECK(w.count == 1);
        CHECK(strstr(w.first, "panda_finger_joint2 mimic") != NULL);
        CHECK(strstr(w.first, ":348:") != NULL);
        /* inertial: panda_link1 mass 2.74, com (0.003875, 0.002081, -0.04762) */
        int l1 = mn_model_find_joint(m, "panda_link1");
        CHECK(l1 >= 0 && m->jnt_mass[l1] > 0);
        CHECK_NEAR(m->jnt_com[l1].z, -0.04762, 1e-15);
        mn_model_destroy(m);
    }
    m = load("ur5/ur5_robot.urdf", NULL);
    if (m) {
        int el = mn_model_find_joint(m, "forearm_link");
        CHECK(el >= 0 && m->jnt_limited[el]);
        CHECK_NEAR(m->jnt_range[2 * el + 1], MN_PI, 1e-5);
        mn_model_destroy(m);
    }
    memset(&w, 0, sizeof w);
    m = load("nao/nao.urdf", &w);
    if (m) {
        int unlimited = 0;
        for (int j = 0; j < m->njoint; j++)
            if (m->jnt_type[j] == MN_JOINT_HINGE && !m->jnt_limited[j]) unlimited++;
        CHECK(unlimited == 16); /* the continuous joints */
        CHECK(w.count == 17);   /* RHipYawPitch and the 16 finger joints carry <mimic> */
        mn_model_destroy(m);
    }
}

/* A planar joint (x, y and the heading in the plane across its axis): two slides and a
 * hinge, the link's frame moved in the plane and turned about the axis as the URDF joint
 * would; the slides take the link's name with ".1", ".2", the hinge the link's (and the
 * joint's as alias). */
static void test_planar(void) {
    const char* text =
        "<robot name=\"rover\"><link name=\"world\"/><link name=\"base\"/><link name=\"arm\"/>\n"
        "<joint name=\"drive\" type=\"planar\"><parent link=\"world\"/><child link=\"base\"/>"
        "<origin xyz=\"1 2 0.1\" rpy=\"0 0 0.5\"/><axis xyz=\"0 0 1\"/></joint>\n"
        "<joint name=\"shoulder\" type=\"fixed\"><parent link=\"base\"/><child link=\"arm\"/>"
        "<origin xyz=\"0.2 0 0.3\"/></joint>\n</robot>\n";
    mn_model* m = NULL;
    mn_error err;
    CHECK(mn_urdf_read_mem(text, strlen(text), "rover.urdf", &m, NULL, &err) == MN_OK);
    if (!m) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    CHECK(m->nv == 3);
    int s1 = mn_model_find_joint(m, "base.1"), s2 = mn_model_find_joint(m, "base.2");
    int h = mn_model_find_joint(m, "base"), arm = mn_model_find_joint(m, "arm");
    CHECK(s1 >= 0 && s2 >= 0 && h >= 0 && mn_model_find_joint(m, "drive") == h);
    CHECK(m->jnt_type[s1] == MN_JOINT_SLIDE && m->jnt_type[s2] == MN_JOINT_SLIDE &&
          m->jnt_type[h] == MN_JOINT_HINGE);
    mn_data* d = mn_data_create(m, 0);
    /* the slides span the plane across the axis: any (dx, dy) in the plane is reached */
    d->q[m->jnt_qadr[s1]] = 0.3, d->q[m->jnt_qadr[s2]] = -0.4, d->q[m->jnt_qadr[h]] = 0.7;
    mn_fk(m, d);
    mn_vec3 o = d->xf[h].p;
    CHECK(fabs(o.z - 0.1) < 1e-12);                               /* stays in the plane z = 0.1 */
    CHECK(fabs(mn_vec3_dist(o, mn_v3(1, 2, 0.1)) - 0.5) < 1e-12); /* moved by |(0.3, -0.4)| */
    /* heading: the origin's rpy yaw 0.5 plus the hinge's 0.7 about z */
    mn_vec3 x = mn_mat3_col(&d->xf[h].R, 0);
    CHECK(fabs(atan2(x.y, x.x) - 1.2) < 1e-12 && fabs(x.z) < 1e-12);
    /* and the arm rides on it */
    mn_vec3 want = mn_vec3_add(o, mn_mat3_mulv(&d->xf[h].R, mn_v3(0.2, 0, 0.3)));
    CHECK(mn_vec3_dist(d->xf[arm].p, want) < 1e-12);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* The URDF joints' own names find the joints too (aliases), a link's name wins over a joint
 * of that name, aliases survive decompiling, and a miss gets the nearest names. */
static void test_joint_aliases(void) {
    mn_model* m = load("ur5/ur5_robot.urdf", NULL);
    if (!m) return;
    int w3 = mn_model_find_joint(m, "wrist_3_link");
    CHECK(w3 >= 0 && mn_model_find_joint(m, "wrist_3_joint") == w3);
    CHECK(m->jnt_alias[w3] && !strcmp(m->jnt_alias[w3], "wrist_3_joint"));
    CHECK(mn_model_find_joint(m, "elbow_joint") == mn_model_find_joint(m, "forearm_link"));
    CHECK(m->jnt_alias[mn_model_find_joint(m, "world")] == NULL); /* the root has no joint */
    char hint[256];
    CHECK(!strcmp(mn_model_joint_hint(m, "wrist3_joint", hint, sizeof hint),
                  "; did you mean \"wrist_3_joint\" (link wrist_3_link)?"));
    CHECK(!strcmp(mn_model_joint_hint(m, "Forearm_Lnik", hint, sizeof hint),
                  "; did you mean \"forearm_link\"?")); /* case and a swap */
    CHECK(!strcmp(mn_model_joint_hint(m, "gripper", hint, sizeof hint), ""));
    CHECK(!strcmp(mn_model_joint_hint(m, "wrist3_joint", hint, 20), "")); /* no half hint */
    int near[8];
    int n = mn_model_similar_joints(m, "wrist_joint", near, 8);
    CHECK(n == 3); /* wrist_1_joint, wrist_2_joint, wrist_3_joint: one edit each */
    /* decompiled and compiled again, the aliases stay */
    mn_spec* s = mn_model_decompile(m);
    mn_error err;
    mn_model* m2 = s ? mn_model_compile(s, &err) : NULL;
    CHECK(m2 && mn_model_find_joint(m2, "wrist_3_joint") == w3);
    mn_spec* c = s ? mn_spec_clone(s) : NULL;
    CHECK(c && mn_spec_alias(c, w3) && !strcmp(mn_spec_alias(c, w3), "wrist_3_joint"));
    mn_spec_destroy(c);
    mn_spec_destroy(s);
    mn_model_destroy(m2);
    mn_model_destroy(m);
    /* a joint named like another link: that link keeps the name */
    const char* text = "<robot name=\"r\"><link name=\"a\"/><link name=\"b\"/><link name=\"c\"/>"
                       "<joint name=\"c\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>"
                       "</joint><joint name=\"j2\" type=\"fixed\"><parent link=\"b\"/>"
                       "<child link=\"c\"/></joint></robot>";
    CHECK(mn_urdf_read_mem(text, strlen(text), "r.urdf", &m, NULL, &err) == MN_OK);
    if (!m) return;
    int b = mn_model_find_joint(m, "b"), cj = mn_model_find_joint(m, "c");
    CHECK(b >= 0 && cj >= 0 && cj != b && m->jnt_alias[b] == NULL);
    CHECK(mn_model_find_joint(m, "j2") == cj);
    mn_model_destroy(m);
}

/* A small URDF whose joints exercise every supported type, read from memory. */
static void test_small_mem(void) {
    const char* text =
        "<?xml version=\"1.0\"?>\n"
        "<robot name=\"toy\">\n"
        "  <link name=\"base\"/>\n"
        "  <link name=\"a\"><visual><geometry><mesh filename=\"package://no/such.stl\"/>"
        "</geometry></visual><inertial><mass value=\"2\"/><origin xyz=\"0 0 0.1\"/>"
        "</inertial></link>\n"
        "  <link name=\"b\"/>\n  <link name=\"c\"/>\n  <link name=\"d\"/>\n"
        "  <joint name=\"j1\" type=\"continuous\"><parent link=\"base\"/><child link=\"a\"/>"
        "<origin xyz=\"0 0 0.5\" rpy=\"0.3 -0.2 0.5\"/><axis xyz=\"0 0 2\"/></joint>\n"
        "  <joint name=\"j2\" type=\"prismatic\"><parent link=\"a\"/><child link=\"b\"/>"
        "<limit lower=\"-0.1\" upper=\"0.2\" effort=\"1\" velocity=\"1\"/></joint>\n"
        "  <joint name=\"j3\" type=\"revolute\"><parent link=\"b\"/><child link=\"c\"/>"
        "<axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\"/></joint>\n"
        "  <joint name=\"j4\" type=\"fixed\"><parent link=\"c\"/><child link=\"d\"/>"
        "<origin xyz=\"1 0 0\"/></joint>\n"
        "</robot>\n";
    mn_model* m = NULL;
    mn_error err;
    mn_status s = mn_urdf_read_mem(text, strlen(text), "toy.urdf", &m, NULL, &err);
    if (s) fprintf(stderr, "%s\n", err.message);
    CHECK(s == MN_OK && m);
    if (!m) return;
    CHECK(m->njoint == 5 && m->nv == 3);
    int a = mn_model_find_joint(m, "a"), b = mn_model_find_joint(m, "b");
    CHECK(m->jnt_type[a] == MN_JOINT_HINGE && !m->jnt_limited[a]);
    CHECK_NEAR(m->jnt_axis[a].z, 1, 1e-15); /* normalised */
    CHECK(m->jnt_type[b] == MN_JOINT_SLIDE);
    CHECK_NEAR(m->jnt_range[2 * b], -0.1, 1e-15);
    CHECK_NEAR(m->jnt_mass[a], 2, 0);
    CHECK_NEAR(m->jnt_axis[b].x, 1, 0); /* the default axis */
    /* rpy: R = Rz(0.5) Ry(-0.2) Rx(0.3); compare with explicit matrices */
    mat4 rz = m4_rot(0, 0, 1, 0.5), ry = m4_rot(0, 1, 0, -0.2), rx = m4_rot(1, 0, 0, 0.3);
    mat4 r = m4_mul(&rz, &ry);
    r = m4_mul(&r, &rx);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            CHECK_NEAR(m->jnt_orient_mat[a].m[3 * i + j], r.a[4 * i + j], 1e-15);
    mn_model_destroy(m);
}

/* ---- malformed inputs ------------------------------------------------------------------ */
#define HEAD "<?xml version=\"1.0\"?>\n<robot name=\"r\">\n"
#define L(n) "<link name=\"" n "\"/>\n"
#define J(n, t, p, c, extra)                                                                       \
    "<joint name=\"" n "\" type=\"" t "\"><parent link=\"" p "\"/><child link=\"" c "\"/>" extra   \
    "</joint>\n"
#define LIM "<limit lower=\"-1\" upper=\"1\"/>"

typedef struct bad_case {
    const char* what;
    const char* text;
    mn_status status;
    const char* expect; /* substring of the message: line and field */
} bad_case;

static void test_malformed(void) {
    static const bad_case cases[] = {
        {"empty file", "", MN_ERR_PARSE, "bad.urdf: empty file"},
        {"truncated", HEAD L("a") "<joint name=\"j\" type=", MN_ERR_PARSE, "bad.urdf:4: xml:"},
        {"not xml", "hello", MN_ERR_PARSE, "bad.urdf:1: xml:"},
        {"wrong root element", "<robit/>", MN_ERR_PARSE, "robot: the root element"},
        {"no links", HEAD "</robot>", MN_ERR_PARSE, ":2: link: the robot has no links"},
        {"cycle",
         HEAD L("a") L("b") J("j1", "fixed", "a", "b", "")
             J("j2", "fixed", "b", "a", "") "</robot>",
         MN_ERR_PARSE, ":5: joint: the joints form a cycle"},
        {"cycle beside a root",
         HEAD L("r") L("a") L("b") J("j1", "fixed", "a", "b", "")
             J("j2", "fixed", "b", "a", "") "</robot>",
         MN_ERR_PARSE, "lies on a cycle"},
        {"self loop", HEAD L("a") J("j1", "fixed", "a", "a", "") "</robot>", MN_ERR_PARSE,
         ":4: joint j1 child link: same as the parent"},
        {"missing parent link", HEAD L("a") J("j1", "fixed", "nope", "a", "") "</robot>",
         MN_ERR_PARSE, ":4: joint j1 parent link: no link named \"nope\""},
        {"missing child element",
         HEAD L("a") "<joint name=\"j1\" type=\"fixed\"><parent "
                     "link=\"a\"/></joint></robot>",
         MN_ERR_PARSE, ":4: joint j1 child link: missing"},
        {"two roots", HEAD L("a") L("b") "</robot>", MN_ERR_PARSE, ":4: link: several root links"},
        {"two parents",
         HEAD L("a") L("b") L("c") J("j1", "fixed", "a", "c", "")
             J("j2", "fixed", "b", "c", "") "</robot>",
         MN_ERR_PARSE, ":7: joint j2 child link: link \"c\" already has parent joint j1"},
        {"duplicate link", HEAD L("a") L("a") "</robot>", MN_ERR_PARSE,
         ":4: link name: duplicate link \"a\""},
        {"duplicate joint",
         HEAD L("a") L("b") L("c") J("j", "fixed", "a", "b", "")
             J("j", "fixed", "b", "c", "") "</robot>",
         MN_ERR_PARSE, ":7: joint name: duplicate joint \"j\""},
        {"bad number",
         HEAD L("a") L("b")
             J("j3", "fixed", "a", "b", "\n<origin xyz=\"0 0 0\" rpy=\"0 x 0\"/>") "</robot>",
         MN_ERR_PARSE, ":6: joint j3 origin rpy: not a number"},
        {"NaN",
         HEAD L("a") L("b") J("j", "fixed", "a", "b", "<origin xyz=\"nan 0 0\"/>") "</robot>",
         MN_ERR_PARSE, ":5: joint j origin xyz: not a number"},
        {"infinity",
         HEAD L("a") L("b") J("j", "fixed", "a", "b", "<origin rpy=\"0 -inf 0\"/>") "</robot>",
         MN_ERR_PARSE, ":5: joint j origin rpy: not a number"},
        {"huge number",
         HEAD L("a") L("b") J("j", "fixed", "a", "b", "<origin xyz=\"1e300 0 0\"/>") "</robot>",
         MN_ERR_PARSE, ":5: joint j origin xyz: number out of range"},
        {"overflowing number",
         HEAD L("a") L("b") J("j", "fixed", "a", "b", "<origin xyz=\"1e999 0 0\"/>") "</robot>",
         MN_ERR_PARSE, "joint j origin xyz: not a number"},
        {"wrong count",
         HEAD L("a") L("b") J("j", "fixed", "a", "b", "<origin xyz=\"1 2\"/>") "</robot>",
         MN_ERR_PARSE, ":5: joint j origin xyz: expected more numbers"},
        {"too many numbers",
         HEAD L("a") L("b") J("j", "fixed", "a", "b", "<origin xyz=\"1 2 3 4\"/>") "</robot>",
         MN_ERR_PARSE, ":5: joint j origin xyz: too many numbers"},
        {"missing limit", HEAD L("a") L("b") J("j", "revolute", "a", "b", "") "</robot>",
         MN_ERR_PARSE, ":5: joint j limit: missing"},
        {"missing upper",
         HEAD L("a") L("b") J("j", "prismatic", "a", "b", "<limit lower=\"0\"/>") "</robot>",
         MN_ERR_PARSE, ":5: joint j limit upper: missing"},
        {"limits in the wrong order",
         HEAD L("a") L("b")
             J("j", "revolute", "a", "b", "<limit lower=\"1\" upper=\"-1\"/>") "</robot>",
         MN_ERR_PARSE, ":5: joint j limit: lower 1 is above upper -1"},
        {"zero axis",
         HEAD L("a") L("b") J("j", "revolute", "a", "b", "<axis xyz=\"0 0 0\"/>" LIM) "</robot>",
         MN_ERR_PARSE, ":5: joint j axis xyz: zero axis"},
        {"floating joint", HEAD L("a") L("b") J("j", "floating", "a", "b", "") "</robot>",
         MN_ERR_UNSUPPORTED, ":5: joint j type: floating joints are not supported"},
        {"planar joint beside a link of its slides' name",
         HEAD L("a") L("b") L("b.1") J("j", "planar", "a", "b", "")
             J("k", "fixed", "a", "b.1", "") "</robot>",
         MN_ERR_ARG, ":7: b.1: link b.1: b.1: duplicate joint name"},
        {"unknown joint type", HEAD L("a") L("b") J("j", "hinge", "a", "b", "") "</robot>",
         MN_ERR_PARSE, ":5: joint j type: unknown joint type \"hinge\""},
        {"negative mass",
         HEAD "<link name=\"a\"><inertial>\n<mass value=\"-1\"/></inertial></link>"
              "</robot>",
         MN_ERR_PARSE, ":4: link a inertial mass value: negative"},
        {"non-UTF-8 bytes", HEAD "<link name=\"a\xff\xfe\"/>\n</robot>", MN_ERR_PARSE,
         "bad.urdf:3: xml:"},
        {"entity expansion",
         "<?xml version=\"1.0\"?>\n<!DOCTYPE robot [\n"
         "<!ENTITY a \"aaaaaaaaaa\">\n<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
         "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n]>\n<robot name=\"&c;\">" L(
             "&c;") "</robot>",
         MN_ERR_PARSE, "bad.urdf:2: DOCTYPE: document type and entity"},
        {"external entity",
         "<?xml version=\"1.0\"?>\n<robot name=\"r\">\n<!ENTITY x SYSTEM "
         "\"file:///etc/passwd\">" L("&x;") "</robot>",
         MN_ERR_PARSE, "bad.urdf:3: ENTITY:"},
        {"undefined entity", HEAD L("&x;") "</robot>", MN_ERR_PARSE, "bad.urdf:3: xml:"},
        {"empty link name", HEAD L("") "</robot>", MN_ERR_PARSE, ":3: link name: missing or empty"},
        {"missing joint name", HEAD L("a") L("b") "<joint type=\"fixed\"/></robot>", MN_ERR_PARSE,
         ":5: joint name: missing or empty"},
    };
    int n = (int)(sizeof cases / sizeof cases[0]);
    CHECK(n >= 15);
    for (int i = 0; i < n; i++) {
        mn_model* m = (mn_model*)(void*)&m; /* not NULL: the reader must clear it */
        mn_error err;
        mn_error_clear(&err);
        mn_status s =
            mn_urdf_read_mem(cases[i].text, strlen(cases[i].text), "bad.urdf", &m, NULL, &err);
        int ok = s == cases[i].status && m == NULL && strstr(err.message, cases[i].expect);
        if (!ok)
            fprintf(stderr, "case \"%s\": status %s, message \"%s\" (expected %s, \"%s\")\n",
                    cases[i].what, mn_status_name(s), err.message, mn_status_name(cases[i].status),
                    cases[i].expect);
        CHECK(ok);
        CHECK(err.status == s);
        if (s == MN_OK) mn_model_destroy(m);
    }
}

/* A 3000-link chain (links listed leaf first) reads without recursion trouble. */
static void test_deep_chain(void) {
    enum { N = 3000 };
    size_t cap = (size_t)N * 200 + 100, len = 0;
    char* t = malloc(cap);
    if (!t) {
        CHECK(0);
        return;
    }
    len += (size_t)snprintf(t + len, cap - len, "<robot name=\"deep\">\n");
    for (int i = N - 1; i >= 0; i--)
        len += (size_t)snprintf(t + len, cap - len, "<link name=\"l%d\"/>\n", i);
    for (int i = 1; i < N; i++)
        len += (size_t)snprintf(t + len, cap - len,
                                "<joint name=\"j%d\" type=\"continuous\"><parent link=\"l%d\"/>"
                                "<child link=\"l%d\"/><origin xyz=\"0 0 0.01\"/></joint>\n",
                                i, i - 1, i);
    len += (size_t)snprintf(t + len, cap - len, "</robot>\n");
    mn_model* m = NULL;
    mn_error err;
    mn_status s = mn_urdf_read_mem(t, len, "deep.urdf", &m, NULL, &err);
    if (s) fprintf(stderr, "%s\n", err.message);
    CHECK(s == MN_OK && m && m->nv == N - 1 && m->jnt_depth[m->njoint - 1] == N - 1);
    if (m) {
        mn_data* d = mn_data_create(m, 0);
        mn_fk(m, d);
        CHECK_NEAR(d->xf[m->njoint - 1].p.z, 0.01 * (N - 1), 1e-9);
        mn_data_destroy(d);
    }
    mn_model_destroy(m);
    free(t);
}

static void test_missing_file(void) {
    mn_model* m = NULL;
    mn_error err;
    CHECK(mn_urdf_read(robot_path("no/such.urdf"), &m, NULL, &err) == MN_ERR_IO);
    CHECK(m == NULL);
    CHECK(strstr(err.message, "such.urdf") != NULL);
    CHECK(mn_urdf_read_mem(NULL, 3, "x", &m, NULL, &err) == MN_ERR_ARG);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_dof_counts);
    RUN(test_chains);
    RUN(test_fk_matches_xml);
    RUN(test_limits_and_axes);
    RUN(test_joint_aliases);
    RUN(test_planar);
    RUN(test_small_mem);
    RUN(test_malformed);
    RUN(test_deep_chain);
    RUN(test_missing_file);
    return mn_test_report();
}
