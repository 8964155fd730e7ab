/* Writing the contact tracks of a sequence document (docs/sequence.md "Contacts"): the
 * document of mn_seq_write_mem (sequence_doc.c), then the tracks (read in seq_contacts.c). */
#include <marionette/sequence.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/doc_internal.h"
#include "doc/seq_contacts.h"
#include "doc/seq_doc_internal.h"

static void write_list(mn_strbuf* b, const char* key, const double (*iv)[2], int n) {
    mn_strbuf_printf(b, ", \"%s\": [", key);
    for (int i = 0; i < n; i++)
        mn_strbuf_printf(b, "%s[%.17g, %.17g]", i ? ", " : "", iv[i][0], iv[i][1]);
    mn_strbuf_printf(b, "]");
}

/* Checks info's tracks against the figure as the reader would. */
mn_status mn_seq_contacts_check(const mn_model* m, const mn_seq_doc_info* info, mn_error* err) {
    if (info->ncontact < 0 || info->ncontact > MN_SEQ_CONTACT_TRACKS)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "contacts", "%d tracks (at most %d)",
                            info->ncontact, MN_SEQ_CONTACT_TRACKS);
    for (int i = 0; i < info->ncontact; i++) {
        const mn_seq_contact_track* t = &info->contact[i];
        char field[64];
        snprintf(field, sizeof field, "contacts[%d]", i);
        if (!memchr(t->joint, 0, sizeof t->joint) || mn_model_find_joint(m, t->joint) < 0)
            return mn_error_set(err, MN_ERR_ARG, NULL, 0, field, "no such joint in the figure");
        for (int toe = 0; toe < 2; toe++) {
            int n = toe ? t->ntoe : t->nheel;
            const double(*iv)[2] = toe ? t->toe : t->heel;
            if (n < 0 || n > MN_SEQ_CONTACT_MAX)
                return mn_error_set(err, MN_ERR_ARG, NULL, 0, field, "%d intervals", n);
            for (int k = 0; k < n; k++)
                if (!isfinite(iv[k][0]) || !isfinite(iv[k][1]) || iv[k][0] > iv[k][1] ||
                    (k > 0 && iv[k][0] <= iv[k - 1][1]))
                    return mn_error_set(err, MN_ERR_ARG, NULL, 0, field,
                                        "%s interval %d out of order", toe ? "toe" : "heel", k);
        }
    }
    return MN_OK;
}

void mn_seq_contacts_write(mn_strbuf* b, const mn_seq_doc_info* info, const char* ind) {
    if (info->ncontact <= 0) return;
    mn_strbuf_printf(b, ",\n%s\"contacts\": [", ind);
    for (int i = 0; i < info->ncontact; i++) {
        const mn_seq_contact_track* t = &info->contact[i];
        mn_strbuf_printf(b, "%s\n%s  {\"joint\": ", i ? "," : "", ind);
        mn_strbuf_json_str(b, t->joint);
        write_list(b, "heel", (const double(*)[2])t->heel, t->nheel);
        write_list(b, "toe", (const double(*)[2])t->toe, t->ntoe);
        mn_strbuf_printf(b, "}");
    }
    mn_strbuf_printf(b, "]");
}

mn_status mn_seq_write_doc_mem(const mn_seq* s, const mn_seq_doc_info* info, char** text,
                               size_t* len, mn_error* err) {
    if (!s || !info || !text)
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "sequence", "NULL argument");
    mn_status st = mn_seq_contacts_check(mn_seq_model(s), info, err);
    if (st != MN_OK) return st;
    if (!memchr(info->root, 0, sizeof info->root))
        return mn_error_set(err, MN_ERR_ARG, NULL, 0, "root", "not a NUL-terminated joint name");
    char* base = NULL;
    size_t blen = 0;
    if ((st = mn_seqdoc_write_mem(s, info->figure, info->scale, info->root, &base, &blen, err)) !=
        MN_OK)
        return st;
    if (info->ncontact == 0) {
        *text = base;
        if (len) *len = blen;
        return MN_OK;
    }
    /* the document without its closing brace, then the tracks */
    while (blen > 0 && (base[blen - 1] == '\n' || base[blen - 1] == ' '))
        blen--;
    if (blen > 0 && base[blen - 1] == '}') blen--; /* the document's own, one only */
    while (blen > 0 && (base[blen - 1] == '\n' || base[blen - 1] == ' '))
        blen--;
    mn_strbuf b;
    mn_strbuf_init(&b);
    mn_strbuf_printf(&b, "%.*s", (int)blen, base);
    free(base);
    mn_seq_contacts_write(&b, info, "  ");
    mn_strbuf_printf(&b, "\n}\n");
    if (b.failed) {
        mn_strbuf_free(&b);
        return mn_error_set(err, MN_ERR_NOMEM, NULL, 0, "sequence", "out of memory");
    }
    *text = b.data;
    if (len) *len = b.len;
    return MN_OK;
}
