/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* LVM in the initrd with lvm2's own tools and udev rules: 69-lvm.rules runs "pvscan --cache
 * --checkcomplete" as each PV appears and starts "vgchange -aay" once its VG is complete, 56-lvm.rules
 * names the LVs /dev/VG/LV. Nothing waits for LVM: a machine without PVs never runs lvm at all.
 *
 * The image gets its own lvm.conf rather than the host's, which may name a devices file, dmeventd
 * monitoring or lvmpolld the initrd does not have. /etc/lvm/lvmlocal.conf, which lvm reads after
 * lvm.conf, points into the generator directory, where foyer-lvm-generator puts what rd.lvm=,
 * rd.lvm.vg= and rd.lvm.lv= ask for; without those parameters the link dangles and lvm ignores it.
 * A build host without lvm2 gets an image without LVM support, as with dracut. */

#include <assert.h>
#include <unistd.h>

#include "foyer-contract.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "util.h"

static const Item lvm_binaries[] = {
        { "/usr/sbin/lvm",              NEED_REQUIRED, "69-lvm.rules: pvscan and vgchange" },
        { "/usr/sbin/dmsetup",          NEED_REQUIRED, "55-dm.rules and 56-lvm.rules" },
        { "/usr/bin/systemd-run",       NEED_REQUIRED, "69-lvm.rules starts vgchange as a transient unit" },
        /* The lvm(8) names for the debug shell; all are links to lvm. */
        { "/usr/sbin/pvscan",           NEED_OPTIONAL, "debug shell" },
        { "/usr/sbin/vgscan",           NEED_OPTIONAL, "debug shell" },
        { "/usr/sbin/lvscan",           NEED_OPTIONAL, "debug shell" },
        { "/usr/sbin/pvs",              NEED_OPTIONAL, "debug shell" },
        { "/usr/sbin/vgs",              NEED_OPTIONAL, "debug shell" },
        { "/usr/sbin/lvs",              NEED_OPTIONAL, "debug shell" },
        { "/usr/sbin/vgchange",         NEED_OPTIONAL, "debug shell" },
        { "/usr/sbin/lvchange",         NEED_OPTIONAL, "debug shell" },
        { "/usr/sbin/vgmknodes",        NEED_OPTIONAL, "debug shell" },
        { "/usr/sbin/lvmconfig",        NEED_OPTIONAL, "debug shell" },
        /* Activating thin pools and caches runs these checkers if they are installed. */
        { "/usr/sbin/thin_check",       NEED_OPTIONAL, "thin pool activation" },
        { "/usr/sbin/cache_check",      NEED_OPTIONAL, "cache LV activation" },
};

static const char *const lvm_rules[] = {
        "55-dm.rules", "56-lvm.rules", "60-persistent-storage-dm.rules", "69-lvm.rules", "95-dm-notify.rules",
};

static const char lvm_conf[] =
        "# lvm2 configuration of a foyer initrd (written by foyer build).\n"
        "# rd.lvm=, rd.lvm.vg= and rd.lvm.lv= arrive in lvmlocal.conf (foyer-lvm-generator).\n"
        "devices {\n"
        "\t# No devices file in the initrd: any block device may hold a PV.\n"
        "\tuse_devicesfile = 0\n"
        "}\n"
        "global {\n"
        "\t# 69-lvm.rules activates each VG as its last PV appears.\n"
        "\tevent_activation = 1\n"
        "\tuse_lvmpolld = 0\n"
        "\tuse_lvmlockd = 0\n"
        "}\n"
        "activation {\n"
        "\t# No dmeventd here; the real root's lvm2 takes over monitoring.\n"
        "\tmonitoring = 0\n"
        "\tudev_sync = 1\n"
        "\tudev_rules = 1\n"
        "}\n"
        "backup {\n"
        "\t# The initrd never changes metadata worth keeping.\n"
        "\tbackup = 0\n"
        "\tarchive = 0\n"
        "}\n";

int plan_lvm(Manifest *m, const BuildConfig *c, const Probe *p) {
        _cleanup_free_ char *lvm = NULL;
        int r;

        assert(m);
        assert(c);
        assert(p);

        if (p->host && !p->host->lvm) {
                log_debug("Host-only: no LVM below the root, /usr or swap, leaving out lvm2.");
                return 0;
        }
        r = path_in_root(m->root, "/usr/sbin/lvm", false, &lvm);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0 || access(lvm, X_OK) < 0) {
                log_info("%s%s is not there (lvm2 is not installed): the image will not activate LVM.",
                         streq(m->root, "/") ? "" : m->root, "/usr/sbin/lvm");
                return 0;
        }
        r = plan_add_items(m, lvm_binaries, ELEMENTSOF(lvm_binaries));
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(lvm_rules); i++) {
                _cleanup_free_ char *path = strjoin(RULESDIR "/", lvm_rules[i]);

                if (!path)
                        return log_oom();
                r = plan_add_item(m, path, NEED_REQUIRED, "LVM activation");
                if (r < 0)
                        return r;
        }
        r = plan_add_text(m, "/etc/lvm/lvm.conf", 0644, lvm_conf, "lvm2 configuration for the initrd");
        if (r < 0)
                return r;
        r = manifest_add_symlink(m, "/etc/lvm/lvmlocal.conf", FOYER_LVMLOCAL_TARGET,
                                 "rd.lvm* settings from foyer-lvm-generator");
        if (r < 0)
                return log_error_errno(r, "Failed to add /etc/lvm/lvmlocal.conf: %m");
        return 0;
}
