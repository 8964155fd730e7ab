/* libFuzzer target for the skeleton text reader: any byte string must give MN_OK with a
 * model whose numbers are all finite, or a status with a message; never a crash, a leak
 * or a hang. A model that reads is also written and read back, which must succeed, and
 * written in the file's own layout (mn_skel_write_layout), which must read back too. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static void check_finite(const mn_model* m) {
    for (int j = 0; j < m->njoint; j++)
        if (!mn_vec3_isfinite(m->jnt_offset[j]) || !mn_quat_isfinite(m->jnt_orient[j]) ||
            !mn_vec3_isfinite(m->jnt_axis[j]) || !mn_vec3_isfinite(m->jnt_com[j]) ||
            !isfinite(m->jnt_mass[j]))
            abort();
    for (int k = 0; k < m->nq; k++)
        if (!isfinite(m->q0[k])) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mn_model* m = NULL;
    mn_warnings w = {0};
    mn_error err;
    mn_status s = mn_skel_read_mem((const char*)data, size, "fuzz.skel", &m, &w, &err);
    if (s != MN_OK) {
        if (m != NULL || err.message[0] == 0) abort();
        return 0;
    }
    check_finite(m);
    /* the writer's output must read back */
    char path[512];
    const char* dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/fuzz_skel_%ld.skel", dir && dir[0] ? dir : "/tmp",
             (long)getpid());
    if (mn_skel_write(path, m, &err) == MN_OK) {
        mn_model* r = NULL;
        if (mn_skel_read(path, &r, NULL, &err) != MN_OK || r->njoint != m->njoint) abort();
        check_finite(r);
        mn_model_destroy(r);
        unlink(path);
    }
    mn_model_destroy(m);
    /* read with its layout, written back in it: a text that reads back to the same figure,
     * and the very same bytes when written again from that text */
    mn_skel_layout* l = NULL;
    if (mn_skel_read_layout_mem((const char*)data, size, "fuzz.skel", &m, &l, NULL, &err) != MN_OK)
        abort();
    char* text = NULL;
    size_t n = 0;
    if (mn_skel_write_layout_mem(m, l, &text, &n, &err) == MN_OK) {
        mn_model* r = NULL;
        if (mn_skel_read_mem(text, n, "layout.skel", &r, NULL, &err) != MN_OK ||
            r->njoint != m->njoint || r->nq != m->nq)
            abort();
        mn_model_destroy(r);
    }
    free(text);
    mn_skel_layout_free(l);
    mn_model_destroy(m);
    return 0;
}
