/* The `marionette` command: one file cli/cmd_NAME.c per subcommand and one
 * bench/bench_NAME.c per benchmark; the build generates the table from the file names.
 *
 * cmd_NAME.c defines
 *     int mn_cmd_NAME(int argc, char** argv);     argv[0] is "NAME"
 *     const char mn_cmd_NAME_summary[];            one line for `marionette --help`
 * bench_NAME.c defines mn_bench_NAME and mn_bench_NAME_summary the same way, run as
 * `marionette bench NAME ...`.
 *
 * Exit status: 0 success, 1 bad input (one line on stderr naming file, line and field),
 * 2 usage error. Every command answers --help. Commands use the public headers only. */
#ifndef MN_CLI_H
#define MN_CLI_H

#include <marionette/base.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>

enum { MN_EXIT_OK = 0, MN_EXIT_INPUT = 1, MN_EXIT_USAGE = 2 };

#define MN_COMMAND(name)                                                                           \
    int mn_cmd_##name(int argc, char** argv);                                                      \
    extern const char mn_cmd_##name##_summary[];
#define MN_BENCH(name)                                                                             \
    int mn_bench_##name(int argc, char** argv);                                                    \
    extern const char mn_bench_##name##_summary[];
#include "commands.inc"
#undef MN_COMMAND
#undef MN_BENCH

/* Is argv[i] "-h" or "--help" for any i? */
int mn_cli_wants_help(int argc, char** argv);
/* Prints "marionette CMD: message" to stderr and returns MN_EXIT_USAGE. */
int mn_cli_usage_error(const char* cmd, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints err's one-line message to stderr and returns MN_EXIT_INPUT. */
int mn_cli_input_error(const mn_error* err);
/* Parses "v1,v2,..." into at most cap finite doubles; returns the count or -1. */
int mn_cli_parse_list(const char* s, double* out, int cap);
/* Parses a whole decimal int / a finite double; returns 0 on failure. */
int mn_cli_parse_int(const char* s, int* out);
int mn_cli_parse_double(const char* s, double* out);
/* s made safe to print on a terminal: a name read from a file may hold escape sequences
 * that would recolour, retitle or clear the terminal. Control characters (C0, DEL and the
 * C1 range U+0080..U+009F) and bytes that are not UTF-8 become \xNN; everything else,
 * including any other UTF-8 text, is kept. Returns s itself when nothing needs escaping,
 * else a copy in one of 8 buffers reused in turn (valid until 8 more calls). NULL -> "". */
const char* mn_cli_safe(const char* s);
/* Prints a JSON string literal (quotes and escapes; control characters, DEL and C1 as
 * \u00XX, bytes that are not UTF-8 as U+FFFD). */
void mn_cli_json_string(FILE* f, const char* s);
/* v for JSON: the shortest form that reads back to the same double (mn_format_double), so
 * --json keeps full precision without printing 0.94999999999999996 for 0.95. A string in
 * one of 16 buffers reused in turn (up to 16 in one printf). v must be finite. */
const char* mn_cli_json_num(double v);
/* Are the n values all finite? When one is not (inf or NaN: an input so large that the
 * arithmetic overflowed), prints "marionette: FILE: WHAT: the result is not finite ..."
 * to stderr and returns 0: no output format carries inf or NaN, the command fails instead
 * (exit status 1). */
int mn_cli_finite(const char* file, const char* what, const double* v, size_t n);
/* The joint that name (a joint's name or alias: a URDF joint's name) finds in figure m, read
 * from file; on a miss -1, after printing to stderr
 *     marionette: no joint "NAME" in FILE (FIELD); did you mean "..." (link ...)?
 * with the nearest names (mn_model_joint_hint). Every command taking joint names uses it. */
int mn_cli_find_joint(const mn_model* m, const char* file, const char* field, const char* name);
/* Prints a warning line to stderr when w has any. */
void mn_cli_print_warnings(const mn_warnings* w);
/* Runs a command whose output is key=value lines or text with --json (removed from argv)
 * and prints that output as JSON (cli/json_out.c); returns the command's exit status. */
int mn_cli_run_as_json(int (*run)(int, char**), int argc, char** argv);
/* The heel and toe contact tracks of both feet of a take of m (mn_motion, its own figure)
 * into info, as retargeting finds them (docs/retarget.md "Contacts"); info->ncontact stays
 * 0 when no rig table knows m. cli/cmd_retarget.c. */
struct mn_seq_doc_info;
void mn_cli_take_contacts(const mn_model* m, const mn_motion* mo, struct mn_seq_doc_info* info);

#endif
