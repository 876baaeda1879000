/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "cryptsetup-unit.h"
#include "macro.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-file.h"
#include "unit-name.h"

void cryptsetup_write_unit_section(FILE *f, const char *source) {
        fputs("[Unit]\n"
              "Description=Cryptography Setup for %I\n"
              "Documentation=man:crypttab(5) man:systemd-cryptsetup-generator(8) man:systemd-cryptsetup@.service(8)\n",
              f);
        if (source)
                fprintf(f, "SourcePath=%s\n", source);
        if (systemd_version() >= 257) {
                /* 257 starts the dependencies with an empty line, orders after the early TPM2 setup and
                 * writes IgnoreOnIsolate= after them. */
                fprintf(f,
                        "\n"
                        "DefaultDependencies=no\n"
                        "After=cryptsetup-pre.target systemd-udevd-kernel.socket %s"
                        "systemd-tpm2-setup-early.service\n"
                        "Before=blockdev@dev-mapper-%%i.target\n"
                        "Wants=blockdev@dev-mapper-%%i.target\n"
                        "IgnoreOnIsolate=true\n",
                        systemd_cryptsetup_after_udevd() ? "systemd-udevd.service " : "");
                return;
        }
        fputs("DefaultDependencies=no\n"
              "IgnoreOnIsolate=true\n"
              "After=cryptsetup-pre.target systemd-udevd-kernel.socket\n"
              "Before=blockdev@dev-mapper-%i.target\n"
              "Wants=blockdev@dev-mapper-%i.target\n",
              f);
}

int cryptsetup_write_service_section(FILE *f, const char *name, const char *what, const char *key_file,
                                     const char *options) {
        _cleanup_free_ char *n = specifier_escape(name), *w = specifier_escape(what),
                            *k = key_file ? specifier_escape(key_file) : NULL,
                            *o = options ? specifier_escape(options) : NULL;

        assert(f);
        assert(name);
        assert(what);

        if (!n || !w || (key_file && !k) || (options && !o))
                return -ENOMEM;
        /* Outside values: none may end its quoted argument with a backslash or add a line. */
        if (!unit_value_is_safe(name) || !unit_value_is_safe(what) || (key_file && !unit_value_is_safe(key_file)) ||
            (options && !unit_value_is_safe(options)))
                return -EBADMSG;
        /* The arguments are quoted, not escaped further: systemd 252 relies on names and paths without
         * single quotes, and so does systemd-cryptsetup's own parser. */
        fprintf(f,
                "\n[Service]\n"
                "Type=oneshot\n"
                "RemainAfterExit=yes\n"
                "TimeoutSec=%s\n"
                "KeyringMode=shared\n"
                "OOMScoreAdjust=500\n"
                "%s"
                "ExecStart=%s attach '%s' '%s' '%s' '%s'\n"
                "ExecStop=%s detach '%s'\n",
                systemd_timeout_infinity(),
                /* 257 passes the cryptsetup.* credentials (keys, PINs) to the service. */
                systemd_version() >= 257 ? "ImportCredential=cryptsetup.*\n" : "",
                systemd_cryptsetup_path(), n, w, k ?: "", o ?: "", systemd_cryptsetup_path(), n);
        return 0;
}

/* prefix + unit_name_escape(name) + suffix: as systemd 252, the name is escaped as a string, not as a
 * path ("a/b" and ".a" are escaped differently by the two). */
static int escaped_name_unit(const char *prefix, const char *name, const char *suffix, char **ret) {
        _cleanup_free_ char *e = NULL;
        int r;

        assert(name);

        r = unit_name_escape(name, &e);
        if (r < 0)
                return r;
        return unit_name_build(prefix, e, suffix, ret);
}

int cryptsetup_unit_name(const char *name, char **ret) {
        return escaped_name_unit("systemd-cryptsetup@", name, ".service", ret);
}

int cryptsetup_mapper_device_unit(const char *name, char **ret) {
        return escaped_name_unit("dev-mapper-", name, ".device", ret);
}
