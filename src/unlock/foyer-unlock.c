/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-unlock: what an SSH login into the initrd runs (dropbear's forced command, FOYER_UNLOCK_PATH).
 *
 * It answers the passphrase questions the volumes ask (systemd's ask-password files in
 * /run/systemd/ask-password) with systemd's own agent, "systemd-tty-ask-password-agent --query", as
 * they come, until the unlocking is over: cryptsetup.target (every volume of the initrd tried) or
 * initrd-root-fs.target (the root is mounted) is active. A login before the first question waits for
 * it; a wrong passphrase is asked again, as long as cryptsetup asks.
 *
 * On a terminal (ssh's default for a login) the agent prompts there, without echo. Without one
 * ("echo PASSPHRASE | ssh -T root@HOST") it reads one line from the input for each question, and
 * stops, with exit status 1, when the input ends while a question is still open.
 *
 * Arguments are ignored: dropbear runs the forced command through root's login shell, which in an
 * image without shells (foyer build --no-shell) is this program itself ("foyer-unlock -c CMD"), so
 * nothing a client sends ever runs. In an image with a shell, once the unlocking is over, it runs what
 * the client asked for ($SSH_ORIGINAL_COMMAND, with /bin/sh -c), or a login shell; never while a
 * question is still open (the input ended first, the agent failed, or a new question came): the
 * login is for unlocking, and a command or a shell would run in an initrd whose volumes wait for
 * their passphrase, so it is refused, saying so, with exit status 1. */

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "foyer-contract.h"
#include "macro.h"
#include "process-util.h"

#define ASK_DIR "/run/systemd/ask-password"
#define AGENT "/usr/bin/systemd-tty-ask-password-agent"
#define SYSTEMCTL "/usr/bin/systemctl"
#define SHELL "/bin/sh"

/* How many questions are open: ask.* files (systemd's ask-password protocol). */
static int pending_questions(void) {
        DIR *d = opendir(ASK_DIR);
        struct dirent *de;
        int n = 0;

        if (!d)
                return 0;
        while ((de = readdir(d)))
                if (startswith(de->d_name, "ask."))
                        n++;
        closedir(d);
        return n;
}

/* Whether the unlocking is over: every volume tried, or the root already mounted. */
static bool unlocking_done(void) {
        char *argv[] = { (char *) "systemctl", (char *) "is-active", (char *) "--quiet",
                         (char *) "cryptsetup.target", (char *) "initrd-root-fs.target", NULL };
        SpawnOptions o = { .stderr_to_null = true };
        int status;

        /* $FOYER_UNLOCK_SYSTEMCTL: a stand-in, for the test (test-foyer-unlock.sh). */
        if (spawn_and_wait(secure_getenv("FOYER_UNLOCK_SYSTEMCTL") ?: SYSTEMCTL, argv, &o, &status) < 0)
                return false;
        return wait_status_ok(status);
}

/* Input that is not a terminal and has ended (the client sent all it had, or ssh -n): no further
 * answers, where the agent would send an empty one. */
static bool input_ended(void) {
        struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
        struct stat st;
        int avail = 0;

        if (isatty(STDIN_FILENO))
                return false;
        if (fstat(STDIN_FILENO, &st) < 0)
                return true;
        if (S_ISREG(st.st_mode))
                return lseek(STDIN_FILENO, 0, SEEK_CUR) >= st.st_size;
        if (S_ISCHR(st.st_mode))
                return true;    /* /dev/null, and no device but a terminal gives passphrases */
        /* A pipe or a socket (dropbear's): ended when it is readable, or hung up, with nothing to read. */
        if (poll(&p, 1, 0) <= 0)
                return false;   /* nothing yet: the agent waits for it */
        if (p.revents & POLLNVAL)
                return true;
        if (ioctl(STDIN_FILENO, FIONREAD, &avail) < 0)
                return false;
        return avail == 0;
}

/* Waits until something changes in ASK_DIR, or a second passes (the targets have no file to watch). */
static void wait_for_change(int inotify_fd) {
        struct pollfd p = { .fd = inotify_fd, .events = POLLIN };
        char buf[4096];

        if (inotify_fd < 0) {
                (void) usleep(500 * 1000);
                return;
        }
        /* The events only wake us up: what changed is read again from ASK_DIR. */
        if (poll(&p, 1, 1000) > 0 && read(inotify_fd, buf, sizeof(buf)) < 0)
                return;
}

static int answer(void) {
        char *argv[] = { (char *) "systemd-tty-ask-password-agent", (char *) "--query", NULL };
        int status, r;

        r = spawn_and_wait(AGENT, argv, NULL, &status);
        if (r < 0) {
                fprintf(stderr, "foyer-unlock: cannot run %s: %s\n", AGENT, strerror(-r));
                return r;
        }
        return 0;
}

static int unlock(void) {
        _cleanup_close_ int inotify_fd = -EBADF;
        bool told = false;

        inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (inotify_fd >= 0 && inotify_add_watch(inotify_fd, ASK_DIR, IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE) < 0) {
                (void) mkdir_p(ASK_DIR, 0755);
                if (inotify_add_watch(inotify_fd, ASK_DIR, IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE) < 0) {
                        close(inotify_fd);
                        inotify_fd = -EBADF;
                }
        }

        for (;;) {
                if (pending_questions() > 0) {
                        if (input_ended()) {
                                fprintf(stderr, "foyer-unlock: the input ended with a passphrase still asked for.\n");
                                return 1;
                        }
                        if (answer() < 0)
                                return 1;
                        /* Until the next question, or the end: cryptsetup is trying the answer. */
                        fprintf(stderr, "foyer-unlock: answered; waiting for the volume...\n");
                        told = true;
                        /* Give cryptsetup the time to take the answer and, if it was wrong, ask again. */
                        wait_for_change(inotify_fd);
                        continue;
                }
                if (unlocking_done())
                        break;
                if (!told) {
                        fprintf(stderr, "foyer-unlock: waiting for a passphrase question...\n");
                        told = true;
                }
                wait_for_change(inotify_fd);
        }
        fprintf(stderr, "foyer-unlock: no passphrase is asked for any more; the boot goes on.\n");
        return 0;
}

int main(int argc, char *argv[]) {
        const char *cmd;
        int r;

        (void) argc;
        (void) argv;

        r = unlock();
        if (access(FOYER_NO_SHELL_MARKER, F_OK) >= 0 || access(SHELL, X_OK) < 0)
                return r;

        /* An image with a shell: what the client asked for, or an interactive shell, but only once
         * every question is answered. unlock() returns 0 only then; a question may also have come
         * since it looked. */
        cmd = getenv("SSH_ORIGINAL_COMMAND");
        if (isempty(cmd) && !isatty(STDIN_FILENO))
                return r;       /* nothing to run: the unlocking was all */
        if (r != 0 || pending_questions() > 0) {
                fprintf(stderr, "foyer-unlock: a passphrase is still asked for: not running %s. Send the passphrase "
                        "first (echo PASSPHRASE | ssh -T root@HOST).\n", isempty(cmd) ? "a shell" : "the command");
                return r ?: 1;
        }
        if (!isempty(cmd))
                execl(SHELL, "sh", "-c", cmd, (char *) NULL);
        else {
                fprintf(stderr, "foyer-unlock: a shell in the initrd; it ends with the switch to the real root.\n");
                execl(SHELL, "-sh", (char *) NULL);
        }
        fprintf(stderr, "foyer-unlock: cannot run %s: %m\n", SHELL);
        return 1;
}
