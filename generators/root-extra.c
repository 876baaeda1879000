/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The extra mounts and swaps of systemd 254 and later's fstab generator: systemd.mount-extra=
 * WHAT:WHERE[:FSTYPE[:OPTIONS]] and systemd.swap-extra=WHAT[:OPTIONS] (the rd. forms for the initrd's
 * own mounts; the plain ones for the host's, of which the initrd mounts those it would mount from the
 * host's fstab, below /sysroot), and the credentials fstab.extra.initrd and fstab.extra. */

#include <stdint.h>
#include <unistd.h>

#include "cmdline.h"
#include "fileio.h"
#include "log.h"
#include "parse-util.h"
#include "root-extra.h"
#include "root-fstab.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-file.h"
#include "unit-name.h"

#define EXTRA_SINCE 254U

typedef struct ExtraMount {
        bool for_initrd;        /* rd.systemd.*-extra= */
        char *what, *where, *fstype, *options;
} ExtraMount;

static ExtraMount *arg_extra;
static size_t arg_n_extra;

void extra_reset(void) {
        for (size_t i = 0; i < arg_n_extra; i++) {
                free(arg_extra[i].what);
                free(arg_extra[i].where);
                free(arg_extra[i].fstype);
                free(arg_extra[i].options);
        }
        free(arg_extra);
        arg_extra = NULL;
        arg_n_extra = 0;
}

static void free_fields(char **f, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(f[i]);
                f[i] = NULL;
        }
}

/* The next ':'-separated field of *p, C escapes decoded, empty fields kept (systemd's extract_first_word()
 * with EXTRACT_CUNESCAPE|EXTRACT_DONT_COALESCE_SEPARATORS). *p becomes NULL after the last field.
 * Returns 1 with *ret set, 0 when *p was NULL already, -EINVAL for a bad escape, -ENOMEM. */
static int extract_field(const char **p, char **ret) {
        _cleanup_free_ char *s = NULL;
        size_t n = 0;
        int r;

        if (!*p) {
                *ret = NULL;
                return 0;
        }
        /* No escape makes more bytes than its own text holds. */
        s = malloc(strlen(*p) + 1);
        if (!s)
                return -ENOMEM;
        for (;;) {
                char c = **p;

                if (c == 0) {
                        *p = NULL;
                        break;
                }
                (*p)++;
                if (c == ':')
                        break;
                if (c != '\\') {
                        s[n++] = c;
                        continue;
                }
                r = cunescape_one(p, s, &n);
                if (r < 0)
                        return r;
        }
        s[n] = 0;
        *ret = TAKE_PTR(s);
        return 1;
}

/* Splits value into at most n fields (fields[] set to NULL past the last); returns how many there were,
 * or -EINVAL when text is left over (as 254's mount_array_add()), a bad escape, -ENOMEM. */
static int split_fields(const char *value, char **fields, size_t n) {
        const char *p = value;
        int count = 0, r;

        for (size_t i = 0; i < n; i++)
                fields[i] = NULL;
        for (size_t i = 0; i < n; i++) {
                r = extract_field(&p, &fields[i]);
                if (r < 0) {
                        free_fields(fields, n);
                        return r;
                }
                count += r;
        }
        if (p && *p) {
                free_fields(fields, n);
                return -EINVAL;
        }
        return count;
}

/* Appends an entry from the fields what, where, fstype, options (empty fstype and options mean the
 * defaults, "auto" and "defaults"; a swap has no where). Takes the four strings on success; on -ENOMEM
 * they are still the caller's. */
static int add_extra(bool for_initrd, char *f[4]) {
        ExtraMount *a;
        bool swap;

        a = reallocarray(arg_extra, arg_n_extra + 1, sizeof(ExtraMount));
        if (!a)
                return -ENOMEM;
        arg_extra = a;
        swap = streq_ptr(f[2], "swap");
        arg_extra[arg_n_extra++] = (ExtraMount) {
                .for_initrd = for_initrd,
                .what = f[0],
                .where = swap ? NULL : f[1],
                .fstype = isempty(f[2]) ? NULL : f[2],
                .options = isempty(f[3]) ? NULL : f[3],
        };
        if (swap)
                free(f[1]);
        if (isempty(f[2]))
                free(f[2]);
        if (isempty(f[3]))
                free(f[3]);
        return 0;
}

/* A field that would put a control character or a line of its own into a unit. */
static bool fields_are_safe(const char *key, const char *value, char *const *f, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (f[i] && !unit_value_is_safe(f[i])) {
                        _cleanup_free_ char *e = cescape(value);

                        log_warning("Ignoring %s=%s: a field contains a control character or ends in a backslash.",
                                    key, string_is_printable(value) ? value : strna(e));
                        return false;
                }
        return true;
}

int extra_parse_cmdline_item(const char *key, const char *value) {
        char *f[4] = {}, *g[4] = {};
        bool swap;
        int r;

        if (streq(key, "systemd.mount-extra") || streq(key, "rd.systemd.mount-extra"))
                swap = false;
        else if (streq(key, "systemd.swap-extra") || streq(key, "rd.systemd.swap-extra"))
                swap = true;
        else
                return 0;
        if (systemd_version() < EXTRA_SINCE) {
                /* As the version itself: an unknown parameter, nothing written. */
                log_debug("Ignoring %s=, the image's systemd %u does not know it (%u and later do).",
                          key, systemd_version(), EXTRA_SINCE);
                return 1;
        }
        if (cmdline_value_missing(key, value))
                return 1;

        r = split_fields(value, g, swap ? 2 : 4);
        if (r == -ENOMEM)
                return log_oom();
        if (r < (swap ? 1 : 2)) {
                _cleanup_free_ char *e = cescape(value);

                log_warning("Failed to parse %s= option, ignoring: %s", key,
                            string_is_printable(value) ? value : strna(e));
                free_fields(g, 4);
                return 1;
        }
        if (!fields_are_safe(key, value, g, 4)) {
                free_fields(g, 4);
                return 1;
        }
        if (swap) {
                f[0] = g[0];
                f[3] = g[1];
                f[2] = strdup("swap");
                if (!f[2]) {
                        free_fields(f, 4);
                        return log_oom();
                }
        } else
                memcpy(f, g, sizeof(f));
        if (add_extra(startswith(key, "rd."), f) < 0) {
                free_fields(f, 4);
                return log_oom();
        }
        return 1;
}

static int add_credential(const char *dest, const char *name, FstabEntryMode mode, bool swap_enabled) {
        _cleanup_free_ char *path = NULL;
        const char *dir = getenv("CREDENTIALS_DIRECTORY"), *edir = getenv("ENCRYPTED_CREDENTIALS_DIRECTORY");

        if (edir && !isempty(edir)) {
                _cleanup_free_ char *epath = strjoin(edir, "/", name);

                if (!epath)
                        return log_oom();
                if (access(epath, F_OK) >= 0)
                        log_warning("Ignoring the encrypted credential %s: foyer does not decrypt credentials.", epath);
        }
        if (!dir || isempty(dir)) {
                log_debug("No credentials directory, skipping credential %s.", name);
                return 0;
        }
        path = strjoin(dir, "/", name);
        if (!path)
                return log_oom();
        return parse_fstab_file(path, "/run/credentials", dest, mode, swap_enabled, false);
}

int extra_add_mounts(const char *dest, bool swap_enabled) {
        int r = 0;

        assert(dest);

        if (systemd_version() < EXTRA_SINCE)
                return 0;
        for (size_t i = 0; i < arg_n_extra; i++) {
                ExtraMount *m = &arg_extra[i];
                FstabEntryMode mode = FSTAB_ENTRY_EXTRA;

                if (m->for_initrd && !in_initrd())
                        continue;
                if (!m->for_initrd && in_initrd())
                        mode |= FSTAB_ENTRY_SYSROOT;
                /* All options: upstream's 254 to 257.0 kept only the first (a NUL-separated list read as one
                 * string); the fix (06fadc4286, in 258) is in Debian 13's 257, the version foyer follows. */
                RET_GATHER(r, fstab_add_entry("/proc/cmdline", dest, m->what, m->where, m->fstype ?: "auto",
                                              m->options ?: "defaults", -1, mode, true, false));
        }
        RET_GATHER(r, add_credential(dest, in_initrd() ? "fstab.extra.initrd" : "fstab.extra",
                                     FSTAB_ENTRY_EXTRA, swap_enabled));
        if (in_initrd())
                RET_GATHER(r, add_credential(dest, "fstab.extra", FSTAB_ENTRY_EXTRA | FSTAB_ENTRY_SYSROOT,
                                             swap_enabled));
        return r;
}
