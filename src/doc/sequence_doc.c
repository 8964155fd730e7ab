/* Sequence documents (docs/sequence.md): a keyframed sequence (Welman 6.1.2) with the scene
 * document's handles and constraints over frame ranges (Welman 6.3, 7.2.1), read with cJSON
 * and written so that every number reads back to the same double. */
#include <marionette/gltf.h>
#include <marionette/layers.h>
#include <marionette/sequence.h>

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doc/doc_internal.h"
#include "doc/json_locate.h"
#include "doc/seq_contacts.h"
#include "doc/seq_doc_internal.h"
#include "doc/doc_codecs.h"

/* ---- reading ----------------------------------------------------------------------------- */

static const char* const root_keys[] = {
    "figure",  "scale",  "fps",       "interpolation", "keys",    "handles", "constraints",
    "comment", "layers", "time_warp", "contacts",      "figures", "root",    NULL};
static const char* const layer_keys[] = {"name",      "mode",          "weights", "mask", "keys",
                                         "time_warp", "interpolation", "comment", NULL};
static const char* const interp_keys[] = {"rotation", "translation", "joints", "comment", NULL};
static const char* const joint_interp_keys[] = {"rotation", "translation", "comment", NULL};
static const char* const key_keys[] = {"frame", "pose", "tcb", "comment", NULL};
static const char* const free_keys[] = {"position", "rotation", NULL};
static const char* const handle_keys[] = {"name", "type", "joint", "point", "comment", NULL};
static const char* const fig_handle_keys[] = {"name",   "type",    "joint", "point",
                                              "figure", "comment", NULL};
static const char* const con_keys[] = {
    "name",     "type",      "handle",  "handle2", "target",      "origin",
    "normal",   "direction", "polygon", "up",      "margin",      "weight",
    "priority", "enabled",   "frames",  "lock",    "target_keys", "target_interpolation",
    "axis",     "comment",   NULL};
static const char* const tk_keys[] = {"frame",     "target",  "origin", "normal",
                                      "direction", "comment", NULL};

/* An interpolation name member; -1 when absent. */
static mn_status get_interp(ctx* x, const cJSON* o, const char* key, int* out) {
    char name[32];
    int has = 0;
    *out = -1;
    mn_status st = get_str(x, o, key, name, sizeof name, 0, &has);
    if (st != MN_OK || !has) return st;
    *out = mn_interp_parse(name);
    if (*out <= 0) {
        push_key(x, key);
        return fail(
            x, MN_ERR_PARSE,
            "unknown interpolation \"%s\" (constant, linear, slerp, squad, catmull-rom, kb)", name);
    }
    return MN_OK;
}

static mn_status read_interpolation(reader* r, const cJSON* o) {
    ctx* x = &r->x;
    push_key(x, "interpolation");
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    mn_status st = check_keys(x, o, interp_keys);
    if (st != MN_OK) return st;
    int rot, trans;
    if ((st = get_interp(x, o, "rotation", &rot)) != MN_OK) return st;
    if ((st = get_interp(x, o, "translation", &trans)) != MN_OK) return st;
    if (mn_seq_set_default_interp(r->s, rot < 0 ? MN_INTERP_DEFAULT : (mn_interp)rot,
                                  trans < 0 ? MN_INTERP_DEFAULT : (mn_interp)trans) != MN_OK) {
        push_key(x, rot >= 0 && rot != MN_INTERP_CONSTANT && rot != MN_INTERP_LINEAR &&
                            rot != MN_INTERP_SLERP && rot != MN_INTERP_SQUAD
                        ? "rotation"
                        : "translation");
        return fail(
            x, MN_ERR_PARSE,
            "this interpolation does not apply here (rotation: constant, linear, slerp, squad; "
            "translation: constant, linear, catmull-rom, kb)");
    }
    const cJSON* js = cJSON_GetObjectItemCaseSensitive(o, "joints");
    if (js) {
        push_key(x, "joints");
        if (!cJSON_IsObject(js)) return fail(x, MN_ERR_PARSE, "expected an object of joint names");
        const cJSON* it;
        cJSON_ArrayForEach(it, js) {
            push_key(x, it->string);
            int j = mn_model_find_joint(r->m, it->string);
            char hint[256];
            if (j < 0)
                return fail(x, MN_ERR_NOTFOUND, "no joint named \"%s\"%s", it->string,
                            mn_model_joint_hint(r->m, it->string, hint, sizeof hint));
            if (!cJSON_IsObject(it)) return fail(x, MN_ERR_PARSE, "expected an object");
            if ((st = check_keys(x, it, joint_interp_keys)) != MN_OK) return st;
            if ((st = get_interp(x, it, "rotation", &rot)) != MN_OK) return st;
            if ((st = get_interp(x, it, "translation", &trans)) != MN_OK) return st;
            if (mn_seq_set_joint_interp(r->s, j, rot < 0 ? MN_INTERP_DEFAULT : (mn_interp)rot,
                                        trans < 0 ? MN_INTERP_DEFAULT : (mn_interp)trans) != MN_OK)
                return fail(x, MN_ERR_PARSE, "an interpolation that does not apply to a %s joint",
                            mn_joint_type_name((mn_joint_type)r->m->jnt_type[j]));
            pop(x);
        }
        pop(x);
    }
    pop(x);
    return MN_OK;
}

static mn_status read_pose(reader* r, const cJSON* o, double* q) {
    ctx* x = &r->x;
    const mn_model* m = r->m;
    push_key(x, "pose");
    if (!cJSON_IsObject(o))
        return fail(x, MN_ERR_PARSE, "expected an object mapping joint names to values");
    memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
    const cJSON* it;
    cJSON_ArrayForEach(it, o) {
        push_key(x, it->string);
        int j = mn_model_find_joint(m, it->string);
        char hint[256];
        if (j < 0)
            return fail(x, MN_ERR_NOTFOUND, "no joint named \"%s\" in %s%s", it->string,
                        m->name ? m->name : "the figure",
                        mn_model_joint_hint(m, it->string, hint, sizeof hint));
        double* qj = q + m->jnt_qadr[j];
        int t = m->jnt_type[j];
        if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) {
            if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
                return fail(x, MN_ERR_PARSE, "expected a finite number (%s)",
                            t == MN_JOINT_HINGE ? "radians" : "length");
            double bound = t == MN_JOINT_HINGE ? MN_SEQ_MAX_ANGLE : MN_SEQ_MAX_LENGTH;
            if (!(fabs(it->valuedouble) <= bound))
                return fail(x, MN_ERR_PARSE, "%.10g is beyond %g %s, the most a pose takes",
                            it->valuedouble, bound, t == MN_JOINT_HINGE ? "radians" : "in length");
            qj[0] = it->valuedouble;
        } else if (t == MN_JOINT_BALL) {
            pop(x);
            int has = 0;
            mn_status st = get_quat(x, o, it->string, qj, &has);
            if (st != MN_OK) return st;
            push_key(x, it->string);
        } else if (t == MN_JOINT_FREE) {
            if (!cJSON_IsObject(it))
                return fail(x, MN_ERR_PARSE,
                            "expected {\"position\": [x, y, z], \"rotation\": [w, x, y, z]}");
            mn_status st = check_keys(x, it, free_keys);
            if (st != MN_OK) return st;
            if ((st = get_vec(x, it, "position", qj, 3, NULL)) != MN_OK) return st;
            for (int i = 0; i < 3; i++)
                if (!(fabs(qj[i]) <= MN_SEQ_MAX_LENGTH)) {
                    push_key(x, "position");
                    return fail(x, MN_ERR_PARSE,
                                "%.10g is beyond %g in length, the most a pose takes", qj[i],
                                MN_SEQ_MAX_LENGTH);
                }
            if ((st = get_quat(x, it, "rotation", qj + 3, NULL)) != MN_OK) return st;
        } else {
            return fail(x, MN_ERR_PARSE, "a fixed joint has no value");
        }
        pop(x);
    }
    pop(x);
    return MN_OK;
}

/* The root states of n keys q of a placed figure, as the document gives them, appended to
 * the figure's record (14 numbers a key: as given, then as placed by placed_keyed). */
static mn_status keep_keyed(reader* r, const double* q, int n) {
    struct mn_seq_figures_keyed* kd = r->keyed;
    int f = r->kfig, at = kd->n[f];
    size_t nq = (size_t)r->m->nq, a = (size_t)r->m->jnt_qadr[0];
    double* g = realloc(kd->q[f], sizeof(double) * 14 * ((size_t)at + (size_t)n + 1));
    if (!g) return mn_error_set(r->x.err, MN_ERR_NOMEM, r->x.file, 0, "keys", "out of memory");
    kd->q[f] = g;
    for (int k = 0; k < n; k++)
        memcpy(g + 14 * (size_t)(at + k), q + (size_t)k * nq + a, sizeof(double) * 7);
    return MN_OK;
}
static void placed_keyed(reader* r, const double* q, int n) {
    struct mn_seq_figures_keyed* kd = r->keyed;
    int f = r->kfig;
    size_t nq = (size_t)r->m->nq, a = (size_t)r->m->jnt_qadr[0];
    for (int k = 0; k < n; k++)
        memcpy(kd->q[f] + 14 * (size_t)(kd->n[f] + k) + 7, q + (size_t)k * nq + a,
               sizeof(double) * 7);
    kd->n[f] += n;
}

static mn_status read_keys(reader* r, const cJSON* a) {
    ctx* x = &r->x;
    int n;
    mn_status st = enter_array(x, a, "keys", 1000000, "keys", &n);
    if (st != MN_OK) return st;
    /* every key read first, then set at once: the interpolation is built once, not at each
     * key (which made n keys cost n builds) */
    size_t nq = (size_t)r->m->nq, cap = (size_t)(n > 0 ? n : 1);
    double* q = malloc(sizeof(double) * cap * (nq ? nq : 1));
    double* frames = malloc(sizeof(double) * cap);
    double* tcbs = malloc(sizeof(double) * 3 * cap);
    if (!q || !frames || !tcbs) {
        free(q), free(frames), free(tcbs);
        return mn_error_set(x->err, MN_ERR_NOMEM, x->file, 0, "keys", "out of memory");
    }
    int i = 0;
    const cJSON* it;
    cJSON_ArrayForEach(it, a) {
        if (i >= n) break;
        push_index(x, i);
        if (!cJSON_IsObject(it)) {
            st = fail(x, MN_ERR_PARSE, "expected an object");
            break;
        }
        if ((st = check_keys(x, it, key_keys)) != MN_OK) break;
        if (!cJSON_GetObjectItemCaseSensitive(it, "frame")) {
            st = fail(x, MN_ERR_PARSE, "missing member \"frame\"");
            break;
        }
        double frame = 0, *tcb = tcbs + 3 * i;
        tcb[0] = tcb[1] = tcb[2] = 0;
        if ((st = get_num(x, it, "frame", &frame, -1e9, 1e9)) != MN_OK) break;
        const cJSON* p = cJSON_GetObjectItemCaseSensitive(it, "pose");
        if (!p) {
            st = fail(x, MN_ERR_PARSE, "missing member \"pose\"");
            break;
        }
        if ((st = read_pose(r, p, q + (size_t)i * nq)) != MN_OK) break;
        int has = 0;
        if ((st = get_vec(x, it, "tcb", tcb, 3, &has)) != MN_OK) break;
        if (has && !(fabs(tcb[0]) <= 1 && fabs(tcb[1]) <= 1 && fabs(tcb[2]) <= 1)) {
            push_key(x, "tcb");
            st = fail(x, MN_ERR_PARSE, "tension, continuity and bias lie in [-1, 1]");
            break;
        }
        frames[i] = frame;
        pop(x);
        i++;
    }
    /* a placed figure's keys moved; the root states as given kept for the writer */
    if (st == MN_OK && r->place && r->keyed) st = keep_keyed(r, q, i);
    for (int k = 0; st == MN_OK && r->place && k < i; k++)
        mn_free_joint_place(r->m, 0, r->place, q + (size_t)k * nq + r->m->jnt_qadr[0]);
    if (st == MN_OK && r->place && r->keyed) placed_keyed(r, q, i);
    if (st == MN_OK && i > 0) {
        mn_error e;
        int bad = -1;
        if (mn_seq_add_keys(r->s, i, frames, q, tcbs, &bad, &e) != MN_OK) {
            push_index(x, bad >= 0 ? bad : 0);
            if (!strcmp(e.field, "frame")) push_key(x, "frame");
            st = fail(x, strcmp(e.field, "frame") ? e.status : MN_ERR_PARSE, "%s", e.message);
        }
    }
    free(q), free(frames), free(tcbs);
    if (st != MN_OK) return st;
    if (i == 0) return fail(x, MN_ERR_PARSE, "a sequence needs at least one key");
    pop(x);
    return MN_OK;
}

/* A library error moved onto the document field it came from. */
static mn_status lib_error(ctx* x, const mn_error* e) {
    if (e->field[0] && strcmp(e->field, "constraints") && strcmp(e->field, "handles") &&
        x->depth < 8)
        push_key(x, e->field);
    const char* msg = e->message;
    const char* colon = strstr(msg, ": ");
    if (colon && e->field[0] && !strncmp(msg, e->field, strlen(e->field))) msg = colon + 2;
    return fail(x, e->status ? e->status : MN_ERR_ARG, "%s", msg);
}

static mn_status read_handles(reader* r, const cJSON* a) {
    ctx* x = &r->x;
    int n;
    mn_status st = enter_array(x, a, "handles", 4096, NULL, &n);
    if (st != MN_OK) return st;
    r->hname = calloc((size_t)n + 1, NAME_CAP);
    if (!r->hname)
        return mn_error_set(x->err, MN_ERR_NOMEM, x->file, 0, "handles", "out of memory");
    int i = 0;
    const cJSON* o;
    cJSON_ArrayForEach(o, a) {
        push_index(x, i);
        if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
        st = check_keys(x, o, r->nfig ? fig_handle_keys : handle_keys);
        if (st != MN_OK) return st;
        char joint[128] = "", figure[NAME_CAP] = "";
        int has_joint = 0;
        mn_handle_def h = mn_handle_default();
        if ((st = get_str(x, o, "name", r->hname[i], NAME_CAP, 1, NULL)) != MN_OK) return st;
        if (mn_seq_find_handle(r->s, r->hname[i]) >= 0) {
            push_key(x, "name");
            return fail(x, MN_ERR_PARSE, "duplicate handle name \"%s\"", r->hname[i]);
        }
        if ((st = get_handle_type(x, o, &h.type)) != MN_OK) return st;
        if ((st = get_str(x, o, "joint", joint, sizeof joint, h.type != MN_HANDLE_COM,
                          &has_joint)) != MN_OK)
            return st;
        if ((st = get_str(x, o, "figure", figure, sizeof figure, 0, NULL)) != MN_OK) return st;
        const mn_model* m = r->m;
        const char* jname = joint;
        if (r->nfig) { /* "figure/joint", or a "figure" member, or the only figure */
            h.figure =
                mn_doc_joint_figure(r->fig, r->nfig, has_joint ? joint : NULL, figure, &jname);
            if (h.figure == -1) {
                push_key(x, "figure");
                return fail(x, MN_ERR_NOTFOUND, "no figure named \"%s\"", figure);
            }
            if (h.figure < 0) {
                push_key(x, has_joint ? "joint" : "figure");
                return fail(x, MN_ERR_NOTFOUND,
                            "which figure? name it as \"figure/joint\" or with \"figure\"");
            }
            m = r->models[h.figure];
        }
        h.joint = -1;
        if (has_joint) {
            h.joint = mn_model_find_joint(m, jname);
            if (h.joint < 0) {
                char hint[256];
                push_key(x, "joint");
                return fail(x, MN_ERR_NOTFOUND, "no joint named \"%s\" in %s%s", jname,
                            r->nfig   ? r->fig[h.figure].name
                            : m->name ? m->name
                                      : "the figure",
                            mn_model_joint_hint(m, jname, hint, sizeof hint));
            }
        }
        if ((st = get_handle_point(x, o, h.type, &h.point)) != MN_OK) return st;
        h.name = r->hname[i];
        mn_error e;
        if (mn_seq_add_handle(r->s, &h, &e) < 0) return lib_error(x, &e);
        pop(x);
        i++;
    }
    pop(x);
    return MN_OK;
}

static int find_handle_of(const void* s, const char* name) {
    return mn_seq_find_handle(s, name);
}

static mn_status read_target_keys(reader* r, const cJSON* a, int ci, mn_constraint_type type) {
    ctx* x = &r->x;
    push_key(x, "target_keys");
    if (type != MN_CON_PIN && type != MN_CON_ORIENT && type != MN_CON_PLANE && type != MN_CON_LINE)
        return fail(x, MN_ERR_PARSE,
                    "only pin, orient, plane and line constraints have targets to animate");
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1)
        return fail(x, MN_ERR_PARSE, "expected a non-empty array of target keys");
    if (cJSON_GetArraySize(a) > 100000)
        return fail(x, MN_ERR_PARSE, "more than 100000 target keys");
    int i = 0;
    const cJSON* o;
    cJSON_ArrayForEach(o, a) {
        push_index(x, i);
        if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
        mn_status st = check_keys(x, o, tk_keys);
        if (st != MN_OK) return st;
        mn_target_key t = {0, {0, 0, 0}, {0, 0, 0}, {1, 0, 0, 0}};
        if (!cJSON_GetObjectItemCaseSensitive(o, "frame"))
            return fail(x, MN_ERR_PARSE, "missing member \"frame\"");
        if ((st = get_num(x, o, "frame", &t.frame, -1e9, 1e9)) != MN_OK) return st;
        for (int k = 0; k < i; k++)
            if (mn_seq_target_key(r->s, ci, k) &&
                mn_seq_target_key(r->s, ci, k)->frame == t.frame) {
                push_key(x, "frame");
                return fail(x, MN_ERR_PARSE, "a second target key at frame %.17g", t.frame);
            }
        int has = 0;
        const char* need[2] = {NULL, NULL};
        if (type == MN_CON_PIN) {
            if ((st = get_v3(x, o, "target", &t.pos, &has)) != MN_OK) return st;
            need[0] = has ? NULL : "target";
        } else if (type == MN_CON_ORIENT) {
            double q[4];
            if ((st = get_quat(x, o, "target", q, &has)) != MN_OK) return st;
            if (has) t.rot = mn_q4(q[0], q[1], q[2], q[3]);
            need[0] = has ? NULL : "target";
        } else {
            const char* dk = type == MN_CON_PLANE ? "normal" : "direction";
            int h2 = 0;
            if ((st = get_v3(x, o, "origin", &t.pos, &has)) != MN_OK) return st;
            if ((st = get_v3(x, o, dk, &t.dir, &h2)) != MN_OK) return st;
            need[0] = has ? NULL : "origin";
            need[1] = h2 ? NULL : dk;
        }
        for (int k = 0; k < 2; k++)
            if (need[k]) return fail(x, MN_ERR_PARSE, "missing member \"%s\"", need[k]);
        static const char* const members[] = {"target", "origin", "normal", "direction"};
        for (int k = 0; k < 4; k++) {
            int ok = (type == MN_CON_PIN || type == MN_CON_ORIENT)
                         ? k == 0
                         : (k == 1 || k == (type == MN_CON_PLANE ? 2 : 3));
            if (!ok && cJSON_GetObjectItemCaseSensitive(o, members[k])) {
                push_key(x, members[k]);
                return fail(x, MN_ERR_PARSE,
                            "\"%s\" does not belong to a %s constraint's target key", members[k],
                            mn_constraint_type_name(type));
            }
        }
        mn_error e;
        if (mn_seq_set_target_key(r->s, ci, &t, &e) != MN_OK) return lib_error(x, &e);
        pop(x);
        i++;
    }
    pop(x);
    return MN_OK;
}

static mn_status read_constraint(reader* r, const cJSON* o) {
    ctx* x = &r->x;
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    mn_status st = check_keys(x, o, con_keys);
    if (st != MN_OK) return st;
    mn_seq_constraint_def sd = mn_seq_constraint_default();
    mn_constraint_def* d = &sd.con;
    char name[NAME_CAP] = "", type[32];
    int has_name = 0;
    if ((st = get_str(x, o, "name", name, sizeof name, 0, &has_name)) != MN_OK) return st;
    if (has_name && mn_seq_find_constraint(r->s, name) >= 0) {
        push_key(x, "name");
        return fail(x, MN_ERR_PARSE, "duplicate constraint name \"%s\"", name);
    }
    if ((st = get_con_type(x, o, type, d)) != MN_OK) return st;
    if ((st = get_handle_ref(x, o, "handle", 1, find_handle_of, r->s, &d->handle)) != MN_OK)
        return st;
    const mn_handle_def* hd = mn_seq_handle(r->s, d->handle);
    if ((st = get_con_common(x, o, type, hd->type, hd->name, d)) != MN_OK) return st;
    /* frames, lock, animated targets */
    int has = 0;
    double fr[2];
    if ((st = get_vec(x, o, "frames", fr, 2, &has)) != MN_OK) return st;
    if (has) {
        if (fr[1] < fr[0]) {
            push_key(x, "frames");
            return fail(x, MN_ERR_PARSE, "an empty frame range [%.17g, %.17g]", fr[0], fr[1]);
        }
        sd.start = fr[0], sd.end = fr[1];
    }
    int lock = 0, has_lock = 0;
    if (cJSON_GetObjectItemCaseSensitive(o, "lock")) {
        has_lock = 1;
        if ((st = get_bool(x, o, "lock", &lock)) != MN_OK) return st;
    }
    int ti = -1;
    if ((st = get_interp(x, o, "target_interpolation", &ti)) != MN_OK) return st;
    if (ti >= 0) {
        if (ti != MN_INTERP_LINEAR && ti != MN_INTERP_CATMULL_ROM) {
            push_key(x, "target_interpolation");
            return fail(x, MN_ERR_PARSE, "target keys are interpolated linear or catmull-rom");
        }
        sd.target_interp = (mn_interp)ti;
    }
    const cJSON* tks = cJSON_GetObjectItemCaseSensitive(o, "target_keys");
    int has_target = 0;
    switch (d->type) {
    case MN_CON_PIN:
        st = get_v3(x, o, "target", &d->target, &has_target);
        break;
    case MN_CON_ORIENT: {
        double q[4];
        st = get_quat(x, o, "target", q, &has_target);
        if (st == MN_OK && has_target)
            d->target_rot = mn_quat_normalize(mn_q4(q[0], q[1], q[2], q[3]));
        break;
    }
    case MN_CON_PLANE:
    case MN_CON_LINE: {
        const char* dk = d->type == MN_CON_PLANE ? "normal" : "direction";
        int h1 = 0, h2 = 0;
        if ((st = get_v3(x, o, "origin", &d->origin, &h1)) != MN_OK) return st;
        if ((st = get_v3(x, o, dk, &d->dir, &h2)) != MN_OK) return st;
        if (!tks && !h1) return fail(x, MN_ERR_PARSE, "missing member \"origin\"");
        if (!tks && !h2) return fail(x, MN_ERR_PARSE, "missing member \"%s\"", dk);
        if (tks && !h2) d->dir = mn_v3(0, 1, 0); /* replaced by the target keys */
        break;
    }
    case MN_CON_EQUAL:
        d->handle2 = -1;
        st = get_handle_ref(x, o, "handle2", 1, find_handle_of, r->s, &d->handle2);
        break;
    case MN_CON_BALANCE:
        st = get_con_balance(x, o, d);
        break;
    default:
        break;
    }
    if (st != MN_OK) return st;
    static const char* const only[][2] = {{"target", "pin/orient"}, {"origin", "plane/line"},
                                          {"normal", "plane"},      {"direction", "line"},
                                          {"handle2", "equal"},     {"polygon", "balance"},
                                          {"up", "balance"},        {"margin", "balance"},
                                          {"lock", "pin/orient"},   {"axis", "orient"}};
    if ((st = check_con_members(x, o, type, only, sizeof only / sizeof only[0])) != MN_OK)
        return st;
    if (lock && (has_target || tks)) {
        push_key(x, "lock");
        return fail(
            x, MN_ERR_PARSE,
            "a locked constraint takes its target from the sequence: no target or target_keys");
    }
    /* a pin or orientation without a target is locked where its handle is at the start */
    sd.lock = (d->type == MN_CON_PIN || d->type == MN_CON_ORIENT) && !has_target && !tks &&
              (lock || !has_lock);
    if ((d->type == MN_CON_PIN || d->type == MN_CON_ORIENT) && has_lock && !lock && !has_target &&
        !tks)
        return fail(x, MN_ERR_PARSE, "an unlocked %s needs a target or target_keys", type);
    d->name = has_name ? name : NULL;
    mn_error e;
    int ci = mn_seq_add_constraint(r->s, &sd, &e);
    if (ci < 0) return lib_error(x, &e);
    if (tks) return read_target_keys(r, tks, ci, d->type);
    return MN_OK;
}

static mn_status read_constraints(reader* r, const cJSON* a) {
    ctx* x = &r->x;
    int n;
    mn_status st = enter_array(x, a, "constraints", 4096, NULL, &n);
    if (st != MN_OK) return st;
    int i = 0;
    const cJSON* o;
    cJSON_ArrayForEach(o, a) {
        push_index(x, i);
        if ((st = read_constraint(r, o)) != MN_OK) return st;
        pop(x);
        i++;
    }
    pop(x);
    return MN_OK;
}

/* The figure path as written, for messages: printable ASCII kept, anything else '?'. */
static const char* shown(const char* s, char* buf, size_t cap) {
    size_t k = 0;
    for (; *s && k + 1 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        buf[k++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    buf[k] = 0;
    return buf;
}

/* What went wrong reading the figure, without the name the figure reader was given (which
 * holds the document's folder): "line 12: field: text", or "text". */
static const char* figure_problem(const mn_error* e, char* buf, size_t cap) {
    const char* m = e->message;
    size_t fl = strlen(e->file);
    if (fl && !strncmp(m, e->file, fl) && m[fl] == ':') {
        m += fl + 1;
        while (*m >= '0' && *m <= '9')
            m++;
        if (*m == ':') m++;
        if (*m == ' ') m++;
    }
    if (e->line > 0)
        snprintf(buf, cap, "line %d: %s", e->line, m);
    else
        snprintf(buf, cap, "%s", m);
    return buf;
}

/* An untrusted document's figure: read through the one safe opener (mn_read_file_beneath:
 * percent-decoded first; no absolute path, scheme, backslash or ".." segment; opened beneath
 * the document's folder, a regular file only), then parsed from memory. Messages name the
 * path as written, never the resolved one. A glTF figure's own buffers are read beneath the
 * glTF file's folder (inside the document's) by the same opener. */
static mn_status load_figure_confined(ctx* x, const char* figure, double scale,
                                      const char* base_dir, mn_model** out, mn_gltf* skin) {
    char sh[300], why[600];
    mn_error e;
    char* rel = NULL;
    mn_status st = mn_uri_relative(figure, &rel, &e);
    if (st != MN_OK)
        return fail(x, st, "cannot read the figure \"%s\": %s", shown(figure, sh, sizeof sh),
                    figure_problem(&e, why, sizeof why));
    char* data = NULL;
    size_t len = 0;
    st = x->files->read_beneath(base_dir ? base_dir : "", figure, 0, &data, &len, &e);
    if (st != MN_OK) {
        free(rel);
        return fail(x, st, "cannot read the figure \"%s\": %s", shown(figure, sh, sizeof sh),
                    figure_problem(&e, why, sizeof why));
    }
    if (scale > 0 && scale != 1 && mn_file_kind_of_mem(rel, data, len) != MN_FILE_BVH) {
        free(rel);
        free(data);
        push_key(x, "scale");
        return fail(x, MN_ERR_PARSE, "a scale applies to BVH figures only");
    }
    /* the name in the figure readers' messages; a glTF file's folder for its buffers */
    size_t nl = (base_dir ? strlen(base_dir) : 0) + strlen(rel) + 2;
    char* name = malloc(nl);
    if (!name) {
        free(rel);
        free(data);
        return fail(x, MN_ERR_NOMEM, "out of memory");
    }
    if (base_dir && base_dir[0])
        snprintf(name, nl, "%s/%s", base_dir, rel);
    else
        snprintf(name, nl, "%s", rel);
    free(rel);
    st = x->files->figure_mem(data, len, name, scale, out, NULL, skin, NULL, &e);
    free(name);
    free(data);
    if (st != MN_OK)
        return fail(x, st, "cannot read the figure \"%s\": %s", shown(figure, sh, sizeof sh),
                    figure_problem(&e, why, sizeof why));
    return MN_OK;
}

static mn_status load_figure(ctx* x, const char* key, const char* figure, double scale,
                             const char* base_dir, int trusted, mn_model** out, mn_gltf* skin) {
    char path[1024];
    mn_error e;
    int builtin = !strcmp(figure, "stickman");
    if (figure[0] == '/' || !base_dir || !base_dir[0])
        snprintf(path, sizeof path, "%s", figure);
    else
        snprintf(path, sizeof path, "%s/%s", base_dir, figure);
    /* a file of that name wins; only its existence is asked (opening a FIFO would wait) */
    if (builtin && x->files->exists(path)) builtin = 0;
    push_key(x, key);
    mn_status st;
    if (builtin) {
        *out = mn_stickman_model(&e);
        st = *out ? MN_OK : e.status;
    } else if (!trusted) {
        if ((st = load_figure_confined(x, figure, scale, base_dir, out, skin)) != MN_OK) return st;
        pop(x);
        return MN_OK;
    } else if (scale > 0 && x->files->kind_of(path) == MN_FILE_BVH) {
        mn_bvh_options bo = mn_bvh_default();
        bo.scale = scale;
        st = x->files->bvh_read(path, &bo, out, NULL, NULL, &e);
    } else if (scale > 0 && scale != 1) {
        push_key(x, "scale");
        return fail(x, MN_ERR_PARSE, "a scale applies to BVH figures only");
    } else {
        st = x->files->figure_read_skin(path, out, NULL, skin, NULL, &e);
    }
    if (st != MN_OK) return fail(x, st, "cannot read the figure: %s", e.message);
    pop(x);
    return MN_OK;
}

/* ---- layers and time warp (layers.h) ------------------------------------------------------ */

/* "time_warp": [[t, s], [t, s, speed], ...] onto r->s (the sequence or a layer). */
static mn_status read_warp(reader* r, const cJSON* a) {
    ctx* x = &r->x;
    int n;
    mn_status st = enter_array(x, a, "time_warp", 100000, "[frame, source frame] keys", &n);
    if (st != MN_OK) return st;
    if (n < 2) return fail(x, MN_ERR_PARSE, "a time warp has at least two keys");
    double* v = malloc(sizeof(double) * 3 * (size_t)n);
    if (!v) return fail(x, MN_ERR_NOMEM, "out of memory");
    double *t = v, *src = v + n, *speed = v + 2 * n;
    int i = 0;
    const cJSON* it;
    cJSON_ArrayForEach(it, a) {
        push_index(x, i);
        int m = cJSON_IsArray(it) ? cJSON_GetArraySize(it) : 0;
        if (m != 2 && m != 3) {
            st = fail(x, MN_ERR_PARSE,
                      "expected [frame, source frame] or [frame, source frame, "
                      "speed]");
            break;
        }
        double e[3] = {0, 0, NAN};
        int k = 0;
        const cJSON* c;
        cJSON_ArrayForEach(c, it) {
            if (!cJSON_IsNumber(c) || !(fabs(c->valuedouble) <= 1e9)) {
                push_index(x, k);
                st = fail(x, MN_ERR_PARSE, "expected a finite number within 1e9");
                break;
            }
            e[k++] = c->valuedouble;
        }
        if (st != MN_OK) break;
        t[i] = e[0], src[i] = e[1], speed[i] = e[2];
        if (i > 0 && !(t[i] > t[i - 1])) {
            push_index(x, 0);
            st = fail(x, MN_ERR_PARSE, "output frames must increase");
            break;
        }
        if (i > 0 && !(src[i] >= src[i - 1])) {
            push_index(x, 1);
            st = fail(x, MN_ERR_PARSE, "the warp may hold but never run backwards");
            break;
        }
        if (m == 3 && !(speed[i] >= 0)) {
            push_index(x, 2);
            st = fail(x, MN_ERR_PARSE, "a speed is at least 0");
            break;
        }
        pop(x);
        i++;
    }
    mn_error e;
    if (st == MN_OK && mn_seq_set_warp(r->s, n, t, src, speed, &e) != MN_OK)
        st = fail(x, MN_ERR_PARSE, "%s",
                  e.message + (strncmp(e.message, "time_warp: ", 11) ? 0 : 11));
    free(v);
    if (st != MN_OK) return st;
    pop(x);
    return MN_OK;
}

/* "weights": [[frame, weight], ...] of layer li. */
static mn_status read_weights(reader* r, mn_seq* base, int li, const cJSON* a) {
    ctx* x = &r->x;
    int n;
    mn_status st = enter_array(x, a, "weights", 100000, "[frame, weight] keys", &n);
    if (st != MN_OK) return st;
    double* v = malloc(sizeof(double) * 2 * (size_t)(n ? n : 1));
    if (!v) return fail(x, MN_ERR_NOMEM, "out of memory");
    int i = 0;
    const cJSON* it;
    cJSON_ArrayForEach(it, a) {
        push_index(x, i);
        const cJSON *f = cJSON_GetArrayItem(it, 0), *w = cJSON_GetArrayItem(it, 1);
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 || !cJSON_IsNumber(f) ||
            !cJSON_IsNumber(w) || !(fabs(f->valuedouble) <= 1e9)) {
            st = fail(x, MN_ERR_PARSE, "expected [frame, weight] (finite numbers)");
            break;
        }
        if (!(w->valuedouble >= 0 && w->valuedouble <= 1)) {
            push_index(x, 1);
            st = fail(x, MN_ERR_PARSE, "a weight lies in [0, 1]");
            break;
        }
        if (i > 0 && !(f->valuedouble > v[2 * i - 2])) {
            push_index(x, 0);
            st = fail(x, MN_ERR_PARSE, "frames must increase");
            break;
        }
        v[2 * i] = f->valuedouble, v[2 * i + 1] = w->valuedouble;
        pop(x);
        i++;
    }
    if (st == MN_OK) {
        double* fr = malloc(sizeof(double) * (size_t)(n ? n : 1));
        double* wv = malloc(sizeof(double) * (size_t)(n ? n : 1));
        for (int k = 0; fr && wv && k < n; k++)
            fr[k] = v[2 * k], wv[k] = v[2 * k + 1];
        mn_error e;
        if (!fr || !wv)
            st = fail(x, MN_ERR_NOMEM, "out of memory");
        else if (mn_seq_set_layer_weights(base, li, n, fr, wv, &e) != MN_OK)
            st = fail(x, e.status, "%s", e.message);
        free(fr), free(wv);
    }
    free(v);
    if (st != MN_OK) return st;
    pop(x);
    return MN_OK;
}

/* "mask": ["joint", ...] (each joint with its descendants at 1, the rest 0) or
 * {"joint": weight, ...} (those joints only, the rest 0). */
static mn_status read_mask(reader* r, mn_seq* base, int li, const cJSON* o) {
    ctx* x = &r->x;
    const mn_model* m = r->m;
    push_key(x, "mask");
    int branches = cJSON_IsArray(o);
    if (!branches && !cJSON_IsObject(o))
        return fail(x, MN_ERR_PARSE,
                    "expected an array of joint names (each with its "
                    "descendants) or an object of joint weights");
    double* mask = calloc((size_t)m->njoint + 1, sizeof(double));
    if (!mask) return fail(x, MN_ERR_NOMEM, "out of memory");
    mn_status st = MN_OK;
    int i = 0;
    const cJSON* it;
    cJSON_ArrayForEach(it, o) {
        const char* name = branches ? it->valuestring : it->string;
        if (branches)
            push_index(x, i++);
        else
            push_key(x, it->string);
        if (branches && !cJSON_IsString(it)) {
            st = fail(x, MN_ERR_PARSE, "expected a joint name");
            break;
        }
        int j = mn_model_find_joint(m, name);
        char hint[256];
        if (j < 0) {
            st = fail(x, MN_ERR_NOTFOUND, "no joint named \"%s\"%s", name,
                      mn_model_joint_hint(m, name, hint, sizeof hint));
            break;
        }
        if (branches) {
            for (int k = j; k < m->jnt_subtree_end[j]; k++)
                mask[k] = 1;
        } else if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= 1)) {
            st = fail(x, MN_ERR_PARSE, "a mask weight is a number in [0, 1]");
            break;
        } else {
            mask[j] = it->valuedouble;
        }
        pop(x);
    }
    mn_error e;
    if (st == MN_OK && mn_seq_set_layer_mask(base, li, mask, &e) != MN_OK)
        st = fail(x, e.status, "%s", e.message);
    free(mask);
    if (st != MN_OK) return st;
    pop(x);
    return MN_OK;
}

static mn_status read_layer(reader* r, mn_seq* base, const cJSON* o) {
    ctx* x = &r->x;
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    mn_status st = check_keys(x, o, layer_keys);
    if (st != MN_OK) return st;
    char name[NAME_CAP] = "", mode[32] = "override";
    if ((st = get_str(x, o, "name", name, sizeof name, 0, NULL)) != MN_OK) return st;
    if ((st = get_str(x, o, "mode", mode, sizeof mode, 0, NULL)) != MN_OK) return st;
    int md = mn_layer_mode_parse(mode);
    if (md < 0) {
        push_key(x, "mode");
        return fail(x, MN_ERR_PARSE, "unknown mode \"%s\" (override, additive)", mode);
    }
    if (name[0] && mn_seq_find_layer(base, name) >= 0) {
        push_key(x, "name");
        return fail(x, MN_ERR_PARSE, "a second layer named \"%s\"", name);
    }
    mn_error e;
    int li = mn_seq_add_layer(base, name[0] ? name : NULL, (mn_layer_mode)md, &e);
    if (li < 0) return fail(x, e.status, "%s", e.message);
    const cJSON* w = cJSON_GetObjectItemCaseSensitive(o, "weights");
    if (w && (st = read_weights(r, base, li, w)) != MN_OK) return st;
    const cJSON* mk = cJSON_GetObjectItemCaseSensitive(o, "mask");
    if (mk && (st = read_mask(r, base, li, mk)) != MN_OK) return st;
    /* the layer's own interpolation, keys and warp, read as the sequence's are; a placed
     * figure's override layer is a pose of the figure where it stands (its keys moved as the
     * figure's), an additive one a change from the rest pose (not moved) */
    const mn_xform* place = r->place;
    if (md == MN_LAYER_ADDITIVE) r->place = NULL;
    r->s = mn_seq_layer(base, li);
    const cJSON* in = cJSON_GetObjectItemCaseSensitive(o, "interpolation");
    if (in) st = read_interpolation(r, in);
    const cJSON* keys = cJSON_GetObjectItemCaseSensitive(o, "keys");
    if (st == MN_OK && !keys) st = fail(x, MN_ERR_PARSE, "missing member \"keys\"");
    if (st == MN_OK) st = read_keys(r, keys);
    const cJSON* tw = cJSON_GetObjectItemCaseSensitive(o, "time_warp");
    if (st == MN_OK && tw) st = read_warp(r, tw);
    r->s = base;
    r->place = place;
    return st;
}

static mn_status read_layers_and_warp(reader* r, const cJSON* root) {
    ctx* x = &r->x;
    const cJSON* a = cJSON_GetObjectItemCaseSensitive(root, "layers");
    mn_status st;
    if (a) {
        int n;
        if ((st = enter_array(x, a, "layers", MN_SEQ_MAX_LAYERS, "layers", &n)) != MN_OK) return st;
        int i = 0;
        const cJSON* it;
        cJSON_ArrayForEach(it, a) {
            push_index(x, i++);
            if ((st = read_layer(r, r->s, it)) != MN_OK) return st;
            pop(x);
        }
        pop(x);
    }
    const cJSON* tw = cJSON_GetObjectItemCaseSensitive(root, "time_warp");
    if (tw && (st = read_warp(r, tw)) != MN_OK) return st;
    return MN_OK;
}

/* The figure m re-rooted at the joint `root` names (member `key`; mn_model_reroot at the
 * rest state, every joint where it stands): *out the new model, NULL when that joint is
 * already m's root. */
static mn_status reroot_figure(ctx* x, const char* key, const char* root, const mn_model* m,
                               mn_model** out) {
    *out = NULL;
    push_key(x, key);
    int j = mn_model_find_joint(m, root);
    char hint[256];
    if (j < 0)
        return fail(x, MN_ERR_NOTFOUND, "no joint named \"%s\" in %s%s", root,
                    m->name ? m->name : "the figure",
                    mn_model_joint_hint(m, root, hint, sizeof hint));
    if (m->jnt_parent[j] < 0) { /* already the root */
        pop(x);
        return MN_OK;
    }
    mn_error e;
    if (!(*out = mn_model_reroot(m, j, NULL, &e))) {
        const char* msg = e.message; /* "joint: why" without its field */
        size_t fl = strlen(e.field);
        if (fl && !strncmp(msg, e.field, fl) && msg[fl] == ':') msg += fl + (msg[fl + 1] ? 2 : 1);
        return fail(x, e.status ? e.status : MN_ERR_ARG, "%s", msg);
    }
    pop(x);
    return MN_OK;
}

static mn_status parse(reader* r, const cJSON* root, const char* base_dir, int trusted,
                       const mn_model* figure, mn_model** model, mn_gltf* skin,
                       mn_seq_doc_info* info) {
    ctx* x = &r->x;
    if (!cJSON_IsObject(root)) return fail(x, MN_ERR_PARSE, "a sequence document is a JSON object");
    mn_status st = check_keys(x, root, root_keys);
    if (st != MN_OK) return st;
    if (cJSON_GetObjectItemCaseSensitive(root, "figures")) {
        push_key(x, "figures");
        return fail(x, MN_ERR_UNSUPPORTED,
                    "a document of several figures: read it with mn_seq_read_figures (anim "
                    "bake and anim info do)");
    }
    if ((st = get_str(x, root, "figure", info->figure, sizeof info->figure, 1, NULL)) != MN_OK)
        return st;
    info->scale = 0;
    if ((st = get_num(x, root, "scale", &info->scale, 1e-12, 1e12)) != MN_OK) return st;
    mn_seq_def def = mn_seq_def_default();
    if ((st = get_num(x, root, "fps", &def.fps, 1e-6, 1e6)) != MN_OK) return st;
    if ((st = get_str(x, root, "root", info->root, sizeof info->root, 0, NULL)) != MN_OK) return st;
    if (!figure) {
        if ((st = load_figure(x, "figure", info->figure, info->scale, base_dir, trusted, model,
                              skin)) != MN_OK)
            return st;
        figure = *model;
    }
    if (info->root[0]) { /* the root the document was written with (mn_model_reroot) */
        if (skin && skin->nverts > 0) {
            push_key(x, "root");
            return fail(x, MN_ERR_UNSUPPORTED,
                        "a skinned figure keeps its root (its skin is bound to the joints as "
                        "they are)");
        }
        mn_model* rm = NULL;
        if ((st = reroot_figure(x, "root", info->root, figure, &rm)) != MN_OK) return st;
        if (rm) {
            mn_model_destroy(*model);
            *model = rm;
            figure = rm;
        }
    }
    r->m = figure;
    const cJSON* hs = cJSON_GetObjectItemCaseSensitive(root, "handles");
    const cJSON* cs = cJSON_GetObjectItemCaseSensitive(root, "constraints");
    def.max_handles = cJSON_IsArray(hs) ? cJSON_GetArraySize(hs) + 1 : 1;
    def.max_constraints = cJSON_IsArray(cs) ? cJSON_GetArraySize(cs) + 1 : 1;
    if (def.max_handles > 4097 || def.max_constraints > 4097)
        def.max_handles = def.max_constraints = 4096;
    mn_error e;
    r->s = mn_seq_create(figure, &def, &e);
    if (!r->s) return mn_error_set(x->err, e.status, x->file, 0, e.field, "%s", e.message);
    const cJSON* in = cJSON_GetObjectItemCaseSensitive(root, "interpolation");
    if (in && (st = read_interpolation(r, in)) != MN_OK) return st;
    const cJSON* keys = cJSON_GetObjectItemCaseSensitive(root, "keys");
    if (!keys) return fail(x, MN_ERR_PARSE, "missing member \"keys\"");
    if ((st = read_keys(r, keys)) != MN_OK) return st;
    if (hs && (st = read_handles(r, hs)) != MN_OK) return st;
    if (cs && (st = read_constraints(r, cs)) != MN_OK) return st;
    if ((st = read_layers_and_warp(r, root)) != MN_OK) return st;
    return mn_seq_contacts_read(x, root, figure, info);
}

/* ---- for the reader of several figures (seq_figures.c) ------------------------------------ */

mn_status mn_seqdoc_load_figure(ctx* x, const char* key, const char* figure, const char* base_dir,
                                int trusted, mn_model** out) {
    return load_figure(x, key, figure, 0, base_dir, trusted, out, NULL);
}
mn_status mn_seqdoc_interpolation(reader* r, const cJSON* o) {
    return read_interpolation(r, o);
}
mn_status mn_seqdoc_keys(reader* r, const cJSON* a) {
    return read_keys(r, a);
}
mn_status mn_seqdoc_handles(reader* r, const cJSON* a) {
    return read_handles(r, a);
}
mn_status mn_seqdoc_constraints(reader* r, const cJSON* a) {
    return read_constraints(r, a);
}
mn_status mn_seqdoc_lib_error(ctx* x, const mn_error* e) {
    return lib_error(x, e);
}
mn_status mn_seqdoc_layers_and_warp(reader* r, const cJSON* o) {
    return read_layers_and_warp(r, o);
}
mn_status mn_seqdoc_reroot(ctx* x, const char* key, const char* root, const mn_model* m,
                           mn_model** out) {
    return reroot_figure(x, key, root, m, out);
}

mn_seq_read_options mn_seq_read_default(void) {
    mn_seq_read_options o;
    memset(&o, 0, sizeof o);
    return o;
}

mn_status mn_seqdoc_read_mem(const char* text, size_t len, const char* name, const char* base_dir,
                             const mn_doc_files* files, const mn_seq_read_options* opt,
                             const mn_model* figure, mn_model** model, mn_seq** seq,
                             mn_seq_doc_info* info, mn_gltf* skin, mn_error* err) {
    mn_error_clear(err);
    if (skin) memset(skin, 0, sizeof *skin);
    if (!model || !seq) return mn_error_set(err, MN_ERR_ARG, name, 0, "sequence", "NULL output");
    *model = NULL;
    *seq = NULL;
    if (!text) return mn_error_set(err, MN_ERR_ARG, name, 0, "sequence", "NULL text");
    const char* fname = name ? name : "sequence";
    cJSON* root = parse_json(text, len, fname, err);
    if (!root) return MN_ERR_PARSE;
    mn_seq_doc_info tmp;
    if (!info) info = &tmp;
    memset(info, 0, sizeof *info);
    reader r;
    memset(&r, 0, sizeof r);
    r.x.file = fname;
    r.x.text = text;
    r.x.len = len;
    r.x.err = err;
    r.x.doc = "sequence";
    r.x.files = mn_doc_files_or_none(files);
    mn_model* m = NULL;
    mn_status st = parse(&r, root, base_dir, opt && opt->trusted, figure, &m, skin, info);
    cJSON_Delete(root);
    free(r.hname);
    if (st != MN_OK) {
        mn_seq_destroy(r.s);
        mn_model_destroy(m);
        mn_gltf_free(skin);
        if (skin) memset(skin, 0, sizeof *skin);
        return st;
    }
    *model = m;
    *seq = r.s;
    return MN_OK;
}

/* ---- writing ----------------------------------------------------------------------------- */

/* A double that reads back to the same bits (minus zero included). */
static void w_num(mn_strbuf* b, double v) {
    if (v == 0 && signbit(v))
        mn_strbuf_append(b, "-0", 2);
    else
        mn_strbuf_double(b, v);
}

static void w_vec(mn_strbuf* b, const double* v, int n) {
    mn_strbuf_append(b, "[", 1);
    for (int i = 0; i < n; i++) {
        if (i) mn_strbuf_append(b, ", ", 2);
        w_num(b, v[i]);
    }
    mn_strbuf_append(b, "]", 1);
}
static void w_v3(mn_strbuf* b, mn_vec3 v) {
    w_vec(b, &v.x, 3);
}
static void w_quat(mn_strbuf* b, mn_quat q) {
    w_vec(b, &q.w, 4);
}

static const char* handle_name(const mn_seq* s, int h, char* buf) {
    const mn_handle_def* d = mn_seq_handle(s, h);
    if (d->name && d->name[0]) return d->name;
    snprintf(buf, NAME_CAP, "handle %d", h);
    return buf;
}

static void write_constraint(mn_strbuf* b, const mn_seq* s, int c) {
    const mn_seq_constraint_def* sd = mn_seq_constraint(s, c);
    const mn_constraint_def* d = &sd->con;
    char hb[NAME_CAP];
    mn_strbuf_printf(b, "    {\"type\": \"%s\", \"handle\": ", mn_constraint_type_name(d->type));
    mn_strbuf_json_str(b, handle_name(s, d->handle, hb));
    if (d->name && d->name[0]) {
        mn_strbuf_printf(b, ", \"name\": ");
        mn_strbuf_json_str(b, d->name);
    }
    if (isfinite(sd->start) || isfinite(sd->end)) {
        double fr[2] = {sd->start, sd->end};
        if (!isfinite(fr[0])) fr[0] = -1e300;
        if (!isfinite(fr[1])) fr[1] = 1e300;
        mn_strbuf_printf(b, ", \"frames\": ");
        w_vec(b, fr, 2);
    }
    if (d->weight != 1) mn_strbuf_printf(b, ", \"weight\": "), w_num(b, d->weight);
    if (d->priority != 0) mn_strbuf_printf(b, ", \"priority\": %d", d->priority);
    if (!d->enabled) mn_strbuf_printf(b, ", \"enabled\": false");
    int ntk = mn_seq_target_key_count(s, c);
    switch (d->type) {
    case MN_CON_PIN:
        if (sd->lock && !ntk)
            mn_strbuf_printf(b, ", \"lock\": true");
        else if (!ntk)
            mn_strbuf_printf(b, ", \"target\": "), w_v3(b, d->target);
        break;
    case MN_CON_ORIENT:
        if (d->axis >= 1 && d->axis <= 3)
            mn_strbuf_printf(b, ", \"axis\": \"%c\"", "xyz"[d->axis - 1]);
        if (sd->lock && !ntk)
            mn_strbuf_printf(b, ", \"lock\": true");
        else if (!ntk)
            mn_strbuf_printf(b, ", \"target\": "), w_quat(b, d->target_rot);
        break;
    case MN_CON_PLANE:
    case MN_CON_LINE:
        mn_strbuf_printf(b, ", \"origin\": ");
        w_v3(b, d->origin);
        mn_strbuf_printf(b, ", \"%s\": ", d->type == MN_CON_PLANE ? "normal" : "direction");
        w_v3(b, d->dir);
        break;
    case MN_CON_EQUAL:
        mn_strbuf_printf(b, ", \"handle2\": ");
        mn_strbuf_json_str(b, handle_name(s, d->handle2, hb));
        break;
    case MN_CON_BALANCE:
        mn_strbuf_printf(b, ", \"polygon\": [");
        for (int k = 0; k < d->npolygon; k++) {
            if (k) mn_strbuf_append(b, ", ", 2);
            w_v3(b, d->polygon[k]);
        }
        mn_strbuf_printf(b, "], \"up\": ");
        w_v3(b, d->up);
        mn_strbuf_printf(b, ", \"margin\": ");
        w_num(b, d->margin);
        break;
    default:
        break;
    }
    if (ntk) {
        mn_strbuf_printf(b, ", \"target_interpolation\": \"%s\", \"target_keys\": [",
                         mn_interp_name(sd->target_interp));
        for (int k = 0; k < ntk; k++) {
            const mn_target_key* t = mn_seq_target_key(s, c, k);
            mn_strbuf_printf(b, "%s\n      {\"frame\": ", k ? "," : "");
            w_num(b, t->frame);
            if (d->type == MN_CON_PIN)
                mn_strbuf_printf(b, ", \"target\": "), w_v3(b, t->pos);
            else if (d->type == MN_CON_ORIENT)
                mn_strbuf_printf(b, ", \"target\": "), w_quat(b, t->rot);
            else {
                mn_strbuf_printf(b, ", \"origin\": ");
                w_v3(b, t->pos);
                mn_strbuf_printf(b, ", \"%s\": ", d->type == MN_CON_PLANE ? "normal" : "direction");
                w_v3(b, t->dir);
            }
            mn_strbuf_printf(b, "}");
        }
        mn_strbuf_printf(b, "]");
    }
    mn_strbuf_printf(b, "}");
}

/* The root state (7 numbers) a placed figure's key q0 is written with (mn_seqdoc_unplace). */
static void unplace_root(const mn_model* m, mn_seqdoc_unplace* u, const double* q0, double* out) {
    /* from where the last one was found: one step when written in the order read; a few
     * more past keys added or removed since (a bounded look, not a search of every key) */
    for (int k = 0; k < u->n && k < 64; k++) {
        int i = (u->at + k) % u->n;
        if (!memcmp(u->keyed + 14 * (size_t)i + 7, q0, sizeof(double) * 7)) {
            memcpy(out, u->keyed + 14 * (size_t)i, sizeof(double) * 7);
            u->at = i + 1 < u->n ? i + 1 : 0;
            return;
        }
    }
    mn_xform inv = mn_xform_inverse(u->place);
    memcpy(out, q0, sizeof(double) * 7);
    mn_free_joint_place(m, 0, &inv, out);
}

/* The interpolation and keys of s (the sequence or a layer), each line indented by ind; a
 * placed figure's keys in its own frame through u (NULL: as they are). */
static void write_interp_keys(mn_strbuf* b, const mn_seq* s, const char* ind,
                              mn_seqdoc_unplace* u) {
    const mn_model* m = mn_seq_model(s);
    mn_interp rot, trans;
    mn_seq_default_interp(s, &rot, &trans);
    mn_strbuf_printf(b, ",\n%s\"interpolation\": {\"rotation\": \"%s\", \"translation\": \"%s\"",
                     ind, mn_interp_name(rot), mn_interp_name(trans));
    int first = 1;
    for (int j = 0; j < m->njoint; j++) {
        mn_seq_joint_interp(s, j, &rot, &trans);
        if (rot == MN_INTERP_DEFAULT && trans == MN_INTERP_DEFAULT) continue;
        mn_strbuf_printf(b, "%s\n%s  ", first ? ", \"joints\": {" : ",", ind);
        first = 0;
        mn_strbuf_json_str(b, m->jnt_name[j]);
        mn_strbuf_printf(b, ": {");
        if (rot != MN_INTERP_DEFAULT)
            mn_strbuf_printf(b, "\"rotation\": \"%s\"", mn_interp_name(rot));
        if (trans != MN_INTERP_DEFAULT)
            mn_strbuf_printf(b, "%s\"translation\": \"%s\"", rot != MN_INTERP_DEFAULT ? ", " : "",
                             mn_interp_name(trans));
        mn_strbuf_printf(b, "}");
    }
    mn_strbuf_printf(b, "%s},\n%s\"keys\": [", first ? "" : "}", ind);
    for (int k = 0; k < mn_seq_key_count(s); k++) {
        const double* q = mn_seq_key_q(s, k);
        double root[7];
        int unplaced = u && u->place && m->jnt_type[0] == MN_JOINT_FREE;
        if (unplaced) unplace_root(m, u, q + m->jnt_qadr[0], root);
        double tcb[3];
        mn_seq_key_tcb(s, k, tcb);
        mn_strbuf_printf(b, "%s\n%s  {\"frame\": ", k ? "," : "", ind);
        w_num(b, mn_seq_key_frame(s, k));
        if (tcb[0] != 0 || tcb[1] != 0 || tcb[2] != 0)
            mn_strbuf_printf(b, ", \"tcb\": "), w_vec(b, tcb, 3);
        mn_strbuf_printf(b, ", \"pose\": {");
        int n = 0;
        for (int j = 0; j < m->njoint; j++) {
            int t = m->jnt_type[j];
            if (t == MN_JOINT_FIXED) continue;
            const double* qj = unplaced && j == 0 ? root : q + m->jnt_qadr[j];
            mn_strbuf_printf(b, "%s\n%s    ", n++ ? "," : "", ind);
            mn_strbuf_json_str(b, m->jnt_name[j]);
            mn_strbuf_printf(b, ": ");
            if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE)
                w_num(b, qj[0]);
            else if (t == MN_JOINT_BALL)
                w_vec(b, qj, 4);
            else {
                mn_strbuf_printf(b, "{\"position\": ");
                w_vec(b, qj, 3);
                mn_strbuf_printf(b, ", \"rotation\": ");
                w_vec(b, qj + 3, 4);
                mn_strbuf_printf(b, "}");
            }
        }
        mn_strbuf_printf(b, "}}");
    }
    mn_strbuf_printf(b, "]");
}

static void write_warp(mn_strbuf* b, const mn_seq* s, const char* sep) {
    int n = mn_seq_warp_count(s);
    if (!n) return;
    mn_strbuf_printf(b, "%s\"time_warp\": [", sep);
    for (int k = 0; k < n; k++) {
        double t, src, sp;
        mn_seq_warp_key(s, k, &t, &src, &sp);
        double v[3] = {t, src, sp};
        mn_strbuf_printf(b, "%s", k ? ", " : "");
        w_vec(b, v, 3);
    }
    mn_strbuf_printf(b, "]");
}

/* Layers (layers.h): name, mode, weight keys, mask (per joint weights), own interpolation,
 * keys and time warp; the member indented by ind, a placed figure's override layers' keys
 * through u. */
static void write_layers(mn_strbuf* b, const mn_seq* s, const char* ind, mn_seqdoc_unplace* u) {
    int nl = mn_seq_layer_count(s);
    if (!nl) return;
    const mn_model* m = mn_seq_model(s);
    char kind[64];
    snprintf(kind, sizeof kind, "%s    ", ind);
    mn_strbuf_printf(b, ",\n%s\"layers\": [", ind);
    for (int i = 0; i < nl; i++) {
        mn_strbuf_printf(b, "%s\n%s  {\"mode\": \"%s\"", i ? "," : "", ind,
                         mn_layer_mode_name(mn_seq_layer_mode(s, i)));
        if (mn_seq_layer_name(s, i)[0]) {
            mn_strbuf_printf(b, ", \"name\": ");
            mn_strbuf_json_str(b, mn_seq_layer_name(s, i));
        }
        int nw = mn_seq_layer_weight_count(s, i);
        if (nw) {
            mn_strbuf_printf(b, ", \"weights\": [");
            for (int k = 0; k < nw; k++) {
                double v[2];
                mn_seq_layer_weight_key(s, i, k, &v[0], &v[1]);
                mn_strbuf_printf(b, "%s", k ? ", " : "");
                w_vec(b, v, 2);
            }
            mn_strbuf_printf(b, "]");
        }
        const double* mask = mn_seq_layer_mask(s, i);
        if (mask) {
            mn_strbuf_printf(b, ", \"mask\": {");
            for (int j = 0, n = 0; j < m->njoint; j++) {
                if (mask[j] == 0) continue;
                mn_strbuf_printf(b, "%s", n++ ? ", " : "");
                mn_strbuf_json_str(b, m->jnt_name[j]);
                mn_strbuf_printf(b, ": ");
                w_num(b, mask[j]);
            }
            mn_strbuf_printf(b, "}");
        }
        write_warp(b, mn_seq_layer(s, i), ", ");
        write_interp_keys(b, mn_seq_layer(s, i), kind,
                          mn_seq_layer_mode(s, i) == MN_LAYER_OVERRIDE ? u : NULL);
        mn_strbuf_printf(b, "}");
    }
    mn_strbuf_printf(b, "]");
}

mn_status mn_seqdoc_write_mem(const mn_seq* s, const char* figure, double scale, const char* root,
                              char** text, size_t* len, mn_error* err) {
    if (!s || !figure || !text)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "sequence", "NULL argument");
    if (mn_seq_figure_count(s) > 1) /* its handles name joints of other figures */
        return mn_error_set(err, MN_ERR_UNSUPPORTED, NULL, 0, "figures",
                            "a sequence of %d figures: mn_seq_write_figures writes it",
                            mn_seq_figure_count(s));
    const mn_model* m = mn_seq_model(s);
    mn_strbuf b;
    mn_strbuf_init(&b);
    mn_strbuf_printf(&b, "{\n  \"figure\": ");
    mn_strbuf_json_str(&b, figure);
    if (scale > 0) mn_strbuf_printf(&b, ",\n  \"scale\": "), w_num(&b, scale);
    if (root && root[0]) mn_strbuf_printf(&b, ",\n  \"root\": "), mn_strbuf_json_str(&b, root);
    mn_strbuf_printf(&b, ",\n  \"fps\": ");
    w_num(&b, mn_seq_fps(s));
    write_interp_keys(&b, s, "  ", NULL);
    int nh = mn_seq_handle_count(s), nc = mn_seq_constraint_count(s);
    if (nh) {
        mn_strbuf_printf(&b, ",\n  \"handles\": [");
        for (int h = 0; h < nh; h++) {
            const mn_handle_def* d = mn_seq_handle(s, h);
            char hb[NAME_CAP];
            mn_strbuf_printf(&b, "%s\n    {\"name\": ", h ? "," : "");
            mn_strbuf_json_str(&b, handle_name(s, h, hb));
            mn_strbuf_printf(&b, ", \"type\": \"%s\"",
                             d->type == MN_HANDLE_ORIENT ? "orientation"
                                                         : mn_handle_type_name(d->type));
            if (d->joint >= 0)
                mn_strbuf_printf(&b, ", \"joint\": "),
                    mn_strbuf_json_str(&b, m->jnt_name[d->joint]);
            if (d->type == MN_HANDLE_POINT)
                mn_strbuf_printf(&b, ", \"point\": "), w_v3(&b, d->point);
            mn_strbuf_printf(&b, "}");
        }
        mn_strbuf_printf(&b, "]");
    }
    if (nc) {
        mn_strbuf_printf(&b, ",\n  \"constraints\": [");
        for (int c = 0; c < nc; c++) {
            mn_strbuf_printf(&b, "%s\n", c ? "," : "");
            write_constraint(&b, s, c);
        }
        mn_strbuf_printf(&b, "]");
    }
    write_layers(&b, s, "  ", NULL);
    write_warp(&b, s, ",\n  ");
    mn_strbuf_printf(&b, "\n}\n");
    if (b.failed) {
        mn_strbuf_free(&b);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "sequence", "out of memory");
    }
    *text = b.data;
    if (len) *len = b.len;
    return MN_OK;
}

mn_status mn_seq_write_mem(const mn_seq* s, const char* figure, double scale, char** text,
                           size_t* len, mn_error* err) {
    return mn_seqdoc_write_mem(s, figure, scale, NULL, text, len, err);
}

/* ---- for the writer of several figures (seq_figures_write.c) ------------------------------ */

void mn_seqdoc_w_num(mn_strbuf* b, double v) {
    w_num(b, v);
}
void mn_seqdoc_w_vec(mn_strbuf* b, const double* v, int n) {
    w_vec(b, v, n);
}
void mn_seqdoc_write_interp_keys(mn_strbuf* b, const mn_seq* s, const char* ind,
                                 mn_seqdoc_unplace* u) {
    write_interp_keys(b, s, ind, u);
}
void mn_seqdoc_write_layers(mn_strbuf* b, const mn_seq* s, const char* ind, mn_seqdoc_unplace* u) {
    write_layers(b, s, ind, u);
}
void mn_seqdoc_write_warp(mn_strbuf* b, const mn_seq* s, const char* sep) {
    write_warp(b, s, sep);
}
void mn_seqdoc_write_constraint(mn_strbuf* b, const mn_seq* s, int c) {
    write_constraint(b, s, c);
}
const char* mn_seqdoc_handle_name(const mn_seq* s, int h, char* buf) {
    return handle_name(s, h, buf);
}
