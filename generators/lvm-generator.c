/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-lvm-generator: dracut's rd.lvm=, rd.lvm.vg= and rd.lvm.lv= for lvm2's own event-based
 * activation.
 *
 * The image runs lvm2's udev rules unchanged: 69-lvm.rules calls "pvscan --cache --checkcomplete" for
 * each PV that appears and, once a VG is complete, "vgchange -aay --autoactivation event VG". Both
 * read /etc/lvm/lvm.conf and then /etc/lvm/lvmlocal.conf, which in a foyer image is a symlink to
 * <normal dir>/foyer-lvm/lvmlocal.conf. This generator writes that file, so the parameters reach
 * every lvm command without touching the rules or their environment:
 *   rd.lvm=0          global/event_activation = 0 (pvscan reports nothing, nothing is activated)
 *   rd.lvm.vg/lv=     activation/auto_activation_volume_list = [ the VGs and VG/LVs named ]
 * Without parameters it writes nothing (the symlink dangles, lvm ignores it) and every complete VG
 * is autoactivated. Each rd.lvm.lv= is also waited for, as dracut does, by a Wants=/After= drop-in
 * for initrd-root-device.target. */

#include <ctype.h>

#include "cmdline.h"
#include "foyer-contract.h"
#include "generator.h"
#include "parse-util.h"
#include "strv.h"
#include "unit-name.h"

static bool arg_enabled = true;
static char **arg_vgs = NULL, **arg_lvs = NULL;

/* The one place that frees the arg_* state and sets it back to its defaults (run by generator_main()). */
static void reset_args(void) {
        strv_free(arg_vgs);
        strv_free(arg_lvs);
        arg_vgs = arg_lvs = NULL;
        arg_enabled = true;
}

/* lvm(8) "VALID NAMES": [A-Za-z0-9+_.-], not starting with '-', not "." or "..". Checking this
 * also makes the names safe to quote in lvm.conf syntax and in unit files. */
static bool lvm_name_is_valid(const char *s, size_t n) {
        if (n == 0 || n > 127 || s[0] == '-')
                return false;
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char) s[i]) && !strchr("+_.-", s[i]))
                        return false;
        return true;
}

static int add_name(const char *key, const char *value, char ***list) {
        if (strv_contains(*list, value)) {
                log_debug("Skipping duplicate %s=%s.", key, value);
                return 0;
        }
        if (strv_extend(list, value) < 0)
                return log_oom();
        return 0;
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        int r;

        if (streq(key, "lvm")) {
                r = value ? parse_boolean(value) : 1;
                if (r < 0)
                        log_warning("Failed to parse rd.lvm=%s, ignoring.", value);
                else
                        arg_enabled = r;
        } else if (streq(key, "lvm.vg")) {
                if (cmdline_value_missing("rd.lvm.vg", value))
                        return 0;
                if (!lvm_name_is_valid(value, strlen(value))) {
                        log_warning("Ignoring rd.lvm.vg=%s, not a valid volume group name.", value);
                        return 0;
                }
                return add_name("rd.lvm.vg", value, &arg_vgs);
        } else if (streq(key, "lvm.lv")) {
                const char *slash;

                if (cmdline_value_missing("rd.lvm.lv", value))
                        return 0;
                slash = strchr(value, '/');
                if (!slash || !lvm_name_is_valid(value, slash - value) ||
                    !lvm_name_is_valid(slash + 1, strlen(slash + 1))) {
                        log_warning("Ignoring rd.lvm.lv=%s, expected VG/LV with valid names.", value);
                        return 0;
                }
                return add_name("rd.lvm.lv", value, &arg_lvs);
        }
        return 0;
}

static int write_lvmlocal(const char *dest) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        FILE *f;
        int r;

        assert(dest);

        r = generator_open_unit_file(dest, "/proc/cmdline", FOYER_LVMLOCAL_CONF, &u);
        if (r < 0)
                return r;
        f = unit_file_stream(u);

        fputs("# lvm2 configuration for the initrd, read after /etc/lvm/lvm.conf.\n", f);
        if (!arg_enabled) {
                fputs("# rd.lvm=0: no event-based activation.\n"
                      "global {\n"
                      "\tevent_activation = 0\n"
                      "}\n"
                      "activation {\n"
                      "\tauto_activation_volume_list = [ ]\n"
                      "}\n", f);
        } else {
                bool first = true;

                fputs("# rd.lvm.vg= and rd.lvm.lv=: autoactivate only these.\n"
                      "activation {\n"
                      "\tauto_activation_volume_list = [", f);
                for (char **v = arg_vgs; v && *v; v++) {
                        fprintf(f, "%s \"%s\"", first ? "" : ",", *v);
                        first = false;
                }
                for (char **v = arg_lvs; v && *v; v++) {
                        fprintf(f, "%s \"%s\"", first ? "" : ",", *v);
                        first = false;
                }
                fputs(" ]\n}\n", f);
        }
        return generator_commit_unit_file(u, "/proc/cmdline");
}

/* dracut waits for every rd.lvm.lv= before the root is mounted; the same as a drop-in. */
static int write_lv_waits(const char *dest) {
        _cleanup_free_ char *body = strdup("# Automatically generated by foyer-lvm-generator\n\n[Unit]\n");
        int r;

        assert(dest);

        if (!body)
                return log_oom();
        for (char **lv = arg_lvs; lv && *lv; lv++) {
                _cleanup_free_ char *path = strjoin("/dev/", *lv), *unit = NULL, *t = NULL;

                if (!path)
                        return log_oom();
                r = unit_name_from_path(path, ".device", &unit);
                if (r < 0)
                        return log_error_errno(r, "Failed to make a unit name for %s: %m", path);
                t = strjoin(body, "Wants=", unit, "\nAfter=", unit, "\n");
                if (!t)
                        return log_oom();
                free(body);
                body = TAKE_PTR(t);
        }
        r = unit_file_write_dropin(dest, "initrd-root-device.target", 50, "lvm-lv", body);
        if (r < 0)
                return log_error_errno(r, "Failed to write drop-in for initrd-root-device.target: %m");
        return 0;
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        int r;

        assert(dest);

        r = cmdline_parse(parse_cmdline_item, NULL, CMDLINE_STRIP_RD_PREFIX | CMDLINE_RD_STRICT);
        if (r < 0)
                log_warning_errno(r, "Failed to parse the kernel command line, ignoring: %m");

        if (arg_enabled && strv_isempty(arg_vgs) && strv_isempty(arg_lvs)) {
                log_debug("No rd.lvm parameters, lvm2 autoactivates every complete volume group.");
                return 0;
        }

        r = write_lvmlocal(dest);
        if (r < 0)
                return r;
        if (arg_enabled && !strv_isempty(arg_lvs))
                return write_lv_waits(dest);
        return 0;
}

FOYER_DEFINE_MAIN_GENERATOR(run, reset_args);
