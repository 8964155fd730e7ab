/* The WebAssembly module's exports: a flat C interface over the public headers that the
 * JavaScript API (web/marionette.mjs) wraps. Objects cross as opaque pointers, numbers as
 * arrays in the module's memory. Every function checks its arguments and reports failures
 * through one error record (mnw_error_message, mnw_error_field): nothing here traps or
 * exits on bad input. */
#include <marionette/anim.h>
#include <marionette/base.h>
#include <marionette/constrain.h>
#include <marionette/ik.h>
#include <marionette/io.h>
#include <marionette/layers.h>
#include <marionette/model.h>
#include <marionette/retarget.h>
#include <marionette/scene.h>
#include <marionette/sequence.h>
#include <marionette/skin.h>
#include <marionette/takes.h>

/* The documents' memory forms, called with no file table: the module opens no file. */
#include "doc/doc_codecs.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT(name) __attribute__((export_name(#name)))

/* ---- allocation count: the link wraps malloc, calloc, realloc and free ---------------- */
void* __real_malloc(size_t n);
void* __real_calloc(size_t n, size_t k);
void* __real_realloc(void* p, size_t n);
void __real_free(void* p);
void* __wrap_malloc(size_t n);
void* __wrap_calloc(size_t n, size_t k);
void* __wrap_realloc(void* p, size_t n);
void __wrap_free(void* p);

static long g_live, g_total;

void* __wrap_malloc(size_t n) {
    void* p = __real_malloc(n);
    if (p) g_live++, g_total++;
    return p;
}
void* __wrap_calloc(size_t n, size_t k) {
    void* p = __real_calloc(n, k);
    if (p) g_live++, g_total++;
    return p;
}
void* __wrap_realloc(void* p, size_t n) {
    void* q = __real_realloc(p, n);
    if (!p && q) g_live++;
    if (q) g_total++;
    return q;
}
void __wrap_free(void* p) {
    if (p) g_live--;
    __real_free(p);
}

/* Blocks allocated and not freed, and allocations made so far. */
EXPORT(mnw_alloc_live) long mnw_alloc_live(void) {
    return g_live;
}
EXPORT(mnw_alloc_total) long mnw_alloc_total(void) {
    return g_total;
}
EXPORT(mnw_malloc) void* mnw_malloc(size_t n) {
    return malloc(n ? n : 1);
}
EXPORT(mnw_free) void mnw_free(void* p) {
    free(p);
}

/* ---- errors ---------------------------------------------------------------------------- */
static mn_error g_err;

EXPORT(mnw_error_message) const char* mnw_error_message(void) {
    return g_err.message;
}
EXPORT(mnw_error_field) const char* mnw_error_field(void) {
    return g_err.field;
}
EXPORT(mnw_error_status) int mnw_error_status(void) {
    return g_err.status;
}

static int arg_error(const char* field, const char* what) {
    mn_error_set(&g_err, MN_ERR_ARG, "", 0, field, "%s", what);
    return -1;
}
static void from_message(mn_status s, const char* field, const char* msg) {
    mn_error_set(&g_err, s, "", 0, field, "%s", msg);
}

/* ---- figures: a model and its state ---------------------------------------------------- */
typedef struct mnw_figure {
    mn_model* m;
    mn_data* d;
    double* pos; /* njoint x 3: joint positions, refreshed after every FK and solve */
} mnw_figure;

static void sync_pos(mnw_figure* f) {
    for (int j = 0; j < f->m->njoint; j++) {
        f->pos[3 * j] = f->d->xf[j].p.x;
        f->pos[3 * j + 1] = f->d->xf[j].p.y;
        f->pos[3 * j + 2] = f->d->xf[j].p.z;
    }
}

/* Takes ownership of m (destroyed on failure). */
static mnw_figure* figure_of(mn_model* m) {
    if (!m) return NULL;
    mnw_figure* f = calloc(1, sizeof *f);
    if (f) f->d = mn_data_create(m, 0);
    if (f) f->pos = malloc(sizeof(double) * 3 * (size_t)(m->njoint > 0 ? m->njoint : 1));
    if (!f || !f->d || !f->pos) {
        if (f) {
            mn_data_destroy(f->d);
            free(f->pos);
            free(f);
        }
        mn_model_destroy(m);
        mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory");
        return NULL;
    }
    f->m = m;
    mn_fk(m, f->d);
    sync_pos(f);
    return f;
}

EXPORT(mnw_figure_destroy) void mnw_figure_destroy(mnw_figure* f) {
    if (!f) return;
    mn_data_destroy(f->d);
    mn_model_destroy(f->m);
    free(f->pos);
    free(f);
}

/* Skeleton text and BVH, read inside the module. BVH motion: *motion receives a malloc'd
 * nframes x nq array (free with mnw_free), *nframes and *frame_time its size and rate. */
EXPORT(mnw_figure_read_skel)
mnw_figure* mnw_figure_read_skel(const char* text, size_t len, const char* name) {
    mn_model* m = NULL;
    if (!text) return (void)arg_error("text", "NULL"), NULL;
    if (mn_skel_read_mem(text, len, name, &m, NULL, &g_err) != MN_OK) return NULL;
    return figure_of(m);
}

/* A figure document (docs/figure-document.md) read by the reader of `marionette` itself:
 * every message "name:line: field: text" as on the command line. Its motion as BVH's below
 * (*motion NULL and *nframes 0 when it has none); the skin is left to the caller. */
EXPORT(mnw_figure_read_doc)
mnw_figure* mnw_figure_read_doc(const char* text, size_t len, const char* name, double** motion,
                                int* nframes, double* frame_time) {
    if (!text || !motion || !nframes || !frame_time) return (void)arg_error("text", "NULL"), NULL;
    mn_model* m = NULL;
    mn_motion mo;
    if (mn_figure_doc_read_mem(text, len, name, &m, &mo, &g_err) != MN_OK) return NULL;
    mnw_figure* f = figure_of(m);
    if (!f) {
        mn_motion_free(&mo);
        return NULL;
    }
    *motion = mo.q;
    *nframes = mo.nframes;
    *frame_time = mo.frame_time;
    return f;
}

/* The figure document of f, with a motion of nframes states (frames, frame_time) when
 * nframes > 0: the text `marionette convert` writes (malloc'd, free with mnw_free), its
 * length in *len; NULL on failure. */
EXPORT(mnw_figure_write_doc)
char* mnw_figure_write_doc(const mnw_figure* f, const double* frames, int nframes,
                           double frame_time, int* len) {
    if (!f || !len || nframes < 0 || (nframes > 0 && !frames))
        return (void)arg_error("figure", "NULL"), NULL;
    mn_motion mo = {nframes, f->m->nq, frame_time, (double*)frames};
    char* text = NULL;
    size_t n = 0;
    if (mn_figure_doc_write_mem(f->m, nframes > 0 ? &mo : NULL, NULL, &text, &n, &g_err) != MN_OK)
        return NULL;
    *len = (int)n;
    return text;
}

EXPORT(mnw_figure_read_bvh)
mnw_figure* mnw_figure_read_bvh(const char* text, size_t len, const char* name, double scale,
                                double** motion, int* nframes, double* frame_time) {
    if (!text || !motion || !nframes || !frame_time) return (void)arg_error("text", "NULL"), NULL;
    if (!(scale > 0) || !isfinite(scale))
        return (void)arg_error("scale", "must be a finite number > 0"), NULL;
    mn_model* m = NULL;
    mn_motion mo;
    mn_bvh_options o = mn_bvh_default();
    o.scale = scale;
    if (mn_bvh_read_mem(text, len, name, &o, &m, &mo, NULL, &g_err) != MN_OK) return NULL;
    *motion = mo.q;
    *nframes = mo.nframes;
    *frame_time = mo.frame_time;
    return figure_of(m);
}

/* The heel and toe contacts of both feet over a take of f's own figure (nframes states of
 * frame_time seconds), as retargeting finds them (docs/retarget.md "Contacts"): out gets the
 * MN_CONTACT_* bits, nframes bytes for the left foot then nframes for the right, feet[2] the
 * foot joints. MN_ERR_NOTFOUND when no rig table names the figure's legs. */
EXPORT(mnw_foot_contacts)
int mnw_foot_contacts(const mnw_figure* f, const double* q, int nframes, double frame_time,
                      unsigned char* out, int* feet) {
    if (!f || !q || !out || !feet || nframes < 1) return arg_error("motion", "NULL or no frames");
    if (mn_rig_detect(f->m) < 0)
        return mn_error_set(&g_err, MN_ERR_NOTFOUND, "", 0, "figure",
                            "no rig table names this figure's legs");
    mn_retarget_options o = mn_retarget_options_default();
    o.cleanup = 0;
    mn_retarget* rt = mn_retarget_create(f->m, f->m, NULL, &o, &g_err);
    if (!rt) return g_err.status ? g_err.status : MN_ERR_ARG;
    mn_status st = mn_retarget_set_take(rt, q, nframes, frame_time, &g_err);
    if (st == MN_OK) {
        mn_retarget_info info;
        mn_retarget_get_info(rt, &info);
        feet[0] = info.source_foot[0];
        feet[1] = info.source_foot[1];
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < nframes; i++)
                out[(size_t)k * nframes + i] = (unsigned char)mn_retarget_contact(rt, k, i);
    }
    mn_retarget_destroy(rt);
    return st;
}

EXPORT(mnw_figure_stickman) mnw_figure* mnw_figure_stickman(void) {
    return figure_of(mn_stickman_model(&g_err));
}

/* Model facts: 0 njoint, 1 nq, 2 nv, 3 nroot. */
EXPORT(mnw_figure_size) int mnw_figure_size(const mnw_figure* f, int what) {
    if (!f) return -1;
    switch (what) {
    case 0:
        return f->m->njoint;
    case 1:
        return f->m->nq;
    case 2:
        return f->m->nv;
    case 3:
        return f->m->nroot;
    default:
        return -1;
    }
}
EXPORT(mnw_figure_name) const char* mnw_figure_name(const mnw_figure* f) {
    return f && f->m->name ? f->m->name : "";
}
EXPORT(mnw_joint_name) const char* mnw_joint_name(const mnw_figure* f, int j) {
    return f && j >= 0 && j < f->m->njoint ? f->m->jnt_name[j] : "";
}
/* Joint facts: 0 parent, 1 type, 2 qadr, 3 dofadr, 4 limited, 5 Euler order (mn_euler_order). */
EXPORT(mnw_joint_int) int mnw_joint_int(const mnw_figure* f, int j, int what) {
    if (!f || j < 0 || j >= f->m->njoint) return -2;
    switch (what) {
    case 0:
        return f->m->jnt_parent[j];
    case 1:
        return f->m->jnt_type[j];
    case 2:
        return f->m->jnt_qadr[j];
    case 3:
        return f->m->jnt_dofadr[j];
    case 4:
        return f->m->jnt_limited[j];
    case 5:
        return f->m->jnt_rot_order[j];
    default:
        return -2;
    }
}
/* Joint range: lower (0) and upper (1); swing (2); twist lower (3), upper (4); the unit
 * axis x, y, z (5, 6, 7: a hinge's or slide's axis, a ball's twist axis). */
EXPORT(mnw_joint_range) double mnw_joint_range(const mnw_figure* f, int j, int what) {
    if (!f || j < 0 || j >= f->m->njoint || what < 0 || what > 7) return NAN;
    if (what < 2) return f->m->jnt_range[2 * j + what];
    if (what == 2) return f->m->jnt_swing[j];
    if (what < 5) return f->m->jnt_twist[2 * j + what - 3];
    const mn_vec3 a = f->m->jnt_axis[j];
    return what == 5 ? a.x : what == 6 ? a.y : a.z;
}

/* ---- rotations: Euler angles, swing and twist ------------------------------------------
 * Euler angles (radians) e[3] in order -> the unit quaternion q[4] (w first). */
EXPORT(mnw_euler_to_quat) int mnw_euler_to_quat(int order, const double* e, double* q) {
    if (order < MN_EULER_XYZ || order > MN_EULER_ZYX)
        return arg_error("order", "not an Euler order");
    const mn_quat r = mn_euler_to_quat((mn_euler_order)order, e);
    q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z;
    return MN_OK;
}
/* The Euler angles of the rotation q[4] in order; when ref is given, the solution nearest
 * it, each angle moved by whole turns (mn_euler_nearest over all three angles). */
EXPORT(mnw_euler_from_quat)
int mnw_euler_from_quat(int order, const double* q, const double* ref, double* e) {
    if (order < MN_EULER_XYZ || order > MN_EULER_ZYX)
        return arg_error("order", "not an Euler order");
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 0) || !isfinite(n)) return arg_error("q", "not a finite non-zero quaternion");
    const mn_quat r = {q[0] / n, q[1] / n, q[2] / n, q[3] / n};
    mn_euler_from_quat((mn_euler_order)order, r, e);
    if (ref) mn_euler_nearest(e, ref, 3, NULL, NULL, e);
    return MN_OK;
}
/* Swing-twist split of q[4] about the unit axis a[3] (mn_swing_twist): out gets the twist
 * angle, then the swing's rotation vector (4 numbers). */
EXPORT(mnw_swing_twist) int mnw_swing_twist(const double* q, const double* a, double* out) {
    const mn_quat r = {q[0], q[1], q[2], q[3]};
    mn_vec3 sw;
    mn_swing_twist(r, mn_v3(a[0], a[1], a[2]), &out[0], &sw);
    out[1] = sw.x, out[2] = sw.y, out[3] = sw.z;
    return MN_OK;
}
/* q[4] projected onto a ball's limits (mn_ball_clamp): swing cone, twist [lo, hi] about a. */
EXPORT(mnw_ball_clamp)
void mnw_ball_clamp(double* q, const double* a, double cone, double lo, double hi) {
    const mn_quat r =
        mn_ball_clamp((mn_quat){q[0], q[1], q[2], q[3]}, mn_v3(a[0], a[1], a[2]), cone, lo, hi);
    q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z;
}
/* f re-rooted at joint (mn_model_reroot, Welman 2.1.2, 6.3): a new figure whose state puts
 * every joint where f's state puts it (mn_model_reroot_state). NULL with the error set. */
EXPORT(mnw_figure_reroot) mnw_figure* mnw_figure_reroot(const mnw_figure* f, int joint) {
    if (!f) return (void)arg_error("figure", "NULL"), NULL;
    mnw_figure* g = figure_of(mn_model_reroot(f->m, joint, f->d->q, &g_err));
    if (!g) return NULL;
    if (mn_model_reroot_state(f->m, f->d->q, g->m, g->d->q, &g_err) != MN_OK) {
        mnw_figure_destroy(g);
        return NULL;
    }
    mn_fk(g->m, g->d);
    sync_pos(g);
    return g;
}

/* qb: the state of b that puts every joint where state qa puts it in a, b a re-rooting of a
 * (either way round). 0, or -1 with the error set. */
EXPORT(mnw_figure_reroot_state)
int mnw_figure_reroot_state(const mnw_figure* a, const double* qa, const mnw_figure* b,
                            double* qb) {
    if (!a || !b || !qa || !qb) return arg_error("figure", "NULL");
    return mn_model_reroot_state(a->m, qa, b->m, qb, &g_err) == MN_OK ? 0 : -1;
}

EXPORT(mnw_figure_q) double* mnw_figure_q(mnw_figure* f) {
    return f ? f->d->q : NULL;
}
EXPORT(mnw_figure_q0) const double* mnw_figure_q0(mnw_figure* f) {
    return f ? f->m->q0 : NULL;
}
EXPORT(mnw_figure_frames) double* mnw_figure_frames(mnw_figure* f) {
    return f ? &f->d->xf[0].R.m[0] : NULL;
}
EXPORT(mnw_figure_positions) double* mnw_figure_positions(mnw_figure* f) {
    return f ? f->pos : NULL;
}

/* Forward kinematics of the state in q; MN_ERR_ARG (nothing computed) when q is not finite
 * or a quaternion is zero. */
EXPORT(mnw_figure_fk) int mnw_figure_fk(mnw_figure* f) {
    if (!f) return arg_error("figure", "NULL");
    if (mn_q_check(f->m, f->d->q) != MN_OK) {
        mn_error_set(&g_err, MN_ERR_ARG, "", 0, "q",
                     "a state number is not finite or a quaternion is zero");
        return MN_ERR_ARG;
    }
    mn_fk(f->m, f->d);
    sync_pos(f);
    return MN_OK;
}
EXPORT(mnw_figure_reset) void mnw_figure_reset(mnw_figure* f) {
    if (!f) return;
    mn_data_reset(f->m, f->d);
    mn_fk(f->m, f->d);
    sync_pos(f);
}
EXPORT(mnw_figure_clamp) void mnw_figure_clamp(mnw_figure* f) {
    if (f) mn_clamp_to_limits(f->m, f->d->q);
}
EXPORT(mnw_figure_find) int mnw_figure_find(const mnw_figure* f, const char* name) {
    return f && name ? mn_model_find_joint(f->m, name) : -1;
}

/* ---- chain IK ---------------------------------------------------------------------------
 * dv: point 3, target_pos 3, target_rot 4, w_pos, w_rot, pole 3 (15), then options tol_pos,
 * tol_rot, timeout_ms, max_step, damping, nullspace_gain (6): 21 numbers.
 * iv: base, tip, use_position, use_orientation, then options method, max_iters,
 * max_restarts, respect_limits, nullspace, timeout_cpu, seed low 32 bits, seed high 32 bits:
 * 12 numbers.
 * out: status, iterations, restarts, pos_err, rot_err, time_us (6). */
EXPORT(mnw_ik_defaults) void mnw_ik_defaults(double* dv, int* iv) {
    mn_ik_problem p = mn_ik_problem_default();
    mn_ik_options o = mn_ik_default();
    const double d[21] = {p.point.x,       p.point.y,      p.point.z,      p.target_pos.x,
                          p.target_pos.y,  p.target_pos.z, p.target_rot.w, p.target_rot.x,
                          p.target_rot.y,  p.target_rot.z, p.w_pos,        p.w_rot,
                          p.pole.x,        p.pole.y,       p.pole.z,       o.tol_pos,
                          o.tol_rot,       o.timeout_ms,   o.max_step,     o.damping,
                          o.nullspace_gain};
    const int i[12] = {
        p.base,        p.tip,         p.use_position,        p.use_orientation,
        (int)o.method, o.max_iters,   o.max_restarts,        o.respect_limits,
        o.nullspace,   o.timeout_cpu, (int)(uint32_t)o.seed, (int)(uint32_t)(o.seed >> 32)};
    memcpy(dv, d, sizeof d);
    memcpy(iv, i, sizeof i);
}

EXPORT(mnw_ik_solve) int mnw_ik_solve(mnw_figure* f, const double* dv, const int* iv, double* out) {
    if (!f || !dv || !iv || !out) return arg_error("figure", "NULL");
    mn_ik_problem p = mn_ik_problem_default();
    p.point = mn_v3(dv[0], dv[1], dv[2]);
    p.target_pos = mn_v3(dv[3], dv[4], dv[5]);
    p.target_rot = (mn_quat){dv[6], dv[7], dv[8], dv[9]};
    p.w_pos = dv[10];
    p.w_rot = dv[11];
    p.pole = mn_v3(dv[12], dv[13], dv[14]);
    p.base = iv[0];
    p.tip = iv[1];
    p.use_position = iv[2];
    p.use_orientation = iv[3];
    mn_ik_options o = mn_ik_default();
    o.tol_pos = dv[15];
    o.tol_rot = dv[16];
    o.timeout_ms = dv[17];
    o.max_step = dv[18];
    o.damping = dv[19];
    o.nullspace_gain = dv[20];
    if (iv[4] < 0 || iv[4] >= MN_IK_METHOD_COUNT)
        return arg_error("options.method", "not an IK method");
    o.method = (mn_ik_method)iv[4];
    o.max_iters = iv[5];
    o.max_restarts = iv[6];
    o.respect_limits = iv[7];
    o.nullspace = iv[8];
    o.timeout_cpu = iv[9];
    o.seed = (uint64_t)(uint32_t)iv[10] | ((uint64_t)(uint32_t)iv[11] << 32);
    mn_ik_result r;
    memset(&r, 0, sizeof r);
    mn_status s = mn_ik_solve(f->m, f->d, &p, &o, &r);
    out[0] = s;
    out[1] = r.iterations;
    out[2] = r.restarts;
    out[3] = r.pos_err;
    out[4] = r.rot_err;
    out[5] = r.time_us;
    from_message(s, "", s == MN_OK ? "" : r.message);
    sync_pos(f);
    return s;
}

/* Many IK solves in one call (the benchmark's inner loop, without a crossing per solve):
 * for k < n, the state is reset to seed (nq) and target k (3 numbers, or 7 with an
 * orientation w x y z when iv[3]) is solved; solved[k] gets 1 within tolerance, q_out (may
 * be NULL) the answers (n x nq). Returns the solves that met their target. */
EXPORT(mnw_ik_solve_many)
int mnw_ik_solve_many(mnw_figure* f, double* dv, const int* iv, const double* seed, int n,
                      const double* targets, uint8_t* solved, double* q_out) {
    if (!f || !dv || !iv || !seed || !targets || !solved || n < 0)
        return arg_error("figure", "NULL");
    int stride = iv[3] ? 7 : 3, met = 0;
    double out[6];
    for (int k = 0; k < n; k++) {
        memcpy(f->d->q, seed, sizeof(double) * (size_t)f->m->nq);
        for (int i = 0; i < stride; i++)
            dv[3 + i] = targets[(size_t)k * (size_t)stride + (size_t)i];
        int s = mnw_ik_solve(f, dv, iv, out);
        if (s == MN_ERR_ARG) return -1;
        solved[k] = s == MN_OK;
        met += s == MN_OK;
        if (q_out)
            memcpy(q_out + (size_t)k * (size_t)f->m->nq, f->d->q,
                   sizeof(double) * (size_t)f->m->nq);
    }
    return met;
}

/* ---- the constraint system ------------------------------------------------------------ */
typedef struct mnw_csys {
    mn_csys* s;
    int nfig;
    mnw_figure* figs[8];
} mnw_csys;

EXPORT(mnw_csys_create)
mnw_csys* mnw_csys_create(mnw_figure** figs, int n, int max_handles, int max_constraints) {
    if (!figs || n < 1 || n > 8) return (void)arg_error("figures", "between 1 and 8 figures"), NULL;
    mn_figure fl[8];
    for (int i = 0; i < n; i++) {
        if (!figs[i]) return (void)arg_error("figures", "NULL figure"), NULL;
        fl[i].model = figs[i]->m;
        fl[i].data = figs[i]->d;
    }
    mn_csys_def def = mn_csys_default();
    if (max_handles > 0) def.max_handles = max_handles;
    if (max_constraints > 0) def.max_constraints = max_constraints;
    mnw_csys* c = calloc(1, sizeof *c);
    if (!c) return (void)(mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory")), NULL;
    c->s = mn_csys_create(fl, n, &def, &g_err);
    if (!c->s) {
        free(c);
        return NULL;
    }
    c->nfig = n;
    for (int i = 0; i < n; i++)
        c->figs[i] = figs[i];
    return c;
}
/* A system over figs built from a scene document's handles and constraints (docs/scene.md) by
 * the reader of `marionette pose`: joint names resolved, a pin or an orientation without a
 * target held where its handle is now; room for spare_handles and spare_constraints more.
 * Errors name the document (name), the line and the field. */
EXPORT(mnw_csys_from_scene)
mnw_csys* mnw_csys_from_scene(mnw_figure** figs, int n, const char* text, size_t len,
                              const char* name, int spare_handles, int spare_constraints) {
    if (!figs || n < 1 || n > 8) return (void)arg_error("figures", "between 1 and 8 figures"), NULL;
    if (!text) return (void)arg_error("document", "NULL"), NULL;
    mn_figure fl[8];
    for (int i = 0; i < n; i++) {
        if (!figs[i]) return (void)arg_error("figures", "NULL figure"), NULL;
        fl[i].model = figs[i]->m;
        fl[i].data = figs[i]->d;
    }
    mnw_csys* c = calloc(1, sizeof *c);
    if (!c) return (void)(mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory")), NULL;
    mn_scene* sc = NULL;
    if (mn_scene_read_mem(text, len, name, &sc, &g_err) != MN_OK ||
        mn_scene_bind_spare(sc, fl, n, spare_handles, spare_constraints, &c->s, &g_err) != MN_OK) {
        mn_scene_destroy(sc);
        free(c);
        return NULL;
    }
    mn_scene_destroy(sc);
    c->nfig = n;
    for (int i = 0; i < n; i++)
        c->figs[i] = figs[i];
    return c;
}
EXPORT(mnw_csys_destroy) void mnw_csys_destroy(mnw_csys* c) {
    if (!c) return;
    mn_csys_destroy(c->s);
    free(c);
}

EXPORT(mnw_csys_add_handle)
int mnw_csys_add_handle(mnw_csys* c, int type, int figure, int joint, double x, double y, double z,
                        const char* name) {
    if (!c) return arg_error("system", "NULL");
    mn_handle_def d = mn_handle_default();
    d.type = (mn_handle_type)type;
    d.figure = figure;
    d.joint = joint;
    d.point = mn_v3(x, y, z);
    d.name = name && *name ? name : NULL;
    if (type < MN_HANDLE_POINT || type > MN_HANDLE_COM)
        return arg_error("type", "not a handle type");
    return mn_csys_add_handle(c->s, &d, &g_err);
}

/* v: target 3, target_rot 4, origin 3, dir 3, up 3, margin, weight (18), then npolygon x 3
 * polygon points. iv: type, handle, handle2, npolygon, priority, enabled. */
EXPORT(mnw_csys_add_constraint)
int mnw_csys_add_constraint(mnw_csys* c, const int* iv, const double* v, const char* name) {
    if (!c || !iv || !v) return arg_error("system", "NULL");
    mn_constraint_def d = mn_constraint_default();
    if (iv[0] < 0 || iv[0] >= MN_CON_TYPE_COUNT) return arg_error("type", "not a constraint type");
    if (iv[3] < 0 || iv[3] > MN_MAX_POLYGON) return arg_error("polygon", "too many vertices");
    d.type = (mn_constraint_type)iv[0];
    d.handle = iv[1];
    d.handle2 = iv[2];
    d.npolygon = iv[3];
    d.priority = iv[4];
    d.enabled = iv[5];
    d.axis = iv[7];
    d.target = mn_v3(v[0], v[1], v[2]);
    d.target_rot = (mn_quat){v[3], v[4], v[5], v[6]};
    d.origin = mn_v3(v[7], v[8], v[9]);
    d.dir = mn_v3(v[10], v[11], v[12]);
    d.up = mn_v3(v[13], v[14], v[15]);
    d.margin = v[16];
    d.weight = v[17];
    for (int i = 0; i < d.npolygon; i++)
        d.polygon[i] = mn_v3(v[18 + 3 * i], v[19 + 3 * i], v[20 + 3 * i]);
    d.name = name && *name ? name : NULL;
    return mn_csys_add_constraint(c->s, &d, &g_err);
}

static int status_of(mn_status s, const char* field) {
    if (s != MN_OK)
        mn_error_set(&g_err, s, "", 0, field, "%s", "refused: out of range, NaN or the wrong type");
    return s;
}

/* what: 0 set_target (v 3), 1 set_target_rot (v 4), 2 set_enabled (i), 3 set_weight (v[0]) */
EXPORT(mnw_csys_edit) int mnw_csys_edit(mnw_csys* c, int con, int what, int i, const double* v) {
    if (!c) return arg_error("system", "NULL");
    if (con < 0 || con >= mn_csys_constraint_count(c->s))
        return arg_error("constraint", "no such constraint");
    switch (what) {
    case 0:
        return status_of(mn_csys_set_target(c->s, con, mn_v3(v[0], v[1], v[2])), "target");
    case 1:
        return status_of(mn_csys_set_target_rot(c->s, con, (mn_quat){v[0], v[1], v[2], v[3]}),
                         "target");
    case 2:
        return status_of(mn_csys_set_enabled(c->s, con, i), "enabled");
    case 3:
        return status_of(mn_csys_set_weight(c->s, con, v[0]), "weight");
    default:
        return arg_error("what", "unknown edit");
    }
}

/* what: 0 drag (v: target 3, weight), 1 drag_rot (v: quaternion 4, weight), 2 push (v:
 * force 3), 3 release. i: priority. */
EXPORT(mnw_csys_drag)
int mnw_csys_drag(mnw_csys* c, int h, int what, const double* v, int priority) {
    if (!c) return arg_error("system", "NULL");
    if (h < 0 || h >= mn_csys_handle_count(c->s)) return arg_error("handle", "no such handle");
    switch (what) {
    case 0:
        return status_of(mn_csys_drag(c->s, h, mn_v3(v[0], v[1], v[2]), v[3], priority), "target");
    case 1:
        return status_of(
            mn_csys_drag_rot(c->s, h, (mn_quat){v[0], v[1], v[2], v[3]}, v[4], priority), "target");
    case 2:
        return status_of(mn_csys_push(c->s, h, mn_v3(v[0], v[1], v[2])), "force");
    case 3:
        return status_of(mn_csys_release(c->s, h), "handle");
    default:
        return arg_error("what", "unknown drag");
    }
}

EXPORT(mnw_csys_drag_error) double mnw_csys_drag_error(mnw_csys* c, int h) {
    return c && h >= 0 && h < mn_csys_handle_count(c->s) ? mn_csys_drag_error(c->s, h) : NAN;
}
EXPORT(mnw_csys_invalidate) void mnw_csys_invalidate(mnw_csys* c) {
    if (c) mn_csys_invalidate(c->s);
}
/* Per-joint mobility (Welman 4.1.4, 6.2): scale >= 0 sets it, scale < 0 resets every joint;
 * mnw_csys_joint_scale reads it (-1: no such figure or joint). */
EXPORT(mnw_csys_set_joint_scale)
int mnw_csys_set_joint_scale(mnw_csys* c, int figure, int joint, double scale) {
    if (!c) return arg_error("system", "NULL");
    if (scale < 0) {
        mn_csys_reset_joint_scales(c->s);
        return 0;
    }
    return status_of(mn_csys_set_joint_scale(c->s, figure, joint, scale), "scale");
}
EXPORT(mnw_csys_joint_scale)
double mnw_csys_joint_scale(const mnw_csys* c, int figure, int joint) {
    return c ? mn_csys_joint_scale(c->s, figure, joint) : -1;
}
/* Comfort (mn_csys_set_comfort): gain, limit margin, limit gain; gain < 0 switches it off. */
EXPORT(mnw_csys_set_comfort)
int mnw_csys_set_comfort(mnw_csys* c, double gain, double margin, double limit_gain) {
    if (!c) return arg_error("system", "NULL");
    if (gain < 0) return status_of(mn_csys_set_comfort(c->s, NULL), "comfort");
    mn_comfort cf = {.gain = gain, .limit_margin = margin, .limit_gain = limit_gain};
    return status_of(mn_csys_set_comfort(c->s, &cf), "comfort");
}
EXPORT(mnw_csys_set_comfort_weight)
int mnw_csys_set_comfort_weight(mnw_csys* c, int figure, int joint, double w) {
    if (!c) return arg_error("system", "NULL");
    return status_of(mn_csys_set_comfort_weight(c->s, figure, joint, w), "weight");
}
/* The rest state comfort pulls figure `figure` toward (q: its nq numbers; NULL: the model's). */
EXPORT(mnw_csys_set_rest) int mnw_csys_set_rest(mnw_csys* c, int figure, const double* q) {
    if (!c) return arg_error("system", "NULL");
    return status_of(mn_csys_set_rest(c->s, figure, q), "rest");
}
EXPORT(mnw_csys_count) int mnw_csys_count(const mnw_csys* c, int what) {
    if (!c) return -1;
    return what == 0   ? mn_csys_handle_count(c->s)
           : what == 1 ? mn_csys_constraint_count(c->s)
                       : mn_csys_nv(c->s);
}
/* out: position 3, rotation 9 (row-major). */
EXPORT(mnw_csys_handle_value) int mnw_csys_handle_value(mnw_csys* c, int h, double* out) {
    if (!c || !out) return arg_error("system", "NULL");
    if (h < 0 || h >= mn_csys_handle_count(c->s)) return arg_error("handle", "no such handle");
    mn_vec3 p;
    mn_mat3 R;
    mn_status s = mn_csys_handle_value(c->s, h, &p, &R);
    out[0] = p.x;
    out[1] = p.y;
    out[2] = p.z;
    memcpy(out + 3, R.m, sizeof R.m);
    return s;
}
EXPORT(mnw_csys_residual) double mnw_csys_residual(const mnw_csys* c, int con) {
    return c && con >= 0 && con < mn_csys_constraint_count(c->s) ? mn_csys_residual(c->s, con)
                                                                 : NAN;
}
EXPORT(mnw_csys_unmet) int mnw_csys_unmet(const mnw_csys* c, int con) {
    return c && con >= 0 && con < mn_csys_constraint_count(c->s) ? mn_csys_unmet(c->s, con) : -1;
}

/* dv: tol, tol_rot, drag_tol, rcond, feedback, feedback_k, drag_damping, max_step,
 * min_progress (9); iv: method, max_iters, respect_limits (3).
 * out: status, iterations, svd_fallbacks, rows, max_violation, max_rot_violation,
 * max_drag_error, nunmet (8). */
EXPORT(mnw_csolve_defaults) void mnw_csolve_defaults(double* dv, int* iv) {
    mn_csolve_options o = mn_csolve_default();
    const double d[9] = {o.tol,        o.tol_rot,      o.drag_tol, o.rcond,       o.feedback,
                         o.feedback_k, o.drag_damping, o.max_step, o.min_progress};
    const int i[3] = {(int)o.method, o.max_iters, o.respect_limits};
    memcpy(dv, d, sizeof d);
    memcpy(iv, i, sizeof i);
}

/* A constraint solve's result as the 8 numbers the JavaScript side reads. */
static void csolve_result_out(mn_status s, const mn_csolve_result* r, double* out) {
    const double res[8] = {s,
                           r->iterations,
                           r->svd_fallbacks,
                           r->rows,
                           r->max_violation,
                           r->max_rot_violation,
                           r->max_drag_error,
                           r->nunmet};
    memcpy(out, res, sizeof res);
}

EXPORT(mnw_csys_solve)
int mnw_csys_solve(mnw_csys* c, const double* dv, const int* iv, double* out) {
    if (!c || !dv || !iv || !out) return arg_error("system", "NULL");
    if (iv[0] < 0 || iv[0] >= MN_CSOLVE_COUNT) return arg_error("options.method", "not a solver");
    mn_csolve_options o = mn_csolve_default();
    o.tol = dv[0];
    o.tol_rot = dv[1];
    o.drag_tol = dv[2];
    o.rcond = dv[3];
    o.feedback = dv[4];
    o.feedback_k = dv[5];
    o.drag_damping = dv[6];
    o.max_step = dv[7];
    o.min_progress = dv[8];
    o.method = (mn_csolver)iv[0];
    o.max_iters = iv[1];
    o.respect_limits = iv[2];
    mn_csolve_result r;
    memset(&r, 0, sizeof r);
    mn_status s = mn_csys_solve(c->s, &o, &r);
    csolve_result_out(s, &r, out);
    from_message(s, "", s == MN_OK ? "" : r.message);
    for (int i = 0; i < c->nfig; i++)
        sync_pos(c->figs[i]);
    return s;
}

/* ---- skinning rigs and the fit --------------------------------------------------------- */
EXPORT(mnw_rig_create)
mn_rig* mnw_rig_create(int dim, int nverts, const double* rest, const double* mass) {
    if (dim != 2 && dim != 3) return (void)arg_error("dim", "must be 2 or 3"), NULL;
    if (nverts < 1 || !rest) return (void)arg_error("vertices", "at least one vertex"), NULL;
    return mn_rig_create(dim, nverts, rest, mass, &g_err);
}
EXPORT(mnw_rig_destroy) void mnw_rig_destroy(mn_rig* r) {
    mn_rig_destroy(r);
}
EXPORT(mnw_rig_size) int mnw_rig_size(const mn_rig* r, int what) {
    if (!r) return -1;
    return what == 0 ? r->nverts : what == 1 ? r->nctrl : r->dim;
}
EXPORT(mnw_rig_ctrl_name) const char* mnw_rig_ctrl_name(const mn_rig* r, int c) {
    return r && c >= 0 && c < r->nctrl ? r->ctrl_name[c] : "";
}

/* v: pivot 3, tail 3. */
EXPORT(mnw_rig_add_ctrl)
int mnw_rig_add_ctrl(mn_rig* r, const char* name, int kind, const double* v, int parent,
                     int attached) {
    if (!r || !v) return arg_error("rig", "NULL");
    if (kind < MN_CTRL_POINT || kind > MN_CTRL_CAGE)
        return arg_error("kind", "not a controller kind");
    mn_ctrl_def d = mn_ctrl_default();
    d.name = name;
    d.kind = (mn_ctrl_kind)kind;
    d.pivot = mn_v3(v[0], v[1], v[2]);
    d.tail = mn_v3(v[3], v[4], v[5]);
    d.parent = parent;
    d.attached = attached;
    return mn_rig_add_ctrl(r, &d, &g_err);
}
EXPORT(mnw_rig_set_weights)
int mnw_rig_set_weights(mn_rig* r, int k, const int* idx, const double* w) {
    if (!r || !idx || !w) return arg_error("rig", "NULL");
    if (k < 1 || k > MN_SKIN_MAX_INFLUENCES) return arg_error("influences", "must be 1..8");
    return mn_rig_set_weights(r, k, idx, w, NULL, &g_err);
}
EXPORT(mnw_rig_rest_pose) void mnw_rig_rest_pose(const mn_rig* r, mn_xform* pose) {
    if (r && pose) mn_rig_rest_pose(r, pose);
}
EXPORT(mnw_rig_deform) void mnw_rig_deform(const mn_rig* r, const mn_xform* pose, double* out) {
    if (r && pose && out) mn_rig_deform(r, pose, out);
}

EXPORT(mnw_fitter_create) mn_fitter* mnw_fitter_create(const mn_rig* r, const uint8_t* fixed) {
    if (!r) return (void)arg_error("rig", "NULL"), NULL;
    return mn_fitter_create(r, fixed, &g_err);
}
EXPORT(mnw_fitter_destroy) void mnw_fitter_destroy(mn_fitter* f) {
    mn_fitter_destroy(f);
}
EXPORT(mnw_fitter_reset) void mnw_fitter_reset(mn_fitter* f) {
    mn_fitter_reset(f);
}

/* iv: max_iters, max_halvings, coupled_rotation, vertex_error, cold start (1: per-controller
 * Kabsch then the translation step first); dv: tol. out: status, iterations, energy, rms,
 * max_err (5). */
EXPORT(mnw_fit_defaults) void mnw_fit_defaults(double* dv, int* iv) {
    mn_fit_options o = mn_fit_default();
    dv[0] = o.tol;
    iv[0] = o.max_iters;
    iv[1] = o.max_halvings;
    iv[2] = o.coupled_rotation;
    iv[3] = o.vertex_error;
    iv[4] = 0;
}
EXPORT(mnw_fit)
int mnw_fit(mn_fitter* f, mn_xform* pose, const double* targets, const double* dv, const int* iv,
            double* out) {
    if (!f || !pose || !targets || !dv || !iv || !out) return arg_error("fitter", "NULL");
    mn_fit_options o = mn_fit_default();
    o.tol = dv[0];
    o.max_iters = iv[0];
    o.max_halvings = iv[1];
    o.coupled_rotation = iv[2];
    o.vertex_error = iv[3];
    if (iv[4]) {
        mn_status k = mn_fit_kabsch(f, pose, targets, 1);
        if (k != MN_OK) {
            mn_error_set(&g_err, k, "", 0, "targets",
                         "the cold start was refused (NaN or out of range)");
            return k;
        }
    }
    mn_fit_result r;
    memset(&r, 0, sizeof r);
    mn_status s = mn_fit(f, pose, targets, &o, &r);
    out[0] = s;
    out[1] = r.iterations;
    out[2] = r.energy;
    out[3] = r.rms;
    out[4] = r.max_err;
    from_message(s, "", s == MN_OK ? "" : r.message);
    return s;
}

/* ---- scene documents (scene.h): what a scene holds ---------------------------------- */

/* A scene document (docs/scene.md) read by the reader of `marionette` (messages
 * "name:line: field: text"); NULL on failure. */
EXPORT(mnw_scene_read) mn_scene* mnw_scene_read(const char* text, size_t len, const char* name) {
    mn_scene* sc = NULL;
    if (!text) return (void)arg_error("text", "NULL"), NULL;
    if (mn_scene_read_mem(text, len, name, &sc, &g_err) != MN_OK) return NULL;
    return sc;
}
EXPORT(mnw_scene_destroy) void mnw_scene_destroy(mn_scene* sc) {
    mn_scene_destroy(sc);
}
/* 0 frames, 1 solver (-1: none given), 2 iterations, 3 figures. */
EXPORT(mnw_scene_int) int mnw_scene_int(const mn_scene* sc, int what) {
    if (!sc) return -1;
    switch (what) {
    case 0:
        return mn_scene_frames(sc);
    case 1:
        return mn_scene_solver(sc);
    case 2:
        return mn_scene_iterations(sc);
    case 3:
        return mn_scene_figure_count(sc);
    default:
        return -1;
    }
}
/* 0 the root joint's name ("" when none), 1 figure i's name, 2 its file, 3 its sequence. */
EXPORT(mnw_scene_str) const char* mnw_scene_str(const mn_scene* sc, int what, int i) {
    const char* v = NULL;
    if (sc && what == 0) v = mn_scene_root(sc);
    if (sc && what == 1) v = mn_scene_figure_name(sc, i);
    if (sc && what == 2) v = mn_scene_figure_file(sc, i);
    if (sc && what == 3) v = mn_scene_figure_sequence(sc, i);
    return v ? v : "";
}
/* Figure i's place: position (3) then rotation (w x y z) into out. */
EXPORT(mnw_scene_place) void mnw_scene_place(const mn_scene* sc, int i, double* out) {
    if (!sc || !out) return;
    mn_xform x = mn_scene_figure_place(sc, i);
    mn_quat q = mn_quat_from_mat3(&x.R);
    out[0] = x.p.x, out[1] = x.p.y, out[2] = x.p.z;
    out[3] = q.w, out[4] = q.x, out[5] = q.y, out[6] = q.z;
}

/* ---- sequences (anim.h): keys, interpolation, sampling ------------------------------- */
typedef struct mnw_seq {
    mn_seq* s;
    mnw_figure* f;
    mn_seq_doc_info* info; /* read from a document: its figure, scale and contacts */
    mn_seq_solver* solver; /* constrained in-betweens, made on first use */
    double* work;          /* the layers' blend (layers.h), made with the first layer */
} mnw_seq;

EXPORT(mnw_seq_create) mnw_seq* mnw_seq_create(mnw_figure* f, double fps, int rot, int trans) {
    if (!f) return (void)arg_error("figure", "NULL"), NULL;
    if (rot < 0 || rot >= MN_INTERP_COUNT || trans < 0 || trans >= MN_INTERP_COUNT)
        return (void)arg_error("options.interpolation", "not an interpolation mode"), NULL;
    mn_seq_def def = mn_seq_def_default();
    if (fps > 0) def.fps = fps;
    if (rot) def.rot = (mn_interp)rot;
    if (trans) def.trans = (mn_interp)trans;
    mnw_seq* q = calloc(1, sizeof *q);
    if (!q) return (void)mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), NULL;
    q->s = mn_seq_create(f->m, &def, &g_err);
    if (!q->s) {
        free(q);
        return NULL;
    }
    q->f = f;
    return q;
}
EXPORT(mnw_seq_destroy) void mnw_seq_destroy(mnw_seq* q) {
    if (!q) return;
    free(q->info);
    mn_seq_solver_destroy(q->solver);
    mn_seq_destroy(q->s);
    free(q->work);
    free(q);
}
/* A sequence document (docs/sequence.md) of f's figure, read by the reader of `marionette`
 * (messages "name:line: field: text"): its "figure" member is kept (mnw_seq_doc_str) and not
 * read, f is the figure. A document of several figures is refused. */
EXPORT(mnw_seq_read_doc)
mnw_seq* mnw_seq_read_doc(mnw_figure* f, const char* text, size_t len, const char* name) {
    if (!f || !text) return (void)arg_error(f ? "text" : "figure", "NULL"), NULL;
    mnw_seq* q = calloc(1, sizeof *q);
    if (q) q->info = calloc(1, sizeof *q->info);
    if (!q || !q->info) {
        if (q) free(q);
        return (void)mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), NULL;
    }
    mn_model* none = NULL;
    if (mn_seqdoc_read_mem(text, len, name, NULL, NULL, NULL, f->m, &none, &q->s, q->info, NULL,
                           &g_err) != MN_OK) {
        free(q->info);
        free(q);
        return NULL;
    }
    q->f = f;
    /* the layers' blend, as mnw_seq_add_layer makes it */
    if (mn_seq_layer_count(q->s) > 0 &&
        !(q->work = malloc(sizeof(double) * (size_t)mn_seq_blend_work_size(q->s)))) {
        mnw_seq_destroy(q);
        return (void)mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), NULL;
    }
    return q;
}

/* What the document named: 0 its "figure" ("" for a sequence not read from one). */
EXPORT(mnw_seq_doc_str) const char* mnw_seq_doc_str(const mnw_seq* q, int what) {
    return q && q->info && what == 0 ? q->info->figure : "";
}
/* 0: its "scale" (0 when absent); 1: its contact tracks. */
EXPORT(mnw_seq_doc_number) double mnw_seq_doc_number(const mnw_seq* q, int what) {
    if (!q || !q->info) return 0;
    return what == 0 ? q->info->scale : what == 1 ? q->info->ncontact : 0;
}

/* The sequence as a document (the text the command line writes): its figure named figure
 * (NULL or "": the one it was read with), scale > 0 written for a BVH figure (< 0: the one
 * it was read with), the contact tracks it was read with. Malloc'd (free with mnw_free), its
 * length in *len; NULL on failure. */
EXPORT(mnw_seq_write_doc)
char* mnw_seq_write_doc(const mnw_seq* q, const char* figure, double scale, int* len) {
    if (!q || !len) return (void)arg_error("sequence", "NULL"), NULL;
    mn_seq_doc_info* info = calloc(1, sizeof *info);
    if (!info) return (void)mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), NULL;
    if (q->info) *info = *q->info;
    if (figure && *figure) snprintf(info->figure, sizeof info->figure, "%s", figure);
    if (scale >= 0) info->scale = scale;
    char* text = NULL;
    size_t n = 0;
    mn_status st = info->figure[0]
                       ? mn_seq_write_doc_mem(q->s, info, &text, &n, &g_err)
                       : mn_error_set(&g_err, MN_ERR_ARG, "", 0, "figure", "no figure to name");
    free(info);
    if (st != MN_OK) return NULL;
    *len = (int)n;
    return text;
}

static void drop_solver(mnw_seq* q) {
    mn_seq_solver_destroy(q->solver);
    q->solver = NULL;
}
EXPORT(mnw_seq_set_key) int mnw_seq_set_key(mnw_seq* q, double frame, const double* state) {
    if (!q || !state) return arg_error("sequence", "NULL");
    drop_solver(q);
    return mn_seq_set_key(q->s, frame, state, &g_err);
}
EXPORT(mnw_seq_remove_key) int mnw_seq_remove_key(mnw_seq* q, int k) {
    if (!q) return arg_error("sequence", "NULL");
    if (k < 0 || k >= mn_seq_key_count(q->s)) return arg_error("key", "no such key");
    drop_solver(q);
    return mn_seq_remove_key(q->s, k);
}
EXPORT(mnw_seq_set_key_tcb)
int mnw_seq_set_key_tcb(mnw_seq* q, int k, double t, double c, double b) {
    if (!q) return arg_error("sequence", "NULL");
    if (k < 0 || k >= mn_seq_key_count(q->s)) return arg_error("key", "no such key");
    drop_solver(q);
    return status_of(mn_seq_set_key_tcb(q->s, k, t, c, b), "tcb");
}
/* what: 0 key count, 1 handle count, 2 constraint count. */
EXPORT(mnw_seq_count) int mnw_seq_count(const mnw_seq* q, int what) {
    if (!q) return -1;
    return what == 0   ? mn_seq_key_count(q->s)
           : what == 1 ? mn_seq_handle_count(q->s)
                       : mn_seq_constraint_count(q->s);
}
/* what: 0 fps, 1 start, 2 end, 3 frame of key k. */
EXPORT(mnw_seq_number) double mnw_seq_number(const mnw_seq* q, int what, int k) {
    if (!q) return NAN;
    switch (what) {
    case 0:
        return mn_seq_fps(q->s);
    case 1:
        return mn_seq_start(q->s);
    case 2:
        return mn_seq_end(q->s);
    case 3:
        return k >= 0 && k < mn_seq_key_count(q->s) ? mn_seq_key_frame(q->s, k) : NAN;
    default:
        return NAN;
    }
}
EXPORT(mnw_seq_key_q) const double* mnw_seq_key_q(const mnw_seq* q, int k) {
    return q ? mn_seq_key_q(q->s, k) : NULL;
}
EXPORT(mnw_seq_set_interp) int mnw_seq_set_interp(mnw_seq* q, int joint, int rot, int trans) {
    if (!q) return arg_error("sequence", "NULL");
    if (rot < 0 || rot >= MN_INTERP_COUNT || trans < 0 || trans >= MN_INTERP_COUNT)
        return arg_error("interpolation", "not an interpolation mode");
    drop_solver(q);
    mn_status s = joint < 0
                      ? mn_seq_set_default_interp(q->s, (mn_interp)rot, (mn_interp)trans)
                      : mn_seq_set_joint_interp(q->s, joint, (mn_interp)rot, (mn_interp)trans);
    if (s != MN_OK)
        mn_error_set(&g_err, s, "", 0, "interpolation", "%s",
                     "a mode that does not apply to that joint or channel");
    return s;
}
/* Keys from a motion (nframes x nq); out: keys added, largest error left. */
EXPORT(mnw_seq_add_motion)
int mnw_seq_add_motion(mnw_seq* q, const double* motion, int nframes, double first, double tol,
                       double* out) {
    if (!q || !motion || !out) return arg_error("sequence", "NULL");
    if (nframes < 1) return arg_error("motion", "no frames");
    drop_solver(q);
    int nkeys = 0;
    double err = 0;
    mn_status s = mn_seq_add_motion(q->s, motion, nframes, first, tol, &nkeys, &err, &g_err);
    out[0] = nkeys;
    out[1] = err;
    return s;
}
/* The plain in-between at frame into the figure's state, then FK. */
EXPORT(mnw_seq_sample) int mnw_seq_sample(mnw_seq* q, double frame) {
    if (!q) return arg_error("sequence", "NULL");
    mn_status s = mn_seq_sample_data(q->s, q->f->d, frame);
    if (s != MN_OK) return status_of(s, "frame");
    sync_pos(q->f);
    return MN_OK;
}
/* The plain in-between at frame into q_out (nq). */
EXPORT(mnw_seq_sample_q) int mnw_seq_sample_q(const mnw_seq* q, double frame, double* out) {
    if (!q || !out) return arg_error("sequence", "NULL");
    return status_of(mn_seq_sample(q->s, frame, out), "frame");
}

/* Handles and constraints over frame ranges; iv as mnw_csys_add_constraint plus lock, the
 * orientation axis (iv[7]) and the target keys' interpolation (iv[8], 0: linear); v as there
 * plus start, end (the last two numbers after the polygon: v[18 + 3 * 16], +1). */
EXPORT(mnw_seq_add_handle)
int mnw_seq_add_handle(mnw_seq* q, int type, int joint, double x, double y, double z,
                       const char* name) {
    if (!q) return arg_error("sequence", "NULL");
    if (type < MN_HANDLE_POINT || type > MN_HANDLE_COM)
        return arg_error("type", "not a handle type");
    drop_solver(q);
    mn_handle_def d = mn_handle_default();
    d.type = (mn_handle_type)type;
    d.joint = joint;
    d.point = mn_v3(x, y, z);
    d.name = name && *name ? name : NULL;
    return mn_seq_add_handle(q->s, &d, &g_err);
}
EXPORT(mnw_seq_add_constraint)
int mnw_seq_add_constraint(mnw_seq* q, const int* iv, const double* v, const char* name) {
    if (!q || !iv || !v) return arg_error("sequence", "NULL");
    if (iv[0] < 0 || iv[0] >= MN_CON_TYPE_COUNT) return arg_error("type", "not a constraint type");
    if (iv[3] < 0 || iv[3] > MN_MAX_POLYGON) return arg_error("polygon", "too many vertices");
    drop_solver(q);
    mn_seq_constraint_def d = mn_seq_constraint_default();
    d.con.type = (mn_constraint_type)iv[0];
    d.con.handle = iv[1];
    d.con.handle2 = iv[2];
    d.con.npolygon = iv[3];
    d.con.priority = iv[4];
    d.con.enabled = iv[5];
    d.lock = iv[6];
    d.con.axis = iv[7];
    if (iv[8]) d.target_interp = (mn_interp)iv[8];
    d.con.target = mn_v3(v[0], v[1], v[2]);
    d.con.target_rot = (mn_quat){v[3], v[4], v[5], v[6]};
    d.con.origin = mn_v3(v[7], v[8], v[9]);
    d.con.dir = mn_v3(v[10], v[11], v[12]);
    d.con.up = mn_v3(v[13], v[14], v[15]);
    d.con.margin = v[16];
    d.con.weight = v[17];
    for (int i = 0; i < d.con.npolygon; i++)
        d.con.polygon[i] = mn_v3(v[18 + 3 * i], v[19 + 3 * i], v[20 + 3 * i]);
    if (!isnan(v[18 + 3 * MN_MAX_POLYGON]))
        d.start = v[18 + 3 * MN_MAX_POLYGON]; /* NaN: the default */
    if (!isnan(v[19 + 3 * MN_MAX_POLYGON])) d.end = v[19 + 3 * MN_MAX_POLYGON];
    d.con.name = name && *name ? name : NULL;
    return mn_seq_add_constraint(q->s, &d, &g_err);
}

/* A constrained in-between into the figure (the solver is made on first use and after
 * every edit). dv, iv: mnw_csolve_defaults' options, then dv[9] relax, iv[3] warm_start,
 * iv[4] balance, iv[5] constraints. out: as mnw_csys_solve. */
EXPORT(mnw_seq_solve_frame)
int mnw_seq_solve_frame(mnw_seq* q, double frame, const double* dv, const int* iv, double* out) {
    if (!q || !dv || !iv || !out) return arg_error("sequence", "NULL");
    if (iv[0] < 0 || iv[0] >= MN_CSOLVE_COUNT) return arg_error("options.method", "not a solver");
    if (!q->solver && !(q->solver = mn_seq_solver_create(q->s, q->f->d, &g_err)))
        return g_err.status;
    mn_seq_solve_options o = mn_seq_solve_options_default();
    o.solve.tol = dv[0];
    o.solve.tol_rot = dv[1];
    o.solve.drag_tol = dv[2];
    o.solve.rcond = dv[3];
    o.solve.feedback = dv[4];
    o.solve.feedback_k = dv[5];
    o.solve.drag_damping = dv[6];
    o.solve.max_step = dv[7];
    o.solve.min_progress = dv[8];
    o.relax = dv[9];
    o.solve.method = (mn_csolver)iv[0];
    o.solve.max_iters = iv[1];
    o.solve.respect_limits = iv[2];
    o.warm_start = iv[3];
    o.balance = iv[4];
    o.constraints = iv[5];
    mn_csolve_result r;
    memset(&r, 0, sizeof r);
    mn_status s = mn_seq_solve_frame(q->solver, frame, &o, &r);
    csolve_result_out(s, &r, out);
    from_message(s, "frame", s == MN_OK ? "" : r.message[0] ? r.message : "refused");
    sync_pos(q->f);
    return s;
}
/* dv[9], iv[3..5] of mnw_seq_solve_frame from mn_seq_solve_options_default (the csolve part
 * as mnw_csolve_defaults). */
EXPORT(mnw_seq_solve_defaults) void mnw_seq_solve_defaults(double* dv, int* iv) {
    mn_seq_solve_options o = mn_seq_solve_options_default();
    const double d[10] = {o.solve.tol,          o.solve.tol_rot,
                          o.solve.drag_tol,     o.solve.rcond,
                          o.solve.feedback,     o.solve.feedback_k,
                          o.solve.drag_damping, o.solve.max_step,
                          o.solve.min_progress, o.relax};
    const int i[6] = {(int)o.solve.method, o.solve.max_iters, o.solve.respect_limits,
                      o.warm_start,        o.balance,         o.constraints};
    memcpy(dv, d, sizeof d);
    memcpy(iv, i, sizeof i);
}

/* ---- sequence edits (Welman 6.1.2): clips, invertible edit records, undo -------------- */
/* A clip or an edit's key set crosses as a pointer to its mn_keyset: n, nq (ints), span,
 * and the frame (n), q (n x nq) and tcb (n x 3) arrays, read in place. */
EXPORT(mnw_keyset_create) mn_keyset* mnw_keyset_create(int n, int nq, double span) {
    if (n < 0 || nq < 0) return (void)arg_error("clip", "negative size"), NULL;
    mn_keyset* k = calloc(1, sizeof *k);
    if (k) {
        k->frame = malloc(sizeof(double) * (size_t)(n + 1));
        k->q = malloc(sizeof(double) * (size_t)(n + 1) * (size_t)(nq ? nq : 1));
        k->tcb = calloc(3 * (size_t)(n + 1), sizeof(double));
    }
    if (!k || !k->frame || !k->q || !k->tcb) {
        if (k) mn_keyset_free(k);
        free(k);
        return (void)mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), NULL;
    }
    k->n = n;
    k->nq = nq;
    k->span = span;
    return k;
}
EXPORT(mnw_keyset_destroy) void mnw_keyset_destroy(mn_keyset* k) {
    mn_keyset_free(k);
    free(k);
}
/* what: 0 n, 1 nq. */
EXPORT(mnw_keyset_int) int mnw_keyset_int(const mn_keyset* k, int what) {
    return !k ? -1 : what == 0 ? k->n : k->nq;
}
EXPORT(mnw_keyset_span) double mnw_keyset_span(const mn_keyset* k) {
    return k ? k->span : NAN;
}
/* what: 0 frame, 1 q, 2 tcb. */
EXPORT(mnw_keyset_ptr) double* mnw_keyset_ptr(mn_keyset* k, int what) {
    return !k ? NULL : what == 0 ? k->frame : what == 1 ? k->q : k->tcb;
}
EXPORT(mnw_edit_destroy) void mnw_edit_destroy(mn_seq_edit* e) {
    mn_seq_edit_free(e);
    free(e);
}
/* which: 0 the keys removed (as they were), 1 the keys added. */
EXPORT(mnw_edit_keys) mn_keyset* mnw_edit_keys(mn_seq_edit* e, int which) {
    return !e ? NULL : which == 0 ? &e->removed : &e->added;
}
EXPORT(mnw_edit_invert) void mnw_edit_invert(mn_seq_edit* e) {
    mn_seq_edit_invert(e);
}

static int range_args(double f0, double f1) {
    if (!isfinite(f0) || !isfinite(f1)) return arg_error("range", "expected finite frames");
    if (!(f1 > f0)) return arg_error("range", "empty: the end must be after the start");
    return 0;
}
static mn_seq_edit* new_edit(void) {
    mn_seq_edit* e = calloc(1, sizeof *e);
    if (!e) mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory");
    return e;
}
/* An edit's outcome: the record (owned by the caller) or NULL with the error set. */
static mn_seq_edit* edit_done(mn_status s, mn_seq_edit* e, const char* field, const char* what) {
    if (s == MN_OK) return e;
    free(e);
    if (s == MN_ERR_NOMEM)
        mn_error_set(&g_err, s, "", 0, "", "out of memory");
    else
        mn_error_set(&g_err, s, "", 0, field, "%s", what);
    return NULL;
}

/* The keys of [f0, f1) as a new clip (frames relative to f0). */
EXPORT(mnw_seq_copy) mn_keyset* mnw_seq_copy(const mnw_seq* q, double f0, double f1) {
    if (!q) return (void)arg_error("sequence", "NULL"), NULL;
    if (range_args(f0, f1)) return NULL;
    mn_keyset* k = calloc(1, sizeof *k);
    if (!k || mn_seq_copy(q->s, f0, f1, k) != MN_OK) {
        free(k);
        return (void)mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), NULL;
    }
    return k;
}
/* Cut: *clip receives the clip (a new keyset), the result is the edit record. */
EXPORT(mnw_seq_cut) mn_seq_edit* mnw_seq_cut(mnw_seq* q, double f0, double f1, mn_keyset** clip) {
    if (!q || !clip) return (void)arg_error("sequence", "NULL"), NULL;
    if (range_args(f0, f1)) return NULL;
    mn_seq_edit* e = new_edit();
    mn_keyset* k = calloc(1, sizeof *k);
    if (!e || !k) {
        free(e);
        free(k);
        return (void)mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), NULL;
    }
    drop_solver(q);
    mn_status s = mn_seq_cut(q->s, f0, f1, k, e);
    if (s != MN_OK)
        free(k);
    else
        *clip = k;
    return edit_done(s, e, "range", "refused");
}
static mn_seq_edit* place(mnw_seq* q, const mn_keyset* clip, double at, int insert) {
    if (!q || !clip) return (void)arg_error("clip", "NULL"), NULL;
    if (!isfinite(at)) return (void)arg_error("at", "expected a finite frame"), NULL;
    if (clip->nq != q->f->m->nq)
        return (void)arg_error("clip", "its keys are states of another figure"), NULL;
    mn_seq_edit* e = new_edit();
    if (!e) return NULL;
    drop_solver(q);
    mn_status s = insert ? mn_seq_insert(q->s, clip, at, e) : mn_seq_paste(q->s, clip, at, e);
    return edit_done(s, e, "clip",
                     "refused: the span must be > 0, every key's frame in [0, span) and "
                     "once only, every state finite");
}
/* Paste replaces the keys of [at, at + span); insert opens a gap of span at `at` first. */
EXPORT(mnw_seq_paste) mn_seq_edit* mnw_seq_paste(mnw_seq* q, const mn_keyset* clip, double at) {
    return place(q, clip, at, 0);
}
EXPORT(mnw_seq_insert) mn_seq_edit* mnw_seq_insert(mnw_seq* q, const mn_keyset* clip, double at) {
    return place(q, clip, at, 1);
}
/* what: 0 delete [f0, f1) and close the gap, 1 stretch about f0 by x, 2 slide by x. */
EXPORT(mnw_seq_range_edit)
mn_seq_edit* mnw_seq_range_edit(mnw_seq* q, int what, double f0, double f1, double x) {
    if (!q) return (void)arg_error("sequence", "NULL"), NULL;
    if (range_args(f0, f1)) return NULL;
    if (what == 1 && !(x > 0 && isfinite(x)))
        return (void)arg_error("factor", "expected a finite number > 0"), NULL;
    if (what == 2 && !isfinite(x))
        return (void)arg_error("delta", "expected a finite number"), NULL;
    if (what < 0 || what > 2) return (void)arg_error("what", "unknown edit"), NULL;
    mn_seq_edit* e = new_edit();
    if (!e) return NULL;
    drop_solver(q);
    mn_status s = what == 0   ? mn_seq_delete(q->s, f0, f1, e)
                  : what == 1 ? mn_seq_stretch(q->s, f0, f1, x, e)
                              : mn_seq_slide(q->s, f0, f1, x, e);
    return edit_done(s, e, "range", "refused");
}
/* Applies the inverse of e (the sequence must be as e left it; else nothing changes). */
EXPORT(mnw_seq_undo) int mnw_seq_undo(mnw_seq* q, const mn_seq_edit* e) {
    if (!q || !e) return arg_error("edit", "NULL");
    drop_solver(q);
    mn_status s = mn_seq_undo(q->s, e);
    if (s == MN_ERR_ARG)
        mn_error_set(&g_err, s, "", 0, "edit", "%s",
                     "the sequence is not as this edit left it: nothing changed");
    else if (s != MN_OK)
        mn_error_set(&g_err, s, "", 0, "edit", "%s", "out of memory");
    return s;
}

/* ---- animated constraint targets and balance (Welman 7.2.1) --------------------------- */
/* v: frame, pos 3, dir 3, rot 4 (w x y z) (11 numbers). */
EXPORT(mnw_seq_set_target_key) int mnw_seq_set_target_key(mnw_seq* q, int c, const double* v) {
    if (!q || !v) return arg_error("sequence", "NULL");
    if (c < 0 || c >= mn_seq_constraint_count(q->s))
        return arg_error("constraint", "no such constraint");
    drop_solver(q);
    mn_target_key k = {v[0], mn_v3(v[1], v[2], v[3]), mn_v3(v[4], v[5], v[6]),
                       (mn_quat){v[7], v[8], v[9], v[10]}};
    return mn_seq_set_target_key(q->s, c, &k, &g_err);
}
EXPORT(mnw_seq_target_key_count) int mnw_seq_target_key_count(const mnw_seq* q, int c) {
    return q ? mn_seq_target_key_count(q->s, c) : -1;
}
/* Target key k of constraint c (k >= 0), or the target at frame x (k < 0), into out as v
 * of mnw_seq_set_target_key. */
EXPORT(mnw_seq_target) int mnw_seq_target(const mnw_seq* q, int c, int k, double x, double* out) {
    if (!q || !out) return arg_error("sequence", "NULL");
    if (c < 0 || c >= mn_seq_constraint_count(q->s))
        return arg_error("constraint", "no such constraint");
    mn_target_key t;
    if (k >= 0) {
        const mn_target_key* p = mn_seq_target_key(q->s, c, k);
        if (!p) return arg_error("key", "no such target key");
        t = *p;
    } else if (mn_seq_target_at(q->s, c, x, &t) != MN_OK) {
        return arg_error("frame", "the constraint has no target keys, or the frame is not finite");
    }
    const double o[11] = {t.frame, t.pos.x, t.pos.y, t.pos.z, t.dir.x, t.dir.y,
                          t.dir.z, t.rot.w, t.rot.x, t.rot.y, t.rot.z};
    memcpy(out, o, sizeof o);
    return MN_OK;
}
/* v: up 3, margin, start, end, then npolygon x 3 points. */
EXPORT(mnw_seq_add_balance) int mnw_seq_add_balance(mnw_seq* q, const double* v, int npolygon) {
    if (!q || !v) return arg_error("sequence", "NULL");
    if (npolygon < 3 || npolygon > MN_MAX_POLYGON)
        return arg_error("polygon", "expected 3 to 16 points");
    drop_solver(q);
    mn_vec3 poly[MN_MAX_POLYGON];
    for (int i = 0; i < npolygon; i++)
        poly[i] = mn_v3(v[6 + 3 * i], v[7 + 3 * i], v[8 + 3 * i]);
    return mn_seq_add_balance(q->s, poly, npolygon, mn_v3(v[0], v[1], v[2]), v[3], v[4], v[5],
                              &g_err);
}

/* ---- layers and time warps (layers.h) -------------------------------------------------- */
/* A layer on top (mode 0 override, 1 additive); its index, -1 on error. */
EXPORT(mnw_seq_add_layer) int mnw_seq_add_layer(mnw_seq* q, const char* name, int mode) {
    if (!q) return arg_error("sequence", "NULL"), -1;
    drop_solver(q);
    int i = mn_seq_add_layer(q->s, name && name[0] ? name : NULL, (mn_layer_mode)mode, &g_err);
    if (i >= 0 && !q->work &&
        !(q->work = malloc(sizeof(double) * (size_t)mn_seq_blend_work_size(q->s)))) {
        mn_seq_remove_layer(q->s, i);
        return mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), -1;
    }
    return i;
}
/* Key of layer i (as mnw_seq_set_key). */
EXPORT(mnw_seq_layer_set_key)
int mnw_seq_layer_set_key(mnw_seq* q, int i, double frame, const double* state) {
    if (!q || !state || !mn_seq_layer(q->s, i)) return arg_error("layer", "no such layer"), -1;
    drop_solver(q);
    return mn_seq_set_key(mn_seq_layer(q->s, i), frame, state, &g_err);
}
EXPORT(mnw_seq_layer_set_weights)
int mnw_seq_layer_set_weights(mnw_seq* q, int i, int n, const double* frames, const double* w) {
    if (!q) return arg_error("sequence", "NULL");
    drop_solver(q);
    return mn_seq_set_layer_weights(q->s, i, n, frames, w, &g_err);
}
/* mask: njoint weights, or NULL for every joint at 1. */
EXPORT(mnw_seq_layer_set_mask) int mnw_seq_layer_set_mask(mnw_seq* q, int i, const double* mask) {
    if (!q) return arg_error("sequence", "NULL");
    drop_solver(q);
    return mn_seq_set_layer_mask(q->s, i, mask, &g_err);
}
/* The time warp of the sequence (layer -1) or of layer i: n keys t, s, speed (NaN: PCHIP). */
EXPORT(mnw_seq_set_warp)
int mnw_seq_set_warp(mnw_seq* q, int layer, int n, const double* t, const double* s,
                     const double* speed) {
    if (!q) return arg_error("sequence", "NULL");
    mn_seq* target = layer < 0 ? q->s : mn_seq_layer(q->s, layer);
    if (!target) return arg_error("layer", "no such layer");
    drop_solver(q);
    return mn_seq_set_warp(target, n, t, s, speed, &g_err);
}
/* Layer i: what 0 mode, 1 keys, 2 weight keys, 3 warp keys, 4 has a mask; -1 out of range. */
EXPORT(mnw_seq_layer_int) int mnw_seq_layer_int(const mnw_seq* q, int i, int what) {
    const mn_seq* l = q ? mn_seq_layer(q->s, i) : NULL;
    if (!l) return -1;
    switch (what) {
    case 0:
        return (int)mn_seq_layer_mode(q->s, i);
    case 1:
        return mn_seq_key_count(l);
    case 2:
        return mn_seq_layer_weight_count(q->s, i);
    case 3:
        return mn_seq_warp_count(l);
    case 4:
        return mn_seq_layer_mask(q->s, i) != NULL;
    default:
        return -1;
    }
}
EXPORT(mnw_seq_layer_count) int mnw_seq_layer_count(const mnw_seq* q) {
    return q ? mn_seq_layer_count(q->s) : 0;
}
EXPORT(mnw_seq_layer_name) const char* mnw_seq_layer_name(const mnw_seq* q, int i) {
    return q ? mn_seq_layer_name(q->s, i) : NULL;
}
EXPORT(mnw_seq_layer_mask) const double* mnw_seq_layer_mask(const mnw_seq* q, int i) {
    return q ? mn_seq_layer_mask(q->s, i) : NULL;
}
/* Weight key k of layer i into out[0] (frame), out[1] (weight); out[2] the weight at frame x. */
EXPORT(mnw_seq_layer_weight)
int mnw_seq_layer_weight(const mnw_seq* q, int i, int k, double x, double* out) {
    if (!q || !out || !mn_seq_layer(q->s, i)) return arg_error("layer", "no such layer");
    out[0] = out[1] = 0;
    mn_seq_layer_weight_key(q->s, i, k, &out[0], &out[1]);
    out[2] = mn_seq_layer_weight(q->s, i, x);
    return MN_OK;
}
/* The sequence frame at output frame t (layer -1) or layer i's frame at the base's frame t. */
EXPORT(mnw_seq_warp) double mnw_seq_warp(const mnw_seq* q, int layer, double t) {
    const mn_seq* target = !q ? NULL : layer < 0 ? q->s : mn_seq_layer(q->s, layer);
    return target ? mn_seq_warp(target, t) : NAN;
}
/* The blended in-between (base and layers) at frame into out (nq). */
EXPORT(mnw_seq_sample_blend_q)
int mnw_seq_sample_blend_q(const mnw_seq* q, double frame, double* out) {
    if (!q || !out) return arg_error("sequence", "NULL");
    return status_of(mn_seq_sample_blend(q->s, frame, out, q->work), "frame");
}

/* ---- takes (takes.h) ------------------------------------------------------------------- */
/* The feet of a figure (by name) into out: left and right joint, leg length. */
EXPORT(mnw_take_feet) int mnw_take_feet(const mnw_figure* f, double* out) {
    if (!f || !out) return arg_error("figure", "NULL");
    mn_take_feet ft;
    mn_status s = mn_take_feet_find(f->m, NULL, &ft, &g_err);
    if (s != MN_OK) return s;
    out[0] = ft.joint[0], out[1] = ft.joint[1], out[2] = ft.leg;
    return MN_OK;
}
/* Crossfade of a into b; opt: at, length, b_min, b_max, lock (0/1), b_frame (< 0: align the
 * phase). Aligning the phase with b_max < 0, B's frames searched are the window
 * mn_crossfade_window chooses, as `anim crossfade` without --b-range does. info: a_frame,
 * b_frame, length, phase_cost, nframes, locks, max_violation, then the frames searched
 * (b_min, b_max), 1 when the window was chosen, and B's motion of interest (start, end;
 * -1 when none stands out or the window was given). Returns the frames (free with
 * mnw_free), NULL on error. */
EXPORT(mnw_take_crossfade)
double* mnw_take_crossfade(const mnw_figure* f, const double* qa, int na, const double* qb, int nb,
                           double fps, const double* opt, double* info) {
    if (!f || !qa || !qb || !opt || !info) return (void)arg_error("figure", "NULL"), NULL;
    mn_take_feet ft;
    if (mn_take_feet_find(f->m, NULL, &ft, &g_err) != MN_OK) return NULL;
    mn_crossfade_options o = mn_crossfade_default();
    o.at = opt[0], o.length = (int)opt[1], o.b_min = (int)opt[2], o.b_max = (int)opt[3];
    o.lock_feet = opt[4] != 0;
    if (opt[5] >= 0) o.align_phase = 0, o.b_frame = (int)opt[5];
    int chosen = o.align_phase && o.b_max < 0;
    mn_crossfade_window_result w = {o.b_min, o.b_max, -1, -1, 0, 0};
    if (chosen) {
        if (mn_crossfade_window(f->m, qa, na, qb, nb, fps, &ft, o.length, &w, &g_err) != MN_OK)
            return NULL;
        o.b_min = w.b_min, o.b_max = w.b_max;
    }
    mn_crossfade_result r;
    if (mn_crossfade(f->m, qa, na, qb, nb, fps, &ft, &o, &r, &g_err) != MN_OK) return NULL;
    info[0] = r.a_frame, info[1] = r.b_frame, info[2] = r.length, info[3] = r.phase_cost;
    info[4] = r.nframes, info[5] = r.locks, info[6] = r.max_violation;
    info[7] = o.b_min, info[8] = o.b_max, info[9] = chosen;
    info[10] = w.interest_start, info[11] = w.interest_end;
    return r.q;
}
/* Root motion out: track (n x 3) and the take in place (n x nq; may be q). */
EXPORT(mnw_take_root_extract)
int mnw_take_root_extract(const mnw_figure* f, const double* q, int n, double* track,
                          double* in_place) {
    if (!f || !q || !track || n < 0) return arg_error("frames", "NULL");
    return status_of(mn_take_root_extract(f->m, q, n, mn_v3(0, 1, 0), track, in_place), "figure");
}
/* Root motion back in; turn (radians per second) bends the track along a turning path first. */
EXPORT(mnw_take_root_apply)
int mnw_take_root_apply(const mnw_figure* f, const double* in_place, int n, double* track,
                        double fps, double turn, double* q) {
    if (!f || !in_place || !track || !q || n < 0) return arg_error("frames", "NULL");
    if (turn != 0) mn_take_root_turn(track, n, fps, turn);
    return status_of(mn_take_root_apply(f->m, in_place, n, mn_v3(0, 1, 0), track, q), "figure");
}
/* A seamless loop, repeated `cycles` times; info: start, end, blend, match, step (3), frames. */
EXPORT(mnw_take_loop)
double* mnw_take_loop(const mnw_figure* f, const double* q, int n, double fps, int min_len,
                      int blend, int cycles, double* info) {
    if (!f || !q || !info) return (void)arg_error("frames", "NULL"), NULL;
    mn_loop_result r;
    double* out = NULL;
    int nout = 0;
    if (mn_take_loop(f->m, q, n, fps, mn_v3(0, 1, 0), min_len, blend, &r, &g_err) != MN_OK)
        return NULL;
    mn_status s = mn_take_loop_repeat(f->m, &r, mn_v3(0, 1, 0), cycles, &out, &nout);
    free(r.q);
    if (s != MN_OK) return (void)status_of(s, "cycles"), NULL;
    info[0] = r.start, info[1] = r.end, info[2] = r.blend, info[3] = r.match;
    info[4] = r.step[0], info[5] = r.step[1], info[6] = r.step[2], info[7] = nout;
    return out;
}
/* A retimed take; info: nframes, flights, gravity, apex, apex retimed. */
EXPORT(mnw_take_retime)
double* mnw_take_retime(const mnw_figure* f, const double* q, int n, double fps, int nwarp,
                        const double* t, const double* s, const double* speed, int ballistic,
                        double* info) {
    if (!f || !q || !info) return (void)arg_error("frames", "NULL"), NULL;
    mn_take_feet ft;
    if (ballistic && mn_take_feet_find(f->m, NULL, &ft, &g_err) != MN_OK) return NULL;
    mn_retime_result r;
    if (mn_take_retime(f->m, q, n, fps, ballistic ? &ft : NULL, nwarp, t, s, speed, ballistic, &r,
                       &g_err) != MN_OK)
        return NULL;
    info[0] = r.nframes, info[1] = r.flights, info[2] = r.gravity, info[3] = r.apex[0];
    info[4] = r.apex[1];
    return r.q;
}

/* ---- soft bodies coupled both ways to a rig (skin.h; Wu & Umetani 2023) --------------- */
/* A volumetric body: the lattice of tetrahedra that embeds a closed surface (dim 3), or
 * the triangles of a shape in the plane (dim 2); lumped masses from a density; the rig
 * over its vertices (transferred from a surface rig to the lattice's nodes) and their
 * coupling. */
typedef struct mnw_soft {
    int dim;
    mn_lattice* L; /* dim 3 */
    mn_softbody* sb;
    double* rest; /* nverts x 3: where a reset puts the body */
    double* mass; /* nverts */
    double* surf; /* nsurf x 3: the embedded surface (dim 3) */
    int nsurf;
    mn_rig* rig; /* over the body's vertices with its masses (owned) */
    mn_coupled* c;
    uint8_t* driven;
    mn_coupling_options co;
} mnw_soft;

static double soft_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

EXPORT(mnw_soft_destroy) void mnw_soft_destroy(mnw_soft* s) {
    if (!s) return;
    mn_coupled_destroy(s->c);
    mn_rig_destroy(s->rig);
    mn_softbody_destroy(s->sb);
    mn_lattice_destroy(s->L);
    free(s->rest);
    free(s->mass);
    free(s->surf);
    free(s->driven);
    free(s);
}

/* pos: nverts x 3 (z ignored in 2D); tris: ntris x 3, the closed surface (dim 3) or the
 * shape's triangles (dim 2). dv: density, edge compliance, element compliance, damping,
 * gravity x, y, z, ground y (-inf: none). */
EXPORT(mnw_soft_create)
mnw_soft* mnw_soft_create(int dim, int nverts, const double* pos, int ntris, const int* tris,
                          int resolution, const double* dv, int substeps) {
    if (dim != 2 && dim != 3) return (void)arg_error("dim", "must be 2 or 3"), NULL;
    if (nverts < 3 || !pos) return (void)arg_error("vertices", "at least three vertices"), NULL;
    if (ntris < 1 || !tris) return (void)arg_error("triangles", "at least one triangle"), NULL;
    if (!dv) return (void)arg_error("options", "NULL"), NULL;
    if (substeps < 1 || substeps > 1000)
        return (void)arg_error("substeps", "must be 1..1000"), NULL;
    for (int i = 0; i < 3 * nverts; i++)
        if (!isfinite(pos[i]))
            return (void)mn_error_set(&g_err, MN_ERR_ARG, "", 0, "vertices",
                                      "vertex %d is not finite", i / 3),
                   NULL;
    mnw_soft* s = calloc(1, sizeof *s);
    if (!s) return (void)mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), NULL;
    s->dim = dim;
    int n = nverts, ne = ntris, corners = 3;
    const int* elem = tris;
    if (dim == 3) {
        s->L = mn_lattice_create(nverts, pos, ntris, tris, resolution, &g_err);
        if (!s->L) return mnw_soft_destroy(s), NULL;
        n = s->L->nnodes, ne = s->L->ntets, corners = 4, elem = s->L->tets;
        s->nsurf = nverts;
    }
    s->rest = malloc((size_t)n * 3 * sizeof(double));
    s->mass = malloc((size_t)n * sizeof(double));
    s->surf = s->nsurf ? malloc((size_t)s->nsurf * 3 * sizeof(double)) : NULL;
    if (!s->rest || !s->mass || (s->nsurf && !s->surf)) {
        mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory");
        return mnw_soft_destroy(s), NULL;
    }
    if (dim == 3) {
        memcpy(s->rest, s->L->nodes, (size_t)n * 3 * sizeof(double));
        memcpy(s->surf, pos, (size_t)s->nsurf * 3 * sizeof(double));
    } else {
        for (int i = 0; i < n; i++)
            s->rest[3 * i] = pos[3 * i], s->rest[3 * i + 1] = pos[3 * i + 1],
                        s->rest[3 * i + 2] = 0;
    }
    if (mn_softbody_element_masses(n, s->rest, corners, ne, elem, dv[0], s->mass, &g_err) != MN_OK)
        return mnw_soft_destroy(s), NULL;
    mn_softbody_options o = mn_softbody_default();
    o.edge_compliance = dv[1];
    o.element_compliance = dv[2];
    o.damping = dv[3];
    o.gravity = mn_v3(dv[4], dv[5], dim == 2 ? 0 : dv[6]);
    o.ground = dv[7];
    o.substeps = substeps;
    s->sb = mn_softbody_create(n, s->rest, 0, NULL, s->mass, &o, &g_err);
    if (!s->sb || mn_softbody_add_elements(s->sb, corners, ne, elem, &g_err) != MN_OK)
        return mnw_soft_destroy(s), NULL;
    return s;
}

/* Couples the body to a rig: over the surface's vertices (dim 3; transferred to the
 * lattice's nodes) or over the body's own vertices (dim 2, or iv[3] = 1; copied with the
 * body's masses). driven: nctrl flags. dv: compliance of the driven and of the free rows;
 * iv: enabled, driven rotation, the fit's iterations per substep, over the nodes. */
EXPORT(mnw_soft_couple)
int mnw_soft_couple(mnw_soft* s, const mn_rig* r, const uint8_t* driven, const double* dv,
                    const int* iv) {
    if (!s || !r || !dv || !iv) return arg_error("rig", "NULL");
    if (r->dim != s->dim) return arg_error("rig", "its dimension is not the body's");
    int n = s->sb->nverts, transfer = s->dim == 3 && !iv[3];
    if (r->nverts != (transfer ? s->nsurf : n))
        return arg_error("rig", transfer ? "its vertex count is not the surface's"
                                         : "its vertex count is not the body's");
    mn_coupled_destroy(s->c);
    mn_rig_destroy(s->rig);
    free(s->driven);
    s->c = NULL, s->rig = NULL;
    s->driven = calloc((size_t)r->nctrl, 1);
    if (!s->driven) return mn_error_set(&g_err, MN_ERR_NOMEM, "", 0, "", "out of memory"), -1;
    if (driven) memcpy(s->driven, driven, (size_t)r->nctrl);
    if (transfer) {
        s->rig = mn_lattice_rig(s->L, r, s->mass, &g_err);
    } else {
        int d = s->dim;
        double* rest = malloc((size_t)n * (size_t)d * sizeof(double));
        if (rest) {
            for (int i = 0; i < n; i++)
                for (int k = 0; k < d; k++)
                    rest[d * i + k] = s->rest[3 * i + k];
            s->rig = mn_rig_create(d, n, rest, s->mass, &g_err);
            free(rest);
        }
        for (int j = 0; s->rig && j < r->nctrl; j++) {
            mn_ctrl_def d = mn_ctrl_default();
            d.name = r->ctrl_name[j];
            d.kind = (mn_ctrl_kind)r->ctrl_kind[j];
            d.pivot = r->ctrl_pivot[j];
            d.tail = r->ctrl_tail[j];
            d.parent = r->ctrl_parent[j];
            d.attached = r->ctrl_attached[j];
            if (mn_rig_add_ctrl(s->rig, &d, &g_err) < 0) mn_rig_destroy(s->rig), s->rig = NULL;
        }
        if (s->rig && mn_rig_set_weights(s->rig, r->k, r->w_idx, r->w_val, NULL, &g_err) != MN_OK)
            mn_rig_destroy(s->rig), s->rig = NULL;
    }
    if (!s->rig) return g_err.status ? g_err.status : MN_ERR_NOMEM;
    s->co = mn_coupling_default();
    s->co.compliance_driven = dv[0];
    s->co.compliance_free = dv[1];
    s->co.enabled = iv[0];
    s->co.driven_rotation = iv[1];
    s->co.fit.max_iters = iv[2];
    s->c = mn_coupled_create(s->sb, s->rig, s->driven, &s->co, &g_err);
    return s->c ? MN_OK : g_err.status;
}

/* out: status, substeps, fit iterations, residual, fit rms, max speed, us of the body's
 * constraints, of the fit, of the coupling, of the embedded surface, of the whole step. */
EXPORT(mnw_soft_step) int mnw_soft_step(mnw_soft* s, double dt, double* out) {
    if (!s || !out) return arg_error("body", "NULL");
    double t0 = soft_us();
    mn_coupled_result r;
    memset(&r, 0, sizeof r);
    if (s->c) {
        mn_coupled_step(s->c, dt, &r);
    } else {
        mn_softbody_result b;
        memset(&b, 0, sizeof b);
        double a = soft_us();
        mn_softbody_step(s->sb, dt, &b);
        r.us_sim = soft_us() - a;
        r.status = b.status, r.iterations = b.iterations, r.max_speed = b.max_speed;
        memcpy(r.message, b.message, sizeof r.message);
    }
    double t1 = soft_us();
    if (s->L) mn_lattice_surface(s->L, s->sb->x, s->surf);
    double t2 = soft_us();
    const double o[11] = {r.status,    r.iterations, r.fit_iterations, r.residual,
                          r.fit_rms,   r.max_speed,  r.us_sim,         r.us_fit,
                          r.us_couple, t2 - t1,      t2 - t0};
    memcpy(out, o, sizeof o);
    from_message(r.status, r.status == MN_ERR_ARG ? "dt" : "", r.status == MN_OK ? "" : r.message);
    return r.status;
}

/* v: the rotation (row-major) and the position, as a pose's controller. */
EXPORT(mnw_soft_drive) int mnw_soft_drive(mnw_soft* s, int j, const double* v) {
    if (!s || !s->c || !v) return arg_error("body", "not coupled");
    if (j < 0 || j >= s->rig->nctrl) return arg_error("controller", "no such controller");
    mn_xform X;
    memcpy(X.R.m, v, 9 * sizeof(double));
    X.p = mn_v3(v[9], v[10], v[11]);
    mn_coupled_drive(s->c, j, &X);
    return MN_OK;
}
EXPORT(mnw_soft_set_driven) int mnw_soft_set_driven(mnw_soft* s, const uint8_t* driven) {
    if (!s || !s->c || !driven) return arg_error("body", "not coupled");
    mn_status st = mn_coupled_set_driven(s->c, driven, &g_err);
    if (st == MN_OK) memcpy(s->driven, driven, (size_t)s->rig->nctrl);
    return st;
}
EXPORT(mnw_soft_grab)
int mnw_soft_grab(mnw_soft* s, int i, double x, double y, double z, double compliance) {
    if (!s) return arg_error("body", "NULL");
    mn_status st = mn_softbody_grab(s->sb, i, mn_v3(x, y, s->dim == 2 ? 0 : z), compliance);
    if (st == MN_ERR_NOMEM)
        mn_error_set(&g_err, st, "", 0, "vertex", "at most %d vertices are held at once",
                     MN_SOFTBODY_MAX_GRABS);
    else if (st != MN_OK)
        mn_error_set(&g_err, st, "", 0, "vertex",
                     "vertex %d of %d, a finite target and a compliance >= 0 are needed", i,
                     s->sb->nverts);
    return st;
}
EXPORT(mnw_soft_release) void mnw_soft_release(mnw_soft* s, int i) {
    if (s && i >= -1 && i < s->sb->nverts) mn_softbody_release(s->sb, i);
}
/* Back to rest: positions, no speed, no grab, the controllers at rest (the coupling made
 * again with the same driven set). */
EXPORT(mnw_soft_reset) int mnw_soft_reset(mnw_soft* s) {
    if (!s) return arg_error("body", "NULL");
    int n = s->sb->nverts;
    memcpy(s->sb->x, s->rest, (size_t)n * 3 * sizeof(double));
    memset(s->sb->v, 0, (size_t)n * 3 * sizeof(double));
    mn_softbody_release(s->sb, -1);
    if (s->L) mn_lattice_surface(s->L, s->sb->x, s->surf);
    if (!s->c) return MN_OK;
    mn_coupled_destroy(s->c);
    s->c = mn_coupled_create(s->sb, s->rig, s->driven, &s->co, &g_err);
    return s->c ? MN_OK : g_err.status;
}
EXPORT(mnw_soft_residual) double mnw_soft_residual(mnw_soft* s) {
    return s && s->c ? mn_coupled_residual(s->c) : NAN;
}
/* 0 vertices, 1 elements, 2 corners, 3 surface vertices, 4 controllers, 5 dim, 6 grabs,
 * 8 coupled. */
EXPORT(mnw_soft_size) int mnw_soft_size(const mnw_soft* s, int what) {
    if (!s) return -1;
    switch (what) {
    case 0:
        return s->sb->nverts;
    case 1:
        return s->sb->nelem;
    case 2:
        return s->sb->elem_corners;
    case 3:
        return s->nsurf;
    case 4:
        return s->rig ? s->rig->nctrl : 0;
    case 5:
        return s->dim;
    case 6:
        return s->sb->ngrab;
    case 8:
        return s->c != NULL;
    default:
        return -1;
    }
}
/* 0 positions, 1 velocities, 2 the embedded surface, 3 the poses (nctrl x 12), 4 the rest
 * positions, 5 the elements (int), 6 the masses, 7 the rig's reproduction of the body. */
EXPORT(mnw_soft_ptr) void* mnw_soft_ptr(mnw_soft* s, int what) {
    if (!s) return NULL;
    switch (what) {
    case 0:
        return s->sb->x;
    case 1:
        return s->sb->v;
    case 2:
        return s->surf;
    case 3:
        return s->c ? (void*)mn_coupled_pose(s->c) : NULL;
    case 4:
        return s->rest;
    case 5:
        return s->sb->elem;
    case 6:
        return s->mass;
    case 7:
        return s->c ? (void*)mn_coupled_rigged(s->c) : NULL;
    default:
        return NULL;
    }
}
