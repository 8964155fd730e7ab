/* The commands' option tables (cli/options.h): every option of every table is in its
 * command's --help and in the man page built from those texts, every message of a table
 * is printed with one string argument at most (%s), and the table parser reads
 * what the commands read (ranges, missing values, old spellings, -j4, lists of files,
 * positional arguments). Links the command's own objects. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "test.h"

/* The tables of the commands, one per command or subcommand. */
static const mn_cli_table* const tables[] = {
    &mn_cmd_solve_options,
    &mn_cmd_fk_options,
    &mn_cmd_convert_options,
    &mn_cmd_fit_options,
    &mn_cmd_sim_options,
    &mn_cmd_workspace_options,
    &mn_cmd_retarget_options,
    &mn_cmd_info_options,
    &mn_cmd_demo_options,
    &mn_cmd_editor_options,
    &mn_cmd_pose_options,
    &mn_cmd_anim_info_options,
    &mn_cmd_anim_bake_options,
    &mn_cmd_anim_import_options,
    &mn_cmd_anim_compress_options,
    &mn_cmd_anim_crossfade_options,
    &mn_cmd_anim_root_motion_options,
    &mn_cmd_anim_loop_options,
    &mn_cmd_anim_retime_options,
    &mn_bench_anim_options,
    &mn_bench_drag_options,
    &mn_bench_figread_options,
    &mn_bench_fit_options,
    &mn_bench_fk_options,
    &mn_bench_gltf_options,
    &mn_bench_ik_options,
    &mn_bench_ik_compare_options,
    &mn_bench_ik_tracking_options,
    &mn_bench_layers_options,
    &mn_bench_linalg_options,
    &mn_bench_retarget_options,
    &mn_bench_scale_options,
    &mn_bench_sim_options,
    &mn_bench_targets_options,
};

/* Does text hold the option name as a word of its own ("--seed" is not in "--seed-q")?
 * esc: in a man page's source, where every '-' is written "\-". */
static int has_option(const char* text, const char* name, int esc) {
    char pat[128];
    size_t n = 0;
    for (const char* c = name; *c && n + 3 < sizeof pat; c++) {
        if (*c == '-' && esc) pat[n++] = '\\';
        pat[n++] = *c;
    }
    pat[n] = 0;
    for (const char* p = text; (p = strstr(p, pat)) != NULL; p += n) {
        char after = p[n];
        int more = (after >= 'a' && after <= 'z') || (after >= '0' && after <= '9') ||
                   after == '-' || (after == '\\' && p[n + 1] == '-');
        if (!more) return 1;
    }
    return 0;
}

/* Is fmt a message mn_cli_parse may print with one string argument: NULL, or at most one
 * conversion and that one %s (a %d would read an int that is not there)? */
static int one_string_at_most(const char* fmt) {
    int n = 0;
    for (const char* p = fmt; p && *p; p++)
        if (*p == '%') {
            if (p[1] == '%') {
                p++;
                continue;
            }
            if (p[1] != 's' || ++n > 1) return 0;
        }
    return 1;
}

static void test_messages_take_one_string(void) {
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++) {
        const mn_cli_table* t = tables[k];
        CHECK(one_string_at_most(t->unknown) && t->unknown);
        CHECK(one_string_at_most(t->missing));
        for (int i = 0; i < t->nopts; i++) {
            const mn_cli_opt* o = &t->opts[i];
            int ok = one_string_at_most(o->bad) && one_string_at_most(o->missing);
            if (!ok)
                printf("  marionette %s: %s: a message with another conversion\n", t->cmd, o->name);
            CHECK(ok);
        }
    }
}

static void test_every_option_is_documented(void) {
    size_t len;
    char* page = mn_test_read_file(MN_MANPAGE, &len);
    CHECK(page != NULL);
    if (!page) return;
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++) {
        const mn_cli_table* t = tables[k];
        char args[128], *out, *err;
        snprintf(args, sizeof args, "%s --help", t->help ? t->help : t->cmd);
        CHECK(mn_test_run_program(MN_CLI, args, &out, &err) == 0 && out);
        CHECK(t->nopts > 0);
        for (int i = 0; out && i < t->nopts; i++) {
            const char* name = t->opts[i].name;
            int in_help = has_option(out, name, 0), in_page = has_option(page, name, 1);
            if (!in_help || !in_page)
                printf("  marionette %s: %s is not in its %s\n", t->cmd, name,
                       in_help ? "man page" : "--help");
            CHECK(in_help && in_page);
            /* one row per name: a name or alias found twice would hide the second row */
            for (int j = 0; j < t->nopts; j++)
                if (j != i) {
                    CHECK(strcmp(name, t->opts[j].name) != 0);
                    CHECK(!t->opts[j].alias || strcmp(name, t->opts[j].alias) != 0);
                }
            CHECK(t->opts[i].kind != MN_CLI_CALL || t->opts[i].parse);
            CHECK(t->opts[i].kind != MN_CLI_TAKE || t->opts[i].take);
            CHECK(t->opts[i].kind == MN_CLI_FLAG || t->opts[i].kind == MN_CLI_STRING ||
                  t->opts[i].kind == MN_CLI_PATHS || t->opts[i].bad || t->missing);
        }
        free(out), free(err);
    }
    free(page);
}

/* A table of every kind, read the way the commands read theirs. */
typedef struct demo_args {
    int flag, n, jobs;
    double x;
    const char *s, *pos[2];
    const char* lv[2];
    const char* pv[4];
    mn_cli_list list, paths;
} demo_args;

static int parse_abc(const char* v, void* dest) {
    *(int*)dest = v[0] - 'a';
    return !strcmp(v, "a") || !strcmp(v, "b") || !strcmp(v, "c");
}

#define AT(f, t) MN_CLI_AT(demo_args, f, t)
static const mn_cli_opt demo_opts[] = {
    {"--flag", MN_CLI_FLAG, AT(flag, int), .lo = 7},
    {"--n", MN_CLI_INT, AT(n, int), 1, 10, .bad = "--n needs an integer in 1..10",
     .alias = "--old-n", .note = "--old-n is now --n"},
    {"--x", MN_CLI_DOUBLE, AT(x, double), MN_CLI_POSITIVE, 1, .bad = "--x needs (0, 1]"},
    {"--s", MN_CLI_STRING, AT(s, const char*), .bad = NULL},
    {"--abc", MN_CLI_CALL, AT(n, int), .bad = "--abc: not '%s'", .parse = parse_abc},
    {"--item", MN_CLI_LIST, AT(list, mn_cli_list), .bad = "--item: at most 2"},
    {"--files", MN_CLI_PATHS, AT(paths, mn_cli_list), .bad = "--files: at most 4"},
    {"-j", MN_CLI_INT, AT(jobs, int), 1, INT_MAX, .bad = "-j needs >= 1", .alias = "--jobs"},
};
#undef AT
static const mn_cli_table demo_table = {
    .cmd = "demo-table",
    MN_CLI_OPTS(demo_opts),
    .unknown = "unknown option '%s'",
    .max_pos = 2,
    .too_many = "too many",
};

/* Parses the words of line (split at spaces) into a; returns mn_cli_parse's answer. */
static int parse_line(const char* line, demo_args* a, int* npos) {
    static char buf[256];
    char* argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "demo %s", line);
    for (char* w = strtok(buf, " "); w && argc < 32; w = strtok(NULL, " "))
        argv[argc++] = w;
    memset(a, 0, sizeof *a);
    a->list = (mn_cli_list){a->lv, 0, 2};
    a->paths = (mn_cli_list){a->pv, 0, 4};
    return mn_cli_parse(&demo_table, argc, argv, a, a->pos, npos);
}

static void test_parser(void) {
    demo_args a;
    int np;
    CHECK(parse_line("--flag --n 3 --x 0.5 --s hi A -j4 --item p --item q --files f g -", &a,
                     &np) == 0);
    CHECK(a.flag == 7 && a.n == 3 && a.x == 0.5 && a.s && !strcmp(a.s, "hi") && a.jobs == 4);
    CHECK(a.list.n == 2 && !strcmp(a.lv[1], "q") && a.paths.n == 2 && !strcmp(a.pv[1], "g"));
    /* "-" ends the list of files (it starts with '-') and is a positional argument */
    CHECK(np == 2 && !strcmp(a.pos[0], "A") && !strcmp(a.pos[1], "-"));
    CHECK(parse_line("--jobs 2 --old-n 10 --abc c", &a, &np) == 0 && a.jobs == 2 && a.n == 2);
    CHECK(parse_line("--x 1", &a, &np) == 0 && a.x == 1);
    /* out of range, not numbers, missing values, unknown options, one too many */
    const char* bad[] = {"--n 0",
                         "--n 11",
                         "--n 2.5",
                         "--x 0",
                         "--x 1.5",
                         "--x nan",
                         "--x inf",
                         "--n",
                         "--s",
                         "-j",
                         "-j0",
                         "--abc d",
                         "--nope",
                         "-q",
                         "A B C",
                         "--item a --item b --item c",
                         "--files a b c d e",
                         "--flag=1"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int rc = parse_line(bad[k], &a, &np);
        if (rc != MN_EXIT_USAGE) printf("  '%s' was read\n", bad[k]);
        CHECK(rc == MN_EXIT_USAGE);
    }
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_every_option_is_documented);
    RUN(test_messages_take_one_string);
    RUN(test_parser);
    return mn_test_report();
}
