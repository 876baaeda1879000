/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The target system's own settings (src/foyer/target.c) on arbitrary trees: the input, split at NUL
 * bytes, is the tree's /etc/fstab, /etc/crypttab, /etc/initramfs-tools/conf.d/resume and the LVM
 * metadata backup of VGs vg0 and debian-vg. No crash; the chosen crypttab text has one line per
 * chosen name, each starting with it; key files are absolute paths of the tree, not devices; an
 * LV name split gives back non-empty parts. The tree lives in /dev/shm (or $TMPDIR) for the run. */
#include <stdlib.h>
#include <unistd.h>

#include "fileio.h"
#include "fuzz.h"
#include "log.h"
#include "path-util.h"
#include "strv.h"
#include "target.h"

static char *root;

static void remove_root(void) {
        if (root)
                rm_rf(root);
}

static bool make_root(void) {
        static const char *const dirs[] = { "/etc/initramfs-tools/conf.d", "/etc/lvm/backup" };
        const char *base = access("/dev/shm", W_OK) >= 0 ? "/dev/shm" : getenv("TMPDIR") ?: "/tmp";

        if (asprintf(&root, "%s/fuzz-target-XXXXXX", base) < 0 || !mkdtemp(root))
                return false;
        atexit(remove_root);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *d = strjoin(root, dirs[i]);

                if (!d || mkdir_p(d, 0755) < 0)
                        return false;
        }
        return true;
}

static void put(const char *path, const uint8_t *data, size_t size) {
        _cleanup_free_ char *full = strjoin(root, path);
        FILE *f;

        if (!full || !(f = fopen(full, "we")))
                abort();
        if (size > 0 && fwrite(data, 1, size, f) != size)
                abort();
        if (fclose(f) != 0)
                abort();
}

static void check_lv(const char *device) {
        _cleanup_free_ char *vg = NULL, *lv = NULL;

        if (device && target_lv_split(device, &vg, &lv) > 0 && (isempty(vg) || isempty(lv)))
                fuzz_fail("an empty VG or LV name", device);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const files[] = {
                "/etc/fstab", "/etc/crypttab", "/etc/initramfs-tools/conf.d/resume", "/etc/lvm/backup/vg0",
        };
        _cleanup_(target_fstab_done) TargetFstab f = {};
        _cleanup_(target_crypttab_done) TargetCrypttab t = {};
        const uint8_t *p = data, *end = data + size;

        if (!fuzz_setup(size, 65536))
                return 0;
        if (!root && !make_root())
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                const uint8_t *nul = memchr(p, 0, end - p) ?: end;

                put(files[i], p, nul - p);
                if (i == ELEMENTSOF(files) - 1)
                        put("/etc/lvm/backup/debian-vg", p, nul - p);
                p = nul < end ? nul + 1 : end;
        }

        if (target_fstab_read(root, &f) < 0)
                return 0;
        check_lv(f.root);
        check_lv(f.usr);
        check_lv(f.resume);
        if (target_crypttab_select(root, &f, &t) < 0)
                return 0;

        if (!t.text != !t.names)
                fuzz_fail("chosen text and names disagree", t.text);
        if (t.text) {
                size_t lines = 0;
                const char *l = t.text;

                for (const char *c = t.text; *c; c++)
                        if (*c == '\n')
                                lines++;
                if (lines != strv_length(t.names))
                        fuzz_fail("not one line per chosen volume", t.text);
                STRV_FOREACH(n, t.names) {
                        const char *after = startswith(l, *n);

                        if (!after || (*after != ' ' && *after != '\t'))
                                fuzz_fail("a line does not start with its volume name", *n);
                        l = strchr(l, '\n') + 1;
                }
        }
        STRV_FOREACH(k, t.key_files)
                if ((*k)[0] != '/' || startswith(*k, "/dev/"))
                        fuzz_fail("a key file that is no file of the tree", *k);
        return 0;
}
