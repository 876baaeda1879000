/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private interface of foyer-root-generator: the .mount writer and the fstab passes (root-fstab.c),
 * called from root-generator.c (the kernel command line) and the fstab fuzzer. */

#include <stdbool.h>

typedef enum MountFlags {
        MOUNT_NOAUTO = 1 << 0,
        MOUNT_NOFAIL = 1 << 1,
        MOUNT_AUTOMOUNT = 1 << 2,
        MOUNT_MAKEFS = 1 << 3,
        MOUNT_GROWFS = 1 << 4,
        MOUNT_RW_ONLY = 1 << 5,
        MOUNT_AFTER_IMPORTS = 1 << 6, /* root= and mount.usr= (258): After=imports.target */
        MOUNT_VALIDATEFS = 1 << 7,    /* x-systemd.validatefs (258) */
} MountFlags;

/* Writes the .mount unit for what on where (and its target symlink) as systemd 252's fstab generator
 * does. original_where is the fstab text when where was canonicalised (else NULL). In check mode
 * (sysroot_check) nothing is written and 1 is returned for a qualifying entry. */
int add_mount(const char *source, const char *dest, const char *what, const char *where,
              const char *original_where, const char *fstype, const char *opts, int passno,
              MountFlags flags, const char *target_unit, bool sysroot_check);

/* Where an entry comes from, for fstab_add_entry(). */
typedef enum FstabEntryMode {
        FSTAB_ENTRY_SYSROOT = 1 << 0, /* the host's: mounted below /sysroot, only x-initrd.mount, /usr (and /) */
        FSTAB_ENTRY_EXTRA = 1 << 1,   /* systemd.mount-extra= or the fstab.extra credentials (254's accept_root) */
} FstabEntryMode;

/* One entry (spec, target, fstype, opts; passno < 0: 1 for a device, as root=) from source ("/etc/fstab",
 * "/proc/cmdline", "/run/credentials"): its .mount or .swap unit and links. A field with a control character
 * is logged and the entry skipped. Returns as parse_fstab(). */
int fstab_add_entry(const char *source, const char *dest, const char *spec, const char *target,
                    const char *fstype, const char *opts, int passno, FstabEntryMode mode,
                    bool swap_enabled, bool sysroot_check);

/* Parses the fstab at path, its units naming source as SourcePath=, each entry as fstab_add_entry() with mode. */
int parse_fstab_file(const char *path, const char *source, const char *dest, FstabEntryMode mode,
                     bool swap_enabled, bool sysroot_check);

/* Parses the initrd's own fstab ($SYSTEMD_FSTAB or /etc/fstab; sysroot = false) or the host's
 * ($SYSTEMD_SYSROOT_FSTAB or /sysroot/etc/fstab; sysroot = true, only x-initrd.mount and /usr
 * entries). Bad lines are logged with file:line and skipped. Returns 1 in check mode when an entry
 * qualifies, else 0 or the first negative errno from writing. */
int parse_fstab(const char *dest, bool sysroot, bool swap_enabled, bool sysroot_check);
