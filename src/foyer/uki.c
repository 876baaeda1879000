/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "build.h"
#include "cli.h"
#include "commit.h"
#include "foyer-config.h"
#include "foyer-contract.h"
#include "log.h"
#include "ls.h"
#include "pe.h"
#include "probe.h"
#include "process-util.h"
#include "uki.h"
#include "uki-measure.h"
#include "uki-sbat.h"
#include "util.h"

#define DEFAULT_STUB "/usr/lib/systemd/boot/efi/linuxx64.efi.stub"

typedef struct UkiArgs {
        const char *output, *kernel, *initrd, *cmdline, *os_release, *uname, *splash, *stub;
        const char *sign_key, *sign_cert;
        UkiPcr pcr;
} UkiArgs;

typedef struct Blob {
        char *data;
        size_t size;
} Blob;

static void blob_done(Blob *b) {
        free(b->data);
        *b = (Blob) {};
}

static void help_uki(void) {
        printf("%s uki -o OUT.efi [OPTIONS...]\n\n"
               "Build a unified kernel image: systemd's EFI stub with the kernel, an initrd, the\n"
               "command line, os-release and the kernel version as PE sections.\n\n"
               "  -o --output=PATH          The UKI to write (required)\n"
               "     --kernel=VMLINUZ       Kernel EFI image (default: ROOT/boot/vmlinuz-VERSION)\n"
               "     --initrd=IMG           Initrd to embed (default: build one with the image\n"
               "                            options below, as foyer build does)\n"
               "     --cmdline=TEXT|@FILE   Kernel command line (default: none; the stub then\n"
               "                            takes the boot loader's)\n"
               "     --os-release=FILE      (default: ROOT/etc/os-release, ROOT/usr/lib/os-release)\n"
               "     --uname=VERSION        Kernel version (default: --kver, else read from the kernel)\n"
               "     --splash=BMP           Boot splash image\n"
               "     --stub=STUB            (default: " DEFAULT_STUB ")\n"
               "     --sign-key=KEY         Sign with sbsign: PEM private key (unencrypted)...\n"
               "     --sign-cert=CERT       ...and its PEM certificate\n"
               "     --pcr-private-key=KEY  Sign the PCR 11 values the stub will measure with\n"
               "                            systemd-measure: PEM private key, .pcrsig section...\n"
               "     --pcr-public-key=KEY   ...and its PEM public key, .pcrpkey section\n"
               "     --phases=PHASE...      Boot phases to sign for (default: systemd-measure's)\n\n"
               "Image options (when no --initrd is given), as for foyer build:\n"
               "  -k --kver=VERSION  -r --root=DIR  -c --compress=FORMAT  --compress-level=N\n"
               "  -m --add-module=NAME  -a --add-file=SRC[:DEST]  --crypttab=FILE\n"
               "  --add-key-file=SRC[:DEST]  --no-shell  --microcode=WHICH  --no-target-settings\n"
               "  --keymap=NAME  --add-keymap=NAME  --ssh-unlock=FILE  --ssh-host-keys=DIR\n"
               "  --network[=WHEN]  -v --verbose\n"
               "An image given with --initrd must be an initrd (cpio archives, compressed or\n"
               "not, as foyer ls reads them); the image options are refused with it.\n\n"
               "  -h --help                 Show this help\n",
               program_invocation_short_name);
}

/* Reads path, inside root when root is a tree (--root: a symlink there stays in it), else on the
 * build host (a file the user named). */
static int read_blob(const char *what, const char *root, const char *path, Blob *ret) {
        _cleanup_free_ char *name = path_prefix_root(root, path);
        Blob b = {};
        int r;

        if (!name)
                return log_oom();
        r = read_full_file_in_root(root, path, &b.data, &b.size);
        if (r == -EBADFD)
                return log_error_errno(r, "%s %s is not a regular file.", what, name);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s %s: %m", what, name);
        if (b.size == 0) {
                blob_done(&b);
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s %s is empty.", what, name);
        }
        *ret = b;
        return 0;
}

/* The x86 boot protocol's setup header points at the version string ("6.1.0-57-amd64 (...) #1
 * SMP ..."), which is where uname -r comes from without running the kernel. */
static char *bzimage_version(const Blob *k) {
        const uint8_t *d = (const uint8_t *) k->data;
        size_t off, len = 0;

        if (k->size < 0x210 || memcmp(d + 0x202, "HdrS", 4) != 0)
                return NULL;
        off = (size_t) (d[0x20e] | d[0x20f] << 8);
        if (off == 0)
                return NULL;
        off += 0x200;
        while (off + len < k->size && len < 64 && d[off + len] > ' ' && d[off + len] < 0x7f)
                len++;
        return len > 0 ? strndup((const char *) d + off, len) : NULL;
}

static int load_stub(const char *path, Blob *ret, PeImage *ret_pe) {
        _cleanup_(blob_done) Blob b = {};
        const char *why = NULL;
        int r;

        r = read_blob("stub", NULL, path, &b);
        if (r < 0)
                return r;
        r = pe_parse((const uint8_t *) b.data, b.size, ret_pe, &why);
        if (r < 0)
                return log_error_errno(r, "Stub %s is not a PE image: %s.", path, why);
        if (ret_pe->subsystem != PE_SUBSYSTEM_EFI_APPLICATION)
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG),
                                       "Stub %s is not an EFI application (PE subsystem %u).", path,
                                       ret_pe->subsystem);
        if (pe_find_section(ret_pe, ".linux"))
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG),
                                       "Stub %s already holds a .linux section (it is a UKI, not a stub).", path);
        /* systemd-stub 257 and later boot one of several profiles: the sections after each .profile
         * override the shared ones before the first. foyer uki makes single-profile UKIs, and added
         * after a profile its sections would belong to that profile. */
        if (pe_find_section(ret_pe, ".profile"))
                return log_error_errno(SYNTHETIC_ERRNO(EOPNOTSUPP),
                                       "Stub %s holds a .profile section (it is a UKI profile or a multi-profile "
                                       "UKI, not a stub). foyer uki makes single-profile UKIs; multi-profile UKIs "
                                       "(systemd-stub 257 and later) are not supported: use ukify build "
                                       "--profile= and --join-profile=.", path);
        *ret = b;
        b = (Blob) {};
        return 0;
}

/* The kernel and its parsed headers (which borrow the kernel's bytes). */
static int load_kernel(const char *root, const char *path, Blob *ret, PeImage *ret_pe) {
        _cleanup_(blob_done) Blob b = {};
        const char *why = NULL;
        PeImage pe;
        int r;

        r = read_blob("kernel", root, path, &b);
        if (r < 0)
                return r;
        r = pe_parse((const uint8_t *) b.data, b.size, &pe, &why);
        if (r < 0)
                return log_error_errno(r, "Kernel %s is not an EFI image (%s); the stub can only start a kernel "
                                       "built with CONFIG_EFI_STUB.", path, why);
        if (pe.subsystem != PE_SUBSYSTEM_EFI_APPLICATION)
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG),
                                       "Kernel %s is not an EFI application (PE subsystem %u).", path, pe.subsystem);
        *ret = b;
        *ret_pe = pe;
        b = (Blob) {};
        return 0;
}

/* The UKI's SBAT goes into the room a systemd-stub 258 or later leaves in its .sbat (uki-sbat.h),
 * before anything measures the section. An earlier stub's .sbat stays as it is: it has no room,
 * and a second .sbat section would be one shim and the stub never read. */
static int merge_sbat(const UkiArgs *u, Blob *stub, const PeImage *stub_pe, const PeImage *kernel_pe,
                      int stub_version) {
        const char *why = NULL, *path = u->stub ?: DEFAULT_STUB;
        int r;

        r = uki_sbat_merge((uint8_t *) stub->data, stub_pe, kernel_pe, &why);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "Cannot write the UKI's SBAT into stub %s: %m", path);
        if (r > 0)
                log_debug("Stub %s: the UKI's SBAT entries (the stub's, %s and \"uki\") written into its .sbat.",
                          path, pe_find_section(kernel_pe, ".sbat") ? "the kernel's" : "none of the kernel's");
        else if (stub_version >= 258)
                log_warning("Stub %s is systemd-stub %i, but %s: the UKI carries the stub's SBAT entries only.",
                            path, stub_version, why);
        else
                log_debug("Stub %s: .sbat left as it is (%s).", path, why);
        return 0;
}

static int load_cmdline(const char *arg, Blob *ret) {
        Blob b = {};
        int r;

        if (arg[0] == '@') {
                r = read_blob("command line file", NULL, arg + 1, &b);
                if (r < 0)
                        return r;
        } else {
                b.data = strdup(arg);
                if (!b.data)
                        return log_oom();
                b.size = strlen(arg);
        }
        /* A file's trailing newline is not part of the command line. */
        while (b.size > 0 && strchr(" \t\n", b.data[b.size - 1]))
                b.data[--b.size] = '\0';
        if (b.size == 0 || strlen(b.data) != b.size) {
                blob_done(&b);
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--cmdline=%s: %s.", arg,
                                       b.size == 0 ? "empty command line" : "contains a NUL byte");
        }
        /* As foyer build refuses it: the generators would take the rest of the line for the value. */
        r = cmdline_check_quotes(b.data, arg[0] == '@' ? arg + 1 : "--cmdline");
        if (r < 0) {
                blob_done(&b);
                return r;
        }
        *ret = b;
        return 0;
}

/* The tree's os-release, as an image path (read inside the tree by read_blob()). */
static int find_os_release(const char *root, char **ret) {
        FOREACH_STRING(p, "/etc/os-release", "/usr/lib/os-release") {
                _cleanup_close_ int fd = open_regular_in_root(root, p, 0, NULL);

                if (fd == -ENOMEM)
                        return log_oom();
                if (fd >= 0) {
                        *ret = strdup(p);
                        return *ret ? 0 : log_oom();
                }
        }
        return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "No os-release in %s (etc/ or usr/lib/); use --os-release.",
                               root);
}

/* The bytes written into fd, read back. */
static int read_memfd(int fd, const char *what, Blob *ret) {
        int r;

        r = read_full_fd_from_start(fd, &ret->data, &ret->size);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", what);
        return 0;
}

/* Builds the image like foyer build, into a memfd: it may hold key files, and no file system
 * should see it, nor keep it after the program dies, however it dies. *ret_secret tells whether it
 * holds key files. With ret_ucode, the early microcode archive goes there (empty when there is
 * none) instead of in front of the image. */
static int build_initrd(BuildArgs *a, const char *kver, bool pcr_signed, Blob *ret, Blob *ret_ucode,
                        bool *ret_secret) {
        _cleanup_strv_free_ char **keys = NULL;
        _cleanup_close_ int fd = -EBADF, ucode_fd = -EBADF;
        BuildConfig c;
        int r;

        fd = memfd_create("foyer-uki-initrd", MFD_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Failed to create a memory file for the initrd: %m");
        if (ret_ucode) {
                ucode_fd = memfd_create("foyer-uki-ucode", MFD_CLOEXEC);
                if (ucode_fd < 0)
                        return log_error_errno(errno, "Failed to create a memory file for the microcode: %m");
        }

        build_config_init(&c);
        r = build_args_config(a, &c);
        if (r >= 0 && !c.kver && kver && !(c.kver = strdup(kver)))
                r = log_oom();
        c.pcr_signed = pcr_signed;
        if (r >= 0)
                r = build_image(&c, fd, ucode_fd, &keys);
        if (r >= 0)
                r = read_memfd(fd, "the built initrd", ret);
        if (r >= 0 && ret_ucode)
                r = read_memfd(ucode_fd, "the built microcode archive", ret_ucode);
        if (r >= 0)
                *ret_secret = keys;
        if (r >= 0 && keys) {
                _cleanup_free_ char *list = strv_join(keys, ", ");

                if (!list)
                        r = log_oom();
                else
                        log_warning("The initrd holds key files (%s): the UKI is written with mode 0600; whoever can "
                                    "read it can %s.", list,
                                    strstr(list, FOYER_SSH_HOST_KEY_DIR "/") ?
                                    "use them (unlock volumes with a volume's key, pose as this machine to SSH "
                                    "clients with the SSH host keys)" : "unlock those volumes");
        }
        build_config_done(&c);
        return r;
}

/* Reads the finished initrd named by --initrd. The UKI holds the same bytes, so it is secret
 * (0600) when the initrd is: when its owner keeps it from others (foyer build writes one with key
 * files 0600), and when it holds a key whatever its own mode (a copy made 0644, another builder's
 * image): a regular file others may not read, or one where foyer's contract puts keys
 * (ls_check_initrd()). An initrd that cannot be read to its end (an unknown compression, corrupt,
 * truncated) is refused, so whether it holds a key is never guessed. Mode and content come from one open
 * file, so they describe the same file. */
static int read_initrd(const char *path, Blob *ret, bool *ret_secret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *key = NULL;
        Blob b = {};
        struct stat st;
        int r;

        assert(path);
        assert(ret);
        assert(ret_secret);

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Failed to read initrd %s: %m", path);
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat initrd %s: %m", path);
        r = read_full_fd(fd, &b.data, &b.size);
        if (r < 0)
                return log_error_errno(r, "Failed to read initrd %s: %m", path);
        if (b.size == 0) {
                blob_done(&b);
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "initrd %s is empty.", path);
        }
        /* A kernel, a UKI or a file given by mistake would only fail at boot; read it as foyer ls
         * does, every entry. */
        r = ls_check_initrd(path, (const uint8_t *) b.data, b.size, &key);
        if (r < 0) {            /* logged, naming the file */
                blob_done(&b);
                return r;
        }
        *ret_secret = !(st.st_mode & S_IROTH) || key;
        if (!(st.st_mode & S_IROTH))
                log_info("Initrd %s is not readable by others: the UKI is written with mode 0600.", path);
        else if (key)
                log_warning("Initrd %s holds a key, %s: the UKI is written with mode 0600. The initrd itself is "
                            "readable by others (mode %04o): chmod 600 it.", path, key,
                            (unsigned) (st.st_mode & 07777));
        *ret = b;
        return 0;
}

/* sbsign takes file names; it gets /proc/self/fd/N names of inherited copies of our fds, so that
 * neither the unsigned UKI nor the signed one ever needs a name on a file system (sbsign opens its
 * output with O_TRUNC, which reopens the same file). */
static int run_sbsign(const UkiArgs *u, int in_fd, int out_fd) {
        _cleanup_close_ int in_copy = -EBADF, out_copy = -EBADF;
        char in[64], out[64];
        int status, r;

        /* dup() gives copies without O_CLOEXEC, which the child inherits. */
        in_copy = dup(in_fd);
        out_copy = dup(out_fd);
        if (in_copy < 0 || out_copy < 0)
                return log_error_errno(errno, "Failed to pass the UKI to sbsign: %m");
        snprintf(in, sizeof(in), "/proc/self/fd/%i", in_copy);
        snprintf(out, sizeof(out), "/proc/self/fd/%i", out_copy);

        const char *argv[] = { "sbsign", "--key", u->sign_key, "--cert", u->sign_cert, "--output", out, in, NULL };
        r = spawn_and_wait("sbsign", (char **) argv, &(SpawnOptions) { .search_path = true }, &status);
        if (r == -ENOENT)
                return log_error_errno(r, "sbsign not found (package sbsigntool).");
        if (r < 0)
                return log_error_errno(r, "Failed to run sbsign: %m");
        if (!wait_status_ok(status))
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "sbsign --key %s --cert %s failed.", u->sign_key,
                                       u->sign_cert);
        return 0;
}

/* The UKI goes to an unnamed file in the output directory (output_file_open()) and gets its name
 * only when complete. Signed, the unsigned image is a memfd that sbsign signs into that file. */
static int write_uki(const UkiArgs *u, const char *target, const uint8_t *data, size_t size, mode_t mode) {
        OutputFile out = OUTPUT_FILE_NULL;
        _cleanup_close_ int unsigned_fd = -EBADF;
        int r;

        r = output_file_open(target, mode, &out);
        if (r < 0)
                return r;

        if (u->sign_key) {
                unsigned_fd = memfd_create("foyer-uki-unsigned", MFD_CLOEXEC);
                if (unsigned_fd < 0) {
                        r = log_error_errno(errno, "Failed to create a memory file for the unsigned UKI: %m");
                        goto finish;
                }
                r = write_all(unsigned_fd, data, size);
                if (r < 0) {
                        log_error_errno(r, "Failed to write the unsigned UKI: %m");
                        goto finish;
                }
                r = run_sbsign(u, unsigned_fd, out.fd);
        } else {
                r = write_all(out.fd, data, size);
                if (r < 0)
                        log_error_errno(r, "Failed to write %s: %m", u->output);
        }
        if (r < 0)
                goto finish;
        r = output_file_commit(&out);

finish:
        output_file_done(&out);
        return r;
}

static int make_uki(UkiArgs *u, BuildArgs *a) {
        _cleanup_(blob_done) Blob stub = {}, kernel = {}, initrd = {}, ucode = {}, cmdline = {}, osrel = {}, splash = {};
        const char *kernel_root = NULL, *osrel_root = NULL;
        _cleanup_free_ char *kernel_path = NULL, *osrel_path = NULL, *uname_str = NULL, *out = NULL, *target = NULL,
                *pcrsig = NULL;
        const char *root = a->cli.root ?: "/", *why = NULL;
        PeAddSection add[9];
        size_t n_add = 0, out_size, pcrsig_size = 0, pcrsig_slot = SIZE_MAX;
        PeImage stub_pe, kernel_pe;
        bool secret = false, ucode_section;
        int r, stub_version;

        /* Cheap checks first: a bad output path, stub or key fails before an image is built. */
        r = output_path_resolve(u->output, &target);
        if (r < 0)
                return r;
        r = load_stub(u->stub ?: DEFAULT_STUB, &stub, &stub_pe);
        if (r < 0)
                return r;
        /* systemd-stub 256 and later pass a .ucode section to the kernel in front of every initrd;
         * an earlier stub (or one whose version cannot be read) gets the microcode archive in front
         * of the image in .initrd, where the kernel finds it all the same. */
        stub_version = pe_stub_version(&stub_pe);
        ucode_section = stub_version >= 256;
        if (stub_version >= 0)
                log_debug("Stub %s is systemd-stub %i: microcode goes %s.", u->stub ?: DEFAULT_STUB, stub_version,
                          ucode_section ? "into .ucode" : "in front of the image in .initrd");
        else
                log_debug("Stub %s names no systemd-stub version: microcode goes in front of the image in .initrd.",
                          u->stub ?: DEFAULT_STUB);
        if (u->sign_key) {
                FOREACH_STRING(f, u->sign_key, u->sign_cert)
                        if (access(f, R_OK) < 0)
                                return log_error_errno(errno, "Signing file %s: %m", f);
        }
        if (u->pcr.private_key) {
                r = uki_pcr_prepare(&u->pcr, &stub_pe, u->stub ?: DEFAULT_STUB, stub_version);
                if (r < 0)
                        return r;
        }
        if (u->cmdline) {
                r = load_cmdline(u->cmdline, &cmdline);
                if (r < 0)
                        return r;
        }

        /* The kernel, and its version: --kernel on the build host, else the tree's (read inside it). */
        if (u->kernel)
                kernel_path = strdup(u->kernel);
        else {
                const char *v = u->uname ?: a->cli.kver;
                Probe p = {};

                if (!v) {
                        r = probe_host(root, NULL, &p);
                        if (r < 0)
                                return r;
                        v = p.kver;
                }
                kernel_path = strjoin("/boot/vmlinuz-", v);
                kernel_root = root;
                probe_done(&p);
        }
        if (!kernel_path)
                return log_oom();
        r = load_kernel(kernel_root, kernel_path, &kernel, &kernel_pe);
        if (r < 0)
                return r;
        r = merge_sbat(u, &stub, &stub_pe, &kernel_pe, stub_version);
        if (r < 0)
                return r;
        if (u->uname)
                uname_str = strdup(u->uname);
        else if (a->cli.kver)
                uname_str = strdup(a->cli.kver);
        else {
                uname_str = bzimage_version(&kernel);
                if (!uname_str)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Kernel %s carries no version string; use --uname.", kernel_path);
        }
        if (!uname_str)
                return log_oom();

        if (u->os_release)
                osrel_path = strdup(u->os_release);
        else {
                osrel_root = root;
                r = find_os_release(root, &osrel_path);
                if (r < 0)
                        return r;
        }
        if (!osrel_path)
                return log_oom();
        r = read_blob("os-release", osrel_root, osrel_path, &osrel);
        if (r < 0)
                return r;

        if (u->splash) {
                r = read_blob("splash", NULL, u->splash, &splash);
                if (r < 0)
                        return r;
                if (splash.size < 2 || memcmp(splash.data, "BM", 2) != 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Splash %s is not a BMP image.", u->splash);
        }

        if (u->initrd)
                r = read_initrd(u->initrd, &initrd, &secret);
        else
                r = build_initrd(a, uname_str, u->pcr.private_key, &initrd, ucode_section ? &ucode : NULL, &secret);
        if (r < 0)
                return r;

        /* The stub finds sections by name and measures them in an order of its own (uki-measure.c),
         * so the order here only has to stay the same: the small text sections first, as ukify
         * lays them out, the measured-boot ones after them. */
        add[n_add++] = (PeAddSection) { ".osrel", osrel.data, osrel.size };
        if (cmdline.data)
                add[n_add++] = (PeAddSection) { ".cmdline", cmdline.data, cmdline.size };
        add[n_add++] = (PeAddSection) { ".uname", uname_str, strlen(uname_str) };
        if (splash.data)
                add[n_add++] = (PeAddSection) { ".splash", splash.data, splash.size };
        if (u->pcr.private_key) {
                /* .pcrpkey is measured like the rest, so the signature covers the key it is checked with. */
                add[n_add++] = (PeAddSection) { ".pcrpkey", u->pcr.public_pem, u->pcr.public_size };
                pcrsig_slot = n_add++;  /* filled below; the stub never measures .pcrsig */
                add[pcrsig_slot] = (PeAddSection) { ".pcrsig", NULL, 0 };
        }
        add[n_add++] = (PeAddSection) { ".linux", kernel.data, kernel.size };
        add[n_add++] = (PeAddSection) { ".initrd", initrd.data, initrd.size };
        if (ucode.size > 0)
                add[n_add++] = (PeAddSection) { ".ucode", ucode.data, ucode.size };

        if (u->pcr.private_key) {
                r = uki_pcr_sign(&u->pcr, &stub_pe, stub_version, add, n_add, &pcrsig, &pcrsig_size);
                if (r < 0)
                        return r;
                add[pcrsig_slot] = (PeAddSection) { ".pcrsig", pcrsig, pcrsig_size };
        }

        r = pe_append_sections(&stub_pe, add, n_add, (uint8_t **) &out, &out_size, &why);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "Cannot add sections to stub %s: %s.", u->stub ?: DEFAULT_STUB, why);

        r = write_uki(u, target, (const uint8_t *) out, out_size, secret ? 0600 : 0644);
        if (r < 0)
                return r;
        log_info("Wrote %s: kernel %s, %.1f MiB (initrd %.1f MiB%s)%s%s.", u->output, uname_str,
                 out_size / 1048576.0, initrd.size / 1048576.0, ucode.size > 0 ? ", microcode in .ucode" : "",
                 pcrsig ? ", PCR 11 signed in .pcrsig" : "", u->sign_key ? ", signed" : "");
        return 0;
}

int verb_uki(int argc, char *argv[]) {
        enum {
                ARG_KERNEL = _BUILD_ARG_MAX,
                ARG_INITRD,
                ARG_CMDLINE,
                ARG_OS_RELEASE,
                ARG_UNAME,
                ARG_SPLASH,
                ARG_STUB,
                ARG_SIGN_KEY,
                ARG_SIGN_CERT,
                ARG_PCR_PRIVATE_KEY,
                ARG_PCR_PUBLIC_KEY,
                ARG_PHASES,
        };
        static const struct option options[] = {
                { "help",       no_argument,       NULL, 'h'            },
                { "output",     required_argument, NULL, 'o'            },
                { "kernel",     required_argument, NULL, ARG_KERNEL     },
                { "initrd",     required_argument, NULL, ARG_INITRD     },
                { "cmdline",    required_argument, NULL, ARG_CMDLINE    },
                { "os-release", required_argument, NULL, ARG_OS_RELEASE },
                { "uname",      required_argument, NULL, ARG_UNAME      },
                { "splash",     required_argument, NULL, ARG_SPLASH     },
                { "stub",       required_argument, NULL, ARG_STUB       },
                { "sign-key",   required_argument, NULL, ARG_SIGN_KEY   },
                { "sign-cert",  required_argument, NULL, ARG_SIGN_CERT  },
                { "pcr-private-key", required_argument, NULL, ARG_PCR_PRIVATE_KEY },
                { "pcr-public-key",  required_argument, NULL, ARG_PCR_PUBLIC_KEY  },
                { "phases",          required_argument, NULL, ARG_PHASES          },
                BUILD_ARGS_LONG,
                {}
        };
        UkiArgs u = {};
        BuildArgs a;
        int opt, r = 0;

        build_args_init(&a);
        while (r >= 0 && (opt = getopt_long(argc, argv, "ho:" BUILD_ARGS_SHORT, options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help_uki();
                        build_args_done(&a);
                        return 0;
                case 'o':               u.output = optarg;      break;
                case ARG_KERNEL:        u.kernel = optarg;      break;
                case ARG_INITRD:        u.initrd = optarg;      break;
                case ARG_CMDLINE:       u.cmdline = optarg;     break;
                case ARG_OS_RELEASE:    u.os_release = optarg;  break;
                case ARG_UNAME:         u.uname = optarg;       break;
                case ARG_SPLASH:        u.splash = optarg;      break;
                case ARG_STUB:          u.stub = optarg;        break;
                case ARG_SIGN_KEY:      u.sign_key = optarg;    break;
                case ARG_SIGN_CERT:     u.sign_cert = optarg;   break;
                case ARG_PCR_PRIVATE_KEY: u.pcr.private_key = optarg; break;
                case ARG_PCR_PUBLIC_KEY:  u.pcr.public_key = optarg;  break;
                case ARG_PHASES:          u.pcr.phases = optarg;      break;
                default:
                        r = build_args_parse(&a, opt, optarg);
                        if (r == 0)     /* getopt named the option already */
                                r = usage_hint("uki");
                }
        }
        if (r >= 0 && optind < argc) {
                log_error("uki takes no positional arguments (got \"%s\").", argv[optind]);
                r = usage_hint("uki");
        }
        if (r >= 0 && isempty(u.output)) {
                log_error("uki needs --output (-o).");
                r = usage_hint("uki");
        }
        if (r >= 0 && !u.sign_key != !u.sign_cert)
                r = log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--sign-key and --sign-cert go together.");
        if (r >= 0 && !u.pcr.private_key != !u.pcr.public_key)
                r = log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                    "--pcr-private-key and --pcr-public-key go together (.pcrsig is checked against "
                                    "the key in .pcrpkey).");
        if (r >= 0 && u.pcr.phases && !u.pcr.private_key)
                r = log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--phases only applies with --pcr-private-key.");
        if (r >= 0 && u.initrd && a.any && (a.modules || a.files || a.key_files || a.cli.crypttab ||
                                            a.cli.compression >= 0 || a.cli.level >= 0 || a.cli.no_shell ||
                                            a.cli.microcode >= 0))
                r = log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                    "--initrd names a finished image; the image options (--add-module, --compress, "
                                    "--no-shell, ...) only apply when foyer uki builds one.");
        if (r >= 0)
                r = make_uki(&u, &a);

        uki_pcr_done(&u.pcr);
        build_args_done(&a);
        return r;
}
