/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Output= and -o: %k is the kernel version, %% a "%", any other specifier is refused when the
 * setting is read; output_uses_kver() tells whether the path needs the kernel version, so that
 * foyer build can check the output before it probes the kernel. */

#include "foyer-config.h"
#include "log.h"
#include "tests.h"
#include "util.h"

static void assert_expands(const char *pattern, const char *kver, const char *want) {
        _cleanup_free_ char *got = NULL;

        ASSERT_OK(output_expand(pattern, kver, &got));
        ASSERT_STREQ(got, want);
}

TEST(expand) {
        assert_expands("/boot/initrd.img-%k", "6.1.0-57-amd64", "/boot/initrd.img-6.1.0-57-amd64");
        assert_expands("%k/%k", "1", "1/1");
        assert_expands("/boot/100%%-%k.img", "6.1", "/boot/100%-6.1.img");
        assert_expands("/boot/%%k", NULL, "/boot/%k");
        assert_expands("/boot/%%%%", NULL, "/boot/%%");
        assert_expands("/boot/plain.img", NULL, "/boot/plain.img");
}

TEST(uses_kver) {
        ASSERT_TRUE(output_uses_kver("/boot/initrd.img-%k"));
        ASSERT_TRUE(output_uses_kver("%%%k"));
        ASSERT_TRUE(!output_uses_kver("/boot/%%k"));
        ASSERT_TRUE(!output_uses_kver("/boot/initrd.img"));
        ASSERT_TRUE(!output_uses_kver("/boot/x%"));
}

TEST(refused_when_read) {
        BuildConfig c;

        build_config_init(&c);
        log_set_max_level(LOG_CRIT);    /* the refusals log errors on purpose */
        ASSERT_EQ(build_config_assign(&c, "Output", "/boot/%v.img", "test.conf", 3), -EINVAL);
        ASSERT_EQ(build_config_assign(&c, "Output", "/boot/x%", "test.conf", 4), -EINVAL);
        ASSERT_TRUE(!c.output);
        ASSERT_OK(build_config_assign(&c, "Output", "/boot/initrd-%k-%%.img", "test.conf", 5));
        ASSERT_STREQ(c.output, "/boot/initrd-%k-%%.img");  /* expanded at build time */
        build_config_done(&c);
}

TEST_MAIN()
