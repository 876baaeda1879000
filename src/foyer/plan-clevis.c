/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Unlocking LUKS volumes with Clevis (network-bound disk encryption: a Tang server, a TPM2, or
 * Shamir's sharing of those), with the tree's own clevis, as dracut's clevis modules do it in a
 * systemd initrd:
 *   - systemd-cryptsetup asks for the passphrase through systemd's ask-password files
 *     (/run/systemd/ask-password/ask.*, "Id=cryptsetup:DEVICE");
 *   - clevis-luks-askpass.path (clevis-systemd), wanted by cryptsetup.target, starts
 *     clevis-luks-askpass.service when such a file appears; its script reads the JWE from the
 *     volume's LUKS2 "clevis" token (or LUKS1's luksmeta slot), has "clevis decrypt" recover the
 *     passphrase (the tang pin: an HTTP request with curl; the tpm2 pin: tpm2-tools) and answers
 *     with systemd-reply-password;
 *   - the console prompt (systemd-tty-ask-password-agent) asks at the same time: when Clevis cannot
 *     answer (Tang unreachable), a typed passphrase still unlocks, and the script gives up on that
 *     file once it is gone.
 * Clevis is bash scripts: this planner adds them, bash, and every program they run on the way to
 * unlocking (read from clevis 19 to 22: the askpass loop, clevis-luks-common-functions, the pins),
 * since a program they lack fails only at boot, as "command not found" in the journal. The ELF
 * ones get their libraries from the closure like any other program. (dracut's list also has ps and
 * date, which only its own non-systemd hooks run.)
 *
 * The tang pin needs the network: its askpass service gets a drop-in ordering it after
 * network-online.target (which foyer-network-generator fills when rd.neednet=1 or ip= bring the
 * network up), so that curl is not run before an address is there; the console prompt does not wait
 * for it. The network itself (systemd-networkd and its units) is the network planner's, which
 * brings it in when the image has the tang pin (CLEVIS_TANG_PIN).
 *
 * Which images: a generic one whenever the tree has clevis-systemd's askpass units (and
 * systemd-cryptsetup is in the image); a host-only one only when the root, /usr or swap is on
 * dm-crypt. --no-shell with such a tree is refused: the scripts need bash, and a bash in the image
 * is a shell for rdinit= or init= on the console, the very thing --no-shell keeps out. */

#include <assert.h>
#include <unistd.h>

#include "elf-file.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "util.h"

#define CLEVIS_ASKPASS "/usr/libexec/clevis-luks-askpass"
#define CLEVIS_ASKPASS_PATH_UNIT "clevis-luks-askpass.path"
#define CLEVIS_TANG_DROPIN UNITDIR "/clevis-luks-askpass.service.d/10-foyer-tang.conf"
#define CLEVIS_TPM2_PIN "/usr/bin/clevis-decrypt-tpm2"

static const Item clevis_items[] = {
        { UNITDIR "/clevis-luks-askpass.service",       NEED_REQUIRED, "Clevis: answers systemd-cryptsetup's passphrase questions" },
        { CLEVIS_ASKPASS,                               NEED_REQUIRED, "Clevis: the askpass loop" },
        { "/usr/lib/systemd/systemd-reply-password",    NEED_REQUIRED, "Clevis: clevis-luks-askpass answers with it" },
        { "/usr/bin/clevis",                            NEED_REQUIRED, "Clevis: the command" },
        { "/usr/bin/clevis-decrypt",                    NEED_REQUIRED, "Clevis: clevis decrypt, which runs the JWE's pin" },
        { "/usr/bin/clevis-luks-common-functions",      NEED_REQUIRED, "Clevis: sourced by clevis-luks-askpass" },
        { "/usr/bin/clevis-luks-list",                  NEED_REQUIRED, "Clevis: clevis luks list (the askpass loop's crypttab check)" },
        { "/usr/bin/clevis-luks-unlock",                NEED_OPTIONAL, "Clevis: clevis luks unlock, by hand in a shell" },
        { "/usr/bin/clevis-decrypt-null",               NEED_OPTIONAL, "Clevis: the null pin" },
        { "/usr/bin/clevis-decrypt-sss",                NEED_OPTIONAL, "Clevis: the sss pin (Shamir's sharing of other pins)" },
        { "/usr/bin/jose",                              NEED_REQUIRED, "Clevis: JWE/JWK operations" },
        { "/usr/bin/luksmeta",                          NEED_REQUIRED, "Clevis: bindings of LUKS1 volumes" },
        { "/usr/sbin/cryptsetup",                       NEED_REQUIRED, "Clevis: reads the LUKS header and its tokens" },
        /* The scripts' interpreter: bash, not sh (arrays, [[ ]], <<<, read -d). */
        { "/usr/bin/bash",                              NEED_REQUIRED, "Clevis: the interpreter of its scripts" },
        /* What the scripts run on the way to a passphrase (clevis 19 to 22). */
        { "/usr/bin/cat",                               NEED_REQUIRED, "Clevis: /bin/cat in clevis-decrypt and the pins" },
        { "/usr/bin/grep",                              NEED_REQUIRED, "Clevis: clevis-luks-common-functions" },
        { "/usr/bin/sed",                               NEED_REQUIRED, "Clevis: clevis-luks-common-functions" },
        { "/usr/bin/cut",                               NEED_REQUIRED, "Clevis: clevis-luks-common-functions" },
        { "/usr/bin/tr",                                NEED_REQUIRED, "Clevis: clevis-luks-common-functions (sss bindings)" },
        { "/usr/bin/ls",                                NEED_REQUIRED, "Clevis: clevis-luks-askpass (questions left)" },
        { "/usr/bin/sleep",                             NEED_REQUIRED, "Clevis: clevis-luks-askpass (its loop)" },
        { "/usr/bin/mkdir",                             NEED_REQUIRED, "Clevis: the pins' temporary directories" },
        { "/usr/bin/mktemp",                            NEED_REQUIRED, "Clevis: the pins' temporary directories" },
        { "/usr/bin/rm",                                NEED_REQUIRED, "Clevis: the pins' temporary directories" },
        { "/usr/bin/sort",                              NEED_OPTIONAL, "Clevis: clevis-luks-common-functions (pin lists)" },
        { "/usr/bin/awk",                               NEED_OPTIONAL, "Clevis: clevis-luks-common-functions" },
        { "/usr/bin/touch",                             NEED_OPTIONAL, "Clevis: clevis-luks-common-functions" },
        /* curl looks up service names there; dracut's clevis module takes it too. */
        { "/etc/services",                              NEED_OPTIONAL, "Clevis: service names" },
};

static const Item tang_items[] = {
        { CLEVIS_TANG_PIN,                              NEED_REQUIRED, "Clevis: the tang pin" },
        { "/usr/bin/curl",                              NEED_REQUIRED, "Clevis: the tang pin's request to the server" },
        { UNITDIR "/network-online.target",             NEED_OPTIONAL, "Clevis: the tang pin waits for the network" },
};

/* The tpm2 pin of clevis 19 to 22 (tpm2-tools 4 or 5); clevis-pin-tpm2 (Rust), when the tree has
 * it, is run instead. */
static const Item tpm2_items[] = {
        { CLEVIS_TPM2_PIN,                              NEED_REQUIRED, "Clevis: the tpm2 pin" },
        { "/usr/bin/clevis-pin-tpm2",                   NEED_OPTIONAL, "Clevis: the tpm2 pin's own program" },
        { "/usr/bin/tpm2_createprimary",                NEED_REQUIRED, "Clevis: the tpm2 pin" },
        { "/usr/bin/tpm2_flushcontext",                 NEED_REQUIRED, "Clevis: the tpm2 pin" },
        { "/usr/bin/tpm2_load",                         NEED_REQUIRED, "Clevis: the tpm2 pin" },
        { "/usr/bin/tpm2_unseal",                       NEED_REQUIRED, "Clevis: the tpm2 pin" },
        { "/usr/bin/tpm2_pcrread",                      NEED_OPTIONAL, "Clevis: the tpm2 pin" },
};

/* The tang pin's drop-in: curl needs an address and a route, so the service starts when the network
 * is online (or known to be down: network-online.target is reached either way). Wants= pulls the
 * target into a boot that did not ask for the network, where it is reached at once; the console
 * prompt is another unit and never waits for this one. */
static const char tang_dropin[] =
        "# foyer: the tang pin of Clevis talks to its server over the network: ask once the network\n"
        "# is online (rd.neednet=1 ip=...). The console prompt does not wait for this.\n"
        "[Unit]\n"
        "Wants=network-online.target\n"
        "After=network-online.target\n";

/* libtss2-tctildr dlopen()s the device TCTI by a name it builds (TPM2TOOLS_TCTI=device:...), so no
 * ELF file names it: found from the library path of tpm2-tools. */
static int add_tpm2_tcti(Manifest *m) {
        _cleanup_strv_free_ char **search_path = NULL;
        _cleanup_free_ char *path = NULL, *dir = NULL;
        const ElfFile *tools = NULL;
        const Entry *e;
        int r;

        e = manifest_resolve(m, "/usr/bin/tpm2_unseal");
        if (!e || e->type != ENTRY_FILE)
                return 0;
        r = elf_file_read_entry(m, e, &tools);
        if (r < 0)
                return log_error_errno(r, "Failed to parse %s: %m", e->source);
        r = elf_search_path(m->root, &search_path);
        if (r < 0)
                return log_error_errno(r, "Failed to read the loader configuration of %s: %m", m->root);
        dir = path_dirname(e->path);
        if (!dir)
                return log_oom();
        r = elf_find_library(m->root, "libtss2-tcti-device.so.0", tools, dir, search_path, &path);
        if (r == -ENOENT) {
                log_warning("Clevis's tpm2 pin: %s has no libtss2-tcti-device.so.0 (Debian: libtss2-tcti-device0), "
                            "which tpm2-tools loads for /dev/tpmrm0; the pin will fail at boot.",
                            streq(m->root, "/") ? "/" : m->root);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to look up libtss2-tcti-device.so.0: %m");
        return plan_add_item(m, path, NEED_REQUIRED, "Clevis: the TPM device TCTI tpm2-tools loads");
}

int plan_clevis(Manifest *m, const BuildConfig *c, const Probe *p) {
        int r;

        assert(m);
        assert(c);
        assert(p);

        if (!plan_tree_has(m, CLEVIS_ASKPASS, F_OK) || !plan_tree_has(m, UNITDIR "/" CLEVIS_ASKPASS_PATH_UNIT, F_OK)) {
                log_debug("No clevis-systemd (%s and %s) in the tree: no Clevis unlocking.", CLEVIS_ASKPASS,
                          CLEVIS_ASKPASS_PATH_UNIT);
                return 0;
        }
        if (!manifest_find(m, "/usr/lib/systemd/systemd-cryptsetup")) {
                log_debug("No systemd-cryptsetup in the image: nothing asks Clevis, leaving it out.");
                return 0;
        }
        if (p->host && !p->host->crypt) {
                log_debug("Host-only: no dm-crypt volume below the root, /usr or swap, leaving out Clevis.");
                return 0;
        }
        if (c->no_shell)
                return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                       "--no-shell: %s has Clevis unlocking (clevis-systemd's %s), whose scripts run "
                                       "in bash, a shell the kernel command line could start as init; an image "
                                       "without a shell cannot unlock with Clevis. Build without --no-shell, or "
                                       "remove clevis-systemd from the tree.",
                                       streq(m->root, "/") ? "/" : m->root, CLEVIS_ASKPASS);

        r = plan_add_items(m, clevis_items, ELEMENTSOF(clevis_items));
        if (r < 0)
                return r;
        /* What dracut's clevis module does: systemctl add-wants cryptsetup.target clevis-luks-askpass.path. */
        r = plan_add_unit_wanted(m, CLEVIS_ASKPASS_PATH_UNIT, "cryptsetup.target",
                                 "Clevis: watches for passphrase questions");
        if (r < 0)
                return r;

        if (plan_tree_has(m, CLEVIS_TANG_PIN, F_OK)) {
                r = plan_add_items(m, tang_items, ELEMENTSOF(tang_items));
                if (r < 0)
                        return r;
                r = plan_add_text(m, CLEVIS_TANG_DROPIN, 0644, tang_dropin,
                                  "Clevis: the tang pin asks once the network is online");
                if (r < 0)
                        return r;
        } else
                log_debug("No %s in the tree: no Tang unlocking.", CLEVIS_TANG_PIN);

        if (plan_tree_has(m, CLEVIS_TPM2_PIN, F_OK)) {
                r = plan_add_items(m, tpm2_items, ELEMENTSOF(tpm2_items));
                if (r < 0)
                        return r;
                r = add_tpm2_tcti(m);
                if (r < 0)
                        return r;
        } else
                log_debug("No %s in the tree (clevis-tpm2): no TPM2 pin.", CLEVIS_TPM2_PIN);
        return 0;
}
