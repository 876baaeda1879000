/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmdline.h"
#include "foyer-config.h"
#include "log.h"
#include "parse-util.h"
#include "util.h"

static const char *const network_mode_table[_NETWORK_MODE_MAX] = {
        [NETWORK_AUTO] = "auto",
        [NETWORK_YES] = "yes",
        [NETWORK_NO] = "no",
};

const char *network_mode_to_string(NetworkMode m) {
        return m >= 0 && m < _NETWORK_MODE_MAX ? network_mode_table[m] : NULL;
}

/* "auto", or a boolean (yes/no, true/false, 1/0, on/off). */
NetworkMode network_mode_from_string(const char *s) {
        int b;

        if (streq_ptr(s, "auto"))
                return NETWORK_AUTO;
        b = s ? parse_boolean(s) : -EINVAL;
        if (b < 0)
                return _NETWORK_MODE_INVALID;
        return b ? NETWORK_YES : NETWORK_NO;
}

void build_config_init(BuildConfig *c) {
        *c = (BuildConfig) {
                .compression = COMPRESSION_ZSTD,
                .level = -1,
                .microcode = _MICROCODE_MODE_INVALID,   /* not set: "host" for a host-only image, else "all" */
                .target_settings = 1,
                .network = NETWORK_AUTO,
        };
}

void build_config_done(BuildConfig *c) {
        free(c->output);
        free(c->kver);
        free(c->root);
        strv_free(c->add_modules);
        strv_free(c->add_files);
        free(c->cmdline);
        free(c->crypttab);
        strv_free(c->add_key_files);
        free(c->keymap);
        strv_free(c->add_keymaps);
        free(c->ssh_unlock);
        free(c->ssh_host_keys);
        build_config_init(c);
}

/* A boolean setting: 0 or 1, or a logged error naming the file, line and key. */
static int parse_boolean_setting(const char *key, const char *value, const char *file, unsigned line) {
        int b = parse_boolean(value);

        if (b < 0)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s:%u: %s= takes a boolean, not \"%s\".",
                                       file, line, key, value);
        return b;
}

static int set_string(char **s, const char *value) {
        char *t = NULL;

        if (!isempty(value)) {
                t = strdup(value);
                if (!t)
                        return -ENOMEM;
        }
        free(*s);
        *s = t;
        return 0;
}

/* Lists accumulate across files; an empty assignment clears what came before, as in systemd. */
static int extend_list(char ***l, const char *value) {
        _cleanup_strv_free_ char **words = NULL;
        int r;

        if (isempty(value)) {
                *l = strv_free(*l);
                return 0;
        }
        r = strv_split(value, " \t", &words);
        if (r < 0)
                return r;
        STRV_FOREACH(w, words) {
                r = strv_extend(l, *w);
                if (r < 0)
                        return r;
        }
        return 0;
}

int cmdline_check_quotes(const char *value, const char *where) {
        const char *word;
        int r;

        assert(value);
        assert(where);

        r = cmdline_find_open_quote(value, &word);
        if (r < 0)
                return log_oom();
        if (r > 0)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "%s: unbalanced quote in kernel command line parameter %s, refusing.", where, word);
        return 0;
}

/* The stored defaults go to /etc/cmdline.d/50-foyer.conf, one source of the command line at boot. A
 * quote left open there would end at the end of that file (see cmdline_read_words()), so the value
 * meant would be lost, silently; refuse it here, where it can still be fixed. A newline is refused
 * too: the stored file would make a line starting with '#' of it a comment. The check uses the
 * boot-time splitter, so what passes here is what the generators see. */
static int check_cmdline(const char *value, const char *file, unsigned line) {
        _cleanup_free_ char *where = NULL;
        int r;

        assert(value);
        assert(file);

        /* The builder's own options come as file "command line", line 0. */
        if (line > 0)
                r = asprintf(&where, "%s:%u: Cmdline", file, line);
        else
                r = asprintf(&where, "--cmdline");
        if (r < 0)
                return log_oom();
        if (strchr(value, '\n'))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "%s: the kernel command line defaults must be one line, refusing.", where);
        return cmdline_check_quotes(value, where);
}

/* Output= and -o take specifiers, as systemd's unit files do: %k the kernel version, %% a "%". */
static int output_expand_full(const char *pattern, const char *kver, char **ret, char *ret_bad) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        assert(pattern);

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (const char *p = pattern; *p; p++) {
                if (*p != '%') {
                        fputc(*p, f);
                        continue;
                }
                switch (p[1]) {
                case '%':
                        fputc('%', f);
                        break;
                case 'k':
                        fputs(strempty(kver), f);
                        break;
                default:
                        fclose(f);
                        if (ret_bad)
                                *ret_bad = p[1];
                        return -EINVAL;
                }
                p++;
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        if (ret)
                *ret = TAKE_PTR(buf);
        return 0;
}

bool output_uses_kver(const char *pattern) {
        assert(pattern);

        for (const char *p = pattern; *p; p++)
                if (p[0] == '%') {
                        if (p[1] == 'k')
                                return true;
                        if (p[1] == '%')
                                p++;
                }
        return false;
}

int output_expand(const char *pattern, const char *kver, char **ret) {
        assert(pattern);
        assert(kver || !output_uses_kver(pattern));
        assert(ret);

        return output_expand_full(pattern, kver, ret, NULL);
}

static int check_output(const char *value, const char *file, unsigned line) {
        char bad = 0;
        int r;

        assert(value);

        r = output_expand_full(value, "", NULL, &bad);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0) {
                /* The builder's own options come as file "command line", line 0. */
                if (line > 0)
                        return log_error_errno(r, "%s:%u: Output=%s: unknown specifier %%%c%s (%%k is the kernel version, "
                                               "%%%% a %%).", file, line, value, bad ?: ' ', bad ? "" : "at the end");
                return log_error_errno(r, "--output=%s: unknown specifier %%%c%s (%%k is the kernel version, %%%% a %%).",
                                       value, bad ?: ' ', bad ? "" : "at the end");
        }
        return 0;
}

int build_config_assign(BuildConfig *c, const char *key, const char *value, const char *file, unsigned line) {
        int r;

        if (streq(key, "Output")) {
                r = check_output(value, file, line);
                if (r < 0)
                        return r;       /* logged */
                r = set_string(&c->output, value);
        }
        else if (streq(key, "KernelVersion"))
                r = set_string(&c->kver, value);
        else if (streq(key, "Root"))
                r = set_string(&c->root, value);
        else if (streq(key, "Cmdline")) {
                r = check_cmdline(value, file, line);
                if (r < 0)
                        return r;       /* logged */
                r = set_string(&c->cmdline, value);
        }
        else if (streq(key, "AddModules"))
                r = extend_list(&c->add_modules, value);
        else if (streq(key, "AddFiles"))
                r = extend_list(&c->add_files, value);
        else if (streq(key, "Crypttab"))
                r = set_string(&c->crypttab, value);
        else if (streq(key, "AddKeyFiles"))
                r = extend_list(&c->add_key_files, value);
        else if (streq(key, "Keymap"))
                r = set_string(&c->keymap, value);
        else if (streq(key, "AddKeymaps"))
                r = extend_list(&c->add_keymaps, value);
        else if (streq(key, "SshUnlock"))
                r = set_string(&c->ssh_unlock, value);
        else if (streq(key, "SshHostKeys"))
                r = set_string(&c->ssh_host_keys, value);
        else if (streq(key, "HostOnly")) {
                r = parse_boolean_setting(key, value, file, line);
                if (r < 0)
                        return r;       /* logged */
                c->hostonly = r;
                r = 0;
        } else if (streq(key, "NoShell")) {
                r = parse_boolean_setting(key, value, file, line);
                if (r < 0)
                        return r;       /* logged */
                c->no_shell = r;
                r = 0;
        } else if (streq(key, "TargetSettings")) {
                r = parse_boolean_setting(key, value, file, line);
                if (r < 0)
                        return r;       /* logged */
                c->target_settings = r;
                r = 0;
        } else if (streq(key, "Compression")) {
                Compression t = compression_from_string(value);

                if (t < 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "%s:%u: unknown compression \"%s\" (zstd, xz, gzip, lz4, none).",
                                               file, line, value);
                c->compression = t;
                c->compression_set = true;
                r = 0;
        } else if (streq(key, "CompressionLevel")) {
                char *end;
                long l = strtol(value, &end, 10);

                if (isempty(value) || *end || l < 0 || l > 22)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s:%u: invalid compression level \"%s\".",
                                               file, line, value);
                c->level = (int) l;
                r = 0;
        } else if (streq(key, "Network")) {
                NetworkMode n = network_mode_from_string(value);

                if (n < 0) {
                        if (line > 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s:%u: Network= takes auto, yes or no, "
                                                       "not \"%s\".", file, line, value);
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--network takes auto, yes or no, not \"%s\".",
                                               value);
                }
                c->network = n;
                r = 0;
        } else if (streq(key, "Microcode")) {
                MicrocodeMode m = microcode_mode_from_string(value);

                if (m < 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "%s:%u: unknown microcode setting \"%s\" (all, host, none).",
                                               file, line, value);
                c->microcode = m;
                r = 0;
        } else {
                log_warning("%s:%u: unknown setting %s=, ignoring.", file, line, key);
                return 0;
        }
        if (r < 0)
                return log_oom();
        return 0;
}

static int parse_file(BuildConfig *c, const char *path) {
        _cleanup_free_ char *text = NULL;
        unsigned n = 0;
        char *line, *next;
        int r;

        r = read_full_file(path, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);
        log_debug("Reading %s.", path);

        for (line = text; line; line = next) {
                char *eq, *key, *value, *end;

                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                n++;

                line += strspn(line, " \t");
                end = line + strlen(line);
                while (end > line && strchr(" \t\r", end[-1]))
                        *--end = 0;
                if (*line == 0 || *line == '#' || *line == ';')
                        continue;
                if (*line == '[') {
                        if (!streq(line, "[Build]"))
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "%s:%u: unknown section %s (only [Build] exists).", path, n, line);
                        continue;
                }

                eq = strchr(line, '=');
                if (!eq)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s:%u: expected Key=value, got \"%s\".",
                                               path, n, line);
                *eq = 0;
                key = line;
                value = eq + 1;
                for (end = eq; end > key && strchr(" \t", end[-1]);)
                        *--end = 0;
                value += strspn(value, " \t");

                r = build_config_assign(c, key, value, path, n);
                if (r < 0)
                        return r;
        }
        return 0;
}

int build_config_load_files(BuildConfig *c) {
        const char *prefix = getenv("FOYER_CONFIG_ROOT");
        _cleanup_free_ char *main_conf = NULL, *etc_d = NULL, *lib_d = NULL;
        _cleanup_strv_free_ char **etc_names = NULL, **lib_names = NULL, **all = NULL;
        int r;

        if (isempty(prefix) || streq(prefix, "/"))
                prefix = "";

        main_conf = strjoin(prefix, "/etc/foyer/foyer.conf");
        etc_d = strjoin(prefix, "/etc/foyer/conf.d");
        lib_d = strjoin(prefix, "/usr/lib/foyer/conf.d");
        if (!main_conf || !etc_d || !lib_d)
                return log_oom();

        r = parse_file(c, main_conf);
        if (r < 0)
                return r;

        r = dir_list_suffix(etc_d, ".conf", &etc_names);
        if (r >= 0)
                r = dir_list_suffix(lib_d, ".conf", &lib_names);
        if (r < 0)
                return log_error_errno(r, "Failed to list configuration drop-ins: %m");

        all = calloc(1, sizeof(char *));
        if (!all)
                return log_oom();
        STRV_FOREACH(n, etc_names)
                if (strv_extend(&all, *n) < 0)
                        return log_oom();
        STRV_FOREACH(n, lib_names)
                if (!strv_contains(all, *n) && strv_extend(&all, *n) < 0)
                        return log_oom();
        strv_sort(all);

        STRV_FOREACH(n, all) {
                _cleanup_free_ char *path = strjoin(strv_contains(etc_names, *n) ? etc_d : lib_d, "/", *n);

                if (!path)
                        return log_oom();
                r = parse_file(c, path);
                if (r < 0)
                        return r;
        }
        return 0;
}
