/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "macro.h"
#include "process-util.h"

int spawn_process(const char *path, char *const argv[], const SpawnOptions *o, pid_t *ret_pid) {
        extern char **environ;
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int r;

        assert(path);
        assert(argv);
        assert(ret_pid);

        r = posix_spawn_file_actions_init(&fa);
        if (r != 0)
                return -r;
        if (o && o->stdout_fd > 0)
                r = posix_spawn_file_actions_adddup2(&fa, o->stdout_fd, STDOUT_FILENO);
        if (r == 0 && o && o->stderr_fd > 0)
                r = posix_spawn_file_actions_adddup2(&fa, o->stderr_fd, STDERR_FILENO);
        if (r == 0 && o && o->stderr_to_null)
                r = posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        if (r == 0)
                r = (o && o->search_path ? posix_spawnp : posix_spawn)(&pid, path, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                return -r;
        *ret_pid = pid;
        return 0;
}

int wait_process(pid_t pid, int *ret_status) {
        int status;

        assert(pid > 0);

        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        if (ret_status)
                *ret_status = status;
        return 0;
}

int spawn_and_wait(const char *path, char *const argv[], const SpawnOptions *o, int *ret_status) {
        pid_t pid;
        int r;

        r = spawn_process(path, argv, o, &pid);
        if (r < 0)
                return r;
        return wait_process(pid, ret_status);
}

bool wait_status_ok(int status) {
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
