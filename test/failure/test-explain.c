/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-explain's pieces without a VM: unit classification, systemctl output parsing, libblkid probes
 * of a file system image made here with mkfs.ext4, the device listing over a fake sysfs, and the
 * exact console text. */

#include <fcntl.h>
#include <sys/stat.h>

#include "../unit/tests.h"
#include "explain.h"
#include "netroot-explain.h"
#include "fileio.h"
#include "strv.h"

#define FS_UUID "5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e99"

static char tmpdir[] = "/tmp/test-explain-XXXXXX";
static char *image = NULL;

static void remove_tmpdir(void) {
        _cleanup_free_ char *cmd = strjoin("rm -rf -- ", tmpdir);

        if (cmd && system(cmd) != 0)
                fprintf(stderr, "Failed to remove %s\n", tmpdir);
        free(image);
}

/* An 8 MiB ext4 image with a fixed UUID and a label that needs quoting. */
static const char *make_image(void) {
        char *argv[] = { (char *) "mkfs.ext4", (char *) "-q", (char *) "-F", (char *) "-U", (char *) FS_UUID,
                         (char *) "-L", (char *) "foyer root", NULL, NULL };
        _cleanup_free_ char *out = NULL;
        int fd;

        if (image)
                return image;
        ASSERT_TRUE(mkdtemp(tmpdir));
        ASSERT_TRUE(atexit(remove_tmpdir) == 0);
        image = strjoin(tmpdir, "/dev/disk.img");
        ASSERT_TRUE(image);
        ASSERT_OK(mkdir_parents(image, 0755));
        fd = open(image, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(ftruncate(fd, 8 << 20) == 0);
        close(fd);
        argv[7] = image;
        ASSERT_OK(run_capture(argv, &out));
        return image;
}

static char *memstream_text(void (*write)(FILE *f)) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ASSERT_TRUE(f);
        write(f);
        ASSERT_TRUE(fclose(f) == 0);
        return buf;
}

TEST(failure_kind_from_unit) {
        ASSERT_EQ(failure_kind_from_unit("systemd-fsck-root.service"), FAILURE_FSCK);
        ASSERT_EQ(failure_kind_from_unit("systemd-fsck-usr.service"), FAILURE_FSCK);
        ASSERT_EQ(failure_kind_from_unit("systemd-fsck@dev-disk-by\\x2duuid-1234.service"), FAILURE_FSCK);
        ASSERT_EQ(failure_kind_from_unit("systemd-cryptsetup@luks\\x2d1234.service"), FAILURE_UNLOCK);
        ASSERT_EQ(failure_kind_from_unit("sysroot.mount"), FAILURE_MOUNT);
        ASSERT_EQ(failure_kind_from_unit("sysroot-usr.mount"), FAILURE_MOUNT);
        ASSERT_EQ(failure_kind_from_unit("initrd-parse-etc.service"), FAILURE_OTHER);
        ASSERT_EQ(failure_kind_from_unit("systemd-fsckd.service"), FAILURE_OTHER);
        ASSERT_EQ(failure_kind_from_unit("not a unit"), _FAILURE_KIND_INVALID);
        ASSERT_EQ(failure_kind_from_unit(NULL), _FAILURE_KIND_INVALID);
}

TEST(failed_units_parse) {
        _cleanup_strv_free_ char **l = NULL, **empty = NULL;

        ASSERT_OK(failed_units_parse("\xe2\x97\x8f sysroot.mount loaded failed failed /sysroot\n"
                                     "systemd-fsck-root.service loaded failed failed File System Check on /dev/vda\n"
                                     "  \n"
                                     "sysroot.mount loaded failed failed /sysroot\n"
                                     "garbage line without units\n"
                                     "systemd-cryptsetup@root.service loaded failed failed Cryptography Setup for root",
                                     &l));
        ASSERT_EQ(strv_length(l), 3);
        ASSERT_STREQ(l[0], "sysroot.mount");
        ASSERT_STREQ(l[1], "systemd-fsck-root.service");
        ASSERT_STREQ(l[2], "systemd-cryptsetup@root.service");

        ASSERT_OK(failed_units_parse("", &empty));
        ASSERT_TRUE(empty && !empty[0]);
}

TEST(run_capture) {
        char *echo[] = { (char *) "echo", (char *) "hello", NULL };
        char *fail[] = { (char *) "false", NULL };
        char *missing[] = { (char *) "/nonexistent/foyer-no-such-program", NULL };
        _cleanup_free_ char *out = NULL;
        char *untouched = (char *) "untouched";

        ASSERT_OK(run_capture(echo, &out));
        ASSERT_STREQ(out, "hello\n");
        ASSERT_EQ(run_capture(fail, &untouched), -EPROTO);
        ASSERT_EQ(run_capture(missing, &untouched), -EPROTO);
        ASSERT_STREQ(untouched, "untouched");
}

TEST(block_device_probe) {
        BlockDevice d = {};
        _cleanup_free_ char *line = NULL;

        ASSERT_OK(block_device_probe(make_image(), &d));
        ASSERT_EQ(d.probe_error, 0);
        ASSERT_STREQ(d.type, "ext4");
        ASSERT_STREQ(d.uuid, FS_UUID);
        ASSERT_STREQ(d.label, "foyer root");
        ASSERT_STREQ(d.partuuid, NULL);
        ASSERT_OK(block_device_format(&d, &line));
        _cleanup_free_ char *expected = strjoin(image, "  TYPE=ext4 UUID=" FS_UUID " LABEL=\"foyer root\"");
        ASSERT_STREQ(line, expected);
        block_device_done(&d);
}

TEST(block_device_probe_errors) {
        BlockDevice d = {};
        _cleanup_free_ char *line = NULL, *empty = NULL;
        int fd;

        (void) make_image();
        empty = strjoin(tmpdir, "/empty.img");

        ASSERT_OK(block_device_probe("/nonexistent/vdz", &d));
        ASSERT_EQ(d.probe_error, -ENOENT);
        ASSERT_OK(block_device_format(&d, &line));
        ASSERT_STREQ(line, "/nonexistent/vdz  (cannot be read: No such file or directory)");
        block_device_done(&d);
        free(line);
        line = NULL;

        /* Zeros: no signature at all. */
        fd = open(empty, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(ftruncate(fd, 1 << 20) == 0);
        close(fd);
        ASSERT_OK(block_device_probe(empty, &d));
        ASSERT_EQ(d.probe_error, 0);
        ASSERT_STREQ(d.type, NULL);
        ASSERT_OK(block_device_format(&d, &line));
        _cleanup_free_ char *expected = strjoin(empty, "  (no file system or partition table found)");
        ASSERT_STREQ(line, expected);
        block_device_done(&d);
        unlink(empty);
}

/* A fake /sys/class/block: "disk.img" of non-zero size is listed, "loop0" of size 0 is not. */
TEST(block_devices_list) {
        const char *img = make_image();
        _cleanup_free_ char *sys = strjoin(tmpdir, "/sys"), *dev = strjoin(tmpdir, "/dev"),
                            *size1 = strjoin(tmpdir, "/sys/disk.img/size"), *size2 = strjoin(tmpdir, "/sys/loop0/size");
        BlockDevice *l = NULL;
        size_t n = 0;

        ASSERT_OK(mkdir_parents(size1, 0755));
        ASSERT_OK(mkdir_parents(size2, 0755));
        ASSERT_OK(write_string_file_atomic(size1, "16384"));
        ASSERT_OK(write_string_file_atomic(size2, "0"));
        ASSERT_OK(block_devices_list(sys, dev, &l, &n));
        ASSERT_EQ(n, 1);
        ASSERT_STREQ(l[0].node, img);
        ASSERT_STREQ(l[0].uuid, FS_UUID);
        block_devices_free(l, n);

        ASSERT_EQ(block_devices_list("/nonexistent/sys", dev, &l, &n), -ENOENT);
}

static void write_missing(FILE *f) {
        BlockDevice devs[2] = {
                { .node = (char *) "/dev/vda", .type = (char *) "ext4", .uuid = (char *) FS_UUID,
                  .label = (char *) "foyer-root" },
                { .node = (char *) "/dev/vdb" },
        };
        MissingDevice m = {
                .role = "root", .given = "root=UUID=0badc0de-0000-4000-8000-00000badc0de",
                .source = "kernel command line",
                .path = "/dev/disk/by-uuid/0badc0de-0000-4000-8000-00000badc0de", .unit = "sysroot.mount",
        };

        ASSERT_OK(explain_missing_device(f, &m, devs, 2));
}

TEST(explain_missing_device) {
        _cleanup_free_ char *text = memstream_text(write_missing);

        ASSERT_STREQ(text,
                     "The root device did not appear: root=UUID=0badc0de-0000-4000-8000-00000badc0de (kernel command line)\n"
                     "  Waited for: /dev/disk/by-uuid/0badc0de-0000-4000-8000-00000badc0de\n"
                     "  Block devices present (2):\n"
                     "    /dev/vda  TYPE=ext4 UUID=" FS_UUID " LABEL=foyer-root\n"
                     "    /dev/vdb  (no file system or partition table found)\n"
                     "  If the device is listed under other identifiers, correct root= on the kernel command line;\n"
                     "  if it is not listed, its disk or driver is missing (foyer build --add-module MODULE).\n"
                     "  Details: journalctl -b -u sysroot.mount; systemctl status sysroot.mount\n");
}

static void write_vanished(FILE *f) {
        MissingDevice m = {
                .role = "root", .given = "root=UUID=" FS_UUID, .source = "kernel command line",
                .path = "/dev/disk/by-uuid/" FS_UUID, .unit = "sysroot.mount",
                .vanished = "dev-disk-by\\x2duuid-5f1a0c3e\\x2d7d4b\\x2d4e2a\\x2d9c61\\x2d0a1b2c3d4e99.device",
        };

        ASSERT_OK(explain_missing_device(f, &m, NULL, 0));
}

/* A device that was plugged and went away (hot-unplugged before the mount): said so, without the hint
 * about other identifiers. */
TEST(explain_missing_device_vanished) {
        _cleanup_free_ char *text = memstream_text(write_vanished);

        ASSERT_STREQ(text,
                     "The root device disappeared: root=UUID=" FS_UUID " (kernel command line)\n"
                     "  Waited for: /dev/disk/by-uuid/" FS_UUID "\n"
                     "  Block devices present: none\n"
                     "  It was there earlier in this boot (dev-disk-by\\x2duuid-5f1a0c3e\\x2d7d4b\\x2d4e2a\\x2d9c61\\x2d0a1b2c3d4e99.device was plugged) and went away before it was\n"
                     "  used: its disk was removed, or failed (see journalctl -b -k).\n"
                     "  Details: journalctl -b -u sysroot.mount; systemctl status sysroot.mount\n");
}

static void write_late(FILE *f) {
        MissingDevice m = {
                .role = "root", .given = "root=UUID=" FS_UUID, .source = "kernel command line",
                .path = "/dev/disk/by-uuid/" FS_UUID, .unit = "sysroot.mount",
        };

        ASSERT_OK(explain_late_device(f, &m, 93456789, "1min 30s"));
        ASSERT_OK(explain_late_device(f, &m, 0, NULL));
}

/* A device that came after its wait ran out (a passphrase typed late under a slow machine): nothing
 * failed, so this block is the only word before the emergency shell. */
TEST(explain_late_device) {
        _cleanup_free_ char *text = memstream_text(write_late);

        ASSERT_STREQ(text,
                     "The root device appeared too late: root=UUID=" FS_UUID " (kernel command line)\n"
                     "  Waited for: /dev/disk/by-uuid/" FS_UUID " for 1min 30s; it came 93.4 s after the kernel started.\n"
                     "  The boot gave up on it before it came. Allow more time with rd.timeout=SECONDS on the\n"
                     "  kernel command line (or x-systemd.device-timeout= in fstab), or see what delayed it.\n"
                     "  Details: journalctl -b -u sysroot.mount; systemctl status sysroot.mount\n"
                     "The root device appeared too late: root=UUID=" FS_UUID " (kernel command line)\n"
                     "  Waited for: /dev/disk/by-uuid/" FS_UUID ".\n"
                     "  The boot gave up on it before it came. Allow more time with rd.timeout=SECONDS on the\n"
                     "  kernel command line (or x-systemd.device-timeout= in fstab), or see what delayed it.\n"
                     "  Details: journalctl -b -u sysroot.mount; systemctl status sysroot.mount\n");
}

static void write_no_devices(FILE *f) {
        MissingDevice m = {
                .role = "/usr", .given = "mount.usr=LABEL=usr", .source = "kernel command line",
                .path = "/dev/disk/by-label/usr", .unit = "sysusr-usr.mount",
        };

        ASSERT_OK(explain_missing_device(f, &m, NULL, 0));
}

TEST(explain_missing_device_none) {
        _cleanup_free_ char *text = memstream_text(write_no_devices);

        ASSERT_TRUE(strstr(text, "The /usr device did not appear: mount.usr=LABEL=usr (kernel command line)\n"));
        ASSERT_TRUE(strstr(text, "  Block devices present: none\n"));
        ASSERT_TRUE(strstr(text, "correct mount.usr= on the kernel command line"));
        ASSERT_TRUE(strstr(text, "  Details: journalctl -b -u sysusr-usr.mount; systemctl status sysusr-usr.mount\n"));
}

static void write_failed_units(FILE *f) {
        ASSERT_OK(explain_failed_unit(f, "systemd-fsck-root.service", FAILURE_FSCK, "exit-code", "/dev/vda", NULL));
        ASSERT_OK(explain_failed_unit(f, "systemd-fsck@dev-vdb.service", FAILURE_FSCK, "exit-code", NULL, NULL));
        ASSERT_OK(explain_failed_unit(f, "systemd-cryptsetup@root.service", FAILURE_UNLOCK, NULL, NULL, NULL));
        ASSERT_OK(explain_failed_unit(f, "sysroot.mount", FAILURE_MOUNT, "exit-code", "/dev/vda", NULL));
        ASSERT_OK(explain_failed_unit(f, "initrd-parse-etc.service", FAILURE_OTHER, "", "", NULL));
        ASSERT_OK(explain_failed_unit(f, "systemd-cryptsetup@luks\\x2d4c55.service", FAILURE_UNLOCK, "exit-code",
                                      "/dev/disk/by-uuid/4c55", NULL));
        /* An instance that does not unescape keeps the NAME placeholder. */
        ASSERT_OK(explain_failed_unit(f, "systemd-cryptsetup@bad\\x4.service", FAILURE_UNLOCK, NULL, "/dev/vdb", NULL));
}

TEST(explain_failed_unit) {
        _cleanup_free_ char *text = memstream_text(write_failed_units);

        ASSERT_STREQ(text,
                     "The file system check failed: systemd-fsck-root.service (/dev/vda, result: exit-code)\n"
                     "  The file system has errors fsck did not repair on its own: run fsck /dev/vda\n"
                     "  from this shell, then leave the shell to retry the boot.\n"
                     "  Details: journalctl -b -u systemd-fsck-root.service; systemctl status systemd-fsck-root.service\n"
                     "The file system check failed: systemd-fsck@dev-vdb.service (result: exit-code)\n"
                     "  The file system has errors fsck did not repair on its own: run fsck on it\n"
                     "  from this shell, then leave the shell to retry the boot.\n"
                     "  Details: journalctl -b -u systemd-fsck@dev-vdb.service; systemctl status systemd-fsck@dev-vdb.service\n"
                     "Unlocking an encrypted volume failed: systemd-cryptsetup@root.service\n"
                     "  A wrong passphrase, a missing key file or a missing cipher module.\n"
                     "  Unlock by hand: cryptsetup open DEVICE root, then exit to resume the boot.\n"
                     "  Details: journalctl -b -u systemd-cryptsetup@root.service; systemctl status systemd-cryptsetup@root.service\n"
                     "Mounting failed: sysroot.mount (/dev/vda, result: exit-code)\n"
                     "  Check the file system type and options (rootfstype=, rootflags=, /etc/fstab).\n"
                     "  Details: journalctl -b -u sysroot.mount; systemctl status sysroot.mount\n"
                     "A unit failed: initrd-parse-etc.service\n"
                     "  Details: journalctl -b -u initrd-parse-etc.service; systemctl status initrd-parse-etc.service\n"
                     "Unlocking an encrypted volume failed: systemd-cryptsetup@luks\\x2d4c55.service (/dev/disk/by-uuid/4c55, result: exit-code)\n"
                     "  A wrong passphrase, a missing key file or a missing cipher module.\n"
                     "  Unlock by hand: cryptsetup open /dev/disk/by-uuid/4c55 luks-4c55, then exit to resume the boot.\n"
                     "  Details: journalctl -b -u 'systemd-cryptsetup@luks\\x2d4c55.service'; systemctl status 'systemd-cryptsetup@luks\\x2d4c55.service'\n"
                     "Unlocking an encrypted volume failed: systemd-cryptsetup@bad\\x4.service (/dev/vdb)\n"
                     "  A wrong passphrase, a missing key file or a missing cipher module.\n"
                     "  Unlock by hand: cryptsetup open /dev/vdb NAME, then exit to resume the boot.\n"
                     "  Details: journalctl -b -u 'systemd-cryptsetup@bad\\x4.service'; systemctl status 'systemd-cryptsetup@bad\\x4.service'\n");
}

/* What journalctl -o cat prints for a systemd-fsck-root.service that e2fsck -a gave up on. */
#define FSCK_LOG "/dev/vda: Inode 2 has a extra size (0) which is invalid\n" \
                 "\n" \
                 "/dev/vda: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n" \
                 "\t(i.e., without -a or -p options)\n" \
                 "fsck failed with exit status 4.   \n"

TEST(log_tail_parse) {
        _cleanup_free_ char *long_line = NULL;
        char **l = NULL;

        ASSERT_OK(log_tail_parse(FSCK_LOG, 3, &l));
        ASSERT_EQ(strv_length(l), 3);
        ASSERT_STREQ(l[0], "/dev/vda: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.");
        ASSERT_STREQ(l[1], " (i.e., without -a or -p options)");
        ASSERT_STREQ(l[2], "fsck failed with exit status 4.");
        strv_free(l);

        ASSERT_OK(log_tail_parse(FSCK_LOG, 10, &l));
        ASSERT_EQ(strv_length(l), 4);
        ASSERT_STREQ(l[0], "/dev/vda: Inode 2 has a extra size (0) which is invalid");
        strv_free(l);

        /* No text, only blank lines, nothing wanted: an empty list. */
        ASSERT_OK(log_tail_parse(NULL, 3, &l));
        ASSERT_TRUE(l && !l[0]);
        strv_free(l);
        ASSERT_OK(log_tail_parse("\n \n\t\n", 3, &l));
        ASSERT_TRUE(l && !l[0]);
        strv_free(l);
        ASSERT_OK(log_tail_parse(FSCK_LOG, 0, &l));
        ASSERT_TRUE(l && !l[0]);
        strv_free(l);

        /* Escape sequences lose their ESC; long lines are cut, a last line without \n counts. */
        long_line = malloc(LOG_LINE_MAX + 51);
        ASSERT_TRUE(long_line);
        memset(long_line, 'x', LOG_LINE_MAX + 50);
        long_line[LOG_LINE_MAX + 50] = '\0';
        _cleanup_free_ char *text = strjoin("\033[0;1;31mred\033[0m\n", long_line);
        ASSERT_OK(log_tail_parse(text, 5, &l));
        ASSERT_EQ(strv_length(l), 2);
        ASSERT_STREQ(l[0], " [0;1;31mred [0m");
        ASSERT_EQ(strlen(l[1]), LOG_LINE_MAX);
        strv_free(l);
}

/* Journal lines with C1 controls (U+009B is CSI), raw 0x80..0x9f bytes, cut-short and overlong
 * sequences lose them to spaces, as C0 controls (trailing ones removed, a line of nothing else
 * dropped); valid UTF-8 text stays, and a long line is cut at a character boundary. */
TEST(log_tail_parse_unprintable) {
        _cleanup_free_ char *long_line = NULL, *text = NULL;
        char **l = NULL;

        ASSERT_OK(log_tail_parse("a\xc2\x9b" "31mred\xc2\x85x\n"
                                 "b\x9b" "2J\x80\x9f\n"
                                 "c\xc0\xaf\xe0\x80\xaf\xed\xa0\x80 \xe2\x86!\n"
                                 "\xc2\x9b\x9b\n"
                                 "d caf\xc3\xa9 \xe2\x86\x92 \xc2\xa0ok\n", 5, &l));
        ASSERT_EQ(strv_length(l), 4);
        ASSERT_STREQ(l[0], "a  31mred  x");
        ASSERT_STREQ(l[1], "b 2J");
        ASSERT_STREQ(l[2], "c           !");
        ASSERT_STREQ(l[3], "d caf\xc3\xa9 \xe2\x86\x92 \xc2\xa0ok");
        strv_free(l);

        /* "→" across LOG_LINE_MAX: the line ends before it, not in the middle of it. */
        long_line = malloc(LOG_LINE_MAX + 10);
        ASSERT_TRUE(long_line);
        memset(long_line, 'x', LOG_LINE_MAX - 1);
        strcpy(long_line + LOG_LINE_MAX - 1, "\xe2\x86\x92yz");
        ASSERT_OK(log_tail_parse(long_line, 1, &l));
        ASSERT_EQ(strv_length(l), 1);
        ASSERT_EQ(strlen(l[0]), LOG_LINE_MAX - 1);
        strv_free(l);
        /* ... and kept when it fits. */
        long_line[LOG_LINE_MAX - 3] = '\0';
        text = strjoin(long_line, "\xe2\x86\x92zz");
        ASSERT_TRUE(text);
        ASSERT_OK(log_tail_parse(text, 1, &l));
        ASSERT_EQ(strlen(l[0]), LOG_LINE_MAX);
        ASSERT_TRUE(endswith(l[0], "\xe2\x86\x92"));
        strv_free(l);
}

static void write_unprintable(FILE *f) {
        BlockDevice dev = { .node = (char *) "/dev/vda" };

        ASSERT_OK(explain_missing_device(f, &(MissingDevice) { .role = "root", .given = "root=/dev/a\xc2\x9b" "2J\x1b[0m\x9b",
                                                               .source = "kernel command line",
                                                               .path = "/dev/a\xc2\x9b" "2J\x1b[0m\x9b\xc3\xa9",
                                                               .unit = "sysroot.mount" }, &dev, 1));
        ASSERT_OK(explain_late_device(f, &(MissingDevice) { .role = "/usr", .given = "mount.usr=/dev/\xc2\x85",
                                                            .source = "kernel command line", .path = "/dev/\xc2\x85",
                                                            .unit = "sysusr-usr.mount" }, 0, NULL));
        ASSERT_OK(explain_failed_unit(f, "sysroot.mount", FAILURE_MOUNT, NULL, "/dev/b\x9b" "c", NULL));
        /* The unescaped mapping name holds U+009B: the placeholder, not the name. */
        ASSERT_OK(explain_failed_unit(f, "systemd-cryptsetup@x\\xc2\\x9b.service", FAILURE_UNLOCK, NULL, "/dev/vdb", NULL));
}

TEST(explain_unprintable) {
        _cleanup_free_ char *text = memstream_text(write_unprintable);

        ASSERT_TRUE(text);
        for (const char *p = text; *p;) {
                size_t n = *p == '\n' ? 1 : utf8_printable_len(p);

                if (n == 0)
                        fprintf(stderr, "unprintable byte 0x%02x in:\n%s\n", (unsigned char) *p, text);
                ASSERT_TRUE(n > 0);
                p += n;
        }
        ASSERT_TRUE(strstr(text, "did not appear: root=/dev/a\\xc2\\x9b2J\\x1b[0m\\x9b (kernel command line)\n"));
        ASSERT_TRUE(strstr(text, "  Waited for: /dev/a\\xc2\\x9b2J\\x1b[0m\\x9b\xc3\xa9\n"));
        ASSERT_TRUE(strstr(text, "appeared too late: mount.usr=/dev/\\xc2\\x85 (kernel command line)\n"));
        ASSERT_TRUE(strstr(text, "Mounting failed: sysroot.mount (/dev/b\\x9bc)\n"));
        ASSERT_TRUE(strstr(text, "cryptsetup open /dev/vdb NAME,"));
}

static void write_fsck_with_log(FILE *f) {
        _cleanup_strv_free_ char **log = NULL;

        ASSERT_OK(log_tail_parse(FSCK_LOG, 3, &log));
        ASSERT_OK(explain_failed_unit(f, "systemd-fsck-root.service", FAILURE_FSCK, "exit-code", "/dev/vda", log));
        /* Only fsck failures quote a log. */
        ASSERT_OK(explain_failed_unit(f, "sysroot.mount", FAILURE_MOUNT, "exit-code", "/dev/vda", log));
}

TEST(explain_failed_unit_log) {
        _cleanup_free_ char *text = memstream_text(write_fsck_with_log);

        ASSERT_STREQ(text,
                     "The file system check failed: systemd-fsck-root.service (/dev/vda, result: exit-code)\n"
                     "  fsck said (the last 3 lines of systemd-fsck-root.service's log):\n"
                     "    /dev/vda: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n"
                     "     (i.e., without -a or -p options)\n"
                     "    fsck failed with exit status 4.\n"
                     "  The file system has errors fsck did not repair on its own: run fsck /dev/vda\n"
                     "  from this shell, then leave the shell to retry the boot.\n"
                     "  Details: journalctl -b -u systemd-fsck-root.service; systemctl status systemd-fsck-root.service\n"
                     "Mounting failed: sysroot.mount (/dev/vda, result: exit-code)\n"
                     "  Check the file system type and options (rootfstype=, rootflags=, /etc/fstab).\n"
                     "  Details: journalctl -b -u sysroot.mount; systemctl status sysroot.mount\n");
}

TEST(cryptsetup_unit_volume) {
        char *out = (char *) "untouched";

        {
                _cleanup_free_ char *v = NULL;

                ASSERT_OK(cryptsetup_unit_volume("systemd-cryptsetup@luks\\x2d4c554b53\\x2d2d70\\x2d4000\\x2d8000\\x2d000000000001.service", &v));
                ASSERT_STREQ(v, "luks-4c554b53-2d70-4000-8000-000000000001");
        }
        {
                _cleanup_free_ char *v = NULL;

                ASSERT_OK(cryptsetup_unit_volume("systemd-cryptsetup@root.service", &v));
                ASSERT_STREQ(v, "root");
        }
        ASSERT_EQ(cryptsetup_unit_volume("systemd-cryptsetup@bad\\x4.service", &out), -EINVAL);
        ASSERT_EQ(cryptsetup_unit_volume("systemd-cryptsetup@.service", &out), -EINVAL);
        ASSERT_EQ(cryptsetup_unit_volume("systemd-fsck@dev-vda.service", &out), -EINVAL);
        ASSERT_EQ(cryptsetup_unit_volume("sysroot.mount", &out), -EINVAL);
        ASSERT_STREQ(out, "untouched");
}

/* ExecStart as systemd 252's "systemctl show -P ExecStart" prints it. */
TEST(cryptsetup_exec_start_device) {
        static const char *const bad[] = {
                "",
                "n/a",
                /* Cut off before the end of argv[]. */
                "{ path=/lib/systemd/systemd-cryptsetup ; argv[]=/lib/systemd/systemd-cryptsetup attach luks-1 /dev/vda",
                /* Too few arguments. */
                "{ path=/lib/systemd/systemd-cryptsetup ; argv[]=/lib/systemd/systemd-cryptsetup attach luks-1 ; ignore_errors=no }",
                /* Not attach. */
                "{ path=/lib/systemd/systemd-cryptsetup ; argv[]=/lib/systemd/systemd-cryptsetup detach luks-1 /dev/vda ; ignore_errors=no }",
                /* Not systemd-cryptsetup. */
                "{ path=/bin/sh ; argv[]=/bin/sh attach luks-1 /dev/vda none ; ignore_errors=no }",
                "{ path=/usr/bin/my-systemd-cryptsetup ; argv[]=/usr/bin/my-systemd-cryptsetup attach luks-1 /dev/vda none ; ignore_errors=no }",
                /* A device that is not a path, or one that would need quoting. */
                "{ path=/lib/systemd/systemd-cryptsetup ; argv[]=/lib/systemd/systemd-cryptsetup attach luks-1 UUID=4c55 none luks ; ignore_errors=no }",
                "{ path=/lib/systemd/systemd-cryptsetup ; argv[]=/lib/systemd/systemd-cryptsetup attach luks-1 /dev/$(reboot) none ; ignore_errors=no }",
                "{ path=/lib/systemd/systemd-cryptsetup ; argv[]=/lib/systemd/systemd-cryptsetup attach luks-1 /dev/a;b none ; ignore_errors=no }",
                "{ path=/lib/systemd/systemd-cryptsetup ; argv[]=/lib/systemd/systemd-cryptsetup attach l /dev/disk/by-label/a\\x20b none ; ignore_errors=no }",
                /* The second command's argv[] is not the first's. */
                "{ path=/bin/true ; ignore_errors=no } ; { path=/lib/systemd/systemd-cryptsetup ; argv[]=/lib/systemd/systemd-cryptsetup attach a /dev/vda none ; ignore_errors=no }",
        };
        char *out = (char *) "untouched";

        {
                _cleanup_free_ char *d = NULL;

                ASSERT_OK(cryptsetup_exec_start_device(
                        "{ path=/lib/systemd/systemd-cryptsetup ; argv[]=/lib/systemd/systemd-cryptsetup attach "
                        "luks-4c554b53-2d70-4000-8000-000000000001 /dev/disk/by-uuid/4c554b53-2d70-4000-8000-000000000001 "
                        "none luks ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; "
                        "status=0/0 }", &d));
                ASSERT_STREQ(d, "/dev/disk/by-uuid/4c554b53-2d70-4000-8000-000000000001");
        }
        {
                _cleanup_free_ char *d = NULL;

                /* Three arguments only (no key file), tabs, and a second command after it. */
                ASSERT_OK(cryptsetup_exec_start_device(
                        "{ path=/usr/lib/systemd/systemd-cryptsetup ; argv[]=systemd-cryptsetup\tattach root /dev/vda2 ; "
                        "ignore_errors=yes } ; { path=/bin/true ; argv[]=/bin/true a b /dev/x ; ignore_errors=no }", &d));
                ASSERT_STREQ(d, "/dev/vda2");
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                fprintf(stderr, "bad[%zu]\n", i);
                ASSERT_EQ(cryptsetup_exec_start_device(bad[i], &out), -EINVAL);
        }
        ASSERT_EQ(cryptsetup_exec_start_device(NULL, &out), -EINVAL);
        ASSERT_STREQ(out, "untouched");
}

/* dm-verity's messages as Linux 6.12 logs them (drivers/md/dm-verity-target.c, verity_handle_err()). */
static void do_verity_message_parse(const char *message, int expected, const char *devnum, const char *what) {
        _cleanup_free_ char *d = NULL, *w = NULL;

        ASSERT_EQ(verity_message_parse(message, &d, &w), expected);
        if (expected > 0) {
                ASSERT_STREQ(d, devnum);
                ASSERT_STREQ(w, what);
        } else
                ASSERT_TRUE(!d && !w);
}

TEST(verity_message_parse) {
        do_verity_message_parse("device-mapper: verity: 254:1: data block 0 is corrupted", 1, "254:1",
                                "data block 0 is corrupted");
        do_verity_message_parse("device-mapper: verity: 8:17: metadata block 18446744073709551615 is corrupted", 1,
                                "8:17", "metadata block 18446744073709551615 is corrupted");
        do_verity_message_parse("device-mapper: verity: 254:1: reached maximum errors", 1, "254:1",
                                "reached maximum errors");
        /* Setup errors fail a unit of their own; other targets' and half messages are not corruption. */
        do_verity_message_parse("device-mapper: verity: Invalid root digest", 0, NULL, NULL);
        do_verity_message_parse("device-mapper: table: 254:2: verity: Root hash verification failed", 0, NULL, NULL);
        do_verity_message_parse("device-mapper: crypt: 254:1: data block 0 is corrupted", 0, NULL, NULL);
        do_verity_message_parse("device-mapper: verity: 254:1: data block 0 is corrupted!", 0, NULL, NULL);
        do_verity_message_parse("device-mapper: verity: 254:1: data block x is corrupted", 0, NULL, NULL);
        do_verity_message_parse("device-mapper: verity: 254: data block 0 is corrupted", 0, NULL, NULL);
        do_verity_message_parse("device-mapper: verity: ", 0, NULL, NULL);
        do_verity_message_parse("", 0, NULL, NULL);
}

static void write_verity(FILE *f) {
        ASSERT_OK(explain_verity_corruption(f, "root", "vda1", "254:1", "data block 0 is corrupted"));
        ASSERT_OK(explain_verity_corruption(f, NULL, NULL, "8:17", "reached maximum errors"));
        ASSERT_OK(explain_verity_corruption(f, "r\x1b[2Jx", "vd\ta", "254:3", "metadata block 2 is corrupted"));
}

TEST(explain_verity_corruption) {
        _cleanup_free_ char *text = memstream_text(write_verity);
        const char *advice =
                "  The device's blocks do not match its root hash: the disk was changed or is damaged, or the\n"
                "  root hash is not this disk's. Reads of those blocks fail; rewrite the image, or check it with\n"
                "  veritysetup verify DATA HASH ROOTHASH.\n"
                "  Details: dmesg | grep 'device-mapper: verity'\n";
        _cleanup_free_ char *expected = strjoin(
                "dm-verity found corrupted data: /dev/mapper/root (data device /dev/vda1, 254:1): data block 0 is corrupted\n",
                advice,
                "dm-verity found corrupted data: a verity device (data device 8:17): reached maximum errors\n",
                advice,
                "dm-verity found corrupted data: /dev/mapper/r\\x1b[2Jx (data device /dev/vd\\x09a, 254:3): metadata block 2 is corrupted\n",
                advice);

        ASSERT_TRUE(expected);
        ASSERT_STREQ(text, expected);
}

static void write_corrupted(FILE *f) {
        MissingDevice m = {
                .role = "root", .given = "What=/dev/mapper/root", .source = "sysroot.mount",
                .path = "/dev/mapper/root", .unit = "sysroot.mount",
        };

        ASSERT_OK(explain_corrupted_device(f, &m, "root"));
        m.role = "/usr";
        m.given = "mount.usr=/dev/mapper/u\x1b";
        m.source = "kernel command line";
        m.path = "/dev/mapper/u\x1b";
        m.unit = "sysusr-usr.mount";
        ASSERT_OK(explain_corrupted_device(f, &m, "u\x1b"));
}

/* A verity root whose first block is corrupted is set up, but udev cannot read its file system, so
 * the wait for it runs out as for a late device: the block says what is wrong instead. */
TEST(explain_corrupted_device) {
        _cleanup_free_ char *text = memstream_text(write_corrupted);

        ASSERT_STREQ(text,
                     "The root device is there, but its data is corrupted: What=/dev/mapper/root (sysroot.mount)\n"
                     "  It is the dm-verity volume /dev/mapper/root, whose blocks do not match the root hash (below):\n"
                     "  its file system cannot be read, so the device never became ready for the mount. Waiting\n"
                     "  longer will not help.\n"
                     "  Details: journalctl -b -u sysroot.mount; systemctl status sysroot.mount\n"
                     "The /usr device is there, but its data is corrupted: mount.usr=/dev/mapper/u\\x1b (kernel command line)\n"
                     "  It is the dm-verity volume /dev/mapper/u\\x1b, whose blocks do not match the root hash (below):\n"
                     "  its file system cannot be read, so the device never became ready for the mount. Waiting\n"
                     "  longer will not help.\n"
                     "  Details: journalctl -b -u sysusr-usr.mount; systemctl status sysusr-usr.mount\n");
        ASSERT_TRUE(!strstr(text, "too late"));
}

/* What journalctl -o cat prints for a failed sysroot.mount of an NFS root, as mount.nfs words it. */
#define NFS_LOG_MISSING "mount.nfs4: mounting 10.0.2.2:/srv/missing failed, reason given by server: No such file or directory\n"
#define NFS_LOG_DENIED  "mount.nfs: access denied by server while mounting 10.0.2.2:/missing\n"
#define NBD_LOG_REFUSED "Warning: the oldstyle protocol is no longer supported.\n" \
                        "Error: Socket failed: Connection refused\n" \
                        "Exiting.\n"

TEST(netroot_cause_of_line) {
        ASSERT_EQ(netroot_cause_of_line("mount.nfs4: mounting 10.0.2.2:/srv/missing failed, reason given by server: No such file or directory"),
                  NETROOT_CAUSE_EXPORT);
        ASSERT_EQ(netroot_cause_of_line("mount.nfs: access denied by server while mounting 10.0.2.2:/missing"), NETROOT_CAUSE_EXPORT);
        ASSERT_EQ(netroot_cause_of_line("mount.nfs4: Connection refused"), NETROOT_CAUSE_REFUSED);
        ASSERT_EQ(netroot_cause_of_line("mount.nfs4: Connection timed out"), NETROOT_CAUSE_UNREACHABLE);
        ASSERT_EQ(netroot_cause_of_line("mount.nfs: No route to host"), NETROOT_CAUSE_UNREACHABLE);
        ASSERT_EQ(netroot_cause_of_line("mount.nfs4: Network is unreachable"), NETROOT_CAUSE_NO_NETWORK);
        ASSERT_EQ(netroot_cause_of_line("mount.nfs: requested NFS version or transport protocol is not supported"),
                  NETROOT_CAUSE_VERSION);
        ASSERT_EQ(netroot_cause_of_line("Error: Export not found"), NETROOT_CAUSE_EXPORT);
        ASSERT_EQ(netroot_cause_of_line("Error: Socket failed: Connection refused"), NETROOT_CAUSE_REFUSED);
        ASSERT_EQ(netroot_cause_of_line("Exiting."), NETROOT_CAUSE_UNKNOWN);
        ASSERT_EQ(netroot_cause_of_line(""), NETROOT_CAUSE_UNKNOWN);
        ASSERT_EQ(netroot_cause_of_line(NULL), NETROOT_CAUSE_UNKNOWN);
}

TEST(netroot_cause_of_log) {
        _cleanup_strv_free_ char **nbd = NULL, **retried = NULL, **none = NULL;
        size_t line = 99;

        ASSERT_OK(log_tail_parse(NBD_LOG_REFUSED, 4, &nbd));
        ASSERT_EQ(netroot_cause_of_log(nbd, &line), NETROOT_CAUSE_REFUSED);
        ASSERT_EQ(line, 1);
        /* The last word counts: a timeout retried until the server refused. */
        ASSERT_OK(log_tail_parse("mount.nfs4: Connection timed out\nmount.nfs4: Connection refused\n", 4, &retried));
        ASSERT_EQ(netroot_cause_of_log(retried, &line), NETROOT_CAUSE_REFUSED);
        ASSERT_EQ(line, 1);
        ASSERT_OK(log_tail_parse("", 4, &none));
        ASSERT_EQ(netroot_cause_of_log(none, &line), NETROOT_CAUSE_UNKNOWN);
        ASSERT_EQ(line, 0);
        ASSERT_EQ(netroot_cause_of_log(NULL, NULL), NETROOT_CAUSE_UNKNOWN);
}

static void write_nfs_missing(FILE *f) {
        _cleanup_strv_free_ char **log = NULL;

        ASSERT_OK(log_tail_parse(NFS_LOG_MISSING, 4, &log));
        ASSERT_OK(explain_netroot_failure(f, &(NetrootFailure) { .kind = NETROOT_NFS,
                                                                 .given = "root=nfs4:10.0.2.2:/srv/missing:port=2049",
                                                                 .server = "10.0.2.2", .export = "/srv/missing",
                                                                 .options = "port=2049", .unit = "sysroot.mount",
                                                                 .result = "exit-code" }, log));
}

TEST(explain_netroot_nfs_missing_export) {
        _cleanup_free_ char *text = memstream_text(write_nfs_missing);

        ASSERT_STREQ(text,
                     "The root is on NFS and mounting it failed: sysroot.mount (10.0.2.2:/srv/missing, result: exit-code)\n"
                     "  Server: 10.0.2.2, export: /srv/missing, options: port=2049 (root=nfs4:10.0.2.2:/srv/missing:port=2049, kernel command line)\n"
                     "  mount.nfs said (the last 1 line of sysroot.mount's log):\n"
                     "    mount.nfs4: mounting 10.0.2.2:/srv/missing failed, reason given by server: No such file or directory\n"
                     "  The server answered and refused the export: /srv/missing does not exist there, or is not\n"
                     "  exported to this machine. Check the path in root= against the server's exports\n"
                     "  (exportfs -v on the server, or its nfs-ganesha EXPORT blocks).\n"
                     "  Details: journalctl -b -u sysroot.mount; systemctl status sysroot.mount\n");
}

static void write_nfs_other(FILE *f) {
        _cleanup_strv_free_ char **denied = NULL, **refused = NULL, **unreachable = NULL;
        NetrootFailure n = { .kind = NETROOT_NFS, .given = "root=/dev/nfs", .server = "server\x1b[2J", .export = "/missing",
                             .unit = "sysroot.mount" };

        ASSERT_OK(log_tail_parse(NFS_LOG_DENIED, 4, &denied));
        ASSERT_OK(explain_netroot_failure(f, &n, denied));
        ASSERT_OK(log_tail_parse("mount.nfs4: Connection refused\n", 4, &refused));
        ASSERT_OK(explain_netroot_failure(f, &n, refused));
        ASSERT_OK(log_tail_parse("mount.nfs4: Network is unreachable\n", 4, &unreachable));
        n.network_down = true;
        ASSERT_OK(explain_netroot_failure(f, &n, unreachable));
        /* Stopped by systemd while mount.nfs retried: nothing logged. */
        n.network_down = false;
        n.result = "timeout";
        ASSERT_OK(explain_netroot_failure(f, &n, NULL));
}

TEST(explain_netroot_nfs_causes) {
        _cleanup_free_ char *text = memstream_text(write_nfs_other);

        /* The server's name comes from the command line: escaped. */
        ASSERT_TRUE(strstr(text, "The root is on NFS and mounting it failed: sysroot.mount (server\\x1b[2J:/missing)\n"
                                 "  Server: server\\x1b[2J, export: /missing (root=/dev/nfs, kernel command line)\n"
                                 "  mount.nfs said (the last 1 line of sysroot.mount's log):\n"
                                 "    mount.nfs: access denied by server while mounting 10.0.2.2:/missing\n"
                                 "  The server answered and refused the export: /missing does not exist there, or is not\n"
                                 "  exported to this machine. Check the path in root= against"));
        ASSERT_TRUE(strstr(text, "    mount.nfs4: Connection refused\n"
                                 "  The server's address answered, but nothing listens on the NFS port: the NFS server is\n"
                                 "  not running there, or the port in root= is not its port.\n"));
        ASSERT_TRUE(strstr(text, "    mount.nfs4: Network is unreachable\n"
                                 "  This machine had no address or route to reach the server from: the network did\n"
                                 "  not come up (above).\n"));
        ASSERT_TRUE(strstr(text, "sysroot.mount (server\\x1b[2J:/missing, result: timeout)\n"
                                 "  Server: server\\x1b[2J, export: /missing (root=/dev/nfs, kernel command line)\n"
                                 "  mount.nfs logged nothing.\n"
                                 "  No answer came before the time limit ran out: the server is unreachable, or\n"
                                 "  does not answer on its port (mount.nfs retries until it is stopped).\n"
                                 "  Details: journalctl -b -u sysroot.mount; systemctl status sysroot.mount\n"));
        ASSERT_TRUE(!strstr(text, "\x1b"));
}

static void write_nbd(FILE *f) {
        _cleanup_strv_free_ char **refused = NULL, **missing = NULL;
        NetrootFailure n = { .kind = NETROOT_NBD, .given = "root=nbd:10.0.2.2:10809|root", .server = "10.0.2.2",
                             .port = "10809", .export = "root", .unit = "foyer-nbd-root.service", .result = "exit-code" };

        ASSERT_OK(log_tail_parse(NBD_LOG_REFUSED, 4, &refused));
        ASSERT_OK(explain_netroot_failure(f, &n, refused));
        ASSERT_OK(log_tail_parse("Negotiation: ..\nError: Export not found\nExiting.\n", 4, &missing));
        n.given = "netroot=nbd:10.0.2.2:10809";
        n.export = NULL;
        ASSERT_OK(explain_netroot_failure(f, &n, missing));
}

TEST(explain_netroot_nbd) {
        _cleanup_free_ char *text = memstream_text(write_nbd);

        ASSERT_STREQ(text,
                     "The root is on NBD and connecting to it failed: foyer-nbd-root.service (10.0.2.2:10809, result: exit-code)\n"
                     "  Server: 10.0.2.2, port: 10809, export: root (root=nbd:10.0.2.2:10809|root, kernel command line)\n"
                     "  nbd-client said (the last 3 lines of foyer-nbd-root.service's log):\n"
                     "    Warning: the oldstyle protocol is no longer supported.\n"
                     "    Error: Socket failed: Connection refused\n"
                     "    Exiting.\n"
                     "  The server's address answered, but nothing listens on the NBD port: the NBD server is\n"
                     "  not running there, or the port in root= is not its port.\n"
                     "  Details: journalctl -b -u foyer-nbd-root.service; systemctl status foyer-nbd-root.service\n"
                     "The root is on NBD and connecting to it failed: foyer-nbd-root.service (10.0.2.2:10809, result: exit-code)\n"
                     "  Server: 10.0.2.2, port: 10809, export: the server's default (netroot=nbd:10.0.2.2:10809, kernel command line)\n"
                     "  nbd-client said (the last 3 lines of foyer-nbd-root.service's log):\n"
                     "    Negotiation: ..\n"
                     "    Error: Export not found\n"
                     "    Exiting.\n"
                     "  The server answered and has no default export. Check the name in netroot=\n"
                     "  against the server's exports (nbd-client -l SERVER lists them).\n"
                     "  Details: journalctl -b -u foyer-nbd-root.service; systemctl status foyer-nbd-root.service\n");
}

/* systemd-networkd's state of a link DHCP got no answer on (systemd 257's link_save()), and of one
 * with a lease. */
#define LINK_NO_LEASE "# This is private data. Do not parse.\n" \
                      "ADMIN_STATE=configuring\n" \
                      "OPER_STATE=degraded\n" \
                      "CARRIER_STATE=carrier\n" \
                      "ADDRESS_STATE=degraded\n" \
                      "IPV4_ADDRESS_STATE=off\n" \
                      "IPV6_ADDRESS_STATE=degraded\n" \
                      "ONLINE_STATE=offline\n" \
                      "NETWORK_FILE=/usr/lib/systemd/network/99-foyer-default.network\n" \
                      "REQUIRED_FOR_ONLINE=yes\n"
#define LINK_LEASED "ADMIN_STATE=configured\n" \
                    "OPER_STATE=routable\n" \
                    "ONLINE_STATE=online\n" \
                    "DHCP_LEASE=/run/systemd/netif/leases/3\n"
#define LEASE "# This is private data. Do not parse.\n" \
              "ADDRESS=10.0.2.15\n" \
              "NETMASK=255.255.255.0\n" \
              "ROUTER=10.0.2.2\n" \
              "SERVER_ADDRESS=10.0.2.2\n"

TEST(net_link_state_parse) {
        _cleanup_(net_link_done) NetLink a = {}, b = {}, c = {};
        _cleanup_free_ char *address = NULL, *none = NULL;

        ASSERT_OK(net_link_state_parse(LINK_NO_LEASE, &a));
        ASSERT_STREQ(a.admin_state, "configuring");
        ASSERT_STREQ(a.oper_state, "degraded");
        ASSERT_TRUE(!a.has_lease);
        ASSERT_TRUE(!net_link_is_up(&a));
        ASSERT_OK(net_link_state_parse(LINK_LEASED, &b));
        ASSERT_TRUE(b.has_lease);
        ASSERT_TRUE(net_link_is_up(&b));
        /* No newline at the end, a key without '=', an empty lease and an escape in a value. */
        ASSERT_OK(net_link_state_parse("ADMIN_STATE\nDHCP_LEASE=\nOPER_STATE=off\x1b", &c));
        ASSERT_TRUE(!c.admin_state);
        ASSERT_TRUE(!c.has_lease);
        ASSERT_STREQ(c.oper_state, "off\\x1b");

        ASSERT_OK(net_lease_address_parse(LEASE, &address));
        ASSERT_STREQ(address, "10.0.2.15");
        ASSERT_OK(net_lease_address_parse("NETMASK=255.0.0.0\n", &none));
        ASSERT_TRUE(!none);
}

static void write_file(const char *dir, const char *name, const char *text) {
        _cleanup_free_ char *path = strjoin(dir, "/", name);

        ASSERT_TRUE(path);
        ASSERT_OK(mkdir_parents(path, 0755));
        ASSERT_OK(write_string_file_atomic(path, text));
}

static NetLink *test_links;
static size_t n_test_links;

static void write_no_network(FILE *f) {
        ASSERT_OK(explain_no_network(f, "systemd-networkd-wait-online.service", "exit-code",
                                     "root=nfs4:10.0.2.2:/srv/root", test_links, n_test_links));
        ASSERT_OK(explain_no_network(f, NULL, NULL, "root=nbd:10.0.2.2:10809", NULL, 0));
}

TEST(net_links_list) {
        _cleanup_free_ char *sys = NULL, *netif = NULL, *text = NULL;

        make_image();   /* makes tmpdir */
        sys = strjoin(tmpdir, "/sys/class/net");
        netif = strjoin(tmpdir, "/run/systemd/netif");
        ASSERT_TRUE(sys && netif);
        write_file(sys, "lo/ifindex", "1\n");
        write_file(sys, "enp0s2/ifindex", "2\n");
        write_file(sys, "enp0s3/ifindex", "3\n");
        write_file(sys, "enp0s4/ifindex", "4\n");
        write_file(sys, "wlan0/ifindex", "garbage\n");
        write_file(netif, "links/2", LINK_NO_LEASE);
        write_file(netif, "links/3", LINK_LEASED);
        write_file(netif, "leases/3", LEASE);
        write_file(netif, "links/4", "ADMIN_STATE=configuring\nOPER_STATE=no-carrier\n");

        ASSERT_OK(net_links_list(sys, netif, &test_links, &n_test_links));
        ASSERT_EQ(n_test_links, 4);
        ASSERT_STREQ(test_links[0].name, "enp0s2");
        ASSERT_EQ(test_links[0].ifindex, 2);
        ASSERT_STREQ(test_links[1].name, "enp0s3");
        ASSERT_STREQ(test_links[1].address, "10.0.2.15");
        ASSERT_STREQ(test_links[3].name, "wlan0");
        ASSERT_EQ(test_links[3].ifindex, 0);
        ASSERT_TRUE(!test_links[3].admin_state);

        text = memstream_text(write_no_network);
        ASSERT_STREQ(text,
                     "The network did not come up for the network root: systemd-networkd-wait-online.service (result: exit-code)\n"
                     "  The root is on the network (root=nfs4:10.0.2.2:/srv/root, kernel command line), and no link got an address\n"
                     "  to reach its server from.\n"
                     "  Network links (4; systemd-networkd's state):\n"
                     "    enp0s2  degraded, configuring: no DHCP lease: no DHCP server answered on this link\n"
                     "    enp0s3  routable, configured, address 10.0.2.15: configured\n"
                     "    enp0s4  no-carrier, configuring: no carrier: no cable, or nothing at the other end\n"
                     "    wlan0  -, -: systemd-networkd has no state for it (not running, or it never saw the link)\n"
                     "  No DHCP lease means no DHCP server answered: check the network the link is on, or\n"
                     "  give a static address with ip= on the kernel command line.\n"
                     "  Details: journalctl -b -u systemd-networkd.service -u systemd-networkd-wait-online.service; networkctl list\n"
                     "The network did not come up for the network root: no link is configured\n"
                     "  The root is on the network (root=nbd:10.0.2.2:10809, kernel command line), and no link got an address\n"
                     "  to reach its server from.\n"
                     "  Network links: none but the loopback: the network card's driver is missing\n"
                     "  (foyer build --add-module MODULE), or the machine has no network card.\n"
                     "  Details: journalctl -b -u systemd-networkd.service -u systemd-networkd-wait-online.service; networkctl list\n");
        net_links_free(test_links, n_test_links);
        ASSERT_EQ(net_links_list("/nonexistent/foyer-no-sys", netif, &test_links, &n_test_links), -ENOENT);
}

TEST_MAIN();
