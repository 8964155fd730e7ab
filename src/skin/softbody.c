/* A position-based soft body: XPBD (Macklin, Mueller & Chentanez, "XPBD: Position-Based
 * Simulation of Compliant Constrained Dynamics", 2016) with distance constraints on the
 * mesh edges and one volume constraint on the closed mesh, gravity, a ground plane and
 * substepping (Macklin et al., "Small Steps in Physics Simulation", 2019: one constraint
 * iteration per substep, so the multipliers start from zero in each substep).
 *
 * This is the simulation the fit of fit.c runs inside of (seed, introduction: "the
 * inverse kinematics step is performed in each time step"): its vertices are the fit's
 * targets. Deterministic (fixed constraint order), and no allocation in a step. */
#include <marionette/skin.h>

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

mn_softbody* mn_softbody_create(int nverts, const double* pos, int ntris, const int* tris,
                                const double* mass, const mn_softbody_options* opt, mn_error* err) {
    if (nverts <= 0 || !pos || ntris < 0 || (ntris > 0 && !tris)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "softbody", "bad mesh");
        return NULL;
    }
    for (int i = 0; i < 3 * nverts; i++)
        if (!isfinite(pos[i])) {
            mn_error_set(err, MN_ERR_ARG, "", 0, "pos", "vertex %d is not finite", i / 3);
            return NULL;
        }
    for (int i = 0; i < 3 * ntris; i++)
        if (tris[i] < 0 || tris[i] >= nverts) {
            mn_error_set(err, MN_ERR_ARG, "", 0, "tris", "triangle %d has an index out of range",
                         i / 3);
            return NULL;
        }
    mn_softbody_options o = opt ? *opt : mn_softbody_default();
    if (o.substeps < 1 || !(o.edge_compliance >= 0) || !(o.volume_compliance >= 0) ||
        !(o.damping >= 0) || !mn_vec3_isfinite(o.gravity)) {
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
        !sb->inv_mass || !sb->mass || !sb->tris || !all) {
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

/* Distance constraints C = |x_a - x_b| - L (XPBD eq. 18 with lambda = 0 at a substep's
 * start: dlambda = -C / (w_a + w_b + alpha / h^2)). */
static void solve_edges(mn_softbody* sb, double alpha_t) {
    double* x = sb->x;
    for (int e = 0; e < sb->nedges; e++) {
        int a = sb->edges[2 * e], b = sb->edges[2 * e + 1];
        double wa = sb->inv_mass[a], wb = sb->inv_mass[b], w = wa + wb;
        if (w == 0) continue;
        double d[3] = {x[3 * a] - x[3 * b], x[3 * a + 1] - x[3 * b + 1],
                       x[3 * a + 2] - x[3 * b + 2]};
        double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (len < 1e-12) continue;
        double C = len - sb->rest_len[e];
        double dl = -C / (w + alpha_t);
        for (int c = 0; c < 3; c++) {
            double n = d[c] / len;
            x[3 * a + c] += wa * dl * n;
            x[3 * b + c] -= wb * dl * n;
        }
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
    const mn_softbody_options* o = &sb->opt;
    int ns = o->substeps, n = sb->nverts;
    size_t n3 = (size_t)n * 3;
    memcpy(sb->saved, sb->x, n3 * sizeof(double));
    memcpy(sb->saved + n3, sb->v, n3 * sizeof(double));
    double h = dt / ns;
    double damp = fmax(0.0, 1.0 - o->damping * h);
    double* x = sb->x;
    for (int s = 0; s < ns; s++) {
        /* predict; pinned vertices move linearly to their targets over the step */
        for (int i = 0; i < n; i++) {
            double* xi = x + 3 * i;
            double* pi = sb->prev + 3 * i;
            memcpy(pi, xi, 3 * sizeof(double));
            if (sb->inv_mass[i] == 0) {
                for (int c = 0; c < 3; c++)
                    xi[c] += (sb->pin_target[3 * i + c] - xi[c]) / (double)(ns - s);
                continue;
            }
            double* vi = sb->v + 3 * i;
            vi[0] += h * o->gravity.x;
            vi[1] += h * o->gravity.y;
            vi[2] += h * o->gravity.z;
            for (int c = 0; c < 3; c++)
                xi[c] += h * vi[c];
        }
        solve_edges(sb, o->edge_compliance / (h * h));
        solve_volume(sb, o->volume_compliance / (h * h));
        /* ground contact: project out, with the tangential motion of the substep removed
         * (static friction) */
        if (isfinite(o->ground))
            for (int i = 0; i < n; i++) {
                double* xi = x + 3 * i;
                if (sb->inv_mass[i] > 0 && xi[1] < o->ground) {
                    xi[1] = o->ground;
                    xi[0] = sb->prev[3 * i];
                    xi[2] = sb->prev[3 * i + 2];
                }
            }
        for (int i = 0; i < n; i++) {
            if (sb->inv_mass[i] == 0) continue;
            for (int c = 0; c < 3; c++)
                sb->v[3 * i + c] = damp * (x[3 * i + c] - sb->prev[3 * i + c]) / h;
        }
    }
    r->iterations = ns;
    /* Never leave a non-finite state: restore the start of the step. */
    for (int i = 0; i < 3 * n; i++)
        if (!isfinite(x[i]) || !isfinite(sb->v[i])) {
            memcpy(sb->x, sb->saved, n3 * sizeof(double));
            memcpy(sb->v, sb->saved + n3, n3 * sizeof(double));
            r->status = MN_ERR_NOCONVERGE;
            snprintf(
                r->message, sizeof r->message,
                "x: vertex %d is not finite after the step (state restored; try more substeps)",
                i / 3);
            return r->status;
        }
    double vmax2 = 0;
    for (int i = 0; i < n; i++) {
        const double* vi = sb->v + 3 * i;
        double v2 = vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2];
        if (v2 > vmax2) vmax2 = v2;
    }
    r->max_speed = sqrt(vmax2);
    r->status = MN_OK;
    return MN_OK;
}
