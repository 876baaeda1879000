/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "strv.h"

int fd_reopen(int fd, int flags) {
        char proc[64];
        int r;

        assert(fd >= 0);

        /* An O_PATH descriptor is opened for real through its magic link, which names exactly the
         * inode it holds, whatever happened to the path since. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%i", fd);
        r = open(proc, flags | O_CLOEXEC);
        return r < 0 ? negative_errno() : r;
}

static int check_regular(const struct stat *st) {
        if (S_ISDIR(st->st_mode))
                return -EISDIR;
        if (S_ISLNK(st->st_mode))
                return -ELOOP;
        if (!S_ISREG(st->st_mode))
                return -EBADFD;
        return 0;
}

int fd_reopen_regular(int path_fd, struct stat *ret_st) {
        struct stat st;
        int fd, r;

        assert(path_fd >= 0);

        if (fstat(path_fd, &st) < 0)
                return negative_errno();
        r = check_regular(&st);
        if (r < 0)
                return r;
        fd = fd_reopen(path_fd, O_RDONLY | O_NOCTTY);
        if (fd < 0)
                return fd;
        if (ret_st)
                *ret_st = st;
        return fd;
}

/* Without /proc (a generator run in a chroot by a test) an O_PATH descriptor cannot be reopened: the
 * file is then opened by name again, without blocking (a FIFO put there since returns at once), and
 * kept only if it is the regular file the O_PATH descriptor holds. Takes fd (or a negative errno). */
static int finish_open_by_name(int path_fd, int fd, struct stat *ret_st) {
        _cleanup_close_ int f = fd;
        struct stat a, b;
        int flags, r;

        if (f < 0)
                return f;
        if (fstat(path_fd, &a) < 0 || fstat(f, &b) < 0)
                return negative_errno();
        if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
                return -ESTALE;
        r = check_regular(&b);
        if (r < 0)
                return r;
        flags = fcntl(f, F_GETFL);
        if (flags < 0 || fcntl(f, F_SETFL, flags & ~O_NONBLOCK) < 0)
                return negative_errno();
        if (ret_st)
                *ret_st = b;
        return TAKE_FD(f);
}

int open_regular_at(int dir_fd, const char *path, int flags, struct stat *ret_st) {
        _cleanup_close_ int path_fd = -EBADF;
        int fd;

        assert(path);
        assert((flags & ~O_NOFOLLOW) == 0);

        path_fd = openat(dir_fd, path, O_PATH | O_CLOEXEC | flags);
        if (path_fd < 0)
                return negative_errno();
        fd = fd_reopen_regular(path_fd, ret_st);
        if (fd != -ENOENT)
                return fd;
        fd = openat(dir_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
        return finish_open_by_name(path_fd, fd < 0 ? negative_errno() : fd, ret_st);
}

int open_regular_in_root(const char *root, const char *path, int flags, struct stat *ret_st) {
        _cleanup_close_ int path_fd = -EBADF, root_fd = -EBADF;
        int fd, r;

        assert(path);

        r = open_in_root(root, path, flags, &path_fd);
        if (r < 0)
                return r;
        fd = fd_reopen_regular(path_fd, ret_st);
        if (fd != -ENOENT)
                return fd;
        if (isempty(root) || streq(root, "/")) {
                fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
                if (fd < 0)
                        fd = negative_errno();
        } else {
                root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                fd = root_fd < 0 ? negative_errno() :
                        openat_in_root_flags(root_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | flags);
        }
        return finish_open_by_name(path_fd, fd, ret_st);
}

const char *file_type_name(mode_t mode) {
        switch (mode & S_IFMT) {
        case S_IFREG:  return "a regular file";
        case S_IFDIR:  return "a directory";
        case S_IFLNK:  return "a symlink";
        case S_IFIFO:  return "a FIFO";
        case S_IFSOCK: return "a socket";
        case S_IFCHR:  return "a character device";
        case S_IFBLK:  return "a block device";
        default:       return "not a regular file";
        }
}

int read_full_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        assert(path);

        fd = open_regular_at(AT_FDCWD, path, 0, NULL);
        if (fd < 0)
                return fd;
        return read_full_fd(fd, ret, ret_size);
}

int read_full_file_in_root(const char *root, const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        assert(path);

        fd = open_regular_in_root(root, path, 0, NULL);
        if (fd < 0)
                return fd;
        return read_full_fd(fd, ret, ret_size);
}

/* No size cap: the builder reads kernel and initrd images through here, which may be larger than any
 * fixed limit (the generators' former copy refused files over 64 MiB; they only read small text files
 * from /proc, /sys and /etc). */
int read_full_fd(int fd, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        assert(fd >= 0);
        assert(ret);

        for (;;) {
                ssize_t k;

                if (allocated - size < 4096) {
                        size_t na = MAX(allocated * 2, (size_t) 8192);
                        char *t = realloc(buf, na);
                        if (!t)
                                return -ENOMEM;
                        buf = t;
                        allocated = na;
                }

                k = read(fd, buf + size, allocated - size - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                size += k;
        }

        buf[size] = 0;
        if (ret_size)
                *ret_size = size;
        *ret = TAKE_PTR(buf);
        return 0;
}

int read_full_fd_from_start(int fd, char **ret, size_t *ret_size) {
        assert(fd >= 0);
        assert(ret);

        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        return read_full_fd(fd, ret, ret_size);
}

int fflush_and_check(FILE *f) {
        errno = 0;
        fflush(f);
        if (ferror(f))
                return errno > 0 ? -errno : -EIO;
        return 0;
}

int write_string_file_atomic(const char *path, const char *text) {
        _cleanup_free_ char *tmp = strjoin(path, ".#tmpXXXXXX");
        _cleanup_fclose_ FILE *f = NULL;
        int fd, r;

        if (!tmp)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        f = fdopen(fd, "w");
        if (!f) {
                r = -errno;
                close(fd);
                goto fail;
        }
        (void) fchmod(fd, 0644);
        fputs(text, f);
        if (!endswith(text, "\n"))
                fputc('\n', f);
        r = fflush_and_check(f);
        if (r < 0)
                goto fail;
        if (rename(tmp, path) < 0) {
                r = -errno;
                goto fail;
        }
        return 0;
fail:
        (void) unlink(tmp);
        return r;
}

int find_executable(const char *name, char **ret) {
        const char *path = getenv("PATH") ?: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

        if (strchr(name, '/')) {
                if (access(name, X_OK) < 0)
                        return -errno;
                char *r = strdup(name);
                if (!r)
                        return -ENOMEM;
                *ret = r;
                return 0;
        }

        for (const char *p = path; *p;) {
                size_t l = strcspn(p, ":");
                _cleanup_free_ char *dir = strndup(p, l), *full = NULL;
                struct stat st;

                if (!dir)
                        return -ENOMEM;
                p += l;
                p += strspn(p, ":");
                if (dir[0] != '/')
                        continue;
                full = strjoin(dir, "/", name);
                if (!full)
                        return -ENOMEM;
                if (stat(full, &st) < 0 || !S_ISREG(st.st_mode) || access(full, X_OK) < 0)
                        continue;
                *ret = TAKE_PTR(full);
                return 0;
        }
        return -ENOENT;
}

int write_all(int fd, const void *data, size_t size) {
        const uint8_t *p = data;

        assert(fd >= 0);
        assert(data || size == 0);

        while (size > 0) {
                /* Linux writes at most 0x7ffff000 bytes per call anyway. */
                ssize_t k = write(fd, p, MIN(size, (size_t) 1 << 30));

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += k;
                size -= k;
        }
        return 0;
}

struct linux_dirent64 {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

static void rm_rf_at(int dir_fd, const char *name, unsigned depth) {
        char buf[2048];
        int fd;

        if (unlinkat(dir_fd, name, 0) >= 0 || (errno != EISDIR && errno != EPERM))
                return;
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return;
        while (depth < 32) {
                long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));

                if (n <= 0)
                        break;
                for (long off = 0; off < n;) {
                        const struct linux_dirent64 *de = (const struct linux_dirent64 *) (buf + off);

                        off += de->d_reclen;
                        /* By hand: strcmp() is not on the list of async-signal-safe functions. */
                        if (de->d_name[0] == '.' &&
                            (de->d_name[1] == 0 || (de->d_name[1] == '.' && de->d_name[2] == 0)))
                                continue;
                        rm_rf_at(fd, de->d_name, depth + 1);
                }
        }
        close(fd);
        (void) unlinkat(dir_fd, name, AT_REMOVEDIR);
}

void rm_rf(const char *path) {
        rm_rf_at(AT_FDCWD, path, 0);
}

int read_tree_file(const char *root, const char *path, char **ret, size_t *ret_size) {
        _cleanup_free_ char *name = NULL;
        int r;

        assert(path);
        assert(ret);

        r = read_full_file_in_root(root, path, ret, ret_size);
        if (IN_SET(r, -ENOENT, -ENOTDIR)) {
                *ret = NULL;
                return 0;
        }
        if (r >= 0)
                return 0;
        if (r == -ENOMEM)
                return log_oom();
        name = path_prefix_root(root, path);
        if (r == -EBADFD)
                return log_error_errno(r, "%s is not a regular file (a FIFO, socket or device node?), refusing to read it.",
                                       name ?: path);
        return log_error_errno(r, "Failed to read %s: %m", name ?: path);
}
