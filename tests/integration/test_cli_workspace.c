/* `marionette workspace`: the Panda's sampled workspace as key=value, PLY and SVG; the PLY
 * read back holds the voxels counted, each within the arm's reach, dexterity in [0, 1]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define PANDA MN_DATA "/robots/franka_panda/panda.urdf"
#define WS "workspace '" PANDA "' --base panda_link0 --tip panda_link8 --samples 20000 --voxel 0.2"

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

static void test_workspace(void) {
    char ply[256], svg[256], args[1024], *out, *err;
    snprintf(ply, sizeof ply, "%s/panda.ply", mn_test_temp_dir());
    snprintf(svg, sizeof svg, "%s/panda.svg", mn_test_temp_dir());
    snprintf(args, sizeof args, WS " --out '%s'", ply);
    CHECK(run_cli(args, &out, &err) == 0);
    const char* vx = out ? strstr(out, " voxels=") : NULL;
    const char* rc = out ? strstr(out, " reach=") : NULL;
    int voxels = vx ? atoi(vx + 8) : -1;
    double reach = rc ? atof(rc + 7) : 0;
    CHECK(voxels > 50 && reach > 1.2 && reach < 1.4);
    free(out), free(err);
    size_t n = 0;
    char* text = mn_test_read_file(ply, &n);
    CHECK(text && !strncmp(text, "ply\nformat ascii 1.0\n", 21));
    const char* ev = text ? strstr(text, "element vertex ") : NULL;
    CHECK(ev && atoi(ev + 15) == voxels);
    const char* body = text ? strstr(text, "end_header\n") : NULL;
    int rows = 0, ok = body != NULL;
    for (const char* p = body ? body + 11 : NULL; p && *p; rows++) {
        double x, y, z, dx;
        if (sscanf(p, "%lf %lf %lf %lf", &x, &y, &z, &dx) != 4) {
            ok = 0;
            break;
        }
        /* a voxel centre: within the reach of the base, plus half a voxel's diagonal */
        ok &= sqrt(x * x + y * y + (z - 0.333) * (z - 0.333)) < reach + 0.2 && dx >= 0 && dx <= 1;
        p = strchr(p, '\n');
        if (p) p++;
    }
    CHECK(ok && rows == voxels);
    free(text);
    remove(ply);
    snprintf(args, sizeof args, WS " --out '%s'", svg);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    text = mn_test_read_file(svg, &n);
    CHECK(text && !strncmp(text, "<svg ", 5) && strstr(text, "</svg>\n"));
    free(text);
    remove(svg);
    /* usage and input errors */
    CHECK(run_cli(WS " --out x.txt", &out, &err) == 2 && strstr(err, ".ply or .svg"));
    free(out), free(err);
    CHECK(run_cli("workspace '" PANDA "' --base panda_link8 --tip panda_link0", &out, &err) == 1 &&
          strstr(err, "--tip"));
    free(out), free(err);
    CHECK(run_cli("workspace '" PANDA "' --base panda_link0 --tip panda_lnk8", &out, &err) == 1 &&
          strstr(err, "panda_link8"));
    free(out), free(err);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_workspace);
    return mn_test_report();
}
