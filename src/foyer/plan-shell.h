/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "plan.h"

/* plan-shell.c: the shells of emergency and rescue (sh, sulogin) and what foyer-debug-generator's
 * shells need (debug-shell.service for rd.systemd.debug_shell, the breakpoint shell for
 * rd.break=); nothing with --no-shell. */
int plan_shell(Manifest *m, const BuildConfig *c);

/* With --no-shell, run after everything else is planned (the user's --add-file included): fails if
 * any shell made it into the image, else adds the marker FOYER_NO_SHELL_MARKER. */
int plan_shell_finish(Manifest *m, const BuildConfig *c);
