/* Sequence documents of several figures (docs/sequence.md "Several figures"; Welman 6.1,
 * 7.3): the scene document's "figures" array (doc_figures.c), each figure with its own
 * interpolation and keys, handles "figure/joint" and constraints over all of them, read onto
 * one sequence per figure (mn_seq_set_figures). */
#include <marionette/sequence.h>

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/doc_codecs.h"
#include "doc/doc_internal.h"
#include "doc/seq_contacts.h"
#include "doc/seq_doc_internal.h"

static const char* const figs_root_keys[] = {"figures",     "fps",     "handles",
                                             "constraints", "comment", NULL};
static const char* const figs_entry_keys[] = {"name",      "file",          "root",    "position",
                                              "rotation",  "interpolation", "keys",    "layers",
                                              "time_warp", "contacts",      "comment", NULL};

/* Members of a one-figure document that a document of several figures refuses, and why. */
static mn_status refuse_members(ctx* x, const cJSON* root) {
    static const char* const why[][2] = {
        {"figure", "with \"figures\", each figure names its own \"file\""},
        {"scale", "with \"figures\", a figure is read at its own scale (no \"scale\")"},
        {"keys", "with \"figures\", each figure has its own \"keys\""},
        {"interpolation", "with \"figures\", each figure has its own \"interpolation\""},
        {"root", "with \"figures\", each figure names its own \"root\""},
        {"layers", "with \"figures\", each figure has its own \"layers\""},
        {"time_warp", "with \"figures\", each figure has its own \"time_warp\""},
        {"contacts", "with \"figures\", each figure has its own \"contacts\""}};
    for (size_t k = 0; k < sizeof why / sizeof why[0]; k++)
        if (cJSON_GetObjectItemCaseSensitive(root, why[k][0])) {
            push_key(x, why[k][0]);
            return fail(x, MN_ERR_PARSE, "%s", why[k][1]);
        }
    return check_keys(x, root, figs_root_keys);
}

/* Figure i of the document: its file read and re-rooted at its "root", its sequence made
 * (room for the document's handles and constraints on figure 0's), its interpolation, keys,
 * layers, time warp and contact tracks read, the keys moved where the figure stands. */
static mn_status read_one_figure(reader* r, const cJSON* o, const mn_doc_figure* f,
                                 const mn_seq_def* def, const char* base_dir, int trusted,
                                 mn_seq_figures* out) {
    ctx* x = &r->x;
    int i = out->n;
    mn_status st = mn_seqdoc_load_figure(x, "file", f->file, base_dir, trusted, &out->model[i]);
    out->n++; /* counted now: a figure read is freed on failure */
    if (st != MN_OK) return st;
    if (!(out->info[i] = calloc(1, sizeof *out->info[i])))
        return mn_error_set(x->err, MN_ERR_NOMEM, x->file, 0, "figures", "out of memory");
    mn_seq_doc_info* info = out->info[i];
    snprintf(info->figure, sizeof info->figure, "%.255s", f->file);
    if (f->root[0]) { /* the root it was written with */
        snprintf(info->root, sizeof info->root, "%s", f->root);
        mn_model* rm = NULL;
        if ((st = mn_seqdoc_reroot(x, "root", f->root, out->model[i], &rm)) != MN_OK) return st;
        if (rm) {
            mn_model_destroy(out->model[i]);
            out->model[i] = rm;
        }
    }
    const mn_model* m = out->model[i];
    mn_xform I = mn_xform_identity();
    r->place = memcmp(&f->place, &I, sizeof I) ? &f->place : NULL;
    if (r->place && (m->jnt_type[0] != MN_JOINT_FREE || m->nroot != 1)) {
        push_key(x, cJSON_GetObjectItemCaseSensitive(o, "position") ? "position" : "rotation");
        return fail(x, MN_ERR_PARSE,
                    "a figure whose root is not free cannot be placed (its keys hold no root "
                    "position)");
    }
    mn_error e;
    mn_seq_def d = *def;
    if (i > 0) d.max_handles = d.max_constraints = 1;
    if (!(out->seq[i] = mn_seq_create(m, &d, &e)))
        return mn_error_set(x->err, e.status, x->file, 0, e.field, "%s", e.message);
    snprintf(out->name[i], sizeof out->name[i], "%s", f->name);
    snprintf(out->file[i], sizeof out->file[i], "%.255s", f->file);
    out->place[i] = f->place;
    r->m = m;
    r->s = out->seq[i];
    const cJSON* in = cJSON_GetObjectItemCaseSensitive(o, "interpolation");
    if (in && (st = mn_seqdoc_interpolation(r, in)) != MN_OK) return st;
    const cJSON* keys = cJSON_GetObjectItemCaseSensitive(o, "keys");
    if (!keys) return fail(x, MN_ERR_PARSE, "missing member \"keys\"");
    r->kfig = i;
    if (f->has_rot) {
        r->keyed->has_rot[i] = 1;
        memcpy(r->keyed->rot[i], f->rot, sizeof f->rot);
    }
    st = mn_seqdoc_keys(r, keys);
    /* its layers and time warp (layers.h), applied to this figure alone; its contact tracks */
    if (st == MN_OK) st = mn_seqdoc_layers_and_warp(r, o);
    r->place = NULL;
    if (st == MN_OK) st = mn_seq_contacts_read(x, o, m, info);
    return st;
}

static mn_status parse_figures(reader* r, const cJSON* root, const char* base_dir, int trusted,
                               mn_seq_figures* out) {
    ctx* x = &r->x;
    if (!cJSON_IsObject(root)) return fail(x, MN_ERR_PARSE, "a sequence document is a JSON object");
    mn_status st = refuse_members(x, root);
    if (st != MN_OK) return st;
    mn_seq_def def = mn_seq_def_default();
    if ((st = get_num(x, root, "fps", &def.fps, 1e-6, 1e6)) != MN_OK) return st;
    const cJSON *af, *hs = cJSON_GetObjectItemCaseSensitive(root, "handles"),
                     *cs = cJSON_GetObjectItemCaseSensitive(root, "constraints");
    int nf;
    if ((st = mn_doc_figures_array(x, root, &af, &nf)) != MN_OK) return st;
    mn_doc_figure* figs = NULL;
    if (!(out->keyed = calloc(1, sizeof *out->keyed)))
        return mn_error_set(x->err, MN_ERR_NOMEM, x->file, 0, "figures", "out of memory");
    r->keyed = out->keyed;
    if ((st = mn_doc_read_figures(x, af, nf, figs_entry_keys, 0, &figs)) != MN_OK) {
        free(figs);
        return st;
    }
    def.max_handles = cJSON_IsArray(hs) ? cJSON_GetArraySize(hs) + 1 : 1;
    def.max_constraints = cJSON_IsArray(cs) ? cJSON_GetArraySize(cs) + 1 : 1;
    if (def.max_handles > 4097 || def.max_constraints > 4097)
        def.max_handles = def.max_constraints = 4096;
    push_key(x, "figures");
    int i = 0;
    const cJSON* o;
    cJSON_ArrayForEach(o, af) {
        push_index(x, i);
        if ((st = read_one_figure(r, o, &figs[i], &def, base_dir, trusted, out)) != MN_OK) break;
        pop(x);
        i++;
    }
    mn_error e;
    if (st == MN_OK &&
        mn_seq_set_figures(out->seq[0], nf, (const mn_seq* const*)out->seq + 1, &e) != MN_OK)
        st = mn_seqdoc_lib_error(x, &e);
    if (st == MN_OK) {
        pop(x);
        r->nfig = nf;
        r->fig = figs;
        r->models = (const mn_model* const*)out->model;
        r->m = out->model[0];
        r->s = out->seq[0];
        if (hs) st = mn_seqdoc_handles(r, hs);
        if (st == MN_OK && cs) st = mn_seqdoc_constraints(r, cs);
    }
    free(figs);
    r->fig = NULL;
    return st;
}

void mn_seq_figures_free(mn_seq_figures* f) {
    if (!f) return;
    for (int i = 0; i < f->n; i++)
        mn_seq_destroy(f->seq[i]); /* figure 0's refers to the others: destroyed first */
    for (int i = 0; i < f->n; i++) {
        mn_model_destroy(f->model[i]);
        free(f->info[i]);
    }
    if (f->keyed)
        for (int i = 0; i < MN_SEQ_MAX_FIGURES; i++)
            free(f->keyed->q[i]);
    free(f->keyed);
    memset(f, 0, sizeof *f);
}

/* A one-figure document read as a document of one figure (named after its file). */
static mn_status read_figures_one(const char* text, size_t len, const char* name,
                                  const char* base_dir, const mn_doc_files* files,
                                  const mn_seq_read_options* opt, mn_seq_figures* out,
                                  mn_error* err) {
    mn_seq_doc_info* info = calloc(1, sizeof *info);
    if (!info) return mn_error_set(err, MN_ERR_NOMEM, name, 0, "sequence", "out of memory");
    mn_status st = mn_seqdoc_read_mem(text, len, name, base_dir, files, opt, NULL, &out->model[0],
                                      &out->seq[0], info, NULL, err);
    if (st != MN_OK) {
        free(info);
        return st;
    }
    out->n = 1;
    out->info[0] = info;
    snprintf(out->file[0], sizeof out->file[0], "%s", info->figure);
    const char* base = strrchr(info->figure, '/');
    snprintf(out->name[0], sizeof out->name[0], "%.63s", base ? base + 1 : info->figure);
    out->place[0] = mn_xform_identity();
    return MN_OK;
}

mn_status mn_seqdoc_read_figures_mem(const char* text, size_t len, const char* name,
                                     const char* base_dir, const mn_doc_files* files,
                                     const mn_seq_read_options* opt, mn_seq_figures* out,
                                     mn_error* err) {
    mn_error_clear(err);
    if (!out) return mn_error_set(err, MN_ERR_ARG, name, 0, "sequence", "NULL output");
    memset(out, 0, sizeof *out);
    if (!text) return mn_error_set(err, MN_ERR_ARG, name, 0, "sequence", "NULL text");
    const char* fname = name ? name : "sequence";
    cJSON* root = parse_json(text, len, fname, err);
    if (!root) return MN_ERR_PARSE;
    if (!cJSON_GetObjectItemCaseSensitive(root, "figures")) {
        cJSON_Delete(root);
        return read_figures_one(text, len, name, base_dir, files, opt, out, err);
    }
    reader r;
    memset(&r, 0, sizeof r);
    r.x.file = fname;
    r.x.text = text;
    r.x.len = len;
    r.x.err = err;
    r.x.doc = "sequence";
    r.x.files = mn_doc_files_or_none(files);
    mn_status st = parse_figures(&r, root, base_dir, opt && opt->trusted, out);
    cJSON_Delete(root);
    free(r.hname);
    if (st != MN_OK) mn_seq_figures_free(out);
    return st;
}
