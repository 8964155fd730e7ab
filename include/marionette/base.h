/* marionette base: status codes, error messages that name file, line and field, and the
 * arena allocator that carries every solve's workspace.
 *
 * Nothing in the library prints or exits: a call that fails returns a status and, when
 * given an mn_error, fills it with a one-line message "file:line: field: what".
 *
 * The conventions of the whole public API (every other header points here):
 *  - Options and definitions. mn_<thing>_default() returns an mn_<thing>_options or
 *    mn_<thing>_def zeroed first (memset), then filled with the defaults: start from it
 *    and change what differs, so that a field added later gets its default, never garbage.
 *  - Solves, fits and steps take their arguments in one order:
 *        (const model*, data*, problem, options, result)
 *    what is solved over (read only, or the object that holds it: a constraint system, a
 *    fitter, a soft body), the state written (in: the warm start; out: the answer), the
 *    problem (targets, goals, a time step), the options, the result. Options NULL means
 *    mn_<thing>_default(); result may be NULL. They return the result's status.
 *  - Every result has `status`, `iterations` (steps, sweeps or substeps done) and
 *    `message`: empty when the status is MN_OK, else why, naming the field or argument at
 *    fault ("options.tol: must be > 0").
 *  - Bad input (NULL, NaN, an option out of range) returns MN_ERR_ARG and changes nothing;
 *    no call leaves NaN in a state. Nothing allocates inside a solve, fit, sample or step:
 *    scratch comes from memory set aside when the object was created (mn_arena).
 *  - Set-up calls (create, add, read, compile) report through an mn_error* (may be NULL). */
#ifndef MARIONETTE_BASE_H
#define MARIONETTE_BASE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mn_status {
    MN_OK = 0,
    MN_ERR_ARG,         /* misuse: NULL, NaN, out-of-range index, bad option */
    MN_ERR_IO,          /* a file could not be opened, read or written */
    MN_ERR_PARSE,       /* a malformed file */
    MN_ERR_NOMEM,       /* allocation failed or a workspace is too small */
    MN_ERR_NOTFOUND,    /* an unknown name */
    MN_ERR_SINGULAR,    /* a numerically singular system */
    MN_ERR_UNREACHABLE, /* a goal that cannot be met: the best result is returned */
    MN_ERR_NOCONVERGE,  /* iteration or time budget ran out before the tolerance */
    MN_ERR_UNSUPPORTED  /* a valid request this build does not handle */
} mn_status;

/* Short upper-case name of a status ("OK", "PARSE", ...). */
const char* mn_status_name(mn_status s);

typedef struct mn_error {
    mn_status status;
    char file[256];    /* file being read or written, "" when none */
    int line;          /* 1-based line in that file, 0 when not applicable */
    char field[64];    /* the field, keyword or argument at fault */
    char message[512]; /* the whole one-line message, ready to print */
} mn_error;

/* Fills err (may be NULL) and returns s. The message reads "file:line: field: text", with
 * the parts that are empty or zero left out. printf-style text. */
mn_status mn_error_set(mn_error* err, mn_status s, const char* file, int line, const char* field,
                       const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
void mn_error_clear(mn_error* err);

/* How far the name asked for is from a name, to suggest the nearest on a miss: the edit
 * distance (insertions, deletions, substitutions and swaps of neighbours) with ASCII letter
 * case ignored; a name that contains the other (both at least 3 bytes) counts as 1 (0 when
 * they are equal but for case). Stops early: returns limit + 1 when the distance exceeds
 * limit, and for a NULL name or one longer than 255 bytes. No allocation. */
int mn_name_distance(const char* asked, const char* name, int limit);
/* The most edits a suggestion for name may be away: a third of its length, at least 2. */
int mn_name_distance_limit(const char* name);

/* The shortest decimal form of v that reads back (strtod) to the same double: at most 17
 * significant digits, fewer when they suffice (0.95, not 0.94999999999999996), the one
 * closest to v among the shortest. Laid out as printf's %g with those digits, the exponent
 * without padding (0.0001, 123456, 1e6, 1.25e-7), so it is also a JSON number; "-0" is
 * written "0", infinities and NaN "inf", "-inf", "nan". Schubfach (Giulietti 2021,
 * src/core/format_double.c): no allocation, no locale. What the writers and the command
 * line's JSON print. buf holds at least MN_DOUBLE_CHARS bytes; returns buf. */
#define MN_DOUBLE_CHARS 32
const char* mn_format_double(double v, char* buf);

/* Bump allocator over one caller-owned block (MuJoCo's stack arena, Box2D's step arena).
 * Allocations are 16-byte aligned; a mark taken before a solve and reset after frees all
 * the solve's scratch at once. peak records the high-water mark. */
typedef struct mn_arena {
    unsigned char* base;
    size_t size, used, peak;
} mn_arena;

void mn_arena_init(mn_arena* a, void* buffer, size_t size);
/* NULL when the arena is full (the caller returns MN_ERR_NOMEM); never calls malloc. */
void* mn_arena_alloc(mn_arena* a, size_t bytes);
static inline size_t mn_arena_mark(const mn_arena* a) {
    return a->used;
}
static inline void mn_arena_reset(mn_arena* a, size_t mark) {
    a->used = mark;
}

#ifdef __cplusplus
}
#endif
#endif
