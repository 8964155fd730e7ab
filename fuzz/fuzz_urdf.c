/* libFuzzer target for the URDF reader: any byte string must give MN_OK with a model whose
 * numbers are all finite, or a status with a message; never a crash, a leak or a hang. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mn_model* m = NULL;
    mn_warnings w = {0};
    mn_error err;
    mn_status s = mn_urdf_read_mem((const char*)data, size, "fuzz.urdf", &m, &w, &err);
    if (s == MN_OK) {
        for (int j = 0; j < m->njoint; j++)
            if (!mn_vec3_isfinite(m->jnt_offset[j]) || !mn_quat_isfinite(m->jnt_orient[j]) ||
                !mn_vec3_isfinite(m->jnt_axis[j]))
                abort();
        for (int k = 0; k < m->nq; k++)
            if (!isfinite(m->q0[k])) abort();
        mn_model_destroy(m);
    } else if (m != NULL || err.message[0] == 0) {
        abort();
    }
    return 0;
}
