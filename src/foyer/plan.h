/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What goes into the image, as data: the skeleton, binaries, stock units, udev rules, /etc files,
 * foyer's generators and units, and the user's additions. Each adder records why. */

#include "foyer-config.h"
#include "manifest.h"
#include "probe.h"

/* The default module set: enough to find a root on common PCs and VMs. */
extern const char *const plan_default_modules[];

/* Adds everything but the library closure and the kernel modules. */
int plan_image(Manifest *m, const BuildConfig *c, const Probe *p);
