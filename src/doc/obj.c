/* Wavefront OBJ: read vertex positions and faces (fan-triangulated), write positions and
 * triangles. Texture coordinates, normals, groups and materials are ignored on read. */
#include <marionette/meshio.h>

#include "doc/doc_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void mn_mesh_free(mn_mesh* mesh) {
    if (!mesh) return;
    free(mesh->pos);
    free(mesh->tris);
    memset(mesh, 0, sizeof *mesh);
}

/* Growable arrays for the reader. */
typedef struct obj_buf {
    double* pos;
    size_t npos, cappos; /* in doubles */
    int* tri;
    size_t ntri, captri; /* in ints */
} obj_buf;

static int grow(void** p, size_t* cap, size_t need, size_t elem) {
    if (need <= *cap) return 1;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void* q = realloc(*p, c * elem);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

static const char* skip_ws(const char* s) {
    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    return s;
}

/* Parses one face corner "v", "v/t", "v//n", "v/t/n"; returns the 0-based vertex index
 * (negative indices are relative to nv), or INT_MIN on a syntax error. */
static long face_index(const char** ps, long nv) {
    const char* s = *ps;
    char* e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || errno == ERANGE || v == 0) return INT_MIN;
    s = e;
    /* skip "/t" and "/n" parts */
    while (*s == '/') {
        s++;
        if (*s == '-' || *s == '+' || isdigit((unsigned char)*s)) {
            strtol(s, &e, 10);
            s = e;
        }
    }
    if (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') return INT_MIN;
    *ps = s;
    if (v < 0) return nv + v;
    return v - 1;
}

mn_status mn_obj_read_mem(const char* text, size_t len, const char* name, mn_mesh* mesh,
                          mn_warnings* warn, mn_error* err) {
    if (!text || !mesh) return mn_error_set(err, MN_ERR_ARG, name, 0, "", "NULL argument");
    memset(mesh, 0, sizeof *mesh);
    char* buf = malloc(len + 1);
    if (!buf) return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    memcpy(buf, text, len);
    buf[len] = 0;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == 0) buf[i] = ' '; /* embedded NULs are treated as spaces */

    obj_buf b = {0};
    mn_status st = MN_OK;
    int line = 0, ignored = 0, first_ignored = 0;
    long corner[3];
    char* p = buf;
    while (*p && st == MN_OK) {
        line++;
        char* eol = strchr(p, '\n');
        if (eol) *eol = 0;
        const char* s = skip_ws(p);
        if (s[0] == 'v' && (s[1] == ' ' || s[1] == '\t')) {
            double xyz[3];
            s += 2;
            for (int k = 0; k < 3; k++) {
                char* e;
                s = skip_ws(s);
                if (!mn_parse_double(s, &e, &xyz[k]) ||
                    (*e && *e != ' ' && *e != '\t' && *e != '\r')) {
                    st = mn_error_set(err, MN_ERR_PARSE, name, line, "v",
                                      "expected 3 finite coordinates");
                    break;
                }
                s = e;
            }
            if (st != MN_OK) break;
            if (b.npos / 3 >= (size_t)INT_MAX - 1 ||
                !grow((void**)&b.pos, &b.cappos, b.npos + 3, sizeof(double))) {
                st = mn_error_set(err, MN_ERR_NOMEM, name, line, "v", "too many vertices");
                break;
            }
            memcpy(b.pos + b.npos, xyz, sizeof xyz);
            b.npos += 3;
        } else if (s[0] == 'f' && (s[1] == ' ' || s[1] == '\t')) {
            s += 2;
            long nv = (long)(b.npos / 3);
            int nc = 0;
            for (;;) {
                s = skip_ws(s);
                if (!*s) break;
                long v = face_index(&s, nv);
                if (v == INT_MIN) {
                    st = mn_error_set(err, MN_ERR_PARSE, name, line, "f", "malformed vertex index");
                    break;
                }
                if (v < 0 || v >= INT_MAX) {
                    st = mn_error_set(err, MN_ERR_PARSE, name, line, "f",
                                      "vertex index out of range");
                    break;
                }
                /* fan triangulation: (c0, c_{k-1}, c_k) */
                if (nc < 2) {
                    corner[nc] = v;
                } else {
                    corner[2] = v;
                    if (b.ntri / 3 >= (size_t)INT_MAX - 1 ||
                        !grow((void**)&b.tri, &b.captri, b.ntri + 3, sizeof(int))) {
                        st = mn_error_set(err, MN_ERR_NOMEM, name, line, "f", "too many faces");
                        break;
                    }
                    b.tri[b.ntri++] = (int)corner[0];
                    b.tri[b.ntri++] = (int)corner[1];
                    b.tri[b.ntri++] = (int)corner[2];
                    corner[1] = corner[2];
                }
                nc++;
            }
            if (st == MN_OK && nc < 3)
                st = mn_error_set(err, MN_ERR_PARSE, name, line, "f",
                                  "a face needs 3 or more vertices");
        } else if (*s && *s != '#') {
            if (!ignored++) first_ignored = line;
        }
        if (!eol) break;
        p = eol + 1;
    }
    /* Positive indices may name vertices defined later in the file: check at the end. */
    if (st == MN_OK) {
        int nv = (int)(b.npos / 3);
        for (size_t i = 0; i < b.ntri; i++)
            if (b.tri[i] >= nv) {
                st = mn_error_set(err, MN_ERR_PARSE, name, 0, "f", "face refers to vertex %d of %d",
                                  b.tri[i] + 1, nv);
                break;
            }
        if (st == MN_OK && nv == 0)
            st = mn_error_set(err, MN_ERR_PARSE, name, 0, "v", "no vertices");
    }
    free(buf);
    if (st != MN_OK) {
        free(b.pos);
        free(b.tri);
        return st;
    }
    if (ignored)
        mn_warn(warn, name, first_ignored, "", "%d records other than v/f ignored", ignored);
    mesh->nverts = (int)(b.npos / 3);
    mesh->pos = b.pos;
    mesh->ntris = (int)(b.ntri / 3);
    mesh->tris = b.tri;
    return MN_OK;
}
