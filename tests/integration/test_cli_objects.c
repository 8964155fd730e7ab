/* Polygon objects on joints (Welman 6.1.1 `object`): `marionette fk --objects` reads the
 * OBJ files a skeleton text names beside it and writes them placed on their joints (as one
 * OBJ, or in a .glb as meshes on nodes under their joints' nodes, as `convert` to .glb does
 * too); a name that leads out of the folder, or a file that is missing, is an error naming
 * it. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
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

static uint32_t u32(const unsigned char* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The .glb at path read back: every joint of the arm a node, each object a node named
 * "JOINT object" whose parent is its joint's node and which has a mesh of one triangle
 * whose second vertex is (0.5, 0, 0) in the joint's frame; and the elbow's rotation the
 * pose's (angle 1.5 about z) or the rest's (0). */
static void check_glb(const char* path, double elbow) {
    size_t len = 0;
    unsigned char* d = (unsigned char*)mn_test_read_file(path, &len);
    CHECK(d && len > 28 && u32(d) == 0x46546C67u && u32(d + 8) == len);
    if (!d) return;
    uint32_t jl = u32(d + 12);
    cJSON* j = cJSON_ParseWithLength((const char*)d + 20, jl);
    CHECK(j != NULL);
    const unsigned char* bin = d + 20 + jl + 8;
    const cJSON* nodes = cJSON_GetObjectItem(j, "nodes");
    int n = cJSON_GetArraySize(nodes), found = 0;
    for (int i = 0; i < n; i++) {
        const cJSON* N = cJSON_GetArrayItem(nodes, i);
        const char* name = cJSON_GetObjectItem(N, "name")->valuestring;
        if (!strcmp(name, "lower")) {
            const cJSON* r = cJSON_GetObjectItem(N, "rotation");
            CHECK(fabs(2 * asin(cJSON_GetArrayItem(r, 2)->valuedouble) - elbow) < 1e-6);
        }
        const char* sp = strstr(name, " object");
        if (!sp) continue;
        found++;
        const cJSON* M = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "meshes"),
                                            cJSON_GetObjectItem(N, "mesh")->valueint);
        const cJSON* P = cJSON_GetArrayItem(cJSON_GetObjectItem(M, "primitives"), 0);
        int ap = cJSON_GetObjectItem(cJSON_GetObjectItem(P, "attributes"), "POSITION")->valueint;
        const cJSON* A = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "accessors"), ap);
        const cJSON* V = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "bufferViews"),
                                            cJSON_GetObjectItem(A, "bufferView")->valueint);
        const cJSON* vo = cJSON_GetObjectItem(V, "byteOffset");
        float v1[3];
        memcpy(v1, bin + (vo ? vo->valueint : 0) + 12, 12);
        CHECK(v1[0] == 0.5f && v1[1] == 0 && v1[2] == 0);
        CHECK(cJSON_GetObjectItem(A, "count")->valueint == 3);
        int parent = -1;
        for (int p = 0; p < n; p++) {
            const cJSON* k;
            cJSON_ArrayForEach(k, cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, p),
                                                      "children")) if (k->valueint == i) parent = p;
        }
        CHECK(parent >= 0);
        if (parent >= 0) {
            const char* pn =
                cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, parent), "name")->valuestring;
            CHECK(strlen(pn) == (size_t)(sp - name) && !strncmp(pn, name, strlen(pn)));
        }
    }
    CHECK(found == 2);
    cJSON_Delete(j);
    free(d);
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
    /* the same pose as glTF, and the figure converted to glTF at rest */
    snprintf(args, sizeof args,
             "fk '%s/arm.skel' --q 0,0,0,1,0,0,0,0.5,1.0 --objects '%s/posed.glb'", dir, dir);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(path, sizeof path, "%s/posed.glb", dir);
    check_glb(path, 1.0);
    remove(path);
    snprintf(args, sizeof args, "convert '%s/arm.skel' '%s/arm.glb'", dir, dir);
    CHECK(run_cli(args, &out, &err) == 0);
    free(out), free(err);
    snprintf(path, sizeof path, "%s/arm.glb", dir);
    check_glb(path, 0.0);
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
