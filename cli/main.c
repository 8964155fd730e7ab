/* marionette: pose and animate articulated figures from the command line. */
#include "cli.h"

#include <string.h>

typedef struct command {
    const char* name;
    int (*run)(int, char**);
    const char* summary;
} command;

#define MN_COMMAND(n) {#n, mn_cmd_##n, mn_cmd_##n##_summary},
#define MN_BENCH(n)
static const command commands[] = {
#include "commands.inc"
};
#undef MN_COMMAND
#undef MN_BENCH
#define MN_COMMAND(n)
#define MN_BENCH(n) {#n, mn_bench_##n, mn_bench_##n##_summary},
static const command benches[] = {
#include "commands.inc"
    {NULL, NULL, NULL}};
#undef MN_COMMAND
#undef MN_BENCH

static void print_table(FILE* f, const command* t, size_t n) {
    for (size_t i = 0; i < n && t[i].name; i++)
        fprintf(f, "  %-10s %s\n", t[i].name, t[i].summary);
}

static void usage(FILE* f) {
    fprintf(f, "usage: marionette COMMAND [ARGS] (marionette COMMAND --help for each)\n"
               "       marionette --version\n\ncommands:\n");
    print_table(f, commands, sizeof commands / sizeof commands[0]);
    fprintf(f, "  %-10s %s\n", "bench", "benchmarks, key=value lines (marionette bench --help)");
}

static int run_bench(int argc, char** argv) {
    size_t nb = sizeof benches / sizeof benches[0] - 1;
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE* f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: marionette bench NAME [ARGS]\n\nbenchmarks:\n");
        print_table(f, benches, nb);
        return argc < 2 ? MN_EXIT_USAGE : MN_EXIT_OK;
    }
    for (size_t i = 0; i < nb; i++)
        if (!strcmp(argv[1], benches[i].name)) return benches[i].run(argc - 1, argv + 1);
    return mn_cli_usage_error("bench", "unknown benchmark '%s'", argv[1]);
}

/* `marionette --version` and `marionette COMMAND ... --version`: every command answers it
 * (before anything else, as --help), "marionette VERSION" on stdout. */
static int wants_version(int argc, char** argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--version")) return 1;
    return 0;
}

int main(int argc, char** argv) {
    if (wants_version(argc, argv)) {
        printf("marionette %s\n", MN_CLI_VERSION);
        return MN_EXIT_OK;
    }
    if (argc < 2) {
        usage(stderr);
        return MN_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    int (*run)(int, char**) = NULL;
    if (!strcmp(argv[1], "bench")) run = run_bench;
    for (size_t i = 0; !run && i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) run = commands[i].run;
    if (run) {
        /* --json: the commands that write JSON themselves parse it; the others' key=value
         * lines or text are turned into JSON (mn_cli_run_as_json) */
        static const char* const native[] = {"fk", "info", "solve", "pose", "fit", "editor"};
        int wants = 0, own = 0;
        for (int i = 2; i < argc; i++)
            wants |= !strcmp(argv[i], "--json");
        for (size_t k = 0; k < sizeof native / sizeof native[0]; k++)
            own |= !strcmp(argv[1], native[k]);
        if (wants && !own && !mn_cli_wants_help(argc, argv))
            return mn_cli_run_as_json(run, argc - 1, argv + 1);
        return run(argc - 1, argv + 1);
    }
    fprintf(stderr, "marionette: unknown command '%s'\n", mn_cli_safe(argv[1]));
    usage(stderr);
    return MN_EXIT_USAGE;
}
