/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The image's shells: sulogin and /bin/sh for emergency.service and rescue.service, and the shells
 * foyer-debug-generator may start: systemd's debug-shell.service (rd.systemd.debug_shell,
 * run with /bin/sh by units/debug-shell.service.d) and the breakpoint shell of
 * units/foyer-break@.service.in (rd.break=). The generator's drop-in tells the breakpoint shell where the
 * boot stopped (FOYER_BREAK, FOYER_BREAK_WHERE, FOYER_BREAK_NEXT); it says so before the prompt. From
 * systemd 258 on the tree also ships its own breakpoint units, which the generator pulls in for
 * rd.systemd.break= (generators/systemd-break.c); they come from the tree as they are, and foyer's
 * drop-ins (units/breakpoint-pre-mount.service.d/10-foyer.conf and links to it) run /bin/sh in them
 * instead of bash.
 *
 * foyer build --no-shell is for machines where the console must not mean root: the image holds no
 * shell at all (so neither rdinit=/bin/sh nor systemd.crash_shell nor a pager's "!" finds one), no
 * sulogin, and FOYER_NO_SHELL_MARKER, which makes foyer-debug-generator mask debug-shell.service and
 * the breakpoints and turn emergency.service into the rd.emergency= action whatever the command line
 * says. */

#include <assert.h>
#include <string.h>

#include "foyer-contract.h"
#include "log.h"
#include "plan-shell.h"
#include "plan-util.h"

/* The shells of emergency.service and rescue.service (systemd-sulogin-shell runs sulogin, which
 * runs root's shell), which plan_shell() adds unless --no-shell. */
static const Item shell_binaries[] = {
        { "/usr/lib/systemd/systemd-sulogin-shell",     NEED_REQUIRED, "emergency and rescue" },
        { "/usr/sbin/sulogin",                          NEED_REQUIRED, "emergency and rescue" },
        { "/usr/bin/sh",                                NEED_REQUIRED, "emergency shell" },
};

/* What --no-shell keeps out of the image: the shells above and any other that would do. */
static const char *const shells[] = {
        "/usr/bin/sh", "/usr/bin/dash", "/usr/bin/bash", "/usr/bin/rbash", "/usr/bin/busybox",
        "/usr/sbin/sulogin", "/usr/lib/systemd/systemd-sulogin-shell",
};

/* systemd's breakpoint units (258 and later): an older tree has none, and needs none. */
static const Item systemd_breakpoints[] = {
        { UNITDIR "/breakpoint-pre-udev.service",        NEED_OPTIONAL, "rd.systemd.break=pre-udev" },
        { UNITDIR "/breakpoint-pre-basic.service",       NEED_OPTIONAL, "rd.systemd.break=pre-basic" },
        { UNITDIR "/breakpoint-pre-mount.service",       NEED_OPTIONAL, "rd.systemd.break=pre-mount" },
        { UNITDIR "/breakpoint-pre-switch-root.service", NEED_OPTIONAL, "rd.systemd.break=pre-switch-root" },
};

static const char break_shell[] =
        "#!/bin/sh\n"
        "# foyer-break-shell: the shell of a breakpoint (foyer-break@.service, rd.break=).\n"
        "# Leaving it ends the unit, and the units ordered after it start.\n"
        "printf '\\n'\n"
        "printf 'foyer: %s: the boot stopped here.\\n' \"${" FOYER_BREAK_VAR ":-rd.break}\"\n"
        "printf 'foyer:   done: %s\\n' \"${" FOYER_BREAK_WHERE_VAR ":-?}\"\n"
        "printf 'foyer:   next: %s\\n' \"${" FOYER_BREAK_NEXT_VAR ":-?}\"\n"
        "printf 'foyer: \"systemctl list-jobs\" shows what waits, \"journalctl -b\" the log so far.\\n'\n"
        "printf 'foyer: type \"exit\" (or Ctrl-D) to leave this shell and resume the boot.\\n\\n'\n"
        "PS1=\"${" FOYER_BREAK_VAR ":-rd.break}# \" exec /bin/sh -i\n";

bool plan_shell_excludes(const BuildConfig *c, const char *path) {
        assert(c);
        assert(path);

        if (!c->no_shell)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(shells); i++)
                if (streq(path, shells[i]))
                        return true;
        return false;
}

static int add_no_shell(Manifest *m) {
        for (size_t i = 0; i < ELEMENTSOF(shells); i++) {
                Entry *e = manifest_find(m, shells[i]);

                if (e)
                        return log_error_errno(SYNTHETIC_ERRNO(EEXIST),
                                               "--no-shell: %s is in the image (%s); leave it out.",
                                               shells[i], e->reason);
        }
        return plan_add_text(m, FOYER_NO_SHELL_MARKER, 0644,
                             "This image was built with \"foyer build --no-shell\": it has no shell, and\n"
                             "foyer-debug-generator ignores rd.shell, rd.break and rd.systemd.debug_shell.\n",
                             "--no-shell (foyer-debug-generator turns every shell off)");
}

int plan_shell(Manifest *m, const BuildConfig *c) {
        int r;

        assert(m);
        assert(c);

        if (c->no_shell)
                return 0;

        r = plan_add_item(m, UNITDIR "/debug-shell.service", NEED_REQUIRED, "rd.systemd.debug_shell");
        if (r < 0)
                return r;
        r = plan_add_items(m, systemd_breakpoints, ELEMENTSOF(systemd_breakpoints));
        if (r < 0)
                return r;
        return plan_add_text(m, FOYER_BREAK_SHELL_PATH, 0755, break_shell, "rd.break= (foyer-break@.service)");
}

int plan_shell_binaries(Manifest *m, const BuildConfig *c) {
        assert(m);
        assert(c);

        if (c->no_shell)
                return 0;
        return plan_add_items(m, shell_binaries, ELEMENTSOF(shell_binaries));
}

int plan_shell_finish(Manifest *m, const BuildConfig *c) {
        assert(m);
        assert(c);

        /* Last, after every planner and the user's --add-file: a shell from any of them fails the build. */
        if (c->no_shell)
                return add_no_shell(m);
        return 0;
}
