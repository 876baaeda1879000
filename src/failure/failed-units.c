/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <sys/wait.h>

#include "failed-units.h"
#include "fileio.h"
#include "strv.h"
#include "unit-name.h"

FailureKind failure_kind_from_unit(const char *unit) {
        if (!unit || !unit_name_is_valid(unit))
                return _FAILURE_KIND_INVALID;
        if (streq(unit, "systemd-fsck-root.service") || streq(unit, "systemd-fsck-usr.service") ||
            (startswith(unit, "systemd-fsck@") && endswith(unit, ".service")))
                return FAILURE_FSCK;
        if (startswith(unit, "systemd-cryptsetup@") && endswith(unit, ".service"))
                return FAILURE_UNLOCK;
        if (endswith(unit, ".mount"))
                return FAILURE_MOUNT;
        return FAILURE_OTHER;
}

int failed_units_parse(const char *text, char ***ret) {
        _cleanup_strv_free_ char **units = NULL;
        const char *p = text;

        units = calloc(1, sizeof(char *));
        if (!units)
                return -ENOMEM;
        while (p && *p) {
                size_t len = strcspn(p, "\n");
                const char *line_end = p + len;

                /* The first word on the line that is a unit name; status marks come before it. */
                for (const char *w = p; w < line_end;) {
                        size_t wl;

                        w += strspn(w, " \t");
                        wl = strcspn(w, " \t\n");
                        if (wl == 0)
                                break;
                        _cleanup_free_ char *word = strndup(w, wl);
                        if (!word)
                                return -ENOMEM;
                        if (unit_name_is_valid(word)) {
                                if (!strv_contains(units, word) && strv_consume(&units, TAKE_PTR(word)) < 0)
                                        return -ENOMEM;
                                break;
                        }
                        w += wl;
                }
                p = *line_end ? line_end + 1 : line_end;
        }
        *ret = TAKE_PTR(units);
        return 0;
}

int run_capture(char *const argv[], char **ret) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int pipefd[2], status, r = 0;
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0) {
                r = negative_errno();
                close(pipefd[0]);
                close(pipefd[1]);
                return r;
        }
        if (pid == 0) {
                if (dup2(pipefd[1], STDOUT_FILENO) < 0)
                        _exit(127);
                execvp(argv[0], argv);
                _exit(127);
        }
        close(pipefd[1]);

        f = fdopen(pipefd[0], "r");
        if (!f) {
                r = negative_errno();
                close(pipefd[0]);
        } else {
                FILE *out = open_memstream(&buf, &size);
                char chunk[4096];
                size_t n;

                if (!out)
                        r = -ENOMEM;
                else {
                        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                                fwrite(chunk, 1, n, out);
                        if (fclose(out) != 0)
                                r = -ENOMEM;
                }
        }
        /* Always reap the child, even if reading failed. */
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return r < 0 ? r : negative_errno();
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -EPROTO;
        *ret = TAKE_PTR(buf);
        return 0;
}

int failed_units_get(char ***ret) {
        char *argv[] = { (char *) "systemctl", (char *) "list-units", (char *) "--failed", (char *) "--plain",
                         (char *) "--no-legend", (char *) "--full", (char *) "--no-pager", NULL };
        _cleanup_free_ char *out = NULL;
        int r;

        r = run_capture(argv, &out);
        if (r < 0)
                return r;
        return failed_units_parse(out, ret);
}

int unit_get_property(const char *unit, const char *property, char **ret) {
        char *argv[] = { (char *) "systemctl", (char *) "show", (char *) "-P", (char *) property,
                         (char *) "--", (char *) unit, NULL };
        char *out = NULL;
        int r;

        r = run_capture(argv, &out);
        if (r < 0)
                return r;
        out[strcspn(out, "\n")] = '\0';
        *ret = out;
        return 0;
}
