/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-root-generator: sysroot.mount and friends from root=, rootfstype=, rootflags=, ro/rw, mount.usr*
 * and roothash=/usrhash=, byte-compatible with systemd 252's systemd-fstab-generator in the initrd,
 * plus dracut's rd.timeout=. Started as systemd-sysroot-fstab-check it performs the re-run check that
 * initrd-parse-etc.service asks for. */

#include <ctype.h>
#include <limits.h>

#include "cmdline.h"
#include "devspec.h"
#include "foyer-contract.h"
#include "generator.h"
#include "mount-options.h"
#include "netroot.h"
#include "parse-util.h"
#include "root-extra.h"
#include "root-fstab.h"
#include "root-form.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-name.h"

typedef enum VolatileMode {
        VOLATILE_NO,
        VOLATILE_YES,
        VOLATILE_STATE,
        VOLATILE_OVERLAY,
} VolatileMode;

static char *arg_root_what, *arg_root_fstype, *arg_root_options, *arg_root_hash;
static char *arg_usr_what, *arg_usr_fstype, *arg_usr_options, *arg_usr_hash;
static char *arg_timeout; /* rd.timeout= as a JobRunningTimeoutSec= value */
static int arg_root_rw = -1;
static bool arg_fstab_enabled = true, arg_swap_enabled = true;
static VolatileMode arg_volatile_mode = VOLATILE_NO;

/* The one place that frees the arg_* state and sets it back to its defaults: generator_main() calls it
 * after run(), root_main() after the sysroot check. */
static void reset_args(void) {
        char **all[] = { &arg_root_what, &arg_root_fstype, &arg_root_options, &arg_root_hash,
                         &arg_usr_what, &arg_usr_fstype, &arg_usr_options, &arg_usr_hash, &arg_timeout };

        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                free(*all[i]);
                *all[i] = NULL;
        }
        arg_root_rw = -1;
        arg_fstab_enabled = arg_swap_enabled = true;
        arg_volatile_mode = VOLATILE_NO;
        extra_reset();
}

/* One warning for values that would be unsafe to copy into a unit file, or that look mistyped.
 * Returns false if the value must be ignored. */
static bool check_value(const char *key, const char *value) {
        if (!unit_value_is_safe(value)) {
                log_warning("Ignoring %s=, its value contains control characters or ends in a backslash.", key);
                return false;
        }
        for (const char *p = strchr(value, '\\'); p; p = strchr(p + 1, '\\'))
                if (!(p[1] == 'x' && isxdigit((unsigned char) p[2]) && isxdigit((unsigned char) p[3]))) {
                        log_warning("%s=%s contains an invalid escape sequence, using the backslash verbatim.",
                                    key, value);
                        break;
                }
        if ((streq(key, "root") || streq(key, "mount.usr")) && devspec_has_unknown_tag(value, 0)) {
                size_t l = strcspn(value, "=");
                log_warning("%s=%s uses the unknown tag %.*s=, using it verbatim as a path.", key, value,
                            (int) l, value);
        }
        return true;
}

static int set_string(const char *key, const char *value, char **arg) {
        if (cmdline_value_missing(key, value) || !check_value(key, value))
                return 0;
        if (free_and_strdup(arg, value) < 0)
                return log_oom();
        return 0;
}

static int append_string(const char *key, const char *value, char **arg) {
        if (cmdline_value_missing(key, value) || !check_value(key, value))
                return 0;
        if (strextend_with_separator(arg, ",", value) < 0)
                return log_oom();
        return 0;
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        int r;

        r = extra_parse_cmdline_item(key, value);
        if (r != 0)
                return r < 0 ? r : 0;
        /* root=, rootfstype= and the usr counterparts: last one wins; rootflags= and mount.usrflags=
         * accumulate. */
        if (streq(key, "fstab") || streq(key, "rd.fstab")) {
                r = value ? parse_boolean(value) : 1;
                if (r < 0)
                        log_warning("Failed to parse fstab switch %s. Ignoring.", value);
                else
                        arg_fstab_enabled = r;
        } else if (streq(key, "root"))
                return set_string(key, value, &arg_root_what);
        else if (streq(key, "rootfstype"))
                return set_string(key, value, &arg_root_fstype);
        else if (streq(key, "rootflags"))
                return append_string(key, value, &arg_root_options);
        else if (streq(key, "roothash"))
                return set_string(key, value, &arg_root_hash);
        else if (streq(key, "mount.usr"))
                return set_string(key, value, &arg_usr_what);
        else if (streq(key, "mount.usrfstype"))
                return set_string(key, value, &arg_usr_fstype);
        else if (streq(key, "mount.usrflags"))
                return append_string(key, value, &arg_usr_options);
        else if (streq(key, "usrhash"))
                return set_string(key, value, &arg_usr_hash);
        else if (streq(key, "rw") && !value)
                arg_root_rw = true;
        else if (streq(key, "ro") && !value)
                arg_root_rw = false;
        else if (streq(key, "systemd.volatile")) {
                if (!value)
                        arg_volatile_mode = VOLATILE_YES;
                else if (streq(value, "state"))
                        arg_volatile_mode = VOLATILE_STATE;
                else if (streq(value, "overlay"))
                        arg_volatile_mode = VOLATILE_OVERLAY;
                else if ((r = parse_boolean(value)) >= 0)
                        arg_volatile_mode = r ? VOLATILE_YES : VOLATILE_NO;
                else
                        log_warning("Failed to parse systemd.volatile= argument: %s", value);
        } else if (streq(key, "systemd.swap")) {
                r = value ? parse_boolean(value) : 1;
                if (r < 0)
                        log_warning("Failed to parse systemd.swap switch %s. Ignoring.", value);
                else
                        arg_swap_enabled = r;
        } else if (streq(key, "rd.timeout")) {
                unsigned s;

                if (cmdline_value_missing(key, value))
                        return 0;
                if (safe_atou(value, &s) < 0) {
                        log_warning("Failed to parse rd.timeout=%s, expected seconds. Ignoring.", value);
                        return 0;
                }
                free(arg_timeout);
                if (asprintf(&arg_timeout, "%us", s) < 0) {
                        arg_timeout = NULL;
                        return log_oom();
                }
        }
        return 0;
}

/* roothash=/usrhash= without root=/mount.usr= mean the verity device set up by veritysetup. */
static int determine_device(char **what, const char *hash, const char *name) {
        if (*what || !hash)
                return 0;
        if (asprintf(what, "/dev/mapper/%s", name) < 0) {
                *what = NULL;
                return log_oom();
        }
        log_info("Using verity %s device %s.", name, *what);
        return 0;
}

/* foyer's rd.timeout=: how long the device job of what may run, unless opts sets its own timeout. */
static int add_rd_timeout(const char *dest, const char *what, const char *opts) {
        _cleanup_free_ char *unit = NULL;
        int r;

        assert(dest);
        assert(what);

        if (!arg_timeout || !is_device_path(what) || mount_options_test(opts, DEVICE_TIMEOUT_OPTIONS))
                return 0;
        r = unit_name_from_path(what, ".device", &unit);
        if (r < 0)
                return log_error_errno(r, "Failed to make unit name from path \"%s\": %m", what);
        return generator_write_timeout_dropin(dest, unit, 50, "foyer-root-timeout", NULL,
                                              "JobRunningTimeoutSec", arg_timeout);
}

/* What special_form() found. */
enum {
        FORM_NOTHING,   /* "off": nothing is mounted */
        FORM_MOUNT,     /* mount it: a device spec or path as before, or the source of a bind: */
        FORM_REFUSED,   /* refused, foyer-refused-ROLE.target written (see root_form_refuse()) */
};

/* The special forms of root= and mount.usr= (root-form.h): returns FORM_MOUNT with *ret_bind the source
 * of a bind: mount, or NULL for a device spec or path; else FORM_NOTHING, FORM_REFUSED or a negative
 * errno. Never takes the value as a device path. */
static int special_form(const char *dest, const char *role, const char *key, const char *value,
                        const char *target_unit, const char **ret_bind) {
        _cleanup_free_ char *reason = NULL;
        const char *bind = NULL;
        RootForm form;
        unsigned v = systemd_version();
        int r;

        form = root_form_from_string(value, &bind);
        *ret_bind = NULL;
        if (form == ROOT_FORM_SPEC)
                return FORM_MOUNT;
        if (v < root_form_since(form)) {
                if (asprintf(&reason, "the image's systemd %u does not know this form (systemd %u and later do)",
                             v, root_form_since(form)) < 0)
                        reason = NULL;
        }
        else if (!root_form_implemented(form))
                reason = strdup("foyer does not implement this form");
        else if (form == ROOT_FORM_BIND && (bind[0] != '/' || strlen(bind) >= PATH_MAX))
                reason = strdup("the source of a bind mount must be an absolute path");
        else if (form == ROOT_FORM_OFF) {
                log_debug("Skipping %s directory handling, as this was explicitly turned off.", key);
                return FORM_NOTHING;
        } else {
                *ret_bind = bind;
                return FORM_MOUNT;
        }
        if (!reason)
                return log_oom();
        r = root_form_refuse(dest, role, key, value, target_unit, reason);
        return r < 0 ? r : FORM_REFUSED;
}

/* The flags of the /sysroot and /sysusr/usr mounts of root= and mount.usr= (options: rootflags=;
 * 262 validates the root's file system for x-systemd.validatefs there, not /usr's for usrflags=). */
static MountFlags cmdline_mount_flags(const char *options) {
        MountFlags flags = systemd_orders_after_imports() ? MOUNT_AFTER_IMPORTS : 0;

        if (options && systemd_knows_validatefs() && mount_options_test(options, "x-systemd.validatefs\0"))
                flags |= MOUNT_VALIDATEFS;
        return flags;
}

/* The flags root=bind: asks for unless rootflags= names them or their opposite. */
static const struct {
        const char *name, *pair;
} bind_flags[] = {
        { "suid", "suid\0nosuid\0" },
        { "dev", "dev\0nodev\0" },
        { "exec", "exec\0noexec\0" },
};

static int add_sysroot_mount(const char *dest) {
        _cleanup_free_ char *what = NULL, *opts = NULL;
        const char *fstype, *bind, *extra_opts = NULL;
        bool default_rw;
        int r;

        if (!arg_root_what) {
                log_debug("Could not find a root= entry on the kernel command line.");
                return 0;
        }
        if (isempty(arg_root_what)) {
                log_warning("root= is empty, not generating a mount for /sysroot.");
                return 0;
        }
        if (streq(arg_root_what, "gpt-auto")) {
                log_debug("Skipping root directory handling, as gpt-auto was requested.");
                return 0;
        }
        r = special_form(dest, "root", "root", arg_root_what, "initrd-root-fs.target", &bind);
        if (r != FORM_MOUNT)
                return r < 0 ? r : 0;
        if (bind) {
                /* 258: the directory, read-write unless ro is given, of no type of its own. */
                what = strdup(bind);
                fstype = NULL;
                default_rw = true;
                extra_opts = "bind";
        } else if (startswith(arg_root_what, "cifs://") || startswith(arg_root_what, "live:") ||
                   netroot_kind_of_root(arg_root_what) != NETROOT_NONE) {
                /* foyer-netroot-generator's (netroot.h): the same function decides there. */
                log_debug("Skipping root directory handling, as root on a network or live image was requested.");
                return 0;
        } else if (streq(arg_root_what, "tmpfs")) {
                what = strdup("rootfs");
                fstype = arg_root_fstype ?: "tmpfs";
                default_rw = true;
        } else {
                if (devspec_to_node(arg_root_what, 0, &what) < 0)
                        return log_oom();
                fstype = arg_root_fstype;
                default_rw = false;
        }
        if (!what)
                return log_oom();

        const char *rw = arg_root_rw > 0 || (arg_root_rw < 0 && default_rw) ? "rw" : "ro";
        if (isempty(arg_root_options))
                opts = strdup(rw);
        else if (arg_root_rw >= 0 || !mount_options_test(arg_root_options, "ro\0rw\0"))
                opts = strjoin(arg_root_options, ",", rw);
        else
                opts = strdup(arg_root_options);
        if (!opts)
                return log_oom();

        if (streq_ptr(fstype, "tmpfs") && !mount_options_test(arg_root_options, "mode\0"))
                extra_opts = "mode=0755";
        if (extra_opts && strextend_with_separator(&opts, ",", extra_opts) < 0)
                return log_oom();
        /* A bind mount keeps the flags of its source (/run is nosuid,nodev,noexec): 262 asks for
         * suid, dev and exec unless rootflags= says otherwise. */
        if (bind && systemd_root_bind_clears_flags())
                for (size_t i = 0; i < ELEMENTSOF(bind_flags); i++)
                        if (!mount_options_test(opts, bind_flags[i].pair) &&
                            strextend_with_separator(&opts, ",", bind_flags[i].name) < 0)
                                return log_oom();

        log_debug("Found entry what=%s where=/sysroot type=%s opts=%s", what, strna(fstype), opts);

        if (is_device_path(what)) {
                r = generator_write_initrd_root_device_deps(dest, what);
                if (r < 0)
                        return r;
        }

        r = add_mount("/proc/cmdline", dest, what, "/sysroot", NULL, fstype, opts,
                      is_device_path(what) ? 1 : 0, /* passno */
                      cmdline_mount_flags(opts), "initrd-root-fs.target", false);
        if (r < 0)
                return r;
        return add_rd_timeout(dest, what, opts);
}

/* Returns > 0 if a /usr mount was generated or is known to come from elsewhere. */
static int add_sysroot_usr_mount(const char *dest) {
        _cleanup_free_ char *what = NULL, *opts = NULL;
        const char *rw = arg_root_rw > 0 ? "rw" : "ro", *bind;
        int r;

        if (!arg_usr_what && !arg_usr_fstype && !arg_usr_options)
                return 0;

        /* /usr differing from the root only in options (btrfs subvolumes): copy what is missing. */
        if ((arg_root_what && !arg_usr_what && free_and_strdup(&arg_usr_what, arg_root_what) < 0) ||
            (arg_root_fstype && !arg_usr_fstype && free_and_strdup(&arg_usr_fstype, arg_root_fstype) < 0) ||
            (arg_root_options && !arg_usr_options && free_and_strdup(&arg_usr_options, arg_root_options) < 0))
                return log_oom();

        if (isempty(arg_usr_what)) {
                log_debug("Could not find a mount.usr= entry on the kernel command line.");
                return 0;
        }
        if (streq(arg_usr_what, "gpt-auto")) {
                log_debug("Skipping /usr/ directory handling, as gpt-auto was requested.");
                /* 262 (unlike 252 and 257) counts this as no /usr mount: initrd-usr-fs.target
                 * requires sysroot.mount, as without mount.usr=. */
                return systemd_usr_gpt_auto_is_no_mount() ? 0 : 1;
        }
        if (path_equal(arg_usr_what, "/dev/nfs")) {
                log_debug("Skipping /usr/ directory handling, as /dev/nfs was requested.");
                return 1;
        }
        /* A refused form counts as a /usr mount: its foyer-refused-usr.target fails initrd-usr-fs.target. */
        r = special_form(dest, "usr", "mount.usr", arg_usr_what, "initrd-usr-fs.target", &bind);
        if (r != FORM_MOUNT)
                return r < 0 ? r : r == FORM_REFUSED;

        if (bind ? !(what = strdup(bind)) : devspec_to_node(arg_usr_what, 0, &what) < 0)
                return log_oom();

        if (isempty(arg_usr_options))
                opts = strdup(rw);
        else if (!mount_options_test(arg_usr_options, "ro\0rw\0"))
                opts = strjoin(arg_usr_options, ",", rw);
        else
                opts = strdup(arg_usr_options);
        if (!opts || (bind && strextend_with_separator(&opts, ",", "bind") < 0))
                return log_oom();

        log_debug("Found entry what=%s where=/sysusr/usr type=%s opts=%s", what, strna(arg_usr_fstype), opts);

        r = add_mount("/proc/cmdline", dest, what, "/sysusr/usr", NULL, arg_usr_fstype, opts,
                      is_device_path(what) ? 1 : 0, cmdline_mount_flags(NULL), "initrd-usr-fs.target", false);
        if (r < 0)
                return r;

        log_debug("Synthesizing entry what=/sysusr/usr where=/sysroot/usr opts=bind");
        r = add_mount("/proc/cmdline", dest, "/sysusr/usr", "/sysroot/usr", NULL, NULL, "bind", 0, 0,
                      "initrd-fs.target", false);
        if (r < 0)
                return r;

        r = add_rd_timeout(dest, what, opts);
        if (r < 0)
                return r;
        return 1;
}

static int add_sysroot_usr_mount_or_fallback(const char *dest) {
        int r;

        r = add_sysroot_usr_mount(dest);
        if (r != 0)
                return r;
        /* No /usr mount: initrd-usr-fs.target is reached with the root file system. */
        return generator_add_symlink(dest, "initrd-usr-fs.target", "requires", "sysroot.mount");
}

static int add_volatile_root(const char *dest) {
        _cleanup_free_ char *unit = NULL;

        if (!IN_SET(arg_volatile_mode, VOLATILE_YES, VOLATILE_OVERLAY))
                return 0;
        unit = strjoin(systemd_libexec_dir(), "/system/systemd-volatile-root.service");
        if (!unit)
                return log_oom();
        return generator_add_symlink(dest, "initrd-root-fs.target", "requires", unit);
}

static int parse_args(void) {
        int r;

        r = cmdline_parse(parse_cmdline_item, NULL, 0);
        if (r < 0)
                log_warning_errno(r, "Failed to parse kernel command line, ignoring: %m");
        if (determine_device(&arg_root_what, arg_root_hash, "root") < 0 ||
            determine_device(&arg_usr_what, arg_usr_hash, "usr") < 0)
                return -ENOMEM;
        return 0;
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        int r;

        assert(dest);

        r = parse_args();
        if (r < 0)
                return r;

        /* Every step runs; the first failure is the result. */
        RET_GATHER(r, add_sysroot_mount(dest));
        RET_GATHER(r, add_sysroot_usr_mount_or_fallback(dest));
        RET_GATHER(r, add_volatile_root(dest));
        if (arg_fstab_enabled) {
                RET_GATHER(r, parse_fstab(dest, false, arg_swap_enabled, false));
                RET_GATHER(r, parse_fstab(dest, true, arg_swap_enabled, false));
        }
        RET_GATHER(r, extra_add_mounts(dest, arg_swap_enabled));
        return r < 0 ? r : 0;
}

/* initrd-parse-etc.service: once /sysroot is mounted, reload if the host fstab has entries for the
 * initrd, and queue initrd-fs.target and swap.target again so that the new units are started. */
static int run_sysroot_check(int argc) {
        int r;

        if (argc > 1)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "This program takes no arguments.");
        if (!in_initrd())
                return log_error_errno(SYNTHETIC_ERRNO(EPERM), "This program is only useful in the initrd.");

        r = parse_args();
        if (r < 0)
                return r;
        r = parse_fstab(FOYER_GENERATOR_NORMAL_DIR, true, arg_swap_enabled, true);
        if (r < 0)
                return r;
        if (r == 0) {
                log_info("Nothing interesting found, not doing daemon-reload.");
                return 0;
        }

        r = generator_systemctl((const char *[]) { "daemon-reload", NULL });
        if (r < 0)
                return r;
        return generator_systemctl((const char *[]) { "--no-block", "start", "initrd-fs.target", "swap.target", NULL });
}

static int root_main(int argc, char *argv[]) {
        int r;

        if (!streq(program_invocation_short_name, FOYER_SYSROOT_FSTAB_CHECK))
                return generator_main(argc, argv, run, reset_args);

        log_set_target(LOG_TARGET_AUTO);
        log_parse_environment();
        log_open();
        r = run_sysroot_check(argc);
        reset_args();   /* where generator_main() calls it too */
        log_close();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

FOYER_DEFINE_MAIN(root_main);
