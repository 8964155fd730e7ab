/* Private to the sequence document's readers: sequence_doc.c reads a document of one figure,
 * seq_figures.c one of several (docs/sequence.md "Several figures") with sequence_doc.c's
 * readers of interpolation, keys, handles and constraints. */
#ifndef MN_DOC_SEQ_DOC_INTERNAL_H
#define MN_DOC_SEQ_DOC_INTERNAL_H

#include <marionette/sequence.h>

#include <cjson/cJSON.h>

#include "doc/doc_figures.h"
#include "doc/json_locate.h"

#define NAME_CAP 64

/* What reading a document of several figures keeps for writing it back: each placed
 * figure's root states as the document gave them and as placed (14 numbers a key, in the
 * order read: its keys, then its override layers' keys), and its "rotation" as given. */
struct mn_seq_figures_keyed {
    int n[MN_SEQ_MAX_FIGURES];
    double* q[MN_SEQ_MAX_FIGURES];
    int has_rot[MN_SEQ_MAX_FIGURES];
    double rot[MN_SEQ_MAX_FIGURES][4];
};

typedef struct reader {
    ctx x;
    const mn_model* m;
    mn_seq* s;
    char (*hname)[NAME_CAP];
    /* a document of several figures (docs/sequence.md "Several figures"): its figures, their
     * models; place: where the figure whose keys are read stands (NULL: where it is) */
    int nfig;
    const mn_doc_figure* fig;
    const mn_model* const* models;
    const mn_xform* place;
    struct mn_seq_figures_keyed* keyed; /* NULL: not kept */
    int kfig;                           /* the figure whose keys are read */
} reader;

/* The figure file `figure` (member `key`) read beneath base_dir (anywhere when trusted). */
mn_status mn_seqdoc_load_figure(ctx* x, const char* key, const char* figure, const char* base_dir,
                                int trusted, mn_model** out);
/* The "interpolation", "keys", "handles" and "constraints" members onto r->s (of r->m). */
mn_status mn_seqdoc_interpolation(reader* r, const cJSON* o);
mn_status mn_seqdoc_keys(reader* r, const cJSON* a);
mn_status mn_seqdoc_handles(reader* r, const cJSON* a);
mn_status mn_seqdoc_constraints(reader* r, const cJSON* a);
/* A library error moved onto the document field it came from. */
mn_status mn_seqdoc_lib_error(ctx* x, const mn_error* e);
/* The "layers" and "time_warp" members of o onto r->s. */
mn_status mn_seqdoc_layers_and_warp(reader* r, const cJSON* o);
/* m re-rooted at the joint named root (member key): *out, NULL when it is m's root already. */
mn_status mn_seqdoc_reroot(ctx* x, const char* key, const char* root, const mn_model* m,
                           mn_model** out);

/* ---- writing (sequence_doc.c), for the writer of several figures (seq_figures_write.c) ---- */

/* How a placed figure's keys are written: in its own frame, the document's own root state
 * where a key's is where reading placed it (keyed: n records of 14 numbers, looked up from
 * `at` on), else the placement undone. place NULL: the keys as they are. */
typedef struct mn_seqdoc_unplace {
    const mn_xform* place;
    const double* keyed;
    int n, at;
} mn_seqdoc_unplace;

/* mn_seq_write_mem with a "root" member (root NULL or "": none). */
mn_status mn_seqdoc_write_mem(const mn_seq* s, const char* figure, double scale, const char* root,
                              char** text, size_t* len, mn_error* err);
/* A number that reads back to the same bits; a JSON array of n of them. */
void mn_seqdoc_w_num(mn_strbuf* b, double v);
void mn_seqdoc_w_vec(mn_strbuf* b, const double* v, int n);
/* ",\n<ind>\"interpolation\": ...,\n<ind>\"keys\": [...]" of s (u may be NULL). */
void mn_seqdoc_write_interp_keys(mn_strbuf* b, const mn_seq* s, const char* ind,
                                 mn_seqdoc_unplace* u);
/* ",\n<ind>\"layers\": [...]" (nothing without layers): override layers' keys through u. */
void mn_seqdoc_write_layers(mn_strbuf* b, const mn_seq* s, const char* ind, mn_seqdoc_unplace* u);
/* sep then "\"time_warp\": [...]" (nothing without a warp). */
void mn_seqdoc_write_warp(mn_strbuf* b, const mn_seq* s, const char* sep);
/* Constraint c of s as one object (its handles by name), indented 4. */
void mn_seqdoc_write_constraint(mn_strbuf* b, const mn_seq* s, int c);
/* The name a handle is written with ("handle N" when it has none); buf holds NAME_CAP. */
const char* mn_seqdoc_handle_name(const mn_seq* s, int h, char* buf);

#endif
