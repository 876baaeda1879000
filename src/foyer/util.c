/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "util.h"

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
 * unlink() and rm_rf() (src/shared/fileio.c: unlinkat(), openat(), getdents64 and close()). Files that hold key material never need a slot:
 * they are O_TMPFILE or memfd files, which the kernel frees even after SIGKILL. */

typedef struct CleanupSlot {
        volatile sig_atomic_t active;
        bool tree;
        volatile pid_t child;
        char path[PATH_MAX];
} CleanupSlot;

static CleanupSlot cleanup_slots[8];
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };

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
                        rm_rf(s->path);
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
