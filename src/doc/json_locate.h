/* Reading JSON documents with cJSON and naming the file, line and field of any error: the
 * locating scanner, the typed member readers and the handle and constraint members that the
 * scene and sequence documents share (docs/scene.md, docs/sequence.md), as static functions,
 * so that both read them alike and give the same messages.
 *
 * cJSON keeps no line numbers, so a failing field is found again in the text by walking
 * the same path (members and elements) with a small scanner. */
#ifndef MN_DOC_JSON_LOCATE_H
#define MN_DOC_JSON_LOCATE_H

#include <marionette/base.h>
#include <marionette/constrain.h>
#include <marionette/math.h>

#include <cjson/cJSON.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "doc/doc_internal.h"

/* ---- locating a field in the text ------------------------------------------------------ */

typedef struct comp {
    const char* key; /* member name, or NULL for an array element */
    int index;
} comp;

static inline size_t skip_ws(const char* t, size_t n, size_t i) {
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

static inline size_t skip_string(const char* t, size_t n, size_t i) {
    i++;
    while (i < n && t[i] != '"')
        i += t[i] == '\\' ? 2 : 1;
    return i < n ? i + 1 : n;
}

static inline size_t skip_value(const char* t, size_t n, size_t i) {
    i = skip_ws(t, n, i);
    if (i >= n) return n;
    if (t[i] == '"') return skip_string(t, n, i);
    if (t[i] == '{' || t[i] == '[') {
        int depth = 0;
        while (i < n) {
            if (t[i] == '"') {
                i = skip_string(t, n, i);
                continue;
            }
            if (t[i] == '{' || t[i] == '[')
                depth++;
            else if (t[i] == '}' || t[i] == ']') {
                if (--depth == 0) return i + 1;
            }
            i++;
        }
        return n;
    }
    while (i < n && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' && t[i] != '\n' &&
           t[i] != '\r' && t[i] != '\t')
        i++;
    return i;
}

/* Past the value at *i and the ',' after it: 1, or 0 at the end of its container (or of a
 * malformed text). */
static inline int skip_item(const char* t, size_t n, size_t* i) {
    *i = skip_ws(t, n, skip_value(t, n, *i));
    if (*i >= n || t[*i] != ',') return 0;
    (*i)++;
    return 1;
}

/* Offset of the deepest part of the path found (the member's key, or the element). */
static inline size_t locate(const char* t, size_t n, const comp* c, int nc) {
    size_t i = skip_ws(t, n, 0), best = i;
    for (int k = 0; k < nc; k++) {
        i = skip_ws(t, n, i);
        if (i >= n) return best;
        if (c[k].key) {
            if (t[i] != '{') return best;
            i++;
            size_t klen = strlen(c[k].key);
            int found = 0;
            while (i < n) {
                i = skip_ws(t, n, i);
                if (i >= n || t[i] != '"') return best;
                size_t ks = i;
                size_t ke = skip_string(t, n, i);
                int match = ke - ks == klen + 2 && !strncmp(t + ks + 1, c[k].key, klen);
                i = skip_ws(t, n, ke);
                if (i >= n || t[i] != ':') return best;
                i = skip_ws(t, n, i + 1);
                if (match) {
                    best = ks;
                    found = 1;
                    break;
                }
                if (!skip_item(t, n, &i)) return best;
            }
            if (!found) return best;
        } else {
            if (t[i] != '[') return best;
            i++;
            for (int e = 0;; e++) {
                i = skip_ws(t, n, i);
                if (i >= n || t[i] == ']') return best;
                if (e == c[k].index) {
                    best = i;
                    break;
                }
                if (!skip_item(t, n, &i)) return best;
            }
        }
    }
    return best;
}

static inline int line_of(const char* t, size_t n, size_t off) {
    int line = 1;
    for (size_t i = 0; i < off && i < n; i++)
        if (t[i] == '\n') line++;
    return line;
}

/* The document's JSON tree, or NULL with a syntax error set on err at cJSON's stopping
 * point (field "json"), or at the second of two members of one object with the same name. */
static inline cJSON* parse_json(const char* text, size_t len, const char* file, mn_error* err) {
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        mn_error_set(err, MN_ERR_PARSE, file, line_of(text, len, off), "json",
                     "malformed JSON near byte %zu", off);
        return NULL;
    }
    size_t second, first;
    if (mn_json_duplicate(text, len, &second, &first)) {
        size_t k = 1;
        while (second + k < len && text[second + k] != '"' && k < 60)
            k += text[second + k] == '\\' ? 2 : 1;
        mn_error_set(err, MN_ERR_PARSE, file, line_of(text, len, second), "json",
                     "member %.*s\" given a second time in one object (the first at line %d): "
                     "which one counts would be a guess",
                     (int)(k < 60 ? k : 60), text + second, line_of(text, len, first));
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* The reading context: the text, the path of the value being read (at most MN_CTX_DEPTH
 * members and indices deep are named: a pose's value in a layer of a figure of a sequence
 * document is ten; deeper ones count but are not recorded). */
#define MN_CTX_DEPTH 16
typedef struct ctx {
    const char* file;
    const char* text;
    size_t len;
    comp path[MN_CTX_DEPTH];
    int depth;
    mn_error* err;
    const char* doc;           /* the field named when the fault is the document itself ("scene") */
    const mn_doc_files* files; /* the files a document names (a sequence's figure) */
} ctx;

static inline void push_key(ctx* x, const char* key) {
    if (x->depth >= 0 && x->depth < MN_CTX_DEPTH) {
        x->path[x->depth].key = key;
        x->path[x->depth].index = 0;
    }
    x->depth++;
}
static inline void push_index(ctx* x, int i) {
    if (x->depth >= 0 && x->depth < MN_CTX_DEPTH) {
        x->path[x->depth].key = NULL;
        x->path[x->depth].index = i;
    }
    x->depth++;
}
/* The depth recorded in x->path. */
static inline int ctx_depth(const ctx* x) {
    return x->depth < MN_CTX_DEPTH ? x->depth : MN_CTX_DEPTH;
}
static inline void pop(ctx* x) {
    x->depth--;
}

static inline void path_string(const ctx* x, char* out, size_t cap) {
    size_t o = 0;
    out[0] = 0;
    for (int k = 0; k < ctx_depth(x) && o < cap; k++) {
        if (x->path[k].key)
            o += (size_t)snprintf(out + o, cap - o, "%s%s", k ? "." : "", x->path[k].key);
        else
            o += (size_t)snprintf(out + o, cap - o, "[%d]", x->path[k].index);
    }
}

static inline mn_status fail(ctx* x, mn_status st, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static inline mn_status fail(ctx* x, mn_status st, const char* fmt, ...) {
    char field[64];
    path_string(x, field, sizeof field);
    int line = line_of(x->text, x->len, locate(x->text, x->len, x->path, ctx_depth(x)));
    va_list ap;
    va_start(ap, fmt);
    mn_io_errorv(x->err, st, x->file, line, field[0] ? field : (x->doc ? x->doc : "scene"), fmt,
                 ap);
    va_end(ap);
    return st;
}

/* ---- typed members --------------------------------------------------------------------- */

static inline mn_status get_vec(ctx* x, const cJSON* o, const char* key, double* out, int n,
                                int* present) {
    const cJSON* it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (present) *present = it != NULL;
    if (!it) return MN_OK;
    push_key(x, key);
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != n)
        return fail(x, MN_ERR_PARSE, "expected an array of %d numbers", n);
    int k = 0;
    const cJSON* e;
    cJSON_ArrayForEach(e, it) {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
            push_index(x, k);
            return fail(x, MN_ERR_PARSE, "not a finite number");
        }
        out[k++] = e->valuedouble;
    }
    pop(x);
    return MN_OK;
}

static inline mn_status get_v3(ctx* x, const cJSON* o, const char* key, mn_vec3* v, int* present) {
    double a[3];
    mn_status st = get_vec(x, o, key, a, 3, present);
    if (st == MN_OK && (!present || *present)) *v = mn_v3(a[0], a[1], a[2]);
    return st;
}

static inline mn_status get_num(ctx* x, const cJSON* o, const char* key, double* v, double lo,
                                double hi) {
    const cJSON* it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) return MN_OK;
    push_key(x, key);
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
        return fail(x, MN_ERR_PARSE, "expected a finite number");
    if (it->valuedouble < lo || it->valuedouble > hi)
        return fail(x, MN_ERR_PARSE, "must be in [%g, %g]", lo, hi);
    *v = it->valuedouble;
    pop(x);
    return MN_OK;
}

static inline mn_status get_int(ctx* x, const cJSON* o, const char* key, int* v, int lo, int hi) {
    double d = *v;
    mn_status st = get_num(x, o, key, &d, lo, hi);
    if (st != MN_OK) return st;
    if (d != floor(d)) {
        push_key(x, key);
        return fail(x, MN_ERR_PARSE, "expected an integer");
    }
    *v = (int)d;
    return MN_OK;
}

static inline mn_status get_bool(ctx* x, const cJSON* o, const char* key, int* v) {
    const cJSON* it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) return MN_OK;
    push_key(x, key);
    if (!cJSON_IsBool(it)) return fail(x, MN_ERR_PARSE, "expected true or false");
    *v = cJSON_IsTrue(it);
    pop(x);
    return MN_OK;
}

/* A string member copied into out (cap bytes); required when req. */
static inline mn_status get_str(ctx* x, const cJSON* o, const char* key, char* out, size_t cap,
                                int req, int* present) {
    const cJSON* it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (present) *present = it != NULL;
    if (!it) {
        if (!req) return MN_OK;
        return fail(x, MN_ERR_PARSE, "missing member \"%s\"", key);
    }
    push_key(x, key);
    if (!cJSON_IsString(it) || !it->valuestring[0])
        return fail(x, MN_ERR_PARSE, "expected a non-empty string");
    if (strlen(it->valuestring) >= cap)
        return fail(x, MN_ERR_PARSE, "longer than %zu characters", cap - 1);
    memcpy(out, it->valuestring, strlen(it->valuestring) + 1);
    pop(x);
    return MN_OK;
}

/* Every member of o must be one of the allowed keys (a typo is an error, not a default). */
static inline mn_status check_keys(ctx* x, const cJSON* o, const char* const* keys) {
    const cJSON* it;
    cJSON_ArrayForEach(it, o) {
        int ok = 0;
        for (int k = 0; keys[k] && !ok; k++)
            ok = !strcmp(it->string, keys[k]);
        if (!ok) {
            push_key(x, it->string);
            return fail(x, MN_ERR_PARSE, "unknown member \"%s\"", it->string);
        }
    }
    return MN_OK;
}

/* Pushes key and checks that a is an array of at most max entries (what names them, NULL:
 * "entries"), its size in *n. The key stays pushed. */
static inline mn_status enter_array(ctx* x, const cJSON* a, const char* key, int max,
                                    const char* what, int* n) {
    push_key(x, key);
    *n = 0;
    if (!cJSON_IsArray(a))
        return fail(x, MN_ERR_PARSE, "expected an array%s%s", what ? " of " : "", what ? what : "");
    *n = cJSON_GetArraySize(a);
    if (*n > max) return fail(x, MN_ERR_PARSE, "more than %d %s", max, what ? what : "entries");
    return MN_OK;
}

/* A quaternion member [w, x, y, z], not zero. */
static inline mn_status get_quat(ctx* x, const cJSON* o, const char* key, double* q, int* present) {
    mn_status st = get_vec(x, o, key, q, 4, present);
    if (st != MN_OK || (present && !*present)) return st;
    if (!(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] > 1e-18)) {
        push_key(x, key);
        return fail(x, MN_ERR_PARSE, "zero quaternion");
    }
    return MN_OK;
}

/* ---- handles and constraints (scene and sequence documents) ------------------------------ */

/* A member naming a handle: find(owner, name) gives its index, -1 when there is none. */
static inline mn_status get_handle_ref(ctx* x, const cJSON* o, const char* key, int req,
                                       int (*find)(const void* owner, const char* name),
                                       const void* owner, int* out) {
    char name[64];
    int present = 0;
    mn_status st = get_str(x, o, key, name, sizeof name, req, &present);
    if (st != MN_OK || !present) return st;
    *out = find(owner, name);
    if (*out < 0) {
        push_key(x, key);
        return fail(x, MN_ERR_NOTFOUND, "no handle named \"%s\"", name);
    }
    return MN_OK;
}

/* A handle's "type" member (point when absent). */
static inline mn_status get_handle_type(ctx* x, const cJSON* o, mn_handle_type* type) {
    char name[32] = "point";
    mn_status st = get_str(x, o, "type", name, sizeof name, 0, NULL);
    if (st != MN_OK) return st;
    if (!strcmp(name, "point"))
        *type = MN_HANDLE_POINT;
    else if (!strcmp(name, "orientation"))
        *type = MN_HANDLE_ORIENT;
    else if (!strcmp(name, "com"))
        *type = MN_HANDLE_COM;
    else {
        push_key(x, "type");
        return fail(x, MN_ERR_PARSE, "unknown handle type \"%s\" (point, orientation, com)", name);
    }
    return MN_OK;
}

/* A handle's "point" member, which only a point handle has (left as it is when absent). */
static inline mn_status get_handle_point(ctx* x, const cJSON* o, mn_handle_type type,
                                         mn_vec3* point) {
    int has = 0;
    mn_status st = get_v3(x, o, "point", point, &has);
    if (st != MN_OK) return st;
    if (has && type != MN_HANDLE_POINT) {
        push_key(x, "point");
        return fail(x, MN_ERR_PARSE, "only a point handle has a point");
    }
    return MN_OK;
}

/* A constraint's required "type" member: its name into type (32 bytes) and d->type. */
static inline mn_status get_con_type(ctx* x, const cJSON* o, char* type, mn_constraint_def* d) {
    mn_status st = get_str(x, o, "type", type, 32, 1, NULL);
    if (st != MN_OK) return st;
    int t = mn_constraint_type_parse(type);
    if (t < 0) {
        push_key(x, "type");
        return fail(x, MN_ERR_PARSE,
                    "unknown constraint type \"%s\" (pin, plane, line, orient, equal, balance)",
                    type);
    }
    d->type = (mn_constraint_type)t;
    return MN_OK;
}

/* The constraint's handle (of type ht, named hname) must suit it: an orientation
 * constraint takes an orientation handle and no other does; then the members every
 * constraint has: weight, priority, enabled. */
static inline mn_status get_con_common(ctx* x, const cJSON* o, const char* type, mn_handle_type ht,
                                       const char* hname, mn_constraint_def* d) {
    if ((d->type == MN_CON_ORIENT) != (ht == MN_HANDLE_ORIENT)) {
        push_key(x, "handle");
        return fail(x, MN_ERR_PARSE, "a %s constraint cannot take the %s handle \"%s\"", type,
                    mn_handle_type_name(ht), hname);
    }
    mn_status st;
    if ((st = get_num(x, o, "weight", &d->weight, 1e-12, 1e12)) != MN_OK) return st;
    if ((st = get_int(x, o, "priority", &d->priority, 0, 1000)) != MN_OK) return st;
    if ((st = get_bool(x, o, "enabled", &d->enabled)) != MN_OK) return st;
    /* orient: "axis" "x", "y" or "z" holds only that axis's direction (Welman 6.3) */
    const cJSON* a = cJSON_GetObjectItemCaseSensitive(o, "axis");
    if (!a || d->type != MN_CON_ORIENT) return MN_OK;
    push_key(x, "axis");
    const char* s = cJSON_IsString(a) ? a->valuestring : NULL;
    if (!s || !s[0] || s[1] || !strchr("xyz", s[0]))
        return fail(x, MN_ERR_PARSE, "expected \"x\", \"y\" or \"z\"");
    d->axis = 1 + (int)(strchr("xyz", s[0]) - "xyz");
    pop(x);
    return MN_OK;
}

/* A balance constraint's members: the support polygon (3 to MN_MAX_POLYGON [x, y, z]
 * points), the up direction (not zero) and the margin. */
static inline mn_status get_con_balance(ctx* x, const cJSON* o, mn_constraint_def* d) {
    const cJSON* p = cJSON_GetObjectItemCaseSensitive(o, "polygon");
    push_key(x, "polygon");
    if (!p) return fail(x, MN_ERR_PARSE, "missing support polygon");
    if (!cJSON_IsArray(p)) return fail(x, MN_ERR_PARSE, "expected an array of [x, y, z] points");
    int n = cJSON_GetArraySize(p);
    if (n == 0) return fail(x, MN_ERR_PARSE, "empty support polygon");
    if (n < 3 || n > MN_MAX_POLYGON)
        return fail(x, MN_ERR_PARSE, "support polygon needs 3 to %d points, has %d", MN_MAX_POLYGON,
                    n);
    for (int k = 0; k < n; k++) {
        push_index(x, k);
        const cJSON* e = cJSON_GetArrayItem(p, k);
        int ok = cJSON_IsArray(e) && cJSON_GetArraySize(e) == 3;
        double a[3] = {0, 0, 0};
        for (int j = 0; ok && j < 3; j++) {
            const cJSON* v = cJSON_GetArrayItem(e, j);
            ok = cJSON_IsNumber(v) && isfinite(v->valuedouble);
            if (ok) a[j] = v->valuedouble;
        }
        if (!ok) return fail(x, MN_ERR_PARSE, "expected [x, y, z] with finite numbers");
        pop(x);
        d->polygon[k] = mn_v3(a[0], a[1], a[2]);
    }
    pop(x);
    d->npolygon = n;
    int has = 0;
    mn_status st = get_v3(x, o, "up", &d->up, &has);
    if (st != MN_OK) return st;
    if (has && !(mn_vec3_norm(d->up) > 1e-12)) {
        push_key(x, "up");
        return fail(x, MN_ERR_PARSE, "zero up direction");
    }
    return get_num(x, o, "margin", &d->margin, 0, 1e6);
}

/* Members that belong to other constraint types are errors, not silently ignored: only[k]
 * is {member, the types it belongs to ("pin/orient")}. */
static inline mn_status check_con_members(ctx* x, const cJSON* o, const char* type,
                                          const char* const (*only)[2], size_t n) {
    for (size_t k = 0; k < n; k++) {
        if (!cJSON_GetObjectItemCaseSensitive(o, only[k][0]) || strstr(only[k][1], type)) continue;
        push_key(x, only[k][0]);
        return fail(x, MN_ERR_PARSE, "\"%s\" belongs to %s constraints, not %s", only[k][0],
                    only[k][1], type);
    }
    return MN_OK;
}

#endif
