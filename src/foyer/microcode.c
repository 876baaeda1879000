/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "compress.h"
#include "cpio.h"
#include "log.h"
#include "microcode.h"
#include "util.h"

static const char *const microcode_mode_table[_MICROCODE_MODE_MAX] = {
        [MICROCODE_ALL]  = "all",
        [MICROCODE_HOST] = "host",
        [MICROCODE_NONE] = "none",
};

const char *microcode_mode_to_string(MicrocodeMode m) {
        return m >= 0 && m < _MICROCODE_MODE_MAX ? microcode_mode_table[m] : NULL;
}

MicrocodeMode microcode_mode_from_string(const char *s) {
        if (s)
                for (MicrocodeMode m = 0; m < _MICROCODE_MODE_MAX; m++)
                        if (streq(s, microcode_mode_table[m]))
                                return m;
        return _MICROCODE_MODE_INVALID;
}

typedef struct VendorInfo {
        const char *file;       /* the name the kernel looks for under kernel/x86/microcode/ */
        const char *dir;        /* the package's directory under the firmware directory */
        const char *suffix;     /* only files named so (NULL: every file) */
} VendorInfo;

/* Intel's package ships one file per CPU signature (06-8e-09, ...), all of them wanted;
 * amd64-microcode ships microcode_amd*.bin beside other files: the *.bin ones are what its own
 * initramfs-tools hook concatenates. */
static const VendorInfo vendor_table[_MICROCODE_VENDOR_MAX] = {
        [MICROCODE_VENDOR_AMD]   = { "AuthenticAMD.bin", "amd-ucode", ".bin" },
        [MICROCODE_VENDOR_INTEL] = { "GenuineIntel.bin", "intel-ucode", NULL },
};

const char *microcode_vendor_file(MicrocodeVendor v) {
        return v >= 0 && v < _MICROCODE_VENDOR_MAX ? vendor_table[v].file : NULL;
}

MicrocodeVendor microcode_vendor_from_cpuinfo(const char *cpuinfo) {
        assert(cpuinfo);

        for (const char *line = cpuinfo; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                size_t n = strcspn(line, "\n");
                const char *p = line, *end = line + n, *value;

                if (n < 9 || !startswith(line, "vendor_id"))
                        continue;
                p += 9;
                while (p < end && (*p == ' ' || *p == '\t'))
                        p++;
                if (p >= end || *p != ':')
                        continue;
                p++;
                while (p < end && (*p == ' ' || *p == '\t'))
                        p++;
                value = p;
                while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
                        end--;
                n = end - value;

#define IS(s) (n == strlen(s) && memcmp(value, s, n) == 0)
                if (IS("GenuineIntel"))
                        return MICROCODE_VENDOR_INTEL;
                if (IS("AuthenticAMD") || IS("HygonGenuine"))
                        return MICROCODE_VENDOR_AMD;
#undef IS
                return -EOPNOTSUPP;
        }
        return -ENOENT;
}

MicrocodeVendor microcode_host_vendor(void) {
        _cleanup_free_ char *text = NULL;
        MicrocodeVendor v;
        int r;

        r = read_full_file("/proc/cpuinfo", &text, NULL);
        if (r < 0)
                return log_warning_errno(r, "Cannot read /proc/cpuinfo to find the CPU's vendor: %m");
        v = microcode_vendor_from_cpuinfo(text);
        if (v == -ENOENT)
                log_warning("/proc/cpuinfo names no CPU vendor (vendor_id): no early microcode for this CPU.");
        else if (v < 0)
                log_info("This CPU's vendor takes no early microcode from the initrd.");
        return v;
}

/* The package's directory in root: /usr/lib/firmware/DIR, or /lib/firmware/DIR in a tree without
 * merged /usr (in a merged one both are the same). NULL in *ret when neither exists. */
static int find_vendor_dir(const char *root, const VendorInfo *vi, char **ret_image_dir, char **ret_host_dir) {
        FOREACH_STRING(base, "/usr/lib/firmware/", "/lib/firmware/") {
                _cleanup_free_ char *dir = strjoin(base, vi->dir), *host = NULL;
                int r;

                if (!dir)
                        return log_oom();
                r = path_in_root(root, dir, false, &host);
                if (IN_SET(r, -ENOENT, -ENOTDIR))
                        continue;
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0)
                        return log_error_errno(r, "Failed to look up %s in %s: %m", dir, root);
                *ret_image_dir = TAKE_PTR(dir);
                *ret_host_dir = TAKE_PTR(host);
                return 0;
        }
        *ret_image_dir = *ret_host_dir = NULL;
        return 0;
}

/* The vendor's files in root, concatenated in byte order of their names (the order of dracut's
 * and the Debian hooks' shell globs in the C locale), into *ret (NULL, size 0 when none). */
static int collect_vendor(const char *root, MicrocodeVendor v, char **ret, size_t *ret_size) {
        const VendorInfo *vi = &vendor_table[v];
        _cleanup_free_ char *dir = NULL, *host_dir = NULL, *all = NULL;
        _cleanup_strv_free_ char **names = NULL;
        size_t size = 0;
        int r;

        *ret = NULL;
        *ret_size = 0;

        r = find_vendor_dir(root, vi, &dir, &host_dir);
        if (r < 0 || !dir)
                return r;
        r = dir_list_suffix(host_dir, vi->suffix, &names);
        if (r < 0)
                return log_error_errno(r, "Failed to list %s in %s: %m", dir, root);

        STRV_FOREACH(name, names) {
                _cleanup_free_ char *path = strjoin(dir, "/", *name), *data = NULL;
                size_t n;
                char *p;

                if (!path)
                        return log_oom();
                /* Each name again through the root: a symlink in the package's directory resolves
                 * inside the tree. */
                r = read_full_file_in_root(root, path, &data, &n);
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0) {
                        log_debug_errno(r, "Microcode: skipping %s, not a regular file: %m", path);
                        continue;
                }
                if (n == 0)
                        continue;
                p = realloc(all, size + n);
                if (!p)
                        return log_oom();
                all = p;
                memcpy(all + size, data, n);
                size += n;
                log_debug("Microcode: %s (%zu bytes) into kernel/x86/microcode/%s.", path, n, vi->file);
        }

        *ret = TAKE_PTR(all);
        *ret_size = size;
        return 0;
}

/* The size of a newc header and name of that length, with the padding to 4 bytes. */
static uint64_t entry_head_size(size_t name_len) {
        return ALIGN_TO(110 + name_len + 1, 4);
}

/* The kernel applies Intel's microcode where it finds it in the archive (the MSR takes the address
 * of the update data, which must be 16-byte aligned: Intel SDM vol. 3, "Microcode Update
 * Loader"), and Intel's updates are multiples of 1 KiB: so GenuineIntel.bin's data must start on
 * 16 bytes. newc aligns to 4 only; as iucode_tool --write-earlyfw does, an empty file whose name
 * has the right length goes before it when needed. */
static int write_alignment_entry(CpioWriter *w, const char *name) {
        static const char base[] = "kernel/x86/microcode/.GenuineIntel.bin.align";
        char pad[sizeof(base) + 12];
        uint64_t data_at = w->offset + entry_head_size(strlen(name)), need, head;
        size_t extra;

        need = (16 - data_at % 16) % 16;        /* 0, 4, 8 or 12: newc keeps 4 */
        if (need == 0)
                return 0;
        /* Each 4 more bytes of name make the entry 4 bytes longer. */
        head = entry_head_size(sizeof(base) - 1);
        extra = (size_t) ((need + 16 - head % 16) % 16);
        snprintf(pad, sizeof(pad), "%s%.*s", base, (int) extra, "000000000000");
        assert((w->offset + entry_head_size(strlen(pad)) + entry_head_size(strlen(name))) % 16 == 0);
        return cpio_write_file(w, pad, 0644, 0, 1, -EBADF, NULL, 0);
}

int microcode_write_early_cpio(const char *root, MicrocodeMode mode, uint64_t mtime, int fd, uint64_t *ret_size) {
        char *data[_MICROCODE_VENDOR_MAX] = {};
        size_t size[_MICROCODE_VENDOR_MAX] = {};
        _cleanup_(sink_freep) Sink *sink = NULL;
        MicrocodeVendor host = _MICROCODE_VENDOR_INVALID;
        bool any = false;
        CpioWriter w;
        int r = 0;

        assert(root);
        assert(fd >= 0);

        if (mode == MICROCODE_NONE)
                return 0;
        if (mode == MICROCODE_HOST) {
                host = microcode_host_vendor();
                if (host < 0)
                        return 0;       /* logged */
        }

        for (MicrocodeVendor v = 0; v < _MICROCODE_VENDOR_MAX; v++) {
                if (mode == MICROCODE_HOST && v != host)
                        continue;
                r = collect_vendor(root, v, &data[v], &size[v]);
                if (r < 0)
                        goto finish;
                any = any || size[v] > 0;
        }
        if (!any) {
                log_debug("Microcode: no %s%s microcode in %s.", mode == MICROCODE_HOST ? "" : "Intel or AMD",
                          mode == MICROCODE_HOST ? microcode_vendor_file(host) : "", root);
                r = 0;
                goto finish;
        }

        r = sink_new(COMPRESSION_NONE, -1, fd, &sink);
        if (r < 0) {
                log_error_errno(r, "Failed to write the early microcode archive: %m");
                goto finish;
        }
        cpio_writer_init(&w, sink, mtime);
        /* The kernel's find_cpio_data() matches the name from its first byte: no "./" prefix. The
         * entries in byte order of their paths (the vendors are numbered so). */
        FOREACH_STRING(d, "kernel", "kernel/x86", "kernel/x86/microcode") {
                r = cpio_write_directory(&w, d, 0755);
                if (r < 0)
                        goto write_failed;
        }
        for (MicrocodeVendor v = 0; v < _MICROCODE_VENDOR_MAX; v++) {
                _cleanup_free_ char *name = NULL;

                if (size[v] == 0)
                        continue;
                name = strjoin("kernel/x86/microcode/", vendor_table[v].file);
                if (!name) {
                        r = log_oom();
                        goto finish;
                }
                if (v == MICROCODE_VENDOR_INTEL) {
                        r = write_alignment_entry(&w, name);
                        if (r < 0)
                                goto write_failed;
                }
                r = cpio_write_file(&w, name, 0644, 0, 1, -EBADF, data[v], size[v]);
                if (r < 0)
                        goto write_failed;
                log_info("Early microcode: %s, %zu bytes.", vendor_table[v].file, size[v]);
        }
        /* The trailer pads to 512 bytes: the compressed archive starts on a block, and the kernel
         * skips the zeros between archives. */
        r = cpio_write_trailer(&w);
        if (r < 0)
                goto write_failed;
        r = sink_finish(sink);
        if (r < 0)
                goto write_failed;
        if (ret_size)
                *ret_size = sink_bytes_in(sink);
        r = 1;
        goto finish;

write_failed:
        log_error_errno(r, "Failed to write the early microcode archive: %m");
finish:
        for (MicrocodeVendor v = 0; v < _MICROCODE_VENDOR_MAX; v++)
                free(data[v]);
        return r;
}
