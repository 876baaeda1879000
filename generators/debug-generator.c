/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-debug-generator: what systemd 252's systemd-debug-generator does in the initrd
 * (rd.systemd.mask=, rd.systemd.wants=, rd.systemd.debug_shell[=TTY], with rd.systemd.unit= naming
 * the target the wants go to), byte for byte, and on images whose systemd is 258 or later what that
 * version's does for rd.systemd.break[=LIST] (its breakpoint units, systemd-break.c); plus dracut's
 * debugging switches: rd.break[=POINT]
 * (a shell at one point of the initrd transaction, see breakpoints[] below), rd.shell=0 (no shell
 * at all) and rd.emergency=reboot|poweroff|halt (what a failure does instead of a shell). An image
 * built with "foyer build --no-shell" carries FOYER_NO_SHELL_MARKER; then no command line brings a shell
 * back. Everything goes to the early directory, like systemd's generator, so masks beat /etc. */

#include <unistd.h>

#include "cmdline.h"
#include "foyer-contract.h"
#include "generator.h"
#include "parse-util.h"
#include "strv.h"
#include "systemd-break.h"
#include "systemd-version.h"
#include "unit-name.h"

#define DEBUG_TTY "tty9"                        /* the TTY of the stock debug-shell.service */

/* Where each rd.break= stops, in boot order, as ordering against the units of systemd's initrd
 * transaction (bootup(7)). "switch-root" is plain rd.break: the last moment before the switch. The
 * text is shown on the console when the shell opens. */
typedef struct Breakpoint {
        const char *name;
        const char *wanted_by;  /* the target whose transaction starts the breakpoint */
        const char *after;
        const char *before;
        const char *where;      /* what has happened when the shell opens */
        const char *next;       /* what runs when it is left */
} Breakpoint;

static const Breakpoint breakpoints[] = {
        { "cmdline", "initrd.target",
          "systemd-journald.socket systemd-journald.service",
          "systemd-modules-load.service kmod-static-nodes.service systemd-tmpfiles-setup-dev.service "
          "systemd-udevd.service systemd-udev-trigger.service",
          "the generators have read the kernel command line; no module is loaded and udev is not running",
          "systemd-modules-load.service, then systemd-udevd.service" },
        { "pre-udev", "initrd.target",
          "systemd-journald.service systemd-modules-load.service kmod-static-nodes.service "
          "systemd-tmpfiles-setup-dev.service",
          "systemd-udevd.service systemd-udev-trigger.service",
          "modules-load.d and the static device nodes are done; udev is not running",
          "systemd-udevd.service" },
        { "pre-trigger", "initrd.target",
          "systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket",
          "systemd-udev-trigger.service",
          "udevd runs, but the devices present at boot have not been announced (no coldplug yet)",
          "systemd-udev-trigger.service" },
        { "initqueue", "initrd.target",
          "systemd-udev-trigger.service",
          "initrd-root-device.target systemd-fsck-root.service sysroot.mount",
          "udev has announced the devices present at boot; the wait for the root device begins",
          "initrd-root-device.target (waiting for the root device)" },
        { "pre-mount", "initrd.target",
          "initrd-root-device.target cryptsetup.target",
          "systemd-fsck-root.service sysroot.mount systemd-fsck-usr.service sysusr-usr.mount "
          "initrd-root-fs.target",
          "the root device is there; nothing is checked or mounted yet",
          "systemd-fsck-root.service, then sysroot.mount" },
        { "mount", "initrd.target",
          "initrd-root-fs.target sysroot.mount",
          "initrd-parse-etc.service initrd-fs.target",
          "the root file system is mounted on /sysroot; its /etc/fstab has not been read yet",
          "initrd-parse-etc.service (x-initrd.mount entries and /usr)" },
        { "pre-pivot", "initrd.target",
          "initrd.target initrd-fs.target initrd-parse-etc.service",
          "initrd-cleanup.service",
          "every initrd mount is done (initrd.target reached)",
          "initrd-cleanup.service (stops the initrd's services)" },
        { "cleanup", "initrd-switch-root.target",
          "initrd-cleanup.service initrd-udevadm-cleanup-db.service",
          "initrd-switch-root.service",
          "the initrd's services are stopped and the udev database is cleaned up",
          "initrd-switch-root.service (switch to the real root)" },
        { "switch-root", "initrd-switch-root.target",
          "initrd-cleanup.service initrd-udevadm-cleanup-db.service",
          "initrd-switch-root.service",
          "the real root is mounted on /sysroot and ready",
          "initrd-switch-root.service (switch to the real root)" },
};

typedef enum EmergencyAction {
        EMERGENCY_HALT,         /* the default with rd.shell=0, as dracut */
        EMERGENCY_POWEROFF,
        EMERGENCY_REBOOT,
} EmergencyAction;

static const char *const emergency_action_verb[] = {
        [EMERGENCY_HALT] = "halt",
        [EMERGENCY_POWEROFF] = "poweroff",
        [EMERGENCY_REBOOT] = "reboot",
};

static char **arg_mask, **arg_wants, **arg_breaks;
static char *arg_default_unit, *arg_debug_shell;
/* Why systemd's parser stops reading the command line here (a bad unit name; from 258 on also a
 * rd.systemd.break= ending in a backslash): the rd.systemd.* words after it are ignored. NULL: it goes on. */
static const char *arg_systemd_stopped;
static unsigned arg_systemd_breaks;     /* rd.systemd.break=: bits 1 << SystemdBreakpoint */
static bool arg_duplicate_mask;
static int arg_shell = -1;              /* rd.shell=: -1 unset, 0 no shells, 1 shells */
static int arg_emergency = -1;          /* rd.emergency=, an EmergencyAction */
static bool arg_no_shell_image;         /* the image was built with --no-shell */

/* The one place that frees the arg_* state and sets it back to its defaults (run by generator_main()). */
static void reset_args(void) {
        arg_mask = strv_free(arg_mask);
        arg_wants = strv_free(arg_wants);
        arg_breaks = strv_free(arg_breaks);
        free(arg_default_unit);
        free(arg_debug_shell);
        arg_default_unit = arg_debug_shell = NULL;
        arg_systemd_stopped = NULL;
        arg_systemd_breaks = 0;
        arg_duplicate_mask = arg_no_shell_image = false;
        arg_shell = arg_emergency = -1;
}

static const Breakpoint *breakpoint_find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(breakpoints); i++)
                if (streq(breakpoints[i].name, name))
                        return &breakpoints[i];
        return NULL;
}

/* systemd's skip_dev_prefix(): path_startswith(p, "/dev/") ?: p, slashes collapsed. */
static const char *skip_dev_prefix(const char *p) {
        const char *q = p;

        while (*q == '/')
                q++;
        if (q == p || !startswith(q, "dev") || (q[3] != '/' && q[3] != '\0'))
                return p;
        for (q += 3; *q == '/'; q++)
                ;
        return q;
}

static int add_unit_name(const char *key, const char *value, char ***list) {
        _cleanup_free_ char *n = NULL;
        int r;

        if (arg_systemd_stopped) {
                log_warning("Ignoring rd.%s=%s: %s before it ended the rd.systemd.* parameters.",
                            key, value ?: "", arg_systemd_stopped);
                return 0;
        }
        if (!value) {
                log_warning("Missing argument for rd.%s= kernel command line switch, ignoring.", key);
                return 0;
        }
        r = unit_name_mangle(value, ".service", &n);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0) {
                /* Like systemd 252, whose parser gives up here: later rd.systemd.* words are not used. */
                log_warning("Ignoring rd.%s=%s: not a valid unit name; ignoring the rd.systemd.* parameters after it, as systemd does.",
                            key, value);
                arg_systemd_stopped = "an invalid unit name";
                return 0;
        }
        if (!streq(n, value))
                log_info("rd.%s=%s: using the unit name \"%s\".", key, value, n);
        if (list == &arg_mask && strv_contains(arg_mask, n)) {
                log_error("rd.systemd.mask=%s: %s is already masked. Duplicate entry?", value, n);
                arg_duplicate_mask = true;
                return 0;
        }
        if (strv_contains(*list, n))
                return 0;
        return strv_consume(list, TAKE_PTR(n)) < 0 ? log_oom() : 0;
}

static int parse_break(const char *value) {
        /* "switch-root" is rd.break without a value; it is not a name dracut knows. */
        const char *name = value ?: "switch-root";

        if (value && (streq(value, "switch-root") || !breakpoint_find(value))) {
                log_warning("Ignoring rd.break=%s: unknown breakpoint (known: cmdline, pre-udev, pre-trigger, initqueue, pre-mount, mount, pre-pivot, cleanup; rd.break alone stops before the switch to the real root).",
                            value);
                return 0;
        }
        if (strv_contains(arg_breaks, name))
                return 0;
        return strv_extend(&arg_breaks, name) < 0 ? log_oom() : 0;
}

/* "rd.break=pre-mount rd.break=pre-pivot": foyer's breakpoints at about the points of those in mask. */
static char *nearest_rd_breaks(unsigned mask) {
        _cleanup_free_ char *s = strdup("");

        for (int b = 0; s && b < _SYSTEMD_BREAK_MAX; b++)
                if (mask & (1U << b) && strextend_with_separator(&s, " ", systemd_break_nearest(b)) < 0)
                        return NULL;
        return TAKE_PTR(s);
}

/* rd.systemd.break[=LIST]: systemd 258's breakpoints, read as its generator reads them; what they
 * pull in is added in run(). Images of an older systemd have neither the parameter nor the units:
 * logged, with foyer's rd.break= that stops at about the same point. */
static int parse_systemd_break(const char *value) {
        _cleanup_free_ char *shown = NULL, *nearest = NULL;
        unsigned mask = 0, version = systemd_version();
        int r;

        /* The value reaches the log only as printable text; no part of it reaches a unit. */
        shown = value ? string_escape_unprintable(value, 0) : NULL;
        if (value && !shown)
                return log_oom();
        if (version >= SYSTEMD_BREAK_SINCE && arg_systemd_stopped) {
                log_warning("Ignoring rd.systemd.break%s%s: %s before it ended the rd.systemd.* parameters.",
                            value ? "=" : "", strempty(shown), arg_systemd_stopped);
                return 0;
        }
        r = systemd_break_parse(value, &mask);
        if (r == -ENOMEM)
                return log_oom();
        if (version < SYSTEMD_BREAK_SINCE) {
                nearest = r >= 0 ? nearest_rd_breaks(mask) : strdup("");
                if (!nearest)
                        return log_oom();
                log_warning("Ignoring rd.systemd.break%s%s: the image's systemd %u has no breakpoints (systemd %u and later do). %s%s%s",
                            value ? "=" : "", strempty(shown), version, SYSTEMD_BREAK_SINCE,
                            isempty(nearest) ? "foyer's rd.break=POINT stops the boot with a shell instead." : "foyer's ",
                            nearest,
                            isempty(nearest) ? "" : strchr(nearest, ' ') ? " stop at about the same points." : " stops at about the same point.");
                return 0;
        }
        if (r < 0) {
                /* 258's generator fails on the whole value and its parser stops there. */
                log_warning("Ignoring rd.systemd.break=%s: it ends in a backslash; ignoring the rd.systemd.* parameters after it, as systemd does.",
                            shown);
                arg_systemd_stopped = "a rd.systemd.break= ending in a backslash";
                return 0;
        }
        arg_systemd_breaks |= mask;
        return 0;
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        int r;

        /* In the initrd only rd.* words arrive here, without their prefix. */
        if (streq(key, "systemd.mask"))
                return add_unit_name(key, value, &arg_mask);
        if (streq(key, "systemd.wants"))
                return add_unit_name(key, value, &arg_wants);
        if (cmdline_key_streq(key, "systemd.debug_shell")) {
                const char *tty = NULL;

                if (arg_systemd_stopped) {
                        log_warning("Ignoring rd.%s: %s before it ended the rd.systemd.* parameters.",
                                    key, arg_systemd_stopped);
                        return 0;
                }
                /* The TTY goes into the drop-in's Description= and TTYPath= lines. */
                if (value && !unit_value_is_safe(value)) {
                        log_warning("Ignoring rd.%s=: its value contains a control character or ends in a backslash.", key);
                        return 0;
                }
                r = value ? parse_boolean(value) : 1;
                if (r < 0)
                        tty = skip_dev_prefix(value);
                else if (r > 0)
                        tty = DEBUG_TTY;
                return free_and_strdup(&arg_debug_shell, tty) < 0 ? log_oom() : 0;
        }
        if (streq(key, "systemd.unit")) {
                if (arg_systemd_stopped)
                        return 0;
                if (!value) {
                        log_warning("Missing argument for rd.systemd.unit= kernel command line switch, ignoring.");
                        return 0;
                }
                /* It names the .wants/ directory: a path component. PID 1 ignores an invalid name too. */
                if (!unit_name_is_valid(value)) {
                        log_warning("Ignoring rd.systemd.unit=%s: not a valid unit name.", value);
                        return 0;
                }
                return free_and_strdup(&arg_default_unit, value) < 0 ? log_oom() : 0;
        }
        if (streq(key, "systemd.break"))
                return parse_systemd_break(value);
        if (streq(key, "break"))
                return parse_break(value);
        if (streq(key, "shell")) {
                r = value ? parse_boolean(value) : 1;
                if (r < 0)
                        log_warning("Ignoring rd.shell=%s: not a boolean.", value);
                else
                        arg_shell = r;
                return 0;
        }
        if (streq(key, "emergency") && value) {
                /* A bare rd.emergency is PID 1's: boot into emergency.target. */
                for (size_t i = 0; i < ELEMENTSOF(emergency_action_verb); i++)
                        if (streq(value, emergency_action_verb[i])) {
                                arg_emergency = (int) i;
                                return 0;
                        }
                log_warning("Ignoring rd.emergency=%s: expected reboot, poweroff or halt.", value);
        }
        return 0;
}

static bool shells_allowed(void) {
        return !arg_no_shell_image && arg_shell != 0;
}

static int add_masks(const char *dir) {
        int r = 0;

        assert(dir);

        for (char *const *u = arg_mask; u && *u; u++) {
                int q = unit_file_add_mask(dir, *u);

                if (q < 0)
                        RET_GATHER(r, log_error_errno(q, "Failed to create mask symlink %s/%s: %m", dir, *u));
        }
        if (arg_duplicate_mask)
                RET_GATHER(r, -EEXIST);
        return r;
}

static int add_wants(const char *dir) {
        const char *target = arg_default_unit ?: "initrd.target";
        int r = 0;

        assert(dir);

        for (char *const *u = arg_wants; u && *u; u++) {
                _cleanup_free_ char *src = strjoin(systemd_libexec_dir(), "/system/", *u);

                if (!src)
                        return log_oom();
                RET_GATHER(r, generator_add_symlink(dir, target, "wants", src));
        }
        return r;
}

/* The drop-in for a TTY other than tty9, as the image's systemd writes it: 252 without a header or
 * blank lines, 257 with its generator's header and a blank line before [Service]. Unlike both, the TTY
 * has its '%' doubled: they write it as it is, so that PID 1 expands "tty%n" to "ttydebug-shell.service"
 * and drops a line with an unknown specifier; here the TTY named on the command line is the one used. */
static void add_debug_shell_dropin(const char *dir) {
        bool v257 = systemd_version() >= 257;
        _cleanup_free_ char *tty = NULL;
        int r;

        if (streq(arg_debug_shell, DEBUG_TTY))
                return;
        tty = specifier_escape(arg_debug_shell);
        if (!tty) {
                (void) log_oom();
                return;
        }
        r = unit_file_write_dropinf(dir, "debug-shell.service", 50, "tty",
                                    "%s%s%s"
                                    "[Unit]\n"
                                    "Description=Early root shell on /dev/%s FOR DEBUGGING ONLY\n"
                                    "ConditionPathExists=\n"
                                    "%s"
                                    "[Service]\n"
                                    "TTYPath=/dev/%s",
                                    v257 ? "# Automatically generated by " : "",
                                    v257 ? program_invocation_short_name : "", v257 ? "\n\n" : "",
                                    tty, v257 ? "\n" : "", tty);
        if (r < 0)
                log_warning_errno(r, "Failed to write drop-in for debug-shell.service, ignoring: %m");
}

/* One instance of foyer-break@.service per breakpoint, ordered at its point and after the earlier
 * breakpoints, so that two of them at the same point open one after the other. */
static int add_breakpoints(const char *dir) {
        _cleanup_free_ char *earlier = strdup("");  /* "foyer-break@X.service " for each one written */

        if (!earlier)
                return log_oom();
        for (size_t i = 0; i < ELEMENTSOF(breakpoints); i++) {
                const Breakpoint *b = &breakpoints[i];
                _cleanup_free_ char *unit = NULL, *param = NULL;
                int r;

                if (!strv_contains(arg_breaks, b->name))
                        continue;
                r = unit_name_build(FOYER_BREAK_UNIT_PREFIX "@", b->name, ".service", &unit);
                if (r < 0)
                        return log_error_errno(r, "Failed to make the unit name of breakpoint %s: %m", b->name);
                param = streq(b->name, "switch-root") ? strdup("rd.break") : strjoin("rd.break=", b->name);
                if (!param)
                        return log_oom();
                r = unit_file_write_dropinf(dir, unit, 50, "breakpoint",
                                            "# %s: a shell on the console; leaving it resumes the boot.\n"
                                            "[Unit]\n"
                                            "Description=Breakpoint %s\n"
                                            "After=%s%s\n"
                                            "Before=%s\n"
                                            "[Service]\n"
                                            "Environment=\"" FOYER_BREAK_VAR "=%s\"\n"
                                            "Environment=\"" FOYER_BREAK_WHERE_VAR "=%s\"\n"
                                            "Environment=\"" FOYER_BREAK_NEXT_VAR "=%s\"\n",
                                            param, param, earlier, b->after, b->before,
                                            param, b->where, b->next);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the drop-in for %s: %m", unit);
                /* PID 1 reads only the link's name; the target is the instance, as systemd's own
                 * generators link stock units. */
                _cleanup_free_ char *src = strjoin(systemd_libexec_dir(), "/system/", unit);
                if (!src)
                        return log_oom();
                r = generator_add_symlink(dir, b->wanted_by, "wants", src);
                if (r < 0)
                        return r;
                _cleanup_free_ char *e = strjoin(earlier, unit, " ");
                if (!e)
                        return log_oom();
                free(earlier);
                earlier = TAKE_PTR(e);
        }
        return 0;
}

/* Without shells, a failure runs rd.emergency='s action where emergency.service (and
 * rescue.service) would start sulogin; emergency.target stays, so what it pulls in before
 * emergency.service (the failure report) still prints. The debug shell and the breakpoints (foyer's,
 * and systemd's units from 258 on) are masked, so rd.systemd.wants= cannot start them either. */
static int add_mask_once(const char *dir, const char *unit) {
        int r;

        if (strv_contains(arg_mask, unit))
                return 0;
        r = unit_file_add_mask(dir, unit);
        if (r < 0)
                return log_error_errno(r, "Failed to mask %s: %m", unit);
        return 0;
}

static int add_no_shell(const char *dir) {
        EmergencyAction a = arg_emergency >= 0 ? (EmergencyAction) arg_emergency : EMERGENCY_HALT;
        const char *why = arg_no_shell_image ? "the image was built with --no-shell" : "rd.shell=0";
        int r;

        static const char *const masked[] = { "debug-shell.service", FOYER_BREAK_TEMPLATE };
        static const char *const shells[] = { "emergency.service", "rescue.service" };

        for (size_t i = 0; i < ELEMENTSOF(masked); i++) {
                r = add_mask_once(dir, masked[i]);
                if (r < 0)
                        return r;
        }
        for (int b = 0; systemd_version() >= SYSTEMD_BREAK_SINCE && b < _SYSTEMD_BREAK_MAX; b++) {
                r = add_mask_once(dir, systemd_break_unit(b));
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(shells); i++) {
                r = unit_file_write_dropinf(dir, shells[i], 50, "no-shell",
                                            "# No shell (%s): rd.emergency=%s instead.\n"
                                            "[Unit]\n"
                                            "Description=Emergency action: %s\n"
                                            "[Service]\n"
                                            "ExecStartPre=\n"
                                            "ExecStart=\n"
                                            "ExecStart=-systemctl --no-block %s\n"
                                            "StandardInput=null\n"
                                            "StandardOutput=journal+console\n"
                                            "StandardError=journal+console\n",
                                            why, emergency_action_verb[a], emergency_action_verb[a],
                                            emergency_action_verb[a]);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the drop-in for %s: %m", shells[i]);
        }
        return 0;
}

static void check_no_shell_image(void) {
        /* $FOYER_NO_SHELL_MARKER (for tests) can only add a marker, never hide the image's. */
        const char *extra = getenv("FOYER_NO_SHELL_MARKER");

        arg_no_shell_image = access(FOYER_NO_SHELL_MARKER, F_OK) >= 0 || (extra && access(extra, F_OK) >= 0);
        if (!arg_no_shell_image)
                return;
        if (arg_shell > 0)
                log_warning("Ignoring rd.shell: this image was built with --no-shell.");
        if (arg_debug_shell)
                log_warning("Ignoring rd.systemd.debug_shell: this image was built with --no-shell.");
        if (!strv_isempty(arg_breaks))
                log_warning("Ignoring rd.break: this image was built with --no-shell.");
        if (arg_systemd_breaks)
                log_warning("Ignoring rd.systemd.break: this image was built with --no-shell.");
}

/* The units of rd.systemd.break=, as 258's generator adds them: start jobs, like rd.systemd.wants=. */
static int add_systemd_breaks(void) {
        for (int b = 0; b < _SYSTEMD_BREAK_MAX; b++) {
                const char *unit = systemd_break_unit(b);

                if (!(arg_systemd_breaks & (1U << b)) || strv_contains(arg_wants, unit))
                        continue;
                if (strv_extend(&arg_wants, unit) < 0)
                        return log_oom();
        }
        return 0;
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        int r;

        assert(dest_early);

        r = cmdline_parse(parse_cmdline_item, NULL, CMDLINE_STRIP_RD_PREFIX | CMDLINE_RD_STRICT);
        if (r < 0)
                log_warning_errno(r, "Failed to parse kernel command line, ignoring: %m");
        check_no_shell_image();

        if (shells_allowed()) {
                if (arg_emergency >= 0)
                        log_info("rd.emergency=%s only applies with rd.shell=0; a failure opens the emergency shell.",
                                 emergency_action_verb[arg_emergency]);
                if (arg_debug_shell) {
                        if (strv_extend(&arg_wants, "debug-shell.service") < 0)
                                return log_oom();
                        add_debug_shell_dropin(dest_early);
                }
                r = add_systemd_breaks();
                if (r < 0)
                        return r;
        } else {
                if (!arg_no_shell_image && arg_debug_shell)
                        log_warning("Ignoring rd.systemd.debug_shell: rd.shell=0 turns every shell off.");
                if (!arg_no_shell_image && !strv_isempty(arg_breaks))
                        log_warning("Ignoring rd.break: rd.shell=0 turns every shell off.");
                if (!arg_no_shell_image && arg_systemd_breaks)
                        log_warning("Ignoring rd.systemd.break: rd.shell=0 turns every shell off.");
                arg_breaks = strv_free(arg_breaks);
        }

        /* Every step runs; the first failure is the result. */
        r = add_masks(dest_early);
        RET_GATHER(r, add_wants(dest_early));
        RET_GATHER(r, shells_allowed() ? add_breakpoints(dest_early) : add_no_shell(dest_early));
        return r < 0 ? r : 0;
}

FOYER_DEFINE_MAIN_GENERATOR(run, reset_args);
