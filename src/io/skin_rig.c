/* Skinning rigs from files: libigl's OBJ + DMAT + TGF triple. */
#include <marionette/meshio.h>

#include "io/io_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mn_status mn_rig_read_libigl(const char* obj_path, const char* dmat_path, const char* tgf_path,
                             int attach, mn_rig** rig, mn_mesh* mesh, mn_warnings* warn,
                             mn_error* err) {
    if (!obj_path || !dmat_path || !tgf_path || !rig)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    *rig = NULL;
    if (mesh) memset(mesh, 0, sizeof *mesh);
    mn_mesh obj = {0};
    mn_dmat W = {0};
    mn_tgf tgf = {0};
    mn_rig* r = NULL;
    mn_status st = mn_obj_read(obj_path, &obj, warn, err);
    if (st == MN_OK) st = mn_dmat_read(dmat_path, &W, err);
    if (st == MN_OK) st = mn_tgf_read(tgf_path, &tgf, err);
    if (st != MN_OK) goto done;
    /* DMAT "cols rows" = "nbones nverts" (weights one column per bone) */
    if (W.rows != obj.nverts) {
        st = mn_error_set(err, MN_ERR_PARSE, dmat_path, 1, "rows",
                          "%d weight rows but %s has %d vertices", W.rows, obj_path, obj.nverts);
        goto done;
    }
    if (W.cols != tgf.nedges) {
        st = mn_error_set(err, MN_ERR_PARSE, dmat_path, 1, "cols",
                          "%d weight columns but %s has %d bones", W.cols, tgf_path, tgf.nedges);
        goto done;
    }
    mn_error e2;
    r = mn_rig_create(3, obj.nverts, obj.pos, NULL, &e2);
    if (!r) {
        st = mn_error_set(err, e2.status, obj_path, 0, e2.field, "%s", e2.message);
        goto done;
    }
    for (int b = 0; b < tgf.nedges; b++) {
        char name[32];
        snprintf(name, sizeof name, "bone%d", b);
        mn_ctrl_def d = mn_ctrl_default();
        d.name = name;
        d.kind = MN_CTRL_BONE;
        const double* h = tgf.pos + 3 * tgf.edges[2 * b];
        const double* t = tgf.pos + 3 * tgf.edges[2 * b + 1];
        d.pivot = mn_v3(h[0], h[1], h[2]);
        d.tail = mn_v3(t[0], t[1], t[2]);
        if (attach)
            for (int p = 0; p < b; p++)
                if (tgf.edges[2 * p + 1] == tgf.edges[2 * b]) {
                    d.parent = p;
                    d.attached = 1;
                }
        if (mn_rig_add_ctrl(r, &d, &e2) < 0) {
            st = mn_error_set(err, MN_ERR_PARSE, tgf_path, 0, "edge", "bone %d: %s", b, e2.message);
            goto done;
        }
    }
    int nwarn = 0;
    mn_error_clear(&e2);
    st = mn_rig_set_weights_dense(r, W.data, &nwarn, &e2);
    if (st != MN_OK) {
        st = mn_error_set(err, MN_ERR_PARSE, dmat_path, 0, "weights", "%s", e2.message);
        goto done;
    }
    if (nwarn)
        mn_warn(warn, dmat_path, 0, "weights", "%s",
                e2.message[0] ? e2.message : "weights normalised");
done:
    mn_dmat_free(&W);
    mn_tgf_free(&tgf);
    if (st != MN_OK) {
        mn_rig_destroy(r);
        mn_mesh_free(&obj);
        return st;
    }
    *rig = r;
    if (mesh)
        *mesh = obj;
    else
        mn_mesh_free(&obj);
    return MN_OK;
}

/* ---- glTF ------------------------------------------------------------------------------ */

/* Inverse of a 3x4 affine [A | b] (row-major, 12 doubles): the translation part only,
 * -A^-1 b, which is where the joint sits in the mesh's bind space. */
static int affine_inverse_translation(const double* M, mn_vec3* out) {
    const double* a = M;
    double det = a[0] * (a[5] * a[10] - a[6] * a[9]) - a[1] * (a[4] * a[10] - a[6] * a[8]) +
                 a[2] * (a[4] * a[9] - a[5] * a[8]);
    if (!(fabs(det) > 1e-300) || !isfinite(det)) return 0;
    double inv[9] = {(a[5] * a[10] - a[6] * a[9]) / det, (a[2] * a[9] - a[1] * a[10]) / det,
                     (a[1] * a[6] - a[2] * a[5]) / det,  (a[6] * a[8] - a[4] * a[10]) / det,
                     (a[0] * a[10] - a[2] * a[8]) / det, (a[2] * a[4] - a[0] * a[6]) / det,
                     (a[4] * a[9] - a[5] * a[8]) / det,  (a[1] * a[8] - a[0] * a[9]) / det,
                     (a[0] * a[5] - a[1] * a[4]) / det};
    double b[3] = {a[3], a[7], a[11]};
    *out = mn_v3(-(inv[0] * b[0] + inv[1] * b[1] + inv[2] * b[2]),
                 -(inv[3] * b[0] + inv[4] * b[1] + inv[5] * b[2]),
                 -(inv[6] * b[0] + inv[7] * b[1] + inv[8] * b[2]));
    return 1;
}

mn_status mn_rig_from_gltf(const mn_gltf* g, mn_rig** rig, int** ctrl_joint, mn_error* err) {
    if (!g || !rig) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    *rig = NULL;
    if (ctrl_joint) *ctrl_joint = NULL;
    if (g->nverts <= 0 || g->njoints <= 0 || !g->vjoint || !g->vweight)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "skin", "the glTF has no skinned mesh");
    int nj = g->njoints;
    int* used = calloc((size_t)nj, sizeof(int));
    int* cj = malloc((size_t)nj * sizeof(int));
    int* idx = malloc((size_t)g->nverts * 4 * sizeof(int));
    mn_status st = MN_OK;
    mn_rig* r = NULL;
    if (!used || !cj || !idx) {
        st = mn_error_set(err, MN_ERR_NOMEM, "", 0, "", "out of memory");
        goto done;
    }
    for (int i = 0; i < 4 * g->nverts; i++)
        if (g->vweight[i] > 0 && g->vjoint[i] >= 0 && g->vjoint[i] < nj) used[g->vjoint[i]] = 1;
    mn_error e2;
    r = mn_rig_create(3, g->nverts, g->rest_pos, NULL, &e2);
    if (!r) {
        st = mn_error_set(err, e2.status, "", 0, "POSITION", "%s", e2.message);
        goto done;
    }
    int nc = 0;
    for (int j = 0; j < nj; j++) {
        if (!used[j]) {
            used[j] = -1;
            continue;
        }
        mn_ctrl_def d = mn_ctrl_default();
        char fallback[32];
        snprintf(fallback, sizeof fallback, "joint%d", j);
        d.name =
            g->joint_name && g->joint_name[j] && g->joint_name[j][0] ? g->joint_name[j] : fallback;
        if (mn_rig_find_ctrl(r, d.name) >= 0) d.name = fallback; /* duplicate node names */
        if (!affine_inverse_translation(g->inverse_bind + 12 * j, &d.pivot)) {
            st = mn_error_set(err, MN_ERR_PARSE, "", 0, "inverseBindMatrices",
                              "joint %d: singular inverse bind matrix", j);
            goto done;
        }
        if (mn_rig_add_ctrl(r, &d, &e2) < 0) {
            st = mn_error_set(err, MN_ERR_PARSE, "", 0, "joints", "joint %d: %s", j, e2.message);
            goto done;
        }
        cj[nc] = j;
        used[j] = nc++;
    }
    for (int i = 0; i < 4 * g->nverts; i++) {
        int j = g->vjoint[i];
        idx[i] = (g->vweight[i] > 0 && j >= 0 && j < nj) ? used[j] : -1;
    }
    int nwarn = 0;
    st = mn_rig_set_weights(r, 4, idx, g->vweight, &nwarn, &e2);
    if (st != MN_OK) st = mn_error_set(err, st, "", 0, "WEIGHTS_0", "%s", e2.message);
done:
    free(used);
    free(idx);
    if (st != MN_OK) {
        free(cj);
        mn_rig_destroy(r);
        return st;
    }
    *rig = r;
    if (ctrl_joint)
        *ctrl_joint = cj;
    else
        free(cj);
    return MN_OK;
}
