/* libFuzzer target for the BVH reader: any input returns a status without crashing,
 * hanging or leaking, and what it accepts is a finite model and motion that the writer
 * takes back. Seed corpus: fuzz/corpus/fuzz_bvh/. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_warnings w = {0, ""};
    mn_error err;
    mn_status st = mn_bvh_read_mem((const char*)data, size, "fuzz.bvh", NULL, &m, &mo, &w, &err);
    if (st != MN_OK) {
        /* nothing escapes a failed read */
        if (m || mo.q || mo.nframes) abort();
        return 0;
    }
    if (!m || mo.nq != m->nq || !(mo.frame_time > 0 || mo.nframes == 0)) abort();
    for (int j = 0; j < m->njoint; j++)
        if (!mn_vec3_isfinite(m->jnt_offset[j])) abort();
    for (size_t i = 0; i < (size_t)mo.nframes * (size_t)mo.nq; i++)
        if (!isfinite(mo.q[i])) abort();
    /* Forward kinematics on the first and last frames stays finite. */
    mn_data* d = mn_data_create(m, 0);
    if (d && mo.nframes > 0 && m->nq > 0) {
        for (int k = 0; k < 2; k++) {
            const double* q = mo.q + (size_t)(k ? mo.nframes - 1 : 0) * (size_t)m->nq;
            for (int i = 0; i < m->nq; i++)
                d->q[i] = q[i];
            mn_fk(m, d);
            for (int j = 0; j < m->njoint; j++)
                if (!mn_vec3_isfinite(d->xf[j].p)) abort();
        }
    }
    mn_data_destroy(d);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return 0;
}
