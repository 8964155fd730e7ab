/* Read a BVH file, print where the joints are at one frame, and write it back out.
 *
 *   example_bvh_roundtrip in.bvh out.bvh [FRAME]
 */
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s in.bvh out.bvh [FRAME]\n", argv[0]);
        return 2;
    }
    mn_model* m = NULL;
    mn_motion motion;
    mn_warnings warn = {0};
    mn_error err;
    if (mn_bvh_read(argv[1], NULL, &m, &motion, &warn, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    if (warn.count) fprintf(stderr, "warning: %s\n", warn.first);
    int frame = argc > 3 ? atoi(argv[3]) : 0;
    if (frame < 0 || frame >= motion.nframes) frame = 0;
    mn_data* d = mn_data_create(m, 0);
    memcpy(d->q, motion.q + (size_t)frame * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    printf("%d joints, %d frames at %.1f Hz; frame %d:\n", m->njoint, motion.nframes,
           1.0 / motion.frame_time, frame);
    for (int j = 0; j < m->njoint; j++)
        printf("  %-20s %10.4f %10.4f %10.4f\n", m->jnt_name[j], d->xf[j].p.x, d->xf[j].p.y,
               d->xf[j].p.z);
    int rc = 0;
    if (mn_bvh_write(argv[2], m, &motion, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        rc = 1;
    }
    mn_data_destroy(d);
    mn_motion_free(&motion);
    mn_model_destroy(m);
    return rc;
}
