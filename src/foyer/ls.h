/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer ls: lists an initrd like lsinitrd (mode, size, path, link target). Reads every
 * compression foyer writes, and several concatenated archives (for example an uncompressed early
 * microcode archive followed by a compressed main one). */

#include <stdint.h>
#include <stdio.h>

#include "cpio.h"

/* foyer ls IMAGE: the entries on stdout, one a line (mode, size, path, " -> target"; for a UKI its
 * sections first); a header (the image's size, each archive's offset and compression) and a
 * summary (entries, files and their bytes, directories, symlinks, other) on stderr. */
int ls_image(const char *path);

/* foyer ls --json IMAGE: the same as one JSON document on stdout (nothing on stderr but errors):
 * {"image", "size", "format" ("initrd" or "uki"), "archives": [{"section" (a UKI's ".ucode" or
 * ".initrd", else null), "offset", "compression" ("none", "zstd", ...), "entries": [{"path",
 * "type", "mode" (octal string), "size", "uid", "gid", for devices "major" and "minor", for
 * symlinks "target"}]}], "summary": {...}}. Strings are UTF-8 with control characters escaped; a
 * name that is not valid UTF-8 has U+FFFD for each bad byte, and "path_hex" ("target_hex") with
 * all its bytes in hex. On an error, the document printed so far is incomplete (and the exit
 * status says so). */
int ls_image_json(const char *path);

/* foyer ls IMAGE PATH: the data of the regular file PATH in the image (or in a UKI's initrd) on
 * stdout, byte for byte. PATH may start with "/" or "./". The first entry of that name counts.
 * An error naming PATH when it is missing, a directory or a symlink. */
int ls_cat(const char *image, const char *path);

/* Whether data is an initrd as foyer ls reads it: one or more cpio archives, each uncompressed or
 * compressed, nothing else (a UKI is refused). Logs what is wrong, naming path. With ret_key, also
 * whether it holds a key: the first regular file that others may not read, or that is where foyer's
 * contract puts keys (FOYER_SSH_HOST_KEY_DIR, FOYER_CRYPT_KEYS_DIR), or /etc/shadow or /etc/gshadow
 * with a password hash (whatever their mode: foyer's own /etc/shadow is 0600 with root locked),
 * described ("/PATH (mode 0400)", escaped), or NULL when none is. */
int ls_check_initrd(const char *path, const uint8_t *data, size_t size, char **ret_key);

/* Lists the image in data (named path in messages) to out. Memory use is bounded whatever the
 * input; max_expanded > 0 also refuses (-EFBIG) input that decompresses to more than that many
 * bytes in all, for callers that bound time too (the fuzzer). Logs its errors. */
int ls_data(const char *path, const uint8_t *data, size_t size, FILE *out, uint64_t max_expanded);

/* What ls_visit() hands its caller: every entry of the image in archive order, its name without
 * a leading "/" or "./", entry() once the entry is complete and, for a regular file, its data to
 * data() before that, a piece at a time (data may be NULL). A negative return stops the walk and is
 * returned. */
typedef struct LsVisitor {
        int (*entry)(const CpioEntry *e, void *userdata);
        int (*data)(const CpioEntry *e, const uint8_t *chunk, size_t n, void *userdata);
        void *userdata;
} LsVisitor;

/* Reads the initrd or UKI at path once, for a caller that takes things out of it (foyer preview).
 * Memory use is bounded as ls_data()'s, and max_expanded > 0 refuses (-EFBIG) an image that
 * decompresses to more than that. With ret_uki_cmdline, a UKI's .cmdline section as text (up to its
 * first NUL), or NULL when the image is no UKI or has none. Refuses, naming path, a file that is
 * missing, unreadable, no initrd or UKI, or holds no cpio archive. Logs its errors. */
int ls_visit(const char *path, const LsVisitor *v, uint64_t max_expanded, char **ret_uki_cmdline);
