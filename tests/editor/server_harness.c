/* The editor tests' harness (server_harness.h). */
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
#include "server_harness.h"
#include "test.h"

/* ---- files ----------------------------------------------------------------------------------- */

char* path_in(const char* dir, const char* rel) {
    static char buf[8][1024];
    static int slot;
    char* p = buf[slot++ % 8];
    snprintf(p, 1024, "%s/%s", dir, rel);
    return p;
}

void put_file(const char* path, const char* data, size_t len) {
    FILE* f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, len, f) == len);
    fclose(f);
}

void copy_file(const char* from, const char* to) {
    size_t n;
    char* d = mn_test_read_file(from, &n);
    CHECK(d != NULL);
    if (d) put_file(to, d, n);
    free(d);
}

/* A fresh folder inside the test's temporary folder. */
char* fresh_dir(const char* name) {
    static char buf[8][512];
    static int slot;
    char* p = buf[slot++ % 8];
    snprintf(p, 512, "%s/%s_XXXXXX", mn_test_temp_dir(), name);
    if (!mkdtemp(p)) return NULL;
    return p;
}

/* Does any name in dir (not recursive) contain ".tmp"? */
int has_temporary(const char* dir) {
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
void fnv(const char* s, size_t n, char out[17]) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ---- the server process -------------------------------------------------------------------- */

/* The token of the server started last, from the URL it printed. */
char token[80];

/* Starts `marionette editor ARGS... --port 0` with HOME (and XDG_DATA_HOME unless NULL) set;
 * reads the URL line. 0 on success. */
int start(server* s, const char* home, const char* xdg, const char* const* args) {
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
int stop(server* s, int sig) {
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

void reply_free(reply* r) {
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof *r);
}

int connect_to(int port) {
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

int send_all(int fd, const char* d, size_t n) {
    while (n) {
        ssize_t w = send(fd, d, n, MSG_NOSIGNAL);
        if (w <= 0) return -1;
        d += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads the whole answer (the server closes: Connection: close) and splits it. */
reply read_reply(int fd) {
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
reply raw_bare(int port, const char* req, size_t n) {
    int fd = connect_to(port);
    if (fd < 0) return (reply){0};
    send_all(fd, req, n);
    return read_reply(fd);
}

/* Sends the bytes with the token's header after the first line (when there is one). */
reply raw(int port, const char* req, size_t n) {
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
char* build(int port, const char* method, const char* target, const char* headers, const char* body,
            size_t len, size_t* out_len) {
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

reply request(int port, const char* method, const char* target, const char* headers,
              const char* body, size_t len) {
    size_t n;
    char* r = build(port, method, target, headers, body, len, &n);
    reply out = raw_bare(port, r, n);
    free(r);
    return out;
}

reply get(int port, const char* target) {
    return request(port, "GET", target, NULL, NULL, 0);
}

/* The value of header name in r (static buffer), "" when absent. */
const char* header_of(const reply* r, const char* name) {
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
const char* json_str(const char* body, const char* key) {
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

char* quote_etag(const char* ver) {
    static char buf[4][96];
    static int slot;
    char* p = buf[slot++ % 4];
    snprintf(p, 96, "If-Match: \"%s\"\r\n", ver);
    return p;
}

/* A server on a fresh project folder (also the server's HOME), assets in `assets` or none. */
char* project;
char* home;
int up(server* s, const char* assets) {
    project = fresh_dir("project");
    home = fresh_dir("home");
    const char* args[] = {project, assets ? "--assets" : NULL, assets, NULL};
    int rc = start(s, home, NULL, args);
    CHECK(rc == 0);
    return rc;
}
