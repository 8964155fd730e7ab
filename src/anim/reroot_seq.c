/* A sequence moved onto a re-rooting of its figure (Welman 2.1.2: the hierarchy rebuilt
 * around a new root; 6.3: a hand or a foot as the root of an animated figure): every key
 * mapped by the model layer's mn_model_reroot_state, so that each key puts every joint where
 * it did; the in-betweens are then the re-rooted figure's own. */
#include <marionette/layers.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_internal.h"

/* The joint of `from` whose motion joint j of `to` carries ("x~" and "x" are one motion
 * turned round), of the same type: -1 when none. */
static int motion_of(const mn_model* from, const mn_model* to, int j) {
    const char* name = to->jnt_name[j];
    char other[256];
    size_t n = strlen(name);
    if (n > 0 && name[n - 1] == '~')
        snprintf(other, sizeof other, "%.*s", (int)(n - 1), name);
    else
        snprintf(other, sizeof other, "%s~", name);
    for (int pass = 0; pass < 2; pass++) {
        int k = mn_model_find_joint(from, pass ? name : other);
        if (k >= 0 && from->jnt_type[k] == to->jnt_type[j]) return k;
    }
    return -1;
}

/* Handles (by joint name: a segment keeps its name and its frame), constraints and their
 * target keys of s onto r. */
static mn_status carry_constraints(const mn_seq* s, const mn_model* to, mn_seq* r, mn_error* err) {
    const mn_model* from = mn_seq_model(s);
    for (int h = 0; h < mn_seq_handle_count(s); h++) {
        mn_handle_def d = *mn_seq_handle(s, h);
        if (d.joint >= 0) {
            if (d.type == MN_HANDLE_COM)
                return mn_error_set(err, MN_ERR_UNSUPPORTED, NULL, 0, "handles",
                                    "handle %d: the centre of mass of a subtree is another "
                                    "subtree's once re-rooted",
                                    h);
            d.joint = mn_model_find_joint(to, from->jnt_name[d.joint]);
            if (d.joint < 0)
                return mn_error_set(err, MN_ERR_NOTFOUND, NULL, 0, "handles",
                                    "handle %d: no joint \"%s\" in the re-rooted figure", h,
                                    from->jnt_name[mn_seq_handle(s, h)->joint]);
        }
        if (mn_seq_add_handle(r, &d, err) < 0) return err ? err->status : MN_ERR_ARG;
    }
    for (int c = 0; c < mn_seq_constraint_count(s); c++) {
        if (mn_seq_add_constraint(r, mn_seq_constraint(s, c), err) < 0)
            return err ? err->status : MN_ERR_ARG;
        for (int k = 0; k < mn_seq_target_key_count(s, c); k++)
            if (mn_seq_set_target_key(r, c, mn_seq_target_key(s, c, k), err) != MN_OK)
                return err ? err->status : MN_ERR_ARG;
    }
    return MN_OK;
}

mn_seq* mn_seq_reroot(const mn_seq* s, const mn_model* to, mn_error* err) {
    if (!s || !to) {
        mn_error_set(err, MN_ERR_ARG, NULL, 0, "sequence", "NULL argument");
        return NULL;
    }
    if (mn_seq_figure_count(s) > 1 || mn_seq_layer_count(s) > 0) {
        mn_error_set(err, MN_ERR_UNSUPPORTED, NULL, 0,
                     mn_seq_figure_count(s) > 1 ? "figures" : "layers",
                     "a sequence of one figure without layers is re-rooted");
        return NULL;
    }
    const mn_model* from = mn_seq_model(s);
    int n = mn_seq_key_count(s);
    mn_seq_def def = mn_seq_def_default();
    def.fps = mn_seq_fps(s);
    mn_seq_default_interp(s, &def.rot, &def.trans);
    def.max_handles = mn_seq_handle_count(s) + 1;
    def.max_constraints = mn_seq_constraint_count(s) + 1;
    mn_seq* r = mn_seq_create(to, &def, err);
    double* q = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)(to->nq + 1));
    double* frames = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    double* tcb = malloc(sizeof(double) * 3 * (size_t)(n > 0 ? n : 1));
    mn_status st = r && q && frames && tcb
                       ? MN_OK
                       : mn_error_set(err, r ? MN_ERR_NOMEM : (err ? err->status : MN_ERR_NOMEM),
                                      NULL, 0, "sequence", "out of memory");
    for (int k = 0; k < n && st == MN_OK; k++) {
        frames[k] = mn_seq_key_frame(s, k);
        mn_seq_key_tcb(s, k, tcb + 3 * k);
        st = mn_model_reroot_state(from, mn_seq_key_q(s, k), to, q + (size_t)k * (size_t)to->nq,
                                   err);
    }
    int bad = -1;
    if (st == MN_OK && n > 0) st = mn_seq_add_keys(r, n, frames, q, tcb, &bad, err);
    /* a joint's own interpolation goes with its motion (where it applies to the new joint) */
    for (int j = 0; j < to->njoint && st == MN_OK; j++) {
        int k = motion_of(from, to, j);
        if (k < 0) continue;
        mn_interp rot, trans;
        mn_seq_joint_interp(s, k, &rot, &trans);
        mn_seq_set_joint_interp(r, j, rot, trans);
    }
    int nw = mn_seq_warp_count(s);
    if (st == MN_OK && nw > 0) {
        double* w = malloc(sizeof(double) * 3 * (size_t)nw);
        if (!w) st = mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "sequence", "out of memory");
        for (int k = 0; w && k < nw; k++)
            mn_seq_warp_key(s, k, &w[k], &w[nw + k], &w[2 * nw + k]);
        if (w) st = mn_seq_set_warp(r, nw, w, w + nw, w + 2 * nw, err);
        free(w);
    }
    if (st == MN_OK) st = carry_constraints(s, to, r, err);
    free(q), free(frames), free(tcb);
    if (st != MN_OK) {
        mn_seq_destroy(r);
        return NULL;
    }
    return r;
}
