/* marionette soft-body scenes: the document `marionette sim SCENE.json` reads
 * (docs/softbody.md): a mesh (OBJ, or a skinned glTF whose skin gives the weights and the
 * bones), the body made of it (a lattice of tetrahedra, the surface itself, or triangles in
 * the plane), the controllers and which of them are driven and how (keyed paths, the glTF's
 * own animation), the material, the time step and the coupling. The reader builds the
 * whole simulation (mn_softbody, rigs, mn_coupled) and steps it a frame at a time.
 *
 * Reading follows io.h: a status and a message naming the file, line and field; unknown
 * members refused; a mesh path read beneath the scene's folder unless the caller trusts
 * the document; limits on the sizes (MN_SIM_MAX_*), refused before the work.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_SIMSCENE_H
#define MARIONETTE_SIMSCENE_H

#include <stddef.h>

#include "base.h"
#include "gltf.h"
#include "io.h"
#include "meshio.h"
#include "skin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of a scene: the body's vertices (lattice nodes or mesh vertices; six times as many
 * tetrahedra), the frames of a run, the keys of all paths. */
#define MN_SIM_MAX_NODES 1000000
#define MN_SIM_MAX_FRAMES 100000
#define MN_SIM_MAX_KEYS 100000

typedef struct mn_sim_read_options {
    int trusted;   /* 1: the mesh may be named by any path (the command line, for its user's
                      own files); 0 (default): only beneath the scene's folder */
    int max_nodes; /* the body's and the mesh's vertices at most (0: MN_SIM_MAX_NODES; a
                      server or a fuzzer sets less) and six times as many tetrahedra */
} mn_sim_read_options;

typedef enum mn_sim_body_kind {
    MN_SIM_LATTICE = 0, /* tetrahedra of a lattice embedding the closed surface */
    MN_SIM_SURFACE,     /* the surface's edges and its enclosed volume */
    MN_SIM_PLANE        /* the mesh's triangles in the xy-plane (2D) */
} mn_sim_body_kind;

typedef struct mn_sim_key {
    double t;      /* seconds */
    mn_xform pose; /* the controller's rotation and pivot position */
} mn_sim_key;

typedef struct mn_sim_path {
    int ctrl;  /* the controller it drives */
    int nkeys; /* >= 1, times ascending */
    int loop;  /* 1: repeats with the period of its last key's time */
    mn_sim_key* keys;
} mn_sim_path;

typedef struct mn_sim {
    /* the run */
    double dt;
    int frames;
    mn_sim_body_kind kind;
    int resolution; /* the lattice's cubes along the longest side */
    /* the mesh (rest positions; for a glTF character its bind pose) and what is made of it */
    mn_mesh mesh;
    mn_rig* mesh_rig;    /* over the mesh's vertices */
    mn_lattice* lattice; /* MN_SIM_LATTICE */
    mn_softbody* body;
    mn_rig* rig; /* over the body's vertices (mesh_rig itself unless a lattice) */
    mn_coupled* coupled;
    uint8_t* driven; /* rig->nctrl */
    /* drives */
    int npaths;
    mn_sim_path* paths;
    int anim; /* the glTF animation that drives the driven controllers, -1 for none */
    double speed;
    int loop; /* the animation or the take repeats (else holds its last pose) */
    /* a motion take (BVH or any figure file with motion) retargeted onto a glTF character:
     * the controllers' poses at each of its frames */
    int take_frames;
    double take_dt;
    mn_xform* take_pose; /* take_frames x rig->nctrl */
    /* a glTF character */
    mn_gltf gltf;    /* nverts 0 for an OBJ mesh */
    mn_model* model; /* its skeleton (mn_gltf_model), NULL for an OBJ mesh */
    int* ctrl_joint; /* rig->nctrl: the skin joint of each controller */
    /* scratch */
    double* work;      /* 24 x njoints: a character's sampled joints and skinning matrices */
    mn_xform* scratch; /* 2 x rig->nctrl poses */
} mn_sim;

mn_sim_read_options mn_sim_read_default(void);

/* Reads a scene document and builds its simulation at rest (the driven controllers where
 * their drives put them at time 0, the body skinned there). opt NULL: defaults. */
mn_status mn_sim_read(const char* path, const mn_sim_read_options* opt, mn_sim** out,
                      mn_warnings* warn, mn_error* err);
/* The same from memory: name names the input in messages and its folder is the scene's. */
mn_status mn_sim_read_mem(const char* text, size_t len, const char* name,
                          const mn_sim_read_options* opt, mn_sim** out, mn_warnings* warn,
                          mn_error* err);
void mn_sim_destroy(mn_sim* s);

/* Frame f (1..frames): the driven controllers are sent where their drives put them at
 * f dt, and the coupled system steps dt. No allocation. */
mn_status mn_sim_step(mn_sim* s, int f, mn_coupled_result* r);
/* The mesh's vertices now (mesh.nverts x 3): the body's for a surface or plane body, the
 * lattice's embedding for a lattice. */
void mn_sim_mesh_now(const mn_sim* s, double* out);

/* Writes the controllers' poses of nframes frames (track: nframes x rig->nctrl, as
 * mn_coupled_pose gives them) as a glTF binary animated at dt: for a glTF character, its
 * own skeleton and skinned mesh with each joint turned and placed as its controller was
 * (joints without one keep their place on their parent); otherwise one joint per
 * controller (its pivot, parent as in the rig) and no mesh. Atomic. */
mn_status mn_sim_write_glb(const mn_sim* s, const char* path, const mn_xform* track, int nframes,
                           mn_error* err);

#ifdef __cplusplus
}
#endif
#endif
