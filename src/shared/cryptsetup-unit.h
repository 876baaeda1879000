/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The two sections every systemd-cryptsetup@.service instance shares, byte-compatible with systemd 252's
 * generator_write_cryptsetup_unit_section() and generator_write_cryptsetup_service_section(), and the
 * names of that service and of its mapped device. Used by foyer-crypt-generator (crypt-disk.c) and by
 * foyer-gpt-auto-generator for the "root" volume; each writes its own dependency lines between the two
 * sections. */

#include <stdio.h>

/* Writes "[Unit]" with Description=, Documentation=, SourcePath=<source> (omitted if source is NULL),
 * DefaultDependencies=no, IgnoreOnIsolate=true and the cryptsetup-pre/udevd/blockdev ordering. The
 * caller appends its own dependency lines. */
void cryptsetup_write_unit_section(FILE *f, const char *source);
/* Writes an empty line and "[Service]" with ExecStart=ROOTLIBEXECDIR/systemd-cryptsetup attach 'NAME'
 * 'WHAT' 'KEY' 'OPTIONS' and the matching ExecStop=; each argument is specifier-escaped and
 * single-quoted, NULL key_file/options become ''. Returns 0, -EBADMSG (nothing written) if an
 * argument fails unit_value_is_safe(), or -ENOMEM. */
int cryptsetup_write_service_section(FILE *f, const char *name, const char *what, const char *key_file,
                                     const char *options);
/* "systemd-cryptsetup@<escaped name>.service" as a new string in *ret (unit_name_escape(), not the path
 * escape); returns 0, -ENAMETOOLONG, -EINVAL or -ENOMEM. */
int cryptsetup_unit_name(const char *name, char **ret);
/* "dev-mapper-<escaped name>.device" as a new string in *ret, escaped the same way; returns 0,
 * -ENAMETOOLONG, -EINVAL or -ENOMEM. */
int cryptsetup_mapper_device_unit(const char *name, char **ret);
