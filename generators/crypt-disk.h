/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private interface of foyer-crypt-generator: the writer of one volume's units (crypt-disk.c), called
 * from crypt-generator.c. The crypttab reader is src/shared/crypttab.c. */

typedef struct CryptVolume {
        const char *name;      /* mapping name, /dev/mapper/<name> */
        const char *device;    /* device spec of the encrypted data (UUID=…, /dev/…, image file) */
        const char *key_file;  /* key file path (below the key device if keydev), "-"/"none", or NULL */
        const char *keydev;    /* device holding key_file, or NULL */
        const char *headerdev; /* device holding the header= file, or NULL */
        const char *options;   /* crypttab options, or NULL */
        const char *source;    /* SourcePath= */
} CryptVolume;

/* Writes systemd-cryptsetup@<name>.service and its links and drop-ins into dest, plus key/header device
 * mounts below runtime_dir, exactly as systemd 252's create_disk(). Logs its errors; returns 0 or a
 * negative errno (-EEXIST for a duplicate name, -EINVAL for contradicting options). */
int crypt_write_volume(const char *dest, const char *runtime_dir, const CryptVolume *v);
