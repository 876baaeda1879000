/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The closure check (closure.h). The planners add what the tree has; this is where what the tree
 * lacks becomes a build error instead of a unit that fails at boot. */

#include <assert.h>
#include <dirent.h>

#include "closure.h"
#include "elf-file.h"
#include "fileio.h"
#include "log.h"
#include "parse-util.h"
#include "plan-shell.h"
#include "plan-util.h"
#include "unit-info.h"
#include "util.h"

/* The programs of udev rules whose absence only costs a feature: the build goes on with a warning
 * naming it. (A unit that runs one of them still needs it.) */
static const struct {
        const char *path;
        const char *feature;
} optional_programs[] = {
        { "/usr/lib/udev/cdrom_id",     "CD-ROM media detection (60-cdrom_id.rules)" },
        { "/usr/lib/udev/ata_id",       "ATA disk names in /dev/disk/by-id" },
        { "/usr/lib/udev/scsi_id",      "SCSI disk names in /dev/disk/by-id" },
        { "/usr/bin/btrfs",             "multi-device btrfs" },
        { "/usr/lib/systemd/systemd-sysctl", "per-interface sysctl settings" },
};

static const char *optional_feature(const char *path) {
        for (size_t i = 0; i < ELEMENTSOF(optional_programs); i++)
                if (streq(optional_programs[i].path, path))
                        return optional_programs[i].feature;
        return NULL;
}

static const char *root_name(Manifest *m) {
        return streq(m->root, "/") ? "the build host" : m->root;
}

/* Checks that program (as a unit or rule names it) is in the image. A miss is an error counted in
 * n_errors, or, for a rule, a warning when the program is an optional feature's (optional_programs[]). Misses
 * that systemd handles by design are debug messages: the unit's own condition (guard) skips it at
 * boot (foyer-explain without FOYER_HELPER_DIR), or the unit ignores the command's failure ("-"
 * prefix: plymouth in emergency.service). Returns 1 if present. */
static int check_program(Manifest *m, const char *who, const char *what, const char *program, bool rule,
                         char **guards, bool ignore_failure, unsigned *n_errors) {
        _cleanup_free_ char *path = NULL;
        const char *feature;
        int r;

        r = unit_program_find(m, program, &path);
        if (r == -ENOMEM)
                return log_oom();
        if (r >= 0 && manifest_resolve(m, path))
                return 1;

        feature = rule ? optional_feature(path) : NULL;
        if (feature) {
                log_warning("%s: %s %s is not in the image (%s in %s): %s will not work.", who, what, path,
                            r < 0 ? "missing" : "present", root_name(m), feature);
                return 0;
        }
        STRV_FOREACH(g, guards) {
                _cleanup_free_ char *gp = path_merge_usr(*g);

                if (!gp)
                        return log_oom();
                if (streq(gp, path)) {
                        log_debug("%s: %s %s is not in the image: the unit will be skipped at boot by its condition.",
                                    who, what, path);
                        return 0;
                }
        }
        if (ignore_failure) {
                log_debug("%s: %s-%s is not in the image (%s in %s): the unit goes on without it.", who, what,
                            path, r < 0 ? "missing" : "present", root_name(m));
                return 0;
        }
        log_error("%s: %s %s is not in the image (%s in %s).", who, what, path, r < 0 ? "missing" : "present",
                  root_name(m));
        (*n_errors)++;
        return 0;
}

/* The libsystemd-core-NNN.so of the image, for its version: 0 when there is none. */
static unsigned systemd_version(Manifest *m) {
        for (size_t i = 0; i < m->n_entries; i++) {
                const char *v = startswith(path_basename(m->entries[i]->path), "libsystemd-core-");
                _cleanup_free_ char *num = NULL;
                unsigned version;

                if (!v)
                        continue;
                num = strndup(v, strspn(v, "0123456789"));
                if (num && safe_atou(num, &version) >= 0)
                        return version;
        }
        return 0;
}

static int check_units(Manifest *m, const BuildConfig *c, unsigned *n_errors) {
        int r;

        for (size_t i = 0; i < m->n_entries; i++) {
                _cleanup_(unit_info_done) UnitInfo u = {};
                const char *name = startswith(m->entries[i]->path, UNITDIR "/");

                if (!name || strchr(name, '/') || m->entries[i]->type == ENTRY_DIRECTORY)
                        continue;
                if (!manifest_resolve(m, m->entries[i]->path)) {
                        log_error("Unit %s: the link %s points to nothing in the image.", name, m->entries[i]->path);
                        (*n_errors)++;
                        continue;
                }
                r = unit_info_read(m, name, &u);
                if (r < 0)
                        return r;
                STRV_FOREACH(x, u.exec) {
                        _cleanup_free_ char *who = strjoin("Unit ", name), *what = strndup(*x, strchr(*x, '=') - *x + 1);
                        const char *prog = strchr(*x, '=') + 1;
                        bool ignore = *prog == '-';
                        _cleanup_free_ char *merged = path_merge_usr(prog + ignore);

                        if (!who || !what || !merged)
                                return log_oom();
                        if (plan_shell_excludes(c, merged)) {
                                log_debug("%s: %s%s left out by --no-shell.", who, what, prog + ignore);
                                continue;
                        }
                        r = check_program(m, who, what, prog + ignore, false, u.guards, ignore, n_errors);
                        if (r < 0)
                                return r;
                }
                STRV_FOREACH(d, u.hard) {
                        if (strchr(*d, '%') || unit_in_image(m, *d))
                                continue;
                        log_error("Unit %s: it requires %s, which is not in the image (%s in %s).", name, *d,
                                  "not installed", root_name(m));
                        (*n_errors)++;
                }
        }
        return 0;
}

int plan_closure_units(Manifest *m, const BuildConfig *c) {
        unsigned n_errors = 0;
        int r;

        r = check_units(m, c, &n_errors);
        if (r < 0)
                return r;
        if (n_errors > 0)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "Closure check: %u unit program(s) or unit(s) missing; the image would fail to boot.",
                                       n_errors);
        return 0;
}

/* The program of a RUN/IMPORT{program}/PROGRAM value: the first word; relative names are looked
 * up in /usr/lib/udev as udevd does. NULL (0) for values that are not a program path known at
 * build time ("$env{REMOVE_CMD}"). */
static int rule_program(const char *value, char **ret) {
        size_t n = strcspn(value, " \t");
        _cleanup_free_ char *word = NULL;

        *ret = NULL;
        if (n == 0 || value[0] == '$' || value[0] == '%')
                return 0;
        word = strndup(value, n);
        if (!word)
                return -ENOMEM;
        *ret = word[0] == '/' ? TAKE_PTR(word) : strjoin("/usr/lib/udev/", word);
        return *ret ? 0 : -ENOMEM;
}

/* Finds KEY{program}="..." / KEY="..." / KEY+="..." in a rule line. */
static int check_rule_line(Manifest *m, const char *file, unsigned line, const char *text, unsigned *n_errors) {
        static const char *const keys[] = { "RUN{program}", "IMPORT{program}", "PROGRAM", "RUN" };
        int r;

        for (const char *p = text; *p; ) {
                const char *key = NULL, *q = NULL;

                /* The next key at a token start. */
                for (; *p; p++) {
                        if (p != text && !(p[-1] == ' ' || p[-1] == '\t' || p[-1] == ','))
                                continue;
                        for (size_t i = 0; i < ELEMENTSOF(keys) && !key; i++)
                                if (startswith(p, keys[i])) {
                                        const char *rest = p + strlen(keys[i]);

                                        rest = startswith(rest, "+=") ?: startswith(rest, ":=") ?:
                                               startswith(rest, "==") ? NULL : startswith(rest, "=");
                                        if (rest && *rest == '"') {
                                                key = keys[i];
                                                q = rest + 1;
                                        }
                                }
                        if (key)
                                break;
                }
                if (!key)
                        break;

                const char *end = strchr(q, '"');
                _cleanup_free_ char *value = end ? strndup(q, end - q) : strdup(q), *prog = NULL,
                                    *who = NULL, *what = NULL;
                char num[32];

                if (!value)
                        return log_oom();
                r = rule_program(value, &prog);
                if (r < 0)
                        return log_oom();
                snprintf(num, sizeof(num), "%u", line);
                if (prog) {
                        who = strjoin(file, ":", num);
                        what = strjoin(key, " program");
                        if (!who || !what)
                                return log_oom();
                        r = check_program(m, who, what, prog, true, NULL, false, n_errors);
                        if (r < 0)
                                return r;
                }
                p = end ? end + 1 : q + strlen(q);
        }
        return 0;
}

static int check_rules(Manifest *m, unsigned *n_errors) {
        int r;

        for (size_t i = 0; i < m->n_entries; i++) {
                Entry *e = m->entries[i];
                _cleanup_free_ char *text = NULL;
                unsigned n = 0;

                if (!startswith(e->path, RULESDIR "/") || !endswith(e->path, ".rules"))
                        continue;
                e = manifest_resolve(m, e->path);
                if (!e)
                        continue;
                if (e->type == ENTRY_FILE) {
                        r = manifest_read_source(m, e, &text, NULL);
                        if (r < 0)
                                return log_error_errno(r, "Failed to read %s: %m", e->source);
                } else if (e->type == ENTRY_DATA) {
                        text = strndup(e->data, e->size);
                        if (!text)
                                return log_oom();
                } else
                        continue;
                /* Keep empty lines, so that line numbers are the file's. */
                for (char *p = text, *nl; p; p = nl ? nl + 1 : NULL) {
                        nl = strchr(p, '\n');
                        if (nl)
                                *nl = 0;
                        n++;
                        p += strspn(p, " \t");
                        if (*p == '#' || *p == 0)
                                continue;
                        r = check_rule_line(m, m->entries[i]->path, n, p, n_errors);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* The file the image has under the library name (resolving links): the loader's pick, since the
 * image's ld.so.cache lists each name once. NULL if there is none. */
static Entry *library_in_image(Manifest *m, const char *name) {
        for (size_t i = 0; i < m->n_entries; i++) {
                Entry *e;

                if (!streq(path_basename(m->entries[i]->path), name))
                        continue;
                e = manifest_resolve(m, m->entries[i]->path);
                if (e)
                        return e;
        }
        return NULL;
}

static int check_libraries(Manifest *m, unsigned *n_errors) {
        int r;

        for (size_t i = 0; i < m->n_entries; i++) {
                const ElfFile *f = NULL;
                Entry *e = m->entries[i];

                if (e->type != ENTRY_FILE || !(e->mode & 0111 || strstr(e->path, ".so")))
                        continue;
                r = elf_file_read_entry(m, e, &f);
                if (r == -ENOEXEC)
                        continue;
                if (r < 0)
                        return log_error_errno(r, "Failed to parse ELF file %s: %m", e->source);
                if (f->interp && !manifest_resolve(m, f->interp)) {
                        log_error("%s: its interpreter %s is not in the image.", e->path, f->interp);
                        (*n_errors)++;
                }
                STRV_FOREACH(n, f->needed)
                        if (!library_in_image(m, *n)) {
                                log_error("%s: the library %s it needs is not in the image.", e->path, *n);
                                (*n_errors)++;
                        }
        }
        return 0;
}

/* One symbol-version need of a host-built program against the library the image has for it. */
static int check_version_need(Manifest *m, const Entry *prog, const ElfVersionNeed *need, unsigned *n_errors) {
        const ElfFile *lib = NULL;
        _cleanup_strv_free_ char **missing = NULL;
        _cleanup_free_ char *list = NULL;
        Entry *e;
        int r;

        e = library_in_image(m, need->file);
        if (!e || e->type != ENTRY_FILE)
                return 0;       /* check_libraries() names the missing library */
        r = elf_file_read_entry(m, e, &lib);
        if (r < 0)
                return log_error_errno(r, "Failed to parse ELF file %s: %m", e->source);
        if (!lib->has_version_defs) {
                /* ld.so only warns then ("no version information available"). */
                log_warning("%s: %s in the image (%s) defines no symbol versions; %s needs %s of it.",
                            prog->path, need->file, e->source, path_basename(prog->path), need->versions[0]);
                return 0;
        }
        STRV_FOREACH(v, need->versions) {
                if (strv_contains(lib->version_defs, *v))
                        continue;
                if (strv_contains(need->weak, *v)) {
                        log_debug("%s: weak version %s of %s is not defined by %s; ld.so goes on.", prog->path, *v,
                                  need->file, e->source);
                        continue;
                }
                if (strv_extend(&missing, *v) < 0)
                        return log_oom();
        }
        if (strv_isempty(missing))
                return 0;

        list = strv_join(missing, ", ");
        if (!list)
                return log_oom();
        log_error("%s (foyer's own, built on the build host as %s) needs %s of %s, which %s in %s does not define "
                  "(its newest is %s): the loader would refuse to start it in the image.",
                  prog->path, prog->source, list, need->file, e->source, root_name(m),
                  strv_isempty(lib->version_defs) ? "none" : lib->version_defs[strv_length(lib->version_defs) - 1]);
        (*n_errors)++;
        return 0;
}

/* foyer's own programs are built on the build host, which may be newer than the tree: every symbol
 * version they need (glibc, libmount, libblkid, ...) must be defined by the tree's library the image
 * holds, or they stop at boot with "version `GLIBC_2.38' not found". */
static int check_host_built(Manifest *m, unsigned *n_errors) {
        unsigned before = *n_errors;
        int r;

        for (size_t i = 0; i < m->n_entries; i++) {
                const ElfFile *f = NULL;
                Entry *e = m->entries[i];

                if (e->type != ENTRY_FILE || !e->host_built)
                        continue;
                r = elf_file_read_entry(m, e, &f);
                if (r == -ENOEXEC)
                        continue;
                if (r < 0)
                        return log_error_errno(r, "Failed to parse ELF file %s: %m", e->source);
                for (size_t j = 0; j < f->n_version_needs; j++) {
                        r = check_version_need(m, e, &f->version_needs[j], n_errors);
                        if (r < 0)
                                return r;
                }
        }
        if (*n_errors > before)
                log_error("foyer's programs were built against newer libraries than %s has: build foyer on, or for, "
                          "a system no newer than the tree (for example inside a chroot of the tree's suite) and "
                          "point FOYER_GENERATOR_DIR and FOYER_HELPER_DIR at that build.", root_name(m));
        return 0;
}

int closure_check(Manifest *m) {
        unsigned n_errors = 0, version;
        int r = 0;

        assert(m);

        /* Every check runs and reports what it finds, whatever the others gave: one build names
         * everything missing. */
        RET_GATHER(r, check_rules(m, &n_errors));
        RET_GATHER(r, check_libraries(m, &n_errors));
        RET_GATHER(r, check_host_built(m, &n_errors));
        if (r < 0)
                return r;
        /* From 255 on PID 1 forks every service through systemd-executor ("Failed to allocate manager
         * object" without it). */
        version = systemd_version(m);
        if (version >= 255 && !manifest_resolve(m, "/usr/lib/systemd/systemd-executor")) {
                log_error("systemd %u: /usr/lib/systemd/systemd-executor is not in the image (missing in %s); PID 1 cannot start.",
                          version, root_name(m));
                n_errors++;
        }
        if (n_errors > 0)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "Closure check: %u program(s), librar(ies) or symbol version(s) missing; the image would fail to boot.",
                                       n_errors);
        return 0;
}
