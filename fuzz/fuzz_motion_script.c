/* libFuzzer target for motion scripts: any input returns a status without crashing, hanging
 * or leaking; a script that fails leaves the sequence as it was; one that applies solves a
 * few constrained frames of the stick figure without NaN in the state. Seed corpus:
 * fuzz/corpus/fuzz_motion_script/. */
#include <marionette/anim.h>
#include <marionette/io.h>
#include <marionette/sequence.h>

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
    mn_model* m = figure();
    if (!m) return 0;
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    mn_seq_set_key(s, 0, m->q0, NULL);
    mn_seq_set_key(s, 24, m->q0, NULL);
    mn_error err;
    mn_status st = mn_motion_script_apply_mem((const char*)data, size, "fuzz.ms", s, &err);
    if (st != MN_OK) {
        if (!err.message[0] || mn_seq_handle_count(s) || mn_seq_constraint_count(s)) abort();
    } else {
        mn_data* d = mn_data_create(m, 0);
        mn_seq_solver* v = mn_seq_solver_create(s, d, &err);
        if (v) {
            mn_seq_solve_options o = mn_seq_solve_options_default();
            o.solve.max_iters = 5;
            for (int f = 0; f < 3; f++) {
                mn_seq_solve_frame(v, 5.0 * f, &o, NULL);
                if (mn_q_check(m, d->q) != MN_OK) abort();
            }
            mn_seq_solver_destroy(v);
        }
        mn_data_destroy(d);
    }
    mn_seq_destroy(s);
    return 0;
}
