/* The option-table parser (options.h says why it is ours and not getopt_long). */
#include "options.h"

#include <string.h>

#include "cli.h"

/* The row of t that a names, or NULL; *joined is the value written into a ("-j4"), or NULL;
 * *by_alias says a was the row's alias. */
static const mn_cli_opt* find_opt(const mn_cli_table* t, const char* a, const char** joined,
                                  int* by_alias) {
    *joined = NULL;
    *by_alias = 0;
    for (int k = 0; k < t->nopts; k++) {
        const mn_cli_opt* o = &t->opts[k];
        if (!strcmp(a, o->name)) return o;
        if (o->alias && !strcmp(a, o->alias)) {
            *by_alias = 1;
            return o;
        }
    }
    for (int k = 0; k < t->nopts; k++) {
        const mn_cli_opt* o = &t->opts[k];
        if (o->kind != MN_CLI_FLAG && strlen(o->name) == 2 && !strncmp(a, o->name, 2) && a[2]) {
            *joined = a + 2;
            return o;
        }
    }
    return NULL;
}

static int list_add(const mn_cli_table* t, const mn_cli_opt* o, mn_cli_list* l, const char* v) {
    if (l->n >= l->cap) return mn_cli_usage_error(t->cmd, o->bad, v);
    l->v[l->n++] = v;
    return 0;
}

/* The value v of row o into dest; 0 or the usage error's exit status. */
static int set_value(const mn_cli_table* t, const mn_cli_opt* o, void* dest, const char* v) {
    switch (o->kind) {
    case MN_CLI_INT: {
        int x;
        if (!mn_cli_parse_int(v, &x) || x < o->lo || x > o->hi)
            return mn_cli_usage_error(t->cmd, o->bad, v);
        *(int*)dest = x;
        return 0;
    }
    case MN_CLI_DOUBLE: {
        double x;
        if (!mn_cli_parse_double(v, &x) || x < o->lo || x > o->hi)
            return mn_cli_usage_error(t->cmd, o->bad, v);
        *(double*)dest = x;
        return 0;
    }
    case MN_CLI_STRING:
        *(const char**)dest = v;
        return 0;
    case MN_CLI_LIST:
        return list_add(t, o, dest, v);
    case MN_CLI_CALL:
        return o->parse(v, dest) ? 0 : mn_cli_usage_error(t->cmd, o->bad, v);
    default:
        return 0;
    }
}

/* One option at argv[*i] (row o); 0 or the usage error's exit status. */
static int take_option(const mn_cli_table* t, const mn_cli_opt* o, int argc, char** argv, int* i,
                       void* args, const char* joined, int by_alias) {
    const char* a = argv[*i];
    void* dest = (char*)args + o->off;
    if (o->kind == MN_CLI_FLAG) {
        *(int*)dest = (int)o->lo;
        return 0;
    }
    if (o->kind == MN_CLI_PATHS) {
        while (*i + 1 < argc && argv[*i + 1][0] != '-') {
            int rc = list_add(t, o, dest, argv[++*i]);
            if (rc) return rc;
        }
        return 0;
    }
    if (!joined && *i + 1 >= argc) {
        const char* m = o->missing ? o->missing : t->missing ? t->missing : o->bad;
        return mn_cli_usage_error(t->cmd, m ? m : "%s needs a value", a);
    }
    if (by_alias && o->note) fprintf(stderr, "marionette %s: note: %s\n", t->cmd, o->note);
    if (o->kind == MN_CLI_TAKE) return o->take(args, argc, argv, i);
    return set_value(t, o, dest, joined ? joined : argv[++*i]);
}

int mn_cli_parse(const mn_cli_table* t, int argc, char** argv, void* args, const char** pos,
                 int* npos) {
    int n = 0;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* joined;
        int by_alias;
        const mn_cli_opt* o = find_opt(t, a, &joined, &by_alias);
        if (o) {
            int rc = take_option(t, o, argc, argv, &i, args, joined, by_alias);
            if (rc) return rc;
        } else if (a[0] == '-' && (a[1] || t->dash_option)) {
            return mn_cli_usage_error(t->cmd, t->unknown, a);
        } else if (t->max_pos >= 0 && n >= t->max_pos) {
            return t->too_many ? mn_cli_usage_error(t->cmd, "%s", t->too_many)
                               : mn_cli_usage_error(t->cmd, t->unknown, a);
        } else {
            pos[n++] = a;
        }
    }
    if (npos) *npos = n;
    return 0;
}

int mn_cli_has(int argc, char** argv, const char* arg) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], arg)) return 1;
    return 0;
}
