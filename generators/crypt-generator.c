/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-crypt-generator: systemd-cryptsetup@NAME.service units for LUKS volumes named by rd.luks.* (and
 * luks.*) on the kernel command line and by the initrd's /etc/crypttab, merged and written as systemd
 * 252's systemd-cryptsetup-generator does. Only active in the initrd. */

#include "cmdline.h"
#include "crypt-disk.h"
#include "crypttab.h"
#include "devspec.h"
#include "generator.h"
#include "id128-util.h"
#include "luks-uuid.h"
#include "mount-options.h"
#include "parse-util.h"
#include "strv.h"

/* A volume mentioned on the command line, keyed by the UUID exactly as written. */
typedef struct CryptDevice {
        char *uuid, *name, *keyfile, *keydev, *headerdev, *datadev, *options;
        bool create; /* named by luks.uuid= or luks.name=, and not (yet) taken over by a crypttab line */
} CryptDevice;

static bool arg_enabled = true, arg_read_crypttab = true, arg_allow_list = false;
static const char *arg_crypttab, *arg_runtime_dir;
static char *arg_default_options, *arg_default_keyfile;
static CryptDevice **arg_devices;
static size_t arg_n_devices;

/* The one place that frees the arg_* state and sets it back to its defaults (run by generator_main()). */
static void reset_args(void) {
        for (size_t i = 0; i < arg_n_devices; i++) {
                CryptDevice *d = arg_devices[i];

                free(d->uuid);
                free(d->name);
                free(d->keyfile);
                free(d->keydev);
                free(d->headerdev);
                free(d->datadev);
                free(d->options);
                free(d);
        }
        free(arg_devices);
        arg_devices = NULL;
        arg_n_devices = 0;
        free(arg_default_options);
        free(arg_default_keyfile);
        arg_default_options = arg_default_keyfile = NULL;
        arg_enabled = arg_read_crypttab = true;
        arg_allow_list = false;
        arg_crypttab = arg_runtime_dir = NULL;
}

static CryptDevice *find_device(const char *uuid) {
        for (size_t i = 0; i < arg_n_devices; i++)
                if (streq(arg_devices[i]->uuid, uuid))
                        return arg_devices[i];
        return NULL;
}

/* Returns the device for uuid, adding it (in command-line order) if new; NULL only on OOM. */
static CryptDevice *get_device(const char *uuid) {
        CryptDevice *d = find_device(uuid), **a;

        if (d)
                return d;
        a = reallocarray(arg_devices, arg_n_devices + 1, sizeof(CryptDevice *));
        if (!a)
                return NULL;
        arg_devices = a;
        d = calloc(1, sizeof(CryptDevice));
        if (!d)
                return NULL;
        d->uuid = strdup(uuid);
        if (!d->uuid) {
                free(d);
                return NULL;
        }
        arg_devices[arg_n_devices++] = d;
        return d;
}

static bool warn_uuid_invalid(const char *key, const char *uuid) {
        if (id128_is_valid(uuid))
                return false;
        log_warning("Failed to parse %s= kernel command line switch. UUID \"%s\" is invalid, ignoring.", key, uuid);
        return true;
}

/* The volume a parameter names by UUID: *ret is NULL (after a warning naming the parameter) when the
 * UUID is not valid. -ENOMEM only on OOM. */
static int device_for_uuid(const char *key, const char *uuid, CryptDevice **ret) {
        *ret = NULL;
        if (warn_uuid_invalid(key, uuid))
                return 0;
        *ret = get_device(uuid);
        return *ret ? 0 : log_oom();
}

/* The "UUID=REST" of luks.key= and luks.data= (luks_uuid_split_prefix()). Without such a prefix
 * *ret_rest is NULL; otherwise it points after the '=', and *ret is the volume, or NULL (after a
 * warning naming the parameter) if the UUID is not valid. */
static int device_for_uuid_prefix(const char *key, const char *value, CryptDevice **ret, const char **ret_rest) {
        _cleanup_free_ char *uuid = NULL;
        int r;

        *ret = NULL;
        *ret_rest = NULL;
        r = luks_uuid_split_prefix(value, &uuid, ret_rest);
        if (r < 0)
                return log_oom();
        if (r == 0)
                return 0;
        return device_for_uuid(key, uuid, ret);
}

/* A mapping name dm-crypt and the single-quoted ExecStart= can carry. */
static bool name_is_valid(const char *name) {
        return !isempty(name) && strlen(name) < 128 && !streq(name, ".") && !streq(name, "..") &&
               !strpbrk(name, "/'") && unit_value_is_safe(name);
}

/* Moves a "header=FILE:DEVICE" option to the end as "header=FILE" and returns DEVICE separately. */
static int filter_header_device(const char *options, char **ret_headerdev, char **ret_options) {
        _cleanup_free_ char *spec = NULL, *filtered = NULL, *file = NULL, *device = NULL;
        int r;

        r = mount_options_filter(options, "header\0", &spec, NULL, &filtered);
        if (r < 0)
                return log_oom();
        if (r > 0) {
                char *joined;

                r = crypttab_split_keyspec(spec, &file, &device);
                if (r < 0)
                        return log_oom();
                /* As 252: a bare "header" (no file) ends the string after "header=". */
                joined = isempty(filtered) ? strjoin("header=", file) : strjoin(filtered, ",header=", file);
                if (!joined)
                        return log_oom();
                free(filtered);
                filtered = joined;
        }
        *ret_headerdev = TAKE_PTR(device);
        *ret_options = TAKE_PTR(filtered);
        return 0;
}

static int parse_boolean_switch(const char *key, const char *value, bool *arg) {
        int r = value ? parse_boolean(value) : 1;

        if (r < 0)
                log_warning("Failed to parse %s= kernel command line switch %s. Ignoring.", key, value);
        else
                *arg = r;
        return 0;
}

static int parse_cmdline_item(const char *key, const char *value, void *data) {
        _cleanup_free_ char *uuid = NULL, *rest = NULL;
        const char *spec;
        CryptDevice *d;
        int r;

        if (!startswith(key, "luks"))
                return 0;
        if (value && !unit_value_is_safe(value)) {
                log_warning("Ignoring %s=, its value contains control characters or ends in a backslash.", key);
                return 0;
        }

        if (streq(key, "luks"))
                return parse_boolean_switch(key, value, &arg_enabled);
        if (streq(key, "luks.crypttab"))
                return parse_boolean_switch(key, value, &arg_read_crypttab);

        if (!(streq(key, "luks.uuid") || streq(key, "luks.name") || streq(key, "luks.options") ||
              streq(key, "luks.key") || streq(key, "luks.data")) ||
            cmdline_value_missing(key, value))
                return 0;

        if (streq(key, "luks.uuid")) {
                /* 252 takes any string here; an invalid one can never appear in /dev/disk/by-uuid/. */
                r = device_for_uuid(key, luks_uuid_skip_prefix(value), &d);
                if (r < 0 || !d)
                        return r;
                d->create = arg_allow_list = true;

        } else if (streq(key, "luks.name")) {
                r = luks_uuid_split_word(value, &uuid, &rest);
                if (r < 0)
                        return log_oom();
                if (r == 0) {
                        log_warning("Failed to parse luks name switch %s. Ignoring.", value);
                        return 0;
                }
                if (warn_uuid_invalid(key, uuid))
                        return 0;
                if (!name_is_valid(rest)) {
                        log_warning("Failed to parse luks.name=%s: \"%s\" is not a valid volume name, ignoring.",
                                    value, rest);
                        return 0;
                }
                d = get_device(uuid);
                if (!d)
                        return log_oom();
                if (d->name && !streq(d->name, rest))
                        log_warning("luks.name= for %s given twice (\"%s\", then \"%s\"), using the last one.",
                                    uuid, d->name, rest);
                d->create = arg_allow_list = true;
                free(d->name);
                d->name = TAKE_PTR(rest);

        } else if (streq(key, "luks.options")) {
                _cleanup_free_ char *headerdev = NULL, *options = NULL;

                r = luks_uuid_split_word(value, &uuid, &rest);
                if (r < 0)
                        return log_oom();
                if (r == 0) {
                        /* No UUID: the default options of command-line volumes. */
                        if (free_and_strdup(&arg_default_options, value) < 0)
                                return log_oom();
                        return 0;
                }
                r = device_for_uuid(key, uuid, &d);
                if (r < 0 || !d)
                        return r;
                r = filter_header_device(rest, &headerdev, &options);
                if (r < 0)
                        return r;
                free(d->options);
                d->options = TAKE_PTR(options);
                free(d->headerdev);
                d->headerdev = TAKE_PTR(headerdev);

        } else if (streq(key, "luks.key")) {
                _cleanup_free_ char *file = NULL, *device = NULL;

                r = device_for_uuid_prefix(key, value, &d, &spec);
                if (r < 0)
                        return r;
                if (!spec) {
                        /* No UUID: the default key file of command-line volumes, taken as is. */
                        if (free_and_strdup(&arg_default_keyfile, value) < 0)
                                return log_oom();
                        return 0;
                }
                if (!d)
                        return 0;
                r = crypttab_split_keyspec(spec, &file, &device);
                if (r < 0)
                        return log_oom();
                free(d->keyfile);
                d->keyfile = TAKE_PTR(file);
                free(d->keydev);
                d->keydev = TAKE_PTR(device);

        } else if (streq(key, "luks.data")) {
                _cleanup_free_ char *node = NULL;

                r = device_for_uuid_prefix(key, value, &d, &spec);
                if (r < 0)
                        return r;
                if (!spec) {
                        log_warning("Failed to parse luks.data= kernel command line switch. UUID is invalid, ignoring.");
                        return 0;
                }
                if (!d)
                        return 0;
                if (devspec_to_node(spec, DEVSPEC_NO_ID, &node) < 0)
                        return log_oom();
                free(d->datadev);
                d->datadev = TAKE_PTR(node);
        }
        return 0;
}

/* The walk over all volumes gathers the first failure in *acc (RET_GATHER()) and tries every volume
 * still; only running out of memory ends it. */
static int gather_volume_result(int *acc, int r) {
        assert(acc);

        RET_GATHER(*acc, r);
        return r == -ENOMEM ? r : 0;
}

static int add_crypttab_device(const CrypttabEntry *e, void *data) {
        _cleanup_free_ char *keyfile = NULL, *keydev = NULL, *headerdev = NULL, *filtered = NULL;
        const char *uuid, *options = e->options;
        CryptDevice *d = NULL;
        int r;

        if (!e->name) {
                log_error("Failed to parse %s:%u, ignoring.", arg_crypttab, e->line);
                return 0;
        }
        /* Every field ends up in the unit (ExecStart=, What=, RequiresMountsFor=, ...). */
        for (size_t i = 0; i < 4; i++) {
                static const char *const field[] = { "NAME", "DEVICE", "KEYFILE", "OPTIONS" };
                const char *v = i == 0 ? e->name : i == 1 ? e->device : i == 2 ? e->keyspec : e->options;

                if (v && !unit_value_is_safe(v)) {
                        log_error("%s:%u: the %s field contains a control character or ends in a backslash, ignoring the line.",
                                  arg_crypttab, e->line, field[i]);
                        return 0;
                }
        }
        if (e->extra_fields)
                log_warning("%s:%u has more than four fields, ignoring the rest of the line.", arg_crypttab, e->line);

        /* The command-line volume this line describes: by UUID= or by-uuid device, else by luks-UUID name. */
        uuid = startswith(e->device, "UUID=");
        if (!uuid)
                uuid = path_startswith(e->device, "/dev/disk/by-uuid/");
        if (!uuid)
                uuid = startswith(e->name, LUKS_UUID_NAME_PREFIX);
        if (uuid)
                d = find_device(uuid);

        if (arg_allow_list && !d) {
                log_info("Not creating device '%s' because it was not specified on the kernel command line.", e->name);
                return 0;
        }
        if (!name_is_valid(e->name)) {
                log_error("%s:%u: \"%s\" is not a valid volume name, ignoring.", arg_crypttab, e->line, e->name);
                return 0;
        }

        r = crypttab_split_keyspec(e->keyspec, &keyfile, &keydev);
        if (r < 0)
                return log_oom();

        /* The line's name, device and key win; per-UUID luks.options= replace the line's options. */
        if (options && (!d || !d->options)) {
                r = filter_header_device(options, &headerdev, &filtered);
                if (r < 0)
                        return r;
                options = filtered;
        }

        r = crypt_write_volume(generator_dest, arg_runtime_dir, &(CryptVolume) {
                        .name = e->name,
                        .device = e->device,
                        .key_file = keyfile,
                        .keydev = keydev,
                        .headerdev = d && d->options ? d->headerdev : headerdev,
                        .options = d && d->options ? d->options : options,
                        .source = arg_crypttab,
                });
        if (d)
                d->create = false;
        return gather_volume_result(data, r);
}

static int add_cmdline_devices(int *acc) {
        for (size_t i = 0; i < arg_n_devices; i++) {
                _cleanup_free_ char *device = NULL;
                CryptDevice *d = arg_devices[i];
                int r;

                if (!d->create) {
                        log_debug("Skipping command-line options for %s, as no volume is created for it.", d->uuid);
                        continue;
                }
                if (!d->name && !(d->name = strjoin(LUKS_UUID_NAME_PREFIX, d->uuid)))
                        return log_oom();
                device = strjoin("UUID=", d->uuid);
                if (!device)
                        return log_oom();

                r = crypt_write_volume(generator_dest, arg_runtime_dir, &(CryptVolume) {
                                .name = d->name,
                                .device = d->datadev ?: device,
                                .key_file = d->keyfile ?: arg_default_keyfile,
                                .keydev = d->keydev,
                                .headerdev = d->headerdev,
                                .options = d->options ?: arg_default_options,
                                .source = "/proc/cmdline",
                        });
                r = gather_volume_result(acc, r);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int run(const char *dest, const char *dest_early, const char *dest_late) {
        int r, acc = 0;

        assert(dest);

        arg_crypttab = getenv("SYSTEMD_CRYPTTAB") ?: "/etc/crypttab";
        arg_runtime_dir = getenv("RUNTIME_DIRECTORY") ?: "/run/systemd/cryptsetup";

        r = cmdline_parse(parse_cmdline_item, NULL, CMDLINE_STRIP_RD_PREFIX);
        if (r < 0)
                return log_warning_errno(r, "Failed to parse kernel command line: %m");
        if (!arg_enabled) {
                log_debug("Disabled by luks=no, not creating any volume.");
                return 0;
        }

        if (arg_read_crypttab) {
                r = crypttab_parse(arg_crypttab, add_crypttab_device, &acc);
                if (r == -ENOENT) {
                        log_debug("%s does not exist, no volumes from it.", arg_crypttab);
                        r = 0;
                } else if (r < 0 && r != -ENOMEM) {
                        /* Like 252 for a file it cannot open; the command line still counts. */
                        log_error_errno(r, "Failed to read %s: %m", arg_crypttab);
                        r = 0;
                }
        } else
                log_debug("Skipping %s, as luks.crypttab=no was given.", arg_crypttab);
        if (r >= 0)
                r = add_cmdline_devices(&acc);
        /* Out of memory ended the walk; otherwise the first volume that failed. */
        RET_GATHER(r, acc);
        return r < 0 ? r : 0;
}

FOYER_DEFINE_MAIN_GENERATOR(run, reset_args);
