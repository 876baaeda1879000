/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <limits.h>

#include "cmdline.h"
#include "devspec.h"
#include "fileio.h"
#include "generator.h"
#include "mount-options.h"
#include "parse-util.h"
#include "process-util.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-name.h"

const char *generator_dest, *generator_dest_early, *generator_dest_late;

int generator_main(int argc, char *argv[],
                   int (*run)(const char *dest, const char *dest_early, const char *dest_late),
                   void (*reset)(void)) {
        int r;

        assert(argv);
        assert(run);

        log_set_target(LOG_TARGET_AUTO);
        log_parse_environment();
        log_open();
        umask(0022);

        if (!IN_SET(argc, 2, 4)) {
                log_error("This program takes one or three arguments.");
                log_close();
                return EXIT_FAILURE;
        }
        generator_dest = argv[1];
        generator_dest_early = argv[argc > 2 ? 2 : 1];
        generator_dest_late = argv[argc > 3 ? 3 : 1];

        /* Every foyer generator does its work in the initrd only: in the real root systemd's own
         * generators handle the same parameters. */
        if (in_initrd())
                r = run(generator_dest, generator_dest_early, generator_dest_late);
        else {
                log_debug("Not running in the initrd, nothing to do.");
                r = 0;
        }
        if (reset)
                reset();
        log_close();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int log_unit_error(int r, const char *path, const char *source) {
        if (r == -EINVAL)
                return log_error_errno(r, "Refusing to create unit file '%s': the name is not a path inside the output directory.",
                                       path);
        if (r == -EEXIST)
                return log_error_errno(r, "Failed to create unit file '%s', as it already exists. Duplicate entry in '%s'?",
                                       path, strna(source));
        return log_error_errno(r, "Failed to create unit file '%s': %m", path);
}

int generator_open_unit_file(const char *dir, const char *source, const char *name, UnitFile **ret) {
        int r;

        assert(dir);
        assert(name);
        assert(ret);

        r = unit_file_open(dir, name, ret);
        if (r < 0) {
                _cleanup_free_ char *p = strjoin(dir, "/", name);
                return log_unit_error(r, p ?: name, source);
        }
        return 0;
}

int generator_open_unit_for_path(const char *dir, const char *source, const char *path, const char *suffix,
                                 char **ret_name, UnitFile **ret) {
        _cleanup_free_ char *name = NULL;
        int r;

        assert(dir);
        assert(path);
        assert(suffix);
        assert(ret_name);
        assert(ret);

        r = unit_name_from_path(path, suffix, &name);
        if (r < 0)
                return log_error_errno(r, "Failed to generate unit name for %s: %m", path);
        r = generator_open_unit_file(dir, source, name, ret);
        if (r < 0)
                return r;
        *ret_name = TAKE_PTR(name);
        return 0;
}

int generator_commit_unit_file(UnitFile *u, const char *source) {
        int r;

        assert(u);

        r = unit_file_commit(u);
        if (r == -EBADMSG)
                return log_error_errno(r, "Refusing to write unit file '%s' from '%s': line %zu contains a control character or ends in a backslash.",
                                       unit_file_path(u), strna(source), unit_file_bad_line(u));
        if (r < 0)
                return log_unit_error(r, unit_file_path(u), source);
        return 0;
}

int generator_add_symlink(const char *dir, const char *target, const char *dep_type, const char *src) {
        int r;

        assert(dir);
        assert(target);
        assert(dep_type);
        assert(src);

        r = unit_file_add_symlink(dir, target, dep_type, src);
        if (r == -EINVAL)
                return log_error_errno(r, "Refusing to create symlink %s.%s/%s in %s: not a valid unit name.",
                                       target, dep_type, src, dir);
        if (r < 0)
                return log_error_errno(r, "Failed to create symlink %s.%s/%s in %s: %m", target, dep_type, src, dir);
        return 0;
}

int generator_write_blockdev_dependency(FILE *f, const char *what) {
        _cleanup_free_ char *escaped = NULL;
        int r;

        assert(f);
        assert(what);

        if (!path_startswith(what, "/dev/"))
                return 0;
        r = unit_name_path_escape(what, &escaped);
        if (r < 0)
                return log_error_errno(r, "Failed to escape device node path %s: %m", what);
        fprintf(f, "After=blockdev@%s.target\n", escaped);
        return 0;
}

/* Whether an fsck checker is usable: found in $PATH and not a symlink to true or /dev/null. */
static bool executable_is_good(const char *name) {
        _cleanup_free_ char *p = NULL;
        char target[PATH_MAX];
        ssize_t k;

        if (find_executable(name, &p) < 0)
                return false;
        k = readlink(p, target, sizeof(target) - 1);
        if (k < 0)
                return true;
        target[k] = 0;
        return !streq(target, "true") && !streq(target, "/usr/bin/true") && !streq(target, "/dev/null");
}

static int write_fsck_sysroot_service(const char *unit, const char *dir, const char *what,
                                      const char *extra_after) {
        _cleanup_free_ char *device = NULL, *escaped = NULL, *escaped2 = NULL;
        _cleanup_unit_file_ UnitFile *u = NULL;
        int r;

        escaped = specifier_escape(what);
        if (!escaped)
                return log_oom();
        escaped2 = cescape(escaped);
        if (!escaped2)
                return log_oom();
        r = unit_name_from_path(what, ".device", &device);
        if (r < 0)
                return log_error_errno(r, "Failed to convert device \"%s\" to unit name: %m", what);

        r = generator_open_unit_file(dir, "/proc/cmdline", unit, &u);
        if (r < 0)
                return r;
        fprintf(unit_file_stream(u),
                "[Unit]\n"
                "Description=File System Check on %1$s\n"
                "Documentation=man:%2$s(8)\n"
                "%7$s"
                "DefaultDependencies=no\n"
                "BindsTo=%3$s\n"
                "Conflicts=shutdown.target\n"
                "After=%4$s%5$slocal-fs-pre.target %3$s\n"
                "Before=shutdown.target\n"
                "\n"
                "[Service]\n"
                "Type=oneshot\n"
                "RemainAfterExit=yes\n"
                "ExecStart=%8$s/systemd-fsck %6$s\n"
                "TimeoutSec=%9$s\n"
                "%10$s",
                escaped, unit, device, strempty(extra_after), isempty(extra_after) ? "" : " ", escaped2,
                systemd_writes_dependency_gap() ? "\n" : "", systemd_libexec_dir(), systemd_timeout_infinity(),
                systemd_fsck_imports_credentials() ? "ImportCredential=fsck.*\n" : "");
        return generator_commit_unit_file(u, "/proc/cmdline");
}

int generator_write_fsck_deps(FILE *f, const char *dir, const char *what, const char *where,
                              const char *fstype) {
        _cleanup_free_ char *instance = NULL;
        const char *fsck;
        bool initrd = in_initrd();
        int r;

        assert(f);
        assert(dir);
        assert(what);
        assert(where);

        if (initrd && (path_equal(where, "/") || path_equal(where, "/usr"))) {
                log_debug("Skipping fsck for %s in initrd.", where);
                return 0;
        }
        if (!is_device_path(what)) {
                log_warning("Checking was requested for \"%s\", but it is not a device.", what);
                return 0;
        }
        if (!executable_is_good("fsck")) {
                log_debug("Checking was requested for %s, but the fsck command does not exist.", what);
                return 0;
        }
        if (!isempty(fstype) && !streq(fstype, "auto")) {
                _cleanup_free_ char *checker = strjoin("fsck.", fstype);
                if (!checker)
                        return log_oom();
                if (!executable_is_good(checker)) {
                        log_debug("Checking was requested for %s, but %s does not exist.", what, checker);
                        return 0;
                }
        }

        if (path_equal(where, "/")) {
                _cleanup_free_ char *lnk = strjoin(dir, "/local-fs.target.wants/systemd-fsck-root.service");
                if (!lnk)
                        return log_oom();
                (void) mkdir_parents(lnk, 0755);
                _cleanup_free_ char *target = strjoin(systemd_libexec_dir(), "/system/systemd-fsck-root.service");
                if (!target)
                        return log_oom();
                if (symlink(target, lnk) < 0)
                        return log_error_errno(errno, "Failed to create symlink %s: %m", lnk);
                return 0;
        }

        if (initrd && path_equal(where, "/sysroot")) {
                r = write_fsck_sysroot_service("systemd-fsck-root.service", dir, what, "initrd-root-device.target");
                if (r < 0)
                        return r;
                fsck = "systemd-fsck-root.service";
        } else if (initrd && path_equal(where, "/sysusr/usr")) {
                r = write_fsck_sysroot_service("systemd-fsck-usr.service", dir, what, NULL);
                if (r < 0)
                        return r;
                fsck = "systemd-fsck-usr.service";
        } else {
                r = unit_name_from_path_instance("systemd-fsck", what, ".service", &instance);
                if (r < 0)
                        return log_error_errno(r, "Failed to create fsck service name: %m");
                fsck = instance;
        }

        fprintf(f, "%1$s=%2$s\nAfter=%2$s\n", !initrd && path_equal(where, "/usr") ? "Wants" : "Requires", fsck);
        return 0;
}

int generator_parse_timeout_option(const char *opts, const char *filter, const char *where,
                                   char **ret_value, usec_t *ret_usec, char **ret_filtered) {
        _cleanup_free_ char *value = NULL;
        usec_t u;
        int r;

        assert(filter);
        assert(where);

        r = mount_options_filter(opts, filter, &value, NULL, ret_filtered);
        if (r < 0)
                return log_oom();
        if (r == 0)
                return 0;
        if (!value || parse_sec_fix_0(value, &u) < 0) {
                log_warning("Failed to parse timeout for %s, ignoring: %s", where, strna(value));
                return 0;
        }
        if (ret_value)
                *ret_value = TAKE_PTR(value);
        if (ret_usec)
                *ret_usec = u;
        return 1;
}

int generator_write_timeout_dropin(const char *dir, const char *unit, unsigned level, const char *name,
                                   const char *header_tail, const char *key, const char *value) {
        int r;

        assert(dir);
        assert(unit);
        assert(name);
        assert(key);
        assert(value);

        r = unit_file_write_dropinf(dir, unit, level, name,
                                    "# Automatically generated by %s%s\n\n"
                                    "[Unit]\n"
                                    "%s=%s",
                                    program_invocation_short_name, strempty(header_tail), key, value);
        if (r < 0)
                return log_error_errno(r, "Failed to write device timeout drop-in for %s: %m", unit);
        return 0;
}

int generator_write_timeouts(const char *dir, const char *what, const char *where, const char *opts,
                             char **ret_filtered) {
        _cleanup_free_ char *node = NULL, *unit = NULL, *timeout = NULL, *header_tail = NULL;
        int r;

        assert(dir);
        assert(what);
        assert(where);

        r = generator_parse_timeout_option(opts, DEVICE_TIMEOUT_OPTIONS, where, &timeout, NULL, ret_filtered);
        if (r <= 0)
                return r;

        if (devspec_to_node(what, DEVSPEC_NO_ID, &node) < 0)
                return log_oom();
        if (!is_device_path(node)) {
                log_warning("x-systemd.device-timeout ignored for %s", what);
                return 0;
        }
        r = unit_name_from_path(node, ".device", &unit);
        if (r < 0)
                return log_error_errno(r, "Failed to make unit name from path: %m");

        /* As 252: the options the timeout came from, in a second comment line. */
        header_tail = strjoin("\n# from supplied options \"", strempty(opts), "\"");
        if (!header_tail)
                return log_oom();
        r = generator_write_timeout_dropin(dir, unit, 50, "device-timeout", header_tail,
                                           "JobRunningTimeoutSec", timeout);
        if (r < 0)
                return r;
        return 1;
}

int generator_write_initrd_root_device_deps(const char *dir, const char *what) {
        _cleanup_free_ char *unit = NULL;
        int r;

        assert(dir);
        assert(what);

        r = unit_name_from_path(what, ".device", &unit);
        if (r < 0)
                return log_error_errno(r, "Failed to make unit name from path \"%s\": %m", what);
        r = unit_file_write_dropinf(dir, "initrd-root-device.target", 50, "root-device",
                                    "# Automatically generated by %s\n\n"
                                    "[Unit]\n"
                                    "Requires=%s\n"
                                    "After=%s",
                                    program_invocation_short_name, unit, unit);
        if (r < 0)
                return log_error_errno(r, "Failed to write initrd-root-device.target drop-in: %m");
        return 0;
}

int generator_hook_up_mkfs(const char *dir, const char *what, const char *where, const char *type) {
        _cleanup_free_ char *node = NULL, *unit = NULL, *escaped = NULL, *where_unit = NULL;
        _cleanup_unit_file_ UnitFile *u = NULL;
        int r;

        assert(dir);
        assert(what);
        assert(where);

        if (isempty(type) || streq(type, "auto")) {
                log_warning("Cannot format %s, its file system type is not specified, ignoring x-systemd.makefs.", what);
                return 0;
        }
        if (devspec_to_node(what, DEVSPEC_NO_ID, &node) < 0)
                return log_oom();
        r = unit_name_from_path_instance("systemd-makefs", node, ".service", &unit);
        if (r < 0)
                return log_error_errno(r, "Failed to make unit instance name from path \"%s\": %m", node);
        escaped = cescape(node);
        if (!escaped)
                return log_oom();
        r = unit_name_from_path(where, ".mount", &where_unit);
        if (r < 0)
                return log_error_errno(r, "Failed to make unit name from path \"%s\": %m", where);

        r = generator_open_unit_file(dir, NULL, unit, &u);
        if (r < 0)
                return r;
        /* fsck may or may not be used: order before both it and the mount. */
        if (systemd_version() >= 257) {
                /* 257: its own line order, the initrd's fsck unit for /sysroot and /sysusr/usr, the
                 * image's libexec directory. */
                const char *fsck_unit = in_initrd() && path_equal(where, "/sysroot") ? "systemd-fsck-root.service" :
                                        in_initrd() && path_equal(where, "/sysusr/usr") ? "systemd-fsck-usr.service" :
                                        "systemd-fsck@%i.service";

                fprintf(unit_file_stream(u),
                        "[Unit]\n"
                        "Description=Make File System on %%f\n"
                        "Documentation=man:systemd-makefs@.service(8)\n"
                        "\n"
                        "DefaultDependencies=no\n"
                        "BindsTo=%%i.device\n"
                        "After=%%i.device\n"
                        "Before=%s %s\n"
                        "Conflicts=shutdown.target\n"
                        "Before=shutdown.target\n"
                        "\n"
                        "[Service]\n"
                        "Type=oneshot\n"
                        "RemainAfterExit=yes\n"
                        "ExecStart=%s/systemd-makefs %s %s\n"
                        "TimeoutSec=%s\n",
                        fsck_unit, where_unit, systemd_libexec_dir(), type, escaped, systemd_timeout_infinity());
        } else {
                fprintf(unit_file_stream(u),
                        "[Unit]\n"
                        "Description=Make File System on %%f\n"
                        "Documentation=man:systemd-makefs@.service(8)\n"
                        "DefaultDependencies=no\n"
                        "BindsTo=%%i.device\n"
                        "Conflicts=shutdown.target\n"
                        "After=%%i.device\n"
                        "Before=shutdown.target systemd-fsck@%%i.service %s\n"
                        "\n"
                        "[Service]\n"
                        "Type=oneshot\n"
                        "RemainAfterExit=yes\n"
                        "ExecStart=" ROOTLIBEXECDIR "/systemd-makefs %s %s\n"
                        "TimeoutSec=0\n",
                        where_unit, type, escaped);
        }
        r = generator_commit_unit_file(u, NULL);
        if (r < 0)
                return r;
        return generator_add_symlink(dir, where_unit, "requires", unit);
}

/* 257's hooks for the units its systemd ships (prefix "systemd-growfs" or "systemd-pcrfs"): for / the
 * prefix's -root.service, else an instance of its template for where, linked from <where>.mount.wants/
 * to the image's unit file, and target (may be NULL) ordered after it by a drop-in. */
static int hook_up_shipped_unit(const char *dir, const char *where, const char *target, const char *prefix) {
        _cleanup_free_ char *where_unit = NULL, *unit = NULL, *file = NULL, *order = NULL;
        int r;

        assert(dir);
        assert(where);
        assert(prefix);

        r = unit_name_from_path(where, ".mount", &where_unit);
        if (r < 0)
                return log_error_errno(r, "Failed to make unit name from path \"%s\": %m", where);
        if (path_equal(where, "/")) {
                unit = strjoin(prefix, "-root.service");
                file = unit ? strjoin(systemd_libexec_dir(), "/system/", unit) : NULL;
        } else {
                r = unit_name_from_path_instance(prefix, where, ".service", &unit);
                if (r < 0)
                        return log_error_errno(r, "Failed to make unit instance name from path \"%s\": %m", where);
                file = strjoin(systemd_libexec_dir(), "/system/", prefix, "@.service");
        }
        if (!unit || !file)
                return log_oom();

        if (target) {
                order = strjoin("order-", unit);
                if (!order)
                        return log_oom();
                r = unit_file_write_dropinf(dir, target, 50, order, "# Automatically generated by %s\n\n[Unit]\nAfter=%s",
                                            program_invocation_short_name, unit);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the ordering drop-in of %s for %s: %m", target, unit);
        }
        r = unit_file_add_symlink_as(dir, where_unit, "wants", file, unit);
        if (r < 0)
                return log_error_errno(r, "Failed to create symlink %s.wants/%s in %s: %m", where_unit, unit, dir);
        return 0;
}

int generator_hook_up_pcrfs(const char *dir, const char *where, const char *target) {
        return hook_up_shipped_unit(dir, where, target, "systemd-pcrfs");
}

int generator_hook_up_validatefs(const char *dir, const char *where, const char *target) {
        return hook_up_shipped_unit(dir, where, target, "systemd-validatefs");
}

int generator_hook_up_growfs(const char *dir, const char *where, const char *target) {
        _cleanup_free_ char *unit = NULL, *escaped = NULL, *where_unit = NULL;
        _cleanup_unit_file_ UnitFile *u = NULL;
        FILE *f;
        int r;

        assert(dir);
        assert(where);

        /* 257 links its own systemd-growfs@.service (252 has none and writes the unit). */
        if (systemd_ships_growfs_units())
                return hook_up_shipped_unit(dir, where, target, "systemd-growfs");

        escaped = cescape(where);
        if (!escaped)
                return log_oom();
        r = unit_name_from_path_instance("systemd-growfs", where, ".service", &unit);
        if (r < 0)
                return log_error_errno(r, "Failed to make unit instance name from path \"%s\": %m", where);
        r = unit_name_from_path(where, ".mount", &where_unit);
        if (r < 0)
                return log_error_errno(r, "Failed to make unit name from path \"%s\": %m", where);

        r = generator_open_unit_file(dir, NULL, unit, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);
        fprintf(f,
                "[Unit]\n"
                "Description=Grow File System on %%f\n"
                "Documentation=man:systemd-growfs@.service(8)\n"
                "DefaultDependencies=no\n"
                "BindsTo=%%i.mount\n"
                "Conflicts=shutdown.target\n"
                "After=systemd-repart.service %%i.mount\n"
                "Before=shutdown.target%s%s\n",
                target ? " " : "", strempty(target));
        if (path_equal(where, "/"))
                fprintf(f, "After=systemd-remount-fs.service\n");
        fprintf(f,
                "\n"
                "[Service]\n"
                "Type=oneshot\n"
                "RemainAfterExit=yes\n"
                "ExecStart=" ROOTLIBEXECDIR "/systemd-growfs %s\n"
                "TimeoutSec=0\n",
                escaped);
        r = generator_commit_unit_file(u, NULL);
        if (r < 0)
                return r;
        return generator_add_symlink(dir, where_unit, "wants", unit);
}

int generator_systemctl(const char *const *args) {
        const char *exe = secure_getenv("FOYER_SYSTEMCTL") ?: "systemctl";
        const char *argv[8] = { exe };
        int status, r;

        for (size_t i = 0; args[i] && i + 2 < ELEMENTSOF(argv); i++)
                argv[i + 1] = args[i];

        r = spawn_and_wait(exe, (char **) argv, &(SpawnOptions) { .search_path = true }, &status);
        if (r < 0) {
                log_error_errno(r, "Failed to execute %s: %m", exe);
                status = -1;    /* as when a forked child failed to exec: the call failed */
        }
        if (r < 0 || !wait_status_ok(status))
                return log_error_errno(SYNTHETIC_ERRNO(EPROTO), "%s %s failed.", exe, args[0]);
        return 0;
}
