/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "plan.h"

/* plan-debug.c: the emergency shell's tools (pagers, terminfo, lsblk, dmesg, …) and foyer-explain,
 * which says on the console why a boot failed. */
int plan_debug(Manifest *m, const BuildConfig *c);
