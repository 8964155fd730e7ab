/* The editor tests' harness: temporary folders and files, `marionette editor` started on a
 * free port in a fresh project and stopped, and HTTP over a socket (requests no client
 * library would send, replies read whole). Shared by test_editor_server.c and
 * test_editor_security.c (tests/editor/server_harness.c). */
#ifndef MN_TEST_SERVER_HARNESS_H
#define MN_TEST_SERVER_HARNESS_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define BVH MN_TEST_DATA "/cmu_02_01_walk_positions.bvh"
#define GLB MN_DATA "/skinned/RiggedSimple.glb"
#define CROUCH MN_SOURCE "/docs/examples/crouch_sequence.json"

typedef struct server {
    pid_t pid;
    int port;
    FILE* out;        /* the rest of its stdout */
    char first[1024]; /* its first line */
} server;

typedef struct reply {
    int status;
    char* head; /* status line and headers */
    char* body;
    size_t len;
} reply;

char* path_in(const char* dir, const char* rel);
void put_file(const char* path, const char* data, size_t len);
void copy_file(const char* from, const char* to);
char* fresh_dir(const char* name);
int has_temporary(const char* dir);
void fnv(const char* s, size_t n, char out[17]);
extern char token[80];
int start(server* s, const char* home, const char* xdg, const char* const* args);
int stop(server* s, int sig);
void reply_free(reply* r);
int connect_to(int port);
int send_all(int fd, const char* d, size_t n);
reply read_reply(int fd);
reply raw_bare(int port, const char* req, size_t n);
reply raw(int port, const char* req, size_t n);
char* build(int port, const char* method, const char* target, const char* headers, const char* body,
            size_t len, size_t* out_len);
reply request(int port, const char* method, const char* target, const char* headers,
              const char* body, size_t len);
reply get(int port, const char* target);
const char* header_of(const reply* r, const char* name);
const char* json_str(const char* body, const char* key);
char* quote_etag(const char* ver);
extern char* project;
extern char* home;
int up(server* s, const char* assets);

#endif
