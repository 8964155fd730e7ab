/* libFuzzer target for the OBJ reader: any input returns a status without crashing,
 * hanging or leaking; a failed read leaves the mesh empty, an accepted mesh has finite
 * positions and triangle indices in range. Seed corpus: fuzz/corpus/fuzz_obj/. */
#include <marionette/meshio.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mn_mesh m;
    mn_warnings w = {0, ""};
    mn_error err;
    mn_status st = mn_obj_read_mem((const char*)data, size, "fuzz.obj", &m, &w, &err);
    if (st != MN_OK) {
        if (m.pos || m.tris || m.nverts || m.ntris) abort();
        return 0;
    }
    if (m.nverts <= 0) abort();
    for (size_t i = 0; i < (size_t)m.nverts * 3; i++)
        if (!isfinite(m.pos[i])) abort();
    for (size_t i = 0; i < (size_t)m.ntris * 3; i++)
        if (m.tris[i] < 0 || m.tris[i] >= m.nverts) abort();
    mn_mesh_free(&m);
    return 0;
}
