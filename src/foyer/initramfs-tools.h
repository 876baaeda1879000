/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The configuration initramfs-tools leaves in a tree (the build host's / or --root), read so that
 * a machine that moves from initramfs-tools to foyer keeps what it asked for, or is told by name
 * what foyer does not do: /etc/initramfs-tools/modules (and modules.d), MODULES=, COMPRESS=,
 * COMPRESSLEVEL= and RESUME= of initramfs.conf and conf.d, and the hooks of other packages. Every
 * file is read inside the tree (read_full_file_in_root()), never by host path. docs/foyer.md,
 * "Coming from initramfs-tools", has the rules. */

#include <stdbool.h>

#include "foyer-config.h"

typedef struct InitramfsToolsConf {
        /* The last assignment of each, over initramfs.conf and then the conf.d files in name
         * order (as mkinitramfs sources them); NULL: not set. */
        char *modules;          /* MODULES=: most, dep, list, netboot */
        char *compress;         /* COMPRESS= */
        char *compress_level;   /* COMPRESSLEVEL= */
        char *resume;           /* RESUME= */
} InitramfsToolsConf;

/* Reads ROOT/etc/initramfs-tools/initramfs.conf, then ROOT/usr/share/initramfs-tools/conf.d/ and
 * ROOT/etc/initramfs-tools/conf.d/, the files with the names mkinitramfs takes. Missing files are
 * no error; a file that cannot be read, or is not a regular file, is (logged). An assignment with
 * an unbalanced quote is a warning naming the file and line, and is ignored. */
int initramfs_tools_conf_read(const char *root, InitramfsToolsConf *ret);
void initramfs_tools_conf_done(InitramfsToolsConf *c);

/* The modules of ROOT/etc/initramfs-tools/modules and the files of ROOT/usr/share/initramfs-tools/modules.d:
 * one per line, "#" comments. A line with arguments after the name ("name arg=val") gives the
 * name, and a warning naming the line: foyer passes no options from there (modprobe.d does).
 * A word that is not a module name is a warning and is skipped. */
int initramfs_tools_modules_read(const char *root, char ***ret);

/* The hook scripts mkinitramfs would run: the executable files of ROOT/etc/initramfs-tools/hooks
 * and ROOT/usr/share/initramfs-tools/hooks (one of the same name in /etc wins), as absolute paths
 * in the tree, sorted by name. */
int initramfs_tools_hooks_list(const char *root, char ***ret);

/* The configuration, applied to a build's after foyer's files and the command line
 * (build_args_config()): the tree's (c->root, "/" if NULL) initramfs-tools modules join
 * c->add_modules; COMPRESS= sets c->compression unless foyer's configuration (c->compression_set,
 * a warning if they differ) or the command line (compression_on_command_line, a debug message)
 * set one; MODULES= and what is not taken are logged, warnings for what foyer does differently. Nothing when the tree has no /etc/initramfs-tools or c->target_settings is 0.
 * RESUME= is target.c's (target_fstab_read()). */
int initramfs_tools_apply(BuildConfig *c, bool compression_on_command_line);

/* The hooks foyer did not run, under the same conditions: those of other packages in one warning
 * line, those whose work foyer does itself in a debug one. Called once the image is written, so
 * that a build that fails says only why. */
void initramfs_tools_warn_hooks(const BuildConfig *c);
