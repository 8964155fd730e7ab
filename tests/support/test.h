/* Tiny test harness (after Box2D's test_macros.h): CHECK macros that record a failure
 * and go on, RUN() to call a test function, and a closing line "N passed, N failed".
 * Tests assert behaviour only: no timing. */
#ifndef MN_TEST_H
#define MN_TEST_H

#include <math.h>
#include <stdio.h>
#include <stddef.h>

extern int mn_test_failures; /* failed checks in the current test */
extern int mn_test_passed, mn_test_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            mn_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double mn_a_ = (a), mn_b_ = (b), mn_t_ = (tol);                                            \
        if (!(fabs(mn_a_ - mn_b_) <= mn_t_)) {                                                     \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.17g, %s = %.17g, tol %g\n",          \
                    __FILE__, __LINE__, #a, mn_a_, #b, mn_b_, mn_t_);                              \
            mn_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)

/* Runs one test function unless a filter (argv[1]) is given that its name does not contain. */
#define RUN(fn) mn_test_run(#fn, fn)

void mn_test_init(int argc, char** argv);
void mn_test_run(const char* name, void (*fn)(void));
/* Prints the closing line and returns the process exit status. */
int mn_test_report(void);

/* Heap allocations (malloc, calloc, realloc) made by this process so far. The test
 * executables are linked with -Wl,--wrap for the allocator, so this counts every call
 * made by the library code under test. */
long mn_alloc_count(void);

/* Reads a whole file into a malloc'd, NUL-terminated buffer; NULL on failure. */
char* mn_test_read_file(const char* path, size_t* size);

/* The test process's private temporary folder ($TMPDIR or /tmp, then mn_test_XXXXXX), made
 * on first use; NULL if it cannot be made. It is removed with everything in it when the
 * process exits (and on SIGINT, SIGTERM, SIGABRT), so a test leaves nothing behind even when
 * a check fails: put every file a test writes in here. */
const char* mn_test_temp_dir(void);

/* Writes text to a fresh file in mn_test_temp_dir() and returns its path (static buffer per
 * call slot; valid until the next 8 calls); NULL on failure. Removed at exit with the
 * folder; a test may remove it sooner. */
const char* mn_test_write_temp(const char* suffix, const char* text, size_t len);

/* Runs the program exe with args (a shell-quoted string, any length), stdin from /dev/null;
 * *out and *err receive what it wrote to stdout and stderr (malloc'd, "" when nothing; free
 * them). Returns its exit status, -1 when it did not exit normally. */
int mn_test_run_program(const char* exe, const char* args, char** out, char** err);

#endif
