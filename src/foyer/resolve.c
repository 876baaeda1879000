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
        const ElfFile *interp = NULL;
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
        r = elf_file_read_entry(m, e, &interp);
        if (r == -ENOEXEC || r == -EBADMSG || (r >= 0 && interp->machine != f->machine))
                return log_error_errno(SYNTHETIC_ERRNO(ENOEXEC),
                                       "Interpreter %s of %s (%s) is not an ELF program for its machine.",
                                       f->interp, who->path, e->source);
        if (r < 0)
                return log_error_errno(r, "Failed to read interpreter %s (%s): %m", f->interp, e->source);
        return 0;
}

/* Every soname of a dlopen() feature that the tree has goes in, whatever its priority: a
 * "suggested" library is only installed when the tree's owner wants the feature (libcryptsetup for
 * systemd-cryptsetup, libtss2 for TPM2 unlocking). A list of several sonames names alternatives
 * (libbpf.so.1, libbpf.so.0): the feature is missing when none is there. What that means is the
 * note's priority, which from systemd 262 on is real for each program (systemd-cryptsetup marks
 * "cryptsetup" required, libsystemd-shared marks everything suggested): a missing "required"
 * feature is an error naming the file whose note it is (and, for a library, why the library is in
 * the image: "needed by" the program), "recommended" a warning, "suggested" a debug message.
 * Returns 0, 1 when a required feature is missing (logged), or a negative errno (logged). */
static int add_dlopen_feature(Manifest *m, size_t i, const ElfFile *f, const DlopenFeature *d,
                              char * const *search_path) {
        const Entry *e;
        bool found_any = false;
        int r;

        STRV_FOREACH(n, d->sonames) {
                _cleanup_free_ char *origin = NULL, *found = NULL, *reason = NULL;

                e = m->entries[i];      /* the array may move while adding */
                origin = path_dirname(e->path);
                if (!origin)
                        return log_oom();
                r = elf_find_library(m->root, *n, f, origin, search_path, &found);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return log_error_errno(r, "Failed to look up %s for %s: %m", *n, e->path);
                reason = strjoin("dlopen()ed by ", e->path, " (", d->feature ?: "unnamed feature", ", ",
                                 dlopen_priority_to_string(d->priority), ")");
                if (!reason)
                        return log_oom();
                r = manifest_add_from_root(m, found, reason, NULL);
                if (r < 0 && r != -EEXIST)
                        return log_error_errno(r, "Failed to add %s (for %s): %m", found, e->path);
                found_any = true;
        }
        if (found_any)
                return 0;

        _cleanup_free_ char *names = strv_join(d->sonames, d->sonames[1] ? " or " : "");
        const char *tree = streq(m->root, "/") ? "/" : m->root, *why;

        if (!names)
                return log_oom();
        e = m->entries[i];
        switch (d->priority) {
        case DLOPEN_REQUIRED:
                /* A library's reason says which program pulled it in ("needed by /usr/bin/..."). */
                why = strstr(path_basename(e->path), ".so") ? e->reason : NULL;
                log_error("%s%s%s%s: required feature \"%s\" is missing, %s is not in %s: the program cannot work without it.",
                          e->path, why ? " (" : "", strempty(why), why ? ")" : "", d->feature ?: "unnamed", names, tree);
                return 1;
        case DLOPEN_RECOMMENDED:
                log_warning("%s: recommended feature \"%s\" will not work in the image, %s is not in %s.",
                            e->path, d->feature ?: "unnamed", names, tree);
                return 0;
        default:
                log_debug("%s: suggested feature \"%s\" left out, %s is not installed.", e->path,
                          d->feature ?: "unnamed", names);
                return 0;
        }
}

int resolve_libraries(Manifest *m, char * const *search_path, ResolveFlags flags) {
        return resolve_libraries_skip(m, search_path, flags, NULL);
}

int resolve_libraries_skip(Manifest *m, char * const *search_path, ResolveFlags flags, char * const *skip) {
        unsigned missing = 0;
        int r;

        assert(m);

        /* Entries appended while we go are visited too. Adding one may move the array of pointers
         * (realloc), never an Entry itself, so e stays valid across the additions below. */
        for (size_t i = 0; i < m->n_entries; i++) {
                const ElfFile *f = NULL;
                const Entry *e = m->entries[i];

                if (e->type != ENTRY_FILE || !(e->mode & 0111 || strstr(e->path, ".so")))
                        continue;

                r = elf_file_read_entry(m, e, &f);
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
                if (!(flags & RESOLVE_DLOPEN))
                        continue;
                for (size_t k = 0; k < f->n_dlopen_features; k++) {
                        const char *feature = f->dlopen_features[k].feature;

                        if (feature && strv_contains(skip, feature)) {
                                log_debug("%s: feature \"%s\" left out, as asked.", e->path, feature);
                                continue;
                        }
                        r = add_dlopen_feature(m, i, f, &f->dlopen_features[k], search_path);
                        if (r < 0)
                                return r;
                        /* Go on, so that one build names every program that lacks a required feature. */
                        missing += r;
                }
                e = m->entries[i];
        }
        if (missing > 0)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "%u required dlopen() feature%s missing from %s (see above): the image would not work.",
                                       missing, missing == 1 ? " is" : "s are", streq(m->root, "/") ? "/" : m->root);
        return 0;
}
