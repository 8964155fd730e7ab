/* libFuzzer target for the command line's argument parsing: the input is the arguments,
 * one a line, of `marionette info|fk|solve|pose|convert|fit`, run in a scratch folder that
 * holds a small BVH, URDF, scene and OBJ. An argument that names another folder (any '/')
 * or a number of more than 4 digits (a budget that would only make the run slow) skips the
 * input. Whatever the arguments, a command must return 0, 1 or 2, without a crash, a leak
 * or undefined behaviour. Seeds: fuzz/corpus/fuzz_cli/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static char top[96];

static void put(const char* name, const char* text) {
    FILE* f = fopen(name, "wb");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static void cleanup(void) {
    if (!top[0] || chdir("/") != 0) return;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    if (system(cmd) != 0) return;
}

static void setup(void) {
    const char* t = getenv("TMPDIR");
    snprintf(top, sizeof top, "%s/mn_fuzz_cli_XXXXXX", t && strlen(t) < 40 ? t : "/tmp");
    if (!mkdtemp(top) || chdir(top) != 0) abort();
    put("a.bvh",
        "HIERARCHY\nROOT hip\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
        "Zrotation "
        "Xrotation Yrotation\n JOINT knee\n {\n  OFFSET 0 -1 0\n  CHANNELS 3 Zrotation Xrotation "
        "Yrotation\n"
        "  End Site\n  {\n   OFFSET 0 -1 0\n  }\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.033\n"
        "0 0 0 0 0 0 10 0 0\n0 0 0 0 0 0 20 0 0\n");
    put("a.urdf", "<robot name=\"r\"><link name=\"l0\"/><link name=\"l1\"/><link name=\"l2\"/>"
                  "<joint name=\"j1\" type=\"revolute\"><parent link=\"l0\"/><child "
                  "link=\"l1\"/><axis xyz=\"0 0 1\"/>"
                  "<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>"
                  "<joint name=\"j2\" type=\"continuous\"><parent link=\"l1\"/><child link=\"l2\"/>"
                  "<origin xyz=\"0 0 1\"/><axis xyz=\"0 1 0\"/></joint></robot>\n");
    put("s.json",
        "{\"handles\": [{\"name\": \"h\", \"joint\": \"knee\"}], \"constraints\": "
        "[{\"name\": \"c\", \"type\": \"pin\", \"handle\": \"h\", \"target\": [0.5, -1, 0]}]}\n");
    put("a.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    /* the commands print: keep the fuzzer's own output readable */
    if (!freopen("/dev/null", "w", stdout)) abort();
    atexit(cleanup);
}

typedef int (*command_fn)(int, char**);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!top[0]) setup();
    if (size > 512) return 0;
    char* text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char* argv[17];
    int argc = 0;
    for (char* a = strtok(text, "\n"); a && argc < 16; a = strtok(NULL, "\n")) {
        int digits = 0, many = 0;
        for (const char* p = a; *p; p++) {
            digits = (*p >= '0' && *p <= '9') ? digits + 1 : 0;
            if (digits > 4) many = 1;
        }
        if (strchr(a, '/') || many) {
            free(text);
            return 0;
        }
        argv[argc++] = a;
    }
    argv[argc] = NULL;
    static const struct {
        const char* name;
        command_fn run;
    } commands[] = {{"info", mn_cmd_info}, {"fk", mn_cmd_fk},           {"solve", mn_cmd_solve},
                    {"pose", mn_cmd_pose}, {"convert", mn_cmd_convert}, {"fit", mn_cmd_fit}};
    for (size_t i = 0; argc > 0 && i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[0], commands[i].name)) {
            int rc = commands[i].run(argc, argv);
            if (rc < 0 || rc > 2) abort();
            break;
        }
    free(text);
    return 0;
}
