/* One vocabulary across the commands: every command answers --version; solve takes
 * --iters as pose and anim bake do (--max-iters still, with a note); convert names its
 * output format --format (--to still, with a note: tests/integration/test_cli_batch.c);
 * and the messages name what the user did: fk --every-frame on a glTF file without an
 * animation blames --every-frame (not --anim, which was not given), anim bake of a scene
 * document says to use pose --scene, and fk of a BVH written from a URDF lists the
 * fingers once each, not their channels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

static void test_every_command_has_version(void) {
    char *out, *err, *help, *herr, args[128];
    CHECK(run_cli("--version", &out, &err) == 0 && out && !strcmp(out, "marionette 0.1.0\n"));
    free(out), free(err);
    CHECK(run_cli("--help", &help, &herr) == 0 && help);
    /* the commands table: "  NAME       summary" lines after "commands:" */
    const char* p = help ? strstr(help, "commands:\n") : NULL;
    int n = 0;
    while (p && (p = strstr(p, "\n  ")) != NULL) {
        char name[32];
        if (sscanf(p + 3, "%31s", name) != 1) break;
        p += 3;
        snprintf(args, sizeof args, "%s --version", name);
        int rc = run_cli(args, &out, &err);
        if (rc != 0 || !out || strcmp(out, "marionette 0.1.0\n"))
            printf("  %s --version: exit %d, '%s'\n", name, rc, out ? out : "");
        CHECK(rc == 0 && out && !strcmp(out, "marionette 0.1.0\n"));
        free(out), free(err);
        n++;
    }
    CHECK(n >= 12);
    free(help), free(herr);
    CHECK(run_cli("bench ik --version", &out, &err) == 0 && out &&
          !strcmp(out, "marionette 0.1.0\n"));
    free(out), free(err);
}

static void test_iters(void) {
    char *a, *b, *c, *err;
    const char* base = "solve '" MN_DATA "/robots/franka_panda/panda.urdf' --base panda_link0 "
                       "--tip panda_link8 --target 0.4,0.2,0.5 --timeout-ms 0 --restarts 0 ";
    char args[512];
    snprintf(args, sizeof args, "%s--iters 2", base);
    int ra = run_cli(args, &a, &err);
    CHECK(err && !strstr(err, "note:"));
    free(err);
    snprintf(args, sizeof args, "%s--max-iters 2", base);
    int rb = run_cli(args, &b, &err);
    CHECK(err && strstr(err, "marionette solve: note: --max-iters is now --iters"));
    free(err);
    snprintf(args, sizeof args, "%s--iters 200", base);
    CHECK(run_cli(args, &c, &err) == 0); /* enough to reach it */
    free(err);
    /* the same solve under either name (up to the time it took), and the budget counts */
    const char* ma = a ? strstr(a, "microseconds") : NULL;
    const char* mb = b ? strstr(b, "microseconds") : NULL;
    CHECK(ra == rb && ra == 1 && ma && mb && ma - a == mb - b && !strncmp(a, b, (size_t)(ma - a)));
    CHECK(c && a && strstr(c, "status OK") && !strstr(a, "status OK"));
    free(a), free(b), free(c);
    snprintf(args, sizeof args, "%s--iters 0", base);
    CHECK(run_cli(args, &a, &err) == 2 && err && strstr(err, "--iters needs an integer >= 1"));
    free(a), free(err);
}

static void test_messages_name_what_was_done(void) {
    char args[1024], glb[300], bvh[300], *out, *err;
    snprintf(glb, sizeof glb, "%s/panda.glb", mn_test_temp_dir());
    snprintf(bvh, sizeof bvh, "%s/panda.bvh", mn_test_temp_dir());
    /* fk --every-frame of a file without an animation */
    snprintf(args, sizeof args, "convert '" MN_DATA "/robots/franka_panda/panda.urdf' '%s'", glb);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(args, sizeof args, "fk '%s' --every-frame", glb);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(err && strstr(err, "panda.glb: --every-frame: the file has no animation") &&
          !strstr(err, "--anim"));
    free(out), free(err);
    snprintf(args, sizeof args, "fk '%s' --anim Walk", glb);
    CHECK(run_cli(args, &out, &err) == 1 && err &&
          strstr(err, "--anim: the file has no animation"));
    free(out), free(err);
    /* anim bake / anim info of a scene document */
    snprintf(args, sizeof args, "anim bake '" MN_SOURCE "/docs/examples/fox_sniff.json' --out '%s'",
             bvh);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(err &&
          strstr(err, "fox_sniff.json: this is a scene document (docs/scene.md), not a "
                      "sequence: use marionette pose FIGURE --scene ") &&
          !strstr(err, "unknown member"));
    free(out), free(err);
    /* a sequence with a real mistake still gets the sequence reader's message */
    const char bad[] = "{\"figure\": \"stickman\", \"fps\": 24, \"solver\": \"ccd\"}";
    const char* seq = mn_test_write_temp(".json", bad, sizeof bad - 1);
    snprintf(args, sizeof args, "anim info '%s'", seq);
    CHECK(run_cli(args, &out, &err) == 1 && err && !strstr(err, "scene document"));
    free(out), free(err);
    /* convert panda.urdf panda.bvh, then fk: the fingers are listed once, by name */
    snprintf(args, sizeof args, "convert '" MN_DATA "/robots/franka_panda/panda.urdf' '%s'", bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(args, sizeof args, "fk '%s'", bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "\npanda_leftfinger ") && strstr(out, "\npanda_rightfinger ") &&
          !strstr(out, ":0:") && !strstr(out, "position "));
    free(out), free(err);
    snprintf(args, sizeof args, "fk '%s' --json", bvh);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(out && strstr(out, "\"name\":\"panda_leftfinger\"") && !strstr(out, ":0:") &&
          strstr(out, "\"joints\":[{\"name\":\"panda_link0\""));
    free(out), free(err);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_every_command_has_version);
    RUN(test_iters);
    RUN(test_messages_name_what_was_done);
    return mn_test_report();
}
