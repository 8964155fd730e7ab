/* Scene files: handles, constraints and drags in JSON (docs/scene.md), read with cJSON.
 *
 * A failing field is located in the text by the shared scanner of doc/json_locate.h; a syntax
 * error takes its line from cJSON's error position. */
#include <marionette/scene.h>

#include <cjson/cJSON.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/doc_figures.h"
#include "doc/doc_internal.h"
#include "doc/json_locate.h"

#define NAME_CAP 64

typedef struct sc_handle {
    char name[NAME_CAP];
    mn_handle_type type;
    char joint[128];
    int has_joint;
    char figure[NAME_CAP]; /* the "figure" member, "" when not given */
    mn_vec3 point;
} sc_handle;

typedef mn_doc_figure sc_figure; /* one entry of "figures" (Welman 6.1, 7.3) */

typedef struct sc_con {
    mn_constraint_def def;
    char name[NAME_CAP];
    int has_target;
} sc_con;

enum { DRAG_TO = 0, DRAG_BY, DRAG_PATH, DRAG_FORCE };

typedef struct sc_drag {
    int handle;
    int kind;
    mn_vec3 v;
    int npath;
    mn_vec3* path;
    int relative;
    double weight;
    int priority;
    mn_vec3 start; /* handle position when bound */
    int is_rot;    /* an orientation handle turned toward rot */
    mn_quat rot;
} sc_drag;

struct mn_scene {
    char file[256];
    char* text;
    size_t len;
    int frames, solver, iterations;
    char root[128]; /* the joint the figure is re-rooted at, "" for its own root */
    int nfig;       /* entries of "figures"; 0: a one-figure scene, the figure given apart */
    sc_figure* fig;
    int nh, nc, nd;
    sc_handle* h;
    sc_con* c;
    sc_drag* d;
    int bound;
};

static int find_handle(const mn_scene* sc, const char* name) {
    for (int i = 0; i < sc->nh; i++)
        if (!strcmp(sc->h[i].name, name)) return i;
    return -1;
}
static int find_handle_of(const void* sc, const char* name) {
    return find_handle(sc, name);
}

/* ---- the three arrays ------------------------------------------------------------------ */

static const char* const handle_keys[] = {"name",   "type",    "joint", "point",
                                          "figure", "comment", NULL};

static mn_status read_handle(ctx* x, mn_scene* sc, const cJSON* o, sc_handle* h) {
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    mn_status st = check_keys(x, o, handle_keys);
    if (st != MN_OK) return st;
    if ((st = get_str(x, o, "name", h->name, sizeof h->name, 1, NULL)) != MN_OK) return st;
    if (find_handle(sc, h->name) >= 0) {
        push_key(x, "name");
        return fail(x, MN_ERR_PARSE, "duplicate handle name \"%s\"", h->name);
    }
    if ((st = get_handle_type(x, o, &h->type)) != MN_OK) return st;
    if ((st = get_str(x, o, "joint", h->joint, sizeof h->joint, h->type != MN_HANDLE_COM,
                      &h->has_joint)) != MN_OK)
        return st;
    if ((st = get_str(x, o, "figure", h->figure, sizeof h->figure, 0, NULL)) != MN_OK) return st;
    h->point = mn_v3(0, 0, 0);
    return get_handle_point(x, o, h->type, &h->point);
}

static const char* const figure_keys[] = {"name",     "file", "sequence", "position",
                                          "rotation", "root", "comment",  NULL};

static const char* const con_keys[] = {
    "name", "type",   "handle", "handle2",  "target",  "origin", "normal",  "direction", "polygon",
    "up",   "margin", "weight", "priority", "enabled", "axis",   "comment", NULL};

static int uf_root(int* uf, int i) {
    while (uf[i] != i)
        i = uf[i];
    return i;
}

static mn_status read_con(ctx* x, mn_scene* sc, const cJSON* o, sc_con* c, int* uf) {
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    mn_status st = check_keys(x, o, con_keys);
    if (st != MN_OK) return st;
    mn_constraint_def* d = &c->def;
    *d = mn_constraint_default();
    if ((st = get_str(x, o, "name", c->name, sizeof c->name, 0, NULL)) != MN_OK) return st;
    char type[32];
    if ((st = get_con_type(x, o, type, d)) != MN_OK) return st;
    if ((st = get_handle_ref(x, o, "handle", 1, find_handle_of, sc, &d->handle)) != MN_OK)
        return st;
    if ((st = get_con_common(x, o, type, sc->h[d->handle].type, sc->h[d->handle].name, d)) != MN_OK)
        return st;
    int has = 0;
    switch (d->type) {
    case MN_CON_PIN:
        st = get_v3(x, o, "target", &d->target, &c->has_target);
        break;
    case MN_CON_ORIENT: {
        double q[4];
        st = get_quat(x, o, "target", q, &c->has_target);
        if (st == MN_OK && c->has_target)
            d->target_rot = mn_quat_normalize(mn_q4(q[0], q[1], q[2], q[3]));
        break;
    }
    case MN_CON_PLANE:
    case MN_CON_LINE: {
        const char* dk = d->type == MN_CON_PLANE ? "normal" : "direction";
        if ((st = get_v3(x, o, "origin", &d->origin, &has)) != MN_OK) return st;
        if (!has) return fail(x, MN_ERR_PARSE, "missing member \"origin\"");
        if ((st = get_v3(x, o, dk, &d->dir, &has)) != MN_OK) return st;
        if (!has) return fail(x, MN_ERR_PARSE, "missing member \"%s\"", dk);
        if (!(mn_vec3_norm(d->dir) > 1e-12)) {
            push_key(x, dk);
            return fail(x, MN_ERR_PARSE, "degenerate %s %s (zero length)", type, dk);
        }
        break;
    }
    case MN_CON_EQUAL: {
        d->handle2 = -1;
        if ((st = get_handle_ref(x, o, "handle2", 1, find_handle_of, sc, &d->handle2)) != MN_OK)
            return st;
        push_key(x, "handle2");
        if (sc->h[d->handle2].type == MN_HANDLE_ORIENT)
            return fail(x, MN_ERR_PARSE, "an equality joins point or com handles");
        if (d->handle2 == d->handle) return fail(x, MN_ERR_PARSE, "a handle equal to itself");
        if (uf_root(uf, d->handle) == uf_root(uf, d->handle2))
            return fail(x, MN_ERR_PARSE,
                        "cyclic equalities: \"%s\" and \"%s\" are already equal through others",
                        sc->h[d->handle].name, sc->h[d->handle2].name);
        pop(x);
        uf[uf_root(uf, d->handle)] = uf_root(uf, d->handle2);
        break;
    }
    case MN_CON_BALANCE:
        st = get_con_balance(x, o, d);
        break;
    default:
        break;
    }
    if (st != MN_OK) return st;
    /* members that belong to other types are errors, not silently ignored */
    static const char* const only[][2] = {
        {"target", "pin/orient"}, {"origin", "plane/line"}, {"normal", "plane"},
        {"direction", "line"},    {"handle2", "equal"},     {"polygon", "balance"},
        {"up", "balance"},        {"margin", "balance"},    {"axis", "orient"}};
    return check_con_members(x, o, type, only, sizeof only / sizeof only[0]);
}

static const char* const drag_keys[] = {"handle",   "target", "offset",   "path",    "force",
                                        "relative", "weight", "priority", "comment", NULL};

static mn_status read_drag(ctx* x, mn_scene* sc, const cJSON* o, sc_drag* g) {
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    mn_status st = check_keys(x, o, drag_keys);
    if (st != MN_OK) return st;
    if ((st = get_handle_ref(x, o, "handle", 1, find_handle_of, sc, &g->handle)) != MN_OK)
        return st;
    g->weight = 1;
    g->priority = 1;
    g->relative = 1;
    if ((st = get_num(x, o, "weight", &g->weight, 1e-12, 1e12)) != MN_OK) return st;
    if ((st = get_int(x, o, "priority", &g->priority, 0, 1000)) != MN_OK) return st;
    if (sc->h[g->handle].type == MN_HANDLE_ORIENT) {
        /* an orientation handle is turned toward a fixed target quaternion */
        static const char* const others[] = {"offset", "path", "relative", "force"};
        for (int k = 0; k < 4; k++)
            if (cJSON_GetObjectItemCaseSensitive(o, others[k])) {
                push_key(x, others[k]);
                return fail(x, MN_ERR_PARSE,
                            "an orientation drag takes a \"target\" quaternion only");
            }
        double q[4];
        int has = 0;
        if ((st = get_quat(x, o, "target", q, &has)) != MN_OK) return st;
        if (!has) return fail(x, MN_ERR_PARSE, "missing member \"target\" [w, x, y, z]");
        g->is_rot = 1;
        g->rot = mn_quat_normalize(mn_q4(q[0], q[1], q[2], q[3]));
        g->kind = DRAG_TO;
        return MN_OK;
    }
    if ((st = get_bool(x, o, "relative", &g->relative)) != MN_OK) return st;
    int ht = 0, ho = 0, hf = 0;
    if ((st = get_v3(x, o, "target", &g->v, &ht)) != MN_OK) return st;
    if ((st = get_v3(x, o, "offset", &g->v, &ho)) != MN_OK) return st;
    if ((st = get_v3(x, o, "force", &g->v, &hf)) != MN_OK) return st;
    const cJSON* p = cJSON_GetObjectItemCaseSensitive(o, "path");
    if (ht + ho + hf + (p != NULL) != 1)
        return fail(x, MN_ERR_PARSE,
                    "a drag has exactly one of \"target\", \"offset\", \"path\", \"force\"");
    /* an applied force on the handle (Welman 4.1.1, 5.2.3): g_a = J_h^T f each frame */
    g->kind = ht ? DRAG_TO : ho ? DRAG_BY : hf ? DRAG_FORCE : DRAG_PATH;
    if (p) {
        push_key(x, "path");
        int n = cJSON_IsArray(p) ? cJSON_GetArraySize(p) : 0;
        if (n < 1) return fail(x, MN_ERR_PARSE, "expected a non-empty array of [x, y, z] points");
        if (n > 100000) return fail(x, MN_ERR_PARSE, "more than 100000 points");
        g->path = malloc(sizeof(mn_vec3) * (size_t)n);
        if (!g->path)
            return mn_error_set(x->err, MN_ERR_NOMEM, x->file, 0, "path", "out of memory");
        const cJSON* e = p->child; /* walked in turn: cJSON_GetArrayItem is linear in k */
        for (int k = 0; k < n; k++, e = e->next) {
            double a[3];
            int ok = cJSON_IsArray(e) && cJSON_GetArraySize(e) == 3;
            for (int j = 0; ok && j < 3; j++) {
                const cJSON* v = cJSON_GetArrayItem(e, j);
                ok = cJSON_IsNumber(v) && isfinite(v->valuedouble);
                if (ok) a[j] = v->valuedouble;
            }
            if (!ok) {
                push_index(x, k);
                return fail(x, MN_ERR_PARSE, "expected [x, y, z] with finite numbers");
            }
            g->path[k] = mn_v3(a[0], a[1], a[2]);
        }
        g->npath = n;
        pop(x);
    } else if (cJSON_GetObjectItemCaseSensitive(o, "relative")) {
        push_key(x, "relative");
        return fail(x, MN_ERR_PARSE, "\"relative\" applies to a path only");
    }
    return MN_OK;
}

static const char* const root_keys[] = {"solver",      "frames", "iterations", "handles", "root",
                                        "constraints", "drags",  "figures",    "comment", NULL};

void mn_scene_destroy(mn_scene* sc) {
    if (!sc) return;
    for (int i = 0; i < sc->nd; i++)
        free(sc->d[i].path);
    free(sc->h);
    free(sc->c);
    free(sc->d);
    free(sc->fig);
    free(sc->text);
    free(sc);
}

/* Reads one of the arrays: count its objects and call fn on each. */
static const cJSON* get_array(ctx* x, const cJSON* root, const char* key, int* n, mn_status* st) {
    const cJSON* a = cJSON_GetObjectItemCaseSensitive(root, key);
    *n = 0;
    *st = MN_OK;
    if (!a) return NULL;
    if ((*st = enter_array(x, a, key, 4096, NULL, n)) != MN_OK) return cJSON_IsArray(a) ? a : NULL;
    pop(x);
    return a;
}

static mn_status parse(ctx* x, mn_scene* sc, const cJSON* root) {
    if (!cJSON_IsObject(root)) return fail(x, MN_ERR_PARSE, "a scene is a JSON object");
    mn_status st = check_keys(x, root, root_keys);
    if (st != MN_OK) return st;
    char solver[32];
    int has = 0;
    sc->solver = -1;
    if ((st = get_str(x, root, "solver", solver, sizeof solver, 0, &has)) != MN_OK) return st;
    if (has) {
        sc->solver = mn_csolver_parse(solver);
        if (sc->solver < 0) {
            push_key(x, "solver");
            return fail(x, MN_ERR_PARSE, "unknown solver \"%s\" (lagrange, ccd, dls)", solver);
        }
    }
    sc->frames = 1;
    if ((st = get_int(x, root, "frames", &sc->frames, 1, MN_SCENE_MAX_FRAMES)) != MN_OK) return st;
    if ((st = get_int(x, root, "iterations", &sc->iterations, 1, 100000)) != MN_OK) return st;
    if ((st = get_str(x, root, "root", sc->root, sizeof sc->root, 0, &has)) != MN_OK) return st;
    if (has && !sc->root[0]) {
        push_key(x, "root");
        return fail(x, MN_ERR_PARSE, "an empty joint name");
    }
    int nf;
    const cJSON* af;
    if ((st = mn_doc_figures_array(x, root, &af, &nf)) != MN_OK) return st;
    if (af && sc->root[0]) {
        push_key(x, "root");
        return fail(x, MN_ERR_PARSE, "with \"figures\", each figure names its own \"root\"");
    }
    if (af) {
        if ((st = mn_doc_read_figures(x, af, nf, figure_keys, 1, &sc->fig)) != MN_OK) return st;
        sc->nfig = nf;
    }
    int nh, nc, nd;
    const cJSON* ah = get_array(x, root, "handles", &nh, &st);
    if (st != MN_OK) return st;
    const cJSON* ac = get_array(x, root, "constraints", &nc, &st);
    if (st != MN_OK) return st;
    const cJSON* ad = get_array(x, root, "drags", &nd, &st);
    if (st != MN_OK) return st;
    sc->h = calloc((size_t)(nh > 0 ? nh : 1), sizeof(sc_handle));
    sc->c = calloc((size_t)(nc > 0 ? nc : 1), sizeof(sc_con));
    sc->d = calloc((size_t)(nd > 0 ? nd : 1), sizeof(sc_drag));
    int* uf = malloc(sizeof(int) * (size_t)(nh > 0 ? nh : 1));
    if (!sc->h || !sc->c || !sc->d || !uf) {
        free(uf);
        return mn_error_set(x->err, MN_ERR_NOMEM, x->file, 0, "scene", "out of memory");
    }
    for (int i = 0; i < nh; i++)
        uf[i] = i;
    const cJSON* it;
    int i = 0;
    push_key(x, "handles");
    cJSON_ArrayForEach(it, ah) {
        push_index(x, i);
        if ((st = read_handle(x, sc, it, &sc->h[i])) != MN_OK) break;
        pop(x);
        sc->nh = ++i;
    }
    if (st == MN_OK) {
        pop(x);
        push_key(x, "constraints");
        i = 0;
        cJSON_ArrayForEach(it, ac) {
            push_index(x, i);
            if ((st = read_con(x, sc, it, &sc->c[i], uf)) != MN_OK) break;
            pop(x);
            sc->nc = ++i;
        }
    }
    if (st == MN_OK) {
        pop(x);
        push_key(x, "drags");
        i = 0;
        cJSON_ArrayForEach(it, ad) {
            push_index(x, i);
            sc->nd = i + 1; /* counted now so a partly read path is freed */
            if ((st = read_drag(x, sc, it, &sc->d[i])) != MN_OK) break;
            pop(x);
            i++;
        }
    }
    free(uf);
    return st;
}

mn_status mn_scene_read_mem(const char* text, size_t len, const char* name, mn_scene** out,
                            mn_error* err) {
    mn_error_clear(err);
    if (!out) return mn_error_set(err, MN_ERR_ARG, name, 0, "scene", "NULL output");
    *out = NULL;
    if (!text) return mn_error_set(err, MN_ERR_ARG, name, 0, "scene", "NULL text");
    const char* fname = name ? name : "scene";
    cJSON* root = parse_json(text, len, fname, err);
    if (!root) return MN_ERR_PARSE;
    mn_scene* sc = calloc(1, sizeof *sc);
    char* copy = malloc(len + 1);
    if (!sc || !copy) {
        free(sc);
        free(copy);
        cJSON_Delete(root);
        return mn_error_set(err, MN_ERR_NOMEM, fname, 0, "scene", "out of memory");
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    sc->text = copy;
    sc->len = len;
    snprintf(sc->file, sizeof sc->file, "%s", fname);
    ctx x = {sc->file, copy, len, {{0}}, 0, err, NULL, NULL};
    mn_status st = parse(&x, sc, root);
    cJSON_Delete(root);
    if (st != MN_OK) {
        mn_scene_destroy(sc);
        return st;
    }
    *out = sc;
    return MN_OK;
}

int mn_scene_frames(const mn_scene* sc) {
    return sc ? sc->frames : 0;
}
int mn_scene_solver(const mn_scene* sc) {
    return sc ? sc->solver : -1;
}
int mn_scene_iterations(const mn_scene* sc) {
    return sc ? sc->iterations : 0;
}

const char* mn_scene_root(const mn_scene* sc) {
    return sc && sc->root[0] ? sc->root : NULL;
}

/* ---- binding to a figure --------------------------------------------------------------- */

/* A library error at bind time, moved onto the scene field it came from. */
static mn_status rebind_error(ctx* x, const char* array, int i, const mn_error* e) {
    x->depth = 0;
    push_key(x, array);
    push_index(x, i);
    if (e->field[0] && strcmp(e->field, "constraints") && strcmp(e->field, "handles")) {
        push_key(x, e->field);
    }
    const char* msg = e->message;
    const char* colon = strstr(msg, ": ");
    if (colon && e->field[0] && !strncmp(msg, e->field, strlen(e->field))) msg = colon + 2;
    return fail(x, e->status ? e->status : MN_ERR_ARG, "%s", msg);
}

mn_status mn_scene_root_joint(const mn_scene* sc, int figure, const mn_model* m, int* joint,
                              mn_error* err) {
    mn_error_clear(err);
    if (!sc || !m || !joint || figure < -1 || figure >= sc->nfig)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "scene", "NULL argument or no such figure");
    *joint = -1;
    const char* name = figure < 0 ? sc->root : sc->fig[figure].root;
    if (!name[0]) return MN_OK;
    *joint = mn_model_find_joint(m, name);
    if (*joint >= 0) return MN_OK;
    ctx x = {sc->file, sc->text, sc->len, {{0}}, 0, err, NULL, NULL};
    if (figure >= 0) {
        push_key(&x, "figures");
        push_index(&x, figure);
    }
    push_key(&x, "root");
    char hint[256];
    return fail(&x, MN_ERR_NOTFOUND, "no joint named \"%s\" in %s%s", name,
                m->name ? m->name : "the figure", mn_model_joint_hint(m, name, hint, sizeof hint));
}

int mn_scene_figure_count(const mn_scene* sc) {
    return sc ? sc->nfig : 0;
}

const char* mn_scene_figure_name(const mn_scene* sc, int i) {
    return sc && i >= 0 && i < sc->nfig ? sc->fig[i].name : NULL;
}

const char* mn_scene_figure_file(const mn_scene* sc, int i) {
    return sc && i >= 0 && i < sc->nfig && sc->fig[i].file[0] ? sc->fig[i].file : NULL;
}

const char* mn_scene_figure_sequence(const mn_scene* sc, int i) {
    return sc && i >= 0 && i < sc->nfig && sc->fig[i].sequence[0] ? sc->fig[i].sequence : NULL;
}

mn_xform mn_scene_figure_place(const mn_scene* sc, int i) {
    return sc && i >= 0 && i < sc->nfig ? sc->fig[i].place : mn_xform_identity();
}

mn_status mn_scene_figure_error(const mn_scene* sc, int i, const char* field, const mn_error* cause,
                                mn_error* err) {
    if (!sc || i < 0 || i >= sc->nfig || !cause)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "scene", "no such figure");
    mn_error c = *cause;
    ctx x = {sc->file, sc->text, sc->len, {{0}}, 0, err, NULL, NULL};
    push_key(&x, "figures");
    push_index(&x, i);
    push_key(&x, field);
    return fail(&x, c.status ? c.status : MN_ERR_ARG, "%s", c.message);
}

/* The figure and the joint name a handle's "figure" and "joint" name: "figure/joint", or a
 * "figure" member, or the only figure. -1 with the error set when it names none. */
static int handle_figure(ctx* x, const mn_scene* sc, int i, const char** joint) {
    const sc_handle* h = &sc->h[i];
    *joint = h->joint;
    if (sc->nfig == 0) return 0;
    int f =
        mn_doc_joint_figure(sc->fig, sc->nfig, h->has_joint ? h->joint : NULL, h->figure, joint);
    if (f >= 0) return f;
    x->depth = 0;
    push_key(x, "handles");
    push_index(x, i);
    if (f == -1) {
        push_key(x, "figure");
        fail(x, MN_ERR_NOTFOUND, "no figure named \"%s\"", h->figure);
        return -1;
    }
    push_key(x, h->has_joint ? "joint" : "figure");
    fail(x, MN_ERR_NOTFOUND, "which figure? name it as \"figure/joint\" or with \"figure\"");
    return -1;
}

mn_status mn_scene_bind(mn_scene* sc, const mn_model* m, mn_data* d, mn_csys** out, mn_error* err) {
    mn_figure fig = {m, d};
    return mn_scene_bind_figures(sc, m && d ? &fig : NULL, 1, out, err);
}

mn_status mn_scene_bind_figures(mn_scene* sc, const mn_figure* figs, int nfig, mn_csys** out,
                                mn_error* err) {
    return mn_scene_bind_spare(sc, figs, nfig, 0, 0, out, err);
}

mn_status mn_scene_bind_spare(mn_scene* sc, const mn_figure* figs, int nfig, int spare_handles,
                              int spare_constraints, mn_csys** out, mn_error* err) {
    mn_error_clear(err);
    if (!out) return mn_error_set(err, MN_ERR_ARG, NULL, 0, "scene", "NULL output");
    *out = NULL;
    if (!sc || !figs) return mn_error_set(err, MN_ERR_ARG, NULL, 0, "scene", "NULL argument");
    for (int f = 0; f < nfig; f++)
        if (!figs[f].model || !figs[f].data)
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "scene", "NULL argument");
    if (nfig != (sc->nfig ? sc->nfig : 1))
        return mn_error_set(err, MN_ERR_ARG, sc->file, 0, "figures",
                            "the scene has %d figures, %d given", sc->nfig ? sc->nfig : 1, nfig);
    ctx x = {sc->file, sc->text, sc->len, {{0}}, 0, err, NULL, NULL};
    int joints[4096], hfig[4096];
    for (int i = 0; i < sc->nh; i++) {
        joints[i] = -1;
        const char* name;
        hfig[i] = handle_figure(&x, sc, i, &name);
        if (hfig[i] < 0) return err ? err->status : MN_ERR_NOTFOUND;
        if (!sc->h[i].has_joint) continue;
        const mn_model* m = figs[hfig[i]].model;
        joints[i] = mn_model_find_joint(m, name);
        if (joints[i] < 0) {
            x.depth = 0;
            push_key(&x, "handles");
            push_index(&x, i);
            push_key(&x, "joint");
            char hint[256];
            return fail(&x, MN_ERR_NOTFOUND, "no joint named \"%s\" in %s%s", name,
                        sc->nfig  ? sc->fig[hfig[i]].name
                        : m->name ? m->name
                                  : "the figure",
                        mn_model_joint_hint(m, name, hint, sizeof hint));
        }
    }
    if (spare_handles < 0 || spare_constraints < 0 || spare_handles > 4096 ||
        spare_constraints > 4096)
        return mn_error_set(err, MN_ERR_ARG, sc->file, 0, "scene",
                            "spare handles and constraints: 0 to 4096 each");
    mn_csys_def def = {sc->nh + spare_handles, sc->nc + spare_constraints};
    if (def.max_handles < 1) def.max_handles = 1;
    if (def.max_constraints < 1) def.max_constraints = 1;
    mn_error e;
    mn_csys* s = mn_csys_create(figs, nfig, &def, &e);
    if (!s) return mn_error_set(err, e.status, sc->file, 0, e.field, "%s", e.message);
    for (int i = 0; i < sc->nh; i++) {
        mn_handle_def hd = mn_handle_default();
        hd.type = sc->h[i].type;
        hd.figure = hfig[i];
        hd.joint = joints[i];
        hd.point = sc->h[i].point;
        hd.name = sc->h[i].name;
        if (mn_csys_add_handle(s, &hd, &e) < 0) {
            mn_csys_destroy(s);
            return rebind_error(&x, "handles", i, &e);
        }
    }
    for (int i = 0; i < sc->nc; i++) {
        mn_constraint_def cd = sc->c[i].def;
        cd.name = sc->c[i].name[0] ? sc->c[i].name : NULL;
        if (!sc->c[i].has_target && cd.type == MN_CON_PIN)
            mn_csys_handle_value(s, cd.handle, &cd.target, NULL);
        if (!sc->c[i].has_target && cd.type == MN_CON_ORIENT) {
            mn_mat3 R;
            mn_csys_handle_value(s, cd.handle, NULL, &R);
            cd.target_rot = mn_quat_from_mat3(&R);
        }
        if (mn_csys_add_constraint(s, &cd, &e) < 0) {
            mn_csys_destroy(s);
            return rebind_error(&x, "constraints", i, &e);
        }
    }
    for (int i = 0; i < sc->nd; i++)
        mn_csys_handle_value(s, sc->d[i].handle, &sc->d[i].start, NULL);
    sc->bound = 1;
    *out = s;
    return MN_OK;
}

mn_status mn_scene_apply_frame(const mn_scene* sc, mn_csys* s, int frame) {
    if (!sc || !s || !sc->bound || frame < 0 || frame >= sc->frames) return MN_ERR_ARG;
    for (int i = 0; i < sc->nd; i++) {
        const sc_drag* g = &sc->d[i];
        if (g->is_rot) {
            mn_status st = mn_csys_drag_rot(s, g->handle, g->rot, g->weight, g->priority);
            if (st != MN_OK) return st;
            continue;
        }
        if (g->kind == DRAG_FORCE) {
            mn_status st = mn_csys_push(s, g->handle, g->v);
            if (st != MN_OK) return st;
            continue;
        }
        mn_vec3 t;
        if (g->kind == DRAG_TO)
            t = g->v;
        else if (g->kind == DRAG_BY)
            t = mn_vec3_add(g->start, g->v);
        else {
            double u = sc->frames > 1 ? (double)frame / (sc->frames - 1) : 1.0;
            double sp = u * (g->npath - 1);
            int k = (int)floor(sp);
            if (k >= g->npath - 1) k = g->npath > 1 ? g->npath - 2 : 0;
            mn_vec3 p =
                g->npath > 1 ? mn_vec3_lerp(g->path[k], g->path[k + 1], sp - k) : g->path[0];
            t = g->relative ? mn_vec3_add(g->start, p) : p;
        }
        mn_status st = mn_csys_drag(s, g->handle, t, g->weight, g->priority);
        if (st != MN_OK) return st;
    }
    return MN_OK;
}
