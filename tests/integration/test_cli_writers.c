/* Every command that writes a file, walked through the same hostile outputs: the output a
 * symbolic link (refused, the link and its target as they were), a FIFO (refused at once,
 * never waited on), a write that fails part way (a file size limit: the old file whole, no
 * temporary left), a new file (0666 less the umask) and a replaced one (its mode kept). Then
 * `convert --out-dir -j 4` (threads writing at once: no file more open than the umask
 * allows), and the temporaries a killed run left, removed by the next run in that folder
 * (only stale ones of this user that no writer holds). */
#define _GNU_SOURCE /* flock */
#include <marionette/io.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define SMALL MN_TEST_DATA "/cmu_02_01_walk_positions.bvh"

static char dir[600];

static const char* at(const char* name) {
    static char p[8][800];
    static int slot;
    slot = (slot + 1) % 8;
    snprintf(p[slot], sizeof p[slot], "%s/%s", dir, name);
    return p[slot];
}

static void put(const char* path, const char* text) {
    FILE* f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Runs `marionette ARGS` (OUT in args replaced by out) in a shell with the umask and any
 * limits of pre; returns its exit status (124: it did not end within 30 s). */
static int run(const char* pre, const char* args, const char* out) {
    size_t cap = strlen(args) + strlen(out) + strlen(pre) + 2000;
    char* expanded = malloc(cap);
    char* cmd = malloc(cap);
    const char* o = strstr(args, "OUT");
    if (o)
        snprintf(expanded, cap, "%.*s'%s'%s", (int)(o - args), args, out, o + 3);
    else
        snprintf(expanded, cap, "%s", args);
    snprintf(cmd, cap, "(%s; exec timeout 30 '%s' %s) > /dev/null 2> '%s'", pre, MN_CLI, expanded,
             at("stderr.txt"));
    int st = system(cmd);
    free(expanded);
    free(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int is_file_with(const char* path, const char* text) {
    size_t n;
    char* d = mn_test_read_file(path, &n);
    int same = d && n == strlen(text) && !memcmp(d, text, n);
    free(d);
    return same;
}

/* Any writer's temporary in dir? */
static int temporaries(void) {
    DIR* d = opendir(dir);
    int n = 0;
    for (struct dirent* e; d && (e = readdir(d));)
        n += mn_io_is_temporary(e->d_name);
    if (d) closedir(d);
    return n;
}

static void test_every_writer(void) {
    static const struct {
        const char* what;
        const char* ext;
        const char* args;
    } cmds[] = {
        {"anim bake (BVH)", "bvh",
         "anim bake '" MN_SOURCE "/docs/examples/crouch_sequence.json' --out OUT"},
        {"anim bake (glTF)", "glb",
         "anim bake '" MN_SOURCE "/docs/examples/crouch_sequence.json' --out OUT"},
        {"anim import", "json", "anim import '" SMALL "' --tol 0.01 --out OUT"},
        {"anim compress", "mnc", "anim compress '" SMALL "' --every 4 --tol 0.0005 --out OUT"},
        {"convert (figure document)", "json", "convert '" SMALL "' OUT"},
        {"convert (skel)", "skel", "convert '" SMALL "' OUT"},
        {"convert (glTF)", "glb", "convert '" SMALL "' OUT"},
        {"pose --out", "bvh",
         "pose stickman --scene '" MN_SOURCE "/docs/examples/crouch_stickman.json' --out OUT"},
        {"retarget --out", "bvh", "retarget '" SMALL "' --to stickman --out OUT"},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char name[64], out[800];
        snprintf(name, sizeof name, "out%zu.%s", i, cmds[i].ext);
        snprintf(out, sizeof out, "%s", at(name));
        int ok = 1;
        /* a new file: 0666 less the umask */
        struct stat st;
        ok &= run("umask 027", cmds[i].args, out) == 0;
        ok &= stat(out, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0640;
        /* a replaced file keeps its mode */
        ok &= chmod(out, 0604) == 0;
        ok &= run("umask 077", cmds[i].args, out) == 0;
        ok &= stat(out, &st) == 0 && (st.st_mode & 0777) == 0604;
        /* a write cut short by the file size limit (512 bytes, under every output): the old
         * file whole, no temporary */
        put(out, "old");
        int rc = run("umask 022; ulimit -f 1; trap '' XFSZ", cmds[i].args, out);
        ok &= rc != 0 && rc != 124 && is_file_with(out, "old") && !temporaries();
        /* a symbolic link: refused; neither it nor its target changes */
        remove(out);
        put(at("target.txt"), "target");
        ok &= symlink("target.txt", out) == 0;
        rc = run("umask 022", cmds[i].args, out);
        ok &= rc != 0 && rc != 124 && is_file_with(at("target.txt"), "target");
        ok &= lstat(out, &st) == 0 && S_ISLNK(st.st_mode);
        remove(out);
        /* a FIFO: refused at once (124 would be a wait), left a FIFO */
        ok &= mkfifo(out, 0600) == 0;
        rc = run("umask 022", cmds[i].args, out);
        ok &= rc != 0 && rc != 124 && lstat(out, &st) == 0 && S_ISFIFO(st.st_mode);
        remove(out);
        ok &= !temporaries();
        CHECK(ok);
        if (!ok) fprintf(stderr, "  writer %s: not as it should be\n", cmds[i].what);
    }
    remove(at("target.txt"));
}

/* Threads writing at once: every output of convert --out-dir -j 4 has 0666 less the umask
 * (umask(0); umask(mask) in one thread made others' files world-writable). */
static void test_out_dir_threads(void) {
    enum { N = 120 };
    char list[N * 80], outdir[800];
    size_t o = 0;
    snprintf(outdir, sizeof outdir, "%s", at("converted"));
    CHECK(mkdir(outdir, 0700) == 0);
    for (int i = 0; i < N; i++) {
        char nm[40];
        snprintf(nm, sizeof nm, "in%03d.bvh", i);
        CHECK(symlink(SMALL, at(nm)) == 0);
        o += (size_t)snprintf(list + o, sizeof list - o, "'%s' ", at(nm));
    }
    char args[sizeof list + 1000];
    snprintf(args, sizeof args, "convert %s --out-dir '%s' --to skel -j 4", list, outdir);
    CHECK(run("umask 022", args, "") == 0);
    int right = 0;
    for (int i = 0; i < N; i++) {
        char nm[80];
        struct stat st;
        snprintf(nm, sizeof nm, "converted/in%03d.skel", i);
        right += stat(at(nm), &st) == 0 && (st.st_mode & 0777) == 0644;
        remove(at(nm));
        snprintf(nm, sizeof nm, "in%03d.bvh", i);
        remove(at(nm));
    }
    CHECK(right == N);
    if (right != N) fprintf(stderr, "  %d of %d outputs with mode 0644\n", right, N);
    rmdir(outdir);
}

/* The same in one process, tighter: four threads each writing 300 new files at once; every
 * file has 0666 less the umask and the umask is what it was. */
enum { PER_THREAD = 300 };
static void* write_many(void* arg) {
    int t = (int)(long)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        char path[800]; /* not at(): its buffers are shared */
        snprintf(path, sizeof path, "%s/threads/t%d_%03d.txt", dir, t, i);
        mn_error e;
        if (mn_write_file_atomic(path, "x", 1, &e) != MN_OK) return (void*)1;
    }
    return NULL;
}

static void test_threads_umask(void) {
    CHECK(mkdir(at("threads"), 0700) == 0);
    mode_t before = umask(022);
    pthread_t th[4];
    for (long t = 0; t < 4; t++)
        CHECK(pthread_create(&th[t], NULL, write_many, (void*)t) == 0);
    int failed = 0;
    for (int t = 0; t < 4; t++) {
        void* r = NULL;
        pthread_join(th[t], &r);
        failed += r != NULL;
    }
    mode_t after = umask(before);
    CHECK(failed == 0 && after == 022);
    int right = 0;
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < PER_THREAD; i++) {
            char nm[64];
            struct stat st;
            snprintf(nm, sizeof nm, "threads/t%d_%03d.txt", t, i);
            right += stat(at(nm), &st) == 0 && (st.st_mode & 0777) == 0644;
            remove(at(nm));
        }
    CHECK(right == 4 * PER_THREAD);
    if (right != 4 * PER_THREAD)
        fprintf(stderr, "  %d of %d files with mode 0644\n", right, 4 * PER_THREAD);
    rmdir(at("threads"));
}

/* A killed run's temporary (old, held by nobody) is removed by the next write in that
 * folder; a fresh one, one held by a live writer, another user's name pattern are kept. */
static void test_stale_temporaries(void) {
    const char* stale = at("out.bvh.tmpAbC123");
    put(stale, "half a file");
    struct timeval old[2] = {{1000000000, 0}, {1000000000, 0}};
    CHECK(utimes(stale, old) == 0);
    const char* held = at("other.bvh.tmpZz9Zz9");
    put(held, "being written");
    CHECK(utimes(held, old) == 0);
    int hfd = open(held, O_RDONLY);
    CHECK(hfd >= 0 && flock(hfd, LOCK_EX | LOCK_NB) == 0);
    const char* fresh = at("new.bvh.tmpQwErTy");
    put(fresh, "just begun");
    const char* like = at("notes.tmp1");
    put(like, "not a temporary");
    CHECK(utimes(like, old) == 0);
    CHECK(mn_io_is_temporary("out.bvh.tmpAbC123") && !mn_io_is_temporary("notes.tmp1") &&
          !mn_io_is_temporary(".tmpAbC123") && !mn_io_is_temporary("a.tmpAbC12!"));
    CHECK(run("umask 022",
              "pose stickman --scene '" MN_SOURCE "/docs/examples/crouch_stickman.json' --out OUT",
              at("out.bvh")) == 0);
    CHECK(access(stale, F_OK) != 0);
    CHECK(access(held, F_OK) == 0 && access(fresh, F_OK) == 0 && access(like, F_OK) == 0);
    if (hfd >= 0) close(hfd);
    remove(held);
    remove(fresh);
    remove(like);
    remove(at("out.bvh"));
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    snprintf(dir, sizeof dir, "%s/writers", mn_test_temp_dir());
    CHECK(mkdir(dir, 0700) == 0);
    RUN(test_every_writer);
    RUN(test_out_dir_threads);
    RUN(test_threads_umask);
    RUN(test_stale_temporaries);
    remove(at("stderr.txt"));
    for (int i = 0; i < 9; i++) {
        char nm[64];
        const char* ext[] = {"bvh", "glb", "json", "mnc", "json", "skel", "glb", "bvh", "bvh"};
        snprintf(nm, sizeof nm, "out%d.%s", i, ext[i]);
        remove(at(nm));
    }
    rmdir(dir);
    return mn_test_report();
}
