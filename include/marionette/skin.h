/* marionette skin: linear blend skinning, the inverse problem of fitting controller poses
 * to a given mesh (IK for LBS, seed lbs-inverse-kinematics.md, after Wu & Umetani 2023),
 * and the position-based soft body that the fit runs inside of.
 *
 * Rig. n vertices with rest positions xbar_i (2D or 3D) and masses m_i, m controllers
 * and sparse weights w_ij (up to MN_SKIN_MAX_INFLUENCES per vertex, rows normalised).
 * Every controller is an oriented control point with rest position dbar_j and rest
 * rotation I; its state is a rotation R_j and a position d_j (an mn_xform with R = R_j,
 * p = d_j). A vertex follows (seed eq. "x_i^r"):
 *
 *     x_i = sum_j w_ij [ R_j (xbar_i - dbar_j) + d_j ]
 *
 * The three kinds of controllers of the seed all reduce to that:
 *   POINT  a free oriented point (rotation + translation).
 *   BONE   a segment head -> tail. Its two control points are kept rigid, so the pair is
 *          one oriented point at the head whose rotation carries the tail.
 *   CAGE   a cage vertex: translation only, R stays I.
 * A controller may be attached to a parent: its pivot then stays where it is in the
 * parent's frame, d_c = d_p + R_p (dbar_c - dbar_p) (a bone's head on its parent bone's
 * tail, a joint of a marionette model on its parent joint). Controllers may be fixed by
 * the user (their pose is given, the fit recovers the others).
 *
 * In 2D (dim = 2) positions are (x, y) pairs, z is 0 and rotations are about z.
 *
 * Everything here uses libc and libm only, and no function allocates after creation:
 * mn_fit and mn_softbody_step run with the memory of their objects.
 *
 * Calling convention, default options and results: see base.h. */
#ifndef MARIONETTE_SKIN_H
#define MARIONETTE_SKIN_H

#include <stdint.h>

#include "base.h"
#include "math.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MN_SKIN_MAX_INFLUENCES 8

typedef enum mn_ctrl_kind { MN_CTRL_POINT = 0, MN_CTRL_BONE, MN_CTRL_CAGE } mn_ctrl_kind;

/* One controller; fill from mn_ctrl_default() and change what differs. */
typedef struct mn_ctrl_def {
    const char* name; /* unique, non-empty; copied */
    mn_ctrl_kind kind;
    mn_vec3 pivot; /* dbar: the control point (a bone's head) at rest */
    mn_vec3 tail;  /* BONE only: the tail at rest (display and skeleton export) */
    int parent;    /* index of the parent controller, -1 for none */
    int attached;  /* 1: the pivot is held in the parent's frame (a joint) */
} mn_ctrl_def;

/* POINT, no name, pivot and tail at the origin, no parent, not attached. */
mn_ctrl_def mn_ctrl_default(void);

typedef struct mn_rig {
    int dim; /* 2 or 3 */
    int nverts;
    double* rest; /* nverts x 3 (z = 0 in 2D) */
    double* mass; /* nverts, > 0 */

    int nctrl;
    char** ctrl_name;
    int* ctrl_kind;      /* mn_ctrl_kind */
    mn_vec3* ctrl_pivot; /* dbar_j */
    mn_vec3* ctrl_tail;
    int* ctrl_parent; /* -1 for none; always < own index */
    uint8_t* ctrl_attached;

    int k;         /* influences per vertex (slots; unused slots have weight 0) */
    int* w_idx;    /* nverts x k controller indices */
    double* w_val; /* nverts x k weights, each row sums to 1 */
    int cap_ctrl;
} mn_rig;

/* A rig over nverts rest positions (nverts x dim doubles) with masses (NULL: all 1).
 * NaN or infinite positions, non-positive masses -> NULL with err naming the vertex. */
mn_rig* mn_rig_create(int dim, int nverts, const double* rest, const double* mass, mn_error* err);
void mn_rig_destroy(mn_rig* rig);

/* Appends a controller; returns its index or -1 with err (duplicate or empty name, parent
 * out of range or not earlier, NaN pivot). */
int mn_rig_add_ctrl(mn_rig* rig, const mn_ctrl_def* def, mn_error* err);
int mn_rig_find_ctrl(const mn_rig* rig, const char* name);

/* Sets the weights: idx and w are nverts x k (k <= MN_SKIN_MAX_INFLUENCES; an index of
 * -1 or a zero weight is an empty slot). Rows that do not sum to one are normalised and a
 * warning counted in *nwarn (may be NULL) and described in err->message when err is
 * given; a vertex with no positive weight, a NaN or negative weight, or an index out of
 * range is an error naming the vertex (field "weights"), and the rig is left unchanged. */
mn_status mn_rig_set_weights(mn_rig* rig, int k, const int* idx, const double* w, int* nwarn,
                             mn_error* err);
/* The same from a dense nverts x nctrl matrix (as a DMAT stores it): the largest k
 * (<= MN_SKIN_MAX_INFLUENCES) weights of each row are kept. */
mn_status mn_rig_set_weights_dense(mn_rig* rig, const double* W, int* nwarn, mn_error* err);

/* Makes the controllers joints of a model: each controller named like a joint of m gets
 * as parent the controller of its nearest ancestor joint, attached (a hierarchy, updated
 * from parents to children). Controllers must already be listed parent before child.
 * Unnamed joints are skipped. MN_ERR_NOTFOUND when no controller names a joint. */
mn_status mn_rig_set_hierarchy(mn_rig* rig, const mn_model* m, mn_error* err);

/* ---- poses and forward skinning -------------------------------------------------------- */

/* pose (nctrl): R = I, p = dbar. */
void mn_rig_rest_pose(const mn_rig* rig, mn_xform* pose);
/* Forward LBS: out (nverts x dim) from pose (nctrl). */
void mn_rig_deform(const mn_rig* rig, const mn_xform* pose, double* out);
/* The affine map x -> R (x - dbar) + d of controller j as a transform (a skinning matrix,
 * as a glTF skin's world * inverse-bind). */
mn_xform mn_rig_skin_xform(const mn_rig* rig, const mn_xform* pose, int j);
/* The controller pose whose skinning matrix is S (inverse of mn_rig_skin_xform). */
mn_xform mn_rig_pose_from_skin(const mn_rig* rig, int j, const mn_xform* S);
/* Sets the attached controllers' positions from their parents, root to leaves (the
 * seed's hierarchical update). */
void mn_rig_propagate(const mn_rig* rig, mn_xform* pose);
/* Mass-weighted RMS and max distance between the skinned rig and targets (nverts x dim). */
void mn_rig_error(const mn_rig* rig, const mn_xform* pose, const double* targets, double* rms,
                  double* max_err);
/* Length of the rest bounding-box diagonal. */
double mn_rig_bbox_diagonal(const mn_rig* rig);

/* ---- the fit (seed: "Find Optimized Translation", "Find Optimized Rotation") ---------- */

typedef struct mn_fit_options {
    int max_iters;        /* alternations of translation and rotation steps (default 50) */
    double tol;           /* stop when the energy improves, or the Gauss-Newton model
                             predicts it to improve, by less than tol (relative); 1e-10 */
    int max_halvings;     /* line-search step halvings (default 12) */
    int coupled_rotation; /* 1 (default): the rotation step's metric couples controllers
                             that share vertices; 0: per-controller 3x3 blocks */
    int vertex_error;     /* 1 (default): fill rms and max_err of the result (one more pass
                             over the vertices); 0: rms from the energy, max_err = -1 */
} mn_fit_options;

/* 50 alternations, tol 1e-10, 12 halvings, coupled rotation, vertex error on. */
mn_fit_options mn_fit_default(void);

typedef struct mn_fit_result {
    mn_status status;    /* MN_OK, MN_ERR_NOCONVERGE when the budget ran out, MN_ERR_ARG */
    int iterations;      /* alternations done */
    double energy;       /* 1/2 sum m_i |x_i - x_i^r|^2 at the end */
    double rms, max_err; /* vertex error (mass-weighted RMS, max) */
    char message[160];   /* why, when status is not OK; names the argument or option at fault */
} mn_fit_result;

typedef struct mn_fitter mn_fitter;

/* A fitter for a rig and a set of fixed controllers (fixed: nctrl flags, NULL for none).
 * Builds the per-controller sums and factorises the translation step's KKT matrix (LDLT:
 * it is indefinite). MN_ERR_SINGULAR with a message naming the controller when the
 * fixed set leaves the translation undetermined (a controller that moves no vertex and is
 * not fixed, or attachments that fix the same point twice). The rig must outlive it. */
mn_fitter* mn_fitter_create(const mn_rig* rig, const uint8_t* fixed, mn_error* err);
void mn_fitter_destroy(mn_fitter* f);
/* Changes the fixed set (refactorises; no allocation). On failure the old set is kept. */
mn_status mn_fitter_set_fixed(mn_fitter* f, const uint8_t* fixed, mn_error* err);
/* Forgets what earlier fits taught the fitter (the corrections its rigid start predicts
 * from, and the energy the last fit reached, below which no second start is tried; see
 * mn_fit), so that the next mn_fit depends on its arguments only: for fits of unrelated
 * poses, or to repeat a fit bit for bit. Changing the fixed set forgets too. */
void mn_fitter_reset(mn_fitter* f);

/* Fits pose (nctrl, in: the warm start, e.g. the previous time step; out: the fit) to
 * targets (nverts x dim): alternates the translation step (one KKT back-substitution) and
 * the rotation step (gradient of the infinitesimal rotations, Gauss-Newton metric, line
 * search, R <- cay(dp) R) until the energy stops improving. When the warm start is far
 * (above 1e-4 of the targets' spread, and above twice what the last fit converged to),
 * every bone's own rigid fit is tried as a start, corrected by what the last fits found
 * (a fitter tracking a motion learns how far each bone's fit lies from its rigid one and
 * predicts the next frame's; mn_fitter_reset forgets it). Fixed controllers keep
 * the pose given. No allocation. opt NULL means mn_fit_default(); res may be NULL.
 * MN_ERR_ARG (nothing changed, the message names the field) on a NaN target or pose or an
 * option out of range. */
mn_status mn_fit(mn_fitter* f, mn_xform* pose, const double* targets, const mn_fit_options* opt,
                 mn_fit_result* res);

/* Every unfixed controller's own rigid fit to the targets, weighted by m_i w_ij (Kabsch:
 * the polar factor of the weighted cross-covariance; cages translate only): the per-bone
 * baseline, and a cold start for mn_fit when then_translate is 1 (the translation step
 * follows, which restores attachments and fixed controllers). */
mn_status mn_fit_kabsch(mn_fitter* f, mn_xform* pose, const double* targets, int then_translate);

/* The pieces of the fit, public for tests and tools (targets must have been loaded by
 * mn_fit_set_targets first):
 *   energy g = 1/2 sum m_i |x_i - x_i^r|^2 (seed g(theta)),
 *   grad (3 x nctrl) = dg/dp_j of the left-multiplied rotations R_j <- exp([p_j]x) R_j,
 *   dgrad (3 x nctrl) = dg/dd_j. */
mn_status mn_fit_set_targets(mn_fitter* f, const double* targets);
double mn_fit_energy(mn_fitter* f, const mn_xform* pose);
void mn_fit_gradient(mn_fitter* f, const mn_xform* pose, double* grad_rot, double* grad_trans);
/* One translation step: the constrained minimiser over the d_j with rotations held. */
void mn_fit_translation_step(mn_fitter* f, mn_xform* pose);

/* ---- the soft body (XPBD: Macklin, Mueller, Chentanez 2016) --------------------------- */

typedef struct mn_softbody_options {
    double edge_compliance; /* distance constraints on mesh edges (m/N; 0 = rigid), default 1e-6 */
    double volume_compliance;  /* the closed mesh's volume (default 0) */
    mn_vec3 gravity;           /* default (0, -9.81, 0) */
    double ground;             /* y of the ground plane (default -inf: none) */
    double damping;            /* velocity damping per second (default 0.5) */
    int substeps;              /* per step (default 10) */
    double element_compliance; /* the elements' volumes or areas (mn_softbody_add_elements),
                                  default 0 */
} mn_softbody_options;

/* Edge compliance 1e-6, volume compliance 0, gravity (0, -9.81, 0), no ground, damping
 * 0.5, 10 substeps, element compliance 0. */
mn_softbody_options mn_softbody_default(void);

typedef struct mn_softbody_result {
    mn_status status;  /* MN_OK, MN_ERR_ARG (bad dt), MN_ERR_NOCONVERGE (unstable: the
                          state of the start of the step is restored) */
    int iterations;    /* substeps done */
    double max_speed;  /* largest vertex speed at the end of the step */
    char message[160]; /* why, when status is not OK; names the field at fault */
} mn_softbody_result;

/* Vertices held by springs at once (the mouse's grab of a mesh). */
#define MN_SOFTBODY_MAX_GRABS 64

typedef struct mn_softbody {
    int nverts, ntris, nedges;
    double* x;          /* nverts x 3 positions (read them after each step) */
    double* v;          /* nverts x 3 velocities */
    double* inv_mass;   /* nverts; 0 for a pinned vertex */
    double* pin_target; /* nverts x 3: where pinned vertices are driven to */
    mn_softbody_options opt;
    /* internal */
    int* tris;
    int* edges;
    double* rest_len;
    double* prev;
    double rest_volume;
    double* mass;
    double* grad;            /* nverts x 3: volume gradient scratch */
    double* saved;           /* nverts x 6: x and v at the start of a step */
    int nelem, elem_corners; /* volume elements: 4 (tetrahedra) or 3 (triangles in 2D) */
    int* elem;               /* nelem x elem_corners */
    double* elem_rest;       /* nelem: rest signed volume or area */
    int ngrab;               /* grabbed vertices (mn_softbody_grab) */
    int grab_idx[MN_SOFTBODY_MAX_GRABS];
    double grab_target[3 * MN_SOFTBODY_MAX_GRABS];
    double grab_compliance[MN_SOFTBODY_MAX_GRABS];
    double* x4;     /* nverts x 4, 32-byte aligned: x and inv_mass side by side, the copy that
                       the edge and element passes work on (softbody_solve.c) */
    void* x4_block; /* x4's allocation */
    int nruns;      /* runs of constraints that share no vertex, each [start, end): */
    int* runs;      /* nruns x 3: kind (0 edges, 1 elements), start, end */
} mn_softbody;

/* From a triangle mesh (positions nverts x 3, triangles ntris x 3) with vertex masses
 * (NULL: the total mass 1 spread evenly). The volume constraint needs a closed mesh. opt
 * NULL means mn_softbody_default(); the options are kept in sb->opt for every step. */
mn_softbody* mn_softbody_create(int nverts, const double* pos, int ntris, const int* tris,
                                const double* mass, const mn_softbody_options* opt, mn_error* err);
void mn_softbody_destroy(mn_softbody* sb);
/* Adds distance constraints between vertex pairs (n x 2 indices) at their current
 * distances, e.g. across a tube's cross-section or between every other ring to resist
 * buckling and bending (a surface mesh's edges alone let a hollow shape fold). Setup
 * time only (allocates). */
mn_status mn_softbody_add_distances(mn_softbody* sb, int n, const int* pairs, mn_error* err);
/* Pins vertex i (pinned = 1) and drives it to pin_target, or releases it. */
void mn_softbody_pin(mn_softbody* sb, int i, int pinned);
/* Advances dt seconds in opt.substeps XPBD substeps. No allocation. r may be NULL. A step
 * that produces a non-finite position restores the state it started from and returns
 * MN_ERR_NOCONVERGE (try more substeps). */
mn_status mn_softbody_step(mn_softbody* sb, double dt, mn_softbody_result* r);
/* Current enclosed volume. */
double mn_softbody_volume(const mn_softbody* sb);

/* Adds volume elements whose rest measure is kept with opt.element_compliance (XPBD, as
 * the edges): tetrahedra (corners 4, idx n x 4; the signed volume
 * det[x1-x0, x2-x0, x3-x0] / 6, made positive by reordering a negative one) for a
 * volumetric body in 3D, or triangles (corners 3; the signed area in the xy-plane) for a
 * soft body in the plane (2D: positions with z = 0 and a gravity without z stay in the
 * plane). The elements' edges not yet constrained become distance constraints. One kind
 * per body; degenerate elements (zero measure) are refused with their index. Setup time
 * (allocates). */
mn_status mn_softbody_add_elements(mn_softbody* sb, int corners, int n, const int* idx,
                                   mn_error* err);
/* Lumped masses from elements (corners 3 or 4, as above): each element's |measure| times
 * density shared equally by its corners. A vertex of no element gets the smallest mass
 * of the others. MN_ERR_ARG on an index out of range or a non-positive density. */
mn_status mn_softbody_element_masses(int nverts, const double* pos, int corners, int n,
                                     const int* idx, double density, double* mass, mn_error* err);
/* Holds vertex i by a zero-length spring to target (compliance >= 0, m/N; 0 pins it
 * through the constraint, keeping its mass): the mouse's grab of a mesh. Grabbing a
 * grabbed vertex moves its target. MN_ERR_NOMEM when MN_SOFTBODY_MAX_GRABS are held, MN_ERR_ARG on
 * a bad index, target or compliance. */
mn_status mn_softbody_grab(mn_softbody* sb, int i, mn_vec3 target, double compliance);
/* Releases vertex i's grab (-1: every grab). */
void mn_softbody_release(mn_softbody* sb, int i);

/* ---- volumes for a closed surface: a lattice of tetrahedra (lattice.c) ----------------
 *
 * The surface (a character's mesh) is embedded in a lattice of cubes of edge cell = the
 * bounding box's longest side / resolution, each cut into six tetrahedra; a cube is kept
 * when it holds a surface vertex or its centre is inside the surface (generalised winding
 * number above 1/2, so small holes do no harm). Every surface vertex is carried by the
 * barycentric coordinates of its tetrahedron. No tetrahedralisation tool is needed; the
 * resolution trades detail of the volume for speed (docs/softbody.md). */
typedef struct mn_lattice {
    int nnodes;
    double* nodes; /* nnodes x 3: rest positions */
    int ntets;
    int* tets; /* ntets x 4, positive volume */
    int nsurf;
    int* surf_tet;     /* nsurf: the tetrahedron carrying each surface vertex */
    double* surf_bary; /* nsurf x 4: its barycentric coordinates (each in [0, 1]) */
    double cell;       /* a cube's edge */
    int dims[3];       /* cubes along x, y, z */
    double origin[3];  /* the lattice's lowest corner */
    int* node_cell;    /* nnodes x 3: each node's lattice coordinates */
} mn_lattice;

/* From a surface (nverts x 3 positions, ntris x 3 triangles; resolution 1..256 cubes along
 * the longest side, at most 2^22 in the box and 2e9 cubes times triangles: the inside test
 * takes a solid angle of every triangle at every cube). */
mn_lattice* mn_lattice_create(int nverts, const double* pos, int ntris, const int* tris,
                              int resolution, mn_error* err);
void mn_lattice_destroy(mn_lattice* L);
/* The surface vertices (nsurf x 3) carried by node positions nodes_x (nnodes x 3). */
void mn_lattice_surface(const mn_lattice* L, const double* nodes_x, double* out);
/* A rig over the lattice's nodes with the controllers of a rig over its surface: a node of
 * a surface vertex's tetrahedron takes the surface weights shared back by the barycentric
 * coordinates, the nodes inside take the mean of their weighted neighbours, layer by layer
 * (the largest MN_SKIN_MAX_INFLUENCES kept). node_mass: nnodes (NULL: all 1). */
mn_rig* mn_lattice_rig(const mn_lattice* L, const mn_rig* surface, const double* node_mass,
                       mn_error* err);

/* ---- the coupling of skinning and the soft body (Wu & Umetani 2023) -------------------
 *
 * A rig over the soft body's own vertices (same count and rest positions) is coupled to
 * it both ways. Every substep, after the body's own constraints:
 *   1. the free controllers are fitted to the body (the seed's IK, mn_fit), the driven
 *      ones are where the user, a key or an animation puts them (moved linearly over the
 *      step from where they were to their targets);
 *   2. the complementary constraint C_j = sum_i m_i w_ij (x_i - x_i^r) = 0 for every
 *      controller j (the body's deviation from the rig's reproduction x^r is
 *      mass-orthogonal to the span of the skinning weights) is projected exactly, with the
 *      precomputed factor of W^T M W, the top-left block of the seed's KKT system;
 *      the driven controllers' rotations are held by the constraint on the rotational
 *      moments of their deviation about their own centroids (the paper's rotation rows).
 * So the driven controllers move the body, and the body moves the free controllers.
 * docs/softbody.md derives it. With enabled = 0 the coupling is one-way, as marionette
 * sim did before: the vertices that the driven controllers alone move are pinned to them,
 * the body steps, and the rig is fitted once per step. */

typedef struct mn_coupling_options {
    int enabled;              /* 1 (default): two-way; 0: one-way (pins, one fit a step) */
    double compliance_driven; /* of the driven controllers' rows (default 0: hard) */
    double compliance_free;   /* of the free controllers' rows (default 0); < 0: no rows */
    int driven_rotation;      /* 1 (default): hold the driven controllers' rotations too */
    mn_fit_options fit;       /* the fit of every substep (default: mn_fit_default with
                                 max_iters 8 and no vertex error) */
} mn_coupling_options;

mn_coupling_options mn_coupling_default(void);

typedef struct mn_coupled_result {
    mn_status status;   /* MN_OK, MN_ERR_ARG, MN_ERR_NOCONVERGE (state restored),
                           MN_ERR_SINGULAR (the rows' block is singular for a new pinned set) */
    int iterations;     /* substeps done */
    int fit_iterations; /* fit iterations summed over the substeps */
    double residual;    /* the complementary constraint after the step (mn_coupled_residual) */
    double fit_rms;     /* the last fit's mass-weighted RMS error */
    double max_speed;
    double us_sim, us_fit, us_couple; /* thread CPU time of the three parts, microseconds */
    char message[160];
} mn_coupled_result;

typedef struct mn_coupled mn_coupled;

/* Couples sb and rig (rig->nverts == sb->nverts, the same rest positions and masses
 * are the caller's business: the rig's masses weight the fit and the constraint). driven:
 * nctrl flags (NULL: none). Both must outlive it. Factorises W^T M W (MN_ERR_SINGULAR
 * when a controller moves no vertex). */
mn_coupled* mn_coupled_create(mn_softbody* sb, const mn_rig* rig, const uint8_t* driven,
                              const mn_coupling_options* opt, mn_error* err);
void mn_coupled_destroy(mn_coupled* c);
/* Changes the driven set (refactorises; no allocation). */
mn_status mn_coupled_set_driven(mn_coupled* c, const uint8_t* driven, mn_error* err);
/* The controllers' poses (nctrl): driven ones where they are, free ones as last fitted. */
mn_xform* mn_coupled_pose(mn_coupled* c);
/* Where driven controller j is to be at the end of the next step. */
void mn_coupled_drive(mn_coupled* c, int j, const mn_xform* target);
/* One step of dt seconds in sb->opt.substeps substeps. No allocation. A step that
 * produces a non-finite position restores the body and the poses and says so. */
mn_status mn_coupled_step(mn_coupled* c, double dt, mn_coupled_result* r);
/* max_j |C_j| / (L M): the complementary constraint's largest translation row, relative to
 * the rest bounding-box diagonal L times the total mass M (0 when it holds exactly). */
double mn_coupled_residual(mn_coupled* c);
/* The rig's reproduction of the body at the current poses (nverts x 3). */
const double* mn_coupled_rigged(const mn_coupled* c);

#ifdef __cplusplus
}
#endif
#endif
