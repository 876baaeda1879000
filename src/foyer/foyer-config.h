/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Settings of one build, from the configuration files and the command line. */

#include <errno.h>
#include <stdbool.h>

#include "compress.h"
#include "microcode.h"

/* Network=, --network: whether the image has the network (plan-network.c). */
typedef enum NetworkMode {
        NETWORK_AUTO,           /* when something in the image needs it: SSH unlocking, a network root's
                                 * tool, Clevis's tang pin (the default) */
        NETWORK_YES,            /* always */
        NETWORK_NO,             /* never; SSH unlocking is then refused */
        _NETWORK_MODE_MAX,
        _NETWORK_MODE_INVALID = -EINVAL,
} NetworkMode;

const char *network_mode_to_string(NetworkMode m);
NetworkMode network_mode_from_string(const char *s);

typedef struct BuildConfig {
        char *output;           /* NULL: ./initrd-<kver>.img; may hold %k and %%, see output_expand() */
        char *kver;             /* NULL: probe */
        char *root;             /* source tree, "/" by default */
        Compression compression;
        bool compression_set;   /* Compression= was read (a file or the command line): initramfs-tools'
                                 * COMPRESS= does not apply (initramfs-tools.h) */
        int level;              /* -1: the format's default */
        char **add_modules;
        char **add_files;       /* "SRC[:DEST]" */
        char *cmdline;
        char *crypttab;         /* file to install as /etc/crypttab */
        char **add_key_files;   /* "SRC[:DEST]", installed 0400 */
        char *keymap;           /* Keymap=, --keymap: the console layout instead of the tree's (keymap.h) */
        char **add_keymaps;     /* AddKeymaps=, --add-keymap: more layouts for vconsole.keymap= */
        char *ssh_unlock;       /* SshUnlock=, --ssh-unlock: authorized_keys file on the build host; NULL: no SSH */
        char *ssh_host_keys;    /* SshHostKeys=, --ssh-host-keys: host key directory on the build host;
                                 * NULL: FOYER_SSH_HOST_KEY_DIR in the tree */
        NetworkMode network;    /* Network=, --network; _NETWORK_MODE_INVALID only in BuildArgs.cli ("not given") */
        bool no_shell;          /* --no-shell: no shell in the image, none from the command line */
        int hostonly;           /* HostOnly=, -H/-N: the drivers of this host's root, /usr and swap only;
                                 * -1 in BuildArgs.cli: not given */
        MicrocodeMode microcode; /* which vendors' early microcode goes in front of the image */
        int target_settings;    /* read the tree's own crypttab and fstab (target.h): 1 (default) or 0;
                                 * -1 only in BuildArgs.cli, for "not given" */
        bool pcr_signed;        /* foyer uki --pcr-private-key: the UKI's .pcrsig signs PCR 11 values that
                                 * the image's TPM2 units extend (plan-tokens.c) */
} BuildConfig;

void build_config_init(BuildConfig *c);
void build_config_done(BuildConfig *c);

/* Reads foyer.conf and the conf.d drop-ins. They live on the build host, under
 * $FOYER_CONFIG_ROOT if set (for tests), not under --root: the configuration belongs to whoever
 * runs the build. Drop-ins from /etc/foyer/conf.d/ mask those of the same name in
 * /usr/lib/foyer/conf.d/; all are applied in name order after /etc/foyer/foyer.conf. */
int build_config_load_files(BuildConfig *c);

/* Applies one "Key=value" setting; used by the file parser and exposed for tests. */
int build_config_assign(BuildConfig *c, const char *key, const char *value, const char *file, unsigned line);

/* Refuses a kernel command line with a quote left open, as the generators split it at boot (see
 * cmdline_find_open_quote()): logs "WHERE: unbalanced quote in kernel command line parameter WORD,
 * refusing." and returns -EINVAL; 0 if every quote is closed. For Cmdline= and foyer build's and
 * foyer uki's --cmdline. */
int cmdline_check_quotes(const char *value, const char *where);

/* Output= (and -o) may name the kernel version as %k, and a "%" as %%; any other specifier is
 * refused when the setting is read. output_uses_kver() tells whether the path can be known before
 * the kernel version is; output_expand() makes the path (kver may be NULL if it is not used). */
bool output_uses_kver(const char *pattern);
int output_expand(const char *pattern, const char *kver, char **ret);
