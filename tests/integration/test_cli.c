/* The `marionette` command end to end: exit codes, messages, and outputs checked against the
 * library called in-process. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

/* Runs the CLI with args (a shell-quoted string); captures stdout and stderr separately. */
static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

#define PANDA MN_DATA "/robots/franka_panda/panda.urdf"
#define WALK MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"

static void test_help_and_usage(void) {
    char *out, *err;
    CHECK(run_cli("--help", &out, &err) == 0 && strstr(out, "info") && strstr(out, "convert"));
    free(out), free(err);
    CHECK(run_cli("", &out, &err) == 2);
    free(out), free(err);
    CHECK(run_cli("nosuchcommand", &out, &err) == 2 && strstr(err, "nosuchcommand"));
    free(out), free(err);
    const char* cmds[] = {"info",     "fk",          "convert",
                          "demo",     "solve",       "bench fk",
                          "bench ik", "bench scale", "bench ik --tracking-batch"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char a[64];
        snprintf(a, sizeof a, "%s --help", cmds[i]);
        CHECK(run_cli(a, &out, &err) == 0 && strstr(out, "usage:"));
        free(out), free(err);
    }
    CHECK(run_cli("info", &out, &err) == 2);
    free(out), free(err);
    CHECK(run_cli("fk '" PANDA "' --frame", &out, &err) == 2);
    free(out), free(err);
    CHECK(run_cli("info '" PANDA "' --bogus", &out, &err) == 2);
    free(out), free(err);
}

static void test_info(void) {
    char *out, *err;
    CHECK(run_cli("info '" PANDA "'", &out, &err) == 0);
    CHECK(out && strstr(out, "9 DOF") && strstr(out, "panda_link8") && strstr(out, "hinge"));
    free(out), free(err);
    CHECK(run_cli("info --json '" PANDA "'", &out, &err) == 0);
    CHECK(out && strstr(out, "\"dof\":9") && strstr(out, "\"name\":\"panda_link0\""));
    free(out), free(err);
    CHECK(run_cli("info '" WALK "'", &out, &err) == 0);
    CHECK(out && strstr(out, "frames: 344") && strstr(out, "Hips"));
    free(out), free(err);
}

/* The tree of a deep chain prints in size linear in the chain: indentation stops at 32
 * levels and deeper joints say their depth. */
static void test_info_deep_chain(void) {
    enum { N = 3000 };
    size_t cap = (size_t)N * 200 + 256, len = 0;
    char* text = malloc(cap);
    len += (size_t)snprintf(text + len, cap - len, "<robot name=\"deep\"><link name=\"l0\"/>\n");
    for (int i = 1; i <= N; i++)
        len += (size_t)snprintf(
            text + len, cap - len,
            "<link name=\"l%d\"/><joint name=\"j%d\" type=\"continuous\"><parent link=\"l%d\"/>"
            "<child link=\"l%d\"/><origin xyz=\"0 0 0.01\"/><axis xyz=\"0 1 0\"/></joint>\n",
            i, i, i - 1, i);
    len += (size_t)snprintf(text + len, cap - len, "</robot>\n");
    const char* path = mn_test_write_temp(".urdf", text, len);
    free(text);
    char args[1024], *out, *err;
    snprintf(args, sizeof args, "info '%s'", path);
    CHECK(run_cli(args, &out, &err) == 0);
    /* one line per link of at most 64 spaces, the depth, the name and the axis */
    CHECK(out && strlen(out) < (size_t)(N + 1) * 160);
    /* each link with its URDF joint's name */
    CHECK(out && strstr(out, "(depth 3000) l3000 (joint j3000)  hinge"));
    CHECK(out && strstr(out, "\n"
                             "                                l16 (joint j16)  hinge"));
    free(out), free(err);
    remove(path);
}

/* Parses "name x y z" lines and compares with in-process FK. */
static void check_fk_output(const char* out, const mn_model* m, const mn_data* d) {
    int seen = 0;
    for (int j = 0; j < m->njoint; j++) {
        char key[300];
        snprintf(key, sizeof key, "%s ", m->jnt_name[j]);
        const char* line = out;
        const char* hit = NULL;
        while ((line = strstr(line, key))) {
            if (line == out || line[-1] == '\n') {
                hit = line;
                break;
            }
            line++;
        }
        CHECK(hit != NULL);
        if (!hit) continue;
        double x, y, z;
        CHECK(sscanf(hit + strlen(key), "%lf %lf %lf", &x, &y, &z) == 3);
        mn_vec3 p = d->xf[j].p;
        double tol = 1e-7 * (1 + mn_vec3_norm(p));
        CHECK_NEAR(x, p.x, tol);
        CHECK_NEAR(y, p.y, tol);
        CHECK_NEAR(z, p.z, tol);
        seen++;
    }
    CHECK(seen == m->njoint);
}

static void test_fk(void) {
    mn_model* m = NULL;
    mn_error e;
    CHECK(mn_urdf_read(PANDA, &m, NULL, &e) == MN_OK);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    char args[1024], list[512] = "";
    for (int i = 0; i < m->nq; i++) {
        d->q[i] = 0.1 * (i + 1) - 0.3;
        char v[32];
        snprintf(v, sizeof v, "%s%.17g", i ? "," : "", d->q[i]);
        strcat(list, v);
    }
    mn_fk(m, d);
    snprintf(args, sizeof args, "fk '%s' --q %s", PANDA, list);
    char *out, *err;
    CHECK(run_cli(args, &out, &err) == 0);
    if (out) check_fk_output(out, m, d);
    free(out), free(err);
    /* wrong count: usage error naming the state size */
    CHECK(run_cli("fk '" PANDA "' --q 1,2,3", &out, &err) == 2 && strstr(err, "9"));
    free(out), free(err);
    mn_data_destroy(d);
    mn_model_destroy(m);

    /* a BVH frame */
    mn_motion mo;
    CHECK(mn_bvh_read(WALK, NULL, &m, &mo, NULL, &e) == MN_OK);
    if (!m) return;
    d = mn_data_create(m, 0);
    memcpy(d->q, mo.q + 100 * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    CHECK(run_cli("fk '" WALK "' --frame 100", &out, &err) == 0);
    if (out) check_fk_output(out, m, d);
    free(out), free(err);
    CHECK(run_cli("fk '" WALK "' --frame 100000", &out, &err) == 1 && strstr(err, "frames"));
    free(out), free(err);
    mn_data_destroy(d);
    mn_model_destroy(m);
    mn_motion_free(&mo);
}

static void test_bad_input(void) {
    const char* text = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 nan\n";
    const char* bad = mn_test_write_temp(".bvh", text, strlen(text));
    char args[512];
    snprintf(args, sizeof args, "info '%s'", bad);
    char *out, *err;
    CHECK(run_cli(args, &out, &err) == 1);
    /* one line naming the file and the line */
    CHECK(err && strstr(err, bad) && strchr(err, '\n') == err + strlen(err) - 1);
    free(out), free(err);
    CHECK(run_cli("info /nonexistent/file.bvh", &out, &err) == 1 &&
          strstr(err, "/nonexistent/file.bvh"));
    free(out), free(err);
    remove(bad);
}

/* convert BVH -> .glb, then info and fk on the .glb (--frame, --anim, --time) against
 * in-process FK of the BVH frames, to 1e-6 of the figure's size (the .glb holds floats). */
static double fk_line_error(const char* out, const mn_model* m, const mn_data* d) {
    double worst = 0;
    int seen = 0;
    for (int j = 0; j < m->njoint; j++) {
        char key[300];
        snprintf(key, sizeof key, "%s ", m->jnt_name[j]);
        const char* hit = NULL;
        for (const char* line = out; (line = strstr(line, key)); line++)
            if (line == out || line[-1] == '\n') {
                hit = line;
                break;
            }
        double x, y, z;
        if (!hit || sscanf(hit + strlen(key), "%lf %lf %lf", &x, &y, &z) != 3) return 1e300;
        mn_vec3 p = d->xf[j].p;
        worst = fmax(worst, fmax(fabs(x - p.x), fmax(fabs(y - p.y), fabs(z - p.z))));
        seen++;
    }
    return seen == m->njoint ? worst : 1e300;
}

static void test_convert_glb(void) {
    char glb[512], args[1200];
    snprintf(glb, sizeof glb, "%s/walk.glb", mn_test_temp_dir());
    char *out, *err;
    /* in the file's own lengths (--scale 1), to compare with the BVH's FK as it is; the
     * guessed unit is tested in test_cli_units.c */
    snprintf(args, sizeof args, "convert '" WALK "' '%s' --scale 1", glb);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    mn_model* m = NULL;
    mn_motion mo;
    mn_error e;
    CHECK(mn_bvh_read(WALK, NULL, &m, &mo, NULL, &e) == MN_OK);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    mn_fk(m, d);
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (int j = 0; j < m->njoint; j++) {
        const double* p = &d->xf[j].p.x;
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], p[k]), hi[k] = fmax(hi[k], p[k]);
    }
    double size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    snprintf(args, sizeof args, "info '%s'", glb);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "animations: 1"));
    /* the duration as glTF stores key times: in single precision */
    const char* mot = out ? strstr(out, "motion: ") : NULL;
    double dur = 0;
    int keys = 0;
    CHECK(mot && sscanf(mot, "motion: %lf s, %d keys", &dur, &keys) == 2);
    CHECK(keys == mo.nframes && fabs(dur - (mo.nframes - 1) * mo.frame_time) < 1e-6 * dur);
    free(out), free(err);
    snprintf(args, sizeof args, "info --json '%s'", glb);
    CHECK(run_cli(args, &out, &err) == 0 && out &&
          strstr(out, "\"animations\":[{\"name\":\"motion\""));
    free(out), free(err);
    int frames[3] = {0, 100, mo.nframes - 1};
    for (int k = 0; k < 3; k++) {
        memcpy(d->q, mo.q + (size_t)frames[k] * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        snprintf(args, sizeof args, "fk '%s' --frame %d", glb, frames[k]);
        CHECK(run_cli(args, &out, &err) == 0 && out);
        double ef = out ? fk_line_error(out, m, d) : 1e300;
        free(out), free(err);
        snprintf(args, sizeof args, "fk '%s' --anim motion --time %.17g", glb,
                 frames[k] * mo.frame_time);
        CHECK(run_cli(args, &out, &err) == 0 && out);
        double et = out ? fk_line_error(out, m, d) : 1e300;
        free(out), free(err);
        CHECK(ef < 1e-6 * size && et < 1e-6 * size);
        printf("  walk.glb frame %d: fk --frame error %.2g, --time error %.2g of the figure size "
               "%.3g\n",
               frames[k], ef / size, et / size, size);
    }
    snprintf(args, sizeof args, "fk '%s' --frame %d", glb, mo.nframes);
    CHECK(run_cli(args, &out, &err) == 1 && err && strstr(err, "key times"));
    free(out), free(err);
    snprintf(args, sizeof args, "fk '%s' --anim nope", glb);
    CHECK(run_cli(args, &out, &err) == 1 && err && strstr(err, "--anim"));
    free(out), free(err);
    CHECK(run_cli("fk '" WALK "' --time 1", &out, &err) == 2);
    free(out), free(err);
    snprintf(args, sizeof args, "fk '%s' --frame 1 --time 1", glb);
    CHECK(run_cli(args, &out, &err) == 2);
    free(out), free(err);
    snprintf(args, sizeof args, "convert '" WALK "' '%s/walk.txt'", mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 2);
    free(out), free(err);
    /* glTF in: --anim picks the animation; from a skinned glTF the .glb keeps the mesh */
    char fox[512];
    snprintf(fox, sizeof fox, "%s/fox.glb", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert '" MN_DATA "/skinned/Fox.glb' '%s' --anim Walk", fox);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(args, sizeof args, "info '%s'", fox);
    CHECK(run_cli(args, &out, &err) == 0 && out && strstr(out, "motion: 0.708333313 s, 18 keys"));
    free(out), free(err);
    snprintf(args, sizeof args, "convert '" MN_DATA "/skinned/Fox.glb' '%s' --anim Nope", fox);
    CHECK(run_cli(args, &out, &err) == 1 && err && strstr(err, "Nope"));
    free(out), free(err);
    snprintf(args, sizeof args, "convert '" WALK "' '%s' --anim Walk", fox);
    CHECK(run_cli(args, &out, &err) == 2);
    free(out), free(err);
    remove(fox);
    remove(glb);
    mn_data_destroy(d);
    mn_model_destroy(m);
    mn_motion_free(&mo);
}

static void test_convert_round_trip(void) {
    /* skeleton text -> BVH -> skeleton text: same world positions at rest */
    char skel[64], bvh[64], back[64];
    snprintf(skel, sizeof skel, "%s",
             mn_test_write_temp(".skel", mn_stickman_text(), strlen(mn_stickman_text())));
    snprintf(bvh, sizeof bvh, "%s", mn_test_write_temp(".bvh", "", 0));
    snprintf(back, sizeof back, "%s", mn_test_write_temp(".skel", "", 0));
    char args[512], *out, *err;
    snprintf(args, sizeof args, "convert '%s' '%s'", skel, bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(args, sizeof args, "convert '%s' '%s'", bvh, back);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    mn_model *a = NULL, *b = NULL, *c = NULL;
    mn_error e;
    mn_motion mo;
    CHECK(mn_skel_read(skel, &a, NULL, &e) == MN_OK);
    mn_bvh_options bo = mn_bvh_default();
    bo.names_of = a; /* the figure's names back: "right_arm" -> "right arm" */
    CHECK(a && mn_bvh_read(bvh, &bo, &b, &mo, NULL, &e) == MN_OK);
    CHECK(mn_skel_read(back, &c, NULL, &e) == MN_OK);
    if (a && b && c) {
        /* skeleton -> BVH: the one frame written is the skeleton's rest pose */
        mn_data *da = mn_data_create(a, 0), *db = mn_data_create(b, 0), *dc = mn_data_create(c, 0);
        mn_data* db0 = mn_data_create(b, 0); /* the BVH model's own rest: zero channels */
        CHECK(mo.nframes == 1);
        if (mo.nframes > 0) memcpy(db->q, mo.q, sizeof(double) * (size_t)b->nq);
        mn_fk(b, db);
        for (int j = 0; j < a->njoint; j++) {
            /* a compound joint ("torso.1", "torso.2", "torso") is one BVH joint ("torso");
             * the skeleton written from the BVH has the figure's names back ("right arm":
             * the command line knows a BVH of the built-in figure) */
            int k = j;
            while (mn_model_find_joint(b, a->jnt_name[k]) < 0 && k + 1 < a->njoint &&
                   a->jnt_parent[k + 1] == k)
                k++;
            int jb = mn_model_find_joint(b, a->jnt_name[k]);
            int jc = mn_model_find_joint(c, a->jnt_name[k]);
            CHECK(jb >= 0 && jc >= 0);
            if (jb < 0 || jc < 0) continue;
            CHECK(mn_vec3_dist(da->xf[j].p, db->xf[jb].p) < 1e-9);
            /* BVH -> skeleton keeps the figure (its rest is the BVH's zero pose; motion is
             * not part of a skeleton file) */
            CHECK(mn_vec3_dist(db0->xf[jb].p, dc->xf[jc].p) < 1e-9);
        }
        mn_data_destroy(da), mn_data_destroy(db), mn_data_destroy(dc), mn_data_destroy(db0);
    }
    mn_motion_free(&mo);
    mn_model_destroy(a), mn_model_destroy(b), mn_model_destroy(c);
    /* an unwritable destination fails with exit 1 and leaves nothing behind */
    snprintf(args, sizeof args, "convert '%s' /nonexistent/dir/out.bvh", skel);
    CHECK(run_cli(args, &out, &err) == 1);
    free(out), free(err);
    remove(skel), remove(bvh), remove(back);
}

static void test_demo(void) {
    char *out, *err;
    CHECK(run_cli("demo", &out, &err) == 0);
    CHECK(out && strstr(out, "left hand") && strstr(out, "pelvis") && strstr(out, "pull"));
    free(out), free(err);
}

/* solve: the returned joint values put the tip on the target, checked with in-process FK. */
static void test_solve(void) {
    mn_model* m = NULL;
    mn_error e;
    CHECK(mn_urdf_read(PANDA, &m, NULL, &e) == MN_OK);
    if (!m) return;
    int base = mn_model_find_joint(m, "panda_link0"), tip = mn_model_find_joint(m, "panda_link8");
    mn_chain* c = mn_chain_create(m, base, tip, &e);
    CHECK(c && c->ndof == 7);
    if (!c) return;
    double qt[7] = {0.3, -0.4, 0.2, -1.9, 0.1, 1.2, 0.5};
    mn_xform T;
    mn_chain_fk(m, c, qt, &T);
    mn_quat r = mn_quat_from_mat3(&T.R);
    char args[1024], *out, *err;
    snprintf(args, sizeof args,
             "solve '%s' --base panda_link0 --tip panda_link8 --target "
             "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g --json --timeout-ms 0",
             PANDA, T.p.x, T.p.y, T.p.z, r.w, r.x, r.y, r.z);
    CHECK(run_cli(args, &out, &err) == 0);
    const char* qs = out ? strstr(out, "\"q\":[") : NULL;
    CHECK(qs != NULL);
    if (qs) {
        double q[7];
        const char* p = qs + 5;
        int n = 0;
        while (n < 7 && sscanf(p, " %lf", &q[n]) == 1) {
            n++;
            p = strchr(p, n < 7 ? ',' : ']');
            if (!p) break;
            p++;
        }
        CHECK(n == 7);
        mn_xform S;
        mn_chain_fk(m, c, q, &S);
        CHECK(mn_vec3_dist(S.p, T.p) < 1e-5);
        CHECK(mn_vec3_norm(mn_rotation_error(&S.R, &T.R)) < 1e-5);
        for (int i = 0; i < 7; i++) {
            int j = c->jnt[i];
            CHECK(q[i] >= m->jnt_range[2 * j] - 1e-12 && q[i] <= m->jnt_range[2 * j + 1] + 1e-12);
        }
    }
    free(out), free(err);
    /* bad input: a NaN target is refused naming the option; an unknown link is named */
    CHECK(run_cli("solve '" PANDA "' --base panda_link0 --tip panda_link8 --target nan,0,0", &out,
                  &err) != 0 &&
          err && strstr(err, "--target"));
    free(out), free(err);
    CHECK(run_cli("solve '" PANDA "' --base panda_link0 --tip nosuchlink --target 0.1,0,0.5", &out,
                  &err) == 1 &&
          err && strstr(err, "nosuchlink"));
    free(out), free(err);
    /* tip above base */
    CHECK(run_cli("solve '" PANDA "' --base panda_link8 --tip panda_link0 --target 0.1,0,0.5", &out,
                  &err) != 0);
    free(out), free(err);
    mn_chain_destroy(c);
    mn_model_destroy(m);
}

/* pose: the thesis's hands-on-hips scene on the built-in figure holds every constraint. */
static void test_pose(void) {
    char *out, *err;
    CHECK(run_cli("pose stickman --scene '" MN_SOURCE "/docs/examples/hands_on_hips.json'", &out,
                  &err) == 0);
    int n = 0;
    for (const char* p = out; p && (p = strstr(p, "residual=")); p++) {
        double r = 1;
        CHECK(sscanf(p + 9, "%lf", &r) == 1 && r < 1e-4);
        n++;
    }
    CHECK(n == 7);
    const char* elbow = out ? strstr(out, "q right elbow: ") : NULL;
    double eq = 0;
    CHECK(elbow && sscanf(elbow + 15, "%lf", &eq) == 1 && eq < -0.5); /* the elbows bend */
    free(out), free(err);
    /* a crouch: feet pinned and flat, pelvis level, hands on the hips, pelvis 12 cm down */
    CHECK(run_cli("pose stickman --scene '" MN_SOURCE "/docs/examples/crouch_stickman.json'", &out,
                  &err) == 0);
    n = 0;
    for (const char* p = out; p && (p = strstr(p, "residual=")); p++) {
        double r = 1;
        CHECK(sscanf(p + 9, "%lf", &r) == 1 && r < 1e-4);
        n++;
    }
    CHECK(n == 7);
    const char* knee = out ? strstr(out, "q right knee: ") : NULL;
    double kq = 0;
    CHECK(knee && sscanf(knee + 14, "%lf", &kq) == 1 && kq > 0.5); /* the knees bend */
    const char* dr = out ? strstr(out, "max_drag_error=") : NULL;
    double de = 1;
    CHECK(dr && sscanf(dr + 15, "%lf", &de) == 1 && de < 1e-3); /* and the pelvis gets there */
    free(out), free(err);
    const char* text = "{\"handles\": [{\"name\": \"h\", \"joint\": \"no such joint\"}]}";
    const char* bad = mn_test_write_temp(".json", text, strlen(text));
    char args[512];
    snprintf(args, sizeof args, "pose stickman --scene '%s'", bad);
    CHECK(run_cli(args, &out, &err) == 1 && err && strstr(err, "no such joint") &&
          strstr(err, bad));
    free(out), free(err);
    remove(bad);
}

/* The numbers of the JSON array after "key": [ in text (at most cap); returns how many. */
static int json_numbers(const char* text, const char* key, double* v, int cap) {
    const char* p = text ? strstr(text, key) : NULL;
    if (!p || !(p = strchr(p, '['))) return 0;
    int n = 0;
    for (p++; n < cap;) {
        char* end;
        double x = strtod(p, &end);
        if (end == p) break;
        v[n++] = x;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return n;
}

/* pose --out: every frame to BVH, the last frame the state printed; other extensions are a
 * usage error; a bad scene writes nothing. */
static void test_pose_out(void) {
    char bvh[256], args[1024], *out, *err;
    snprintf(bvh, sizeof bvh, "%s/pose_out.bvh", mn_test_temp_dir());
    snprintf(args, sizeof args,
             "pose stickman --scene '" MN_SOURCE
             "/docs/examples/crouch_stickman.json' --json --fps 60 --out '%s'",
             bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    mn_error e;
    mn_model* m = mn_stickman_model(&e);
    mn_model* b = NULL;
    mn_motion mo;
    memset(&mo, 0, sizeof mo);
    mn_bvh_options bo = mn_bvh_default();
    bo.names_of = m; /* the figure's names back: "right_arm" -> "right arm" */
    CHECK(m && mn_bvh_read(bvh, &bo, &b, &mo, NULL, &e) == MN_OK);
    CHECK(mo.nframes == 40); /* the scene's frames */
    CHECK_NEAR(mo.frame_time, 1.0 / 60.0, 1e-12);
    double* q = m ? malloc(sizeof(double) * (size_t)m->nq) : NULL;
    if (m && b && q && mo.nframes == 40) {
        CHECK(json_numbers(out, "\"q\":", q, m->nq) == m->nq);
        mn_data* dm = mn_data_create(m, 0);
        mn_data* db = mn_data_create(b, 0);
        memcpy(dm->q, q, sizeof(double) * (size_t)m->nq);
        mn_fk(m, dm);
        memcpy(db->q, mo.q + (size_t)39 * b->nq, sizeof(double) * (size_t)b->nq);
        mn_fk(b, db);
        double worst = 0;
        for (int j = 0; j < m->njoint; j++) {
            /* a compound joint ("torso.1", "torso.2", "torso") is one BVH joint ("torso") */
            int k = j;
            while (mn_model_find_joint(b, m->jnt_name[k]) < 0 && k + 1 < m->njoint &&
                   m->jnt_parent[k + 1] == k)
                k++;
            int jb = mn_model_find_joint(b, m->jnt_name[k]);
            CHECK(jb >= 0);
            if (jb >= 0) worst = fmax(worst, mn_vec3_dist(dm->xf[j].p, db->xf[jb].p));
        }
        CHECK(worst < 1e-9); /* the last frame is the printed last state */
        /* and the first frame differs from it: the drags move over the frames */
        memcpy(db->q, mo.q, sizeof(double) * (size_t)b->nq);
        mn_fk(b, db);
        int pelvis = mn_model_find_joint(b, "pelvis");
        CHECK(pelvis >= 0 && mn_vec3_dist(db->xf[pelvis].p, dm->xf[0].p) > 1e-3);
        mn_data_destroy(dm);
        mn_data_destroy(db);
    }
    free(q);
    free(out), free(err);
    mn_motion_free(&mo);
    mn_model_destroy(b);
    mn_model_destroy(m);
    remove(bvh);
    /* a glTF binary: the file starts with the glTF header */
    snprintf(args, sizeof args,
             "pose stickman --scene '" MN_SOURCE
             "/docs/examples/crouch_stickman.json' --out '%s/x.glb'",
             mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(bvh, sizeof bvh, "%s/x.glb", mn_test_temp_dir());
    {
        size_t n = 0;
        char* glb = mn_test_read_file(bvh, &n);
        CHECK(glb && n > 12 && !memcmp(glb, "glTF", 4));
        free(glb);
        remove(bvh);
    }
    /* other extensions: a usage error, nothing written */
    snprintf(args, sizeof args,
             "pose stickman --scene '" MN_SOURCE
             "/docs/examples/crouch_stickman.json' --out '%s/x.gltf'",
             mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 2 && err && strstr(err, "--out") && strstr(err, ".bvh"));
    free(out), free(err);
    snprintf(bvh, sizeof bvh, "%s/x.gltf", mn_test_temp_dir());
    CHECK(fopen(bvh, "r") == NULL);
    /* a bad scene: exit 1 and no file */
    const char* text = "{\"handles\": [{\"name\": \"h\", \"joint\": \"no such joint\"}]}";
    char bad[256];
    snprintf(bad, sizeof bad, "%s", mn_test_write_temp(".json", text, strlen(text)));
    snprintf(bvh, sizeof bvh, "%s/never.bvh", mn_test_temp_dir());
    snprintf(args, sizeof args, "pose stickman --scene '%s' --out '%s'", bad, bvh);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(fopen(bvh, "r") == NULL);
    free(out), free(err);
    remove(bad);
}

/* pose reports the worst frame, not the last: the crouch's 40 frames written to BVH and
 * read back, each frame's largest position violation (the feet off where they stood, the
 * hands off the hips) recomputed; the printed max_violation is the largest of them, at the
 * printed worst_frame, and larger than the last frame's. */
static void test_pose_worst_frame(void) {
    char bvh[256], args[1024], *out, *err;
    snprintf(bvh, sizeof bvh, "%s/pose_worst.bvh", mn_test_temp_dir());
    snprintf(args, sizeof args,
             "pose stickman --scene '" MN_SOURCE
             "/docs/examples/crouch_stickman.json' --json --out '%s'",
             bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    /* --json: one line, no spaces, read as JSON */
    cJSON* doc = out ? cJSON_Parse(out) : NULL;
    CHECK(doc != NULL && strchr(out, '\n') == out + strlen(out) - 1);
    const cJSON* mv = cJSON_GetObjectItemCaseSensitive(doc, "max_violation");
    const cJSON* wf = cJSON_GetObjectItemCaseSensitive(doc, "worst_frame");
    const cJSON* um = cJSON_GetObjectItemCaseSensitive(doc, "unmet_frames");
    CHECK(cJSON_IsNumber(mv) && cJSON_IsNumber(wf) && cJSON_IsNumber(um) && um->valueint == 0);
    double printed = cJSON_IsNumber(mv) ? mv->valuedouble : -1;
    int worst_frame = cJSON_IsNumber(wf) ? wf->valueint : -1;
    cJSON_Delete(doc);
    mn_error e;
    mn_model* m = mn_stickman_model(&e);
    mn_model* b = NULL;
    mn_motion mo;
    memset(&mo, 0, sizeof mo);
    mn_bvh_options bo = mn_bvh_default();
    bo.names_of = m;
    CHECK(m && mn_bvh_read(bvh, &bo, &b, &mo, NULL, &e) == MN_OK);
    if (m && b && mo.nframes == 40) {
        mn_data* dm = mn_data_create(m, 0);
        mn_fk(m, dm); /* the rest pose: where the feet stand */
        const char* feet[2] = {"left foot", "right foot"};
        const char* hands[2] = {"left hand", "right hand"};
        mn_data* db = mn_data_create(b, 0);
        int pelvis = mn_model_find_joint(b, "pelvis");
        double worst = 0, last = 0;
        int at = -1;
        for (int f = 0; f < mo.nframes; f++) {
            memcpy(db->q, mo.q + (size_t)f * b->nq, sizeof(double) * (size_t)b->nq);
            mn_fk(b, db);
            double v = 0;
            for (int i = 0; i < 2; i++) {
                int jb = mn_model_find_joint(b, feet[i]);
                v = fmax(v, mn_vec3_dist(db->xf[jb].p, dm->xf[mn_model_find_joint(m, feet[i])].p));
                mn_vec3 hip = mn_point_world(db, pelvis, mn_v3(i == 0 ? 0.19 : -0.19, -0.07, 0));
                v = fmax(v, mn_vec3_dist(db->xf[mn_model_find_joint(b, hands[i])].p, hip));
            }
            if (v > worst) worst = v, at = f;
            last = v;
        }
        CHECK_NEAR(printed, worst, 1e-7);
        CHECK(at == worst_frame);
        CHECK(worst > 2 * last); /* the last frame's figure would hide it */
        if (at != worst_frame || fabs(printed - worst) > 1e-7)
            fprintf(stderr, "  printed %g at %d; read back %g at %d (last %g)\n", printed,
                    worst_frame, worst, at, last);
        mn_data_destroy(dm);
        mn_data_destroy(db);
    }
    free(out), free(err);
    mn_motion_free(&mo);
    mn_model_destroy(b);
    mn_model_destroy(m);
    remove(bvh);
}

/* pose runs at most MN_SCENE_MAX_FRAMES frames: a scene asking for more, or animated by a
 * sequence whose keys are ten million frames apart, is refused before any solve, the
 * message naming the file, the field and the limit. */
static void test_pose_frame_limit(void) {
    char dir[512], scene[600], seq[600], args[1400], *out, *err;
    snprintf(dir, sizeof dir, "%s", mn_test_temp_dir());
    snprintf(scene, sizeof scene, "%s/long_scene.json", dir);
    snprintf(seq, sizeof seq, "%s/long_keys.json", dir);
    FILE* f = fopen(scene, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"comment\": \"too long\",\n \"frames\": 100001}\n", f);
    fclose(f);
    snprintf(args, sizeof args, "pose stickman --scene '%s'", scene);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(err && strstr(err, "long_scene.json:2: frames: must be in [1, 100000]"));
    CHECK(out && !out[0]);
    free(out), free(err);
    f = fopen(seq, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"figure\": \"stickman\", \"fps\": 30, \"keys\": [{\"frame\": 0, \"pose\": {}}, "
          "{\"frame\": 9999998, \"pose\": {}}]}\n",
          f);
    fclose(f);
    f = fopen(scene, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"figures\": [{\"name\": \"a\", \"sequence\": \"long_keys.json\"}]}\n", f);
    fclose(f);
    snprintf(args, sizeof args, "pose --scene '%s' --out '%s/long.bvh'", scene, dir);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(err && strstr(err, "long_scene.json: figures: the sequences run from frame 0 to "
                             "9999998, more than 100000 frames"));
    snprintf(args, sizeof args, "%s/long.bvh", dir);
    CHECK(fopen(args, "r") == NULL);
    free(out), free(err);
    remove(scene);
    remove(seq);
}

/* SIGINT and SIGTERM end pose in the middle of the limit's worst case (100000 frames of
 * conflicting constraints, seconds of work): the process dies of the signal, --out is not
 * written. */
static void test_pose_interrupted(void) {
    char scene[600], bvh[600];
    snprintf(scene, sizeof scene, "%s/conflict.json", mn_test_temp_dir());
    snprintf(bvh, sizeof bvh, "%s/conflict.bvh", mn_test_temp_dir());
    FILE* f = fopen(scene, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"frames\": 100000,\n"
          " \"handles\": [{\"name\": \"hand\", \"joint\": \"right hand\"},\n"
          "             {\"name\": \"foot\", \"joint\": \"left foot\"}],\n"
          " \"constraints\": [{\"type\": \"pin\", \"handle\": \"hand\", \"target\": [2, 3, 0]},\n"
          "  {\"type\": \"pin\", \"handle\": \"hand\", \"target\": [-2, -3, 1]},\n"
          "  {\"type\": \"pin\", \"handle\": \"foot\", \"target\": [0, 5, 0]}],\n"
          " \"drags\": [{\"handle\": \"hand\", \"offset\": [5, 5, 5]}]}\n",
          f);
    fclose(f);
    const int sigs[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            execl(MN_CLI, MN_CLI, "pose", "stickman", "--scene", scene, "--out", bvh, (char*)NULL);
            _exit(127);
        }
        CHECK(pid > 0);
        if (pid <= 0) continue;
        struct timespec nap = {0, 300 * 1000 * 1000};
        nanosleep(&nap, NULL);
        kill(pid, sigs[i]);
        int st = 0;
        CHECK(waitpid(pid, &st, 0) == pid);
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i]);
        CHECK(access(bvh, F_OK) != 0);
    }
    remove(scene);
}

/* convert from skeleton text to skeleton text keeps the file's layout: the thesis's own
 * Fig. 6.1 as printed (several items a line, typographic quotes) comes out one item a line
 * with its groups, comment and mirror line, and that text converts to itself byte for
 * byte. */
static void test_convert_skel_layout(void) {
    char a[600], b[600], args[1400], *out, *err;
    snprintf(a, sizeof a, "%s/fig61_a.scr", mn_test_temp_dir());
    snprintf(b, sizeof b, "%s/fig61_b.scr", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert '" MN_SOURCE "/fuzz/corpus/fuzz_skel/fig6_1.scr' '%s'", a);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    size_t na = 0, nb = 0;
    char* ta = mn_test_read_file(a, &na);
    CHECK(ta && strstr(ta, "# Example .scr file for a stick figure.\n") &&
          strstr(ta, "  group \"Upper body\"\n    joint \"torso\"\n") &&
          strstr(ta, "    joint \"head\" # \"head\" is a child of \"torso\"\n") &&
          strstr(ta, "  orientation 0 0 0\n  mirror \"left leg\"\nend joint") &&
          !strstr(ta, "define joint \"left leg\""));
    snprintf(args, sizeof args, "convert '%s' '%s'", a, b);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    char* tb = mn_test_read_file(b, &nb);
    CHECK(ta && tb && na == nb && !memcmp(ta, tb, na));
    free(ta);
    free(tb);
    remove(a);
    remove(b);
}

/* solve and pose on a rig with position channels on every joint: the arm does not stretch
 * to a target beyond its reach unless --free-translations. */
static void test_held_translations(void) {
    char *out, *err;
    /* LeftArm's pivot is 3.6 units from LeftShoulder, the arm beyond it 8.2 long */
    const char* far = "solve '" MN_TEST_DATA "/cmu_02_01_walk_positions.bvh' --base LeftShoulder "
                      "--tip LeftHand --target 25,0,0 --timeout-ms 0";
    CHECK(run_cli(far, &out, &err) == 1);
    CHECK(out && strstr(out, "status UNREACHABLE"));
    free(out), free(err);
    char args[512];
    snprintf(args, sizeof args, "%s --free-translations", far);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "status OK"));
    free(out), free(err);
    /* pose: the hips pinned, the left hand pinned 3 m away (about twice the figure's size) */
    const char* scene =
        "{\"handles\": [{\"name\": \"hips\", \"joint\": \"Hips\"}, {\"name\": \"hand\", \"joint\": "
        "\"LeftHand\"}],\n"
        " \"constraints\": [{\"type\": \"pin\", \"handle\": \"hips\"},\n"
        "                 {\"type\": \"pin\", \"handle\": \"hand\", \"target\": [3, 1, 0]}]}\n";
    char sc[256];
    snprintf(sc, sizeof sc, "%s", mn_test_write_temp(".json", scene, strlen(scene)));
    snprintf(args, sizeof args,
             "pose '" MN_TEST_DATA
             "/cmu_02_01_walk_positions.bvh' --scale 0.056444 --frame 0 --scene '%s' --iters 200",
             sc);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "status=UNREACHABLE"));
    /* the held positions stay at zero (the channels equal the OFFSETs) */
    const char* la = out ? strstr(out, "q LeftArm:") : NULL;
    double p[3] = {1, 1, 1};
    CHECK(la && sscanf(la + 10, "%lf %lf %lf", &p[0], &p[1], &p[2]) == 3);
    CHECK(p[0] == 0 && p[1] == 0 && p[2] == 0);
    free(out), free(err);
    snprintf(args, sizeof args,
             "pose '" MN_TEST_DATA "/cmu_02_01_walk_positions.bvh' --scale 0.056444 --frame 0 "
             "--scene '%s' --iters 400 --free-translations",
             sc);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "status=OK"));
    free(out), free(err);
    remove(sc);
}

/* The speed benchmarks' figures that are not times: the hand-unrolled Panda reference
 * reproduces the library's chain FK (bench fk prints ref_ns only then) and the flop count;
 * the tracking batch gives the loop's answers and meets every target; bench scale fits
 * its exponents and writes its plot. */
static void test_speed_benches(void) {
    char *out, *err, a[1024];
    CHECK(run_cli("bench fk '" PANDA "' --base panda_link0 --tip panda_link8 --reps 50", &out,
                  &err) == 0);
    CHECK(out && strstr(out, "flops=405 sincos_flops=224") && strstr(out, " ref_ns="));
    free(out), free(err);
    CHECK(run_cli("bench fk '" PANDA "' --base panda_link0 --tip panda_link4 --reps 50", &out,
                  &err) == 0);
    CHECK(out && strstr(out, "flops=") && !strstr(out, "ref_ns=")); /* not the Panda's chain */
    free(out), free(err);
    CHECK(run_cli("bench ik --tracking-batch --urdf '" PANDA
                  "' --base panda_link0 --tip panda_link8 --n 200 --runs 1",
                  &out, &err) == 0);
    CHECK(out && strstr(out, "solve_rate=100.0000") && strstr(out, "same_answers=1"));
    free(out), free(err);
    /* bench convert: the sizes (a URDF's document is smaller than the file), both parts */
    CHECK(run_cli("bench convert '" PANDA "' --reps 1", &out, &err) == 0);
    const char* lib =
        out ? strstr(out, "file=panda.urdf part=library bytes=15069 out_bytes=") : NULL;
    CHECK(lib && atol(lib + 51) > 0 && atol(lib + 51) < 15069);
    CHECK(out && strstr(out, "file=panda.urdf part=commands info_ms=") &&
          strstr(out, "part=format "));
    free(out), free(err);
    CHECK(run_cli("bench scale --bogus", &out, &err) == 2);
    free(out), free(err);
    snprintf(a, sizeof a, "bench scale --case csys --rounds 1 --solver lagrange --svg '%s'",
             mn_test_temp_dir());
    CHECK(run_cli(a, &out, &err) == 0);
    CHECK(out && strstr(out, "case=csys-exponent solver=lagrange") && strstr(out, "k_solve="));
    free(out), free(err);
    snprintf(a, sizeof a, "%s/scale-csys.svg", mn_test_temp_dir());
    FILE* f = fopen(a, "r");
    CHECK(f != NULL);
    if (f) {
        char head[16] = {0};
        CHECK(fread(head, 1, 4, f) == 4 && !strncmp(head, "<svg", 4));
        fclose(f);
    }
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_help_and_usage);
    RUN(test_speed_benches);
    RUN(test_info);
    RUN(test_info_deep_chain);
    RUN(test_fk);
    RUN(test_bad_input);
    RUN(test_convert_round_trip);
    RUN(test_convert_glb);
    RUN(test_convert_skel_layout);
    RUN(test_demo);
    RUN(test_solve);
    RUN(test_pose);
    RUN(test_pose_out);
    RUN(test_pose_worst_frame);
    RUN(test_pose_frame_limit);
    RUN(test_pose_interrupted);
    RUN(test_held_translations);
    return mn_test_report();
}
