/* The soft-body tests' bar: a closed box as a surface, and a bar along x as a lattice body
 * with a chain of bones along it (test_coupling.c, test_softbody_vec.c). */
#ifndef MN_TEST_SOFTBODY_BAR_H
#define MN_TEST_SOFTBODY_BAR_H

#include <marionette/skin.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* A closed box [lo, hi], 8 corners and 12 outward triangles. */
static void box_surface(const double lo[3], const double hi[3], double pos[24], int tris[36]) {
    for (int i = 0; i < 8; i++) {
        pos[3 * i] = (i & 1) ? hi[0] : lo[0];
        pos[3 * i + 1] = (i & 2) ? hi[1] : lo[1];
        pos[3 * i + 2] = (i & 4) ? hi[2] : lo[2];
    }
    static const int T[36] = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                              2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};
    memcpy(tris, T, sizeof T);
}

/* A bar along x from 0 to len, square section 0.2, as a lattice body (res cubes along x)
 * with masses from density 100, and a chain of nb bones along it (weights: the two
 * nearest bone centres, blended). */
typedef struct bar {
    mn_lattice* L;
    mn_softbody* sb;
    mn_rig* rig;
} bar;

static bar make_bar(double len, int res, int nb, const mn_softbody_options* o) {
    bar b = {0};
    double lo[3] = {0, -0.1, -0.1}, hi[3] = {len, 0.1, 0.1}, pos[24];
    int tris[36];
    box_surface(lo, hi, pos, tris);
    b.L = mn_lattice_create(8, pos, 12, tris, res, NULL);
    CHECK(b.L != NULL);
    int n = b.L->nnodes;
    double* mass = malloc((size_t)n * sizeof(double));
    CHECK(mn_softbody_element_masses(n, b.L->nodes, 4, b.L->ntets, b.L->tets, 100, mass, NULL) ==
          MN_OK);
    b.sb = mn_softbody_create(n, b.L->nodes, 0, NULL, mass, o, NULL);
    CHECK(b.sb != NULL);
    CHECK(mn_softbody_add_elements(b.sb, 4, b.L->ntets, b.L->tets, NULL) == MN_OK);
    b.rig = mn_rig_create(3, n, b.L->nodes, mass, NULL);
    double bl = len / nb;
    for (int j = 0; j < nb; j++) {
        char name[16];
        snprintf(name, sizeof name, "b%d", j);
        mn_ctrl_def d = mn_ctrl_default();
        d.name = name;
        d.kind = MN_CTRL_BONE;
        d.pivot = mn_v3(j * bl, 0, 0);
        d.tail = mn_v3((j + 1) * bl, 0, 0);
        d.parent = j - 1;
        d.attached = j > 0;
        CHECK(mn_rig_add_ctrl(b.rig, &d, NULL) == j);
    }
    int* idx = malloc((size_t)n * 2 * sizeof(int));
    double* w = malloc((size_t)n * 2 * sizeof(double));
    for (int i = 0; i < n; i++) {
        double u = b.L->nodes[3 * i] / bl - 0.5;
        int j0 = (int)floor(u);
        j0 = j0 < 0 ? 0 : j0 > nb - 2 ? nb - 2 : j0;
        double s = fmin(1, fmax(0, u - j0));
        idx[2 * i] = j0, idx[2 * i + 1] = j0 + 1;
        w[2 * i] = 1 - s, w[2 * i + 1] = s;
    }
    CHECK(mn_rig_set_weights(b.rig, 2, idx, w, NULL, NULL) == MN_OK);
    free(idx);
    free(w);
    free(mass);
    return b;
}

static void free_bar(bar* b) {
    mn_rig_destroy(b->rig);
    mn_softbody_destroy(b->sb);
    mn_lattice_destroy(b->L);
}

#endif
