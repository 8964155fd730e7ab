/* Motion scripts (docs/motion-script.md): a small line-based language that states
 * constraints over time intervals and compiles onto a sequence, the "scripting approach"
 * Welman 7.2.1 proposes: "A script would need to specify a set of constraints to be
 * imposed, and provide some way of activating and deactivating these constraints over the
 * course of a movement." Named events stand for moments of the movement (heel strike, ball
 * down), so the thesis's walking paragraph reads almost as written.
 *
 * A script is parsed whole and applied to a copy of the sequence first: on any error the
 * sequence is left as it was and the error names the file, the line and the field. */
#include <marionette/io.h>
#include <marionette/sequence.h>

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/doc_internal.h"

#define MAX_TOK 64
#define MAX_EVENTS 256
#define TOK_CAP 128

typedef struct tok {
    char s[TOK_CAP];
    int quoted;
} tok;

typedef struct event {
    char name[TOK_CAP];
    double frame;
} event;

typedef struct sp {
    const char* file;
    int line;
    mn_error* err;
    const mn_model* m;
    mn_seq* s;
    double fps;
    int nevent;
    event ev[MAX_EVENTS];
    tok t[MAX_TOK];
    int nt, at;
} sp;

static mn_status fail(sp* p, const char* field, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static mn_status fail(sp* p, const char* field, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mn_status st = mn_io_errorv(p->err, MN_ERR_PARSE, p->file, p->line, field, fmt, ap);
    va_end(ap);
    return st;
}

/* Splits a line into words and quoted strings; '#' starts a comment, ',' is a word. */
static mn_status tokenize(sp* p, const char* a, const char* b) {
    p->nt = p->at = 0;
    const char* c = a;
    while (c < b) {
        if (isspace((unsigned char)*c)) {
            c++;
            continue;
        }
        if (*c == '#') break;
        if (p->nt >= MAX_TOK) return fail(p, "line", "more than %d words", MAX_TOK);
        tok* t = &p->t[p->nt++];
        size_t n = 0;
        t->quoted = 0;
        if (*c == '"') {
            t->quoted = 1;
            c++;
            while (c < b && *c != '"') {
                if (n + 1 >= TOK_CAP)
                    return fail(p, "line", "a name longer than %d characters", TOK_CAP - 1);
                t->s[n++] = *c++;
            }
            if (c >= b) return fail(p, "line", "unterminated quoted name");
            c++;
        } else if (*c == ',') {
            t->s[n++] = *c++;
        } else {
            while (c < b && !isspace((unsigned char)*c) && *c != '#' && *c != ',' && *c != '"') {
                if (n + 1 >= TOK_CAP)
                    return fail(p, "line", "a word longer than %d characters", TOK_CAP - 1);
                t->s[n++] = *c++;
            }
        }
        t->s[n] = 0;
    }
    return MN_OK;
}

static int more(const sp* p) {
    return p->at < p->nt;
}
static int peek_is(const sp* p, const char* w) {
    return more(p) && !p->t[p->at].quoted && !strcmp(p->t[p->at].s, w);
}

static mn_status expect_word(sp* p, const char* w) {
    if (!peek_is(p, w))
        return fail(p, w, "expected \"%s\"%s%s", w,
                    more(p) ? ", found " : " at the end of the line", more(p) ? p->t[p->at].s : "");
    p->at++;
    return MN_OK;
}

static mn_status get_name(sp* p, const char* field, const char** out) {
    if (!more(p)) return fail(p, field, "missing %s", field);
    *out = p->t[p->at++].s;
    return MN_OK;
}

static mn_status get_num(sp* p, const char* field, double* v) {
    if (!more(p)) return fail(p, field, "missing number");
    const char* s = p->t[p->at].s;
    char* end = NULL;
    double d = strtod(s, &end);
    if (p->t[p->at].quoted || end == s || *end || !isfinite(d))
        return fail(p, field, "expected a finite number, found \"%s\"", s);
    p->at++;
    *v = d;
    return MN_OK;
}

static mn_status get_vec(sp* p, const char* field, double* v, int n) {
    for (int i = 0; i < n; i++) {
        mn_status st = get_num(p, field, &v[i]);
        if (st != MN_OK) return st;
    }
    return MN_OK;
}

/* A time: a number of frames, seconds with an "s" suffix, an event, or an event +/- frames. */
static mn_status get_time(sp* p, const char* field, double* f) {
    if (!more(p)) return fail(p, field, "missing time");
    const char* s = p->t[p->at].s;
    char* end = NULL;
    double d = strtod(s, &end);
    if (!p->t[p->at].quoted && end != s && isfinite(d)) {
        if (*end == 0)
            *f = d;
        else if (!strcmp(end, "s"))
            *f = d * p->fps;
        else
            return fail(p, field, "a time is frames, seconds (\"0.5s\") or an event, not \"%s\"",
                        s);
        p->at++;
        return MN_OK;
    }
    for (int i = 0; i < p->nevent; i++)
        if (!strcmp(p->ev[i].name, s)) {
            p->at++;
            *f = p->ev[i].frame;
            if (peek_is(p, "+") || peek_is(p, "-")) {
                double sign = p->t[p->at].s[0] == '-' ? -1 : 1, k;
                p->at++;
                mn_status st = get_time(p, field, &k);
                if (st != MN_OK) return st;
                *f += sign * k;
            }
            return MN_OK;
        }
    return fail(p, field, "no event named \"%s\" (define it with: event %s FRAME)", s, s);
}

/* "from T [to|until T]": active over [start, end]; the end is open when left out. */
static mn_status get_span(sp* p, double* a, double* b) {
    mn_status st = expect_word(p, "from");
    if (st != MN_OK) return st;
    if ((st = get_time(p, "from", a)) != MN_OK) return st;
    *b = HUGE_VAL;
    if (peek_is(p, "to") || peek_is(p, "until")) {
        p->at++;
        if ((st = get_time(p, "to", b)) != MN_OK) return st;
        if (*b < *a) return fail(p, "to", "the interval ends (%g) before it starts (%g)", *b, *a);
    }
    return MN_OK;
}

static mn_status end_of_line(sp* p) {
    if (more(p)) return fail(p, p->t[p->at].s, "unexpected \"%s\"", p->t[p->at].s);
    return MN_OK;
}

static mn_status handle_ref(sp* p, int* h) {
    const char* name = "";
    mn_status st = get_name(p, "handle", &name);
    if (st != MN_OK) return st;
    *h = mn_seq_find_handle(p->s, name);
    if (*h < 0) return fail(p, "handle", "no handle named \"%s\"", name);
    return MN_OK;
}

static mn_status add(sp* p, mn_seq_constraint_def* c, const char* field) {
    mn_error e;
    int i = mn_seq_add_constraint(p->s, c, &e);
    if (i < 0)
        return mn_error_set(p->err, e.status, p->file, p->line, e.field[0] ? e.field : field, "%s",
                            e.message);
    return MN_OK;
}

static mn_status st_event(sp* p) {
    const char* name = "";
    mn_status st = get_name(p, "event", &name);
    if (st != MN_OK) return st;
    if (isdigit((unsigned char)name[0]) || name[0] == '-' || name[0] == '.')
        return fail(p, "event", "an event name starts with a letter");
    for (int i = 0; i < p->nevent; i++)
        if (!strcmp(p->ev[i].name, name))
            return fail(p, "event", "a second event named \"%s\"", name);
    if (p->nevent >= MAX_EVENTS) return fail(p, "event", "more than %d events", MAX_EVENTS);
    event* e = &p->ev[p->nevent];
    snprintf(e->name, sizeof e->name, "%s", name);
    if ((st = get_time(p, "frame", &e->frame)) != MN_OK) return st;
    p->nevent++;
    return end_of_line(p);
}

static mn_status st_handle(sp* p) {
    const char *name = "", *kind = "", *joint = NULL;
    mn_status st = get_name(p, "name", &name);
    if (st != MN_OK || (st = get_name(p, "type", &kind)) != MN_OK) return st;
    mn_handle_def h = mn_handle_default();
    if (!strcmp(kind, "point"))
        h.type = MN_HANDLE_POINT;
    else if (!strcmp(kind, "orientation"))
        h.type = MN_HANDLE_ORIENT;
    else if (!strcmp(kind, "com"))
        h.type = MN_HANDLE_COM;
    else
        return fail(p, "type", "unknown handle type \"%s\" (point, orientation, com)", kind);
    h.joint = -1;
    if (h.type != MN_HANDLE_COM || more(p)) {
        if ((st = get_name(p, "joint", &joint)) != MN_OK) return st;
        h.joint = mn_model_find_joint(p->m, joint);
        char hint[256];
        if (h.joint < 0)
            return fail(p, "joint", "no joint named \"%s\" in %s%s", joint,
                        p->m->name ? p->m->name : "the figure",
                        mn_model_joint_hint(p->m, joint, hint, sizeof hint));
    }
    if (h.type == MN_HANDLE_POINT && more(p) && (st = get_vec(p, "point", &h.point.x, 3)) != MN_OK)
        return st;
    if ((st = end_of_line(p)) != MN_OK) return st;
    if (mn_seq_find_handle(p->s, name) >= 0)
        return fail(p, "name", "a second handle named \"%s\"", name);
    h.name = name;
    mn_error e;
    if (mn_seq_add_handle(p->s, &h, &e) < 0)
        return mn_error_set(p->err, e.status, p->file, p->line, e.field[0] ? e.field : "handle",
                            "%s", e.message);
    return MN_OK;
}

/* lock NAME span: a pin (point, com) or an orientation lock where the handle is at the start. */
static mn_status st_lock(sp* p) {
    mn_seq_constraint_def c = mn_seq_constraint_default();
    mn_status st = handle_ref(p, &c.con.handle);
    if (st != MN_OK || (st = get_span(p, &c.start, &c.end)) != MN_OK ||
        (st = end_of_line(p)) != MN_OK)
        return st;
    c.con.type =
        mn_seq_handle(p->s, c.con.handle)->type == MN_HANDLE_ORIENT ? MN_CON_ORIENT : MN_CON_PIN;
    c.lock = 1;
    return add(p, &c, "lock");
}

static mn_status st_pin(sp* p) {
    mn_seq_constraint_def c = mn_seq_constraint_default();
    mn_status st = handle_ref(p, &c.con.handle);
    if (st != MN_OK || (st = expect_word(p, "at")) != MN_OK ||
        (st = get_vec(p, "at", &c.con.target.x, 3)) != MN_OK ||
        (st = get_span(p, &c.start, &c.end)) != MN_OK || (st = end_of_line(p)) != MN_OK)
        return st;
    return add(p, &c, "pin");
}

static mn_status st_orient(sp* p) {
    mn_seq_constraint_def c = mn_seq_constraint_default();
    double q[4];
    mn_status st = handle_ref(p, &c.con.handle);
    if (st != MN_OK || (st = expect_word(p, "to")) != MN_OK ||
        (st = get_vec(p, "to", q, 4)) != MN_OK || (st = get_span(p, &c.start, &c.end)) != MN_OK ||
        (st = end_of_line(p)) != MN_OK)
        return st;
    mn_quat r = mn_q4(q[0], q[1], q[2], q[3]);
    if (!(mn_quat_norm(r) > 1e-9)) return fail(p, "to", "zero quaternion");
    c.con.type = MN_CON_ORIENT;
    c.con.target_rot = mn_quat_normalize(r);
    return add(p, &c, "orient");
}

/* plane NAME origin x y z normal x y z span; line NAME origin ... direction ... span */
static mn_status st_plane_line(sp* p, int line) {
    mn_seq_constraint_def c = mn_seq_constraint_default();
    const char* dk = line ? "direction" : "normal";
    mn_status st = handle_ref(p, &c.con.handle);
    if (st != MN_OK || (st = expect_word(p, "origin")) != MN_OK ||
        (st = get_vec(p, "origin", &c.con.origin.x, 3)) != MN_OK ||
        (st = expect_word(p, dk)) != MN_OK || (st = get_vec(p, dk, &c.con.dir.x, 3)) != MN_OK ||
        (st = get_span(p, &c.start, &c.end)) != MN_OK || (st = end_of_line(p)) != MN_OK)
        return st;
    c.con.type = line ? MN_CON_LINE : MN_CON_PLANE;
    return add(p, &c, line ? "line" : "plane");
}

/* follow NAME span [smooth] through T x y z , T x y z ...: an animated pin. */
static mn_status st_follow(sp* p) {
    mn_seq_constraint_def c = mn_seq_constraint_default();
    mn_status st = handle_ref(p, &c.con.handle);
    if (st != MN_OK || (st = get_span(p, &c.start, &c.end)) != MN_OK) return st;
    if (peek_is(p, "smooth")) {
        p->at++;
        c.target_interp = MN_INTERP_CATMULL_ROM;
    }
    if ((st = expect_word(p, "through")) != MN_OK) return st;
    mn_target_key k[MAX_TOK / 4 + 1];
    int n = 0;
    for (;;) {
        if (n >= MAX_TOK / 4) return fail(p, "through", "too many points on one line");
        k[n].dir = mn_v3(0, 0, 0);
        k[n].rot = mn_quat_identity();
        if ((st = get_time(p, "through", &k[n].frame)) != MN_OK ||
            (st = get_vec(p, "through", &k[n].pos.x, 3)) != MN_OK)
            return st;
        for (int i = 0; i < n; i++)
            if (k[i].frame == k[n].frame)
                return fail(p, "through", "two points at frame %g", k[n].frame);
        n++;
        if (!peek_is(p, ",")) break;
        p->at++;
    }
    if ((st = end_of_line(p)) != MN_OK) return st;
    c.con.target = k[0].pos;
    if ((st = add(p, &c, "follow")) != MN_OK) return st;
    int ci = mn_seq_constraint_count(p->s) - 1;
    for (int i = 0; i < n; i++) {
        mn_error e;
        if (mn_seq_set_target_key(p->s, ci, &k[i], &e) != MN_OK)
            return mn_error_set(p->err, e.status, p->file, p->line, "through", "%s", e.message);
    }
    return MN_OK;
}

/* balance span polygon x y z , x y z , ... [margin M] */
static mn_status st_balance(sp* p) {
    double a, b, margin = 0;
    mn_vec3 poly[MN_MAX_POLYGON];
    int n = 0;
    mn_status st = get_span(p, &a, &b);
    if (st != MN_OK || (st = expect_word(p, "polygon")) != MN_OK) return st;
    for (;;) {
        if (n >= MN_MAX_POLYGON) return fail(p, "polygon", "more than %d vertices", MN_MAX_POLYGON);
        if ((st = get_vec(p, "polygon", &poly[n].x, 3)) != MN_OK) return st;
        n++;
        if (!peek_is(p, ",")) break;
        p->at++;
    }
    if (peek_is(p, "margin")) {
        p->at++;
        if ((st = get_num(p, "margin", &margin)) != MN_OK) return st;
        if (margin < 0) return fail(p, "margin", "a margin is >= 0");
    }
    if ((st = end_of_line(p)) != MN_OK) return st;
    mn_error e;
    if (mn_seq_add_balance(p->s, poly, n, mn_v3(0, 1, 0), margin, a, b, &e) < 0)
        return mn_error_set(p->err, e.status, p->file, p->line, e.field[0] ? e.field : "balance",
                            "%s", e.message);
    return MN_OK;
}

static mn_status statement(sp* p) {
    const char* w = p->t[0].s;
    p->at = 1;
    if (p->t[0].quoted)
        return fail(p, "statement", "a line starts with a statement word, not a quoted name");
    if (!strcmp(w, "event")) return st_event(p);
    if (!strcmp(w, "handle")) return st_handle(p);
    if (!strcmp(w, "lock")) return st_lock(p);
    if (!strcmp(w, "pin")) return st_pin(p);
    if (!strcmp(w, "orient")) return st_orient(p);
    if (!strcmp(w, "plane")) return st_plane_line(p, 0);
    if (!strcmp(w, "line")) return st_plane_line(p, 1);
    if (!strcmp(w, "follow")) return st_follow(p);
    if (!strcmp(w, "balance")) return st_balance(p);
    return fail(
        p, "statement",
        "unknown statement \"%s\" (event, handle, lock, pin, orient, plane, line, follow, balance)",
        w);
}

static mn_status run(sp* p, const char* text, size_t len) {
    const char* c = text;
    const char* end = text + len;
    p->line = 0;
    while (c < end) {
        const char* e = memchr(c, '\n', (size_t)(end - c));
        if (!e) e = end;
        p->line++;
        if (memchr(c, 0, (size_t)(e - c))) return fail(p, "line", "a NUL byte in the text");
        mn_status st = tokenize(p, c, e);
        if (st != MN_OK) return st;
        if (p->nt > 0 && (st = statement(p)) != MN_OK) return st;
        c = e + 1;
    }
    return MN_OK;
}

mn_status mn_motion_script_apply_mem(const char* text, size_t len, const char* name, mn_seq* s,
                                     mn_error* err) {
    mn_error_clear(err);
    const char* file = name ? name : "script";
    if (!text || !s) return mn_error_set(err, MN_ERR_ARG, file, 0, "script", "NULL argument");
    /* first on a copy: on any error the sequence stays as it was */
    mn_seq* copy = mn_seq_clone(s);
    sp* p = calloc(1, sizeof *p);
    if (!copy || !p) {
        mn_seq_destroy(copy);
        free(p);
        return mn_error_set(err, MN_ERR_NOMEM, file, 0, "script", "out of memory");
    }
    p->file = file;
    p->err = err;
    p->m = mn_seq_model(s);
    p->s = copy;
    p->fps = mn_seq_fps(s);
    mn_status st = run(p, text, len);
    mn_seq_destroy(copy);
    if (st == MN_OK) {
        /* then for real: the same statements on the same state cannot fail */
        memset(p, 0, sizeof *p);
        p->file = file;
        p->err = err;
        p->m = mn_seq_model(s);
        p->s = s;
        p->fps = mn_seq_fps(s);
        st = run(p, text, len);
    }
    free(p);
    return st;
}
