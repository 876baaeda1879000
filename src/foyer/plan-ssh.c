/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Remote unlocking over SSH (SshUnlock=, --ssh-unlock FILE): dropbear, the network, and what a login
 * runs. Without the setting nothing of this goes into the image, not even the network.
 *
 * dropbear (Debian's dropbear-bin) rather than OpenSSH: it is one program of a few hundred KiB with
 * no privilege separation user, no configuration file and no PAM, it is what Debian's
 * dropbear-initramfs and mkinitcpio's hooks put into their initrds, and it takes a forced command on
 * its command line (-c), which is how --no-shell keeps every login to the passphrase agent.
 *
 * The image gets:
 *   - dropbear, its host keys (FOYER_SSH_HOST_KEY_ED25519 and _ECDSA, 0600 and secret, so the image
 *     is written 0600) and FILE as root's authorized_keys (FOYER_SSH_AUTHORIZED_KEYS, 0600);
 *   - foyer-unlock (FOYER_UNLOCK_PATH), what every login runs, and foyer-network-cleanup;
 *   - systemd-networkd and systemd-network-generator with their units (from the tree: Debian 12's
 *     systemd package, the systemd-networkd package from Debian 13 on), the .link files and udev's
 *     80-net-setup-link.rules (interfaces get the names the real root gives them, which ip= uses),
 *     and FOYER_DEFAULT_NETWORK: DHCP on every Ethernet interface no ip= configures;
 *   - /etc/shells, which dropbear checks root's shell against; with --no-shell root's shell is
 *     foyer-unlock itself (plan-base.c), since dropbear runs even a forced command through it.
 * foyer-network-generator writes the units that start all this (and leaves them out with
 * rd.neednet=0). The network drivers are plan_ssh_modules()'s.
 *
 * The host keys are made once per system by the build host's dropbearkey, in the tree's
 * FOYER_SSH_HOST_KEY_DIR (with --root, inside that tree) or SshHostKeys=, and reused by every later
 * build: images stay byte for byte reproducible, and clients' known_hosts stay valid across kernel
 * updates. Each key gets a NAME.pub beside it (for known_hosts). */

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "foyer-contract.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "process-util.h"
#include "util.h"

#define NETWORK_DIR "/usr/lib/systemd/network"

static const Item network_items[] = {
        { UNITDIR "/systemd-networkd.service",           NEED_REQUIRED, "the network of SSH unlocking" },
        { UNITDIR "/systemd-networkd.socket",            NEED_REQUIRED, "systemd-networkd.service wants it" },
        { UNITDIR "/systemd-network-generator.service",  NEED_REQUIRED, "ip= on the kernel command line" },
        { UNITDIR "/network.target",                     NEED_OPTIONAL, "systemd-networkd.service wants it" },
        { UNITDIR "/network-pre.target",                 NEED_OPTIONAL, "systemd-network-generator.service wants it" },
        { "/usr/bin/networkctl",                         NEED_OPTIONAL, "the network's state, in a shell" },
        /* Names as the real root gives them: ip=...:IFNAME: means the same interface in both. */
        { RULESDIR "/80-net-setup-link.rules",           NEED_OPTIONAL, "interface names (.link files)" },
        { NETWORK_DIR "/99-default.link",                NEED_OPTIONAL, "interface names" },
        { NETWORK_DIR "/73-usb-net-by-mac.link",         NEED_OPTIONAL, "names of USB network adapters" },
};

/* The drivers of a generic image with SSH: the virtual machines' cards and the common wired ones of
 * PCs and servers, and USB Ethernet adapters. Missing ones are skipped; --add-module adds more. */
static const char *const ssh_modules[] = {
        "virtio_net", "e1000", "e1000e", "igb", "igc", "ixgbe", "i40e", "ice", "r8169", "tg3", "bnx2",
        "bnxt_en", "atlantic", "alx", "atl1c", "sky2", "vmxnet3", "hv_netvsc", "xen_netfront", "8139cp",
        "8139too", "pcnet32", "mlx4_en", "mlx5_core", "r8152", "cdc_ether", "ax88179_178a", "asix",
        "af_packet", NULL
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

static int add_authorized_keys(Manifest *m, const char *file) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        struct stat st;
        int r;

        if (stat(file, &st) < 0)
                return log_error_errno(errno, "SshUnlock= (--ssh-unlock) %s: %m", file);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "SshUnlock= (--ssh-unlock) %s is not a regular file.", file);
        r = read_full_file(file, &text, &size);
        if (r < 0)
                return log_error_errno(r, "SshUnlock= (--ssh-unlock) %s: %m", file);
        if (!strstr(text, "ssh-") && !strstr(text, "ecdsa-"))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "SshUnlock= (--ssh-unlock) %s holds no public key (an authorized_keys file: "
                                       "\"ssh-ed25519 AAAA...\" lines).", file);
        r = manifest_add_directory(m, "/root/.ssh", 0700, "root's SSH directory (--ssh-unlock)");
        if (r < 0 && r != -EEXIST)
                return log_error_errno(r, "Failed to add /root/.ssh: %m");
        r = manifest_add_data(m, FOYER_SSH_AUTHORIZED_KEYS, 0600, text, size, "the keys that may log in (--ssh-unlock)");
        if (r < 0)
                return log_error_errno(r, "Failed to add %s: %m", FOYER_SSH_AUTHORIZED_KEYS);
        return 0;
}

/* Runs the build host's dropbearkey with argv; its output goes to stdout_fd (stderr if < 0). */
static int run_dropbearkey(char **argv, int stdout_fd) {
        _cleanup_free_ char *exe = NULL;
        SpawnOptions o = { .stdout_fd = stdout_fd >= 0 ? stdout_fd : STDERR_FILENO };
        int r, status;

        r = find_executable("dropbearkey", &exe);
        if (r < 0)
                return log_error_errno(r, "dropbearkey is not installed (Debian package dropbear-bin): it makes the "
                                       "image's SSH host keys.");
        r = spawn_and_wait(exe, argv, &o, &status);
        if (r < 0)
                return log_error_errno(r, "Failed to run %s: %m", exe);
        if (!wait_status_ok(status))
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "%s %s %s %s failed.", exe, argv[1], argv[2], argv[3]);
        return 0;
}

static int write_text(const char *tmp, const char *path, const char *text) {
        _cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        size_t n = strlen(text);

        if (fd < 0)
                return -errno;
        if (write(fd, text, n) != (ssize_t) n || fchmod(fd, 0644) < 0 || rename(tmp, path) < 0) {
                int r = errno ? -errno : -EIO;

                (void) unlink(tmp);
                return r;
        }
        return 0;
}

/* Writes path.pub: the key's public line, for known_hosts and ssh-keygen -lf. */
static int write_public_key(const char *path) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL, *pub = NULL, *line = NULL, *tmp = NULL;
        char *argv[] = { (char *) "dropbearkey", (char *) "-y", (char *) "-f", (char *) path, NULL };
        const char *p;
        int r;

        fd = memfd_create("dropbearkey-y", MFD_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Failed to create a memory file: %m");
        r = run_dropbearkey(argv, fd);
        if (r < 0)
                return r;
        r = read_full_fd_from_start(fd, &text, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to read dropbearkey's output: %m");
        p = strstr(text, "\nssh-") ?: strstr(text, "\necdsa-");
        if (!p)
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "dropbearkey -y -f %s printed no public key.", path);
        line = strndup(p + 1, strcspn(p + 1, "\n"));
        pub = strjoin(path, ".pub");
        tmp = strjoin(path, ".pub.new");
        if (!line || !pub || !tmp)
                return log_oom();
        _cleanup_free_ char *content = strjoin(line, "\n");
        if (!content)
                return log_oom();
        r = write_text(tmp, pub, content);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s: %m", pub);
        p = strstr(text, "Fingerprint: ");
        log_info("SSH host key %s: %.*s", path, p ? (int) strcspn(p + 13, "\n") : 0, p ? p + 13 : "");
        return 0;
}

/* The host key of type in dir: made now if it is not there, refused if others may read it. Returns
 * its path on the build host. */
static int ensure_host_key(const char *dir, const char *type, const char *name, char **ret) {
        _cleanup_free_ char *path = strjoin(dir, "/", name), *tmp = strjoin(dir, "/.", name, ".new");
        struct stat st;
        int r;

        if (!path || !tmp)
                return log_oom();
        if (stat(path, &st) >= 0) {
                if (!S_ISREG(st.st_mode))
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "SSH host key %s is not a regular file.", path);
                if (st.st_mode & 0077)
                        return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                               "SSH host key %s may be read by others (mode %04o), refusing: "
                                               "chmod 600 it, or remove it to have a new one made.",
                                               path, (unsigned) (st.st_mode & 07777));
                log_debug("Reusing the SSH host key %s.", path);
                *ret = TAKE_PTR(path);
                return 0;
        }
        if (errno != ENOENT)
                return log_error_errno(errno, "Failed to access %s: %m", path);

        r = mkdir_p(dir, 0700);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s: %m", dir);
        (void) unlink(tmp);
        char *argv[] = { (char *) "dropbearkey", (char *) "-t", (char *) type, (char *) "-f", tmp, NULL };
        log_info("Making the SSH host key %s (once: later builds reuse it).", path);
        r = run_dropbearkey(argv, -1);
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        if (chmod(tmp, 0600) < 0 || rename(tmp, path) < 0) {
                r = log_error_errno(errno, "Failed to install %s: %m", path);
                (void) unlink(tmp);
                return r;
        }
        r = write_public_key(path);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(path);
        return 0;
}

static int add_host_keys(Manifest *m, const BuildConfig *c) {
        static const struct {
                const char *type, *image_path;
        } keys[] = {
                { "ed25519", FOYER_SSH_HOST_KEY_ED25519 },
                { "ecdsa",   FOYER_SSH_HOST_KEY_ECDSA },
        };
        _cleanup_free_ char *dir = NULL;
        int r;

        if (c->ssh_host_keys)
                dir = strdup(c->ssh_host_keys);
        else {
                r = chase_below_root(FOYER_SSH_HOST_KEY_DIR, m->root, &dir);
                if (r < 0 && r != -ENOMEM)
                        return log_error_errno(r, "Failed to resolve %s in %s: %m", FOYER_SSH_HOST_KEY_DIR, m->root);
        }
        if (!dir)
                return log_oom();

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_free_ char *src = NULL;
                Entry *e;

                r = ensure_host_key(dir, keys[i].type, path_basename(keys[i].image_path), &src);
                if (r < 0)
                        return r;
                r = manifest_add_file(m, keys[i].image_path, src, "SSH host key (--ssh-unlock)");
                if (r < 0)
                        return log_error_errno(r, "Failed to add %s: %m", src);
                e = manifest_find(m, keys[i].image_path);
                manifest_mark_secret(e);
                e->mode = 0600;
        }
        return 0;
}

/* A clear error for what every SSH image needs from the tree. */
static int require(Manifest *m, const char *path, const char *package) {
        _cleanup_free_ char *p = NULL;

        if (path_in_root(m->root, path, false, &p) >= 0 && access(p, X_OK) >= 0)
                return 0;
        return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "SshUnlock= (--ssh-unlock) needs %s%s, which is not there "
                               "(Debian package %s).", streq(m->root, "/") ? "" : m->root, path, package);
}

int plan_ssh(Manifest *m, const BuildConfig *c) {
        int r;

        if (!c->ssh_unlock) {
                log_debug("No SshUnlock=: no SSH server and no network in the image.");
                return 0;
        }
        r = add_authorized_keys(m, c->ssh_unlock);
        if (r < 0)
                return r;
        r = require(m, FOYER_SSH_DROPBEAR, "dropbear-bin");
        if (r < 0)
                return r;
        r = require(m, "/usr/lib/systemd/systemd-networkd", "systemd, or systemd-networkd from Debian 13 on");
        if (r < 0)
                return r;
        r = require(m, "/usr/lib/systemd/systemd-network-generator", "systemd, or systemd-networkd from Debian 13 on");
        if (r < 0)
                return r;
        r = plan_add_item(m, FOYER_SSH_DROPBEAR, NEED_REQUIRED, "SSH server (--ssh-unlock)");
        if (r < 0)
                return r;
        r = plan_add_items(m, network_items, ELEMENTSOF(network_items));
        if (r < 0)
                return r;
        r = plan_add_text(m, FOYER_DEFAULT_NETWORK, 0644, default_network, "DHCP where no ip= says otherwise (--ssh-unlock)");
        if (r < 0)
                return r;
        r = add_host_keys(m, c);
        if (r < 0)
                return r;
        r = plan_add_helper(m, FOYER_UNLOCK_PATH, "SSH unlocking (--ssh-unlock)", NULL);
        if (r < 0)
                return r;
        r = plan_add_helper(m, FOYER_NETWORK_CLEANUP_PATH, "SSH unlocking (--ssh-unlock)", NULL);
        if (r < 0)
                return r;
        /* dropbear refuses a login whose shell /etc/shells does not list. */
        return plan_add_text(m, "/etc/shells", 0644, c->no_shell ? FOYER_UNLOCK_PATH "\n" : "/bin/sh\n/usr/bin/sh\n",
                             "login shells dropbear accepts (--ssh-unlock)");
}

/* The network drivers of the host's interfaces that have a device (not lo, bridges, tunnels), from
 * sysfs (or $FOYER_SYSFS, as host-only's probe). */
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

int plan_ssh_modules(const BuildConfig *c, const Probe *p, char ***wanted) {
        int r;

        assert(c);
        assert(p);
        assert(wanted);

        if (!c->ssh_unlock)
                return 0;
        if (p->host) {
                r = host_nic_modules(wanted);
                if (r < 0)
                        return r;
                if (r > 0)
                        return strv_extend(wanted, "af_packet") < 0 ? log_oom() : 0;
                log_warning("Host-only: this host has no network interface with a driver; the image takes the "
                            "common network drivers for SSH unlocking.");
        }
        for (const char *const *n = ssh_modules; *n; n++)
                if (!strv_contains(*wanted, *n) && strv_extend(wanted, *n) < 0)
                        return log_oom();
        return 0;
}
