/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Remote unlocking over SSH (SshUnlock=, --ssh-unlock FILE): dropbear and what a login runs. Without
 * the setting nothing of this goes into the image. The network it needs is plan-network.c's, which
 * puts it in for dropbear (so Network=no and SshUnlock= together are refused here).
 *
 * dropbear (Debian's dropbear-bin) rather than OpenSSH: it is one program of a few hundred KiB with
 * no privilege separation user, no configuration file and no PAM, it is what Debian's
 * dropbear-initramfs and mkinitcpio's hooks put into their initrds, and it takes a forced command on
 * its command line (-c), which is how --no-shell keeps every login to the passphrase agent.
 *
 * The image gets:
 *   - dropbear, its host keys (FOYER_SSH_HOST_KEY_ED25519 and _ECDSA, 0600 and secret, so the image
 *     is written 0600) and FILE as root's authorized_keys (FOYER_SSH_AUTHORIZED_KEYS, 0600);
 *   - foyer-unlock (FOYER_UNLOCK_PATH), what every login runs, and foyer-network-cleanup;
 *   - /etc/shells, which dropbear checks root's shell against; with --no-shell root's shell is
 *     foyer-unlock itself (plan-base.c), since dropbear runs even a forced command through it.
 * foyer-network-generator writes the units that start all this (and leaves them out with
 * rd.neednet=0).
 *
 * The host keys are made once per system by the build host's dropbearkey, in the tree's
 * FOYER_SSH_HOST_KEY_DIR (with --root, inside that tree) or SshHostKeys=, and reused by every later
 * build: images stay byte for byte reproducible, and clients' known_hosts stay valid across kernel
 * updates. Each key gets a NAME.pub beside it (for known_hosts). */

#include <assert.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "foyer-contract.h"
#include "log.h"
#include "plan.h"
#include "plan-util.h"
#include "process-util.h"
#include "util.h"

static int add_authorized_keys(Manifest *m, const char *file) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        struct stat st;
        int r;

        if (stat(file, &st) < 0)
                return log_error_errno(errno, "SshUnlock= (--ssh-unlock) %s: %m", file);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "SshUnlock= (--ssh-unlock) %s is not a regular file.", file);
        r = read_full_file(file, &text, &size);
        if (r < 0)
                return log_error_errno(r, "SshUnlock= (--ssh-unlock) %s: %m", file);
        if (!strstr(text, "ssh-") && !strstr(text, "ecdsa-"))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "SshUnlock= (--ssh-unlock) %s holds no public key (an authorized_keys file: "
                                       "\"ssh-ed25519 AAAA...\" lines).", file);
        r = manifest_add_directory(m, "/root/.ssh", 0700, "root's SSH directory (--ssh-unlock)");
        if (r < 0 && r != -EEXIST)
                return log_error_errno(r, "Failed to add /root/.ssh: %m");
        r = manifest_add_data(m, FOYER_SSH_AUTHORIZED_KEYS, 0600, text, size, "the keys that may log in (--ssh-unlock)");
        if (r < 0)
                return log_error_errno(r, "Failed to add %s: %m", FOYER_SSH_AUTHORIZED_KEYS);
        return 0;
}

/* Runs the build host's dropbearkey with argv; its output goes to stdout_fd (stderr if < 0). */
static int run_dropbearkey(char **argv, int stdout_fd) {
        _cleanup_free_ char *exe = NULL;
        SpawnOptions o = { .stdout_fd = stdout_fd >= 0 ? stdout_fd : STDERR_FILENO };
        int r, status;

        r = find_executable("dropbearkey", &exe);
        if (r < 0)
                return log_error_errno(r, "dropbearkey is not installed (Debian package dropbear-bin): it makes the "
                                       "image's SSH host keys.");
        r = spawn_and_wait(exe, argv, &o, &status);
        if (r < 0)
                return log_error_errno(r, "Failed to run %s: %m", exe);
        if (!wait_status_ok(status))
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "%s %s %s %s failed.", exe, argv[1], argv[2], argv[3]);
        return 0;
}

/* The key directory is written through a descriptor and nothing but names in it: a --root tree is
 * not trusted, and a symlink there (the directory on the way, a key, a NAME.pub or a temporary name)
 * must neither take the build to a file of the build host nor bring one's bytes into the image.
 * dropbearkey, which wants a path, gets one through the descriptor (/proc/self/fd/N/NAME), which
 * names the directory already resolved. */
typedef struct KeyDir {
        int fd;                 /* O_PATH */
        char *name;             /* for messages: ROOT/etc/foyer/ssh or SshHostKeys= */
} KeyDir;

static void key_dir_done(KeyDir *d) {
        if (d->fd >= 0)
                close(d->fd);
        free(d->name);
}

/* "/proc/self/fd/N/NAME", N a copy of the directory's descriptor that a child inherits. */
static int key_dir_child_path(const KeyDir *d, const char *name, int *ret_fd, char **ret) {
        char buf[64];
        int fd = fcntl(d->fd, F_DUPFD, 3);      /* without FD_CLOEXEC */

        if (fd < 0)
                return negative_errno();
        snprintf(buf, sizeof(buf), "/proc/self/fd/%i/", fd);
        *ret = strjoin(buf, name);
        if (!*ret) {
                close(fd);
                return -ENOMEM;
        }
        *ret_fd = fd;
        return 0;
}

/* Writes NAME.pub: the key's public line, for known_hosts and ssh-keygen -lf. key_fd holds the key. */
static int write_public_key(const KeyDir *d, const char *name, int key_fd) {
        _cleanup_close_ int out = -EBADF, child_fd = -EBADF, pub_fd = -EBADF;
        _cleanup_free_ char *text = NULL, *line = NULL, *pub = strjoin(name, ".pub"), *tmp = strjoin(".", name, ".pub.new");
        char key_path[64];
        const char *p;
        int r;

        if (!pub || !tmp)
                return log_oom();
        child_fd = fcntl(key_fd, F_DUPFD, 3);
        if (child_fd < 0)
                return log_error_errno(errno, "Failed to duplicate a descriptor: %m");
        snprintf(key_path, sizeof(key_path), "/proc/self/fd/%i", child_fd);
        char *argv[] = { (char *) "dropbearkey", (char *) "-y", (char *) "-f", key_path, NULL };

        out = memfd_create("dropbearkey-y", MFD_CLOEXEC);
        if (out < 0)
                return log_error_errno(errno, "Failed to create a memory file: %m");
        r = run_dropbearkey(argv, out);
        if (r < 0)
                return r;
        r = read_full_fd_from_start(out, &text, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to read dropbearkey's output: %m");
        p = strstr(text, "\nssh-") ?: strstr(text, "\necdsa-");
        if (!p)
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "dropbearkey -y -f %s/%s printed no public key.", d->name, name);
        line = strndup(p + 1, strcspn(p + 1, "\n"));
        if (!line || strextend_with_separator(&line, "", "\n") < 0)
                return log_oom();

        /* A new file under a temporary name (whatever was there, a symlink included, is removed, not
         * followed), renamed over NAME.pub. */
        if (unlinkat(d->fd, tmp, 0) < 0 && errno != ENOENT)
                return log_error_errno(errno, "Failed to remove %s/%s: %m", d->name, tmp);
        pub_fd = openat(d->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (pub_fd < 0)
                return log_error_errno(errno, "Failed to create %s/%s: %m", d->name, tmp);
        r = write_all(pub_fd, line, strlen(line));
        if (r >= 0 && fchmod(pub_fd, 0644) < 0)
                r = negative_errno();
        if (r >= 0 && renameat(d->fd, tmp, d->fd, pub) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlinkat(d->fd, tmp, 0);
                return log_error_errno(r, "Failed to write %s/%s: %m", d->name, pub);
        }
        p = strstr(text, "Fingerprint: ");
        log_info("SSH host key %s/%s: %.*s", d->name, name, p ? (int) strcspn(p + 13, "\n") : 0, p ? p + 13 : "");
        return 0;
}

/* Opens the key name in the directory for reading: a regular file that only its owner may read,
 * never through a symlink. -ENOENT when there is none. */
static int open_host_key(const KeyDir *d, const char *name) {
        _cleanup_close_ int path_fd = -EBADF;
        struct stat st;

        path_fd = openat(d->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (path_fd < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                return log_error_errno(errno, "Failed to open SSH host key %s/%s: %m", d->name, name);
        }
        if (fstat(path_fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat SSH host key %s/%s: %m", d->name, name);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "SSH host key %s/%s is %s, not a regular file, refusing "
                                       "(a key is read from a regular file only): remove it to have a new one made.",
                                       d->name, name, file_type_name(st.st_mode));
        if (st.st_mode & 0077)
                return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                       "SSH host key %s/%s may be read by others (mode %04o), refusing: "
                                       "chmod 600 it, or remove it to have a new one made.",
                                       d->name, name, (unsigned) (st.st_mode & 07777));
        return fd_reopen_regular(path_fd, NULL);
}

/* The host key name of type in the directory: made now if it is not there. Returns an open
 * descriptor of it. */
static int ensure_host_key(const KeyDir *d, const char *type, const char *name) {
        _cleanup_free_ char *tmp = strjoin(".", name, ".new"), *child_path = NULL;
        _cleanup_close_ int fd = -EBADF, child_fd = -EBADF;
        int r;

        if (!tmp)
                return log_oom();
        fd = open_host_key(d, name);
        if (fd >= 0) {
                log_debug("Reusing the SSH host key %s/%s.", d->name, name);
                return TAKE_FD(fd);
        }
        if (fd != -ENOENT)
                return fd;

        if (unlinkat(d->fd, tmp, 0) < 0 && errno != ENOENT)
                return log_error_errno(errno, "Failed to remove %s/%s: %m", d->name, tmp);
        r = key_dir_child_path(d, tmp, &child_fd, &child_path);
        if (r < 0)
                return log_error_errno(r, "Failed to prepare %s/%s: %m", d->name, tmp);
        char *argv[] = { (char *) "dropbearkey", (char *) "-t", (char *) type, (char *) "-f", child_path, NULL };
        log_info("Making the SSH host key %s/%s (once: later builds reuse it).", d->name, name);
        r = run_dropbearkey(argv, -1);
        if (r >= 0) {
                /* What dropbearkey made, checked as a key found there would be, then renamed into place. */
                _cleanup_close_ int path_fd = openat(d->fd, tmp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;

                if (path_fd < 0 || fstat(path_fd, &st) < 0)
                        r = negative_errno();
                else if (!S_ISREG(st.st_mode))
                        r = -EBADFD;
                else {
                        fd = fd_reopen(path_fd, O_RDONLY);
                        if (fd < 0)
                                r = fd;
                        else if (fchmod(fd, 0600) < 0 || renameat(d->fd, tmp, d->fd, name) < 0)
                                r = negative_errno();
                }
                if (r < 0)
                        log_error_errno(r, "Failed to install %s/%s: %m", d->name, name);
        }
        if (r < 0) {
                (void) unlinkat(d->fd, tmp, 0);
                return r;
        }
        r = write_public_key(d, name, fd);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}

/* The key directory: SshHostKeys= (a directory of the build host the administrator named), or
 * FOYER_SSH_HOST_KEY_DIR inside the tree, made there if missing with every component resolved
 * inside the tree. */
static int open_key_dir(Manifest *m, const BuildConfig *c, KeyDir *ret) {
        int r;

        if (c->ssh_host_keys) {
                r = mkdir_p(c->ssh_host_keys, 0700);
                if (r < 0)
                        return log_error_errno(r, "Failed to create SshHostKeys= %s: %m", c->ssh_host_keys);
                ret->fd = open(c->ssh_host_keys, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (ret->fd < 0)
                        return log_error_errno(errno, "Failed to open SshHostKeys= %s: %m", c->ssh_host_keys);
                ret->name = strdup(c->ssh_host_keys);
        } else {
                ret->name = path_prefix_root(m->root, FOYER_SSH_HOST_KEY_DIR);
                if (!ret->name)
                        return log_oom();
                r = mkdir_in_root(m->root, FOYER_SSH_HOST_KEY_DIR, 0700, &ret->fd);
                if (r < 0)
                        return log_error_errno(r, "Failed to create %s inside %s: %m", FOYER_SSH_HOST_KEY_DIR, m->root);
        }
        return ret->name ? 0 : log_oom();
}

static int add_host_keys(Manifest *m, const BuildConfig *c) {
        static const struct {
                const char *type, *image_path;
        } keys[] = {
                { "ed25519", FOYER_SSH_HOST_KEY_ED25519 },
                { "ecdsa",   FOYER_SSH_HOST_KEY_ECDSA },
        };
        _cleanup_(key_dir_done) KeyDir dir = { .fd = -EBADF };
        int r;

        r = open_key_dir(m, c, &dir);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_free_ char *data = NULL;
                _cleanup_close_ int fd = -EBADF;
                size_t size;
                Entry *e;

                /* The bytes read now go into the image: nothing opens the key by name again. */
                fd = ensure_host_key(&dir, keys[i].type, path_basename(keys[i].image_path));
                if (fd < 0)
                        return fd;
                r = read_full_fd(fd, &data, &size);
                if (r < 0)
                        return log_error_errno(r, "Failed to read SSH host key %s/%s: %m", dir.name,
                                               path_basename(keys[i].image_path));
                r = manifest_add_data(m, keys[i].image_path, 0600, data, size, "SSH host key (--ssh-unlock)");
                explicit_bzero(data, size);
                if (r < 0)
                        return log_error_errno(r, "Failed to add %s: %m", keys[i].image_path);
                e = manifest_find(m, keys[i].image_path);
                manifest_mark_secret(e);
                e->mode = 0600;
        }
        return 0;
}

/* A clear error for what every SSH image needs from the tree. */
static int require(Manifest *m, const char *path, const char *package) {
        _cleanup_free_ char *p = NULL;

        if (path_in_root(m->root, path, false, &p) >= 0 && access(p, X_OK) >= 0)
                return 0;
        return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "SshUnlock= (--ssh-unlock) needs %s%s, which is not there "
                               "(Debian package %s).", streq(m->root, "/") ? "" : m->root, path, package);
}

int plan_ssh(Manifest *m, const BuildConfig *c) {
        int r;

        assert(m);
        assert(c);

        if (!c->ssh_unlock) {
                log_debug("No SshUnlock=: no SSH server in the image.");
                return 0;
        }
        if (c->network == NETWORK_NO)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "SshUnlock= (--ssh-unlock) needs the network, which "
                                       "Network=no (--network=no) leaves out of the image.");
        r = add_authorized_keys(m, c->ssh_unlock);
        if (r < 0)
                return r;
        r = require(m, FOYER_SSH_DROPBEAR, "dropbear-bin");
        if (r < 0)
                return r;
        r = require(m, FOYER_NETWORKD, "systemd, or systemd-networkd from Debian 13 on");
        if (r < 0)
                return r;
        r = require(m, "/usr/lib/systemd/systemd-network-generator", "systemd, or systemd-networkd from Debian 13 on");
        if (r < 0)
                return r;
        r = plan_add_item(m, FOYER_SSH_DROPBEAR, NEED_REQUIRED, "SSH server (--ssh-unlock)");
        if (r < 0)
                return r;
        r = add_host_keys(m, c);
        if (r < 0)
                return r;
        r = plan_add_helper(m, FOYER_UNLOCK_PATH, "SSH unlocking (--ssh-unlock)", NULL);
        if (r < 0)
                return r;
        r = plan_add_helper(m, FOYER_NETWORK_CLEANUP_PATH, "SSH unlocking (--ssh-unlock)", NULL);
        if (r < 0)
                return r;
        /* dropbear refuses a login whose shell /etc/shells does not list. */
        return plan_add_text(m, "/etc/shells", 0644, c->no_shell ? FOYER_UNLOCK_PATH "\n" : "/bin/sh\n/usr/bin/sh\n",
                             "login shells dropbear accepts (--ssh-unlock)");
}
