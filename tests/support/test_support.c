#define _DEFAULT_SOURCE
#define _XOPEN_SOURCE 700
#include "test.h"

#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
void* __wrap_malloc(size_t n) {
    alloc_calls++;
    return __real_malloc(n);
}
void* __wrap_calloc(size_t a, size_t b) {
    alloc_calls++;
    return __real_calloc(a, b);
}
void* __wrap_realloc(void* p, size_t n) {
    alloc_calls++;
    return __real_realloc(p, n);
}
void __wrap_free(void* p) {
    __real_free(p);
}
long mn_alloc_count(void) {
    return alloc_calls;
}

/* --- harness ------------------------------------------------------------------------------ */
void mn_test_init(int argc, char** argv) {
    filter = argc > 1 ? argv[1] : NULL;
}

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
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (size) *size = (size_t)n;
    }
    return buf;
}

/* --- temporary files ------------------------------------------------------------------------
 * Every temporary file of a test process lives in one private folder, $TMPDIR/mn_test_XXXXXX
 * (/tmp without TMPDIR), made on first use. The folder and everything in it, including
 * files the code under test or the command line writes next to a temporary path (a
 * writer's temporary copy, a glTF's .bin, an output folder), is removed when the process
 * exits, and on SIGINT, SIGTERM and SIGABRT (a failed assert or a sanitizer abort). */
static char temp_dir[256];
static pid_t temp_owner;

static int remove_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void temp_cleanup(void) {
    /* only the process that made the folder (a forked child that exits leaves it alone) */
    if (!temp_dir[0] || getpid() != temp_owner) return;
    nftw(temp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    temp_dir[0] = 0;
}

static void temp_signal(int sig) {
    temp_cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

const char* mn_test_temp_dir(void) {
    if (temp_dir[0]) return temp_dir;
    const char* base = getenv("TMPDIR");
    if (!base || !base[0]) base = "/tmp";
    char path[sizeof temp_dir];
    if (snprintf(path, sizeof path, "%s/mn_test_XXXXXX", base) >= (int)sizeof path) return NULL;
    if (!mkdtemp(path)) return NULL;
    memcpy(temp_dir, path, sizeof temp_dir);
    temp_owner = getpid();
    atexit(temp_cleanup);
    signal(SIGINT, temp_signal);
    signal(SIGTERM, temp_signal);
    signal(SIGABRT, temp_signal);
    return temp_dir;
}

const char* mn_test_write_temp(const char* suffix, const char* text, size_t len) {
    static char paths[8][512];
    static int slot;
    const char* dir = mn_test_temp_dir();
    if (!dir) return NULL;
    char* path = paths[slot++ % 8];
    snprintf(path, 512, "%s/mn_test_XXXXXX%s", dir, suffix ? suffix : "");
    int fd = mkstemps(path, suffix ? (int)strlen(suffix) : 0);
    if (fd < 0) return NULL;
    if (len && write(fd, text, len) != (ssize_t)len) {
        close(fd);
        remove(path);
        return NULL;
    }
    close(fd);
    return path;
}

int mn_test_run_program(const char* exe, const char* args, char** out, char** err) {
    char opath[600], epath[600];
    snprintf(opath, sizeof opath, "%s", mn_test_write_temp(".out", "", 0));
    snprintf(epath, sizeof epath, "%s", mn_test_write_temp(".err", "", 0));
    size_t cap = strlen(exe) + strlen(args) + 2048;
    char* cmd = malloc(cap);
    int st = -1;
    if (cmd) {
        snprintf(cmd, cap, "'%s' %s > '%s' 2> '%s' < /dev/null", exe, args, opath, epath);
        st = system(cmd);
        free(cmd);
    }
    *out = mn_test_read_file(opath, NULL);
    *err = mn_test_read_file(epath, NULL);
    remove(opath);
    remove(epath);
    if (!*out) *out = calloc(1, 1);
    if (!*err) *err = calloc(1, 1);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
