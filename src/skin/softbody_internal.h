/* The soft body's substep in its parts, for the coupling (coupling.c) that runs between
 * the body's own constraints and its velocity update, and its mesh checks, which the lattice
 * (lattice.c) shares (private to the skin layer). */
#ifndef MARIONETTE_SKIN_SOFTBODY_INTERNAL_H
#define MARIONETTE_SKIN_SOFTBODY_INTERNAL_H

#include <marionette/skin.h>

/* Substep s of ns (length h): saves x into prev, integrates gravity, moves pinned
 * vertices a share of the way to their targets. */
void mn_sb_predict(mn_softbody* sb, double h, int s, int ns);
/* The same for vertex i (for the passes that predict the next substep as they go). */
static inline void mn_sb_predict_vertex(mn_softbody* sb, int i, double h, int s, int ns) {
    double* xi = sb->x + 3 * (size_t)i;
    double* pi = sb->prev + 3 * (size_t)i;
    pi[0] = xi[0], pi[1] = xi[1], pi[2] = xi[2];
    /* pinned vertices move linearly to their targets over the step */
    if (sb->inv_mass[i] == 0) {
        for (int c = 0; c < 3; c++)
            xi[c] += (sb->pin_target[3 * (size_t)i + c] - xi[c]) / (double)(ns - s);
        return;
    }
    double* vi = sb->v + 3 * (size_t)i;
    vi[0] += h * sb->opt.gravity.x;
    vi[1] += h * sb->opt.gravity.y;
    vi[2] += h * sb->opt.gravity.z;
    for (int c = 0; c < 3; c++)
        xi[c] += h * vi[c];
}
/* The body's constraints, once each (edges, elements, volume, grabs, ground). packed: x4
 * already holds x and the inverse masses (the pass before it wrote both). */
void mn_sb_project(mn_softbody* sb, double h, int packed);
/* v = damp (x - prev) / h for the unpinned vertices. */
void mn_sb_velocities(mn_softbody* sb, double h, double damp);
/* Saves x and v before a step; after it, restores them and fills r when a position or a
 * velocity is not finite (returns 0), else fills r's max_speed (returns 1). */
void mn_sb_save(mn_softbody* sb);
/* The checks of a mesh given to mn_softbody_create or mn_lattice_create (what names it when
 * the arguments themselves are wrong): 1, or 0 with err set. */
int mn_sb_check_mesh(int nverts, const double* pos, int ntris, const int* tris, const char* what,
                     mn_error* err);
int mn_sb_finish(mn_softbody* sb, mn_softbody_result* r);

/* softbody_solve.c: the edges and tetrahedra, once each, in their order (the runs that
 * share no vertex four at a time where the processor has vectors). */
void mn_sb_solve_edges_tets(mn_softbody* sb, double h, int packed);
/* (Re)allocates sb->x4 for sb->nverts: 1, or 0 when out of memory. */
int mn_sb_alloc_x4(mn_softbody* sb);
/* Records constraints [start, end) of a kind (0 edges, 1 tetrahedra) as sharing no vertex:
 * 1, or 0 when out of memory. */
int mn_sb_add_run(mn_softbody* sb, int kind, int start, int end);
/* Whether the passes use vectors (the processor has them and mn_sb_set_vectors did not
 * switch them off); the switch is for the tests that compare the two. */
int mn_sb_vectors(void);
void mn_sb_set_vectors(int on);

#endif
