/* Private parts of the glTF 2.0 reader and writer (src/doc/gltf*.c).
 *
 * gltf_buffer.c  the container: .glb chunks, the JSON (cJSON), buffers (GLB BIN chunk,
 *                base64 data: URIs, external files) and accessors (byteStride, sparse,
 *                every componentType, normalisation), each checked against its buffer.
 * gltf.c         the document: nodes, the skin, the skinned mesh, animations -> mn_gltf.
 * gltf_pose.c    sampling animations, skinning matrices and vertices, the marionette model.
 * gltf_material.c the skinned mesh's materials, textures, samplers and images, kept for
 *                writing back (mn_gltf_write_options.keep_attributes).
 *
 * Section numbers "glTF 3.x" refer to the glTF 2.0 specification (Khronos, 2021). */
#ifndef MN_GLTF_INTERNAL_H
#define MN_GLTF_INTERNAL_H

#include <marionette/gltf.h>

#include <cjson/cJSON.h>
#include <stddef.h>

#include "doc/doc_internal.h"

/* glTF componentType codes (glTF 3.6.2.2) and a bit mask per code. */
enum {
    GLTF_BYTE = 5120,
    GLTF_UNSIGNED_BYTE = 5121,
    GLTF_SHORT = 5122,
    GLTF_UNSIGNED_SHORT = 5123,
    GLTF_UNSIGNED_INT = 5125,
    GLTF_FLOAT = 5126
};
#define GLTF_CT(code) (1u << ((code)-GLTF_BYTE))
#define GLTF_CT_INTS                                                                               \
    (GLTF_CT(GLTF_BYTE) | GLTF_CT(GLTF_UNSIGNED_BYTE) | GLTF_CT(GLTF_SHORT) |                      \
     GLTF_CT(GLTF_UNSIGNED_SHORT) | GLTF_CT(GLTF_UNSIGNED_INT))
#define GLTF_CT_ANY (GLTF_CT_INTS | GLTF_CT(GLTF_FLOAT))

/* How integer components become doubles. */
typedef enum gltf_norm {
    GLTF_NORM_RAW = 0,  /* the integer value itself (indices, joint numbers) */
    GLTF_NORM_ALWAYS,   /* c / max (weights, rotations: glTF requires normalized there) */
    GLTF_NORM_AS_STORED /* as the accessor's "normalized" flag says (positions) */
} gltf_norm;

typedef struct gltf_buffer {
    const unsigned char* data; /* NULL until loaded */
    size_t len;                /* bytes usable: the declared byteLength */
    unsigned char* owned;      /* what to free (decoded base64, an external file) */
} gltf_buffer;

/* Everything one read needs: the parsed JSON, the buffers, and where to report. */
/* The items of a JSON array as a vector (see mn_gltf_item). */
typedef struct gltf_items {
    const cJSON** item;
    int n, built;
} gltf_items;

typedef struct gltf_ctx {
    const char* name; /* file name used in messages */
    char* dir;        /* folder of the file, for relative URIs ("" for the cwd) */
    mn_doc_read_beneath_fn read_beneath; /* how those are read (NULL: they are not) */
    cJSON* root;
    const unsigned char* bin; /* GLB BIN chunk (NULL for .gltf) */
    size_t bin_len;
    int nbuffers;
    gltf_buffer* buffers;
    mn_warnings* warn;
    mn_error* err;
    const char* json; /* the JSON text of a .gltf, to find an error's line (NULL for .glb) */
    size_t json_len;
    gltf_items accessors, views; /* the top-level arrays, indexed on first use */
} gltf_ctx;

/* Item i of array (NULL when out of range), in constant time: cJSON_GetArrayItem walks the
 * list, so looking up every item of a long array that way is quadratic. The vector is built
 * on the first call and freed by mn_gltf_items_free. */
const cJSON* mn_gltf_item(gltf_items* v, const cJSON* array, int i);
/* The number of items of array (0 when it is not an array), in constant time likewise. */
int mn_gltf_item_count(gltf_items* v, const cJSON* array);
void mn_gltf_items_free(gltf_items* v);

/* Sets c->err: "file:line: field: text", with the line of the field (a JSON path such as
 * "accessors[3].count") in a .gltf text, or of its nearest enclosing value that exists. */
mn_status mn_gltf_fail(gltf_ctx* c, mn_status s, const char* field, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Parses a .glb or .gltf image (by its magic) into c->root and c->bin. */
mn_status mn_gltf_parse_container(gltf_ctx* c, const unsigned char* data, size_t len);
/* Frees what the context owns (JSON tree, loaded buffers, dir). */
void mn_gltf_ctx_free(gltf_ctx* c);

/* Reads accessor `index` (referenced from `field`, used in messages) as doubles: *out is
 * count x ncomp, malloc'd. The accessor's type must have ncomp components (1 SCALAR, 3
 * VEC3, 4 VEC4, 16 MAT4), its componentType one of ct_mask. Every byte read is checked
 * against its bufferView and buffer; non-finite floats are rejected. */
mn_status mn_gltf_read_accessor(gltf_ctx* c, int index, const char* field, int ncomp,
                                unsigned ct_mask, gltf_norm norm, double** out, int* count,
                                int* ctype);

/* The bytes of bufferView v (referenced from field, for messages), checked against its
 * buffer as an accessor's view is. */
mn_status mn_gltf_view_bytes(gltf_ctx* c, int v, const unsigned char** data, size_t* len);

/* JSON helpers: each names `path` + key in its error. An absent optional index gives -1,
 * an absent optional size gives def. */
mn_status mn_gltf_json_index(gltf_ctx* c, const cJSON* obj, const char* key, const char* path,
                             int required, int limit, int* out);
mn_status mn_gltf_json_size(gltf_ctx* c, const cJSON* obj, const char* key, const char* path,
                            int required, double def, double max, double* out);
/* An array of exactly n finite numbers; *present is 0 (and out untouched) when absent. */
mn_status mn_gltf_json_numbers(gltf_ctx* c, const cJSON* obj, const char* key, const char* path,
                               int n, double* out, int* present);
/* The array member `key` (NULL when absent; an error when present but not an array). */
mn_status mn_gltf_json_array(gltf_ctx* c, const cJSON* obj, const char* key, const char* path,
                             const cJSON** out, int* n);

/* Decodes standard base64 (RFC 4648, '=' padding optional); returns the byte count or -1
 * on a character outside the alphabet. out needs room for 3 * (n / 4) + 2 bytes. */
long mn_gltf_base64_decode(const char* s, size_t n, unsigned char* out);

/* ---- what mn_gltf keeps private (mn_gltf.priv) ------------------------------------------- */

/* Rest transform of a skeleton node: either a matrix, or TRS (glTF 3.5.3). */
typedef struct gltf_rest {
    double t[3];
    mn_quat r;
    double s[3];
    int has_matrix;
    double m[12]; /* 3x4 row-major local transform at rest */
} gltf_rest;

/* An image kept for writing back: its bytes (PNG or JPEG) and media type. */
typedef struct gltf_image {
    unsigned char* data;
    size_t len;
    const char* mime; /* "image/png" or "image/jpeg" (static) */
} gltf_image;

/* The look of the skinned mesh (glTF 3.8 textures, samplers, images; 3.9 materials): what
 * mn_gltf_write writes back with keep_attributes. Materials, textures and samplers are
 * JSON array texts ("[...]", NULL when empty) whose indices point into the kept arrays:
 * a material's texture slots into textures, a texture's source into images and its
 * sampler into samplers. */
typedef struct gltf_look {
    int nprims;
    int* prim_tri; /* nprims + 1: the first triangle of each primitive, then ntris */
    int* prim_mat; /* nprims: the kept material of each primitive, -1 for none */
    char *materials, *textures, *samplers;
    int nimages;
    gltf_image* images;
} gltf_look;

/* Reads the materials of the skinned mesh's primitives (meshes[mesh].primitives: prims, np
 * items; prim_tri as in gltf_look) and what they use. *out is NULL when no primitive has a
 * material. Texture slots are kept only when has_uv (the mesh keeps TEXCOORD_0) and their
 * texCoord is 0. */
mn_status mn_gltf_read_look(gltf_ctx* c, int mesh, const cJSON* prims, int np, const int* prim_tri,
                            int has_uv, gltf_look** out);
void mn_gltf_look_free(gltf_look* l);

/* Skeleton nodes are the skin's joints (snode j = joint j) followed by every other node on
 * the way from a joint up to its nearest joint ancestor or to the scene root. */
typedef struct gltf_priv {
    int nsnode;
    gltf_rest* rest;       /* nsnode */
    int* order;            /* njoints: joints parent before child */
    int* path_off;         /* njoints: start in path[] */
    int* path_len;         /* njoints */
    int* path;             /* non-joint snodes above each joint, top-down */
    unsigned char* jtrans; /* njoints: 1 when the joint's position in its parent joint's
                              frame can change (a root; a translation channel on it; any
                              channel on a node between it and its parent joint; an
                              animated scale above it): a FREE joint in the model */
    int* morder;           /* njoints: the glTF joint of each model joint (mn_gltf_model) */
    gltf_look* look;       /* the skinned mesh's materials, NULL when it has none */
} gltf_priv;

enum { GLTF_PATH_T = 0, GLTF_PATH_R = 1, GLTF_PATH_S = 2 };
enum { GLTF_LINEAR = 0, GLTF_STEP = 1, GLTF_CUBIC = 2 };

typedef struct gltf_channel {
    int snode;  /* target skeleton node */
    int path;   /* GLTF_PATH_* */
    int interp; /* GLTF_LINEAR, GLTF_STEP, GLTF_CUBIC */
    int nkeys;
    double* times;  /* nkeys, non-decreasing */
    double* values; /* nkeys x ncomp (x 3 for CUBIC: in-tangent, value, out-tangent) */
} gltf_channel;

/* What mn_gltf_anim.channels points to. */
typedef struct gltf_anim_priv {
    gltf_channel* ch; /* nchannels */
    int* lookup;      /* nsnode x 3: channel per node and path, -1 for none;
                         NULL when no channel drives the skeleton */
} gltf_anim_priv;

/* Local transform (3x4) of skeleton node k at time t of animation a (a < 0: rest). */
void mn_gltf_local(const mn_gltf* g, int a, double t, int k, double* out);

/* 3x4 affine helpers: c = a b (c may alias neither). */
void mn_gltf_aff_mul(const double* a, const double* b, double* c);
void mn_gltf_aff_identity(double* a);
/* T * R * S as a 3x4 matrix (glTF 3.5.3). */
void mn_gltf_trs(const double* t, mn_quat r, const double* s, double* m);

#endif
