/* URDF reader (libxml2): robot descriptions as used by ROS, MoveIt, TRAC-IK and Pinocchio.
 *
 * Mapping (see docs/urdf.md): one model joint per URDF link, named by the link, with the
 * URDF joint's own name as its alias (mn_model_find_joint finds either). The root
 * link becomes a FIXED root; every other link carries the URDF joint whose child it is:
 *
 *     revolute   -> HINGE, limited by <limit lower upper> (radians; required)
 *     continuous -> HINGE, unlimited
 *     prismatic  -> SLIDE, limited by <limit lower upper> (metres; required)
 *     fixed      -> FIXED
 *     planar     -> the compound joint of Welman 6.1.1: SLIDE "<link>.1" and SLIDE
 *                   "<link>.2" along two directions across <axis>, then the link's own
 *                   HINGE about <axis> (x, y and the heading in the plane, as MoveIt's and
 *                   Pinocchio's planar joints); <limit> does not apply
 *     floating   -> MN_ERR_UNSUPPORTED
 *
 * The joint <origin xyz rpy> becomes the model joint's offset and rest orientation, with
 * R = Rz(yaw) Ry(pitch) Rx(roll) (the URDF convention: fixed-axis roll, pitch, yaw), so
 * the model joint frame is exactly the URDF child link frame. <axis xyz> (default 1 0 0)
 * is the joint axis in that frame. <inertial> gives mass and centre of mass. Visual and
 * collision geometry is not loaded, so missing mesh files do not matter; <mimic> is
 * ignored with a warning.
 *
 * Safety: the XML is parsed with XML_PARSE_NONET, without entity substitution and without
 * loading any DTD; a document that declares a DOCTYPE or entities is rejected before
 * parsing, so no external entity is ever fetched and no entity is ever expanded.
 *
 * Speed: the XML goes through libxml2's SAX2 interface and no document tree is built; the
 * callbacks keep the few attributes the reader uses, and names are found through a hash
 * map, so reading is linear in the file (a 100,000-link chain reads in a fraction of a
 * second, `marionette bench figread`). */
#include "io/io_internal.h"

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest magnitude accepted for any number (metres, radians, kilograms): beyond it a
 * value is a typo or an attack, not a robot. */
#define URDF_MAX_ABS 1e6

/* An element as the reader saw it: whether it was there, its line, and the values of the
 * (at most two) attributes the reader uses, NULL when absent. The first element of each
 * name is kept, as a look-up of a child by name in a document tree would find it. */
typedef struct urdf_el {
    int present;
    int line;
    const char* v[2];
} urdf_el;

typedef struct urdf_link {
    urdf_el el, inertial, mass_el,
        origin; /* <link name> <inertial> <mass value> <origin xyz rpy> */
    const char* name;
    int line;
    int parent_joint; /* index into joints, -1 when none (a root) */
    double mass;
    mn_vec3 com;
    int first_child, next_sibling; /* child lists in document order, joint indices */
    int last_child;
} urdf_link;

typedef struct urdf_joint {
    /* <joint name type>, <parent link>, <child link>, <origin xyz rpy>, <axis xyz>,
     * <limit lower upper>, <mimic joint> */
    urdf_el el, parent_el, child_el, origin, axis_el, limit, mimic;
    const char* name;
    int line;
    mn_joint_type type;
    int parent, child; /* link indices */
    mn_vec3 xyz, rpy, axis;
    int limited;
    double lower, upper;
    int planar; /* a planar joint: two slides and a hinge (build_spec) */
} urdf_joint;

/* Attribute texts, in blocks that never move. */
typedef struct urdf_block {
    struct urdf_block* next;
    size_t used, cap;
    char data[];
} urdf_block;

typedef struct urdf_ctx {
    const char* file;
    mn_error* err;
    mn_warnings* warn;
    /* what the XML pass collects */
    urdf_el root; /* the root element, v[0] = its name attribute */
    int root_is_robot;
    int doctype; /* a document type declaration was seen */
    int nomem;
    int depth;       /* of the element being read, the root at 1 */
    int cur;         /* the element of depth 2 being read: 1 a link, 2 a joint, else 0 */
    int in_inertial; /* inside the first <inertial> of the current link */
    urdf_block* text;
    urdf_link* links;
    int nlink, cap_link;
    urdf_joint* joints;
    int njoint, cap_joint;
} urdf_ctx;

/* What a message is about, "joint j3 origin": the element ("joint <name>", or "link <name>
 * inertial" when link is set) and the part of it (NULL, or "origin", "mass", ...). The text
 * is put together only when a message needs it, not for every element read. */
typedef struct urdf_what {
    int link;
    const char* name;
    const char* part;
} urdf_what;

static const char* what_text(const urdf_what* w, char out[320]) {
    char head[300];
    if (w->link)
        snprintf(head, sizeof head, "link %s inertial", w->name);
    else
        snprintf(head, sizeof head, "joint %s", w->name);
    if (w->part)
        snprintf(out, 320, "%s %s", head, w->part);
    else
        snprintf(out, 320, "%s", head);
    return out;
}

/* Error naming "<what> <attribute>" as the field, e.g. field "joint j3 origin rpy", text
 * "not a number" -> "robot.urdf:57: joint j3 origin rpy: not a number". */
static mn_status fail(urdf_ctx* c, mn_status s, int line, const urdf_what* w, const char* name,
                      const char* text) {
    char field[400], what[320];
    snprintf(field, sizeof field, "%s%s%s", what_text(w, what), name[0] ? " " : "", name);
    if (!c->err) return s;
    mn_error_set(c->err, s, c->file, line, field, "%s", text);
    /* The field buffer of mn_error is short; keep the whole text in the message. */
    char msg[sizeof c->err->message];
    if (line > 0)
        snprintf(msg, sizeof msg, "%s:%d: %s: %s", c->file, line, field, text);
    else
        snprintf(msg, sizeof msg, "%s: %s: %s", c->file, field, text);
    memcpy(c->err->message, msg, sizeof msg);
    return s;
}

/* ---- the XML pass: SAX callbacks that keep only what the reader uses -------------------- */
/* The document is never built as a tree: libxml2 calls these as it reads, and they copy the
 * attributes the reader needs into urdf_el records, so memory and time stay proportional to
 * the file and small next to a document tree. */

/* A copy of an attribute value [v, end). libxml2 hands a '&' that the text wrote as "&amp;" or
 * a character reference as "&#38;" (entities are not substituted); the copy has the '&'. */
static const char* keep_text(urdf_ctx* c, const xmlChar* v, const xmlChar* end) {
    size_t n = (size_t)(end - v);
    urdf_block* b = c->text;
    if (!b || b->cap - b->used < n + 1) {
        size_t cap = n + 1 > 65536 ? n + 1 : 65536;
        urdf_block* nb = malloc(sizeof *nb + cap);
        if (!nb) {
            c->nomem = 1;
            return NULL;
        }
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        c->text = b = nb;
    }
    char* out = b->data + b->used;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        out[k++] = (char)v[i];
        if (v[i] == '&' && i + 5 <= n && !memcmp(v + i, "&#38;", 5)) i += 4;
    }
    out[k] = 0;
    b->used += k + 1;
    return out;
}

/* Records element el (when it is the first of its name there) with the attributes names[0],
 * names[1] (either may be NULL). attrs: libxml2's (localname, prefix, URI, value, end)
 * quintuples; attributes with a namespace prefix are not URDF's and are skipped. */
static void keep(urdf_ctx* c, xmlParserCtxtPtr px, urdf_el* el, const char* n0, const char* n1,
                 int nattr, const xmlChar** attrs) {
    if (el->present) return;
    el->present = 1;
    el->line = px->input && px->input->line > 0 && px->input->line < INT_MAX ? px->input->line : 0;
    const char* names[2] = {n0, n1};
    for (int k = 0; k < 2; k++) {
        el->v[k] = NULL;
        if (!names[k]) continue;
        for (int a = 0; a < nattr; a++) {
            const xmlChar** at = attrs + 5 * a;
            if (at[1] == NULL && !strcmp((const char*)at[0], names[k])) {
                el->v[k] = keep_text(c, at[3], at[4]);
                break;
            }
        }
    }
}

static void* grow(urdf_ctx* c, void* p, int* cap, int n, size_t elem) {
    if (n < *cap) return p;
    int nc = *cap ? 2 * *cap : 64;
    void* q = realloc(p, (size_t)nc * elem);
    if (!q) {
        c->nomem = 1;
        return NULL;
    }
    *cap = nc;
    return q;
}

static void on_start(void* ctx, const xmlChar* localname, const xmlChar* prefix, const xmlChar* uri,
                     int nns, const xmlChar** ns, int nattr, int ndefaulted,
                     const xmlChar** attrs) {
    xmlParserCtxtPtr px = ctx;
    urdf_ctx* c = px->_private;
    const char* name = (const char*)localname;
    int d = ++c->depth;
    (void)prefix, (void)uri, (void)nns, (void)ns, (void)ndefaulted;
    if (c->nomem) return;
    if (d == 1) {
        c->root_is_robot = !strcmp(name, "robot");
        keep(c, px, &c->root, "name", NULL, nattr, attrs);
    } else if (d == 2 && c->root_is_robot) {
        c->cur = 0;
        c->in_inertial = 0;
        if (!strcmp(name, "link")) {
            urdf_link* l = grow(c, c->links, &c->cap_link, c->nlink, sizeof *l);
            if (!l) return;
            c->links = l;
            memset(&l[c->nlink], 0, sizeof *l);
            keep(c, px, &l[c->nlink++].el, "name", NULL, nattr, attrs);
            c->cur = 1;
        } else if (!strcmp(name, "joint")) {
            urdf_joint* j = grow(c, c->joints, &c->cap_joint, c->njoint, sizeof *j);
            if (!j) return;
            c->joints = j;
            memset(&j[c->njoint], 0, sizeof *j);
            keep(c, px, &j[c->njoint++].el, "name", "type", nattr, attrs);
            c->cur = 2;
        }
    } else if (d == 3 && c->cur == 1) {
        urdf_link* l = &c->links[c->nlink - 1];
        c->in_inertial = !strcmp(name, "inertial") && !l->inertial.present;
        if (c->in_inertial) keep(c, px, &l->inertial, NULL, NULL, nattr, attrs);
    } else if (d == 3 && c->cur == 2) {
        urdf_joint* j = &c->joints[c->njoint - 1];
        if (!strcmp(name, "parent"))
            keep(c, px, &j->parent_el, "link", NULL, nattr, attrs);
        else if (!strcmp(name, "child"))
            keep(c, px, &j->child_el, "link", NULL, nattr, attrs);
        else if (!strcmp(name, "origin"))
            keep(c, px, &j->origin, "xyz", "rpy", nattr, attrs);
        else if (!strcmp(name, "axis"))
            keep(c, px, &j->axis_el, "xyz", NULL, nattr, attrs);
        else if (!strcmp(name, "limit"))
            keep(c, px, &j->limit, "lower", "upper", nattr, attrs);
        else if (!strcmp(name, "mimic"))
            keep(c, px, &j->mimic, "joint", NULL, nattr, attrs);
    } else if (d == 4 && c->cur == 1 && c->in_inertial) {
        urdf_link* l = &c->links[c->nlink - 1];
        if (!strcmp(name, "mass"))
            keep(c, px, &l->mass_el, "value", NULL, nattr, attrs);
        else if (!strcmp(name, "origin"))
            keep(c, px, &l->origin, "xyz", "rpy", nattr, attrs);
    }
}

static void on_end(void* ctx, const xmlChar* localname, const xmlChar* prefix, const xmlChar* uri) {
    xmlParserCtxtPtr px = ctx;
    urdf_ctx* c = px->_private;
    c->depth--;
    (void)localname, (void)prefix, (void)uri;
}

static void on_doctype(void* ctx, const xmlChar* name, const xmlChar* external_id,
                       const xmlChar* system_id) {
    xmlParserCtxtPtr px = ctx;
    urdf_ctx* c = px->_private;
    c->doctype = 1;
    (void)name, (void)external_id, (void)system_id;
}

/* Parses exactly `count` whitespace-separated finite numbers of magnitude <= URDF_MAX_ABS.
 * Returns NULL on success, or what is wrong. */
static const char* parse_numbers(const char* s, double* out, int count) {
    const char* p = s;
    for (int i = 0; i < count; i++) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p) return count == 1 ? "missing number" : "expected more numbers";
        char* end;
        double v;
        if (!mn_parse_double(p, &end, &v)) return "not a number";
        if (*end && !(*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
            return "not a number";
        if (fabs(v) > URDF_MAX_ABS) return "number out of range";
        out[i] = v;
        p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p) return count == 1 ? "more than one number" : "too many numbers";
    return NULL;
}

/* Reads attribute `name` of n as `count` numbers into out; a missing attribute leaves out
 * unchanged (the caller's default) unless required. Field text: "<what> <name>". */
static mn_status read_numbers(urdf_ctx* c, const urdf_el* e, int k, const urdf_what* what,
                              const char* name, double* out, int count, int required) {
    if (!e->v[k]) {
        if (!required) return MN_OK;
        return fail(c, MN_ERR_PARSE, e->line, what, name, "missing");
    }
    const char* why = parse_numbers(e->v[k], out, count);
    if (why) return fail(c, MN_ERR_PARSE, e->line, what, name, why);
    return MN_OK;
}

/* Unit quaternion of R = Rz(yaw) Ry(pitch) Rx(roll), the URDF rpy convention, as the
 * product of the three axis quaternions (exact up to rounding, no matrix round trip). */
static mn_quat quat_from_rpy(mn_vec3 rpy) {
    double sr = sin(0.5 * rpy.x), cr = cos(0.5 * rpy.x);
    double sp = sin(0.5 * rpy.y), cp = cos(0.5 * rpy.y);
    double sy = sin(0.5 * rpy.z), cy = cos(0.5 * rpy.z);
    mn_quat qz = mn_q4(cy, 0, 0, sy), qy = mn_q4(cp, 0, sp, 0), qx = mn_q4(cr, sr, 0, 0);
    return mn_quat_normalize(mn_quat_mul(mn_quat_mul(qz, qy), qx));
}

/* ---- reading the elements ------------------------------------------------------------- */
static mn_status read_link(urdf_ctx* c, urdf_link* L) {
    L->line = L->el.line;
    L->parent_joint = -1;
    L->first_child = L->last_child = L->next_sibling = -1;
    L->name = L->el.v[0];
    if (!L->name || !L->name[0])
        return mn_error_set(c->err, MN_ERR_PARSE, c->file, L->line, "link name",
                            "missing or empty");
    if (L->inertial.present) {
        urdf_what what = {1, L->name, NULL};
        if (L->mass_el.present) {
            urdf_what w2 = {1, L->name, "mass"};
            double v = 0;
            mn_status s = read_numbers(c, &L->mass_el, 0, &w2, "value", &v, 1, 1);
            if (s) return s;
            if (v < 0) return fail(c, MN_ERR_PARSE, L->mass_el.line, &w2, "value", "negative");
            L->mass = v;
        }
        if (L->origin.present) {
            double xyz[3] = {0, 0, 0};
            mn_status s = read_numbers(c, &L->origin, 0, &what, "xyz", xyz, 3, 0);
            if (s) return s;
            double rpy[3];
            s = read_numbers(c, &L->origin, 1, &what, "rpy", rpy, 3, 0); /* checked only */
            if (s) return s;
            L->com = mn_v3(xyz[0], xyz[1], xyz[2]);
        }
    }
    return MN_OK;
}

static mn_status read_joint(urdf_ctx* c, urdf_joint* J, const mn_name_map* links) {
    J->line = J->el.line;
    J->axis = mn_v3(1, 0, 0);
    J->planar = 0;
    J->name = J->el.v[0];
    if (!J->name || !J->name[0])
        return mn_error_set(c->err, MN_ERR_PARSE, c->file, J->line, "joint name",
                            "missing or empty");
    const urdf_what jw = {0, J->name, NULL};
    char what[320]; /* what_text(&jw), for messages */
    const char* type = J->el.v[1];
    if (!type) return fail(c, MN_ERR_PARSE, J->line, &jw, "type", "missing");
    int needs_limit = 0;
    if (strcmp(type, "revolute") == 0)
        J->type = MN_JOINT_HINGE, needs_limit = 1;
    else if (strcmp(type, "continuous") == 0)
        J->type = MN_JOINT_HINGE;
    else if (strcmp(type, "prismatic") == 0)
        J->type = MN_JOINT_SLIDE, needs_limit = 1;
    else if (strcmp(type, "fixed") == 0)
        J->type = MN_JOINT_FIXED;
    else if (strcmp(type, "planar") == 0)
        J->type = MN_JOINT_HINGE, J->planar = 1;
    else if (strcmp(type, "floating") == 0)
        return mn_error_set(c->err, MN_ERR_UNSUPPORTED, c->file, J->line, "",
                            "%s type: %s joints are not supported (only revolute, continuous, "
                            "prismatic, planar and fixed)",
                            what_text(&jw, what), type);
    else
        return mn_error_set(c->err, MN_ERR_PARSE, c->file, J->line, "",
                            "%s type: unknown joint type \"%.40s\"", what_text(&jw, what), type);

    /* parent and child links */
    const urdf_el* ends[2] = {&J->parent_el, &J->child_el};
    const char* role[2] = {"parent", "child"};
    int idx[2];
    for (int k = 0; k < 2; k++) {
        const char* ln = ends[k]->present ? ends[k]->v[0] : NULL;
        int line = ends[k]->present ? ends[k]->line : J->line;
        if (!ln || !ln[0])
            return mn_error_set(c->err, MN_ERR_PARSE, c->file, line, "", "%s %s link: missing",
                                what_text(&jw, what), role[k]);
        idx[k] = mn_name_map_get(links, ln);
        if (idx[k] < 0)
            return mn_error_set(c->err, MN_ERR_PARSE, c->file, line, "",
                                "%s %s link: no link named \"%.100s\"", what_text(&jw, what),
                                role[k], ln);
    }
    J->parent = idx[0];
    J->child = idx[1];
    if (J->parent == J->child)
        return mn_error_set(c->err, MN_ERR_PARSE, c->file, J->child_el.line, "",
                            "%s child link: same as the parent (a cycle)", what_text(&jw, what));

    /* origin */
    if (J->origin.present) {
        urdf_what w2 = {0, J->name, "origin"};
        double v[3] = {0, 0, 0};
        mn_status s = read_numbers(c, &J->origin, 0, &w2, "xyz", v, 3, 0);
        if (s) return s;
        J->xyz = mn_v3(v[0], v[1], v[2]);
        v[0] = v[1] = v[2] = 0;
        s = read_numbers(c, &J->origin, 1, &w2, "rpy", v, 3, 0);
        if (s) return s;
        J->rpy = mn_v3(v[0], v[1], v[2]);
    }

    if (J->type == MN_JOINT_FIXED) return MN_OK; /* axis and limit do not apply */

    if (J->axis_el.present) {
        urdf_what w2 = {0, J->name, "axis"};
        double v[3] = {1, 0, 0};
        mn_status s = read_numbers(c, &J->axis_el, 0, &w2, "xyz", v, 3, 0);
        if (s) return s;
        mn_vec3 a = mn_v3(v[0], v[1], v[2]);
        double len = mn_vec3_norm(a);
        if (!(len > 1e-9)) return fail(c, MN_ERR_PARSE, J->axis_el.line, &w2, "xyz", "zero axis");
        J->axis = mn_vec3_scale(a, 1.0 / len);
    }

    if (needs_limit) {
        if (!J->limit.present)
            return fail(c, MN_ERR_PARSE, J->line, &jw, "limit",
                        "missing (revolute and prismatic joints need <limit lower upper>)");
        urdf_what w2 = {0, J->name, "limit"};
        double lo = 0, hi = 0;
        mn_status s = read_numbers(c, &J->limit, 0, &w2, "lower", &lo, 1, 1);
        if (s) return s;
        s = read_numbers(c, &J->limit, 1, &w2, "upper", &hi, 1, 1);
        if (s) return s;
        if (lo > hi)
            return mn_error_set(c->err, MN_ERR_PARSE, c->file, J->limit.line, "",
                                "%s: lower %g is above upper %g", what_text(&w2, what), lo, hi);
        J->limited = 1;
        J->lower = lo;
        J->upper = hi;
    }
    if (J->mimic.present) {
        const char* mj = J->mimic.v[0];
        mn_warn(c->warn, c->file, J->mimic.line, "",
                "%s mimic: ignored, the joint moves "
                "independently of %s",
                what_text(&jw, what), mj ? mj : "(unnamed)");
    }
    return MN_OK;
}

/* Rejects a DOCTYPE or ENTITY declaration before libxml2 sees the text: URDF needs
 * neither, and refusing them outright rules out external entities and entity bombs. */
static mn_status refuse_dtd(urdf_ctx* c, const char* text, size_t len) {
    static const char* bad[] = {"<!DOCTYPE", "<!ENTITY"};
    const char* end = text + len;
    for (const char* p = text; (p = memchr(p, '<', (size_t)(end - p))) != NULL; p++) {
        if (end - p <= 2 || p[1] != '!') continue;
        for (int k = 0; k < 2; k++) {
            size_t n = strlen(bad[k]);
            if ((size_t)(end - p) >= n && memcmp(p, bad[k], n) == 0) {
                int line = 1;
                for (const char* q = text; (q = memchr(q, '\n', (size_t)(p - q))) != NULL; q++)
                    line++;
                return mn_error_set(c->err, MN_ERR_PARSE, c->file, line, bad[k] + 2,
                                    "document type and entity declarations are not allowed "
                                    "in URDF");
            }
        }
    }
    return MN_OK;
}

/* libxml2 (before 2.12) checks an element's attributes for duplicates pairwise, so one
 * element with 100,000 attributes costs 5e9 comparisons (a 2 MB file, 10 s). URDF elements
 * have a handful: any with more than MN_URDF_MAX_ATTRIBUTES is refused by this linear scan
 * before libxml2 sees the text. It skips comments, CDATA and processing instructions and
 * counts the '=' outside quotes of each tag. */
#define MN_URDF_MAX_ATTRIBUTES 256
static mn_status limit_attributes(urdf_ctx* c, const char* text, size_t len) {
    const char* end = text + len;
    int line = 1;
    for (const char* p = text; p < end;) {
        if (*p == '\n') line++;
        if (*p != '<') {
            p++;
            continue;
        }
        const char* close = NULL;
        if (end - p >= 4 && !memcmp(p, "<!--", 4))
            close = "-->";
        else if (end - p >= 9 && !memcmp(p, "<![CDATA[", 9))
            close = "]]>";
        else if (end - p >= 2 && p[1] == '?')
            close = "?>";
        if (close) {
            size_t cl = strlen(close);
            for (p += 2; p < end && !((size_t)(end - p) >= cl && !memcmp(p, close, cl)); p++)
                if (*p == '\n') line++;
            p += cl;
            continue;
        }
        int n = 0, tag_line = line;
        char quote = 0;
        for (p++; p < end && (quote || *p != '>'); p++) {
            if (*p == '\n') line++;
            if (quote) {
                if (*p == quote) quote = 0;
            } else if (*p == '"' || *p == '\'') {
                quote = *p;
            } else if (*p == '=' && ++n > MN_URDF_MAX_ATTRIBUTES) {
                return mn_error_set(c->err, MN_ERR_PARSE, c->file, tag_line, "xml",
                                    "an element with more than %d attributes",
                                    MN_URDF_MAX_ATTRIBUTES);
            }
        }
    }
    return MN_OK;
}

static void quiet_error(void* ctx, xmlErrorPtr e) {
    (void)ctx;
    (void)e;
}

static mn_status parse_xml(urdf_ctx* c, const char* text, size_t len) {
    if (len == 0) return mn_error_set(c->err, MN_ERR_PARSE, c->file, 0, "", "empty file");
    if (len > (size_t)INT_MAX)
        return mn_error_set(c->err, MN_ERR_PARSE, c->file, 0, "", "file too large");
    mn_status s = refuse_dtd(c, text, len);
    if (!s) s = limit_attributes(c, text, len);
    if (s) return s;
    /* libxml2 reports some failures (an undecodable byte order, say) through its global
     * error channel even with XML_PARSE_NOERROR; the library never prints, so catch them
     * here. The handler is per thread in libxml2 and is put back afterwards. */
    xmlStructuredErrorFunc saved = xmlStructuredError;
    void* saved_ctx = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(NULL, quiet_error);
    xmlParserCtxtPtr px = xmlCreateMemoryParserCtxt(text, (int)len);
    if (!px) {
        xmlSetStructuredErrorFunc(saved_ctx, saved);
        return mn_error_set(c->err, MN_ERR_NOMEM, c->file, 0, "", "out of memory");
    }
    /* Only our callbacks: no document tree is built. */
    memset(px->sax, 0, sizeof *px->sax);
    px->sax->initialized = XML_SAX2_MAGIC;
    px->sax->startElementNs = on_start;
    px->sax->endElementNs = on_end;
    px->sax->internalSubset = on_doctype;
    px->_private = c;
    xmlCtxtUseOptions(px, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                              XML_PARSE_BIG_LINES);
    xmlParseDocument(px);
    xmlSetStructuredErrorFunc(saved_ctx, saved);
    if (c->nomem) {
        xmlFreeParserCtxt(px);
        return mn_error_set(c->err, MN_ERR_NOMEM, c->file, 0, "", "out of memory");
    }
    if (!px->wellFormed) {
        xmlErrorPtr e = xmlCtxtGetLastError(px);
        char msg[300] = "not well-formed XML";
        int line = 0;
        if (e && e->message) {
            snprintf(msg, sizeof msg, "%s", e->message);
            size_t n = strlen(msg);
            while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
                msg[--n] = 0;
            line = e->line > 0 ? e->line : 0;
        }
        xmlFreeParserCtxt(px);
        return mn_error_set(c->err, MN_ERR_PARSE, c->file, line, "xml", "%s", msg);
    }
    xmlFreeParserCtxt(px);
    if (c->doctype)
        return mn_error_set(c->err, MN_ERR_PARSE, c->file, 0, "DOCTYPE",
                            "document type declarations are not allowed in URDF");
    return MN_OK;
}

/* A planar joint's two slides, "<link>.1" and "<link>.2", along u1 and u2 across the axis
 * a (u1 = a x e for the basis vector e least along a, u2 = a x u1), at the joint's origin;
 * d becomes the hinge about a below them. */
static mn_status planar_slides(urdf_ctx* c, const urdf_joint* J, const urdf_link* L, mn_spec* spec,
                               mn_joint_def* d) {
    mn_vec3 a = J->axis;
    mn_vec3 e = fabs(a.x) <= fabs(a.y) && fabs(a.x) <= fabs(a.z) ? mn_v3(1, 0, 0)
                : fabs(a.y) <= fabs(a.z)                         ? mn_v3(0, 1, 0)
                                                                 : mn_v3(0, 0, 1);
    mn_vec3 u[2];
    u[0] = mn_vec3_normalize(mn_vec3_cross(a, e));
    u[1] = mn_vec3_cross(a, u[0]);
    for (int k = 0; k < 2; k++) {
        char name[300];
        snprintf(name, sizeof name, "%s.%d", L->name, k + 1);
        mn_joint_def s = mn_joint_default();
        s.name = name;
        s.parent = d->parent;
        s.type = MN_JOINT_SLIDE;
        s.axis = u[k];
        if (k == 0) s.offset = d->offset, s.orient = d->orient;
        mn_error e2;
        int idx = mn_spec_add_joint(spec, &s, &e2);
        if (idx < 0)
            return mn_error_set(c->err, e2.status ? e2.status : MN_ERR_PARSE, c->file, J->line,
                                e2.field, "link %s: %s", L->name, e2.message);
        d->parent = idx;
    }
    d->offset = mn_v3(0, 0, 0);
    d->orient = mn_quat_identity();
    d->limited = 0;
    return MN_OK;
}

/* Adds the links to the spec depth-first from the root, parents before children, with an
 * explicit stack (no recursion: a deep chain in a hostile file cannot overflow). */
static mn_status build_spec(urdf_ctx* c, int root, mn_spec* spec, int* spec_index,
                            const mn_name_map* links) {
    int* stack = malloc(sizeof(int) * (size_t)c->nlink);
    if (!stack) return mn_error_set(c->err, MN_ERR_NOMEM, c->file, 0, "", "out of memory");
    int top = 0;
    stack[top++] = root;
    mn_status st = MN_OK;
    while (top > 0 && st == MN_OK) {
        int li = stack[--top];
        const urdf_link* L = &c->links[li];
        mn_joint_def d = mn_joint_default();
        d.name = L->name;
        d.mass = L->mass;
        d.com = L->com;
        d.parent = -1;
        d.type = MN_JOINT_FIXED;
        memset(d.q0, 0, sizeof d.q0);
        if (L->parent_joint >= 0) {
            const urdf_joint* J = &c->joints[L->parent_joint];
            d.parent = spec_index[J->parent];
            d.type = J->type;
            d.offset = J->xyz;
            d.orient = quat_from_rpy(J->rpy);
            d.axis = J->axis;
            if (J->planar && (st = planar_slides(c, J, L, spec, &d)) != MN_OK) break;
            d.limited = J->limited;
            d.range[0] = J->lower;
            d.range[1] = J->upper;
            /* Rest state: the URDF zero configuration, moved inside the limits when a
             * range excludes zero (panda_joint4: [-3.07, -0.07]). */
            if (J->limited) d.q0[0] = 0 < J->lower ? J->lower : (0 > J->upper ? J->upper : 0);
        }
        mn_error e; /* set by mn_spec_add_joint when it fails */
        int idx = mn_spec_add_joint(spec, &d, &e);
        if (idx < 0) {
            int line = L->parent_joint >= 0 ? c->joints[L->parent_joint].line : L->line;
            st = mn_error_set(c->err, e.status ? e.status : MN_ERR_PARSE, c->file, line, e.field,
                              "link %s: %s", L->name, e.message);
            break;
        }
        spec_index[li] = idx;
        /* The URDF joint's own name is the model joint's alias, so either name finds it;
         * a link of that name keeps it (names are looked up first). */
        if (L->parent_joint >= 0) {
            const char* jn = c->joints[L->parent_joint].name;
            if (mn_name_map_get(links, jn) < 0 && mn_spec_set_alias(spec, idx, jn) != MN_OK) {
                st = mn_error_set(c->err, MN_ERR_NOMEM, c->file, 0, "", "out of memory");
                break;
            }
        }
        /* Push children in reverse so they come out in document order. Each link is
         * pushed at most once (it has one parent joint), so the stack never overflows. */
        int cnt = 0;
        for (int j = L->first_child; j >= 0; j = c->links[c->joints[j].child].next_sibling)
            cnt++;
        top += cnt;
        int k = top - 1;
        for (int j = L->first_child; j >= 0; j = c->links[c->joints[j].child].next_sibling)
            stack[k--] = c->joints[j].child;
    }
    free(stack);
    return st;
}

static mn_status read_robot(urdf_ctx* c, mn_model** model) {
    if (!c->root.present || !c->root_is_robot)
        return mn_error_set(c->err, MN_ERR_PARSE, c->file, c->root.line, "robot",
                            "the root element is not <robot>");
    int nl = c->nlink, nj = c->njoint;
    if (nl == 0)
        return mn_error_set(c->err, MN_ERR_PARSE, c->file, c->root.line, "link",
                            "the robot has no links");
    mn_name_map links, joints; /* name -> link index, name -> joint index */
    int have_links = mn_name_map_init(&links, (size_t)nl);
    int have_joints = mn_name_map_init(&joints, (size_t)nj);
    mn_status s = MN_OK;
    if (!have_links || !have_joints) {
        s = mn_error_set(c->err, MN_ERR_NOMEM, c->file, 0, "", "out of memory");
        goto done;
    }
    for (int i = 0; i < nl && !s; i++)
        s = read_link(c, &c->links[i]);
    if (s) goto done;

    /* duplicate link names */
    for (int i = 0; i < nl; i++) {
        int first = mn_name_map_put(&links, c->links[i].name, i);
        if (first >= 0) {
            const urdf_link* L = &c->links[i];
            s = mn_error_set(c->err, MN_ERR_PARSE, c->file, L->line, "link name",
                             "duplicate link \"%.100s\" (first at line %d)", L->name,
                             c->links[first].line);
            goto done;
        }
    }

    for (int i = 0; i < nj && !s; i++)
        s = read_joint(c, &c->joints[i], &links);
    if (s) goto done;

    /* duplicate joint names */
    for (int i = 0; i < nj; i++) {
        int first = mn_name_map_put(&joints, c->joints[i].name, i);
        if (first >= 0) {
            const urdf_joint* J = &c->joints[i];
            s = mn_error_set(c->err, MN_ERR_PARSE, c->file, J->line, "joint name",
                             "duplicate joint \"%.100s\" (first at line %d)", J->name,
                             c->joints[first].line);
            goto done;
        }
    }

    /* tree: each link has at most one parent joint */
    for (int j = 0; j < nj; j++) {
        urdf_joint* J = &c->joints[j];
        urdf_link* ch = &c->links[J->child];
        if (ch->parent_joint >= 0) {
            s = mn_error_set(c->err, MN_ERR_PARSE, c->file, J->line, "",
                             "joint %s child link: link \"%.100s\" already has parent joint %s "
                             "(line %d)",
                             J->name, ch->name, c->joints[ch->parent_joint].name,
                             c->joints[ch->parent_joint].line);
            goto done;
        }
        ch->parent_joint = j;
        urdf_link* pa = &c->links[J->parent];
        if (pa->first_child < 0)
            pa->first_child = j;
        else
            c->links[c->joints[pa->last_child].child].next_sibling = j;
        pa->last_child = j;
    }

    /* exactly one root */
    int rootlink = -1;
    for (int i = 0; i < nl; i++) {
        if (c->links[i].parent_joint >= 0) continue;
        if (rootlink >= 0) {
            s = mn_error_set(c->err, MN_ERR_PARSE, c->file, c->links[i].line, "link",
                             "several root links: \"%.100s\" (line %d) and \"%.100s\" have no "
                             "parent joint",
                             c->links[rootlink].name, c->links[rootlink].line, c->links[i].name);
            goto done;
        }
        rootlink = i;
    }
    if (rootlink < 0) {
        s = mn_error_set(c->err, MN_ERR_PARSE, c->file, c->joints[0].line, "joint",
                         "the joints form a cycle: every link has a parent joint");
        goto done;
    }

    /* every link reachable from the root; a link that is not lies on a cycle */
    int* spec_index = malloc(sizeof(int) * (size_t)nl);
    if (!spec_index) {
        s = mn_error_set(c->err, MN_ERR_NOMEM, c->file, 0, "", "out of memory");
        goto done;
    }
    for (int i = 0; i < nl; i++)
        spec_index[i] = -1;
    mn_spec* spec = mn_spec_create(c->root.v[0] ? c->root.v[0] : "robot");
    if (!spec) {
        free(spec_index);
        s = mn_error_set(c->err, MN_ERR_NOMEM, c->file, 0, "", "out of memory");
        goto done;
    }
    s = build_spec(c, rootlink, spec, spec_index, &links);
    if (!s) {
        for (int i = 0; i < nl; i++) {
            if (spec_index[i] >= 0) continue;
            const urdf_joint* J = &c->joints[c->links[i].parent_joint];
            s = mn_error_set(c->err, MN_ERR_PARSE, c->file, J->line, "",
                             "joint %s: link \"%.100s\" lies on a cycle of joints, not below the "
                             "root link \"%.100s\"",
                             J->name, c->links[i].name, c->links[rootlink].name);
            break;
        }
    }
    free(spec_index);
    if (!s) {
        mn_error e;
        mn_error_clear(&e);
        mn_model* m = mn_model_compile(spec, &e);
        if (!m)
            s = mn_error_set(c->err, e.status ? e.status : MN_ERR_PARSE, c->file, e.line, e.field,
                             "%s", e.message);
        else
            *model = m;
    }
    mn_spec_destroy(spec);
done:
    if (have_links) mn_name_map_free(&links);
    if (have_joints) mn_name_map_free(&joints);
    return s;
}

mn_status mn_urdf_read_mem(const char* text, size_t len, const char* name, mn_model** model,
                           mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (!model || (!text && len > 0))
        return mn_error_set(err, MN_ERR_ARG, name, 0, "", "NULL argument");
    urdf_ctx c;
    memset(&c, 0, sizeof c);
    c.file = name ? name : "";
    c.err = err;
    c.warn = warn;
    mn_status s = parse_xml(&c, text ? text : "", len);
    if (!s) s = read_robot(&c, model);
    while (c.text) {
        urdf_block* next = c.text->next;
        free(c.text);
        c.text = next;
    }
    free(c.links);
    free(c.joints);
    return s;
}

mn_status mn_urdf_read(const char* path, mn_model** model, mn_warnings* warn, mn_error* err) {
    return mn_io_read_figure(path, mn_urdf_read_mem, model, warn, err);
}
