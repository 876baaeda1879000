/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* One volume's units, as systemd 252's create_disk() writes them: the systemd-cryptsetup@ service, its
 * cryptsetup.target and dev-mapper-NAME.device links, the device-timeout drop-ins, and for key or header
 * files on a separate device a mount and an umount service. */

#include <sys/stat.h>

#include "crypt-disk.h"
#include "cryptsetup-unit.h"
#include "devspec.h"
#include "fileio.h"
#include "generator.h"
#include "mount-options.h"
#include "parse-util.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-name.h"

/* systemd's path_join() for two parts: one '/' between them unless either side has it; NULL or "" b
 * gives a copy of a. */
static char *path_join2(const char *a, const char *b) {
        if (isempty(b))
                return strdup(a);
        return strjoin(a, endswith(a, "/") || b[0] == '/' ? "" : "/", b);
}

/* keyfile-timeout=: how long the job of a key (or header) device may run before the unlock falls back
 * to asking. 252 writes this header with a trailing space (the " " header tail). */
static int write_keydev_timeout(const char *dest, const char *device_unit, const char *timeout) {
        return generator_write_timeout_dropin(dest, device_unit, 90, "device-timeout", " ",
                                              "JobRunningTimeoutSec", timeout);
}

/* Writes the mount of device on <runtime_dir>/<prefix>-<name> (created now, mode 0700, so that key
 * material never sits in a world-readable directory) and the service unmounting it again. Returns the
 * mount unit, the umount service and the mount point. */
static int write_device_mount(const char *dest, const char *runtime_dir, const char *name, const char *device,
                              const char *prefix, const char *timeout, bool canfail, bool readonly,
                              char **ret_mount_unit, char **ret_umount_unit, char **ret_where) {
        _cleanup_free_ char *escaped = NULL, *where = NULL, *mount_unit = NULL, *umount_unit = NULL;
        _cleanup_unit_file_ UnitFile *m = NULL, *u = NULL;
        int r;

        assert(dest);
        assert(runtime_dir);
        assert(name);
        assert(device);
        assert(prefix);
        assert(ret_mount_unit);
        assert(ret_umount_unit);
        assert(ret_where);

        r = mkdir_parents(runtime_dir, 0755);
        if (r >= 0 && mkdir(runtime_dir, 0700) < 0 && errno != EEXIST)
                r = -errno;
        if (r < 0)
                return log_error_errno(r, "Failed to create %s: %m", runtime_dir);

        escaped = cescape(name);
        if (!escaped)
                return log_oom();
        where = strjoin(runtime_dir, "/", prefix, "-", escaped);
        if (!where)
                return log_oom();
        if (mkdir(where, 0700) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Failed to create %s: %m", where);

        r = generator_open_unit_for_path(dest, NULL, where, ".mount", &mount_unit, &m);
        if (r < 0)
                return r;
        fprintf(unit_file_stream(m),
                "[Unit]\n"
                "DefaultDependencies=no\n\n"
                "[Mount]\n"
                "What=%s\n"
                "Where=%s\n"
                "Options=%s%s\n",
                device, where, readonly ? "ro" : "rw", canfail ? ",nofail" : "");

        if (timeout) {
                usec_t t;

                if (parse_sec_fix_0(timeout, &t) >= 0) {
                        _cleanup_free_ char *device_unit = NULL;

                        r = unit_name_from_path(device, ".device", &device_unit);
                        if (r < 0)
                                return log_error_errno(r, "Failed to generate unit name for %s: %m", device);
                        r = write_keydev_timeout(dest, device_unit, timeout);
                        if (r < 0)
                                return r;
                } else
                        log_warning("Failed to parse keyfile-timeout=%s for %s, ignoring.", timeout, name);
        }

        r = generator_commit_unit_file(m, NULL);
        if (r < 0)
                return r;

        umount_unit = strjoin(prefix, "-", escaped, "-umount.service");
        if (!umount_unit)
                return log_oom();
        r = generator_open_unit_file(dest, NULL, umount_unit, &u);
        if (r < 0)
                return r;
        fprintf(unit_file_stream(u),
                "[Unit]\n"
                "DefaultDependencies=no\n"
                "After=%s\n\n"
                "[Service]\n"
                "ExecStart=-%s %s\n\n",
                mount_unit, systemd_umount_path(), where);
        r = generator_commit_unit_file(u, NULL);
        if (r < 0)
                return r;

        *ret_mount_unit = TAKE_PTR(mount_unit);
        *ret_umount_unit = TAKE_PTR(umount_unit);
        *ret_where = TAKE_PTR(where);
        return 0;
}

/* Ordering and requirement lines for a key or header file that is not on a separate device. */
static int write_file_dependencies(FILE *f, const char *dest, const char *path, const char *timeout,
                                   bool canfail) {
        _cleanup_free_ char *node = NULL, *unit = NULL;
        int r;

        assert(f);
        assert(dest);

        if (!path || streq(path, "-") || streq(path, "none"))
                return 0;
        /* A bare "header" option: 257 wrote an empty RequiresMountsFor=, 262 writes nothing. */
        if (isempty(path) && systemd_skips_empty_file_dependency())
                return 0;
        if (path_equal(path, "/dev/urandom") || path_equal(path, "/dev/random") ||
            path_equal(path, "/dev/hw_random") || path_equal(path, "/dev/hwrng")) {
                fputs("After=systemd-random-seed.service\n", f);
                return 0;
        }

        if (devspec_to_node(path, DEVSPEC_NO_ID, &node) < 0)
                return log_oom();
        if (path_equal(node, "/dev/null"))
                return 0;

        if (!path_startswith(node, "/dev/")) {
                _cleanup_free_ char *escaped = specifier_escape(path);

                if (!escaped)
                        return log_oom();
                fprintf(f, "%s=%s\n", canfail && systemd_wants_mounts_for() ? "WantsMountsFor" : "RequiresMountsFor",
                        escaped);
                return 0;
        }

        r = unit_name_from_path(node, ".device", &unit);
        if (r < 0)
                return log_error_errno(r, "Failed to generate unit name for %s: %m", node);
        fprintf(f, "After=%s\n", unit);
        if (!canfail) {
                fprintf(f, "Requires=%s\n", unit);
                return 0;
        }
        /* keyfile-timeout=: wait that long for the key device, then fall back to asking (a nofail volume's
         * key or header device, from 256 on: wanted, without a timeout of its own). */
        fprintf(f, "Wants=%s\n", unit);
        return timeout ? write_keydev_timeout(dest, unit, timeout) : 0;
}

int crypt_write_volume(const char *dest, const char *runtime_dir, const CryptVolume *v) {
        _cleanup_free_ char *unit = NULL, *mapper_unit = NULL, *node = NULL, *node_unit = NULL,
                            *keyfile_timeout = NULL, *header_path = NULL, *filtered_header = NULL,
                            *tmp_fstype = NULL, *key_buffer = NULL, *filtered = NULL, *name_escaped = NULL,
                            *keydev_where = NULL, *headerdev_where = NULL, *header_options = NULL;
        _cleanup_unit_file_ UnitFile *u = NULL;
        const char *options = v->options, *key_file = v->key_file;
        bool noauto, nofail, swap, netdev, attach_in_initrd;
        int r, keyfile_can_timeout, detached_header, tmp;
        FILE *f;

        assert(dest);
        assert(runtime_dir);
        assert(v);
        assert(v->name);
        assert(v->device);

        noauto = mount_options_test_yes_no(options, "noauto\0auto\0");
        nofail = mount_options_test_yes_no(options, "nofail\0fail\0");
        swap = mount_options_test(options, "swap\0");
        netdev = mount_options_test(options, "_netdev\0");
        /* 257 implies x-initrd.attach for "root" and "usr", the names the Discoverable Partitions
         * Specification gives those volumes: the system runs off them, so shutdown cannot detach them
         * (upstream commit 8ce02b87, the one that also moved Before=umount.target next to Conflicts=). */
        attach_in_initrd = mount_options_test(options, "x-initrd.attach\0") ||
                           (systemd_version() >= 257 && (streq(v->name, "root") || streq(v->name, "usr")));

        keyfile_can_timeout = mount_options_filter(options, "keyfile-timeout\0", &keyfile_timeout, NULL, NULL);
        detached_header = mount_options_filter(options, "header\0", &header_path, NULL,
                                               v->headerdev ? &filtered_header : NULL);
        tmp = mount_options_filter(options, "tmp\0", &tmp_fstype, NULL, NULL);
        if (keyfile_can_timeout < 0 || detached_header < 0 || tmp < 0)
                return log_oom();

        if (tmp && swap)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "Device '%s' cannot be both 'tmp' and 'swap'. Ignoring.", v->name);
        if (keyfile_can_timeout > 0 && !keyfile_timeout) {
                /* systemd 252 aborts on a bare "keyfile-timeout" with a key file on a device. */
                log_warning("Option keyfile-timeout of '%s' has no value, ignoring it.", v->name);
                keyfile_can_timeout = 0;
        }
        if (v->keydev && !key_file)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "Key device is specified, but path to the key file is missing.");

        name_escaped = specifier_escape(v->name);
        if (!name_escaped)
                return log_oom();
        r = cryptsetup_unit_name(v->name, &unit);
        if (r >= 0)
                r = cryptsetup_mapper_device_unit(v->name, &mapper_unit);
        if (r < 0)
                return log_error_errno(r, "Failed to generate unit name for volume '%s': %m", v->name);
        if (devspec_to_node(v->device, DEVSPEC_NO_ID, &node) < 0)
                return log_oom();
        r = unit_name_from_path(node, ".device", &node_unit);
        if (r < 0)
                return log_error_errno(r, "Failed to generate unit name for %s: %m", node);

        r = generator_open_unit_file(dest, v->source, unit, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);

        cryptsetup_write_unit_section(f, v->source);
        if (netdev)
                fputs("After=remote-fs-pre.target\n", f);
        /* Attached by the initrd: the initrd detaches it again, so umount.target of the host must not. */
        if (!attach_in_initrd)
                /* 257 orders before umount.target here; 252 does it after the device's BindsTo=. */
                fputs(systemd_version() >= 257 ? "Conflicts=umount.target\nBefore=umount.target\n"
                                               : "Conflicts=umount.target\n", f);

        if (v->keydev) {
                _cleanup_free_ char *mount_unit = NULL, *umount_unit = NULL;

                r = write_device_mount(dest, runtime_dir, v->name, v->keydev, "keydev", keyfile_timeout,
                                       keyfile_can_timeout > 0, true, &mount_unit, &umount_unit, &keydev_where);
                if (r < 0)
                        return log_error_errno(r, "Failed to generate keydev mount unit: %m");
                key_buffer = path_join2(keydev_where, key_file);
                if (!key_buffer)
                        return log_oom();
                key_file = key_buffer;
                fprintf(f, "After=%s\n%s=%s\n", mount_unit, keyfile_can_timeout > 0 ? "Wants" : "Requires",
                        mount_unit);
                fprintf(f, "Wants=%s\nBefore=%s\n", umount_unit, umount_unit);
        }

        if (v->headerdev) {
                _cleanup_free_ char *mount_unit = NULL, *umount_unit = NULL, *p = NULL;

                /* The header is always needed, and LUKS2 recovery writes to it. */
                r = write_device_mount(dest, runtime_dir, v->name, v->headerdev, "headerdev", NULL, false, false,
                                       &mount_unit, &umount_unit, &headerdev_where);
                if (r < 0)
                        return log_error_errno(r, "Failed to generate header device mount unit: %m");
                p = path_join2(headerdev_where, header_path);
                if (!p)
                        return log_oom();
                free(header_path);
                header_path = TAKE_PTR(p);
                header_options = isempty(filtered_header) ? strjoin("header=", header_path)
                                                          : strjoin(filtered_header, ",header=", header_path);
                if (!header_options)
                        return log_oom();
                options = header_options;
                fprintf(f, "After=%s\nRequires=%s\n", mount_unit, mount_unit);
                fprintf(f, "Wants=%s\nBefore=%s\n", umount_unit, umount_unit);
        }

        if (!nofail)
                fprintf(f, "Before=%s\n", netdev ? "remote-cryptsetup.target" : "cryptsetup.target");

        if (key_file && !v->keydev) {
                /* From 256 on a nofail volume's key file may be missing too (then it asks for a passphrase). */
                r = write_file_dependencies(f, dest, key_file, keyfile_timeout,
                                            keyfile_can_timeout > 0 || (nofail && systemd_wants_mounts_for()));
                if (r < 0)
                        return r;
        }
        if (detached_header > 0 && !v->headerdev) {
                r = write_file_dependencies(f, dest, header_path, NULL, nofail && systemd_wants_mounts_for());
                if (r < 0)
                        return r;
        }

        if (path_startswith(node, "/dev/"))
                fprintf(f,
                        "BindsTo=%1$s\n"
                        "After=%1$s\n"
                        "%2$s",
                        node_unit, systemd_version() >= 257 ? "" : "Before=umount.target\n");
        else {
                /* An image file: it is attached through a loop device, which needs /dev/loop-control. */
                _cleanup_free_ char *escaped = specifier_escape(node);

                if (!escaped)
                        return log_oom();
                if (systemd_version() >= 257)
                        /* 257 loads the loop module itself rather than waiting for the static nodes. */
                        fprintf(f,
                                "RequiresMountsFor=%s\n"
                                "Wants=modprobe@loop.service\n"
                                "After=modprobe@loop.service\n",
                                escaped);
                else
                        fprintf(f,
                                "RequiresMountsFor=%s\n"
                                "Requires=systemd-tmpfiles-setup-dev.service\n"
                                "After=systemd-tmpfiles-setup-dev.service\n",
                                escaped);
        }

        /* As 252, a drop-in that cannot be written does not stop the unit (logged by the helper). */
        r = generator_write_timeouts(dest, v->device, v->name, options, &filtered);
        if (r == -ENOMEM)
                return r;

        r = cryptsetup_write_service_section(f, v->name, node, key_file, filtered);
        if (r == -EBADMSG)
                return log_error_errno(r, "Refusing to write the unit of '%s' from '%s': an ExecStart= argument contains a control character or ends in a backslash.",
                                       v->name, strna(v->source));
        if (r < 0)
                return log_oom();

        if (tmp) {
                _cleanup_free_ char *fstype = tmp_fstype ? specifier_escape(tmp_fstype) : NULL;

                if (tmp_fstype && !fstype)
                        return log_oom();
                fprintf(f, "ExecStartPost=%s/systemd-makefs '%s' '/dev/mapper/%s'\n",
                        systemd_libexec_dir(), fstype ?: "ext4", name_escaped);
        }
        if (swap)
                fprintf(f, "ExecStartPost=%s/systemd-makefs swap '/dev/mapper/%s'\n", systemd_libexec_dir(),
                        name_escaped);

        r = generator_commit_unit_file(u, v->source);
        if (r < 0)
                return r;

        if (!noauto) {
                r = generator_add_symlink(dest, netdev ? "remote-cryptsetup.target" : "cryptsetup.target",
                                          nofail ? "wants" : "requires", unit);
                if (r < 0)
                        return r;
        }
        /* Always: whoever needs /dev/mapper/NAME (root=/dev/mapper/NAME) pulls the unlock in. */
        r = generator_add_symlink(dest, mapper_unit, "requires", unit);
        if (r < 0)
                return r;

        /* Waiting for a passphrase must not time out the job of the mapped device. */
        if (!noauto && !nofail)
                (void) generator_write_timeout_dropin(dest, mapper_unit, 40, "device-timeout", NULL,
                                                      "JobTimeoutSec", systemd_timeout_infinity());
        return 0;
}
