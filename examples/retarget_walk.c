/* Retarget a BVH take onto the built-in stick figure with the IK clean-up, print the foot
 * skate next to a naive copy of joint angles, and write the result.
 *
 *   example_retarget_walk in.bvh out.bvh
 */
#include <marionette/io.h>
#include <marionette/retarget.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s in.bvh out.bvh\n", argv[0]);
        return 2;
    }
    mn_error err;
    mn_model* src = NULL;
    mn_motion take;
    if (mn_bvh_read(argv[1], NULL, &src, &take, NULL, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    mn_model* stick = mn_stickman_model(&err);
    /* joints paired by the built-in rig tables (NULL map), default options */
    mn_retarget* rt = mn_retarget_create(src, stick, NULL, NULL, &err);
    if (!rt || mn_retarget_set_take(rt, take.q, take.nframes, take.frame_time, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    size_t n = (size_t)take.nframes * (size_t)stick->nq;
    double* naive = malloc(n * sizeof(double));
    double* clean = malloc(n * sizeof(double));
    for (int f = 0; f < take.nframes; f++)
        mn_retarget_frame(rt, f, MN_RETARGET_NAIVE, naive + (size_t)f * stick->nq);
    for (int f = 0; f < take.nframes; f++)
        mn_retarget_frame(rt, f, MN_RETARGET_MAPPED, clean + (size_t)f * stick->nq);
    mn_retarget_metrics a, b;
    mn_retarget_measure(rt, naive, take.nframes, &a);
    mn_retarget_measure(rt, clean, take.nframes, &b);
    printf("%d contacts; foot skate per contact at most: naive %.1f mm, retargeted %.2f mm\n",
           b.contacts, a.skate_max_mm, b.skate_max_mm);
    printf("joint limit violations: naive %ld, retargeted %ld\n", a.limit_violations,
           b.limit_violations);
    mn_motion out = {take.nframes, stick->nq, take.frame_time, clean};
    int rc = mn_bvh_write(argv[2], stick, &out, &err) == MN_OK ? 0 : 1;
    if (rc) fprintf(stderr, "%s\n", err.message);
    free(naive);
    free(clean);
    mn_retarget_destroy(rt);
    mn_motion_free(&take);
    mn_model_destroy(src);
    mn_model_destroy(stick);
    return rc;
}
