/* Many inputs, one output folder, every core: the runner behind `convert` and `retarget`
 * when they are given several inputs (docs/batch.md). */
#ifndef MN_CLI_BATCH_H
#define MN_CLI_BATCH_H

#include <marionette/base.h>

/* One job: reads in, writes out; on failure returns the status with err set. Called from
 * several threads at once: it must touch no shared state (each call has its own data). */
typedef mn_status (*mn_cli_job)(const char* in, const char* out, void* ctx, mn_error* err);

/* Runs job over inputs[0..n) with jobs threads (<= 0: one per core), writing
 * out_dir/<input's base name without extension><ext>, creating out_dir. An output newer
 * than its input and than every file of deps (NULL, or a NULL-terminated list of the other
 * files every output is made from: a target figure, a map) is up to date and not redone (a
 * batch resumes where it stopped) unless force. On a terminal (stderr) a progress bar with the rate
 * and the time left, else one line per file; then a summary of the failures and why. Two inputs
 * with the same base name are a usage error (one would overwrite the other). SIGINT or SIGTERM
 * stops the batch after the files being written (each written whole or not at all) and prints
 * "interrupted: N of M done" on a line of its own. Returns the exit status: 0 when every
 * file converted (or was up to date), 1 when any failed, 2 for a usage error, 130 when
 * interrupted. */
int mn_cli_batch(const char* cmd, char** inputs, int n, const char* out_dir, const char* ext,
                 int jobs, int force, const char* const* deps, mn_cli_job job, void* ctx);

#endif
