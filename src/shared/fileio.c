/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "fileio.h"
#include "macro.h"
#include "strv.h"

int read_full_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        assert(path);

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
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

int fflush_and_check(FILE *f) {
        errno = 0;
        fflush(f);
        if (ferror(f))
                return errno > 0 ? -errno : -EIO;
        return 0;
}

int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1;; s++) {
                if (*s != '/' && *s != 0)
                        continue;
                char c = *s;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = c;
                if (c == 0)
                        return 0;
        }
}

int mkdir_parents(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);
        char *e;

        if (!p)
                return -ENOMEM;
        e = strrchr(p, '/');
        if (!e || e == p)
                return 0;
        *e = 0;
        return mkdir_p(p, mode);
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

int chase_below_root(const char *path, const char *root, char **ret) {
        _cleanup_free_ char *done = strdup(""), *todo = strdup(path);
        unsigned follows = 0;

        if (!done || !todo)
                return -ENOMEM;

        for (;;) {
                _cleanup_free_ char *full = NULL, *comp = NULL;
                char target[PATH_MAX];
                const char *p = todo;
                size_t l;
                ssize_t k;

                p += strspn(p, "/");
                if (*p == 0)
                        break;
                l = strcspn(p, "/");
                comp = strndup(p, l);
                if (!comp)
                        return -ENOMEM;
                memmove(todo, p + l, strlen(p + l) + 1);

                if (streq(comp, "."))
                        continue;
                if (streq(comp, "..")) {
                        char *s = strrchr(done, '/');
                        if (s)
                                *s = 0;
                        continue;
                }

                full = strjoin(root ?: "", done, "/", comp);
                if (!full)
                        return -ENOMEM;
                k = readlink(full, target, sizeof(target) - 1);
                if (k < 0) {
                        if (!IN_SET_ERRNO(errno, ENOENT, EINVAL, ENOTDIR))
                                return -errno;
                        if (strextend_with_separator(&done, "", "/") < 0 ||
                            strextend_with_separator(&done, "", comp) < 0)
                                return -ENOMEM;
                        /* Missing: like systemd's CHASE_NONEXISTENT, the rest is taken verbatim. */
                        if (errno != EINVAL) {
                                if (strextend_with_separator(&done, "", todo) < 0)
                                        return -ENOMEM;
                                break;
                        }
                        continue;
                }
                if (++follows > 32)
                        return -ELOOP;
                target[k] = 0;
                if (target[0] == '/')
                        done[0] = 0;
                char *n = strjoin(target, "/", todo);
                if (!n)
                        return -ENOMEM;
                free(todo);
                todo = n;
        }

        char *r = isempty(done) ? strdup(isempty(root) ? "/" : root) : strjoin(root ?: "", done);
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
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
