/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-driver-generator: dracut's rd.driver.blacklist=, rd.driver.pre= and rd.driver.post=.
 *
 * Each takes a comma-separated list of module names and may be given several times; the lists add
 * up. dracut (modules.d/98dracut-systemd/dracut-pre-udev.sh, before udev starts):
 *   rd.driver.pre=       "modprobe NAME" for each;
 *   rd.driver.blacklist= "blacklist NAME" in a modprobe.d file;
 *   rd.driver.post=      "blacklist NAME" as well, so that udev does not load it on its own, and
 *                        "modprobe NAME" from the initqueue once udev has settled.
 * dracut writes nothing else: no "install NAME /bin/false", so an explicit "modprobe NAME" (without
 * -b) still loads a blacklisted module, as it does here.
 *
 * Here:
 *   - the "blacklist" lines go to <normal dir>/foyer-driver/modprobe.conf, which the image reads
 *     through its /etc/modprobe.d/foyer-driver.conf symlink (FOYER_DRIVER_MODPROBE_LINK). A
 *     generator runs before any unit, so the blacklist is in place before systemd-udevd,
 *     systemd-modules-load and every modprobe@ instance start, with no ordering to get wrong. The
 *     file is written at every boot, so the link never dangles.
 *   - each rd.driver.pre= module gets an instance of foyer-driver-pre@.service in sysinit.target's
 *     wants (the unit runs "modprobe -- NAME" before systemd-udevd.service);
 *   - each rd.driver.post= module gets an instance of foyer-driver-post@.service in
 *     initrd-root-device.target's wants (after "udevadm settle", before that target).
 * systemd's modprobe@.service is not used: it runs "modprobe -b", which honours the blacklist, so it
 * would never load an rd.driver.post= module, which is blacklisted on purpose.
 *
 * A name that modprobe and a modprobe.d line cannot take as one word (empty, a control character,
 * whitespace, a byte outside ASCII, '/', '\\', '#', a leading '-', or longer than the kernel's 55 bytes)
 * is logged with its parameter and skipped; the rest of the list is used. */

#include "cmdline.h"
#include "foyer-contract.h"
#include "generator.h"
#include "strv.h"
#include "systemd-version.h"
#include "unit-name.h"

/* The kernel's limit on module names (MODULE_NAME_LEN, 56 with the NUL). It also keeps every
 * instance name below UNIT_NAME_MAX, even with each byte escaped as \xNN. */
#define DRIVER_NAME_MAX 55

static char **arg_blacklist = NULL, **arg_pre = NULL, **arg_post = NULL;

/* The one place that frees the arg_* state and sets it back to its defaults (run by generator_main()). */
static void reset_args(void) {
        strv_free(arg_blacklist);
        strv_free(arg_pre);
        strv_free(arg_post);
        arg_blacklist = arg_pre = arg_post = NULL;
}

/* One word for modprobe's command line and for a modprobe.d line: printable ASCII without spaces.
 * '/' and '\\' are never in module names or aliases ('\\' would also be an escape in unit files),
 * '#' starts a comment in modprobe.d, and a leading '-' would be an option to modprobe. */
static bool driver_name_is_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > DRIVER_NAME_MAX || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = s[i];

                if (c <= ' ' || c >= 0x7f || strchr("/\\#", c))
                        return false;
        }
        return true;
}

/* Adds each name of the comma-separated value to *list, once. Empty items ("a,,b", a trailing ',')
 * are skipped silently, as dracut's loop over an IFS=, split skips nothing useful. */
static int add_names(const char *key, const char *value, char ***list) {
        const char *p = value;

        for (;;) {
                const char *comma = strchr(p, ',');
                size_t n = comma ? (size_t) (comma - p) : strlen(p);
                _cleanup_free_ char *name = strndup(p, n);

                if (!name)
                        return log_oom();
                if (isempty(name))
                        ;
                else if (!driver_name_is_valid(name)) {
                        _cleanup_free_ char *shown = cescape(name);

                        log_warning("Ignoring \"%s\" in rd.%s=, not a valid kernel module name.",
                                    shown ?: "?", key);
                } else if (strv_contains(*list, name))
                        log_debug("Skipping duplicate %s in rd.%s=.", name, key);
                else if (strv_consume(list, TAKE_PTR(name)) < 0)
                        return log_oom();
                if (!comma)
                        return 0;
                p = comma + 1;
        }
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        char ***list;

        if (streq(key, "driver.blacklist"))
                list = &arg_blacklist;
        else if (streq(key, "driver.pre"))
                list = &arg_pre;
        else if (streq(key, "driver.post"))
                list = &arg_post;
        else
                return 0;

        _cleanup_free_ char *param = strjoin("rd.", key);
        if (!param)
                return log_oom();
        if (cmdline_value_missing(param, value))
                return 0;
        return add_names(key, value, list);
}

static int write_modprobe_conf(const char *dest) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        FILE *f;
        int r;

        assert(dest);

        r = generator_open_unit_file(dest, "/proc/cmdline", FOYER_DRIVER_MODPROBE_CONF, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);

        /* generator_open_unit_file() wrote the "Automatically generated" header. */
        fputs("# modprobe.d for the initrd, read through " FOYER_DRIVER_MODPROBE_LINK ".\n", f);
        if (!strv_isempty(arg_blacklist)) {
                fputs("# rd.driver.blacklist=\n", f);
                STRV_FOREACH(n, arg_blacklist)
                        fprintf(f, "blacklist %s\n", *n);
        }
        if (!strv_isempty(arg_post)) {
                fputs("# rd.driver.post=: not loaded by udev, only by " FOYER_DRIVER_POST_TEMPLATE "\n", f);
                STRV_FOREACH(n, arg_post)
                        fprintf(f, "blacklist %s\n", *n);
        }
        return generator_commit_unit_file(u, "/proc/cmdline");
}

/* Links prefix@<escaped name>.service into target's wants for each name. */
static int link_instances(const char *dest, char **names, const char *prefix, const char *param,
                          const char *target) {
        int r, ret = 0;

        assert(dest);

        STRV_FOREACH(n, names) {
                _cleanup_free_ char *escaped = NULL, *unit = NULL, *src = NULL;

                r = unit_name_escape(*n, &escaped);
                if (r < 0)
                        return log_oom();
                r = unit_name_build(prefix, escaped, ".service", &unit);
                if (r < 0)
                        return log_error_errno(r, "Failed to make a unit name for %s in %s=: %m", *n, param);
                /* PID 1 reads only the link's name; the target is the instance, as systemd's own
                 * generators link stock units. */
                src = strjoin(systemd_libexec_dir(), "/system/", unit);
                if (!src)
                        return log_oom();
                RET_GATHER(ret, generator_add_symlink(dest, target, "wants", src));
        }
        return ret;
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        int r;

        assert(dest);

        r = cmdline_parse(parse_cmdline_item, NULL, CMDLINE_STRIP_RD_PREFIX | CMDLINE_RD_STRICT);
        if (r < 0)
                log_warning_errno(r, "Failed to parse the kernel command line, ignoring: %m");

        r = write_modprobe_conf(dest);
        RET_GATHER(r, link_instances(dest, arg_pre, FOYER_DRIVER_PRE_PREFIX "@", "rd.driver.pre",
                                     "sysinit.target"));
        RET_GATHER(r, link_instances(dest, arg_post, FOYER_DRIVER_POST_PREFIX "@", "rd.driver.post",
                                     "initrd-root-device.target"));
        return r;
}

FOYER_DEFINE_MAIN_GENERATOR(run, reset_args);
