/* libFuzzer target for scene files: any input returns a status without crashing, hanging
 * or leaking; a scene that reads and binds to the stick figure (one per entry of its
 * "figures") solves a few frames without ever putting NaN into a state. Seed corpus:
 * fuzz/corpus/fuzz_scene/. */
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
    /* a scene with "figures": that many stick figures, each re-rooted where it asks is not
     * done here (the model is shared), but its root joint is looked up */
    int nf = mn_scene_figure_count(sc);
    mn_data* ds[8] = {0};
    mn_figure figs[8];
    for (int i = 0; i < (nf > 0 ? nf : 1) && m; i++) {
        ds[i] = mn_data_create(m, 0);
        figs[i].model = m, figs[i].data = ds[i];
        int j;
        if (nf > 0 && mn_scene_root_joint(sc, i, m, &j, &err) != MN_OK && !err.message[0]) abort();
    }
    mn_data* d = ds[0];
    if (!d) {
        for (int i = 0; i < 8; i++)
            mn_data_destroy(ds[i]);
        mn_scene_destroy(sc);
        return 0;
    }
    mn_csys* s = NULL;
    if (mn_scene_bind_figures(sc, figs, nf > 0 ? nf : 1, &s, &err) == MN_OK) {
        mn_csolve_options o = mn_csolve_default();
        int solver = mn_scene_solver(sc);
        if (solver >= 0) o.method = (mn_csolver)solver;
        o.max_iters = 5;
        int frames = mn_scene_frames(sc);
        for (int f = 0; f < frames && f < 3; f++) {
            mn_scene_apply_frame(sc, s, f);
            mn_csolve_result r;
            mn_csys_solve(s, &o, &r);
            for (int i = 0; i < (nf > 0 ? nf : 1); i++)
                if (mn_q_check(m, ds[i]->q) != MN_OK) abort();
        }
        mn_csys_destroy(s);
    } else if (s) {
        abort();
    }
    for (int i = 0; i < 8; i++)
        mn_data_destroy(ds[i]);
    mn_scene_destroy(sc);
    return 0;
}
