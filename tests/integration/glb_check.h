/* Checks shared by the command-line tests that write a skinned glTF binary: the .glb read back
 * with mn_gltf_read, its mesh against the source's, and its animation (sampled by the reader's
 * own glTF sampler) against the BVH the same command writes. */
#ifndef MN_TEST_GLB_CHECK_H
#define MN_TEST_GLB_CHECK_H

#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct glb_check {
    int nverts, src_nverts; /* vertices of the .glb's skinned mesh and of the source's */
    int ntris, src_ntris;
    int nkeys, bvh_frames; /* key times of the .glb's animation, frames of the BVH */
    int joints;            /* joints paired by name */
    double size;           /* diagonal of the box of the BVH figure's joints at frame 0 */
    double rest_gap;       /* largest distance between the skinned rest meshes */
    double motion_gap;     /* largest joint distance at the frames checked */
} glb_check;

/* The skinned rest-pose vertices of g (nverts x 3, malloc'd). */
static double* glb_rest_mesh(const mn_gltf* g) {
    double* world = malloc(sizeof(double) * 12 * (size_t)g->njoints);
    double* mats = malloc(sizeof(double) * 12 * (size_t)g->njoints);
    double* pos = malloc(sizeof(double) * 3 * (size_t)(g->nverts ? g->nverts : 1));
    if (world && mats && pos && mn_gltf_sample(g, -1, -1, world) == MN_OK) {
        mn_gltf_skin_matrices(g, world, mats);
        mn_gltf_skin_vertices(g, mats, pos);
    } else {
        free(pos);
        pos = NULL;
    }
    free(world);
    free(mats);
    return pos;
}

/* Reads glb (written by a command from the skinned glTF src) and bvh (written by the same
 * command), and fills c: the meshes compared at rest, and every joint of the .glb's animation
 * at the key times of the given BVH frames against BVH forward kinematics. Returns 0 when a
 * file cannot be read or a joint has no partner. */
static int glb_check_files(const char* glb, const char* src, const char* bvh, const int* frames,
                           int nframes, glb_check* c) {
    memset(c, 0, sizeof *c);
    c->rest_gap = c->motion_gap = INFINITY;
    mn_gltf g, s;
    mn_error e;
    mn_model* m = NULL;
    mn_motion mo;
    memset(&mo, 0, sizeof mo);
    int ok = 0;
    if (mn_gltf_read(glb, &g, NULL, &e) != MN_OK) {
        fprintf(stderr, "  %s\n", e.message);
        return 0;
    }
    if (mn_gltf_read(src, &s, NULL, &e) != MN_OK) {
        fprintf(stderr, "  %s\n", e.message);
        mn_gltf_free(&g);
        return 0;
    }
    c->nverts = g.nverts, c->src_nverts = s.nverts;
    c->ntris = g.ntris, c->src_ntris = s.ntris;
    c->nkeys = g.nanims == 1 ? g.anims[0].nkeys : -1;
    if (mn_bvh_read(bvh, NULL, &m, &mo, NULL, &e) != MN_OK) {
        fprintf(stderr, "  %s\n", e.message);
        goto done;
    }
    c->bvh_frames = mo.nframes;
    mn_data* d = mn_data_create(m, 0);
    double* world = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    int* pair = malloc(sizeof(int) * (size_t)g.njoints);
    if (!d || !world || !pair || c->nkeys != mo.nframes) goto free_all;
    for (int j = 0; j < g.njoints; j++) {
        pair[j] = mn_model_find_joint(m, g.joint_name[j]);
        if (pair[j] < 0) {
            fprintf(stderr, "  %s: joint %s is not in %s\n", glb, g.joint_name[j], bvh);
            goto free_all;
        }
    }
    c->joints = g.njoints;
    memcpy(d->q, mo.q, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int j = 0; j < m->njoint; j++) {
        const double* p = &d->xf[j].p.x;
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], p[k]), hi[k] = fmax(hi[k], p[k]);
    }
    c->size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                   (hi[2] - lo[2]) * (hi[2] - lo[2]));
    /* the animation: the .glb's own key times, sampled by the glTF reader */
    double gap = 0;
    for (int i = 0; i < nframes; i++) {
        int f = frames[i];
        if (f < 0 || f >= mo.nframes) goto free_all;
        memcpy(d->q, mo.q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        if (mn_gltf_sample(&g, 0, g.anims[0].key_times[f], world) != MN_OK) goto free_all;
        for (int j = 0; j < g.njoints; j++) {
            mn_vec3 p = d->xf[pair[j]].p;
            const double* w = world + 12 * j;
            gap = fmax(gap, sqrt((w[3] - p.x) * (w[3] - p.x) + (w[7] - p.y) * (w[7] - p.y) +
                                 (w[11] - p.z) * (w[11] - p.z)));
        }
    }
    c->motion_gap = gap;
    /* the mesh at rest: the source's skinned rest pose */
    if (g.nverts == s.nverts && g.nverts > 0) {
        double *a = glb_rest_mesh(&g), *b = glb_rest_mesh(&s);
        if (a && b) {
            double r = 0;
            for (int k = 0; k < 3 * g.nverts; k++)
                r = fmax(r, fabs(a[k] - b[k]));
            c->rest_gap = r;
        }
        free(a);
        free(b);
    }
    ok = 1;
free_all:
    free(world);
    free(pair);
    mn_data_destroy(d);
done:
    mn_motion_free(&mo);
    mn_model_destroy(m);
    mn_gltf_free(&g);
    mn_gltf_free(&s);
    return ok;
}

#endif
