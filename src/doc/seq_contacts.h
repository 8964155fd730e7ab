/* The contact tracks of a sequence document (seq_contacts.c), read by sequence_doc.c. */
#ifndef MN_DOC_SEQ_CONTACTS_H
#define MN_DOC_SEQ_CONTACTS_H

#include <marionette/sequence.h>

#include <cjson/cJSON.h>

#include "doc/json_locate.h"

/* Reads root's "contacts" member (absent: no tracks) into info, checking each joint
 * against m; on error, names the field through x. */
mn_status mn_seq_contacts_read(ctx* x, const cJSON* root, const mn_model* m, mn_seq_doc_info* info);

#endif
