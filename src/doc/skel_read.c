/* Reader of the thesis skeleton text format (Welman 1993, section 6.1.1 and Fig. 6.1),
 * with the extensions written down in docs/skeleton-format.md.
 *
 * A file has one `define skeleton "name" ... end skeleton` block that lists the joints as
 * a hierarchy, and any number of `define joint "name" ... end joint` blocks that give a
 * joint's attributes. Inside the skeleton block, `joint "x"` makes x the child of the
 * current joint and then the current joint; `group "g" ... end group` opens a branch
 * from the current joint and, at `end group`, the current joint returns to what it was
 * before the group (Fig. 6.1: "head" follows the arm groups and is a child of "torso").
 *
 * Each DOF line of a define joint block (`hinge`, `slide`, `ball`, `free`, `fixed`) is one
 * model joint; several DOF lines make a compound joint, a series of model joints at one
 * location (Welman 6.1.1: "compound joints ... can be modelled as a series of these
 * single DOF joints sharing the same location"). The last of the series carries the
 * joint's name, the ones before it are named "name.1", "name.2", ... in order from the
 * parent. A root with no DOF line is FREE: the thesis's "translation vector for the
 * skeleton as a whole". Any other joint without a DOF line is FIXED.
 *
 * `mirror "other"` defines "other" as the mirror image of the joint across the figure's
 * x = 0 plane (reflection M = diag(-1, 1, 1)): positions and translation axes are polar
 * vectors, x -> -x; rotation axes are axial vectors, a -> det(M) M a = (ax, -ay, -az);
 * orientations R -> M R M, quaternion (w, x, -y, -z). With the axes mirrored as axial
 * vectors, Rot(a', q) = M Rot(a, q) M for the same q, so hinge limits and twist limits
 * are kept unchanged and a mirrored limb posed with the same joint values is the exact
 * mirror image of the original (tests/io/test_skel.c checks this through FK). */
#include "doc/doc_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (MN_PI / 180.0)
/* Largest magnitude of any number in the file (metres, degrees, kilograms). */
#define SKEL_MAX_ABS 1e6
/* DOF lines in one define joint block. */
#define SKEL_MAX_DOF_LINES 8

/* One DOF line: one model joint. Angles already in radians. */
typedef struct skel_dof {
    mn_joint_type type;
    int line;
    mn_vec3 axis;
    int limited;
    double lo, hi;  /* hinge/slide range, or ball twist range */
    double swing;   /* ball */
    double rest[7]; /* rest state (nq numbers of the type) */
} skel_dof;

/* One define joint block. Names point into the token array. */
typedef struct skel_def {
    const char* name;
    int line;
    char* object;
    mn_vec3 offset;
    mn_quat orient;
    double mass;
    mn_vec3 com;
    double stiffness;
    int order;
    int locked; /* MN_LOCK_* of every frame of the joint */
    char* mirror;
    int mirror_line;
    /* The DOF lines: while the block is read, a local array of SKEL_MAX_DOF_LINES; then
     * skel_file.dofs + dof0 (kept apart so that a def stays small on long files). */
    skel_dof* dof;
    int dof0, ndof;
} skel_def;

static void skel_def_init(skel_def* d) {
    memset(d, 0, sizeof *d);
    d->orient = mn_quat_identity();
    d->stiffness = 1;
    d->order = MN_EULER_ZXY;
}

/* The mirror image across the x = 0 plane, M = diag(-1, 1, 1) (see the top of the file):
 * points and translation axes x -> -x, rotation axes (axial vectors) (ax, -ay, -az),
 * rotations M R M, quaternion (w, x, -y, -z). Limits stay as they are. */
static mn_vec3 mirror_point(mn_vec3 v) {
    return mn_v3(-v.x, v.y, v.z);
}
static mn_vec3 mirror_axial(mn_vec3 v) {
    return mn_v3(v.x, -v.y, -v.z);
}
static mn_quat mirror_rot(mn_quat q) {
    return mn_q4(q.w, q.x, -q.y, -q.z);
}

static void skel_def_mirror(const skel_def* src, skel_def* dst, skel_dof* dst_dof) {
    *dst = *src;
    dst->dof = dst_dof;
    if (src->ndof > 0) memcpy(dst_dof, src->dof, sizeof *dst_dof * (size_t)src->ndof);
    dst->offset = mirror_point(src->offset);
    dst->orient = mirror_rot(src->orient);
    dst->com = mirror_point(src->com);
    for (int k = 0; k < src->ndof; k++) {
        skel_dof* d = &dst->dof[k];
        const double* q = src->dof[k].rest;
        switch (d->type) {
        case MN_JOINT_HINGE:
            d->axis = mirror_axial(d->axis);
            break;
        case MN_JOINT_SLIDE:
            d->axis = mirror_point(d->axis);
            break;
        case MN_JOINT_BALL:
            d->axis = mirror_axial(d->axis);
            d->rest[2] = -q[2], d->rest[3] = -q[3];
            break;
        case MN_JOINT_FREE:
            d->rest[0] = -q[0];
            d->rest[5] = -q[5], d->rest[6] = -q[6];
            break;
        default:
            break;
        }
    }
}

/* Frame k of nframes of a (possibly compound) joint: the placement goes on the first
 * frame, the segment (mass, centre of mass, object) on the last, which carries the name. */
static void skel_dof_to_def(const skel_def* def, const skel_dof* d, mn_joint_def* jd, int k,
                            int nframes) {
    *jd = mn_joint_default();
    jd->type = d->type;
    jd->axis = d->axis;
    jd->limited = d->limited;
    if (d->type == MN_JOINT_BALL) {
        jd->swing = d->swing;
        jd->twist[0] = d->lo;
        jd->twist[1] = d->hi;
    } else if (d->limited) {
        jd->range[0] = d->lo;
        jd->range[1] = d->hi;
    }
    memcpy(jd->q0, d->rest, sizeof jd->q0);
    if (!def) return;
    jd->stiffness = def->stiffness;
    jd->rot_order = (mn_euler_order)def->order;
    jd->locked = def->locked;
    if (k == 0) {
        jd->offset = def->offset;
        jd->orient = def->orient;
    }
    if (k == nframes - 1) {
        jd->mass = def->mass;
        jd->com = def->com;
        jd->object = def->object;
    }
}

/* ---- tokens ---------------------------------------------------------------------------- */
typedef enum { TOK_END = 0, TOK_WORD, TOK_STRING } tok_kind;

typedef struct token {
    tok_kind kind;
    int line;
    char* text; /* NUL-terminated, in reader.strings (strings unescaped) */
} token;

typedef struct reader {
    const char* file;
    mn_error* err;
    mn_warnings* warn;
    token* toks;
    int ntok, cap, pos;
    char* strings; /* the texts of all tokens, one after the other */
    size_t used;
    int last_line;
} reader;

/* fail(r, line, field, fmt, ...): a parse error at a line of the file. */
#define fail(r, line, ...) mn_error_set((r)->err, MN_ERR_PARSE, (r)->file, line, __VA_ARGS__)

/* Appends the token whose n bytes were just written at r->strings + r->used. */
static int push_token(reader* r, tok_kind k, int line, size_t n) {
    if (r->ntok == r->cap) {
        int cap = r->cap ? 2 * r->cap : 256;
        token* t = realloc(r->toks, sizeof *t * (size_t)cap);
        if (!t) return 0;
        r->toks = t;
        r->cap = cap;
    }
    char* text = r->strings + r->used;
    text[n] = 0;
    r->used += n + 1;
    r->toks[r->ntok++] = (token){k, line, text};
    return 1;
}

/* Typographic quotes from the thesis text (U+201C, U+201D) delimit names like ASCII ". */
static int is_open_quote(const unsigned char* s, size_t n) {
    return s[0] == '"' ||
           (n >= 3 && s[0] == 0xE2 && s[1] == 0x80 && (s[2] == 0x9C || s[2] == 0x9D));
}
static int quote_len(const unsigned char* s, size_t n) {
    if (s[0] == '"') return 1;
    if (n >= 3 && s[0] == 0xE2 && s[1] == 0x80 && (s[2] == 0x9C || s[2] == 0x9D)) return 3;
    return 0;
}

/* Splits the text into words and quoted strings, dropping comments (# to end of line).
 * The whole text must be UTF-8 without NUL or control characters other than tab, CR, LF.
 * A token's text is never longer than the bytes it was read from, so all of them, each
 * with its NUL, fit in 2 len + 1 bytes: one allocation for the whole file. */
static mn_status tokenize(reader* r, const char* text, size_t len) {
    const unsigned char* s = (const unsigned char*)text;
    size_t i = 0;
    int line = 1;
    if (len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) i = 3; /* BOM */
    r->strings = malloc(2 * len + 1);
    /* Tokens are at least two bytes apart but for a word against a quoted name: reserve for
     * that many (address space only until used), so the array rarely moves. */
    r->cap = len / 2 < (1 << 24) ? (int)(len / 2) + 256 : (1 << 24);
    r->toks = malloc(sizeof *r->toks * (size_t)r->cap);
    if (!r->strings || !r->toks)
        return mn_error_set(r->err, MN_ERR_NOMEM, r->file, 0, "", "out of memory");
    mn_status st = MN_OK;
    while (i < len && !st) {
        unsigned c = s[i];
        char* buf = r->strings + r->used; /* the next token's text goes here */
        if (c == '\n') {
            line++;
            i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            i++;
            continue;
        }
        if (c == '#') {
            while (i < len && s[i] != '\n') {
                int l = s[i] && s[i] < 0x80 ? 1 : mn_utf8_len(s + i, len - i);
                if (!l || s[i] == 0) {
                    st = fail(r, line, "encoding", "not valid UTF-8 text");
                    break;
                }
                i += (size_t)l;
            }
            continue;
        }
        if (c < 0x20 || c == 0x7F) {
            st = fail(r, line, "encoding", "control character 0x%02x", c);
            break;
        }
        if (is_open_quote(s + i, len - i)) {
            int start_line = line;
            i += (size_t)quote_len(s + i, len - i);
            size_t n = 0;
            int closed = 0;
            while (i < len) {
                if (s[i] == '\n' || s[i] == '\r') break;
                int q = quote_len(s + i, len - i);
                if (q) {
                    i += (size_t)q;
                    closed = 1;
                    break;
                }
                if (s[i] == '\\' && i + 1 < len && (s[i + 1] == '"' || s[i + 1] == '\\')) {
                    buf[n++] = (char)s[i + 1];
                    i += 2;
                    continue;
                }
                if (s[i] < 0x20 || s[i] == 0x7F) {
                    st = fail(r, line, "encoding", "control character 0x%02x in a name", s[i]);
                    break;
                }
                int l = s[i] < 0x80 ? 1 : mn_utf8_len(s + i, len - i);
                if (!l) {
                    st = fail(r, line, "encoding", "not valid UTF-8 text");
                    break;
                }
                memcpy(buf + n, s + i, (size_t)l);
                n += (size_t)l;
                i += (size_t)l;
            }
            if (st) break;
            if (!closed) {
                st = fail(r, start_line, "name", "unterminated quoted name");
                break;
            }
            if (!push_token(r, TOK_STRING, start_line, n))
                st = mn_error_set(r->err, MN_ERR_NOMEM, r->file, 0, "", "out of memory");
            continue;
        }
        /* a word: up to white space, a quote or a comment */
        size_t n = 0;
        while (i < len) {
            unsigned d = s[i];
            if (d == ' ' || d == '\t' || d == '\r' || d == '\n' || d == '#' ||
                is_open_quote(s + i, len - i))
                break;
            if (d < 0x20 || d == 0x7F) break;
            if (d < 0x80) { /* ASCII, the common case */
                buf[n++] = (char)d;
                i++;
                continue;
            }
            int l = mn_utf8_len(s + i, len - i);
            if (!l) {
                st = fail(r, line, "encoding", "not valid UTF-8 text");
                break;
            }
            /* The thesis prints negative numbers with U+2212 MINUS SIGN. */
            if (l == 3 && d == 0xE2 && s[i + 1] == 0x88 && s[i + 2] == 0x92)
                buf[n++] = '-';
            else
                memcpy(buf + n, s + i, (size_t)l), n += (size_t)l;
            i += (size_t)l;
        }
        if (st) break;
        if (n == 0) {
            st = fail(r, line, "encoding", "control character 0x%02x", s[i]);
            break;
        }
        if (!push_token(r, TOK_WORD, line, n))
            st = mn_error_set(r->err, MN_ERR_NOMEM, r->file, 0, "", "out of memory");
    }
    r->last_line = line;
    return st;
}

static const token* peek(const reader* r) {
    static const token end = {TOK_END, 0, (char*)""};
    return r->pos < r->ntok ? &r->toks[r->pos] : &end;
}
static int tok_line(const reader* r) {
    return r->pos < r->ntok ? r->toks[r->pos].line : r->last_line;
}
static int is_word(const token* t, const char* w) {
    return t->kind == TOK_WORD && !strcmp(t->text, w);
}

/* A word that is a number (finite, magnitude <= SKEL_MAX_ABS)? */
static int tok_number(const token* t, double* v) {
    if (t->kind != TOK_WORD) return 0;
    char* end;
    double x;
    if (!mn_parse_double(t->text, &end, &x) || *end) return 0;
    if (fabs(x) > SKEL_MAX_ABS) return 0;
    *v = x;
    return 1;
}
/* Does the word look like the start of a number (so a bad one is reported as such)? */
static int looks_numeric(const token* t) {
    if (t->kind != TOK_WORD) return 0;
    const char* s = t->text;
    if (*s == '+' || *s == '-') s++;
    if (*s == '.') s++;
    return isdigit((unsigned char)*s) || !strncmp(s, "nan", 3) || !strncmp(s, "NAN", 3) ||
           !strncmp(s, "NaN", 3) || !strncmp(s, "inf", 3) || !strncmp(s, "INF", 3) ||
           !strncmp(s, "Inf", 3);
}

static const char* describe(const token* t) {
    return t->kind == TOK_END ? "end of file" : t->text;
}

/* Reads count numbers for keyword kw. */
static mn_status expect_numbers(reader* r, const char* kw, double* v, int count) {
    for (int i = 0; i < count; i++) {
        const token* t = peek(r);
        if (!tok_number(t, &v[i])) {
            if (looks_numeric(t)) {
                char* end;
                double x;
                const char* why = "not a number";
                if (mn_parse_double(t->text, &end, &x) && !*end)
                    why = "number out of range (|x| > 1e6)";
                else if ((void)strtod(t->text, &end), !*end)
                    why = "not a finite number";
                return fail(r, tok_line(r), kw, "\"%.40s\": %s", t->text, why);
            }
            if (i > 0)
                return fail(r, tok_line(r), kw, "expected %d numbers, got only %d", count, i);
            return fail(r, tok_line(r), kw, "expected %d number%s, got %.60s", count,
                        count > 1 ? "s" : "", describe(t));
        }
        r->pos++;
    }
    return MN_OK;
}

static mn_status expect_string(reader* r, const char* kw, char** out) {
    const token* t = peek(r);
    if (t->kind != TOK_STRING)
        return fail(r, tok_line(r), kw, "expected a quoted name, got %.60s", describe(t));
    if (!t->text[0]) return fail(r, t->line, kw, "empty name");
    if (strlen(t->text) > 200) return fail(r, t->line, kw, "name longer than 200 bytes");
    *out = t->text;
    r->pos++;
    return MN_OK;
}

/* ---- the parsed file ------------------------------------------------------------------- */
typedef struct skel_entry {
    const char* name;
    int line;
    int parent;   /* entry index, -1 for a root */
    int def;      /* def index or -1 */
    int mirrored; /* the def applies mirrored */
} skel_entry;

typedef struct skel_file {
    const char* name;
    int line;
    int have;
    skel_entry* e;
    int n, cap;
    skel_def* defs;
    int ndef, defcap;
    skel_dof* dofs; /* the DOF lines of all defs */
    int ndofs, dofcap;
} skel_file;

/* AXIS := x | y | z | NUM NUM NUM (nonzero). */
static mn_status read_axis(reader* r, const char* kw, mn_vec3* axis) {
    const token* t = peek(r);
    if (is_word(t, "x")) {
        *axis = mn_v3(1, 0, 0);
        r->pos++;
        return MN_OK;
    }
    if (is_word(t, "y")) {
        *axis = mn_v3(0, 1, 0);
        r->pos++;
        return MN_OK;
    }
    if (is_word(t, "z")) {
        *axis = mn_v3(0, 0, 1);
        r->pos++;
        return MN_OK;
    }
    double v[3];
    if (!tok_number(t, &v[0]) && !looks_numeric(t))
        return fail(r, tok_line(r), kw, "expected an axis (x, y, z or three numbers), got %.60s",
                    describe(t));
    int line = tok_line(r);
    mn_status s = expect_numbers(r, kw, v, 3);
    if (s) return s;
    *axis = mn_v3(v[0], v[1], v[2]);
    if (!(mn_vec3_norm(*axis) > 1e-9)) return fail(r, line, kw, "zero axis");
    return MN_OK;
}

/* Optional "LO HI" after a hinge/slide axis: present when the next word is a number. */
static mn_status read_range(reader* r, const char* kw, double scale, skel_dof* d) {
    const token* t = peek(r);
    double tmp;
    if (!tok_number(t, &tmp) && !looks_numeric(t)) return MN_OK;
    int line = tok_line(r);
    double v[2];
    mn_status s = expect_numbers(r, kw, v, 2);
    if (s) return s;
    if (v[0] > v[1]) return fail(r, line, kw, "lower limit %g is above upper limit %g", v[0], v[1]);
    d->limited = 1;
    d->lo = v[0] * scale;
    d->hi = v[1] * scale;
    return MN_OK;
}

static mn_status read_dof(reader* r, const char* kw, skel_def* def) {
    if (def->ndof == SKEL_MAX_DOF_LINES)
        return fail(r, tok_line(r), kw, "more than %d DOF lines in one joint", SKEL_MAX_DOF_LINES);
    skel_dof* d = &def->dof[def->ndof];
    memset(d, 0, sizeof *d);
    d->line = tok_line(r);
    r->pos++; /* the keyword */
    mn_status s = MN_OK;
    if (!strcmp(kw, "hinge") || !strcmp(kw, "slide")) {
        int hinge = kw[0] == 'h';
        d->type = hinge ? MN_JOINT_HINGE : MN_JOINT_SLIDE;
        if ((s = read_axis(r, kw, &d->axis))) return s;
        if ((s = read_range(r, kw, hinge ? DEG : 1.0, d))) return s;
        if (is_word(peek(r), "rest")) {
            int line = tok_line(r);
            r->pos++;
            if ((s = expect_numbers(r, "rest", d->rest, 1))) return s;
            double v = d->rest[0];
            if (hinge) d->rest[0] *= DEG;
            if (d->limited && (d->rest[0] < d->lo || d->rest[0] > d->hi))
                mn_warn(r->warn, r->file, line, "rest", "%g is outside the limits of the %s", v,
                        kw);
        }
    } else if (!strcmp(kw, "ball")) {
        d->type = MN_JOINT_BALL;
        d->axis = mn_v3(0, 0, 1);
        d->swing = MN_PI;
        d->lo = -MN_PI;
        d->hi = MN_PI;
        d->rest[0] = 1;
        int seen[4] = {0, 0, 0, 0};
        for (;;) {
            const token* t = peek(r);
            int k = is_word(t, "axis")    ? 0
                    : is_word(t, "swing") ? 1
                    : is_word(t, "twist") ? 2
                    : is_word(t, "rest")  ? 3
                                          : -1;
            if (k < 0) break;
            if (seen[k]) return fail(r, t->line, t->text, "given twice for one ball");
            seen[k] = 1;
            const char* sub = t->text;
            int line = t->line;
            r->pos++;
            if (k == 0) {
                if ((s = read_axis(r, "ball axis", &d->axis))) return s;
            } else if (k == 1) {
                double v = 0;
                if ((s = expect_numbers(r, "swing", &v, 1))) return s;
                if (v < 0 || v > 180) return fail(r, line, sub, "%g is not in [0, 180] degrees", v);
                d->swing = v * DEG;
                d->limited = 1;
            } else if (k == 2) {
                double v[2];
                if ((s = expect_numbers(r, "twist", v, 2))) return s;
                if (v[0] > v[1])
                    return fail(r, line, sub, "lower limit %g is above upper limit %g", v[0], v[1]);
                d->lo = v[0] * DEG;
                d->hi = v[1] * DEG;
                d->limited = 1;
            } else {
                if ((s = expect_numbers(r, "rest", d->rest, 4))) return s;
                if (!(mn_quat_norm(mn_q4(d->rest[0], d->rest[1], d->rest[2], d->rest[3])) > 1e-9))
                    return fail(r, line, sub, "zero quaternion");
            }
        }
    } else if (!strcmp(kw, "free")) {
        d->type = MN_JOINT_FREE;
        d->rest[3] = 1;
        if (is_word(peek(r), "rest")) {
            int line = tok_line(r);
            r->pos++;
            if ((s = expect_numbers(r, "rest", d->rest, 7))) return s;
            if (!(mn_quat_norm(mn_q4(d->rest[3], d->rest[4], d->rest[5], d->rest[6])) > 1e-9))
                return fail(r, line, "rest", "zero quaternion");
        }
    } else {
        d->type = MN_JOINT_FIXED;
    }
    if (d->type == MN_JOINT_FREE || d->type == MN_JOINT_FIXED) d->axis = mn_v3(0, 0, 1);
    def->ndof++;
    return MN_OK;
}

static mn_status read_define_joint(reader* r, skel_file* f, int line) {
    char* name;
    mn_status s = expect_string(r, "define joint", &name);
    if (s) return s;
    if (f->ndef == f->defcap) {
        int cap = f->defcap ? 2 * f->defcap : 16;
        skel_def* d = realloc(f->defs, sizeof *d * (size_t)cap);
        if (!d) return mn_error_set(r->err, MN_ERR_NOMEM, r->file, 0, "", "out of memory");
        f->defs = d;
        f->defcap = cap;
    }
    skel_def* def = &f->defs[f->ndef++];
    skel_def_init(def);
    skel_dof dof[SKEL_MAX_DOF_LINES];
    def->dof = dof;
    def->name = name;
    def->line = line;
    char seen[16] = {0};
    static const char* single[] = {"object",    "offset", "orientation", "mass",  "com",
                                   "stiffness", "order",  "mirror",      "locked"};
    for (;;) {
        const token* t = peek(r);
        int tl = tok_line(r);
        if (t->kind == TOK_END)
            return fail(r, tl, "define joint", "\"%s\" (line %d): missing end joint", name, line);
        if (t->kind != TOK_WORD)
            return fail(r, tl, "define joint", "expected a keyword, got the name \"%.60s\"",
                        t->text);
        const char* kw = t->text;
        if (!strcmp(kw, "end")) {
            r->pos++;
            if (!is_word(peek(r), "joint"))
                return fail(r, tok_line(r), "end",
                            "expected \"end joint\" to close \"%s\" (line %d)", name, line);
            r->pos++;
            break;
        }
        if (!strcmp(kw, "hinge") || !strcmp(kw, "slide") || !strcmp(kw, "ball") ||
            !strcmp(kw, "free") || !strcmp(kw, "fixed")) {
            if ((s = read_dof(r, kw, def))) return s;
            continue;
        }
        int k = -1;
        for (int i = 0; i < (int)(sizeof single / sizeof single[0]); i++)
            if (!strcmp(kw, single[i])) k = i;
        if (k < 0) {
            if (!strcmp(kw, "rest") || !strcmp(kw, "swing") || !strcmp(kw, "twist") ||
                !strcmp(kw, "axis"))
                return fail(r, tl, kw, "must follow the DOF line it belongs to");
            return fail(r, tl, kw, "unknown keyword in define joint \"%s\"", name);
        }
        if (seen[k]) return fail(r, tl, kw, "given twice for joint \"%s\"", name);
        seen[k] = 1;
        r->pos++;
        double v[3] = {0, 0, 0};
        switch (k) {
        case 0:
            s = expect_string(r, kw, &def->object);
            break;
        case 1:
            if (!(s = expect_numbers(r, kw, v, 3))) def->offset = mn_v3(v[0], v[1], v[2]);
            break;
        case 2:
            if (!(s = expect_numbers(r, kw, v, 3))) {
                double e[3] = {v[0] * DEG, v[1] * DEG, v[2] * DEG};
                def->orient = mn_euler_to_quat(MN_EULER_XYZ, e);
            }
            break;
        case 3:
            if (!(s = expect_numbers(r, kw, v, 1))) {
                if (v[0] < 0) return fail(r, tl, kw, "negative mass %g", v[0]);
                def->mass = v[0];
            }
            break;
        case 4:
            if (!(s = expect_numbers(r, kw, v, 3))) def->com = mn_v3(v[0], v[1], v[2]);
            break;
        case 5:
            if (!(s = expect_numbers(r, kw, v, 1))) {
                if (!(v[0] > 0)) return fail(r, tl, kw, "must be > 0, got %g", v[0]);
                def->stiffness = v[0];
            }
            break;
        case 6: {
            const token* o = peek(r);
            int ord = o->kind == TOK_WORD ? mn_euler_order_parse(o->text) : -1;
            if (ord < 0)
                return fail(r, tok_line(r), kw,
                            "expected a rotation order (XYZ, ZXY, ...), got %.60s", describe(o));
            def->order = ord;
            r->pos++;
            break;
        }
        case 7:
            def->mirror_line = tl;
            s = expect_string(r, kw, &def->mirror);
            break;
        case 8: { /* the kinds of DOFs the solvers hold (model.h, MN_LOCK_*) */
            const token* o = peek(r);
            static const char* const kinds[4] = {"none", "translation", "rotation", "all"};
            int lk = -1;
            for (int i = 0; i < 4 && o->kind == TOK_WORD; i++)
                if (!strcmp(o->text, kinds[i])) lk = i;
            if (lk < 0)
                return fail(r, tok_line(r), kw,
                            "expected none, translation, rotation or all, got %.60s", describe(o));
            def->locked = lk;
            r->pos++;
            break;
        }
        }
        if (s) return s;
    }
    /* free and fixed stand alone */
    for (int i = 0; i < def->ndof; i++) {
        int t = def->dof[i].type;
        if ((t == MN_JOINT_FREE || t == MN_JOINT_FIXED) && def->ndof > 1)
            return fail(r, def->dof[i].line, mn_joint_type_name(t),
                        "must be the only DOF line of joint \"%s\"", name);
    }
    if (f->ndofs + def->ndof > f->dofcap) {
        int cap = f->dofcap ? 2 * f->dofcap : 64;
        skel_dof* d = realloc(f->dofs, sizeof *d * (size_t)cap);
        if (!d) return mn_error_set(r->err, MN_ERR_NOMEM, r->file, 0, "", "out of memory");
        f->dofs = d;
        f->dofcap = cap;
    }
    if (def->ndof > 0) memcpy(f->dofs + f->ndofs, dof, sizeof *dof * (size_t)def->ndof);
    def->dof = NULL; /* set when the file is read: f->dofs may still move */
    def->dof0 = f->ndofs;
    f->ndofs += def->ndof;
    return MN_OK;
}

static mn_status add_entry(reader* r, skel_file* f, const char* name, int line, int parent) {
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 32;
        skel_entry* e = realloc(f->e, sizeof *e * (size_t)cap);
        if (!e) return mn_error_set(r->err, MN_ERR_NOMEM, r->file, 0, "", "out of memory");
        f->e = e;
        f->cap = cap;
    }
    f->e[f->n++] = (skel_entry){name, line, parent, -1, 0};
    return MN_OK;
}

static mn_status read_define_skeleton(reader* r, skel_file* f, int line) {
    if (f->have)
        return fail(r, line, "define skeleton", "a second skeleton (the first is at line %d)",
                    f->line);
    char* name;
    mn_status s = expect_string(r, "define skeleton", &name);
    if (s) return s;
    f->have = 1;
    f->name = name;
    f->line = line;
    /* group stack: the current joint at each open group, and the group's line */
    int depth = 0, cap = 16;
    int* stack = malloc(sizeof(int) * 2 * (size_t)cap);
    if (!stack) return mn_error_set(r->err, MN_ERR_NOMEM, r->file, 0, "", "out of memory");
    int current = -1;
    for (;;) {
        const token* t = peek(r);
        int tl = tok_line(r);
        if (t->kind == TOK_END) {
            s = depth ? fail(r, tl, "group", "group opened at line %d is not closed (end group)",
                             stack[2 * depth - 1])
                      : fail(r, tl, "define skeleton", "\"%s\" (line %d): missing end skeleton",
                             name, line);
            break;
        }
        if (t->kind != TOK_WORD) {
            s = fail(r, tl, "define skeleton",
                     "expected joint, group or end, got the name \"%.60s\"", t->text);
            break;
        }
        r->pos++;
        if (!strcmp(t->text, "joint")) {
            char* jn;
            if ((s = expect_string(r, "joint", &jn))) break;
            if ((s = add_entry(r, f, jn, tl, current))) break;
            current = f->n - 1;
        } else if (!strcmp(t->text, "group")) {
            char* gn;
            if ((s = expect_string(r, "group", &gn))) break;
            if (depth == cap) {
                cap *= 2;
                int* ns = realloc(stack, sizeof(int) * 2 * (size_t)cap);
                if (!ns) {
                    s = mn_error_set(r->err, MN_ERR_NOMEM, r->file, 0, "", "out of memory");
                    break;
                }
                stack = ns;
            }
            stack[2 * depth] = current;
            stack[2 * depth + 1] = tl;
            depth++;
        } else if (!strcmp(t->text, "end")) {
            const token* w = peek(r);
            if (is_word(w, "group")) {
                r->pos++;
                if (depth == 0) {
                    s = fail(r, tl, "end group", "no open group to end");
                    break;
                }
                depth--;
                current = stack[2 * depth];
            } else if (is_word(w, "skeleton")) {
                r->pos++;
                if (depth > 0) {
                    s = fail(r, tl, "end skeleton", "group opened at line %d is not closed",
                             stack[2 * depth - 1]);
                    break;
                }
                break;
            } else {
                s = fail(r, tok_line(r), "end",
                         "expected \"end group\" or \"end skeleton\", got %.60s", describe(w));
                break;
            }
        } else {
            s = fail(r, tl, t->text, "unknown keyword in define skeleton (joint, group, end)");
            break;
        }
    }
    free(stack);
    if (!s && f->n == 0) s = fail(r, line, "define skeleton", "\"%s\" has no joints", name);
    return s;
}

/* ---- from the parsed file to a model --------------------------------------------------- */
/* The text of a model-layer message without its "field: " prefix. */
static const char* strip_field(const mn_error* e) {
    size_t n = strlen(e->field);
    if (n && !strncmp(e->message, e->field, n) && !strncmp(e->message + n, ": ", 2))
        return e->message + n + 2;
    return e->message;
}

static mn_status resolve(reader* r, skel_file* f, mn_model** model) {
    mn_name_map names; /* joint name -> entry index */
    int have_names = mn_name_map_init(&names, (size_t)f->n);
    int* last = malloc(sizeof(int) * (size_t)f->n); /* model joint carrying each entry's name */
    char* nm = malloc(256);
    mn_spec* spec = mn_spec_create(f->name);
    mn_status s = MN_OK;
    if (!have_names || !last || !nm || !spec) {
        s = mn_error_set(r->err, MN_ERR_NOMEM, r->file, 0, "", "out of memory");
        goto done;
    }
    for (int i = 0; i < f->n; i++) {
        int first = mn_name_map_put(&names, f->e[i].name, i);
        if (first >= 0) {
            s = fail(r, f->e[i].line, "joint", "duplicate joint \"%s\" (first at line %d)",
                     f->e[i].name, f->e[first].line);
            goto done;
        }
    }
    /* attach the define joint blocks, then the mirrors */
    for (int d = 0; d < f->ndef; d++) {
        skel_def* def = &f->defs[d];
        def->dof = def->ndof > 0 ? f->dofs + def->dof0 : NULL;
        int i = mn_name_map_get(&names, def->name);
        if (i < 0) {
            s = fail(r, def->line, "define joint", "\"%s\" is not a joint of skeleton \"%s\"",
                     def->name, f->name);
            goto done;
        }
        if (f->e[i].def >= 0) {
            s = fail(r, def->line, "define joint", "\"%s\" is defined twice (first at line %d)",
                     def->name, f->defs[f->e[i].def].line);
            goto done;
        }
        f->e[i].def = d;
    }
    for (int d = 0; d < f->ndef; d++) {
        skel_def* def = &f->defs[d];
        if (!def->mirror) continue;
        int i = mn_name_map_get(&names, def->mirror);
        if (i < 0) {
            s = fail(r, def->mirror_line, "mirror", "\"%s\" is not a joint of skeleton \"%s\"",
                     def->mirror, f->name);
            goto done;
        }
        if (!strcmp(def->mirror, def->name)) {
            s = fail(r, def->mirror_line, "mirror", "a joint cannot mirror itself");
            goto done;
        }
        if (f->e[i].def >= 0 && !f->e[i].mirrored)
            continue; /* its own define joint block (files written as Fig. 6.1 often spell
                         out both sides): that block is the joint, the mirror line a note
                         of the symmetry */
        if (f->e[i].def >= 0) {
            int other = f->e[i].def;
            s = fail(r, def->mirror_line, "mirror",
                     "\"%s\" already has attributes (a mirror at line %d)", def->mirror,
                     f->defs[other].mirror_line);
            goto done;
        }
        f->e[i].def = d;
        f->e[i].mirrored = 1;
    }

    mn_error ae;
    mn_error_clear(&ae);
    for (int i = 0; i < f->n; i++) {
        const skel_entry* e = &f->e[i];
        const skel_def* def = e->def >= 0 ? &f->defs[e->def] : NULL;
        skel_def tmp;
        skel_dof tmp_dof[SKEL_MAX_DOF_LINES];
        if (def && e->mirrored) {
            skel_def_mirror(def, &tmp, tmp_dof);
            def = &tmp;
        }
        int parent = e->parent >= 0 ? last[e->parent] : -1;
        int ndof = def ? def->ndof : 0;
        skel_dof implicit;
        memset(&implicit, 0, sizeof implicit);
        implicit.type = e->parent < 0 ? MN_JOINT_FREE : MN_JOINT_FIXED;
        implicit.rest[3] = 1;
        implicit.axis = mn_v3(0, 0, 1);
        int nframes = ndof > 0 ? ndof : 1;
        int line = def ? def->line : e->line;
        for (int k = 0; k < nframes; k++) {
            const skel_dof* d = ndof > 0 ? &def->dof[k] : &implicit;
            mn_joint_def jd;
            skel_dof_to_def(def, d, &jd, k, nframes);
            if (k < nframes - 1) snprintf(nm, 256, "%s.%d", e->name, k + 1);
            jd.name = k < nframes - 1 ? nm : e->name; /* names are at most 200 bytes */
            jd.parent = parent;
            int idx = mn_spec_add_joint(spec, &jd, &ae); /* sets ae when it fails */
            if (idx < 0) {
                s = fail(r, ndof > 0 ? d->line : line, "joint", "\"%s\": %s", jd.name,
                         strip_field(&ae));
                goto done;
            }
            parent = idx;
        }
        last[i] = parent;
    }
    mn_error ce;
    mn_error_clear(&ce);
    mn_model* m = mn_model_compile(spec, &ce);
    if (!m) {
        s = mn_error_set(r->err, ce.status ? ce.status : MN_ERR_PARSE, r->file, f->line,
                         "define skeleton", "joint %s: %s", ce.field, strip_field(&ce));
        goto done;
    }
    *model = m;
done:
    mn_spec_destroy(spec);
    if (have_names) mn_name_map_free(&names);
    free(last);
    free(nm);
    return s;
}

mn_status mn_skel_read_mem(const char* text, size_t len, const char* name, mn_model** model,
                           mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (!model || (!text && len > 0))
        return mn_error_set(err, MN_ERR_ARG, name ? name : "", 0, "", "NULL argument");
    reader r;
    memset(&r, 0, sizeof r);
    r.file = name ? name : "";
    r.err = err;
    r.warn = warn;
    skel_file f;
    memset(&f, 0, sizeof f);
    mn_status s = tokenize(&r, text ? text : "", len);
    while (!s) {
        const token* t = peek(&r);
        int tl = tok_line(&r);
        if (t->kind == TOK_END) break;
        if (!is_word(t, "define")) {
            s = fail(&r, tl, t->kind == TOK_WORD ? t->text : "define",
                     t->kind == TOK_WORD
                         ? "unknown keyword (expected define skeleton or define joint)"
                         : "expected define skeleton or define joint");
            break;
        }
        r.pos++;
        const token* w = peek(&r);
        if (is_word(w, "skeleton")) {
            r.pos++;
            s = read_define_skeleton(&r, &f, tl);
        } else if (is_word(w, "joint")) {
            r.pos++;
            s = read_define_joint(&r, &f, tl);
        } else {
            s = fail(&r, tok_line(&r), "define", "expected skeleton or joint, got %.60s",
                     describe(w));
        }
    }
    if (!s && !f.have)
        s = fail(&r, r.last_line, "define skeleton",
                 len == 0 ? "empty file" : "no skeleton defined");
    if (!s) s = resolve(&r, &f, model);
    free(r.strings);
    free(r.toks);
    free(f.e);
    free(f.defs);
    free(f.dofs);
    return s;
}
