/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* systemd-repart in the initrd, for a tree that ships repart definitions (repart.d(5)): the tree's
 * systemd-repart, its systemd-repart.service (linked into initrd-root-fs.target, as systemd installs
 * it), the definitions, and the mkfs programs their Format= lines need.
 *
 * What systemd (252 to 257) does with them at boot decides what goes in. The unit runs when one of
 * the initrd's own repart.d directories (or /sysusr/usr/lib/repart.d; in 252 /sysroot's too) is not
 * empty (ConditionDirectoryNotEmpty=), after initrd-usr-fs.target (which requires the root's
 * sysroot.mount when there is no separate /usr) and before initrd-root-fs.target. systemd-repart
 * in the initrd then works on the disk behind /sysusr/usr if that is mounted, else behind /sysroot,
 * and reads the definitions of that tree (/sysroot/etc/repart.d, /sysroot/usr/lib/repart.d, ...),
 * not the initrd's. So the image's copies of the tree's definitions are what turns the unit on; the
 * definitions applied are the booted root's, which are the same files when the image boots the tree
 * it was built from. Growing a partition needs no other program: the file system in it is grown
 * by systemd-growfs (x-systemd.growfs, or the GPT grow-fs flag that GrowFileSystem=yes sets when the
 * partition is made), not by repart. A definition that creates a file system (Format=) needs its
 * mkfs in the image, where repart looks for it in $PATH.
 *
 * initrd-usr-fs.target has DefaultDependencies=no: requiring sysroot.mount does not order it after
 * the mount, and the unit can start before the root is mounted (systemd's commit d6f6846464 says as
 * much); repart then fails on /sysroot/usr, which is not there yet. The image adds a drop-in with
 * After=sysroot.mount. A root that systemd-repart itself is to create, beside a /usr mounted first
 * on /sysusr/usr, is therefore not supported: its mount would wait for a partition that repart,
 * waiting for the mount, never makes.
 *
 * A tree with definitions but without systemd-repart (Debian splits it into the package
 * systemd-repart from systemd 256 on) or its unit fails to build, naming what is missing: the image
 * would boot without the repartitioning the tree asks for. Definitions masked as systemd masks them
 * (a link to /dev/null or an empty file, hiding the file of that name in a later directory) do not
 * count. Drop-ins (NAME.conf.d/) are not read here: the copies only serve the unit's condition. */

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "unit-info.h"
#include "util.h"

#define REPART_PROGRAM "/usr/bin/systemd-repart"
#define REPART_UNIT_NAME "systemd-repart.service"
#define REPART_UNIT UNITDIR "/" REPART_UNIT_NAME
/* As systemd's units/meson.build installs it: the initrd transaction pulls the unit in. */
#define REPART_DROPIN UNITDIR "/" REPART_UNIT_NAME ".d/50-foyer-after-sysroot.conf"

/* repart.d's directories as systemd searches them, a file in an earlier one hiding one of the same
 * name in a later one. /run/repart.d exists only at boot. */
static const char *const repart_dirs[] = {
        "/etc/repart.d",
        "/usr/local/lib/repart.d",
        "/usr/lib/repart.d",
};

static const char *tree_prefix(const Manifest *m) {
        return streq(m->root, "/") ? "" : m->root;
}

/* Whether the tree's file at path is masked: a link to /dev/null, or an empty regular file. */
static int definition_masked(const char *root, const char *path) {
        _cleanup_free_ char *link = NULL, *file = NULL;
        struct stat st;
        int r;

        r = path_in_root(root, path, true, &link);
        if (r < 0)
                return r;
        if (lstat(link, &st) < 0)
                return negative_errno();
        if (S_ISLNK(st.st_mode)) {
                char target[sizeof("/dev/null")];
                ssize_t n = readlink(link, target, sizeof(target));

                if (n < 0)
                        return negative_errno();
                /* A longer target fills the buffer and is not /dev/null. */
                if ((size_t) n == sizeof(target) - 1 && memcmp(target, "/dev/null", n) == 0)
                        return 1;
        }
        r = path_in_root(root, path, false, &file);
        if (r < 0)
                return r;
        if (stat(file, &st) < 0)
                return negative_errno();
        return S_ISREG(st.st_mode) && st.st_size == 0;
}

static int compare_basename(const void *a, const void *b) {
        return strcmp(path_basename(*(char *const *) a), path_basename(*(char *const *) b));
}

/* The tree's definitions that systemd-repart would read, as image paths in its order (by name). */
static int definitions_find(const Manifest *m, char ***ret) {
        _cleanup_strv_free_ char **found = NULL, **seen = NULL;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(repart_dirs); i++) {
                _cleanup_free_ char *dir = NULL;
                _cleanup_strv_free_ char **names = NULL;

                r = path_in_root(m->root, repart_dirs[i], false, &dir);
                if (IN_SET(r, -ENOENT, -ENOTDIR))
                        continue;
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0)
                        return log_error_errno(r, "Failed to resolve %s%s: %m", tree_prefix(m), repart_dirs[i]);
                r = dir_list_suffix(dir, ".conf", &names);
                if (r < 0)
                        return log_error_errno(r, "Failed to list %s%s: %m", tree_prefix(m), repart_dirs[i]);

                STRV_FOREACH(n, names) {
                        _cleanup_free_ char *path = NULL;

                        if (strv_contains(seen, *n))
                                continue;       /* hidden by an earlier directory's file */
                        if (strv_extend(&seen, *n) < 0)
                                return log_oom();
                        path = strjoin(repart_dirs[i], "/", *n);
                        if (!path)
                                return log_oom();
                        r = definition_masked(m->root, path);
                        if (r == -ENOMEM)
                                return log_oom();
                        if (r == -ENOENT) {     /* a dangling link: systemd skips it too */
                                log_debug("%s%s leads nowhere, ignoring it.", tree_prefix(m), path);
                                continue;
                        }
                        if (r < 0)
                                return log_error_errno(r, "Failed to read %s%s: %m", tree_prefix(m), path);
                        if (r > 0) {
                                log_debug("%s%s is masked.", tree_prefix(m), path);
                                continue;
                        }
                        if (strv_consume(&found, TAKE_PTR(path)) < 0)
                                return log_oom();
                }
        }
        if (found)
                qsort(found, strv_length(found), sizeof(char *), compare_basename);
        *ret = TAKE_PTR(found);
        return 0;
}

/* A Format= value: a file system type as systemd names them (ext4, vfat, swap, squashfs, ...). */
static bool format_valid(const char *v) {
        if (isempty(v) || strlen(v) > 32)
                return false;
        for (const char *c = v; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
                        return false;
        return true;
}

/* The Format= of the [Partition] section of the tree's definition at path (the last assignment
 * wins, an empty one resets it, as systemd parses it): *ret NULL when it makes no file system. */
static int definition_format(const Manifest *m, const char *path, char **ret) {
        _cleanup_free_ char *text = NULL, *format = NULL;
        bool partition = false;
        unsigned line = 0;
        int r;

        r = read_tree_file(m->root, path, &text, NULL);
        if (r < 0)
                return r;
        if (!text) {
                *ret = NULL;
                return 0;
        }
        for (char *next = text, *s; next; ) {
                const char *eq;
                size_t n;

                s = next;
                next = strchr(s, '\n');
                if (next)
                        *next++ = '\0';
                line++;
                s += strspn(s, " \t");
                if (*s == '[') {
                        partition = startswith(s, "[Partition]") != NULL;
                        continue;
                }
                if (!partition || !startswith(s, "Format"))
                        continue;
                eq = s + strlen("Format");
                eq += strspn(eq, " \t");
                if (*eq != '=')
                        continue;       /* another key that starts so */
                eq++;
                eq += strspn(eq, " \t");
                n = strlen(eq);
                while (n > 0 && strchr(" \t\r", eq[n - 1]))
                        n--;
                if (n == 0) {
                        free(format);
                        format = NULL;
                        continue;
                }
                _cleanup_free_ char *v = strndup(eq, n);
                if (!v)
                        return log_oom();
                if (!format_valid(v))
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "%s%s:%u: Format= is not a file system type (lower-case letters and digits): refusing the definition.",
                                               tree_prefix(m), path, line);
                free(format);
                format = TAKE_PTR(v);
        }
        *ret = TAKE_PTR(format);
        return 0;
}

/* The program systemd-repart runs to make a file system of type fstype (systemd's mkfs-util.c). */
static char *mkfs_program(const char *fstype) {
        if (streq(fstype, "swap"))
                return strdup("mkswap");
        if (streq(fstype, "squashfs"))
                return strdup("mksquashfs");
        return strjoin("mkfs.", fstype);
}

static int plan_mkfs(Manifest *m, const char *definition) {
        _cleanup_free_ char *format = NULL, *program = NULL, *path = NULL, *why = NULL;
        int r;

        r = definition_format(m, definition, &format);
        if (r < 0 || !format)
                return r;
        program = mkfs_program(format);
        if (!program)
                return log_oom();
        r = unit_program_find(m, program, &path);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "%s%s has Format=%s, but the tree has no %s (in /usr/sbin or /usr/bin): systemd-repart could not make the file system.",
                                       tree_prefix(m), definition, format, program);
        why = strjoin("Format=", format, " in ", definition, ", run by systemd-repart");
        if (!why)
                return log_oom();
        return plan_add_item(m, path, NEED_REQUIRED, why);
}

int plan_repart(Manifest *m, const BuildConfig *c) {
        static const char *const needed[] = { REPART_PROGRAM, REPART_UNIT };
        _cleanup_strv_free_ char **definitions = NULL;
        int r;

        assert(m);
        assert(c);

        r = definitions_find(m, &definitions);
        if (r < 0)
                return r;
        if (strv_isempty(definitions)) {
                log_debug("The tree has no repart definitions (repart.d): no systemd-repart in the image.");
                return 0;
        }

        for (size_t i = 0; i < ELEMENTSOF(needed); i++) {
                _cleanup_free_ char *in_tree = NULL;

                r = path_in_root(m->root, needed[i], false, &in_tree);
                if (r == -ENOMEM)
                        return log_oom();
                if (r >= 0 && access(in_tree, i == 0 ? X_OK : F_OK) >= 0)
                        continue;
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "%s%s has repart definitions, but %s%s is not there (Debian: package systemd-repart): the image could not repartition the disk as they ask.",
                                       tree_prefix(m), definitions[0], tree_prefix(m), needed[i]);
        }

        r = plan_add_item(m, REPART_PROGRAM, NEED_REQUIRED, "the tree's repart definitions");
        if (r >= 0)
                /* In the initrd transaction, as systemd installs it. */
                r = plan_add_unit_wanted(m, REPART_UNIT_NAME, "initrd-root-fs.target", "the tree's repart definitions");
        if (r < 0)
                return r;

        r = plan_add_text(m, REPART_DROPIN, 0644,
                          "# foyer: systemd-repart in the initrd works on the disk of the mounted root\n"
                          "[Unit]\n"
                          "After=sysroot.mount\n",
                          "systemd-repart.service after the root is mounted (initrd-usr-fs.target does not order it)");
        if (r < 0)
                return r;

        STRV_FOREACH(d, definitions) {
                r = plan_add_item(m, *d, NEED_REQUIRED,
                                  "repart definition: turns on systemd-repart.service (ConditionDirectoryNotEmpty=)");
                if (r < 0)
                        return r;
                r = plan_mkfs(m, *d);
                if (r < 0)
                        return r;
        }
        log_debug("systemd-repart with %zu repart definition(s) of the tree.", strv_length(definitions));
        return 0;
}
