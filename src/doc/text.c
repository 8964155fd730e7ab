/* The helpers the readers and writers of documents share, on memory only: text buffers,
 * warnings, the error setter, the UTF-8 checks, the name map, the relative-URI check, the
 * number parser (moved from io's file.c; the files themselves are io's). */
#include "doc/doc_internal.h"

#include "core/format_double.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mn_motion_free(mn_motion* mo) {
    if (!mo) return;
    free(mo->q);
    memset(mo, 0, sizeof *mo);
}

static int hex_digit(int ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

mn_status mn_uri_relative(const char* uri, char** rel_out, mn_error* err) {
    *rel_out = NULL;
    size_t n = strlen(uri), slash = strcspn(uri, "/");
    if (n == 0) return mn_error_set(err, MN_ERR_PARSE, uri, 0, "", "empty URI");
    /* A ':' before the first '/' is a scheme (RFC 3986 4.2): only relative references. */
    if (memchr(uri, ':', slash))
        return mn_error_set(err, MN_ERR_UNSUPPORTED, uri, 0, "",
                            "only relative file URIs are read");
    /* Percent-decode first, so that no check can be passed by an encoded '/', '.' or '\'. */
    char* rel = malloc(n + 1);
    if (!rel) return mn_error_set(err, MN_ERR_NOMEM, uri, 0, "", "out of memory");
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (uri[i] != '%') {
            rel[o++] = uri[i];
            continue;
        }
        int hi = i + 1 < n ? hex_digit(uri[i + 1]) : -1;
        int lo = hi >= 0 && i + 2 < n ? hex_digit(uri[i + 2]) : -1;
        if (lo < 0 || (hi == 0 && lo == 0)) {
            free(rel);
            return mn_error_set(err, MN_ERR_PARSE, uri, 0, "", "invalid percent-encoding");
        }
        rel[o++] = (char)(hi * 16 + lo);
        i += 2;
    }
    rel[o] = 0;
    const char* why = NULL;
    if (rel[0] == '/')
        why = "an absolute path: only paths inside the file's folder are read";
    else if (strchr(rel, '\\'))
        why = "a backslash: only '/' separates folders";
    else
        for (const char* seg = rel; *seg;) {
            size_t sl = strcspn(seg, "/");
            if (sl == 2 && seg[0] == '.' && seg[1] == '.') {
                why = "a '..' segment: only paths inside the file's folder are read";
                break;
            }
            seg += sl;
            if (*seg) seg++;
        }
    if (why) {
        free(rel);
        return mn_error_set(err, MN_ERR_UNSUPPORTED, uri, 0, "", "refused: %s", why);
    }
    *rel_out = rel;
    return MN_OK;
}

mn_status mn_io_errorv(mn_error* err, mn_status s, const char* file, int line, const char* field,
                       const char* fmt, va_list ap) {
    char text[400];
    vsnprintf(text, sizeof text, fmt, ap);
    return mn_error_set(err, s, file, line, field, "%s", text);
}

int mn_utf8_len(const unsigned char* s, size_t n) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int len;
    unsigned cp;
    if ((c & 0xE0) == 0xC0)
        len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0)
        len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if ((size_t)len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

int mn_utf8_text(const char* s, size_t n) {
    const unsigned char* u = (const unsigned char*)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x20 || u[i] == 0x7F) return 0;
        int l = mn_utf8_len(u + i, n - i);
        if (!l) return 0;
        i += (size_t)l;
    }
    return 1;
}

static size_t name_hash(const char* s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)(h ^ (h >> 32));
}

int mn_name_map_init(mn_name_map* m, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    m->key = calloc(cap, sizeof *m->key);
    m->val = malloc(cap * sizeof *m->val);
    m->mask = cap - 1;
    if (!m->key || !m->val) {
        mn_name_map_free(m);
        return 0;
    }
    return 1;
}

void mn_name_map_free(mn_name_map* m) {
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

int mn_name_map_get(const mn_name_map* m, const char* key) {
    for (size_t i = name_hash(key) & m->mask; m->key[i]; i = (i + 1) & m->mask)
        if (!strcmp(m->key[i], key)) return m->val[i];
    return -1;
}

int mn_name_map_put(mn_name_map* m, const char* key, int val) {
    size_t i = name_hash(key) & m->mask;
    for (; m->key[i]; i = (i + 1) & m->mask)
        if (!strcmp(m->key[i], key)) return m->val[i];
    m->key[i] = key;
    m->val[i] = val;
    return -1;
}

int mn_name_map_of_model(mn_name_map* map, const mn_model* m) {
    if (!mn_name_map_init(map, 2 * (size_t)m->njoint)) return 0;
    for (int j = 0; j < m->njoint; j++)
        mn_name_map_put(map, m->jnt_name[j], j);
    for (int j = 0; j < m->njoint; j++) /* as mn_model_find_joint: names first */
        if (m->jnt_alias[j]) mn_name_map_put(map, m->jnt_alias[j], j);
    return 1;
}

void mn_strbuf_init(mn_strbuf* b) {
    memset(b, 0, sizeof *b);
}
void mn_strbuf_free(mn_strbuf* b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int strbuf_reserve(mn_strbuf* b, size_t extra) {
    if (b->failed) return 0;
    if (b->len + extra + 1 <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char* p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->data = p;
    b->cap = cap;
    return 1;
}

void mn_strbuf_append(mn_strbuf* b, const char* s, size_t n) {
    if (!strbuf_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void mn_strbuf_printf(mn_strbuf* b, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        mn_strbuf_append(b, small, (size_t)n);
        return;
    }
    if (!strbuf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void mn_strbuf_double(mn_strbuf* b, double v) {
    if (!strbuf_reserve(b, MN_DOUBLE_CHARS)) return;
    b->len += (size_t)mn_format_double_len(v, b->data + b->len);
}

void mn_strbuf_json_str(mn_strbuf* b, const char* s) {
    mn_strbuf_append(b, "\"", 1);
    for (const char* p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            mn_strbuf_printf(b, "\\%c", *p);
        else if ((unsigned char)*p < 0x20)
            mn_strbuf_printf(b, "\\u%04x", (unsigned char)*p);
        else
            mn_strbuf_append(b, p, 1);
    }
    mn_strbuf_append(b, "\"", 1);
}

void mn_warn(mn_warnings* w, const char* file, int line, const char* field, const char* fmt, ...) {
    if (!w) return;
    if (w->count++ > 0) return;
    mn_error e;
    va_list ap;
    va_start(ap, fmt);
    mn_io_errorv(&e, MN_OK, file, line, field, fmt, ap);
    va_end(ap);
    snprintf(w->first, sizeof w->first, "%s", e.message);
}

int mn_parse_double(const char* s, char** end, double* out) {
    char* e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || !isfinite(v) || (errno == ERANGE && fabs(v) > 1.0)) {
        if (end) *end = e;
        return 0;
    }
    if (end) *end = e;
    *out = v;
    return 1;
}
