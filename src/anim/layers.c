/* Layers over a sequence and the time warp (layers.h): the base's in-between with override
 * and additive layers blended over it, each with a weight curve and a joint mask (Blender's
 * NLA, Unreal's layered blend per bone), and a monotone time-warp curve per sequence or layer.
 * Welman 6.1.2 computes the in-betweens on the fly from the keys; a layer is another such
 * sequence whose in-between is blended in, per joint, at sampling time. */
#include <marionette/layers.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_internal.h"
#include "sample_kernels.h"

static const char* const MODE_NAMES[] = {"override", "additive"};

const char* mn_layer_mode_name(mn_layer_mode m) {
    return (unsigned)m < 2 ? MODE_NAMES[m] : NULL;
}
int mn_layer_mode_parse(const char* name) {
    if (!name) return -1;
    for (int i = 0; i < 2; i++)
        if (!strcmp(name, MODE_NAMES[i])) return i;
    return -1;
}

static struct seq_ext* ext_of(mn_seq* s) {
    if (!s->ext) s->ext = calloc(1, sizeof *s->ext);
    return s->ext;
}

static double* dup_doubles(const double* p, size_t n) {
    double* r = malloc(sizeof(double) * (n ? n : 1));
    if (r && n) memcpy(r, p, sizeof(double) * n);
    return r;
}

/* ---- layers -------------------------------------------------------------------------- */

static seq_layer* layer_at(const mn_seq* s, int i) {
    if (!s || !s->ext || i < 0 || i >= s->ext->nlayer) return NULL;
    return &s->ext->layer[i];
}

int mn_seq_add_layer(mn_seq* s, const char* name, mn_layer_mode mode, mn_error* err) {
    if (!s) return mn_error_set(err, MN_ERR_ARG, NULL, 0, "layers", "no sequence"), -1;
    if (s->ext && s->ext->is_layer)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "layers", "a layer has no layers"), -1;
    if ((unsigned)mode > MN_LAYER_ADDITIVE)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "mode", "override or additive"), -1;
    if (name && strlen(name) > 63)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "name", "a name has at most 63 bytes"), -1;
    if (s->ext && s->ext->nlayer >= MN_SEQ_MAX_LAYERS)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "layers", "at most %d layers",
                            MN_SEQ_MAX_LAYERS),
               -1;
    struct seq_ext* e = ext_of(s);
    mn_seq_def def = mn_seq_def_default();
    def.fps = s->fps;
    def.rot = s->rot_default;
    def.trans = s->trans_default;
    def.max_handles = def.max_constraints = 0;
    mn_seq* ls = e ? mn_seq_create(s->m, &def, err) : NULL;
    if (ls && !ext_of(ls)) mn_seq_destroy(ls), ls = NULL;
    double* wf = malloc(sizeof(double));
    double* wv = malloc(sizeof(double));
    if (!ls || !wf || !wv) {
        mn_seq_destroy(ls);
        free(wf), free(wv);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "layers", "out of memory"), -1;
    }
    ls->ext->is_layer = 1;
    seq_layer* l = &e->layer[e->nlayer];
    memset(l, 0, sizeof *l);
    l->seq = ls;
    l->mode = mode;
    l->w_frame = wf;
    l->w_value = wv;
    if (name) strcpy(l->name, name);
    return e->nlayer++;
}

mn_status mn_seq_remove_layer(mn_seq* s, int i) {
    seq_layer* l = layer_at(s, i);
    if (!l) return MN_ERR_ARG;
    mn_seq_layer_free(l);
    struct seq_ext* e = s->ext;
    memmove(l, l + 1, sizeof *l * (size_t)(e->nlayer - i - 1));
    e->nlayer--;
    return MN_OK;
}

int mn_seq_layer_count(const mn_seq* s) {
    return s && s->ext ? s->ext->nlayer : 0;
}
mn_seq* mn_seq_layer(const mn_seq* s, int i) {
    seq_layer* l = layer_at(s, i);
    return l ? l->seq : NULL;
}
const char* mn_seq_layer_name(const mn_seq* s, int i) {
    seq_layer* l = layer_at(s, i);
    return l ? l->name : NULL;
}
mn_layer_mode mn_seq_layer_mode(const mn_seq* s, int i) {
    seq_layer* l = layer_at(s, i);
    return l ? l->mode : MN_LAYER_OVERRIDE;
}
int mn_seq_find_layer(const mn_seq* s, const char* name) {
    if (!name) return -1;
    for (int i = 0; i < mn_seq_layer_count(s); i++)
        if (!strcmp(s->ext->layer[i].name, name)) return i;
    return -1;
}

mn_status mn_seq_set_layer_weights(mn_seq* s, int i, int n, const double* frames,
                                   const double* weights, mn_error* err) {
    seq_layer* l = layer_at(s, i);
    if (!l || n < 0 || (n > 0 && (!frames || !weights)))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "weights", "no such layer, or NULL keys");
    for (int k = 0; k < n; k++) {
        if (!isfinite(frames[k]) || (k > 0 && !(frames[k] > frames[k - 1])))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "weights",
                                "weight key %d: frames must be finite and increasing", k);
        if (!(weights[k] >= 0 && weights[k] <= 1))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "weights",
                                "weight key %d: a weight lies in [0, 1]", k);
    }
    double* wf = dup_doubles(frames, (size_t)n);
    double* wv = dup_doubles(weights, (size_t)n);
    if (!wf || !wv) {
        free(wf), free(wv);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "weights", "out of memory");
    }
    free(l->w_frame), free(l->w_value);
    l->w_frame = wf, l->w_value = wv, l->nw = n;
    return MN_OK;
}

int mn_seq_layer_weight_count(const mn_seq* s, int i) {
    seq_layer* l = layer_at(s, i);
    return l ? l->nw : 0;
}
mn_status mn_seq_layer_weight_key(const mn_seq* s, int i, int k, double* frame, double* weight) {
    seq_layer* l = layer_at(s, i);
    if (!l || k < 0 || k >= l->nw) return MN_ERR_ARG;
    if (frame) *frame = l->w_frame[k];
    if (weight) *weight = l->w_value[k];
    return MN_OK;
}

/* Weight keys eased between (smoothstep: zero slope at every key), constant outside. */
static double weight_at(const seq_layer* l, double f) {
    int n = l->nw;
    if (n == 0) return 1;
    if (!(f > l->w_frame[0])) return l->w_value[0];
    if (f >= l->w_frame[n - 1]) return l->w_value[n - 1];
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) >> 1;
        if (l->w_frame[mid] <= f)
            lo = mid;
        else
            hi = mid;
    }
    double u = (f - l->w_frame[lo]) / (l->w_frame[lo + 1] - l->w_frame[lo]);
    u = u * u * (3 - 2 * u);
    return l->w_value[lo] + u * (l->w_value[lo + 1] - l->w_value[lo]);
}

double mn_seq_layer_weight(const mn_seq* s, int i, double frame) {
    seq_layer* l = layer_at(s, i);
    return l && isfinite(frame) ? weight_at(l, frame) : 0;
}

mn_status mn_seq_set_layer_mask(mn_seq* s, int i, const double* mask, mn_error* err) {
    seq_layer* l = layer_at(s, i);
    if (!l) return mn_error_set(err, MN_ERR_ARG, NULL, 0, "mask", "no such layer");
    if (!mask) {
        free(l->mask);
        l->mask = NULL;
        return MN_OK;
    }
    int nj = s->m->njoint;
    for (int j = 0; j < nj; j++)
        if (!(mask[j] >= 0 && mask[j] <= 1))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "mask",
                                "joint %s: a mask weight lies in [0, 1]", s->m->jnt_name[j]);
    double* m = dup_doubles(mask, (size_t)nj);
    if (!m) return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "mask", "out of memory");
    free(l->mask);
    l->mask = m;
    return MN_OK;
}
const double* mn_seq_layer_mask(const mn_seq* s, int i) {
    seq_layer* l = layer_at(s, i);
    return l ? l->mask : NULL;
}

/* ---- blending ------------------------------------------------------------------------ */

/* q <- slerp(q, l, a) along the shorter arc, normalised (Shoemake 1985); nlerp when the two
 * nearly coincide, where slerp's 1/sin loses its digits. The angle, sine and cosine and the
 * renormalisation with the kernels of sample_kernels.h. */
static inline void quat_toward(double* q, const double* l, double a) {
    double d = q[0] * l[0] + q[1] * l[1] + q[2] * l[2] + q[3] * l[3];
    double sg = d < 0 ? -1 : 1;
    d *= sg;
    double wa = 1 - a, wb = a * sg;
    if (d < 0.9995) {
        /* one sine and cosine: sin((1-a)t) = sin t cos(at) - cos t sin(at) */
        double st = sqrt(1 - d * d), sa, ca;
        mn_anim_sincos(a * mn_anim_acos(d), &sa, &ca);
        double k = sa / st;
        wb = sg * k;
        wa = ca - d * k;
    }
    for (int i = 0; i < 4; i++)
        q[i] = wa * q[i] + wb * l[i];
    mn_anim_normalize4(q);
}

/* q <- q (rest^-1 l)^a: the layer's rotation relative to the rest, scaled along the shorter
 * arc from the identity, composed on the base's rotation (in the joint's frame). The scaled
 * delta is slerp(1, delta, a), written out for the identity; it is not renormalised, as the
 * product's renormalisation does the same (the scale of a factor scales the product). */
static inline void quat_add(double* q, const double* l, const double* rest, double a) {
    /* conj(rest) l */
    double dv[4] = {rest[0] * l[0] + rest[1] * l[1] + rest[2] * l[2] + rest[3] * l[3],
                    rest[0] * l[1] - rest[1] * l[0] - rest[2] * l[3] + rest[3] * l[2],
                    rest[0] * l[2] + rest[1] * l[3] - rest[2] * l[0] - rest[3] * l[1],
                    rest[0] * l[3] - rest[1] * l[2] + rest[2] * l[1] - rest[3] * l[0]};
    if (a < 1) {
        double d = dv[0], sg = d < 0 ? -1 : 1;
        d *= sg;
        double wa = 1 - a, wb = a * sg;
        if (d < 0.9995) {
            double st = sqrt(1 - d * d), sa, ca;
            mn_anim_sincos(a * mn_anim_acos(d), &sa, &ca);
            double k = sa / st;
            wb = sg * k;
            wa = ca - d * k;
        }
        dv[0] = wa + wb * dv[0], dv[1] *= wb, dv[2] *= wb, dv[3] *= wb;
    }
    double r[4] = {q[0] * dv[0] - q[1] * dv[1] - q[2] * dv[2] - q[3] * dv[3],
                   q[0] * dv[1] + q[1] * dv[0] + q[2] * dv[3] - q[3] * dv[2],
                   q[0] * dv[2] - q[1] * dv[3] + q[2] * dv[0] + q[3] * dv[1],
                   q[0] * dv[3] + q[1] * dv[2] - q[2] * dv[1] + q[3] * dv[0]};
    mn_anim_normalize4(r);
    q[0] = r[0], q[1] = r[1], q[2] = r[2], q[3] = r[3];
}

/* quat_toward and quat_add over n <= MN_ANIM_BATCH rotations at once, stage by stage (the
 * angles, then their sines and cosines, then the combinations: sample_kernels.h), the same
 * operations as one at a time: q[i] <- the blend of l[i] over q[i] by a[i] in the mode. For an
 * additive blend rest[i] is the rest rotation. */
static void quat_blend_n(double* const* q, const double* const* l, const double* const* rest,
                         const double* a, int n, mn_layer_mode mode) {
    double dv[4 * MN_ANIM_BATCH], d[MN_ANIM_BATCH], sg[MN_ANIM_BATCH], st[MN_ANIM_BATCH];
    double ay[MN_ANIM_BATCH], ax[MN_ANIM_BATCH], x[MN_ANIM_BATCH], sn[MN_ANIM_BATCH],
        cs[MN_ANIM_BATCH];
    int arc[MN_ANIM_BATCH], na = 0;
    for (int i = 0; i < n; i++) {
        const double* lv = l[i];
        double* v = dv + 4 * i;
        if (mode == MN_LAYER_ADDITIVE) { /* conj(rest) l, and its angle from the identity */
            const double* r = rest[i];
            v[0] = r[0] * lv[0] + r[1] * lv[1] + r[2] * lv[2] + r[3] * lv[3];
            v[1] = r[0] * lv[1] - r[1] * lv[0] - r[2] * lv[3] + r[3] * lv[2];
            v[2] = r[0] * lv[2] + r[1] * lv[3] - r[2] * lv[0] - r[3] * lv[1];
            v[3] = r[0] * lv[3] - r[1] * lv[2] + r[2] * lv[1] - r[3] * lv[0];
            d[i] = v[0];
        } else {
            const double* qv = q[i];
            d[i] = qv[0] * lv[0] + qv[1] * lv[1] + qv[2] * lv[2] + qv[3] * lv[3];
        }
        sg[i] = d[i] < 0 ? -1 : 1;
        d[i] *= sg[i];
        st[i] = 0;
        if (d[i] < 0.9995 && a[i] < 1) { /* an arc: its angle in the batch */
            st[i] = sqrt(1 - d[i] * d[i]);
            ay[na] = sqrt((1 - d[i]) * (1 + d[i])), ax[na] = d[i], arc[na++] = i;
        }
    }
    mn_anim_atan2_n(ay, ax, x, na);
    for (int k = 0; k < na; k++)
        x[k] *= a[arc[k]];
    mn_anim_sincos_n(x, sn, cs, na);
    for (int i = 0, j = 0; i < n; i++) {
        double wa = 1 - a[i], wb = a[i] * sg[i];
        if (j < na && arc[j] == i) {
            double k = sn[j] / st[i];
            wb = sg[i] * k;
            wa = cs[j] - d[i] * k;
            j++;
        }
        double* qv = q[i];
        if (mode == MN_LAYER_ADDITIVE) {
            double* v = dv + 4 * i;
            if (a[i] < 1) v[0] = wa + wb * v[0], v[1] *= wb, v[2] *= wb, v[3] *= wb;
            double r[4] = {qv[0] * v[0] - qv[1] * v[1] - qv[2] * v[2] - qv[3] * v[3],
                           qv[0] * v[1] + qv[1] * v[0] + qv[2] * v[3] - qv[3] * v[2],
                           qv[0] * v[2] - qv[1] * v[3] + qv[2] * v[0] + qv[3] * v[1],
                           qv[0] * v[3] + qv[1] * v[2] - qv[2] * v[1] + qv[3] * v[0]};
            mn_anim_normalize4(r);
            qv[0] = r[0], qv[1] = r[1], qv[2] = r[2], qv[3] = r[3];
        } else {
            const double* lv = l[i];
            for (int c = 0; c < 4; c++)
                qv[c] = wa * qv[c] + wb * lv[c];
            mn_anim_normalize4(qv);
        }
    }
}

void mn_pose_blend(const mn_model* m, double* q, const double* l, double w, const double* mask,
                   mn_layer_mode mode) {
    if (!(w > 0)) return;
    const double* rest = m->q0;
    for (int j = 0, nj = m->njoint; j < nj; j++) {
        double a = mask ? w * mask[j] : w;
        if (!(a > 0)) continue;
        int t = m->jnt_type[j], i = m->jnt_qadr[j];
        if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) {
            q[i] += mode == MN_LAYER_ADDITIVE ? a * (l[i] - rest[i]) : a * (l[i] - q[i]);
        } else if (t == MN_JOINT_BALL || t == MN_JOINT_FREE) {
            if (t == MN_JOINT_FREE) {
                for (int k = 0; k < 3; k++)
                    q[i + k] += mode == MN_LAYER_ADDITIVE ? a * (l[i + k] - rest[i + k])
                                                          : a * (l[i + k] - q[i + k]);
                i += 3;
            }
            if (mode == MN_LAYER_ADDITIVE)
                quat_add(q + i, l + i, rest + i, a);
            else if (a >= 1)
                memcpy(q + i, l + i, 4 * sizeof(double));
            else
                quat_toward(q + i, l + i, a);
        }
    }
}

/* The work of a blend: the layer's state, then per unit of the base and of a layer the held
 * rotations, references and flags of runs, the layer unit matching each base unit, and per
 * joint the base unit holding it (+1). */
static size_t work_doubles(const mn_model* m) {
    return (size_t)m->nq + 18 * ((size_t)m->njoint + 1);
}

int mn_seq_blend_work_size(const mn_seq* s) {
    return s && s->ext && s->ext->nlayer ? (int)work_doubles(s->m) : 0;
}

/* Does the mask give every hinge of run unit un one weight? */
static int mask_uniform(const double* mask, const seq_unit* un) {
    for (int i = 1; mask && i < un->n; i++)
        if (mask[un->jnt[i]] != mask[un->jnt[0]]) return 0;
    return 1;
}

/* A run's rotation from its hinge angles in q (the product of the hinges' rotations, as the
 * Euler angles of the unit's order). */
static mn_quat run_from_angles(const seq_unit* un, const double* q) {
    double e[3] = {0, 0, 0};
    for (int i = 0; i < un->n; i++)
        e[i] = un->sign[i] * q[un->qadr[i]];
    return mn_euler_to_quat((mn_euler_order)un->order, e);
}

/* One layer over the result so far. A compound joint (a run of hinges) that both sampled as a
 * rotation is blended as one rotation, slerped along the shorter arc or composed with the
 * layer's delta from the rest (Shoemake 1985), and decomposed once at the end; other joints
 * blend as mn_pose_blend does. */
static void blend_layer(const mn_seq* s, const seq_layer* l, double frame, double w, double* q,
                        double* work) {
    const mn_model* m = s->m;
    size_t J = (size_t)m->njoint + 1;
    double *lq = work, *brot = lq + m->nq, *bref = brot + 4 * J, *bheld = bref + 3 * J;
    double *lrot = bheld + J, *lref = lrot + 4 * J, *lheld = lref + 3 * J, *map = lheld + J;
    double* jheld = map + J;
    const mn_seq* ls = l->seq;
    mn_seq_sample_runs(ls, mn_seq_warp(ls, frame), lq, lrot, lref, lheld);
    /* the layer's units matched to the base's (both in joint order) */
    for (int bi = 0, li = 0; bi < s->nunit; bi++) {
        const seq_unit* bu = &s->unit[bi];
        while (li < ls->nunit && ls->unit[li].joint < bu->joint)
            li++;
        int same = li < ls->nunit && ls->unit[li].joint == bu->joint &&
                   ls->unit[li].kind == UNIT_RUN && bu->kind == UNIT_RUN && ls->unit[li].n == bu->n;
        map[bi] = same ? li : -1;
    }
    /* a layer run held as a rotation that the base does not hold: its angles (2 marks the
     * ones the base holds too) */
    for (int bi = 0; bi < s->nunit; bi++)
        if (map[bi] >= 0 && lheld[(int)map[bi]] != 0 && bheld[bi] != 0 &&
            mask_uniform(l->mask, &s->unit[bi]))
            lheld[(int)map[bi]] = 2;
    for (int li = 0; li < ls->nunit; li++) {
        if (lheld[li] == 0) continue;
        if (lheld[li] != 2) {
            const double* r = lrot + 4 * li;
            mn_anim_run_angles(ls, &ls->unit[li], mn_q4(r[0], r[1], r[2], r[3]), lref + 3 * li, lq);
            lheld[li] = 0;
        }
    }
    /* the base's held runs: blended as rotations (in batches), or (a mask that differs along
     * the run) given their angles to blend one by one */
    double* bq[MN_ANIM_BATCH];
    const double *bl[MN_ANIM_BATCH], *brest[MN_ANIM_BATCH];
    double ba[MN_ANIM_BATCH], lrun[4 * MN_ANIM_BATCH];
    int nb = 0;
    for (int bi = 0; bi < s->nunit; bi++) {
        if (bheld[bi] == 0) continue;
        const seq_unit* un = &s->unit[bi];
        double* br = brot + 4 * bi;
        if (!mask_uniform(l->mask, un)) {
            mn_anim_run_angles(s, un, mn_q4(br[0], br[1], br[2], br[3]), bref + 3 * bi, q);
            bheld[bi] = 0;
            for (int i = 0; i < un->n; i++)
                jheld[un->jnt[i]] = 0;
            continue;
        }
        double a = l->mask ? w * l->mask[un->jnt[0]] : w;
        if (!(a > 0)) continue;
        int li = (int)map[bi];
        double* lv = lrun + 4 * nb;
        if (li >= 0 && lheld[li] != 0) {
            memcpy(lv, lrot + 4 * li, 4 * sizeof(double));
        } else {
            mn_quat lr = run_from_angles(un, lq);
            lv[0] = lr.w, lv[1] = lr.x, lv[2] = lr.y, lv[3] = lr.z;
        }
        if (l->mode != MN_LAYER_ADDITIVE && a >= 1) {
            memcpy(br, lv, 4 * sizeof(double));
            continue;
        }
        bq[nb] = br, bl[nb] = lv, brest[nb] = un->rest, ba[nb++] = a;
        if (nb == MN_ANIM_BATCH) quat_blend_n(bq, bl, brest, ba, nb, l->mode), nb = 0;
    }
    if (nb) quat_blend_n(bq, bl, brest, ba, nb, l->mode);
    /* every other joint */
    const double* rest = m->q0;
    for (int j = 0, nj = m->njoint; j < nj; j++) {
        double a = l->mask ? w * l->mask[j] : w;
        if (!(a > 0) || jheld[j] != 0) continue;
        int t = m->jnt_type[j], i = m->jnt_qadr[j];
        if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) {
            q[i] += l->mode == MN_LAYER_ADDITIVE ? a * (lq[i] - rest[i]) : a * (lq[i] - q[i]);
        } else if (t == MN_JOINT_BALL || t == MN_JOINT_FREE) {
            if (t == MN_JOINT_FREE) {
                for (int k = 0; k < 3; k++)
                    q[i + k] += l->mode == MN_LAYER_ADDITIVE ? a * (lq[i + k] - rest[i + k])
                                                             : a * (lq[i + k] - q[i + k]);
                i += 3;
            }
            if (l->mode == MN_LAYER_ADDITIVE)
                quat_add(q + i, lq + i, rest + i, a);
            else if (a >= 1)
                memcpy(q + i, lq + i, 4 * sizeof(double));
            else
                quat_toward(q + i, lq + i, a);
        }
    }
}

/* mn_clamp_to_limits with the ranges of hinges and slides inline (the same comparisons as
 * mn_joint_clamp_value); balls through mn_joint_clamp. */
static void clamp_to_limits(const mn_model* m, double* q) {
    for (int j = 0, nj = m->njoint; j < nj; j++) {
        if (!m->jnt_limited[j]) continue;
        int t = m->jnt_type[j];
        double* v = q + m->jnt_qadr[j];
        if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) {
            const double* r = m->jnt_range + 2 * j;
            *v = *v < r[0] ? r[0] : *v > r[1] ? r[1] : *v;
        } else if (t == MN_JOINT_BALL) {
            mn_joint_clamp(m, j, v);
        }
    }
}

mn_status mn_seq_sample_blend(const mn_seq* s, double frame, double* q, double* work) {
    if (!s || !q || !isfinite(frame)) return MN_ERR_ARG;
    if (!s->ext || s->ext->nlayer == 0) return mn_seq_sample(s, frame, q);
    if (!work || s->nkey == 0) return MN_ERR_ARG;
    const mn_model* m = s->m;
    size_t J = (size_t)m->njoint + 1;
    double *brot = work + m->nq, *bref = brot + 4 * J, *bheld = bref + 3 * J;
    double* jheld = bheld + 10 * J; /* after the layer's rotations, references, flags, map */
    mn_seq_sample_runs(s, frame, q, brot, bref, bheld);
    for (int j = 0; j < m->njoint; j++)
        jheld[j] = 0;
    for (int bi = 0; bi < s->nunit; bi++)
        for (int i = 0; bheld[bi] != 0 && i < s->unit[bi].n; i++)
            jheld[s->unit[bi].jnt[i]] = 1;
    for (int i = 0; i < s->ext->nlayer; i++) {
        const seq_layer* l = &s->ext->layer[i];
        double w = weight_at(l, frame);
        if (!(w > 0) || l->seq->nkey == 0) continue;
        blend_layer(s, l, frame, w, q, work);
    }
    /* the compound joints held as rotations: decomposed once, on the base's branch */
    const seq_unit* ru[MN_ANIM_BATCH];
    const double *rr[MN_ANIM_BATCH], *rf[MN_ANIM_BATCH];
    int nr = 0;
    for (int bi = 0; bi < s->nunit; bi++) {
        if (bheld[bi] == 0) continue;
        ru[nr] = &s->unit[bi], rr[nr] = brot + 4 * bi, rf[nr++] = bref + 3 * bi;
        if (nr == MN_ANIM_BATCH) mn_anim_run_angles_n(s, ru, rr, rf, q, nr), nr = 0;
    }
    if (nr) mn_anim_run_angles_n(s, ru, rr, rf, q, nr);
    clamp_to_limits(m, q);
    return MN_OK;
}

/* ---- time warp ----------------------------------------------------------------------- */

/* The PCHIP slope at an inner key from the secants either side (Fritsch and Butland 1984:
 * the weighted harmonic mean; 0 at a local extremum or a hold). */
static double pchip_inner(double h0, double d0, double h1, double d1) {
    if (d0 * d1 <= 0) return 0;
    double w1 = 2 * h1 + h0, w2 = h1 + 2 * h0;
    return (w1 + w2) / (w1 / d0 + w2 / d1);
}
/* The PCHIP slope at an end key (the three-point formula, kept monotone). */
static double pchip_end(double h0, double d0, double h1, double d1) {
    double m = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
    if (m * d0 <= 0) return 0;
    if (d0 * d1 <= 0 && fabs(m) > fabs(3 * d0)) return 3 * d0;
    return m;
}

mn_status mn_seq_set_warp(mn_seq* s, int n, const double* t, const double* src, const double* speed,
                          mn_error* err) {
    if (!s || n < 0 || n == 1 || (n > 0 && (!t || !src)))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "time_warp",
                            "a time warp has no keys or at least two");
    for (int k = 0; k < n; k++) {
        if (!isfinite(t[k]) || !isfinite(src[k]) ||
            (speed && !isnan(speed[k]) && !(speed[k] >= 0 && speed[k] <= 1e6)))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "time_warp",
                                "key %d: frames are finite numbers and a speed lies in [0, 1e6]",
                                k);
        if (k > 0 && !(t[k] > t[k - 1]))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "time_warp",
                                "key %d: output frames must increase", k);
        if (k > 0 && !(src[k] >= src[k - 1]))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "time_warp",
                                "key %d: the warp may hold but never run backwards", k);
    }
    double* w = n ? malloc(sizeof(double) * 3 * (size_t)n) : NULL;
    if (n && !w) return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "time_warp", "out of memory");
    for (int k = 0; k < n; k++) {
        w[3 * k] = t[k], w[3 * k + 1] = src[k];
        double m;
        if (n == 2) {
            m = (src[1] - src[0]) / (t[1] - t[0]);
        } else if (k == 0 || k == n - 1) {
            int a = k == 0 ? 0 : n - 2, b = k == 0 ? 1 : n - 3; /* the end's segment, then next */
            double h0 = t[a + 1] - t[a], d0 = (src[a + 1] - src[a]) / h0;
            double h1 = t[b + 1] - t[b], d1 = (src[b + 1] - src[b]) / h1;
            m = pchip_end(h0, d0, h1, d1);
        } else {
            double h0 = t[k] - t[k - 1], h1 = t[k + 1] - t[k];
            m = pchip_inner(h0, (src[k] - src[k - 1]) / h0, h1, (src[k + 1] - src[k]) / h1);
        }
        w[3 * k + 2] = speed && !isnan(speed[k]) ? speed[k] : m;
    }
    /* monotone on every segment (Fritsch and Carlson 1980: alpha^2 + beta^2 <= 9) */
    for (int k = 0; k + 1 < n; k++) {
        double d = (w[3 * k + 4] - w[3 * k + 1]) / (w[3 * k + 3] - w[3 * k]);
        double a = w[3 * k + 2], b = w[3 * k + 5];
        int ok = d == 0 ? (a == 0 && b == 0) : (a / d) * (a / d) + (b / d) * (b / d) <= 9 + 1e-9;
        if (!ok) {
            free(w);
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "time_warp",
                                "keys %d-%d: the speeds given would run the warp backwards (a "
                                "hold needs speed 0 at both ends; elsewhere at most 3 times the "
                                "segment's mean speed)",
                                k, k + 1);
        }
    }
    struct seq_ext* e = n ? ext_of(s) : s->ext;
    if (n && !e) {
        free(w);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "time_warp", "out of memory");
    }
    if (e) {
        free(e->warp);
        e->warp = w;
        e->nwarp = n;
    }
    return MN_OK;
}

int mn_seq_warp_count(const mn_seq* s) {
    return s && s->ext ? s->ext->nwarp : 0;
}
mn_status mn_seq_warp_key(const mn_seq* s, int k, double* t, double* src, double* speed) {
    if (k < 0 || k >= mn_seq_warp_count(s)) return MN_ERR_ARG;
    const double* w = s->ext->warp + 3 * k;
    if (t) *t = w[0];
    if (src) *src = w[1];
    if (speed) *speed = w[2];
    return MN_OK;
}

double mn_seq_warp(const mn_seq* s, double t) {
    if (!s || !s->ext || s->ext->nwarp == 0) return t;
    const double* w = s->ext->warp;
    int n = s->ext->nwarp;
    if (t <= w[0]) return w[1] - (w[0] - t);
    if (t >= w[3 * (n - 1)]) return w[3 * (n - 1) + 1] + (t - w[3 * (n - 1)]);
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) >> 1;
        if (w[3 * mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    /* cubic Hermite on the segment */
    const double* a = w + 3 * lo;
    double h = a[3] - a[0], u = (t - a[0]) / h, u2 = u * u, u3 = u2 * u;
    return (2 * u3 - 3 * u2 + 1) * a[1] + (u3 - 2 * u2 + u) * h * a[2] + (-2 * u3 + 3 * u2) * a[4] +
           (u3 - u2) * h * a[5];
}

double mn_seq_out_start(const mn_seq* s) {
    return mn_seq_warp_count(s) ? s->ext->warp[0] : mn_seq_start(s);
}
double mn_seq_out_end(const mn_seq* s) {
    return mn_seq_warp_count(s) ? s->ext->warp[3 * (s->ext->nwarp - 1)] : mn_seq_end(s);
}
