/* Soft-body scene documents (docs/softbody.md): the mesh, the body made of it, the
 * controllers, their drives, the material, the time step and the coupling, read with cJSON
 * (errors name the file, line and field: json_locate.h), and the simulation they describe,
 * built with the skin layer (mn_lattice, mn_softbody, mn_coupled) and stepped a frame at a
 * time. The mesh is read through the confined opener unless the caller trusts the
 * document, as a sequence document's figure is. */
#include <marionette/retarget.h>
#include <marionette/simscene.h>

#include "io/io_internal.h"
#include "doc/json_locate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

mn_sim_read_options mn_sim_read_default(void) {
    mn_sim_read_options o;
    memset(&o, 0, sizeof o);
    return o;
}

void mn_sim_destroy(mn_sim* s) {
    if (!s) return;
    mn_coupled_destroy(s->coupled);
    if (s->rig != s->mesh_rig) mn_rig_destroy(s->rig);
    mn_rig_destroy(s->mesh_rig);
    mn_softbody_destroy(s->body);
    mn_lattice_destroy(s->lattice);
    mn_mesh_free(&s->mesh);
    free(s->driven);
    for (int p = 0; p < s->npaths; p++)
        free(s->paths[p].keys);
    free(s->paths);
    mn_gltf_free(&s->gltf);
    mn_model_destroy(s->model);
    free(s->ctrl_joint);
    free(s->work);
    free(s->scratch);
    free(s->take_pose);
    free(s);
}

/* ---- drives ------------------------------------------------------------------------------ */

/* The pose of a keyed path at time t: linear in the pivot, along the shortest arc in the
 * rotation, held before the first key and after the last (or repeated, for a loop). */
static mn_xform path_at(const mn_sim_path* p, double t) {
    const mn_sim_key* k = p->keys;
    int n = p->nkeys;
    double period = k[n - 1].t;
    if (p->loop && period > 0) t = fmod(fmod(t, period) + period, period);
    if (t <= k[0].t) return k[0].pose;
    if (t >= k[n - 1].t) return k[n - 1].pose;
    int a = 0;
    while (a + 1 < n && k[a + 1].t <= t)
        a++;
    double u = (t - k[a].t) / (k[a + 1].t - k[a].t);
    mn_xform X;
    mn_quat qa = mn_quat_from_mat3(&k[a].pose.R), qb = mn_quat_from_mat3(&k[a + 1].pose.R);
    X.R = mn_quat_to_mat3(mn_quat_slerp(qa, qb, u));
    X.p = mn_vec3_lerp(k[a].pose.p, k[a + 1].pose.p, u);
    return X;
}

/* A glTF character's controller poses at time t of its animation (work: 24 x njoints). */
static void anim_poses(const mn_sim* s, double t, mn_xform* out) {
    const mn_gltf* g = &s->gltf;
    double* world = s->work;
    double* skin = s->work + 12 * (size_t)g->njoints;
    mn_gltf_sample(g, s->anim, t, world);
    mn_gltf_skin_matrices(g, world, skin);
    for (int j = 0; j < s->rig->nctrl; j++) {
        const double* S = skin + 12 * (size_t)s->ctrl_joint[j];
        mn_xform X;
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++)
                X.R.m[3 * r + c] = S[4 * r + c];
        }
        X.R = mn_mat3_orthonormalize(&X.R);
        X.p = mn_v3(S[3], S[7], S[11]);
        out[j] = mn_rig_pose_from_skin(s->rig, j, &X);
    }
}

/* A take's controller poses at time t: between its frames, positions linearly and
 * rotations along the shortest arc. */
static void take_poses(const mn_sim* s, double t, mn_xform* out) {
    int n = s->take_frames, m = s->rig->nctrl;
    double u = t / s->take_dt;
    if (s->loop && n > 1) u = fmod(fmod(u, n - 1) + (n - 1), n - 1);
    int k = u <= 0 ? 0 : u >= n - 1 ? n - 1 : (int)floor(u);
    double w = k >= n - 1 ? 0 : fmin(1, fmax(0, u - k));
    for (int j = 0; j < m; j++) {
        const mn_xform* a = s->take_pose + (size_t)k * m + j;
        if (w == 0) {
            out[j] = *a;
            continue;
        }
        const mn_xform* b = a + m;
        mn_quat qa = mn_quat_from_mat3(&a->R), qb = mn_quat_from_mat3(&b->R);
        out[j].R = mn_quat_to_mat3(mn_quat_slerp(qa, qb, w));
        out[j].p = mn_vec3_lerp(a->p, b->p, w);
    }
}

/* Where the drives put the driven controllers at time t (into pose; the others as they
 * are, or for a character where its animation or take puts them when all_ctrls). */
static void drive_poses(const mn_sim* s, double t, mn_xform* pose, int all_ctrls) {
    if (s->anim >= 0 || s->take_frames > 0) {
        mn_xform* tmp = s->scratch + s->rig->nctrl;
        double ts = t * s->speed;
        if (s->take_frames > 0) {
            take_poses(s, ts, tmp);
        } else {
            double dur = s->gltf.anims[s->anim].duration;
            if (s->loop && dur > 0) ts = fmod(ts, dur);
            anim_poses(s, ts, tmp);
        }
        for (int j = 0; j < s->rig->nctrl; j++)
            if (all_ctrls || s->driven[j]) pose[j] = tmp[j];
    }
    for (int p = 0; p < s->npaths; p++)
        pose[s->paths[p].ctrl] = path_at(&s->paths[p], t);
}

mn_status mn_sim_step(mn_sim* s, int f, mn_coupled_result* r) {
    if (!s || f < 1) return MN_ERR_ARG;
    mn_xform* target = s->scratch;
    memcpy(target, mn_coupled_pose(s->coupled), (size_t)s->rig->nctrl * sizeof(mn_xform));
    drive_poses(s, f * s->dt, target, 0);
    for (int j = 0; j < s->rig->nctrl; j++)
        if (s->driven[j]) mn_coupled_drive(s->coupled, j, &target[j]);
    return mn_coupled_step(s->coupled, s->dt, r);
}

void mn_sim_mesh_now(const mn_sim* s, double* out) {
    if (s->lattice)
        mn_lattice_surface(s->lattice, s->body->x, out);
    else
        memcpy(out, s->body->x, (size_t)s->mesh.nverts * 3 * sizeof(double));
}

/* ---- reading ----------------------------------------------------------------------------- */

static const char* const root_keys[] = {"mesh",  "body",       "controllers", "weights", "driven",
                                        "drive", "simulation", "coupling",    NULL};
static const char* const body_keys[] = {"kind",
                                        "resolution",
                                        "density",
                                        "mass",
                                        "edge_compliance",
                                        "element_compliance",
                                        "volume_compliance",
                                        "damping",
                                        NULL};
static const char* const ctrl_keys[] = {"name",   "kind",     "pivot", "tail",
                                        "parent", "attached", NULL};
static const char* const weight_keys[] = {"influences", "falloff", NULL};
static const char* const drive_keys[] = {"animation", "take", "loop", "speed", "paths", NULL};
static const char* const path_keys[] = {"loop", "keys", NULL};
static const char* const key_keys[] = {"t", "p", "r", "angle", NULL};
static const char* const sim_keys[] = {"dt", "frames", "substeps", "gravity", "ground", NULL};
static const char* const coupling_keys[] = {
    "enabled", "compliance_driven", "compliance_free", "driven_rotation", "fit_iters", NULL};

static int has_suffix(const char* s, const char* suf) {
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcasecmp(s + n - k, suf) == 0;
}

/* A file's bytes (the mesh's, a take's): beneath the scene's folder (untrusted), or by its
 * path. what names it in messages. */
static mn_status read_bytes(ctx* x, const char* what, const char* mesh, const char* base_dir,
                            int trusted, char** data, size_t* len, char* name, size_t cap) {
    mn_error e;
    mn_status st;
    if (!trusted) {
        char* rel = NULL;
        st = mn_uri_relative(mesh, &rel, &e);
        if (st == MN_OK) st = mn_read_file_beneath(base_dir, mesh, 0, data, len, &e);
        if (st == MN_OK) snprintf(name, cap, "%s%s%s", base_dir, base_dir[0] ? "/" : "", rel);
        free(rel);
    } else {
        if (mesh[0] == '/' || !base_dir[0])
            snprintf(name, cap, "%s", mesh);
        else
            snprintf(name, cap, "%s/%s", base_dir, mesh);
        st = mn_read_file(name, data, len, &e);
    }
    if (st != MN_OK) return fail(x, st, "cannot read the %s \"%s\": %s", what, mesh, e.message);
    return MN_OK;
}

/* Distance from point p to controller j (a bone's segment, else its pivot). */
static double ctrl_distance(const mn_rig* rig, int j, mn_vec3 p) {
    mn_vec3 a = rig->ctrl_pivot[j];
    if (rig->ctrl_kind[j] != MN_CTRL_BONE) return mn_vec3_dist(p, a);
    mn_vec3 d = mn_vec3_sub(rig->ctrl_tail[j], a);
    double dd = mn_vec3_dot(d, d);
    double u = dd > 0 ? mn_vec3_dot(mn_vec3_sub(p, a), d) / dd : 0;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    return mn_vec3_dist(p, mn_vec3_add(a, mn_vec3_scale(d, u)));
}

/* Automatic weights: the k nearest controllers, w ~ 1 / (d + eps)^falloff, normalised
 * (inverse-distance weights, Shepard 1968, over each vertex's nearest controllers). */
static mn_status auto_weights(ctx* x, mn_rig* rig, int k, double falloff) {
    int n = rig->nverts, m = rig->nctrl;
    if (k > m) k = m;
    int* idx = malloc((size_t)n * k * sizeof(int));
    double* w = malloc((size_t)n * k * sizeof(double));
    double* d = malloc((size_t)m * sizeof(double));
    if (!idx || !w || !d) {
        free(idx);
        free(w);
        free(d);
        return fail(x, MN_ERR_NOMEM, "out of memory");
    }
    double eps = 1e-3 * mn_rig_bbox_diagonal(rig);
    for (int i = 0; i < n; i++) {
        const double* r = rig->rest + 3 * (size_t)i;
        mn_vec3 p = mn_v3(r[0], r[1], r[2]);
        for (int j = 0; j < m; j++)
            d[j] = ctrl_distance(rig, j, p);
        for (int s = 0; s < k; s++) { /* the s-th nearest */
            int best = -1;
            for (int j = 0; j < m; j++) {
                int taken = 0;
                for (int q = 0; q < s && !taken; q++)
                    taken = idx[(size_t)i * k + q] == j;
                if (!taken && (best < 0 || d[j] < d[best])) best = j;
            }
            idx[(size_t)i * k + s] = best;
            w[(size_t)i * k + s] = 1.0 / pow(d[best] + eps, falloff);
        }
    }
    mn_error e;
    mn_status st = mn_rig_set_weights(rig, k, idx, w, NULL, &e);
    free(idx);
    free(w);
    free(d);
    if (st != MN_OK) return fail(x, st, "%s", e.message);
    return MN_OK;
}

typedef struct doc {
    int max_nodes;
    char mesh[512];
    const cJSON* mesh_obj; /* a generated mesh */
    mn_sim_body_kind kind;
    int kind_given;
    int resolution;
    double density, mass;
    mn_softbody_options so;
    int influences;
    double falloff;
    mn_coupling_options co;
} doc;

static mn_status read_body(ctx* x, const cJSON* b, doc* d) {
    mn_status st;
    push_key(x, "body");
    if (!cJSON_IsObject(b)) return fail(x, MN_ERR_PARSE, "expected an object");
    if ((st = check_keys(x, b, body_keys)) != MN_OK) return st;
    char kind[16];
    int present = 0;
    if ((st = get_str(x, b, "kind", kind, sizeof kind, 0, &present)) != MN_OK) return st;
    if (present) {
        d->kind_given = 1;
        if (!strcmp(kind, "lattice"))
            d->kind = MN_SIM_LATTICE;
        else if (!strcmp(kind, "surface"))
            d->kind = MN_SIM_SURFACE;
        else if (!strcmp(kind, "plane"))
            d->kind = MN_SIM_PLANE;
        else {
            push_key(x, "kind");
            return fail(x, MN_ERR_PARSE, "\"%s\": expected lattice, surface or plane", kind);
        }
    }
    if ((st = get_int(x, b, "resolution", &d->resolution, 1, 256)) != MN_OK ||
        (st = get_num(x, b, "density", &d->density, 1e-9, 1e9)) != MN_OK ||
        (st = get_num(x, b, "mass", &d->mass, 1e-9, 1e9)) != MN_OK ||
        (st = get_num(x, b, "edge_compliance", &d->so.edge_compliance, 0, 1e9)) != MN_OK ||
        (st = get_num(x, b, "element_compliance", &d->so.element_compliance, 0, 1e9)) != MN_OK ||
        (st = get_num(x, b, "volume_compliance", &d->so.volume_compliance, 0, 1e9)) != MN_OK ||
        (st = get_num(x, b, "damping", &d->so.damping, 0, 1e6)) != MN_OK)
        return st;
    pop(x);
    return MN_OK;
}

static mn_status read_simulation(ctx* x, const cJSON* o, mn_sim* s, doc* d) {
    mn_status st;
    push_key(x, "simulation");
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    if ((st = check_keys(x, o, sim_keys)) != MN_OK) return st;
    if ((st = get_num(x, o, "dt", &s->dt, 1e-6, 1)) != MN_OK ||
        (st = get_int(x, o, "frames", &s->frames, 1, MN_SIM_MAX_FRAMES)) != MN_OK ||
        (st = get_int(x, o, "substeps", &d->so.substeps, 1, 1000)) != MN_OK ||
        (st = get_v3(x, o, "gravity", &d->so.gravity, NULL)) != MN_OK)
        return st;
    if (cJSON_GetObjectItemCaseSensitive(o, "ground")) {
        d->so.ground = 0;
        if ((st = get_num(x, o, "ground", &d->so.ground, -1e9, 1e9)) != MN_OK) return st;
    }
    pop(x);
    return MN_OK;
}

static mn_status read_coupling(ctx* x, const cJSON* o, doc* d) {
    mn_status st;
    push_key(x, "coupling");
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    if ((st = check_keys(x, o, coupling_keys)) != MN_OK) return st;
    if ((st = get_bool(x, o, "enabled", &d->co.enabled)) != MN_OK ||
        (st = get_num(x, o, "compliance_driven", &d->co.compliance_driven, 0, 1e9)) != MN_OK ||
        (st = get_num(x, o, "compliance_free", &d->co.compliance_free, -1, 1e9)) != MN_OK ||
        (st = get_bool(x, o, "driven_rotation", &d->co.driven_rotation)) != MN_OK ||
        (st = get_int(x, o, "fit_iters", &d->co.fit.max_iters, 1, 1000)) != MN_OK)
        return st;
    pop(x);
    return MN_OK;
}

/* The controllers of an OBJ mesh's rig (pivots of 2 or 3 numbers in the plane). */
static mn_status read_controllers(ctx* x, const cJSON* a, mn_rig* rig) {
    int n;
    mn_status st = enter_array(x, a, "controllers", 4096, "controllers", &n);
    if (st != MN_OK) return st;
    if (n == 0) return fail(x, MN_ERR_PARSE, "no controllers");
    int i = 0;
    const cJSON* c;
    cJSON_ArrayForEach(c, a) {
        push_index(x, i);
        if (!cJSON_IsObject(c)) return fail(x, MN_ERR_PARSE, "expected an object");
        if ((st = check_keys(x, c, ctrl_keys)) != MN_OK) return st;
        char name[128], kind[16] = "point", parent[128];
        int has_parent = 0, has_tail = 0, attached = 1;
        if ((st = get_str(x, c, "name", name, sizeof name, 1, NULL)) != MN_OK ||
            (st = get_str(x, c, "kind", kind, sizeof kind, 0, NULL)) != MN_OK ||
            (st = get_str(x, c, "parent", parent, sizeof parent, 0, &has_parent)) != MN_OK ||
            (st = get_bool(x, c, "attached", &attached)) != MN_OK)
            return st;
        mn_ctrl_def d = mn_ctrl_default();
        d.name = name;
        double v[3] = {0, 0, 0};
        for (int pass = 0; pass < 2; pass++) {
            const char* key = pass ? "tail" : "pivot";
            const cJSON* it = cJSON_GetObjectItemCaseSensitive(c, key);
            int dim = it && cJSON_IsArray(it) && cJSON_GetArraySize(it) == 2 ? 2 : 3;
            int present = 0;
            v[2] = 0;
            if ((st = get_vec(x, c, key, v, dim, &present)) != MN_OK) return st;
            if (!present && !pass) return fail(x, MN_ERR_PARSE, "missing member \"pivot\"");
            if (present) {
                if (pass)
                    d.tail = mn_v3(v[0], v[1], v[2]), has_tail = 1;
                else
                    d.pivot = mn_v3(v[0], v[1], v[2]);
            }
        }
        if (!strcmp(kind, "bone"))
            d.kind = MN_CTRL_BONE;
        else if (!strcmp(kind, "cage"))
            d.kind = MN_CTRL_CAGE;
        else if (strcmp(kind, "point")) {
            push_key(x, "kind");
            return fail(x, MN_ERR_PARSE, "\"%s\": expected point, bone or cage", kind);
        }
        if (d.kind == MN_CTRL_BONE && !has_tail)
            return fail(x, MN_ERR_PARSE, "a bone needs a \"tail\"");
        if (has_parent) {
            d.parent = mn_rig_find_ctrl(rig, parent);
            if (d.parent < 0) {
                push_key(x, "parent");
                return fail(x, MN_ERR_NOTFOUND,
                            "no controller \"%s\" before this one (parents come first)", parent);
            }
            d.attached = attached;
        }
        mn_error e;
        if (mn_rig_add_ctrl(rig, &d, &e) < 0) return fail(x, MN_ERR_PARSE, "%s", e.message);
        pop(x);
        i++;
    }
    pop(x);
    return MN_OK;
}

/* "paths": {"NAME": {"loop": bool, "keys": [{"t", "p", "r" | "angle"}]}} */
static mn_status read_paths(ctx* x, const cJSON* o, mn_sim* s, int* total_keys) {
    push_key(x, "paths");
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    int n = cJSON_GetArraySize(o);
    s->paths = calloc((size_t)(n > 0 ? n : 1), sizeof *s->paths);
    if (!s->paths) return fail(x, MN_ERR_NOMEM, "out of memory");
    const cJSON* it;
    mn_status st;
    cJSON_ArrayForEach(it, o) {
        push_key(x, it->string);
        int j = mn_rig_find_ctrl(s->rig, it->string);
        if (j < 0) return fail(x, MN_ERR_NOTFOUND, "no controller \"%s\"", it->string);
        for (int p = 0; p < s->npaths; p++)
            if (s->paths[p].ctrl == j) return fail(x, MN_ERR_PARSE, "a second path for it");
        if (!cJSON_IsObject(it)) return fail(x, MN_ERR_PARSE, "expected an object");
        if ((st = check_keys(x, it, path_keys)) != MN_OK) return st;
        mn_sim_path* P = &s->paths[s->npaths++];
        P->ctrl = j;
        if ((st = get_bool(x, it, "loop", &P->loop)) != MN_OK) return st;
        const cJSON* keys = cJSON_GetObjectItemCaseSensitive(it, "keys");
        if (!keys) return fail(x, MN_ERR_PARSE, "missing member \"keys\"");
        int nk;
        if ((st = enter_array(x, keys, "keys", MN_SIM_MAX_KEYS - *total_keys, "keys", &nk)) !=
            MN_OK)
            return st;
        if (nk == 0) return fail(x, MN_ERR_PARSE, "no keys");
        *total_keys += nk;
        P->keys = malloc((size_t)nk * sizeof *P->keys);
        if (!P->keys) return fail(x, MN_ERR_NOMEM, "out of memory");
        int k = 0;
        const cJSON* key;
        cJSON_ArrayForEach(key, keys) {
            push_index(x, k);
            if (!cJSON_IsObject(key)) return fail(x, MN_ERR_PARSE, "expected an object");
            if ((st = check_keys(x, key, key_keys)) != MN_OK) return st;
            mn_sim_key* K = &P->keys[k];
            K->t = -1;
            if (!cJSON_GetObjectItemCaseSensitive(key, "t"))
                return fail(x, MN_ERR_PARSE, "missing member \"t\"");
            if ((st = get_num(x, key, "t", &K->t, 0, 1e9)) != MN_OK) return st;
            if (k > 0 && !(K->t > P->keys[k - 1].t)) {
                push_key(x, "t");
                return fail(x, MN_ERR_PARSE, "key times must increase");
            }
            K->pose.R = mn_mat3_identity();
            K->pose.p = s->rig->ctrl_pivot[j];
            const cJSON* pv = cJSON_GetObjectItemCaseSensitive(key, "p");
            double v[3] = {K->pose.p.x, K->pose.p.y, K->pose.p.z};
            int dim = pv && cJSON_IsArray(pv) && cJSON_GetArraySize(pv) == 2 ? 2 : 3;
            if ((st = get_vec(x, key, "p", v, dim, NULL)) != MN_OK) return st;
            K->pose.p = mn_v3(v[0], v[1], dim == 2 ? 0 : v[2]);
            double q[4];
            int has_r = 0, has_a = 0;
            if ((st = get_quat(x, key, "r", q, &has_r)) != MN_OK) return st;
            double angle = 0;
            has_a = cJSON_GetObjectItemCaseSensitive(key, "angle") != NULL;
            if ((st = get_num(x, key, "angle", &angle, -1e6, 1e6)) != MN_OK) return st;
            if (has_r && has_a) return fail(x, MN_ERR_PARSE, "both \"r\" and \"angle\"");
            if (has_r)
                K->pose.R = mn_quat_to_mat3(mn_quat_normalize(mn_q4(q[0], q[1], q[2], q[3])));
            if (has_a) K->pose.R = mn_mat3_axis_angle(mn_v3(0, 0, 1), angle);
            if (s->rig->dim == 2 && has_r &&
                (fabs(K->pose.R.m[2]) > 1e-12 || fabs(K->pose.R.m[5]) > 1e-12)) {
                push_key(x, "r");
                return fail(x, MN_ERR_PARSE, "a plane scene turns about z only");
            }
            pop(x);
            k++;
        }
        P->nkeys = nk;
        pop(x); /* keys */
        pop(x); /* name */
    }
    pop(x);
    return MN_OK;
}

/* "take": a figure file with motion (a BVH take), retargeted onto the character
 * (mn_retarget: the rig tables pair the joints, the feet are pinned where the take's are);
 * each of its frames becomes the controllers' poses S_c = F_j(q) F_j(q0)^-1 S_j(rest): the
 * joint's motion from rest applied to its rest skinning matrix. */
static mn_status read_take(ctx* x, const char* file, const char* base_dir, int trusted, mn_sim* s) {
    push_key(x, "take");
    if (s->gltf.nverts == 0) return fail(x, MN_ERR_PARSE, "a take drives a glTF character");
    char* data = NULL;
    size_t len = 0;
    char name[1200];
    mn_status st = read_bytes(x, "take", file, base_dir, trusted, &data, &len, name, sizeof name);
    if (st != MN_OK) return st;
    mn_error e;
    mn_model* src = NULL;
    mn_motion mo = {0};
    mn_retarget* rt = NULL;
    mn_data* dd = NULL;
    mn_xform* F0 = NULL;
    int* mj = NULL;
    double *q = NULL, *rest = NULL, *srest = NULL;
    const mn_model* M = s->model;
    int m = s->rig->nctrl, nj = s->gltf.njoints;
    st = mn_figure_read_mem(data, len, name, &src, &mo, NULL, &e);
    free(data);
    if (st == MN_OK && mo.nframes < 2)
        st = mn_error_set(&e, MN_ERR_PARSE, name, 0, "motion", "no motion in the take");
    if (st == MN_OK && (double)mo.nframes * m > 1e8)
        st = mn_error_set(&e, MN_ERR_PARSE, name, 0, "motion", "%d frames: too long a take",
                          mo.nframes);
    if (st == MN_OK) {
        mn_retarget_options ro = mn_retarget_options_default();
        rt = mn_retarget_create(src, M, NULL, &ro, &e);
        if (!rt) st = e.status;
    }
    if (st == MN_OK) st = mn_retarget_set_take(rt, mo.q, mo.nframes, mo.frame_time, &e);
    if (st == MN_OK) {
        q = malloc((size_t)M->nq * sizeof(double));
        rest = malloc((size_t)nj * 12 * sizeof(double));
        srest = malloc((size_t)nj * 12 * sizeof(double));
        s->take_pose = malloc((size_t)mo.nframes * m * sizeof(mn_xform));
        F0 = malloc((size_t)M->njoint * sizeof(mn_xform));
        mj = malloc((size_t)m * sizeof(int));
        dd = mn_data_create(M, 0);
        if (!q || !rest || !srest || !s->take_pose || !F0 || !mj || !dd)
            st = mn_error_set(&e, MN_ERR_NOMEM, name, 0, "take", "out of memory");
    }
    for (int c = 0; st == MN_OK && c < m; c++) {
        mj[c] = mn_model_find_joint(M, s->gltf.joint_name[s->ctrl_joint[c]]);
        if (mj[c] < 0)
            st = mn_error_set(&e, MN_ERR_NOTFOUND, name, 0, "take", "no joint for %s",
                              s->rig->ctrl_name[c]);
    }
    if (st == MN_OK) {
        mn_gltf_sample(&s->gltf, -1, -1, rest);
        mn_gltf_skin_matrices(&s->gltf, rest, srest);
        memcpy(dd->q, M->q0, (size_t)M->nq * sizeof(double));
        mn_fk(M, dd);
        memcpy(F0, dd->xf, (size_t)M->njoint * sizeof(mn_xform));
    }
    for (int f = 0; st == MN_OK && f < mo.nframes; f++) {
        mn_retarget_frame(rt, f, MN_RETARGET_MAPPED, q);
        memcpy(dd->q, q, (size_t)M->nq * sizeof(double));
        mn_fk(M, dd);
        for (int c = 0; c < m; c++) {
            const mn_xform *F = dd->xf + mj[c], *G = F0 + mj[c];
            /* A = F G^-1 (rigid), then S = A S_rest (affine) */
            mn_mat3 GT = mn_mat3_transpose(&G->R);
            mn_mat3 AR = mn_mat3_mul(&F->R, &GT);
            mn_vec3 Ap = mn_vec3_sub(F->p, mn_mat3_mulv(&AR, G->p));
            const double* Sr = srest + 12 * (size_t)s->ctrl_joint[c];
            double At[3] = {Ap.x, Ap.y, Ap.z};
            mn_xform S;
            double Sp[3];
            for (int r = 0; r < 3; r++) {
                for (int col = 0; col < 4; col++) {
                    double v = col == 3 ? At[r] : 0;
                    for (int k = 0; k < 3; k++)
                        v += AR.m[3 * r + k] * Sr[4 * k + col];
                    if (col < 3)
                        S.R.m[3 * r + col] = v;
                    else
                        Sp[r] = v;
                }
            }
            S.R = mn_mat3_orthonormalize(&S.R);
            S.p = mn_v3(Sp[0], Sp[1], Sp[2]);
            s->take_pose[(size_t)f * m + c] = mn_rig_pose_from_skin(s->rig, c, &S);
        }
    }
    if (st == MN_OK) {
        s->take_frames = mo.nframes;
        s->take_dt = mo.frame_time;
    }
    free(q);
    free(rest);
    free(srest);
    free(F0);
    free(mj);
    mn_data_destroy(dd);
    mn_retarget_destroy(rt);
    mn_motion_free(&mo);
    mn_model_destroy(src);
    if (st != MN_OK) return fail(x, st, "%s", e.message);
    pop(x);
    return MN_OK;
}

/* "drive": {"animation": name or index, "take", "loop", "speed", "paths"}; paths make their
 * controllers driven. */
static mn_status read_drive(ctx* x, const cJSON* o, mn_sim* s, const char* base_dir, int trusted) {
    push_key(x, "drive");
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    mn_status st = check_keys(x, o, drive_keys);
    if (st != MN_OK) return st;
    const cJSON* a = cJSON_GetObjectItemCaseSensitive(o, "animation");
    if (a) {
        push_key(x, "animation");
        if (s->gltf.nverts == 0) return fail(x, MN_ERR_PARSE, "only a glTF mesh has animations");
        if (cJSON_IsString(a))
            s->anim = mn_gltf_find_anim(&s->gltf, a->valuestring);
        else if (cJSON_IsNumber(a) && a->valuedouble == floor(a->valuedouble) &&
                 a->valuedouble >= 0 && a->valuedouble < s->gltf.nanims)
            s->anim = (int)a->valuedouble;
        if (s->anim < 0)
            return fail(x, MN_ERR_NOTFOUND, "no such animation (the file has %d)", s->gltf.nanims);
        pop(x);
    }
    if ((st = get_num(x, o, "speed", &s->speed, 1e-6, 1e6)) != MN_OK ||
        (st = get_bool(x, o, "loop", &s->loop)) != MN_OK)
        return st;
    char take[512];
    int has_take = 0;
    if ((st = get_str(x, o, "take", take, sizeof take, 0, &has_take)) != MN_OK) return st;
    if (has_take && a) {
        push_key(x, "take");
        return fail(x, MN_ERR_PARSE, "both an animation and a take");
    }
    if (has_take && (st = read_take(x, take, base_dir, trusted, s)) != MN_OK) return st;
    const cJSON* p = cJSON_GetObjectItemCaseSensitive(o, "paths");
    int total = 0;
    if (p && (st = read_paths(x, p, s, &total)) != MN_OK) return st;
    for (int k = 0; k < s->npaths; k++)
        s->driven[s->paths[k].ctrl] = 1;
    pop(x);
    return MN_OK;
}

/* "driven": ["NAME", ...] or "all". */
static mn_status read_driven(ctx* x, const cJSON* o, mn_sim* s) {
    if (cJSON_IsString(o) && !strcmp(o->valuestring, "all")) {
        memset(s->driven, 1, (size_t)s->rig->nctrl);
        return MN_OK;
    }
    int n;
    mn_status st = enter_array(x, o, "driven", s->rig->nctrl, "controller names, or \"all\"", &n);
    if (st != MN_OK) return st;
    int i = 0;
    const cJSON* it;
    cJSON_ArrayForEach(it, o) {
        push_index(x, i++);
        if (!cJSON_IsString(it)) return fail(x, MN_ERR_PARSE, "expected a controller's name");
        int j = mn_rig_find_ctrl(s->rig, it->valuestring);
        if (j < 0) return fail(x, MN_ERR_NOTFOUND, "no controller \"%s\"", it->valuestring);
        s->driven[j] = 1;
        pop(x);
    }
    pop(x);
    return MN_OK;
}

static const char* const tube_keys[] = {"axis", "length", "radius", "rings", "segments", NULL};

/* "mesh": {"tube": {...}}: a closed tube from the origin along +x, +y or +z (or from length
 * down to 0 with "axis": "-y"), rings of segments vertices and a centre on each cap,
 * outward triangles. */
static mn_status tube_mesh(ctx* x, const cJSON* o, int max_nodes, mn_mesh* mesh) {
    push_key(x, "tube");
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    mn_status st = check_keys(x, o, tube_keys);
    if (st != MN_OK) return st;
    char axis[4] = "y";
    double len = 1, rad = 0.1;
    int nr = 10, ns = 16;
    if ((st = get_str(x, o, "axis", axis, sizeof axis, 0, NULL)) != MN_OK ||
        (st = get_num(x, o, "length", &len, 1e-9, 1e9)) != MN_OK ||
        (st = get_num(x, o, "radius", &rad, 1e-9, 1e9)) != MN_OK ||
        (st = get_int(x, o, "rings", &nr, 2, 1000)) != MN_OK ||
        (st = get_int(x, o, "segments", &ns, 3, 1000)) != MN_OK)
        return st;
    int ax = !strcmp(axis, "x")                          ? 0
             : !strcmp(axis, "y") || !strcmp(axis, "-y") ? 1
             : !strcmp(axis, "z")                        ? 2
                                                         : -1;
    if (ax < 0) {
        push_key(x, "axis");
        return fail(x, MN_ERR_PARSE, "\"%s\": expected x, y, -y or z", axis);
    }
    if ((double)nr * ns + 2 > max_nodes)
        return fail(x, MN_ERR_PARSE, "%d rings of %d segments: more than %d vertices", nr, ns,
                    max_nodes);
    int n = nr * ns + 2, nt = 2 * ns * (nr - 1) + 2 * ns;
    mesh->pos = malloc((size_t)n * 3 * sizeof(double));
    mesh->tris = malloc((size_t)nt * 3 * sizeof(int));
    if (!mesh->pos || !mesh->tris) return fail(x, MN_ERR_NOMEM, "out of memory");
    mesh->nverts = n;
    mesh->ntris = nt;
    int a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
    for (int r = 0; r < nr; r++)
        for (int s = 0; s < ns; s++) {
            double a = 2 * MN_PI * s / ns, u = len * r / (nr - 1);
            double* p = mesh->pos + 3 * (r * ns + s);
            p[ax] = u;
            p[a1] = rad * cos(a);
            p[a2] = rad * sin(a);
        }
    int c0 = nr * ns, c1 = c0 + 1;
    for (int k = 0; k < 3; k++)
        mesh->pos[3 * c0 + k] = mesh->pos[3 * c1 + k] = 0;
    mesh->pos[3 * c1 + ax] = len;
    int t = 0;
    for (int r = 0; r + 1 < nr; r++)
        for (int s = 0; s < ns; s++) {
            int a = r * ns + s, b = r * ns + (s + 1) % ns, c = a + ns, d = b + ns;
            int* T = mesh->tris + 3 * t;
            T[0] = a, T[1] = d, T[2] = b;
            T[3] = a, T[4] = c, T[5] = d;
            t += 2;
        }
    for (int s = 0; s < ns; s++) {
        int* T = mesh->tris + 3 * t;
        T[0] = c0, T[1] = s, T[2] = (s + 1) % ns;
        T[3] = c1, T[4] = (nr - 1) * ns + (s + 1) % ns, T[5] = (nr - 1) * ns + s;
        t += 2;
    }
    if (!strcmp(axis, "-y")) /* hanging: from length at the top down to 0 */
        for (int i = 0; i < n; i++)
            mesh->pos[3 * i + 1] = len - mesh->pos[3 * i + 1];
    /* outward winding: a positive enclosed volume */
    double v = 0;
    for (int k = 0; k < nt; k++) {
        const double *A = mesh->pos + 3 * mesh->tris[3 * k],
                     *B = mesh->pos + 3 * mesh->tris[3 * k + 1],
                     *C = mesh->pos + 3 * mesh->tris[3 * k + 2];
        v += A[0] * (B[1] * C[2] - B[2] * C[1]) + A[1] * (B[2] * C[0] - B[0] * C[2]) +
             A[2] * (B[0] * C[1] - B[1] * C[0]);
    }
    if (v < 0)
        for (int k = 0; k < nt; k++) {
            int tmp = mesh->tris[3 * k + 1];
            mesh->tris[3 * k + 1] = mesh->tris[3 * k + 2];
            mesh->tris[3 * k + 2] = tmp;
        }
    pop(x);
    return MN_OK;
}

/* The mesh: an OBJ (its rig from the document) or a skinned glTF (its rig from its skin). */
static mn_status load_mesh(ctx* x, mn_sim* s, doc* d, const char* base_dir, int trusted,
                           mn_warnings* warn) {
    char* data = NULL;
    size_t len = 0;
    char name[1200];
    push_key(x, "mesh");
    mn_status st;
    if (d->mesh_obj) {
        if (!cJSON_IsObject(d->mesh_obj) || cJSON_GetArraySize(d->mesh_obj) != 1 ||
            !cJSON_GetObjectItemCaseSensitive(d->mesh_obj, "tube"))
            return fail(x, MN_ERR_PARSE, "a file name, or {\"tube\": {...}}");
        if ((st = tube_mesh(x, cJSON_GetObjectItemCaseSensitive(d->mesh_obj, "tube"), d->max_nodes,
                            &s->mesh)) != MN_OK)
            return st;
        pop(x);
        return MN_OK;
    }
    int obj = has_suffix(d->mesh, ".obj");
    if (!obj && !has_suffix(d->mesh, ".glb") && !has_suffix(d->mesh, ".gltf"))
        return fail(x, MN_ERR_UNSUPPORTED, "\"%s\": an .obj, .gltf or .glb mesh", d->mesh);
    st = read_bytes(x, "mesh", d->mesh, base_dir, trusted, &data, &len, name, sizeof name);
    if (st != MN_OK) return st;
    mn_error e;
    if (obj) {
        st = mn_obj_read_mem(data, len, name, &s->mesh, warn, &e);
    } else {
        st = mn_gltf_read_mem(data, len, name, &s->gltf, warn, &e);
        if (st == MN_OK && s->gltf.nverts == 0) {
            free(data);
            return fail(x, MN_ERR_PARSE, "\"%s\" has no skinned mesh", d->mesh);
        }
    }
    free(data);
    if (st != MN_OK) return fail(x, st, "%s", e.message);
    if (s->gltf.nverts > 0) {
        mn_gltf* g = &s->gltf;
        s->mesh.nverts = g->nverts;
        s->mesh.ntris = g->ntris;
        s->mesh.pos = malloc((size_t)g->nverts * 3 * sizeof(double));
        s->mesh.tris = malloc((size_t)(g->ntris > 0 ? g->ntris : 1) * 3 * sizeof(int));
        if (!s->mesh.pos || !s->mesh.tris) return fail(x, MN_ERR_NOMEM, "out of memory");
        memcpy(s->mesh.pos, g->rest_pos, (size_t)g->nverts * 3 * sizeof(double));
        memcpy(s->mesh.tris, g->tris, (size_t)g->ntris * 3 * sizeof(int));
        if (mn_rig_from_gltf(g, &s->mesh_rig, &s->ctrl_joint, &e) != MN_OK ||
            !(s->model = mn_gltf_model(g, &e)))
            return fail(x, e.status, "%s", e.message);
        /* the controllers hang from one another as the joints do, so that free ones keep
         * their places on their parents (and the baked skeleton is the character's) */
        if (mn_rig_set_hierarchy(s->mesh_rig, s->model, &e) != MN_OK)
            for (int j = 0; j < s->mesh_rig->nctrl; j++)
                s->mesh_rig->ctrl_parent[j] = -1, s->mesh_rig->ctrl_attached[j] = 0;
    }
    if (s->mesh.nverts > d->max_nodes)
        return fail(x, MN_ERR_PARSE, "%d vertices: at most %d", s->mesh.nverts, d->max_nodes);
    if (s->mesh.ntris == 0) return fail(x, MN_ERR_PARSE, "the mesh has no triangles");
    pop(x);
    return MN_OK;
}

/* The body and the rig over its vertices. */
static mn_status build_body(ctx* x, mn_sim* s, doc* d) {
    mn_error e;
    int n = s->mesh.nverts;
    double* mass = NULL;
    mn_status st = MN_OK;
    push_key(x, "body");
    if (s->kind == MN_SIM_LATTICE) {
        /* the lattice's box, refused before the work when it would hold more than eight
         * cubes per allowed node */
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int i = 0; i < n; i++)
            for (int a = 0; a < 3; a++) {
                lo[a] = fmin(lo[a], s->mesh.pos[3 * i + a]);
                hi[a] = fmax(hi[a], s->mesh.pos[3 * i + a]);
            }
        double ext = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2])), cells = 1;
        for (int a = 0; a < 3; a++)
            cells *= fmax(1, ceil((hi[a] - lo[a]) / ext * s->resolution));
        if (cells > 8.0 * d->max_nodes) {
            push_key(x, "resolution");
            return fail(x, MN_ERR_PARSE, "%.0f cubes in the lattice's box: at most %.0f", cells,
                        8.0 * d->max_nodes);
        }
        s->lattice =
            mn_lattice_create(n, s->mesh.pos, s->mesh.ntris, s->mesh.tris, s->resolution, &e);
        if (!s->lattice) return fail(x, e.status, "%s", e.message);
        const mn_lattice* L = s->lattice;
        if (L->nnodes > d->max_nodes || L->ntets > 6.0 * d->max_nodes)
            return fail(x, MN_ERR_PARSE,
                        "%d nodes and %d tetrahedra: at most %d and %.0f (a lower resolution)",
                        L->nnodes, L->ntets, d->max_nodes, 6.0 * d->max_nodes);
        mass = malloc((size_t)L->nnodes * sizeof(double));
        if (!mass) return fail(x, MN_ERR_NOMEM, "out of memory");
        mn_softbody_element_masses(L->nnodes, L->nodes, 4, L->ntets, L->tets, d->density, mass,
                                   NULL);
        s->body = mn_softbody_create(L->nnodes, L->nodes, 0, NULL, mass, &d->so, &e);
        if (s->body) st = mn_softbody_add_elements(s->body, 4, L->ntets, L->tets, &e);
        if (s->body && st == MN_OK) s->rig = mn_lattice_rig(L, s->mesh_rig, mass, &e);
    } else if (s->kind == MN_SIM_SURFACE) {
        mass = malloc((size_t)n * sizeof(double));
        if (!mass) return fail(x, MN_ERR_NOMEM, "out of memory");
        for (int i = 0; i < n; i++)
            mass[i] = d->mass / n;
        s->body = mn_softbody_create(n, s->mesh.pos, s->mesh.ntris, s->mesh.tris, mass, &d->so, &e);
        s->rig = s->mesh_rig;
    } else {
        mass = malloc((size_t)n * sizeof(double));
        if (!mass) return fail(x, MN_ERR_NOMEM, "out of memory");
        st = mn_softbody_element_masses(n, s->mesh.pos, 3, s->mesh.ntris, s->mesh.tris, d->density,
                                        mass, &e);
        if (st == MN_OK) s->body = mn_softbody_create(n, s->mesh.pos, 0, NULL, mass, &d->so, &e);
        if (s->body) st = mn_softbody_add_elements(s->body, 3, s->mesh.ntris, s->mesh.tris, &e);
        s->rig = s->mesh_rig;
    }
    /* the fit weighs the vertices as the body does (a lattice rig has the nodes' masses) */
    if (s->body && s->rig == s->mesh_rig)
        memcpy(s->rig->mass, s->body->mass, (size_t)n * sizeof(double));
    free(mass);
    if (!s->body || st != MN_OK || !s->rig)
        return fail(x, e.status != MN_OK ? e.status : MN_ERR_ARG, "%s", e.message);
    pop(x);
    return MN_OK;
}

/* A rig over the mesh's vertices without weights, masses of the body when the body is the
 * mesh (plane: a 2D rig over x and y). */
static mn_status make_mesh_rig(ctx* x, mn_sim* s) {
    mn_error e;
    int n = s->mesh.nverts;
    if (s->kind == MN_SIM_PLANE) {
        double* p2 = malloc((size_t)n * 2 * sizeof(double));
        if (!p2) return fail(x, MN_ERR_NOMEM, "out of memory");
        for (int i = 0; i < n; i++)
            p2[2 * i] = s->mesh.pos[3 * i], p2[2 * i + 1] = s->mesh.pos[3 * i + 1];
        s->mesh_rig = mn_rig_create(2, n, p2, NULL, &e);
        free(p2);
    } else {
        s->mesh_rig = mn_rig_create(3, n, s->mesh.pos, NULL, &e);
    }
    if (!s->mesh_rig) return fail(x, e.status, "%s", e.message);
    return MN_OK;
}

static mn_status parse(ctx* x, const cJSON* root, const char* base_dir, int trusted, int max_nodes,
                       mn_sim* s, mn_warnings* warn) {
    if (!cJSON_IsObject(root)) return fail(x, MN_ERR_PARSE, "a scene document is a JSON object");
    mn_status st = check_keys(x, root, root_keys);
    if (st != MN_OK) return st;
    doc d;
    memset(&d, 0, sizeof d);
    d.max_nodes = max_nodes > 0 && max_nodes < MN_SIM_MAX_NODES ? max_nodes : MN_SIM_MAX_NODES;
    d.kind = MN_SIM_LATTICE;
    d.resolution = 12;
    d.density = 1000;
    d.mass = 1;
    d.so = mn_softbody_default();
    d.so.substeps = 5;
    d.influences = 2;
    d.falloff = 2;
    d.co = mn_coupling_default();
    s->dt = 1.0 / 60;
    s->frames = 120;
    s->anim = -1;
    s->speed = 1;
    const cJSON* mesh = cJSON_GetObjectItemCaseSensitive(root, "mesh");
    if (mesh && !cJSON_IsString(mesh))
        d.mesh_obj = mesh;
    else if ((st = get_str(x, root, "mesh", d.mesh, sizeof d.mesh, 1, NULL)) != MN_OK)
        return st;
    const cJSON* it;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "body")) && (st = read_body(x, it, &d)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "simulation")) &&
        (st = read_simulation(x, it, s, &d)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "coupling")) &&
        (st = read_coupling(x, it, &d)))
        return st;
    const cJSON* w = cJSON_GetObjectItemCaseSensitive(root, "weights");
    if (w) {
        push_key(x, "weights");
        if (!cJSON_IsObject(w)) return fail(x, MN_ERR_PARSE, "expected an object");
        if ((st = check_keys(x, w, weight_keys)) != MN_OK ||
            (st = get_int(x, w, "influences", &d.influences, 1, MN_SKIN_MAX_INFLUENCES)) != MN_OK ||
            (st = get_num(x, w, "falloff", &d.falloff, 0.1, 16)) != MN_OK)
            return st;
        pop(x);
    }
    if ((st = load_mesh(x, s, &d, base_dir, trusted, warn)) != MN_OK) return st;
    const cJSON* ctrls = cJSON_GetObjectItemCaseSensitive(root, "controllers");
    if (s->gltf.nverts > 0) {
        if (ctrls || w) {
            push_key(x, ctrls ? "controllers" : "weights");
            return fail(x, MN_ERR_PARSE, "a glTF mesh's controllers and weights are its skin's");
        }
        if (d.kind_given && d.kind == MN_SIM_PLANE) {
            push_key(x, "body");
            push_key(x, "kind");
            return fail(x, MN_ERR_PARSE, "a glTF character is not a plane scene");
        }
    } else {
        if (!ctrls) return fail(x, MN_ERR_PARSE, "missing member \"controllers\"");
        int flat = 1;
        for (int i = 0; i < s->mesh.nverts && flat; i++)
            flat = s->mesh.pos[3 * i + 2] == 0;
        if (!d.kind_given && flat) d.kind = MN_SIM_PLANE;
        if (d.kind == MN_SIM_PLANE && !flat) {
            push_key(x, "body");
            return fail(x, MN_ERR_PARSE, "a plane body needs a mesh with z = 0 everywhere");
        }
        s->kind = d.kind;
        if ((st = make_mesh_rig(x, s)) != MN_OK) return st;
        if ((st = read_controllers(x, ctrls, s->mesh_rig)) != MN_OK) return st;
        push_key(x, "weights");
        if ((st = auto_weights(x, s->mesh_rig, d.influences, d.falloff)) != MN_OK) return st;
        pop(x);
    }
    s->kind = d.kind;
    s->resolution = d.resolution;
    if (s->kind == MN_SIM_PLANE) d.so.gravity.z = 0;
    if ((st = build_body(x, s, &d)) != MN_OK) return st;
    s->driven = calloc((size_t)s->rig->nctrl, 1);
    s->work = malloc((24 * (size_t)s->gltf.njoints + 1) * sizeof(double));
    s->scratch = malloc(2 * (size_t)s->rig->nctrl * sizeof(mn_xform));
    if (!s->driven || !s->work || !s->scratch) return fail(x, MN_ERR_NOMEM, "out of memory");
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "driven")) && (st = read_driven(x, it, s)))
        return st;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "drive")) &&
        (st = read_drive(x, it, s, base_dir, trusted)))
        return st;
    if (s->anim < 0 && s->take_frames == 0 && s->gltf.nverts > 0)
        for (int j = 0; j < s->rig->nctrl; j++)
            if (s->driven[j]) {
                int has = 0;
                for (int p = 0; p < s->npaths; p++)
                    has |= s->paths[p].ctrl == j;
                if (!has) {
                    push_key(x, "driven");
                    return fail(
                        x, MN_ERR_PARSE,
                        "\"%s\" is driven by nothing: give drive.animation, a take or a path",
                        s->rig->ctrl_name[j]);
                }
            }
    mn_error e;
    s->coupled = mn_coupled_create(s->body, s->rig, s->driven, &d.co, &e);
    if (!s->coupled) return fail(x, e.status, "%s", e.message);
    /* at time 0: the controllers where their drives put them (a character's free ones where
     * its animation does), the body skinned there */
    mn_xform* pose = mn_coupled_pose(s->coupled);
    drive_poses(s, 0, pose, 1);
    for (int j = 0; j < s->rig->nctrl; j++)
        mn_coupled_drive(s->coupled, j, &pose[j]);
    int nb = s->body->nverts;
    double* xr = malloc((size_t)nb * 3 * sizeof(double));
    if (!xr) return fail(x, MN_ERR_NOMEM, "out of memory");
    mn_rig_deform(s->rig, pose, xr);
    for (int i = nb - 1; i >= 0; i--)
        for (int c = 2; c >= 0; c--)
            s->body->x[3 * i + c] = c < s->rig->dim ? xr[s->rig->dim * i + c] : 0;
    memcpy(s->body->pin_target, s->body->x, (size_t)nb * 3 * sizeof(double));
    free(xr);
    return MN_OK;
}

typedef struct read_args {
    const mn_sim_read_options* opt;
    mn_sim** out;
    mn_warnings* warn;
} read_args;

static mn_status read_text(const char* text, size_t len, const char* name, void* args,
                           mn_error* err) {
    read_args* a = args;
    *a->out = NULL;
    cJSON* root = parse_json(text, len, name, err);
    if (!root) return MN_ERR_PARSE;
    mn_sim* s = calloc(1, sizeof *s);
    if (!s) {
        cJSON_Delete(root);
        return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory");
    }
    char base[1024];
    snprintf(base, sizeof base, "%s", name);
    char* slash = strrchr(base, '/');
    if (slash)
        *slash = 0;
    else
        base[0] = 0;
    ctx x = {name, text, len, {{0}}, 0, err, "scene", NULL};
    mn_status st = parse(&x, root, base, a->opt && a->opt->trusted, a->opt ? a->opt->max_nodes : 0,
                         s, a->warn);
    cJSON_Delete(root);
    if (st != MN_OK) {
        mn_sim_destroy(s);
        return st;
    }
    *a->out = s;
    return MN_OK;
}

mn_status mn_sim_read(const char* path, const mn_sim_read_options* opt, mn_sim** out,
                      mn_warnings* warn, mn_error* err) {
    if (!path || !out) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    read_args a = {opt, out, warn};
    return mn_io_read_path(path, read_text, &a, err);
}

mn_status mn_sim_read_mem(const char* text, size_t len, const char* name,
                          const mn_sim_read_options* opt, mn_sim** out, mn_warnings* warn,
                          mn_error* err) {
    if (!text || !out) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    read_args a = {opt, out, warn};
    return read_text(text, len, name ? name : "scene", &a, err);
}

/* ---- the baked animation ----------------------------------------------------------------- */

static void aff_of(const mn_xform* X, double A[12]) {
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            A[4 * r + c] = X->R.m[3 * r + c];
    }
    A[3] = X->p.x, A[7] = X->p.y, A[11] = X->p.z;
}

static void aff_mul(const double* A, const double* B, double* C) {
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 4; c++) {
            double v = c == 3 ? A[4 * r + 3] : 0;
            for (int k = 0; k < 3; k++)
                v += A[4 * r + k] * B[4 * k + c];
            C[4 * r + c] = v;
        }
    }
}

/* The inverse of an invertible affine [A | b]. */
static int aff_inv(const double* M, double* out) {
    double a = M[0], b = M[1], c = M[2], d = M[4], e = M[5], f = M[6], g = M[8], h = M[9],
           i = M[10];
    double det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
    if (!(fabs(det) > 1e-300)) return 0;
    double inv[9] = {(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det,
                     (f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det,
                     (d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det};
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++)
            out[4 * r + k] = inv[3 * r + k];
        out[4 * r + 3] = -(inv[3 * r] * M[3] + inv[3 * r + 1] * M[7] + inv[3 * r + 2] * M[11]);
    }
    return 1;
}

/* A character: every joint's world transform from its controller (S_c IB_j^-1), a joint
 * without one carried by its parent as at rest; then the skeleton's state. */
static mn_status bake_character(const mn_sim* s, const mn_xform* track, int nframes, double* q,
                                mn_error* err) {
    const mn_gltf* g = &s->gltf;
    int nj = g->njoints, m = s->rig->nctrl, nq = s->model->nq;
    double* rest = malloc((size_t)nj * 12 * sizeof(double));
    double* world = malloc((size_t)nj * 12 * sizeof(double));
    int* ctrl = malloc((size_t)nj * sizeof(int));
    int* done = malloc((size_t)nj * sizeof(int));
    double* work = malloc((size_t)nj * 4 * sizeof(double));
    mn_status st = MN_OK;
    if (!rest || !world || !ctrl || !done || !work) {
        st = mn_error_set(err, MN_ERR_NOMEM, "", 0, "", "out of memory");
        goto out;
    }
    mn_gltf_sample(g, -1, -1, rest);
    for (int j = 0; j < nj; j++)
        ctrl[j] = -1;
    for (int c = 0; c < m; c++)
        ctrl[s->ctrl_joint[c]] = c;
    for (int f = 0; f < nframes && st == MN_OK; f++) {
        for (int j = 0; j < nj; j++)
            done[j] = 0;
        for (int left = nj; left > 0;) {
            int progress = 0;
            for (int j = 0; j < nj; j++) {
                int par = g->joint_parent[j];
                if (done[j] || (par >= 0 && !done[par])) continue;
                double* W = world + 12 * (size_t)j;
                if (ctrl[j] >= 0) {
                    mn_xform S = mn_rig_skin_xform(s->rig, track + (size_t)f * m, ctrl[j]);
                    double A[12], ib[12];
                    aff_of(&S, A);
                    if (!aff_inv(g->inverse_bind + 12 * (size_t)j, ib)) {
                        st = mn_error_set(err, MN_ERR_ARG, "", 0, "inverseBindMatrices",
                                          "joint %d: singular", j);
                        goto out;
                    }
                    aff_mul(A, ib, W);
                } else if (par >= 0) { /* world_par rest_par^-1 rest_j */
                    double ip[12], t[12];
                    aff_inv(rest + 12 * (size_t)par, ip);
                    aff_mul(ip, rest + 12 * (size_t)j, t);
                    aff_mul(world + 12 * (size_t)par, t, W);
                } else {
                    memcpy(W, rest + 12 * (size_t)j, 12 * sizeof(double));
                }
                done[j] = 1;
                left--;
                progress = 1;
            }
            if (!progress) break;
        }
        st = mn_gltf_state_world(g, s->model, world, f ? q + (size_t)(f - 1) * nq : NULL,
                                 q + (size_t)f * nq, work, err);
    }
out:
    free(rest);
    free(world);
    free(ctrl);
    free(done);
    free(work);
    return st;
}

/* Any other rig: one FREE joint per controller at its pivot, under its parent controller;
 * its state puts the joint frame at the controller's pose (rotation R, position d). */
static mn_model* controllers_model(const mn_rig* rig, mn_error* err) {
    mn_spec* sp = mn_spec_create("controllers");
    if (!sp) {
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "", "out of memory");
        return NULL;
    }
    for (int j = 0; j < rig->nctrl; j++) {
        mn_joint_def d = mn_joint_default();
        d.name = rig->ctrl_name[j];
        d.parent = rig->ctrl_parent[j];
        d.type = MN_JOINT_FREE;
        d.offset = d.parent >= 0 ? mn_vec3_sub(rig->ctrl_pivot[j], rig->ctrl_pivot[d.parent])
                                 : rig->ctrl_pivot[j];
        if (mn_spec_add_joint(sp, &d, err) < 0) {
            mn_spec_destroy(sp);
            return NULL;
        }
    }
    mn_model* m = mn_model_compile(sp, err);
    mn_spec_destroy(sp);
    return m;
}

mn_status mn_sim_write_glb(const mn_sim* s, const char* path, const mn_xform* track, int nframes,
                           mn_error* err) {
    if (!s || !path || !track || nframes < 1)
        return mn_error_set(err, MN_ERR_ARG, path ? path : "", 0, "", "bad argument");
    int m = s->rig->nctrl;
    mn_model* model = s->model ? s->model : controllers_model(s->rig, err);
    if (!model) return err ? err->status : MN_ERR_ARG;
    mn_motion mo = {nframes, model->nq, s->dt, NULL};
    mo.q = malloc((size_t)nframes * (size_t)model->nq * sizeof(double));
    mn_status st = MN_OK;
    if (!mo.q) {
        st = mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
    } else if (s->model) {
        st = bake_character(s, track, nframes, mo.q, err);
    } else {
        for (int f = 0; f < nframes; f++) {
            const mn_xform* P = track + (size_t)f * m;
            double* q = mo.q + (size_t)f * model->nq;
            for (int j = 0; j < m; j++) {
                int a = model->jnt_qadr[j], par = s->rig->ctrl_parent[j];
                mn_mat3 R = P[j].R;
                mn_vec3 d = P[j].p;
                if (par >= 0) {
                    d = mn_mat3_tmulv(&P[par].R, mn_vec3_sub(d, P[par].p));
                    R = mn_mat3_tmul(&P[par].R, &P[j].R);
                }
                d = mn_vec3_sub(d, model->jnt_offset[j]);
                mn_quat r = mn_quat_from_mat3(&R);
                q[a] = d.x, q[a + 1] = d.y, q[a + 2] = d.z;
                q[a + 3] = r.w, q[a + 4] = r.x, q[a + 5] = r.y, q[a + 6] = r.z;
            }
        }
    }
    if (st == MN_OK) st = mn_gltf_write(path, model, &mo, s->model ? &s->gltf : NULL, err);
    free(mo.q);
    if (model != s->model) mn_model_destroy(model);
    return st;
}
