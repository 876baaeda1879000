/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Device specifications as written on the kernel command line, in fstab or crypttab. */

#include <stdbool.h>

typedef enum DevspecFlags {
        DEVSPEC_NO_ID = 1 << 0, /* treat ID= like systemd 252 does: passed through verbatim */
} DevspecFlags;

/* Encodes s the way udev names /dev/disk/by-* links: [A-Za-z0-9#+-.:=@_] and valid multi-byte UTF-8
 * are kept, every other byte (and '\') becomes \xNN; no case folding. Returns 0 and a new string. */
int udev_encode_string(const char *s, char **ret);
/* Maps LABEL=, UUID=, PARTUUID=, PARTLABEL= (and, unless DEVSPEC_NO_ID, ID=) to the udev link path,
 * stripping one outer pair of matching quotes from the value; anything else is copied verbatim.
 * Returns 1 if a tag was mapped, 0 if copied, or -ENOMEM. */
int devspec_to_node(const char *spec, DevspecFlags flags, char **ret);
/* Whether spec starts with an upper-case "TAG=" that devspec_to_node() does not know (e.g. "FOO=bar"). */
bool devspec_has_unknown_tag(const char *spec, DevspecFlags flags);
/* True for paths below /dev/ or /sys/ with something after the prefix (systemd's is_device_path()). */
bool is_device_path(const char *path);
/* Component-wise prefix match: returns the rest of path after prefix (possibly ""), or NULL. */
const char *path_startswith(const char *path, const char *prefix);
/* Whether a and b name the same path component-wise ("/dev//nfs" equals "/dev/nfs"). */
bool path_equal(const char *a, const char *b);
