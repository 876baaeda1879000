/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The shared-library closure: every ELF file in the manifest gets its interpreter, its
 * DT_NEEDED libraries (an error when one is missing, naming who needs it) and the libraries of
 * its .note.dlopen notes (with RESOLVE_DLOPEN), until nothing new appears. A dlopen() feature whose
 * libraries are all missing is an error when its note marks it "required" (every such program is
 * named before the build fails), a warning when "recommended", a debug message when "suggested". */

#include "manifest.h"

typedef enum ResolveFlags {
        RESOLVE_DLOPEN = 1 << 0,        /* also what .note.dlopen (or, before 256, elf-dlopen.c's list) names */
} ResolveFlags;

/* search_path: the directories searched after RPATH/RUNPATH, in order (the loader's default path of
 * the root). Returns 0, -ENOENT when a required dlopen() feature is missing, or the first other
 * error (all logged). */
int resolve_libraries(Manifest *m, char * const *search_path, ResolveFlags flags);
/* The same, leaving out the dlopen() features named in skip (a host-only image without dm-crypt
 * needs no "cryptsetup"). */
int resolve_libraries_skip(Manifest *m, char * const *search_path, ResolveFlags flags, char * const *skip);
