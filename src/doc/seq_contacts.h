/* The contact tracks of a sequence document (seq_contacts.c), read by sequence_doc.c. */
#ifndef MN_DOC_SEQ_CONTACTS_H
#define MN_DOC_SEQ_CONTACTS_H

#include <marionette/sequence.h>

#include <cjson/cJSON.h>

#include "doc/json_locate.h"

/* Reads root's "contacts" member (absent: no tracks) into info, checking each joint
 * against m; on error, names the field through x. */
mn_status mn_seq_contacts_read(ctx* x, const cJSON* root, const mn_model* m, mn_seq_doc_info* info);

/* Checks info's tracks against m as the reader would (MN_ERR_ARG naming "contacts[i]"). */
mn_status mn_seq_contacts_check(const mn_model* m, const mn_seq_doc_info* info, mn_error* err);

/* ",\n<ind>\"contacts\": [...]" of info's tracks (nothing without any). */
struct mn_strbuf;
void mn_seq_contacts_write(struct mn_strbuf* b, const mn_seq_doc_info* info, const char* ind);

#endif
