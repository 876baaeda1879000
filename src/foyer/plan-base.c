/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The base of every image: the skeleton, systemd's binaries, stock units and udev rules, foyer's
 * generators and units, /etc, and the user's --add-file additions. plan.c runs these in order
 * among the planners of the storage stacks and debugging tools. */

#include <assert.h>
#include <dirent.h>
#include <sys/stat.h>

#include "foyer-contract.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "unit-info.h"
#include "util.h"

/* systemd-networkd's user and group (SSH unlocking): any fixed system ID will do, the initrd's own. */
#define NETWORKD_ID "992"
#define NETWORKD_GID 992

static const Item binaries[] = {
        { "/usr/lib/systemd/systemd",                   NEED_REQUIRED, "PID 1" },
        { "/usr/lib/systemd/systemd-journald",          NEED_REQUIRED, "journal" },
        { "/usr/lib/systemd/systemd-udevd",             NEED_REQUIRED, "device manager" },
        { "/usr/bin/udevadm",                           NEED_REQUIRED, "udev trigger and cleanup" },
        { "/usr/bin/systemctl",                         NEED_REQUIRED, "initrd-cleanup and switch-root" },
        { "/usr/bin/journalctl",                        NEED_REQUIRED, "emergency shell" },
        { "/usr/lib/systemd/systemd-fsck",              NEED_REQUIRED, "systemd-fsck@.service" },
        { "/usr/bin/systemd-ask-password",              NEED_REQUIRED, "passphrase prompts" },
        { "/usr/bin/systemd-tty-ask-password-agent",    NEED_REQUIRED, "passphrase prompts" },
        { "/usr/bin/mount",                             NEED_REQUIRED, "mount units" },
        { "/usr/bin/umount",                            NEED_REQUIRED, "mount units" },
        { "/usr/sbin/blkid",                            NEED_REQUIRED, "inspection" },
        { "/usr/bin/kmod",                              NEED_REQUIRED, "module loading" },
        { "/usr/sbin/modprobe",                         NEED_REQUIRED, "module loading" },
        { "/usr/sbin/insmod",                           NEED_OPTIONAL, "module loading" },
        { "/usr/sbin/rmmod",                            NEED_OPTIONAL, "module loading" },
        { "/usr/sbin/lsmod",                            NEED_OPTIONAL, "module loading" },
        { "/usr/sbin/modinfo",                          NEED_OPTIONAL, "module loading" },
        { "/usr/sbin/fsck",                             NEED_REQUIRED, "systemd-fsck" },
        { "/usr/lib/systemd/systemd-shutdown",          NEED_OPTIONAL, "shutdown from the initrd" },
        { "/usr/lib/systemd/systemd-modules-load",      NEED_OPTIONAL, "modules-load.d" },
        { "/usr/lib/systemd/systemd-sysctl",            NEED_OPTIONAL, "sysctl.d" },
        { "/usr/bin/systemd-tmpfiles",                  NEED_OPTIONAL, "static device nodes" },
        { "/usr/lib/systemd/systemd-volatile-root",     NEED_OPTIONAL, "systemd.volatile=" },
        { "/usr/lib/systemd/systemd-makefs",            NEED_OPTIONAL, "x-systemd.makefs" },
        { "/usr/lib/systemd/systemd-fsckd",             NEED_OPTIONAL, "fsck progress" },
        { "/usr/lib/udev/ata_id",                       NEED_OPTIONAL, "60-persistent-storage.rules" },
        { "/usr/lib/udev/scsi_id",                      NEED_OPTIONAL, "60-persistent-storage.rules" },
        { "/usr/lib/udev/cdrom_id",                     NEED_OPTIONAL, "60-cdrom_id.rules" },
};

/* The file systems' tools, by the file system types they serve (a prefix: "ext" is ext2, ext3 and
 * ext4). A host-only image takes those of the root's and /usr's file systems. */
static const struct {
        const char *fstype;
        Item item;
} fs_tools[] = {
        { "ext",   { "/usr/sbin/e2fsck",        NEED_REQUIRED, "fsck of ext2/3/4" } },
        { "ext",   { "/usr/sbin/fsck.ext2",     NEED_OPTIONAL, "fsck of ext2" } },
        { "ext",   { "/usr/sbin/fsck.ext3",     NEED_OPTIONAL, "fsck of ext3" } },
        { "ext",   { "/usr/sbin/fsck.ext4",     NEED_OPTIONAL, "fsck of ext4" } },
        { "xfs",   { "/usr/sbin/xfs_repair",    NEED_OPTIONAL, "xfs repair" } },
        { "xfs",   { "/usr/sbin/fsck.xfs",      NEED_OPTIONAL, "fsck of xfs" } },
        { "btrfs", { "/usr/bin/btrfs",          NEED_OPTIONAL, "btrfs device scan" } },
        { "btrfs", { "/usr/sbin/fsck.btrfs",    NEED_OPTIONAL, "fsck of btrfs" } },
};

/* The stock units of the initrd transaction (systemd.special(7), bootup(7)). Not
 * systemd-sysctl.service: the real root applies the same sysctl.d again as it starts, and nothing
 * in the initrd needs its settings (pid_max, the protection of links in world-writable
 * directories); the program stays for udev's per-interface settings of network devices. */
static const Item units[] = {
        { .path = "initrd.target",                      .need = NEED_REQUIRED },
        { .path = "initrd-root-device.target",          .need = NEED_REQUIRED },
        { .path = "initrd-root-fs.target",              .need = NEED_REQUIRED },
        { .path = "initrd-usr-fs.target",               .need = NEED_OPTIONAL },
        { .path = "initrd-fs.target",                   .need = NEED_REQUIRED },
        { .path = "initrd-parse-etc.service",           .need = NEED_REQUIRED },
        { .path = "initrd-cleanup.service",             .need = NEED_REQUIRED },
        { .path = "initrd-switch-root.target",          .need = NEED_REQUIRED },
        { .path = "initrd-switch-root.service",         .need = NEED_REQUIRED },
        { .path = "initrd-udevadm-cleanup-db.service",  .need = NEED_REQUIRED },
        { .path = "systemd-fsck-root.service",          .need = NEED_OPTIONAL },
        { .path = "systemd-fsck@.service",              .need = NEED_REQUIRED },
        { .path = "systemd-fsckd.service",              .need = NEED_OPTIONAL },
        { .path = "systemd-fsckd.socket",               .need = NEED_OPTIONAL },
        { .path = "systemd-volatile-root.service",      .need = NEED_OPTIONAL },
        { .path = "emergency.target",                   .need = NEED_REQUIRED },
        { .path = "emergency.service",                  .need = NEED_REQUIRED },
        { .path = "rescue.target",                      .need = NEED_REQUIRED },
        { .path = "rescue.service",                     .need = NEED_REQUIRED },
        { .path = "sysinit.target",                     .need = NEED_REQUIRED },
        { .path = "basic.target",                       .need = NEED_REQUIRED },
        { .path = "local-fs.target",                    .need = NEED_REQUIRED },
        { .path = "local-fs-pre.target",                .need = NEED_REQUIRED },
        { .path = "remote-fs.target",                   .need = NEED_OPTIONAL },
        { .path = "remote-fs-pre.target",               .need = NEED_OPTIONAL },
        { .path = "swap.target",                        .need = NEED_OPTIONAL },
        { .path = "sockets.target",                     .need = NEED_REQUIRED },
        { .path = "timers.target",                      .need = NEED_OPTIONAL },
        { .path = "paths.target",                       .need = NEED_OPTIONAL },
        { .path = "slices.target",                      .need = NEED_OPTIONAL },
        { .path = "-.slice",                            .need = NEED_OPTIONAL },
        { .path = "system.slice",                       .need = NEED_OPTIONAL },
        { .path = "shutdown.target",                    .need = NEED_REQUIRED },
        { .path = "umount.target",                      .need = NEED_OPTIONAL },
        { .path = "final.target",                       .need = NEED_OPTIONAL },
        { .path = "reboot.target",                      .need = NEED_OPTIONAL },
        { .path = "poweroff.target",                    .need = NEED_OPTIONAL },
        { .path = "halt.target",                        .need = NEED_OPTIONAL },
        { .path = "ctrl-alt-del.target",                .need = NEED_OPTIONAL },
        { .path = "systemd-reboot.service",             .need = NEED_OPTIONAL },
        { .path = "systemd-poweroff.service",           .need = NEED_OPTIONAL },
        { .path = "systemd-halt.service",               .need = NEED_OPTIONAL },
        { .path = "cryptsetup.target",                  .need = NEED_OPTIONAL },
        { .path = "cryptsetup-pre.target",              .need = NEED_OPTIONAL },
        { .path = "remote-cryptsetup.target",           .need = NEED_OPTIONAL },
        { .path = "veritysetup.target",                 .need = NEED_OPTIONAL },
        { .path = "veritysetup-pre.target",             .need = NEED_OPTIONAL },
        { .path = "remote-veritysetup.target",          .need = NEED_OPTIONAL },
        { .path = "blockdev@.target",                   .need = NEED_OPTIONAL },
        { .path = "systemd-udevd.service",              .need = NEED_REQUIRED },
        { .path = "systemd-udevd-control.socket",       .need = NEED_REQUIRED },
        { .path = "systemd-udevd-kernel.socket",        .need = NEED_REQUIRED },
        { .path = "systemd-udev-trigger.service",       .need = NEED_REQUIRED },
        { .path = "systemd-udev-settle.service",        .need = NEED_OPTIONAL },
        { .path = "modprobe@.service",                  .need = NEED_OPTIONAL },
        { .path = "kmod-static-nodes.service",          .need = NEED_OPTIONAL },
        { .path = "systemd-journald.service",           .need = NEED_OPTIONAL },
        { .path = "systemd-journald.socket",            .need = NEED_OPTIONAL },
        { .path = "systemd-journald-dev-log.socket",    .need = NEED_OPTIONAL },
        { .path = "systemd-tmpfiles-setup-dev.service", .need = NEED_OPTIONAL },
        { .path = "systemd-modules-load.service",       .need = NEED_OPTIONAL },
        { .path = "systemd-ask-password-console.path",  .need = NEED_OPTIONAL },
        { .path = "systemd-ask-password-console.service", .need = NEED_OPTIONAL },
};

static const char *const rules[] = {
        "50-udev-default.rules", "60-block.rules", "60-persistent-storage.rules", "60-cdrom_id.rules",
        "64-btrfs.rules", "80-drivers.rules", "99-systemd.rules", "75-net-description.rules",
};

/* device-mapper's rules, which run dmsetup (plan-crypt.c and plan-lvm.c add it): left out of a
 * host-only image with no dm device below the root, /usr or swap and no crypttab or key file. */
static const char *const dm_rules[] = {
        "55-dm.rules", "60-persistent-storage-dm.rules", "95-dm-notify.rules",
};

/* Loads a file system's module while systemd-fsck runs (units/foyer-fs-module@.service.in): under
 * TCG the module of ext4 and its helpers took 0.3 to 0.4 s inside sysroot.mount. Not for dm devices:
 * their udev database survives the switch to the real root (11-foyer-dm-persist.rules), whose PID 1
 * would then be asked for a unit it does not have. */
static const char fs_module_rule[] =
        "# foyer: load the module of a file system as soon as it is found (" FOYER_FS_MODULE_TEMPLATE ").\n"
        "SUBSYSTEM==\"block\", ACTION==\"add|change\", KERNEL!=\"dm-*\", ENV{ID_FS_USAGE}==\"filesystem\", "
        "ENV{ID_FS_TYPE}==\"?*\", ENV{SYSTEMD_WANTS}+=\"" FOYER_FS_MODULE_PREFIX "@$env{ID_FS_TYPE}.service\"\n";

static const char *const config_files[] = {
        "/etc/udev/udev.conf",
        "/etc/ld.so.cache",
        "/usr/lib/tmpfiles.d/static-nodes-permissions.conf",
};

/* Modules by name, beside the hardware classes of module-classes.c (which take whole directories of
 * the module tree): what the classes leave out on purpose but some machine boots from, and what
 * lives outside their directories. */
const char *const plan_default_modules[] = {
        /* virtual machines */
        "virtio_blk", "virtio_scsi", "virtio_pci",
        /* Hyper-V's disks (storvsc registers an FC transport, which the classes leave out), Xen's */
        "hv_storvsc", "xen_blkfront",
        /* parallel SCSI that hypervisors still emulate: VMware's "LSI Logic Parallel", QEMU's lsi */
        "mptspi", "sym53c8xx",
        /* SCSI, SATA, NVMe (ata_piix is also QEMU's IDE; the classes leave out parallel ATA) */
        "sd_mod", "sr_mod", "ahci", "ata_piix", "nvme", "vmd",
        /* USB storage and host controllers (the PCI ones and the platform ones of SoCs) */
        "usb_storage", "uas", "xhci_pci", "ehci_pci", "ohci_pci", "uhci_hcd",
        "xhci_plat_hcd", "ehci_platform", "ohci_platform",
        /* MMC */
        "mmc_block", "sdhci_pci", "sdhci_acpi",
        /* file systems */
        "ext4", "xfs", "btrfs", "vfat", "nls_cp437", "nls_iso8859-1", "efivarfs",
        /* device mapper and the ciphers of common LUKS setups: aes-xts-plain64 (xts over ecb(aes)),
         * sha256, aes-cbc-essiv; libcryptsetup decrypts keyslots through algif_skcipher and computes
         * argon2id itself. Debian builds aes_generic, cbc and sha256_generic in (modules.builtin). */
        "dm_mod", "dm_crypt", "crc32c", "aesni_intel", "xts", "ecb", "cbc", "sha256_generic", "essiv",
        "algif_skcipher",
        /* TPM 2.0 for unlocking (plan-tokens.c; Debian builds both in): PC TIS/FIFO and CRB */
        "tpm_tis", "tpm_crb",
        /* LVM targets beyond linear and striped (both in dm_mod): snapshots, mirrors, thin, cache, raid */
        "dm_snapshot", "dm_mirror", "dm_zero", "dm_thin_pool", "dm_cache", "dm_cache_smq", "dm_raid",
        /* MD RAID (mdadm, plan-md.c): the core and its personalities; linear is gone from kernels
         * 6.8 to 6.13, a default module that is missing is skipped */
        "md_mod", "raid0", "raid1", "raid10", "raid456", "linear",
        /* keyboards, for the passphrase prompt: PS/2, USB and I2C HID (i2c_hid_acpi binds laptops'
         * internal keyboards; on Intel laptops their I2C controller sits behind LPSS), virtio's,
         * Hyper-V's, and the Surface type cover, the one HID keyboard hid_generic cannot drive
         * (its vendor drivers only add hot keys and back lights; --add-module adds them). */
        "hid_generic", "usbhid", "atkbd", "i8042", "i2c_hid_acpi", "intel_lpss_pci", "intel_lpss_acpi",
        "i2c_designware_platform", "i2c_designware_pci", "virtio_input", "hyperv_keyboard", "hid_hyperv",
        "surface_kbd",
        "loop",
        /* A hibernation image written with hibernate.compressor=lz4 (Linux 6.9 on) is read back
         * through the crypto API's lz4, a module in Debian's kernels (lzo, the default, is built in). */
        "lz4",
        /* systemd (PID 1) loads it early for automount units */
        "autofs4",
        NULL,
};

/* Groups the stock rules and units refer to; more are picked up from GROUP= in the rules. */
static const char *const base_groups[] = {
        "root", "adm", "tty", "disk", "kmem", "wheel", "utmp", "audio", "video", "input", "render",
        "kvm", "sgx", "systemd-journal", "nogroup",
};

static int add_skeleton(Manifest *m) {
        static const struct {
                const char *path;
                uint32_t mode;
        } dirs[] = {
                { "/dev", 0755 }, { "/proc", 0555 }, { "/sys", 0555 }, { "/run", 0755 },
                { "/tmp", 01777 }, { "/var", 0755 }, { "/var/tmp", 01777 }, { "/root", 0700 },
                { "/sysroot", 0755 }, { "/etc", 0755 }, { "/usr", 0755 }, { "/usr/bin", 0755 },
                { "/usr/sbin", 0755 }, { "/usr/lib", 0755 }, { "/usr/lib64", 0755 },
                { FOYER_IMAGE_GENERATOR_DIR, 0755 },
        };
        static const struct {
                const char *path, *target;
        } links[] = {
                { "/bin", "usr/bin" }, { "/sbin", "usr/sbin" }, { "/lib", "usr/lib" },
                { "/lib64", "usr/lib64" }, { "/init", "usr/lib/systemd/systemd" },
                { "/var/run", "../run" },
        };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                r = manifest_add_directory(m, dirs[i].path, dirs[i].mode, "image skeleton");
                if (r < 0)
                        return log_error_errno(r, "Failed to add %s: %m", dirs[i].path);
        }
        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                r = manifest_add_symlink(m, links[i].path, links[i].target, "merged-/usr skeleton");
                if (r < 0)
                        return log_error_errno(r, "Failed to add %s: %m", links[i].path);
        }
        /* The kernel opens the console before /init runs, before devtmpfs is mounted. */
        r = manifest_add_char_device(m, "/dev/console", 0600, 5, 1, "initial console");
        if (r < 0)
                return log_error_errno(r, "Failed to add /dev/console: %m");
        return 0;
}

/* Carries over the stock .wants/.requires links and .d drop-ins, but only between units that are
 * in the image, so no link dangles. */
static int add_unit_links(Manifest *m) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_strv_free_ char **subdirs = NULL;
        int r;

        r = path_in_root(m->root, UNITDIR, false, &dir);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to resolve " UNITDIR " in %s: %m", m->root);
        r = dir_list_suffix(dir, NULL, &subdirs);
        if (r < 0)
                return log_error_errno(r, "Failed to list %s: %m", dir);

        STRV_FOREACH(s, subdirs) {
                _cleanup_free_ char *unit = NULL, *sub = NULL;
                _cleanup_strv_free_ char **names = NULL;
                const char *suffix;
                bool dropin;

                suffix = endswith(*s, ".wants") ?: endswith(*s, ".requires") ?: endswith(*s, ".d");
                if (!suffix)
                        continue;
                dropin = streq(suffix, ".d");
                unit = strndup(*s, suffix - *s);
                if (!unit)
                        return log_oom();
                if (!unit_in_image(m, unit))
                        continue;

                _cleanup_free_ char *rel = strjoin(UNITDIR "/", *s);
                if (!rel)
                        return log_oom();
                r = path_in_root(m->root, rel, false, &sub);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return log_error_errno(r, "Failed to resolve %s in %s: %m", rel, m->root);
                r = dir_list_suffix(sub, dropin ? ".conf" : NULL, &names);
                if (r < 0)
                        return log_error_errno(r, "Failed to list %s: %m", sub);

                STRV_FOREACH(n, names) {
                        _cleanup_free_ char *path = strjoin(UNITDIR "/", *s, "/", *n),
                                            *reason = strjoin("stock ", dropin ? "drop-in of " : "dependency of ", unit);

                        if (!path || !reason)
                                return log_oom();
                        if (!dropin && !unit_in_image(m, *n)) {
                                log_debug("Skipping %s, %s is not in the image.", path, *n);
                                continue;
                        }
                        r = manifest_add_from_root(m, path, reason, NULL);
                        if (r < 0 && r != -EEXIST)
                                return log_error_errno(r, "Failed to add %s: %m", path);
                }
        }
        return 0;
}

static int add_generators(Manifest *m) {
        const char *dir = getenv("FOYER_GENERATOR_DIR") ?: FOYER_HOST_GENERATOR_DIR;
        _cleanup_strv_free_ char **names = NULL;
        unsigned n = 0;
        int r;

        r = dir_list_suffix(dir, NULL, &names);
        if (r < 0)
                return log_error_errno(r, "Failed to list generators in %s: %m", dir);

        STRV_FOREACH(g, names) {
                _cleanup_free_ char *src = strjoin(dir, "/", *g),
                                    *dest = strjoin(FOYER_IMAGE_GENERATOR_DIR "/", *g);
                struct stat st;

                if (!src || !dest)
                        return log_oom();
                /* The sanitizer builds of the generators sit beside them in a build tree. */
                if (!startswith(*g, "foyer-") || endswith(*g, "-asan"))
                        continue;
                if (stat(src, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                        continue;
                r = manifest_add_file(m, dest, src, "foyer generator");
                if (r < 0)
                        return log_error_errno(r, "Failed to add generator %s: %m", src);
                manifest_mark_host_built(manifest_find(m, dest));
                n++;
        }
        if (n == 0)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "No foyer generators (executables named foyer-*) found in %s; set FOYER_GENERATOR_DIR.",
                                       dir);
        return 0;
}

static int add_foyer_units(Manifest *m) {
        const char *dir = getenv("FOYER_UNIT_DIR") ?: FOYER_UNIT_DIR;

        if (access(dir, F_OK) < 0)
                return log_error_errno(errno, "foyer's units are missing at %s (set FOYER_UNIT_DIR): %m", dir);
        return plan_add_tree(m, dir, UNITDIR, "foyer unit");
}


typedef struct GroupScan {
        Manifest *m;
        char ***groups;
} GroupScan;

static int add_group_names_from_rule(Entry *e, void *userdata) {
        GroupScan *scan = userdata;
        char ***groups = scan->groups;
        _cleanup_free_ char *text = NULL;
        int r;

        if (e->type != ENTRY_FILE || !startswith(e->path, RULESDIR "/") || !endswith(e->path, ".rules"))
                return 0;
        r = manifest_read_source(scan->m, e, &text, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", e->source);

        for (char *p = strstr(text, "GROUP=\""); p; p = strstr(p, "GROUP=\"")) {
                char *q;

                p += 7;
                q = strchr(p, '"');
                if (!q)
                        break;
                _cleanup_free_ char *g = strndup(p, q - p);
                if (!g)
                        return log_oom();
                if (!strv_contains(*groups, g) && strv_extend(groups, g) < 0)
                        return log_oom();
        }
        return 0;
}

/* Every udev rule in the image, whoever added it, may name a group. */
static int add_group_names_from_rules(Manifest *m, char ***groups) {
        GroupScan scan = { .m = m, .groups = groups };

        return manifest_foreach_sorted(m, add_group_names_from_rule, &scan);
}

static int add_etc(Manifest *m, const BuildConfig *c, const Probe *p) {
        _cleanup_strv_free_ char **groups = NULL;
        _cleanup_free_ char *release = NULL, *group = NULL, *passwd = NULL;
        const Entry *networkd;
        int r;

        release = strjoin("NAME=\"foyer\"\n"
                          "ID=foyer\n"
                          "VERSION_ID=\"", FOYER_VERSION, "\"\n"
                          "PRETTY_NAME=\"foyer ", FOYER_VERSION, " initrd (", p->os_pretty_name, ")\"\n");
        if (!release)
                return log_oom();
        /* Its existence makes systemd treat this as an initrd; os-release points to it for the banner. */
        r = plan_add_text(m, FOYER_INITRD_RELEASE, 0644, release, "initrd marker (systemd in_initrd())");
        if (r < 0)
                return r;
        if (manifest_add_symlink(m, "/etc/os-release", "initrd-release", "banner") < 0 ||
            manifest_add_symlink(m, "/usr/lib/os-release", "../../etc/initrd-release", "banner") < 0)
                return log_oom();

        /* With SSH unlocking (plan-ssh.c), systemd-networkd drops to its own user; in an image without
         * shells root's shell is foyer-unlock, since dropbear runs every command, a forced one too,
         * through root's shell. */
        networkd = manifest_find(m, "/usr/lib/systemd/systemd-networkd");
        passwd = strjoin("root:x:0:0:root:/root:", c->ssh_unlock && c->no_shell ? FOYER_UNLOCK_PATH : "/bin/sh", "\n",
                         networkd ? "systemd-network:x:" NETWORKD_ID ":" NETWORKD_ID
                                    ":systemd Network Management:/:/usr/sbin/nologin\n" : "",
                         "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
        if (!passwd)
                return log_oom();
        r = plan_add_text(m, "/etc/passwd", 0644, passwd, "users for the emergency shell and services");
        if (r < 0)
                return r;
        /* Root is locked: with SYSTEMD_SULOGIN_FORCE=1 sulogin gives the shell without a password. */
        r = plan_add_text(m, "/etc/shadow", 0600, "root:*:1::::::\nnobody:*:1::::::\n", "locked root for sulogin");
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(base_groups); i++)
                if (strv_extend(&groups, base_groups[i]) < 0)
                        return log_oom();
        r = add_group_names_from_rules(m, &groups);
        if (r < 0)
                return r;
        if (networkd && !strv_contains(groups, "systemd-network") && strv_extend(&groups, "systemd-network") < 0)
                return log_oom();
        group = strdup("");
        if (!group)
                return log_oom();
        unsigned next_gid = 900;
        STRV_FOREACH(g, groups) {
                /* The IDs Debian and systemd compile in (tty=5 for devpts); others are arbitrary but
                 * stable, and only matter until the switch to the real root. */
                static const struct {
                        const char *name;
                        unsigned gid;
                } fixed[] = {
                        { "root", 0 }, { "adm", 4 }, { "tty", 5 }, { "disk", 6 }, { "wheel", 10 },
                        { "kmem", 15 }, { "dialout", 20 }, { "cdrom", 24 }, { "audio", 29 },
                        { "utmp", 43 }, { "video", 44 }, { "nogroup", 65534 },
                        { "systemd-network", NETWORKD_GID },
                };
                char line[256];
                char *t;
                unsigned id = 0;
                bool found = false;

                for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                        if (streq(fixed[i].name, *g)) {
                                id = fixed[i].gid;
                                found = true;
                        }
                if (!found)
                        id = next_gid++;
                snprintf(line, sizeof(line), "%s:x:%u:\n", *g, id);
                t = strjoin(group, line);
                if (!t)
                        return log_oom();
                free(group);
                group = t;
        }
        r = plan_add_text(m, "/etc/group", 0644, group, "groups named by udev rules and units");
        if (r < 0)
                return r;

        r = plan_add_text(m, "/etc/nsswitch.conf", 0644,
                     "passwd: files\ngroup: files\nshadow: files\nhosts: files\n", "name service: files only");
        if (r < 0)
                return r;
        r = plan_add_text(m, "/etc/machine-id", 0444, "", "empty: systemd uses a transient machine ID");
        if (r < 0)
                return r;
        r = plan_add_text(m, "/etc/fstab", 0644, "", "the initrd's own mounts: none");
        if (r < 0)
                return r;

        if (!isempty(c->cmdline)) {
                _cleanup_free_ char *text = strjoin(c->cmdline, "\n");

                if (!text)
                        return log_oom();
                r = plan_add_text(m, FOYER_CMDLINE_DIR "/50-foyer.conf", 0644, text, "--cmdline defaults");
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_conf_dir(Manifest *m, const char *dir, const char *reason) {
        _cleanup_free_ char *full = NULL;
        _cleanup_strv_free_ char **names = NULL;
        int r;

        r = path_in_root(m->root, dir, false, &full);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to resolve %s in %s: %m", dir, m->root);
        r = dir_list_suffix(full, ".conf", &names);
        if (r < 0)
                return log_error_errno(r, "Failed to list %s: %m", full);
        STRV_FOREACH(n, names) {
                _cleanup_free_ char *p = strjoin(dir, "/", *n);

                if (!p)
                        return log_oom();
                r = plan_add_item(m, p, NEED_OPTIONAL, reason);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_user_files(Manifest *m, const BuildConfig *c) {
        int r;

        STRV_FOREACH(f, c->add_files) {
                _cleanup_free_ char *src = NULL, *dest = NULL;

                r = plan_split_file_spec("--add-file", *f, &src, &dest);
                if (r < 0)
                        return r;
                if (access(src, F_OK) < 0)
                        return log_error_errno(errno, "--add-file %s: %s: %m", *f, src);
                r = plan_add_tree(m, src, dest, "--add-file");
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_skeleton(Manifest *m, const BuildConfig *c) {
        assert(m);
        assert(c);

        return add_skeleton(m);
}

static bool host_has_fstype(const HostStack *host, const char *prefix) {
        STRV_FOREACH(t, host->filesystems)
                if (startswith(*t, prefix))
                        return true;
        return false;
}

int plan_binaries(Manifest *m, const BuildConfig *c, const Probe *p) {
        int r;

        assert(m);
        assert(c);
        assert(p);

        r = plan_add_items(m, binaries, ELEMENTSOF(binaries));
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(fs_tools); i++) {
                if (p->host && !host_has_fstype(p->host, fs_tools[i].fstype)) {
                        log_debug("Host-only: no %s file system on the root or /usr, leaving out %s.",
                                  fs_tools[i].fstype, fs_tools[i].item.path);
                        continue;
                }
                r = plan_add_items(m, &fs_tools[i].item, 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_stock_units(Manifest *m, const BuildConfig *c) {
        int r;

        assert(m);
        assert(c);

        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                _cleanup_free_ char *path = strjoin(UNITDIR "/", units[i].path);

                if (!path)
                        return log_oom();
                r = plan_add_item(m, path, units[i].need, "stock initrd unit");
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_foyer_units(Manifest *m, const BuildConfig *c) {
        assert(m);
        assert(c);

        return add_foyer_units(m);
}

int plan_unit_links(Manifest *m, const BuildConfig *c) {
        assert(m);
        assert(c);

        return add_unit_links(m);
}

static int add_rules(Manifest *m, const char *const *names, size_t n) {
        int r;

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = strjoin(RULESDIR "/", names[i]);

                if (!path)
                        return log_oom();
                r = plan_add_item(m, path, NEED_OPTIONAL, "udev rule");
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_rules(Manifest *m, const BuildConfig *c, const Probe *p) {
        int r;

        assert(m);
        assert(c);
        assert(p);

        r = add_rules(m, rules, ELEMENTSOF(rules));
        if (r < 0)
                return r;
        r = plan_add_text(m, FOYER_FS_MODULE_RULE, 0644, fs_module_rule,
                          "file system modules load beside fsck");
        if (r < 0)
                return r;
        if (p->host && !p->host->dm && !c->crypttab && strv_isempty(c->add_key_files)) {
                log_debug("Host-only: no device-mapper device below the root, /usr or swap, leaving out its rules.");
                return 0;
        }
        return add_rules(m, dm_rules, ELEMENTSOF(dm_rules));
}

int plan_config(Manifest *m, const BuildConfig *c) {
        int r;

        assert(m);
        assert(c);

        for (size_t i = 0; i < ELEMENTSOF(config_files); i++) {
                r = plan_add_item(m, config_files[i], NEED_OPTIONAL, "configuration");
                if (r < 0)
                        return r;
        }
        /* Before the tree's modprobe.d, so that a file of the same name there cannot shadow it. */
        r = manifest_add_symlink(m, FOYER_DRIVER_MODPROBE_LINK, FOYER_DRIVER_MODPROBE_TARGET,
                                 "rd.driver.blacklist= and rd.driver.post= from foyer-driver-generator");
        if (r < 0)
                return log_error_errno(r, "Failed to add %s: %m", FOYER_DRIVER_MODPROBE_LINK);
        /* Module options and blacklists apply in the initrd as on the system, as with dracut. The
         * tree's /lib/modprobe.d is /usr/lib/modprobe.d (merged /usr, like the image's skeleton). */
        FOREACH_STRING(d, "/usr/lib/modprobe.d", "/etc/modprobe.d", "/usr/lib/sysctl.d") {
                r = add_conf_dir(m, d, "configuration");
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_generators(Manifest *m, const BuildConfig *c) {
        assert(m);
        assert(c);

        return add_generators(m);
}

int plan_etc(Manifest *m, const BuildConfig *c, const Probe *p) {
        assert(m);
        assert(c);
        assert(p);

        return add_etc(m, c, p);
}

int plan_user_files(Manifest *m, const BuildConfig *c) {
        assert(m);
        assert(c);

        return add_user_files(m, c);
}
