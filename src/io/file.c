/* Whole-file reads, the confined opener, atomic writes and the path helper of the io layer
 * (the memory helpers the readers share are the doc layer's, doc/text.c). */
/* syscall() for openat2 and realpath. */
#define _GNU_SOURCE
#include "io/io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/file.h>
#if defined(__linux__)
#include <sys/syscall.h>
#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif
#endif

/* Reads the open descriptor fd whole: it must be a regular file (a FIFO, device or folder
 * would block or never end) of at most max bytes, checked with fstat before anything is
 * read or allocated. name is what messages call the file. Closes fd. */
static mn_status read_fd(int fd, const char* name, size_t max, char** data, size_t* len,
                         mn_error* err) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return mn_error_set(err, MN_ERR_IO, name, 0, "", "not a regular file");
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > (uint64_t)max) {
        close(fd);
        return mn_error_set(err, MN_ERR_IO, name, 0, "",
                            "file too large (more than %zu bytes, the limit of a file read)", max);
    }
    size_t n = (size_t)st.st_size;
    char* buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return mn_error_set(err, MN_ERR_NOMEM, name, 0, "", "out of memory (%zu bytes)", n);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        free(buf);
        return mn_error_set(err, MN_ERR_IO, name, 0, "", "read failed");
    }
    buf[n] = 0;
    *data = buf;
    if (len) *len = n;
    return MN_OK;
}

mn_status mn_read_file(const char* path, char** data, size_t* len, mn_error* err) {
    *data = NULL;
    if (len) *len = 0;
    /* Non-blocking: opening a FIFO with no writer would otherwise wait forever. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return mn_error_set(err, MN_ERR_IO, path, 0, "", "cannot open: %s", strerror(errno));
    return read_fd(fd, path, MN_IO_MAX_FILE_BYTES, data, len, err);
}

static int beneath_fallback;
void mn_io_beneath_force_fallback(int on) {
    beneath_fallback = on;
}

/* Opens rel (relative, no ".." segment) beneath dir. openat2 with RESOLVE_BENEATH refuses
 * any way out of the folder during the kernel's own path walk (symlinks included); where it
 * is missing, both paths are resolved with realpath and the file's must lie in the folder's.
 * Returns the descriptor, or -1 with errno (EXDEV: it leads out of the folder). */
static int open_beneath(const char* dir, const char* rel) {
    int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
#if defined(SYS_openat2) && defined(RESOLVE_BENEATH)
    if (!beneath_fallback) {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) return -1;
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = (uint64_t)flags;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, dfd, rel, &how, sizeof how);
        int e = errno;
        close(dfd);
        if (fd >= 0) return (int)fd;
        /* ENOSYS: an older kernel; EPERM: a sandbox that filters the call. */
        if (e != ENOSYS && e != EPERM) {
            errno = e;
            return -1;
        }
    }
#endif
    char* rdir = realpath(dir, NULL);
    if (!rdir) return -1;
    size_t dl = strlen(rdir), rl = strlen(rel);
    char* joined = malloc(dl + rl + 2);
    if (!joined) {
        free(rdir);
        errno = ENOMEM;
        return -1;
    }
    snprintf(joined, dl + rl + 2, "%s/%s", rdir, rel);
    char* real = realpath(joined, NULL);
    int e = errno, fd = -1;
    if (real) {
        int inside =
            strncmp(real, rdir, dl) == 0 && (real[dl] == '/' || (dl == 1 && rdir[0] == '/'));
        if (inside)
            fd = open(real, flags | O_NOFOLLOW);
        else
            errno = EXDEV;
        e = errno;
    }
    free(real);
    free(joined);
    free(rdir);
    errno = e;
    return fd;
}

mn_status mn_read_file_beneath(const char* dir, const char* uri, size_t max, char** data,
                               size_t* len, mn_error* err) {
    if (data) *data = NULL;
    if (len) *len = 0;
    if (!dir || !uri || !data) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    if (max == 0 || max > MN_IO_MAX_FILE_BYTES) max = MN_IO_MAX_FILE_BYTES;
    char* rel;
    mn_status st = mn_uri_relative(uri, &rel, err);
    if (st != MN_OK) return st;
    int fd = open_beneath(dir[0] ? dir : ".", rel);
    int e = errno;
    free(rel);
    if (fd < 0) {
        /* The URI as written, never the resolved path. */
        if (e == EXDEV || e == ELOOP)
            return mn_error_set(err, MN_ERR_IO, uri, 0, "",
                                "refused: leads out of the file's folder");
        return mn_error_set(err, MN_ERR_IO, uri, 0, "", "cannot open: %s", strerror(e));
    }
    return read_fd(fd, uri, max, data, len, err);
}

mn_status mn_io_read_path(const char* path, mn_io_text_fn fn, void* args, mn_error* err) {
    char* text;
    size_t len;
    mn_status s = mn_read_file(path, &text, &len, err);
    if (s) return s;
    s = fn(text, len, path, args, err);
    free(text);
    return s;
}

typedef struct figure_args {
    mn_io_figure_fn fn;
    mn_model** model;
    mn_warnings* warn;
} figure_args;

static mn_status figure_text(const char* text, size_t len, const char* name, void* args,
                             mn_error* err) {
    figure_args* a = args;
    return a->fn(text, len, name, a->model, a->warn, err);
}

mn_status mn_io_read_figure(const char* path, mn_io_figure_fn fn, mn_model** model,
                            mn_warnings* warn, mn_error* err) {
    if (model) *model = NULL;
    if (!path || !model) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    figure_args a = {fn, model, warn};
    return mn_io_read_path(path, figure_text, &a, err);
}

/* May path be replaced? Only a regular file (or nothing) is: a symlink is not followed nor
 * replaced, and a device, FIFO or folder is never turned into a file (writing to /dev/null
 * as root would replace /dev/null). *mode gets the mode the new file should have: the old
 * file's, else -1: a new file is created 0666 and the kernel takes the umask off (the umask
 * is never read nor changed here: umask(0) then umask(mask) races between threads, and a
 * file another thread creates meanwhile is world-writable). */
static mn_status check_output(const char* path, int* mode, mn_error* err) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT)
            return mn_error_set(err, MN_ERR_IO, path, 0, "", "cannot write: %s", strerror(errno));
        *mode = -1;
        return MN_OK;
    }
    if (S_ISLNK(st.st_mode))
        return mn_error_set(err, MN_ERR_IO, path, 0, "",
                            "is a symbolic link: not followed nor replaced");
    if (!S_ISREG(st.st_mode))
        return mn_error_set(err, MN_ERR_IO, path, 0, "", "not a regular file: not replaced");
    *mode = (int)(st.st_mode & 0777);
    return MN_OK;
}

/* The suffix of a temporary: ".tmp" and 6 letters or digits (NAME.tmpXXXXXX). */
#define TMP_SUFFIX_LEN 10
static const char tmp_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

int mn_io_is_temporary(const char* name) {
    size_t n = strlen(name);
    if (n <= TMP_SUFFIX_LEN) return 0;
    const char* t = name + n - TMP_SUFFIX_LEN;
    if (strncmp(t, ".tmp", 4)) return 0;
    for (int i = 4; i < TMP_SUFFIX_LEN; i++)
        if (!strchr(tmp_chars, t[i]) || !t[i]) return 0;
    return 1;
}

/* Creates path.tmpXXXXXX (O_EXCL, mode 0666 less the umask, which the kernel applies) and
 * locks it (flock) for as long as it is open: a temporary nobody holds is one a killed run
 * left (remove_stale). The descriptor, or -1 with errno. */
static int create_temp(char* tmp, size_t n) {
    static unsigned long counter;
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char r[6];
        unsigned long salt = (unsigned long)getpid() << 16;
        if (getentropy(r, sizeof r) != 0) {
            unsigned long x = (unsigned long)time(NULL) ^ salt ^
                              (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 2654435761u);
            for (size_t i = 0; i < sizeof r; i++, x >>= 5)
                r[i] = (unsigned char)x;
        }
        for (int i = 0; i < 6; i++)
            tmp[n + 4 + (size_t)i] = tmp_chars[r[i] % (sizeof tmp_chars - 1)];
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0) {
            flock(fd, LOCK_EX | LOCK_NB);
            return fd;
        }
        if (errno != EEXIST) return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Removes, from the folder holding path, the temporaries a killed run left there: names
 * NAME.tmpXXXXXX, regular files of this user, untouched for STALE_SECONDS, that no writer
 * holds (a live writer keeps its temporary locked until it is renamed). Once per folder in
 * a process (the last 32 folders are remembered). */
#define STALE_SECONDS 2
static void remove_stale(const char* path) {
    const char* slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        return;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return;
    /* once per folder and process: what a killed run left is there before this one starts
     * (and a folder of n outputs is not read n times) */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct {
        dev_t dev;
        ino_t ino;
    } done[32];
    static int ndone;
    struct stat ds;
    int seen_before = 0;
    pthread_mutex_lock(&lock);
    if (fstat(dfd, &ds) == 0) {
        for (int i = 0; i < ndone && i < 32; i++)
            seen_before |= done[i].dev == ds.st_dev && done[i].ino == ds.st_ino;
        if (!seen_before) {
            done[ndone % 32].dev = ds.st_dev;
            done[ndone % 32].ino = ds.st_ino;
            ndone++;
        }
    }
    pthread_mutex_unlock(&lock);
    if (seen_before) {
        close(dfd);
        return;
    }
    DIR* d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    time_t now = time(NULL);
    uid_t me = geteuid();
    int seen = 0;
    for (struct dirent* e; (e = readdir(d)) && seen < 100000; seen++) {
        if (!mn_io_is_temporary(e->d_name)) continue;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != me || now - st.st_mtime < STALE_SECONDS)
            continue;
        int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) continue;
        struct stat again;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &again) == 0 &&
            again.st_ino == st.st_ino && again.st_dev == st.st_dev)
            unlinkat(dfd, e->d_name, 0);
        close(fd);
    }
    closedir(d);
}

/* Writes data to a fresh temporary beside path: *fd_out stays open (and locked) until the
 * caller has renamed it. */
static mn_status write_temp(const char* path, const char* data, size_t len, int mode,
                            char** tmp_out, int* fd_out, mn_error* err) {
    size_t n = strlen(path);
    char* tmp = malloc(n + 16);
    if (!tmp) return mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
    snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
    int fd = create_temp(tmp, n);
    if (fd < 0) {
        mn_error_set(err, MN_ERR_IO, path, 0, "", "cannot create: %s", strerror(errno));
        free(tmp);
        return MN_ERR_IO;
    }
    size_t done = 0;
    int e = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            e = w < 0 ? errno : EIO;
            break;
        }
        done += (size_t)w;
    }
    /* a replaced file keeps its permissions; a new one has 0666 less the umask already */
    if (!e && mode >= 0 && fchmod(fd, (mode_t)mode) != 0) e = errno;
    if (!e && fsync(fd) != 0) e = errno;
    if (e) {
        mn_error_set(err, MN_ERR_IO, path, 0, "", "write failed: %s", strerror(e));
        unlink(tmp);
        close(fd);
        free(tmp);
        return MN_ERR_IO;
    }
    *tmp_out = tmp;
    *fd_out = fd;
    return MN_OK;
}

/* fsync of the folder holding path (its entries: a rename is durable only after it). */
static mn_status sync_folder(const char* path, mn_error* err) {
    const char* slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    char* dir = malloc(n + 2);
    if (!dir) return mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory");
    if (!slash)
        strcpy(dir, ".");
    else if (n == 0)
        strcpy(dir, "/");
    else {
        memcpy(dir, path, n);
        dir[n] = 0;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    int e = fd < 0 ? errno : 0;
    /* EINVAL: a file system that cannot sync folders (nothing more to do there) */
    if (fd >= 0 && fsync(fd) != 0 && errno != EINVAL) e = errno;
    if (fd >= 0) close(fd);
    if (e)
        return mn_error_set(err, MN_ERR_IO, path, 0, "", "sync of its folder failed: %s",
                            strerror(e));
    return MN_OK;
}

mn_status mn_write_files_atomic(int n, const char* const* paths, const char* const* data,
                                const size_t* lens, mn_error* err) {
    if (n < 0 || (n > 0 && (!paths || !data || !lens)))
        return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    int* mode = malloc(((size_t)n + 1) * sizeof *mode);
    int* fds = malloc(((size_t)n + 1) * sizeof *fds);
    char** tmp = calloc((size_t)n + 1, sizeof *tmp);
    if (!mode || !fds || !tmp) {
        free(mode);
        free(fds);
        free(tmp);
        return mn_error_set(err, MN_ERR_NOMEM, n ? paths[0] : "", 0, "", "out of memory");
    }
    for (int i = 0; i < n; i++)
        fds[i] = -1;
    mn_status st = MN_OK;
    for (int i = 0; i < n && !st; i++)
        st = check_output(paths[i], &mode[i], err);
    /* the temporaries a killed run left beside the outputs (once per folder) */
    for (int i = 0; i < n && !st; i++) {
        const char* si = strrchr(paths[i], '/');
        size_t li = si ? (size_t)(si - paths[i]) : 0;
        int again = 0;
        for (int k = 0; k < i && !again; k++) {
            const char* sk = strrchr(paths[k], '/');
            size_t lk = sk ? (size_t)(sk - paths[k]) : 0;
            again = lk == li && !strncmp(paths[k], paths[i], li);
        }
        if (!again) remove_stale(paths[i]);
    }
    /* SIGINT, SIGTERM and SIGHUP wait until every temporary is renamed or removed, so that
     * a killed run leaves none behind (a signal that arrives meanwhile is delivered after). */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    for (int i = 0; i < n && !st; i++)
        st = write_temp(paths[i], data[i] ? data[i] : "", lens[i], mode[i], &tmp[i], &fds[i], err);
    /* Every file is written before any is renamed: a full disk leaves the old set whole. */
    int renamed = 0;
    for (; !st && renamed < n; renamed++)
        if (rename(tmp[renamed], paths[renamed]) != 0) {
            st = mn_error_set(err, MN_ERR_IO, paths[renamed], 0, "", "write failed: %s",
                              strerror(errno));
            break;
        }
    for (int i = renamed; i < n; i++)
        if (tmp[i]) unlink(tmp[i]);
    for (int i = 0; i < n; i++) /* synced already: the lock is what is let go */
        if (fds[i] >= 0) close(fds[i]);
    /* The renames themselves are made durable: each folder is synced, so that a file the
     * caller was told is written survives a crash of the machine right after. */
    for (int i = 0; !st && i < n; i++)
        st = sync_folder(paths[i], err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    for (int i = 0; i < n; i++)
        free(tmp[i]);
    free(tmp);
    free(fds);
    free(mode);
    return st;
}

mn_status mn_write_file_atomic(const char* path, const char* data, size_t len, mn_error* err) {
    if (!path) return mn_error_set(err, MN_ERR_ARG, "", 0, "", "NULL argument");
    return mn_write_files_atomic(1, &path, &data, &len, err);
}

mn_status mn_strbuf_write(mn_strbuf* b, const char* path, mn_error* err) {
    mn_status st = b->failed ? mn_error_set(err, MN_ERR_NOMEM, path, 0, "", "out of memory")
                             : mn_write_file_atomic(path, b->data ? b->data : "", b->len, err);
    mn_strbuf_free(b);
    return st;
}
