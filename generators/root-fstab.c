/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Mount units from fstab entries and from the command line, as systemd 252's fstab generator writes
 * them, and the two fstab passes run in the initrd. */

#include <libmount.h>
#include <sys/statvfs.h>

#include "cmdline.h"
#include "devspec.h"
#include "fileio.h"
#include "generator.h"
#include "mount-options.h"
#include "parse-util.h"
#include "root-fstab.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-name.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_table *, mnt_unref_table);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_iter *, mnt_free_iter);

static bool mount_point_is_api(const char *p) {
        static const char *const api[] = {
                "/proc", "/sys", "/dev", "/dev/shm", "/dev/pts", "/run", "/sys/kernel/security",
                "/sys/fs/smackfs", "/sys/fs/cgroup", "/sys/fs/pstore", "/sys/firmware/efi/efivars",
                "/sys/fs/bpf", "/dev/mqueue", "/dev/hugepages",
        };
        static const char *const ignored[] = {
                "/sys/fs/selinux", "/dev/console", "/proc/kmsg", "/proc/sys", "/proc/sys/kernel/random/boot_id",
                "/proc/sys/kernel/random/uuid", "/proc/sys/fs/binfmt_misc", "/sys/kernel/debug",
                "/sys/kernel/tracing", "/sys/fs/fuse/connections", "/sys/kernel/config",
        };

        for (size_t i = 0; i < ELEMENTSOF(api); i++)
                if (path_equal(p, api[i]))
                        return true;
        for (size_t i = 0; i < ELEMENTSOF(ignored); i++)
                if (path_equal(p, ignored[i]))
                        return true;
        return !isempty(path_startswith(p, "/sys/fs/cgroup"));
}

static bool fstype_is_network(const char *t) {
        static const char *const net[] = {
                "afs", "ceph", "cifs", "smb3", "smbfs", "sshfs", "ncpfs", "ncp", "nfs", "nfs4", "gfs", "gfs2",
                "glusterfs", "pvfs2", "ocfs2", "lustre", "davfs",
        };

        t = startswith(t, "fuse.") ?: t;
        for (size_t i = 0; i < ELEMENTSOF(net); i++)
                if (streq(t, net[i]))
                        return true;
        return false;
}

static bool detect_container(void) {
        return getenv("container") || access("/run/systemd/container", F_OK) >= 0 ||
               access("/.dockerenv", F_OK) >= 0 || access("/run/.containerenv", F_OK) >= 0;
}

/* Writes "<format with %1$s = the units>" for every value of the option, mangled into unit names. */
static int write_dependency(FILE *f, const char *opts, const char *filter, const char *format) {
        _cleanup_strv_free_ char **names = NULL, **units = NULL;
        _cleanup_free_ char *res = NULL;
        int r;

        r = mount_options_filter(opts, filter, NULL, &names, NULL);
        if (r < 0)
                return log_oom();
        for (char **s = names; s && *s; s++) {
                char *x;

                r = unit_name_mangle(*s, ".mount", &x);
                if (r < 0)
                        return log_error_errno(r, "Failed to generate unit name: %m");
                if (strv_consume(&units, x) < 0)
                        return log_oom();
        }
        if (!units)
                return 0;
        res = strv_join(units, " ");
        if (!res)
                return log_oom();
        fprintf(f, format, res);
        return 0;
}

static int write_escaped(FILE *f, const char *key, const char *value);

static int write_requires_mounts_for(FILE *f, const char *opts) {
        _cleanup_strv_free_ char **paths = NULL;
        _cleanup_free_ char *res = NULL;

        if (mount_options_filter(opts, "x-systemd.requires-mounts-for\0", NULL, &paths, NULL) < 0)
                return log_oom();
        if (!paths)
                return 0;
        res = strv_join(paths, " ");
        if (!res)
                return log_oom();
        return write_escaped(f, "RequiresMountsFor", res);
}

static int write_mount_timeout(FILE *f, const char *where, const char *opts) {
        char buf[FORMAT_TIMESPAN_MAX];
        usec_t u;
        int r;

        assert(f);
        assert(where);

        r = generator_parse_timeout_option(opts, "x-systemd.mount-timeout\0", where, NULL, &u, NULL);
        if (r <= 0)
                return r;
        fprintf(f, "TimeoutSec=%s\n", format_timespan(buf, sizeof(buf), u));
        return 0;
}

static int write_escaped(FILE *f, const char *key, const char *value) {
        int r;

        r = unit_file_write_value(f, key, value);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_warning_errno(r, "Refusing to write %s=%s: it contains a control character or ends in a backslash.",
                                         key, value);
        return 0;
}

static int write_options(FILE *f, const char *opts) {
        if (isempty(opts) || streq(opts, "defaults"))
                return 0;
        return write_escaped(f, "Options", opts);
}

/* x-systemd.wanted-by=/required-by= name .wants/ and .requires/ directories: path components. A value
 * that is not a unit name (systemd 252 would use "../x" as it is) is logged and dropped in place. */
static void drop_invalid_unit_names(const char *source, const char *where, const char *option, char **names) {
        char **w = names;

        for (char **s = names; s && *s; s++) {
                if (unit_name_is_valid(*s)) {
                        *(w++) = *s;
                        continue;
                }
                log_warning("%s: ignoring %s=%s of the mount point %s: not a valid unit name.", source, option, *s,
                            where);
                free(*s);
        }
        if (w)
                *w = NULL;
}

/* The .automount for where; the target pulls in the automount instead of the mount (not linked when
 * target_unit is NULL: the caller links it where x-systemd.wanted-by=/required-by= say). */
static int add_automount(const char *source, const char *dest, const char *where, const char *opts,
                         MountFlags flags, const char *target_unit, char **ret_name) {
        _cleanup_free_ char *name = NULL, *timeout = NULL;
        _cleanup_unit_file_ UnitFile *u = NULL;
        char buf[FORMAT_TIMESPAN_MAX];
        FILE *f;
        usec_t usec;
        int r;

        assert(source);
        assert(dest);
        assert(where);

        r = generator_open_unit_for_path(dest, source, where, ".automount", &name, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        fprintf(f, "[Unit]\nSourcePath=%s\nDocumentation=man:fstab(5) man:systemd-fstab-generator(8)\n\n[Automount]\n",
                source);
        if ((r = write_escaped(f, "Where", where)) < 0)
                return r;

        r = mount_options_filter(opts, "x-systemd.idle-timeout\0", &timeout, NULL, NULL);
        if (r < 0)
                return log_oom();
        if (r > 0) {
                if (!timeout || parse_sec(timeout, &usec) < 0)
                        log_warning("Failed to parse idle timeout for %s, ignoring: %s", where, strna(timeout));
                else
                        fprintf(f, "TimeoutIdleSec=%s\n", format_timespan(buf, sizeof(buf), usec));
        }

        r = generator_commit_unit_file(u, source);
        if (r < 0)
                return r;
        if (target_unit)
                r = generator_add_symlink(dest, target_unit, flags & MOUNT_NOFAIL ? "wants" : "requires", name);
        if (r >= 0 && ret_name)
                *ret_name = TAKE_PTR(name);
        return r;
}

int add_mount(const char *source, const char *dest, const char *what, const char *where,
              const char *original_where, const char *fstype, const char *opts, int passno,
              MountFlags flags, const char *target_unit, bool sysroot_check) {
        _cleanup_strv_free_ char **wanted_by = NULL, **required_by = NULL;
        _cleanup_free_ char *name = NULL, *filtered = NULL, *nfs_opts = NULL, *mandatory_opts = NULL,
                            *automount_name = NULL;
        _cleanup_unit_file_ UnitFile *u = NULL;
        bool v257 = systemd_version() >= 257, linked_by_options;
        FILE *f;
        int r;

        assert(source);
        assert(dest);
        assert(what);
        assert(where);
        assert(target_unit);

        if (streq_ptr(fstype, "autofs"))
                return 0;
        if (!strchr(where, '/')) {
                log_warning("Mount point %s is not a valid path, ignoring.", where);
                return 0;
        }
        if (mount_point_is_api(where))
                return 0;

        if (mount_options_filter(opts, "x-systemd.wanted-by\0", NULL, &wanted_by, NULL) < 0 ||
            mount_options_filter(opts, "x-systemd.required-by\0", NULL, &required_by, NULL) < 0)
                return log_oom();
        drop_invalid_unit_names(source, where, "x-systemd.wanted-by", wanted_by);
        drop_invalid_unit_names(source, where, "x-systemd.required-by", required_by);

        if (path_equal(where, "/") || (v257 && path_equal(where, "/usr"))) {
                if (flags & MOUNT_NOAUTO)
                        log_warning("Ignoring \"noauto\" option for root device");
                if (flags & MOUNT_NOFAIL)
                        log_warning("Ignoring \"nofail\" option for root device");
                if (flags & MOUNT_AUTOMOUNT)
                        log_warning("Ignoring \"automount\" option for root device");
                wanted_by = strv_free(wanted_by);
                required_by = strv_free(required_by);
                /* 257 also drops these options from the unit's Options= (and treats /usr as /). */
                if (v257 && (flags & (MOUNT_NOAUTO | MOUNT_NOFAIL | MOUNT_AUTOMOUNT))) {
                        if (mount_options_filter(opts, "noauto\0nofail\0x-systemd.automount\0", NULL, NULL,
                                                 &mandatory_opts) < 0)
                                return log_oom();
                        opts = mandatory_opts;
                }
                flags &= ~(MOUNT_NOAUTO | MOUNT_NOFAIL | MOUNT_AUTOMOUNT);
        }
        /* 257: x-systemd.wanted-by=/required-by= replace the default target, its ordering included. */
        linked_by_options = v257 && (!strv_isempty(wanted_by) || !strv_isempty(required_by));

        if (sysroot_check) {
                log_info("%s should be mounted in the initrd, will request daemon-reload.", where);
                return 1;
        }

        r = generator_open_unit_for_path(dest, source, where, ".mount", &name, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);

        fprintf(f, "[Unit]\nDocumentation=man:fstab(5) man:systemd-fstab-generator(8)\nSourcePath=%s\n", source);

        /* NFS "bg" becomes systemd-managed "fg" with mount.nfs's long bg retry kept. */
        if ((streq_ptr(fstype, "nfs") || streq_ptr(fstype, "nfs4")) && mount_options_test_yes_no(opts, "bg\0fg\0")) {
                nfs_opts = strjoin("x-systemd.mount-timeout=infinity,retry=10000,nofail,", opts, ",fg");
                if (!nfs_opts)
                        return log_oom();
                opts = nfs_opts;
                flags |= MOUNT_NOFAIL;
        }

        if (linked_by_options)
                fputs("DefaultDependencies=no\nConflicts=umount.target\nBefore=umount.target\n", f);
        if ((r = write_dependency(f, opts, "x-systemd.after\0", "After=%1$s\n")) < 0 ||
            (r = write_dependency(f, opts, "x-systemd.requires\0",
                                  v257 ? "Requires=%1$s\nAfter=%1$s\n" : "After=%1$s\nRequires=%1$s\n")) < 0 ||
            (r = write_dependency(f, opts, "x-systemd.before\0", "Before=%1$s\n")) < 0 ||
            (r = write_requires_mounts_for(f, opts)) < 0)
                return r;

        if (!(flags & MOUNT_NOFAIL) && !linked_by_options)
                fprintf(f, "Before=%s\n", target_unit);
        /* A root image systemd-importd downloads (systemd.pull=) is there once imports.target is. */
        if (flags & MOUNT_AFTER_IMPORTS)
                fputs("After=imports.target\n", f);

        if (passno != 0) {
                r = generator_write_fsck_deps(f, dest, what, where, fstype);
                if (r < 0)
                        return r;
        }
        r = generator_write_blockdev_dependency(f, what);
        if (r < 0)
                return r;

        fprintf(f, "\n[Mount]\n");
        if ((r = write_escaped(f, "What", what)) < 0)
                return r;
        if (original_where)
                fprintf(f, "# Canonicalized from %s\n", original_where);
        if ((r = write_escaped(f, "Where", where)) < 0)
                return r;
        if (!isempty(fstype) && !streq(fstype, "auto") && (r = write_escaped(f, "Type", fstype)) < 0)
                return r;

        r = generator_write_timeouts(dest, what, where, opts, &filtered);
        if (r < 0)
                return r;
        if ((r = write_mount_timeout(f, where, opts)) < 0 || (r = write_options(f, filtered)) < 0)
                return r;
        if (flags & MOUNT_RW_ONLY)
                fprintf(f, "ReadWriteOnly=yes\n");

        r = generator_commit_unit_file(u, source);
        if (r < 0)
                return r;

        if ((flags & MOUNT_MAKEFS) && (r = generator_hook_up_mkfs(dest, what, where, fstype)) < 0)
                return r;
        if ((flags & MOUNT_GROWFS) &&
            (r = generator_hook_up_growfs(dest, where, linked_by_options ? NULL : target_unit)) < 0)
                return r;
        if ((flags & MOUNT_VALIDATEFS) &&
            (r = generator_hook_up_validatefs(dest, where, linked_by_options ? NULL : target_unit)) < 0)
                return r;

        if (flags & MOUNT_AUTOMOUNT) {
                /* 252 links the automount to the default target whatever the options say. */
                r = add_automount(source, dest, where, opts, flags, linked_by_options ? NULL : target_unit,
                                  &automount_name);
                if (r < 0 || !linked_by_options)
                        return r;
        }

        if (!(flags & MOUNT_NOAUTO) && strv_isempty(wanted_by) && strv_isempty(required_by))
                return generator_add_symlink(dest, target_unit, flags & MOUNT_NOFAIL ? "wants" : "requires", name);
        for (char **s = wanted_by; s && *s; s++)
                if ((r = generator_add_symlink(dest, *s, "wants", automount_name ?: name)) < 0)
                        return r;
        for (char **s = required_by; s && *s; s++)
                if ((r = generator_add_symlink(dest, *s, "requires", automount_name ?: name)) < 0)
                        return r;
        return 0;
}

static int add_swap(const char *source, const char *dest, const char *what, const char *opts,
                    MountFlags flags, bool swap_enabled, bool sysroot_check) {
        _cleanup_free_ char *name = NULL;
        _cleanup_unit_file_ UnitFile *u = NULL;
        FILE *f;
        int r;

        assert(source);
        assert(dest);
        assert(what);

        if (!swap_enabled) {
                log_info("Swap unit generation disabled on kernel command line, ignoring fstab swap entry for %s.", what);
                return 0;
        }
        if (access("/proc/swaps", F_OK) < 0) {
                log_info("Swap not supported, ignoring fstab swap entry for %s.", what);
                return 0;
        }
        if (detect_container()) {
                log_info("Running in a container, ignoring fstab swap entry for %s.", what);
                return 0;
        }
        if (sysroot_check) {
                log_info("%s should be enabled in the initrd, will request daemon-reload.", what);
                return 1;
        }

        r = generator_open_unit_for_path(dest, source, what, ".swap", &name, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        fprintf(f, "[Unit]\nDocumentation=man:fstab(5) man:systemd-fstab-generator(8)\nSourcePath=%s\n", source);
        if ((r = generator_write_blockdev_dependency(f, what)) < 0)
                return r;
        fprintf(f, "\n[Swap]\n");
        if ((r = write_escaped(f, "What", what)) < 0 || (r = write_options(f, opts)) < 0)
                return r;
        r = generator_commit_unit_file(u, source);
        if (r < 0)
                return r;
        r = generator_write_timeouts(dest, what, what, opts, NULL);
        if (r < 0)
                return r;
        if (flags & MOUNT_NOAUTO)
                return 0;
        return generator_add_symlink(dest, "swap.target", flags & MOUNT_NOFAIL ? "wants" : "requires", name);
}

static bool sys_is_read_only(void) {
        struct statvfs st;
        return statvfs("/sys", &st) >= 0 && (st.f_flag & ST_RDONLY);
}

static int fstab_parser_error(struct libmnt_table *tb, const char *filename, int line) {
        log_warning("%s:%i: malformed fstab line, ignoring.", filename, line);
        return 1; /* recoverable: skip the line */
}

static bool entry_fields_are_safe(const char *source, const char *const fields[4]) {
        static const char *const names[] = { "device", "mount point", "type", "options" };

        for (size_t i = 0; i < 4; i++)
                if (fields[i] && !unit_value_is_safe(fields[i])) {
                        _cleanup_free_ char *e = cescape(fields[i]);

                        log_warning("%s: the %s field \"%s\" contains a control character or ends in a backslash, ignoring the entry.",
                                    source, names[i], strna(e));
                        return false;
                }
        return true;
}

int fstab_add_entry(const char *source, const char *dest, const char *spec, const char *target,
                    const char *fstype, const char *opts, int passno, FstabEntryMode mode,
                    bool swap_enabled, bool sysroot_check) {
        _cleanup_free_ char *what = NULL, *where = NULL, *canonical = NULL, *usr_opts = NULL, *bind_what = NULL;
        bool sysroot = mode & FSTAB_ENTRY_SYSROOT, extra = mode & FSTAB_ENTRY_EXTRA;
        MountFlags flags = 0;
        int r;

        assert(source);
        assert(dest);

        opts = opts ?: "";
        if (!spec || (!target && !streq_ptr(fstype, "swap")))
                return 0;
        /* The host's entries the initrd mounts: x-initrd.mount and /usr, and / for the extra entries of
         * the command line and the credential (254's accept_root). */
        if (sysroot && !mount_options_test(opts, "x-initrd.mount\0") && !streq_ptr(target, "/usr") &&
            !(extra && streq_ptr(target, "/")))
                return 0;
        /* libmount has unescaped \012 and friends, the command line's \n: no field may add lines to the unit. */
        if (!entry_fields_are_safe(source, (const char *const[]) { spec, target, fstype, opts }))
                return 0;

        if (devspec_to_node(spec, DEVSPEC_NO_ID, &what) < 0)
                return log_oom();
        if (sys_is_read_only()) {
                if (streq(what, "sysfs")) {
                        log_info("Running in a container, ignoring fstab entry for %s.", what);
                        return 0;
                }
                if (is_device_path(what)) {
                        log_info("Running in a container, ignoring fstab device entry for %s.", what);
                        return 0;
                }
        }

        if (mount_options_test_yes_no(opts, "noauto\0auto\0"))
                flags |= MOUNT_NOAUTO;
        if (mount_options_test_yes_no(opts, "nofail\0fail\0"))
                flags |= MOUNT_NOFAIL;
        if (mount_options_test(opts, "x-systemd.makefs\0"))
                flags |= MOUNT_MAKEFS;
        if (mount_options_test(opts, "x-systemd.growfs\0"))
                flags |= MOUNT_GROWFS;
        if (systemd_knows_validatefs() && mount_options_test(opts, "x-systemd.validatefs\0"))
                flags |= MOUNT_VALIDATEFS;

        if (streq_ptr(fstype, "swap"))
                return add_swap(source, dest, what, opts, flags, swap_enabled, sysroot_check);

        /* An extra entry's passno is that of root=: fsck for a device. */
        if (passno < 0)
                passno = is_device_path(what);
        if (extra && !strchr(target, '/')) {
                log_warning("Mount point %s is not a valid path, ignoring.", target);
                return 0;
        }

        where = strdup(target);
        if (!where)
                return log_oom();
        if (strchr(where, '/')) {
                path_simplify(where);
                if (!path_is_safe(where)) {
                        log_warning("%s: mount point %s contains \"..\", ignoring.", source, where);
                        return 0;
                }
                r = chase_below_root(where, sysroot ? "/sysroot" : NULL, &canonical);
                if (r < 0) {
                        log_debug_errno(r, "Failed to read symlink target for %s, using as-is: %m", where);
                        canonical = NULL;
                } else if (streq(canonical, where)) {
                        free(canonical);
                        canonical = NULL;
                }
        }

        /* From 254 on the source of a bind mount of the host's is under /sysroot as well. */
        if (sysroot && systemd_version() >= 254 &&
            (mount_options_test(opts, "bind\0rbind\0") || streq_ptr(fstype, "bind") || streq_ptr(fstype, "rbind")) &&
            what[0] == '/') {
                r = chase_below_root(what, "/sysroot", &bind_what);
                if (r < 0 || !bind_what) {
                        free(bind_what);
                        bind_what = strjoin("/sysroot", what);
                        if (!bind_what)
                                return log_oom();
                }
                free(what);
                what = TAKE_PTR(bind_what);
        }

        if (mount_options_test(opts, "x-systemd.rw-only\0"))
                flags |= MOUNT_RW_ONLY;
        if (mount_options_test(opts, "comment=systemd.automount\0x-systemd.automount\0"))
                flags |= MOUNT_AUTOMOUNT;

        const char *target_unit = sysroot ? "initrd-fs.target" :
                                  (mount_options_test(opts, "_netdev\0") || (fstype && fstype_is_network(fstype))) ?
                                  "remote-fs.target" : "local-fs.target";
        const char *mounted = canonical ?: where;
        /* 257 mounts the root's /usr on /sysusr/usr first (for initrd-usr-fs.target, as with mount.usr=)
         * and binds it into /sysroot/usr; 252 mounts it on /sysroot/usr directly. An extra entry for /
         * (254) is the root file system: initrd-root-fs.target, as root=. */
        bool is_usr = (sysroot || extra) && systemd_version() >= 257 && in_initrd() && path_equal(mounted, "/sysroot/usr");
        bool is_root = extra && in_initrd() && path_equal(mounted, "/sysroot");

        if (is_usr || is_root) {
                /* A mount the initrd needs: noauto, nofail and x-systemd.automount do not apply. */
                if (flags & (MOUNT_NOAUTO | MOUNT_NOFAIL | MOUNT_AUTOMOUNT)) {
                        if (mount_options_filter(opts, "noauto\0nofail\0x-systemd.automount\0", NULL, NULL,
                                                 &usr_opts) < 0)
                                return log_oom();
                        opts = usr_opts;
                        flags &= ~(MOUNT_NOAUTO | MOUNT_NOFAIL | MOUNT_AUTOMOUNT);
                }
        }
        if (is_usr) {
                /* 262 validates /usr where the real system sees it, the bind mount on /sysroot/usr. */
                r = add_mount(source, dest, what, "/sysusr/usr", NULL, fstype, opts, passno,
                              flags & ~MOUNT_VALIDATEFS, "initrd-usr-fs.target", sysroot_check);
                if (r == 0)
                        r = add_mount(source, dest, "/sysusr/usr", "/sysroot/usr", NULL, NULL, "bind", 0,
                                      flags & MOUNT_VALIDATEFS, "initrd-fs.target", sysroot_check);
                return r == -EBADMSG ? 0 : r;
        }
        if (is_root) {
                target_unit = "initrd-root-fs.target";
                if (is_device_path(what) && !sysroot_check &&
                    (r = generator_write_initrd_root_device_deps(dest, what)) < 0)
                        return r;
        }

        r = add_mount(source, dest, what, mounted, canonical ? where : NULL, fstype, opts,
                      passno, flags, target_unit, sysroot_check);
        /* A value refused by write_escaped() (logged): the entry is skipped like a malformed one. */
        return r == -EBADMSG ? 0 : r;
}

int parse_fstab_file(const char *path, const char *source, const char *dest, FstabEntryMode mode,
                     bool swap_enabled, bool sysroot_check) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *tb = NULL;
        _cleanup_(mnt_free_iterp) struct libmnt_iter *it = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        struct libmnt_fs *fs;
        int r, ret = 0;

        assert(path);
        assert(source);
        assert(dest);

        log_debug("Parsing %s...", path);

        f = fopen(path, "re");
        if (!f) {
                if (errno == ENOENT)
                        return 0;
                log_warning_errno(errno, "Failed to open %s, ignoring: %m", path);
                return 0;
        }

        tb = mnt_new_table();
        it = mnt_new_iter(MNT_ITER_FORWARD);
        if (!tb || !it)
                return log_oom();
        mnt_table_set_parser_errcb(tb, fstab_parser_error);
        /* A stream, so that character devices such as /dev/null work too. */
        r = mnt_table_parse_stream(tb, f, path);
        if (r < 0) {
                log_warning_errno(r, "Failed to parse %s, ignoring: %m", path);
                return 0;
        }

        while (mnt_table_next_fs(tb, it, &fs) == 0) {
                /* A credential's entries name their own file (source is the directory's name). */
                if (!streq(path, source) &&
                    !entry_fields_are_safe(path, (const char *const[]) { mnt_fs_get_source(fs), mnt_fs_get_target(fs),
                                                                         mnt_fs_get_fstype(fs), mnt_fs_get_options(fs) }))
                        continue;
                r = fstab_add_entry(source, dest, mnt_fs_get_source(fs), mnt_fs_get_target(fs),
                                    mnt_fs_get_fstype(fs), mnt_fs_get_options(fs), mnt_fs_get_passno(fs),
                                    mode, swap_enabled, sysroot_check);
                if (sysroot_check && r > 0)
                        return 1;
                RET_GATHER(ret, r);
        }
        return ret;
}

int parse_fstab(const char *dest, bool sysroot, bool swap_enabled, bool sysroot_check) {
        const char *fstab = sysroot ? (getenv("SYSTEMD_SYSROOT_FSTAB") ?: "/sysroot/etc/fstab") :
                                      (secure_getenv("SYSTEMD_FSTAB") ?: "/etc/fstab");

        return parse_fstab_file(fstab, fstab, dest, sysroot ? FSTAB_ENTRY_SYSROOT : 0, swap_enabled, sysroot_check);
}
