/* Duplicate members of JSON objects. RFC 8259 4 leaves a name given twice to the reader
 * ("the names within an object SHOULD be unique"); cJSON keeps both and a lookup finds the
 * first, while a loop over the members sees both, so two readers of one document could take
 * different values. The documents' readers refuse such a document instead, naming the line
 * of the second member. The text has parsed already: this scanner only walks valid JSON. */
#include <stdlib.h>
#include <string.h>

#include "doc/doc_internal.h"

typedef struct jkey {
    const char* s; /* the name as written, between the quotes */
    size_t len, off;
} jkey;

static int by_name_then_offset(const void* a, const void* b) {
    const jkey *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

typedef struct scan {
    const char* t;
    size_t n;
    size_t second, first; /* the earliest second member found (second == n: none) */
    int failed;           /* out of memory or too deep: no answer */
} scan;

static size_t ws(const scan* z, size_t i) {
    while (i < z->n && (z->t[i] == ' ' || z->t[i] == '\t' || z->t[i] == '\n' || z->t[i] == '\r'))
        i++;
    return i;
}

/* Past the string starting at i (its opening quote). */
static size_t str_end(const scan* z, size_t i) {
    i++;
    while (i < z->n && z->t[i] != '"')
        i += z->t[i] == '\\' ? 2 : 1;
    return i < z->n ? i + 1 : z->n;
}

static size_t value(scan* z, size_t i, int depth);

static size_t object(scan* z, size_t i, int depth) {
    jkey* keys = NULL;
    size_t nk = 0, cap = 0;
    i = ws(z, i + 1);
    while (i < z->n && z->t[i] == '"') {
        size_t e = str_end(z, i);
        if (nk == cap) {
            cap = cap ? 2 * cap : 16;
            jkey* k = realloc(keys, sizeof *k * cap);
            if (!k) {
                z->failed = 1;
                free(keys);
                return z->n;
            }
            keys = k;
        }
        keys[nk].s = z->t + i + 1;
        keys[nk].len = e - i - 2;
        keys[nk].off = i;
        nk++;
        i = ws(z, e);
        if (i < z->n && z->t[i] == ':') i = value(z, i + 1, depth + 1);
        i = ws(z, i);
        if (i < z->n && z->t[i] == ',') i = ws(z, i + 1);
    }
    if (nk > 1) {
        qsort(keys, nk, sizeof *keys, by_name_then_offset);
        for (size_t k = 1; k < nk; k++)
            if (keys[k].len == keys[k - 1].len && !memcmp(keys[k].s, keys[k - 1].s, keys[k].len) &&
                (k == 1 || keys[k - 1].len != keys[k - 2].len ||
                 memcmp(keys[k - 1].s, keys[k - 2].s, keys[k].len)) &&
                keys[k].off < z->second) {
                z->second = keys[k].off; /* the second of its group: after the first */
                z->first = keys[k - 1].off;
            }
    }
    free(keys);
    return i < z->n ? i + 1 : z->n; /* past '}' */
}

static size_t value(scan* z, size_t i, int depth) {
    i = ws(z, i);
    if (i >= z->n || z->failed) return z->n;
    if (depth > 2000) { /* deeper than cJSON parses: not reached */
        z->failed = 1;
        return z->n;
    }
    char c = z->t[i];
    if (c == '{') return object(z, i, depth);
    if (c == '[') {
        i = ws(z, i + 1);
        while (i < z->n && z->t[i] != ']') {
            i = ws(z, value(z, i, depth + 1));
            if (i < z->n && z->t[i] == ',')
                i++;
            else
                break;
        }
        i = ws(z, i);
        return i < z->n ? i + 1 : z->n;
    }
    if (c == '"') return str_end(z, i);
    while (i < z->n && !strchr(",]} \t\r\n", z->t[i]))
        i++;
    return i;
}

int mn_json_duplicate(const char* text, size_t len, size_t* second, size_t* first) {
    scan z = {text, len, len, len, 0};
    value(&z, 0, 0);
    if (z.failed || z.second >= len) return 0;
    *second = z.second;
    *first = z.first;
    return 1;
}
