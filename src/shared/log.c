/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static int log_max_level = LOG_INFO;
static LogTarget log_target = LOG_TARGET_CONSOLE;
static int kmsg_fd = -EBADF;
static const char *log_prefix = NULL;

void log_set_prefix(const char *prefix) {
        log_prefix = prefix;
}

void log_set_max_level(int level) {
        log_max_level = level;
}

int log_get_max_level(void) {
        return log_max_level;
}

void log_set_target(LogTarget target) {
        log_target = target;
}

int log_level_from_string(const char *s) {
        static const char *const names[] = {
                "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
        };
        if (isempty(s))
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (streq(s, names[i]))
                        return (int) i;
        if (streq(s, "error"))
                return LOG_ERR;
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        return -EINVAL;
}

void log_parse_environment(void) {
        const char *e;

        e = getenv("SYSTEMD_LOG_LEVEL");
        if (e) {
                int l = log_level_from_string(e);
                if (l >= 0)
                        log_max_level = l;
        }
        e = getenv("SYSTEMD_LOG_TARGET");
        if (e) {
                if (streq(e, "console") || streq(e, "console-prefixed"))
                        log_target = LOG_TARGET_CONSOLE;
                else if (streq(e, "kmsg"))
                        log_target = LOG_TARGET_KMSG;
                else if (streq(e, "auto"))
                        log_target = LOG_TARGET_AUTO;
        }
}

void log_open(void) {
        LogTarget t = log_target;

        /* At boot PID 1 starts generators with stdout/stderr on /dev/null or the journal stream, and
         * journald is not running yet: the kernel log is the only place a message survives. systemd 252
         * runs generators from a forked executor (so their parent is not PID 1) and sets $SYSTEMD_SCOPE
         * for them. */
        if (t == LOG_TARGET_AUTO)
                t = ((getppid() == 1 || getenv("SYSTEMD_SCOPE")) && !isatty(STDERR_FILENO)) ? LOG_TARGET_KMSG
                                                                                           : LOG_TARGET_CONSOLE;

        if (t == LOG_TARGET_KMSG && kmsg_fd < 0)
                kmsg_fd = open("/dev/kmsg", O_WRONLY | O_NOCTTY | O_CLOEXEC);
        log_target = t;
}

void log_close(void) {
        if (kmsg_fd >= 0)
                close(kmsg_fd);
        kmsg_fd = -EBADF;
}

int log_internalv(int level, int error, const char *file, int line, const char *func,
                  const char *format, va_list ap) {
        char buf[2048];
        int saved = errno;

        (void) file;
        (void) line;
        (void) func;

        /* Make %m print the error we were given, not whatever errno happens to be. */
        if (error != 0)
                errno = ERRNO_VALUE(error);
        vsnprintf(buf, sizeof(buf), format, ap);

        const char *prefix = log_prefix ?: program_invocation_short_name;

        if (log_target == LOG_TARGET_KMSG && kmsg_fd >= 0) {
                char line_buf[2200];
                /* LOG_DAEMON facility, so the kernel log shows the message as from userspace. */
                int n = snprintf(line_buf, sizeof(line_buf), "<%d>%s[%d]: %s\n",
                                 LOG_DAEMON | level, prefix, (int) getpid(), buf);
                if (n > 0 && write(kmsg_fd, line_buf, MIN((size_t) n, sizeof(line_buf) - 1)) >= 0)
                        goto done;
        }
        /* A warning says so, as compilers' do, so that it stands out among the lines that only
         * inform; the kernel log has the level in the record instead. */
        fprintf(stderr, "%s: %s%s\n", prefix, level == LOG_WARNING ? "warning: " : "", buf);
done:
        errno = saved;
        return -ERRNO_VALUE(error);
}

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = log_internalv(level, error, file, line, func, format, ap);
        va_end(ap);
        return r;
}
