/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <search.h>
#include <sys/stat.h>

#include "elf-file.h"
#include "log.h"
#include "manifest.h"
#include "util.h"

static int entry_cmp(const void *a, const void *b) {
        return strcmp(((const Entry *) a)->path, ((const Entry *) b)->path);
}

static Entry *entry_free(Entry *e) {
        if (!e)
                return NULL;
        free(e->path);
        free(e->source);
        free(e->target);
        free(e->data);
        free(e->reason);
        elf_file_free(e->elf);
        free(e);
        return NULL;
}

int manifest_new(const char *root, Manifest **ret) {
        _cleanup_(manifest_freep) Manifest *m = NULL;
        int r;

        m = calloc(1, sizeof(Manifest));
        if (!m)
                return -ENOMEM;
        m->root_fd = -EBADF;
        m->root = strdup(isempty(root) ? "/" : root);
        if (!m->root)
                return -ENOMEM;
        if (!streq(m->root, "/")) {
                m->root_fd = open(m->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (m->root_fd < 0)
                        return negative_errno();
                r = fd_get_path(m->root_fd, &m->root_path);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(m);
        return 0;
}

static void noop_free(void *p) {
}

Manifest *manifest_free(Manifest *m) {
        if (!m)
                return NULL;
        tdestroy(m->index, noop_free);
        for (size_t i = 0; i < m->n_entries; i++)
                entry_free(m->entries[i]);
        free(m->entries);
        free(m->root);
        free(m->root_path);
        if (m->root_fd >= 0)
                close(m->root_fd);
        free(m);
        return NULL;
}

Entry *manifest_find(Manifest *m, const char *path) {
        Entry key = { .path = (char *) path };
        Entry **found = tfind(&key, &m->index, entry_cmp);

        return found ? *found : NULL;
}

static bool entry_equal(const Entry *a, const Entry *b) {
        if (a->type != b->type)
                return false;
        switch (a->type) {
        case ENTRY_DIRECTORY:
                return true;
        case ENTRY_SYMLINK:
                return streq(a->target, b->target);
        case ENTRY_FILE:
                return a->source_dev == b->source_dev && a->source_ino == b->source_ino;
        case ENTRY_CHAR_DEVICE:
                return a->rdev_major == b->rdev_major && a->rdev_minor == b->rdev_minor;
        case ENTRY_DATA:
                return a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
        default:
                return false;
        }
}

static int manifest_ensure_parents(Manifest *m, const char *path);

/* Takes ownership of e in all cases. */
static int manifest_insert(Manifest *m, Entry *e) {
        Entry *old;
        void *slot;
        int r;

        if (!e->path || !e->reason || (e->type == ENTRY_SYMLINK && !e->target) ||
            (e->type == ENTRY_FILE && !e->source)) {
                entry_free(e);
                return -ENOMEM;
        }

        old = manifest_find(m, e->path);
        if (old) {
                bool same = entry_equal(old, e);

                if (!same)
                        log_debug("Conflicting entries for %s: kept the one for %s, not the one for %s.",
                                  e->path, old->reason, e->reason);
                entry_free(e);
                return same ? 0 : -EEXIST;
        }

        r = manifest_ensure_parents(m, e->path);
        if (r < 0) {
                entry_free(e);
                return r;
        }

        if (m->n_entries >= m->n_allocated) {
                size_t na = MAX(m->n_allocated * 2, (size_t) 256);
                Entry **t = realloc(m->entries, na * sizeof(Entry *));
                if (!t) {
                        entry_free(e);
                        return -ENOMEM;
                }
                m->entries = t;
                m->n_allocated = na;
        }

        slot = tsearch(e, &m->index, entry_cmp);
        if (!slot) {
                entry_free(e);
                return -ENOMEM;
        }
        m->entries[m->n_entries++] = e;
        return 1;
}

static int manifest_ensure_parents(Manifest *m, const char *path) {
        _cleanup_free_ char *parent = path_dirname(path);
        Entry *e;
        int r;

        if (!parent)
                return -ENOMEM;
        if (streq(parent, "/"))
                return 0;

        e = manifest_find(m, parent);
        if (e) {
                if (e->type == ENTRY_DIRECTORY)
                        return 0;
                /* A symlink is fine as a parent as long as it stands for a directory we hold,
                 * e.g. /lib64 → usr/lib64; the entry below it is then unreachable anyway. */
                return log_debug_errno(SYNTHETIC_ERRNO(ENOTDIR), "Parent %s of %s is not a directory.",
                                       parent, path);
        }

        r = manifest_add_directory(m, parent, 0755, "parent directory");
        return r < 0 ? r : 0;
}

static Entry *entry_new(const char *path, EntryType type, uint32_t mode, const char *reason) {
        Entry *e = calloc(1, sizeof(Entry));

        if (!e)
                return NULL;
        e->path = path_simplify_abs(path);
        e->type = type;
        e->mode = mode & 07777;
        e->reason = strdup(reason);
        return e;
}

int manifest_add_directory(Manifest *m, const char *path, uint32_t mode, const char *reason) {
        Entry *e = entry_new(path, ENTRY_DIRECTORY, mode, reason);

        return e ? manifest_insert(m, e) : -ENOMEM;
}

int manifest_add_symlink(Manifest *m, const char *path, const char *target, const char *reason) {
        Entry *e = entry_new(path, ENTRY_SYMLINK, 0777, reason);

        if (!e)
                return -ENOMEM;
        e->target = strdup(target);
        return manifest_insert(m, e);
}

int manifest_add_char_device(Manifest *m, const char *path, uint32_t mode, unsigned major, unsigned minor,
                             const char *reason) {
        Entry *e = entry_new(path, ENTRY_CHAR_DEVICE, mode, reason);

        if (!e)
                return -ENOMEM;
        e->rdev_major = major;
        e->rdev_minor = minor;
        return manifest_insert(m, e);
}

int manifest_add_data(Manifest *m, const char *path, uint32_t mode, const void *data, size_t size,
                      const char *reason) {
        Entry *e = entry_new(path, ENTRY_DATA, mode, reason);

        if (!e)
                return -ENOMEM;
        e->data = malloc(size + 1);
        if (!e->data) {
                entry_free(e);
                return -ENOMEM;
        }
        memcpy(e->data, data, size);
        e->size = size;
        return manifest_insert(m, e);
}

/* An O_PATH descriptor of source: below the tree, opened from the tree with no symlink on the way
 * (path_in_root() returned a path with none; if one is there now, the tree changed); elsewhere, a
 * path the user or foyer named on the build host, opened as it is. */
static int open_source_path(Manifest *m, const char *source) {
        const char *rest = m->root_path ? startswith(source, m->root_path) : NULL;
        int fd;

        if (rest && *rest == '/')
                return openat_beneath(m->root_fd, rest + 1, 0);
        if (rest && *rest == 0)
                return -EISDIR;
        fd = open(source, O_PATH | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

static int add_file_stat(Manifest *m, const char *path, const char *source, const struct stat *st,
                         const char *reason) {
        Entry *e;

        if (!S_ISREG(st->st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(EBADFD), "%s is %s, not a regular file: refusing to put it "
                                       "in the image (as %s, for %s).", source, file_type_name(st->st_mode),
                                       path, reason);

        e = entry_new(path, ENTRY_FILE, st->st_mode, reason);
        if (!e)
                return -ENOMEM;
        e->source = strdup(source);
        e->source_dev = st->st_dev;
        e->source_ino = st->st_ino;
        e->size = st->st_size;
        return manifest_insert(m, e);
}

int manifest_add_file(Manifest *m, const char *path, const char *source, const char *reason) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        assert(m);
        assert(path);
        assert(source);

        fd = open_source_path(m, source);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        return add_file_stat(m, path, source, &st, reason);
}

int manifest_open_source(Manifest *m, const Entry *e) {
        _cleanup_close_ int path_fd = -EBADF;
        struct stat st;
        int fd;

        assert(m);
        assert(e);
        assert(e->type == ENTRY_FILE);

        path_fd = open_source_path(m, e->source);
        if (path_fd >= 0 && fstat(path_fd, &st) < 0)
                return negative_errno();
        if (path_fd < 0 || st.st_dev != e->source_dev || st.st_ino != e->source_ino)
                return log_error_errno(SYNTHETIC_ERRNO(ESTALE), "%s changed while the image was being built (%s): "
                                       "it is no longer the file planned for %s; refusing to read it.",
                                       e->source, path_fd < 0 ? strerror(-path_fd) : "another file", e->path);
        fd = fd_reopen_regular(path_fd, NULL);
        if (IN_SET(fd, -EBADFD, -EISDIR, -ELOOP))       /* the same inode number, given to another file */
                return log_error_errno(SYNTHETIC_ERRNO(ESTALE), "%s changed while the image was being built (it is "
                                       "%s now): it is no longer the file planned for %s; refusing to read it.",
                                       e->source, file_type_name(st.st_mode), e->path);
        if (fd < 0)
                return log_error_errno(fd, "Failed to open %s (for %s): %m", e->source, e->reason);
        return fd;
}

int manifest_read_source(Manifest *m, const Entry *e, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = manifest_open_source(m, e);

        if (fd < 0)
                return fd;
        return read_full_fd(fd, ret, ret_size);
}

static int add_from_root_depth(Manifest *m, const char *path, const char *reason, unsigned depth,
                               char **ret_final) {
        _cleanup_free_ char *image_path = NULL, *source = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (depth > 32)
                return -ELOOP;

        image_path = path_merge_usr(path);
        if (!image_path)
                return -ENOMEM;
        /* The directories on the way are resolved inside the root; a symlink at the end becomes an
         * entry of its own. What is looked at is the object that walk found (its descriptor), not
         * a path the tree could change in between. */
        r = open_in_root(m->root, image_path, O_NOFOLLOW, &fd);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return negative_errno();

        if (S_ISLNK(st.st_mode)) {
                _cleanup_free_ char *dir = NULL, *resolved = NULL;
                char target[PATH_MAX];
                ssize_t n;

                n = readlinkat(fd, "", target, sizeof(target) - 1);
                if (n < 0)
                        return negative_errno();
                target[n] = 0;

                r = manifest_add_symlink(m, image_path, target, reason);
                if (r < 0)
                        return r;

                if (target[0] == '/')
                        resolved = strdup(target);
                else {
                        dir = path_dirname(image_path);
                        resolved = dir ? strjoin(dir, "/", target) : NULL;
                }
                if (!resolved)
                        return -ENOMEM;

                return add_from_root_depth(m, resolved, reason, depth + 1, ret_final);
        }

        r = fd_get_path(fd, &source);
        if (r < 0)
                return r;
        if (S_ISDIR(st.st_mode))
                r = manifest_add_directory(m, image_path, st.st_mode, reason);
        else
                r = add_file_stat(m, image_path, source, &st, reason);
        if (r < 0)
                return r;

        if (ret_final)
                *ret_final = TAKE_PTR(image_path);
        return 0;
}

int manifest_add_from_root(Manifest *m, const char *path, const char *reason, char **ret_final) {
        return add_from_root_depth(m, path, reason, 0, ret_final);
}

static int entry_ptr_cmp(const void *a, const void *b) {
        return strcmp((*(Entry * const *) a)->path, (*(Entry * const *) b)->path);
}

int manifest_foreach_sorted(Manifest *m, int (*f)(Entry *e, void *userdata), void *userdata) {
        _cleanup_free_ Entry **sorted = NULL;
        int r;

        sorted = malloc(sizeof(Entry *) * MAX(m->n_entries, (size_t) 1));
        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, m->entries, sizeof(Entry *) * m->n_entries);
        qsort(sorted, m->n_entries, sizeof(Entry *), entry_ptr_cmp);

        for (size_t i = 0; i < m->n_entries; i++) {
                r = f(sorted[i], userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

void manifest_mark_secret(Entry *e) {
        assert(e);
        e->secret = true;
        e->mode = 0400;
}

void manifest_mark_host_built(Entry *e) {
        assert(e);
        assert(e->type == ENTRY_FILE);
        e->host_built = true;
}

static int collect_secret(Entry *e, void *userdata) {
        char ***secrets = userdata;

        if (e->secret && strv_extend(secrets, e->path) < 0)
                return -ENOMEM;
        return 0;
}

int manifest_secrets(Manifest *m, char ***ret) {
        _cleanup_strv_free_ char **secrets = NULL;
        int r;

        assert(m);
        assert(ret);

        r = manifest_foreach_sorted(m, collect_secret, &secrets);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(secrets);
        return 0;
}

Entry *manifest_resolve(Manifest *m, const char *path) {
        _cleanup_free_ char *p = path_merge_usr(path);
        Entry *e;

        if (!p)
                return NULL;
        e = manifest_find(m, p);
        for (unsigned depth = 0; e && e->type == ENTRY_SYMLINK && depth < 32; depth++) {
                _cleanup_free_ char *dir = path_dirname(e->path),
                                    *t = e->target[0] == '/' ? strdup(e->target) : strjoin(dir, "/", e->target),
                                    *s = t ? path_merge_usr(t) : NULL;

                if (!s)
                        return NULL;
                e = manifest_find(m, s);
        }
        return e && e->type != ENTRY_SYMLINK ? e : NULL;
}
