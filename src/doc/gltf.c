/* glTF 2.0 skinned meshes -> mn_gltf: the node hierarchy (glTF 3.5), the skin (3.7.3), the
 * skinned mesh's triangles with JOINTS_0/WEIGHTS_0 (3.7.2), and the animations that move
 * the joints or their ancestors (3.11). The container, buffers and accessors are read by
 * gltf_buffer.c; sampling and skinning live in gltf_pose.c. */
#include "doc/gltf_internal.h"
#include "doc/doc_internal.h"
#include "doc/doc_codecs.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node of the file, as read. */
typedef struct tnode {
    int parent;       /* -1 for a root */
    int mesh, skin;   /* -1 when absent */
    const char* name; /* NULL when absent */
    gltf_rest rest;
} tnode;

typedef struct reader {
    gltf_ctx* c;
    int nnodes;
    tnode* nodes;
    int* node_snode; /* nnodes: skeleton node of each file node, -1 when not one */
    int* snode_node; /* file node of each skeleton node */
    mn_gltf* g;
    gltf_items samplers; /* of the animation being read */
} reader;

static char* dupstr(const char* s) {
    size_t n = strlen(s) + 1;
    char* d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- 3x4 affine transforms ------------------------------------------------------------ */

void mn_gltf_aff_identity(double* a) {
    static const double id[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    memcpy(a, id, sizeof id);
}

void mn_gltf_aff_mul(const double* a, const double* b, double* c) {
    for (int r = 0; r < 3; r++) {
        const double* ar = a + 4 * r;
        for (int k = 0; k < 3; k++)
            c[4 * r + k] = ar[0] * b[k] + ar[1] * b[4 + k] + ar[2] * b[8 + k];
        c[4 * r + 3] = ar[0] * b[3] + ar[1] * b[7] + ar[2] * b[11] + ar[3];
    }
}

/* T * R * S (glTF 3.5.3) as a 3x4 matrix. */
void mn_gltf_trs(const double* t, mn_quat r, const double* s, double* m) {
    mn_mat3 R = mn_quat_to_mat3(r);
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++)
            m[4 * i + k] = R.m[3 * i + k] * s[k];
        m[4 * i + 3] = t[i];
    }
}

/* A column-major glTF mat4 -> 3x4 row-major; 0 when its last row is not (0 0 0 1). */
static int mat4_to_aff(const double* cm, double* m) {
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 4; k++)
            m[4 * r + k] = cm[4 * k + r];
    return fabs(cm[3]) < 1e-5 && fabs(cm[7]) < 1e-5 && fabs(cm[11]) < 1e-5 &&
           fabs(cm[15] - 1) < 1e-5;
}

/* ---- nodes ---------------------------------------------------------------------------- */

static mn_status read_node(reader* rd, int i, const cJSON* jn, int nmeshes, int nskins) {
    gltf_ctx* c = rd->c;
    tnode* n = &rd->nodes[i];
    char path[32], f[64];
    snprintf(path, sizeof path, "nodes[%d]", i);
    if (!cJSON_IsObject(jn)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
    mn_status s = mn_gltf_json_index(c, jn, "mesh", path, 0, nmeshes, &n->mesh);
    if (!s) s = mn_gltf_json_index(c, jn, "skin", path, 0, nskins, &n->skin);
    if (s) return s;
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(jn, "name");
    n->name = cJSON_IsString(name) && name->valuestring[0] ? name->valuestring : NULL;

    const cJSON* children;
    int nch;
    s = mn_gltf_json_array(c, jn, "children", path, &children, &nch);
    if (s) return s;
    const cJSON* e = children ? children->child : NULL;
    for (int k = 0; k < nch; k++, e = e->next) {
        snprintf(f, sizeof f, "%s.children[%d]", path, k);
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
            e->valuedouble >= rd->nnodes)
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "not a node index");
        int ch = (int)e->valuedouble;
        if (ch == i) return mn_gltf_fail(c, MN_ERR_PARSE, f, "a node cannot be its own child");
        if (rd->nodes[ch].parent >= 0)
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "node %d already has parent nodes[%d]", ch,
                                rd->nodes[ch].parent);
        rd->nodes[ch].parent = i;
    }

    gltf_rest* r = &n->rest;
    double cm[16], q[4];
    int has_m, has_t, has_r, has_s;
    s = mn_gltf_json_numbers(c, jn, "matrix", path, 16, cm, &has_m);
    if (!s) s = mn_gltf_json_numbers(c, jn, "translation", path, 3, r->t, &has_t);
    if (!s) s = mn_gltf_json_numbers(c, jn, "rotation", path, 4, q, &has_r);
    if (!s) s = mn_gltf_json_numbers(c, jn, "scale", path, 3, r->s, &has_s);
    if (s) return s;
    if (has_r) {
        /* glTF stores (x, y, z, w); marionette (w, x, y, z). */
        mn_quat qq = mn_q4(q[3], q[0], q[1], q[2]);
        double norm = mn_quat_norm(qq);
        snprintf(f, sizeof f, "%s.rotation", path);
        if (norm < 1e-6) return mn_gltf_fail(c, MN_ERR_PARSE, f, "zero quaternion");
        if (fabs(norm - 1) > 1e-3)
            mn_warn(c->warn, c->name, 0, f, "quaternion of length %g normalised", norm);
        r->r = mn_quat_normalize(qq);
    }
    if (has_m) {
        snprintf(f, sizeof f, "%s.matrix", path);
        if (!mat4_to_aff(cm, r->m))
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "last row is not (0 0 0 1)");
        if (has_t || has_r || has_s)
            mn_warn(c->warn, c->name, 0, f, "both matrix and TRS given: the matrix is used");
        r->has_matrix = 1;
    } else {
        mn_gltf_trs(r->t, r->r, r->s, r->m);
    }
    return MN_OK;
}

/* Parents come from the children lists (one parent each, checked there); a cycle is a
 * loop of parents, found by walking up with a per-start stamp (linear time overall). */
static mn_status read_nodes(reader* rd) {
    gltf_ctx* c = rd->c;
    const cJSON* jnodes;
    mn_status s = mn_gltf_json_array(c, c->root, "nodes", "", &jnodes, &rd->nnodes);
    if (s) return s;
    if (rd->nnodes == 0) return mn_gltf_fail(c, MN_ERR_PARSE, "nodes", "missing or empty");
    int nmeshes = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c->root, "meshes"));
    int nskins = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c->root, "skins"));
    rd->nodes = calloc((size_t)rd->nnodes, sizeof *rd->nodes);
    rd->node_snode = malloc((size_t)rd->nnodes * sizeof(int));
    rd->snode_node = malloc((size_t)rd->nnodes * sizeof(int));
    if (!rd->nodes || !rd->node_snode || !rd->snode_node)
        return mn_gltf_fail(c, MN_ERR_NOMEM, "nodes", "out of memory");
    for (int i = 0; i < rd->nnodes; i++) {
        tnode* n = &rd->nodes[i];
        n->parent = -1;
        n->rest.r = mn_quat_identity();
        n->rest.s[0] = n->rest.s[1] = n->rest.s[2] = 1;
        rd->node_snode[i] = -1;
    }
    int i = 0;
    const cJSON* jn;
    cJSON_ArrayForEach(jn, jnodes) {
        s = read_node(rd, i++, jn, nmeshes, nskins);
        if (s) return s;
    }
    /* node_snode doubles as the stamp array here, reset afterwards. */
    int* stamp = rd->node_snode;
    for (i = 0; i < rd->nnodes; i++) {
        int k = i;
        while (k >= 0 && stamp[k] == -1) {
            stamp[k] = i;
            k = rd->nodes[k].parent;
        }
        if (k >= 0 && stamp[k] == i) {
            char f[48];
            snprintf(f, sizeof f, "nodes[%d].children", rd->nodes[k].parent);
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "cycle in the node hierarchy through nodes[%d]",
                                k);
        }
    }
    for (i = 0; i < rd->nnodes; i++)
        stamp[i] = -1;
    return MN_OK;
}

/* The scenes array and the default scene: `scene`, else scenes[0], else -1 (no scene). */
static mn_status default_scene(gltf_ctx* c, const cJSON** scenes, int* nscenes, int* scene) {
    *scene = -1;
    mn_status s = mn_gltf_json_array(c, c->root, "scenes", "", scenes, nscenes);
    if (!s) s = mn_gltf_json_index(c, c->root, "scene", "", 0, *nscenes, scene);
    if (s) return s;
    if (*scene < 0 && *nscenes > 0) *scene = 0;
    return MN_OK;
}

/* The skinned node: the lowest-numbered node with both mesh and skin whose root is in the
 * default scene; else the lowest-numbered one anywhere. */
static mn_status pick_skinned_node(reader* rd, int* out) {
    gltf_ctx* c = rd->c;
    const cJSON* scenes;
    int nscenes, scene;
    mn_status s = default_scene(c, &scenes, &nscenes, &scene);
    if (s) return s;
    const cJSON* roots = NULL;
    int nroots = 0;
    if (scene >= 0) {
        char path[32];
        snprintf(path, sizeof path, "scenes[%d]", scene);
        const cJSON* js = cJSON_GetArrayItem(scenes, scene);
        if (!cJSON_IsObject(js)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
        s = mn_gltf_json_array(c, js, "nodes", path, &roots, &nroots);
        if (s) return s;
    }
    /* node_snode is still all -1 here: borrow it to mark the scene's root nodes */
    int* in_scene = rd->node_snode;
    const cJSON* e;
    cJSON_ArrayForEach(e, roots) {
        if (cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble < rd->nnodes)
            in_scene[(int)e->valuedouble] = 1;
    }
    int first_any = -1, found = -1;
    for (int i = 0; i < rd->nnodes && found < 0; i++) {
        if (rd->nodes[i].mesh < 0 || rd->nodes[i].skin < 0) continue;
        if (first_any < 0) first_any = i;
        int top = i;
        while (rd->nodes[top].parent >= 0)
            top = rd->nodes[top].parent;
        if (in_scene[top] == 1) found = i;
    }
    for (int i = 0; i < rd->nnodes; i++)
        in_scene[i] = -1;
    if (found >= 0) {
        *out = found;
        return MN_OK;
    }
    *out = first_any; /* -1: no skinned mesh (a skeleton-only file) */
    return MN_OK;
}

static void world_of(const reader* rd, int node, double* w) {
    double tmp[12];
    mn_gltf_aff_identity(w);
    for (int k = node; k >= 0; k = rd->nodes[k].parent) {
        mn_gltf_aff_mul(rd->nodes[k].rest.m, w, tmp);
        memcpy(w, tmp, sizeof tmp);
    }
}

/* ---- the skin ------------------------------------------------------------------------- */

/* Joint names: the node's name, "joint<i>" when unnamed; a repeated name gets "_<i>"
 * appended (a warning) so that the names identify joints. */
static mn_status name_joints(reader* rd, const char* path) {
    mn_gltf* g = rd->g;
    mn_name_map taken; /* the names given so far */
    if (!mn_name_map_init(&taken, (size_t)g->njoints))
        return mn_gltf_fail(rd->c, MN_ERR_NOMEM, path, "out of memory");
    for (int j = 0; j < g->njoints; j++) {
        const char* nm = rd->nodes[rd->snode_node[j]].name;
        char buf[64];
        if (!nm) {
            snprintf(buf, sizeof buf, "joint%d", j);
            nm = buf;
        }
        size_t n = strlen(nm) + 32;
        char* name = malloc(n);
        if (!name) {
            mn_name_map_free(&taken);
            return mn_gltf_fail(rd->c, MN_ERR_NOMEM, path, "out of memory");
        }
        snprintf(name, n, "%s", nm);
        for (int attempt = 0;; attempt++) {
            if (mn_name_map_put(&taken, name, j) < 0) break; /* not taken: now it is */
            if (attempt == 0)
                mn_warn(rd->c->warn, rd->c->name, 0, path, "joint name '%.60s' repeated: renamed",
                        nm);
            if (attempt == 0)
                snprintf(name, n, "%s_%d", nm, j);
            else
                snprintf(name, n, "%s_%d_%d", nm, j, attempt);
        }
        g->joint_name[j] = name;
    }
    mn_name_map_free(&taken);
    return MN_OK;
}

/* Skeleton nodes and paths: for each joint, the non-joint nodes between it and its nearest
 * joint ancestor (or the scene root), which the joint's world transform passes through. */
static mn_status build_skeleton(reader* rd, const char* path) {
    mn_gltf* g = rd->g;
    gltf_priv* p = g->priv;
    int nj = g->njoints;
    p->nsnode = nj;
    p->path_off = malloc((size_t)nj * sizeof(int));
    p->path_len = calloc((size_t)nj, sizeof(int));
    p->order = malloc((size_t)nj * sizeof(int));
    int* depth = calloc((size_t)nj, sizeof(int));
    size_t cap = 64, used = 0;
    p->path = malloc(cap * sizeof(int));
    if (!p->path_off || !p->path_len || !p->order || !depth || !p->path) {
        free(depth);
        return mn_gltf_fail(rd->c, MN_ERR_NOMEM, path, "out of memory");
    }
    for (int j = 0; j < nj; j++) {
        p->path_off[j] = (int)used;
        int k = rd->nodes[rd->snode_node[j]].parent;
        g->joint_parent[j] = -1;
        while (k >= 0) {
            if (rd->node_snode[k] >= 0 && rd->node_snode[k] < nj) {
                g->joint_parent[j] = rd->node_snode[k];
                break;
            }
            if (rd->node_snode[k] < 0) {
                rd->node_snode[k] = p->nsnode;
                rd->snode_node[p->nsnode++] = k;
            }
            if (used == cap) {
                /* A pathological file (deep chains of helper nodes above many joints)
                 * would make this quadratic: refuse past a generous bound. */
                if (cap >= ((size_t)1 << 22)) {
                    free(depth);
                    return mn_gltf_fail(rd->c, MN_ERR_UNSUPPORTED, path,
                                        "node hierarchy too deep above the joints");
                }
                int* np = realloc(p->path, 2 * cap * sizeof(int));
                if (!np) {
                    free(depth);
                    return mn_gltf_fail(rd->c, MN_ERR_NOMEM, path, "out of memory");
                }
                p->path = np;
                cap *= 2;
            }
            p->path[used++] = rd->node_snode[k];
            p->path_len[j]++;
            k = rd->nodes[k].parent;
        }
        /* collected bottom-up: make it top-down */
        int* a = p->path + p->path_off[j];
        for (int x = 0, y = p->path_len[j] - 1; x < y; x++, y--) {
            int t = a[x];
            a[x] = a[y];
            a[y] = t;
        }
    }
    /* Depth in the joint tree, then a counting sort: parents before children. A joint's
     * depth is one more than its parent's; the walk up stops at the first joint whose depth
     * is known and fills in the ones it passed, so every joint is walked over once.
     * depth[] holds depth + 1 (0: not known yet); p->order serves as the walk's stack. */
    int maxd = 0;
    for (int j = 0; j < nj; j++) {
        int top = 0;
        for (int k = j; k >= 0 && !depth[k]; k = g->joint_parent[k])
            p->order[top++] = k;
        while (top > 0) {
            int k = p->order[--top], par = g->joint_parent[k];
            depth[k] = par >= 0 ? depth[par] + 1 : 1;
            if (depth[k] - 1 > maxd) maxd = depth[k] - 1;
        }
    }
    int* start = calloc((size_t)maxd + 2, sizeof(int));
    if (!start) {
        free(depth);
        return mn_gltf_fail(rd->c, MN_ERR_NOMEM, path, "out of memory");
    }
    for (int j = 0; j < nj; j++)
        start[depth[j]]++; /* depth d + 1 counted at d + 1 */
    for (int d = 1; d <= maxd + 1; d++)
        start[d] += start[d - 1];
    for (int j = 0; j < nj; j++)
        p->order[start[depth[j] - 1]++] = j; /* stable: j ascending */
    free(start);
    free(depth);
    p->rest = malloc((size_t)p->nsnode * sizeof *p->rest);
    if (!p->rest) return mn_gltf_fail(rd->c, MN_ERR_NOMEM, path, "out of memory");
    for (int k = 0; k < p->nsnode; k++)
        p->rest[k] = rd->nodes[rd->snode_node[k]].rest;
    return MN_OK;
}

static mn_status alloc_joints(reader* rd, int nj, const char* path) {
    mn_gltf* g = rd->g;
    g->njoints = nj;
    g->joint_name = calloc((size_t)nj, sizeof(char*));
    g->joint_parent = malloc((size_t)nj * sizeof(int));
    g->inverse_bind = malloc((size_t)nj * 12 * sizeof(double));
    g->rest_local = malloc((size_t)nj * 12 * sizeof(double));
    g->root_parent = malloc(12 * sizeof(double));
    if (!g->joint_name || !g->joint_parent || !g->inverse_bind || !g->rest_local || !g->root_parent)
        return mn_gltf_fail(rd->c, MN_ERR_NOMEM, path, "out of memory");
    return MN_OK;
}

/* With node_snode / snode_node set for the joints: names, the skeleton paths and order,
 * and the rest world transform of the first root's parent node. */
static mn_status setup_joints(reader* rd, const char* path) {
    mn_gltf* g = rd->g;
    mn_status s = name_joints(rd, path);
    if (!s) s = build_skeleton(rd, path);
    if (s) return s;
    mn_gltf_aff_identity(g->root_parent);
    for (int j = 0; j < g->njoints; j++)
        if (g->joint_parent[j] < 0) {
            int node = rd->snode_node[j];
            if (rd->nodes[node].parent >= 0) world_of(rd, rd->nodes[node].parent, g->root_parent);
            break;
        }
    return MN_OK;
}

/* A file without a skin: the figure is the node hierarchy of the default scene (`scene`,
 * else scenes[0], else every node): every node of its trees is a joint, except leaves that
 * carry a mesh or a camera and that no animation targets (objects drawn at a node, not
 * bones). Joints are in file order; inverse bind matrices are the identity. */
static mn_status read_bare_skeleton(reader* rd) {
    gltf_ctx* c = rd->c;
    mn_gltf* g = rd->g;
    const cJSON* scenes;
    int nscenes, scene;
    mn_status s = default_scene(c, &scenes, &nscenes, &scene);
    if (s) return s;
    /* mark[k]: 1 a root of the scene, 2 animated, 4 has children, 8 a mesh or camera */
    unsigned char* mark = calloc((size_t)rd->nnodes, 1);
    if (!mark) return mn_gltf_fail(c, MN_ERR_NOMEM, "nodes", "out of memory");
    if (scene >= 0) {
        const cJSON* roots = NULL;
        int nroots = 0;
        char path[32];
        snprintf(path, sizeof path, "scenes[%d]", scene);
        const cJSON* js = cJSON_GetArrayItem(scenes, scene);
        if (!cJSON_IsObject(js)) s = mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
        if (!s) s = mn_gltf_json_array(c, js, "nodes", path, &roots, &nroots);
        const cJSON* e;
        if (!s) cJSON_ArrayForEach(e, roots) {
                if (cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble < rd->nnodes)
                    mark[(int)e->valuedouble] |= 1;
            }
    } else {
        for (int i = 0; i < rd->nnodes; i++)
            if (rd->nodes[i].parent < 0) mark[i] |= 1;
    }
    const cJSON* ja;
    cJSON_ArrayForEach(ja, cJSON_GetObjectItemCaseSensitive(c->root, "animations")) {
        const cJSON* jc;
        cJSON_ArrayForEach(jc, cJSON_GetObjectItemCaseSensitive(ja, "channels")) {
            const cJSON* n = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(jc, "target"), "node");
            if (cJSON_IsNumber(n) && n->valuedouble >= 0 && n->valuedouble < rd->nnodes)
                mark[(int)n->valuedouble] |= 2;
        }
    }
    const cJSON* jnodes = cJSON_GetObjectItemCaseSensitive(c->root, "nodes");
    int i = 0;
    const cJSON* jn;
    cJSON_ArrayForEach(jn, jnodes) {
        if (rd->nodes[i].mesh >= 0 || cJSON_GetObjectItemCaseSensitive(jn, "camera")) mark[i] |= 8;
        if (rd->nodes[i].parent >= 0) mark[rd->nodes[i].parent] |= 4;
        i++;
    }
    int nj = 0;
    for (i = 0; i < rd->nnodes && !s; i++) {
        int top = i;
        while (rd->nodes[top].parent >= 0)
            top = rd->nodes[top].parent;
        if (!(mark[top] & 1)) continue;
        if ((mark[i] & 8) && !(mark[i] & 4) && !(mark[i] & 2)) continue;
        rd->node_snode[i] = nj;
        rd->snode_node[nj++] = i;
    }
    free(mark);
    if (s) return s;
    if (nj == 0)
        return mn_gltf_fail(c, MN_ERR_NOTFOUND, "nodes",
                            "no skin, and no node in the scene to form a skeleton");
    s = alloc_joints(rd, nj, "nodes");
    if (s) return s;
    for (int j = 0; j < nj; j++) {
        memcpy(g->rest_local + 12 * j, rd->nodes[rd->snode_node[j]].rest.m, 12 * sizeof(double));
        mn_gltf_aff_identity(g->inverse_bind + 12 * j);
    }
    s = setup_joints(rd, "nodes");
    if (s) return s;
    const cJSON* nm = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(scenes, scene), "name");
    const char* first = rd->nodes[rd->snode_node[0]].name;
    g->name = dupstr(cJSON_IsString(nm) && nm->valuestring[0] ? nm->valuestring
                     : first                                  ? first
                                                              : "skeleton");
    if (!g->name) return mn_gltf_fail(c, MN_ERR_NOMEM, "nodes", "out of memory");
    return MN_OK;
}

static mn_status read_skin(reader* rd, int skin) {
    gltf_ctx* c = rd->c;
    mn_gltf* g = rd->g;
    char path[32], f[64];
    snprintf(path, sizeof path, "skins[%d]", skin);
    const cJSON* js = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c->root, "skins"), skin);
    if (!cJSON_IsObject(js)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
    const cJSON* joints;
    int nj, skel, ibm_acc;
    mn_status s = mn_gltf_json_array(c, js, "joints", path, &joints, &nj);
    if (!s) s = mn_gltf_json_index(c, js, "skeleton", path, 0, rd->nnodes, &skel);
    if (!s) s = mn_gltf_json_index(c, js, "inverseBindMatrices", path, 0, INT32_MAX, &ibm_acc);
    if (s) return s;
    snprintf(f, sizeof f, "%s.joints", path);
    if (nj < 1) return mn_gltf_fail(c, MN_ERR_PARSE, f, "missing or empty");
    s = alloc_joints(rd, nj, path);
    if (s) return s;
    const cJSON* e = joints->child;
    for (int j = 0; j < nj; j++, e = e->next) {
        snprintf(f, sizeof f, "%s.joints[%d]", path, j);
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
            e->valuedouble >= rd->nnodes)
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "not a node index");
        int node = (int)e->valuedouble;
        if (rd->node_snode[node] >= 0)
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "node %d is listed twice", node);
        rd->node_snode[node] = j;
        rd->snode_node[j] = node;
        memcpy(g->rest_local + 12 * j, rd->nodes[node].rest.m, 12 * sizeof(double));
    }
    /* Inverse bind matrices (glTF 3.7.3.1): identity when absent. */
    if (ibm_acc >= 0) {
        double* m;
        int n;
        snprintf(f, sizeof f, "%s.inverseBindMatrices", path);
        s = mn_gltf_read_accessor(c, ibm_acc, f, 16, GLTF_CT(GLTF_FLOAT), GLTF_NORM_RAW, &m, &n,
                                  NULL);
        if (s) return s;
        if (n < nj) {
            free(m);
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "accessors[%d] has %d matrices for %d joints",
                                ibm_acc, n, nj);
        }
        for (int j = 0; j < nj && !s; j++)
            if (!mat4_to_aff(m + 16 * j, g->inverse_bind + 12 * j))
                s = mn_gltf_fail(c, MN_ERR_PARSE, f, "matrix %d: last row is not (0 0 0 1)", j);
        free(m);
        if (s) return s;
    } else {
        for (int j = 0; j < nj; j++)
            mn_gltf_aff_identity(g->inverse_bind + 12 * j);
    }
    s = setup_joints(rd, path);
    if (s) return s;
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(js, "name");
    if (cJSON_IsString(name) && name->valuestring[0]) g->name = dupstr(name->valuestring);
    return MN_OK;
}

/* ---- the skinned mesh ----------------------------------------------------------------- */

/* Weights (glTF 3.7.3.3): non-negative, scaled to sum to 1, with a warning when they did
 * not: within 1e-4 for floats, exactly (to half a step) for 8/16-bit weights, whose sums
 * glTF requires to be 255 or 65535. A vertex whose weights are all zero gets weight 1 on its first
 * listed joint, so it stays attached rigidly. A joint index at or past the skin's joint
 * count is an error when its weight is non-zero, and set to 0 (a warning) otherwise. */
static mn_status check_weights(reader* rd, int v0, int n, int wacc, int jacc, int wtype) {
    double tol = wtype == GLTF_UNSIGNED_BYTE    ? 0.5 / 255
                 : wtype == GLTF_UNSIGNED_SHORT ? 0.5 / 65535
                                                : 1e-4;
    mn_gltf* g = rd->g;
    gltf_ctx* c = rd->c;
    char f[48];
    int off_sum = 0, zero = 0, bad_idx = 0;
    double worst = 0;
    for (int v = v0; v < v0 + n; v++) {
        double* w = g->vweight + 4 * v;
        int* jt = g->vjoint + 4 * v;
        double sum = 0;
        for (int k = 0; k < 4; k++) {
            if (w[k] < 0) {
                snprintf(f, sizeof f, "accessors[%d]", wacc);
                return mn_gltf_fail(c, MN_ERR_PARSE, f, "vertex %d has a negative weight", v - v0);
            }
            if (jt[k] >= g->njoints) {
                if (w[k] > 0) {
                    snprintf(f, sizeof f, "accessors[%d]", jacc);
                    return mn_gltf_fail(c, MN_ERR_PARSE, f,
                                        "vertex %d: joint %d, the skin has %d joints", v - v0,
                                        jt[k], g->njoints);
                }
                jt[k] = 0;
                bad_idx++;
            }
            sum += w[k];
        }
        if (sum == 0) {
            w[0] = 1;
            zero++;
            continue;
        }
        if (fabs(sum - 1) > tol) {
            off_sum++;
            if (fabs(sum - 1) > worst) worst = fabs(sum - 1);
        }
        for (int k = 0; k < 4; k++)
            w[k] /= sum;
    }
    snprintf(f, sizeof f, "accessors[%d]", wacc);
    if (off_sum)
        mn_warn(c->warn, c->name, 0, f,
                "%d vertices' weights do not sum to 1 (off by up to %.3g): normalised", off_sum,
                worst);
    if (zero)
        mn_warn(c->warn, c->name, 0, f,
                "%d vertices have all-zero weights: bound to their first joint", zero);
    if (bad_idx) {
        snprintf(f, sizeof f, "accessors[%d]", jacc);
        mn_warn(c->warn, c->name, 0, f, "%d zero-weight joint slots out of range: set to joint 0",
                bad_idx);
    }
    return MN_OK;
}

static int grow(void** p, size_t n, size_t elem) {
    void* q = realloc(*p, n * elem);
    if (!q && n) return 0;
    *p = q;
    return 1;
}

/* The optional attributes (glTF 3.7.2.1) of a primitive of np vertices, appended to the
 * mesh's (g->nverts vertices so far): NORMAL, TEXCOORD_0 and TANGENT, each kept only while
 * every primitive has it (a warning when one lacks it). f: the attributes' path. */
static mn_status read_optional(reader* rd, const cJSON* attr, const char* f, int np) {
    gltf_ctx* c = rd->c;
    mn_gltf* g = rd->g;
    const struct {
        const char* name;
        int ncomp;
        unsigned mask;
        double** dst;
    } opt[] = {
        {"NORMAL", 3, GLTF_CT_ANY & ~GLTF_CT(GLTF_UNSIGNED_INT), &g->normal},
        {"TEXCOORD_0", 2, GLTF_CT_ANY & ~GLTF_CT(GLTF_UNSIGNED_INT), &g->uv},
        {"TANGENT", 4, GLTF_CT(GLTF_FLOAT), &g->tangent},
    };
    int v_first = g->nverts == 0;
    size_t v0 = (size_t)g->nverts;
    for (size_t k = 0; k < sizeof opt / sizeof opt[0]; k++) {
        int a;
        mn_status s = mn_gltf_json_index(c, attr, opt[k].name, f, 0, INT32_MAX, &a);
        if (s) return s;
        double** dst = opt[k].dst;
        if (a < 0 || (!v_first && !*dst)) {
            if (*dst || (a >= 0 && !v_first))
                mn_warn(c->warn, c->name, 0, f,
                        "%s not in every primitive of the skinned mesh: not kept", opt[k].name);
            free(*dst);
            *dst = NULL;
            continue;
        }
        char fa[112];
        snprintf(fa, sizeof fa, "%s.%s", f, opt[k].name);
        double* v = NULL;
        int n = 0, nc = opt[k].ncomp;
        s = mn_gltf_read_accessor(c, a, fa, nc, opt[k].mask, GLTF_NORM_AS_STORED, &v, &n, NULL);
        if (!s && n != np)
            s = mn_gltf_fail(c, MN_ERR_PARSE, fa, "%d elements, POSITION has %d", n, np);
        if (!s && !grow((void**)dst, (v0 + (size_t)np) * (size_t)nc, sizeof(double)))
            s = mn_gltf_fail(c, MN_ERR_NOMEM, fa, "out of memory");
        if (!s) memcpy(*dst + (size_t)nc * v0, v, (size_t)np * (size_t)nc * sizeof(double));
        free(v);
        if (s) return s;
    }
    return MN_OK;
}

static mn_status read_primitive(reader* rd, const cJSON* jp, const char* path) {
    gltf_ctx* c = rd->c;
    mn_gltf* g = rd->g;
    char f[96];
    if (!cJSON_IsObject(jp)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
    double mode;
    mn_status s = mn_gltf_json_size(c, jp, "mode", path, 0, 4, 6, &mode);
    if (s) return s;
    if (mode != 4) {
        snprintf(f, sizeof f, "%s.mode", path);
        return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, f, "mode %.0f: only triangles (4) are read",
                            mode);
    }
    const cJSON* attr = cJSON_GetObjectItemCaseSensitive(jp, "attributes");
    snprintf(f, sizeof f, "%s.attributes", path);
    if (!cJSON_IsObject(attr)) return mn_gltf_fail(c, MN_ERR_PARSE, f, "missing");
    if (cJSON_GetObjectItemCaseSensitive(attr, "JOINTS_1"))
        mn_warn(c->warn, c->name, 0, f,
                "JOINTS_1/WEIGHTS_1 ignored: 4 influences per vertex are read");
    if (cJSON_GetObjectItemCaseSensitive(jp, "targets"))
        mn_warn(c->warn, c->name, 0, path, "morph targets ignored");
    int ia, ja, wa, xa;
    s = mn_gltf_json_index(c, attr, "POSITION", f, 1, INT32_MAX, &ia);
    if (!s) s = mn_gltf_json_index(c, attr, "JOINTS_0", f, 1, INT32_MAX, &ja);
    if (!s) s = mn_gltf_json_index(c, attr, "WEIGHTS_0", f, 1, INT32_MAX, &wa);
    if (!s) s = mn_gltf_json_index(c, jp, "indices", path, 0, INT32_MAX, &xa);
    if (s) return s;

    double *pos = NULL, *jnt = NULL, *wgt = NULL, *idx = NULL;
    int np, nj, nw, ni = 0, wtype = GLTF_FLOAT;
    char fp[112], fj[112], fw[112], fi[112];
    snprintf(fp, sizeof fp, "%s.POSITION", f);
    snprintf(fj, sizeof fj, "%s.JOINTS_0", f);
    snprintf(fw, sizeof fw, "%s.WEIGHTS_0", f);
    snprintf(fi, sizeof fi, "%s.indices", path);
    s = mn_gltf_read_accessor(c, ia, fp, 3, GLTF_CT_ANY & ~GLTF_CT(GLTF_UNSIGNED_INT),
                              GLTF_NORM_AS_STORED, &pos, &np, NULL);
    if (!s)
        s = mn_gltf_read_accessor(c, ja, fj, 4,
                                  GLTF_CT(GLTF_UNSIGNED_BYTE) | GLTF_CT(GLTF_UNSIGNED_SHORT),
                                  GLTF_NORM_RAW, &jnt, &nj, NULL);
    if (!s)
        s = mn_gltf_read_accessor(c, wa, fw, 4,
                                  GLTF_CT(GLTF_FLOAT) | GLTF_CT(GLTF_UNSIGNED_BYTE) |
                                      GLTF_CT(GLTF_UNSIGNED_SHORT),
                                  GLTF_NORM_ALWAYS, &wgt, &nw, &wtype);
    if (!s && xa >= 0)
        s = mn_gltf_read_accessor(c, xa, fi, 1,
                                  GLTF_CT(GLTF_UNSIGNED_BYTE) | GLTF_CT(GLTF_UNSIGNED_SHORT) |
                                      GLTF_CT(GLTF_UNSIGNED_INT),
                                  GLTF_NORM_RAW, &idx, &ni, NULL);
    if (!s && (nj != np || nw != np))
        s = mn_gltf_fail(c, MN_ERR_PARSE, nj != np ? fj : fw, "%d elements, POSITION has %d",
                         nj != np ? nj : nw, np);
    if (!s) s = read_optional(rd, attr, f, np);
    if (!s && xa < 0) ni = np;
    if (!s && ni % 3 != 0)
        s = mn_gltf_fail(c, MN_ERR_PARSE, xa >= 0 ? fi : fp,
                         "%d vertices do not make whole triangles", ni);
    if (!s && (g->nverts > INT32_MAX / 8 - np || g->ntris > INT32_MAX / 8 - ni / 3))
        s = mn_gltf_fail(c, MN_ERR_UNSUPPORTED, path, "mesh too large");
    size_t v0 = (size_t)g->nverts, t0 = (size_t)g->ntris, nv = v0 + (size_t)np,
           nt = t0 + (size_t)ni / 3;
    if (!s && (!grow((void**)&g->rest_pos, nv * 3, sizeof(double)) ||
               !grow((void**)&g->vjoint, nv * 4, sizeof(int)) ||
               !grow((void**)&g->vweight, nv * 4, sizeof(double)) ||
               !grow((void**)&g->tris, nt * 3, sizeof(int))))
        s = mn_gltf_fail(c, MN_ERR_NOMEM, path, "out of memory");
    if (!s) {
        memcpy(g->rest_pos + 3 * v0, pos, (size_t)np * 3 * sizeof(double));
        memcpy(g->vweight + 4 * v0, wgt, (size_t)np * 4 * sizeof(double));
        for (size_t k = 0; k < (size_t)np * 4; k++)
            g->vjoint[4 * v0 + k] = (int)jnt[k];
        for (int k = 0; k < ni && !s; k++) {
            double v = idx ? idx[k] : k;
            if (v >= np) {
                s = mn_gltf_fail(c, MN_ERR_PARSE, fi,
                                 "index %d is vertex %.0f, the primitive has %d", k, v, np);
                break;
            }
            g->tris[3 * t0 + (size_t)k] = (int)(v0 + (size_t)v);
        }
    }
    if (!s) {
        g->nverts = (int)nv;
        g->ntris = (int)nt;
        s = check_weights(rd, (int)v0, np, wa, ja, wtype);
    }
    free(pos);
    free(jnt);
    free(wgt);
    free(idx);
    return s;
}

static mn_status read_mesh(reader* rd, int mesh) {
    gltf_ctx* c = rd->c;
    char path[32];
    snprintf(path, sizeof path, "meshes[%d]", mesh);
    const cJSON* jm = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c->root, "meshes"), mesh);
    if (!cJSON_IsObject(jm)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
    const cJSON* prims;
    int np;
    mn_status s = mn_gltf_json_array(c, jm, "primitives", path, &prims, &np);
    if (s) return s;
    if (np < 1) {
        char f[48];
        snprintf(f, sizeof f, "%s.primitives", path);
        return mn_gltf_fail(c, MN_ERR_PARSE, f, "missing or empty");
    }
    int* prim_tri = malloc(sizeof(int) * ((size_t)np + 1));
    if (!prim_tri) return mn_gltf_fail(c, MN_ERR_NOMEM, path, "out of memory");
    const cJSON* jp = prims->child;
    for (int i = 0; i < np && !s; i++, jp = jp->next) {
        char pp[64];
        snprintf(pp, sizeof pp, "%s.primitives[%d]", path, i);
        prim_tri[i] = rd->g->ntris;
        s = read_primitive(rd, jp, pp);
    }
    prim_tri[np] = rd->g->ntris;
    /* the look (materials and what they use), for writing back with keep_attributes */
    if (!s)
        s = mn_gltf_read_look(c, mesh, prims, np, prim_tri, rd->g->uv != NULL,
                              &((gltf_priv*)rd->g->priv)->look);
    free(prim_tri);
    return s;
}

/* ---- animations ----------------------------------------------------------------------- */

static mn_status read_channel(reader* rd, const cJSON* ja, const char* apath, int ci,
                              const cJSON* jc, gltf_channel* ch, int* used) {
    gltf_ctx* c = rd->c;
    char path[96], f[128];
    snprintf(path, sizeof path, "%s.channels[%d]", apath, ci);
    *used = 0;
    if (!cJSON_IsObject(jc)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
    const cJSON* samplers = cJSON_GetObjectItemCaseSensitive(ja, "samplers");
    int nsamp = mn_gltf_item_count(&rd->samplers, samplers);
    int si, node;
    mn_status s = mn_gltf_json_index(c, jc, "sampler", path, 1, nsamp, &si);
    if (s) return s;
    const cJSON* jt = cJSON_GetObjectItemCaseSensitive(jc, "target");
    snprintf(f, sizeof f, "%s.target", path);
    if (!cJSON_IsObject(jt)) return mn_gltf_fail(c, MN_ERR_PARSE, f, "missing");
    s = mn_gltf_json_index(c, jt, "node", f, 0, rd->nnodes, &node);
    if (s) return s;
    const cJSON* jpath = cJSON_GetObjectItemCaseSensitive(jt, "path");
    snprintf(f, sizeof f, "%s.target.path", path);
    if (!cJSON_IsString(jpath)) return mn_gltf_fail(c, MN_ERR_PARSE, f, "missing");
    const char* ps = jpath->valuestring;
    int p = strcmp(ps, "translation") == 0 ? GLTF_PATH_T
            : strcmp(ps, "rotation") == 0  ? GLTF_PATH_R
            : strcmp(ps, "scale") == 0     ? GLTF_PATH_S
                                           : -1;
    /* Morph weights, extension paths and nodes off the skeleton do not move the joints. */
    if (p < 0 || node < 0 || rd->node_snode[node] < 0) return MN_OK;
    if (rd->nodes[node].rest.has_matrix) {
        snprintf(f, sizeof f, "%s.target.node", path);
        return mn_gltf_fail(c, MN_ERR_PARSE, f,
                            "nodes[%d] has a matrix: animated nodes must use TRS", node);
    }
    char sp[112];
    snprintf(sp, sizeof sp, "%s.samplers[%d]", apath, si);
    const cJSON* js = mn_gltf_item(&rd->samplers, samplers, si);
    if (!cJSON_IsObject(js)) return mn_gltf_fail(c, MN_ERR_PARSE, sp, "not an object");
    const cJSON* ji = cJSON_GetObjectItemCaseSensitive(js, "interpolation");
    snprintf(f, sizeof f, "%s.interpolation", sp);
    int interp = GLTF_LINEAR;
    if (ji) {
        if (!cJSON_IsString(ji)) return mn_gltf_fail(c, MN_ERR_PARSE, f, "not a string");
        if (strcmp(ji->valuestring, "STEP") == 0)
            interp = GLTF_STEP;
        else if (strcmp(ji->valuestring, "CUBICSPLINE") == 0)
            interp = GLTF_CUBIC;
        else if (strcmp(ji->valuestring, "LINEAR") != 0)
            return mn_gltf_fail(c, MN_ERR_PARSE, f, "'%.40s' is not LINEAR, STEP or CUBICSPLINE",
                                ji->valuestring);
    }
    int ia, oa;
    s = mn_gltf_json_index(c, js, "input", sp, 1, INT32_MAX, &ia);
    if (!s) s = mn_gltf_json_index(c, js, "output", sp, 1, INT32_MAX, &oa);
    if (s) return s;
    char fi[128], fo[128];
    snprintf(fi, sizeof fi, "%s.input", sp);
    snprintf(fo, sizeof fo, "%s.output", sp);
    int nk, nout, nc = p == GLTF_PATH_R ? 4 : 3;
    unsigned mask = GLTF_CT(GLTF_FLOAT);
    if (p == GLTF_PATH_R) mask |= GLTF_CT_INTS & ~GLTF_CT(GLTF_UNSIGNED_INT);
    s = mn_gltf_read_accessor(c, ia, fi, 1, GLTF_CT(GLTF_FLOAT), GLTF_NORM_RAW, &ch->times, &nk,
                              NULL);
    if (!s)
        s = mn_gltf_read_accessor(c, oa, fo, nc, mask, GLTF_NORM_ALWAYS, &ch->values, &nout, NULL);
    if (s) return s;
    ch->nkeys = nk;
    for (int k = 1; k < nk; k++)
        if (ch->times[k] < ch->times[k - 1])
            return mn_gltf_fail(c, MN_ERR_PARSE, fi, "key times decrease at key %d", k);
    int per = interp == GLTF_CUBIC ? 3 : 1;
    if (nout != per * nk)
        return mn_gltf_fail(c, MN_ERR_PARSE, fo, "%d values for %d keys (%s needs %d)", nout, nk,
                            interp == GLTF_CUBIC ? "CUBICSPLINE" : "LINEAR/STEP", per * nk);
    if (p == GLTF_PATH_R)
        for (int k = 0; k < nk; k++) {
            double* q = ch->values + 4 * ((size_t)k * per + (per == 3 ? 1 : 0));
            double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
            if (n < 1e-6)
                return mn_gltf_fail(c, MN_ERR_PARSE, fo, "key %d is a zero quaternion", k);
            for (int a = 0; a < 4; a++)
                q[a] /= n;
        }
    ch->snode = rd->node_snode[node];
    ch->path = p;
    ch->interp = interp;
    *used = 1;
    return MN_OK;
}

static mn_status read_animations(reader* rd) {
    gltf_ctx* c = rd->c;
    mn_gltf* g = rd->g;
    const cJSON* janims;
    int na;
    mn_status s = mn_gltf_json_array(c, c->root, "animations", "", &janims, &na);
    if (s || na == 0) return s;
    g->anims = calloc((size_t)na, sizeof *g->anims);
    if (!g->anims) return mn_gltf_fail(c, MN_ERR_NOMEM, "animations", "out of memory");
    g->nanims = na;
    gltf_priv* p = g->priv;
    size_t lookups = 0;
    const cJSON* ja = janims->child;
    for (int a = 0; a < na; a++, ja = ja->next) {
        mn_gltf_anim* an = &g->anims[a];
        char path[32];
        snprintf(path, sizeof path, "animations[%d]", a);
        if (!cJSON_IsObject(ja)) return mn_gltf_fail(c, MN_ERR_PARSE, path, "not an object");
        const cJSON* chans;
        const cJSON* samps;
        int nch, ns;
        s = mn_gltf_json_array(c, ja, "channels", path, &chans, &nch);
        if (!s) s = mn_gltf_json_array(c, ja, "samplers", path, &samps, &ns);
        if (s) return s;
        const cJSON* name = cJSON_GetObjectItemCaseSensitive(ja, "name");
        char buf[32];
        snprintf(buf, sizeof buf, "animation%d", a);
        an->name = dupstr(cJSON_IsString(name) && name->valuestring[0] ? name->valuestring : buf);
        gltf_anim_priv* ap = calloc(1, sizeof *ap);
        if (ap) {
            an->channels = ap;
            ap->ch = calloc((size_t)nch + 1, sizeof *ap->ch);
        }
        if (!an->name || !ap || !ap->ch)
            return mn_gltf_fail(c, MN_ERR_NOMEM, path, "out of memory");
        mn_gltf_items_free(&rd->samplers);
        const cJSON* jc = chans ? chans->child : NULL;
        for (int ci = 0; ci < nch; ci++, jc = jc->next) {
            gltf_channel* ch = &ap->ch[an->nchannels];
            int used;
            s = read_channel(rd, ja, path, ci, jc, ch, &used);
            if (s) {
                an->nchannels++; /* so that its arrays are freed */
                return s;
            }
            if (!used) continue;
            if (!ap->lookup) {
                /* The channel table (3 per skeleton node) exists only for animations that
                 * drive the skeleton, and all of them together stay under 2^24 entries. */
                lookups += (size_t)p->nsnode * 3;
                if (lookups > ((size_t)1 << 24)) {
                    an->nchannels++;
                    return mn_gltf_fail(c, MN_ERR_UNSUPPORTED, path,
                                        "too many animations for %d skeleton nodes", p->nsnode);
                }
                ap->lookup = malloc((size_t)p->nsnode * 3 * sizeof(int));
                if (!ap->lookup) {
                    an->nchannels++;
                    return mn_gltf_fail(c, MN_ERR_NOMEM, path, "out of memory");
                }
                for (int k = 0; k < p->nsnode * 3; k++)
                    ap->lookup[k] = -1;
            }
            int* slot = &ap->lookup[3 * ch->snode + ch->path];
            if (*slot >= 0)
                mn_warn(c->warn, c->name, 0, path,
                        "two channels drive one node's %s: the later is used",
                        ch->path == GLTF_PATH_T   ? "translation"
                        : ch->path == GLTF_PATH_R ? "rotation"
                                                  : "scale");
            *slot = an->nchannels++;
            double end = ch->times[ch->nkeys - 1];
            if (end > an->duration) an->duration = end;
        }
    }
    return MN_OK;
}

/* ---- entry points --------------------------------------------------------------------- */

void mn_gltf_free(mn_gltf* g) {
    if (!g) return;
    free(g->rest_pos);
    free(g->tris);
    free(g->vjoint);
    free(g->vweight);
    free(g->normal);
    free(g->uv);
    free(g->tangent);
    for (int j = 0; j < g->njoints && g->joint_name; j++)
        free(g->joint_name[j]);
    free(g->joint_name);
    free(g->joint_parent);
    free(g->inverse_bind);
    free(g->rest_local);
    free(g->root_parent);
    for (int a = 0; a < g->nanims && g->anims; a++) {
        gltf_anim_priv* ap = g->anims[a].channels;
        free(g->anims[a].name);
        free(g->anims[a].key_times);
        if (!ap) continue;
        for (int k = 0; k < g->anims[a].nchannels && ap->ch; k++) {
            free(ap->ch[k].times);
            free(ap->ch[k].values);
        }
        free(ap->ch);
        free(ap->lookup);
        free(ap);
    }
    free(g->anims);
    free(g->name);
    free(g->mesh_world);
    gltf_priv* p = g->priv;
    if (p) {
        free(p->rest);
        free(p->order);
        free(p->path_off);
        free(p->path_len);
        free(p->path);
        free(p->jtrans);
        free(p->morder);
        mn_gltf_look_free(p->look);
        free(p);
    }
    memset(g, 0, sizeof *g);
}

/* After the animations: each animation's key times (all its channels' times, merged), and
 * which joints move relative to their parent joint's frame (see gltf_priv.jtrans). */
static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* Does a LINEAR or STEP translation or scale channel hold the node's rest value at every key
 * (to 1e-6 of its size: exporters write constant tracks, rounded to float)? Such a channel
 * moves nothing, and the joint stays a BALL. */
static int holds_rest(const gltf_channel* ch, const gltf_rest* r) {
    if (ch->path == GLTF_PATH_R || ch->interp == GLTF_CUBIC || r->has_matrix) return 0;
    const double* v0 = ch->path == GLTF_PATH_T ? r->t : r->s;
    double tol = 1e-12 + 1e-6 * fmax(fabs(v0[0]), fmax(fabs(v0[1]), fabs(v0[2])));
    for (int k = 0; k < ch->nkeys; k++)
        for (int i = 0; i < 3; i++)
            if (!(fabs(ch->values[3 * k + i] - v0[i]) <= tol)) return 0;
    return 1;
}

static mn_status finish_animations(reader* rd) {
    mn_gltf* g = rd->g;
    gltf_priv* p = g->priv;
    int nj = g->njoints;
    p->jtrans = calloc((size_t)nj, 1);
    unsigned char* drv = calloc((size_t)p->nsnode, 1); /* bit 1 << path: driven in some animation */
    unsigned char* scaled = calloc((size_t)nj, 1); /* 1: scale animated above, 2: on the joint */
    if (!p->jtrans || !drv || !scaled) {
        free(drv);
        free(scaled);
        return mn_gltf_fail(rd->c, MN_ERR_NOMEM, "animations", "out of memory");
    }
    mn_status s = MN_OK;
    for (int a = 0; a < g->nanims && !s; a++) {
        mn_gltf_anim* an = &g->anims[a];
        const gltf_anim_priv* ap = an->channels;
        size_t total = 0;
        for (int k = 0; k < an->nchannels; k++) {
            if (!holds_rest(&ap->ch[k], &p->rest[ap->ch[k].snode]))
                drv[ap->ch[k].snode] |= (unsigned char)(1u << ap->ch[k].path);
            total += (size_t)ap->ch[k].nkeys;
        }
        an->key_times = malloc((total ? total : 1) * sizeof(double));
        if (!an->key_times) {
            s = mn_gltf_fail(rd->c, MN_ERR_NOMEM, "animations", "out of memory");
            break;
        }
        size_t n = 0;
        for (int k = 0; k < an->nchannels; k++) {
            memcpy(an->key_times + n, ap->ch[k].times, (size_t)ap->ch[k].nkeys * sizeof(double));
            n += (size_t)ap->ch[k].nkeys;
        }
        qsort(an->key_times, n, sizeof(double), cmp_double);
        size_t u = 0;
        for (size_t k = 0; k < n; k++)
            if (u == 0 || an->key_times[k] != an->key_times[u - 1])
                an->key_times[u++] = an->key_times[k];
        if (u > (size_t)INT32_MAX) u = INT32_MAX;
        an->nkeys = (int)u;
    }
    for (int o = 0; o < nj && !s; o++) {
        int j = p->order[o], par = g->joint_parent[j];
        int path_any = 0, path_scale = 0;
        for (int i = 0; i < p->path_len[j]; i++) {
            unsigned char d = drv[p->path[p->path_off[j] + i]];
            path_any |= d != 0;
            path_scale |= (d >> GLTF_PATH_S) & 1;
        }
        int above = (par >= 0 && scaled[par]) || path_scale;
        scaled[j] = (unsigned char)(above || ((drv[j] >> GLTF_PATH_S) & 1));
        p->jtrans[j] =
            (unsigned char)(par < 0 || above || path_any || ((drv[j] >> GLTF_PATH_T) & 1));
    }
    free(drv);
    free(scaled);
    if (s) return s;
    /* The model's joint order (mn_gltf_model): depth-first preorder, roots and siblings in
     * ascending joint order, as mn_model_compile orders a spec added in that order. */
    p->morder = malloc((size_t)nj * sizeof(int));
    int* kid = malloc((size_t)nj * 3 * sizeof(int));
    if (!p->morder || !kid) {
        free(kid);
        return mn_gltf_fail(rd->c, MN_ERR_NOMEM, "nodes", "out of memory");
    }
    int *first = kid, *next = kid + nj, *stack = kid + 2 * nj, top = 0, n = 0;
    for (int j = 0; j < nj; j++)
        first[j] = -1;
    for (int j = nj - 1; j >= 0; j--) {
        int par = g->joint_parent[j];
        if (par >= 0) {
            next[j] = first[par];
            first[par] = j;
        }
    }
    for (int r = nj - 1; r >= 0; r--)
        if (g->joint_parent[r] < 0) stack[top++] = r;
    while (top > 0) {
        int j = stack[--top];
        p->morder[n++] = j;
        /* push the children in descending order so they pop ascending */
        int cnt = 0;
        for (int c = first[j]; c >= 0; c = next[c])
            cnt++;
        top += cnt;
        int k = top - 1;
        for (int c = first[j]; c >= 0; c = next[c])
            stack[k--] = c;
    }
    free(kid);
    return MN_OK;
}

static mn_status read_doc(reader* rd) {
    gltf_ctx* c = rd->c;
    mn_gltf* g = rd->g;
    mn_status s = read_nodes(rd);
    int node = -1;
    if (!s) s = pick_skinned_node(rd, &node);
    if (s) return s;
    g->priv = calloc(1, sizeof(gltf_priv));
    g->mesh_world = malloc(12 * sizeof(double));
    if (!g->priv || !g->mesh_world) return mn_gltf_fail(c, MN_ERR_NOMEM, "nodes", "out of memory");
    if (node >= 0) {
        world_of(rd, node, g->mesh_world);
        s = read_skin(rd, rd->nodes[node].skin);
        if (!s) s = read_mesh(rd, rd->nodes[node].mesh);
    } else {
        /* No skinned mesh: the first skin's joints, else the node hierarchy, without a mesh. */
        mn_gltf_aff_identity(g->mesh_world);
        if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c->root, "skins")) > 0) {
            mn_warn(c->warn, c->name, 0, "nodes",
                    "no node has both a mesh and a skin: skins[0] read as a skeleton");
            s = read_skin(rd, 0);
        } else {
            s = read_bare_skeleton(rd);
        }
    }
    if (!s) s = read_animations(rd);
    if (!s) s = finish_animations(rd);
    if (s) return s;
    if (!g->name)
        g->name = dupstr(node >= 0 && rd->nodes[node].name ? rd->nodes[node].name : "skin");
    if (!g->name) return mn_gltf_fail(c, MN_ERR_NOMEM, "nodes", "out of memory");
    return MN_OK;
}

mn_status mn_gltf_read_mem_files(const void* data, size_t len, const char* name,
                                 mn_doc_read_beneath_fn read_beneath, mn_gltf* out,
                                 mn_warnings* warn, mn_error* err) {
    if (out) memset(out, 0, sizeof *out);
    if (!data || !out)
        return mn_error_set(err, MN_ERR_ARG, name, 0, "", "NULL %s", data ? "output" : "data");
    if (!name) name = "<memory>";
    mn_error_clear(err);
    gltf_ctx c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.read_beneath = read_beneath;
    c.warn = warn;
    c.err = err;
    const char* slash = strrchr(name, '/');
    size_t dl = slash ? (size_t)(slash - name + 1) : 0;
    c.dir = malloc(dl + 1);
    if (!c.dir) return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    memcpy(c.dir, name, dl);
    c.dir[dl] = 0;

    mn_gltf g;
    memset(&g, 0, sizeof g);
    reader rd;
    memset(&rd, 0, sizeof rd);
    rd.c = &c;
    rd.g = &g;
    mn_status s = mn_gltf_parse_container(&c, data, len);
    if (!s) s = read_doc(&rd);
    mn_gltf_items_free(&rd.samplers);
    free(rd.nodes);
    free(rd.node_snode);
    free(rd.snode_node);
    mn_gltf_ctx_free(&c);
    if (s) {
        mn_gltf_free(&g);
        return s;
    }
    *out = g;
    return MN_OK;
}
