/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "cmdline.h"
#include "parse-util.h"
#include "strv.h"
#include "tests.h"

static void do_split_full(const char *line, const char *joined_with_bar, int open_quote) {
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ char *j = NULL;
        const char *w = NULL;

        ASSERT_EQ(cmdline_split(line, &l), open_quote);
        ASSERT_EQ(cmdline_find_open_quote(line, &w), open_quote);
        if (!open_quote)
                ASSERT_STREQ(w, NULL);
        j = strv_join(l, "|");
        ASSERT_STREQ(j, joined_with_bar);
}

static void do_split(const char *line, const char *joined_with_bar) {
        do_split_full(line, joined_with_bar, 0);
}

TEST(cmdline_split) {
        do_split("", "");
        do_split("   \t\n", "");
        do_split("root=/dev/sda2 ro", "root=/dev/sda2|ro");
        do_split("  a   b\tc\n", "a|b|c");
        do_split("root=LABEL=\"my root\" rw", "root=LABEL=my root|rw");
        do_split("'a b' \"c d\"e", "a b|c de");
        do_split_full("x=\"unterminated quote", "x=unterminated quote", 1);
        do_split_full("a 'b", "a|b", 1);
        do_split_full("a \"b\\", "a|b\\", 1);       /* a trailing backslash inside the quote */
        do_split("a \"\" ''", "a||");
        do_split("a\\ b", "a\\ b");                /* escapes are kept verbatim */
        do_split("root=LABEL=a\\x20c", "root=LABEL=a\\x20c");
        do_split("a\\\"b c", "a\\\"b|c");          /* an escaped quote does not open a quote */
        do_split("trailing\\", "trailing\\");
        do_split("\"a\\\"b\" c", "a\\\"b|c");
        do_split("ä€=ü", "ä€=ü");
}

/* Decodes the escape at the start of s (after its backslash); returns cunescape_one()'s result, the
 * bytes in out (NUL-terminated) and how much of s it read in *used. */
static int do_unescape(const char *s, char out[8], size_t *used) {
        const char *p = s;
        size_t n = 0;
        int r = cunescape_one(&p, out, &n);

        out[n] = 0;
        *used = (size_t) (p - s);
        return r;
}

TEST(cunescape_one) {
        char out[8];
        size_t used;

        ASSERT_EQ(do_unescape("n", out, &used), 0);
        ASSERT_STREQ(out, "\n");
        ASSERT_EQ(used, 1u);
        ASSERT_EQ(do_unescape("s rest", out, &used), 0);
        ASSERT_STREQ(out, " ");
        ASSERT_EQ(do_unescape("x41z", out, &used), 0);
        ASSERT_STREQ(out, "A");
        ASSERT_EQ(used, 3u);
        ASSERT_EQ(do_unescape("101", out, &used), 0);
        ASSERT_STREQ(out, "A");
        ASSERT_EQ(do_unescape("u00e9", out, &used), 0);
        ASSERT_STREQ(out, "\xc3\xa9");
        ASSERT_EQ(used, 5u);
        ASSERT_EQ(do_unescape("U0001F600", out, &used), 0);
        ASSERT_STREQ(out, "\xf0\x9f\x98\x80");
        /* NUL, surrogates, beyond Unicode, short or unknown escapes are refused, nothing read */
        ASSERT_EQ(do_unescape("x00", out, &used), -EINVAL);
        ASSERT_EQ(do_unescape("000", out, &used), -EINVAL);
        ASSERT_EQ(do_unescape("777", out, &used), -EINVAL);
        ASSERT_EQ(do_unescape("ud800", out, &used), -EINVAL);
        ASSERT_EQ(do_unescape("U00110000", out, &used), -EINVAL);
        ASSERT_EQ(do_unescape("x4", out, &used), -EINVAL);
        ASSERT_EQ(do_unescape("q", out, &used), -EINVAL);
        ASSERT_EQ(used, 0u);
        ASSERT_EQ(unhexchar('f'), 15);
        ASSERT_EQ(unhexchar('G'), -EINVAL);
}

TEST(cmdline_find_open_quote) {
        const char *line = "quiet rd.luks.options=\"discard root=/dev/sda2", *w = NULL;

        ASSERT_EQ(cmdline_find_open_quote(line, &w), 1);
        ASSERT_STREQ(w, "rd.luks.options=\"discard root=/dev/sda2");
        ASSERT_EQ(cmdline_find_open_quote("a=\"b c\" d='e'", &w), 0);
        ASSERT_EQ(cmdline_find_open_quote("", &w), 0);
}

struct collect {
        char *text;
};

static int collect_item(const char *key, const char *value, void *data) {
        struct collect *c = data;
        char *item = value ? strjoin(key, "=", value) : strjoin(key, "(flag)");

        ASSERT_TRUE(item);
        ASSERT_EQ(strextend_with_separator(&c->text, " ", item), 0);
        free(item);
        return 0;
}

static void do_parse(const char *line, bool initrd, CmdlineFlags flags, const char *expected) {
        struct collect c = { .text = strdup("") };

        setenv("SYSTEMD_IN_INITRD", initrd ? "1" : "0", 1);
        ASSERT_EQ(cmdline_parse_given(line, collect_item, &c, flags), 0);
        ASSERT_STREQ(c.text, expected);
        free(c.text);
}

TEST(cmdline_parse_given_rd_rule) {
        const char *line = "root=/dev/sda2 rd.fstab=no ro ro=1 rd.luks.uuid=X luks.uuid=Y a=b=c";

        /* plain: rd. words vanish on the host and stay prefixed in the initrd */
        do_parse(line, false, 0, "root=/dev/sda2 ro(flag) ro=1 luks.uuid=Y a=b=c");
        do_parse(line, true, 0, "root=/dev/sda2 rd.fstab=no ro(flag) ro=1 rd.luks.uuid=X luks.uuid=Y a=b=c");
        /* strip: rd.x is x in the initrd */
        do_parse(line, true, CMDLINE_STRIP_RD_PREFIX,
                 "root=/dev/sda2 fstab=no ro(flag) ro=1 luks.uuid=X luks.uuid=Y a=b=c");
        do_parse(line, false, CMDLINE_STRIP_RD_PREFIX, "root=/dev/sda2 ro(flag) ro=1 luks.uuid=Y a=b=c");
        /* strict: only rd. words in the initrd, only the others on the host */
        do_parse(line, true, CMDLINE_STRIP_RD_PREFIX | CMDLINE_RD_STRICT, "fstab=no luks.uuid=X");
        do_parse(line, false, CMDLINE_STRIP_RD_PREFIX | CMDLINE_RD_STRICT,
                 "root=/dev/sda2 ro(flag) ro=1 luks.uuid=Y a=b=c");
        do_parse("root= x=", true, 0, "root= x=");
        /* words with an empty key or white space in the key never reach a callback */
        do_parse("=x \"\" '' \"a b\"=c rd. rd.=y \"a\tb\" ok=\"d e\"", true, CMDLINE_STRIP_RD_PREFIX, "ok=d e");
}

TEST(in_initrd) {
        setenv("SYSTEMD_IN_INITRD", "yes", 1);
        ASSERT_TRUE(in_initrd());
        setenv("SYSTEMD_IN_INITRD", "0", 1);
        ASSERT_TRUE(!in_initrd());
}

TEST(cmdline_read_sources) {
        char dir[] = "/tmp/test-cmdline-XXXXXX";
        _cleanup_strv_free_ char **words = NULL;
        _cleanup_free_ char *line = NULL, *v = NULL;
        FILE *f;

        ASSERT_TRUE(mkdtemp(dir));
        _cleanup_free_ char *a = strjoin(dir, "/20-b.conf"), *b = strjoin(dir, "/10-a.conf"),
                            *c = strjoin(dir, "/30-ignored.txt");
        ASSERT_TRUE((f = fopen(a, "w")));
        fputs("# comment root=/dev/bad\nrootflags=two\n", f);
        fclose(f);
        ASSERT_TRUE((f = fopen(b, "w")));
        fputs("root=/dev/conf rootflags=one\n", f);
        fclose(f);
        ASSERT_TRUE((f = fopen(c, "w")));
        fputs("root=/dev/txt\n", f);
        fclose(f);

        setenv("FOYER_CMDLINE_DIR", dir, 1);
        setenv("SYSTEMD_EFI_OPTIONS", "efi=1", 1);
        setenv("SYSTEMD_PROC_CMDLINE", "root=/dev/kernel", 1);
        ASSERT_EQ(cmdline_read_words(&words), 0);
        line = strv_join(words, "|");
        ASSERT_STREQ(line, "root=/dev/conf|rootflags=one|rootflags=two|efi=1|root=/dev/kernel");

        ASSERT_EQ(cmdline_get_key("root", 0, &v), 1);
        ASSERT_STREQ(v, "/dev/kernel");
        free(v);
        v = NULL;
        ASSERT_EQ(cmdline_get_key("nonexistent", 0, &v), 0);
        ASSERT_STREQ(v, NULL);

        unlink(a);
        unlink(b);
        unlink(c);
        rmdir(dir);
        unsetenv("FOYER_CMDLINE_DIR");
        unsetenv("SYSTEMD_EFI_OPTIONS");
}

static void write_file(const char *dir, const char *name, const char *text) {
        _cleanup_free_ char *p = strjoin(dir, "/", name);
        FILE *f;

        ASSERT_TRUE(p);
        ASSERT_TRUE((f = fopen(p, "we")));
        fputs(text, f);
        ASSERT_EQ(fclose(f), 0);
}

static void remove_file(const char *dir, const char *name) {
        _cleanup_free_ char *p = strjoin(dir, "/", name);

        ASSERT_TRUE(p);
        ASSERT_EQ(unlink(p), 0);
}

/* A quote left open in one source ends at that source's end: it must not swallow the next source's
 * words. Before each source was split on its own, the stored default rd.luks.options="discard ate the
 * boot loader's root= and no sysroot.mount was made. */
TEST(cmdline_open_quote_stays_in_its_source) {
        char dir[] = "/tmp/test-cmdline-XXXXXX";
        _cleanup_free_ char *v = NULL, *joined = NULL;
        _cleanup_strv_free_ char **words = NULL;

        ASSERT_TRUE(mkdtemp(dir));
        setenv("FOYER_CMDLINE_DIR", dir, 1);
        unsetenv("SYSTEMD_EFI_OPTIONS");
        setenv("SYSTEMD_IN_INITRD", "1", 1);

        /* cmdline.d file, then the kernel's command line */
        write_file(dir, "50-foyer.conf", "rd.luks.options=\"discard\n");
        setenv("SYSTEMD_PROC_CMDLINE", "root=/dev/sda2 rw", 1);
        ASSERT_EQ(cmdline_get_key("root", 0, &v), 1);
        ASSERT_STREQ(v, "/dev/sda2");
        free(v);
        v = NULL;
        ASSERT_EQ(cmdline_get_key("luks.options", CMDLINE_STRIP_RD_PREFIX, &v), 1);
        ASSERT_STREQ(v, "discard");
        free(v);
        v = NULL;

        /* two cmdline.d files: the open quote of the first ends with that file, and its lines are
         * joined as before */
        write_file(dir, "60-b.conf", "# comment \"\nrootflags=x\n");
        write_file(dir, "40-a.conf", "a='b\nc\n");
        ASSERT_EQ(cmdline_read_words(&words), 0);
        joined = strv_join(words, "|");
        ASSERT_STREQ(joined, "a=b c|rd.luks.options=discard|rootflags=x|root=/dev/sda2|rw");
        words = strv_free(words);
        free(joined);
        joined = NULL;

        /* the EFI options: an open quote there, or a trailing backslash, keeps to itself too */
        setenv("SYSTEMD_EFI_OPTIONS", "efi=\"x y", 1);
        setenv("SYSTEMD_PROC_CMDLINE", "root=/dev/vda1", 1);
        ASSERT_EQ(cmdline_get_key("root", 0, &v), 1);
        ASSERT_STREQ(v, "/dev/vda1");
        free(v);
        v = NULL;
        setenv("SYSTEMD_EFI_OPTIONS", "efi=x\\", 1);
        ASSERT_EQ(cmdline_read_words(&words), 0);
        joined = strv_join(words, "|");
        ASSERT_STREQ(joined, "a=b c|rd.luks.options=discard|rootflags=x|efi=x\\|root=/dev/vda1");

        remove_file(dir, "40-a.conf");
        remove_file(dir, "50-foyer.conf");
        remove_file(dir, "60-b.conf");
        ASSERT_EQ(rmdir(dir), 0);
        unsetenv("FOYER_CMDLINE_DIR");
        unsetenv("SYSTEMD_EFI_OPTIONS");
}

TEST(cmdline_long) {
        /* A 4 KiB line with hundreds of words. */
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ char *line = NULL;

        for (int i = 0; i < 400; i++) {
                char w[32];
                snprintf(w, sizeof(w), "param%d=value%d", i, i);
                ASSERT_EQ(strextend_with_separator(&line, " ", w), 0);
        }
        ASSERT_TRUE(strlen(line) > 4096);
        ASSERT_EQ(cmdline_split(line, &l), 0);
        ASSERT_EQ(strv_length(l), 400);
        ASSERT_STREQ(l[399], "param399=value399");
}

TEST(cmdline_key_streq) {
        ASSERT_TRUE(cmdline_key_streq("systemd.debug_shell", "systemd.debug-shell"));
        ASSERT_TRUE(cmdline_key_streq("a-b_c", "a_b-c"));
        ASSERT_TRUE(!cmdline_key_streq("a-b", "a.b"));
        ASSERT_TRUE(!cmdline_key_streq("root", "rootflags"));
}

TEST(parse_boolean) {
        ASSERT_EQ(parse_boolean("yes"), 1);
        ASSERT_EQ(parse_boolean("On"), 1);
        ASSERT_EQ(parse_boolean("0"), 0);
        ASSERT_EQ(parse_boolean("off"), 0);
        ASSERT_EQ(parse_boolean("maybe"), -EINVAL);
}

TEST(timespan) {
        char buf[FORMAT_TIMESPAN_MAX];
        usec_t u;

        ASSERT_EQ(parse_sec("90", &u), 0);
        ASSERT_STREQ(format_timespan(buf, sizeof(buf), u), "1min 30s");
        ASSERT_EQ(parse_sec("1min30s", &u), 0);
        ASSERT_EQ(u, 90 * USEC_PER_SEC);
        ASSERT_EQ(parse_sec("1.5", &u), 0);
        ASSERT_STREQ(format_timespan(buf, sizeof(buf), u), "1.500000s");
        ASSERT_EQ(parse_sec_fix_0("0", &u), 0);
        ASSERT_STREQ(format_timespan(buf, sizeof(buf), u), "infinity");
        ASSERT_EQ(parse_sec("5 min", &u), 0);
        ASSERT_STREQ(format_timespan(buf, sizeof(buf), u), "5min");
        ASSERT_EQ(parse_sec("abc", &u), -EINVAL);
        ASSERT_EQ(parse_sec("", &u), -EINVAL);
}

TEST_MAIN()
