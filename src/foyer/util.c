/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "util.h"

char *path_prefix_root(const char *root, const char *path) {
        if (isempty(root) || streq(root, "/"))
                return strdup(path);
        return strjoin(root, path[0] == '/' ? "" : "/", path);
}

/* The kernel resolves the path, not foyer: openat2(RESOLVE_IN_ROOT) treats root as "/" for every
 * symlink and ".." on the way, exactly as after chroot(2), in one atomic walk. A resolver of our
 * own (like chase_below_root() in src/shared) would have to get every case right itself, and races
 * with changes to the tree between its readlink() calls. The manifest and libkmod want paths, not
 * fds, so the fd is turned back into the physical path it names; that path holds no symlink below
 * root, so opening it on the host reaches the same file. */
int path_in_root(const char *root, const char *path, bool nofollow, char **ret) {
        _cleanup_close_ int root_fd = -EBADF, fd = -EBADF;
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        char proc[64], buf[PATH_MAX];
        ssize_t n;

        assert(path);
        assert(ret);

        /* On the host, the kernel's own resolution is already the right one. */
        if (isempty(root) || streq(root, "/")) {
                char *r = strdup(path);

                if (!r)
                        return -ENOMEM;
                *ret = r;
                return 0;
        }

        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return negative_errno();
        fd = (int) syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
        if (fd < 0)
                return negative_errno();

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

int dir_list_suffix(const char *dir, const char *suffix, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        DIR *d;
        struct dirent *de;
        int r = 0;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;

        d = opendir(dir);
        if (!d) {
                if (errno != ENOENT && errno != ENOTDIR)
                        return negative_errno();
                *ret = TAKE_PTR(l);
                return 0;
        }

        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (suffix && !endswith(de->d_name, suffix))
                        continue;
                r = strv_extend(&l, de->d_name);
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r < 0)
                return r;

        strv_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

const char *mode_to_string(uint32_t mode, char buf[static 11]) {
        static const char rwx[] = "rwxrwxrwx";
        char t;

        switch (mode & S_IFMT) {
        case S_IFDIR: t = 'd'; break;
        case S_IFLNK: t = 'l'; break;
        case S_IFCHR: t = 'c'; break;
        case S_IFBLK: t = 'b'; break;
        case S_IFIFO: t = 'p'; break;
        case S_IFSOCK: t = 's'; break;
        default: t = '-'; break;
        }

        buf[0] = t;
        for (int i = 0; i < 9; i++)
                buf[i + 1] = (mode & (0400 >> i)) ? rwx[i] : '-';
        if (mode & S_ISUID)
                buf[3] = buf[3] == 'x' ? 's' : 'S';
        if (mode & S_ISGID)
                buf[6] = buf[6] == 'x' ? 's' : 'S';
        if (mode & S_ISVTX)
                buf[9] = buf[9] == 'x' ? 't' : 'T';
        buf[10] = 0;
        return buf;
}

/* ---- cleanup on SIGINT, SIGTERM and SIGHUP ----
 *
 * The handler does the cleanup itself and then dies of the signal: waiting for the code to notice
 * a flag would not work while it computes (compression) or blocks on a slow source. Everything in
 * it is async-signal-safe: fixed slots filled before they are marked active, and kill(), waitpid(),
 * unlinkat(), openat(), getdents64 and close(). Files that hold key material never need a slot:
 * they are O_TMPFILE or memfd files, which the kernel frees even after SIGKILL. */

typedef struct CleanupSlot {
        volatile sig_atomic_t active;
        bool tree;
        volatile pid_t child;
        char path[PATH_MAX];
} CleanupSlot;

static CleanupSlot cleanup_slots[8];
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };

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

static void cleanup_signal_handler(int sig) {
        for (size_t i = 0; i < ELEMENTSOF(cleanup_slots); i++) {
                CleanupSlot *s = cleanup_slots + i;

                if (!s->active)
                        continue;
                /* A child (depmod) could still be writing into the directory. */
                if (s->child > 0) {
                        (void) kill(s->child, SIGKILL);
                        (void) waitpid(s->child, NULL, 0);
                }
                if (s->tree)
                        rm_rf_at(AT_FDCWD, s->path, 0);
                else
                        (void) unlink(s->path);
        }
        /* Die of the signal, so the caller sees why; it is delivered when the handler returns. */
        signal(sig, SIG_DFL);
        raise(sig);
}

int cleanup_on_signal_setup(void) {
        struct sigaction sa = { .sa_handler = cleanup_signal_handler };

        sigfillset(&sa.sa_mask);        /* one cleanup at a time */
        for (size_t i = 0; i < ELEMENTSOF(cleanup_signals); i++)
                if (sigaction(cleanup_signals[i], &sa, NULL) < 0)
                        return negative_errno();
        return 0;
}

int cleanup_register(const char *path, bool tree) {
        assert(path);

        if (strlen(path) >= PATH_MAX)
                return -ENAMETOOLONG;
        for (size_t i = 0; i < ELEMENTSOF(cleanup_slots); i++) {
                CleanupSlot *s = cleanup_slots + i;

                if (s->active)
                        continue;
                strcpy(s->path, path);
                s->tree = tree;
                s->child = 0;
                __atomic_signal_fence(__ATOMIC_SEQ_CST);  /* the path is complete before the handler may use it */
                s->active = 1;
                return (int) i;
        }
        return -ENOBUFS;
}

void cleanup_set_child(int slot, pid_t pid) {
        if (slot >= 0 && (size_t) slot < ELEMENTSOF(cleanup_slots))
                cleanup_slots[slot].child = pid;
}

void cleanup_unregister(int slot) {
        if (slot >= 0 && (size_t) slot < ELEMENTSOF(cleanup_slots))
                cleanup_slots[slot].active = 0;
}

const char *tmp_dir(void) {
        const char *e = getenv("TMPDIR");

        return !isempty(e) && e[0] == '/' ? e : "/tmp";
}
