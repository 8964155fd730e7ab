/* The batch runner: a pool of threads taking the next input from an atomic counter; the
 * main thread draws the progress and collects the failures. */
#include "batch.h"

#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct batch {
    char** inputs;
    char** outputs;
    int n;
    mn_cli_job job;
    void* ctx;
    int force;
    const char* const* deps;
    atomic_int next;
    atomic_int done;
    mn_error* errs; /* per input; status MN_OK when it converted */
    char* skipped;  /* per input: its output was up to date */
    atomic_char* finished;
} batch;

/* Set by SIGINT or SIGTERM while a batch runs: no new file is started. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
    (void)sig;
    interrupted = 1;
}

/* Is out newer than the file in (modification times, to the nanosecond)? A file that is
 * not there (the built-in figure's name) counts as old. */
static int newer_than(const struct stat* so, const char* in) {
    struct stat si;
    if (stat(in, &si) != 0) return 1;
    return so->st_mtim.tv_sec > si.st_mtim.tv_sec ||
           (so->st_mtim.tv_sec == si.st_mtim.tv_sec && so->st_mtim.tv_nsec > si.st_mtim.tv_nsec);
}

/* Is out there and newer than in and than every file of deps? */
static int up_to_date(const char* in, const char* out, const char* const* deps) {
    struct stat si, so;
    if (stat(in, &si) != 0 || stat(out, &so) != 0 || !newer_than(&so, in)) return 0;
    for (int k = 0; deps && deps[k]; k++)
        if (!newer_than(&so, deps[k])) return 0;
    return 1;
}

static void* worker(void* arg) {
    batch* b = arg;
    for (;;) {
        if (interrupted) break;
        int i = atomic_fetch_add(&b->next, 1);
        if (i >= b->n) break;
        mn_error* e = &b->errs[i];
        mn_error_clear(e);
        if (!b->force && up_to_date(b->inputs[i], b->outputs[i], b->deps)) {
            b->skipped[i] = 1;
            atomic_store(&b->finished[i], 1);
            atomic_fetch_add(&b->done, 1);
            continue;
        }
        mn_status s = b->job(b->inputs[i], b->outputs[i], b->ctx, e);
        if (s != MN_OK && e->status == MN_OK) e->status = s;
        atomic_store(&b->finished[i], 1);
        atomic_fetch_add(&b->done, 1);
    }
    return NULL;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fmt_time(double s, char* buf, size_t cap) {
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

static void draw_bar(int done, int n, int failed, double elapsed) {
    const int width = 30;
    int fill = n ? (int)((long)done * width / n) : width;
    char bar[64], left[32];
    for (int k = 0; k < width; k++)
        bar[k] = k < fill ? '#' : '.';
    bar[width] = 0;
    double rate = elapsed > 0 ? done / elapsed : 0;
    if (done > 0 && rate > 0)
        fmt_time((n - done) / rate, left, sizeof left);
    else
        snprintf(left, sizeof left, "?");
    fprintf(stderr, "\r[%s] %d/%d files, %.1f files/s, %s left%s", bar, done, n, rate, left,
            failed ? ", some failed" : "");
    fflush(stderr);
}

/* base name of path without its extension */
static void stem(const char* path, char* out, size_t cap) {
    const char* s = strrchr(path, '/');
    s = s ? s + 1 : path;
    snprintf(out, cap, "%s", s);
    char* dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

int mn_cli_batch(const char* cmd, char** inputs, int n, const char* out_dir, const char* ext,
                 int jobs, int force, const char* const* deps, mn_cli_job job, void* ctx) {
    if (n < 1) return mn_cli_usage_error(cmd, "no input files");
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "marionette %s: %s: cannot create the output folder: %s\n", cmd,
                mn_cli_safe(out_dir), strerror(errno));
        return MN_EXIT_INPUT;
    }
    struct stat st;
    if (stat(out_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "marionette %s: %s: not a folder\n", cmd, mn_cli_safe(out_dir));
        return MN_EXIT_INPUT;
    }
    batch b;
    memset(&b, 0, sizeof b);
    b.inputs = inputs;
    b.n = n;
    b.job = job;
    b.ctx = ctx;
    b.force = force;
    b.deps = deps;
    b.outputs = calloc((size_t)n, sizeof *b.outputs);
    b.errs = calloc((size_t)n, sizeof *b.errs);
    b.skipped = calloc((size_t)n, 1);
    b.finished = calloc((size_t)n, sizeof *b.finished);
    int rc = MN_EXIT_OK;
    if (!b.outputs || !b.errs || !b.skipped || !b.finished) {
        fprintf(stderr, "marionette %s: out of memory\n", cmd);
        rc = MN_EXIT_INPUT;
        goto out;
    }
    for (int i = 0; i < n && rc == MN_EXIT_OK; i++) {
        char s[1024];
        stem(inputs[i], s, sizeof s);
        size_t cap = strlen(out_dir) + strlen(s) + strlen(ext) + 2;
        b.outputs[i] = malloc(cap);
        if (!b.outputs[i]) {
            rc = MN_EXIT_INPUT;
            break;
        }
        snprintf(b.outputs[i], cap, "%s/%s%s", out_dir, s, ext);
        for (int k = 0; k < i; k++)
            if (!strcmp(b.outputs[k], b.outputs[i])) {
                rc = mn_cli_usage_error(cmd, "%s and %s would both write %s", inputs[k], inputs[i],
                                        b.outputs[i]);
                break;
            }
    }
    if (rc != MN_EXIT_OK) goto out;
    if (jobs <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cores > 0 ? (int)cores : 1;
    }
    if (jobs > n) jobs = n;
    /* Ctrl-C: finish the files being written, start no other; a second one kills at once */
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sa.sa_flags = (int)SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    pthread_t* th = calloc((size_t)jobs, sizeof *th);
    int started = 0;
    double t0 = now_s();
    for (int k = 0; th && k < jobs; k++)
        if (pthread_create(&th[k], NULL, worker, &b) == 0) started++;
    if (started == 0) worker(&b); /* no threads: do it here */
    int tty = isatty(STDERR_FILENO), reported = 0, failed = 0, skipped = 0, joined = 0;
    /* progress: the main thread looks every 50 ms; on a terminal a bar, else a line per file
     * in input order as they finish */
    for (;;) {
        int done = atomic_load(&b.done);
        while (reported < n && atomic_load(&b.finished[reported])) {
            const mn_error* e = &b.errs[reported];
            if (e->status != MN_OK) failed++;
            skipped += b.skipped[reported];
            if (!tty) {
                if (b.skipped[reported])
                    fprintf(stderr, "up to date %s -> %s\n", mn_cli_safe(inputs[reported]),
                            mn_cli_safe(b.outputs[reported]));
                else if (e->status == MN_OK)
                    fprintf(stderr, "ok %s -> %s\n", mn_cli_safe(inputs[reported]),
                            mn_cli_safe(b.outputs[reported]));
                else
                    fprintf(stderr, "FAILED %s: %s\n", mn_cli_safe(inputs[reported]),
                            mn_cli_safe(e->message[0] ? e->message : mn_status_name(e->status)));
            }
            reported++;
        }
        if (tty) draw_bar(done, n, failed, now_s() - t0);
        if (done >= n && reported >= n) break;
        if (joined) break; /* interrupted: every file taken is reported */
        if (interrupted) {
            /* the workers take no new file: wait for the ones being written, report them */
            for (int k = 0; k < started; k++)
                pthread_join(th[k], NULL);
            joined = 1;
            continue;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int k = 0; !joined && k < started; k++)
        pthread_join(th[k], NULL);
    free(th);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    double elapsed = now_s() - t0;
    if (tty) fprintf(stderr, "\n");
    if (interrupted && reported < n) {
        fprintf(stderr, "interrupted: %d of %d done\n", reported, n);
        rc = 130;
        goto out;
    }
    fprintf(stderr, "marionette %s: %d of %d files written to %s in %.2f s (%.1f files/s, %d %s)",
            cmd, n - failed - skipped, n, mn_cli_safe(out_dir), elapsed,
            elapsed > 0 ? n / elapsed : 0, started ? started : 1,
            started == 1 || !started ? "worker" : "workers");
    if (skipped) fprintf(stderr, "; %d up to date, not redone (--force redoes them)", skipped);
    if (failed) {
        fprintf(stderr, "; %d failed:\n", failed);
        for (int i = 0; i < n; i++)
            if (b.errs[i].status != MN_OK)
                fprintf(stderr, "  %s: %s\n", mn_cli_safe(inputs[i]),
                        mn_cli_safe(b.errs[i].message[0] ? b.errs[i].message
                                                         : mn_status_name(b.errs[i].status)));
        rc = MN_EXIT_INPUT;
    } else {
        fprintf(stderr, "\n");
    }
out:
    for (int i = 0; b.outputs && i < n; i++)
        free(b.outputs[i]);
    free(b.outputs);
    free(b.errs);
    free(b.skipped);
    free((void*)b.finished);
    return rc;
}
