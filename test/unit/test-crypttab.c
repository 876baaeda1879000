/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <unistd.h>

#include "crypttab.h"
#include "strv.h"
#include "tests.h"

/* Records each line as "LINE:name|device|keyspec|options[+]" ("-" for NULL, "+" for extra fields). */
static int collect(const CrypttabEntry *e, void *data) {
        char *s;

        if (asprintf(&s, "%u:%s|%s|%s|%s%s", e->line, e->name ?: "-", e->device ?: "-", e->keyspec ?: "-",
                     e->options ?: "-", e->extra_fields ? "+" : "") < 0)
                return -ENOMEM;
        return strv_consume(data, s);
}

static int stop_at_two(const CrypttabEntry *e, void *data) {
        return e->line == 2 ? -ECANCELED : 0;
}

TEST(crypttab_parse) {
        char path[] = "/tmp/test-crypttab-XXXXXX";
        _cleanup_strv_free_ char **got = NULL;
        _cleanup_free_ char *joined = NULL;
        FILE *f;
        int fd;

        fd = mkstemp(path);
        ASSERT_TRUE(fd >= 0);
        f = fdopen(fd, "w");
        ASSERT_TRUE(f);
        fputs("# comment\n"
              "root UUID=3f5a none luks,discard\n"
              "\n"
              "   # indented comment\n"
              "onlyname\n"
              "\tswap\t/dev/sdb2  /dev/urandom\tswap  \r\n"
              "a /dev/sda1 - opts extra fields\n"
              "\"quoted name\" /dev/sda2\n"
              "last /dev/sda3 /k:LABEL=keys",
              f);
        ASSERT_EQ(fclose(f), 0);

        ASSERT_OK(crypttab_parse(path, collect, &got));
        joined = strv_join(got, "\n");
        ASSERT_STREQ(joined,
                     "2:root|UUID=3f5a|none|luks,discard\n"
                     "5:-|-|-|-\n"
                     "6:swap|/dev/sdb2|/dev/urandom|swap\n"
                     "7:a|/dev/sda1|-|opts+\n"
                     "8:\"quoted|name\"|/dev/sda2|-\n"
                     "9:last|/dev/sda3|/k:LABEL=keys|-");

        ASSERT_EQ(crypttab_parse(path, stop_at_two, NULL), -ECANCELED);
        ASSERT_EQ(unlink(path), 0);
        ASSERT_EQ(crypttab_parse(path, collect, &got), -ENOENT);
}

static void do_split(const char *spec, const char *file, const char *device) {
        _cleanup_free_ char *f = NULL, *d = NULL;

        ASSERT_OK(crypttab_split_keyspec(spec, &f, &d));
        ASSERT_STREQ(f, file);
        ASSERT_STREQ(d, device);
}

TEST(crypttab_split_keyspec) {
        do_split(NULL, NULL, NULL);
        do_split("/root.key", "/root.key", NULL);
        do_split("/root.key:LABEL=keys", "/root.key", "/dev/disk/by-label/keys");
        do_split("/root.key:UUID=\"3f5a\"", "/root.key", "/dev/disk/by-uuid/3f5a");
        do_split("/a:b.key:/dev/sdc", "/a:b.key", "/dev/sdc");
        /* Not a device after the last colon: the whole spec is the file. */
        do_split("/keys/a:b", "/keys/a:b", NULL);
        do_split("/k:ID=x", "/k:ID=x", NULL);
        do_split(":/dev/sdc", "", "/dev/sdc");
}

TEST_MAIN()
