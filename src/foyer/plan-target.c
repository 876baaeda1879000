/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The root of the tree's own /etc/fstab as the image's default root=, for a command line that
 * names none (GRUB always passes root=; a kernel booted without it, e.g. by a boot loader entry
 * that leaves it out, still finds its root). It is stored in /etc/cmdline.d/40-foyer-target.conf,
 * which foyer-root-generator reads before --cmdline's 50-foyer.conf and the kernel's own command
 * line, so a root= from either wins (the last one counts). Only root= is stored: rootfstype= and
 * rootflags= from fstab would apply to a root= given on the kernel command line too, and the root
 * is mounted with the type blkid finds; its fstab options take over when systemd-remount-fs
 * remounts it. /usr needs nothing: the initrd mounts /usr from the real root's /etc/fstab. The
 * tree's crypttab is plan-crypt.c's; LVM needs nothing either: 69-lvm.rules activates every VG
 * whose PVs appear, the one under the root among them. */

#include <assert.h>

#include "cmdline.h"
#include "devspec.h"
#include "foyer-contract.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "target.h"
#include "util.h"

#define TARGET_CMDLINE FOYER_CMDLINE_DIR "/40-foyer-target.conf"

static bool cmdline_has_root(const char *cmdline) {
        _cleanup_strv_free_ char **words = NULL;

        if (isempty(cmdline) || cmdline_split(cmdline, &words) < 0)
                return false;
        STRV_FOREACH(w, words)
                if (startswith(*w, "root="))
                        return true;
        return false;
}

int plan_target_root(Manifest *m, const BuildConfig *c) {
        _cleanup_(target_fstab_done) TargetFstab f = {};
        _cleanup_free_ char *text = NULL;
        int r;

        assert(m);
        assert(c);

        if (!c->target_settings) {
                log_debug("Skipping the tree's /etc/fstab, as --no-target-settings was requested.");
                return 0;
        }
        if (cmdline_has_root(c->cmdline)) {
                log_debug("Skipping the root of the tree's /etc/fstab, as --cmdline names one.");
                return 0;
        }
        r = target_fstab_read(m->root, &f);
        if (r < 0)
                return r;
        if (!f.root) {
                log_debug("The tree's /etc/fstab has no line for /: no default root=.");
                return 0;
        }
        /* Something the root generator can wait for: a device path or a tag, in one word. */
        if ((!is_device_path(f.root) && !strchr(f.root, '=')) || strpbrk(f.root, " \t\n\"'\\")) {
                log_info("The root of the tree's /etc/fstab, \"%s\", is no device foyer can name with root=: "
                         "the image has no default root=.", f.root);
                return 0;
        }
        text = strjoin("root=", f.root, "\n");
        if (!text)
                return log_oom();
        r = plan_add_text(m, TARGET_CMDLINE, 0644, text, "default root= from the tree's /etc/fstab");
        if (r < 0)
                return r;
        log_info("Default root=%s, from the tree's /etc/fstab (a root= on the kernel command line wins).", f.root);
        return 0;
}
