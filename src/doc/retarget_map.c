/* The retarget map file (docs/retarget.md "map files"): one pairing per line,
 *
 *     ROLE SOURCE_JOINT TARGET_JOINT     # a comment
 *
 * ROLE is a role name of include/marionette/retarget.h ("hips", "left_thigh", ...); a joint
 * name is a bare word or a double-quoted string (for names with spaces, such as the stick
 * figure's "left leg"), and `-` leaves that side empty. Nothing is written to the map unless
 * the whole file reads. */
#include <marionette/io.h>
#include <marionette/retarget.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/doc_internal.h"

typedef struct token {
    const char* s;
    size_t n;
    int quoted;
} token;

/* Reads the next token of a line into t; returns 1 for a token, 0 at the end of the line
 * (or a comment), -1 for an unterminated quote. */
static int next_token(const char** p, const char* end, token* t) {
    const char* s = *p;
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    if (s >= end || *s == '\n' || *s == '#') {
        *p = s;
        return 0;
    }
    if (*s == '"') {
        const char* q = s + 1;
        while (q < end && *q != '"' && *q != '\n')
            q++;
        if (q >= end || *q != '"') return -1;
        t->s = s + 1;
        t->n = (size_t)(q - s - 1);
        t->quoted = 1;
        *p = q + 1;
        return 1;
    }
    const char* q = s;
    while (q < end && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n' && *q != '#')
        q++;
    t->s = s;
    t->n = (size_t)(q - s);
    t->quoted = 0;
    *p = q;
    return 1;
}

static int printable(const token* t) {
    for (size_t i = 0; i < t->n; i++)
        if ((unsigned char)t->s[i] < 0x20) return 0;
    return 1;
}

mn_status mn_retarget_map_read_mem(const char* text, size_t len, const char* name,
                                   mn_retarget_map* map, mn_error* err) {
    if (!name) name = "";
    if (!text || !map) return mn_error_set(err, MN_ERR_ARG, name, 0, "map", "NULL argument");
    mn_retarget_map* out = malloc(sizeof *out);
    if (!out) return mn_error_set(err, MN_ERR_NOMEM, name, 0, "map", "out of memory");
    *out = mn_retarget_map_default();
    snprintf(out->file, sizeof out->file, "%s", name);
    const char* p = text;
    const char* end = text + len;
    int line = 1, pairs = 0;
    mn_status st = MN_OK;
    while (p < end && st == MN_OK) {
        const char* eol = memchr(p, '\n', (size_t)(end - p));
        const char* le = eol ? eol : end;
        if (memchr(p, '\0', (size_t)(le - p))) {
            st = mn_error_set(err, MN_ERR_PARSE, name, line, "text", "a NUL byte in the line");
            break;
        }
        token t[4];
        int n = 0, r;
        const char* q = p;
        while (n < 4 && (r = next_token(&q, le, &t[n])) == 1)
            n++;
        if (n < 4 && r < 0) {
            static const char* const what[3] = {"role", "source", "target"};
            st = mn_error_set(err, MN_ERR_PARSE, name, line, what[n < 3 ? n : 2],
                              "unterminated quoted name");
            break;
        }
        if (n == 0) {
            /* blank or comment line */
        } else if (n == 4) {
            st = mn_error_set(err, MN_ERR_PARSE, name, line, "line",
                              "extra field '%.*s' (a line is ROLE SOURCE TARGET; quote names "
                              "with spaces)",
                              (int)(t[3].n < 60 ? t[3].n : 60), t[3].s);
        } else {
            char role[32];
            int ri = -1;
            if (t[0].n < sizeof role && !t[0].quoted) {
                memcpy(role, t[0].s, t[0].n);
                role[t[0].n] = 0;
                ri = mn_role_parse(role);
            }
            if (ri < 0)
                st = mn_error_set(err, MN_ERR_PARSE, name, line, "role",
                                  "unknown role '%.*s' (roles: hips, spine, chest, neck, head, "
                                  "left_/right_ clavicle, upperarm, forearm, hand, thigh, shin, "
                                  "foot, toe)",
                                  (int)(t[0].n < 40 ? t[0].n : 40), t[0].s);
            else if (out->line[ri])
                st = mn_error_set(err, MN_ERR_PARSE, name, line, role,
                                  "role given twice (first on line %d)", out->line[ri]);
            else if (n < 3)
                st = mn_error_set(err, MN_ERR_PARSE, name, line, n < 2 ? "source" : "target",
                                  "missing %s joint (write - for none)",
                                  n < 2 ? "source" : "target");
            for (int k = 1; k < 3 && st == MN_OK; k++) {
                const char* field = k == 1 ? "source" : "target";
                char* dst = k == 1 ? out->source[ri] : out->target[ri];
                if (t[k].n == 0)
                    st = mn_error_set(err, MN_ERR_PARSE, name, line, field,
                                      "empty joint name (write - for none)");
                else if (t[k].n >= MN_RETARGET_NAME_MAX)
                    st = mn_error_set(err, MN_ERR_PARSE, name, line, field,
                                      "joint name longer than %d characters",
                                      MN_RETARGET_NAME_MAX - 1);
                else if (!printable(&t[k]))
                    st = mn_error_set(err, MN_ERR_PARSE, name, line, field,
                                      "control character in the joint name");
                else if (!(t[k].n == 1 && t[k].s[0] == '-' && !t[k].quoted)) {
                    memcpy(dst, t[k].s, t[k].n);
                    dst[t[k].n] = 0;
                }
            }
            if (st == MN_OK) {
                out->line[ri] = line;
                pairs++;
            }
        }
        p = eol ? eol + 1 : end;
        line++;
    }
    if (st == MN_OK && pairs == 0)
        st = mn_error_set(err, MN_ERR_PARSE, name, 0, "map",
                          "no pairings (ROLE SOURCE TARGET lines)");
    if (st == MN_OK) *map = *out;
    free(out);
    return st;
}
