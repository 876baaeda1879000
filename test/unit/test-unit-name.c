/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "strv.h"
#include "tests.h"
#include "unit-name.h"

extern char **environ;

static void do_path_escape(const char *path, const char *expected) {
        _cleanup_free_ char *e = NULL;
        int r = unit_name_path_escape(path, &e);

        if (!expected) {
                ASSERT_EQ(r, -EINVAL);
                return;
        }
        ASSERT_EQ(r, 0);
        ASSERT_STREQ(e, expected);
}

TEST(unit_name_path_escape) {
        do_path_escape("/", "-");
        do_path_escape("//", "-");
        do_path_escape("/sysroot", "sysroot");
        do_path_escape("/sysusr/usr/", "sysusr-usr");
        do_path_escape("/dev//sda2/", "dev-sda2");
        do_path_escape("/dev/disk/by-uuid/3f5ad593-4546", "dev-disk-by\\x2duuid-3f5ad593\\x2d4546");
        do_path_escape("/dev/disk/by-label/my\\x20root", "dev-disk-by\\x2dlabel-my\\x5cx20root");
        do_path_escape("/.hidden/x", "\\x2ehidden-x");
        do_path_escape("/a/./b", "a-b");
        do_path_escape("/a/../b", NULL);
        do_path_escape("/pci-0000:00:04.0_x", "pci\\x2d0000:00:04.0_x");
}

TEST(unit_name_from_path) {
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;
        char longpath[300];

        ASSERT_EQ(unit_name_from_path("/sysroot", ".mount", &a), 0);
        ASSERT_STREQ(a, "sysroot.mount");
        ASSERT_EQ(unit_name_from_path_instance("systemd-fsck", "/dev/sda3", ".service", &b), 0);
        ASSERT_STREQ(b, "systemd-fsck@dev-sda3.service");
        memset(longpath, 'a', sizeof(longpath) - 1);
        longpath[0] = '/';
        longpath[sizeof(longpath) - 1] = 0;
        ASSERT_EQ(unit_name_from_path(longpath, ".mount", &c), -ENAMETOOLONG);
}

TEST(unit_name_build) {
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *longname = NULL;

        ASSERT_EQ(unit_name_build(NULL, "dev-sda2", ".device", &a), 0);
        ASSERT_STREQ(a, "dev-sda2.device");
        ASSERT_EQ(unit_name_build("systemd-fsck@", "dev-sda2", ".service", &b), 0);
        ASSERT_STREQ(b, "systemd-fsck@dev-sda2.service");
        /* Not valid names: nothing is returned. */
        ASSERT_EQ(unit_name_build(NULL, "a b", ".mount", &c), -EINVAL);
        ASSERT_TRUE(c == NULL);
        ASSERT_EQ(unit_name_build(NULL, "x", ".bogus", &c), -EINVAL);
        ASSERT_TRUE(c == NULL);
        /* UNIT_NAME_MAX bytes with the suffix are too long, one less is fine. */
        longname = malloc(UNIT_NAME_MAX);
        ASSERT_TRUE(longname != NULL);
        memset(longname, 'a', UNIT_NAME_MAX - 1);
        longname[UNIT_NAME_MAX - 1 - strlen(".mount")] = 0;
        ASSERT_EQ(unit_name_build(NULL, longname, ".mount", &c), 0);
        ASSERT_EQ(strlen(c), (size_t) UNIT_NAME_MAX - 1);
        strcat(longname, "a");
        ASSERT_EQ(unit_name_build(NULL, longname, ".mount", &d), -ENAMETOOLONG);
        ASSERT_TRUE(d == NULL);
}

TEST(unit_name_mangle) {
        const char *cases[][2] = {
                { "foo.service", "foo.service" },
                { "bar", "bar.mount" },
                { "/var", "var.mount" },
                { "/dev/sdb1", "dev-sdb1.device" },
                { "a b", "a\\x20b.mount" },
                { "getty@tty1.service", "getty@tty1.service" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                _cleanup_free_ char *m = NULL;
                ASSERT_EQ(unit_name_mangle(cases[i][0], ".mount", &m), 0);
                ASSERT_STREQ(m, cases[i][1]);
        }
        ASSERT_TRUE(unit_name_is_valid("sysroot.mount"));
        ASSERT_TRUE(unit_name_is_valid("systemd-fsck@dev-sda.service"));
        ASSERT_TRUE(!unit_name_is_valid("sysroot.bogus"));
        ASSERT_TRUE(!unit_name_is_valid("@x.service"));
        ASSERT_TRUE(!unit_name_is_valid("a b.service"));
}

TEST(specifier_escape_and_cescape) {
        _cleanup_free_ char *a = specifier_escape("100%x%%"), *b = cescape("a\\b\"\t\001ä");

        ASSERT_STREQ(a, "100%%x%%%%");
        ASSERT_STREQ(b, "a\\\\b\\\"\\t\\001\\303\\244");
}

/* Runs "systemd-escape MODE [ARG] -- s" (mode e.g. "--path"); returns its exit status and the first
 * output line. */
static int systemd_escape_mode(const char *mode, const char *arg, const char *s, char **ret) {
        const char *argv[] = { "systemd-escape", mode, arg ?: mode, "--", s, NULL };
        posix_spawn_file_actions_t fa;
        char buf[4096];
        int p[2], status;
        pid_t pid;
        ssize_t n;
        size_t len = 0;

        ASSERT_EQ(pipe(p), 0);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addclose(&fa, p[0]);
        ASSERT_EQ(posix_spawnp(&pid, "systemd-escape", &fa, NULL, (char **) argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        close(p[1]);
        while ((n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
                len += (size_t) n;
        close(p[0]);
        buf[len] = 0;
        buf[strcspn(buf, "\n")] = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        *ret = strdup(buf);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int systemd_escape(const char *suffix_arg, const char *s, char **ret) {
        return systemd_escape_mode("--path", suffix_arg, s, ret);
}

/* A deterministic generator of path-like strings over an alphabet with every interesting class:
 * separators, dashes, backslashes, spaces, dots, specials and multi-byte UTF-8. */
static char *gen_string(unsigned *seed) {
        static const char *const alphabet[] = {
                "/", "/", "/", "-", "\\", " ", ".", "..", "a", "Z", "0", ":", "_", "%", "@", "~", "+",
                "#", "=", "ä", "€", "😀", "x20", "\\x2d", "dev", "by-uuid", "\t",
        };
        char *s = strdup(rand_r(seed) % 4 ? "/" : "");
        unsigned n = 1 + (unsigned) rand_r(seed) % 10;

        for (unsigned i = 0; i < n; i++)
                ASSERT_EQ(strextend_with_separator(&s, "", alphabet[(unsigned) rand_r(seed) % ELEMENTSOF(alphabet)]), 0);
        return s;
}

TEST(compare_with_systemd_escape) {
        unsigned seed = 4242, compared = 0, refused = 0;

        for (int i = 0; i < 260; i++) {
                _cleanup_free_ char *s = gen_string(&seed), *ours = NULL, *ours_mount = NULL, *theirs = NULL,
                                    *theirs_mount = NULL;
                int r = unit_name_path_escape(s, &ours);
                int rs = systemd_escape(NULL, s, &theirs);
                int rm = unit_name_from_path(s, ".mount", &ours_mount);
                int rsm = systemd_escape("--suffix=mount", s, &theirs_mount);

                if (rs != 0) {
                        /* systemd-escape refuses "..": so must we. */
                        fprintf(stderr, "refused by both? \"%s\"\n", s);
                        ASSERT_EQ(r, -EINVAL);
                        ASSERT_TRUE(rsm != 0);
                        ASSERT_TRUE(rm < 0);
                        refused++;
                        continue;
                }
                ASSERT_EQ(r, 0);
                ASSERT_STREQ(ours, theirs);
                ASSERT_EQ(rsm, 0);
                ASSERT_EQ(rm, 0);
                ASSERT_STREQ(ours_mount, theirs_mount);
                compared++;
        }
        fprintf(stderr, "%u strings identical to systemd-escape, %u refused by both\n", compared, refused);
        ASSERT_TRUE(compared >= 200);
}

/* Instance names of systemd-cryptsetup@.service and friends, unescaped as systemd does for %I. */
TEST(unit_name_unescape) {
        static const char *const good[] = {
                "luks\\x2d4c554b53\\x2d2d70\\x2d4000\\x2d8000\\x2d000000000001", "root", "a-b", "-a-",
                "a\\x2fb", "a\\x20b", "ok\\xe2\\x82\\xac", "UP\\x2D", "", "x\\x5cy",
        };
        static const char *const bad[] = { "bad\\x4", "bad\\y", "end\\", "end\\x", "A\\X2D", "g\\xg0" };
        char *out = (char *) "untouched";

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                _cleanup_free_ char *ours = NULL, *theirs = NULL;

                ASSERT_OK(unit_name_unescape(good[i], &ours));
                ASSERT_EQ(systemd_escape_mode("--unescape", NULL, good[i], &theirs), 0);
                ASSERT_STREQ(ours, theirs);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *theirs = NULL;

                ASSERT_EQ(unit_name_unescape(bad[i], &out), -EINVAL);
                ASSERT_TRUE(systemd_escape_mode("--unescape", NULL, bad[i], &theirs) != 0);
        }
        ASSERT_STREQ(out, "untouched");

        /* An escaped NUL: systemd-escape prints the name cut short; foyer refuses it. */
        ASSERT_EQ(unit_name_unescape("a\\x00b", &out), -EINVAL);
        {
                _cleanup_free_ char *s = NULL, *back = NULL;

                ASSERT_OK(unit_name_unescape("luks\\x2d4c55", &s));
                ASSERT_STREQ(s, "luks-4c55");
                /* The escape of a name without '/' comes back unchanged. */
                ASSERT_OK(unit_name_escape(s, &back));
                ASSERT_STREQ(back, "luks\\x2d4c55");
        }
}

/* Each case in a buffer of exactly its own size, so that the ASan build catches a write past it
 * (path_simplify("") once wrote "." and its NUL into a 1-byte buffer; found by fuzz-unit-name). */
static void check_simplify(const char *in, const char *want) {
        char *p = strdup(in);

        ASSERT_TRUE(p);
        ASSERT_STREQ(path_simplify(p), want);
        free(p);
}

TEST(path_simplify) {
        check_simplify("", "");
        check_simplify(".", ".");
        check_simplify("./", ".");
        check_simplify("/", "/");
        check_simplify("//a//./b/", "/a/b");
        check_simplify("a/./b/.", "a/b");
        check_simplify("/a/../b", "/a/../b");
}

TEST_MAIN()
