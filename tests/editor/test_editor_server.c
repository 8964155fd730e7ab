/* `marionette editor` end to end: the real command started on a free port (--port 0) in a
 * temporary project, spoken to over sockets. The page's files with their content types, the
 * project listing, files with versions and preconditions, a sequence document that does not
 * read (422, the file unchanged), confinement (.., absolute, encoded, backslash, NUL,
 * symbolic links out, a glTF buffer leaving its folder), bodies above 32 MiB, a table of
 * malformed requests (the server answers 4xx and lives on), the Host and Origin checks, two
 * writers with one version, SIGKILL after an acknowledged write, the scratch project, a
 * FIGURE argument, /api/figure, upload and export. Then the request handler called as a
 * plain function on requests no socket could carry. */
#define _GNU_SOURCE /* setenv, mkdtemp */
#include <marionette/io.h>
#include <marionette/model.h>

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "editor_server.h"
#include "test.h"

#define BVH MN_TEST_DATA "/cmu_02_01_walk_positions.bvh"
#define GLB MN_DATA "/skinned/RiggedSimple.glb"
#define CROUCH MN_SOURCE "/docs/examples/crouch_sequence.json"

/* ---- files ----------------------------------------------------------------------------------- */

static char* path_in(const char* dir, const char* rel) {
    static char buf[8][1024];
    static int slot;
    char* p = buf[slot++ % 8];
    snprintf(p, 1024, "%s/%s", dir, rel);
    return p;
}

static void put_file(const char* path, const char* data, size_t len) {
    FILE* f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, len, f) == len);
    fclose(f);
}

static void copy_file(const char* from, const char* to) {
    size_t n;
    char* d = mn_test_read_file(from, &n);
    CHECK(d != NULL);
    if (d) put_file(to, d, n);
    free(d);
}

/* A fresh folder inside the test's temporary folder. */
static char* fresh_dir(const char* name) {
    static char buf[8][512];
    static int slot;
    char* p = buf[slot++ % 8];
    snprintf(p, 512, "%s/%s_XXXXXX", mn_test_temp_dir(), name);
    if (!mkdtemp(p)) return NULL;
    return p;
}

/* Does any name in dir (not recursive) contain ".tmp"? */
static int has_temporary(const char* dir) {
    DIR* d = opendir(dir);
    if (!d) return 0;
    struct dirent* e;
    int found = 0;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp")) found = 1;
    closedir(d);
    return found;
}

/* The 64-bit FNV-1a of the bytes, as the server writes versions (computed here again). */
static void fnv(const char* s, size_t n, char out[17]) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ---- the server process -------------------------------------------------------------------- */

typedef struct server {
    pid_t pid;
    int port;
    FILE* out;        /* the rest of its stdout */
    char first[1024]; /* its first line */
} server;

/* The token of the server started last, from the URL it printed. */
static char token[80];

/* Starts `marionette editor ARGS... --port 0` with HOME (and XDG_DATA_HOME unless NULL) set;
 * reads the URL line. 0 on success. */
static int start(server* s, const char* home, const char* xdg, const char* const* args) {
    memset(s, 0, sizeof *s);
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 2);
        setenv("HOME", home, 1);
        if (xdg)
            setenv("XDG_DATA_HOME", xdg, 1);
        else
            unsetenv("XDG_DATA_HOME");
        unsetenv("MARIONETTE_EDITOR_ASSETS");
        const char* argv[16] = {MN_CLI, "editor"};
        int n = 2;
        for (; args && args[n - 2] && n < 13; n++)
            argv[n] = args[n - 2];
        argv[n++] = "--port";
        argv[n++] = "0";
        argv[n] = NULL;
        execv(MN_CLI, (char* const*)argv);
        _exit(127);
    }
    close(fds[1]);
    s->pid = pid;
    s->out = fdopen(fds[0], "r");
    char* line = s->first;
    if (!s->out || !fgets(line, sizeof s->first, s->out)) return -1;
    token[0] = 0;
    const char* url = strstr(line, "http://"); /* the line, or the "url" of --json's */
    if (!url || sscanf(url, "http://127.0.0.1:%d/?token=%64[0-9a-f]", &s->port, token) != 2 ||
        s->port <= 0 || strlen(token) != 64)
        return -1;
    return 0;
}

/* Stops it with sig; returns its exit status (128 + signal when killed by one). */
static int stop(server* s, int sig) {
    if (s->pid <= 0) return -1;
    kill(s->pid, sig);
    int st = 0;
    waitpid(s->pid, &st, 0);
    if (s->out) fclose(s->out);
    s->pid = 0;
    s->out = NULL;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- HTTP over a socket ---------------------------------------------------------------------- */

typedef struct reply {
    int status;
    char* head; /* status line and headers */
    char* body;
    size_t len;
} reply;

static void reply_free(reply* r) {
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof *r);
}

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct timeval tv = {30, 0}; /* a server that stops answering fails the test, no hang */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char* d, size_t n) {
    while (n) {
        ssize_t w = send(fd, d, n, MSG_NOSIGNAL);
        if (w <= 0) return -1;
        d += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads the whole answer (the server closes: Connection: close) and splits it. */
static reply read_reply(int fd) {
    reply r = {0};
    size_t cap = 65536, n = 0;
    char* buf = malloc(cap);
    for (;;) {
        if (n + 4096 > cap) buf = realloc(buf, cap *= 2);
        ssize_t got = recv(fd, buf + n, cap - n - 1, 0);
        if (got <= 0) break;
        n += (size_t)got;
    }
    close(fd);
    buf[n] = 0;
    char* end = strstr(buf, "\r\n\r\n");
    if (sscanf(buf, "HTTP/1.%*d %d", &r.status) != 1) r.status = 0;
    size_t hl = end ? (size_t)(end - buf) : n;
    r.head = strndup(buf, hl);
    size_t off = end ? hl + 4 : n;
    r.len = n - off;
    r.body = malloc(r.len + 1);
    memcpy(r.body, buf + off, r.len);
    r.body[r.len] = 0;
    free(buf);
    return r;
}

/* Sends the bytes as they are: no token. */
static reply raw_bare(int port, const char* req, size_t n) {
    int fd = connect_to(port);
    if (fd < 0) return (reply){0};
    send_all(fd, req, n);
    return read_reply(fd);
}

/* Sends the bytes with the token's header after the first line (when there is one). */
static reply raw(int port, const char* req, size_t n) {
    const char* eol = memmem(req, n, "\r\n", 2);
    if (!eol || !token[0]) return raw_bare(port, req, n);
    char line[120];
    int k = snprintf(line, sizeof line, "X-Marionette-Token: %s\r\n", token);
    size_t at = (size_t)(eol + 2 - req);
    char* buf = malloc(n + (size_t)k);
    memcpy(buf, req, at);
    memcpy(buf + at, line, (size_t)k);
    memcpy(buf + at + (size_t)k, req + at, n - at);
    reply r = raw_bare(port, buf, n + (size_t)k);
    free(buf);
    return r;
}

/* Builds a request to this server (Host 127.0.0.1:port, the token, Connection: close). */
static char* build(int port, const char* method, const char* target, const char* headers,
                   const char* body, size_t len, size_t* out_len) {
    size_t cap = len + strlen(target) + (headers ? strlen(headers) : 0) + 400;
    char* r = malloc(cap);
    int h = snprintf(r, cap,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Marionette-Token: %s\r\n"
                     "Connection: close\r\n%sContent-Length: %zu\r\n\r\n",
                     method, target, port, token, headers ? headers : "", len);
    if (len) memcpy(r + h, body, len);
    *out_len = (size_t)h + len;
    return r;
}

static reply request(int port, const char* method, const char* target, const char* headers,
                     const char* body, size_t len) {
    size_t n;
    char* r = build(port, method, target, headers, body, len, &n);
    reply out = raw_bare(port, r, n);
    free(r);
    return out;
}

static reply get(int port, const char* target) {
    return request(port, "GET", target, NULL, NULL, 0);
}

/* The value of header name in r (static buffer), "" when absent. */
static const char* header_of(const reply* r, const char* name) {
    static char v[512];
    v[0] = 0;
    size_t nl = strlen(name);
    for (const char* p = r->head; p && (p = strstr(p, "\r\n")); p += 2)
        if (!strncasecmp(p + 2, name, nl) && p[2 + nl] == ':') {
            const char* s = p + 3 + nl;
            while (*s == ' ')
                s++;
            size_t k = strcspn(s, "\r\n");
            snprintf(v, sizeof v, "%.*s", (int)k, s);
            break;
        }
    return v;
}

/* The string value of "key" in a JSON body (static buffer), "" when absent. */
static const char* json_str(const char* body, const char* key) {
    static char v[512];
    v[0] = 0;
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char* p = body ? strstr(body, pat) : NULL;
    if (!p) return v;
    p += strlen(pat);
    size_t k = 0;
    while (*p && *p != '"' && k + 1 < sizeof v) {
        if (*p == '\\' && p[1]) p++;
        v[k++] = *p++;
    }
    v[k] = 0;
    return v;
}

static char* quote_etag(const char* ver) {
    static char buf[4][96];
    static int slot;
    char* p = buf[slot++ % 4];
    snprintf(p, 96, "If-Match: \"%s\"\r\n", ver);
    return p;
}

/* A server on a fresh project folder (also the server's HOME), assets in `assets` or none. */
static char* project;
static char* home;
static int up(server* s, const char* assets) {
    project = fresh_dir("project");
    home = fresh_dir("home");
    const char* args[] = {project, assets ? "--assets" : NULL, assets, NULL};
    int rc = start(s, home, NULL, args);
    CHECK(rc == 0);
    return rc;
}

/* ---- tests ------------------------------------------------------------------------------------
 */

static void test_assets(void) {
    char* assets = fresh_dir("assets");
    put_file(path_in(assets, "index.html"), "<!doctype html><p>page</p>\n", 27);
    put_file(path_in(assets, "editor.js"), "export {};\n", 11);
    put_file(path_in(assets, "editor.css"), "p{}\n", 4);
    put_file(path_in(assets, "marionette.wasm"), "\0asm\1\0\0\0", 8);
    server s;
    if (up(&s, assets)) return;
    reply r = get(s.port, "/");
    CHECK(r.status == 200 && !strcmp(r.body, "<!doctype html><p>page</p>\n"));
    CHECK(!strcmp(header_of(&r, "Content-Type"), "text/html; charset=utf-8"));
    CHECK(!strcmp(header_of(&r, "Cache-Control"), "no-cache"));
    reply_free(&r);
    const char* names[][2] = {{"/index.html", "text/html; charset=utf-8"},
                              {"/editor.js", "text/javascript; charset=utf-8"},
                              {"/editor.css", "text/css; charset=utf-8"},
                              {"/marionette.wasm", "application/wasm"}};
    for (int i = 0; i < 4; i++) {
        r = get(s.port, names[i][0]);
        CHECK(r.status == 200 && !strcmp(header_of(&r, "Content-Type"), names[i][1]));
        reply_free(&r);
    }
    r = get(s.port, "/marionette.wasm");
    CHECK(r.len == 8 && !memcmp(r.body, "\0asm\1\0\0\0", 8));
    reply_free(&r);
    r = get(s.port, "/nothing.js");
    CHECK(r.status == 404);
    reply_free(&r);
    r = get(s.port, "/../index.html");
    CHECK(r.status == 403 || r.status == 400);
    reply_free(&r);
    r = request(s.port, "POST", "/index.html", NULL, "x", 1);
    CHECK(r.status == 405 && strstr(header_of(&r, "Allow"), "GET"));
    reply_free(&r);
    r = get(s.port, "/api/nothing");
    CHECK(r.status == 404);
    reply_free(&r);
    /* the Allow list is every method the path's routes take, HEAD with GET */
    r = request(s.port, "PATCH", "/api/file?path=a.json", NULL, NULL, 0);
    CHECK(r.status == 405 && !strcmp(header_of(&r, "Allow"), "GET, HEAD, PUT, DELETE"));
    reply_free(&r);
    r = get(s.port, "/api/upload?name=a.bvh");
    CHECK(r.status == 405 && !strcmp(header_of(&r, "Allow"), "POST"));
    reply_free(&r);
    r = request(s.port, "DELETE", "/api/project", NULL, NULL, 0);
    CHECK(r.status == 405 && !strcmp(header_of(&r, "Allow"), "GET, HEAD"));
    reply_free(&r);
    CHECK(stop(&s, SIGTERM) == 0);
    /* --assets naming no folder: a usage error naming it */
    const char* bad[] = {project, "--assets", "/nonexistent/assets", NULL};
    server b;
    CHECK(start(&b, home, NULL, bad) != 0);
    CHECK(stop(&b, SIGTERM) == 2);
}

static void test_files_and_versions(void) {
    server s;
    if (up(&s, NULL)) return;
    const char* body = "{\"view\": \"front\"}\n";
    size_t bl = strlen(body);
    char v1[17], v2[17];
    fnv(body, bl, v1);
    reply r = request(s.port, "PUT", "/api/file?path=editor.json", NULL, body, bl);
    CHECK(r.status == 428 && strstr(r.body, "If-Match"));
    reply_free(&r);
    CHECK(access(path_in(project, "editor.json"), F_OK) != 0);
    r = request(s.port, "PUT", "/api/file?path=editor.json", "If-None-Match: *\r\n", body, bl);
    CHECK(r.status == 200 && !strcmp(json_str(r.body, "version"), v1));
    reply_free(&r);
    size_t n;
    char* disk = mn_test_read_file(path_in(project, "editor.json"), &n);
    CHECK(disk && n == bl && !memcmp(disk, body, bl));
    free(disk);
    r = get(s.port, "/api/file?path=editor.json");
    char etag[40];
    snprintf(etag, sizeof etag, "\"%s\"", v1);
    CHECK(r.status == 200 && r.len == bl && !strcmp(header_of(&r, "ETag"), etag));
    reply_free(&r);
    /* creating it again: it exists */
    r = request(s.port, "PUT", "/api/file?path=editor.json", "If-None-Match: *\r\n", "{}", 2);
    CHECK(r.status == 409 && !strcmp(json_str(r.body, "version"), v1));
    reply_free(&r);
    const char* body2 = "{\"view\": \"side\"}\n";
    fnv(body2, strlen(body2), v2);
    r = request(s.port, "PUT", "/api/file?path=editor.json", quote_etag(v1), body2, strlen(body2));
    CHECK(r.status == 200 && !strcmp(json_str(r.body, "version"), v2));
    reply_free(&r);
    /* the old version is stale now: 409 with the current one, nothing written */
    r = request(s.port, "PUT", "/api/file?path=editor.json", quote_etag(v1), "{}", 2);
    CHECK(r.status == 409 && !strcmp(json_str(r.body, "version"), v2));
    reply_free(&r);
    disk = mn_test_read_file(path_in(project, "editor.json"), &n);
    CHECK(disk && !strcmp(disk, body2));
    free(disk);
    /* a .json file must be JSON: 422 naming the file and the line */
    r = request(s.port, "PUT", "/api/file?path=editor.json", quote_etag(v2), "{\n\"a\": \n}", 9);
    CHECK(r.status == 422 && strstr(r.body, "editor.json:3"));
    reply_free(&r);
    /* a file in a new subfolder, any bytes */
    r = request(s.port, "PUT", "/api/file?path=notes/a%20b.txt", "If-None-Match: *\r\n", "x\0y", 3);
    CHECK(r.status == 200);
    reply_free(&r);
    disk = mn_test_read_file(path_in(project, "notes/a b.txt"), &n);
    CHECK(disk && n == 3 && !memcmp(disk, "x\0y", 3));
    free(disk);
    /* download */
    r = get(s.port, "/api/file?path=notes/a%20b.txt&download=1");
    CHECK(r.status == 200 && strstr(header_of(&r, "Content-Disposition"), "attachment"));
    reply_free(&r);
    /* DELETE: a precondition, the version, then gone */
    r = request(s.port, "DELETE", "/api/file?path=editor.json", NULL, NULL, 0);
    CHECK(r.status == 428);
    reply_free(&r);
    r = request(s.port, "DELETE", "/api/file?path=editor.json", quote_etag(v1), NULL, 0);
    CHECK(r.status == 409);
    reply_free(&r);
    CHECK(access(path_in(project, "editor.json"), F_OK) == 0);
    r = request(s.port, "DELETE", "/api/file?path=editor.json", quote_etag(v2), NULL, 0);
    CHECK(r.status == 200 && !strcmp(r.body, "{}"));
    reply_free(&r);
    CHECK(access(path_in(project, "editor.json"), F_OK) != 0);
    r = get(s.port, "/api/file?path=editor.json");
    CHECK(r.status == 404);
    reply_free(&r);
    r = get(s.port, "/api/file");
    CHECK(r.status == 400);
    reply_free(&r);
    CHECK(!has_temporary(project));
    CHECK(stop(&s, SIGINT) == 0);
}

static void test_project_listing(void) {
    server s;
    project = fresh_dir("listing");
    home = fresh_dir("home");
    mkdir(path_in(project, "sub"), 0777);
    mkdir(path_in(project, "exports"), 0777);
    mkdir(path_in(project, ".git"), 0777);
    copy_file(CROUCH, path_in(project, "crouch.json"));
    put_file(path_in(project, "a.json"), "{\"keys\": []}", 12);
    put_file(path_in(project, "editor.json"), "{\"sequence\": \"crouch.json\"}", 27);
    put_file(path_in(project, "scene.json"), "{\"handles\": []}", 15);
    copy_file(BVH, path_in(project, "walk.bvh"));
    put_file(path_in(project, "sub/notes.txt"), "hello", 5);
    put_file(path_in(project, "exports/crouch.bvh"), "x", 1);
    put_file(path_in(project, ".hidden"), "x", 1);
    put_file(path_in(project, ".git/config"), "x", 1);
    put_file(path_in(project, "crouch.json.tmpAbC123"), "x", 1);
    CHECK(symlink("/etc", path_in(project, "etc")) == 0);
    const char* args[] = {project, NULL};
    if (start(&s, home, NULL, args) != 0) {
        CHECK(0);
        return;
    }
    reply r = get(s.port, "/api/project");
    CHECK(r.status == 200);
    /* editor.json names the sequence; its figure is the built-in one */
    CHECK(!strcmp(json_str(r.body, "sequence"), "crouch.json"));
    CHECK(!strcmp(json_str(r.body, "figure"), "stickman"));
    const char* order[] = {"\"path\":\"a.json\",\"kind\":\"sequence\"",
                           "\"path\":\"crouch.json\",\"kind\":\"sequence\"",
                           "\"path\":\"editor.json\",\"kind\":\"settings\"",
                           "\"path\":\"exports/crouch.bvh\",\"kind\":\"export\"",
                           "\"path\":\"scene.json\",\"kind\":\"scene\"",
                           "\"path\":\"sub/notes.txt\",\"kind\":\"other\",\"size\":5,"
                           "\"version\":\"a430d84680aabd0b\"",
                           "\"path\":\"walk.bvh\",\"kind\":\"figure\""};
    const char* at = r.body;
    for (int i = 0; i < 7; i++) {
        const char* p = strstr(r.body, order[i]);
        CHECK(p != NULL && p >= at);
        if (!p || p < at) fprintf(stderr, "  not in order: %s\n", order[i]);
        if (p) at = p;
    }
    char v[17];
    fnv("hello", 5, v);
    CHECK(!strcmp(v, "a430d84680aabd0b"));
    CHECK(!strstr(r.body, "hidden") && !strstr(r.body, ".git") && !strstr(r.body, "tmpAbC") &&
          !strstr(r.body, "\"etc"));
    reply_free(&r);
    stop(&s, SIGTERM);
    /* without editor.json: the first sequence document by name */
    remove(path_in(project, "editor.json"));
    if (start(&s, home, NULL, args) != 0) {
        CHECK(0);
        return;
    }
    r = get(s.port, "/api/project");
    CHECK(!strcmp(json_str(r.body, "sequence"), "a.json"));
    reply_free(&r);
    stop(&s, SIGTERM);
}

static void test_sequence_checked(void) {
    server s;
    if (up(&s, NULL)) return;
    size_t n;
    char* good = mn_test_read_file(CROUCH, &n);
    CHECK(good != NULL);
    if (!good) return;
    reply r = request(s.port, "PUT", "/api/file?path=seq.json", "If-None-Match: *\r\n", good, n);
    CHECK(r.status == 200);
    char ver[17];
    snprintf(ver, sizeof ver, "%s", json_str(r.body, "version"));
    reply_free(&r);
    /* a key pose with a string where a number goes: 422 naming file, line and field */
    char* bad = strdup(good);
    char* p = strstr(bad, "\"torso.2\": 0.35");
    CHECK(p != NULL);
    if (p) memcpy(p, "\"torso.2\": \"xx\"", 15);
    int line = 1;
    for (char* q = bad; q < p; q++)
        line += *q == '\n';
    r = request(s.port, "PUT", "/api/file?path=seq.json", quote_etag(ver), bad, n);
    char where[64];
    snprintf(where, sizeof where, "seq.json:%d:", line);
    CHECK(r.status == 422 && strstr(r.body, where) && strstr(r.body, "torso.2"));
    if (r.status != 422 || !strstr(r.body, where)) fprintf(stderr, "  got %s\n", r.body);
    reply_free(&r);
    /* a figure that leads out of the folder */
    char* out = strdup(good);
    p = strstr(out, "\"stickman\"");
    if (p) memcpy(p, "\"../x.bvh\"", 10);
    r = request(s.port, "PUT", "/api/file?path=seq.json", quote_etag(ver), out, n);
    CHECK(r.status == 422 && strstr(r.body, "seq.json") && strstr(r.body, "figure"));
    reply_free(&r);
    char* disk = mn_test_read_file(path_in(project, "seq.json"), &n);
    CHECK(disk && !strcmp(disk, good));
    free(disk);
    /* a document of several figures is read as such: listed as a sequence, a mistake in a
     * figure's keys refused naming the field */
    const char* two = "{\"fps\": 30, \"figures\": [\n"
                      "{\"name\": \"a\", \"file\": \"stickman\", \"keys\": [{\"frame\": 0, "
                      "\"pose\": {}}]},\n"
                      "{\"name\": \"b\", \"file\": \"stickman\", \"keys\": [{\"frame\": 0, "
                      "\"pose\": {\"tail\": 1}}]}]}";
    r = request(s.port, "PUT", "/api/file?path=two.json", "If-None-Match: *\r\n", two, strlen(two));
    CHECK(r.status == 422 && strstr(r.body, "two.json:3") && strstr(r.body, "figures[1].keys[0]"));
    if (r.status != 422) fprintf(stderr, "  got %s\n", r.body);
    reply_free(&r);
    char* fixed = strdup(two);
    char* tail = strstr(fixed, "{\"tail\": 1}");
    if (tail) memcpy(tail, "{         }", 11);
    r = request(s.port, "PUT", "/api/file?path=two.json", "If-None-Match: *\r\n", fixed,
                strlen(fixed));
    CHECK(r.status == 200);
    if (r.status != 200) fprintf(stderr, "  got %s\n", r.body);
    reply_free(&r);
    free(fixed);
    r = get(s.port, "/api/project");
    CHECK(r.status == 200 && strstr(r.body, "\"path\":\"two.json\",") &&
          strstr(strstr(r.body, "\"path\":\"two.json\""), "\"kind\":\"sequence\""));
    if (r.status == 200 && !strstr(r.body, "two.json")) fprintf(stderr, "  got %s\n", r.body);
    reply_free(&r);
    free(out);
    free(bad);
    free(good);
    stop(&s, SIGTERM);
}

static void test_confinement(void) {
    server s;
    char* outside = fresh_dir("outside");
    put_file(path_in(outside, "secret.txt"), "SECRET", 6);
    put_file(path_in(outside, "secret.bin"), "SECRETSECRET", 12);
    if (up(&s, NULL)) return;
    put_file(path_in(project, "in.txt"), "inside", 6);
    mkdir(path_in(project, "real"), 0777);
    put_file(path_in(project, "real/f.txt"), "f", 1);
    CHECK(symlink(path_in(outside, "secret.txt"), path_in(project, "link.txt")) == 0);
    CHECK(symlink(outside, path_in(project, "away")) == 0);
    CHECK(symlink("real", path_in(project, "alias")) == 0);
    const char* refused[] = {
        "/api/file?path=../secret.txt",       "/api/file?path=%2e%2e/secret.txt",
        "/api/file?path=%2E%2E%2Fsecret.txt", "/api/file?path=real/../../secret.txt",
        "/api/file?path=/etc/passwd",         "/api/file?path=%2Fetc%2Fpasswd",
        "/api/file?path=real%5Cf.txt",        "/api/file?path=in.txt%00.png",
        "/api/file?path=%ff%fe.txt",          "/api/file?path=link.txt",
        "/api/file?path=away/secret.txt",     "/api/file?path=./in.txt",
        "/api/file?path=real//f.txt",         "/api/figure?path=../secret.txt",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        reply r = get(s.port, refused[i]);
        CHECK(r.status == 403 && strstr(r.body, "refused") && !strstr(r.body, "SECRET"));
        if (r.status != 403) fprintf(stderr, "  %s: %d %s\n", refused[i], r.status, r.body);
        reply_free(&r);
    }
    char longpath[400] = "/api/file?path=";
    for (int i = 0; i < 256; i++)
        strcat(longpath, "a");
    reply r = get(s.port, longpath);
    CHECK(r.status == 403 && strstr(r.body, "255"));
    reply_free(&r);
    /* a symbolic link that stays inside is read; written through, never */
    r = get(s.port, "/api/file?path=alias/f.txt");
    CHECK(r.status == 200 && !strcmp(r.body, "f"));
    reply_free(&r);
    r = request(s.port, "PUT", "/api/file?path=alias/g.txt", "If-None-Match: *\r\n", "g", 1);
    CHECK(r.status == 403 && strstr(r.body, "symbolic link"));
    reply_free(&r);
    CHECK(access(path_in(project, "real/g.txt"), F_OK) != 0);
    r = request(s.port, "PUT", "/api/file?path=away/new.txt", "If-None-Match: *\r\n", "n", 1);
    CHECK(r.status == 403);
    reply_free(&r);
    CHECK(access(path_in(outside, "new.txt"), F_OK) != 0);
    r = request(s.port, "PUT", "/api/file?path=link.txt", "If-Match: *\r\n", "n", 1);
    CHECK(r.status == 403);
    reply_free(&r);
    r = request(s.port, "PUT", "/api/file?path=../x.txt", "If-None-Match: *\r\n", "n", 1);
    CHECK(r.status == 403);
    reply_free(&r);
    r = request(s.port, "DELETE", "/api/file?path=away/secret.txt", "If-Match: *\r\n", NULL, 0);
    CHECK(r.status == 403);
    reply_free(&r);
    char* sec = mn_test_read_file(path_in(outside, "secret.txt"), NULL);
    CHECK(sec && !strcmp(sec, "SECRET"));
    free(sec);
    /* a glTF file whose buffer leaves its folder: refused, naming the URI */
    /* a skin of one joint whose inverse bind matrices are in the buffer at URI */
    const char* gltf = "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],"
                       "\"nodes\":[{\"name\":\"root\"}],\"skins\":[{\"joints\":[0],"
                       "\"inverseBindMatrices\":0}],\"accessors\":[{\"bufferView\":0,"
                       "\"componentType\":5126,\"count\":1,\"type\":\"MAT4\"}],"
                       "\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],\"buffers\":[{"
                       "\"uri\":\"%s\",\"byteLength\":64}]}";
    const char* uris[] = {"../secret.bin", "%2e%2e/secret.bin", "../../x.bin"};
    mkdir(path_in(project, "fig"), 0777);
    for (int i = 0; i < 3; i++) {
        char doc[800];
        int dl = snprintf(doc, sizeof doc, gltf, uris[i]);
        put_file(path_in(project, "fig/f.gltf"), doc, (size_t)dl);
        r = get(s.port, "/api/figure?path=fig/f.gltf");
        CHECK(r.status == 422 && strstr(r.body, "fig/f.gltf") && strstr(r.body, "refused") &&
              !strstr(r.body, outside));
        if (r.status != 422) fprintf(stderr, "  %s: %d %s\n", uris[i], r.status, r.body);
        reply_free(&r);
    }
    /* and through a symbolic link inside the figure's folder */
    CHECK(symlink(path_in(outside, "secret.bin"), path_in(project, "fig/b.bin")) == 0);
    char doc[800];
    int dl = snprintf(doc, sizeof doc, gltf, "b.bin");
    put_file(path_in(project, "fig/f.gltf"), doc, (size_t)dl);
    r = get(s.port, "/api/figure?path=fig/f.gltf");
    CHECK(r.status == 422 && strstr(r.body, "b.bin") && strstr(r.body, "refused"));
    reply_free(&r);
    stop(&s, SIGTERM);
}

static void test_oversize(void) {
    server s;
    if (up(&s, NULL)) return;
    /* declared: refused from the header, before any of the body is sent */
    const char* req = "PUT /api/file?path=big.bin HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                      "If-None-Match: *\r\nConnection: close\r\nContent-Length: 33554433\r\n\r\n";
    char buf[400];
    int n = snprintf(buf, sizeof buf, req, s.port);
    reply r = raw(s.port, buf, (size_t)n);
    CHECK(r.status == 413);
    reply_free(&r);
    /* chunked, no length given: refused once the body passes 32 MiB */
    int fd = connect_to(s.port);
    n = snprintf(buf, sizeof buf,
                 "PUT /api/file?path=big.bin HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nIf-None-Match: "
                 "*\r\nX-Marionette-Token: %s\r\nConnection: close\r\nTransfer-Encoding: "
                 "chunked\r\n\r\n",
                 s.port, token);
    send_all(fd, buf, (size_t)n);
    size_t chunk = 1 << 20;
    char* block = malloc(chunk + 32);
    int h = snprintf(block, 32, "%zx\r\n", chunk);
    memset(block + h, 'x', chunk);
    memcpy(block + h + chunk, "\r\n", 2);
    for (int i = 0; i < 33; i++)
        if (send_all(fd, block, (size_t)h + chunk + 2) != 0) break;
    send_all(fd, "0\r\n\r\n", 5);
    free(block);
    r = read_reply(fd);
    CHECK(r.status == 413);
    reply_free(&r);
    CHECK(access(path_in(project, "big.bin"), F_OK) != 0);
    /* exactly 32 MiB is accepted */
    size_t len = (size_t)32 << 20;
    char* body = malloc(len);
    memset(body, 'y', len);
    r = request(s.port, "PUT", "/api/file?path=big.bin", "If-None-Match: *\r\n", body, len);
    CHECK(r.status == 200);
    reply_free(&r);
    free(body);
    struct stat st;
    CHECK(stat(path_in(project, "big.bin"), &st) == 0 && (size_t)st.st_size == len);
    stop(&s, SIGTERM);
}

/* Raw bytes that are not a good request: each is answered with a 4xx, and the server lives
 * on. Where libmicrohttpd itself refuses a request line (no URI at all) it closes the
 * connection without an answer; a NUL inside the request line ends the URL there (no answer
 * may be a success). want: the status; 0: any 4xx; -1: a 4xx or closed unanswered; -2: no
 * 2xx; -3: nothing to answer yet (the bytes are sent, the connection closed). */
static void test_malformed_requests(void) {
    server s;
    if (up(&s, NULL)) return;
    char hostline[64];
    snprintf(hostline, sizeof hostline, "Host: 127.0.0.1:%d\r\n", s.port);
    static const struct {
        const char* text;
        size_t len; /* 0: strlen */
        int want;   /* the status, or 0 for any 4xx */
    } table[] = {
        {"GARBAGE\r\n\r\n", 0, -1},
        {"GET\r\n\r\n", 0, -1},
        {"GET / HTTP/9.9\r\nHost: 127.0.0.1:%d\r\n\r\n", 0, 505},
        {"GET / HTTP/1.1\r\n\r\n", 0, 0}, /* no Host */
        {"GET /api/project HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nno colon here\r\n\r\n", 0, 0},
        {"GET /api/file?path=%%zz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", 0, 403},
        {"GET /api/file?path=a%%00b HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", 0, 403},
        {"GET /%%zz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", 0, 400},
        {"GET /api/file?path=a\0/../../x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", 62, -2},
        {"PUT /api/file?path=a.txt HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: -5\r\n\r\n", 0,
         0},
        {"PUT /api/file?path=a.txt HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: abc\r\n\r\n",
         0, 0},
        {"PUT /api/file?path=a.txt HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nTransfer-Encoding: "
         "chunked\r\n\r\nzz\r\nxx\r\n0\r\n\r\n",
         0, 0},
        {"GET /api/project?a=1&&&=&b HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", 0, 200},
        {"GET http://evil/api/project HTTP/1.1\r\nHost: evil\r\n\r\n", 0, 403},
        {"DELETE /api/file HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", 0, 400},
        {"POST /api/upload HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\n\r\n", 0, 400},
        {"POST /api/export?sequence=none.json&format=obj HTTP/1.1\r\nHost: "
         "127.0.0.1:%d\r\nContent-Length: 0\r\n\r\n",
         0, 400},
        {"\r\n\r\n\r\n", 0, -3}, /* empty lines before a request: nothing to answer yet */
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char buf[600];
        size_t n;
        if (table[i].len) {
            memcpy(buf, table[i].text, table[i].len);
            n = table[i].len;
            /* the port into the Host line of a request holding a NUL */
            char* at = memmem(buf, n, "%d", 2);
            if (at) {
                char rest[300];
                size_t tail = n - (size_t)(at + 2 - buf);
                memcpy(rest, at + 2, tail);
                int w = snprintf(at, 8, "%d", s.port);
                memcpy(at + w, rest, tail);
                n = (size_t)(at - buf) + (size_t)w + tail;
            }
        } else {
            n = (size_t)snprintf(buf, sizeof buf, table[i].text, s.port);
        }
        /* Connection: close after the first line, so that the answer ends the connection */
        char* eol = memmem(buf, n, "\r\n", 2);
        if (eol && n + 20 < sizeof buf) {
            size_t at = (size_t)(eol + 2 - buf);
            memmove(buf + at + 19, buf + at, n - at);
            memcpy(buf + at, "Connection: close\r\n", 19);
            n += 19;
        }
        reply r = {0};
        int want = table[i].want, ok;
        if (want == -3) {
            int fd = connect_to(s.port);
            ok = fd >= 0 && send_all(fd, buf, n) == 0;
            if (fd >= 0) close(fd);
        } else {
            r = raw(s.port, buf, n);
            int c4 = r.status >= 400 && r.status < 500;
            ok = want > 0     ? r.status == want
                 : want == 0  ? c4
                 : want == -1 ? c4 || (r.status == 0 && r.len == 0)
                              : r.status < 200 || r.status >= 300;
        }
        CHECK(ok);
        if (!ok) fprintf(stderr, "  malformed[%zu]: status %d\n", i, r.status);
        reply_free(&r);
        /* still alive */
        r = get(s.port, "/api/project");
        CHECK(r.status == 200);
        reply_free(&r);
    }
    /* a request line and headers far beyond what a request needs */
    size_t big = 200000;
    char* huge = malloc(big + 200);
    int h = snprintf(huge, 200, "GET /api/project HTTP/1.1\r\n%sX-Big: ", hostline);
    memset(huge + h, 'a', big);
    memcpy(huge + h + big, "\r\n\r\n", 4);
    reply r = raw(s.port, huge, (size_t)h + big + 4);
    CHECK(r.status >= 400 && r.status < 500);
    reply_free(&r);
    free(huge);
    r = get(s.port, "/api/project");
    CHECK(r.status == 200);
    reply_free(&r);
    CHECK(stop(&s, SIGTERM) == 0);
}

static void test_host_and_origin(void) {
    server s;
    if (up(&s, NULL)) return;
    char req[300];
    const char* hosts[] = {"evil.example:%d", "127.0.0.1", "127.0.0.1:1", "localhost.evil:%d",
                           "127.0.0.2:%d"};
    for (int i = 0; i < 5; i++) {
        char host[64];
        snprintf(host, sizeof host, hosts[i], s.port);
        int n =
            snprintf(req, sizeof req,
                     "GET /api/project HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host);
        reply r = raw(s.port, req, (size_t)n);
        CHECK(r.status == 403 && strstr(r.body, "Host"));
        reply_free(&r);
    }
    int n = snprintf(req, sizeof req,
                     "GET /api/project HTTP/1.1\r\nHost: localhost:%d\r\nConnection: close\r\n\r\n",
                     s.port);
    reply r = raw(s.port, req, (size_t)n);
    CHECK(r.status == 200);
    reply_free(&r);
    r = request(s.port, "PUT", "/api/file?path=a.txt",
                "If-None-Match: *\r\nOrigin: http://evil.example\r\n", "a", 1);
    CHECK(r.status == 403 && strstr(r.body, "origin"));
    reply_free(&r);
    CHECK(access(path_in(project, "a.txt"), F_OK) != 0);
    char origin[128];
    snprintf(origin, sizeof origin, "If-None-Match: *\r\nOrigin: http://127.0.0.1:%d\r\n", s.port);
    r = request(s.port, "PUT", "/api/file?path=a.txt", origin, "a", 1);
    CHECK(r.status == 200);
    reply_free(&r);
    stop(&s, SIGTERM);
}

/* Two writers holding the same version: both requests are sent before either answer is
 * read; whichever the server takes first wins, the other is told of the conflict. */
static void test_two_writers(void) {
    server s;
    if (up(&s, NULL)) return;
    reply r = request(s.port, "PUT", "/api/file?path=doc.txt", "If-None-Match: *\r\n", "v0", 2);
    char v0[17];
    snprintf(v0, sizeof v0, "%s", json_str(r.body, "version"));
    reply_free(&r);
    size_t na, nb;
    char* a = build(s.port, "PUT", "/api/file?path=doc.txt", quote_etag(v0), "from A", 6, &na);
    char* b = build(s.port, "PUT", "/api/file?path=doc.txt", quote_etag(v0), "from B", 6, &nb);
    int fa = connect_to(s.port), fb = connect_to(s.port);
    send_all(fa, a, na);
    send_all(fb, b, nb);
    reply ra = read_reply(fa), rb = read_reply(fb);
    CHECK((ra.status == 200 && rb.status == 409) || (ra.status == 409 && rb.status == 200));
    reply* won = ra.status == 200 ? &ra : &rb;
    reply* lost = ra.status == 200 ? &rb : &ra;
    char* disk = mn_test_read_file(path_in(project, "doc.txt"), NULL);
    const char* text = won == &ra ? "from A" : "from B";
    CHECK(disk && !strcmp(disk, text));
    /* the loser is told the winner's version */
    CHECK(!strcmp(json_str(lost->body, "version"), json_str(won->body, "version")));
    free(disk);
    reply_free(&ra);
    reply_free(&rb);
    free(a);
    free(b);
    stop(&s, SIGTERM);
}

static void test_sigkill_after_write(void) {
    server s;
    if (up(&s, NULL)) return;
    const char* body = "{\"keys\": \"not yet\", \"note\": \"acknowledged\"}";
    reply r = request(s.port, "PUT", "/api/file?path=keep.txt", "If-None-Match: *\r\n", body,
                      strlen(body));
    CHECK(r.status == 200);
    char ver[17];
    snprintf(ver, sizeof ver, "%s", json_str(r.body, "version"));
    reply_free(&r);
    CHECK(stop(&s, SIGKILL) == 128 + SIGKILL);
    char* disk = mn_test_read_file(path_in(project, "keep.txt"), NULL);
    CHECK(disk && !strcmp(disk, body));
    free(disk);
    CHECK(!has_temporary(project));
    const char* args[] = {project, NULL};
    if (start(&s, home, NULL, args) != 0) {
        CHECK(0);
        return;
    }
    r = get(s.port, "/api/file?path=keep.txt");
    char etag[40];
    snprintf(etag, sizeof etag, "\"%s\"", ver);
    CHECK(r.status == 200 && !strcmp(r.body, body) && !strcmp(header_of(&r, "ETag"), etag));
    reply_free(&r);
    stop(&s, SIGTERM);
}

static void test_scratch_project(void) {
    server s;
    char* h = fresh_dir("home");
    if (start(&s, h, NULL, NULL) != 0) {
        CHECK(0);
        return;
    }
    struct stat st;
    CHECK(stat(path_in(h, ".local/share/marionette/scratch"), &st) == 0 && S_ISDIR(st.st_mode));
    reply r = get(s.port, "/api/project");
    CHECK(r.status == 200 && !strcmp(json_str(r.body, "name"), "scratch") &&
          !strcmp(json_str(r.body, "figure"), "stickman") &&
          !strcmp(json_str(r.body, "sequence"), "sequence.json"));
    reply_free(&r);
    r = request(s.port, "PUT", "/api/file?path=sequence.json", "If-None-Match: *\r\n", "{}", 2);
    CHECK(r.status == 200);
    reply_free(&r);
    CHECK(access(path_in(h, ".local/share/marionette/scratch/sequence.json"), F_OK) == 0);
    stop(&s, SIGTERM);
    /* XDG_DATA_HOME wins over HOME */
    char* x = fresh_dir("xdg");
    if (start(&s, h, x, NULL) != 0) {
        CHECK(0);
        return;
    }
    CHECK(stat(path_in(x, "marionette/scratch"), &st) == 0 && S_ISDIR(st.st_mode));
    stop(&s, SIGTERM);
}

static void test_figure_argument(void) {
    server s;
    char* dir = fresh_dir("figure");
    char* h = fresh_dir("home");
    copy_file(BVH, path_in(dir, "walk.bvh"));
    const char* args[] = {path_in(dir, "walk.bvh"), NULL};
    if (start(&s, h, NULL, args) != 0) {
        CHECK(0);
        return;
    }
    reply r = get(s.port, "/api/project");
    CHECK(r.status == 200 && !strcmp(json_str(r.body, "figure"), "walk.bvh") &&
          !strcmp(json_str(r.body, "sequence"), "walk.sequence.json"));
    reply_free(&r);
    stop(&s, SIGTERM);
    /* a file that is no figure, a path that is nothing */
    const char* no[] = {CROUCH, NULL};
    CHECK(start(&s, h, NULL, no) != 0);
    CHECK(stop(&s, SIGTERM) == 1);
    const char* none[] = {"/nonexistent/figure.bvh", NULL};
    CHECK(start(&s, h, NULL, none) != 0);
    CHECK(stop(&s, SIGTERM) == 1);
}

/* The joint count of a figure document (the objects of its "joints" array, which ends with
 * a line "  ]"). */
static int doc_joints(const char* doc) {
    const char* j = strstr(doc, "\"joints\":[");
    const char* end = j ? strstr(j, "\n  ]") : NULL;
    int n = 0;
    for (const char* p = j; p && (p = strstr(p, "{\"name\":")) && p < end; p++)
        n++;
    return end ? n : -1;
}

static void test_api_figure(void) {
    server s;
    if (up(&s, NULL)) return;
    copy_file(BVH, path_in(project, "walk.bvh"));
    mkdir(path_in(project, "skins"), 0777);
    copy_file(GLB, path_in(project, "skins/rig.glb"));
    const char* rels[] = {"stickman", "walk.bvh", "skins/rig.glb"};
    const char* files[] = {"stickman", BVH, GLB};
    for (int i = 0; i < 3; i++) {
        char target[128];
        snprintf(target, sizeof target, "/api/figure?path=%s", rels[i]);
        reply r = get(s.port, target);
        CHECK(r.status == 200 && strstr(r.body, "\"format\":\"marionette-figure\""));
        CHECK(!strcmp(header_of(&r, "Content-Type"), "application/json"));
        mn_model* m = NULL;
        mn_error err;
        CHECK(mn_figure_read(files[i], &m, NULL, NULL, &err) == MN_OK);
        CHECK(m && doc_joints(r.body) == m->njoint);
        /* the document reads back as the same figure */
        mn_model* back = NULL;
        CHECK(mn_figure_doc_read_mem(r.body, r.len, "doc", &back, NULL, &err) == MN_OK);
        CHECK(back && m && back->nq == m->nq);
        if (i == 1) CHECK(strstr(r.body, "\"motion\":"));
        if (i == 2) CHECK(strstr(r.body, "\"skin\":"));
        mn_model_destroy(back);
        mn_model_destroy(m);
        reply_free(&r);
    }
    /* a bad figure file: 422 naming the file and the line */
    put_file(path_in(project, "bad.bvh"), "HIERARCHY\nROOT hip\n{\n OFFSET 0 x 0\n}\n", 36);
    reply r = get(s.port, "/api/figure?path=bad.bvh");
    CHECK(r.status == 422 && strstr(r.body, "bad.bvh:4") && !strstr(r.body, project));
    reply_free(&r);
    r = get(s.port, "/api/figure?path=missing.bvh");
    CHECK(r.status == 404);
    reply_free(&r);
    /* re-rooted (a sequence document's "root"): the figure hangs from its left hand, every
     * joint of the stick figure kept; a joint it has not is 422 naming the field */
    r = get(s.port, "/api/figure?path=stickman&root=left%20hand");
    mn_model* rm = NULL;
    mn_error err;
    CHECK(r.status == 200 &&
          mn_figure_doc_read_mem(r.body, r.len, "doc", &rm, NULL, &err) == MN_OK && rm &&
          !strcmp(rm->jnt_name[0], "left hand") && mn_model_find_joint(rm, "left elbow~") >= 0);
    mn_model_destroy(rm);
    reply_free(&r);
    r = get(s.port, "/api/figure?path=walk.bvh&root=LeftHand");
    CHECK(r.status == 200 && strstr(r.body, "\"name\":\"LeftHand\""));
    reply_free(&r);
    r = get(s.port, "/api/figure?path=stickman&root=paw");
    CHECK(r.status == 422 && strstr(r.body, "root") && strstr(r.body, "paw"));
    reply_free(&r);
    stop(&s, SIGTERM);
}

static void test_upload(void) {
    server s;
    if (up(&s, NULL)) return;
    size_t n;
    char* bvh = mn_test_read_file(BVH, &n);
    CHECK(bvh != NULL);
    if (!bvh) return;
    reply r = request(s.port, "POST", "/api/upload?name=walk.bvh", NULL, bvh, n);
    char ver[17];
    fnv(bvh, n, ver);
    CHECK(r.status == 200 && !strcmp(json_str(r.body, "path"), "walk.bvh") &&
          !strcmp(json_str(r.body, "version"), ver) && strstr(r.body, "\"figure\":{\"format\""));
    reply_free(&r);
    r = request(s.port, "POST", "/api/upload?name=walk.bvh", NULL, bvh, n);
    CHECK(r.status == 200 && !strcmp(json_str(r.body, "path"), "walk-2.bvh"));
    reply_free(&r);
    char* disk = mn_test_read_file(path_in(project, "walk-2.bvh"), NULL);
    CHECK(disk && !strcmp(disk, bvh));
    free(disk);
    /* not a figure: 422, nothing written */
    r = request(s.port, "POST", "/api/upload?name=junk.bvh", NULL, "HIERARCHY\nnonsense\n", 19);
    CHECK(r.status == 422 && strstr(r.body, "junk.bvh"));
    reply_free(&r);
    CHECK(access(path_in(project, "junk.bvh"), F_OK) != 0);
    r = request(s.port, "POST", "/api/upload?name=sub/x.bvh", NULL, bvh, n);
    CHECK(r.status == 403);
    reply_free(&r);
    r = request(s.port, "POST", "/api/upload?name=../x.bvh", NULL, bvh, n);
    CHECK(r.status == 403);
    reply_free(&r);
    size_t gn;
    char* glb = mn_test_read_file(GLB, &gn);
    r = request(s.port, "POST", "/api/upload?name=rig.glb", NULL, glb, gn);
    CHECK(r.status == 200 && strstr(r.body, "\"skin\":"));
    reply_free(&r);
    free(glb);
    free(bvh);
    CHECK(!has_temporary(project));
    stop(&s, SIGTERM);
}

static void test_export(void) {
    server s;
    if (up(&s, NULL)) return;
    size_t n;
    char* seq = mn_test_read_file(CROUCH, &n);
    reply r = request(s.port, "PUT", "/api/file?path=crouch.json", "If-None-Match: *\r\n", seq, n);
    CHECK(r.status == 200);
    reply_free(&r);
    free(seq);
    r = request(s.port, "POST", "/api/export?sequence=crouch.json&format=bvh", NULL, NULL, 0);
    CHECK(r.status == 200 && !strcmp(json_str(r.body, "path"), "exports/crouch.bvh"));
    char ver[17];
    snprintf(ver, sizeof ver, "%s", json_str(r.body, "version"));
    reply_free(&r);
    /* read back with the library: the stick figure, every frame from the first key (0) to
     * the last (60) */
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    mn_model* stick = mn_stickman_model(&err);
    mn_bvh_options bo = mn_bvh_default();
    bo.names_of =
        stick; /* the names as the stick figure spells them ("left_hand" -> "left hand") */
    CHECK(mn_bvh_read(path_in(project, "exports/crouch.bvh"), &bo, &m, &mo, NULL, &err) == MN_OK);
    CHECK(m && stick && mo.nframes == 61 && fabs(mo.frame_time - 1.0 / 30) < 1e-9);
    CHECK(m && stick && mn_model_find_joint(m, "left hand") >= 0);
    mn_motion_free(&mo);
    mn_model_destroy(m);
    mn_model_destroy(stick);
    /* the page downloads it */
    r = get(s.port, "/api/file?path=exports/crouch.bvh&download=1");
    char etag[40];
    snprintf(etag, sizeof etag, "\"%s\"", ver);
    CHECK(r.status == 200 && !strcmp(header_of(&r, "ETag"), etag) &&
          strstr(header_of(&r, "Content-Disposition"), "filename=\"crouch.bvh\""));
    reply_free(&r);
    r = request(s.port, "POST", "/api/export?sequence=crouch.json&format=glb", NULL, NULL, 0);
    CHECK(r.status == 200 && !strcmp(json_str(r.body, "path"), "exports/crouch.glb"));
    reply_free(&r);
    char* glb = mn_test_read_file(path_in(project, "exports/crouch.glb"), NULL);
    CHECK(glb && !memcmp(glb, "glTF", 4));
    free(glb);
    r = request(s.port, "POST", "/api/export?sequence=none.json&format=bvh", NULL, NULL, 0);
    CHECK(r.status == 404);
    reply_free(&r);
    /* an exports folder that is a symbolic link: refused */
    char* outside = fresh_dir("outside");
    char* proj2 = fresh_dir("proj2");
    CHECK(symlink(outside, path_in(proj2, "exports")) == 0);
    copy_file(CROUCH, path_in(proj2, "crouch.json"));
    stop(&s, SIGTERM);
    const char* args[] = {proj2, NULL};
    if (start(&s, home, NULL, args) != 0) {
        CHECK(0);
        return;
    }
    r = request(s.port, "POST", "/api/export?sequence=crouch.json&format=bvh", NULL, NULL, 0);
    CHECK(r.status == 403 && strstr(r.body, "symbolic link"));
    reply_free(&r);
    CHECK(access(path_in(outside, "crouch.bvh"), F_OK) != 0);
    stop(&s, SIGTERM);
}

/* The secret token: every API request carries it (a header, or the cookie the page got when
 * it was opened with the printed URL); without it nothing is read or written, Origin or
 * not. Hidden paths are refused for every route. */
static void test_token(void) {
    char* assets = fresh_dir("assets");
    put_file(path_in(assets, "index.html"), "<!doctype html><p>page</p>\n", 27);
    server s;
    if (up(&s, assets)) return;
    char first[80];
    snprintf(first, sizeof first, "%s", token);
    char req[600];
    /* no token, a wrong one, one of another length, another port's cookie: 403 */
    const char* bad[] = {"", "X-Marionette-Token: 00\r\n",
                         "X-Marionette-Token: "
                         "0000000000000000000000000000000000000000000000000000000000000000\r\n",
                         "Authorization: Bearer nope\r\n", "Cookie: marionette-token-1=%s\r\n"};
    for (int i = 0; i < 5; i++) {
        char h[200];
        snprintf(h, sizeof h, bad[i], token);
        int n = snprintf(req, sizeof req,
                         "GET /api/project HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sConnection: "
                         "close\r\n\r\n",
                         s.port, h);
        reply r = raw_bare(s.port, req, (size_t)n);
        CHECK(r.status == 403 && strstr(r.body, "token"));
        reply_free(&r);
    }
    /* the audit's write: a PUT with no Origin and no token, of a hidden file or not */
    put_file(path_in(project, "keep.txt"), "old", 3);
    const char* targets[] = {"keep.txt", "new.txt"};
    for (int i = 0; i < 2; i++) {
        int n =
            snprintf(req, sizeof req,
                     "PUT /api/file?path=%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nIf-Match: "
                     "*\r\nIf-None-Match: *\r\nConnection: close\r\nContent-Length: 3\r\n\r\nnew",
                     targets[i], s.port);
        reply r = raw_bare(s.port, req, (size_t)n);
        CHECK(r.status == 403);
        reply_free(&r);
        n = snprintf(req, sizeof req,
                     "DELETE /api/file?path=%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nIf-Match: "
                     "*\r\nConnection: close\r\n\r\n",
                     targets[i], s.port);
        r = raw_bare(s.port, req, (size_t)n);
        CHECK(r.status == 403);
        reply_free(&r);
    }
    size_t kl;
    char* kept = mn_test_read_file(path_in(project, "keep.txt"), &kl);
    CHECK(kept && kl == 3 && !memcmp(kept, "old", 3));
    free(kept);
    CHECK(access(path_in(project, "new.txt"), F_OK) != 0);
    /* without the token, a body is not even read: answered from the headers (a client that
     * never sends the 1 MiB it announces still gets its 403) */
    int fd = connect_to(s.port);
    int hn = snprintf(req, sizeof req,
                      "PUT /api/file?path=big.bin HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nIf-None-Match: "
                      "*\r\nContent-Length: 1048576\r\n\r\n",
                      s.port);
    CHECK(fd >= 0 && send_all(fd, req, (size_t)hn) == 0);
    reply early = fd >= 0 ? read_reply(fd) : (reply){0};
    CHECK(early.status == 403 && strstr(early.body, "token"));
    reply_free(&early);
    CHECK(access(path_in(project, "big.bin"), F_OK) != 0);
    /* the token as a header, as Authorization, as the cookie: 200 */
    const char* good[] = {"X-Marionette-Token: %s\r\n", "Authorization: Bearer %s\r\n",
                          "Cookie: a=b; marionette-token-%d=%s; c=d\r\n"};
    for (int i = 0; i < 3; i++) {
        char h[200];
        if (i == 2)
            snprintf(h, sizeof h, good[i], s.port, token);
        else
            snprintf(h, sizeof h, good[i], token);
        int n = snprintf(req, sizeof req,
                         "GET /api/project HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sConnection: "
                         "close\r\n\r\n",
                         s.port, h);
        reply r = raw_bare(s.port, req, (size_t)n);
        CHECK(r.status == 200);
        reply_free(&r);
    }
    /* the page: without a token it is served (no cookie); with the printed one it sets the
     * cookie; with a wrong one it is refused */
    int n = snprintf(req, sizeof req,
                     "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", s.port);
    reply r = raw_bare(s.port, req, (size_t)n);
    CHECK(r.status == 200 && !header_of(&r, "Set-Cookie")[0]);
    reply_free(&r);
    n = snprintf(req, sizeof req,
                 "GET /?token=%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
                 token, s.port);
    r = raw_bare(s.port, req, (size_t)n);
    char want[160];
    snprintf(want, sizeof want, "marionette-token-%d=%s;", s.port, token);
    const char* cookie = header_of(&r, "Set-Cookie");
    CHECK(r.status == 200 && !strncmp(cookie, want, strlen(want)) && strstr(cookie, "HttpOnly") &&
          strstr(cookie, "SameSite=Strict") && strstr(cookie, "Path=/"));
    reply_free(&r);
    n = snprintf(req, sizeof req,
                 "GET /?token=abc HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
                 s.port);
    r = raw_bare(s.port, req, (size_t)n);
    CHECK(r.status == 403 && !header_of(&r, "Set-Cookie")[0]);
    reply_free(&r);
    /* hidden paths, with the token: refused by every route */
    mkdir(path_in(project, ".git"), 0777);
    put_file(path_in(project, ".git/config"), "[core]\n", 7);
    put_file(path_in(project, ".bashrc"), "x", 1);
    const char* hidden[][2] = {{"PUT", "/api/file?path=.git/config"},
                               {"PUT", "/api/file?path=.ssh/authorized_keys"},
                               {"GET", "/api/file?path=.bashrc"},
                               {"DELETE", "/api/file?path=.bashrc"},
                               {"GET", "/api/figure?path=.git/config"},
                               {"POST", "/api/export?sequence=.seq.json&format=bvh"},
                               {"POST", "/api/upload?name=.bashrc"},
                               {"PUT", "/api/file?path=sub/.hidden/x.txt"}};
    for (int i = 0; i < 8; i++) {
        r = request(s.port, hidden[i][0], hidden[i][1], "If-Match: *\r\n", "x", 1);
        CHECK(r.status == 403);
        if (r.status != 403) fprintf(stderr, "  hidden[%d]: %d\n", i, r.status);
        reply_free(&r);
    }
    size_t cl;
    char* cfg = mn_test_read_file(path_in(project, ".git/config"), &cl);
    CHECK(cfg && cl == 7);
    free(cfg);
    CHECK(access(path_in(project, ".ssh"), F_OK) != 0 &&
          access(path_in(project, "sub"), F_OK) != 0);
    CHECK(stop(&s, SIGTERM) == 0);
    /* another start, another token */
    if (up(&s, NULL)) return;
    CHECK(strcmp(first, token) != 0);
    stop(&s, SIGTERM);
}

/* Files as data: a project file is an attachment of a type no browser runs, under a sandbox
 * CSP; the page's own files get the page's strict CSP (no inline script), and the page
 * itself holds no inline script. Two Content-Length headers that disagree are refused. */
static void test_files_as_data(void) {
    char* assets = fresh_dir("assets");
    put_file(path_in(assets, "index.html"), "<!doctype html><p>page</p>\n", 27);
    server s;
    if (up(&s, assets)) return;
    const char* take = "<script>alert(document.cookie)</script>";
    put_file(path_in(project, "take.html"), take, strlen(take));
    put_file(path_in(project, "take.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>", 41);
    put_file(path_in(project, "take.xml"), "<a/>", 4);
    const char* names[] = {"take.html", "take.svg", "take.xml"};
    for (int i = 0; i < 3; i++) {
        char target[80];
        snprintf(target, sizeof target, "/api/file?path=%s", names[i]);
        reply r = get(s.port, target);
        const char* type = header_of(&r, "Content-Type");
        CHECK(r.status == 200 && !strstr(type, "html") && !strstr(type, "svg") &&
              !strstr(type, "xml"));
        CHECK(!strncmp(header_of(&r, "Content-Disposition"), "attachment;", 11));
        CHECK(!strncmp(header_of(&r, "Content-Security-Policy"), "sandbox", 7));
        CHECK(!strcmp(header_of(&r, "X-Content-Type-Options"), "nosniff"));
        reply_free(&r);
    }
    reply r = get(s.port, "/api/project");
    CHECK(r.status == 200 && !strncmp(header_of(&r, "Content-Security-Policy"), "sandbox", 7));
    reply_free(&r);
    r = get(s.port, "/api/file?path=none.txt");
    CHECK(r.status == 404 && !strncmp(header_of(&r, "Content-Security-Policy"), "sandbox", 7));
    reply_free(&r);
    r = get(s.port, "/");
    const char* csp = header_of(&r, "Content-Security-Policy");
    CHECK(r.status == 200 && strstr(csp, "script-src 'self'") &&
          strstr(csp, "default-src 'none'") && strstr(csp, "frame-ancestors 'none'"));
    CHECK(!strstr(csp, "script-src 'self' 'unsafe-inline'") && !strstr(csp, "'unsafe-eval'"));
    reply_free(&r);
    /* the page as built: every script is a file (no inline script, no on* handler) */
    size_t n;
    char* page = mn_test_read_file(MN_SOURCE "/web/editor/index.html", &n);
    CHECK(page != NULL);
    for (const char* p = page; p && (p = strstr(p, "<script")); p++) {
        const char* end = strchr(p, '>');
        CHECK(end && memmem(p, (size_t)(end - p), " src=", 5) && !strncmp(end, "></script>", 10));
    }
    CHECK(page && !strstr(page, " onclick=") && !strstr(page, " onload=") &&
          !strstr(page, "javascript:"));
    free(page);
    /* two Content-Length headers that disagree: 400, nothing written, the server lives on */
    char req[400];
    int k =
        snprintf(req, sizeof req,
                 "PUT /api/file?path=cl.txt HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nIf-None-Match: "
                 "*\r\nContent-Length: 1\r\nContent-Length: 5\r\nConnection: close\r\n\r\n12345",
                 s.port);
    r = raw(s.port, req, (size_t)k);
    CHECK(r.status == 400 && strstr(r.body, "Content-Length"));
    reply_free(&r);
    CHECK(access(path_in(project, "cl.txt"), F_OK) != 0);
    r = get(s.port, "/api/project");
    CHECK(r.status == 200);
    reply_free(&r);
    stop(&s, SIGTERM);
}

/* Export bounds: a sequence of 10 million frames (89 bytes) is refused at once, naming the
 * limit; a long export under way when the server is told to stop ends there (nothing
 * written) instead of holding the stop until it is done. */
static void test_export_bounds(void) {
    server s;
    if (up(&s, NULL)) return;
    const char* amp = "{\"figure\":\"stickman\",\"fps\":30,\"keys\":[{\"frame\":0,\"pose\":{}},"
                      "{\"frame\":9999998,\"pose\":{}}]}";
    reply r =
        request(s.port, "PUT", "/api/file?path=amp.json", "If-None-Match: *\r\n", amp, strlen(amp));
    CHECK(r.status == 200);
    reply_free(&r);
    r = request(s.port, "POST", "/api/export?sequence=amp.json&format=bvh", NULL, NULL, 0);
    CHECK(r.status == 422 && strstr(r.body, "more than 100000"));
    reply_free(&r);
    CHECK(access(path_in(project, "exports/amp.bvh"), F_OK) != 0);
    /* 100000 frames of two pins that cannot both hold: seconds of work */
    const char* slow =
        "{\"figure\": \"stickman\", \"fps\": 30, \"keys\": [{\"frame\": 0, \"pose\": {}}, "
        "{\"frame\": 99999, \"pose\": {\"torso.2\": 0.5}}], \"handles\": [{\"name\": \"foot\", "
        "\"joint\": \"left foot\"}, {\"name\": \"hand\", \"joint\": \"right hand\"}], "
        "\"constraints\": [{\"type\": \"pin\", \"handle\": \"foot\", \"target\": [0, 0, 0]}, "
        "{\"type\": \"pin\", \"handle\": \"hand\", \"target\": [5, 5, 5]}]}";
    r = request(s.port, "PUT", "/api/file?path=slow.json", "If-None-Match: *\r\n", slow,
                strlen(slow));
    CHECK(r.status == 200);
    reply_free(&r);
    size_t n;
    char* req =
        build(s.port, "POST", "/api/export?sequence=slow.json&format=bvh", NULL, NULL, 0, &n);
    int fd = connect_to(s.port);
    CHECK(fd >= 0 && send_all(fd, req, n) == 0);
    free(req);
    /* the export has started (its request is logged only once answered) */
    usleep(500 * 1000);
    CHECK(stop(&s, SIGTERM) == 0);
    if (fd >= 0) close(fd);
    CHECK(access(path_in(project, "exports/slow.bvh"), F_OK) != 0);
}

/* Slow clients: 80 connections that never finish their headers (more than the 64 that once
 * locked every other client out) leave room for a real request; a client that sends its
 * headers a byte at a time, never idle, is cut off at the header deadline (set to 1 s here
 * by MARIONETTE_EDITOR_HEADER_SECONDS; 10 s by default). */
static void test_slow_clients(void) {
    setenv("MARIONETTE_EDITOR_HEADER_SECONDS", "1", 1);
    server s;
    int rc = up(&s, NULL);
    unsetenv("MARIONETTE_EDITOR_HEADER_SECONDS");
    if (rc) return;
    enum { SLOW = 80 };
    int fds[SLOW];
    char start[200];
    int n = snprintf(start, sizeof start,
                     "GET /api/project HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-A: ", s.port);
    for (int i = 0; i < SLOW; i++) {
        fds[i] = connect_to(s.port);
        if (fds[i] >= 0) send_all(fds[i], start, (size_t)n);
    }
    reply r = get(s.port, "/api/project");
    CHECK(r.status == 200);
    reply_free(&r);
    /* a byte every 100 ms: never idle, never done */
    int fd = connect_to(s.port), cut = 0;
    CHECK(fd >= 0 && send_all(fd, start, (size_t)n) == 0);
    for (int i = 0; i < 100 && fd >= 0 && !cut; i++) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        char c;
        ssize_t got = recv(fd, &c, 1, MSG_DONTWAIT);
        cut = got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
              send(fd, "a", 1, MSG_NOSIGNAL) < 0;
    }
    CHECK(cut);
    if (fd >= 0) close(fd);
    for (int i = 0; i < SLOW; i++)
        if (fds[i] >= 0) close(fds[i]);
    r = get(s.port, "/api/project");
    CHECK(r.status == 200);
    reply_free(&r);
    CHECK(stop(&s, SIGTERM) == 0);
}

/* editor --json: the first line is one JSON object whose url, port and token are the
 * server's (a request with that token is answered), with the project folder, absolute, and
 * the figure and sequence opened; without --json it is the URL alone. */
static void test_json_start(void) {
    char* dir = fresh_dir("project");
    char* home = fresh_dir("home");
    const char* args[] = {dir, "--json", NULL};
    server s;
    if (start(&s, home, NULL, args) != 0) {
        CHECK(0);
        return;
    }
    CHECK(s.first[0] == '{' && strchr(s.first, '\n') == s.first + strlen(s.first) - 1);
    cJSON* o = cJSON_Parse(s.first);
    CHECK(o != NULL);
    const cJSON* url = cJSON_GetObjectItemCaseSensitive(o, "url");
    const cJSON* port = cJSON_GetObjectItemCaseSensitive(o, "port");
    const cJSON* tok = cJSON_GetObjectItemCaseSensitive(o, "token");
    const cJSON* proj = cJSON_GetObjectItemCaseSensitive(o, "project");
    const cJSON* fig = cJSON_GetObjectItemCaseSensitive(o, "figure");
    const cJSON* seq = cJSON_GetObjectItemCaseSensitive(o, "sequence");
    char want[200], real[4096];
    snprintf(want, sizeof want, "http://127.0.0.1:%d/?token=%s", s.port, token);
    CHECK(cJSON_IsString(url) && !strcmp(url->valuestring, want));
    CHECK(cJSON_IsNumber(port) && port->valueint == s.port);
    CHECK(cJSON_IsString(tok) && !strcmp(tok->valuestring, token));
    CHECK(realpath(dir, real) && cJSON_IsString(proj) && !strcmp(proj->valuestring, real));
    CHECK(cJSON_IsString(fig) && !strcmp(fig->valuestring, "stickman"));
    CHECK(cJSON_IsString(seq) && !strcmp(seq->valuestring, "sequence.json"));
    cJSON_Delete(o);
    reply r = get(s.port, "/api/project");
    CHECK(r.status == 200);
    reply_free(&r);
    CHECK(stop(&s, SIGTERM) == 0);
    /* without --json: the URL alone */
    const char* plain[] = {dir, NULL};
    if (start(&s, home, NULL, plain) != 0) {
        CHECK(0);
        return;
    }
    snprintf(want, sizeof want, "http://127.0.0.1:%d/?token=%s\n", s.port, token);
    CHECK(!strcmp(s.first, want));
    CHECK(stop(&s, SIGTERM) == 0);
}

/* A connection to port from the loopback address 127.0.0.src (bound before connecting). */
static int connect_from(int src, int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct timeval tv = {30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)src);
    if (bind(fd, (struct sockaddr*)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One GET of the project listing over fd; its status (0: closed unanswered). */
static int listing_over(int fd, int port) {
    if (fd < 0) return 0;
    size_t n;
    char* rq = build(port, "GET", "/api/project", NULL, NULL, 0, &n);
    send_all(fd, rq, n);
    free(rq);
    reply r = read_reply(fd);
    int status = r.status;
    reply_free(&r);
    return status;
}

/* The per-client cap: ED_MAX_CONNECTIONS_PER_CLIENT idle connections from 127.0.0.1, and
 * the next one from that address is closed unanswered while one from 127.0.0.2 is answered;
 * once they close, 127.0.0.1 is answered again. */
static void test_connections_per_client(void) {
    server s;
    if (up(&s, NULL)) return;
    enum { CAP = ED_MAX_CONNECTIONS_PER_CLIENT };
    static int fds[CAP];
    int opened = 0;
    for (int i = 0; i < CAP; i++)
        opened += (fds[i] = connect_from(1, s.port)) >= 0;
    CHECK(opened == CAP);
    /* the server has taken them all in (a request on the last one is answered) */
    struct timespec nap = {0, 200 * 1000 * 1000};
    nanosleep(&nap, NULL);
    CHECK(listing_over(connect_from(1, s.port), s.port) == 0);
    int other = connect_from(2, s.port);
    if (other < 0)
        fprintf(stderr, "  (127.0.0.2 cannot be bound here: the other address is not tried)\n");
    else
        CHECK(listing_over(other, s.port) == 200);
    for (int i = 0; i < CAP; i++)
        if (fds[i] >= 0) close(fds[i]);
    int status = 0;
    for (int t = 0; t < 50 && status != 200; t++) {
        nanosleep(&nap, NULL);
        status = listing_over(connect_from(1, s.port), s.port);
    }
    CHECK(status == 200);
    CHECK(stop(&s, SIGTERM) == 0);
}

/* ---- the handler as a plain function ------------------------------------------------------- */

static int handle(ed_server* sv, const char* method, const char* path, size_t plen,
                  const ed_pair* args, int nargs, const char* host, ed_response* rs) {
    ed_pair hs[2] = {{"Host", host, strlen(host)}, {"X-Marionette-Token", sv->token, 64}};
    ed_request rq = {method, path, plen, args, nargs, hs, 2, NULL, 0, 0};
    ed_handle(sv, &rq, rs);
    return rs->status;
}

static void test_handler(void) {
    ed_server sv;
    char why[300];
    char* dir = fresh_dir("handler");
    CHECK(ed_server_init(&sv, dir, NULL, NULL, NULL, 8765, why, sizeof why) == 0);
    sv.assets_tried[0] = 0;
    ed_response rs;
    /* no page's folder: a clear 503 saying how to build it */
    CHECK(handle(&sv, "GET", "/", 1, NULL, 0, "127.0.0.1:8765", &rs) == 503);
    CHECK(rs.body && strstr(rs.body, "make web"));
    ed_response_free(&rs);
    /* values no socket could carry: a NUL inside the path or an argument */
    CHECK(handle(&sv, "GET", "/api/project\0x", 14, NULL, 0, "127.0.0.1:8765", &rs) == 400);
    ed_response_free(&rs);
    ed_pair a[1] = {{"path", "a\0b", 3}};
    CHECK(handle(&sv, "GET", "/api/file", 9, a, 1, "127.0.0.1:8765", &rs) == 403);
    ed_response_free(&rs);
    ed_pair nokey[1] = {{NULL, NULL, 0}};
    CHECK(handle(&sv, "GET", "/api/file", 9, nokey, 1, "127.0.0.1:8765", &rs) == 400);
    ed_response_free(&rs);
    CHECK(handle(&sv, NULL, NULL, 0, NULL, 0, "127.0.0.1:8765", &rs) == 400);
    ed_response_free(&rs);
    CHECK(handle(&sv, "GET", "/api/project", 12, NULL, 0, "127.0.0.1:8766", &rs) == 403);
    ed_response_free(&rs);
    /* the path checks */
    static const struct {
        const char* rel;
        int ok;
    } paths[] = {{"a.json", 1},
                 {"sub/a b.json", 1},
                 {"ünïcode.json", 1},
                 {"", 0},
                 {"..", 0},
                 {"a/../b", 0},
                 {"/a", 0},
                 {"a\\b", 0},
                 {"a//b", 0},
                 {"a/", 0},
                 {".", 0},
                 {"a/./b", 0},
                 {"\xff.json", 0},
                 {"\xc0\xaf", 0},
                 {"a\tb", 0},
                 {"...", 0},
                 {".hidden", 0},
                 {"a..b", 1},
                 {"a/.git/config", 0},
                 {".ssh/authorized_keys", 0},
                 {"a/b.", 1}};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        CHECK((ed_path_problem(paths[i].rel, strlen(paths[i].rel)) == NULL) == paths[i].ok);
    char v[17];
    ed_version("", 0, v);
    CHECK(!strcmp(v, "cbf29ce484222325"));
    /* the listing reads a file only when its size, times or inode changed since the last */
    char body[100];
    memset(body, 'a', sizeof body);
    put_file(path_in(dir, "a.txt"), body, sizeof body);
    put_file(path_in(dir, "b.json"), "{\"keys\": []}", 12);
    cJSON* l1 = ed_list(&sv);
    CHECK(sv.list_read_bytes == 112 && cJSON_GetArraySize(l1) == 2);
    cJSON* l2 = ed_list(&sv);
    CHECK(sv.list_read_bytes == 112);
    char* t1 = cJSON_PrintUnformatted(l1);
    char* t2 = cJSON_PrintUnformatted(l2);
    CHECK(t1 && t2 && !strcmp(t1, t2) && strstr(t1, "\"kind\":\"sequence\""));
    free(t2);
    body[50] = 'b'; /* same size, same inode: the modification time tells */
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    put_file(path_in(dir, "a.txt"), body, sizeof body);
    remove(path_in(dir, "b.json"));
    cJSON* l3 = ed_list(&sv);
    CHECK(sv.list_read_bytes == 212 && cJSON_GetArraySize(l3) == 1);
    char ver[17];
    ed_version(body, sizeof body, ver);
    t2 = cJSON_PrintUnformatted(l3);
    CHECK(t2 && strstr(t2, ver) && !strstr(t2, "b.json"));
    free(t1);
    free(t2);
    cJSON_Delete(l1);
    cJSON_Delete(l2);
    cJSON_Delete(l3);
    ed_server_free(&sv);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_handler);
    RUN(test_assets);
    RUN(test_files_and_versions);
    RUN(test_project_listing);
    RUN(test_sequence_checked);
    RUN(test_confinement);
    RUN(test_oversize);
    RUN(test_malformed_requests);
    RUN(test_host_and_origin);
    RUN(test_token);
    RUN(test_files_as_data);
    RUN(test_two_writers);
    RUN(test_sigkill_after_write);
    RUN(test_scratch_project);
    RUN(test_figure_argument);
    RUN(test_api_figure);
    RUN(test_upload);
    RUN(test_export);
    RUN(test_export_bounds);
    RUN(test_slow_clients);
    RUN(test_connections_per_client);
    RUN(test_json_start);
    return mn_test_report();
}
