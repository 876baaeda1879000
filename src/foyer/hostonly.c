/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Host-only images: the running system's storage stack, read from mountinfo, /proc/swaps and
 * sysfs. See hostonly.h. Nothing here looks at the tree the image is built from: the module names
 * found are looked up in the image's kernel by modules.c. */

#include <dirent.h>
#include <fcntl.h>
#include <libmount.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hostonly.h"
#include "log.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_table *, mnt_unref_table);
DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

/* The ciphers of a dm-crypt volume whose header cannot be read (plain mode, an unreadable device):
 * those of common LUKS setups, as in the generic image. */
static const char *const default_cipher_specs[] = { "aes-xts-plain64", "aes-cbc-essiv:sha256", NULL };

#define EV_KEY_BIT 1            /* linux/input-event-codes.h: EV_KEY */
#define KEY_ENTER_BIT 28        /* KEY_ENTER */

typedef struct Walk {
        HostStack *stack;
        char *sysfs;            /* canonical */
        char *devices;          /* <sysfs>/devices */
        const char *devfs;
} Walk;

static const char *procfs_dir(void) {
        const char *e = secure_getenv("FOYER_PROCFS");

        return isempty(e) ? "/proc" : e;
}

static const char *devfs_dir(void) {
        const char *e = secure_getenv("FOYER_DEVFS");

        return isempty(e) ? "/dev" : e;
}

void host_stack_done(HostStack *s) {
        strv_free(s->required);
        strv_free(s->needed);
        strv_free(s->wanted);
        strv_free(s->filesystems);
        strv_free(s->devices);
        strv_free(s->luks_tokens);
        *s = (HostStack) {};
}

static int extend_unique(char ***l, const char *s) {
        if (isempty(s) || strv_contains(*l, s))
                return 0;
        return strv_extend(l, s);
}

/* A module the image must have: the first reason given for it is kept. */
static int add_required(HostStack *s, const char *name, const char *needed_by) {
        int r;

        if (strv_contains(s->required, name))
                return 0;
        r = strv_extend(&s->required, name);
        if (r < 0)
                return r;
        return strv_extend(&s->needed, needed_by);
}

/* A sysfs attribute's first line, or NULL if there is none (-ENOENT). */
static int read_attr(const char *dir, const char *name, char **ret) {
        _cleanup_free_ char *path = strjoin(dir, "/", name), *text = NULL;
        int r;

        if (!path)
                return -ENOMEM;
        r = read_full_file(path, &text, NULL);
        if (r < 0)
                return r;
        text[strcspn(text, "\n")] = 0;
        *ret = TAKE_PTR(text);
        return 0;
}

/* The last path component a symlink points to ("../../bus/pci/drivers/ahci" → "ahci"). */
static int read_link_name(const char *dir, const char *name, char **ret) {
        _cleanup_free_ char *path = strjoin(dir, "/", name);
        char buf[PATH_MAX];
        ssize_t n;

        if (!path)
                return -ENOMEM;
        n = readlink(path, buf, sizeof(buf) - 1);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        *ret = strdup(path_basename(buf));
        return *ret ? 0 : -ENOMEM;
}

static bool file_exists(const char *dir, const char *name) {
        _cleanup_free_ char *path = strjoin(dir, "/", name);

        return path && access(path, F_OK) >= 0;
}

static char *module_name_normalize(char *s) {
        for (char *c = s; c && *c; c++)
                if (*c == '-')
                        *c = '_';
        return s;
}

/* Up the device's parents, below <sysfs>/devices: the driver bound to each, by its module when
 * sysfs names one (required, if the device is), else by its name, and each modalias (wanted). */
static int walk_parents(Walk *w, const char *syspath, const char *device, bool required) {
        _cleanup_free_ char *dir = path_dirname(syspath);
        int r;

        if (!dir)
                return -ENOMEM;
        while (startswith(dir, w->devices) && dir[strlen(w->devices)] == '/') {
                _cleanup_free_ char *driver = NULL, *module = NULL, *alias = NULL, *parent = NULL;

                r = read_link_name(dir, "driver", &driver);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0) {
                        r = read_link_name(dir, "driver/module", &module);
                        if (r == -ENOMEM)
                                return r;
                        if (r >= 0 && required) {
                                _cleanup_free_ char *why = strjoin(device, " (driver ", driver, " of ",
                                                                   dir + strlen(w->sysfs) + 1, ")");
                                if (!why)
                                        return -ENOMEM;
                                r = add_required(w->stack, module, why);
                        } else if (r >= 0)
                                r = extend_unique(&w->stack->wanted, module);
                        else
                                /* Built into the running kernel: sysfs names no module. The module
                                 * of the same name, if the image's kernel has one (virtio-pci is
                                 * virtio_pci); the modalias below finds the rest. */
                                r = extend_unique(&w->stack->wanted, module_name_normalize(driver));
                        if (r < 0)
                                return r;
                        log_debug("Host-only: %s: %s is driven by %s%s%s.", device, dir + strlen(w->sysfs) + 1,
                                  driver, module ? ", module " : " (no module in sysfs)", strempty(module));
                }

                r = read_attr(dir, "modalias", &alias);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0) {
                        r = extend_unique(&w->stack->wanted, alias);
                        if (r < 0)
                                return r;
                }

                parent = path_dirname(dir);
                if (!parent)
                        return -ENOMEM;
                free(dir);
                dir = TAKE_PTR(parent);
        }
        return 0;
}

/* The block device at the sysfs path of a device number, canonical, below <sysfs>/devices; NULL
 * (0) if sysfs does not know it. */
static int block_syspath(Walk *w, dev_t devno, char **ret) {
        _cleanup_free_ char *link = NULL;
        char *p;

        if (asprintf(&link, "%s/dev/block/%u:%u", w->sysfs, major(devno), minor(devno)) < 0)
                return -ENOMEM;
        p = realpath(link, NULL);
        if (!p)
                return errno == ENOMEM ? -ENOMEM : 0;
        if (!startswith(p, w->devices) || p[strlen(w->devices)] != '/') {
                free(p);
                return 0;
        }
        *ret = p;
        return 1;
}

/* A device node's number: the node under $FOYER_DEVFS as /dev, else its name in sysfs
 * (/dev/dm-1 → <sysfs>/class/block/dm-1/dev). 0 if neither knows it. */
static int devno_of_node(Walk *w, const char *node, dev_t *ret) {
        _cleanup_free_ char *path = NULL, *real = NULL, *dir = NULL, *dev = NULL;
        const char *rel = startswith(node, "/dev/");
        unsigned maj, min;
        struct stat st;

        if (!rel)
                return 0;
        path = strjoin(w->devfs, "/", rel);
        if (!path)
                return -ENOMEM;
        if (stat(path, &st) >= 0 && S_ISBLK(st.st_mode)) {
                *ret = st.st_rdev;
                return 1;
        }
        /* /dev/mapper/NAME is a link to ../dm-N. */
        real = realpath(path, NULL);
        dir = strjoin(w->sysfs, "/class/block/", path_basename(real ?: path));
        if (!dir)
                return -ENOMEM;
        if (read_attr(dir, "dev", &dev) < 0 || sscanf(dev, "%u:%u", &maj, &min) != 2)
                return 0;
        *ret = makedev(maj, min);
        return 1;
}

/* Reads the LUKS header of the device below a dm-crypt volume and adds its ciphers' aliases;
 * falls back to the common ciphers when it cannot. */
static int add_crypt_ciphers(Walk *w, const char *name, const char *slave) {
        _cleanup_strv_free_ char **specs = NULL;
        _cleanup_free_ char *dev = NULL, *node = NULL;
        _cleanup_close_ int fd = -EBADF;
        char header[64 * 1024];
        ssize_t n = -1;
        int r;

        if (slave && read_attr(slave, "dev", &dev) >= 0) {
                node = strjoin(w->devfs, "/block/", dev);
                if (!node)
                        return -ENOMEM;
                fd = open(node, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd >= 0)
                        n = pread(fd, header, sizeof(header), 0);
        }
        r = n > 0 ? hostonly_luks_ciphers(header, n, &specs) : -EIO;
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && hostonly_luks_tokens(header, n, &w->stack->luks_tokens) == -ENOMEM)
                return -ENOMEM;
        if (r < 0 || strv_isempty(specs)) {
                log_warning("Host-only: cannot read the LUKS header of %s below %s (%s): taking the common ciphers.",
                            node ?: "the device", name, r == -EMEDIUMTYPE ? "not LUKS" : fd < 0 ? strerror(errno) : "short read");
                for (const char *const *d = default_cipher_specs; *d; d++)
                        if (strv_extend(&specs, *d) < 0)
                                return -ENOMEM;
        }
        STRV_FOREACH(spec, specs) {
                log_debug("Host-only: %s uses the cipher %s.", name, *spec);
                r = hostonly_cipher_aliases(*spec, &w->stack->wanted);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The dm targets the host has loaded (dm_thin_pool, dm_snapshot, ...): an LV's segment type is not
 * in sysfs, and what it needs was loaded when it was activated. */
static int add_loaded_dm_targets(Walk *w) {
        _cleanup_free_ char *dir = strjoin(w->sysfs, "/module");
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        if (!dir)
                return -ENOMEM;
        d = opendir(dir);
        if (!d)
                return 0;
        while ((de = readdir(d)))
                if (startswith(de->d_name, "dm_") && !streq(de->d_name, "dm_mod")) {
                        r = extend_unique(&w->stack->wanted, de->d_name);
                        if (r < 0)
                                return r;
                }
        return 0;
}

static int visit_block(Walk *w, const char *syspath, const char *what, bool required);

static int visit_slaves(Walk *w, const char *syspath, const char *what, bool required, char **ret_first) {
        _cleanup_free_ char *dir = strjoin(syspath, "/slaves");
        _cleanup_strv_free_ char **names = NULL;
        int r;

        if (!dir)
                return -ENOMEM;
        r = dir_list_suffix(dir, NULL, &names);
        if (r < 0)
                return r;
        STRV_FOREACH(n, names) {
                _cleanup_free_ char *link = strjoin(dir, "/", *n), *real = NULL;

                if (!link)
                        return -ENOMEM;
                real = realpath(link, NULL);
                if (!real) {
                        log_debug("Host-only: %s: cannot resolve %s, skipping it.", what, link);
                        continue;
                }
                r = visit_block(w, real, what, required);
                if (r < 0)
                        return r;
                if (ret_first && !*ret_first)
                        *ret_first = TAKE_PTR(real);
        }
        return (int) strv_length(names);
}

static int visit_dm(Walk *w, const char *syspath, const char *name, const char *what, bool required) {
        _cleanup_free_ char *uuid = NULL, *why = NULL, *slave = NULL;
        int r;

        (void) read_attr(syspath, "dm/uuid", &uuid);
        why = strjoin("device-mapper device ", name, " (", what, ")");
        if (!why)
                return -ENOMEM;
        w->stack->dm = true;
        r = add_required(w->stack, "dm_mod", why);
        if (r < 0)
                return r;

        r = visit_slaves(w, syspath, what, required, &slave);
        if (r < 0)
                return r;

        if (uuid && startswith(uuid, "CRYPT-VERITY-")) {
                /* systemd-veritysetup's and veritysetup's volumes: a hash device and a data device
                 * below, both followed as slaves; no LUKS header, no cipher. */
                w->stack->verity = true;
                r = add_required(w->stack, "dm_verity", why);
        } else if (uuid && startswith(uuid, "CRYPT-")) {
                w->stack->crypt = true;
                r = add_required(w->stack, "dm_crypt", why);
                if (r >= 0)
                        /* libcryptsetup decrypts the keyslots through AF_ALG. */
                        r = extend_unique(&w->stack->wanted, "algif_skcipher");
                if (r >= 0)
                        r = add_crypt_ciphers(w, name, slave);
        } else if (uuid && startswith(uuid, "LVM-")) {
                w->stack->lvm = true;
                r = add_loaded_dm_targets(w);
        } else
                log_debug("Host-only: %s is a dm device of no kind foyer knows (uuid %s).", name, strna(uuid));
        return r;
}

static int visit_md(Walk *w, const char *syspath, const char *name, const char *what, bool required) {
        _cleanup_free_ char *level = NULL, *why = NULL, *alias = NULL;
        int r;

        w->stack->md = true;
        r = read_attr(syspath, "md/level", &level);
        if (r == -ENOMEM)
                return r;
        why = strjoin("md array ", name, " (", what, ")");
        if (!why)
                return -ENOMEM;
        r = add_required(w->stack, "md_mod", why);
        if (r < 0)
                return r;
        if (!isempty(level)) {
                /* raid1 registers the alias md-raid1, raid456 md-raid5 and md-raid6, ... */
                alias = strjoin("md-", level);
                if (!alias)
                        return -ENOMEM;
                r = add_required(w->stack, alias, why);
                if (r < 0)
                        return r;
        }
        r = visit_slaves(w, syspath, what, required, NULL);
        return r < 0 ? r : 0;
}

/* Modules of network storage: required for the root and /usr, wanted for a swap. */
static int add_network_modules(Walk *w, const char *const *modules, const char *why, bool required) {
        int r = 0;

        for (const char *const *n = modules; r >= 0 && *n; n++)
                r = required ? add_required(w->stack, *n, why) : extend_unique(&w->stack->wanted, *n);
        return r;
}

/* "nbdN": an NBD device (a partition of one, nbdNpM, was followed to it). */
static bool is_nbd(const char *name) {
        const char *d = startswith(name, "nbd");

        return d && *d && strspn(d, "0123456789") == strlen(d);
}

/* Whether the disk at syspath is reached through an iSCSI session: an ancestor of it is one, with its
 * iscsi_session class device (<sysfs>/devices/platform/hostH/sessionN/iscsi_session/sessionN). */
static int below_iscsi_session(Walk *w, const char *syspath) {
        _cleanup_free_ char *dir = path_dirname(syspath);

        if (!dir)
                return -ENOMEM;
        while (startswith(dir, w->devices) && dir[strlen(w->devices)] == '/') {
                char *parent;

                if (file_exists(dir, "iscsi_session"))
                        return 1;
                parent = path_dirname(dir);
                if (!parent)
                        return -ENOMEM;
                free(dir);
                dir = parent;
        }
        return 0;
}

/* A disk on network storage (NBD, iSCSI): its client's modules (the tool and the network come with
 * plan-netroot.c and plan-network.c). Returns 1 if it is one. */
static int visit_network_disk(Walk *w, const char *syspath, const char *name, const char *what, bool required) {
        static const char *const nbd_modules[] = { "nbd", NULL };
        static const char *const iscsi_modules[] = { "iscsi_tcp", "sd_mod", NULL };
        _cleanup_free_ char *why = NULL;
        int r;

        if (is_nbd(name)) {
                why = strjoin("NBD device ", name, " of ", what);
                r = why ? add_network_modules(w, nbd_modules, why, required) : -ENOMEM;
                if (r < 0)
                        return r;
                w->stack->nbd = w->stack->nbd || required;
                log_debug("Host-only: %s is on NBD device %s.", what, name);
                return 1;
        }
        r = below_iscsi_session(w, syspath);
        if (r <= 0)
                return r;
        why = strjoin("disk ", name, " of ", what, " (an iSCSI session)");
        r = why ? add_network_modules(w, iscsi_modules, why, required) : -ENOMEM;
        if (r < 0)
                return r;
        w->stack->iscsi = w->stack->iscsi || required;
        log_debug("Host-only: %s is on %s, a disk of an iSCSI session.", what, name);
        return 0;       /* and its SCSI drivers, as for any disk */
}

static int visit_block(Walk *w, const char *syspath, const char *what, bool required) {
        const char *name = path_basename(syspath);
        int r;

        if (strv_contains(w->stack->devices, name))
                return 0;
        r = strv_extend(&w->stack->devices, name);
        if (r < 0)
                return r;
        log_debug("Host-only: %s is on %s.", what, syspath + strlen(w->sysfs));

        if (file_exists(syspath, "partition")) {
                _cleanup_free_ char *disk = path_dirname(syspath);

                if (!disk)
                        return -ENOMEM;
                return visit_block(w, disk, what, required);
        }
        if (file_exists(syspath, "dm"))
                return visit_dm(w, syspath, name, what, required);
        if (file_exists(syspath, "md"))
                return visit_md(w, syspath, name, what, required);

        r = visit_slaves(w, syspath, what, required, NULL);
        if (r != 0)
                return r < 0 ? r : 0;
        r = visit_network_disk(w, syspath, name, what, required);
        if (r != 0)
                return r < 0 ? r : 0;
        _cleanup_free_ char *device = strjoin("block device ", name, " of ", what);
        if (!device)
                return -ENOMEM;
        return walk_parents(w, syspath, device, required);
}

/* An NFS mount (nfs4: NFSv4.x; nfs: NFSv3, or v2 with vers=2): no block device, the client's modules.
 * Returns 1. */
static int visit_nfs(Walk *w, struct libmnt_fs *fs, const char *what, bool required) {
        const char *fstype = mnt_fs_get_fstype(fs), *source = mnt_fs_get_source(fs);
        const char *modules[] = { "sunrpc", "nfs", streq(fstype, "nfs4") ? "nfsv4" : "nfsv3", NULL };
        _cleanup_free_ char *why = strjoin("the ", fstype, " file system of ", what, " (", strna(source), ")");
        char *vers = NULL;
        size_t len = 0;
        int r;

        if (!why)
                return -ENOMEM;
        if (streq(fstype, "nfs") && mnt_fs_get_option(fs, "vers", &vers, &len) == 0 && len == 1 && vers[0] == '2')
                modules[2] = "nfsv2";
        r = add_network_modules(w, modules, why, required);
        if (r >= 0)
                r = extend_unique(&w->stack->filesystems, fstype);
        if (r >= 0)
                r = extend_unique(&w->stack->devices, strna(source));
        if (r < 0)
                return r;
        w->stack->nfs = w->stack->nfs || required;
        log_debug("Host-only: %s is on NFS (%s, %s).", what, fstype, strna(source));
        return 1;
}

/* One mount: its block device (from the device number, or for btrfs and others with anonymous
 * numbers from the source node) and its file system. Returns 0 when it is on no block device
 * sysfs knows. */
static int visit_mount(Walk *w, struct libmnt_fs *fs, const char *what, bool required) {
        _cleanup_free_ char *syspath = NULL, *why = NULL, *alias = NULL;
        const char *fstype = mnt_fs_get_fstype(fs), *source = mnt_fs_get_source(fs);
        dev_t devno = mnt_fs_get_devno(fs);
        int r;

        if (streq_ptr(fstype, "nfs") || streq_ptr(fstype, "nfs4"))
                return visit_nfs(w, fs, what, required);
        if (major(devno) == 0 && source) {
                r = devno_of_node(w, source, &devno);
                if (r < 0)
                        return r;
        }
        r = major(devno) != 0 ? block_syspath(w, devno, &syspath) : 0;
        if (r <= 0) {
                if (r == 0)
                        log_warning("Host-only: %s (%s on %s) is on no block device of %s.", what, strna(fstype),
                                    strna(source), w->sysfs);
                return r;
        }
        r = visit_block(w, syspath, what, required);
        if (r < 0)
                return r;

        if (fstype) {
                r = extend_unique(&w->stack->filesystems, fstype);
                if (r < 0)
                        return r;
                why = strjoin("the ", fstype, " file system of ", what);
                alias = strjoin("fs-", fstype);
                if (!why || !alias)
                        return -ENOMEM;
                r = required ? add_required(w->stack, alias, why) : extend_unique(&w->stack->wanted, alias);
                if (r < 0)
                        return r;
        }
        return 1;
}

static int visit_swaps(Walk *w) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *t = mnt_new_table();
        _cleanup_free_ char *path = strjoin(procfs_dir(), "/swaps");
        struct libmnt_iter *it;
        struct libmnt_fs *fs;
        int r = 0;

        if (!t || !path)
                return -ENOMEM;
        if (mnt_table_parse_swaps(t, path) < 0) {
                log_debug("Host-only: no %s, no swap.", path);
                return 0;
        }
        it = mnt_new_iter(MNT_ITER_FORWARD);
        if (!it)
                return -ENOMEM;
        while (r >= 0 && mnt_table_next_fs(t, it, &fs) == 0) {
                const char *source = mnt_fs_get_source(fs);
                _cleanup_free_ char *syspath = NULL, *what = NULL;
                dev_t devno = 0;

                if (!streq_ptr(mnt_fs_get_swaptype(fs), "partition")) {
                        log_debug("Host-only: swap %s is a file, on a file system already followed or not.", strna(source));
                        continue;
                }
                r = source ? devno_of_node(w, source, &devno) : 0;
                if (r > 0)
                        r = block_syspath(w, devno, &syspath);
                if (r == 0)
                        log_warning("Host-only: swap %s is on no block device of %s, skipping it.", strna(source), w->sysfs);
                if (r <= 0)
                        continue;
                what = strjoin("the swap ", source);
                r = what ? visit_block(w, syspath, what, false) : -ENOMEM;
        }
        mnt_free_iter(it);
        return r < 0 ? r : 0;
}

/* Input devices that can send Enter, and their drivers up to the controller. */
static int visit_keyboards(Walk *w) {
        _cleanup_free_ char *dir = strjoin(w->sysfs, "/class/input");
        _cleanup_strv_free_ char **names = NULL;
        int r;

        if (!dir)
                return -ENOMEM;
        r = dir_list_suffix(dir, NULL, &names);
        if (r < 0)
                return r;
        STRV_FOREACH(n, names) {
                _cleanup_free_ char *link = NULL, *real = NULL, *ev = NULL, *key = NULL, *device = NULL;
                const char *last;

                if (!startswith(*n, "input"))
                        continue;
                link = strjoin(dir, "/", *n);
                if (!link)
                        return -ENOMEM;
                real = realpath(link, NULL);
                if (!real || read_attr(real, "capabilities/ev", &ev) < 0 || read_attr(real, "capabilities/key", &key) < 0)
                        continue;
                /* Bitmaps in hex words, most significant first: EV_KEY in the only one, KEY_ENTER
                 * in the last. */
                last = strrchr(key, ' ');
                last = last ? last + 1 : key;
                if (!(strtoull(ev, NULL, 16) & (1ULL << EV_KEY_BIT)) ||
                    !(strtoull(last, NULL, 16) & (1ULL << KEY_ENTER_BIT)))
                        continue;
                device = strjoin("keyboard ", *n);
                if (!device)
                        return -ENOMEM;
                log_debug("Host-only: %s (%s) is a keyboard.", *n, real + strlen(w->sysfs));
                r = walk_parents(w, real, device, false);
                if (r < 0)
                        return r;
                w->stack->keyboard = true;
        }
        return 0;
}

static int hostonly_walk(Walk *w) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *t = mnt_new_table();
        _cleanup_free_ char *mountinfo = strjoin(procfs_dir(), "/self/mountinfo");
        struct libmnt_fs *fs;
        int r;

        if (!t || !mountinfo)
                return -ENOMEM;
        r = mnt_table_parse_file(t, mountinfo);
        if (r < 0) {
                log_warning("Host-only: cannot read %s: building the generic image.", mountinfo);
                return 0;
        }
        /* In a chroot whose root is no mount point, the kernel lists no mount at "/". */
        fs = mnt_table_find_target(t, "/", MNT_ITER_BACKWARD);
        if (!fs) {
                log_warning("Host-only: %s has no mount at / (a chroot?): the devices of this system are not "
                            "present; building the generic image.", mountinfo);
                return 0;
        }
        r = visit_mount(w, fs, "/", true);
        if (r <= 0) {
                if (r == 0)
                        log_warning("Host-only: the root's device is not present: building the generic image.");
                return r;
        }
        fs = mnt_table_find_target(t, "/usr", MNT_ITER_BACKWARD);
        if (fs) {
                r = visit_mount(w, fs, "/usr", true);
                if (r < 0)
                        return r;
                w->stack->usr = r > 0;
        }
        r = visit_swaps(w);
        if (r < 0)
                return r;
        /* What systemd (PID 1) loads itself and warns about when it is missing: autofs4, and
         * efivarfs on a machine booted through EFI. */
        r = extend_unique(&w->stack->wanted, "autofs4");
        if (r >= 0 && file_exists(w->sysfs, "firmware/efi"))
                r = extend_unique(&w->stack->wanted, "efivarfs");
        if (r < 0)
                return r;
        if (w->stack->crypt) {
                r = visit_keyboards(w);
                if (r < 0)
                        return r;
                if (!w->stack->keyboard)
                        log_warning("Host-only: no keyboard found in %s/class/input: the image has no keyboard "
                                    "driver for the passphrase prompt (add one with --add-module).", w->sysfs);
        }
        return 1;
}

int hostonly_probe(const char *root, HostStack *ret) {
        _cleanup_(host_stack_done) HostStack s = {};
        Walk w = { .stack = &s, .devfs = devfs_dir() };
        int r;

        assert(root);
        assert(ret);

        if (!streq(root, "/")) {
                log_warning("Host-only: --root %s is not the running system, whose devices host-only follows: "
                            "building the generic image.", root);
                return 0;
        }
        w.sysfs = realpath(sysfs_dir(), NULL);
        if (!w.sysfs) {
                log_warning("Host-only: %s: %m; building the generic image.", sysfs_dir());
                return 0;
        }
        w.devices = strjoin(w.sysfs, "/devices");
        r = w.devices ? hostonly_walk(&w) : -ENOMEM;
        free(w.sysfs);
        free(w.devices);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "Host-only: failed to read the host's devices: %m");
        if (r == 0)
                return 0;
        _cleanup_free_ char *devices = strv_join(s.devices, " ");
        log_info("Host-only: root%s on %s%s%s%s%s%s%s%s%s.", s.usr ? ", /usr" : "", strna(devices),
                 s.lvm ? ", LVM" : "", s.crypt ? ", dm-crypt" : "", s.verity ? ", dm-verity" : "",
                 s.md ? ", MD RAID" : "", s.nfs ? ", NFS" : "", s.nbd ? ", NBD" : "", s.iscsi ? ", iSCSI" : "",
                 s.keyboard ? ", keyboards" : "");
        *ret = s;
        s = (HostStack) {};
        return 1;
}

int hostonly_cipher_aliases(const char *spec, char ***l) {
        _cleanup_free_ char *copy = NULL, *cipher = NULL;
        char *p, *dash, *colon;
        int r;

        assert(spec);
        assert(l);

        /* capi:xts(aes)-plain64: the crypto API name, then the IV generator. */
        p = copy = strdup(startswith(spec, "capi:") ?: spec);
        if (!copy)
                return -ENOMEM;
        if (startswith(spec, "capi:")) {
                dash = strrchr(p, '-');
                if (dash)
                        *dash = 0;
                if (isempty(p))
                        return 0;       /* "capi:" or "capi:-plain64": no name to look up */
                cipher = strjoin("crypto-", p);
                if (!cipher)
                        return -ENOMEM;
                r = extend_unique(l, cipher);
                for (char *tok = strtok(p, "(),"); r >= 0 && tok; tok = strtok(NULL, "(),")) {
                        _cleanup_free_ char *a = strjoin("crypto-", tok);
                        r = a ? extend_unique(l, a) : -ENOMEM;
                }
                return r;
        }

        /* CIPHER[-MODE[-IV[:HASH]]], the mode cbc when not given. */
        const char *name = strsep(&p, "-"), *mode = p ? strsep(&p, "-") : "cbc", *iv = p;
        if (isempty(name))
                return 0;
        if (isempty(mode))
                mode = "cbc";
        _cleanup_free_ char *a_cipher = strjoin("crypto-", name), *a_mode = strjoin("crypto-", mode),
                            *a_both = strjoin("crypto-", mode, "(", name, ")");
        if (!a_cipher || !a_mode || !a_both)
                return -ENOMEM;
        FOREACH_STRING(a, a_cipher, a_mode, a_both) {
                r = extend_unique(l, a);
                if (r < 0)
                        return r;
        }
        if (!iv)
                return 0;
        colon = strchr(iv, ':');
        if (colon)
                *colon++ = 0;
        if (streq(iv, "essiv")) {
                r = extend_unique(l, "crypto-essiv");
                if (r < 0)
                        return r;
        }
        if (!isempty(colon)) {
                _cleanup_free_ char *a = strjoin("crypto-", colon);
                r = a ? extend_unique(l, a) : -ENOMEM;
                if (r < 0)
                        return r;
        }
        return 0;
}

static uint64_t be64(const unsigned char *p) {
        uint64_t v = 0;

        for (int i = 0; i < 8; i++)
                v = v << 8 | p[i];
        return v;
}

/* What a cipher specification is made of ("aes", "xts-plain64", "cbc-essiv:sha256",
 * "capi:xts(aes)-plain64"): it becomes a module alias that libkmod looks up, so nothing else from a
 * header may pass (no quotes, no spaces, no control characters). */
static bool cipher_spec_is_valid(const char *s) {
        return !isempty(s) && s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:().,+")] == 0;
}

static const char luks_magic[6] = { 'L', 'U', 'K', 'S', (char) 0xba, (char) 0xbe };

/* A LUKS header's version (1 or 2, from the big-endian field after the magic), or -EMEDIUMTYPE
 * when this is no LUKS header. */
static int luks_version(const char *header, size_t size) {
        const unsigned char *h = (const unsigned char *) header;

        if (size < 72 || memcmp(header, luks_magic, sizeof(luks_magic)) != 0)
                return -EMEDIUMTYPE;
        return h[6] << 8 | h[7];
}

/* A LUKS2 header's JSON area: hdr_size (binary header and JSON area) at 8, the JSON from 4096. */
static int luks2_json_area(const char *header, size_t size, const char **ret_json, const char **ret_stop) {
        const unsigned char *h = (const unsigned char *) header;

        assert(ret_json);
        assert(ret_stop);

        uint64_t hdr_size = be64(h + 8);
        if (hdr_size <= 4096 || size <= 4096)
                return -EMEDIUMTYPE;
        *ret_json = header + 4096;
        *ret_stop = header + MIN((size_t) MIN(hdr_size, (uint64_t) SIZE_MAX), size);
        return 0;
}

/* The next string value of KEY ("\"name\"", quotes included) from *p on, wherever it stands in the
 * JSON: libcryptsetup writes its own JSON, keys and values without escapes, so a value that is no
 * plain string (not quoted, empty, with a backslash or a NUL) is skipped. Returns 1 with a copy in
 * *ret and *p past it, 0 when there is none left, or -ENOMEM. */
static int json_next_string(const char **p, const char *stop, const char *key, char **ret) {
        size_t key_len = strlen(key);

        assert(p);
        assert(stop);
        assert(ret);

        while (*p < stop) {
                const char *k = memmem(*p, stop - *p, key, key_len), *v, *q;

                if (!k)
                        return 0;
                v = k + key_len;
                while (v < stop && *v && strchr(" \t\r\n", *v))
                        v++;
                if (v < stop && *v == ':')
                        v++;
                while (v < stop && *v && strchr(" \t\r\n", *v))
                        v++;
                *p = v;
                if (v >= stop || *v != '"')
                        continue;
                v++;
                q = memchr(v, '"', stop - v);
                if (!q)
                        return 0;
                *p = q + 1;
                if (q == v || memchr(v, '\\', q - v) || memchr(v, 0, q - v))
                        continue;
                *ret = strndup(v, q - v);
                return *ret ? 1 : -ENOMEM;
        }
        return 0;
}

/* Adds to *l, once each, the string values of key (quoted, as json_next_string() takes it) in the
 * JSON area of a LUKS2 header that keep() accepts. */
static int luks2_collect_strings(const char *header, size_t size, const char *key, bool (*keep)(const char *),
                                 char ***l) {
        const char *p, *stop;
        int r;

        assert(key);
        assert(keep);
        assert(l);

        r = luks2_json_area(header, size, &p, &stop);
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_free_ char *value = NULL;

                r = json_next_string(&p, stop, key, &value);
                if (r <= 0)
                        return r;
                if (!keep(value))
                        continue;
                r = extend_unique(l, value);
                if (r < 0)
                        return r;
        }
}

/* A systemd token type: "systemd-" and a name of letters, digits and '-' only (it is logged and
 * compared, nothing else). */
static bool token_type_is_valid(const char *type) {
        return strlen(type) <= 64 && startswith(type, "systemd-") && type[strlen("systemd-")] != 0 &&
               type[strspn(type, "abcdefghijklmnopqrstuvwxyz0123456789-")] == 0;
}

int hostonly_luks_ciphers(const char *header, size_t size, char ***l) {
        int version;

        assert(header || size == 0);
        assert(l);

        version = luks_version(header, size);
        if (version < 0)
                return version;
        if (version == 1) {
                /* LUKS1: cipher-name[32] at 8, cipher-mode[32] at 40; the keyslots use the same. */
                char name[33] = {}, mode[33] = {};
                _cleanup_free_ char *spec = NULL;

                memcpy(name, header + 8, 32);
                memcpy(mode, header + 40, 32);
                if (!cipher_spec_is_valid(name) || (!isempty(mode) && !cipher_spec_is_valid(mode)))
                        return -EMEDIUMTYPE;
                spec = isempty(mode) ? strdup(name) : strjoin(name, "-", mode);
                if (!spec)
                        return -ENOMEM;
                return extend_unique(l, spec);
        }
        if (version != 2)
                return -EMEDIUMTYPE;

        /* LUKS2: every "encryption" value is a cipher, the segments' and the keyslot areas'. */
        return luks2_collect_strings(header, size, "\"encryption\"", cipher_spec_is_valid, l);
}

int hostonly_luks_tokens(const char *header, size_t size, char ***l) {
        int version;

        assert(header || size == 0);
        assert(l);

        version = luks_version(header, size);
        if (version < 0)
                return version;
        if (version != 2)
                return 0;

        /* Only token types begin with "systemd-" (keyslots are "luks2", segments "crypt", digests
         * "pbkdf2"), so every "type" value with that prefix is a token's, wherever it stands. */
        return luks2_collect_strings(header, size, "\"type\"", token_type_is_valid, l);
}
