/* The spec: an editable tree of joint defs, with a name index for fast look-up. */
#include "model/model_internal.h"

#include <stdlib.h>
#include <string.h>

struct mn_spec {
    char* name;
    int n, cap;
    mn_joint_def* joints;
    char** alias; /* per joint (cap): mn_spec_set_alias, NULL when none */
    /* open-addressing name index: slot -> joint index + 1 (0 = empty) */
    int* index;
    int index_cap;
};

const char* mn_joint_type_name(mn_joint_type t) {
    switch (t) {
    case MN_JOINT_FIXED:
        return "fixed";
    case MN_JOINT_HINGE:
        return "hinge";
    case MN_JOINT_SLIDE:
        return "slide";
    case MN_JOINT_BALL:
        return "ball";
    case MN_JOINT_FREE:
        return "free";
    }
    return "unknown";
}

int mn_joint_type_nq(mn_joint_type t) {
    static const int nq[] = {0, 1, 1, 4, 7};
    return (unsigned)t <= MN_JOINT_FREE ? nq[t] : 0;
}

int mn_joint_type_nv(mn_joint_type t) {
    static const int nv[] = {0, 1, 1, 3, 6};
    return (unsigned)t <= MN_JOINT_FREE ? nv[t] : 0;
}

/* The definition check lives with the spec it guards; compile.c calls it too (the model
 * layer's files depend on each other in one direction: spec <- compile). */
mn_status mn_def_check(const mn_joint_def* d, int njoint, mn_error* err) {
    const char* nm = d->name;
    if (!nm || !nm[0]) return mn_error_set(err, MN_ERR_ARG, "", 0, "name", "joint name is empty");
    if (strlen(nm) > 255)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "name", "joint name longer than 255 bytes");
    if ((unsigned)d->type > MN_JOINT_FREE)
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "type: unknown joint type %d",
                            (int)d->type);
    if (d->parent < -1 || d->parent >= njoint)
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "parent: index %d out of range", d->parent);
    if (!mn_vec3_isfinite(d->offset))
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "offset: not finite");
    /* the norms too: a vector of finite numbers whose length overflows (1e300) would be
     * normalised to zero */
    if (!mn_quat_isfinite(d->orient) || !(mn_quat_norm(d->orient) >= 1e-12) ||
        !isfinite(mn_quat_norm(d->orient)))
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "orientation: zero or not finite");
    if (!mn_vec3_isfinite(d->axis))
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "axis: not finite");
    int t = d->type;
    if (!isfinite(mn_vec3_norm(d->axis)))
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "axis: its length is not finite");
    if ((t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE || t == MN_JOINT_BALL) &&
        mn_vec3_norm(d->axis) < 1e-12)
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "axis: zero length");
    if (d->limited) {
        if ((t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) &&
            !(isfinite(d->range[0]) && isfinite(d->range[1]) && d->range[0] <= d->range[1]))
            return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "limits: need finite lower <= upper");
        if (t == MN_JOINT_BALL && !(d->swing >= 0 && d->swing <= MN_PI && isfinite(d->twist[0]) &&
                                    isfinite(d->twist[1]) && d->twist[0] <= d->twist[1]))
            return mn_error_set(err, MN_ERR_ARG, "", 0, nm,
                                "limits: swing in [0, pi], twist lower <= upper");
    }
    if (!(d->mass >= 0) || !isfinite(d->mass))
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "mass: must be >= 0");
    if (!mn_vec3_isfinite(d->com))
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "com: not finite");
    if (!(d->stiffness > 0) || !isfinite(d->stiffness))
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "stiffness: must be > 0");
    int nq = mn_joint_type_nq(d->type);
    for (int i = 0; i < nq; i++)
        if (!isfinite(d->q0[i]))
            return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "rest state: not finite");
    if ((unsigned)d->rot_order > MN_EULER_ZYX)
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm, "rotation order: unknown");
    if (d->locked & ~MN_LOCK_ALL)
        return mn_error_set(err, MN_ERR_ARG, "", 0, nm,
                            "locked: unknown flags %d (MN_LOCK_TRANSLATION, MN_LOCK_ROTATION)",
                            d->locked);
    return MN_OK;
}

mn_joint_def mn_joint_default(void) {
    mn_joint_def d;
    memset(&d, 0, sizeof d);
    d.parent = -1;
    d.type = MN_JOINT_FIXED;
    d.orient = mn_quat_identity();
    d.axis = mn_v3(0, 0, 1);
    d.range[0] = -MN_PI;
    d.range[1] = MN_PI;
    d.swing = MN_PI;
    d.twist[0] = -MN_PI;
    d.twist[1] = MN_PI;
    d.stiffness = 1.0;
    d.rot_order = MN_EULER_ZXY;
    return d;
}

/* Rest state of a def with the quaternion of a BALL/FREE set to identity when left zero. */
void mn_def_rest_state(const mn_joint_def* d, double* q) {
    int nq = mn_joint_type_nq(d->type);
    for (int i = 0; i < nq; i++)
        q[i] = d->q0[i];
    int qa = d->type == MN_JOINT_BALL ? 0 : d->type == MN_JOINT_FREE ? 3 : -1;
    if (qa >= 0) {
        mn_quat r = mn_q4(q[qa], q[qa + 1], q[qa + 2], q[qa + 3]);
        if (mn_quat_norm(r) == 0) r = mn_quat_identity();
        r = mn_quat_normalize(r);
        q[qa] = r.w, q[qa + 1] = r.x, q[qa + 2] = r.y, q[qa + 3] = r.z;
    }
}

static unsigned hash_name(const char* s) {
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int index_rebuild(mn_spec* s, int cap) {
    int* idx = calloc((size_t)cap, sizeof(int));
    if (!idx) return 0;
    free(s->index);
    s->index = idx;
    s->index_cap = cap;
    for (int i = 0; i < s->n; i++) {
        unsigned h = hash_name(s->joints[i].name) & (unsigned)(cap - 1);
        while (idx[h])
            h = (h + 1) & (unsigned)(cap - 1);
        idx[h] = i + 1;
    }
    return 1;
}

mn_spec* mn_spec_create(const char* name) {
    mn_spec* s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->name = strdup(name ? name : "");
    if (!s->name || !index_rebuild(s, 64)) {
        mn_spec_destroy(s);
        return NULL;
    }
    return s;
}

void mn_spec_destroy(mn_spec* s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        free((char*)s->joints[i].name);
        free((char*)s->joints[i].object);
        free(s->alias[i]);
    }
    free(s->joints);
    free(s->alias);
    free(s->index);
    free(s->name);
    free(s);
}

const char* mn_spec_name(const mn_spec* s) {
    return s ? s->name : NULL;
}

mn_status mn_spec_set_name(mn_spec* s, const char* name) {
    if (!s || !name) return MN_ERR_ARG;
    char* n = strdup(name);
    if (!n) return MN_ERR_NOMEM;
    free(s->name);
    s->name = n;
    return MN_OK;
}

int mn_spec_find(const mn_spec* s, const char* name) {
    if (!s || !name) return -1;
    unsigned mask = (unsigned)(s->index_cap - 1), h = hash_name(name) & mask;
    while (s->index[h]) {
        int i = s->index[h] - 1;
        if (!strcmp(s->joints[i].name, name)) return i;
        h = (h + 1) & mask;
    }
    return -1;
}

int mn_spec_joint_count(const mn_spec* s) {
    return s ? s->n : 0;
}

mn_joint_def* mn_spec_joint(mn_spec* s, int i) {
    return (s && i >= 0 && i < s->n) ? &s->joints[i] : NULL;
}

const mn_joint_def* mn_spec_joint_const(const mn_spec* s, int i) {
    return (s && i >= 0 && i < s->n) ? &s->joints[i] : NULL;
}

int mn_spec_add_joint(mn_spec* s, const mn_joint_def* def, mn_error* err) {
    if (!s || !def) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "joint", "NULL spec or def");
        return -1;
    }
    if (mn_def_check(def, s->n, err) != MN_OK) return -1;
    if (mn_spec_find(s, def->name) >= 0) {
        mn_error_set(err, MN_ERR_ARG, "", 0, def->name, "duplicate joint name");
        return -1;
    }
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        mn_joint_def* j = realloc(s->joints, (size_t)cap * sizeof *j);
        if (!j) {
            mn_error_set(err, MN_ERR_NOMEM, "", 0, def->name, "out of memory");
            return -1;
        }
        s->joints = j;
        char** a = realloc(s->alias, (size_t)cap * sizeof *a);
        if (!a) {
            mn_error_set(err, MN_ERR_NOMEM, "", 0, def->name, "out of memory");
            return -1;
        }
        s->alias = a;
        s->cap = cap;
    }
    mn_joint_def d = *def;
    d.name = strdup(def->name);
    d.object = def->object ? strdup(def->object) : NULL;
    if (!d.name || (def->object && !d.object)) {
        free((char*)d.name);
        free((char*)d.object);
        mn_error_set(err, MN_ERR_NOMEM, "", 0, def->name, "out of memory");
        return -1;
    }
    s->alias[s->n] = NULL;
    s->joints[s->n++] = d;
    if (2 * s->n > s->index_cap) {
        if (!index_rebuild(s, 2 * s->index_cap)) {
            s->n--;
            free((char*)d.name);
            free((char*)d.object);
            mn_error_set(err, MN_ERR_NOMEM, "", 0, def->name, "out of memory");
            return -1;
        }
    } else {
        unsigned mask = (unsigned)(s->index_cap - 1), h = hash_name(d.name) & mask;
        while (s->index[h])
            h = (h + 1) & mask;
        s->index[h] = s->n;
    }
    return s->n - 1;
}

mn_status mn_spec_rename(mn_spec* s, int i, const char* name, mn_error* err) {
    if (!s || i < 0 || i >= s->n || !name || !name[0])
        return mn_error_set(err, MN_ERR_ARG, "", 0, "name", "bad joint index or empty name");
    int other = mn_spec_find(s, name);
    if (other >= 0 && other != i)
        return mn_error_set(err, MN_ERR_ARG, "", 0, name, "duplicate joint name");
    char* n = strdup(name);
    if (!n) return mn_error_set(err, MN_ERR_NOMEM, "", 0, name, "out of memory");
    free((char*)s->joints[i].name);
    s->joints[i].name = n;
    return index_rebuild(s, s->index_cap)
               ? MN_OK
               : mn_error_set(err, MN_ERR_NOMEM, "", 0, name, "out of memory");
}

mn_status mn_spec_set_object(mn_spec* s, int i, const char* object) {
    if (!s || i < 0 || i >= s->n) return MN_ERR_ARG;
    char* o = object ? strdup(object) : NULL;
    if (object && !o) return MN_ERR_NOMEM;
    free((char*)s->joints[i].object);
    s->joints[i].object = o;
    return MN_OK;
}

mn_status mn_spec_set_alias(mn_spec* s, int i, const char* alias) {
    if (!s || i < 0 || i >= s->n) return MN_ERR_ARG;
    if (alias && (!alias[0] || strlen(alias) > 255)) return MN_ERR_ARG;
    char* a = alias ? strdup(alias) : NULL;
    if (alias && !a) return MN_ERR_NOMEM;
    free(s->alias[i]);
    s->alias[i] = a;
    return MN_OK;
}

const char* mn_spec_alias(const mn_spec* s, int i) {
    return (s && i >= 0 && i < s->n) ? s->alias[i] : NULL;
}

mn_spec* mn_spec_clone(const mn_spec* src) {
    if (!src) return NULL;
    mn_spec* s = mn_spec_create(src->name);
    if (!s) return NULL;
    for (int i = 0; i < src->n; i++) {
        if (mn_spec_add_joint(s, &src->joints[i], NULL) < 0 ||
            mn_spec_set_alias(s, i, src->alias[i]) != MN_OK) {
            mn_spec_destroy(s);
            return NULL;
        }
    }
    return s;
}
