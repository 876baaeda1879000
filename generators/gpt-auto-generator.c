/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-gpt-auto-generator: root discovery without root= (the Discoverable Partitions Specification),
 * byte-compatible with systemd 252's systemd-gpt-auto-generator in the initrd. As in 252 the disk is not
 * looked at here: udev's blkid builtin finds the root partition on the disk of the ESP named by
 * LoaderDevicePartUUID and links it as /dev/gpt-auto-root (or /dev/gpt-auto-root-luks, unlocked as
 * "root"); the units written here wait for that link. foyer adds one unit, foyer-gpt-auto-root.service,
 * which runs this program again with --root-discovered once /sysroot is mounted (see gpt-auto-root.c). */

#include "cmdline.h"
#include "cryptsetup-unit.h"
#include "efi-loader.h"
#include "generator.h"
#include "gpt-auto.h"
#include "parse-util.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-file.h"
#include "unit-name.h"


static bool arg_enabled = true;
static bool arg_root_enabled = true;
static bool arg_root_other;     /* a root= other than gpt-auto decides (see parse_item()) */
static int arg_root_rw = -1;
/* rootfstype= and rootflags=, which 257 (not 252) applies to the discovered root. */
static char *arg_root_fstype = NULL;
static char *arg_root_options = NULL;

/* The one place that sets the arg_* state back to its defaults; run by generator_main() after run(). */
static void reset_args(void) {
        arg_enabled = arg_root_enabled = true;
        arg_root_other = false;
        arg_root_rw = -1;
        free(arg_root_fstype);
        free(arg_root_options);
        arg_root_fstype = arg_root_options = NULL;
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        int r;

        if (cmdline_key_streq(key, "systemd.gpt_auto") || cmdline_key_streq(key, "rd.systemd.gpt_auto")) {
                r = value ? parse_boolean(value) : 1;
                if (r < 0)
                        log_warning_errno(r, "Failed to parse gpt-auto switch \"%s\", ignoring: %m", value);
                else
                        arg_enabled = r;
        } else if (cmdline_key_streq(key, "root")) {
                if (cmdline_value_missing(key, value))
                        return 0;
                /* 252 and 257: any root= but gpt-auto turns discovery off for good, even if root=gpt-auto
                 * follows. 262, like the root generator, lets the last root= decide (else "root=/dev/sda2
                 * root=gpt-auto" would mount nothing at all). */
                if (!streq(value, "gpt-auto")) {
                        arg_root_other = true;
                        log_debug("Disabling root partition auto-detection, root= is defined.");
                } else if (systemd_gpt_auto_last_root_wins())
                        arg_root_other = false;
        } else if (cmdline_key_streq(key, "roothash")) {
                if (cmdline_value_missing(key, value))
                        return 0;
                /* A verity root is set up by veritysetup, not discovered. */
                arg_root_enabled = false;
        } else if (cmdline_key_streq(key, "rootfstype") || cmdline_key_streq(key, "rootflags")) {
                if (cmdline_value_missing(key, value))
                        return 0;
                /* Both end up in sysroot.mount: nothing that would add a line to it (as the root generator). */
                if (!unit_value_is_safe(value)) {
                        log_warning("Ignoring %s=: the value contains a control character or ends in a backslash.", key);
                        return 0;
                }
                if (cmdline_key_streq(key, "rootfstype"))
                        return free_and_strdup(&arg_root_fstype, value) < 0 ? log_oom() : 0;
                if (strextend_with_separator(&arg_root_options, ",", value) < 0)
                        return log_oom();
        } else if (cmdline_key_streq(key, "rw") && !value)
                arg_root_rw = true;
        else if (cmdline_key_streq(key, "ro") && !value)
                arg_root_rw = false;
        return 0;
}

/* PID 1 (since 251) exports its container detection to generators as $SYSTEMD_VIRTUALIZATION; a foyer
 * initrd never runs in a container, so that is all foyer checks (systemd 252 runs detect_container()
 * again, which looks at files of the machine; the tests need a generator that does not). */
static bool in_container(void) {
        return startswith(strempty(getenv("SYSTEMD_VIRTUALIZATION")), "container:");
}

/* systemd-cryptsetup@root.service: unlocks the LUKS root once udev links it as gpt-auto-root-luks. Only
 * that device wants it, so nothing waits for it on an unencrypted root. */
static int add_root_cryptsetup(const char *dest) {
        _cleanup_free_ char *device = NULL, *unit = NULL, *mapper = NULL;
        _cleanup_unit_file_ UnitFile *u = NULL;
        FILE *f;
        int r;

        assert(dest);

        r = unit_name_from_path(FOYER_GPT_AUTO_ROOT_LUKS, ".device", &device);
        if (r >= 0)
                r = cryptsetup_unit_name("root", &unit);
        if (r >= 0)
                r = cryptsetup_mapper_device_unit("root", &mapper);
        if (r < 0)
                return log_error_errno(r, "Failed to generate unit name: %m");

        r = generator_open_unit_file(dest, NULL, unit, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        cryptsetup_write_unit_section(f, NULL);
        fprintf(f,
                "Before=umount.target cryptsetup.target\n"
                "Conflicts=umount.target\n"
                "BindsTo=%1$s\n"
                "After=%1$s\n",
                device);
        r = cryptsetup_write_service_section(f, "root", FOYER_GPT_AUTO_ROOT_LUKS, NULL, NULL);
        if (r < 0)
                return log_oom();
        r = generator_commit_unit_file(u, NULL);
        if (r < 0)
                return r;

        r = generator_add_symlink(dest, device, "wants", unit);
        if (r < 0)
                return r;

        /* The passphrase prompt has its own timeout; the mapped device must not time out under it. */
        (void) generator_write_timeout_dropin(dest, mapper, 50, "job-timeout", NULL, "JobTimeoutSec",
                                              systemd_timeout_infinity());
        return 0;
}

/* The root's mount options as 257's partition_pick_mount_options() picks them for a root partition
 * (without asking the kernel about file system types it does not list), then rootflags=. */
static char *root_options_257(void) {
        static char *const norecovery[] = { (char *) "ext3", (char *) "ext4", (char *) "xfs", NULL };
        static char *const discard[] = { (char *) "btrfs", (char *) "f2fs", (char *) "ext4", (char *) "vfat",
                                         (char *) "xfs", NULL };
        const char *t = arg_root_fstype;
        bool rw = arg_root_rw > 0;
        _cleanup_free_ char *o = NULL;

        /* Read-only ext3/ext4/xfs would still replay their journal: 257 asks for norecovery. */
        if (!rw && t && strv_contains(norecovery, t) &&
            strextend_with_separator(&o, ",", "norecovery") < 0)
                return NULL;
        if (t && strv_contains(discard, t) && strextend_with_separator(&o, ",", "discard") < 0)
                return NULL;
        if (strextend_with_separator(&o, ",", rw ? "rw,nodev,suid,exec" : "ro,nodev,suid,exec") < 0)
                return NULL;
        if (arg_root_options && strextend_with_separator(&o, ",", arg_root_options) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static int add_sysroot_mount(const char *dest) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        _cleanup_free_ char *options = NULL;
        bool v257 = systemd_version() >= 257;
        FILE *f;
        int r;

        assert(dest);

        options = v257 ? root_options_257() : strdup(arg_root_rw > 0 ? "rw" : "ro");
        if (!options)
                return log_oom();

        r = generator_open_unit_file(dest, NULL, "sysroot.mount", &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        fprintf(f,
                "[Unit]\n"
                "Description=Root Partition\n"
                "Documentation=man:systemd-gpt-auto-generator(8)\n"
                "Before=initrd-root-fs.target\n");
        r = generator_write_fsck_deps(f, dest, FOYER_GPT_AUTO_ROOT, "/sysroot", v257 ? arg_root_fstype : NULL);
        if (r < 0)
                return r;
        r = generator_write_blockdev_dependency(f, FOYER_GPT_AUTO_ROOT);
        if (r < 0)
                return r;
        /* 252 mounts read-only unless "rw" is given and ignores rootflags=/rootfstype= here; 257 applies
         * them. */
        fprintf(f,
                "\n"
                "[Mount]\n"
                "What=" FOYER_GPT_AUTO_ROOT "\n"
                "Where=/sysroot\n"
                "%s%s%s"
                "Options=%s\n",
                v257 && arg_root_fstype ? "Type=" : "", v257 ? strempty(arg_root_fstype) : "",
                v257 && arg_root_fstype ? "\n" : "", options);
        r = generator_commit_unit_file(u, NULL);
        if (r < 0)
                return r;
        /* 257 measures the discovered root into PCR 15 (systemd-pcrfs@sysroot.service, which does
         * nothing unless booted from a measured UKI). */
        if (systemd_ships_growfs_units()) {
                r = generator_hook_up_pcrfs(dest, "/sysroot", "initrd-root-fs.target");
                if (r < 0)
                        return r;
        }
        return generator_add_symlink(dest, "initrd-root-fs.target", "requires", "sysroot.mount");
}

/* foyer's addition: once /sysroot is mounted, check that it is the discovered partition, apply its GPT
 * flags and mount a discovered /usr; it logs the partitions it found by PARTUUID. After
 * systemd-repart.service too (when the image has it, for the tree's repart definitions): the grow-fs
 * flag's systemd-growfs must see the partition repart grew, as systemd's own
 * systemd-growfs-root.service is ordered after it. */
static int add_root_discovered_service(const char *dest) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        int r;

        assert(dest);

        r = generator_open_unit_file(dest, NULL, GPT_AUTO_ROOT_SERVICE, &u);
        if (r < 0)
                return r;
        fprintf(unit_file_stream(u),
                "[Unit]\n"
                "Description=Discovered Root Partition Setup\n"
                "Documentation=man:systemd-gpt-auto-generator(8)\n"
                "DefaultDependencies=no\n"
                "After=sysroot.mount systemd-repart.service\n"
                "Before=initrd-root-fs.target initrd-fs.target\n"
                "ConditionPathIsMountPoint=/sysroot\n"
                "\n"
                "[Service]\n"
                "Type=oneshot\n"
                "RemainAfterExit=yes\n"
                "ExecStart=" FOYER_GPT_AUTO_GENERATOR_PATH " " GPT_AUTO_ROOT_SETUP_ARG "\n");
        r = generator_commit_unit_file(u, NULL);
        if (r < 0)
                return r;
        return generator_add_symlink(dest, "initrd-root-fs.target", "wants", GPT_AUTO_ROOT_SERVICE);
}

static int add_root_mount(const char *dest) {
        int r;

        if (!is_efi_boot()) {
                log_debug("Not an EFI boot, not creating root mount.");
                return 0;
        }

        r = efi_loader_get_device_part_uuid(NULL);
        if (r == -ENOENT) {
                log_notice("EFI loader partition unknown, exiting.\n"
                           "(The boot loader did not set EFI variable LoaderDevicePartUUID.)");
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read ESP partition UUID: %m");

        r = generator_write_initrd_root_device_deps(dest, FOYER_GPT_AUTO_ROOT);
        if (r < 0)
                return 0; /* 252 gives up quietly here too */

        r = add_root_cryptsetup(dest);
        if (r < 0)
                return r;
        r = add_sysroot_mount(dest);
        if (r < 0)
                return r;
        return add_root_discovered_service(dest);
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        int r;

        if (in_container()) {
                log_debug("In a container, exiting.");
                return 0;
        }
        /* On the host 252 also mounts /home, /srv, /var and the ESP; foyer only runs in the initrd
         * (generator_main() returns before run() outside it). */

        r = cmdline_parse(parse_cmdline_item, NULL, 0);
        if (r < 0)
                log_warning_errno(r, "Failed to parse kernel command line, ignoring: %m");

        if (!arg_enabled) {
                log_debug("Disabled, exiting.");
                return 0;
        }
        if (!arg_root_enabled || arg_root_other)
                return 0;

        /* Like 252, everything goes to the late directory so that any other sysroot.mount wins. */
        return add_root_mount(dest_late);
}

static int gpt_auto_main(int argc, char *argv[]) {
        if (argc >= 2 && streq(argv[1], GPT_AUTO_ROOT_SETUP_ARG))
                return gpt_auto_root_setup(argc, argv);
        return generator_main(argc, argv, run, reset_args);
}

FOYER_DEFINE_MAIN(gpt_auto_main);
