/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "path-util.h"
#include "strv.h"

char *path_simplify(char *path) {
        char *f = path, *t = path;
        bool absolute = *path == '/';

        /* An empty path stays empty: there is no room for the "." a relative path reduces to. */
        if (*path == 0)
                return path;
        if (absolute)
                *(t++) = *(f++);
        for (;;) {
                size_t l;

                f += strspn(f, "/");
                if (*f == 0)
                        break;
                l = strcspn(f, "/");
                if (l == 1 && f[0] == '.') {
                        f++;
                        continue;
                }
                if (t > path && t[-1] != '/')
                        *(t++) = '/';
                memmove(t, f, l);
                t += l;
                f += l;
        }
        if (t == path && !absolute)
                *(t++) = '.';
        *t = 0;
        return path;
}

bool path_is_safe(const char *p) {
        for (const char *s = p; *s;) {
                size_t l;

                s += strspn(s, "/");
                l = strcspn(s, "/");
                if (l == 2 && s[0] == '.' && s[1] == '.')
                        return false;
                s += l;
        }
        return true;
}

char *path_prefix_root(const char *root, const char *path) {
        if (isempty(root) || streq(root, "/"))
                return strdup(path);
        return strjoin(root, path[0] == '/' ? "" : "/", path);
}

/* The kernel resolves the path, not foyer: openat2(RESOLVE_IN_ROOT) treats root as "/" for every
 * symlink and ".." on the way, exactly as after chroot(2), in one atomic walk (it fails with EAGAIN
 * rather than let a concurrent rename move the walk out of root). A resolver of our own would have
 * to get every case right itself, and would race with changes to the tree between its readlink()
 * calls. */
int open_in_root(const char *root, const char *path, int flags, int *ret_fd) {
        _cleanup_close_ int root_fd = -EBADF;
        int fd;

        assert(path);
        assert(ret_fd);
        assert((flags & ~(O_NOFOLLOW | O_DIRECTORY)) == 0);

        /* On the host, the kernel's own resolution is already the right one. */
        if (isempty(root) || streq(root, "/"))
                fd = open(path, O_PATH | O_CLOEXEC | flags);
        else {
                root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root_fd < 0)
                        return negative_errno();
                fd = openat_in_root(root_fd, path, flags);
                if (fd < 0)
                        return fd;
        }
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

int openat_in_root(int root_fd, const char *path, int flags) {
        assert((flags & ~(O_NOFOLLOW | O_DIRECTORY)) == 0);
        return openat_in_root_flags(root_fd, path, O_PATH | flags);
}

int openat_in_root_flags(int root_fd, const char *path, int flags) {
        struct open_how how = {
                .flags = O_CLOEXEC | flags,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        assert(root_fd >= 0);
        assert(path);

        /* EAGAIN: a rename in the tree raced with the walk; the kernel asks for a retry. */
        for (unsigned attempt = 0; attempt < 16; attempt++) {
                fd = (int) syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
                if (fd >= 0 || errno != EAGAIN)
                        break;
        }
        return fd < 0 ? negative_errno() : fd;
}

int fd_get_path(int fd, char **ret) {
        char proc[64], buf[PATH_MAX];
        ssize_t n;

        assert(fd >= 0);
        assert(ret);

        snprintf(proc, sizeof(proc), "/proc/self/fd/%i", fd);
        n = readlink(proc, buf, sizeof(buf) - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = 0;
        if (buf[0] != '/')      /* not a path in our mount namespace */
                return -EXDEV;

        char *r = strdup(buf);
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

/* The manifest and libkmod want paths, not fds, so the fd is turned back into the physical path it
 * names; that path holds no symlink below root, so opening it on the host reaches the same file as
 * long as nobody changes the tree: what is read from it later is opened again with
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS (openat_beneath()) and checked to be the file resolved here. */
int path_in_root(const char *root, const char *path, bool nofollow, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        assert(path);
        assert(ret);

        if (isempty(root) || streq(root, "/")) {
                char *p = strdup(path);

                if (!p)
                        return -ENOMEM;
                *ret = p;
                return 0;
        }

        r = open_in_root(root, path, nofollow ? O_NOFOLLOW : 0, &fd);
        if (r < 0)
                return r;
        return fd_get_path(fd, ret);
}

int openat_beneath(int dir_fd, const char *path, int flags) {
        struct open_how how = {
                /* Not O_NOFOLLOW: with O_PATH it would return a final symlink itself rather than
                 * fail on it as RESOLVE_NO_SYMLINKS does everywhere else. */
                .flags = O_PATH | O_CLOEXEC | flags,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        assert(dir_fd >= 0);
        assert(path);
        assert((flags & ~O_DIRECTORY) == 0);

        fd = (int) syscall(SYS_openat2, dir_fd, path, &how, sizeof(how));
        return fd < 0 ? negative_errno() : fd;
}

int mkdir_in_root(const char *root, const char *path, mode_t mode, int *ret_fd) {
        _cleanup_close_ int root_fd = -EBADF, parent_fd = -EBADF;
        _cleanup_free_ char *walked = strdup("");
        const char *p = path;

        assert(root);
        assert(path);
        assert(ret_fd);

        if (!walked)
                return -ENOMEM;
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return negative_errno();
        parent_fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
        if (parent_fd < 0)
                return negative_errno();

        /* Component by component, each one resolved from root again, so that a symlink or ".."
         * anywhere on the way stays inside root; a missing one is made in the directory resolved
         * before it (mkdirat() does not follow a symlink in the last component). */
        for (;;) {
                _cleanup_free_ char *comp = NULL;
                size_t l;
                int fd;

                p += strspn(p, "/");
                if (*p == 0)
                        break;
                l = strcspn(p, "/");
                comp = strndup(p, l);
                p += l;
                if (!comp || strextend_with_separator(&walked, "", "/") < 0 ||
                    strextend_with_separator(&walked, "", comp) < 0)
                        return -ENOMEM;

                fd = openat_in_root(root_fd, walked, O_DIRECTORY);
                if (fd == -ENOENT && !streq(comp, "..") && !streq(comp, ".")) {
                        if (mkdirat(parent_fd, comp, mode) < 0 && errno != EEXIST)
                                return negative_errno();
                        fd = openat_in_root(root_fd, walked, O_DIRECTORY);
                }
                if (fd < 0)
                        return fd;
                close(parent_fd);
                parent_fd = fd;
        }
        *ret_fd = TAKE_FD(parent_fd);
        return 0;
}

char *path_simplify_abs(const char *path) {
        char *r, *w;
        const char *p = path;

        r = malloc(strlen(path) + 2);
        if (!r)
                return NULL;

        w = r;
        for (;;) {
                size_t n;

                p += strspn(p, "/");
                n = strcspn(p, "/");
                if (n == 0)
                        break;
                if (n == 1 && p[0] == '.')
                        ;
                else if (n == 2 && p[0] == '.' && p[1] == '.') {
                        /* Drop the last component, never going above the root. */
                        while (w > r && *(w - 1) != '/')
                                w--;
                        if (w > r)
                                w--;
                } else {
                        *w++ = '/';
                        memcpy(w, p, n);
                        w += n;
                }
                p += n;
        }

        if (w == r)
                *w++ = '/';
        *w = 0;
        return r;
}

char *path_merge_usr(const char *path) {
        static const char *const legacy[] = { "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32" };
        _cleanup_free_ char *s = path_simplify_abs(path);

        if (!s)
                return NULL;

        for (size_t i = 0; i < ELEMENTSOF(legacy); i++) {
                const char *rest = startswith(s, legacy[i]);

                if (rest && (*rest == 0 || *rest == '/'))
                        return strjoin("/usr", s);
        }

        return TAKE_PTR(s);
}

char *path_dirname(const char *path) {
        const char *slash = strrchr(path, '/');

        if (!slash || slash == path)
                return strdup("/");
        return strndup(path, slash - path);
}

const char *path_basename(const char *path) {
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
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
                        if (!IN_SET(errno, ENOENT, EINVAL, ENOTDIR))
                                return -errno;
                        if (strextend_with_separator(&done, "", "/") < 0 ||
                            strextend_with_separator(&done, "", comp) < 0)
                                return -ENOMEM;
                        /* Missing: like systemd's CHASE_NONEXISTENT, the rest is taken verbatim, but
                         * not a ".." in it: nothing below a missing directory can be checked, and
                         * "missing/../../x" would climb out of root (as systemd, -EBADSLT). */
                        if (errno != EINVAL) {
                                if (!path_is_safe(todo))
                                        return -EBADSLT;
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

const char *sysfs_dir(void) {
        const char *e = secure_getenv("FOYER_SYSFS");

        return isempty(e) ? "/sys" : e;
}
