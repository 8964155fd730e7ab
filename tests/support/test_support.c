#define _DEFAULT_SOURCE
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mn_test_failures, mn_test_passed, mn_test_failed;
static const char* filter;

/* --- allocation counting through the linker's --wrap ------------------------------------ */
void* __real_malloc(size_t);
void* __real_calloc(size_t, size_t);
void* __real_realloc(void*, size_t);
void __real_free(void*);
void* __wrap_malloc(size_t);
void* __wrap_calloc(size_t, size_t);
void* __wrap_realloc(void*, size_t);
void __wrap_free(void*);

static long alloc_calls;
void* __wrap_malloc(size_t n) { alloc_calls++; return __real_malloc(n); }
void* __wrap_calloc(size_t a, size_t b) { alloc_calls++; return __real_calloc(a, b); }
void* __wrap_realloc(void* p, size_t n) { alloc_calls++; return __real_realloc(p, n); }
void __wrap_free(void* p) { __real_free(p); }
long mn_alloc_count(void) { return alloc_calls; }

/* --- harness ------------------------------------------------------------------------------ */
void mn_test_init(int argc, char** argv) { filter = argc > 1 ? argv[1] : NULL; }

void mn_test_run(const char* name, void (*fn)(void)) {
    if (filter && !strstr(name, filter)) return;
    mn_test_failures = 0;
    fn();
    if (mn_test_failures) {
        mn_test_failed++;
        fprintf(stderr, "FAIL %s (%d checks)\n", name, mn_test_failures);
    } else {
        mn_test_passed++;
        printf("ok   %s\n", name);
    }
}

int mn_test_report(void) {
    printf("%d passed, %d failed\n", mn_test_passed, mn_test_failed);
    return mn_test_failed ? 1 : (mn_test_passed ? 0 : 1);
}

char* mn_test_read_file(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    if (buf) { buf[n] = 0; if (size) *size = (size_t)n; }
    return buf;
}

const char* mn_test_write_temp(const char* suffix, const char* text, size_t len) {
    static char paths[8][256];
    static int slot;
    char* path = paths[slot++ % 8];
    snprintf(path, 256, "/tmp/mn_test_XXXXXX%s", suffix ? suffix : "");
    int fd = mkstemps(path, suffix ? (int)strlen(suffix) : 0);
    if (fd < 0) return NULL;
    if (len && write(fd, text, len) != (ssize_t)len) { close(fd); return NULL; }
    close(fd);
    return path;
}
