/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The pipeline of foyer build: config → probe → plan → resolve → emit (cpio → compress) → commit. */

#include <stdbool.h>

#include "foyer-config.h"

/* Builds the image and publishes it at c->output, or, with out_fd >= 0, writes it into that file
 * (foyer uki's memfd) and leaves c->output alone. The early microcode archive (microcode.h) goes
 * in front of the compressed one, or, with ucode_fd >= 0, into that file alone (foyer uki's .ucode
 * section). ret_keys (optional): the image paths of the key files it holds, NULL when none; an
 * image with keys is written 0600, and anything that embeds it (foyer uki) must be too. */
int build_image(const BuildConfig *c, int out_fd, int ucode_fd, char ***ret_keys);

/* The options of the image itself, shared by foyer build and foyer uki (which builds an image
 * when it is given none): --kver, --root, --compress, --compress-level, --add-module,
 * --add-file, --crypttab, --add-key-file, --no-shell, --microcode, --keymap, --add-keymap, --ssh-unlock, --ssh-host-keys,
 * --network and --verbose. Each verb adds its own (--output, --cmdline, ...). */
typedef struct BuildArgs {
        BuildConfig cli;        /* what the command line set, applied over the files */
        char **modules;
        char **files;
        char **key_files;       /* --add-key-file */
        char **keymaps;         /* --add-keymap */
        bool any;               /* an image option was given */
} BuildArgs;

enum {
        BUILD_ARG_LEVEL = 0x100,
        BUILD_ARG_CRYPTTAB,
        BUILD_ARG_KEY_FILE,
        BUILD_ARG_NO_SHELL,
        BUILD_ARG_MICROCODE,
        BUILD_ARG_NO_TARGET_SETTINGS,
        BUILD_ARG_KEYMAP,
        BUILD_ARG_ADD_KEYMAP,
        BUILD_ARG_SSH_UNLOCK,
        BUILD_ARG_SSH_HOST_KEYS,
        BUILD_ARG_NETWORK,
        _BUILD_ARG_MAX,         /* verbs number their own long-only options from here */
};

#define BUILD_ARGS_SHORT "k:r:c:m:a:v"
#define BUILD_ARGS_LONG                                                              \
        { "kver",           required_argument, NULL, 'k'             },             \
        { "root",           required_argument, NULL, 'r'             },             \
        { "compress",       required_argument, NULL, 'c'             },             \
        { "compress-level", required_argument, NULL, BUILD_ARG_LEVEL },             \
        { "add-module",     required_argument, NULL, 'm'             },             \
        { "add-file",       required_argument, NULL, 'a'             },             \
        { "crypttab",       required_argument, NULL, BUILD_ARG_CRYPTTAB },          \
        { "add-key-file",   required_argument, NULL, BUILD_ARG_KEY_FILE },          \
        { "no-shell",       no_argument,       NULL, BUILD_ARG_NO_SHELL },          \
        { "microcode",      required_argument, NULL, BUILD_ARG_MICROCODE },         \
        { "no-target-settings", no_argument,   NULL, BUILD_ARG_NO_TARGET_SETTINGS }, \
        { "keymap",         required_argument, NULL, BUILD_ARG_KEYMAP },            \
        { "add-keymap",     required_argument, NULL, BUILD_ARG_ADD_KEYMAP },        \
        { "ssh-unlock",     required_argument, NULL, BUILD_ARG_SSH_UNLOCK },        \
        { "ssh-host-keys",  required_argument, NULL, BUILD_ARG_SSH_HOST_KEYS },     \
        { "network",        optional_argument, NULL, BUILD_ARG_NETWORK },           \
        { "verbose",        no_argument,       NULL, 'v'             }

void build_args_init(BuildArgs *a);
void build_args_done(BuildArgs *a);
/* Applies one getopt result: 1 if it was an image option, 0 if it is not one, < 0 on error. */
int build_args_parse(BuildArgs *a, int opt, const char *arg);
/* Reads the configuration files into c (initialised by the caller) and applies the command
 * line on top. */
int build_args_config(BuildArgs *a, BuildConfig *c);
