/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What goes into the image, as data: the skeleton, binaries, stock units, udev rules, /etc files,
 * foyer's generators and units, and the user's additions. Each adder records why. */

#include "foyer-config.h"
#include "manifest.h"
#include "probe.h"

/* The default module set: enough to find a root on common PCs and VMs. */
extern const char *const plan_default_modules[];

/* Adds everything but the library closure and the kernel modules. */
int plan_image(Manifest *m, const BuildConfig *c, const Probe *p);

/* plan-crypt.c: what unlocking LUKS volumes needs, and the crypttab. */
int plan_crypt(Manifest *m, const BuildConfig *c);
/* After the user's files are in: adds --add-key-file files and makes every key file (those, the
 * ones the crypttab or rd.luks.key= in --cmdline name, and /etc/cryptsetup-keys.d/ files) mode
 * 0400 with a reason starting "key file". */
int plan_crypt_keys(Manifest *m, const BuildConfig *c);
/* Returns the image paths of the key files (NULL when there are none). */
int plan_key_files(Manifest *m, char ***ret);

/* plan-lvm.c: lvm2's tools, udev rules and an lvm.conf for the initrd. */
int plan_lvm(Manifest *m, const BuildConfig *c);

/* plan-gptauto.c: what root discovery needs beyond the stock rules (systemd-growfs). */
int plan_gptauto(Manifest *m, const BuildConfig *c);

/* Helpers for the files that add one concern each (storage stacks, debugging tools). They run
 * before /etc is written, so the groups their udev rules name end up in /etc/group. */

typedef enum Need {
        NEED_REQUIRED,          /* missing → the build fails */
        NEED_OPTIONAL,          /* missing → debug message */
} Need;

typedef struct Item {
        const char *path;
        Need need;
        const char *why;
} Item;

#define UNITDIR "/usr/lib/systemd/system"
#define RULESDIR "/usr/lib/udev/rules.d"

/* Adds a path of the source tree (and what its symlinks point to); a missing NEED_REQUIRED path
 * fails the build naming it and why it is needed. */
int plan_add_item(Manifest *m, const char *path, Need need, const char *why);
/* Splits an option's "SRC[:DEST]" (DEST defaults to SRC and must be absolute); errors name the
 * option and the value. */
int plan_split_file_spec(const char *option, const char *spec, char **ret_src, char **ret_dest);
/* plan_add_item() for each of n items. */
int plan_add_items(Manifest *m, const Item *items, size_t n);
/* Adds a file or directory tree of the build host under dest. */
int plan_add_tree(Manifest *m, const char *src, const char *dest, const char *reason);
/* Adds a file with the given content. */
int plan_add_text(Manifest *m, const char *path, uint32_t mode, const char *text, const char *reason);
