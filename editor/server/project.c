/* The project folder: which paths are project paths, reading beneath the folder, writing
 * only through real folders inside it, versions, and the listing of /api/project
 * (docs/editor-server.md). */
#define _GNU_SOURCE /* O_NOFOLLOW, O_DIRECTORY, fdopendir, openat, mkdirat */
#include "editor_server.h"

#include <marionette/io.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void ed_version(const void* data, size_t len, char out[17]) {
    const unsigned char* p = data;
    uint64_t h = 14695981039346656037ull; /* 64-bit FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

const char* ed_path_problem(const char* rel, size_t len) {
    if (!rel || len == 0) return "an empty path";
    if (len > ED_MAX_REL) return "a path longer than 255 bytes";
    if (strlen(rel) != len) return "a NUL byte in the path";
    if (rel[0] == '/') return "an absolute path: paths are relative to the project folder";
    if (memchr(rel, '\\', len)) return "a backslash: only '/' separates folders";
    const unsigned char* u = (const unsigned char*)rel;
    for (size_t i = 0; i < len;) {
        if (u[i] < 0x20 || u[i] == 0x7F) return "a control character in the path";
        int l = mn_utf8_len(u + i, len - i);
        if (!l) return "a path that is not UTF-8";
        i += (size_t)l;
    }
    for (const char* seg = rel; *seg;) {
        size_t sl = strcspn(seg, "/");
        if (sl == 0) return "an empty folder name ('//' or a trailing '/')";
        if (sl == 2 && seg[0] == '.' && seg[1] == '.')
            return "a '..' segment: only paths inside the project folder are served";
        if (sl == 1 && seg[0] == '.') return "a '.' segment";
        if (seg[0] == '.')
            return "a hidden name (a segment starting with '.'): hidden files and folders "
                   "(.git, .ssh, .bashrc, ...) are not served";
        seg += sl;
        if (*seg) {
            seg++;
            if (!*seg) return "an empty folder name ('//' or a trailing '/')";
        }
    }
    return NULL;
}

char* ed_join(const char* dir, const char* rel) {
    size_t n = strlen(dir) + strlen(rel) + 2;
    char* p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

int ed_read(const ed_server* sv, const char* dir, const char* rel, char** data, size_t* len,
            char* msg, size_t cap) {
    (void)sv;
    *data = NULL;
    *len = 0;
    /* mn_read_file_beneath takes a URI reference: '%' and ':' are written encoded so that the
     * path reaches the opener as it is. */
    char uri[3 * ED_MAX_REL + 1];
    size_t o = 0;
    for (const char* p = rel; *p && o + 4 < sizeof uri; p++) {
        if (*p == '%' || *p == ':')
            o += (size_t)snprintf(uri + o, sizeof uri - o, "%%%02X", (unsigned char)*p);
        else
            uri[o++] = *p;
    }
    uri[o] = 0;
    mn_error err;
    if (mn_read_file_beneath(dir, uri, MN_IO_MAX_FILE_BYTES, data, len, &err) == MN_OK) return 200;
    const char* m = err.message;
    if (strstr(m, "leads out")) {
        snprintf(msg, cap, "refused: %s leads out of the folder (a symbolic link)", rel);
        return 403;
    }
    if (strstr(m, strerror(ENOENT)) || strstr(m, strerror(ENOTDIR))) {
        snprintf(msg, cap, "%s: no such file", rel);
        return 404;
    }
    if (strstr(m, "not a regular file")) {
        snprintf(msg, cap, "refused: %s is not a regular file", rel);
        return 403;
    }
    if (strstr(m, "too large")) {
        snprintf(msg, cap, "refused: %s is larger than the largest file read", rel);
        return 403;
    }
    if (err.status == MN_ERR_NOMEM) {
        snprintf(msg, cap, "%s: out of memory", rel);
        return 500;
    }
    snprintf(msg, cap, "%s: cannot read: %s", rel, strchr(m, ' ') ? strchr(m, ' ') + 1 : m);
    return 403;
}

/* Opens the folder holding rel beneath the project, one real folder at a time (a symbolic
 * link is never followed: O_NOFOLLOW), making missing ones when make is 1. Returns the
 * folder's descriptor and *base (rel's last component), or -status with msg. */
static int open_parent(const ed_server* sv, const char* rel, int make, const char** base, char* msg,
                       size_t cap) {
    int dfd = open(sv->project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        snprintf(msg, cap, "the project folder cannot be opened: %s", strerror(errno));
        return -500;
    }
    const char* seg = rel;
    char name[ED_MAX_REL + 1];
    for (;;) {
        size_t sl = strcspn(seg, "/");
        if (!seg[sl]) break; /* the last component */
        memcpy(name, seg, sl);
        name[sl] = 0;
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && make) {
            if (mkdirat(dfd, name, 0777) != 0 && errno != EEXIST) {
                snprintf(msg, cap, "%s: cannot make the folder %.*s: %s", rel,
                         (int)(seg - rel + (long)sl), rel, strerror(errno));
                close(dfd);
                return -500;
            }
            fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0) {
            int e = errno;
            struct stat st;
            int is_link = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
            close(dfd);
            if (is_link || e == ELOOP) {
                snprintf(msg, cap,
                         "refused: %.*s is a symbolic link: writes go through real folders only",
                         (int)(seg - rel + (long)sl), rel);
                return -403;
            }
            if (e == ENOENT) {
                snprintf(msg, cap, "%s: no such folder %.*s", rel, (int)(seg - rel + (long)sl),
                         rel);
                return -404;
            }
            snprintf(msg, cap, "refused: %.*s is not a folder (%s)", (int)(seg - rel + (long)sl),
                     rel, strerror(e));
            return -403;
        }
        close(dfd);
        dfd = fd;
        seg += sl + 1;
    }
    *base = seg;
    struct stat st;
    if (fstatat(dfd, seg, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode)) {
            snprintf(msg, cap, "refused: %s is a symbolic link: not followed nor replaced", rel);
            close(dfd);
            return -403;
        }
        if (!S_ISREG(st.st_mode)) {
            snprintf(msg, cap, "refused: %s is not a regular file", rel);
            close(dfd);
            return -403;
        }
    }
    return dfd;
}

int ed_check_write_path(const ed_server* sv, const char* rel, int make, char* msg, size_t cap) {
    const char* base;
    int fd = open_parent(sv, rel, make, &base, msg, cap);
    if (fd < 0) return -fd;
    close(fd);
    return 0;
}

int ed_exists(const ed_server* sv, const char* rel) {
    const char* base;
    char msg[16];
    int fd = open_parent(sv, rel, 0, &base, msg, sizeof msg);
    if (fd < 0) return fd != -404; /* a link or a folder in the way: taken */
    struct stat st;
    int there = fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
    close(fd);
    return there;
}

/* msg without the project folder's own path (messages name project paths only). */
static void strip_project(const ed_server* sv, char* msg) {
    size_t n = strlen(sv->project);
    for (char* p = strstr(msg, sv->project); p; p = strstr(p, sv->project)) {
        size_t skip = n + (p[n] == '/' ? 1 : 0);
        memmove(p, p + skip, strlen(p + skip) + 1);
    }
}

int ed_write(const ed_server* sv, const char* rel, const char* data, size_t len, char* msg,
             size_t cap) {
    int st = ed_check_write_path(sv, rel, 1, msg, cap);
    if (st) return st;
    char* path = ed_join(sv->project, rel);
    if (!path) {
        snprintf(msg, cap, "out of memory");
        return 500;
    }
    mn_error err;
    mn_status s = mn_write_file_atomic(path, data, len, &err);
    free(path);
    if (s != MN_OK) {
        snprintf(msg, cap, "%s", err.message);
        strip_project(sv, msg);
        return 500;
    }
    return 0;
}

int ed_remove(const ed_server* sv, const char* rel, char* msg, size_t cap) {
    const char* base;
    int fd = open_parent(sv, rel, 0, &base, msg, cap);
    if (fd < 0) return -fd;
    int st = 0;
    if (unlinkat(fd, base, 0) != 0) {
        snprintf(msg, cap, "%s: cannot remove: %s", rel, strerror(errno));
        st = errno == ENOENT ? 404 : 500;
    } else if (fsync(fd) != 0 && errno != EINVAL) {
        snprintf(msg, cap, "%s: removed, but the folder could not be synced: %s", rel,
                 strerror(errno));
        st = 500;
    }
    close(fd);
    return st;
}

void ed_strip_project(const ed_server* sv, char* msg) {
    strip_project(sv, msg);
}

static int has_ext(const char* s, const char* e) {
    size_t n = strlen(s), k = strlen(e);
    return n > k && !strcasecmp(s + n - k, e);
}

const char* ed_kind(const char* rel, const char* data, size_t len) {
    if (!strncmp(rel, "exports/", 8)) return "export";
    const char* figs[] = {".skel", ".scr", ".bvh", ".urdf", ".gltf", ".glb"};
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
        if (has_ext(rel, figs[i])) return "figure";
    const char* slash = strrchr(rel, '/');
    if (!strcmp(slash ? slash + 1 : rel, "editor.json")) return "settings";
    if (!has_ext(rel, ".json") || !data || len > ((size_t)8 << 20)) return "other";
    cJSON* root = cJSON_ParseWithLength(data, len);
    const char* kind = "other";
    if (cJSON_IsObject(root)) {
        const cJSON* fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
        const cJSON* figs = cJSON_GetObjectItemCaseSensitive(root, "figures");
        if (cJSON_GetObjectItemCaseSensitive(root, "keys") ||
            (cJSON_IsArray(figs) &&
             cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(figs, 0), "keys")))
            kind = "sequence"; /* one figure, or several each with its keys (not a scene) */
        else if (cJSON_IsString(fmt) && !strcmp(fmt->valuestring, "marionette-figure"))
            kind = "figure";
        else if (cJSON_GetObjectItemCaseSensitive(root, "handles") ||
                 cJSON_GetObjectItemCaseSensitive(root, "constraints"))
            kind = "scene";
    }
    cJSON_Delete(root);
    return kind;
}

/* One listed file: its path, what identifies its content without reading it, and what the
 * listing says of it. */
typedef struct ed_listed {
    char* path;
    long long size, mtime_ns, ctime_ns;
    unsigned long long ino;
    char version[17];
    const char* kind; /* a static string of ed_kind */
} ed_listed;

typedef struct listing {
    ed_listed* f;
    int n, cap;
} listing;

enum { LIST_MAX_FILES = 10000, LIST_MAX_DEPTH = 32 };

/* Collects the regular files beneath the folder dfd (closed here), named prefix/... */
static void walk(int dfd, const char* prefix, int depth, listing* l) {
    DIR* d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent* e;
    while ((e = readdir(d)) && l->n < LIST_MAX_FILES) {
        if (e->d_name[0] == '.' || mn_io_is_temporary(e->d_name)) continue;
        char rel[ED_MAX_REL + 2];
        int n = snprintf(rel, sizeof rel, "%s%s%s", prefix, prefix[0] ? "/" : "", e->d_name);
        if (n < 0 || n > ED_MAX_REL) continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode) && depth < LIST_MAX_DEPTH) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) walk(sub, rel, depth + 1, l);
        } else if (S_ISREG(st.st_mode) && !ed_path_problem(rel, strlen(rel))) {
            if (l->n == l->cap) {
                int cap = l->cap ? 2 * l->cap : 64;
                ed_listed* p = realloc(l->f, sizeof *p * (size_t)cap);
                if (!p) break;
                l->f = p;
                l->cap = cap;
            }
            ed_listed* f = &l->f[l->n];
            memset(f, 0, sizeof *f);
            f->path = strdup(rel);
            if (!f->path) break;
            f->size = (long long)st.st_size;
            f->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
            f->ctime_ns = (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
            f->ino = (unsigned long long)st.st_ino;
            l->n++;
        }
    }
    closedir(d);
}

static int by_path(const void* a, const void* b) {
    return strcmp(((const ed_listed*)a)->path, ((const ed_listed*)b)->path);
}

static void free_listed(ed_listed* f, int n) {
    for (int i = 0; i < n; i++)
        free(f[i].path);
    free(f);
}

void ed_list_forget(ed_server* sv) {
    free_listed(sv->listed, sv->nlisted);
    sv->listed = NULL;
    sv->nlisted = 0;
}

cJSON* ed_list(ed_server* sv) {
    listing l = {NULL, 0, 0};
    int dfd = open(sv->project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) walk(dfd, "", 0, &l);
    if (l.n) qsort(l.f, (size_t)l.n, sizeof *l.f, by_path);
    pthread_mutex_lock(&sv->list_lock);
    int keep = 0;
    for (int i = 0; i < l.n; i++) {
        ed_listed* f = &l.f[i];
        const ed_listed* was =
            sv->nlisted ? bsearch(f, sv->listed, (size_t)sv->nlisted, sizeof *f, by_path) : NULL;
        if (was && was->size == f->size && was->mtime_ns == f->mtime_ns &&
            was->ctime_ns == f->ctime_ns && was->ino == f->ino) {
            memcpy(f->version, was->version, sizeof f->version);
            f->kind = was->kind;
        } else {
            char *data, msg[300];
            size_t len;
            if (ed_read(sv, sv->project, f->path, &data, &len, msg, sizeof msg) != 200) continue;
            sv->list_read_bytes += (long long)len;
            ed_version(data, len, f->version);
            f->kind = ed_kind(f->path, data, len);
            /* what was read is what is listed: its own size (it may have changed since) */
            f->size = (long long)len;
            free(data);
        }
        if (keep != i) {
            ed_listed t = l.f[keep];
            l.f[keep] = *f;
            *f = t;
        }
        keep++;
    }
    /* the files read and listed become the remembered ones */
    ed_list_forget(sv);
    sv->listed = l.f;
    sv->nlisted = keep;
    for (int i = keep; i < l.n; i++) {
        free(l.f[i].path);
        l.f[i].path = NULL;
    }
    cJSON* arr = cJSON_CreateArray();
    for (int i = 0; i < keep && arr; i++) {
        cJSON* o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            break;
        }
        cJSON_AddStringToObject(o, "path", l.f[i].path);
        cJSON_AddStringToObject(o, "kind", l.f[i].kind);
        cJSON_AddNumberToObject(o, "size", (double)l.f[i].size);
        cJSON_AddStringToObject(o, "version", l.f[i].version);
    }
    pthread_mutex_unlock(&sv->list_lock);
    return arr;
}
