/* The sequence (Welman 6.1.2): key poses of one figure at frame times, interpolation modes
 * per joint, and the sampling tables rebuilt after every change so that sampling is a
 * table look-up and a few polynomial evaluations. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_internal.h"

static void ext_free(mn_seq* s);

static const char* const INTERP_NAMES[MN_INTERP_COUNT] = {
    "default", "constant", "linear", "slerp", "squad", "catmull-rom", "kb"};

const char* mn_interp_name(mn_interp i) {
    return (unsigned)i < MN_INTERP_COUNT ? INTERP_NAMES[i] : NULL;
}

int mn_interp_parse(const char* name) {
    if (!name) return -1;
    for (int i = 0; i < MN_INTERP_COUNT; i++)
        if (!strcmp(name, INTERP_NAMES[i])) return i;
    return -1;
}

mn_seq_def mn_seq_def_default(void) {
    mn_seq_def d;
    memset(&d, 0, sizeof d);
    d.fps = 30;
    d.rot = MN_INTERP_SLERP;
    d.trans = MN_INTERP_LINEAR;
    d.max_handles = 32;
    d.max_constraints = 32;
    return d;
}

static int rot_default_ok(int i) {
    return i == MN_INTERP_CONSTANT || i == MN_INTERP_LINEAR || i == MN_INTERP_SLERP ||
           i == MN_INTERP_SQUAD;
}
static int trans_ok(int i) {
    return i == MN_INTERP_CONSTANT || i == MN_INTERP_LINEAR || i == MN_INTERP_CATMULL_ROM ||
           i == MN_INTERP_KB;
}

mn_seq* mn_seq_create(const mn_model* m, const mn_seq_def* def, mn_error* err) {
    mn_seq_def d = def ? *def : mn_seq_def_default();
    if (!m) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "model", "no model");
        return NULL;
    }
    if (!(d.fps > 0) || !isfinite(d.fps)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "fps", "fps must be a positive number");
        return NULL;
    }
    if (!rot_default_ok(d.rot) || !trans_ok(d.trans)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "interpolation", "bad default interpolation");
        return NULL;
    }
    if (d.max_handles < 0 || d.max_constraints < 0 || d.max_handles > 4096 ||
        d.max_constraints > 4096) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "max_constraints",
                     "room for 0..4096 handles and constraints");
        return NULL;
    }
    mn_seq* s = calloc(1, sizeof *s);
    if (!s) goto nomem;
    s->m = m;
    s->fps = d.fps;
    s->rot_default = d.rot;
    s->trans_default = d.trans;
    s->max_h = d.max_handles;
    s->max_c = d.max_constraints;
    s->jnt_rot = calloc((size_t)m->njoint + 1, sizeof(int));
    s->jnt_trans = calloc((size_t)m->njoint + 1, sizeof(int));
    s->h = calloc((size_t)s->max_h + 1, sizeof *s->h);
    s->h_name = calloc((size_t)s->max_h + 1, sizeof *s->h_name);
    s->c = calloc((size_t)s->max_c + 1, sizeof *s->c);
    if (!s->jnt_rot || !s->jnt_trans || !s->h || !s->h_name || !s->c || mn_seq_rebuild(s) != MN_OK)
        goto nomem;
    return s;
nomem:
    mn_seq_destroy(s);
    mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "sequence", "out of memory");
    return NULL;
}

void mn_seq_destroy(mn_seq* s) {
    if (!s) return;
    ext_free(s);
    mn_seq_free_tables(s);
    free(s->jnt_rot);
    free(s->jnt_trans);
    free(s->key_frame);
    free(s->key_q);
    free(s->key_tcb);
    if (s->c)
        for (int i = 0; i < s->nc; i++)
            free(s->c[i].tk);
    free(s->c);
    free(s->h);
    free(s->h_name);
    free(s);
}

/* ---- the layers' and time warp's storage (layers.c edits them) ----------------------------- */

void mn_seq_layer_free(seq_layer* l) {
    mn_seq_destroy(l->seq);
    free(l->w_frame);
    free(l->w_value);
    free(l->mask);
    memset(l, 0, sizeof *l);
}

static void ext_free(mn_seq* s) {
    if (!s->ext) return;
    for (int i = 0; i < s->ext->nlayer; i++)
        mn_seq_layer_free(&s->ext->layer[i]);
    free(s->ext->warp);
    free(s->ext);
    s->ext = NULL;
}

static double* dup_doubles(const double* p, size_t n) {
    double* r = malloc(sizeof(double) * (n ? n : 1));
    if (r && n) memcpy(r, p, sizeof(double) * n);
    return r;
}

/* The layers and warp of src into dst (which has none); 0 when out of memory. */
static int ext_clone(mn_seq* dst, const mn_seq* src) {
    const struct seq_ext* e = src->ext;
    if (!e) return 1;
    struct seq_ext* d = dst->ext = calloc(1, sizeof *dst->ext);
    if (!d) return 0;
    d->is_layer = e->is_layer;
    if (e->nwarp) {
        if (!(d->warp = dup_doubles(e->warp, 3 * (size_t)e->nwarp))) return 0;
        d->nwarp = e->nwarp;
    }
    size_t nj = (size_t)src->m->njoint;
    for (int i = 0; i < e->nlayer; i++) {
        const seq_layer* a = &e->layer[i];
        seq_layer* b = &d->layer[i];
        d->nlayer = i + 1;
        *b = *a;
        b->seq = mn_seq_clone(a->seq);
        b->w_frame = dup_doubles(a->w_frame, (size_t)a->nw);
        b->w_value = dup_doubles(a->w_value, (size_t)a->nw);
        b->mask = a->mask ? dup_doubles(a->mask, nj) : NULL;
        if (!b->seq || !b->w_frame || !b->w_value || (a->mask && !b->mask)) return 0;
    }
    return 1;
}

static void* dup_block(const void* p, size_t bytes) {
    void* r = malloc(bytes ? bytes : 1);
    if (r && bytes) memcpy(r, p, bytes);
    return r;
}

mn_seq* mn_seq_clone(const mn_seq* s) {
    if (!s) return NULL;
    mn_seq_def d = mn_seq_def_default();
    d.fps = s->fps;
    d.rot = s->rot_default;
    d.trans = s->trans_default;
    d.max_handles = s->max_h;
    d.max_constraints = s->max_c;
    mn_seq* r = mn_seq_create(s->m, &d, NULL);
    if (!r) return NULL;
    int nj = s->m->njoint, nq = s->m->nq;
    memcpy(r->jnt_rot, s->jnt_rot, sizeof(int) * (size_t)nj);
    memcpy(r->jnt_trans, s->jnt_trans, sizeof(int) * (size_t)nj);
    r->nkey = r->cap_key = s->nkey;
    r->key_frame = dup_block(s->key_frame, sizeof(double) * (size_t)s->nkey);
    r->key_q = dup_block(s->key_q, sizeof(double) * (size_t)s->nkey * (size_t)nq);
    r->key_tcb = dup_block(s->key_tcb, sizeof(double) * 3 * (size_t)s->nkey);
    r->nfig = s->nfig; /* the other figures' sequences are shared, not copied */
    memcpy(r->fig, s->fig, sizeof r->fig);
    r->nh = s->nh;
    memcpy(r->h, s->h, sizeof *s->h * (size_t)s->nh);
    memcpy(r->h_name, s->h_name, sizeof *s->h_name * (size_t)s->nh);
    for (int i = 0; i < s->nh; i++)
        r->h[i].name = s->h[i].name ? r->h_name[i] : NULL;
    int ok = r->key_frame && r->key_q && r->key_tcb;
    for (int i = 0; i < s->nc && ok; i++) {
        r->c[i] = s->c[i];
        r->c[i].def.con.name = s->c[i].def.con.name ? r->c[i].name : NULL;
        r->c[i].tk = dup_block(s->c[i].tk, sizeof(mn_target_key) * (size_t)s->c[i].ntk);
        r->c[i].cap_tk = s->c[i].ntk;
        r->nc = i + 1;
        ok = r->c[i].tk != NULL;
    }
    if (!ok || !ext_clone(r, s) || mn_seq_rebuild(r) != MN_OK) {
        mn_seq_destroy(r);
        return NULL;
    }
    return r;
}

const mn_model* mn_seq_model(const mn_seq* s) {
    return s ? s->m : NULL;
}
double mn_seq_fps(const mn_seq* s) {
    return s ? s->fps : 0;
}
mn_status mn_seq_set_fps(mn_seq* s, double fps) {
    if (!s || !(fps > 0) || !isfinite(fps)) return MN_ERR_ARG;
    s->fps = fps;
    return MN_OK;
}

/* ---- keys -------------------------------------------------------------------------------- */

int mn_seq_key_count(const mn_seq* s) {
    return s ? s->nkey : 0;
}
double mn_seq_key_frame(const mn_seq* s, int k) {
    return s && k >= 0 && k < s->nkey ? s->key_frame[k] : 0;
}
const double* mn_seq_key_q(const mn_seq* s, int k) {
    return s && k >= 0 && k < s->nkey ? s->key_q + (size_t)k * (size_t)s->m->nq : NULL;
}
double mn_seq_start(const mn_seq* s) {
    return s && s->nkey ? s->key_frame[0] : 0;
}
double mn_seq_end(const mn_seq* s) {
    return s && s->nkey ? s->key_frame[s->nkey - 1] : 0;
}

int mn_seq_find_key(const mn_seq* s, double frame) {
    if (!s) return -1;
    int lo = 0, hi = s->nkey - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (s->key_frame[mid] == frame) return mid;
        if (s->key_frame[mid] < frame)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* First key with frame >= f. */
static int lower_bound(const mn_seq* s, double f) {
    int lo = 0, hi = s->nkey;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->key_frame[mid] < f)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int mn_seq_reserve_keys(mn_seq* s, int n) {
    if (n <= s->cap_key) return 1;
    int cap = s->cap_key ? s->cap_key : 8;
    while (cap < n)
        cap *= 2;
    size_t nq = (size_t)s->m->nq;
    double* f = realloc(s->key_frame, sizeof(double) * (size_t)cap);
    if (!f) return 0;
    s->key_frame = f;
    double* q = realloc(s->key_q, sizeof(double) * (size_t)cap * (nq ? nq : 1));
    if (!q) return 0;
    s->key_q = q;
    double* t = realloc(s->key_tcb, sizeof(double) * 3 * (size_t)cap);
    if (!t) return 0;
    s->key_tcb = t;
    s->cap_key = cap;
    return 1;
}

int mn_seq_put_key(mn_seq* s, double frame, const double* q, const double* tcb) {
    size_t nq = (size_t)s->m->nq;
    int k = lower_bound(s, frame);
    if (k < s->nkey && s->key_frame[k] == frame) {
        memcpy(s->key_q + (size_t)k * nq, q, sizeof(double) * nq);
        if (tcb) memcpy(s->key_tcb + 3 * k, tcb, sizeof(double) * 3);
        return k;
    }
    if (!mn_seq_reserve_keys(s, s->nkey + 1)) return -1;
    int tail = s->nkey - k;
    memmove(s->key_frame + k + 1, s->key_frame + k, sizeof(double) * (size_t)tail);
    memmove(s->key_q + (size_t)(k + 1) * nq, s->key_q + (size_t)k * nq,
            sizeof(double) * nq * (size_t)tail);
    memmove(s->key_tcb + 3 * (k + 1), s->key_tcb + 3 * k, sizeof(double) * 3 * (size_t)tail);
    s->key_frame[k] = frame;
    memcpy(s->key_q + (size_t)k * nq, q, sizeof(double) * nq);
    if (tcb)
        memcpy(s->key_tcb + 3 * k, tcb, sizeof(double) * 3);
    else
        memset(s->key_tcb + 3 * k, 0, sizeof(double) * 3);
    s->nkey++;
    return k;
}

void mn_seq_drop_key(mn_seq* s, int k) {
    size_t nq = (size_t)s->m->nq;
    int tail = s->nkey - k - 1;
    memmove(s->key_frame + k, s->key_frame + k + 1, sizeof(double) * (size_t)tail);
    memmove(s->key_q + (size_t)k * nq, s->key_q + (size_t)(k + 1) * nq,
            sizeof(double) * nq * (size_t)tail);
    memmove(s->key_tcb + 3 * k, s->key_tcb + 3 * (k + 1), sizeof(double) * 3 * (size_t)tail);
    s->nkey--;
}

/* Checks and normalises one key's state into qn (nq numbers), then puts it (no rebuild).
 * The key's index, or -1 with err set. */
static int put_checked(mn_seq* s, double frame, const double* q, const double* tcb, double* qn,
                       mn_error* err) {
    if (!isfinite(frame)) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "frame", "key frame is not finite");
        return -1;
    }
    const mn_model* m = s->m;
    if (mn_q_check(m, q) != MN_OK) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "pose",
                     "key state is not finite (or a zero quaternion)");
        return -1;
    }
    memcpy(qn, q, sizeof(double) * (size_t)m->nq);
    for (int j = 0; j < m->njoint; j++) {
        int t = m->jnt_type[j];
        if (t != MN_JOINT_BALL && t != MN_JOINT_FREE) continue;
        double* r = qn + m->jnt_qadr[j] + (t == MN_JOINT_FREE ? 3 : 0);
        /* normalised unless already unit to rounding: a key read back from a file is kept
         * bit for bit */
        double n2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
        if (fabs(n2 - 1) <= 1e-14) continue;
        mn_quat u = mn_quat_normalize(mn_q4(r[0], r[1], r[2], r[3]));
        r[0] = u.w, r[1] = u.x, r[2] = u.y, r[3] = u.z;
    }
    int k = mn_seq_put_key(s, frame, qn, tcb);
    if (k < 0) mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "key", "out of memory");
    return k;
}

/* A scratch state of nq numbers: stack[] when it fits, else malloc'd. */
static double* scratch_q(const mn_model* m, double* stack, size_t cap) {
    return (size_t)m->nq <= cap ? stack : malloc(sizeof(double) * (size_t)(m->nq ? m->nq : 1));
}

int mn_seq_set_key(mn_seq* s, double frame, const double* q, mn_error* err) {
    if (!s || !q) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "key", "no sequence or state");
        return -1;
    }
    double stackq[256];
    double* qn = scratch_q(s->m, stackq, sizeof stackq / sizeof stackq[0]);
    if (!qn) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "key", "out of memory");
        return -1;
    }
    int k = put_checked(s, frame, q, NULL, qn, err);
    if (qn != stackq) free(qn);
    if (k < 0) return -1;
    if (mn_seq_rebuild(s) != MN_OK) {
        mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "key", "out of memory");
        return -1;
    }
    return k;
}

mn_status mn_seq_add_keys(mn_seq* s, int n, const double* frames, const double* q,
                          const double* tcb, int* bad, mn_error* err) {
    if (bad) *bad = -1;
    if (!s || n < 0 || (n && (!frames || !q)))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "key", "no sequence or state");
    if (n && !mn_seq_reserve_keys(s, s->nkey + n))
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "key", "out of memory");
    double stackq[256];
    double* qn = scratch_q(s->m, stackq, sizeof stackq / sizeof stackq[0]);
    if (!qn) return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "key", "out of memory");
    size_t nq = (size_t)s->m->nq;
    mn_status st = MN_OK;
    for (int i = 0; i < n && st == MN_OK; i++) {
        if (mn_seq_find_key(s, frames[i]) >= 0) {
            st = mn_error_set(err, MN_ERR_ARG, NULL, 0, "frame", "a second key at frame %.17g",
                              frames[i]);
        } else if (put_checked(s, frames[i], q + (size_t)i * nq, tcb ? tcb + 3 * i : NULL, qn,
                               err) < 0) {
            st = err ? err->status : MN_ERR_ARG;
        }
        if (st != MN_OK && bad) *bad = i;
    }
    if (qn != stackq) free(qn);
    /* built once, also after a refusal: the keys set so far are in the tables */
    if (mn_seq_rebuild(s) != MN_OK && st == MN_OK)
        st = mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "key", "out of memory");
    return st;
}

mn_status mn_seq_remove_key(mn_seq* s, int k) {
    if (!s || k < 0 || k >= s->nkey) return MN_ERR_ARG;
    mn_seq_drop_key(s, k);
    return mn_seq_rebuild(s);
}

mn_status mn_seq_set_key_tcb(mn_seq* s, int k, double tension, double continuity, double bias) {
    if (!s || k < 0 || k >= s->nkey) return MN_ERR_ARG;
    if (!(fabs(tension) <= 1) || !(fabs(continuity) <= 1) || !(fabs(bias) <= 1)) return MN_ERR_ARG;
    s->key_tcb[3 * k] = tension;
    s->key_tcb[3 * k + 1] = continuity;
    s->key_tcb[3 * k + 2] = bias;
    return mn_seq_rebuild(s);
}

mn_status mn_seq_key_tcb(const mn_seq* s, int k, double tcb[3]) {
    if (!s || !tcb || k < 0 || k >= s->nkey) return MN_ERR_ARG;
    memcpy(tcb, s->key_tcb + 3 * k, sizeof(double) * 3);
    return MN_OK;
}

/* ---- interpolation modes ----------------------------------------------------------------- */

mn_status mn_seq_set_default_interp(mn_seq* s, mn_interp rot, mn_interp trans) {
    if (!s) return MN_ERR_ARG;
    if (rot != MN_INTERP_DEFAULT && !rot_default_ok(rot)) return MN_ERR_ARG;
    if (trans != MN_INTERP_DEFAULT && !trans_ok(trans)) return MN_ERR_ARG;
    if (rot != MN_INTERP_DEFAULT) s->rot_default = rot;
    if (trans != MN_INTERP_DEFAULT) s->trans_default = trans;
    return mn_seq_rebuild(s);
}

void mn_seq_default_interp(const mn_seq* s, mn_interp* rot, mn_interp* trans) {
    if (rot) *rot = s ? s->rot_default : MN_INTERP_DEFAULT;
    if (trans) *trans = s ? s->trans_default : MN_INTERP_DEFAULT;
}

mn_status mn_seq_set_joint_interp(mn_seq* s, int joint, mn_interp rot, mn_interp trans) {
    if (!s || joint < 0 || joint >= s->m->njoint) return MN_ERR_ARG;
    if ((unsigned)rot >= MN_INTERP_COUNT || (unsigned)trans >= MN_INTERP_COUNT) return MN_ERR_ARG;
    int t = s->m->jnt_type[joint];
    if (rot != MN_INTERP_DEFAULT && !rot_default_ok(rot) && !(t == MN_JOINT_HINGE && trans_ok(rot)))
        return MN_ERR_ARG;
    if (trans != MN_INTERP_DEFAULT && !trans_ok(trans)) return MN_ERR_ARG;
    s->jnt_rot[joint] = rot;
    s->jnt_trans[joint] = trans;
    return mn_seq_rebuild(s);
}

void mn_seq_joint_interp(const mn_seq* s, int joint, mn_interp* rot, mn_interp* trans) {
    int ok = s && joint >= 0 && joint < s->m->njoint;
    if (rot) *rot = ok ? (mn_interp)s->jnt_rot[joint] : MN_INTERP_DEFAULT;
    if (trans) *trans = ok ? (mn_interp)s->jnt_trans[joint] : MN_INTERP_DEFAULT;
}

int mn_seq_run_count(const mn_seq* s) {
    return s ? s->nrun : 0;
}
mn_status mn_seq_run(const mn_seq* s, int r, int* first_joint, int* length) {
    if (!s || r < 0 || r >= s->nrun) return MN_ERR_ARG;
    if (first_joint) *first_joint = s->run_first[r];
    if (length) *length = s->run_len[r];
    return MN_OK;
}
