/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "commit.h"
#include "log.h"
#include "util.h"

/* The directory the image is written into: it must take a new file. */
static int check_output_dir(const char *output) {
        _cleanup_free_ char *dir = strchr(output, '/') ? path_dirname(output) : strdup(".");
        struct stat st;

        if (!dir)
                return log_oom();
        if (stat(dir, &st) < 0)
                return log_error_errno(errno, "Output directory %s: %m", dir);
        if (!S_ISDIR(st.st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(ENOTDIR), "Output directory %s is not a directory.", dir);
        if (access(dir, W_OK) < 0)
                return log_error_errno(errno, "Output directory %s is not writable: %m", dir);
        return 0;
}

/* A symlink is followed to the regular file it names (Debian's /initrd.img points to
 * boot/initrd.img-VERSION): that file is the one replaced, so the link keeps working. */
static int resolve_symlink(const char *path, char **ret) {
        _cleanup_free_ char *target = NULL;
        char text[PATH_MAX];
        struct stat st;
        ssize_t n;

        target = realpath(path, NULL);
        if (!target) {
                if (errno != ENOENT)
                        return log_error_errno(errno, "Output %s: %m", path);
                n = readlink(path, text, sizeof(text) - 1);
                if (n < 0)
                        return log_error_errno(errno, "Output %s: %m", path);
                text[n] = 0;
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "Output %s is a symlink to %s, which does not exist; refusing to guess where "
                                       "the image should go. Name the file itself with -o.", path, text);
        }
        if (stat(target, &st) < 0)
                return log_error_errno(errno, "Output %s: %s: %m", path, target);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(S_ISDIR(st.st_mode) ? EISDIR : EINVAL),
                                       "Output %s is a symlink to %s, which is %s; refusing to replace it.", path,
                                       target, file_type_name(st.st_mode));
        log_debug("Output %s is a symlink to %s: replacing that file.", path, target);
        *ret = TAKE_PTR(target);
        return 0;
}

int output_path_resolve(const char *path, char **ret) {
        _cleanup_free_ char *resolved = NULL;
        struct stat st;
        int r;

        assert(path);
        assert(ret);

        if (isempty(path) || endswith(path, "/"))
                return log_error_errno(SYNTHETIC_ERRNO(EISDIR), "Output \"%s\" names a directory, not a file.", path);

        if (lstat(path, &st) < 0) {
                if (errno != ENOENT)
                        return log_error_errno(errno, "Output %s: %m", path);
                resolved = strdup(path);        /* a new file */
                if (!resolved)
                        return log_oom();
        } else if (S_ISLNK(st.st_mode)) {
                r = resolve_symlink(path, &resolved);
                if (r < 0)
                        return r;
        } else if (S_ISREG(st.st_mode)) {
                resolved = strdup(path);
                if (!resolved)
                        return log_oom();
        } else if (S_ISDIR(st.st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(EISDIR), "Output %s is a directory; give a file name.", path);
        else
                /* Renaming over a device node would replace the node, never write to the device. */
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Output %s is %s, not a regular file; refusing to replace it.",
                                       path, file_type_name(st.st_mode));

        r = check_output_dir(resolved);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(resolved);
        return 0;
}

/* A named temporary file: only where the file system cannot do O_TMPFILE. */
static int open_named_temp(OutputFile *o, const char *dir) {
        _cleanup_free_ char *temp = strjoin(dir, "/.#", path_basename(o->path), ".XXXXXX");
        int fd;

        if (!temp)
                return log_oom();
        fd = mkostemp(temp, O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Cannot write the image into %s: %m", dir);
        o->cleanup_slot = cleanup_register(temp, false);
        o->temp_path = TAKE_PTR(temp);
        o->fd = fd;
        return 0;
}

int output_file_open(const char *path, OutputFile *ret) {
        _cleanup_free_ char *dir = NULL;
        OutputFile o = OUTPUT_FILE_NULL;
        int r;

        assert(path);
        assert(ret);

        o.path = strdup(path);
        dir = strchr(path, '/') ? path_dirname(path) : strdup(".");
        if (!o.path || !dir) {
                output_file_done(&o);
                return log_oom();
        }

        o.dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (o.dir_fd < 0) {
                r = log_error_errno(errno, "Cannot write the image into %s: %m", dir);
                output_file_done(&o);
                return r;
        }
        o.fd = openat(o.dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (o.fd < 0) {
                if (!IN_SET(errno, EOPNOTSUPP, EISDIR, EINVAL)) {
                        r = log_error_errno(errno, "Cannot write the image into %s: %m", dir);
                        output_file_done(&o);
                        return r;
                }
                log_debug("%s cannot hold O_TMPFILE files, using a named temporary file.", dir);
                r = open_named_temp(&o, dir);
                if (r < 0) {
                        output_file_done(&o);
                        return r;
                }
        }

        *ret = o;
        return 0;
}

/* Gives the unnamed file a name in the output directory. */
static int link_tmpfile(OutputFile *o, const char *name) {
        char proc[64];

        snprintf(proc, sizeof(proc), "/proc/self/fd/%i", o->fd);
        if (linkat(AT_FDCWD, proc, o->dir_fd, name, AT_SYMLINK_FOLLOW) >= 0)
                return 0;
        if (errno != ENOENT)    /* without /proc, AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH */
                return negative_errno();
        if (linkat(o->fd, "", o->dir_fd, name, AT_EMPTY_PATH) >= 0)
                return 0;
        return negative_errno();
}

/* Publishes the O_TMPFILE file. A new name is linked directly; an existing file is replaced by
 * linking to a temporary name first and renaming that over it, so the old image stays whole until
 * the complete new one takes its place in one step. */
static int publish_tmpfile(OutputFile *o) {
        const char *base = path_basename(o->path);
        int r;

        r = link_tmpfile(o, base);
        if (r != -EEXIST)
                return r;

        for (unsigned attempt = 0; attempt < 64; attempt++) {
                _cleanup_free_ char *temp = NULL, *full = NULL;
                char suffix[17];
                uint64_t rnd;
                int slot;

                if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                        return negative_errno();
                snprintf(suffix, sizeof(suffix), "%016" PRIx64, rnd);
                temp = strjoin(".#", base, ".", suffix);
                full = strchr(o->path, '/') ? path_dirname(o->path) : strdup(".");
                if (!temp || !full || strextend_with_separator(&full, "/", temp) < 0)
                        return -ENOMEM;

                slot = cleanup_register(full, false);
                r = link_tmpfile(o, temp);
                if (r == -EEXIST) {
                        cleanup_unregister(slot);
                        continue;
                }
                if (r >= 0 && renameat(o->dir_fd, temp, o->dir_fd, base) < 0) {
                        r = negative_errno();
                        (void) unlinkat(o->dir_fd, temp, 0);
                }
                cleanup_unregister(slot);
                return r;
        }
        return -EEXIST;
}

int output_file_commit(OutputFile *o, mode_t mode) {
        int r;

        assert(o);
        assert(o->fd >= 0);

        if (fchmod(o->fd, mode) < 0)
                return log_error_errno(errno, "Failed to set the mode of %s: %m", o->path);
        if (fsync(o->fd) < 0)
                return log_error_errno(errno, "Failed to write %s: %m", o->path);

        if (o->temp_path) {
                if (rename(o->temp_path, o->path) < 0)
                        return log_error_errno(errno, "Failed to rename %s to %s: %m", o->temp_path, o->path);
                cleanup_unregister(o->cleanup_slot);
                o->cleanup_slot = -1;
                free(o->temp_path);
                o->temp_path = NULL;
        } else {
                r = publish_tmpfile(o);
                if (r < 0)
                        return log_error_errno(r, "Failed to write %s: %m", o->path);
        }

        if (fsync(o->dir_fd) < 0)
                return log_error_errno(errno, "Failed to sync the directory of %s: %m", o->path);
        return 0;
}

void output_file_done(OutputFile *o) {
        if (o->fd >= 0)
                close(o->fd);
        o->fd = -EBADF;
        if (o->dir_fd >= 0)
                close(o->dir_fd);
        o->dir_fd = -EBADF;
        if (o->temp_path)
                (void) unlink(o->temp_path);
        cleanup_unregister(o->cleanup_slot);
        o->cleanup_slot = -1;
        free(o->temp_path);
        free(o->path);
        o->temp_path = o->path = NULL;
}
