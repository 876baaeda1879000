/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The EFI variable reader of foyer-gpt-auto-generator (generators/efi-loader.c). The input is decoded
 * as UTF-16LE directly (valid UTF-8 out, at most twice the input, NUL-terminated), and stored as the
 * LoaderDevicePartUUID variable file of a fake $FOYER_SYSFS, which efi_get_variable() and
 * efi_loader_get_device_part_uuid() then read: the size limits hold and a parsed UUID is canonical. */
#include <stdio.h>
#include <sys/stat.h>

#include "efi-loader.h"
#include "fileio.h"
#include "fuzz.h"
#include "log.h"
#include "macro.h"
#include "strv.h"

/* Whether s is well-formed UTF-8 without surrogates or code points past U+10FFFF. */
static bool utf8_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        while (*p) {
                uint32_t c;
                int n;

                if (*p < 0x80) {
                        p++;
                        continue;
                } else if ((*p & 0xe0) == 0xc0)
                        c = *p & 0x1f, n = 1;
                else if ((*p & 0xf0) == 0xe0)
                        c = *p & 0x0f, n = 2;
                else if ((*p & 0xf8) == 0xf0)
                        c = *p & 0x07, n = 3;
                else
                        return false;
                p++;
                for (int i = 0; i < n; i++, p++) {
                        if ((*p & 0xc0) != 0x80)
                                return false;
                        c = c << 6 | (*p & 0x3f);
                }
                if ((n == 1 && c < 0x80) || (n == 2 && c < 0x800) || (n == 3 && c < 0x10000) ||
                    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
                        return false;
        }
        return true;
}

/* On tmpfs: every input is written there, and a disk would bound the runs per second. */
static char scratch[] = "/dev/shm/fuzz-efi-loader-XXXXXX", *var_file;

static void remove_scratch(void) {
        (void) unlink(var_file);
        for (char *slash; (slash = strrchr(var_file, '/')) && slash > var_file + strlen(scratch);) {
                *slash = 0;
                (void) rmdir(var_file);
        }
        (void) rmdir(scratch);
}

/* The variable file in a scratch sysfs made once per process, removed at exit. */
static const char *var_path(void) {
        if (var_file)
                return var_file;
        if (!mkdtemp(scratch))
                return NULL;
        var_file = strjoin(scratch, "/firmware/efi/efivars/" EFI_LOADER_DEVICE_PART_UUID);
        if (!var_file || mkdir_parents(var_file, 0755) < 0)
                return NULL;
        atexit(remove_scratch);
        setenv("FOYER_SYSFS", scratch, 1);
        return var_file;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL;
        _cleanup_free_ void *var = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        const char *path;
        char uuid[37];
        size_t var_size;
        int r;

        if (!fuzz_setup(size, 65536))
                return 0;

        s = efi_utf16le_to_utf8(data, size);
        if (s) {
                if (strlen(s) > size * 2)
                        fuzz_fail("UTF-8 longer than twice the UTF-16", NULL);
                if (!utf8_valid(s))
                        fuzz_fail("invalid UTF-8 from efi_utf16le_to_utf8()", NULL);
        }

        path = var_path();
        if (!path)
                return 0;
        f = fopen(path, "we");
        if (!f)
                return 0;
        if (fwrite(data, 1, size, f) != size || fclose(f) != 0) {
                f = NULL;
                return 0;
        }
        f = NULL;

        r = efi_get_variable(EFI_LOADER_DEVICE_PART_UUID, &var, &var_size);
        if (size < 4 ? r != -ENODATA : (r < 0 || var_size != size - 4))
                fuzz_fail("efi_get_variable() size handling", NULL);
        if (r >= 0 && memcmp(var, data + 4, var_size) != 0)
                fuzz_fail("efi_get_variable() changed the data", NULL);

        r = efi_loader_get_device_part_uuid(uuid);
        if (r >= 0) {
                if (strlen(uuid) != 36 || strspn(uuid, "0123456789abcdef-") != 36 || uuid[8] != '-' ||
                    uuid[13] != '-' || uuid[18] != '-' || uuid[23] != '-')
                        fuzz_fail("a parsed LoaderDevicePartUUID that is not canonical", NULL);
        } else if (r != -EIO && r != -ENODATA && r != -ENOMEM)
                fuzz_fail("unexpected error from efi_loader_get_device_part_uuid()", NULL);
        (void) efi_loader_get_device_part_uuid(NULL);
        return 0;
}
