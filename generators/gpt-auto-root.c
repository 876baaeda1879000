/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* "foyer-gpt-auto-generator --root-discovered", run by foyer-gpt-auto-root.service after sysroot.mount.
 * Which partition udev picked is only known now, not when generators run (the disk may not even be
 * probed then), so the partition's GPT flags and the /usr partition next to it are handled here:
 *   read-only (bit 60): /sysroot is remounted read-only, even with "rw" on the command line;
 *   grow-fs (bit 59):   systemd-growfs grows the file system if /sysroot is mounted read-write;
 *   /usr:               the first (highest-labelled) /usr partition of the same disk without the no-auto
 *                       flag (bit 63) is mounted on /sysroot/usr, unless mount.usr= is given;
 * and the log names the partitions used (by PARTUUID).
 * The partition table is read from the whole disk, which sysfs names together with the partition's
 * number (below sysfs_dir(): $FOYER_SYSFS replaces /sys for tests). */

#include <blkid.h>
#include <libmount.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include "cmdline.h"
#include "fileio.h"
#include "gpt-auto.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"
#include "process-util.h"
#include "strv.h"


DEFINE_TRIVIAL_CLEANUP_FUNC(blkid_probe, blkid_free_probe);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_table *, mnt_unref_table);

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

/* One entry of the GPT, as libblkid reads it from the whole disk. */
typedef struct Partition {
        unsigned partno;
        char *type, *uuid, *label;
        unsigned long long flags;
} Partition;

static void partitions_free(Partition *p, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(p[i].type);
                free(p[i].uuid);
                free(p[i].label);
        }
        free(p);
}

/* The device node of a sysfs block directory: /dev/<name> if it is that device (so that mounts show
 * /dev/vda3), else /dev/block/MAJ:MIN (made by udev). */
static int sysfs_node(const char *dir, char **ret) {
        _cleanup_free_ char *devfile = strjoin(dir, "/dev"), *text = NULL, *node = NULL;
        unsigned maj, min;
        struct stat st;
        int r;

        assert(dir);
        assert(ret);

        if (!devfile)
                return -ENOMEM;
        r = read_full_file(devfile, &text, NULL);
        if (r < 0)
                return r;
        if (sscanf(text, "%u:%u", &maj, &min) != 2)
                return -EINVAL;
        node = strjoin("/dev/", strrchr(dir, '/') + 1);
        if (!node)
                return -ENOMEM;
        if (stat(node, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(maj, min)) {
                free(node);
                if (asprintf(&node, "/dev/block/%u:%u", maj, min) < 0) {
                        node = NULL;
                        return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(node);
        return 0;
}

static int read_uint_file(const char *dir, const char *name, unsigned *ret) {
        _cleanup_free_ char *p = strjoin(dir, "/", name), *text = NULL;
        int r;

        assert(dir);
        assert(name);
        assert(ret);

        if (!p)
                return -ENOMEM;
        r = read_full_file(p, &text, NULL);
        if (r < 0)
                return r;
        return sscanf(text, "%u", ret) == 1 ? 0 : -EINVAL;
}

/* The sysfs directory of the disk holding partition devnum and the partition's number. */
static int disk_of_partition(dev_t devnum, char **ret_disk, unsigned *ret_partno) {
        _cleanup_free_ char *link = NULL, *dir = NULL;
        char *slash;
        int r;

        assert(ret_disk);
        assert(ret_partno);

        if (asprintf(&link, "%s/dev/block/%u:%u", sysfs_dir(), major(devnum), minor(devnum)) < 0)
                return -ENOMEM;
        dir = realpath(link, NULL);
        if (!dir)
                return -errno;
        r = read_uint_file(dir, "partition", ret_partno);
        if (r < 0)
                return r == -ENOENT ? -ENOTBLK : r; /* not a partition */
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return -EINVAL;
        *slash = 0; /* the parent of a partition is its disk */
        *ret_disk = TAKE_PTR(dir);
        return 0;
}

/* The node of partition partno of the disk at sysfs directory disk. */
static int partition_node(const char *disk, unsigned partno, char **ret) {
        _cleanup_(closedirp) DIR *d = opendir(disk);
        struct dirent *de;

        assert(disk);
        assert(ret);

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                _cleanup_free_ char *sub = NULL;
                unsigned n;

                if (de->d_name[0] == '.')
                        continue;
                sub = strjoin(disk, "/", de->d_name);
                if (!sub)
                        return -ENOMEM;
                if (read_uint_file(sub, "partition", &n) >= 0 && n == partno)
                        return sysfs_node(sub, ret);
        }
        return -ENOENT;
}

/* All entries of the GPT on disk node (-ENOMEDIUM if it has no GPT). */
static int read_gpt(const char *node, Partition **ret, size_t *ret_n) {
        _cleanup_(blkid_free_probep) blkid_probe pr = NULL;
        Partition *p = NULL;
        blkid_partlist pl;
        blkid_parttable pt;
        int n;

        assert(node);
        assert(ret);
        assert(ret_n);

        errno = 0;
        pr = blkid_new_probe_from_filename(node);
        if (!pr)
                return errno > 0 ? -errno : -ENOMEM;
        blkid_probe_enable_superblocks(pr, 0);
        blkid_probe_enable_partitions(pr, 1);
        errno = 0;
        pl = blkid_probe_get_partitions(pr);
        if (!pl)
                return errno > 0 ? -errno : -ENOMEDIUM;
        pt = blkid_partlist_get_table(pl);
        if (!pt || !streq_ptr(blkid_parttable_get_type(pt), "gpt"))
                return -ENOMEDIUM;
        n = blkid_partlist_numof_partitions(pl);
        if (n < 0)
                return -EIO;
        p = calloc(n + 1, sizeof(Partition));
        if (!p)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                blkid_partition e = blkid_partlist_get_partition(pl, i);
                const char *type = e ? blkid_partition_get_type_string(e) : NULL,
                           *uuid = e ? blkid_partition_get_uuid(e) : NULL,
                           *label = e ? blkid_partition_get_name(e) : NULL;

                if (!e)
                        continue;
                p[i].partno = blkid_partition_get_partno(e);
                p[i].flags = blkid_partition_get_flags(e);
                if ((type && !(p[i].type = strdup(type))) || (uuid && !(p[i].uuid = strdup(uuid))) ||
                    (label && !(p[i].label = strdup(label)))) {
                        partitions_free(p, n);
                        return -ENOMEM;
                }
        }
        *ret = p;
        *ret_n = n;
        return 0;
}

/* The file system type on node ("ext4", "crypto_LUKS"), NULL if none is recognised. */
static int probe_fstype(const char *node, char **ret) {
        _cleanup_(blkid_free_probep) blkid_probe pr = NULL;
        const char *v = NULL;

        assert(node);
        assert(ret);

        errno = 0;
        pr = blkid_new_probe_from_filename(node);
        if (!pr)
                return errno > 0 ? -errno : -ENOMEM;
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
        blkid_probe_enable_partitions(pr, 0);
        if (blkid_do_safeprobe(pr) != 0 || blkid_probe_lookup_value(pr, "TYPE", &v, NULL) < 0 || !v) {
                *ret = NULL;
                return 0;
        }
        *ret = strdup(v);
        return *ret ? 0 : -ENOMEM;
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
        int status, r;

        if (access(exe, X_OK) < 0) {
                log_warning_errno(errno, "The root partition asks to be grown, but %s is missing: %m", exe);
                return 0;
        }
        r = spawn_and_wait(exe, (char **) (const char *[]) { exe, where, NULL }, NULL, &status);
        if (r < 0)
                log_debug_errno(r, "Failed to run %s: %m", exe);
        /* Not growing leaves a working, if small, file system: no reason to fail the boot. */
        if (r < 0 || !wait_status_ok(status))
                log_warning("%s %s failed, the file system keeps its size.", exe, where);
        else
                log_info("Grew the file system on %s to its partition (GPT grow-fs flag).", where);
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

/* Mounts the highest-labelled /usr partition of the table (no-auto excluded) on /sysroot/usr. */
static int mount_usr(const char *disk, const Partition *table, size_t n, bool rw) {
        _cleanup_free_ char *node = NULL, *fstype = NULL;
        const Partition *usr = NULL;
        unsigned long flags = 0;
        int r;

        assert(disk);
        assert(table);

        for (size_t i = 0; i < n; i++) {
                if (!streq_ptr(table[i].type, GPT_USR_X86_64) || (table[i].flags & GPT_FLAG_NO_AUTO))
                        continue;
                if (!usr || strverscmp(strempty(table[i].label), strempty(usr->label)) > 0)
                        usr = table + i;
        }
        if (!usr) {
                log_debug("No /usr partition next to the root partition.");
                return 0;
        }

        r = partition_node(disk, usr->partno, &node);
        if (r < 0)
                return log_error_errno(r, "Failed to find the node of /usr partition %u: %m", usr->partno);
        r = probe_fstype(node, &fstype);
        if (r < 0)
                return log_error_errno(r, "Failed to probe %s: %m", node);
        if (!fstype) {
                log_warning("The /usr partition %s has no file system, not mounting it.", node);
                return 0;
        }
        if (streq(fstype, "crypto_LUKS")) {
                log_warning("The /usr partition %s is encrypted, which foyer does not discover; not mounting it.",
                            node);
                return 0;
        }
        if (!rw || (usr->flags & GPT_FLAG_READ_ONLY))
                flags |= MS_RDONLY;
        log_info("Mounting the discovered /usr partition %s (PARTUUID=%s, %s) on /sysroot/usr.", node,
                 strna(usr->uuid), fstype);
        if (mount(node, "/sysroot/usr", fstype, flags, NULL) < 0)
                return log_error_errno(errno, "Failed to mount %s on /sysroot/usr: %m", node);
        return 0;
}

/* What the kernel command line says about the discovered root's /usr and mount mode. */
typedef struct RootCmdline {
        bool usr_given; /* the last mount.usr= is not "gpt-auto": the root generator mounts /usr */
        bool rw;        /* the last of "rw" and "ro" is "rw" */
} RootCmdline;

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        RootCmdline *c = ASSERT_PTR(data);

        assert(key);

        if (streq(key, "mount.usr") && value)
                c->usr_given = !streq(value, "gpt-auto");
        else if (streq(key, "rw") && !value)
                c->rw = true;
        else if (streq(key, "ro") && !value)
                c->rw = false;
        return 0;
}

/* Whether /sysroot is mounted from device devnum. st_dev is enough for most file systems; btrfs shows
 * an anonymous device there, so the mount's source (What= of sysroot.mount) is looked at too. */
static bool sysroot_is_from(dev_t devnum) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *t = NULL;
        struct libmnt_fs *fs;
        const char *src;
        struct stat st;
        dev_t d = 0;

        if (stat("/sysroot", &st) >= 0 && st.st_dev == devnum)
                return true;
        t = mnt_new_table_from_file("/proc/self/mountinfo");
        if (!t)
                return false;
        fs = mnt_table_find_target(t, "/sysroot", MNT_ITER_BACKWARD);
        src = fs ? mnt_fs_get_srcpath(fs) : NULL;
        return src && block_dev(src, &d) >= 0 && d == devnum;
}

static int root_setup(void) {
        _cleanup_free_ char *disk = NULL, *disk_node = NULL;
        Partition *table = NULL;
        const Partition *root = NULL;
        size_t n = 0;
        dev_t root_dev = 0, part_dev = 0; /* gcc 14 cannot see that block_dev() or the fallback sets it */
        unsigned partno = 0;
        RootCmdline cmdline = {};
        int r;

        r = block_dev(FOYER_GPT_AUTO_ROOT, &root_dev);
        if (r < 0 || !sysroot_is_from(root_dev)) {
                log_info("/sysroot is not mounted from " FOYER_GPT_AUTO_ROOT ", nothing to do.");
                return 0;
        }

        /* An encrypted root: the GPT entry is that of the LUKS partition. */
        if (block_dev(FOYER_GPT_AUTO_ROOT_LUKS, &part_dev) < 0)
                part_dev = root_dev;

        r = cmdline_parse(parse_cmdline_item, &cmdline, 0);
        if (r < 0)
                log_warning_errno(r, "Failed to parse kernel command line, ignoring: %m");

        r = disk_of_partition(part_dev, &disk, &partno);
        if (r >= 0)
                r = sysfs_node(disk, &disk_node);
        if (r >= 0)
                r = read_gpt(disk_node, &table, &n);
        if (r < 0)
                return log_warning_errno(r, "Failed to read the partition table of the root partition's disk, "
                                         "ignoring its flags and /usr: %m");
        for (size_t i = 0; i < n; i++)
                if (table[i].partno == partno)
                        root = table + i;
        if (!root) {
                log_warning("Partition %u is not in the partition table of %s, ignoring its flags and /usr.",
                            partno, disk_node);
                partitions_free(table, n);
                return 0;
        }
        log_info("/sysroot is mounted from the discovered root partition %u of %s (PARTUUID=%s).", partno,
                 disk_node, strna(root->uuid));

        /* Both steps run; the first failure is the result. */
        r = apply_root_flags(root);
        if (!cmdline.usr_given)
                RET_GATHER(r, mount_usr(disk, table, n, cmdline.rw));
        partitions_free(table, n);
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
