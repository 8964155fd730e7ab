/* The option table of a command: each command describes its options once, as rows of
 * {name, kind, destination, range, message}, and mn_cli_parse reads argv against them.
 *
 * Why a parser of our own and not getopt_long: the messages. The commands' usage errors are
 * part of their interface (tests and scripts read them): "--frames needs an integer in
 * 1..100000", "unknown or incomplete option '--tol'", the note an old spelling prints. getopt
 * prints its own ("option requires an argument"), permutes argv, accepts abbreviations
 * (--fra for --frames) and "--opt=value", and knows nothing of ranges, repeated values or
 * the lists of files some options take (--frames A.obj B.obj). The table parser is a page
 * of code, reads argv in order, and each row carries its range and its message.
 *
 * The rows are static data (destinations are offsets into the command's own args struct),
 * so a test can walk every table: every option of a table is in its command's --help and in
 * the man page (tests/integration/test_cli_options.c). */
#ifndef MN_CLI_OPTIONS_H
#define MN_CLI_OPTIONS_H

#include <float.h>
#include <stddef.h>

typedef enum mn_cli_kind {
    MN_CLI_FLAG,   /* no value: sets the int destination to (int)lo */
    MN_CLI_INT,    /* an int in [lo, hi] */
    MN_CLI_DOUBLE, /* a finite double in [lo, hi]; lo = MN_CLI_POSITIVE means > 0 */
    MN_CLI_STRING, /* a const char*: the value (the last one given wins) */
    MN_CLI_LIST,   /* repeatable: each value appended to an mn_cli_list */
    MN_CLI_PATHS,  /* the following arguments up to the next that starts with '-', appended to
                    * an mn_cli_list (--frames A.obj B.obj ...) */
    MN_CLI_CALL,   /* a value given to parse(value, destination), which returns 0 if bad */
    MN_CLI_TAKE    /* take(args, argc, argv, &i) reads the option at argv[i] and what follows
                    * it itself, returns 0 or the exit status of a usage error it printed */
} mn_cli_kind;

/* The smallest double > 0: a range starting there is "> 0". */
#define MN_CLI_POSITIVE DBL_TRUE_MIN

/* Values of a LIST or PATHS option: v has room for cap of them (set by the command). */
typedef struct mn_cli_list {
    const char** v;
    int n, cap;
} mn_cli_list;

typedef struct mn_cli_opt {
    const char* name; /* "--iters"; a two-character name "-j" also reads "-j4" */
    mn_cli_kind kind;
    size_t off;      /* the destination: its offset in the command's args struct (MN_CLI_AT) */
    double lo, hi;   /* INT, DOUBLE: the range, both ends included; FLAG: lo is the value set */
    const char* bad; /* the usage error for a bad value (CALL: %s is the value); LIST, PATHS:
                      * for one too many */
    /* The usage error for a missing value (%s: the option as given): this, else the table's
     * missing, else bad, else "%s needs a value". */
    const char* missing;
    const char* alias; /* another spelling, or NULL */
    /* Printed when the alias is used ("marionette CMD: note: NOTE"): an old spelling kept
     * for one release. NULL: a lasting alias (-j for --jobs). */
    const char* note;
    int (*parse)(const char* value, void* dest);            /* CALL */
    int (*take)(void* args, int argc, char** argv, int* i); /* TAKE */
} mn_cli_opt;

/* A command's table and what it says about arguments that are not options. */
typedef struct mn_cli_table {
    const char* cmd; /* as it names itself in messages: "solve", "anim bake", "bench ik" */
    const mn_cli_opt* opts;
    int nopts;
    const char* unknown;  /* an unknown option, %s the argument: "unknown option '%s'" */
    const char* missing;  /* an option without its value, %s the option (see the rows') */
    int max_pos;          /* positional arguments (not starting with '-'); -1: any number;
                           * 0 (the default): none */
    const char* too_many; /* the usage error for one more; NULL: unknown with %s the argument */
    int dash_option;      /* 1: a lone "-" is an (unknown) option, 0: a positional argument */
    const char* help;     /* the words after "marionette" that print this table's --help when
                           * they are not cmd ("bench ik --compare"); NULL: cmd */
} mn_cli_table;

/* The offset of field f (of C type ctype) in the args struct T, checked to have that type. */
#define MN_CLI_AT(T, f, ctype) (offsetof(T, f) + 0 * sizeof((ctype*){&((T*)0)->f}))
/* A number macro as a string literal, for messages: MN_CLI_STR(MN_SIM_MAX_FRAMES). */
#define MN_CLI_STR_(x) #x
#define MN_CLI_STR(x) MN_CLI_STR_(x)
#define MN_CLI_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* .opts and .nopts of a table from its array of rows. */
#define MN_CLI_OPTS(a) .opts = (a), .nopts = MN_CLI_COUNT(a)

/* Reads argv[1..argc) against table t into args (an instance of the struct the table's
 * offsets are in), in order, the positional arguments into pos[0..*npos) (room for
 * max_pos, or argc when it is -1; pos may be NULL when max_pos is 0). Returns 0, or
 * MN_EXIT_USAGE after printing the first error as mn_cli_usage_error does. */
int mn_cli_parse(const mn_cli_table* t, int argc, char** argv, void* args, const char** pos,
                 int* npos);

/* Is arg one of argv[1..argc)? (A word that picks a mode: bench ik --compare.) */
int mn_cli_has(int argc, char** argv, const char* arg);

/* The commands' tables (in their cmd_*.c files), for tests/integration/test_cli_options.c. */
extern const mn_cli_table mn_cmd_solve_options;
extern const mn_cli_table mn_cmd_fk_options;
extern const mn_cli_table mn_cmd_convert_options;
extern const mn_cli_table mn_cmd_fit_options;
extern const mn_cli_table mn_cmd_sim_options;
extern const mn_cli_table mn_cmd_workspace_options;
extern const mn_cli_table mn_cmd_retarget_options;
extern const mn_cli_table mn_cmd_info_options;
extern const mn_cli_table mn_cmd_demo_options;
extern const mn_cli_table mn_cmd_editor_options;
extern const mn_cli_table mn_cmd_pose_options;
extern const mn_cli_table mn_cmd_anim_info_options;
extern const mn_cli_table mn_cmd_anim_bake_options;
extern const mn_cli_table mn_cmd_anim_import_options;
extern const mn_cli_table mn_cmd_anim_compress_options;
extern const mn_cli_table mn_cmd_anim_crossfade_options;
extern const mn_cli_table mn_cmd_anim_root_motion_options;
extern const mn_cli_table mn_cmd_anim_loop_options;
extern const mn_cli_table mn_cmd_anim_retime_options;
extern const mn_cli_table mn_bench_anim_options;
extern const mn_cli_table mn_bench_drag_options;
extern const mn_cli_table mn_bench_figread_options;
extern const mn_cli_table mn_bench_fit_options;
extern const mn_cli_table mn_bench_fk_options;
extern const mn_cli_table mn_bench_gltf_options;
extern const mn_cli_table mn_bench_ik_options;
extern const mn_cli_table mn_bench_ik_compare_options;
extern const mn_cli_table mn_bench_ik_tracking_options;
extern const mn_cli_table mn_bench_layers_options;
extern const mn_cli_table mn_bench_linalg_options;
extern const mn_cli_table mn_bench_retarget_options;
extern const mn_cli_table mn_bench_scale_options;
extern const mn_cli_table mn_bench_sim_options;
extern const mn_cli_table mn_bench_targets_options;

#endif
