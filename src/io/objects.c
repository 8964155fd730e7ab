/* Polygon objects on joints (Welman 6.1.1: `object "r_lleg.pol"`, "(rigid) objects ...
 * drawn as they are encountered during a display traversal of the hierarchy"; Parent ch. 5:
 * a node's data pointer and transformation matrix): each joint's `object` names a mesh,
 * read here as Wavefront OBJ from the figure's folder (through mn_read_file_beneath, so a
 * name cannot lead out of it), in the joint's frame. mn_objects_pose places every object
 * on its joint's world frame, the display traversal as one mesh. */
#include <marionette/meshio.h>

#include <stdlib.h>
#include <string.h>

#include "io/io_internal.h"

void mn_objects_free(mn_objects* o) {
    if (!o) return;
    for (int j = 0; j < o->njoint && o->mesh; j++)
        mn_mesh_free(&o->mesh[j]);
    free(o->mesh);
    memset(o, 0, sizeof *o);
}

mn_status mn_objects_read(const mn_model* m, const char* dir, mn_objects* out, mn_warnings* warn,
                          mn_error* err) {
    if (out) memset(out, 0, sizeof *out);
    if (!m || !out) return mn_error_set(err, MN_ERR_ARG, NULL, 0, "objects", "NULL argument");
    out->mesh = calloc((size_t)(m->njoint > 0 ? m->njoint : 1), sizeof(mn_mesh));
    if (!out->mesh) return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "objects", "out of memory");
    out->njoint = m->njoint;
    for (int j = 0; j < m->njoint; j++) {
        const char* name = m->jnt_object[j];
        if (!name || !name[0]) continue;
        char* text = NULL;
        size_t len = 0;
        mn_status st = mn_read_file_beneath(dir ? dir : "", name, 0, &text, &len, err);
        if (st == MN_OK) st = mn_obj_read_mem(text, len, name, &out->mesh[j], warn, err);
        free(text);
        if (st != MN_OK) {
            mn_error why = *err;
            mn_objects_free(out);
            return mn_error_set(err, why.status, why.file[0] ? why.file : name, why.line,
                                why.field[0] ? why.field : "object", "joint %s: %s", m->jnt_name[j],
                                why.message);
        }
        out->nobjects++;
    }
    return MN_OK;
}

mn_status mn_objects_pose(const mn_model* m, const mn_data* d, const mn_objects* o, mn_mesh* out,
                          mn_error* err) {
    if (out) memset(out, 0, sizeof *out);
    if (!m || !d || !o || !out || o->njoint != m->njoint)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "objects", "NULL or mismatched argument");
    long nv = 0, nt = 0;
    for (int j = 0; j < m->njoint; j++)
        nv += o->mesh[j].nverts, nt += o->mesh[j].ntris;
    if (nv > 0x7fffffffL / 3 || nt > 0x7fffffffL / 3)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "objects", "too many vertices");
    out->pos = malloc(sizeof(double) * 3 * (size_t)(nv > 0 ? nv : 1));
    out->tris = malloc(sizeof(int) * 3 * (size_t)(nt > 0 ? nt : 1));
    if (!out->pos || !out->tris) {
        mn_mesh_free(out);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "objects", "out of memory");
    }
    for (int j = 0; j < m->njoint; j++) {
        const mn_mesh* g = &o->mesh[j];
        for (int t = 0; t < 3 * g->ntris; t++)
            out->tris[3 * out->ntris + t] = g->tris[t] + out->nverts;
        for (int v = 0; v < g->nverts; v++) {
            mn_vec3 p =
                mn_point_world(d, j, mn_v3(g->pos[3 * v], g->pos[3 * v + 1], g->pos[3 * v + 2]));
            double* w = out->pos + 3 * (size_t)(out->nverts + v);
            w[0] = p.x, w[1] = p.y, w[2] = p.z;
        }
        out->nverts += g->nverts;
        out->ntris += g->ntris;
    }
    return MN_OK;
}
