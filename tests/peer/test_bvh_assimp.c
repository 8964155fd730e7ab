/* The BVH reader and forward kinematics against an independent implementation: assimp's
 * BVH importer (Debian libassimp-dev), on every BVH file copied into data/mocap.
 *
 * assimp keeps the HIERARCHY as a node tree (each node's transformation is its OFFSET) and
 * the MOTION as one animation with, per node that has channels, one position key and one
 * rotation key per frame. World transforms are composed here down the node tree from those
 * keys; every joint's world position must match mn_fk on our model to 1e-6 of the figure
 * size (assimp computes in single precision).
 *
 * Naming differences handled below: assimp (5.2) names an End Site node "EndSite_<parent>"
 * where we use "<parent>_end" (a "<parent>_EndSite" spelling is accepted too). assimp's
 * BVH importer adds no helper nodes (no "_$AssimpFbx$" style pivots, no synthetic root:
 * the scene root is the BVH ROOT), so every node must match a model joint and every model
 * joint a node. One more difference: assimp believes the Frames line, we believe the data
 * (see the key count check). */
#include <marionette/io.h>
#include <marionette/model.h>

#include "test.h"

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <stdlib.h>
#include <string.h>

static const char* const files[] = {
    MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh",
    MN_DATA "/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh",
    MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh",
    MN_DATA "/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh",
    MN_DATA "/mocap/other_skeleton/Boxing_Toes.bvh",
};

/* One assimp node flattened: parent index, rest transform and its animation channel. */
typedef struct peer_node {
    const struct aiNode* node;
    int parent;
    const struct aiNodeAnim* anim;
    mn_xform world;
} peer_node;

static int flatten(const struct aiNode* n, int parent, peer_node* out, int count, int cap) {
    if (count >= cap) return count;
    out[count].node = n;
    out[count].parent = parent;
    out[count].anim = NULL;
    int me = count++;
    for (unsigned i = 0; i < n->mNumChildren; i++)
        count = flatten(n->mChildren[i], me, out, count, cap);
    return count;
}

static mn_xform from_ai_matrix(const struct aiMatrix4x4* a) {
    mn_xform t;
    t.R = (mn_mat3){{a->a1, a->a2, a->a3, a->b1, a->b2, a->b3, a->c1, a->c2, a->c3}};
    t.p = mn_v3(a->a4, a->b4, a->c4);
    return t;
}

/* Local transform of a node at a frame: its keys when animated, else its rest matrix. */
static mn_xform local_at(const peer_node* pn, int frame) {
    if (!pn->anim) return from_ai_matrix(&pn->node->mTransformation);
    const struct aiNodeAnim* a = pn->anim;
    mn_xform t = from_ai_matrix(&pn->node->mTransformation);
    if (a->mNumPositionKeys > 0) {
        unsigned k =
            (unsigned)frame < a->mNumPositionKeys ? (unsigned)frame : a->mNumPositionKeys - 1;
        const struct aiVector3D* v = &a->mPositionKeys[k].mValue;
        t.p = mn_v3(v->x, v->y, v->z);
    }
    if (a->mNumRotationKeys > 0) {
        unsigned k =
            (unsigned)frame < a->mNumRotationKeys ? (unsigned)frame : a->mNumRotationKeys - 1;
        const struct aiQuaternion* q = &a->mRotationKeys[k].mValue;
        t.R = mn_quat_to_mat3(mn_quat_normalize(mn_q4(q->w, q->x, q->y, q->z)));
    }
    return t;
}

/* The model joint an assimp node stands for, or -1. */
static int joint_of_node(const mn_model* m, const char* name) {
    int j = mn_model_find_joint(m, name);
    if (j >= 0) return j;
    char buf[512];
    size_t n = strlen(name);
    const char* suffix = "_EndSite";
    size_t sl = strlen(suffix);
    if (n > sl && n - sl < 400 && strcmp(name + n - sl, suffix) == 0) {
        snprintf(buf, sizeof buf, "%.*s_end", (int)(n - sl), name);
        return mn_model_find_joint(m, buf);
    }
    if (strncmp(name, "EndSite_", 8) == 0 && n < 400) {
        snprintf(buf, sizeof buf, "%s_end", name + 8);
        return mn_model_find_joint(m, buf);
    }
    return -1;
}

static void compare_file(const char* path) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    CHECK(mn_bvh_read(path, NULL, &m, &mo, NULL, &err) == MN_OK);
    if (!m) return;
    const struct aiScene* sc = aiImportFile(path, 0);
    CHECK(sc != NULL);
    if (!sc) {
        fprintf(stderr, "  assimp: %s\n", aiGetErrorString());
        mn_motion_free(&mo);
        mn_model_destroy(m);
        return;
    }
    CHECK(sc->mNumAnimations == 1);
    enum { CAP = 4096 };
    peer_node* nodes = calloc(CAP, sizeof *nodes);
    int nn = flatten(sc->mRootNode, -1, nodes, 0, CAP);
    int nkeys = 0;
    if (sc->mNumAnimations > 0) {
        const struct aiAnimation* an = sc->mAnimations[0];
        for (unsigned c = 0; c < an->mNumChannels; c++)
            for (int i = 0; i < nn; i++)
                if (strcmp(nodes[i].node->mName.data, an->mChannels[c]->mNodeName.data) == 0)
                    nodes[i].anim = an->mChannels[c];
        /* One key per frame. assimp believes the Frames line where we use the data:
         * Boxing_Toes.bvh says 3069 and holds 3070 rows, so assimp has one key less. */
        CHECK(an->mNumChannels > 0);
        if (an->mNumChannels > 0) {
            nkeys = (int)an->mChannels[0]->mNumRotationKeys;
            int expect = strstr(path, "Boxing_Toes") ? mo.nframes - 1 : mo.nframes;
            CHECK(nkeys == expect);
        }
    }
    /* every model joint has its node; nodes without a joint are assimp's own */
    int* node_of_joint = malloc((size_t)m->njoint * sizeof *node_of_joint);
    for (int j = 0; j < m->njoint; j++)
        node_of_joint[j] = -1;
    int extra = 0;
    for (int i = 0; i < nn; i++) {
        int j = joint_of_node(m, nodes[i].node->mName.data);
        if (j >= 0)
            node_of_joint[j] = i;
        else
            extra++;
    }
    int missing = 0;
    for (int j = 0; j < m->njoint; j++)
        if (node_of_joint[j] < 0) {
            if (missing++ < 3) fprintf(stderr, "  no assimp node for joint '%s'\n", m->jnt_name[j]);
        }
    CHECK(missing == 0);
    CHECK(extra == 0);

    mn_data* d = mn_data_create(m, 0);
    mn_fk(m, d);
    double size = 0;
    for (int j = 0; j < m->njoint; j++) {
        double r = mn_vec3_dist(d->xf[j].p, d->xf[0].p);
        if (r > size) size = r;
    }
    double worst = 0;
    int compared = 0;
    int nf = nkeys < mo.nframes ? nkeys : mo.nframes;
    int step = nf > 40 ? nf / 40 : 1;
    for (int f = 0; f < nf; f += step) {
        memcpy(d->q, mo.q + (size_t)f * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        mn_fk(m, d);
        for (int i = 0; i < nn; i++) {
            mn_xform l = local_at(&nodes[i], f);
            if (nodes[i].parent < 0)
                nodes[i].world = l;
            else
                nodes[i].world = mn_xform_mul(&nodes[nodes[i].parent].world, &l);
        }
        for (int j = 0; j < m->njoint; j++) {
            if (node_of_joint[j] < 0) continue;
            double e = mn_vec3_dist(d->xf[j].p, nodes[node_of_joint[j]].world.p) / size;
            if (e > worst) worst = e;
            compared++;
        }
    }
    CHECK(compared >= 40 * m->njoint);
    CHECK(worst <= 1e-6);
    printf("  %s: %d joints, %d frames, worst relative position difference %.3g\n",
           strrchr(path, '/') + 1, m->njoint, mo.nframes, worst);
    mn_data_destroy(d);
    free(node_of_joint);
    free(nodes);
    aiReleaseImport(sc);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

static void test_against_assimp(void) {
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        compare_file(files[i]);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_against_assimp);
    return mn_test_report();
}
