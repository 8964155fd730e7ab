/* The skinned mesh's look, kept for writing back (mn_gltf_write_options.keep_attributes):
 * the materials of its primitives (glTF 2.0, 3.9: pbrMetallicRoughness factors and
 * textures, normal, occlusion and emissive textures, emissiveFactor, alphaMode, alphaCutoff,
 * doubleSided), the textures and samplers they use (3.8.2, 3.8.3) and those textures'
 * images (3.8.4) as bytes: from a bufferView, a base64 data: URI, or a file beside the glTF
 * read through mn_read_file_beneath, at most MN_GLTF_MAX_IMAGE_BYTES each and
 * MN_GLTF_MAX_IMAGES_BYTES in all.
 *
 * Only what is used is kept, renumbered in order of first use, and rewritten from the
 * fields known here (extensions and extras are not carried: they may point at objects not
 * kept). A malformed reference or value is an error naming the file and field; an image
 * file that cannot be read is a warning, and the textures using it are not kept, so that a
 * figure whose texture files are missing still reads. */
#include "doc/gltf_internal.h"
#include "doc/doc_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NOT_SEEN = -1, DROPPED = -2 };

typedef struct look_rd {
    gltf_ctx* c;
    gltf_look* l;
    int has_uv;
    const cJSON *mats, *texs, *samps, *imgs;
    int nmat, ntex, nsamp, nimg, nviews;
    int *mat_map, *tex_map, *samp_map, *img_map; /* source index -> kept index */
    gltf_items mat_it, tex_it, samp_it, img_it;  /* constant-time item lookups */
    mn_strbuf mjs, tjs, sjs;
    int nm, nt, ns;
    size_t image_bytes;
} look_rd;

static const char* sniff_mime(const unsigned char* d, size_t n) {
    if (n >= 8 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8)) return "image/png";
    if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return "image/jpeg";
    return NULL;
}

/* The bytes of images[i]: its bufferView, data: URI or file. *data NULL (a warning) for a
 * file that cannot be read. *owned says whether *data was allocated here. */
static mn_status image_bytes(look_rd* r, const cJSON* ji, const char* path, const char** mime,
                             const unsigned char** data, size_t* len, unsigned char** owned) {
    gltf_ctx* c = r->c;
    char f[96];
    const cJSON* uri = cJSON_GetObjectItemCaseSensitive(ji, "uri");
    const cJSON* jm = cJSON_GetObjectItemCaseSensitive(ji, "mimeType");
    *mime = NULL;
    *data = NULL;
    *owned = NULL;
    int view;
    mn_status s = mn_gltf_json_index(c, ji, "bufferView", path, 0, r->nviews, &view);
    if (s) return s;
    if (jm) {
        snprintf(f, sizeof f, "%s.mimeType", path);
        if (!cJSON_IsString(jm)) return mn_gltf_fail(c, MN_ERR_PARSE, f, "not a string");
        if (strcmp(jm->valuestring, "image/png") && strcmp(jm->valuestring, "image/jpeg"))
            return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, f,
                                "'%.40s': only image/png and image/jpeg are kept", jm->valuestring);
        *mime = jm->valuestring;
    }
    if ((view >= 0) == (uri != NULL)) {
        snprintf(f, sizeof f, "%s.%s", path, uri ? "uri" : "bufferView");
        return mn_gltf_fail(c, MN_ERR_PARSE, f,
                            uri ? "both uri and bufferView given" : "neither uri nor bufferView");
    }
    if (view >= 0) {
        snprintf(f, sizeof f, "%s.mimeType", path);
        if (!jm) return mn_gltf_fail(c, MN_ERR_PARSE, f, "missing (required with a bufferView)");
        s = mn_gltf_view_bytes(c, view, data, len);
        if (!s && *len > MN_GLTF_MAX_IMAGE_BYTES) {
            snprintf(f, sizeof f, "%s.bufferView", path);
            s = mn_gltf_fail(c, MN_ERR_UNSUPPORTED, f, "%zu bytes: an image may have at most %zu",
                             *len, MN_GLTF_MAX_IMAGE_BYTES);
        }
        return s;
    }
    snprintf(f, sizeof f, "%s.uri", path);
    if (!cJSON_IsString(uri)) return mn_gltf_fail(c, MN_ERR_PARSE, f, "not a string");
    const char* u = uri->valuestring;
    if (!strncmp(u, "data:", 5)) {
        const char* comma = strchr(u, ',');
        if (!comma || comma - u < 12 || strncmp(comma - 7, ";base64", 7) != 0)
            return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, f, "data: URI is not base64");
        size_t n = strlen(comma + 1);
        if (n / 4 * 3 > MN_GLTF_MAX_IMAGE_BYTES)
            return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, f,
                                "about %zu bytes: an image may have at most %zu", n / 4 * 3,
                                MN_GLTF_MAX_IMAGE_BYTES);
        *owned = malloc(3 * (n / 4) + 3);
        if (!*owned) return mn_gltf_fail(c, MN_ERR_NOMEM, f, "out of memory");
        long got = mn_gltf_base64_decode(comma + 1, n, *owned);
        if (got < 0) return mn_gltf_fail(c, MN_ERR_PARSE, f, "invalid base64");
        *data = *owned;
        *len = (size_t)got;
        return MN_OK;
    }
    char* fd;
    mn_error e;
    s = (c->read_beneath ? c->read_beneath : mn_doc_no_files.read_beneath)(
        c->dir, u, MN_GLTF_MAX_IMAGE_BYTES, &fd, len, &e);
    if (s == MN_ERR_UNSUPPORTED) return mn_gltf_fail(c, s, f, "%.300s", e.message);
    if (s) {
        mn_warn(c->warn, c->name, 0, f, "image not kept: %.300s", e.message);
        return MN_OK;
    }
    *owned = (unsigned char*)fd;
    *data = *owned;
    return MN_OK;
}

/* images[i] kept (its index in l->images), or DROPPED when its file cannot be read. */
static mn_status keep_image(look_rd* r, int i, int* out) {
    gltf_ctx* c = r->c;
    if (r->img_map[i] != NOT_SEEN) {
        *out = r->img_map[i];
        return MN_OK;
    }
    char path[32];
    snprintf(path, sizeof path, "images[%d]", i);
    const cJSON* ji = mn_gltf_item(&r->img_it, r->imgs, i);
    if (!cJSON_IsObject(ji)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
    const char* mime;
    const unsigned char* data;
    size_t len = 0;
    unsigned char* owned = NULL;
    mn_status s = image_bytes(r, ji, path, &mime, &data, &len, &owned);
    if (!s && data) {
        const char* got = sniff_mime(data, len);
        if (!got)
            s = mn_gltf_fail(c, MN_ERR_PARSE, path, "not a PNG or JPEG image (%zu bytes)", len);
        else if (mime && strcmp(mime, got))
            s = mn_gltf_fail(c, MN_ERR_PARSE, path, "mimeType says %s, the bytes are %s", mime,
                             got);
        else if (r->image_bytes + len > MN_GLTF_MAX_IMAGES_BYTES)
            s = mn_gltf_fail(c, MN_ERR_UNSUPPORTED, path,
                             "the images kept would exceed %zu bytes in all",
                             MN_GLTF_MAX_IMAGES_BYTES);
        mime = got;
    }
    if (s || !data) {
        free(owned);
        *out = r->img_map[i] = DROPPED;
        return s;
    }
    gltf_look* l = r->l;
    gltf_image* im = realloc(l->images, sizeof *im * (size_t)(l->nimages + 1));
    unsigned char* copy = owned ? owned : malloc(len ? len : 1);
    if (!im || !copy) {
        if (im) l->images = im;
        if (copy != owned || !copy) free(copy);
        free(owned);
        return mn_gltf_fail(c, MN_ERR_NOMEM, path, "out of memory");
    }
    if (!owned) memcpy(copy, data, len);
    l->images = im;
    im[l->nimages].data = copy;
    im[l->nimages].len = len;
    im[l->nimages].mime = mime;
    r->image_bytes += len;
    *out = r->img_map[i] = l->nimages++;
    return MN_OK;
}

/* An optional enum member: absent, or one of the allowed values. */
static mn_status enum_member(look_rd* r, const cJSON* obj, const char* key, const char* path,
                             const int* allowed, int n, int* out) {
    char f[96];
    snprintf(f, sizeof f, "%s.%s", path, key);
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = -1;
    if (!v) return MN_OK;
    for (int k = 0; k < n && cJSON_IsNumber(v); k++)
        if (v->valuedouble == allowed[k]) {
            *out = allowed[k];
            return MN_OK;
        }
    return mn_gltf_fail(r->c, MN_ERR_PARSE, f, "not a glTF sampler value");
}

static mn_status keep_sampler(look_rd* r, int i, int* out) {
    static const int mag[] = {9728, 9729}, min[] = {9728, 9729, 9984, 9985, 9986, 9987},
                     wrap[] = {33071, 33648, 10497};
    static const char* keys[] = {"magFilter", "minFilter", "wrapS", "wrapT"};
    if (r->samp_map[i] != NOT_SEEN) {
        *out = r->samp_map[i];
        return MN_OK;
    }
    char path[32];
    snprintf(path, sizeof path, "samplers[%d]", i);
    const cJSON* js = mn_gltf_item(&r->samp_it, r->samps, i);
    if (!cJSON_IsObject(js)) return mn_gltf_fail(r->c, MN_ERR_PARSE, path, "not an object");
    int v[4];
    mn_status s = enum_member(r, js, keys[0], path, mag, 2, &v[0]);
    if (!s) s = enum_member(r, js, keys[1], path, min, 6, &v[1]);
    if (!s) s = enum_member(r, js, keys[2], path, wrap, 3, &v[2]);
    if (!s) s = enum_member(r, js, keys[3], path, wrap, 3, &v[3]);
    if (s) return s;
    mn_strbuf_printf(&r->sjs, "%s{", r->ns ? "," : "[");
    for (int k = 0, first = 1; k < 4; k++)
        if (v[k] >= 0) {
            mn_strbuf_printf(&r->sjs, "%s\"%s\":%d", first ? "" : ",", keys[k], v[k]);
            first = 0;
        }
    mn_strbuf_printf(&r->sjs, "}");
    *out = r->samp_map[i] = r->ns++;
    return MN_OK;
}

/* textures[i] kept, or DROPPED when it has no source or its image is not kept. */
static mn_status keep_texture(look_rd* r, int i, int* out) {
    if (r->tex_map[i] != NOT_SEEN) {
        *out = r->tex_map[i];
        return MN_OK;
    }
    char path[32];
    snprintf(path, sizeof path, "textures[%d]", i);
    const cJSON* jt = mn_gltf_item(&r->tex_it, r->texs, i);
    if (!cJSON_IsObject(jt)) return mn_gltf_fail(r->c, MN_ERR_PARSE, path, "not an object");
    int src, samp, img = DROPPED, ks = -1;
    mn_status s = mn_gltf_json_index(r->c, jt, "source", path, 0, r->nimg, &src);
    if (!s) s = mn_gltf_json_index(r->c, jt, "sampler", path, 0, r->nsamp, &samp);
    if (!s && src >= 0) s = keep_image(r, src, &img);
    if (!s && samp >= 0 && img >= 0) s = keep_sampler(r, samp, &ks);
    if (s) return s;
    if (img < 0) {
        *out = r->tex_map[i] = DROPPED;
        return MN_OK;
    }
    mn_strbuf_printf(&r->tjs, "%s{", r->nt ? "," : "[");
    if (ks >= 0) mn_strbuf_printf(&r->tjs, "\"sampler\":%d,", ks);
    mn_strbuf_printf(&r->tjs, "\"source\":%d}", img);
    *out = r->tex_map[i] = r->nt++;
    return MN_OK;
}

/* An optional number member in [lo, hi]; *present 0 when absent. */
static mn_status number(look_rd* r, const cJSON* obj, const char* key, const char* path, double lo,
                        double hi, double* out, int* present) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *present = v != NULL;
    if (!v) return MN_OK;
    char f[112];
    snprintf(f, sizeof f, "%s.%s", path, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return mn_gltf_fail(r->c, MN_ERR_PARSE, f, "not a finite number");
    if (!(v->valuedouble >= lo && v->valuedouble <= hi))
        return mn_gltf_fail(r->c, MN_ERR_PARSE, f, "%.17g out of range [%g, %g]", v->valuedouble,
                            lo, hi);
    *out = v->valuedouble;
    return MN_OK;
}

/* A textureInfo member (3.9.2: index, texCoord; extra: "scale" or "strength" or NULL), put
 * into js as ,"key":{...} when kept: a texCoord other than 0, a mesh without TEXCOORD_0 or a
 * texture not kept drops it. */
static mn_status texture_info(look_rd* r, const cJSON* obj, const char* key, const char* path,
                              const char* extra, mn_strbuf* js) {
    const cJSON* ti = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!ti) return MN_OK;
    char p[96];
    snprintf(p, sizeof p, "%s.%s", path, key);
    if (!cJSON_IsObject(ti)) return mn_gltf_fail(r->c, MN_ERR_PARSE, p, "not an object");
    int idx, kt = DROPPED, has_x = 0;
    double tc, x = 1;
    mn_status s = mn_gltf_json_index(r->c, ti, "index", p, 1, r->ntex, &idx);
    if (!s) s = mn_gltf_json_size(r->c, ti, "texCoord", p, 0, 0, 65535, &tc);
    if (!s && extra)
        s = number(r, ti, extra, p, extra[1] == 't' ? 0 : -1e9, extra[1] == 't' ? 1 : 1e9, &x,
                   &has_x);
    if (!s && tc == 0 && r->has_uv) s = keep_texture(r, idx, &kt);
    if (s || kt < 0) return s;
    mn_strbuf_printf(js, ",\"%s\":{\"index\":%d", key, kt);
    if (has_x) {
        mn_strbuf_printf(js, ",\"%s\":", extra);
        mn_strbuf_double(js, x);
    }
    mn_strbuf_printf(js, "}");
    return MN_OK;
}

static void put_numbers(mn_strbuf* js, const char* key, const double* v, int n) {
    mn_strbuf_printf(js, ",\"%s\":[", key);
    for (int k = 0; k < n; k++) {
        if (k) mn_strbuf_append(js, ",", 1);
        mn_strbuf_double(js, v[k]);
    }
    mn_strbuf_append(js, "]", 1);
}

static void put_number(mn_strbuf* js, const char* key, double v) {
    mn_strbuf_printf(js, ",\"%s\":", key);
    mn_strbuf_double(js, v);
}

static mn_status unit_numbers(look_rd* r, const cJSON* obj, const char* key, const char* path,
                              int n, double* v, int* present) {
    mn_status s = mn_gltf_json_numbers(r->c, obj, key, path, n, v, present);
    for (int k = 0; !s && *present && k < n; k++)
        if (!(v[k] >= 0 && v[k] <= 1)) {
            char f[96];
            snprintf(f, sizeof f, "%s.%s", path, key);
            s = mn_gltf_fail(r->c, MN_ERR_PARSE, f, "element %d (%.17g) is not in [0, 1]", k, v[k]);
        }
    return s;
}

/* materials[i] kept: its known members checked and rewritten into r->mjs. */
static mn_status keep_material(look_rd* r, int i, int* out) {
    if (r->mat_map[i] != NOT_SEEN) {
        *out = r->mat_map[i];
        return MN_OK;
    }
    gltf_ctx* c = r->c;
    char path[32], pp[64], f[96];
    snprintf(path, sizeof path, "materials[%d]", i);
    const cJSON* jm = mn_gltf_item(&r->mat_it, r->mats, i);
    if (!cJSON_IsObject(jm)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
    mn_strbuf js; /* the members, each with a leading comma */
    mn_strbuf_init(&js);
    mn_status s = MN_OK;
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(jm, "name");
    if (cJSON_IsString(name)) {
        mn_strbuf_append(&js, ",\"name\":", 8);
        mn_strbuf_json_str(&js, name->valuestring);
    }
    const cJSON* pbr = cJSON_GetObjectItemCaseSensitive(jm, "pbrMetallicRoughness");
    snprintf(pp, sizeof pp, "%s.pbrMetallicRoughness", path);
    if (pbr && !cJSON_IsObject(pbr)) s = mn_gltf_fail(c, MN_ERR_PARSE, pp, "not an object");
    if (!s && pbr) {
        mn_strbuf pj;
        mn_strbuf_init(&pj);
        double col[4], met, rough;
        int has_c, has_m, has_r;
        s = unit_numbers(r, pbr, "baseColorFactor", pp, 4, col, &has_c);
        if (!s) s = number(r, pbr, "metallicFactor", pp, 0, 1, &met, &has_m);
        if (!s) s = number(r, pbr, "roughnessFactor", pp, 0, 1, &rough, &has_r);
        if (!s && has_c) put_numbers(&pj, "baseColorFactor", col, 4);
        if (!s) s = texture_info(r, pbr, "baseColorTexture", pp, NULL, &pj);
        if (!s && has_m) put_number(&pj, "metallicFactor", met);
        if (!s && has_r) put_number(&pj, "roughnessFactor", rough);
        if (!s) s = texture_info(r, pbr, "metallicRoughnessTexture", pp, NULL, &pj);
        if (!s && pj.len) {
            mn_strbuf_append(&js, ",\"pbrMetallicRoughness\":{", 25);
            mn_strbuf_append(&js, pj.data + 1, pj.len - 1);
            mn_strbuf_append(&js, "}", 1);
        }
        if (pj.failed) s = mn_gltf_fail(c, MN_ERR_NOMEM, pp, "out of memory");
        mn_strbuf_free(&pj);
    }
    if (!s) s = texture_info(r, jm, "normalTexture", path, "scale", &js);
    if (!s) s = texture_info(r, jm, "occlusionTexture", path, "strength", &js);
    if (!s) s = texture_info(r, jm, "emissiveTexture", path, NULL, &js);
    double em[3], cut;
    int has_e, has_cut;
    if (!s) s = unit_numbers(r, jm, "emissiveFactor", path, 3, em, &has_e);
    if (!s && has_e) put_numbers(&js, "emissiveFactor", em, 3);
    const cJSON* mode = cJSON_GetObjectItemCaseSensitive(jm, "alphaMode");
    snprintf(f, sizeof f, "%s.alphaMode", path);
    if (!s && mode &&
        (!cJSON_IsString(mode) ||
         (strcmp(mode->valuestring, "OPAQUE") && strcmp(mode->valuestring, "MASK") &&
          strcmp(mode->valuestring, "BLEND"))))
        s = mn_gltf_fail(c, MN_ERR_PARSE, f, "not OPAQUE, MASK or BLEND");
    if (!s) s = number(r, jm, "alphaCutoff", path, 0, 1e300, &cut, &has_cut);
    int mask = !s && mode && !strcmp(mode->valuestring, "MASK");
    if (!s && mode) mn_strbuf_printf(&js, ",\"alphaMode\":\"%s\"", mode->valuestring);
    if (!s && mask && has_cut) put_number(&js, "alphaCutoff", cut);
    const cJSON* ds = cJSON_GetObjectItemCaseSensitive(jm, "doubleSided");
    snprintf(f, sizeof f, "%s.doubleSided", path);
    if (!s && ds && !cJSON_IsBool(ds)) s = mn_gltf_fail(c, MN_ERR_PARSE, f, "not a boolean");
    if (!s && ds) mn_strbuf_printf(&js, ",\"doubleSided\":%s", cJSON_IsTrue(ds) ? "true" : "false");
    if (!s && js.failed) s = mn_gltf_fail(c, MN_ERR_NOMEM, path, "out of memory");
    if (!s) {
        mn_strbuf_printf(&r->mjs, "%s{", r->nm ? "," : "[");
        if (js.len) mn_strbuf_append(&r->mjs, js.data + 1, js.len - 1);
        mn_strbuf_append(&r->mjs, "}", 1);
        *out = r->mat_map[i] = r->nm++;
    }
    mn_strbuf_free(&js);
    return s;
}

void mn_gltf_look_free(gltf_look* l) {
    if (!l) return;
    free(l->prim_tri);
    free(l->prim_mat);
    free(l->materials);
    free(l->textures);
    free(l->samplers);
    for (int k = 0; k < l->nimages; k++)
        free(l->images[k].data);
    free(l->images);
    free(l);
}

/* A NUL-terminated copy of an array text closed with ']' (NULL for none). */
static char* close_array(mn_strbuf* b, int n, int* failed) {
    if (n == 0) return NULL;
    mn_strbuf_append(b, "]", 1);
    char* t = b->failed ? NULL : malloc(b->len + 1);
    if (!t) {
        *failed = 1;
        return NULL;
    }
    memcpy(t, b->data, b->len);
    t[b->len] = 0;
    return t;
}

static int* index_map(int n) {
    int* m = malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int k = 0; m && k < n; k++)
        m[k] = NOT_SEEN;
    return m;
}

mn_status mn_gltf_read_look(gltf_ctx* c, int mesh, const cJSON* prims, int np, const int* prim_tri,
                            int has_uv, gltf_look** out) {
    *out = NULL;
    look_rd r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.has_uv = has_uv;
    mn_status s = mn_gltf_json_array(c, c->root, "materials", "", &r.mats, &r.nmat);
    if (!s) s = mn_gltf_json_array(c, c->root, "textures", "", &r.texs, &r.ntex);
    if (!s) s = mn_gltf_json_array(c, c->root, "samplers", "", &r.samps, &r.nsamp);
    if (!s) s = mn_gltf_json_array(c, c->root, "images", "", &r.imgs, &r.nimg);
    if (s) return s;
    r.nviews = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c->root, "bufferViews"));
    r.l = calloc(1, sizeof *r.l);
    r.mat_map = index_map(r.nmat);
    r.tex_map = index_map(r.ntex);
    r.samp_map = index_map(r.nsamp);
    r.img_map = index_map(r.nimg);
    mn_strbuf_init(&r.mjs);
    mn_strbuf_init(&r.tjs);
    mn_strbuf_init(&r.sjs);
    gltf_look* l = r.l;
    if (l) {
        l->nprims = np;
        l->prim_tri = malloc(sizeof(int) * (size_t)(np + 1));
        l->prim_mat = malloc(sizeof(int) * (size_t)(np ? np : 1));
    }
    if (!l || !l->prim_tri || !l->prim_mat || !r.mat_map || !r.tex_map || !r.samp_map || !r.img_map)
        s = mn_gltf_fail(c, MN_ERR_NOMEM, "materials", "out of memory");
    if (!s) memcpy(l->prim_tri, prim_tri, sizeof(int) * (size_t)(np + 1));
    const cJSON* jp = prims ? prims->child : NULL;
    int any = 0;
    for (int p = 0; p < np && !s; p++, jp = jp->next) {
        char path[64];
        snprintf(path, sizeof path, "meshes[%d].primitives[%d]", mesh, p);
        int mi;
        s = mn_gltf_json_index(c, jp, "material", path, 0, r.nmat, &mi);
        l->prim_mat[p] = -1;
        if (!s && mi >= 0) s = keep_material(&r, mi, &l->prim_mat[p]);
        any |= mi >= 0;
    }
    int failed = 0;
    if (!s) {
        l->materials = close_array(&r.mjs, r.nm, &failed);
        l->textures = close_array(&r.tjs, r.nt, &failed);
        l->samplers = close_array(&r.sjs, r.ns, &failed);
        if (failed) s = mn_gltf_fail(c, MN_ERR_NOMEM, "materials", "out of memory");
    }
    mn_strbuf_free(&r.mjs);
    mn_strbuf_free(&r.tjs);
    mn_strbuf_free(&r.sjs);
    free(r.mat_map);
    free(r.tex_map);
    free(r.samp_map);
    free(r.img_map);
    mn_gltf_items_free(&r.mat_it);
    mn_gltf_items_free(&r.tex_it);
    mn_gltf_items_free(&r.samp_it);
    mn_gltf_items_free(&r.img_it);
    if (s || !any) {
        mn_gltf_look_free(l);
        return s;
    }
    *out = l;
    return MN_OK;
}
