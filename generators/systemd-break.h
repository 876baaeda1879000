/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private interface of foyer-debug-generator: systemd's own breakpoints, rd.systemd.break=
 * (systemd-break.c). They came with systemd 258, whose systemd-debug-generator pulls in one unit the
 * version ships (breakpoint-pre-mount.service, ...) per breakpoint named; older versions have neither
 * the parameter nor the units. */

#include <errno.h>

/* The first systemd version with breakpoints. */
#define SYSTEMD_BREAK_SINCE 258U

typedef enum SystemdBreakpoint {
        SYSTEMD_BREAK_PRE_UDEV,
        SYSTEMD_BREAK_PRE_BASIC,
        SYSTEMD_BREAK_PRE_MOUNT,
        SYSTEMD_BREAK_PRE_SWITCH_ROOT,  /* the default: a bare rd.systemd.break */
        _SYSTEMD_BREAK_MAX,
        _SYSTEMD_BREAK_INVALID = -EINVAL,
} SystemdBreakpoint;

/* The unit that version of systemd ships for it: "breakpoint-pre-mount.service". */
const char *systemd_break_unit(SystemdBreakpoint b);

/* foyer's rd.break= that stops at about the same point, for images whose systemd has no breakpoints:
 * "rd.break=pre-mount". */
const char *systemd_break_nearest(SystemdBreakpoint b);

/* Parses the value of rd.systemd.break as systemd's generator does: a comma-separated list of names, a
 * backslash taking the next character as it is; NULL or "" is the default (pre-switch-root). Sets
 * *ret to the breakpoints named, as bits 1 << SystemdBreakpoint. An unknown name (empty ones too) is
 * logged and skipped. Returns 0, or -EINVAL (nothing logged, *ret untouched) when the value ends in
 * a backslash, which makes systemd's generator drop the whole value and stop reading the command
 * line; -ENOMEM. */
int systemd_break_parse(const char *value, unsigned *ret);
