/* marionette glTF 2.0: skinned meshes (.gltf with embedded or external buffers, and .glb)
 * read with cJSON. One skin, its joints, inverse bind matrices, the skinned mesh's
 * positions, triangles and JOINTS_0/WEIGHTS_0, and the animations that drive the joints,
 * each by name with its key times. A file without a skinned mesh is read as a skeleton
 * (no mesh). mn_gltf_write writes a figure, its motion and optionally the skinned mesh as
 * a .glb.
 *
 * Matrices here are 3x4 affine, row-major (a rigid or scaled transform x' = A x + b stored
 * as [A | b], 12 doubles), in the glTF scene's units (metres) and axes (+Y up).
 *
 * Skinning follows the glTF 2.0 specification (3.7.3): a joint's skinning matrix is its
 * node's world transform times its inverse bind matrix, and the transform of the skinned
 * mesh's own node is ignored, so skinned vertices come out in world (scene) space. For
 * files whose inverse bind matrices invert the joints' rest world transforms (most
 * exporters), the skinned rest pose is mesh_world applied to rest_pos. The guide is
 * docs/gltf.md.
 *
 * Calling convention, default options and results: see base.h. */
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
    double duration;   /* seconds: the last key time */
    int nkeys;         /* distinct key times of all its channels that move the figure */
    double* key_times; /* nkeys, ascending */
    /* Internal sampler data, read with mn_gltf_sample. */
    int nchannels;
    void* channels;
} mn_gltf_anim;

typedef struct mn_gltf {
    /* the skinned mesh (all primitives of the skinned node, concatenated) */
    int nverts;
    double* rest_pos; /* nverts x 3, in the mesh node's space (bind pose) */
    int ntris;
    int* tris;       /* ntris x 3 */
    int* vjoint;     /* nverts x 4, indices into the skin's joints */
    double* vweight; /* nverts x 4, scaled to sum to 1 (a warning when the stored weights
                        did not); a vertex with all-zero weights gets weight 1 on its
                        first listed joint (a warning) */

    /* the skin */
    int njoints;
    char** joint_name;    /* node names ("joint<i>" when unnamed) */
    int* joint_parent;    /* parent within the skin's joints, -1 for a root of the skin */
    double* inverse_bind; /* njoints x 12 */
    double* rest_local;   /* njoints x 12: each joint node's own TRS at rest */
    double* root_parent;  /* 12: world transform of the skin roots' parent node(s) at rest */

    int nanims;
    mn_gltf_anim* anims;

    /* Optional vertex attributes, kept for writing back (mn_gltf_write_options.keep_attributes):
     * NORMAL (nverts x 3), TEXCOORD_0 (nverts x 2) and TANGENT (nverts x 4), each NULL
     * unless every primitive of the skinned mesh has it. Skinning does not read them. */
    double* normal;
    double* uv;
    double* tangent;

    char* name;         /* the skin's name, else the skinned node's, else "skin" */
    double* mesh_world; /* 12: world transform of the skinned mesh node at rest (ignored
                           by skinning, see above) */
    void* priv;         /* reader-private: skeleton nodes above the joints, rest TRS */
} mn_gltf;

/* Reads a .gltf (buffers as data: URIs or files relative to it) or a .glb (by content).
 * The skinned mesh is the lowest-numbered node with both "mesh" and "skin" whose root
 * node is in the default scene (else the lowest-numbered one anywhere). Without one, the
 * figure is skins[0]'s joints (a warning), else the default scene's node tree less the
 * leaves that only carry a mesh or camera (docs/gltf.md, "Skeleton-only files"); nverts
 * and ntris are then 0. On failure out is left zeroed and err names the
 * file and the field ("accessors[3].count"). */
mn_status mn_gltf_read(const char* path, mn_gltf* out, mn_warnings* warn, mn_error* err);
/* The same from memory; name is used in messages and its folder for external buffers. */
mn_status mn_gltf_read_mem(const void* data, size_t len, const char* name, mn_gltf* out,
                           mn_warnings* warn, mn_error* err);
void mn_gltf_free(mn_gltf* g);

/* World transforms (njoints x 12) of the skin joints when animation `anim` is sampled at
 * time t (clamped to [0, duration]; t < 0 or anim < 0 gives the rest pose). Linear
 * interpolation for translation and scale, slerp for rotation, STEP and CUBICSPLINE as in
 * glTF Appendix C. Animated ancestors of the joints move them too. No heap allocation.
 * MN_ERR_ARG for NULL pointers, anim >= nanims or a NaN time. */
mn_status mn_gltf_sample(const mn_gltf* g, int anim, double t, double* joint_world);

/* Skinning matrices world_j * inverse_bind_j (njoints x 12) and the skinned positions
 * (nverts x 3) for those world transforms. */
void mn_gltf_skin_matrices(const mn_gltf* g, const double* joint_world, double* skin_mats);
void mn_gltf_skin_vertices(const mn_gltf* g, const double* skin_mats, double* out_pos);

/* The skin's joints as a marionette model, for posing a glTF character with the IK solvers
 * and for playing its animations. Joints are added parent before child and carry the skin's
 * joint names (find them with mn_model_find_joint). The roots are FREE; a joint that some
 * animation moves in its parent joint's frame (a translation channel on it, any channel on a
 * non-joint node between it and its parent joint, an animated scale above it) is FREE too,
 * its translation in the parent's frame added to its rest offset; every other joint is a
 * BALL. At q = q0 each joint frame sits at the rest world position of its glTF joint and is
 * turned by that joint's rest world rotation (scale divided out of the columns). A joint's
 * axis (the BALL twist axis) points to its first child with a distinct position (the bone),
 * +y for a leaf; no limits are set. Scale is baked into the offsets: a joint with non-unit
 * scale places its children where glTF does at rest, but the model's frames stay rigid.
 * NULL with err set for a mirrored (negative-determinant) rest frame. */
mn_model* mn_gltf_model(const mn_gltf* g, mn_error* err);

/* The state q (m->nq numbers) of m = mn_gltf_model(g) at time t of animation `anim` (t < 0
 * or anim < 0: the rest pose; t clamped to the duration): every joint frame turned to its
 * glTF joint's world rotation (scale divided out), every FREE joint at its glTF joint's
 * world position. So FK reproduces mn_gltf_sample's joint positions and rotations exactly;
 * an animated scale moves the children (through their translations) but the frames stay
 * rigid. prev (a state, or NULL) picks quaternion signs nearest it. work: 16 x njoints
 * doubles. No heap allocation. MN_ERR_ARG when m is not g's model (joint order, names and
 * types), anim is out of range or t is NaN. */
mn_status mn_gltf_state(const mn_gltf* g, const mn_model* m, int anim, double t, const double* prev,
                        double* q, double* work, mn_error* err);

/* The state of m = mn_gltf_model(g) that puts its joints where the skin joints' world
 * transforms joint_world (njoints x 12, as mn_gltf_sample gives them) are, as mn_gltf_state
 * does for a sampled animation (a BALL joint keeps its rest offset on its parent). work:
 * 4 x njoints doubles. No heap allocation. */
mn_status mn_gltf_state_world(const mn_gltf* g, const mn_model* m, const double* joint_world,
                              const double* prev, double* q, double* work, mn_error* err);

/* Limits of mn_gltf_motion's resampling, which scale with the clip's data: at most
 * MN_GLTF_MAX_FRAMES_PER_KEY frames per key time of the clip (but always up to
 * MN_GLTF_MIN_FRAME_LIMIT frames), and at most MN_GLTF_MAX_MOTION_NUMBERS numbers (200 MB)
 * in all; beyond, MN_ERR_ARG naming "fps". */
#define MN_GLTF_MAX_FRAMES_PER_KEY 1000.0
#define MN_GLTF_MIN_FRAME_LIMIT 100000.0
#define MN_GLTF_MAX_MOTION_NUMBERS 2.5e7

/* Animation `anim` as a motion of m = mn_gltf_model(g): frames every 1/fps seconds from 0
 * through the duration (the last frame at the duration itself; one frame, the rest pose,
 * for anim < 0), each as mn_gltf_state. Quaternions keep the sign nearest the previous
 * frame's. out->q is malloc'd (free with mn_motion_free). MN_ERR_ARG when m is not this
 * skin's model, fps is not positive or anim is out of range. To play an animation at its
 * own key times, use anims[anim].key_times with mn_gltf_state. */
mn_status mn_gltf_motion(const mn_gltf* g, const mn_model* m, int anim, double fps, mn_motion* out,
                         mn_error* err);

/* Writes a model and its motion (NULL or no frames: the figure alone) as a glTF 2.0 binary
 * (.glb), atomically: one node per joint (named by it, rest translation and rotation from
 * FK at q0 in the parent joint's frame), and one animation "motion" with a key per frame
 * (f * frame_time): LINEAR rotation channels for HINGE, BALL and FREE joints, translation
 * channels for SLIDE and FREE joints, the joints' local frames from FK. With skin (NULL
 * for bones only; an mn_gltf with a mesh whose joint names are joints of m, e.g. the file
 * m = mn_gltf_model(skin) came from) the skinned mesh and the skin are written too, bound
 * so that the mesh at q0 is the skin's rest pose. Values are 32-bit floats. MN_ERR_ARG for
 * a motion that does not fit m, a non-finite state or a skin joint m lacks. docs/gltf.md. */
mn_status mn_gltf_write(const char* path, const mn_model* m, const mn_motion* motion,
                        const mn_gltf* skin, mn_error* err);

/* How mn_gltf_write_ex places the figure in the file's scene. */
typedef struct mn_gltf_write_options {
    /* Every length (every joint's translation, at rest and in the motion) times scale: 1
     * keeps the model's lengths; glTF's unit is the metre (glTF 2.0, 3.4). */
    double scale;
    /* The rotation (unit quaternion) applied at the roots: each root joint's rest and
     * animated frame is turned by it, so that FK of the file is root_rot applied to FK of
     * the model (times scale). glTF is +Y up: a +Z-up figure (URDF, a robot's convention)
     * is stood up by -90 degrees about X, (w, x, y, z) = (sqrt(1/2), -sqrt(1/2), 0, 0),
     * which maps (x, y, z) to (x, z, -y). Identity keeps the model's axes. */
    mn_quat root_rot;
    /* With a skin: write its vertex normals and texture coordinates (NORMAL, TEXCOORD_0)
     * when the skin has them (mn_gltf.normal, .uv), and the materials of its primitives
     * with the textures, samplers and images they use (images embedded in the .glb, with
     * their media type; a primitive keeps its own material: primitives with different
     * materials are written as separate primitives over the same vertices); 0 writes
     * positions, joints and weights only. docs/gltf.md. */
    int keep_attributes;
    /* The joints' polygon objects (mn_objects_read in meshio.h; Welman 6.1.1's `object`),
     * NULL for none: each joint's object becomes a mesh (POSITION and triangle indices,
     * lengths times scale) on a node "JOINT object" that is a child of the joint's node with
     * no transform of its own, so it moves with the joint. Not with a skin. */
    const struct mn_objects* objects;
    /* The state (m->nq numbers) the nodes' translations and rotations are written at; NULL
     * for the rest pose m->q0. Not with a skin (its binding is the rest pose's). */
    const double* pose;
} mn_gltf_write_options;
/* The unit of a figure's lengths guessed from its height at rest, for a file that has none
 * (BVH): the scale that makes it metres. The height is the vertical (+Y) extent of its
 * joints at q0 with root_rot applied at the roots, or its largest extent when that is
 * flat (below a quarter of it). A person is 1 to 2.2 m tall, so: 0.3 to 3: metres (1); 15
 * to 45: CMU units (0.056444: the CMU database's 1/0.45 inch); 45 to 80: inches (0.0254);
 * 80 to 300: centimetres (0.01); 800 to 3000: millimetres (0.001); anything else is kept
 * (1, "unknown units"). *height and *units (a static name) are set when not NULL. The same
 * table as the editor's (web/editor/src/docmodel.js, guessUnits). Returns 1 when out of
 * memory (no guess). */
double mn_gltf_guess_scale(const mn_model* m, mn_quat root_rot, double* height, const char** units);
/* scale 1, root_rot identity, keep_attributes 0, no objects, the rest pose: what
 * mn_gltf_write writes. */
mn_gltf_write_options mn_gltf_write_default(void);
/* mn_gltf_write with options (NULL: the defaults). A skin is written only with the
 * defaults (its mesh is bound to the model's own frame): MN_ERR_UNSUPPORTED otherwise, as
 * for a scale that is not finite and > 0 or a root_rot that is not a unit quaternion
 * (MN_ERR_ARG). */
mn_status mn_gltf_write_ex(const char* path, const mn_model* m, const mn_motion* motion,
                           const mn_gltf* skin, const mn_gltf_write_options* opt, mn_error* err);
/* mn_gltf_write_ex into memory: *glb (malloc'd; free it with free) holds the *len bytes of
 * the .glb that mn_gltf_write_ex writes, without a file; messages name no file. */
mn_status mn_gltf_write_mem(const mn_model* m, const mn_motion* motion, const mn_gltf* skin,
                            const mn_gltf_write_options* opt, unsigned char** glb, size_t* len,
                            mn_error* err);

/* Animation `anim` (>= 0) as a motion at its own key times when they are evenly spaced from
 * 0 (within 1e-4 of the interval: one frame per key), else at 30 frames per second, but
 * never more than 16 frames per key plus 1024 (a lower rate then, with a warning naming
 * the file `name`, which may be NULL). What
 * mn_figure_read gives for a glTF file's first animation. */
mn_status mn_gltf_motion_keys(const mn_gltf* g, const mn_model* m, int anim, const char* name,
                              mn_motion* out, mn_warnings* warn, mn_error* err);

/* mn_figure_read, and the skinned mesh too when path is a glTF file with one: *skin (may be
 * NULL) then holds that file as mn_gltf_read gives it, the model having been built from it
 * with mn_gltf_model, so that mn_gltf_write(..., m, motion, skin, ...) writes the figure with
 * its mesh. For any other file (a skeleton-only glTF, BVH, URDF, skeleton text, "stickman")
 * *skin is zeroed (nverts 0). Free it with mn_gltf_free (safe on a zeroed one). On failure
 * nothing is returned (*model NULL, *skin zeroed). */
mn_status mn_figure_read_skin(const char* path, mn_model** model, mn_motion* motion, mn_gltf* skin,
                              mn_warnings* warn, mn_error* err);

/* The same from memory (mn_figure_read_mem): name picks the reader and names the input; a
 * glTF file's external buffers are read beneath name's folder. */
mn_status mn_figure_read_skin_mem(const void* data, size_t len, const char* name, mn_model** model,
                                  mn_motion* motion, mn_gltf* skin, mn_warnings* warn,
                                  mn_error* err);

/* Bounds of the images a skinned mesh's materials use (read for writing back with
 * mn_gltf_write_options.keep_attributes): at most MN_GLTF_MAX_IMAGE_BYTES (64 MiB) each and
 * MN_GLTF_MAX_IMAGES_BYTES (256 MiB) in all; beyond, mn_gltf_read fails naming the image. */
#define MN_GLTF_MAX_IMAGE_BYTES ((size_t)64 << 20)
#define MN_GLTF_MAX_IMAGES_BYTES ((size_t)256 << 20)

/* Index of the animation named name, -1 when none. */
int mn_gltf_find_anim(const mn_gltf* g, const char* name);

#ifdef __cplusplus
}
#endif
#endif
