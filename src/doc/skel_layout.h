/* The layout of a skeleton text file, kept beside its model (src/doc/skel_layout.c), and the
 * writer that uses it (src/doc/skel_write.c). */
#ifndef MN_DOC_SKEL_LAYOUT_H
#define MN_DOC_SKEL_LAYOUT_H

#include "doc/doc_internal.h"

typedef enum sl_kind {
    SL_VERBATIM,     /* a blank or comment-only line: text as it was */
    SL_SKELETON,     /* define skeleton NAME */
    SL_END_SKELETON, /* end skeleton */
    SL_JOINT,        /* joint NAME (in the skeleton block) */
    SL_GROUP,        /* group NAME */
    SL_END_GROUP,    /* end group */
    SL_DEFINE,       /* define joint NAME */
    SL_ATTR,         /* an attribute of the block: text is its keyword */
    SL_MIRROR,       /* the name of a mirror line (after its SL_ATTR "mirror") */
    SL_END_JOINT     /* end joint */
} sl_kind;

typedef struct sl_elem {
    sl_kind kind;
    int line;
    char* text;  /* name, keyword or verbatim line (malloc'd; NULL when none) */
    char* trail; /* a comment that ended the element's line, with the spaces before it */
} sl_elem;

struct mn_skel_layout {
    sl_elem* e;
    int n, cap;
    int ends_newline;
};

/* The layout of a text the reader accepted; NULL when out of memory. */
mn_skel_layout* mn_skel_layout_capture(const char* text, size_t len);

#endif
