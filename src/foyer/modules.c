/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <libkmod.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "log.h"
#include "module-classes.h"
#include "modules.h"
#include "process-util.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct kmod_ctx *, kmod_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct kmod_module *, kmod_module_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct kmod_list *, kmod_module_unref_list);

typedef struct ModuleState {
        Manifest *manifest;
        const Probe *probe;
        char **done;            /* module names already handled */
        char **files;           /* module paths relative to the module directory */
} ModuleState;

static void kmod_log(void *data, int priority, const char *file, int line, const char *fn,
                     const char *format, va_list args) {
        /* libkmod is chatty about things foyer handles itself; keep it at debug. */
        log_internalv(LOG_DEBUG, 0, file, line, fn, format, args);
}

static int add_firmware(ModuleState *s, const char *module, const char *fw) {
        FOREACH_STRING(suffix, "", ".zst", ".xz") {
                _cleanup_free_ char *path = strjoin("/usr/lib/firmware/", fw, suffix);
                int r;

                if (!path)
                        return log_oom();
                r = manifest_add_from_root(s->manifest, path, module, NULL);
                if (r >= 0 || r == -EEXIST)
                        return 0;
                if (r != -ENOENT)
                        return log_error_errno(r, "Failed to add firmware %s for %s: %m", path, module);
        }
        log_debug("Firmware %s for %s is not installed, skipping.", fw, module);
        return 0;
}

static int add_module(ModuleState *s, struct kmod_module *mod, const char *why);

static int add_module_list(ModuleState *s, struct kmod_list *list, const char *why) {
        struct kmod_list *i;
        int r;

        kmod_list_foreach(i, list) {
                _cleanup_(kmod_module_unrefp) struct kmod_module *mod = kmod_module_get_module(i);

                r = add_module(s, mod, why);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_module(ModuleState *s, struct kmod_module *mod, const char *why) {
        _cleanup_(kmod_module_unref_listp) struct kmod_list *deps = NULL, *pre = NULL, *post = NULL, *info = NULL;
        _cleanup_free_ char *name = NULL, *reason = NULL, *image_path = NULL, *source = NULL;
        const char *path, *rel;
        struct kmod_list *i;
        int r;

        name = strdup(kmod_module_get_name(mod));
        if (!name)
                return log_oom();
        if (strv_contains(s->done, name))
                return 0;
        r = strv_extend(&s->done, name);
        if (r < 0)
                return log_oom();

        path = kmod_module_get_path(mod);
        if (!path) {
                log_debug("Module %s is built into %s, nothing to add.", name, s->probe->kver);
                return 0;
        }
        rel = startswith(path, s->probe->moddir);
        if (!rel || *rel != '/')
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Module %s lies outside %s: %s", name,
                                       s->probe->moddir, path);
        rel++;

        reason = strjoin("module ", name, " (", why, ")");
        image_path = strjoin("/usr/lib/modules/", s->probe->kver, "/", rel);
        if (!reason || !image_path)
                return log_oom();
        /* libkmod joined the path on the host; the file is the one the tree's own path names. */
        r = path_in_root(s->manifest->root, image_path, false, &source);
        if (r < 0)
                return log_error_errno(r, "Failed to resolve module file %s: %m", path);
        r = manifest_add_file(s->manifest, image_path, source, reason);
        if (r < 0 && r != -EEXIST)
                return log_error_errno(r, "Failed to add module file %s: %m", source);
        r = strv_extend(&s->files, rel);
        if (r < 0)
                return log_oom();

        deps = kmod_module_get_dependencies(mod);
        r = add_module_list(s, deps, name);
        if (r < 0)
                return r;

        if (kmod_module_get_softdeps(mod, &pre, &post) >= 0) {
                r = add_module_list(s, pre, name);
                if (r < 0)
                        return r;
                r = add_module_list(s, post, name);
                if (r < 0)
                        return r;
        }

        r = kmod_module_get_info(mod, &info);
        if (r < 0)
                return log_error_errno(r, "Failed to read module info of %s: %m", path);
        kmod_list_foreach(i, info)
                if (streq(kmod_module_info_get_key(i), "firmware")) {
                        r = add_firmware(s, name, kmod_module_info_get_value(i));
                        if (r < 0)
                                return r;
                }
        kmod_module_info_free_list(info);
        info = NULL;

        return 0;
}

/* name: a module name or alias. needed_by: NULL for a module that is skipped when the kernel lacks
 * it, "requested" for --add-module, else what on the host needs it (host-only). */
static int add_by_name(ModuleState *s, struct kmod_ctx *ctx, const char *name, const char *why, const char *needed_by) {
        _cleanup_(kmod_module_unref_listp) struct kmod_list *list = NULL;
        int r;

        r = kmod_module_new_from_lookup(ctx, name, &list);
        if (r < 0)
                return log_error_errno(r, "Failed to look up module %s: %m", name);
        if (!list) {
                if (needed_by && streq(needed_by, "requested"))
                        return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "Module %s not found for kernel %s.",
                                               name, s->probe->kver);
                if (needed_by)
                        return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                               "Host-only: %s needs module %s, which kernel %s has neither as a module "
                                               "nor built in.", needed_by, name, s->probe->kver);
                log_debug("Module %s (%s) does not exist in kernel %s, skipping.", name, why, s->probe->kver);
                return 0;
        }
        return add_module_list(s, list, needed_by && !streq(needed_by, "requested") ? needed_by : why);
}

static int add_class_module(struct kmod_module *mod, const char *why, void *userdata) {
        return add_module(userdata, mod, why);
}

/* The hardware classes (module-classes.c), walked in the order of the tree's modules.dep. */
static int add_classes(ModuleState *s, struct kmod_ctx *ctx) {
        _cleanup_free_ char *ipath = strjoin("/usr/lib/modules/", s->probe->kver, "/modules.dep"),
                            *path = NULL, *text = NULL;
        int r;

        if (!ipath)
                return log_oom();
        path = path_prefix_root(s->manifest->root, ipath);
        if (!path)
                return log_oom();
        r = read_full_file_in_root(s->manifest->root, ipath, &text, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);
        return module_classes_select(ctx, text, add_class_module, s);
}

/* slot: the cleanup slot of base; the signal handler stops depmod before it removes base. */
static int run_depmod(const char *base, const char *kver, int slot) {
        const char *argv[] = { "depmod", "-b", base, kver, NULL };
        /* depmod's messages about our partial tree are noise; keep its stderr only with -v. */
        SpawnOptions o = { .stderr_to_null = log_get_max_level() < LOG_DEBUG };
        pid_t pid;
        int status, r;

        FOREACH_STRING(p, "/usr/sbin/depmod", "/sbin/depmod", "/usr/bin/depmod") {
                if (access(p, X_OK) < 0)
                        continue;
                r = spawn_process(p, (char **) argv, &o, &pid);
                if (r < 0)
                        return log_error_errno(r, "Failed to run %s: %m", p);
                cleanup_set_child(slot, pid);
                r = wait_process(pid, &status);
                cleanup_set_child(slot, 0);
                if (r < 0)
                        return log_error_errno(r, "Failed to wait for depmod: %m");
                if (!wait_status_ok(status))
                        return log_error_errno(SYNTHETIC_ERRNO(EIO), "depmod -b %s %s failed.", base, kver);
                return 0;
        }
        return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "depmod not found (package kmod).");
}

/* Puts the file planned for image path ipath at dst, for depmod: a hard link to the very inode
 * planned where the tree and the temporary directory share a file system, a copy otherwise. Never a
 * symlink to a path in the tree: depmod would follow whatever the tree holds there by then, and what
 * it reads (module names, aliases, symbols) goes into the image. */
static int place_planned_file(ModuleState *s, const char *ipath, const char *dst) {
        _cleanup_close_ int in = -EBADF, out = -EBADF;
        char proc[64];
        Entry *e = manifest_find(s->manifest, ipath);
        struct stat st;
        int r;

        if (!e || e->type != ENTRY_FILE)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "%s is not in the image's plan.", ipath);
        in = manifest_open_source(s->manifest, e);
        if (in < 0)
                return in;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%i", in);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, dst, AT_SYMLINK_FOLLOW) >= 0)
                return 0;
        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (out < 0 || fstat(in, &st) < 0)
                return log_error_errno(errno, "Failed to create %s: %m", dst);
        for (off_t left = st.st_size; left > 0;) {
                ssize_t n = copy_file_range(in, NULL, out, NULL, left, 0);

                /* Across file systems before Linux 5.19, and in some sandboxes (mkosi's), the kernel
                 * refuses copy_file_range(): then read and write. */
                if (n < 0 && IN_SET(errno, EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EPERM)) {
                        char buf[64 * 1024];

                        n = read(in, buf, MIN((off_t) sizeof(buf), left));
                        if (n > 0 && write_all(out, buf, n) < 0)
                                n = -1;
                }
                if (n <= 0) {
                        r = n < 0 ? negative_errno() : -EPIPE;
                        return log_error_errno(r, "Failed to copy %s to %s: %m", e->source, dst);
                }
                left -= n;
        }
        return 0;
}

/* depmod needs the files on disk: it gets a tree of symlinks to the chosen modules plus the
 * kernel's order and builtin lists, and its output files go into the image as data. */
static int regenerate_index(ModuleState *s) {
        static const char *const copied[] = { "modules.order", "modules.builtin", "modules.builtin.modinfo" };
        static const char *const generated[] = {
                "modules.dep", "modules.dep.bin", "modules.alias", "modules.alias.bin", "modules.softdep",
                "modules.symbols", "modules.symbols.bin", "modules.builtin.bin",
                "modules.builtin.alias.bin", "modules.devname",
        };
        _cleanup_free_ char *tmp = strjoin(tmp_dir(), "/foyer-depmod.XXXXXX"), *kdir = NULL;
        int r, slot;

        if (!tmp)
                return log_oom();
        if (!mkdtemp(tmp))
                return log_error_errno(errno, "Failed to create a temporary directory in %s: %m", tmp_dir());
        slot = cleanup_register(tmp, true);

        kdir = strjoin(tmp, "/lib/modules/", s->probe->kver);
        if (!kdir) {
                r = log_oom();
                goto finish;
        }

        STRV_FOREACH(f, s->files) {
                _cleanup_free_ char *link = strjoin(kdir, "/", *f),
                                    *ipath = strjoin("/usr/lib/modules/", s->probe->kver, "/", *f);

                if (!link || !ipath) {
                        r = log_oom();
                        goto finish;
                }
                /* mkdir -p for the parents */
                for (char *slash = strchr(link + strlen(tmp) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                        *slash = 0;
                        if (mkdir(link, 0755) < 0 && errno != EEXIST) {
                                r = log_error_errno(errno, "Failed to create %s: %m", link);
                                goto finish;
                        }
                        *slash = '/';
                }
                r = place_planned_file(s, ipath, link);
                if (r < 0)
                        goto finish;
        }

        for (size_t i = 0; i < ELEMENTSOF(copied); i++) {
                _cleanup_free_ char *src = NULL,
                                    *dst = strjoin(kdir, "/", copied[i]),
                                    *ipath = strjoin("/usr/lib/modules/", s->probe->kver, "/", copied[i]);

                if (!dst || !ipath) {
                        r = log_oom();
                        goto finish;
                }
                r = path_in_root(s->manifest->root, ipath, false, &src);
                if (r == -ENOMEM) {
                        log_oom();
                        goto finish;
                }
                if (r < 0)
                        continue;
                r = manifest_add_file(s->manifest, ipath, src, "kernel module index");
                if (r < 0 && r != -EEXIST) {
                        log_error_errno(r, "Failed to add %s: %m", src);
                        goto finish;
                }
                r = place_planned_file(s, ipath, dst);
                if (r < 0)
                        goto finish;
        }

        r = run_depmod(tmp, s->probe->kver, slot);
        if (r < 0)
                goto finish;

        for (size_t i = 0; i < ELEMENTSOF(generated); i++) {
                _cleanup_free_ char *src = strjoin(kdir, "/", generated[i]), *text = NULL,
                                    *ipath = strjoin("/usr/lib/modules/", s->probe->kver, "/", generated[i]);
                size_t size;

                if (!src || !ipath) {
                        r = log_oom();
                        goto finish;
                }
                r = read_full_file(src, &text, &size);
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        log_error_errno(r, "Failed to read %s: %m", src);
                        goto finish;
                }
                r = manifest_add_data(s->manifest, ipath, 0644, text, size, "kernel module index (depmod)");
                if (r < 0) {
                        log_error_errno(r, "Failed to add %s: %m", ipath);
                        goto finish;
                }
        }
        r = 0;

finish:
        rm_rf(tmp);
        cleanup_unregister(slot);
        return r;
}

/* The tree's modprobe.d as libkmod would read it: *.conf files of /etc, /run and /usr/lib/modprobe.d
 * (a name in an earlier directory hides the same name in a later one), in the order of their names,
 * each resolved inside the tree. Returns a memfd holding them all. */
static int tree_modprobe_config(const char *root, int *ret_fd) {
        static const char *const dirs[] = { "/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d" };
        _cleanup_strv_free_ char **files = NULL;
        _cleanup_close_ int out = -EBADF;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_close_ int path_fd = -EBADF;
                struct dirent *de;
                DIR *d;
                int fd;

                if (open_in_root(root, dirs[i], O_DIRECTORY, &path_fd) < 0)
                        continue;       /* missing, or not a directory: libkmod skips it too */
                fd = fd_reopen(path_fd, O_RDONLY | O_DIRECTORY);
                d = fd >= 0 ? fdopendir(fd) : NULL;
                if (!d) {
                        if (fd >= 0)
                                close(fd);
                        continue;
                }
                while ((de = readdir(d))) {
                        _cleanup_free_ char *path = NULL;
                        bool hidden = false;

                        if (de->d_name[0] == '.' || !endswith(de->d_name, ".conf"))
                                continue;
                        STRV_FOREACH(f, files)
                                if (streq(path_basename(*f), de->d_name))
                                        hidden = true;
                        if (hidden)
                                continue;
                        path = strjoin(dirs[i], "/", de->d_name);
                        if (!path || strv_consume(&files, TAKE_PTR(path)) < 0) {
                                closedir(d);
                                return log_oom();
                        }
                }
                closedir(d);
        }

        out = memfd_create("modprobe.d", MFD_CLOEXEC);
        if (out < 0)
                return log_error_errno(errno, "Failed to create a memory file: %m");
        for (size_t n = strv_length(files), done = 0; done < n; done++) {
                /* Smallest name left first: the order libkmod reads them in. */
                char **next = NULL;
                _cleanup_free_ char *text = NULL;
                size_t size;

                for (char **f = files; *f; f++)
                        if (**f && (!next || strcmp(path_basename(*f), path_basename(*next)) < 0))
                                next = f;
                r = read_full_file_in_root(root, *next, &text, &size);
                if (r < 0)
                        log_warning_errno(r, "Skipping %s%s in the tree's modprobe.d: %m",
                                          streq(root, "/") ? "" : root, *next);
                else if ((r = write_all(out, text, size)) < 0 || (r = write_all(out, "\n", 1)) < 0)
                        return log_error_errno(r, "Failed to write a memory file: %m");
                (*next)[0] = 0;         /* taken */
        }
        *ret_fd = TAKE_FD(out);
        return 0;
}

/* libkmod opens the module directory's index files and module files itself, by path: a FIFO there
 * would block it forever, a device node would be read. Such a file is refused before libkmod
 * starts, with its name. (nftw() does not follow symlinks with FTW_PHYS; a link leads to a file
 * libkmod reaches through the tree's resolution of the directory, checked where it lands.) */
static char special_file[PATH_MAX];     /* nftw() reuses its buffer: the name is copied */

static int check_module_file(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        if (type == FTW_F && !S_ISREG(st->st_mode)) {
                snprintf(special_file, sizeof(special_file), "%s", path);
                return (int) st->st_mode;
        }
        return 0;
}

static int check_module_dir(const char *moddir) {
        int r;

        special_file[0] = 0;
        r = nftw(moddir, check_module_file, 16, FTW_PHYS);
        if (r > 0 && special_file[0])
                return log_error_errno(SYNTHETIC_ERRNO(EBADFD), "%s is %s, not a regular file: refusing to read the "
                                       "module directory %s (libkmod would open it).", special_file,
                                       file_type_name((mode_t) r), moddir);
        if (r < 0)
                return log_error_errno(errno, "Failed to read the module directory %s: %m", moddir);
        return 0;
}

int modules_add(Manifest *m, const Probe *p, const ModuleRequest *req) {
        _cleanup_(kmod_unrefp) struct kmod_ctx *ctx = NULL;
        _cleanup_strv_free_ char **config = NULL;
        _cleanup_close_ int config_fd = -EBADF;
        char config_path[64];
        ModuleState s = { .manifest = m, .probe = p };
        int r;

        /* modprobe.d of the source tree, not of the build host: read by foyer inside the tree and
         * handed to libkmod as one file (a memfd), since libkmod would open the directories and
         * their files by host path, following a symlink in the tree out of it. */
        r = tree_modprobe_config(m->root, &config_fd);
        if (r < 0)
                return r;
        snprintf(config_path, sizeof(config_path), "/proc/self/fd/%i", config_fd);
        r = strv_extend(&config, config_path);
        if (r < 0)
                return log_oom();

        r = check_module_dir(p->moddir);
        if (r < 0)
                return r;
        ctx = kmod_new(p->moddir, (const char * const *) config);
        if (!ctx)
                return log_error_errno(SYNTHETIC_ERRNO(ENOMEM), "Failed to create a libkmod context for %s.", p->moddir);
        kmod_set_log_fn(ctx, kmod_log, NULL);
        r = kmod_load_resources(ctx);
        if (r < 0)
                return log_error_errno(r, "Failed to load the module index of %s: %m", p->moddir);

        STRV_FOREACH(n, req->required) {
                r = add_by_name(&s, ctx, *n, "requested", "requested");
                if (r < 0)
                        goto finish;
        }
        for (size_t i = 0; req->needed && req->needed[i]; i++) {
                r = add_by_name(&s, ctx, req->needed[i], "host-only", req->needed_by[i]);
                if (r < 0)
                        goto finish;
        }
        STRV_FOREACH(n, req->wanted) {
                r = add_by_name(&s, ctx, *n, p->host ? "host-only" : "default set", NULL);
                if (r < 0)
                        goto finish;
        }
        if (req->classes) {
                r = add_classes(&s, ctx);
                if (r < 0)
                        goto finish;
        }

        r = regenerate_index(&s);
        if (r >= 0)
                log_debug("%zu kernel modules for %s.", strv_length(s.files), p->kver);

finish:
        strv_free(s.done);
        strv_free(s.files);
        return r;
}
