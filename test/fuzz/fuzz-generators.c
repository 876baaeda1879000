/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every foyer generator, in-process, on one fuzzed input, and then what they wrote is checked.
 *
 * The input is split at NUL bytes into the kernel command line ($SYSTEMD_PROC_CMDLINE), the initrd's
 * crypttab ($SYSTEMD_CRYPTTAB), the initrd's fstab ($SYSTEMD_FSTAB), the host's fstab
 * ($SYSTEMD_SYSROOT_FSTAB) and the EFI options ($SYSTEMD_EFI_OPTIONS); missing parts are empty. The two
 * fstabs are also the credentials fstab.extra.initrd and fstab.extra ($CREDENTIALS_DIRECTORY). An input of
 * even size runs as systemd 252, one of odd size as 257 (a version file; 257 knows
 * systemd.mount-extra=, systemd.swap-extra= and those credentials, 252 does not). Each
 * generator runs with SYSTEMD_IN_INITRD=1 into PARENT/a/b/{normal,early,late} of a fresh temporary
 * directory PARENT (deep, so that a "../.." escape still lands in PARENT and is seen). Then:
 *   - PARENT holds nothing but a, a/b and the three output directories with what is below them;
 *   - there are only directories, regular files and symlinks, and every symlink points to a unit of
 *     /usr/lib/systemd/ or /lib/systemd/, to /dev/null, or (relative) into the output directories;
 *   - every line of every file is blank, a comment, "[Section]" or "key=value" (lvm's lvmlocal.conf:
 *     any line; foyer-driver's modprobe.conf: comments and "blacklist NAME", NAME one word without
 *     '/'; foyer-md's mdadm.conf: comments, "AUTO -all" and "ARRAY UUID=" with 32 hex digits in
 *     mdadm's 8:8:8:8 form, as the image's own mdadm.conf is $FOYER_MDADM_IMAGE_CONF=/nonexistent),
 *     and no line has a control character but tab or ends in a backslash;
 *   - no unit line has a '%' that is not "%%" (a literal '%') or one of the specifiers the generators
 *     write themselves (%i, %I, %f; %m in foyer-netroot-generator's default iSCSI initiator name): a
 *     value from the input must never reach PID 1's expansion.
 * A violation abort()s with the file named. The generators are linked in, compiled with
 * -DFOYER_FUZZ_GENERATOR=fuzz_generator_main_NAME (see FOYER_DEFINE_MAIN() in generator.h); each one
 * frees and resets its arg_* state itself when it returns, so leaks and stale state show up too.
 * $FUZZ_VERBOSE=1 shows the generators' logs.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fileio.h"
#include "fuzz.h"
#include "macro.h"
#include "strv.h"
#include "systemd-version.h"

int fuzz_generator_main_root(int argc, char *argv[]);
int fuzz_generator_main_crypt(int argc, char *argv[]);
int fuzz_generator_main_lvm(int argc, char *argv[]);
int fuzz_generator_main_debug(int argc, char *argv[]);
int fuzz_generator_main_gpt_auto(int argc, char *argv[]);
int fuzz_generator_main_driver(int argc, char *argv[]);
int fuzz_generator_main_md(int argc, char *argv[]);
int fuzz_generator_main_vconsole(int argc, char *argv[]);
int fuzz_generator_main_netroot(int argc, char *argv[]);

static const struct {
        const char *name;
        int (*main)(int argc, char *argv[]);
} generators[] = {
        { "foyer-root-generator", fuzz_generator_main_root },
        { "foyer-crypt-generator", fuzz_generator_main_crypt },
        { "foyer-lvm-generator", fuzz_generator_main_lvm },
        { "foyer-debug-generator", fuzz_generator_main_debug },
        { "foyer-gpt-auto-generator", fuzz_generator_main_gpt_auto },
        { "foyer-driver-generator", fuzz_generator_main_driver },
        { "foyer-md-generator", fuzz_generator_main_md },
        { "foyer-vconsole-generator", fuzz_generator_main_vconsole },
        { "foyer-netroot-generator", fuzz_generator_main_netroot },
};

#define OUT "a/b"

_noreturn_ static void violation(const char *path, const char *what) {
        fprintf(stderr, "fuzz-generators: %s: %s\n", path, what);
        abort();
}

static int write_part(const char *dir, const char *name, const char *text, char **ret) {
        _cleanup_free_ char *p = strjoin(dir, "/", name);

        if (!p || write_string_file_atomic(p, text) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

/* How the lines of a file must look: a unit file, lvm's free-form lvmlocal.conf, modprobe.d, or
 * mdadm.conf. */
typedef enum FileForm {
        FORM_UNIT,
        FORM_FREE,
        FORM_MODPROBE,
        FORM_MDADM,
} FileForm;

/* "ARRAY UUID=xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx", lower-case hex. */
static bool is_mdadm_array_line(const char *line, size_t n) {
        const size_t k = strlen("ARRAY UUID=");

        if (n != k + 35 || strncmp(line, "ARRAY UUID=", k) != 0)
                return false;
        for (size_t i = 0; i < 35; i++) {
                char c = line[k + i];

                if (i % 9 == 8 ? c != ':' : !strchr("0123456789abcdef", c))
                        return false;
        }
        return true;
}

static void check_line(const char *path, const char *line, size_t n, FileForm form) {
        const char *eq;

        for (size_t i = 0; i < n; i++)
                if (((unsigned char) line[i] < 0x20 && line[i] != '\t') || line[i] == 0x7f)
                        violation(path, "control character in a line");
        if (n > 0 && line[n - 1] == '\\')
                violation(path, "line ends in a backslash");
        if (form == FORM_FREE || n == 0 || line[0] == '#')
                return;
        if (form == FORM_MODPROBE) {
                /* foyer-driver-generator writes only "blacklist NAME", NAME one word that is no path. */
                const size_t k = strlen("blacklist ");

                if (n <= k || strncmp(line, "blacklist ", k) != 0)
                        violation(path, "modprobe.d line is not \"blacklist NAME\"");
                for (size_t i = k; i < n; i++)
                        if (strchr(" \t/\\#", line[i]) || (unsigned char) line[i] >= 0x80)
                                violation(path, "module name is not one plain word");
                return;
        }
        if (form == FORM_MDADM) {
                /* foyer-md-generator writes "AUTO -all" and ARRAY lines of UUIDs it checked. */
                if (!(n == strlen("AUTO -all") && strncmp(line, "AUTO -all", n) == 0) &&
                    !is_mdadm_array_line(line, n))
                        violation(path, "mdadm.conf line is neither \"AUTO -all\" nor \"ARRAY UUID=<uuid>\"");
                return;
        }
        if (line[0] == ';')
                return;
        for (size_t i = 0; i < n; i++) {
                if (line[i] != '%')
                        continue;
                if (i + 1 < n && line[i + 1] == '%')
                        i++;
                else if (i + 1 >= n || !strchr("iIfm", line[i + 1]))
                        violation(path, "a '%' that starts a specifier foyer does not write");
        }
        if (line[0] == '[') {
                if (line[n - 1] != ']' || n < 3)
                        violation(path, "bad section header");
                return;
        }
        eq = memchr(line, '=', n);
        if (!eq || eq == line)
                violation(path, "line is not key=value");
}

static void check_file(const char *path, FileForm form) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;

        if (read_full_file(path, &text, &size) < 0)
                violation(path, "cannot read");
        for (size_t i = 0; i < size;) {
                const char *nl = memchr(text + i, '\n', size - i);
                size_t n = nl ? (size_t) (nl - (text + i)) : size - i;

                check_line(path, text + i, n, form);
                i += n + 1;
        }
}

static void check_symlink(const char *path, const char *outdir) {
        char target[4096];
        ssize_t k = readlink(path, target, sizeof(target) - 1);
        _cleanup_free_ char *resolved = NULL, *dir = NULL;

        if (k < 0)
                violation(path, "cannot read symlink");
        target[k] = 0;
        if (streq(target, "/dev/null") || startswith(target, "/usr/lib/systemd/") ||
            startswith(target, "/lib/systemd/")) {
                if (strstr(target, "/../"))
                        violation(path, "symlink to a unit path with ..");
                return;
        }
        if (target[0] == '/')
                violation(path, "symlink to an absolute path that is not a unit");
        /* Relative: resolve it lexically against the link's directory; it must stay in outdir. */
        dir = strdup(path);
        if (!dir)
                abort();
        *strrchr(dir, '/') = 0;
        resolved = strjoin(dir, "/", target);
        if (!resolved)
                abort();
        for (char *p; (p = strstr(resolved, "/../"));) {
                char *prev;

                *p = 0;
                prev = strrchr(resolved, '/');
                if (!prev)
                        violation(path, "symlink leaves the output directories");
                memmove(prev, p + 3, strlen(p + 3) + 1);
        }
        if (!startswith(resolved, outdir) || strstr(resolved, "/./") || endswith(resolved, "/.."))
                violation(path, "symlink leaves the output directories");
}

/* Walks dir (below the parent, relative name rel); level: 0 parent, 1 a, 2 a/b, 3 and more outputs. */
static void check_tree(const char *dir, const char *outdir, unsigned level, FileForm form) {
        DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                violation(dir, "cannot open directory");
        while ((de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                p = strjoin(dir, "/", de->d_name);
                if (!p)
                        abort();
                if ((level == 0 && !streq(de->d_name, "a")) || (level == 1 && !streq(de->d_name, "b")) ||
                    (level == 2 && !streq(de->d_name, "normal") && !streq(de->d_name, "early") &&
                     !streq(de->d_name, "late")))
                        violation(p, "written outside the output directories");
                if (lstat(p, &st) < 0)
                        violation(p, "cannot stat");
                if (S_ISDIR(st.st_mode))
                        check_tree(p, outdir, level + 1,
                                   streq(de->d_name, "foyer-lvm") ? FORM_FREE :
                                   streq(de->d_name, "foyer-driver") ? FORM_MODPROBE :
                                   streq(de->d_name, "foyer-md") ? FORM_MDADM : form);
                else if (S_ISREG(st.st_mode))
                        check_file(p, form);
                else if (S_ISLNK(st.st_mode))
                        check_symlink(p, outdir);
                else
                        violation(p, "neither directory, file nor symlink");
        }
        closedir(d);
}

/* A generator must leave nothing that cannot be removed: rm_rf() ignores errors, so look again. */
static void remove_tree(const char *path) {
        struct stat st;

        rm_rf(path);
        if (lstat(path, &st) >= 0 || errno != ENOENT)
                violation(path, "cannot remove");
}

/* The checks' own test (meson: fuzz-generators-plant-*, which must fail): $FUZZ_GENERATORS_PLANT
 * plants one violation of each kind beside what the generators wrote, so a check that stopped
 * catching it would show. */
static void plant(const char *parent) {
        const char *kind = getenv("FUZZ_GENERATORS_PLANT");
        _cleanup_free_ char *p = NULL;
        const char *text = NULL, *link = NULL;

        if (!kind)
                return;
        if (streq(kind, "outside")) {
                p = strjoin(parent, "/a/evil.service");
                text = "[Unit]\n";
        } else if (streq(kind, "newline")) {
                p = strjoin(parent, "/" OUT "/normal/evil.service");
                text = "[Service]\nExecStart=/bin/true\nbare line\n";
        } else if (streq(kind, "control")) {
                p = strjoin(parent, "/" OUT "/normal/evil.service");
                text = "[Service]\nDescription=a\033b\n";
        } else if (streq(kind, "specifier")) {
                p = strjoin(parent, "/" OUT "/normal/evil.service");
                text = "[Service]\nTTYPath=/dev/tty%n\n";
        } else if (streq(kind, "backslash")) {
                p = strjoin(parent, "/" OUT "/normal/evil.service");
                text = "[Mount]\nOptions=ro\\\n";
        } else if (streq(kind, "modprobe")) {
                _cleanup_free_ char *dir = strjoin(parent, "/" OUT "/normal/foyer-driver");

                if (!dir || mkdir_p(dir, 0755) < 0)
                        abort();
                p = strjoin(dir, "/evil.conf");
                text = "blacklist ../evil\n";
        } else if (streq(kind, "mdadm")) {
                _cleanup_free_ char *dir = strjoin(parent, "/" OUT "/normal/foyer-md");

                if (!dir || mkdir_p(dir, 0755) < 0)
                        abort();
                p = strjoin(dir, "/evil.conf");
                text = "ARRAY UUID=3a6e1f52:8c4d4b7e:9f10a2b3:c4d5e6f7 devices=/dev/sda\n";
        } else if (streq(kind, "symlink")) {
                p = strjoin(parent, "/" OUT "/normal/evil.service");
                link = "../../../../etc/passwd";
        } else
                violation(kind, "unknown FUZZ_GENERATORS_PLANT");
        if (!p)
                abort();
        if (link ? symlink(link, p) < 0 : write_string_file_atomic(p, text) < 0)
                abort();
}

static void run_one(int i, const char *tmp) {
        _cleanup_free_ char *parent = strjoin(tmp, "/out"), *outdir = NULL, *normal = NULL, *early = NULL,
                            *late = NULL;
        char *argv[5];

        if (!parent)
                abort();
        outdir = strjoin(parent, "/" OUT "/");
        normal = strjoin(parent, "/" OUT "/normal");
        early = strjoin(parent, "/" OUT "/early");
        late = strjoin(parent, "/" OUT "/late");
        if (!outdir || !normal || !early || !late || mkdir_p(normal, 0755) < 0 || mkdir_p(early, 0755) < 0 ||
            mkdir_p(late, 0755) < 0)
                abort();
        argv[0] = (char *) generators[i].name;
        argv[1] = normal;
        argv[2] = early;
        argv[3] = late;
        argv[4] = NULL;
        (void) generators[i].main(4, argv);
        plant(parent);
        check_tree(parent, outdir, 0, FORM_UNIT);
        remove_tree(parent);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const files[] = { NULL, "crypttab", "fstab", "sysroot-fstab", NULL };
        static const char *const vars[] = { "SYSTEMD_PROC_CMDLINE", "SYSTEMD_CRYPTTAB", "SYSTEMD_FSTAB",
                                            "SYSTEMD_SYSROOT_FSTAB", "SYSTEMD_EFI_OPTIONS" };
        _cleanup_free_ char *in = NULL, *runtime = NULL;
        char tmp[] = "/tmp/fuzz-generators-XXXXXX";
        const char *p;

        if (size > 16384)
                return 0;
        in = fuzz_strndup(data, size);
        if (!in || !mkdtemp(tmp))
                abort();
        runtime = strjoin(tmp, "/run");
        if (!runtime)
                abort();

        /* The parts, at NUL bytes (fuzz_strndup() keeps them; the end is NUL-terminated). */
        p = in;
        for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
                const char *part = p < in + size ? p : "";
                _cleanup_free_ char *path = NULL;

                if (files[i]) {
                        if (write_part(tmp, files[i], part, &path) < 0)
                                abort();
                        setenv(vars[i], path, 1);
                } else
                        setenv(vars[i], part, 1);
                if (p < in + size)
                        p += strlen(p) + 1;
        }
        /* The fstabs as credentials, and the version. */
        {
                _cleanup_free_ char *creds = strjoin(tmp, "/creds"), *initrd_fstab = NULL, *host_fstab = NULL,
                                    *a = NULL, *b = NULL, *version = NULL;

                if (!creds || mkdir_p(creds, 0755) < 0 ||
                    read_full_file(getenv("SYSTEMD_FSTAB"), &initrd_fstab, NULL) < 0 ||
                    read_full_file(getenv("SYSTEMD_SYSROOT_FSTAB"), &host_fstab, NULL) < 0 ||
                    write_part(creds, "fstab.extra.initrd", initrd_fstab, &a) < 0 ||
                    write_part(creds, "fstab.extra", host_fstab, &b) < 0 ||
                    write_part(tmp, "systemd-version", size % 2 ? "VERSION=257\nLIBEXECDIR=/usr/lib/systemd\n" :
                                                                  "VERSION=252\n", &version) < 0)
                        abort();
                setenv("CREDENTIALS_DIRECTORY", creds, 1);
                setenv("FOYER_SYSTEMD_VERSION_FILE", version, 1);
                systemd_version_forget();
        }
        setenv("SYSTEMD_IN_INITRD", "1", 1);
        setenv("RUNTIME_DIRECTORY", runtime, 1);
        setenv("FOYER_CMDLINE_DIR", "/nonexistent", 1);
        setenv("FOYER_SYSFS", "/nonexistent", 1);
        setenv("FOYER_MDADM_IMAGE_CONF", "/nonexistent", 1);
        setenv("FOYER_ISCSI_INITIATORNAME_FILE", "/nonexistent", 1);
        /* foyer-vconsole-generator: an image that holds the keymap us, its default. */
        {
                _cleanup_free_ char *keymaps = strjoin(tmp, "/keymaps"), *map = NULL, *conf = NULL;

                if (!keymaps || mkdir_p(keymaps, 0755) < 0 || write_part(keymaps, "us.map", "keymaps 0-2\n", &map) < 0 ||
                    write_part(tmp, "vconsole.conf", "KEYMAP=us\n", &conf) < 0)
                        abort();
                setenv("FOYER_KEYMAP_DIR", keymaps, 1);
                setenv("FOYER_VCONSOLE_CONF", conf, 1);
        }
        setenv("SYSTEMD_LOG_TARGET", "console", 1);
        if (!getenv("FUZZ_VERBOSE"))
                setenv("SYSTEMD_LOG_LEVEL", "emerg", 1);

        for (size_t i = 0; i < ELEMENTSOF(generators); i++)
                run_one(i, tmp);
        remove_tree(tmp);
        return 0;
}
