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
    if (nwarn) mn_warn(warn, dmat_path, 0, "weights", "%s", e2.message[0] ? e2.message : "weights normalised");
done:
    mn_dmat_free(&W);
    mn_tgf_free(&tgf);
    if (st != MN_OK) {
        mn_rig_destroy(r);
        mn_mesh_free(&obj);
        return st;
    }
    *rig = r;
    if (mesh) *mesh = obj;
    else mn_mesh_free(&obj);
    return MN_OK;
}
