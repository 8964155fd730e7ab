/* Constraints over frame ranges and in-betweens that keep them (Welman 6.3, Fig. 6.5),
 * animated constraints and balance over a sequence (Welman 7.2.1).
 *
 * The thesis's in-betweens interpolate joint angles only, so a foot locked at both keys
 * leaves its place between them (Fig. 6.5); its editor fixed that "admittedly ad hoc".
 * Here each frame is interpolated, then every constraint active at that frame is
 * re-satisfied by the constrain layer's solver (Lagrange by default, Welman 5.2), starting
 * from the previous frame's solution carried forward by the change of the plain in-between,
 * so corrections persist from frame to frame instead of being recomputed from scratch (no
 * pops, and one or two Newton steps per frame). */
#include <marionette/layers.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_internal.h"

/* ---- handles and constraints of the sequence --------------------------------------------- */

/* A scratch constraint system over a fresh data of the model, holding the sequence's
 * handles and room for extra_h more and extra_c constraints (never the sequence's own:
 * sized by them, n additions cost n^2): the constrain layer checks definitions. */
typedef struct scratch {
    int n;
    mn_data* d[MN_SEQ_MAX_FIGURES];
    mn_csys* cs;
} scratch;

static void scratch_free(scratch* x) {
    mn_csys_destroy(x->cs);
    for (int f = 0; f < x->n; f++)
        mn_data_destroy(x->d[f]);
}

static mn_status scratch_make(const mn_seq* s, int extra_h, int extra_c, scratch* x,
                              mn_error* err) {
    memset(x, 0, sizeof *x);
    mn_figure fig[MN_SEQ_MAX_FIGURES];
    for (int f = 0; f < mn_seq_nfig(s); f++) {
        const mn_model* m = mn_seq_fig(s, f)->m;
        x->d[x->n++] = mn_data_create(m, 0);
        if (!x->d[f]) {
            scratch_free(x);
            return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "sequence", "out of memory");
        }
        fig[f].model = m;
        fig[f].data = x->d[f];
    }
    mn_csys_def cd = mn_csys_default();
    cd.max_handles = s->nh + extra_h;
    cd.max_constraints = extra_c;
    if (cd.max_handles < 1) cd.max_handles = 1;
    if (cd.max_constraints < 1) cd.max_constraints = 1;
    x->cs = mn_csys_create(fig, x->n, &cd, err);
    if (!x->cs) {
        scratch_free(x);
        return err ? err->status : MN_ERR_NOMEM;
    }
    for (int i = 0; i < s->nh; i++)
        if (mn_csys_add_handle(x->cs, &s->h[i], err) < 0) {
            scratch_free(x);
            return err ? err->status : MN_ERR_ARG;
        }
    return MN_OK;
}

/* The sequence's handle and constraint arrays grow as needed (editing allocates; sampling
 * and solving do not), up to MAX_ITEMS each. Names point into the arrays: re-pointed after
 * a move. */
#define MAX_ITEMS 4096

static int room_for_handle(mn_seq* s) {
    if (s->nh < s->max_h) return 1;
    if (s->max_h >= MAX_ITEMS) return 0;
    int cap = s->max_h ? 2 * s->max_h : 8;
    if (cap > MAX_ITEMS) cap = MAX_ITEMS;
    mn_handle_def* h = realloc(s->h, sizeof *h * (size_t)(cap + 1));
    if (!h) return 0;
    s->h = h;
    char(*nm)[64] = realloc(s->h_name, sizeof *nm * (size_t)(cap + 1));
    if (!nm) return 0;
    s->h_name = nm;
    for (int i = 0; i < s->nh; i++)
        if (s->h[i].name) s->h[i].name = s->h_name[i];
    s->max_h = cap;
    return 1;
}

static int room_for_constraint(mn_seq* s) {
    if (s->nc < s->max_c) return 1;
    if (s->max_c >= MAX_ITEMS) return 0;
    int cap = s->max_c ? 2 * s->max_c : 8;
    if (cap > MAX_ITEMS) cap = MAX_ITEMS;
    seq_con* c = realloc(s->c, sizeof *c * (size_t)(cap + 1));
    if (!c) return 0;
    s->c = c;
    for (int i = 0; i < s->nc; i++)
        if (s->c[i].def.con.name) s->c[i].def.con.name = s->c[i].name;
    s->max_c = cap;
    return 1;
}

int mn_seq_add_handle(mn_seq* s, const mn_handle_def* def, mn_error* err) {
    if (!s || !def) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "handle", "no sequence or handle");
        return -1;
    }
    if (!room_for_handle(s)) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "handles",
                     "more than %d handles, or out of memory", MAX_ITEMS);
        return -1;
    }
    if (def->figure < 0 || def->figure >= mn_seq_nfig(s)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "figure", "no figure %d (the sequence has %d)",
                     def->figure, mn_seq_nfig(s));
        return -1;
    }
    if (def->name && mn_seq_find_handle(s, def->name) >= 0) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "name", "duplicate handle name '%s'", def->name);
        return -1;
    }
    scratch x;
    if (scratch_make(s, 1, 0, &x, err) != MN_OK) return -1;
    int ok = mn_csys_add_handle(x.cs, def, err) >= 0;
    scratch_free(&x);
    if (!ok) return -1;
    int i = s->nh++;
    s->h[i] = *def;
    s->h_name[i][0] = 0;
    if (def->name) {
        strncpy(s->h_name[i], def->name, sizeof s->h_name[i] - 1);
        s->h_name[i][sizeof s->h_name[i] - 1] = 0;
        s->h[i].name = s->h_name[i];
    }
    return i;
}

int mn_seq_handle_count(const mn_seq* s) {
    return s ? s->nh : 0;
}
const mn_handle_def* mn_seq_handle(const mn_seq* s, int h) {
    return s && h >= 0 && h < s->nh ? &s->h[h] : NULL;
}
int mn_seq_find_handle(const mn_seq* s, const char* name) {
    if (!s || !name) return -1;
    for (int i = 0; i < s->nh; i++)
        if (s->h[i].name && !strcmp(s->h[i].name, name)) return i;
    return -1;
}

mn_status mn_seq_set_figures(mn_seq* s, int n, const mn_seq* const* others, mn_error* err) {
    if (!s || n < 1 || n > MN_SEQ_MAX_FIGURES || (n > 1 && !others))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figures", "1 to %d figures",
                            MN_SEQ_MAX_FIGURES);
    if (s->nh > 0)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figures",
                            "the figures are set before any handle is added");
    for (int f = 1; f < n; f++) {
        const mn_seq* o = others[f - 1];
        if (!o || o == s || o->nkey == 0 || o->nfig > 1)
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figures",
                                "figure %d: no sequence, a sequence without keys, or one of "
                                "several figures itself",
                                f);
        for (int g = 1; g < f; g++)
            if (others[g - 1] == o)
                return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figures",
                                    "figure %d is animated by the sequence of figure %d", f, g);
    }
    memset(s->fig, 0, sizeof s->fig);
    for (int f = 1; f < n; f++)
        s->fig[f] = others[f - 1];
    s->nfig = n > 1 ? n : 0;
    return MN_OK;
}

int mn_seq_figure_count(const mn_seq* s) {
    return s ? mn_seq_nfig(s) : 0;
}
const mn_seq* mn_seq_figure(const mn_seq* s, int f) {
    return s && f >= 0 && f < mn_seq_nfig(s) ? mn_seq_fig(s, f) : NULL;
}

/* One figure: its key frames (its solver runs in them). Several: the output frames each
 * figure's time warp covers (layers.h; its key frames without one), the clock they share. */
double mn_seq_figures_start(const mn_seq* s) {
    if (!s) return 0;
    if (mn_seq_nfig(s) == 1) return mn_seq_start(s);
    double t = mn_seq_out_start(s);
    for (int f = 1; f < mn_seq_nfig(s); f++)
        if (mn_seq_out_start(s->fig[f]) < t) t = mn_seq_out_start(s->fig[f]);
    return t;
}
double mn_seq_figures_end(const mn_seq* s) {
    if (!s) return 0;
    if (mn_seq_nfig(s) == 1) return mn_seq_end(s);
    double t = mn_seq_out_end(s);
    for (int f = 1; f < mn_seq_nfig(s); f++)
        if (mn_seq_out_end(s->fig[f]) > t) t = mn_seq_out_end(s->fig[f]);
    return t;
}

/* The frame of figure f's own keys at frame t of a solver: several figures share the output
 * frames, each figure's time warp takes them to its own (layers.h); one figure is solved in
 * its own frames (the bake warps them first). */
static double figure_frame(const mn_seq* s, int f, double t) {
    return mn_seq_nfig(s) > 1 ? mn_seq_warp(mn_seq_fig(s, f), t) : t;
}

mn_seq_constraint_def mn_seq_constraint_default(void) {
    mn_seq_constraint_def d;
    memset(&d, 0, sizeof d);
    d.con = mn_constraint_default();
    d.start = -HUGE_VAL;
    d.end = HUGE_VAL;
    d.lock = 0;
    d.target_interp = MN_INTERP_LINEAR;
    return d;
}

int mn_seq_add_constraint(mn_seq* s, const mn_seq_constraint_def* def, mn_error* err) {
    if (!s || !def) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "constraint", "no sequence or constraint");
        return -1;
    }
    if (!room_for_constraint(s)) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "constraints",
                     "more than %d constraints, or out of memory", MAX_ITEMS);
        return -1;
    }
    if (isnan(def->start) || isnan(def->end) || def->end < def->start) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "frames",
                     "frame range [%g, %g] is empty or not a number", def->start, def->end);
        return -1;
    }
    if (def->target_interp != MN_INTERP_LINEAR && def->target_interp != MN_INTERP_CATMULL_ROM) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "interpolation",
                     "target keys are interpolated linear or catmull-rom");
        return -1;
    }
    if (def->lock && def->con.type != MN_CON_PIN && def->con.type != MN_CON_ORIENT) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "lock", "only pin and orient constraints lock");
        return -1;
    }
    if (def->con.name && mn_seq_find_constraint(s, def->con.name) >= 0) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "name", "duplicate constraint name '%s'",
                     def->con.name);
        return -1;
    }
    scratch x;
    if (scratch_make(s, 0, 1, &x, err) != MN_OK) return -1;
    int ok = mn_csys_add_constraint(x.cs, &def->con, err) >= 0;
    scratch_free(&x);
    if (!ok) return -1;
    seq_con* c = &s->c[s->nc++];
    memset(c, 0, sizeof *c);
    c->def = *def;
    if (def->con.name) {
        strncpy(c->name, def->con.name, sizeof c->name - 1);
        c->def.con.name = c->name;
    }
    if (c->def.con.type == MN_CON_ORIENT)
        c->def.con.target_rot = mn_quat_normalize(c->def.con.target_rot);
    return s->nc - 1;
}

mn_status mn_seq_remove_constraint(mn_seq* s, int c) {
    if (!s || c < 0 || c >= s->nc) return MN_ERR_ARG;
    free(s->c[c].tk);
    memmove(&s->c[c], &s->c[c + 1], sizeof(seq_con) * (size_t)(s->nc - 1 - c));
    s->nc--;
    /* a name points into its own slot */
    for (int i = c; i < s->nc; i++)
        if (s->c[i].def.con.name) s->c[i].def.con.name = s->c[i].name;
    return MN_OK;
}

int mn_seq_constraint_count(const mn_seq* s) {
    return s ? s->nc : 0;
}
const mn_seq_constraint_def* mn_seq_constraint(const mn_seq* s, int c) {
    return s && c >= 0 && c < s->nc ? &s->c[c].def : NULL;
}
int mn_seq_find_constraint(const mn_seq* s, const char* name) {
    if (!s || !name) return -1;
    for (int i = 0; i < s->nc; i++)
        if (s->c[i].def.con.name && !strcmp(s->c[i].def.con.name, name)) return i;
    return -1;
}

int mn_seq_add_balance(mn_seq* s, const mn_vec3* polygon, int npolygon, mn_vec3 up, double margin,
                       double start, double end, mn_error* err) {
    if (!s || !polygon || npolygon < 3 || npolygon > MN_MAX_POLYGON) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "polygon", "a support polygon has 3 to %d vertices",
                     MN_MAX_POLYGON);
        return -1;
    }
    if (!room_for_handle(s) || !room_for_constraint(s)) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "constraints",
                     "more than %d constraints, or out of memory", MAX_ITEMS);
        return -1;
    }
    mn_handle_def h = mn_handle_default();
    h.type = MN_HANDLE_COM;
    h.joint = -1;
    h.name = NULL;
    mn_seq_constraint_def c = mn_seq_constraint_default();
    c.con.type = MN_CON_BALANCE;
    c.con.npolygon = npolygon;
    memcpy(c.con.polygon, polygon, sizeof(mn_vec3) * (size_t)npolygon);
    c.con.up = up;
    c.con.margin = margin;
    c.start = start;
    c.end = end;
    /* check the constraint against a scratch system before anything is added */
    scratch x;
    if (scratch_make(s, 1, 1, &x, err) != MN_OK) return -1;
    int hi = mn_csys_add_handle(x.cs, &h, err);
    c.con.handle = hi;
    int ok = hi >= 0 && mn_csys_add_constraint(x.cs, &c.con, err) >= 0;
    scratch_free(&x);
    if (!ok) return -1;
    c.con.handle = mn_seq_add_handle(s, &h, err);
    if (c.con.handle < 0) return -1;
    int ci = mn_seq_add_constraint(s, &c, err);
    if (ci < 0) s->nh--; /* undo the handle: nothing added on failure */
    return ci;
}

/* ---- animated targets (Welman 7.2.1) -------------------------------------------------------- */

mn_status mn_seq_set_target_key(mn_seq* s, int c, const mn_target_key* key, mn_error* err) {
    if (!s || c < 0 || c >= s->nc || !key)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "constraint", "no constraint %d", c);
    seq_con* sc = &s->c[c];
    mn_target_key k = *key;
    if (!isfinite(k.frame))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "frame", "target key frame is not finite");
    switch (sc->def.con.type) {
    case MN_CON_PIN:
        if (!mn_vec3_isfinite(k.pos))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "target", "target is not finite");
        break;
    case MN_CON_PLANE:
    case MN_CON_LINE:
        if (!mn_vec3_isfinite(k.pos))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "origin", "origin is not finite");
        if (!mn_vec3_isfinite(k.dir) || !(mn_vec3_norm(k.dir) > 1e-12))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0,
                                sc->def.con.type == MN_CON_PLANE ? "normal" : "direction",
                                "degenerate %s (zero length)",
                                sc->def.con.type == MN_CON_PLANE ? "normal" : "direction");
        break;
    case MN_CON_ORIENT:
        if (!mn_quat_isfinite(k.rot) || !(mn_quat_norm(k.rot) > 1e-12))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "target",
                                "target quaternion is zero or not finite");
        k.rot = mn_quat_normalize(k.rot);
        break;
    default:
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "type",
                            "a %s constraint has no target to animate",
                            mn_constraint_type_name(sc->def.con.type));
    }
    int i = 0;
    while (i < sc->ntk && sc->tk[i].frame < k.frame)
        i++;
    if (i < sc->ntk && sc->tk[i].frame == k.frame) {
        sc->tk[i] = k;
        return MN_OK;
    }
    if (sc->ntk == sc->cap_tk) {
        int cap = sc->cap_tk ? 2 * sc->cap_tk : 8;
        mn_target_key* t = realloc(sc->tk, sizeof *t * (size_t)cap);
        if (!t) return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "target", "out of memory");
        sc->tk = t;
        sc->cap_tk = cap;
    }
    memmove(sc->tk + i + 1, sc->tk + i, sizeof *sc->tk * (size_t)(sc->ntk - i));
    sc->tk[i] = k;
    sc->ntk++;
    return MN_OK;
}

int mn_seq_target_key_count(const mn_seq* s, int c) {
    return s && c >= 0 && c < s->nc ? s->c[c].ntk : 0;
}
const mn_target_key* mn_seq_target_key(const mn_seq* s, int c, int k) {
    if (!s || c < 0 || c >= s->nc || k < 0 || k >= s->c[c].ntk) return NULL;
    return &s->c[c].tk[k];
}

/* Catmull-Rom through p0..p3 on segment p1-p2 with unequal key spacing (the Kochanek-
 * Bartels tangents with tension, continuity and bias 0, as for the joints). */
static mn_vec3 cr_vec(mn_vec3 p0, mn_vec3 p1, mn_vec3 p2, mn_vec3 p3, double d0, double d1,
                      double d2, double u) {
    mn_vec3 m1 =
        mn_vec3_scale(mn_vec3_add(mn_vec3_sub(p1, p0), mn_vec3_sub(p2, p1)), d1 / (d0 + d1));
    mn_vec3 m2 =
        mn_vec3_scale(mn_vec3_add(mn_vec3_sub(p2, p1), mn_vec3_sub(p3, p2)), d1 / (d1 + d2));
    double u2 = u * u, u3 = u2 * u;
    double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
    return mn_v3(h00 * p1.x + h10 * m1.x + h01 * p2.x + h11 * m2.x,
                 h00 * p1.y + h10 * m1.y + h01 * p2.y + h11 * m2.y,
                 h00 * p1.z + h10 * m1.z + h01 * p2.z + h11 * m2.z);
}

static mn_quat align(mn_quat q, mn_quat ref) {
    return mn_quat_dot(q, ref) < 0 ? mn_q4(-q.w, -q.x, -q.y, -q.z) : q;
}

/* Slerp without the shorter-arc flip. */
static mn_quat slerp_noflip(mn_quat a, mn_quat b, double u) {
    double wa, wb;
    mn_anim_slerp_weights(mn_quat_dot(a, b), u, &wa, &wb);
    return mn_quat_normalize(
        mn_q4(wa * a.w + wb * b.w, wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z));
}

mn_status mn_seq_target_at(const mn_seq* s, int c, double frame, mn_target_key* out) {
    if (!s || c < 0 || c >= s->nc || !out || !isfinite(frame) || s->c[c].ntk == 0)
        return MN_ERR_ARG;
    const seq_con* sc = &s->c[c];
    const mn_target_key* t = sc->tk;
    int n = sc->ntk;
    if (frame <= t[0].frame || n == 1) {
        *out = t[0];
    } else if (frame >= t[n - 1].frame) {
        *out = t[n - 1];
    } else {
        int k = 0;
        while (t[k + 1].frame <= frame)
            k++;
        double d1 = t[k + 1].frame - t[k].frame, u = (frame - t[k].frame) / d1;
        out->frame = frame;
        if (sc->def.target_interp == MN_INTERP_CATMULL_ROM) {
            int a = k > 0 ? k - 1 : k, b = k + 2 < n ? k + 2 : k + 1;
            double d0 = k > 0 ? t[k].frame - t[k - 1].frame : d1,
                   d2 = k + 2 < n ? t[k + 2].frame - t[k + 1].frame : d1;
            out->pos = cr_vec(t[a].pos, t[k].pos, t[k + 1].pos, t[b].pos, d0, d1, d2, u);
            out->dir = cr_vec(t[a].dir, t[k].dir, t[k + 1].dir, t[b].dir, d0, d1, d2, u);
            mn_quat q1 = t[k].rot, q0 = align(t[a].rot, q1), q2 = align(t[k + 1].rot, q1),
                    q3 = align(t[b].rot, q2);
            mn_quat s1 = k > 0 ? mn_anim_squad_inner(q0, q1, q2) : q1;
            mn_quat s2 = k + 2 < n ? mn_anim_squad_inner(q1, q2, q3) : q2;
            out->rot =
                slerp_noflip(mn_quat_slerp(q1, q2, u), slerp_noflip(s1, s2, u), 2 * u * (1 - u));
        } else {
            out->pos = mn_vec3_lerp(t[k].pos, t[k + 1].pos, u);
            out->dir = mn_vec3_lerp(t[k].dir, t[k + 1].dir, u);
            out->rot = mn_quat_slerp(t[k].rot, t[k + 1].rot, u);
        }
    }
    if (sc->def.con.type == MN_CON_PLANE || sc->def.con.type == MN_CON_LINE) {
        /* opposite normals between keys would pass through zero: keep the last finite one */
        if (!(mn_vec3_norm(out->dir) > 1e-12)) out->dir = t[0].dir;
    }
    return MN_OK;
}

/* ---- the solver of constrained in-betweens ------------------------------------------------ */

/* One solver moves every figure of the sequence (Welman 6.1, 7.3): each figure's in-between
 * is its own sequence's, the constraints of all are solved in one system. The state buffers
 * hold the figures one after another: figure f's numbers at qofs[f] (q) and vofs[f] (v). */
struct mn_seq_solver {
    const mn_seq* s;
    int nf;
    const mn_model* m[MN_SEQ_MAX_FIGURES];
    mn_data* d[MN_SEQ_MAX_FIGURES];
    int qofs[MN_SEQ_MAX_FIGURES + 1], vofs[MN_SEQ_MAX_FIGURES + 1];
    mn_csys* cs;
    double* q_interp;                 /* nq of all: this frame's plain in-between */
    double* q_interp_prev;            /* the last solved frame's plain in-between */
    double* q_prev;                   /* the last solved frame's solution */
    double* v;                        /* nv of all: the correction carried forward */
    double* work[MN_SEQ_MAX_FIGURES]; /* the layers' blend (layers.h), NULL without layers */
    unsigned char* resolved;          /* nc: 0 for a lock whose target is not known yet */
    double prev_frame;
    int have_prev;
    mn_csolve_result prev_result;  /* the last solved frame's */
    mn_seq_solve_options prev_opt; /* and the options it was solved with */
};

static int is_lock(const seq_con* c) {
    return c->def.lock && c->ntk == 0;
}

mn_seq_solve_options mn_seq_solve_options_default(void) {
    mn_seq_solve_options o;
    memset(&o, 0, sizeof o);
    o.solve = mn_csolve_default();
    o.warm_start = 1;
    o.relax = 0.2;
    o.balance = 1;
    o.constraints = 1;
    return o;
}

void mn_seq_solver_destroy(mn_seq_solver* v) {
    if (!v) return;
    mn_csys_destroy(v->cs);
    free(v->q_interp);
    free(v->q_interp_prev);
    free(v->q_prev);
    free(v->v);
    for (int f = 0; f < MN_SEQ_MAX_FIGURES; f++)
        free(v->work[f]);
    free(v->resolved);
    free(v);
}

/* Where a handle is in the plain in-between at `frame` (a lock's target). */
static void handle_at(const mn_model* m, mn_data* d, const mn_handle_def* h, mn_vec3* pos,
                      mn_quat* rot) {
    *rot = mn_quat_identity();
    if (h->type == MN_HANDLE_COM) {
        *pos = mn_com(m, d, h->joint, NULL);
    } else if (h->type == MN_HANDLE_ORIENT) {
        *pos = d->xf[h->joint].p;
        *rot = mn_quat_from_mat3(&d->xf[h->joint].R);
    } else {
        *pos = mn_point_world(d, h->joint, h->point);
    }
}

/* Where each lock holds its handle: where the handle is at the lock's first frame in the
 * constrained in-betweens of everything active before it. The frames are played from the
 * first key (or the earliest lock) to the last lock's start once, here: a lock that starts
 * while another holds (the ball of a foot put down while its heel is locked, Welman 7.2.1)
 * is consistent with it, and the targets do not depend on the order frames are later
 * asked for. A lock starting at the first frame (or before) holds the plain in-between. */
static mn_status solve_frame_impl(mn_seq_solver* v, double frame, const mn_seq_solve_options* o,
                                  mn_csolve_result* r);

static void resolve_locks(mn_seq_solver* v) {
    const mn_seq* s = v->s;
    double t = mn_seq_figures_start(s), last = mn_seq_figures_end(s);
    mn_seq_solve_options o = mn_seq_solve_options_default();
    o.solve.tol = 1e-7;
    o.solve.tol_rot = 1e-7;
    o.solve.max_iters = 50;
    for (;;) {
        /* the earliest start of a lock not yet resolved */
        double next = HUGE_VAL;
        for (int i = 0; i < s->nc; i++)
            if (!v->resolved[i] && s->c[i].def.start < next) next = s->c[i].def.start;
        if (next == HUGE_VAL) break;
        if (next < t) next = t;
        /* past the last key the in-between no longer changes: resolve there */
        if (next > last) next = last > t ? last : t;
        /* one frame at a time (at most 10000 steps: a longer stretch is crossed in larger ones) */
        double step = (next - t) / 10000 > 1 ? (next - t) / 10000 : 1;
        while (t < next) {
            solve_frame_impl(v, t, &o, NULL);
            t = t + step < next ? t + step : next;
        }
        solve_frame_impl(v, next, &o, NULL);
        for (int i = 0; i < s->nc; i++) {
            if (v->resolved[i] || !(s->c[i].def.start <= next || next >= last)) continue;
            mn_vec3 p;
            mn_mat3 R;
            mn_csys_handle_value(v->cs, s->c[i].def.con.handle, &p, &R);
            if (s->c[i].def.con.type == MN_CON_ORIENT)
                mn_csys_set_target_rot(v->cs, i, mn_quat_from_mat3(&R));
            else
                mn_csys_set_target(v->cs, i, p);
            v->resolved[i] = 1;
        }
    }
    v->have_prev = 0;
}

/* The buffers of a solver of n figures; 0 when out of memory. */
static int solver_alloc(mn_seq_solver* v) {
    for (int f = 0; f < v->nf; f++) {
        v->qofs[f + 1] = v->qofs[f] + v->m[f]->nq;
        v->vofs[f + 1] = v->vofs[f] + v->m[f]->nv;
        const mn_seq* sf = mn_seq_fig(v->s, f);
        int nw = mn_seq_blend_work_size(sf);
        if (nw > 0 && !(v->work[f] = malloc(sizeof(double) * (size_t)nw))) return 0;
    }
    size_t nq = (size_t)v->qofs[v->nf] + 1, nv = (size_t)v->vofs[v->nf] + 1;
    v->q_interp = malloc(sizeof(double) * nq);
    v->q_interp_prev = malloc(sizeof(double) * nq);
    v->q_prev = malloc(sizeof(double) * nq);
    v->v = malloc(sizeof(double) * nv);
    v->resolved = calloc((size_t)v->s->nc + 1, 1);
    return v->q_interp && v->q_interp_prev && v->q_prev && v->v && v->resolved;
}

/* The constraint system of every figure, with the sequence's handles and constraints; a
 * lock's first target is where its handle is in the plain in-between at its first frame. */
static mn_status solver_system(mn_seq_solver* v, mn_error* err) {
    const mn_seq* s = v->s;
    mn_figure fig[MN_SEQ_MAX_FIGURES];
    mn_data* tmp[MN_SEQ_MAX_FIGURES] = {0};
    mn_status st = MN_OK;
    for (int f = 0; f < v->nf; f++) {
        fig[f].model = v->m[f];
        fig[f].data = v->d[f];
        if (!(tmp[f] = mn_data_create(v->m[f], 0)))
            st = mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "solver", "out of memory");
    }
    mn_csys_def cd = mn_csys_default();
    cd.max_handles = s->nh > 0 ? s->nh : 1;
    cd.max_constraints = s->nc > 0 ? s->nc : 1;
    if (st == MN_OK && !(v->cs = mn_csys_create(fig, v->nf, &cd, err)))
        st = err ? err->status : MN_ERR_NOMEM;
    for (int i = 0; i < s->nh && st == MN_OK; i++)
        if (mn_csys_add_handle(v->cs, &s->h[i], err) < 0) st = err ? err->status : MN_ERR_ARG;
    for (int i = 0; i < s->nc && st == MN_OK; i++) {
        mn_constraint_def c = s->c[i].def.con;
        if (s->c[i].def.lock && s->c[i].ntk == 0) {
            double t = s->c[i].def.start;
            if (!isfinite(t)) t = mn_seq_figures_start(s);
            int f = s->h[c.handle].figure;
            mn_seq_sample_blend(mn_seq_fig(s, f), figure_frame(s, f, t), tmp[f]->q,
                                v->work[f]); /* layers in, at the figure's warped frame */
            mn_fk(v->m[f], tmp[f]);
            mn_vec3 p;
            mn_quat r;
            handle_at(v->m[f], tmp[f], &s->h[c.handle], &p, &r);
            c.target = p;
            c.target_rot = r;
        }
        if (mn_csys_add_constraint(v->cs, &c, err) < 0) st = err ? err->status : MN_ERR_ARG;
    }
    for (int f = 0; f < v->nf; f++)
        mn_data_destroy(tmp[f]);
    return st;
}

mn_seq_solver* mn_seq_solver_create_figures(const mn_seq* s, mn_data* const* d, int n,
                                            mn_error* err) {
    if (!s || !d || n != mn_seq_nfig(s)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "data",
                     "no sequence, or not one data per figure (%d figures, %d data)",
                     s ? mn_seq_nfig(s) : 0, n);
        return NULL;
    }
    for (int f = 0; f < n; f++) {
        const mn_model* m = mn_seq_fig(s, f)->m;
        if (!d[f] || d[f]->nq != m->nq || d[f]->njoint != m->njoint) {
            mn_error_set(err, MN_ERR_ARG, NULL, 0, "data", "no data, or data of another model");
            return NULL;
        }
    }
    if (s->nkey == 0) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "keys", "the sequence has no keys");
        return NULL;
    }
    mn_seq_solver* v = calloc(1, sizeof *v);
    if (!v) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "solver", "out of memory");
        return NULL;
    }
    v->s = s;
    v->nf = n;
    for (int f = 0; f < n; f++) {
        v->m[f] = mn_seq_fig(s, f)->m;
        v->d[f] = d[f];
    }
    if (!solver_alloc(v)) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "solver", "out of memory");
        mn_seq_solver_destroy(v);
        return NULL;
    }
    if (solver_system(v, err) != MN_OK) {
        mn_seq_solver_destroy(v);
        return NULL;
    }
    for (int i = 0; i < s->nc; i++)
        v->resolved[i] = !is_lock(&s->c[i]);
    resolve_locks(v);
    return v;
}

mn_seq_solver* mn_seq_solver_create(const mn_seq* s, mn_data* d, mn_error* err) {
    if (s && mn_seq_nfig(s) > 1) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "data",
                     "a sequence of %d figures: mn_seq_solver_create_figures takes a data each",
                     mn_seq_nfig(s));
        return NULL;
    }
    return mn_seq_solver_create_figures(s, &d, 1, err);
}

mn_csys* mn_seq_solver_csys(mn_seq_solver* v) {
    return v ? v->cs : NULL;
}
void mn_seq_solver_reset(mn_seq_solver* v) {
    if (v) v->have_prev = 0;
}

static void set_targets(mn_seq_solver* v, double frame) {
    const mn_seq* s = v->s;
    for (int i = 0; i < s->nc; i++) {
        const seq_con* c = &s->c[i];
        if (c->ntk == 0 || !(frame >= c->def.start && frame <= c->def.end)) continue;
        mn_target_key t;
        mn_seq_target_at(s, i, frame, &t);
        switch (c->def.con.type) {
        case MN_CON_PIN:
            mn_csys_set_target(v->cs, i, t.pos);
            break;
        case MN_CON_ORIENT:
            mn_csys_set_target_rot(v->cs, i, t.rot);
            break;
        case MN_CON_PLANE:
        case MN_CON_LINE:
            mn_csys_set_plane(v->cs, i, t.pos, t.dir);
            break;
        default:
            break;
        }
    }
}

mn_status mn_seq_solve_frame(mn_seq_solver* v, double frame, const mn_seq_solve_options* opt,
                             mn_csolve_result* r) {
    if (!v || !isfinite(frame)) return MN_ERR_ARG;
    return solve_frame_impl(v, frame, opt, r);
}

/* Every figure's state from q (all figures' numbers), then its forward kinematics. */
static void put_state(mn_seq_solver* v, const double* q) {
    for (int f = 0; f < v->nf; f++) {
        memcpy(v->d[f]->q, q + v->qofs[f], sizeof(double) * (size_t)v->m[f]->nq);
        mn_fk(v->m[f], v->d[f]);
    }
}

static void get_state(const mn_seq_solver* v, double* q) {
    for (int f = 0; f < v->nf; f++)
        memcpy(q + v->qofs[f], v->d[f]->q, sizeof(double) * (size_t)v->m[f]->nq);
}

static int count_active(mn_seq_solver* v, double frame, const mn_seq_solve_options* o) {
    const mn_seq* s = v->s;
    int nactive = 0;
    for (int i = 0; i < s->nc; i++) {
        const mn_seq_constraint_def* c = &s->c[i].def;
        int on = o->constraints && frame >= c->start && frame <= c->end &&
                 (!is_lock(&s->c[i]) || v->resolved[i]) &&
                 (o->balance || c->con.type != MN_CON_BALANCE) && c->con.enabled;
        mn_csys_set_enabled(v->cs, i, on);
        nactive += on;
    }
    return nactive;
}

static mn_status solve_frame_impl(mn_seq_solver* v, double frame, const mn_seq_solve_options* opt,
                                  mn_csolve_result* r) {
    mn_seq_solve_options o = opt ? *opt : mn_seq_solve_options_default();
    size_t qbytes = sizeof(double) * (size_t)v->qofs[v->nf];
    /* the plain in-between is the blend of the base and its layers (layers.h), each figure's
     * its own, at its own warped frame: the constraints hold on the blended result */
    for (int f = 0; f < v->nf; f++) {
        mn_status st = mn_seq_sample_blend(mn_seq_fig(v->s, f), figure_frame(v->s, f, frame),
                                           v->q_interp + v->qofs[f], v->work[f]);
        if (st != MN_OK) return st;
    }
    if (count_active(v, frame, &o) == 0) {
        put_state(v, v->q_interp);
        mn_csys_invalidate(v->cs);
        v->have_prev = 0;
        if (r) {
            memset(r, 0, sizeof *r);
            r->status = MN_OK;
        }
        return MN_OK;
    }
    if (v->have_prev && fabs(frame - v->prev_frame) <= 1e-9 &&
        !memcmp(&o, &v->prev_opt, sizeof o)) {
        /* the same frame again (a retimed bake holding a frame, layers.h): the same answer,
         * not another solution of the redundant figure */
        put_state(v, v->q_prev);
        if (r) *r = v->prev_result;
        return v->prev_result.status;
    }
    set_targets(v, frame);
    /* the start: this frame's in-between plus the correction the last frame needed */
    for (int f = 0; f < v->nf; f++)
        memcpy(v->d[f]->q, v->q_interp + v->qofs[f], sizeof(double) * (size_t)v->m[f]->nq);
    if (o.warm_start && v->have_prev && fabs(frame - v->prev_frame) <= 1.0 + 1e-9) {
        double keep = 1.0 - (o.relax > 0 ? (o.relax < 1 ? o.relax : 1.0) : 0.0);
        for (int f = 0; f < v->nf; f++) {
            mn_q_difference(v->m[f], v->q_prev + v->qofs[f], v->q_interp_prev + v->qofs[f],
                            v->v + v->vofs[f]);
            mn_integrate(v->m[f], v->d[f]->q, v->v + v->vofs[f], keep);
        }
    }
    mn_csys_invalidate(v->cs);
    mn_csolve_result res;
    mn_status st = mn_csys_solve(v->cs, &o.solve, &res);
    if (r) *r = res;
    v->prev_result = res;
    v->prev_result.status = st;
    v->prev_opt = o;
    get_state(v, v->q_prev);
    memcpy(v->q_interp_prev, v->q_interp, qbytes);
    v->prev_frame = frame;
    v->have_prev = 1;
    return st;
}
