/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Console keymaps for the passphrase prompt: which layout the target system uses, and compiling a
 * layout with console-setup's ckbcomp into a keymap loadkeys reads. Debian's kbd ships no keymaps
 * (console-setup makes them from XKB data), so every layout is compiled from XKB at build time,
 * with the build host's ckbcomp and xkb-data. What the image does with them is plan-keymap.c's. */

#include <stdbool.h>

typedef struct KeymapSpec {
        char *name;             /* as vconsole.conf's KEYMAP= and vconsole.keymap= spell it */
        char *layout, *variant, *model, *options;       /* XKB (NULL: not set) */
        char *source;           /* where it came from, for messages ("/etc/vconsole.conf", "--add-keymap") */
} KeymapSpec;

void keymap_spec_done(KeymapSpec *s);

/* The XKB layout of a console keymap name: its line in the tree's systemd kbd-model-map (as
 * systemd-localed converts), else an XKB layout of that name. source names where the name came
 * from. Returns 0, or -EINVAL (logged as a warning naming name and source) for an invalid name. */
int keymap_spec_from_name(const char *root, const char *name, const char *source, KeymapSpec *ret);

/* The target's console layout, from ROOT/etc/vconsole.conf (KEYMAP=, else its XKBLAYOUT=,
 * XKBVARIANT=, XKBMODEL= and XKBOPTIONS=) or else Debian's ROOT/etc/default/keyboard (the same XKB*
 * settings). An XKB layout is named LAYOUT or LAYOUT-VARIANT after its first layout and variant.
 * Returns 1 with the spec, 0 if neither file sets a layout, or a negative errno (logged). */
int keymap_target_read(const char *root, KeymapSpec *ret);

/* Compiles s with ckbcomp (found in $PATH) into a new string in loadkeys' format. Returns 0, or a
 * negative errno with the reason in *ret_reason (a new string, for the caller's warning): ckbcomp
 * missing, failing, printing nothing, or not knowing the layout or variant. */
int keymap_compile(const KeymapSpec *s, char **ret_text, char **ret_reason);
