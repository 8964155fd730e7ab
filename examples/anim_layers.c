/* Layers over a sequence (layers.h): the built-in stick figure stands still (two keys of the
 * rest pose) while an additive layer, masked to the right arm and faded in over 20 frames,
 * waves its forearm, and an override layer at half weight turns the head. Prints the elbow and
 * the head's first hinge as the blend gives them, then the same through a time warp that eases
 * in, holds and speeds up.
 *
 *   example_anim_layers
 */
#include <marionette/io.h>
#include <marionette/layers.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    if (!m) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    size_t nq = (size_t)m->nq;
    int elbow = m->jnt_qadr[mn_model_find_joint(m, "right elbow")];
    int head = m->jnt_qadr[mn_model_find_joint(m, "head.1")];
    mn_seq* s = mn_seq_create(m, NULL, &err);
    double* q = malloc(sizeof(double) * nq);
    memcpy(q, m->q0, sizeof(double) * nq);
    mn_seq_set_key(s, 0, q, NULL);
    mn_seq_set_key(s, 40, q, NULL);

    /* the wave: the elbow bent and straightened every 10 frames, over the rest */
    int wave = mn_seq_add_layer(s, "wave", MN_LAYER_ADDITIVE, &err);
    for (int k = 0; k <= 4; k++) {
        q[elbow] = k % 2 ? -1.2 : -0.3;
        mn_seq_set_key(mn_seq_layer(s, wave), 10 * k, q, NULL);
    }
    double wf[2] = {0, 20}, wv[2] = {0, 1};
    mn_seq_set_layer_weights(s, wave, 2, wf, wv, NULL);
    double* mask = calloc((size_t)m->njoint, sizeof(double));
    int arm = mn_model_find_joint(m, "right arm.1");
    for (int j = arm; j < m->jnt_subtree_end[arm]; j++)
        mask[j] = 1; /* the right arm and everything below it */
    mn_seq_set_layer_mask(s, wave, mask, NULL);

    /* the look: the head turned, at half weight */
    memcpy(q, m->q0, sizeof(double) * nq);
    q[head] = 0.6;
    int look = mn_seq_add_layer(s, "look", MN_LAYER_OVERRIDE, &err);
    mn_seq_set_key(mn_seq_layer(s, look), 0, q, NULL);
    double lf[1] = {0}, lw[1] = {0.5};
    mn_seq_set_layer_weights(s, look, 1, lf, lw, NULL);
    memset(mask, 0, sizeof(double) * (size_t)m->njoint);
    int neck = mn_model_find_joint(m, "head.1");
    for (int j = neck; j < m->jnt_subtree_end[neck]; j++)
        mask[j] = 1; /* the head only: without a mask an override layer takes every joint */
    mn_seq_set_layer_mask(s, look, mask, NULL);

    double* work = malloc(sizeof(double) * (size_t)mn_seq_blend_work_size(s));
    printf("frame  elbow   head.1\n");
    for (int f = 0; f <= 40; f += 5) {
        mn_seq_sample_blend(s, f, q, work);
        printf("%5d  %6.3f  %6.3f\n", f, q[elbow], q[head]);
    }
    /* retimed: eased in to frame 20 by output frame 30, held 10 frames, then twice as fast */
    double t4[4] = {0, 30, 40, 50}, s4[4] = {0, 20, 20, 40}, v4[4] = {0, 0, 0, 2};
    if (mn_seq_set_warp(s, 4, t4, s4, v4, &err) != MN_OK) fprintf(stderr, "%s\n", err.message);
    printf("output frame -> sequence frame, elbow\n");
    for (int f = 0; f <= 50; f += 10) {
        double sf = mn_seq_warp(s, f);
        mn_seq_sample_blend(s, sf, q, work);
        printf("%5d -> %6.2f  %6.3f\n", f, sf, q[elbow]);
    }
    free(work), free(mask), free(q);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    return 0;
}
