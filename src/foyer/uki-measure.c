/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "fileio.h"
#include "log.h"
#include "process-util.h"
#include "strv.h"
#include "uki-measure.h"

/* What systemd-stub measures into PCR 11, each from the version on that measures it: the stub
 * walks its own list of section names (src/fundamental/uki.c upstream; .pcrsig is the one it
 * leaves out, since it signs the result), so the order of the sections in the file does not
 * matter. systemd-measure of the same version takes the same list as options (--linux=, ...). */
static const struct {
        const char *name;
        int since;
} measured_sections[] = {
        { ".linux",   252 },
        { ".osrel",   252 },
        { ".cmdline", 252 },
        { ".initrd",  252 },
        { ".ucode",   256 },
        { ".splash",  252 },
        { ".dtb",     252 },
        { ".uname",   254 },
        { ".sbat",    254 },
        { ".pcrpkey", 252 },
};

/* The first stub version that measures section name, -1 if none does. */
static int measured_since(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(measured_sections); i++)
                if (streq(measured_sections[i].name, name))
                        return measured_sections[i].since;
        return -1;
}

static bool stub_measures(int stub_version, const char *name) {
        int since = measured_since(name);

        return since >= 0 && since <= stub_version;
}

void uki_pcr_done(UkiPcr *p) {
        if (p->private_pem)
                explicit_bzero(p->private_pem, p->private_size);
        free(p->private_pem);
        p->private_pem = NULL;
        p->private_size = 0;
        free(p->public_pem);
        p->public_pem = NULL;
        p->public_size = 0;
}

/* Runs tool with argv; returns its wait status and what it printed on stdout, caught in a memfd. */
static int run_tool(const char *tool, char **argv, int *ret_status, char **ret_text, size_t *ret_size) {
        _cleanup_close_ int out = -EBADF;
        int r;

        out = memfd_create("foyer-measure-output", MFD_CLOEXEC);
        if (out < 0)
                return log_error_errno(errno, "Failed to create a memory file for the output of %s: %m", tool);
        r = spawn_and_wait(tool, argv, &(SpawnOptions) { .stdout_fd = out }, ret_status);
        if (r < 0)
                return log_error_errno(r, "Failed to run %s: %m", tool);
        r = read_full_fd_from_start(out, ret_text, ret_size);
        if (r < 0)
                return log_error_errno(r, "Failed to read the output of %s: %m", tool);
        return 0;
}

/* The major version from the first line of "systemd-measure --version" ("systemd 252 (252.39-...)"). */
static int tool_version(const char *tool, int *ret) {
        _cleanup_free_ char *text = NULL;
        const char *argv[] = { tool, "--version", NULL };
        int status, r, v = 0;
        const char *s;

        r = run_tool(tool, (char **) argv, &status, &text, NULL);
        if (r < 0)
                return r;
        s = startswith(text, "systemd ");
        if (!wait_status_ok(status) || !s || sscanf(s, "%d", &v) != 1 || v <= 0)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s --version does not name a systemd version.", tool);
        *ret = v;
        return 0;
}

/* Fails, naming them, when the stub measures sections (of names[]) that the tool cannot be given:
 * a PCR value computed without them would never match. */
static int check_tool(const UkiPcr *p, int stub_version, const char * const *names, size_t n) {
        _cleanup_free_ char *missing = NULL;
        int need = 0;

        for (size_t i = 0; i < n; i++) {
                int since = measured_since(names[i]);

                if (!stub_measures(stub_version, names[i]) || since <= p->tool_version)
                        continue;
                if (strextend_with_separator(&missing, ", ", names[i]) < 0)
                        return log_oom();
                need = MAX(need, since);
        }
        if (!missing)
                return 0;
        return log_error_errno(SYNTHETIC_ERRNO(EOPNOTSUPP),
                               "systemd-measure %i (%s) cannot compute what systemd-stub %i measures: it knows no "
                               "%s section; that needs systemd-measure %i or later ($FOYER_SYSTEMD_MEASURE names "
                               "another).", p->tool_version, p->tool, stub_version, missing, need);
}

/* The private key: whoever can sign PCR policies with it can unlock every volume enrolled with its
 * public key, on any machine whose PCR 11 the signed UKIs reproduce. So it must be the user's own
 * (or root's) and kept from group and others, as ssh does with its keys. It is opened once, without
 * following a symlink, and what was checked is what systemd-measure gets (a memfd, see
 * uki_pcr_sign()): a path opened again later could name another file by then. */
static int load_private_key(UkiPcr *p) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        const char *path = p->private_key;
        size_t size = 0;
        struct stat st;
        int r;

        /* O_NONBLOCK: a FIFO is refused below instead of waiting for a writer. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0) {
                if (errno == ELOOP)
                        return log_error_errno(errno, "--pcr-private-key %s is a symlink; name the key file itself.", path);
                return log_error_errno(errno, "Failed to read PCR private key %s: %m", path);
        }
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat PCR private key %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "PCR private key %s is not a regular file.", path);
        if (st.st_mode & 0077)
                return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                       "--pcr-private-key %s may be read by %s (mode %04o): whoever can read it can "
                                       "sign PCR policies for every volume enrolled with its public key. Refusing; "
                                       "chmod 600 it.", path, st.st_mode & 0007 ? "others" : "its group",
                                       (unsigned) (st.st_mode & 07777));
        if (st.st_uid != geteuid() && st.st_uid != 0)
                return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                       "--pcr-private-key %s is owned by uid %u, neither this user (uid %u) nor root: "
                                       "its owner can replace or read it. Refusing.", path, (unsigned) st.st_uid,
                                       (unsigned) geteuid());
        r = read_full_fd(fd, &text, &size);
        if (r < 0)
                return log_error_errno(r, "Failed to read PCR private key %s: %m", path);
        if (!strstr(text, "-----BEGIN ") || !strstr(text, "PRIVATE KEY-----")) {
                explicit_bzero(text, size);
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "PCR private key %s is not a PEM private key.", path);
        }
        p->private_pem = TAKE_PTR(text);
        p->private_size = size;
        return 0;
}

static int load_public_key(UkiPcr *p) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int r;

        r = read_full_file(p->public_key, &text, &size);
        if (r < 0)
                return log_error_errno(r, "Failed to read PCR public key %s: %m", p->public_key);
        /* systemd-cryptenroll and systemd-cryptsetup read .pcrpkey as PEM SubjectPublicKeyInfo; a
         * certificate or a private key there would only fail at boot. */
        if (strlen(text) != size || !strstr(text, "-----BEGIN PUBLIC KEY-----"))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "PCR public key %s is not a PEM public key (-----BEGIN PUBLIC KEY-----; "
                                       "openssl pkey -in PRIVATE-KEY -pubout writes one).", p->public_key);
        p->public_pem = TAKE_PTR(text);
        p->public_size = size;
        return 0;
}

int uki_pcr_prepare(UkiPcr *p, const PeImage *stub, const char *stub_path, int stub_version) {
        const char *names[] = { ".linux", ".osrel", ".uname", ".pcrpkey", ".sbat" };
        int r;

        assert(p);
        assert(p->private_key);
        assert(p->public_key);
        assert(stub);

        if (stub_version < 252) {
                if (stub_version < 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Stub %s names no systemd-stub version: foyer cannot tell what it "
                                               "measures into PCR 11, so it cannot sign that for .pcrsig.", stub_path);
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "Stub %s is systemd-stub %i: .pcrsig needs systemd-stub 252 or later.", stub_path,
                                       stub_version);
        }

        p->tool = getenv("FOYER_SYSTEMD_MEASURE");
        if (isempty(p->tool))
                p->tool = DEFAULT_SYSTEMD_MEASURE;
        if (access(p->tool, X_OK) < 0)
                return log_error_errno(errno,
                                       "systemd-measure %s: %m. --pcr-private-key needs it to sign the PCR 11 values "
                                       "(Debian: package systemd; $FOYER_SYSTEMD_MEASURE names another).", p->tool);
        r = tool_version(p->tool, &p->tool_version);
        if (r < 0)
                return r;
        /* .linux, .osrel, .uname and .pcrpkey are always there, .sbat where the stub has one; .cmdline,
         * .initrd, .splash are known to every version, .ucode is checked when it exists. */
        r = check_tool(p, stub_version, names, ELEMENTSOF(names) - !pe_find_section(stub, ".sbat"));
        if (r < 0)
                return r;

        r = load_private_key(p);
        if (r < 0)
                return r;
        return load_public_key(p);
}

typedef struct FdList {
        int fds[PE_SECTION_MAX + 3];     /* the sections, .sbat, the public and the private key */
        size_t n;
} FdList;

static void fd_list_done(FdList *l) {
        for (size_t i = 0; i < l->n; i++)
                closep(&l->fds[i]);
        l->n = 0;
}

/* systemd-measure takes file names: each input becomes a memfd that the child inherits and opens
 * as /proc/self/fd/N, so that no data (the initrd may hold key files) needs a name on a file
 * system. The memfds are made inheritable on purpose and closed as soon as the child is done; no
 * other child is started meanwhile. */
static int pass_data(const char *option, const void *data, size_t size, char ***argv, FdList *fds) {
        _cleanup_close_ int fd = -EBADF;
        char *arg = NULL;
        int r;

        if (fds->n >= ELEMENTSOF(fds->fds))
                return log_error_errno(SYNTHETIC_ERRNO(E2BIG), "Too many sections to measure.");
        fd = memfd_create(option, 0);
        if (fd < 0)
                return log_error_errno(errno, "Failed to create a memory file for systemd-measure: %m");
        r = write_all(fd, data, size);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s for systemd-measure: %m", option);
        if (asprintf(&arg, "--%s=/proc/self/fd/%i", option, fd) < 0)
                return log_oom();
        if (strv_consume(argv, arg) < 0)
                return log_oom();
        fds->fds[fds->n++] = TAKE_FD(fd);
        return 0;
}

int uki_pcr_sign(const UkiPcr *p, const PeImage *stub, int stub_version, const PeAddSection *sections,
                 size_t n_sections, char **ret, size_t *ret_size) {
        _cleanup_(fd_list_done) FdList fds = {};
        _cleanup_strv_free_ char **argv = NULL, **phases = NULL;
        _cleanup_free_ uint8_t *sbat = NULL;
        _cleanup_free_ char *json = NULL, *arg = NULL;
        const char *names[PE_SECTION_MAX + 1];
        const PeSection *s;
        size_t n_names = 0, size = 0;
        int status, r;

        assert(p);
        assert(p->public_pem);
        assert(p->private_pem);
        assert(stub);
        assert(sections || n_sections == 0);
        assert(ret);
        assert(ret_size);

        if (strv_extend(&argv, p->tool) < 0 || strv_extend(&argv, "sign") < 0)
                return log_oom();
        for (size_t i = 0; i < n_sections && n_names < ELEMENTSOF(names) - 1; i++) {
                if (!stub_measures(stub_version, sections[i].name))
                        continue;
                names[n_names++] = sections[i].name;
                r = pass_data(sections[i].name + 1, sections[i].data, sections[i].size, &argv, &fds);
                if (r < 0)
                        return r;
        }
        /* The stub measures its own .sbat as it is mapped: VirtualSize bytes, zeros past the file's. */
        s = pe_find_section(stub, ".sbat");
        if (s && stub_measures(stub_version, ".sbat")) {
                size_t have = 0, vsize = s->virtual_size ?: s->raw_size;
                const uint8_t *d = pe_section_data(stub, s, &have);

                if (!d)
                        return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "The stub's .sbat section is out of bounds.");
                sbat = calloc(1, vsize ?: 1);
                if (!sbat)
                        return log_oom();
                memcpy(sbat, d, MIN(have, vsize));
                names[n_names++] = ".sbat";
                r = pass_data("sbat", sbat, vsize, &argv, &fds);
                if (r < 0)
                        return r;
        }
        r = check_tool(p, stub_version, names, n_names);
        if (r < 0)
                return r;

        r = pass_data("public-key", p->public_pem, p->public_size, &argv, &fds);
        if (r < 0)
                return r;
        /* The key as load_private_key() checked it, not the path again. */
        r = pass_data("private-key", p->private_pem, p->private_size, &argv, &fds);
        if (r < 0)
                return r;
        /* One bank: systemd-cryptenroll binds to SHA256 where the TPM has it, and signing the four
         * banks systemd-measure would otherwise do quadruples the work for nothing. */
        if (strv_extend(&argv, "--bank=sha256") < 0 || strv_extend(&argv, "--json=short") < 0)
                return log_oom();
        if (p->phases) {
                if (strv_split(p->phases, " \t\n", &phases) < 0)
                        return log_oom();
                if (strv_isempty(phases))
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--phases names no phase.");
                STRV_FOREACH(ph, phases) {
                        arg = strjoin("--phase=", *ph);
                        if (!arg || strv_consume(&argv, TAKE_PTR(arg)) < 0)
                                return log_oom();
                }
        }

        log_debug("Running %s sign over %zu sections.", p->tool, n_names);
        r = run_tool(p->tool, argv, &status, &json, &size);
        fd_list_done(&fds);
        if (r < 0)
                return r;
        if (!wait_status_ok(status)) {
                log_error("%s sign failed (with --private-key=%s).", p->tool, p->private_key);
                /* Before 254 it asks a TPM for the policy digest (a trial session). */
                if (p->tool_version < 254 && !getenv("SYSTEMD_TPM2_DEVICE") && access("/dev/tpmrm0", F_OK) < 0)
                        log_info("systemd-measure %i signs through a TPM, and this host has none at /dev/tpmrm0; "
                                 "$SYSTEMD_TPM2_DEVICE names another (e.g. swtpm:path=SOCKET with swtpm).",
                                 p->tool_version);
                return -EIO;
        }
        while (size > 0 && strchr(" \t\n", json[size - 1]))
                json[--size] = '\0';
        if (size == 0 || json[0] != '{' || json[size - 1] != '}' || strlen(json) != size)
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "%s sign printed no JSON object.", p->tool);
        *ret = TAKE_PTR(json);
        *ret_size = size;
        return 0;
}
