/* The "figures" array of scene and sequence documents (docs/scene.md, docs/sequence.md:
 * several figures, Welman 6.1, 7.3): each figure's name, file and placement, read once for
 * both documents (doc_figures.c), and joints named "figure/joint". */
#ifndef MN_DOC_DOC_FIGURES_H
#define MN_DOC_DOC_FIGURES_H

#include <marionette/math.h>
#include <marionette/model.h>

#include <cjson/cJSON.h>

#include "doc/json_locate.h"

#define MN_DOC_MAX_FIGURES 8 /* mn_csys_create takes 1 to 8 figures */

/* One entry of "figures". */
typedef struct mn_doc_figure {
    char name[64];
    char file[512];
    char sequence[512]; /* a sequence document animating the figure, "" when none */
    char root[128];
    mn_xform place; /* where the figure stands: position, rotation */
    int has_rot;    /* "rotation" given: rot as the document gives it */
    double rot[4];
} mn_doc_figure;

/* root's "figures" member: *a the array (NULL when absent) and *n its entries, checked to
 * hold 1 to MN_DOC_MAX_FIGURES. */
mn_status mn_doc_figures_array(ctx* x, const cJSON* root, const cJSON** a, int* n);

/* Reads the n entries of the array a (from mn_doc_figures_array) into *out (malloc'd, n
 * entries; free it). keys: the members an entry may have (others are the caller's to read:
 * each entry's object is figures[i] of a); with_sequence: an entry names exactly one of
 * "file" and "sequence", else a "file". Names are distinct, not empty, without '/'. */
mn_status mn_doc_read_figures(ctx* x, const cJSON* a, int n, const char* const* keys,
                              int with_sequence, mn_doc_figure** out);

/* The figure that a handle's joint name ("figure/joint") or its "figure" member (may be
 * NULL or "") names among the n figures, *jname the joint's name within it: the figure's
 * index; -1 when "figure" names no figure; -2 when neither names one and there are
 * several. */
int mn_doc_joint_figure(const mn_doc_figure* f, int n, const char* joint, const char* figure,
                        const char** jname);

#endif
