/* libFuzzer target for scene files: any input returns a status without crashing, hanging
 * or leaking; a scene that reads and binds to the stick figure solves a few frames without
 * ever putting NaN into the state. Seed corpus: fuzz/corpus/fuzz_scene/. */
#include <marionette/constrain.h>
#include <marionette/io.h>
#include <marionette/model.h>
#include <marionette/scene.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static mn_model* figure(void) {
    static mn_model* m = NULL; /* compiled once: the model is immutable */
    if (!m) m = mn_stickman_model(NULL);
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mn_scene* sc = NULL;
    mn_error err;
    mn_status st = mn_scene_read_mem((const char*)data, size, "fuzz.json", &sc, &err);
    if (st != MN_OK) {
        if (sc || !err.message[0]) abort(); /* nothing escapes; always a message */
        return 0;
    }
    mn_model* m = figure();
    mn_data* d = m ? mn_data_create(m, 0) : NULL;
    if (!d) {
        mn_scene_destroy(sc);
        return 0;
    }
    mn_csys* s = NULL;
    if (mn_scene_bind(sc, m, d, &s, &err) == MN_OK) {
        mn_csolve_options o = mn_csolve_default();
        int solver = mn_scene_solver(sc);
        if (solver >= 0) o.method = (mn_csolver)solver;
        o.max_iters = 5;
        int frames = mn_scene_frames(sc);
        for (int f = 0; f < frames && f < 3; f++) {
            mn_scene_apply_frame(sc, s, f);
            mn_csolve_result r;
            mn_csys_solve(s, &o, &r);
            if (mn_q_check(m, d->q) != MN_OK) abort();
        }
        mn_csys_destroy(s);
    } else if (s) {
        abort();
    }
    mn_data_destroy(d);
    mn_scene_destroy(sc);
    return 0;
}
