/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "elf-file.h"
#include "log.h"
#include "resolve.h"
#include "util.h"

static int add_library(Manifest *m, const Entry *who, const ElfFile *f, const char *name, bool required,
                       char * const *search_path) {
        _cleanup_free_ char *origin = NULL, *found = NULL, *reason = NULL, *search = NULL;
        int r;

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

int resolve_libraries(Manifest *m, char * const *search_path) {
        int r;

        /* Entries appended while we go are visited too. */
        for (size_t i = 0; i < m->n_entries; i++) {
                _cleanup_(elf_file_freep) ElfFile *f = NULL;
                Entry *e = m->entries[i];

                if (e->type != ENTRY_FILE || !(e->mode & 0111 || strstr(e->path, ".so")))
                        continue;

                r = elf_file_read(e->source, &f);
                if (r == -ENOEXEC)
                        continue;
                if (r < 0)
                        return log_error_errno(r, "Failed to parse ELF file %s: %m", e->source);

                if (f->interp) {
                        _cleanup_free_ char *reason = strjoin("interpreter of ", e->path);

                        if (!reason)
                                return log_oom();
                        r = manifest_add_from_root(m, f->interp, reason, NULL);
                        if (r == -ENOENT)
                                return log_error_errno(r, "Interpreter %s of %s not found.", f->interp, e->path);
                        if (r < 0 && r != -EEXIST)
                                return log_error_errno(r, "Failed to add interpreter %s: %m", f->interp);
                }

                STRV_FOREACH(n, f->needed) {
                        r = add_library(m, e, f, *n, true, search_path);
                        if (r < 0)
                                return r;
                        e = m->entries[i];      /* the array may have moved */
                }
                STRV_FOREACH(n, f->dlopen) {
                        r = add_library(m, e, f, *n, false, search_path);
                        if (r < 0)
                                return r;
                        e = m->entries[i];
                }
        }
        return 0;
}
