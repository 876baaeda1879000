/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* MD RAID in the initrd with mdadm's own tools, udev rules and units, as the tree has them:
 * 64-md-raid-assembly.rules runs "mdadm --incremental" for each member that appears, and wants
 * mdadm-last-resort@<md>.timer for an array that could run degraded; that timer starts
 * mdadm-last-resort@.service ("mdadm --run") unless the array's device became ready first.
 * 63-md-raid-arrays.rules names the arrays (/dev/md/NAME, by-id, by-uuid). Nothing waits for MD: a
 * machine without RAID members never runs mdadm. md's kernel modules are default modules
 * (plan-base.c).
 *
 * mdadm reads its configuration through a symlink to the file foyer-md-generator writes at boot
 * (FOYER_MDADM_CONF_TARGET), which is the tree's mdadm.conf, copied here to FOYER_MDADM_IMAGE_CONF,
 * unless rd.md=, rd.md.uuid= or rd.md.conf= say otherwise. A build host without mdadm's assembly rule
 * (the mdadm package) gets an image without MD support, as with dracut. */

#include <assert.h>
#include <unistd.h>

#include "fileio.h"
#include "foyer-contract.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "unit-file.h"
#include "util.h"

static const Item md_items[] = {
        /* Optional here only so that a tree that has mdadm's rules and units but lacks mdadm fails in
         * the closure check, which names the units and rules that run it. */
        { "/usr/sbin/mdadm",                    NEED_OPTIONAL, "MD RAID assembly (64-md-raid-assembly.rules)" },
        /* 63-md-raid-arrays.rules: the container of an IMSM/DDF array, for mdmon@.service. */
        { "/usr/bin/readlink",                  NEED_REQUIRED, "63-md-raid-arrays.rules" },
        { "/usr/bin/basename",                  NEED_REQUIRED, "63-md-raid-arrays.rules" },
        { RULESDIR "/63-md-raid-arrays.rules",  NEED_REQUIRED, "MD RAID: names and readiness of arrays" },
        { RULESDIR "/64-md-raid-assembly.rules", NEED_REQUIRED, "MD RAID: incremental assembly" },
        /* An array mdadm --create is still writing is not ready (the debug shell may create one). */
        { RULESDIR "/01-md-raid-creating.rules", NEED_OPTIONAL, "MD RAID: arrays being created" },
        /* A degraded array is started after a timeout (OnActiveSec= of the timer, 30 s upstream). */
        { UNITDIR "/mdadm-last-resort@.timer",  NEED_REQUIRED, "MD RAID: start a degraded array" },
        { UNITDIR "/mdadm-last-resort@.service", NEED_REQUIRED, "MD RAID: start a degraded array" },
        /* External metadata (Intel IMSM, DDF) needs mdmon for its arrays to be writable, and a
         * reshape interrupted by the reboot goes on with mdadm-grow-continue@. */
        { "/usr/sbin/mdmon",                    NEED_OPTIONAL, "MD RAID: IMSM/DDF metadata (mdmon@.service)" },
        { UNITDIR "/mdmon@.service",            NEED_OPTIONAL, "MD RAID: IMSM/DDF metadata" },
        { UNITDIR "/mdadm-grow-continue@.service", NEED_OPTIONAL, "MD RAID: interrupted reshape" },
};

/* Where mdadm looks for its configuration, in the order Debian builds it with (CONFFILE, then
 * CONFFILE2); upstream's order is the other way round, which is why the image links both. */
static const char *const tree_confs[] = { "/etc/mdadm/mdadm.conf", "/etc/mdadm.conf" };

/* Copies the tree's mdadm.conf to FOYER_MDADM_IMAGE_CONF, if the tree has one. */
static int plan_md_conf(Manifest *m) {
        int r;

        for (size_t i = 0; i < ELEMENTSOF(tree_confs); i++) {
                _cleanup_free_ char *src = path_prefix_root(m->root, tree_confs[i]), *text = NULL;
                size_t size = 0, line = 0;

                if (!src)
                        return log_oom();
                /* Read inside the tree, and the bytes checked are the bytes the image gets. */
                r = read_tree_file(m->root, tree_confs[i], &text, &size);
                if (r < 0)
                        return r;
                if (!text) {
                        log_debug("%s does not exist.", src);
                        continue;
                }
                /* foyer-md-generator copies it into a file checked like a unit: a line with a control
                 * character (a NUL, a DOS file's CR, an ESC) or a trailing backslash would be left out
                 * there, with its entry. Refused here, where it can be fixed, rather than lost at boot. */
                if (unit_file_check_text(text, size, &line) < 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EBADMSG),
                                               "%s:%zu: a control character or a trailing backslash, which "
                                               "foyer-md-generator would have to leave out at boot; fix that line.",
                                               src, line);
                _cleanup_free_ char *why = strjoin("the tree's ", tree_confs[i], " (read by foyer-md-generator)");
                if (!why)
                        return log_oom();
                r = manifest_add_data(m, FOYER_MDADM_IMAGE_CONF, 0644, text, size, why);
                if (r < 0)
                        return log_error_errno(r, "Failed to add %s: %m", src);
                return 0;
        }
        log_debug("The tree has no mdadm.conf: the image's mdadm assembles what it finds.");
        return 0;
}

int plan_md(Manifest *m, const BuildConfig *c, const Probe *p) {
        _cleanup_free_ char *rule = NULL;
        int r;

        assert(m);
        assert(c);
        assert(p);

        if (p->host && !p->host->md) {
                log_debug("Host-only: no MD RAID below the root, /usr or swap, leaving out mdadm.");
                return 0;
        }
        /* The package is there when its assembly rule is; then the rest must be too. */
        r = path_in_root(m->root, RULESDIR "/64-md-raid-assembly.rules", false, &rule);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0 || access(rule, R_OK) < 0) {
                log_info("%s%s is not there (mdadm is not installed): the image will not assemble MD RAID.",
                         streq(m->root, "/") ? "" : m->root, RULESDIR "/64-md-raid-assembly.rules");
                return 0;
        }
        r = plan_add_items(m, md_items, ELEMENTSOF(md_items));
        if (r < 0)
                return r;
        r = plan_md_conf(m);
        if (r < 0)
                return r;
        r = manifest_add_symlink(m, FOYER_MDADM_CONF_LINK, FOYER_MDADM_CONF_TARGET,
                                 "mdadm.conf with rd.md* applied, from foyer-md-generator");
        if (r >= 0)
                r = manifest_add_symlink(m, FOYER_MDADM_CONF_ALT_LINK, FOYER_MDADM_CONF_TARGET,
                                         "mdadm.conf with rd.md* applied, from foyer-md-generator");
        if (r < 0)
                return log_error_errno(r, "Failed to add the links to the generated mdadm.conf: %m");
        return 0;
}
