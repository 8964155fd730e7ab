/* libFuzzer target for compressed clips (clip.h): any block loads onto the stick figure or
 * is refused with a message, without crashing, hanging or leaking; a block that loads
 * samples to a finite state at any frame (every frame and half frame of the first 512, so
 * that every segment's predicted, Rice-coded values are decoded), and a playback cursor
 * going forward over them gives the same numbers. Seed corpus:
 * fuzz/corpus/fuzz_clip/stickman.mnc, a clip of the stick figure over 21 frames of three
 * keyed poses (one hinge made noisy, so it holds rest, sparse and dense tracks), compressed
 * with a tolerance of 1 mm in segments of at most 8 frames (three per dense track, so that
 * the later segments' records and first indices, coded from the previous segment's, are in
 * it). */
#include <marionette/anim.h>
#include <marionette/clip.h>
#include <marionette/io.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static mn_model* figure(void) {
    static mn_model* m = NULL; /* compiled once: the model is immutable */
    if (!m) m = mn_stickman_model(NULL);
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mn_model* m = figure();
    if (!m) return 0;
    mn_error err;
    mn_clip* c = mn_clip_load(m, data, size, &err);
    if (!c) {
        if (!err.message[0]) abort();
        return 0;
    }
    double q[256];
    if (m->nq > 256) abort();
    int n = mn_clip_frames(c);
    for (int i = -1; i <= 8; i++) {
        if (mn_clip_sample(c, (n - 1) * i / 7.0, q) != MN_OK) abort();
        for (int k = 0; k < m->nq; k++)
            if (!isfinite(q[k])) abort();
    }
    /* every frame and half frame of the first 512: each Rice code of their segments decoded
     * (a dense frame is decoded from its segment's start), across segment boundaries too */
    mn_clip_cursor* cur = mn_clip_cursor_create(c);
    double qc[256];
    for (int i = 0; i < 2 * n - 1 && i < 1024; i++) {
        if (mn_clip_sample(c, 0.5 * i, q) != MN_OK) abort();
        for (int k = 0; k < m->nq; k++)
            if (!isfinite(q[k])) abort();
        /* a playback cursor going forward gives the same numbers */
        if (cur && mn_clip_cursor_sample(cur, 0.5 * i, qc) != MN_OK) abort();
        for (int k = 0; cur && k < m->nq; k++)
            if (qc[k] != q[k]) abort();
    }
    mn_clip_cursor_destroy(cur);
    mn_clip_destroy(c);
    return 0;
}
