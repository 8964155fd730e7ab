/* The soft body's substep in its parts, for the coupling (coupling.c) that runs between
 * the body's own constraints and its velocity update, and its mesh checks, which the lattice
 * (lattice.c) shares (private to the skin layer). */
#ifndef MARIONETTE_SKIN_SOFTBODY_INTERNAL_H
#define MARIONETTE_SKIN_SOFTBODY_INTERNAL_H

#include <marionette/skin.h>

/* Substep s of ns (length h): saves x into prev, integrates gravity, moves pinned
 * vertices a share of the way to their targets. */
void mn_sb_predict(mn_softbody* sb, double h, int s, int ns);
/* The body's constraints, once each (edges, elements, volume, grabs, ground). */
void mn_sb_project(mn_softbody* sb, double h);
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

#endif
