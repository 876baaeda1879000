/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The helpers every planner uses to add paths of the source tree, trees of the build host and
 * generated files. They call into the manifest and the utility layer only, never into a planner. */

#include <assert.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "path-util.h"
#include "plan-util.h"
#include "util.h"

int plan_add_item(Manifest *m, const char *path, Need need, const char *why) {
        _cleanup_free_ char *reason = strjoin(path_basename(path), why ? " (" : "", strempty(why), why ? ")" : "");
        int r;

        assert(m);
        assert(path);

        if (!reason)
                return log_oom();
        r = manifest_add_from_root(m, path, reason, NULL);
        if (r == -ENOENT) {
                if (need == NEED_REQUIRED)
                        return log_error_errno(r, "Required file %s%s is missing (needed for %s).",
                                               streq(m->root, "/") ? "" : m->root, path, why ?: "the initrd transaction");
                log_debug("Optional %s not present, skipping.", path);
                return 0;
        }
        if (r == -EEXIST)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to add %s: %m", path);
        return 0;
}

int plan_add_items(Manifest *m, const Item *items, size_t n) {
        int r;

        assert(m);

        for (size_t i = 0; i < n; i++) {
                r = plan_add_item(m, items[i].path, items[i].need, items[i].why);
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_add_tree(Manifest *m, const char *src, const char *dest, const char *reason) {
        struct stat st;
        int r;

        assert(m);

        if (lstat(src, &st) < 0)
                return log_error_errno(errno, "Failed to access %s: %m", src);

        if (S_ISDIR(st.st_mode)) {
                _cleanup_strv_free_ char **names = NULL;

                r = manifest_add_directory(m, dest, st.st_mode, reason);
                if (r < 0 && r != -EEXIST)
                        return log_error_errno(r, "Failed to add %s: %m", dest);
                r = dir_list_suffix(src, NULL, &names);
                if (r < 0)
                        return log_error_errno(r, "Failed to list %s: %m", src);
                STRV_FOREACH(n, names) {
                        _cleanup_free_ char *s = strjoin(src, "/", *n), *d = strjoin(dest, "/", *n);

                        if (streq(*n, "meson.build"))
                                continue;
                        if (!s || !d)
                                return log_oom();
                        r = plan_add_tree(m, s, d, reason);
                        if (r < 0)
                                return r;
                }
                return 0;
        }

        if (S_ISLNK(st.st_mode)) {
                char target[4096];
                ssize_t n = readlink(src, target, sizeof(target) - 1);

                if (n < 0)
                        return log_error_errno(errno, "Failed to read link %s: %m", src);
                target[n] = 0;
                r = manifest_add_symlink(m, dest, target, reason);
        } else if (S_ISREG(st.st_mode))
                r = manifest_add_file(m, dest, src, reason);
        else
                return log_error_errno(SYNTHETIC_ERRNO(EBADFD), "%s is not a file, directory or symlink.", src);
        if (r == -EEXIST)
                return log_error_errno(r, "%s (from %s) conflicts with %s already in the image.", dest, src,
                                       manifest_find(m, dest)->reason);
        if (r < 0)
                return log_error_errno(r, "Failed to add %s: %m", dest);
        return 0;
}

int plan_add_text(Manifest *m, const char *path, uint32_t mode, const char *text, const char *reason) {
        int r = manifest_add_data(m, path, mode, text, strlen(text), reason);

        assert(m);
        assert(path);
        assert(text);

        if (r < 0)
                return log_error_errno(r, "Failed to add %s: %m", path);
        return 0;
}

int plan_split_file_spec(const char *option, const char *spec, char **ret_src, char **ret_dest) {
        _cleanup_free_ char *src = NULL, *dest = NULL;
        const char *colon = strchr(spec, ':');

        src = colon ? strndup(spec, colon - spec) : strdup(spec);
        dest = colon ? strdup(colon + 1) : strdup(spec);
        if (!src || !dest)
                return log_oom();
        if (dest[0] != '/')
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "%s %s: the destination must be absolute (use SRC:/DEST).", option, spec);
        *ret_src = TAKE_PTR(src);
        *ret_dest = TAKE_PTR(dest);
        return 0;
}

int plan_add_helper(Manifest *m, const char *dest, const char *why, const char *without) {
        const char *dirs = getenv("FOYER_HELPER_DIR") ?: FOYER_LIB_DIR;
        _cleanup_free_ char *src = NULL;
        struct stat st;
        int r;

        assert(m);
        assert(dest);
        assert(why);

        /* $FOYER_HELPER_DIR is a list like $PATH (a build tree has the helpers in two directories):
         * the first that holds the program, else the last, for the message. */
        for (const char *d = dirs;;) {
                size_t l = strcspn(d, ":");

                free(src);
                src = strjoin(strndupa(d, l), "/", path_basename(dest));
                if (!src)
                        return log_oom();
                if (stat(src, &st) >= 0 || d[l] == 0)
                        break;
                d += l + 1;
        }
        if (without && (stat(src, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))) {
                log_debug("%s is missing (set FOYER_HELPER_DIR); %s.", src, without);
                return 0;
        }
        r = manifest_add_file(m, dest, src, why);
        if (r == -EEXIST)
                return 0;
        if (r < 0)
                return log_error_errno(r, "foyer's %s is missing (set FOYER_HELPER_DIR): %m", src);
        manifest_mark_host_built(manifest_find(m, dest));
        return 0;
}

int plan_add_unit_wanted(Manifest *m, const char *name, const char *target, const char *why) {
        _cleanup_free_ char *path = strjoin(UNITDIR "/", name);
        _cleanup_free_ char *link = strjoin(UNITDIR "/", target, ".wants/", name);
        _cleanup_free_ char *link_target = strjoin("../", name);
        int r;

        assert(m);
        assert(name);
        assert(target);

        if (!path || !link || !link_target)
                return log_oom();
        r = plan_add_item(m, path, NEED_REQUIRED, why);
        if (r < 0)
                return r;
        if (manifest_find(m, link))
                return 0;
        r = manifest_add_symlink(m, link, link_target, why);
        if (r < 0)
                return log_error_errno(r, "Failed to add %s: %m", link);
        return 0;
}

bool plan_tree_has(Manifest *m, const char *path, int mode) {
        _cleanup_free_ char *p = NULL;

        assert(m);
        assert(path);

        return path_in_root(m->root, path, false, &p) >= 0 && access(p, mode) >= 0;
}
