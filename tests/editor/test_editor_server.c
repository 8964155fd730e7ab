/* `marionette editor` end to end: the real command started on a free port (--port 0) in a
 * temporary project, spoken to over sockets (tests/editor/server_harness.c). The page's
 * files with their content types, the project listing, files with versions and
 * preconditions, a sequence document that does not read (422, the file unchanged), two
 * writers with one version, SIGKILL after an acknowledged write, the scratch project, a
 * FIGURE argument, /api/figure, upload and export, the --json start line. Then the request
 * handler called as a plain function on requests no socket could carry. What the server
 * refuses (confinement, sizes, malformed requests, Host, Origin and token checks, files
 * served as data, slow and greedy clients) is test_editor_security.c. */
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
    RUN(test_two_writers);
    RUN(test_sigkill_after_write);
    RUN(test_scratch_project);
    RUN(test_figure_argument);
    RUN(test_api_figure);
    RUN(test_upload);
    RUN(test_export);
    RUN(test_json_start);
    return mn_test_report();
}
