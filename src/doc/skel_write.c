/* Writer of the thesis skeleton text format (Welman Fig. 6.1; docs/skeleton-format.md).
 *
 * Any model can be written. The hierarchy goes into one `define skeleton` block: a chain
 * of single children is a run of `joint` lines, and at a joint with several children all
 * but the last child open a `group` (named after the child), so that after `end group`
 * the last child follows as a plain `joint` line. Several roots are each put in a group.
 *
 * A series of model joints named "N.1", "N.2", ..., "N" (one child each, the later ones
 * with zero offset and no segment) is written back as one compound joint "N" with one
 * DOF line per frame, which is how the reader creates them; any other joint is written
 * as a joint of its own. Every joint gets a `define joint` block with its DOF line(s).
 * Angles are written in degrees, chosen so that they read back to the same radians
 * bit for bit where such a decimal exists; rest orientations are written as XYZ Euler
 * angles and read back to rounding. The file is replaced atomically. */
#include "doc/skel_layout.h"
#include "doc/doc_codecs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (MN_PI / 180.0)

/* Degrees d such that the reader's d * DEG gives back rad exactly, the shortest decimal
 * that does (30, not 29.999999999999996), else a neighbour of rad / DEG that does. */
static double to_degrees(double rad) {
    double d = rad / DEG;
    char s[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, d);
        double v = strtod(s, NULL);
        if (v * DEG == rad) return v;
    }
    double up = d, down = d;
    for (int i = 0; i < 8; i++) {
        up = nextafter(up, INFINITY);
        down = nextafter(down, -INFINITY);
        if (up * DEG == rad) return up;
        if (down * DEG == rad) return down;
    }
    return d;
}

static void put_num(mn_strbuf* b, double v) {
    mn_strbuf_append(b, " ", 1);
    mn_strbuf_double(b, v);
}
static void put_deg(mn_strbuf* b, double rad) {
    put_num(b, to_degrees(rad));
}
/* An Euler angle in degrees: the shortest decimal within 1e-13 degrees (2e-15 rad) of
 * the exact value, so that 89.99999999999999 is written 90. */
static void put_euler_deg(mn_strbuf* b, double rad) {
    double d = rad / DEG, v = d;
    char s[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, d);
        v = strtod(s, NULL);
        if (fabs(v - d) <= 1e-13) break;
    }
    put_num(b, v);
}
static void put_vec(mn_strbuf* b, mn_vec3 v) {
    put_num(b, v.x);
    put_num(b, v.y);
    put_num(b, v.z);
}

/* A quoted name: " and \ escaped. Names must be UTF-8 without control characters (the
 * reader's rule); returns 0 otherwise. */
static int name_ok(const char* s) {
    return s[0] && mn_utf8_text(s, strlen(s));
}
static void put_name(mn_strbuf* b, const char* s) {
    mn_strbuf_append(b, " \"", 2);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') mn_strbuf_append(b, "\\", 1);
        mn_strbuf_append(b, s, 1);
    }
    mn_strbuf_append(b, "\"", 1);
}
/* Two spaces a level, up to MAX_INDENT levels: deeper groups line up at that column, so
 * the text stays linear in the figure however deeply groups nest. */
#define MAX_INDENT 32
static void indent(mn_strbuf* b, int depth) {
    for (int i = 0; i < depth && i < MAX_INDENT; i++)
        mn_strbuf_append(b, "  ", 2);
}

static void put_axis(mn_strbuf* b, mn_vec3 a) {
    if (a.x == 1 && a.y == 0 && a.z == 0)
        mn_strbuf_append(b, " x", 2);
    else if (a.x == 0 && a.y == 1 && a.z == 0)
        mn_strbuf_append(b, " y", 2);
    else if (a.x == 0 && a.y == 0 && a.z == 1)
        mn_strbuf_append(b, " z", 2);
    else
        put_vec(b, a);
}

/* ---- compound joints ------------------------------------------------------------------- */
typedef struct writer {
    const mn_model* m;
    int* head; /* per model joint: first frame of its unit */
    int* tail; /* per model joint: last frame of its unit (carries the name) */
    mn_strbuf b;
} writer;

static int is_dof_type(int t) {
    return t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE || t == MN_JOINT_BALL;
}

/* Is name "<base>.<k>" for this k? */
static int is_frame_name(const char* name, const char* base, size_t blen, int k) {
    char suffix[16];
    snprintf(suffix, sizeof suffix, ".%d", k);
    return strncmp(name, base, blen) == 0 && strcmp(name + blen, suffix) == 0;
}

/* If joint j ends a series "N.1" ... "N.k", "N" the reader would create from a compound
 * joint, returns the first frame of the series; otherwise j. */
static int compound_head(const writer* w, int j) {
    const mn_model* m = w->m;
    if (!is_dof_type(m->jnt_type[j])) return j;
    const char* base = m->jnt_name[j];
    size_t blen = strlen(base);
    /* how many frames: the parent must be "N.k" for some k in 1..7 */
    int p = m->jnt_parent[j];
    if (p < 0) return j;
    int k = 0;
    for (int c = 1; c < 8; c++)
        if (is_frame_name(m->jnt_name[p], base, blen, c)) k = c;
    if (k == 0) return j;
    int frame = j;
    for (int c = k; c >= 1; c--) {
        int q = m->jnt_parent[frame];
        if (q < 0 || !is_frame_name(m->jnt_name[q], base, blen, c)) return j;
        if (!is_dof_type(m->jnt_type[q]) || m->jnt_nchild[q] != 1 || w->tail[q] != q) return j;
        if (m->jnt_mass[q] != 0 || m->jnt_com[q].x != 0 || m->jnt_com[q].y != 0 ||
            m->jnt_com[q].z != 0 || m->jnt_object[q])
            return j;
        if (m->jnt_stiffness[q] != m->jnt_stiffness[j] ||
            m->jnt_rot_order[q] != m->jnt_rot_order[j] || m->jnt_locked[q] != m->jnt_locked[j])
            return j;
        /* every frame after the first sits at the first one's place */
        const mn_vec3 o = m->jnt_offset[frame];
        const mn_quat r = m->jnt_orient[frame];
        if (o.x != 0 || o.y != 0 || o.z != 0 || r.w != 1 || r.x != 0 || r.y != 0 || r.z != 0)
            return j;
        frame = q;
    }
    return frame;
}

static void put_dof(writer* w, int j) {
    const mn_model* m = w->m;
    mn_strbuf* b = &w->b;
    const double* q0 = m->q0 + m->jnt_qadr[j];
    indent(b, 1);
    switch (m->jnt_type[j]) {
    case MN_JOINT_HINGE:
    case MN_JOINT_SLIDE: {
        int hinge = m->jnt_type[j] == MN_JOINT_HINGE;
        mn_strbuf_printf(b, hinge ? "hinge" : "slide");
        put_axis(b, m->jnt_axis[j]);
        if (m->jnt_limited[j]) {
            if (hinge)
                put_deg(b, m->jnt_range[2 * j]), put_deg(b, m->jnt_range[2 * j + 1]);
            else
                put_num(b, m->jnt_range[2 * j]), put_num(b, m->jnt_range[2 * j + 1]);
        }
        if (q0[0] != 0) {
            mn_strbuf_printf(b, " rest");
            if (hinge)
                put_deg(b, q0[0]);
            else
                put_num(b, q0[0]);
        }
        break;
    }
    case MN_JOINT_BALL: {
        mn_strbuf_printf(b, "ball");
        mn_vec3 a = m->jnt_axis[j];
        if (!(a.x == 0 && a.y == 0 && a.z == 1)) {
            mn_strbuf_printf(b, " axis");
            put_axis(b, a);
        }
        if (m->jnt_limited[j]) {
            mn_strbuf_printf(b, " swing");
            put_deg(b, m->jnt_swing[j]);
            mn_strbuf_printf(b, " twist");
            put_deg(b, m->jnt_twist[2 * j]);
            put_deg(b, m->jnt_twist[2 * j + 1]);
        }
        if (!(q0[0] == 1 && q0[1] == 0 && q0[2] == 0 && q0[3] == 0)) {
            mn_strbuf_printf(b, " rest");
            for (int i = 0; i < 4; i++)
                put_num(b, q0[i]);
        }
        break;
    }
    case MN_JOINT_FREE: {
        mn_strbuf_printf(b, "free");
        int ident = q0[0] == 0 && q0[1] == 0 && q0[2] == 0 && q0[3] == 1 && q0[4] == 0 &&
                    q0[5] == 0 && q0[6] == 0;
        if (!ident) {
            mn_strbuf_printf(b, " rest");
            for (int i = 0; i < 7; i++)
                put_num(b, q0[i]);
        }
        break;
    }
    default:
        mn_strbuf_printf(b, "fixed");
        break;
    }
    mn_strbuf_append(b, "\n", 1);
}

/* The attributes of a define joint block, in the order the plain writer gives them. */
enum { A_OBJECT, A_OFFSET, A_ORIENT, A_DOF, A_MASS, A_COM, A_STIFF, A_ORDER, A_LOCKED, A_N };
static const char* const attr_kw[A_N] = {"object", "offset",    "orientation", "",      "mass",
                                         "com",    "stiffness", "order",       "locked"};

/* Does unit t need attribute a (its value is not the default)? */
static int attr_needed(const writer* w, int t, int a) {
    const mn_model* m = w->m;
    int h = w->head[t];
    const mn_vec3 o = m->jnt_offset[h], c = m->jnt_com[t];
    switch (a) {
    case A_OBJECT:
        return m->jnt_object[t] != NULL;
    case A_OFFSET:
        return o.x != 0 || o.y != 0 || o.z != 0;
    case A_ORIENT:
        return !m->jnt_orient_ident[h];
    case A_DOF:
        return 1;
    case A_MASS:
        return m->jnt_mass[t] != 0;
    case A_COM:
        return c.x != 0 || c.y != 0 || c.z != 0;
    case A_STIFF:
        return m->jnt_stiffness[t] != 1;
    case A_ORDER:
        return m->jnt_rot_order[t] != MN_EULER_ZXY;
    default:
        return m->jnt_locked[t] != 0;
    }
}

/* The frames of unit t, first to last; returns how many. */
static int unit_frames(const writer* w, int t, int frames[8]) {
    int n = 0, rev[8];
    for (int j = t; n < 8; j = w->m->jnt_parent[j]) {
        rev[n++] = j;
        if (j == w->head[t]) break;
    }
    for (int i = 0; i < n; i++)
        frames[i] = rev[n - 1 - i];
    return n;
}

/* The line of attribute a of unit t (A_DOF: every frame's line), without its newline when
 * trail (a comment to end it) is given; an object the model no longer has: nothing. */
static void put_attr(writer* w, int t, int a, const char* trail) {
    const mn_model* m = w->m;
    mn_strbuf* b = &w->b;
    int h = w->head[t];
    if (a == A_DOF) {
        int frames[8], n = unit_frames(w, t, frames);
        for (int i = 0; i < n; i++) {
            put_dof(w, frames[i]);
            if (trail && i == n - 1) { /* put_dof ended the line: the comment goes before */
                b->len--;
                mn_strbuf_printf(b, "%s\n", trail);
            }
        }
        return;
    }
    if (a == A_OBJECT && !m->jnt_object[t]) return;
    indent(b, 1);
    mn_strbuf_printf(b, "%s", attr_kw[a]);
    switch (a) {
    case A_OBJECT:
        put_name(b, m->jnt_object[t]);
        break;
    case A_OFFSET:
        put_vec(b, m->jnt_offset[h]);
        break;
    case A_ORIENT: {
        double e[3] = {0, 0, 0};
        if (!m->jnt_orient_ident[h]) mn_euler_from_quat(MN_EULER_XYZ, m->jnt_orient[h], e);
        for (int i = 0; i < 3; i++)
            put_euler_deg(b, e[i]);
        break;
    }
    case A_MASS:
        put_num(b, m->jnt_mass[t]);
        break;
    case A_COM:
        put_vec(b, m->jnt_com[t]);
        break;
    case A_STIFF:
        put_num(b, m->jnt_stiffness[t]);
        break;
    case A_ORDER: {
        const char* on = mn_euler_order_name((mn_euler_order)m->jnt_rot_order[t]);
        mn_strbuf_printf(b, " %s", on ? on : "ZXY");
        break;
    }
    default: {
        static const char* const kinds[4] = {"none", "translation", "rotation", "all"};
        mn_strbuf_printf(b, " %s", kinds[m->jnt_locked[t] & MN_LOCK_ALL]);
        break;
    }
    }
    mn_strbuf_printf(b, "%s\n", trail ? trail : "");
}

/* define joint "N" ... end joint for the unit ending at model joint t. */
static void put_define(writer* w, int t) {
    mn_strbuf* b = &w->b;
    mn_strbuf_printf(b, "\ndefine joint");
    put_name(b, w->m->jnt_name[t]);
    mn_strbuf_append(b, "\n", 1);
    for (int a = 0; a < A_N; a++)
        if (attr_needed(w, t, a)) put_attr(w, t, a, NULL);
    mn_strbuf_printf(b, "end joint\n");
}

/* Child units of unit t (whose frames end at t), in model order. A unit's head is the
 * only model joint of the unit whose parent is outside it. */
static int child_units(const writer* w, int t, int* out) {
    const mn_model* m = w->m;
    int n = 0;
    /* children of t start right after t and after each child's subtree */
    for (int j = t + 1; j < m->jnt_subtree_end[t]; j = m->jnt_subtree_end[j])
        if (m->jnt_parent[j] == t && w->head[j] == j) out[n++] = w->tail[j];
    return n;
}

/* One step of writing the hierarchy: a chain from a unit, or a group's first or last line. */
typedef struct chain_task {
    enum { TASK_CHAIN, TASK_GROUP, TASK_END_GROUP } kind;
    int unit, depth;
} chain_task;

/* Writes the chain starting at unit t: `joint` lines down the last child, a group for
 * every other child. Without recursion, so that no figure can exhaust the C stack: the
 * tasks wait on tasks[], which has room for the 3 per unit that can wait at once. */
static void put_chain(writer* w, int t, int depth, int* scratch, chain_task* tasks) {
    mn_strbuf* b = &w->b;
    int top = 0;
    tasks[top++] = (chain_task){TASK_CHAIN, t, depth};
    while (top > 0) {
        chain_task k = tasks[--top];
        indent(b, k.depth);
        if (k.kind == TASK_END_GROUP) {
            mn_strbuf_printf(b, "end group\n");
            continue;
        }
        mn_strbuf_printf(b, k.kind == TASK_GROUP ? "group" : "joint");
        put_name(b, w->m->jnt_name[k.unit]);
        mn_strbuf_append(b, "\n", 1);
        if (k.kind == TASK_GROUP) continue;
        int n = child_units(w, k.unit, scratch);
        if (n == 0) continue;
        /* Popped in order: group, chain and end group of each child but the last, then the
         * chain of the last, at this depth. */
        tasks[top++] = (chain_task){TASK_CHAIN, scratch[n - 1], k.depth};
        for (int i = n - 2; i >= 0; i--) {
            tasks[top++] = (chain_task){TASK_END_GROUP, scratch[i], k.depth};
            tasks[top++] = (chain_task){TASK_CHAIN, scratch[i], k.depth + 1};
            tasks[top++] = (chain_task){TASK_GROUP, scratch[i], k.depth};
        }
    }
}

/* Writes the defines in the same order as the hierarchy lists the joints. */
static void put_defines(writer* w) {
    for (int j = 0; j < w->m->njoint; j++)
        if (w->tail[j] == j) put_define(w, j);
}

/* Sets up w for m (the compound units); 0 when out of memory. */
static int writer_init(writer* w, const mn_model* m) {
    memset(w, 0, sizeof *w);
    w->m = m;
    int n = m->njoint;
    w->head = malloc(sizeof(int) * (size_t)(n ? n : 1));
    w->tail = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!w->head || !w->tail) return 0;
    for (int j = 0; j < n; j++)
        w->head[j] = w->tail[j] = j;
    /* group compound series (parents come before children, so a series is complete when
     * its last frame is reached) */
    for (int j = 0; j < n; j++) {
        int h = compound_head(w, j);
        if (h == j) continue;
        w->head[j] = h;
        for (int f = m->jnt_parent[j];; f = m->jnt_parent[f]) {
            w->head[f] = h;
            w->tail[f] = j;
            if (f == h) break;
        }
    }
    mn_strbuf_init(&w->b);
    return 1;
}

static void writer_free(writer* w) {
    free(w->head);
    free(w->tail);
    mn_strbuf_free(&w->b);
}

static const char* model_name(const mn_model* m) {
    return m->name && m->name[0] && name_ok(m->name) ? m->name : "figure";
}

/* The plain writer's text of w's model into w->b; 0 when out of memory. */
static int plain_text(writer* w) {
    const mn_model* m = w->m;
    int n = m->njoint;
    int* scratch = malloc(sizeof(int) * (size_t)(n ? n : 1));
    chain_task* tasks = malloc(sizeof *tasks * (3 * (size_t)n + 1));
    if (!scratch || !tasks) {
        free(scratch);
        free(tasks);
        return 0;
    }
    mn_strbuf_printf(&w->b,
                     "# Skeleton in the thesis text format (Welman 1993, Fig. 6.1); grammar in "
                     "docs/skeleton-format.md.\n# %d joints, %d degrees of freedom. "
                     "Lengths in the figure's units, angles in degrees.\n",
                     n, m->nv);
    mn_strbuf_printf(&w->b, "define skeleton");
    put_name(&w->b, model_name(m));
    mn_strbuf_append(&w->b, "\n", 1);
    int nroot = 0;
    for (int j = 0; j < n; j++)
        if (m->jnt_parent[j] < 0) nroot++;
    for (int j = 0; j < n; j++) {
        if (m->jnt_parent[j] >= 0) continue;
        if (nroot > 1) {
            indent(&w->b, 1);
            mn_strbuf_printf(&w->b, "group");
            put_name(&w->b, m->jnt_name[w->tail[j]]);
            mn_strbuf_append(&w->b, "\n", 1);
        }
        put_chain(w, w->tail[j], nroot > 1 ? 2 : 1, scratch, tasks);
        if (nroot > 1) {
            indent(&w->b, 1);
            mn_strbuf_printf(&w->b, "end group\n");
        }
    }
    mn_strbuf_printf(&w->b, "end skeleton\n");
    put_defines(w);
    free(scratch);
    free(tasks);
    return !w->b.failed;
}

static int check_names(const char* path, const mn_model* m, mn_error* err) {
    for (int j = 0; j < m->njoint; j++) {
        if (!name_ok(m->jnt_name[j])) {
            mn_error_set(err, MN_ERR_ARG, path, 0, "joint",
                         "joint %d: its name is not printable UTF-8", j);
            return 0;
        }
        if (m->jnt_object[j] && !name_ok(m->jnt_object[j])) {
            mn_error_set(err, MN_ERR_ARG, path, 0, "object",
                         "joint %s: the object name is not printable UTF-8", m->jnt_name[j]);
            return 0;
        }
    }
    return 1;
}

int mn_skel_check_names(const char* path, const mn_model* m, mn_error* err) {
    return check_names(path, m, err);
}

/* ---- writing in a file's layout ------------------------------------------------------------ */

/* The unit named name (its last frame), -1 when none. */
static int unit_named(const writer* w, const mn_name_map* names, const char* name) {
    int j = name ? mn_name_map_get(names, name) : -1;
    return j >= 0 && w->tail[j] == j ? j : -1;
}

/* Do the skeleton block's items give the model's units, in its order, with its parents? */
static int items_fit(const writer* w, const mn_skel_layout* l, const mn_name_map* names,
                     int* stack) {
    const mn_model* m = w->m;
    int cur = -1, top = 0, last_head = -1, units = 0, total = 0;
    for (int j = 0; j < m->njoint; j++)
        total += w->tail[j] == j;
    for (int i = 0; i < l->n; i++) {
        const sl_elem* e = &l->e[i];
        if (e->kind == SL_GROUP) {
            stack[top++] = cur;
        } else if (e->kind == SL_END_GROUP) {
            if (top == 0) return 0;
            cur = stack[--top];
        } else if (e->kind == SL_JOINT) {
            int j = unit_named(w, names, e->text);
            if (j < 0 || w->head[j] <= last_head) return 0;
            int p = m->jnt_parent[w->head[j]];
            if ((p < 0 ? -1 : w->tail[p]) != cur) return 0;
            last_head = w->head[j];
            cur = j;
            units++;
        }
    }
    return units == total;
}

static void put_line_end(mn_strbuf* b, const sl_elem* e) {
    mn_strbuf_printf(b, "%s\n", e->trail ? e->trail : "");
}

/* The text of w's model in layout l into w->b: 1 done, 0 the layout does not fit (the
 * hierarchy changed), -1 out of memory. explicit_mirrors: write the joints that only a
 * mirror line defined in blocks of their own too; all_blocks: and the joints the file gave
 * no block (whose defaults the reader gives). */
static int layout_text(writer* w, const mn_skel_layout* l, int explicit_mirrors, int all_blocks) {
    const mn_model* m = w->m;
    int n = m->njoint, ok = 1;
    mn_name_map names;
    int* stack = malloc(sizeof(int) * (size_t)(l->n + 1));
    /* per unit: 1 a block in the layout, 3 written, 2 given by a mirror only, 4 by a mirror
     * but to be spelled out */
    unsigned char* state = calloc((size_t)(n ? n : 1), 1);
    if (!stack || !state || !mn_name_map_of_model(&names, m)) {
        free(stack);
        free(state);
        return -1;
    }
    if (!items_fit(w, l, &names, stack)) ok = 0;
    for (int i = 0; ok && i < l->n; i++)
        if (l->e[i].kind == SL_DEFINE) {
            int j = unit_named(w, &names, l->e[i].text);
            if (j >= 0) state[j] = 1;
        }
    for (int i = 0; ok && i < l->n; i++)
        if (l->e[i].kind == SL_MIRROR) {
            int j = unit_named(w, &names, l->e[i].text);
            if (j >= 0 && !state[j]) state[j] = explicit_mirrors ? 4 : 2;
        }
    mn_strbuf* b = &w->b;
    int depth = 1, unit = -1, skip = 0, seen[A_N] = {0}, ndof = 0, dofs_here = 0;
    for (int i = 0; ok && i < l->n; i++) {
        const sl_elem* e = &l->e[i];
        if (skip && e->kind != SL_END_JOINT) continue;
        switch (e->kind) {
        case SL_VERBATIM:
            mn_strbuf_printf(b, "%s\n", e->text);
            break;
        case SL_SKELETON:
            mn_strbuf_printf(b, "define skeleton");
            put_name(b, model_name(m));
            put_line_end(b, e);
            break;
        case SL_END_SKELETON:
            mn_strbuf_printf(b, "end skeleton");
            put_line_end(b, e);
            break;
        case SL_JOINT:
        case SL_GROUP:
            indent(b, depth);
            mn_strbuf_printf(b, e->kind == SL_JOINT ? "joint" : "group");
            put_name(b, e->text);
            put_line_end(b, e);
            depth += e->kind == SL_GROUP;
            break;
        case SL_END_GROUP:
            indent(b, --depth);
            mn_strbuf_printf(b, "end group");
            put_line_end(b, e);
            break;
        case SL_DEFINE:
            unit = unit_named(w, &names, e->text);
            skip = unit < 0;
            if (skip) break;
            state[unit] = 3; /* written */
            memset(seen, 0, sizeof seen);
            ndof = unit_frames(w, unit, (int[8]){0});
            dofs_here = 0;
            for (int k = i + 1; k < l->n && l->e[k].kind != SL_END_JOINT; k++)
                if (l->e[k].kind == SL_ATTR && strchr("hsbf", l->e[k].text[0]) &&
                    strcmp(l->e[k].text, "stiffness"))
                    dofs_here++;
            mn_strbuf_printf(b, "define joint");
            put_name(b, e->text);
            put_line_end(b, e);
            break;
        case SL_ATTR: {
            int a = -1;
            for (int k = 0; k < A_N; k++)
                if (k != A_DOF && !strcmp(e->text, attr_kw[k])) a = k;
            if (!strcmp(e->text, "mirror")) break;
            const char* trail = e->trail;
            if (a < 0) { /* a DOF line: the k-th frame, or every frame at the first line when
                          * the count changed */
                if (dofs_here == ndof) {
                    int frames[8];
                    unit_frames(w, unit, frames);
                    put_dof(w, frames[seen[A_DOF]]);
                    if (trail) {
                        b->len--;
                        mn_strbuf_printf(b, "%s\n", trail);
                    }
                } else if (!seen[A_DOF]) {
                    put_attr(w, unit, A_DOF, trail);
                }
                seen[A_DOF]++;
            } else if (!seen[a]) {
                put_attr(w, unit, a, trail);
                seen[a] = 1;
            }
            break;
        }
        case SL_MIRROR:
            if (unit_named(w, &names, e->text) >= 0) {
                indent(b, 1);
                mn_strbuf_printf(b, "mirror");
                put_name(b, e->text);
                put_line_end(b, e);
            }
            break;
        case SL_END_JOINT:
            if (!skip) {
                for (int a = 0; a < A_N; a++)
                    if (!seen[a] && attr_needed(w, unit, a)) put_attr(w, unit, a, NULL);
                mn_strbuf_printf(b, "end joint");
                put_line_end(b, e);
            }
            skip = 0;
            unit = -1;
            break;
        }
    }
    /* units the layout has no block for (and no mirror gives) */
    for (int j = 0; ok && j < n; j++)
        if (w->tail[j] == j && (state[j] == 4 || (state[j] == 0 && all_blocks))) put_define(w, j);
    if (ok && !l->ends_newline && b->len > 0 && b->data[b->len - 1] == '\n') b->data[--b->len] = 0;
    mn_name_map_free(&names);
    free(stack);
    free(state);
    return b->failed ? -1 : ok;
}

/* Equal values (a mirrored zero, -0, reads back as 0: the same FK). */
static int same3(mn_vec3 a, mn_vec3 b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
}

/* Does text read back to m: the same joints, names, parents, types and values (the rest
 * orientation to rounding, as it goes through Euler angles)? */
static int reads_back(const char* text, size_t len, const mn_model* m) {
    mn_model* r = NULL;
    mn_error e;
    if (mn_skel_read_mem(text, len, "", &r, NULL, &e) != MN_OK) return 0;
    int same = r->njoint == m->njoint && r->nq == m->nq;
    for (int j = 0; same && j < m->njoint; j++) {
        const mn_quat a = m->jnt_orient[j], c = r->jnt_orient[j];
        same = !strcmp(r->jnt_name[j], m->jnt_name[j]) && r->jnt_parent[j] == m->jnt_parent[j] &&
               r->jnt_type[j] == m->jnt_type[j] && r->jnt_limited[j] == m->jnt_limited[j] &&
               same3(r->jnt_offset[j], m->jnt_offset[j]) && same3(r->jnt_axis[j], m->jnt_axis[j]) &&
               same3(r->jnt_com[j], m->jnt_com[j]) && r->jnt_range[2 * j] == m->jnt_range[2 * j] &&
               r->jnt_range[2 * j + 1] == m->jnt_range[2 * j + 1] &&
               r->jnt_twist[2 * j] == m->jnt_twist[2 * j] &&
               r->jnt_twist[2 * j + 1] == m->jnt_twist[2 * j + 1] &&
               r->jnt_swing[j] == m->jnt_swing[j] && r->jnt_mass[j] == m->jnt_mass[j] &&
               r->jnt_stiffness[j] == m->jnt_stiffness[j] &&
               r->jnt_rot_order[j] == m->jnt_rot_order[j] && r->jnt_locked[j] == m->jnt_locked[j] &&
               !r->jnt_object[j] == !m->jnt_object[j] &&
               (!m->jnt_object[j] || !strcmp(r->jnt_object[j], m->jnt_object[j])) &&
               fabs(a.w - c.w) + fabs(a.x - c.x) + fabs(a.y - c.y) + fabs(a.z - c.z) <= 4e-15;
    }
    for (int i = 0; same && i < m->nq; i++)
        same = r->q0[i] == m->q0[i];
    mn_model_destroy(r);
    return same;
}

mn_status mn_skel_write_layout_mem(const mn_model* m, const mn_skel_layout* layout, char** text,
                                   size_t* len, mn_error* err) {
    if (text) *text = NULL;
    if (len) *len = 0;
    if (!m || !text) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    if (!check_names("", m, err)) return MN_ERR_ARG;
    writer w;
    int got = 0;
    if (!writer_init(&w, m)) got = -1;
    /* the layout; with the joints a mirror gave spelled out; and those the file gave no
     * block; the plain text: the first that reads back to m */
    for (int attempt = layout ? 0 : 3; got >= 0 && attempt < 4 && got != 1; attempt++) {
        mn_strbuf_free(&w.b);
        mn_strbuf_init(&w.b);
        got = attempt < 3      ? layout_text(&w, layout, attempt >= 1, attempt >= 2)
              : plain_text(&w) ? 1
                               : -1;
        if (got == 1 && attempt < 3 && !reads_back(w.b.data, w.b.len, m)) got = 0;
    }
    if (got < 0) {
        writer_free(&w);
        return mn_error_set(err, MN_ERR_NOMEM, "", 0, "", "out of memory");
    }
    *text = w.b.data;
    if (len) *len = w.b.len;
    w.b.data = NULL;
    writer_free(&w);
    return MN_OK;
}
