/* libFuzzer target for the figure document reader: any byte string must give MN_OK with a
 * model whose numbers are all finite (and a motion of finite states), or a status with a
 * message; never a crash, a leak or a hang. A document that reads is written and read
 * back, which must succeed with the same joints. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    mn_status s = mn_figure_doc_read_mem((const char*)data, size, "fuzz.json", &m, &mo, &err);
    if (s != MN_OK) {
        if (m || mo.q || !err.message[0]) abort();
        return 0;
    }
    for (int j = 0; j < m->njoint; j++)
        if (!mn_vec3_isfinite(m->jnt_offset[j]) || !mn_quat_isfinite(m->jnt_orient[j]) ||
            !mn_vec3_isfinite(m->jnt_axis[j]) || !isfinite(m->jnt_mass[j]))
            abort();
    for (size_t k = 0; k < (size_t)mo.nframes * (size_t)mo.nq; k++)
        if (!isfinite(mo.q[k])) abort();
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_figure_doc_%d.json", (int)getpid());
    if (mn_figure_doc_write(path, m, &mo, NULL, &err) != MN_OK) abort();
    mn_model* b = NULL;
    if (mn_figure_doc_read(path, &b, NULL, &err) != MN_OK || b->njoint != m->njoint ||
        b->nq != m->nq)
        abort();
    unlink(path);
    mn_model_destroy(b);
    mn_model_destroy(m);
    mn_motion_free(&mo);
    return 0;
}
