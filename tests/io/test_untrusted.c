/* Untrusted inputs at the io layer: the one way to read a file an asset names
 * (mn_read_file_beneath) against a table of hostile URIs, in both of its modes (openat2 and
 * the realpath check), and mn_read_file on a FIFO and on a file larger than the limit. */
#define _GNU_SOURCE
#include "io/io_internal.h"
#include "test.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A reader that waits on a FIFO would hang the test: fail it instead (SIGABRT also removes
 * the temporary folder). */
static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "test_untrusted: a read blocked\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(1);
    abort();
}

static char root[512], asset[600];

static void put(const char* rel, const char* text) {
    char p[800];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE* f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* root/secret (outside), root/asset/{a.bin, sp ace.bin, sub/b.bin, link -> ../secret,
 * abs -> root/secret, fifo, dirlink -> ..}. */
static int make_tree(void) {
    const char* t = mn_test_temp_dir();
    if (!t) return 0;
    snprintf(root, sizeof root, "%s/untrusted", t);
    snprintf(asset, sizeof asset, "%s/asset", root);
    char p[800], q[800];
    if (mkdir(root, 0700) != 0 || mkdir(asset, 0700) != 0) return 0;
    snprintf(p, sizeof p, "%s/sub", asset);
    if (mkdir(p, 0700) != 0) return 0;
    put("secret", "SECRET");
    put("asset/a.bin", "INSIDE");
    put("asset/sp ace.bin", "SPACE");
    put("asset/sub/b.bin", "SUB");
    snprintf(p, sizeof p, "%s/link", asset);
    if (symlink("../secret", p) != 0) return 0;
    snprintf(p, sizeof p, "%s/abs", asset);
    snprintf(q, sizeof q, "%s/secret", root);
    if (symlink(q, p) != 0) return 0;
    snprintf(p, sizeof p, "%s/dirlink", asset);
    if (symlink("..", p) != 0) return 0;
    snprintf(p, sizeof p, "%s/fifo", asset);
    if (mkfifo(p, 0600) != 0) return 0;
    return 1;
}

typedef struct uri_case {
    const char* uri;
    const char* want; /* the content, or NULL: refused */
    const char* says; /* part of the message when refused */
} uri_case;

static const uri_case cases[] = {
    {"a.bin", "INSIDE", NULL},
    {"./a.bin", "INSIDE", NULL},
    {"sub/b.bin", "SUB", NULL},
    {"sub/./b.bin", "SUB", NULL},
    {"sp%20ace.bin", "SPACE", NULL},
    {"%61.bin", "INSIDE", NULL},
    {"../secret", NULL, ".."},
    {"..", NULL, ".."},
    {"sub/../a.bin", NULL, ".."},
    {"sub/../../secret", NULL, ".."},
    {"%2E%2E/secret", NULL, ".."},
    {".%2e/secret", NULL, ".."},
    {"sub%2F..%2F..%2Fsecret", NULL, ".."},
    {"/etc/passwd", NULL, "absolute"},
    {"%2Fetc%2Fpasswd", NULL, "absolute"},
    {"%2fetc/passwd", NULL, "absolute"},
    {"..\\secret", NULL, "backslash"},
    {"sub%5C..%5C..%5Csecret", NULL, "backslash"},
    {"\\etc\\passwd", NULL, "backslash"},
    {"file:///etc/passwd", NULL, "relative"},
    {"file:secret", NULL, "relative"},
    {"C:/secret", NULL, "relative"},
    {"http://example.com/x.bin", NULL, "relative"},
    {"link", NULL, "out of"},
    {"abs", NULL, "out of"},
    {"dirlink/secret", NULL, "out of"},
    {"fifo", NULL, "not a regular file"},
    {"sub", NULL, "not a regular file"},
    {"a.bin%00.png", NULL, "percent"},
    {"%zz", NULL, "percent"},
    {"a.bin%", NULL, "percent"},
    {"a.bin%4", NULL, "percent"},
    {"", NULL, "empty"},
    {"missing.bin", NULL, "cannot open"},
};

static void run_cases(int fallback) {
    mn_io_beneath_force_fallback(fallback);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uri_case* c = &cases[i];
        char* data = (char*)1;
        size_t len = 99;
        mn_error e;
        mn_status s = mn_read_file_beneath(asset, c->uri, 0, &data, &len, &e);
        if (c->want) {
            int ok = s == MN_OK && data && len == strlen(c->want) && !strcmp(data, c->want);
            if (!ok) fprintf(stderr, "  uri '%s' (fallback %d): %s\n", c->uri, fallback, s ? e.message : data);
            CHECK(ok);
        } else {
            int ok = s != MN_OK && data == NULL && len == 0 && strstr(e.message, c->says) &&
                     /* the URI as written, never the folder or the resolved path */
                     strstr(e.message, c->uri) && !strstr(e.message, root);
            if (!ok) fprintf(stderr, "  uri '%s' (fallback %d): %s\n", c->uri, fallback, s ? e.message : data);
            CHECK(ok);
        }
        if (s == MN_OK) free(data);
    }
    mn_io_beneath_force_fallback(0);
}

static void test_uris_beneath(void) {
    CHECK(make_tree());
    alarm(20);
    run_cases(0);
    run_cases(1);
    alarm(0);
    /* "" is the current folder: a relative URI is read from there, never above it. */
    char* data;
    mn_error e;
    CHECK(mn_read_file_beneath("", "../x", 0, &data, NULL, &e) == MN_ERR_IO);
    /* The size limit is checked before reading. */
    CHECK(mn_read_file_beneath(asset, "a.bin", 3, &data, NULL, &e) == MN_ERR_IO &&
          strstr(e.message, "too large") && !strstr(e.message, root));
    CHECK(mn_read_file_beneath(asset, "a.bin", 6, &data, NULL, &e) == MN_OK && !strcmp(data, "INSIDE"));
    free(data);
}

static void test_read_file_fifo(void) {
    char p[800];
    snprintf(p, sizeof p, "%s/fifo2", mn_test_temp_dir());
    CHECK(mkfifo(p, 0600) == 0);
    alarm(20);
    char* data = (char*)1;
    mn_error e;
    CHECK(mn_read_file(p, &data, NULL, &e) == MN_ERR_IO && data == NULL &&
          strstr(e.message, "not a regular file") && strstr(e.message, p));
    alarm(0);
    unlink(p);
}

static void test_read_file_too_large(void) {
    /* A sparse 3 GB file: refused from its size, nothing allocated or read. */
    char p[800];
    snprintf(p, sizeof p, "%s/huge.bvh", mn_test_temp_dir());
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    if (fd < 0) return;
    int grown = ftruncate(fd, (off_t)3 << 30) == 0;
    close(fd);
    CHECK(grown);
    char* data = (char*)1;
    size_t len = 1;
    mn_error e;
    long before = mn_alloc_count();
    CHECK(mn_read_file(p, &data, &len, &e) == MN_ERR_IO && data == NULL && len == 0 &&
          strstr(e.message, "too large") && strstr(e.message, p));
    CHECK(mn_alloc_count() == before);
    /* Every reader goes through it: a figure reader says the same. */
    mn_model* m = (mn_model*)1;
    CHECK(mn_figure_read(p, &m, NULL, NULL, &e) == MN_ERR_IO && m == NULL && strstr(e.message, "too large"));
    unlink(p);
}

int main(int argc, char** argv) {
    signal(SIGALRM, on_alarm);
    mn_test_init(argc, argv);
    RUN(test_uris_beneath);
    RUN(test_read_file_fifo);
    RUN(test_read_file_too_large);
    return mn_test_report();
}
