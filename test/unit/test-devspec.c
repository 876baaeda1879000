/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <blkid.h>

#include "devspec.h"
#include "tests.h"

static void do_node(const char *spec, DevspecFlags flags, int expected_r, const char *expected) {
        _cleanup_free_ char *n = NULL;

        ASSERT_EQ(devspec_to_node(spec, flags, &n), expected_r);
        ASSERT_STREQ(n, expected);
}

TEST(devspec_to_node) {
        do_node("UUID=3f5ad593-4546-4a94-a374-bcfb68aa11f7", 0, 1,
                "/dev/disk/by-uuid/3f5ad593-4546-4a94-a374-bcfb68aa11f7");
        do_node("UUID=3F5AD593-4546", 0, 1, "/dev/disk/by-uuid/3F5AD593-4546"); /* no case folding */
        do_node("PARTUUID=abc", 0, 1, "/dev/disk/by-partuuid/abc");
        do_node("LABEL=my root", 0, 1, "/dev/disk/by-label/my\\x20root");
        do_node("LABEL=a/b", 0, 1, "/dev/disk/by-label/a\\x2fb");
        do_node("LABEL=a\\x20c", 0, 1, "/dev/disk/by-label/a\\x5cx20c");
        do_node("LABEL=\"quoted\"", 0, 1, "/dev/disk/by-label/quoted");
        do_node("LABEL='q\"", 0, 1, "/dev/disk/by-label/\\x27q\\x22");
        do_node("LABEL=wurzel-ä€", 0, 1, "/dev/disk/by-label/wurzel-ä€");
        do_node("LABEL=#+-.:=@_", 0, 1, "/dev/disk/by-label/#+-.:=@_");
        do_node("LABEL=\xff\xc3", 0, 1, "/dev/disk/by-label/\\xff\\xc3"); /* invalid UTF-8 */
        do_node("LABEL=\xc0\xaf", 0, 1, "/dev/disk/by-label/\\xc0\\xaf"); /* overlong */
        do_node("PARTLABEL=root-x86-64", 0, 1, "/dev/disk/by-partlabel/root-x86-64");
        do_node("ID=ata-QEMU_HARDDISK-part2", 0, 1, "/dev/disk/by-id/ata-QEMU_HARDDISK-part2");
        do_node("ID=ata-QEMU", DEVSPEC_NO_ID, 0, "ID=ata-QEMU");
        do_node("uuid=abc", 0, 0, "uuid=abc");
        do_node("/dev/sda2", 0, 0, "/dev/sda2");
        do_node("FOO=bar", 0, 0, "FOO=bar");
}

TEST(devspec_has_unknown_tag) {
        ASSERT_TRUE(devspec_has_unknown_tag("FOO=bar", 0));
        ASSERT_TRUE(devspec_has_unknown_tag("ID=x", DEVSPEC_NO_ID));
        ASSERT_TRUE(!devspec_has_unknown_tag("ID=x", 0));
        ASSERT_TRUE(!devspec_has_unknown_tag("UUID=x", 0));
        ASSERT_TRUE(!devspec_has_unknown_tag("/dev/sda", 0));
}

TEST(is_device_path) {
        ASSERT_TRUE(is_device_path("/dev/sda"));
        ASSERT_TRUE(is_device_path("/dev//sda/"));
        ASSERT_TRUE(is_device_path("/sys/block/sda"));
        ASSERT_TRUE(!is_device_path("/dev"));
        ASSERT_TRUE(!is_device_path("/dev/"));
        ASSERT_TRUE(!is_device_path("/device"));
        ASSERT_TRUE(!is_device_path("rootfs"));
        ASSERT_TRUE(!is_device_path("LABEL=x"));
}

TEST(path_startswith) {
        ASSERT_STREQ(path_startswith("/dev/sda", "/dev"), "sda");
        ASSERT_STREQ(path_startswith("/dev//sda", "/dev/"), "sda");
        ASSERT_STREQ(path_startswith("/dev", "/dev"), "");
        ASSERT_STREQ(path_startswith("/devx", "/dev"), NULL);
        ASSERT_STREQ(path_startswith("dev/x", "/dev"), NULL);
        ASSERT_TRUE(path_equal("/dev//nfs/", "/dev/nfs"));
        ASSERT_TRUE(!path_equal("/dev/nfs2", "/dev/nfs"));
}

/* libblkid implements the same udev encoding; both must agree on arbitrary bytes, including invalid,
 * overlong and surrogate UTF-8 sequences. */
TEST(udev_encode_string_vs_blkid) {
        static const unsigned char pieces[][5] = {
                "a", "Z", "9", " ", "/", "\\", "#", "+", "-", ".", ":", "=", "@", "_", "%", "'", "\"", "\t",
                "\xc3\xa4", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc0\xaf", "\xed\xa0\x80", "\xff", "\xc3",
                "\xe2\x82", "\x7f", "\xf4\x90\x80\x80",
        };
        unsigned seed = 7, n = 0;

        for (int i = 0; i < 500; i++) {
                char s[64] = "", theirs[512];
                _cleanup_free_ char *ours = NULL;
                unsigned len = 1 + (unsigned) rand_r(&seed) % 8;

                for (unsigned j = 0; j < len; j++)
                        strcat(s, (const char *) pieces[(unsigned) rand_r(&seed) % ELEMENTSOF(pieces)]);
                ASSERT_EQ(udev_encode_string(s, &ours), 0);
                ASSERT_EQ(blkid_encode_string(s, theirs, sizeof(theirs)), 0);
                ASSERT_STREQ(ours, theirs);
                n++;
        }
        fprintf(stderr, "%u strings encoded like libblkid\n", n);
}

TEST_MAIN()
