/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The EFI variable reader of foyer-gpt-auto-generator (generators/efi-loader.c) on a fake firmware
 * tree in $FOYER_SYSFS: UTF-16 decoding as systemd's utf16_to_utf8(), the size limits, and
 * LoaderDevicePartUUID parsing as systemd 252's sscanf(). */

#include <fcntl.h>
#include <sys/stat.h>

#include "efi-loader.h"
#include "fileio.h"
#include "strv.h"
#include "tests.h"

static char *sysfs;

static void write_var(const void *data, size_t size) {
        _cleanup_free_ char *p = strjoin(sysfs, "/firmware/efi/efivars/" EFI_LOADER_DEVICE_PART_UUID);
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(p);
        ASSERT_OK(mkdir_parents(p, 0755));
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(write(fd, data, size) == (ssize_t) size);
}

/* Attribute word 7, then s as UTF-16LE (ASCII only) and a NUL. */
static void write_uuid_var(const char *s) {
        uint8_t buf[256] = { 7, 0, 0, 0 };
        size_t n = 4;

        for (; *s; s++) {
                buf[n++] = (uint8_t) *s;
                buf[n++] = 0;
        }
        buf[n++] = 0;
        buf[n++] = 0;
        write_var(buf, n);
}

static void remove_var(void) {
        _cleanup_free_ char *p = strjoin(sysfs, "/firmware/efi/efivars/" EFI_LOADER_DEVICE_PART_UUID);
        (void) unlink(p);
}

TEST(utf16) {
        /* "A", U+00E9, U+20AC, U+1F600 (a surrogate pair), a lone trailing surrogate (skipped), a
         * leading surrogate followed by "B" (skipped alone), "C", NUL, "D", and an odd byte. */
        const uint8_t in[] = { 'A', 0, 0xe9, 0, 0xac, 0x20, 0x3d, 0xd8, 0x00, 0xde, 0x00, 0xdc,
                               0x3d, 0xd8, 'B', 0, 'C', 0, 0, 0, 'D', 0, 'E' };
        _cleanup_free_ char *s = efi_utf16le_to_utf8(in, sizeof(in));

        ASSERT_STREQ(s, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "BC");
        free(s);
        s = efi_utf16le_to_utf8(in, 0);
        ASSERT_STREQ(s, "");
        free(s);
        s = efi_utf16le_to_utf8((const uint8_t[]) { 0x3d, 0xd8 }, 2); /* a leading surrogate at the end */
        ASSERT_STREQ(s, "");
}

TEST(efi_boot) {
        ASSERT_TRUE(is_efi_boot());
        setenv("FOYER_SYSFS", "/nonexistent", 1);
        ASSERT_TRUE(!is_efi_boot());
        setenv("FOYER_SYSFS", sysfs, 1);
}

TEST(part_uuid) {
        char uuid[37];

        remove_var();
        ASSERT_EQ(efi_loader_get_device_part_uuid(uuid), -ENOENT);

        write_uuid_var("C12A7328-0000-4000-8000-00000000E5F0");
        ASSERT_OK(efi_loader_get_device_part_uuid(uuid));
        ASSERT_STREQ(uuid, "c12a7328-0000-4000-8000-00000000e5f0");
        ASSERT_OK(efi_loader_get_device_part_uuid(NULL));

        /* sscanf() semantics: leading blanks and trailing text are fine. */
        write_uuid_var(" c12a7328-0000-4000-8000-00000000e5f0trailing");
        ASSERT_OK(efi_loader_get_device_part_uuid(uuid));
        ASSERT_STREQ(uuid, "c12a7328-0000-4000-8000-00000000e5f0");

        write_uuid_var("c12a7328-0000-4000-8000");
        ASSERT_EQ(efi_loader_get_device_part_uuid(uuid), -EIO);
        write_uuid_var("not a uuid");
        ASSERT_EQ(efi_loader_get_device_part_uuid(uuid), -EIO);
        write_uuid_var("");
        ASSERT_EQ(efi_loader_get_device_part_uuid(uuid), -EIO);
}

TEST(sizes) {
        _cleanup_free_ uint8_t *big = NULL;
        void *data = NULL;
        size_t size = 0;

        write_var((const uint8_t[]) { 7, 0 }, 2);
        ASSERT_EQ(efi_get_variable(EFI_LOADER_DEVICE_PART_UUID, &data, &size), -ENODATA);
        write_var((const uint8_t[]) { 7, 0, 0, 0 }, 4);
        ASSERT_OK(efi_get_variable(EFI_LOADER_DEVICE_PART_UUID, &data, &size));
        ASSERT_EQ(size, 0);
        ASSERT_EQ(((uint8_t *) data)[0], 0); /* NUL-terminated even when empty */
        free(data);

        big = calloc(1, 4 * 1024 * 1024 + 5);
        ASSERT_TRUE(big);
        write_var(big, 4 * 1024 * 1024 + 5);
        ASSERT_EQ(efi_get_variable(EFI_LOADER_DEVICE_PART_UUID, &data, &size), -E2BIG);
        write_var(big, 4 * 1024 * 1024 + 4);
        ASSERT_OK(efi_get_variable(EFI_LOADER_DEVICE_PART_UUID, &data, &size));
        ASSERT_EQ(size, 4 * 1024 * 1024);
        free(data);
}

static void setup(void) {
        char tmpl[] = "/tmp/test-efi-loader.XXXXXX";

        ASSERT_TRUE(mkdtemp(tmpl));
        sysfs = strdup(tmpl);
        ASSERT_TRUE(sysfs);
        setenv("FOYER_SYSFS", sysfs, 1);
}

static void cleanup(void) {
        _cleanup_free_ char *cmd = strjoin("rm -rf ", sysfs);

        if (cmd && system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", sysfs);
        free(sysfs);
}

/* TEST_MAIN() with a temporary firmware tree around it. */
int main(void) {
        unsigned n = 0;

        setup();
        for (const struct test_case *t = __start_foyer_tests; t < __stop_foyer_tests; t++) {
                fprintf(stderr, "/* %s */\n", t->name);
                t->func();
                n++;
        }
        cleanup();
        fprintf(stderr, "%u test cases passed\n", n);
        return n > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
