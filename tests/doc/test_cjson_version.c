/* The cJSON compiled into the WebAssembly module (third_party/cjson, a copy of Debian's source
 * package) is the version the native build links (Debian's libcjson): the copy's version
 * macros are what the linked library's cJSON_Version() says, and the copy's header is the
 * installed header byte for byte (the same declarations, the same types). */
#include "test.h"

#include MN_CJSON_COPY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char* slurp(const char* path, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    char* buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            char* p = realloc(buf, cap = cap ? 2 * cap : 65536);
            if (!p) break;
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    fclose(f);
    *len = n;
    return buf;
}

static void test_same_version(void) {
    char copy[32];
    snprintf(copy, sizeof copy, "%d.%d.%d", CJSON_VERSION_MAJOR, CJSON_VERSION_MINOR,
             CJSON_VERSION_PATCH);
    const char* linked = cJSON_Version();
    CHECK(strcmp(copy, linked) == 0);
    if (strcmp(copy, linked) != 0)
        fprintf(stderr, "third_party/cjson is %s, the linked libcjson is %s\n", copy, linked);
}

static void test_same_header(void) {
    size_t a = 0, b = 0;
    char* copy = slurp(MN_CJSON_COPY_H, &a);
    char* sys = slurp(MN_CJSON_SYSTEM_H, &b);
    CHECK(copy != NULL && sys != NULL);
    CHECK(a == b && a > 1000);
    CHECK(copy && sys && a == b && memcmp(copy, sys, a) == 0);
    free(copy);
    free(sys);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_same_version);
    RUN(test_same_header);
    return mn_test_report();
}
