/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <sys/stat.h>
#include <sys/utsname.h>

#include "log.h"
#include "probe.h"
#include "util.h"

static int list_kernels(const char *root, char ***ret) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_strv_free_ char **all = NULL, **l = NULL;
        int r;

        r = path_in_root(root, "/usr/lib/modules", false, &dir);
        if (r == -ENOENT) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
                *ret = TAKE_PTR(l);
                return 0;
        }
        if (r < 0)
                return r;
        r = dir_list_suffix(dir, NULL, &all);
        if (r < 0)
                return r;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        STRV_FOREACH(k, all) {
                _cleanup_free_ char *order = strjoin("/usr/lib/modules/", *k, "/modules.order"), *found = NULL;

                if (!order)
                        return -ENOMEM;
                r = path_in_root(root, order, false, &found);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                r = strv_extend(&l, *k);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static char *kernels_joined(char **l) {
        char *s = strdup("");

        STRV_FOREACH(k, l) {
                char *t = strjoin(s ?: "", s && *s ? ", " : "", *k);
                free(s);
                s = t;
        }
        return s && *s ? s : (free(s), strdup("none"));
}

static int read_pretty_name(const char *root, char **ret) {
        FOREACH_STRING(p, "/etc/os-release", "/usr/lib/os-release") {
                _cleanup_free_ char *text = NULL;
                char *line, *saveptr = NULL;
                int r;

                r = read_full_file_in_root(root, p, &text, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                for (line = strtok_r(text, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
                        const char *v = startswith(line, "PRETTY_NAME=");
                        size_t n;

                        if (!v)
                                continue;
                        n = strlen(v);
                        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
                                v++;
                                n -= 2;
                        }
                        *ret = strndup(v, n);
                        return *ret ? 0 : -ENOMEM;
                }
        }
        *ret = strdup("Linux");
        return *ret ? 0 : -ENOMEM;
}

int probe_host(const char *root, const char *kver, Probe *ret) {
        _cleanup_strv_free_ char **kernels = NULL;
        _cleanup_free_ char *chosen = NULL, *moddir = NULL, *pretty = NULL, *present = NULL;
        int r;

        r = list_kernels(root, &kernels);
        if (r < 0)
                return log_error_errno(r, "Failed to list kernels under %s/usr/lib/modules: %m",
                                       streq(root, "/") ? "" : root);
        present = kernels_joined(kernels);
        if (!present)
                return log_oom();

        if (kver) {
                if (!strv_contains(kernels, kver))
                        return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                               "Kernel version %s has no modules in %s/usr/lib/modules (present: %s).",
                                               kver, streq(root, "/") ? "" : root, present);
                chosen = strdup(kver);
        } else {
                struct utsname u;

                if (uname(&u) >= 0 && strv_contains(kernels, u.release)) {
                        log_debug("Using the running kernel %s.", u.release);
                        chosen = strdup(u.release);
                } else if (strv_length(kernels) == 1) {
                        log_debug("Running kernel %s has no modules here, using the only one present, %s.",
                                  u.release, kernels[0]);
                        chosen = strdup(kernels[0]);
                } else
                        return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                               "Cannot pick a kernel: the running one has no modules and %s kernels are present (%s); use --kver.",
                                               strv_length(kernels) == 0 ? "no" : "several", present);
        }
        if (!chosen)
                return log_oom();

        _cleanup_free_ char *rel = strjoin("/usr/lib/modules/", chosen);
        if (!rel)
                return log_oom();
        r = path_in_root(root, rel, false, &moddir);
        if (r < 0)
                return log_error_errno(r, "Failed to resolve %s in %s: %m", rel, root);

        r = read_pretty_name(root, &pretty);
        if (r < 0)
                return log_oom();

        *ret = (Probe) {
                .kver = TAKE_PTR(chosen),
                .moddir = TAKE_PTR(moddir),
                .os_pretty_name = TAKE_PTR(pretty),
        };
        return 0;
}

void probe_done(Probe *p) {
        free(p->kver);
        free(p->moddir);
        free(p->os_pretty_name);
        *p = (Probe) {};
}
