/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-contract.h and the units meson builds from it (units/meson.build):
 *   - meson read every #define of the header as the C compiler reads it (the table meson wrote into
 *     contract-as-meson-read.h against the macros compiled here);
 *   - the built tree is the source tree with NAME.in built into NAME, and nothing else;
 *   - no built unit holds a placeholder, and each contract value a unit needs is there, equal to
 *     the header's;
 *   - every path of foyer's in a built unit is one of the contract's;
 *   - no unit in the source tree writes a contract path out instead of its placeholder. */

#include <ftw.h>

#include "contract-as-meson-read.h"
#include "fileio.h"
#include "foyer-contract.h"
#include "strv.h"
#include "tests.h"

typedef struct ContractValue {
        const char *name;
        const char *compiled;   /* the macro as the C compiler expands it */
        const char *meson;      /* the value meson read, and filled into the units */
} ContractValue;

static const ContractValue contract[] = { FOYER_CONTRACT_AS_MESON_READ };

static char **found;            /* nftw() has no userdata: the files list_tree() collects */
static size_t found_prefix;

static int collect(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        if (type == FTW_F || type == FTW_SL)
                ASSERT_OK(strv_extend(&found, path + found_prefix));
        return 0;
}

/* The files under dir, as paths relative to it, sorted. */
static char **list_tree(const char *dir) {
        char **l;

        found = NULL;
        found_prefix = strlen(dir) + 1;
        ASSERT_EQ(nftw(dir, collect, 16, FTW_PHYS), 0);
        strv_sort(found);
        l = found;
        found = NULL;
        return l;
}

static char *read_unit(const char *dir, const char *name) {
        _cleanup_free_ char *p = strjoin(dir, "/", name);
        char *text = NULL;

        ASSERT_TRUE(p);
        ASSERT_OK(read_full_file(p, &text, NULL));
        return text;
}

static bool has_line(const char *text, const char *line) {
        size_t n = strlen(line);

        for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
                        return true;
        return false;
}

TEST(meson_reads_the_header_as_c_does) {
        ASSERT_TRUE(ELEMENTSOF(contract) >= 10);
        for (size_t i = 0; i < ELEMENTSOF(contract); i++) {
                fprintf(stderr, "%s=%s\n", contract[i].name, contract[i].compiled);
                ASSERT_STREQ(contract[i].meson, contract[i].compiled);
        }
}

/* The build's own files in units/: each directory's meson.build and the file they link to. */
static bool is_meson_file(const char *path) {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

        return streq(base, "meson.build") || endswith(base, ".meson");
}

TEST(built_tree_is_the_source_tree) {
        _cleanup_strv_free_ char **src = list_tree(UNIT_SOURCE_DIR), **built = list_tree(UNIT_BUILD_DIR);
        _cleanup_strv_free_ char **want = NULL;

        STRV_FOREACH(f, src) {
                size_t n = strlen(*f);

                if (is_meson_file(*f))
                        continue;
                ASSERT_OK(endswith(*f, ".in") ? strv_consume(&want, strndup(*f, n - 3)) : strv_extend(&want, *f));
        }
        strv_sort(want);
        _cleanup_free_ char *w = strv_join(want, " "), *b = strv_join(built, " ");
        ASSERT_STREQ(b, w);
}

TEST(no_placeholder_left) {
        _cleanup_strv_free_ char **built = list_tree(UNIT_BUILD_DIR);

        ASSERT_TRUE(!strv_isempty(built));
        STRV_FOREACH(f, built) {
                _cleanup_free_ char *text = read_unit(UNIT_BUILD_DIR, *f);

                /* meson's placeholders are @NAME@, NAME of [A-Za-z0-9_-]. */
                for (const char *p = strchr(text, '@'); p; p = strchr(p + 1, '@')) {
                        size_t n = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");

                        if (n > 0 && p[1 + n] == '@') {
                                fprintf(stderr, "%s still holds %.*s\n", *f, (int) n + 2, p);
                                ASSERT_TRUE(false);
                        }
                }
        }
}

TEST(units_carry_the_contract) {
        static const struct {
                const char *unit, *line;
        } want[] = {
                { FOYER_FAILURE_REPORT_SERVICE, "ConditionFileIsExecutable=" FOYER_EXPLAIN_PATH },
                { FOYER_FAILURE_REPORT_SERVICE, "ExecStart=" FOYER_EXPLAIN_PATH },
                { FOYER_BREAK_TEMPLATE, "AssertPathExists=" FOYER_INITRD_RELEASE },
                { FOYER_BREAK_TEMPLATE, "ExecStart=-" FOYER_BREAK_SHELL_PATH },
                /* The templates whose instances foyer-driver-generator links: each loads %I
                 * itself, without modprobe's -b, which would honour the generator's blacklist. */
                { FOYER_DRIVER_PRE_TEMPLATE, "ExecStart=/usr/sbin/modprobe -- %I" },
                { FOYER_DRIVER_PRE_TEMPLATE, "Before=systemd-udevd.service systemd-udev-trigger.service systemd-modules-load.service" },
                { FOYER_DRIVER_POST_TEMPLATE, "ExecStart=/usr/sbin/modprobe -- %I" },
                { FOYER_DRIVER_POST_TEMPLATE, "ExecStartPre=-/usr/bin/udevadm settle" },
                { FOYER_DRIVER_POST_TEMPLATE, "Before=initrd-root-device.target" },
                { "emergency.target.d/10-foyer-failure-report.conf", "Wants=" FOYER_FAILURE_REPORT_SERVICE },
                { "initrd-parse-etc.service.d/10-foyer.conf",
                  "ExecStart=@" FOYER_ROOT_GENERATOR_PATH " " FOYER_SYSROOT_FSTAB_CHECK },
                { "systemd-udevd.service.d/10-foyer.conf", "SystemCallArchitectures=native" },
        };

        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                _cleanup_free_ char *text = read_unit(UNIT_BUILD_DIR, want[i].unit);

                if (!has_line(text, want[i].line)) {
                        fprintf(stderr, "%s lacks the line \"%s\":\n%s", want[i].unit, want[i].line, text);
                        ASSERT_TRUE(false);
                }
        }
}

/* A path under foyer's own directories in a built unit must be a value of the contract: a unit
 * cannot name a file that the builder does not put there. */
TEST(foyer_paths_in_units_are_the_contracts) {
        static const char *const prefixes[] = {
                FOYER_IMAGE_LIB_DIR "/", FOYER_IMAGE_GENERATOR_DIR "/foyer-", "/etc/foyer/",
        };
        _cleanup_strv_free_ char **built = list_tree(UNIT_BUILD_DIR);
        unsigned checked = 0;

        STRV_FOREACH(f, built) {
                _cleanup_free_ char *text = read_unit(UNIT_BUILD_DIR, *f);

                for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                        for (const char *p = strstr(text, prefixes[i]); p; p = strstr(p + 1, prefixes[i])) {
                                _cleanup_free_ char *path = strndup(p, strcspn(p, " \t\n\"'"));
                                bool known = false;

                                ASSERT_TRUE(path);
                                for (size_t j = 0; j < ELEMENTSOF(contract); j++)
                                        known = known || streq(path, contract[j].compiled);
                                if (!known) {
                                        fprintf(stderr, "%s names %s, which foyer-contract.h does not define\n",
                                                *f, path);
                                        ASSERT_TRUE(false);
                                }
                                checked++;
                        }
        }
        /* foyer-explain twice, the break shell, the root generator */
        ASSERT_TRUE(checked >= 4);
}

TEST(source_units_use_placeholders) {
        _cleanup_strv_free_ char **src = list_tree(UNIT_SOURCE_DIR);

        STRV_FOREACH(f, src) {
                if (is_meson_file(*f))
                        continue;
                _cleanup_free_ char *text = read_unit(UNIT_SOURCE_DIR, *f);
                const ContractValue *longest = NULL;

                /* The longest one found names the placeholder to use (not its directory's). */
                for (size_t j = 0; j < ELEMENTSOF(contract); j++)
                        if (contract[j].compiled[0] == '/' && strstr(text, contract[j].compiled) &&
                            (!longest || strlen(contract[j].compiled) > strlen(longest->compiled)))
                                longest = &contract[j];
                if (longest) {
                        fprintf(stderr, "units/%s writes %s; write @%s@ (in a NAME.in file) instead\n",
                                *f, longest->compiled, longest->name);
                        ASSERT_TRUE(false);
                }
        }
}

TEST_MAIN();
