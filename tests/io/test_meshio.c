/* OBJ, DMAT, TGF and Tmat readers and writers, tables of malformed inputs, and the
 * cylinder sequence (libigl layout, exact ground truth): forward skinning with the given
 * bone transforms reproduces every posed mesh, and the fit recovers every pose. */
#include <marionette/gltf.h>
#include <marionette/meshio.h>
#include <marionette/skin.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define CYL MN_DATA "/meshseq/cylinder"

static void test_obj_read(void) {
    const char* text =
        "# a quad and a triangle\r\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
        "vt 0 0\nvn 0 0 1\ng group\nf 1/1/1 2/1/1 3/1/1 4/1/1\nf -4//1 -2//1 -1//1\n";
    mn_mesh m;
    mn_warnings w = {0};
    mn_error err;
    CHECK(mn_obj_read_mem(text, strlen(text), "t.obj", &m, &w, &err) == MN_OK);
    CHECK(m.nverts == 4);
    CHECK(m.ntris == 3);
    int want[9] = {0, 1, 2, 0, 2, 3, 0, 2, 3};
    for (int i = 0; i < 9 && m.ntris == 3; i++)
        CHECK(m.tris[i] == want[i]);
    CHECK(w.count == 1 && strstr(w.first, "3 records") != NULL); /* vt, vn, g */
    CHECK_NEAR(m.pos[7], 1.0, 0);

    /* write and read back */
    const char* path = mn_test_write_temp(".obj", "", 0);
    CHECK(mn_obj_write(path, m.nverts, m.pos, m.ntris, m.tris, &err) == MN_OK);
    mn_mesh b;
    CHECK(mn_obj_read(path, &b, NULL, &err) == MN_OK);
    CHECK(b.nverts == 4 && b.ntris == 3);
    for (int i = 0; i < 12 && b.nverts == 4; i++)
        CHECK_NEAR(b.pos[i], m.pos[i], 1e-12);
    for (int i = 0; i < 9 && b.ntris == 3; i++)
        CHECK(b.tris[i] == m.tris[i]);
    /* a write that fails leaves the file as it was */
    double bad[3] = {0, NAN, 0};
    CHECK(mn_obj_write(path, 1, bad, 0, NULL, &err) == MN_ERR_ARG);
    mn_mesh c;
    CHECK(mn_obj_read(path, &c, NULL, &err) == MN_OK && c.nverts == 4);
    mn_mesh_free(&c);
    mn_mesh_free(&b);
    mn_mesh_free(&m);
}

typedef struct bad_case {
    const char* text;
    int line;
    const char* field;
} bad_case;

static void test_obj_malformed(void) {
    static const bad_case cases[] = {
        {"", 0, "v"},
        {"# only a comment\n", 0, "v"},
        {"v 1 2\n", 1, "v"},
        {"v 1 2 nan\n", 1, "v"},
        {"v 1 2 1e999\n", 1, "v"},
        {"v 1 2 3x\n", 1, "v"},
        {"v 0 0 0\nv 1 0 0\nf 1 2\n", 3, "f"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 5\n", 0, "f"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n", 4, "f"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", 4, "f"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf -4 1 2\n", 4, "f"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n", 4, "f"},
        {"v 0 0 0\nf 1 1 1 \x01\n", 2, "f"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mn_mesh m = {7, (double*)1, 7, (int*)1};
        mn_error err;
        mn_error_clear(&err);
        mn_status st =
            mn_obj_read_mem(cases[k].text, strlen(cases[k].text), "bad.obj", &m, NULL, &err);
        if (st == MN_OK || err.line != cases[k].line || strcmp(err.field, cases[k].field) != 0)
            fprintf(stderr, "  case %zu: status %d line %d field '%s': %s\n", k, st, err.line,
                    err.field, err.message);
        CHECK(st == MN_ERR_PARSE);
        CHECK(err.line == cases[k].line);
        CHECK(strcmp(err.field, cases[k].field) == 0);
        CHECK(strstr(err.message, "bad.obj") == err.message);
        CHECK(m.nverts == 0 && m.pos == NULL && m.tris == NULL);
    }
}

static void test_dmat(void) {
    /* 3 rows x 2 cols, column-major in the file */
    const char* text = "2 3\n1\n2\n3\n4\n5\n6\n";
    mn_dmat d;
    mn_error err;
    CHECK(mn_dmat_read_mem(text, strlen(text), "t.DMAT", &d, &err) == MN_OK);
    CHECK(d.rows == 3 && d.cols == 2);
    double want[6] = {1, 4, 2, 5, 3, 6};
    for (int i = 0; i < 6; i++)
        CHECK_NEAR(d.data[i], want[i], 0);
    const char* path = mn_test_write_temp(".DMAT", "", 0);
    d.data[0] = 0.1 + 0.2; /* needs 17 digits */
    CHECK(mn_dmat_write(path, &d, &err) == MN_OK);
    mn_dmat e;
    CHECK(mn_dmat_read(path, &e, &err) == MN_OK);
    CHECK(e.rows == 3 && e.cols == 2);
    for (int i = 0; i < 6; i++)
        CHECK(e.data[i] == d.data[i]);
    mn_dmat_free(&e);
    /* binary variant: "0 0", "cols rows", raw doubles column-major */
    char bin[64];
    size_t n = (size_t)snprintf(bin, sizeof bin, "0 0\n2 1\n");
    double v[2] = {1.5, -2.5};
    memcpy(bin + n, v, sizeof v);
    CHECK(mn_dmat_read_mem(bin, n + sizeof v, "b.DMAT", &e, &err) == MN_OK);
    CHECK(e.rows == 1 && e.cols == 2 && e.data[0] == 1.5 && e.data[1] == -2.5);
    mn_dmat_free(&e);
    mn_dmat_free(&d);
}

static void test_dmat_malformed(void) {
    static const bad_case cases[] = {
        {"", 1, "header"},
        {"3\n1 2 3\n", 1, "header"},
        {"2 x\n", 1, "header"},
        {"-1 2\n1 2\n", 1, "header"},
        {"2 2\n1 2 3\n", 3, "data"},
        {"2 2\n1 2 3 4 5\n", 2, "data"},
        {"2 2\n1 nan 3 4\n", 2, "data"},
        {"2 2\n1\n2\n3\nfour\n", 5, "data"},
        {"99999999 99999999\n1\n", 2, "data"},
        {"0 0\n2 1\n1234567", 3, "data"},
        {"0 0\nbad\n", 2, "header"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mn_dmat d = {5, 5, (double*)1};
        mn_error err;
        mn_error_clear(&err);
        mn_status st = mn_dmat_read_mem(cases[k].text, strlen(cases[k].text), "bad.DMAT", &d, &err);
        if (st == MN_OK || err.line != cases[k].line || strcmp(err.field, cases[k].field) != 0)
            fprintf(stderr, "  case %zu: status %d line %d field '%s': %s\n", k, st, err.line,
                    err.field, err.message);
        CHECK(st == MN_ERR_PARSE);
        CHECK(err.line == cases[k].line);
        CHECK(strcmp(err.field, cases[k].field) == 0);
        CHECK(d.data == NULL && d.rows == 0);
    }
}

static void test_tgf(void) {
    const char* text = "1 0 0 0\n2 1 0 0\n3 2 0 0 extra\n#\n1 2 1 0\n2 3\n#\n";
    mn_tgf t;
    mn_error err;
    CHECK(mn_tgf_read_mem(text, strlen(text), "t.tgf", &t, &err) == MN_OK);
    CHECK(t.nverts == 3 && t.nedges == 2);
    CHECK(t.edges[0] == 0 && t.edges[1] == 1 && t.edges[2] == 1 && t.edges[3] == 2);
    CHECK_NEAR(t.pos[6], 2.0, 0);
    /* write and read back */
    t.pos[4] = 0.1 + 0.2;
    const char* path = mn_test_write_temp(".tgf", "", 0);
    CHECK(mn_tgf_write(path, &t, &err) == MN_OK);
    mn_tgf u;
    CHECK(mn_tgf_read(path, &u, &err) == MN_OK);
    CHECK(u.nverts == 3 && u.nedges == 2);
    for (int i = 0; i < 9 && u.nverts == 3; i++)
        CHECK(u.pos[i] == t.pos[i]);
    for (int i = 0; i < 4 && u.nedges == 2; i++)
        CHECK(u.edges[i] == t.edges[i]);
    mn_tgf_free(&u);
    mn_tgf_free(&t);
    static const bad_case cases[] = {
        {"", 0, "vertex"},
        {"1 0 0\n", 1, "vertex"},
        {"x 0 0 0\n", 1, "vertex"},
        {"1 0 0 nan\n", 1, "vertex"},
        {"1 0 0 0\n2 1 0 0\n#\n1 3\n", 4, "edge"},
        {"1 0 0 0\n2 1 0 0\n#\n1 x\n", 4, "edge"},
        {"1 0 0 0\n2 1 0 0\n#\n1 1\n", 4, "edge"},
        {"1 0 0 0\n2 1 0 0\n#\n1 2\n#\n3 4\n", 6, ""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mn_tgf g = {3, (double*)1, 3, (int*)1};
        mn_error_clear(&err);
        mn_status st = mn_tgf_read_mem(cases[k].text, strlen(cases[k].text), "bad.tgf", &g, &err);
        if (st == MN_OK || err.line != cases[k].line || strcmp(err.field, cases[k].field) != 0)
            fprintf(stderr, "  case %zu: status %d line %d field '%s': %s\n", k, st, err.line,
                    err.field, err.message);
        CHECK(st == MN_ERR_PARSE);
        CHECK(err.line == cases[k].line);
        CHECK(strcmp(err.field, cases[k].field) == 0);
        CHECK(g.pos == NULL && g.edges == NULL);
    }
}

static void test_tmat(void) {
    mn_xform xf[2];
    xf[0].R = mn_mat3_axis_angle(mn_vec3_normalize(mn_v3(1, 2, 3)), 0.7);
    xf[0].p = mn_v3(0.1, -2, 3.5);
    xf[1].R = mn_mat3_identity();
    xf[1].p = mn_v3(1, 1, 1);
    const char* path = mn_test_write_temp(".Tmat", "", 0);
    mn_error err;
    CHECK(mn_tmat_write(path, 2, xf, &err) == MN_OK);
    int nb = 0;
    mn_xform* back = NULL;
    CHECK(mn_tmat_read(path, &nb, &back, &err) == MN_OK);
    CHECK(nb == 2);
    for (int b = 0; b < nb; b++) {
        for (int k = 0; k < 9; k++)
            CHECK(back[b].R.m[k] == xf[b].R.m[k]);
        CHECK(mn_vec3_dist(back[b].p, xf[b].p) == 0);
    }
    free(back);
    /* the layout: rows of [R^T; t], p = [v 1] T */
    const char* text = "0 1 0\n-1 0 0\n0 0 1\n5 6 7\n";
    CHECK(mn_tmat_read_mem(text, strlen(text), "t.Tmat", &nb, &back, &err) == MN_OK);
    mn_vec3 p = mn_xform_apply(&back[0], mn_v3(1, 0, 0)); /* [1 0 0 1] T = row0 + row3 */
    CHECK(mn_vec3_dist(p, mn_v3(5, 7, 7)) < 1e-15);
    free(back);
    static const bad_case cases[] = {
        {"", 1, "rows"},         {"1 0 0\n0 1 0\n0 0 1\n", 4, "rows"},
        {"1 0\n", 1, "row"},     {"1 0 0 0\n", 1, "row"},
        {"1 0 nan\n", 1, "row"}, {"1 0 0\n0 1 0\n0 0 1\n0 0 x\n", 4, "row"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mn_error_clear(&err);
        back = (mn_xform*)1;
        nb = 9;
        mn_status st =
            mn_tmat_read_mem(cases[k].text, strlen(cases[k].text), "bad.Tmat", &nb, &back, &err);
        if (st == MN_OK || err.line != cases[k].line || strcmp(err.field, cases[k].field) != 0)
            fprintf(stderr, "  case %zu: status %d line %d field '%s': %s\n", k, st, err.line,
                    err.field, err.message);
        CHECK(st == MN_ERR_PARSE);
        CHECK(err.line == cases[k].line);
        CHECK(strcmp(err.field, cases[k].field) == 0);
        CHECK(back == NULL && nb == 0);
    }
}

/* The cylinder: 420 vertices, 4 bones; every posed OBJ is the LBS of the rest mesh with
 * the Tmat transforms (to the OBJ print precision), and the fit recovers every pose. */
static void cylinder_sequence(int attach) {
    mn_rig* rig = NULL;
    mn_mesh rest;
    mn_error err;
    mn_warnings w = {0};
    CHECK(mn_rig_read_libigl(CYL "/cylinder.obj", CYL "/cylinder.DMAT", CYL "/cylinder.tgf", attach,
                             &rig, &rest, &w, &err) == MN_OK);
    if (!rig) {
        fprintf(stderr, "  %s\n", err.message);
        return;
    }
    CHECK(rig->nverts == 420 && rig->nctrl == 4);
    double diag = mn_rig_bbox_diagonal(rig);
    mn_fitter* f = mn_fitter_create(rig, NULL, &err);
    CHECK(f != NULL);
    double* x = malloc(420 * 3 * sizeof(double));
    mn_xform pose[4], truth[4];
    for (int seq = 1; seq <= 2; seq++) {
        mn_rig_rest_pose(rig, pose); /* each sequence starts from rest; frames warm-start */
        for (int k = 1; k <= 4; k++) {
            char obj[512], tmat[512];
            snprintf(obj, sizeof obj, CYL "/poses-%d/cylinder-%d.obj", seq, k);
            snprintf(tmat, sizeof tmat, CYL "/poses-%d/cylinder-%d.Tmat", seq, k);
            mn_mesh target;
            int nb = 0;
            mn_xform* T = NULL;
            CHECK(mn_obj_read(obj, &target, NULL, &err) == MN_OK);
            CHECK(mn_tmat_read(tmat, &nb, &T, &err) == MN_OK);
            if (!T || target.nverts != 420 || nb != 4) {
                mn_mesh_free(&target);
                free(T);
                continue;
            }
            for (int b = 0; b < 4; b++)
                truth[b] = mn_rig_pose_from_skin(rig, b, &T[b]);
            double rms, mx;
            mn_rig_error(rig, truth, target.pos, &rms, &mx);
            if (mx >= 5e-6)
                fprintf(stderr, "  poses-%d/%d: ground truth max %g rms %g\n", seq, k, mx, rms);
            CHECK(mx < 5e-6); /* exact up to the print precision of the OBJ (6 decimals) and Tmat (6
                                 digits) */
            mn_fit_options o = mn_fit_default();
            mn_fit_result res;
            long a0 = mn_alloc_count();
            mn_fit(f, pose, target.pos, &o, &res);
            CHECK(mn_alloc_count() == a0);
            if (res.rms >= 1e-5 * diag)
                fprintf(stderr, "  poses-%d/%d attach %d: rms %g (goal %g), %d iterations\n", seq,
                        k, attach, res.rms, 1e-5 * diag, res.iterations);
            CHECK(res.rms < 1e-5 * diag);
            /* the transforms themselves: the OBJ's rounding bounds how close they can be */
            for (int b = 0; b < 4; b++) {
                mn_xform S = mn_rig_skin_xform(rig, pose, b);
                for (int q = 0; q < 9; q++)
                    CHECK_NEAR(S.R.m[q], T[b].R.m[q], 1e-4);
                CHECK(mn_vec3_dist(S.p, T[b].p) < 1e-4);
            }
            mn_mesh_free(&target);
            free(T);
        }
    }
    free(x);
    mn_fitter_destroy(f);
    mn_mesh_free(&rest);
    mn_rig_destroy(rig);
}

static void test_cylinder_free_bones(void) {
    cylinder_sequence(0);
}
static void test_cylinder_attached_bones(void) {
    cylinder_sequence(1);
}

static void test_rig_read_errors(void) {
    mn_rig* rig = (mn_rig*)1;
    mn_error err;
    /* weights of another mesh: the message names the DMAT and the OBJ */
    const char* dtext = "4 2\n1\n0\n0\n1\n0\n0\n0\n0\n";
    const char* dm = mn_test_write_temp(".DMAT", dtext, strlen(dtext));
    CHECK(mn_rig_read_libigl(CYL "/cylinder.obj", dm, CYL "/cylinder.tgf", 1, &rig, NULL, NULL,
                             &err) == MN_ERR_PARSE);
    CHECK(rig == NULL);
    CHECK(strstr(err.message, dm) != NULL && strstr(err.message, "cylinder.obj") != NULL);
    CHECK(strcmp(err.field, "rows") == 0);
    /* a vertex with no influence */
    char* text = mn_test_read_file(CYL "/cylinder.DMAT", NULL);
    CHECK(text != NULL);
    if (text) {
        /* the first value (vertex 0, bone 0) and the rest of vertex 0's row: zero them */
        mn_dmat d;
        CHECK(mn_dmat_read_mem(text, strlen(text), "w", &d, &err) == MN_OK);
        for (int c = 0; c < d.cols; c++)
            d.data[c] = 0;
        const char* p2 = mn_test_write_temp(".DMAT", "", 0);
        CHECK(mn_dmat_write(p2, &d, &err) == MN_OK);
        CHECK(mn_rig_read_libigl(CYL "/cylinder.obj", p2, CYL "/cylinder.tgf", 1, &rig, NULL, NULL,
                                 &err) == MN_ERR_PARSE);
        CHECK(strstr(err.message, "vertex 0 has no influence") != NULL);
        /* weights that do not sum to one: normalised, with a warning */
        for (int c = 0; c < d.cols; c++)
            d.data[c] = 0.5;
        CHECK(mn_dmat_write(p2, &d, &err) == MN_OK);
        mn_warnings w = {0};
        CHECK(mn_rig_read_libigl(CYL "/cylinder.obj", p2, CYL "/cylinder.tgf", 1, &rig, NULL, &w,
                                 &err) == MN_OK);
        CHECK(w.count == 1);
        CHECK(rig && fabs(rig->w_val[0] - 0.25) < 1e-15);
        mn_rig_destroy(rig);
        mn_dmat_free(&d);
        free(text);
    }
}

/* Fox: targets made by skinning the file's own animation; the fit, warm-started frame to
 * frame, recovers every joint's skinning matrix (goal 1e-6; rotations against the nearest
 * rotation of the float32 matrices, translations relative to the size). */
static void test_gltf_fox_recovery(void) {
    mn_gltf g;
    mn_error err;
    if (mn_gltf_read(MN_DATA "/skinned/Fox.glb", &g, NULL, &err) != MN_OK) {
        fprintf(stderr, "  %s\n", err.message);
        CHECK(0);
        return;
    }
    mn_rig* rig = NULL;
    int* cj = NULL;
    CHECK(mn_rig_from_gltf(&g, &rig, &cj, &err) == MN_OK);
    if (!rig) {
        mn_gltf_free(&g);
        return;
    }
    CHECK(rig->nverts == g.nverts && rig->nctrl <= g.njoints && rig->nctrl > 10);
    mn_fitter* f = mn_fitter_create(rig, NULL, &err);
    CHECK(f != NULL);
    int m = rig->nctrl;
    double* jw = malloc((size_t)g.njoints * 12 * sizeof(double));
    double* sk = malloc((size_t)g.njoints * 12 * sizeof(double));
    double* x = malloc((size_t)g.nverts * 3 * sizeof(double));
    mn_xform* pose = malloc((size_t)m * sizeof *pose);
    mn_rig_rest_pose(rig, pose);
    double diag = mn_rig_bbox_diagonal(rig), worst = 0;
    for (int t = 0; t < 12 && f; t++) {
        CHECK(mn_gltf_sample(&g, 0, g.anims[0].duration * t / 11.0, jw) == MN_OK);
        mn_gltf_skin_matrices(&g, jw, sk);
        mn_gltf_skin_vertices(&g, sk, x);
        if (t == 0) mn_fit_kabsch(f, pose, x, 1);
        mn_fit_result res;
        mn_fit(f, pose, x, NULL, &res);
        for (int c = 0; c < m; c++) {
            const double* S = sk + 12 * cj[c];
            mn_mat3 R;
            for (int r = 0; r < 3; r++)
                for (int q = 0; q < 3; q++)
                    R.m[3 * r + q] = S[4 * r + q];
            R = mn_mat3_orthonormalize(&R);
            mn_xform F = mn_rig_skin_xform(rig, pose, c);
            double e = 0;
            for (int q = 0; q < 9; q++)
                e = fmax(e, fabs(F.R.m[q] - R.m[q]));
            e = fmax(e, mn_vec3_dist(F.p, mn_v3(S[3], S[7], S[11])) / diag);
            if (getenv("MN_VERBOSE") && e > 1e-7)
                fprintf(stderr, "  frame %d ctrl %d (%s) err %g it %d st %d rms %g\n", t, c,
                        rig->ctrl_name[c], e, res.iterations, res.status, res.rms);
            worst = fmax(worst, e);
        }
    }
    if (worst >= 1e-6) fprintf(stderr, "  Fox: transform error %g\n", worst);
    CHECK(worst < 1e-6);
    free(jw);
    free(sk);
    free(x);
    free(pose);
    free(cj);
    mn_fitter_destroy(f);
    mn_rig_destroy(rig);
    mn_gltf_free(&g);
}

/* Runs the command line (when it has been built) and returns its exit status. */
static int run_cli(const char* args, const char* out_file) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s > '%s' 2>&1", MN_CLI, args, out_file);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_fit_and_sim(void) {
    if (access(MN_CLI, X_OK) != 0) {
        printf("     (the marionette command is not built: CLI checks skipped)\n");
        return;
    }
    const char* log = mn_test_write_temp(".log", "", 0);
    CHECK(run_cli("fit --help", log) == 0);
    CHECK(run_cli("sim --help", log) == 0);
    CHECK(run_cli("fit --frames", log) == 2);
    /* the cylinder sequence: 4 frames, each to the goal */
    CHECK(run_cli("fit --rig " CYL "/cylinder.obj --frames " CYL "/poses-1/cylinder-1.obj " CYL
                  "/poses-1/cylinder-2.obj " CYL "/poses-1/cylinder-3.obj " CYL
                  "/poses-1/cylinder-4.obj",
                  log) == 0);
    char* text = mn_test_read_file(log, NULL);
    CHECK(text && strstr(text, "frame=4 ") && strstr(text, "status=OK"));
    for (const char* p = text; p && (p = strstr(p, "rms_rel=")) != NULL; p++)
        CHECK(atof(p + 8) < 1e-5);
    free(text);
    /* a frame of another mesh: exit 1, a message naming it, and no output file */
    char out[300];
    snprintf(out, sizeof out, "%s.json", log);
    char args[2048];
    snprintf(args, sizeof args,
             "fit --rig %s/cylinder.obj --json --out %s --frames %s/poses-1/cylinder-1.obj %s", CYL,
             out, CYL, MN_TEST_DATA "/../../data/meshseq/cylinder/cylinder.tgf");
    CHECK(run_cli(args, log) == 1);
    CHECK(access(out, F_OK) != 0);
    /* an unknown fixed controller */
    snprintf(args, sizeof args,
             "fit --rig %s/cylinder.obj --fixed nobody --out %s --frames %s/poses-1/cylinder-1.obj",
             CYL, out, CYL);
    CHECK(run_cli(args, log) == 1);
    text = mn_test_read_file(log, NULL);
    CHECK(text && strstr(text, "nobody"));
    free(text);
    CHECK(access(out, F_OK) != 0);
    /* a short simulation writes tracks (JSON and BVH) and OBJ frames */
    char dir[256];
    snprintf(dir, sizeof dir, "%s.d", log);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(args, sizeof args, "sim --scene jelly --frames 12 --obj-every 5 --out %s", dir);
    CHECK(run_cli(args, log) == 0);
    char path[400];
    snprintf(path, sizeof path, "%s/tracks.json", dir);
    text = mn_test_read_file(path, NULL);
    CHECK(text && strstr(text, "\"frames\"") && strstr(text, "bone2"));
    free(text);
    snprintf(path, sizeof path, "%s/tracks.bvh", dir);
    text = mn_test_read_file(path, NULL);
    CHECK(text && strstr(text, "Frames: 12"));
    free(text);
    snprintf(path, sizeof path, "%s/sim-0011.obj", dir);
    mn_mesh mesh;
    mn_error err;
    CHECK(mn_obj_read(path, &mesh, NULL, &err) == MN_OK && mesh.nverts > 100);
    mn_mesh_free(&mesh);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_obj_read);
    RUN(test_obj_malformed);
    RUN(test_dmat);
    RUN(test_dmat_malformed);
    RUN(test_tgf);
    RUN(test_tmat);
    RUN(test_cylinder_free_bones);
    RUN(test_cylinder_attached_bones);
    RUN(test_rig_read_errors);
    RUN(test_gltf_fox_recovery);
    RUN(test_cli_fit_and_sim);
    return mn_test_report();
}
