/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* What systemd-stub hands the initrd in /.extra (docs/image-based.md), taken on by the tree's own
 * systemd where its version has the consumer, as dracut's and mkosi's initrds do:
 *
 *  - credentials (/.extra/credentials/, /.extra/global_credentials/): PID 1 itself moves them to
 *    /run/credentials/@encrypted/ in every version since 251, and a unit decrypts them with
 *    LoadCredentialEncrypted= or ImportCredential=. Nothing to add but systemd-creds, to look at
 *    them from the emergency shell.
 *  - the stub's metadata (/.extra/os-release, profile, boot-secret, the PCR signature and its public
 *    key): the tree's tmpfiles.d/20-systemd-stub.conf (257 has it, 252 not) copies them to
 *    /run/systemd/, where the real root's tools look; it needs systemd-tmpfiles-setup.service, which
 *    in the initrd reads the image's tmpfiles.d only. 252 has these lines in its big systemd.conf,
 *    which is the real root's: left out.
 *  - system and configuration extensions (/.extra/sysext/, /.extra/confext/ and, newer,
 *    /.extra/global_sysext/ and /.extra/global_confext/): merged into the initrd's /usr and /etc by
 *    the tree's systemd-sysext, through systemd-sysext-initrd.service and
 *    systemd-confext-initrd.service where the tree has them (258 and later), else through
 *    systemd-sysext.service and systemd-confext.service when their conditions name /.extra (257's do;
 *    252's do not, and its systemd-sysext would merge nothing from the stub). The modules: loop (in
 *    the default set), overlay for the merge, and the file systems extension images are made of
 *    (squashfs, erofs; ext4 is in the default set); signed verity extensions need dm_verity, which
 *    plan-verity.c adds with veritysetup.
 *
 * The image policy stays the tree's: systemd-sysext refuses an extension from /.extra that is not
 * signed dm-verity (the ESP is not trusted), unless the image is given a drop-in saying otherwise. */

#include <assert.h>
#include <string.h>

#include "fileio.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "strv.h"
#include "util.h"

#define STUB_TMPFILES "/usr/lib/tmpfiles.d/20-systemd-stub.conf"
#define TMPFILES_SETUP "systemd-tmpfiles-setup.service"
#define TMPFILES_SETUP_DROPIN UNITDIR "/" TMPFILES_SETUP ".d/10-foyer-stub.conf"

/* In the initrd the unit only has 20-systemd-stub.conf to do (the image's other tmpfiles.d are for
 * /dev, which it leaves out): without a stub there is no /.extra, and nothing to run. */
static const char tmpfiles_setup_dropin[] =
        "# foyer: in the initrd, systemd-tmpfiles-setup.service copies what systemd-stub put in /.extra\n"
        "# (20-systemd-stub.conf); without a stub there is no /.extra and nothing to copy.\n"
        "[Unit]\n"
        "ConditionPathIsDirectory=/.extra\n";

typedef struct ExtensionUnits {
        const char *kind;               /* what it merges, for the log */
        const char *initrd_unit;        /* 258 and later: the initrd's own unit */
        const char *unit;               /* before: the real root's unit, which also runs in the initrd */
        const char *extra;              /* where the stub puts them, named by a unit that reads it */
} ExtensionUnits;

static const ExtensionUnits extension_units[] = {
        { "system extensions", "systemd-sysext-initrd.service", "systemd-sysext.service", "/.extra/sysext" },
        { "configuration extensions", "systemd-confext-initrd.service", "systemd-confext.service", "/.extra/confext" },
};

/* The tree's unit file's text, or NULL with 0 when the tree has none. */
static int read_unit(Manifest *m, const char *name, char **ret) {
        _cleanup_free_ char *path = strjoin(UNITDIR "/", name);
        size_t size = 0;

        assert(ret);

        if (!path)
                return log_oom();
        return read_tree_file(m->root, path, ret, &size);
}

static int plan_extension_units(Manifest *m, const ExtensionUnits *e, bool *added) {
        _cleanup_free_ char *why = NULL;
        int r;

        assert(e);
        assert(added);

        why = strjoin("merges the stub's ", e->kind, " (", e->extra, ") into the initrd");
        if (!why)
                return log_oom();

        /* 258 and later: the initrd's unit, wanted by initrd.target. */
        {
                _cleanup_free_ char *text = NULL;

                r = read_unit(m, e->initrd_unit, &text);
                if (r < 0)
                        return log_error_errno(r, "Failed to read %s/%s in the tree: %m", UNITDIR, e->initrd_unit);
                if (text) {
                        *added = true;
                        return plan_add_unit_wanted(m, e->initrd_unit, "initrd.target", why);
                }
        }

        /* Before: the real root's unit, if it looks at what the stub passes. */
        {
                _cleanup_free_ char *text = NULL;

                r = read_unit(m, e->unit, &text);
                if (r < 0)
                        return log_error_errno(r, "Failed to read %s/%s in the tree: %m", UNITDIR, e->unit);
                if (!text) {
                        log_debug("The tree has no %s: the stub's %s stay unmerged.", e->unit, e->kind);
                        return 0;
                }
                if (!strstr(text, e->extra)) {
                        log_debug("The tree's %s does not look at %s: the stub's %s stay unmerged.",
                                  e->unit, e->extra, e->kind);
                        return 0;
                }
                *added = true;
                return plan_add_unit_wanted(m, e->unit, "sysinit.target", why);
        }
}

int plan_stub(Manifest *m, const BuildConfig *c) {
        _cleanup_free_ char *tmpfiles = NULL;
        size_t size = 0;
        bool extensions = false;
        int r;

        assert(m);
        assert(c);

        r = plan_add_item(m, "/usr/bin/systemd-creds", NEED_OPTIONAL,
                          "the stub's credentials in /run/credentials/@encrypted, from the emergency shell");
        if (r < 0)
                return r;

        r = read_tree_file(m->root, STUB_TMPFILES, &tmpfiles, &size);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s in the tree: %m", STUB_TMPFILES);
        if (tmpfiles) {
                r = manifest_add_data(m, STUB_TMPFILES, 0644, tmpfiles, size,
                                      "copies the stub's /.extra metadata to /run/systemd/");
                if (r < 0)
                        return log_error_errno(r, "Failed to add %s: %m", STUB_TMPFILES);
                r = plan_add_unit_wanted(m, TMPFILES_SETUP, "sysinit.target", "runs " STUB_TMPFILES);
                if (r < 0)
                        return r;
                r = plan_add_text(m, TMPFILES_SETUP_DROPIN, 0644, tmpfiles_setup_dropin,
                                  "runs " TMPFILES_SETUP " only when a stub passed /.extra");
                if (r < 0)
                        return r;
        } else
                log_debug("The tree has no %s: the stub's metadata stays in /.extra.", STUB_TMPFILES);

        for (size_t i = 0; i < ELEMENTSOF(extension_units); i++) {
                r = plan_extension_units(m, &extension_units[i], &extensions);
                if (r < 0)
                        return r;
        }
        if (!extensions)
                return 0;
        /* Optional here: the units run it, and a tree without it fails the build in their closure,
         * which names the unit (as for every program a unit runs). */
        return plan_add_item(m, "/usr/bin/systemd-sysext", NEED_OPTIONAL, "merges the stub's extensions");
}

int plan_stub_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted) {
        assert(m);
        assert(c);
        assert(p);
        assert(wanted);

        if (!manifest_find(m, "/usr/bin/systemd-sysext")) {
                log_debug("Skipping the extensions' modules: the image merges none.");
                return 0;
        }
        /* loop is in the default set; a module the kernel lacks (or has built in) is skipped. */
        if (strv_extend(wanted, "overlay") < 0 || strv_extend(wanted, "squashfs") < 0 ||
            strv_extend(wanted, "erofs") < 0 || strv_extend(wanted, "loop") < 0)
                return log_oom();
        return 0;
}
