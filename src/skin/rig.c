/* The rig: rest mesh, masses, controllers, sparse weights; forward linear blend skinning
 * (seed, "x_i^r = sum_j w_ij [R_j (xbar_i - dbar_j) + d_j]"). */
#include <marionette/skin.h>

#include "skin/dense.h"

#include <stdlib.h>
#include <string.h>

mn_ctrl_def mn_ctrl_default(void) {
    mn_ctrl_def d;
    memset(&d, 0, sizeof d);
    d.kind = MN_CTRL_POINT;
    d.parent = -1;
    return d;
}

mn_rig* mn_rig_create(int dim, int nverts, const double* rest, const double* mass, mn_error* err) {
    if ((dim != 2 && dim != 3) || nverts <= 0 || !rest) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "rig", "dim must be 2 or 3 and nverts > 0");
        return NULL;
    }
    for (int i = 0; i < nverts * dim; i++)
        if (!isfinite(rest[i])) {
            mn_error_set(err, MN_ERR_ARG, "", 0, "rest", "vertex %d is not finite", i / dim);
            return NULL;
        }
    if (mass)
        for (int i = 0; i < nverts; i++)
            if (!(mass[i] > 0) || !isfinite(mass[i])) {
                mn_error_set(err, MN_ERR_ARG, "", 0, "mass", "vertex %d has mass %g (must be > 0)",
                             i, mass[i]);
                return NULL;
            }
    mn_rig* r = calloc(1, sizeof *r);
    if (!r) goto nomem;
    r->dim = dim;
    r->nverts = nverts;
    r->rest = calloc((size_t)nverts * 3, sizeof(double));
    r->mass = malloc((size_t)nverts * sizeof(double));
    if (!r->rest || !r->mass) goto nomem;
    for (int i = 0; i < nverts; i++) {
        for (int c = 0; c < dim; c++)
            r->rest[3 * i + c] = rest[dim * i + c];
        r->mass[i] = mass ? mass[i] : 1.0;
    }
    return r;
nomem:
    mn_rig_destroy(r);
    mn_error_set(err, MN_ERR_NOMEM, "", 0, "rig", "out of memory");
    return NULL;
}

void mn_rig_destroy(mn_rig* r) {
    if (!r) return;
    for (int j = 0; j < r->nctrl; j++)
        free(r->ctrl_name[j]);
    free(r->ctrl_name);
    free(r->ctrl_kind);
    free(r->ctrl_pivot);
    free(r->ctrl_tail);
    free(r->ctrl_parent);
    free(r->ctrl_attached);
    free(r->w_idx);
    free(r->w_val);
    free(r->rest);
    free(r->mass);
    free(r);
}

int mn_rig_find_ctrl(const mn_rig* r, const char* name) {
    if (!r || !name) return -1;
    for (int j = 0; j < r->nctrl; j++)
        if (!strcmp(r->ctrl_name[j], name)) return j;
    return -1;
}

static int reserve_ctrl(mn_rig* r) {
    if (r->nctrl < r->cap_ctrl) return 1;
    int cap = r->cap_ctrl ? 2 * r->cap_ctrl : 16;
    char** nm = realloc(r->ctrl_name, (size_t)cap * sizeof *nm);
    if (nm) r->ctrl_name = nm;
    int* kd = realloc(r->ctrl_kind, (size_t)cap * sizeof *kd);
    if (kd) r->ctrl_kind = kd;
    mn_vec3* pv = realloc(r->ctrl_pivot, (size_t)cap * sizeof *pv);
    if (pv) r->ctrl_pivot = pv;
    mn_vec3* tl = realloc(r->ctrl_tail, (size_t)cap * sizeof *tl);
    if (tl) r->ctrl_tail = tl;
    int* pa = realloc(r->ctrl_parent, (size_t)cap * sizeof *pa);
    if (pa) r->ctrl_parent = pa;
    uint8_t* at = realloc(r->ctrl_attached, (size_t)cap * sizeof *at);
    if (at) r->ctrl_attached = at;
    if (!nm || !kd || !pv || !tl || !pa || !at) return 0;
    r->cap_ctrl = cap;
    return 1;
}

int mn_rig_add_ctrl(mn_rig* r, const mn_ctrl_def* def, mn_error* err) {
    if (!r || !def) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "controller", "NULL argument");
        return -1;
    }
    if (!def->name || !def->name[0]) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "name", "controller %d has no name", r->nctrl);
        return -1;
    }
    if (mn_rig_find_ctrl(r, def->name) >= 0) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "name", "duplicate controller name '%s'", def->name);
        return -1;
    }
    if (def->kind < MN_CTRL_POINT || def->kind > MN_CTRL_CAGE) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "kind", "controller '%s': unknown kind", def->name);
        return -1;
    }
    if (def->parent < -1 || def->parent >= r->nctrl) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "parent",
                     "controller '%s': parent %d is not an earlier controller", def->name,
                     def->parent);
        return -1;
    }
    if (!mn_vec3_isfinite(def->pivot) || !mn_vec3_isfinite(def->tail)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "pivot", "controller '%s': pivot or tail not finite",
                     def->name);
        return -1;
    }
    if (r->dim == 2 && (def->pivot.z != 0 || def->tail.z != 0)) {
        mn_error_set(err, MN_ERR_ARG, "", 0, "pivot", "controller '%s': z must be 0 in a 2D rig",
                     def->name);
        return -1;
    }
    char* nm = malloc(strlen(def->name) + 1);
    if (!nm || !reserve_ctrl(r)) {
        free(nm);
        mn_error_set(err, MN_ERR_NOMEM, "", 0, "controller", "out of memory");
        return -1;
    }
    strcpy(nm, def->name);
    int j = r->nctrl++;
    r->ctrl_name[j] = nm;
    r->ctrl_kind[j] = def->kind;
    r->ctrl_pivot[j] = def->pivot;
    r->ctrl_tail[j] = def->kind == MN_CTRL_BONE ? def->tail : def->pivot;
    r->ctrl_parent[j] = def->parent;
    r->ctrl_attached[j] = (uint8_t)(def->parent >= 0 && def->attached);
    return j;
}

mn_status mn_rig_set_weights(mn_rig* r, int k, const int* idx, const double* w, int* nwarn,
                             mn_error* err) {
    if (nwarn) *nwarn = 0;
    if (!r || !idx || !w || k <= 0 || k > MN_SKIN_MAX_INFLUENCES)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "weights", "k must be in 1..%d",
                            MN_SKIN_MAX_INFLUENCES);
    size_t nk = (size_t)r->nverts * (size_t)k;
    int* ni = malloc(nk * sizeof *ni);
    double* nv = malloc(nk * sizeof *nv);
    if (!ni || !nv) {
        free(ni);
        free(nv);
        return mn_error_set(err, MN_ERR_NOMEM, "", 0, "weights", "out of memory");
    }
    int warned = 0, first_warn = -1;
    double first_sum = 0;
    for (int i = 0; i < r->nverts; i++) {
        double sum = 0;
        for (int s = 0; s < k; s++) {
            size_t a = (size_t)i * (size_t)k + (size_t)s;
            double v = w[a];
            int j = idx[a];
            if (!isfinite(v) || v < 0) {
                free(ni);
                free(nv);
                return mn_error_set(err, MN_ERR_ARG, "", 0, "weights",
                                    "vertex %d: weight %g is negative or not finite", i, v);
            }
            if (v > 0 && (j < 0 || j >= r->nctrl)) {
                free(ni);
                free(nv);
                return mn_error_set(err, MN_ERR_ARG, "", 0, "weights",
                                    "vertex %d: controller index %d out of range 0..%d", i, j,
                                    r->nctrl - 1);
            }
            if (v == 0 || j < 0) {
                ni[a] = 0;
                nv[a] = 0;
                continue;
            }
            ni[a] = j;
            nv[a] = v;
            sum += v;
        }
        if (!(sum > 0)) {
            free(ni);
            free(nv);
            return mn_error_set(err, MN_ERR_ARG, "", 0, "weights", "vertex %d has no influence", i);
        }
        if (fabs(sum - 1.0) > 1e-6) {
            if (!warned++) {
                first_warn = i;
                first_sum = sum;
            }
        }
        for (int s = 0; s < k; s++)
            nv[(size_t)i * (size_t)k + (size_t)s] /= sum;
    }
    if (warned) {
        if (nwarn) *nwarn = warned;
        mn_error_set(err, MN_OK, "", 0, "weights",
                     "%d vertices' weights do not sum to 1 (vertex %d: %g): normalised", warned,
                     first_warn, first_sum);
    }
    free(r->w_idx);
    free(r->w_val);
    r->w_idx = ni;
    r->w_val = nv;
    r->k = k;
    return MN_OK;
}

mn_status mn_rig_set_weights_dense(mn_rig* r, const double* W, int* nwarn, mn_error* err) {
    if (nwarn) *nwarn = 0;
    if (!r || !W || r->nctrl <= 0)
        return mn_error_set(err, MN_ERR_ARG, "", 0, "weights", "no controllers");
    int k = r->nctrl < MN_SKIN_MAX_INFLUENCES ? r->nctrl : MN_SKIN_MAX_INFLUENCES;
    size_t nk = (size_t)r->nverts * (size_t)k;
    int* idx = calloc(nk, sizeof *idx);
    double* w = calloc(nk, sizeof *w);
    if (!idx || !w) {
        free(idx);
        free(w);
        return mn_error_set(err, MN_ERR_NOMEM, "", 0, "weights", "out of memory");
    }
    mn_status st = MN_OK;
    int dropped = 0;
    for (int i = 0; i < r->nverts && st == MN_OK; i++) {
        const double* row = W + (size_t)i * (size_t)r->nctrl;
        int* ri = idx + (size_t)i * (size_t)k;
        double* rw = w + (size_t)i * (size_t)k;
        for (int s = 0; s < k; s++) {
            ri[s] = -1;
            rw[s] = 0;
        }
        for (int j = 0; j < r->nctrl; j++) {
            double v = row[j];
            if (!isfinite(v) || v < 0) {
                st = mn_error_set(err, MN_ERR_ARG, "", 0, "weights",
                                  "vertex %d: weight %g of controller %d is negative or not finite",
                                  i, v, j);
                break;
            }
            if (v == 0) continue;
            /* insert into the top-k list, kept in decreasing order */
            int s = k - 1;
            if (rw[s] >= v) {
                dropped++;
                continue;
            }
            if (rw[s] > 0) dropped++;
            while (s > 0 && rw[s - 1] < v) {
                rw[s] = rw[s - 1];
                ri[s] = ri[s - 1];
                s--;
            }
            rw[s] = v;
            ri[s] = j;
        }
    }
    if (st == MN_OK) st = mn_rig_set_weights(r, k, idx, w, nwarn, err);
    if (st == MN_OK && dropped && nwarn) *nwarn += 1;
    free(idx);
    free(w);
    return st;
}

mn_status mn_rig_set_hierarchy(mn_rig* r, const mn_model* m, mn_error* err) {
    if (!r || !m) return mn_error_set(err, MN_ERR_ARG, "", 0, "model", "NULL argument");
    int found = 0;
    for (int j = 0; j < r->nctrl; j++) {
        int jt = mn_model_find_joint(m, r->ctrl_name[j]);
        if (jt < 0) continue;
        found++;
        int parent = -1;
        for (int a = m->jnt_parent[jt]; a >= 0 && parent < 0; a = m->jnt_parent[a]) {
            int c = mn_rig_find_ctrl(r, m->jnt_name[a]);
            if (c >= 0) parent = c;
        }
        if (parent > j)
            return mn_error_set(err, MN_ERR_ARG, "", 0, "parent",
                                "controller '%s' is listed before its parent '%s'", r->ctrl_name[j],
                                r->ctrl_name[parent]);
        r->ctrl_parent[j] = parent;
        r->ctrl_attached[j] = parent >= 0;
    }
    if (!found)
        return mn_error_set(err, MN_ERR_NOTFOUND, "", 0, "model",
                            "no controller names a joint of the model");
    return MN_OK;
}

void mn_rig_rest_pose(const mn_rig* r, mn_xform* pose) {
    for (int j = 0; j < r->nctrl; j++) {
        pose[j].R = mn_mat3_identity();
        pose[j].p = r->ctrl_pivot[j];
    }
}

mn_xform mn_rig_skin_xform(const mn_rig* r, const mn_xform* pose, int j) {
    mn_xform S;
    S.R = pose[j].R;
    S.p = mn_vec3_sub(pose[j].p, mn_mat3_mulv(&pose[j].R, r->ctrl_pivot[j]));
    return S;
}

mn_xform mn_rig_pose_from_skin(const mn_rig* r, int j, const mn_xform* S) {
    mn_xform P;
    P.R = S->R;
    P.p = mn_xform_apply(S, r->ctrl_pivot[j]);
    return P;
}

void mn_rig_propagate(const mn_rig* r, mn_xform* pose) {
    for (int c = 0; c < r->nctrl; c++) {
        if (!r->ctrl_attached[c]) continue;
        int p = r->ctrl_parent[c];
        mn_vec3 e = mn_vec3_sub(r->ctrl_pivot[c], r->ctrl_pivot[p]);
        pose[c].p = mn_vec3_add(pose[p].p, mn_mat3_mulv(&pose[p].R, e));
    }
}

/* Vertex i under the pose: sum_s w_s (R_j (x_rest - pivot_j) + p_j), the linear blend. */
static inline mn_vec3 blend_vertex(const mn_rig* r, const mn_xform* pose, int i) {
    int k = r->k;
    mn_vec3 xb = mn_v3(r->rest[3 * i], r->rest[3 * i + 1], r->rest[3 * i + 2]);
    mn_vec3 x = mn_v3(0, 0, 0);
    for (int s = 0; s < k; s++) {
        double w = r->w_val[i * k + s];
        if (w == 0) continue;
        int j = r->w_idx[i * k + s];
        mn_vec3 a = mn_mat3_mulv(&pose[j].R, mn_vec3_sub(xb, r->ctrl_pivot[j]));
        x = mn_vec3_madd(x, w, mn_vec3_add(a, pose[j].p));
    }
    return x;
}

/* Forward LBS. Up to DEFORM_STACK controllers, their skinning matrices S_j = [R_j | p_j -
 * R_j dbar_j] are made once and each vertex blends them, sum_s w_s S_j (six two-lane
 * multiply-adds per influence), then applies the blend to its rest position: the same
 * x_i = sum_j w_ij (R_j (xbar_i - dbar_j) + p_j), grouped as the usual GPU skinning does.
 * Beyond that many controllers, vertex by vertex as blend_vertex. */
#define DEFORM_STACK 128
void mn_rig_deform(const mn_rig* r, const mn_xform* pose, double* out) {
    int dim = r->dim, k = r->k, m = r->nctrl;
    if (m > DEFORM_STACK) {
        for (int i = 0; i < r->nverts; i++) {
            mn_vec3 x = blend_vertex(r, pose, i);
            out[dim * i] = x.x;
            out[dim * i + 1] = x.y;
            if (dim == 3) out[dim * i + 2] = x.z;
        }
        return;
    }
    double S[DEFORM_STACK * 12]; /* per controller, rows (R_r0 R_r1 | R_r2 t_r) */
    for (int j = 0; j < m; j++) {
        mn_vec3 t = mn_vec3_sub(pose[j].p, mn_mat3_mulv(&pose[j].R, r->ctrl_pivot[j]));
        const double* R = pose[j].R.m;
        double tv[3] = {t.x, t.y, t.z};
        for (int q = 0; q < 3; q++) {
            S[12 * j + 4 * q] = R[3 * q];
            S[12 * j + 4 * q + 1] = R[3 * q + 1];
            S[12 * j + 4 * q + 2] = R[3 * q + 2];
            S[12 * j + 4 * q + 3] = tv[q];
        }
    }
    for (int i = 0; i < r->nverts; i++) {
        const double* xb = r->rest + 3 * (size_t)i;
        const int* idx = r->w_idx + (size_t)i * k;
        const double* wv = r->w_val + (size_t)i * k;
        mn_v2d M[6] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}};
        for (int s = 0; s < k; s++) {
            double w = wv[s];
            if (w == 0) continue;
            const double* Sj = S + 12 * idx[s];
            for (int u = 0; u < 6; u++)
                M[u] += w * mn_v2d_load(Sj + 2 * u);
        }
        mn_v2d xa = {xb[0], xb[1]}, xc = {xb[2], 1.0};
        mn_v2d r0 = M[0] * xa + M[1] * xc, r1 = M[2] * xa + M[3] * xc, r2 = M[4] * xa + M[5] * xc;
        out[dim * i] = r0[0] + r0[1];
        out[dim * i + 1] = r1[0] + r1[1];
        if (dim == 3) out[dim * i + 2] = r2[0] + r2[1];
    }
}

void mn_rig_error(const mn_rig* r, const mn_xform* pose, const double* targets, double* rms,
                  double* max_err) {
    int dim = r->dim;
    double sum = 0, msum = 0, mx = 0;
    for (int i = 0; i < r->nverts; i++) {
        mn_vec3 x = blend_vertex(r, pose, i);
        mn_vec3 t =
            mn_v3(targets[dim * i], targets[dim * i + 1], dim == 3 ? targets[dim * i + 2] : 0);
        double e2 = mn_vec3_dot(mn_vec3_sub(x, t), mn_vec3_sub(x, t));
        sum += r->mass[i] * e2;
        msum += r->mass[i];
        if (e2 > mx) mx = e2;
    }
    if (rms) *rms = sqrt(sum / msum);
    if (max_err) *max_err = sqrt(mx);
}

double mn_rig_bbox_diagonal(const mn_rig* r) {
    mn_vec3 lo = mn_v3(INFINITY, INFINITY, INFINITY), hi = mn_vec3_neg(lo);
    for (int i = 0; i < r->nverts; i++) {
        const double* p = r->rest + 3 * i;
        lo = mn_v3(fmin(lo.x, p[0]), fmin(lo.y, p[1]), fmin(lo.z, p[2]));
        hi = mn_v3(fmax(hi.x, p[0]), fmax(hi.y, p[1]), fmax(hi.z, p[2]));
    }
    return mn_vec3_dist(lo, hi);
}
