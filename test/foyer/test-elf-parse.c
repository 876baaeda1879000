/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The ELF reader on crafted files: program headers at an odd offset (read through aligned
 * copies, which UBSan checks in test-elf-parse-asan), a second PT_INTERP, DT_RPATH or DT_RUNPATH
 * (refused as malformed, where the first was leaked), and string and table ranges outside the
 * file or the string table (refused). Files go through elf_file_read(), as the resolver's do. */

#include <elf.h>
#include <fcntl.h>

#include "elf-file.h"
#include "elf-fixture.h"
#include "tests.h"
#include "util.h"

typedef struct Spec {
        size_t phoff;                   /* where the program headers go (odd: misaligned) */
        unsigned n_interp;
        unsigned n_rpath, n_runpath;
        uint64_t strsz_extra;           /* added to DT_STRSZ */
        bool cut_strtab;                /* DT_STRSZ ends inside the DT_NEEDED string */
} Spec;

#define STRTAB "\0/lib64/ld-linux-x86-64.so.2\0libc.so.6\0/opt/lib\0$ORIGIN\0"
#define STR_INTERP 1
#define STR_NEEDED 29
#define STR_RPATH 39
#define STR_RUNPATH 48

/* ehdr | phdrs at spec->phoff | dynamic | strtab; one PT_LOAD maps the whole file at 0. */
static size_t make_elf(const Spec *spec, uint8_t *buf, size_t bufsize) {
        Elf64_Ehdr e = {};
        Elf64_Phdr ph[8] = {};
        Elf64_Dyn dyn[12] = {};
        unsigned np = 0, nd = 0;
        size_t dyn_off, str_off, end;

        elf_fixture_header(&e);
        e.e_phoff = spec->phoff;

        np = 2 + spec->n_interp;
        dyn_off = spec->phoff + np * sizeof(Elf64_Phdr);
        dyn[nd++] = (Elf64_Dyn) { DT_NEEDED, { STR_NEEDED } };
        for (unsigned i = 0; i < spec->n_rpath; i++)
                dyn[nd++] = (Elf64_Dyn) { DT_RPATH, { STR_RPATH } };
        for (unsigned i = 0; i < spec->n_runpath; i++)
                dyn[nd++] = (Elf64_Dyn) { DT_RUNPATH, { STR_RUNPATH } };
        nd += 3;        /* DT_STRTAB, DT_STRSZ, DT_NULL */
        str_off = dyn_off + nd * sizeof(Elf64_Dyn);
        dyn[nd - 3] = (Elf64_Dyn) { DT_STRTAB, { str_off } };
        dyn[nd - 2] = (Elf64_Dyn) { DT_STRSZ, { (spec->cut_strtab ? STR_NEEDED + 4 : sizeof(STRTAB)) + spec->strsz_extra } };
        dyn[nd - 1] = (Elf64_Dyn) { DT_NULL, { 0 } };
        end = str_off + sizeof(STRTAB);
        ASSERT_TRUE(end <= bufsize);

        ph[0] = (Elf64_Phdr) { .p_type = PT_LOAD, .p_offset = 0, .p_vaddr = 0, .p_filesz = end, .p_memsz = end };
        ph[1] = (Elf64_Phdr) { .p_type = PT_DYNAMIC, .p_offset = dyn_off, .p_vaddr = dyn_off,
                               .p_filesz = nd * sizeof(Elf64_Dyn) };
        for (unsigned i = 0; i < spec->n_interp; i++)
                ph[2 + i] = (Elf64_Phdr) { .p_type = PT_INTERP, .p_offset = str_off + STR_INTERP,
                                           .p_filesz = sizeof("/lib64/ld-linux-x86-64.so.2") };
        e.e_phnum = np;

        memset(buf, 0, bufsize);
        memcpy(buf, &e, sizeof(e));
        memcpy(buf + spec->phoff, ph, np * sizeof(Elf64_Phdr));
        memcpy(buf + dyn_off, dyn, nd * sizeof(Elf64_Dyn));
        memcpy(buf + str_off, STRTAB, sizeof(STRTAB));
        return end;
}

static int read_spec(const Spec *spec, ElfFile **ret) {
        char path[] = "/tmp/test-elf-parse.XXXXXX";
        uint8_t buf[2048];
        size_t n = make_elf(spec, buf, sizeof buf);
        int fd, r;

        fd = mkstemp(path);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(write(fd, buf, n) == (ssize_t) n);
        close(fd);
        r = elf_file_read(path, ret);
        unlink(path);
        return r;
}

TEST(aligned) {
        _cleanup_(elf_file_freep) ElfFile *f = NULL;

        ASSERT_OK(read_spec(&(Spec) { .phoff = 64, .n_interp = 1, .n_rpath = 1, .n_runpath = 1 }, &f));
        ASSERT_STREQ(f->interp, "/lib64/ld-linux-x86-64.so.2");
        ASSERT_STREQ(f->needed[0], "libc.so.6");
        ASSERT_STREQ(f->rpath[0], "/opt/lib");
        ASSERT_STREQ(f->runpath[0], "$ORIGIN");
}

/* Program headers at an odd offset: the same result, no misaligned access. */
TEST(misaligned_program_headers) {
        _cleanup_(elf_file_freep) ElfFile *f = NULL;

        ASSERT_OK(read_spec(&(Spec) { .phoff = 65, .n_interp = 1, .n_rpath = 1 }, &f));
        ASSERT_STREQ(f->interp, "/lib64/ld-linux-x86-64.so.2");
        ASSERT_STREQ(f->needed[0], "libc.so.6");
        ASSERT_STREQ(f->rpath[0], "/opt/lib");
}

/* A second PT_INTERP, DT_RPATH or DT_RUNPATH: refused (the first one used to leak). */
TEST(duplicates_refused) {
        ElfFile *f = NULL;

        ASSERT_EQ(read_spec(&(Spec) { .phoff = 64, .n_interp = 2 }, &f), -EBADMSG);
        ASSERT_EQ(read_spec(&(Spec) { .phoff = 64, .n_interp = 1, .n_rpath = 2 }, &f), -EBADMSG);
        ASSERT_EQ(read_spec(&(Spec) { .phoff = 64, .n_interp = 1, .n_runpath = 2 }, &f), -EBADMSG);
        ASSERT_TRUE(!f);
}

/* A string table past the end of the file, and a string running past the end of its table. */
TEST(ranges_refused) {
        ElfFile *f = NULL;

        ASSERT_EQ(read_spec(&(Spec) { .phoff = 64, .strsz_extra = 1 }, &f), -EBADMSG);
        ASSERT_EQ(read_spec(&(Spec) { .phoff = 64, .cut_strtab = true }, &f), -EBADMSG);
        ASSERT_TRUE(!f);
}

TEST_MAIN()
