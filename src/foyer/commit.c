/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
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

/* The one temporary name an image ever has in its directory, for the steps that need a name: the
 * whole image where the file system has no O_TMPFILE (vfat, the usual ESP), and the finished one
 * between linkat() and the rename over an existing image otherwise. A fixed name, not a random one:
 * after a SIGKILL (nothing can remove a file then) at most one is left per image, recognisable, and
 * the next build of that image removes it before it writes. */
static char *temp_name(const char *path) {
        return strjoin(".#", path_basename(path), ".foyer-tmp");
}

/* Builds writing into one directory take turns (flock() on the directory) from the removal of a
 * stale temporary file to the rename of their own, so that a removal never takes a file another
 * foyer is still writing. Where the file system has no flock() (-ENOLCK, some network file
 * systems), on without it. */
static int lock_dir(int dir_fd, const char *dir, bool wait) {
        if (flock(dir_fd, LOCK_EX | LOCK_NB) >= 0)
                return 0;
        if (errno == EWOULDBLOCK && wait) {
                log_info("Another foyer is writing into %s; waiting for it.", dir);
                if (flock(dir_fd, LOCK_EX) >= 0)
                        return 0;
        }
        if (errno == EWOULDBLOCK)
                return -EWOULDBLOCK;
        log_debug_errno(errno, "Cannot lock %s (%m); going on without.", dir);
        return 0;
}

static void unlock_dir(int dir_fd) {
        if (dir_fd >= 0)
                (void) flock(dir_fd, LOCK_UN);
}

/* Removes what a killed build left: only the fixed name (temp_name()), only a file; the caller
 * holds the directory's lock. */
static int unlink_stale_temp(int dir_fd, const char *dir, const char *temp) {
        if (unlinkat(dir_fd, temp, 0) >= 0) {
                log_info("Removed %s/%s, left by an interrupted build.", dir, temp);
                return 0;
        }
        if (errno == ENOENT)
                return 0;
        return log_error_errno(errno, "Cannot remove %s/%s, left by an interrupted build: %m", dir, temp);
}

/* The same before the work starts, where nobody else writes into the directory right now (else
 * output_file_open() does it, waiting for its turn). Errors are output_file_open()'s to report. */
static void remove_stale_temp(const char *path) {
        _cleanup_free_ char *dir = strchr(path, '/') ? path_dirname(path) : strdup("."), *temp = temp_name(path);
        _cleanup_close_ int dir_fd = -EBADF;

        if (!dir || !temp)
                return;
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0 || lock_dir(dir_fd, dir, false) < 0)
                return;
        if (unlinkat(dir_fd, temp, 0) >= 0)
                log_info("Removed %s/%s, left by an interrupted build.", dir, temp);
        unlock_dir(dir_fd);
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
        /* What a killed build left goes now, not only when this one writes. */
        remove_stale_temp(resolved);
        *ret = TAKE_PTR(resolved);
        return 0;
}

/* A named temporary file: only where the file system cannot do O_TMPFILE. Created by this build
 * (O_EXCL; O_NOFOLLOW: never through a symlink planted there), mode 0600. */
static int open_named_temp(OutputFile *o, const char *dir) {
        _cleanup_free_ char *temp = temp_name(o->path), *full = NULL;
        int fd;

        if (!temp || !(full = strjoin(dir, "/", temp)))
                return log_oom();
        fd = openat(o->dir_fd, temp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return log_error_errno(errno, "Cannot write the image into %s: %s: %m", dir, temp);
        o->cleanup_slot = cleanup_register(full, false);
        o->temp_path = TAKE_PTR(full);
        o->fd = fd;
        return 0;
}

/* An image with keys (a final mode without group and other bits) is never written into a file
 * others can read, even for a moment: a file system that does not keep modes (vfat takes them
 * from its mount options, fmask=/umask=) would show the keys to every user while the image is
 * written, and after a SIGKILL, until the next build. */
static int check_private(OutputFile *o, const char *dir) {
        struct stat st;

        if (o->mode & 0077)
                return 0;
        if (fstat(o->fd, &st) < 0)
                return log_error_errno(errno, "Cannot write the image into %s: %m", dir);
        if (!(st.st_mode & 0077))
                return 0;
        /* A file system that takes modes (umask is applied to O_TMPFILE files too) keeps this one. */
        if (fchmod(o->fd, 0600) >= 0 && fstat(o->fd, &st) >= 0 && !(st.st_mode & 0077))
                return 0;
        return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                               "%s holds keys, and a new file in %s can be read by others there (mode %04o: a FAT "
                               "file system takes its modes from its mount options). Refusing to write it there; "
                               "mount that file system with fmask=0077 (or umask=0077), or write the image elsewhere.",
                               o->path, dir, (unsigned) (st.st_mode & 07777));
}

int output_file_open(const char *path, mode_t mode, OutputFile *ret) {
        _cleanup_free_ char *dir = NULL, *temp = NULL;
        OutputFile o = OUTPUT_FILE_NULL;
        int r;

        assert(path);
        assert(ret);

        o.mode = mode;
        o.path = strdup(path);
        dir = strchr(path, '/') ? path_dirname(path) : strdup(".");
        temp = temp_name(path);
        if (!o.path || !dir || !temp) {
                output_file_done(&o);
                return log_oom();
        }

        o.dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (o.dir_fd < 0) {
                r = log_error_errno(errno, "Cannot write the image into %s: %m", dir);
                output_file_done(&o);
                return r;
        }
        /* Held until the temporary file is gone or renamed (output_file_done(), output_file_commit()). */
        r = lock_dir(o.dir_fd, dir, true);
        if (r >= 0)
                r = unlink_stale_temp(o.dir_fd, dir, temp);
        if (r < 0) {
                output_file_done(&o);
                return r;
        }

        o.fd = openat(o.dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (o.fd >= 0)
                unlock_dir(o.dir_fd);   /* unnamed: nothing to guard until the publication */
        else {
                if (!IN_SET(errno, EOPNOTSUPP, EISDIR, EINVAL)) {
                        r = log_error_errno(errno, "Cannot write the image into %s: %m", dir);
                        output_file_done(&o);
                        return r;
                }
                log_debug("%s cannot hold O_TMPFILE files, using the temporary file %s.", dir, temp);
                r = open_named_temp(&o, dir);
                if (r < 0) {
                        output_file_done(&o);
                        return r;
                }
        }
        r = check_private(&o, dir);
        if (r < 0) {
                output_file_done(&o);
                return r;
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
 * linking to the temporary name first and renaming that over it, so the old image stays whole until
 * the complete new one takes its place in one step. */
static int publish_tmpfile(OutputFile *o) {
        _cleanup_free_ char *dir = NULL, *temp = NULL, *full = NULL;
        const char *base = path_basename(o->path);
        int slot, r;

        r = link_tmpfile(o, base);
        if (r != -EEXIST)
                return r;

        dir = strchr(o->path, '/') ? path_dirname(o->path) : strdup(".");
        temp = temp_name(o->path);
        if (!dir || !temp || !(full = strjoin(dir, "/", temp)))
                return -ENOMEM;
        r = lock_dir(o->dir_fd, dir, true);
        if (r >= 0)
                r = unlink_stale_temp(o->dir_fd, dir, temp);
        if (r < 0) {
                unlock_dir(o->dir_fd);
                return r;
        }
        slot = cleanup_register(full, false);
        r = link_tmpfile(o, temp);
        if (r >= 0 && renameat(o->dir_fd, temp, o->dir_fd, base) < 0) {
                r = negative_errno();
                (void) unlinkat(o->dir_fd, temp, 0);
        }
        cleanup_unregister(slot);
        unlock_dir(o->dir_fd);
        return r;
}

int output_file_commit(OutputFile *o) {
        int r;

        assert(o);
        assert(o->fd >= 0);

        if (fchmod(o->fd, o->mode) < 0)
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
                unlock_dir(o->dir_fd);
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
        /* The temporary file first, then the directory's lock goes with its fd. */
        if (o->temp_path)
                (void) unlink(o->temp_path);
        if (o->dir_fd >= 0)
                close(o->dir_fd);
        o->dir_fd = -EBADF;
        cleanup_unregister(o->cleanup_slot);
        o->cleanup_slot = -1;
        free(o->temp_path);
        free(o->path);
        o->temp_path = o->path = NULL;
}
