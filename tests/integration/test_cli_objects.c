/* Polygon objects on joints (Welman 6.1.1 `object`): `marionette fk --objects` reads the
 * OBJ files a skeleton text names beside it and writes them placed on their joints; a name
 * that leads out of the folder, or a file that is missing, is an error naming it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

static void put(const char* dir, const char* name, const char* text) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE* f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs(text, f), fclose(f);
}

static const char* arm = "define skeleton \"arm\"\n  joint \"base\"\n  joint \"upper\"\n"
                         "  joint \"lower\"\nend skeleton\n"
                         "define joint \"upper\"\n  object \"box.obj\"\n  offset 0 1 0\n"
                         "  hinge z -180 180\nend joint\n"
                         "define joint \"lower\"\n  object \"parts/box.obj\"\n  offset 1 0 0\n"
                         "  hinge z -180 180\nend joint\n";

static void test_objects(void) {
    char dir[512], sub[600], args[3000], *out, *err;
    snprintf(dir, sizeof dir, "%s/objects", mn_test_temp_dir());
    mkdir(dir, 0700);
    snprintf(sub, sizeof sub, "%s/parts", dir);
    mkdir(sub, 0700);
    const char* tri = "v 0 0 0\nv 0.5 0 0\nv 0 0.5 0\nf 1 2 3\n";
    put(dir, "arm.skel", arm);
    put(dir, "box.obj", tri);
    put(sub, "box.obj", tri);
    snprintf(args, sizeof args,
             "fk '%s/arm.skel' --q 0,0,0,1,0,0,0,0.5,1.0 --objects '%s/posed.obj'", dir, dir);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    char path[1200];
    snprintf(path, sizeof path, "%s/posed.obj", dir);
    size_t n = 0;
    char* text = mn_test_read_file(path, &n);
    double v[6][3];
    int nv = 0, nf = 0;
    for (const char* p = text; p && *p;) {
        if (p[0] == 'v' && p[1] == ' ' && nv < 6 &&
            sscanf(p + 2, "%lf %lf %lf", &v[nv][0], &v[nv][1], &v[nv][2]) == 3)
            nv++;
        if (p[0] == 'f' && p[1] == ' ') nf++;
        p = strchr(p, '\n');
        if (p) p++;
    }
    CHECK(nv == 6 && nf == 2);
    if (nv == 6) {
        /* the upper arm's triangle turned by 0.5 rad about z at (0, 1, 0); the lower one's by
         * 1.5 rad at the elbow, (0, 1, 0) + R(0.5) (1, 0, 0) */
        double a = 0.5, b = 1.5;
        double ex = cos(a), ey = 1 + sin(a);
        double want[6][2] = {{0, 1},
                             {0.5 * cos(a), 1 + 0.5 * sin(a)},
                             {-0.5 * sin(a), 1 + 0.5 * cos(a)},
                             {ex, ey},
                             {ex + 0.5 * cos(b), ey + 0.5 * sin(b)},
                             {ex - 0.5 * sin(b), ey + 0.5 * cos(b)}};
        double worst = 0;
        for (int i = 0; i < 6; i++)
            worst = fmax(worst, fmax(fabs(v[i][0] - want[i][0]),
                                     fmax(fabs(v[i][1] - want[i][1]), fabs(v[i][2]))));
        CHECK(worst < 1e-9);
    }
    free(text);
    remove(path);
    /* a name out of the folder, a missing file: errors naming them, nothing written */
    put(dir, "bad.skel",
        "define skeleton \"a\"\n joint \"b\"\nend skeleton\ndefine joint \"b\"\n"
        " object \"../secret.obj\"\nend joint\n");
    snprintf(args, sizeof args, "fk '%s/bad.skel' --objects '%s/posed.obj'", dir, dir);
    CHECK(run_cli(args, &out, &err) == 1 && strstr(err, "../secret.obj") && strstr(err, "joint b"));
    free(out), free(err);
    put(dir, "gone.skel",
        "define skeleton \"a\"\n joint \"b\"\nend skeleton\ndefine joint \"b\"\n"
        " object \"nothing.obj\"\nend joint\n");
    snprintf(args, sizeof args, "fk '%s/gone.skel' --objects '%s/posed.obj'", dir, dir);
    CHECK(run_cli(args, &out, &err) == 1 && strstr(err, "nothing.obj"));
    free(out), free(err);
    CHECK(fopen(path, "r") == NULL);
    const char* names[] = {"arm.skel", "box.obj", "parts/box.obj", "bad.skel", "gone.skel"};
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        remove(path);
    }
    rmdir(sub);
    rmdir(dir);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_objects);
    return mn_test_report();
}
