/* Motion scripts (Welman 7.2.1's scripting approach): the thesis's walking paragraph applied
 * to a step of the stick figure keeps the heel and then the ball of the stance foot where
 * they touched down; every statement compiles to the constraint it names; malformed scripts
 * are refused with file, line and field, and leave the sequence as it was. */
#include <marionette/io.h>
#include <marionette/sequence.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

#define WALK MN_SOURCE "/docs/examples/walk_stance.json"
#define SCRIPT MN_SOURCE "/docs/examples/walk_stance.mscript"

static void test_walking_paragraph(void) {
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_error err;
    CHECK(mn_seq_read(WALK, NULL, &m, &s, NULL, &err) == MN_OK);
    if (!s) return;
    CHECK(mn_motion_script_apply(SCRIPT, s, &err) == MN_OK);
    CHECK(mn_seq_handle_count(s) == 2 && mn_seq_constraint_count(s) == 2);
    int heel = mn_seq_find_handle(s, "heel"), ball = mn_seq_find_handle(s, "ball");
    CHECK(heel == 0 && ball == 1);
    const mn_seq_constraint_def* ch = mn_seq_constraint(s, 0);
    const mn_seq_constraint_def* cb = mn_seq_constraint(s, 1);
    /* heel_strike 0 .. heel_off 17; ball_down 5 .. toe_off = heel_off + 5 */
    CHECK(ch->con.type == MN_CON_PIN && ch->lock && ch->start == 0 && ch->end == 17 &&
          ch->con.handle == heel);
    CHECK(cb->con.type == MN_CON_PIN && cb->lock && cb->start == 5 && cb->end == 22 &&
          cb->con.handle == ball);

    mn_data* d = mn_data_create(m, 0);
    mn_seq_solver* v = mn_seq_solver_create(s, d, &err);
    CHECK(v != NULL);
    mn_seq_solve_options o = mn_seq_solve_options_default();
    o.solve.tol = 1e-6;
    const mn_handle_def* hh = mn_seq_handle(s, heel);
    const mn_handle_def* hb = mn_seq_handle(s, ball);
    mn_vec3 heel_at = {0, 0, 0}, ball_at = {0, 0, 0};
    double heel_err = 0, ball_err = 0, heel_lift = 0;
    for (int f = 0; f <= 24; f++) {
        CHECK(mn_seq_solve_frame(v, f, &o, NULL) == MN_OK);
        mn_vec3 ph = mn_point_world(d, hh->joint, hh->point),
                pb = mn_point_world(d, hb->joint, hb->point);
        if (f == 0) heel_at = ph;
        if (f == 5) ball_at = pb;
        if (f <= 17) heel_err = fmax(heel_err, mn_vec3_dist(ph, heel_at));
        if (f >= 5 && f <= 22) ball_err = fmax(ball_err, mn_vec3_dist(pb, ball_at));
        if (f == 22) heel_lift = ph.y - heel_at.y;
    }
    /* the plain in-betweens let the heel slide */
    double plain = 0;
    for (int f = 0; f <= 17; f++) {
        mn_seq_sample_data(s, d, f);
        plain = fmax(plain, mn_vec3_dist(mn_point_world(d, hh->joint, hh->point), heel_at));
    }
    printf("  walking: heel held within %.1e m over frames 0-17, ball within %.1e m over 5-22, "
           "heel %.3f m up at "
           "toe off; the plain in-betweens slide the heel %.3f m\n",
           heel_err, ball_err, heel_lift, plain);
    CHECK(heel_err <= 1e-4 && ball_err <= 1e-4);
    CHECK(heel_lift > 0.01); /* the heel breaks contact first */
    CHECK(plain > 0.01);
    mn_seq_solver_destroy(v);
    mn_data_destroy(d);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

static mn_seq* stick_seq(mn_model** m) {
    *m = mn_stickman_model(NULL);
    mn_seq* s = mn_seq_create(*m, NULL, NULL);
    mn_seq_set_key(s, 0, (*m)->q0, NULL);
    mn_seq_set_key(s, 60, (*m)->q0, NULL);
    return s;
}

static void test_every_statement(void) {
    mn_model* m;
    mn_seq* s = stick_seq(&m);
    const char* text =
        "# every statement\n"
        "event start 10\n"
        "event later start + 0.5s   # seconds at 30 fps\n"
        "handle hand point \"right hand\" 0 -0.08 0\n"
        "handle torso orientation torso\n"
        "handle body com\n"
        "handle top com head\n"
        "pin hand at 0.1 1.2 0.3 from start to later\n"
        "orient torso to 1 0 0 0 from 0 until 30\n"
        "plane hand origin 0 1 0 normal 0 2 0 from 31 to 40\n"
        "line hand origin 0 1 0 direction 1 0 0 from 41\n"
        "follow hand from 0 to 60 smooth through 0 0 1 0.2, 30 0.1 1.1 0.3, start 0 1.05 0.25\n"
        "balance from 0 polygon -0.2 0 -0.1, 0.2 0 -0.1, 0.2 0 0.2, -0.2 0 0.2 margin 0.01\n";
    mn_error err;
    CHECK(mn_motion_script_apply_mem(text, strlen(text), "all.ms", s, &err) == MN_OK);
    if (err.status) fprintf(stderr, "%s\n", err.message);
    CHECK(mn_seq_handle_count(s) == 5); /* and the balance's centre of mass */
    CHECK(mn_seq_constraint_count(s) == 6);
    const mn_seq_constraint_def* c = mn_seq_constraint(s, 0);
    CHECK(c->con.type == MN_CON_PIN && c->start == 10 && c->end == 25 && c->con.target.y == 1.2);
    c = mn_seq_constraint(s, 1);
    CHECK(c->con.type == MN_CON_ORIENT && c->start == 0 && c->end == 30);
    c = mn_seq_constraint(s, 2);
    CHECK(c->con.type == MN_CON_PLANE && c->con.dir.y == 2 && c->start == 31 && c->end == 40);
    c = mn_seq_constraint(s, 3);
    CHECK(c->con.type == MN_CON_LINE && c->start == 41 && isinf(c->end));
    c = mn_seq_constraint(s, 4);
    CHECK(c->con.type == MN_CON_PIN && c->target_interp == MN_INTERP_CATMULL_ROM);
    CHECK(mn_seq_target_key_count(s, 4) == 3 && mn_seq_target_key(s, 4, 1)->frame == 10 &&
          mn_seq_target_key(s, 4, 2)->frame == 30);
    c = mn_seq_constraint(s, 5);
    CHECK(c->con.type == MN_CON_BALANCE && c->con.npolygon == 4 && c->con.margin == 0.01);
    CHECK(mn_seq_handle(s, 3)->type == MN_HANDLE_COM &&
          mn_seq_handle(s, 3)->joint == mn_model_find_joint(m, "head"));
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

typedef struct bad {
    const char* text;
    int line;
    const char* field;
} bad;

static void test_malformed(void) {
    static const bad table[] = {
        {"jump heel from 0\n", 1, "statement"},
        {"handle h point nose\n", 1, "joint"},
        {"handle h point head 0 1\n", 1, "point"},
        {"handle h spot head\n", 1, "type"},
        {"handle h point head\nhandle h point torso\n", 2, "name"},
        {"lock h from 0\n", 1, "handle"},
        {"handle h point head\n\nlock h from 5 to 2\n", 3, "to"},
        {"handle h point head\nlock h from heel_strike\n", 2, "from"},
        {"handle h point head\nlock h 0 to 5\n", 2, "from"},
        {"handle h point head\nlock h from 0 to 5 extra\n", 2, "extra"},
        {"handle h point head\nlock h from 2x\n", 2, "from"},
        {"event a 1\nevent a 2\n", 2, "event"},
        {"event 3a 1\n", 1, "event"},
        {"handle h point head\npin h at 0 1 nan from 0\n", 2, "at"},
        {"handle h point head\nplane h origin 0 0 0 normal 0 0 0 from 0\n", 2, "normal"},
        {"handle h orientation head\norient h to 0 0 0 0 from 0\n", 2, "to"},
        {"handle h point head\nfollow h from 0 through 0 0 1 0, 0 0 1 1\n", 2, "through"},
        {"handle h point head\nfollow h from 0 through 0 0 1\n", 2, "through"},
        {"balance from 0 polygon 0 0 0, 1 0 0\n", 1, "polygon"},
        {"balance from 0 polygon 0 0 0, 1 0 0, 1 0 1 margin -1\n", 1, "margin"},
        {"handle h point \"head\n", 1, "line"},
        {"handle h orientation head\npin h at 0 1 0 from 0\n", 2, "handle"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        mn_model* m;
        mn_seq* s = stick_seq(&m);
        mn_error err;
        mn_status st =
            mn_motion_script_apply_mem(table[i].text, strlen(table[i].text), "bad.ms", s, &err);
        int ok = st != MN_OK && err.line == table[i].line && !strcmp(err.field, table[i].field) &&
                 !strcmp(err.file, "bad.ms");
        if (!ok)
            fprintf(stderr, "table[%zu]: status %d line %d field '%s': %s\n", i, st, err.line,
                    err.field, err.message);
        CHECK(ok);
        /* nothing applied */
        CHECK(mn_seq_handle_count(s) == 0 && mn_seq_constraint_count(s) == 0);
        mn_seq_destroy(s);
        mn_model_destroy(m);
    }
    mn_model* m;
    mn_seq* s = stick_seq(&m);
    mn_error err;
    CHECK(mn_motion_script_apply("/nonexistent/walk.ms", s, &err) == MN_ERR_IO);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_walking_paragraph);
    RUN(test_every_statement);
    RUN(test_malformed);
    return mn_test_report();
}
