/* How BVH joint names are written: without whitespace, so that readers that split lines
 * on it (Blender's among them) read a name as one word (docs/bvh.md, "Names"). */
#include "doc/bvh_internal.h"
#include "doc/doc_internal.h"

#include <stdlib.h>
#include <string.h>

/* Length of the whitespace character at s (ASCII or Unicode: every character Python's
 * str.split() splits on, as Blender's importer tokenises with it), or 0. */
static int space_len(const unsigned char* s) {
    if (s[0] == ' ' || (s[0] >= 0x09 && s[0] <= 0x0D) || (s[0] >= 0x1C && s[0] <= 0x1F)) return 1;
    if (s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) return 2;
    if (s[0] == 0xE1 && s[1] == 0x9A && s[2] == 0x80) return 3; /* U+1680 */
    if (s[0] == 0xE2 && s[1] == 0x80 &&
        ((s[2] >= 0x80 && s[2] <= 0x8A) || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF))
        return 3; /* U+2000..U+200A, U+2028, U+2029, U+202F */
    if (s[0] == 0xE2 && s[1] == 0x81 && s[2] == 0x9F) return 3; /* U+205F */
    if (s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80) return 3; /* U+3000 */
    return 0;
}

char* mn_bvh_name_written(const char* name) {
    size_t n = strlen(name);
    char* out = malloc(n + 1);
    if (!out) return NULL;
    size_t k = 0;
    const unsigned char* u = (const unsigned char*)name;
    for (size_t i = 0; i < n;) {
        int l = space_len(u + i);
        if (l) {
            out[k++] = '_';
            i += (size_t)l;
        } else {
            out[k++] = name[i++];
        }
    }
    out[k] = 0;
    return out;
}
