/* glTF 2.0 binary writer: a model and a motion -> .glb (glTF 2.0 specification 4.4), written
 * atomically (mn_write_file_atomic).
 *
 * One node per model joint, named by the joint, children under their parent joint's node,
 * the roots in the scene. A node's rest TRS is the joint's frame at q0 seen from its
 * parent's frame (translation and rotation; the model's frames are rigid, so no scale). The
 * motion becomes one animation "motion": a key per frame at f * frame_time, a LINEAR
 * rotation channel for every joint whose rotation can change (HINGE, BALL, FREE) and a
 * translation channel for every joint whose position can (SLIDE, FREE). Values are the
 * joints' local frames from FK, so any joint type plays back as the model does. */
#include "io/io_internal.h"

#include <marionette/gltf.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct bin {
    unsigned char* data;
    size_t len, cap;
    int failed;
} bin;

static void bin_put(bin* b, const void* p, size_t n) {
    if (b->failed) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n) cap *= 2;
        unsigned char* d = realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void bin_float(bin* b, double v) {
    float f = (float)v;
    bin_put(b, &f, 4);
}

/* Local frame of joint j (rotation, translation) in its parent's frame, from FK frames. */
static void local_of(const mn_model* m, const mn_xform* xf, int j, mn_quat* r, mn_vec3* t) {
    int par = m->jnt_parent[j];
    if (par < 0) {
        *r = mn_quat_normalize(mn_quat_from_mat3(&xf[j].R));
        *t = xf[j].p;
        return;
    }
    mn_mat3 R;
    const mn_mat3* P = &xf[par].R;
    const mn_mat3* J = &xf[j].R;
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++)
            R.m[3 * a + c] = P->m[a] * J->m[c] + P->m[3 + a] * J->m[3 + c] + P->m[6 + a] * J->m[6 + c];
    *r = mn_quat_normalize(mn_quat_from_mat3(&R));
    *t = mn_mat3_tmulv(P, mn_vec3_sub(xf[j].p, xf[par].p));
}

static void put_min_max(mn_strbuf* js, const double* lo, const double* hi, int n) {
    mn_strbuf_printf(js, ",\"min\":[");
    for (int i = 0; i < n; i++) mn_strbuf_printf(js, "%s%.9g", i ? "," : "", (double)(float)lo[i]);
    mn_strbuf_printf(js, "],\"max\":[");
    for (int i = 0; i < n; i++) mn_strbuf_printf(js, "%s%.9g", i ? "," : "", (double)(float)hi[i]);
    mn_strbuf_printf(js, "]");
}

static void put_string(mn_strbuf* js, const char* s) {
    mn_strbuf_append(js, "\"", 1);
    for (const unsigned char* p = (const unsigned char*)s; *p; p++) {
        if (*p == '"' || *p == '\\') mn_strbuf_printf(js, "\\%c", *p);
        else if (*p < 0x20) mn_strbuf_printf(js, "\\u%04x", *p);
        else mn_strbuf_append(js, (const char*)p, 1);
    }
    mn_strbuf_append(js, "\"", 1);
}

mn_status mn_gltf_write(const char* path, const mn_model* m, const mn_motion* motion, mn_error* err) {
    if (!path || !m) return mn_error_set(err, MN_ERR_ARG, path ? path : "", 0, "", "NULL argument");
    const mn_motion* mo = motion && motion->nframes > 0 ? motion : NULL;
    if (mo && (mo->nq != m->nq || (m->nq > 0 && !mo->q) || !(mo->frame_time > 0) || !isfinite(mo->frame_time)))
        return mn_error_set(err, MN_ERR_ARG, path, 0, "motion", "motion does not fit the model (nq %d, model nq %d)",
                            mo->nq, m->nq);
    if (mo && m->nq > 0)
        for (size_t k = 0; k < (size_t)mo->nframes * (size_t)m->nq; k++)
            if (!isfinite(mo->q[k]))
                return mn_error_set(err, MN_ERR_ARG, path, 0, "motion", "frame %zu: state %zu is not finite",
                                    k / (size_t)m->nq, k % (size_t)m->nq);
    int nj = m->njoint, nf = mo ? mo->nframes : 0;
    if (nj < 1) return mn_error_set(err, MN_ERR_ARG, path, 0, "model", "no joints");
    mn_data* d = mn_data_create(m, 0);
    mn_quat* rq = malloc(sizeof(mn_quat) * (size_t)nj * (size_t)(nf + 1));
    mn_vec3* rt = malloc(sizeof(mn_vec3) * (size_t)nj * (size_t)(nf + 1));
    bin b = {0};
    mn_strbuf js;
    mn_strbuf_init(&js);
    mn_status s = MN_OK;
    if (!d || !rq || !rt) {
        s = mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
        goto done;
    }
    /* frame 0 of rq/rt: the rest pose; 1..nf: the motion */
    for (int f = 0; f <= nf; f++) {
        memcpy(d->q, f ? mo->q + (size_t)(f - 1) * (size_t)m->nq : m->q0, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        for (int j = 0; j < nj; j++) {
            mn_quat* r = &rq[(size_t)f * nj + j];
            local_of(m, d->xf, j, r, &rt[(size_t)f * nj + j]);
            const mn_quat* prev = f ? &rq[(size_t)(f - 1) * nj + j] : NULL;
            if (prev && r->w * prev->w + r->x * prev->x + r->y * prev->y + r->z * prev->z < 0)
                *r = mn_q4(-r->w, -r->x, -r->y, -r->z);
        }
    }
    /* JSON: asset, scene, nodes */
    mn_strbuf_printf(&js, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"marionette\"},\"scene\":0,\"scenes\":[{\"nodes\":[");
    int first = 1;
    for (int j = 0; j < nj; j++)
        if (m->jnt_parent[j] < 0) mn_strbuf_printf(&js, "%s%d", first ? "" : ",", j), first = 0;
    mn_strbuf_printf(&js, "]}],\"nodes\":[");
    for (int j = 0; j < nj; j++) {
        mn_quat r = rq[j];
        mn_vec3 t = rt[j];
        mn_strbuf_printf(&js, "%s{\"name\":", j ? "," : "");
        put_string(&js, m->jnt_name[j] ? m->jnt_name[j] : "");
        mn_strbuf_printf(&js, ",\"translation\":[%.9g,%.9g,%.9g],\"rotation\":[%.9g,%.9g,%.9g,%.9g]", (double)(float)t.x,
                         (double)(float)t.y, (double)(float)t.z, (double)(float)r.x, (double)(float)r.y,
                         (double)(float)r.z, (double)(float)r.w);
        first = 1;
        for (int c = 0; c < nj; c++)
            if (m->jnt_parent[c] == j) {
                mn_strbuf_printf(&js, "%s%d", first ? ",\"children\":[" : ",", c);
                first = 0;
            }
        if (!first) mn_strbuf_printf(&js, "]");
        mn_strbuf_printf(&js, "}");
    }
    mn_strbuf_printf(&js, "]");
    if (nf > 0) {
        /* buffer: times, then per channel its values; one bufferView and accessor each */
        mn_strbuf acc, views, chans, samps;
        mn_strbuf_init(&acc);
        mn_strbuf_init(&views);
        mn_strbuf_init(&chans);
        mn_strbuf_init(&samps);
        int nacc = 0;
        double lo = 0, hi = (nf - 1) * mo->frame_time;
        for (int f = 0; f < nf; f++) bin_float(&b, f * mo->frame_time);
        mn_strbuf_printf(&views, "{\"buffer\":0,\"byteOffset\":0,\"byteLength\":%zu}", b.len);
        mn_strbuf_printf(&acc, "{\"bufferView\":0,\"componentType\":5126,\"count\":%d,\"type\":\"SCALAR\"", nf);
        put_min_max(&acc, &lo, &hi, 1);
        mn_strbuf_printf(&acc, "}");
        nacc = 1;
        int nch = 0;
        for (int j = 0; j < nj; j++) {
            int t = m->jnt_type[j];
            for (int path = 0; path < 2; path++) {
                int want = path == 0 ? (t == MN_JOINT_SLIDE || t == MN_JOINT_FREE)
                                     : (t == MN_JOINT_HINGE || t == MN_JOINT_BALL || t == MN_JOINT_FREE);
                if (!want) continue;
                size_t off = b.len;
                for (int f = 1; f <= nf; f++) {
                    if (path == 0) {
                        mn_vec3 v = rt[(size_t)f * nj + j];
                        bin_float(&b, v.x), bin_float(&b, v.y), bin_float(&b, v.z);
                    } else {
                        mn_quat r = rq[(size_t)f * nj + j];
                        bin_float(&b, r.x), bin_float(&b, r.y), bin_float(&b, r.z), bin_float(&b, r.w);
                    }
                }
                mn_strbuf_printf(&views, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu}", off, b.len - off);
                mn_strbuf_printf(&acc, ",{\"bufferView\":%d,\"componentType\":5126,\"count\":%d,\"type\":\"%s\"}", nacc, nf,
                                 path == 0 ? "VEC3" : "VEC4");
                mn_strbuf_printf(&samps, "%s{\"input\":0,\"output\":%d,\"interpolation\":\"LINEAR\"}", nch ? "," : "",
                                 nacc);
                mn_strbuf_printf(&chans, "%s{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"%s\"}}", nch ? "," : "",
                                 nch, j, path == 0 ? "translation" : "rotation");
                nacc++;
                nch++;
            }
        }
        if (nch > 0) {
            mn_strbuf_printf(&js, ",\"animations\":[{\"name\":\"motion\",\"channels\":[");
            mn_strbuf_append(&js, chans.data ? chans.data : "", chans.len);
            mn_strbuf_printf(&js, "],\"samplers\":[");
            mn_strbuf_append(&js, samps.data ? samps.data : "", samps.len);
            mn_strbuf_printf(&js, "]}]");
        }
        mn_strbuf_printf(&js, ",\"buffers\":[{\"byteLength\":%zu}],\"bufferViews\":[", b.len);
        mn_strbuf_append(&js, views.data, views.len);
        mn_strbuf_printf(&js, "],\"accessors\":[");
        mn_strbuf_append(&js, acc.data, acc.len);
        mn_strbuf_printf(&js, "]");
        if (acc.failed || views.failed || chans.failed || samps.failed) js.failed = 1;
        mn_strbuf_free(&acc);
        mn_strbuf_free(&views);
        mn_strbuf_free(&chans);
        mn_strbuf_free(&samps);
    }
    mn_strbuf_printf(&js, "}");
    if (js.failed || b.failed) {
        s = mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
        goto done;
    }
    /* GLB (4.4): header, JSON chunk padded with spaces, BIN chunk padded with zeros; every
     * chunk a multiple of 4 bytes */
    size_t jl = (js.len + 3) & ~(size_t)3, bl = (b.len + 3) & ~(size_t)3;
    size_t total = 12 + 8 + jl + (b.len ? 8 + bl : 0);
    if (total > UINT32_MAX) {
        s = mn_error_set(err, MN_ERR_UNSUPPORTED, path, 0, "", "%zu bytes: too large for a .glb", total);
        goto done;
    }
    char* out = calloc(1, total);
    if (!out) {
        s = mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
        goto done;
    }
    uint32_t h[5] = {0x46546C67u, 2, (uint32_t)total, (uint32_t)jl, 0x4E4F534Au};
    memcpy(out, h, 20);
    memset(out + 20, ' ', jl);
    memcpy(out + 20, js.data, js.len);
    if (b.len) {
        uint32_t c1[2] = {(uint32_t)bl, 0x004E4942u};
        memcpy(out + 20 + jl, c1, 8);
        memcpy(out + 28 + jl, b.data, b.len);
    }
    s = mn_write_file_atomic(path, out, total, err);
    free(out);
done:
    mn_strbuf_free(&js);
    free(b.data);
    free(rq);
    free(rt);
    mn_data_destroy(d);
    return s;
}
