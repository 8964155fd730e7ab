/* The layout of a skeleton text file (docs/skeleton-format.md, "Keeping the file's layout"):
 * what the model does not hold, kept beside it so that mn_skel_write_layout can write the
 * file back as it was: comments and blank lines, the skeleton block's items with their group
 * names, each define joint block's attributes in their order, and mirror lines (Welman Fig.
 * 6.1 spells out one side and mirrors it).
 *
 * The layout is a list of elements in file order. It is taken from a text the reader has
 * accepted, so a light scan is enough: per line, the words and quoted names (the reader's
 * quoting: ", the typographic quotes, \" and \\ escapes) and a trailing comment. */
#include "doc/skel_layout.h"

#include <stdlib.h>
#include <string.h>

static const char* const attr_words[] = {"object",    "offset", "orientation", "hinge",  "slide",
                                         "ball",      "free",   "fixed",       "mass",   "com",
                                         "stiffness", "order",  "locked",      "mirror", NULL};

static int is_attr(const char* w) {
    for (int i = 0; attr_words[i]; i++)
        if (!strcmp(w, attr_words[i])) return 1;
    return 0;
}

static int quote_at(const unsigned char* s, size_t n) {
    if (n >= 1 && s[0] == '"') return 1;
    if (n >= 3 && s[0] == 0xE2 && s[1] == 0x80 && (s[2] == 0x9C || s[2] == 0x9D)) return 3;
    return 0;
}

static char* dup_n(const char* s, size_t n) {
    char* d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static int push(mn_skel_layout* l, sl_kind kind, int line, char* text) {
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        sl_elem* e = realloc(l->e, sizeof *e * (size_t)cap);
        if (!e) {
            free(text);
            return 0;
        }
        l->e = e, l->cap = cap;
    }
    l->e[l->n++] = (sl_elem){kind, line, text, NULL};
    return 1;
}

/* One token of a line: a word or an unescaped quoted name. */
typedef struct sl_tok {
    int quoted;
    char* text;
} sl_tok;

/* The tokens of line s[0..n) (at most max), and where a comment starts (n when none). */
static int line_tokens(const char* line, size_t n, sl_tok* out, int max, size_t* comment) {
    const unsigned char* s = (const unsigned char*)line;
    size_t i = 0;
    int k = 0;
    *comment = n;
    while (i < n) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
            i++;
            continue;
        }
        if (s[i] == '#') {
            *comment = i;
            break;
        }
        int q = quote_at(s + i, n - i);
        char* text = malloc(n - i + 1);
        size_t t = 0;
        if (q) {
            for (i += (size_t)q; i < n;) {
                int c = quote_at(s + i, n - i);
                if (c) {
                    i += (size_t)c;
                    break;
                }
                if (s[i] == '\\' && i + 1 < n && (s[i + 1] == '"' || s[i + 1] == '\\')) i++;
                if (text) text[t++] = (char)s[i];
                i++;
            }
        } else {
            while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '#' &&
                   !quote_at(s + i, n - i))
                if (text)
                    text[t++] = (char)s[i++];
                else
                    i++;
        }
        if (text) text[t] = 0;
        if (k < max)
            out[k++] = (sl_tok){q != 0, text};
        else
            free(text);
    }
    return k;
}

void mn_skel_layout_free(mn_skel_layout* l) {
    if (!l) return;
    for (int i = 0; i < l->n; i++) {
        free(l->e[i].text);
        free(l->e[i].trail);
    }
    free(l->e);
    free(l);
}

/* State of the scan: where in the file's block structure the next token is. */
enum { OUTSIDE, DEF_KW, SKEL_BODY, JOINT_BODY };

mn_skel_layout* mn_skel_layout_capture(const char* text, size_t len) {
    mn_skel_layout* l = calloc(1, sizeof *l);
    if (!l) return NULL;
    const char* s = text;
    size_t i = 0;
    if (len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) i = 3;
    int line = 1, state = OUTSIDE, ok = 1;
    /* the name of a `joint`, `group`, `define ...` or mirror line comes as the next token,
     * maybe on the next line: pending says which element waits for it */
    int pending = -1, after_end = 0, after_define = 0;
    while (i < len && ok) {
        size_t e = i;
        while (e < len && s[e] != '\n')
            e++;
        sl_tok t[256];
        size_t comment;
        int nt = line_tokens(s + i, e - i, t, 256, &comment);
        if (nt == 0) {
            /* blank or comment-only: kept as it is */
            ok = push(l, SL_VERBATIM, line, dup_n(s + i, e - i));
        }
        int last = -1;
        for (int k = 0; k < nt && ok; k++) {
            const char* w = t[k].text ? t[k].text : "";
            if (pending >= 0 && t[k].quoted) {
                free(l->e[pending].text);
                l->e[pending].text = t[k].text;
                t[k].text = NULL;
                pending = -1;
                continue;
            }
            if (after_end) { /* end skeleton / end group / end joint */
                sl_kind kind = !strcmp(w, "skeleton") ? SL_END_SKELETON
                               : !strcmp(w, "group")  ? SL_END_GROUP
                                                      : SL_END_JOINT;
                ok = push(l, kind, line, NULL);
                last = l->n - 1;
                after_end = 0;
                if (kind != SL_END_GROUP) state = OUTSIDE;
            } else if (after_define) {
                int skel = !strcmp(w, "skeleton");
                ok = push(l, skel ? SL_SKELETON : SL_DEFINE, line, NULL);
                last = pending = l->n - 1;
                state = skel ? SKEL_BODY : JOINT_BODY;
                after_define = 0;
            } else if (t[k].quoted) {
                /* an argument of an attribute (object "x.pol") */
            } else if (!strcmp(w, "define")) {
                after_define = 1;
            } else if (!strcmp(w, "end")) {
                after_end = 1;
            } else if (state == SKEL_BODY && (!strcmp(w, "joint") || !strcmp(w, "group"))) {
                ok = push(l, w[0] == 'j' ? SL_JOINT : SL_GROUP, line, NULL);
                last = pending = l->n - 1;
            } else if (state == JOINT_BODY && is_attr(w)) {
                ok = push(l, SL_ATTR, line, dup_n(w, strlen(w)));
                last = l->n - 1;
                if (!strcmp(w, "mirror")) {
                    ok = ok && push(l, SL_MIRROR, line, NULL);
                    last = pending = l->n - 1;
                }
            }
        }
        for (int k = 0; k < nt; k++)
            free(t[k].text);
        if (ok && comment < e - i) {
            if (nt == 0) {
                /* the verbatim line holds it */
            } else if (last >= 0) {
                /* the trailing comment with the spaces before it */
                size_t from = comment;
                while (from > 0 && (s[i + from - 1] == ' ' || s[i + from - 1] == '\t'))
                    from--;
                l->e[last].trail = dup_n(s + i + from, e - i - from);
                ok = l->e[last].trail != NULL;
            } else if (l->n > 0 && !l->e[l->n - 1].trail) {
                /* after tokens that continue an element of an earlier line */
                l->e[l->n - 1].trail = dup_n(s + i + comment, e - i - comment);
                ok = l->e[l->n - 1].trail != NULL;
            } else {
                ok = push(l, SL_VERBATIM, line, dup_n(s + i + comment, e - i - comment));
            }
        }
        i = e + 1;
        line++;
    }
    /* a text that ends with a newline has no last empty line */
    if (ok && len > 0 && text[len - 1] == '\n' && l->n > 0 && l->e[l->n - 1].kind == SL_VERBATIM &&
        l->e[l->n - 1].line == line - 1 && !l->e[l->n - 1].text[0]) {
        free(l->e[--l->n].text);
    }
    l->ends_newline = len > 0 && text[len - 1] == '\n';
    if (!ok) {
        mn_skel_layout_free(l);
        return NULL;
    }
    return l;
}

mn_status mn_skel_read_layout_mem(const char* text, size_t len, const char* name, mn_model** model,
                                  mn_skel_layout** layout, mn_warnings* warn, mn_error* err) {
    if (layout) *layout = NULL;
    mn_status s = mn_skel_read_mem(text, len, name, model, warn, err);
    if (s != MN_OK || !layout) return s;
    *layout = mn_skel_layout_capture(text, len);
    if (!*layout) {
        mn_model_destroy(*model);
        *model = NULL;
        return mn_error_set(err, MN_ERR_NOMEM, name ? name : "", 0, "", "out of memory");
    }
    return MN_OK;
}
