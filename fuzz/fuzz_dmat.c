/* libFuzzer target for libigl's text formats: the same bytes go to the DMAT (text and
 * binary), TGF and Tmat readers. Any input returns a status without crashing, hanging or
 * leaking; failed reads leave their outputs empty; accepted data is finite and in range.
 * Seed corpus: fuzz/corpus/fuzz_dmat/. */
#include <marionette/meshio.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const char* text = (const char*)data;
    mn_error err;
    mn_dmat d;
    if (mn_dmat_read_mem(text, size, "fuzz.DMAT", &d, &err) == MN_OK) {
        if (d.rows <= 0 || d.cols <= 0 || !d.data) abort();
        for (size_t i = 0; i < (size_t)d.rows * (size_t)d.cols; i++)
            if (!isfinite(d.data[i])) abort();
        mn_dmat_free(&d);
    } else if (d.data || d.rows || d.cols) {
        abort();
    }
    mn_tgf t;
    if (mn_tgf_read_mem(text, size, "fuzz.tgf", &t, &err) == MN_OK) {
        for (size_t i = 0; i < (size_t)t.nverts * 3; i++)
            if (!isfinite(t.pos[i])) abort();
        for (size_t i = 0; i < (size_t)t.nedges * 2; i++)
            if (t.edges[i] < 0 || t.edges[i] >= t.nverts) abort();
        mn_tgf_free(&t);
    } else if (t.pos || t.edges) {
        abort();
    }
    int nb = 0;
    mn_xform* xf = NULL;
    if (mn_tmat_read_mem(text, size, "fuzz.Tmat", &nb, &xf, &err) == MN_OK) {
        if (nb <= 0 || !xf) abort();
        for (int b = 0; b < nb; b++)
            if (!mn_vec3_isfinite(xf[b].p)) abort();
        free(xf);
    } else if (xf || nb) {
        abort();
    }
    return 0;
}
