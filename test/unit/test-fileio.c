/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <string.h>
#include <sys/mman.h>
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

TEST_MAIN()
