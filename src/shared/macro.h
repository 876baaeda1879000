/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers every foyer program uses: cleanup attributes, ownership transfer and
 * errno conventions. Modelled on systemd's macro.h, reduced to what foyer needs. */

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))
#define _pure_ __attribute__((pure))
#define _sentinel_ __attribute__((sentinel))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define ALIGN_TO(l, ali) (((l) + (ali) - 1) & ~((__typeof__(l)) (ali) - 1))

/* assert()s that a pointer argument is not NULL and evaluates to it: Foo *f = ASSERT_PTR(userdata); */
#define ASSERT_PTR(p)                            \
        ({                                       \
                __typeof__(p) _p_ = (p);         \
                assert(_p_);                     \
                _p_;                             \
        })

/* Hand over ownership of a pointer or fd held by a _cleanup_ variable. */
#define TAKE_PTR(p)                              \
        ({                                       \
                __typeof__(p) _ptr_ = (p);       \
                (p) = NULL;                      \
                _ptr_;                           \
        })
#define TAKE_FD(fd)                              \
        ({                                       \
                int _fd_ = (fd);                 \
                (fd) = -EBADF;                   \
                _fd_;                            \
        })

/* Errors foyer invents itself carry this bit so that log functions do not consult errno. */
#define SYNTHETIC_ERRNO(e) ((1 << 30) | (e))
#define ERRNO_VALUE(e) (abs(e) & ~(1 << 30))

/* Converts libc's -1/errno convention at the boundary; never returns a raw -1. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EINVAL;
}

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Frees a NULL-terminated array of strings and the array itself; NULL-safe. */
static inline char **strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **i = l; *i; i++)
                free(*i);
        free(l);
        return NULL;
}
static inline void strv_freep(char ***l) {
        strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

/* One-line cleanup function for a foreign type: DEFINE_TRIVIAL_CLEANUP_FUNC(struct kmod_ctx *, kmod_unref) */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)          \
        static inline void func##p(type *p) {            \
                if (*p)                                  \
                        func(*p);                        \
        }

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}
#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)
static inline bool isempty(const char *s) {
        return !s || !*s;
}
static inline const char *strempty(const char *s) {
        return s ?: "";
}
static inline const char *strna(const char *s) {
        return s ?: "n/a";
}

/* Returns the part after prefix when s starts with it, NULL otherwise. */
static inline const char *startswith(const char *s, const char *prefix) {
        size_t l = strlen(prefix);
        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}
static inline const char *endswith(const char *s, const char *suffix) {
        size_t sl = strlen(s), pl = strlen(suffix);
        return sl >= pl && memcmp(s + sl - pl, suffix, pl) == 0 ? s + sl - pl : NULL;
}

/* True if x equals one of the listed values (of x's type): IN_SET(argc, 2, 4),
 * IN_SET(errno, ENOENT, ENOTDIR), IN_SET(mode, VOLATILE_YES, VOLATILE_OVERLAY). */
#define IN_SET(x, ...)                                                   \
        ({                                                               \
                const __typeof__(x) _x_ = (x);                           \
                const __typeof__(x) _l_[] = { __VA_ARGS__ };             \
                bool _found_ = false;                                    \
                for (size_t _i_ = 0; _i_ < ELEMENTSOF(_l_); _i_++)       \
                        if (_l_[_i_] == _x_) {                           \
                                _found_ = true;                          \
                                break;                                   \
                        }                                                \
                _found_;                                                 \
        })

/* Gathers the first error of several steps that all run: after "r = 0; RET_GATHER(r, a());
 * RET_GATHER(r, b());" r is a()'s error, else b()'s, else 0. Evaluates to err, so that a caller can
 * still act on the step's own result. As systemd's RET_GATHER(). */
#define RET_GATHER(ret, err)                                             \
        ({                                                               \
                int *_ret_ = &(ret), _err_ = (err);                      \
                if (*_ret_ >= 0 && _err_ < 0)                            \
                        *_ret_ = _err_;                                  \
                _err_;                                                   \
        })
