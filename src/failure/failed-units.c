/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>

#include "failed-units.h"
#include "fileio.h"
#include "process-util.h"
#include "strv.h"
#include "unit-name.h"

#define STRLEN(x) (sizeof(x) - 1)

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

        assert(text);
        assert(ret);

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
        int pipefd[2], status, r = 0, k;
        pid_t pid;

        assert(argv);
        assert(ret);

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return negative_errno();
        r = spawn_process(argv[0], argv, &(SpawnOptions) { .search_path = true, .stdout_fd = pipefd[1] }, &pid);
        close(pipefd[1]);
        if (r < 0) {
                close(pipefd[0]);
                /* As before, when a forked child failed to exec: the command did not succeed. */
                return -EPROTO;
        }

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
        k = wait_process(pid, &status);
        if (r < 0)
                return r;
        if (k < 0)
                return k;
        if (!wait_status_ok(status))
                return -EPROTO;
        *ret = TAKE_PTR(buf);
        return 0;
}

int failed_units_get(char ***ret) {
        char *argv[] = { (char *) "systemctl", (char *) "list-units", (char *) "--failed", (char *) "--plain",
                         (char *) "--no-legend", (char *) "--full", (char *) "--no-pager", NULL };
        _cleanup_free_ char *out = NULL;
        int r;

        assert(ret);

        r = run_capture(argv, &out);
        if (r < 0)
                return r;
        return failed_units_parse(out, ret);
}

int log_tail_parse(const char *text, size_t max, char ***ret) {
        _cleanup_strv_free_ char **lines = NULL;
        size_t n = 0;

        lines = calloc(max + 1, sizeof(char *));
        if (!lines)
                return -ENOMEM;
        for (const char *p = text; p && *p;) {
                size_t len = strcspn(p, "\n");
                const char *next = p[len] ? p + len + 1 : p + len;
                char *line;

                while (len > 0 && strchr(" \t\r", p[len - 1]))
                        len--;
                if (len == 0 || max == 0) {
                        p = next;
                        continue;
                }
                /* Three bytes more than kept, so that a character across the cut is still whole. */
                _cleanup_free_ char *raw = strndup(p, MIN(len, (size_t) LOG_LINE_MAX + 3));
                if (!raw)
                        return -ENOMEM;
                /* Each byte that is not printable text (C0 and C1 controls, bytes of no valid UTF-8
                 * sequence) becomes a space: the same length, and nothing the console obeys. */
                line = string_escape_unprintable(raw, ' ');
                if (!line)
                        return -ENOMEM;
                /* Cut at a character boundary: what is left above ASCII is valid UTF-8 now. */
                if (strlen(line) > LOG_LINE_MAX) {
                        size_t cut = LOG_LINE_MAX;

                        while (cut > 0 && ((unsigned char) line[cut] & 0xc0) == 0x80)
                                cut--;
                        line[cut] = '\0';
                }
                /* What became spaces at the end is trailing blank too. */
                for (size_t k = strlen(line); k > 0 && line[k - 1] == ' '; k--)
                        line[k - 1] = '\0';
                if (isempty(line)) {
                        free(line);
                        p = next;
                        continue;
                }
                /* A window over the last max lines. */
                if (n == max) {
                        free(lines[0]);
                        memmove(lines, lines + 1, (max - 1) * sizeof(char *));
                        n--;
                }
                lines[n++] = line;
                lines[n] = NULL;
                p = next;
        }
        *ret = TAKE_PTR(lines);
        return 0;
}

int unit_log_tail(const char *unit, size_t max, char ***ret) {
        _cleanup_free_ char *match = strjoin("_SYSTEMD_UNIT=", unit), *out = NULL;

        assert(unit);
        assert(ret);

        char *argv[] = { (char *) "journalctl", (char *) "-b", (char *) "-q", (char *) "--no-pager", (char *) "-o",
                         (char *) "cat", match, NULL };
        int r;

        if (!match)
                return -ENOMEM;
        r = run_capture(argv, &out);
        if (r < 0)
                return r;
        return log_tail_parse(out, max, ret);
}

int unit_get_property(const char *unit, const char *property, char **ret) {
        assert(unit);
        assert(property);
        assert(ret);

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

int cryptsetup_unit_volume(const char *unit, char **ret) {
        _cleanup_free_ char *instance = NULL;
        const char *p, *e;

        assert(unit);
        assert(ret);

        if (failure_kind_from_unit(unit) != FAILURE_UNLOCK)
                return -EINVAL;
        p = startswith(unit, "systemd-cryptsetup@");
        e = unit + strlen(unit) - STRLEN(".service");
        if (e <= p)
                return -EINVAL;
        instance = strndup(p, e - p);
        if (!instance)
                return -ENOMEM;
        return unit_name_unescape(instance, ret);
}

int cryptsetup_exec_start_device(const char *exec_start, char **ret) {
        const char *p, *end;
        const char *words[4];
        size_t lens[4], n = 0;
        char *device;

        assert(ret);

        if (!exec_start)
                return -EINVAL;
        p = strstr(exec_start, "argv[]=");
        if (!p)
                return -EINVAL;
        p += STRLEN("argv[]=");
        /* The argument list ends at the " ; " before the next field; a command without it is cut off. */
        end = strstr(p, " ; ");
        if (!end)
                return -EINVAL;
        /* Only the first command: a later "{ … argv[]=" must not be read as part of this one. */
        if (strchr(exec_start, '}') && strchr(exec_start, '}') < p)
                return -EINVAL;
        while (n < ELEMENTSOF(words)) {
                p += strspn(p, " \t");
                if (p >= end)
                        break;
                words[n] = p;
                lens[n] = strcspn(p, " \t");
                if (p + lens[n] > end)
                        lens[n] = end - p;
                p += lens[n];
                n++;
        }
        if (n < 4)
                return -EINVAL;
        /* argv[0] is …/systemd-cryptsetup, argv[1] the verb. */
        if (lens[0] < STRLEN("systemd-cryptsetup") ||
            strncmp(words[0] + lens[0] - STRLEN("systemd-cryptsetup"), "systemd-cryptsetup", STRLEN("systemd-cryptsetup")) != 0 ||
            (lens[0] > STRLEN("systemd-cryptsetup") && words[0][lens[0] - STRLEN("systemd-cryptsetup") - 1] != '/'))
                return -EINVAL;
        if (lens[1] != STRLEN("attach") || strncmp(words[1], "attach", lens[1]) != 0)
                return -EINVAL;
        if (words[3][0] != '/' || lens[3] < 2)
                return -EINVAL;
        device = strndup(words[3], lens[3]);
        if (!device)
                return -ENOMEM;
        /* Printed for typing into a shell unquoted: only what /dev/disk/by-* paths usually hold. Others (a
         * by-label path with \x20 in it) are refused, and the caller falls back to a placeholder. */
        if (device[strspn(device, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._:+,=@-")] != 0) {
                free(device);
                return -EINVAL;
        }
        *ret = device;
        return 0;
}
