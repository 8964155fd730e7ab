/* The contact tracks of a sequence document (docs/sequence.md "Contacts"): per foot, the
 * frames in which its heel and its toe are down, as retargeting finds them
 * (docs/retarget.md). Read with the rest of the document (sequence_doc.c calls
 * mn_seq_contacts_read); seq_contacts_write.c writes them after it. */
#include <marionette/sequence.h>

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/doc_internal.h"
#include "doc/json_locate.h"
#include "doc/seq_contacts.h"

static const char* const track_keys[] = {"joint", "heel", "toe", "comment", NULL};

mn_status mn_seq_contact_add(mn_seq_contact_track* t, int toe, double first, double last) {
    if (!t || !isfinite(first) || !isfinite(last) || first > last) return MN_ERR_ARG;
    int* n = toe ? &t->ntoe : &t->nheel;
    double(*iv)[2] = toe ? t->toe : t->heel;
    if (*n > 0 && first <= iv[*n - 1][1]) return MN_ERR_ARG;
    if (*n > 0 && first <= iv[*n - 1][1] + 1) {
        iv[*n - 1][1] = last;
        return MN_OK;
    }
    if (*n >= MN_SEQ_CONTACT_MAX) return MN_ERR_ARG;
    iv[*n][0] = first;
    iv[*n][1] = last;
    (*n)++;
    return MN_OK;
}

/* One list of intervals: [[first, last], ...]. */
static mn_status read_list(ctx* x, const cJSON* a, const char* key, double (*iv)[2], int* n) {
    *n = 0;
    if (!a) return MN_OK;
    int count;
    mn_status st = enter_array(x, a, key, MN_SEQ_CONTACT_MAX, "intervals", &count);
    if (st != MN_OK) return st;
    const cJSON* e;
    int i = 0;
    cJSON_ArrayForEach(e, a) {
        push_index(x, i);
        const cJSON* f = cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 ? e->child : NULL;
        if (!f || !cJSON_IsNumber(f) || !cJSON_IsNumber(f->next) || !isfinite(f->valuedouble) ||
            !isfinite(f->next->valuedouble))
            return fail(x, MN_ERR_PARSE, "expected [first, last] frames");
        double a0 = f->valuedouble, a1 = f->next->valuedouble;
        if (a0 > a1 || fabs(a0) > 1e9 || fabs(a1) > 1e9)
            return fail(x, MN_ERR_PARSE, "first frame %g after last frame %g, or out of range", a0,
                        a1);
        if (i > 0 && a0 <= iv[i - 1][1])
            return fail(x, MN_ERR_PARSE, "starts at %g, not after the interval before (ends at %g)",
                        a0, iv[i - 1][1]);
        iv[i][0] = a0;
        iv[i][1] = a1;
        pop(x);
        i++;
    }
    *n = i;
    pop(x);
    return MN_OK;
}

mn_status mn_seq_contacts_read(ctx* x, const cJSON* root, const mn_model* m,
                               mn_seq_doc_info* info) {
    const cJSON* a = cJSON_GetObjectItemCaseSensitive(root, "contacts");
    info->ncontact = 0;
    if (!a) return MN_OK;
    int n;
    mn_status st = enter_array(x, a, "contacts", MN_SEQ_CONTACT_TRACKS, "tracks", &n);
    if (st != MN_OK) return st;
    const cJSON* o;
    int i = 0;
    cJSON_ArrayForEach(o, a) {
        push_index(x, i);
        if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
        if ((st = check_keys(x, o, track_keys)) != MN_OK) return st;
        mn_seq_contact_track* t = &info->contact[i];
        memset(t, 0, sizeof *t);
        if ((st = get_str(x, o, "joint", t->joint, sizeof t->joint, 1, NULL)) != MN_OK) return st;
        if (mn_model_find_joint(m, t->joint) < 0) {
            char hint[256];
            push_key(x, "joint");
            return fail(x, MN_ERR_NOTFOUND, "no joint named \"%s\" in %s%s", t->joint,
                        m->name ? m->name : "the figure",
                        mn_model_joint_hint(m, t->joint, hint, sizeof hint));
        }
        for (int k = 0; k < i; k++)
            if (!strcmp(info->contact[k].joint, t->joint)) {
                push_key(x, "joint");
                return fail(x, MN_ERR_PARSE, "a second track for \"%s\"", t->joint);
            }
        if ((st = read_list(x, cJSON_GetObjectItemCaseSensitive(o, "heel"), "heel", t->heel,
                            &t->nheel)) != MN_OK ||
            (st = read_list(x, cJSON_GetObjectItemCaseSensitive(o, "toe"), "toe", t->toe,
                            &t->ntoe)) != MN_OK)
            return st;
        pop(x);
        i++;
    }
    info->ncontact = i;
    pop(x);
    return MN_OK;
}
