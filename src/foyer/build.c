/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <time.h>

#include "build.h"
#include "closure.h"
#include "commit.h"
#include "cpio.h"
#include "elf-file.h"
#include "foyer-contract.h"
#include "hostonly.h"
#include "initramfs-tools.h"
#include "log.h"
#include "manifest.h"
#include "microcode.h"
#include "modules.h"
#include "plan.h"
#include "plan-table.h"
#include "probe.h"
#include "progress.h"
#include "resolve.h"
#include "util.h"

static int source_date_epoch(uint64_t *ret) {
        const char *e = getenv("SOURCE_DATE_EPOCH");
        char *end;
        unsigned long long v;

        *ret = 0;
        if (isempty(e))
                return 0;
        errno = 0;
        v = strtoull(e, &end, 10);
        if (errno != 0 || *end || v > UINT32_MAX)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Invalid SOURCE_DATE_EPOCH=%s.", e);
        *ret = v;
        return 0;
}

static const char *const unlock_features[] = { "cryptsetup", "tpm", "tpm2", "fido2", "pkcs11", "p11-kit", NULL };

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *entry_type_name(EntryType t) {
        static const char *const names[_ENTRY_TYPE_MAX] = {
                [ENTRY_DIRECTORY]   = "directory",
                [ENTRY_FILE]        = "file",
                [ENTRY_DATA]        = "file",
                [ENTRY_SYMLINK]     = "symlink",
                [ENTRY_CHAR_DEVICE] = "device",
        };

        return t >= 0 && t < _ENTRY_TYPE_MAX ? names[t] : "entry";
}

static int log_entry_reason(Entry *e, void *userdata) {
        log_debug("Entry %s (%s): %s", e->path, entry_type_name(e->type), e->reason);
        return 0;
}

/* The output path (Output= or -o with its specifiers expanded, else ./initrd-KVER.img) and the file
 * it makes build_image() replace (see output_path_resolve()). */
static int output_prepare(const char *pattern, const char *kver, char **ret_output, char **ret_target) {
        _cleanup_free_ char *output = NULL;
        int r;

        assert(ret_output);
        assert(ret_target);

        if (pattern)
                r = output_expand(pattern, kver, &output);
        else
                r = (output = strjoin("initrd-", kver, ".img")) ? 0 : -ENOMEM;
        if (r < 0)
                return r == -ENOMEM ? log_oom() : log_error_errno(r, "Invalid output path %s.", pattern);
        r = output_path_resolve(output, ret_target);
        if (r < 0)
                return r;
        *ret_output = TAKE_PTR(output);
        return 0;
}

/* What the stages of a build share: build_image() runs them in order, each a step a reader can
 * follow by its name (probe, plan, modules, libraries, write, commit), and releases it at the end. */
typedef struct Build {
        const BuildConfig *config;
        const char *root;
        int out_fd, ucode_fd;           /* the caller's descriptors, or -EBADF */
        uint64_t mtime;
        double started;

        Probe probe;
        HostStack host;
        Manifest *manifest;
        char *output, *target;          /* for messages; the file it replaces */
        char **keys;                    /* the image paths of the key files */
        OutputFile out;
        Sink *sink;
        uint64_t ucode_size;
        struct stat written;
} Build;

static void build_done(Build *b) {
        output_file_done(&b->out);
        sink_free(b->sink);
        manifest_free(b->manifest);
        strv_free(b->keys);
        free(b->output);
        free(b->target);
        host_stack_done(&b->host);
        probe_done(&b->probe);
}

static int build_out_fd(const Build *b) {
        return b->out_fd >= 0 ? b->out_fd : b->out.fd;
}

/* The source tree, the timestamp, and an output path that fails in milliseconds, before the work
 * (unless it depends on the kernel version). */
static int build_prepare(Build *b) {
        const BuildConfig *c = b->config;
        struct stat st;
        int r;

        r = source_date_epoch(&b->mtime);
        if (r < 0)
                return r;
        if (stat(b->root, &st) < 0 || !S_ISDIR(st.st_mode))
                return log_error_errno(errno ?: ENOTDIR, "Source root %s is not a directory: %m", b->root);
        if (b->out_fd < 0 && c->output && !output_uses_kver(c->output))
                return output_prepare(c->output, NULL, &b->output, &b->target);
        return 0;
}

/* The kernel (and, for a host-only image, the devices below the root), then the output path. */
static int build_probe(Build *b) {
        const BuildConfig *c = b->config;
        int r;

        r = probe_host(b->root, c->kver, &b->probe);
        if (r < 0)
                return r;
        if (c->hostonly) {
                /* 0: the devices are not this host's or not there; the generic image, as logged. */
                r = hostonly_probe(b->root, &b->host);
                if (r < 0)
                        return r;
                if (r > 0)
                        b->probe.host = &b->host;
        }
        if (b->out_fd >= 0)
                return (b->output = strdup("the initrd")) ? 0 : log_oom();
        if (!b->output)
                return output_prepare(c->output, b->probe.kver, &b->output, &b->target);
        return 0;
}

/* Everything the planners of plan.c's table add. */
static int build_plan(Build *b) {
        int r;

        r = manifest_new(b->root, &b->manifest);
        if (r < 0)
                return log_error_errno(r, "Failed to open %s: %m", b->root);
        return plan_image(b->manifest, b->config, &b->probe);
}

/* The kernel modules: a host-only image takes what the host's devices need, the generic one the
 * default set and the hardware classes; both what the planners' modules hooks ask for. */
static int build_modules(Build *b) {
        _cleanup_strv_free_ char **wanted = NULL;
        ModuleRequest req = { .required = b->config->add_modules };
        Probe *p = &b->probe;
        int r;

        r = plan_image_modules(b->manifest, b->config, p, p->host ? &b->host.wanted : &wanted);
        if (r < 0)
                return r;
        if (p->host) {
                req.needed = p->host->required;
                req.needed_by = p->host->needed;
                req.wanted = p->host->wanted;
        } else {
                for (const char *const *n = plan_default_modules; *n; n++)
                        if (!strv_contains(wanted, *n) && strv_extend(&wanted, *n) < 0)
                                return log_oom();
                req.wanted = wanted;
                req.classes = true;
        }
        return modules_add(b->manifest, p, &req);
}

/* The library closure of everything planned, then the closure check; with -v, why each entry is
 * there. */
static int build_libraries(Build *b) {
        _cleanup_strv_free_ char **search_path = NULL;
        const Probe *p = &b->probe;
        bool unlocks;
        int r;

        r = elf_search_path(b->root, &search_path);
        if (r < 0)
                return log_error_errno(r, "Failed to read the loader configuration of %s: %m", b->root);
        /* A host-only image that unlocks nothing needs none of the unlocking features of
         * libsystemd-shared (libcryptsetup, and TPM2, FIDO2 and PKCS#11 tokens in later systemd);
         * systemd-veritysetup needs libcryptsetup too. */
        unlocks = !p->host || p->host->crypt || manifest_find(b->manifest, "/usr/lib/systemd/systemd-cryptsetup") ||
                  manifest_find(b->manifest, "/usr/lib/systemd/systemd-veritysetup");
        r = resolve_libraries_skip(b->manifest, search_path, RESOLVE_DLOPEN, unlocks ? NULL : (char **) unlock_features);
        if (r < 0)
                return r;
        r = closure_check(b->manifest);
        if (r < 0)
                return r;
        if (log_get_max_level() >= LOG_DEBUG && manifest_foreach_sorted(b->manifest, log_entry_reason, NULL) < 0)
                return log_oom();
        return 0;
}

/* The archive: the early microcode archive first (the kernel reads it, uncompressed, from the
 * start), then the compressed one. Root is locked, so only key files make the image secret; the
 * output file knows it from the start, to keep the keys from others while it is written. */
static int build_write(Build *b) {
        const BuildConfig *c = b->config;
        CpioWriter w;
        int r;

        r = plan_key_files(b->manifest, &b->keys);
        if (r < 0)
                return r;
        if (b->out_fd < 0) {
                r = output_file_open(b->target, b->keys ? 0600 : 0644, &b->out);
                if (r < 0)
                        return r;
        }
        r = microcode_write_early_cpio(b->root,
                                       c->microcode >= 0 ? c->microcode : b->probe.host ? MICROCODE_HOST : MICROCODE_ALL,
                                       b->mtime, b->ucode_fd >= 0 ? b->ucode_fd : build_out_fd(b), &b->ucode_size);
        if (r < 0)
                return r;
        if (b->ucode_fd >= 0)
                b->ucode_size = 0;      /* not in this file */
        r = sink_new(c->compression, c->level, build_out_fd(b), &b->sink);
        if (r < 0)
                return log_error_errno(r, "Failed to set up %s compression: %m", compression_to_string(c->compression));
        cpio_writer_init(&w, b->sink, b->mtime);
        r = cpio_write_manifest(&w, b->manifest);
        if (r < 0)
                return r;
        r = sink_finish(b->sink);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s: %m", b->output);
        if (fstat(build_out_fd(b), &b->written) < 0)
                return log_error_errno(errno, "Failed to stat %s: %m", b->output);
        return 0;
}

/* Says which keys the image holds (unless the caller embeds it and says so itself), names the
 * file, and reports. */
static int build_commit(Build *b, bool caller_tells_keys) {
        const BuildConfig *c = b->config;
        int r;

        if (b->keys && !caller_tells_keys) {
                _cleanup_strv_free_ char **volume_keys = NULL, **host_keys = NULL;

                STRV_FOREACH(k, b->keys)
                        if (strv_extend(startswith(*k, FOYER_SSH_HOST_KEY_DIR "/") ? &host_keys : &volume_keys, *k) < 0)
                                return log_oom();
                _cleanup_free_ char *list = strv_join(volume_keys, ", "), *hlist = strv_join(host_keys, ", ");

                if (!list || !hlist)
                        return log_oom();
                if (volume_keys)
                        log_warning("%s holds key files (%s): it is written with mode 0600; whoever can read it can unlock those volumes.",
                                    b->output, list);
                if (host_keys)
                        log_notice("%s holds the SSH host keys (%s): it is written with mode 0600; whoever can read it can "
                                   "pose as this machine to SSH clients.", b->output, hlist);
        }
        if (b->out_fd < 0) {
                r = output_file_commit(&b->out);
                if (r < 0)
                        return r;
        }
        log_info("Wrote %s%s%s: %skernel %s, %zu entries, %.1f MiB cpio, %.1f MiB %s%s, %.2f s.", b->output,
                 b->target && !streq(b->target, b->output) ? " -> " : "",
                 b->target && !streq(b->target, b->output) ? b->target : "",
                 b->probe.host ? "host-only, " : "", b->probe.kver,
                 b->manifest->n_entries, sink_bytes_in(b->sink) / 1048576.0,
                 (b->written.st_size - b->ucode_size) / 1048576.0, compression_to_string(c->compression),
                 b->ucode_size > 0 ? " after the early microcode archive" : "", now_s() - b->started);
        initramfs_tools_warn_hooks(c);
        return 0;
}

int build_image(const BuildConfig *c, int out_fd, int ucode_fd, char ***ret_keys) {
        static const struct {
                int (*run)(Build *b);
                const char *progress;   /* the long ones: what progress.h shows */
        } stages[] = {
                { build_prepare,   NULL },
                { build_probe,     NULL },
                { build_plan,      "planning the image" },
                { build_modules,   "resolving kernel modules" },
                { build_libraries, "resolving libraries" },
                { build_write,     "writing and compressing the image" },
        };
        _cleanup_(build_done) Build b = {
                .config = c,
                .root = c->root ?: "/",
                .out_fd = out_fd,
                .ucode_fd = ucode_fd,
                .started = now_s(),
                .out = OUTPUT_FILE_NULL,
        };
        int r;

        assert(c);

        for (size_t i = 0; i < ELEMENTSOF(stages); i++) {
                if (stages[i].progress)
                        progress_begin(stages[i].progress);
                r = stages[i].run(&b);
                if (stages[i].progress)
                        progress_end();
                if (r < 0)
                        return r;
        }
        r = build_commit(&b, ret_keys);
        if (r < 0)
                return r;
        if (ret_keys)
                *ret_keys = TAKE_PTR(b.keys);
        return 0;
}

void build_args_init(BuildArgs *a) {
        *a = (BuildArgs) {};
        build_config_init(&a->cli);
        a->cli.compression = _COMPRESSION_INVALID;
        a->cli.hostonly = -1;
        a->cli.microcode = _MICROCODE_MODE_INVALID;
        a->cli.target_settings = -1;
        a->cli.network = _NETWORK_MODE_INVALID;
}

void build_args_done(BuildArgs *a) {
        build_config_done(&a->cli);
        a->modules = strv_free(a->modules);
        a->files = strv_free(a->files);
        a->key_files = strv_free(a->key_files);
        a->keymaps = strv_free(a->keymaps);
}

int build_args_parse(BuildArgs *a, int opt, const char *arg) {
        int r;

        switch (opt) {
        case 'k':
                r = build_config_assign(&a->cli, "KernelVersion", arg, "command line", 0);
                break;
        case 'r':
                r = build_config_assign(&a->cli, "Root", arg, "command line", 0);
                break;
        case 'c':
                r = build_config_assign(&a->cli, "Compression", arg, "command line", 0);
                break;
        case BUILD_ARG_LEVEL:
                r = build_config_assign(&a->cli, "CompressionLevel", arg, "command line", 0);
                break;
        case 'm':
                r = strv_extend(&a->modules, arg);
                break;
        case 'a':
                r = strv_extend(&a->files, arg);
                break;
        case BUILD_ARG_CRYPTTAB:
                r = build_config_assign(&a->cli, "Crypttab", arg, "command line", 0);
                break;
        case BUILD_ARG_KEY_FILE:
                r = strv_extend(&a->key_files, arg);
                break;
        case BUILD_ARG_NO_SHELL:
                r = build_config_assign(&a->cli, "NoShell", "yes", "command line", 0);
                break;
        case BUILD_ARG_MICROCODE:
                r = build_config_assign(&a->cli, "Microcode", arg, "command line", 0);
                break;
        case BUILD_ARG_NO_TARGET_SETTINGS:
                r = build_config_assign(&a->cli, "TargetSettings", "no", "command line", 0);
                break;
        case BUILD_ARG_KEYMAP:
                r = build_config_assign(&a->cli, "Keymap", arg, "command line", 0);
                break;
        case BUILD_ARG_ADD_KEYMAP:
                r = strv_extend(&a->keymaps, arg);
                break;
        case BUILD_ARG_SSH_UNLOCK:
                r = build_config_assign(&a->cli, "SshUnlock", arg, "command line", 0);
                break;
        case BUILD_ARG_SSH_HOST_KEYS:
                r = build_config_assign(&a->cli, "SshHostKeys", arg, "command line", 0);
                break;
        case BUILD_ARG_NETWORK:         /* --network alone: yes */
                r = build_config_assign(&a->cli, "Network", arg ?: "yes", "command line", 0);
                break;
        case 'v':
                log_set_max_level(LOG_DEBUG);
                return 1;       /* not an image setting */
        default:
                return 0;
        }
        if (r < 0)
                return r == -ENOMEM ? log_oom() : r;
        a->any = true;
        return 1;
}

int build_args_config(BuildArgs *a, BuildConfig *c) {
        int r;

        r = build_config_load_files(c);
        if (r < 0)
                return r;
#define OVERRIDE(field) if (a->cli.field) { free(c->field); c->field = TAKE_PTR(a->cli.field); }
        OVERRIDE(output);
        OVERRIDE(kver);
        OVERRIDE(root);
        OVERRIDE(cmdline);
        OVERRIDE(crypttab);
        OVERRIDE(keymap);
        OVERRIDE(ssh_unlock);
        OVERRIDE(ssh_host_keys);
#undef OVERRIDE
        if (a->cli.no_shell)    /* the command line can only turn shells off */
                c->no_shell = true;
        if (a->cli.hostonly >= 0)
                c->hostonly = a->cli.hostonly;
        if (a->cli.target_settings >= 0)
                c->target_settings = a->cli.target_settings;
        if (a->cli.compression >= 0)
                c->compression = a->cli.compression;
        if (a->cli.level >= 0)
                c->level = a->cli.level;
        if (a->cli.microcode >= 0)
                c->microcode = a->cli.microcode;
        if (a->cli.network >= 0)
                c->network = a->cli.network;
        STRV_FOREACH(mod, a->modules)
                if (strv_extend(&c->add_modules, *mod) < 0)
                        return log_oom();
        STRV_FOREACH(f, a->files)
                if (strv_extend(&c->add_files, *f) < 0)
                        return log_oom();
        STRV_FOREACH(f, a->key_files)
                if (strv_extend(&c->add_key_files, *f) < 0)
                        return log_oom();
        STRV_FOREACH(k, a->keymaps)
                if (strv_extend(&c->add_keymaps, *k) < 0)
                        return log_oom();
        /* The tree's initramfs-tools configuration, under foyer's own (initramfs-tools.h). */
        return initramfs_tools_apply(c, a->cli.compression >= 0);
}
