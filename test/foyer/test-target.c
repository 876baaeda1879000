/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The target system's own settings (src/foyer/target.c) on scratch --root trees: the root, /usr,
 * swaps and resume device from fstab and initramfs-tools' conf.d/resume; which crypttab lines the
 * image takes (by name, through LVM names and the VG's metadata backup, Debian's "initramfs"
 * option, every line without noauto when the stack cannot be told); the key files; the refusal
 * of options the image cannot honour, naming the line. */

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fileio.h"
#include "log.h"
#include "target.h"
#include "tests.h"
#include "util.h"

static char root[] = "/tmp/test-target-XXXXXX";

static void put(const char *path, const char *text) {
        _cleanup_free_ char *full = strjoin(root, path), *dir = NULL;

        ASSERT_TRUE(full);
        dir = path_dirname(full);
        ASSERT_TRUE(dir);
        ASSERT_OK(mkdir_p(dir, 0755));
        ASSERT_OK(write_string_file_atomic(full, text));
}

static void drop(const char *path) {
        _cleanup_free_ char *full = strjoin(root, path);

        ASSERT_TRUE(full);
        (void) unlink(full);
}

static void reset(void) {
        drop("/etc/fstab");
        drop("/etc/crypttab");
        drop("/etc/initramfs-tools/conf.d/resume");
        drop("/etc/lvm/backup/vg0");
}

/* Selects with the tree as it is; returns target_crypttab_select()'s result, the chosen text in
 * *ret_text (or NULL). */
static int select_lines(TargetCrypttab *t) {
        _cleanup_(target_fstab_done) TargetFstab f = {};

        ASSERT_OK(target_fstab_read(root, &f));
        return target_crypttab_select(root, &f, t);
}

static void assert_selects(const char *want_text, bool want_all) {
        _cleanup_(target_crypttab_done) TargetCrypttab t = {};

        ASSERT_OK(select_lines(&t));
        if (!want_text)
                ASSERT_TRUE(!t.text);
        else
                ASSERT_STREQ(t.text, want_text);
        ASSERT_EQ(t.all, want_all);
}

static const char installer_fstab[] =
        "# <file system> <mount point>   <type>  <options>       <dump>  <pass>\n"
        "/dev/mapper/debian--vg-root /               ext4    errors=remount-ro 0       1\n"
        "UUID=0b3c0a24-0d1a-4b5c-9e6f-7a8b9c0d1e2f /boot           ext2    defaults        0       2\n"
        "/dev/mapper/debian--vg-swap_1 none            swap    sw              0       0\n";

TEST(fstab) {
        _cleanup_(target_fstab_done) TargetFstab f = {};

        reset();
        ASSERT_OK(target_fstab_read(root, &f));
        ASSERT_TRUE(!f.root && !f.usr && !f.swaps && !f.resume);    /* no fstab: nothing */
        target_fstab_done(&f);

        put("/etc/fstab", installer_fstab);
        ASSERT_OK(target_fstab_read(root, &f));
        ASSERT_STREQ(f.root, "/dev/mapper/debian--vg-root");
        ASSERT_STREQ(f.root_fstype, "ext4");
        ASSERT_TRUE(!f.usr);
        ASSERT_EQ(strv_length(f.swaps), 1);
        ASSERT_STREQ(f.resume, "/dev/mapper/debian--vg-swap_1");  /* no conf.d/resume: the swap */
        target_fstab_done(&f);

        /* A swap file cannot be resumed from without resume_offset=: the swap partition is. */
        put("/etc/fstab", "LABEL=root / ext4 defaults 0 1\nUUID=11 /usr ext4 ro 0 2\n"
                          "/swapfile none swap sw 0 0\nUUID=22 none swap sw 0 0\n");
        ASSERT_OK(target_fstab_read(root, &f));
        ASSERT_STREQ(f.root, "LABEL=root");
        ASSERT_STREQ(f.usr, "UUID=11");
        ASSERT_EQ(strv_length(f.swaps), 2);
        ASSERT_STREQ(f.resume, "UUID=22");
        target_fstab_done(&f);

        /* initramfs-tools' setting wins over the swap; quotes go; the last assignment counts. */
        put("/etc/initramfs-tools/conf.d/resume", "RESUME=UUID=33\n# RESUME=UUID=44\nRESUME=\"/dev/vg0/swap\"\n");
        ASSERT_OK(target_fstab_read(root, &f));
        ASSERT_STREQ(f.resume, "/dev/vg0/swap");
        target_fstab_done(&f);
        put("/etc/initramfs-tools/conf.d/resume", "RESUME=none\n");
        ASSERT_OK(target_fstab_read(root, &f));
        ASSERT_TRUE(!f.resume);
        target_fstab_done(&f);
        put("/etc/initramfs-tools/conf.d/resume", "RESUME=auto\n");
        ASSERT_OK(target_fstab_read(root, &f));
        ASSERT_STREQ(f.resume, "UUID=22");
        target_fstab_done(&f);

        /* RESUME= of initramfs.conf too, which a conf.d file overrides (mkinitramfs sources
         * initramfs.conf first, then conf.d in name order, skipping dpkg's leftovers). */
        drop("/etc/initramfs-tools/conf.d/resume");
        put("/etc/initramfs-tools/initramfs.conf", "MODULES=most\nRESUME='UUID=55' # comment\n");
        ASSERT_OK(target_fstab_read(root, &f));
        ASSERT_STREQ(f.resume, "UUID=55");
        target_fstab_done(&f);
        put("/etc/initramfs-tools/conf.d/zz-resume.dpkg-old", "RESUME=UUID=77\n");
        put("/etc/initramfs-tools/conf.d/resume", "export RESUME=UUID=66\n");
        ASSERT_OK(target_fstab_read(root, &f));
        ASSERT_STREQ(f.resume, "UUID=66");
        drop("/etc/initramfs-tools/conf.d/zz-resume.dpkg-old");
        drop("/etc/initramfs-tools/initramfs.conf");
}

static void assert_lv(const char *path, const char *vg, const char *lv) {
        _cleanup_free_ char *v = NULL, *l = NULL;

        ASSERT_EQ(target_lv_split(path, &v, &l), !!vg);
        if (vg) {
                ASSERT_STREQ(v, vg);
                ASSERT_STREQ(l, lv);
        }
}

TEST(lv_split) {
        assert_lv("/dev/mapper/debian--vg-root", "debian-vg", "root");
        assert_lv("/dev/mapper/debian--vg-swap_1", "debian-vg", "swap_1");
        assert_lv("/dev/mapper/vg0-root", "vg0", "root");
        assert_lv("/dev/mapper/a--b--c-d--e", "a-b-c", "d-e");
        assert_lv("/dev/vg0/root", "vg0", "root");
        assert_lv("/dev/mapper/sda5_crypt", NULL, NULL);   /* no dash: not an LV */
        assert_lv("/dev/mapper/-x", NULL, NULL);
        assert_lv("/dev/mapper/x-", NULL, NULL);
        assert_lv("/dev/mapper/a--b", NULL, NULL);         /* only a doubled dash */
        assert_lv("/dev/md/root", NULL, NULL);
        assert_lv("/dev/disk/by-uuid", NULL, NULL);
        assert_lv("/dev/sda1", NULL, NULL);
        assert_lv("UUID=1234", NULL, NULL);
}

TEST(select_installer) {
        reset();
        put("/etc/fstab", installer_fstab);
        /* The installer's one line: the root's VG has no metadata backup in a fresh tree, so the
         * stack cannot be told and every line without noauto is taken. */
        put("/etc/crypttab", "sda5_crypt UUID=4c554b53-2d70-4000-8000-000000000051 none luks,discard\n"
                             "data UUID=aa /etc/keys/data.key luks,noauto\n");
        assert_selects("sda5_crypt UUID=4c554b53-2d70-4000-8000-000000000051 none luks,discard\n", true);

        /* With the VG's metadata backup naming its PV, only the volume under the root (and the
         * swap, the same VG) is taken. */
        put("/etc/crypttab", "sda5_crypt UUID=4c554b53-2d70-4000-8000-000000000051 none luks,discard\n"
                             "home UUID=bb none luks\n");
        put("/etc/lvm/backup/debian-vg", "debian-vg {\n\tphysical_volumes {\n\t\tpv0 {\n"
                                          "\t\t\tdevice = \"/dev/mapper/sda5_crypt\"\t# Hint only\n\t\t}\n\t}\n}\n");
        assert_selects("sda5_crypt UUID=4c554b53-2d70-4000-8000-000000000051 none luks,discard\n", false);
        drop("/etc/lvm/backup/debian-vg");
}

TEST(select_by_name) {
        TargetCrypttab t = {};

        reset();
        put("/etc/fstab", "/dev/mapper/cryptroot / ext4 defaults 0 1\n/dev/sda3 /usr ext4 defaults 0 2\n"
                          "/dev/mapper/cryptswap none swap sw 0 0\n");
        put("/etc/crypttab", "# comment\n"
                             "cryptroot UUID=11 /etc/keys/root.key luks,discard\n"
                             "cryptswap /dev/sda2 none luks\n"
                             "home UUID=22 /etc/keys/home.key luks\n"
                             "backup UUID=33 /etc/keys/root.key luks,noauto,initramfs\n"
                             "scratch /dev/sdc1 /dev/urandom swap\n");
        ASSERT_OK(select_lines(&t));
        ASSERT_STREQ(t.text, "cryptroot UUID=11 /etc/keys/root.key luks,discard\n"
                             "cryptswap /dev/sda2 none luks\n"
                             "backup UUID=33 /etc/keys/root.key luks,noauto,initramfs\n");
        ASSERT_TRUE(!t.all);
        ASSERT_EQ(strv_length(t.names), 3);
        /* The key file once, though two lines name it; home's stays out with its line. */
        ASSERT_EQ(strv_length(t.key_files), 1);
        ASSERT_STREQ(t.key_files[0], "/etc/keys/root.key");
        target_crypttab_done(&t);

        /* A random-keyed swap holds nothing to resume from, even when it is the resume device;
         * the line with "initramfs" is always taken. */
        put("/etc/fstab", "/dev/sda1 / ext4 defaults 0 1\n/dev/mapper/scratch none swap sw 0 0\n");
        assert_selects("backup UUID=33 /etc/keys/root.key luks,noauto,initramfs\n", false);

        /* The root on a plain partition: no line is needed; a UUID= could be anything. */
        put("/etc/fstab", "/dev/nvme0n1p2 / ext4 defaults 0 1\n");
        assert_selects("backup UUID=33 /etc/keys/root.key luks,noauto,initramfs\n", false);
        put("/etc/fstab", "UUID=99 / ext4 defaults 0 1\n");
        ASSERT_OK(select_lines(&t));
        ASSERT_TRUE(t.all);
        ASSERT_STREQ(t.text, "cryptroot UUID=11 /etc/keys/root.key luks,discard\n"
                             "cryptswap /dev/sda2 none luks\n"
                             "home UUID=22 /etc/keys/home.key luks\n"
                             "backup UUID=33 /etc/keys/root.key luks,noauto,initramfs\n");
        ASSERT_EQ(strv_length(t.key_files), 2);
        target_crypttab_done(&t);

        /* No crypttab at all. */
        drop("/etc/crypttab");
        assert_selects(NULL, false);
}

TEST(key_specs) {
        _cleanup_(target_crypttab_done) TargetCrypttab t = {};

        reset();
        put("/etc/fstab", "UUID=99 / ext4 defaults 0 1\n");
        /* none, -, a device, a key on another device, a relative name: no file of the tree. */
        put("/etc/crypttab", "a UUID=1 none\nb UUID=2 -\nc UUID=3 /dev/sdb\nd UUID=4 /k.key:LABEL=usb\n"
                             "e UUID=5 /etc/keys/e.key\nf UUID=6\n");
        ASSERT_OK(select_lines(&t));
        ASSERT_EQ(strv_length(t.key_files), 1);
        ASSERT_STREQ(t.key_files[0], "/etc/keys/e.key");
        ASSERT_EQ(strv_length(t.names), 6);
}

TEST(unsupported_options) {
        static const char *const bad[] = {
                "luks,keyscript=/lib/cryptsetup/scripts/passdev",
                "luks,check=blkid",
                "check,luks",
                "luks,checkargs=ext4",
                "veracrypt",
        };
        TargetCrypttab t = {};

        reset();
        put("/etc/fstab", "/dev/mapper/root / ext4 defaults 0 1\n");
        log_set_max_level(LOG_CRIT);    /* the refusals log errors on purpose */
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *text = strjoin("# line 1\nroot UUID=11 none ", bad[i], "\n");

                ASSERT_TRUE(text);
                put("/etc/crypttab", text);
                ASSERT_EQ(select_lines(&t), -EOPNOTSUPP);
                ASSERT_TRUE(!t.text);
        }
        /* On a line the image does not take, the option does not matter. */
        put("/etc/crypttab", "root UUID=11 none luks\nhome UUID=22 none luks,keyscript=decrypt_keyctl\n");
        ASSERT_OK(select_lines(&t));
        ASSERT_STREQ(t.text, "root UUID=11 none luks\n");
        target_crypttab_done(&t);
        /* Debian's options that mean nothing here, and systemd's own, pass. */
        put("/etc/crypttab", "root UUID=11 none luks,initramfs,noearly,loud,quiet,keyslot=1,tries=3,discard,checkfoo\n");
        ASSERT_OK(select_lines(&t));
        ASSERT_TRUE(t.text);
        target_crypttab_done(&t);
        log_set_max_level(LOG_INFO);
}

static void cleanup(void) {
        rm_rf(root);
}

static void __attribute__((constructor)) setup(void) {
        if (!mkdtemp(root))
                abort();
        atexit(cleanup);
}

TEST_MAIN()
