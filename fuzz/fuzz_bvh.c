/* libFuzzer target for the BVH reader and writer: any input returns a status without
 * crashing, hanging or leaking, and what it accepts is a finite model and motion that the
 * writer (mn_bvh_write_mem) takes back, into a text that reads again. Seed corpus:
 * fuzz/corpus/fuzz_bvh/. */
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
    /* The writer (in memory) takes it back or refuses it by its arguments (a name BVH cannot
     * hold, a value beyond the reader's range), and what it writes reads again. */
    char* text = NULL;
    size_t len = 0;
    st = mn_bvh_write_mem(m, &mo, NULL, &text, &len, &err);
    if (st != MN_OK && st != MN_ERR_ARG && st != MN_ERR_NOMEM) abort();
    if (st == MN_OK) {
        mn_model* m2 = NULL;
        mn_motion mo2;
        if (mn_bvh_read_mem(text, len, "fuzz.bvh", NULL, &m2, &mo2, NULL, &err) != MN_OK) abort();
        if (m2->nq != m->nq || mo2.nframes != mo.nframes) abort();
        mn_motion_free(&mo2);
        mn_model_destroy(m2);
    }
    free(text);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    return 0;
}
