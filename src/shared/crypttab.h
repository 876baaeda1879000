/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* /etc/crypttab as systemd 252 reads it, for foyer-crypt-generator at boot and for the builder (key
 * files to put into the image): one parser for both. Does not log above debug. */

#include <stdbool.h>

/* One line. For a line with fewer than two fields, name is NULL (the caller reports "path:line"). */
typedef struct CrypttabEntry {
        const char *name, *device; /* NAME and DEVICE fields */
        const char *keyspec;       /* KEYFILE[:KEYDEVICE] field, NULL if absent ("-", "none" verbatim) */
        const char *options;       /* OPTIONS field, NULL if absent */
        unsigned line;             /* 1-based line number */
        bool extra_fields;         /* a fifth field was there; it and the rest of the line are ignored */
} CrypttabEntry;

/* Called per line that is neither blank nor a comment; the strings live until it returns. A negative
 * return stops the walk. */
typedef int (*crypttab_entry_t)(const CrypttabEntry *e, void *data);

/* Walks the crypttab at path: lines whose first non-blank character is '#' and blank lines are skipped;
 * fields are separated by whitespace, with no quoting (as 252's sscanf("%ms %ms %ms %ms")). Returns 0,
 * -ENOENT if there is no such file, another negative errno if it cannot be read, or the first negative
 * callback result. */
int crypttab_parse(const char *path, crypttab_entry_t cb, void *data);
/* The same over crypttab text in memory, which it cuts up in place. */
int crypttab_parse_buffer(char *text, crypttab_entry_t cb, void *data);

/* Splits "FILE[:DEVICE]" at the last ':' if what follows maps to an absolute path with
 * devspec_to_node() (LABEL=, UUID=, PARTUUID=, PARTLABEL=, /dev/...); otherwise the colon is part of the
 * file name (systemd 252's split_locationspec()). A NULL spec gives two NULLs; *ret_device is the udev
 * node. Returns 0 or -ENOMEM. */
int crypttab_split_keyspec(const char *spec, char **ret_file, char **ret_device);
