/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Root discovery (foyer-gpt-auto-generator). The search itself is udev's: the blkid builtin run by
 * 60-persistent-storage.rules finds the root partition on the disk of the ESP named by the
 * LoaderDevicePartUUID EFI variable, and 99-systemd.rules links it as /dev/gpt-auto-root (both rules
 * are in plan-base.c's list, and efivarfs, which PID 1 mounts for udev and the generator, is in
 * plan_default_modules). What is added here serves foyer-gpt-auto-root.service, which runs the
 * generator again once /sysroot is mounted: systemd-growfs for a root partition with the grow-fs flag.
 * Without it the image still boots and the service says why it did not grow the file system. */

#include <assert.h>

#include "plan.h"
#include "plan-util.h"

static const Item gptauto_items[] = {
        { "/usr/lib/systemd/systemd-growfs", NEED_OPTIONAL, "foyer-gpt-auto-root.service: GPT grow-fs flag" },
};

int plan_gptauto(Manifest *m, const BuildConfig *c) {
        assert(m);
        assert(c);

        return plan_add_items(m, gptauto_items, ELEMENTSOF(gptauto_items));
}
