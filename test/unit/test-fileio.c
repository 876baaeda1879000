/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "tests.h"

/* What a child writes to the memfd given as its stdout is read back from the start, wherever the
 * offset was left; read_full_fd() from the same offset reads nothing. */
TEST(read_full_fd_from_start) {
        static const char text[] = "keycode 21 = y\nkeycode 44 = z\n";
        _cleanup_close_ int fd = memfd_create("test-fileio", MFD_CLOEXEC);
        _cleanup_free_ char *all = NULL, *rest = NULL;
        size_t size = 0;

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        ASSERT_EQ(read_full_fd(fd, &rest, &size), 0);
        ASSERT_EQ(size, (size_t) 0);
        ASSERT_EQ(read_full_fd_from_start(fd, &all, &size), 0);
        ASSERT_EQ(size, strlen(text));
        ASSERT_STREQ(all, text);
}

/* A pipe cannot be read from its start: the error is the lseek()'s, not a short read. */
TEST(read_full_fd_from_start_pipe) {
        int p[2];
        char *text = NULL;

        ASSERT_EQ(pipe(p), 0);
        ASSERT_EQ(read_full_fd_from_start(p[0], &text, NULL), -ESPIPE);
        ASSERT_TRUE(!text);
        close(p[0]);
        close(p[1]);
}

/* A scratch tree ROOT beside a directory OUTSIDE that stands for the build host: every escape a
 * --root tree can try points into OUTSIDE, whose file holds a marker. */
static char base[] = "/tmp/test-fileio.XXXXXX";
static char root[64], outside[64];
static bool tree_made;

static void make_tree(void) {
        char p[128];
        int fd;

        if (tree_made)
                return;         /* made by an earlier test */
        ASSERT_TRUE(mkdtemp(base) != NULL);
        tree_made = true;
        snprintf(root, sizeof(root), "%s/root", base);
        snprintf(outside, sizeof(outside), "%s/outside", base);
        ASSERT_EQ(mkdir(root, 0755), 0);
        ASSERT_EQ(mkdir(outside, 0755), 0);
        snprintf(p, sizeof(p), "%s/secret", outside);
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, "HOST", 4), 4);
        close(fd);
        snprintf(p, sizeof(p), "%s/etc", root);
        ASSERT_EQ(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/etc/secret", root);
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, "TREE", 4), 4);
        close(fd);
}

static void tree_symlink(const char *target, const char *name) {
        char p[256];

        snprintf(p, sizeof(p), "%s/%s", root, name);
        (void) unlink(p);
        ASSERT_EQ(symlink(target, p), 0);
}

/* Every way out of the tree a link can take lands inside it, where "secret" is the tree's. */
TEST(read_full_file_in_root_escapes) {
        char abs_target[128], dotdot[256];
        const char *names[] = { "abs", "rel", "dir/secret", "missing/../../secret" };

        make_tree();
        snprintf(abs_target, sizeof(abs_target), "%s/secret", outside);
        tree_symlink(abs_target, "abs");                         /* absolute host path */
        snprintf(dotdot, sizeof(dotdot), "../../../../../../..%s/secret", outside);
        tree_symlink(dotdot, "rel");                             /* ".." above the root */
        tree_symlink(outside, "dir");                            /* a directory on the way */
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                _cleanup_free_ char *text = NULL;
                int r = read_full_file_in_root(root, names[i], &text, NULL);

                /* Either missing inside the tree, or the tree's own file: never "HOST". */
                ASSERT_TRUE(r == -ENOENT || (r == 0 && strcmp(text, "HOST") != 0));
        }
        /* Links inside the tree are followed there: /etc/secret is the tree's. */
        tree_symlink("/etc/secret", "abs");
        _cleanup_free_ char *text = NULL;
        ASSERT_EQ(read_full_file_in_root(root, "/abs", &text, NULL), 0);
        ASSERT_STREQ(text, "TREE");
}

/* A FIFO, a device node, a socket or a directory where a regular file is read is refused before it
 * is opened for reading: a FIFO would block the open forever, /dev/zero never ends. */
TEST(read_full_file_refuses_special_files) {
        char p[128];
        _cleanup_free_ char *text = NULL;

        make_tree();
        snprintf(p, sizeof(p), "%s/fifo", root);
        ASSERT_EQ(mkfifo(p, 0644), 0);
        ASSERT_EQ(read_full_file(p, &text, NULL), -EBADFD);
        ASSERT_EQ(read_full_file_in_root(root, "/fifo", &text, NULL), -EBADFD);
        tree_symlink("/fifo", "to-fifo");
        ASSERT_EQ(read_full_file_in_root(root, "/to-fifo", &text, NULL), -EBADFD);
        if (geteuid() == 0) {
                snprintf(p, sizeof(p), "%s/zero", root);
                ASSERT_EQ(mknod(p, S_IFCHR | 0644, makedev(1, 5)), 0);
                ASSERT_EQ(read_full_file_in_root(root, "/zero", &text, NULL), -EBADFD);
                ASSERT_EQ(open_regular_in_root(root, "/zero", 0, NULL), -EBADFD);
        }
        ASSERT_EQ(read_full_file_in_root(root, "/etc", &text, NULL), -EISDIR);
        ASSERT_EQ(open_regular_in_root(root, "/to-fifo", O_NOFOLLOW, NULL), -ELOOP);
        ASSERT_TRUE(text == NULL);
        ASSERT_STREQ(file_type_name(S_IFIFO), "a FIFO");
}

/* A directory made inside the tree is made there, whatever the links on the way say. */
TEST(mkdir_in_root_stays_inside) {
        char p[256];
        struct stat st;
        int fd;

        make_tree();
        tree_symlink("missing/../../../..", "up");               /* ".." after a missing component */
        snprintf(p, sizeof(p), "%s", outside);
        tree_symlink(p, "hostdir");                              /* an absolute host directory */
        fd = -1;
        ASSERT_TRUE(mkdir_in_root(root, "/up/x/y", 0700, &fd) < 0 || fd >= 0);
        if (fd >= 0)
                close(fd);
        /* A link to a host directory dangles inside the tree: nothing is made, here or there. */
        fd = -1;
        ASSERT_EQ(mkdir_in_root(root, "/hostdir/new/keys", 0700, &fd), -ENOENT);
        snprintf(p, sizeof(p), "%s/new", outside);
        ASSERT_TRUE(stat(p, &st) < 0 && errno == ENOENT);
        /* A link inside the tree is followed there. */
        tree_symlink("/etc", "inlink");
        ASSERT_EQ(mkdir_in_root(root, "/inlink/foyer/ssh", 0700, &fd), 0);
        ASSERT_TRUE(fd >= 0);
        close(fd);
        snprintf(p, sizeof(p), "%s/etc/foyer/ssh", root);
        ASSERT_EQ(stat(p, &st), 0);
        ASSERT_TRUE(S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700);
        snprintf(p, sizeof(p), "%s/x", outside);
        ASSERT_TRUE(stat(p, &st) < 0 && errno == ENOENT);
}

/* openat_beneath() takes no symlink at all, and no "..". */
TEST(openat_beneath_no_links) {
        _cleanup_close_ int root_fd = -EBADF;
        char p[128];
        int fd;

        make_tree();
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        snprintf(p, sizeof(p), "%s", outside);
        tree_symlink(p, "hostdir");
        tree_symlink("/etc/secret", "abs");
        ASSERT_TRUE(root_fd >= 0);
        fd = openat_beneath(root_fd, "etc/secret", 0);
        ASSERT_TRUE(fd >= 0);
        close(fd);
        ASSERT_EQ(openat_beneath(root_fd, "abs", 0), -ELOOP);
        ASSERT_EQ(openat_beneath(root_fd, "hostdir/secret", 0), -ELOOP);
        ASSERT_TRUE(openat_beneath(root_fd, "../outside/secret", 0) < 0);
}

/* A mount point's name that goes on past a missing directory may not climb with "..": below a
 * missing directory nothing can be checked (systemd's chase() refuses it the same way). */
TEST(chase_below_root_dotdot_after_missing) {
        _cleanup_free_ char *a = NULL, *b = NULL;
        char want[128];

        make_tree();
        ASSERT_EQ(chase_below_root("/nonexist/../../etc", root, &a), -EBADSLT);
        tree_symlink("nonexist/../../../etc", "foyer");
        ASSERT_EQ(chase_below_root("/foyer/ssh", root, &a), -EBADSLT);
        ASSERT_EQ(chase_below_root("/nonexist/x/y", root, &b), 0);
        snprintf(want, sizeof(want), "%s/nonexist/x/y", root);
        ASSERT_STREQ(b, want);
}

static void __attribute__((destructor)) remove_tree(void) {
        char cmd[128];

        if (!tree_made)
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", base);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", base);
}

TEST_MAIN()
