/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The console keymap for the passphrase prompt. The image holds its default layout (Keymap=, else
 * the tree's own: keymap_target_read()) and the AddKeymaps= ones, each compiled by ckbcomp into
 * FOYER_KEYMAP_DIR/NAME.map, the default named by FOYER_VCONSOLE_CONF, and the tree's loadkeys.
 * foyer-vconsole-generator loads the one vconsole.keymap= (or rd.vconsole.keymap=) names, if the image
 * holds it, else the default, before any passphrase prompt. Neither Debian 12's systemd 252 nor
 * Debian 13's 257 ships systemd-vconsole-setup (Debian leaves vconsole to console-setup), so the
 * image cannot rely on it. A layout that cannot be compiled is left out with a warning naming it and
 * where it came from: the image still boots, with a keymap fewer. The plain US layout alone is left
 * out too: it is the kernel's built-in keymap, and loading it would only cost boot time. */

#include <assert.h>
#include <unistd.h>

#include "foyer-contract.h"
#include "keymap.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "util.h"

/* Compiles s into the image. Returns 1 if it is in, 0 if it was left out (warned), < 0 on error. */
static int add_keymap(Manifest *m, const KeymapSpec *s) {
        _cleanup_free_ char *text = NULL, *reason = NULL, *path = NULL, *why = NULL;
        int r;

        path = strjoin(FOYER_KEYMAP_DIR "/", s->name, FOYER_KEYMAP_SUFFIX);
        if (!path)
                return log_oom();
        if (manifest_find(m, path)) {
                log_debug("Keymap %s is in the image already.", s->name);
                return 1;
        }
        r = keymap_compile(s, &text, &reason);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0) {
                if (!reason)
                        return r;       /* logged */
                log_warning("Keymap %s (XKB layout %s%s%s, from %s) cannot be compiled: %s. The image goes without it.",
                            s->name, s->layout, s->variant ? " variant " : "", strempty(s->variant), s->source,
                            reason);
                return 0;
        }
        why = strjoin("console keymap ", s->name, " (from ", s->source, "), compiled by ckbcomp");
        if (!why)
                return log_oom();
        r = plan_add_text(m, path, 0644, text, why);
        if (r < 0)
                return r;
        log_debug("Keymap %s (from %s) is in the image.", s->name, s->source);
        return 1;
}

/* The image's default layout: Keymap=, else the tree's. Returns 1 with it, 0 for none. */
static int default_keymap(Manifest *m, const BuildConfig *c, KeymapSpec *ret) {
        int r;

        if (c->keymap) {
                r = keymap_spec_from_name(m->root, c->keymap, "Keymap= (--keymap)", ret);
                return r == -EINVAL ? 0 : r < 0 ? r : 1;        /* an invalid name is warned about */
        }
        if (!c->target_settings) {
                log_debug("Skipping the tree's console layout, as --no-target-settings was requested.");
                return 0;
        }
        return keymap_target_read(m->root, ret);
}

/* Whether s is the plain US layout, which is the kernel's own keymap: loading it at boot would
 * change nothing but cost a process (loadkeys) before the first passphrase prompt. */
static bool keymap_is_kernels(const KeymapSpec *s) {
        return streq_ptr(s->layout, "us") && isempty(s->variant) && isempty(s->options);
}

int plan_keymap(Manifest *m, const BuildConfig *c) {
        _cleanup_(keymap_spec_done) KeymapSpec def = {};
        _cleanup_free_ char *loadkeys = NULL, *conf = NULL;
        bool any = false;
        int r, have_default;

        assert(m);
        assert(c);

        have_default = default_keymap(m, c, &def);
        if (have_default < 0)
                return have_default;
        if (have_default == 0 && strv_isempty(c->add_keymaps)) {
                log_debug("No console layout: the image keeps the kernel's keymap.");
                return 0;
        }
        if (have_default > 0 && strv_isempty(c->add_keymaps) && keymap_is_kernels(&def)) {
                log_debug("The console layout %s (from %s) is the kernel's own: the image holds no keymap.",
                          def.name, def.source);
                return 0;
        }

        r = path_in_root(m->root, FOYER_LOADKEYS, false, &loadkeys);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0 || access(loadkeys, X_OK) < 0) {
                log_warning("%s%s is not there (package kbd): the image holds no keymap%s%s and keeps the kernel's.",
                            streq(m->root, "/") ? "" : m->root, FOYER_LOADKEYS,
                            have_default > 0 ? ", not even " : "", have_default > 0 ? def.name : "");
                return 0;
        }

        if (have_default > 0) {
                r = add_keymap(m, &def);
                if (r < 0)
                        return r;
                if (r > 0) {
                        conf = strjoin("KEYMAP=", def.name, "\n");
                        if (!conf)
                                return log_oom();
                        r = plan_add_text(m, FOYER_VCONSOLE_CONF, 0644, conf,
                                          "the console layout, read by foyer-vconsole-generator");
                        if (r < 0)
                                return r;
                        any = true;
                }
        }
        STRV_FOREACH(name, c->add_keymaps) {
                _cleanup_(keymap_spec_done) KeymapSpec s = {};

                r = keymap_spec_from_name(m->root, *name, "AddKeymaps= (--add-keymap)", &s);
                if (r == -EINVAL)
                        continue;       /* warned */
                if (r < 0)
                        return r;
                r = add_keymap(m, &s);
                if (r < 0)
                        return r;
                any = any || r > 0;
        }
        if (!any)
                return 0;
        return plan_add_item(m, FOYER_LOADKEYS, NEED_REQUIRED, "loads the console keymap (" FOYER_KEYMAP_SERVICE ")");
}
