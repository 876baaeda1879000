/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <blkid.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>

#include "blockdev.h"
#include "fileio.h"
#include "strv.h"
#include "unit-name.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(blkid_probe, blkid_free_probe);

void block_device_done(BlockDevice *d) {
        char **all[] = { &d->node, &d->type, &d->uuid, &d->label, &d->partuuid, &d->partlabel };

        assert(d);

        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                free(*all[i]);
                *all[i] = NULL;
        }
}

void block_devices_free(BlockDevice *l, size_t n) {
        if (!l)
                return;
        for (size_t i = 0; i < n; i++)
                block_device_done(&l[i]);
        free(l);
}

/* Copies the first of the given probe values that is set; libblkid's strings die with the probe. */
static int lookup_first(blkid_probe pr, const char *a, const char *b, char **ret) {
        const char *v = NULL;

        if (blkid_probe_lookup_value(pr, a, &v, NULL) < 0 && (!b || blkid_probe_lookup_value(pr, b, &v, NULL) < 0))
                return 0;
        if (!v)
                return 0;
        *ret = strdup(v);
        return *ret ? 0 : -ENOMEM;
}

int block_device_probe(const char *node, BlockDevice *ret) {
        _cleanup_(blkid_free_probep) blkid_probe pr = NULL;
        BlockDevice d = {};
        int fd, r;

        assert(node);
        assert(ret);

        d.node = strdup(node);
        if (!d.node)
                return -ENOMEM;

        /* Open ourselves (read-only, no O_EXCL) so that the error is ours to report, e.g. ENOMEDIUM. */
        fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                d.probe_error = negative_errno();
                *ret = d;
                return 0;
        }
        pr = blkid_new_probe();
        if (!pr || blkid_probe_set_device(pr, fd, 0, 0) < 0) {
                d.probe_error = -ENOMEM;
                close(fd);
                *ret = d;
                return 0;
        }
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID | BLKID_SUBLKS_TYPE);
        blkid_probe_enable_partitions(pr, 1);
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);

        /* 0: found, 1: nothing, -2: ambiguous signatures, -1: I/O error. */
        r = blkid_do_safeprobe(pr);
        if (r == -2)
                d.ambiguous = 1;
        else if (r < 0)
                d.probe_error = errno > 0 ? -errno : -EIO;
        else if (r == 0) {
                if (lookup_first(pr, "TYPE", "PTTYPE", &d.type) < 0 ||
                    lookup_first(pr, "UUID", "PTUUID", &d.uuid) < 0 ||
                    lookup_first(pr, "LABEL", NULL, &d.label) < 0 ||
                    lookup_first(pr, "PART_ENTRY_UUID", NULL, &d.partuuid) < 0 ||
                    lookup_first(pr, "PART_ENTRY_NAME", NULL, &d.partlabel) < 0) {
                        block_device_done(&d);
                        close(fd);
                        return -ENOMEM;
                }
        }
        /* blkid_probe_set_device() does not take the fd over. */
        close(fd);
        *ret = d;
        return 0;
}

static bool sysfs_size_nonzero(const char *sys_block, const char *name) {
        _cleanup_free_ char *p = strjoin(sys_block, "/", name, "/size"), *text = NULL;

        if (!p || read_full_file(p, &text, NULL) < 0)
                return false;
        return text[0] != '\0' && text[0] != '0';
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

int block_devices_list(const char *sys_block, const char *dev_dir, BlockDevice **ret, size_t *ret_n) {
        _cleanup_strv_free_ char **names = NULL;
        BlockDevice *l = NULL;
        size_t n = 0;
        DIR *dir;
        struct dirent *de;
        int r;

        assert(sys_block);
        assert(dev_dir);
        assert(ret);
        assert(ret_n);

        dir = opendir(sys_block);
        if (!dir)
                return negative_errno();
        while ((errno = 0, de = readdir(dir))) {
                if (de->d_name[0] == '.')
                        continue;
                /* Empty loop devices, RAM disks that were never set up, CD drives without a disc. */
                if (!sysfs_size_nonzero(sys_block, de->d_name))
                        continue;
                if (strv_extend(&names, de->d_name) < 0) {
                        closedir(dir);
                        return -ENOMEM;
                }
        }
        r = errno > 0 ? -errno : 0;
        closedir(dir);
        if (r < 0)
                return r;

        if (names)
                qsort(names, strv_length(names), sizeof(char *), name_cmp);
        l = calloc(strv_length(names) + 1, sizeof(BlockDevice));
        if (!l)
                return -ENOMEM;
        for (char **name = names; name && *name; name++) {
                _cleanup_free_ char *node = strjoin(dev_dir, "/", *name);

                if (!node) {
                        block_devices_free(l, n);
                        return -ENOMEM;
                }
                /* The kernel names cciss!c0d0 what udev creates as /dev/cciss/c0d0. */
                for (char *c = node + strlen(dev_dir); *c; c++)
                        if (*c == '!')
                                *c = '/';
                r = block_device_probe(node, &l[n]);
                if (r < 0) {
                        block_devices_free(l, n);
                        return r;
                }
                n++;
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

static bool needs_quotes(const char *s) {
        if (!*s)
                return true;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (!(isalnum(*p) || strchr("-_.:/+@#", *p)))
                        return true;
        return false;
}

static int append_field(char **s, const char *key, const char *value) {
        _cleanup_free_ char *escaped = NULL, *field = NULL;

        if (!value)
                return 0;
        if (needs_quotes(value)) {
                escaped = cescape(value);
                if (!escaped)
                        return -ENOMEM;
                field = strjoin(key, "=\"", escaped, "\"");
        } else
                field = strjoin(key, "=", value);
        if (!field)
                return -ENOMEM;
        return strextend_with_separator(s, " ", field);
}

int block_device_format(const BlockDevice *d, char **ret) {
        _cleanup_free_ char *fields = NULL;
        char *s;

        assert(d);
        assert(ret);

        if (d->probe_error < 0) {
                if (asprintf(&fields, "(cannot be read: %s)", strerror(ERRNO_VALUE(d->probe_error))) < 0)
                        return -ENOMEM;
        } else if (d->ambiguous)
                fields = strdup("(conflicting signatures, see wipefs -n)");
        else if (!d->type && !d->uuid && !d->label && !d->partuuid && !d->partlabel)
                fields = strdup("(no file system or partition table found)");
        else if (append_field(&fields, "TYPE", d->type) < 0 || append_field(&fields, "UUID", d->uuid) < 0 ||
                 append_field(&fields, "LABEL", d->label) < 0 ||
                 append_field(&fields, "PARTUUID", d->partuuid) < 0 ||
                 append_field(&fields, "PARTLABEL", d->partlabel) < 0)
                return -ENOMEM;
        if (!fields)
                return -ENOMEM;

        s = strjoin(d->node, "  ", fields);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}
