/* The glTF reader against an independent implementation: assimp's glTF 2.0 importer
 * (Debian libassimp-dev), on every model copied into data/skinned.
 *
 * Imported without post-processing, assimp keeps the vertices and triangles of a
 * primitive as stored, gives each joint as a bone (its offset matrix is the inverse bind
 * matrix, its weights the non-zero WEIGHTS_0 entries), keeps the node tree with each node's
 * rest transform, and each animation as one channel per animated node with its raw keys in
 * milliseconds. Compared here:
 *  - positions and triangles (the same float32 data: equal exactly);
 *  - bones <-> joints, matched by inverse bind matrix (not by name: assimp calls an unnamed
 *    node "nodes[k]", the reader "joint<i>"); joints that share one (SimpleSkin's two) are
 *    taken in the skin's order, the order in which assimp creates the bones, and the
 *    animation below tells them apart;
 *  - every vertex's weights per joint (assimp does not normalise: both sides are scaled
 *    to sum 1 here);
 *  - joint world transforms at nine times through every animation, composed here down
 *    assimp's node tree from its keys (lerp, and a slerp written out below), against
 *    mn_gltf_sample, to 1e-6 of the model size (assimp keeps rest transforms in single
 *    precision: Fox agrees to 2e-7, the others to 1e-8 or better). */
#include <marionette/gltf.h>
#include <marionette/io.h>

#include "test.h"

#include <assimp/cimport.h>
#include <assimp/scene.h>

#include <stdlib.h>
#include <string.h>

static const char* const files[] = {
    MN_DATA "/skinned/SimpleSkin.gltf",  MN_DATA "/skinned/RiggedSimple.glb",
    MN_DATA "/skinned/RiggedFigure.glb", MN_DATA "/skinned/CesiumMan.glb",
    MN_DATA "/skinned/Fox.glb",
};

/* 4x4 row-major products in double */
static void mat_mul(const double* a, const double* b, double* c) {
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 4; k++) {
            double s = 0;
            for (int i = 0; i < 4; i++)
                s += a[4 * r + i] * b[4 * i + k];
            c[4 * r + k] = s;
        }
}

static void from_ai(const struct aiMatrix4x4* m, double* o) {
    const float* f = &m->a1; /* a1..a4, b1..b4, ...: row-major */
    for (int i = 0; i < 16; i++)
        o[i] = f[i];
}

/* T R S from a translation, a unit quaternion (w, x, y, z) and a scale */
static void trs(const double* t, const double* q, const double* s, double* o) {
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            o[4 * r + c] = R[3 * r + c] * s[c];
        o[4 * r + 3] = t[r];
    }
    o[12] = o[13] = o[14] = 0;
    o[15] = 1;
}

/* Slerp along the shorter arc (Shoemake), written independently of the library's. */
static void slerp(const double* a, const double* b0, double u, double* o) {
    double b[4] = {b0[0], b0[1], b0[2], b0[3]};
    double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    if (d < 0) {
        d = -d;
        for (int i = 0; i < 4; i++)
            b[i] = -b[i];
    }
    double wa = 1 - u, wb = u;
    if (d < 0.9999995) {
        double th = acos(d);
        wa = sin((1 - u) * th) / sin(th);
        wb = sin(u * th) / sin(th);
    }
    double n = 0;
    for (int i = 0; i < 4; i++)
        o[i] = wa * a[i] + wb * b[i], n += o[i] * o[i];
    for (int i = 0; i < 4; i++)
        o[i] /= sqrt(n);
}

/* Key segment for time t (ticks) among n keys whose times are read by time(k). */
#define FIND_SEGMENT(keys, n, t, k, u)                                                             \
    do {                                                                                           \
        k = 0;                                                                                     \
        u = 0;                                                                                     \
        if ((n) > 1 && (t) > (keys)[0].mTime) {                                                    \
            while (k + 1 < (int)(n) && (keys)[k + 1].mTime <= (t))                                 \
                k++;                                                                               \
            if (k + 1 < (int)(n))                                                                  \
                u = ((t) - (keys)[k].mTime) / ((keys)[k + 1].mTime - (keys)[k].mTime);             \
        }                                                                                          \
    } while (0)

/* Local transform of a node at time t (ticks): its rest transform, or its channel's keys. */
static void node_local(const struct aiNode* node, const struct aiAnimation* an, double t,
                       double* o) {
    const struct aiNodeAnim* ch = NULL;
    for (unsigned c = 0; an && c < an->mNumChannels; c++)
        if (strcmp(an->mChannels[c]->mNodeName.data, node->mName.data) == 0) ch = an->mChannels[c];
    if (!ch) {
        from_ai(&node->mTransformation, o);
        return;
    }
    double tr[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0}, s[3] = {1, 1, 1};
    int k;
    double u;
    if (ch->mNumPositionKeys) {
        FIND_SEGMENT(ch->mPositionKeys, ch->mNumPositionKeys, t, k, u);
        const struct aiVector3D* a = &ch->mPositionKeys[k].mValue;
        const struct aiVector3D* b = &ch->mPositionKeys[k + (u > 0)].mValue;
        tr[0] = a->x + u * (b->x - a->x), tr[1] = a->y + u * (b->y - a->y),
        tr[2] = a->z + u * (b->z - a->z);
    }
    if (ch->mNumScalingKeys) {
        FIND_SEGMENT(ch->mScalingKeys, ch->mNumScalingKeys, t, k, u);
        const struct aiVector3D* a = &ch->mScalingKeys[k].mValue;
        const struct aiVector3D* b = &ch->mScalingKeys[k + (u > 0)].mValue;
        s[0] = a->x + u * (b->x - a->x), s[1] = a->y + u * (b->y - a->y),
        s[2] = a->z + u * (b->z - a->z);
    }
    if (ch->mNumRotationKeys) {
        FIND_SEGMENT(ch->mRotationKeys, ch->mNumRotationKeys, t, k, u);
        const struct aiQuaternion* a = &ch->mRotationKeys[k].mValue;
        const struct aiQuaternion* b = &ch->mRotationKeys[k + (u > 0)].mValue;
        /* glTF rotations are unit quaternions; assimp keeps the stored numbers, which for
         * SimpleSkin, (0, 0, .383, .924), are 2.3e-4 off unit length: normalise both keys,
         * as the reader does. */
        double qa[4] = {a->w, a->x, a->y, a->z}, qb[4] = {b->w, b->x, b->y, b->z};
        double na = sqrt(qa[0] * qa[0] + qa[1] * qa[1] + qa[2] * qa[2] + qa[3] * qa[3]);
        double nb = sqrt(qb[0] * qb[0] + qb[1] * qb[1] + qb[2] * qb[2] + qb[3] * qb[3]);
        for (int i = 0; i < 4; i++)
            qa[i] /= na, qb[i] /= nb;
        slerp(qa, qb, u, q);
    }
    trs(tr, q, s, o);
}

/* World transform of the node named `name` at time t: composed from the root down. */
static int node_world(const struct aiNode* node, const double* parent, const char* name,
                      const struct aiAnimation* an, double t, double* out) {
    double l[16], w[16];
    node_local(node, an, t, l);
    mat_mul(parent, l, w);
    if (strcmp(node->mName.data, name) == 0) {
        memcpy(out, w, sizeof w);
        return 1;
    }
    for (unsigned i = 0; i < node->mNumChildren; i++)
        if (node_world(node->mChildren[i], w, name, an, t, out)) return 1;
    return 0;
}

static void compare_file(const char* path) {
    mn_gltf g;
    mn_error e;
    memset(&e, 0, sizeof e);
    CHECK(mn_gltf_read(path, &g, NULL, &e) == MN_OK);
    const struct aiScene* sc = aiImportFile(path, 0);
    CHECK(sc != NULL && sc->mNumMeshes == 1);
    if (!sc || sc->mNumMeshes != 1 || g.njoints == 0) {
        if (sc) aiReleaseImport(sc);
        mn_gltf_free(&g);
        return;
    }
    const struct aiMesh* me = sc->mMeshes[0];
    /* positions and triangles */
    CHECK((int)me->mNumVertices == g.nverts && (int)me->mNumFaces == g.ntris);
    if ((int)me->mNumVertices == g.nverts)
        for (int v = 0; v < g.nverts; v++) {
            CHECK(me->mVertices[v].x == g.rest_pos[3 * v] &&
                  me->mVertices[v].y == g.rest_pos[3 * v + 1] &&
                  me->mVertices[v].z == g.rest_pos[3 * v + 2]);
        }
    if ((int)me->mNumFaces == g.ntris)
        for (int f = 0; f < g.ntris; f++) {
            CHECK(me->mFaces[f].mNumIndices == 3);
            for (int k = 0; k < 3; k++)
                CHECK((int)me->mFaces[f].mIndices[k] == g.tris[3 * f + k]);
        }
    /* bones <-> joints by inverse bind matrix */
    CHECK((int)me->mNumBones == g.njoints);
    int* bone_joint = malloc(sizeof(int) * me->mNumBones);
    for (unsigned b = 0; b < me->mNumBones; b++) {
        double m[16];
        from_ai(&me->mBones[b]->mOffsetMatrix, m);
        bone_joint[b] = -1;
        double best = 1e-6;
        for (int j = 0; j < g.njoints; j++) {
            int taken = 0;
            for (unsigned b2 = 0; b2 < b; b2++)
                taken |= bone_joint[b2] == j;
            if (taken) continue;
            double d = 0;
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 4; c++)
                    d = fmax(d, fabs(m[4 * r + c] - g.inverse_bind[12 * j + 4 * r + c]));
            if (d < best) best = d, bone_joint[b] = j;
        }
        CHECK(bone_joint[b] >= 0);
        for (unsigned b2 = 0; b2 < b; b2++)
            CHECK(bone_joint[b2] != bone_joint[b]);
    }
    /* weights per vertex and joint, both scaled to sum 1 */
    double* wa = calloc((size_t)g.nverts * (size_t)g.njoints, sizeof(double));
    double* wg = calloc((size_t)g.nverts * (size_t)g.njoints, sizeof(double));
    for (unsigned b = 0; b < me->mNumBones; b++) {
        if (bone_joint[b] < 0) continue;
        for (unsigned k = 0; k < me->mBones[b]->mNumWeights; k++) {
            const struct aiVertexWeight* vw = &me->mBones[b]->mWeights[k];
            if ((int)vw->mVertexId < g.nverts)
                wa[(size_t)vw->mVertexId * g.njoints + bone_joint[b]] += vw->mWeight;
        }
    }
    for (int v = 0; v < g.nverts; v++) {
        double sum = 0;
        for (int j = 0; j < g.njoints; j++)
            sum += wa[(size_t)v * g.njoints + j];
        for (int j = 0; j < g.njoints && sum > 0; j++)
            wa[(size_t)v * g.njoints + j] /= sum;
        for (int k = 0; k < 4; k++)
            wg[(size_t)v * g.njoints + g.vjoint[4 * v + k]] += g.vweight[4 * v + k];
        double worst = 0;
        for (int j = 0; j < g.njoints; j++)
            worst =
                fmax(worst, fabs(wa[(size_t)v * g.njoints + j] - wg[(size_t)v * g.njoints + j]));
        CHECK(worst < 1e-6);
    }
    /* joint world transforms through every animation */
    CHECK((int)sc->mNumAnimations == g.nanims);
    double* W = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    double size = fmax(1.0, fabs(g.rest_pos[0]));
    for (int v = 0; v < 3 * g.nverts; v++)
        size = fmax(size, fabs(g.rest_pos[v]));
    const double I[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    for (int a = 0; a < g.nanims && a < (int)sc->mNumAnimations; a++) {
        const struct aiAnimation* an = sc->mAnimations[a];
        double tps = an->mTicksPerSecond > 0 ? an->mTicksPerSecond : 1000;
        CHECK_NEAR(an->mDuration / tps, g.anims[a].duration, 1e-6);
        double worst = 0;
        for (int s = 0; s <= 8; s++) {
            double t = g.anims[a].duration * s / 8.0;
            CHECK(mn_gltf_sample(&g, a, t, W) == MN_OK);
            for (unsigned b = 0; b < me->mNumBones; b++) {
                if (bone_joint[b] < 0) continue;
                double w[16];
                int found = node_world(sc->mRootNode, I, me->mBones[b]->mName.data, an, t * tps, w);
                CHECK(found);
                if (!found) continue;
                const double* ours = W + 12 * bone_joint[b];
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 4; c++)
                        worst =
                            fmax(worst, fabs(w[4 * r + c] - ours[4 * r + c]) / (c == 3 ? size : 1));
            }
        }
        CHECK(worst < 1e-6);
        printf("  %s animation %d: worst joint transform difference %.2g\n", strrchr(path, '/') + 1,
               a, worst);
    }
    /* The figure (mn_gltf_model, mn_gltf_state) at every key time of every animation and
     * halfway between keys: FK of every joint against assimp's node tree, positions to
     * 1e-6 of the figure's size (the diagonal of the rest bounding box of its joints and bind-pose
     * vertices), rotations
     * (assimp's with the scale divided out) to 1e-6. */
    mn_model* m = mn_gltf_model(&g, &e);
    CHECK(m != NULL);
    mn_data* d = m ? mn_data_create(m, 0) : NULL;
    double* q = m ? malloc(sizeof(double) * (size_t)m->nq) : NULL;
    double* work = malloc(sizeof(double) * 16 * (size_t)g.njoints);
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    CHECK(mn_gltf_sample(&g, -1, -1, W) == MN_OK);
    for (int j = 0; j < g.njoints; j++)
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], W[12 * j + 4 * k + 3]), hi[k] = fmax(hi[k], W[12 * j + 4 * k + 3]);
    for (int v = 0; v < g.nverts;
         v++) /* and its mesh's (SimpleSkin's two joints coincide at rest) */
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], g.rest_pos[3 * v + k]), hi[k] = fmax(hi[k], g.rest_pos[3 * v + k]);
    double fig = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                      (hi[2] - lo[2]) * (hi[2] - lo[2]));
    for (int a = 0; d && a < g.nanims && a < (int)sc->mNumAnimations; a++) {
        const struct aiAnimation* an = sc->mAnimations[a];
        double tps = an->mTicksPerSecond > 0 ? an->mTicksPerSecond : 1000;
        double worst_p = 0, worst_r = 0;
        int nk = g.anims[a].nkeys, nsamples = 0;
        CHECK(nk >= 2);
        for (int k = 0; k < 2 * nk - 1; k++) {
            const double* kt = g.anims[a].key_times;
            double t = k % 2 ? 0.5 * (kt[k / 2] + kt[k / 2 + 1]) : kt[k / 2];
            CHECK(mn_gltf_state(&g, m, a, t, k ? d->q : NULL, q, work, &e) == MN_OK);
            memcpy(d->q, q, sizeof(double) * (size_t)m->nq);
            mn_fk(m, d);
            for (unsigned b = 0; b < me->mNumBones; b++) {
                if (bone_joint[b] < 0) continue;
                double w[16];
                if (!node_world(sc->mRootNode, I, me->mBones[b]->mName.data, an, t * tps, w))
                    continue;
                int mj = mn_model_find_joint(m, g.joint_name[bone_joint[b]]);
                const mn_xform* X = &d->xf[mj];
                double pd =
                    fmax(fabs(X->p.x - w[3]), fmax(fabs(X->p.y - w[7]), fabs(X->p.z - w[11])));
                worst_p = fmax(worst_p, pd / fig);
                for (int c = 0; c < 3; c++) {
                    double n = sqrt(w[c] * w[c] + w[4 + c] * w[4 + c] + w[8 + c] * w[8 + c]);
                    for (int r = 0; r < 3; r++)
                        worst_r = fmax(worst_r, fabs(X->R.m[3 * r + c] - w[4 * r + c] / n));
                }
            }
            nsamples++;
        }
        CHECK(worst_p < 1e-6 && worst_r < 1e-6);
        printf("  %s animation %d '%s': figure (%d joints) at %d key times and midpoints: worst "
               "position error "
               "%.2g of the figure size %.3g, rotation %.2g\n",
               strrchr(path, '/') + 1, a, g.anims[a].name, m->njoint, nsamples, worst_p, fig,
               worst_r);
    }
    free(q);
    free(work);
    mn_data_destroy(d);
    mn_model_destroy(m);
    free(W);
    free(wa);
    free(wg);
    free(bone_joint);
    aiReleaseImport(sc);
    mn_gltf_free(&g);
}

static void test_against_assimp(void) {
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        compare_file(files[i]);
}

/* The writer against assimp: a BVH take (bones) and Fox with its Run (skinned) written as
 * .glb and imported by assimp; every frame's joint positions composed down assimp's node
 * tree from its keys against FK of the motion, to 1e-6 of the figure's size; the skinned
 * mesh's vertices and bones as written. */
static void check_written(const char* path, const mn_model* m, const mn_motion* mo, int nverts,
                          int nbones) {
    const struct aiScene* sc = aiImportFile(path, 0);
    CHECK(sc != NULL);
    if (!sc) {
        fprintf(stderr, "assimp: %s\n", aiGetErrorString());
        return;
    }
    CHECK(sc->mNumAnimations == 1);
    CHECK((int)sc->mNumMeshes == (nverts > 0));
    if (nverts > 0 && sc->mNumMeshes == 1)
        CHECK((int)sc->mMeshes[0]->mNumVertices == nverts &&
              (int)sc->mMeshes[0]->mNumBones == nbones);
    mn_data* d = mn_data_create(m, 0);
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    mn_fk(m, d);
    for (int j = 0; j < m->njoint; j++) {
        const double* p = &d->xf[j].p.x;
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], p[k]), hi[k] = fmax(hi[k], p[k]);
    }
    double size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    const struct aiAnimation* an = sc->mNumAnimations ? sc->mAnimations[0] : NULL;
    double tps = an && an->mTicksPerSecond > 0 ? an->mTicksPerSecond : 1000;
    const double I[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    double worst = 0;
    int missing = 0;
    for (int f = 0; an && f < mo->nframes; f++) {
        memcpy(d->q, mo->q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        double t = (double)(float)(f * mo->frame_time) * tps;
        for (int j = 0; j < m->njoint; j++) {
            double w[16];
            if (!node_world(sc->mRootNode, I, m->jnt_name[j], an, t, w)) {
                missing++;
                continue;
            }
            const mn_vec3 p = d->xf[j].p;
            worst = fmax(worst,
                         fmax(fabs(p.x - w[3]), fmax(fabs(p.y - w[7]), fabs(p.z - w[11]))) / size);
        }
    }
    CHECK(missing == 0);
    CHECK(worst < 1e-6);
    printf(
        "  %s read by assimp: %d frames, worst joint position error %.2g of the figure size %.3g\n",
        strrchr(path, '/') + 1, mo->nframes, worst, size);
    mn_data_destroy(d);
    aiReleaseImport(sc);
}

static void test_writer_against_assimp(void) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_error e;
    char path[512];
    CHECK(mn_bvh_read(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", NULL, &m, &mo, NULL,
                      &e) == MN_OK);
    if (m) {
        snprintf(path, sizeof path, "%s/walk.glb", mn_test_temp_dir());
        CHECK(mn_gltf_write(path, m, &mo, NULL, &e) == MN_OK);
        check_written(path, m, &mo, 0, 0);
        remove(path);
        mn_motion_free(&mo);
        mn_model_destroy(m);
    }
    mn_gltf g;
    CHECK(mn_gltf_read(MN_DATA "/skinned/Fox.glb", &g, NULL, &e) == MN_OK);
    m = mn_gltf_model(&g, &e);
    int a = mn_gltf_find_anim(&g, "Run");
    CHECK(m && a >= 0);
    if (m && a >= 0 && mn_gltf_motion(&g, m, a, 24, &mo, &e) == MN_OK) {
        snprintf(path, sizeof path, "%s/fox.glb", mn_test_temp_dir());
        CHECK(mn_gltf_write(path, m, &mo, &g, &e) == MN_OK);
        check_written(path, m, &mo, g.nverts, g.njoints);
        remove(path);
        mn_motion_free(&mo);
    }
    mn_model_destroy(m);
    mn_gltf_free(&g);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_against_assimp);
    RUN(test_writer_against_assimp);
    return mn_test_report();
}
