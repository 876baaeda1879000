/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Logging for generators (kernel log at boot, stderr otherwise) and for the builder (stderr).
 * The log_*_errno() calls log with %m bound to the given error and return it as a negative errno,
 * so that "return log_error_errno(r, ...)" is one statement. Never log key material. */

#include <stdarg.h>
#include <syslog.h>

#include "macro.h"

typedef enum LogTarget {
        LOG_TARGET_CONSOLE,     /* stderr */
        LOG_TARGET_KMSG,        /* /dev/kmsg, falling back to stderr */
        LOG_TARGET_AUTO,        /* kmsg when started by PID 1 with a non-tty stderr, else console */
        _LOG_TARGET_MAX,
        _LOG_TARGET_INVALID = -EINVAL,
} LogTarget;

/* Sets the program name shown in each line (defaults to program_invocation_short_name). */
void log_set_prefix(const char *prefix);
void log_set_max_level(int level);
int log_get_max_level(void);
void log_set_target(LogTarget target);
/* Applies SYSTEMD_LOG_LEVEL and SYSTEMD_LOG_TARGET from the environment. */
void log_parse_environment(void);
/* Opens the chosen target; call after log_set_target()/log_parse_environment(). */
void log_open(void);
void log_close(void);
/* Parses "debug", "info", "warning", ... or a number 0..7; returns the level or -EINVAL. */
int log_level_from_string(const char *s);

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) _printf_(6, 7);
int log_internalv(int level, int error, const char *file, int line, const char *func,
                  const char *format, va_list ap) _printf_(6, 0);

#define log_full_errno(level, error, ...)                                              \
        ({                                                                             \
                int _l = (level), _e = (error);                                        \
                (log_get_max_level() >= _l)                                            \
                        ? log_internal(_l, _e, __FILE__, __LINE__, __func__, __VA_ARGS__) \
                        : -ERRNO_VALUE(_e);                                            \
        })
#define log_full(level, ...) (void) log_full_errno((level), 0, __VA_ARGS__)

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_info_errno(error, ...) log_full_errno(LOG_INFO, error, __VA_ARGS__)
#define log_notice_errno(error, ...) log_full_errno(LOG_NOTICE, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)

#define log_oom() log_error_errno(SYNTHETIC_ERRNO(ENOMEM), "Out of memory.")
