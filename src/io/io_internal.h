/* Private helpers shared by the readers and writers of the io layer. */
#ifndef MN_IO_INTERNAL_H
#define MN_IO_INTERNAL_H

#include <marionette/io.h>

#include <stdarg.h>
#include <stddef.h>

/* A growable text buffer for writers. On allocation failure it sets failed and drops
 * further output; check failed before writing the result out. */
typedef struct mn_strbuf {
    char* data;
    size_t len, cap;
    int failed;
} mn_strbuf;

void mn_strbuf_init(mn_strbuf* b);
void mn_strbuf_free(mn_strbuf* b);
void mn_strbuf_append(mn_strbuf* b, const char* s, size_t n);
void mn_strbuf_printf(mn_strbuf* b, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends a double so that it reads back to the same value ("%.17g", shortened when a
 * shorter form is exact). */
void mn_strbuf_double(mn_strbuf* b, double v);

/* Records a warning (keeps the first message, counts all). w may be NULL. */
void mn_warn(mn_warnings* w, const char* file, int line, const char* field, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Parses a finite double from s (strtod, then a finiteness and range check); returns 0 on
 * failure. *end, when given, points after the number. */
int mn_parse_double(const char* s, char** end, double* out);

#endif
