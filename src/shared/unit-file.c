/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "fileio.h"
#include "strv.h"
#include "unit-file.h"
#include "unit-name.h"

struct UnitFile {
        FILE *f;
        int dir_fd;
        char *path;    /* dir/name */
        char *base;    /* last component of name */
        char *tmp;     /* temporary name in dir_fd when O_TMPFILE is unavailable */
        size_t bad_line; /* the first line unit_file_check_text() refused, for messages */
        bool committed;
};

bool unit_value_is_safe(const char *value) {
        assert(value);

        /* A newline would start a new line (a new setting or section), and a backslash at the end of a
         * line makes systemd's parser join the next one: either way the value would add settings. */
        return !string_has_cc(value) && !endswith(value, "\\");
}

int unit_file_check_text(const char *text, size_t size, size_t *ret_line) {
        size_t line = 1;

        assert(text || size == 0);

        for (size_t i = 0; i < size; i++) {
                unsigned char c = text[i];

                if (c == '\n') {
                        if (i > 0 && text[i - 1] == '\\')
                                goto bad;
                        line++;
                } else if ((c < 0x20 && c != '\t') || c == 0x7f)
                        goto bad;
        }
        if (size > 0 && text[size - 1] == '\\')
                goto bad;
        return 0;
bad:
        if (ret_line)
                *ret_line = line;
        return -EBADMSG;
}

int unit_file_write_value(FILE *f, const char *key, const char *value) {
        _cleanup_free_ char *e = NULL;

        assert(f);
        assert(key);
        assert(value);

        if (!unit_value_is_safe(value))
                return -EBADMSG;
        e = specifier_escape(value);
        if (!e)
                return -ENOMEM;
        fprintf(f, "%s=%s\n", key, e);
        return 0;
}

/* A name below an output directory: relative, every component non-empty and not "." or "..", so that
 * dir/name stays inside dir. */
static bool relative_name_is_safe(const char *name) {
        if (isempty(name) || name[0] == '/')
                return false;
        for (const char *p = name;;) {
                size_t l = strcspn(p, "/");

                if (l == 0 || (l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                if (!p[l])
                        return true;
                p += l + 1;
        }
}

UnitFile *unit_file_free(UnitFile *u) {
        if (!u)
                return NULL;
        if (u->f)
                fclose(u->f);
        if (u->tmp && !u->committed)
                (void) unlinkat(u->dir_fd, u->tmp, 0);
        if (u->dir_fd >= 0)
                close(u->dir_fd);
        free(u->path);
        free(u->tmp);
        free(u);
        return NULL;
}

FILE *unit_file_stream(UnitFile *u) {
        return u->f;
}

const char *unit_file_path(UnitFile *u) {
        return u->path;
}

size_t unit_file_bad_line(UnitFile *u) {
        return u->bad_line;
}

int unit_file_open(const char *dir, const char *name, UnitFile **ret) {
        _cleanup_unit_file_ UnitFile *u = NULL;
        _cleanup_free_ char *parent = NULL;
        int fd, r;

        assert(dir);
        assert(name);
        assert(ret);

        if (!relative_name_is_safe(name))
                return -EINVAL;

        u = calloc(1, sizeof(UnitFile));
        if (!u)
                return -ENOMEM;
        u->dir_fd = -EBADF;

        u->path = strjoin(dir, "/", name);
        if (!u->path)
                return -ENOMEM;
        u->base = strrchr(u->path, '/') + 1;
        parent = strndup(u->path, u->base - u->path - 1);
        if (!parent)
                return -ENOMEM;

        r = mkdir_p(parent, 0755);
        if (r < 0)
                return r;
        u->dir_fd = open(parent, O_DIRECTORY | O_PATH | O_CLOEXEC);
        if (u->dir_fd < 0)
                return -errno;

        /* Fail early on a duplicate; unit_file_commit() checks again without a race. */
        if (faccessat(u->dir_fd, u->base, F_OK, AT_SYMLINK_NOFOLLOW) >= 0)
                return -EEXIST;

        /* Readable too: unit_file_commit() checks what was written before publishing it. */
        fd = open(parent, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
        if (fd < 0) {
                u->tmp = strjoin(".#", u->base, ".XXXXXX");
                if (!u->tmp)
                        return -ENOMEM;
                _cleanup_free_ char *full = strjoin(parent, "/", u->tmp);
                if (!full)
                        return -ENOMEM;
                fd = mkostemp(full, O_CLOEXEC);
                if (fd < 0) {
                        free(u->tmp);
                        u->tmp = NULL;
                        return -errno;
                }
                strcpy(u->tmp, full + strlen(parent) + 1);
        }
        (void) fchmod(fd, 0644);

        u->f = fdopen(fd, "w");
        if (!u->f) {
                r = -errno;
                close(fd);
                return r;
        }
        fprintf(u->f, "# Automatically generated by %s\n\n", program_invocation_short_name);

        *ret = TAKE_PTR(u);
        return 0;
}

/* Reads back what was written to u and checks it with unit_file_check_text(). */
static int unit_file_check_written(UnitFile *u) {
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        ssize_t n;

        if (fstat(fileno(u->f), &st) < 0)
                return -errno;
        buf = malloc(st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        n = pread(fileno(u->f), buf, st.st_size, 0);
        if (n < 0)
                return -errno;
        if (n != st.st_size)
                return -EIO;
        return unit_file_check_text(buf, n, &u->bad_line);
}

int unit_file_commit(UnitFile *u) {
        int r;

        assert(u);

        r = fflush_and_check(u->f);
        if (r < 0)
                return r;
        /* The last line of defence against values that escaped their line: never publish such a file. */
        r = unit_file_check_written(u);
        if (r < 0)
                return r;

        if (u->tmp) {
                /* link() never replaces an existing name, unlike rename(). */
                if (linkat(u->dir_fd, u->tmp, u->dir_fd, u->base, 0) < 0)
                        return -errno;
                (void) unlinkat(u->dir_fd, u->tmp, 0);
        } else {
                char proc[64];

                snprintf(proc, sizeof(proc), "/proc/self/fd/%i", fileno(u->f));
                if (linkat(AT_FDCWD, proc, u->dir_fd, u->base, AT_SYMLINK_FOLLOW) < 0) {
                        if (errno == EEXIST)
                                return -EEXIST;
                        if (linkat(fileno(u->f), "", u->dir_fd, u->base, AT_EMPTY_PATH) < 0)
                                return -errno;
                }
        }
        u->committed = true;
        return 0;
}

int unit_file_add_symlink(const char *dir, const char *target, const char *dep_type, const char *src) {
        const char *bn;

        assert(src);

        bn = strrchr(src, '/');
        return unit_file_add_symlink_as(dir, target, dep_type, src, bn ? bn + 1 : src);
}

int unit_file_add_symlink_as(const char *dir, const char *target, const char *dep_type, const char *src,
                             const char *name) {
        _cleanup_free_ char *from = NULL, *to = NULL;
        const char *bn = strrchr(src, '/');
        int r;

        assert(dir);
        assert(target);
        assert(dep_type);
        assert(src);
        assert(name);

        /* Every name here becomes a path component: only unit names, so that nothing lands outside
         * dir. A relative src is a unit in dir itself. */
        bn = bn ? bn + 1 : src;
        if (!unit_name_is_valid(target) || !(streq(dep_type, "wants") || streq(dep_type, "requires")) ||
            !unit_name_is_valid(bn) || !unit_name_is_valid(name) || (src[0] != '/' && bn != src) ||
            !path_is_safe(src))
                return -EINVAL;
        from = src[0] == '/' ? strdup(src) : strjoin("../", src);
        to = strjoin(dir, "/", target, ".", dep_type, "/", name);
        if (!from || !to)
                return -ENOMEM;
        r = mkdir_parents(to, 0755);
        if (r < 0)
                return r;
        if (symlink(from, to) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int unit_file_add_mask(const char *dir, const char *unit) {
        _cleanup_free_ char *p = NULL;
        int r;

        assert(dir);
        assert(unit);

        if (!unit_name_is_valid(unit))
                return -EINVAL;
        p = strjoin(dir, "/", unit);
        if (!p)
                return -ENOMEM;
        r = mkdir_p(dir, 0755);
        if (r < 0)
                return r;
        if (symlink("/dev/null", p) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int unit_file_write_dropin(const char *dir, const char *unit, unsigned level, const char *name,
                           const char *body) {
        _cleanup_free_ char *path = NULL;
        char nn[16];
        int r;

        assert(dir);
        assert(unit);
        assert(name);
        assert(body);

        if (!unit_name_is_valid(unit) || !relative_name_is_safe(name) || strchr(name, '/'))
                return -EINVAL;
        r = unit_file_check_text(body, strlen(body), NULL);
        if (r < 0)
                return r;
        snprintf(nn, sizeof(nn), "%02u-", level);
        path = strjoin(dir, "/", unit, ".d/", nn, name, ".conf");
        if (!path)
                return -ENOMEM;
        r = mkdir_parents(path, 0755);
        if (r < 0)
                return r;
        return write_string_file_atomic(path, body);
}

int unit_file_write_dropinf(const char *dir, const char *unit, unsigned level, const char *name,
                            const char *format, ...) {
        _cleanup_free_ char *body = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&body, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return unit_file_write_dropin(dir, unit, level, name, body);
}
