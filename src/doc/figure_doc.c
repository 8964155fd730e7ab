/* The figure document: any figure the readers load (skeleton text, BVH, URDF, glTF
 * skeleton and skin) as one JSON file, for programs that do not link the readers (the
 * WebAssembly module). Format: docs/figure-document.md. */
#include <marionette/gltf.h>
#include <marionette/meshio.h>
#include <marionette/skin.h>

#include "doc/doc_internal.h"
#include "doc/doc_codecs.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writer ---------------------------------------------------------------------------- */

static void put_string(mn_strbuf* b, const char* s) {
    mn_strbuf_append(b, "\"", 1);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            mn_strbuf_printf(b, "\\%c", c);
        else if (c < 0x20)
            mn_strbuf_printf(b, "\\u%04x", c);
        else
            mn_strbuf_append(b, (const char*)&c, 1);
    }
    mn_strbuf_append(b, "\"", 1);
}

static void put_doubles(mn_strbuf* b, const double* v, size_t n) {
    mn_strbuf_append(b, "[", 1);
    for (size_t i = 0; i < n; i++) {
        if (i) mn_strbuf_append(b, ",", 1);
        mn_strbuf_double(b, v[i]);
    }
    mn_strbuf_append(b, "]", 1);
}

static void put_ints(mn_strbuf* b, const int* v, size_t n) {
    mn_strbuf_append(b, "[", 1);
    for (size_t i = 0; i < n; i++)
        mn_strbuf_printf(b, "%s%d", i ? "," : "", v[i]);
    mn_strbuf_append(b, "]", 1);
}

static const char* ctrl_kind_name(int k) {
    return k == MN_CTRL_BONE ? "bone" : k == MN_CTRL_CAGE ? "cage" : "point";
}

static int same(const double* a, const double* b, int n) {
    for (int i = 0; i < n; i++)
        if (!(a[i] == b[i])) return 0;
    return 1;
}

/* ,"key":[v...] unless v equals the default d (n numbers). */
static void put_member(mn_strbuf* b, const char* key, const double* v, const double* d, int n,
                       int array) {
    if (same(v, d, n)) return;
    mn_strbuf_printf(b, ",\"%s\":", key);
    if (array)
        put_doubles(b, v, (size_t)n);
    else
        mn_strbuf_double(b, v[0]);
}

/* A joint: name, parent and type, then only the members that differ from mn_joint_default()
 * (and q0 from the rest state that default gives: zeros, identity quaternions); the reader
 * starts from the same defaults. */
static void put_joint(mn_strbuf* b, const mn_model* m, int j) {
    const mn_joint_def d = mn_joint_default();
    mn_joint_type type = (mn_joint_type)m->jnt_type[j];
    mn_strbuf_printf(b, "    {\"name\":");
    put_string(b, m->jnt_name[j]);
    mn_strbuf_printf(b, ",\"parent\":%d,\"type\":\"%s\"", m->jnt_parent[j],
                     mn_joint_type_name(type));
    const mn_vec3 o = m->jnt_offset[j], a = m->jnt_axis[j], c = m->jnt_com[j];
    const mn_quat r = m->jnt_orient[j];
    put_member(b, "offset", (const double[]){o.x, o.y, o.z}, (const double[]){0, 0, 0}, 3, 1);
    put_member(b, "orient", (const double[]){r.w, r.x, r.y, r.z},
               (const double[]){d.orient.w, d.orient.x, d.orient.y, d.orient.z}, 4, 1);
    put_member(b, "axis", (const double[]){a.x, a.y, a.z},
               (const double[]){d.axis.x, d.axis.y, d.axis.z}, 3, 1);
    if (m->jnt_limited[j]) mn_strbuf_printf(b, ",\"limited\":true");
    /* a limited joint's range always (the editor scales a slide's) */
    if (m->jnt_limited[j]) {
        mn_strbuf_printf(b, ",\"range\":");
        put_doubles(b, m->jnt_range + 2 * j, 2);
    } else {
        put_member(b, "range", m->jnt_range + 2 * j, d.range, 2, 1);
    }
    put_member(b, "swing", m->jnt_swing + j, &d.swing, 1, 0);
    put_member(b, "twist", m->jnt_twist + 2 * j, d.twist, 2, 1);
    put_member(b, "mass", m->jnt_mass + j, &d.mass, 1, 0);
    put_member(b, "com", (const double[]){c.x, c.y, c.z}, (const double[]){0, 0, 0}, 3, 1);
    put_member(b, "stiffness", m->jnt_stiffness + j, &d.stiffness, 1, 0);
    double rest[7] = {0};
    if (type == MN_JOINT_BALL) rest[0] = 1;
    if (type == MN_JOINT_FREE) rest[3] = 1;
    put_member(b, "q0", m->q0 + m->jnt_qadr[j], rest, mn_joint_type_nq(type), 1);
    if (m->jnt_rot_order[j] != (int)d.rot_order)
        mn_strbuf_printf(b, ",\"rot_order\":\"%s\"",
                         mn_euler_order_name((mn_euler_order)m->jnt_rot_order[j]));
    if (m->jnt_object[j]) {
        mn_strbuf_printf(b, ",\"object\":");
        put_string(b, m->jnt_object[j]);
    }
    mn_strbuf_printf(b, "}");
}

static void put_skin(mn_strbuf* b, const mn_figure_skin* sk) {
    const mn_rig* r = sk->rig;
    mn_strbuf_printf(b, ",\n  \"skin\":{\"dim\":%d,\"vertices\":", r->dim);
    double* v = malloc(sizeof(double) * (size_t)(r->nverts > 0 ? r->nverts * r->dim : 1));
    if (!v) {
        b->failed = 1;
        return;
    }
    for (int i = 0; i < r->nverts; i++)
        for (int k = 0; k < r->dim; k++)
            v[i * r->dim + k] = r->rest[3 * i + k];
    put_doubles(b, v, (size_t)(r->nverts * r->dim));
    free(v);
    mn_strbuf_printf(b, ",\n    \"masses\":");
    put_doubles(b, r->mass, (size_t)r->nverts);
    mn_strbuf_printf(b, ",\n    \"triangles\":");
    put_ints(b, sk->tris, sk->tris ? (size_t)(3 * sk->ntris) : 0);
    mn_strbuf_printf(b, ",\n    \"influences\":%d,\"weight_index\":", r->k);
    put_ints(b, r->w_idx, (size_t)(r->nverts * r->k));
    mn_strbuf_printf(b, ",\n    \"weight\":");
    put_doubles(b, r->w_val, (size_t)(r->nverts * r->k));
    mn_strbuf_printf(b, ",\n    \"controllers\":[");
    for (int c = 0; c < r->nctrl; c++) {
        mn_vec3 p = r->ctrl_pivot[c], t = r->ctrl_tail[c];
        mn_strbuf_printf(b, "%s\n      {\"name\":", c ? "," : "");
        put_string(b, r->ctrl_name[c]);
        mn_strbuf_printf(b, ",\"kind\":\"%s\",\"pivot\":", ctrl_kind_name(r->ctrl_kind[c]));
        put_doubles(b, (const double[]){p.x, p.y, p.z}, 3);
        mn_strbuf_printf(b, ",\"tail\":");
        put_doubles(b, (const double[]){t.x, t.y, t.z}, 3);
        mn_strbuf_printf(b, ",\"parent\":%d,\"attached\":%s,\"joint\":%d}", r->ctrl_parent[c],
                         r->ctrl_attached[c] ? "true" : "false",
                         sk->ctrl_joint ? sk->ctrl_joint[c] : -1);
    }
    mn_strbuf_printf(b, "]}");
}

/* The document's text into b; the arguments checked first (name in messages). */
static mn_status doc_text(mn_strbuf* b, const char* name, const mn_model* m,
                          const mn_motion* motion, const mn_figure_skin* skin, mn_error* err) {
    mn_strbuf_init(b);
    if (!m) return mn_error_set(err, MN_ERR_ARG, name, 0, "model", "NULL");
    if (motion && motion->nframes > 0 && motion->nq != m->nq)
        return mn_error_set(err, MN_ERR_ARG, name, 0, "motion",
                            "%d numbers per frame, the model has nq %d", motion->nq, m->nq);
    if (skin && !skin->rig) return mn_error_set(err, MN_ERR_ARG, name, 0, "skin.rig", "NULL");
    mn_strbuf_printf(b, "{\"format\":\"marionette-figure\",\"version\":1,\"name\":");
    put_string(b, m->name ? m->name : "");
    mn_strbuf_printf(b, ",\"nq\":%d,\"nv\":%d,\n  \"joints\":[\n", m->nq, m->nv);
    for (int j = 0; j < m->njoint; j++) {
        put_joint(b, m, j);
        mn_strbuf_printf(b, "%s\n", j + 1 < m->njoint ? "," : "");
    }
    mn_strbuf_printf(b, "  ]");
    if (motion && motion->nframes > 0) {
        mn_strbuf_printf(b, ",\n  \"motion\":{\"frame_time\":");
        mn_strbuf_double(b, motion->frame_time);
        mn_strbuf_printf(b, ",\"frames\":[");
        for (int f = 0; f < motion->nframes; f++) {
            mn_strbuf_printf(b, "%s\n    ", f ? "," : "");
            put_doubles(b, motion->q + (size_t)f * (size_t)m->nq, (size_t)m->nq);
        }
        mn_strbuf_printf(b, "]}");
    }
    if (skin) put_skin(b, skin);
    mn_strbuf_printf(b, "}\n");
    if (b->failed) {
        mn_strbuf_free(b);
        return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    }
    return MN_OK;
}

mn_status mn_figure_doc_write_mem(const mn_model* m, const mn_motion* motion,
                                  const mn_figure_skin* skin, char** text, size_t* len,
                                  mn_error* err) {
    if (text) *text = NULL;
    if (len) *len = 0;
    if (!text) return mn_error_set(err, MN_ERR_ARG, "", 0, "text", "NULL");
    mn_strbuf b;
    mn_status s = doc_text(&b, "", m, motion, skin, err);
    if (s != MN_OK) return s;
    *text = b.data;
    if (len) *len = b.len;
    return MN_OK;
}

mn_status mn_figure_doc_text(mn_strbuf* b, const char* name, const mn_model* m,
                             const mn_motion* motion, const mn_figure_skin* skin, mn_error* err) {
    return doc_text(b, name, m, motion, skin, err);
}

/* ---- reader (the figure and its motion; the skin is for the module) -------------------- */

static mn_status bad(mn_error* err, const char* name, const char* field, const char* what) {
    return mn_error_set(err, MN_ERR_PARSE, name, 0, field, "%s", what);
}

/* o's member key as n finite numbers into out: 1 when done or when there is no such member
 * (out keeps its default), 0 when it is malformed. */
static int get_vec(const cJSON* o, const char* key, double* out, int n) {
    const cJSON* a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!a) return 1;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) return 0;
    int i = 0;
    const cJSON* e;
    cJSON_ArrayForEach(e, a) {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) return 0;
        out[i++] = e->valuedouble;
    }
    return 1;
}

/* A required finite number. */
static int get_num(const cJSON* o, const char* key, double* out) {
    const cJSON* e = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) return 0;
    *out = e->valuedouble;
    return 1;
}
/* An optional one: absent keeps *out. */
static int opt_num(const cJSON* o, const char* key, double* out) {
    return !cJSON_GetObjectItemCaseSensitive(o, key) || get_num(o, key, out);
}

static mn_status read_joint(const cJSON* jj, int j, const char* name, mn_spec* spec,
                            mn_error* err) {
    char f[128];
    mn_joint_def d = mn_joint_default();
#define FIELD(k) (snprintf(f, sizeof f, "joints[%d].%s", j, k), f)
    if (!cJSON_IsObject(jj)) return bad(err, name, FIELD("joint"), "not an object");
    const cJSON* n = cJSON_GetObjectItemCaseSensitive(jj, "name");
    if (!cJSON_IsString(n)) return bad(err, name, FIELD("name"), "missing or not a string");
    d.name = n->valuestring;
    double parent;
    if (!get_num(jj, "parent", &parent) || parent != floor(parent) || parent < -1 || parent >= j)
        return bad(err, name, FIELD("parent"), "must be -1 or the index of an earlier joint");
    d.parent = (int)parent;
    const cJSON* t = cJSON_GetObjectItemCaseSensitive(jj, "type");
    int type = -1;
    for (int k = MN_JOINT_FIXED; k <= MN_JOINT_FREE; k++)
        if (cJSON_IsString(t) && !strcmp(t->valuestring, mn_joint_type_name((mn_joint_type)k)))
            type = k;
    if (type < 0)
        return bad(err, name, FIELD("type"), "not one of fixed, hinge, slide, ball, free");
    d.type = (mn_joint_type)type;
    double v[7] = {0, 0, 0};
    if (!get_vec(jj, "offset", v, 3))
        return bad(err, name, FIELD("offset"), "expected 3 finite numbers");
    d.offset = mn_v3(v[0], v[1], v[2]);
    memcpy(v, (const double[]){d.orient.w, d.orient.x, d.orient.y, d.orient.z}, 4 * sizeof *v);
    if (!get_vec(jj, "orient", v, 4))
        return bad(err, name, FIELD("orient"), "expected 4 finite numbers");
    d.orient = (mn_quat){v[0], v[1], v[2], v[3]};
    memcpy(v, (const double[]){d.axis.x, d.axis.y, d.axis.z}, 3 * sizeof *v);
    if (!get_vec(jj, "axis", v, 3))
        return bad(err, name, FIELD("axis"), "expected 3 finite numbers");
    d.axis = mn_v3(v[0], v[1], v[2]);
    const cJSON* lim = cJSON_GetObjectItemCaseSensitive(jj, "limited");
    if (lim && !cJSON_IsBool(lim))
        return bad(err, name, FIELD("limited"), "expected true or false");
    d.limited = cJSON_IsTrue(lim);
    if (!get_vec(jj, "range", d.range, 2))
        return bad(err, name, FIELD("range"), "expected 2 finite numbers");
    if (!opt_num(jj, "swing", &d.swing))
        return bad(err, name, FIELD("swing"), "expected a finite number");
    if (!get_vec(jj, "twist", d.twist, 2))
        return bad(err, name, FIELD("twist"), "expected 2 finite numbers");
    if (!opt_num(jj, "mass", &d.mass))
        return bad(err, name, FIELD("mass"), "expected a finite number");
    memset(v, 0, 3 * sizeof *v);
    if (!get_vec(jj, "com", v, 3)) return bad(err, name, FIELD("com"), "expected 3 finite numbers");
    d.com = mn_v3(v[0], v[1], v[2]);
    if (!opt_num(jj, "stiffness", &d.stiffness))
        return bad(err, name, FIELD("stiffness"), "expected a finite number");
    int nq = mn_joint_type_nq(d.type);
    if (!get_vec(jj, "q0", d.q0, nq)) {
        char what[64];
        snprintf(what, sizeof what, "expected %d finite numbers", nq);
        return bad(err, name, FIELD("q0"), what);
    }
    const cJSON* ro = cJSON_GetObjectItemCaseSensitive(jj, "rot_order");
    int order = !ro                  ? (int)d.rot_order
                : cJSON_IsString(ro) ? mn_euler_order_parse(ro->valuestring)
                                     : -1;
    if (order < 0) return bad(err, name, FIELD("rot_order"), "not an Euler order (xyz ... zyx)");
    d.rot_order = (mn_euler_order)order;
    const cJSON* obj = cJSON_GetObjectItemCaseSensitive(jj, "object");
    if (cJSON_IsString(obj))
        d.object = obj->valuestring;
    else if (obj && !cJSON_IsNull(obj))
        return bad(err, name, FIELD("object"), "expected a string or null");
    mn_error e2;
    /* a joint the model refuses is a malformed document (PARSE), unless memory ran out */
    if (mn_spec_add_joint(spec, &d, &e2) < 0)
        return mn_error_set(err, e2.status == MN_ERR_NOMEM ? MN_ERR_NOMEM : MN_ERR_PARSE, name, 0,
                            FIELD(e2.field), "%s", e2.message);
#undef FIELD
    return MN_OK;
}

mn_status mn_figure_doc_read_mem(const char* text, size_t len, const char* name, mn_model** model,
                                 mn_motion* motion, mn_error* err) {
    if (model) *model = NULL;
    if (motion) memset(motion, 0, sizeof *motion);
    if (!name) name = "";
    if (!text || !model) return mn_error_set(err, MN_ERR_ARG, name, 0, "text", "NULL argument");
    cJSON* root = cJSON_ParseWithLength(text, len);
    if (!root) return bad(err, name, "", "not valid JSON");
    size_t second, first;
    if (mn_json_duplicate(text, len, &second, &first)) {
        int l2 = 1, l1 = 1;
        for (size_t i = 0; i < second; i++)
            l2 += text[i] == '\n', l1 += i < first && text[i] == '\n';
        cJSON_Delete(root);
        return mn_error_set(err, MN_ERR_PARSE, name, l2, "json",
                            "a member given a second time in one object (the first at line %d)",
                            l1);
    }
    mn_status s = MN_OK;
    mn_spec* spec = NULL;
    mn_model* m = NULL;
    const cJSON* fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON* ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON* jn = cJSON_GetObjectItemCaseSensitive(root, "joints");
    const cJSON* nm = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "marionette-figure")) {
        s = bad(err, name, "format", "expected \"marionette-figure\"");
        goto done;
    }
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
        s = bad(err, name, "version", "this reader knows version 1");
        goto done;
    }
    if (!cJSON_IsArray(jn) || cJSON_GetArraySize(jn) < 1) {
        s = bad(err, name, "joints", "expected a non-empty array");
        goto done;
    }
    spec = mn_spec_create(cJSON_IsString(nm) ? nm->valuestring : "figure");
    if (!spec) {
        s = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
        goto done;
    }
    int j = 0;
    const cJSON* jj;
    cJSON_ArrayForEach(jj, jn) {
        if ((s = read_joint(jj, j++, name, spec, err)) != MN_OK) goto done;
    }
    mn_error e2;
    m = mn_model_compile(spec, &e2);
    if (!m) {
        s = mn_error_set(err, e2.status == MN_ERR_NOMEM ? MN_ERR_NOMEM : MN_ERR_PARSE, name, 0,
                         e2.field, "%s", e2.message);
        goto done;
    }
    const cJSON* mo = cJSON_GetObjectItemCaseSensitive(root, "motion");
    if (mo && motion) {
        const cJSON* fr = cJSON_GetObjectItemCaseSensitive(mo, "frames");
        double ft;
        if (!get_num(mo, "frame_time", &ft) || ft <= 0) {
            s = bad(err, name, "motion.frame_time", "expected a number > 0");
            goto done;
        }
        if (!cJSON_IsArray(fr)) {
            s = bad(err, name, "motion.frames", "expected an array of states");
            goto done;
        }
        int nf = cJSON_GetArraySize(fr);
        double* q =
            malloc(sizeof(double) * (size_t)(nf > 0 ? nf : 1) * (size_t)(m->nq > 0 ? m->nq : 1));
        if (!q) {
            s = mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
            goto done;
        }
        int f = 0;
        const cJSON* row;
        cJSON_ArrayForEach(row, fr) {
            if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != m->nq) {
                char field[48];
                snprintf(field, sizeof field, "motion.frames[%d]", f);
                free(q);
                s = bad(err, name, field, "expected nq finite numbers");
                goto done;
            }
            int i = 0;
            const cJSON* e;
            cJSON_ArrayForEach(e, row) {
                if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
                    char field[48];
                    snprintf(field, sizeof field, "motion.frames[%d][%d]", f, i);
                    free(q);
                    s = bad(err, name, field, "not a finite number");
                    goto done;
                }
                q[(size_t)f * (size_t)m->nq + (size_t)i++] = e->valuedouble;
            }
            f++;
        }
        motion->nframes = nf;
        motion->nq = m->nq;
        motion->frame_time = ft;
        motion->q = q;
    }
done:
    cJSON_Delete(root);
    mn_spec_destroy(spec);
    if (s != MN_OK) {
        mn_model_destroy(m);
        m = NULL;
    }
    *model = m;
    return s;
}
