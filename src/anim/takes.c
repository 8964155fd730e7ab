/* Operations on sampled takes (takes.h): planted feet, the root's ground motion and heading
 * as a track of its own, a crossfade with the feet's phases aligned and planted feet locked by
 * the sequence solver (Welman 6.3: in-betweens that keep their constraints), and seamless
 * loops. The blend of two poses is the override layer's (layers.c). */
#include <marionette/takes.h>

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_internal.h"

/* ---- feet ---------------------------------------------------------------------------- */

static int name_has(const char* name, const char* word) {
    size_t n = strlen(word);
    for (const char* p = name; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == word[i])
            i++;
        if (i == n) return 1;
    }
    return 0;
}

/* Side of a joint name: 0 left, 1 right, -1 neither ("left..", "l_..", "L..." followed by an
 * upper-case letter as in CMU's LHipJoint). */
static int side_of(const char* name) {
    if (name_has(name, "left")) return 0;
    if (name_has(name, "right")) return 1;
    if ((name[0] == 'L' || name[0] == 'l') && (name[1] == '_' || isupper((unsigned char)name[1])))
        return 0;
    if ((name[0] == 'R' || name[0] == 'r') && (name[1] == '_' || isupper((unsigned char)name[1])))
        return 1;
    return -1;
}

mn_status mn_take_feet_find(const mn_model* m, const mn_vec3* up, mn_take_feet* feet,
                            mn_error* err) {
    if (!m || !feet) return mn_error_set(err, MN_ERR_ARG, NULL, 0, "feet", "NULL argument");
    feet->up = up ? mn_vec3_normalize(*up) : mn_v3(0, 1, 0);
    if (!(mn_vec3_norm(feet->up) > 0.5))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "up", "the up axis is not a direction");
    static const char* const words[2] = {"ankle", "foot"};
    for (int side = 0; side < 2; side++) {
        feet->joint[side] = -1;
        for (int w = 0; w < 2 && feet->joint[side] < 0; w++)
            for (int j = 0; j < m->njoint && feet->joint[side] < 0; j++)
                if (side_of(m->jnt_name[j]) == side && name_has(m->jnt_name[j], words[w])) {
                    /* the first of a compound joint's run is the one with the offset: take the
                     * last of the run (its child is not a "foot" of the same run) */
                    int k = j;
                    while (k + 1 < m->njoint && m->jnt_parent[k + 1] == k &&
                           mn_vec3_norm(m->jnt_offset[k + 1]) == 0)
                        k++;
                    feet->joint[side] = k;
                }
        if (feet->joint[side] < 0)
            return mn_error_set(err, MN_ERR_NOTFOUND, NULL, 0, "feet",
                                "no %s ankle or foot joint in %s", side ? "right" : "left",
                                m->name ? m->name : "the figure");
    }
    /* the leg: the ankle's two bones above it */
    double leg = 0;
    int bones = 0;
    for (int j = feet->joint[0]; j > 0 && bones < 2; j = m->jnt_parent[j]) {
        double l = mn_vec3_norm(m->jnt_offset[j]);
        if (l > 0) leg += l, bones++;
    }
    if (!(leg > 0))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "feet", "the legs have no length");
    feet->leg = leg;
    return MN_OK;
}

/* Positions of joint j over the take (nframes). */
static void joint_path(const mn_model* m, mn_data* d, const double* q, int nframes, int j,
                       mn_vec3* out) {
    for (int f = 0; f < nframes; f++) {
        memcpy(d->q, q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        out[f] = d->xf[j].p;
    }
}

/* Planted frames from a foot's path: low and slow, in runs of at least min_frames, runs closer
 * than gap merged. */
static int planted_runs(const mn_vec3* p, int n, double fps, mn_vec3 up, double hmax, double vmax,
                        int min_frames, int gap, int* iv, int cap) {
    double hmin = HUGE_VAL;
    for (int f = 0; f < n; f++)
        if (mn_vec3_dot(p[f], up) < hmin) hmin = mn_vec3_dot(p[f], up);
    int count = 0, run0 = -1, last_end = -1000000;
    for (int f = 0; f <= n; f++) {
        int on = 0;
        if (f < n) {
            int a = f > 0 ? f - 1 : f, b = f + 1 < n ? f + 1 : f;
            double v = b > a ? mn_vec3_norm(mn_vec3_sub(p[b], p[a])) * fps / (b - a) : 0;
            on = mn_vec3_dot(p[f], up) - hmin <= hmax && v <= vmax;
        }
        if (on && run0 < 0) run0 = f;
        if (!on && run0 >= 0) {
            int s = run0, e = f - 1;
            run0 = -1;
            if (e - s + 1 < min_frames) continue;
            if (count > 0 && s - last_end - 1 <= gap) {
                if (count <= cap) iv[2 * (count - 1) + 1] = e;
            } else {
                if (count < cap) iv[2 * count] = s, iv[2 * count + 1] = e;
                count++;
            }
            last_end = e;
        }
    }
    return count;
}

int mn_take_planted(const mn_model* m, const double* q, int nframes, double fps,
                    const mn_take_feet* feet, int side, double height_frac, double speed_frac,
                    int min_frames, int gap, int* iv, int cap) {
    if (!m || !q || nframes < 1 || !feet || side < 0 || side > 1 || !(fps > 0)) return 0;
    mn_vec3* p = malloc(sizeof(mn_vec3) * (size_t)nframes);
    mn_data* d = mn_data_create(m, 0);
    int n = 0;
    if (p && d) {
        joint_path(m, d, q, nframes, feet->joint[side], p);
        n = planted_runs(p, nframes, fps, feet->up, height_frac * feet->leg, speed_frac * feet->leg,
                         min_frames, gap, iv, cap);
    }
    free(p);
    mn_data_destroy(d);
    return n;
}

/* ---- root motion --------------------------------------------------------------------- */

/* Ground axes e1, e2 with (e1, e2, up) right-handed: e1 x e2 = up. */
static void ground_axes(mn_vec3 up, mn_vec3* e1, mn_vec3* e2) {
    mn_vec3 a = fabs(up.z) < 0.9 ? mn_v3(0, 0, 1) : mn_v3(1, 0, 0);
    *e1 = mn_vec3_normalize(mn_vec3_sub(a, mn_vec3_scale(up, mn_vec3_dot(a, up))));
    *e2 = mn_vec3_cross(up, *e1);
}

/* The twist of a unit quaternion about up (its heading), in (-pi, pi]. */
static double heading_of(mn_quat r, mn_vec3 up) {
    if (r.w < 0) r = mn_q4(-r.w, -r.x, -r.y, -r.z);
    return 2 * atan2(r.x * up.x + r.y * up.y + r.z * up.z, r.w);
}

static mn_quat about_up(mn_vec3 up, double a) {
    double s, c;
    mn_sincos(0.5 * a, &s, &c);
    return mn_q4(c, s * up.x, s * up.y, s * up.z);
}

static int root_ok(const mn_model* m) {
    return m->njoint > 0 && m->jnt_type[0] == MN_JOINT_FREE && m->jnt_qadr[0] == 0;
}

mn_status mn_take_root_extract(const mn_model* m, const double* q, int nframes, mn_vec3 up,
                               double* track, double* in_place) {
    if (!m || !q || !track || nframes < 0 || !root_ok(m)) return MN_ERR_ARG;
    up = mn_vec3_normalize(up);
    mn_vec3 e1, e2;
    ground_axes(up, &e1, &e2);
    size_t nq = (size_t)m->nq;
    double prev = 0;
    for (int f = 0; f < nframes; f++) {
        const double* qf = q + (size_t)f * nq;
        mn_vec3 p = mn_v3(qf[0], qf[1], qf[2]);
        mn_quat r = mn_q4(qf[3], qf[4], qf[5], qf[6]);
        double psi = heading_of(r, up);
        if (f > 0) psi += 2 * MN_PI * nearbyint((prev - psi) / (2 * MN_PI)); /* unwrapped */
        prev = psi;
        track[3 * f] = mn_vec3_dot(p, e1);
        track[3 * f + 1] = mn_vec3_dot(p, e2);
        track[3 * f + 2] = psi;
        if (!in_place) continue;
        double* o = in_place + (size_t)f * nq;
        if (o != qf) memcpy(o, qf, sizeof(double) * nq);
        mn_vec3 h = mn_vec3_scale(up, mn_vec3_dot(p, up));
        mn_quat ri = mn_quat_normalize(mn_quat_mul(about_up(up, -psi), r));
        o[0] = h.x, o[1] = h.y, o[2] = h.z;
        o[3] = ri.w, o[4] = ri.x, o[5] = ri.y, o[6] = ri.z;
    }
    return MN_OK;
}

mn_status mn_take_root_apply(const mn_model* m, const double* in_place, int nframes, mn_vec3 up,
                             const double* track, double* q) {
    if (!m || !in_place || !track || !q || nframes < 0 || !root_ok(m)) return MN_ERR_ARG;
    up = mn_vec3_normalize(up);
    mn_vec3 e1, e2;
    ground_axes(up, &e1, &e2);
    size_t nq = (size_t)m->nq;
    for (int f = 0; f < nframes; f++) {
        const double* i = in_place + (size_t)f * nq;
        double* o = q + (size_t)f * nq;
        if (o != i) memcpy(o, i, sizeof(double) * nq);
        mn_quat tw = about_up(up, track[3 * f + 2]);
        mn_vec3 pi = mn_v3(i[0], i[1], i[2]);
        double h = mn_vec3_dot(pi, up);
        /* the in-place ground offset (zero after extraction) turned with the heading */
        mn_vec3 g = mn_quat_rotate(tw, mn_vec3_sub(pi, mn_vec3_scale(up, h)));
        mn_vec3 p = mn_vec3_add(
            mn_vec3_add(mn_vec3_scale(e1, track[3 * f]), mn_vec3_scale(e2, track[3 * f + 1])),
            mn_vec3_add(g, mn_vec3_scale(up, h)));
        mn_quat r = mn_quat_normalize(mn_quat_mul(tw, mn_q4(i[3], i[4], i[5], i[6])));
        o[0] = p.x, o[1] = p.y, o[2] = p.z;
        o[3] = r.w, o[4] = r.x, o[5] = r.y, o[6] = r.z;
    }
    return MN_OK;
}

/* (c1, c2) turned by a about up: e1 -> cos a e1 + sin a e2. */
static void turn2(double* c, double a) {
    double s, co;
    mn_sincos(a, &s, &co);
    double x = c[0], y = c[1];
    c[0] = co * x - s * y;
    c[1] = s * x + co * y;
}

void mn_take_root_turn(double* track, int nframes, double fps, double turn) {
    if (!track || nframes < 2 || !(fps > 0) || !isfinite(turn)) return;
    double px = track[0], py = track[1]; /* the original previous position */
    for (int f = 1; f < nframes; f++) {
        double step[2] = {track[3 * f] - px, track[3 * f + 1] - py};
        px = track[3 * f], py = track[3 * f + 1];
        turn2(step, turn * (f - 0.5) / fps); /* the heading added at the step's middle */
        track[3 * f] = track[3 * (f - 1)] + step[0];
        track[3 * f + 1] = track[3 * (f - 1) + 1] + step[1];
        track[3 * f + 2] += turn * f / fps;
    }
}

/* ---- crossfade ----------------------------------------------------------------------- */

mn_crossfade_options mn_crossfade_default(void) {
    mn_crossfade_options o;
    memset(&o, 0, sizeof o);
    o.at = -1;
    o.b_max = -1;
    o.align_phase = 1;
    o.lock_feet = 1;
    o.lock_height = 0.2;
    o.lock_speed = 0.35;
    return o;
}

/* Per frame, both feet relative to the root's ground position and heading, and the root's
 * ground velocity in its heading frame times FEAT_T seconds (a walk does not match a stand):
 * FEAT numbers, lengths. */
enum { FEAT = 8 };
#define FEAT_T 0.3
static void feet_features(const mn_model* m, mn_data* d, const double* q, int n, double fps,
                          const mn_take_feet* ft, double* out) {
    mn_vec3 e1, e2;
    ground_axes(ft->up, &e1, &e2);
    for (int f = 0; f < n; f++) {
        const double* qf = q + (size_t)f * (size_t)m->nq;
        memcpy(d->q, qf, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        double psi = heading_of(mn_q4(qf[3], qf[4], qf[5], qf[6]), ft->up);
        mn_quat un = about_up(ft->up, -psi);
        double* o = out + FEAT * (size_t)f;
        for (int s = 0; s < 2; s++) {
            mn_vec3 rel = mn_vec3_sub(d->xf[ft->joint[s]].p, d->xf[0].p);
            double h = mn_vec3_dot(d->xf[ft->joint[s]].p, ft->up);
            rel = mn_quat_rotate(un, rel);
            o[3 * s] = mn_vec3_dot(rel, e1);
            o[3 * s + 1] = mn_vec3_dot(rel, e2);
            o[3 * s + 2] = h;
        }
        int a = f > 0 ? f - 1 : f, b = f + 1 < n ? f + 1 : f;
        const double *qa = q + (size_t)a * (size_t)m->nq, *qb = q + (size_t)b * (size_t)m->nq;
        mn_vec3 v = mn_vec3_scale(mn_v3(qb[0] - qa[0], qb[1] - qa[1], qb[2] - qa[2]),
                                  b > a ? FEAT_T * fps / (b - a) : 0);
        v = mn_quat_rotate(un, v);
        o[6] = mn_vec3_dot(v, e1);
        o[7] = mn_vec3_dot(v, e2);
    }
}

/* Pins on the feet over their planted intervals, re-satisfied at every frame by the sequence
 * solver (Welman 6.3): the in-betweens keep the locks. q (n x nq) is replaced. */
static mn_status lock_feet(const mn_model* m, double* q, int n, double fps, const mn_take_feet* ft,
                           double hfrac, double vfrac, int* nlocks, double* max_violation,
                           mn_error* err) {
    *nlocks = 0;
    *max_violation = 0;
    int cap = n / 2 + 2 < 2048 ? n / 2 + 2 : 2048; /* a sequence holds 4096 constraints */
    int* iv = malloc(sizeof(int) * 4 * (size_t)cap);
    double* frames = malloc(sizeof(double) * (size_t)n);
    mn_seq_def def = mn_seq_def_default();
    def.fps = fps;
    def.max_handles = 2;
    def.max_constraints = 2 * cap;
    mn_seq* s = iv && frames ? mn_seq_create(m, &def, err) : NULL;
    mn_data* d = mn_data_create(m, 0);
    mn_seq_solver* v = NULL;
    mn_status st = s && d ? MN_OK : MN_ERR_NOMEM;
    if (st != MN_OK) mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "crossfade", "out of memory");
    for (int f = 0; f < n && st == MN_OK; f++)
        frames[f] = f;
    if (st == MN_OK) st = mn_seq_add_keys(s, n, frames, q, NULL, NULL, err);
    for (int side = 0; side < 2 && st == MN_OK; side++) {
        mn_handle_def h = mn_handle_default();
        h.joint = ft->joint[side];
        int hi = mn_seq_add_handle(s, &h, err);
        int k = mn_take_planted(m, q, n, fps, ft, side, hfrac, vfrac, 3, 2, iv, cap);
        for (int i = 0; i < k && i < cap && hi >= 0; i++) {
            mn_seq_constraint_def c = mn_seq_constraint_default();
            c.con.handle = hi;
            c.start = iv[2 * i];
            c.end = iv[2 * i + 1];
            c.lock = 1;
            if (mn_seq_add_constraint(s, &c, err) < 0) st = MN_ERR_ARG;
            (*nlocks)++;
        }
        if (hi < 0) st = MN_ERR_ARG;
    }
    if (st == MN_OK && !(v = mn_seq_solver_create(s, d, err)))
        st = err ? err->status : MN_ERR_NOMEM;
    mn_seq_solve_options o = mn_seq_solve_options_default();
    o.solve.tol = o.solve.tol_rot = 1e-6 * ft->leg;
    for (int f = 0; f < n && st == MN_OK; f++) {
        mn_csolve_result r;
        mn_seq_solve_frame(v, f, &o, &r);
        if (r.max_violation > *max_violation) *max_violation = r.max_violation;
        memcpy(q + (size_t)f * (size_t)m->nq, d->q, sizeof(double) * (size_t)m->nq);
    }
    mn_seq_solver_destroy(v);
    mn_seq_destroy(s);
    mn_data_destroy(d);
    free(iv);
    free(frames);
    return st;
}

/* B moved and turned about up so that its root at frame b is where A's is at frame a. */
static void align_root(const mn_model* m, const double* qa, int a, double* qb, int nb, int b,
                       mn_vec3 up, double* track) {
    double ta[3] = {0, 0, 0};
    mn_take_root_extract(m, qa + (size_t)a * (size_t)m->nq, 1, up, ta, NULL);
    mn_take_root_extract(m, qb, nb, up, track, qb);
    double dpsi = ta[2] - track[3 * b + 2];
    double o[2] = {track[3 * b], track[3 * b + 1]};
    for (int f = 0; f < nb; f++) {
        double c[2] = {track[3 * f] - o[0], track[3 * f + 1] - o[1]};
        turn2(c, dpsi);
        track[3 * f] = ta[0] + c[0];
        track[3 * f + 1] = ta[1] + c[1];
        track[3 * f + 2] += dpsi;
    }
    mn_take_root_apply(m, qb, nb, up, track, qb);
}

mn_status mn_crossfade(const mn_model* m, const double* qa, int na, const double* qb, int nb,
                       double fps, const mn_take_feet* feet, const mn_crossfade_options* opt,
                       mn_crossfade_result* r, mn_error* err) {
    if (r) memset(r, 0, sizeof *r);
    if (!m || !qa || !qb || !feet || !r || !(fps > 0))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "crossfade", "NULL argument");
    if (!root_ok(m))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figure", "the root is not a free joint");
    mn_crossfade_options o = opt ? *opt : mn_crossfade_default();
    int L = o.length > 0 ? o.length : (int)lround(0.5 * fps);
    int a = o.at >= 0 ? (int)lround(o.at) : na / 2;
    if (L < 2 || a + L > na || L > nb)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, o.at >= 0 ? "at" : "length",
                            "a blend of %d frames from frame %d needs that many frames in both "
                            "takes (A has %d, B %d)",
                            L, a, na, nb);
    if (!o.align_phase && (o.b_frame < 0 || o.b_frame + L > nb))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "b_frame",
                            "B's frame %d leaves fewer than %d frames", o.b_frame, L);
    size_t nq = (size_t)m->nq;
    double* fa = malloc(sizeof(double) * FEAT * (size_t)na);
    double* fb = malloc(sizeof(double) * FEAT * (size_t)nb);
    double* qb2 = malloc(sizeof(double) * nq * (size_t)nb);
    double* track = malloc(sizeof(double) * 3 * (size_t)nb);
    mn_data* d = mn_data_create(m, 0);
    mn_status st = fa && fb && qb2 && track && d ? MN_OK : MN_ERR_NOMEM;
    int b = o.b_frame;
    double best = HUGE_VAL;
    if (st == MN_OK) {
        /* the phase: B's frame whose feet (relative to the root, in its heading frame) and
         * root velocity follow A's most closely over the blend */
        feet_features(m, d, qa, na, fps, feet, fa);
        feet_features(m, d, qb, nb, fps, feet, fb);
        int j0 = o.align_phase ? (o.b_min > 0 ? o.b_min : 0) : b;
        int j1 = o.align_phase ? (o.b_max >= 0 && o.b_max < nb ? o.b_max : nb - 1) : b;
        for (int j = j0; j <= j1 && j + L <= nb; j++) {
            double c = 0;
            for (int i = 0; i < L * FEAT && c < best; i++) {
                double e = fa[FEAT * a + i] - fb[FEAT * j + i];
                c += e * e;
            }
            if (c < best) best = c, b = j;
        }
    }
    if (st == MN_OK && best == HUGE_VAL) {
        free(fa), free(fb), free(qb2), free(track);
        mn_data_destroy(d);
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "b_min",
                            "no frame of B in [%d, %d] leaves %d frames to blend", o.b_min, o.b_max,
                            L);
    }
    int n = a + (nb - b);
    double* out = st == MN_OK ? malloc(sizeof(double) * nq * (size_t)n) : NULL;
    if (st == MN_OK && !out) st = MN_ERR_NOMEM;
    if (st == MN_OK) {
        memcpy(qb2, qb, sizeof(double) * nq * (size_t)nb);
        align_root(m, qa, a, qb2, nb, b, feet->up, track);
        memcpy(out, qa, sizeof(double) * nq * (size_t)a);
        for (int f = a; f < n; f++) {
            double* of = out + (size_t)f * nq;
            memcpy(of, qb2 + (size_t)(b + f - a) * nq, sizeof(double) * nq);
            if (f >= a + L) continue;
            /* an override layer eased in over the blend (layers.h) */
            double u = (double)(f - a + 1) / (L + 1);
            memcpy(of, qa + (size_t)f * nq, sizeof(double) * nq);
            mn_pose_blend(m, of, qb2 + (size_t)(b + f - a) * nq, u * u * (3 - 2 * u), NULL,
                          MN_LAYER_OVERRIDE);
        }
        if (o.lock_feet)
            st = lock_feet(m, out, n, fps, feet, o.lock_height, o.lock_speed, &r->locks,
                           &r->max_violation, err);
    }
    free(fa), free(fb), free(qb2), free(track);
    mn_data_destroy(d);
    if (st != MN_OK) {
        free(out);
        if (!o.lock_feet || !out) mn_error_set(err, st, NULL, 0, "crossfade", "out of memory");
        return st;
    }
    r->a_frame = a, r->b_frame = b, r->length = L, r->nframes = n, r->q = out;
    r->phase_cost = best / (double)L;
    return MN_OK;
}

/* ---- loops --------------------------------------------------------------------------- */

/* T: the rigid motion of the ground (and heading) taking the cycle's start (p_s, psi_s) to its
 * end: (p, psi) -> (p_s + R(psi_s) step + R(step_psi) (p - p_s), psi + step_psi). */
static void loop_map(const double* start, const double* step, const double* in, double* out) {
    double d[2] = {in[0] - start[0], in[1] - start[1]}, st[2] = {step[0], step[1]};
    turn2(d, step[2]);
    turn2(st, start[2]);
    out[0] = start[0] + st[0] + d[0];
    out[1] = start[1] + st[1] + d[1];
    out[2] = in[2] + step[2];
}

/* Every joint's position in the in-place take (root at the ground's origin, heading 0), and
 * its velocity times 0.1 s: per frame 2 x 3 x njoint numbers. */
static void pose_features(const mn_model* m, mn_data* d, const double* ip, int n, double fps,
                          double* F) {
    size_t w = 6 * (size_t)m->njoint;
    for (int f = 0; f < n; f++) {
        memcpy(d->q, ip + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        double* o = F + (size_t)f * w;
        for (int j = 0; j < m->njoint; j++)
            o[3 * j] = d->xf[j].p.x, o[3 * j + 1] = d->xf[j].p.y, o[3 * j + 2] = d->xf[j].p.z;
    }
    size_t h = 3 * (size_t)m->njoint;
    for (int f = 0; f < n; f++) {
        int a = f > 0 ? f - 1 : f, b = f + 1 < n ? f + 1 : f;
        double k = b > a ? 0.1 * fps / (b - a) : 0;
        for (size_t i = 0; i < h; i++)
            F[(size_t)f * w + h + i] = k * (F[(size_t)b * w + i] - F[(size_t)a * w + i]);
    }
}

mn_status mn_take_loop(const mn_model* m, const double* q, int nframes, double fps, mn_vec3 up,
                       int min_len, int blend, mn_loop_result* r, mn_error* err) {
    if (r) memset(r, 0, sizeof *r);
    if (!m || !q || !r || !(fps > 0))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "loop", "NULL argument");
    if (!root_ok(m))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figure", "the root is not a free joint");
    int L = min_len > 0 ? min_len : (int)lround(fps);
    int K0 = blend > 0 ? blend : L / 4 > 1 ? L / 4 : 1;
    if (L < 2 || K0 + L + 1 >= nframes)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "min_length",
                            "a cycle of at least %d frames blended over %d needs more than %d "
                            "frames (the take has %d)",
                            L, K0, K0 + L + 1, nframes);
    size_t nq = (size_t)m->nq, n = (size_t)nframes, w = 6 * (size_t)m->njoint;
    double* ip = malloc(sizeof(double) * nq * n);
    double* track = malloc(sizeof(double) * 3 * n);
    double* F = malloc(sizeof(double) * w * n);
    double* path = malloc(sizeof(double) * n);
    mn_data* d = mn_data_create(m, 0);
    if (!ip || !track || !F || !path || !d) {
        free(ip), free(track), free(F), free(path);
        mn_data_destroy(d);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "loop", "out of memory");
    }
    mn_take_root_extract(m, q, nframes, up, track, ip);
    pose_features(m, d, ip, nframes, fps, F);
    path[0] = 0; /* ground path length so far */
    for (size_t f = 1; f < n; f++)
        path[f] = path[f - 1] +
                  hypot(track[3 * f] - track[3 * f - 3], track[3 * f + 1] - track[3 * f - 2]);
    /* the best cycle [s, e): ends matched in pose and velocity, among cycles that travel at
     * least half as far as the take's farthest-travelling window of their length (a walk's
     * loop, not its standing start) */
    double best = HUGE_VAL;
    int bs = -1, be = -1, Lmax = 3 * L;
    for (int len = L; len <= Lmax && K0 + len < nframes; len++) {
        double far = 0;
        for (int s = K0; s + len < nframes; s++)
            far = fmax(far, path[s + len] - path[s]);
        for (int s = K0; s + len < nframes; s++) {
            if (path[s + len] - path[s] < 0.5 * far) continue;
            const double *a = F + (size_t)s * w, *b = F + (size_t)(s + len) * w;
            double c = 0;
            for (size_t i = 0; i < w && c < best; i++)
                c += (a[i] - b[i]) * (a[i] - b[i]);
            if (c < best) best = c, bs = s, be = s + len;
        }
    }
    int N = be - bs, K = blend > 0 ? (blend < N ? blend : N - 1) : N / 4;
    if (K > bs) K = bs;
    double* out = malloc(sizeof(double) * nq * (size_t)N);
    double* tr = malloc(sizeof(double) * 3 * (size_t)N);
    mn_status st = out && tr ? MN_OK : MN_ERR_NOMEM;
    if (st == MN_OK) {
        double* ts = track + 3 * bs;
        double* te = track + 3 * be;
        double dp[2] = {te[0] - ts[0], te[1] - ts[1]};
        turn2(dp, -ts[2]);
        r->step[0] = dp[0], r->step[1] = dp[1], r->step[2] = te[2] - ts[2];
        memcpy(out, ip + (size_t)bs * nq, sizeof(double) * nq * (size_t)N);
        memcpy(tr, ts, sizeof(double) * 3 * (size_t)N);
        for (int i = N - K; i < N; i++) {
            /* eased into the frames before the start, which lead into it */
            double u = (double)(i - (N - K) + 1) / K, wgt = u * u * (3 - 2 * u);
            mn_pose_blend(m, out + (size_t)i * nq, ip + (size_t)(bs + i - N) * nq, wgt, NULL,
                          MN_LAYER_OVERRIDE);
            double mapped[3];
            loop_map(ts, r->step, track + 3 * (bs + i - N), mapped);
            for (int k = 0; k < 3; k++)
                tr[3 * i + k] += wgt * (mapped[k] - tr[3 * i + k]);
        }
        mn_take_root_apply(m, out, N, up, tr, out);
        r->start = bs, r->end = be, r->blend = K, r->q = out;
        r->match = best / (2.0 * m->njoint);
    } else {
        free(out);
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "loop", "out of memory");
    }
    free(ip), free(track), free(F), free(path), free(tr);
    mn_data_destroy(d);
    return st;
}

mn_status mn_take_loop_repeat(const mn_model* m, const mn_loop_result* r, mn_vec3 up, int cycles,
                              double** out, int* nframes) {
    if (!m || !r || !r->q || !out || !nframes || cycles < 1 || !root_ok(m)) return MN_ERR_ARG;
    int N = r->end - r->start;
    size_t nq = (size_t)m->nq;
    double* q = malloc(sizeof(double) * nq * (size_t)N * (size_t)cycles);
    double* ip = malloc(sizeof(double) * nq * (size_t)N);
    double* tr = malloc(sizeof(double) * 3 * (size_t)N);
    if (!q || !ip || !tr) {
        free(q), free(ip), free(tr);
        return MN_ERR_NOMEM;
    }
    mn_take_root_extract(m, r->q, N, up, tr, ip);
    double start[3] = {tr[0], tr[1], tr[2]};
    for (int c = 0; c < cycles; c++) {
        if (c > 0) /* each cycle where the last one's end takes it */
            for (int i = 0; i < N; i++) {
                double t[3];
                loop_map(start, r->step, tr + 3 * i, t);
                memcpy(tr + 3 * i, t, sizeof t);
            }
        if (c > 0) {
            double s0[3];
            loop_map(start, r->step, start, s0);
            memcpy(start, s0, sizeof s0);
        }
        mn_take_root_apply(m, ip, N, up, tr, q + (size_t)c * (size_t)N * nq);
    }
    free(ip), free(tr);
    *out = q;
    *nframes = N * cycles;
    return MN_OK;
}

/* ---- the crossfade's window in B ------------------------------------------------------ */

static int cmp_double(const void* a, const void* b);

/* Per frame of B, how unlike take A it is: the smallest mean squared distance (length^2 per
 * joint) of its pose features (pose_features: every joint relative to the root's ground
 * position and heading, and its velocity times 0.1 s) from those of A's frames (every
 * STRIDE-th: at a motion capture rate neighbouring frames differ by far less than a hop from a
 * step). Into nov (nb numbers). */
enum { NOVELTY_STRIDE = 4 };
static mn_status novelty(const mn_model* m, const double* qa, int na, const double* qb, int nb,
                         double fps, mn_vec3 up, double* nov) {
    size_t nq = (size_t)m->nq, w = 6 * (size_t)m->njoint, nmax = (size_t)(na > nb ? na : nb);
    double* ip = malloc(sizeof(double) * nq * nmax);
    double* tr = malloc(sizeof(double) * 3 * nmax);
    double* FA = malloc(sizeof(double) * w * (size_t)na);
    double* FB = malloc(sizeof(double) * w * (size_t)nb);
    mn_data* d = mn_data_create(m, 0);
    mn_status st = ip && tr && FA && FB && d ? MN_OK : MN_ERR_NOMEM;
    if (st == MN_OK) {
        mn_take_root_extract(m, qa, na, up, tr, ip);
        pose_features(m, d, ip, na, fps, FA);
        mn_take_root_extract(m, qb, nb, up, tr, ip);
        pose_features(m, d, ip, nb, fps, FB);
        for (int j = 0; j < nb; j++) {
            const double* fb = FB + (size_t)j * w;
            double best = HUGE_VAL;
            for (int i = 0; i < na; i += NOVELTY_STRIDE) {
                const double* fa = FA + (size_t)i * w;
                double c = 0;
                for (size_t k = 0; k < w && c < best; k++)
                    c += (fa[k] - fb[k]) * (fa[k] - fb[k]);
                if (c < best) best = c;
            }
            nov[j] = best / m->njoint;
        }
    }
    free(ip), free(tr), free(FA), free(FB);
    mn_data_destroy(d);
    return st;
}

/* B's motion of interest is what take A does not show: B's frames are scored by how unlike
 * any frame of A they are (novelty), smoothed over a tenth of a second; the peak of the score,
 * when it stands out (above twice the median, and above (0.1 leg)^2: a hop after a walk,
 * not a walk after a walk),
 * and the frames around it above half-way between the median and the peak are the motion of
 * interest. The search for the phase is then restricted to B's frames whose blend ends before
 * it starts (b_max = start - length), so the rest of B that follows the blend holds it; a
 * motion of interest within the first `length` frames leaves B's first frame only. Without one
 * the search is B's first half, so that most of B follows. (Unreal's and MotionBuilder's
 * blends match poses over a window the user allows; this picks the window.) */
mn_status mn_crossfade_window(const mn_model* m, const double* qa, int na, const double* qb, int nb,
                              double fps, const mn_take_feet* feet, int length,
                              mn_crossfade_window_result* r, mn_error* err) {
    if (r) memset(r, 0, sizeof *r);
    if (!m || !qa || !qb || !feet || !r || !(fps > 0) || na < 1 || nb < 1)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "crossfade", "NULL argument");
    if (!root_ok(m))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figure", "the root is not a free joint");
    int L = length > 0 ? length : (int)lround(0.5 * fps);
    double* nov = malloc(sizeof(double) * 3 * (size_t)nb);
    mn_status st = nov ? novelty(m, qa, na, qb, nb, fps, feet->up, nov) : MN_ERR_NOMEM;
    if (st != MN_OK) {
        free(nov);
        return mn_error_set(err, st, NULL, 0, "crossfade", "out of memory");
    }
    /* smoothed over 0.1 s (centred), and its median */
    double *sm = nov + nb, *sorted = sm + nb;
    int hw = (int)lround(0.05 * fps);
    for (int j = 0; j < nb; j++) {
        int a = j - hw > 0 ? j - hw : 0, b = j + hw < nb - 1 ? j + hw : nb - 1;
        double sum = 0;
        for (int k = a; k <= b; k++)
            sum += nov[k];
        sm[j] = sum / (b - a + 1);
    }
    memcpy(sorted, sm, sizeof(double) * (size_t)nb);
    qsort(sorted, (size_t)nb, sizeof(double), cmp_double);
    double median = sorted[nb / 2];
    int peak = 0;
    for (int j = 1; j < nb; j++)
        if (sm[j] > sm[peak]) peak = j;
    r->interest_start = r->interest_end = -1;
    r->novelty_median = median;
    r->novelty_peak = sm[peak];
    if (sm[peak] > 2 * median && sm[peak] > 0.01 * feet->leg * feet->leg) {
        double level = 0.5 * (median + sm[peak]);
        int s0 = peak, s1 = peak;
        while (s0 > 0 && sm[s0 - 1] > level)
            s0--;
        while (s1 < nb - 1 && sm[s1 + 1] > level)
            s1++;
        r->interest_start = s0, r->interest_end = s1;
        r->b_max = s0 - L > 0 ? s0 - L : 0;
    } else {
        r->b_max = nb / 2;
    }
    if (r->b_max + L > nb) r->b_max = nb - L > 0 ? nb - L : 0;
    r->b_min = 0;
    free(nov);
    return MN_OK;
}

/* ---- retiming ------------------------------------------------------------------------ */

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* Flight phases: frames where every joint of both feet (the ankles' subtrees) is above the
 * foot's ground by 5 % of the leg, in runs of at least three frames. A foot's ground is the
 * 5th percentile of its lowest point over the take, not the minimum: a frame or two of a foot
 * through the floor (a glitch of the capture) does not lift the rest of the take into the
 * air. */
static int flights(const mn_model* m, mn_data* d, const double* q, int n, const mn_take_feet* ft,
                   int* iv, int cap) {
    double* low = malloc(sizeof(double) * 3 * (size_t)n);
    if (!low) return 0;
    double lmin[2];
    for (int f = 0; f < n; f++) {
        memcpy(d->q, q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        for (int s = 0; s < 2; s++) {
            double h = HUGE_VAL;
            for (int j = ft->joint[s]; j < m->jnt_subtree_end[ft->joint[s]]; j++)
                h = fmin(h, mn_vec3_dot(d->xf[j].p, ft->up));
            low[2 * f + s] = h;
        }
    }
    double* sorted = low + 2 * (size_t)n;
    for (int s = 0; s < 2; s++) {
        for (int f = 0; f < n; f++)
            sorted[f] = low[2 * f + s];
        qsort(sorted, (size_t)n, sizeof(double), cmp_double);
        lmin[s] = sorted[n / 20];
    }
    int count = 0, run = -1;
    for (int f = 0; f <= n; f++) {
        int air = f < n && low[2 * f] > lmin[0] + 0.05 * ft->leg &&
                  low[2 * f + 1] > lmin[1] + 0.05 * ft->leg;
        if (air && run < 0) run = f;
        if (!air && run >= 0) {
            if (f - run >= 3 && count < cap)
                iv[2 * count] = run, iv[2 * count + 1] = f - 1, count++;
            run = -1;
        }
    }
    free(low);
    return count;
}

/* The output frame where the warp reaches the take's frame src (bisection on the monotone
 * warp over [t0, t1]). */
static double warp_inverse(const mn_seq* s, double src, double t0, double t1) {
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (t0 + t1);
        if (mn_seq_warp(s, mid) < src)
            t0 = mid;
        else
            t1 = mid;
    }
    return 0.5 * (t0 + t1);
}

/* The least-squares gravity of the root's height over the flights: per flight a parabola
 * c0 + c1 t - g/2 t^2 with its own c0, c1 and one g for all (normal equations, eliminated per
 * flight). */
static double fit_gravity(const double* q, size_t nq, const int* iv, int nf, double fps,
                          mn_vec3 up) {
    double num = 0, den = 0;
    for (int k = 0; k < nf; k++) {
        int a = iv[2 * k], b = iv[2 * k + 1], n = b - a + 1;
        /* regress z on (1, t, t^2): the t^2 coefficient after projecting out 1 and t */
        double st = 0, st2 = 0, sz = 0;
        for (int f = a; f <= b; f++) {
            double t = (f - a) / fps;
            st += t, st2 += t * t;
        }
        double mt = st / n;
        double var = st2 / n - mt * mt;
        double szt = 0, stt2 = 0, st3 = 0, st4 = 0, sz2 = 0;
        for (int f = a; f <= b; f++) {
            const double* qf = q + (size_t)f * nq;
            double t = (f - a) / fps, z = qf[0] * up.x + qf[1] * up.y + qf[2] * up.z;
            sz += z, szt += z * t, sz2 += z * t * t, st3 += t * t * t, st4 += t * t * t * t;
        }
        (void)stt2;
        double mz = sz / n, mt2 = st2 / n;
        /* residual of t^2 and of z after regressing on (1, t) */
        double c_t2t = st3 / n - mt2 * mt, c_zt = szt / n - mz * mt;
        double v_t2 = st4 / n - mt2 * mt2 - c_t2t * c_t2t / var;
        double c_zt2 = sz2 / n - mz * mt2 - c_zt * c_t2t / var;
        num += n * c_zt2, den += n * v_t2;
    }
    return den > 0 ? -2 * num / den : 0;
}

mn_status mn_take_retime(const mn_model* m, const double* q, int nframes, double fps,
                         const mn_take_feet* feet, int nwarp, const double* t, const double* s,
                         const double* speed, int ballistic, mn_retime_result* r, mn_error* err) {
    if (r) memset(r, 0, sizeof *r);
    if (!m || !q || !r || !(fps > 0) || nframes < 2 || (ballistic && !feet))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "retime", "NULL argument");
    if (!root_ok(m))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figure", "the root is not a free joint");
    mn_seq_def def = mn_seq_def_default();
    def.fps = fps;
    def.max_handles = def.max_constraints = 0;
    mn_seq* sq = mn_seq_create(m, &def, err);
    double* frames = malloc(sizeof(double) * (size_t)nframes);
    if (!sq || !frames) {
        mn_seq_destroy(sq);
        free(frames);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "retime", "out of memory");
    }
    for (int f = 0; f < nframes; f++)
        frames[f] = f;
    mn_status st = mn_seq_add_keys(sq, nframes, frames, q, NULL, NULL, err);
    if (st == MN_OK) st = mn_seq_set_warp(sq, nwarp, t, s, speed, err);
    free(frames);
    double t0 = mn_seq_out_start(sq), t1 = mn_seq_out_end(sq);
    double span = floor(t1 - t0 + 1e-9);
    if (st == MN_OK && !(span >= 1 && span < 1e7))
        st = mn_error_set(err, MN_ERR_ARG, NULL, 0, "time_warp",
                          "the warp's output frames %g to %g are not 2 to 10 million frames", t0,
                          t1);
    size_t nq = (size_t)m->nq;
    int n = st == MN_OK ? (int)span + 1 : 0;
    double* out = st == MN_OK ? malloc(sizeof(double) * nq * (size_t)n) : NULL;
    mn_data* d = mn_data_create(m, 0);
    int cap = nframes / 3 + 1;
    int* iv = malloc(sizeof(int) * 2 * (size_t)cap);
    double* pa = malloc(sizeof(double) * 2 * nq); /* take-off and landing states */
    double* pb = pa ? pa + nq : NULL;
    if (st == MN_OK && (!out || !d || !iv || !pa))
        st = mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "retime", "out of memory");
    for (int f = 0; f < n && st == MN_OK; f++)
        mn_seq_sample(sq, mn_seq_warp(sq, t0 + f), out + (size_t)f * nq);
    if (st == MN_OK && ballistic) {
        int nf = flights(m, d, q, nframes, feet, iv, cap);
        double g = nf ? fit_gravity(q, nq, iv, nf, fps, feet->up) : 0;
        r->gravity = g;
        double s0 = mn_seq_warp(sq, t0), s1 = mn_seq_warp(sq, t1);
        for (int k = 0; k < nf; k++) {
            /* the flight from the take-off frame before it to the landing frame after it,
             * when the warp shows all of it */
            double a = iv[2 * k] - 1 >= 0 ? iv[2 * k] - 1 : 0;
            double b = iv[2 * k + 1] + 1 < nframes ? iv[2 * k + 1] + 1 : nframes - 1;
            if (a < s0 || b > s1) continue;
            double ta = warp_inverse(sq, a, t0, t1) - t0, tb = warp_inverse(sq, b, t0, t1) - t0;
            mn_seq_sample(sq, a, pa);
            mn_seq_sample(sq, b, pb);
            double T = (tb - ta) / fps;
            double za = mn_vec3_dot(mn_v3(pa[0], pa[1], pa[2]), feet->up);
            double zb = mn_vec3_dot(mn_v3(pb[0], pb[1], pb[2]), feet->up);
            double v0 = T > 0 ? (zb - za) / T + 0.5 * g * T : 0;
            if (r->flights++ == 0) {
                double Ts = (b - a) / fps, v0s = Ts > 0 ? (zb - za) / Ts + 0.5 * g * Ts : 0;
                r->apex[0] = g > 0 ? v0s * v0s / (2 * g) : 0;
                r->apex[1] = g > 0 ? v0 * v0 / (2 * g) : 0;
            }
            for (int f = (int)ceil(ta); f <= (int)floor(tb) && f < n; f++) {
                double u = T > 0 ? (f - ta) / (tb - ta) : 0, tau = (f - ta) / fps;
                double* o = out + (size_t)f * nq;
                mn_vec3 p =
                    mn_vec3_add(mn_v3(pa[0], pa[1], pa[2]),
                                mn_vec3_scale(mn_v3(pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]),
                                              u)); /* constant ground velocity */
                double z = za + v0 * tau - 0.5 * g * tau * tau;
                p = mn_vec3_add(p, mn_vec3_scale(feet->up, z - mn_vec3_dot(p, feet->up)));
                o[0] = p.x, o[1] = p.y, o[2] = p.z;
            }
        }
    }
    mn_seq_destroy(sq);
    mn_data_destroy(d);
    free(iv);
    free(pa);
    if (st != MN_OK) {
        free(out);
        return st;
    }
    r->nframes = n;
    r->q = out;
    return MN_OK;
}
