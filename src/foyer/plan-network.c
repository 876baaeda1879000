/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The network in the image (Network=, --network): what SSH unlocking, network roots and Clevis's tang
 * pin bring the network up with. With Network=auto (the default) it goes in when something the
 * planners before this one put into the image needs it: dropbear (plan-ssh.c), a network root's tool
 * (plan-netroot.c), Clevis's tang pin (plan-clevis.c); with yes always, with no never (plan-ssh.c then
 * refuses SshUnlock=, plan-netroot.c leaves the tools out). An image without any of these has no
 * network at all, as before.
 *
 * The image gets:
 *   - systemd-networkd (FOYER_NETWORKD), systemd-network-generator and systemd-networkd-wait-online
 *     with their units and network-online.target (from the tree: Debian 12's systemd package, the
 *     systemd-networkd package from Debian 13 on), networkctl;
 *   - the .link files and udev's 80-net-setup-link.rules: interfaces get the names the real root
 *     gives them, which ip= uses;
 *   - FOYER_DEFAULT_NETWORK: DHCP on every Ethernet interface no ip= configures;
 *   - foyer-network-cleanup, when foyer's helper is there (SSH unlocking requires it, plan-ssh.c);
 *   - the network drivers (plan_network_modules()) and af_packet, for DHCP's raw sockets.
 * Whether the network comes up at boot is foyer-network-generator's decision (rd.neednet=, ip=, a
 * network root, dropbear); it finds FOYER_NETWORKD in the image. plan-base.c adds systemd-networkd's
 * user when FOYER_NETWORKD is in. */

#include <assert.h>
#include <dirent.h>
#include <unistd.h>

#include "foyer-contract.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "util.h"

#define NETWORK_DIR "/usr/lib/systemd/network"
#define NETWORK_GENERATOR "/usr/lib/systemd/systemd-network-generator"
#define NETWORKD_WAIT_ONLINE "/usr/lib/systemd/systemd-networkd-wait-online"

static const Item network_items[] = {
        { FOYER_NETWORKD,                                NEED_REQUIRED, "the network" },
        { NETWORK_GENERATOR,                             NEED_REQUIRED, "ip= on the kernel command line" },
        { NETWORKD_WAIT_ONLINE,                          NEED_REQUIRED, "network-online.target: the network is up" },
        { UNITDIR "/systemd-networkd.service",           NEED_REQUIRED, "the network" },
        { UNITDIR "/systemd-networkd.socket",            NEED_REQUIRED, "systemd-networkd.service wants it" },
        { UNITDIR "/systemd-network-generator.service",  NEED_REQUIRED, "ip= on the kernel command line" },
        { UNITDIR "/systemd-networkd-wait-online.service", NEED_REQUIRED, "network-online.target: the network is up" },
        { UNITDIR "/network-online.target",              NEED_REQUIRED, "what network roots and Tang are ordered after" },
        { UNITDIR "/network.target",                     NEED_OPTIONAL, "systemd-networkd.service wants it" },
        { UNITDIR "/network-pre.target",                 NEED_OPTIONAL, "systemd-network-generator.service wants it" },
        { "/usr/bin/networkctl",                         NEED_OPTIONAL, "the network's state, in a shell" },
        /* Names as the real root gives them: ip=...:IFNAME: means the same interface in both. */
        { RULESDIR "/80-net-setup-link.rules",           NEED_OPTIONAL, "interface names (.link files)" },
        { NETWORK_DIR "/99-default.link",                NEED_OPTIONAL, "interface names" },
        { NETWORK_DIR "/73-usb-net-by-mac.link",         NEED_OPTIONAL, "names of USB network adapters" },
};

/* The drivers of a generic image with the network: the virtual machines' cards and the common wired
 * ones of PCs and servers, and USB Ethernet adapters. Missing ones are skipped; --add-module adds more. */
static const char *const generic_nic_modules[] = {
        "virtio_net", "e1000", "e1000e", "igb", "igc", "ixgbe", "i40e", "ice", "r8169", "tg3", "bnx2",
        "bnxt_en", "atlantic", "alx", "atl1c", "sky2", "vmxnet3", "hv_netvsc", "xen_netfront", "8139cp",
        "8139too", "pcnet32", "mlx4_en", "mlx5_core", "r8152", "cdc_ether", "ax88179_178a", "asix",
        NULL
};

static const char default_network[] =
        "# foyer: DHCP on every Ethernet interface that no ip= on the kernel command line configures\n"
        "# (systemd-network-generator's files for ip=, 90-IFNAME.network and 91-default.network, come first).\n"
        "[Match]\n"
        "Type=ether\n"
        "Kind=!*\n"
        "\n"
        "[Network]\n"
        "DHCP=yes\n";

/* What in the image needs the network (Network=auto), or NULL. */
static const char *network_user(Manifest *m, const Probe *p) {
        if (manifest_find(m, FOYER_SSH_DROPBEAR))
                return "SSH unlocking";
        if (p->host && (p->host->nfs || p->host->nbd || p->host->iscsi))
                return "the host's root on the network";
        if (manifest_find(m, FOYER_NFS_MOUNT))
                return "NFS roots (" FOYER_NFS_MOUNT ")";
        if (manifest_find(m, FOYER_NBD_CLIENT))
                return "NBD roots (" FOYER_NBD_CLIENT ")";
        if (manifest_find(m, FOYER_ISCSISTART))
                return "iSCSI roots (" FOYER_ISCSISTART ")";
        if (manifest_find(m, CLEVIS_TANG_PIN))
                return "Clevis's tang pin";
        return NULL;
}

/* A clear error for what the network needs from the tree. */
static int require(Manifest *m, const char *path, const char *why) {
        _cleanup_free_ char *p = NULL;

        if (path_in_root(m->root, path, false, &p) >= 0 && access(p, X_OK) >= 0)
                return 0;
        return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "The network (for %s) needs %s%s, which is not there "
                               "(Debian package systemd, or systemd-networkd from Debian 13 on).",
                               why, streq(m->root, "/") ? "" : m->root, path);
}

int plan_network(Manifest *m, const BuildConfig *c, const Probe *p) {
        const char *why;
        int r;

        assert(m);
        assert(c);
        assert(p);

        if (c->network == NETWORK_NO) {
                log_debug("Network=no: no network in the image.");
                return 0;
        }
        why = c->network == NETWORK_YES ? "Network=yes" : network_user(m, p);
        if (!why) {
                log_debug("Nothing in the image needs the network (no SSH unlocking, network root tool or "
                          "Clevis tang pin): no network in the image.");
                return 0;
        }
        log_debug("The network goes into the image, for %s.", why);
        r = require(m, FOYER_NETWORKD, why);
        if (r >= 0)
                r = require(m, NETWORK_GENERATOR, why);
        if (r >= 0)
                r = require(m, NETWORKD_WAIT_ONLINE, why);
        if (r < 0)
                return r;
        r = plan_add_items(m, network_items, ELEMENTSOF(network_items));
        if (r < 0)
                return r;
        r = plan_add_text(m, FOYER_DEFAULT_NETWORK, 0644, default_network, "DHCP where no ip= says otherwise");
        if (r < 0)
                return r;
        /* SSH unlocking added it already, as required. */
        return plan_add_helper(m, FOYER_NETWORK_CLEANUP_PATH, "the initrd's network taken down before the switch",
                               "the initrd's addresses stay until the real root's network setup replaces them");
}

/* The network drivers of the host's interfaces that have a device (not lo, bridges, tunnels), from
 * sysfs (or $FOYER_SYSFS, as host-only's probe). Returns how many interfaces it found. */
static int host_nic_modules(char ***wanted) {
        _cleanup_free_ char *net = strjoin(sysfs_dir(), "/class/net");
        DIR *d = net ? opendir(net) : NULL;
        struct dirent *de;
        int n = 0, r = 0;

        if (!d)
                return 0;
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *link = NULL;
                char buf[4096];
                ssize_t l;

                if (de->d_name[0] == '.')
                        continue;
                link = strjoin(net, "/", de->d_name, "/device/driver/module");
                if (!link) {
                        r = log_oom();
                        break;
                }
                l = readlink(link, buf, sizeof(buf) - 1);
                if (l < 0) {
                        /* Built in, or no device: try the driver's name. */
                        free(link);
                        link = strjoin(net, "/", de->d_name, "/device/driver");
                        if (!link) {
                                r = log_oom();
                                break;
                        }
                        l = readlink(link, buf, sizeof(buf) - 1);
                        if (l < 0)
                                continue;
                }
                buf[l] = 0;
                log_debug("Host-only: network interface %s has driver %s.", de->d_name, path_basename(buf));
                if (!strv_contains(*wanted, path_basename(buf)) && strv_extend(wanted, path_basename(buf)) < 0)
                        r = log_oom();
                n++;
        }
        closedir(d);
        return r < 0 ? r : n;
}

int plan_network_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted) {
        int r;

        assert(m);
        assert(c);
        assert(p);
        assert(wanted);

        if (!manifest_find(m, FOYER_NETWORKD))
                return 0;
        /* DHCP clients send and receive on raw packet sockets. */
        if (!strv_contains(*wanted, "af_packet") && strv_extend(wanted, "af_packet") < 0)
                return log_oom();
        if (p->host) {
                r = host_nic_modules(wanted);
                if (r != 0)
                        return r < 0 ? r : 0;
                log_warning("Host-only: this host has no network interface with a driver; the image takes the "
                            "common network drivers.");
        }
        for (const char *const *n = generic_nic_modules; *n; n++)
                if (!strv_contains(*wanted, *n) && strv_extend(wanted, *n) < 0)
                        return log_oom();
        return 0;
}
