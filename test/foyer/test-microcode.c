/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Early microcode: the CPU vendor read from /proc/cpuinfo's text, the --microcode= words, and the
 * early archive written from a scratch tree with synthetic microcode files, read back with
 * foyer's newc parser (entries, order, contents, mtime, padding, GenuineIntel.bin's data on 16
 * bytes). test-foyer-microcode.sh checks
 * whole images, foyer ls and foyer uki. */

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "cpio.h"
#include "microcode.h"
#include "tests.h"
#include "util.h"

TEST(vendor_from_cpuinfo) {
        ASSERT_EQ(microcode_vendor_from_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"),
                  MICROCODE_VENDOR_INTEL);
        ASSERT_EQ(microcode_vendor_from_cpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\n"), MICROCODE_VENDOR_AMD);
        /* The kernel's AMD loader serves Hygon's CPUs, with AuthenticAMD.bin. */
        ASSERT_EQ(microcode_vendor_from_cpuinfo("vendor_id : HygonGenuine  \n"), MICROCODE_VENDOR_AMD);
        /* The first vendor_id line counts; trailing blanks do not. */
        ASSERT_EQ(microcode_vendor_from_cpuinfo("vendor_id\t: AuthenticAMD \t\nvendor_id\t: GenuineIntel\n"),
                  MICROCODE_VENDOR_AMD);
        ASSERT_EQ(microcode_vendor_from_cpuinfo("vendor_id:GenuineIntel"), MICROCODE_VENDOR_INTEL);
        /* No early microcode from the initrd for these. */
        ASSERT_EQ(microcode_vendor_from_cpuinfo("vendor_id\t: CentaurHauls\n"), -EOPNOTSUPP);
        ASSERT_EQ(microcode_vendor_from_cpuinfo("vendor_id\t: GenuineIntelX\n"), -EOPNOTSUPP);
        ASSERT_EQ(microcode_vendor_from_cpuinfo("vendor_id\t: \n"), -EOPNOTSUPP);
        /* No vendor_id line: not x86 (an arm64 cpuinfo), or a look-alike key. */
        ASSERT_EQ(microcode_vendor_from_cpuinfo("processor\t: 0\nCPU implementer\t: 0x41\n"), -ENOENT);
        ASSERT_EQ(microcode_vendor_from_cpuinfo("vendor_idx\t: GenuineIntel\nmy vendor_id : AuthenticAMD\n"), -ENOENT);
        ASSERT_EQ(microcode_vendor_from_cpuinfo(""), -ENOENT);
        ASSERT_STREQ(microcode_vendor_file(MICROCODE_VENDOR_INTEL), "GenuineIntel.bin");
        ASSERT_STREQ(microcode_vendor_file(MICROCODE_VENDOR_AMD), "AuthenticAMD.bin");
}

TEST(mode_strings) {
        for (MicrocodeMode m = 0; m < _MICROCODE_MODE_MAX; m++)
                ASSERT_EQ(microcode_mode_from_string(microcode_mode_to_string(m)), m);
        ASSERT_EQ(microcode_mode_from_string("host"), MICROCODE_HOST);
        ASSERT_EQ(microcode_mode_from_string("yes"), _MICROCODE_MODE_INVALID);
        ASSERT_EQ(microcode_mode_from_string(""), _MICROCODE_MODE_INVALID);
        ASSERT_EQ(microcode_mode_from_string(NULL), _MICROCODE_MODE_INVALID);
}

typedef struct Seen {
        unsigned n;
        char names[8][64];
        uint32_t mode[8];
        uint64_t mtime[8];
        char data[8][64];
        size_t size[8];
} Seen;

static int collect_data(const CpioEntry *e, const uint8_t *chunk, size_t n, void *userdata) {
        Seen *s = userdata;

        ASSERT_TRUE(s->n < 8 && s->size[s->n] + n < sizeof(s->data[0]));
        memcpy(s->data[s->n] + s->size[s->n], chunk, n);
        s->size[s->n] += n;
        return 0;
}

static int collect(const CpioEntry *e, void *userdata) {
        Seen *s = userdata;

        ASSERT_TRUE(s->n < 8);
        snprintf(s->names[s->n], sizeof(s->names[0]), "%s", e->name);
        s->mode[s->n] = e->mode;
        s->mtime[s->n] = e->mtime;
        ASSERT_EQ(s->size[s->n], (size_t) e->size);
        s->n++;
        return 0;
}

static void put(const char *root, const char *path, const char *text) {
        _cleanup_free_ char *full = strjoin(root, path);

        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(full);
        ASSERT_OK(mkdir_parents(full, 0755));
        fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(write_all(fd, text, strlen(text)));
}

/* The early archive of root in a memfd, parsed: the number of bytes written, 0 for none. */
static size_t early_archive(const char *root, MicrocodeMode mode, Seen *seen) {
        _cleanup_close_ int fd = memfd_create("test-microcode", MFD_CLOEXEC);
        _cleanup_free_ char *data = NULL;
        uint64_t reported = 0;
        CpioReader *r = malloc(sizeof(CpioReader));
        size_t size, used;
        int k;

        ASSERT_TRUE(fd >= 0 && r);
        *seen = (Seen) {};
        k = microcode_write_early_cpio(root, mode, 1234567, fd, &reported);
        ASSERT_TRUE(k >= 0);
        ASSERT_TRUE(lseek(fd, 0, SEEK_SET) == 0);
        ASSERT_OK(read_full_fd(fd, &data, &size));
        if (k == 0) {
                ASSERT_EQ(size, (size_t) 0);
                free(r);
                return 0;
        }
        ASSERT_EQ((uint64_t) size, reported);
        /* The trailer pads to 512 bytes: a compressed archive after it starts on a block. */
        ASSERT_TRUE(size % 512 == 0);
        cpio_reader_init(r, false, collect, seen);
        cpio_reader_set_data_callback(r, collect_data);
        ASSERT_OK(cpio_reader_feed(r, (const uint8_t *) data, size, &used));
        ASSERT_OK(cpio_reader_finish(r));
        /* After the trailer only the zeros of the padding, which the kernel skips. */
        ASSERT_TRUE(used <= size && size - used < 512);
        for (size_t i = used; i < size; i++)
                ASSERT_EQ(data[i], 0);
        free(r);
        return size;
}

/* Where GenuineIntel.bin's data starts in the archive just written: after its header and name,
 * padded to 4 bytes. */
static size_t intel_data_offset(const char *root) {
        static const char name[] = "kernel/x86/microcode/GenuineIntel.bin";
        _cleanup_close_ int fd = memfd_create("test-microcode", MFD_CLOEXEC);
        _cleanup_free_ char *data = NULL;
        const char *p;
        size_t size;

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(microcode_write_early_cpio(root, MICROCODE_ALL, 0, fd, NULL), 1);
        ASSERT_TRUE(lseek(fd, 0, SEEK_SET) == 0);
        ASSERT_OK(read_full_fd(fd, &data, &size));
        p = memmem(data, size, name, sizeof(name));
        ASSERT_TRUE(p);
        return ALIGN_TO((size_t) (p - data) + sizeof(name), 4);
}

TEST(early_archive) {
        char root[] = "/tmp/test-microcode.XXXXXX";
        Seen seen;

        ASSERT_TRUE(mkdtemp(root));

        /* No microcode packages: nothing is written. */
        ASSERT_EQ(early_archive(root, MICROCODE_ALL, &seen), (size_t) 0);

        put(root, "/usr/lib/firmware/intel-ucode/06-9e-0a", "B");
        put(root, "/usr/lib/firmware/intel-ucode/06-8e-09", "A");
        put(root, "/usr/lib/firmware/intel-ucode/.hidden", "hidden");
        put(root, "/usr/lib/firmware/amd-ucode/microcode_amd_fam19h.bin", "amd19");
        put(root, "/usr/lib/firmware/amd-ucode/microcode_amd.bin", "amd-");
        put(root, "/usr/lib/firmware/amd-ucode/microcode_amd.bin.asc", "sig");
        ASSERT_TRUE(early_archive(root, MICROCODE_ALL, &seen) > 0);
        /* GenuineIntel.bin's data would start at 684 (12 mod 16): an empty file with a name of
         * the right length goes before it. */
        static const char *const names[] = {
                "kernel", "kernel/x86", "kernel/x86/microcode",
                "kernel/x86/microcode/AuthenticAMD.bin", "kernel/x86/microcode/.GenuineIntel.bin.align00000000",
                "kernel/x86/microcode/GenuineIntel.bin",
        };
        ASSERT_EQ(seen.n, (unsigned) ELEMENTSOF(names));
        for (unsigned i = 0; i < seen.n; i++) {
                ASSERT_STREQ(seen.names[i], names[i]);
                ASSERT_EQ(seen.mtime[i], (uint64_t) 1234567);
                ASSERT_EQ(seen.mode[i], (uint32_t) (i < 3 ? S_IFDIR | 0755 : S_IFREG | 0644));
        }
        /* Name order; the hidden file and the signature stay out. */
        ASSERT_STREQ(seen.data[3], "amd-amd19");
        ASSERT_EQ(seen.size[4], (size_t) 0);
        ASSERT_STREQ(seen.data[5], "AB");
        ASSERT_EQ(intel_data_offset(root) % 16, (size_t) 0);

        /* AMD's data 16 bytes long: GenuineIntel.bin's data starts at 688 without help. */
        put(root, "/usr/lib/firmware/amd-ucode/microcode_amd.bin", "0123456789a");
        ASSERT_TRUE(early_archive(root, MICROCODE_ALL, &seen) > 0);
        ASSERT_EQ(seen.n, 5U);
        ASSERT_STREQ(seen.names[4], "kernel/x86/microcode/GenuineIntel.bin");
        ASSERT_EQ(intel_data_offset(root), (size_t) 688);
        /* Every other length of AMD's data: aligned all the same. */
        for (unsigned n = 1; n <= 16; n++) {
                char text[17] = "xxxxxxxxxxxxxxxx";

                text[n] = 0;
                put(root, "/usr/lib/firmware/amd-ucode/microcode_amd_fam19h.bin", text);
                ASSERT_EQ(intel_data_offset(root) % 16, (size_t) 0);
        }
        put(root, "/usr/lib/firmware/amd-ucode/microcode_amd.bin", "amd-");

        /* none: nothing, whatever the tree holds. */
        ASSERT_EQ(early_archive(root, MICROCODE_NONE, &seen), (size_t) 0);

        /* One vendor's package only; an empty file adds nothing. */
        put(root, "/usr/lib/firmware/intel-ucode/06-8e-09", "");
        put(root, "/usr/lib/firmware/intel-ucode/06-9e-0a", "");
        ASSERT_TRUE(early_archive(root, MICROCODE_ALL, &seen) > 0);
        ASSERT_EQ(seen.n, 4U);
        ASSERT_STREQ(seen.names[3], "kernel/x86/microcode/AuthenticAMD.bin");

        rm_rf(root);
}

TEST_MAIN()
