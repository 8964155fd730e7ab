/* glTF 2.0 binary writer: a model and a motion -> the bytes of a .glb (glTF 2.0
 * specification 4.4), in memory (the path form, written atomically, is io's:
 * src/io/doc_files.c).
 *
 * One node per model joint, named by the joint, children under their parent joint's node,
 * the roots in the scene. A node's rest TRS is the joint's frame at q0 seen from its
 * parent's frame (translation and rotation; the model's frames are rigid, so no scale). The
 * motion becomes one animation "motion": a key per frame at f * frame_time, a LINEAR
 * rotation channel for every joint whose rotation can change (HINGE, BALL, FREE) and a
 * translation channel for every joint whose position can (SLIDE, FREE). Values are the
 * joints' local frames from FK, so any joint type plays back as the model does.
 *
 * With a skin (an mn_gltf whose joints are model joints by name, such as the file the
 * model came from): a node "mesh" at the scene root carries the skinned mesh (POSITION,
 * JOINTS_0, WEIGHTS_0, indices) and the skin (named as the source's), whose joints are the
 * nodes of the skin's joints. Its inverse bind matrices are W_rest^-1 W_skin IB: W_rest the joint's
 * rigid frame at q0, W_skin and IB the skin's rest world transform and inverse bind matrix, so the
 * skinned mesh at q0 is exactly the skin's at rest (3.7.3: the mesh node's own transform
 * is ignored).
 *
 * With objects (mn_gltf_write_options.objects, the joints' polygon objects of Welman 6.1.1):
 * after the joints' nodes (and before nothing else: objects and a skin are not written
 * together), a node "JOINT object" per joint that has one, a child of the joint's node with
 * no transform of its own, carrying a mesh of the object's triangles (POSITION in the joint's
 * frame times scale, uint32 indices), named as the object's file.
 *
 * Every binary piece starts at a multiple of 4 bytes (all components here are 4 bytes, or
 * 2 x 4 for JOINTS_0), and the chunks are padded to 4 (JSON with spaces, BIN with zeros).
 * The host is assumed little-endian, as glTF's binary data is. */
#include "doc/doc_codecs.h"
#include "doc/gltf_internal.h"

#include <marionette/gltf.h>
#include <marionette/meshio.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bin {
    unsigned char* data;
    size_t len, cap;
    int failed;
} bin;

static void bin_put(bin* b, const void* p, size_t n) {
    if (b->failed) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char* d = realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* Local frame of joint j (rotation, translation) in its parent's frame, from FK frames. */
static void local_of(const mn_model* m, const mn_xform* xf, int j, mn_quat* r, mn_vec3* t) {
    int par = m->jnt_parent[j];
    if (par < 0) {
        *r = mn_quat_normalize(mn_quat_from_mat3(&xf[j].R));
        *t = xf[j].p;
        return;
    }
    mn_mat3 R;
    const mn_mat3* P = &xf[par].R;
    const mn_mat3* J = &xf[j].R;
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++)
            R.m[3 * a + c] =
                P->m[a] * J->m[c] + P->m[3 + a] * J->m[3 + c] + P->m[6 + a] * J->m[6 + c];
    *r = mn_quat_normalize(mn_quat_from_mat3(&R));
    *t = mn_mat3_tmulv(P, mn_vec3_sub(xf[j].p, xf[par].p));
}

static void put_min_max(mn_strbuf* js, const double* lo, const double* hi, int n) {
    mn_strbuf_printf(js, ",\"min\":[");
    for (int i = 0; i < n; i++)
        mn_strbuf_printf(js, "%s%.9g", i ? "," : "", (double)(float)lo[i]);
    mn_strbuf_printf(js, "],\"max\":[");
    for (int i = 0; i < n; i++)
        mn_strbuf_printf(js, "%s%.9g", i ? "," : "", (double)(float)hi[i]);
    mn_strbuf_printf(js, "]");
}

static void put_string(mn_strbuf* js, const char* s) {
    mn_strbuf_append(js, "\"", 1);
    for (const unsigned char* p = (const unsigned char*)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            mn_strbuf_printf(js, "\\%c", *p);
        else if (*p < 0x20)
            mn_strbuf_printf(js, "\\u%04x", *p);
        else
            mn_strbuf_append(js, (const char*)p, 1);
    }
    mn_strbuf_append(js, "\"", 1);
}

/* The JSON arrays being built and the binary buffer. */
typedef struct wctx {
    bin b;
    mn_strbuf views, acc;
    int nacc, nviews;
} wctx;

/* Appends n bytes as one bufferView (4-aligned); returns its index. target: 0, or
 * 34962/34963 for vertex / index data. */
static int add_view(wctx* w, const void* data, size_t bytes, int target) {
    static const unsigned char zero[4] = {0, 0, 0, 0};
    if (w->b.len % 4) bin_put(&w->b, zero, 4 - w->b.len % 4);
    size_t off = w->b.len;
    bin_put(&w->b, data, bytes);
    mn_strbuf_printf(&w->views, "%s{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu",
                     w->nviews ? "," : "", off, bytes);
    if (target) mn_strbuf_printf(&w->views, ",\"target\":%d", target);
    mn_strbuf_printf(&w->views, "}");
    return w->nviews++;
}

/* Appends n bytes as one bufferView and one accessor over it; returns the accessor index. */
static int add_accessor(wctx* w, const void* data, size_t bytes, int ctype, int count,
                        const char* type, int target, const double* lo, const double* hi,
                        int ncomp) {
    int view = add_view(w, data, bytes, target);
    mn_strbuf_printf(&w->acc,
                     "%s{\"bufferView\":%d,\"componentType\":%d,\"count\":%d,\"type\":\"%s\"",
                     w->nacc ? "," : "", view, ctype, count, type);
    if (lo) put_min_max(&w->acc, lo, hi, ncomp);
    mn_strbuf_printf(&w->acc, "}");
    return w->nacc++;
}

/* float copies of n doubles (NULL when out of memory) */
static float* to_floats(const double* v, size_t n) {
    float* f = malloc((n ? n : 1) * sizeof(float));
    if (f)
        for (size_t i = 0; i < n; i++)
            f[i] = (float)v[i];
    return f;
}

/* 3x4 row-major affine -> glTF column-major mat4 (float) */
static void aff_to_mat4(const double* a, float* o) {
    for (int c = 0; c < 4; c++) {
        for (int r = 0; r < 3; r++)
            o[4 * c + r] = (float)a[4 * r + c];
        o[4 * c + 3] = c == 3 ? 1.0f : 0.0f;
    }
}

/* inverse of a rigid transform (R, p) as 3x4: [R^T | -R^T p] */
static void rigid_inverse(const mn_xform* X, double* o) {
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            o[4 * r + c] = X->R.m[3 * c + r];
        o[4 * r + 3] = -(X->R.m[r] * X->p.x + X->R.m[3 + r] * X->p.y + X->R.m[6 + r] * X->p.z);
    }
}

static void aff_mul(const double* a, const double* b, double* c) {
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 4; k++)
            c[4 * r + k] = a[4 * r] * b[k] + a[4 * r + 1] * b[4 + k] + a[4 * r + 2] * b[8 + k] +
                           (k == 3 ? a[4 * r + 3] : 0);
    }
}

/* The kept vertex attributes of the skin: NORMAL and TANGENT made unit length again in
 * single precision (TANGENT's w the handedness, +1 or -1), TEXCOORD_0 as it is (3.7.2.1);
 * the accessors go to *anrm, *auv, *atan (left -1 when absent). 0 when out of memory. */
static int add_attributes(wctx* w, const mn_gltf* g, int* anrm, int* auv, int* atan) {
    if (g->normal || g->uv || g->tangent) {
        size_t nv = (size_t)g->nverts;
        float* f = malloc(sizeof(float) * 4 * (nv ? nv : 1));
        if (!f) return 0;
        if (g->normal) {
            for (size_t v = 0; v < nv; v++) {
                const double* n = g->normal + 3 * v;
                double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
                for (int k = 0; k < 3; k++)
                    f[3 * v + k] = l > 0 ? (float)(n[k] / l) : k == 1 ? 1.0f : 0.0f;
            }
            *anrm = add_accessor(w, f, sizeof(float) * 3 * nv, 5126, g->nverts, "VEC3", 34962, NULL,
                                 NULL, 0);
        }
        if (g->uv) {
            for (size_t k = 0; k < 2 * nv; k++)
                f[k] = (float)g->uv[k];
            *auv = add_accessor(w, f, sizeof(float) * 2 * nv, 5126, g->nverts, "VEC2", 34962, NULL,
                                NULL, 0);
        }
        if (g->tangent) { /* unit xyz, w the handedness: +1 or -1 (3.7.2.1) */
            for (size_t v = 0; v < nv; v++) {
                const double* t = g->tangent + 4 * v;
                double l = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
                for (int k = 0; k < 3; k++)
                    f[4 * v + k] = l > 0 ? (float)(t[k] / l) : k == 0 ? 1.0f : 0.0f;
                f[4 * v + 3] = t[3] < 0 ? -1.0f : 1.0f;
            }
            *atan = add_accessor(w, f, sizeof(float) * 4 * nv, 5126, g->nverts, "VEC4", 34962, NULL,
                                 NULL, 0);
        }
        free(f);
    }
    return 1;
}

/* The kept look (gltf_look): materials, textures and samplers as read, images as
 * bufferViews of the binary chunk with their media type. Textures are dropped when the
 * mesh writes no TEXCOORD_0 (the reader kept none then). */
static void add_look(wctx* w, const gltf_look* l, mn_strbuf* js) {
    if (l->materials) mn_strbuf_printf(js, ",\"materials\":%s", l->materials);
    if (l->textures) mn_strbuf_printf(js, ",\"textures\":%s", l->textures);
    if (l->samplers) mn_strbuf_printf(js, ",\"samplers\":%s", l->samplers);
    for (int k = 0; k < l->nimages; k++) {
        int v = add_view(w, l->images[k].data, l->images[k].len, 0);
        mn_strbuf_printf(js, "%s{\"bufferView\":%d,\"mimeType\":\"%s\"}", k ? "," : ",\"images\":[",
                         v, l->images[k].mime);
    }
    if (l->nimages) mn_strbuf_printf(js, "]");
}

/* The skinned mesh and the skin: adds accessors and writes the mesh and skin JSON into
 * mesh_js; rest: FK frames at q0. */
static mn_status add_skin(wctx* w, const mn_gltf* g, const mn_model* m, const mn_xform* rest,
                          int keep_attributes, mn_strbuf* mesh_js, const char* name,
                          mn_error* err) {
    int nj = g->njoints;
    int* node = malloc(sizeof(int) * (size_t)nj);
    double* gw = malloc(sizeof(double) * 12 * (size_t)nj);
    float* ibm = malloc(sizeof(float) * 16 * (size_t)nj);
    float* pos = to_floats(g->rest_pos, (size_t)g->nverts * 3);
    float* wgt = to_floats(g->vweight, (size_t)g->nverts * 4);
    uint16_t* jnt = malloc(sizeof(uint16_t) * 4 * (size_t)(g->nverts ? g->nverts : 1));
    uint32_t* idx = malloc(sizeof(uint32_t) * 3 * (size_t)(g->ntris ? g->ntris : 1));
    int* run = NULL; /* per primitive written: index accessor, end triangle, material */
    mn_status s = MN_OK;
    if (!node || !gw || !ibm || !pos || !wgt || !jnt || !idx) {
        s = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
        goto done;
    }
    if (nj > 65535) {
        s = mn_error_set(err, MN_ERR_UNSUPPORTED, name, 0, "skin",
                         "%d skin joints: JOINTS_0 holds 65535", nj);
        goto done;
    }
    mn_gltf_sample(g, -1, -1, gw);
    for (int j = 0; j < nj; j++) {
        node[j] = mn_model_find_joint(m, g->joint_name[j]);
        if (node[j] < 0) {
            s = mn_error_set(err, MN_ERR_ARG, name, 0, "skin",
                             "skin joint '%.80s' is not a joint of the model", g->joint_name[j]);
            goto done;
        }
        double inv[12], t1[12], t2[12];
        rigid_inverse(&rest[node[j]], inv);
        aff_mul(inv, gw + 12 * j, t1);
        aff_mul(t1, g->inverse_bind + 12 * j, t2);
        aff_to_mat4(t2, ibm + 16 * j);
    }
    for (size_t k = 0; k < (size_t)g->nverts * 4; k++)
        jnt[k] = (uint16_t)g->vjoint[k];
    for (size_t k = 0; k < (size_t)g->ntris * 3; k++)
        idx[k] = (uint32_t)g->tris[k];
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int v = 0; v < g->nverts; v++)
        for (int k = 0; k < 3; k++) {
            double x = pos[3 * v + k];
            if (v == 0 || x < lo[k]) lo[k] = x;
            if (v == 0 || x > hi[k]) hi[k] = x;
        }
    int apos = add_accessor(w, pos, sizeof(float) * 3 * (size_t)g->nverts, 5126, g->nverts, "VEC3",
                            34962, lo, hi, 3);
    int ajnt = add_accessor(w, jnt, sizeof(uint16_t) * 4 * (size_t)g->nverts, 5123, g->nverts,
                            "VEC4", 34962, NULL, NULL, 0);
    int awgt = add_accessor(w, wgt, sizeof(float) * 4 * (size_t)g->nverts, 5126, g->nverts, "VEC4",
                            34962, NULL, NULL, 0);
    /* primitives: one, or with the kept materials one per run of source primitives with
     * the same material, each its own index accessor over the shared vertices */
    const gltf_priv* gp = g->priv;
    const gltf_look* look = keep_attributes && gp ? gp->look : NULL;
    if (look && look->prim_tri[look->nprims] != g->ntris) look = NULL; /* not this mesh's */
    int nrun = 0;
    run = malloc(sizeof(int) * 3 * (size_t)(look ? look->nprims + 1 : 1));
    if (!run) {
        s = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
        goto done;
    }
    for (int p = 0; look && p < look->nprims; p++) {
        int t0 = look->prim_tri[p], t1 = look->prim_tri[p + 1], mat = look->prim_mat[p];
        if (t1 <= t0) continue;
        if (nrun > 0 && run[3 * (nrun - 1) + 2] == mat && run[3 * (nrun - 1) + 1] == t0) {
            run[3 * (nrun - 1) + 1] = t1;
            continue;
        }
        run[3 * nrun] = t0, run[3 * nrun + 1] = t1, run[3 * nrun + 2] = mat;
        nrun++;
    }
    if (nrun <= 1) { /* one primitive over every triangle */
        run[0] = 0, run[1] = g->ntris, run[2] = nrun ? run[2] : -1;
        nrun = 1;
    }
    for (int r = 0; r < nrun; r++) {
        int nt = run[3 * r + 1] - run[3 * r];
        int a = add_accessor(w, idx + 3 * (size_t)run[3 * r], sizeof(uint32_t) * 3 * (size_t)nt,
                             5125, 3 * nt, "SCALAR", 34963, NULL, NULL, 0);
        run[3 * r] = a; /* the run's index accessor from here on */
    }
    int aibm =
        add_accessor(w, ibm, sizeof(float) * 16 * (size_t)nj, 5126, nj, "MAT4", 0, NULL, NULL, 0);
    /* the kept attributes (accessor -1 for one not written) */
    int anrm = -1, auv = -1, atan = -1;
    if (keep_attributes && !add_attributes(w, g, &anrm, &auv, &atan)) {
        s = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
        goto done;
    }
    mn_strbuf_printf(mesh_js, ",\"meshes\":[{\"name\":\"mesh\",\"primitives\":[");
    for (int r = 0; r < nrun; r++) {
        mn_strbuf_printf(mesh_js,
                         "%s{\"attributes\":{\"POSITION\":%d,\"JOINTS_0\":%d,\"WEIGHTS_0\":%d",
                         r ? "," : "", apos, ajnt, awgt);
        if (anrm >= 0) mn_strbuf_printf(mesh_js, ",\"NORMAL\":%d", anrm);
        if (auv >= 0) mn_strbuf_printf(mesh_js, ",\"TEXCOORD_0\":%d", auv);
        if (atan >= 0) mn_strbuf_printf(mesh_js, ",\"TANGENT\":%d", atan);
        mn_strbuf_printf(mesh_js, "},\"indices\":%d", run[3 * r]);
        if (run[3 * r + 2] >= 0) mn_strbuf_printf(mesh_js, ",\"material\":%d", run[3 * r + 2]);
        mn_strbuf_printf(mesh_js, ",\"mode\":4}");
    }
    mn_strbuf_printf(mesh_js, "]}],\"skins\":[{");
    /* the skin keeps the source's name, so the figure read back is named as before */
    if (g->name && g->name[0]) {
        mn_strbuf_append(mesh_js, "\"name\":", 7);
        mn_strbuf_json_str(mesh_js, g->name);
        mn_strbuf_append(mesh_js, ",", 1);
    }
    mn_strbuf_printf(mesh_js, "\"inverseBindMatrices\":%d,\"joints\":[", aibm);
    for (int j = 0; j < nj; j++)
        mn_strbuf_printf(mesh_js, "%s%d", j ? "," : "", node[j]);
    mn_strbuf_printf(mesh_js, "]}]");
    if (look) add_look(w, look, mesh_js);
done:
    free(run);
    free(node);
    free(gw);
    free(ibm);
    free(pos);
    free(wgt);
    free(jnt);
    free(idx);
    return s;
}

/* The objects' meshes: per joint with an object, a POSITION accessor (its vertices in the
 * joint's frame, times scale, with min and max) and a uint32 index accessor, and a mesh
 * named as the object's file; node[j] gets the object node's index (after the joints'
 * nodes), -1 for a joint without one. */
static mn_status add_objects(wctx* w, const mn_model* m, const mn_objects* ob, double scale,
                             int* node, mn_strbuf* mesh_js, const char* name, mn_error* err) {
    int nj = m->njoint, k = 0;
    for (int j = 0; j < nj; j++) {
        const mn_mesh* g = &ob->mesh[j];
        node[j] = -1;
        if (g->nverts <= 0 || g->ntris <= 0) continue;
        float* pos = malloc(sizeof(float) * 3 * (size_t)g->nverts);
        uint32_t* idx = malloc(sizeof(uint32_t) * 3 * (size_t)g->ntris);
        if (!pos || !idx) {
            free(pos), free(idx);
            return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
        }
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (size_t i = 0; i < 3 * (size_t)g->nverts; i++) {
            pos[i] = (float)(g->pos[i] * scale);
            lo[i % 3] = fmin(lo[i % 3], (double)pos[i]);
            hi[i % 3] = fmax(hi[i % 3], (double)pos[i]);
        }
        for (size_t i = 0; i < 3 * (size_t)g->ntris; i++)
            idx[i] = (uint32_t)g->tris[i];
        int ap = add_accessor(w, pos, sizeof(float) * 3 * (size_t)g->nverts, 5126, g->nverts,
                              "VEC3", 34962, lo, hi, 3);
        int ai = add_accessor(w, idx, sizeof(uint32_t) * 3 * (size_t)g->ntris, 5125, 3 * g->ntris,
                              "SCALAR", 34963, NULL, NULL, 0);
        free(pos), free(idx);
        mn_strbuf_printf(mesh_js, "%s{\"name\":", k ? "," : ",\"meshes\":[");
        put_string(mesh_js, m->jnt_object[j] ? m->jnt_object[j] : "object");
        mn_strbuf_printf(mesh_js,
                         ",\"primitives\":[{\"attributes\":{\"POSITION\":%d},\"indices\":%d,"
                         "\"mode\":4}]}",
                         ap, ai);
        node[j] = nj + k++;
    }
    if (k) mn_strbuf_printf(mesh_js, "]");
    return MN_OK;
}

double mn_gltf_guess_scale(const mn_model* m, mn_quat root_rot, double* height,
                           const char** units) {
    static const struct {
        double lo, hi, scale;
        const char* name;
    } table[] = {{0.3, 3, 1, "metres"},
                 {15, 45, 0.056444, "CMU units"},
                 {45, 80, 0.0254, "inches"},
                 {80, 300, 0.01, "centimetres"},
                 {800, 3000, 0.001, "millimetres"}};
    double h = 0, scale = 1;
    const char* name = "unknown units";
    mn_data* d = m ? mn_data_create(m, 0) : NULL;
    if (d) {
        mn_fk(m, d);
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int j = 0; j < m->njoint; j++) {
            mn_vec3 p = mn_quat_rotate(root_rot, d->xf[j].p);
            double v[3] = {p.x, p.y, p.z};
            for (int k = 0; k < 3; k++)
                lo[k] = fmin(lo[k], v[k]), hi[k] = fmax(hi[k], v[k]);
        }
        mn_data_destroy(d);
        double ext[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
        double most = fmax(ext[0], fmax(ext[1], ext[2]));
        h = ext[1] >= 0.25 * most ? ext[1] : most;
        for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
            if (h >= table[k].lo && h <= table[k].hi) {
                scale = table[k].scale;
                name = table[k].name;
                break;
            }
    }
    if (height) *height = h;
    if (units) *units = name;
    return scale;
}

mn_gltf_write_options mn_gltf_write_default(void) {
    mn_gltf_write_options o;
    o.scale = 1;
    o.root_rot = mn_quat_identity();
    o.keep_attributes = 0;
    o.objects = NULL;
    o.pose = NULL;
    return o;
}

/* One .glb being made: what it is written from and what the argument checks found. */
typedef struct glb_job {
    const char* name; /* the file in messages */
    const mn_model* m;
    const mn_motion* mo; /* NULL: no frames */
    const mn_gltf* skin;
    mn_gltf_write_options o;
    const mn_objects* ob; /* NULL: none */
    int nj, nf;
    int placed;    /* turned or scaled */
    int with_mesh; /* the skin has a mesh to write */
} glb_job;

/* The arguments checked (name in the messages) into J. */
static mn_status glb_check(glb_job* J, const char* name, const mn_model* m, const mn_motion* motion,
                           const mn_gltf* skin, const mn_gltf_write_options* opt, mn_error* err) {
    memset(J, 0, sizeof *J);
    if (!m) return mn_error_set(err, MN_ERR_ARG, name, 0, "", "NULL argument");
    J->name = name;
    J->m = m;
    J->skin = skin;
    J->o = opt ? *opt : mn_gltf_write_default();
    const mn_gltf_write_options* o = &J->o;
    mn_quat u = o->root_rot;
    double un = u.w * u.w + u.x * u.x + u.y * u.y + u.z * u.z;
    if (!isfinite(o->scale) || !(o->scale > 0))
        return mn_error_set(err, MN_ERR_ARG, name, 0, "scale", "must be finite and > 0");
    if (!isfinite(un) || fabs(un - 1) > 1e-9)
        return mn_error_set(err, MN_ERR_ARG, name, 0, "root_rot", "not a unit quaternion");
    J->placed = o->scale != 1 || u.w != 1;
    const mn_motion* mo = motion && motion->nframes > 0 ? motion : NULL;
    if (mo && (mo->nq != m->nq || (m->nq > 0 && !mo->q) || !(mo->frame_time > 0) ||
               !isfinite(mo->frame_time)))
        return mn_error_set(err, MN_ERR_ARG, name, 0, "motion",
                            "motion does not fit the model (nq %d, model nq %d)", mo->nq, m->nq);
    if (mo && m->nq > 0)
        for (size_t k = 0; k < (size_t)mo->nframes * (size_t)m->nq; k++)
            if (!isfinite(mo->q[k]))
                return mn_error_set(err, MN_ERR_ARG, name, 0, "motion",
                                    "frame %zu: state %zu is not finite", k / (size_t)m->nq,
                                    k % (size_t)m->nq);
    J->mo = mo;
    J->nj = m->njoint;
    J->nf = mo ? mo->nframes : 0;
    if (J->nj < 1) return mn_error_set(err, MN_ERR_ARG, name, 0, "model", "no joints");
    J->with_mesh = skin && skin->njoints > 0 && skin->nverts > 0 && skin->ntris > 0;
    if (J->with_mesh && J->placed)
        return mn_error_set(err, MN_ERR_UNSUPPORTED, name, 0, "skin",
                            "a skinned mesh is written in its own units and axes only (scale 1, "
                            "no turn at the root)");
    J->ob = o->objects && o->objects->nobjects > 0 ? o->objects : NULL;
    if (J->ob && J->ob->njoint != J->nj)
        return mn_error_set(err, MN_ERR_ARG, name, 0, "objects",
                            "made for a figure of %d joints, this one has %d", J->ob->njoint,
                            J->nj);
    if ((J->ob || o->pose) && J->with_mesh)
        return mn_error_set(err, MN_ERR_UNSUPPORTED, name, 0, J->ob ? "objects" : "pose",
                            "not written with a skinned mesh");
    if (o->pose)
        for (int k = 0; k < m->nq; k++)
            if (!isfinite(o->pose[k]))
                return mn_error_set(err, MN_ERR_ARG, name, 0, "pose", "state %d is not finite", k);
    return MN_OK;
}

/* The poses as the joints' local frames, times scale, the roots turned by root_rot: frame 0
 * of rq/rt the rest pose (or the options' pose), 1..nf the motion, each rotation on the
 * side of the previous frame's (the shorter way for LINEAR); rest: frame 0's FK frames. */
static void glb_poses(const glb_job* J, mn_data* d, mn_quat* rq, mn_vec3* rt, mn_xform* rest) {
    const mn_model* m = J->m;
    int nj = J->nj;
    mn_quat u = J->o.root_rot;
    for (int f = 0; f <= J->nf; f++) {
        memcpy(d->q,
               f           ? J->mo->q + (size_t)(f - 1) * (size_t)m->nq
               : J->o.pose ? J->o.pose
                           : m->q0,
               sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        if (f == 0) memcpy(rest, d->xf, sizeof(mn_xform) * (size_t)nj);
        for (int j = 0; j < nj; j++) {
            mn_quat* r = &rq[(size_t)f * nj + j];
            mn_vec3* t = &rt[(size_t)f * nj + j];
            local_of(m, d->xf, j, r, t);
            if (J->placed && m->jnt_parent[j] < 0) { /* a root: its frame is the world's */
                *r = mn_quat_normalize(mn_quat_mul(u, *r));
                *t = mn_quat_rotate(u, *t);
            }
            t->x *= J->o.scale, t->y *= J->o.scale, t->z *= J->o.scale;
            const mn_quat* prev = f ? &rq[(size_t)(f - 1) * nj + j] : NULL;
            if (prev && r->w * prev->w + r->x * prev->x + r->y * prev->y + r->z * prev->z < 0)
                *r = mn_q4(-r->w, -r->x, -r->y, -r->z);
        }
    }
}

/* The animation: the key times' accessor, then per joint a translation (SLIDE, FREE) and a
 * rotation (HINGE, BALL, FREE) accessor of frames 1..nf of rq/rt, each with its sampler
 * and channel; fv holds 4 floats per frame. Returns the number of channels. */
static int glb_animation(wctx* w, const glb_job* J, const mn_quat* rq, const mn_vec3* rt, float* fv,
                         mn_strbuf* samps, mn_strbuf* chans) {
    const mn_model* m = J->m;
    int nj = J->nj, nf = J->nf, nch = 0;
    if (nf <= 0) return 0;
    double lo = 0, hi = (double)(float)((nf - 1) * J->mo->frame_time);
    for (int f = 0; f < nf; f++)
        fv[f] = (float)(f * J->mo->frame_time);
    int atime = add_accessor(w, fv, sizeof(float) * (size_t)nf, 5126, nf, "SCALAR", 0, &lo, &hi, 1);
    for (int j = 0; j < nj; j++) {
        int t = m->jnt_type[j];
        for (int pth = 0; pth < 2; pth++) {
            int want = pth == 0 ? (t == MN_JOINT_SLIDE || t == MN_JOINT_FREE)
                                : (t == MN_JOINT_HINGE || t == MN_JOINT_BALL || t == MN_JOINT_FREE);
            if (!want) continue;
            for (int f = 1; f <= nf; f++) {
                float* o = fv + (size_t)(f - 1) * (pth ? 4 : 3);
                if (pth == 0) {
                    mn_vec3 v = rt[(size_t)f * nj + j];
                    o[0] = (float)v.x, o[1] = (float)v.y, o[2] = (float)v.z;
                } else {
                    mn_quat r = rq[(size_t)f * nj + j];
                    o[0] = (float)r.x, o[1] = (float)r.y, o[2] = (float)r.z, o[3] = (float)r.w;
                }
            }
            int a = add_accessor(w, fv, sizeof(float) * (size_t)nf * (pth ? 4 : 3), 5126, nf,
                                 pth ? "VEC4" : "VEC3", 0, NULL, NULL, 0);
            mn_strbuf_printf(samps, "%s{\"input\":%d,\"output\":%d,\"interpolation\":\"LINEAR\"}",
                             nch ? "," : "", atime, a);
            mn_strbuf_printf(chans, "%s{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"%s\"}}",
                             nch ? "," : "", nch, j, pth == 0 ? "translation" : "rotation");
            nch++;
        }
    }
    return nch;
}

/* The JSON's start: asset, scene (the roots, then the mesh node) and the nodes: one per
 * joint with its rest translation and rotation (frame 0 of rq/rt) and its children in
 * ascending order (its object's node last), then the mesh node, then the objects' nodes. */
static mn_status glb_nodes(mn_strbuf* js, const glb_job* J, const mn_quat* rq, const mn_vec3* rt,
                           const int* obj_node, mn_error* err) {
    const mn_model* m = J->m;
    int nj = J->nj;
    mn_strbuf_printf(js, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"marionette\"},\"scene\":"
                         "0,\"scenes\":[{\"nodes\":[");
    int first = 1;
    for (int j = 0; j < nj; j++)
        if (m->jnt_parent[j] < 0) mn_strbuf_printf(js, "%s%d", first ? "" : ",", j), first = 0;
    if (J->with_mesh) mn_strbuf_printf(js, ",%d", nj);
    mn_strbuf_printf(js, "]}],\"nodes\":[");
    /* children lists in ascending order: first child, next sibling */
    int* kid = malloc(sizeof(int) * 2 * (size_t)nj);
    if (!kid) return mn_error_set(err, MN_ERR_NOMEM, J->name, 0, "", "out of memory");
    for (int j = 0; j < nj; j++)
        kid[j] = -1;
    for (int c = nj - 1; c >= 0; c--) {
        int par = m->jnt_parent[c];
        kid[nj + c] = par >= 0 ? kid[par] : -1;
        if (par >= 0) kid[par] = c;
    }
    for (int j = 0; j < nj; j++) {
        mn_quat r = rq[j];
        mn_vec3 t = rt[j];
        mn_strbuf_printf(js, "%s{\"name\":", j ? "," : "");
        put_string(js, m->jnt_name[j] ? m->jnt_name[j] : "");
        mn_strbuf_printf(js, ",\"translation\":[%.9g,%.9g,%.9g],\"rotation\":[%.9g,%.9g,%.9g,%.9g]",
                         (double)(float)t.x, (double)(float)t.y, (double)(float)t.z,
                         (double)(float)r.x, (double)(float)r.y, (double)(float)r.z,
                         (double)(float)r.w);
        int on = obj_node ? obj_node[j] : -1;
        for (int c = kid[j]; c >= 0; c = kid[nj + c])
            mn_strbuf_printf(js, "%s%d", c == kid[j] ? ",\"children\":[" : ",", c);
        if (on >= 0) mn_strbuf_printf(js, "%s%d", kid[j] >= 0 ? "," : ",\"children\":[", on);
        if (kid[j] >= 0 || on >= 0) mn_strbuf_printf(js, "]");
        mn_strbuf_printf(js, "}");
    }
    free(kid);
    if (J->with_mesh) mn_strbuf_printf(js, ",{\"name\":\"mesh\",\"mesh\":0,\"skin\":0}");
    for (int j = 0, k = 0; obj_node && j < nj; j++) {
        if (obj_node[j] < 0) continue;
        mn_strbuf_printf(js, ",{\"name\":");
        char name[300];
        snprintf(name, sizeof name, "%s object", m->jnt_name[j] ? m->jnt_name[j] : "");
        put_string(js, name);
        mn_strbuf_printf(js, ",\"mesh\":%d}", k++);
    }
    mn_strbuf_printf(js, "]");
    return MN_OK;
}

/* The JSON's end after the nodes: meshes and skins (mesh_js), the animation, the buffer,
 * its views and the accessors. */
static void glb_json_end(mn_strbuf* js, const wctx* w, const mn_strbuf* mesh_js, int nch,
                         const mn_strbuf* chans, const mn_strbuf* samps) {
    if (mesh_js->len) mn_strbuf_append(js, mesh_js->data, mesh_js->len);
    if (nch > 0) {
        mn_strbuf_printf(js, ",\"animations\":[{\"name\":\"motion\",\"channels\":[");
        mn_strbuf_append(js, chans->data, chans->len);
        mn_strbuf_printf(js, "],\"samplers\":[");
        mn_strbuf_append(js, samps->data, samps->len);
        mn_strbuf_printf(js, "]}]");
    }
    if (w->nviews > 0) {
        mn_strbuf_printf(js, ",\"buffers\":[{\"byteLength\":%zu}],\"bufferViews\":[", w->b.len);
        mn_strbuf_append(js, w->views.data, w->views.len);
        mn_strbuf_printf(js, "],\"accessors\":[");
        mn_strbuf_append(js, w->acc.data, w->acc.len);
        mn_strbuf_printf(js, "]");
    }
    mn_strbuf_printf(js, "}");
}

/* GLB (4.4): header, JSON chunk padded with spaces, BIN chunk (when there is binary data)
 * padded with zeros, into a malloc'd *out of *len bytes. */
static mn_status glb_pack(const char* name, const mn_strbuf* js, const bin* b, unsigned char** out,
                          size_t* len, mn_error* err) {
    size_t jl = (js->len + 3) & ~(size_t)3, bl = (b->len + 3) & ~(size_t)3;
    size_t total = 12 + 8 + jl + (b->len ? 8 + bl : 0);
    if (total > UINT32_MAX)
        return mn_error_set(err, MN_ERR_UNSUPPORTED, name, 0, "", "%zu bytes: too large for a .glb",
                            total);
    unsigned char* o = calloc(1, total);
    if (!o) return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    uint32_t h[5] = {0x46546C67u, 2, (uint32_t)total, (uint32_t)jl, 0x4E4F534Au};
    memcpy(o, h, 20);
    memset(o + 20, ' ', jl);
    memcpy(o + 20, js->data, js->len);
    if (b->len) {
        uint32_t c1[2] = {(uint32_t)bl, 0x004E4942u};
        memcpy(o + 20 + jl, c1, 8);
        memcpy(o + 28 + jl, b->data, b->len);
    }
    *out = o;
    *len = total;
    return MN_OK;
}

mn_status mn_gltf_glb(const char* name, const mn_model* m, const mn_motion* motion,
                      const mn_gltf* skin, const mn_gltf_write_options* opt, unsigned char** glb,
                      size_t* len, mn_error* err) {
    *glb = NULL;
    *len = 0;
    glb_job J;
    mn_status s = glb_check(&J, name, m, motion, skin, opt, err);
    if (s != MN_OK) return s;
    int nj = J.nj, nf = J.nf;
    mn_data* d = mn_data_create(m, 0);
    mn_quat* rq = malloc(sizeof(mn_quat) * (size_t)nj * (size_t)(nf + 1));
    mn_vec3* rt = malloc(sizeof(mn_vec3) * (size_t)nj * (size_t)(nf + 1));
    mn_xform* rest = malloc(sizeof(mn_xform) * (size_t)nj);
    float* fv = malloc(sizeof(float) * 4 * (size_t)(nf ? nf : 1));
    wctx w;
    memset(&w, 0, sizeof w);
    mn_strbuf_init(&w.views);
    mn_strbuf_init(&w.acc);
    mn_strbuf js, chans, samps, mesh_js;
    mn_strbuf_init(&js);
    mn_strbuf_init(&chans);
    mn_strbuf_init(&samps);
    mn_strbuf_init(&mesh_js);
    int* obj_node = NULL; /* per joint: the node of its object, or -1 */
    if (!d || !rq || !rt || !rest || !fv) {
        s = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
        goto done;
    }
    glb_poses(&J, d, rq, rt, rest);
    if (J.with_mesh) {
        s = add_skin(&w, skin, m, rest, J.o.keep_attributes, &mesh_js, name, err);
        if (s) goto done;
    }
    if (J.ob) {
        obj_node = malloc(sizeof(int) * (size_t)nj);
        if (!obj_node) {
            s = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
            goto done;
        }
        s = add_objects(&w, m, J.ob, J.o.scale, obj_node, &mesh_js, name, err);
        if (s) goto done;
    }
    int nch = glb_animation(&w, &J, rq, rt, fv, &samps, &chans);
    s = glb_nodes(&js, &J, rq, rt, obj_node, err);
    if (s) goto done;
    glb_json_end(&js, &w, &mesh_js, nch, &chans, &samps);
    if (js.failed || w.b.failed || w.views.failed || w.acc.failed || chans.failed || samps.failed ||
        mesh_js.failed) {
        s = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
        goto done;
    }
    s = glb_pack(name, &js, &w.b, glb, len, err);
done:
    free(obj_node);
    mn_strbuf_free(&js);
    mn_strbuf_free(&chans);
    mn_strbuf_free(&samps);
    mn_strbuf_free(&mesh_js);
    mn_strbuf_free(&w.views);
    mn_strbuf_free(&w.acc);
    free(w.b.data);
    free(rq);
    free(rt);
    free(rest);
    free(fv);
    mn_data_destroy(d);
    return s;
}

mn_status mn_gltf_write_mem(const mn_model* m, const mn_motion* motion, const mn_gltf* skin,
                            const mn_gltf_write_options* opt, unsigned char** glb, size_t* len,
                            mn_error* err) {
    if (glb) *glb = NULL;
    if (len) *len = 0;
    if (!glb || !len) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    return mn_gltf_glb("", m, motion, skin, opt, glb, len, err);
}
