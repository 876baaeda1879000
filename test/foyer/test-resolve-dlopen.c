/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* What the resolver does with a .note.dlopen feature whose libraries the tree lacks, by the note's
 * priority: "required" fails (-ENOENT) with an error naming the program, the feature and the
 * sonames, and every such program is named before it fails; "recommended" is a "warning:" and
 * "suggested" says nothing at the default level, both succeeding. A note in a library names the
 * library and the program that needs it; a feature present under one of its alternative sonames,
 * or one the caller skips (a host-only image that unlocks nothing), is no error. The programs are
 * hand-made ELF files in a scratch tree, so the test does not depend on the host's systemd. */

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-dlopen.h"
#include "fileio.h"
#include "log.h"
#include "manifest.h"
#include "resolve.h"
#include "elf-fixture.h"
#include "tests.h"
#include "util.h"

static char dir[] = "/tmp/test-resolve-dlopen.XXXXXX";

static char *at(const char *rel) {
        char *p = strjoin(dir, "/", rel);

        ASSERT_TRUE(p);
        return p;
}

/* An ELF64 x86-64 shared object at ROOT/path: ehdr | phdrs (PT_LOAD of the whole file, PT_DYNAMIC) |
 * dynamic (DT_NEEDED needed, if any) | strtab | the note section's bytes (one FDO dlopen note
 * holding json, if any) | section headers (SHN_UNDEF, SHT_NOTE). */
static void write_elf(const char *path, const char *needed, const char *json) {
        uint8_t buf[4096] = {};
        Elf64_Ehdr e = {};
        Elf64_Phdr ph[2] = {};
        Elf64_Dyn dyn[4] = {};
        Elf64_Shdr sh[2] = {};
        char strtab[256] = {};
        size_t nd = 0, strsz = 1, dyn_off, str_off, note_off, note_size = 0, sh_off, end;
        _cleanup_free_ char *full = at(path);
        _cleanup_close_ int fd = -EBADF;

        if (needed) {
                dyn[nd++] = (Elf64_Dyn) { DT_NEEDED, { strsz } };
                ASSERT_TRUE(strlen(needed) + 2 < sizeof(strtab));
                strcpy(strtab + strsz, needed);
                strsz += strlen(needed) + 1;
        }
        nd += 3;        /* DT_STRTAB, DT_STRSZ, DT_NULL */
        dyn_off = sizeof(e) + ELEMENTSOF(ph) * sizeof(Elf64_Phdr);
        str_off = dyn_off + nd * sizeof(Elf64_Dyn);
        note_off = ALIGN_TO(str_off + strsz, 8);
        dyn[nd - 3] = (Elf64_Dyn) { DT_STRTAB, { str_off } };
        dyn[nd - 2] = (Elf64_Dyn) { DT_STRSZ, { strsz } };
        dyn[nd - 1] = (Elf64_Dyn) { DT_NULL, { 0 } };
        if (json) {
                Elf64_Nhdr n = { .n_namesz = 4, .n_descsz = strlen(json) + 1, .n_type = NOTE_FDO_DLOPEN };

                note_size = sizeof(n) + 4 + ALIGN_TO(n.n_descsz, 4);
                ASSERT_TRUE(note_off + note_size + 2 * sizeof(Elf64_Shdr) + 8 <= sizeof(buf));
                memcpy(buf + note_off, &n, sizeof(n));
                memcpy(buf + note_off + sizeof(n), "FDO", 4);
                memcpy(buf + note_off + sizeof(n) + 4, json, n.n_descsz);
        }
        sh_off = ALIGN_TO(note_off + note_size, 8);
        end = sh_off + ELEMENTSOF(sh) * sizeof(Elf64_Shdr);
        sh[1] = (Elf64_Shdr) { .sh_type = SHT_NOTE, .sh_flags = SHF_ALLOC, .sh_addr = note_off,
                               .sh_offset = note_off, .sh_size = note_size, .sh_addralign = 4 };

        elf_fixture_header(&e);
        e.e_phoff = sizeof(e);
        e.e_shoff = sh_off;
        e.e_phnum = ELEMENTSOF(ph);
        e.e_shentsize = sizeof(Elf64_Shdr);
        e.e_shnum = ELEMENTSOF(sh);
        ph[0] = (Elf64_Phdr) { .p_type = PT_LOAD, .p_offset = 0, .p_vaddr = 0, .p_filesz = end, .p_memsz = end };
        ph[1] = (Elf64_Phdr) { .p_type = PT_DYNAMIC, .p_offset = dyn_off, .p_vaddr = dyn_off,
                               .p_filesz = nd * sizeof(Elf64_Dyn) };

        memcpy(buf, &e, sizeof(e));
        memcpy(buf + e.e_phoff, ph, sizeof(ph));
        memcpy(buf + dyn_off, dyn, nd * sizeof(Elf64_Dyn));
        memcpy(buf + str_off, strtab, strsz);
        memcpy(buf + sh_off, sh, sizeof(sh));

        ASSERT_OK(mkdir_parents(full, 0755));
        fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(write_all(fd, buf, end));
}

#define NOTE(feature, priority, sonames) \
        "[{\"feature\":\"" feature "\",\"description\":\"test\",\"priority\":\"" priority "\",\"soname\":[" sonames "]}]"

typedef struct Run {
        int r;
        char log[4096];         /* stderr at LOG_INFO */
        bool present;           /* /usr/lib/libpresent.so.1 went into the image */
} Run;

/* A fresh tree with /usr/lib/libpresent.so.1 and the programs: /usr/bin/prog with note_prog and,
 * with note_lib, a library /usr/lib/libshared.so.1 that prog needs (DT_NEEDED) holding note_lib;
 * /usr/bin/other with note_other. Plans the programs and resolves as a build does. */
static Run resolve(const char *note_prog, const char *note_lib, const char *note_other, char * const *skip) {
        _cleanup_free_ char *root = at("root"), *logpath = at("log");
        _cleanup_(manifest_freep) Manifest *m = NULL;
        char * const search_path[] = { (char *) "/usr/lib", NULL };
        int saved, fd;
        ssize_t n;
        Run run = {};

        rm_rf(root);
        write_elf("root/usr/lib/libpresent.so.1", NULL, NULL);
        write_elf("root/usr/bin/prog", note_lib ? "libshared.so.1" : NULL, note_prog);
        if (note_lib)
                write_elf("root/usr/lib/libshared.so.1", NULL, note_lib);
        if (note_other)
                write_elf("root/usr/bin/other", NULL, note_other);
        ASSERT_OK(manifest_new(root, &m));
        ASSERT_OK(manifest_add_from_root(m, "/usr/bin/prog", "test program", NULL));
        if (note_other)
                ASSERT_OK(manifest_add_from_root(m, "/usr/bin/other", "test program", NULL));

        fd = open(logpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        saved = dup(STDERR_FILENO);
        ASSERT_TRUE(saved >= 0);
        fflush(stderr);
        ASSERT_TRUE(dup2(fd, STDERR_FILENO) == STDERR_FILENO);
        run.r = resolve_libraries_skip(m, search_path, RESOLVE_DLOPEN, skip);
        fflush(stderr);
        ASSERT_TRUE(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
        close(saved);
        n = pread(fd, run.log, sizeof(run.log) - 1, 0);
        ASSERT_TRUE(n >= 0);
        close(fd);
        run.present = manifest_find(m, "/usr/lib/libpresent.so.1");
        fprintf(stderr, "resolve: %d\n%s", run.r, run.log);
        return run;
}

static void assert_has(const char *log, const char *s) {
        if (!strstr(log, s)) {
                fprintf(stderr, "expected \"%s\" in the log\n", s);
                exit(EXIT_FAILURE);
        }
}

TEST(required_missing_fails) {
        Run run = resolve(NOTE("cryptsetup", "required", "\"libabsent.so.12\""), NULL, NULL, NULL);

        ASSERT_EQ(run.r, -ENOENT);
        assert_has(run.log, "foyer: /usr/bin/prog: required feature \"cryptsetup\" is missing, libabsent.so.12 is not in ");
        assert_has(run.log, "1 required dlopen() feature is missing");
        ASSERT_TRUE(!strstr(run.log, "warning:"));
}

/* Every program that lacks a required feature is named, not only the first. */
TEST(required_missing_names_all) {
        Run run = resolve(NOTE("cryptsetup", "required", "\"libabsent.so.12\""), NULL,
                          NOTE("kmod", "required", "\"libkmodabsent.so.2\""), NULL);

        ASSERT_EQ(run.r, -ENOENT);
        assert_has(run.log, "/usr/bin/prog: required feature \"cryptsetup\" is missing");
        assert_has(run.log, "/usr/bin/other: required feature \"kmod\" is missing, libkmodabsent.so.2 is not in ");
        assert_has(run.log, "2 required dlopen() features are missing");
}

/* Alternatives: the feature is there when one of its sonames is, and that one goes in. */
TEST(required_alternative_present) {
        Run run = resolve(NOTE("libcrypto", "required", "\"libabsent.so.4\",\"libpresent.so.1\""), NULL, NULL, NULL);

        ASSERT_EQ(run.r, 0);
        ASSERT_TRUE(run.present);
        ASSERT_STREQ(run.log, "");
}

TEST(required_alternatives_missing) {
        Run run = resolve(NOTE("libcrypto", "required", "\"libabsent.so.4\",\"libabsent.so.3\""), NULL, NULL, NULL);

        ASSERT_EQ(run.r, -ENOENT);
        assert_has(run.log, "/usr/bin/prog: required feature \"libcrypto\" is missing, libabsent.so.4 or libabsent.so.3 is not in ");
}

/* A note in a library: the library, and the program that needs it. */
TEST(required_missing_in_library) {
        Run run = resolve(NULL, NOTE("mount", "required", "\"libabsent.so.1\""), NULL, NULL);

        ASSERT_EQ(run.r, -ENOENT);
        assert_has(run.log, "/usr/lib/libshared.so.1 (needed by /usr/bin/prog): required feature \"mount\" is missing");
}

/* A host-only image that unlocks nothing leaves the feature out: no error. */
TEST(required_skipped) {
        char * const skip[] = { (char *) "cryptsetup", NULL };
        Run run = resolve(NOTE("cryptsetup", "required", "\"libabsent.so.12\""), NULL, NULL, skip);

        ASSERT_EQ(run.r, 0);
        ASSERT_STREQ(run.log, "");
}

TEST(recommended_missing_warns) {
        Run run = resolve(NOTE("bpf", "recommended", "\"libabsent.so.1\",\"libabsent.so.0\""), NULL, NULL, NULL);

        ASSERT_EQ(run.r, 0);
        assert_has(run.log, "foyer: warning: /usr/bin/prog: recommended feature \"bpf\" will not work in the image, "
                            "libabsent.so.1 or libabsent.so.0 is not in ");
}

TEST(suggested_missing_quiet) {
        Run run = resolve(NOTE("tpm", "suggested", "\"libabsent.so.0\""), NULL, NULL, NULL);

        ASSERT_EQ(run.r, 0);
        ASSERT_STREQ(run.log, "");
}

/* Present, whatever the priority: the library goes in, nothing is said. */
TEST(required_present) {
        Run run = resolve(NOTE("cryptsetup", "required", "\"libpresent.so.1\""), NULL, NULL, NULL);

        ASSERT_EQ(run.r, 0);
        ASSERT_TRUE(run.present);
        ASSERT_STREQ(run.log, "");
}

static void __attribute__((constructor)) setup(void) {
        ASSERT_TRUE(mkdtemp(dir));
        program_invocation_short_name = (char *) "foyer";
        log_set_target(LOG_TARGET_CONSOLE);
        log_set_max_level(LOG_INFO);
}

static void __attribute__((destructor)) cleanup(void) {
        rm_rf(dir);
}

TEST_MAIN()
