/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "foyer-config.h"
#include "log.h"
#include "foyer-contract.h"
#include "preview.h"
#include "preview-image.h"
#include "process-util.h"
#include "util.h"

/* The generators' three output directories, as PID 1 passes them, below the temporary root. */
static const char *const output_dirs[] = {
        "/run/systemd/generator",
        "/run/systemd/generator.early",
        "/run/systemd/generator.late",
};

typedef struct PreviewArgs {
        const char *cmdline;    /* NULL: /proc/cmdline */
        const char *crypttab;   /* the image's /etc/crypttab (build --crypttab); NULL: none */
        const char *fstab;      /* the real root's /etc/fstab; NULL: none */
        const char *image;      /* a built image or UKI to describe; NULL: the host's generators alone */
} PreviewArgs;

static void help_preview(void) {
        printf("%s preview [OPTIONS...]\n\n"
               "Run foyer's generators as the initrd would at boot and print the units they\n"
               "write, without booting: what a kernel command line turns into.\n\n"
               "     --image=IMAGE          Describe this image (or UKI): its /etc/cmdline.d,\n"
               "                            crypttab and mdadm.conf are read, only the\n"
               "                            generators it holds run, SSH units only if it\n"
               "                            holds dropbear (built for remote unlocking)\n"
               "     --cmdline=ARGS         Kernel command line (default: a UKI's .cmdline, else\n"
               "                            /proc/cmdline)\n"
               "     --crypttab=FILE        The image's /etc/crypttab, as given to foyer build\n"
               "                            --crypttab (default: the image's, else none)\n"
               "     --fstab=FILE           The real root's /etc/fstab, read once /sysroot is\n"
               "                            mounted (default: none)\n"
               "  -v --verbose              Let the generators log debug messages\n"
               "  -h --help                 Show this help\n\n"
               "Generators come from $FOYER_GENERATOR_DIR (default: " FOYER_HOST_GENERATOR_DIR ").\n"
               "Without --image no SSH or network units are written: the host's dropbear says\n"
               "nothing about an image.\n"
               "Units go to stdout, the generators' messages to stderr.\n",
               program_invocation_short_name);
}

/* The temporary tree the generators write into. It is registered for removal on SIGINT, SIGTERM
 * and SIGHUP (see cleanup_register()), with the generator running at the time as its child, so an
 * interrupted preview leaves nothing in $TMPDIR either; temp_tree_done() removes it on every
 * return of verb_preview(), errors included. */
typedef struct TempTree {
        char *path;
        int slot;
} TempTree;

#define TEMP_TREE_NULL { .slot = -1 }

static void temp_tree_done(TempTree *t) {
        if (!t->path)
                return;
        rm_rf(t->path);
        cleanup_unregister(t->slot);
        t->slot = -1;
        free(t->path);
        t->path = NULL;
}

static int make_tree(TempTree *ret) {
        const char *tmpdir = tmp_dir();
        _cleanup_(temp_tree_done) TempTree t = TEMP_TREE_NULL;
        _cleanup_free_ char *root = NULL;

        assert(ret);

        root = strjoin(tmpdir, "/foyer-preview.XXXXXX");
        if (!root)
                return log_oom();
        if (!mkdtemp(root))
                return log_error_errno(errno, "Failed to create a temporary directory in %s: %m", tmpdir);
        t.path = TAKE_PTR(root);
        t.slot = cleanup_register(t.path, /* tree= */ true);
        if (t.slot < 0)
                return log_error_errno(t.slot, "Failed to register %s for removal: %m", t.path);

        FOREACH_STRING(sub, "/run", "/run/systemd", output_dirs[0], output_dirs[1], output_dirs[2]) {
                _cleanup_free_ char *d = strjoin(t.path, sub);

                if (!d)
                        return log_oom();
                if (mkdir(d, 0755) < 0)
                        return log_error_errno(errno, "Failed to create %s: %m", d);
        }
        *ret = t;
        t = (TempTree) TEMP_TREE_NULL;
        return 0;
}

static int set_env(const char *name, const char *value) {
        assert(name);

        if ((value ? setenv(name, value, 1) : unsetenv(name)) < 0)
                return log_error_errno(errno, "Failed to set $%s: %m", name);
        return 0;
}

static int set_env_below(const char *root, const char *name, const char *path) {
        _cleanup_free_ char *p = strjoin(root, path);

        if (!p)
                return log_oom();
        return set_env(name, p);
}

/* The generators see what they would see in the initrd: the given command line, the image's
 * crypttab and fstab (none unless given) and the real root's fstab. Everything they might read or
 * create on the host instead is pointed into the temporary tree: the host's /etc/cmdline.d (not
 * the image's), the host's crypttab and fstab (they describe the real root, not the initrd), and
 * the mount points under /run/systemd/cryptsetup that the crypt generator creates, and the image's
 * mdadm.conf (FOYER_MDADM_IMAGE_CONF, which the md generator copies). With --image, the tree holds
 * the image's copies of those (preview_image_read()), its systemd-version and, if it has them,
 * markers for dropbear and --no-shell. Without, FOYER_SSH_DROPBEAR still points into the empty
 * tree: the host's dropbear says nothing about what an image holds; so does FOYER_SSH_HOST_KEY_DIR,
 * where empty stand-ins for the image's host keys are (the keys themselves are never read). */
static int setup_environment(const PreviewArgs *a, const PreviewImage *img, const char *root) {
        int r;

        assert(a);
        assert(root);

        r = set_env("SYSTEMD_IN_INITRD", "1");
        if (r >= 0)
                r = set_env("SYSTEMD_PROC_CMDLINE", a->cmdline);
        if (r >= 0)
                r = set_env("SYSTEMD_EFI_OPTIONS", NULL);
        /* A build host in a container would make the generators stand down; the initrd is not in one. */
        if (r >= 0)
                r = set_env("container", NULL);
        if (r >= 0)
                r = set_env("SYSTEMD_VIRTUALIZATION", NULL);
        /* Their messages go to our stderr, also when foyer itself runs from a unit. */
        if (r >= 0)
                r = set_env("SYSTEMD_LOG_TARGET", "console");
        if (r >= 0)
                r = a->crypttab ? set_env("SYSTEMD_CRYPTTAB", a->crypttab)
                                : set_env_below(root, "SYSTEMD_CRYPTTAB", "/etc/crypttab");
        if (r >= 0)
                r = set_env_below(root, "SYSTEMD_FSTAB", "/etc/fstab");
        if (r >= 0)
                r = a->fstab ? set_env("SYSTEMD_SYSROOT_FSTAB", a->fstab)
                             : set_env_below(root, "SYSTEMD_SYSROOT_FSTAB", "/sysroot/etc/fstab");
        if (r >= 0)
                r = set_env_below(root, "FOYER_CMDLINE_DIR", "/etc/cmdline.d");
        if (r >= 0)
                r = set_env_below(root, "RUNTIME_DIRECTORY", "/run/systemd/cryptsetup");
        /* foyer-md-generator copies the image's mdadm.conf, which is not built here: none. */
        if (r >= 0)
                r = set_env_below(root, "FOYER_MDADM_IMAGE_CONF", FOYER_MDADM_IMAGE_CONF);
        if (r >= 0)
                r = set_env_below(root, "FOYER_SSH_DROPBEAR", FOYER_SSH_DROPBEAR);
        if (r >= 0)
                r = set_env_below(root, "FOYER_SSH_HOST_KEY_DIR", FOYER_SSH_HOST_KEY_DIR);
        if (r >= 0 && img)
                r = set_env_below(root, "FOYER_SYSTEMD_VERSION_FILE", FOYER_SYSTEMD_VERSION_PATH);
        if (r >= 0 && img)
                r = set_env_below(root, "FOYER_NO_SHELL_MARKER", FOYER_NO_SHELL_MARKER);
        return r;
}

/* An empty file at path below root: what a generator checks with access() only. */
static int make_marker(const char *root, const char *path, mode_t mode) {
        _cleanup_free_ char *p = strjoin(root, path);
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!p)
                return log_oom();
        r = mkdir_parents(p, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create the directories of %s: %m", p);
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return log_error_errno(errno, "Failed to create %s: %m", p);
        /* The mode is exactly this, whatever the umask: X_OK needs the execute bit. */
        if (fchmod(fd, mode) < 0)
                return log_error_errno(errno, "Failed to set the mode of %s: %m", p);
        return 0;
}

/* The tree's copy of what the generators read from the image. */
static int setup_image(const PreviewArgs *a, const char *root, PreviewImage *ret) {
        int r;

        r = preview_image_read(a->image, root, /* take_crypttab= */ !a->crypttab, ret);
        if (r < 0)
                return r;
        if (ret->dropbear) {
                r = make_marker(root, FOYER_SSH_DROPBEAR, 0755);
                if (r < 0)
                        return r;
        }
        if (ret->no_shell) {
                r = make_marker(root, FOYER_NO_SHELL_MARKER, 0644);
                if (r < 0)
                        return r;
        }
        if (ret->host_key_ed25519) {
                r = make_marker(root, FOYER_SSH_HOST_KEY_ED25519, 0600);
                if (r < 0)
                        return r;
        }
        if (ret->host_key_ecdsa) {
                r = make_marker(root, FOYER_SSH_HOST_KEY_ECDSA, 0600);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Only the generators the image holds run: an image built by another foyer may lack one this host
 * has. One it names that the host lacks cannot run here; say so. */
static int filter_generators(char ***generators, const PreviewImage *img, const char *dir, const char *image) {
        _cleanup_strv_free_ char **kept = NULL;
        int r;

        STRV_FOREACH(g, *generators)
                if (strv_contains(img->generators, path_basename(*g))) {
                        r = strv_extend(&kept, *g);
                        if (r < 0)
                                return log_oom();
                } else
                        log_debug("Skipping %s, %s does not hold it.", *g, image);
        STRV_FOREACH(n, img->generators) {
                bool found = false;

                STRV_FOREACH(g, kept)
                        found = found || streq(path_basename(*g), *n);
                if (!found)
                        log_warning("%s holds %s, which is not in %s: not run.", image, *n, dir);
        }
        if (strv_isempty(kept))
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "None of the generators of %s is in %s; set FOYER_GENERATOR_DIR.",
                                       image, dir);
        strv_free(*generators);
        *generators = TAKE_PTR(kept);
        return 0;
}

/* The executables foyer build would put in the image (see add_generators() in plan.c). */
static int list_generators(const char *dir, char ***ret) {
        _cleanup_strv_free_ char **names = NULL, **paths = NULL;
        int r;

        assert(dir);
        assert(ret);

        r = dir_list_suffix(dir, NULL, &names);
        if (r < 0)
                return log_error_errno(r, "Failed to list generators in %s: %m", dir);
        STRV_FOREACH(g, names) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                /* The sanitizer builds of the generators sit beside them in a build tree. */
                if (!startswith(*g, "foyer-") || endswith(*g, "-asan"))
                        continue;
                p = strjoin(dir, "/", *g);
                if (!p)
                        return log_oom();
                if (stat(p, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                        continue;
                r = strv_consume(&paths, TAKE_PTR(p));
                if (r < 0)
                        return log_oom();
        }
        if (strv_isempty(paths))
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                       "No foyer generators (executables named foyer-*) found in %s; set FOYER_GENERATOR_DIR.",
                                       dir);
        *ret = TAKE_PTR(paths);
        return 0;
}

/* Runs one generator as PID 1 does, with the three directories; its stdout joins our stderr so
 * that stdout only carries the units. */
static int run_generator(const char *path, const TempTree *tree) {
        const char *root = tree->path;
        _cleanup_free_ char *normal = strjoin(root, output_dirs[0]), *early = strjoin(root, output_dirs[1]),
                            *late = strjoin(root, output_dirs[2]);
        const char *argv[] = { path, normal, early, late, NULL };

        pid_t pid;
        int status, r;

        assert(path);
        assert(root);

        if (!normal || !early || !late)
                return log_oom();

        log_debug("Running %s.", path);
        r = spawn_process(path, (char **) argv, &(SpawnOptions) { .stdout_fd = STDERR_FILENO }, &pid);
        if (r < 0)
                return log_error_errno(r, "Failed to run %s: %m", path);
        /* A signal now stops the generator before the tree it writes into is removed. */
        cleanup_set_child(tree->slot, pid);
        r = wait_process(pid, &status);
        cleanup_set_child(tree->slot, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to wait for %s: %m", path);
        if (WIFSIGNALED(status))
                return log_error_errno(SYNTHETIC_ERRNO(EPROTO), "%s was killed by signal %d.",
                                       path_basename(path), WTERMSIG(status));
        if (WEXITSTATUS(status) != 0)
                return log_error_errno(SYNTHETIC_ERRNO(EPROTO), "%s failed with exit status %d.",
                                       path_basename(path), WEXITSTATUS(status));
        return 0;
}

/* d_type is DT_UNKNOWN on some file systems that TMPDIR may be on. */
static bool is_dir(DIR *d, const struct dirent *de) {
        struct stat st;

        if (de->d_type != DT_UNKNOWN)
                return de->d_type == DT_DIR;
        return fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISDIR(st.st_mode);
}

/* Appends every file and symlink below base/rel (relative paths, depth first) to l. */
static int collect(const char *base, const char *rel, char ***l) {
        _cleanup_free_ char *dir = strjoin(base, "/", rel);
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (!dir)
                return -ENOMEM;
        d = opendir(dir);
        if (!d)
                return negative_errno();
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *p = NULL;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                p = isempty(rel) ? strdup(de->d_name) : strjoin(rel, "/", de->d_name);
                if (!p) {
                        r = -ENOMEM;
                        break;
                }
                if (is_dir(d, de))
                        r = collect(base, p, l);
                else
                        r = strv_consume(l, TAKE_PTR(p));
        }
        closedir(d);
        return r;
}

/* Writes text with every occurrence of the temporary root removed, so that paths read as they
 * would at boot. */
static void print_unprefixed(const char *text, const char *root) {
        size_t n = strlen(root);

        for (const char *p; (p = strstr(text, root)); text = p + n)
                fwrite(text, 1, p - text, stdout);
        fputs(text, stdout);
}

static int print_entry(const char *root, const char *dir, const char *rel) {
        _cleanup_free_ char *path = strjoin(root, dir, "/", rel), *text = NULL;
        struct stat st;
        int r;

        if (!path)
                return log_oom();
        if (lstat(path, &st) < 0)
                return log_error_errno(errno, "Failed to stat %s: %m", path);

        printf("# %s/%s", dir, rel);
        if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t k = readlink(path, target, sizeof(target) - 1);

                if (k < 0)
                        return log_error_errno(errno, "Failed to read link %s: %m", path);
                target[k] = 0;
                fputs(" -> ", stdout);
                print_unprefixed(target, root);
                fputs("\n\n", stdout);
                return 0;
        }

        r = read_full_file(path, &text, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);
        putchar('\n');
        print_unprefixed(text, root);
        fputs(!isempty(text) && !endswith(text, "\n") ? "\n\n" : "\n", stdout);
        return 0;
}

static int print_outputs(const char *root) {
        int r;

        assert(root);

        for (size_t i = 0; i < ELEMENTSOF(output_dirs); i++) {
                _cleanup_free_ char *base = strjoin(root, output_dirs[i]);
                _cleanup_strv_free_ char **files = NULL;

                if (!base)
                        return log_oom();
                r = collect(base, "", &files);
                if (r < 0)
                        return log_error_errno(r, "Failed to list %s: %m", base);
                strv_sort(files);
                STRV_FOREACH(f, files) {
                        r = print_entry(root, output_dirs[i], *f);
                        if (r < 0)
                                return r;
                }
        }
        if (fflush(stdout) != 0 || ferror(stdout))
                return log_error_errno(errno ?: EIO, "Failed to write the units: %m");
        return 0;
}

static int preview(const PreviewArgs *a) {
        const char *dir = getenv("FOYER_GENERATOR_DIR") ?: FOYER_HOST_GENERATOR_DIR;
        _cleanup_(temp_tree_done) TempTree tree = TEMP_TREE_NULL;
        _cleanup_(preview_image_done) PreviewImage img = {};
        _cleanup_strv_free_ char **generators = NULL;
        PreviewArgs eff = *a;
        int r, ret = 0;

        assert(a);

        r = list_generators(dir, &generators);
        if (r < 0)
                return r;
        r = make_tree(&tree);
        if (r < 0)
                return r;
        if (a->image) {
                r = setup_image(a, tree.path, &img);
                if (r < 0)
                        return r;
                r = filter_generators(&generators, &img, dir, a->image);
                if (r < 0)
                        return r;
                /* The stub passes a UKI's .cmdline to the kernel when the boot loader gives none. */
                if (!eff.cmdline && img.uki_cmdline) {
                        log_debug("Using the .cmdline of %s: %s", a->image, img.uki_cmdline);
                        eff.cmdline = img.uki_cmdline;
                }
        }
        r = setup_environment(&eff, a->image ? &img : NULL, tree.path);
        if (r < 0)
                return r;

        /* A failing generator does not stop the others, as at boot; its output still shows. */
        STRV_FOREACH(g, generators) {
                r = run_generator(*g, &tree);
                if (r < 0 && ret >= 0)
                        ret = r;
        }

        r = print_outputs(tree.path);
        return ret < 0 ? ret : r;
}

int verb_preview(int argc, char *argv[]) {
        enum {
                ARG_CMDLINE = 0x100,
                ARG_CRYPTTAB,
                ARG_FSTAB,
                ARG_IMAGE,
        };
        static const struct option options[] = {
                { "help",     no_argument,       NULL, 'h'          },
                { "cmdline",  required_argument, NULL, ARG_CMDLINE  },
                { "crypttab", required_argument, NULL, ARG_CRYPTTAB },
                { "fstab",    required_argument, NULL, ARG_FSTAB    },
                { "image",    required_argument, NULL, ARG_IMAGE    },
                { "verbose",  no_argument,       NULL, 'v'          },
                {}
        };
        PreviewArgs a = {};
        int opt;

        while ((opt = getopt_long(argc, argv, "hv", options, NULL)) >= 0)
                switch (opt) {
                case 'h':
                        help_preview();
                        return 0;
                case ARG_CMDLINE:
                        a.cmdline = optarg;
                        break;
                case ARG_CRYPTTAB:
                        a.crypttab = optarg;
                        break;
                case ARG_FSTAB:
                        a.fstab = optarg;
                        break;
                case ARG_IMAGE:
                        a.image = optarg;
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        if (setenv("SYSTEMD_LOG_LEVEL", "debug", 1) < 0)
                                return log_error_errno(errno, "Failed to set $SYSTEMD_LOG_LEVEL: %m");
                        break;
                default:        /* getopt named the option already */
                        return usage_hint("preview");
                }

        if (optind < argc) {
                log_error("preview takes no arguments (got \"%s\"); the command line goes in --cmdline.", argv[optind]);
                return usage_hint("preview");
        }
        if (a.image && isempty(a.image))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--image= needs the path of an image.");
        /* A missing file would look like an empty one to the generators: say so instead. */
        FOREACH_STRING(f, a.crypttab ?: "", a.fstab ?: "", a.image ?: "")
                if (!isempty(f) && access(f, R_OK) < 0)
                        return log_error_errno(errno, "Cannot read %s: %m", f);

        return preview(&a);
}
