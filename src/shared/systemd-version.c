/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "foyer-contract.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "path-util.h"
#include "strv.h"
#include "systemd-version.h"

/* The systemd foyer was compiled for, used when the image has no record. */
#define DEFAULT_SYSTEMD_VERSION 252

static struct {
        int loaded;
        unsigned version;
        char *libexec_dir;
        char *cryptsetup;
} profile;

/* Sets *dest from a "KEY=value" line's value: an absolute, normalized path without control
 * characters, so that it can go into a unit file as it is. */
static int set_path(char **dest, const char *file, const char *key, const char *value) {
        if (value[0] != '/' || !path_is_safe(value) || string_has_cc(value) || strchr(value, ' ')) {
                log_warning("%s: ignoring %s=%s: not a normalized absolute path.", file, key, value);
                return 0;
        }
        return free_and_strdup(dest, value) < 0 ? log_oom() : 0;
}

static int parse_profile(const char *file, const char *text) {
        _cleanup_strv_free_ char **lines = NULL;
        int r;

        r = strv_split(text, "\n", &lines);
        if (r < 0)
                return log_oom();
        STRV_FOREACH(l, lines) {
                const char *v;

                if (isempty(*l) || **l == '#')
                        continue;
                if ((v = startswith(*l, "VERSION="))) {
                        unsigned version;

                        if (safe_atou(v, &version) < 0 || version == 0)
                                log_warning("%s: ignoring VERSION=%s: not a version number.", file, v);
                        else
                                profile.version = version;
                } else if ((v = startswith(*l, "LIBEXECDIR="))) {
                        r = set_path(&profile.libexec_dir, file, "LIBEXECDIR", v);
                } else if ((v = startswith(*l, "CRYPTSETUP="))) {
                        r = set_path(&profile.cryptsetup, file, "CRYPTSETUP", v);
                } else
                        log_debug("%s: ignoring unknown line \"%s\".", file, *l);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void load_profile(void) {
        _cleanup_free_ char *text = NULL;
        const char *file;
        int r;

        if (profile.loaded)
                return;
        profile.loaded = 1;
        profile.version = DEFAULT_SYSTEMD_VERSION;

        file = getenv("FOYER_SYSTEMD_VERSION_FILE") ?: FOYER_SYSTEMD_VERSION_PATH;
        r = read_full_file(file, &text, NULL);
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Failed to read %s, assuming systemd %u: %m", file, DEFAULT_SYSTEMD_VERSION);
        if (r >= 0)
                (void) parse_profile(file, text);

        if (!profile.libexec_dir)
                profile.libexec_dir = strdup(ROOTLIBEXECDIR);
        if (!profile.cryptsetup && profile.libexec_dir)
                profile.cryptsetup = profile.version >= 256 ? strdup("/usr/bin/systemd-cryptsetup")
                                                            : strjoin(profile.libexec_dir, "/systemd-cryptsetup");
        if (!profile.libexec_dir || !profile.cryptsetup) {
                log_oom();
                abort();
        }
}

void systemd_version_forget(void) {
        free(profile.libexec_dir);
        free(profile.cryptsetup);
        profile.libexec_dir = profile.cryptsetup = NULL;
        profile.loaded = 0;
}

unsigned systemd_version(void) {
        load_profile();
        return profile.version;
}

const char *systemd_libexec_dir(void) {
        load_profile();
        return profile.libexec_dir;
}

const char *systemd_cryptsetup_path(void) {
        load_profile();
        return profile.cryptsetup;
}

const char *systemd_umount_path(void) {
        return systemd_version() >= 255 ? "/usr/bin/umount" : ROOTBINDIR "/umount";
}

const char *systemd_timeout_infinity(void) {
        return systemd_version() >= 257 ? "infinity" : "0";
}
