/* Edit operations (Welman 6.1.2): copy, cut, paste, insert, delete, stretch, shrink and
 * slide. Each is checked for what it does, then undone and compared with the sequence
 * before it bit for bit, then redone and compared with the sequence after it. */
#include <marionette/anim.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

static mn_model* chain(void) {
    mn_spec* s = mn_spec_create("chain");
    mn_joint_def d = mn_joint_default();
    d.name = "root";
    d.type = MN_JOINT_FREE;
    mn_spec_add_joint(s, &d, NULL);
    d = mn_joint_default();
    d.name = "a";
    d.parent = 0;
    d.type = MN_JOINT_HINGE;
    d.offset = mn_v3(0, 1, 0);
    mn_spec_add_joint(s, &d, NULL);
    d.name = "b";
    d.parent = 1;
    d.type = MN_JOINT_BALL;
    mn_spec_add_joint(s, &d, NULL);
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

static void key_state(int k, double* q) {
    q[0] = 0.1 * k, q[1] = 1 + 0.01 * k, q[2] = -0.3 * k;
    mn_quat r = mn_quat_axis_angle(mn_v3(0, 1, 0), 0.1 * k);
    q[3] = r.w, q[4] = r.x, q[5] = r.y, q[6] = r.z;
    q[7] = 0.05 * k - 0.3;
    mn_quat b = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(1, k, 2)), 0.2 + 0.05 * k);
    q[8] = b.w, q[9] = b.x, q[10] = b.y, q[11] = b.z;
}

/* Keys at 0, 10, ..., 60 and one at 25.5. */
static mn_seq* make(const mn_model* m) {
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    double q[12];
    for (int k = 0; k < 7; k++) {
        key_state(k, q);
        mn_seq_set_key(s, 10 * k, q, NULL);
        mn_seq_set_key_tcb(s, mn_seq_find_key(s, 10 * k), 0.1 * k - 0.3, 0.05 * k, -0.1 * k);
    }
    key_state(9, q);
    mn_seq_set_key(s, 25.5, q, NULL);
    return s;
}

/* Are two sequences' keys identical, bit for bit? */
static int same(const mn_seq* a, const mn_seq* b) {
    int n = mn_seq_key_count(a), nq = mn_seq_model(a)->nq;
    if (n != mn_seq_key_count(b)) return 0;
    for (int k = 0; k < n; k++) {
        double fa = mn_seq_key_frame(a, k), fb = mn_seq_key_frame(b, k), ta[3], tb[3];
        if (memcmp(&fa, &fb, sizeof fa) != 0) return 0;
        if (memcmp(mn_seq_key_q(a, k), mn_seq_key_q(b, k), sizeof(double) * (size_t)nq) != 0)
            return 0;
        mn_seq_key_tcb(a, k, ta);
        mn_seq_key_tcb(b, k, tb);
        if (memcmp(ta, tb, sizeof ta) != 0) return 0;
    }
    return 1;
}

/* Sampling agrees too (the tables were rebuilt). */
static int same_samples(const mn_seq* a, const mn_seq* b) {
    double qa[12], qb[12];
    for (double f = -1; f < 90; f += 0.9) {
        mn_seq_sample(a, f, qa);
        mn_seq_sample(b, f, qb);
        if (memcmp(qa, qb, sizeof qa) != 0) return 0;
    }
    return 1;
}

/* Undo restores `before`, redo restores `after`. */
static void check_undo_redo(mn_seq* s, mn_seq_edit* e, const mn_seq* before) {
    mn_seq* after = mn_seq_clone(s);
    CHECK(mn_seq_undo(s, e) == MN_OK);
    CHECK(same(s, before));
    CHECK(same_samples(s, before));
    /* undoing twice is refused and changes nothing */
    CHECK(mn_seq_undo(s, e) == MN_ERR_ARG || e->added.n == 0);
    CHECK(same(s, before));
    mn_seq_edit_invert(e);
    CHECK(mn_seq_undo(s, e) == MN_OK);
    CHECK(same(s, after));
    CHECK(same_samples(s, after));
    mn_seq_destroy(after);
}

static const double* frames_of(const mn_seq* s, double* buf) {
    for (int k = 0; k < mn_seq_key_count(s); k++)
        buf[k] = mn_seq_key_frame(s, k);
    return buf;
}

static void test_copy_cut_paste(void) {
    mn_model* m = chain();
    mn_seq* s = make(m);
    mn_seq* before = mn_seq_clone(s);
    mn_keyset clip;
    CHECK(mn_seq_copy(s, 10, 30, &clip) == MN_OK);
    CHECK(clip.n == 3 && clip.span == 20 && clip.frame[0] == 0 && clip.frame[1] == 10 &&
          clip.frame[2] == 15.5);
    CHECK(memcmp(clip.q + 12, mn_seq_key_q(s, 2), sizeof(double) * 12) == 0);
    CHECK(same(s, before)); /* copy changes nothing */

    /* paste over 40..60: replaces the keys at 40 and 50, keeps 60 */
    mn_seq_edit e;
    CHECK(mn_seq_paste(s, &clip, 40, &e) == MN_OK);
    double f[16];
    frames_of(s, f);
    CHECK(mn_seq_key_count(s) == 9);
    CHECK(f[5] == 40 && f[6] == 50 && f[7] == 55.5 && f[8] == 60);
    CHECK(memcmp(mn_seq_key_q(s, 5), mn_seq_key_q(before, 1), sizeof(double) * 12) == 0);
    CHECK(e.removed.n == 2 && e.added.n == 3);
    check_undo_redo(s, &e, before);
    mn_seq_edit_free(&e);
    mn_seq_destroy(before);

    /* cut leaves a gap */
    before = mn_seq_clone(s);
    mn_keyset c2;
    CHECK(mn_seq_cut(s, 20, 41, &c2, &e) == MN_OK);
    CHECK(c2.n == 4 && c2.span == 21); /* 20, 25.5, 30, 40 */
    frames_of(s, f);
    CHECK(mn_seq_key_count(s) == 5 && f[1] == 10 && f[2] == 50);
    check_undo_redo(s, &e, before);
    mn_seq_edit_free(&e);
    mn_keyset_free(&c2);
    mn_keyset_free(&clip);
    mn_seq_destroy(before);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

static void test_insert_delete(void) {
    mn_model* m = chain();
    mn_seq* s = make(m);
    mn_seq* before = mn_seq_clone(s);
    mn_keyset clip;
    mn_seq_copy(s, 0, 12, &clip); /* keys 0 and 10, span 12 */
    mn_seq_edit e;
    CHECK(mn_seq_insert(s, &clip, 20, &e) == MN_OK);
    double f[16];
    frames_of(s, f);
    CHECK(mn_seq_key_count(s) == 10);
    CHECK(f[0] == 0 && f[1] == 10 && f[2] == 20 && f[3] == 30 && f[4] == 32 && f[5] == 37.5 &&
          f[9] == 72);
    CHECK(memcmp(mn_seq_key_q(s, 4), mn_seq_key_q(before, 2), sizeof(double) * 12) ==
          0); /* old 20 now at 32 */
    check_undo_redo(s, &e, before);
    mn_seq_edit_free(&e);
    mn_seq_destroy(before);

    before = mn_seq_clone(s);
    CHECK(mn_seq_delete(s, 30, 45, &e) ==
          MN_OK); /* keys at 30, 32, 37.5, 42 go; later ones move 15 earlier */
    frames_of(s, f);
    CHECK(mn_seq_key_count(s) == 6);
    CHECK(f[2] == 20 && f[3] == 37 && f[4] == 47 && f[5] == 57);
    check_undo_redo(s, &e, before);
    mn_seq_edit_free(&e);
    mn_keyset_free(&clip);
    mn_seq_destroy(before);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

static void test_stretch_shrink_slide(void) {
    mn_model* m = chain();
    mn_seq* s = make(m);
    mn_seq* before = mn_seq_clone(s);
    mn_seq_edit e;
    /* stretch 10..30 by 1.7: 10 stays, 20 -> 27, 25.5 -> 36.35, later keys + 14 */
    CHECK(mn_seq_stretch(s, 10, 30, 1.7, &e) == MN_OK);
    double f[16];
    frames_of(s, f);
    CHECK(f[1] == 10 && f[2] == 10 + 1.7 * 10 && f[3] == 10 + 1.7 * 15.5 && f[4] == 30 + 0.7 * 20 &&
          f[7] == 60 + 0.7 * 20);
    check_undo_redo(s, &e, before);
    mn_seq_edit_free(&e);
    mn_seq_destroy(before);

    /* shrink a range of awkward fractions, several times over: undo is still exact */
    before = mn_seq_clone(s);
    mn_seq_edit e1, e2;
    CHECK(mn_seq_stretch(s, 3.3, 47.1, 1.0 / 3.0, &e1) == MN_OK);
    CHECK(mn_seq_stretch(s, 0, 100, 0.7, &e2) == MN_OK);
    CHECK(mn_seq_key_frame(s, mn_seq_key_count(s) - 1) < 60);
    CHECK(mn_seq_undo(s, &e2) == MN_OK);
    CHECK(mn_seq_undo(s, &e1) == MN_OK);
    CHECK(same(s, before));
    mn_seq_edit_free(&e1);
    mn_seq_edit_free(&e2);
    mn_seq_destroy(before);
    mn_seq_destroy(s);
    s = make(m);

    /* slide 20..30 by 25: keys 20 and 25.5 land at 45 and 50.5, the key at 50 is replaced */
    before = mn_seq_clone(s);
    CHECK(mn_seq_slide(s, 20, 30, 25, &e) == MN_OK);
    frames_of(s, f);
    CHECK(mn_seq_key_count(s) == 7);
    CHECK(f[2] == 30 && f[3] == 40 && f[4] == 45 && f[5] == 50.5 && f[6] == 60);
    CHECK(memcmp(mn_seq_key_q(s, 4), mn_seq_key_q(before, 2), sizeof(double) * 12) == 0);
    check_undo_redo(s, &e, before);
    mn_seq_edit_free(&e);
    mn_seq_destroy(before);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

static void test_undo_checks_state(void) {
    mn_model* m = chain();
    mn_seq* s = make(m);
    mn_seq_edit e1, e2;
    CHECK(mn_seq_slide(s, 0, 15, 2, &e1) == MN_OK);
    CHECK(mn_seq_stretch(s, 20, 40, 2, &e2) == MN_OK);
    mn_seq* now = mn_seq_clone(s);
    /* e2 did not touch what e1 added (2 and 12 lie before 20): e1 can be undone first */
    CHECK(mn_seq_undo(s, &e1) == MN_OK);
    CHECK(mn_seq_undo(s, &e1) == MN_ERR_ARG);
    /* a key edited after the edit: its undo is refused, nothing changes */
    mn_seq_edit_invert(&e1);
    CHECK(mn_seq_undo(s, &e1) == MN_OK);
    CHECK(same(s, now));
    double q[12];
    key_state(3, q);
    q[0] += 1;
    mn_seq_set_key(s, 2, q, NULL);
    mn_seq* edited = mn_seq_clone(s);
    mn_seq_edit_invert(&e1);
    CHECK(mn_seq_undo(s, &e1) == MN_ERR_ARG);
    CHECK(same(s, edited));
    /* bad arguments */
    mn_keyset clip;
    CHECK(mn_seq_copy(s, 5, 5, &clip) == MN_ERR_ARG);
    CHECK(mn_seq_stretch(s, 0, 10, 0, NULL) == MN_ERR_ARG);
    CHECK(mn_seq_stretch(s, 0, 10, NAN, NULL) == MN_ERR_ARG);
    CHECK(mn_seq_slide(s, 0, 10, INFINITY, NULL) == MN_ERR_ARG);
    CHECK(same(s, edited));
    mn_seq_edit_free(&e1);
    mn_seq_edit_free(&e2);
    mn_seq_destroy(now);
    mn_seq_destroy(edited);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_copy_cut_paste);
    RUN(test_insert_delete);
    RUN(test_stretch_shrink_slide);
    RUN(test_undo_checks_state);
    return mn_test_report();
}
