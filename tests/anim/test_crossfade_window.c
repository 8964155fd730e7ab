/* The crossfade's default window in B (mn_crossfade_window, the default of `anim crossfade`):
 * walking (CMU 131_01) into the hop take of the same subject (131_03) at the middle of the
 * walk, with no range given, keeps the hop. The hop is found here on its own terms, as the
 * flight of the take (both ankles off the ground: more than 5 % of the leg above their
 * lowest heights, for at least 3 frames); the window must end before it, the result must show
 * the same flight, frame for frame, after the blend, the feet's phases must match over the
 * blend (the same foot lower in both takes, more often than with B a quarter second off),
 * and no foot slides more than 5 mm in any interval an independent check calls planted (the
 * ankle within 15 % of the leg length of its lowest height and slower than 25 % of the leg
 * per second, for at least three frames) across the blend. Searching all of B instead, as
 * mn_crossfade does without a window, starts B after the hop. A walk into itself has no
 * motion of interest: the window is B's first half. */
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

/* The two ankles' world positions over a take (y up), from forward kinematics. */
static mn_vec3* ankle_paths(const mn_model* m, const double* q, int n, const int* joint) {
    mn_data* d = mn_data_create(m, 0);
    mn_vec3* p = malloc(sizeof(mn_vec3) * 2 * (size_t)n);
    for (int f = 0; f < n; f++) {
        memcpy(d->q, q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        p[2 * f] = d->xf[joint[0]].p, p[2 * f + 1] = d->xf[joint[1]].p;
    }
    mn_data_destroy(d);
    return p;
}

/* The longest flight: frames where both ankles are more than 5 % of the leg above their
 * lowest heights over the take, for at least 3 frames. Its first and last frame, or -1. */
static int longest_flight(const mn_vec3* p, int n, double leg, int* last) {
    double lo[2] = {1e300, 1e300};
    for (int f = 0; f < n; f++)
        for (int s = 0; s < 2; s++)
            lo[s] = p[2 * f + s].y < lo[s] ? p[2 * f + s].y : lo[s];
    int best = -1, best_len = 0, run = -1;
    for (int f = 0; f <= n; f++) {
        int up = f < n && p[2 * f].y - lo[0] > 0.05 * leg && p[2 * f + 1].y - lo[1] > 0.05 * leg;
        if (up && run < 0) run = f;
        if (!up && run >= 0) {
            if (f - run >= 3 && f - run > best_len) best = run, best_len = f - run;
            run = -1;
        }
    }
    *last = best >= 0 ? best + best_len - 1 : -1;
    return best;
}

/* The largest slide of either ankle (distance from the interval's first position) over the
 * intervals the independent check calls planted that overlap frames [lo, hi]. */
static double worst_slide(const mn_vec3* p, int n, double fps, double leg, int lo, int hi,
                          int* count) {
    double worst = 0;
    *count = 0;
    for (int s = 0; s < 2; s++) {
        double ymin = 1e300;
        for (int f = 0; f < n; f++)
            ymin = p[2 * f + s].y < ymin ? p[2 * f + s].y : ymin;
        int run = -1;
        for (int f = 0; f <= n; f++) {
            int planted = 0;
            if (f < n) {
                int a = f > 0 ? f - 1 : f, b = f < n - 1 ? f + 1 : f;
                mn_vec3 v = mn_vec3_sub(p[2 * b + s], p[2 * a + s]);
                double speed = mn_vec3_norm(v) * fps / (b - a);
                planted = p[2 * f + s].y - ymin < 0.15 * leg && speed < 0.25 * leg;
            }
            if (planted && run < 0) run = f;
            if (!planted && run >= 0) {
                if (f - run >= 3 && f - 1 >= lo && run <= hi) {
                    (*count)++;
                    for (int g = run; g < f; g++) {
                        double d = mn_vec3_norm(mn_vec3_sub(p[2 * g + s], p[2 * run + s]));
                        worst = d > worst ? d : worst;
                    }
                }
                run = -1;
            }
        }
    }
    return worst;
}

static void test_walk_into_hop_keeps_the_hop(void) {
    mn_model *ma = NULL, *mb = NULL;
    mn_motion a, b;
    if (!read_take(MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh", &ma, &a) ||
        !read_take(MN_DATA "/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh", &mb, &b)) {
        CHECK(0);
        return;
    }
    double fps = 1.0 / a.frame_time;
    mn_take_feet feet;
    mn_error err;
    CHECK(mn_take_feet_find(ma, NULL, &feet, &err) == MN_OK);
    /* the hop, on its own terms */
    mn_vec3* pb = ankle_paths(mb, b.q, b.nframes, feet.joint);
    int hop_end, hop = longest_flight(pb, b.nframes, feet.leg, &hop_end);
    CHECK(hop > 0);
    mn_crossfade_window_result w;
    CHECK(mn_crossfade_window(ma, a.q, a.nframes, b.q, b.nframes, fps, &feet, 0, &w, &err) ==
          MN_OK);
    mn_crossfade_options o = mn_crossfade_default(); /* at: the middle of A */
    o.b_min = w.b_min, o.b_max = w.b_max;
    mn_crossfade_result r, all;
    CHECK(mn_crossfade(ma, a.q, a.nframes, b.q, b.nframes, fps, &feet, &o, &r, &err) == MN_OK);
    o.b_min = 0, o.b_max = -1; /* all of B */
    CHECK(mn_crossfade(ma, a.q, a.nframes, b.q, b.nframes, fps, &feet, &o, &all, &err) == MN_OK);
    if (!r.q || !all.q) return;
    printf("     hop (flight) in B: frames %d-%d; motion of interest %d-%d (novelty peak %.3g, "
           "median %.3g m^2); window %d-%d; B starts at %d (all of B searched: %d)\n",
           hop, hop_end, w.interest_start, w.interest_end, w.novelty_peak, w.novelty_median,
           w.b_min, w.b_max, r.b_frame, all.b_frame);
    /* the motion of interest is the hop, and the window ends before it */
    CHECK(w.interest_start <= hop && w.interest_end >= hop && w.interest_start >= hop - 30);
    CHECK(w.b_max + r.length <= hop);
    CHECK(r.b_frame + r.length <= hop); /* the hop after the blend: B's own frames */
    CHECK(all.b_frame > hop_end);       /* what the whole search did: the hop lost */
    /* the result shows the flight: B's frames, the ankles at the same heights over the root */
    mn_vec3* pr = ankle_paths(ma, r.q, r.nframes, feet.joint);
    int shift = r.a_frame - r.b_frame; /* B's frame f is the result's f + shift */
    double off = 0;
    for (int f = hop; f <= hop_end; f++)
        for (int s = 0; s < 2; s++)
            off = fmax(off, fabs(pr[2 * (f + shift) + s].y - pb[2 * f + s].y));
    int out_end, out_hop = longest_flight(pr, r.nframes, feet.leg, &out_end);
    printf("     flight in the result: frames %d-%d (B's %d-%d); ankle heights over the hop %.2g m "
           "from B's\n",
           out_hop, out_end, out_hop - shift, out_end - shift, off);
    CHECK(off < 1e-9);
    CHECK(out_hop >= 0 && abs(out_hop - shift - hop) <= 3 && abs(out_end - shift - hop_end) <= 3);
    /* the feet's phases match over the blend: the same foot lower in A and in B on most of its
     * frames, more than with B started half a step (a quarter second) later */
    mn_vec3* pa = ankle_paths(ma, a.q, a.nframes, feet.joint);
    int q4 = (int)lround(0.25 * fps), same = 0, same_late = 0;
    for (int i = 0; i < r.length; i++) {
        int fa = r.a_frame + i, fb = r.b_frame + i;
        int la = pa[2 * fa].y < pa[2 * fa + 1].y;
        same += la == (pb[2 * fb].y < pb[2 * fb + 1].y);
        same_late += la == (pb[2 * (fb + q4)].y < pb[2 * (fb + q4) + 1].y);
    }
    printf("     the same foot lower in A and B on %d of the blend's %d frames (B a quarter second "
           "later: %d)\n",
           same, r.length, same_late);
    CHECK(same >= 0.8 * r.length && same > same_late);
    /* no planted foot slides across the blend */
    int n;
    double slide = worst_slide(pr, r.nframes, fps, feet.leg, r.a_frame - r.length,
                               r.a_frame + 2 * r.length, &n);
    printf("     planted intervals across the blend: %d, worst slide %.2f mm\n", n, slide * 1e3);
    CHECK(n > 0 && slide <= 0.005);
    CHECK(r.nframes == r.a_frame + b.nframes - r.b_frame);
    free(pa), free(pb), free(pr);
    free(r.q), free(all.q);
    mn_motion_free(&a), mn_motion_free(&b);
    mn_model_destroy(ma), mn_model_destroy(mb);
}

static void test_walk_into_itself(void) {
    mn_model* m = NULL;
    mn_motion a;
    if (!read_take(MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh", &m, &a)) {
        CHECK(0);
        return;
    }
    mn_take_feet feet;
    mn_crossfade_window_result w;
    CHECK(mn_take_feet_find(m, NULL, &feet, NULL) == MN_OK);
    CHECK(mn_crossfade_window(m, a.q, a.nframes, a.q, a.nframes, 1 / a.frame_time, &feet, 0, &w,
                              NULL) == MN_OK);
    CHECK(w.interest_start == -1 && w.b_min == 0 && w.b_max == a.nframes / 2);
    CHECK(mn_crossfade_window(m, a.q, a.nframes, a.q, a.nframes, 0, &feet, 0, &w, NULL) ==
          MN_ERR_ARG);
    mn_motion_free(&a);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_walk_into_hop_keeps_the_hop);
    RUN(test_walk_into_itself);
    return mn_test_report();
}
