/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* What a failed boot needs to be inspected from the emergency shell with the tools of a running
 * system, and the program that explains the failure on the console before the shell opens.
 *
 * systemctl, journalctl, udevadm and blkid are in the image anyway (plan-base.c); cryptsetup and lvm come
 * with plan-crypt.c and plan-lvm.c. Everything here is optional: a host without less still gets an
 * image, only a poorer shell. */

#include <assert.h>
#include <sys/stat.h>

#include "foyer-contract.h"
#include "log.h"
#include "path-util.h"
#include "plan-debug.h"
#include "plan-util.h"
#include "util.h"

static const Item debug_tools[] = {
        { "/usr/bin/less",      NEED_OPTIONAL, "pager of systemctl and journalctl in the emergency shell" },
        { "/usr/bin/lsblk",     NEED_OPTIONAL, "emergency shell: the block device tree" },
        { "/usr/bin/findmnt",   NEED_OPTIONAL, "emergency shell: what is mounted where" },
        { "/usr/bin/dmesg",     NEED_OPTIONAL, "emergency shell: the kernel log" },
        { "/usr/bin/ls",        NEED_OPTIONAL, "emergency shell" },
        { "/usr/bin/cat",       NEED_OPTIONAL, "emergency shell" },
        { "/usr/bin/grep",      NEED_OPTIONAL, "emergency shell" },
};

/* less (the pager of systemctl and journalctl) needs a description of the terminal. On a serial
 * console sulogin sets TERM=vt102; systemd gives services on the console linux or vt220; the rest
 * cover what users set for the terminal emulator on the other end of a serial line. */
static const char *const terminfo_entries[] = {
        "l/linux", "v/vt100", "v/vt102", "v/vt220", "x/xterm", "x/xterm-256color",
};
/* ncurses looks in /etc/terminfo, /lib/terminfo and /usr/share/terminfo; on merged-/usr hosts (and in
 * the image, where /lib is a link) /lib/terminfo is /usr/lib/terminfo. */
static const char *const terminfo_dirs[] = { "/usr/lib/terminfo", "/usr/share/terminfo", "/etc/terminfo" };

static int add_terminfo(Manifest *m) {
        int r;

        for (size_t i = 0; i < ELEMENTSOF(terminfo_entries); i++)
                for (size_t j = 0; j < ELEMENTSOF(terminfo_dirs); j++) {
                        _cleanup_free_ char *p = strjoin(terminfo_dirs[j], "/", terminfo_entries[i]);

                        if (!p)
                                return log_oom();
                        r = plan_add_item(m, p, NEED_OPTIONAL, "terminal description for less");
                        if (r < 0)
                                return r;
                }
        return 0;
}

/* foyer-explain and foyer-timeline come from foyer's own library directory, or from a build tree
 * named by $FOYER_HELPER_DIR (as generators come from $FOYER_GENERATOR_DIR). Without them the image
 * still boots; the units that run them are then skipped by their conditions. */
static int add_explain(Manifest *m) {
        return plan_add_helper(m, FOYER_EXPLAIN_PATH, "foyer-explain (foyer-failure-report.service)",
                               "failed boots will not be explained on the console");
}

static int add_timeline(Manifest *m) {
        return plan_add_helper(m, FOYER_TIMELINE_EXE_PATH, "foyer-timeline (the boot timeline's units)",
                               "the boot will leave no timeline");
}

/* Leaving the emergency shell runs "systemctl default", which isolates default.target; PID 1 boots
 * initrd.target in an initrd, so without this alias (dracut has it too) the retry is refused. */
static int add_default_target(Manifest *m) {
        int r = manifest_add_symlink(m, UNITDIR "/default.target", "initrd.target",
                                     "leaving the emergency shell retries initrd.target");
        if (r < 0 && r != -EEXIST)
                return log_error_errno(r, "Failed to add %s: %m", UNITDIR "/default.target");
        return 0;
}

int plan_debug(Manifest *m, const BuildConfig *c) {
        int r;

        assert(m);
        assert(c);

        r = add_default_target(m);
        if (r < 0)
                return r;

        r = plan_add_items(m, debug_tools, ELEMENTSOF(debug_tools));
        if (r < 0)
                return r;
        r = add_terminfo(m);
        if (r < 0)
                return r;
        r = add_explain(m);
        if (r < 0)
                return r;
        return add_timeline(m);
}
