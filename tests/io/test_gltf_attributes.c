/* A skinned mesh's optional vertex attributes (glTF 2.0, 3.7.2.1): NORMAL and TEXCOORD_0
 * are read when every primitive has them and written back with keep_attributes: CesiumMan
 * (both), RiggedSimple (normals only) and Fox (texture coordinates only) read back with
 * the same normals (unit length, to single precision) and texture coordinates; without
 * the option the output has neither; a NORMAL that is not VEC3, or shorter than POSITION,
 * is an error naming the attribute. With keep_attributes the skinned mesh's material goes
 * along too, with its textures, samplers and images: CesiumMan's and the Fox's base colour
 * textures come out with the source image's bytes and media type; without the option the
 * output is byte for byte what a file without materials gives; a table of malformed
 * material, texture, sampler and image references is refused naming the field, and an
 * image past MN_GLTF_MAX_IMAGE_BYTES is refused naming it. */
#include <marionette/gltf.h>
#include <marionette/io.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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

/* The triangle's buffer, base64-encoded into enc (200 bytes): built from real bytes:
 * positions of a triangle, joint 0, weight 1, uv, two normals. */
static void tri_buffer(char* enc) {
    unsigned char bin[140];
    memset(bin, 0, sizeof bin);
    float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, w[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    float uv[6] = {0, 0, 1, 0, 0, 1}, nrm[5] = {0, 0, 1, 0, 0};
    memcpy(bin, pos, 36);
    memcpy(bin + 48, w, 48);
    memcpy(bin + 96, uv, 24);
    memcpy(bin + 116, nrm, 20);
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
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
}

static void test_malformed(void) {
    char enc[200];
    tri_buffer(enc);
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
        {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2,\"TEXCOORD_0\":3,\"TANGENT\":0", 0,
         "meshes[0].primitives[0].attributes.TANGENT"},
        {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2,\"TEXCOORD_0\":3,\"TANGENT\":2", 1, NULL},
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
            CHECK(s == MN_OK && (g.tangent != NULL) == (strstr(rows[r].attrs, "TANGENT") != NULL));
            if (g.tangent) CHECK(g.tangent[0] == 1 && g.tangent[4] == 1 && g.tangent[8] == 1);
        } else {
            if (s == MN_OK || !strstr(err.message, rows[r].want))
                printf("  row %zu: %s\n", r, s == MN_OK ? "read" : err.message);
            CHECK(s != MN_OK && strstr(err.message, rows[r].want));
        }
        mn_gltf_free(&g);
    }
}

/* ---- materials, textures and images ------------------------------------------------------ */

/* A .glb file's JSON (parsed) and BIN chunk (pointing into *file, which the caller frees). */
static cJSON* glb_parse(const char* path, char** file, const unsigned char** bin, size_t* bin_len) {
    size_t n = 0;
    *file = mn_test_read_file(path, &n);
    *bin = NULL;
    *bin_len = 0;
    if (!*file || n < 20) return NULL;
    const unsigned char* d = (const unsigned char*)*file;
    uint32_t jl, bl;
    memcpy(&jl, d + 12, 4);
    if (20 + (size_t)jl + 8 <= n) {
        memcpy(&bl, d + 20 + jl, 4);
        if (20 + (size_t)jl + 8 + bl <= n) {
            *bin = d + 28 + jl;
            *bin_len = bl;
        }
    }
    return cJSON_ParseWithLength(*file + 20, jl);
}

static int member_int(const cJSON* o, const char* key) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? (int)v->valuedouble : -1;
}

/* The base colour image of the first primitive's material: its bytes in the BIN chunk, its
 * media type and the material (NULL when any link is missing). */
static const unsigned char* base_color_image(const cJSON* j, const unsigned char* bin,
                                             size_t bin_len, size_t* len, const char** mime,
                                             const cJSON** material) {
    const cJSON* prim = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "meshes"), 0), "primitives"),
        0);
    const cJSON* mat = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "materials"),
                                          member_int(prim, "material"));
    *material = mat;
    const cJSON* pbr = cJSON_GetObjectItemCaseSensitive(mat, "pbrMetallicRoughness");
    const cJSON* bct = cJSON_GetObjectItemCaseSensitive(pbr, "baseColorTexture");
    const cJSON* tex = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "textures"),
                                          member_int(bct, "index"));
    const cJSON* img = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "images"),
                                          member_int(tex, "source"));
    const cJSON* view = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "bufferViews"),
                                           member_int(img, "bufferView"));
    const cJSON* mt = cJSON_GetObjectItemCaseSensitive(img, "mimeType");
    *mime = cJSON_IsString(mt) ? mt->valuestring : "";
    int off = member_int(view, "byteOffset"), n = member_int(view, "byteLength");
    if (!view || n < 0 || !bin) return NULL;
    if (off < 0) off = 0;
    if ((size_t)off + (size_t)n > bin_len) return NULL;
    *len = (size_t)n;
    return bin + off;
}

/* Written with keep_attributes: the material (name, factors) and its base colour image's
 * bytes and media type are the source's; read back and written again, still the same. */
static void material_kept(const char* file) {
    mn_gltf g;
    mn_error err;
    char out[512], again[512];
    snprintf(out, sizeof out, "%s/look.glb", mn_test_temp_dir());
    snprintf(again, sizeof again, "%s/look2.glb", mn_test_temp_dir());
    CHECK(mn_gltf_read(file, &g, NULL, &err) == MN_OK);
    mn_model* m = mn_gltf_model(&g, &err);
    CHECK(m != NULL);
    if (!m) {
        mn_gltf_free(&g);
        return;
    }
    mn_gltf_write_options o = mn_gltf_write_default();
    o.keep_attributes = 1;
    CHECK(mn_gltf_write_ex(out, m, NULL, &g, &o, &err) == MN_OK);
    mn_gltf back;
    CHECK(mn_gltf_read(out, &back, NULL, &err) == MN_OK);
    mn_model* mb = mn_gltf_model(&back, &err);
    CHECK(mb && mn_gltf_write_ex(again, mb, NULL, &back, &o, &err) == MN_OK);
    mn_model_destroy(mb);
    mn_gltf_free(&back);
    const char* files[3] = {file, out, again};
    cJSON* j[3];
    char* raw[3];
    const unsigned char* bin[3];
    size_t bl[3], len[3] = {0, 0, 0};
    const unsigned char* img[3];
    const char* mime[3];
    const cJSON* mat[3];
    for (int k = 0; k < 3; k++) {
        j[k] = glb_parse(files[k], &raw[k], &bin[k], &bl[k]);
        CHECK(j[k] != NULL);
        img[k] = base_color_image(j[k], bin[k], bl[k], &len[k], &mime[k], &mat[k]);
        CHECK(img[k] != NULL);
    }
    for (int k = 1; k < 3; k++) {
        CHECK(img[k] && img[0] && len[k] == len[0] && !memcmp(img[k], img[0], len[0]));
        CHECK(!strcmp(mime[k], mime[0]));
        const cJSON *pa = cJSON_GetObjectItemCaseSensitive(mat[0], "pbrMetallicRoughness"),
                    *pb = cJSON_GetObjectItemCaseSensitive(mat[k], "pbrMetallicRoughness");
        const char* keys[] = {"metallicFactor", "roughnessFactor"};
        for (int q = 0; q < 2; q++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(pa, keys[q]),
                        *b = cJSON_GetObjectItemCaseSensitive(pb, keys[q]);
            CHECK((a == NULL) == (b == NULL));
            if (a && b) CHECK(a->valuedouble == b->valuedouble);
        }
        const cJSON *na = cJSON_GetObjectItemCaseSensitive(mat[0], "name"),
                    *nb = cJSON_GetObjectItemCaseSensitive(mat[k], "name");
        CHECK(cJSON_IsString(na) && cJSON_IsString(nb) &&
              !strcmp(na->valuestring, nb->valuestring));
    }
    printf("  %s: material '%s', base colour %s of %zu bytes kept\n", strrchr(file, '/') + 1,
           cJSON_GetObjectItemCaseSensitive(mat[0], "name")
               ? cJSON_GetObjectItemCaseSensitive(mat[0], "name")->valuestring
               : "",
           mime[0], len[0]);
    for (int k = 0; k < 3; k++) {
        cJSON_Delete(j[k]);
        free(raw[k]);
    }
    remove(out);
    remove(again);
    mn_model_destroy(m);
    mn_gltf_free(&g);
}

static void test_materials_kept(void) {
    material_kept(MN_DATA "/skinned/CesiumMan.glb");
    material_kept(MN_DATA "/skinned/Fox.glb");
}

/* Without keep_attributes the output is byte for byte what the same file without any
 * material gives (its primitive's "material" blanked out in the JSON chunk). */
static void test_default_unchanged(void) {
    const char* files[] = {MN_DATA "/skinned/CesiumMan.glb", MN_DATA "/skinned/Fox.glb"};
    for (int f = 0; f < 2; f++) {
        size_t n = 0;
        char* data = mn_test_read_file(files[f], &n);
        CHECK(data != NULL);
        if (!data) continue;
        mn_gltf g, bare;
        mn_error err;
        CHECK(mn_gltf_read_mem(data, n, files[f], &g, NULL, &err) == MN_OK);
        /* blank "material":0 of the JSON chunk with spaces: same length, no material */
        uint32_t jl;
        memcpy(&jl, data + 12, 4);
        char* at = NULL;
        for (char* p = data + 20; p + 12 <= data + 20 + jl; p++)
            if (!memcmp(p, "\"material\":0", 12)) at = p;
        CHECK(at != NULL);
        if (at) {
            memset(at, ' ', 12);
            if (at[12] == ',')
                at[12] = ' ';
            else if (at[-1] == ',')
                at[-1] = ' ';
        }
        CHECK(mn_gltf_read_mem(data, n, files[f], &bare, NULL, &err) == MN_OK);
        mn_model* m = mn_gltf_model(&g, &err);
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/with.glb", mn_test_temp_dir());
        snprintf(b, sizeof b, "%s/bare.glb", mn_test_temp_dir());
        CHECK(m && mn_gltf_write(a, m, NULL, &g, &err) == MN_OK);
        CHECK(m && mn_gltf_write(b, m, NULL, &bare, &err) == MN_OK);
        size_t la = 0, lb = 0;
        char* fa = mn_test_read_file(a, &la);
        char* fb = mn_test_read_file(b, &lb);
        CHECK(fa && fb && la == lb && !memcmp(fa, fb, la));
        CHECK(fa && !strstr(fa + 20, "\"materials\"") && !strstr(fa + 20, "\"images\""));
        free(fa);
        free(fb);
        remove(a);
        remove(b);
        mn_model_destroy(m);
        mn_gltf_free(&g);
        mn_gltf_free(&bare);
        free(data);
    }
}

/* The one-triangle file of test_malformed with its buffer in place (with TEXCOORD_0), a
 * material on its primitive (prim: members added to the primitive) and top-level members
 * (top: materials, textures, samplers, images) added. */
static const char* tri_look(const char* enc, const char* prim, const char* top) {
    static char text[8192];
    char base[4096];
    const char* t = tri("\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2,\"TEXCOORD_0\":3");
    const char* at = strstr(t, "base64,");
    snprintf(base, sizeof base, "%.*s%s%s", (int)(at - t) + 7, t, enc, at + 7);
    const char* pe = strstr(base, "}}]}]"); /* the end of the attributes and the primitive */
    size_t bl = strlen(base);
    snprintf(text, sizeof text, "%.*s}%s%s%.*s%s}", (int)(pe - base), base, prim[0] ? "," : "",
             prim, (int)(bl - 1 - (size_t)(pe + 1 - base)), pe + 1, top);
    return text;
}

#define PNG "\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==\""
#define TEXS ",\"textures\":[{\"source\":0,\"sampler\":0}],\"samplers\":[{}]"
#define IMGS ",\"images\":[{\"uri\":" PNG "}]"
#define MAT(body) ",\"materials\":[" body "]"

static void test_look_malformed(void) {
    char enc[200];
    tri_buffer(enc);
    static const struct {
        const char *prim, *top;
        const char* want; /* NULL: read */
    } rows[] = {
        {"\"material\":0",
         MAT("{\"name\":\"m\",\"pbrMetallicRoughness\":{\"baseColorFactor\":[1,0.5,0,1],"
             "\"baseColorTexture\":{\"index\":0},\"metallicFactor\":0.25,\"roughnessFactor\":1,"
             "\"metallicRoughnessTexture\":{\"index\":0}},\"normalTexture\":{\"index\":0,"
             "\"scale\":-0.5},\"occlusionTexture\":{\"index\":0,\"strength\":0.5},"
             "\"emissiveTexture\":{\"index\":0},\"emissiveFactor\":[1,1,1],\"alphaMode\":"
             "\"MASK\",\"alphaCutoff\":0.25,\"doubleSided\":true}") TEXS IMGS,
         NULL},
        {"\"material\":1", MAT("{}"), "meshes[0].primitives[0].material: index 1 out of range"},
        {"\"material\":0", MAT("3"), "materials[0]: not an object"},
        {"\"material\":0", MAT("{\"pbrMetallicRoughness\":[]}"),
         "materials[0].pbrMetallicRoughness: not an object"},
        {"\"material\":0", MAT("{\"pbrMetallicRoughness\":{\"baseColorFactor\":[2,0,0,1]}}"),
         "materials[0].pbrMetallicRoughness.baseColorFactor: element 0"},
        {"\"material\":0", MAT("{\"pbrMetallicRoughness\":{\"metallicFactor\":\"1\"}}"),
         "materials[0].pbrMetallicRoughness.metallicFactor: not a finite number"},
        {"\"material\":0", MAT("{\"pbrMetallicRoughness\":{\"roughnessFactor\":1.5}}"),
         "materials[0].pbrMetallicRoughness.roughnessFactor"},
        {"\"material\":0",
         MAT("{\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":4}}}") TEXS IMGS,
         "materials[0].pbrMetallicRoughness.baseColorTexture.index: index 4 out of range"},
        {"\"material\":0", MAT("{\"pbrMetallicRoughness\":{\"baseColorTexture\":{}}}") TEXS IMGS,
         "materials[0].pbrMetallicRoughness.baseColorTexture.index: missing"},
        {"\"material\":0", MAT("{\"normalTexture\":{\"index\":0,\"texCoord\":-1}}") TEXS IMGS,
         "materials[0].normalTexture.texCoord"},
        {"\"material\":0", MAT("{\"occlusionTexture\":{\"index\":0,\"strength\":2}}") TEXS IMGS,
         "materials[0].occlusionTexture.strength: 2 out of range"},
        {"\"material\":0", MAT("{\"emissiveFactor\":[0,0]}"),
         "materials[0].emissiveFactor: not an array of 3 numbers"},
        {"\"material\":0", MAT("{\"alphaMode\":\"CLEAR\"}"),
         "materials[0].alphaMode: not OPAQUE, MASK or BLEND"},
        {"\"material\":0", MAT("{\"alphaMode\":3}"), "materials[0].alphaMode: not OPAQUE"},
        {"\"material\":0", MAT("{\"alphaCutoff\":-1}"), "materials[0].alphaCutoff"},
        {"\"material\":0", MAT("{\"doubleSided\":1}"), "materials[0].doubleSided: not a boolean"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") ",\"textures\":[{\"source\":3}]" IMGS,
         "textures[0].source: index 3 out of range"},
        {"\"material\":0", MAT("{\"emissiveTexture\":{\"index\":0}}") ",\"textures\":[7]" IMGS,
         "textures[0]: not an object"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") ",\"textures\":[{\"source\":0,\"sampler\":0}],"
                                                    "\"samplers\":[{\"magFilter\":9986}]" IMGS,
         "samplers[0].magFilter: not a glTF sampler value"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") ",\"textures\":[{\"source\":0,\"sampler\":0}],"
                                                    "\"samplers\":[{\"wrapS\":1}]" IMGS,
         "samplers[0].wrapS"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS
         ",\"images\":[{\"uri\":" PNG ",\"bufferView\":0,\"mimeType\":\"image/png\"}]",
         "images[0].uri: both uri and bufferView given"},
        {"\"material\":0", MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS ",\"images\":[{}]",
         "images[0].bufferView: neither uri nor bufferView"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS
         ",\"images\":[{\"bufferView\":9,\"mimeType\":\"image/png\"}]",
         "images[0].bufferView: index 9 out of range"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS ",\"images\":[{\"bufferView\":0}]",
         "images[0].mimeType: missing"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS ",\"images\":[{\"uri\":" PNG
                                                         ",\"mimeType\":\"image/gif\"}]",
         "images[0].mimeType: 'image/gif'"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS ",\"images\":[{\"uri\":" PNG
                                                         ",\"mimeType\":\"image/jpeg\"}]",
         "images[0]: mimeType says image/jpeg, the bytes are image/png"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS
         ",\"images\":[{\"bufferView\":0,\"mimeType\":\"image/png\"}]",
         "images[0]: not a PNG or JPEG image"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS
         ",\"images\":[{\"uri\":\"data:image/png;base64,@@@@\"}]",
         "images[0].uri: invalid base64"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS ",\"images\":[{\"uri\":\"../up.png\"}]",
         "images[0].uri"},
        {"\"material\":0",
         MAT("{\"emissiveTexture\":{\"index\":0}}") TEXS ",\"images\":[{\"uri\":7}]",
         "images[0].uri: not a string"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const char* text = tri_look(enc, rows[r].prim, rows[r].top);
        mn_gltf g;
        mn_error err;
        mn_status s = mn_gltf_read_mem(text, strlen(text), "look.gltf", &g, NULL, &err);
        int ok = rows[r].want ? s != MN_OK && strstr(err.message, rows[r].want) &&
                                    !strncmp(err.message, "look.gltf", 9)
                              : s == MN_OK;
        if (!ok) printf("  row %zu: %s\n", r, s == MN_OK ? "read" : err.message);
        CHECK(ok);
        mn_gltf_free(&g);
    }
    /* the valid row written and read back keeps every member it had */
    mn_gltf g;
    mn_error err;
    const char* text = tri_look(enc, rows[0].prim, rows[0].top);
    CHECK(mn_gltf_read_mem(text, strlen(text), "look.gltf", &g, NULL, &err) == MN_OK);
    mn_model* m = mn_gltf_model(&g, &err);
    char out[512];
    snprintf(out, sizeof out, "%s/tri_look.glb", mn_test_temp_dir());
    mn_gltf_write_options o = mn_gltf_write_default();
    o.keep_attributes = 1;
    CHECK(m && mn_gltf_write_ex(out, m, NULL, &g, &o, &err) == MN_OK);
    char* raw;
    const unsigned char* bin;
    size_t bl;
    cJSON* j = glb_parse(out, &raw, &bin, &bl);
    char* printed =
        j ? cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(j, "materials")) : NULL;
    CHECK(printed &&
          !strcmp(printed,
                  "[{\"name\":\"m\",\"pbrMetallicRoughness\":{\"baseColorFactor\":[1,0.5,0,1],"
                  "\"baseColorTexture\":{\"index\":0},\"metallicFactor\":0.25,"
                  "\"roughnessFactor\":1,\"metallicRoughnessTexture\":{\"index\":0}},"
                  "\"normalTexture\":{\"index\":0,\"scale\":-0.5},\"occlusionTexture\":{"
                  "\"index\":0,\"strength\":0.5},\"emissiveTexture\":{\"index\":0},"
                  "\"emissiveFactor\":[1,1,1],\"alphaMode\":\"MASK\",\"alphaCutoff\":0.25,"
                  "\"doubleSided\":true}]"));
    if (printed && !strstr(printed, "doubleSided\":true}]")) printf("  %s\n", printed);
    cJSON_free(printed);
    cJSON_Delete(j);
    free(raw);
    remove(out);
    mn_model_destroy(m);
    mn_gltf_free(&g);
    /* an image file that cannot be read is a warning, not an error: the figure still reads */
    mn_warnings w = {0};
    text = tri_look(enc, "\"material\":0",
                    MAT("{\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":0}}}") TEXS
                    ",\"images\":[{\"uri\":\"no_such_texture.png\"}]");
    CHECK(mn_gltf_read_mem(text, strlen(text), "look.gltf", &g, &w, &err) == MN_OK);
    CHECK(w.count >= 1 && strstr(w.first, "images[0].uri: image not kept"));
    mn_gltf_free(&g);
}

/* An image larger than MN_GLTF_MAX_IMAGE_BYTES is refused, naming it: a .glb in memory
 * whose BIN chunk holds the triangle and a bufferView one byte past the cap. */
static void test_image_cap(void) {
    size_t cap = MN_GLTF_MAX_IMAGE_BYTES, bin_len = cap + 4;
    char json[2048];
    int jl = snprintf(
        json, sizeof json,
        "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,1]}],"
        "\"nodes\":[{\"name\":\"root\"},{\"mesh\":0,\"skin\":0}],\"skins\":[{\"joints\":[0]}],"
        "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":1,"
        "\"WEIGHTS_0\":2,\"TEXCOORD_0\":3},\"material\":0}]}],\"materials\":[{"
        "\"pbrMetallicRoughness\":{"
        "\"baseColorTexture\":{\"index\":0}}}],\"textures\":[{\"source\":0}],"
        "\"images\":[{\"bufferView\":3,\"mimeType\":\"image/png\"}],"
        "\"buffers\":[{\"byteLength\":%zu}],\"bufferViews\":[{\"buffer\":0,\"byteLength\":36},"
        "{\"buffer\":0,\"byteOffset\":36,\"byteLength\":12},{\"buffer\":0,\"byteOffset\":48,"
        "\"byteLength\":48},{\"buffer\":0,\"byteLength\":%zu}],\"accessors\":[{\"bufferView\":0,"
        "\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"},{\"bufferView\":1,"
        "\"componentType\":5121,\"count\":3,\"type\":\"VEC4\"},{\"bufferView\":2,"
        "\"componentType\":5126,\"count\":3,\"type\":\"VEC4\"},{\"bufferView\":0,"
        "\"componentType\":5126,\"count\":3,\"type\":\"VEC2\"}]}",
        bin_len, cap + 1);
    size_t jpad = ((size_t)jl + 3) & ~(size_t)3, total = 12 + 8 + jpad + 8 + bin_len;
    unsigned char* glb = calloc(1, total);
    CHECK(glb != NULL);
    if (!glb) return;
    uint32_t h[5] = {0x46546C67u, 2, (uint32_t)total, (uint32_t)jpad, 0x4E4F534Au};
    memcpy(glb, h, 20);
    memset(glb + 20, ' ', jpad);
    memcpy(glb + 20, json, (size_t)jl);
    uint32_t c1[2] = {(uint32_t)bin_len, 0x004E4942u};
    memcpy(glb + 20 + jpad, c1, 8);
    unsigned char* bin = glb + 28 + jpad;
    float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, w[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    memcpy(bin, pos, 36);
    memcpy(bin + 48, w, 48);
    mn_gltf g;
    mn_error err;
    mn_status s = mn_gltf_read_mem(glb, total, "big.glb", &g, NULL, &err);
    if (s == MN_OK || !strstr(err.message, "images[0].bufferView")) printf("  %s\n", err.message);
    CHECK(s != MN_OK && strstr(err.message, "big.glb") &&
          strstr(err.message, "images[0].bufferView: 67108865 bytes: an image may have at most"));
    mn_gltf_free(&g);
    free(glb);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_round_trips);
    RUN(test_malformed);
    RUN(test_materials_kept);
    RUN(test_default_unchanged);
    RUN(test_look_malformed);
    RUN(test_image_cap);
    return mn_test_report();
}
