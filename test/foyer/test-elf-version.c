/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The symbol-version tables: on real files (the host's libc and libmount define what this program
 * and mount(8) need from them), and on crafted tables at an odd alignment, where every bound and
 * chain the parser checks is broken once and must be refused. */

#include <elf.h>

#include "elf-file.h"
#include "tests.h"
#include "util.h"

static const char *const libc_paths[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6" };

static ElfFile *read_first(const char *const *paths, size_t n) {
        for (size_t i = 0; i < n; i++) {
                ElfFile *f = NULL;

                if (access(paths[i], F_OK) < 0)
                        continue;
                ASSERT_OK(elf_file_read(paths[i], &f));
                return f;
        }
        return NULL;
}

static const ElfVersionNeed *find_need(const ElfFile *f, const char *file) {
        for (size_t i = 0; i < f->n_version_needs; i++)
                if (streq(f->version_needs[i].file, file))
                        return &f->version_needs[i];
        return NULL;
}

TEST(host_libc_defines_what_this_program_needs) {
        _cleanup_(elf_file_freep) ElfFile *libc = read_first(libc_paths, ELEMENTSOF(libc_paths)), *self = NULL;
        const ElfVersionNeed *need;

        ASSERT_TRUE(libc);
        ASSERT_TRUE(libc->has_version_defs);
        /* x86-64's first glibc version, and the one that moved libpthread into libc. */
        ASSERT_TRUE(strv_contains(libc->version_defs, "GLIBC_2.2.5"));
        ASSERT_TRUE(strv_contains(libc->version_defs, "GLIBC_2.34"));
        /* The VER_FLG_BASE entry is the soname, not a version. */
        ASSERT_TRUE(!strv_contains(libc->version_defs, "libc.so.6"));
        /* libc needs versions of the loader. */
        ASSERT_TRUE(find_need(libc, "ld-linux-x86-64.so.2"));

        ASSERT_OK(elf_file_read("/proc/self/exe", &self));
        ASSERT_TRUE(!self->has_version_defs);
        need = find_need(self, "libc.so.6");
        ASSERT_TRUE(need);
        ASSERT_TRUE(!strv_isempty(need->versions));
        STRV_FOREACH(v, need->versions) {
                ASSERT_TRUE(startswith(*v, "GLIBC_"));
                if (!strv_contains(libc->version_defs, *v)) {
                        fprintf(stderr, "%s is needed but not defined by libc\n", *v);
                        ASSERT_TRUE(false);
                }
        }
}

TEST(host_libmount) {
        static const char *const libmount[] = { "/usr/lib/x86_64-linux-gnu/libmount.so.1", "/lib/x86_64-linux-gnu/libmount.so.1" };
        static const char *const mount[] = { "/usr/bin/mount", "/bin/mount" };
        _cleanup_(elf_file_freep) ElfFile *lib = read_first(libmount, ELEMENTSOF(libmount)),
                                          *prog = read_first(mount, ELEMENTSOF(mount));
        const ElfVersionNeed *need;

        if (!lib || !prog) {
                printf("no libmount or mount(8) on this host: skipped\n");
                return;
        }
        ASSERT_TRUE(strv_contains(lib->version_defs, "MOUNT_2.19"));
        need = find_need(prog, "libmount.so.1");
        ASSERT_TRUE(need);
        STRV_FOREACH(v, need->versions) {
                ASSERT_TRUE(startswith(*v, "MOUNT_"));
                ASSERT_TRUE(strv_contains(lib->version_defs, *v));
        }
}

/* A crafted table: two Verneed entries (libfoo.so.1 with FOO_1 and FOO_2 weak, libbar.so.2 with BAR_1),
 * or one Verdef chain (base "libfoo.so.1", FOO_1, FOO_2 with parent FOO_1). */
#define STRTAB "\0libfoo.so.1\0FOO_1\0FOO_2\0libbar.so.2\0BAR_1\0"
#define S_LIBFOO 1
#define S_FOO1 13
#define S_FOO2 19
#define S_LIBBAR 25
#define S_BAR1 37

typedef struct Need {
        Elf64_Verneed vn1;
        Elf64_Vernaux a1, a2;
        Elf64_Verneed vn2;
        Elf64_Vernaux b1;
} Need;

static Need good_need(void) {
        return (Need) {
                .vn1 = { VER_NEED_CURRENT, 2, S_LIBFOO, sizeof(Elf64_Verneed), sizeof(Elf64_Verneed) + 2 * sizeof(Elf64_Vernaux) },
                .a1 = { 0, 0, 2, S_FOO1, sizeof(Elf64_Vernaux) },
                .a2 = { 0, VER_FLG_WEAK, 3, S_FOO2, 0 },
                .vn2 = { VER_NEED_CURRENT, 1, S_LIBBAR, sizeof(Elf64_Verneed), 0 },
                .b1 = { 0, 0, 4, S_BAR1, 0 },
        };
}

/* Parses need from an odd address (the parser must not read through cast pointers). */
static int parse_need(const Need *need, size_t size, uint64_t count, size_t strsz, ElfVersionNeed **ret, size_t *n) {
        static uint8_t buf[1 + sizeof(Need)];

        memcpy(buf + 1, need, sizeof(Need));
        return elf_verneed_parse(buf + 1, size, count, (const uint8_t *) STRTAB, strsz, ret, n);
}

TEST(verneed_crafted) {
        ElfVersionNeed *needs = NULL;
        size_t n = 0;
        Need need;

        need = good_need();
        ASSERT_OK(parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
        ASSERT_EQ(n, 2u);
        ASSERT_STREQ(needs[0].file, "libfoo.so.1");
        ASSERT_EQ(strv_length(needs[0].versions), 2u);
        ASSERT_STREQ(needs[0].versions[0], "FOO_1");
        ASSERT_STREQ(needs[0].versions[1], "FOO_2");
        ASSERT_EQ(strv_length(needs[0].weak), 1u);
        ASSERT_STREQ(needs[0].weak[0], "FOO_2");
        ASSERT_STREQ(needs[1].file, "libbar.so.2");
        ASSERT_STREQ(needs[1].versions[0], "BAR_1");
        ASSERT_TRUE(!needs[1].weak);
        elf_version_needs_free(needs, n);
        needs = NULL, n = 0;

        /* Count 0: nothing. */
        ASSERT_OK(parse_need(&need, sizeof(need), 0, sizeof(STRTAB), &needs, &n));
        ASSERT_EQ(n, 0u);

#define REFUSED(what, ...)                                                                              \
        do {                                                                                            \
                ASSERT_EQ(__VA_ARGS__, -EBADMSG);                                                       \
                ASSERT_TRUE(!needs && n == 0);                                                          \
                printf("refused: %s\n", what);                                                          \
        } while (0)

        REFUSED("a count beyond the chain", parse_need(&need, sizeof(need), 3, sizeof(STRTAB), &needs, &n));
        REFUSED("a count beyond the bytes", parse_need(&need, sizeof(need), UINT64_MAX, sizeof(STRTAB), &needs, &n));
        REFUSED("the last aux entry cut off", parse_need(&need, sizeof(need) - 1, 2, sizeof(STRTAB), &needs, &n));
        REFUSED("a string table cut inside a name", parse_need(&need, sizeof(need), 2, S_BAR1 + 2, &needs, &n));

        need = good_need();
        need.vn1.vn_version = 2;
        REFUSED("vn_version 2", parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
        need = good_need();
        need.vn1.vn_next = 0;
        REFUSED("a chain ending before its count", parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
        need = good_need();
        need.vn1.vn_next = 4;
        REFUSED("an entry overlapping the previous one", parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
        need = good_need();
        need.a1.vna_next = 0;
        REFUSED("an aux chain ending before vn_cnt", parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
        need = good_need();
        need.vn1.vn_aux = 0;
        REFUSED("aux entries on top of their Verneed", parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
        need = good_need();
        need.vn2.vn_cnt = 0;
        REFUSED("an entry naming no version", parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
        need = good_need();
        need.vn2.vn_aux = UINT32_MAX;
        REFUSED("vn_aux beyond the bytes", parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
        need = good_need();
        need.b1.vna_name = sizeof(STRTAB);
        REFUSED("a name past the string table", parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
        need = good_need();
        need.vn2.vn_file = 0;
        REFUSED("an empty file name", parse_need(&need, sizeof(need), 2, sizeof(STRTAB), &needs, &n));
}

typedef struct Def {
        Elf64_Verdef base;
        Elf64_Verdaux base_name;
        Elf64_Verdef d1;
        Elf64_Verdaux d1_name;
        Elf64_Verdef d2;
        Elf64_Verdaux d2_name, d2_parent;
} Def;

static Def good_def(void) {
        size_t step = sizeof(Elf64_Verdef) + sizeof(Elf64_Verdaux);

        return (Def) {
                .base = { VER_DEF_CURRENT, VER_FLG_BASE, 1, 1, 0, sizeof(Elf64_Verdef), step },
                .base_name = { S_LIBFOO, 0 },
                .d1 = { VER_DEF_CURRENT, 0, 2, 1, 0, sizeof(Elf64_Verdef), step },
                .d1_name = { S_FOO1, 0 },
                .d2 = { VER_DEF_CURRENT, 0, 3, 2, 0, sizeof(Elf64_Verdef), 0 },
                .d2_name = { S_FOO2, sizeof(Elf64_Verdaux) },
                .d2_parent = { S_FOO1, 0 },
        };
}

static int parse_def(const Def *def, size_t size, uint64_t count, char ***ret) {
        static uint8_t buf[3 + sizeof(Def)];

        memcpy(buf + 3, def, sizeof(Def));
        return elf_verdef_parse(buf + 3, size, count, (const uint8_t *) STRTAB, sizeof(STRTAB), ret);
}

TEST(verdef_crafted) {
        _cleanup_strv_free_ char **names = NULL;
        Def def = good_def();

        ASSERT_OK(parse_def(&def, sizeof(def), 3, &names));
        ASSERT_EQ(strv_length(names), 2u);
        ASSERT_STREQ(names[0], "FOO_1");
        ASSERT_STREQ(names[1], "FOO_2");
        names = strv_free(names);

        ASSERT_EQ(parse_def(&def, sizeof(def), 4, &names), -EBADMSG);
        ASSERT_EQ(parse_def(&def, sizeof(def) - 1, 3, &names), -EBADMSG);
        def.d2_name.vda_next = 0;
        ASSERT_EQ(parse_def(&def, sizeof(def), 3, &names), -EBADMSG);
        def = good_def();
        def.d1.vd_version = 0;
        ASSERT_EQ(parse_def(&def, sizeof(def), 3, &names), -EBADMSG);
        def = good_def();
        def.d2_parent.vda_name = 9999;
        ASSERT_EQ(parse_def(&def, sizeof(def), 3, &names), -EBADMSG);
        def = good_def();
        def.base.vd_next = 0;
        ASSERT_EQ(parse_def(&def, sizeof(def), 3, &names), -EBADMSG);
        ASSERT_TRUE(!names);
}
TEST_MAIN()
