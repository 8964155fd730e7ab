/* The soft body's constraint passes with vectors (src/skin/softbody_solve.c): the runs that
 * are projected side by side share no vertex, and a step gives the same bits with the
 * vectors and without them, on a coupled lattice with pinned vertices (whose edges the
 * vectors hand back to the scalar code) and a grab. */
#include <marionette/skin.h>

#include "skin/softbody_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softbody_bar.h"
#include "test.h"

/* The bar of softbody_bar.h with 5 substeps and edge compliance 1e-5. */
static bar make_body(double len, int res, int nb) {
    mn_softbody_options o = mn_softbody_default();
    o.substeps = 5;
    o.edge_compliance = 1e-5;
    return make_bar(len, res, nb, &o);
}

/* Every run of constraints that the vectors project side by side shares no vertex, and
 * the runs cover most of the edges and tetrahedra. */
static void test_runs_share_no_vertex(void) {
    bar b = make_body(1.0, 12, 4);
    const mn_softbody* sb = b.sb;
    CHECK(sb->nruns > 0);
    int* seen = calloc((size_t)sb->nverts, sizeof(int));
    long covered[2] = {0, 0}, clashes = 0;
    for (int r = 0; r < sb->nruns; r++) {
        const int* R = sb->runs + 3 * r;
        int kind = R[0], corners = kind == 0 ? 2 : 4;
        const int* idx = kind == 0 ? sb->edges : sb->elem;
        CHECK(R[1] >= 0 && R[1] < R[2] && R[2] <= (kind == 0 ? sb->nedges : sb->nelem));
        for (int e = R[1]; e < R[2]; e++)
            for (int q = 0; q < corners; q++)
                if (seen[idx[corners * e + q]] == r + 1)
                    clashes++;
                else
                    seen[idx[corners * e + q]] = r + 1;
        covered[kind] += R[2] - R[1];
    }
    CHECK(clashes == 0);
    CHECK(covered[0] > 0.95 * sb->nedges);
    CHECK(covered[1] > 0.95 * sb->nelem);
    free(seen);
    free_bar(&b);
}

/* A coupled step with the vectors is the scalar one, bit for bit, at every level the
 * processor has (AVX2's 4 lanes, AVX-512's 8): the root bone swung, the far end's vertices
 * pinned (edges between two of them are skipped lanes), a vertex grabbed. */
static void test_same_bits(void) {
    bar b[3];
    mn_coupled* c[3];
    uint8_t driven[4] = {1, 0, 0, 0};
    for (int q = 0; q < 3; q++) {
        b[q] = make_body(1.0, 12, 4);
        int n = b[q].sb->nverts;
        for (int i = 0; i < n; i++)
            if (b[q].L->nodes[3 * i] > 0.99) mn_softbody_pin(b[q].sb, i, 1);
        CHECK(mn_softbody_grab(b[q].sb, n / 2, mn_v3(0.5, -0.2, 0), 1e-3) == MN_OK);
        c[q] = mn_coupled_create(b[q].sb, b[q].rig, driven, NULL, NULL);
        CHECK(c[q] != NULL);
    }
    int n = b[0].sb->nverts, m = b[0].rig->nctrl, level[3];
    for (int t = 1; t <= 30; t++)
        for (int q = 0; q < 3; q++) {
            mn_xform X = mn_coupled_pose(c[q])[0];
            X.R = mn_mat3_axis_angle(mn_v3(0, 0, 1), 0.4 * sin(0.2 * t));
            mn_coupled_drive(c[q], 0, &X);
            mn_sb_set_vectors(q);
            level[q] = mn_sb_vectors();
            CHECK(mn_coupled_step(c[q], 1.0 / 60, NULL) == MN_OK);
        }
    mn_sb_set_vectors(2);
    if (getenv("MN_VERBOSE"))
        fprintf(stderr, "  levels compared: %d %d %d\n", level[0], level[1], level[2]);
    CHECK(level[0] == 0);
    for (int q = 1; q < 3; q++) {
        CHECK(memcmp(b[0].sb->x, b[q].sb->x, (size_t)n * 3 * sizeof(double)) == 0);
        CHECK(memcmp(b[0].sb->v, b[q].sb->v, (size_t)n * 3 * sizeof(double)) == 0);
        CHECK(memcmp(mn_coupled_pose(c[0]), mn_coupled_pose(c[q]), (size_t)m * sizeof(mn_xform)) ==
              0);
    }
    CHECK(b[0].sb->x[3 * (n / 2) + 1] < -0.01); /* it moved */
    for (int q = 0; q < 3; q++) {
        mn_coupled_destroy(c[q]);
        free_bar(&b[q]);
    }
}

int main(void) {
    RUN(test_runs_share_no_vertex);
    RUN(test_same_bits);
    return mn_test_report();
}
