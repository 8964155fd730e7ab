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

/* Length of the UTF-8 sequence at s (1..4) when it is valid and not a control character
 * (C0, DEL, C1), else 0. */
static int safe_char(const unsigned char* s) {
    if (s[0] < 0x20 || s[0] == 0x7F) return 0;
    if (s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F) return 0; /* C1: U+0080 to U+009F */
    return mn_utf8_len(s, 4); /* stops at the NUL: it is no continuation byte */
}

const char* mn_cli_safe(const char* s) {
    static char* ring[8];
    static size_t ring_cap[8];
    static int slot;
    if (!s) return "";
    const unsigned char* u = (const unsigned char*)s;
    size_t n = 0, bad = 0;
    while (u[n]) {
        int l = safe_char(u + n);
        if (!l) bad++, l = 1;
        n += (size_t)l;
    }
    if (!bad) return s;
    slot = (slot + 1) % 8;
    size_t need = n + 3 * bad + 1;
    if (ring_cap[slot] < need) {
        char* p = realloc(ring[slot], need);
        if (!p) return "(a name that cannot be printed)";
        ring[slot] = p;
        ring_cap[slot] = need;
    }
    char* o = ring[slot];
    for (size_t i = 0; u[i];) {
        int l = safe_char(u + i);
        if (l) {
            memcpy(o, u + i, (size_t)l);
            o += l, i += (size_t)l;
        } else {
            o += sprintf(o, "\\x%02X", u[i]);
            i++;
        }
    }
    *o = 0;
    return ring[slot];
}

int mn_cli_usage_error(const char* cmd, const char* fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "marionette %s: %s (see marionette %s --help)\n", cmd, mn_cli_safe(text), cmd);
    return MN_EXIT_USAGE;
}

int mn_cli_input_error(const mn_error* err) {
    fprintf(stderr, "marionette: %s\n",
            mn_cli_safe(err->message[0] ? err->message : mn_status_name(err->status)));
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
    for (const unsigned char* p = (const unsigned char*)s; p && *p;) {
        int l = safe_char(p);
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (l)
            fwrite(p, 1, (size_t)l, f);
        else if (*p < 0x80)
            fprintf(f, "\\u%04x", *p);
        else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)
            fprintf(f, "\\u%04x", p[1]), l = 2; /* C1 */
        else
            fputs("\\ufffd", f);
        p += l ? l : 1;
    }
    fputc('"', f);
}

const char* mn_cli_json_num(double v) {
    static char ring[16][MN_DOUBLE_CHARS];
    static int slot;
    slot = (slot + 1) % 16;
    return mn_format_double(v, ring[slot]);
}

int mn_cli_finite(const char* file, const char* what, const double* v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) {
            mn_error e;
            mn_error_set(&e, MN_ERR_ARG, file, 0, what,
                         "the result is not finite (an input is too large for double arithmetic); "
                         "nothing printed");
            mn_cli_input_error(&e);
            return 0;
        }
    return 1;
}

int mn_cli_find_joint(const mn_model* m, const char* file, const char* field, const char* name) {
    int j = mn_model_find_joint(m, name);
    if (j >= 0) return j;
    char hint[256];
    mn_model_joint_hint(m, name, hint, sizeof hint);
    /* each part escaped on its own: the hint's names come from the file */
    fprintf(stderr, "marionette: no joint \"%s\" in %s", mn_cli_safe(name), mn_cli_safe(file));
    fprintf(stderr, " (%s)%s\n", field, mn_cli_safe(hint));
    return -1;
}

void mn_cli_print_warnings(const mn_warnings* w) {
    if (!w || w->count == 0) return;
    if (w->count == 1)
        fprintf(stderr, "marionette: warning: %s\n", mn_cli_safe(w->first));
    else
        fprintf(stderr, "marionette: warning: %s (and %d more)\n", mn_cli_safe(w->first),
                w->count - 1);
}
