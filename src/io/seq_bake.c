/* Baking a sequence: every frame sampled from the first key to the last, the active
 * constraints re-satisfied at each (Welman 6.4: the in-betweens keep the locks), as the
 * motion the BVH and glTF writers take. */
#include <marionette/layers.h>
#include <marionette/sequence.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

mn_seq_bake_options mn_seq_bake_default(void) {
    mn_seq_bake_options o;
    memset(&o, 0, sizeof o);
    o.step = 1;
    o.solve = mn_seq_solve_options_default();
    o.solve.solve.tol = 1e-5;
    o.solve.solve.tol_rot = 1e-5;
    return o;
}

/* Frames f0 + k step, k = 0..*nf-1, up to the last key: refused before any work when more
 * than the options allow or the motions (nq numbers a frame in all) would take too many bytes. */
static mn_status bake_frames(const mn_seq_bake_options* o, double f0, double f1, int nq, long* nf,
                             mn_error* err) {
    long max = o->max_frames > 0 && o->max_frames < MN_SEQ_BAKE_MAX_FRAMES ? o->max_frames
                                                                           : MN_SEQ_BAKE_MAX_FRAMES;
    /* up to the last key: a span that is not a whole number of steps gets one sample past
     * it, where the sequence holds the last key's pose (keys at fractional frames, a shrunk
     * range, would otherwise end the motion before its last key) */
    double span = ceil((f1 - f0) / o->step - 1e-9);
    /* refused before any work: a 105-byte document with keys 10 million frames apart would
     * take minutes and gigabytes */
    if (!(span >= 0) || span >= (double)max)
        return mn_error_set(
            err, MN_ERR_ARG, "", 0, "step",
            "%.0f frames from frame %.10g to %.10g, more than %ld: use a larger step", span + 1, f0,
            f1, max);
    double bytes = (span + 1) * (double)(nq ? nq : 1) * (double)sizeof(double);
    if (bytes > MN_SEQ_BAKE_MAX_BYTES)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "step",
                            "%.0f frames of %d numbers take %.0f MiB, more than %.0f: use a "
                            "larger step",
                            span + 1, nq, bytes / 1048576, MN_SEQ_BAKE_MAX_BYTES / 1048576);
    *nf = (long)span + 1;
    return MN_OK;
}

/* One frame solved (or sampled plain) into every figure's data, its result counted. */
static mn_status bake_one(const mn_seq* s, int n, mn_data* const* d, mn_seq_solver* v,
                          double* const* work, const mn_seq_bake_options* o, double t,
                          mn_seq_bake_result* r, mn_error* err) {
    if (o->plain) {
        for (int f = 0; f < n; f++) { /* several figures: each at its own warped frame */
            const mn_seq* sf = mn_seq_figure(s, f);
            mn_seq_sample_blend(sf, n > 1 ? mn_seq_warp(sf, t) : t, d[f]->q, work[f]);
        }
    } else {
        mn_csolve_result cr;
        mn_status st = mn_seq_solve_frame(v, t, &o->solve, &cr);
        if (cr.iterations > 0 || cr.rows > 0) r->constrained++;
        r->iters += cr.iterations;
        if (st != MN_OK) r->unmet++;
        if (!isfinite(cr.max_violation))
            return mn_error_set(err, MN_ERR_SINGULAR, "", 0, "constraints",
                                "frame %g: the constraints' violation is not finite (a "
                                "target out of reach of any number)",
                                t);
        if (cr.max_violation > r->max_violation) r->max_violation = cr.max_violation;
    }
    for (int f = 0; f < n; f++)
        for (int i = 0; i < d[f]->nq; i++)
            if (!isfinite(d[f]->q[i]))
                return mn_error_set(err, MN_ERR_SINGULAR, "", 0, "keys",
                                    "frame %g: the state is not finite (number %d%s)", t, i,
                                    n > 1 ? " of a figure" : "");
    return MN_OK;
}

/* The bake of n figures (models m, the sequences of s) into out[0..n-1]. */
static mn_status bake(const mn_seq* s, int n, const mn_model* const* m,
                      const mn_seq_bake_options* opt, mn_motion* out, mn_seq_bake_result* result,
                      mn_error* err) {
    mn_seq_bake_options o = opt ? *opt : mn_seq_bake_default();
    if (!(o.step > 0) || !isfinite(o.step))
        return mn_error_set(err, MN_ERR_ARG, "", 0, "step", "must be a positive number");
    /* output frames: the time warp's (layers.h), each solved at its sequence frame, so the
     * constraints hold in the sequence's own frames and a retimed bake keeps every lock;
     * several figures: the output frames they share, from the first of any to the last of
     * any, each figure sampled at its own warped frame (the constraints in output frames) */
    double f0 = n > 1 ? mn_seq_figures_start(s) : mn_seq_out_start(s);
    double f1 = n > 1 ? mn_seq_figures_end(s) : mn_seq_out_end(s);
    int nq = 0;
    for (int f = 0; f < n; f++)
        nq += m[f]->nq;
    long nf;
    mn_status bad = bake_frames(&o, f0, f1, nq, &nf, err);
    if (bad != MN_OK) return bad;
    mn_data* d[MN_SEQ_MAX_FIGURES] = {0};
    double* work[MN_SEQ_MAX_FIGURES] = {0};
    int ok = 1;
    for (int f = 0; f < n; f++) {
        out[f].nframes = (int)nf;
        out[f].nq = m[f]->nq;
        out[f].frame_time = o.step / mn_seq_fps(s);
        out[f].q = malloc(sizeof(double) * (size_t)nf * (size_t)(m[f]->nq ? m[f]->nq : 1));
        d[f] = mn_data_create(m[f], 0);
        int nwork = mn_seq_blend_work_size(mn_seq_figure(s, f));
        work[f] = nwork ? malloc(sizeof(double) * (size_t)nwork) : NULL;
        ok = ok && out[f].q && d[f] && (!nwork || work[f]);
    }
    mn_error e;
    mn_seq_solver* v = ok && !o.plain ? mn_seq_solver_create_figures(s, d, n, &e) : NULL;
    if (!ok)
        bad = mn_error_set(err, MN_ERR_NOMEM, "", 0, "",
                           "out of memory for %ld frames of %d numbers", nf, nq);
    else if (!o.plain && !v)
        bad = mn_error_set(err, e.status, e.file, e.line, e.field, "%s", e.message);
    mn_seq_bake_result r;
    memset(&r, 0, sizeof r);
    r.frames = nf;
    for (long k = 0; k < nf && bad == MN_OK; k++) {
        double t = n > 1 ? f0 + o.step * (double)k : mn_seq_warp(s, f0 + o.step * (double)k);
        if (o.cancel && *o.cancel) {
            bad = mn_error_set(err, MN_ERR_NOCONVERGE, "", 0, "", "cancelled at frame %g", t);
            break;
        }
        bad = bake_one(s, n, d, v, work, &o, t, &r, err);
        for (int f = 0; f < n && bad == MN_OK; f++)
            memcpy(out[f].q + (size_t)k * (size_t)m[f]->nq, d[f]->q,
                   sizeof(double) * (size_t)m[f]->nq);
    }
    mn_seq_solver_destroy(v);
    for (int f = 0; f < n; f++) {
        mn_data_destroy(d[f]);
        free(work[f]);
        if (bad != MN_OK) {
            free(out[f].q);
            memset(&out[f], 0, sizeof out[f]);
        }
    }
    if (result) *result = r;
    return bad;
}

mn_status mn_seq_bake(const mn_seq* s, const mn_model* m, const mn_seq_bake_options* opt,
                      mn_motion* out, mn_seq_bake_result* result, mn_error* err) {
    if (out) memset(out, 0, sizeof *out);
    if (result) memset(result, 0, sizeof *result);
    if (!s || !m || !out) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    if (mn_seq_figure_count(s) > 1)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "figures",
                            "a sequence of %d figures: mn_seq_bake_figures bakes a motion each",
                            mn_seq_figure_count(s));
    return bake(s, 1, &m, opt, out, result, err);
}

mn_status mn_seq_bake_figures(const mn_seq* s, const mn_seq_bake_options* opt, mn_motion* out,
                              mn_seq_bake_result* result, mn_error* err) {
    if (result) memset(result, 0, sizeof *result);
    if (!s || !out) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    int n = mn_seq_figure_count(s);
    memset(out, 0, sizeof *out * (size_t)n);
    const mn_model* m[MN_SEQ_MAX_FIGURES];
    for (int f = 0; f < n; f++)
        m[f] = mn_seq_model(mn_seq_figure(s, f));
    return bake(s, n, m, opt, out, result, err);
}
