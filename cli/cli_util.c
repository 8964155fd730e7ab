/* Argument parsing and message helpers shared by the subcommands. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int mn_cli_wants_help(int argc, char** argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

int mn_cli_usage_error(const char* cmd, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "marionette %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see marionette %s --help)\n", cmd);
    va_end(ap);
    return MN_EXIT_USAGE;
}

int mn_cli_input_error(const mn_error* err) {
    fprintf(stderr, "marionette: %s\n", err->message[0] ? err->message : mn_status_name(err->status));
    return MN_EXIT_INPUT;
}

int mn_cli_parse_double(const char* s, double* out) {
    char* e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || *e || errno == ERANGE || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

int mn_cli_parse_int(const char* s, int* out) {
    char* e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || *e || errno == ERANGE || v < INT_MIN || v > INT_MAX) return 0;
    *out = (int)v;
    return 1;
}

int mn_cli_parse_list(const char* s, double* out, int cap) {
    int n = 0;
    const char* p = s;
    while (*p) {
        char* e;
        errno = 0;
        double v = strtod(p, &e);
        if (e == p || errno == ERANGE || !isfinite(v) || n >= cap) return -1;
        out[n++] = v;
        p = e;
        if (*p == ',') {
            p++;
            if (!*p) return -1;
        } else if (*p) {
            return -1;
        }
    }
    return n;
}

void mn_cli_json_string(FILE* f, const char* s) {
    fputc('"', f);
    for (const unsigned char* p = (const unsigned char*)s; p && *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

int mn_cli_finite(const char* file, const char* what, const double* v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) {
            mn_error e;
            mn_error_set(&e, MN_ERR_ARG, file, 0, what,
                         "the result is not finite (an input is too large for double arithmetic); nothing printed");
            mn_cli_input_error(&e);
            return 0;
        }
    return 1;
}

void mn_cli_print_warnings(const mn_warnings* w) {
    if (!w || w->count == 0) return;
    if (w->count == 1) fprintf(stderr, "marionette: warning: %s\n", w->first);
    else fprintf(stderr, "marionette: warning: %s (and %d more)\n", w->first, w->count - 1);
}
