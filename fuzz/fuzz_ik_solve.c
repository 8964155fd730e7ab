/* libFuzzer target for mn_ik_solve: the bytes choose a figure (the built-in stick figure,
 * balls on a free root, or a 4-hinge arm with limits), a method, the chain, the goal flags
 * and then raw doubles for the target, point, weights, tolerances, step and damping (any
 * bit pattern: NaN, infinities, denormals, 1e300). Every call must return a documented
 * status, leave q finite and within limits, leave q untouched on MN_ERR_ARG, and never
 * allocate, crash or hang (budgets are small and counted in iterations). */
#include <marionette/ik.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static mn_model* arm_model(void) {
    mn_spec* s = mn_spec_create("arm");
    mn_joint_def d = mn_joint_default();
    d.name = "base";
    int p = mn_spec_add_joint(s, &d, NULL);
    const char* names[4] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        d = mn_joint_default();
        d.name = names[i];
        d.parent = p;
        d.type = MN_JOINT_HINGE;
        d.axis = i % 2 ? mn_v3(0, 1, 0) : mn_v3(0, 0, 1);
        d.offset = mn_v3(0, 0, i ? 0.4 : 0.1);
        d.limited = i > 0;
        d.range[0] = -2;
        d.range[1] = 1.5;
        p = mn_spec_add_joint(s, &d, NULL);
    }
    d = mn_joint_default();
    d.name = "tool";
    d.parent = p;
    d.offset = mn_v3(0.05, 0, 0.2);
    mn_spec_add_joint(s, &d, NULL);
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

static mn_model* limb_model(void) {
    mn_spec* s = mn_spec_create("limb");
    mn_joint_def d = mn_joint_default();
    d.name = "hips";
    d.type = MN_JOINT_FREE;
    int p = mn_spec_add_joint(s, &d, NULL);
    const char* names[3] = {"shoulder", "elbow", "wrist"};
    for (int i = 0; i < 3; i++) {
        d = mn_joint_default();
        d.name = names[i];
        d.parent = p;
        d.type = MN_JOINT_BALL;
        d.axis = mn_v3(0, -1, 0);
        d.offset = mn_v3(i ? 0 : 0.2, i ? -0.3 : 0, 0);
        d.limited = i != 2;
        d.swing = 1.1;
        d.twist[0] = -0.6;
        d.twist[1] = 0.6;
        p = mn_spec_add_joint(s, &d, NULL);
    }
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

static double take(const uint8_t** data, size_t* size) {
    double x = 0;
    if (*size >= sizeof x) {
        memcpy(&x, *data, sizeof x);
        *data += sizeof x;
        *size -= sizeof x;
    }
    return x;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static mn_model* models[3];
    static mn_data* datas[3];
    if (!models[0]) {
        models[0] = mn_stickman_model(NULL);
        models[1] = limb_model();
        models[2] = arm_model();
        for (int i = 0; i < 3; i++) {
            if (!models[i]) abort();
            datas[i] = mn_data_create(models[i], 0);
        }
    }
    if (size < 4) return 0;
    int which = data[0] % 3;
    const mn_model* m = models[which];
    mn_data* d = datas[which];
    mn_ik_options o = mn_ik_default();
    o.method = (mn_ik_method)(data[1] % (MN_IK_METHOD_COUNT + 1)); /* one past the end too */
    mn_ik_problem p = mn_ik_problem_default();
    p.base = (int)(data[2] % (m->njoint + 2)) - 2; /* -2 (bad), -1 (world), joints */
    p.tip = (int)(data[3] % (m->njoint + 1)) - 1;
    int flags = size > 4 ? data[4] : 0;
    p.use_position = (flags & 1) != 0;
    p.use_orientation = (flags & 2) != 0;
    o.respect_limits = (flags & 4) == 0;
    o.nullspace = (flags & 8) != 0;
    data += size > 4 ? 5 : 4;
    size -= size > 4 ? 5 : 4;
    p.target_pos = mn_v3(take(&data, &size), take(&data, &size), take(&data, &size));
    p.target_rot =
        mn_q4(take(&data, &size), take(&data, &size), take(&data, &size), take(&data, &size));
    if (size) p.point = mn_v3(take(&data, &size), take(&data, &size), take(&data, &size));
    if (size) p.w_pos = take(&data, &size);
    if (size) p.w_rot = take(&data, &size);
    if (size) o.tol_pos = take(&data, &size);
    if (size) o.tol_rot = take(&data, &size);
    if (size) o.max_step = take(&data, &size);
    if (size) o.damping = take(&data, &size);
    if (size) p.pole = mn_v3(take(&data, &size), take(&data, &size), take(&data, &size));
    /* Small budgets, counted in iterations so a run is deterministic and quick. */
    o.max_iters = 40;
    o.max_restarts = 2;
    o.timeout_ms = 0;

    mn_data_reset(m, d);
    double q0[128];
    if (m->nq > 128) abort();
    memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
    mn_ik_result r;
    mn_status s = mn_ik_solve(m, d, &p, &o, &r);
    switch (s) {
    case MN_OK:
    case MN_ERR_UNREACHABLE:
    case MN_ERR_NOCONVERGE:
    case MN_ERR_UNSUPPORTED:
        break;
    case MN_ERR_ARG:
        if (memcmp(q0, d->q, sizeof(double) * (size_t)m->nq) != 0) abort();
        if (!r.message[0]) abort();
        break;
    default:
        abort();
    }
    for (int i = 0; i < m->nq; i++)
        if (!isfinite(d->q[i])) abort();
    if (s != MN_ERR_ARG && o.respect_limits && !mn_q_within_limits(m, d->q, 1e-6)) abort();
    if (isnan(r.pos_err) || isnan(r.rot_err)) abort();
    return 0;
}
