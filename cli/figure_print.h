/* Printing a figure for `info` and `demo`. */
#ifndef MN_FIGURE_PRINT_H
#define MN_FIGURE_PRINT_H

#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>

const char* mn_cli_kind_name(mn_file_kind k);
/* The joint tree, one joint a line, indented by depth, with type and limits. */
void mn_cli_print_tree(FILE* f, const mn_model* m);
/* A summary line: name, joints, DOFs, state size, mass. */
void mn_cli_print_summary(FILE* f, const mn_model* m);

#endif
