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
#include "io/io_internal.h"

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

/* define joint "N" ... end joint for the unit ending at model joint t. */
static void put_define(writer* w, int t) {
    const mn_model* m = w->m;
    mn_strbuf* b = &w->b;
    int h = w->head[t];
    mn_strbuf_printf(b, "\ndefine joint");
    put_name(b, m->jnt_name[t]);
    mn_strbuf_append(b, "\n", 1);
    if (m->jnt_object[t]) {
        indent(b, 1);
        mn_strbuf_printf(b, "object");
        put_name(b, m->jnt_object[t]);
        mn_strbuf_append(b, "\n", 1);
    }
    mn_vec3 o = m->jnt_offset[h];
    if (o.x != 0 || o.y != 0 || o.z != 0) {
        indent(b, 1);
        mn_strbuf_printf(b, "offset");
        put_vec(b, o);
        mn_strbuf_append(b, "\n", 1);
    }
    if (!m->jnt_orient_ident[h]) {
        double e[3];
        mn_euler_from_quat(MN_EULER_XYZ, m->jnt_orient[h], e);
        indent(b, 1);
        mn_strbuf_printf(b, "orientation");
        for (int i = 0; i < 3; i++)
            put_euler_deg(b, e[i]);
        mn_strbuf_append(b, "\n", 1);
    }
    /* the frames of the unit, first to last */
    int frames[8], n = 0;
    for (int j = t; n < 8; j = m->jnt_parent[j]) {
        frames[n++] = j;
        if (j == h) break;
    }
    for (int i = n - 1; i >= 0; i--)
        put_dof(w, frames[i]);
    if (m->jnt_mass[t] != 0) {
        indent(b, 1);
        mn_strbuf_printf(b, "mass");
        put_num(b, m->jnt_mass[t]);
        mn_strbuf_append(b, "\n", 1);
    }
    mn_vec3 c = m->jnt_com[t];
    if (c.x != 0 || c.y != 0 || c.z != 0) {
        indent(b, 1);
        mn_strbuf_printf(b, "com");
        put_vec(b, c);
        mn_strbuf_append(b, "\n", 1);
    }
    if (m->jnt_stiffness[t] != 1) {
        indent(b, 1);
        mn_strbuf_printf(b, "stiffness");
        put_num(b, m->jnt_stiffness[t]);
        mn_strbuf_append(b, "\n", 1);
    }
    if (m->jnt_rot_order[t] != MN_EULER_ZXY) {
        const char* on = mn_euler_order_name((mn_euler_order)m->jnt_rot_order[t]);
        indent(b, 1);
        mn_strbuf_printf(b, "order %s\n", on ? on : "ZXY");
    }
    if (m->jnt_locked[t]) {
        static const char* const kinds[4] = {"none", "translation", "rotation", "all"};
        indent(b, 1);
        mn_strbuf_printf(b, "locked %s\n", kinds[m->jnt_locked[t] & MN_LOCK_ALL]);
    }
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

mn_status mn_skel_write(const char* path, const mn_model* m, mn_error* err) {
    if (!path || !m) return mn_error_set(err, MN_ERR_ARG, path ? path : "", 0, "", "NULL argument");
    for (int j = 0; j < m->njoint; j++) {
        if (!name_ok(m->jnt_name[j]))
            return mn_error_set(err, MN_ERR_ARG, path, 0, "joint",
                                "joint %d: its name is not printable UTF-8", j);
        if (m->jnt_object[j] && !name_ok(m->jnt_object[j]))
            return mn_error_set(err, MN_ERR_ARG, path, 0, "object",
                                "joint %s: the object name is not printable UTF-8", m->jnt_name[j]);
    }
    writer w;
    memset(&w, 0, sizeof w);
    w.m = m;
    int n = m->njoint;
    w.head = malloc(sizeof(int) * (size_t)(n ? n : 1));
    w.tail = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int* scratch = malloc(sizeof(int) * (size_t)(n ? n : 1));
    chain_task* tasks = malloc(sizeof *tasks * (3 * (size_t)n + 1));
    mn_status s = MN_OK;
    if (!w.head || !w.tail || !scratch || !tasks) {
        s = mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
        goto done;
    }
    for (int j = 0; j < n; j++)
        w.head[j] = w.tail[j] = j;
    /* group compound series (parents come before children, so a series is complete when
     * its last frame is reached) */
    for (int j = 0; j < n; j++) {
        int h = compound_head(&w, j);
        if (h == j) continue;
        w.head[j] = h;
        for (int f = m->jnt_parent[j];; f = m->jnt_parent[f]) {
            w.head[f] = h;
            w.tail[f] = j;
            if (f == h) break;
        }
    }
    mn_strbuf_init(&w.b);
    const char* name = m->name && m->name[0] && name_ok(m->name) ? m->name : "figure";
    mn_strbuf_printf(&w.b,
                     "# Skeleton in the thesis text format (Welman 1993, Fig. 6.1); grammar in "
                     "docs/skeleton-format.md.\n# %d joints, %d degrees of freedom. "
                     "Lengths in the figure's units, angles in degrees.\n",
                     n, m->nv);
    mn_strbuf_printf(&w.b, "define skeleton");
    put_name(&w.b, name);
    mn_strbuf_append(&w.b, "\n", 1);
    int nroot = 0;
    for (int j = 0; j < n; j++)
        if (m->jnt_parent[j] < 0) nroot++;
    for (int j = 0; j < n; j++) {
        if (m->jnt_parent[j] >= 0) continue;
        if (nroot > 1) {
            indent(&w.b, 1);
            mn_strbuf_printf(&w.b, "group");
            put_name(&w.b, m->jnt_name[w.tail[j]]);
            mn_strbuf_append(&w.b, "\n", 1);
        }
        put_chain(&w, w.tail[j], nroot > 1 ? 2 : 1, scratch, tasks);
        if (nroot > 1) {
            indent(&w.b, 1);
            mn_strbuf_printf(&w.b, "end group\n");
        }
    }
    mn_strbuf_printf(&w.b, "end skeleton\n");
    put_defines(&w);
    s = mn_strbuf_write(&w.b, path, err);
done:
    free(w.head);
    free(w.tail);
    free(scratch);
    free(tasks);
    return s;
}
