/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* Where the image keeps the static device nodes of its modules (static-nodes.c). */
#define STATIC_NODES_TMPFILES "/usr/lib/tmpfiles.d/foyer-static-nodes.conf"

/* The tmpfiles.d lines for the device nodes listed in the text of a modules.devname (depmod's
 * "MODULE DEVNAME cMAJOR:MINOR" lines), the same lines "kmod static-nodes --format=tmpfiles" writes
 * at boot. A line that is not of that form, or whose DEVNAME is not a plain relative path below
 * /dev, is skipped with a warning naming it. Returns 0 with the text in *ret (empty when there are no
 * nodes), or -ENOMEM. */
int static_nodes_tmpfiles(const char *devname, size_t size, char **ret);
