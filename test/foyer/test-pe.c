/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The PE reader and section appender, and the SBAT merge (uki-sbat.h): on a synthetic stub laid out like systemd's ≥ 254 stubs
 * (ImageBase 0x14df90000, 4 KiB sections, 0x200 file alignment), and on the real stub named by
 * $FOYER_TEST_STUB when set (the 252 one: ImageBase 0, 0x200 alignment). Each result is parsed
 * back and checked for layout, header fields, checksum and determinism. test-uki.sh checks the
 * same files with objdump. */

#include <errno.h>

#include "pe.h"
#include "tests.h"
#include "uki-sbat.h"
#include "util.h"

static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }
static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t) p[3] << 24; }

#define SYN_SIZE 0x800

/* MZ, PE32+ with 16 data directories, .text at 0x1000 (file 0x400), .reloc at 0x2000 (0x600). */
static uint8_t *synthetic_stub(void) {
        uint8_t *d = calloc(1, SYN_SIZE);
        uint32_t pe = 0x80, opt = pe + 24, sec = opt + 240;

        ASSERT_TRUE(d);
        d[0] = 'M', d[1] = 'Z';
        put32(d + 0x3c, pe);
        memcpy(d + pe, "PE\0\0", 4);
        put16(d + pe + 4, PE_MACHINE_X86_64);
        put16(d + pe + 6, 2);
        put16(d + pe + 20, 240);
        put16(d + opt, 0x20b);
        put32(d + opt + 8, 0x200);                      /* SizeOfInitializedData */
        put32(d + opt + 24, 0x4df90000);                /* ImageBase 0x14df90000 */
        put32(d + opt + 28, 0x1);
        put32(d + opt + 32, 0x1000);
        put32(d + opt + 36, 0x200);
        put32(d + opt + 56, 0x3000);                    /* SizeOfImage */
        put32(d + opt + 60, 0x400);                     /* SizeOfHeaders */
        put16(d + opt + 68, PE_SUBSYSTEM_EFI_APPLICATION);
        put32(d + opt + 108, 16);
        put32(d + opt + 112 + 4 * 8, 0x700);            /* a "signature" that must be dropped */
        put32(d + opt + 112 + 4 * 8 + 4, 0x100);
        memcpy(d + sec, ".text", 5);
        put32(d + sec + 8, 0x1f0);
        put32(d + sec + 12, 0x1000);
        put32(d + sec + 16, 0x200);
        put32(d + sec + 20, 0x400);
        memcpy(d + sec + 40, ".reloc", 6);
        put32(d + sec + 40 + 8, 0x0c);
        put32(d + sec + 40 + 12, 0x2000);
        put32(d + sec + 40 + 16, 0x200);
        put32(d + sec + 40 + 20, 0x600);
        memset(d + 0x400, 0xcc, 0x1f0);
        return d;
}

static void check_appended(const uint8_t *stub_data, size_t stub_size) {
        static const char osrel[] = "ID=test\n", cmdline[] = "root=/dev/vda rw";
        _cleanup_free_ uint8_t *out = NULL, *out2 = NULL, *big = malloc(0x12345);
        const PeAddSection add[] = {
                { ".osrel", osrel, strlen(osrel) },
                { ".cmdline", cmdline, strlen(cmdline) },
                { ".linux", big, 0x12345 },
                { ".initrd", big, 0x201 },
        };
        size_t size, size2, n;
        PeImage stub, pe;
        const char *why = NULL;
        uint64_t end;

        ASSERT_TRUE(big);
        for (size_t i = 0; i < 0x12345; i++)
                big[i] = (uint8_t) (i * 7);
        ASSERT_OK(pe_parse(stub_data, stub_size, &stub, &why));
        ASSERT_OK(pe_append_sections(&stub, add, ELEMENTSOF(add), &out, &size, &why));
        ASSERT_OK(pe_parse(out, size, &pe, &why));

        ASSERT_EQ(pe.n_sections, stub.n_sections + ELEMENTSOF(add));
        ASSERT_EQ(pe.image_base, stub.image_base);
        ASSERT_EQ(pe.section_alignment, stub.section_alignment);
        ASSERT_EQ(pe.subsystem, stub.subsystem);
        /* The stub's own sections and bytes are untouched. */
        for (unsigned i = 0; i < stub.n_sections; i++) {
                ASSERT_STREQ(pe.sections[i].name, stub.sections[i].name);
                ASSERT_EQ(pe.sections[i].virtual_address, stub.sections[i].virtual_address);
                ASSERT_EQ(pe.sections[i].raw_offset, stub.sections[i].raw_offset);
                ASSERT_TRUE(memcmp(out + stub.sections[i].raw_offset, stub_data + stub.sections[i].raw_offset,
                                   stub.sections[i].raw_size) == 0);
        }

        end = stub.size_of_image;
        for (unsigned i = 0; i < stub.n_sections; i++)
                end = MAX(end, (uint64_t) stub.sections[i].virtual_address + stub.sections[i].virtual_size);
        for (size_t i = 0; i < ELEMENTSOF(add); i++) {
                const PeSection *s = &pe.sections[stub.n_sections + i];
                const uint8_t *data = pe_section_data(&pe, s, &n);

                ASSERT_STREQ(s->name, add[i].name);
                ASSERT_TRUE(s == pe_find_section(&pe, add[i].name));
                /* after everything before it, page- and SectionAlignment-aligned, file-aligned */
                ASSERT_TRUE(s->virtual_address >= end);
                ASSERT_EQ(s->virtual_address % 4096, 0u);
                ASSERT_EQ(s->virtual_address % pe.section_alignment, 0u);
                ASSERT_EQ(s->raw_offset % pe.file_alignment, 0u);
                ASSERT_EQ(s->raw_size % pe.file_alignment, 0u);
                ASSERT_EQ(s->virtual_size, (uint32_t) add[i].size);
                ASSERT_EQ(s->characteristics, 0x40000040u);
                ASSERT_TRUE(data);
                ASSERT_EQ(n, add[i].size);
                ASSERT_TRUE(memcmp(data, add[i].data, n) == 0);
                end = (uint64_t) s->virtual_address + s->virtual_size;
        }
        /* SizeOfImage covers the last section, rounded to SectionAlignment; the file ends with it. */
        ASSERT_EQ(pe.size_of_image, ALIGN_TO(end, (uint64_t) pe.section_alignment));
        ASSERT_EQ(size, (size_t) pe.sections[pe.n_sections - 1].raw_offset + pe.sections[pe.n_sections - 1].raw_size);

        uint32_t opt = pe.pe_offset + 24;
        ASSERT_EQ(get32(out + opt + 64), pe_checksum(out, size, opt + 64));
        ASSERT_EQ(get32(out + opt + 112 + 4 * 8), 0u);                 /* no stale signature */
        ASSERT_EQ(get32(out + opt + 112 + 4 * 8 + 4), 0u);
        uint64_t init = get32(stub_data + opt + 8);
        for (size_t i = 0; i < ELEMENTSOF(add); i++)
                init += pe.sections[stub.n_sections + i].raw_size;
        ASSERT_EQ(get32(out + opt + 8), init);

        /* Deterministic: the same inputs give the same bytes. */
        ASSERT_OK(pe_append_sections(&stub, add, ELEMENTSOF(add), &out2, &size2, &why));
        ASSERT_EQ(size2, size);
        ASSERT_TRUE(memcmp(out, out2, size) == 0);
}

TEST(synthetic_stub) {
        _cleanup_free_ uint8_t *d = synthetic_stub();
        PeImage pe;

        ASSERT_OK(pe_parse(d, SYN_SIZE, &pe, NULL));
        ASSERT_EQ(pe.image_base, UINT64_C(0x14df90000));
        ASSERT_EQ(pe.n_sections, 2);
        ASSERT_STREQ(pe.sections[1].name, ".reloc");
        check_appended(d, SYN_SIZE);
}

TEST(real_stub) {
        const char *path = getenv("FOYER_TEST_STUB");
        _cleanup_free_ char *data = NULL;
        size_t size;
        PeImage pe;

        if (!path || !*path) {
                printf("FOYER_TEST_STUB not set, real stub not checked\n");
                return;
        }
        ASSERT_OK(read_full_file(path, &data, &size));
        ASSERT_OK(pe_parse((uint8_t *) data, size, &pe, NULL));
        ASSERT_EQ(pe.subsystem, PE_SUBSYSTEM_EFI_APPLICATION);
        ASSERT_TRUE(pe_find_section(&pe, ".sdmagic"));
        /* systemd-stub's .sdmagic names its version; stubs have had one since 239. */
        ASSERT_TRUE(pe_stub_version(&pe) >= 239);
        /* The stub's own checksum (written by its linker) agrees with ours, if it has one. */
        uint32_t stored = get32((uint8_t *) data + pe.pe_offset + 24 + 64);
        if (stored != 0)
                ASSERT_EQ(stored, pe_checksum((uint8_t *) data, size, pe.pe_offset + 24 + 64));
        check_appended((uint8_t *) data, size);
}

/* The version in .sdmagic (foyer uki puts microcode in .ucode from 256 on): the synthetic stub with
 * such a section appended, as the real stubs carry it. */
static int stub_version_of(const char *magic, size_t n) {
        _cleanup_free_ uint8_t *d = synthetic_stub(), *out = NULL;
        const PeAddSection add = { ".sdmagic", magic, n };
        size_t size;
        PeImage pe;

        ASSERT_OK(pe_parse(d, SYN_SIZE, &pe, NULL));
        ASSERT_OK(pe_append_sections(&pe, &add, 1, &out, &size, NULL));
        ASSERT_OK(pe_parse(out, size, &pe, NULL));
        return pe_stub_version(&pe);
}

TEST(stub_version) {
        _cleanup_free_ uint8_t *d = synthetic_stub();
        PeImage pe;

        ASSERT_OK(pe_parse(d, SYN_SIZE, &pe, NULL));
        ASSERT_EQ(pe_stub_version(&pe), -ENOENT);
#define V(s) stub_version_of(s, sizeof(s) - 1)
        ASSERT_EQ(V("#### LoaderInfo: systemd-stub 252.39-1~deb12u2 ####"), 252);
        ASSERT_EQ(V("#### LoaderInfo: systemd-stub 257.13-1~deb13u1 ####"), 257);
        ASSERT_EQ(V("#### LoaderInfo: systemd-stub 256 ####"), 256);
        ASSERT_EQ(V("\0\0#### LoaderInfo: systemd-stub 255.4\0"), 255);
        ASSERT_EQ(V("#### LoaderInfo: systemd-stub 999999999999 ####"), -EBADMSG);
        ASSERT_EQ(V("#### LoaderInfo: systemd-stub v256 ####"), -EBADMSG);
        ASSERT_EQ(V("#### LoaderInfo: systemd-boot 257 ####"), -EBADMSG);
        ASSERT_EQ(V("#### LoaderInfo: systemd-stub "), -EBADMSG);
#undef V
}

TEST(bad_input) {
        _cleanup_free_ uint8_t *d = synthetic_stub();
        static const uint8_t text[] = "NAME=\"not a PE file\"\n";
        _cleanup_free_ uint8_t *out = NULL;
        const PeAddSection dup = { ".text", "x", 1 }, long_name = { ".toolongname", "x", 1 };
        const char *why = NULL;
        size_t size;
        PeImage pe;

        ASSERT_EQ(pe_parse(text, sizeof text, &pe, &why), -EBADMSG);
        ASSERT_STREQ(why, "no MZ header");
        ASSERT_EQ(pe_parse(d, 0x100, &pe, &why), -EBADMSG);     /* cut inside the headers */
        ASSERT_TRUE(why != NULL);
        ASSERT_EQ(pe_parse(d, 0x500, &pe, &why), -EBADMSG);     /* cut inside a section */
        ASSERT_STREQ(why, "a section's data extends past the end of the file");

        memcpy(d + 0x80, "PX", 2);                              /* an MZ file, not PE */
        ASSERT_EQ(pe_parse(d, SYN_SIZE, &pe, &why), -EBADMSG);
        memcpy(d + 0x80, "PE", 2);
        put32(d + 0x80 + 24 + 32, 0x1001);                      /* alignment not a power of two */
        ASSERT_EQ(pe_parse(d, SYN_SIZE, &pe, &why), -EBADMSG);
        put32(d + 0x80 + 24 + 32, 0x1000);

        ASSERT_OK(pe_parse(d, SYN_SIZE, &pe, NULL));
        ASSERT_EQ(pe_append_sections(&pe, &dup, 1, &out, &size, &why), -EEXIST);
        ASSERT_EQ(pe_append_sections(&pe, &long_name, 1, &out, &size, &why), -E2BIG);
        /* No room for headers: data right after the section table. */
        put32(d + 0x80 + 24 + 240 + 20, 0x200);
        put32(d + 0x80 + 24 + 60, 0x200);
        ASSERT_OK(pe_parse(d, SYN_SIZE, &pe, NULL));
        ASSERT_EQ(pe_append_sections(&pe, &long_name + 0, 0, &out, &size, &why), 0);
        free(out);
        out = NULL;
        const PeAddSection six[] = { { ".a", "x", 1 }, { ".b", "x", 1 }, { ".c", "x", 1 },
                                     { ".d", "x", 1 }, { ".e", "x", 1 }, { ".f", "x", 1 } };
        ASSERT_EQ(pe_append_sections(&pe, six, ELEMENTSOF(six), &out, &size, &why), -E2BIG);
        ASSERT_STREQ(why, "no room in the header area for the new section headers");
}

/* A stub whose file ends with its section table (sections without file data, SizeOfHeaders short
 * of the table): the new headers would be read from and written past the end; it is refused.
 * Before, ASan reported a heap-buffer-overflow here (test-pe-asan, found by fuzz-pe). */
TEST(section_table_at_end_of_file) {
        _cleanup_free_ uint8_t *d = synthetic_stub(), *cut = NULL, *out = NULL;
        const PeAddSection add = { ".linux", "x", 1 };
        uint32_t sec = 0x80 + 24 + 240;
        size_t n = sec + 2 * 40, size;
        const char *why = NULL;
        PeImage pe;

        for (unsigned i = 0; i < 2; i++) {
                put32(d + sec + 40 * i + 16, 0);
                put32(d + sec + 40 * i + 20, 0);
        }
        put32(d + 0x80 + 24 + 60, 0x100);
        cut = malloc(n);
        ASSERT_TRUE(cut);
        memcpy(cut, d, n);
        ASSERT_OK(pe_parse(cut, n, &pe, &why));
        ASSERT_EQ(pe_append_sections(&pe, &add, 1, &out, &size, &why), -E2BIG);
        ASSERT_STREQ(why, "no room in the header area for the new section headers");
        ASSERT_TRUE(!out);
}

/* uki_sbat_merge(): the synthetic stub with its .reloc renamed .sbat (file 0x600, 0x200 bytes there)
 * holding TEXT, VirtualSize VSIZE; with KERNEL_TEXT, a second one stands in for a kernel with SBAT
 * entries. Returns what the merge returned; *ret_stub is the stub's file afterwards. */
#define SBAT_HDR "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n"
#define SBAT_STUB "systemd-stub,1,The systemd Developers,systemd,262,https://systemd.io/\n"
#define SBAT_LINUX "linux,1,The Linux Developers,linux,7.2,https://linux.org/\n"
static uint8_t *sbat_stub(const char *text, uint32_t vsize) {
        uint8_t *d = synthetic_stub();
        uint32_t sec = 0x80 + 24 + 240 + 40;

        memcpy(d + sec, ".sbat\0", 6);
        put32(d + sec + 8, vsize);
        memset(d + 0x600, 0, 0x200);
        memcpy(d + 0x600, text, strlen(text));
        d[SYN_SIZE - 1] = 0xee;         /* past the section's mapped bytes when vsize < 0x200 */
        return d;
}

static int sbat_merge(const char *text, uint32_t vsize, const char *kernel_text, uint8_t **ret_stub) {
        _cleanup_free_ uint8_t *k = kernel_text ? sbat_stub(kernel_text, 0x200) : NULL;
        uint8_t *d = sbat_stub(text, vsize);
        const char *why = NULL;
        PeImage pe, kpe;
        int r;

        ASSERT_OK(pe_parse(d, SYN_SIZE, &pe, NULL));
        if (k)
                ASSERT_OK(pe_parse(k, SYN_SIZE, &kpe, NULL));
        r = uki_sbat_merge(d, &pe, k ? &kpe : NULL, &why);
        ASSERT_TRUE(r > 0 ? !why : r == 0 ? why != NULL : true);
        *ret_stub = d;
        return r;
}

TEST(sbat_merge) {
        static const char merged[] = SBAT_HDR SBAT_STUB UKI_SBAT_ENTRY;
        static const char merged_k[] = SBAT_HDR SBAT_STUB SBAT_LINUX UKI_SBAT_ENTRY;
        _cleanup_free_ uint8_t *plain = sbat_stub(SBAT_HDR SBAT_STUB, 0x200);
        uint8_t *d = NULL;

        /* Room (258 and later): the header, the stub's entries, "uki", zeros to VirtualSize. */
        ASSERT_EQ(sbat_merge(SBAT_HDR SBAT_STUB, 0x200, NULL, &d), 1);
        ASSERT_TRUE(memcmp(d + 0x600, merged, strlen(merged)) == 0);
        for (size_t i = 0x600 + strlen(merged); i < 0x800; i++)
                ASSERT_EQ(d[i], 0);
        ASSERT_TRUE(memcmp(d, plain, 0x600) == 0);              /* headers and other sections unchanged */
        free(d);
        /* The kernel's entries after the stub's; its header once. */
        ASSERT_EQ(sbat_merge(SBAT_HDR SBAT_STUB, 0x200, SBAT_HDR SBAT_LINUX, &d), 1);
        ASSERT_TRUE(memcmp(d + 0x600, merged_k, strlen(merged_k)) == 0);
        free(d);
        /* Blank lines and a missing final newline are no entries' business. */
        ASSERT_EQ(sbat_merge(SBAT_HDR "\n" "systemd-stub,1,The systemd Developers,systemd,262,https://systemd.io/",
                             0x200, NULL, &d), 1);
        ASSERT_TRUE(memcmp(d + 0x600, merged, strlen(merged)) == 0);
        free(d);
        /* Exactly room for the text and its NUL, within VirtualSize; the byte past it is not the section's. */
        ASSERT_EQ(sbat_merge(SBAT_HDR SBAT_STUB, strlen(merged) + 1, NULL, &d), 1);
        ASSERT_TRUE(memcmp(d + 0x600, merged, strlen(merged)) == 0);
        ASSERT_EQ(d[0x600 + strlen(merged)], 0);
        ASSERT_EQ(d[SYN_SIZE - 1], 0xee);
        free(d);
        /* One byte short (no room for the NUL), or a stub before 258 whose .sbat is its text: unchanged. */
        ASSERT_EQ(sbat_merge(SBAT_HDR SBAT_STUB, strlen(merged), NULL, &d), 0);
        ASSERT_TRUE(memcmp(d + 0x600, SBAT_HDR SBAT_STUB, strlen(SBAT_HDR SBAT_STUB)) == 0);
        ASSERT_EQ(d[0x600 + strlen(SBAT_HDR SBAT_STUB)], 0);
        free(d);
        ASSERT_EQ(sbat_merge(SBAT_HDR SBAT_STUB, strlen(SBAT_HDR SBAT_STUB), NULL, &d), 0);
        free(d);
        /* Not SBAT text, or a stub merged into already: unchanged. */
        ASSERT_EQ(sbat_merge("hello\n", 0x200, NULL, &d), 0);
        ASSERT_TRUE(memcmp(d + 0x600, "hello\n\0", 7) == 0);
        free(d);
        ASSERT_EQ(sbat_merge(SBAT_HDR "bad\x01entry\n", 0x200, NULL, &d), 0);
        free(d);
        ASSERT_EQ(sbat_merge(merged, 0x200, NULL, &d), 0);
        free(d);
        /* Text to the end of the section and the file, no NUL: nothing is read past it (test-pe-asan). */
        {
                char full[0x200];

                memset(full, 'a', sizeof full - 1);
                memcpy(full, SBAT_HDR, strlen(SBAT_HDR));
                full[sizeof full - 1] = '\0';
                ASSERT_EQ(sbat_merge(full, sizeof full - 1, NULL, &d), 0);
                free(d);
        }
        /* A kernel whose .sbat is no SBAT text is left out. */
        ASSERT_EQ(sbat_merge(SBAT_HDR SBAT_STUB, 0x200, "MZ garbage\n", &d), 1);
        ASSERT_TRUE(memcmp(d + 0x600, merged, strlen(merged) + 1) == 0);
        free(d);
}

TEST_MAIN()
