/* The soft body's constraint passes with vectors (src/skin/softbody_solve.c): the runs that
 * are projected side by side share no vertex, and a step gives the same bits with the
 * vectors and without them, on a coupled lattice with pinned vertices (whose edges the
 * vectors hand back to the scalar code) and a grab. */
#include <marionette/skin.h>

#include "skin/softbody_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* A box [0, len] x [-0.1, 0.1]^2 as a lattice of res cubes along x, density 100, with a
 * chain of nb bones along x (the two nearest bone centres' weights, blended). */
typedef struct body {
    mn_lattice* L;
    mn_softbody* sb;
    mn_rig* rig;
} body;

static body make_body(double len, int res, int nb) {
    body b = {0};
    double pos[24];
    static const int T[36] = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                              2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};
    for (int i = 0; i < 8; i++) {
        pos[3 * i] = (i & 1) ? len : 0;
        pos[3 * i + 1] = (i & 2) ? 0.1 : -0.1;
        pos[3 * i + 2] = (i & 4) ? 0.1 : -0.1;
    }
    b.L = mn_lattice_create(8, pos, 12, T, res, NULL);
    CHECK(b.L != NULL);
    int n = b.L->nnodes;
    double* mass = malloc((size_t)n * sizeof(double));
    CHECK(mn_softbody_element_masses(n, b.L->nodes, 4, b.L->ntets, b.L->tets, 100, mass, NULL) ==
          MN_OK);
    mn_softbody_options o = mn_softbody_default();
    o.substeps = 5;
    o.edge_compliance = 1e-5;
    b.sb = mn_softbody_create(n, b.L->nodes, 0, NULL, mass, &o, NULL);
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

static void free_body(body* b) {
    mn_rig_destroy(b->rig);
    mn_softbody_destroy(b->sb);
    mn_lattice_destroy(b->L);
}

/* Every run of constraints that the vectors project side by side shares no vertex, and
 * the runs cover most of the edges and tetrahedra. */
static void test_runs_share_no_vertex(void) {
    body b = make_body(1.0, 12, 4);
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
    free_body(&b);
}

/* A coupled step with the vectors is the scalar one, bit for bit, at every level the
 * processor has (AVX2's 4 lanes, AVX-512's 8): the root bone swung, the far end's vertices
 * pinned (edges between two of them are skipped lanes), a vertex grabbed. */
static void test_same_bits(void) {
    body b[3];
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
        free_body(&b[q]);
    }
}

int main(void) {
    RUN(test_runs_share_no_vertex);
    RUN(test_same_bits);
    return mn_test_report();
}
