/* spec -> model: validation (each def through mn_def_check, spec.c), parent-before-child
 * ordering (depth-first preorder, so every subtree is a contiguous range), state layout, and
 * one memory block for every array. */
#include "model/model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Carves aligned arrays out of one block: first pass counts, second pass assigns. */
typedef struct layout {
    unsigned char* base;
    size_t used;
} layout;

static void* take(layout* L, size_t bytes) {
    size_t at = (L->used + 15u) & ~(size_t)15u;
    L->used = at + bytes;
    return L->base ? L->base + at : NULL;
}

static void carve(layout* L, mn_model* m, int n, int nv, int nq, size_t names) {
    m->jnt_name = take(L, (size_t)n * sizeof(char*));
    m->jnt_object = take(L, (size_t)n * sizeof(char*));
    m->jnt_parent = take(L, (size_t)n * sizeof(int));
    m->jnt_type = take(L, (size_t)n * sizeof(int));
    m->jnt_qadr = take(L, (size_t)n * sizeof(int));
    m->jnt_dofadr = take(L, (size_t)n * sizeof(int));
    m->jnt_depth = take(L, (size_t)n * sizeof(int));
    m->jnt_nchild = take(L, (size_t)n * sizeof(int));
    m->jnt_offset = take(L, (size_t)n * sizeof(mn_vec3));
    m->jnt_orient = take(L, (size_t)n * sizeof(mn_quat));
    m->jnt_orient_mat = take(L, (size_t)n * sizeof(mn_mat3));
    m->jnt_orient_ident = take(L, (size_t)n);
    m->jnt_orient_perm = take(L, (size_t)n * 3);
    m->jnt_axis = take(L, (size_t)n * sizeof(mn_vec3));
    m->jnt_axis_kind = take(L, (size_t)n);
    m->jnt_limited = take(L, (size_t)n);
    m->jnt_range = take(L, (size_t)n * 2 * sizeof(double));
    m->jnt_swing = take(L, (size_t)n * sizeof(double));
    m->jnt_twist = take(L, (size_t)n * 2 * sizeof(double));
    m->jnt_mass = take(L, (size_t)n * sizeof(double));
    m->jnt_com = take(L, (size_t)n * sizeof(mn_vec3));
    m->jnt_stiffness = take(L, (size_t)n * sizeof(double));
    m->jnt_rot_order = take(L, (size_t)n * sizeof(int));
    m->jnt_subtree_end = take(L, (size_t)n * sizeof(int));
    m->jnt_locked = take(L, (size_t)n);
    m->dof_locked = take(L, (size_t)(nv ? nv : 1));
    m->dof_jnt = take(L, (size_t)(nv ? nv : 1) * sizeof(int));
    m->dof_stiffness = take(L, (size_t)(nv ? nv : 1) * sizeof(double));
    m->q0 = take(L, (size_t)(nq ? nq : 1) * sizeof(double));
    m->jnt_ops = take(L, (size_t)n * sizeof(mn_jop));
    m->jnt_alias = take(L, (size_t)n * sizeof(char*));
    m->name = take(L, names);
}

/* Detects a rotation whose entries are 0 or +-1 to rounding (rpy in multiples of pi/2) and
 * snaps it exactly, so FK can permute columns instead of multiplying. */
static void orient_perm(mn_mat3* R, int8_t* perm) {
    int8_t p[3] = {0, 0, 0};
    for (int c = 0; c < 3; c++) {
        int hit = -1, ok = 1;
        for (int r = 0; r < 3; r++) {
            double v = R->m[3 * r + c];
            if (fabs(v) < 1e-12) continue;
            if (fabs(fabs(v) - 1.0) < 1e-12 && hit < 0)
                hit = r;
            else
                ok = 0;
        }
        if (!ok || hit < 0) {
            perm[0] = perm[1] = perm[2] = 0;
            return;
        }
        p[c] = (int8_t)((R->m[3 * hit + c] > 0 ? 1 : -1) * (hit + 1));
    }
    for (int c = 0; c < 3; c++) {
        for (int r = 0; r < 3; r++)
            R->m[3 * r + c] = 0.0;
        int r = abs(p[c]) - 1;
        R->m[3 * r + c] = p[c] > 0 ? 1.0 : -1.0;
        perm[c] = p[c];
    }
}

static int axis_kind(mn_vec3 a) {
    const double e[3] = {a.x, a.y, a.z};
    for (int k = 0; k < 3; k++) {
        int others_zero = e[(k + 1) % 3] == 0.0 && e[(k + 2) % 3] == 0.0;
        if (others_zero && e[k] == 1.0) return k;
        if (others_zero && e[k] == -1.0) return k + 3;
    }
    return -1;
}

/* A depth-first preorder of the spec's joints from its roots, children in spec order:
 * order[k] is the spec index of the k-th joint and newidx its inverse (-1 for a joint not
 * reached: its parents form a cycle). first, next, last and stack are n ints of scratch
 * (the children lists). Returns the number of joints reached; *nroot_out the roots. */
static int preorder(const mn_spec* s, int n, int* first, int* next, int* last, int* stack,
                    int* order, int* newidx, int* nroot_out) {
    for (int i = 0; i < n; i++)
        first[i] = last[i] = next[i] = -1, newidx[i] = -1;
    int nroot = 0;
    for (int i = 0; i < n; i++) {
        int p = mn_spec_joint_const(s, i)->parent;
        if (p < 0) {
            nroot++;
            continue;
        }
        if (first[p] < 0)
            first[p] = i;
        else
            next[last[p]] = i;
        last[p] = i;
    }
    int count = 0;
    for (int r = 0; r < n; r++) {
        if (mn_spec_joint_const(s, r)->parent >= 0) continue;
        int sp = 0;
        stack[sp++] = r;
        while (sp) {
            int j = stack[--sp];
            newidx[j] = count;
            order[count++] = j;
            /* push children in reverse so they pop in spec order */
            int k = 0;
            for (int c = first[j]; c >= 0; c = next[c])
                k++;
            int base = sp;
            sp += k;
            for (int c = first[j], t = 0; c >= 0; c = next[c], t++)
                stack[base + k - 1 - t] = c;
        }
    }
    *nroot_out = nroot;
    return count;
}

/* Joint k of the model (preorder) from its definition d: its name, object and alias copied
 * to str (the new end is returned), parent p, coordinates from qa and dofs from va. */
static char* compile_joint(mn_model* m, int k, const mn_joint_def* d, const char* alias, int p,
                           int qa, int va, char* str) {
    m->jnt_name[k] = str;
    strcpy(str, d->name);
    str += strlen(str) + 1;
    m->jnt_object[k] = NULL;
    if (d->object) {
        m->jnt_object[k] = str;
        strcpy(str, d->object);
        str += strlen(str) + 1;
    }
    m->jnt_alias[k] = NULL;
    if (alias) {
        m->jnt_alias[k] = str;
        strcpy(str, alias);
        str += strlen(str) + 1;
    }
    m->jnt_parent[k] = p;
    m->jnt_depth[k] = p >= 0 ? m->jnt_depth[p] + 1 : 0;
    if (p >= 0) m->jnt_nchild[p]++;
    m->jnt_type[k] = d->type;
    m->jnt_qadr[k] = qa;
    m->jnt_dofadr[k] = va;
    m->jnt_offset[k] = d->offset;
    m->jnt_orient[k] = mn_quat_normalize(d->orient);
    if (m->jnt_orient[k].w < 0) {
        mn_quat o = m->jnt_orient[k];
        m->jnt_orient[k] = mn_q4(-o.w, -o.x, -o.y, -o.z);
    }
    m->jnt_orient_mat[k] = mn_quat_to_mat3(m->jnt_orient[k]);
    mn_quat o = m->jnt_orient[k];
    m->jnt_orient_ident[k] = o.w == 1.0 && o.x == 0.0 && o.y == 0.0 && o.z == 0.0;
    orient_perm(&m->jnt_orient_mat[k], m->jnt_orient_perm + 3 * k);
    mn_vec3 ax = mn_vec3_norm(d->axis) > 0 ? mn_vec3_normalize(d->axis) : mn_v3(0, 0, 1);
    m->jnt_axis[k] = ax;
    m->jnt_axis_kind[k] = (int8_t)axis_kind(ax);
    m->jnt_limited[k] = d->limited ? 1 : 0;
    m->jnt_range[2 * k] = d->range[0];
    m->jnt_range[2 * k + 1] = d->range[1];
    m->jnt_swing[k] = d->swing;
    m->jnt_twist[2 * k] = d->twist[0];
    m->jnt_twist[2 * k + 1] = d->twist[1];
    m->jnt_mass[k] = d->mass;
    m->jnt_com[k] = d->com;
    m->jnt_stiffness[k] = d->stiffness;
    m->jnt_rot_order[k] = d->rot_order;
    m->jnt_locked[k] = (uint8_t)(d->locked & MN_LOCK_ALL);
    m->total_mass += d->mass;
    mn_def_rest_state(d, m->q0 + qa);
    int jnv = mn_joint_type_nv(d->type);
    for (int v = 0; v < jnv; v++) {
        m->dof_jnt[va + v] = k;
        m->dof_stiffness[va + v] = d->stiffness;
        int kind = mn_joint_dof_is_translation(d->type, v) ? MN_LOCK_TRANSLATION : MN_LOCK_ROTATION;
        m->dof_locked[va + v] = (d->locked & kind) ? 1 : 0;
        m->nlocked += m->dof_locked[va + v];
    }
    return str;
}

mn_model* mn_model_compile(const mn_spec* s, mn_error* err) {
    if (!s) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "spec", "NULL spec");
        return NULL;
    }
    int n = mn_spec_joint_count(s);
    if (n == 0) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "spec", "no joints");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const mn_joint_def* d = mn_spec_joint_const(s, i);
        if (mn_def_check(d, n, err) != MN_OK) return NULL;
        if (d->parent == i) {
            mn_error_set(err, MN_ERR_ARG, "", 0, d->name,
                         "parent: a joint cannot be its own parent");
            return NULL;
        }
    }
    /* Children lists (spec order) and a depth-first preorder from the roots. */
    int* first = malloc((size_t)n * sizeof(int));
    int* next = malloc((size_t)n * sizeof(int));
    int* last = malloc((size_t)n * sizeof(int));
    int* order = malloc((size_t)n * sizeof(int));
    int* stack = malloc((size_t)n * sizeof(int));
    int* newidx = malloc((size_t)n * sizeof(int));
    mn_model* m = NULL;
    if (!first || !next || !last || !order || !stack || !newidx) {
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "spec", "out of memory");
        goto done;
    }
    int nroot = 0;
    int count = preorder(s, n, first, next, last, stack, order, newidx, &nroot);
    if (count != n) {
        for (int i = 0; i < n; i++)
            if (newidx[i] < 0) {
                mn_error_set(err, MN_ERR_ARG, "", 0, mn_spec_joint_const(s, i)->name,
                             "parent: joint is part of a cycle");
                break;
            }
        goto done;
    }
    /* Sizes. */
    int nq = 0, nv = 0;
    size_t names = strlen(mn_spec_name(s)) + 1;
    for (int i = 0; i < n; i++) {
        const mn_joint_def* d = mn_spec_joint_const(s, i);
        nq += mn_joint_type_nq(d->type);
        nv += mn_joint_type_nv(d->type);
        const char* alias = mn_spec_alias(s, i);
        names += strlen(d->name) + 1 + (d->object ? strlen(d->object) + 1 : 0) +
                 (alias ? strlen(alias) + 1 : 0);
    }
    mn_model tmp;
    memset(&tmp, 0, sizeof tmp);
    layout L = {NULL, 0};
    carve(&L, &tmp, n, nv, nq, names);
    m = calloc(1, sizeof *m);
    void* block = calloc(1, L.used + 16);
    if (!m || !block) {
        free(m);
        free(block);
        m = NULL;
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "spec", "out of memory");
        goto done;
    }
    L.base = block;
    L.used = 0;
    carve(&L, m, n, nv, nq, names);
    m->block = block;
    m->nbytes = L.used;
    m->njoint = n;
    m->nq = nq;
    m->nv = nv;
    m->nroot = nroot;
    char* str = m->name;
    strcpy(str, mn_spec_name(s));
    str += strlen(str) + 1;
    int qa = 0, va = 0;
    for (int k = 0; k < n; k++) {
        const mn_joint_def* d = mn_spec_joint_const(s, order[k]);
        const char* alias = mn_spec_alias(s, order[k]);
        int p = d->parent >= 0 ? newidx[d->parent] : -1;
        str = compile_joint(m, k, d, alias, p, qa, va, str);
        va += mn_joint_type_nv(d->type);
        qa += mn_joint_type_nq(d->type);
    }
    mn_model_pack_ops(m);
    /* Preorder: the subtree of k ends where the next joint of depth <= depth(k) starts. */
    for (int k = n - 1; k >= 0; k--) {
        int e = k + 1;
        while (e < n && m->jnt_depth[e] > m->jnt_depth[k])
            e = m->jnt_subtree_end[e];
        m->jnt_subtree_end[k] = e;
    }
done:
    free(first);
    free(next);
    free(last);
    free(order);
    free(stack);
    free(newidx);
    return m;
}

void mn_model_pack_ops(mn_model* m) {
    mn_jop* ops = m->jnt_ops;
    for (int j = 0; j < m->njoint; j++) {
        mn_jop* op = &ops[j];
        op->off[0] = m->jnt_offset[j].x, op->off[1] = m->jnt_offset[j].y,
        op->off[2] = m->jnt_offset[j].z;
        for (int i = 0; i < 9; i++)
            op->O[i] = m->jnt_orient_mat[j].m[i];
        op->axis[0] = m->jnt_axis[j].x, op->axis[1] = m->jnt_axis[j].y,
        op->axis[2] = m->jnt_axis[j].z;
        op->type = (int8_t)m->jnt_type[j];
        op->kind = m->jnt_axis_kind[j];
        const int8_t* perm = m->jnt_orient_perm + 3 * j;
        op->orient = m->jnt_orient_ident[j] ? 0 : perm[0] ? 1 : 2;
        for (int c = 0; c < 3; c++) {
            op->perm[c] = perm[c];
            op->from[c] = (int8_t)(perm[c] > 0 ? perm[c] - 1 : perm[c] < 0 ? -perm[c] - 1 : c);
            op->sgn[c] = perm[c] < 0 ? -1.0 : 1.0;
        }
    }
}

void mn_model_destroy(mn_model* m) {
    if (!m) return;
    free(m->block);
    free(m);
}

mn_spec* mn_model_decompile(const mn_model* m) {
    if (!m) return NULL;
    mn_spec* s = mn_spec_create(m->name);
    if (!s) return NULL;
    for (int j = 0; j < m->njoint; j++) {
        mn_joint_def d = mn_joint_default();
        d.name = m->jnt_name[j];
        d.object = m->jnt_object[j];
        d.parent = m->jnt_parent[j];
        d.type = (mn_joint_type)m->jnt_type[j];
        d.offset = m->jnt_offset[j];
        d.orient = m->jnt_orient[j];
        d.axis = m->jnt_axis[j];
        d.limited = m->jnt_limited[j];
        d.range[0] = m->jnt_range[2 * j];
        d.range[1] = m->jnt_range[2 * j + 1];
        d.swing = m->jnt_swing[j];
        d.twist[0] = m->jnt_twist[2 * j];
        d.twist[1] = m->jnt_twist[2 * j + 1];
        d.mass = m->jnt_mass[j];
        d.com = m->jnt_com[j];
        d.stiffness = m->jnt_stiffness[j];
        d.rot_order = (mn_euler_order)m->jnt_rot_order[j];
        d.locked = m->jnt_locked[j];
        int nq = mn_joint_type_nq(d.type);
        for (int i = 0; i < nq; i++)
            d.q0[i] = m->q0[m->jnt_qadr[j] + i];
        if (mn_spec_add_joint(s, &d, NULL) < 0 ||
            mn_spec_set_alias(s, j, m->jnt_alias[j]) != MN_OK) {
            mn_spec_destroy(s);
            return NULL;
        }
    }
    return s;
}

int mn_model_find_joint(const mn_model* m, const char* name) {
    if (!m || !name) return -1;
    for (int j = 0; j < m->njoint; j++)
        if (!strcmp(m->jnt_name[j], name)) return j;
    for (int j = 0; j < m->njoint; j++)
        if (m->jnt_alias[j] && !strcmp(m->jnt_alias[j], name)) return j;
    return -1;
}

int mn_model_similar_joints(const mn_model* m, const char* name, int* out, int cap) {
    if (!m || !name || cap <= 0) return 0;
    int limit = mn_name_distance_limit(name), best = limit + 1, count = 0;
    for (int pass = 0; pass < 2; pass++) /* the nearest distance, then the joints at it */
        for (int j = 0; j < m->njoint; j++) {
            int d = mn_name_distance(name, m->jnt_name[j], limit);
            int da = mn_name_distance(name, m->jnt_alias[j], limit);
            if (da < d) d = da;
            if (pass == 0 && d < best) best = d;
            if (pass == 1 && d == best && best <= limit && count < cap) out[count++] = j;
        }
    return count;
}

const char* mn_model_joint_hint(const mn_model* m, const char* name, char* buf, size_t cap) {
    if (!buf || cap == 0) return buf;
    buf[0] = 0;
    int near[3];
    int n = mn_model_similar_joints(m, name, near, 3);
    size_t len = 0;
    for (int i = 0; i < n && len < cap; i++) {
        int j = near[i];
        int limit = mn_name_distance_limit(name);
        /* the name the user most likely meant: the alias when it is the nearer */
        const char* a = m->jnt_alias[j];
        int use_alias =
            a && mn_name_distance(name, a, limit) < mn_name_distance(name, m->jnt_name[j], limit);
        const char* sep = i == 0 ? "; did you mean " : i == n - 1 ? " or " : ", ";
        int w = use_alias
                    ? snprintf(buf + len, cap - len, "%s\"%s\" (link %s)", sep, a, m->jnt_name[j])
                    : snprintf(buf + len, cap - len, "%s\"%s\"", sep, m->jnt_name[j]);
        if (w < 0) break;
        len += (size_t)w;
    }
    if (n > 0 && len + 1 < cap) {
        buf[len] = '?';
        buf[len + 1] = 0;
    } else {
        buf[0] = 0; /* too long for buf: no hint rather than half of one */
    }
    return buf;
}

int mn_model_is_ancestor(const mn_model* m, int a, int b) {
    if (!m || a < 0 || b < 0 || a >= m->njoint || b >= m->njoint) return 0;
    return b >= a && b < m->jnt_subtree_end[a];
}
