/* Compressed clips (clip.h): the error bound checked at every frame of real takes by an
 * independent measure (the take's own forward kinematics, virtual vertices computed here),
 * a block that loads back and samples bit for bit the same, malformed blocks refused with
 * the field named, bad arguments refused, and sampling without a heap allocation. */
#include <marionette/anim.h>
#include <marionette/clip.h>
#include <marionette/io.h>
#include <marionette/sequence.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anim/clip_encode.h"
#include "test.h"
#include "toy_model.h"

#define CMU_SCALE (0.0254 / 0.45) /* CMU lengths to metres */

/* The largest distance between the nv virtual vertices (shell along x, y and, when nv is 3, z
 * of each joint frame) of a and b, written out here from the frames only. */
static double vertex_error(const mn_model* m, const mn_data* a, const mn_data* b, double shell,
                           int nv) {
    double e = 0;
    for (int j = 0; j < m->njoint; j++)
        for (int ax = 0; ax < nv; ax++) {
            double d2 = 0;
            const double pa[3] = {a->xf[j].p.x, a->xf[j].p.y, a->xf[j].p.z};
            const double pb[3] = {b->xf[j].p.x, b->xf[j].p.y, b->xf[j].p.z};
            for (int r = 0; r < 3; r++) {
                double da = pa[r] + shell * a->xf[j].R.m[3 * r + ax];
                double db = pb[r] + shell * b->xf[j].R.m[3 * r + ax];
                d2 += (da - db) * (da - db);
            }
            if (sqrt(d2) > e) e = sqrt(d2);
        }
    return e;
}

/* Every `every`-th frame of a take from frame `first` on, at most `most` of them (0: all). */
static double* subsample(const mn_motion* mo, int every, int first, int most, int* n) {
    *n = (mo->nframes - first + every - 1) / every;
    if (most > 0 && *n > most) *n = most;
    double* q = malloc(sizeof(double) * (size_t)*n * (size_t)mo->nq);
    for (int f = 0; f < *n; f++)
        memcpy(q + (size_t)f * mo->nq, mo->q + (size_t)(first + f * every) * mo->nq,
               sizeof(double) * (size_t)mo->nq);
    return q;
}

/* The clip's error against the take at every frame, measured independently on nv vertices. */
static double measured_error_nv(const mn_model* m, const mn_clip* c, const double* q, int n,
                                double shell, int nv) {
    mn_data* a = mn_data_create(m, 0);
    mn_data* b = mn_data_create(m, 0);
    double worst = 0;
    for (int f = 0; f < n; f++) {
        memcpy(a->q, q + (size_t)f * m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, a);
        CHECK(mn_clip_sample(c, f, b->q) == MN_OK);
        mn_fk(m, b);
        worst = fmax(worst, vertex_error(m, a, b, shell, nv));
    }
    mn_data_destroy(a);
    mn_data_destroy(b);
    return worst;
}

/* ... on three vertices, the default measure (the Animation Compression Library's). */
static double measured_error(const mn_model* m, const mn_clip* c, const double* q, int n,
                             double shell) {
    return measured_error_nv(m, c, q, n, shell, 3);
}

/* A piece of a CMU take (every `every`-th frame from `first`, at most `most` frames) within
 * tol at every frame, measured here; a looser tolerance gives a smaller clip that holds its
 * own bound. (The four whole takes at both rates and both bounds are `bench anim`'s.) */
static void take_bound(const char* path, int every, int first, int most, double tol,
                       double min_ratio) {
    mn_bvh_options bo = mn_bvh_default();
    bo.scale = CMU_SCALE;
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    CHECK(mn_bvh_read(path, &bo, &m, &mo, NULL, &err) == MN_OK);
    if (!m) return;
    int n;
    double* q = subsample(&mo, every, first, most, &n);
    mn_clip_options o = mn_clip_default();
    o.tol = tol;
    mn_clip_stats st;
    mn_clip* c = mn_clip_compress(m, q, n, 120.0 / every, &o, &st, &err);
    CHECK(c != NULL);
    if (c) {
        double e = measured_error(m, c, q, n, o.shell);
        printf("%s every %d from %d tol %g: %d frames, %zu of %zu bytes, ratio %.2f, error %.3g "
               "(measured here %.3g), tracks rest %d constant %d sparse %d dense %d\n",
               strrchr(path, '/') + 1, every, first, tol, n, st.bytes, st.raw_bytes, st.ratio,
               st.max_error, e, st.rest, st.constant, st.sparse, st.dense);
        CHECK(e <= tol * (1 + 1e-9));
        CHECK_NEAR(e, st.max_error, 1e-12);
        double e2 = -1;
        CHECK(mn_clip_error(c, q, n, o.shell, &e2, NULL, NULL) == MN_OK);
        CHECK_NEAR(e2, e, 1e-12);
        CHECK(st.frames == n && st.bytes == mn_clip_size(c));
        CHECK(st.raw_bytes == (size_t)31 * (size_t)n * 40); /* 31 moving joints */
        CHECK(st.ratio >= min_ratio);
        /* a looser tolerance gives a smaller clip that holds its own bound */
        o.tol = 5 * tol;
        mn_clip_stats st5;
        mn_clip* c5 = mn_clip_compress(m, q, n, 120.0 / every, &o, &st5, &err);
        CHECK(c5 && st5.bytes < st.bytes);
        if (c5) CHECK(measured_error(m, c5, q, n, o.shell) <= o.tol * (1 + 1e-9));
        mn_clip_destroy(c5);
    }
    mn_clip_destroy(c);
    free(q);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

static void test_cmu_walk_bound(void) {
    /* 24 Hz as the Animation Compression Library's CMU set (the walk's first 48 frames), and
     * the take's own 120 Hz (its first 96) */
    take_bound(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", 5, 0, 48, 1e-4, 14);
    take_bound(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", 1, 0, 96, 1e-4, 20);
}

/* The walk's first 48 frames at 24 Hz within 0.05 cm (some sparse tracks as well as dense
 * ones), compressed once and shared by the tests below (freed by walk_free). */
static struct {
    mn_model* m;
    double* q;
    int n;
    mn_clip* c;
} walk;

static mn_clip* walk_clip(mn_model** m, double** q, int* n) {
    if (!walk.c) {
        mn_bvh_options bo = mn_bvh_default();
        bo.scale = CMU_SCALE;
        mn_motion mo;
        if (mn_bvh_read(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", &bo, &walk.m, &mo,
                        NULL, NULL) != MN_OK)
            return NULL;
        walk.q = subsample(&mo, 5, 0, 48, &walk.n);
        mn_motion_free(&mo);
        mn_clip_options o = mn_clip_default();
        o.tol = 5e-4;
        walk.c = mn_clip_compress(walk.m, walk.q, walk.n, 24, &o, NULL, NULL);
    }
    *m = walk.m, *q = walk.q, *n = walk.n;
    return walk.c;
}

static void walk_free(void) {
    mn_clip_destroy(walk.c);
    free(walk.q);
    mn_model_destroy(walk.m);
}

/* max_segment caps a dense track's segments: every cap keeps the bound, and the shortest
 * segments cost bytes (each segment starts its prediction afresh). */
static void test_max_segment(void) {
    mn_model* m = NULL;
    double* q = NULL;
    int n = 0;
    mn_clip* c32 = walk_clip(&m, &q, &n); /* 0.05 cm, the default cap (32) */
    CHECK(c32 != NULL);
    if (!c32) return;
    size_t bytes[3] = {0, 0, mn_clip_size(c32)};
    CHECK(measured_error(m, c32, q, n, 0.03) <= 5e-4 * (1 + 1e-9));
    int caps[2] = {8, 16};
    for (int k = 0; k < 2; k++) {
        mn_clip_options o = mn_clip_default();
        o.tol = 5e-4;
        o.max_segment = caps[k];
        mn_clip_stats st;
        mn_clip* c = mn_clip_compress(m, q, n, 24, &o, &st, NULL);
        CHECK(c != NULL);
        if (!c) continue;
        bytes[k] = st.bytes;
        CHECK(measured_error(m, c, q, n, o.shell) <= o.tol * (1 + 1e-9));
        mn_clip_destroy(c);
    }
    printf("walk at 24 Hz within 0.05 cm, segments of at most 8 / 16 / 32 frames: %zu / %zu / "
           "%zu bytes\n",
           bytes[0], bytes[1], bytes[2]);
    CHECK(bytes[0] > bytes[2] && bytes[1] > bytes[2]);
}

/* Two vertices per joint (the x and y axes: the option, and the measure of earlier versions)
 * is a looser bound: the clip holds it, its z vertices go beyond it, and the default clip
 * (three vertices) holds both. */
static void test_two_vertices(void) {
    mn_model* m = NULL;
    double* q = NULL;
    int n = 0;
    mn_clip* c3 = walk_clip(&m, &q, &n); /* 0.05 cm on three vertices */
    CHECK(c3 != NULL);
    if (!c3) return;
    mn_clip_options o = mn_clip_default();
    o.tol = 5e-4;
    o.vertices = 2;
    mn_clip_stats st;
    mn_clip* c2 = mn_clip_compress(m, q, n, 24, &o, &st, NULL);
    CHECK(c2 != NULL);
    if (!c2) return;
    double e2 = measured_error_nv(m, c2, q, n, o.shell, 2);
    double e2z = measured_error_nv(m, c2, q, n, o.shell, 3);
    double e3 = measured_error_nv(m, c3, q, n, o.shell, 3);
    double api2 = -1, api3 = -1;
    CHECK(mn_clip_error_vertices(c2, q, n, o.shell, 2, &api2, NULL, NULL) == MN_OK);
    CHECK(mn_clip_error(c2, q, n, o.shell, &api3, NULL, NULL) == MN_OK);
    printf("walk at 24 Hz, 0.05 cm on two vertices: %zu bytes, error %.4g cm on two vertices, "
           "%.4g cm on three; on three vertices: %zu bytes, error %.4g cm\n",
           st.bytes, e2 * 100, e2z * 100, mn_clip_size(c3), e3 * 100);
    CHECK(e2 <= o.tol * (1 + 1e-9) && fabs(st.max_error - e2) < 1e-12);
    CHECK(fabs(api2 - e2) < 1e-12 && fabs(api3 - e2z) < 1e-12);
    CHECK(e2z > o.tol);                  /* the z vertices are not held */
    CHECK(e3 <= o.tol * (1 + 1e-9));     /* the default holds all three */
    CHECK(st.bytes <= mn_clip_size(c3)); /* the looser bound costs no more */
    CHECK(mn_clip_error_vertices(c2, q, n, o.shell, 4, &api2, NULL, NULL) == MN_ERR_ARG);
    mn_clip_destroy(c2);
}

static void test_cmu_3dsmax_bound(void) {
    /* another CMU skeleton (3ds Max naming, ZXY and ZYX rotations): the hop's take-off and
     * landing */
    take_bound(MN_DATA "/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh", 5, 400, 48, 1e-4, 14);
}

/* The stick figure: a free root and hinges (scalar tracks), from a keyed sequence. */
static void test_stickman_bound(void) {
    mn_model* m = mn_stickman_model(NULL);
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    unsigned r = 7;
    for (int k = 0; k < 5; k++) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        for (int j = 0; j < m->njoint; j++)
            if (m->jnt_type[j] == MN_JOINT_HINGE && (j + k) % 3) {
                r = r * 1664525u + 1013904223u;
                double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
                q[m->jnt_qadr[j]] = lo + (hi - lo) * (0.3 + 0.4 * (r >> 8) / 16777216.0);
            }
        q[2] += 0.2 * k;
        mn_seq_set_key(s, 20 * k, q, NULL);
    }
    int n = 81;
    double* take = malloc(sizeof(double) * (size_t)n * (size_t)m->nq);
    for (int f = 0; f < n; f++)
        mn_seq_sample(s, f, take + (size_t)f * m->nq);
    mn_clip_options o = mn_clip_default();
    o.tol = 5e-4;
    mn_clip_stats st;
    mn_clip* c = mn_clip_compress(m, take, n, 30, &o, &st, NULL);
    CHECK(c != NULL);
    if (c) {
        double e = measured_error(m, c, take, n, o.shell);
        printf("stick figure, smooth keyed motion: %zu of %zu bytes, ratio %.2f, error %.3g, "
               "tracks rest %d constant %d sparse %d dense %d\n",
               st.bytes, st.raw_bytes, st.ratio, e, st.rest, st.constant, st.sparse, st.dense);
        CHECK(e <= o.tol * (1 + 1e-9));
        CHECK(st.rest > 0);   /* joints that never move cost nothing */
        CHECK(st.sparse > 0); /* smooth channels are keys, not every frame */
        CHECK(st.ratio > 20);
        CHECK(mn_clip_frames(c) == n && mn_clip_fps(c) == 30);
    }
    mn_clip_destroy(c);
    free(take);
    free(q);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

static void test_round_trip(void) {
    mn_model* m = NULL;
    double* q = NULL;
    int n = 0;
    mn_clip* c = walk_clip(&m, &q, &n);
    CHECK(c != NULL);
    if (!c) return;
    mn_error err;
    mn_clip* d = mn_clip_load(m, mn_clip_bytes(c), mn_clip_size(c), &err);
    CHECK(d != NULL);
    if (d) {
        CHECK(mn_clip_size(d) == mn_clip_size(c));
        CHECK(!memcmp(mn_clip_bytes(d), mn_clip_bytes(c), mn_clip_size(c)));
        /* what the loaded clip holds: the block and, for each dense track, a seek point of
         * 28 bytes every 4 frames (the walk has dense tracks) */
        CHECK(mn_clip_memory(NULL) == 0);
        CHECK(mn_clip_memory(d) == mn_clip_memory(c));
        CHECK(mn_clip_memory(d) >= mn_clip_size(d) + 28 * (size_t)((n + 3) / 4));
        double* a = malloc(sizeof(double) * (size_t)m->nq);
        double* b = malloc(sizeof(double) * (size_t)m->nq);
        int same = 1;
        for (int i = -3; i < 4 * n + 3; i++) { /* whole and quarter frames, beyond the ends */
            double f = 0.25 * i;
            mn_clip_sample(c, f, a);
            mn_clip_sample(d, f, b);
            same &= !memcmp(a, b, sizeof(double) * (size_t)m->nq);
            for (int k = 0; k < m->nq; k++)
                same &= isfinite(a[k]);
        }
        CHECK(same);
        /* clamped to the ends */
        mn_clip_sample(c, -10, a);
        mn_clip_sample(c, 0, b);
        CHECK(!memcmp(a, b, sizeof(double) * (size_t)m->nq));
        mn_clip_sample(c, 1e9, a);
        mn_clip_sample(c, n - 1, b);
        CHECK(!memcmp(a, b, sizeof(double) * (size_t)m->nq));
        CHECK(mn_clip_sample(c, NAN, a) == MN_ERR_ARG);
        CHECK(mn_clip_sample(c, INFINITY, a) == MN_ERR_ARG);
        free(a);
        free(b);
    }
    mn_clip_destroy(d);
}

static void put32(uint8_t* p, uint32_t v) {
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
    p[3] = (uint8_t)(v >> 24);
}

/* Bits of a block, the first in the lowest bit of each byte (the block's order). */
static unsigned get_field(const uint8_t* p, size_t bit, int n) {
    unsigned v = 0;
    for (int i = 0; i < n; i++)
        v |= (unsigned)(p[(bit + i) >> 3] >> ((bit + i) & 7) & 1) << i;
    return v;
}
static void set_field(uint8_t* p, size_t bit, int n, unsigned v) {
    for (int i = 0; i < n; i++) {
        uint8_t m = (uint8_t)(1u << ((bit + i) & 7));
        p[(bit + i) >> 3] =
            (uint8_t)((v >> i & 1) ? p[(bit + i) >> 3] | m : p[(bit + i) >> 3] & ~m);
    }
}

/* The first track of the walk's clip (the root's position) is dense: its segment byte, its
 * first segment's record and its second segment's record (coded from the first's), each
 * changed. */
static void dense_malformed(const mn_model* m, const uint8_t* good, size_t size, int n) {
    uint8_t* b = malloc(size + 16);
    mn_error err;
    CHECK((good[17] & 3) == 3);
    int bits = (good[17] >> 3) + 1;
    size_t data = 17 + 1 + 5 * 3; /* mode byte, range of 3 components */
    size_t rec = data * 8 + 8;    /* the first segment, in bits */
    struct {
        const char* what;
        size_t bit;
        int n;
        unsigned value;
        const char* message;
    } table[] = {
        {"segments of 128 frames", data * 8, 3, 7, "segment length"},
        {"stray bits beside the segment length", data * 8 + 3, 5, 1, "segment length"},
        {"a Rice parameter of 31", rec + 9, 5, 31, "Rice parameter"},
        {"a step coarser than the track", rec, 7, (unsigned)(bits + 1) << 3, "coarser"},
    };
    CHECK(bits < 15); /* the last row's level fits in 7 bits */
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        memcpy(b, good, size);
        CHECK(get_field(b, table[i].bit, table[i].n) != table[i].value);
        set_field(b, table[i].bit, table[i].n, table[i].value);
        mn_clip* x = mn_clip_load(m, b, size, &err);
        CHECK(x == NULL);
        if (x || strcmp(err.field, "segments") || !strstr(err.message, table[i].message))
            fprintf(stderr, "  %s: field '%s' (%s)\n", table[i].what, err.field, err.message);
        CHECK(!strcmp(err.field, "segments") && strstr(err.message, table[i].message));
        mn_clip_destroy(x);
    }
    /* the second segment's record, after the first segment's residuals (walked here as the
     * format says: Rice codes of each component's k, 20 zeros escaping to 27 bits) */
    {
        size_t pos = rec;
        int k[3];
        for (int c = 0; c < 3; c++) {
            unsigned l = get_field(good, pos, 7);
            k[c] = (int)get_field(good, pos + 9, 5);
            unsigned long long num = ((1ull << bits) - 1) << 3,
                               den = (unsigned long long)(8 + (l & 7)) << (l >> 3);
            unsigned long long top = (num + den - 1) / den;
            int w = 1;
            while (w < 32 && (top >> w))
                w++;
            pos += 14 + (size_t)w;
        }
        int S = 1 << (good[data] & 7), len = S < n ? S : n;
        CHECK(S < n); /* a second segment */
        for (int r = 1; r < len; r++)
            for (int c = 0; c < 3; c++) {
                int q = 0;
                while (q < 20 && !get_field(good, pos, 1))
                    q++, pos++;
                pos += q < 20 ? 1 + (size_t)k[c] : 27;
            }
        struct {
            const char* what;
            int n;
            unsigned value;
            const char* message;
        } rows[] = {
            /* the level's change: 8 zeros, a one, then 8 zero bits (w = 256, z = 255: a
             * change of -128, below level 0 whatever the first segment's) */
            {"a level change below the levels", 17, 0x100u, "out of range"},
            {"a level change of 26 zeros", 26, 0, "longer than any"},
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            memcpy(b, good, size);
            set_field(b, pos, rows[i].n, rows[i].value);
            mn_clip* x = mn_clip_load(m, b, size, &err);
            CHECK(x == NULL);
            if (x || strcmp(err.field, "segments") || !strstr(err.message, rows[i].message))
                fprintf(stderr, "  %s: field '%s' (%s)\n", rows[i].what, err.field, err.message);
            CHECK(!strcmp(err.field, "segments") && strstr(err.message, rows[i].message));
            mn_clip_destroy(x);
        }
    }
    /* the second frame's first residual made an escape of the largest value: off the grid */
    memcpy(b, good, size);
    mn_clip* x = NULL;
    {
        /* the escape: 20 zeros then 27 ones, in place of the second frame's first residual */
        size_t pos = rec;
        for (int c = 0; c < 3; c++) {
            unsigned l = get_field(b, pos, 7);
            int w = 1;
            /* the first index's width: bits for ceil((2^bits - 1) 8 / ((8 + m) 2^s)) */
            unsigned long long num = ((1ull << bits) - 1) << 3,
                               den = (unsigned long long)(8 + (l & 7)) << (l >> 3);
            unsigned long long top = (num + den - 1) / den;
            while (w < 32 && (top >> w))
                w++;
            pos += 14 + (size_t)w;
        }
        set_field(b, pos, 20, 0);
        set_field(b, pos + 20, 27, (1u << 27) - 1);
        x = mn_clip_load(m, b, size, &err);
        CHECK(x == NULL);
        CHECK(!strcmp(err.field, "segments") && strstr(err.message, "grid"));
        if (x || !strstr(err.message, "grid")) fprintf(stderr, "  escape: %s\n", err.message);
        mn_clip_destroy(x);
    }
    free(b);
}

static void test_malformed(void) {
    mn_model* m = NULL;
    double* q = NULL;
    int n = 0;
    mn_clip* c = walk_clip(&m, &q, &n);
    CHECK(c != NULL);
    if (!c) return;
    size_t size = mn_clip_size(c);
    const uint8_t* good = mn_clip_bytes(c);
    uint8_t* b = malloc(size + 16);
    mn_error err;
    struct {
        const char* what;
        size_t at; /* byte changed */
        int value; /* new byte value (-1: see below) */
        const char* field;
    } table[] = {
        {"wrong magic", 0, 'X', "magic"},
        {"a block of format version 1", 3, '1', "version"},
        {"a block of format version 2", 3, '2', "version"},
        {"a block of format version 3", 3, '3', "version"},
        {"zero frames", 4, -1, "frames"},
        {"frame rate not a number", 8, -2, "fps"},
        {"state size of another figure", 12, 3, "nq"},
        {"track count of another figure", 14, 5, "tracks"},
        {"frame-index bits", 16, 30, "frame_bits"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        memcpy(b, good, size);
        if (table[i].value == -1)
            put32(b + 4, 0);
        else if (table[i].value == -2)
            put32(b + 8, 0x7fc00000u); /* NaN */
        else
            b[table[i].at] = (uint8_t)table[i].value;
        mn_clip* x = mn_clip_load(m, b, size, &err);
        CHECK(x == NULL);
        if (x || strcmp(err.field, table[i].field))
            fprintf(stderr, "  %s: field '%s' (%s)\n", table[i].what, err.field, err.message);
        CHECK(!strcmp(err.field, table[i].field));
        CHECK(strstr(err.message, "byte ") != NULL);
        mn_clip_destroy(x);
    }
    memcpy(b, good, size);
    b[3] = '1';
    mn_clip* v1 = mn_clip_load(m, b, size, &err);
    CHECK(v1 == NULL && strstr(err.message, "version 1") != NULL);
    mn_clip_destroy(v1);
    b[3] = '2';
    v1 = mn_clip_load(m, b, size, &err);
    CHECK(v1 == NULL && strstr(err.message, "version 2") != NULL);
    mn_clip_destroy(v1);
    b[3] = '3';
    v1 = mn_clip_load(m, b, size, &err);
    CHECK(v1 == NULL && strstr(err.message, "version 3") != NULL);
    mn_clip_destroy(v1);
    dense_malformed(m, good, size, n);
    /* every shorter block, and a byte too many */
    int refused = 1;
    for (size_t k = 0; k < size; k++) {
        mn_clip* x = mn_clip_load(m, good, k, &err);
        refused &= x == NULL;
        mn_clip_destroy(x);
    }
    CHECK(refused);
    memcpy(b, good, size);
    b[size] = 0;
    mn_clip* x = mn_clip_load(m, b, size + 1, &err);
    CHECK(x == NULL && !strcmp(err.field, "size"));
    mn_clip_destroy(x);
    /* the interpolation bit on the first track (the root's position: moving, and not
     * sparse at this tolerance): only a sparse track may be Catmull-Rom */
    memcpy(b, good, size);
    CHECK((b[17] & 3) != 0 && (b[17] & 3) != 2);
    if ((b[17] & 3) != 2) {
        b[17] |= 4;
        x = mn_clip_load(m, b, size, &err);
        CHECK(x == NULL && !strcmp(err.field, "mode"));
        mn_clip_destroy(x);
    }
    /* on another figure */
    mn_model* st = mn_stickman_model(NULL);
    x = mn_clip_load(st, good, size, &err);
    CHECK(x == NULL && !strcmp(err.field, "nq"));
    mn_clip_destroy(x);
    mn_model_destroy(st);
    /* any single byte changed: refused, or a clip whose samples are finite */
    int finite = 1;
    double* s = malloc(sizeof(double) * (size_t)m->nq);
    for (size_t k = 0; k < size; k++) { /* each byte flipped one way, the three in turn */
        int v = (int)(k % 3);
        memcpy(b, good, size);
        b[k] ^= (uint8_t)(v == 0 ? 0xff : v == 1 ? 0x01 : 0x80);
        x = mn_clip_load(m, b, size, NULL);
        if (x)
            for (int f = 0; f < n; f += 7) {
                mn_clip_sample(x, f + 0.5, s);
                for (int i = 0; i < m->nq; i++)
                    finite &= isfinite(s[i]);
            }
        mn_clip_destroy(x);
    }
    CHECK(finite);
    free(s);
    free(b);
}

static void test_bad_arguments(void) {
    mn_model* m = mn_stickman_model(NULL);
    double* q = malloc(sizeof(double) * (size_t)m->nq * 3);
    for (int f = 0; f < 3; f++)
        memcpy(q + (size_t)f * m->nq, m->q0, sizeof(double) * (size_t)m->nq);
    mn_error err;
    mn_clip_options o = mn_clip_default();
    CHECK(mn_clip_compress(NULL, q, 3, 30, &o, NULL, &err) == NULL && err.status == MN_ERR_ARG);
    CHECK(mn_clip_compress(m, q, 0, 30, &o, NULL, &err) == NULL);
    CHECK(mn_clip_compress(m, q, 3, 0, &o, NULL, &err) == NULL);
    CHECK(mn_clip_compress(m, q, 3, NAN, &o, NULL, &err) == NULL);
    o.tol = 0;
    CHECK(mn_clip_compress(m, q, 3, 30, &o, NULL, &err) == NULL);
    o = mn_clip_default();
    o.shell = -1;
    CHECK(mn_clip_compress(m, q, 3, 30, &o, NULL, &err) == NULL);
    int nvs[] = {1, 4, -3};
    for (int k = 0; k < 3; k++) {
        o = mn_clip_default();
        o.vertices = nvs[k];
        CHECK(mn_clip_compress(m, q, 3, 30, &o, NULL, &err) == NULL &&
              !strcmp(err.field, "vertices"));
    }
    int segs[] = {7, 64, -8, 1};
    for (int k = 0; k < 4; k++) {
        o = mn_clip_default();
        o.max_segment = segs[k];
        CHECK(mn_clip_compress(m, q, 3, 30, &o, NULL, &err) == NULL &&
              !strcmp(err.field, "max_segment"));
    }
    o = mn_clip_default();
    q[m->nq + 4] = NAN;
    CHECK(mn_clip_compress(m, q, 3, 30, &o, NULL, &err) == NULL);
    CHECK(strstr(err.message, "frame 1") != NULL);
    q[m->nq + 4] = 0;
    /* a take at rest: every track is the rest value, a header and one byte per track */
    mn_clip_stats st;
    mn_clip* c = mn_clip_compress(m, q, 3, 30, NULL, &st, &err);
    CHECK(c != NULL);
    if (c) {
        CHECK(st.rest == st.tracks && st.bytes == (size_t)(17 + st.tracks));
        double* s = malloc(sizeof(double) * (size_t)m->nq);
        mn_clip_sample(c, 1.5, s);
        CHECK(!memcmp(s, m->q0, sizeof(double) * (size_t)m->nq));
        free(s);
    }
    mn_clip_destroy(c);
    CHECK(mn_clip_load(m, NULL, 5, &err) == NULL);
    free(q);
    mn_model_destroy(m);
}

/* A cursor samples bit for bit as mn_clip_sample, whichever way playback goes: forward by
 * quarter frames (going on within a segment), backward, jumping, across segment ends. */
static void test_cursor(void) {
    mn_model* m = NULL;
    double* q = NULL;
    int n = 0;
    mn_clip* c = walk_clip(&m, &q, &n);
    CHECK(c != NULL);
    if (!c) return;
    mn_clip_cursor* k = mn_clip_cursor_create(c);
    CHECK(k != NULL);
    if (!k) return;
    double* a = malloc(sizeof(double) * (size_t)m->nq);
    double* b = malloc(sizeof(double) * (size_t)m->nq);
    int same = 1, count = 0;
    unsigned r = 11;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < 4 * n + 8; i++) {
            double f;
            if (pass == 0) {
                f = 0.25 * i - 1; /* forward, from before the start to beyond the end */
            } else if (pass == 1) {
                f = n - 0.25 * i; /* backward */
            } else {
                r = r * 1664525u + 1013904223u;
                f = (n + 2) * ((r >> 8) / 16777216.0) - 1; /* jumps */
            }
            mn_clip_cursor_sample(k, f, a);
            mn_clip_sample(c, f, b);
            same &= !memcmp(a, b, sizeof(double) * (size_t)m->nq);
            count++;
        }
    CHECK(same && count > 3 * n);
    CHECK(mn_clip_cursor_sample(k, NAN, a) == MN_ERR_ARG);
    CHECK(mn_clip_cursor_sample(NULL, 1, a) == MN_ERR_ARG);
    CHECK(mn_clip_cursor_create(NULL) == NULL);
    long before = mn_alloc_count();
    for (int i = 0; i < 1000; i++)
        mn_clip_cursor_sample(k, (n - 1) * (i / 999.0), a);
    CHECK(mn_alloc_count() == before);
    free(a);
    free(b);
    mn_clip_cursor_destroy(k);
}

/* The largest distance of each lock's point in the clip from the take's over its frames,
 * relative to its tol, measured here from the frames. */
static double lock_excess(const mn_model* m, const mn_clip* c, const double* q, int n,
                          const mn_clip_lock* lk, int nlk) {
    mn_data* a = mn_data_create(m, 0);
    mn_data* b = mn_data_create(m, 0);
    double worst = 0;
    for (int f = 0; f < n; f++) {
        memcpy(a->q, q + (size_t)f * m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, a);
        mn_clip_sample(c, f, b->q);
        mn_fk(m, b);
        for (int k = 0; k < nlk; k++) {
            if (f < lk[k].start || f > lk[k].end) continue;
            const mn_xform *xa = &a->xf[lk[k].joint], *xb = &b->xf[lk[k].joint];
            const double pt[3] = {lk[k].point.x, lk[k].point.y, lk[k].point.z};
            double d2 = 0;
            for (int r = 0; r < 3; r++) {
                double pa = (r == 0 ? xa->p.x : r == 1 ? xa->p.y : xa->p.z);
                double pb = (r == 0 ? xb->p.x : r == 1 ? xb->p.y : xb->p.z);
                for (int k2 = 0; k2 < 3; k2++)
                    pa += xa->R.m[3 * r + k2] * pt[k2], pb += xb->R.m[3 * r + k2] * pt[k2];
                d2 += (pa - pb) * (pa - pb);
            }
            worst = fmax(worst, sqrt(d2) / lk[k].tol);
        }
    }
    mn_data_destroy(a);
    mn_data_destroy(b);
    return worst;
}

/* Compressed at 0.05 cm with and without the locks: with them every lock holds 1e-4 m (where
 * the plain clip misses it), within 0.05 cm elsewhere, and the ratio is printed beside the
 * plain clip's. Returns the ratio with locks over the ratio without. */
static double locked_vs_plain(const char* what, const mn_model* m, const double* q, int n,
                              double fps, const mn_clip_lock* lk, int nlk) {
    mn_clip_options o = mn_clip_default();
    o.tol = 5e-4;
    mn_clip_stats sp, sl;
    mn_clip* p = mn_clip_compress(m, q, n, fps, &o, &sp, NULL);
    o.locks = lk, o.nlocks = nlk;
    mn_clip* c = mn_clip_compress(m, q, n, fps, &o, &sl, NULL);
    CHECK(p && c);
    if (!p || !c) {
        mn_clip_destroy(p), mn_clip_destroy(c);
        return 0;
    }
    double ep = lock_excess(m, p, q, n, lk, nlk), el = lock_excess(m, c, q, n, lk, nlk);
    printf("%s: %d locks at 1e-4 m, clip within 0.05 cm: ratio %.2f with the locks (lock error "
           "%.3g of its tol), %.2f without (%.3g of it)\n",
           what, nlk, sl.ratio, el, sp.ratio, ep);
    CHECK(el <= 1 + 1e-9);                         /* every lock holds */
    CHECK(fabs(sl.lock_error / 1e-4 - el) < 1e-6); /* as the stats say */
    CHECK(ep > 1);                                 /* which the plain clip does not do */
    CHECK(measured_error(m, c, q, n, o.shell) <= o.tol * (1 + 1e-9));
    mn_clip_destroy(p), mn_clip_destroy(c);
    return sl.ratio / sp.ratio;
}

/* A shipped sequence baked (the stick figure crouching with both feet locked, position and
 * orientation), and a CMU walk whose ankles are locked where they are planted (detected
 * here: slower than 10 cm/s over the ground for three frames or more). */
static void test_locks(void) {
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_error err;
    CHECK(mn_seq_read(MN_DATA "/../docs/examples/crouch_sequence.json", NULL, &m, &s, NULL, &err) ==
          MN_OK);
    if (s) {
        mn_seq_bake_options bo = mn_seq_bake_default();
        mn_motion mo;
        CHECK(mn_seq_bake(s, m, &bo, &mo, NULL, &err) == MN_OK);
        mn_clip_lock lk[16];
        int nlk = mn_clip_locks_from_seq(s, mn_seq_start(s), 1, mo.nframes, 1e-4, 0.03, lk, 16);
        CHECK(nlk == 8); /* two pins, two orientations of three points each */
        locked_vs_plain("crouch (baked)", m, mo.q, mo.nframes, mn_seq_fps(s), lk, nlk);
        mn_motion_free(&mo);
    }
    mn_seq_destroy(s);
    mn_model_destroy(m);
    /* the walk */
    mn_model* w = NULL;
    double* q = NULL;
    int n = 0;
    if (!walk_clip(&w, &q, &n)) return;
    mn_data* d = mn_data_create(w, 0);
    const char* feet[2] = {"LeftFoot", "RightFoot"};
    mn_clip_lock lk[32];
    int nlk = 0;
    for (int side = 0; side < 2; side++) {
        int j = mn_model_find_joint(w, feet[side]);
        CHECK(j >= 0);
        if (j < 0) continue;
        double* y = malloc(sizeof(double) * (size_t)n * 3);
        for (int f = 0; f < n; f++) {
            memcpy(d->q, q + (size_t)f * w->nq, sizeof(double) * (size_t)w->nq);
            mn_fk(w, d);
            y[3 * f] = d->xf[j].p.x, y[3 * f + 1] = d->xf[j].p.y, y[3 * f + 2] = d->xf[j].p.z;
        }
        int start = -1;
        for (int f = 1; f <= n; f++) { /* frame 0 of the take is its T pose */
            int planted = 0;
            if (f + 1 < n) {
                double dx = y[3 * f + 3] - y[3 * f], dz = y[3 * f + 5] - y[3 * f + 2];
                planted = sqrt(dx * dx + dz * dz) * 24 < 0.1;
            }
            if (planted && start < 0) start = f;
            if (!planted && start >= 0) {
                if (f - start >= 3 && nlk < 32)
                    lk[nlk++] = (mn_clip_lock){j, {0, 0, 0}, start, f - 1, 1e-4};
                start = -1;
            }
        }
        free(y);
    }
    mn_data_destroy(d);
    CHECK(nlk >= 2); /* each foot planted at least once in two seconds of walking */
    locked_vs_plain("walk at 24 Hz", w, q, n, 24, lk, nlk);
    mn_clip_options o = mn_clip_default();
    mn_clip_lock bad = {w->njoint, {0, 0, 0}, 0, 1, 1e-4};
    o.locks = &bad, o.nlocks = 1;
    CHECK(mn_clip_compress(w, q, n, 24, &o, NULL, &err) == NULL && !strcmp(err.field, "locks"));
    bad.joint = 0, bad.end = n;
    CHECK(mn_clip_compress(w, q, n, 24, &o, NULL, &err) == NULL && !strcmp(err.field, "locks"));
}

/* The segment search's check of a change to one joint (mn_clip_subtree_ok_moved: the subtree
 * moved rigidly from the cached frames) against the chain of frames (mn_clip_subtree_ok),
 * on random poses of the toy figure (a free root, a ball, a hinge, a slide) and the stick
 * figure, with each joint's states moved at random about the bound: it never passes a change
 * the chain of frames fails, and passes every change the chain keeps within tol less two
 * millionths. Both outcomes occur, and the vertex that failed is checked first next time. */
static void moved_check_on(mn_model* m, unsigned seed, int* passed, int* failed) {
    mn_data* d = mn_data_create(m, 0);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    double* qn = malloc(sizeof(double) * (size_t)m->nq);
    double* V = malloc(sizeof(double) * (size_t)m->njoint * 9);
    mn_xform* X = malloc(sizeof(mn_xform) * (size_t)m->njoint);
    int* vhint = calloc((size_t)m->njoint, sizeof(int));
    unsigned r = seed;
#define RND() ((r = r * 1664525u + 1013904223u), (double)(r >> 8) / 16777216.0 - 0.5)
    enc e;
    memset(&e, 0, sizeof e);
    e.m = m, e.n = 1, e.nv = 3, e.d = d, e.X = X, e.V = V, e.vhint = vhint;
    e.opt = mn_clip_default();
    e.opt.tol = 1e-3;
    for (int trial = 0; trial < 400; trial++) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        for (int j = 0; j < m->njoint; j++) {
            double* qj = q + m->jnt_qadr[j];
            if (m->jnt_type[j] == MN_JOINT_HINGE || m->jnt_type[j] == MN_JOINT_SLIDE) qj[0] = RND();
            if (m->jnt_type[j] == MN_JOINT_BALL || m->jnt_type[j] == MN_JOINT_FREE) {
                double* u = qj + (m->jnt_type[j] == MN_JOINT_FREE ? 3 : 0);
                double n2 = 0;
                for (int k = 0; k < 4; k++)
                    u[k] = RND() + (k == 0), n2 += u[k] * u[k];
                for (int k = 0; k < 4; k++)
                    u[k] /= sqrt(n2);
            }
        }
        memcpy(d->q, q, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d); /* the cached clip: the take itself, so that the error is the change's */
        memcpy(X, d->xf, sizeof(mn_xform) * (size_t)m->njoint);
        for (int j = 0; j < m->njoint; j++)
            for (int a = 0; a < 3; a++)
                for (int k = 0; k < 3; k++)
                    V[9 * j + 3 * a + k] = (&X[j].p.x)[k] + e.opt.shell * X[j].R.m[3 * k + a];
        int j = (int)((RND() + 0.5) * m->njoint) % m->njoint;
        if (m->jnt_type[j] == MN_JOINT_FIXED) continue;
        memcpy(qn, q, sizeof(double) * (size_t)m->nq);
        double* qj = qn + m->jnt_qadr[j];
        double s = 3e-3 * (RND() + 0.5);
        if (m->jnt_type[j] == MN_JOINT_FREE)
            for (int k = 0; k < 3; k++)
                qj[k] += s * RND();
        if (m->jnt_type[j] == MN_JOINT_HINGE || m->jnt_type[j] == MN_JOINT_SLIDE)
            qj[0] += s * RND();
        if (m->jnt_type[j] == MN_JOINT_BALL || m->jnt_type[j] == MN_JOINT_FREE) {
            double *u = qj + (m->jnt_type[j] == MN_JOINT_FREE ? 3 : 0), n2 = 0;
            for (int k = 0; k < 4; k++)
                u[k] += s * RND(), n2 += u[k] * u[k];
            for (int k = 0; k < 4; k++)
                u[k] /= sqrt(n2);
        }
        /* the chain of frames' largest squared error over the subtree */
        memcpy(d->q, qn, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        double worst = 0;
        for (int k = j; k < m->jnt_subtree_end[j]; k++)
            for (int a = 0; a < 3; a++) {
                double e2 = 0;
                for (int c = 0; c < 3; c++) {
                    double dc = (&d->xf[k].p.x)[c] + e.opt.shell * d->xf[k].R.m[3 * c + a] -
                                V[9 * k + 3 * a + c];
                    e2 += dc * dc;
                }
                worst = e2 > worst ? e2 : worst;
            }
        int exact = mn_clip_subtree_ok(&e, j, 0, qn, 1);
        int moved = mn_clip_subtree_ok_moved(&e, j, 0, qj);
        double t2 = e.opt.tol * e.opt.tol;
        CHECK(exact == (worst <= t2));
        CHECK(!moved || exact);
        if (worst <= t2 * (1 - 2e-6)) CHECK(moved);
        if (moved)
            ++*passed;
        else {
            ++*failed;
            /* the failing vertex is remembered, within the subtree */
            int v = vhint[j];
            CHECK(v >= 3 * j && v < 3 * m->jnt_subtree_end[j]);
            CHECK(!mn_clip_subtree_ok_moved(&e, j, 0, qj));
        }
    }
#undef RND
    free(vhint), free(X), free(V), free(qn), free(q);
    mn_data_destroy(d);
}

static void test_moved_check(void) {
    int passed = 0, failed = 0;
    mn_model* m = toy();
    moved_check_on(m, 11, &passed, &failed);
    mn_model_destroy(m);
    m = mn_stickman_model(NULL);
    moved_check_on(m, 12, &passed, &failed);
    mn_model_destroy(m);
    printf("moved check: %d changes passed, %d failed\n", passed, failed);
    CHECK(passed > 50 && failed > 50);
}

static void test_no_allocation(void) {
    mn_model* m = NULL;
    double* q = NULL;
    int n = 0;
    mn_clip* c = walk_clip(&m, &q, &n);
    CHECK(c != NULL);
    if (!c) return;
    double* s = malloc(sizeof(double) * (size_t)m->nq);
    long before = mn_alloc_count();
    for (int i = 0; i < 1000; i++)
        mn_clip_sample(c, (n - 1) * (i / 999.0), s);
    CHECK(mn_alloc_count() == before);
    free(s);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_cmu_walk_bound);
    RUN(test_cmu_3dsmax_bound);
    RUN(test_max_segment);
    RUN(test_two_vertices);
    RUN(test_stickman_bound);
    RUN(test_round_trip);
    RUN(test_malformed);
    RUN(test_bad_arguments);
    RUN(test_cursor);
    RUN(test_locks);
    RUN(test_moved_check);
    RUN(test_no_allocation);
    walk_free();
    return mn_test_report();
}
