/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd.mount-extra=, systemd.swap-extra= (and their rd. forms) and the fstab.extra credentials of
 * systemd 254 and later (root-extra.c), for foyer-root-generator. */

#include <stdbool.h>

/* Handles key=value if it is one of the four parameters: returns 1 if it was (a bad value is logged
 * naming the parameter and ignored; with a systemd older than 254, which does not know them, it is
 * ignored as that version ignores it), 0 if not, -ENOMEM. */
int extra_parse_cmdline_item(const char *key, const char *value);

/* Writes the units of the extra entries gathered by extra_parse_cmdline_item(), then of the
 * credentials fstab.extra.initrd (the initrd's own mounts) and fstab.extra (the host's: only its
 * x-initrd.mount, /usr and / entries, below /sysroot) in $CREDENTIALS_DIRECTORY, as 254 and later do
 * in the initrd. Returns the first negative errno, else 0. */
int extra_add_mounts(const char *dest, bool swap_enabled);

/* Forgets the gathered entries. */
void extra_reset(void);
