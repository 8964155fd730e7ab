/* One request in, one answer out: the routes of the HTTP API (docs/editor-server.md), the
 * Host and Origin checks, the versions and preconditions of writes. No sockets here. */
#define _GNU_SOURCE /* strdup, realpath */
#include "editor_server.h"

#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/sequence.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>

/* ---- answers ----------------------------------------------------------------------------- */

void ed_response_free(ed_response* rs) {
    free(rs->body);
    memset(rs, 0, sizeof *rs);
}

static void set_body(ed_response* rs, int status, const char* type, char* body, size_t len) {
    free(rs->body);
    rs->status = status;
    rs->type = type;
    rs->body = body;
    rs->len = len;
}

/* Answers a cJSON value (consumed). */
static void answer_json(ed_response* rs, int status, cJSON* v) {
    char* text = v ? cJSON_PrintUnformatted(v) : NULL;
    cJSON_Delete(v);
    if (!text) {
        set_body(rs, 500, "application/json", strdup("{\"error\":\"out of memory\"}"), 0);
        rs->len = rs->body ? strlen(rs->body) : 0;
        return;
    }
    set_body(rs, status, "application/json", text, strlen(text));
}

static void answer_error(ed_response* rs, int status, const char* msg) {
    cJSON* o = cJSON_CreateObject();
    /* a message may quote bytes of the request: keep only what JSON can carry */
    if (o && !cJSON_AddStringToObject(o, "error", msg)) cJSON_AddStringToObject(o, "error", "?");
    answer_json(rs, status, o);
}

static void answer_errorf(ed_response* rs, int status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void answer_errorf(ed_response* rs, int status, const char* fmt, ...) {
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    answer_error(rs, status, msg);
}

/* ---- the request's parts ------------------------------------------------------------------ */

static const ed_pair* find(const ed_pair* p, int n, const char* key) {
    for (int i = 0; i < n; i++)
        if (p[i].key && !strcasecmp(p[i].key, key)) return &p[i];
    return NULL;
}

static const char* header(const ed_request* rq, const char* key) {
    const ed_pair* p = find(rq->headers, rq->nheaders, key);
    return p && p->value && strlen(p->value) == p->len ? p->value : p ? "" : NULL;
}

static int hex(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into a malloc'd string ('+' is a space in a query); NULL when the
 * encoding is bad or the result would hold a NUL byte (*why says which). */
static char* decode(const char* s, size_t n, int query, const char** why) {
    char* out = malloc(n + 1);
    if (!out) {
        *why = "out of memory";
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 1 < n ? hex(s[i + 1]) : -1, lo = i + 2 < n ? hex(s[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                *why = "a bad percent-encoding";
                free(out);
                return NULL;
            }
            c = hi * 16 + lo;
            i += 2;
        } else if (c == '+' && query) {
            c = ' ';
        }
        if (c == 0) {
            *why = "a NUL byte";
            free(out);
            return NULL;
        }
        out[o++] = (char)c;
    }
    out[o] = 0;
    return out;
}

/* The decoded query argument key (malloc'd), NULL when absent; *bad set when present but
 * not decodable. */
static char* arg(const ed_request* rq, const char* key, const char** bad) {
    const ed_pair* p = find(rq->args, rq->nargs, key);
    if (!p) return NULL;
    const char* why = NULL;
    char* v = p->value ? decode(p->value, p->len, 1, &why) : strdup("");
    if (!v) *bad = why ? why : "out of memory";
    return v;
}

/* ---- checks -------------------------------------------------------------------------------- */

/* Host must name this server (127.0.0.1:PORT or localhost:PORT): a page of another site
 * that a DNS name re-pointed at 127.0.0.1 sends its own name (DNS rebinding). */
static int host_ok(const ed_server* sv, const char* host) {
    if (!host) return 0;
    char a[64], b[64];
    snprintf(a, sizeof a, "127.0.0.1:%d", sv->port);
    snprintf(b, sizeof b, "localhost:%d", sv->port);
    return !strcmp(host, a) || !strcasecmp(host, b);
}

static int origin_ok(const ed_server* sv, const char* origin) {
    if (!origin) return 1; /* not a browser's cross-site request */
    char a[64], b[64];
    snprintf(a, sizeof a, "http://127.0.0.1:%d", sv->port);
    snprintf(b, sizeof b, "http://localhost:%d", sv->port);
    return !strcmp(origin, a) || !strcasecmp(origin, b);
}

/* Compares a candidate with the token in time independent of where they differ. */
static int token_equal(const ed_server* sv, const char* v, size_t n) {
    size_t k = strlen(sv->token);
    unsigned diff = n != k || !k;
    for (size_t i = 0; i < k; i++)
        diff |= (unsigned)(unsigned char)sv->token[i] ^ (unsigned)(unsigned char)(i < n ? v[i] : 0);
    return !diff;
}

/* Does the request carry the token: X-Marionette-Token, Authorization: Bearer or token, or
 * the cookie ED_COOKIE-PORT the page got when it was opened with the token? */
static int token_ok(const ed_server* sv, const ed_request* rq) {
    for (int i = 0; i < rq->nheaders; i++) {
        const ed_pair* h = &rq->headers[i];
        if (!h->key || !h->value || strlen(h->value) != h->len) continue;
        const char* v = h->value;
        if (!strcasecmp(h->key, "X-Marionette-Token") && token_equal(sv, v, h->len)) return 1;
        if (!strcasecmp(h->key, "Authorization")) {
            if (!strncasecmp(v, "Bearer ", 7) || !strncasecmp(v, "token ", 6)) {
                v = strchr(v, ' ') + 1;
                while (*v == ' ')
                    v++;
                if (token_equal(sv, v, strlen(v))) return 1;
            }
        }
        if (!strcasecmp(h->key, "Cookie")) {
            char name[64];
            int nl = snprintf(name, sizeof name, "%s-%d=", ED_COOKIE, sv->port);
            for (const char* c = v; *c;) {
                while (*c == ' ' || *c == ';')
                    c++;
                size_t cl = strcspn(c, ";");
                if (cl > (size_t)nl && !strncmp(c, name, (size_t)nl)) {
                    size_t vl = cl - (size_t)nl;
                    while (vl && c[nl + (int)vl - 1] == ' ')
                        vl--;
                    if (token_equal(sv, c + nl, vl)) return 1;
                }
                c += cl;
            }
        }
    }
    return 0;
}

/* Two Content-Length headers that disagree (RFC 9112 6.3: unrecoverable, the body's end is
 * unknown). */
static int lengths_conflict(const ed_request* rq) {
    const ed_pair* first = NULL;
    for (int i = 0; i < rq->nheaders; i++) {
        const ed_pair* h = &rq->headers[i];
        if (!h->key || strcasecmp(h->key, "Content-Length")) continue;
        if (!first)
            first = h;
        else if (!h->value || !first->value || h->len != first->len ||
                 memcmp(h->value, first->value, h->len))
            return 1;
    }
    return 0;
}

/* The checked project path of argument key, or NULL with the answer made. */
static char* project_path(const ed_request* rq, const char* key, ed_response* rs) {
    const char* bad = NULL;
    char* rel = arg(rq, key, &bad);
    if (!rel) {
        if (bad)
            answer_errorf(rs, 403, "refused: the %s holds %s", key, bad);
        else
            answer_errorf(rs, 400, "missing the query argument %s=", key);
        return NULL;
    }
    const char* why = ed_path_problem(rel, strlen(rel));
    if (why) {
        answer_errorf(rs, 403, "refused: %s", why);
        free(rel);
        return NULL;
    }
    return rel;
}

/* The version in an If-Match value ("\"<16 hex>\"", W/ and quotes optional); 1 when it is
 * "*". Copies at most 16 characters. */
static void etag_value(const char* v, char out[40]) {
    while (*v == ' ')
        v++;
    if (!strncmp(v, "W/", 2)) v += 2;
    size_t n = strlen(v);
    while (n && v[n - 1] == ' ')
        n--;
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') v++, n -= 2;
    if (n > 39) n = 39;
    memcpy(out, v, n);
    out[n] = 0;
}

static int has_ext(const char* s, const char* e) {
    size_t n = strlen(s), k = strlen(e);
    return n > k && !strcasecmp(s + n - k, e);
}

static const char* content_type(const char* rel) {
    static const char* const table[][2] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".wasm", "application/wasm"},
        {".json", "application/json"},
        {".map", "application/json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".jpg", "image/jpeg"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
        {".md", "text/plain; charset=utf-8"},
        {".gltf", "model/gltf+json"},
        {".glb", "model/gltf-binary"},
        {".bvh", "text/plain; charset=utf-8"},
        {".skel", "text/plain; charset=utf-8"},
        {".urdf", "application/xml"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (has_ext(rel, table[i][0])) return table[i][1];
    return "application/octet-stream";
}

/* The type a project file is served with: never one a browser runs (HTML, SVG, XML, script
 * are text/plain or bytes), so that a file uploaded as take.html is data. */
static const char* data_type(const char* rel) {
    const char* t = content_type(rel);
    if (!strncmp(t, "application/json", 16) || !strncmp(t, "model/", 6) ||
        !strcmp(t, "image/png") || !strcmp(t, "image/jpeg") || !strncmp(t, "text/plain", 10))
        return t;
    return "application/octet-stream";
}

/* The folder of rel inside the project, absolute (malloc'd). */
static char* folder_of(const ed_server* sv, const char* rel) {
    const char* slash = strrchr(rel, '/');
    if (!slash) return strdup(sv->project);
    size_t n = strlen(sv->project) + (size_t)(slash - rel) + 2;
    char* p = malloc(n);
    if (p) snprintf(p, n, "%s/%.*s", sv->project, (int)(slash - rel), rel);
    return p;
}

/* ---- routes ---------------------------------------------------------------------------------- */

static void get_asset(ed_server* sv, const char* path, size_t path_len, ed_response* rs) {
    const char* why = NULL;
    char* rel = path_len <= 1 ? strdup("index.html") : decode(path + 1, path_len - 1, 0, &why);
    if (!rel) {
        answer_errorf(rs, why ? 400 : 500, "bad URL: %s", why ? why : "out of memory");
        return;
    }
    const char* bad = ed_path_problem(rel, strlen(rel));
    if (bad) {
        answer_errorf(rs, 403, "refused: %s", bad);
        free(rel);
        return;
    }
    if (!sv->assets) {
        char* text = NULL;
        size_t cap = strlen(sv->assets_tried) + 200;
        text = malloc(cap);
        if (text) {
            snprintf(text, cap,
                     "The editor's page is not built: no folder of its files was found (tried "
                     "%s). Build it with `make web`, or name the folder with --assets DIR.\n",
                     sv->assets_tried);
            set_body(rs, 503, "text/plain; charset=utf-8", text, strlen(text));
        } else {
            answer_error(rs, 500, "out of memory");
        }
        free(rel);
        return;
    }
    char* data;
    size_t len;
    char msg[600];
    int st = ed_read(sv, sv->assets, rel, &data, &len, msg, sizeof msg);
    if (st != 200) {
        answer_error(rs, st, msg);
    } else {
        set_body(rs, 200, content_type(rel), data, len);
        rs->page = 1;
    }
    free(rel);
}

/* The sequence document's "figure" member as a project path, or NULL. */
static char* sequence_figure(ed_server* sv) {
    char *data, msg[300];
    size_t len;
    if (ed_read(sv, sv->project, sv->sequence, &data, &len, msg, sizeof msg) != 200) return NULL;
    cJSON* root = cJSON_ParseWithLength(data, len);
    free(data);
    const cJSON* f = cJSON_GetObjectItemCaseSensitive(root, "figure");
    char* out = NULL;
    if (cJSON_IsString(f) && f->valuestring[0]) {
        const char* slash = strrchr(sv->sequence, '/');
        if (!strcmp(f->valuestring, "stickman") || !slash) {
            out = strdup(f->valuestring);
        } else {
            size_t n = (size_t)(slash - sv->sequence) + strlen(f->valuestring) + 2;
            out = malloc(n);
            if (out)
                snprintf(out, n, "%.*s/%s", (int)(slash - sv->sequence), sv->sequence,
                         f->valuestring);
        }
    }
    cJSON_Delete(root);
    return out;
}

static void get_project(ed_server* sv, ed_response* rs) {
    cJSON* o = cJSON_CreateObject();
    char* fig = sequence_figure(sv);
    cJSON_AddStringToObject(o, "name", sv->name);
    cJSON_AddStringToObject(o, "figure", fig ? fig : sv->figure);
    cJSON_AddStringToObject(o, "sequence", sv->sequence);
    free(fig);
    cJSON* files = ed_list(sv);
    if (!files || !cJSON_AddItemToObject(o, "files", files)) {
        cJSON_Delete(files);
        cJSON_Delete(o);
        answer_error(rs, 500, "out of memory");
        return;
    }
    answer_json(rs, 200, o);
}

static void get_file(ed_server* sv, const ed_request* rq, ed_response* rs) {
    char* rel = project_path(rq, "path", rs);
    if (!rel) return;
    char *data, msg[600];
    size_t len;
    int st = ed_read(sv, sv->project, rel, &data, &len, msg, sizeof msg);
    if (st != 200) {
        answer_error(rs, st, msg);
        free(rel);
        return;
    }
    char ver[17];
    ed_version(data, len, ver);
    set_body(rs, 200, data_type(rel), data, len);
    snprintf(rs->etag, sizeof rs->etag, "\"%s\"", ver);
    /* a project file is data, never a page of this origin: always an attachment (a fetch
     * reads it all the same), under a sandbox CSP (server.c) */
    {
        /* filename: the last component, ASCII letters, digits and ._- only; filename*: all */
        const char* base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
        char ascii[150], enc[400];
        size_t a = 0, e = 0;
        for (const unsigned char* p = (const unsigned char*)base; *p; p++) {
            int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                        (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_';
            if (a + 1 < sizeof ascii) ascii[a++] = plain ? (char)*p : '_';
            if (e + 4 < sizeof enc) {
                if (plain)
                    enc[e++] = (char)*p;
                else
                    e += (size_t)snprintf(enc + e, sizeof enc - e, "%%%02X", *p);
            }
        }
        ascii[a] = enc[e] = 0;
        snprintf(rs->disposition, sizeof rs->disposition,
                 "attachment; filename=\"%s\"; filename*=UTF-8''%s", ascii, enc);
    }
    free(rel);
}

/* The line of byte offset off in text (1-based). */
static int line_of(const char* text, size_t off) {
    int line = 1;
    for (size_t i = 0; i < off; i++)
        if (text[i] == '\n') line++;
    return line;
}

/* Checks a document before it is stored: a .json file is JSON, a sequence document reads
 * (its figure confined to its folder). 0, or 422 with the answer made. */
static int check_document(ed_server* sv, const char* rel, const char* body, size_t len,
                          ed_response* rs) {
    if (!has_ext(rel, ".json")) return 0;
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    if (!root) {
        size_t off = end && end >= body && end <= body + len ? (size_t)(end - body) : 0;
        answer_errorf(rs, 422, "%s:%d: not valid JSON", rel, line_of(body, off));
        return 422;
    }
    int is_seq = cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "keys");
    /* a sequence document of several figures (docs/sequence.md "Several figures") */
    const cJSON* figures =
        cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "figures") : NULL;
    int is_figs = cJSON_IsArray(figures) && /* each figure with its keys: not a scene's */
                  cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(figures, 0), "keys");
    cJSON_Delete(root);
    if (!is_seq && !is_figs) return 0;
    char* dir = folder_of(sv, rel);
    mn_seq_figures* figs = is_seq ? NULL : calloc(1, sizeof *figs);
    if (!dir || (!is_seq && !figs)) {
        free(dir);
        answer_error(rs, 500, "out of memory");
        return 500;
    }
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_error err;
    mn_status st = is_seq ? mn_seq_read_mem(body, len, rel, dir, NULL, NULL, &m, &s, NULL, &err)
                          : mn_seq_read_figures_mem(body, len, rel, dir, NULL, figs, &err);
    free(dir);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    mn_seq_figures_free(figs);
    free(figs);
    if (st != MN_OK) {
        ed_strip_project(sv, err.message);
        answer_error(rs, 422, err.message);
        return 422;
    }
    return 0;
}

/* The precondition of a write or a removal against the current file (cur NULL: none).
 * 0 when it holds, else the answer is made (428, 409). */
static int precondition(const ed_request* rq, const char* rel, const char* cur, int allow_create,
                        ed_response* rs) {
    const char* im = header(rq, "If-Match");
    const char* inm = header(rq, "If-None-Match");
    if (inm && allow_create) {
        char v[40];
        etag_value(inm, v);
        if (strcmp(v, "*")) {
            answer_error(rs, 400, "If-None-Match: only * (create the file) is understood");
            return 400;
        }
        if (!cur) return 0;
    } else if (im) {
        char v[40];
        etag_value(im, v);
        if (cur && (!strcmp(v, "*") || !strcmp(v, cur))) return 0;
    } else {
        answer_errorf(rs, 428,
                      "%s: a write needs If-Match: \"<version>\" (or If-None-Match: * to create "
                      "the file)",
                      rel);
        return 428;
    }
    cJSON* o = cJSON_CreateObject();
    char msg[400];
    snprintf(msg, sizeof msg,
             cur ? "%s: changed since it was read (version %s): reload it, or write again with "
                   "the current version"
                 : "%s: does not exist%s",
             rel, cur ? cur : "");
    cJSON_AddStringToObject(o, "error", msg);
    if (cur)
        cJSON_AddStringToObject(o, "version", cur);
    else
        cJSON_AddNullToObject(o, "version");
    answer_json(rs, 409, o);
    return 409;
}

/* The current version of rel into ver (1), none (0), or an answer made (-1). */
static int current_version(ed_server* sv, const char* rel, char ver[17], ed_response* rs) {
    char *data, msg[600];
    size_t len;
    int st = ed_read(sv, sv->project, rel, &data, &len, msg, sizeof msg);
    if (st == 404) return 0;
    if (st != 200) {
        answer_error(rs, st, msg);
        return -1;
    }
    ed_version(data, len, ver);
    free(data);
    return 1;
}

static void put_file(ed_server* sv, const ed_request* rq, ed_response* rs) {
    char* rel = project_path(rq, "path", rs);
    if (!rel) return;
    if (check_document(sv, rel, rq->body ? rq->body : "", rq->body_len, rs)) {
        free(rel);
        return;
    }
    pthread_mutex_lock(&sv->write_lock);
    char cur[17], msg[600];
    int have = current_version(sv, rel, cur, rs);
    if (have >= 0 && !precondition(rq, rel, have ? cur : NULL, 1, rs)) {
        int st = ed_write(sv, rel, rq->body ? rq->body : "", rq->body_len, msg, sizeof msg);
        if (st) {
            answer_error(rs, st, msg);
        } else {
            char ver[17];
            ed_version(rq->body ? rq->body : "", rq->body_len, ver);
            cJSON* o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "version", ver);
            answer_json(rs, 200, o);
            snprintf(rs->etag, sizeof rs->etag, "\"%s\"", ver);
        }
    }
    pthread_mutex_unlock(&sv->write_lock);
    free(rel);
}

static void delete_file(ed_server* sv, const ed_request* rq, ed_response* rs) {
    char* rel = project_path(rq, "path", rs);
    if (!rel) return;
    pthread_mutex_lock(&sv->write_lock);
    char cur[17], msg[600];
    int have = current_version(sv, rel, cur, rs);
    if (have >= 0 && !precondition(rq, rel, have ? cur : NULL, 0, rs)) {
        int st = ed_remove(sv, rel, msg, sizeof msg);
        if (st)
            answer_error(rs, st, msg);
        else
            answer_json(rs, 200, cJSON_CreateObject());
    }
    pthread_mutex_unlock(&sv->write_lock);
    free(rel);
}

/* The figure document of the figure file rel (in the project) or of the built-in figure. */
static int figure_document(ed_server* sv, const char* rel, const char* data, size_t len, char** doc,
                           size_t* doc_len, ed_response* rs) {
    char* name = ed_join(sv->project, rel);
    if (!name) {
        answer_error(rs, 500, "out of memory");
        return 500;
    }
    mn_error err;
    mn_status st = mn_figure_doc_convert_mem(data, len, name, doc, doc_len, NULL, &err);
    free(name);
    if (st != MN_OK) {
        ed_strip_project(sv, err.message);
        answer_error(rs, st == MN_ERR_NOMEM ? 500 : 422, err.message);
        return 422;
    }
    return 0;
}

/* The figure document of the figure file rel (or of the built-in figure) re-rooted at joint
 * root (mn_model_reroot, Welman 2.1.2: every joint where it is at rest), as a sequence
 * document's "root" asks (docs/sequence.md); no motion, no skin. 0, or the answer made. */
static int rerooted_document(ed_server* sv, const char* rel, const char* data, size_t len,
                             const char* root, char** doc, size_t* doc_len, ed_response* rs) {
    char* name = ed_join(sv->project, rel);
    if (!name) {
        answer_error(rs, 500, "out of memory");
        return 500;
    }
    mn_model *m = NULL, *rm = NULL;
    mn_error err;
    mn_status st = mn_figure_read_mem(data, len, name, &m, NULL, NULL, &err);
    free(name);
    if (st == MN_OK) {
        int j = mn_model_find_joint(m, root);
        if (j < 0)
            st = mn_error_set(&err, MN_ERR_NOTFOUND, rel, 0, "root", "no joint named \"%s\"", root);
        else if (!(rm = mn_model_reroot(m, j, NULL, &err)))
            st = err.status;
    }
    if (st == MN_OK) st = mn_figure_doc_write_mem(rm, NULL, NULL, doc, doc_len, &err);
    mn_model_destroy(rm);
    mn_model_destroy(m);
    if (st != MN_OK) {
        ed_strip_project(sv, err.message);
        answer_error(rs, st == MN_ERR_NOMEM ? 500 : 422, err.message);
        return 422;
    }
    return 0;
}

static void get_figure(ed_server* sv, const ed_request* rq, ed_response* rs) {
    char* rel = project_path(rq, "path", rs);
    if (!rel) return;
    const char* bad = NULL;
    char* root = arg(rq, "root", &bad);
    if (bad) {
        answer_errorf(rs, 400, "root: %s", bad);
        free(rel);
        return;
    }
    char *data = NULL, *doc = NULL, msg[600];
    size_t len = 0, doc_len = 0;
    int st;
    if (!strcmp(rel, "stickman") && !ed_exists(sv, rel)) {
        mn_error err;
        if (root && root[0])
            st = rerooted_document(sv, rel, mn_stickman_text(), strlen(mn_stickman_text()), root,
                                   &doc, &doc_len, rs);
        else if (mn_figure_doc_convert_mem(mn_stickman_text(), strlen(mn_stickman_text()),
                                           "stickman", &doc, &doc_len, NULL, &err) == MN_OK)
            st = 0;
        else
            st = 500, answer_error(rs, 500, err.message);
    } else {
        st = ed_read(sv, sv->project, rel, &data, &len, msg, sizeof msg);
        if (st != 200)
            answer_error(rs, st, msg);
        else if (root && root[0])
            st = rerooted_document(sv, rel, data, len, root, &doc, &doc_len, rs);
        else
            st = figure_document(sv, rel, data, len, &doc, &doc_len, rs);
        if (st == 200) st = 0;
    }
    if (!st) set_body(rs, 200, "application/json", doc, doc_len);
    free(data);
    free(root);
    free(rel);
}

/* {"path": rel, "version": ver} with the figure document text spliced in when given. */
static void answer_stored(ed_response* rs, const char* rel, const char* ver, const char* doc,
                          size_t doc_len) {
    cJSON* o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", rel);
    cJSON_AddStringToObject(o, "version", ver);
    char* text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text) {
        answer_error(rs, 500, "out of memory");
        return;
    }
    size_t tl = strlen(text);
    if (!doc) {
        set_body(rs, 200, "application/json", text, tl);
        return;
    }
    char* all = malloc(tl + doc_len + 16);
    if (!all) {
        free(text);
        answer_error(rs, 500, "out of memory");
        return;
    }
    size_t n = (size_t)snprintf(all, tl + 16, "%.*s,\"figure\":", (int)(tl - 1), text);
    memcpy(all + n, doc, doc_len);
    n += doc_len;
    all[n++] = '}';
    all[n] = 0;
    free(text);
    set_body(rs, 200, "application/json", all, n);
}

static void post_upload(ed_server* sv, const ed_request* rq, ed_response* rs) {
    char* name = project_path(rq, "name", rs);
    if (!name) return;
    if (strchr(name, '/') || name[0] == '.') {
        answer_error(rs, 403, "refused: an upload's name is a file name (no '/', not hidden)");
        free(name);
        return;
    }
    char *doc = NULL, msg[600];
    size_t doc_len = 0;
    if (!rq->body_len) {
        answer_errorf(rs, 422, "%s: empty: not a figure file", name);
        free(name);
        return;
    }
    if (figure_document(sv, name, rq->body, rq->body_len, &doc, &doc_len, rs)) {
        free(name);
        return;
    }
    /* NAME, else NAME-2.ext, NAME-3.ext, ... */
    char rel[ED_MAX_REL + 1];
    const char* dot = strrchr(name, '.');
    size_t stem = dot && dot != name ? (size_t)(dot - name) : strlen(name);
    pthread_mutex_lock(&sv->write_lock);
    snprintf(rel, sizeof rel, "%s", name);
    int k = 2;
    while (ed_exists(sv, rel) && k < 10000) {
        int n = snprintf(rel, sizeof rel, "%.*s-%d%s", (int)stem, name, k++, name + stem);
        if (n > ED_MAX_REL) {
            k = 10000;
            break;
        }
    }
    if (k >= 10000) {
        answer_errorf(rs, 409, "%s: no free name like it", name);
    } else {
        int st = ed_write(sv, rel, rq->body, rq->body_len, msg, sizeof msg);
        if (st) {
            answer_error(rs, st, msg);
        } else {
            char ver[17];
            ed_version(rq->body, rq->body_len, ver);
            answer_stored(rs, rel, ver, doc, doc_len);
        }
    }
    pthread_mutex_unlock(&sv->write_lock);
    free(doc);
    free(name);
}

static void post_export(ed_server* sv, const ed_request* rq, ed_response* rs) {
    char* rel = project_path(rq, "sequence", rs);
    if (!rel) return;
    const char* bad = NULL;
    char* fmt = arg(rq, "format", &bad);
    int glb = fmt && !strcmp(fmt, "glb");
    if (!fmt || (!glb && strcmp(fmt, "bvh"))) {
        answer_error(rs, 400, "format= must be bvh or glb");
        free(fmt);
        free(rel);
        return;
    }
    free(fmt);
    char *text = NULL, msg[600];
    size_t len = 0;
    int st = ed_read(sv, sv->project, rel, &text, &len, msg, sizeof msg);
    if (st != 200) {
        answer_error(rs, st, msg);
        free(rel);
        return;
    }
    char* dir = folder_of(sv, rel);
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_gltf skin;
    memset(&skin, 0, sizeof skin);
    mn_error err;
    mn_status ms = dir ? mn_seq_read_skin_mem(text, len, rel, dir, NULL, &m, &s, NULL,
                                              glb ? &skin : NULL, &err)
                       : mn_error_set(&err, MN_ERR_NOMEM, "", 0, "", "out of memory");
    free(text);
    free(dir);
    mn_motion mo;
    memset(&mo, 0, sizeof mo);
    mn_seq_bake_options bo = mn_seq_bake_default();
    bo.max_frames = ED_MAX_EXPORT_FRAMES;
    bo.cancel = &sv->stopping;
    if (ms == MN_OK) ms = mn_seq_bake(s, m, &bo, &mo, NULL, &err);
    if (ms != MN_OK) {
        ed_strip_project(sv, err.message);
        answer_error(rs, ms == MN_ERR_NOMEM ? 500 : sv->stopping ? 503 : 422, err.message);
    } else {
        /* exports/<the sequence's name without .json>.bvh|.glb */
        const char* base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
        size_t stem = has_ext(base, ".json") ? strlen(base) - 5 : strlen(base);
        char out[ED_MAX_REL + 32];
        snprintf(out, sizeof out, "exports/%.*s.%s", (int)stem, base, glb ? "glb" : "bvh");
        pthread_mutex_lock(&sv->write_lock);
        st = ed_check_write_path(sv, out, 1, msg, sizeof msg);
        char* path = st ? NULL : ed_join(sv->project, out);
        if (!st && path) {
            ms = glb ? mn_gltf_write(path, m, &mo, skin.nverts > 0 ? &skin : NULL, &err)
                     : mn_bvh_write(path, m, &mo, &err);
            if (ms != MN_OK) {
                ed_strip_project(sv, err.message);
                answer_error(rs, 500, err.message);
            } else {
                char *data, ver[17];
                size_t dl;
                st = ed_read(sv, sv->project, out, &data, &dl, msg, sizeof msg);
                if (st != 200) {
                    answer_error(rs, st, msg);
                } else {
                    ed_version(data, dl, ver);
                    free(data);
                    answer_stored(rs, out, ver, NULL, 0);
                }
            }
        } else {
            answer_error(rs, st ? st : 500, st ? msg : "out of memory");
        }
        free(path);
        pthread_mutex_unlock(&sv->write_lock);
    }
    mn_motion_free(&mo);
    mn_gltf_free(&skin);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    free(rel);
}

/* ---- the API's routes ---------------------------------------------------------------------- */

static void get_project_route(ed_server* sv, const ed_request* rq, ed_response* rs) {
    (void)rq;
    get_project(sv, rs);
}

/* One row per path and method (docs/editor-server.md); HEAD is answered as GET. A path
 * asked with a method it has no row for gets 405 with the Allow list of its rows. */
static const struct {
    const char* path;
    const char* method;
    void (*handle)(ed_server* sv, const ed_request* rq, ed_response* rs);
} routes[] = {
    {"/api/project", "GET", get_project_route},
    {"/api/file", "GET", get_file},
    {"/api/file", "PUT", put_file},
    {"/api/file", "DELETE", delete_file},
    {"/api/figure", "GET", get_figure},
    {"/api/upload", "POST", post_upload},
    {"/api/export", "POST", post_export},
};

static void route(ed_server* sv, const ed_request* rq, ed_response* rs, const char* method,
                  const char* path) {
    const char* as = !strcmp(method, "HEAD") ? "GET" : method;
    int known = 0;
    size_t n = 0;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(path, routes[i].path)) continue;
        if (!strcmp(as, routes[i].method)) {
            routes[i].handle(sv, rq, rs);
            return;
        }
        known = 1;
        int get = !strcmp(routes[i].method, "GET");
        int w = snprintf(rs->allow + n, sizeof rs->allow - n, "%s%s%s", n ? ", " : "",
                         routes[i].method, get ? ", HEAD" : "");
        if (w > 0 && (size_t)w < sizeof rs->allow - n) n += (size_t)w;
    }
    if (!known) {
        answer_error(rs, 404, "no such API route (see docs/editor-server.md)");
        return;
    }
    answer_errorf(rs, 405, "%s %s: method not allowed (allowed: %s)",
                  strlen(method) < 16 ? method : "this method", path, rs->allow);
}

int ed_refused_before_body(const ed_server* sv, const ed_request* rq) {
    const char* path = rq->path ? rq->path : "";
    const char* method = rq->method ? rq->method : "";
    int write = !strcmp(method, "PUT") || !strcmp(method, "POST") || !strcmp(method, "DELETE");
    int api = !strncmp(path, "/api/", 5) || !strcmp(path, "/api");
    return !host_ok(sv, header(rq, "Host")) || lengths_conflict(rq) ||
           (write && !origin_ok(sv, header(rq, "Origin"))) || (api && !token_ok(sv, rq));
}

void ed_handle(ed_server* sv, const ed_request* rq, ed_response* rs) {
    memset(rs, 0, sizeof *rs);
    const char* method = rq->method ? rq->method : "";
    const char* path = rq->path ? rq->path : "";
    size_t plen = rq->path ? rq->path_len : 0;
    if (!host_ok(sv, header(rq, "Host"))) {
        answer_errorf(rs, 403,
                      "refused: the Host header must be 127.0.0.1:%d or localhost:%d (a page of "
                      "another site may not reach this server)",
                      sv->port, sv->port);
        return;
    }
    if (lengths_conflict(rq)) {
        answer_error(rs, 400, "refused: two Content-Length headers that disagree");
        rs->close = 1;
        return;
    }
    if (rq->body_too_large) {
        answer_errorf(rs, 413, "refused: a request body is at most %zu bytes", ED_MAX_BODY);
        return;
    }
    if (plen == 0 || path[0] != '/' || strlen(path) != plen) {
        answer_error(rs, 400, "bad URL path");
        return;
    }
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    int write = !strcmp(method, "PUT") || !strcmp(method, "POST") || !strcmp(method, "DELETE");
    if (write && !origin_ok(sv, header(rq, "Origin"))) {
        answer_errorf(rs, 403, "refused: a write from another origin (only http://127.0.0.1:%d)",
                      sv->port);
        return;
    }
    if (strncmp(path, "/api/", 5) && strcmp(path, "/api")) {
        if (!get) {
            snprintf(rs->allow, sizeof rs->allow, "GET, HEAD");
            answer_errorf(rs, 405, "%s: the page's files are read with GET", method);
            return;
        }
        /* the page opened with ?token=TOKEN (the URL the server printed) gets the token as a
         * cookie its requests carry from then on; a wrong token is refused */
        const char* bad = NULL;
        char* tok = arg(rq, "token", &bad);
        if (tok || bad) {
            int ok = tok && token_equal(sv, tok, strlen(tok));
            free(tok);
            if (!ok) {
                answer_error(rs, 403,
                             "refused: a wrong token (open the URL the server printed, with "
                             "its ?token=)");
                return;
            }
            snprintf(rs->cookie, sizeof rs->cookie, "%s-%d=%s; Path=/; HttpOnly; SameSite=Strict",
                     ED_COOKIE, sv->port, sv->token);
        }
        get_asset(sv, path, plen, rs);
        return;
    }
    if (!token_ok(sv, rq)) {
        answer_error(rs, 403,
                     "refused: no valid token (open the URL the server printed, with its "
                     "?token=; a script sends X-Marionette-Token: TOKEN)");
        return;
    }
    route(sv, rq, rs, method, path);
}

/* ---- the server's set-up ----------------------------------------------------------------------
 */

/* The first (by name) .json file in the project folder that is a sequence document. */
static char* first_sequence(const ed_server* sv) {
    struct dirent** list = NULL;
    int n = scandir(sv->project, &list, NULL, alphasort);
    char* found = NULL;
    for (int i = 0; i < n; i++) {
        const char* nm = list[i]->d_name;
        if (!found && nm[0] != '.' && has_ext(nm, ".json") && strcmp(nm, "editor.json") &&
            !ed_path_problem(nm, strlen(nm))) {
            char *data, msg[300];
            size_t len;
            if (ed_read(sv, sv->project, nm, &data, &len, msg, sizeof msg) == 200) {
                if (!strcmp(ed_kind(nm, data, len), "sequence")) found = strdup(nm);
                free(data);
            }
        }
        free(list[i]);
    }
    free(list);
    return found;
}

/* editor.json's "sequence" when it is a project path. */
static char* settings_sequence(const ed_server* sv) {
    char *data, msg[300];
    size_t len;
    if (ed_read(sv, sv->project, "editor.json", &data, &len, msg, sizeof msg) != 200) return NULL;
    cJSON* root = cJSON_ParseWithLength(data, len);
    free(data);
    const cJSON* s = cJSON_GetObjectItemCaseSensitive(root, "sequence");
    char* out = NULL;
    if (cJSON_IsString(s) && !ed_path_problem(s->valuestring, strlen(s->valuestring)))
        out = strdup(s->valuestring);
    cJSON_Delete(root);
    return out;
}

int ed_server_init(ed_server* sv, const char* project, const char* assets, const char* figure,
                   const char* sequence, int port, char* why, size_t cap) {
    memset(sv, 0, sizeof *sv);
    sv->port = port;
    unsigned char rnd[32];
    size_t got = 0;
    while (got < sizeof rnd) {
        ssize_t n = getrandom(rnd + got, sizeof rnd - got, 0);
        if (n <= 0) {
            snprintf(why, cap, "no random bytes for the token (getrandom)");
            return -1;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(sv->token + 2 * i, 3, "%02x", rnd[i]);
    sv->project = realpath(project, NULL);
    struct stat st;
    if (!sv->project || stat(sv->project, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, cap, "%s: not a folder", project);
        ed_server_free(sv);
        return -1;
    }
    const char* slash = strrchr(sv->project, '/');
    sv->name = strdup(slash && slash[1] ? slash + 1 : sv->project);
    sv->assets = assets ? realpath(assets, NULL) : NULL;
    sv->assets_tried = strdup("");
    sv->figure = strdup(figure ? figure : "stickman");
    if (sequence)
        sv->sequence = strdup(sequence);
    else if (!(sv->sequence = settings_sequence(sv)) && !(sv->sequence = first_sequence(sv)))
        sv->sequence = strdup("sequence.json");
    pthread_mutex_init(&sv->write_lock, NULL);
    pthread_mutex_init(&sv->list_lock, NULL);
    if (!sv->name || !sv->figure || !sv->sequence || !sv->assets_tried) {
        snprintf(why, cap, "out of memory");
        ed_server_free(sv);
        return -1;
    }
    return 0;
}

void ed_server_free(ed_server* sv) {
    if (sv->sequence) {
        pthread_mutex_destroy(&sv->write_lock);
        pthread_mutex_destroy(&sv->list_lock);
    }
    ed_list_forget(sv);
    free(sv->project);
    free(sv->name);
    free(sv->assets);
    free(sv->assets_tried);
    free(sv->figure);
    free(sv->sequence);
    memset(sv, 0, sizeof *sv);
}
