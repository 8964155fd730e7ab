/* Re-rooting a figure at another joint, every joint kept where it is (Welman 2.1.2: "an
 * existing hierarchy [may be rebuilt] around a new root joint at any time"; 6.3: a hand
 * or a foot as the root, a figure hanging from a bar or planted on a hand).
 *
 * A figure is segments joined by motions: joint j of the model is the frame of segment j,
 *     T_j = T_parent * A_j * M_j(q_j),   A_j = Trans(offset) Rot(orient).
 * Seen from the child, the same motion reads T_parent = T_j * M_j(q_j)^-1 * A_j^-1: the
 * constant part comes after the motion, which a joint of the model cannot hold (its motion
 * turns about its own origin, the parent's joint, not the child's). A reversed motion is
 * therefore carried by a joint of its own, named after the joint whose motion it was with a
 * "~" added ("left elbow~"), at the old child's origin, and the segment it moves keeps its
 * name and frame as a FIXED joint below it with the placement A_j^-1. Every segment's
 * frame is the same as before; the motions on the path from the old root to the new one
 * turn the other way (a hinge or slide about its negated axis, by the same q; a ball by
 * the conjugate quaternion; a free joint below the root, a BVH rig's position channels, by
 * free_reversed); the old root's free motion is the new root's. Re-rooting back
 * at the old root finds the "~" joints with their FIXED segment and joins them again: the
 * original figure, joint for joint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"

/* The motion that moves one segment relative to its parent segment. */
typedef struct edge {
    int parent;     /* parent segment (index of its joint in m), -1 for the world */
    int carrier;    /* the joint of m whose motion this is */
    int reversed;   /* the motion runs from the carrier's child to its parent */
    mn_xform A, B;  /* T_child = T_parent * A * M(q) * B */
    char name[256]; /* the joint that carries the motion in the new figure */
} edge;

static int ends_with_tilde(const char* s) {
    size_t n = strlen(s);
    return n > 0 && s[n - 1] == '~';
}

static mn_xform placement(const mn_model* m, int j) {
    mn_xform X;
    X.p = m->jnt_offset[j];
    X.R = m->jnt_orient_mat[j];
    return X;
}

static int is_identity(const mn_xform* X) {
    mn_quat q = mn_quat_from_mat3(&X->R);
    return X->p.x == 0 && X->p.y == 0 && X->p.z == 0 && fabs(fabs(q.w) - 1) < 1e-15;
}

/* The state (p, rotation) of a root FREE joint of placement A that puts its frame at T:
 * T = Trans(offset + p) Rot(orient) Rot(quat) (model.h). */
static mn_xform free_state(const mn_xform* A, const mn_xform* T) {
    mn_xform L;
    L.p = mn_vec3_sub(T->p, A->p);
    mn_mat3 Rt = mn_mat3_transpose(&A->R);
    L.R = mn_mat3_mul(&Rt, &T->R);
    return L;
}

/* Joint h of m, named "...~", carries the motion of a segment that is its only child c, a
 * FIXED joint: a reversed motion written by this file (a FIXED one too: an end site's
 * placement turned round). Returns c, or -1. */
static int helper_child(const mn_model* m, int h) {
    if (!ends_with_tilde(m->jnt_name[h]) || m->jnt_nchild[h] != 1) return -1;
    int c = h + 1; /* the only child of h comes right after it (subtree order) */
    return c < m->njoint && m->jnt_parent[c] == h && m->jnt_type[c] == MN_JOINT_FIXED ? c : -1;
}

/* The segments of m with the motion that moves each: e[j] for every joint j that is a
 * segment; the joints that carry a reversed motion for the segment below them get carrier
 * -2. */
static void read_edges(const mn_model* m, edge* e) {
    for (int j = 0; j < m->njoint; j++)
        e[j].carrier = -1;
    for (int h = 0; h < m->njoint; h++) {
        int c = helper_child(m, h);
        if (c < 0) continue;
        e[h].carrier = -2;
        e[c].parent = m->jnt_parent[h];
        e[c].carrier = h;
        e[c].reversed = 0;
        e[c].A = placement(m, h);
        e[c].B = placement(m, c);
        snprintf(e[c].name, sizeof e[c].name, "%s", m->jnt_name[h]);
    }
    for (int j = 0; j < m->njoint; j++) {
        if (e[j].carrier != -1) continue;
        e[j].parent = m->jnt_parent[j];
        e[j].carrier = j;
        e[j].reversed = 0;
        e[j].A = placement(m, j);
        e[j].B = mn_xform_identity();
        snprintf(e[j].name, sizeof e[j].name, "%s", m->jnt_name[j]);
    }
}

/* A free joint's state turned round. Its motion, T = T_parent Trans(offset + p) Rot(orient)
 * Rot(quat) = T_parent A M with M = Trans(orient^-1 p) Rot(quat), inverted and written for a
 * joint of rest orientation od: M^-1 = Trans(-R^T orient^-1 p) Rot(quat^-1), so
 * p' = od (-R^T os^-1 p) and quat' the conjugate (a BVH rig's position channels below its
 * root: the bone keeps its length). */
static void free_reversed(const double* in, mn_quat os, mn_quat od, double* out) {
    mn_quat r = mn_q4(in[3], in[4], in[5], in[6]);
    mn_vec3 v = mn_quat_rotate(mn_quat_conj(os), mn_v3(in[0], in[1], in[2]));
    v = mn_vec3_scale(mn_quat_rotate(mn_quat_conj(r), v), -1);
    v = mn_quat_rotate(od, v);
    out[0] = v.x, out[1] = v.y, out[2] = v.z;
    out[3] = in[3], out[4] = -in[4], out[5] = -in[5], out[6] = -in[6];
}

/* The name of the joint that carries a motion once it turns the other way. */
static void toggle_name(char* name, size_t cap) {
    size_t n = strlen(name);
    if (n > 0 && name[n - 1] == '~')
        name[n - 1] = 0;
    else if (n + 1 < cap)
        name[n] = '~', name[n + 1] = 0;
}

/* Adds segment j (and below it, depth first) to the spec. Returns 0 on failure. */
static int emit(const mn_model* m, const edge* e, int j, int parent, mn_spec* s, int* spec_of,
                const double* q0_root, mn_error* err) {
    const edge* g = &e[j];
    const int c = g->carrier;
    int single = is_identity(&g->B) && !strcmp(g->name, m->jnt_name[j]);
    mn_joint_def d = mn_joint_default();
    d.parent = parent;
    if (c >= 0) {
        int t = m->jnt_type[c];
        d.type = (mn_joint_type)t;
        d.axis = g->reversed && (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE)
                     ? mn_vec3_scale(m->jnt_axis[c], -1)
                     : m->jnt_axis[c];
        d.limited = m->jnt_limited[c];
        d.range[0] = m->jnt_range[2 * c], d.range[1] = m->jnt_range[2 * c + 1];
        d.swing = m->jnt_swing[c];
        d.twist[0] = m->jnt_twist[2 * c], d.twist[1] = m->jnt_twist[2 * c + 1];
        if (g->reversed && t == MN_JOINT_BALL) /* the inverse turn twists the other way */
            d.twist[0] = -m->jnt_twist[2 * c + 1], d.twist[1] = -m->jnt_twist[2 * c];
        d.stiffness = m->jnt_stiffness[c];
        d.rot_order = (mn_euler_order)m->jnt_rot_order[c];
        d.locked = m->jnt_locked[c];
        const double* q0 = m->q0 + m->jnt_qadr[c];
        int nq = mn_joint_type_nq(d.type);
        for (int i = 0; i < nq; i++)
            d.q0[i] = q0[i];
        if (g->reversed && t == MN_JOINT_BALL) d.q0[1] = -q0[1], d.q0[2] = -q0[2], d.q0[3] = -q0[3];
        if (g->reversed && t == MN_JOINT_FREE)
            free_reversed(q0, m->jnt_orient[c], mn_quat_from_mat3(&g->A.R), d.q0);
        if (q0_root && parent < 0)
            for (int i = 0; i < nq; i++)
                d.q0[i] = q0_root[i];
    } else {
        d.type = MN_JOINT_FIXED;
    }
    d.offset = g->A.p;
    d.orient = mn_quat_from_mat3(&g->A.R);
    if (!single) { /* the motion on a joint of its own, the segment FIXED below it */
        d.name = g->name;
        d.stiffness = d.stiffness > 0 ? d.stiffness : 1;
        int h = mn_spec_add_joint(s, &d, err);
        if (h < 0) return 0;
        mn_joint_def f = mn_joint_default();
        f.parent = h;
        f.type = MN_JOINT_FIXED;
        f.offset = g->B.p;
        f.orient = mn_quat_from_mat3(&g->B.R);
        d = f;
        parent = h;
    }
    d.name = m->jnt_name[j];
    d.object = m->jnt_object[j];
    d.mass = m->jnt_mass[j];
    d.com = m->jnt_com[j];
    int k = mn_spec_add_joint(s, &d, err);
    if (k < 0 || mn_spec_set_alias(s, k, m->jnt_alias[j]) != MN_OK) return 0;
    spec_of[j] = k;
    for (int c2 = 0; c2 < m->njoint; c2++)
        if (e[c2].carrier != -2 && e[c2].parent == j && c2 != j)
            if (!emit(m, e, c2, k, s, spec_of, NULL, err)) return 0;
    return 1;
}

mn_model* mn_model_reroot(const mn_model* m, int joint, const double* q, mn_error* err) {
    if (!m || joint < 0 || joint >= m->njoint) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "joint", "no joint %d to re-root at", joint);
        return NULL;
    }
    edge* e = calloc((size_t)m->njoint, sizeof *e);
    int* spec_of = malloc(sizeof(int) * (size_t)m->njoint);
    mn_data* d = mn_data_create(m, 1);
    mn_spec* s = mn_spec_create(m->name);
    mn_model* out = NULL;
    if (!e || !spec_of || !d || !s) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "joint", "out of memory re-rooting");
        goto done;
    }
    read_edges(m, e);
    if (e[joint].carrier == -2) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "joint",
                     "\"%s\" carries a reversed motion; re-root at a segment (the joint below it)",
                     m->jnt_name[joint]);
        goto done;
    }
    /* the path from the new root up to the old root, by segments */
    int root = joint;
    while (e[root].parent >= 0)
        root = e[root].parent;
    const edge top = e[root];
    int rt = m->jnt_type[top.carrier];
    if (rt != MN_JOINT_FREE && rt != MN_JOINT_FIXED) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "joint",
                     "the root \"%s\" is a %s joint: only a figure with a free or fixed root "
                     "can be re-rooted",
                     m->jnt_name[root], mn_joint_type_name((mn_joint_type)rt));
        goto done;
    }
    if (!is_identity(&top.B)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "joint", "the root \"%s\" is a reversed motion",
                     m->jnt_name[root]);
        goto done;
    }
    /* the new root's state: where q (or the rest state) puts the joint */
    memcpy(d->q, q ? q : m->q0, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    double q0_root[7] = {0, 0, 0, 1, 0, 0, 0};
    {
        /* T_joint = A_root * Trans(p) Rot(quat): p and quat from the joint's frame at the
         * rest state, so the new figure's rest pose is the old one's */
        mn_data* r0 = mn_data_create(m, 1);
        if (!r0) {
            mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "joint", "out of memory re-rooting");
            goto done;
        }
        mn_xform L = free_state(&top.A, &r0->xf[joint]);
        mn_quat qr = mn_quat_from_mat3(&L.R);
        q0_root[0] = L.p.x, q0_root[1] = L.p.y, q0_root[2] = L.p.z;
        q0_root[3] = qr.w, q0_root[4] = qr.x, q0_root[5] = qr.y, q0_root[6] = qr.z;
        mn_data_destroy(r0);
    }
    if (joint != root) {
        /* reverse the motions on the path, from the new root up */
        edge* old = malloc(sizeof(edge) * (size_t)m->njoint);
        if (!old) {
            mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "joint", "out of memory re-rooting");
            goto done;
        }
        memcpy(old, e, sizeof(edge) * (size_t)m->njoint);
        for (int c = joint; c != root; c = old[c].parent) {
            int p = old[c].parent;
            edge* r = &e[p];
            r->parent = c;
            r->carrier = old[c].carrier;
            r->reversed = !old[c].reversed;
            r->A = mn_xform_inverse(&old[c].B);
            r->B = mn_xform_inverse(&old[c].A);
            snprintf(r->name, sizeof r->name, "%s", old[c].name);
            toggle_name(r->name, sizeof r->name);
        }
        free(old);
        /* the old root's motion from the world is the new root's */
        edge* n = &e[joint];
        n->parent = -1;
        n->carrier = top.carrier;
        n->reversed = 0;
        n->B = mn_xform_identity();
        snprintf(n->name, sizeof n->name, "%s", m->jnt_name[joint]);
        if (rt == MN_JOINT_FIXED) { /* fixed in the world where q puts it */
            n->A = d->xf[joint];
        } else {
            n->A = top.A;
        }
    }
    /* the segments, the new root's tree first, then the other trees as they were */
    int ok = emit(m, e, joint, -1, s, spec_of, rt == MN_JOINT_FREE ? q0_root : NULL, err);
    for (int j = 0; ok && j < m->njoint; j++)
        if (e[j].carrier >= 0 && e[j].parent < 0 && j != joint && j != root)
            ok = emit(m, e, j, -1, s, spec_of, NULL, err);
    if (ok) out = mn_model_compile(s, err);
done:
    mn_spec_destroy(s);
    mn_data_destroy(d);
    free(spec_of);
    free(e);
    return out;
}

/* The joint of a that carries the motion of b's joint j, and whether it runs the other way:
 * the joint named with a "~" added to (or taken from) j's name when a has one of j's type
 * (a root re-rooted keeps its name for its new free motion, the old one turned round is
 * "name~"), else the joint of the same name. */
static int motion_source(const mn_model* a, const mn_model* b, int j, int* reversed) {
    char other[258];
    snprintf(other, sizeof other, "%s", b->jnt_name[j]);
    toggle_name(other, sizeof other);
    for (int k = 0; k < a->njoint; k++)
        if (a->jnt_type[k] == b->jnt_type[j] && !strcmp(a->jnt_name[k], other)) {
            *reversed = 1;
            return k;
        }
    for (int k = 0; k < a->njoint; k++)
        if (a->jnt_type[k] == b->jnt_type[j] && !strcmp(a->jnt_name[k], b->jnt_name[j])) {
            *reversed = 0;
            return k;
        }
    return -1;
}

mn_status mn_model_reroot_state(const mn_model* a, const double* qa, const mn_model* b, double* qb,
                                mn_error* err) {
    if (!a || !qa || !b || !qb) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "model", "NULL argument");
        return MN_ERR_ARG;
    }
    mn_data* d = mn_data_create(a, 1);
    if (!d) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "model", "out of memory");
        return MN_ERR_NOMEM;
    }
    memcpy(d->q, qa, sizeof(double) * (size_t)a->nq);
    mn_fk(a, d);
    mn_status st = MN_OK;
    for (int j = 0; j < b->njoint && st == MN_OK; j++) {
        int t = b->jnt_type[j], nq = mn_joint_type_nq((mn_joint_type)t);
        double* out = qb + b->jnt_qadr[j];
        if (!nq) continue;
        if (b->jnt_parent[j] < 0 && t == MN_JOINT_FREE) {
            /* a free root: from where a puts the segment */
            int s = mn_model_find_joint(a, b->jnt_name[j]);
            if (s < 0) {
                st = MN_ERR_NOTFOUND;
                mn_error_set(err, st, NULL, 0, "joint", "no joint \"%s\" in %s", b->jnt_name[j],
                             a->name);
                break;
            }
            mn_xform A = placement(b, j);
            mn_xform L = free_state(&A, &d->xf[s]);
            mn_quat r = mn_quat_from_mat3(&L.R);
            out[0] = L.p.x, out[1] = L.p.y, out[2] = L.p.z;
            /* the sign of a's own root quaternion when it is the same joint */
            int same = mn_model_find_joint(a, b->jnt_name[j]);
            if (a->jnt_type[same] == MN_JOINT_FREE && a->jnt_parent[same] < 0) {
                const double* qs = qa + a->jnt_qadr[same] + 3;
                if (qs[0] * r.w + qs[1] * r.x + qs[2] * r.y + qs[3] * r.z < 0)
                    r = mn_q4(-r.w, -r.x, -r.y, -r.z);
            }
            out[3] = r.w, out[4] = r.x, out[5] = r.y, out[6] = r.z;
            continue;
        }
        int rev;
        int s = motion_source(a, b, j, &rev);
        if (s < 0) {
            st = MN_ERR_NOTFOUND;
            mn_error_set(err, st, NULL, 0, "joint",
                         "no motion in %s for joint \"%s\": the figures are not re-rootings of "
                         "each other",
                         a->name, b->jnt_name[j]);
            break;
        }
        const double* in = qa + a->jnt_qadr[s];
        for (int i = 0; i < nq; i++)
            out[i] = in[i];
        if (rev && t == MN_JOINT_BALL) out[1] = -in[1], out[2] = -in[2], out[3] = -in[3];
        if (rev && t == MN_JOINT_FREE) free_reversed(in, a->jnt_orient[s], b->jnt_orient[j], out);
    }
    mn_data_destroy(d);
    return st;
}
