/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>

#include "elf-file.h"
#include "log.h"
#include "resolve.h"
#include "util.h"

static int add_library(Manifest *m, const Entry *who, const ElfFile *f, const char *name, bool required,
                       char * const *search_path) {
        _cleanup_free_ char *origin = NULL, *found = NULL, *reason = NULL, *search = NULL;
        int r;

        assert(m);
        assert(who);
        assert(f);
        assert(name);

        origin = path_dirname(who->path);
        if (!origin)
                return log_oom();

        r = elf_find_library(m->root, name, f, origin, search_path, &found);
        if (r == -ENOENT && !strchr(name, '/')) {
                /* The loader matches a soname against the objects already loaded before searching:
                 * libsystemd-core finds libsystemd-shared through the RUNPATH of the executable
                 * that loaded both. An image file with that name stands in for this. */
                for (size_t i = 0; i < m->n_entries; i++) {
                        const Entry *e = m->entries[i];

                        if ((e->type == ENTRY_FILE || e->type == ENTRY_SYMLINK) &&
                            streq(path_basename(e->path), name)) {
                                log_debug("%s (for %s) resolved to %s, already in the image.", name, who->path,
                                          e->path);
                                return 0;
                        }
                }
        }
        if (r == -ENOENT) {
                if (!required) {
                        log_debug("%s (dlopen()ed by %s) is not installed, skipping.", name, who->path);
                        return 0;
                }
                search = strdup("");
                STRV_FOREACH(d, search_path) {
                        char *t = strjoin(strempty(search), *search ? ":" : "", *d);
                        free(search);
                        search = t;
                }
                return log_error_errno(r, "Library %s needed by %s (from %s) not found in %s (RPATH/RUNPATH, %s).",
                                       name, who->path, who->reason, streq(m->root, "/") ? "/" : m->root,
                                       strna(search));
        }
        if (r < 0)
                return log_error_errno(r, "Failed to look up %s for %s: %m", name, who->path);

        reason = strjoin(required ? "needed by " : "dlopen()ed by ", who->path);
        if (!reason)
                return log_oom();
        r = manifest_add_from_root(m, found, reason, NULL);
        if (r < 0 && r != -EEXIST)
                return log_error_errno(r, "Failed to add %s (for %s): %m", found, who->path);
        return 0;
}

/* PT_INTERP is what the kernel runs for the program: it must be an ELF object for the same machine,
 * never a script or data that happens to sit at that path. */
static int add_interpreter(Manifest *m, const Entry *who, const ElfFile *f) {
        _cleanup_(elf_file_freep) ElfFile *interp = NULL;
        _cleanup_free_ char *reason = NULL, *final = NULL;
        const Entry *e;
        int r;

        assert(m);
        assert(who);
        assert(f && f->interp);

        reason = strjoin("interpreter of ", who->path);
        if (!reason)
                return log_oom();
        r = manifest_add_from_root(m, f->interp, reason, &final);
        if (r == -ENOENT)
                return log_error_errno(r, "Interpreter %s of %s not found.", f->interp, who->path);
        if (r == -EEXIST)       /* another entry, planned on purpose, holds the path */
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to add interpreter %s: %m", f->interp);

        e = manifest_find(m, final);
        if (!e || e->type != ENTRY_FILE)
                return log_error_errno(SYNTHETIC_ERRNO(ENOEXEC), "Interpreter %s of %s is not a regular file.",
                                       f->interp, who->path);
        r = elf_file_read(e->source, &interp);
        if (r == -ENOEXEC || r == -EBADMSG || (r >= 0 && interp->machine != f->machine))
                return log_error_errno(SYNTHETIC_ERRNO(ENOEXEC),
                                       "Interpreter %s of %s (%s) is not an ELF program for its machine.",
                                       f->interp, who->path, e->source);
        if (r < 0)
                return log_error_errno(r, "Failed to read interpreter %s (%s): %m", f->interp, e->source);
        return 0;
}

int resolve_libraries(Manifest *m, char * const *search_path) {
        int r;

        assert(m);

        /* Entries appended while we go are visited too. Adding one may move the array of pointers
         * (realloc), never an Entry itself, so e stays valid across the additions below. */
        for (size_t i = 0; i < m->n_entries; i++) {
                _cleanup_(elf_file_freep) ElfFile *f = NULL;
                const Entry *e = m->entries[i];

                if (e->type != ENTRY_FILE || !(e->mode & 0111 || strstr(e->path, ".so")))
                        continue;

                r = elf_file_read(e->source, &f);
                if (r == -ENOEXEC)
                        continue;
                if (r < 0)
                        return log_error_errno(r, "Failed to parse ELF file %s: %m", e->source);

                if (f->interp) {
                        r = add_interpreter(m, e, f);
                        if (r < 0)
                                return r;
                }

                STRV_FOREACH(n, f->needed) {
                        r = add_library(m, e, f, *n, true, search_path);
                        if (r < 0)
                                return r;
                }
                STRV_FOREACH(n, f->dlopen) {
                        r = add_library(m, e, f, *n, false, search_path);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}
