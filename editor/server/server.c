/* The libmicrohttpd daemon around ed_handle: bound to 127.0.0.1 only, bodies collected up
 * to ED_MAX_BODY (413 beyond, from Content-Length before anything is read), the URL and
 * query left percent-encoded for ed_handle to decode, every answer marked no-cache. Runs
 * until SIGINT or SIGTERM. */
#include "editor_server.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- connections: a deadline for a request's line and headers ----------------------------
 * libmicrohttpd closes a connection only after it has been idle for its timeout, so a client
 * sending a byte of its headers now and then holds it for ever, and 64 such held every other
 * client out. Each connection is tracked from its start (MHD_OPTION_NOTIFY_CONNECTION): when
 * its current request began (it opened, or its last answer went out) and whether the
 * request's headers have all come (on_request is called). A watchdog thread shuts down (the
 * socket only: libmicrohttpd then closes it) every connection whose headers have not all
 * come within the deadline; libmicrohttpd calls NOTIFY_CLOSED before it closes a socket, so
 * the socket shut down is always the connection's own. */
typedef struct conn_slot {
    int fd;
    int in_request; /* the headers have all come; the request is being read or answered */
    int cut;
    struct timespec since;
    struct conn_slot *prev, *next;
} conn_slot;

typedef struct conns {
    pthread_mutex_t lock;
    conn_slot* head;
    int deadline_s;
    int stop;
    pthread_cond_t wake; /* signalled when the server stops */
    pthread_t watchdog;
} conns;

static conns tracked = {PTHREAD_MUTEX_INITIALIZER, NULL, 10, 0, PTHREAD_COND_INITIALIZER, 0};

static void on_connection(void* cls, struct MHD_Connection* c, void** socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    (void)cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_slot* k = calloc(1, sizeof *k);
        const union MHD_ConnectionInfo* info =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!k || !info) {
            free(k);
            return;
        }
        k->fd = info->connect_fd;
        clock_gettime(CLOCK_MONOTONIC, &k->since);
        pthread_mutex_lock(&tracked.lock);
        k->next = tracked.head;
        if (tracked.head) tracked.head->prev = k;
        tracked.head = k;
        pthread_mutex_unlock(&tracked.lock);
        *socket_context = k;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        conn_slot* k = *socket_context;
        pthread_mutex_lock(&tracked.lock);
        if (k->prev) k->prev->next = k->next;
        if (k->next) k->next->prev = k->prev;
        if (tracked.head == k) tracked.head = k->next;
        pthread_mutex_unlock(&tracked.lock);
        free(k);
        *socket_context = NULL;
    }
}

/* Marks c's current request as having all its headers (1) or as answered (0: the next
 * request's deadline starts now). */
static void mark_request(struct MHD_Connection* c, int in_request) {
    const union MHD_ConnectionInfo* info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn_slot* k = info ? info->socket_context : NULL;
    if (!k) return;
    pthread_mutex_lock(&tracked.lock);
    k->in_request = in_request;
    if (!in_request) clock_gettime(CLOCK_MONOTONIC, &k->since);
    pthread_mutex_unlock(&tracked.lock);
}

static void* watchdog(void* arg) {
    (void)arg;
    pthread_mutex_lock(&tracked.lock);
    for (;;) {
        struct timespec until, now;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
        if (!tracked.stop) pthread_cond_timedwait(&tracked.wake, &tracked.lock, &until);
        if (tracked.stop) {
            pthread_mutex_unlock(&tracked.lock);
            return NULL;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        for (conn_slot* k = tracked.head; k; k = k->next)
            if (!k->in_request && !k->cut && now.tv_sec - k->since.tv_sec >= tracked.deadline_s) {
                shutdown(k->fd, SHUT_RDWR);
                k->cut = 1;
            }
    }
}

/* One request's collected body. */
typedef struct body {
    char* data;
    size_t len, cap;
    int too_large;
    int refused; /* answered from the headers, the body left unread */
} body;

/* Leaves the URL and the query as they were sent: ed_handle decodes them (and refuses an
 * encoded NUL byte, which a decoded C string could not show). */
static size_t keep_encoded(void* cls, struct MHD_Connection* c, char* s) {
    (void)cls, (void)c;
    return strlen(s);
}

typedef struct pairs {
    ed_pair* p;
    int n, cap;
} pairs;

static enum MHD_Result collect(void* cls, enum MHD_ValueKind kind, const char* key, size_t key_size,
                               const char* value, size_t value_size) {
    (void)kind, (void)key_size;
    pairs* ps = cls;
    if (ps->n == ps->cap) {
        int cap = ps->cap ? 2 * ps->cap : 16;
        if (cap > 4096) return MHD_NO;
        ed_pair* p = realloc(ps->p, sizeof *p * (size_t)cap);
        if (!p) return MHD_NO;
        ps->p = p;
        ps->cap = cap;
    }
    ps->p[ps->n].key = key;
    ps->p[ps->n].value = value;
    ps->p[ps->n].len = value ? value_size : 0;
    ps->n++;
    return MHD_YES;
}

static enum MHD_Result respond(struct MHD_Connection* c, const ed_response* rs) {
    struct MHD_Response* r =
        MHD_create_response_from_buffer(rs->len, rs->body, MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", rs->type ? rs->type : "application/json");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    /* The page is cross-origin isolated (it loads nothing from elsewhere): no other site can
     * embed or open it with a handle, and its clock (performance.now) resolves microseconds,
     * which the solver timings of window.marionette.stats() need. */
    MHD_add_response_header(r, "Cross-Origin-Opener-Policy", "same-origin");
    MHD_add_response_header(r, "Cross-Origin-Embedder-Policy", "require-corp");
    MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
    if (rs->etag[0]) MHD_add_response_header(r, "ETag", rs->etag);
    if (rs->disposition[0]) MHD_add_response_header(r, "Content-Disposition", rs->disposition);
    if (rs->allow[0]) MHD_add_response_header(r, "Allow", rs->allow);
    /* the page's own files under a strict policy (no inline script, nothing from elsewhere);
     * everything else (the API, project files, errors) is data in a sandbox */
    MHD_add_response_header(r, "Content-Security-Policy", rs->page ? ED_CSP_PAGE : ED_CSP_DATA);
    MHD_add_response_header(r, "Referrer-Policy", "same-origin");
    if (rs->cookie[0]) MHD_add_response_header(r, "Set-Cookie", rs->cookie);
    if (rs->close) MHD_add_response_header(r, "Connection", "close");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)rs->status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result on_request(void* cls, struct MHD_Connection* c, const char* url,
                                  const char* method, const char* version, const char* upload_data,
                                  size_t* upload_data_size, void** con_cls) {
    (void)version;
    ed_server* sv = cls;
    body* b = *con_cls;
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b) return MHD_NO;
        *con_cls = b;
        mark_request(c, 1);
        /* a declared body too large is refused before any of it is read */
        const char* cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > ED_MAX_BODY) b->too_large = 1;
        /* a request refused whatever its body (no token, another Host or origin, two lengths
         * that disagree) is answered before any of its body is read: nobody without the token
         * makes the server hold 32 MiB; the connection is closed after (the rest unread) */
        pairs hs = {NULL, 0, 0};
        MHD_get_connection_values_n(c, MHD_HEADER_KIND, collect, &hs);
        ed_request pre = {method, url, strlen(url), NULL, 0, hs.p, hs.n, NULL, 0, 0};
        b->refused = ed_refused_before_body(sv, &pre);
        free(hs.p);
        if (!b->too_large && !b->refused) return MHD_YES;
    } else if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (b->too_large) return MHD_YES; /* dropped */
        if (n > ED_MAX_BODY - b->len) {
            b->too_large = 1;
            free(b->data);
            b->data = NULL;
            b->len = b->cap = 0;
            return MHD_YES;
        }
        if (b->len + n > b->cap) {
            size_t cap = b->cap ? b->cap : 65536;
            while (cap < b->len + n)
                cap *= 2;
            char* p = realloc(b->data, cap);
            if (!p) return MHD_NO;
            b->data = p;
            b->cap = cap;
        }
        memcpy(b->data + b->len, upload_data, n);
        b->len += n;
        return MHD_YES;
    }
    pairs args = {NULL, 0, 0}, heads = {NULL, 0, 0};
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect, &args);
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, collect, &heads);
    ed_request rq = {method,  url,     strlen(url), args.p, args.n,
                     heads.p, heads.n, b->data,     b->len, b->too_large};
    ed_response rs;
    ed_handle(sv, &rq, &rs);
    if (b->refused && rq.method && strcmp(rq.method, "GET") && strcmp(rq.method, "HEAD"))
        rs.close = 1;
    enum MHD_Result ok = respond(c, &rs);
    printf("%s %s %d\n", method, url, rs.status);
    fflush(stdout);
    ed_response_free(&rs);
    free(args.p);
    free(heads.p);
    return ok;
}

static void on_completed(void* cls, struct MHD_Connection* c, void** con_cls,
                         enum MHD_RequestTerminationCode code) {
    (void)cls, (void)code;
    mark_request(c, 0);
    body* b = *con_cls;
    if (b) free(b->data);
    free(b);
    *con_cls = NULL;
}

/* The first line on stdout, once the server listens: its URL, or with --json one JSON
 * object, {"url","port","token","project","figure","sequence"}, for programs that start it. */
static void print_start(const ed_server* sv) {
    char url[160];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/?token=%s", sv->port, sv->token);
    cJSON* o = sv->json ? cJSON_CreateObject() : NULL;
    char* text = NULL;
    if (o && cJSON_AddStringToObject(o, "url", url) &&
        cJSON_AddNumberToObject(o, "port", sv->port) &&
        cJSON_AddStringToObject(o, "token", sv->token) &&
        cJSON_AddStringToObject(o, "project", sv->project) &&
        (sv->figure ? cJSON_AddStringToObject(o, "figure", sv->figure)
                    : cJSON_AddNullToObject(o, "figure")) &&
        (sv->sequence ? cJSON_AddStringToObject(o, "sequence", sv->sequence)
                      : cJSON_AddNullToObject(o, "sequence")))
        text = cJSON_PrintUnformatted(o);
    printf("%s\n", text ? text : url);
    fflush(stdout);
    cJSON_free(text);
    cJSON_Delete(o);
}

int ed_serve(ed_server* sv, int port) {
    /* SIGINT and SIGTERM are waited for here: blocked before the daemon's threads start, so
     * that they inherit the mask and only this thread takes them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* the deadline for a request's line and headers (seconds; the environment's
     * MARIONETTE_EDITOR_HEADER_SECONDS, 1 to 3600, for the tests) */
    const char* hs = getenv("MARIONETTE_EDITOR_HEADER_SECONDS");
    if (hs && atoi(hs) >= 1 && atoi(hs) <= 3600) tracked.deadline_s = atoi(hs);
    struct MHD_Daemon* d = MHD_start_daemon(
        MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, sv,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr*)&addr, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)4,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)ED_MAX_CONNECTIONS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)ED_MAX_CONNECTIONS_PER_CLIENT,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60, MHD_OPTION_UNESCAPE_CALLBACK, keep_encoded,
        NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, NULL, MHD_OPTION_END);
    if (d && pthread_create(&tracked.watchdog, NULL, watchdog, NULL) != 0) {
        MHD_stop_daemon(d);
        d = NULL;
    }
    if (!d) {
        fprintf(stderr, "marionette editor: cannot listen on 127.0.0.1:%d (in use?)\n", port);
        return 1;
    }
    const union MHD_DaemonInfo* info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    sv->port = info ? (int)info->port : port;
    print_start(sv);
    int sig = 0;
    sigwait(&stop, &sig);
    sv->stopping = 1; /* an export under way stops at its next frame */
    pthread_mutex_lock(&tracked.lock);
    tracked.stop = 1;
    pthread_cond_signal(&tracked.wake);
    pthread_mutex_unlock(&tracked.lock);
    pthread_join(tracked.watchdog, NULL);
    MHD_stop_daemon(d);
    /* a write under way has finished: the lock is free only between writes */
    pthread_mutex_lock(&sv->write_lock);
    pthread_mutex_unlock(&sv->write_lock);
    printf("stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    fflush(stdout);
    return 0;
}
