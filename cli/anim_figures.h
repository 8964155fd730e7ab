/* `anim info` and `anim bake` of a sequence document of several figures (cli/anim_figures.c;
 * docs/sequence.md "Several figures"). */
#ifndef MN_CLI_ANIM_FIGURES_H
#define MN_CLI_ANIM_FIGURES_H

#include <marionette/sequence.h>

/* Prints the document's figures, their keys, handles and constraints. */
int mn_anim_info_figures(const char* path);
/* Bakes every figure together into one file per figure: OUT with the figure's name before
 * its extension (hands.bvh -> hands.ann.bvh), BVH or glB as OUT ends. */
int mn_anim_bake_figures(const char* in, const char* out, const mn_seq_bake_options* o);

#endif
