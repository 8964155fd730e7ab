/* The fit's internals that its tests check directly (private to the skin layer). */
#ifndef MARIONETTE_SKIN_FIT_INTERNAL_H
#define MARIONETTE_SKIN_FIT_INTERNAL_H

#include <marionette/skin.h>

/* At pose (after the translation step): the rotation step's metric H assembled as the fit
 * builds it, times v, into dense, and the same product without assembling H (the one the
 * conjugate gradients use), into implicit; v, dense and implicit have the fitter's number
 * of rotation unknowns, which is returned (0 when the fitter has no targets or no
 * rotation unknowns). Allocates nothing. */
int mn_fit_metric_products(mn_fitter* f, const mn_xform* pose, const double* v, double* dense,
                           double* implicit);

/* What the last mn_fit did: the metrics it built and factorised, the products with the
 * metric its conjugate gradients took, and the starts it tried beside the warm one (the
 * rigid fits, the predicted start: 0 to 2). Any pointer may be NULL. */
void mn_fit_counts(const mn_fitter* f, int* builds, int* products, int* starts);

/* The start the last mn_fit took: 0 the warm one (the pose given), 1 the rigid fit of every
 * bone, 2 that fit with the predicted corrections (rigid_start in fit.c). */
int mn_fit_start_taken(const mn_fitter* f);

#endif
