/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* What foyer prints on stderr besides its messages: a warning is marked "warning:", and the
 * progress lines of a build (progress.h) show on a terminal or with -v only, so that a build's
 * stderr in a file or a pipe is the same as without them. stderr is pointed at a pipe or at a
 * pseudo-terminal and read back. */

#include <fcntl.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include "log.h"
#include "progress.h"
#include "tests.h"

/* Runs f with stderr on a new pipe (tty false) or pseudo-terminal (tty true); returns what it wrote. */
static char *capture(bool tty, void (*f)(void)) {
        static char buf[4096];
        int saved = dup(STDERR_FILENO), rfd, wfd;
        size_t len = 0;
        ssize_t n;

        ASSERT_TRUE(saved >= 0);
        /* The messages name the program as foyer's do. */
        program_invocation_short_name = (char *) "foyer";
        if (tty) {
                struct termios t;

                rfd = posix_openpt(O_RDWR | O_NOCTTY);
                ASSERT_TRUE(rfd >= 0);
                ASSERT_TRUE(grantpt(rfd) == 0 && unlockpt(rfd) == 0);
                wfd = open(ptsname(rfd), O_RDWR | O_NOCTTY);
                ASSERT_TRUE(wfd >= 0);
                ASSERT_TRUE(tcgetattr(wfd, &t) == 0);
                cfmakeraw(&t);          /* "\n" as written, not "\r\n" */
                ASSERT_TRUE(tcsetattr(wfd, TCSANOW, &t) == 0);
        } else {
                int p[2];

                ASSERT_TRUE(pipe(p) == 0);
                rfd = p[0];
                wfd = p[1];
        }
        ASSERT_TRUE(dup2(wfd, STDERR_FILENO) == STDERR_FILENO);
        close(wfd);
        f();
        fflush(stderr);
        ASSERT_TRUE(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
        close(saved);

        /* A pseudo-terminal's master reads EIO once the slave is closed and drained; a pipe EOF. Read
         * until then: the terminal may hand the lines over in several pieces (one read saw only the
         * first line on a loaded machine). */
        for (;;) {
                n = read(rfd, buf + len, sizeof(buf) - 1 - len);
                if (n <= 0 || (len += (size_t) n) == sizeof(buf) - 1)
                        break;
        }
        close(rfd);
        buf[len] = 0;
        return buf;
}

static void warn(void) {
        log_warning("the image holds key files.");
        log_info("Wrote the image.");
        log_error("Failed.");
}

TEST(warning_marked) {
        log_set_target(LOG_TARGET_CONSOLE);
        log_set_max_level(LOG_INFO);
        ASSERT_STREQ(capture(false, warn), "foyer: warning: the image holds key files.\n"
                                           "foyer: Wrote the image.\n"
                                           "foyer: Failed.\n");
}

static void phases(void) {
        progress_begin("resolving kernel modules");
        progress_end();
        progress_begin("compressing the image (zstd)");
        progress_end();
}

TEST(progress_not_on_a_pipe) {
        log_set_max_level(LOG_INFO);
        progress_set_mode(-1);
        ASSERT_TRUE(!progress_enabled());
        ASSERT_STREQ(capture(false, phases), "");
}

TEST(progress_on_a_terminal) {
        log_set_max_level(LOG_INFO);
        progress_set_mode(-1);
        ASSERT_STREQ(capture(true, phases), "foyer: resolving kernel modules...\n"
                                            "foyer: compressing the image (zstd)...\n");
}

TEST(progress_with_verbose) {
        const char *out;

        log_set_max_level(LOG_DEBUG);
        progress_set_mode(-1);
        out = capture(false, phases);
        ASSERT_TRUE(strstr(out, "foyer: resolving kernel modules...\nfoyer: resolving kernel modules: ") == out);
        ASSERT_TRUE(strstr(out, " s\nfoyer: compressing the image (zstd)...\nfoyer: compressing the image (zstd): "));
        ASSERT_TRUE(endswith(out, " s\n"));
        log_set_max_level(LOG_INFO);
}

TEST(progress_forced_off) {
        log_set_max_level(LOG_DEBUG);
        progress_set_mode(0);
        ASSERT_STREQ(capture(true, phases), "");
        progress_set_mode(-1);
        log_set_max_level(LOG_INFO);
}

TEST_MAIN();
