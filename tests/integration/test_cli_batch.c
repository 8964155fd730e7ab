/* `marionette convert` and `marionette retarget` over many inputs (--out-dir, -j): every
 * good file written as the one-file command writes it, a bad file reported and skipped,
 * the summary and the exit status, the progress bar on a terminal; a batch run again
 * redoes nothing (outputs newer than their input), --force redoes all, and Ctrl-C stops it
 * with "interrupted: N of M done", leaving N whole files that the next run keeps. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define TAKES                                                                                      \
    "'" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' '" MN_DATA                           \
    "/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh' '" MN_DATA                              \
    "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh' '" MN_DATA                                  \
    "/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh'"
static const char* const stems[4] = {"cmu_02_01_walk", "cmu_01_01_forward_jumps",
                                     "cmu_131_01_start_walk_stop", "cmu_131_03_start_hop_stop"};
static const int frames[4] = {344, 2752, 994, 1102};

static int run_cli(const char* args, char** out, char** err) {
    return mn_test_run_program(MN_CLI, args, out, err);
}

/* A truncated take: the batch reports it and goes on. */
static const char broken[] = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n";

static void test_convert_many(void) {
    char bad[256], dir[512], args[8192], *out, *err;
    snprintf(bad, sizeof bad, "%s", mn_test_write_temp(".bvh", broken, sizeof broken - 1));
    snprintf(dir, sizeof dir, "%s/converted", mn_test_temp_dir());
    /* the bad file in the middle: the ones after it are converted too */
    snprintf(args, sizeof args,
             "convert %s '%s' '" MN_DATA
             "/mocap/other_skeleton/Boxing_Toes.bvh' --out-dir '%s' -j 2",
             TAKES, bad, dir);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(out && out[0] == 0); /* nothing on stdout */
    CHECK(err && strstr(err, "5 of 6 files written") && strstr(err, "1 failed:") &&
          strstr(err, "2 workers"));
    /* the failure, why (file, line, field), in the summary and in its own line */
    char why[600];
    snprintf(why, sizeof why, "%s: %s:5: HIERARCHY: file ends inside joint 'Hips'", bad, bad);
    CHECK(err && strstr(err, why));
    snprintf(why, sizeof why, "FAILED %s:", bad);
    CHECK(err && strstr(err, why));
    CHECK(err && strstr(err, "ok " MN_DATA "/mocap/other_skeleton/Boxing_Toes.bvh -> "));
    free(out), free(err);
    /* every good take is there, as the one-file command writes it */
    for (int k = 0; k < 4; k++) {
        char path[700], one[300];
        snprintf(path, sizeof path, "%s/%s.bvh", dir, stems[k]);
        mn_model* m = NULL;
        mn_motion mo;
        mn_error e;
        CHECK(mn_bvh_read(path, NULL, &m, &mo, NULL, &e) == MN_OK);
        CHECK(mo.nframes == frames[k]);
        mn_motion_free(&mo);
        mn_model_destroy(m);
        if (k == 0) {
            snprintf(one, sizeof one, "%s", mn_test_write_temp(".bvh", "", 0));
            snprintf(args, sizeof args,
                     "convert '" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' '%s'", one);
            CHECK(run_cli(args, &out, &err) == 0);
            free(out), free(err);
            size_t n1, n2;
            char* a = mn_test_read_file(path, &n1);
            char* b = mn_test_read_file(one, &n2);
            CHECK(a && b && n1 == n2 && memcmp(a, b, n1) == 0);
            free(a), free(b);
        }
    }
    char nothing[700];
    snprintf(nothing, sizeof nothing, "%s/%s", dir, strrchr(bad, '/') + 1);
    CHECK(access(nothing, F_OK) != 0); /* no half-written file for the bad one */
    /* all good, one worker, to glb: exit 0 */
    snprintf(args, sizeof args, "convert %s --out-dir '%s/glb' --format glb -j 1", TAKES,
             mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 0);
    CHECK(err && strstr(err, "4 of 4 files written") && strstr(err, "1 worker") &&
          !strstr(err, "failed"));
    free(out), free(err);
    char glb[700];
    snprintf(glb, sizeof glb, "%s/glb/cmu_02_01_walk.glb", mn_test_temp_dir());
    CHECK(access(glb, F_OK) == 0);
    /* usage errors: two inputs of one name, a bad -j, --to without --out-dir */
    snprintf(args, sizeof args, "convert %s %s --out-dir '%s'", TAKES, TAKES, dir);
    CHECK(run_cli(args, &out, &err) == 2 && err && strstr(err, "would both write"));
    free(out), free(err);
    snprintf(args, sizeof args, "convert %s --out-dir '%s' -j 0", TAKES, dir);
    CHECK(run_cli(args, &out, &err) == 2);
    free(out), free(err);
    CHECK(run_cli("convert stickman x.bvh --to glb", &out, &err) == 2);
    free(out), free(err);
    CHECK(run_cli("convert stickman x.bvh --force", &out, &err) == 2 && err &&
          strstr(err, "--force go with --out-dir"));
    free(out), free(err);
    /* the old spelling --to still works for one release, with a note */
    snprintf(args, sizeof args,
             "convert '" MN_DATA "/robots/ur5/ur5_robot.urdf' --out-dir '%s/old' --to skel",
             mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "note: --to is now --format") &&
          strstr(err, "1 of 1 files written"));
    free(out), free(err);
    /* an output folder that cannot be made: exit 1, said why */
    snprintf(args, sizeof args, "convert %s --out-dir /proc/nope/out", TAKES);
    CHECK(run_cli(args, &out, &err) == 1 && err && strstr(err, "output folder"));
    free(out), free(err);
}

/* On a terminal: a progress bar with the rate and the time left (run under script(1),
 * which gives the command a pseudo-terminal; skipped where it is missing). */
static void test_progress_on_terminal(void) {
    if (system("command -v script > /dev/null 2>&1") != 0) {
        printf("  script(1) not found: the terminal progress bar is not checked\n");
        return;
    }
    char log[300], cmd[8192];
    snprintf(log, sizeof log, "%s", mn_test_write_temp(".log", "", 0));
    snprintf(
        cmd, sizeof cmd,
        "script -qec \"'%s' convert %s --out-dir '%s/tty' -j 2\" '%s' > /dev/null 2>&1 < /dev/null",
        MN_CLI, TAKES, mn_test_temp_dir(), log);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char* text = mn_test_read_file(log, NULL);
    CHECK(text && strstr(text, "] 4/4 files, ") && strstr(text, " files/s, ") &&
          strstr(text, " left") && strstr(text, "\r["));
    CHECK(text && !strstr(text, "ok /")); /* the bar, not the plain lines */
    free(text);
}

static void test_retarget_many(void) {
    char bad[256], dir[512], args[8192], *out, *err;
    snprintf(bad, sizeof bad, "%s", mn_test_write_temp(".bvh", broken, sizeof broken - 1));
    snprintf(dir, sizeof dir, "%s/retargeted", mn_test_temp_dir());
    snprintf(args, sizeof args,
             "retarget '%s' '" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' '" MN_DATA
             "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh' --to stickman --out-dir '%s'",
             bad, dir);
    CHECK(run_cli(args, &out, &err) == 1);
    CHECK(out && out[0] == 0); /* no key=value lines in a batch */
    CHECK(err && strstr(err, "2 of 3 files written") && strstr(err, "1 failed:") &&
          strstr(err, "HIERARCHY: file ends inside joint"));
    free(out), free(err);
    for (int k = 0; k < 2; k++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s.bvh", dir, k ? "cmu_131_01_start_walk_stop" : stems[0]);
        mn_model* m = NULL;
        mn_motion mo;
        mn_error e;
        CHECK(mn_bvh_read(path, NULL, &m, &mo, NULL, &e) == MN_OK);
        CHECK(mo.nframes == (k ? 994 : 344));
        CHECK(m && mn_model_find_joint(m, "left_knee") >= 0); /* the stick figure */
        mn_motion_free(&mo);
        mn_model_destroy(m);
    }
    /* usage: many sources without --out-dir */
    snprintf(args, sizeof args, "retarget %s --to stickman --out x.bvh", TAKES);
    CHECK(run_cli(args, &out, &err) == 2 && err && strstr(err, "--out-dir"));
    free(out), free(err);
}

static struct timespec mtime_of(const char* path) {
    struct stat st;
    struct timespec none = {0, 0};
    return stat(path, &st) == 0 ? st.st_mtim : none;
}

static int same_time(struct timespec a, struct timespec b) {
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec && a.tv_sec != 0;
}

/* Run again, a batch redoes nothing; an input made newer than its output is redone; --force
 * redoes everything. */
static void test_resume(void) {
    char fresh[300], dir[512], args[8192], *out, *err, outs[5][1024];
    size_t n;
    char* walk = mn_test_read_file(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", &n);
    CHECK(walk != NULL);
    if (!walk) return;
    snprintf(fresh, sizeof fresh, "%s", mn_test_write_temp(".bvh", walk, n));
    free(walk);
    snprintf(dir, sizeof dir, "%s/resumed", mn_test_temp_dir());
    snprintf(args, sizeof args, "convert %s '%s' --out-dir '%s' -j 2", TAKES, fresh, dir);
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "5 of 5 files written") &&
          !strstr(err, "up to date"));
    free(out), free(err);
    struct timespec t[5];
    for (int k = 0; k < 5; k++) {
        char stem[300];
        snprintf(stem, sizeof stem, "%s", k < 4 ? stems[k] : strrchr(fresh, '/') + 1);
        if (k == 4) *strrchr(stem, '.') = 0;
        snprintf(outs[k], sizeof outs[k], "%s/%s.bvh", dir, stem);
        t[k] = mtime_of(outs[k]);
        CHECK(t[k].tv_sec != 0);
    }
    /* again: nothing redone, every output as it was */
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "0 of 5 files written") &&
          strstr(err, "; 5 up to date, not redone (--force redoes them)"));
    char line[2400];
    snprintf(line, sizeof line, "up to date %s -> %s\n", fresh, outs[4]);
    CHECK(err && strstr(err, line));
    free(out), free(err);
    for (int k = 0; k < 5; k++)
        CHECK(same_time(t[k], mtime_of(outs[k])));
    /* the fresh input changed after its output was written: that one is redone */
    struct timespec later[2] = {{0, UTIME_OMIT}, {t[4].tv_sec + 100, 0}};
    CHECK(utimensat(AT_FDCWD, fresh, later, 0) == 0);
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "1 of 5 files written") &&
          strstr(err, "; 4 up to date"));
    free(out), free(err);
    CHECK(!same_time(t[4], mtime_of(outs[4])));
    for (int k = 0; k < 4; k++)
        CHECK(same_time(t[k], mtime_of(outs[k])));
    /* --force: all of them */
    snprintf(args, sizeof args, "convert %s '%s' --out-dir '%s' -j 2 --force", TAKES, fresh, dir);
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "5 of 5 files written") &&
          !strstr(err, "up to date"));
    free(out), free(err);
    for (int k = 0; k < 4; k++)
        CHECK(!same_time(t[k], mtime_of(outs[k])));
    /* retarget resumes the same way */
    snprintf(args, sizeof args,
             "retarget '" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' --to stickman "
             "--out-dir '%s/rt'",
             mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "1 of 1 files written"));
    free(out), free(err);
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "0 of 1 files written") &&
          strstr(err, "1 up to date"));
    free(out), free(err);
    strcat(args, " --force");
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "1 of 1 files written"));
    free(out), free(err);
    /* an output is made from the target figure too: a newer target redoes it */
    snprintf(fresh, sizeof fresh, "%s", mn_test_write_temp(".bvh", "", 0));
    walk = mn_test_read_file(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", &n);
    FILE* tf = fopen(fresh, "wb");
    CHECK(walk && tf && fwrite(walk, 1, n, tf) == n);
    if (tf) fclose(tf);
    free(walk);
    snprintf(args, sizeof args,
             "retarget '" MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh' --to '%s' "
             "--out-dir '%s/rt2'",
             fresh, mn_test_temp_dir());
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "1 of 1 files written"));
    free(out), free(err);
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "1 up to date"));
    free(out), free(err);
    struct timespec now[2] = {{0, UTIME_OMIT}, {time(NULL) + 100, 0}};
    CHECK(utimensat(AT_FDCWD, fresh, now, 0) == 0);
    CHECK(run_cli(args, &out, &err) == 0 && err && strstr(err, "1 of 1 files written") &&
          !strstr(err, "up to date"));
    free(out), free(err);
}

/* Ctrl-C in the middle of a batch: the files being written are finished, no other is
 * started, "interrupted: N of M done" on a line of its own, exit status 130; the folder
 * holds N whole files and the next run does only the rest. */
static void test_interrupt(void) {
    enum { M = 80 };
    char in[512], dir[512], path[1024];
    snprintf(in, sizeof in, "%s/takes", mn_test_temp_dir());
    snprintf(dir, sizeof dir, "%s/interrupted", mn_test_temp_dir());
    CHECK(mkdir(in, 0700) == 0);
    char* argv[M + 8];
    int argc = 0;
    argv[argc++] = (char*)MN_CLI;
    argv[argc++] = (char*)"convert";
    static char names[M][700];
    for (int k = 0; k < M; k++) {
        snprintf(names[k], sizeof names[k], "%s/take%02d.bvh", in, k);
        CHECK(symlink(MN_DATA "/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh", names[k]) ==
              0);
        argv[argc++] = names[k];
    }
    argv[argc++] = (char*)"--out-dir";
    argv[argc++] = dir;
    argv[argc++] = (char*)"--format";
    argv[argc++] = (char*)"glb";
    argv[argc++] = (char*)"-j1";
    argv[argc] = NULL;
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        execv(MN_CLI, argv);
        _exit(127);
    }
    close(fds[1]);
    /* read stderr; at the first finished file, interrupt */
    char text[65536];
    size_t len = 0;
    int sent = 0;
    for (;;) {
        ssize_t r = read(fds[0], text + len, sizeof text - 1 - len);
        if (r <= 0) break;
        len += (size_t)r;
        text[len] = 0;
        if (!sent && strstr(text, "ok ")) {
            kill(pid, SIGINT);
            sent = 1;
        }
    }
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(sent && WIFEXITED(st) && WEXITSTATUS(st) == 130);
    const char* line = strstr(text, "\ninterrupted: ");
    int done = -1, of = -1;
    CHECK(line && sscanf(line, "\ninterrupted: %d of %d done\n", &done, &of) == 2);
    CHECK(of == M && done >= 1 && done < M);
    /* N whole files in the folder, nothing else (no temporary left by a writer) */
    int files = 0, whole = 0;
    DIR* d = opendir(dir);
    struct dirent* e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        files++;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        mn_model* m = NULL;
        mn_motion mo;
        mn_error er;
        if (mn_figure_read(path, &m, &mo, NULL, &er) == MN_OK && mo.nframes > 600) whole++;
        mn_motion_free(&mo);
        mn_model_destroy(m);
    }
    if (d) closedir(d);
    CHECK(files == done && whole == done);
    /* the next run does the rest only */
    char args[65536], *out, *err, want[64];
    size_t at = (size_t)snprintf(args, sizeof args, "convert");
    for (int k = 0; k < M; k++)
        at += (size_t)snprintf(args + at, sizeof args - at, " '%s'", names[k]);
    snprintf(args + at, sizeof args - at, " --out-dir '%s' --format glb -j 2", dir);
    CHECK(run_cli(args, &out, &err) == 0);
    snprintf(want, sizeof want, "%d of %d files written", M - done, M);
    CHECK(err && strstr(err, want));
    snprintf(want, sizeof want, "; %d up to date", done);
    CHECK(err && strstr(err, want));
    free(out), free(err);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_convert_many);
    RUN(test_progress_on_terminal);
    RUN(test_retarget_many);
    RUN(test_resume);
    RUN(test_interrupt);
    return mn_test_report();
}
