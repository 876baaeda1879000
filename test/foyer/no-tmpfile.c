/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* LD_PRELOAD shim for test-foyer-interrupt.sh: open() and openat() with O_TMPFILE fail with
 * EOPNOTSUPP, as they do on vfat (the usual ESP), so that foyer takes its named temporary file on
 * any file system; everything else goes to libc's. */

/* Each of the four names defined here as itself, not open() renamed to open64(). */
#undef _FILE_OFFSET_BITS

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>

static bool is_tmpfile(int flags) {
        return (flags & O_TMPFILE) == O_TMPFILE;
}

/* The mode argument exists only with O_CREAT or O_TMPFILE. */
#define MODE_ARG(flags, mode)                                           \
        do {                                                            \
                if ((flags) & (O_CREAT | O_TMPFILE)) {                  \
                        va_list ap;                                     \
                        va_start(ap, flags);                            \
                        mode = va_arg(ap, mode_t);                      \
                        va_end(ap);                                     \
                }                                                       \
        } while (false)

#define SHIM_OPENAT(name)                                                               \
        int name(int dir_fd, const char *path, int flags, ...) {                        \
                static int (*real)(int, const char *, int, ...);                        \
                mode_t mode = 0;                                                        \
                                                                                        \
                MODE_ARG(flags, mode);                                                  \
                if (is_tmpfile(flags)) {                                                \
                        errno = EOPNOTSUPP;                                             \
                        return -1;                                                      \
                }                                                                       \
                if (!real)                                                              \
                        real = (int (*)(int, const char *, int, ...)) dlsym(RTLD_NEXT, #name); \
                return real(dir_fd, path, flags, mode);                                 \
        }

#define SHIM_OPEN(name)                                                                 \
        int name(const char *path, int flags, ...) {                                    \
                static int (*real)(const char *, int, ...);                             \
                mode_t mode = 0;                                                        \
                                                                                        \
                MODE_ARG(flags, mode);                                                  \
                if (is_tmpfile(flags)) {                                                \
                        errno = EOPNOTSUPP;                                             \
                        return -1;                                                      \
                }                                                                       \
                if (!real)                                                              \
                        real = (int (*)(const char *, int, ...)) dlsym(RTLD_NEXT, #name); \
                return real(path, flags, mode);                                         \
        }

SHIM_OPENAT(openat)
SHIM_OPENAT(openat64)
SHIM_OPEN(open)
SHIM_OPEN(open64)
