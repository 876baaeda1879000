/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "plan.h"

/* plan-shell.c: what foyer-debug-generator's shells need (debug-shell.service for
 * rd.systemd.debug_shell, the breakpoint shell for rd.break=). */
int plan_shell(Manifest *m, const BuildConfig *c);
