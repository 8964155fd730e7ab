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

mn_status mn_seq_bake(const mn_seq* s, const mn_model* m, const mn_seq_bake_options* opt,
                      mn_motion* out, mn_seq_bake_result* result, mn_error* err) {
    if (out) memset(out, 0, sizeof *out);
    if (result) memset(result, 0, sizeof *result);
    if (!s || !m || !out) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    mn_seq_bake_options o = opt ? *opt : mn_seq_bake_default();
    if (!(o.step > 0) || !isfinite(o.step))
        return mn_error_set(err, MN_ERR_ARG, "", 0, "step", "must be a positive number");
    long max = o.max_frames > 0 && o.max_frames < MN_SEQ_BAKE_MAX_FRAMES ? o.max_frames
                                                                         : MN_SEQ_BAKE_MAX_FRAMES;
    /* output frames: the time warp's (layers.h), each solved at its sequence frame, so the
     * constraints hold in the sequence's own frames and a retimed bake keeps every lock */
    double f0 = mn_seq_out_start(s), f1 = mn_seq_out_end(s);
    /* up to the last key: a span that is not a whole number of steps gets one sample past
     * it, where the sequence holds the last key's pose (keys at fractional frames, a shrunk
     * range, would otherwise end the motion before its last key) */
    double span = ceil((f1 - f0) / o.step - 1e-9);
    /* refused before any work: a 105-byte document with keys 10 million frames apart would
     * take minutes and gigabytes */
    if (!(span >= 0) || span >= (double)max)
        return mn_error_set(
            err, MN_ERR_ARG, "", 0, "step",
            "%.0f frames from frame %.10g to %.10g, more than %ld: use a larger step", span + 1, f0,
            f1, max);
    double bytes = (span + 1) * (double)(m->nq ? m->nq : 1) * (double)sizeof(double);
    if (bytes > MN_SEQ_BAKE_MAX_BYTES)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "step",
                            "%.0f frames of %d numbers take %.0f MiB, more than %.0f: use a "
                            "larger step",
                            span + 1, m->nq, bytes / 1048576, MN_SEQ_BAKE_MAX_BYTES / 1048576);
    long nf = (long)span + 1;
    mn_motion mo;
    mo.nframes = (int)nf;
    mo.nq = m->nq;
    mo.frame_time = o.step / mn_seq_fps(s);
    mo.q = malloc(sizeof(double) * (size_t)nf * (size_t)(m->nq ? m->nq : 1));
    mn_data* d = mn_data_create(m, 0);
    int nwork = mn_seq_blend_work_size(s);
    double* work = nwork ? malloc(sizeof(double) * (size_t)nwork) : NULL;
    mn_error e;
    mn_seq_solver* v = d && !o.plain ? mn_seq_solver_create(s, d, &e) : NULL;
    if (!mo.q || !d || (!o.plain && !v) || (nwork && !work)) {
        int no_solver = !o.plain && d && !v;
        free(mo.q);
        free(work);
        mn_seq_solver_destroy(v);
        mn_data_destroy(d);
        if (no_solver) return mn_error_set(err, e.status, e.file, e.line, e.field, "%s", e.message);
        return mn_error_set(err, MN_ERR_NOMEM, "", 0, "",
                            "out of memory for %ld frames of %d numbers", nf, m->nq);
    }
    mn_seq_bake_result r;
    memset(&r, 0, sizeof r);
    r.frames = nf;
    mn_status bad = MN_OK;
    for (long f = 0; f < nf && bad == MN_OK; f++) {
        double t = mn_seq_warp(s, f0 + o.step * (double)f);
        if (o.cancel && *o.cancel) {
            bad = mn_error_set(err, MN_ERR_NOCONVERGE, "", 0, "", "cancelled at frame %g", t);
            break;
        }
        if (o.plain) {
            mn_seq_sample_blend(s, t, d->q, work);
        } else {
            mn_csolve_result cr;
            mn_status st = mn_seq_solve_frame(v, t, &o.solve, &cr);
            if (cr.iterations > 0 || cr.rows > 0) r.constrained++;
            r.iters += cr.iterations;
            if (st != MN_OK) r.unmet++;
            if (!isfinite(cr.max_violation))
                bad = mn_error_set(err, MN_ERR_SINGULAR, "", 0, "constraints",
                                   "frame %g: the constraints' violation is not finite (a "
                                   "target out of reach of any number)",
                                   t);
            else if (cr.max_violation > r.max_violation)
                r.max_violation = cr.max_violation;
        }
        for (int i = 0; i < m->nq && bad == MN_OK; i++)
            if (!isfinite(d->q[i]))
                bad = mn_error_set(err, MN_ERR_SINGULAR, "", 0, "keys",
                                   "frame %g: the state is not finite (number %d)", t, i);
        memcpy(mo.q + (size_t)f * (size_t)m->nq, d->q, sizeof(double) * (size_t)m->nq);
    }
    mn_seq_solver_destroy(v);
    mn_data_destroy(d);
    free(work);
    if (bad != MN_OK) {
        free(mo.q);
        if (result) *result = r;
        return bad;
    }
    *out = mo;
    if (result) *result = r;
    return MN_OK;
}
