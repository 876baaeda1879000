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
#include "log.h"
#include "manifest.h"
#include "microcode.h"
#include "modules.h"
#include "plan.h"
#include "probe.h"
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

int build_image(const BuildConfig *c, int out_fd, int ucode_fd, char ***ret_keys) {
        _cleanup_(manifest_freep) Manifest *m = NULL;
        _cleanup_strv_free_ char **search_path = NULL, **wanted = NULL, **keys = NULL;
        _cleanup_free_ char *output = NULL, *target = NULL;
        _cleanup_(sink_freep) Sink *sink = NULL;
        OutputFile out = OUTPUT_FILE_NULL;
        Probe p = {};
        _cleanup_(host_stack_done) HostStack host = {};
        ModuleRequest req = {};
        CpioWriter w;
        uint64_t mtime, ucode_size = 0;
        struct stat st;
        double t0 = now_s();
        const char *root = c->root ?: "/";
        int r;

        r = source_date_epoch(&mtime);
        if (r < 0)
                return r;

        if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode))
                return log_error_errno(errno ?: ENOTDIR, "Source root %s is not a directory: %m", root);

        /* A wrong output path fails in milliseconds, before the work: before the probe, unless the
         * path depends on the kernel version. */
        if (out_fd < 0 && c->output && !output_uses_kver(c->output)) {
                r = output_prepare(c->output, NULL, &output, &target);
                if (r < 0)
                        return r;
        }

        /* probe */
        r = probe_host(root, c->kver, &p);
        if (r < 0)
                return r;
        if (c->hostonly) {
                /* 0: the devices are not this host's or not there; the generic image, as logged. */
                r = hostonly_probe(root, &host);
                if (r < 0)
                        goto finish;
                if (r > 0)
                        p.host = &host;
        }

        if (out_fd >= 0)
                output = strdup("the initrd");
        else if (!output)
                r = output_prepare(c->output, p.kver, &output, &target);
        if (r < 0)
                goto finish;
        if (!output) {
                r = log_oom();
                goto finish;
        }

        /* plan */
        r = manifest_new(root, &m);
        if (r < 0) {
                r = log_oom();
                goto finish;
        }
        r = plan_image(m, c, &p);
        if (r < 0)
                goto finish;

        /* resolve: modules, then the library closure of everything planned. A host-only image
         * takes what the host's devices need; the generic one the default set and the hardware
         * classes. */
        req.required = c->add_modules;
        if (p.host && manifest_find(m, "/usr/lib/systemd/systemd-cryptsetup")) {
                /* A volume that unlocks with the TPM2 needs its driver (built in on Debian). */
                _cleanup_(token_asks_done) TokenAsks asks = {};

                r = plan_token_asks(m, c, &p, &asks);
                if (r < 0)
                        goto finish;
                if (asks.include[TOKEN_TPM2] &&
                    (strv_extend(&host.wanted, "tpm_tis") < 0 || strv_extend(&host.wanted, "tpm_crb") < 0)) {
                        r = log_oom();
                        goto finish;
                }
        }
        /* SSH unlocking: the network drivers (into the host's list, or the default one below). */
        r = plan_ssh_modules(c, &p, p.host ? &host.wanted : &wanted);
        if (r < 0)
                goto finish;
        if (p.host) {
                req.needed = p.host->required;
                req.needed_by = p.host->needed;
                req.wanted = p.host->wanted;
        } else {
                for (const char *const *n = plan_default_modules; *n; n++)
                        if (strv_extend(&wanted, *n) < 0) {
                                r = log_oom();
                                goto finish;
                        }
                req.wanted = wanted;
                req.classes = true;
        }
        r = modules_add(m, &p, &req);
        if (r < 0)
                goto finish;

        r = elf_search_path(root, &search_path);
        if (r < 0) {
                log_error_errno(r, "Failed to read the loader configuration of %s: %m", root);
                goto finish;
        }
        /* A host-only image that unlocks nothing needs none of the unlocking features of
         * libsystemd-shared (libcryptsetup, and TPM2, FIDO2 and PKCS#11 tokens in later systemd). */
        r = resolve_libraries_skip(m, search_path, RESOLVE_DLOPEN,
                                   p.host && !p.host->crypt && !manifest_find(m, "/usr/lib/systemd/systemd-cryptsetup") ?
                                   (char **) unlock_features : NULL);
        if (r < 0)
                goto finish;
        r = closure_check(m);
        if (r < 0)
                goto finish;

        /* -v: why each entry is in the image, in the order of the listing */
        if (log_get_max_level() >= LOG_DEBUG) {
                r = manifest_foreach_sorted(m, log_entry_reason, NULL);
                if (r < 0) {
                        r = log_oom();
                        goto finish;
                }
        }

        /* emit. Root is locked, so only key files make the image secret; the output file knows it
         * from the start, to keep the keys from others while it is written. */
        r = plan_key_files(m, &keys);
        if (r < 0)
                goto finish;
        if (out_fd < 0) {
                r = output_file_open(target, keys ? 0600 : 0644, &out);
                if (r < 0)
                        goto finish;
        }
        /* The early microcode archive first: the kernel reads it, uncompressed, from the start. */
        r = microcode_write_early_cpio(root, c->microcode >= 0 ? c->microcode : p.host ? MICROCODE_HOST : MICROCODE_ALL,
                                       mtime, ucode_fd >= 0 ? ucode_fd : out_fd >= 0 ? out_fd : out.fd,
                                       &ucode_size);
        if (r < 0)
                goto finish;
        if (ucode_fd >= 0)
                ucode_size = 0;         /* not in this file */
        r = sink_new(c->compression, c->level, out_fd >= 0 ? out_fd : out.fd, &sink);
        if (r < 0) {
                log_error_errno(r, "Failed to set up %s compression: %m", compression_to_string(c->compression));
                goto finish;
        }
        cpio_writer_init(&w, sink, mtime);
        r = cpio_write_manifest(&w, m);
        if (r < 0)
                goto finish;
        r = sink_finish(sink);
        if (r < 0) {
                log_error_errno(r, "Failed to write %s: %m", output);
                goto finish;
        }

        if (fstat(out_fd >= 0 ? out_fd : out.fd, &st) < 0) {
                r = log_error_errno(errno, "Failed to stat %s: %m", output);
                goto finish;
        }

        /* commit. A caller that asks for the keys embeds the image and tells about them itself. */
        if (keys && !ret_keys) {
                _cleanup_strv_free_ char **volume_keys = NULL, **host_keys = NULL;

                STRV_FOREACH(k, keys)
                        if (strv_extend(startswith(*k, FOYER_SSH_HOST_KEY_DIR "/") ? &host_keys : &volume_keys, *k) < 0) {
                                r = log_oom();
                                goto finish;
                        }
                _cleanup_free_ char *list = strv_join(volume_keys, ", "), *hlist = strv_join(host_keys, ", ");

                if (!list || !hlist) {
                        r = log_oom();
                        goto finish;
                }
                if (volume_keys)
                        log_warning("%s holds key files (%s): it is written with mode 0600; whoever can read it can unlock those volumes.",
                                    output, list);
                if (host_keys)
                        log_notice("%s holds the SSH host keys (%s): it is written with mode 0600; whoever can read it can "
                                   "pose as this machine to SSH clients.", output, hlist);
        }
        if (out_fd < 0) {
                r = output_file_commit(&out);
                if (r < 0)
                        goto finish;
        }

        log_info("Wrote %s%s%s: %skernel %s, %zu entries, %.1f MiB cpio, %.1f MiB %s%s, %.2f s.", output,
                 target && !streq(target, output) ? " -> " : "", target && !streq(target, output) ? target : "",
                 p.host ? "host-only, " : "", p.kver,
                 m->n_entries, sink_bytes_in(sink) / 1048576.0, (st.st_size - ucode_size) / 1048576.0,
                 compression_to_string(c->compression), ucode_size > 0 ? " after the early microcode archive" : "",
                 now_s() - t0);
        if (ret_keys)
                *ret_keys = TAKE_PTR(keys);
        r = 0;

finish:
        output_file_done(&out);
        probe_done(&p);
        return r;
}

void build_args_init(BuildArgs *a) {
        *a = (BuildArgs) {};
        build_config_init(&a->cli);
        a->cli.compression = _COMPRESSION_INVALID;
        a->cli.hostonly = -1;
        a->cli.microcode = _MICROCODE_MODE_INVALID;
        a->cli.target_settings = -1;
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
        return 0;
}
