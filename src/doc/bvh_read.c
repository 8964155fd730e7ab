/* BVH reader: HIERARCHY -> model (through the spec API), MOTION -> motion.
 *
 * The whole file is tokenised in place, without per-line reads: the header is short, and
 * the MOTION rows (nearly all of a file's bytes) go through a tight loop with a decimal
 * parser that takes Clinger's fast path (see parse_number) and one Euler -> quaternion
 * conversion per joint per frame. The joint mapping is the one io.h and docs/bvh.md
 * describe; the series naming convention is in bvh_internal.h.
 *
 * Everything the file says is checked: numbers are finite and at most MN_BVH_MAX_ABS in
 * magnitude, names are unique valid UTF-8, channel names known, counts consistent, depth
 * and joint count bounded. Memory grows with the rows actually read, so it stays a small
 * multiple of the input size. */
#include "doc/bvh_internal.h"
#include "doc/doc_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char* const mn_bvh_channel_names[6] = {"Xposition", "Yposition", "Zposition",
                                             "Xrotation", "Yrotation", "Zrotation"};

/* What a BVH joint becomes in the model. */
enum { KIND_FIXED, KIND_BALL, KIND_FREE, KIND_SERIES, KIND_END };

/* One HIERARCHY entry (a ROOT, JOINT or End Site) as read. */
typedef struct bvh_node {
    const char* name; /* into the text; not NUL-terminated */
    size_t name_len;
    int parent; /* node index, -1 for a ROOT */
    int line;
    int end_site;
    int has_offset, has_channels;
    int name_index;    /* index of the BVH name in bvh_parser.names */
    mn_vec3 offset;    /* in file units */
    int ch_first, nch; /* channels: ch[ch_first .. ch_first + nch) */
    int col;           /* first column of the node in a MOTION row */
    int kind;
    int nmodel;     /* model joints this node becomes */
    int nend;       /* End Sites named after this joint so far */
    int first_spec; /* spec index of the first of them */
} bvh_node;

/* One conversion step from a MOTION row to the state q. */
enum { OP_BALL, OP_FREE, OP_SLIDE, OP_HINGE };
typedef struct bvh_op {
    int type;
    int col;        /* first column */
    int qadr;       /* first state number */
    int axes[3];    /* OP_BALL/OP_FREE: rotation axes in channel order; SLIDE: axis */
    mn_vec3 offset; /* OP_FREE: offset (scaled); OP_SLIDE: offset component in x */
} bvh_op;

typedef struct bvh_parser {
    const char* p;
    const char* end;
    const char* file; /* name used in messages */
    int line;
    mn_error* err;
    mn_warnings* warn;
    double scale;

    bvh_node* nodes;
    int nnodes, cap_nodes;
    unsigned char* ch; /* channel codes of all nodes */
    int nch, cap_ch;
    int total_channels; /* columns in a MOTION row */

    /* model joints: names and the map used to keep them unique */
    char** names;
    int nnames;
    int* spec_name;         /* spec joint -> index into names */
    mn_name_map name_index; /* name -> index into names */

    /* mn_bvh_options.names_of: its names as written in BVH -> its joint index */
    const mn_model* names_of;
    char** written_names;
    mn_name_map written;
} bvh_parser;

/* ---- errors ----------------------------------------------------------------------------- */

/* fail(P, line, field, fmt, ...): a parse error at a line of the file. */
#define fail(P, line, ...) mn_error_set((P)->err, MN_ERR_PARSE, (P)->file, line, __VA_ARGS__)

static mn_status fail_nomem(bvh_parser* P) {
    return mn_error_set(P->err, MN_ERR_NOMEM, P->file, P->line, "", "out of memory");
}

/* Quoted copy of a token for messages: printable ASCII kept, anything else as '?', cut at
 * 40 characters. */
static const char* show(const char* s, size_t n, char* buf, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < cap && i < 40; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[k++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    if (n > 40 && k + 4 < cap) {
        buf[k++] = '.';
        buf[k++] = '.';
        buf[k++] = '.';
    }
    buf[k] = 0;
    return buf;
}

/* ---- numbers ---------------------------------------------------------------------------- */

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline int is_digit(char c) {
    return (unsigned char)(c - '0') < 10;
}
static inline int is_blank(char c) {
    return c == ' ' || c == '\t';
}
static inline int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Parses a decimal number [sign] digits [. digits] [e [sign] digits] at p (not past end)
 * and returns the first character after it, or NULL when p does not start a number.
 *
 * Clinger's fast path (W. D. Clinger, "How to read floating point numbers accurately",
 * PLDI 1990): when the significant digits form an integer m <= 2^53 and the decimal
 * exponent e has |e| <= 22, both m and 10^|e| are exact doubles, so the single rounding
 * of m * 10^e or m / 10^-e is the correctly rounded result. Every other input goes to
 * strtod on a bounded copy, so the result is always the correctly rounded value. */
static const char* parse_number(const char* p, const char* end, double* out) {
    const char* start = p;
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    uint64_t mant = 0;
    int ndig = 0, exp10 = 0, any = 0, lost = 0;
    while (p < end && is_digit(*p)) {
        unsigned d = (unsigned)(*p - '0');
        any = 1;
        if (ndig < 19) {
            if (mant || d) {
                mant = mant * 10 + d;
                ndig++;
            }
        } else {
            exp10++;
            lost |= d != 0;
        }
        p++;
    }
    if (p < end && *p == '.') {
        p++;
        while (p < end && is_digit(*p)) {
            unsigned d = (unsigned)(*p - '0');
            any = 1;
            if (ndig < 19) {
                if (mant || d) {
                    mant = mant * 10 + d;
                    ndig++;
                }
                exp10--;
            } else {
                lost |= d != 0;
            }
            p++;
        }
    }
    if (!any) return NULL;
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char* q = p + 1;
        int eneg = 0;
        if (q < end && (*q == '-' || *q == '+')) {
            eneg = *q == '-';
            q++;
        }
        if (q >= end || !is_digit(*q)) return NULL;
        int e = 0;
        while (q < end && is_digit(*q)) {
            if (e < 100000) e = e * 10 + (*q - '0');
            q++;
        }
        exp10 += eneg ? -e : e;
        p = q;
    }
    double v;
    if (mant == 0 && !lost) {
        v = 0.0;
    } else if (!lost && mant <= (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22) {
        v = (double)mant;
        v = exp10 < 0 ? v / pow10_exact[-exp10] : v * pow10_exact[exp10];
    } else {
        char buf[512];
        size_t n = (size_t)(p - start);
        if (n >= sizeof buf) return NULL; /* no sane BVH number is this long */
        memcpy(buf, start, n);
        buf[n] = 0;
        v = strtod(buf, NULL);
        neg = 0; /* the copy carries the sign */
    }
    *out = neg ? -v : v;
    return p;
}

/* ---- tokens ----------------------------------------------------------------------------- */

/* Skips whitespace, counting lines (LF, CRLF and a lone CR each end one). */
static void skip_ws(bvh_parser* P) {
    const char* p = P->p;
    while (p < P->end && is_space(*p)) {
        if (*p == '\n') {
            P->line++;
        } else if (*p == '\r') {
            if (!(p + 1 < P->end && p[1] == '\n')) P->line++;
        }
        p++;
    }
    P->p = p;
}

/* Skips blanks on the current line only. */
static void skip_blanks(bvh_parser* P) {
    while (P->p < P->end && is_blank(*P->p))
        P->p++;
}

static int at_eol(const bvh_parser* P) {
    return P->p >= P->end || *P->p == '\n' || *P->p == '\r';
}

/* The next run of non-whitespace characters. */
/* The next run of non-whitespace characters; a brace is a word of its own ("}}" is two). */
static size_t next_word(bvh_parser* P, const char** w) {
    skip_ws(P);
    *w = P->p;
    if (P->p < P->end && (*P->p == '{' || *P->p == '}')) {
        P->p++;
        return 1;
    }
    while (P->p < P->end && !is_space(*P->p) && *P->p != '{' && *P->p != '}')
        P->p++;
    return (size_t)(P->p - *w);
}

static int word_is(const char* w, size_t n, const char* kw) {
    size_t k = strlen(kw);
    if (n != k) return 0;
    for (size_t i = 0; i < n; i++) {
        char a = w[i], b = kw[i];
        if (a >= 'a' && a <= 'z') a = (char)(a - 32);
        if (b >= 'a' && b <= 'z') b = (char)(b - 32);
        if (a != b) return 0;
    }
    return 1;
}

/* The rest of the line as a joint name, trimmed; a trailing "{" (written on the same line
 * by some exporters) is taken off and reported in *brace. */
static mn_status read_name(bvh_parser* P, const char* kw, const char** name, size_t* len,
                           int* brace) {
    skip_blanks(P);
    const char* s = P->p;
    while (P->p < P->end && *P->p != '\n' && *P->p != '\r')
        P->p++;
    const char* e = P->p;
    while (e > s && is_space(e[-1]))
        e--;
    *brace = 0;
    if (e > s && e[-1] == '{') {
        *brace = 1;
        e--;
        while (e > s && is_space(e[-1]))
            e--;
    }
    if (e == s) return fail(P, P->line, kw, "missing joint name");
    if (e - s > MN_BVH_MAX_NAME)
        return fail(P, P->line, kw, "joint name longer than %d bytes", MN_BVH_MAX_NAME);
    if (!mn_utf8_text(s, (size_t)(e - s)))
        return fail(P, P->line, kw, "joint name is not valid UTF-8 text");
    *name = s;
    *len = (size_t)(e - s);
    return MN_OK;
}

/* A finite number within MN_BVH_MAX_ABS on the current line. */
static mn_status read_value(bvh_parser* P, const char* field, const char* what, double* v) {
    skip_blanks(P);
    if (at_eol(P)) return fail(P, P->line, field, "missing %s", what);
    const char* s = P->p;
    const char* e = parse_number(s, P->end, v);
    if (!e || (e < P->end && !is_space(*e))) {
        const char* t = s;
        while (t < P->end && !is_space(*t))
            t++;
        char b[64];
        return fail(P, P->line, field, "%s is not a number: '%s'", what,
                    show(s, (size_t)(t - s), b, sizeof b));
    }
    if (!(*v >= -MN_BVH_MAX_ABS && *v <= MN_BVH_MAX_ABS)) {
        char b[64];
        return fail(P, P->line, field, "%s out of range: '%s'", what,
                    show(s, (size_t)(e - s), b, sizeof b));
    }
    P->p = e;
    return MN_OK;
}

/* A non-negative decimal integer up to max on the current line. */
static mn_status read_count(bvh_parser* P, const char* field, long max, long* out) {
    skip_blanks(P);
    const char* s = P->p;
    long v = 0;
    while (P->p < P->end && is_digit(*P->p)) {
        if (v <= max) v = v * 10 + (*P->p - '0');
        P->p++;
    }
    if (P->p == s || (P->p < P->end && !is_space(*P->p))) {
        const char* t = s;
        while (t < P->end && !is_space(*t))
            t++;
        char b[64];
        return fail(P, P->line, field, "expected a count, found '%s'",
                    show(s, (size_t)(t - s), b, sizeof b));
    }
    if (v > max) return fail(P, P->line, field, "count %ld is above the limit %ld", v, max);
    *out = v;
    return MN_OK;
}

/* Nothing else may follow on the line. */
static mn_status expect_eol(bvh_parser* P, const char* field) {
    skip_blanks(P);
    if (at_eol(P)) return MN_OK;
    const char* t = P->p;
    while (t < P->end && !is_space(*t))
        t++;
    char b[64];
    return fail(P, P->line, field, "unexpected '%s' at end of line",
                show(P->p, (size_t)(t - P->p), b, sizeof b));
}

/* ---- HIERARCHY ------------------------------------------------------------------------- */

static mn_status add_node(bvh_parser* P, int parent, int end_site, const char* name, size_t len,
                          int* index) {
    if (P->nnodes >= MN_BVH_MAX_JOINTS)
        return fail(P, P->line, end_site ? "End Site" : "JOINT", "more than %d joints",
                    MN_BVH_MAX_JOINTS);
    if (P->nnodes == P->cap_nodes) {
        int cap = P->cap_nodes ? 2 * P->cap_nodes : 64;
        bvh_node* n = realloc(P->nodes, (size_t)cap * sizeof *n);
        if (!n) return fail_nomem(P);
        P->nodes = n;
        P->cap_nodes = cap;
    }
    bvh_node* n = &P->nodes[P->nnodes];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->name_len = len;
    n->parent = parent;
    n->line = P->line;
    n->end_site = end_site;
    n->offset = mn_v3(0, 0, 0);
    *index = P->nnodes++;
    return MN_OK;
}

static int channel_code(const char* w, size_t n) {
    for (int c = 0; c < 6; c++)
        if (word_is(w, n, mn_bvh_channel_names[c])) return c;
    return -1;
}

static mn_status read_channels(bvh_parser* P, bvh_node* node) {
    if (node->end_site) return fail(P, P->line, "CHANNELS", "an End Site has no channels");
    if (node->has_channels) return fail(P, P->line, "CHANNELS", "given twice");
    node->has_channels = 1;
    long n;
    mn_status st = read_count(P, "CHANNELS", MN_BVH_MAX_JOINT_CHANNELS, &n);
    if (st) return st;
    if (P->nch + n > P->cap_ch) {
        int cap = P->cap_ch ? P->cap_ch : 256;
        while (cap < P->nch + n)
            cap *= 2;
        unsigned char* c = realloc(P->ch, (size_t)cap);
        if (!c) return fail_nomem(P);
        P->ch = c;
        P->cap_ch = cap;
    }
    node->ch_first = P->nch;
    int seen_pos = 0;
    for (long i = 0; i < n; i++) {
        skip_blanks(P);
        if (at_eol(P))
            return fail(P, P->line, "CHANNELS", "expected %ld channel names, found %ld", n, i);
        const char* w = P->p;
        while (P->p < P->end && !is_space(*P->p))
            P->p++;
        int c = channel_code(w, (size_t)(P->p - w));
        if (c < 0) {
            char b[64];
            return fail(P, P->line, "CHANNELS", "unknown channel '%s'",
                        show(w, (size_t)(P->p - w), b, sizeof b));
        }
        if (c < 3) {
            if (seen_pos & (1 << c))
                return fail(P, P->line, "CHANNELS", "%s given twice", mn_bvh_channel_names[c]);
            seen_pos |= 1 << c;
        }
        P->ch[P->nch++] = (unsigned char)c;
    }
    node->nch = (int)n;
    skip_blanks(P);
    if (!at_eol(P)) {
        long extra = 0;
        while (!at_eol(P)) {
            if (is_space(*P->p)) {
                P->p++;
                continue;
            }
            while (P->p < P->end && !is_space(*P->p))
                P->p++;
            extra++;
        }
        return fail(P, P->line, "CHANNELS", "expected %ld channel names, found %ld", n, n + extra);
    }
    return MN_OK;
}

/* HIERARCHY (ROOT name { ... })+ up to MOTION, iteratively (the depth is bounded by
 * MN_BVH_MAX_DEPTH, the stack lives on the C stack). */
static mn_status read_hierarchy(bvh_parser* P, int* has_motion) {
    const char* w;
    size_t n = next_word(P, &w);
    if (!word_is(w, n, "HIERARCHY")) {
        char b[64];
        return fail(P, P->line, "HIERARCHY",
                    n ? "expected HIERARCHY, found '%s'" : "expected HIERARCHY%s",
                    n ? show(w, n, b, sizeof b) : "");
    }
    int stack[MN_BVH_MAX_DEPTH + 1];
    int depth = 0, need_brace = 0, nroots = 0;
    mn_status st;
    *has_motion = 0;
    for (;;) {
        n = next_word(P, &w);
        if (n == 0) {
            if (depth > 0) {
                const bvh_node* open = &P->nodes[stack[depth - 1]];
                const char* jn = open->end_site ? "End Site" : open->name;
                size_t jl = open->end_site ? 8 : open->name_len;
                return fail(P, P->line, "HIERARCHY", "file ends inside joint '%.*s'",
                            (int)(jl > 60 ? 60 : jl), jn);
            }
            if (nroots == 0) return fail(P, P->line, "HIERARCHY", "no ROOT joint");
            return MN_OK; /* a skeleton without MOTION */
        }
        int line = P->line;
        if (need_brace) {
            if (!(n == 1 && w[0] == '{')) {
                char b[64];
                return fail(P, line, "{", "expected '{', found '%s'", show(w, n, b, sizeof b));
            }
            need_brace = 0;
            continue;
        }
        if (depth == 0) {
            if (word_is(w, n, "MOTION")) {
                if (nroots == 0) return fail(P, line, "MOTION", "no ROOT joint before MOTION");
                *has_motion = 1;
                return expect_eol(P, "MOTION");
            }
            if (!word_is(w, n, "ROOT")) {
                char b[64];
                return fail(P, line, "ROOT", "expected ROOT or MOTION, found '%s'",
                            show(w, n, b, sizeof b));
            }
            const char* name;
            size_t len;
            int brace, idx;
            if ((st = read_name(P, "ROOT", &name, &len, &brace))) return st;
            if ((st = add_node(P, -1, 0, name, len, &idx))) return st;
            stack[depth++] = idx;
            need_brace = !brace;
            nroots++;
            continue;
        }
        bvh_node* cur = &P->nodes[stack[depth - 1]];
        if (word_is(w, n, "OFFSET")) {
            if (cur->has_offset) return fail(P, line, "OFFSET", "given twice");
            double v[3];
            static const char* const what[3] = {"x", "y", "z"};
            for (int k = 0; k < 3; k++)
                if ((st = read_value(P, "OFFSET", what[k], &v[k]))) return st;
            if ((st = expect_eol(P, "OFFSET"))) return st;
            cur->offset = mn_v3(v[0], v[1], v[2]);
            cur->has_offset = 1;
        } else if (word_is(w, n, "CHANNELS")) {
            if ((st = read_channels(P, cur))) return st;
        } else if (word_is(w, n, "JOINT") || word_is(w, n, "End")) {
            int end_site = !word_is(w, n, "JOINT");
            const char* kw = end_site ? "End Site" : "JOINT";
            if (cur->end_site) return fail(P, line, kw, "an End Site has no children");
            if (depth >= MN_BVH_MAX_DEPTH)
                return fail(P, line, kw, "joints nested deeper than %d", MN_BVH_MAX_DEPTH);
            const char* name = NULL;
            size_t len = 0;
            int brace = 0, idx;
            if (end_site) {
                const char* s;
                size_t sn = next_word(P, &s);
                if (P->line != line || !word_is(s, sn, "Site"))
                    return fail(P, line, "End Site", "expected 'End Site'");
                skip_blanks(P);
                if (P->p < P->end && *P->p == '{') {
                    P->p++;
                    brace = 1;
                }
                if ((st = expect_eol(P, "End Site"))) return st;
            } else if ((st = read_name(P, "JOINT", &name, &len, &brace))) {
                return st;
            }
            if ((st = add_node(P, stack[depth - 1], end_site, name, len, &idx))) return st;
            stack[depth++] = idx;
            need_brace = !brace;
        } else if (n == 1 && w[0] == '}') {
            if (!cur->has_offset) {
                const char* jn = cur->end_site ? "End Site" : cur->name;
                size_t jl = cur->end_site ? 8 : cur->name_len;
                return fail(P, cur->line, "OFFSET", "joint '%.*s' has no OFFSET",
                            (int)(jl > 60 ? 60 : jl), jn);
            }
            depth--;
        } else {
            char b[64];
            return fail(P, line, "HIERARCHY", "unexpected '%s'", show(w, n, b, sizeof b));
        }
    }
}

/* ---- names and the spec ------------------------------------------------------------------ */

/* Index of name among the model joint names so far, or -1. */
static int name_find(const bvh_parser* P, const char* name) {
    return mn_name_map_get(&P->name_index, name);
}

/* Appends a model joint name (takes ownership of the malloc'd name); 0 when it exists. */
static int name_add(bvh_parser* P, char* name) {
    if (mn_name_map_put(&P->name_index, name, P->nnames) >= 0) return 0;
    P->names[P->nnames++] = name;
    return 1;
}

static char* dup_name(const char* s, size_t n, size_t extra) {
    char* r = malloc(n + extra + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = 0;
    }
    return r;
}

/* Kind of a node from its channel list (io.h): none -> FIXED, 3 rotations with three
 * different axes -> BALL, X Y Z positions then such rotations -> FREE, else a series. */
static int node_kind(const bvh_parser* P, const bvh_node* nd, mn_euler_order* order) {
    if (nd->end_site) return KIND_END;
    if (nd->nch == 0) return KIND_FIXED;
    const unsigned char* c = P->ch + nd->ch_first;
    const unsigned char* r = NULL;
    if (nd->nch == 3) r = c;
    if (nd->nch == 6 && c[0] == MN_BVH_XPOS && c[1] == MN_BVH_YPOS && c[2] == MN_BVH_ZPOS)
        r = c + 3;
    if (!r || r[0] < 3 || r[1] < 3 || r[2] < 3 || r[0] == r[1] || r[1] == r[2] || r[0] == r[2])
        return KIND_SERIES;
    static const char* const axis = "XYZ";
    char s[4] = {axis[r[0] - 3], axis[r[1] - 3], axis[r[2] - 3], 0};
    static const char* const orders[6] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
    static const mn_euler_order codes[6] = {MN_EULER_XYZ, MN_EULER_XZY, MN_EULER_YXZ,
                                            MN_EULER_YZX, MN_EULER_ZXY, MN_EULER_ZYX};
    for (int i = 0; i < 6; i++)
        if (strcmp(s, orders[i]) == 0) *order = codes[i];
    return nd->nch == 3 ? KIND_BALL : KIND_FREE;
}

/* The series of a node, in model order: position channels first, then rotations, each
 * in file order (bvh_internal.h). Writes channel indices into seq (nch entries). */
static void series_order(const bvh_parser* P, const bvh_node* nd, int* seq) {
    int k = 0;
    const unsigned char* c = P->ch + nd->ch_first;
    for (int i = 0; i < nd->nch; i++)
        if (c[i] < 3) seq[k++] = i;
    for (int i = 0; i < nd->nch; i++)
        if (c[i] >= 3) seq[k++] = i;
}

/* Adds a joint to the spec; its name is P->names[name] and it is spec joint number
 * P->nspec (joints are added in node order, so spec index = running count). */
static mn_status spec_add(bvh_parser* P, mn_spec* spec, mn_joint_def* def, int name, int line) {
    def->name = P->names[name];
    mn_error e; /* set by mn_spec_add_joint when it fails */
    int idx = mn_spec_add_joint(spec, def, &e);
    if (idx < 0) {
        mn_status st = e.status ? e.status : MN_ERR_PARSE;
        return mn_error_set(P->err, st, P->file, line, "JOINT", "%s", e.message);
    }
    P->spec_name[idx] = name;
    return MN_OK;
}

/* Names every model joint, checks that the names are unique, and builds the spec. */
static mn_status build_spec(bvh_parser* P, mn_spec** out) {
    int total = 0;
    for (int i = 0; i < P->nnodes; i++) {
        bvh_node* nd = &P->nodes[i];
        mn_euler_order order = MN_EULER_ZXY;
        nd->kind = node_kind(P, nd, &order);
        nd->nmodel = nd->kind == KIND_SERIES ? nd->nch : 1;
        total += nd->nmodel;
        if (total > MN_BVH_MAX_JOINTS)
            return fail(P, nd->line, "JOINT", "more than %d model joints", MN_BVH_MAX_JOINTS);
    }
    P->names = calloc((size_t)total + 1, sizeof *P->names);
    P->spec_name = malloc(((size_t)total + 1) * sizeof *P->spec_name);
    if (!P->names || !P->spec_name || !mn_name_map_init(&P->name_index, (size_t)total))
        return fail_nomem(P);

    /* BVH names first, so that a generated name never takes a real joint's. */
    for (int i = 0; i < P->nnodes; i++) {
        bvh_node* nd = &P->nodes[i];
        if (nd->kind == KIND_END) continue;
        char* s = dup_name(nd->name, nd->name_len, 0);
        if (!s) return fail_nomem(P);
        int fj = P->names_of ? mn_name_map_get(&P->written, s) : -1;
        if (fj >= 0) { /* the figure's own name, as it was before writing */
            char* own = dup_name(P->names_of->jnt_name[fj], strlen(P->names_of->jnt_name[fj]), 0);
            free(s);
            if (!own) return fail_nomem(P);
            s = own;
        }
        nd->name_index = P->nnames;
        if (!name_add(P, s)) {
            free(s);
            char b[64];
            return fail(P, nd->line, "JOINT", "duplicate joint name '%s'",
                        show(nd->name, nd->name_len, b, sizeof b));
        }
    }
    /* The figure is named after the file: its base name without the extension. */
    char fname[128];
    const char* base = P->file ? strrchr(P->file, '/') : NULL;
    base = base ? base + 1 : (P->file && P->file[0] ? P->file : "bvh");
    snprintf(fname, sizeof fname, "%s", base);
    char* dot = strrchr(fname, '.');
    if (dot && dot != fname) *dot = 0;
    mn_spec* spec = mn_spec_create(fname);
    if (!spec) return fail_nomem(P);
    int seq[MN_BVH_MAX_JOINT_CHANNELS];
    int nspec = 0;
    mn_status st = MN_OK;
    for (int i = 0; i < P->nnodes && !st; i++) {
        bvh_node* nd = &P->nodes[i];
        bvh_node* par = nd->parent >= 0 ? &P->nodes[nd->parent] : NULL;
        mn_joint_def def = mn_joint_default();
        def.parent = par ? par->first_spec + par->nmodel - 1 : -1;
        def.offset = mn_vec3_scale(nd->offset, P->scale);
        nd->first_spec = nspec;
        if (nd->kind == KIND_END) {
            /* "<parent>_end", or "<parent>_end2", ... when that name is taken. */
            char* own = dup_name(par->name, par->name_len, 16);
            if (!own) {
                st = fail_nomem(P);
                break;
            }
            /* Count on from the parent's previous End Site: linear however many it has. */
            for (int k = ++par->nend;; k++) {
                if (k == 1)
                    snprintf(own + par->name_len, 17, "_end");
                else
                    snprintf(own + par->name_len, 17, "_end%d", k);
                if (name_find(P, own) < 0) break;
            }
            nd->name_index = P->nnames;
            name_add(P, own);
            def.type = MN_JOINT_FIXED;
            st = spec_add(P, spec, &def, nd->name_index, nd->line);
            nspec++;
        } else if (nd->kind != KIND_SERIES) {
            mn_euler_order order = MN_EULER_ZXY;
            node_kind(P, nd, &order);
            def.type = nd->kind == KIND_BALL   ? MN_JOINT_BALL
                       : nd->kind == KIND_FREE ? MN_JOINT_FREE
                                               : MN_JOINT_FIXED;
            def.rot_order = order;
            /* position channels below a root are the take's bone lengths: held (docs/bvh.md) */
            if (def.type == MN_JOINT_FREE && par) def.locked = MN_LOCK_TRANSLATION;
            st = spec_add(P, spec, &def, nd->name_index, nd->line);
            nspec++;
        } else {
            series_order(P, nd, seq);
            const unsigned char* c = P->ch + nd->ch_first;
            for (int k = 0; k < nd->nch && !st; k++) {
                int code = c[seq[k]];
                mn_joint_def s = def;
                s.type = code < 3 ? MN_JOINT_SLIDE : MN_JOINT_HINGE;
                if (s.type == MN_JOINT_SLIDE && par) s.locked = MN_LOCK_TRANSLATION;
                s.axis = mn_v3(code % 3 == 0, code % 3 == 1, code % 3 == 2);
                if (k > 0) s.offset = mn_v3(0, 0, 0);
                s.parent = k > 0 ? nspec - 1 : def.parent;
                int name = nd->name_index;
                if (k + 1 < nd->nch) {
                    size_t cap = nd->name_len + 32;
                    char* sname = malloc(cap);
                    if (!sname) {
                        st = fail_nomem(P);
                        break;
                    }
                    snprintf(sname, cap, "%.*s:%d:%s", (int)nd->name_len, nd->name, seq[k],
                             mn_bvh_channel_names[code]);
                    name = P->nnames;
                    if (!name_add(P, sname)) {
                        char b[64];
                        st = fail(P, nd->line, "JOINT", "duplicate joint name '%s'",
                                  show(sname, strlen(sname), b, sizeof b));
                        free(sname);
                        break;
                    }
                }
                st = spec_add(P, spec, &s, name, nd->line);
                nspec++;
            }
        }
    }
    if (st) {
        mn_spec_destroy(spec);
        return st;
    }
    *out = spec;
    return MN_OK;
}

/* ---- MOTION ---------------------------------------------------------------------------- */

/* The conversion program from a row of channels to q: one op per BALL/FREE joint and one
 * per joint of a series. Model joints are found by name (the compiler may reorder). */
static mn_status build_ops(bvh_parser* P, const mn_model* m, bvh_op** ops_out, int* nops_out) {
    int* model_of_name = malloc((size_t)(P->nnames ? P->nnames : 1) * sizeof *model_of_name);
    bvh_op* ops = malloc((size_t)(P->total_channels + 1) * sizeof *ops);
    if (!model_of_name || !ops) {
        free(model_of_name);
        free(ops);
        return fail_nomem(P);
    }
    for (int k = 0; k < P->nnames; k++)
        model_of_name[k] = -1;
    for (int j = 0; j < m->njoint; j++) {
        int k = name_find(P, m->jnt_name[j]);
        if (k >= 0) model_of_name[k] = j;
    }
    int nops = 0, col = 0, seq[MN_BVH_MAX_JOINT_CHANNELS];
    mn_status st = MN_OK;
    for (int i = 0; i < P->nnodes && !st; i++) {
        bvh_node* nd = &P->nodes[i];
        nd->col = col;
        if (nd->kind == KIND_END || nd->kind == KIND_FIXED) continue;
        const unsigned char* c = P->ch + nd->ch_first;
        if (nd->kind == KIND_SERIES) series_order(P, nd, seq);
        int nj = nd->kind == KIND_SERIES ? nd->nch : 1;
        for (int k = 0; k < nj; k++) {
            int j = model_of_name[P->spec_name[nd->first_spec + k]];
            if (j < 0) {
                st = mn_error_set(P->err, MN_ERR_PARSE, P->file, nd->line, "JOINT",
                                  "joint lost in compilation");
                break;
            }
            bvh_op* op = &ops[nops++];
            op->qadr = m->jnt_qadr[j];
            if (nd->kind == KIND_SERIES) {
                int code = c[seq[k]];
                double off[3] = {nd->offset.x, nd->offset.y, nd->offset.z};
                op->type = code < 3 ? OP_SLIDE : OP_HINGE;
                op->col = col + seq[k];
                op->axes[0] = code % 3;
                op->offset = mn_v3(off[code % 3] * P->scale, 0, 0);
            } else {
                const unsigned char* r = nd->kind == KIND_BALL ? c : c + 3;
                op->type = nd->kind == KIND_BALL ? OP_BALL : OP_FREE;
                op->col = col;
                for (int a = 0; a < 3; a++)
                    op->axes[a] = r[a] - 3;
                op->offset = mn_vec3_scale(nd->offset, P->scale);
            }
        }
        col += nd->nch;
    }
    free(model_of_name);
    if (st) {
        free(ops);
        return st;
    }
    *ops_out = ops;
    *nops_out = nops;
    return MN_OK;
}

/* q = q_a(e0) q_b(e1) q_c(e2): the rotation Ra(e0) Rb(e1) Rc(e2) of math.h's Euler
 * convention (intrinsic, in the order the channels are listed), angles in degrees. */
static mn_quat euler_deg_to_quat(const int axes[3], const double deg[3]) {
    mn_quat q = mn_quat_identity();
    for (int k = 0; k < 3; k++) {
        double s, c;
        mn_sincos(deg[k] * (MN_PI / 360.0), &s, &c);
        /* q * (c, s e_axis), written out for each axis */
        mn_quat r;
        switch (axes[k]) {
        case 0:
            r = mn_q4(q.w * c - q.x * s, q.x * c + q.w * s, q.y * c + q.z * s, q.z * c - q.y * s);
            break;
        case 1:
            r = mn_q4(q.w * c - q.y * s, q.x * c - q.z * s, q.y * c + q.w * s, q.z * c + q.x * s);
            break;
        default:
            r = mn_q4(q.w * c - q.z * s, q.x * c + q.y * s, q.y * c - q.x * s, q.z * c + q.w * s);
            break;
        }
        q = r;
    }
    return q;
}

static void row_to_q(const bvh_op* ops, int nops, const double* row, double scale, double* q) {
    for (int i = 0; i < nops; i++) {
        const bvh_op* op = &ops[i];
        const double* v = row + op->col;
        double* out = q + op->qadr;
        switch (op->type) {
        case OP_FREE: {
            out[0] = v[0] * scale - op->offset.x;
            out[1] = v[1] * scale - op->offset.y;
            out[2] = v[2] * scale - op->offset.z;
            mn_quat r = euler_deg_to_quat(op->axes, v + 3);
            out[3] = r.w;
            out[4] = r.x;
            out[5] = r.y;
            out[6] = r.z;
            break;
        }
        case OP_BALL: {
            mn_quat r = euler_deg_to_quat(op->axes, v);
            out[0] = r.w;
            out[1] = r.x;
            out[2] = r.y;
            out[3] = r.z;
            break;
        }
        case OP_SLIDE:
            out[0] = v[0] * scale - op->offset.x;
            break;
        default:
            out[0] = v[0] * (MN_PI / 180.0);
            break;
        }
    }
}

/* A keyword followed by a colon on the same line ("Frames:", "Frames :", "Frames:3069").
 * On return P->p is after the colon. */
static int keyword_colon(bvh_parser* P, const char* kw) {
    const char* w;
    size_t n = next_word(P, &w), k = strlen(kw);
    if (n < k || !word_is(w, k, kw)) return 0;
    P->p = w + k;
    skip_blanks(P);
    if (P->p >= P->end || *P->p != ':') return 0;
    P->p++;
    return 1;
}

/* Reads "Frames: N" and "Frame Time: t". */
static mn_status read_motion_header(bvh_parser* P, long* frames, int* frames_line, double* ftime) {
    mn_status st;
    skip_ws(P);
    *frames_line = P->line;
    if (!keyword_colon(P, "Frames") || P->line != *frames_line)
        return fail(P, *frames_line, "Frames", "expected 'Frames:'");
    if ((st = read_count(P, "Frames", 100000000L, frames))) return st;
    if ((st = expect_eol(P, "Frames"))) return st;
    const char* w;
    size_t n = next_word(P, &w);
    int line = P->line;
    if (!word_is(w, n, "Frame") || !keyword_colon(P, "Time") || P->line != line)
        return fail(P, line, "Frame Time", "expected 'Frame Time:'");
    if ((st = read_value(P, "Frame Time", "frame time", ftime))) return st;
    if (!(*ftime > 0)) return fail(P, line, "Frame Time", "frame time must be positive");
    return expect_eol(P, "Frame Time");
}

/* Reads the rows of the MOTION section into motion (q grows with the rows read). */
static mn_status read_rows(bvh_parser* P, const mn_model* m, const bvh_op* ops, int nops,
                           long frames_said, int frames_line, mn_motion* mo) {
    const int nch = P->total_channels, nq = m->nq;
    double* row = malloc((size_t)(nch ? nch : 1) * sizeof *row);
    if (!row) return fail_nomem(P);
    /* Preallocate for the declared count, but never more than the rows the remaining bytes
     * can hold (each number needs at least 2 bytes). */
    size_t left = (size_t)(P->end - P->p);
    size_t cap = (size_t)frames_said, most = nch ? left / (2 * (size_t)nch) + 1 : 0;
    if (cap > most) cap = most;
    double* q = NULL;
    if (nq && cap) {
        q = malloc(cap * (size_t)nq * sizeof *q);
        if (!q) {
            free(row);
            return fail_nomem(P);
        }
    }
    size_t nframes = 0;
    const char* p = P->p;
    const char* end = P->end;
    int line = P->line;
    mn_status st = MN_OK;
    /* Move to the start of the line after "Frame Time". */
    while (p < end && *p != '\n' && *p != '\r')
        p++;
    for (;;) {
        /* end of the previous line */
        if (p < end && *p == '\r') p++;
        if (p < end && *p == '\n') p++;
        if (p >= end) break;
        line++;
        while (p < end && is_blank(*p))
            p++;
        if (p >= end) break;
        if (*p == '\n' || *p == '\r') {
            /* A blank line; with no channels, each frame is one (empty) line. */
            if (nch == 0 && (long)nframes < frames_said) nframes++;
            continue;
        }
        if (nch == 0) {
            st = fail(P, line, "MOTION", "frame %zu: expected 0 numbers, found more", nframes);
            break;
        }
        for (int c = 0; c < nch; c++) {
            if (p >= end || *p == '\n' || *p == '\r') {
                st = fail(P, line, "MOTION", "frame %zu: expected %d numbers, found %d", nframes,
                          nch, c);
                break;
            }
            const char* s = p;
            p = parse_number(s, end, &row[c]);
            if (!p || (p < end && !is_space(*p))) {
                const char* t = s;
                while (t < end && !is_space(*t))
                    t++;
                char b[64];
                st = fail(P, line, "MOTION", "frame %zu, column %d: not a number: '%s'", nframes,
                          c + 1, show(s, (size_t)(t - s), b, sizeof b));
                break;
            }
            if (!(row[c] >= -MN_BVH_MAX_ABS && row[c] <= MN_BVH_MAX_ABS)) {
                char b[64];
                st = fail(P, line, "MOTION", "frame %zu, column %d: number out of range: '%s'",
                          nframes, c + 1, show(s, (size_t)(p - s), b, sizeof b));
                break;
            }
            while (p < end && is_blank(*p))
                p++;
        }
        if (st) break;
        if (p < end && *p != '\n' && *p != '\r') {
            int found = nch;
            while (p < end && *p != '\n' && *p != '\r') {
                if (is_space(*p)) {
                    p++;
                    continue;
                }
                while (p < end && !is_space(*p))
                    p++;
                found++;
            }
            st = fail(P, line, "MOTION", "frame %zu: expected %d numbers, found %d", nframes, nch,
                      found);
            break;
        }
        if (nq) {
            if (nframes == cap) {
                size_t ncap = cap ? 2 * cap : 64;
                double* nqv = realloc(q, ncap * (size_t)nq * sizeof *q);
                if (!nqv) {
                    st = fail_nomem(P);
                    break;
                }
                q = nqv;
                cap = ncap;
            }
            row_to_q(ops, nops, row, P->scale, q + nframes * (size_t)nq);
        }
        nframes++;
    }
    free(row);
    if (st) {
        free(q);
        return st;
    }
    /* With no channels the frames are the empty lines counted above, never the Frames line
     * alone: a header of 1e8 frames over a file of 100 bytes is 100 frames at most, so the
     * frames (and what is written from them) stay linear in the file's size. */
    if ((long)nframes != frames_said)
        mn_warn(P->warn, P->file, frames_line, "Frames",
                "Frames says %ld, data has %zu rows: using the data", frames_said, nframes);
    mo->nframes = (int)nframes;
    mo->nq = nq;
    mo->q = q;
    return MN_OK;
}

/* ---- entry points ---------------------------------------------------------------------- */

mn_bvh_options mn_bvh_default(void) {
    mn_bvh_options o;
    memset(&o, 0, sizeof o);
    o.scale = 1.0;
    return o;
}

static void parser_free(bvh_parser* P) {
    free(P->nodes);
    free(P->ch);
    for (int i = 0; i < P->nnames; i++)
        free(P->names[i]);
    free(P->names);
    free(P->spec_name);
    mn_name_map_free(&P->name_index);
    for (int j = 0; P->written_names && j < P->names_of->njoint; j++)
        free(P->written_names[j]);
    free(P->written_names);
    mn_name_map_free(&P->written);
}

/* The written form of each of names_of's joint names -> the joint (the first one when two
 * write alike, which mn_bvh_write refuses anyway). */
static mn_status written_names_init(bvh_parser* P, const mn_model* f) {
    P->names_of = f;
    P->written_names = calloc((size_t)f->njoint + 1, sizeof *P->written_names);
    if (!P->written_names || !mn_name_map_init(&P->written, (size_t)f->njoint + 1))
        return fail_nomem(P);
    for (int j = 0; j < f->njoint; j++) {
        P->written_names[j] = mn_bvh_name_written(f->jnt_name[j]);
        if (!P->written_names[j]) return fail_nomem(P);
        mn_name_map_put(&P->written, P->written_names[j], j);
    }
    return MN_OK;
}

mn_status mn_bvh_read_mem(const char* text, size_t len, const char* name, const mn_bvh_options* opt,
                          mn_model** model, mn_motion* motion, mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (motion) memset(motion, 0, sizeof *motion);
    if (!name) name = "<memory>";
    if (!text || !model)
        return mn_error_set(err, MN_ERR_ARG, name, 0, "", "text and model are required");
    mn_bvh_options o = opt ? *opt : mn_bvh_default();
    if (!(o.scale > 0 && o.scale <= 1e9))
        return mn_error_set(err, MN_ERR_ARG, name, 0, "scale", "scale must be in (0, 1e9]");
    if (len > (size_t)INT32_MAX)
        return mn_error_set(err, MN_ERR_ARG, name, 0, "", "file larger than 2 GB");
    mn_error_clear(err);

    bvh_parser P;
    memset(&P, 0, sizeof P);
    P.p = text;
    P.end = text + len;
    P.file = name;
    P.line = 1;
    P.err = err;
    P.warn = warn;
    P.scale = o.scale;
    /* A UTF-8 byte order mark is allowed and skipped. */
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF)
        P.p += 3;

    int has_motion = 0;
    mn_spec* spec = NULL;
    mn_model* m = NULL;
    bvh_op* ops = NULL;
    int nops = 0;
    mn_motion mo;
    memset(&mo, 0, sizeof mo);
    mn_status st = o.names_of ? written_names_init(&P, o.names_of) : MN_OK;
    if (!st) st = read_hierarchy(&P, &has_motion);
    if (!st) {
        for (int i = 0; i < P.nnodes; i++)
            P.total_channels += P.nodes[i].nch;
        st = build_spec(&P, &spec);
    }
    if (!st) {
        m = mn_model_compile(spec, err);
        if (!m) st = err && err->status ? err->status : MN_ERR_PARSE;
    }
    if (!st) st = build_ops(&P, m, &ops, &nops);
    if (!st) {
        if (has_motion) {
            long frames = 0;
            int frames_line = 0;
            double ftime = 0;
            st = read_motion_header(&P, &frames, &frames_line, &ftime);
            if (!st) st = read_rows(&P, m, ops, nops, frames, frames_line, &mo);
            mo.frame_time = ftime;
        } else {
            mn_warn(warn, name, P.line, "MOTION", "no MOTION section: the figure has no frames");
            mo.nq = m->nq;
        }
    }
    free(ops);
    mn_spec_destroy(spec);
    parser_free(&P);
    if (st) {
        mn_model_destroy(m);
        mn_motion_free(&mo);
        return st;
    }
    *model = m;
    if (motion)
        *motion = mo;
    else
        mn_motion_free(&mo);
    return MN_OK;
}
