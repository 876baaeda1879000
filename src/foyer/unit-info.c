/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A unit file reader for the builder: only the keys that decide what the image needs. Lines are
 * joined at a trailing backslash and comments are skipped as systemd's parser does; an empty
 * assignment resets the list of that key, so drop-ins that clear ExecStart= are honoured. */

#include <assert.h>

#include "fileio.h"
#include "log.h"
#include "plan-util.h"
#include "unit-info.h"
#include "util.h"

void unit_info_done(UnitInfo *u) {
        free(u->name);
        strv_free(u->hard);
        strv_free(u->soft);
        strv_free(u->exec);
        strv_free(u->guards);
        *u = (UnitInfo) {};
}

static const char *const hard_keys[] = { "Requires", "Requisite", "BindsTo", "OnFailure", "OnSuccess", "Upholds" };
static const char *const exec_keys[] = {
        "ExecCondition", "ExecStartPre", "ExecStart", "ExecStartPost", "ExecReload", "ExecStop", "ExecStopPost",
};

bool unit_in_image(Manifest *m, const char *name) {
        _cleanup_free_ char *p = strjoin(UNITDIR "/", name);
        const char *at = strchr(name, '@'), *dot = strrchr(name, '.');

        if (!p)
                return false;
        if (manifest_find(m, p))
                return true;
        /* foo@bar.service is there if foo@.service is. */
        if (at && dot && dot > at + 1) {
                _cleanup_free_ char *prefix = strndup(name, at - name + 1),
                                    *templ = prefix ? strjoin(UNITDIR "/", prefix, dot) : NULL;

                return templ && manifest_find(m, templ);
        }
        return false;
}

/* The name of the file that holds a unit: the template for an instance. */
static int unit_file_name(const char *name, char **ret) {
        const char *at = strchr(name, '@'), *dot = strrchr(name, '.');

        if (at && dot && dot > at + 1) {
                _cleanup_free_ char *prefix = strndup(name, at - name + 1);

                *ret = prefix ? strjoin(prefix, dot) : NULL;
        } else
                *ret = strdup(name);
        return *ret ? 0 : -ENOMEM;
}

int unit_exec_program(const char *value, char **ret, bool *ret_ignore_failure) {
        const char *p = value, *end;
        size_t n;

        p += strspn(p, " \t");
        n = strspn(p, "-@:+!|");
        if (ret_ignore_failure)
                *ret_ignore_failure = memchr(p, '-', n);
        p += n;
        p += strspn(p, " \t");
        if (*p == '"' || *p == '\'') {
                end = strchr(p + 1, *p);
                p++;
                if (!end)
                        end = p + strlen(p);
        } else
                end = p + strcspn(p, " \t");
        if (end == p) {
                *ret = NULL;
                return 0;
        }
        *ret = strndup(p, end - p);
        return *ret ? 0 : -ENOMEM;
}

static int strv_remove_prefixed(char **l, const char *prefix) {
        char **w = l;

        STRV_FOREACH(s, l) {
                if (startswith(*s, prefix))
                        free(*s);
                else
                        *w++ = *s;
        }
        if (w)
                *w = NULL;
        return 0;
}

static int add_words(char ***l, const char *value) {
        _cleanup_strv_free_ char **words = NULL;
        int r;

        r = strv_split(value, " \t", &words);
        if (r < 0)
                return r;
        STRV_FOREACH(w, words)
                if (!strv_contains(*l, *w) && strv_extend(l, *w) < 0)
                        return -ENOMEM;
        return 0;
}

static int parse_assignment(UnitInfo *u, const char *section, const char *key, const char *value) {
        if (streq(section, "Unit")) {
                if (streq(key, "Wants"))
                        return isempty(value) ? 0 : add_words(&u->soft, value);
                for (size_t i = 0; i < ELEMENTSOF(hard_keys); i++)
                        if (streq(key, hard_keys[i]))
                                return isempty(value) ? 0 : add_words(&u->hard, value);
                if ((streq(key, "ConditionPathExists") || streq(key, "AssertPathExists")) &&
                    streq(value, "/etc/initrd-release"))
                        u->initrd_only = true;
                /* A unit that checks for its own program is skipped at boot when it is missing. */
                if ((streq(key, "ConditionPathExists") || streq(key, "ConditionFileIsExecutable")) &&
                    value[0] == '/')
                        return strv_extend(&u->guards, value);
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(exec_keys); i++) {
                _cleanup_free_ char *prefix = NULL, *prog = NULL;
                bool ignore;
                int r;

                if (!streq(key, exec_keys[i]))
                        continue;
                prefix = strjoin(key, "=");
                if (!prefix)
                        return -ENOMEM;
                if (isempty(value))
                        return strv_remove_prefixed(u->exec, prefix);
                r = unit_exec_program(value, &prog, &ignore);
                if (r < 0 || !prog)
                        return r;
                /* Specifiers (%i, ...) are expanded by systemd per instance; such a program cannot be
                 * checked here. */
                if (strchr(prog, '%'))
                        return 0;
                return strv_consume(&u->exec, strjoin(prefix, ignore ? "-" : "", prog));
        }
        return 0;
}

static int parse_text(UnitInfo *u, const char *text) {
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_free_ char *section = strdup(""), *joined = NULL;
        int r;

        if (!section)
                return -ENOMEM;
        r = strv_split(text, "\n", &lines);
        if (r < 0)
                return r;
        STRV_FOREACH(l, lines) {
                char *line = *l, *eq;
                size_t n;

                if (joined) {
                        char *t = strjoin(joined, " ", line);

                        if (!t)
                                return -ENOMEM;
                        free(joined);
                        joined = t;
                } else {
                        line += strspn(line, " \t");
                        if ((*line == '#' || *line == ';' || *line == 0))
                                continue;
                        joined = strdup(line);
                        if (!joined)
                                return -ENOMEM;
                }
                n = strlen(joined);
                if (n > 0 && joined[n - 1] == '\\') {
                        joined[n - 1] = 0;
                        continue;
                }
                line = joined;
                if (line[0] == '[') {
                        char *close = strchr(line, ']');

                        if (close) {
                                free(section);
                                section = strndup(line + 1, close - line - 1);
                                if (!section)
                                        return -ENOMEM;
                        }
                } else if ((eq = strchr(line, '='))) {
                        char *k = line, *v = eq + 1, *kend = eq;

                        while (kend > k && (kend[-1] == ' ' || kend[-1] == '\t'))
                                kend--;
                        *kend = 0;
                        v += strspn(v, " \t");
                        for (char *e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
                                e[-1] = 0;
                        r = parse_assignment(u, section, k, v);
                        if (r < 0)
                                return r;
                }
                free(joined);
                joined = NULL;
        }
        return 0;
}

static int parse_file(UnitInfo *u, const char *path) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_file(path, &text, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);
        r = parse_text(u, text);
        if (r < 0)
                return log_error_errno(r, "Failed to parse %s: %m", path);
        return 0;
}

static char *mfree_str(char *p) {
        free(p);
        return NULL;
}

/* The host path of an image path: the entry's source, or the tree's file if the image lacks it. */
static int unit_source(Manifest *m, const char *path, char **ret) {
        Entry *e = manifest_resolve(m, path);

        if (e && e->type == ENTRY_FILE) {
                *ret = strdup(e->source);
                return *ret ? 1 : -ENOMEM;
        }
        if (e) {                /* ENTRY_DATA: foyer writes none for units; nothing to read */
                *ret = NULL;
                return 0;
        }
        if (path_in_root(m->root, path, false, ret) < 0)
                return 0;
        /* Missing, or masked (a link to /dev/null): no unit. */
        if (access(*ret, F_OK) < 0 || streq(*ret, "/dev/null") || endswith(*ret, "/dev/null")) {
                *ret = mfree_str(*ret);
                return 0;
        }
        return 1;
}

/* Names in the tree's and the image's NAME.wants/ or .requires/ or .d/ (drop-ins: *.conf). */
static int list_dir(Manifest *m, const char *dir, const char *suffix, char ***ret) {
        _cleanup_free_ char *host = NULL, *prefix = strjoin(dir, "/");
        int r;

        if (!prefix)
                return -ENOMEM;
        if (path_in_root(m->root, dir, false, &host) >= 0) {
                r = dir_list_suffix(host, suffix, ret);
                if (r < 0 && r != -ENOENT && r != -ENOTDIR)
                        return log_error_errno(r, "Failed to list %s: %m", host);
        }
        for (size_t i = 0; i < m->n_entries; i++) {
                const char *rest = startswith(m->entries[i]->path, prefix);

                if (!rest || strchr(rest, '/') || (suffix && !endswith(rest, suffix)) || strv_contains(*ret, rest))
                        continue;
                if (strv_extend(ret, rest) < 0)
                        return -ENOMEM;
        }
        strv_sort(*ret);
        return 0;
}

int unit_info_read(Manifest *m, const char *name, UnitInfo *u) {
        _cleanup_free_ char *file = NULL, *path = NULL, *src = NULL;
        int r;

        assert(m);
        assert(name);
        assert(u);

        *u = (UnitInfo) { .name = strdup(name) };
        if (!u->name || unit_file_name(name, &file) < 0)
                return log_oom();
        path = strjoin(UNITDIR "/", file);
        if (!path)
                return log_oom();
        r = unit_source(m, path, &src);
        if (r < 0)
                return log_oom();
        if (r > 0) {
                u->found = true;
                r = parse_file(u, src);
                if (r < 0)
                        return r;
        } else if (manifest_resolve(m, path))
                u->found = true;

        /* Drop-ins of the template apply to instances too; the instance's own ones after them. */
        const char *const owners[] = { file, streq(file, name) ? NULL : name };
        for (size_t i = 0; i < ELEMENTSOF(owners) && owners[i]; i++) {
                _cleanup_free_ char *dropins = strjoin(UNITDIR "/", owners[i], ".d");
                _cleanup_strv_free_ char **confs = NULL;

                if (!dropins)
                        return log_oom();
                r = list_dir(m, dropins, ".conf", &confs);
                if (r < 0)
                        return r;
                STRV_FOREACH(c, confs) {
                        _cleanup_free_ char *p = strjoin(dropins, "/", *c), *s = NULL;

                        if (!p || unit_source(m, p, &s) < 0)
                                return log_oom();
                        if (s) {
                                r = parse_file(u, s);
                                if (r < 0)
                                        return r;
                        }
                }
        }

        FOREACH_STRING(kind, ".wants", ".requires") {
                _cleanup_free_ char *dir = strjoin(UNITDIR "/", name, kind);
                _cleanup_strv_free_ char **names = NULL;

                if (!dir)
                        return log_oom();
                r = list_dir(m, dir, NULL, &names);
                if (r < 0)
                        return r;
                STRV_FOREACH(n, names)
                        if (add_words(streq(kind, ".wants") ? &u->soft : &u->hard, *n) < 0)
                                return log_oom();
        }
        return 0;
}

static bool in_tree(const char *root, const char *path) {
        _cleanup_free_ char *host = NULL;

        return path_in_root(root, path, false, &host) >= 0 && access(host, F_OK) >= 0;
}

int unit_program_find(Manifest *m, const char *program, char **ret) {
        static const char *const search[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin" };

        assert(m);
        assert(program);
        assert(ret);

        if (program[0] == '/') {
                /* The image is merged-/usr: /bin/sh is /usr/bin/sh there. */
                *ret = path_merge_usr(program);
                if (!*ret)
                        return -ENOMEM;
                /* An unmerged tree may have only one of /lib/systemd/x and /usr/lib/systemd/x. */
                return manifest_resolve(m, *ret) || in_tree(m->root, *ret) || in_tree(m->root, program) ? 0 : -ENOENT;
        }
        /* PID 1 searches its fixed path in the image: the first directory that has it there wins,
         * else the tree's. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < ELEMENTSOF(search); i++) {
                        _cleanup_free_ char *p = strjoin(search[i], "/", program);

                        if (!p)
                                return -ENOMEM;
                        if (pass == 0 ? !!manifest_resolve(m, p) : in_tree(m->root, p)) {
                                *ret = TAKE_PTR(p);
                                return 0;
                        }
                }
        *ret = strjoin("/usr/bin/", program);
        return *ret ? -ENOENT : -ENOMEM;
}
