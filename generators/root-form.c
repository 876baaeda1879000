/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The values of root= and mount.usr= that are no device (systemd 253's "fstab", 258's "off", "bind:",
 * "gpt-auto-force", "dissect" and "dissect-force"): an older systemd's fstab generator takes each as a
 * device path (What=off) and the boot waits on a mount that cannot work, so foyer never does. */

#include <stdio.h>

#include "generator.h"
#include "log.h"
#include "macro.h"
#include "root-form.h"
#include "strv.h"
#include "unit-file.h"
#include "unit-name.h"

static const struct {
        const char *name;
        unsigned since;
        int implemented;
} forms[_ROOT_FORM_MAX] = {
        [ROOT_FORM_SPEC] = { NULL, 0, true },
        [ROOT_FORM_OFF] = { "off", 258, true },
        [ROOT_FORM_BIND] = { "bind:", 258, true },
        /* foyer does not yet give an initrd fstab line for /sysroot 253's targets. */
        [ROOT_FORM_FSTAB] = { "fstab", 253, false },
        /* These are systemd-gpt-auto-generator's (258): factory reset mode and the by-designator
         * links of a dissected image, neither of which foyer's discovery has. */
        [ROOT_FORM_GPT_AUTO_FORCE] = { "gpt-auto-force", 258, false },
        [ROOT_FORM_DISSECT] = { "dissect", 258, false },
        [ROOT_FORM_DISSECT_FORCE] = { "dissect-force", 258, false },
};

RootForm root_form_from_string(const char *value, const char **ret_bind_path) {
        const char *bind;

        assert(value);

        bind = startswith(value, "bind:");
        if (bind) {
                if (ret_bind_path)
                        *ret_bind_path = bind;
                return ROOT_FORM_BIND;
        }
        for (RootForm f = ROOT_FORM_OFF; f < _ROOT_FORM_MAX; f++)
                if (f != ROOT_FORM_BIND && streq(value, forms[f].name))
                        return f;
        return ROOT_FORM_SPEC;
}

unsigned root_form_since(RootForm form) {
        assert(form >= 0 && form < _ROOT_FORM_MAX);
        return forms[form].since;
}

int root_form_implemented(RootForm form) {
        assert(form >= 0 && form < _ROOT_FORM_MAX);
        return forms[form].implemented;
}

int root_form_refuse(const char *dest, const char *role, const char *key, const char *value,
                     const char *target_unit, const char *reason) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        _cleanup_free_ char *name = NULL, *text = NULL, *description = NULL;
        int r;

        assert(dest);
        assert(role);
        assert(key);
        assert(value);
        assert(target_unit);
        assert(reason);

        log_error("%s=%s: %s; mounting nothing for it, the boot stops with %s.", key, value, reason, target_unit);

        name = strjoin("foyer-refused-", role, ".target");
        if (asprintf(&text, "%s=%s (%s)", key, value, reason) < 0)
                text = NULL;
        /* The value came from the command line: no specifier in the unit (control characters were
         * refused when it was parsed). */
        description = text ? specifier_escape(text) : NULL;
        if (!name || !description)
                return log_oom();

        r = generator_open_unit_file(dest, "/proc/cmdline", name, &u);
        if (r < 0)
                return r;
        fprintf(unit_file_stream(u),
                "[Unit]\n"
                "Description=%s\n"
                "Documentation=man:systemd-fstab-generator(8)\n"
                "DefaultDependencies=no\n"
                "Before=%s\n"
                /* Never true: the start job fails ("[ASSERT] Assertion failed for" the description
                 * above, on the console), and with it target_unit. */
                "AssertPathExists=!/\n",
                description, target_unit);
        r = generator_commit_unit_file(u, "/proc/cmdline");
        if (r < 0)
                return r;
        return generator_add_symlink(dest, target_unit, "requires", name);
}
