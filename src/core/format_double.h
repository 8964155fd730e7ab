/* mn_format_double (base.h) returning the length of the text written, for the writers that
 * append it to a buffer (src/io/file.c). */
#ifndef MN_CORE_FORMAT_DOUBLE_H
#define MN_CORE_FORMAT_DOUBLE_H

/* Writes v as mn_format_double does into buf (MN_DOUBLE_CHARS bytes); returns its length. */
int mn_format_double_len(double v, char* buf);

#endif
