/* The workspace of a chain (Parent ch. 5: "the reachable workspace is the set of points the
 * end effector can reach; the dexterous workspace, the points it can reach in every
 * orientation"), estimated by sampling the chain's joint space.
 *
 * The chain's DOFs take uniformly random values within their limits (unlimited hinges over
 * one turn, balls as uniformly random rotations); the end-effector point, in the base's
 * frame, falls in a voxel of a cubic grid. A voxel is reachable when some sample falls in
 * it. For dexterity the direction of one axis of the tip's frame (the tool axis) is binned
 * into 128 cells of equal area on the sphere (8 bands of z, 16 sectors of azimuth); a
 * voxel's dexterity is the number of cells its samples hit over the number hit anywhere in
 * the workspace (a planar arm's tool axis stays in its plane: its dexterous points are those
 * where it points every way the arm can point it). Dexterous voxels have dexterity 1 (by
 * default: every direction the tool axis takes anywhere; Parent: "in all orientations").
 * Sampling estimates from inside: a region is found reachable when enough samples land in
 * it, and more samples only add voxels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"

#define WS_DIRS 128

static uint64_t ws_next(uint64_t* s) { /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double ws_unit(uint64_t* s) {
    return (double)(ws_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

mn_workspace_options mn_workspace_default(void) {
    mn_workspace_options o;
    memset(&o, 0, sizeof o);
    o.samples = 100000;
    o.seed = 1;
    o.voxel = 0; /* 1/40 of the chain's reach */
    o.axis = 2;
    o.dexterous = 1.0;
    return o;
}

void mn_workspace_free(mn_workspace* w) {
    if (!w) return;
    free(w->points);
    free(w->voxel_index);
    free(w->voxel_dexterity);
    memset(w, 0, sizeof *w);
}

/* The sphere cell of a unit direction: 8 bands of equal height in z (equal area, by
 * Archimedes), 16 sectors of azimuth. */
static int dir_cell(mn_vec3 u) {
    int band = (int)floor((u.z + 1) * 4);
    band = band < 0 ? 0 : band > 7 ? 7 : band;
    double az = atan2(u.y, u.x);
    int sector = (int)floor((az + MN_PI) / (2 * MN_PI) * 16);
    sector = sector < 0 ? 0 : sector > 15 ? 15 : sector;
    return band * 16 + sector;
}

static int cmp_u64(const void* a, const void* b) {
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

mn_status mn_workspace_sample(const mn_model* m, int base, int tip, mn_vec3 point,
                              const mn_workspace_options* opt, mn_workspace* w, mn_error* err) {
    mn_workspace_options o = opt ? *opt : mn_workspace_default();
    if (w) memset(w, 0, sizeof *w);
    if (!m || !w)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "workspace", "NULL model or output");
    if (tip < 0 || tip >= m->njoint || base < -1 || base >= m->njoint || base == tip ||
        (base >= 0 && !mn_model_is_ancestor(m, base, tip)))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "tip", "tip is not below base");
    if (o.samples < 1 || o.samples > 100000000)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "samples", "must be in 1..1e8");
    if (!(o.voxel >= 0) || !isfinite(o.voxel))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "voxel", "must be a length >= 0");
    if (o.axis < 0 || o.axis > 2)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "axis", "must be 0, 1 or 2 (x, y, z)");
    if (!mn_vec3_isfinite(point))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "point", "not finite");
    double reach = mn_vec3_norm(point);
    for (int j = tip; j != base; j = m->jnt_parent[j]) {
        reach += mn_vec3_norm(m->jnt_offset[j]);
        if (m->jnt_type[j] == MN_JOINT_SLIDE && m->jnt_limited[j])
            reach += fmax(fabs(m->jnt_range[2 * j]), fabs(m->jnt_range[2 * j + 1]));
    }
    double vox = o.voxel > 0 ? o.voxel : reach / 40;
    if (!(vox > 0)) vox = 1e-3;
    mn_data* d = mn_data_create(m, 1);
    w->points = malloc(sizeof(mn_vec3) * (size_t)o.samples);
    uint64_t* key = malloc(sizeof(uint64_t) * (size_t)o.samples);
    if (!d || !w->points || !key) {
        mn_data_destroy(d);
        free(key);
        mn_workspace_free(w);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "samples", "out of memory");
    }
    uint64_t rng = o.seed;
    mn_vec3 lo = mn_v3(INFINITY, INFINITY, INFINITY), hi = mn_vec3_scale(lo, -1);
    for (int s = 0; s < o.samples; s++) {
        for (int j = tip; j != base; j = m->jnt_parent[j]) {
            double* q = d->q + m->jnt_qadr[j];
            int t = m->jnt_type[j];
            if (t == MN_JOINT_HINGE || t == MN_JOINT_SLIDE) {
                double a = m->jnt_limited[j] ? m->jnt_range[2 * j] : -MN_PI;
                double b = m->jnt_limited[j] ? m->jnt_range[2 * j + 1] : MN_PI;
                q[0] = a + (b - a) * ws_unit(&rng);
            } else if (t == MN_JOINT_BALL) { /* a uniformly random rotation (Shoemake) */
                double u1 = ws_unit(&rng), u2 = ws_unit(&rng), u3 = ws_unit(&rng);
                double r1 = sqrt(1 - u1), r2 = sqrt(u1);
                q[0] = r2 * cos(2 * MN_PI * u3), q[1] = r1 * sin(2 * MN_PI * u2);
                q[2] = r1 * cos(2 * MN_PI * u2), q[3] = r2 * sin(2 * MN_PI * u3);
            }
        }
        mn_fk(m, d);
        mn_xform B = base >= 0 ? d->xf[base] : mn_xform_identity();
        mn_xform Bi = mn_xform_inverse(&B);
        mn_xform T = mn_xform_mul(&Bi, &d->xf[tip]);
        mn_vec3 p = mn_xform_apply(&T, point);
        w->points[s] = p;
        lo = mn_v3(fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z));
        hi = mn_v3(fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z));
        /* the tool axis's cell; the voxel (19 bits a coordinate) joins it below */
        mn_vec3 u = mn_mat3_col(&T.R, o.axis);
        key[s] = (uint64_t)dir_cell(u);
    }
    mn_data_destroy(d);
    /* voxel indices from the box's corner; keys sorted bring each voxel's samples together */
    w->origin = lo;
    w->voxel = vox;
    for (int k = 0; k < 3; k++) {
        double ext = (k == 0 ? hi.x - lo.x : k == 1 ? hi.y - lo.y : hi.z - lo.z) / vox;
        if (!(ext < (1 << 19))) {
            free(key);
            mn_workspace_free(w);
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, "voxel",
                                "too small for the workspace (more than 2^19 voxels a side)");
        }
        w->dims[k] = (int)floor(ext) + 1;
    }
    for (int s = 0; s < o.samples; s++) {
        mn_vec3 p = w->points[s];
        uint64_t ix = (uint64_t)floor((p.x - lo.x) / vox), iy = (uint64_t)floor((p.y - lo.y) / vox),
                 iz = (uint64_t)floor((p.z - lo.z) / vox);
        key[s] |= ((ix << 38) | (iy << 19) | iz) << 7;
    }
    qsort(key, (size_t)o.samples, sizeof *key, cmp_u64);
    /* cells hit anywhere */
    unsigned char all[WS_DIRS];
    memset(all, 0, sizeof all);
    for (int s = 0; s < o.samples; s++)
        all[key[s] & 127] = 1;
    int nall = 0;
    for (int c = 0; c < WS_DIRS; c++)
        nall += all[c];
    int nv = 0;
    for (int s = 0; s < o.samples; s++)
        if (s == 0 || (key[s] >> 7) != (key[s - 1] >> 7)) nv++;
    w->voxel_index = malloc(sizeof(int) * 3 * (size_t)nv);
    w->voxel_dexterity = malloc(sizeof(double) * (size_t)nv);
    if (!w->voxel_index || !w->voxel_dexterity) {
        free(key);
        mn_workspace_free(w);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "samples", "out of memory");
    }
    int v = -1;
    unsigned char hit[WS_DIRS];
    int nhit = 0;
    for (int s = 0; s <= o.samples; s++) {
        int start = s == o.samples || s == 0 || (key[s] >> 7) != (key[s - 1] >> 7);
        if (start && v >= 0) w->voxel_dexterity[v] = nall ? (double)nhit / nall : 0;
        if (s == o.samples) break;
        if (start) {
            v++;
            uint64_t vk = key[s] >> 7;
            w->voxel_index[3 * v] = (int)(vk >> 38);
            w->voxel_index[3 * v + 1] = (int)((vk >> 19) & ((1u << 19) - 1));
            w->voxel_index[3 * v + 2] = (int)(vk & ((1u << 19) - 1));
            memset(hit, 0, sizeof hit);
            nhit = 0;
        }
        int c = (int)(key[s] & 127);
        if (!hit[c]) hit[c] = 1, nhit++;
    }
    free(key);
    w->nsamples = o.samples;
    w->nvoxels = nv;
    w->ndexterous = 0;
    for (int i = 0; i < nv; i++)
        w->ndexterous += w->voxel_dexterity[i] >= o.dexterous;
    w->directions = nall;
    w->reach = reach;
    return MN_OK;
}
