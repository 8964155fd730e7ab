/* libFuzzer target for the editor server's request handler (editor/server: ed_handle, as a
 * plain function, no sockets). The input is a request, one part a line: the method, the
 * path (percent-encoded, as sent), then query arguments "key=value" up to an empty line,
 * then headers "Name: value" up to an empty line, then the body. It runs against a real
 * project folder: project/{in.txt, seq.json, sub/in.txt, up -> .., out -> ../secret,
 * fifo} next to secret, made again after every input that may have written. Whatever the request,
 * the answer has a status from 200 to 599, the secret is never read (its word appears in no answer
 * unless the request carried it) nor changed, nothing is written outside the project, and no
 * message reveals the project's own path (unless the request named it). Exports (a bake of any
 * length the document asks for) are left out: they only take time. The harness adds the
 * token's header (the server's token is fixed here) unless the method starts with '!'; an
 * API request without the token never gets a 2xx answer. Seeds:
 * fuzz/corpus/fuzz_editor_request/. */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "editor_server.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static char top[64], dir[96];
static ed_server sv;

static void cleanup(void) {
    ed_server_free(&sv);
    if (!top[0] || chdir("/") != 0) return;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    if (system(cmd) != 0) return;
}

static void put(const char* rel, const char* text) {
    char p[160];
    snprintf(p, sizeof p, "%s/%s", top, rel);
    FILE* f = fopen(p, "wb");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

/* The project as every input finds it (made again after an input that may have written). */
static void make_project(void) {
    char p[160];
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    if (system(p) != 0) abort();
    if (mkdir(dir, 0700) != 0) abort();
    snprintf(p, sizeof p, "%s/sub", dir);
    if (mkdir(p, 0700) != 0) abort();
    put("project/in.txt", "INSIDE");
    put("project/sub/in.txt", "INSIDE");
    put("project/seq.json", "{\"figure\": \"stickman\", \"fps\": 30, \"keys\": [{\"frame\": 0, "
                            "\"pose\": {}}, {\"frame\": 10, \"pose\": {\"torso.2\": 0.3}}]}\n");
    snprintf(p, sizeof p, "%s/up", dir);
    if (symlink("..", p) != 0) abort();
    snprintf(p, sizeof p, "%s/out", dir);
    if (symlink("../secret", p) != 0) abort();
    snprintf(p, sizeof p, "%s/fifo", dir);
    if (mkfifo(p, 0600) != 0) abort();
}

static void setup(void) {
    const char* t = getenv("TMPDIR");
    snprintf(top, sizeof top, "%s/mn_fuzz_editor_XXXXXX", t && strlen(t) < 30 ? t : "/tmp");
    if (!mkdtemp(top)) abort();
    snprintf(dir, sizeof dir, "%s/project", top);
    put("secret", "SECRET");
    make_project();
    char why[200];
    if (ed_server_init(&sv, dir, NULL, NULL, NULL, 8765, why, sizeof why) != 0) abort();
    snprintf(sv.token, sizeof sv.token, "%s", "f00d");
    atexit(cleanup);
}

/* The next line of [*p, end): its start, its length in *n; *p moves past its '\n'. */
static const char* next_line(const char** p, const char* end, size_t* n) {
    const char* s = *p;
    const char* nl = memchr(s, '\n', (size_t)(end - s));
    *n = (size_t)((nl ? nl : end) - s);
    *p = nl ? nl + 1 : end;
    return s;
}

static char* dup_n(const char* s, size_t n) {
    char* d = malloc(n + 1);
    if (!d) abort();
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!top[0]) setup();
    const char *p = (const char*)data, *end = p + size;
    size_t n;
    const char* s = next_line(&p, end, &n);
    char* method = dup_n(s, n);
    s = next_line(&p, end, &n);
    char* path = dup_n(s, n);
    size_t path_len = n;
    ed_pair args[16], heads[16];
    int na = 0, nh = 0;
    char* owned[64];
    int no = 0;
    for (int part = 0; part < 2; part++) {
        while (p < end) {
            s = next_line(&p, end, &n);
            if (n == 0) break;
            const char* sep = memchr(s, part ? ':' : '=', n);
            size_t kl = sep ? (size_t)(sep - s) : n;
            const char* v = sep ? sep + 1 : s + n;
            while (part && v < s + n && *v == ' ')
                v++;
            ed_pair* pr = part ? &heads[nh] : &args[na];
            if ((part ? nh : na) >= 16 || no + 2 > 64) continue;
            pr->key = owned[no++] = dup_n(s, kl);
            pr->value = owned[no++] = dup_n(v, (size_t)(s + n - v));
            pr->len = (size_t)(s + n - v);
            if (part)
                nh++;
            else
                na++;
        }
    }
    int with_token = method[0] != '!';
    if (with_token && nh < 16) heads[nh++] = (ed_pair){"X-Marionette-Token", "f00d", 4};
    ed_request rq = {method, path, path_len, args, na, heads, nh, p, (size_t)(end - p), 0};
    ed_response rs;
    if (!strstr(path, "export")) {
        ed_handle(&sv, &rq, &rs);
        if (rs.status < 200 || rs.status > 599 || (!rs.body && rs.len)) abort();
        if (!with_token && !strncmp(path, "/api", 4) && rs.status < 300 &&
            !memmem(data, size, "f00d", 4))
            abort(); /* the API answered without the token */
        /* read outside (unless the request itself carried the word, echoed in a message) */
        if (rs.body && memmem(rs.body, rs.len, "SECRET", 6) && !memmem(data, size, "SECRET", 6))
            abort();
        if (rs.body && memmem(rs.body, rs.len, top, strlen(top)) &&
            !memmem(data, size, top, strlen(top)))
            abort(); /* revealed the project's path */
        ed_response_free(&rs);
    }
    /* nothing changed outside the project */
    char sp[160];
    snprintf(sp, sizeof sp, "%s/secret", top);
    FILE* f = fopen(sp, "rb");
    char buf[16] = {0};
    if (!f || fread(buf, 1, sizeof buf - 1, f) != 6 || strcmp(buf, "SECRET")) abort();
    fclose(f);
    DIR* d = opendir(top);
    int entries = 0;
    for (struct dirent* e; d && (e = readdir(d));)
        entries++;
    if (d) closedir(d);
    if (entries != 4) abort(); /* ".", "..", project, secret: nothing else */
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) make_project();
    for (int i = 0; i < no; i++)
        free(owned[i]);
    free(method);
    free(path);
    return 0;
}
