/* libFuzzer target for sequence documents: any input returns a status without crashing,
 * hanging or leaking; a document that reads (onto the stick figure) samples and solves a
 * few constrained frames without NaN in the state, and writes back to a text that reads
 * again, and bakes (plain, at most 2000 frames: a longer one is refused at once); the
 * document's own figure goes through the default reader, confined to a folder. Seed corpus:
 * fuzz/corpus/fuzz_sequence/, with the inputs that were slow (250 keys, 500 pins: seconds
 * each before the reader was made linear, over the 5 s a run of scripts/run_fuzz.sh allows
 * an input) and the 89-byte document of 10 million frames. A document of several figures
 * (docs/sequence.md "Several figures") reads through mn_seq_read_figures_mem and solves a few
 * frames of all its figures together. */
#include <marionette/anim.h>
#include <marionette/io.h>
#include <marionette/layers.h>
#include <marionette/sequence.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static mn_model* figure(void) {
    static mn_model* m = NULL; /* compiled once: the model is immutable */
    if (!m) m = mn_stickman_model(NULL);
    return m;
}

/* Several figures: read (any document; one of one figure reads as one figure), then a few
 * frames of every figure solved together, each state valid. */
static void several_figures(const uint8_t* data, size_t size) {
    mn_seq_figures f;
    mn_error err;
    mn_status st = mn_seq_read_figures_mem((const char*)data, size, "fuzz.json",
                                           "/nonexistent-fuzz-dir", NULL, &f, &err);
    if (st != MN_OK && (f.n || f.seq[0] || !err.message[0])) abort();
    if (st != MN_OK) return;
    if (f.n < 1 || f.n > MN_SEQ_MAX_FIGURES || mn_seq_figure_count(f.seq[0]) != f.n) abort();
    mn_data* d[MN_SEQ_MAX_FIGURES] = {0};
    int ok = 1;
    for (int i = 0; i < f.n; i++)
        ok = ok && (d[i] = mn_data_create(f.model[i], 0)) != NULL;
    /* written back (mn_seq_write_figures), it reads again with as many figures and keys */
    char* text = NULL;
    size_t len = 0;
    if (mn_seq_write_figures_mem(&f, &text, &len, &err) == MN_OK) {
        mn_seq_figures g;
        if (mn_seq_read_figures_mem(text, len, "again.json", "/nonexistent-fuzz-dir", NULL, &g,
                                    &err) != MN_OK ||
            g.n != f.n)
            abort();
        for (int i = 0; i < f.n; i++)
            if (mn_seq_key_count(g.seq[i]) != mn_seq_key_count(f.seq[i]) ||
                mn_seq_layer_count(g.seq[i]) != mn_seq_layer_count(f.seq[i]) ||
                mn_seq_warp_count(g.seq[i]) != mn_seq_warp_count(f.seq[i]))
                abort();
        mn_seq_figures_free(&g);
        free(text);
    } else if (f.n > 1) {
        abort(); /* what was read is written */
    }
    mn_seq_solver* v = ok ? mn_seq_solver_create_figures(f.seq[0], d, f.n, &err) : NULL;
    if (v) {
        mn_seq_solve_options o = mn_seq_solve_options_default();
        o.solve.max_iters = 5;
        double t0 = mn_seq_figures_start(f.seq[0]);
        for (int k = 0; k < 3; k++) {
            mn_seq_solve_frame(v, t0 + k, &o, NULL);
            for (int i = 0; i < f.n; i++)
                if (mn_q_check(f.model[i], d[i]->q) != MN_OK) abort();
        }
        mn_seq_solver_destroy(v);
    }
    for (int i = 0; i < f.n; i++)
        mn_data_destroy(d[i]);
    mn_seq_figures_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    /* a document of one figure reads through mn_seq_read_mem below: read once, not twice (the
     * slow seeds stay within the run's 5 s) */
    for (size_t i = 0; i + 7 <= size; i++)
        if (!memcmp(data + i, "figures", 7)) {
            several_figures(data, size);
            break;
        }
    mn_model* fig = figure();
    if (!fig) return 0;
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_error err;
    /* The document's own figure through the default (confined) reader, beneath a folder
     * that does not exist: "stickman" is built in, any other path is refused or not found,
     * and never read from anywhere else. */
    mn_status st = mn_seq_read_mem((const char*)data, size, "fuzz.json", "/nonexistent-fuzz-dir",
                                   NULL, NULL, &m, &s, NULL, &err);
    if (st != MN_OK && (s || m || !err.message[0])) abort();
    if (st == MN_OK && (!m || !s)) abort();
    mn_seq_destroy(s);
    mn_model_destroy(m);
    m = NULL;
    s = NULL;
    st = mn_seq_read_mem((const char*)data, size, "fuzz.json", NULL, NULL, fig, &m, &s, NULL, &err);
    if (st != MN_OK) {
        if (s || m || !err.message[0]) abort(); /* nothing escapes; always a message */
        return 0;
    }
    /* the given figure is used, or returned re-rooted at the document's "root" */
    if (m && mn_seq_model(s) != m) abort();
    mn_model* own = m; /* the figure re-rooted, when the document has a "root" */
    const mn_model* sm = own ? own : fig;
    m = NULL;
    mn_data* d = mn_data_create(sm, 0);
    double t0 = mn_seq_start(s), t1 = mn_seq_end(s);
    for (int i = 0; i <= 4; i++) {
        if (mn_seq_sample_data(s, d, t0 + (t1 - t0) * i / 4.0) != MN_OK ||
            mn_q_check(sm, d->q) != MN_OK)
            abort();
    }
    /* layers (layers.h): the blend is a valid state at any frame, also through the warp */
    double* work = malloc(sizeof(double) * ((size_t)mn_seq_blend_work_size(s) + 1));
    for (int i = 0; work && i <= 4; i++) {
        double f = mn_seq_warp(s, mn_seq_out_start(s) +
                                      (mn_seq_out_end(s) - mn_seq_out_start(s)) * i / 4.0);
        if (mn_seq_sample_blend(s, f, d->q, work) != MN_OK || mn_q_check(sm, d->q) != MN_OK)
            abort();
    }
    free(work);
    mn_seq_solver* v = mn_seq_solver_create(s, d, &err);
    if (v) {
        mn_seq_solve_options o = mn_seq_solve_options_default();
        o.solve.max_iters = 5;
        for (int i = 0; i < 3; i++) {
            mn_seq_solve_frame(v, t0 + i, &o, NULL);
            if (mn_q_check(sm, d->q) != MN_OK) abort();
        }
        mn_seq_solver_destroy(v);
    }
    char* text = NULL;
    size_t len = 0;
    if (mn_seq_write_mem(s, "stickman", 0, &text, &len, &err) == MN_OK) {
        mn_seq* s2 = NULL;
        if (mn_seq_read_mem(text, len, "again.json", NULL, NULL, sm, &m, &s2, NULL, &err) != MN_OK)
            abort();
        if (mn_seq_key_count(s2) != mn_seq_key_count(s)) abort();
        if (mn_seq_layer_count(s2) != mn_seq_layer_count(s)) abort();
        if (mn_seq_warp_count(s2) != mn_seq_warp_count(s)) abort();
        mn_seq_destroy(s2);
        free(text);
    }
    /* the contact tracks written back read the same */
    {
        static mn_seq_doc_info ci, ci2;
        mn_seq* s3 = NULL;
        if (mn_seq_read_mem((const char*)data, size, "fuzz.json", NULL, NULL, sm, &m, &s3, &ci,
                            &err) != MN_OK)
            abort();
        snprintf(ci.figure, sizeof ci.figure, "stickman");
        ci.scale = 0;
        if (mn_seq_write_doc_mem(s3, &ci, &text, &len, &err) != MN_OK) abort();
        mn_seq* s4 = NULL;
        if (mn_seq_read_mem(text, len, "again.json", NULL, NULL, sm, &m, &s4, &ci2, &err) !=
                MN_OK ||
            ci2.ncontact != ci.ncontact ||
            memcmp(ci2.contact, ci.contact, sizeof ci.contact[0] * (size_t)ci.ncontact))
            abort();
        free(text);
        mn_seq_destroy(s3);
        mn_seq_destroy(s4);
    }
    /* a plain bake of at most 2000 frames: a longer one is refused before any work (keys 10
     * million frames apart in a hundred bytes once baked for minutes), a shorter one is
     * finite throughout */
    mn_seq_bake_options bo = mn_seq_bake_default();
    bo.plain = 1;
    bo.max_frames = 2000;
    mn_motion mo;
    if (mn_seq_bake(s, sm, &bo, &mo, NULL, &err) == MN_OK) {
        if (mo.nframes < 1 || mo.nframes > 2000) abort();
        for (size_t i = 0; i < (size_t)mo.nframes * (size_t)mo.nq; i++)
            if (!isfinite(mo.q[i])) abort();
        mn_motion_free(&mo);
    } else if (mo.q || mo.nframes) {
        abort();
    }
    mn_data_destroy(d);
    mn_seq_destroy(s);
    mn_model_destroy(own);
    return 0;
}
