/* marionette glTF 2.0: skinned meshes (.gltf with embedded or external buffers, and .glb)
 * read with cJSON. One skin, its joints, inverse bind matrices, the skinned mesh's
 * positions, triangles and JOINTS_0/WEIGHTS_0, and the animations that drive the joints.
 *
 * Matrices here are 3x4 affine, row-major (a rigid or scaled transform x' = A x + b stored
 * as [A | b], 12 doubles), in the glTF scene's units (metres) and axes (+Y up). */
#ifndef MARIONETTE_GLTF_H
#define MARIONETTE_GLTF_H

#include "base.h"
#include "io.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mn_gltf_anim {
    char* name;
    double duration;        /* seconds */
    /* Internal sampler data, read with mn_gltf_sample. */
    int nchannels;
    void* channels;
} mn_gltf_anim;

typedef struct mn_gltf {
    /* the skinned mesh (all primitives of the skinned node, concatenated) */
    int nverts;
    double* rest_pos;       /* nverts x 3, in the mesh node's space (bind pose) */
    int ntris;
    int* tris;              /* ntris x 3 */
    int* vjoint;            /* nverts x 4, indices into the skin's joints */
    double* vweight;        /* nverts x 4, as stored (a warning when they do not sum to 1) */

    /* the skin */
    int njoints;
    char** joint_name;      /* node names ("joint<i>" when unnamed) */
    int* joint_parent;      /* parent within the skin's joints, -1 for a root of the skin */
    double* inverse_bind;   /* njoints x 12 */
    double* rest_local;     /* njoints x 12: each joint node's own TRS at rest */
    double* root_parent;    /* 12: world transform of the skin roots' parent node(s) at rest */

    int nanims;
    mn_gltf_anim* anims;
} mn_gltf;

mn_status mn_gltf_read(const char* path, mn_gltf* out, mn_warnings* warn, mn_error* err);
void mn_gltf_free(mn_gltf* g);

/* World transforms (njoints x 12) of the skin joints when animation `anim` is sampled at
 * time t (clamped to [0, duration]; -1 for the rest pose). Linear interpolation for
 * translation and scale, slerp for rotation, STEP honoured. */
mn_status mn_gltf_sample(const mn_gltf* g, int anim, double t, double* joint_world);

/* Skinning matrices world_j * inverse_bind_j (njoints x 12) and the skinned positions
 * (nverts x 3) for those world transforms. */
void mn_gltf_skin_matrices(const mn_gltf* g, const double* joint_world, double* skin_mats);
void mn_gltf_skin_vertices(const mn_gltf* g, const double* skin_mats, double* out_pos);

/* The skin's joints as a marionette model (BALL joints with offsets from the rest pose, the
 * roots FREE), for posing a glTF character with the IK solvers. */
mn_model* mn_gltf_model(const mn_gltf* g, mn_error* err);

#ifdef __cplusplus
}
#endif
#endif
