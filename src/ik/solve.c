/* mn_ik_solve: checks a problem at the API boundary, dispatches to a method, times it.
 * Defaults and method names live here too. */
#include <math.h>
#include <string.h>

#include "ik/ik_common.h"
#include "ik/ik_methods.h"

/* The method table: each method's name, entry point and properties, in enum order. What
 * mn_ik_solve does for a method is read from here, never from where it stands in the enum. */
typedef struct method_def {
    const char* name;
    mn_status (*solve)(MN_IK_METHOD_ARGS);
    int full_fk;   /* reads the world frames of the chain from d (the geometric methods);
                      otherwise only the base's frame (its own chain FK from there) */
    int uses_pole; /* reads p->pole (checked finite) */
} method_def;

static const method_def methods[MN_IK_METHOD_COUNT] = {
    [MN_IK_LM] = {"lm", mn_ik_lm, 0, 0},
    [MN_IK_DLS] = {"dls", mn_ik_dls, 0, 0},
    [MN_IK_PINV] = {"pinv", mn_ik_pinv, 0, 0},
    [MN_IK_JT] = {"jt", mn_ik_jt, 0, 0},
    [MN_IK_CCD] = {"ccd", mn_ik_ccd, 1, 0},
    [MN_IK_FABRIK] = {"fabrik", mn_ik_fabrik, 1, 0},
    [MN_IK_ANALYTIC] = {"analytic", mn_ik_analytic, 1, 1},
    [MN_IK_ALTJAC] = {"altjac", mn_ik_altjac, 0, 0},
};

const char* mn_ik_method_name(mn_ik_method m) {
    return (m >= 0 && m < MN_IK_METHOD_COUNT) ? methods[m].name : "unknown";
}

int mn_ik_method_parse(const char* name) {
    if (!name) return -1;
    for (int i = 0; i < MN_IK_METHOD_COUNT; i++)
        if (!strcmp(name, methods[i].name)) return i;
    return -1;
}

static const char* const mode_names[MN_IK_MODE_COUNT] = {"speed", "distance", "manipulability"};

const char* mn_ik_mode_name(mn_ik_mode mode) {
    return (mode >= 0 && mode < MN_IK_MODE_COUNT) ? mode_names[mode] : "unknown";
}

int mn_ik_mode_parse(const char* name) {
    if (!name) return -1;
    for (int i = 0; i < MN_IK_MODE_COUNT; i++)
        if (!strcmp(name, mode_names[i])) return i;
    return -1;
}

mn_ik_problem mn_ik_problem_default(void) {
    mn_ik_problem p;
    memset(&p, 0, sizeof p); /* zeroed first, then the defaults */
    p.base = -1;
    p.tip = -1;
    p.use_position = 1;
    p.use_orientation = 0;
    p.target_rot = mn_quat_identity();
    p.w_pos = 1.0;
    p.w_rot = 1.0;
    return p;
}

mn_ik_options mn_ik_default(void) {
    mn_ik_options o;
    memset(&o, 0, sizeof o); /* zeroed first, then the defaults */
    o.method = MN_IK_LM;
    o.tol_pos = 1e-5;
    o.tol_rot = 1e-5;
    o.max_iters = 100;
    o.timeout_ms = 0;
    o.seed = 1;
    o.max_restarts = 100;
    o.respect_limits = 1;
    o.max_step = 0.5;
    o.damping = 1e-3;
    o.nullspace = 0;
    o.nullspace_gain = 0.1;
    o.timeout_cpu = 0;
    o.mode = MN_IK_SPEED;
    return o;
}

static int finite_pos(double x) {
    return isfinite(x) && x > 0;
}

/* Everything mn_ik_solve promises to reject, in the order a user would fix it. The
 * problem's quaternion is checked for being non-zero; methods normalise it. */
static mn_status check(const mn_model* m, const mn_data* d, const mn_ik_problem* p,
                       const mn_ik_options* o, mn_ik_result* r) {
    if (!m || !d || !p)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: model, data and problem are required");
    if (d->nq != m->nq || d->njoint != m->njoint)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: data: made for another model");
    if ((int)o->method < 0 || o->method >= MN_IK_METHOD_COUNT)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: method: %d is not a method", (int)o->method);
    if ((int)o->mode < 0 || o->mode >= MN_IK_MODE_COUNT)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: mode: %d is not a mode", (int)o->mode);
    if (o->mode != MN_IK_SPEED && o->method != MN_IK_LM)
        return mn_ik_fail(r, MN_ERR_ARG,
                          "ik: mode: %s needs method lm (the only one that restarts)",
                          mn_ik_mode_name(o->mode));
    if (p->tip < 0 || p->tip >= m->njoint)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: tip: joint %d out of range [0, %d)", p->tip,
                          m->njoint);
    if (p->base < -1 || p->base >= m->njoint)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: base: joint %d out of range [-1, %d)", p->base,
                          m->njoint);
    if (p->base == p->tip)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: tip: '%s' is the base itself", m->jnt_name[p->tip]);
    int nj, nd, nq;
    if (mn_chain_count(m, p->base, p->tip, &nj, &nd, &nq) != 0)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: tip: '%s' is not below base '%s'",
                          m->jnt_name[p->tip], m->jnt_name[p->base]);
    if (nd == 0)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: chain: no moving joint between base and tip '%s'",
                          m->jnt_name[p->tip]);
    if (!o->free_locked && m->nlocked) {
        int held = 0;
        for (int j = p->tip; j != p->base; j = m->jnt_parent[j])
            for (int k = 0; k < mn_joint_type_nv((mn_joint_type)m->jnt_type[j]); k++)
                held += m->dof_locked[m->jnt_dofadr[j] + k];
        if (held == nd)
            return mn_ik_fail(r, MN_ERR_ARG,
                              "ik: chain: every DOF between base and tip '%s' is held (locked); "
                              "free_locked moves them",
                              m->jnt_name[p->tip]);
    }
    if (!p->use_position && !p->use_orientation)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: goal: neither position nor orientation is used");
    if (!mn_vec3_isfinite(p->point)) return mn_ik_fail(r, MN_ERR_ARG, "ik: point: not finite");
    if (p->use_position) {
        if (!mn_vec3_isfinite(p->target_pos))
            return mn_ik_fail(r, MN_ERR_ARG, "ik: target_pos: not finite");
        if (!finite_pos(p->w_pos))
            return mn_ik_fail(r, MN_ERR_ARG, "ik: w_pos: must be finite and > 0");
        if (!finite_pos(o->tol_pos))
            return mn_ik_fail(r, MN_ERR_ARG, "ik: tol_pos: must be finite and > 0");
    }
    if (p->use_orientation) {
        if (!mn_quat_isfinite(p->target_rot))
            return mn_ik_fail(r, MN_ERR_ARG, "ik: target_rot: not finite");
        if (!(mn_quat_norm(p->target_rot) > 1e-9))
            return mn_ik_fail(r, MN_ERR_ARG, "ik: target_rot: zero quaternion");
        if (!finite_pos(p->w_rot))
            return mn_ik_fail(r, MN_ERR_ARG, "ik: w_rot: must be finite and > 0");
        if (!finite_pos(o->tol_rot))
            return mn_ik_fail(r, MN_ERR_ARG, "ik: tol_rot: must be finite and > 0");
    }
    if (methods[o->method].uses_pole && !mn_vec3_isfinite(p->pole))
        return mn_ik_fail(r, MN_ERR_ARG, "ik: pole: not finite");
    if (o->max_iters < 1) return mn_ik_fail(r, MN_ERR_ARG, "ik: max_iters: must be >= 1");
    if (o->max_restarts < 0) return mn_ik_fail(r, MN_ERR_ARG, "ik: max_restarts: must be >= 0");
    if (isnan(o->timeout_ms)) return mn_ik_fail(r, MN_ERR_ARG, "ik: timeout_ms: NaN");
    if (isnan(o->max_step) || isinf(o->max_step))
        return mn_ik_fail(r, MN_ERR_ARG, "ik: max_step: not finite");
    if (!(isfinite(o->damping) && o->damping >= 0))
        return mn_ik_fail(r, MN_ERR_ARG, "ik: damping: must be finite and >= 0");
    if (o->nullspace && !(isfinite(o->nullspace_gain) && o->nullspace_gain >= 0))
        return mn_ik_fail(r, MN_ERR_ARG, "ik: nullspace_gain: must be finite and >= 0");
    if (mn_q_check(m, d->q) != MN_OK)
        return mn_ik_fail(r, MN_ERR_ARG, "ik: q: the seed state is not finite");
    /* A chain whose links all have zero length cannot move its end effector by rotating:
     * with no slide on it, a position goal is meaningless. */
    if (p->use_position) {
        double reach = mn_vec3_norm(p->point);
        int slide = 0;
        for (int j = p->tip; j != p->base; j = m->jnt_parent[j]) {
            reach += mn_vec3_norm(m->jnt_offset[j]);
            if (m->jnt_type[j] == MN_JOINT_SLIDE || m->jnt_type[j] == MN_JOINT_FREE) slide = 1;
        }
        if (!(reach > 0) && !slide)
            return mn_ik_fail(r, MN_ERR_ARG, "ik: chain: zero-length links from base to tip '%s'",
                              m->jnt_name[p->tip]);
    }
    return MN_OK;
}

mn_status mn_ik_solve(const mn_model* m, mn_data* d, const mn_ik_problem* p, const mn_ik_options* o,
                      mn_ik_result* r) {
    return mn_ik_solve_nullspace(m, d, p, o, NULL, r);
}

mn_status mn_ik_solve_nullspace(const mn_model* m, mn_data* d, const mn_ik_problem* p,
                                const mn_ik_options* o, const mn_ik_nullspace* ns,
                                mn_ik_result* r) {
    mn_ik_result local;
    if (!r) r = &local;
    mn_ik_options defaults;
    if (!o) { /* NULL options: the defaults */
        defaults = mn_ik_default();
        o = &defaults;
    }
    memset(r, 0, sizeof *r);
    int64_t t0 = mn_ik_now_ns();
    mn_status s = check(m, d, p, o, r);
    for (int k = 0; s == MN_OK && ns && m && k < m->nv; k++) {
        if (ns->target && (isinf(ns->target[k])))
            s = mn_ik_fail(r, MN_ERR_ARG, "ik: nullspace target: DOF %d is infinite", k);
        else if (ns->weight && !(isfinite(ns->weight[k]) && ns->weight[k] >= 0))
            s = mn_ik_fail(r, MN_ERR_ARG, "ik: nullspace weight: DOF %d must be finite and >= 0",
                           k);
    }
    if (s != MN_OK) {
        r->time_us = (double)(mn_ik_now_ns() - t0) * 1e-3;
        return s;
    }
    /* The position tolerance is in the model's length units; on a small figure it would be
     * met before any step (a figure 1e-6 m tall is within the default 1e-5 of any target
     * near it). It is capped at MN_IK_TOL_REL of the chain's reach, the sum of its link
     * lengths, so that it stays relative to the figure: on figures whose chains reach 1 cm
     * or more, the default tolerance is below the cap and nothing changes. */
    mn_ik_options scaled;
    if (p->use_position) {
        double reach = mn_vec3_norm(p->point);
        for (int j = p->tip; j != p->base; j = m->jnt_parent[j])
            reach += mn_vec3_norm(m->jnt_offset[j]);
        if (reach > 0 && o->tol_pos > MN_IK_TOL_REL * reach) {
            scaled = *o;
            scaled.tol_pos = MN_IK_TOL_REL * reach;
            o = &scaled;
        }
    }
    /* The numeric methods walk the chain with their own forward kinematics and need only the
     * base's world frame; the geometric ones read every frame of the chain from d. */
    if (methods[o->method].full_fk)
        mn_fk(m, d);
    else
        mn_fk_path(m, d, p->base);
    size_t mark = mn_arena_mark(&d->arena);
    s = o->method == MN_IK_PINV && ns ? mn_ik_pinv_nullspace(m, d, p, o, r, ns)
                                      : methods[o->method].solve(m, d, p, o, r);
    mn_arena_reset(&d->arena, mark);
    r->status = s;
    if (s == MN_OK) r->message[0] = 0;
    r->time_us = (double)(mn_ik_now_ns() - t0) * 1e-3;
    return s;
}
