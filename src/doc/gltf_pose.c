/* Posing a glTF skin: animation sampling (glTF 3.11 and Appendix C), skinning matrices and
 * linear blend skinning (glTF 3.7.3), and the skin's joints as a marionette model.
 * Sampling and skinning allocate nothing: they may run inside a time step. */
#include "doc/gltf_internal.h"
#include "doc/doc_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- sampling ------------------------------------------------------------------------- */

/* Value of key k (the middle of the triple for CUBICSPLINE). */
static const double* key_value(const gltf_channel* ch, int k, int nc) {
    return ch->values + (size_t)nc * (ch->interp == GLTF_CUBIC ? 3 * (size_t)k + 1 : (size_t)k);
}

/* One channel at time t (glTF Appendix C): held at the ends, STEP holds the earlier key,
 * LINEAR lerps translation/scale and slerps rotation, CUBICSPLINE is the cubic Hermite
 * spline p(s) = (2s^3-3s^2+1) v_k + td (s^3-2s^2+s) b_k + (-2s^3+3s^2) v_k+1
 * + td (s^3-s^2) a_k+1 with td the key interval, b the out- and a the in-tangents. */
static void eval_channel(const gltf_channel* ch, double t, double* out) {
    int nc = ch->path == GLTF_PATH_R ? 4 : 3, n = ch->nkeys;
    const double* tm = ch->times;
    if (n == 1 || t <= tm[0] || t >= tm[n - 1]) {
        memcpy(out, key_value(ch, n == 1 || t <= tm[0] ? 0 : n - 1, nc),
               (size_t)nc * sizeof(double));
        return;
    }
    int lo = 0, hi = n - 1; /* tm[lo] <= t < tm[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (tm[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    double td = tm[hi] - tm[lo], s = td > 0 ? (t - tm[lo]) / td : 1;
    const double* a = key_value(ch, lo, nc);
    const double* b = key_value(ch, hi, nc);
    if (ch->interp == GLTF_STEP) {
        memcpy(out, a, (size_t)nc * sizeof(double));
    } else if (ch->interp == GLTF_CUBIC) {
        const double* bout = a + nc; /* out-tangent of key lo */
        const double* ain = b - nc;  /* in-tangent of key hi */
        double s2 = s * s, s3 = s2 * s;
        double h00 = 2 * s3 - 3 * s2 + 1, h10 = td * (s3 - 2 * s2 + s);
        double h01 = -2 * s3 + 3 * s2, h11 = td * (s3 - s2);
        for (int k = 0; k < nc; k++)
            out[k] = h00 * a[k] + h10 * bout[k] + h01 * b[k] + h11 * ain[k];
        if (nc == 4) {
            double len =
                sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]);
            if (len > 0)
                for (int k = 0; k < 4; k++)
                    out[k] /= len;
            else
                memcpy(out, a, 4 * sizeof(double));
        }
    } else if (nc == 4) {
        /* glTF stores (x, y, z, w) */
        mn_quat qa = mn_q4(a[3], a[0], a[1], a[2]), qb = mn_q4(b[3], b[0], b[1], b[2]);
        mn_quat q = mn_quat_slerp(qa, qb, s);
        out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
    } else {
        for (int k = 0; k < 3; k++)
            out[k] = a[k] + s * (b[k] - a[k]);
    }
}

void mn_gltf_local(const mn_gltf* g, int a, double t, int k, double* out) {
    const gltf_priv* p = g->priv;
    const gltf_rest* r = &p->rest[k];
    const int* lk = a >= 0 ? ((const gltf_anim_priv*)g->anims[a].channels)->lookup : NULL;
    if (lk) lk += 3 * k;
    if (!lk || r->has_matrix || (lk[0] < 0 && lk[1] < 0 && lk[2] < 0)) {
        memcpy(out, r->m, 12 * sizeof(double));
        return;
    }
    const gltf_channel* ch = ((const gltf_anim_priv*)g->anims[a].channels)->ch;
    double tr[3], s[3], q[4];
    mn_quat rot = r->r;
    memcpy(tr, r->t, sizeof tr);
    memcpy(s, r->s, sizeof s);
    if (lk[GLTF_PATH_T] >= 0) eval_channel(&ch[lk[GLTF_PATH_T]], t, tr);
    if (lk[GLTF_PATH_S] >= 0) eval_channel(&ch[lk[GLTF_PATH_S]], t, s);
    if (lk[GLTF_PATH_R] >= 0) {
        eval_channel(&ch[lk[GLTF_PATH_R]], t, q);
        rot = mn_q4(q[3], q[0], q[1], q[2]);
    }
    mn_gltf_trs(tr, rot, s, out);
}

mn_status mn_gltf_sample(const mn_gltf* g, int anim, double t, double* joint_world) {
    if (!g || !g->priv || !joint_world || anim >= g->nanims || isnan(t)) return MN_ERR_ARG;
    if (anim < 0 || t < 0) {
        anim = -1;
    } else if (t > g->anims[anim].duration) {
        t = g->anims[anim].duration;
    }
    const gltf_priv* p = g->priv;
    double w[12], l[12], tmp[12];
    for (int o = 0; o < g->njoints; o++) {
        int j = p->order[o];
        if (g->joint_parent[j] >= 0)
            memcpy(w, joint_world + 12 * g->joint_parent[j], sizeof w);
        else
            mn_gltf_aff_identity(w);
        for (int i = 0; i < p->path_len[j]; i++) {
            mn_gltf_local(g, anim, t, p->path[p->path_off[j] + i], l);
            mn_gltf_aff_mul(w, l, tmp);
            memcpy(w, tmp, sizeof w);
        }
        mn_gltf_local(g, anim, t, j, l);
        mn_gltf_aff_mul(w, l, joint_world + 12 * j);
    }
    return MN_OK;
}

/* ---- skinning ------------------------------------------------------------------------- */

void mn_gltf_skin_matrices(const mn_gltf* g, const double* joint_world, double* skin_mats) {
    for (int j = 0; j < g->njoints; j++)
        mn_gltf_aff_mul(joint_world + 12 * j, g->inverse_bind + 12 * j, skin_mats + 12 * j);
}

/* Linear blend skinning (glTF 3.7.3.3): x = sum_k w_k S_{j_k} x_rest. */
void mn_gltf_skin_vertices(const mn_gltf* g, const double* skin_mats, double* out_pos) {
    for (int v = 0; v < g->nverts; v++) {
        const double* x = g->rest_pos + 3 * v;
        double acc[3] = {0, 0, 0};
        for (int k = 0; k < 4; k++) {
            double w = g->vweight[4 * v + k];
            if (w == 0) continue;
            const double* m = skin_mats + 12 * g->vjoint[4 * v + k];
            for (int r = 0; r < 3; r++)
                acc[r] += w * (m[4 * r] * x[0] + m[4 * r + 1] * x[1] + m[4 * r + 2] * x[2] +
                               m[4 * r + 3]);
        }
        memcpy(out_pos + 3 * v, acc, sizeof acc);
    }
}

/* ---- the marionette model ------------------------------------------------------------- */

/* Rotation of a 3x4 transform with its scale divided out of the columns; 0 when the frame
 * is degenerate or mirrored. */
static int frame_rotation(const double* w, mn_quat* q) {
    mn_mat3 R;
    for (int c = 0; c < 3; c++) {
        double n = sqrt(w[c] * w[c] + w[4 + c] * w[4 + c] + w[8 + c] * w[8 + c]);
        if (!(n > 1e-12)) return 0;
        for (int r = 0; r < 3; r++)
            R.m[3 * r + c] = w[4 * r + c] / n;
    }
    double det = R.m[0] * (R.m[4] * R.m[8] - R.m[5] * R.m[7]) -
                 R.m[1] * (R.m[3] * R.m[8] - R.m[5] * R.m[6]) +
                 R.m[2] * (R.m[3] * R.m[7] - R.m[4] * R.m[6]);
    if (!(det > 0)) return 0;
    *q = mn_quat_normalize(mn_quat_from_mat3(&R));
    return 1;
}

mn_model* mn_gltf_model(const mn_gltf* g, mn_error* err) {
    if (!g || !g->priv || g->njoints < 1) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "", "no glTF skin");
        return NULL;
    }
    int nj = g->njoints;
    const gltf_priv* p = g->priv;
    double* w = malloc((size_t)nj * 12 * sizeof(double));
    mn_quat* q = malloc((size_t)nj * sizeof(mn_quat));
    int* idx = malloc((size_t)nj * sizeof(int));
    /* children lists, each in ascending joint order: first child, next sibling (-1 ends) */
    int* kid = malloc((size_t)nj * 2 * sizeof(int));
    mn_spec* spec = mn_spec_create(g->name ? g->name : "skin");
    mn_model* m = NULL;
    if (!w || !q || !idx || !kid || !spec) {
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "", "out of memory");
        goto done;
    }
    mn_gltf_sample(g, -1, -1, w);
    for (int j = 0; j < nj; j++)
        if (!frame_rotation(w + 12 * j, &q[j])) {
            mn_error_set(err, MN_ERR_UNSUPPORTED, "", 0, g->joint_name[j],
                         "degenerate or mirrored rest frame: not a rigid joint");
            goto done;
        }
    int *first = kid, *next = kid + nj;
    for (int j = 0; j < nj; j++)
        first[j] = -1;
    for (int c = nj - 1; c >= 0; c--) {
        int par = g->joint_parent[c];
        next[c] = par >= 0 ? first[par] : -1;
        if (par >= 0) first[par] = c;
    }
    for (int o = 0; o < nj; o++) {
        int j = p->morder[o];
        const double* wj = w + 12 * j;
        mn_joint_def d = mn_joint_default();
        d.name = g->joint_name[j];
        /* Twist axis (for swing/twist limits): towards the first child, the bone's
         * direction; +y, the bone axis of most exporters, for a joint without one. */
        d.axis = mn_v3(0, 1, 0);
        for (int c = first[j]; c >= 0; c = next[c]) {
            mn_mat3 Rj = mn_quat_to_mat3(q[j]);
            mn_vec3 bone = mn_mat3_tmulv(
                &Rj, mn_v3(w[12 * c + 3] - wj[3], w[12 * c + 7] - wj[7], w[12 * c + 11] - wj[11]));
            if (mn_vec3_norm(bone) > 1e-9 * (1 + fabs(wj[3]) + fabs(wj[7]) + fabs(wj[11]))) {
                d.axis = mn_vec3_normalize(bone);
                break;
            }
        }
        mn_vec3 pj = mn_v3(wj[3], wj[7], wj[11]);
        int par = g->joint_parent[j];
        memset(d.q0, 0, sizeof d.q0);
        if (par < 0) {
            /* Roots: FREE, placed at their rest world frame (ancestors included). */
            d.type = MN_JOINT_FREE;
            d.parent = -1;
            d.offset = pj;
            d.orient = q[j];
            d.q0[3] = 1;
        } else {
            /* Children: at the rest position seen from the parent's rigid frame; BALL, or
             * FREE when an animation moves the joint in its parent's frame (p->jtrans). */
            const double* wp = w + 12 * par;
            mn_mat3 Rp = mn_quat_to_mat3(q[par]);
            d.type = p->jtrans && p->jtrans[j] ? MN_JOINT_FREE : MN_JOINT_BALL;
            d.parent = idx[par];
            d.offset = mn_mat3_tmulv(&Rp, mn_vec3_sub(pj, mn_v3(wp[3], wp[7], wp[11])));
            d.orient = mn_quat_normalize(mn_quat_mul(mn_quat_conj(q[par]), q[j]));
            d.q0[d.type == MN_JOINT_FREE ? 3 : 0] = 1;
        }
        idx[j] = mn_spec_add_joint(spec, &d, err);
        if (idx[j] < 0) goto done;
    }
    m = mn_model_compile(spec, err);
done:
    mn_spec_destroy(spec);
    free(w);
    free(q);
    free(idx);
    free(kid);
    return m;
}

/* ---- animations as motions of that model ---------------------------------------------- */

/* The model joint type of glTF joint j (see mn_gltf_model). */
static int joint_type(const mn_gltf* g, int j) {
    const gltf_priv* p = g->priv;
    return g->joint_parent[j] < 0 || (p->jtrans && p->jtrans[j]) ? MN_JOINT_FREE : MN_JOINT_BALL;
}

/* Is m the model of g's skin (joint for joint by name, FREE roots, BALL children whose
 * parents match)? Fills map[j] = model joint of glTF joint j. names: m's joint names. */
static int model_matches(const mn_gltf* g, const mn_model* m, const mn_name_map* names, int* map) {
    if (m->njoint != g->njoints) return 0;
    for (int j = 0; j < g->njoints; j++) {
        map[j] = mn_name_map_get(names, g->joint_name[j]);
        if (map[j] < 0) return 0;
    }
    for (int j = 0; j < g->njoints; j++) {
        int mj = map[j], par = g->joint_parent[j];
        if (m->jnt_type[mj] != joint_type(g, j) || m->jnt_parent[mj] != (par < 0 ? -1 : map[par]))
            return 0;
    }
    return 1;
}

static void put_quat(double* q, mn_quat v, const double* prev) {
    if (prev && v.w * prev[0] + v.x * prev[1] + v.y * prev[2] + v.z * prev[3] < 0)
        v = mn_q4(-v.w, -v.x, -v.y, -v.z);
    q[0] = v.w, q[1] = v.x, q[2] = v.y, q[3] = v.z;
}

/* The state of m at time t (map: model joint of each glTF joint, NULL when m's joints are
 * in p->morder). Every joint is turned to its glTF joint's world rotation (scale divided
 * out); a FREE joint's translation puts it at its glTF joint's world position:
 * p = R_parent^T (x_world - x_parent) - offset, T = T_parent Trans(offset + p) Rot(o) Rot(q). */
static mn_status state_of_world(const mn_gltf* g, const mn_model* m, const int* map,
                                const double* w, const double* qp, double* qf, mn_quat* rot,
                                double t, mn_error* err) {
    const gltf_priv* p = g->priv;
    int nj = g->njoints;
    memcpy(qf, m->q0, sizeof(double) * (size_t)m->nq);
    for (int j = 0; j < nj; j++)
        if (!frame_rotation(w + 12 * j, &rot[j]))
            return mn_error_set(err, MN_ERR_UNSUPPORTED, "", 0, g->joint_name[j],
                                "degenerate or mirrored frame at t = %g", t);
    for (int o = 0; o < nj; o++) {
        int j = p->morder[o], mj = map ? map[j] : o, a = m->jnt_qadr[mj], par = g->joint_parent[j];
        mn_quat oc = mn_quat_conj(m->jnt_orient[mj]);
        /* world rotation = R_parent R_o R_q */
        mn_quat rel = par >= 0 ? mn_quat_mul(mn_quat_conj(rot[par]), rot[j]) : rot[j];
        if (m->jnt_type[mj] == MN_JOINT_FREE) {
            mn_vec3 d = mn_v3(w[12 * j + 3], w[12 * j + 7], w[12 * j + 11]);
            if (par >= 0) {
                mn_mat3 Rp = mn_quat_to_mat3(rot[par]);
                d = mn_mat3_tmulv(
                    &Rp, mn_vec3_sub(d, mn_v3(w[12 * par + 3], w[12 * par + 7], w[12 * par + 11])));
            }
            mn_vec3 pl = mn_vec3_sub(d, m->jnt_offset[mj]);
            qf[a] = pl.x, qf[a + 1] = pl.y, qf[a + 2] = pl.z;
            a += 3;
        }
        put_quat(qf + a, mn_quat_normalize(mn_quat_mul(oc, rel)), qp ? qp + a : NULL);
    }
    return MN_OK;
}

static mn_status state_at(const mn_gltf* g, const mn_model* m, const int* map, int anim, double t,
                          const double* qp, double* qf, double* w, mn_quat* rot, mn_error* err) {
    mn_gltf_sample(g, anim, t, w);
    return state_of_world(g, m, map, w, qp, qf, rot, t, err);
}

mn_status mn_gltf_state(const mn_gltf* g, const mn_model* m, int anim, double t, const double* prev,
                        double* q, double* work, mn_error* err) {
    if (!g || !g->priv || !m || !q || !work || anim >= g->nanims || isnan(t))
        return mn_error_set(err, MN_ERR_ARG, "", 0, "", "bad argument");
    const gltf_priv* p = g->priv;
    if (m->njoint != g->njoints)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "model",
                            "not the model of this glTF skin (mn_gltf_model)");
    for (int o = 0; o < g->njoints; o++) {
        int j = p->morder[o], par = g->joint_parent[j];
        if (strcmp(m->jnt_name[o], g->joint_name[j]) != 0 || m->jnt_type[o] != joint_type(g, j) ||
            (par < 0 ? m->jnt_parent[o] != -1
                     : strcmp(m->jnt_name[m->jnt_parent[o]], g->joint_name[par]) != 0))
            return mn_error_set(err, MN_ERR_ARG, "", 0, "model",
                                "not the model of this glTF skin (mn_gltf_model)");
    }
    return state_at(g, m, NULL, anim, t, prev, q, work,
                    (mn_quat*)(void*)(work + 12 * (size_t)g->njoints), err);
}

mn_status mn_gltf_state_world(const mn_gltf* g, const mn_model* m, const double* joint_world,
                              const double* prev, double* q, double* work, mn_error* err) {
    if (!g || !g->priv || !m || !joint_world || !q || !work)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "", "bad argument");
    const gltf_priv* p = g->priv;
    int ok = m->njoint == g->njoints;
    for (int o = 0; ok && o < g->njoints; o++) {
        int j = p->morder[o], par = g->joint_parent[j];
        ok = !strcmp(m->jnt_name[o], g->joint_name[j]) && m->jnt_type[o] == joint_type(g, j) &&
             (par < 0 ? m->jnt_parent[o] == -1
                      : !strcmp(m->jnt_name[m->jnt_parent[o]], g->joint_name[par]));
    }
    if (!ok)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "model",
                            "not the model of this glTF skin (mn_gltf_model)");
    return state_of_world(g, m, NULL, joint_world, prev, q, (mn_quat*)(void*)work, 0, err);
}

/* The motion at frames f / fps (at_keys: at the animation's key times instead). */
static mn_status motion_at(const mn_gltf* g, const mn_model* m, int anim, double fps, int at_keys,
                           mn_motion* out, mn_error* err);

mn_status mn_gltf_motion(const mn_gltf* g, const mn_model* m, int anim, double fps, mn_motion* out,
                         mn_error* err) {
    return motion_at(g, m, anim, fps, 0, out, err);
}

static mn_status motion_at(const mn_gltf* g, const mn_model* m, int anim, double fps, int at_keys,
                           mn_motion* out, mn_error* err) {
    if (out) memset(out, 0, sizeof *out);
    if (!g || !g->priv || !m || !out || !(fps > 0) || !isfinite(fps) || anim >= g->nanims)
        return mn_error_set(err, MN_ERR_ARG, "", 0, !(fps > 0) || !isfinite(fps) ? "fps" : "anim",
                            "bad argument");
    int nj = g->njoints;
    double dur = anim >= 0 ? g->anims[anim].duration : 0;
    /* frames at k / fps, and one more at the duration unless the last is within 1e-4 of a
     * frame of it (then that frame is put at the duration itself) */
    double nf = at_keys ? g->anims[anim].nkeys : ceil(dur * fps - 1e-4) + 1;
    /* Samples per clip scale with the clip's data: at most MN_GLTF_MAX_FRAMES_PER_KEY per
     * key time it holds (and never fewer than MN_GLTF_MIN_FRAME_LIMIT), and at most
     * MN_GLTF_MAX_MOTION_NUMBERS numbers in all: a 3 KB file whose two keys lie 7.5e5 s
     * apart does not become 2 GB of frames. */
    double keys = anim >= 0 ? g->anims[anim].nkeys : 0;
    double most = fmax(MN_GLTF_MIN_FRAME_LIMIT, MN_GLTF_MAX_FRAMES_PER_KEY * keys);
    if (nf > most || nf * (m->nq > 0 ? m->nq : 1) > MN_GLTF_MAX_MOTION_NUMBERS)
        return mn_error_set(
            err, MN_ERR_ARG, "", 0, "fps",
            "%.0f frames of %d numbers (%.3g s at %g fps): more than the limit of %.0f frames "
            "for %.0f key times and %.0f numbers in all (docs/gltf.md)",
            nf, m->nq, dur, fps, most, keys, MN_GLTF_MAX_MOTION_NUMBERS);
    int nframes = (int)nf;
    int* map = malloc((size_t)nj * sizeof(int));
    double* w = malloc((size_t)nj * 12 * sizeof(double));
    mn_quat* rot = malloc((size_t)nj * sizeof(mn_quat));
    double* q = malloc((size_t)nframes * (size_t)m->nq * sizeof(double));
    mn_status s = MN_OK;
    mn_name_map names;
    int have_names = mn_name_map_of_model(&names, m);
    if (!map || !w || !rot || !q || !have_names) {
        s = mn_error_set(err, MN_ERR_NOMEM, "", 0, "", "out of memory");
        goto done;
    }
    if (!model_matches(g, m, &names, map)) {
        s = mn_error_set(err, MN_ERR_ARG, "", 0, "model",
                         "not the model of this glTF skin (mn_gltf_model)");
        goto done;
    }
    for (int f = 0; f < nframes; f++) {
        double t = anim < 0           ? -1
                   : at_keys          ? g->anims[anim].key_times[f]
                   : f == nframes - 1 ? dur
                                      : fmin(f / fps, dur);
        double* qf = q + (size_t)f * (size_t)m->nq;
        s = state_at(g, m, map, anim, t, f > 0 ? qf - m->nq : NULL, qf, w, rot, err);
        if (s) goto done;
    }
    out->nframes = nframes;
    out->nq = m->nq;
    out->frame_time = 1.0 / fps;
    out->q = q;
    q = NULL;
done:
    if (have_names) mn_name_map_free(&names);
    free(map);
    free(w);
    free(rot);
    free(q);
    return s;
}

int mn_gltf_find_anim(const mn_gltf* g, const char* name) {
    for (int a = 0; g && name && a < g->nanims; a++)
        if (g->anims[a].name && strcmp(g->anims[a].name, name) == 0) return a;
    return -1;
}

mn_status mn_gltf_motion_keys(const mn_gltf* g, const mn_model* m, int anim, const char* name,
                              mn_motion* out, mn_warnings* warn, mn_error* err) {
    if (out) memset(out, 0, sizeof *out);
    if (!g || !g->priv || anim < 0 || anim >= g->nanims)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "anim", "bad argument");
    const mn_gltf_anim* an = &g->anims[anim];
    double fps = 30.0, dur = an->duration;
    if (an->nkeys >= 2 && dur > 0) {
        /* evenly spaced keys from 0: one frame per key */
        double dt = dur / (an->nkeys - 1);
        int even = an->key_times[0] == 0;
        for (int k = 1; k < an->nkeys && even; k++)
            even = fabs(an->key_times[k] - k * dt) <= 1e-4 * dt;
        if (even) return motion_at(g, m, anim, (an->nkeys - 1) / dur, 1, out, err);
        /* 30 Hz, but never more than 16 frames per key (plus 1024): a long animation with
         * few keys must not cost more than its keys do */
        double limit = 16.0 * an->nkeys + 1024;
        if (dur * fps + 2 > limit) {
            fps = (limit - 2) / dur;
            mn_warn(warn, name ? name : "", 0, an->name,
                    "keys not evenly spaced over %g s: resampled at %g Hz (%.0f frames)", dur, fps,
                    limit - 1);
        }
    }
    return mn_gltf_motion(g, m, anim, fps, out, err);
}
