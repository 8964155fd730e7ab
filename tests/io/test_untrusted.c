/* Untrusted inputs at the io layer: the one way to read a file an asset names
 * (mn_read_file_beneath) against a table of hostile URIs, in both of its modes (openat2 and
 * the realpath check), and mn_read_file on a FIFO and on a file larger than the limit. */
#define _GNU_SOURCE
#include "io/io_internal.h"
#include <marionette/gltf.h>
#include <marionette/meshio.h>
#include <marionette/retarget.h>
#include <marionette/scene.h>
#include <marionette/sequence.h>
#include "test.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
            if (!ok)
                fprintf(stderr, "  uri '%s' (fallback %d): %s\n", c->uri, fallback,
                        s ? e.message : data);
            CHECK(ok);
        } else {
            int ok = s != MN_OK && data == NULL && len == 0 && strstr(e.message, c->says) &&
                     /* the URI as written, never the folder or the resolved path */
                     strstr(e.message, c->uri) && !strstr(e.message, root);
            if (!ok)
                fprintf(stderr, "  uri '%s' (fallback %d): %s\n", c->uri, fallback,
                        s ? e.message : data);
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
    CHECK(mn_read_file_beneath("", "../x", 0, &data, NULL, &e) == MN_ERR_UNSUPPORTED);
    /* The size limit is checked before reading. */
    CHECK(mn_read_file_beneath(asset, "a.bin", 3, &data, NULL, &e) == MN_ERR_IO &&
          strstr(e.message, "too large") && !strstr(e.message, root));
    CHECK(mn_read_file_beneath(asset, "a.bin", 6, &data, NULL, &e) == MN_OK &&
          !strcmp(data, "INSIDE"));
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
    CHECK(mn_figure_read(p, &m, NULL, NULL, &e) == MN_ERR_IO && m == NULL &&
          strstr(e.message, "too large"));
    unlink(p);
}

/* Number of names in dir that contain ".tmp" (a writer's leftover temporary). */
static int temporaries_in(const char* dir) {
    DIR* d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent* e; (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, ".tmp")) n++;
    closedir(d);
    return n;
}

static char wdir[600];

/* A path in the writers' folder (made on first use); 16 slots, reused in turn. */
static const char* wpath(const char* name) {
    static char p[16][800];
    static int slot;
    if (!wdir[0]) {
        snprintf(wdir, sizeof wdir, "%s/writer", mn_test_temp_dir());
        CHECK(mkdir(wdir, 0700) == 0);
    }
    slot = (slot + 1) % 16;
    snprintf(p[slot], sizeof p[slot], "%s/%s", wdir, name);
    return p[slot];
}

static int file_is(const char* path, const char* text) {
    char* t = mn_test_read_file(path, NULL);
    int same = t && !strcmp(t, text);
    free(t);
    return same;
}

static void test_writer_refuses_non_regular(void) {
    mn_error e;
    /* a symlink: neither followed nor replaced */
    FILE* f = fopen(wpath("target.txt"), "wb");
    CHECK(f != NULL);
    if (f) {
        fputs("TARGET", f);
        fclose(f);
    }
    CHECK(symlink("target.txt", wpath("link.txt")) == 0);
    CHECK(mn_write_file_atomic(wpath("link.txt"), "NEW", 3, &e) == MN_ERR_IO &&
          strstr(e.message, "symbolic link"));
    struct stat st;
    CHECK(lstat(wpath("link.txt"), &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(file_is(wpath("target.txt"), "TARGET"));
    /* a FIFO (as a device would be): not turned into a file, and no wait on it */
    CHECK(mkfifo(wpath("pipe"), 0600) == 0);
    alarm(20);
    CHECK(mn_write_file_atomic(wpath("pipe"), "NEW", 3, &e) == MN_ERR_IO &&
          strstr(e.message, "not a regular file"));
    alarm(0);
    CHECK(lstat(wpath("pipe"), &st) == 0 && S_ISFIFO(st.st_mode));
    /* a folder */
    CHECK(mkdir(wpath("folder"), 0700) == 0);
    CHECK(mn_write_file_atomic(wpath("folder"), "NEW", 3, &e) == MN_ERR_IO);
    CHECK(lstat(wpath("folder"), &st) == 0 && S_ISDIR(st.st_mode));
    /* a character device, when there is one to try (never written: refused first) */
    if (stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode))
        CHECK(mn_write_file_atomic("/dev/null", "NEW", 3, &e) == MN_ERR_IO &&
              strstr(e.message, "not a regular file"));
    CHECK(temporaries_in(wdir) == 0);
}

static void test_writer_keeps_mode(void) {
    mn_error e;
    const mode_t modes[] = {0600, 0640, 0755};
    for (int i = 0; i < 3; i++) {
        const char* p = wpath("moded.txt");
        CHECK(mn_write_file_atomic(p, "A", 1, &e) == MN_OK);
        CHECK(chmod(p, modes[i]) == 0);
        CHECK(mn_write_file_atomic(p, "BB", 2, &e) == MN_OK);
        struct stat st;
        CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == modes[i]);
        CHECK(file_is(p, "BB"));
        unlink(p);
    }
    /* a new file: 0666 less the umask */
    mode_t mask = umask(022);
    CHECK(mn_write_file_atomic(wpath("fresh.txt"), "C", 1, &e) == MN_OK);
    umask(mask);
    struct stat st;
    CHECK(stat(wpath("fresh.txt"), &st) == 0 && (st.st_mode & 0777) == 0644);
    unlink(wpath("fresh.txt"));
    /* a failure leaves no temporary: a folder that does not exist */
    CHECK(mn_write_file_atomic(wpath("nosuch/x.txt"), "C", 1, &e) == MN_ERR_IO);
    CHECK(temporaries_in(wdir) == 0);
}

/* A set of files: all or nothing. One refused output, or a disk that fills up (a file size
 * limit in a child process) on the last file, leaves every old file whole and no
 * temporary. */
static void test_writer_set_all_or_nothing(void) {
    mn_error e;
    const char* paths[3] = {wpath("s1.txt"), wpath("s2.txt"), wpath("s3.txt")};
    const char* old[3] = {"old1", "old2", "old3"};
    size_t lens[3] = {4, 4, 4};
    CHECK(mn_write_files_atomic(3, paths, old, lens, &e) == MN_OK);
    for (int i = 0; i < 3; i++)
        CHECK(file_is(paths[i], old[i]));
    /* the third output is a symlink: nothing written */
    CHECK(symlink("s1.txt", wpath("s4.txt")) == 0);
    const char* paths2[3] = {paths[0], paths[1], wpath("s4.txt")};
    const char* neu[3] = {"new1", "new2", "new3"};
    CHECK(mn_write_files_atomic(3, paths2, neu, lens, &e) == MN_ERR_IO &&
          strstr(e.message, "s4.txt"));
    for (int i = 0; i < 3; i++)
        CHECK(file_is(paths[i], old[i]));
    CHECK(temporaries_in(wdir) == 0);
    /* a full disk on the last file */
    static char big[1 << 16];
    memset(big, 'x', sizeof big);
    const char* data3[3] = {"new1", "new2", big};
    size_t lens3[3] = {4, 4, sizeof big};
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {4096, 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        mn_status st = mn_write_files_atomic(3, paths, data3, lens3, &e);
        if (st != MN_ERR_IO || !strstr(e.message, "s3.txt"))
            fprintf(stderr, "  child: %d %s\n", st, e.message);
        _exit(st == MN_ERR_IO && strstr(e.message, "s3.txt") ? 0 : 1);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(file_is(paths[i], old[i]));
    CHECK(temporaries_in(wdir) == 0);
}

/* A run killed (SIGTERM, SIGINT) while it writes leaves no temporary behind. */
static void test_writer_killed(void) {
    size_t n = (size_t)8 << 20;
    char* big = malloc(n);
    CHECK(big != NULL);
    if (!big) return;
    memset(big, 'y', n);
    const char* target = wpath("killed.bin"); /* made here, not in a child */
    const int sigs[2] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        for (int delay = 0; delay < 4; delay++) {
            pid_t pid = fork();
            if (pid == 0) {
                signal(SIGTERM, SIG_DFL);
                signal(SIGINT, SIG_DFL);
                mn_error e;
                for (;;)
                    if (mn_write_file_atomic(target, big, n, &e) != MN_OK) _exit(3);
            }
            usleep(20000 + 15000 * (useconds_t)delay);
            kill(pid, sigs[k]);
            int status = 0;
            CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
                  WTERMSIG(status) == sigs[k]);
            int left = temporaries_in(wdir);
            if (left != 0)
                fprintf(stderr, "  signal %d after %d ms: %d temporaries left\n", sigs[k],
                        20 + 15 * delay, left);
            CHECK(left == 0);
        }
    }
    unlink(target);
    free(big);
}

/* A BVH figure without channels: its frames are its empty lines, never the Frames line
 * alone (a 121-byte file saying 1e8 frames made `convert` write 100 MB). */
static void test_bvh_no_channels(void) {
    const char* head =
        "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 0\n End Site\n {\n  OFFSET 0 1 0\n }\n}\n"
        "MOTION\nFrames: %s\nFrame Time: 0.033\n%s";
    struct {
        const char* frames;
        const char* rows;
        int want;
    } cases[] = {
        {"100000000", "", 0}, {"100000000", "\n\n\n", 3},
        {"3", "\n\n\n", 3},   {"2", "\n\n\n\n\n", 2},
        {"0", "", 0},         {"3", "\r\n\r\n\r\n", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        int len = snprintf(text, sizeof text, head, cases[i].frames, cases[i].rows);
        mn_bvh_options o = mn_bvh_default();
        mn_model* m = NULL;
        mn_motion mo;
        mn_error e;
        mn_warnings w = {0};
        mn_status st = mn_bvh_read_mem(text, (size_t)len, "nochan.bvh", &o, &m, &mo, &w, &e);
        CHECK(st == MN_OK);
        if (st) continue;
        CHECK(m->nq == 0 && mo.nframes == cases[i].want && mo.nframes <= len);
        if (mo.nframes != cases[i].want)
            fprintf(stderr, "  Frames %s: %d frames\n", cases[i].frames, mo.nframes);
        mn_motion_free(&mo);
        mn_model_destroy(m);
    }
}

/* glTF buffers go through the safe opener: a skinned triangle whose buffer is the file the
 * URI names, beside it (asset/buf.bin) or out of its folder in every way the opener refuses
 * (a copy of the buffer waits outside, so a reader that followed would load). */
static void test_gltf_buffer_uris(void) {
    if (!asset[0]) CHECK(make_tree());
    float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, wts[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    unsigned char buf[96], jnts[12] = {0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    memcpy(buf, pos, 36);
    memcpy(buf + 36, jnts, 12);
    memcpy(buf + 48, wts, 48);
    char p[800];
    const char* where[] = {"asset/buf.bin", "outside.bin"};
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/%s", root, where[k]);
        FILE* f = fopen(p, "wb");
        CHECK(f != NULL);
        if (f) {
            fwrite(buf, 1, sizeof buf, f);
            fclose(f);
        }
    }
    snprintf(p, sizeof p, "%s/outlink.bin", asset);
    CHECK(symlink("../outside.bin", p) == 0);
    const char* fmt =
        "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,1]}],"
        "\"nodes\":[{\"name\":\"body\",\"mesh\":0,\"skin\":0},{\"name\":\"hip\",\"children\":[2]},"
        "{\"name\":\"knee\",\"translation\":[0,1,0]}],"
        "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":"
        "2}}]}],"
        "\"skins\":[{\"joints\":[1,2]}],\"buffers\":[{\"uri\":\"%s\",\"byteLength\":96}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":36},{\"buffer\":0,"
        "\"byteOffset\":36,"
        "\"byteLength\":12},{\"buffer\":0,\"byteOffset\":48,\"byteLength\":48}],"
        "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\","
        "\"min\":[0,0,0],\"max\":[1,1,0]},{\"bufferView\":1,\"componentType\":5121,\"count\":3,"
        "\"type\":"
        "\"VEC4\"},{\"bufferView\":2,\"componentType\":5126,\"count\":3,\"type\":\"VEC4\"}]}";
    struct {
        const char* uri;
        int loads;
    } cases[] = {
        {"buf.bin", 1},
        {"./buf.bin", 1},
        {"b%75f.bin", 1},
        {"../outside.bin", 0},
        {"%2E%2E/outside.bin", 0},
        {"sub/../../outside.bin", 0},
        {"..%2Foutside.bin", 0},
        {"..\\\\outside.bin", 0},
        {"outlink.bin", 0},
        {"dirlink/outside.bin", 0},
        {"fifo", 0},
        {"%2Fetc%2Fpasswd", 0},
        {"/etc/passwd", 0},
        {"file:///etc/passwd", 0},
    };
    alarm(20);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2048], path[800];
        snprintf(text, sizeof text, fmt, cases[i].uri);
        snprintf(path, sizeof path, "%s/model.gltf", asset);
        FILE* f = fopen(path, "wb");
        CHECK(f != NULL);
        if (!f) continue;
        fputs(text, f);
        fclose(f);
        mn_gltf g;
        mn_error e;
        mn_status st = mn_gltf_read(path, &g, NULL, &e);
        int ok = cases[i].loads
                     ? st == MN_OK
                     : (st != MN_OK && strstr(e.message, "buffers[0].uri") &&
                        strstr(e.message, "model.gltf") && !strstr(e.message + strlen(path), root));
        if (!ok) fprintf(stderr, "  uri '%s': %s\n", cases[i].uri, st ? e.message : "loaded");
        CHECK(ok);
        if (st == MN_OK) mn_gltf_free(&g);
        unlink(path);
    }
    alarm(0);
}

/* Every reader that takes a path, on files that are not what they seem: a FIFO (a reader
 * that opened it blocking would wait forever), a folder, a sparse 3 GB file (refused from
 * its size) and a missing file. Each is refused with a message naming the path. */
typedef mn_status (*path_reader)(const char* path, mn_error* err);
static mn_status rd_figure(const char* p, mn_error* e) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_status s = mn_figure_read(p, &m, &mo, NULL, e);
    if (!s) mn_model_destroy(m), mn_motion_free(&mo);
    return s;
}
static mn_status rd_bvh(const char* p, mn_error* e) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_status s = mn_bvh_read(p, NULL, &m, &mo, NULL, e);
    if (!s) mn_model_destroy(m), mn_motion_free(&mo);
    return s;
}
static mn_status rd_skel(const char* p, mn_error* e) {
    mn_model* m = NULL;
    mn_status s = mn_skel_read(p, &m, NULL, e);
    if (!s) mn_model_destroy(m);
    return s;
}
static mn_status rd_urdf(const char* p, mn_error* e) {
    mn_model* m = NULL;
    mn_status s = mn_urdf_read(p, &m, NULL, e);
    if (!s) mn_model_destroy(m);
    return s;
}
static mn_status rd_gltf(const char* p, mn_error* e) {
    mn_gltf g;
    mn_status s = mn_gltf_read(p, &g, NULL, e);
    if (!s) mn_gltf_free(&g);
    return s;
}
static mn_status rd_obj(const char* p, mn_error* e) {
    mn_mesh m;
    mn_status s = mn_obj_read(p, &m, NULL, e);
    if (!s) mn_mesh_free(&m);
    return s;
}
static mn_status rd_dmat(const char* p, mn_error* e) {
    mn_dmat m;
    mn_status s = mn_dmat_read(p, &m, e);
    if (!s) mn_dmat_free(&m);
    return s;
}
static mn_status rd_tgf(const char* p, mn_error* e) {
    mn_tgf t;
    mn_status s = mn_tgf_read(p, &t, e);
    if (!s) mn_tgf_free(&t);
    return s;
}
static mn_status rd_tmat(const char* p, mn_error* e) {
    int n;
    mn_xform* xf = NULL;
    mn_status s = mn_tmat_read(p, &n, &xf, e);
    if (!s) free(xf);
    return s;
}
static mn_status rd_scene(const char* p, mn_error* e) {
    mn_scene* sc = NULL;
    mn_status s = mn_scene_read(p, &sc, e);
    if (!s) mn_scene_destroy(sc);
    return s;
}
static mn_status rd_seq(const char* p, mn_error* e) {
    mn_model* m = NULL;
    mn_seq* q = NULL;
    mn_status s = mn_seq_read(p, NULL, &m, &q, NULL, e);
    if (!s) mn_seq_destroy(q), mn_model_destroy(m);
    return s;
}

static void test_readers_refuse_special_files(void) {
    const char* t = mn_test_temp_dir();
    CHECK(t != NULL);
    if (!t) return;
    char dir[700];
    snprintf(dir, sizeof dir, "%s/special", t);
    CHECK(mkdir(dir, 0700) == 0);
    static const struct {
        const char* name;
        path_reader fn;
        const char* ext;
    } readers[] = {
        {"figure", rd_figure, ".dat"}, {"bvh", rd_bvh, ".bvh"},       {"skel", rd_skel, ".skel"},
        {"urdf", rd_urdf, ".urdf"},    {"gltf", rd_gltf, ".gltf"},    {"obj", rd_obj, ".obj"},
        {"dmat", rd_dmat, ".dmat"},    {"tgf", rd_tgf, ".tgf"},       {"tmat", rd_tmat, ".Tmat"},
        {"scene", rd_scene, ".json"},  {"sequence", rd_seq, ".json"},
    };
    const char* kinds[] = {"fifo", "folder", "huge", "missing"};
    alarm(60);
    for (size_t r = 0; r < sizeof readers / sizeof readers[0]; r++) {
        for (size_t k = 0; k < 4; k++) {
            char p[800];
            snprintf(p, sizeof p, "%s/%s_%s%s", dir, kinds[k], readers[r].name, readers[r].ext);
            int made = 1;
            if (k == 0) made = mkfifo(p, 0600) == 0;
            if (k == 1) made = mkdir(p, 0700) == 0;
            if (k == 2) {
                int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                made = fd >= 0 && ftruncate(fd, (off_t)3 << 30) == 0;
                if (fd >= 0) close(fd);
            }
            CHECK(made);
            mn_error e;
            memset(&e, 0, sizeof e);
            mn_status st = readers[r].fn(p, &e);
            int ok = st != MN_OK && strstr(e.message, p) != NULL;
            if (!ok)
                fprintf(stderr, "  %s on a %s: status %d: %s\n", readers[r].name, kinds[k], st,
                        e.message);
            CHECK(ok);
            if (k == 1)
                rmdir(p);
            else
                unlink(p);
        }
    }
    alarm(0);
    rmdir(dir);
}

/* A sequence document names its figure: by default (an untrusted document) the figure is
 * read beneath the document's folder through the safe opener, and every way out is refused
 * with the document, the line, the field "figure" and the path as written (a valid BVH waits
 * outside, so a reader that followed would load it); the same documents open with the
 * trusted option where the path leads somewhere real. */
static const char tiny_bvh[] = "HIERARCHY\nROOT hip\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Zrotation "
                               "Xrotation Yrotation\n  JOINT knee\n  {\n    OFFSET 0 1 0\n    "
                               "CHANNELS 1 Zrotation\n    End Site\n    {\n      OFFSET 0 1 0\n"
                               "    }\n  }\n}\nMOTION\nFrames: 1\nFrame Time: 0.04\n0 0 0 0\n";

static void write_bytes(const char* path, const void* data, size_t n) {
    FILE* f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

static void test_sequence_figure_confined(void) {
    const char* t = mn_test_temp_dir();
    CHECK(t != NULL);
    if (!t) return;
    char top[700], dir[800], p[1000], q[1000], doc[1000];
    snprintf(top, sizeof top, "%s/seqfig", t);
    snprintf(dir, sizeof dir, "%s/doc", top);
    CHECK(mkdir(top, 0700) == 0 && mkdir(dir, 0700) == 0);
    snprintf(p, sizeof p, "%s/sub", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/outside.bvh", top);
    write_bytes(p, tiny_bvh, sizeof tiny_bvh - 1);
    snprintf(p, sizeof p, "%s/sub/in.bvh", dir);
    write_bytes(p, tiny_bvh, sizeof tiny_bvh - 1);
    snprintf(p, sizeof p, "%s/sub/bad.bvh", dir);
    static const char bad_bvh[] = "HIERARCHY\nROOT hip\n{\n  OFFSET 0 zero 0\n";
    write_bytes(p, bad_bvh, sizeof bad_bvh - 1);
    snprintf(p, sizeof p, "%s/link.bvh", dir);
    CHECK(symlink("../outside.bvh", p) == 0);
    snprintf(p, sizeof p, "%s/dirlink", dir);
    CHECK(symlink("..", p) == 0);
    snprintf(p, sizeof p, "%s/fifo.bvh", dir);
    CHECK(mkfifo(p, 0600) == 0);
    char abs_out[1000];
    snprintf(abs_out, sizeof abs_out, "%s/outside.bvh", top);
    snprintf(doc, sizeof doc, "%s/walk.json", dir);
    struct {
        const char* figure;
        int confined;    /* read by default */
        int trusted;     /* read with the trusted option */
        const char* why; /* part of the refusal by default */
    } cases[] = {
        {"sub/in.bvh", 1, 1, NULL},
        {"./sub/./in.bvh", 1, 1, NULL},
        {"sub/%69n.bvh", 1, 0, NULL},
        {"stickman", 1, 1, NULL},
        {abs_out, 0, 1, "absolute"},
        {"../outside.bvh", 0, 1, ".."},
        {"sub/../../outside.bvh", 0, 1, ".."},
        {"%2e%2e/outside.bvh", 0, 0, ".."},
        {"..%2Foutside.bvh", 0, 0, ".."},
        {"%2F%2E%2E/outside.bvh", 0, 0, "absolute"},
        {"..\\outside.bvh", 0, 0, "backslash"},
        {"sub\\in.bvh", 0, 0, "backslash"},
        {"file:../outside.bvh", 0, 0, "relative"},
        {"file:///etc/passwd", 0, 0, "relative"},
        {"link.bvh", 0, 1, "out of"},
        {"dirlink/outside.bvh", 0, 1, "out of"},
        {"fifo.bvh", 0, 0, "not a regular file"},
        {"sub", 0, 0, "not a regular file"},
        {"nowhere.bvh", 0, 0, "cannot open"},
        {"sub/bad.bvh", 0, 0, "line 4"}, /* a parse error, named in the figure */
    };
    mn_seq_read_options trust = mn_seq_read_default();
    trust.trusted = 1;
    alarm(20);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* the figure as a JSON string on line 2 */
        char esc[1200], text[1600];
        size_t k = 0;
        for (const char* c = cases[i].figure; *c && k + 3 < sizeof esc; c++) {
            if (*c == '\\' || *c == '"') esc[k++] = '\\';
            esc[k++] = *c;
        }
        esc[k] = 0;
        snprintf(text, sizeof text,
                 "{\n  \"figure\": \"%s\",\n  \"keys\": [{\"frame\": 0, \"pose\": {}}]\n}\n", esc);
        write_bytes(doc, text, strlen(text));
        for (int mode = 0; mode < 3; mode++) {
            /* 0: the default (NULL), 1: mn_seq_read_default(), 2: trusted */
            mn_seq_read_options def = mn_seq_read_default();
            const mn_seq_read_options* opt = mode == 0 ? NULL : mode == 1 ? &def : &trust;
            mn_model* m = (mn_model*)1;
            mn_seq* s = (mn_seq*)1;
            mn_error e;
            mn_status st = mn_seq_read(doc, opt, &m, &s, NULL, &e);
            int want = mode == 2 ? cases[i].trusted : cases[i].confined;
            int ok;
            if (want) {
                ok = st == MN_OK && m && s && m->njoint >= 2;
            } else {
                ok = st != MN_OK && m == NULL && s == NULL;
                if (mode < 2)
                    ok = ok && !strcmp(e.file, doc) && e.line == 2 && !strcmp(e.field, "figure") &&
                         strstr(e.message, cases[i].figure) && strstr(e.message, cases[i].why) &&
                         /* the path as written, never the folder or the resolved path */
                         (cases[i].figure == abs_out || !strstr(e.message + strlen(doc), top));
            }
            if (!ok || getenv("MN_TEST_VERBOSE"))
                fprintf(stderr, "  figure '%s' (mode %d): %s\n", cases[i].figure, mode,
                        st ? e.message : "read");
            CHECK(ok);
            if (st == MN_OK) {
                mn_seq_destroy(s);
                mn_model_destroy(m);
            }
        }
    }
    /* a FIFO named "stickman" is the figure (a file of that name wins), refused, never
     * waited on, in either mode */
    snprintf(p, sizeof p, "%s/stickman", dir);
    CHECK(mkfifo(p, 0600) == 0);
    static const char stick_doc[] =
        "{\n  \"figure\": \"stickman\",\n  \"keys\": [{\"frame\": 0, \"pose\": {}}]\n}\n";
    write_bytes(doc, stick_doc, sizeof stick_doc - 1);
    for (int mode = 0; mode < 2; mode++) {
        mn_model* m = NULL;
        mn_seq* s = NULL;
        mn_error e;
        CHECK(mn_seq_read(doc, mode ? &trust : NULL, &m, &s, NULL, &e) == MN_ERR_IO && !m && !s &&
              !strcmp(e.field, "figure") && strstr(e.message, "not a regular file"));
    }
    CHECK(unlink(p) == 0);
    alarm(0);
    /* a skinned glTF figure in a subfolder: read beneath the folder, its mesh kept */
    size_t n = 0;
    char* fox = mn_test_read_file(MN_DATA "/skinned/Fox.glb", &n);
    CHECK(fox != NULL);
    snprintf(p, sizeof p, "%s/sub/Fox.glb", dir);
    if (fox) write_bytes(p, fox, n);
    free(fox);
    static const char fox_doc[] =
        "{\n  \"figure\": \"sub/Fox.glb\",\n  \"keys\": [{\"frame\": 0, \"pose\": {}}]\n}\n";
    write_bytes(doc, fox_doc, sizeof fox_doc - 1);
    mn_model* m = NULL;
    mn_seq* s = NULL;
    mn_gltf g;
    mn_error e;
    CHECK(mn_seq_read_skin(doc, NULL, &m, &s, NULL, &g, &e) == MN_OK);
    CHECK(s && m && g.nverts == 1728 && g.njoints == m->njoint);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    mn_gltf_free(&g);
    unlink(p);
    /* from memory: base_dir is the folder, NULL the current one; ".." refused either way */
    static const char up[] =
        "{\n  \"figure\": \"../outside.bvh\",\n  \"keys\": [{\"frame\": 0, \"pose\": {}}]\n}\n";
    CHECK(mn_seq_read_mem(up, sizeof up - 1, "up.json", dir, NULL, NULL, &m, &s, NULL, &e) ==
              MN_ERR_UNSUPPORTED &&
          !strcmp(e.field, "figure") && e.line == 2 && m == NULL && s == NULL);
    CHECK(mn_seq_read_mem(up, sizeof up - 1, "up.json", NULL, NULL, NULL, &m, &s, NULL, &e) ==
          MN_ERR_UNSUPPORTED);
    CHECK(mn_seq_read_mem(up, sizeof up - 1, "up.json", dir, &trust, NULL, &m, &s, NULL, &e) ==
          MN_OK);
    mn_seq_destroy(s);
    mn_model_destroy(m);
    const char* names[] = {"walk.json", "sub/in.bvh", "sub/bad.bvh", "sub",
                           "link.bvh",  "dirlink",    "fifo.bvh"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(q, sizeof q, "%s/%s", dir, names[i]);
        CHECK(i == 3 ? rmdir(q) == 0 : unlink(q) == 0);
    }
    CHECK(rmdir(dir) == 0 && unlink(abs_out) == 0 && rmdir(top) == 0);
}

int main(int argc, char** argv) {
    signal(SIGALRM, on_alarm);
    mn_test_init(argc, argv);
    RUN(test_uris_beneath);
    RUN(test_read_file_fifo);
    RUN(test_read_file_too_large);
    RUN(test_writer_refuses_non_regular);
    RUN(test_writer_keeps_mode);
    RUN(test_writer_set_all_or_nothing);
    RUN(test_writer_killed);
    RUN(test_bvh_no_channels);
    RUN(test_gltf_buffer_uris);
    RUN(test_readers_refuse_special_files);
    RUN(test_sequence_figure_confined);
    return mn_test_report();
}
