/* glTF 2.0 container and binary data: the .glb chunks (glTF 4.4), the JSON (cJSON),
 * buffers (GLB BIN chunk, base64 data: URIs, external files; glTF 3.6.1) and accessors
 * (glTF 3.6.2: byteStride, sparse storage, every componentType, normalisation).
 *
 * Every offset, length, stride and count is checked against the bytes actually present
 * before anything is read, in 64-bit or double arithmetic that cannot overflow: no input
 * makes this code read outside its buffers. */
#include "doc/gltf_internal.h"
#include "doc/doc_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GLB_MAGIC 0x46546C67u      /* "glTF" */
#define GLB_CHUNK_JSON 0x4E4F534Au /* "JSON" */
#define GLB_CHUNK_BIN 0x004E4942u  /* "BIN\0" */

static uint32_t rd_u32(const unsigned char* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- JSON ---------------------------------------------------------------------------- */

/* Line (1-based) of a byte position in a text. */
static int line_of(const char* text, size_t pos) {
    int line = 1;
    for (size_t i = 0; i < pos; i++)
        if (text[i] == '\n') line++;
    return line;
}

/* cJSON keeps no positions, so an error's line is found again in the text: a scanner that
 * skips JSON values (the text is already known to be valid JSON) follows the field's path
 * of keys and [indices]. */
static size_t skip_ws(const char* s, size_t n, size_t i) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

static size_t skip_value(const char* s, size_t n, size_t i) {
    if (i >= n) return n;
    if (s[i] == '"') {
        for (i++; i < n; i++) {
            if (s[i] == '\\')
                i++;
            else if (s[i] == '"')
                return i + 1;
        }
        return n;
    }
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        for (; i < n; i++) {
            if (s[i] == '"') {
                i = skip_value(s, n, i) - 1;
            } else if (s[i] == '{' || s[i] == '[') {
                depth++;
            } else if (s[i] == '}' || s[i] == ']') {
                if (--depth == 0) return i + 1;
            }
        }
        return n;
    }
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
           s[i] != '\r' && s[i] != '\t')
        i++;
    return i;
}

/* Offset of the deepest part of path found in the text, or n when none is. */
static size_t locate_path(const char* s, size_t n, const char* path) {
    size_t i = skip_ws(s, n, 0), found = n;
    const char* p = path;
    while (*p) {
        if (*p == '.') p++;
        if (*p == '[') {
            char* end;
            long idx = strtol(p + 1, &end, 10);
            if (*end != ']' || idx < 0 || i >= n || s[i] != '[') return found;
            p = end + 1;
            i = skip_ws(s, n, i + 1);
            for (long k = 0; k < idx; k++) {
                i = skip_ws(s, n, skip_value(s, n, i));
                if (i >= n || s[i] != ',') return found;
                i = skip_ws(s, n, i + 1);
            }
            if (i >= n || s[i] == ']') return found;
            found = i;
        } else {
            size_t klen = strcspn(p, ".[");
            if (klen == 0 || i >= n || s[i] != '{') return found;
            i = skip_ws(s, n, i + 1);
            int hit = 0;
            while (i < n && s[i] == '"') {
                size_t k0 = i + 1, k1 = skip_value(s, n, i);
                if (k1 <= k0) return found;
                int match = k1 - 1 - k0 == klen && memcmp(s + k0, p, klen) == 0;
                i = skip_ws(s, n, k1);
                if (i >= n || s[i] != ':') return found;
                i = skip_ws(s, n, i + 1);
                if (match) {
                    hit = 1;
                    found = k0 - 1;
                    break;
                }
                i = skip_ws(s, n, skip_value(s, n, i));
                if (i >= n || s[i] != ',') break;
                i = skip_ws(s, n, i + 1);
            }
            if (!hit) return found;
            p += klen;
        }
    }
    return found;
}

mn_status mn_gltf_fail(gltf_ctx* c, mn_status s, const char* field, const char* fmt, ...) {
    int line = 0;
    if (c->json && field) {
        size_t at = locate_path(c->json, c->json_len, field);
        if (at < c->json_len) line = line_of(c->json, at);
    }
    va_list ap;
    va_start(ap, fmt);
    mn_io_errorv(c->err, s, c->name, line, field, fmt, ap);
    va_end(ap);
    return s;
}

static mn_status parse_json(gltf_ctx* c, const char* text, size_t len) {
    const char* end = NULL;
    c->root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!c->root) {
        size_t pos = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        return mn_error_set(c->err, MN_ERR_PARSE, c->name, line_of(text, pos), "json",
                            "invalid JSON near byte %zu", pos);
    }
    if (!cJSON_IsObject(c->root))
        return mn_gltf_fail(c, MN_ERR_PARSE, "json", "the top level is not an object");
    return MN_OK;
}

static void field_name(char* out, size_t cap, const char* path, const char* key) {
    if (path && path[0])
        snprintf(out, cap, "%.64s.%.24s", path, key);
    else
        snprintf(out, cap, "%.24s", key);
}

mn_status mn_gltf_json_index(gltf_ctx* c, const cJSON* obj, const char* key, const char* path,
                             int required, int limit, int* out) {
    char f[96];
    field_name(f, sizeof f, path, key);
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = -1;
    if (!v) return required ? mn_gltf_fail(c, MN_ERR_PARSE, f, "missing") : MN_OK;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "not an integer index");
    if (!(v->valuedouble >= 0 && v->valuedouble < limit))
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "index %.17g out of range (%d available)",
                            v->valuedouble, limit);
    *out = (int)v->valuedouble;
    return MN_OK;
}

mn_status mn_gltf_json_size(gltf_ctx* c, const cJSON* obj, const char* key, const char* path,
                            int required, double def, double max, double* out) {
    char f[96];
    field_name(f, sizeof f, path, key);
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = def;
    if (!v) return required ? mn_gltf_fail(c, MN_ERR_PARSE, f, "missing") : MN_OK;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "not an integer");
    if (!(v->valuedouble >= 0 && v->valuedouble <= max))
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "%.17g out of range [0, %.17g]", v->valuedouble,
                            max);
    *out = v->valuedouble;
    return MN_OK;
}

mn_status mn_gltf_json_numbers(gltf_ctx* c, const cJSON* obj, const char* key, const char* path,
                               int n, double* out, int* present) {
    char f[96];
    field_name(f, sizeof f, path, key);
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *present = 0;
    if (!v) return MN_OK;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n)
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "not an array of %d numbers", n);
    int i = 0;
    const cJSON* e;
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "element %d is not a finite number", i);
        out[i++] = e->valuedouble;
    }
    *present = 1;
    return MN_OK;
}

mn_status mn_gltf_json_array(gltf_ctx* c, const cJSON* obj, const char* key, const char* path,
                             const cJSON** out, int* n) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    *n = 0;
    if (!v) return MN_OK;
    if (!cJSON_IsArray(v)) {
        char f[96];
        field_name(f, sizeof f, path, key);
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "not an array");
    }
    *out = v;
    *n = cJSON_GetArraySize(v);
    return MN_OK;
}

/* ---- the container ------------------------------------------------------------------- */

/* Binary glTF (glTF 4.4): a 12-byte header (magic, version 2, total length), then chunks of
 * (length, type, data), the first JSON, an optional BIN next; unknown chunks are skipped.
 * Chunks should start and end on 4-byte boundaries: a misaligned length is a warning. */
static mn_status parse_glb(gltf_ctx* c, const unsigned char* d, size_t len) {
    if (len < 12)
        return mn_gltf_fail(c, MN_ERR_PARSE, "header", "truncated GLB header (%zu bytes)", len);
    uint32_t version = rd_u32(d + 4), total = rd_u32(d + 8);
    if (version != 2)
        return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, "header.version",
                            "GLB version %u (only 2 is read)", (unsigned)version);
    if (total > len)
        return mn_gltf_fail(c, MN_ERR_PARSE, "header.length",
                            "says %u bytes, the file has %zu (truncated)", (unsigned)total, len);
    if (total < len)
        mn_warn(c->warn, c->name, 0, "header.length", "%zu bytes after the GLB's end ignored",
                len - total);
    size_t pos = 12;
    int chunk = 0;
    const char* json = NULL;
    size_t json_len = 0;
    while (pos < total) {
        char f[32];
        snprintf(f, sizeof f, "chunks[%d]", chunk);
        if (total - pos < 8) return mn_gltf_fail(c, MN_ERR_PARSE, f, "truncated chunk header");
        uint32_t clen = rd_u32(d + pos), ctype = rd_u32(d + pos + 4);
        pos += 8;
        if (clen > total - pos) {
            snprintf(f, sizeof f, "chunks[%d].length", chunk);
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "%u bytes past the end of the file",
                                (unsigned)clen);
        }
        if (clen % 4 != 0)
            mn_warn(c->warn, c->name, 0, f, "length %u is not a multiple of 4", (unsigned)clen);
        if (chunk == 0) {
            if (ctype != GLB_CHUNK_JSON)
                return mn_gltf_fail(c, MN_ERR_PARSE, "chunks[0].type",
                                    "the first chunk is not JSON");
            json = (const char*)d + pos;
            json_len = clen;
        } else if (ctype == GLB_CHUNK_BIN && !c->bin) {
            if (chunk != 1)
                mn_warn(c->warn, c->name, 0, f, "the BIN chunk is not the second chunk");
            c->bin = d + pos;
            c->bin_len = clen;
        }
        pos += clen;
        chunk++;
    }
    if (!json) return mn_gltf_fail(c, MN_ERR_PARSE, "chunks[0]", "no JSON chunk");
    return parse_json(c, json, json_len);
}

static mn_status check_asset(gltf_ctx* c) {
    const cJSON* asset = cJSON_GetObjectItemCaseSensitive(c->root, "asset");
    if (!cJSON_IsObject(asset)) return mn_gltf_fail(c, MN_ERR_PARSE, "asset", "missing");
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(asset, "version");
    if (!cJSON_IsString(v)) return mn_gltf_fail(c, MN_ERR_PARSE, "asset.version", "missing");
    if (strncmp(v->valuestring, "2.", 2) != 0)
        return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, "asset.version", "glTF %.20s (only 2.x is read)",
                            v->valuestring);
    /* Required extensions change what the data means: accept only those that leave the
     * skeleton and the mesh as read here. */
    static const char* ok_prefix[] = {"KHR_mesh_quantization", "KHR_materials_", "KHR_texture_",
                                      "KHR_lights_punctual", "EXT_texture_webp"};
    const cJSON* req;
    int n;
    mn_status s = mn_gltf_json_array(c, c->root, "extensionsRequired", "", &req, &n);
    if (s) return s;
    for (int i = 0; i < n; i++) {
        const cJSON* e = cJSON_GetArrayItem(req, i);
        char f[48];
        snprintf(f, sizeof f, "extensionsRequired[%d]", i);
        if (!cJSON_IsString(e)) return mn_gltf_fail(c, MN_ERR_PARSE, f, "not a string");
        int ok = 0;
        for (size_t k = 0; k < sizeof ok_prefix / sizeof *ok_prefix; k++)
            if (strncmp(e->valuestring, ok_prefix[k], strlen(ok_prefix[k])) == 0) ok = 1;
        if (!ok)
            return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, f, "extension %.60s is not supported",
                                e->valuestring);
    }
    return MN_OK;
}

mn_status mn_gltf_parse_container(gltf_ctx* c, const unsigned char* data, size_t len) {
    mn_status s;
    /* A JSON glTF starts with '{' after optional whitespace and a UTF-8 byte order mark;
     * anything else must be a GLB. */
    size_t bom = len >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF ? 3 : 0;
    size_t i = bom;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
        i++;
    if (len >= 4 && rd_u32(data) == GLB_MAGIC)
        s = parse_glb(c, data, len);
    else if (i < len && data[i] == '{') {
        s = parse_json(c, (const char*)data + bom, len - bom);
        c->json = (const char*)data + bom;
        c->json_len = len - bom;
    } else
        s = mn_gltf_fail(c, MN_ERR_PARSE, "header", "neither a GLB (bad magic) nor a JSON object");
    if (s) return s;
    s = check_asset(c);
    if (s) return s;
    const cJSON* buffers;
    s = mn_gltf_json_array(c, c->root, "buffers", "", &buffers, &c->nbuffers);
    if (s) return s;
    /* the arrays read by index (mn_gltf_item): arrays or absent */
    const cJSON* arr;
    int narr;
    s = mn_gltf_json_array(c, c->root, "bufferViews", "", &arr, &narr);
    if (!s) s = mn_gltf_json_array(c, c->root, "accessors", "", &arr, &narr);
    if (s) return s;
    if (c->nbuffers) {
        c->buffers = calloc((size_t)c->nbuffers, sizeof *c->buffers);
        if (!c->buffers) return mn_gltf_fail(c, MN_ERR_NOMEM, "buffers", "out of memory");
    }
    return MN_OK;
}

static void items_build(gltf_items* v, const cJSON* array) {
    if (v->built) return;
    v->built = 1;
    v->n = cJSON_IsArray(array) ? cJSON_GetArraySize(array) : 0;
    v->item = malloc(sizeof *v->item * (size_t)(v->n ? v->n : 1));
    if (!v->item) return; /* then look-ups walk the list: slow but right */
    /* only an array's elements: an object in its place (a malformed file) has children too,
     * which are no items and were once written past the n = 0 slots */
    int k = 0;
    const cJSON* e;
    if (v->n) cJSON_ArrayForEach(e, array) v->item[k++] = e;
}

const cJSON* mn_gltf_item(gltf_items* v, const cJSON* array, int i) {
    items_build(v, array);
    if (i < 0 || i >= v->n) return NULL;
    return v->item ? v->item[i] : cJSON_GetArrayItem(array, i);
}

int mn_gltf_item_count(gltf_items* v, const cJSON* array) {
    items_build(v, array);
    return v->n;
}

void mn_gltf_items_free(gltf_items* v) {
    free(v->item);
    memset(v, 0, sizeof *v);
}

void mn_gltf_ctx_free(gltf_ctx* c) {
    mn_gltf_items_free(&c->accessors);
    mn_gltf_items_free(&c->views);
    for (int i = 0; i < c->nbuffers && c->buffers; i++)
        free(c->buffers[i].owned);
    free(c->buffers);
    cJSON_Delete(c->root);
    free(c->dir);
    memset(c, 0, sizeof *c);
}

/* ---- buffers ------------------------------------------------------------------------- */

long mn_gltf_base64_decode(const char* s, size_t n, unsigned char* out) {
    while (n > 0 && s[n - 1] == '=')
        n--;
    if (n % 4 == 1) return -1;
    long o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)s[i], v;
        if (ch >= 'A' && ch <= 'Z')
            v = ch - 'A';
        else if (ch >= 'a' && ch <= 'z')
            v = ch - 'a' + 26;
        else if (ch >= '0' && ch <= '9')
            v = ch - '0' + 52;
        else if (ch == '+')
            v = 62;
        else if (ch == '/')
            v = 63;
        else
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    return o;
}

/* A relative URI reference (RFC 3986) to a file in the glTF's folder, read through the one
 * safe opener (mn_read_file_beneath: decoded first; no absolute path, scheme, backslash or
 * '..'; opened beneath the folder; a regular file of at most MN_IO_MAX_FILE_BYTES). The
 * message names the URI as written, never the resolved path. */
static mn_status load_file_uri(gltf_ctx* c, const char* uri, const char* f, unsigned char** out,
                               size_t* len) {
    char* data;
    mn_error e;
    mn_status s = (c->read_beneath ? c->read_beneath
                                   : mn_doc_no_files.read_beneath)(c->dir, uri, 0, &data, len, &e);
    if (s) return mn_gltf_fail(c, s, f, "cannot read: %.300s", e.message);
    *out = (unsigned char*)data;
    return MN_OK;
}

/* Loads buffer i on first use (glTF 3.6.1.1): the GLB BIN chunk when it has no uri, else
 * its data: URI or file. The declared byteLength must be present in full. */
static mn_status get_buffer(gltf_ctx* c, int i, const gltf_buffer** out) {
    gltf_buffer* b = &c->buffers[i];
    *out = b;
    if (b->data) return MN_OK;
    char path[32], f[48];
    snprintf(path, sizeof path, "buffers[%d]", i);
    const cJSON* jb = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c->root, "buffers"), i);
    if (!cJSON_IsObject(jb)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
    double blen;
    mn_status s = mn_gltf_json_size(c, jb, "byteLength", path, 1, 0, 9.0e15, &blen);
    if (s) return s;
    snprintf(f, sizeof f, "%s.byteLength", path);
    if (blen < 1) return mn_gltf_fail(c, MN_ERR_PARSE, f, "must be at least 1");
    const cJSON* uri = cJSON_GetObjectItemCaseSensitive(jb, "uri");
    snprintf(f, sizeof f, "%s.uri", path);
    const unsigned char* data = NULL;
    size_t have = 0;
    if (!uri) {
        if (i != 0 || !c->bin)
            return mn_gltf_fail(c, MN_ERR_PARSE, f,
                                "missing (and no GLB BIN chunk to stand for it)");
        data = c->bin;
        have = c->bin_len;
    } else if (!cJSON_IsString(uri)) {
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "not a string");
    } else if (strncmp(uri->valuestring, "data:", 5) == 0) {
        const char* u = uri->valuestring;
        const char* comma = strchr(u, ',');
        if (!comma || comma - u < 12 || strncmp(comma - 7, ";base64", 7) != 0)
            return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, f, "data: URI is not base64");
        size_t n = strlen(comma + 1);
        b->owned = malloc(3 * (n / 4) + 3);
        if (!b->owned) return mn_gltf_fail(c, MN_ERR_NOMEM, f, "out of memory");
        long got = mn_gltf_base64_decode(comma + 1, n, b->owned);
        if (got < 0) return mn_gltf_fail(c, MN_ERR_PARSE, f, "invalid base64");
        data = b->owned;
        have = (size_t)got;
    } else {
        s = load_file_uri(c, uri->valuestring, f, &b->owned, &have);
        if (s) return s;
        data = b->owned;
    }
    if ((double)have < blen) {
        snprintf(f, sizeof f, "%s.byteLength", path);
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "%.0f bytes declared, %zu present", blen, have);
    }
    b->data = data;
    b->len = (size_t)blen;
    return MN_OK;
}

/* A bufferView (glTF 3.6.1.2), checked against its buffer: base pointer, length, stride. */
static mn_status get_view(gltf_ctx* c, int v, const unsigned char** data, size_t* len,
                          size_t* stride) {
    char path[32];
    snprintf(path, sizeof path, "bufferViews[%d]", v);
    const cJSON* jv =
        mn_gltf_item(&c->views, cJSON_GetObjectItemCaseSensitive(c->root, "bufferViews"), v);
    if (!cJSON_IsObject(jv)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
    int bi;
    double off, blen, st;
    mn_status s = mn_gltf_json_index(c, jv, "buffer", path, 1, c->nbuffers, &bi);
    if (!s) s = mn_gltf_json_size(c, jv, "byteOffset", path, 0, 0, 9.0e15, &off);
    if (!s) s = mn_gltf_json_size(c, jv, "byteLength", path, 1, 0, 9.0e15, &blen);
    if (!s) s = mn_gltf_json_size(c, jv, "byteStride", path, 0, 0, 252, &st);
    if (s) return s;
    char f[48];
    if (cJSON_GetObjectItemCaseSensitive(jv, "byteStride") && (st < 4 || (int)st % 4 != 0)) {
        snprintf(f, sizeof f, "%s.byteStride", path);
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "%.0f: must be a multiple of 4 in [4, 252]", st);
    }
    const gltf_buffer* b;
    s = get_buffer(c, bi, &b);
    if (s) return s;
    if (off + blen > (double)b->len) {
        snprintf(f, sizeof f, "%s.byteLength", path);
        return mn_gltf_fail(c, MN_ERR_PARSE, f,
                            "offset %.0f + length %.0f is past the end of buffers[%d] (%zu bytes)",
                            off, blen, bi, b->len);
    }
    *data = b->data + (size_t)off;
    *len = (size_t)blen;
    *stride = (size_t)st;
    return MN_OK;
}

mn_status mn_gltf_view_bytes(gltf_ctx* c, int v, const unsigned char** data, size_t* len) {
    size_t stride;
    return get_view(c, v, data, len, &stride);
}

/* ---- accessors ----------------------------------------------------------------------- */

static int type_ncomp(const char* t) {
    static const struct {
        const char* name;
        int n;
    } types[] = {{"SCALAR", 1}, {"VEC2", 2},  {"VEC3", 3}, {"VEC4", 4},
                 {"MAT2", -4},  {"MAT3", -9}, {"MAT4", 16}};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strcmp(t, types[i].name) == 0) return types[i].n;
    return 0;
}

static size_t ctype_size(int ct) {
    switch (ct) {
    case GLTF_BYTE:
    case GLTF_UNSIGNED_BYTE:
        return 1;
    case GLTF_SHORT:
    case GLTF_UNSIGNED_SHORT:
        return 2;
    case GLTF_UNSIGNED_INT:
    case GLTF_FLOAT:
        return 4;
    }
    return 0;
}

/* One component as a double; integer types normalised as glTF 3.11 says when norm. */
static double read_comp(const unsigned char* p, int ct, int norm) {
    switch (ct) {
    case GLTF_BYTE: {
        double v = (double)(int8_t)p[0];
        return norm ? fmax(v / 127.0, -1.0) : v;
    }
    case GLTF_UNSIGNED_BYTE:
        return norm ? p[0] / 255.0 : (double)p[0];
    case GLTF_SHORT: {
        double v = (double)(int16_t)(uint16_t)(p[0] | p[1] << 8);
        return norm ? fmax(v / 32767.0, -1.0) : v;
    }
    case GLTF_UNSIGNED_SHORT: {
        double v = (double)(uint16_t)(p[0] | p[1] << 8);
        return norm ? v / 65535.0 : v;
    }
    case GLTF_UNSIGNED_INT: {
        double v = (double)rd_u32(p);
        return norm ? v / 4294967295.0 : v;
    }
    default: {
        uint32_t u = rd_u32(p);
        float fv;
        memcpy(&fv, &u, 4);
        return (double)fv;
    }
    }
}

/* Do count elements of ncomp components from byte off end inside a view of vlen bytes? */
static mn_status check_elems(gltf_ctx* c, const char* f, size_t vlen, size_t vstride, double off,
                             size_t count, int ncomp, int ct) {
    size_t esz = ctype_size(ct) * (size_t)ncomp;
    size_t stride = vstride ? vstride : esz;
    if (count == 0) return MN_OK;
    if (vstride && vstride < esz)
        return mn_gltf_fail(c, MN_ERR_PARSE, f,
                            "byteStride %zu is smaller than an element (%zu bytes)", vstride, esz);
    if (off + (double)stride * (double)(count - 1) + (double)esz > (double)vlen)
        return mn_gltf_fail(c, MN_ERR_PARSE, f,
                            "%zu elements from byte %.0f run past the bufferView (%zu bytes)",
                            count, off, vlen);
    return MN_OK;
}

/* Reads count elements of ncomp components from a view region, after checking that the
 * last element ends inside the view. */
static mn_status read_elems(gltf_ctx* c, const char* f, const unsigned char* view, size_t vlen,
                            size_t vstride, double off, size_t count, int ncomp, int ct, int norm,
                            double* out, const int* dest_rows) {
    size_t esz = ctype_size(ct) * (size_t)ncomp;
    size_t stride = vstride ? vstride : esz;
    mn_status s = check_elems(c, f, vlen, vstride, off, count, ncomp, ct);
    if (s || count == 0) return s;
    const unsigned char* p = view + (size_t)off;
    for (size_t i = 0; i < count; i++, p += stride) {
        double* o = out + (size_t)(dest_rows ? dest_rows[i] : (int)i) * (size_t)ncomp;
        for (int k = 0; k < ncomp; k++)
            o[k] = read_comp(p + (size_t)k * ctype_size(ct), ct, norm);
        if (ct == GLTF_FLOAT)
            for (int k = 0; k < ncomp; k++)
                if (!isfinite(o[k]))
                    return mn_gltf_fail(c, MN_ERR_PARSE, f,
                                        "element %zu component %d is not finite", i, k);
    }
    return MN_OK;
}

/* Sparse storage (glTF 3.6.2.3): count (index, value) pairs replacing elements of the
 * base data; indices strictly increasing and below the accessor's count. */
static mn_status read_sparse(gltf_ctx* c, const cJSON* sp, const char* path, int count, int ncomp,
                             int ct, int norm, double* out) {
    char p[96], f[160];
    snprintf(p, sizeof p, "%s.sparse", path);
    double n;
    mn_status s = mn_gltf_json_size(c, sp, "count", p, 1, 0, count, &n);
    if (s) return s;
    if (n < 1) {
        snprintf(f, sizeof f, "%s.count", p);
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "must be at least 1");
    }
    const cJSON* ji = cJSON_GetObjectItemCaseSensitive(sp, "indices");
    const cJSON* jv = cJSON_GetObjectItemCaseSensitive(sp, "values");
    if (!cJSON_IsObject(ji) || !cJSON_IsObject(jv)) {
        snprintf(f, sizeof f, "%s.%s", p, cJSON_IsObject(ji) ? "values" : "indices");
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "missing");
    }
    int nviews =
        mn_gltf_item_count(&c->views, cJSON_GetObjectItemCaseSensitive(c->root, "bufferViews"));
    int iv, vv;
    double ioff, voff, ict;
    char pi[112], pv[112];
    snprintf(pi, sizeof pi, "%s.indices", p);
    snprintf(pv, sizeof pv, "%s.values", p);
    s = mn_gltf_json_index(c, ji, "bufferView", pi, 1, nviews, &iv);
    if (!s) s = mn_gltf_json_size(c, ji, "byteOffset", pi, 0, 0, 9.0e15, &ioff);
    if (!s) s = mn_gltf_json_size(c, ji, "componentType", pi, 1, 0, 1e9, &ict);
    if (!s) s = mn_gltf_json_index(c, jv, "bufferView", pv, 1, nviews, &vv);
    if (!s) s = mn_gltf_json_size(c, jv, "byteOffset", pv, 0, 0, 9.0e15, &voff);
    if (s) return s;
    int ict_i = (int)ict;
    if (ict_i != GLTF_UNSIGNED_BYTE && ict_i != GLTF_UNSIGNED_SHORT && ict_i != GLTF_UNSIGNED_INT) {
        snprintf(f, sizeof f, "%s.componentType", pi);
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "%d is not an unsigned integer type", ict_i);
    }
    size_t m = (size_t)n;
    double* idx = malloc(m * sizeof *idx);
    int* rows = malloc(m * sizeof *rows);
    if (!idx || !rows) {
        free(idx);
        free(rows);
        return mn_gltf_fail(c, MN_ERR_NOMEM, p, "out of memory");
    }
    const unsigned char* d;
    size_t dl, dst;
    s = get_view(c, iv, &d, &dl, &dst);
    if (!s) s = read_elems(c, pi, d, dl, 0, ioff, m, 1, ict_i, 0, idx, NULL);
    for (size_t i = 0; !s && i < m; i++) {
        if (!(idx[i] < count) || (i > 0 && !(idx[i] > idx[i - 1])))
            s = mn_gltf_fail(c, MN_ERR_PARSE, pi,
                             "index %zu (%.0f) is out of range or not increasing", i, idx[i]);
        else
            rows[i] = (int)idx[i];
    }
    if (!s) s = get_view(c, vv, &d, &dl, &dst);
    if (!s) s = read_elems(c, pv, d, dl, 0, voff, m, ncomp, ct, norm, out, rows);
    free(idx);
    free(rows);
    return s;
}

mn_status mn_gltf_read_accessor(gltf_ctx* c, int index, const char* field, int ncomp,
                                unsigned ct_mask, gltf_norm norm, double** out, int* count,
                                int* ctype) {
    *out = NULL;
    *count = 0;
    const cJSON* accs = cJSON_GetObjectItemCaseSensitive(c->root, "accessors");
    int nacc = mn_gltf_item_count(&c->accessors, accs);
    if (index < 0 || index >= nacc)
        return mn_gltf_fail(c, MN_ERR_PARSE, field, "accessor %d does not exist (%d accessors)",
                            index, nacc);
    char path[32], f[64];
    snprintf(path, sizeof path, "accessors[%d]", index);
    const cJSON* ja = mn_gltf_item(&c->accessors, accs, index);
    if (!cJSON_IsObject(ja)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");

    const cJSON* jt = cJSON_GetObjectItemCaseSensitive(ja, "type");
    snprintf(f, sizeof f, "%s.type", path);
    if (!cJSON_IsString(jt) || !type_ncomp(jt->valuestring))
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "missing or not a glTF accessor type");
    if (type_ncomp(jt->valuestring) != ncomp)
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "%.10s where %s needs %d components",
                            jt->valuestring, field, ncomp);

    double ct, n, off;
    int view;
    int nviews =
        mn_gltf_item_count(&c->views, cJSON_GetObjectItemCaseSensitive(c->root, "bufferViews"));
    mn_status s = mn_gltf_json_size(c, ja, "componentType", path, 1, 0, 1e9, &ct);
    if (!s) s = mn_gltf_json_size(c, ja, "count", path, 1, 0, 1 << 28, &n);
    if (!s) s = mn_gltf_json_size(c, ja, "byteOffset", path, 0, 0, 9.0e15, &off);
    if (!s) s = mn_gltf_json_index(c, ja, "bufferView", path, 0, nviews, &view);
    if (s) return s;
    int ct_i = (int)ct;
    snprintf(f, sizeof f, "%s.componentType", path);
    if (!ctype_size(ct_i))
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "%d is not a glTF component type", ct_i);
    if (!(GLTF_CT(ct_i) & ct_mask))
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "%d is not allowed for %s", ct_i, field);
    snprintf(f, sizeof f, "%s.count", path);
    if (n < 1) return mn_gltf_fail(c, MN_ERR_PARSE, f, "must be at least 1");
    const cJSON* jn = cJSON_GetObjectItemCaseSensitive(ja, "normalized");
    int do_norm = norm == GLTF_NORM_ALWAYS || (norm == GLTF_NORM_AS_STORED && cJSON_IsTrue(jn));
    if (ct_i == GLTF_FLOAT) do_norm = 0;

    size_t cnt = (size_t)n;
    /* The data must be there before anything is allocated for it: a few bytes of JSON must
     * not make the reader ask for gigabytes. An accessor without a bufferView (zeros, maybe
     * with sparse values) has no data to bound it: it is capped at 2^24 numbers. */
    const unsigned char* d = NULL;
    size_t dl = 0, dst = 0;
    if (view >= 0) {
        s = get_view(c, view, &d, &dl, &dst);
        if (!s) s = check_elems(c, f, dl, dst, off, cnt, ncomp, ct_i);
        if (s) return s;
        if (off / ctype_size(ct_i) != floor(off / ctype_size(ct_i)))
            mn_warn(c->warn, c->name, 0, path,
                    "byteOffset %.0f is not aligned to the component size", off);
    } else if (cnt * (size_t)ncomp > ((size_t)1 << 24)) {
        return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, f, "%zu elements without a bufferView: too many",
                            cnt);
    }
    double* buf = calloc(cnt * (size_t)ncomp, sizeof *buf);
    if (!buf) return mn_gltf_fail(c, MN_ERR_NOMEM, path, "out of memory (%zu elements)", cnt);
    if (view >= 0) s = read_elems(c, f, d, dl, dst, off, cnt, ncomp, ct_i, do_norm, buf, NULL);
    const cJSON* sp = cJSON_GetObjectItemCaseSensitive(ja, "sparse");
    if (!s && sp) {
        if (!cJSON_IsObject(sp)) {
            snprintf(f, sizeof f, "%s.sparse", path);
            s = mn_gltf_fail(c, MN_ERR_PARSE, f, "not an object");
        } else {
            s = read_sparse(c, sp, path, (int)cnt, ncomp, ct_i, do_norm, buf);
        }
    }
    if (s) {
        free(buf);
        return s;
    }
    *out = buf;
    *count = (int)cnt;
    if (ctype) *ctype = ct_i;
    return MN_OK;
}
