/* Retargeting: a motion of one skeleton onto another (include/marionette/retarget.h and
 * docs/retarget.md).
 *
 * The joint frames follow Welman 2.1.2 / 6.1.1 (a compound joint is a run of hinges with
 * zero offsets) and Parent ch. 5 (hierarchical modelling, forward kinematics by a pass
 * parent before child); the clean-up is Welman 5.2's Lagrange solver through the constrain
 * layer, with the feet as maintained constraints (5.2.1, eq. 5.5-5.7) and the hands as drags
 * (5.3: handles pulled toward targets while the constraints hold). */
#include <marionette/retarget.h>

#include <stdlib.h>
#include <string.h>

#include "retarget_internal.h"

mn_retarget_options mn_retarget_options_default(void) {
    mn_retarget_options o;
    memset(&o, 0, sizeof o);
    o.cleanup = 1;
    o.contact_height = 0.12;
    o.contact_speed = 0.2;
    o.contact_release_height = 0.18;
    o.contact_release_speed = 0.3;
    o.contact_min_time = 0.025;
    o.blend_time = 0.1;
    o.hand_weight = 0.3;
    o.hands = 1;
    o.solve = mn_csolve_default();
    o.solve.tol = 5e-5; /* of the target's leg length: scaled in create */
    o.solve.max_iters = 20;
    return o;
}

/* ---- rotations ------------------------------------------------------------------------- */

/* The rotation of least angle that takes unit vector u onto unit vector v. */
static mn_mat3 min_rotation(mn_vec3 u, mn_vec3 v) {
    double c = mn_vec3_dot(u, v);
    mn_vec3 a = mn_vec3_cross(u, v);
    if (c < -1 + 1e-12) {
        /* opposite: half a turn about any axis across u */
        mn_vec3 t = fabs(u.x) < 0.9 ? mn_v3(1, 0, 0) : mn_v3(0, 1, 0);
        mn_vec3 ax = mn_vec3_normalize(mn_vec3_cross(u, t));
        return mn_mat3_axis_angle(ax, MN_PI);
    }
    mn_quat q = mn_quat_normalize(mn_q4(1 + c, a.x, a.y, a.z));
    return mn_quat_to_mat3(q);
}

/* The principal axis (with sign) nearest to v, as an index 0..2 and a sign. */
static mn_vec3 snap_axis(mn_vec3 v) {
    double ax = fabs(v.x), ay = fabs(v.y), az = fabs(v.z);
    if (ax >= ay && ax >= az) return mn_v3(v.x > 0 ? 1 : -1, 0, 0);
    if (ay >= az) return mn_v3(0, v.y > 0 ? 1 : -1, 0);
    return mn_v3(0, 0, v.z > 0 ? 1 : -1);
}

/* Frame with columns left, up, left x up. */
static mn_mat3 frame_of(mn_vec3 left, mn_vec3 up) {
    mn_vec3 f = mn_vec3_cross(left, up);
    mn_mat3 F = {{left.x, up.x, f.x, left.y, up.y, f.y, left.z, up.z, f.z}};
    return F;
}

/* ---- analysis of the two figures ------------------------------------------------------- */

/* Is joint b below joint a (a strict ancestor)? */
static int below(const mn_model* m, int a, int b) {
    return a != b && mn_model_is_ancestor(m, a, b);
}

/* The run of hinges that carries joint j (Welman 6.1.1's compound joint): j and the hinges
 * above it that sit at the same place with no rest rotation of their own, root first. */
static int hinge_run(const mn_model* m, int j, int run[3]) {
    int tmp[3], n = 0, k = j;
    while (n < 3) {
        tmp[n++] = k;
        mn_vec3 o = m->jnt_offset[k];
        if (o.x != 0 || o.y != 0 || o.z != 0 || !m->jnt_orient_ident[k]) break;
        int p = m->jnt_parent[k];
        if (p < 0 || m->jnt_type[p] != MN_JOINT_HINGE || m->jnt_nchild[p] != 1) break;
        k = p;
    }
    for (int i = 0; i < n; i++)
        run[i] = tmp[n - 1 - i];
    return n;
}

/* How the target joints of a bone take a rotation (see decompose()). */
static void classify_bone(const mn_model* m, rt_bone* b) {
    int tj = b->tj;
    b->nrun = 1;
    b->run[0] = tj;
    if (m->jnt_type[tj] == MN_JOINT_FREE) {
        b->kind = BONE_FREE;
        return;
    }
    if (m->jnt_type[tj] == MN_JOINT_BALL) {
        b->kind = BONE_BALL;
        return;
    }
    if (m->jnt_type[tj] != MN_JOINT_HINGE) {
        b->kind = BONE_NONE;
        return;
    }
    b->nrun = hinge_run(m, tj, b->run);
    int principal = 1, used[3] = {0, 0, 0};
    for (int i = 0; i < b->nrun; i++) {
        int j = b->run[i];
        mn_vec3 a = m->jnt_axis[j];
        int k = m->jnt_axis_kind[j]; /* 0..2: +x, +y, +z; 3..5: -x, -y, -z; -1: other */
        if (k >= 3) k -= 3;
        if (k < 0 || used[k])
            principal = 0;
        else {
            used[k] = 1;
            b->axis[i] = k;
            b->sign[i] = (k == 0 ? a.x : k == 1 ? a.y : a.z) > 0 ? 1.0 : -1.0;
        }
    }
    if (!principal) {
        b->kind = BONE_GENERIC;
        return;
    }
    if (b->nrun == 1) {
        b->kind = BONE_HINGE1;
        return;
    }
    if (b->nrun == 2) b->axis[2] = 3 - b->axis[0] - b->axis[1];
    b->kind = b->nrun == 3 ? BONE_EULER3 : BONE_EULER2;
    /* the Euler order of the axis sequence (R = R_a0 R_a1 R_a2, math.h's convention) */
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int o = 0; o < 6; o++)
        if (orders[o][0] == b->axis[0] && orders[o][1] == b->axis[1] && orders[o][2] == b->axis[2])
            b->order = o;
}

static int role_joint(const mn_model* m, const char* name) {
    return name[0] ? mn_model_find_joint(m, name) : -1;
}

/* First and last role of each chain, so that a role's "next" role is found by walking on. */
static int chain_end(int r) {
    if (r <= MN_ROLE_HEAD) return MN_ROLE_HEAD;
    if (r <= MN_ROLE_L_HAND) return MN_ROLE_L_HAND;
    if (r <= MN_ROLE_R_HAND) return MN_ROLE_R_HAND;
    if (r <= MN_ROLE_L_TOE) return MN_ROLE_L_TOE;
    return MN_ROLE_R_TOE;
}
static int chain_start(int r) {
    if (r <= MN_ROLE_HEAD) return MN_ROLE_HIPS;
    if (r <= MN_ROLE_L_HAND) return MN_ROLE_L_CLAVICLE;
    if (r <= MN_ROLE_R_HAND) return MN_ROLE_R_CLAVICLE;
    if (r <= MN_ROLE_L_TOE) return MN_ROLE_L_THIGH;
    return MN_ROLE_R_THIGH;
}

static mn_status map_error(mn_error* err, const mn_retarget_map* map, int role, int side,
                           const char* fmt, const char* name) {
    char field[64];
    snprintf(field, sizeof field, "%s %s", mn_role_name((mn_role)role), side ? "target" : "source");
    return mn_error_set(err, MN_ERR_NOTFOUND, map->file, map->line[role], field, fmt, name);
}

/* The map names a joint figure m does not have: say so, with the nearest names. */
static mn_status missing_joint(mn_error* err, const mn_retarget_map* map, int role, int side,
                               const mn_model* m, const char* name) {
    char field[64], hint[256];
    snprintf(field, sizeof field, "%s %s", mn_role_name((mn_role)role), side ? "target" : "source");
    return mn_error_set(err, MN_ERR_NOTFOUND, map->file, map->line[role], field,
                        "the %s figure has no joint '%s'%s", side ? "target" : "source", name,
                        mn_model_joint_hint(m, name, hint, sizeof hint));
}

/* Checks the map against the figures and fills the role joints. */
static mn_status resolve_map(mn_retarget* rt, const mn_retarget_map* map, mn_error* err) {
    for (int r = 0; r < MN_ROLE_COUNT; r++) {
        rt->sj[r] = role_joint(rt->src, map->source[r]);
        rt->tj[r] = role_joint(rt->dst, map->target[r]);
        if (map->source[r][0] && rt->sj[r] < 0)
            return missing_joint(err, map, r, 0, rt->src, map->source[r]);
        if (map->target[r][0] && rt->tj[r] < 0)
            return missing_joint(err, map, r, 1, rt->dst, map->target[r]);
    }
    static const int req[] = {MN_ROLE_HIPS,   MN_ROLE_L_THIGH, MN_ROLE_R_THIGH, MN_ROLE_L_SHIN,
                              MN_ROLE_R_SHIN, MN_ROLE_L_FOOT,  MN_ROLE_R_FOOT};
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        int r = req[i];
        if (rt->sj[r] < 0 || rt->tj[r] < 0)
            return map_error(err, map, r, rt->sj[r] >= 0, "%s: role needed on both sides",
                             mn_role_name((mn_role)r));
    }
    /* along a chain, each mapped joint is below the one before it, on both sides */
    for (int r = 0; r < MN_ROLE_COUNT; r++) {
        for (int side = 0; side < 2; side++) {
            const int* jj = side ? rt->tj : rt->sj;
            const mn_model* m = side ? rt->dst : rt->src;
            if (jj[r] < 0) continue;
            int prev = -1;
            for (int k = r - 1; k >= chain_start(r); k--)
                if (jj[k] >= 0) {
                    prev = jj[k];
                    break;
                }
            if (prev < 0 && r != MN_ROLE_HIPS) prev = jj[MN_ROLE_HIPS];
            if (prev >= 0 && !below(m, prev, jj[r]))
                return map_error(err, map, r, side,
                                 "joint '%s' is not below the joint of the role before it",
                                 side ? map->target[r] : map->source[r]);
            for (int k = 0; k < MN_ROLE_COUNT; k++)
                if (k != r && jj[k] == jj[r])
                    return map_error(err, map, r, side, "joint '%s' plays two roles",
                                     side ? map->target[r] : map->source[r]);
        }
    }
    int h = rt->tj[MN_ROLE_HIPS];
    if (rt->dst->jnt_type[h] != MN_JOINT_FREE)
        return map_error(err, map, MN_ROLE_HIPS, 1,
                         "joint '%s' must be a free joint to carry the root motion",
                         map->target[MN_ROLE_HIPS]);
    if (rt->src->jnt_type[rt->sj[MN_ROLE_HIPS]] != MN_JOINT_FREE)
        return map_error(err, map, MN_ROLE_HIPS, 0,
                         "joint '%s' must be a free joint (the root motion)",
                         map->source[MN_ROLE_HIPS]);
    return MN_OK;
}

static mn_vec3 pos(const mn_data* d, int j) {
    return d->xf[j].p;
}

static double leg_length(const mn_data* d, const int* jj, int thigh, int shin, int foot) {
    return mn_vec3_dist(pos(d, jj[thigh]), pos(d, jj[shin])) +
           mn_vec3_dist(pos(d, jj[shin]), pos(d, jj[foot]));
}

/* Up and left of a figure at rest, snapped to principal axes: up from the middle of the
 * feet to the middle of the thighs (a quadruped's spine runs forward, a biped's up: the legs
 * tell both), left from the right to the left thigh. */
static mn_status rest_axes(const mn_data* d, const int* jj, mn_vec3* up, mn_vec3* left,
                           const char* side, mn_error* err) {
    mn_vec3 mid =
        mn_vec3_scale(mn_vec3_add(pos(d, jj[MN_ROLE_L_THIGH]), pos(d, jj[MN_ROLE_R_THIGH])), 0.5);
    mn_vec3 u = mn_vec3_sub(
        mid,
        mn_vec3_scale(mn_vec3_add(pos(d, jj[MN_ROLE_L_FOOT]), pos(d, jj[MN_ROLE_R_FOOT])), 0.5));
    mn_vec3 l = mn_vec3_sub(pos(d, jj[MN_ROLE_L_THIGH]), pos(d, jj[MN_ROLE_R_THIGH]));
    if (!(mn_vec3_norm(u) > 0) || !(mn_vec3_norm(l) > 0))
        return mn_error_set(err, MN_ERR_ARG, "", 0, side,
                            "cannot tell up and left of the figure at rest (coincident joints)");
    *up = snap_axis(u);
    l = mn_vec3_madd(l, -mn_vec3_dot(l, *up), *up);
    if (!(mn_vec3_norm(l) > 1e-9 * mn_vec3_norm(u)))
        return mn_error_set(err, MN_ERR_ARG, "", 0, side,
                            "the thighs lie along the up axis at rest");
    *left = snap_axis(l);
    return MN_OK;
}

/* Per-bone rest alignment (docs/retarget.md "rest poses"): the bone of role r runs from its
 * joint to the joint of the next role of its chain mapped on both sides. */
static void setup_bones(mn_retarget* rt) {
    const mn_model *S = rt->src, *T = rt->dst;
    const mn_data *ds = rt->sd, *dt = rt->td;
    mn_mat3 align[MN_ROLE_COUNT];
    rt->nbone = 0;
    for (int r = 0; r < MN_ROLE_COUNT; r++) {
        align[r] = mn_mat3_identity();
        if (rt->sj[r] < 0 || rt->tj[r] < 0) continue;
        rt_bone* b = &rt->bone[rt->nbone++];
        memset(b, 0, sizeof *b);
        b->role = r;
        b->sj = rt->sj[r];
        b->tj = rt->tj[r];
        b->s_end = b->t_end = -1;
        if (r != MN_ROLE_HIPS) {
            for (int k = r + 1; k <= chain_end(r); k++)
                if (rt->sj[k] >= 0 && rt->tj[k] >= 0) {
                    b->s_end = rt->sj[k];
                    b->t_end = rt->tj[k];
                    break;
                }
        }
        mn_vec3 dS = {0, 0, 0}, dT = {0, 0, 0};
        if (b->t_end >= 0) {
            dS = mn_vec3_sub(pos(ds, b->s_end), pos(ds, b->sj));
            dT = mn_vec3_sub(pos(dt, b->t_end), pos(dt, b->tj));
            if (!(mn_vec3_norm(dS) > 1e-9) || !(mn_vec3_norm(dT) > 1e-9)) b->s_end = b->t_end = -1;
        }
        /* the source joint whose rotation turns the bone: the last one before its end (the
         * joint above the end's own compound joint, when the source has hinge runs) */
        int run[3];
        if (b->s_end >= 0) {
            int k = S->jnt_type[b->s_end] == MN_JOINT_HINGE ? hinge_run(S, b->s_end, run) : 0;
            b->s_twist = S->jnt_parent[k ? run[0] : b->s_end];
        } else {
            b->s_twist = b->sj;
        }
        /* a naive copy reads the source joint's rotation relative to the frame above its run */
        int k = S->jnt_type[b->sj] == MN_JOINT_HINGE ? hinge_run(S, b->sj, run) : 0;
        b->s_parent = S->jnt_parent[k ? run[0] : b->sj];
        b->Rs_rest_T = mn_mat3_transpose(&ds->xf[b->s_twist].R);
        mn_mat3 A;
        if (b->t_end >= 0) {
            dS = mn_vec3_normalize(mn_mat3_mulv(&rt->G, dS));
            dT = mn_vec3_normalize(dT);
            A = min_rotation(dT, dS);
            b->bone_local = mn_mat3_tmulv(&dt->xf[b->tj].R, dT);
        } else {
            /* a leaf (hand, foot, head) keeps its rest relation to the bone above it */
            A = mn_mat3_identity();
            for (int k = r - 1; k >= chain_start(r); k--)
                if (rt->sj[k] >= 0 && rt->tj[k] >= 0) {
                    A = align[k];
                    break;
                }
            if (r == MN_ROLE_HIPS) A = mn_mat3_identity();
        }
        align[r] = A;
        mn_mat3 C = mn_mat3_mul(&A, &dt->xf[b->tj].R);
        b->GtC = mn_mat3_tmul(&rt->G, &C);
        classify_bone(T, b);
        for (int i = 0; i < b->nrun; i++)
            rt->run_first[b->run[i]] = -1;
        rt->run_first[b->run[0]] = rt->nbone - 1;
    }
}

static void free_take(mn_retarget* rt) {
    free(rt->take);
    rt->take = NULL;
    rt->nframes = 0;
}

void mn_retarget_destroy(mn_retarget* rt) {
    if (!rt) return;
    free_take(rt);
    mn_csys_destroy(rt->csys);
    mn_data_destroy(rt->sd);
    mn_data_destroy(rt->td);
    free(rt->run_first);
    free(rt->prev);
    free(rt);
}

static mn_status setup_cleanup(mn_retarget* rt, mn_error* err) {
    mn_figure fig = {rt->dst, rt->td};
    mn_csys_def def = mn_csys_default();
    def.max_handles = 8;
    def.max_constraints = 8;
    rt->csys = mn_csys_create(&fig, 1, &def, err);
    if (!rt->csys) return err ? err->status : MN_ERR_NOMEM;
    static const char* eff_name[4] = {"left foot", "right foot", "left hand", "right hand"};
    for (int e = 0; e < 4; e++) {
        if (rt->eff_t[e] < 0 || (e >= 2 && !rt->opt.hands)) continue;
        mn_handle_def h = mn_handle_default();
        h.joint = rt->eff_t[e];
        h.name = eff_name[e];
        rt->handle[e] = mn_csys_add_handle(rt->csys, &h, err);
        if (rt->handle[e] < 0) return err ? err->status : MN_ERR_ARG;
        if (e < 2) {
            mn_constraint_def c = mn_constraint_default();
            c.handle = rt->handle[e];
            c.target = pos(rt->td, rt->eff_t[e]);
            c.name = eff_name[e];
            rt->con[e] = mn_csys_add_constraint(rt->csys, &c, err);
            if (rt->con[e] < 0) return err ? err->status : MN_ERR_ARG;
        }
    }
    return MN_OK;
}

mn_retarget* mn_retarget_create(const mn_model* src, const mn_model* dst,
                                const mn_retarget_map* map, const mn_retarget_options* opt,
                                mn_error* err) {
    if (!src || !dst) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "model", "NULL model");
        return NULL;
    }
    mn_retarget_options o = opt ? *opt : mn_retarget_options_default();
    if (!(o.contact_height >= 0) || !(o.contact_speed >= 0) || !(o.contact_min_time >= 0) ||
        !(o.contact_release_height >= 0) || !(o.contact_release_speed >= 0) ||
        !isfinite(o.contact_release_height) || !isfinite(o.contact_release_speed) ||
        !(o.blend_time >= 0) || !(o.hand_weight > 0) || !isfinite(o.contact_height) ||
        !isfinite(o.contact_speed) || !isfinite(o.blend_time) || !isfinite(o.hand_weight)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "options",
                     "thresholds must be finite and >= 0, hand_weight > 0");
        return NULL;
    }
    mn_retarget_map detected;
    const char* rig[2] = {NULL, NULL};
    if (!map) {
        if (mn_retarget_map_detect(src, dst, &detected, err) != MN_OK) return NULL;
        map = &detected;
        rig[0] = mn_rig_name(mn_rig_detect(src));
        rig[1] = mn_rig_name(mn_rig_detect(dst));
    }
    mn_retarget* rt = calloc(1, sizeof *rt);
    if (!rt) {
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "retarget", "out of memory");
        return NULL;
    }
    rt->src = src;
    rt->dst = dst;
    rt->opt = o;
    rt->rig[0] = rig[0];
    rt->rig[1] = rig[1];
    if (resolve_map(rt, map, err) != MN_OK) {
        mn_retarget_destroy(rt);
        return NULL;
    }
    rt->sd = mn_data_create(src, 0);
    rt->td = mn_data_create(dst, 0);
    rt->run_first = malloc(sizeof(int) * (size_t)dst->njoint);
    rt->prev = malloc(sizeof(double) * (size_t)dst->nq);
    if (!rt->sd || !rt->td || !rt->run_first || !rt->prev) {
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "retarget", "out of memory");
        mn_retarget_destroy(rt);
        return NULL;
    }
    for (int j = 0; j < dst->njoint; j++)
        rt->run_first[j] = -1;
    /* rest frames of both figures */
    mn_data_reset(src, rt->sd);
    mn_fk(src, rt->sd);
    mn_data_reset(dst, rt->td);
    mn_fk(dst, rt->td);
    mn_vec3 upS, leftS, upT, leftT;
    if (rest_axes(rt->sd, rt->sj, &upS, &leftS, "source", err) != MN_OK ||
        rest_axes(rt->td, rt->tj, &upT, &leftT, "target", err) != MN_OK) {
        mn_retarget_destroy(rt);
        return NULL;
    }
    rt->up_s = upS;
    rt->up_t = upT;
    mn_mat3 FS = frame_of(leftS, upS), FT = frame_of(leftT, upT);
    rt->G = mn_mat3_mul(&FT, (mn_mat3[]){mn_mat3_transpose(&FS)});
    double legS =
        0.5 * (leg_length(rt->sd, rt->sj, MN_ROLE_L_THIGH, MN_ROLE_L_SHIN, MN_ROLE_L_FOOT) +
               leg_length(rt->sd, rt->sj, MN_ROLE_R_THIGH, MN_ROLE_R_SHIN, MN_ROLE_R_FOOT));
    double legT =
        0.5 * (leg_length(rt->td, rt->tj, MN_ROLE_L_THIGH, MN_ROLE_L_SHIN, MN_ROLE_L_FOOT) +
               leg_length(rt->td, rt->tj, MN_ROLE_R_THIGH, MN_ROLE_R_SHIN, MN_ROLE_R_FOOT));
    if (!(legS > 0) || !(legT > 0)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, legS > 0 ? "target" : "source",
                     "legs of zero length at rest");
        mn_retarget_destroy(rt);
        return NULL;
    }
    rt->leg_s = legS;
    rt->leg_t = legT;
    rt->scale = legT / legS;
    /* the target stands at rest with its ankles on its ground */
    mn_vec3 hipT = pos(rt->td, rt->tj[MN_ROLE_HIPS]);
    double ankT = fmin(mn_vec3_dot(upT, pos(rt->td, rt->tj[MN_ROLE_L_FOOT])),
                       mn_vec3_dot(upT, pos(rt->td, rt->tj[MN_ROLE_R_FOOT])));
    rt->o_t = mn_vec3_madd(hipT, ankT - mn_vec3_dot(upT, hipT), upT);
    mn_vec3 midT = mn_vec3_scale(
        mn_vec3_add(pos(rt->td, rt->tj[MN_ROLE_L_THIGH]), pos(rt->td, rt->tj[MN_ROLE_R_THIGH])),
        0.5);
    rt->mid_local = mn_mat3_tmulv(&rt->td->xf[rt->tj[MN_ROLE_HIPS]].R, mn_vec3_sub(midT, hipT));
    setup_bones(rt);
    static const int eff_role[4] = {MN_ROLE_L_FOOT, MN_ROLE_R_FOOT, MN_ROLE_L_HAND, MN_ROLE_R_HAND};
    for (int e = 0; e < 4; e++) {
        rt->eff_t[e] = rt->tj[eff_role[e]];
        rt->eff_s[e] = rt->sj[eff_role[e]];
        if (rt->eff_t[e] < 0 || rt->eff_s[e] < 0) rt->eff_t[e] = rt->eff_s[e] = -1;
        rt->handle[e] = rt->con[e] = -1;
    }
    rt->last_frame = -1;
    rt->last_mode = -1;
    if (o.cleanup) {
        rt->opt.solve.tol = o.solve.tol * legT;
        rt->opt.solve.drag_tol = o.solve.drag_tol * legT;
        if (setup_cleanup(rt, err) != MN_OK) {
            mn_retarget_destroy(rt);
            return NULL;
        }
    }
    memcpy(rt->prev, dst->q0, sizeof(double) * (size_t)dst->nq);
    return rt;
}

void mn_retarget_get_info(const mn_retarget* rt, mn_retarget_info* info) {
    if (!rt || !info) return;
    memset(info, 0, sizeof *info);
    info->scale = rt->scale;
    info->leg_source = rt->leg_s;
    info->leg_target = rt->leg_t;
    info->contacts[0] = rt->ncontact[0];
    info->contacts[1] = rt->ncontact[1];
    info->mapped_roles = rt->nbone;
    info->rig[0] = rt->rig[0];
    info->rig[1] = rt->rig[1];
    info->target_foot[0] = rt->tj[MN_ROLE_L_FOOT];
    info->target_foot[1] = rt->tj[MN_ROLE_R_FOOT];
    info->source_foot[0] = rt->sj[MN_ROLE_L_FOOT];
    info->source_foot[1] = rt->sj[MN_ROLE_R_FOOT];
}

int mn_retarget_contact(const mn_retarget* rt, int foot, int frame) {
    if (!rt || !rt->take || foot < 0 || foot > 1 || frame < 0 || frame >= rt->nframes) return 0;
    return rt->contact[foot][frame];
}

/* ---- the take: ground, contacts, target paths ------------------------------------------ */

static mn_vec3 to_target(const mn_retarget* rt, mn_vec3 p) {
    mn_vec3 d = mn_mat3_mulv(&rt->G, mn_vec3_sub(p, rt->o_s));
    return mn_vec3_madd(rt->o_t, rt->scale, d);
}

static mn_vec3 horizontal(mn_vec3 v, mn_vec3 up) {
    return mn_vec3_madd(v, -mn_vec3_dot(v, up), up);
}

static double smooth(double w) {
    return w * w * (3 - 2 * w);
}

/* Height above its floor and horizontal speed of one point of a foot over the take: the
 * floor is the point's lowest height within a second either side (a floor that drifts in
 * the capture, an added T-pose frame, do not matter), the speed a central difference over
 * about 1/30 s (at least one frame each side, whatever the frame rate). */
static void height_speed(const mn_retarget* rt, const mn_vec3* p, double dt, double* h, double* v) {
    int n = rt->nframes, w = (int)ceil(1.0 / dt);
    int hw = (int)floor(1.0 / 60 / dt + 0.5);
    if (hw < 1) hw = 1;
    for (int f = 0; f < n; f++)
        v[f] = mn_vec3_dot(rt->up_s, p[f]);
    for (int f = 0; f < n; f++) {
        double lo = v[f];
        for (int g = f - w < 0 ? 0 : f - w; g <= f + w && g < n; g++)
            lo = fmin(lo, v[g]);
        h[f] = v[f] - lo;
    }
    for (int f = 0; f < n; f++) {
        int a = f - hw < 0 ? 0 : f - hw, b = f + hw > n - 1 ? n - 1 : f + hw;
        v[f] = b > a ? mn_vec3_norm(horizontal(mn_vec3_sub(p[b], p[a]), rt->up_s)) / ((b - a) * dt)
                     : 0;
    }
}

/* Contacts of one point of a foot (heel: the ankle; toe: the toe joint), written as bit
 * `bit` of rt->contact[foot] (docs/retarget.md "contacts"). A Schmitt trigger on height
 * and speed in leg lengths: a contact starts when the point is within contact_height of
 * its floor and slower than contact_speed, or when it has stayed within the release
 * thresholds (contact_release_height, contact_release_speed) for contact_min_time; it
 * lasts while the point stays within the release thresholds. Runs shorter than
 * contact_min_time (and than three frames) are dropped. */
static void detect_point(mn_retarget* rt, int foot, int bit, const mn_vec3* p, double dt) {
    int n = rt->nframes;
    unsigned char* c = rt->contact[foot];
    double *h = rt->scratch, *v = rt->scratch + n;
    height_speed(rt, p, dt, h, v);
    const mn_retarget_options* o = &rt->opt;
    double L = rt->leg_s;
    double h_on = o->contact_height * L, v_on = o->contact_speed * L;
    double h_off = fmax(o->contact_release_height, o->contact_height) * L;
    double v_off = fmax(o->contact_release_speed, o->contact_speed) * L;
    int minrun = (int)ceil(o->contact_min_time / dt - 1e-9);
    if (minrun < 3) minrun = 3;
    for (int f = 0; f < n;) {
        int loose = h[f] <= h_off && v[f] <= v_off;
        if (!loose) {
            f++;
            continue;
        }
        /* a run within the release thresholds: a contact if it is long enough and at some
         * frame within the entry thresholds, or long enough on its own (debounced) */
        int g = f, tight = 0;
        while (g < n && h[g] <= h_off && v[g] <= v_off) {
            if (h[g] <= h_on && v[g] <= v_on) tight = 1;
            g++;
        }
        if (g - f >= minrun && tight)
            for (int k = f; k < g; k++)
                c[k] |= (unsigned char)bit;
        f = g;
    }
}

/* Intervals of each foot a generic detector would call planted, for the metrics (the
 * definition of the issue that the metrics report against, independent of the options):
 * the scaled source ankle within 15 % of the leg length of its lowest height over the take
 * and slower than 25 % of the leg length per second (neighbouring frames), for three frames
 * at least. Bit MN_CONTACT_PLANTED of rt->contact[foot]; traj in target space. */
static void detect_planted(mn_retarget* rt, int foot, const mn_vec3* traj, double dt) {
    int n = rt->nframes;
    unsigned char* c = rt->contact[foot];
    double lo = INFINITY, L = rt->leg_t;
    for (int f = 0; f < n; f++)
        lo = fmin(lo, mn_vec3_dot(rt->up_t, traj[f]));
    int run = 0;
    for (int f = 0; f <= n; f++) {
        int planted = 0;
        if (f < n) {
            int a = f > 0 ? f - 1 : f, b = f < n - 1 ? f + 1 : f;
            double v = b > a ? mn_vec3_norm(horizontal(mn_vec3_sub(traj[b], traj[a]), rt->up_t)) /
                                   ((b - a) * dt)
                             : 0;
            planted = mn_vec3_dot(rt->up_t, traj[f]) - lo <= 0.15 * L && v < 0.25 * L;
        }
        if (planted) {
            run++;
            continue;
        }
        if (run >= 3)
            for (int k = f - run; k < f; k++)
                c[k] |= MN_CONTACT_PLANTED;
        run = 0;
    }
}

static int count_runs(const unsigned char* c, int n, int mask) {
    int count = 0;
    for (int f = 0; f < n; f++)
        if ((c[f] & mask) && (f == 0 || !(c[f - 1] & mask))) count++;
    return count;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* The ankle's target while the foot is in contact (docs/retarget.md "contacts"): held at
 * the mean of its scaled path while the ankle itself is planted (MN_CONTACT_HOLD); while
 * only the heel or only the toe is down, at that point's anchor plus the source's scaled
 * offset of the ankle from it (the foot rolls about its heel, then its toe). An anchor is
 * where the frame before (or the held frame after) put the point, or the point's mean
 * position over the run when no contact touches it. Writes hold[f] for contact frames. */
static void contact_holds(const mn_retarget* rt, int foot, const mn_vec3* traj, const mn_vec3* heel,
                          const mn_vec3* toe, mn_vec3* hold) {
    int n = rt->nframes;
    const unsigned char* c = rt->contact[foot];
    for (int f = 0; f < n;) {
        if (!(c[f] & MN_CONTACT_HOLD)) {
            f++;
            continue;
        }
        int g = f;
        mn_vec3 mean = {0, 0, 0};
        while (g < n && (c[g] & MN_CONTACT_HOLD))
            mean = mn_vec3_add(mean, traj[g++]);
        mean = mn_vec3_scale(mean, 1.0 / (g - f));
        for (int k = f; k < g; k++)
            hold[k] = mean;
        f = g;
    }
    for (int f = 0; f < n;) {
        int cf = c[f];
        if (!(cf & MN_CONTACT_ANY) || (cf & MN_CONTACT_HOLD)) {
            f++;
            continue;
        }
        /* a run rolling about one point: the heel when it is down, else the toe */
        const mn_vec3* piv = (cf & MN_CONTACT_HEEL) ? heel : toe;
        int bit = (cf & MN_CONTACT_HEEL) ? MN_CONTACT_HEEL : MN_CONTACT_TOE;
        int g = f;
        while (g < n && (c[g] & bit) && !(c[g] & MN_CONTACT_HOLD) &&
               (bit == MN_CONTACT_HEEL || !(c[g] & MN_CONTACT_HEEL)))
            g++;
        int at = f > 0 && (c[f - 1] & MN_CONTACT_ANY) ? f - 1
                 : g < n && (c[g] & MN_CONTACT_HOLD)  ? g
                                                      : -1;
        mn_vec3 anchor = {0, 0, 0};
        if (at >= 0) {
            anchor = mn_vec3_add(hold[at], mn_vec3_sub(piv[at], traj[at]));
        } else {
            for (int k = f; k < g; k++)
                anchor = mn_vec3_add(anchor, piv[k]);
            anchor = mn_vec3_scale(anchor, 1.0 / (g - f));
        }
        for (int k = f; k < g; k++)
            hold[k] = mn_vec3_add(anchor, mn_vec3_sub(traj[k], piv[k]));
        f = g;
    }
}

/* Foot targets: the scaled ankle path, held (contact_holds) while the foot is in contact
 * and eased in and out of the hold over blend_time with a smoothstep. */
static void foot_targets(mn_retarget* rt, int foot, const mn_vec3* traj, const mn_vec3* heel,
                         const mn_vec3* toe, double dt) {
    int n = rt->nframes;
    const unsigned char* c = rt->contact[foot];
    mn_vec3* out = rt->foot_target[foot];
    double* w = rt->scratch;
    int nb = (int)floor(rt->opt.blend_time / dt + 0.5);
    double jump = 10 * rt->leg_t * dt;
    contact_holds(rt, foot, traj, heel, toe, out);
    for (int f = 0; f < n; f++)
        w[f] = (c[f] & MN_CONTACT_ANY) ? 1.0 : 0.0;
    for (int f = 0; f < n;) {
        if (!(c[f] & MN_CONTACT_ANY)) {
            f++;
            continue;
        }
        int g = f;
        while (g < n && (c[g] & MN_CONTACT_ANY))
            g++;
        /* ease in before f toward the first hold, out after g from the last */
        /* not across a jump of the source (a T-pose frame added before the take, a cut):
         * an ankle faster than 10 leg lengths a second */
        int k0 = f - nb;
        for (int k = f - 1; k >= 0 && k >= f - nb; k--)
            if (mn_vec3_dist(traj[k + 1], traj[k]) > jump) {
                k0 = k + 1;
                break;
            }
        for (int k = k0; k < f; k++) {
            if (k < 0) continue;
            double wk = 1.0 - (double)(f - k) / (nb + 1);
            if (wk > w[k]) {
                w[k] = wk;
                out[k] = mn_vec3_lerp(traj[k], out[f], smooth(wk));
            }
        }
        for (int k = g; k < g + nb && k < n; k++) {
            if (mn_vec3_dist(traj[k], traj[k - 1]) > jump) break;
            double wk = 1.0 - (double)(k - g + 1) / (nb + 1);
            if (wk > w[k] && !(c[k] & MN_CONTACT_ANY)) {
                w[k] = wk;
                out[k] = mn_vec3_lerp(traj[k], out[g - 1], smooth(wk));
            }
        }
        f = g;
    }
    for (int f = 0; f < n; f++)
        if (w[f] == 0) out[f] = traj[f];
}

mn_status mn_retarget_set_take(mn_retarget* rt, const double* src_q, int nframes, double frame_time,
                               mn_error* err) {
    if (!rt || !src_q || nframes < 1 || !(frame_time > 0) || !isfinite(frame_time))
        return mn_error_set(err, MN_ERR_ARG, "", 0, "take",
                            "need frames and a positive frame time");
    const mn_model* S = rt->src;
    for (long i = 0; i < (long)nframes * S->nq; i++)
        if (!isfinite(src_q[i]))
            return mn_error_set(err, MN_ERR_ARG, "", 0, "take", "frame %ld has a non-finite value",
                                i / S->nq);
    free_take(rt);
    size_t n = (size_t)nframes;
    /* one block: 4 target paths, 4 source paths, 2 toe and 2 heel paths, 2 scratch rows, 2
     * contact rows */
    size_t bytes = 12 * n * sizeof(mn_vec3) + 2 * n * sizeof(double) + 2 * n + 64;
    rt->take = malloc(bytes);
    if (!rt->take) return mn_error_set(err, MN_ERR_NOMEM, "", 0, "take", "out of memory");
    mn_vec3* v = rt->take;
    rt->foot_target[0] = v;
    rt->foot_target[1] = v + n;
    rt->hand_target[0] = v + 2 * n;
    rt->hand_target[1] = v + 3 * n;
    mn_vec3* ank[2] = {v + 4 * n, v + 5 * n};
    mn_vec3* wri[2] = {v + 6 * n, v + 7 * n};
    mn_vec3* toe[2] = {v + 8 * n, v + 9 * n};
    rt->ankle_path[0] = ank[0];
    rt->ankle_path[1] = ank[1];
    mn_vec3* heel[2] = {v + 10 * n, v + 11 * n};
    rt->scratch = (double*)(v + 12 * n);
    rt->contact[0] = (unsigned char*)(rt->scratch + 2 * n);
    rt->contact[1] = rt->contact[0] + n;
    memset(rt->contact[0], 0, 2 * n);
    rt->src_q = src_q;
    rt->nframes = nframes;
    rt->frame_time = frame_time;
    mn_vec3 hip0 = {0, 0, 0};
    int toe_s[2] = {rt->sj[MN_ROLE_L_TOE], rt->sj[MN_ROLE_R_TOE]};
    rt->ncontact[0] = rt->ncontact[1] = 0;
    /* the heel: the point under the ankle at the toe's height at rest, carried by the foot */
    mn_vec3 heel_rest[2] = {{0, 0, 0}, {0, 0, 0}};
    mn_mat3 foot_rest_T[2];
    mn_data_reset(S, rt->sd);
    mn_fk(S, rt->sd);
    for (int k = 0; k < 2; k++) {
        const mn_xform* X = &rt->sd->xf[rt->eff_s[k]];
        foot_rest_T[k] = mn_mat3_transpose(&X->R);
        if (toe_s[k] >= 0) {
            double drop = mn_vec3_dot(rt->up_s, mn_vec3_sub(X->p, pos(rt->sd, toe_s[k])));
            heel_rest[k] = mn_vec3_scale(rt->up_s, -fmax(drop, 0));
        }
    }
    for (int f = 0; f < nframes; f++) {
        memcpy(rt->sd->q, src_q + (size_t)f * S->nq, sizeof(double) * (size_t)S->nq);
        mn_fk(S, rt->sd);
        if (f == 0) hip0 = pos(rt->sd, rt->sj[MN_ROLE_HIPS]);
        for (int k = 0; k < 2; k++) {
            ank[k][f] = pos(rt->sd, rt->eff_s[k]);
            wri[k][f] = rt->eff_s[2 + k] >= 0 ? pos(rt->sd, rt->eff_s[2 + k]) : mn_v3(0, 0, 0);
            toe[k][f] = toe_s[k] >= 0 ? pos(rt->sd, toe_s[k]) : ank[k][f];
            mn_mat3 D = mn_mat3_mul(&rt->sd->xf[rt->eff_s[k]].R, &foot_rest_T[k]);
            heel[k][f] = mn_vec3_add(ank[k][f], mn_mat3_mulv(&D, heel_rest[k]));
        }
    }
    /* the source's stance height: the median over the take of the lower ankle (one foot is
     * on the ground most of the time), under the first frame's hips */
    for (int f = 0; f < nframes; f++)
        rt->scratch[f] = fmin(mn_vec3_dot(rt->up_s, ank[0][f]), mn_vec3_dot(rt->up_s, ank[1][f]));
    qsort(rt->scratch, n, sizeof(double), cmp_double);
    double lo = rt->scratch[n / 2];
    rt->o_s = mn_vec3_madd(hip0, lo - mn_vec3_dot(rt->up_s, hip0), rt->up_s);
    for (int k = 0; k < 2; k++) {
        detect_point(rt, k, MN_CONTACT_HOLD, ank[k], frame_time);
        detect_point(rt, k, MN_CONTACT_HEEL, heel[k], frame_time);
        if (toe_s[k] >= 0) detect_point(rt, k, MN_CONTACT_TOE, toe[k], frame_time);
        rt->ncontact[k] = count_runs(rt->contact[k], nframes, MN_CONTACT_ANY);
        for (int f = 0; f < nframes; f++) {
            ank[k][f] = to_target(rt, ank[k][f]);
            toe[k][f] = to_target(rt, toe[k][f]);
            heel[k][f] = to_target(rt, heel[k][f]);
            rt->hand_target[k][f] = to_target(rt, wri[k][f]);
        }
        detect_planted(rt, k, ank[k], frame_time);
        foot_targets(rt, k, ank[k], heel[k], toe[k], frame_time);
    }
    memcpy(rt->prev, rt->dst->q0, sizeof(double) * (size_t)rt->dst->nq);
    rt->last_frame = -1;
    rt->last_mode = -1;
    return MN_OK;
}

/* ---- one frame ------------------------------------------------------------------------- */

/* Joint values of a hinge run from its rotation L relative to the run's base frame: the
 * Euler angles in the run's axis order (Welman 6.1.1 compound joint), the branch nearest
 * the previous frame (and, when clamping, inside the limits), then clamped. */
static void decompose_euler(const mn_model* T, const rt_bone* b, const mn_mat3* L,
                            const double* prev, int clamp, double* q) {
    /* in the Euler angles' own signs: hinge value = sign * angle, sign = +-1 */
    double e[3], ref[3] = {0, 0, 0}, lo[3], hi[3], w[3];
    mn_euler_from_mat3((mn_euler_order)b->order, L, e);
    for (int i = 0; i < b->nrun; i++) {
        int j = b->run[i];
        double sg = b->sign[i];
        ref[i] = sg * prev[T->jnt_qadr[j]];
        lo[i] = -INFINITY, hi[i] = INFINITY;
        if (T->jnt_limited[j]) {
            lo[i] = sg > 0 ? T->jnt_range[2 * j] : -T->jnt_range[2 * j + 1];
            hi[i] = sg > 0 ? T->jnt_range[2 * j + 1] : -T->jnt_range[2 * j];
        }
    }
    mn_euler_nearest(e, ref, b->nrun, clamp ? lo : NULL, clamp ? hi : NULL, w);
    for (int i = 0; i < b->nrun; i++)
        q[T->jnt_qadr[b->run[i]]] = b->sign[i] * w[i];
}

/* The angle of L's twist about the unit axis (mn_swing_twist); callers move it by whole
 * turns next to the previous frame's. */
static double twist_angle(const mn_mat3* L, mn_vec3 axis) {
    double tw;
    mn_vec3 sw;
    mn_swing_twist(mn_quat_from_mat3(L), axis, &tw, &sw);
    return tw;
}

/* Writes the joint values of bone b for the world rotation W of its joint frame, given the
 * frame X of the run's first joint's parent. */
static void decompose(const mn_model* T, const rt_bone* b, const mn_xform* X, const mn_mat3* W,
                      const double* prev, int clamp, double* q) {
    int j0 = b->run[0];
    mn_mat3 Rb = mn_mat3_mul(&X->R, &T->jnt_orient_mat[j0]);
    mn_mat3 L = mn_mat3_tmul(&Rb, W);
    int a = T->jnt_qadr[j0];
    switch (b->kind) {
    case BONE_FREE:
    case BONE_BALL: {
        mn_quat r = mn_quat_from_mat3(&L);
        int o = b->kind == BONE_FREE ? a + 3 : a;
        mn_quat p = mn_q4(prev[o], prev[o + 1], prev[o + 2], prev[o + 3]);
        if (mn_quat_dot(r, p) < 0) r = mn_q4(-r.w, -r.x, -r.y, -r.z);
        q[o] = r.w;
        q[o + 1] = r.x;
        q[o + 2] = r.y;
        q[o + 3] = r.z;
        break;
    }
    case BONE_EULER3:
    case BONE_EULER2:
        decompose_euler(T, b, &L, prev, clamp, q);
        break;
    case BONE_HINGE1:
        q[a] = mn_angle_near(twist_angle(&L, T->jnt_axis[j0]), prev[a]);
        break;
    case BONE_GENERIC:
        /* hinges about general axes: peel the twist about each axis in turn (approximate) */
        for (int i = 0; i < b->nrun; i++) {
            int j = b->run[i];
            double ang = mn_angle_near(twist_angle(&L, T->jnt_axis[j]), prev[T->jnt_qadr[j]]);
            q[T->jnt_qadr[j]] = ang;
            mn_mat3 Ri = mn_mat3_axis_angle(T->jnt_axis[j], ang);
            L = mn_mat3_tmul(&Ri, &L);
        }
        break;
    default:
        break;
    }
    if (clamp)
        for (int i = 0; i < b->nrun; i++) {
            int j = b->run[i];
            if (T->jnt_type[j] == MN_JOINT_HINGE) {
                int k = T->jnt_qadr[j];
                q[k] = mn_joint_clamp_value(T, j, q[k]);
            }
        }
}

/* The world rotation the target frame of bone b takes (docs/retarget.md "rest poses"): the
 * source bone's world rotation from rest, carried into the target's axes by G, applied to
 * the aligned target rest frame; then the bone's direction set to the source bone's. */
static mn_mat3 bone_world(const mn_retarget* rt, const rt_bone* b) {
    const mn_data* ds = rt->sd;
    mn_mat3 D = mn_mat3_mul(&ds->xf[b->s_twist].R, &b->Rs_rest_T);
    mn_mat3 DG = mn_mat3_mul(&D, &b->GtC);
    mn_mat3 W = mn_mat3_mul(&rt->G, &DG);
    if (b->t_end >= 0) {
        mn_vec3 have = mn_mat3_mulv(&W, b->bone_local);
        mn_vec3 want = mn_vec3_sub(pos(ds, b->s_end), pos(ds, b->sj));
        want = mn_vec3_normalize(mn_mat3_mulv(&rt->G, want));
        mn_mat3 Q = min_rotation(mn_vec3_normalize(have), want);
        W = mn_mat3_mul(&Q, &W);
    }
    return W;
}

/* The target state for the source pose now in rt->sd: one pass over the target joints,
 * parent before child (Parent ch. 5), solving each bone's joints when its run begins. */
static void map_pose(mn_retarget* rt, mn_retarget_mode mode, double* q) {
    const mn_model* T = rt->dst;
    mn_data* dt = rt->td;
    int naive = mode == MN_RETARGET_NAIVE;
    memcpy(q, T->q0, sizeof(double) * (size_t)T->nq);
    for (int j = 0; j < T->njoint; j++) {
        int p = T->jnt_parent[j];
        mn_xform X = p >= 0 ? dt->xf[p] : mn_xform_identity();
        int bi = rt->run_first[j];
        if (bi >= 0) {
            const rt_bone* b = &rt->bone[bi];
            mn_mat3 W;
            if (naive && b->role != MN_ROLE_HIPS) {
                /* a naive copy: the source joint's local rotation as is */
                int ps = b->s_parent;
                mn_mat3 Lsrc = ps >= 0 ? mn_mat3_tmul(&rt->sd->xf[ps].R, &rt->sd->xf[b->sj].R)
                                       : rt->sd->xf[b->sj].R;
                mn_mat3 Rb = mn_mat3_mul(&X.R, &T->jnt_orient_mat[j]);
                W = mn_mat3_mul(&Rb, &Lsrc);
            } else {
                W = bone_world(rt, b);
            }
            decompose(T, b, &X, &W, rt->prev, !naive, q);
            if (b->role == MN_ROLE_HIPS) {
                /* root motion: the middle of the source's thighs, scaled by the legs
                 * (to_target), is where the target's falls; the hips frame sits above it */
                mn_vec3 mid = mn_vec3_scale(mn_vec3_add(pos(rt->sd, rt->sj[MN_ROLE_L_THIGH]),
                                                        pos(rt->sd, rt->sj[MN_ROLE_R_THIGH])),
                                            0.5);
                mn_vec3 pw = mn_vec3_sub(to_target(rt, mid), mn_mat3_mulv(&W, rt->mid_local));
                mn_vec3 pl =
                    mn_vec3_sub(mn_mat3_tmulv(&X.R, mn_vec3_sub(pw, X.p)), T->jnt_offset[j]);
                int a = T->jnt_qadr[j];
                q[a] = pl.x;
                q[a + 1] = pl.y;
                q[a + 2] = pl.z;
            }
        }
        mn_joint_apply(T, j, T->jnt_type[j] == MN_JOINT_FIXED ? NULL : q + T->jnt_qadr[j], &X);
        dt->xf[j] = X;
    }
}

mn_status mn_retarget_frame(mn_retarget* rt, int frame, mn_retarget_mode mode, double* dst_q) {
    if (!rt || !dst_q || !rt->take || frame < 0 || frame >= rt->nframes) return MN_ERR_ARG;
    if (mode != MN_RETARGET_MAPPED && mode != MN_RETARGET_NAIVE) return MN_ERR_ARG;
    const mn_model *S = rt->src, *T = rt->dst;
    if (frame != rt->last_frame + 1 || (int)mode != rt->last_mode)
        memcpy(rt->prev, T->q0, sizeof(double) * (size_t)T->nq);
    if (frame != rt->last_frame + 1 && frame > 0 && (int)mode == rt->last_mode) {
        /* a jump: start the branch search from the previous frame's own mapping */
        memcpy(rt->sd->q, rt->src_q + (size_t)(frame - 1) * S->nq, sizeof(double) * (size_t)S->nq);
        mn_fk(S, rt->sd);
        map_pose(rt, mode, rt->prev);
    }
    memcpy(rt->sd->q, rt->src_q + (size_t)frame * S->nq, sizeof(double) * (size_t)S->nq);
    mn_fk(S, rt->sd);
    double* q = rt->td->q;
    map_pose(rt, mode, q);
    mn_status st = MN_OK;
    if (mode == MN_RETARGET_MAPPED && rt->opt.cleanup && rt->csys) {
        mn_csys_invalidate(rt->csys);
        for (int k = 0; k < 2; k++)
            if (rt->con[k] >= 0)
                mn_csys_set_target(rt->csys, rt->con[k], rt->foot_target[k][frame]);
        for (int k = 0; k < 2; k++)
            if (rt->handle[2 + k] >= 0)
                mn_csys_drag(rt->csys, rt->handle[2 + k], rt->hand_target[k][frame],
                             rt->opt.hand_weight, 1);
        mn_csolve_result res;
        st = mn_csys_solve(rt->csys, &rt->opt.solve, &res);
    }
    memcpy(dst_q, q, sizeof(double) * (size_t)T->nq);
    memcpy(rt->prev, q, sizeof(double) * (size_t)T->nq);
    rt->last_frame = frame;
    rt->last_mode = (int)mode;
    return st;
}

/* ---- metrics --------------------------------------------------------------------------- */

mn_status mn_retarget_measure(mn_retarget* rt, const double* dst_q, int nframes,
                              mn_retarget_metrics* out) {
    if (!rt || !dst_q || !out || !rt->take || nframes != rt->nframes) return MN_ERR_ARG;
    const mn_model* T = rt->dst;
    mn_data* d = rt->td;
    mn_retarget_metrics m;
    memset(&m, 0, sizeof m);
    double slide[2] = {0, 0}, skate_sum = 0, pslide[2] = {0, 0}, psrc[2] = {0, 0};
    int prun[2] = {0, 0};
    double still = 0.025 * rt->leg_t;
    mn_vec3 last[2] = {{0, 0, 0}, {0, 0, 0}};
    long nfoot = 0, nhand = 0;
    for (int f = 0; f < nframes; f++) {
        const double* q = dst_q + (size_t)f * T->nq;
        memcpy(d->q, q, sizeof(double) * (size_t)T->nq);
        mn_fk(T, d);
        for (int k = 0; k < 2; k++) {
            int j = rt->tj[k ? MN_ROLE_R_FOOT : MN_ROLE_L_FOOT];
            mn_vec3 p = pos(d, j);
            double e = mn_vec3_dist(p, rt->foot_target[k][f]) * 1000;
            m.foot_err_mean_mm += e;
            m.foot_err_max_mm = fmax(m.foot_err_max_mm, e);
            nfoot++;
            const unsigned char* cc = rt->contact[k];
            int c = cc[f] & MN_CONTACT_HOLD, cprev = f > 0 && (cc[f - 1] & MN_CONTACT_HOLD);
            double step = f > 0 ? mn_vec3_norm(horizontal(mn_vec3_sub(p, last[k]), rt->up_t)) : 0;
            if (c && cprev) slide[k] += step;
            if (c && !cprev) slide[k] = 0;
            if (c && (f == nframes - 1 || !(cc[f + 1] & MN_CONTACT_HOLD))) {
                m.skate_max_mm = fmax(m.skate_max_mm, slide[k] * 1000);
                skate_sum += slide[k] * 1000;
                m.contacts_held++;
            }
            /* the generic planted intervals */
            int pl = cc[f] & MN_CONTACT_PLANTED, plp = f > 0 && (cc[f - 1] & MN_CONTACT_PLANTED);
            if (pl && !plp) pslide[k] = psrc[k] = 0;
            if (pl && plp) {
                pslide[k] += step;
                psrc[k] += mn_vec3_norm(horizontal(
                    mn_vec3_sub(rt->ankle_path[k][f], rt->ankle_path[k][f - 1]), rt->up_t));
            }
            if (pl) prun[k]++;
            if (pl && (f == nframes - 1 || !(cc[f + 1] & MN_CONTACT_PLANTED))) {
                m.planted++;
                if (psrc[k] < still) {
                    m.planted_still++;
                    if (pslide[k] * 1000 >= m.planted_skate_max_mm) {
                        m.planted_skate_max_mm = pslide[k] * 1000;
                        m.planted_source_mm = psrc[k] * 1000;
                    }
                }
            }
            last[k] = p;
            if (rt->eff_t[2 + k] >= 0) {
                double eh = mn_vec3_dist(pos(d, rt->eff_t[2 + k]), rt->hand_target[k][f]) * 1000;
                m.hand_err_mean_mm += eh;
                m.hand_err_max_mm = fmax(m.hand_err_max_mm, eh);
                nhand++;
            }
        }
        for (int j = 0; j < T->njoint; j++) {
            int t = T->jnt_type[j];
            if ((t != MN_JOINT_HINGE && t != MN_JOINT_SLIDE) || !T->jnt_limited[j]) continue;
            double v = q[T->jnt_qadr[j]], ex = fabs(v - mn_joint_clamp_value(T, j, v));
            if (ex > 1e-9) {
                m.limit_violations++;
                if (t == MN_JOINT_HINGE)
                    m.limit_excess_max_deg = fmax(m.limit_excess_max_deg, ex * 180 / MN_PI);
            }
        }
    }
    if (nfoot) m.foot_err_mean_mm /= nfoot;
    if (nhand) m.hand_err_mean_mm /= nhand;
    if (m.contacts_held) m.skate_mean_mm = skate_sum / m.contacts_held;
    m.contacts = rt->ncontact[0] + rt->ncontact[1];
    *out = m;
    return MN_OK;
}
