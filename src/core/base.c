/* Status names, error messages, arena. */
#include <marionette/base.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NAME_MAX_LEN = 255 }; /* mn_def_check's limit, and the alias's */

/* s in lower case (ASCII) into out[NAME_MAX_LEN + 1]; its length, or -1 when too long. */
static int fold(const char* s, char* out) {
    int n = 0;
    for (; s[n]; n++) {
        if (n >= NAME_MAX_LEN) return -1;
        char c = s[n];
        out[n] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    out[n] = 0;
    return n;
}

/* Edit distance of a and b with swaps of neighbours (optimal string alignment), or limit + 1
 * when it exceeds limit. Three rows on the stack: no allocation. */
static int edit_distance(const char* a, int na, const char* b, int nb, int limit) {
    if (na - nb > limit || nb - na > limit) return limit + 1;
    int rows[3][NAME_MAX_LEN + 1];
    int *pp = rows[0], *p = rows[1], *c = rows[2];
    for (int j = 0; j <= nb; j++)
        p[j] = j;
    for (int i = 1; i <= na; i++) {
        c[0] = i;
        int best = c[0];
        for (int j = 1; j <= nb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = p[j - 1] + cost;
            if (p[j] + 1 < v) v = p[j] + 1;
            if (c[j - 1] + 1 < v) v = c[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            c[j] = v;
            if (v < best) best = v;
        }
        if (best > limit) return limit + 1;
        int* t = pp;
        pp = p, p = c, c = t;
    }
    return p[nb] <= limit ? p[nb] : limit + 1;
}

int mn_name_distance(const char* asked, const char* name, int limit) {
    char q[NAME_MAX_LEN + 1], f[NAME_MAX_LEN + 1];
    int nq = asked ? fold(asked, q) : -1, n = name ? fold(name, f) : -1;
    if (nq < 0 || n < 0 || limit < 0) return limit + 1;
    if (nq >= 3 && n >= 3 && (strstr(f, q) || strstr(q, f))) return nq == n ? 0 : 1;
    return edit_distance(q, nq, f, n, limit);
}

int mn_name_distance_limit(const char* name) {
    int n = name ? (int)strnlen(name, NAME_MAX_LEN + 1) : 0;
    return n / 3 > 2 ? n / 3 : 2;
}

const char* mn_status_name(mn_status s) {
    switch (s) {
    case MN_OK:
        return "OK";
    case MN_ERR_ARG:
        return "ARG";
    case MN_ERR_IO:
        return "IO";
    case MN_ERR_PARSE:
        return "PARSE";
    case MN_ERR_NOMEM:
        return "NOMEM";
    case MN_ERR_NOTFOUND:
        return "NOTFOUND";
    case MN_ERR_SINGULAR:
        return "SINGULAR";
    case MN_ERR_UNREACHABLE:
        return "UNREACHABLE";
    case MN_ERR_NOCONVERGE:
        return "NOCONVERGE";
    case MN_ERR_UNSUPPORTED:
        return "UNSUPPORTED";
    }
    return "UNKNOWN";
}

void mn_error_clear(mn_error* err) {
    if (!err) return;
    memset(err, 0, sizeof *err);
}

mn_status mn_error_set(mn_error* err, mn_status s, const char* file, int line, const char* field,
                       const char* fmt, ...) {
    if (!err) return s;
    err->status = s;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t n = 0, cap = sizeof err->message;
    err->message[0] = 0;
    if (err->file[0]) n += (size_t)snprintf(err->message + n, cap - n, "%s:", err->file);
    if (err->file[0] && line > 0 && n < cap)
        n += (size_t)snprintf(err->message + n, cap - n, "%d:", line);
    if (n > 0 && n < cap) n += (size_t)snprintf(err->message + n, cap - n, " ");
    if (err->field[0] && n < cap)
        n += (size_t)snprintf(err->message + n, cap - n, "%s: ", err->field);
    if (n < cap) snprintf(err->message + n, cap - n, "%s", text);
    return s;
}

void mn_arena_init(mn_arena* a, void* buffer, size_t size) {
    /* Align the base so every allocation is 16-byte aligned. */
    uintptr_t p = (uintptr_t)buffer, aligned = (p + 15u) & ~(uintptr_t)15u;
    size_t skip = (size_t)(aligned - p);
    a->base = (unsigned char*)aligned;
    a->size = size > skip ? size - skip : 0;
    a->used = 0;
    a->peak = 0;
}

void* mn_arena_alloc(mn_arena* a, size_t bytes) {
    size_t n = (bytes + 15u) & ~(size_t)15u;
    if (n < bytes || n > a->size - a->used) return NULL;
    void* p = a->base + a->used;
    a->used += n;
    if (a->used > a->peak) a->peak = a->used;
    return p;
}
