/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fstab files as foyer-root-generator reads them: parse_fstab() of generators/root-fstab.c in check
 * mode (libmount's parser with foyer's error callback, then every entry through device-spec, path and
 * option handling, writing nothing), once as the initrd's fstab and once as the host's. Then, for every
 * entry libmount returns, the option lookups the generator makes, with their invariants. Writing the
 * units is the generator harness's part. */
#include <libmount.h>
#include <stdio.h>

#include "fuzz-file.h"
#include "log.h"
#include "macro.h"
#include "mount-options.h"
#include "root-fstab.h"
#include "strv.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_table *, mnt_unref_table);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_iter *, mnt_free_iter);

static int ignore_error(struct libmnt_table *tb, const char *filename, int line) {
        return 1;
}

static void check_options(const char *opts) {
        static const char *const lists[] = {
                "x-systemd.wanted-by\0", "x-systemd.required-by\0", "x-systemd.requires\0",
                "x-systemd.requires-mounts-for\0", "x-systemd.device-timeout\0x-systemd.mount-timeout\0",
                "x-initrd.mount\0", "comment=systemd.automount\0x-systemd.automount\0",
        };

        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                _cleanup_free_ char *value = NULL, *filtered = NULL, *refiltered = NULL;
                _cleanup_strv_free_ char **values = NULL;
                int r;

                r = mount_options_filter(opts, lists[i], &value, NULL, &filtered);
                if (r < 0)
                        return;
                if ((r > 0) != mount_options_test(opts, lists[i]))
                        fuzz_fail("filter and test disagree", opts);
                if (strlen(filtered) > strlen(opts))
                        fuzz_fail("filtered options grew", opts);
                /* What the filter keeps has none of the names left in it. */
                r = mount_options_filter(filtered, lists[i], NULL, NULL, &refiltered);
                if (r < 0)
                        return;
                if (r != 0 || !streq(filtered, refiltered))
                        fuzz_fail("filtering twice differs from filtering once", opts);
                if (mount_options_filter(opts, lists[i], NULL, &values, NULL) < 0)
                        return;
                STRV_FOREACH(v, values)
                        if (strlen(*v) >= strlen(opts))
                                fuzz_fail("value longer than the options", opts);
        }
        (void) mount_options_test_yes_no(opts, "noauto\0auto\0");
        (void) mount_options_test_yes_no(opts, "nofail\0fail\0");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *tb = NULL;
        _cleanup_(mnt_free_iterp) struct libmnt_iter *it = NULL;
        struct libmnt_fs *fs;
        const char *path;

        if (!fuzz_setup(size, 65536))
                return 0;
        path = fuzz_file_path(data, size);
        if (!path)
                return 0;

        /* The destination is never used in check mode; "/nonexistent" makes sure of it. */
        setenv("SYSTEMD_FSTAB", path, 1);
        setenv("SYSTEMD_SYSROOT_FSTAB", path, 1);
        (void) parse_fstab("/nonexistent", false, true, true);
        (void) parse_fstab("/nonexistent", true, true, true);

        tb = mnt_new_table();
        it = mnt_new_iter(MNT_ITER_FORWARD);
        if (!tb || !it)
                return 0;
        mnt_table_set_parser_errcb(tb, ignore_error);
        if (mnt_table_parse_file(tb, path) < 0)
                return 0;
        while (mnt_table_next_fs(tb, it, &fs) == 0)
                check_options(mnt_fs_get_options(fs) ?: "");
        return 0;
}
