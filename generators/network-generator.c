/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-network-generator: the network and the SSH server of an image built with --ssh-unlock.
 *
 * In an image without dropbear (FOYER_SSH_DROPBEAR) it does nothing: such an image has no network.
 * In one with it, unless rd.neednet=0 (dracut's switch, here: no network and no SSH server for this
 * boot), it writes:
 *   - FOYER_SSH_SERVICE: dropbear with the image's host keys, root's authorized_keys only (no
 *     passwords, no forwarding), and FOYER_UNLOCK_PATH as its forced command, so that a login answers
 *     the pending passphrase questions. It starts at once, before and while cryptsetup waits, and is
 *     stopped (with its sessions) when initrd-switch-root.target is reached;
 *   - FOYER_NETWORK_CLEANUP_SERVICE, whose ExecStop= takes the initrd's addresses, links and
 *     systemd-networkd's state in /run down once networkd has stopped, before the switch to the real
 *     root, so that the real root's own network setup starts from a clean slate;
 *   - initrd.target's wants for both and for systemd-networkd.service and
 *     systemd-network-generator.service, the image's own units;
 *   - a drop-in for systemd-network-generator.service giving it, in $SYSTEMD_PROC_CMDLINE, the network
 *     words (ip=, nameserver=, rd.route=, rd.peerdns=, ifname=, net.ifname-policy=, vlan=, bond=,
 *     bridge=) of the command line as foyer reads it: the defaults of foyer build --cmdline
 *     (/etc/cmdline.d) come first, which systemd-network-generator, reading /proc/cmdline, would miss.
 * Interfaces no ip= configures get DHCP from the image's FOYER_DEFAULT_NETWORK.
 *
 * A network word that cannot go into a unit's Environment= as it is (a quote, a backslash, a '%', a
 * control character, a blank) is logged and left out. */

#include <unistd.h>

#include "cmdline.h"
#include "foyer-contract.h"
#include "generator.h"
#include "path-util.h"
#include "strv.h"
#include "unit-name.h"

static int arg_neednet = -1;
static char **arg_net_words = NULL;

/* The one place that frees the arg_* state and sets it back to its defaults (run by generator_main()). */
static void reset_args(void) {
        arg_neednet = -1;
        arg_net_words = strv_free(arg_net_words);
}

/* The words systemd-network-generator reads (its src/network/generator/network-generator.c). */
static const char *const net_keys[] = {
        "ip", "nameserver", "rd.route", "rd.peerdns", "ifname", "net.ifname-policy", "vlan", "bond", "bridge",
};

static bool net_key(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(net_keys); i++)
                if (streq(key, net_keys[i]))
                        return true;
        return false;
}

/* One word of a double-quoted Environment= value that needs no escaping. */
static bool word_is_plain(const char *w) {
        for (const char *p = w; *p; p++)
                if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f || strchr("\"'\\%$`", *p))
                        return false;
        return true;
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        _cleanup_free_ char *word = NULL;

        if (streq(key, "rd.neednet")) {
                int b;

                if (!value) {
                        arg_neednet = 1;        /* a bare rd.neednet, as dracut's getargbool */
                        return 0;
                }
                b = parse_boolean(value);
                if (b < 0)
                        log_warning("Failed to parse rd.neednet=%s, ignoring.", value);
                else
                        arg_neednet = b;
                return 0;
        }
        if (!net_key(key))
                return 0;
        word = value ? strjoin(key, "=", value) : strdup(key);
        if (!word)
                return log_oom();
        if (!word_is_plain(word)) {
                _cleanup_free_ char *shown = cescape(word);

                log_warning("%s: cannot pass this to systemd-network-generator (no quotes, blanks, '%%', '$' or "
                            "backslashes), ignoring.", shown ?: key);
                return 0;
        }
        return strv_consume(&arg_net_words, TAKE_PTR(word)) < 0 ? log_oom() : 0;
}

static int write_ssh_service(const char *dest) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        FILE *f;
        int r;

        r = generator_open_unit_file(dest, NULL, FOYER_SSH_SERVICE, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        fputs("[Unit]\n"
              "Description=SSH server for unlocking (dropbear)\n"
              "Documentation=man:foyer-kernel-command-line(7)\n"
              "DefaultDependencies=no\n"
              "Wants=systemd-networkd.service " FOYER_NETWORK_CLEANUP_SERVICE "\n"
              "Conflicts=initrd-switch-root.target shutdown.target\n"
              "Before=initrd-switch-root.target shutdown.target\n"
              "ConditionPathExists=" FOYER_SSH_AUTHORIZED_KEYS "\n"
              "\n[Service]\n"
              /* -F foreground, -E log to stderr (the journal), -s keys only, -j -k no forwarding. */
              "ExecStart=" FOYER_SSH_DROPBEAR " -F -E -s -j -k -p " FOYER_SSH_PORT " -P /run/foyer-dropbear.pid", f);
        /* $FOYER_SSH_HOST_KEY_DIR (foyer preview, tests) says where to look for them; the unit names
         * them where the image has them. */
        const char *key_dir = secure_getenv("FOYER_SSH_HOST_KEY_DIR") ?: FOYER_SSH_HOST_KEY_DIR;
        static const char *const keys[] = { FOYER_SSH_HOST_KEY_ED25519, FOYER_SSH_HOST_KEY_ECDSA };
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_free_ char *p = strjoin(key_dir, "/", path_basename(keys[i]));

                if (!p)
                        return log_oom();
                if (access(p, F_OK) >= 0)
                        fprintf(f, " -r %s", keys[i]);
        }
        /* dropbear ends with exit status 1 on SIGTERM, which would leave a failed unit behind for the real
         * root to list; it leaves SIGHUP alone, which ends it (and its sessions) as cleanly. */
        fputs(" -c " FOYER_UNLOCK_PATH "\n"
              "Restart=on-failure\n"
              "KillMode=control-group\n"
              "KillSignal=SIGHUP\n", f);
        r = generator_commit_unit_file(u, NULL);
        if (r < 0)
                return r;
        return generator_add_symlink(dest, "initrd.target", "wants", FOYER_SSH_SERVICE);
}

static int write_cleanup_service(const char *dest) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        int r;

        r = generator_open_unit_file(dest, NULL, FOYER_NETWORK_CLEANUP_SERVICE, &u);
        if (r < 0)
                return r;
        /* Started with the network, stopped after systemd-networkd (Before= reverses on stop), before
         * the switch to the real root. */
        fputs("[Unit]\n"
              "Description=Take down the initrd's network before switching root\n"
              "Documentation=man:foyer-kernel-command-line(7)\n"
              "DefaultDependencies=no\n"
              "Conflicts=initrd-switch-root.target shutdown.target\n"
              "Before=initrd-switch-root.target shutdown.target\n"
              "Before=systemd-networkd.service systemd-network-generator.service " FOYER_SSH_SERVICE "\n"
              "\n[Service]\n"
              "Type=oneshot\n"
              "RemainAfterExit=yes\n"
              "ExecStop=-" FOYER_NETWORK_CLEANUP_PATH "\n", unit_file_stream(u));
        r = generator_commit_unit_file(u, NULL);
        if (r < 0)
                return r;
        return generator_add_symlink(dest, "initrd.target", "wants", FOYER_NETWORK_CLEANUP_SERVICE);
}

static int write_network_generator_dropin(const char *dest) {
        _cleanup_free_ char *line = NULL;
        int r;

        if (strv_isempty(arg_net_words))
                return 0;
        line = strv_join(arg_net_words, " ");
        if (!line)
                return log_oom();
        r = unit_file_write_dropinf(dest, "systemd-network-generator.service", 50, "foyer-cmdline",
                                    "# Automatically generated by foyer-network-generator\n\n"
                                    "[Service]\n"
                                    "Environment=\"SYSTEMD_PROC_CMDLINE=%s\"\n", line);
        if (r < 0)
                return log_error_errno(r, "Failed to write the drop-in for systemd-network-generator.service: %m");
        return 0;
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        const char *dropbear = secure_getenv("FOYER_SSH_DROPBEAR") ?: FOYER_SSH_DROPBEAR;
        int r;

        assert(dest);

        if (access(dropbear, X_OK) < 0) {
                log_debug("%s is not there: the image has no SSH server and no network.", dropbear);
                return 0;
        }
        r = cmdline_parse(parse_cmdline_item, NULL, 0);
        if (r < 0)
                log_warning_errno(r, "Failed to parse the kernel command line, ignoring: %m");
        if (arg_neednet == 0) {
                log_info("rd.neednet=0: no network and no SSH server in the initrd.");
                return 0;
        }

        r = write_ssh_service(dest);
        if (r < 0)
                return r;
        r = write_cleanup_service(dest);
        if (r < 0)
                return r;
        r = generator_add_symlink(dest, "initrd.target", "wants", "systemd-networkd.service");
        if (r < 0)
                return r;
        r = generator_add_symlink(dest, "initrd.target", "wants", "systemd-network-generator.service");
        if (r < 0)
                return r;
        return write_network_generator_dropin(dest);
}

FOYER_DEFINE_MAIN_GENERATOR(run, reset_args);
