/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What failed in the initrd transaction, as PID 1 reports it (through systemctl: foyer links no
 * libsystemd). */

typedef enum FailureKind {
        FAILURE_FSCK,           /* systemd-fsck-root.service, systemd-fsck-usr.service, systemd-fsck@… */
        FAILURE_UNLOCK,         /* systemd-cryptsetup@….service */
        FAILURE_MOUNT,          /* sysroot.mount, sysroot-usr.mount, sysusr-usr.mount, … */
        FAILURE_OTHER,
        _FAILURE_KIND_MAX,
        _FAILURE_KIND_INVALID = -22,
} FailureKind;

FailureKind failure_kind_from_unit(const char *unit);

/* Picks the unit names out of "systemctl list-units --failed --plain --no-legend" output (one unit a
 * line, possibly behind a status mark such as "●"). Returns 0 and a new (possibly empty, never NULL)
 * array, or -ENOMEM. */
int failed_units_parse(const char *text, char ***ret);

/* Runs argv (argv[0] looked up in $PATH) with stdout captured and stderr passed through. Returns 0 and
 * the output in *ret if it exited 0, -EPROTO if it exited otherwise, or a negative errno. */
int run_capture(char *const argv[], char **ret);

/* The failed units right now, from systemctl. */
int failed_units_get(char ***ret);
/* The last max non-empty lines of text (a unit's log as "journalctl -o cat" prints it), each cut to
 * LOG_LINE_MAX bytes (at a character boundary), with trailing blanks removed and every other byte that
 * is not printable text made a space (string_escape_unprintable(): tabs, ESC, C1 controls, bytes of no
 * valid UTF-8 sequence), so that they can be quoted on the console. Returns 0 and a new (possibly
 * empty, never NULL) array, or -ENOMEM. */
#define LOG_LINE_MAX 200
int log_tail_parse(const char *text, size_t max, char ***ret);

/* The last max lines a unit's own processes logged in this boot (journalctl _SYSTEMD_UNIT=unit),
 * through log_tail_parse(). */
int unit_log_tail(const char *unit, size_t max, char ***ret);

/* One property of a unit ("systemctl show -P"); returns 0 and a new string (maybe empty). */
int unit_get_property(const char *unit, const char *property, char **ret);

/* The mapping name of systemd-cryptsetup@NAME.service: the unescaped instance ("luks-…"). Returns 0 and
 * a new string, -EINVAL if unit is not such a unit or its instance does not unescape, or -ENOMEM. */
int cryptsetup_unit_volume(const char *unit, char **ret);

/* The device a systemd-cryptsetup unit attaches, from its ExecStart as "systemctl show -P ExecStart"
 * prints it: "{ path=… ; argv[]=…/systemd-cryptsetup attach NAME DEVICE [KEY [OPTIONS]] ; … }", the first
 * command if there are several. DEVICE must be an absolute path. Returns 0 and a new string, -EINVAL if
 * the text is not of that form, or -ENOMEM. */
int cryptsetup_exec_start_device(const char *exec_start, char **ret);
