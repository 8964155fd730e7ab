/* The "figures" array shared by scene and sequence documents (doc_figures.h; Welman 6.1,
 * 7.3: several figures in one document, constraints between them). */
#include "doc/doc_figures.h"

#include <stdlib.h>
#include <string.h>

mn_status mn_doc_figures_array(ctx* x, const cJSON* root, const cJSON** a, int* n) {
    *a = cJSON_GetObjectItemCaseSensitive(root, "figures");
    *n = 0;
    if (!*a) return MN_OK;
    mn_status st = enter_array(x, *a, "figures", 4096, NULL, n);
    if (st != MN_OK) return st;
    if (*n == 0) return fail(x, MN_ERR_PARSE, "an empty list of figures");
    if (*n > MN_DOC_MAX_FIGURES)
        return fail(x, MN_ERR_PARSE, "more than %d figures", MN_DOC_MAX_FIGURES);
    pop(x);
    return MN_OK;
}

static mn_status read_figure(ctx* x, const cJSON* o, const char* const* keys, int with_sequence,
                             const mn_doc_figure* prev, int nprev, mn_doc_figure* f) {
    if (!cJSON_IsObject(o)) return fail(x, MN_ERR_PARSE, "expected an object");
    mn_status st = check_keys(x, o, keys);
    if (st != MN_OK) return st;
    if ((st = get_str(x, o, "name", f->name, sizeof f->name, 1, NULL)) != MN_OK) return st;
    if (!f->name[0] || strchr(f->name, '/')) {
        push_key(x, "name");
        return fail(x, MN_ERR_PARSE, "a figure's name is not empty and has no '/'");
    }
    for (int i = 0; i < nprev; i++)
        if (!strcmp(prev[i].name, f->name)) {
            push_key(x, "name");
            return fail(x, MN_ERR_PARSE, "duplicate figure name \"%s\"", f->name);
        }
    int has_file = 0, has_seq = 0;
    if ((st = get_str(x, o, "file", f->file, sizeof f->file, !with_sequence, &has_file)) != MN_OK)
        return st;
    if (with_sequence) {
        if ((st = get_str(x, o, "sequence", f->sequence, sizeof f->sequence, 0, &has_seq)) != MN_OK)
            return st;
        if (has_file + has_seq != 1)
            return fail(x, MN_ERR_PARSE,
                        "a figure has exactly one of \"file\" and \"sequence\" (a sequence "
                        "document, which names its figure)");
    }
    if ((st = get_str(x, o, "root", f->root, sizeof f->root, 0, NULL)) != MN_OK) return st;
    int has = 0;
    f->place = mn_xform_identity();
    if ((st = get_v3(x, o, "position", &f->place.p, &has)) != MN_OK) return st;
    double q[4];
    if ((st = get_quat(x, o, "rotation", q, &has)) != MN_OK) return st;
    if (has) {
        f->has_rot = 1;
        memcpy(f->rot, q, sizeof q);
        mn_quat r = mn_quat_normalize(mn_q4(q[0], q[1], q[2], q[3]));
        f->place.R = mn_quat_to_mat3(r);
    }
    return MN_OK;
}

mn_status mn_doc_read_figures(ctx* x, const cJSON* a, int n, const char* const* keys,
                              int with_sequence, mn_doc_figure** out) {
    *out = calloc((size_t)(n > 0 ? n : 1), sizeof(mn_doc_figure));
    if (!*out) return mn_error_set(x->err, MN_ERR_NOMEM, x->file, 0, "figures", "out of memory");
    push_key(x, "figures");
    int i = 0;
    const cJSON* it;
    cJSON_ArrayForEach(it, a) {
        if (i >= n) break;
        push_index(x, i);
        mn_status st = read_figure(x, it, keys, with_sequence, *out, i, &(*out)[i]);
        if (st != MN_OK) return st;
        pop(x);
        i++;
    }
    pop(x);
    return MN_OK;
}

int mn_doc_joint_figure(const mn_doc_figure* f, int n, const char* joint, const char* figure,
                        const char** jname) {
    *jname = joint;
    const char* slash = joint ? strchr(joint, '/') : NULL;
    if (slash)
        for (int i = 0; i < n; i++)
            if (strlen(f[i].name) == (size_t)(slash - joint) &&
                !strncmp(f[i].name, joint, (size_t)(slash - joint))) {
                *jname = slash + 1;
                return i;
            }
    if (figure && figure[0]) {
        for (int i = 0; i < n; i++)
            if (!strcmp(f[i].name, figure)) return i;
        return -1;
    }
    return n == 1 ? 0 : -2;
}
