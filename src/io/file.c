/* Whole-file reads, atomic writes, text buffers, warnings, the error setter, the UTF-8 check
 * and the name map shared by the io layer. */
#include "io/io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void mn_motion_free(mn_motion* mo) {
    if (!mo) return;
    free(mo->q);
    memset(mo, 0, sizeof *mo);
}

mn_status mn_read_file(const char* path, char** data, size_t* len, mn_error* err) {
    *data = NULL;
    if (len) *len = 0;
    FILE* f = fopen(path, "rb");
    if (!f) return mn_error_set(err, MN_ERR_IO, path, 0, "", "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return mn_error_set(err, MN_ERR_IO, path, 0, "", "not a regular file");
    }
    size_t n = (size_t)st.st_size;
    char* buf = malloc(n + 1);
    if (!buf) {
        fclose(f);
        return mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "file too large (%zu bytes)", n);
    }
    size_t got = fread(buf, 1, n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != n) {
        free(buf);
        return mn_error_set(err, MN_ERR_IO, path, 0, "", "read failed");
    }
    buf[n] = 0;
    *data = buf;
    if (len) *len = n;
    return MN_OK;
}

mn_status mn_io_read_path(const char* path, mn_io_text_fn fn, void* args, mn_error* err) {
    char* text;
    size_t len;
    mn_status s = mn_read_file(path, &text, &len, err);
    if (s) return s;
    s = fn(text, len, path, args, err);
    free(text);
    return s;
}

typedef struct figure_args {
    mn_io_figure_fn fn;
    mn_model** model;
    mn_warnings* warn;
} figure_args;

static mn_status figure_text(const char* text, size_t len, const char* name, void* args,
                             mn_error* err) {
    figure_args* a = args;
    return a->fn(text, len, name, a->model, a->warn, err);
}

mn_status mn_io_read_figure(const char* path, mn_io_figure_fn fn, mn_model** model,
                            mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (!path || !model) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    figure_args a = {fn, model, warn};
    return mn_io_read_path(path, figure_text, &a, err);
}

mn_status mn_io_errorv(mn_error* err, mn_status s, const char* file, int line, const char* field,
                       const char* fmt, va_list ap) {
    char text[400];
    vsnprintf(text, sizeof text, fmt, ap);
    return mn_error_set(err, s, file, line, field, "%s", text);
}

int mn_utf8_len(const unsigned char* s, size_t n) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int len;
    unsigned cp;
    if ((c & 0xE0) == 0xC0)
        len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0)
        len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if ((size_t)len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

int mn_utf8_text(const char* s, size_t n) {
    const unsigned char* u = (const unsigned char*)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x20 || u[i] == 0x7F) return 0;
        int l = mn_utf8_len(u + i, n - i);
        if (!l) return 0;
        i += (size_t)l;
    }
    return 1;
}

static size_t name_hash(const char* s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)(h ^ (h >> 32));
}

int mn_name_map_init(mn_name_map* m, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    m->key = calloc(cap, sizeof *m->key);
    m->val = malloc(cap * sizeof *m->val);
    m->mask = cap - 1;
    if (!m->key || !m->val) {
        mn_name_map_free(m);
        return 0;
    }
    return 1;
}

void mn_name_map_free(mn_name_map* m) {
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

int mn_name_map_get(const mn_name_map* m, const char* key) {
    for (size_t i = name_hash(key) & m->mask; m->key[i]; i = (i + 1) & m->mask)
        if (!strcmp(m->key[i], key)) return m->val[i];
    return -1;
}

int mn_name_map_put(mn_name_map* m, const char* key, int val) {
    size_t i = name_hash(key) & m->mask;
    for (; m->key[i]; i = (i + 1) & m->mask)
        if (!strcmp(m->key[i], key)) return m->val[i];
    m->key[i] = key;
    m->val[i] = val;
    return -1;
}

int mn_name_map_of_model(mn_name_map* map, const mn_model* m) {
    if (!mn_name_map_init(map, (size_t)m->njoint)) return 0;
    for (int j = 0; j < m->njoint; j++)
        mn_name_map_put(map, m->jnt_name[j], j);
    return 1;
}

mn_status mn_write_file_atomic(const char* path, const char* data, size_t len, mn_error* err) {
    size_t n = strlen(path);
    char* tmp = malloc(n + 16);
    if (!tmp) return mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
    snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        mn_error_set(err, MN_ERR_IO, path, 0, "", "cannot create: %s", strerror(errno));
        free(tmp);
        return MN_ERR_IO;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            break;
        }
        done += (size_t)w;
    }
    int ok = done == len && fsync(fd) == 0;
    ok = (close(fd) == 0) && ok;
    if (ok) {
        /* mkstemp creates 0600; give the file the usual permissions. */
        mode_t mask = umask(0);
        umask(mask);
        chmod(tmp, 0666 & ~mask);
    }
    if (!ok || rename(tmp, path) != 0) {
        mn_error_set(err, MN_ERR_IO, path, 0, "", "write failed: %s", strerror(errno));
        unlink(tmp);
        free(tmp);
        return MN_ERR_IO;
    }
    free(tmp);
    return MN_OK;
}

void mn_strbuf_init(mn_strbuf* b) { memset(b, 0, sizeof *b); }
void mn_strbuf_free(mn_strbuf* b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int strbuf_reserve(mn_strbuf* b, size_t extra) {
    if (b->failed) return 0;
    if (b->len + extra + 1 <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1) cap *= 2;
    char* p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->data = p;
    b->cap = cap;
    return 1;
}

void mn_strbuf_append(mn_strbuf* b, const char* s, size_t n) {
    if (!strbuf_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void mn_strbuf_printf(mn_strbuf* b, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        mn_strbuf_append(b, small, (size_t)n);
        return;
    }
    if (!strbuf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

mn_status mn_strbuf_write(mn_strbuf* b, const char* path, mn_error* err) {
    mn_status st = b->failed ? mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory")
                             : mn_write_file_atomic(path, b->data ? b->data : "", b->len, err);
    mn_strbuf_free(b);
    return st;
}

void mn_strbuf_double(mn_strbuf* b, double v) {
    char s[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        if (strtod(s, NULL) == v) break;
    }
    if (strcmp(s, "-0") == 0) strcpy(s, "0");
    mn_strbuf_append(b, s, strlen(s));
}

void mn_strbuf_json_str(mn_strbuf* b, const char* s) {
    mn_strbuf_append(b, "\"", 1);
    for (const char* p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            mn_strbuf_printf(b, "\\%c", *p);
        else if ((unsigned char)*p < 0x20)
            mn_strbuf_printf(b, "\\u%04x", (unsigned char)*p);
        else
            mn_strbuf_append(b, p, 1);
    }
    mn_strbuf_append(b, "\"", 1);
}

void mn_warn(mn_warnings* w, const char* file, int line, const char* field, const char* fmt, ...) {
    if (!w) return;
    if (w->count++ > 0) return;
    mn_error e;
    va_list ap;
    va_start(ap, fmt);
    mn_io_errorv(&e, MN_OK, file, line, field, fmt, ap);
    va_end(ap);
    snprintf(w->first, sizeof w->first, "%s", e.message);
}

int mn_parse_double(const char* s, char** end, double* out) {
    char* e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || !isfinite(v) || (errno == ERANGE && fabs(v) > 1.0)) {
        if (end) *end = e;
        return 0;
    }
    if (end) *end = e;
    *out = v;
    return 1;
}
