/* --json for the commands whose output is key=value lines or text (retarget, sim, anim,
 * demo, convert, bench): the command runs with stdout captured, then its output is printed
 * as JSON in the style of the commands that write JSON themselves (fk, info, solve, pose,
 * fit): numbers in the shortest form that reads back to the same double (mn_cli_json_num),
 * no spaces. Lines of key=value pairs become one object (the keys of every line together),
 * or an array of one object per line when a key repeats (a benchmark's rows); any other
 * text becomes {"lines": [...]}; no output at all, {}. The exit status is the command's;
 * stderr is left alone. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The end of the token that starts at line[i]: at the next space, except inside a value
 * written in double quotes (key="a b"), which runs to its closing quote. */
static size_t token_end(const char* line, size_t i, size_t len) {
    int quoted = 0;
    for (; i < len; i++) {
        if (line[i] == '"' && i > 0 && line[i - 1] == '=')
            quoted = 1;
        else if (line[i] == '"' && quoted)
            quoted = 0;
        else if (line[i] == ' ' && !quoted)
            break;
    }
    return i;
}

/* Is line (len bytes, no newline) made of key=value tokens only? */
static int kv_line(const char* line, size_t len) {
    size_t i = 0, tokens = 0;
    while (i < len) {
        while (i < len && line[i] == ' ')
            i++;
        if (i >= len) break;
        size_t start = i;
        const char* eq = memchr(line + start, '=', len - start);
        i = token_end(line, start, len);
        if (eq && eq >= line + i) eq = NULL;
        if (!eq || eq == line + start) return 0;
        tokens++;
    }
    return tokens > 0;
}

/* A value: a number when the whole text is one (finite), else a string (without the
 * quotes of a quoted one). */
static void put_value(const char* v, size_t n) {
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') v++, n -= 2;
    char buf[256];
    if (n > 0 && n < sizeof buf) {
        memcpy(buf, v, n);
        buf[n] = 0;
        char* end;
        double d = strtod(buf, &end);
        if (*end == 0 && isfinite(d) && (buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9'))) {
            fputs(mn_cli_json_num(d), stdout);
            return;
        }
    }
    char* s = malloc(n + 1);
    if (!s) {
        fputs("\"\"", stdout);
        return;
    }
    memcpy(s, v, n);
    s[n] = 0;
    mn_cli_json_string(stdout, s);
    free(s);
}

/* Prints the pairs of one key=value line; *first: no comma before the first. */
static void put_pairs(const char* line, size_t len, int* first) {
    size_t i = 0;
    while (i < len) {
        while (i < len && line[i] == ' ')
            i++;
        if (i >= len) break;
        size_t start = i;
        i = token_end(line, start, len);
        const char* eq = memchr(line + start, '=', i - start);
        char key[256];
        size_t kn = (size_t)(eq - (line + start));
        if (kn >= sizeof key) kn = sizeof key - 1;
        memcpy(key, line + start, kn);
        key[kn] = 0;
        printf("%s", *first ? "" : ",");
        mn_cli_json_string(stdout, key);
        printf(":");
        put_value(eq + 1, (size_t)(line + i - (eq + 1)));
        *first = 0;
    }
}

/* Does any key appear twice among the key=value lines of text? */
static int keys_repeat(const char* text) {
    /* small outputs: compare every key with every later one */
    const char* keys[1024];
    size_t lens[1024];
    int n = 0;
    for (const char* p = text; *p && n < 1024;) {
        const char* nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        for (size_t i = 0; i < len && n < 1024;) {
            while (i < len && p[i] == ' ')
                i++;
            size_t start = i;
            while (i < len && p[i] != '=' && p[i] != ' ')
                i++;
            if (i > start) keys[n] = p + start, lens[n++] = i - start;
            i = token_end(p, i, len);
        }
        p += len + (nl != NULL);
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (lens[a] == lens[b] && !memcmp(keys[a], keys[b], lens[a])) return 1;
    return n >= 1024;
}

static void print_as_json(const char* text) {
    int all_kv = 1, nlines = 0;
    for (const char* p = text; *p;) {
        const char* nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 0) {
            nlines++;
            if (!kv_line(p, len)) all_kv = 0;
        }
        p += len + (nl != NULL);
    }
    if (nlines == 0) {
        printf("{}\n");
        return;
    }
    int rows = all_kv && keys_repeat(text);
    printf(all_kv ? (rows ? "[" : "{") : "{\"lines\":[");
    int first = 1;
    for (const char* p = text; *p;) {
        const char* nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 0 && all_kv && rows) {
            int f = 1;
            printf("%s{", first ? "" : ",");
            put_pairs(p, len, &f);
            printf("}");
            first = 0;
        } else if (len > 0 && all_kv) {
            put_pairs(p, len, &first);
        } else if (!all_kv && (len > 0 || nl)) {
            char* line = malloc(len + 1);
            if (line) {
                memcpy(line, p, len);
                line[len] = 0;
                printf("%s", first ? "" : ",");
                mn_cli_json_string(stdout, line);
                first = 0;
                free(line);
            }
        }
        p += len + (nl != NULL);
    }
    printf(all_kv ? (rows ? "]\n" : "}\n") : "]}\n");
}

int mn_cli_run_as_json(int (*run)(int, char**), int argc, char** argv) {
    char** args = calloc((size_t)argc + 1, sizeof *args);
    FILE* cap = tmpfile();
    int saved = -1;
    fflush(stdout);
    if (args && cap) saved = dup(STDOUT_FILENO);
    if (saved < 0 || dup2(fileno(cap), STDOUT_FILENO) < 0) {
        if (saved >= 0) close(saved);
        if (cap) fclose(cap);
        free(args);
        fprintf(stderr, "marionette %s: --json: cannot capture the output\n", argv[0]);
        return MN_EXIT_INPUT;
    }
    int n = 0;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--json")) args[n++] = argv[i];
    int rc = run(n, args);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    long size = ftell(cap);
    char* text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (text) {
        rewind(cap);
        size_t got = fread(text, 1, (size_t)size, cap);
        text[got] = 0;
        print_as_json(text);
        fflush(stdout);
    } else {
        fprintf(stderr, "marionette %s: --json: out of memory\n", argv[0]);
        rc = MN_EXIT_INPUT;
    }
    free(text);
    fclose(cap);
    free(args);
    return rc;
}
