/* Keys from a sampled motion, every frame or reduced to a pose error (Welman 6.1.2: a
 * sequence is keys and in-betweens; a motion-capture take is a key at every frame, which
 * the editor can thin out). The reduction is greedy: the frame whose in-between is farthest
 * from the take (largest distance of any joint origin, after forward kinematics) becomes the
 * next key, until every frame is within the tolerance; then a pass drops the keys that later
 * keys made unnecessary. Whole-pose keys of a motion capture follow its jitter (about a
 * millimetre at 120 Hz, at different frames for different joints: docs/animation.md); a
 * reduction per channel is the compressed clip (clip_encode.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_internal.h"

/* Largest distance of a joint origin between two frame sets. */
static double pose_error(const mn_model* m, const mn_data* a, const mn_data* b) {
    double e = 0;
    for (int j = 0; j < m->njoint; j++) {
        double d = mn_vec3_dist(a->xf[j].p, b->xf[j].p);
        if (d > e) e = d;
    }
    return e;
}

mn_status mn_seq_add_motion(mn_seq* s, const double* q, int nframes, double first_frame, double tol,
                            int* nkeys, double* max_error, mn_error* err) {
    if (!s || !q || nframes < 1 || !isfinite(first_frame) || isnan(tol))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "motion",
                            "no sequence or motion, or a bad first frame");
    const mn_model* m = s->m;
    size_t nq = (size_t)m->nq;
    for (int f = 0; f < nframes; f++)
        if (mn_q_check(m, q + (size_t)f * nq) != MN_OK)
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "motion", "frame %d is not finite", f);
    /* keys in the range go first */
    for (int k = s->nkey - 1; k >= 0; k--)
        if (s->key_frame[k] >= first_frame && s->key_frame[k] <= first_frame + nframes - 1)
            mn_seq_drop_key(s, k);
    if (!mn_seq_reserve_keys(s, s->nkey + nframes))
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "motion", "out of memory");
    int added = 0;
    double worst = 0;
    if (tol <= 0 || nframes <= 2) {
        for (int f = 0; f < nframes; f++)
            mn_seq_put_key(s, first_frame + f, q + (size_t)f * nq, NULL);
        added = nframes;
        if (mn_seq_rebuild(s) != MN_OK)
            return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "motion", "out of memory");
    } else {
        mn_data* ref = mn_data_create(m, 0);
        mn_data* smp = mn_data_create(m, 0);
        char* is_key = calloc((size_t)nframes, 1);
        if (!ref || !smp || !is_key) {
            mn_data_destroy(ref), mn_data_destroy(smp), free(is_key);
            return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "motion", "out of memory");
        }
        mn_seq_put_key(s, first_frame, q, NULL);
        mn_seq_put_key(s, first_frame + nframes - 1, q + (size_t)(nframes - 1) * nq, NULL);
        is_key[0] = is_key[nframes - 1] = 1;
        added = 2;
        for (;;) {
            if (mn_seq_rebuild(s) != MN_OK) {
                mn_data_destroy(ref), mn_data_destroy(smp), free(is_key);
                return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "motion", "out of memory");
            }
            int at = -1;
            worst = 0;
            for (int f = 0; f < nframes; f++) {
                if (is_key[f]) continue;
                memcpy(ref->q, q + (size_t)f * nq, sizeof(double) * nq);
                mn_fk(m, ref);
                mn_seq_sample_data(s, smp, first_frame + f);
                double e = pose_error(m, ref, smp);
                if (e > worst) worst = e, at = f;
            }
            if (at < 0 || worst <= tol) break;
            mn_seq_put_key(s, first_frame + at, q + (size_t)at * nq, NULL);
            is_key[at] = 1;
            added++;
        }
        /* then every inner key, in frame order, is dropped when the frames from two keys
         * before it to two keys after it (the reach of a spline's tangents) stay within tol
         * without it: insertion puts keys where the error was worst at the time, and a later
         * key often makes an earlier one unnecessary */
        for (int f = 1; f < nframes - 1; f++) {
            if (!is_key[f]) continue;
            int k = mn_seq_find_key(s, first_frame + f);
            if (k < 0) continue;
            int k0 = k >= 2 ? k - 2 : 0, k1 = k + 2 < s->nkey ? k + 2 : s->nkey - 1;
            int f0 = (int)(s->key_frame[k0] - first_frame),
                f1 = (int)(s->key_frame[k1] - first_frame);
            mn_seq_drop_key(s, k);
            if (mn_seq_rebuild(s) != MN_OK) {
                mn_data_destroy(ref), mn_data_destroy(smp), free(is_key);
                return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "motion", "out of memory");
            }
            is_key[f] = 0;
            double e = 0;
            for (int g = f0; g <= f1 && e <= tol; g++) {
                if (g < 0 || g >= nframes || is_key[g]) continue;
                memcpy(ref->q, q + (size_t)g * nq, sizeof(double) * nq);
                mn_fk(m, ref);
                mn_seq_sample_data(s, smp, first_frame + g);
                e = fmax(e, pose_error(m, ref, smp));
            }
            if (e <= tol) {
                added--;
                continue;
            }
            mn_seq_put_key(s, first_frame + f, q + (size_t)f * nq, NULL);
            is_key[f] = 1;
        }
        if (mn_seq_rebuild(s) != MN_OK) {
            mn_data_destroy(ref), mn_data_destroy(smp), free(is_key);
            return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "motion", "out of memory");
        }
        /* the error left, over every frame */
        worst = 0;
        for (int f = 0; f < nframes; f++) {
            if (is_key[f]) continue;
            memcpy(ref->q, q + (size_t)f * nq, sizeof(double) * nq);
            mn_fk(m, ref);
            mn_seq_sample_data(s, smp, first_frame + f);
            worst = fmax(worst, pose_error(m, ref, smp));
        }
        mn_data_destroy(ref), mn_data_destroy(smp), free(is_key);
    }
    if (nkeys) *nkeys = added;
    if (max_error) *max_error = worst;
    return MN_OK;
}
