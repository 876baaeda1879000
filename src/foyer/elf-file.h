/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer's own ELF64 reader: what the dynamic loader needs from a binary (PT_INTERP, DT_NEEDED,
 * DT_RPATH, DT_RUNPATH) plus the libraries named in FDO .note.dlopen notes, and a library search
 * that follows ld.so's order within a source tree. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf-dlopen.h"
#include "elf-version.h"
#include "macro.h"
#include "manifest.h"

typedef struct ElfFile {
        uint16_t machine;
        uint16_t type;          /* ET_EXEC, ET_DYN, ... */
        char *interp;           /* PT_INTERP, or NULL */
        char **needed;          /* DT_NEEDED, in order */
        char **rpath;           /* DT_RPATH entries, split on ':' */
        char **runpath;         /* DT_RUNPATH entries */
        char **dlopen;          /* sonames from .note.dlopen, in order */
        DlopenFeature *dlopen_features; /* the same by feature, with their priorities */
        size_t n_dlopen_features;
        ElfVersionNeed *version_needs;  /* DT_VERNEED: the symbol versions it needs, by library */
        size_t n_version_needs;
        char **version_defs;    /* DT_VERDEF: the versions it defines (NULL: none, or no table) */
        bool has_version_defs;  /* it has a DT_VERDEF table */
} ElfFile;

/* Parses path. Returns -ENOEXEC if it is not a 64-bit little-endian ELF file, or if it is an ELF
 * file without dynamic linking information (relocatable objects such as kernel modules);
 * -EBADMSG if it is ELF but malformed, or a .note.dlopen is not the documented JSON. Release with elf_file_free(). */
int elf_file_read(const char *path, ElfFile **ret);
/* The same from an open file. */
int elf_file_read_fd(int fd, ElfFile **ret);
/* The same for a manifest entry's source, opened by manifest_open_source() (the file planned), parsed
 * once: the ELF file is the entry's, valid as long as the manifest (do not free it). An error is
 * kept and returned again. */
int elf_file_read_entry(Manifest *m, const Entry *e, const ElfFile **ret);
/* The same on a file's bytes in memory, at any alignment. A file with a second PT_INTERP, DT_RPATH,
 * DT_RUNPATH, DT_VERNEED or DT_VERDEF, a version table without its count, or with an offset or size
 * that points outside data, is malformed (-EBADMSG). */
int elf_file_parse(const uint8_t *data, size_t size, ElfFile **ret);
ElfFile *elf_file_free(ElfFile *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(ElfFile *, elf_file_free);

/* Returns the loader's search path of the source tree: the directories of
 * ROOT/etc/ld.so.conf with its include globs, then the built-in defaults, in merged-/usr form and
 * without duplicates. */
int elf_search_path(const char *root, char ***ret);

/* Finds the file the loader would map for name when requester (whose image path lies in
 * origin_dir) asks for it: RPATH (when there is no RUNPATH), RUNPATH with $ORIGIN expanded,
 * then the search path. Candidates of another machine type are skipped. Returns the image path
 * (within root) in ret, or -ENOENT. */
int elf_find_library(const char *root, const char *name, const ElfFile *requester,
                     const char *origin_dir, char * const *search_path, char **ret);
