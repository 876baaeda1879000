/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The target system's own settings, read from its tree (the build host's / or --root): its
 * /etc/fstab (root, /usr, swap), the resume device initramfs-tools was told about, and the lines
 * of its /etc/crypttab the initrd needs. What the image makes of them is plan-crypt.c's and
 * plan-base.c's business; the rules are in docs/foyer.md ("The target system's own settings"). */

#include <stdbool.h>

typedef struct TargetFstab {
        char *root, *root_fstype;       /* the source and type of "/" (NULL: no such line) */
        char *usr;                      /* the source of "/usr" */
        char **swaps;                   /* the sources of the swap lines, in file order */
        char *resume;                   /* RESUME= of initramfs-tools' conf.d/resume, else the first
                                         * swap device; NULL for none (RESUME=none, no swap) */
} TargetFstab;

/* Reads ROOT/etc/fstab with libmount and ROOT/etc/initramfs-tools/conf.d/resume. A missing file
 * is not an error (nothing is set); an unreadable one is, logged. */
int target_fstab_read(const char *root, TargetFstab *ret);
void target_fstab_done(TargetFstab *f);

typedef struct TargetCrypttab {
        char *text;             /* the chosen lines, as the image's /etc/crypttab; NULL: none */
        char **names;           /* their volume names */
        char **key_files;       /* the key files they name that the image must hold (absolute
                                 * paths, in the tree), without duplicates */
        bool all;               /* the devices under root, /usr or the resume device could not be
                                 * told: every line without noauto was taken */
} TargetCrypttab;

/* Chooses the lines of ROOT/etc/crypttab for the devices in f (see docs/foyer.md): those that hold
 * the root, /usr, the swaps or the resume device, with their key files, plus the lines with
 * Debian's "initramfs" option. A chosen line with an option the image cannot honour (keyscript=,
 * check=, ...) is an error naming the file and the line. No crypttab: an empty result. */
int target_crypttab_select(const char *root, const TargetFstab *f, TargetCrypttab *ret);
void target_crypttab_done(TargetCrypttab *t);

/* Splits a device-mapper name of an LV ("debian--vg-root": VG "debian-vg", LV "root"; a doubled
 * dash is a dash of a name, the single one separates them) or a /dev/VG/LV path. Returns 1 with
 * new strings, 0 if the path names no LV that way, -ENOMEM. */
int target_lv_split(const char *path, char **ret_vg, char **ret_lv);
