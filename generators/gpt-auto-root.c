/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* "foyer-gpt-auto-generator --root-discovered", run by foyer-gpt-auto-root.service after sysroot.mount.
 * Which partition udev picked is only known now, not when generators run (the disk may not even be
 * probed then), so the partition's GPT flags and the /usr partition next to it are handled here:
 *   read-only (bit 60): /sysroot is remounted read-only, even with "rw" on the command line;
 *   grow-fs (bit 59):   systemd-growfs grows the file system if /sysroot is mounted read-write;
 *   /usr:               the first (highest-labelled) /usr partition of the same disk without the no-auto
 *                       flag (bit 63) is mounted on /sysroot/usr, unless mount.usr= is given;
 * and GPT_AUTO_REPORT_DIR/root_discovered and root_partuuid record what was found. */

#include <blkid.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "cmdline.h"
#include "fileio.h"
#include "gpt-auto.h"
#include "log.h"
#include "macro.h"
#include "strv.h"

#define GPT_AUTO_ROOT "/dev/gpt-auto-root"
#define GPT_AUTO_ROOT_LUKS "/dev/gpt-auto-root-luks"

DEFINE_TRIVIAL_CLEANUP_FUNC(blkid_probe, blkid_free_probe);

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

typedef struct Partition {
        char *type, *uuid, *label, *fstype;
        unsigned long long flags;
} Partition;

static void partition_done(Partition *p) {
        free(p->type);
        free(p->uuid);
        free(p->label);
        free(p->fstype);
        *p = (Partition) {};
}

static int probe_value(blkid_probe pr, const char *name, char **ret) {
        const char *v = NULL;

        if (blkid_probe_lookup_value(pr, name, &v, NULL) < 0 || !v)
                return 0;
        *ret = strdup(v);
        return *ret ? 1 : -ENOMEM;
}

/* The GPT entry of a partition (type, UUID, label, flags) and the file system on it, by libblkid. */
static int probe_partition(const char *node, Partition *ret) {
        _cleanup_(blkid_free_probep) blkid_probe pr = NULL;
        _cleanup_free_ char *flags = NULL;
        Partition p = {};
        int r;

        errno = 0;
        pr = blkid_new_probe_from_filename(node);
        if (!pr)
                return errno > 0 ? -errno : -ENOMEM;
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
        blkid_probe_enable_partitions(pr, 1);
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
        errno = 0;
        r = blkid_do_safeprobe(pr);
        if (r == -2)
                return -ENOTUNIQ; /* ambivalent superblocks: do not guess */
        if (r < 0)
                return errno > 0 ? -errno : -EIO;

        if (probe_value(pr, "PART_ENTRY_TYPE", &p.type) < 0 || probe_value(pr, "PART_ENTRY_UUID", &p.uuid) < 0 ||
            probe_value(pr, "PART_ENTRY_NAME", &p.label) < 0 || probe_value(pr, "TYPE", &p.fstype) < 0 ||
            probe_value(pr, "PART_ENTRY_FLAGS", &flags) < 0) {
                partition_done(&p);
                return -ENOMEM;
        }
        if (flags)
                p.flags = strtoull(flags, NULL, 16);
        *ret = p;
        return 0;
}

static int block_dev(const char *path, dev_t *ret) {
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISBLK(st.st_mode))
                return -ENOTBLK;
        *ret = st.st_rdev;
        return 0;
}

static int write_note(const char *name, const char *text) {
        _cleanup_free_ char *p = strjoin(GPT_AUTO_REPORT_DIR "/", name);
        int r;

        if (!p)
                return log_oom();
        r = mkdir_p(GPT_AUTO_REPORT_DIR, 0755);
        if (r >= 0)
                r = write_string_file_atomic(p, text);
        if (r < 0)
                return log_warning_errno(r, "Failed to write %s: %m", p);
        return 0;
}

static unsigned long mount_flags_of(const char *path, bool *ret_ro) {
        struct statvfs sv;
        unsigned long f = 0;

        if (statvfs(path, &sv) < 0) {
                *ret_ro = false;
                return 0;
        }
        *ret_ro = sv.f_flag & ST_RDONLY;
        if (sv.f_flag & ST_NOSUID)
                f |= MS_NOSUID;
        if (sv.f_flag & ST_NODEV)
                f |= MS_NODEV;
        if (sv.f_flag & ST_NOEXEC)
                f |= MS_NOEXEC;
        if (sv.f_flag & ST_NOATIME)
                f |= MS_NOATIME;
        if (sv.f_flag & ST_NODIRATIME)
                f |= MS_NODIRATIME;
        if (sv.f_flag & ST_RELATIME)
                f |= MS_RELATIME;
        return f;
}

static int run_growfs(const char *where) {
        const char *exe = ROOTLIBEXECDIR "/systemd-growfs";
        int status;
        pid_t pid;

        if (access(exe, X_OK) < 0)
                return log_warning_errno(errno, "The root partition asks to be grown, but %s is missing: %m", exe);
        pid = fork();
        if (pid < 0)
                return log_error_errno(errno, "Failed to fork: %m");
        if (pid == 0) {
                execl(exe, exe, where, (char *) NULL);
                _exit(EXIT_FAILURE);
        }
        if (waitpid(pid, &status, 0) < 0)
                return log_error_errno(errno, "Failed to wait for %s: %m", exe);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return log_warning_errno(SYNTHETIC_ERRNO(EPROTO), "%s %s failed.", exe, where);
        return 0;
}

/* The read-only and grow-fs flags of the root partition. */
static int apply_root_flags(const Partition *root) {
        bool ro;
        unsigned long flags = mount_flags_of("/sysroot", &ro);

        if (root->flags & GPT_FLAG_READ_ONLY) {
                if (ro)
                        return 0;
                log_info("The root partition is marked read-only, remounting /sysroot read-only.");
                if (mount(NULL, "/sysroot", NULL, MS_REMOUNT | MS_RDONLY | flags, NULL) < 0)
                        return log_error_errno(errno, "Failed to remount /sysroot read-only: %m");
                return 0;
        }
        if (root->flags & GPT_FLAG_GROWFS) {
                if (ro) {
                        log_notice("The root partition asks to be grown, but /sysroot is mounted read-only "
                                   "(add \"rw\" to the kernel command line); not growing it.");
                        return 0;
                }
                return run_growfs("/sysroot");
        }
        return 0;
}

/* The /usr partition on the disk holding partition devnum: returns 1 and its node and entry, 0 if there
 * is none. Partition nodes are read from sysfs, as udev may not have linked them yet. */
static int find_usr_partition(dev_t devnum, char **ret_node, Partition *ret) {
        _cleanup_free_ char *sys = NULL, *disk = NULL, *best_node = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        Partition best = {};
        struct dirent *de;
        char *slash;

        if (asprintf(&sys, "/sys/dev/block/%u:%u", major(devnum), minor(devnum)) < 0)
                return log_oom();
        disk = realpath(sys, NULL);
        if (!disk)
                return log_debug_errno(errno, "Failed to resolve %s: %m", sys);
        slash = strrchr(disk, '/');
        if (!slash || slash == disk)
                return 0;
        *slash = 0; /* the parent of a partition is its disk */

        d = opendir(disk);
        if (!d)
                return log_debug_errno(errno, "Failed to open %s: %m", disk);
        while ((de = readdir(d))) {
                _cleanup_free_ char *pfile = NULL, *devfile = NULL, *devtext = NULL, *node = NULL;
                unsigned maj, min;
                Partition p = {};

                if (de->d_name[0] == '.')
                        continue;
                pfile = strjoin(disk, "/", de->d_name, "/partition");
                devfile = strjoin(disk, "/", de->d_name, "/dev");
                if (!pfile || !devfile)
                        return log_oom();
                if (access(pfile, F_OK) < 0 || read_full_file(devfile, &devtext, NULL) < 0 ||
                    sscanf(devtext, "%u:%u", &maj, &min) != 2)
                        continue;
                if (asprintf(&node, "/dev/block/%u:%u", maj, min) < 0)
                        return log_oom();
                if (access(node, F_OK) < 0) {
                        free(node);
                        node = strjoin("/dev/", de->d_name);
                        if (!node)
                                return log_oom();
                }
                if (probe_partition(node, &p) < 0)
                        continue;
                if (!streq_ptr(p.type, GPT_USR_X86_64) || (p.flags & GPT_FLAG_NO_AUTO)) {
                        partition_done(&p);
                        continue;
                }
                /* Several /usr partitions: the newest by label wins, as for the root. */
                if (!best_node || strverscmp(strempty(p.label), strempty(best.label)) > 0) {
                        partition_done(&best);
                        best = p;
                        free(best_node);
                        best_node = TAKE_PTR(node);
                } else
                        partition_done(&p);
        }
        if (!best_node)
                return 0;
        *ret_node = TAKE_PTR(best_node);
        *ret = best;
        return 1;
}

static int mount_usr(dev_t root_part, bool rw) {
        _cleanup_free_ char *node = NULL;
        Partition usr = {};
        unsigned long flags = 0;
        int r;

        r = find_usr_partition(root_part, &node, &usr);
        if (r <= 0)
                return r;
        if (!usr.fstype)
                log_warning("The /usr partition %s has no file system, not mounting it.", node);
        else if (streq(usr.fstype, "crypto_LUKS"))
                log_warning("The /usr partition %s is encrypted, which foyer does not discover yet; not mounting it.",
                            node);
        else {
                if (!rw || (usr.flags & GPT_FLAG_READ_ONLY))
                        flags |= MS_RDONLY;
                log_info("Mounting the discovered /usr partition %s (%s) on /sysroot/usr.", node, usr.fstype);
                if (mount(node, "/sysroot/usr", usr.fstype, flags, NULL) < 0)
                        r = log_error_errno(errno, "Failed to mount %s on /sysroot/usr: %m", node);
                else
                        (void) write_note("usr_discovered", strna(usr.uuid));
        }
        partition_done(&usr);
        return r < 0 ? r : 0;
}

#define SET_FLAG(v, flag, b) ((v) = (b) ? ((v) | (flag)) : ((v) & ~(flag)))

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        int *flags = data;

        if (streq(key, "mount.usr") && value)
                SET_FLAG(*flags, 1, !streq(value, "gpt-auto")); /* the root generator mounts it */
        else if (streq(key, "rw") && !value)
                *flags |= 2;
        else if (streq(key, "ro") && !value)
                *flags &= ~2;
        return 0;
}

static int root_setup(void) {
        Partition root = {};
        const char *part_node = GPT_AUTO_ROOT;
        dev_t root_dev = 0, part_dev;
        struct stat st;
        int r, cmdline = 0;

        if (stat("/sysroot", &st) < 0)
                return log_error_errno(errno, "Failed to stat /sysroot: %m");
        r = block_dev(GPT_AUTO_ROOT, &root_dev);
        if (r < 0 || st.st_dev != root_dev) {
                log_info("/sysroot is not mounted from " GPT_AUTO_ROOT ", nothing to do.");
                return 0;
        }
        /* An encrypted root: the GPT entry is that of the LUKS partition. */
        if (block_dev(GPT_AUTO_ROOT_LUKS, &part_dev) >= 0)
                part_node = GPT_AUTO_ROOT_LUKS;
        else
                part_dev = root_dev;

        r = probe_partition(part_node, &root);
        if (r < 0)
                log_warning_errno(r, "Failed to read the GPT entry of %s, ignoring its flags: %m", part_node);

        (void) write_note("root_discovered", "gpt-auto");
        if (root.uuid)
                (void) write_note("root_partuuid", root.uuid);

        r = cmdline_parse(parse_cmdline_item, &cmdline, 0);
        if (r < 0)
                log_warning_errno(r, "Failed to parse kernel command line, ignoring: %m");

        r = apply_root_flags(&root);
        if (!(cmdline & 1)) {
                int k = mount_usr(part_dev, cmdline & 2);
                if (r >= 0)
                        r = k;
        }
        partition_done(&root);
        return r;
}

int gpt_auto_root_setup(int argc, char *argv[]) {
        int r;

        log_set_target(LOG_TARGET_AUTO);
        log_parse_environment();
        log_open();
        if (argc != 2)
                r = log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s takes no further arguments.", argv[1]);
        else
                r = root_setup();
        log_close();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
