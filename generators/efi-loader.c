/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "efi-loader.h"
#include "id128-util.h"
#include "macro.h"
#include "path-util.h"
#include "strv.h"
#include "systemd-version.h"

bool is_efi_boot(void) {
        _cleanup_free_ char *p = strjoin(sysfs_dir(), "/firmware/efi/");

        return p && access(p, F_OK) >= 0;
}

int efi_get_variable(const char *name, void **ret, size_t *ret_size) {
        _cleanup_free_ char *p = strjoin(sysfs_dir(), "/firmware/efi/efivars/", name);
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint32_t attr;
        struct stat st;
        ssize_t n;

        assert(name);
        assert(ret);
        assert(ret_size);

        if (!p)
                return -ENOMEM;
        fd = open(p, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size < 4)
                return -ENODATA;
        if (st.st_size > 4 * 1024 * 1024 + 4)
                return -E2BIG;

        /* efivarfs reads are all-or-nothing; a short read of the attribute word is an I/O error. */
        n = read(fd, &attr, sizeof(attr));
        if (n < 0)
                return -errno;
        if (n != sizeof(attr))
                return -EIO;

        buf = malloc(st.st_size - 4 + 3);
        if (!buf)
                return -ENOMEM;
        n = read(fd, buf, st.st_size - 4);
        if (n < 0)
                return -errno;
        /* Three NULs terminate the data even when a UTF-16 character was cut in half. */
        buf[n] = buf[n + 1] = buf[n + 2] = 0;

        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

static size_t utf8_encode(char *out, uint32_t c) {
        if (c < 0x80) {
                out[0] = (char) c;
                return 1;
        }
        if (c < 0x800) {
                out[0] = (char) (0xc0 | (c >> 6));
                out[1] = (char) (0x80 | (c & 0x3f));
                return 2;
        }
        if (c < 0x10000) {
                out[0] = (char) (0xe0 | (c >> 12));
                out[1] = (char) (0x80 | ((c >> 6) & 0x3f));
                out[2] = (char) (0x80 | (c & 0x3f));
                return 3;
        }
        out[0] = (char) (0xf0 | (c >> 18));
        out[1] = (char) (0x80 | ((c >> 12) & 0x3f));
        out[2] = (char) (0x80 | ((c >> 6) & 0x3f));
        out[3] = (char) (0x80 | (c & 0x3f));
        return 4;
}

char *efi_utf16le_to_utf8(const void *data, size_t size) {
        const uint8_t *f = data, *end = f + size;
        char *r, *t;

        if (size > SIZE_MAX / 2 - 1)
                return NULL;
        r = t = malloc(size * 2 + 1);
        if (!r)
                return NULL;

        while (f + 1 < end) {
                uint16_t w1 = f[1] << 8 | f[0], w2;

                f += 2;
                if (w1 < 0xd800 || w1 > 0xdfff) {
                        t += utf8_encode(t, w1);
                        continue;
                }
                if (w1 >= 0xdc00)
                        continue; /* a trailing surrogate on its own */
                if (f + 1 >= end)
                        break;
                w2 = f[1] << 8 | f[0];
                if (w2 < 0xdc00 || w2 > 0xdfff)
                        continue; /* a leading surrogate without its partner: skip it alone */
                f += 2;
                t += utf8_encode(t, 0x10000 + (((uint32_t) (w1 - 0xd800) << 10) | (w2 - 0xdc00)));
        }
        *t = 0;
        return r;
}

int efi_loader_get_device_part_uuid(char *ret) {
        _cleanup_free_ void *data = NULL;
        _cleanup_free_ char *s = NULL;
        unsigned b[16];
        size_t size;
        int r;

        r = efi_get_variable(EFI_LOADER_DEVICE_PART_UUID, &data, &size);
        if (r < 0)
                return r;
        s = efi_utf16le_to_utf8(data, size);
        if (!s)
                return -ENOMEM;

        /* systemd 252 uses exactly this pattern, so the same strings are accepted. 257 parses the value
         * with sd_id128_from_string(): the whole string is the UUID (32 hex digits, or 36 characters
         * with the four dashes), nothing may follow it. */
        if (systemd_version() >= 257 && !id128_is_valid(s))
                return -EIO;
        if (sscanf(s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                   &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7],
                   &b[8], &b[9], &b[10], &b[11], &b[12], &b[13], &b[14], &b[15]) != 16 &&
            (systemd_version() < 257 ||
             sscanf(s, "%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x",
                    &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7],
                    &b[8], &b[9], &b[10], &b[11], &b[12], &b[13], &b[14], &b[15]) != 16))
                return -EIO;

        if (ret)
                snprintf(ret, 37,
                         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                         b[0] & 0xff, b[1] & 0xff, b[2] & 0xff, b[3] & 0xff, b[4] & 0xff, b[5] & 0xff,
                         b[6] & 0xff, b[7] & 0xff, b[8] & 0xff, b[9] & 0xff, b[10] & 0xff, b[11] & 0xff,
                         b[12] & 0xff, b[13] & 0xff, b[14] & 0xff, b[15] & 0xff);
        return 0;
}
