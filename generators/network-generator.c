/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-network-generator: the initrd's network, and the SSH server of an image built with --ssh-unlock.
 *
 * In an image with neither dropbear (FOYER_SSH_DROPBEAR) nor systemd-networkd it does nothing: such an
 * image has no network. Otherwise the network comes up when the boot needs it: a network root
 * (netroot.h: root=nfs:..., root=nbd:..., netroot=iscsi:..., root=dhcp, ...), rd.neednet=1 (or a bare
 * rd.neednet: dracut's switch, which Clevis/Tang users set), or an image with dropbear (SSH unlock).
 * rd.neednet=0 turns it off (a network root then cannot be mounted: logged as an error). It writes:
 *   - FOYER_SSH_SERVICE (only with dropbear): dropbear with the image's host keys, root's authorized_keys
 *     only (no passwords, no forwarding), and FOYER_UNLOCK_PATH as its forced command, so that a login
 *     answers the pending passphrase questions. It starts at once, before and while cryptsetup waits, and
 *     is stopped (with its sessions) when initrd-switch-root.target is reached;
 *   - FOYER_NETWORK_CLEANUP_SERVICE, whose ExecStop= takes the initrd's addresses, links and
 *     systemd-networkd's state in /run down once networkd has stopped, before the switch to the real
 *     root, so that the real root's own network setup starts from a clean slate. Not for a network
 *     root, whose addresses must stay up through the switch (the initrd's networkd keeps its DHCP
 *     addresses when it stops: systemd 252 and later default to KeepConfiguration=dhcp-on-stop, 257 to
 *     dynamic-on-stop, in the initrd);
 *   - initrd.target's wants for it and for systemd-networkd.service and systemd-network-generator.service,
 *     the image's own units;
 *   - for a network root or rd.neednet=1, initrd.target's wants for network-online.target and
 *     systemd-networkd-wait-online.service, so that units ordered after network-online.target (the
 *     root's mount, Clevis) wait for a configured link (see want_network_online());
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
#include "netroot.h"
#include "path-util.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-name.h"

static int arg_neednet = -1;
static char **arg_net_words = NULL;
static char *arg_root = NULL, *arg_netroot = NULL;

/* The one place that frees the arg_* state and sets it back to its defaults (run by generator_main()). */
static void reset_args(void) {
        arg_neednet = -1;
        arg_net_words = strv_free(arg_net_words);
        free(arg_root);
        free(arg_netroot);
        arg_root = arg_netroot = NULL;
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

        /* The last root= wins, as for foyer-root-generator; of netroot= the last that names a network
         * root (dracut's parsers each look for their own). */
        if (streq(key, "root") && value)
                return free_and_strdup(&arg_root, value) < 0 ? log_oom() : 0;
        if (streq(key, "netroot") && value && netroot_kind_of_netroot(value) != NETROOT_NONE)
                return free_and_strdup(&arg_netroot, value) < 0 ? log_oom() : 0;

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

static int write_ssh_service(const char *dest, bool cleanup) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        FILE *f;
        int r;

        r = generator_open_unit_file(dest, NULL, FOYER_SSH_SERVICE, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        /* (Without the cleanup unit, for a network root, the Wants= names none that is not written.) */
        fprintf(f, "[Unit]\n"
              "Description=SSH server for unlocking (dropbear)\n"
              "Documentation=man:foyer-kernel-command-line(7)\n"
              "DefaultDependencies=no\n"
              "Wants=systemd-networkd.service%s\n"
              "Conflicts=initrd-switch-root.target shutdown.target\n"
              "Before=initrd-switch-root.target shutdown.target\n"
              "ConditionPathExists=" FOYER_SSH_AUTHORIZED_KEYS "\n"
              "\n[Service]\n"
              /* -F foreground, -E log to stderr (the journal), -s keys only, -j -k no forwarding. */
              "ExecStart=" FOYER_SSH_DROPBEAR " -F -E -s -j -k -p " FOYER_SSH_PORT " -P /run/foyer-dropbear.pid",
                cleanup ? " " FOYER_NETWORK_CLEANUP_SERVICE : "");
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

/* network-online.target means a configured link: pulled in, with systemd-networkd-wait-online (ordered
 * before it), both by initrd.target. Not by network-online.target itself: a network root's mount wants
 * that target (a network file system's default dependency), so the switch to the real root's transaction
 * would pull in systemd-networkd-wait-online again, with it systemd-networkd (which it requires) and
 * networkd's socket. Their start jobs would cancel the stop jobs of networkd's
 * Conflicts=initrd-switch-root.target and of the isolation, and the initrd's networkd and its socket
 * would live on into the real root, to be stopped by the real root's first transaction, which races
 * with the socket starting networkd again on the netlink messages of its own stop (a networkd failed
 * in the real root). Pulled by initrd.target, they are stopped in the initrd, before the switch; the
 * addresses stay (networkd keeps them on stop in the initrd). */
static int want_network_online(const char *dest) {
        int r;

        r = generator_add_symlink(dest, "initrd.target", "wants", "network-online.target");
        if (r < 0)
                return r;
        return generator_add_symlink(dest, "initrd.target", "wants", "systemd-networkd-wait-online.service");
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        const char *dropbear = secure_getenv("FOYER_SSH_DROPBEAR") ?: FOYER_SSH_DROPBEAR;
        _cleanup_free_ char *networkd_default = NULL;
        const char *networkd, *nr_key, *nr_value;
        bool has_dropbear, has_networkd, need_online;
        NetrootKind netroot;
        int r;

        assert(dest);

        networkd = secure_getenv("FOYER_NETWORKD");
        if (!networkd) {
                networkd_default = strjoin(systemd_libexec_dir(), "/systemd-networkd");
                if (!networkd_default)
                        return log_oom();
                networkd = networkd_default;
        }
        has_dropbear = access(dropbear, X_OK) >= 0;
        has_networkd = access(networkd, X_OK) >= 0;
        if (!has_dropbear && !has_networkd) {
                log_debug("Neither %s nor %s is there: the image has no network.", dropbear, networkd);
                return 0;
        }
        r = cmdline_parse(parse_cmdline_item, NULL, 0);
        if (r < 0)
                log_warning_errno(r, "Failed to parse the kernel command line, ignoring: %m");
        /* The network root the command line names (dracut: root= before netroot=). */
        netroot = netroot_kind_of(arg_root, arg_netroot, &nr_key, &nr_value);
        if (arg_neednet == 0) {
                if (netroot != NETROOT_NONE)
                        log_error("%s=%s is a network root (%s), but rd.neednet=0 keeps the network down: "
                                  "the root cannot be mounted. Drop rd.neednet=0.",
                                  nr_key, nr_value, netroot_kind_to_string(netroot));
                log_info("rd.neednet=0: no network and no SSH server in the initrd.");
                return 0;
        }
        need_online = netroot != NETROOT_NONE || arg_neednet > 0;
        if (!has_dropbear && !need_online) {
                log_debug("Skipping the network, as no network root, rd.neednet=1 or SSH server asks for it.");
                return 0;
        }
        if (need_online && !has_networkd)
                log_error("%s%s%s needs the network, but the image has no %s.",
                          netroot != NETROOT_NONE ? nr_key : "rd.neednet", netroot != NETROOT_NONE ? "=" : "",
                          netroot != NETROOT_NONE ? nr_value : "=1", networkd);

        if (has_dropbear) {
                r = write_ssh_service(dest, netroot == NETROOT_NONE);
                if (r < 0)
                        return r;
        }
        if (netroot == NETROOT_NONE) {
                r = write_cleanup_service(dest);
                if (r < 0)
                        return r;
        } else
                log_debug("Keeping the network up through the switch to the %s=%s root.", nr_key, nr_value);
        r = generator_add_symlink(dest, "initrd.target", "wants", "systemd-networkd.service");
        if (r < 0)
                return r;
        r = generator_add_symlink(dest, "initrd.target", "wants", "systemd-network-generator.service");
        if (r < 0)
                return r;
        if (need_online) {
                r = want_network_online(dest);
                if (r < 0)
                        return r;
        }
        return write_network_generator_dropin(dest);
}

FOYER_DEFINE_MAIN_GENERATOR(run, reset_args);
