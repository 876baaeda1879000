/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* /run/lock as the real root will have it. From Debian 13 on, systemd mounts a tmpfs on /run/lock
 * (run-lock.mount, wanted by local-fs.target and ordered only before it). In the real root nothing
 * orders that mount against the early units that lock there: lvm2-monitor.service runs "vgchange
 * --monitor y" beside it, and a tmpfs mounted over /run/lock while vgchange holds its lock directory
 * makes it fail ("/run/lock/lvm/V_vg0:aux: open failed ... Can't get lock for vg0"). The mount
 * also hides whatever the initrd left in /run/lock ("not empty, mounting anyway").
 *
 * So an image of such a tree mounts /run/lock itself, with the tree's own unit, before udev starts
 * lvm and cryptsetup there. The mount moves into the real root with /run, where systemd finds
 * run-lock.mount already active and mounts nothing over a directory in use. A tree that does not
 * enable the unit (bookworm has none) gets nothing: the real root would not mount it either. */

#include <assert.h>

#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "util.h"

#define RUN_LOCK_UNIT           UNITDIR "/run-lock.mount"
#define RUN_LOCK_ENABLED        UNITDIR "/local-fs.target.wants/run-lock.mount"
#define RUN_LOCK_OVERRIDE       "/etc/systemd/system/run-lock.mount"
#define RUN_LOCK_DROPIN         UNITDIR "/run-lock.mount.d/foyer-initrd.conf"

static const char run_lock_dropin[] =
        "# Written by foyer build: /run/lock is mounted before udev starts lvm and cryptsetup, so\n"
        "# that the real root finds it mounted and mounts no tmpfs over a lock directory in use.\n"
        "[Unit]\n"
        "Before=systemd-udevd.service systemd-udev-trigger.service\n";

/* 1 if path is in the tree (a symlink counts as itself), 0 if not. */
static int tree_has(Manifest *m, const char *path) {
        _cleanup_free_ char *p = NULL;
        int r;

        assert(m);
        assert(path);

        r = path_in_root(m->root, path, true, &p);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to resolve %s in %s: %m", path, m->root);
        return 1;
}

int plan_run_lock(Manifest *m, const BuildConfig *c) {
        int r;

        assert(m);
        assert(c);

        r = tree_has(m, RUN_LOCK_ENABLED);
        if (r <= 0) {
                if (r == 0)
                        log_debug("%s is not enabled in the tree: /run/lock stays a directory.", RUN_LOCK_UNIT);
                return r;
        }
        r = tree_has(m, RUN_LOCK_OVERRIDE);
        if (r != 0) {
                if (r > 0)
                        log_debug("The tree masks or overrides run-lock.mount in /etc: left to the real root.");
                return r < 0 ? r : 0;
        }
        r = plan_add_item(m, RUN_LOCK_UNIT, NEED_REQUIRED, "/run/lock mounted as the real root mounts it");
        if (r < 0)
                return r;
        return plan_add_text(m, RUN_LOCK_DROPIN, 0644, run_lock_dropin,
                             "run-lock.mount before udev (lvm2-monitor.service in the real root)");
}
