/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The driver's view of planning (build.c): run the planners of plan.c's table in order. The
 * planners themselves are declared in plan.h. */

#include "foyer-config.h"
#include "manifest.h"
#include "probe.h"

/* Adds everything but the library closure and the kernel modules: runs the planners in the order
 * of plan.c's table. */
int plan_image(Manifest *m, const BuildConfig *c, const Probe *p);
/* The kernel modules the planners ask for (their modules hooks, in the table's order), added to
 * *wanted. */
int plan_image_modules(Manifest *m, const BuildConfig *c, const Probe *p, char ***wanted);
