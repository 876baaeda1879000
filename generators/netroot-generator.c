/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-netroot-generator: sysroot.mount for the network roots foyer-root-generator leaves alone
 * (src/shared/netroot.h says which, for both), with dracut's syntax:
 *   - NFS: root=nfs:[SERVER:]/PATH[:OPTIONS], root=nfs4:..., root=SERVER:/PATH (rootfstype=nfs4 for v4),
 *     root=/dev/nfs nfsroot=SERVER:/PATH[,OPTIONS]: sysroot.mount as systemd's fstab generator writes it
 *     for root=SERVER:/PATH rootfstype=nfs4 (root-fstab.c's add_mount()), with dracut's options (ro
 *     unless rw, nolock for NFSv3);
 *   - NBD: root=nbd:SERVER:PORT[:FSTYPE[:OPTIONS[:NBDOPTS]]] or netroot=nbd:...: FOYER_NBD_ROOT_SERVICE
 *     connects FOYER_NBD_DEVICE with nbd-client, and sysroot.mount mounts it after that service;
 *   - iSCSI: netroot=iscsi:[USER:PASS[:RUSER:RPASS]@]SERVER:[PROTOCOL]:[PORT]:[LUN]:TARGET (several: one
 *     login each) with root=DEVICE, or root=iscsi:... (the LUN is the root): FOYER_ISCSI_ROOT_SERVICE_FORMAT
 *     logs in with iscsistart, sysroot.mount requires the logins; rd.iscsi.initiator=, rd.iscsi.firmware.
 * Each mount (and the NBD service) wants and is ordered after network-online.target, which
 * foyer-network-generator makes mean a configured link. A spec that cannot be parsed, or holds a byte
 * that cannot go into a unit, is logged naming the parameter, and nothing is written for it. */

#include <arpa/inet.h>
#include <dirent.h>
#include <limits.h>
#include <net/if.h>
#include <sys/stat.h>

#include "cmdline.h"
#include "fileio.h"
#include "parse-util.h"
#include "foyer-contract.h"
#include "generator.h"
#include "mount-options.h"
#include "netroot.h"
#include "devspec.h"
#include "root-fstab.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-name.h"

static char *arg_root, *arg_netroot, *arg_nfsroot, *arg_rootfstype, *arg_rootflags;
static int arg_rw = -1;
static char **arg_iscsi;            /* every netroot=iscsi:..., in command-line order */
static char *arg_iscsi_initiator;   /* rd.iscsi.initiator= */
static bool arg_iscsi_firmware;     /* rd.iscsi.firmware, rd.iscsi.ibft */

/* The one place that frees the arg_* state and sets it back to its defaults (run by generator_main()). */
static void reset_args(void) {
        char **all[] = { &arg_root, &arg_netroot, &arg_nfsroot, &arg_rootfstype, &arg_rootflags };

        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                free(*all[i]);
                *all[i] = NULL;
        }
        arg_rw = -1;
        arg_iscsi = strv_free(arg_iscsi);
        free(arg_iscsi_initiator);
        arg_iscsi_initiator = NULL;
        arg_iscsi_firmware = false;
}

/* dracut's iSCSI parameters (and their old names); netroot= goes on to parse_cmdline_item() too. */
static int parse_iscsi_item(const char *key, const char *value) {
        int b;

        if (streq(key, "netroot") && value && netroot_kind_of_netroot(value) == NETROOT_ISCSI)
                return strv_extend(&arg_iscsi, value) < 0 ? log_oom() : 0;
        if ((streq(key, "rd.iscsi.initiator") || streq(key, "iscsi_initiator")) && value)
                return free_and_strdup(&arg_iscsi_initiator, value) < 0 ? log_oom() : 0;
        if (streq(key, "rd.iscsi.firmware") || streq(key, "rd.iscsi.ibft") || streq(key, "iscsi_firmware")) {
                b = value ? parse_boolean(value) : 1;
                if (b < 0)
                        log_warning("Failed to parse %s=%s, ignoring.", key, value);
                else
                        arg_iscsi_firmware = b;
        }
        return 0;
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        if (parse_iscsi_item(key, value) < 0)
                return -ENOMEM;
        if (streq(key, "rw") && !value)
                arg_rw = 1;
        else if (streq(key, "ro") && !value)
                arg_rw = 0;
        else if (!value)
                return 0;
        else if (streq(key, "root"))
                return free_and_strdup(&arg_root, value) < 0 ? log_oom() : 0;
        else if (streq(key, "netroot") && netroot_kind_of_netroot(value) != NETROOT_NONE)
                return free_and_strdup(&arg_netroot, value) < 0 ? log_oom() : 0;
        else if (streq(key, "nfsroot"))
                return free_and_strdup(&arg_nfsroot, value) < 0 ? log_oom() : 0;
        else if (streq(key, "rootfstype"))
                return free_and_strdup(&arg_rootfstype, value) < 0 ? log_oom() : 0;
        else if (streq(key, "rootflags"))
                return strextend_with_separator(&arg_rootflags, ",", value) < 0 ? log_oom() : 0;
        return 0;
}

/* Logs why key=value is not mounted (its bytes escaped, so that no control character reaches the log). */
static int refuse(const char *key, const char *value, const char *reason) {
        _cleanup_free_ char *shown = cescape(value);

        log_error("%s=%s: %s; not mounting a network root for it.", key, shown ?: "(?)", reason);
        return 0;
}

/* sysroot.mount.d/: the network must be up first. */
static int add_network_online_dropin(const char *dest, const char *unit, const char *service) {
        int r;

        /* The service that makes the device (NBD) is required: its failure fails the mount at once. */
        r = unit_file_write_dropinf(dest, unit, 50, "foyer-netroot",
                                    "# Automatically generated by foyer-netroot-generator\n\n"
                                    "[Unit]\n"
                                    "Wants=network-online.target\n"
                                    "After=network-online.target%s%s\n%s%s%s",
                                    service ? " " : "", strempty(service),
                                    service ? "Requires=" : "", strempty(service), service ? "\n" : "");
        if (r < 0)
                return log_error_errno(r, "Failed to write the drop-in for %s: %m", unit);
        return 0;
}

static MountFlags mount_flags(void) {
        return systemd_orders_after_imports() ? MOUNT_AFTER_IMPORTS : 0;
}

static int add_nfs_root(const char *dest, const char *root_key, const char *root, const char *nfsroot) {
        _cleanup_(nfs_root_done) NfsRoot n = {};
        _cleanup_free_ char *what = NULL, *opts = NULL;
        const char *error = NULL, *key = nfsroot && path_equal(root, "/dev/nfs") ? "nfsroot" : root_key;
        bool dropped_lock = false;
        int r;

        r = nfs_root_parse(root, nfsroot, arg_rootfstype, &n, &error);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return refuse(key, streq(key, "nfsroot") ? nfsroot : root, error);
        if (arg_rootfstype && !streq(arg_rootfstype, "nfs") && !streq(arg_rootfstype, "nfs4"))
                log_warning("rootfstype=%s does not fit the NFS root %s=%s, using %s.", arg_rootfstype, root_key,
                            root, n.type);
        r = nfs_root_options(&n, arg_rootflags, arg_rw, &opts, &dropped_lock);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return refuse(key, streq(key, "nfsroot") ? nfsroot : root,
                              "an option (or rootflags=) holds a blank, a control character, a quote, a backslash, '%' or '$'");
        if (dropped_lock)
                log_warning("%s=%s: locks are not supported for an NFSv3 root (no rpc.statd in the initrd), using nolock.",
                            root_key, root);
        what = strjoin(n.server, ":", n.path);
        if (!what)
                return log_oom();
        log_debug("NFS root: what=%s type=%s opts=%s", what, n.type, opts);
        r = add_mount("/proc/cmdline", dest, what, "/sysroot", NULL, n.type, opts, 0 /* passno */, mount_flags(),
                      "initrd-root-fs.target", false);
        if (r < 0)
                return r;
        return add_network_online_dropin(dest, "sysroot.mount", NULL);
}

/* The nbd-client argv words of one NBDOPTS entry: dracut's old bs=N and timeout=N, else the option as
 * given with a leading '-' ("persist" and "-persist" both give -persist). */
static int nbd_option_words(FILE *f, const char *opt) {
        const char *v;

        if ((v = startswith(opt, "bs=")))
                fprintf(f, " -block-size %s", v);
        else if ((v = startswith(opt, "timeout=")))
                fprintf(f, " -timeout %s", v);
        else
                fprintf(f, " %s%s", opt[0] == '-' ? "" : "-", opt);
        return 0;
}

static int write_nbd_service(const char *dest, const NbdRoot *n, const char *key, const char *value) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        _cleanup_free_ char *host = NULL, *description = NULL;
        FILE *f;
        int r;

        /* nbd-client takes an IPv6 address without its brackets. */
        host = n->server[0] == '[' ? strndup(n->server + 1, strlen(n->server) - 2) : strdup(n->server);
        description = strjoin(key, "=", value);
        if (!host || !description)
                return log_oom();
        r = generator_open_unit_file(dest, "/proc/cmdline", FOYER_NBD_ROOT_SERVICE, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        /* Not stopped at the switch to the real root (no Conflicts= with initrd-switch-root.target and
         * no ExecStop=): the kernel holds the connection, which the real root's file system needs.
         * nbd-client hands the socket over through netlink and exits. */
        fprintf(f,
                "[Unit]\n"
                "Description=NBD root device (%s)\n"
                "Documentation=man:foyer-kernel-command-line(7)\n"
                "DefaultDependencies=no\n"
                "Wants=network-online.target modprobe@nbd.service\n"
                "After=network-online.target modprobe@nbd.service\n"
                "Before=initrd-root-device.target\n"
                "\n[Service]\n"
                "Type=oneshot\n"
                "RemainAfterExit=yes\n"
                "ExecStart=" FOYER_NBD_CLIENT " %s %s " FOYER_NBD_DEVICE,
                description, host, n->port);
        if (n->export)
                fprintf(f, " -name %s", n->export);
        STRV_FOREACH(o, n->nbd_opts)
                nbd_option_words(f, *o);
        fputs("\n", f);
        r = generator_commit_unit_file(u, "/proc/cmdline");
        if (r < 0)
                return r;
        return generator_add_symlink(dest, "initrd-root-device.target", "wants", FOYER_NBD_ROOT_SERVICE);
}

static int add_nbd_root(const char *dest, const char *key, const char *value) {
        _cleanup_(nbd_root_done) NbdRoot n = {};
        _cleanup_free_ char *opts = NULL;
        const char *error = NULL, *fstype, *rw;
        int r;

        r = nbd_root_parse(value, &n, &error);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return refuse(key, value, error);
        /* dracut: the spec's fs type and options first, else rootfstype= and rootflags=; ro unless rw. */
        fstype = n.fstype ?: arg_rootfstype;
        opts = strdup(strempty(n.options ?: arg_rootflags));
        if (!opts)
                return log_oom();
        if (!netroot_word_is_safe(opts, NULL) || (fstype && !netroot_word_is_safe(fstype, ",")))
                return refuse(key, value, "rootflags= or rootfstype= holds a blank, a control character, a quote, a backslash, '%' or '$'");
        rw = arg_rw > 0 ? "rw" : "ro";
        if ((arg_rw >= 0 || !mount_options_test(opts, "ro\0rw\0")) && strextend_with_separator(&opts, ",", rw) < 0)
                return log_oom();
        if (opts[0] == ',')
                memmove(opts, opts + 1, strlen(opts));

        r = write_nbd_service(dest, &n, key, value);
        if (r < 0)
                return r;
        if (streq(key, "netroot") && !isempty(arg_root)) {
                /* dracut: root= names the file system on the NBD device (root=UUID=...), which is
                 * foyer-root-generator's mount; the device appears once the service connected it. */
                log_debug("netroot=%s with root=%s: only connecting the device.", value, arg_root);
                return 0;
        }
        /* The device waits for DHCP and the server, which may take longer than systemd's default 90 s
         * device timeout: the service's own failure ends the wait instead. */
        if (!mount_options_test(opts, DEVICE_TIMEOUT_OPTIONS) &&
            strextend_with_separator(&opts, ",", "x-systemd.device-timeout=infinity") < 0)
                return log_oom();
        /* The device node exists before the server is reached (the nbd module makes nbd0..15, empty;
         * udev's 99-systemd.rules keep them SYSTEMD_READY=0 until connected): the mount requires the
         * service and is ordered after it (drop-in), not only after the device. */
        r = add_mount("/proc/cmdline", dest, FOYER_NBD_DEVICE, "/sysroot", NULL, fstype, opts, 0 /* passno */,
                      mount_flags(), "initrd-root-fs.target", false);
        if (r < 0)
                return r;
        return add_network_online_dropin(dest, "sysroot.mount", FOYER_NBD_ROOT_SERVICE);
}

/* The initiator name: rd.iscsi.initiator=, else the image's (a host-only image of an iSCSI root has the
 * host's), else FOYER_ISCSI_GENERATED_INITIATOR. $FOYER_ISCSI_INITIATORNAME_FILE replaces the image's
 * path in tests. Returns 0 with a new string, -EINVAL (logged) if rd.iscsi.initiator= cannot go into a
 * command line, or -ENOMEM (logged). */
static int iscsi_initiator(char **ret) {
        const char *path = secure_getenv("FOYER_ISCSI_INITIATORNAME_FILE") ?: FOYER_ISCSI_INITIATORNAME;
        _cleanup_free_ char *text = NULL;
        char *name = NULL;
        int r;

        if (arg_iscsi_initiator) {
                if (!netroot_word_is_safe(arg_iscsi_initiator, NULL) || arg_iscsi_initiator[0] == '-') {
                        refuse("rd.iscsi.initiator", arg_iscsi_initiator,
                               "not a name that can go into a command line (a blank, a control character, a quote, a backslash, '%' or '$', or a leading '-')");
                        return -EINVAL;
                }
                name = strdup(arg_iscsi_initiator);
                return name ? (*ret = name, 0) : log_oom();
        }
        r = read_full_file(path, &text, NULL);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Failed to read %s, ignoring: %m", path);
        /* "InitiatorName=NAME" on a line of its own; '#' starts a comment line. */
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                const char *v = startswith(line, "InitiatorName=");
                if (v && !isempty(v)) {
                        name = strdup(v);
                        if (!name)
                                return log_oom();
                        if (!netroot_word_is_safe(name, NULL) || name[0] == '-') {
                                log_warning("%s: the initiator name holds a byte that cannot go into a unit, ignoring it.", path);
                                free(name);
                                name = NULL;
                        }
                        break;
                }
        }
        if (!name) {
                log_debug("No rd.iscsi.initiator= and no name in %s: using %s.", path, FOYER_ISCSI_GENERATED_INITIATOR);
                name = strdup(FOYER_ISCSI_GENERATED_INITIATOR);
        }
        return name ? (*ret = name, 0) : log_oom();
}

/* The CHAP credentials as the drop-in FOYER_ISCSI_CHAP_DROPIN of unit, mode 0600 before a secret is
 * written: systemd reads it as root, nobody else can. The unit's ExecStart= names the variables. */
static int write_iscsi_chap_dropin(const char *dest, const char *unit, const IscsiRoot *n) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        _cleanup_free_ char *name = strjoin(unit, ".d/", FOYER_ISCSI_CHAP_DROPIN);
        FILE *f;
        int r;

        if (!name)
                return log_oom();
        r = unit_file_open(dest, name, &u);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s: %m", name);
        f = unit_file_stream(u);
        if (fchmod(fileno(f), 0600) < 0)
                return log_error_errno(errno, "Failed to make %s readable only by root: %m", name);
        fprintf(f, "[Service]\nEnvironment=ISCSI_USERNAME=%s ISCSI_PASSWORD=%s\n", n->username, n->password);
        if (n->in_username)
                fprintf(f, "Environment=ISCSI_IN_USERNAME=%s ISCSI_IN_PASSWORD=%s\n", n->in_username, n->in_password);
        r = unit_file_commit(u);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s: %m", name);
        return 0;
}

/* One login: FOYER_ISCSI_ROOT_SERVICE_FORMAT numbered index. Not stopped at the switch to the real root
 * (no Conflicts=, no ExecStop=): iscsistart logs in and exits, the session stays in the kernel. */
static int write_iscsi_service(const char *dest, unsigned index, const IscsiRoot *n, const char *initiator,
                               const char *key, const char *value, char **ret_unit) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        _cleanup_free_ char *unit = NULL, *host = NULL, *description = NULL;
        FILE *f;
        int r;

        /* iscsistart takes an IPv6 address without its brackets. */
        host = n->server[0] == '[' ? strndup(n->server + 1, strlen(n->server) - 2) : strdup(n->server);
        if (!host || asprintf(&unit, FOYER_ISCSI_ROOT_SERVICE_FORMAT, index) < 0)
                return log_oom();
        /* The credentials are not repeated in the description. */
        description = n->username ? strjoin(key, "=iscsi:...@", n->server, " ", n->target) : strjoin(key, "=", value);
        if (!description)
                return log_oom();
        r = generator_open_unit_file(dest, "/proc/cmdline", unit, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        fprintf(f,
                "[Unit]\n"
                "Description=iSCSI root login (%s)\n"
                "Documentation=man:foyer-kernel-command-line(7)\n"
                "DefaultDependencies=no\n"
                "Wants=network-online.target modprobe@iscsi_tcp.service\n"
                "After=network-online.target modprobe@iscsi_tcp.service\n"
                "Before=initrd-root-device.target\n"
                "\n[Service]\n"
                "Type=oneshot\n"
                "RemainAfterExit=yes\n"
                "ExecStart=" FOYER_ISCSISTART " -i %s -t %s -g 1 -a %s -p %s",
                description, initiator, n->target, host, n->port);
        if (n->username)
                fputs(" -u ${ISCSI_USERNAME} -w ${ISCSI_PASSWORD}", f);
        if (n->in_username)
                fputs(" -U ${ISCSI_IN_USERNAME} -W ${ISCSI_IN_PASSWORD}", f);
        fputs("\n", f);
        r = generator_commit_unit_file(u, "/proc/cmdline");
        if (r < 0)
                return r;
        if (n->username) {
                r = write_iscsi_chap_dropin(dest, unit, n);
                if (r < 0)
                        return r;
        }
        r = generator_add_symlink(dest, "initrd-root-device.target", "wants", unit);
        if (r < 0)
                return r;
        *ret_unit = TAKE_PTR(unit);
        return 0;
}

/* root=iscsi:...: the LUN itself is the root file system, found by udev's by-path name of it
 * (path_id's "ip-ADDRESS:PORT-iscsi-TARGET-lun-LUN"), so the server must be an address. Returns 0 with
 * the node, -EINVAL (logged) or -ENOMEM (logged). */
static int iscsi_lun_node(const IscsiRoot *n, char **ret) {
        _cleanup_free_ char *addr = NULL;
        unsigned char buf[16];
        char *what;

        addr = n->server[0] == '[' ? strndup(n->server + 1, strlen(n->server) - 2) : strdup(n->server);
        if (!addr)
                return log_oom();
        if (inet_pton(AF_INET, addr, buf) != 1 && inet_pton(AF_INET6, addr, buf) != 1) {
                refuse("root", arg_root, "the server of root=iscsi: must be an address (udev names the LUN by it)");
                return -EINVAL;
        }
        what = strjoin("/dev/disk/by-path/ip-", addr, ":", n->port, "-iscsi-", n->target, "-lun-", n->lun);
        if (!what)
                return log_oom();
        *ret = what;
        return 0;
}

static int add_iscsi_lun_mount(const char *dest, const char *what, const char *unit) {
        _cleanup_free_ char *opts = NULL;
        int r;

        opts = strjoin(strempty(arg_rootflags), arg_rootflags ? "," : "", arg_rw > 0 ? "rw" : "ro");
        if (!opts)
                return log_oom();
        if (!netroot_word_is_safe(opts, NULL) || (arg_rootfstype && !netroot_word_is_safe(arg_rootfstype, ",")))
                return refuse("root", arg_root, "rootflags= or rootfstype= holds a blank, a control character, a quote, a backslash, '%' or '$'");
        /* The device appears after the login, which waits for the network: the login's failure ends
         * the wait (the mount requires it), not the default 90 s device timeout. */
        if (!mount_options_test(opts, DEVICE_TIMEOUT_OPTIONS) &&
            strextend_with_separator(&opts, ",", "x-systemd.device-timeout=infinity") < 0)
                return log_oom();
        r = add_mount("/proc/cmdline", dest, what, "/sysroot", NULL, arg_rootfstype, opts, 0 /* passno */,
                      mount_flags(), "initrd-root-fs.target", false);
        if (r < 0)
                return r;
        return add_network_online_dropin(dest, "sysroot.mount", unit);
}

/* netroot=iscsi: with root=DEVICE (foyer-root-generator's mount): the device appears once every login
 * is done, which may take longer than systemd's default 90 s device timeout. The wait is made endless
 * (at level 40, so rd.timeout= and x-systemd.device-timeout= in rootflags=, both at 50, still win) and
 * sysroot.mount requires the logins: a failed one fails the mount at once. */
static int add_iscsi_root_device_deps(const char *dest, char **units) {
        _cleanup_free_ char *node = NULL, *device = NULL, *list = NULL;
        int r;

        if (isempty(arg_root))
                return 0;
        list = strv_join(units, " ");
        if (!list)
                return log_oom();
        r = add_network_online_dropin(dest, "sysroot.mount", list);
        if (r < 0)
                return r;
        if (devspec_to_node(arg_root, 0, &node) < 0)
                return log_oom();
        if (!is_device_path(node) || unit_name_from_path(node, ".device", &device) < 0) {
                log_debug("root=%s names no device: leaving its timeout alone.", arg_root);
                return 0;
        }
        return generator_write_timeout_dropin(dest, device, 40, "foyer-netroot-timeout", NULL,
                                              "JobRunningTimeoutSec", "infinity");
}

/* One service per spec (root=iscsi: alone: dracut lets it take precedence over netroot=). */
static int add_iscsi_roots(const char *dest, const char *key, char **specs) {
        _cleanup_(strv_freep) char **units = NULL;
        _cleanup_free_ char *initiator = NULL;
        unsigned index = 0;
        int r;

        r = iscsi_initiator(&initiator);
        if (r == -EINVAL)
                return 0;
        if (r < 0)
                return r;
        STRV_FOREACH(s, specs) {
                _cleanup_(iscsi_root_done) IscsiRoot n = {};
                _cleanup_free_ char *lun_node = NULL;
                const char *error = NULL;
                char *unit = NULL;

                r = iscsi_root_parse(*s, &n, &error);
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0) {
                        refuse(key, *s, error);
                        continue;
                }
                r = streq(key, "root") ? iscsi_lun_node(&n, &lun_node) : 0;
                if (r == -EINVAL)
                        return 0;
                if (r < 0)
                        return r;
                if (n.iface || n.netdev)
                        log_warning("%s=iscsi:...%s...%s: iscsistart cannot bind a session to an interface (%s%s%s), logging in over the routed one.",
                                    key, n.server, n.target, strempty(n.iface), n.iface && n.netdev ? ":" : "", strempty(n.netdev));
                r = write_iscsi_service(dest, ++index, &n, initiator, key, *s, &unit);
                if (r < 0)
                        return r;
                if (strv_consume(&units, unit) < 0)
                        return log_oom();
                if (lun_node)
                        return add_iscsi_lun_mount(dest, lun_node, unit);
        }
        if (strv_isempty(units))
                return 0;
        if (isempty(arg_root))
                log_info("netroot=iscsi: without root=: only logging in.");
        return add_iscsi_root_device_deps(dest, units);
}

/* rd.iscsi.firmware: the iBFT says which network to bring up and which target to log in to. */
static int add_iscsi_firmware(const char *dest) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        int r;

        r = generator_open_unit_file(dest, "/proc/cmdline", FOYER_ISCSI_FIRMWARE_SERVICE, &u);
        if (r < 0)
                return r;
        fputs("[Unit]\n"
              "Description=iSCSI root login from the firmware (iBFT)\n"
              "Documentation=man:foyer-kernel-command-line(7)\n"
              "DefaultDependencies=no\n"
              "Wants=modprobe@iscsi_ibft.service modprobe@iscsi_tcp.service\n"
              "After=modprobe@iscsi_ibft.service modprobe@iscsi_tcp.service systemd-udev-trigger.service network-pre.target\n"
              "Before=initrd-root-device.target\n"
              "\n[Service]\n"
              "Type=oneshot\n"
              "RemainAfterExit=yes\n"
              "ExecStart=" FOYER_ISCSISTART " -N\n"
              "ExecStart=" FOYER_ISCSISTART " -b\n",
              unit_file_stream(u));
        r = generator_commit_unit_file(u, "/proc/cmdline");
        if (r < 0)
                return r;
        return generator_add_symlink(dest, "initrd-root-device.target", "wants", FOYER_ISCSI_FIRMWARE_SERVICE);
}

/* --- root=dhcp: the root path from DHCP option 17 ---------------------------------------------------- */

static const char *leases_dir(void) {
        return secure_getenv("FOYER_DHCP_LEASES_DIR") ?: FOYER_DHCP_LEASES_DIR;
}

/* The interface name of a lease file's index, for messages ("ifindex N" when it is gone). */
static void ifname_of(int ifindex, char buf[static IF_NAMESIZE + 16]) {
        if (!if_indextoname(ifindex, buf))
                snprintf(buf, IF_NAMESIZE + 16, "ifindex %i", ifindex);
}

typedef struct DhcpRootLease {
        int ifindex;            /* of the lease with a root path; 0: none */
        char *root_path;
        char *server;           /* its next server (siaddr), else its DHCP server (may be NULL) */
        char *without;          /* the interfaces whose leases hold no root path, for the error */
} DhcpRootLease;

static void dhcp_root_lease_done(DhcpRootLease *l) {
        free(l->root_path);
        free(l->server);
        free(l->without);
        *l = (DhcpRootLease) {};
}

/* systemd-networkd's DHCPv4 leases (one file per interface index): the one of the lowest index with a
 * root path (dracut takes the first interface that got one). Returns 1 with it in *ret, 0 with none
 * (ret->without names the interfaces with a lease), or a negative errno (logged). */
static int find_dhcp_root_lease(DhcpRootLease *ret) {
        _cleanup_(dhcp_root_lease_done) DhcpRootLease best = {};
        const char *dir = leases_dir();
        struct dirent *de;
        DIR *d;
        int r = 0;

        d = opendir(dir);
        if (!d && errno != ENOENT)
                return log_error_errno(errno, "Failed to open %s: %m", dir);
        while (r >= 0 && d && (de = readdir(d))) {
                _cleanup_free_ char *path = NULL, *text = NULL, *root_path = NULL, *server = NULL;
                char name[IF_NAMESIZE + 16];
                unsigned ifindex;

                if (safe_atou(de->d_name, &ifindex) < 0 || ifindex == 0 || ifindex > INT_MAX)
                        continue;       /* networkd's temporary files, and anything else */
                path = strjoin(dir, "/", de->d_name);
                if (!path) {
                        r = log_oom();
                        break;
                }
                r = read_full_file(path, &text, NULL);
                if (r == -ENOENT) {
                        r = 0;          /* the lease went away meanwhile */
                        continue;
                }
                if (r < 0) {
                        log_error_errno(r, "Failed to read the DHCP lease %s: %m", path);
                        break;
                }
                r = dhcp_lease_get(text, "ROOT_PATH", &root_path);
                if (r > 0 && (r = dhcp_lease_get(text, "NEXT_SERVER", &server)) == 0)
                        r = dhcp_lease_get(text, "SERVER_ADDRESS", &server);
                if (r >= 0 && !root_path) {
                        ifname_of((int) ifindex, name);
                        r = strextend_with_separator(&best.without, ", ", name);
                } else if (r >= 0 && (best.ifindex == 0 || (int) ifindex < best.ifindex)) {
                        best.ifindex = (int) ifindex;
                        free(best.root_path);
                        free(best.server);
                        best.root_path = TAKE_PTR(root_path);
                        best.server = TAKE_PTR(server);
                }
                if (r < 0)
                        r = log_oom();
        }
        if (d)
                closedir(d);
        if (r < 0)
                return r;
        r = best.ifindex > 0;
        *ret = best;
        best = (DhcpRootLease) {};
        return r;
}

/* The units that wait for the lease: the drop-in that asks DHCP for option 17, run before
 * systemd-networkd starts, and FOYER_DHCP_ROOT_SERVICE, which initrd-root-fs.target requires. */
static int write_dhcp_root_units(const char *dest, const char *key, const char *value) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        int r;

        r = unit_file_write_dropinf(dest, "systemd-network-generator.service", 50, "foyer-root-dhcp",
                                    "# Automatically generated by foyer-netroot-generator\n\n"
                                    "[Service]\n"
                                    "ExecStartPost=@" FOYER_NETROOT_GENERATOR_PATH " " FOYER_DHCP_ROOT_MODE " network\n");
        if (r < 0)
                return log_error_errno(r, "Failed to write the drop-in for systemd-network-generator.service: %m");
        r = generator_open_unit_file(dest, "/proc/cmdline", FOYER_DHCP_ROOT_SERVICE, &u);
        if (r < 0)
                return r;
        /* The mount's own timeout bounds the wait once the lease is there (the network's is
         * systemd-networkd-wait-online's). Its failure fails initrd-root-fs.target: the report. */
        fprintf(unit_file_stream(u),
                "[Unit]\n"
                "Description=Root file system from the DHCP root path (%s=%s)\n"
                "Documentation=man:foyer-kernel-command-line(7)\n"
                "DefaultDependencies=no\n"
                "Wants=network-online.target\n"
                "After=network-online.target\n"
                "Before=initrd-root-fs.target\n"
                "\n[Service]\n"
                "Type=oneshot\n"
                "RemainAfterExit=yes\n"
                "TimeoutStartSec=infinity\n"
                "ExecStart=@" FOYER_NETROOT_GENERATOR_PATH " " FOYER_DHCP_ROOT_MODE " mount\n",
                key, value);
        r = generator_commit_unit_file(u, "/proc/cmdline");
        if (r < 0)
                return r;
        return generator_add_symlink(dest, "initrd-root-fs.target", "requires", FOYER_DHCP_ROOT_SERVICE);
}

/* root=dhcp (netroot=dhcp): the waiting units, and, once a lease holds a root path (the run after
 * FOYER_DHCP_ROOT_SERVICE's daemon-reload), the root it names, as root= would give it. */
static int add_dhcp_root(const char *dest, const char *key, const char *value) {
        _cleanup_(dhcp_root_lease_done) DhcpRootLease lease = {};
        _cleanup_free_ char *spec = NULL, *shown = NULL;
        char name[IF_NAMESIZE + 16];
        NetrootKind kind;
        int r;

        if (!streq(value, "dhcp"))
                return refuse(key, value, "only a DHCPv4 root path is supported (root=dhcp)");
        r = write_dhcp_root_units(dest, key, value);
        if (r < 0)
                return r;
        r = find_dhcp_root_lease(&lease);
        if (r < 0)
                return r;
        if (r == 0) {
                log_debug("%s=%s: no DHCP lease with a root path yet; " FOYER_DHCP_ROOT_SERVICE
                          " mounts it once the network is up.", key, value);
                return 0;
        }
        ifname_of(lease.ifindex, name);
        r = dhcp_root_path_to_spec(lease.root_path, lease.server, &spec, &kind);
        if (r < 0)
                return log_oom();
        shown = cescape(spec);
        log_info("%s=%s: the root path %s from the DHCP lease of %s.", key, value, shown ?: "(?)", name);
        switch (kind) {
        case NETROOT_NFS:
                return add_nfs_root(dest, "root-path (DHCP option 17)", spec, NULL);
        case NETROOT_NBD:
                return add_nbd_root(dest, "root-path (DHCP option 17)", spec);
        default:
                return refuse("root-path (DHCP option 17)", spec, "foyer takes NFS and NBD root paths from DHCP, not this kind yet");
        }
}

/* "network": RequestOptions=17 for FOYER_DEFAULT_NETWORK and the .network files of ip= (a static one
 * ignores it), as drop-ins, which systemd-networkd reads from every network directory. */
static int dhcp_root_request_option(void) {
        const char *dir = secure_getenv("FOYER_NETWORK_RUN_DIR") ?: FOYER_NETWORK_RUN_DIR;
        _cleanup_strv_free_ char **names = NULL;
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (strv_extend(&names, path_basename(FOYER_DEFAULT_NETWORK)) < 0)
                return log_oom();
        d = opendir(dir);
        if (!d && errno != ENOENT)
                return log_error_errno(errno, "Failed to open %s: %m", dir);
        while (r >= 0 && d && (de = readdir(d)))
                if (de->d_name[0] != '.' && endswith(de->d_name, ".network") && !streq(de->d_name, names[0]))
                        r = strv_extend(&names, de->d_name);
        if (d)
                closedir(d);
        if (r < 0)
                return log_oom();
        STRV_FOREACH(n, names) {
                _cleanup_free_ char *dropin_dir = strjoin(dir, "/", *n, ".d"),
                                    *path = strjoin(dir, "/", *n, ".d/" FOYER_DHCP_ROOT_DROPIN);
                int k;

                if (!dropin_dir || !path)
                        return log_oom();
                k = mkdir_p(dropin_dir, 0755);
                if (k >= 0)
                        k = write_string_file_atomic(path,
                                                     "# foyer-netroot-generator: root=dhcp takes the root path from DHCP option 17\n"
                                                     "[DHCPv4]\n"
                                                     "RequestOptions=17\n");
                if (k < 0)
                        RET_GATHER(r, log_error_errno(k, "Failed to write %s: %m", path));
                else
                        log_debug("Wrote %s.", path);
        }
        return r;
}

/* "mount": the lease is there (network-online.target was reached): systemd reloads, which runs this
 * generator again, now writing sysroot.mount for the root path, and the mount is started; its failure
 * is this unit's. No root path: the error, naming the interfaces and what they lack. */
static int dhcp_root_mount(void) {
        _cleanup_(dhcp_root_lease_done) DhcpRootLease lease = {};
        _cleanup_free_ char *shown = NULL;
        char name[IF_NAMESIZE + 16];
        int r;

        r = find_dhcp_root_lease(&lease);
        if (r < 0)
                return r;
        if (r == 0) {
                if (lease.without)
                        return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                               "root=dhcp: no DHCP lease holds a root path (option 17, root-path); leases on: %s. "
                                               "The DHCP server must send one, or give root= a root of its own.",
                                               lease.without);
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "root=dhcp: no interface got a DHCPv4 lease (none in %s), so there is no root path "
                                       "(option 17). Check the network (ip=) and the DHCP server.", leases_dir());
        }
        ifname_of(lease.ifindex, name);
        shown = cescape(lease.root_path);
        if (!shown)
                return log_oom();
        log_info("root=dhcp: the root path %s from the DHCP lease of %s.", shown, name);
        r = generator_systemctl((const char *[]) { "daemon-reload", NULL });
        if (r < 0)
                return r;
        r = generator_systemctl((const char *[]) { "start", "sysroot.mount", NULL });
        if (r < 0)
                return log_error_errno(r, "root=dhcp: the root path %s from the DHCP lease of %s was not mounted "
                                       "(see foyer-netroot-generator's and sysroot.mount's messages).",
                                       shown, name);
        return 0;
}

static int dhcp_root_main(int argc, char *argv[]) {
        if (!in_initrd())
                return log_error_errno(SYNTHETIC_ERRNO(EPERM), "This program is only useful in the initrd.");
        if (argc == 2 && streq(argv[1], "network"))
                return dhcp_root_request_option();
        if (argc == 2 && streq(argv[1], "mount"))
                return dhcp_root_mount();
        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Usage: " FOYER_DHCP_ROOT_MODE " network|mount");
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        const char *key, *value;
        NetrootKind kind;
        int r;

        assert(dest);

        r = cmdline_parse(parse_cmdline_item, NULL, 0);
        if (r < 0)
                log_warning_errno(r, "Failed to parse the kernel command line, ignoring: %m");
        if (arg_iscsi_firmware) {
                r = add_iscsi_firmware(dest);
                if (r < 0)
                        return r;
        }
        kind = netroot_kind_of(arg_root, arg_netroot, &key, &value);
        switch (kind) {
        case NETROOT_NONE:
                log_debug("Skipping, as no network root was requested.");
                return 0;
        case NETROOT_NFS:
                return add_nfs_root(dest, "root", arg_root, arg_nfsroot);
        case NETROOT_NBD:
                return add_nbd_root(dest, key, value);
        case NETROOT_ISCSI:
                return add_iscsi_roots(dest, key, streq(key, "root") ? (char *[]) { arg_root, NULL } : arg_iscsi);
        case NETROOT_DHCP:
                return add_dhcp_root(dest, key, value);
        default:
                return refuse(key, value, "foyer does not implement this network root yet");
        }
}

static int netroot_main(int argc, char *argv[]) {
        int r;

        if (!streq(program_invocation_short_name, FOYER_DHCP_ROOT_MODE))
                return generator_main(argc, argv, run, reset_args);

        log_set_target(LOG_TARGET_AUTO);
        log_parse_environment();
        log_open();
        r = dhcp_root_main(argc, argv);
        reset_args();
        log_close();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

FOYER_DEFINE_MAIN(netroot_main);
