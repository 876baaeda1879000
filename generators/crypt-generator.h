/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private interfaces of foyer-crypt-generator: the crypttab reader (crypt-crypttab.c) and the writer of
 * one volume's units (crypt-disk.c), both called from crypt-generator.c. */

/* One crypttab line: name and device are always set, keyspec and options may be NULL. */
typedef struct CrypttabEntry {
        const char *name, *device, *keyspec, *options;
        unsigned line;
} CrypttabEntry;

/* Called per valid line; a negative return stops the walk and is returned. */
typedef int (*crypttab_entry_t)(const CrypttabEntry *e, void *data);

/* Reads the crypttab at path as systemd 252 does: blank lines and lines starting with '#' (after
 * leading whitespace) are skipped, a line has 2 to 4 whitespace-separated fields (no quoting; a fifth
 * field and anything after it is ignored), other lines are logged as "path:N" and skipped. A missing
 * file is not an error. Returns 0 or the first negative callback result. */
int crypttab_parse(const char *path, crypttab_entry_t cb, void *data);

/* Splits "FILE[:DEVSPEC]" at the last ':' if what follows converts to an absolute device path (UUID=,
 * LABEL=, /dev/...), as systemd 252's split_locationspec(); spec may be NULL (both outputs NULL). */
int crypt_split_locationspec(const char *spec, char **ret_file, char **ret_device);

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
