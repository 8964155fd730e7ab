/* glTF 2.0 binary output of a figure and its motion: the file is decoded here independently
 * (GLB chunks, accessors, node hierarchy, the animation's keys composed down the tree) and
 * every joint's world position at every frame is compared with the library's forward
 * kinematics; bad arguments write nothing. */
#include <marionette/anim.h>
#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/meshio.h>

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static uint32_t u32(const unsigned char* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float f32(const unsigned char* p) {
    float f;
    memcpy(&f, p, 4);
    return f;
}

/* Element i, component c of accessor a (float data). */
static double acc(const cJSON* j, const unsigned char* bin, int a, int i, int c) {
    const cJSON* A = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "accessors"), a);
    const cJSON* V = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "bufferViews"),
                                        cJSON_GetObjectItem(A, "bufferView")->valueint);
    const cJSON* ao = cJSON_GetObjectItem(A, "byteOffset");
    const cJSON* vo = cJSON_GetObjectItem(V, "byteOffset");
    int n = !strcmp(cJSON_GetObjectItem(A, "type")->valuestring, "VEC4")   ? 4
            : !strcmp(cJSON_GetObjectItem(A, "type")->valuestring, "VEC3") ? 3
                                                                           : 1;
    size_t off = (size_t)(vo ? vo->valueint : 0) + (size_t)(ao ? ao->valueint : 0) +
                 4 * ((size_t)i * (size_t)n + (size_t)c);
    return f32(bin + off);
}

static void test_round_trip_positions(void) {
    mn_model* m = mn_stickman_model(NULL);
    /* 20 frames of varied poses, sampled from a sequence */
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < 3; k++) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        for (int i = 7; i < m->nq; i++)
            q[i] = 0.4 * sin(1.1 * i + 2.0 * k);
        q[0] = 0.1 * k, q[2] = 0.3 * k;
        mn_quat r = mn_quat_axis_angle(mn_v3(0, 1, 0), 1.2 * k);
        q[3] = r.w, q[4] = r.x, q[5] = r.y, q[6] = r.z;
        mn_clamp_to_limits(m, q);
        mn_seq_set_key(s, 10 * k, q, NULL);
    }
    mn_motion mo = {20, m->nq, 1.0 / 30, malloc(sizeof(double) * 20 * (size_t)m->nq)};
    for (int f = 0; f < 20; f++)
        mn_seq_sample(s, f, mo.q + (size_t)f * (size_t)m->nq);
    char path[300];
    snprintf(path, sizeof path, "%s", mn_test_write_temp(".glb", "", 0));
    mn_error err;
    CHECK(mn_gltf_write(path, m, &mo, NULL, &err) == MN_OK);
    size_t len = 0;
    unsigned char* d = (unsigned char*)mn_test_read_file(path, &len);
    CHECK(d && len > 28 && u32(d) == 0x46546C67u && u32(d + 4) == 2 && u32(d + 8) == len);
    uint32_t jl = u32(d + 12);
    CHECK(u32(d + 16) == 0x4E4F534Au && jl % 4 == 0);
    cJSON* j = cJSON_ParseWithLength((const char*)d + 20, jl);
    CHECK(j != NULL);
    const unsigned char* bin = d + 20 + jl + 8;
    CHECK(u32(d + 20 + jl + 4) == 0x004E4942u);
    const cJSON* nodes = cJSON_GetObjectItem(j, "nodes");
    CHECK(cJSON_GetArraySize(nodes) == m->njoint);
    const cJSON* an = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "animations"), 0);
    const cJSON* ch = cJSON_GetObjectItem(an, "channels");
    const cJSON* sm = cJSON_GetObjectItem(an, "samplers");
    mn_data* dd = mn_data_create(m, 0);
    double worst = 0;
    mn_xform* X = malloc(sizeof(mn_xform) * (size_t)m->njoint);
    for (int f = 0; f < 20; f++) {
        CHECK(fabs(acc(j, bin, 0, f, 0) - f / 30.0) < 1e-6);
        /* each node's TRS: the node's own, replaced by the animation's keys at frame f */
        mn_vec3* T = malloc(sizeof(mn_vec3) * (size_t)m->njoint);
        mn_quat* R = malloc(sizeof(mn_quat) * (size_t)m->njoint);
        for (int n = 0; n < m->njoint; n++) {
            const cJSON* N = cJSON_GetArrayItem(nodes, n);
            const cJSON* t = cJSON_GetObjectItem(N, "translation");
            const cJSON* r = cJSON_GetObjectItem(N, "rotation");
            T[n] =
                mn_v3(cJSON_GetArrayItem(t, 0)->valuedouble, cJSON_GetArrayItem(t, 1)->valuedouble,
                      cJSON_GetArrayItem(t, 2)->valuedouble);
            R[n] =
                mn_q4(cJSON_GetArrayItem(r, 3)->valuedouble, cJSON_GetArrayItem(r, 0)->valuedouble,
                      cJSON_GetArrayItem(r, 1)->valuedouble, cJSON_GetArrayItem(r, 2)->valuedouble);
        }
        const cJSON* c;
        cJSON_ArrayForEach(c, ch) {
            const cJSON* tg = cJSON_GetObjectItem(c, "target");
            int n = cJSON_GetObjectItem(tg, "node")->valueint;
            int out =
                cJSON_GetObjectItem(
                    cJSON_GetArrayItem(sm, cJSON_GetObjectItem(c, "sampler")->valueint), "output")
                    ->valueint;
            if (!strcmp(cJSON_GetObjectItem(tg, "path")->valuestring, "rotation"))
                R[n] = mn_q4(acc(j, bin, out, f, 3), acc(j, bin, out, f, 0), acc(j, bin, out, f, 1),
                             acc(j, bin, out, f, 2));
            else
                T[n] =
                    mn_v3(acc(j, bin, out, f, 0), acc(j, bin, out, f, 1), acc(j, bin, out, f, 2));
        }
        /* compose down the hierarchy (children listed by each node) */
        for (int n = 0; n < m->njoint; n++) {
            X[n].R = mn_quat_to_mat3(mn_quat_normalize(R[n]));
            X[n].p = T[n];
        }
        int* parent = malloc(sizeof(int) * (size_t)m->njoint);
        for (int n = 0; n < m->njoint; n++)
            parent[n] = -1;
        for (int n = 0; n < m->njoint; n++) {
            const cJSON* kids = cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, n), "children");
            const cJSON* k;
            cJSON_ArrayForEach(k, kids) parent[k->valueint] = n;
        }
        for (int n = 0; n < m->njoint; n++) /* parents come first in the model's order */
            if (parent[n] >= 0) X[n] = mn_xform_mul(&X[parent[n]], &X[n]);
        memcpy(dd->q, mo.q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, dd);
        for (int n = 0; n < m->njoint; n++) {
            CHECK(parent[n] == m->jnt_parent[n]);
            worst = fmax(worst, mn_vec3_dist(X[n].p, dd->xf[n].p));
        }
        free(parent), free(T), free(R);
    }
    printf("  glb: largest joint position difference from forward kinematics %.2e m "
           "(single-precision floats)\n",
           worst);
    CHECK(worst < 1e-5);
    free(X);
    cJSON_Delete(j);
    free(d);
    remove(path);
    /* bad arguments write nothing */
    mo.frame_time = 0;
    CHECK(mn_gltf_write(path, m, &mo, NULL, &err) == MN_ERR_ARG);
    CHECK(mn_test_read_file(path, NULL) == NULL);
    mo.frame_time = 1.0 / 30;
    CHECK(mn_gltf_write("/nonexistent/dir/x.glb", m, &mo, NULL, &err) == MN_ERR_IO);
    free(mo.q);
    free(q);
    mn_data_destroy(dd);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* Polygon objects on joints (Welman 6.1.1) written with a pose: each object is a mesh on a
 * node that is a child of its joint's node with no transform; decoded here, every vertex
 * placed by the nodes' translations and rotations composed down the tree is where
 * mn_objects_pose puts it, the triangles are the object's, and the joints' nodes carry the
 * pose. A pose that is not finite, or objects with a skin, write nothing. */
static void test_objects(void) {
    mn_model* m = mn_stickman_model(NULL);
    CHECK(m != NULL);
    int nj = m->njoint;
    mn_objects ob = {nj, 0, calloc((size_t)nj, sizeof(mn_mesh))};
    const char* on[2] = {"right knee", "left hand"};
    int oj[2];
    for (int k = 0; k < 2; k++) { /* a tetrahedron on each, offset in the joint's frame */
        oj[k] = mn_model_find_joint(m, on[k]);
        CHECK(oj[k] >= 0);
        mn_mesh* g = &ob.mesh[oj[k]];
        static const int tris[12] = {0, 1, 2, 0, 3, 1, 1, 3, 2, 2, 3, 0};
        g->nverts = 4, g->ntris = 4;
        g->pos = malloc(sizeof(double) * 12);
        g->tris = malloc(sizeof(int) * 12);
        for (int i = 0; i < 12; i++) {
            g->pos[i] = 0.1 * ((i * 7 + k) % 5) - 0.2 + (i % 3 == 1 ? -0.15 : 0);
            g->tris[i] = tris[i];
        }
        ob.nobjects++;
    }
    if (oj[0] > oj[1]) { /* the object nodes come in the joints' order */
        int t = oj[0];
        oj[0] = oj[1], oj[1] = t;
    }
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
    for (int i = 7; i < m->nq; i++)
        q[i] = 0.3 * sin(0.7 * i);
    q[1] = 0.2;
    mn_clamp_to_limits(m, q);
    mn_data* dd = mn_data_create(m, 0);
    memcpy(dd->q, q, sizeof(double) * (size_t)m->nq);
    mn_fk(m, dd);
    mn_mesh posed;
    mn_error err;
    CHECK(mn_objects_pose(m, dd, &ob, &posed, &err) == MN_OK);
    char path[300];
    snprintf(path, sizeof path, "%s", mn_test_write_temp(".glb", "", 0));
    mn_gltf_write_options o = mn_gltf_write_default();
    o.objects = &ob;
    o.pose = q;
    CHECK(mn_gltf_write_ex(path, m, NULL, NULL, &o, &err) == MN_OK);
    size_t len = 0;
    unsigned char* d = (unsigned char*)mn_test_read_file(path, &len);
    CHECK(d && len > 28 && u32(d) == 0x46546C67u && u32(d + 8) == len);
    uint32_t jl = u32(d + 12);
    cJSON* j = cJSON_ParseWithLength((const char*)d + 20, jl);
    CHECK(j != NULL);
    const unsigned char* bin = d + 20 + jl + 8;
    const cJSON* nodes = cJSON_GetObjectItem(j, "nodes");
    int nn = cJSON_GetArraySize(nodes);
    CHECK(nn == nj + 2);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "meshes")) == 2);
    /* every node's local frame, the parents from the children lists, composed down */
    mn_xform* X = malloc(sizeof(mn_xform) * (size_t)nn);
    int* parent = malloc(sizeof(int) * (size_t)nn);
    for (int n = 0; n < nn; n++) {
        const cJSON* N = cJSON_GetArrayItem(nodes, n);
        const cJSON* t = cJSON_GetObjectItem(N, "translation");
        const cJSON* r = cJSON_GetObjectItem(N, "rotation");
        X[n] = mn_xform_identity();
        if (t)
            X[n].p =
                mn_v3(cJSON_GetArrayItem(t, 0)->valuedouble, cJSON_GetArrayItem(t, 1)->valuedouble,
                      cJSON_GetArrayItem(t, 2)->valuedouble);
        if (r)
            X[n].R = mn_quat_to_mat3(mn_quat_normalize(mn_q4(
                cJSON_GetArrayItem(r, 3)->valuedouble, cJSON_GetArrayItem(r, 0)->valuedouble,
                cJSON_GetArrayItem(r, 1)->valuedouble, cJSON_GetArrayItem(r, 2)->valuedouble)));
        parent[n] = -1;
    }
    for (int n = 0; n < nn; n++) {
        const cJSON* k;
        cJSON_ArrayForEach(k, cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, n), "children"))
            parent[k->valueint] = n;
    }
    for (int n = 0; n < nn; n++) /* parents come first */
        if (parent[n] >= 0) X[n] = mn_xform_mul(&X[parent[n]], &X[n]);
    double worst_joint = 0, worst_vert = 0;
    for (int n = 0; n < nj; n++)
        worst_joint = fmax(worst_joint, mn_vec3_dist(X[n].p, dd->xf[n].p));
    int at = 0; /* mn_objects_pose's vertices come joint by joint */
    for (int k = 0; k < 2; k++) {
        int n = nj + k;
        const cJSON* N = cJSON_GetArrayItem(nodes, n);
        CHECK(parent[n] == oj[k]);
        CHECK(!cJSON_GetObjectItem(N, "translation") && !cJSON_GetObjectItem(N, "rotation"));
        int mi = cJSON_GetObjectItem(N, "mesh")->valueint;
        const cJSON* pr = cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "meshes"), mi),
                                "primitives"),
            0);
        int ap = cJSON_GetObjectItem(cJSON_GetObjectItem(pr, "attributes"), "POSITION")->valueint;
        int ai = cJSON_GetObjectItem(pr, "indices")->valueint;
        const cJSON* A = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "accessors"), ap);
        CHECK(cJSON_GetObjectItem(A, "count")->valueint == 4);
        for (int v = 0; v < 4; v++) {
            mn_vec3 local =
                mn_v3(acc(j, bin, ap, v, 0), acc(j, bin, ap, v, 1), acc(j, bin, ap, v, 2));
            mn_vec3 w = mn_xform_apply(&X[n], local);
            worst_vert = fmax(worst_vert, mn_vec3_dist(w, mn_v3(posed.pos[3 * (at + v)],
                                                                posed.pos[3 * (at + v) + 1],
                                                                posed.pos[3 * (at + v) + 2])));
        }
        /* the indices: uint32, the object's triangles */
        const cJSON* I = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "accessors"), ai);
        CHECK(cJSON_GetObjectItem(I, "componentType")->valueint == 5125);
        const cJSON* V = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "bufferViews"),
                                            cJSON_GetObjectItem(I, "bufferView")->valueint);
        const cJSON* vo = cJSON_GetObjectItem(V, "byteOffset");
        for (int i = 0; i < 12; i++)
            CHECK((int)u32(bin + (vo ? vo->valueint : 0) + 4 * i) == ob.mesh[oj[k]].tris[i]);
        at += 4;
    }
    printf("  glb with objects: joints within %.2e m of FK at the pose, object vertices within "
           "%.2e m of mn_objects_pose\n",
           worst_joint, worst_vert);
    CHECK(worst_joint < 1e-5);
    CHECK(worst_vert < 1e-5);
    free(X), free(parent);
    cJSON_Delete(j);
    free(d);
    remove(path);
    /* a pose that is not finite, objects of another figure: nothing written */
    q[9] = NAN;
    CHECK(mn_gltf_write_ex(path, m, NULL, NULL, &o, &err) == MN_ERR_ARG);
    CHECK(mn_test_read_file(path, NULL) == NULL);
    o.pose = NULL;
    ob.njoint = nj - 1;
    CHECK(mn_gltf_write_ex(path, m, NULL, NULL, &o, &err) == MN_ERR_ARG);
    CHECK(mn_test_read_file(path, NULL) == NULL);
    ob.njoint = nj;
    mn_mesh_free(&posed);
    mn_objects_free(&ob);
    mn_data_destroy(dd);
    free(q);
    mn_model_destroy(m);
}

/* The file the path form writes and the bytes of the memory form, compared. */
static void same_bytes(const mn_model* m, const mn_motion* mo, const mn_gltf* skin,
                       const mn_gltf_write_options* o) {
    mn_error err;
    const char* out = mn_test_write_temp(".glb", "", 0);
    CHECK(mn_gltf_write_ex(out, m, mo, skin, o, &err) == MN_OK);
    size_t nf = 0, nm = 0;
    char* file = mn_test_read_file(out, &nf);
    unsigned char* glb = NULL;
    CHECK(mn_gltf_write_mem(m, mo, skin, o, &glb, &nm, &err) == MN_OK);
    CHECK(file && glb && nf == nm && nf > 20 && memcmp(file, glb, nf) == 0);
    free(file);
    free(glb);
    remove(out);
}

/* The memory form gives the bytes the path form writes (a skinned figure with its kept
 * attributes and materials; a figure scaled, stood up and moving), and refuses what the path
 * form refuses, naming no file and giving no bytes. */
static void test_write_mem(void) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_gltf skin;
    mn_error err;
    CHECK(mn_figure_read_skin(MN_DATA "/skinned/CesiumMan.glb", &m, &mo, &skin, NULL, &err) ==
          MN_OK);
    if (!m) return;
    CHECK(skin.nverts > 0 && mo.nframes > 1);
    mn_gltf_write_options o = mn_gltf_write_default();
    same_bytes(m, &mo, &skin, &o);
    o.keep_attributes = 1;
    same_bytes(m, &mo, &skin, &o);
    o = mn_gltf_write_default();
    o.scale = 0.5;
    o.root_rot = mn_q4(sqrt(0.5), -sqrt(0.5), 0, 0);
    same_bytes(m, &mo, NULL, &o);
    same_bytes(m, NULL, NULL, NULL);
    unsigned char* glb = (unsigned char*)1;
    size_t n = 7;
    CHECK(mn_gltf_write_mem(m, &mo, &skin, &o, &glb, &n, &err) == MN_ERR_UNSUPPORTED);
    CHECK(!glb && n == 0 && strcmp(err.file, "") == 0 && strcmp(err.field, "skin") == 0);
    o.scale = 0;
    CHECK(mn_gltf_write_mem(m, &mo, NULL, &o, &glb, &n, &err) == MN_ERR_ARG);
    CHECK(!glb && strcmp(err.field, "scale") == 0);
    mo.q[1] = NAN;
    CHECK(mn_gltf_write_mem(m, &mo, NULL, NULL, &glb, &n, &err) == MN_ERR_ARG);
    CHECK(!glb && strcmp(err.field, "motion") == 0);
    CHECK(mn_gltf_write_mem(NULL, NULL, NULL, NULL, &glb, &n, &err) == MN_ERR_ARG && !glb);
    CHECK(mn_gltf_write_mem(m, NULL, NULL, NULL, NULL, &n, &err) == MN_ERR_ARG);
    mn_gltf_free(&skin);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_round_trip_positions);
    RUN(test_objects);
    RUN(test_write_mem);
    return mn_test_report();
}
