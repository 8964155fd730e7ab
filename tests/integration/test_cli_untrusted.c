/* The `marionette` command on hostile inputs and outputs, each a small file generated here
 * (in the test's temporary folder): every command must refuse cleanly, naming the file,
 * within bounded memory, time and output, and never write a lie or half a set. */
#include <marionette/io.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define CYL MN_DATA "/meshseq/cylinder"

/* Runs the CLI with args (a shell-quoted string); captures stdout and stderr separately
 * (each NULL-safe, malloc'd). */
static int run_cli(const char* args, char** out, char** err) {
    char opath[600], epath[600];
    snprintf(opath, sizeof opath, "%s", mn_test_write_temp(".out", "", 0));
    snprintf(epath, sizeof epath, "%s", mn_test_write_temp(".err", "", 0));
    size_t cap = strlen(args) + 2048;
    char* cmd = malloc(cap);
    if (!cmd) return -1;
    snprintf(cmd, cap, "'%s' %s > '%s' 2> '%s' < /dev/null", MN_CLI, args, opath, epath);
    int st = system(cmd);
    free(cmd);
    *out = mn_test_read_file(opath, NULL);
    *err = mn_test_read_file(epath, NULL);
    if (!*out) *out = calloc(1, 1);
    if (!*err) *err = calloc(1, 1);
    remove(opath);
    remove(epath);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char tdir[600];

/* A path in this test's folder (made on first use); 16 slots reused in turn. */
static const char* tpath(const char* name) {
    static char p[16][800];
    static int slot;
    if (!tdir[0]) {
        snprintf(tdir, sizeof tdir, "%s/cli", mn_test_temp_dir());
        CHECK(mkdir(tdir, 0700) == 0);
    }
    slot = (slot + 1) % 16;
    snprintf(p[slot], sizeof p[slot], "%s/%s", tdir, name);
    return p[slot];
}

static const char* put(const char* name, const char* text) {
    const char* p = tpath(name);
    FILE* f = fopen(p, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return p;
}

/* ---- writers ------------------------------------------------------------------------- */

static void test_fit_tmat_unique_and_outputs(void) {
    char* out;
    char* err;
    char args[4096];
    CHECK(mkdir(tpath("tmat"), 0700) == 0);
    /* two frames with one base name would write one Tmat: refused, nothing written */
    snprintf(args, sizeof args,
             "fit --rig %s/cylinder.obj --tmat '%s' --frames %s/poses-1/cylinder-1.obj "
             "%s/poses-1/cylinder-1.obj",
             CYL, tpath("tmat"), CYL, CYL);
    CHECK(run_cli(args, &out, &err) == 1 && strstr(err, "cylinder-1.Tmat") &&
          strstr(err, "written twice"));
    CHECK(access(tpath("tmat/cylinder-1.Tmat"), F_OK) != 0);
    free(out);
    free(err);
    /* distinct names: the whole set */
    snprintf(args, sizeof args,
             "fit --rig %s/cylinder.obj --tmat '%s' --out '%s' --frames %s/poses-1/cylinder-1.obj "
             "%s/poses-1/cylinder-2.obj",
             CYL, tpath("tmat"), tpath("tmat/fit.txt"), CYL, CYL);
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(access(tpath("tmat/cylinder-1.Tmat"), F_OK) == 0 &&
          access(tpath("tmat/cylinder-2.Tmat"), F_OK) == 0 &&
          access(tpath("tmat/fit.txt"), F_OK) == 0);
    free(out);
    free(err);
    /* an output that is a symlink: refused and left as it was, and no Tmat replaced */
    put("tmat/target.txt", "TARGET");
    CHECK(symlink("target.txt", tpath("tmat/link.txt")) == 0);
    put("tmat/cylinder-1.Tmat", "OLD");
    snprintf(args, sizeof args,
             "fit --rig %s/cylinder.obj --tmat '%s' --out '%s' --frames %s/poses-1/cylinder-1.obj",
             CYL, tpath("tmat"), tpath("tmat/link.txt"), CYL);
    CHECK(run_cli(args, &out, &err) == 1 && strstr(err, "link.txt") &&
          strstr(err, "symbolic link"));
    char* t = mn_test_read_file(tpath("tmat/target.txt"), NULL);
    CHECK(t && !strcmp(t, "TARGET"));
    free(t);
    t = mn_test_read_file(tpath("tmat/cylinder-1.Tmat"), NULL);
    CHECK(t && !strcmp(t, "OLD"));
    free(t);
    struct stat st;
    CHECK(lstat(tpath("tmat/link.txt"), &st) == 0 && S_ISLNK(st.st_mode));
    free(out);
    free(err);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_fit_tmat_unique_and_outputs);
    return mn_test_report();
}
