/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* What initramfs-tools was told in a tree, for a machine that moves to foyer (initramfs-tools.h).
 * Nothing here runs anything of the tree: the files are read inside it and parsed as the few shell
 * assignments initramfs-tools' own files hold. */

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "initramfs-tools.h"
#include "log.h"
#include "util.h"

#define CONFDIR "/etc/initramfs-tools"

void initramfs_tools_conf_done(InitramfsToolsConf *c) {
        free(c->modules);
        free(c->compress);
        free(c->compress_level);
        free(c->resume);
        *c = (InitramfsToolsConf) {};
}

/* A tree's string, made safe for a message. */
static char *escape(const char *s) {
        return string_escape_unprintable(s, 0);
}

/* The names in a directory of the tree that mkinitramfs takes: a letter or digit first, then
 * letters, digits, ".", "_" and "-", and no dpkg leftover (".dpkg-old", ...). Sorted; a missing
 * directory gives none. */
static bool name_ok(const char *n) {
        if (!((n[0] >= 'a' && n[0] <= 'z') || (n[0] >= 'A' && n[0] <= 'Z') || (n[0] >= '0' && n[0] <= '9')))
                return false;
        for (const char *p = n; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      strchr("._-", *p)))
                        return false;
        return !strstr(n, ".dpkg-");
}

static int list_dir(const char *root, const char *dir, char ***ret) {
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_close_ int path_fd = -EBADF;
        struct dirent *de;
        DIR *d;
        int fd, r;

        r = open_in_root(root, dir, O_DIRECTORY, &path_fd);
        if (r < 0) {
                *ret = NULL;
                return 0;       /* missing, or not a directory: mkinitramfs's glob finds nothing either */
        }
        fd = fd_reopen(path_fd, O_RDONLY | O_DIRECTORY);
        d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                _cleanup_free_ char *name = path_prefix_root(root, dir);

                if (fd >= 0)
                        close(fd);
                return log_error_errno(fd < 0 ? fd : -errno, "Failed to open %s: %m", strna(name));
        }
        while ((de = readdir(d)))
                if (name_ok(de->d_name) && strv_extend(&names, de->d_name) < 0) {
                        closedir(d);
                        return log_oom();
                }
        closedir(d);
        strv_sort(names);
        *ret = TAKE_PTR(names);
        return 0;
}

/* One shell assignment of a file initramfs-tools sources: "KEY=value", "KEY='value'" or
 * 'KEY="value"', maybe after "export ". Returns 1 and the value of a key in keys, 0 if the line is
 * none of them (or, warned, has an unbalanced quote). */
static int parse_assignment(const char *line, const char *file, unsigned n, const char *const *keys,
                            const char **ret_key, char **ret_value) {
        const char *v = NULL, *key = NULL;
        size_t l;

        line += strspn(line, " \t");
        if (startswith(line, "export "))
                line += strspn(line + 6, " \t") + 6;
        for (const char *const *k = keys; *k && !v; k++) {
                const char *p = startswith(line, *k);

                if (p && *p == '=') {
                        v = p + 1;
                        key = *k;
                }
        }
        if (!v)
                return 0;
        if (v[0] == '"' || v[0] == '\'') {
                const char *end = strchr(v + 1, v[0]);

                if (!end) {
                        _cleanup_free_ char *e = escape(v);

                        log_warning("%s:%u: %s=%s: unbalanced quote, ignoring the line.", file, n, key, strna(e));
                        return 0;
                }
                v++;
                l = end - v;
        } else
                l = strcspn(v, " \t;#");
        *ret_value = strndup(v, l);
        if (!*ret_value)
                return log_oom();
        *ret_key = key;
        return 1;
}

static int conf_parse(InitramfsToolsConf *c, const char *root, const char *path) {
        static const char *const keys[] = { "MODULES", "COMPRESS", "COMPRESSLEVEL", "RESUME", NULL };
        _cleanup_free_ char *text = NULL, *name = NULL;
        unsigned n = 0;
        char *line, *next;
        int r;

        r = read_tree_file(root, path, &text, NULL);
        if (r < 0 || !text)
                return r;
        name = path_prefix_root(root, path);
        if (!name)
                return log_oom();
        log_debug("Reading %s.", name);

        for (line = text; line; line = next) {
                _cleanup_free_ char *value = NULL;
                const char *key = NULL;

                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                n++;
                r = parse_assignment(line, name, n, keys, &key, &value);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                char **slot = streq(key, "MODULES") ? &c->modules :
                              streq(key, "COMPRESS") ? &c->compress :
                              streq(key, "COMPRESSLEVEL") ? &c->compress_level : &c->resume;

                free(*slot);
                *slot = TAKE_PTR(value);
        }
        return 0;
}

int initramfs_tools_conf_read(const char *root, InitramfsToolsConf *ret) {
        _cleanup_(initramfs_tools_conf_done) InitramfsToolsConf c = {};
        int r;

        assert(ret);

        r = conf_parse(&c, root, CONFDIR "/initramfs.conf");
        if (r < 0)
                return r;
        /* One glob over both directories: /usr/share's first, each sorted. */
        FOREACH_STRING(dir, "/usr/share/initramfs-tools/conf.d", CONFDIR "/conf.d") {
                _cleanup_strv_free_ char **names = NULL;

                r = list_dir(root, dir, &names);
                if (r < 0)
                        return r;
                STRV_FOREACH(n, names) {
                        _cleanup_free_ char *path = strjoin(dir, "/", *n);

                        if (!path)
                                return log_oom();
                        r = conf_parse(&c, root, path);
                        if (r < 0)
                                return r;
                }
        }
        *ret = c;
        c = (InitramfsToolsConf) {};
        return 0;
}

/* A module name as modprobe takes it (a name or an alias without spaces). */
static bool module_name_ok(const char *s) {
        if (isempty(s))
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      strchr("_-:*.", *p)))
                        return false;
        return true;
}

static int modules_parse(const char *root, const char *path, char ***modules) {
        _cleanup_free_ char *text = NULL, *name = NULL;
        unsigned n = 0;
        char *line, *next;
        int r;

        r = read_tree_file(root, path, &text, NULL);
        if (r < 0 || !text)
                return r;
        name = path_prefix_root(root, path);
        if (!name)
                return log_oom();

        for (line = text; line; line = next) {
                char *end, *args;

                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                n++;
                line += strspn(line, " \t");
                end = line + strlen(line);
                while (end > line && strchr(" \t\r", end[-1]))
                        *--end = 0;
                if (*line == 0 || *line == '#')
                        continue;
                args = line + strcspn(line, " \t");
                if (*args) {
                        *args++ = 0;
                        args += strspn(args, " \t");
                }
                if (!module_name_ok(line)) {
                        log_warning("%s:%u: not a module name, ignoring the line.", name, n);
                        continue;
                }
                if (*args) {
                        _cleanup_free_ char *e = escape(args);

                        if (!e)
                                return log_oom();
                        log_warning("%s:%u: foyer adds module %s but not its options \"%s\": put "
                                    "\"options %s %s\" in /etc/modprobe.d/%s.conf, which the image holds.",
                                    name, n, line, e, line, e, line);
                }
                if (!strv_contains(*modules, line) && strv_extend(modules, line) < 0)
                        return log_oom();
        }
        return 0;
}

int initramfs_tools_modules_read(const char *root, char ***ret) {
        _cleanup_strv_free_ char **modules = NULL, **names = NULL;
        int r;

        assert(ret);

        r = modules_parse(root, CONFDIR "/modules", &modules);
        if (r < 0)
                return r;
        r = list_dir(root, "/usr/share/initramfs-tools/modules.d", &names);
        if (r < 0)
                return r;
        STRV_FOREACH(n, names) {
                _cleanup_free_ char *path = strjoin("/usr/share/initramfs-tools/modules.d/", *n);

                if (!path)
                        return log_oom();
                r = modules_parse(root, path, &modules);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(modules);
        return 0;
}

int initramfs_tools_hooks_list(const char *root, char ***ret) {
        _cleanup_strv_free_ char **hooks = NULL, **seen = NULL;
        int r;

        assert(ret);

        FOREACH_STRING(dir, CONFDIR "/hooks", "/usr/share/initramfs-tools/hooks") {
                _cleanup_strv_free_ char **names = NULL;

                r = list_dir(root, dir, &names);
                if (r < 0)
                        return r;
                STRV_FOREACH(n, names) {
                        _cleanup_free_ char *path = NULL;
                        _cleanup_close_ int fd = -EBADF;
                        struct stat st;

                        if (strv_contains(seen, *n))
                                continue;       /* /etc's hook of that name replaces /usr/share's */
                        path = strjoin(dir, "/", *n);
                        if (!path)
                                return log_oom();
                        /* mkinitramfs runs the executable files only. */
                        if (open_in_root(root, path, 0, &fd) < 0 || fstat(fd, &st) < 0 ||
                            !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                                continue;
                        if (strv_extend(&seen, *n) < 0 || strv_consume(&hooks, TAKE_PTR(path)) < 0)
                                return log_oom();
                }
        }
        *ret = TAKE_PTR(hooks);
        return 0;
}

/* Hooks whose work foyer does itself, from what the tree holds, by the packages' names for them;
 * cryptsetup-initramfs' cryptroot-unlock is its SSH unlocking (foyer's SshUnlock=), and its other
 * hooks copy the programs of crypttab's keyscript=, which foyer refuses (target.h). */
static const char *const hooks_done_by_foyer[] = {
        "udev", "kmod", "klibc-utils", "busybox", "zz-busybox", "dmsetup", "lvm2", "mdadm",
        "cryptroot", "cryptroot-unlock", "cryptgnupg", "cryptgnupg-sc", "cryptkeyctl", "cryptopensc",
        "cryptpassdev", "fsck", "resume", "keymap", "amd64_microcode", "intel_microcode", NULL,
};

static int apply_compression(BuildConfig *c, const InitramfsToolsConf *conf, const char *where,
                             bool compression_on_command_line) {
        static const struct {
                const char *name;
                Compression c;
        } map[] = {
                { "gzip", COMPRESSION_GZIP }, { "lz4", COMPRESSION_LZ4 }, { "xz", COMPRESSION_XZ },
                { "lzma", COMPRESSION_XZ }, { "zstd", COMPRESSION_ZSTD },
        };
        _cleanup_free_ char *e = NULL;
        Compression t = _COMPRESSION_INVALID;

        if (conf->compress_level)
                log_warning("%s: COMPRESSLEVEL= is not read; foyer's is CompressionLevel= (foyer.conf) or --compress-level.",
                            where);
        if (!conf->compress)
                return 0;
        e = escape(conf->compress);
        if (!e)
                return log_oom();
        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                if (streq(conf->compress, map[i].name))
                        t = map[i].c;
        /* foyer.conf's Compression= is a lasting choice that initramfs-tools' setting contradicts
         * (a warning); --compress is one build's (a -v message). */
        if (compression_on_command_line || c->compression_set) {
                if (t != c->compression)
                        log_full(compression_on_command_line ? LOG_DEBUG : LOG_WARNING,
                                 "%s: COMPRESS=%s is not taken: foyer's %s says %s.", where, e,
                                 compression_on_command_line ? "command line" : "configuration",
                                 compression_to_string(c->compression));
                return 0;
        }
        if (t < 0) {
                log_warning("%s: COMPRESS=%s: foyer cannot write that (zstd, xz, gzip, lz4); the image is %s.",
                            where, e, compression_to_string(c->compression));
                return 0;
        }
        if (streq(conf->compress, "lzma"))
                log_warning("%s: COMPRESS=lzma: foyer writes xz instead (the kernel reads both).", where);
        else if (t != c->compression)   /* Debian's initramfs.conf says zstd, foyer's default */
                log_info("Compression %s, from COMPRESS= in %s.", compression_to_string(t), where);
        c->compression = t;
        return 0;
}

static void apply_modules_setting(const BuildConfig *c, const InitramfsToolsConf *conf, const char *where) {
        _cleanup_free_ char *e = NULL;

        if (!conf->modules)
                return;
        if (streq(conf->modules, "most")) {
                /* Debian's default: HostOnly=yes is a choice made for foyer since. */
                log_debug("%s: MODULES=most: foyer's generic image is the same idea%s.", where,
                          c->hostonly ? "; HostOnly=yes makes a host-only one" : "");
        } else if (streq(conf->modules, "dep")) {
                if (c->hostonly)
                        log_debug("%s: MODULES=dep: foyer's HostOnly=yes is the same idea.", where);
                else
                        log_warning("%s: MODULES=dep is not taken: foyer makes its generic image; HostOnly=yes in "
                                    "foyer.conf (or -H) makes one with this host's drivers only.", where);
        } else if (streq(conf->modules, "list"))
                log_warning("%s: MODULES=list is not taken: foyer adds the modules of /etc/initramfs-tools/modules "
                            "to its %s image, it does not make an image of those alone.",
                            where, c->hostonly ? "host-only" : "generic");
        else if (streq(conf->modules, "netboot"))
                log_warning("%s: MODULES=netboot is not taken: foyer does not boot from the network (NFS root); "
                            "it makes its %s image.", where, c->hostonly ? "host-only" : "generic");
        else {
                e = escape(conf->modules);
                log_warning("%s: MODULES=%s is unknown (most, dep, list, netboot); foyer makes its %s image.",
                            where, strna(e), c->hostonly ? "host-only" : "generic");
        }
}

static int apply_hooks(const char *root) {
        _cleanup_strv_free_ char **hooks = NULL, **foreign = NULL, **done = NULL;
        _cleanup_free_ char *list = NULL;
        int r;

        r = initramfs_tools_hooks_list(root, &hooks);
        if (r < 0)
                return r;
        STRV_FOREACH(h, hooks) {
                _cleanup_free_ char *p = path_prefix_root(root, *h), *e = NULL;
                bool ours = false;

                if (!p)
                        return log_oom();
                e = escape(p);
                if (!e)
                        return log_oom();
                for (const char *const *n = hooks_done_by_foyer; *n; n++)
                        if (streq(path_basename(*h), *n))
                                ours = true;
                if (strv_consume(ours ? &done : &foreign, TAKE_PTR(e)) < 0)
                        return log_oom();
        }
        if (done) {
                list = strv_join(done, " ");
                if (!list)
                        return log_oom();
                log_debug("initramfs-tools hooks whose work foyer does itself, not run: %s.", list);
                free(list);
                list = NULL;
        }
        if (foreign) {
                list = strv_join(foreign, " ");
                if (!list)
                        return log_oom();
                log_warning("foyer does not run initramfs-tools hooks; not run: %s. What they put in the image "
                            "must be asked of foyer: --add-file/AddFiles=, --add-module/AddModules= or "
                            "/etc/foyer/foyer.conf (docs/foyer.md, \"Coming from initramfs-tools\").", list);
        }
        return 0;
}

/* Whether the build reads the tree's initramfs-tools configuration: target settings on, and an
 * /etc/initramfs-tools in the tree. */
static bool configured(const BuildConfig *c) {
        int fd;

        if (!c->target_settings) {
                log_debug("Skipping the tree's initramfs-tools configuration, as --no-target-settings was requested.");
                return false;
        }
        if (open_in_root(c->root ?: "/", CONFDIR, O_DIRECTORY, &fd) < 0)
                return false;
        close(fd);
        return true;
}

void initramfs_tools_warn_hooks(const BuildConfig *c) {
        assert(c);

        if (configured(c))
                (void) apply_hooks(c->root ?: "/");
}

int initramfs_tools_apply(BuildConfig *c, bool compression_on_command_line) {
        _cleanup_(initramfs_tools_conf_done) InitramfsToolsConf conf = {};
        _cleanup_strv_free_ char **modules = NULL;
        _cleanup_free_ char *where = NULL, *list = NULL;
        const char *root;
        int r;

        assert(c);

        root = c->root ?: "/";
        if (!configured(c))
                return 0;

        where = path_prefix_root(root, CONFDIR);
        if (!where)
                return log_oom();

        r = initramfs_tools_conf_read(root, &conf);
        if (r < 0)
                return r;
        r = apply_compression(c, &conf, where, compression_on_command_line);
        if (r < 0)
                return r;
        apply_modules_setting(c, &conf, where);

        r = initramfs_tools_modules_read(root, &modules);
        if (r < 0)
                return r;
        if (modules) {
                list = strv_join(modules, " ");
                if (!list)
                        return log_oom();
                log_info("Adding the modules of %s/modules: %s.", where, list);
                STRV_FOREACH(m, modules)
                        if (!strv_contains(c->add_modules, *m) && strv_extend(&c->add_modules, *m) < 0)
                                return log_oom();
        }
        return 0;
}
