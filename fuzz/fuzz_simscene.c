/* libFuzzer target for soft-body scene documents (docs/softbody.md): any input returns a
 * status without crashing, hanging or leaking; a scene that reads steps a few frames
 * without ever putting NaN into the body. Meshes are read beneath the input's folder only
 * (untrusted), and the body is limited to 2,000 nodes. Seed corpus: fuzz/corpus/fuzz_simscene/. */
#include <marionette/simscene.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mn_sim* s = NULL;
    mn_error err;
    mn_sim_read_options o = mn_sim_read_default();
    o.max_nodes = 2000;
    mn_status st = mn_sim_read_mem((const char*)data, size, "fuzz/scene.json", &o, &s, NULL, &err);
    if (st != MN_OK) {
        if (s || !err.message[0]) abort(); /* nothing escapes; always a message */
        return 0;
    }
    for (int f = 1; f <= 3 && f <= s->frames; f++) {
        mn_coupled_result r;
        mn_sim_step(s, f, &r);
        for (int i = 0; i < 3 * s->body->nverts; i++)
            if (!isfinite(s->body->x[i])) abort(); /* a failed step restores its state */
    }
    mn_sim_destroy(s);
    return 0;
}
