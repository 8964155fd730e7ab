/* Operations on takes (takes.h). A crossfade of two CMU takes of one subject (131_01
 * start-walk-stop into 131_03 start-hop-stop) with the feet's phases aligned: no foot slides more
 * than 5 mm in any interval an independent check calls planted (the ankle within 15 % of the leg
 * length of its lowest height and slower than 25 % of the leg length per second for at least three
 * frames), measured on the ankles' forward kinematics written out here; without the locks the
 * same blend slides more. Root motion out and back (exact), along a turning path, and a
 * seamless loop of the walk whose seams jump no more than its frames do. */
#include <marionette/io.h>
#include <marionette/takes.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

#define CMU_SCALE (0.0254 / 0.45)

static int read_take(const char* path, mn_model** m, mn_motion* mo) {
    mn_bvh_options o = mn_bvh_default();
    o.scale = CMU_SCALE;
    mn_error err;
    if (mn_bvh_read(path, &o, m, mo, NULL, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 0;
    }
    return 1;
}

/* The independent check: the ankle's world position by walking the parent chain of the
 * library's joint frames is what forward kinematics gives; here the positions come from
 * mn_fk and the planted test is written out on them. Returns the largest slide (distance from
 * the interval's first position) over intervals that overlap [lo, hi], and counts them. */
static double worst_slide(const mn_model* m, const double* q, int n, double fps, int joint,
                          double leg, int lo, int hi, int* count, int* worst_at) {
    mn_data* d = mn_data_create(m, 0);
    mn_vec3* p = malloc(sizeof(mn_vec3) * (size_t)n);
    for (int f = 0; f < n; f++) {
        memcpy(d->q, q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        p[f] = d->xf[joint].p;
    }
    double ymin = 1e300;
    for (int f = 0; f < n; f++)
        ymin = p[f].y < ymin ? p[f].y : ymin;
    double worst = 0;
    *count = 0;
    int run = -1;
    for (int f = 0; f <= n; f++) {
        int planted = 0;
        if (f < n) {
            int a = f > 0 ? f - 1 : f, b = f < n - 1 ? f + 1 : f;
            double dx = p[b].x - p[a].x, dy = p[b].y - p[a].y, dz = p[b].z - p[a].z;
            double speed = sqrt(dx * dx + dy * dy + dz * dz) * fps / (b - a);
            planted = p[f].y - ymin < 0.15 * leg && speed < 0.25 * leg;
        }
        if (planted && run < 0) run = f;
        if (!planted && run >= 0) {
            if (f - run >= 3 && f - 1 >= lo && run <= hi) {
                (*count)++;
                for (int g = run; g < f; g++) {
                    double dx = p[g].x - p[run].x, dy = p[g].y - p[run].y, dz = p[g].z - p[run].z;
                    double s = sqrt(dx * dx + dy * dy + dz * dz);
                    if (s > worst) worst = s, *worst_at = g;
                }
            }
            run = -1;
        }
    }
    free(p);
    mn_data_destroy(d);
    return worst;
}

static void test_walk_into_hop(void) {
    mn_model *ma = NULL, *mb = NULL;
    mn_motion a, b;
    if (!read_take(MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh", &ma, &a)) {
        CHECK(0);
        return;
    }
    if (!read_take(MN_DATA "/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh", &mb, &b)) {
        CHECK(0);
        return;
    }
    CHECK(ma->njoint == mb->njoint && ma->nq == mb->nq);
    double fps = 1.0 / a.frame_time;
    mn_take_feet feet;
    mn_error err;
    CHECK(mn_take_feet_find(ma, NULL, &feet, &err) == MN_OK);
    CHECK(!strcmp(ma->jnt_name[feet.joint[0]], "LeftAnkle"));
    CHECK(!strcmp(ma->jnt_name[feet.joint[1]], "RightAnkle"));
    mn_crossfade_options o = mn_crossfade_default();
    o.at = 650;    /* mid-walk */
    o.b_max = 740; /* B's approach to its hop (frames 790-850) */
    mn_crossfade_result r, plain, noalign;
    CHECK(mn_crossfade(ma, a.q, a.nframes, b.q, b.nframes, fps, &feet, &o, &r, &err) == MN_OK);
    o.lock_feet = 0;
    CHECK(mn_crossfade(ma, a.q, a.nframes, b.q, b.nframes, fps, &feet, &o, &plain, &err) == MN_OK);
    /* the phase matters: B started at a frame chosen without it has its feet elsewhere */
    o.align_phase = 0;
    o.b_frame = (r.b_frame + 60) % (b.nframes - 100);
    CHECK(mn_crossfade(ma, a.q, a.nframes, b.q, b.nframes, fps, &feet, &o, &noalign, &err) ==
          MN_OK);
    if (!r.q || !plain.q) return;
    int lo = r.a_frame - r.length, hi = r.a_frame + 2 * r.length;
    double worst = 0, worst_plain = 0, worst_all = 0;
    int n = 0, np = 0, nall = 0, at = -1, atp = -1, ata = -1;
    for (int s = 0; s < 2; s++) {
        int c;
        double w = worst_slide(ma, r.q, r.nframes, fps, feet.joint[s], feet.leg, lo, hi, &c, &at);
        worst = w > worst ? w : worst, n += c;
        w = worst_slide(ma, plain.q, plain.nframes, fps, feet.joint[s], feet.leg, lo, hi, &c, &atp);
        worst_plain = w > worst_plain ? w : worst_plain, np += c;
        w = worst_slide(ma, r.q, r.nframes, fps, feet.joint[s], feet.leg, 0, r.nframes, &c, &ata);
        worst_all = w > worst_all ? w : worst_all, nall += c;
    }
    printf("walk into hop: A frame %d, B frame %d (phase cost %.2e m^2; %.2e unaligned), %d "
           "frames, leg %.3f m, %d locks (max violation %.1e m)\n",
           r.a_frame, r.b_frame, r.phase_cost, noalign.phase_cost, r.nframes, feet.leg, r.locks,
           r.max_violation);
    printf("planted intervals across the blend (frames %d-%d): %d, worst slide %.2f mm (without "
           "locks: %d, %.2f mm); over the whole result: %d, worst %.2f mm\n",
           lo, hi, n, worst * 1e3, np, worst_plain * 1e3, nall, worst_all * 1e3);
    CHECK(n > 0);
    CHECK(worst <= 0.005);
    CHECK(worst_all <= 0.005);
    CHECK(worst_plain > worst); /* the locks do the work */
    CHECK(r.nframes == r.a_frame + b.nframes - r.b_frame);
    /* before the blend, the result is take A untouched where no foot is locked: frame 0 */
    free(r.q), free(plain.q), free(noalign.q);
    mn_motion_free(&a);
    mn_motion_free(&b);
    mn_model_destroy(ma);
    mn_model_destroy(mb);
}

/* Root motion out and back in: exact to rounding; in place the root stays on the spot. */
static void test_root_motion_round_trip(void) {
    mn_model* m = NULL;
    mn_motion a;
    if (!read_take(MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh", &m, &a)) {
        CHECK(0);
        return;
    }
    size_t nq = (size_t)m->nq, n = (size_t)a.nframes;
    double* track = malloc(sizeof(double) * 3 * n);
    double* ip = malloc(sizeof(double) * nq * n);
    double* back = malloc(sizeof(double) * nq * n);
    mn_vec3 up = mn_v3(0, 1, 0);
    CHECK(mn_take_root_extract(m, a.q, a.nframes, up, track, ip) == MN_OK);
    CHECK(mn_take_root_apply(m, ip, a.nframes, up, track, back) == MN_OK);
    double worst = 0, ground = 0, travel = 0;
    for (size_t f = 0; f < n; f++) {
        for (int i = 0; i < 3; i++)
            worst = fmax(worst, fabs(back[f * nq + i] - a.q[f * nq + i]));
        double dq = 0;
        for (int i = 3; i < 7; i++)
            dq += back[f * nq + i] * a.q[f * nq + i];
        worst = fmax(worst, 1 - fabs(dq));
        for (size_t i = 7; i < nq; i++)
            worst = fmax(worst, fabs(back[f * nq + i] - a.q[f * nq + i]));
        ground = fmax(ground, fabs(ip[f * nq]) + fabs(ip[f * nq + 2]));
    }
    travel = hypot(track[3 * (n - 1)] - track[0], track[3 * (n - 1) + 1] - track[1]);
    printf("root motion: walk travels %.2f m, turns %.2f rad; in place within %.1e m of the "
           "spot; round trip within %.1e\n",
           travel, track[3 * (n - 1) + 2] - track[2], ground, worst);
    CHECK(travel > 2);
    CHECK(ground < 1e-12);
    CHECK(worst < 1e-12);
    /* along a path: turning 0.5 rad/s, the heading at the end has turned by 0.5 x duration
     * more and the distance walked (the sum of the ground steps) is the same */
    double* t2 = malloc(sizeof(double) * 3 * n);
    memcpy(t2, track, sizeof(double) * 3 * n);
    mn_take_root_turn(t2, a.nframes, 1.0 / a.frame_time, 0.5);
    double len1 = 0, len2 = 0;
    for (size_t f = 1; f < n; f++) {
        len1 += hypot(track[3 * f] - track[3 * f - 3], track[3 * f + 1] - track[3 * f - 2]);
        len2 += hypot(t2[3 * f] - t2[3 * f - 3], t2[3 * f + 1] - t2[3 * f - 2]);
    }
    CHECK_NEAR(len2, len1, 1e-9 * len1);
    CHECK_NEAR(t2[3 * (n - 1) + 2] - track[3 * (n - 1) + 2], 0.5 * (double)(n - 1) * a.frame_time,
               1e-9);
    free(t2);
    free(track), free(ip), free(back);
    mn_motion_free(&a);
    mn_model_destroy(m);
}

/* The largest joint displacement between frames f and f + 1 of q. */
static double frame_jump(const mn_model* m, mn_data* d0, mn_data* d1, const double* q0,
                         const double* q1) {
    memcpy(d0->q, q0, sizeof(double) * (size_t)m->nq);
    memcpy(d1->q, q1, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d0);
    mn_fk(m, d1);
    double w = 0;
    for (int j = 0; j < m->njoint; j++)
        w = fmax(w, mn_vec3_norm(mn_vec3_sub(d0->xf[j].p, d1->xf[j].p)));
    return w;
}

/* A loop of the walk repeated three times: at each seam no joint jumps further than the
 * largest step of any joint between two frames inside the cycle (the take's own motion), and
 * the root carries on from cycle to cycle. */
static void test_loop(void) {
    mn_model* m = NULL;
    mn_motion a;
    if (!read_take(MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh", &m, &a)) {
        CHECK(0);
        return;
    }
    mn_vec3 up = mn_v3(0, 1, 0);
    mn_loop_result r;
    mn_error err;
    CHECK(mn_take_loop(m, a.q, a.nframes, 1.0 / a.frame_time, up, 0, 0, &r, &err) == MN_OK);
    double* q = NULL;
    int n = 0;
    CHECK(mn_take_loop_repeat(m, &r, up, 3, &q, &n) == MN_OK);
    if (!q) return;
    int N = r.end - r.start;
    CHECK(n == 3 * N);
    size_t nq = (size_t)m->nq;
    mn_data *d0 = mn_data_create(m, 0), *d1 = mn_data_create(m, 0);
    double inside = 0, seam = 0;
    for (int f = 0; f + 1 < n; f++) {
        double j = frame_jump(m, d0, d1, q + (size_t)f * nq, q + (size_t)(f + 1) * nq);
        if ((f + 1) % N == 0)
            seam = fmax(seam, j);
        else
            inside = fmax(inside, j);
    }
    /* the take's own step across the cycle's end (frame end - 1 to end), which the seam
     * replaces by the step to the cycle's first frame */
    double natural =
        frame_jump(m, d0, d1, a.q + (size_t)(r.end - 1) * nq, a.q + (size_t)r.end * nq);
    printf("loop: frames %d-%d (%d, %.2f s), blend %d, step %.3f m, %.2f deg; seam jump %.2f mm "
           "(the take's own step there %.2f mm; frames inside: up to %.2f mm)\n",
           r.start, r.end, N, N * a.frame_time, r.blend, hypot(r.step[0], r.step[1]),
           r.step[2] * 180 / MN_PI, seam * 1e3, natural * 1e3, inside * 1e3);
    CHECK(N >= (int)lround(1.0 / a.frame_time));
    CHECK(seam <= inside);
    CHECK(seam <= 1.25 * natural);
    CHECK(hypot(r.step[0], r.step[1]) > 0.5); /* a walk's cycle travels */
    mn_data_destroy(d0);
    mn_data_destroy(d1);
    free(q);
    free(r.q);
    mn_motion_free(&a);
    mn_model_destroy(m);
}

/* The least-squares parabola z = c0 + c1 t + c2 t^2 through (t_i, z_i) (normal equations
 * solved by Cramer's rule); returns c2 and the largest residual in *res. */
static double parabola(const double* t, const double* z, int n, double* res) {
    double S[5] = {0}, b[3] = {0};
    for (int i = 0; i < n; i++) {
        double p = 1;
        for (int k = 0; k < 5; k++) {
            S[k] += p;
            if (k < 3) b[k] += p * z[i];
            p *= t[i];
        }
    }
    double A[3][3] = {{S[0], S[1], S[2]}, {S[1], S[2], S[3]}, {S[2], S[3], S[4]}}, c[3];
    double det = A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1]) -
                 A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0]) +
                 A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0]);
    for (int k = 0; k < 3; k++) {
        double M[3][3];
        memcpy(M, A, sizeof M);
        for (int r = 0; r < 3; r++)
            M[r][k] = b[r];
        c[k] = (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) -
                M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
                M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])) /
               det;
    }
    *res = 0;
    for (int i = 0; i < n; i++)
        *res = fmax(*res, fabs(c[0] + c[1] * t[i] + c[2] * t[i] * t[i] - z[i]));
    return c[2];
}

/* Retiming the forward jumps slower, easing in and out: with ballistic flights the root's
 * height over every flight is a parabola of the take's own gravity (about 9.8 m/s^2 if the
 * flights are found right); the same warp without them gives a slower fall (1.5^2 times
 * weaker gravity at the warp's middle) and no longer a parabola where the speed changes. */
static void test_retime_ballistic(void) {
    mn_model* m = NULL;
    mn_motion a;
    mn_bvh_options bo = mn_bvh_default();
    bo.scale = CMU_SCALE;
    mn_error err;
    if (mn_bvh_read(MN_DATA "/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh", &bo, &m, &a,
                    NULL, &err) != MN_OK) {
        CHECK(0);
        return;
    }
    double fps = 1.0 / a.frame_time;
    mn_take_feet feet;
    CHECK(mn_take_feet_find(m, NULL, &feet, &err) == MN_OK);
    double n1 = a.nframes - 1;
    double t[2] = {0, 1.5 * n1}, s[2] = {0, n1}, sp[2] = {0, 0}; /* slower, eased in and out */
    mn_retime_result r, plain;
    CHECK(mn_take_retime(m, a.q, a.nframes, fps, &feet, 2, t, s, sp, 1, &r, &err) == MN_OK);
    CHECK(mn_take_retime(m, a.q, a.nframes, fps, &feet, 2, t, s, sp, 0, &plain, &err) == MN_OK);
    if (!r.q || !plain.q) return;
    CHECK(r.nframes == (int)floor(1.5 * n1) + 1);
    /* the flights in the output: where the ballistic root differs from the plain retiming's */
    size_t nq = (size_t)m->nq;
    double *tt = malloc(sizeof(double) * (size_t)r.nframes),
           *zb = malloc(sizeof(double) * (size_t)r.nframes),
           *zp = malloc(sizeof(double) * (size_t)r.nframes);
    int nflight = 0, run = -1;
    double worst_g = 0, worst_res = 0, plain_g_min = 1e300;
    for (int f = 0; f <= r.nframes; f++) {
        int differs =
            f < r.nframes && fabs(r.q[(size_t)f * nq + 1] - plain.q[(size_t)f * nq + 1]) > 0;
        if (differs && run < 0) run = f;
        if (!differs && run >= 0) {
            int k = f - run;
            if (k >= 8) {
                for (int i = 0; i < k; i++) {
                    tt[i] = i / fps;
                    zb[i] = r.q[(size_t)(run + i) * nq + 1];
                    zp[i] = plain.q[(size_t)(run + i) * nq + 1];
                }
                double res, resp;
                double g = -2 * parabola(tt, zb, k, &res), gp = -2 * parabola(tt, zp, k, &resp);
                worst_g = fmax(worst_g, fabs(g - r.gravity) / r.gravity);
                worst_res = fmax(worst_res, res);
                plain_g_min = fmin(plain_g_min, gp);
                nflight++;
            }
            run = -1;
        }
    }
    printf("retime x1.5 eased: %d flights in the take, gravity %.2f m/s^2, first apex %.3f m "
           "(retimed %.3f m); %d ballistic flights in the output within %.1e of it (parabola "
           "residual %.1e m); plain retiming's fall: at most %.2f m/s^2\n",
           r.flights, r.gravity, r.apex[0], r.apex[1], nflight, worst_g, worst_res, plain_g_min);
    CHECK(r.flights >= 3);
    CHECK(r.gravity > 8 && r.gravity < 12); /* the take's flights fall as bodies do */
    CHECK(nflight >= 3);
    CHECK(worst_g < 1e-6);
    CHECK(worst_res < 1e-9);
    CHECK(plain_g_min < 0.8 * r.gravity); /* slowed down without it, the jumps float */
    CHECK(r.apex[1] > r.apex[0]);
    free(tt), free(zb), free(zp);
    free(r.q), free(plain.q);
    mn_motion_free(&a);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_walk_into_hop);
    RUN(test_root_motion_round_trip);
    RUN(test_loop);
    RUN(test_retime_ballistic);
    return mn_test_report();
}
