/* A skinned mesh's optional vertex attributes (glTF 2.0, 3.7.2.1): NORMAL and TEXCOORD_0
 * are read when every primitive has them and written back with keep_attributes: CesiumMan
 * (both), RiggedSimple (normals only) and Fox (texture coordinates only) read back with
 * the same normals (unit length, to single precision) and texture coordinates; without
 * the option the output has neither; a NORMAL that is not VEC3, or shorter than POSITION,
 * is an error naming the attribute. */
#include <marionette/gltf.h>
#include <marionette/io.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static void round_trip(const char* file, int has_n, int has_uv) {
    mn_gltf g, back;
    mn_error err;
    char out[512];
    snprintf(out, sizeof out, "%s/attrs.glb", mn_test_temp_dir());
    CHECK(mn_gltf_read(file, &g, NULL, &err) == MN_OK);
    CHECK((g.normal != NULL) == has_n && (g.uv != NULL) == has_uv);
    mn_model* m = mn_gltf_model(&g, &err);
    CHECK(m != NULL);
    if (!m) {
        mn_gltf_free(&g);
        return;
    }
    mn_gltf_write_options o = mn_gltf_write_default();
    o.keep_attributes = 1;
    CHECK(mn_gltf_write_ex(out, m, NULL, &g, &o, &err) == MN_OK);
    CHECK(mn_gltf_read(out, &back, NULL, &err) == MN_OK);
    CHECK(back.nverts == g.nverts);
    CHECK((back.normal != NULL) == has_n && (back.uv != NULL) == has_uv);
    double en = 0, eu = 0, unit = 0;
    for (int v = 0; back.normal && g.normal && v < g.nverts; v++) {
        const double *a = g.normal + 3 * v, *b = back.normal + 3 * v;
        double la = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        for (int k = 0; k < 3; k++)
            en = fmax(en, fabs(a[k] / la - b[k]));
        unit = fmax(unit, fabs(sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]) - 1));
    }
    for (int k = 0; back.uv && g.uv && k < 2 * g.nverts; k++)
        eu = fmax(eu, fabs(g.uv[k] - back.uv[k]));
    printf("  %s: %d vertices, normals to %.2g (unit to %.2g), uv to %.2g\n",
           strrchr(file, '/') + 1, g.nverts, en, unit, eu);
    CHECK(en < 1e-6 && unit < 1e-6 && eu < 1e-6);
    mn_gltf_free(&back);
    /* the default: neither */
    CHECK(mn_gltf_write(out, m, NULL, &g, &err) == MN_OK);
    CHECK(mn_gltf_read(out, &back, NULL, &err) == MN_OK);
    CHECK(back.normal == NULL && back.uv == NULL && back.nverts == g.nverts);
    mn_gltf_free(&back);
    mn_model_destroy(m);
    mn_gltf_free(&g);
}

static void test_round_trips(void) {
    round_trip(MN_DATA "/skinned/CesiumMan.glb", 1, 1);
    round_trip(MN_DATA "/skinned/RiggedSimple.glb", 1, 0);
    round_trip(MN_DATA "/skinned/Fox.glb", 0, 1);
}

/* A one-triangle skinned glTF with data: buffers; attrs is the attributes member. */
static const char* tri(const char* attrs) {
    static char text[4096];
    /* accessors: 0 POSITION (3 x VEC3), 1 JOINTS_0 (3 x VEC4 ubyte), 2 WEIGHTS_0
     * (3 x VEC4), 3 a VEC2 float (3), 4 a VEC3 float of 2 */
    snprintf(
        text, sizeof text,
        "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,1]}],"
        "\"nodes\":[{\"name\":\"root\"},{\"mesh\":0,\"skin\":0}],"
        "\"skins\":[{\"joints\":[0]}],"
        "\"meshes\":[{\"primitives\":[{\"attributes\":{%s}}]}],"
        "\"buffers\":[{\"byteLength\":140,\"uri\":\"data:application/octet-stream;base64,"
        /* 36 bytes positions, 12 joints, 48 weights, 24 uv, 24 normals(2) = 144: base64 */
        "%s\"}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":36},"
        "{\"buffer\":0,\"byteOffset\":36,\"byteLength\":12},"
        "{\"buffer\":0,\"byteOffset\":48,\"byteLength\":48},"
        "{\"buffer\":0,\"byteOffset\":96,\"byteLength\":24},"
        "{\"buffer\":0,\"byteOffset\":116,\"byteLength\":24}],"
        "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"},"
        "{\"bufferView\":1,\"componentType\":5121,\"count\":3,\"type\":\"VEC4\"},"
        "{\"bufferView\":2,\"componentType\":5126,\"count\":3,\"type\":\"VEC4\"},"
        "{\"bufferView\":3,\"componentType\":5126,\"count\":3,\"type\":\"VEC2\"},"
        "{\"bufferView\":4,\"componentType\":5126,\"count\":2,\"type\":\"VEC3\"}]}",
        attrs, "");
    return text;
}

static void test_malformed(void) {
    /* built from real bytes: positions of a triangle, joint 0, weight 1, uv, two normals */
    unsigned char bin[140];
    memset(bin, 0, sizeof bin);
    float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, w[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    float uv[6] = {0, 0, 1, 0, 0, 1}, nrm[5] = {0, 0, 1, 0, 0};
    memcpy(bin, pos, 36);
    memcpy(bin + 48, w, 48);
    memcpy(bin + 96, uv, 24);
    memcpy(bin + 116, nrm, 20);
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char enc[200];
    size_t k = 0;
    for (size_t i = 0; i < 140; i += 3) {
        unsigned v = (unsigned)bin[i] << 16 | (i + 1 < 140 ? (unsigned)bin[i + 1] << 8 : 0) |
                     (i + 2 < 140 ? bin[i + 2] : 0);
        enc[k++] = b64[v >> 18 & 63];
        enc[k++] = b64[v >> 12 & 63];
        enc[k++] = i + 1 < 140 ? b64[v >> 6 & 63] : '=';
        enc[k++] = i + 2 < 140 ? b64[v & 63] : '=';
    }
    enc[k] = 0;
    static const struct {
        const char* attrs;
        int ok;
        const char* want;
    } rows[] = {
        {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2,\"TEXCOORD_0\":3", 1, NULL},
        {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2,\"NORMAL\":3", 0,
         "meshes[0].primitives[0].attributes.NORMAL"},
        {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2,\"NORMAL\":4", 0,
         "meshes[0].primitives[0].attributes.NORMAL: 2 elements, POSITION has 3"},
        {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2,\"TEXCOORD_0\":0", 0,
         "meshes[0].primitives[0].attributes.TEXCOORD_0"},
        {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2,\"NORMAL\":9", 0, "NORMAL"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const char* t = tri(rows[r].attrs);
        /* put the encoded buffer in place of the empty one */
        char text[4096];
        const char* at = strstr(t, "base64,");
        size_t head = (size_t)(at - t) + 7;
        snprintf(text, sizeof text, "%.*s%s%s", (int)head, t, enc, at + 7);
        mn_gltf g;
        mn_error err;
        mn_status s = mn_gltf_read_mem(text, strlen(text), "tri.gltf", &g, NULL, &err);
        if (rows[r].ok) {
            CHECK(s == MN_OK && g.uv && !g.normal && g.uv[2] == 1);
        } else {
            if (s == MN_OK || !strstr(err.message, rows[r].want))
                printf("  row %zu: %s\n", r, s == MN_OK ? "read" : err.message);
            CHECK(s != MN_OK && strstr(err.message, rows[r].want));
        }
        mn_gltf_free(&g);
    }
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_round_trips);
    RUN(test_malformed);
    return mn_test_report();
}
