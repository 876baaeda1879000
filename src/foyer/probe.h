/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Facts about the source tree the image is built from, and for a host-only image about the
 * running system's storage stack. */

#include "hostonly.h"

typedef struct Probe {
        char *kver;             /* kernel version whose modules go into the image */
        char *moddir;           /* <root>/usr/lib/modules/<kver> on the build host */
        char *os_pretty_name;   /* the source OS, for initrd-release */
        const HostStack *host;  /* host-only: what the root, /usr and swap are on (not owned);
                                 * NULL for the generic image */
} Probe;

/* Picks the kernel: the requested one, else the running one if its modules exist in root, else
 * the only one under /usr/lib/modules. Errors list the versions present. */
int probe_host(const char *root, const char *kver, Probe *ret);
void probe_done(Probe *p);
