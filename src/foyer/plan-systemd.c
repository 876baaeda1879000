/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The image's systemd, recorded for the generators (FOYER_SYSTEMD_VERSION_PATH, foyer-contract.h):
 * its version, from the name of the tree's libsystemd-shared-NNN.so (systemd --version cannot run
 * for a tree of another architecture or libc); its libexec directory, as the tree's own
 * systemd-fsck@.service spells it (on a merged-/usr tree both /lib/systemd and /usr/lib/systemd
 * exist, so the file system cannot tell which one that systemd writes into its units); and where
 * its systemd-cryptsetup is (/usr/bin from 256 on). Recorded by the builder rather than looked up
 * by the generators at boot because the builder sees the whole tree, the generators only the image,
 * and the golden tests run the generators on the build host, whose systemd is not the image's. */

#include <assert.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "foyer-contract.h"
#include "log.h"
#include "path-util.h"
#include "plan.h"
#include "plan-util.h"
#include "parse-util.h"
#include "strv.h"
#include "unit-info.h"

unsigned plan_tree_systemd_version(const char *root) {
        _cleanup_free_ char *lib = NULL, *pattern = NULL;
        unsigned version = 0;
        glob_t g = {};

        if (path_in_root(root, "/usr/lib", false, &lib) < 0)
                return 0;
        pattern = strjoin(lib, "/{,*/}systemd/libsystemd-shared-*.so");
        if (!pattern || glob(pattern, GLOB_BRACE, NULL, &g) != 0)
                return 0;
        for (size_t i = 0; i < g.gl_pathc && version == 0; i++) {
                const char *v = strrchr(g.gl_pathv[i], '/') + strlen("/libsystemd-shared-");
                _cleanup_free_ char *num = strndup(v, strspn(v, "0123456789"));

                if (!num || safe_atou(num, &version) < 0)
                        version = 0;
        }
        globfree(&g);
        return version;
}

/* The directory of systemd-fsck in the ExecStart= of the tree's systemd-fsck@.service, or NULL. */
static char *tree_libexec_dir(Manifest *m) {
        _cleanup_(unit_info_done) UnitInfo u = {};

        if (unit_info_read(m, "systemd-fsck@.service", &u) < 0 || !u.found)
                return NULL;
        STRV_FOREACH(e, u.exec) {
                const char *p = startswith(*e, "ExecStart=");
                const char *slash;

                if (p && p[0] == '/' && (slash = strrchr(p, '/')) && streq(slash, "/systemd-fsck"))
                        return strndup(p, slash - p);
        }
        return NULL;
}

int plan_systemd_version(Manifest *m, const BuildConfig *c) {
        _cleanup_free_ char *libexec = NULL, *usr_bin = NULL, *text = NULL;
        const char *cryptsetup;
        unsigned version;
        struct stat st;

        assert(m);
        assert(c);

        version = plan_tree_systemd_version(m->root);
        if (version == 0) {
                log_warning("No libsystemd-shared-NNN.so in %s: the generators will write what systemd 252's do.",
                            m->root ?: "/");
                return 0;
        }
        libexec = tree_libexec_dir(m);
        if (!libexec)
                libexec = strdup(version >= 255 ? "/usr/lib/systemd" : "/lib/systemd");
        if (!libexec)
                return log_oom();
        cryptsetup = path_in_root(m->root, "/usr/bin/systemd-cryptsetup", true, &usr_bin) >= 0 &&
                     lstat(usr_bin, &st) >= 0 && S_ISREG(st.st_mode) ? "/usr/bin/systemd-cryptsetup" : NULL;

        if (asprintf(&text, "VERSION=%u\nLIBEXECDIR=%s\n%s%s%s", version, libexec,
                     cryptsetup ? "CRYPTSETUP=" : "", strempty(cryptsetup), cryptsetup ? "\n" : "") < 0)
                return log_oom();
        log_debug("The image's systemd: %s", text);
        return plan_add_text(m, FOYER_SYSTEMD_VERSION_PATH, 0644, text, "the image's systemd, for the generators");
}
