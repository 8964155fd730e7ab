/* libigl's plain-text formats: DMAT (dense matrices, text or binary), TGF (skeleton
 * graphs) and Tmat (per-bone transforms stacked as [R^T; t]). Layouts in meshio.h. */
#include <marionette/meshio.h>

#include "io/io_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- a line-counting scanner over a NUL-terminated copy of the text ------------------- */
typedef struct scan {
    const char* s;
    int line;
} scan;

/* Skips blanks; newlines only when cross_lines. Returns the current character. */
static char scan_skip(scan* sc, int cross_lines) {
    for (;;) {
        char c = *sc->s;
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v')
            sc->s++;
        else if (c == '\n' && cross_lines) {
            sc->s++;
            sc->line++;
        } else
            return c;
    }
}

static int scan_double(scan* sc, int cross_lines, double* v) {
    char c = scan_skip(sc, cross_lines);
    if (!c || c == '\n') return 0;
    char* e;
    if (!mn_parse_double(sc->s, &e, v)) return 0;
    if (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n' && *e != '\f' && *e != '\v')
        return 0;
    sc->s = e;
    return 1;
}

static int scan_int(scan* sc, int cross_lines, long* v) {
    char c = scan_skip(sc, cross_lines);
    if (!c || c == '\n') return 0;
    char* e;
    errno = 0;
    long x = strtol(sc->s, &e, 10);
    if (e == sc->s || errno == ERANGE) return 0;
    if (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n') return 0;
    sc->s = e;
    *v = x;
    return 1;
}

/* Moves to the start of the next line. */
static void scan_next_line(scan* sc) {
    while (*sc->s && *sc->s != '\n')
        sc->s++;
    if (*sc->s == '\n') {
        sc->s++;
        sc->line++;
    }
}

static int rest_of_line_blank(scan* sc) {
    char c = scan_skip(sc, 0);
    return c == 0 || c == '\n';
}

static char* copy_text(const char* text, size_t len) {
    char* buf = malloc(len + 1);
    if (!buf) return NULL;
    memcpy(buf, text, len);
    buf[len] = 0;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == 0) buf[i] = '\x01'; /* a NUL inside text is a syntax error, not an end */
    return buf;
}

/* ---- DMAT ------------------------------------------------------------------------------ */
void mn_dmat_free(mn_dmat* m) {
    if (!m) return;
    free(m->data);
    memset(m, 0, sizeof *m);
}

/* Reads the two header numbers "cols rows" of one line starting at *pos. */
static int dmat_header(const char* text, size_t len, size_t* pos, long* cols, long* rows) {
    char line[128];
    size_t i = *pos, n = 0;
    while (i < len && text[i] != '\n' && n + 1 < sizeof line)
        line[n++] = text[i++];
    if (i < len && text[i] != '\n') return 0;
    line[n] = 0;
    if (i < len) i++;
    *pos = i;
    char *e1, *e2;
    errno = 0;
    *cols = strtol(line, &e1, 10);
    if (e1 == line || errno) return 0;
    *rows = strtol(e1, &e2, 10);
    if (e2 == e1 || errno) return 0;
    while (*e2 == ' ' || *e2 == '\t' || *e2 == '\r')
        e2++;
    return *e2 == 0;
}

mn_status mn_dmat_read_mem(const char* text, size_t len, const char* name, mn_dmat* out,
                           mn_error* err) {
    if (!text || !out) return mn_error_set(err, MN_ERR_ARG, name, 0, "", "NULL argument");
    memset(out, 0, sizeof *out);
    size_t pos = 0;
    long cols, rows;
    if (!dmat_header(text, len, &pos, &cols, &rows))
        return mn_error_set(err, MN_ERR_PARSE, name, 1, "header", "expected \"cols rows\"");
    int binary = 0, data_line = 2;
    if (cols == 0 && rows == 0) {
        /* binary DMAT: a second header, then raw little-endian doubles */
        binary = 1;
        if (!dmat_header(text, len, &pos, &cols, &rows))
            return mn_error_set(err, MN_ERR_PARSE, name, 2, "header",
                                "expected \"cols rows\" of a binary DMAT");
        data_line = 3;
    }
    if (cols <= 0 || rows <= 0 || cols > INT_MAX || rows > INT_MAX)
        return mn_error_set(err, MN_ERR_PARSE, name, data_line - 1, "header",
                            "matrix size %ld x %ld is not positive", rows, cols);
    size_t count = (size_t)cols * (size_t)rows;
    if (count / (size_t)cols != (size_t)rows)
        return mn_error_set(err, MN_ERR_PARSE, name, 1, "header", "size overflows");
    /* Each text value takes at least one character and a separator: a header that asks
     * for more values than the file can hold is rejected before allocating. */
    size_t avail = len - pos;
    if ((binary && count > avail / 8) || (!binary && count > avail / 2 + 1))
        return mn_error_set(err, MN_ERR_PARSE, name, data_line, "data",
                            "file too short for %ld x %ld values", rows, cols);
    double* data = malloc(count * sizeof(double));
    if (!data) return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    if (binary) {
        if (avail != count * 8) {
            free(data);
            return mn_error_set(err, MN_ERR_PARSE, name, data_line, "data",
                                "binary DMAT has %zu bytes, expected %zu", avail, count * 8);
        }
        for (size_t k = 0; k < count; k++) {
            double v;
            memcpy(&v, text + pos + 8 * k, 8);
            if (!isfinite(v)) {
                free(data);
                return mn_error_set(err, MN_ERR_PARSE, name, data_line, "data",
                                    "value %zu is not finite", k + 1);
            }
            size_t c = k / (size_t)rows, r = k % (size_t)rows;
            data[r * (size_t)cols + c] = v;
        }
    } else {
        char* buf = copy_text(text + pos, len - pos);
        if (!buf) {
            free(data);
            return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
        }
        scan sc = {buf, data_line};
        mn_status st = MN_OK;
        for (size_t k = 0; k < count; k++) {
            double v;
            if (!scan_double(&sc, 1, &v)) {
                char c = scan_skip(&sc, 1);
                st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "data",
                                  c ? "value %zu of %zu is not a finite number"
                                    : "value %zu of %zu missing (file ends early)",
                                  k + 1, count);
                break;
            }
            size_t c = k / (size_t)rows, r = k % (size_t)rows; /* values are column-major */
            data[r * (size_t)cols + c] = v;
        }
        if (st == MN_OK && scan_skip(&sc, 1))
            st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "data",
                              "more values than the header's %ld x %ld", cols, rows);
        free(buf);
        if (st != MN_OK) {
            free(data);
            return st;
        }
    }
    out->rows = (int)rows;
    out->cols = (int)cols;
    out->data = data;
    return MN_OK;
}

static mn_status dmat_reader(const char* t, size_t n, const char* name, void* out, mn_error* err) {
    return mn_dmat_read_mem(t, n, name, (mn_dmat*)out, err);
}

mn_status mn_dmat_read(const char* path, mn_dmat* out, mn_error* err) {
    if (!path || !out) return mn_error_set(err, MN_ERR_ARG, path, 0, "", "NULL argument");
    memset(out, 0, sizeof *out);
    return mn_io_read_path(path, dmat_reader, out, err);
}

mn_status mn_dmat_write(const char* path, const mn_dmat* m, mn_error* err) {
    if (!path || !m || m->rows <= 0 || m->cols <= 0 || !m->data)
        return mn_error_set(err, MN_ERR_ARG, path, 0, "", "bad matrix");
    size_t count = (size_t)m->rows * (size_t)m->cols;
    for (size_t k = 0; k < count; k++)
        if (!isfinite(m->data[k]))
            return mn_error_set(err, MN_ERR_ARG, path, 0, "data", "value not finite");
    mn_strbuf b;
    mn_strbuf_init(&b);
    mn_strbuf_printf(&b, "%d %d\n", m->cols, m->rows);
    for (int c = 0; c < m->cols; c++)
        for (int r = 0; r < m->rows; r++) {
            mn_strbuf_double(&b, m->data[(size_t)r * (size_t)m->cols + (size_t)c]);
            mn_strbuf_append(&b, "\n", 1);
        }
    return mn_strbuf_write(&b, path, err);
}

/* ---- TGF ------------------------------------------------------------------------------- */
void mn_tgf_free(mn_tgf* t) {
    if (!t) return;
    free(t->pos);
    free(t->edges);
    memset(t, 0, sizeof *t);
}

static int is_hash_line(scan* sc) {
    return scan_skip(sc, 0) == '#';
}

mn_status mn_tgf_read_mem(const char* text, size_t len, const char* name, mn_tgf* out,
                          mn_error* err) {
    if (!text || !out) return mn_error_set(err, MN_ERR_ARG, name, 0, "", "NULL argument");
    memset(out, 0, sizeof *out);
    char* buf = copy_text(text, len);
    if (!buf) return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    double* pos = malloc(lines * 3 * sizeof(double));
    int* edges = malloc(lines * 2 * sizeof(int));
    mn_status st = MN_OK;
    if (!pos || !edges) st = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    scan sc = {buf, 1};
    int nv = 0, ne = 0, section = 0; /* 0 vertices, 1 edges, 2 done */
    while (st == MN_OK && *sc.s) {
        if (rest_of_line_blank(&sc)) {
            scan_next_line(&sc);
            continue;
        }
        if (is_hash_line(&sc)) {
            if (++section > 2) section = 2;
            scan_next_line(&sc);
            continue;
        }
        if (section == 0) {
            long idx;
            double x[3];
            if (!scan_int(&sc, 0, &idx)) {
                st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "vertex", "expected an index");
                break;
            }
            for (int k = 0; k < 3 && st == MN_OK; k++)
                if (!scan_double(&sc, 0, &x[k]))
                    st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "vertex",
                                      "expected 3 finite coordinates");
            if (st != MN_OK) break;
            memcpy(pos + 3 * nv, x, sizeof x);
            nv++;
        } else if (section == 1) {
            long a, b;
            if (!scan_int(&sc, 0, &a) || !scan_int(&sc, 0, &b)) {
                st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "edge",
                                  "expected two vertex indices");
                break;
            }
            if (a < 1 || b < 1 || a > nv || b > nv || a == b) {
                st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "edge",
                                  "vertex index out of range 1..%d (or a loop)", nv);
                break;
            }
            edges[2 * ne] = (int)a - 1;
            edges[2 * ne + 1] = (int)b - 1;
            ne++;
        } else {
            st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "", "text after the closing '#'");
            break;
        }
        scan_next_line(&sc); /* flags after an edge, extra columns after a vertex */
    }
    if (st == MN_OK && nv == 0)
        st = mn_error_set(err, MN_ERR_PARSE, name, 0, "vertex", "no vertices");
    free(buf);
    if (st != MN_OK) {
        free(pos);
        free(edges);
        return st;
    }
    out->nverts = nv;
    out->pos = pos;
    out->nedges = ne;
    out->edges = edges;
    return MN_OK;
}

static mn_status tgf_reader(const char* t, size_t n, const char* name, void* out, mn_error* err) {
    return mn_tgf_read_mem(t, n, name, (mn_tgf*)out, err);
}

mn_status mn_tgf_read(const char* path, mn_tgf* out, mn_error* err) {
    if (!path || !out) return mn_error_set(err, MN_ERR_ARG, path, 0, "", "NULL argument");
    memset(out, 0, sizeof *out);
    return mn_io_read_path(path, tgf_reader, out, err);
}

mn_status mn_tgf_write(const char* path, const mn_tgf* t, mn_error* err) {
    if (!path || !t || t->nverts <= 0 || !t->pos || t->nedges < 0 || (t->nedges > 0 && !t->edges))
        return mn_error_set(err, MN_ERR_ARG, path, 0, "", "bad skeleton");
    for (int i = 0; i < 3 * t->nverts; i++)
        if (!isfinite(t->pos[i]))
            return mn_error_set(err, MN_ERR_ARG, path, 0, "vertex", "vertex %d is not finite",
                                i / 3 + 1);
    for (int e = 0; e < 2 * t->nedges; e++)
        if (t->edges[e] < 0 || t->edges[e] >= t->nverts)
            return mn_error_set(err, MN_ERR_ARG, path, 0, "edge",
                                "edge %d: vertex index out of range", e / 2 + 1);
    mn_strbuf b;
    mn_strbuf_init(&b);
    for (int i = 0; i < t->nverts; i++) {
        mn_strbuf_printf(&b, "%d", i + 1);
        for (int c = 0; c < 3; c++) {
            mn_strbuf_append(&b, " ", 1);
            mn_strbuf_double(&b, t->pos[3 * i + c]);
        }
        mn_strbuf_append(&b, "\n", 1);
    }
    mn_strbuf_append(&b, "#\n", 2);
    for (int e = 0; e < t->nedges; e++)
        mn_strbuf_printf(&b, "%d %d\n", t->edges[2 * e] + 1, t->edges[2 * e + 1] + 1);
    mn_strbuf_append(&b, "#\n", 2);
    return mn_strbuf_write(&b, path, err);
}

/* ---- Tmat ------------------------------------------------------------------------------ */
typedef struct tmat_out {
    int* nbones;
    mn_xform** xf;
} tmat_out;

mn_status mn_tmat_read_mem(const char* text, size_t len, const char* name, int* nbones,
                           mn_xform** xf, mn_error* err) {
    if (!text || !nbones || !xf) return mn_error_set(err, MN_ERR_ARG, name, 0, "", "NULL argument");
    *nbones = 0;
    *xf = NULL;
    char* buf = copy_text(text, len);
    if (!buf) return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    double* rows = malloc(lines * 3 * sizeof(double));
    mn_status st = rows ? MN_OK : mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    scan sc = {buf, 1};
    int nrows = 0;
    while (st == MN_OK && *sc.s) {
        if (rest_of_line_blank(&sc)) {
            scan_next_line(&sc);
            continue;
        }
        for (int k = 0; k < 3 && st == MN_OK; k++)
            if (!scan_double(&sc, 0, &rows[3 * nrows + k]))
                st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "row",
                                  "expected 3 finite numbers per row");
        if (st == MN_OK && !rest_of_line_blank(&sc))
            st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "row",
                              "more than 3 numbers in a row");
        if (st != MN_OK) break;
        nrows++;
        scan_next_line(&sc);
    }
    if (st == MN_OK && (nrows == 0 || nrows % 4 != 0))
        st = mn_error_set(err, MN_ERR_PARSE, name, sc.line, "rows",
                          "%d rows: expected 4 per bone ([R^T; t])", nrows);
    mn_xform* out = NULL;
    if (st == MN_OK) {
        out = malloc((size_t)(nrows / 4) * sizeof *out);
        if (!out) st = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    }
    if (st == MN_OK) {
        for (int b = 0; b < nrows / 4; b++) {
            const double* T = rows + 12 * b; /* [R^T; t]: row r of R^T is column r of R */
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    out[b].R.m[3 * r + c] = T[3 * c + r];
            out[b].p = mn_v3(T[9], T[10], T[11]);
        }
        *nbones = nrows / 4;
        *xf = out;
    }
    free(rows);
    free(buf);
    return st;
}

static mn_status tmat_reader(const char* t, size_t n, const char* name, void* out, mn_error* err) {
    tmat_out* o = out;
    return mn_tmat_read_mem(t, n, name, o->nbones, o->xf, err);
}

mn_status mn_tmat_read(const char* path, int* nbones, mn_xform** xf, mn_error* err) {
    if (!path || !nbones || !xf) return mn_error_set(err, MN_ERR_ARG, path, 0, "", "NULL argument");
    *nbones = 0;
    *xf = NULL;
    tmat_out o = {nbones, xf};
    return mn_io_read_path(path, tmat_reader, &o, err);
}

static mn_status tmat_text(const char* path, int nbones, const mn_xform* xf, mn_strbuf* s,
                           mn_error* err) {
    if (!path || nbones <= 0 || !xf)
        return mn_error_set(err, MN_ERR_ARG, path ? path : "", 0, "", "bad arguments");
    for (int b = 0; b < nbones; b++) {
        int ok = mn_vec3_isfinite(xf[b].p);
        for (int k = 0; k < 9; k++)
            ok = ok && isfinite(xf[b].R.m[k]);
        if (!ok)
            return mn_error_set(err, MN_ERR_ARG, path, 0, "bone", "transform %d is not finite", b);
    }
    mn_strbuf_init(s);
    for (int b = 0; b < nbones; b++) {
        const double* m = xf[b].R.m;
        for (int r = 0; r < 3; r++)
            mn_strbuf_printf(s, "%.17g %.17g %.17g\n", m[r], m[3 + r], m[6 + r]);
        mn_strbuf_printf(s, "%.17g %.17g %.17g\n", xf[b].p.x, xf[b].p.y, xf[b].p.z);
    }
    if (s->failed) {
        mn_strbuf_free(s);
        return mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
    }
    return MN_OK;
}

mn_status mn_tmat_write(const char* path, int nbones, const mn_xform* xf, mn_error* err) {
    mn_strbuf s;
    mn_status st = tmat_text(path, nbones, xf, &s, err);
    return st ? st : mn_strbuf_write(&s, path, err);
}

mn_status mn_tmat_format(const char* path, int nbones, const mn_xform* xf, char** text, size_t* len,
                         mn_error* err) {
    if (text) *text = NULL;
    if (len) *len = 0;
    if (!text || !len)
        return mn_error_set(err, MN_ERR_ARG, path ? path : "", 0, "", "NULL argument");
    mn_strbuf s;
    mn_status st = tmat_text(path, nbones, xf, &s, err);
    if (st) return st;
    *text = s.data ? s.data : calloc(1, 1);
    *len = s.len;
    return *text ? MN_OK : mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
}
