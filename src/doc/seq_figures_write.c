/* Writing a sequence document of several figures (docs/sequence.md "Several figures";
 * Welman 6.1, 7.3): the "figures" array (each figure's name, file, root, placement,
 * interpolation, keys, layers, time warp and contact tracks), then the handles
 * ("figure/joint") and constraints of all, in the form the reader of seq_figures.c reads.
 * The numbers and the one-figure members are written by sequence_doc.c's writers. */
#include <marionette/layers.h>
#include <marionette/sequence.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/doc_internal.h"
#include "doc/seq_contacts.h"
#include "doc/seq_doc_internal.h"

/* What the reader would refuse, named: a sequence that is not the figure's, a bad name, a
 * contact track on no joint. */
static mn_status check_figures(const mn_seq_figures* f, mn_error* err) {
    if (f->n < 1 || f->n > MN_SEQ_MAX_FIGURES || !f->seq[0] ||
        mn_seq_figure_count(f->seq[0]) != f->n)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figures",
                            "1 to %d figures, the first sequence animating them all",
                            MN_SEQ_MAX_FIGURES);
    for (int i = 0; i < f->n; i++) {
        char field[32];
        snprintf(field, sizeof field, "figures[%d]", i);
        if (mn_seq_figure(f->seq[0], i) != f->seq[i] || !f->model[i] ||
            mn_seq_model(f->seq[i]) != f->model[i])
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, field,
                                "not the sequence and model of figure %d", i);
        if (!memchr(f->name[i], 0, sizeof f->name[i]) || !f->name[i][0] ||
            strchr(f->name[i], '/') || !memchr(f->file[i], 0, sizeof f->file[i]) || !f->file[i][0])
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, field,
                                "a name (not empty, no '/') and a file");
        for (int k = 0; k < i; k++)
            if (!strcmp(f->name[k], f->name[i]))
                return mn_error_set(err, MN_ERR_ARG, NULL, 0, field, "duplicate figure name \"%s\"",
                                    f->name[i]);
        const mn_seq_doc_info* info = f->info[i];
        if (info && info->scale > 0 && info->scale != 1) /* a one-figure document's "scale" */
            return mn_error_set(err, MN_ERR_UNSUPPORTED, NULL, 0, "scale",
                                "a figure read at a scale: a document of several figures has "
                                "none (write a one-figure document with mn_seq_write_doc)");
        if (info && !memchr(info->root, 0, sizeof info->root))
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, field, "a root that is not a name");
        if (info && mn_seq_contacts_check(f->model[i], info, err) != MN_OK) {
            char inner[160];
            snprintf(inner, sizeof inner, "%s.%s", field, err->field);
            snprintf(err->field, sizeof err->field, "%.*s", (int)sizeof err->field - 1, inner);
            return err->status;
        }
    }
    return MN_OK;
}

static int is_identity_rot(const mn_mat3* R) {
    mn_mat3 I = mn_xform_identity().R;
    return !memcmp(R, &I, sizeof I);
}

/* Figure i's entry. */
static void write_figure(mn_strbuf* b, const mn_seq_figures* f, int i) {
    const struct mn_seq_figures_keyed* kd = f->keyed;
    const mn_xform* P = &f->place[i];
    mn_xform I = mn_xform_identity();
    mn_strbuf_printf(b, "%s\n    {\"name\": ", i ? "," : "");
    mn_strbuf_json_str(b, f->name[i]);
    mn_strbuf_printf(b, ", \"file\": ");
    mn_strbuf_json_str(b, f->file[i]);
    if (f->info[i] && f->info[i]->root[0]) {
        mn_strbuf_printf(b, ", \"root\": ");
        mn_strbuf_json_str(b, f->info[i]->root);
    }
    mn_vec3 zero = {0, 0, 0};
    if (memcmp(&P->p, &zero, sizeof zero)) {
        mn_strbuf_printf(b, ",\n     \"position\": ");
        mn_seqdoc_w_vec(b, &P->p.x, 3);
    }
    /* the rotation as the document gave it while it still gives this placement */
    int given = 0;
    if (kd && kd->has_rot[i]) {
        const double* g = kd->rot[i];
        mn_mat3 R = mn_quat_to_mat3(mn_quat_normalize(mn_q4(g[0], g[1], g[2], g[3])));
        given = !memcmp(&R, &P->R, sizeof R);
    }
    if (given || !is_identity_rot(&P->R)) {
        mn_strbuf_printf(b,
                         "%s\"rotation\": ", memcmp(&P->p, &zero, sizeof zero) ? ", " : ",\n     ");
        if (given) {
            mn_seqdoc_w_vec(b, kd->rot[i], 4);
        } else {
            mn_quat q = mn_quat_from_mat3(&P->R);
            mn_seqdoc_w_vec(b, &q.w, 4);
        }
    }
    mn_seqdoc_unplace u = {NULL, NULL, 0, 0};
    if (memcmp(P, &I, sizeof I)) {
        u.place = P;
        if (kd) u.keyed = kd->q[i], u.n = kd->n[i];
    }
    mn_seqdoc_write_interp_keys(b, f->seq[i], "     ", &u);
    mn_seqdoc_write_layers(b, f->seq[i], "     ", &u);
    mn_seqdoc_write_warp(b, f->seq[i], ",\n     ");
    if (f->info[i]) mn_seq_contacts_write(b, f->info[i], "     ");
    mn_strbuf_printf(b, "}");
}

mn_status mn_seq_write_figures_mem(const mn_seq_figures* f, char** text, size_t* len,
                                   mn_error* err) {
    if (text) *text = NULL;
    if (!f || !text) return mn_error_set(err, MN_ERR_ARG, NULL, 0, "figures", "NULL argument");
    mn_status st = check_figures(f, err);
    if (st != MN_OK) return st;
    const mn_seq* s = f->seq[0];
    mn_strbuf b;
    mn_strbuf_init(&b);
    mn_strbuf_printf(&b, "{\n  \"fps\": ");
    mn_seqdoc_w_num(&b, mn_seq_fps(s));
    mn_strbuf_printf(&b, ",\n  \"figures\": [");
    for (int i = 0; i < f->n; i++)
        write_figure(&b, f, i);
    mn_strbuf_printf(&b, "]");
    int nh = mn_seq_handle_count(s), nc = mn_seq_constraint_count(s);
    if (nh) {
        mn_strbuf_printf(&b, ",\n  \"handles\": [");
        for (int h = 0; h < nh; h++) {
            const mn_handle_def* d = mn_seq_handle(s, h);
            const mn_model* m = f->model[d->figure];
            char hb[NAME_CAP];
            mn_strbuf_printf(&b, "%s\n    {\"name\": ", h ? "," : "");
            mn_strbuf_json_str(&b, mn_seqdoc_handle_name(s, h, hb));
            mn_strbuf_printf(&b, ", \"type\": \"%s\"",
                             d->type == MN_HANDLE_ORIENT ? "orientation"
                                                         : mn_handle_type_name(d->type));
            if (d->joint >= 0) { /* "figure/joint" */
                char jn[512];
                snprintf(jn, sizeof jn, "%s/%s", f->name[d->figure], m->jnt_name[d->joint]);
                mn_strbuf_printf(&b, ", \"joint\": ");
                mn_strbuf_json_str(&b, jn);
            } else { /* the whole figure's centre of mass */
                mn_strbuf_printf(&b, ", \"figure\": ");
                mn_strbuf_json_str(&b, f->name[d->figure]);
            }
            if (d->type == MN_HANDLE_POINT)
                mn_strbuf_printf(&b, ", \"point\": "), mn_seqdoc_w_vec(&b, &d->point.x, 3);
            mn_strbuf_printf(&b, "}");
        }
        mn_strbuf_printf(&b, "]");
    }
    if (nc) {
        mn_strbuf_printf(&b, ",\n  \"constraints\": [");
        for (int c = 0; c < nc; c++) {
            mn_strbuf_printf(&b, "%s\n", c ? "," : "");
            mn_seqdoc_write_constraint(&b, s, c);
        }
        mn_strbuf_printf(&b, "]");
    }
    mn_strbuf_printf(&b, "\n}\n");
    if (b.failed) {
        mn_strbuf_free(&b);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "figures", "out of memory");
    }
    *text = b.data;
    if (len) *len = b.len;
    return MN_OK;
}
