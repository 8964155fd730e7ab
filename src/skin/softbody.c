/* A position-based soft body: XPBD (Macklin, Mueller & Chentanez, "XPBD: Position-Based
 * Simulation of Compliant Constrained Dynamics", 2016) with distance constraints on the
 * mesh edges, one volume constraint on the closed mesh, volume elements (tetrahedra, or
 * triangles in the plane: Mueller et al., "Position Based Dynamics", 2007, 3.3-3.4),
 * springs that grab vertices, gravity, a ground plane and substepping (Macklin et al., "Small Steps
 * in Physics Simulation", 2019: one constraint iteration per substep, so the multipliers start from
 * zero in each substep).
 *
 * This is the simulation the fit of fit.c runs inside of (seed, introduction: "the
 * inverse kinematics step is performed in each time step"): its vertices are the fit's
 * targets. Deterministic (fixed constraint order), and no allocation in a step. */
#include <marionette/skin.h>

#include "skin/softbody_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mn_softbody_options mn_softbody_default(void) {
    mn_softbody_options o;
    memset(&o, 0, sizeof o);
    o.edge_compliance = 1e-6;
    o.volume_compliance = 0;
    o.gravity = mn_v3(0, -9.81, 0);
    o.ground = -INFINITY;
    o.damping = 0.5;
    o.substeps = 10;
    o.element_compliance = 0;
    return o;
}

void mn_softbody_destroy(mn_softbody* sb) {
    if (!sb) return;
    free(sb->x);
    free(sb->v);
    free(sb->inv_mass);
    free(sb->pin_target);
    free(sb->tris);
    free(sb->edges);
    free(sb->rest_len);
    free(sb->prev);
    free(sb->mass);
    free(sb->grad);
    free(sb->saved);
    free(sb->elem);
    free(sb->elem_rest);
    free(sb->x4_block);
    free(sb->runs);
    free(sb);
}

static int cmp_edge(const void* a, const void* b) {
    const int* x = a;
    const int* y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

static double mesh_volume(const double* x, int ntris, const int* tris) {
    double v = 0;
    for (int t = 0; t < ntris; t++) {
        const double* a = x + 3 * tris[3 * t];
        const double* b = x + 3 * tris[3 * t + 1];
        const double* c = x + 3 * tris[3 * t + 2];
        /* a . (b x c) / 6 */
        v += a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) +
             a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    return v / 6.0;
}

double mn_softbody_volume(const mn_softbody* sb) {
    return mesh_volume(sb->x, sb->ntris, sb->tris);
}

int mn_sb_check_mesh(int nverts, const double* pos, int ntris, const int* tris, const char* what,
                     mn_error* err) {
    if (nverts <= 0 || !pos || ntris < 0 || (ntris > 0 && !tris)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, what, "bad mesh");
        return 0;
    }
    for (int i = 0; i < 3 * nverts; i++)
        if (!isfinite(pos[i])) {
            mn_error_set(err, MN_ERR_ARG, "", 0, "pos", "vertex %d is not finite", i / 3);
            return 0;
        }
    for (int i = 0; i < 3 * ntris; i++)
        if (tris[i] < 0 || tris[i] >= nverts) {
            mn_error_set(err, MN_ERR_ARG, "", 0, "tris", "triangle %d has an index out of range",
                         i / 3);
            return 0;
        }
    return 1;
}

mn_softbody* mn_softbody_create(int nverts, const double* pos, int ntris, const int* tris,
                                const double* mass, const mn_softbody_options* opt, mn_error* err) {
    if (!mn_sb_check_mesh(nverts, pos, ntris, tris, "softbody", err)) return NULL;
    mn_softbody_options o = opt ? *opt : mn_softbody_default();
    if (o.substeps < 1 || !(o.edge_compliance >= 0) || !(o.volume_compliance >= 0) ||
        !(o.damping >= 0) || !mn_vec3_isfinite(o.gravity) || !(o.element_compliance >= 0)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "options",
                     "substeps >= 1, compliances and damping >= 0");
        return NULL;
    }
    mn_softbody* sb = calloc(1, sizeof *sb);
    if (!sb) goto nomem;
    sb->nverts = nverts;
    sb->ntris = ntris;
    sb->opt = o;
    size_t n3 = (size_t)nverts * 3;
    sb->x = malloc(n3 * sizeof(double));
    sb->v = calloc(n3, sizeof(double));
    sb->prev = malloc(n3 * sizeof(double));
    sb->pin_target = malloc(n3 * sizeof(double));
    sb->grad = malloc(n3 * sizeof(double));
    sb->saved = malloc(2 * n3 * sizeof(double));
    sb->inv_mass = malloc((size_t)nverts * sizeof(double));
    sb->mass = malloc((size_t)nverts * sizeof(double));
    sb->tris = malloc((size_t)(ntris > 0 ? ntris : 1) * 3 * sizeof(int));
    int* all = malloc((size_t)(ntris > 0 ? ntris : 1) * 6 * sizeof(int));
    if (!sb->x || !sb->prev || !sb->v || !sb->pin_target || !sb->grad || !sb->saved ||
        !sb->inv_mass || !sb->mass || !sb->tris || !all || !mn_sb_alloc_x4(sb)) {
        free(all);
        goto nomem;
    }
    memcpy(sb->x, pos, n3 * sizeof(double));
    memcpy(sb->pin_target, pos, n3 * sizeof(double));
    if (ntris) memcpy(sb->tris, tris, (size_t)ntris * 3 * sizeof(int));
    for (int i = 0; i < nverts; i++) {
        double mi = mass ? mass[i] : 1.0 / nverts;
        if (!(mi > 0) || !isfinite(mi)) {
            free(all);
            mn_softbody_destroy(sb);
            mn_error_set(err, MN_ERR_ARG, "", 0, "mass", "vertex %d has mass %g", i, mi);
            return NULL;
        }
        sb->mass[i] = mi;
        sb->inv_mass[i] = 1.0 / mi;
    }
    /* unique edges of the triangles, sorted (a < b) */
    int ne = 0;
    for (int t = 0; t < ntris; t++)
        for (int e = 0; e < 3; e++) {
            int a = tris[3 * t + e], b = tris[3 * t + (e + 1) % 3];
            if (a == b) continue;
            all[2 * ne] = a < b ? a : b;
            all[2 * ne + 1] = a < b ? b : a;
            ne++;
        }
    qsort(all, (size_t)ne, 2 * sizeof(int), cmp_edge);
    int nu = 0;
    for (int e = 0; e < ne; e++)
        if (nu == 0 || all[2 * e] != all[2 * (nu - 1)] || all[2 * e + 1] != all[2 * (nu - 1) + 1]) {
            all[2 * nu] = all[2 * e];
            all[2 * nu + 1] = all[2 * e + 1];
            nu++;
        }
    sb->nedges = nu;
    sb->edges = all;
    sb->rest_len = malloc((size_t)(nu > 0 ? nu : 1) * sizeof(double));
    if (!sb->rest_len) goto nomem;
    for (int e = 0; e < nu; e++) {
        const double* a = pos + 3 * all[2 * e];
        const double* b = pos + 3 * all[2 * e + 1];
        sb->rest_len[e] = sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                               (a[2] - b[2]) * (a[2] - b[2]));
    }
    sb->rest_volume = mesh_volume(pos, ntris, tris);
    return sb;
nomem:
    mn_softbody_destroy(sb);
    mn_error_set(err, MN_ERR_NOMEM, "", 0, "softbody", "out of memory");
    return NULL;
}

mn_status mn_softbody_add_distances(mn_softbody* sb, int n, const int* pairs, mn_error* err) {
    if (!sb || n < 0 || (n > 0 && !pairs))
        return mn_error_set(err, MN_ERR_ARG, "", 0, "pairs", "bad arguments");
    for (int k = 0; k < 2 * n; k++)
        if (pairs[k] < 0 || pairs[k] >= sb->nverts)
            return mn_error_set(err, MN_ERR_ARG, "", 0, "pairs",
                                "pair %d: vertex index out of range", k / 2);
    for (int k = 0; k < n; k++)
        if (pairs[2 * k] == pairs[2 * k + 1])
            return mn_error_set(err, MN_ERR_ARG, "", 0, "pairs", "pair %d joins a vertex to itself",
                                k);
    int ne = sb->nedges + n;
    int* e = realloc(sb->edges, (size_t)(ne > 0 ? ne : 1) * 2 * sizeof(int));
    if (!e) return mn_error_set(err, MN_ERR_NOMEM, "", 0, "pairs", "out of memory");
    sb->edges = e;
    double* L = realloc(sb->rest_len, (size_t)(ne > 0 ? ne : 1) * sizeof(double));
    if (!L) return mn_error_set(err, MN_ERR_NOMEM, "", 0, "pairs", "out of memory");
    sb->rest_len = L;
    for (int k = 0; k < n; k++) {
        int a = pairs[2 * k], b = pairs[2 * k + 1], t = sb->nedges + k;
        e[2 * t] = a;
        e[2 * t + 1] = b;
        const double *pa = sb->x + 3 * a, *pb = sb->x + 3 * b;
        L[t] = sqrt((pa[0] - pb[0]) * (pa[0] - pb[0]) + (pa[1] - pb[1]) * (pa[1] - pb[1]) +
                    (pa[2] - pb[2]) * (pa[2] - pb[2]));
    }
    sb->nedges = ne;
    return MN_OK;
}

void mn_softbody_pin(mn_softbody* sb, int i, int pinned) {
    if (!sb || i < 0 || i >= sb->nverts) return;
    sb->inv_mass[i] = pinned ? 0.0 : 1.0 / sb->mass[i];
    if (pinned) {
        for (int c = 0; c < 3; c++)
            sb->v[3 * i + c] = 0;
    }
}

/* The volume constraint C = V(x) - V0 with dV/dx_i = 1/6 sum over triangles t of i of the
 * cross product of t's other two corners (in winding order). */
static void solve_volume(mn_softbody* sb, double alpha_t) {
    if (sb->ntris == 0 || sb->rest_volume == 0) return;
    double* x = sb->x;
    double* g = sb->grad;
    memset(g, 0, (size_t)sb->nverts * 3 * sizeof(double));
    for (int t = 0; t < sb->ntris; t++) {
        const int* tr = sb->tris + 3 * t;
        for (int e = 0; e < 3; e++) {
            const double* b = x + 3 * tr[(e + 1) % 3];
            const double* c = x + 3 * tr[(e + 2) % 3];
            double* gi = g + 3 * tr[e];
            gi[0] += (b[1] * c[2] - b[2] * c[1]) / 6.0;
            gi[1] += (b[2] * c[0] - b[0] * c[2]) / 6.0;
            gi[2] += (b[0] * c[1] - b[1] * c[0]) / 6.0;
        }
    }
    double C = mesh_volume(x, sb->ntris, sb->tris) - sb->rest_volume;
    double den = alpha_t;
    for (int i = 0; i < sb->nverts; i++)
        den += sb->inv_mass[i] *
               (g[3 * i] * g[3 * i] + g[3 * i + 1] * g[3 * i + 1] + g[3 * i + 2] * g[3 * i + 2]);
    if (!(den > 0)) return;
    double dl = -C / den;
    for (int i = 0; i < sb->nverts; i++)
        for (int c = 0; c < 3; c++)
            x[3 * i + c] += sb->inv_mass[i] * dl * g[3 * i + c];
}

/* A tetrahedron's signed volume det[b-a, c-a, d-a] / 6 and its gradients (Mueller et al.
 * 2007, 3.4: dV/dx_b = (c-a) x (d-a) / 6 and cyclically, dV/dx_a = -(the others)). */
static double tet_volume(const double* a, const double* b, const double* c, const double* d,
                         double g[12]) {
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; k++) {
        u[k] = b[k] - a[k];
        v[k] = c[k] - a[k];
        w[k] = d[k] - a[k];
    }
    double vw[3] = {v[1] * w[2] - v[2] * w[1], v[2] * w[0] - v[0] * w[2],
                    v[0] * w[1] - v[1] * w[0]};
    if (g) {
        double wu[3] = {w[1] * u[2] - w[2] * u[1], w[2] * u[0] - w[0] * u[2],
                        w[0] * u[1] - w[1] * u[0]};
        double uv[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                        u[0] * v[1] - u[1] * v[0]};
        for (int k = 0; k < 3; k++) {
            g[3 + k] = vw[k] / 6.0;
            g[6 + k] = wu[k] / 6.0;
            g[9 + k] = uv[k] / 6.0;
            g[k] = -(g[3 + k] + g[6 + k] + g[9 + k]);
        }
    }
    return (u[0] * vw[0] + u[1] * vw[1] + u[2] * vw[2]) / 6.0;
}

/* A triangle's signed area in the xy-plane and its gradients (z ignored). */
static double tri_area(const double* a, const double* b, const double* c, double g[12]) {
    double ux = b[0] - a[0], uy = b[1] - a[1], vx = c[0] - a[0], vy = c[1] - a[1];
    if (g) {
        g[3] = 0.5 * vy, g[4] = -0.5 * vx, g[5] = 0;
        g[6] = -0.5 * uy, g[7] = 0.5 * ux, g[8] = 0;
        g[0] = -(g[3] + g[6]), g[1] = -(g[4] + g[7]), g[2] = 0;
    }
    return 0.5 * (ux * vy - uy * vx);
}

static double elem_measure(const double* x, int corners, const int* e, double g[12]) {
    if (corners == 4) return tet_volume(x + 3 * e[0], x + 3 * e[1], x + 3 * e[2], x + 3 * e[3], g);
    return tri_area(x + 3 * e[0], x + 3 * e[1], x + 3 * e[2], g);
}

static int check_elements(int nverts, const double* pos, int corners, int n, const int* idx,
                          mn_error* err) {
    if ((corners != 3 && corners != 4) || n < 0 || (n > 0 && !idx)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "elements", "corners must be 3 or 4");
        return 0;
    }
    for (int k = 0; k < corners * n; k++)
        if (idx[k] < 0 || idx[k] >= nverts) {
            mn_error_set(err, MN_ERR_ARG, "", 0, "elements",
                         "element %d has a vertex index out of range", k / corners);
            return 0;
        }
    for (int e = 0; e < n; e++) {
        double v = elem_measure(pos, corners, idx + corners * e, NULL);
        if (!(fabs(v) > 0) || !isfinite(v)) {
            mn_error_set(err, MN_ERR_ARG, "", 0, "elements", "element %d is degenerate", e);
            return 0;
        }
    }
    return 1;
}

mn_status mn_softbody_element_masses(int nverts, const double* pos, int corners, int n,
                                     const int* idx, double density, double* mass, mn_error* err) {
    if (nverts <= 0 || !pos || !mass || !(density > 0) || !isfinite(density))
        return mn_error_set(err, MN_ERR_ARG, "", 0, "density", "must be finite and > 0");
    if (!check_elements(nverts, pos, corners, n, idx, err)) return err ? err->status : MN_ERR_ARG;
    for (int i = 0; i < nverts; i++)
        mass[i] = 0;
    for (int e = 0; e < n; e++) {
        const int* el = idx + corners * e;
        double share = density * fabs(elem_measure(pos, corners, el, NULL)) / corners;
        for (int c = 0; c < corners; c++)
            mass[el[c]] += share;
    }
    double least = INFINITY;
    for (int i = 0; i < nverts; i++)
        if (mass[i] > 0 && mass[i] < least) least = mass[i];
    for (int i = 0; i < nverts; i++)
        if (!(mass[i] > 0)) mass[i] = isfinite(least) ? least : 1.0 / nverts;
    return MN_OK;
}

static int has_edge(const int* sorted, int n, int a, int b) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const int* e = sorted + 2 * mid;
        if (e[0] == a && e[1] == b) return 1;
        if (e[0] < a || (e[0] == a && e[1] < b))
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

/* Reorders n constraints of k vertices each (idx, n x k) so that consecutive ones share no
 * vertex: greedy colouring (each constraint takes the first colour none of its vertices
 * has), then the constraints colour by colour, in their order within a colour. The
 * projections stay Gauss-Seidel, in another fixed order; without shared vertices between
 * neighbours in that order the processor overlaps them instead of waiting for each
 * result (the colouring of parallel PBD, Fratarcangeli & Pellacini 2015, used here for
 * instruction-level parallelism, and for the vectors of softbody_solve.c). Up to 63
 * colours; what finds none goes last. first[c] is where colour c starts (first[64] = n;
 * colour 63 is the rest, whose members may share vertices). Setup time: allocates; returns
 * 0 when out of memory (the order is then left as it was). */
static int colour_order(int* idx, int k, int n, int nverts, int first[65]) {
    uint64_t* used = calloc((size_t)nverts, sizeof(uint64_t));
    uint8_t* col = malloc((size_t)(n > 0 ? n : 1));
    int* out = malloc((size_t)(n > 0 ? n : 1) * k * sizeof(int));
    int count[65] = {0};
    if (!used || !col || !out) {
        free(used);
        free(col);
        free(out);
        return 0;
    }
    for (int e = 0; e < n; e++) {
        uint64_t busy = 0;
        for (int q = 0; q < k; q++)
            busy |= used[idx[k * e + q]];
        int c = 0;
        while (c < 63 && (busy >> c & 1))
            c++;
        col[e] = (uint8_t)c;
        count[c + 1]++;
        if (c < 63)
            for (int q = 0; q < k; q++)
                used[idx[k * e + q]] |= (uint64_t)1 << c;
    }
    for (int c = 0; c < 64; c++)
        count[c + 1] += count[c];
    memcpy(first, count, sizeof count);
    for (int e = 0; e < n; e++)
        memcpy(out + (size_t)k * count[col[e]]++, idx + (size_t)k * e, (size_t)k * sizeof(int));
    memcpy(idx, out, (size_t)n * k * sizeof(int));
    free(used);
    free(col);
    free(out);
    return 1;
}

mn_status mn_softbody_add_elements(mn_softbody* sb, int corners, int n, const int* idx,
                                   mn_error* err) {
    if (!sb) return mn_error_set(err, MN_ERR_ARG, "", 0, "softbody", "NULL");
    if (!check_elements(sb->nverts, sb->x, corners, n, idx, err))
        return err ? err->status : MN_ERR_ARG;
    if (sb->nelem > 0 && corners != sb->elem_corners)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "elements",
                            "the body already has elements of %d corners", sb->elem_corners);
    if (n == 0) return MN_OK;
    int ne = sb->nelem + n, npe = corners == 4 ? 6 : 3;
    int* el = realloc(sb->elem, (size_t)ne * corners * sizeof(int));
    if (!el) return mn_error_set(err, MN_ERR_NOMEM, "", 0, "elements", "out of memory");
    sb->elem = el;
    double* rest = realloc(sb->elem_rest, (size_t)ne * sizeof(double));
    if (!rest) return mn_error_set(err, MN_ERR_NOMEM, "", 0, "elements", "out of memory");
    sb->elem_rest = rest;
    /* the new elements' edges, sorted and unique, less those already constrained */
    int* old = malloc((size_t)(sb->nedges > 0 ? sb->nedges : 1) * 2 * sizeof(int));
    int* cand = malloc((size_t)n * npe * 2 * sizeof(int));
    if (!old || !cand) {
        free(old);
        free(cand);
        return mn_error_set(err, MN_ERR_NOMEM, "", 0, "elements", "out of memory");
    }
    for (int e = 0; e < sb->nedges; e++) {
        int a = sb->edges[2 * e], b = sb->edges[2 * e + 1];
        old[2 * e] = a < b ? a : b;
        old[2 * e + 1] = a < b ? b : a;
    }
    qsort(old, (size_t)sb->nedges, 2 * sizeof(int), cmp_edge);
    int nc = 0;
    for (int e = 0; e < n; e++) {
        const int* v = idx + corners * e;
        for (int p = 0; p < corners; p++)
            for (int q = p + 1; q < corners; q++) {
                int a = v[p] < v[q] ? v[p] : v[q], b = v[p] < v[q] ? v[q] : v[p];
                if (a == b || has_edge(old, sb->nedges, a, b)) continue;
                cand[2 * nc] = a;
                cand[2 * nc + 1] = b;
                nc++;
            }
    }
    qsort(cand, (size_t)nc, 2 * sizeof(int), cmp_edge);
    int nu = 0;
    for (int e = 0; e < nc; e++)
        if (nu == 0 || cand[2 * e] != cand[2 * (nu - 1)] ||
            cand[2 * e + 1] != cand[2 * (nu - 1) + 1]) {
            cand[2 * nu] = cand[2 * e];
            cand[2 * nu + 1] = cand[2 * e + 1];
            nu++;
        }
    free(old);
    int efirst[65], tfirst[65], e0 = sb->nedges;
    int ecol = colour_order(cand, 2, nu, sb->nverts, efirst);
    mn_status st = mn_softbody_add_distances(sb, nu, cand, err);
    free(cand);
    if (st != MN_OK) return st;
    memcpy(el + corners * sb->nelem, idx, (size_t)n * corners * sizeof(int));
    int tcol = colour_order(el + corners * sb->nelem, corners, n, sb->nverts, tfirst);
    /* the colours as runs for the vectors (not the triangles in the plane) */
    for (int c = 0; c < 63; c++) {
        if ((ecol && !mn_sb_add_run(sb, 0, e0 + efirst[c], e0 + efirst[c + 1])) ||
            (tcol && corners == 4 &&
             !mn_sb_add_run(sb, 1, sb->nelem + tfirst[c], sb->nelem + tfirst[c + 1])))
            return mn_error_set(err, MN_ERR_NOMEM, "", 0, "elements", "out of memory");
    }
    for (int e = 0; e < n; e++) {
        int* d = el + corners * (sb->nelem + e);
        double v = elem_measure(sb->x, corners, d, NULL);
        if (v < 0) { /* reorder to a positive measure */
            int t = d[1];
            d[1] = d[2];
            d[2] = t;
            v = -v;
        }
        rest[sb->nelem + e] = v;
    }
    sb->nelem = ne;
    sb->elem_corners = corners;
    return MN_OK;
}

mn_status mn_softbody_grab(mn_softbody* sb, int i, mn_vec3 target, double compliance) {
    if (!sb || i < 0 || i >= sb->nverts || !mn_vec3_isfinite(target) || !(compliance >= 0) ||
        !isfinite(compliance))
        return MN_ERR_ARG;
    int k = 0;
    while (k < sb->ngrab && sb->grab_idx[k] != i)
        k++;
    if (k == sb->ngrab) {
        if (sb->ngrab == MN_SOFTBODY_MAX_GRABS) return MN_ERR_NOMEM;
        sb->ngrab++;
    }
    sb->grab_idx[k] = i;
    sb->grab_target[3 * k] = target.x;
    sb->grab_target[3 * k + 1] = target.y;
    sb->grab_target[3 * k + 2] = target.z;
    sb->grab_compliance[k] = compliance;
    return MN_OK;
}

void mn_softbody_release(mn_softbody* sb, int i) {
    if (!sb) return;
    if (i < 0) {
        sb->ngrab = 0;
        return;
    }
    for (int k = 0; k < sb->ngrab; k++)
        if (sb->grab_idx[k] == i) {
            int last = --sb->ngrab;
            sb->grab_idx[k] = sb->grab_idx[last];
            memcpy(sb->grab_target + 3 * k, sb->grab_target + 3 * last, 3 * sizeof(double));
            sb->grab_compliance[k] = sb->grab_compliance[last];
            return;
        }
}

/* Triangles in the plane: C = A(x) - A0 with the gradients of tri_area. */
static void solve_tris(mn_softbody* sb, double alpha_t) {
    double* x = sb->x;
    for (int e = 0; e < sb->nelem; e++) {
        const int* el = sb->elem + 3 * e;
        double g[12];
        double C = tri_area(x + 3 * el[0], x + 3 * el[1], x + 3 * el[2], g) - sb->elem_rest[e];
        double den = alpha_t;
        for (int c = 0; c < 3; c++)
            den += sb->inv_mass[el[c]] * (g[3 * c] * g[3 * c] + g[3 * c + 1] * g[3 * c + 1]);
        if (!(den > 0)) continue;
        double dl = -C / den;
        for (int c = 0; c < 3; c++) {
            double w = sb->inv_mass[el[c]] * dl;
            double* xc = x + 3 * el[c];
            xc[0] += w * g[3 * c];
            xc[1] += w * g[3 * c + 1];
        }
    }
}

/* Grabs: zero-length springs C = x_i - p, one row per axis with the same denominator. */
static void solve_grabs(mn_softbody* sb, double h2) {
    for (int k = 0; k < sb->ngrab; k++) {
        int i = sb->grab_idx[k];
        double w = sb->inv_mass[i];
        if (w == 0) continue;
        double s = w / (w + sb->grab_compliance[k] / h2);
        double* xi = sb->x + 3 * i;
        for (int c = 0; c < 3; c++)
            xi[c] -= s * (xi[c] - sb->grab_target[3 * k + c]);
    }
}

void mn_sb_predict(mn_softbody* sb, double h, int s, int ns) {
    for (int i = 0; i < sb->nverts; i++)
        mn_sb_predict_vertex(sb, i, h, s, ns);
}

void mn_sb_project(mn_softbody* sb, double h, int packed) {
    const mn_softbody_options* o = &sb->opt;
    double* x = sb->x;
    mn_sb_solve_edges_tets(sb, h, packed); /* softbody_solve.c */
    if (sb->nelem && sb->elem_corners == 3) solve_tris(sb, o->element_compliance / (h * h));
    solve_volume(sb, o->volume_compliance / (h * h));
    if (sb->ngrab) solve_grabs(sb, h * h);
    /* ground contact: project out, with the tangential motion of the substep removed
     * (static friction) */
    if (isfinite(o->ground))
        for (int i = 0; i < sb->nverts; i++) {
            double* xi = x + 3 * i;
            if (sb->inv_mass[i] > 0 && xi[1] < o->ground) {
                xi[1] = o->ground;
                xi[0] = sb->prev[3 * i];
                xi[2] = sb->prev[3 * i + 2];
            }
        }
}

void mn_sb_velocities(mn_softbody* sb, double h, double damp) {
    const double* x = sb->x;
    double f = damp / h;
    for (int i = 0; i < sb->nverts; i++) {
        if (sb->inv_mass[i] == 0) continue;
        for (int c = 0; c < 3; c++)
            sb->v[3 * i + c] = (x[3 * i + c] - sb->prev[3 * i + c]) * f;
    }
}

void mn_sb_save(mn_softbody* sb) {
    size_t n3 = (size_t)sb->nverts * 3;
    memcpy(sb->saved, sb->x, n3 * sizeof(double));
    memcpy(sb->saved + n3, sb->v, n3 * sizeof(double));
}

int mn_sb_finish(mn_softbody* sb, mn_softbody_result* r) {
    int n = sb->nverts;
    size_t n3 = (size_t)n * 3;
    /* Never leave a non-finite state: restore the start of the step. */
    for (int i = 0; i < 3 * n; i++)
        if (!isfinite(sb->x[i]) || !isfinite(sb->v[i])) {
            memcpy(sb->x, sb->saved, n3 * sizeof(double));
            memcpy(sb->v, sb->saved + n3, n3 * sizeof(double));
            r->status = MN_ERR_NOCONVERGE;
            snprintf(
                r->message, sizeof r->message,
                "x: vertex %d is not finite after the step (state restored; try more substeps)",
                i / 3);
            return 0;
        }
    double vmax2 = 0;
    for (int i = 0; i < n; i++) {
        const double* vi = sb->v + 3 * i;
        double v2 = vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2];
        if (v2 > vmax2) vmax2 = v2;
    }
    r->max_speed = sqrt(vmax2);
    r->status = MN_OK;
    return 1;
}

mn_status mn_softbody_step(mn_softbody* sb, double dt, mn_softbody_result* r) {
    mn_softbody_result dummy;
    if (!r) r = &dummy;
    memset(r, 0, sizeof *r);
    if (!sb || !(dt > 0) || !isfinite(dt)) {
        r->status = MN_ERR_ARG;
        snprintf(r->message, sizeof r->message, "%s",
                 sb ? "dt: must be finite and > 0" : "softbody: NULL");
        return r->status;
    }
    int ns = sb->opt.substeps;
    mn_sb_save(sb);
    double h = dt / ns;
    double damp = fmax(0.0, 1.0 - sb->opt.damping * h);
    for (int s = 0; s < ns; s++) {
        mn_sb_predict(sb, h, s, ns);
        mn_sb_project(sb, h, 0);
        mn_sb_velocities(sb, h, damp);
    }
    r->iterations = ns;
    mn_sb_finish(sb, r);
    return r->status;
}
