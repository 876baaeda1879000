/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "cryptsetup-unit.h"
#include "tests.h"

/* Runs write(f) on a memory stream and returns what it wrote. */
static char *capture(int (*write)(FILE *f, const void *arg), const void *arg) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ASSERT_TRUE(f);
        ASSERT_OK(write(f, arg));
        ASSERT_EQ(fclose(f), 0);
        return buf;
}

static int unit_section(FILE *f, const void *source) {
        cryptsetup_write_unit_section(f, source);
        return 0;
}

TEST(cryptsetup_write_unit_section) {
        _cleanup_free_ char *with = capture(unit_section, "/etc/crypttab"), *without = capture(unit_section, NULL);

        /* %i and %I stay specifiers: PID 1 expands them to the instance (the volume name). */
        ASSERT_STREQ(with,
                     "[Unit]\n"
                     "Description=Cryptography Setup for %I\n"
                     "Documentation=man:crypttab(5) man:systemd-cryptsetup-generator(8) man:systemd-cryptsetup@.service(8)\n"
                     "SourcePath=/etc/crypttab\n"
                     "DefaultDependencies=no\n"
                     "IgnoreOnIsolate=true\n"
                     "After=cryptsetup-pre.target systemd-udevd-kernel.socket\n"
                     "Before=blockdev@dev-mapper-%i.target\n"
                     "Wants=blockdev@dev-mapper-%i.target\n");
        ASSERT_TRUE(!strstr(without, "SourcePath="));
        ASSERT_TRUE(strstr(without, "DefaultDependencies=no\n"));
}

struct service_args {
        const char *name, *what, *key, *options;
};

static int service_section(FILE *f, const void *arg) {
        const struct service_args *a = arg;
        return cryptsetup_write_service_section(f, a->name, a->what, a->key, a->options);
}

TEST(cryptsetup_write_service_section) {
        _cleanup_free_ char *plain = capture(service_section, &(struct service_args) {
                "root", "/dev/gpt-auto-root-luks", NULL, NULL });
        _cleanup_free_ char *escaped = capture(service_section, &(struct service_args) {
                "my%root", "/srv/%disk.img", "/keys/a%b", "discard,tries=3" });

        ASSERT_STREQ(plain,
                     "\n[Service]\n"
                     "Type=oneshot\n"
                     "RemainAfterExit=yes\n"
                     "TimeoutSec=0\n"
                     "KeyringMode=shared\n"
                     "OOMScoreAdjust=500\n"
                     "ExecStart=" ROOTLIBEXECDIR "/systemd-cryptsetup attach 'root' '/dev/gpt-auto-root-luks' '' ''\n"
                     "ExecStop=" ROOTLIBEXECDIR "/systemd-cryptsetup detach 'root'\n");
        ASSERT_TRUE(strstr(escaped, "attach 'my%%root' '/srv/%%disk.img' '/keys/a%%b' 'discard,tries=3'\n"));
        ASSERT_TRUE(strstr(escaped, "detach 'my%%root'\n"));
}

TEST(cryptsetup_unit_name) {
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
        char long_name[300];

        ASSERT_OK(cryptsetup_unit_name("luks-3f5ad593-4546-4a94-a374-bcfb68aa11f7", &a));
        ASSERT_STREQ(a, "systemd-cryptsetup@luks\\x2d3f5ad593\\x2d4546\\x2d4a94\\x2da374\\x2dbcfb68aa11f7.service");
        ASSERT_OK(cryptsetup_mapper_device_unit("luks-3f5ad593", &b));
        ASSERT_STREQ(b, "dev-mapper-luks\\x2d3f5ad593.device");
        /* Volume names are escaped as strings, not paths: '/' becomes '-', a leading '.' is escaped. */
        ASSERT_OK(cryptsetup_unit_name(".a/b c", &c));
        ASSERT_STREQ(c, "systemd-cryptsetup@\\x2ea-b\\x20c.service");
        ASSERT_OK(cryptsetup_mapper_device_unit("root", &d));
        ASSERT_STREQ(d, "dev-mapper-root.device");

        memset(long_name, 'x', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = 0;
        ASSERT_EQ(cryptsetup_unit_name(long_name, &e), -ENAMETOOLONG);
        ASSERT_TRUE(!e);
}

TEST_MAIN()
