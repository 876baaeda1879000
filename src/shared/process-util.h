/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Running a helper program and waiting for it: the one place where foyer programs start children.
 * posix_spawn() reports a failed exec (e.g. -ENOENT) to the caller instead of a child exit code. */

#include <stdbool.h>
#include <sys/types.h>

typedef struct SpawnOptions {
        bool search_path;       /* look path up in $PATH (posix_spawnp) */
        int stdout_fd;          /* > 0: becomes the child's stdout (STDERR_FILENO: join stderr) */
        bool stderr_to_null;    /* the child's stderr goes to /dev/null */
        int stderr_fd;          /* > 0: becomes the child's stderr (not with stderr_to_null) */
} SpawnOptions;

/* Starts path with argv and the current environment; returns 0 and the pid, or a negative errno. */
int spawn_process(const char *path, char *const argv[], const SpawnOptions *o, pid_t *ret_pid);
/* Waits for pid (retrying on EINTR); returns 0 and the wait status, or a negative errno. */
int wait_process(pid_t pid, int *ret_status);
/* spawn_process() and wait_process() in one. Callers that must know the pid while the child runs
 * (the builder's signal cleanup, a pipe to read) use the two halves. */
int spawn_and_wait(const char *path, char *const argv[], const SpawnOptions *o, int *ret_status);
/* Whether a wait status is a normal exit with status 0. */
bool wait_status_ok(int status);
