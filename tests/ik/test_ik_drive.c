/* The one iteration driver (mn_ik_drive, src/ik/ik_common.h) on a scripted method: what
 * ends an attempt (a stationary point, the stall test, the per-attempt budget), the way out
 * (the escape of Welman Fig. 4.2, then a seeded restart, then the polish), how the moves
 * are counted and bounded, the statuses, and the best state kept. */
#include <math.h>
#include <string.h>

#include "ik/ik_common.h"
#include "test.h"

/* A method whose merit follows a script: each iteration multiplies it by factor (or sets
 * it to 0, the goal met, at iteration met_after) and reports step; an escape adds
 * escape_inc; the k-th restart sets it to restart_to + k restart_inc. The position error
 * is sqrt(merit), met within tol_pos 1e-6 (merit <= 1e-12). */
typedef struct mock {
    double merit, saved;
    double factor;
    int step, met_after;
    double escape_inc, restart_to, restart_inc;
    int may;
    int iters, saves, restores, escapes, restarts;
    uint64_t first_draw;
} mock;

static int mk_iterate(void* v) {
    mock* m = v;
    m->iters++;
    if (m->met_after && m->iters == m->met_after)
        m->merit = 0;
    else
        m->merit *= m->factor;
    return m->step;
}

static double mk_measure(void* v, double* pe, double* re) {
    mock* m = v;
    *pe = sqrt(m->merit);
    *re = 0;
    return m->merit;
}

static void mk_save(void* v) {
    mock* m = v;
    m->saved = m->merit;
    m->saves++;
}

static void mk_restore(void* v) {
    mock* m = v;
    m->merit = m->saved;
    m->restores++;
}

static void mk_escape(void* v) {
    mock* m = v;
    m->escapes++;
    m->merit += m->escape_inc;
}

static int mk_may_escape(void* v) {
    mock* m = v;
    return m->may;
}

static void mk_restart(void* v, mn_rng* rng) {
    mock* m = v;
    m->restarts++;
    if (m->restarts == 1) m->first_draw = mn_rng_next(rng);
    m->merit = m->restart_to + m->restarts * m->restart_inc;
}

static mock mk_new(double merit, double factor, int step) {
    mock m;
    memset(&m, 0, sizeof m);
    m.merit = merit;
    m.factor = factor;
    m.step = step;
    m.may = 1;
    return m;
}

/* moves: 0 none, 1 the escape, 2 the restart */
static mn_ik_loop mk_loop(mock* m, int moves) {
    mn_ik_loop L;
    memset(&L, 0, sizeof L);
    L.ctx = m;
    L.iterate = mk_iterate;
    L.measure = mk_measure;
    L.save = mk_save;
    L.restore = mk_restore;
    if (moves == 1) {
        L.escape = mk_escape;
        L.may_escape = mk_may_escape;
    }
    if (moves == 2) L.restart = mk_restart;
    L.use_pos = 1;
    L.cheap = 1;
    return L;
}

static mn_ik_options mk_options(int max_iters, int max_restarts) {
    mn_ik_options o = mn_ik_default();
    o.tol_pos = 1e-6;
    o.max_iters = max_iters;
    o.max_restarts = max_restarts;
    return o;
}

static mn_status drive(mock* m, int moves, const mn_ik_options* o, mn_ik_result* r) {
    mn_ik_loop L = mk_loop(m, moves);
    memset(r, 0, sizeof *r);
    return mn_ik_drive(&L, o, r, "mock");
}

/* A rejected step (MN_IK_ONGOING, the merit unchanged) is no stationary point; the same
 * iteration reported as a step (MN_IK_MOVED) is one. */
static void test_ongoing_is_not_stationary(void) {
    mn_ik_options o = mk_options(100, 10);
    mn_ik_result r;
    mock m = mk_new(1.0, 1.0, MN_IK_ONGOING);
    m.met_after = 6;
    CHECK(drive(&m, 0, &o, &r) == MN_OK);
    CHECK(r.iterations == 6 && r.restarts == 0 && r.message[0] == 0);
    CHECK(r.pos_err == 0);

    m = mk_new(1.0, 1.0, MN_IK_MOVED);
    m.met_after = 6;
    CHECK(drive(&m, 0, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK(r.iterations == 1);
    CHECK(strstr(r.message, "mock: target: unreachable") == r.message);

    /* A step that lowers the merit by less than 1e-10 of it is stationary too. */
    m = mk_new(1.0, 1.0 - 1e-12, MN_IK_MOVED);
    CHECK(drive(&m, 0, &o, &r) == MN_ERR_UNREACHABLE && r.iterations == 1);
    m = mk_new(1.0, 1.0 - 1e-6, MN_IK_MOVED);
    o.max_iters = 50;
    CHECK(drive(&m, 0, &o, &r) == MN_ERR_NOCONVERGE && r.iterations == 50);

    /* Never stationary and never met: the iteration budget. */
    m = mk_new(1.0, 1.0, MN_IK_ONGOING);
    o.max_iters = 17;
    CHECK(drive(&m, 0, &o, &r) == MN_ERR_NOCONVERGE);
    CHECK(r.iterations == 17 && r.restarts == 0);
    CHECK(strstr(r.message, "iteration budget") != NULL);
}

/* The escape: at most MN_IK_MAX_ESCAPES times and o->max_restarts, never from a residual
 * an earlier escape left, never when the method says the chain cannot get out; counted in
 * r->restarts; the best state comes back. */
static void test_escape(void) {
    mn_ik_options o = mk_options(100, 10);
    mn_ik_result r;
    /* Every escape leaves the same residual: the second stationary point ends the solve. */
    mock m = mk_new(1.0, 1.0, MN_IK_STUCK);
    CHECK(drive(&m, 1, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK(m.escapes == 1 && r.restarts == 1 && r.iterations == 2);

    /* A new (worse) residual each time: four escapes, then the best state, merit 1. */
    m = mk_new(1.0, 1.0, MN_IK_STUCK);
    m.escape_inc = 1.0;
    CHECK(drive(&m, 1, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK(m.escapes == MN_IK_MAX_ESCAPES && r.restarts == MN_IK_MAX_ESCAPES);
    CHECK(r.iterations == MN_IK_MAX_ESCAPES + 1);
    CHECK(m.restores >= 1 && m.merit == 1.0 && r.pos_err == 1.0);

    /* Bounded by max_restarts; none with 0; none when the chain cannot get out. */
    m = mk_new(1.0, 1.0, MN_IK_STUCK);
    m.escape_inc = 1.0;
    o.max_restarts = 2;
    CHECK(drive(&m, 1, &o, &r) == MN_ERR_UNREACHABLE && m.escapes == 2 && r.restarts == 2);
    m = mk_new(1.0, 1.0, MN_IK_STUCK);
    o.max_restarts = 0;
    CHECK(drive(&m, 1, &o, &r) == MN_ERR_UNREACHABLE && m.escapes == 0 && r.iterations == 1);
    m = mk_new(1.0, 1.0, MN_IK_STUCK);
    m.may = 0;
    o.max_restarts = 10;
    CHECK(drive(&m, 1, &o, &r) == MN_ERR_UNREACHABLE && m.escapes == 0 && r.restarts == 0);

    /* The escape is for stationary points only: a method without restarts that keeps
     * making progress runs out of iterations without one. */
    m = mk_new(1.0, 0.99, MN_IK_MOVED);
    o.max_iters = 30;
    CHECK(drive(&m, 1, &o, &r) == MN_ERR_NOCONVERGE && m.escapes == 0 && r.iterations == 30);
}

/* A method that restarts: an attempt without 20% progress in MN_IK_STALL_ITERS iterations
 * is replaced by a restart; with the restarts spent, the best state is polished (no stall
 * test, a fresh iteration budget) and the solve is UNREACHABLE. */
static void test_restart_on_stall(void) {
    mn_ik_options o = mk_options(20, 3);
    mn_ik_result r;
    mock m = mk_new(1.0, 0.99, MN_IK_ONGOING);
    m.restart_to = 2.0;
    m.restart_inc = 1.0; /* attempts start at 3, 4, 5: the first one's end is the best */
    CHECK(drive(&m, 2, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK(m.restarts == 3 && r.restarts == 3);
    CHECK(r.iterations == 4 * MN_IK_STALL_ITERS + 20);
    CHECK(m.restores == 1); /* the polish starts from the best state */
    CHECK_NEAR(r.pos_err, sqrt(pow(0.99, MN_IK_STALL_ITERS + 20)), 1e-12);
    CHECK(strstr(r.message, "3 restarts") != NULL);

    /* No restarts allowed: the one attempt stalls, then the polish. */
    o.max_restarts = 0;
    m = mk_new(1.0, 0.99, MN_IK_ONGOING);
    CHECK(drive(&m, 2, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK(m.restarts == 0 && r.iterations == MN_IK_STALL_ITERS + 20);

    /* Progress is never a stall: 0.05^10 < 1e-12 meets the goal at the 10th iteration. */
    o.max_restarts = 3;
    m = mk_new(1.0, 0.05, MN_IK_ONGOING);
    CHECK(drive(&m, 2, &o, &r) == MN_OK && m.restarts == 0 && r.iterations == 10);

    /* A restart that lands on the goal ends the solve. */
    m = mk_new(1.0, 0.99, MN_IK_ONGOING);
    m.restart_to = 0;
    CHECK(drive(&m, 2, &o, &r) == MN_OK);
    CHECK(r.restarts == 1 && r.iterations == MN_IK_STALL_ITERS && r.pos_err == 0);
}

/* The iteration budget is per attempt: running out restarts, as a stall does. Without
 * restarts it is NOCONVERGE. */
static void test_budget_per_attempt(void) {
    mn_ik_options o = mk_options(5, 2);
    mn_ik_result r;
    mock m = mk_new(1.0, 0.5, MN_IK_ONGOING);
    m.restart_to = 1.0;
    m.restart_inc = 1.0;
    CHECK(drive(&m, 2, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK(r.restarts == 2 && r.iterations == 3 * 5 + 5);
    CHECK_NEAR(r.pos_err, sqrt(pow(0.5, 10)), 1e-15); /* the first attempt's end, polished */

    m = mk_new(1.0, 0.5, MN_IK_ONGOING);
    CHECK(drive(&m, 0, &o, &r) == MN_ERR_NOCONVERGE && r.iterations == 5);
}

/* The lowest residual coming back from max(MN_IK_SAME_MINIMA, max_restarts / 4) attempts
 * means the goal is out of reach, before the restarts are spent. */
static void test_same_minimum(void) {
    mn_ik_result r;
    for (int k = 0; k < 2; k++) {
        int max_restarts = k == 0 ? 20 : 100;
        int needed = max_restarts / 4 > MN_IK_SAME_MINIMA ? max_restarts / 4 : MN_IK_SAME_MINIMA;
        mn_ik_options o = mk_options(20, max_restarts);
        mock m = mk_new(1.0, 0.99, MN_IK_ONGOING);
        m.restart_to = 1.0; /* every attempt ends where the first did */
        CHECK(drive(&m, 2, &o, &r) == MN_ERR_UNREACHABLE);
        CHECK(r.restarts == needed - 1);
        CHECK(r.iterations == needed * MN_IK_STALL_ITERS + 20);
    }
    /* Attempts ending 1% apart are different minima: the restarts run out instead. */
    mn_ik_options o = mk_options(20, 20);
    mock m = mk_new(1.0, 0.99, MN_IK_ONGOING);
    m.restart_to = 1.0;
    m.restart_inc = 0.01;
    CHECK(drive(&m, 2, &o, &r) == MN_ERR_UNREACHABLE && r.restarts == 20);
}

/* Restarts draw from a generator seeded from o->seed. */
static void test_seeded(void) {
    mn_ik_result r;
    uint64_t draw[3];
    uint64_t seeds[3] = {1, 1, 77};
    for (int k = 0; k < 3; k++) {
        mn_ik_options o = mk_options(20, 5);
        o.seed = seeds[k];
        mock m = mk_new(1.0, 0.99, MN_IK_ONGOING);
        m.restart_to = 0;
        CHECK(drive(&m, 2, &o, &r) == MN_OK && m.restarts == 1);
        draw[k] = m.first_draw;
        mn_rng g;
        mn_rng_seed(&g, seeds[k]);
        CHECK(draw[k] == mn_rng_next(&g));
    }
    CHECK(draw[0] == draw[1] && draw[0] != draw[2]);
}

/* The driver allocates nothing. */
static void test_no_allocation(void) {
    mn_ik_options o = mk_options(20, 50);
    mn_ik_result r;
    mock m = mk_new(1.0, 0.99, MN_IK_ONGOING);
    m.restart_to = 1.0;
    m.restart_inc = 0.5;
    long before = mn_alloc_count();
    drive(&m, 2, &o, &r);
    m = mk_new(1.0, 1.0, MN_IK_STUCK);
    m.escape_inc = 1.0;
    drive(&m, 1, &o, &r);
    CHECK(mn_alloc_count() == before);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_ongoing_is_not_stationary);
    RUN(test_escape);
    RUN(test_restart_on_stall);
    RUN(test_budget_per_attempt);
    RUN(test_same_minimum);
    RUN(test_seeded);
    RUN(test_no_allocation);
    return mn_test_report();
}
