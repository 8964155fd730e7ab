/* marionette editor: the web editor's local server (docs/editor-server.md): a project
 * folder and the page's files over HTTP on 127.0.0.1. */
#define _GNU_SOURCE /* realpath, readlink */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "editor_server.h"

const char mn_cmd_editor_summary[] = "the web editor: serve a project folder and the page locally";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette editor [FIGURE|PROJECT_DIR] [--port N] [--assets DIR] [--json]\n"
            "\n"
            "Starts the editor's server on 127.0.0.1 (no other address) and prints its URL,\n"
            "http://127.0.0.1:PORT/?token=TOKEN, as the first line; open it in a browser (the\n"
            "token, new at each start, is what lets the page use the project). Every change the\n"
            "page makes is stored in the project folder before the server answers it. SIGINT\n"
            "(Ctrl+C) or SIGTERM stops the server.\n"
            "  (nothing)    the scratch project ${XDG_DATA_HOME:-~/.local/share}/marionette/\n"
            "               scratch (made when missing) with the built-in stick figure\n"
            "  PROJECT_DIR  that folder: the sequence named by its editor.json, else its first\n"
            "               sequence document, else sequence.json\n"
            "  FIGURE       a .skel, .bvh, .urdf, .gltf or .glb file: its folder is the project,\n"
            "               the sequence STEM.sequence.json\n"
            "  --port N     the port (default 8765; 0 picks a free one)\n"
            "  --assets DIR the page's files (default: $MARIONETTE_EDITOR_ASSETS, then\n"
            "               share/marionette/editor beside the command, then the build tree's\n"
            "               web/editor/dist, made by `make web`)\n"
            "  --json       the first line is one JSON object instead of the URL: url, port,\n"
            "               token, project (the folder, absolute), figure and sequence (the\n"
            "               project paths opened first, null when found later)\n");
}

static int is_dir(const char* p) {
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* mkdir -p */
static int make_dirs(const char* path) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
    for (char* p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* The page's folder: the first of the places docs/editor-server.md lists that is a folder;
 * tried[] names them all. */
static const char* find_assets(const char* given, char* buf, size_t cap, char* tried, size_t tcap) {
    const char* cands[4] = {given, getenv("MARIONETTE_EDITOR_ASSETS"), NULL, NULL};
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char installed[4200] = "";
    if (n > 0) {
        exe[n] = 0;
        char* slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(installed, sizeof installed, "%s/../share/marionette/editor", exe);
        cands[2] = installed;
    }
#ifdef MN_EDITOR_BUILD_ASSETS
    cands[3] = MN_EDITOR_BUILD_ASSETS;
#endif
    tried[0] = 0;
    for (int i = 0; i < 4; i++) {
        if (!cands[i] || !cands[i][0]) continue;
        if (is_dir(cands[i])) {
            snprintf(buf, cap, "%s", cands[i]);
            return buf;
        }
        size_t t = strlen(tried);
        snprintf(tried + t, tcap - t, "%s%s", t ? ", " : "", cands[i]);
    }
    return NULL;
}

typedef struct editor_args {
    const char* assets;
    int port, json;
} editor_args;

#define AT(f, t) MN_CLI_AT(editor_args, f, t)
static const mn_cli_opt editor_opts[] = {
    {"--json", MN_CLI_FLAG, AT(json, int), .lo = 1},
    {"--port", MN_CLI_INT, AT(port, int), 0, 65535, .bad = "--port needs a number from 0 to 65535"},
    {"--assets", MN_CLI_STRING, AT(assets, const char*), .bad = NULL},
};
#undef AT
const mn_cli_table mn_cmd_editor_options = {
    .cmd = "editor",
    MN_CLI_OPTS(editor_opts),
    .unknown = "unknown option '%s'",
    .missing = "unknown option '%s'",
    .max_pos = 1,
    .too_many = "too many arguments",
};

int mn_cmd_editor(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    const char* target = NULL;
    editor_args args = {NULL, 8765, 0};
    int bad = mn_cli_parse(&mn_cmd_editor_options, argc, argv, &args, &target, NULL);
    if (bad) return bad;
    const char* assets = args.assets;
    int port = args.port, json = args.json;
    if (assets && !is_dir(assets))
        return mn_cli_usage_error("editor", "--assets %s: not a folder", mn_cli_safe(assets));
    char project[4096], figure[300] = "", sequence[300] = "";
    if (!target) {
        const char* xdg = getenv("XDG_DATA_HOME");
        const char* home = getenv("HOME");
        if (xdg && xdg[0] == '/')
            snprintf(project, sizeof project, "%s/marionette/scratch", xdg);
        else if (home && home[0])
            snprintf(project, sizeof project, "%s/.local/share/marionette/scratch", home);
        else
            return mn_cli_usage_error("editor", "no HOME: name a project folder");
        if (make_dirs(project) != 0) {
            fprintf(stderr, "marionette editor: %s: cannot make the scratch project: %s\n",
                    mn_cli_safe(project), strerror(errno));
            return MN_EXIT_INPUT;
        }
    } else if (is_dir(target)) {
        snprintf(project, sizeof project, "%s", target);
    } else {
        struct stat st;
        if (stat(target, &st) != 0 || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "marionette editor: %s: no such figure file or project folder\n",
                    mn_cli_safe(target));
            return MN_EXIT_INPUT;
        }
        if (mn_file_kind_of(target) == MN_FILE_UNKNOWN) {
            fprintf(stderr,
                    "marionette editor: %s: not a figure file (.skel, .bvh, .urdf, .gltf, .glb) "
                    "nor a folder\n",
                    mn_cli_safe(target));
            return MN_EXIT_INPUT;
        }
        const char* slash = strrchr(target, '/');
        const char* base = slash ? slash + 1 : target;
        if (slash)
            snprintf(project, sizeof project, "%.*s", (int)(slash - target + (slash == target)),
                     target);
        else
            snprintf(project, sizeof project, ".");
        snprintf(figure, sizeof figure, "%s", base);
        const char* dot = strrchr(base, '.');
        snprintf(sequence, sizeof sequence, "%.*s.sequence.json",
                 (int)(dot && dot != base ? dot - base : (long)strlen(base)), base);
    }
    char abuf[4096], tried[8192];
    const char* found = find_assets(assets, abuf, sizeof abuf, tried, sizeof tried);
    ed_server sv;
    char why[4200];
    if (ed_server_init(&sv, project, found, figure[0] ? figure : NULL,
                       sequence[0] ? sequence : NULL, port, why, sizeof why) != 0) {
        fprintf(stderr, "marionette editor: %s\n", mn_cli_safe(why));
        return MN_EXIT_INPUT;
    }
    if (!found) {
        free(sv.assets_tried);
        sv.assets_tried = strdup(tried[0] ? tried : "no folder");
        fprintf(stderr,
                "marionette editor: the page's files were not found (tried %s): build them "
                "with `make web` or name them with --assets DIR; the API is served meanwhile\n",
                mn_cli_safe(tried));
    }
    sv.json = json;
    int rc = sv.assets_tried ? ed_serve(&sv, port) : MN_EXIT_INPUT;
    ed_server_free(&sv);
    return rc;
}
