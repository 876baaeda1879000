/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The GNU symbol-version tables of an ELF file: what it needs (.gnu.version_r, DT_VERNEED: "GLIBC_2.34
 * of libc.so.6", "MOUNT_2_40 of libmount.so.1") and what it defines (.gnu.version_d, DT_VERDEF). The
 * dynamic loader refuses to start a program when a library lacks a version the program needs; the
 * closure check compares the two for foyer's own programs, which are built on the build host and
 * run with the tree's libraries. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef struct ElfVersionNeed {
        char *file;             /* vn_file: the soname of the library that defines them */
        char **versions;        /* vna_name of each entry, in order; never empty */
        char **weak;            /* those of them marked VER_FLG_WEAK (ld.so does not insist) */
} ElfVersionNeed;

/* Parses count Elf64_Verneed entries (DT_VERNEEDNUM) at the start of table, which holds the size bytes
 * the file has from there on, with names in the string table strtab of strsz bytes. Strict: every
 * entry and auxiliary entry must lie inside table, vn_version must be 1, a chain that ends (offset 0)
 * before its count or points backwards into itself, a name outside strtab or an empty one is
 * malformed (-EBADMSG). Appends to (*needs, *n) only on success. */
int elf_verneed_parse(const uint8_t *table, size_t size, uint64_t count, const uint8_t *strtab, size_t strsz,
                      ElfVersionNeed **needs, size_t *n);
void elf_version_needs_free(ElfVersionNeed *needs, size_t n);

/* Parses count Elf64_Verdef entries (DT_VERDEFNUM) in the same way, and returns the names of the
 * versions the file defines (the first Elf64_Verdaux of each entry; the VER_FLG_BASE entry, which
 * is the file's own soname, is left out) in ret, NULL when there are none. -EBADMSG as above. */
int elf_verdef_parse(const uint8_t *table, size_t size, uint64_t count, const uint8_t *strtab, size_t strsz,
                     char ***ret);
