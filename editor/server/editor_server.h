/* The server of `marionette editor`: a project folder and the page's files over HTTP on
 * 127.0.0.1 (docs/editor-server.md). A request is handled by a plain function (ed_handle)
 * that knows nothing of sockets, so the routing, the checks and the answers can be tested
 * and fuzzed without a network; server.c is the libmicrohttpd daemon around it.
 * Public headers of the library only. */
#ifndef MN_EDITOR_SERVER_H
#define MN_EDITOR_SERVER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The largest request body (413 beyond) and the longest project path (bytes). */
#define ED_MAX_BODY ((size_t)32 << 20)
#define ED_MAX_REL 255
/* The most connections at once (each a descriptor; idle ones closed after 60 s, one whose
 * request line and headers have not all come within 10 s shut down: server.c). */
#define ED_MAX_CONNECTIONS 512
/* The most connections from one client address (more are closed as they open): half of
 * ED_MAX_CONNECTIONS, so no one address holds them all (docs/editor-server.md, Limits). */
#define ED_MAX_CONNECTIONS_PER_CLIENT 256
/* The most frames an export bakes (at 30 frames a second, 55 minutes): a longer sequence is
 * refused before any work (422). */
#define ED_MAX_EXPORT_FRAMES 100000L

/* One server: the project folder, the page's files, what is opened first. */
typedef struct ed_server {
    char* project;              /* the project folder, absolute, no trailing '/' (malloc'd) */
    char* name;                 /* its last component */
    char* assets;               /* the page's folder, NULL when none was found (malloc'd) */
    char* assets_tried;         /* the folders tried, for the message when none was found */
    char* figure;               /* the default figure (a project path or "stickman") */
    char* sequence;             /* the sequence opened (a project path) */
    int port;                   /* for the Host and Origin checks */
    int json;                   /* the first line is a JSON object (editor --json) */
    char token[65];             /* the secret every API request carries (64 hex digits) */
    pthread_mutex_t write_lock; /* every write of the project, one at a time */
    volatile int stopping;      /* set when the server stops: an export under way ends */
    /* the listing's versions and kinds by path, kept while a file's size, times and inode
     * stay the same (ed_list): a listing reads only the files that changed */
    struct ed_listed* listed;
    int nlisted;
    pthread_mutex_t list_lock;
    long long list_read_bytes; /* bytes the listings read, in all (for the tests) */
} ed_server;

/* Fills sv for the project folder `project` (made absolute; it must exist), the page's
 * folder `assets` (may be NULL), and the figure and sequence opened (project paths; NULL:
 * found as docs/editor-server.md says), with a fresh random token (getrandom). Returns 0,
 * or -1 with why[] filled. */
/* The page's Content-Security-Policy, and the one of every other answer (docs/editor-server.md).
 * connect-src allows blob: for the page's own in-memory objects: three.js's glTF loader reads
 * a binary glTF's embedded images through blob URLs it makes. */
#define ED_CSP_PAGE                                                                                \
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; " \
    "img-src 'self' data: blob:; connect-src 'self' blob:; font-src 'self'; worker-src 'self'; "   \
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
#define ED_CSP_DATA "sandbox; default-src 'none'; frame-ancestors 'none'"

/* The token's cookie is named ED_COOKIE "-PORT": a browser keeps cookies per host, not per
 * port, so two servers on one machine must not share a name. */
#define ED_COOKIE "marionette-token"

int ed_server_init(ed_server* sv, const char* project, const char* assets, const char* figure,
                   const char* sequence, int port, char* why, size_t cap);
void ed_server_free(ed_server* sv);

/* A request's name=value pairs (query arguments, headers); len is the value's length (a
 * value holding a NUL byte is refused). */
typedef struct ed_pair {
    const char* key;
    const char* value;
    size_t len;
} ed_pair;

/* A request as it came: the path and the query arguments still percent-encoded (ed_handle
 * decodes them, refusing a NUL byte), the headers as sent. */
typedef struct ed_request {
    const char* method;
    const char* path; /* the URL's path, percent-encoded, without the query */
    size_t path_len;
    const ed_pair* args;
    int nargs;
    const ed_pair* headers;
    int nheaders;
    const char* body;
    size_t body_len;
    int body_too_large; /* the transport dropped a body larger than ED_MAX_BODY */
} ed_request;

typedef struct ed_response {
    int status;
    const char* type; /* Content-Type */
    char* body;       /* malloc'd */
    size_t len;
    char etag[24];         /* "\"<version>\"" or "" */
    char disposition[600]; /* Content-Disposition or "" */
    char allow[48];        /* for a 405: the methods allowed, or "" */
    char cookie[160];      /* Set-Cookie (the token, for the page opened with it) or "" */
    int page;              /* one of the page's own files: the page's CSP, else a sandbox */
    int close;             /* close the connection after the answer (the rest unread) */
} ed_response;

/* Handles one request: fills rs (free it with ed_response_free). Never fails: every
 * problem is an answer with a 4xx or 5xx status and {"error": "..."}. */
void ed_handle(ed_server* sv, const ed_request* rq, ed_response* rs);
/* Is the request refused whatever its body (a wrong Host, two Content-Length headers that
 * disagree, a write from another origin, an API request without the token)? Then it is
 * answered before any of its body is read. */
int ed_refused_before_body(const ed_server* sv, const ed_request* rq);
void ed_response_free(ed_response* rs);

/* ---- project.c: paths, versions, listing and writes inside the project ------------------ */

/* 64-bit FNV-1a of the bytes as 16 lower-case hex digits (out: 17 bytes). */
void ed_version(const void* data, size_t len, char out[17]);
/* Is rel a project path? NULL when it is, else why not (a static message). */
const char* ed_path_problem(const char* rel, size_t len);
/* Reads the project file rel (a checked path) beneath the project folder. Returns 200, 404
 * (missing), 403 (leads out of the folder) or 4xx/500 with msg filled. */
int ed_read(const ed_server* sv, const char* dir, const char* rel, char** data, size_t* len,
            char* msg, size_t cap);
/* The status of rel's parent folders for a write: 0 when each is a real folder inside the
 * project (made when missing and make is 1), else 403/404/500 with msg. The last component
 * may not be a symbolic link or anything but a regular file either. */
int ed_check_write_path(const ed_server* sv, const char* rel, int make, char* msg, size_t cap);
/* "<project>/<rel>" (malloc'd). */
char* ed_join(const char* dir, const char* rel);
/* Writes data to rel atomically (temp file, fsync, rename, fsync of the folder). 0 or a
 * status with msg. The caller holds write_lock. */
int ed_write(const ed_server* sv, const char* rel, const char* data, size_t len, char* msg,
             size_t cap);
/* Removes rel (then syncs its folder). 0 or a status with msg. */
int ed_remove(const ed_server* sv, const char* rel, char* msg, size_t cap);
/* Removes the project folder's own path from msg (messages name project paths only). */
void ed_strip_project(const ed_server* sv, char* msg);
/* Does rel exist beneath the project (any kind of file)? */
int ed_exists(const ed_server* sv, const char* rel);

/* The kind /api/project gives a file: "sequence", "figure", "scene", "settings", "export"
 * or "other". */
const char* ed_kind(const char* rel, const char* data, size_t len);
/* The project's files as a JSON array (cJSON): recursive, sorted, hidden files and
 * temporaries skipped, symbolic links not followed. A file whose size, modification and
 * change times and inode are those of the last listing is not read again (its version and
 * kind are remembered). NULL when out of memory. */
struct cJSON;
struct cJSON* ed_list(ed_server* sv);
void ed_list_forget(ed_server* sv);

/* ---- server.c: the daemon ---------------------------------------------------------------- */

/* Serves sv on 127.0.0.1:port (0: a free one) until SIGINT or SIGTERM: prints the URL as the
 * first line on stdout, then log lines. Returns the process exit status. */
int ed_serve(ed_server* sv, int port);

#endif
