/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* dm-verity roots and /usr (roothash=, usrhash=, systemd.verity*=, the tree's /etc/veritytab) with
 * the tree's own systemd pieces, as for resume: systemd-veritysetup-generator parses the command line
 * and the veritytab at boot and writes systemd-veritysetup@NAME.service, required by
 * veritysetup.target (a stock unit of plan-base.c, wanted by sysinit.target), which runs
 * systemd-veritysetup. That unit is written at boot, so plan_unit_programs() never sees it: the
 * program is added here. foyer's own generators only stay out of the way: the root generator mounts
 * /dev/mapper/root (or usr) for roothash= (usrhash=) without root= (mount.usr=), and gpt-auto
 * discovery is off with roothash=. The dm-verity module (with dm-bufio, dm-mod and reed_solomon,
 * its dependencies, which libkmod resolves) and sha256, the hash veritysetup formats with by default,
 * are in every image that has veritysetup (plan_verity_modules). A host-only image has it when the
 * host's root or /usr is a verity volume, or --cmdline names one.
 *
 * A tree without the generator or the program (a systemd built without libcryptsetup) gives an
 * image without verity and a warning naming what is missing, unless the build's --cmdline or a
 * host-only image of a verity root or /usr asks for verity: then the build fails naming it. Trees
 * are merged-/usr, as everywhere in the planners. */

#include <assert.h>
#include <unistd.h>

#include "cmdline.h"
#include "log.h"
#include "parse-util.h"
#include "plan.h"
#include "plan-util.h"
#include "strv.h"
#include "util.h"

#define VERITY_GENERATOR "/usr/lib/systemd/system-generators/systemd-veritysetup-generator"
#define VERITY_PROGRAM "/usr/lib/systemd/systemd-veritysetup"
#define VERITYTAB "/etc/veritytab"

/* The keys systemd-veritysetup-generator reads that name a verity volume; "-" and "_" are the same in
 * them and an "rd." prefix is stripped in the initrd, as the generator does. */
static const char *const verity_keys[] = {
        "roothash", "usrhash",
        "systemd.verity_root_data", "systemd.verity_root_hash", "systemd.verity_root_options",
        "systemd.verity_usr_data", "systemd.verity_usr_hash", "systemd.verity_usr_options",
};

/* What in the build's --cmdline asks for verity: the first word naming a volume, unless the last
 * systemd.verity= turns the generator off. Returns 1 with *ret the word, 0 if nothing asks. */
static int cmdline_asks(const char *cmdline, char **ret) {
        _cleanup_strv_free_ char **words = NULL;
        const char *asks = NULL;
        bool enabled = true;
        int r;

        assert(ret);

        if (isempty(cmdline))
                return 0;
        r = cmdline_split(cmdline, &words);
        if (r < 0)
                return log_oom();
        STRV_FOREACH(w, words) {
                _cleanup_free_ char *key = strndup(*w, strcspn(*w, "="));
                const char *k, *value = strchr(*w, '=');

                if (!key)
                        return log_oom();
                k = startswith(key, "rd.") ?: key;
                if (cmdline_key_streq(k, "systemd.verity")) {
                        r = value ? parse_boolean(value + 1) : 1;
                        if (r >= 0)
                                enabled = r;
                        continue;
                }
                for (size_t i = 0; !asks && value && i < ELEMENTSOF(verity_keys); i++)
                        if (cmdline_key_streq(k, verity_keys[i]))
                                asks = *w;
        }
        if (!asks || !enabled)
                return 0;
        *ret = strjoin("--cmdline's ", asks);
        return *ret ? 1 : log_oom();
}

/* Copies the tree's /etc/veritytab, read inside the tree like every other file of it. */
static int plan_veritytab(Manifest *m) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int r;

        r = read_tree_file(m->root, VERITYTAB, &text, &size);
        if (r < 0)
                return r;
        if (!text) {
                log_debug("The tree has no %s.", VERITYTAB);
                return 0;
        }
        r = manifest_add_data(m, VERITYTAB, 0644, text, size, "the tree's veritytab (systemd-veritysetup-generator)");
        if (r < 0)
                return log_error_errno(r, "Failed to add %s: %m", VERITYTAB);
        return 0;
}

int plan_verity(Manifest *m, const BuildConfig *c, const Probe *p) {
        static const char *const needed[] = { VERITY_GENERATOR, VERITY_PROGRAM };
        _cleanup_free_ char *asks = NULL;
        int r;

        assert(m);
        assert(c);
        assert(p);

        r = cmdline_asks(c->cmdline, &asks);
        if (r < 0)
                return r;
        if (r == 0 && p->host) {
                if (!p->host->verity) {
                        log_debug("Host-only: no dm-verity below the root or /usr, leaving out veritysetup.");
                        return 0;
                }
                asks = strdup("the host's verity root or /usr");
                if (!asks)
                        return log_oom();
        }

        for (size_t i = 0; i < ELEMENTSOF(needed); i++) {
                _cleanup_free_ char *in_tree = NULL;

                r = path_in_root(m->root, needed[i], false, &in_tree);
                if (r == -ENOMEM)
                        return log_oom();
                if (r >= 0 && access(in_tree, X_OK) >= 0)
                        continue;
                if (asks)
                        return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                               "%s%s is not there, but %s asks for dm-verity.",
                                               streq(m->root, "/") ? "" : m->root, needed[i], asks);
                log_warning("%s%s is not there: the image will not set up dm-verity volumes (roothash=, usrhash=).",
                            streq(m->root, "/") ? "" : m->root, needed[i]);
                return 0;
        }

        r = plan_add_item(m, VERITY_GENERATOR, NEED_REQUIRED, "roothash=, usrhash=, veritytab");
        if (r >= 0)
                r = plan_add_item(m, VERITY_PROGRAM, NEED_REQUIRED,
                                  "systemd-veritysetup@.service, written by systemd-veritysetup-generator");
        /* The dm rules (plan-base.c) run it; in an image without LUKS or LVM nothing else adds it.
         * Optional as in plan-crypt.c: a tree without it fails the closure check naming the rule. */
        if (r >= 0)
                r = plan_add_item(m, "/usr/sbin/dmsetup", NEED_OPTIONAL, "55-dm.rules and 95-dm-notify.rules");
        if (r < 0)
                return r;
        return plan_veritytab(m);
}

int plan_verity_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted) {
        assert(m);
        assert(c);
        assert(p);
        assert(wanted);

        /* In every image that has veritysetup: a generic one, or a host-only one of a verity root or
         * /usr or whose --cmdline names a volume. crypto-sha256 is every module that provides it
         * (the generic one is built into Debian's kernels, the SSSE3/AVX one is a module). */
        if (!manifest_find(m, VERITY_PROGRAM)) {
                log_debug("Skipping dm-verity's modules, as the image cannot set up verity.");
                return 0;
        }
        if (strv_extend(wanted, "dm_verity") < 0 || strv_extend(wanted, "crypto-sha256") < 0)
                return log_oom();
        return 0;
}
