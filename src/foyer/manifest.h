/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The manifest is the plan of the image: an ordered, deduplicated list of entries, each with the
 * place it comes from and the reason it is there. Stages add entries; the cpio writer and the
 * printers only read it. Paths are absolute image paths in merged-/usr form. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

typedef enum EntryType {
        ENTRY_DIRECTORY,
        ENTRY_FILE,             /* copied from source */
        ENTRY_DATA,             /* content held in memory */
        ENTRY_SYMLINK,
        ENTRY_CHAR_DEVICE,
        _ENTRY_TYPE_MAX,
        _ENTRY_TYPE_INVALID = -EINVAL,
} EntryType;

typedef struct Entry {
        char *path;
        EntryType type;
        uint32_t mode;          /* permission bits only */
        char *source;           /* ENTRY_FILE: file on the build host */
        char *target;           /* ENTRY_SYMLINK */
        char *data;             /* ENTRY_DATA */
        size_t size;            /* ENTRY_DATA: length; ENTRY_FILE: filled at emit time */
        dev_t source_dev;       /* ENTRY_FILE: identity of the source, to keep hard links once */
        ino_t source_ino;
        unsigned rdev_major, rdev_minor; /* ENTRY_CHAR_DEVICE */
        char *reason;
        bool secret;            /* a key file: mode 0400, and the image holding it is written 0600 */
        struct ElfFile *elf;    /* ENTRY_FILE: its ELF parse, made once by elf_file_read_entry() */
        int elf_error;          /* ... or why it is not one (negative errno; 0: not parsed yet) */
        bool host_built;        /* foyer's own program, built on the build host, not taken from the tree */
} Entry;

typedef struct Manifest {
        Entry **entries;
        size_t n_entries, n_allocated;
        void *index;            /* tsearch() tree over paths */
        char *root;             /* source tree, "/" for the host */
        int root_fd;            /* the tree (O_PATH), when it is not the host: -EBADF otherwise */
        char *root_path;        /* its path with no symlink (what path_in_root() returns paths below) */
} Manifest;

/* Returns a new empty manifest reading from root (NULL means the host); release with
 * manifest_free(). */
int manifest_new(const char *root, Manifest **ret);
Manifest *manifest_free(Manifest *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manifest *, manifest_free);

Entry *manifest_find(Manifest *m, const char *path);
/* Follows symlink entries inside the image from path (in merged-/usr form, so /bin/x is
 * /usr/bin/x) to the entry they end at; NULL if that is missing or the links go deeper than 32. */
Entry *manifest_resolve(Manifest *m, const char *path);

/* Each add function creates the missing parent directories, returns 1 when the entry was added,
 * 0 when an equal entry already existed, -EEXIST when a different entry holds the path. */
int manifest_add_directory(Manifest *m, const char *path, uint32_t mode, const char *reason);
int manifest_add_symlink(Manifest *m, const char *path, const char *target, const char *reason);
int manifest_add_data(Manifest *m, const char *path, uint32_t mode, const void *data, size_t size,
                      const char *reason);
int manifest_add_char_device(Manifest *m, const char *path, uint32_t mode, unsigned major, unsigned minor,
                             const char *reason);
/* Adds a regular file copied from source: a path on the build host, or one below the tree that
 * path_in_root() returned. A source below the tree is opened again from the tree with no symlink
 * allowed on the way (a tree changed since it was resolved cannot make it a host file), and what is
 * recorded is the identity of the file found so, which manifest_open_source() checks again when the
 * bytes are read. -EBADFD (logged) when it is not a regular file. */
int manifest_add_file(Manifest *m, const char *path, const char *source, const char *reason);
/* Opens e's source (ENTRY_FILE) for reading as manifest_add_file() found it: from the tree with no
 * symlink on the way, and only if it is still the same file (device and inode) it was when planned.
 * -ESTALE (logged) when it is not: the tree changed during the build. Returns the descriptor. */
int manifest_open_source(Manifest *m, const Entry *e);
/* Reads the whole of e's source through manifest_open_source(). */
int manifest_read_source(Manifest *m, const Entry *e, char **ret, size_t *ret_size);

/* Adds the path as it exists in the source tree, following symlinks: each link becomes a
 * symlink entry and its target is added too. With ret_final, returns the image path of the
 * final non-link object. -ENOENT when the path (or a link target) does not exist. */
int manifest_add_from_root(Manifest *m, const char *path, const char *reason, char **ret_final);

/* Marks the entry as a secret (a key file): mode 0400. The reason is left as it is; what makes the
 * image secret is the flag, see manifest_secrets(). */
void manifest_mark_secret(Entry *e);
/* Marks the entry as one of foyer's own programs (a generator, foyer-explain): it was built on the
 * build host and runs with the tree's libraries, so the closure check compares the symbol versions
 * it needs with the ones they define. */
void manifest_mark_host_built(Entry *e);

/* Returns the paths of the entries marked secret, sorted (NULL when there are none). */
int manifest_secrets(Manifest *m, char ***ret);

/* Calls f for each entry sorted by path (byte order). */
int manifest_foreach_sorted(Manifest *m, int (*f)(Entry *e, void *userdata), void *userdata);
