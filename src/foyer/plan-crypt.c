/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Unlocking LUKS volumes in the initrd: systemd-cryptsetup (units are written by
 * foyer-crypt-generator), the password agents, the tools for the debug shell, the crypttab and
 * key files. The dm-crypt modules and ciphers are in plan_default_modules, the stock cryptsetup
 * targets and the dm udev rules in plan-base.c's lists, so that their stock .wants links are carried. */

#include <sys/stat.h>

#include "cmdline.h"
#include "crypttab.h"
#include "foyer-contract.h"
#include "id128-util.h"
#include "log.h"
#include "luks-uuid.h"
#include "plan.h"
#include "plan-util.h"
#include "target.h"
#include "unit-name.h"
#include "util.h"

#define CRYPTTAB "/etc/crypttab"
#define KEYS_DIR FOYER_CRYPT_KEYS_DIR
#define KEY_REASON "key file"

static const Item crypt_binaries[] = {
        { "/usr/lib/systemd/systemd-cryptsetup",        NEED_OPTIONAL, "systemd-cryptsetup@.service instances" },
        { "/usr/sbin/dmsetup",                          NEED_OPTIONAL, "95-dm-notify.rules, debug shell" },
        { "/usr/sbin/cryptsetup",                       NEED_OPTIONAL, "debug shell" },
};

static const Item crypt_units[] = {
        { UNITDIR "/system-systemd\\x2dcryptsetup.slice", NEED_OPTIONAL, "slice of the cryptsetup instances" },
        { UNITDIR "/systemd-ask-password-console.path",   NEED_OPTIONAL, "passphrase prompt on the console" },
        { UNITDIR "/systemd-ask-password-console.service", NEED_OPTIONAL, "passphrase prompt on the console" },
};

/* Stock rules leave dm devices out of the database that initrd-udevadm-cleanup-db.service wipes
 * before the switch; without it the real root's udev sees an unlocked volume as not ready. */
static const char dm_persist_rule[] =
        "# Keep the udev database entries of device-mapper devices across the switch to the real root.\n"
        "SUBSYSTEM==\"block\", KERNEL==\"dm-[0-9]*\", ACTION==\"add|change\", OPTIONS+=\"db_persist\"\n";

/* The key file of a KEYFILE[:KEYDEVICE] spec if it lies inside the image: "-", "none", device
 * nodes and keys on another device do not. Returns 1 with the path, 0 if none, or -ENOMEM. */
static int keyspec_in_image(const char *spec, char **ret) {
        _cleanup_free_ char *file = NULL, *device = NULL;

        if (crypttab_split_keyspec(spec, &file, &device) < 0)
                return -ENOMEM;
        if (!file || device || file[0] != '/' || startswith(file, "/dev/"))
                return 0;
        *ret = TAKE_PTR(file);
        return 1;
}

static int add_key(char ***keys, const char *spec) {
        _cleanup_free_ char *file = NULL;
        int r = keyspec_in_image(spec, &file);

        if (r < 0)
                return log_oom();
        if (r > 0 && !strv_contains(*keys, file) && strv_consume(keys, TAKE_PTR(file)) < 0)
                return log_oom();
        return 0;
}

typedef struct CrypttabKeys {
        const char *path;
        char **keys;
} CrypttabKeys;

static int crypttab_key_entry(const CrypttabEntry *e, void *data) {
        CrypttabKeys *k = data;

        if (!e->name) {
                log_warning("--crypttab %s:%u: expected NAME DEVICE [KEYFILE [OPTIONS]], ignoring the line.",
                            k->path, e->line);
                return 0;
        }
        return add_key(&k->keys, e->keyspec);
}

/* The key files the crypttab given to --crypttab/Crypttab= names. Lines are checked only as far as
 * the builder needs: the generator reports the rest at boot. */
static int crypttab_keys(const char *path, char ***ret) {
        CrypttabKeys k = { .path = path };
        int r;

        r = crypttab_parse(path, crypttab_key_entry, &k);
        if (r < 0) {
                strv_free(k.keys);
                return r == -ENOMEM ? log_oom() : log_error_errno(r, "--crypttab %s: %m", path);
        }
        *ret = k.keys;
        return 0;
}

/* Key files named on the stored command line: rd.luks.key=[UUID=]FILE without ":DEVICE", split as
 * foyer-crypt-generator splits it (luks_uuid_split_prefix()). A UUID that is not one makes the
 * generator ignore the parameter; its file is still taken for a key (what the user meant to be a key
 * is kept as one), with a warning. */
static int cmdline_keys(const char *cmdline, char ***keys) {
        _cleanup_strv_free_ char **words = NULL;
        int r;

        if (isempty(cmdline))
                return 0;
        r = cmdline_split(cmdline, &words);
        if (r < 0)
                return log_oom();
        STRV_FOREACH(w, words) {
                const char *v = startswith(*w, "rd.luks.key=") ?: startswith(*w, "luks.key="), *rest;
                _cleanup_free_ char *uuid = NULL;

                if (!v)
                        continue;
                r = luks_uuid_split_prefix(v, &uuid, &rest);
                if (r < 0)
                        return log_oom();
                if (r > 0) {
                        if (!id128_is_valid(uuid))
                                log_warning("--cmdline: \"%s\" in luks.key= is not a UUID; foyer-crypt-generator "
                                            "ignores the parameter (its key file is kept secret all the same).", uuid);
                        v = rest;
                }
                r = add_key(keys, v);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int mark_key(Manifest *m, const char *path, const char *why);

/* A root that is an LV or another mapping above the volumes taken: its device job would keep
 * systemd's 90 s default while the passphrase prompt waits for someone to type (the generator
 * lifts it only for /dev/mapper/NAME of the volume itself), and a slow typist would end in the
 * emergency shell. Give it no timeout either, as initramfs-tools waits for the passphrase; only
 * that device's unit gets it, so a different root= on the kernel command line is not affected,
 * and rd.timeout= (JobRunningTimeoutSec=) still wins. */
static int add_root_timeout(Manifest *m, const TargetFstab *f, const TargetCrypttab *t) {
        _cleanup_free_ char *vg = NULL, *lv = NULL, *unit = NULL, *path = NULL;
        const char *mapped;
        int r;

        if (!f->root)
                return 0;
        mapped = startswith(f->root, "/dev/mapper/");
        if (mapped && strv_contains(t->names, mapped))
                return 0;       /* the volume itself: foyer-crypt-generator's drop-in */
        r = target_lv_split(f->root, &vg, &lv);
        if (r < 0)
                return log_oom();
        if (r == 0 && !mapped)
                return 0;
        r = unit_name_from_path(f->root, ".device", &unit);
        if (r < 0)
                return log_error_errno(r, "Failed to make a unit name of %s: %m", f->root);
        path = strjoin(UNITDIR "/", unit, ".d/40-foyer-target-timeout.conf");
        if (!path)
                return log_oom();
        return plan_add_text(m, path, 0644,
                             "# foyer build: the root lies above a volume that may wait for a passphrase.\n"
                             "[Unit]\nJobTimeoutSec=0\n",
                             "no job timeout for the root above the tree's crypttab volumes");
}

/* Without --crypttab: the lines of the tree's own /etc/crypttab that the initrd needs (target.c
 * chooses them), as the image's /etc/crypttab, with the key files they name, taken from the tree. */
static int plan_target_crypttab(Manifest *m) {
        _cleanup_(target_fstab_done) TargetFstab f = {};
        _cleanup_(target_crypttab_done) TargetCrypttab t = {};
        _cleanup_free_ char *names = NULL;
        int r;

        r = target_fstab_read(m->root, &f);
        if (r < 0)
                return r;
        r = target_crypttab_select(m->root, &f, &t);
        if (r < 0)
                return r;
        if (!t.text) {
                log_debug("The tree's " CRYPTTAB " names no volume the initrd needs.");
                return 0;
        }
        if (!manifest_find(m, "/usr/lib/systemd/systemd-cryptsetup"))
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "The tree's " CRYPTTAB " needs volumes in the initrd, but %s/usr/lib/systemd/systemd-cryptsetup is missing.",
                                       streq(m->root, "/") ? "" : m->root);

        r = plan_add_text(m, CRYPTTAB, 0644, t.text, "the lines of the tree's " CRYPTTAB " the initrd needs");
        if (r < 0)
                return r;
        STRV_FOREACH(k, t.key_files) {
                r = manifest_add_from_root(m, *k, "the tree's " CRYPTTAB, NULL);
                if (r == -ENOENT) {
                        log_warning("The tree's " CRYPTTAB " names the key file %s, which the tree does not have: "
                                    "that volume will ask for its passphrase.", *k);
                        continue;
                }
                if (r < 0)
                        return log_error_errno(r, "Failed to add the key file %s: %m", *k);
                r = mark_key(m, *k, "the tree's " CRYPTTAB);
                if (r < 0)
                        return r;
        }
        r = add_root_timeout(m, &f, &t);
        if (r < 0)
                return r;
        names = strv_join(t.names, ", ");
        if (!names)
                return log_oom();
        log_info("From the tree's " CRYPTTAB ": %s%s.", names,
                 t.all ? " (every line without noauto: the volumes under the root could not be told)" : "");
        return 0;
}

int plan_crypt(Manifest *m, const BuildConfig *c, const Probe *p) {
        bool wanted = c->crypttab || !strv_isempty(c->add_key_files);
        int r;

        if (p->host && !p->host->crypt && !wanted) {
                log_debug("Host-only: no dm-crypt below the root, /usr or swap, leaving out systemd-cryptsetup.");
                return 0;
        }

        r = plan_add_items(m, crypt_binaries, ELEMENTSOF(crypt_binaries));
        if (r < 0)
                return r;
        if (!manifest_find(m, "/usr/lib/systemd/systemd-cryptsetup")) {
                /* Asked for a crypttab or key: an image that cannot use them is a build error. */
                if (wanted)
                        return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                               "Required file %s/usr/lib/systemd/systemd-cryptsetup is missing (needed for --crypttab and key files).",
                                               streq(m->root, "/") ? "" : m->root);
                log_warning("%s/usr/lib/systemd/systemd-cryptsetup is missing: the image cannot unlock LUKS volumes.",
                            streq(m->root, "/") ? "" : m->root);
        }

        r = plan_add_items(m, crypt_units, ELEMENTSOF(crypt_units));
        if (r < 0)
                return r;
        r = plan_add_text(m, RULESDIR "/11-foyer-dm-persist.rules", 0644, dm_persist_rule,
                          "dm devices survive initrd-udevadm-cleanup-db");
        if (r < 0)
                return r;

        if (c->crypttab) {
                struct stat st;

                if (stat(c->crypttab, &st) < 0)
                        return log_error_errno(errno, "--crypttab %s: %m", c->crypttab);
                if (!S_ISREG(st.st_mode))
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--crypttab %s: not a regular file.",
                                               c->crypttab);
                /* The host's own /etc/crypttab is for the real root; the image holds only this one. */
                r = manifest_add_file(m, CRYPTTAB, c->crypttab, "--crypttab");
                if (r < 0)
                        return log_error_errno(r, "Failed to add %s as " CRYPTTAB ": %m", c->crypttab);
        } else if (c->target_settings)
                return plan_target_crypttab(m);
        return 0;
}

static int mark_key(Manifest *m, const char *path, const char *why) {
        char *reason;
        Entry *e;

        /* Follow symlinks inside the image to the file that holds the key. */
        e = manifest_resolve(m, path);
        if (!e) {
                log_warning("%s names the key file %s, but the image does not hold it (add it with --add-key-file).",
                            why, path);
                return 0;
        }
        if (e->type != ENTRY_FILE && e->type != ENTRY_DATA)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Key file %s (named by %s) is not a regular file.",
                                       path, why);
        if (e->secret)
                return 0;
        reason = strjoin(KEY_REASON " (", why, "; ", e->reason, ")");
        if (!reason)
                return log_oom();
        free(e->reason);
        e->reason = reason;
        manifest_mark_secret(e);
        return 0;
}

static int mark_keys_dir(Entry *e, void *userdata) {
        Manifest *m = userdata;

        if ((e->type != ENTRY_FILE && e->type != ENTRY_DATA) || !startswith(e->path, KEYS_DIR "/"))
                return 0;
        return mark_key(m, e->path, KEYS_DIR);
}

int plan_crypt_keys(Manifest *m, const BuildConfig *c) {
        _cleanup_strv_free_ char **keys = NULL, **cmdline = NULL;
        int r;

        STRV_FOREACH(f, c->add_key_files) {
                _cleanup_free_ char *src = NULL, *dest = NULL;
                struct stat st;

                r = plan_split_file_spec("--add-key-file", *f, &src, &dest);
                if (r < 0)
                        return r;
                if (stat(src, &st) < 0)
                        return log_error_errno(errno, "--add-key-file %s: %s: %m", *f, src);
                if (!S_ISREG(st.st_mode))
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--add-key-file %s: %s is not a regular file.",
                                               *f, src);
                r = manifest_add_file(m, dest, src, "--add-key-file");
                if (r == -EEXIST)
                        return log_error_errno(r, "--add-key-file %s: %s conflicts with %s already in the image.", *f,
                                               dest, manifest_find(m, dest)->reason);
                if (r < 0)
                        return log_error_errno(r, "Failed to add %s: %m", dest);
                r = mark_key(m, dest, "--add-key-file");
                if (r < 0)
                        return r;
        }

        if (c->crypttab) {
                r = crypttab_keys(c->crypttab, &keys);
                if (r < 0)
                        return r;
                STRV_FOREACH(k, keys) {
                        r = mark_key(m, *k, "--crypttab");
                        if (r < 0)
                                return r;
                }
        }

        r = cmdline_keys(c->cmdline, &cmdline);
        if (r < 0)
                return r;
        STRV_FOREACH(k, cmdline) {
                r = mark_key(m, *k, "rd.luks.key= in --cmdline");
                if (r < 0)
                        return r;
        }

        /* systemd-cryptsetup looks for NAME.key there by itself. */
        return manifest_foreach_sorted(m, mark_keys_dir, m);
}

int plan_key_files(Manifest *m, char ***ret) {
        return manifest_secrets(m, ret);
}
