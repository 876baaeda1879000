/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "plan.h"

/* plan-shell.c: what foyer-debug-generator's shells need (debug-shell.service for
 * rd.systemd.debug_shell, the breakpoint shell for rd.break=); with --no-shell instead the marker
 * /etc/foyer/no-shell, after checking that no shell is in the image so far. */
int plan_shell(Manifest *m, const BuildConfig *c);

/* Whether path is a shell (or sulogin) that --no-shell leaves out of the image. */
bool plan_shell_excludes(const BuildConfig *c, const char *path);
