/* A figure and its motion as a glTF 2.0 binary (.glb): one node per joint, with the joint's
 * placement and rest state as its translation and rotation, and one animation whose
 * channels key every joint's rotation (and the translation of free and slide joints) at
 * every frame, linearly. A skeleton with its animation, no mesh: viewers show the node
 * hierarchy moving.
 *
 * A joint's local transform (include/marionette/model.h) is Trans(offset) Rot(orient)
 * Motion(q); as a node's translation and rotation:
 *   HINGE  t = offset,                  r = orient * axis_angle(axis, q)
 *   BALL   t = offset,                  r = orient * quat
 *   SLIDE  t = offset + orient(axis q), r = orient
 *   FREE   t = offset + p,              r = orient * quat
 *   FIXED  t = offset,                  r = orient */
#include <marionette/io.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_internal.h"

static void node_trs(const mn_model* m, int j, const double* q, mn_vec3* t, mn_quat* r) {
    const double* qj = q + m->jnt_qadr[j];
    mn_quat o = m->jnt_orient[j];
    *t = m->jnt_offset[j];
    *r = o;
    switch (m->jnt_type[j]) {
    case MN_JOINT_HINGE:
        *r = mn_quat_mul(o, mn_quat_axis_angle(m->jnt_axis[j], qj[0]));
        break;
    case MN_JOINT_BALL:
        *r = mn_quat_mul(o, mn_quat_normalize(mn_q4(qj[0], qj[1], qj[2], qj[3])));
        break;
    case MN_JOINT_SLIDE:
        *t = mn_vec3_add(*t, mn_quat_rotate(o, mn_vec3_scale(m->jnt_axis[j], qj[0])));
        break;
    case MN_JOINT_FREE:
        *t = mn_vec3_add(*t, mn_v3(qj[0], qj[1], qj[2]));
        *r = mn_quat_mul(o, mn_quat_normalize(mn_q4(qj[3], qj[4], qj[5], qj[6])));
        break;
    default:
        break;
    }
}

static int moves(const mn_model* m, int j) {
    return m->jnt_type[j] == MN_JOINT_FREE || m->jnt_type[j] == MN_JOINT_SLIDE;
}

static void put_f32(unsigned char* bin, size_t* off, double v) {
    float f = (float)v;
    memcpy(bin + *off, &f, 4);
    *off += 4;
}

static void put_u32(mn_strbuf* b, uint32_t v) {
    unsigned char c[4] = {(unsigned char)(v & 255), (unsigned char)((v >> 8) & 255),
                          (unsigned char)((v >> 16) & 255), (unsigned char)(v >> 24)};
    mn_strbuf_append(b, (const char*)c, 4);
}

mn_status mn_gltf_write_motion(const char* path, const mn_model* m, const mn_motion* mo,
                               mn_error* err) {
    if (!path || !m || !mo || mo->nframes < 1 || mo->nq != m->nq || !mo->q || !(mo->frame_time > 0))
        return mn_error_set(err, MN_ERR_ARG, path, 0, "motion", "no figure or motion to write");
    int nj = m->njoint, nf = mo->nframes, ntr = 0;
    for (int j = 0; j < nj; j++)
        ntr += moves(m, j);
    /* binary: times, then per joint its rotations, then the translations of moving joints */
    size_t bytes = 4 * (size_t)nf + 16 * (size_t)nf * (size_t)nj + 12 * (size_t)nf * (size_t)ntr;
    if (bytes > 0x7fffffffu)
        return mn_error_set(err, MN_ERR_ARG, path, 0, "motion", "too large for one glTF buffer");
    unsigned char* bin = malloc(bytes + 4);
    if (!bin) return mn_error_set(err, MN_ERR_NOMEM, path, 0, "motion", "out of memory");
    size_t off = 0;
    double tmax = 0;
    for (int f = 0; f < nf; f++) {
        double t = f * mo->frame_time;
        put_f32(bin, &off, t);
        tmax = (float)t;
    }
    size_t rot0 = off;
    for (int j = 0; j < nj; j++)
        for (int f = 0; f < nf; f++) {
            mn_vec3 t;
            mn_quat r;
            node_trs(m, j, mo->q + (size_t)f * (size_t)mo->nq, &t, &r);
            if (f > 0) {
                /* same hemisphere as the previous key: linear interpolation takes the short way */
                float prev[4];
                memcpy(prev, bin + off - 16, 16);
                if (prev[3] * r.w + prev[0] * r.x + prev[1] * r.y + prev[2] * r.z < 0)
                    r = mn_q4(-r.w, -r.x, -r.y, -r.z);
            }
            put_f32(bin, &off, r.x), put_f32(bin, &off, r.y), put_f32(bin, &off, r.z),
                put_f32(bin, &off, r.w);
        }
    size_t tr0 = off;
    for (int j = 0; j < nj; j++) {
        if (!moves(m, j)) continue;
        for (int f = 0; f < nf; f++) {
            mn_vec3 t;
            mn_quat r;
            node_trs(m, j, mo->q + (size_t)f * (size_t)mo->nq, &t, &r);
            put_f32(bin, &off, t.x), put_f32(bin, &off, t.y), put_f32(bin, &off, t.z);
        }
    }

    mn_strbuf js;
    mn_strbuf_init(&js);
    mn_strbuf_printf(&js, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"marionette\"},\"scene\":"
                          "0,\"scenes\":[{\"nodes\":[");
    int first = 1;
    for (int j = 0; j < nj; j++)
        if (m->jnt_parent[j] < 0) mn_strbuf_printf(&js, "%s%d", first ? "" : ",", j), first = 0;
    mn_strbuf_printf(&js, "]}],\"nodes\":[");
    for (int j = 0; j < nj; j++) {
        mn_vec3 t;
        mn_quat r;
        node_trs(m, j, mo->q, &t, &r);
        mn_strbuf_printf(&js, "%s{\"name\":", j ? "," : "");
        mn_strbuf_json_str(&js, m->jnt_name[j]);
        mn_strbuf_printf(&js,
                         ",\"translation\":[%.9g,%.9g,%.9g],\"rotation\":[%.9g,%.9g,%.9g,%.9g]",
                         t.x, t.y, t.z, r.x, r.y, r.z, r.w);
        int nc = 0;
        for (int c = j + 1; c < nj; c++)
            if (m->jnt_parent[c] == j)
                mn_strbuf_printf(&js, "%s%d", nc++ ? "," : ",\"children\":[", c);
        mn_strbuf_printf(&js, "%s}", nc ? "]" : "");
    }
    mn_strbuf_printf(&js, "],\"buffers\":[{\"byteLength\":%zu}],\"bufferViews\":[", bytes);
    mn_strbuf_printf(&js, "{\"buffer\":0,\"byteOffset\":0,\"byteLength\":%zu}", 4 * (size_t)nf);
    mn_strbuf_printf(&js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu}", rot0,
                     tr0 - rot0);
    if (ntr)
        mn_strbuf_printf(&js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu}", tr0,
                         bytes - tr0);
    mn_strbuf_printf(&js,
                     "],\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":%d,"
                     "\"type\":\"SCALAR\","
                     "\"min\":[0],\"max\":[%.9g]}",
                     nf, tmax);
    for (int j = 0; j < nj; j++)
        mn_strbuf_printf(&js,
                         ",{\"bufferView\":1,\"byteOffset\":%zu,\"componentType\":5126,\"count\":%"
                         "d,\"type\":\"VEC4\"}",
                         16 * (size_t)nf * (size_t)j, nf);
    int k = 0;
    for (int j = 0; j < nj; j++)
        if (moves(m, j))
            mn_strbuf_printf(&js,
                             ",{\"bufferView\":2,\"byteOffset\":%zu,\"componentType\":5126,"
                             "\"count\":%d,\"type\":\"VEC3\"}",
                             12 * (size_t)nf * (size_t)k++, nf);
    mn_strbuf_printf(&js, "],\"animations\":[{\"name\":\"take\",\"samplers\":[");
    for (int i = 0; i < nj + ntr; i++)
        mn_strbuf_printf(&js, "%s{\"input\":0,\"output\":%d,\"interpolation\":\"LINEAR\"}",
                         i ? "," : "", 1 + i);
    mn_strbuf_printf(&js, "],\"channels\":[");
    for (int j = 0; j < nj; j++)
        mn_strbuf_printf(&js, "%s{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"rotation\"}}",
                         j ? "," : "", j, j);
    k = 0;
    for (int j = 0; j < nj; j++)
        if (moves(m, j))
            mn_strbuf_printf(&js,
                             ",{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"translation\"}}",
                             nj + k++, j);
    mn_strbuf_printf(&js, "]}]}");
    while (js.len % 4)
        mn_strbuf_append(&js, " ", 1);

    mn_strbuf glb;
    mn_strbuf_init(&glb);
    size_t binpad = (4 - bytes % 4) % 4;
    size_t total = 12 + 8 + js.len + 8 + bytes + binpad;
    put_u32(&glb, 0x46546C67u);
    put_u32(&glb, 2);
    put_u32(&glb, (uint32_t)total);
    put_u32(&glb, (uint32_t)js.len);
    put_u32(&glb, 0x4E4F534Au);
    mn_strbuf_append(&glb, js.data, js.len);
    put_u32(&glb, (uint32_t)(bytes + binpad));
    put_u32(&glb, 0x004E4942u);
    mn_strbuf_append(&glb, (const char*)bin, bytes);
    mn_strbuf_append(&glb, "\0\0\0", binpad);
    free(bin);
    mn_status st;
    if (js.failed || glb.failed)
        st = mn_error_set(err, MN_ERR_NOMEM, path, 0, "motion", "out of memory");
    else
        st = mn_write_file_atomic(path, glb.data, glb.len, err);
    mn_strbuf_free(&js);
    mn_strbuf_free(&glb);
    return st;
}
