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

#endif
