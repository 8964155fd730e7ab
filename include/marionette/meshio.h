/* marionette meshio: the plain-text mesh formats that skinning data comes in.
 *
 *   OBJ    Wavefront meshes: `v x y z`, `f a b c ...` (1-based, negative = relative,
 *          `a/t/n` forms accepted, polygons fan-triangulated); other records ignored.
 *   DMAT   libigl dense matrices: text header "cols rows" then the values column by
 *          column; or the binary variant (header "0 0", then "cols rows", then doubles).
 *   TGF    libigl skeletons: vertex lines "index x y z", a "#" line, then edge lines
 *          "a b [flags]" (1-based), optionally closed by another "#".
 *   Tmat   per-bone transforms as a (4 * nbones) x 3 text matrix: each bone a block
 *          [R^T; t], so that a posed point is p = [v 1] * T_b (libigl's layout).
 *
 * The readers follow io.h: a status plus a message naming file, line and field; outputs
 * untouched on failure; NaN and infinity rejected. The writers are atomic.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_MESHIO_H
#define MARIONETTE_MESHIO_H

#include <stddef.h>

#include "base.h"
#include "io.h"
#include "math.h"
#include "gltf.h"
#include "skin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A triangle mesh. Free with mn_mesh_free. */
typedef struct mn_mesh {
    int nverts;
    double* pos; /* nverts x 3 */
    int ntris;
    int* tris; /* ntris x 3, 0-based */
} mn_mesh;

void mn_mesh_free(mn_mesh* mesh);

mn_status mn_obj_read(const char* path, mn_mesh* mesh, mn_warnings* warn, mn_error* err);
mn_status mn_obj_read_mem(const char* text, size_t len, const char* name, mn_mesh* mesh,
                          mn_warnings* warn, mn_error* err);
/* Polygon objects on joints (Welman 6.1.1 `object`, Parent's node data): one mesh per joint
 * of a model (empty when the joint names none), in the joint's frame. */
typedef struct mn_objects {
    int njoint;
    int nobjects;  /* joints with an object */
    mn_mesh* mesh; /* njoint */
} mn_objects;
/* Reads every joint's object (m->jnt_object) as Wavefront OBJ from the folder dir (the
 * figure file's; a name is a relative path that cannot lead out of it, as a glTF buffer's
 * URI: mn_read_file_beneath). An object that cannot be read is an error naming it and its
 * joint; nothing is kept. Free with mn_objects_free. */
mn_status mn_objects_read(const mn_model* m, const char* dir, mn_objects* out, mn_warnings* warn,
                          mn_error* err);
void mn_objects_free(mn_objects* o);
/* The display traversal: every object placed on its joint's world frame (after mn_fk), as
 * one mesh (free with mn_mesh_free). */
mn_status mn_objects_pose(const mn_model* m, const mn_data* d, const mn_objects* o, mn_mesh* out,
                          mn_error* err);

/* Writes positions (nverts x 3) and triangles (ntris x 3, 0-based; tris may be NULL). */
mn_status mn_obj_write(const char* path, int nverts, const double* pos, int ntris, const int* tris,
                       mn_error* err);

/* A dense matrix, row-major in memory. Free with mn_dmat_free. */
typedef struct mn_dmat {
    int rows, cols;
    double* data; /* rows x cols, row-major */
} mn_dmat;

void mn_dmat_free(mn_dmat* m);
mn_status mn_dmat_read(const char* path, mn_dmat* out, mn_error* err);
mn_status mn_dmat_read_mem(const char* text, size_t len, const char* name, mn_dmat* out,
                           mn_error* err);
/* Text DMAT (column-major values, full precision). */
mn_status mn_dmat_write(const char* path, const mn_dmat* m, mn_error* err);

/* A TGF skeleton. Free with mn_tgf_free. */
typedef struct mn_tgf {
    int nverts;
    double* pos; /* nverts x 3 */
    int nedges;
    int* edges; /* nedges x 2, 0-based (parent, child as written) */
} mn_tgf;

void mn_tgf_free(mn_tgf* t);
mn_status mn_tgf_read(const char* path, mn_tgf* out, mn_error* err);
mn_status mn_tgf_read_mem(const char* text, size_t len, const char* name, mn_tgf* out,
                          mn_error* err);
/* Writes vertices and edges (1-based in the file), each section closed by "#". */
mn_status mn_tgf_write(const char* path, const mn_tgf* t, mn_error* err);

/* Tmat: nbones transforms x -> R x + t (the block [R^T; t] of each bone). *xf is
 * malloc'd (free()). */
mn_status mn_tmat_read(const char* path, int* nbones, mn_xform** xf, mn_error* err);
mn_status mn_tmat_read_mem(const char* text, size_t len, const char* name, int* nbones,
                           mn_xform** xf, mn_error* err);
mn_status mn_tmat_write(const char* path, int nbones, const mn_xform* xf, mn_error* err);
/* The text mn_tmat_write would write to path (named in messages), malloc'd (free()): for
 * a set of Tmat files written all or nothing (mn_write_files_atomic). */
mn_status mn_tmat_format(const char* path, int nbones, const mn_xform* xf, char** text, size_t* len,
                         mn_error* err);

/* ---- skinning rigs from files ----------------------------------------------------------- */

/* A rig from libigl's triple: the rest mesh (OBJ), the weights (DMAT, nverts x nbones as
 * stored: "cols rows" = nbones nverts) and the skeleton (TGF): one BONE controller per TGF
 * edge, named "bone<k>" in edge order, head at its first vertex, tail at its second. With
 * attach, a bone whose head is another bone's tail is attached to that bone. mesh (may be
 * NULL) receives the rest mesh. Weight rows that do not sum to one are normalised with a
 * warning; a count mismatch between the files names both. */
mn_status mn_rig_read_libigl(const char* obj_path, const char* dmat_path, const char* tgf_path,
                             int attach, mn_rig** rig, mn_mesh* mesh, mn_warnings* warn,
                             mn_error* err);

/* A rig from a glTF skin: one POINT controller per skin joint that weights some vertex
 * (named as the joint; joints that move no vertex cannot be fitted and are left out),
 * pivot at the joint's bind position (the translation of its inverse bind matrix's
 * inverse), weights from JOINTS_0/WEIGHTS_0. ctrl_joint (may be NULL) receives a malloc'd
 * array: the skin joint of each controller. The rest mesh is the bind-pose mesh. */
mn_status mn_rig_from_gltf(const mn_gltf* g, mn_rig** rig, int** ctrl_joint, mn_error* err);

#ifdef __cplusplus
}
#endif
#endif
