/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer preview --image: what the generators read at boot, taken from a built image or a UKI. */

#include <stdbool.h>

typedef struct PreviewImage {
        char **generators;      /* the names of the foyer-* generators the image holds */
        bool dropbear;          /* it holds FOYER_SSH_DROPBEAR (built with --ssh-unlock) */
        bool no_shell;          /* it holds FOYER_NO_SHELL_MARKER (built with --no-shell) */
        bool host_key_ed25519;  /* it holds FOYER_SSH_HOST_KEY_ED25519 (never read: a secret) */
        bool host_key_ecdsa;    /* ... FOYER_SSH_HOST_KEY_ECDSA */
        char *uki_cmdline;      /* a UKI's .cmdline section, or NULL */
} PreviewImage;

/* Reads image once and writes into the temporary tree root, at their paths in the image: every
 * regular file directly in its FOYER_CMDLINE_DIR whose name is a plain file name,
 * FOYER_MDADM_IMAGE_CONF, FOYER_SYSTEMD_VERSION_PATH and, with take_crypttab, /etc/crypttab. Each
 * file is at most 1 MiB, the image at most 4 GiB decompressed. Refuses, naming image, a file that is
 * no readable initrd or UKI, or one without foyer generators. Logs its errors. */
int preview_image_read(const char *image, const char *root, bool take_crypttab, PreviewImage *ret);

void preview_image_done(PreviewImage *p);
