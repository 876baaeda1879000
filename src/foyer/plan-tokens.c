/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Unlocking LUKS volumes with a TPM2, a FIDO2 key or a PKCS#11 token: what systemd-cryptsetup
 * dlopen()s for them beyond libsystemd-shared's own notes, libcryptsetup's token plugins, the
 * TPM drivers, systemd's PCR measurement units and the fido_id rule.
 *
 * systemd-cryptsetup loads the TCTI (libtss2-tcti-device.so.0 for /dev/tpmrm0) by a name it
 * builds at run time, so no dlopen note names it, and systemd 252's libsystemd-shared has no
 * notes at all (elf-dlopen.c's table stands in, without libfido2 and libp11-kit). The token
 * plugins live in libcryptsetup's token directory, <its libdir>/cryptsetup/.
 *
 * A generic image takes all three where the tree has them (any volume may ask at boot), PKCS#11
 * only where p11-kit's configuration in the tree names a module (without one p11-kit finds no
 * token); a host-only one takes what a volume asks for: its crypttab options (tpm2-device=, fido2-device=,
 * pkcs11-uri= in the image's /etc/crypttab or rd.luks.options= in --cmdline) or the token types
 * enrolled in the LUKS2 headers below the root. A volume asking for one whose libraries the tree
 * lacks fails the build, naming them. */

#include "cmdline.h"
#include "crypttab.h"
#include "elf-file.h"
#include "id128-util.h"
#include "log.h"
#include "luks-uuid.h"
#include "plan.h"
#include "plan-util.h"
#include "util.h"

typedef struct TokenKind {
        const char *name;               /* for messages */
        const char *option;             /* the crypttab option that asks for it */
        const char *luks_type;          /* its LUKS2 token type */
        const char *plugin;             /* libcryptsetup's token plugin */
        const char *libraries[5];       /* what unlocking with it dlopen()s */
        const char *packages;           /* Debian's, for the error */
} TokenKind;

static const TokenKind kinds[_TOKEN_MAX] = {
        [TOKEN_TPM2] = {
                "TPM2", "tpm2-device=", "systemd-tpm2", "libcryptsetup-token-systemd-tpm2.so",
                { "libtss2-esys.so.0", "libtss2-rc.so.0", "libtss2-mu.so.0", "libtss2-tcti-device.so.0" },
                "libtss2-esys-3.0.2-0, libtss2-rc0, libtss2-mu0 (or -mu-4.0.1-0), libtss2-tcti-device0",
        },
        [TOKEN_FIDO2] = {
                "FIDO2", "fido2-device=", "systemd-fido2", "libcryptsetup-token-systemd-fido2.so",
                { "libfido2.so.1" },
                "libfido2-1",
        },
        [TOKEN_PKCS11] = {
                "PKCS#11", "pkcs11-uri=", "systemd-pkcs11", "libcryptsetup-token-systemd-pkcs11.so",
                { "libp11-kit.so.0" },
                "libp11-kit0",
        },
};

/* systemd's PCR measurements in the initrd: 252 and 253 have systemd-pcrphase, later versions
 * systemd-pcrextend behind the same unit; 256 and later add the SRK setup that the cryptsetup
 * units are ordered after. Units of another version are simply missing. */
static const Item tpm2_units[] = {
        { UNITDIR "/systemd-pcrphase-initrd.service",      NEED_OPTIONAL, "measures the initrd phase into PCR 11" },
        { UNITDIR "/systemd-tpm2-setup-early.service",     NEED_OPTIONAL, "the TPM2's storage root key, before unlocking" },
        { UNITDIR "/tpm2.target",                          NEED_OPTIONAL, "the TPM2 device is there" },
};

/* From systemd 261 on, Debian ships systemd's TPM2 units and programs in a package of their own,
 * systemd-tpm, which systemd only recommends (debootstrap, and apt without recommends, leave it
 * out). The initrd's part of it: the boot phase and separator measurements (PCR 11, the PCRs the
 * firmware left, the NvPCR separator), the SRK and NvPCR setup before unlocking, and the NvPCR
 * definitions (/usr/lib/nvpcr/NAME.nvpcr) that systemd-tpm2-setup --early allocates and
 * systemd-cryptsetup and systemd-veritysetup extend. Without them a volume's TPM2 policy over
 * PCR 11, or a UKI's .pcrsig, never matches; so when TPM2 is asked for they are required (the NvPCR
 * definitions the package ships: hardware, verity, and login, which only the real system extends). */
#define SYSTEMD_TPM_SINCE 261
#define NVPCR_DIR "/usr/lib/nvpcr"
static const Item systemd_tpm_files[] = {
        { UNITDIR "/systemd-pcrphase-initrd.service",  NEED_REQUIRED, "measures the initrd phase into PCR 11" },
        { UNITDIR "/systemd-tpm2-setup-early.service", NEED_REQUIRED, "the TPM2's SRK and NvPCRs, before unlocking" },
        { "/usr/lib/systemd/systemd-pcrextend",        NEED_REQUIRED, "program of the PCR measurement units" },
        { "/usr/lib/systemd/systemd-tpm2-setup",       NEED_REQUIRED, "program of systemd-tpm2-setup-early.service" },
        { NVPCR_DIR "/hardware.nvpcr",                 NEED_REQUIRED, "the NvPCR of hardware measurements" },
        { NVPCR_DIR "/verity.nvpcr",                   NEED_REQUIRED, "the NvPCR systemd-veritysetup extends" },
        { UNITDIR "/systemd-pcrosseparator.service",   NEED_OPTIONAL, "the OS separator in the firmware's PCRs" },
        { UNITDIR "/systemd-pcrnvdone.service",        NEED_OPTIONAL, "the NvPCR initialization separator" },
};

static const Item fido2_files[] = {
        { RULESDIR "/60-fido-id.rules", NEED_OPTIONAL, "tags FIDO2 security keys (ID_SECURITY_TOKEN)" },
        { "/usr/lib/udev/fido_id",      NEED_OPTIONAL, "program of 60-fido-id.rules" },
};

/* The required files of systemd-tpm that the tree lacks, appended to *missing. */
static int systemd_tpm_missing(Manifest *m, char ***missing) {
        int r;

        for (size_t i = 0; i < ELEMENTSOF(systemd_tpm_files); i++) {
                _cleanup_free_ char *path = NULL;

                if (systemd_tpm_files[i].need != NEED_REQUIRED)
                        continue;
                r = path_in_root(m->root, systemd_tpm_files[i].path, true, &path);
                if (r == -ENOMEM)
                        return r;
                if ((r < 0 || access(path, F_OK) < 0) && strv_extend(missing, systemd_tpm_files[i].path) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* systemd-tpm's files (systemd 261 and later), and every NvPCR definition of the tree (systemd-cryptsetup
 * ships cryptsetup.nvpcr): systemd-tpm2-setup --early allocates those it finds. */
static int add_systemd_tpm(Manifest *m) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_strv_free_ char **names = NULL;
        int r;

        r = plan_add_items(m, systemd_tpm_files, ELEMENTSOF(systemd_tpm_files));
        if (r < 0)
                return r;
        r = path_in_root(m->root, NVPCR_DIR, false, &dir);
        if (r == -ENOMEM)
                return log_oom();
        if (r >= 0 && dir_list_suffix(dir, ".nvpcr", &names) == -ENOMEM)
                return log_oom();
        STRV_FOREACH(n, names) {
                _cleanup_free_ char *path = strjoin(NVPCR_DIR "/", *n);

                if (!path)
                        return log_oom();
                r = plan_add_item(m, path, NEED_REQUIRED, "an NvPCR that systemd-tpm2-setup allocates");
                if (r < 0)
                        return r;
        }
        return 0;
}

const char *token_kind_name(TokenKind_t t) {
        return t >= 0 && t < _TOKEN_MAX ? kinds[t].name : NULL;
}

static int ask(TokenAsks *a, TokenKind_t t, const char *why) {
        if (a->why[t])
                return 0;
        a->why[t] = strdup(why);
        return a->why[t] ? 0 : -ENOMEM;
}

/* A comma-separated option list: which tokens it asks for. */
static int options_ask(TokenAsks *a, const char *options, const char *why) {
        _cleanup_free_ char *copy = NULL;
        char *p, *o;
        int r;

        if (isempty(options))
                return 0;
        copy = strdup(options);
        if (!copy)
                return -ENOMEM;
        for (p = copy; (o = strsep(&p, ","));)
                for (TokenKind_t t = 0; t < _TOKEN_MAX; t++) {
                        /* A signed PCR policy or a pcrlock policy is TPM2 unlocking too. */
                        const char *option = startswith(o, kinds[t].option) ? kinds[t].option :
                                t == TOKEN_TPM2 && startswith(o, "tpm2-signature=") ? "tpm2-signature=" :
                                t == TOKEN_TPM2 && startswith(o, "tpm2-pcrlock=") ? "tpm2-pcrlock=" : NULL;
                        _cleanup_free_ char *w = NULL;

                        if (!option)
                                continue;
                        w = strjoin(option, " in ", why);
                        if (!w)
                                return -ENOMEM;
                        r = ask(a, t, w);
                        if (r < 0)
                                return r;
                }
        return 0;
}

typedef struct CrypttabAsk {
        TokenAsks *asks;
        const char *why;
} CrypttabAsk;

static int crypttab_ask_entry(const CrypttabEntry *e, void *data) {
        CrypttabAsk *c = data;

        return e->name ? options_ask(c->asks, e->options, c->why) : 0;
}

/* The image's /etc/crypttab, as plan_crypt put it there (--crypttab, or the tree's lines). */
static int image_crypttab_ask(Manifest *m, TokenAsks *a) {
        _cleanup_free_ char *text = NULL;
        const Entry *e = manifest_find(m, "/etc/crypttab");
        CrypttabAsk c = { .asks = a, .why = "the image's /etc/crypttab" };
        int r;

        if (!e)
                return 0;
        if (e->type == ENTRY_FILE)
                r = crypttab_parse(e->source, crypttab_ask_entry, &c);
        else if (e->type == ENTRY_DATA) {
                text = strndup(e->data, e->size);
                r = text ? crypttab_parse_buffer(text, crypttab_ask_entry, &c) : -ENOMEM;
        } else
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", e->type == ENTRY_FILE ? e->source : e->path);
        return 0;
}

/* rd.luks.options=[UUID=]OPTIONS and luks.options= in --cmdline, split as foyer-crypt-generator
 * splits them (luks_uuid_split_word()): with a UUID the options are the first word after it, and a
 * UUID that is not one makes the generator ignore the parameter, so it asks for nothing here
 * either (a token asked for is a build error when its libraries are missing). */
static int cmdline_ask(const char *cmdline, TokenAsks *a) {
        _cleanup_strv_free_ char **words = NULL;
        int r;

        if (isempty(cmdline))
                return 0;
        r = cmdline_split(cmdline, &words);
        if (r < 0)
                return r;
        STRV_FOREACH(w, words) {
                const char *v = startswith(*w, "rd.luks.options=") ?: startswith(*w, "luks.options=");
                _cleanup_free_ char *uuid = NULL, *options = NULL;

                if (!v)
                        continue;
                r = luks_uuid_split_word(v, &uuid, &options);
                if (r < 0)
                        return r;
                if (r > 0 && !id128_is_valid(uuid)) {
                        log_warning("--cmdline: \"%s\" in luks.options= is not a UUID; foyer-crypt-generator "
                                    "ignores the parameter, and so does the build.", uuid);
                        continue;
                }
                r = options_ask(a, r > 0 ? options : v, "rd.luks.options= of --cmdline");
                if (r < 0)
                        return r;
        }
        return 0;
}

void token_asks_done(TokenAsks *a) {
        for (TokenKind_t t = 0; t < _TOKEN_MAX; t++) {
                free(a->why[t]);
                a->why[t] = NULL;
        }
}

int plan_token_asks(Manifest *m, const BuildConfig *c, const Probe *p, TokenAsks *ret) {
        _cleanup_(token_asks_done) TokenAsks a = {};
        int r;

        assert(m);
        assert(c);
        assert(p);
        assert(ret);

        r = image_crypttab_ask(m, &a);
        if (r < 0)
                return r == -ENOMEM ? log_oom() : r;
        r = cmdline_ask(c->cmdline, &a);
        if (r < 0)
                return log_oom();
        /* From 261 on, where the measurements are a package of their own (systemd_tpm_files). */
        if (c->pcr_signed && plan_tree_systemd_version(m->root) >= SYSTEMD_TPM_SINCE &&
            ask(&a, TOKEN_TPM2, "the UKI's .pcrsig (--pcr-private-key)") < 0)
                return log_oom();
        if (p->host)
                STRV_FOREACH(type, p->host->luks_tokens)
                        for (TokenKind_t t = 0; t < _TOKEN_MAX; t++)
                                if (streq(*type, kinds[t].luks_type)) {
                                        _cleanup_free_ char *w = strjoin("a ", *type, " token in a LUKS2 header below the root");

                                        if (!w || ask(&a, t, w) < 0)
                                                return log_oom();
                                }
        for (TokenKind_t t = 0; t < _TOKEN_MAX; t++)
                a.include[t] = a.why[t] || !p->host;
        *ret = a;
        a = (TokenAsks) {};
        return 0;
}

/* The tree's copy of a library by soname, as the loader finds it for systemd-cryptsetup. */
static int find_library(Manifest *m, const ElfFile *cryptsetup, char * const *search_path, const char *name,
                        char **ret) {
        return elf_find_library(m->root, name, cryptsetup, "/usr/lib/systemd", search_path, ret);
}

static int add_library(Manifest *m, const char *path, const char *why) {
        int r = manifest_add_from_root(m, path, why, NULL);

        if (r < 0 && r != -EEXIST)
                return log_error_errno(r, "Failed to add %s: %m", path);
        return 0;
}

/* libcryptsetup's token plugin for the kind, from <libcryptsetup's directory>/cryptsetup/. */
static int add_plugin(Manifest *m, const ElfFile *cryptsetup, char * const *search_path, const TokenKind *k) {
        _cleanup_free_ char *lib = NULL, *dir = NULL, *plugin = NULL, *why = NULL;
        int r;

        r = find_library(m, cryptsetup, search_path, "libcryptsetup.so.12", &lib);
        if (r == -ENOENT) {
                log_debug("No libcryptsetup.so.12 in the tree, no %s token plugin.", k->name);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to look up libcryptsetup.so.12: %m");
        dir = path_dirname(lib);
        plugin = dir ? strjoin(dir, "/cryptsetup/", k->plugin) : NULL;
        why = strjoin("libcryptsetup's ", k->name, " token plugin");
        if (!plugin || !why)
                return log_oom();
        return plan_add_item(m, plugin, NEED_OPTIONAL, why);
}

/* p11-kit's module configuration (system and package modules) and the modules it names: a
 * "module:" without a slash is a file of p11-kit's module directory. With add false, only counts
 * the modules named: returns how many (p11-kit loads no other, so without one no PKCS#11 token can
 * be found), or a negative errno. */
static int p11_modules(Manifest *m, const char *kit, bool add) {
        static const char *const confdirs[] = { "/usr/share/p11-kit/modules", "/etc/pkcs11/modules" };
        _cleanup_free_ char *moddir = NULL;
        int r, found = 0;

        _cleanup_free_ char *libdir = path_dirname(kit);

        moddir = libdir ? strjoin(libdir, "/pkcs11") : NULL;
        if (!moddir)
                return log_oom();

        for (size_t i = 0; i < ELEMENTSOF(confdirs); i++) {
                _cleanup_free_ char *dir = NULL;
                _cleanup_strv_free_ char **names = NULL;

                if (path_in_root(m->root, confdirs[i], false, &dir) < 0)
                        continue;
                if (dir_list_suffix(dir, ".module", &names) < 0)
                        continue;
                STRV_FOREACH(n, names) {
                        _cleanup_free_ char *conf = strjoin(confdirs[i], "/", *n), *src = strjoin(dir, "/", *n);
                        _cleanup_free_ char *text = NULL;

                        if (!conf || !src)
                                return log_oom();
                        if (add) {
                                r = plan_add_item(m, conf, NEED_OPTIONAL, "p11-kit module configuration");
                                if (r < 0)
                                        return r;
                        }
                        if (read_full_file_in_root(m->root, conf, &text, NULL) < 0)
                                continue;
                        for (char *line = text, *next; line; line = next) {
                                _cleanup_free_ char *path = NULL;
                                const char *v;

                                next = strchr(line, '\n');
                                if (next)
                                        *next++ = 0;
                                v = startswith(line, "module:");
                                if (!v)
                                        continue;
                                v += strspn(v, " \t");
                                if (isempty(v))
                                        continue;
                                found++;
                                if (!add)
                                        continue;
                                path = v[0] == '/' ? strdup(v) : strjoin(moddir, "/", v);
                                if (!path)
                                        return log_oom();
                                r = plan_add_item(m, path, NEED_OPTIONAL, "PKCS#11 module p11-kit loads");
                                if (r < 0)
                                        return r;
                        }
                }
        }
        return found;
}

/* An image without systemd-cryptsetup for a UKI with .pcrsig: the PCR measurement units alone. */
static int plan_pcr_signed(Manifest *m, unsigned systemd_version) {
        _cleanup_strv_free_ char **missing = NULL;
        _cleanup_free_ char *names = NULL;

        if (systemd_version < SYSTEMD_TPM_SINCE)
                return plan_add_items(m, tpm2_units, ELEMENTSOF(tpm2_units));
        if (systemd_tpm_missing(m, &missing) < 0)
                return log_oom();
        if (!missing)
                return add_systemd_tpm(m);
        names = strv_join(missing, ", ");
        if (!names)
                return log_oom();
        return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                               "the UKI's .pcrsig (--pcr-private-key) needs the initrd's TPM2 measurements, but %s "
                               "lacks systemd %u's TPM2 units, programs and NvPCR files %s (Debian: systemd-tpm, a "
                               "package of its own since systemd 261).", streq(m->root, "/") ? "/" : m->root,
                               systemd_version, names);
}

int plan_tokens(Manifest *m, const BuildConfig *c, const Probe *p) {
        _cleanup_(token_asks_done) TokenAsks a = {};
        _cleanup_strv_free_ char **search_path = NULL;
        const ElfFile *cryptsetup = NULL;
        unsigned systemd_version;
        const Entry *e;
        int r;

        systemd_version = plan_tree_systemd_version(m->root);
        e = manifest_resolve(m, "/usr/lib/systemd/systemd-cryptsetup");
        if (!e || e->type != ENTRY_FILE) {
                log_debug("No systemd-cryptsetup in the image, no token unlocking.");
                /* A UKI's .pcrsig still needs the phases measured. */
                return c->pcr_signed ? plan_pcr_signed(m, systemd_version) : 0;
        }
        r = elf_file_read_entry(m, e, &cryptsetup);
        if (r < 0)
                return log_error_errno(r, "Failed to parse %s: %m", e->source);
        r = plan_token_asks(m, c, p, &a);
        if (r < 0)
                return r;
        r = elf_search_path(m->root, &search_path);
        if (r < 0)
                return log_error_errno(r, "Failed to read the loader configuration of %s: %m", m->root);

        for (TokenKind_t t = 0; t < _TOKEN_MAX; t++) {
                const TokenKind *k = &kinds[t];
                _cleanup_strv_free_ char **missing = NULL, **tpm_missing = NULL;
                _cleanup_free_ char *why = NULL, *p11_kit = NULL;

                if (!a.include[t]) {
                        log_debug("Host-only: no volume asks for %s unlocking, leaving it out.", k->name);
                        continue;
                }
                /* p11-kit finds tokens only through the modules its configuration names: where the
                 * tree names none, a generic image leaves PKCS#11 out (libp11-kit, libffi and the
                 * plugin, 0.3 MB of zstd) rather than carry an unlock path that finds no token. A
                 * volume that asks for it still gets it. */
                if (t == TOKEN_PKCS11) {
                        r = find_library(m, cryptsetup, search_path, "libp11-kit.so.0", &p11_kit);
                        if (r == -ENOMEM)
                                return log_oom();
                        if (!a.why[t]) {
                                r = r < 0 ? 0 : p11_modules(m, p11_kit, false);
                                if (r < 0)
                                        return r;
                                if (r == 0) {
                                        log_debug("No PKCS#11 module in p11-kit's configuration of the tree, leaving PKCS#11 unlocking out.");
                                        continue;
                                }
                        }
                }
                why = strjoin("unlocking with ", k->name, a.why[t] ? " (" : "", strempty(a.why[t]),
                              a.why[t] ? ")" : " (generic image)");
                if (!why)
                        return log_oom();
                for (size_t i = 0; i < ELEMENTSOF(k->libraries) && k->libraries[i]; i++) {
                        _cleanup_free_ char *path = NULL;

                        r = find_library(m, cryptsetup, search_path, k->libraries[i], &path);
                        if (r == -ENOENT) {
                                if (strv_extend(&missing, k->libraries[i]) < 0)
                                        return log_oom();
                                continue;
                        }
                        if (r < 0)
                                return log_error_errno(r, "Failed to look up %s: %m", k->libraries[i]);
                        r = add_library(m, path, why);
                        if (r < 0)
                                return r;
                }
                if (t == TOKEN_TPM2 && systemd_version >= SYSTEMD_TPM_SINCE) {
                        r = systemd_tpm_missing(m, &tpm_missing);
                        if (r < 0)
                                return log_oom();
                }
                if (missing || (tpm_missing && a.why[t])) {
                        _cleanup_free_ char *names = strv_join(missing, ", "), *tpm_names = strv_join(tpm_missing, ", ");
                        _cleanup_free_ char *tpm_text = NULL;

                        if (!names || !tpm_names)
                                return log_oom();
                        if (tpm_missing && asprintf(&tpm_text, "%ssystemd %u's TPM2 units, programs and NvPCR files %s "
                                                    "(Debian: systemd-tpm, a package of its own since systemd 261)",
                                                    missing ? ", and " : "", systemd_version, tpm_names) < 0)
                                return log_oom();
                        if (a.why[t] && missing)
                                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                                       "%s asks for %s unlocking, but %s lacks %s (Debian: %s)%s.",
                                                       a.why[t], k->name, streq(m->root, "/") ? "/" : m->root,
                                                       names, k->packages, strempty(tpm_text));
                        if (a.why[t])
                                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "%s asks for %s unlocking, but %s lacks %s.",
                                                       a.why[t], k->name, streq(m->root, "/") ? "/" : m->root,
                                                       tpm_text);
                        log_debug("%s unlocking left out of the image: %s not installed.", k->name, names);
                        continue;
                }
                r = add_plugin(m, cryptsetup, search_path, k);
                if (r < 0)
                        return r;

                if (t == TOKEN_TPM2 && systemd_version >= SYSTEMD_TPM_SINCE && !tpm_missing)
                        r = add_systemd_tpm(m);
                else if (t == TOKEN_TPM2)
                        r = plan_add_items(m, tpm2_units, ELEMENTSOF(tpm2_units));
                else if (t == TOKEN_FIDO2)
                        r = plan_add_items(m, fido2_files, ELEMENTSOF(fido2_files));
                else
                        r = p11_kit ? p11_modules(m, p11_kit, true) : 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_tokens_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted) {
        _cleanup_(token_asks_done) TokenAsks asks = {};
        int r;

        assert(m);
        assert(c);
        assert(p);
        assert(wanted);

        /* A generic image takes the TPM drivers with its default set; a host-only one only when a
         * volume unlocks with the TPM2 (they are built in on Debian). */
        if (!p->host || !manifest_find(m, "/usr/lib/systemd/systemd-cryptsetup"))
                return 0;
        r = plan_token_asks(m, c, p, &asks);
        if (r < 0)
                return r;
        if (asks.include[TOKEN_TPM2] && (strv_extend(wanted, "tpm_tis") < 0 || strv_extend(wanted, "tpm_crb") < 0))
                return log_oom();
        return 0;
}
