/* Volumes for a closed surface without a tetrahedralisation tool: the surface is embedded
 * in a lattice of cubes, each cut into six tetrahedra, and each surface vertex is carried
 * by the barycentric coordinates of the tetrahedron it lies in (the embedded, or "cage",
 * simulation of a detailed mesh: Mueller & Gross, "Interactive Virtual Materials", 2004, 4;
 * Faure et al., "Sparse Meshless Models of Complex Deformable Solids", 2011, use the same
 * split of a render mesh from the simulated one).
 *
 * A cell is kept when it holds a surface vertex or when its centre is inside the surface:
 * the generalised winding number (Jacobson, Kavan & Sorkine-Hornung, "Robust Inside-Outside
 * Segmentation using Generalized Winding Numbers", 2013, eq. 6 with the solid angle of Van
 * Oosterom & Strackee 1983) is above one half. It works on surfaces with small holes, as
 * real characters' meshes often have.
 *
 * A cube is cut along its main diagonal into the six tetrahedra of Kuhn's triangulation
 * (one per order of the three axes), which conform across neighbouring cubes, so the
 * lattice is one connected mesh. A point with cell coordinates u (in [0,1]^3) lies in the
 * tetrahedron of the order that sorts u decreasingly, u_a >= u_b >= u_c, with barycentric
 * coordinates (1 - u_a, u_a - u_b, u_b - u_c, u_c) at corners 0, e_a, e_a + e_b, e_a + e_b +
 * e_c. */
#include <marionette/skin.h>

#include "skin/softbody_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A lattice is refused beyond this many cells in its bounding box. */
#define LATTICE_MAX_CELLS (1 << 22)
/* ... and beyond this many cell-triangle pairs for the inside test (about a minute). */
#define LATTICE_MAX_WINDING 2e9

static const int kuhn[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

void mn_lattice_destroy(mn_lattice* L) {
    if (!L) return;
    free(L->nodes);
    free(L->tets);
    free(L->surf_tet);
    free(L->surf_bary);
    free(L->node_cell);
    free(L);
}

/* The solid angle of triangle (a, b, c) seen from p (Van Oosterom & Strackee). */
static double solid_angle(const double* a, const double* b, const double* c, const double* p) {
    double A[3] = {a[0] - p[0], a[1] - p[1], a[2] - p[2]};
    double B[3] = {b[0] - p[0], b[1] - p[1], b[2] - p[2]};
    double C[3] = {c[0] - p[0], c[1] - p[1], c[2] - p[2]};
    double la = sqrt(A[0] * A[0] + A[1] * A[1] + A[2] * A[2]);
    double lb = sqrt(B[0] * B[0] + B[1] * B[1] + B[2] * B[2]);
    double lc = sqrt(C[0] * C[0] + C[1] * C[1] + C[2] * C[2]);
    double det = A[0] * (B[1] * C[2] - B[2] * C[1]) - A[1] * (B[0] * C[2] - B[2] * C[0]) +
                 A[2] * (B[0] * C[1] - B[1] * C[0]);
    double ab = A[0] * B[0] + A[1] * B[1] + A[2] * B[2];
    double ac = A[0] * C[0] + A[1] * C[1] + A[2] * C[2];
    double bc = B[0] * C[0] + B[1] * C[1] + B[2] * C[2];
    return 2 * atan2(det, la * lb * lc + ab * lc + ac * lb + bc * la);
}

static double winding(int ntris, const int* tris, const double* pos, const double* p) {
    double w = 0;
    for (int t = 0; t < ntris; t++)
        w += solid_angle(pos + 3 * tris[3 * t], pos + 3 * tris[3 * t + 1],
                         pos + 3 * tris[3 * t + 2], p);
    return w / (4 * MN_PI);
}

/* The cell of point p and its coordinates in it, clamped to the lattice. */
static long cell_of(const mn_lattice* L, const double* p, double u[3]) {
    int c[3];
    for (int a = 0; a < 3; a++) {
        double s = (p[a] - L->origin[a]) / L->cell;
        int i = (int)floor(s);
        if (i < 0) i = 0;
        if (i > L->dims[a] - 1) i = L->dims[a] - 1;
        c[a] = i;
        u[a] = fmin(1.0, fmax(0.0, s - i));
    }
    return ((long)c[2] * L->dims[1] + c[1]) * L->dims[0] + c[0];
}

/* The cells a surface vertex falls in, and those whose centre is inside the surface (its
 * winding number above one half). */
static void mark_cells(const mn_lattice* L, uint8_t* active, int nverts, const double* pos,
                       int ntris, const int* tris) {
    int nx = L->dims[0], ny = L->dims[1], nz = L->dims[2];
    double u[3];
    for (int i = 0; i < nverts; i++)
        active[cell_of(L, pos + 3 * i, u)] = 1;
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                long c = ((long)z * ny + y) * nx + x;
                if (active[c] || ntris == 0) continue;
                double p[3] = {L->origin[0] + (x + 0.5) * L->cell,
                               L->origin[1] + (y + 0.5) * L->cell,
                               L->origin[2] + (z + 0.5) * L->cell};
                if (winding(ntris, tris, pos, p) > 0.5) active[c] = 1;
            }
}

/* The nodes' positions and grid cells, from the grid's numbering node_id. */
static void place_nodes(mn_lattice* L, const int* node_id) {
    int nx = L->dims[0], ny = L->dims[1], nz = L->dims[2];
    for (int z = 0; z <= nz; z++)
        for (int y = 0; y <= ny; y++)
            for (int x = 0; x <= nx; x++) {
                int id = node_id[((long)z * (ny + 1) + y) * (nx + 1) + x];
                if (id < 0) continue;
                L->nodes[3 * id] = L->origin[0] + x * L->cell;
                L->nodes[3 * id + 1] = L->origin[1] + y * L->cell;
                L->nodes[3 * id + 2] = L->origin[2] + z * L->cell;
                L->node_cell[3 * id] = x;
                L->node_cell[3 * id + 1] = y;
                L->node_cell[3 * id + 2] = z;
            }
}

/* Six tetrahedra per kept cell (Kuhn's split along the diagonal, the same in every cell so
 * that neighbours share faces), each of positive volume; tet_of_cell[c] their first. */
static void cut_cells(mn_lattice* L, const uint8_t* active, const int* node_id, long ncell,
                      long* tet_of_cell) {
    int nx = L->dims[0], ny = L->dims[1];
    int t = 0;
    for (long c = 0; c < ncell; c++) {
        tet_of_cell[c] = -1;
        if (!active[c]) continue;
        tet_of_cell[c] = t;
        int x = (int)(c % nx), y = (int)((c / nx) % ny), z = (int)(c / ((long)nx * ny));
        for (int k = 0; k < 6; k++) {
            int bits[4] = {0, 1 << kuhn[k][0], (1 << kuhn[k][0]) | (1 << kuhn[k][1]), 7};
            int* T = L->tets + 4 * (t + k);
            for (int q = 0; q < 4; q++) {
                int b = bits[q];
                T[q] = node_id[((long)(z + ((b >> 2) & 1)) * (ny + 1) + (y + ((b >> 1) & 1))) *
                                   (nx + 1) +
                               (x + (b & 1))];
            }
            if (k == 1 || k == 2 || k == 5) { /* odd orders: swap to a positive volume */
                int s = T[1];
                T[1] = T[2];
                T[2] = s;
            }
        }
        t += 6;
    }
}

/* Each surface vertex carried by its tetrahedron: which of the cell's six it is in, and
 * its barycentric coordinates there. */
static void embed_surface(mn_lattice* L, int nverts, const double* pos, const long* tet_of_cell) {
    double u[3];
    for (int i = 0; i < nverts; i++) {
        long c = cell_of(L, pos + 3 * i, u);
        int k = 0;
        for (; k < 6; k++)
            if (u[kuhn[k][0]] >= u[kuhn[k][1]] && u[kuhn[k][1]] >= u[kuhn[k][2]]) break;
        double ua = u[kuhn[k][0]], ub = u[kuhn[k][1]], uc = u[kuhn[k][2]];
        double b[4] = {1 - ua, ua - ub, ub - uc, uc};
        if (k == 1 || k == 2 || k == 5) {
            double s = b[1];
            b[1] = b[2];
            b[2] = s;
        }
        L->surf_tet[i] = (int)(tet_of_cell[c] + k);
        memcpy(L->surf_bary + 4 * i, b, sizeof b);
    }
}

mn_lattice* mn_lattice_create(int nverts, const double* pos, int ntris, const int* tris,
                              int resolution, mn_error* err) {
    if (resolution < 1 || resolution > 256) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "resolution",
                     "%d: cells along the longest side must be 1..256", resolution);
        return NULL;
    }
    if (!mn_sb_check_mesh(nverts, pos, ntris, tris, "lattice", err)) return NULL;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < nverts; i++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fmin(lo[a], pos[3 * i + a]);
            hi[a] = fmax(hi[a], pos[3 * i + a]);
        }
    double ext = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    if (!(ext > 0)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "pos", "the surface has no extent");
        return NULL;
    }
    mn_lattice* L = calloc(1, sizeof *L);
    if (!L) goto nomem;
    L->cell = ext / resolution;
    long ncell = 1;
    for (int a = 0; a < 3; a++) {
        /* whole cells over the extent, centred on it (a flat side gets one cell) */
        int d = (int)ceil((hi[a] - lo[a]) / L->cell - 1e-9);
        if (d < 1) d = 1;
        L->dims[a] = d;
        L->origin[a] = 0.5 * (lo[a] + hi[a]) - 0.5 * d * L->cell;
        ncell *= d;
    }
    /* the inside test costs a solid angle per cell and triangle */
    if ((double)ncell * ntris > LATTICE_MAX_WINDING) {
        mn_lattice_destroy(L);
        mn_error_set(err, MN_ERR_ARG, "", 0, "resolution",
                     "%ld cells times %d triangles: more than %.0e inside tests (a lower "
                     "resolution, or fewer triangles)",
                     ncell, ntris, LATTICE_MAX_WINDING);
        return NULL;
    }
    if (ncell > LATTICE_MAX_CELLS) {
        mn_lattice_destroy(L);
        mn_error_set(err, MN_ERR_ARG, "", 0, "resolution", "%ld cells: at most %d", ncell,
                     LATTICE_MAX_CELLS);
        return NULL;
    }
    int nx = L->dims[0], ny = L->dims[1], nz = L->dims[2];
    long ngrid = (long)(nx + 1) * (ny + 1) * (nz + 1);
    uint8_t* active = calloc((size_t)ncell, 1);
    int* node_id = malloc((size_t)ngrid * sizeof(int));
    if (!active || !node_id) {
        free(active);
        free(node_id);
        goto nomem;
    }
    mark_cells(L, active, nverts, pos, ntris, tris);
    /* nodes: the corners of the kept cells */
    for (long g = 0; g < ngrid; g++)
        node_id[g] = -1;
    int nn = 0, nc = 0;
    for (long c = 0; c < ncell; c++) {
        if (!active[c]) continue;
        nc++;
        int x = (int)(c % nx), y = (int)((c / nx) % ny), z = (int)(c / ((long)nx * ny));
        for (int b = 0; b < 8; b++) {
            long g = ((long)(z + ((b >> 2) & 1)) * (ny + 1) + (y + ((b >> 1) & 1))) * (nx + 1) +
                     (x + (b & 1));
            if (node_id[g] < 0) node_id[g] = nn++;
        }
    }
    L->nnodes = nn;
    L->ntets = 6 * nc;
    L->nsurf = nverts;
    L->nodes = malloc((size_t)nn * 3 * sizeof(double));
    L->node_cell = malloc((size_t)nn * 3 * sizeof(int));
    L->tets = malloc((size_t)L->ntets * 4 * sizeof(int));
    L->surf_tet = malloc((size_t)nverts * sizeof(int));
    L->surf_bary = malloc((size_t)nverts * 4 * sizeof(double));
    long* tet_of_cell = malloc((size_t)ncell * sizeof(long));
    if (!L->nodes || !L->node_cell || !L->tets || !L->surf_tet || !L->surf_bary || !tet_of_cell) {
        free(active);
        free(node_id);
        free(tet_of_cell);
        goto nomem;
    }
    place_nodes(L, node_id);
    cut_cells(L, active, node_id, ncell, tet_of_cell);
    embed_surface(L, nverts, pos, tet_of_cell);
    free(active);
    free(node_id);
    free(tet_of_cell);
    return L;
nomem:
    mn_lattice_destroy(L);
    mn_error_set(err, MN_ERR_NOMEM, "", 0, "lattice", "out of memory");
    return NULL;
}

void mn_lattice_surface(const mn_lattice* L, const double* nodes_x, double* out) {
    for (int i = 0; i < L->nsurf; i++) {
        const int* T = L->tets + 4 * L->surf_tet[i];
        const double* b = L->surf_bary + 4 * i;
        for (int a = 0; a < 3; a++)
            out[3 * i + a] = b[0] * nodes_x[3 * T[0] + a] + b[1] * nodes_x[3 * T[1] + a] +
                             b[2] * nodes_x[3 * T[2] + a] + b[3] * nodes_x[3 * T[3] + a];
    }
}

/* The number of node v's six lattice neighbours that have weights (cnt > 0); when out is
 * given, their mean weights into it. */
static int neighbour_mean(const mn_lattice* L, const int* grid, const double* cnt, const double* W,
                          int m, int v, double* out) {
    int nx = L->dims[0] + 1, ny = L->dims[1] + 1, nz = L->dims[2] + 1, got = 0;
    const int* c = L->node_cell + 3 * v;
    if (out)
        for (int j = 0; j < m; j++)
            out[j] = 0;
    for (int a = 0; a < 3; a++)
        for (int s = -1; s <= 1; s += 2) {
            int q[3] = {c[0], c[1], c[2]};
            q[a] += s;
            if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= nx || q[1] >= ny || q[2] >= nz)
                continue;
            int nb = grid[((long)q[2] * ny + q[1]) * nx + q[0]];
            if (nb < 0 || !(cnt[nb] > 0)) continue;
            got++;
            if (out)
                for (int j = 0; j < m; j++)
                    out[j] += W[(size_t)nb * m + j];
        }
    if (out && got)
        for (int j = 0; j < m; j++)
            out[j] /= got;
    return got;
}

mn_rig* mn_lattice_rig(const mn_lattice* L, const mn_rig* surface, const double* node_mass,
                       mn_error* err) {
    if (!L || !surface || surface->dim != 3 || surface->nverts != L->nsurf) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "rig",
                     "a 3D rig over the lattice's surface vertices is needed");
        return NULL;
    }
    int nn = L->nnodes, m = surface->nctrl, k = surface->k;
    mn_rig* rig = mn_rig_create(3, nn, L->nodes, node_mass, err);
    if (!rig) return NULL;
    for (int j = 0; j < m; j++) {
        mn_ctrl_def d = mn_ctrl_default();
        d.name = surface->ctrl_name[j];
        d.kind = (mn_ctrl_kind)surface->ctrl_kind[j];
        d.pivot = surface->ctrl_pivot[j];
        d.tail = surface->ctrl_tail[j];
        d.parent = surface->ctrl_parent[j];
        d.attached = surface->ctrl_attached[j];
        if (mn_rig_add_ctrl(rig, &d, err) < 0) {
            mn_rig_destroy(rig);
            return NULL;
        }
    }
    double* W = calloc((size_t)nn * m, sizeof(double));
    double* cnt = calloc((size_t)nn, sizeof(double));
    int* queue = malloc((size_t)nn * sizeof(int));
    int* grid = NULL;
    mn_status st = MN_ERR_NOMEM;
    if (!W || !cnt || !queue) goto done;
    /* the nodes of the surface's tetrahedra: the surface weights, shared back by the
     * barycentric coordinates (the transpose of the embedding) */
    for (int i = 0; i < L->nsurf; i++) {
        const int* T = L->tets + 4 * L->surf_tet[i];
        for (int q = 0; q < 4; q++) {
            double b = L->surf_bary[4 * i + q];
            if (!(b > 0)) continue;
            cnt[T[q]] += b;
            for (int a = 0; a < k; a++) {
                double w = surface->w_val[(size_t)i * k + a];
                if (w > 0) W[(size_t)T[q] * m + surface->w_idx[(size_t)i * k + a]] += b * w;
            }
        }
    }
    /* the other nodes, layer by layer inward: the mean of their weighted lattice neighbours */
    long nx = L->dims[0] + 1, ny = L->dims[1] + 1, nz = L->dims[2] + 1;
    grid = malloc((size_t)nx * ny * nz * sizeof(int));
    if (!grid) goto done;
    for (long g = 0; g < nx * ny * nz; g++)
        grid[g] = -1;
    for (int v = 0; v < nn; v++) {
        const int* c = L->node_cell + 3 * v;
        grid[(c[2] * ny + c[1]) * nx + c[0]] = v;
    }
    int done_n = 0;
    for (int v = 0; v < nn; v++)
        if (cnt[v] > 0) {
            for (int j = 0; j < m; j++)
                W[(size_t)v * m + j] /= cnt[v];
            done_n++;
        }
    while (done_n < nn) {
        int nq = 0;
        for (int v = 0; v < nn; v++)
            if (!(cnt[v] > 0) && neighbour_mean(L, grid, cnt, W, m, v, NULL) > 0) queue[nq++] = v;
        if (nq == 0) {
            st = mn_error_set(err, MN_ERR_ARG, "", 0, "lattice",
                              "%d lattice nodes are not connected to the surface", nn - done_n);
            goto done;
        }
        for (int p = 0; p < nq; p++)
            neighbour_mean(L, grid, cnt, W, m, queue[p], W + (size_t)queue[p] * m);
        for (int p = 0; p < nq; p++)
            cnt[queue[p]] = 1;
        done_n += nq;
    }
    st = mn_rig_set_weights_dense(rig, W, NULL, err);
done:
    if (st == MN_ERR_NOMEM) mn_error_set(err, MN_ERR_NOMEM, "", 0, "lattice", "out of memory");
    free(W);
    free(cnt);
    free(queue);
    free(grid);
    if (st != MN_OK) {
        mn_rig_destroy(rig);
        return NULL;
    }
    return rig;
}
