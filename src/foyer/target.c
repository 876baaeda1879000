/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The target system's own settings: what its /etc says about the devices the initrd must bring
 * up. The image's planners decide what to do with them (plan-crypt.c, plan-base.c). */

#include <assert.h>
#include <ctype.h>
#include <libmount.h>
#include <stdio.h>
#include <stdlib.h>

#include "crypttab.h"
#include "devspec.h"
#include "initramfs-tools.h"
#include "log.h"
#include "target.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_table *, mnt_unref_table);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_iter *, mnt_free_iter);

#define FSTAB "/etc/fstab"
#define CRYPTTAB "/etc/crypttab"
#define LVM_BACKUP_DIR "/etc/lvm/backup"
/* How deep device stacks are followed by name (an LV on a crypt volume on an LV on ...). */
#define STACK_MAX 8

void target_fstab_done(TargetFstab *f) {
        free(f->root);
        free(f->root_fstype);
        free(f->usr);
        strv_free(f->swaps);
        free(f->resume);
        *f = (TargetFstab) {};
}

void target_crypttab_done(TargetCrypttab *t) {
        free(t->text);
        strv_free(t->names);
        strv_free(t->key_files);
        *t = (TargetCrypttab) {};
}

/* A swap device that can take a hibernation image by itself: a device, not a swap file (which
 * would need resume_offset=). */
static bool is_swap_device(const char *source) {
        return startswith(source, "/dev/") || startswith(source, "UUID=") || startswith(source, "LABEL=") ||
               startswith(source, "PARTUUID=") || startswith(source, "PARTLABEL=");
}

/* RESUME= as initramfs-tools reads it: initramfs.conf, then its conf.d (initramfs-tools.h). Returns
 * 1 with the value (maybe ""), 0 if no file sets it. */
static int read_resume_conf(const char *root, char **ret) {
        _cleanup_(initramfs_tools_conf_done) InitramfsToolsConf conf = {};
        int r;

        r = initramfs_tools_conf_read(root, &conf);
        if (r < 0 || !conf.resume)
                return r;
        *ret = TAKE_PTR(conf.resume);
        return 1;
}

/* As the initrd's fstab generator does: a line libmount cannot parse is reported and skipped. */
static int fstab_parse_error(struct libmnt_table *table, const char *filename, int line) {
        log_warning("%s:%i: cannot parse the line, ignoring it.", filename, line);
        return 1;
}

int target_fstab_read(const char *root, TargetFstab *ret) {
        _cleanup_(target_fstab_done) TargetFstab f = {};
        _cleanup_(mnt_unref_tablep) struct libmnt_table *table = NULL;
        _cleanup_(mnt_free_iterp) struct libmnt_iter *iter = NULL;
        _cleanup_free_ char *path = NULL, *resume = NULL, *text = NULL;
        struct libmnt_fs *fs;
        size_t size = 0;
        int r;

        assert(root);
        assert(ret);

        r = read_tree_file(root, FSTAB, &text, &size);
        if (r < 0)
                return r;
        path = path_prefix_root(root, FSTAB);
        if (!path)
                return log_oom();
        if (text) {
                _cleanup_fclose_ FILE *stream = NULL;

                table = mnt_new_table();
                iter = mnt_new_iter(MNT_ITER_FORWARD);
                stream = fmemopen(text, size, "r");
                if (!table || !iter || !stream)
                        return log_oom();
                mnt_table_set_parser_errcb(table, fstab_parse_error);
                /* libmount parses the bytes read inside the tree, not the path (which it would open
                 * on the host). */
                r = mnt_table_parse_stream(table, stream, path);
                if (r < 0)
                        return log_error_errno(r, "Failed to parse %s: %m", path);

                while (mnt_table_next_fs(table, iter, &fs) == 0) {
                        const char *source = mnt_fs_get_source(fs), *target = mnt_fs_get_target(fs),
                                   *fstype = mnt_fs_get_fstype(fs);

                        if (isempty(source))
                                continue;
                        /* The last line for a mount point wins, as it is mounted last. */
                        if (streq_ptr(fstype, "swap")) {
                                if (strv_extend(&f.swaps, source) < 0)
                                        return log_oom();
                        } else if (target && path_equal(target, "/")) {
                                if (free_and_strdup(&f.root, source) < 0 ||
                                    free_and_strdup(&f.root_fstype, fstype) < 0)
                                        return log_oom();
                        } else if (target && path_equal(target, "/usr")) {
                                if (free_and_strdup(&f.usr, source) < 0)
                                        return log_oom();
                        }
                }
        }

        r = read_resume_conf(root, &resume);
        if (r < 0)
                return r;
        if (r > 0 && streq(resume, "none"))
                log_debug("initramfs-tools' configuration says RESUME=none: no resume device.");
        else if (r > 0 && !isempty(resume) && !streq(resume, "auto"))
                f.resume = TAKE_PTR(resume);
        else
                /* initramfs-tools' "auto" takes the largest swap; without the devices the first
                 * swap partition of fstab is the best guess. */
                STRV_FOREACH(s, f.swaps)
                        if (is_swap_device(*s)) {
                                f.resume = strdup(*s);
                                if (!f.resume)
                                        return log_oom();
                                break;
                        }

        *ret = f;
        f = (TargetFstab) {};
        return 0;
}

/* Appends the name part from p to end (exclusive) with "--" made "-". */
static char *lv_unescape(const char *p, const char *end) {
        char *s = malloc(end - p + 1), *o = s;

        if (!s)
                return NULL;
        while (p < end) {
                *o++ = *p;
                p += (p[0] == '-' && p + 1 < end && p[1] == '-') ? 2 : 1;
        }
        *o = 0;
        return s;
}

int target_lv_split(const char *path, char **ret_vg, char **ret_lv) {
        /* /dev directories that are not volume groups. */
        static const char *const not_vg[] = {
                "block", "bsg", "bus", "char", "cpu", "disk", "dma_heap", "dri", "fd", "hugepages", "input",
                "mapper", "md", "mqueue", "net", "pts", "shm", "snd", "vfio", "zvol",
        };
        _cleanup_free_ char *vg = NULL, *lv = NULL;
        const char *name, *p, *slash;

        assert(path);
        assert(ret_vg);
        assert(ret_lv);

        name = startswith(path, "/dev/mapper/");
        if (name) {
                /* The first dash that is not doubled separates VG and LV. */
                for (p = name; *p; p++) {
                        if (*p != '-')
                                continue;
                        if (p[1] == '-') {
                                p++;
                                continue;
                        }
                        break;
                }
                if (!*p || p == name || !p[1] || strchr(name, '/'))
                        return 0;
                vg = lv_unescape(name, p);
                lv = lv_unescape(p + 1, p + 1 + strlen(p + 1));
        } else {
                name = startswith(path, "/dev/");
                if (!name)
                        return 0;
                slash = strchr(name, '/');
                if (!slash || slash == name || !slash[1] || strchr(slash + 1, '/'))
                        return 0;
                for (size_t i = 0; i < ELEMENTSOF(not_vg); i++)
                        if (strlen(not_vg[i]) == (size_t) (slash - name) && startswith(name, not_vg[i]))
                                return 0;
                vg = strndup(name, slash - name);
                lv = strdup(slash + 1);
        }
        if (!vg || !lv)
                return -ENOMEM;
        *ret_vg = TAKE_PTR(vg);
        *ret_lv = TAKE_PTR(lv);
        return 1;
}

/* The PV devices of VG as its metadata backup in the tree names them ("device = "..." # Hint
 * only"): lvm2 writes it on every change of the VG. Returns 1 with a list, 0 if none is known. */
static int vg_devices(const char *root, const char *vg, char ***ret) {
        _cleanup_free_ char *rel = NULL, *path = NULL, *text = NULL;
        _cleanup_strv_free_ char **devices = NULL;
        int r;

        if (strchr(vg, '/') || streq(vg, "..") || streq(vg, "."))
                return 0;
        rel = strjoin(LVM_BACKUP_DIR "/", vg);
        if (!rel)
                return log_oom();
        r = read_tree_file(root, rel, &text, NULL);
        if (r < 0 || !text)
                return r;
        path = path_prefix_root(root, rel);
        if (!path)
                return log_oom();

        for (const char *p = text; (p = strstr(p, "device = \"")); ) {
                const char *v = p + strlen("device = \""), *e = strchr(v, '"');
                _cleanup_free_ char *d = NULL;

                if (!e)
                        break;
                d = strndup(v, e - v);
                if (!d)
                        return log_oom();
                if (!strv_contains(devices, d) && strv_consume(&devices, TAKE_PTR(d)) < 0)
                        return log_oom();
                p = e;
        }
        if (!devices)
                return 0;
        *ret = TAKE_PTR(devices);
        return 1;
}

typedef struct Line {
        char *name, *device, *keyspec, *options;
        unsigned line;
} Line;

typedef struct Crypttab {
        const char *path;       /* in the tree, for messages */
        Line *lines;
        size_t n;
        int error;              /* the first bad line's error */
} Crypttab;

static void crypttab_free(Crypttab *c) {
        for (size_t i = 0; i < c->n; i++) {
                free(c->lines[i].name);
                free(c->lines[i].device);
                free(c->lines[i].keyspec);
                free(c->lines[i].options);
        }
        free(c->lines);
}

static int collect_line(const CrypttabEntry *e, void *data) {
        Crypttab *c = data;
        Line *l, *lines;

        if (!e->name) {
                log_warning("%s:%u: expected NAME DEVICE [KEYFILE [OPTIONS]], ignoring the line.", c->path, e->line);
                return 0;
        }
        lines = reallocarray(c->lines, c->n + 1, sizeof(Line));
        if (!lines)
                return -ENOMEM;
        c->lines = lines;
        l = &c->lines[c->n++];
        *l = (Line) {
                .name = strdup(e->name),
                .device = strdup(e->device),
                .keyspec = e->keyspec ? strdup(e->keyspec) : NULL,
                .options = e->options ? strdup(e->options) : NULL,
                .line = e->line,
        };
        if (!l->name || !l->device || (e->keyspec && !l->keyspec) || (e->options && !l->options))
                return -ENOMEM;
        return 0;
}

static const Line *crypttab_find(const Crypttab *c, const char *name) {
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->lines[i].name, name))
                        return &c->lines[i];
        return NULL;
}

static bool line_has_option(const Line *l, const char *option) {
        _cleanup_strv_free_ char **opts = NULL;

        if (!l->options || strv_split(l->options, ",", &opts) < 0)
                return false;
        return strv_contains(opts, option);
}

/* Adds the crypttab names of the volumes under device to *names. Returns 1 if that could be told
 * from the names alone (maybe with nothing to add: a partition is no volume), 0 if not (a UUID= or
 * a device whose stack is unknown), or a negative errno (logged). */
static int device_volumes(const char *root, const Crypttab *c, const char *device, unsigned depth, char ***names) {
        _cleanup_strv_free_ char **pvs = NULL;
        _cleanup_free_ char *vg = NULL, *lv = NULL;
        const char *mapped;
        int r;

        if (depth > STACK_MAX) {
                log_debug("%s: the device stack is deeper than %d, giving up.", device, STACK_MAX);
                return 0;
        }

        mapped = startswith(device, "/dev/mapper/");
        if (mapped && crypttab_find(c, mapped)) {
                log_debug("%s is the crypttab volume %s.", device, mapped);
                if (!strv_contains(*names, mapped) && strv_extend(names, mapped) < 0)
                        return log_oom();
                return 1;
        }

        r = target_lv_split(device, &vg, &lv);
        if (r < 0)
                return log_oom();
        if (r > 0) {
                r = vg_devices(root, vg, &pvs);
                if (r <= 0) {
                        if (r == 0)
                                log_debug("%s is LV %s of VG %s, whose PVs %s" LVM_BACKUP_DIR "/%s does not name.",
                                          device, lv, vg, streq(root, "/") ? "" : root, vg);
                        return r;
                }
                STRV_FOREACH(pv, pvs) {
                        r = device_volumes(root, c, *pv, depth + 1, names);
                        if (r <= 0)
                                return r;
                }
                return 1;
        }

        /* A plain device node (/dev/sda2, /dev/vda, /dev/nvme0n1p2) is no mapping; tags and links
         * may lead to one, and other names under /dev/mapper are mappings foyer cannot follow. */
        if (startswith(device, "/dev/") && !mapped && !startswith(device, "/dev/disk/") &&
            !startswith(device, "/dev/dm-") && !strchr(device + strlen("/dev/"), '/')) {
                log_debug("%s is a plain device: no crypttab volume under it.", device);
                return 1;
        }
        return 0;
}

/* Options of Debian's crypttab(5) that systemd-cryptsetup does not know (it would ignore them,
 * and unlock the volume differently from what the line asks). */
static const struct {
        const char *option;     /* ending in '=': with a value */
        const char *why;
} unsupported[] = {
        { "keyscript=",  "the image runs no key scripts: systemd-cryptsetup takes a key file, a passphrase or a token" },
        { "check",       "systemd-cryptsetup runs no check on the unlocked device" },
        { "check=",      "systemd-cryptsetup runs no check on the unlocked device" },
        { "checkargs=",  "systemd-cryptsetup runs no check on the unlocked device" },
        { "veracrypt",   "systemd-cryptsetup's name for it is tcrypt-veracrypt" },
};

/* A volume keyed from the random number generator (swap or /tmp made anew at each boot) holds
 * nothing to mount or resume from. */
static bool line_has_random_key(const Line *l) {
        return l->keyspec && (streq(l->keyspec, "/dev/urandom") || streq(l->keyspec, "/dev/random") ||
                              streq(l->keyspec, "/dev/hw_random"));
}

static int check_options(const Crypttab *c, const Line *l) {
        _cleanup_strv_free_ char **opts = NULL;

        if (!l->options)
                return 0;
        if (strv_split(l->options, ",", &opts) < 0)
                return log_oom();
        STRV_FOREACH(o, opts)
                for (size_t i = 0; i < ELEMENTSOF(unsupported); i++) {
                        const char *u = unsupported[i].option;
                        bool match = u[strlen(u) - 1] == '=' ? !!startswith(*o, u) : streq(*o, u);

                        if (match)
                                return log_error_errno(SYNTHETIC_ERRNO(EOPNOTSUPP),
                                                       "%s:%u: volume %s: option %s cannot be honoured in the image (%s). "
                                                       "Change the line, or pass --crypttab=FILE or --no-target-settings.",
                                                       c->path, l->line, l->name, *o, unsupported[i].why);
                }
        return 0;
}

/* The key file a line names inside the tree, as keyspec_in_image() in plan-crypt.c sees it:
 * "none", "-", device nodes and keys on another device (FILE:DEVICE) are not files of the tree. */
static int line_key_file(const Line *l, char **ret) {
        _cleanup_free_ char *file = NULL, *device = NULL;

        *ret = NULL;
        if (crypttab_split_keyspec(l->keyspec, &file, &device) < 0)
                return -ENOMEM;
        if (!file || device || file[0] != '/' || startswith(file, "/dev/"))
                return 0;
        *ret = TAKE_PTR(file);
        return 1;
}

int target_crypttab_select(const char *root, const TargetFstab *f, TargetCrypttab *ret) {
        _cleanup_(target_crypttab_done) TargetCrypttab t = {};
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_strv_free_ char **wanted = NULL;
        Crypttab c = {};
        const char *devices[4] = {};
        const char *unknown = NULL;
        size_t n = 0;
        int r;

        assert(root);
        assert(f);
        assert(ret);

        r = read_tree_file(root, CRYPTTAB, &text, NULL);
        if (r < 0)
                return r;
        if (!text) {
                *ret = t;
                t = (TargetCrypttab) {};
                return 0;
        }
        path = path_prefix_root(root, CRYPTTAB);
        if (!path)
                return log_oom();
        c.path = path;
        r = crypttab_parse_buffer(text, collect_line, &c);
        if (r == -ENOENT) {
                crypttab_free(&c);
                *ret = t;
                t = (TargetCrypttab) {};
                return 0;
        }
        if (r < 0) {
                crypttab_free(&c);
                return r == -ENOMEM ? log_oom() : log_error_errno(r, "Failed to read %s: %m", path);
        }

        /* The devices the initrd brings up: the root, /usr, and the resume device (the swaps
         * matter to the real root only; the one to resume from is f->resume). */
        if (f->root)
                devices[n++] = f->root;
        if (f->usr)
                devices[n++] = f->usr;
        if (f->resume)
                devices[n++] = f->resume;
        for (size_t i = 0; i < n; i++) {
                r = device_volumes(root, &c, devices[i], 0, &wanted);
                if (r < 0)
                        goto finish;
                if (r == 0 && !unknown)
                        unknown = devices[i];
        }
        t.all = !!unknown;
        if (unknown)
                log_info("%s: which volumes hold %s cannot be told from the names; taking every line without noauto.",
                         path, unknown);

        for (size_t i = 0; i < c.n; i++) {
                const Line *l = &c.lines[i];
                _cleanup_free_ char *key = NULL, *line = NULL;
                bool initramfs = line_has_option(l, "initramfs");

                if (!initramfs && !strv_contains(wanted, l->name) && !(t.all && !line_has_option(l, "noauto"))) {
                        log_debug("%s:%u: volume %s is not needed in the initrd.", path, l->line, l->name);
                        continue;
                }
                if (!initramfs && line_has_random_key(l)) {
                        log_debug("%s:%u: volume %s has a random key: nothing to mount or resume from.",
                                  path, l->line, l->name);
                        continue;
                }
                r = check_options(&c, l);
                if (r < 0)
                        goto finish;

                line = strjoin(l->name, " ", l->device, l->keyspec ? " " : "", strempty(l->keyspec),
                               l->options ? " " : "", strempty(l->options), "\n");
                if (!line || strextend_with_separator(&t.text, "", line) < 0 || strv_extend(&t.names, l->name) < 0) {
                        r = log_oom();
                        goto finish;
                }
                r = line_key_file(l, &key);
                if (r < 0) {
                        r = log_oom();
                        goto finish;
                }
                if (r > 0 && !strv_contains(t.key_files, key) && strv_consume(&t.key_files, TAKE_PTR(key)) < 0) {
                        r = log_oom();
                        goto finish;
                }
                log_debug("%s:%u: volume %s goes into the image%s.", path, l->line, l->name,
                          initramfs ? " (option initramfs)" : t.all ? "" : " (it holds the root, /usr or the resume device)");
        }

        *ret = t;
        t = (TargetCrypttab) {};
        r = 0;
finish:
        crypttab_free(&c);
        return r;
}
