/* glTF 2.0 reader: the five sample models, a synthetic file that exercises every sampler
 * kind, sparse accessors, external and GLB buffers, a hand computation of the glTF
 * tutorial's SimpleSkin, the marionette model's FK, and a table of malformed inputs. */
#include "test.h"

#include <cjson/cJSON.h>

#include <marionette/gltf.h>

#include "io/gltf_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SKINNED MN_DATA "/skinned/"

/* ---- helpers ------------------------------------------------------------------------- */

static double max_abs(const double* v, int n) {
    double m = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(v[i]));
    return m;
}

/* y = A x for a 3x4 affine A */
static void aff_apply(const double* a, const double* x, double* y) {
    for (int r = 0; r < 3; r++)
        y[r] = a[4 * r] * x[0] + a[4 * r + 1] * x[1] + a[4 * r + 2] * x[2] + a[4 * r + 3];
}

static char* b64(const unsigned char* d, size_t n) {
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char* o = malloc(4 * ((n + 2) / 3) + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) |
                     (i + 2 < n ? d[i + 2] : 0);
        o[k++] = al[v >> 18 & 63];
        o[k++] = al[v >> 12 & 63];
        o[k++] = i + 1 < n ? al[v >> 6 & 63] : '=';
        o[k++] = i + 2 < n ? al[v & 63] : '=';
    }
    o[k] = 0;
    return o;
}

/* s with the first `from` replaced by `to` (malloc'd); NULL when from is absent. */
static char* replace(const char* s, const char* from, const char* to) {
    const char* p = strstr(s, from);
    if (!p) return NULL;
    size_t a = (size_t)(p - s), nf = strlen(from), nt = strlen(to), ns = strlen(s);
    char* o = malloc(ns - nf + nt + 1);
    memcpy(o, s, a);
    memcpy(o + a, to, nt);
    memcpy(o + a + nt, p + nf, ns - a - nf + 1);
    return o;
}

/* ---- a small synthetic skinned file ----------------------------------------------------
 * Joints hip (node 1) and knee (node 2, child of hip at +x), under a helper node 3 at
 * z = 5 that is not a joint; one triangle; animations: "lin" (knee translation LINEAR,
 * knee rotation STEP), "cubic" (hip translation CUBICSPLINE), "anc" (the helper node's
 * translation, which moves the whole skeleton). */
#define TINY_LEN 520
enum {
    OFF_POS = 0,
    OFF_JNT = 36,
    OFF_WGT = 48,
    OFF_IDX = 96,
    OFF_TIME = 104,
    OFF_TRA = 116,
    OFF_ROT = 152,
    OFF_IBM = 200,
    OFF_CTIME = 328,
    OFF_CVAL = 336,
    OFF_SPARSE = 408 /* sparse index (uint16) for vertex 1, then its value at 412 */,
    OFF_CROT = 424 /* cubic rotation keys: 2 x (in-tangent, value, out-tangent) */
};

static void put_f(unsigned char* b, size_t off, const float* v, int n) {
    memcpy(b + off, v, sizeof(float) * (size_t)n);
}

static void tiny_buffer(unsigned char* b) {
    memset(b, 0, TINY_LEN);
    const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const unsigned char jnt[12] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0};
    const float wgt[12] = {1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0, 1, 0, 0};
    const uint16_t idx[3] = {0, 1, 2};
    const float time[3] = {0, 1, 2};
    const float tra[9] = {1, 0, 0, 1, 2, 0, 3, 2, 0};
    const float s = 0.70710678f;
    const float rot[12] = {0, 0, 0, 1, 0, 0, s, s, 0, 0, 1, 0};
    /* column-major inverse binds: T(0,0,-5) and T(-1,0,-5) */
    const float ibm[32] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0,  0, -5, 1,
                           1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -1, 0, -5, 1};
    const float ctime[2] = {0, 2};
    const float cval[18] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0};
    put_f(b, OFF_POS, pos, 9);
    memcpy(b + OFF_JNT, jnt, sizeof jnt);
    put_f(b, OFF_WGT, wgt, 12);
    memcpy(b + OFF_IDX, idx, sizeof idx);
    put_f(b, OFF_TIME, time, 3);
    put_f(b, OFF_TRA, tra, 9);
    put_f(b, OFF_ROT, rot, 12);
    put_f(b, OFF_IBM, ibm, 32);
    put_f(b, OFF_CTIME, ctime, 2);
    put_f(b, OFF_CVAL, cval, 18);
    const uint16_t si = 1;
    const float sv[3] = {7, 8, 9};
    memcpy(b + OFF_SPARSE, &si, 2);
    put_f(b, OFF_SPARSE + 4, sv, 3);
    /* knee rotation: identity with out-tangent (0,0,.2,0), then 90 deg about z */
    const float crot[24] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0.2f, 0,
                            0, 0, 0, 0, 0, 0, s, s, 0, 0, 0,    0};
    put_f(b, OFF_CROT, crot, 24);
}

static const char* tiny_json_fmt =
    "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,3]}],\n"
    "\"nodes\":[{\"name\":\"body\",\"mesh\":0,\"skin\":0},{\"name\":\"hip\",\"children\":[2]},"
    "{\"name\":\"knee\",\"translation\":[1,0,0]},{\"name\":\"helper\",\"translation\":[0,0,5],"
    "\"children\":[1]}],\n"
    "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2},"
    "\"indices\":3,\"mode\":4}]}],\n"
    "\"skins\":[{\"joints\":[1,2],\"inverseBindMatrices\":7,\"skeleton\":3}],\n"
    "\"animations\":[{\"name\":\"lin\",\"channels\":[{\"sampler\":0,\"target\":{\"node\":2,"
    "\"path\":\"translation\"}},"
    "{\"sampler\":1,\"target\":{\"node\":2,\"path\":\"rotation\"}}],"
    "\"samplers\":[{\"input\":4,\"output\":5,\"interpolation\":\"LINEAR\"},{\"input\":4,\"output\":"
    "6,\"interpolation\":\"STEP\"}]},\n"
    "{\"name\":\"cubic\",\"channels\":[{\"sampler\":0,\"target\":{\"node\":1,\"path\":"
    "\"translation\"}},"
    "{\"sampler\":1,\"target\":{\"node\":2,\"path\":\"rotation\"}}],"
    "\"samplers\":[{\"input\":8,\"output\":9,\"interpolation\":\"CUBICSPLINE\"},"
    "{\"input\":8,\"output\":10,\"interpolation\":\"CUBICSPLINE\"}]},\n"
    "{\"name\":\"anc\",\"channels\":[{\"sampler\":0,\"target\":{\"node\":3,\"path\":"
    "\"translation\"}}],"
    "\"samplers\":[{\"input\":4,\"output\":5}]}],\n"
    "\"buffers\":[{\"uri\":\"%s\",\"byteLength\":520}],\n"
    "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":408},{\"buffer\":0,"
    "\"byteOffset\":408,\"byteLength\":4},"
    "{\"buffer\":0,\"byteOffset\":412,\"byteLength\":12},{\"buffer\":0,\"byteOffset\":424,"
    "\"byteLength\":96}],\n"
    "\"accessors\":[{\"bufferView\":0,\"byteOffset\":0,\"componentType\":5126,\"count\":3,\"type\":"
    "\"VEC3\"},\n"
    "{\"bufferView\":0,\"byteOffset\":36,\"componentType\":5121,\"count\":3,\"type\":\"VEC4\"},\n"
    "{\"bufferView\":0,\"byteOffset\":48,\"componentType\":5126,\"count\":3,\"type\":\"VEC4\"},\n"
    "{\"bufferView\":0,\"byteOffset\":96,\"componentType\":5123,\"count\":3,\"type\":\"SCALAR\"},\n"
    "{\"bufferView\":0,\"byteOffset\":104,\"componentType\":5126,\"count\":3,\"type\":\"SCALAR\"},"
    "\n"
    "{\"bufferView\":0,\"byteOffset\":116,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"},\n"
    "{\"bufferView\":0,\"byteOffset\":152,\"componentType\":5126,\"count\":3,\"type\":\"VEC4\"},\n"
    "{\"bufferView\":0,\"byteOffset\":200,\"componentType\":5126,\"count\":2,\"type\":\"MAT4\"},\n"
    "{\"bufferView\":0,\"byteOffset\":328,\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\"},"
    "\n"
    "{\"bufferView\":0,\"byteOffset\":336,\"componentType\":5126,\"count\":6,\"type\":\"VEC3\"},\n"
    "{\"bufferView\":3,\"componentType\":5126,\"count\":6,\"type\":\"VEC4\"}]}\n";

/* The synthetic file as .gltf text with its buffer as a data: URI (buffer patched by the
 * caller when b is given). */
static char* tiny_gltf(const unsigned char* b) {
    unsigned char own[TINY_LEN];
    if (!b) {
        tiny_buffer(own);
        b = own;
    }
    char* enc = b64(b, TINY_LEN);
    size_t n = strlen(enc) + 64;
    char* uri = malloc(n);
    snprintf(uri, n, "data:application/octet-stream;base64,%s", enc);
    size_t cap = strlen(tiny_json_fmt) + strlen(uri) + 1;
    char* s = malloc(cap);
    snprintf(s, cap, tiny_json_fmt, uri);
    free(enc);
    free(uri);
    return s;
}

/* The same as a .glb: JSON chunk (no uri, space padded) + BIN chunk. */
static unsigned char* tiny_glb(size_t* len) {
    unsigned char b[TINY_LEN];
    tiny_buffer(b);
    size_t cap = strlen(tiny_json_fmt) + 8;
    char* js = malloc(cap);
    snprintf(js, cap, tiny_json_fmt, "");
    char* j2 = replace(js, "\"uri\":\"\",", "");
    free(js);
    size_t jl = strlen(j2), jp = (jl + 3) & ~(size_t)3, bp = (TINY_LEN + 3) & ~(size_t)3;
    size_t total = 12 + 8 + jp + 8 + bp;
    unsigned char* o = calloc(1, total);
    uint32_t h[3] = {0x46546C67u, 2, (uint32_t)total};
    memcpy(o, h, 12);
    uint32_t c0[2] = {(uint32_t)jp, 0x4E4F534Au};
    memcpy(o + 12, c0, 8);
    memset(o + 20, ' ', jp);
    memcpy(o + 20, j2, jl);
    uint32_t c1[2] = {(uint32_t)bp, 0x004E4942u};
    memcpy(o + 20 + jp, c1, 8);
    memcpy(o + 28 + jp, b, TINY_LEN);
    free(j2);
    *len = total;
    return o;
}

static mn_status read_text(const char* text, mn_gltf* g, mn_warnings* w, mn_error* e) {
    return mn_gltf_read_mem(text, strlen(text), "tiny.gltf", g, w, e);
}

/* ---- the sample models ---------------------------------------------------------------- */

typedef struct sample {
    const char* file;
    int nverts, njoints, nanims; /* -1: not stated by the data manifest */
} sample;

static const sample samples[] = {
    {"SimpleSkin.gltf", 10, 2, 1},    {"RiggedSimple.glb", 96, 2, 1},
    {"RiggedFigure.glb", 370, 19, 1}, {"CesiumMan.glb", 3273, 19, 1},
    {"Fox.glb", 1728, 24, 3},
};
#define NSAMPLES (int)(sizeof samples / sizeof *samples)

static void test_samples_load(void) {
    for (int i = 0; i < NSAMPLES; i++) {
        char path[512];
        snprintf(path, sizeof path, SKINNED "%s", samples[i].file);
        mn_gltf g;
        mn_error e;
        mn_warnings w = {0};
        mn_status s = mn_gltf_read(path, &g, &w, &e);
        CHECK(s == MN_OK);
        if (s) {
            fprintf(stderr, "%s\n", e.message);
            continue;
        }
        CHECK(g.nverts == samples[i].nverts);
        CHECK(g.njoints == samples[i].njoints);
        CHECK(g.nanims == samples[i].nanims);
        CHECK(g.ntris > 0);
        for (int t = 0; t < 3 * g.ntris; t++)
            CHECK(g.tris[t] >= 0 && g.tris[t] < g.nverts);
        /* joint parents form a forest: every chain of parents ends within njoints steps */
        for (int j = 0; j < g.njoints; j++) {
            int k = j, steps = 0;
            while (k >= 0 && steps <= g.njoints)
                k = g.joint_parent[k], steps++;
            CHECK(k == -1);
            CHECK(g.joint_name[j] && g.joint_name[j][0]);
            for (int m = 0; m < j; m++)
                CHECK(strcmp(g.joint_name[m], g.joint_name[j]) != 0);
        }
        for (int a = 0; a < g.nanims; a++)
            CHECK(g.anims[a].duration > 0 && g.anims[a].nchannels > 0);
        mn_gltf_free(&g);
        CHECK(g.nverts == 0 && g.rest_pos == NULL);
    }
}

static void test_fox_animations(void) {
    mn_gltf g;
    mn_error e;
    CHECK(mn_gltf_read(SKINNED "Fox.glb", &g, NULL, &e) == MN_OK);
    if (g.nanims != 3) return;
    CHECK(strcmp(g.anims[0].name, "Survey") == 0);
    CHECK(strcmp(g.anims[1].name, "Walk") == 0);
    CHECK(strcmp(g.anims[2].name, "Run") == 0);
    mn_gltf_free(&g);
}

/* Weights are non-negative, sum to 1, and name joints of the skin. CesiumMan and
 * RiggedFigure store weights that do not sum to 1 (up to 0.8 off): a warning. */
static void test_samples_weights(void) {
    for (int i = 0; i < NSAMPLES; i++) {
        char path[512];
        snprintf(path, sizeof path, SKINNED "%s", samples[i].file);
        mn_gltf g;
        mn_warnings w = {0};
        if (mn_gltf_read(path, &g, &w, NULL) != MN_OK) {
            CHECK(0);
            continue;
        }
        for (int v = 0; v < g.nverts; v++) {
            double sum = 0;
            for (int k = 0; k < 4; k++) {
                CHECK(g.vweight[4 * v + k] >= 0);
                CHECK(g.vjoint[4 * v + k] >= 0 && g.vjoint[4 * v + k] < g.njoints);
                sum += g.vweight[4 * v + k];
            }
            CHECK_NEAR(sum, 1.0, 1e-12);
        }
        if (strcmp(samples[i].file, "CesiumMan.glb") == 0) {
            CHECK(w.count >= 1);
            CHECK(strstr(w.first, "accessors[5]") && strstr(w.first, "do not sum to 1"));
        }
        mn_gltf_free(&g);
    }
}

/* At the rest pose (t = -1) every skinning matrix of the four GLB models equals the world
 * transform of the mesh node (a Z-up to Y-up turn for the Cesium models, the identity for
 * Fox): their inverse bind matrices invert the joints' rest world transforms up to that
 * node, so the skinned rest mesh is mesh_world applied to the bind positions. SimpleSkin
 * differs on purpose (test_simpleskin_by_hand). Tolerance 1e-6 relative to the model size
 * (the files store float32). */
static void test_samples_rest_is_bind(void) {
    for (int i = 1; i < NSAMPLES; i++) {
        char path[512];
        snprintf(path, sizeof path, SKINNED "%s", samples[i].file);
        mn_gltf g;
        if (mn_gltf_read(path, &g, NULL, NULL) != MN_OK) {
            CHECK(0);
            continue;
        }
        double* W = malloc(sizeof(double) * 12 * (size_t)g.njoints);
        double* S = malloc(sizeof(double) * 12 * (size_t)g.njoints);
        double* P = malloc(sizeof(double) * 3 * (size_t)g.nverts);
        CHECK(mn_gltf_sample(&g, -1, -1, W) == MN_OK);
        mn_gltf_skin_matrices(&g, W, S);
        for (int j = 0; j < g.njoints; j++)
            for (int k = 0; k < 12; k++)
                CHECK_NEAR(S[12 * j + k], g.mesh_world[k], 1e-5);
        mn_gltf_skin_vertices(&g, S, P);
        double size = fmax(1.0, max_abs(g.rest_pos, 3 * g.nverts)), worst = 0;
        for (int v = 0; v < g.nverts; v++) {
            double y[3];
            aff_apply(g.mesh_world, g.rest_pos + 3 * v, y);
            for (int r = 0; r < 3; r++)
                worst = fmax(worst, fabs(y[r] - P[3 * v + r]));
        }
        CHECK(worst <= 1e-6 * size);
        if (worst > 1e-6 * size)
            fprintf(stderr, "%s: rest vs bind %g (size %g)\n", samples[i].file, worst, size);
        free(W);
        free(S);
        free(P);
        mn_gltf_free(&g);
    }
}

/* Keys are hit exactly at their times, and halfway between two LINEAR keys translation
 * and scale are the mean and rotation the normalised sum (slerp at 1/2), for every channel
 * of every sample animation. */
static void test_samples_keys(void) {
    for (int i = 0; i < NSAMPLES; i++) {
        char path[512];
        snprintf(path, sizeof path, SKINNED "%s", samples[i].file);
        mn_gltf g;
        if (mn_gltf_read(path, &g, NULL, NULL) != MN_OK) {
            CHECK(0);
            continue;
        }
        const gltf_priv* p = g.priv;
        int checked = 0;
        for (int a = 0; a < g.nanims; a++) {
            const gltf_anim_priv* ap = g.anims[a].channels;
            for (int c = 0; c < g.anims[a].nchannels; c++) {
                const gltf_channel* ch = &ap->ch[c];
                if (ap->lookup[3 * ch->snode + ch->path] != c) continue; /* overridden */
                CHECK(ch->interp == GLTF_LINEAR);
                int nc = ch->path == GLTF_PATH_R ? 4 : 3;
                for (int k = 0; k < ch->nkeys; k += 1 + ch->nkeys / 7) {
                    double L[12], want[12], tr[3], sc[3];
                    mn_quat q = p->rest[ch->snode].r;
                    memcpy(tr, p->rest[ch->snode].t, sizeof tr);
                    memcpy(sc, p->rest[ch->snode].s, sizeof sc);
                    /* only the 3x3 part is compared, so the rest translation stands in */
                    mn_gltf_local(&g, a, ch->times[k], ch->snode, L);
                    const double* v = ch->values + nc * k;
                    double half[4];
                    int mid = k + 1 < ch->nkeys && ch->times[k + 1] > ch->times[k];
                    if (ch->path == GLTF_PATH_T) {
                        for (int r = 0; r < 3; r++)
                            CHECK_NEAR(L[4 * r + 3], v[r], 1e-12);
                    } else {
                        /* column norms are the scale; for rotation compare R S columns */
                        for (int col = 0; col < 3; col++) {
                            double n = sqrt(L[col] * L[col] + L[4 + col] * L[4 + col] +
                                            L[8 + col] * L[8 + col]);
                            if (ch->path == GLTF_PATH_S) CHECK_NEAR(n, fabs(v[col]), 1e-9);
                            sc[col] = n;
                        }
                        if (ch->path == GLTF_PATH_R) {
                            q = mn_q4(v[3], v[0], v[1], v[2]);
                            mn_gltf_trs(tr, q, sc, want);
                            for (int r = 0; r < 3; r++)
                                for (int col = 0; col < 3; col++)
                                    CHECK_NEAR(L[4 * r + col], want[4 * r + col], 1e-9);
                        }
                    }
                    if (!mid) continue;
                    double tm = 0.5 * (ch->times[k] + ch->times[k + 1]);
                    const double* v2 = ch->values + nc * (k + 1);
                    mn_gltf_local(&g, a, tm, ch->snode, L);
                    if (ch->path == GLTF_PATH_T) {
                        for (int r = 0; r < 3; r++)
                            CHECK_NEAR(L[4 * r + 3], 0.5 * (v[r] + v2[r]), 1e-9);
                    } else if (ch->path == GLTF_PATH_R) {
                        double d = v[0] * v2[0] + v[1] * v2[1] + v[2] * v2[2] + v[3] * v2[3];
                        double sg = d < 0 ? -1 : 1, n = 0;
                        for (int r = 0; r < 4; r++)
                            half[r] = v[r] + sg * v2[r], n += half[r] * half[r];
                        n = sqrt(n);
                        q = mn_q4(half[3] / n, half[0] / n, half[1] / n, half[2] / n);
                        for (int col = 0; col < 3; col++)
                            sc[col] = sqrt(L[col] * L[col] + L[4 + col] * L[4 + col] +
                                           L[8 + col] * L[8 + col]);
                        mn_gltf_trs(tr, q, sc, want);
                        for (int r = 0; r < 3; r++)
                            for (int col = 0; col < 3; col++)
                                CHECK_NEAR(L[4 * r + col], want[4 * r + col], 1e-9);
                    }
                    checked++;
                }
            }
        }
        CHECK(checked > 0);
        mn_gltf_free(&g);
    }
}

/* The glTF tutorial's SimpleSkin (glTF-Tutorials, "Simple Skin"), computed from the
 * tutorial's own numbers: a 1 x 2 strip of 10 vertices (x in {0, 1}, y in 0, 0.5 .. 2),
 * joint 0 at (0, 1, 0), joint 1 its child at the same place, both inverse bind matrices
 * the translation (-0.5, -1, 0), weights (1,0) (1,0) (.75,.25) (.75,.25) (.5,.5) (.5,.5)
 * (.25,.75) (.25,.75) (0,1) (0,1), and joint 1 turning about z with keys every 0.5 s:
 * 0, 45, 90, 90, 45, 0, 0, -45, -90, -90, -45, 0 degrees (quaternions (0,0,.383,.924) and
 * (0,0,.707,.707)). At rest the skinning matrices are the translation (-0.5, 0, 0): the
 * strip is drawn centred on the y axis, not where its bind positions are. */
static void simpleskin_expected(double angle, double* out) {
    static const double w1[10] = {0, 0, .25, .25, .5, .5, .75, .75, 1, 1};
    double c = cos(angle), s = sin(angle);
    for (int v = 0; v < 10; v++) {
        double x = v % 2, y = 0.5 * (v / 2);
        /* joint 0: T(0,1,0) T(-0.5,-1,0) */
        double a0[3] = {x - 0.5, y, 0};
        /* joint 1: T(0,1,0) Rz(angle) T(-0.5,-1,0) */
        double lx = x - 0.5, ly = y - 1;
        double a1[3] = {c * lx - s * ly, s * lx + c * ly + 1, 0};
        for (int r = 0; r < 3; r++)
            out[3 * v + r] = (1 - w1[v]) * a0[r] + w1[v] * a1[r];
    }
}

static void test_simpleskin_by_hand(void) {
    mn_gltf g;
    mn_error e;
    CHECK(mn_gltf_read(SKINNED "SimpleSkin.gltf", &g, NULL, &e) == MN_OK);
    if (g.njoints != 2) return;
    double W[24], S[24], P[30], X[30];
    /* times and angles: rest; key 2 (t = 1, 90 deg); halfway key 0 -> 1 (t = 0.25); key 8
     * (t = 4, -90 deg); past the end (held at key 11, 0 deg) */
    const double th45 = 2 * atan2(0.383, 0.924), th90 = 2 * atan2(0.707, 0.707);
    struct {
        double t, angle;
    } cases[] = {{-1, 0}, {1.0, th90}, {0.25, 0.5 * th45}, {4.0, -th90}, {99, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CHECK(mn_gltf_sample(&g, 0, cases[i].t, W) == MN_OK);
        mn_gltf_skin_matrices(&g, W, S);
        mn_gltf_skin_vertices(&g, S, P);
        simpleskin_expected(cases[i].angle, X);
        for (int k = 0; k < 30; k++)
            CHECK_NEAR(P[k], X[k], 1e-6);
    }
    /* the vertex at (1, 2) follows joint 1 alone: at 90 deg it is at (-1, 1.5) */
    CHECK(mn_gltf_sample(&g, 0, 1.0, W) == MN_OK);
    mn_gltf_skin_matrices(&g, W, S);
    mn_gltf_skin_vertices(&g, S, P);
    CHECK_NEAR(P[27], -1.0, 1e-6);
    CHECK_NEAR(P[28], 1.5, 1e-6);
    mn_gltf_free(&g);
}

/* ---- the synthetic file --------------------------------------------------------------- */

static void test_tiny_sampling(void) {
    char* text = tiny_gltf(NULL);
    mn_gltf g;
    mn_error e;
    mn_warnings w = {0};
    CHECK(read_text(text, &g, &w, &e) == MN_OK);
    free(text);
    if (g.njoints != 2) {
        fprintf(stderr, "%s\n", e.message);
        return;
    }
    CHECK(w.count == 0);
    CHECK(g.nanims == 3 && g.nverts == 3 && g.ntris == 1);
    CHECK(strcmp(g.joint_name[0], "hip") == 0 && strcmp(g.joint_name[1], "knee") == 0);
    CHECK(g.joint_parent[0] == -1 && g.joint_parent[1] == 0);
    CHECK_NEAR(g.root_parent[11], 5.0, 0);
    CHECK_NEAR(g.anims[0].duration, 2.0, 0);
    double W[24], S[24], P[9];
    /* rest: hip at (0,0,5), knee at (1,0,5); skinning matrices are the identity */
    CHECK(mn_gltf_sample(&g, -1, -1, W) == MN_OK);
    CHECK_NEAR(W[3], 0, 0);
    CHECK_NEAR(W[11], 5, 0);
    CHECK_NEAR(W[12 + 3], 1, 0);
    mn_gltf_skin_matrices(&g, W, S);
    mn_gltf_skin_vertices(&g, S, P);
    CHECK_NEAR(P[3], 1, 1e-15);
    CHECK_NEAR(P[7], 1, 1e-15);
    /* "lin" at t = 0.5: knee translation halfway (1,0,0)-(1,2,0); STEP rotation still key 0 */
    CHECK(mn_gltf_sample(&g, 0, 0.5, W) == MN_OK);
    CHECK_NEAR(W[12 + 3], 1, 1e-12);
    CHECK_NEAR(W[12 + 7], 1, 1e-12);
    CHECK_NEAR(W[12 + 0], 1, 1e-12);
    /* at t = 1.5: translation (2,2,0); STEP gives key 1 = 90 deg about z: x axis -> +y */
    CHECK(mn_gltf_sample(&g, 0, 1.5, W) == MN_OK);
    CHECK_NEAR(W[12 + 3], 2, 1e-12);
    CHECK_NEAR(W[12 + 0], 0, 1e-7);
    CHECK_NEAR(W[12 + 4], 1, 1e-7);
    /* clamped past the end: key 2 = 180 deg, translation (3,2,0) */
    CHECK(mn_gltf_sample(&g, 0, 50, W) == MN_OK);
    CHECK_NEAR(W[12 + 0], -1, 1e-7);
    CHECK_NEAR(W[12 + 3], 3, 1e-12);
    /* skinned vertex 1 (weights .5/.5) at t = 1.5: knee skin = T(2,2,5) Rz90 T(-1,0,-5) */
    mn_gltf_skin_matrices(&g, W, S);
    CHECK(mn_gltf_sample(&g, 0, 1.5, W) == MN_OK);
    mn_gltf_skin_matrices(&g, W, S);
    mn_gltf_skin_vertices(&g, S, P);
    /* hip: identity -> (1,0,0); knee: (1,0,0) -> (0,0,-5) -> Rz90 (0,0,-5) -> (2,2,0) */
    CHECK_NEAR(P[3], 1.5, 1e-7);
    CHECK_NEAR(P[4], 1.0, 1e-7);
    CHECK_NEAR(P[5], 0.0, 1e-7);
    /* "cubic" at t = 1 (s = 1/2, td = 2): 0.5 v0 + 0.25 b0 + 0.5 v1 - 0.25 a1 = (1.25,-0.25,0) */
    CHECK(mn_gltf_sample(&g, 1, 1.0, W) == MN_OK);
    CHECK_NEAR(W[3], 1.25, 1e-7);
    CHECK_NEAR(W[7], -0.25, 1e-7);
    CHECK_NEAR(W[11], 5, 1e-12);
    /* the knee's CUBICSPLINE rotation at t = 1: p = 0.5 v0 + 0.25 b0 + 0.5 v1 - 0.25 a1 =
     * (0, 0, .05 + .5 s, .5 + .5 s) with s = sqrt(1/2), normalised: a turn about z */
    {
        double h = 0.70710678f, z = 0.05 + 0.5 * h, wq = 0.5 + 0.5 * h;
        double angle = 2 * atan2(z, wq);
        CHECK(mn_gltf_sample(&g, 1, 1.0, W) == MN_OK);
        /* knee world = hip world (no rotation) * knee local: its x axis turned by angle */
        CHECK_NEAR(W[12 + 0], cos(angle), 1e-7);
        CHECK_NEAR(W[12 + 4], sin(angle), 1e-7);
        CHECK_NEAR(W[12 + 10], 1, 1e-12);
    }
    /* ... and exactly the key values at the keys */
    CHECK(mn_gltf_sample(&g, 1, 2.0, W) == MN_OK);
    CHECK_NEAR(W[3], 2, 0);
    CHECK_NEAR(W[7], 0, 0);
    CHECK_NEAR(W[12 + 0], 0, 1e-7);
    CHECK_NEAR(W[12 + 4], 1, 1e-7);
    /* "anc" moves the helper above the skin root: the whole skeleton follows */
    CHECK(mn_gltf_sample(&g, 2, 1.0, W) == MN_OK);
    CHECK_NEAR(W[3], 1, 1e-12);
    CHECK_NEAR(W[7], 2, 1e-12);
    CHECK_NEAR(W[11], 0, 1e-12);
    CHECK_NEAR(W[12 + 3], 2, 1e-12);
    CHECK_NEAR(W[12 + 7], 2, 1e-12);
    /* argument checks */
    CHECK(mn_gltf_sample(&g, 3, 0, W) == MN_ERR_ARG);
    CHECK(mn_gltf_sample(&g, 0, NAN, W) == MN_ERR_ARG);
    CHECK(mn_gltf_sample(NULL, 0, 0, W) == MN_ERR_ARG);
    CHECK(mn_gltf_sample(&g, 0, 0, NULL) == MN_ERR_ARG);
    mn_gltf_free(&g);
}

/* The same content as .glb, as .gltf with a data: URI and with an external .bin file. */
static void test_tiny_containers(void) {
    mn_gltf a, b, c;
    mn_error e;
    char* text = tiny_gltf(NULL);
    CHECK(read_text(text, &a, NULL, &e) == MN_OK);
    size_t glen;
    unsigned char* glb = tiny_glb(&glen);
    CHECK(mn_gltf_read_mem(glb, glen, "tiny.glb", &b, NULL, &e) == MN_OK);
    const char* gpath = mn_test_write_temp(".glb", (const char*)glb, glen);
    mn_gltf b2;
    CHECK(gpath && mn_gltf_read(gpath, &b2, NULL, &e) == MN_OK);
    unsigned char buf[TINY_LEN];
    tiny_buffer(buf);
    const char* bin = mn_test_write_temp(".bin", (const char*)buf, TINY_LEN);
    CHECK(bin != NULL);
    const char* base = bin ? strrchr(bin, '/') + 1 : "";
    /* the URI is relative to the .gltf and percent-encoded: write its first letter as %XX */
    char uri[300];
    snprintf(uri, sizeof uri, "%%%02X%s", (unsigned char)base[0], base[0] ? base + 1 : "");
    char* ext = malloc(strlen(tiny_json_fmt) + strlen(uri) + 1);
    sprintf(ext, tiny_json_fmt, uri);
    const char* tpath = mn_test_write_temp(".gltf", ext, strlen(ext));
    CHECK(tpath && mn_gltf_read(tpath, &c, NULL, &e) == MN_OK);
    if (a.nverts == 3 && b.nverts == 3 && c.nverts == 3) {
        CHECK(memcmp(a.rest_pos, b.rest_pos, 9 * sizeof(double)) == 0);
        CHECK(memcmp(a.rest_pos, c.rest_pos, 9 * sizeof(double)) == 0);
        CHECK(memcmp(a.vweight, b.vweight, 12 * sizeof(double)) == 0);
        CHECK(memcmp(a.inverse_bind, c.inverse_bind, 24 * sizeof(double)) == 0);
        double Wa[24], Wb[24];
        CHECK(mn_gltf_sample(&a, 0, 0.7, Wa) == MN_OK && mn_gltf_sample(&b2, 0, 0.7, Wb) == MN_OK);
        CHECK(memcmp(Wa, Wb, sizeof Wa) == 0);
    } else {
        fprintf(stderr, "%s\n", e.message);
    }
    mn_gltf_free(&a);
    mn_gltf_free(&b);
    mn_gltf_free(&b2);
    mn_gltf_free(&c);
    free(text);
    free(glb);
    free(ext);
}

/* A sparse accessor replaces vertex 1's position; 8-bit normalised weights are scaled and
 * an all-zero weight vertex is bound to its first joint, both with a warning. */
static void test_tiny_sparse_and_weights(void) {
    char* base = tiny_gltf(NULL);
    char* t = replace(
        base,
        "{\"bufferView\":0,\"byteOffset\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"}",
        "{\"bufferView\":0,\"byteOffset\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\","
        "\"sparse\":{\"count\":1,\"indices\":{\"bufferView\":1,\"componentType\":5123},"
        "\"values\":{\"bufferView\":2}}}");
    free(base);
    mn_gltf g;
    mn_error e;
    CHECK(t && read_text(t, &g, NULL, &e) == MN_OK);
    if (g.nverts == 3) {
        CHECK_NEAR(g.rest_pos[3], 7, 0);
        CHECK_NEAR(g.rest_pos[4], 8, 0);
        CHECK_NEAR(g.rest_pos[5], 9, 0);
        CHECK_NEAR(g.rest_pos[6], 0, 0); /* vertex 2 untouched */
        CHECK_NEAR(g.rest_pos[7], 1, 0);
    } else {
        fprintf(stderr, "%s\n", e.message);
    }
    mn_gltf_free(&g);
    free(t);
    /* a sparse index past the accessor's count is refused */
    unsigned char b[TINY_LEN];
    tiny_buffer(b);
    b[OFF_SPARSE] = 5;
    base = tiny_gltf(b);
    t = replace(
        base,
        "{\"bufferView\":0,\"byteOffset\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"}",
        "{\"bufferView\":0,\"byteOffset\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\","
        "\"sparse\":{\"count\":1,\"indices\":{\"bufferView\":1,\"componentType\":5123},"
        "\"values\":{\"bufferView\":2}}}");
    free(base);
    CHECK(t && read_text(t, &g, NULL, &e) == MN_ERR_PARSE);
    CHECK(strstr(e.field, "accessors[0].sparse.indices") != NULL);
    free(t);

    /* normalised UNSIGNED_BYTE weights: read the JOINTS_0 bytes (0,1,0,0) as weights
     * (0, 1/255, 0, 0), scaled to (0, 1, 0, 0) with a warning; vertex 0 patched to all
     * zeros gets weight 1 on its first joint, a second warning */
    tiny_buffer(b);
    b[OFF_JNT + 1] = 0;
    base = tiny_gltf(b);
    t = replace(base, "\"WEIGHTS_0\":2", "\"WEIGHTS_0\":1");
    free(base);
    mn_warnings w = {0};
    CHECK(t && read_text(t, &g, &w, &e) == MN_OK);
    if (g.nverts == 3) {
        CHECK_NEAR(g.vweight[0], 1, 0);
        CHECK(g.vjoint[0] == 0);
        CHECK_NEAR(g.vweight[4 + 1], 1, 1e-15);
        CHECK(w.count == 2);
        CHECK(strstr(w.first, "accessors[1]") != NULL);
    }
    mn_gltf_free(&g);
    free(t);
}

/* Accessor decoding, for every componentType, normalised or not, packed or strided
 * (glTF 3.11: c/255, c/65535, max(c/127, -1), max(c/32767, -1)). Buffer bytes:
 * 81 7F 00 FF 01 80 FF 7F 00 00 80 3F. */
static void test_accessor_types(void) {
    const unsigned char bytes[12] = {0x81, 0x7F, 0x00, 0xFF, 0x01, 0x80,
                                     0xFF, 0x7F, 0x00, 0x00, 0x80, 0x3F};
    char* enc = b64(bytes, sizeof bytes);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"uri\":\"data:application/"
             "octet-stream;base64,%s\",\"byteLength\":12}],"
             "\"bufferViews\":[{\"buffer\":0,\"byteLength\":12},{\"buffer\":0,\"byteLength\":12,"
             "\"byteStride\":4}],"
             "\"accessors\":["
             "{\"bufferView\":0,\"componentType\":5120,\"count\":2,\"type\":\"SCALAR\","
             "\"normalized\":true},"
             "{\"bufferView\":0,\"byteOffset\":2,\"componentType\":5121,\"count\":2,\"type\":"
             "\"SCALAR\",\"normalized\":true},"
             "{\"bufferView\":0,\"byteOffset\":4,\"componentType\":5122,\"count\":2,\"type\":"
             "\"SCALAR\",\"normalized\":true},"
             "{\"bufferView\":0,\"byteOffset\":4,\"componentType\":5123,\"count\":2,\"type\":"
             "\"SCALAR\",\"normalized\":true},"
             "{\"bufferView\":0,\"byteOffset\":8,\"componentType\":5125,\"count\":1,\"type\":"
             "\"SCALAR\"},"
             "{\"bufferView\":0,\"byteOffset\":8,\"componentType\":5126,\"count\":1,\"type\":"
             "\"SCALAR\"},"
             "{\"bufferView\":0,\"componentType\":5120,\"count\":2,\"type\":\"SCALAR\"},"
             "{\"bufferView\":1,\"componentType\":5121,\"count\":3,\"type\":\"SCALAR\"},"
             "{\"bufferView\":1,\"componentType\":5121,\"count\":4,\"type\":\"SCALAR\"},"
             "{\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\"}]}",
             enc);
    free(enc);
    struct {
        int acc;
        gltf_norm norm;
        int n;
        double v[3];
        mn_status st;
    } cases[] = {
        {0, GLTF_NORM_AS_STORED, 2, {-1, 1}, MN_OK},
        {1, GLTF_NORM_AS_STORED, 2, {0, 1}, MN_OK},
        {2, GLTF_NORM_AS_STORED, 2, {-1, 1}, MN_OK},
        {3, GLTF_NORM_AS_STORED, 2, {32769.0 / 65535, 32767.0 / 65535}, MN_OK},
        {3, GLTF_NORM_RAW, 2, {32769, 32767}, MN_OK},
        {4, GLTF_NORM_RAW, 1, {1065353216.0}, MN_OK},
        {5, GLTF_NORM_ALWAYS, 1, {1.0}, MN_OK}, /* floats are never scaled */
        {6, GLTF_NORM_AS_STORED, 2, {-127, 127}, MN_OK},
        {6, GLTF_NORM_ALWAYS, 2, {-1, 1}, MN_OK},
        {7, GLTF_NORM_RAW, 3, {0x81, 0x01, 0x00}, MN_OK}, /* every 4th byte */
        {8, GLTF_NORM_RAW, 0, {0}, MN_ERR_PARSE},         /* the 4th element is past the view */
        {9, GLTF_NORM_RAW, 2, {0, 0}, MN_OK},             /* no bufferView: zeros */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gltf_ctx c;
        mn_error e;
        memset(&c, 0, sizeof c);
        c.name = "acc.gltf";
        c.dir = calloc(1, 1);
        c.err = &e;
        CHECK(mn_gltf_parse_container(&c, (const unsigned char*)text, strlen(text)) == MN_OK);
        double* out = NULL;
        int n = -1, ct = 0;
        mn_status st = mn_gltf_read_accessor(&c, cases[i].acc, "test", 1, GLTF_CT_ANY,
                                             cases[i].norm, &out, &n, &ct);
        CHECK(st == cases[i].st);
        if (st == MN_OK) {
            CHECK(n == cases[i].n);
            for (int k = 0; k < n && k < 3; k++)
                CHECK_NEAR(out[k], cases[i].v[k], 1e-15);
        } else {
            CHECK(out == NULL && strcmp(e.field, "accessors[8].count") == 0);
        }
        free(out);
        mn_gltf_ctx_free(&c);
    }
}

/* Joint names: a repeated node name is made unique (a warning), an unnamed joint is
 * "joint<i>", and the model is built with those names. */
static void test_tiny_names(void) {
    char* base = tiny_gltf(NULL);
    char* t = replace(base, "\"name\":\"knee\"", "\"name\":\"hip\"");
    mn_gltf g;
    mn_error e;
    mn_warnings w = {0};
    CHECK(t && read_text(t, &g, &w, &e) == MN_OK);
    free(t);
    if (g.njoints == 2) {
        CHECK(strcmp(g.joint_name[0], "hip") == 0 && strcmp(g.joint_name[1], "hip_1") == 0);
        CHECK(w.count == 1 && strstr(w.first, "skins[0]") && strstr(w.first, "repeated"));
        mn_model* m = mn_gltf_model(&g, &e);
        CHECK(m && mn_model_find_joint(m, "hip_1") >= 0);
        mn_model_destroy(m);
    }
    mn_gltf_free(&g);
    t = replace(base, "\"name\":\"hip\",", "");
    CHECK(t && read_text(t, &g, NULL, &e) == MN_OK);
    free(t);
    if (g.njoints == 2) CHECK(strcmp(g.joint_name[0], "joint0") == 0);
    mn_gltf_free(&g);
    free(base);
}

/* Primitives are concatenated (the second one's triangles index its own vertices, moved
 * past the first's); a primitive without indices is a list of whole triangles. */
static void test_tiny_primitives(void) {
    char* base = tiny_gltf(NULL);
    char* t =
        replace(base, "\"mode\":4}]",
                "\"mode\":4},{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2}}]");
    mn_gltf g;
    mn_error e;
    CHECK(t && read_text(t, &g, NULL, &e) == MN_OK);
    free(t);
    CHECK(g.nverts == 6 && g.ntris == 2);
    if (g.ntris == 2) {
        for (int k = 0; k < 3; k++)
            CHECK(g.tris[k] == k && g.tris[3 + k] == 3 + k);
        for (int k = 0; k < 9; k++)
            CHECK(g.rest_pos[9 + k] == g.rest_pos[k]);
        for (int k = 0; k < 12; k++)
            CHECK(g.vweight[12 + k] == g.vweight[k] && g.vjoint[12 + k] == g.vjoint[k]);
    }
    mn_gltf_free(&g);
    t = replace(base, "\"indices\":3,", "");
    CHECK(t && read_text(t, &g, NULL, &e) == MN_OK);
    free(t);
    CHECK(g.nverts == 3 && g.ntris == 1 && g.tris && g.tris[0] == 0 && g.tris[1] == 1 &&
          g.tris[2] == 2);
    mn_gltf_free(&g);
    free(base);
}

/* Without inverseBindMatrices the skinning matrices are the joints' world transforms. */
static void test_tiny_no_inverse_bind(void) {
    char* base = tiny_gltf(NULL);
    char* t = replace(base, ",\"inverseBindMatrices\":7", "");
    free(base);
    mn_gltf g;
    mn_error e;
    CHECK(t && read_text(t, &g, NULL, &e) == MN_OK);
    free(t);
    if (g.njoints != 2) return;
    double W[24], S[24];
    CHECK(mn_gltf_sample(&g, 0, 0.3, W) == MN_OK);
    mn_gltf_skin_matrices(&g, W, S);
    for (int k = 0; k < 24; k++)
        CHECK_NEAR(S[k], W[k], 0);
    mn_gltf_free(&g);
}

/* ---- the marionette model ------------------------------------------------------------- */

/* mn_gltf_model's FK at q0 puts every joint where mn_gltf_sample puts it at rest, for
 * every sample model: positions to 1e-9 relative, rotations (scale divided out). */
static void test_model_fk(void) {
    for (int i = 0; i < NSAMPLES; i++) {
        char path[512];
        snprintf(path, sizeof path, SKINNED "%s", samples[i].file);
        mn_gltf g;
        mn_error e;
        if (mn_gltf_read(path, &g, NULL, NULL) != MN_OK) {
            CHECK(0);
            continue;
        }
        mn_model* m = mn_gltf_model(&g, &e);
        CHECK(m != NULL);
        if (!m) {
            fprintf(stderr, "%s\n", e.message);
            mn_gltf_free(&g);
            continue;
        }
        CHECK(m->njoint == g.njoints);
        CHECK(m->nroot >= 1);
        mn_data* d = mn_data_create(m, 0);
        double* W = malloc(sizeof(double) * 12 * (size_t)g.njoints);
        CHECK(mn_gltf_sample(&g, -1, -1, W) == MN_OK);
        mn_fk(m, d);
        double size = 1;
        for (int j = 0; j < g.njoints; j++)
            size = fmax(size, fabs(W[12 * j + 3]) + fabs(W[12 * j + 7]) + fabs(W[12 * j + 11]));
        for (int j = 0; j < g.njoints; j++) {
            int mj = mn_model_find_joint(m, g.joint_name[j]);
            CHECK(mj >= 0);
            if (mj < 0) continue;
            /* roots are FREE; so is a joint some animation moves in its parent's frame, every
             * other joint is a BALL: its distance to its parent never changes */
            int par = g.joint_parent[j];
            CHECK(par >= 0 ? (m->jnt_type[mj] == MN_JOINT_BALL || m->jnt_type[mj] == MN_JOINT_FREE)
                           : m->jnt_type[mj] == MN_JOINT_FREE);
            if (par >= 0 && m->jnt_type[mj] == MN_JOINT_BALL) {
                double W2[12 * 64];
                double r0 =
                    hypot(hypot(W[12 * j + 3] - W[12 * par + 3], W[12 * j + 7] - W[12 * par + 7]),
                          W[12 * j + 11] - W[12 * par + 11]);
                for (int a = 0; a < g.nanims && g.njoints <= 64; a++)
                    for (int k = 0; k <= 4; k++) {
                        CHECK(mn_gltf_sample(&g, a, g.anims[a].duration * k / 4, W2) == MN_OK);
                        double r = hypot(hypot(W2[12 * j + 3] - W2[12 * par + 3],
                                               W2[12 * j + 7] - W2[12 * par + 7]),
                                         W2[12 * j + 11] - W2[12 * par + 11]);
                        CHECK_NEAR(r, r0, 1e-6 * size);
                    }
            }
            const double* w = W + 12 * j;
            CHECK_NEAR(d->xf[mj].p.x, w[3], 1e-9 * size);
            CHECK_NEAR(d->xf[mj].p.y, w[7], 1e-9 * size);
            CHECK_NEAR(d->xf[mj].p.z, w[11], 1e-9 * size);
            for (int col = 0; col < 3; col++) {
                double n =
                    sqrt(w[col] * w[col] + w[4 + col] * w[4 + col] + w[8 + col] * w[8 + col]);
                for (int r = 0; r < 3; r++)
                    CHECK_NEAR(d->xf[mj].R.m[3 * r + col], w[4 * r + col] / n, 1e-6);
            }
            /* the axis points along the bone to the first child at a distinct position */
            mn_vec3 axis = mn_mat3_mulv(&d->xf[mj].R, m->jnt_axis[mj]);
            for (int c = 0; c < g.njoints; c++) {
                if (g.joint_parent[c] != j) continue;
                mn_vec3 bone =
                    mn_v3(W[12 * c + 3] - w[3], W[12 * c + 7] - w[7], W[12 * c + 11] - w[11]);
                double len = mn_vec3_norm(bone);
                if (len < 1e-9 * size) continue;
                CHECK_NEAR(mn_vec3_dot(axis, bone) / len, 1.0, 1e-9);
                break;
            }
        }
        free(W);
        mn_data_destroy(d);
        mn_model_destroy(m);
        mn_gltf_free(&g);
    }
}

/* mn_gltf_motion: at every frame the model's FK turns each joint to its glTF joint's world
 * rotation and puts the roots at their world positions; with only rotations animated
 * (SimpleSkin, the synthetic "lin" knee rotation is STEP) every joint position matches. */
static void check_motion(const char* path, int anim, double fps, int all_positions) {
    mn_gltf g;
    mn_error e;
    if (mn_gltf_read(path, &g, NULL, NULL) != MN_OK) {
        CHECK(0);
        return;
    }
    mn_model* m = mn_gltf_model(&g, &e);
    mn_motion mo;
    CHECK(m && mn_gltf_motion(&g, m, anim, fps, &mo, &e) == MN_OK);
    if (!m || !mo.q) {
        fprintf(stderr, "%s: %s\n", path, e.message);
        mn_model_destroy(m);
        mn_gltf_free(&g);
        return;
    }
    double dur = g.anims[anim].duration;
    CHECK(mo.nq == m->nq && mo.nframes >= (int)(dur * fps) + 1);
    CHECK_NEAR(mo.frame_time, 1.0 / fps, 1e-15);
    mn_data* d = mn_data_create(m, 0);
    double* W = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    for (int f = 0; f < mo.nframes; f++) {
        double t = fmin(f / fps, dur);
        CHECK(mn_gltf_sample(&g, anim, t, W) == MN_OK);
        memcpy(d->q, mo.q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        double size = 1;
        for (int j = 0; j < g.njoints; j++)
            size = fmax(size, fabs(W[12 * j + 3]) + fabs(W[12 * j + 7]) + fabs(W[12 * j + 11]));
        for (int j = 0; j < g.njoints; j++) {
            int mj = mn_model_find_joint(m, g.joint_name[j]);
            const double* w = W + 12 * j;
            for (int col = 0; col < 3; col++) {
                double n =
                    sqrt(w[col] * w[col] + w[4 + col] * w[4 + col] + w[8 + col] * w[8 + col]);
                for (int r = 0; r < 3; r++)
                    CHECK_NEAR(d->xf[mj].R.m[3 * r + col], w[4 * r + col] / n, 1e-6);
            }
            if (all_positions || g.joint_parent[j] < 0) {
                CHECK_NEAR(d->xf[mj].p.x, w[3], 1e-9 * size);
                CHECK_NEAR(d->xf[mj].p.y, w[7], 1e-9 * size);
                CHECK_NEAR(d->xf[mj].p.z, w[11], 1e-9 * size);
            }
        }
        /* quaternion signs are continuous from frame to frame */
        if (f > 0)
            for (int j = 0; j < m->njoint; j++) {
                int a = m->jnt_qadr[j] + (m->jnt_type[j] == MN_JOINT_FREE ? 3 : 0);
                const double* q1 = mo.q + (size_t)f * (size_t)m->nq + a;
                const double* q0 = q1 - m->nq;
                CHECK(q1[0] * q0[0] + q1[1] * q0[1] + q1[2] * q0[2] + q1[3] * q0[3] >= 0);
            }
    }
    /* another skin's model is refused */
    mn_gltf other;
    const char* other_path = g.njoints == 19 ? SKINNED "Fox.glb" : SKINNED "CesiumMan.glb";
    CHECK(mn_gltf_read(other_path, &other, NULL, NULL) == MN_OK);
    mn_motion bad;
    CHECK(mn_gltf_motion(&other, m, 0, fps, &bad, &e) == MN_ERR_ARG && bad.q == NULL);
    mn_gltf_free(&other);
    mn_motion bad2;
    CHECK(mn_gltf_motion(&g, m, 0, 0, &bad2, &e) == MN_ERR_ARG && bad2.q == NULL);
    CHECK(mn_gltf_motion(&g, m, g.nanims, 30, &bad2, &e) == MN_ERR_ARG && bad2.q == NULL);
    free(W);
    mn_data_destroy(d);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    mn_gltf_free(&g);
}

static void test_motion(void) {
    check_motion(SKINNED "SimpleSkin.gltf", 0, 10, 1);
    check_motion(SKINNED "CesiumMan.glb", 0, 30, 0);
    check_motion(SKINNED "Fox.glb", 1, 24, 0);
    check_motion(SKINNED "RiggedFigure.glb", 0, 24, 0);
}

/* A node with scale 2 above the skeleton: glTF places the knee at 2 x its offset; the
 * model bakes that into the offset, so FK at rest agrees, and the frames stay rigid. */
static void test_model_scaled(void) {
    char* base = tiny_gltf(NULL);
    char* t = replace(base, "\"translation\":[0,0,5]", "\"translation\":[0,0,5],\"scale\":[2,2,2]");
    free(base);
    mn_gltf g;
    mn_error e;
    CHECK(t && read_text(t, &g, NULL, &e) == MN_OK);
    free(t);
    if (g.njoints != 2) return;
    double W[24];
    CHECK(mn_gltf_sample(&g, -1, -1, W) == MN_OK);
    CHECK_NEAR(W[12 + 3], 2, 0);
    CHECK_NEAR(W[12 + 11], 5, 0);
    mn_model* m = mn_gltf_model(&g, &e);
    CHECK(m != NULL);
    if (m) {
        mn_data* d = mn_data_create(m, 0);
        mn_fk(m, d);
        int knee = mn_model_find_joint(m, "knee");
        CHECK(knee >= 0);
        CHECK_NEAR(d->xf[knee].p.x, 2, 1e-12);
        CHECK_NEAR(d->xf[knee].p.z, 5, 1e-12);
        CHECK_NEAR(d->xf[knee].R.m[0], 1, 1e-12); /* rotation only: scale divided out */
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
    mn_gltf_free(&g);
    /* a mirrored frame cannot be a rigid joint */
    base = tiny_gltf(NULL);
    t = replace(base, "\"translation\":[0,0,5]", "\"translation\":[0,0,5],\"scale\":[-1,1,1]");
    free(base);
    CHECK(t && read_text(t, &g, NULL, &e) == MN_OK);
    free(t);
    CHECK(mn_gltf_model(&g, &e) == NULL && e.status == MN_ERR_UNSUPPORTED);
    mn_gltf_free(&g);
}

/* Sampling and skinning run without touching the heap (they may run in a time step). */
static void test_no_alloc(void) {
    mn_gltf g;
    if (mn_gltf_read(SKINNED "CesiumMan.glb", &g, NULL, NULL) != MN_OK) {
        CHECK(0);
        return;
    }
    double* W = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    double* S = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    double* P = malloc(sizeof(double) * 3 * (size_t)g.nverts);
    long before = mn_alloc_count();
    for (int k = 0; k < 20; k++) {
        CHECK(mn_gltf_sample(&g, 0, 0.1 * k, W) == MN_OK);
        mn_gltf_skin_matrices(&g, W, S);
        mn_gltf_skin_vertices(&g, S, P);
    }
    CHECK(mn_alloc_count() == before);
    for (int k = 0; k < 3 * g.nverts; k++)
        CHECK(isfinite(P[k]));
    free(W);
    free(S);
    free(P);
    mn_gltf_free(&g);
}

/* Files with a skeleton and no skinned mesh: a skin no node uses is read as the skeleton
 * (a warning); without any skin the default scene's node tree is the figure, leaves that
 * only carry a mesh left out; with nothing left, MN_ERR_NOTFOUND. */
static void check_fk_matches_sample(mn_gltf* g, int anim, double t) {
    mn_error e;
    mn_model* m = mn_gltf_model(g, &e);
    CHECK(m != NULL);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    double* W = malloc(sizeof(double) * 12 * (size_t)g->njoints);
    double* work = malloc(sizeof(double) * 16 * (size_t)g->njoints);
    CHECK(mn_gltf_state(g, m, anim, t, NULL, d->q, work, &e) == MN_OK);
    CHECK(mn_gltf_sample(g, anim, t, W) == MN_OK);
    mn_fk(m, d);
    for (int j = 0; j < g->njoints; j++) {
        int mj = mn_model_find_joint(m, g->joint_name[j]);
        CHECK(mj >= 0);
        CHECK_NEAR(d->xf[mj].p.x, W[12 * j + 3], 1e-12);
        CHECK_NEAR(d->xf[mj].p.y, W[12 * j + 7], 1e-12);
        CHECK_NEAR(d->xf[mj].p.z, W[12 * j + 11], 1e-12);
    }
    free(W);
    free(work);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_skeleton_only(void) {
    char* base = tiny_gltf(NULL);
    char* t = replace(base, "\"mesh\":0,\"skin\":0", "\"mesh\":0");
    mn_gltf g;
    mn_error e;
    mn_warnings w = {0};
    CHECK(t && read_text(t, &g, &w, &e) == MN_OK);
    CHECK(g.njoints == 2 && g.nverts == 0 && g.ntris == 0 && g.nanims == 3 && w.count >= 1);
    CHECK(strstr(w.first, "skins[0] read as a skeleton") != NULL);
    if (g.njoints == 2) check_fk_matches_sample(&g, 0, 0.5); /* "lin": the knee translates */
    mn_gltf_free(&g);
    /* no skin at all: nodes hip, knee, helper (node 0 is a mesh leaf) */
    char* t2 =
        t ? replace(t, "\"skins\":[{\"joints\":[1,2],\"inverseBindMatrices\":7,\"skeleton\":3}],\n",
                    "")
          : NULL;
    CHECK(t2 && read_text(t2, &g, NULL, &e) == MN_OK);
    CHECK(g.njoints == 3 && g.nverts == 0);
    if (g.njoints == 3) {
        CHECK(!strcmp(g.joint_name[0], "hip") && !strcmp(g.joint_name[1], "knee") &&
              !strcmp(g.joint_name[2], "helper"));
        CHECK(g.joint_parent[0] == 2 && g.joint_parent[1] == 0 && g.joint_parent[2] == -1);
        for (int a = 0; a < 3; a++)
            check_fk_matches_sample(&g, a, 0.7);
    }
    mn_gltf_free(&g);
    /* the scene holds only the mesh node */
    char* t3 =
        t2 ? replace(t2, "\"scenes\":[{\"nodes\":[0,3]}]", "\"scenes\":[{\"nodes\":[0]}]") : NULL;
    memset(&g, 0x5A, sizeof g);
    CHECK(t3 && read_text(t3, &g, NULL, &e) == MN_ERR_NOTFOUND && g.priv == NULL);
    CHECK(strstr(e.message, "tiny.gltf") && !strcmp(e.field, "nodes"));
    free(base);
    free(t);
    free(t2);
    free(t3);
}

/* Key times: every channel's times merged; joints whose translation is animated are FREE. */
static void test_key_times_and_free_joints(void) {
    mn_gltf g;
    mn_error e;
    char* t = tiny_gltf(NULL);
    CHECK(read_text(t, &g, NULL, &e) == MN_OK);
    free(t);
    CHECK(g.nanims == 3);
    if (g.nanims != 3) return;
    CHECK(g.anims[0].nkeys == 3 && g.anims[0].key_times[0] == 0 && g.anims[0].key_times[2] == 2);
    CHECK(g.anims[1].nkeys == 2 && g.anims[1].key_times[1] == 2);
    CHECK(mn_gltf_find_anim(&g, "cubic") == 1 && mn_gltf_find_anim(&g, "none") == -1);
    mn_model* m = mn_gltf_model(&g, &e);
    CHECK(m != NULL);
    if (m) {
        CHECK(m->jnt_type[mn_model_find_joint(m, "hip")] == MN_JOINT_FREE);
        CHECK(m->jnt_type[mn_model_find_joint(m, "knee")] ==
              MN_JOINT_FREE); /* "lin" translates it */
        mn_model_destroy(m);
    }
    for (int a = 0; a < 3; a++)
        for (int k = 0; k <= 8; k++)
            check_fk_matches_sample(&g, a, 0.25 * k);
    /* sampling a state allocates nothing */
    m = mn_gltf_model(&g, &e);
    double q[64], work[32];
    long before = mn_alloc_count();
    for (int k = 0; k < 10; k++)
        CHECK(mn_gltf_state(&g, m, 0, 0.1 * k, k ? q : NULL, q, work, &e) == MN_OK);
    CHECK(mn_alloc_count() == before);
    CHECK(mn_gltf_state(&g, m, 3, 0, NULL, q, work, &e) == MN_ERR_ARG);
    CHECK(mn_gltf_state(&g, m, 0, NAN, NULL, q, work, &e) == MN_ERR_ARG);
    mn_model_destroy(m);
    mn_gltf_free(&g);
}

/* mn_gltf_motion_keys: evenly spaced keys give one frame per key (Fox's Walk); a long
 * animation with few uneven keys (0, 1 and 7.5e5 s) stays within 16 frames per key plus
 * 1024 instead of 30 Hz (2.25e7 frames), with a warning; mn_figure_read does the same. */
static void test_motion_keys(void) {
    mn_gltf g;
    mn_error e;
    CHECK(mn_gltf_read(SKINNED "Fox.glb", &g, NULL, &e) == MN_OK);
    mn_model* m = mn_gltf_model(&g, &e);
    int a = mn_gltf_find_anim(&g, "Walk");
    mn_motion mo;
    CHECK(m && a >= 0 && mn_gltf_motion_keys(&g, m, a, "Fox.glb", &mo, NULL, &e) == MN_OK);
    if (m && a >= 0 && mo.q) {
        CHECK(mo.nframes == g.anims[a].nkeys);
        double* q = malloc(sizeof(double) * (size_t)m->nq);
        double* work = malloc(sizeof(double) * 16 * (size_t)g.njoints);
        double worst = 0;
        for (int k = 0; k < mo.nframes; k++) {
            CHECK(mn_gltf_state(&g, m, a, g.anims[a].key_times[k],
                                k ? mo.q + (size_t)(k - 1) * m->nq : NULL, q, work, &e) == MN_OK);
            for (int i = 0; i < m->nq; i++)
                worst = fmax(worst, fabs(q[i] - mo.q[(size_t)k * m->nq + i]));
        }
        CHECK(worst < 1e-9);
        free(q);
        free(work);
        mn_motion_free(&mo);
    }
    CHECK(mn_gltf_motion_keys(&g, m, g.nanims, "Fox.glb", &mo, NULL, &e) == MN_ERR_ARG);
    mn_model_destroy(m);
    mn_gltf_free(&g);

    unsigned char b[TINY_LEN];
    tiny_buffer(b);
    const float t3 = 7.5e5f;
    put_f(b, OFF_TIME + 8, &t3, 1);
    char* text = tiny_gltf(b);
    mn_warnings w = {0};
    CHECK(read_text(text, &g, NULL, &e) == MN_OK);
    m = mn_gltf_model(&g, &e);
    CHECK(m && mn_gltf_motion_keys(&g, m, 0, "tiny.gltf", &mo, &w, &e) == MN_OK);
    CHECK(mo.nframes <= 16 * 3 + 1024 && mo.nframes > 3 && w.count == 1 &&
          strstr(w.first, "tiny.gltf"));
    mn_motion_free(&mo);
    mn_model_destroy(m);
    mn_gltf_free(&g);
    const char* path = mn_test_write_temp(".gltf", text, strlen(text));
    CHECK(path && mn_figure_read(path, &m, &mo, NULL, &e) == MN_OK && mo.nframes <= 16 * 3 + 1024);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    if (path) remove(path);
    free(text);
}

/* An animated scale on the hip: the knee (its child) becomes FREE and FK puts it where glTF
 * does at every time; the hip's own frame stays rigid (its rotation with the scale divided
 * out). */
static void test_animated_scale(void) {
    unsigned char b[TINY_LEN];
    tiny_buffer(b);
    const float sc[9] = {1, 1, 1, 1, 2, 1, 3, 2, 0.5f};
    put_f(b, OFF_TRA, sc, 9);
    char* base = tiny_gltf(b);
    char* t = replace(base, "{\"sampler\":0,\"target\":{\"node\":2,\"path\":\"translation\"}}",
                      "{\"sampler\":0,\"target\":{\"node\":1,\"path\":\"scale\"}}");
    mn_gltf g;
    mn_error e;
    CHECK(t && read_text(t, &g, NULL, &e) == MN_OK);
    free(base);
    free(t);
    if (g.njoints != 2) return;
    mn_model* m = mn_gltf_model(&g, &e);
    CHECK(m && m->jnt_type[mn_model_find_joint(m, "knee")] == MN_JOINT_FREE);
    mn_model_destroy(m);
    for (int k = 0; k <= 8; k++)
        check_fk_matches_sample(&g, 0, 0.25 * k);
    double W[24];
    CHECK(mn_gltf_sample(&g, 0, 1.5, W) == MN_OK);
    CHECK_NEAR(W[12 + 7] - W[7], 0,
               1e-12); /* knee at (1, 0, 0) scaled by the hip: (2, 2, 0.75) at 1.5 s */
    CHECK_NEAR(W[12 + 3] - W[3], 2, 1e-12);
    mn_gltf_free(&g);
}

/* ---- the writer ------------------------------------------------------------------------ */

/* Checks a .glb's structure: header (magic, version 2, length = file size), a JSON chunk and
 * a BIN chunk each a multiple of 4 bytes, every bufferView 4-aligned inside the buffer,
 * every accessor filling its bufferView exactly, and the min/max of every accessor that
 * has them (key times, positions) equal to the data's. Returns the number of problems. */
static int check_glb_structure(const unsigned char* f, size_t n) {
    int bad = 0;
    uint32_t h[5], c1[2] = {0, 0};
    if (n < 20) return 1;
    memcpy(h, f, 20);
    bad += h[0] != 0x46546C67u || h[1] != 2 || h[2] != n || h[3] % 4 != 0 || h[4] != 0x4E4F534Au;
    size_t jl = h[3], boff = 20 + jl;
    if (boff + 8 <= n) {
        memcpy(c1, f + boff, 8);
        bad += c1[0] % 4 != 0 || c1[1] != 0x004E4942u || boff + 8 + c1[0] != n;
    }
    const unsigned char* bin = f + boff + 8;
    char* json = malloc(jl + 1);
    memcpy(json, f + 20, jl);
    json[jl] = 0;
    cJSON* root = cJSON_Parse(json);
    free(json);
    bad += root == NULL;
    if (!root) return bad;
    const cJSON* buf = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "buffers"), 0);
    double blen = buf ? cJSON_GetObjectItem(buf, "byteLength")->valuedouble : 0;
    bad += buf && blen > c1[0];
    const cJSON* views = cJSON_GetObjectItem(root, "bufferViews");
    const cJSON* acc;
    int k = 0;
    cJSON_ArrayForEach(acc, cJSON_GetObjectItem(root, "accessors")) {
        const cJSON* v =
            cJSON_GetArrayItem(views, (int)cJSON_GetObjectItem(acc, "bufferView")->valuedouble);
        double off = cJSON_GetObjectItem(v, "byteOffset")->valuedouble,
               len = cJSON_GetObjectItem(v, "byteLength")->valuedouble;
        int ct = (int)cJSON_GetObjectItem(acc, "componentType")->valuedouble;
        int count = (int)cJSON_GetObjectItem(acc, "count")->valuedouble;
        const char* type = cJSON_GetObjectItem(acc, "type")->valuestring;
        int nc = !strcmp(type, "SCALAR") ? 1
                 : !strcmp(type, "VEC3") ? 3
                 : !strcmp(type, "VEC4") ? 4
                                         : 16;
        int cs = ct == 5126 || ct == 5125 ? 4 : ct == 5123 ? 2 : 1;
        bad += fmod(off, 4) != 0 || off + len > blen || len != (double)count * nc * cs;
        const cJSON* mn = cJSON_GetObjectItem(acc, "min");
        const cJSON* mx = cJSON_GetObjectItem(acc, "max");
        if (mn && mx && ct == 5126 && off + len <= blen) {
            for (int c = 0; c < nc; c++) {
                float lo = 1e30f, hi = -1e30f;
                for (int e = 0; e < count; e++) {
                    float x;
                    memcpy(&x, bin + (size_t)off + 4 * ((size_t)e * nc + c), 4);
                    lo = fminf(lo, x), hi = fmaxf(hi, x);
                }
                bad += (float)cJSON_GetArrayItem(mn, c)->valuedouble != lo ||
                       (float)cJSON_GetArrayItem(mx, c)->valuedouble != hi;
            }
        }
        k++;
    }
    /* animation inputs carry min/max (glTF 3.11 requires them) */
    const cJSON* an = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "animations"), 0);
    const cJSON* sm;
    const cJSON* samplers = an ? cJSON_GetObjectItem(an, "samplers") : NULL;
    cJSON_ArrayForEach(sm, samplers) {
        const cJSON* a = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "accessors"),
                                            (int)cJSON_GetObjectItem(sm, "input")->valuedouble);
        bad += !cJSON_GetObjectItem(a, "min") || !cJSON_GetObjectItem(a, "max");
    }
    cJSON_Delete(root);
    return bad + (k == 0);
}

/* Size of a figure: the diagonal of its joints' bounding box in the state q (FK). */
static double figure_size(const mn_model* m, mn_data* d) {
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    mn_fk(m, d);
    for (int j = 0; j < m->njoint; j++) {
        const double* p = &d->xf[j].p.x;
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], p[k]), hi[k] = fmax(hi[k], p[k]);
    }
    return sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                (hi[2] - lo[2]) * (hi[2] - lo[2]));
}

/* BVH take -> .glb -> our reader: every frame's joint positions and rotations. */
static void test_write_bvh_take(void) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_error e;
    CHECK(mn_bvh_read(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", NULL, &m, &mo, NULL,
                      &e) == MN_OK);
    if (!m) return;
    char path[512];
    snprintf(path, sizeof path, "%s/walk.glb", mn_test_temp_dir());
    CHECK(mn_gltf_write(path, m, &mo, NULL, &e) == MN_OK);
    size_t n = 0;
    unsigned char* f = (unsigned char*)mn_test_read_file(path, &n);
    CHECK(f && check_glb_structure(f, n) == 0);
    free(f);
    mn_gltf g;
    CHECK(mn_gltf_read(path, &g, NULL, &e) == MN_OK);
    CHECK(g.njoints == m->njoint && g.nverts == 0 && g.nanims == 1);
    mn_data* d = mn_data_create(m, 0);
    double size = figure_size(m, d);
    double* W = malloc(sizeof(double) * 12 * (size_t)(g.njoints ? g.njoints : 1));
    int* map = malloc(sizeof(int) * (size_t)m->njoint);
    for (int j = 0; j < g.njoints; j++)
        map[j] = mn_model_find_joint(m, g.joint_name[j]);
    double worst_p = 0, worst_r = 0;
    if (g.nanims == 1) {
        CHECK(g.anims[0].nkeys == mo.nframes);
        CHECK_NEAR(g.anims[0].duration, (mo.nframes - 1) * mo.frame_time, 1e-6);
        for (int fr = 0; fr < mo.nframes && fr < g.anims[0].nkeys; fr++) {
            memcpy(d->q, mo.q + (size_t)fr * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
            mn_fk(m, d);
            CHECK(mn_gltf_sample(&g, 0, g.anims[0].key_times[fr], W) == MN_OK);
            for (int j = 0; j < g.njoints; j++) {
                if (map[j] < 0) continue;
                const mn_xform* X = &d->xf[map[j]];
                const double* w = W + 12 * j;
                worst_p = fmax(worst_p, fmax(fabs(X->p.x - w[3]),
                                             fmax(fabs(X->p.y - w[7]), fabs(X->p.z - w[11]))) /
                                            size);
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++)
                        worst_r = fmax(worst_r, fabs(X->R.m[3 * r + c] - w[4 * r + c]));
            }
        }
    }
    for (int j = 0; j < g.njoints; j++)
        CHECK(map[j] >= 0);
    CHECK(worst_p < 1e-6 && worst_r < 1e-6);
    printf("  walk -> glb -> reader, %d frames: worst position error %.2g of the figure size %.3g, "
           "rotation %.2g\n",
           mo.nframes, worst_p, size, worst_r);
    /* the figure alone: nodes, no animation */
    CHECK(mn_gltf_write(path, m, NULL, NULL, &e) == MN_OK);
    mn_gltf_free(&g);
    CHECK(mn_gltf_read(path, &g, NULL, &e) == MN_OK && g.nanims == 0 && g.njoints == m->njoint);
    mn_gltf_free(&g);
    /* a motion that does not fit, a non-finite state: refused, the file left as it was */
    f = (unsigned char*)mn_test_read_file(path, &n);
    mn_motion bad = mo;
    bad.nq = m->nq - 1;
    CHECK(mn_gltf_write(path, m, &bad, NULL, &e) == MN_ERR_ARG && strstr(e.message, "walk.glb"));
    double keep = mo.q[5];
    mo.q[5] = NAN;
    CHECK(mn_gltf_write(path, m, &mo, NULL, &e) == MN_ERR_ARG);
    mo.q[5] = keep;
    size_t n2 = 0;
    unsigned char* f2 = (unsigned char*)mn_test_read_file(path, &n2);
    CHECK(f && f2 && n == n2 && memcmp(f, f2, n) == 0);
    free(f);
    free(f2);
    char nodir[600];
    snprintf(nodir, sizeof nodir, "%s/no/such/dir/x.glb", mn_test_temp_dir());
    CHECK(mn_gltf_write(nodir, m, &mo, NULL, &e) == MN_ERR_IO);
    remove(path);
    free(W);
    free(map);
    mn_data_destroy(d);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

/* Fox (skinned, with translating joints) -> its Run, as many frames as keys -> .glb with the
 * skinned mesh -> our reader: mesh, weights and the skinned vertices at every frame. */
static void test_write_skinned(void) {
    mn_gltf g, h;
    mn_error e;
    if (mn_gltf_read(SKINNED "Fox.glb", &g, NULL, &e) != MN_OK) {
        CHECK(0);
        return;
    }
    mn_model* m = mn_gltf_model(&g, &e);
    int a = mn_gltf_find_anim(&g, "Run");
    CHECK(m && a >= 0);
    if (!m || a < 0) return;
    double fps = (g.anims[a].nkeys - 1) / g.anims[a].duration;
    mn_motion mo;
    CHECK(mn_gltf_motion(&g, m, a, fps, &mo, &e) == MN_OK && mo.nframes >= g.anims[a].nkeys);
    char path[512];
    snprintf(path, sizeof path, "%s/fox.glb", mn_test_temp_dir());
    CHECK(mn_gltf_write(path, m, &mo, &g, &e) == MN_OK);
    size_t n = 0;
    unsigned char* f = (unsigned char*)mn_test_read_file(path, &n);
    CHECK(f && check_glb_structure(f, n) == 0);
    free(f);
    CHECK(mn_gltf_read(path, &h, NULL, &e) == MN_OK);
    CHECK(h.nverts == g.nverts && h.ntris == g.ntris && h.njoints == g.njoints && h.nanims == 1);
    if (h.nverts == g.nverts && h.ntris == g.ntris && h.njoints == g.njoints && h.nanims == 1) {
        for (int k = 0; k < 3 * g.ntris; k++)
            CHECK(h.tris[k] == g.tris[k]);
        double worst_w = 0;
        for (int v = 0; v < g.nverts; v++)
            for (int k = 0; k < 4; k++) {
                CHECK(
                    !strcmp(h.joint_name[h.vjoint[4 * v + k]], g.joint_name[g.vjoint[4 * v + k]]) ||
                    g.vweight[4 * v + k] == 0);
                worst_w = fmax(worst_w, fabs(h.vweight[4 * v + k] - g.vweight[4 * v + k]));
            }
        CHECK(worst_w < 1e-6);
        size_t nv = (size_t)g.nverts;
        double *W = malloc(sizeof(double) * 12 * (size_t)g.njoints),
               *S = malloc(sizeof(double) * 12 * (size_t)g.njoints);
        double *P = malloc(sizeof(double) * 3 * nv), *Q = malloc(sizeof(double) * 3 * nv);
        double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300}, worst = 0;
        for (int fr = 0; fr < mo.nframes; fr++) {
            /* the motion's frame times (Run's keys are not evenly spaced) */
            double t = fr == mo.nframes - 1 ? g.anims[a].duration
                                            : fmin(fr * mo.frame_time, g.anims[a].duration);
            mn_gltf_sample(&g, a, t, W);
            mn_gltf_skin_matrices(&g, W, S);
            mn_gltf_skin_vertices(&g, S, P);
            mn_gltf_sample(&h, 0, h.anims[0].key_times[fr], W);
            mn_gltf_skin_matrices(&h, W, S);
            mn_gltf_skin_vertices(&h, S, Q);
            for (size_t k = 0; k < 3 * nv; k++) {
                worst = fmax(worst, fabs(P[k] - Q[k]));
                lo[k % 3] = fmin(lo[k % 3], P[k]), hi[k % 3] = fmax(hi[k % 3], P[k]);
            }
        }
        double size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                           (hi[2] - lo[2]) * (hi[2] - lo[2]));
        CHECK(worst < 1e-6 * size);
        printf("  Fox Run -> glb (skinned) -> reader, %d frames: worst vertex error %.2g of the "
               "size %.3g\n",
               mo.nframes, worst / size, size);
        free(W), free(S), free(P), free(Q);
    }
    mn_gltf_free(&h);
    /* a skin whose joints the model lacks */
    mn_gltf other;
    CHECK(mn_gltf_read(SKINNED "CesiumMan.glb", &other, NULL, &e) == MN_OK);
    CHECK(mn_gltf_write(path, m, &mo, &other, &e) == MN_ERR_ARG && !strcmp(e.field, "skin"));
    mn_gltf_free(&other);
    remove(path);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    mn_gltf_free(&g);
}

/* ---- malformed inputs ----------------------------------------------------------------- */

typedef struct bad_case {
    const char* what;
    const char* from; /* text replaced in the synthetic .gltf (NULL: patch the buffer) */
    const char* to;
    int patch_off;  /* byte offset into the buffer, -1 for none */
    uint32_t patch; /* 4 bytes written there */
    mn_status status;
    const char* field; /* expected in err.field */
} bad_case;

static const bad_case bad_cases[] = {
    {"invalid JSON", "\"nodes\":[{", "\"nodes\":[{{", -1, 0, MN_ERR_PARSE, "json"},
    {"top level not an object", "{\"asset\"", "[{\"asset\"", -1, 0, MN_ERR_PARSE, "header"},
    {"no asset", "\"asset\":{\"version\":\"2.0\"},", "", -1, 0, MN_ERR_PARSE, "asset"},
    {"glTF 1.0", "\"version\":\"2.0\"", "\"version\":\"1.0\"", -1, 0, MN_ERR_UNSUPPORTED,
     "asset.version"},
    {"required draco", "\"scene\":0,",
     "\"scene\":0,\"extensionsRequired\":[\"KHR_draco_mesh_compression\"],", -1, 0,
     MN_ERR_UNSUPPORTED, "extensionsRequired[0]"},
    {"accessors not an array", "\"accessors\":[", "\"accessors\":{\"node\":2},\"unused\":[", -1, 0,
     MN_ERR_PARSE, "accessors"},
    {"bufferViews not an array", "\"bufferViews\":[", "\"bufferViews\":{},\"unused\":[", -1, 0,
     MN_ERR_PARSE, "bufferViews"},
    {"accessor index out of range", "\"indices\":3", "\"indices\":30", -1, 0, MN_ERR_PARSE,
     "meshes[0].primitives[0].indices"},
    {"accessor past its bufferView",
     "\"byteOffset\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"",
     "\"byteOffset\":0,\"componentType\":5126,\"count\":50,\"type\":\"VEC3\"", -1, 0, MN_ERR_PARSE,
     "accessors[0].count"},
    {"bad componentType", "\"byteOffset\":0,\"componentType\":5126",
     "\"byteOffset\":0,\"componentType\":5127", -1, 0, MN_ERR_PARSE, "accessors[0].componentType"},
    {"float joints", "\"byteOffset\":36,\"componentType\":5121",
     "\"byteOffset\":36,\"componentType\":5126", -1, 0, MN_ERR_PARSE, "accessors[1].componentType"},
    {"wrong accessor type",
     "\"byteOffset\":48,\"componentType\":5126,\"count\":3,\"type\":\"VEC4\"",
     "\"byteOffset\":48,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"", -1, 0, MN_ERR_PARSE,
     "accessors[2].type"},
    {"joint index >= njoints", "\"joints\":[1,2]", "\"joints\":[1]", -1, 0, MN_ERR_PARSE,
     "accessors[1]"},
    {"NaN in a float accessor", NULL, NULL, OFF_POS + 4, 0x7FC00000u, MN_ERR_PARSE,
     "accessors[0].count"},
    {"infinity in the key times", NULL, NULL, OFF_TIME + 8, 0x7F800000u, MN_ERR_PARSE,
     "accessors[4].count"},
    {"negative weight", NULL, NULL, OFF_WGT + 16, 0xBF000000u, MN_ERR_PARSE, "accessors[2]"},
    {"vertex index past the primitive", NULL, NULL, OFF_IDX, 0x00070000u, MN_ERR_PARSE,
     "meshes[0].primitives[0].indices"},
    {"key times decrease", NULL, NULL, OFF_TIME + 4, 0x40400000u, MN_ERR_PARSE,
     "animations[0].samplers[0].input"},
    {"inverse bind not affine", NULL, NULL, OFF_IBM + 12, 0x3F800000u, MN_ERR_PARSE,
     "skins[0].inverseBindMatrices"},
    {"bad base64", "base64,", "base64,@@", -1, 0, MN_ERR_PARSE, "buffers[0].uri"},
    {"data URI not base64", "application/octet-stream;base64,", "text/plain,", -1, 0,
     MN_ERR_UNSUPPORTED, "buffers[0].uri"},
    {"missing buffer file", "data:application/octet-stream;base64,", "no-such-file.bin#", -1, 0,
     MN_ERR_IO, "buffers[0].uri"},
    {"absolute buffer path", "data:application/octet-stream;base64,", "/etc/", -1, 0,
     MN_ERR_UNSUPPORTED, "buffers[0].uri"},
    {"buffer shorter than byteLength", "\"byteLength\":520}],\n\"bufferViews",
     "\"byteLength\":521}],\n\"bufferViews", -1, 0, MN_ERR_PARSE, "buffers[0].byteLength"},
    {"bufferView past its buffer", "\"byteOffset\":0,\"byteLength\":408}",
     "\"byteOffset\":4,\"byteLength\":520}", -1, 0, MN_ERR_PARSE, "bufferViews[0].byteLength"},
    {"bad byteStride", "\"byteOffset\":0,\"byteLength\":408}",
     "\"byteOffset\":0,\"byteLength\":408,\"byteStride\":6}", -1, 0, MN_ERR_PARSE,
     "bufferViews[0].byteStride"},
    {"stride below element size", "\"byteOffset\":0,\"byteLength\":408}",
     "\"byteOffset\":0,\"byteLength\":408,\"byteStride\":4}", -1, 0, MN_ERR_PARSE,
     "accessors[7].count"}, /* the skin's matrices are read first */
    {"cycle in nodes", "\"translation\":[1,0,0]}", "\"translation\":[1,0,0],\"children\":[3]}", -1,
     0, MN_ERR_PARSE, "children"},
    {"node its own child", "\"translation\":[1,0,0]}", "\"translation\":[1,0,0],\"children\":[2]}",
     -1, 0, MN_ERR_PARSE, "nodes[2].children[0]"},
    {"node with two parents", "\"skin\":0}", "\"skin\":0,\"children\":[2]}", -1, 0, MN_ERR_PARSE,
     "children[0]"},
    {"child index out of range", "\"children\":[2]", "\"children\":[9]", -1, 0, MN_ERR_PARSE,
     "nodes[1].children[0]"},
    {"joint listed twice", "\"joints\":[1,2]", "\"joints\":[1,1]", -1, 0, MN_ERR_PARSE,
     "skins[0].joints[1]"},
    {"lines, not triangles", "\"mode\":4", "\"mode\":1", -1, 0, MN_ERR_UNSUPPORTED,
     "meshes[0].primitives[0].mode"},
    {"no JOINTS_0", "\"JOINTS_0\":1,", "", -1, 0, MN_ERR_PARSE, "attributes.JOINTS_0"},
    {"bad interpolation", "\"interpolation\":\"STEP\"", "\"interpolation\":\"SMOOTH\"", -1, 0,
     MN_ERR_PARSE, "animations[0].samplers[1].interpolation"},
    {"CUBICSPLINE with too few values", "\"interpolation\":\"LINEAR\"",
     "\"interpolation\":\"CUBICSPLINE\"", -1, 0, MN_ERR_PARSE, "animations[0].samplers[0].output"},
    {"sampler index out of range", "{\"sampler\":1,", "{\"sampler\":5,", -1, 0, MN_ERR_PARSE,
     "animations[0].channels[1].sampler"},
    {"animated matrix node", "\"name\":\"helper\",\"translation\":[0,0,5]",
     "\"name\":\"helper\",\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,5,1]", -1, 0, MN_ERR_PARSE,
     "animations[2].channels[0].target.node"},
    {"rotation not 4 numbers", "\"translation\":[1,0,0]}",
     "\"translation\":[1,0,0],\"rotation\":[0,0,1]}", -1, 0, MN_ERR_PARSE, "nodes[2].rotation"},
    {"count not an integer", "\"count\":2,\"type\":\"MAT4\"", "\"count\":2.5,\"type\":\"MAT4\"", -1,
     0, MN_ERR_PARSE, "accessors[7].count"},
    {"huge count, small data", "\"count\":2,\"type\":\"MAT4\"",
     "\"count\":268435456,\"type\":\"MAT4\"", -1, 0, MN_ERR_PARSE, "accessors[7].count"},
    {"huge count, no data",
     "{\"bufferView\":0,\"byteOffset\":200,\"componentType\":5126,\"count\":2,",
     "{\"componentType\":5126,\"count\":268435456,", -1, 0, MN_ERR_UNSUPPORTED,
     "accessors[7].count"},
    {"negative byteOffset", "\"byteOffset\":36,", "\"byteOffset\":-36,", -1, 0, MN_ERR_PARSE,
     "accessors[1].byteOffset"},
};

static void test_malformed_gltf(void) {
    int n = (int)(sizeof bad_cases / sizeof *bad_cases);
    CHECK(n >= 15);
    for (int i = 0; i < n; i++) {
        const bad_case* bc = &bad_cases[i];
        unsigned char b[TINY_LEN];
        tiny_buffer(b);
        if (bc->patch_off >= 0) memcpy(b + bc->patch_off, &bc->patch, 4);
        char* base = tiny_gltf(b);
        char* text = bc->from ? replace(base, bc->from, bc->to) : base;
        if (!text) {
            fprintf(stderr, "case '%s': pattern not found\n", bc->what);
            CHECK(0);
            free(base);
            continue;
        }
        mn_gltf g;
        mn_error e;
        memset(&g, 0x5A, sizeof g);
        mn_status s = read_text(text, &g, NULL, &e);
        int ok = s == bc->status && strstr(e.field, bc->field) && strstr(e.message, "tiny.gltf") &&
                 g.nverts == 0 && g.rest_pos == NULL && g.anims == NULL && g.priv == NULL;
        if (!ok)
            fprintf(stderr, "case '%s': got %s field '%s' message '%s'\n", bc->what,
                    mn_status_name(s), e.field, e.message);
        CHECK(ok);
        if (text != base) free(text);
        free(base);
    }
}

/* In a .gltf text an error also names the line of its field (the synthetic file has one
 * accessor per line from line 10 on); in a .glb the line is left out. */
static void test_error_lines(void) {
    struct {
        const char* from;
        const char* to;
        int line;
        const char* field;
    } cases[] = {
        {"\"byteOffset\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"",
         "\"byteOffset\":0,\"componentType\":5126,\"count\":50,\"type\":\"VEC3\"", 10,
         "accessors[0].count"},
        {"\"count\":2,\"type\":\"MAT4\"", "\"count\":2.5,\"type\":\"MAT4\"", 17,
         "accessors[7].count"},
        {"\"joints\":[1,2]", "\"joints\":[1,1]", 4, "skins[0].joints[1]"},
        {"\"name\":\"helper\",\"translation\":[0,0,5]",
         "\"name\":\"helper\",\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,5,1]", 7,
         "animations[2].channels[0].target.node"},
        {"\"nodes\":[{", "\"nodes\":[{{", 2, "json"},
    };
    char* base = tiny_gltf(NULL);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char* t = replace(base, cases[i].from, cases[i].to);
        CHECK(t != NULL);
        if (!t) continue;
        mn_gltf g;
        mn_error e;
        CHECK(read_text(t, &g, NULL, &e) != MN_OK);
        CHECK(strcmp(e.field, cases[i].field) == 0);
        CHECK(e.line == cases[i].line);
        char want[64];
        snprintf(want, sizeof want, "tiny.gltf:%d: %s: ", cases[i].line, cases[i].field);
        CHECK(strncmp(e.message, want, strlen(want)) == 0);
        if (e.line != cases[i].line) fprintf(stderr, "line case %zu: %s\n", i, e.message);
        free(t);
    }
    free(base);
    /* the same damage in a .glb: no line */
    size_t len;
    unsigned char* glb = tiny_glb(&len);
    char* p = strstr((char*)glb + 20, "\"joints\":[1,2]");
    CHECK(p != NULL);
    if (p) p[12] = '1';
    mn_gltf g;
    mn_error e;
    CHECK(mn_gltf_read_mem(glb, len, "tiny.glb", &g, NULL, &e) == MN_ERR_PARSE);
    CHECK(e.line == 0 && strcmp(e.field, "skins[0].joints[1]") == 0);
    free(glb);
}

/* GLB container damage: each with its status and field. */
static void test_malformed_glb(void) {
    size_t len;
    unsigned char* glb = tiny_glb(&len);
    unsigned char* d = malloc(len);
    mn_gltf g;
    mn_error e;
    struct {
        const char* what;
        size_t cut;
        int off;
        uint32_t val;
        mn_status st;
        const char* field;
    } cases[] = {
        {"truncated header", 10, -1, 0, MN_ERR_PARSE, "header"},
        {"truncated file", len / 2, -1, 0, MN_ERR_PARSE, "header.length"},
        {"bad magic", len, 0, 0x58546C67u, MN_ERR_PARSE, "header"},
        {"version 1", len, 4, 1, MN_ERR_UNSUPPORTED, "header.version"},
        {"JSON chunk length past the end", len, 12, 0x7FFFFFF0u, MN_ERR_PARSE, "chunks[0].length"},
        {"first chunk not JSON", len, 16, 0x004E4942u, MN_ERR_PARSE, "chunks[0].type"},
        {"BIN chunk too short for the buffer", len, -2, 400, MN_ERR_PARSE, "buffers[0].byteLength"},
        {"header.length ends inside a chunk header", len, 8, 0, MN_ERR_PARSE, "chunks[1]"},
    };
    uint32_t jlen;
    memcpy(&jlen, glb + 12, 4);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        memcpy(d, glb, len);
        size_t n = cases[i].cut;
        int off = cases[i].off;
        uint32_t v = cases[i].val;
        if (off == -2) {
            /* the BIN chunk says 400 bytes (and the header agrees): less than byteLength */
            off = (int)(20 + jlen);
            uint32_t total = 20 + jlen + 8 + v;
            memcpy(d + 8, &total, 4);
            n = total;
        }
        if (off == 8) v = 20 + jlen + 4; /* the file ends 4 bytes into the BIN chunk header */
        if (off >= 0) memcpy(d + off, &v, 4);
        mn_status s = mn_gltf_read_mem(d, n, "tiny.glb", &g, NULL, &e);
        int ok = s == cases[i].st && strstr(e.field, cases[i].field) &&
                 strstr(e.message, "tiny.glb") && g.nverts == 0;
        if (!ok)
            fprintf(stderr, "glb case '%s': got %s field '%s' message '%s'\n", cases[i].what,
                    mn_status_name(s), e.field, e.message);
        CHECK(ok);
    }
    /* every truncation of the file fails cleanly, none crashes */
    for (size_t n = 0; n < len; n += 7) {
        CHECK(mn_gltf_read_mem(glb, n, "tiny.glb", &g, NULL, &e) != MN_OK);
        CHECK(g.nverts == 0);
    }
    /* a missing file is an IO error naming it */
    CHECK(mn_gltf_read(SKINNED "no-such.glb", &g, NULL, &e) == MN_ERR_IO);
    CHECK(strstr(e.message, "no-such.glb") != NULL);
    CHECK(mn_gltf_read(NULL, &g, NULL, &e) == MN_ERR_ARG);
    free(d);
    free(glb);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_skeleton_only);
    RUN(test_key_times_and_free_joints);
    RUN(test_animated_scale);
    RUN(test_motion_keys);
    RUN(test_write_bvh_take);
    RUN(test_write_skinned);
    RUN(test_samples_load);
    RUN(test_fox_animations);
    RUN(test_samples_weights);
    RUN(test_samples_rest_is_bind);
    RUN(test_samples_keys);
    RUN(test_simpleskin_by_hand);
    RUN(test_tiny_sampling);
    RUN(test_tiny_containers);
    RUN(test_tiny_sparse_and_weights);
    RUN(test_accessor_types);
    RUN(test_tiny_no_inverse_bind);
    RUN(test_tiny_names);
    RUN(test_tiny_primitives);
    RUN(test_model_fk);
    RUN(test_model_scaled);
    RUN(test_motion);
    RUN(test_no_alloc);
    RUN(test_malformed_gltf);
    RUN(test_malformed_glb);
    RUN(test_error_lines);
    return mn_test_report();
}
