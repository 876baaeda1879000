/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "plan.h"

/* plan-shell.c: what foyer-debug-generator's shells need (debug-shell.service for
 * rd.systemd.debug_shell, the breakpoint shell for rd.break=); nothing with --no-shell. */
int plan_shell(Manifest *m, const BuildConfig *c);

/* The shells themselves (sh, sulogin, systemd-sulogin-shell), unless --no-shell. Planned after the
 * closure check of the units, as the fixed binary list is, so that a tree without one is reported
 * with the unit that runs it. */
int plan_shell_binaries(Manifest *m, const BuildConfig *c);

/* Whether path is a shell (or sulogin) that --no-shell leaves out of the image: the units' Exec*=
 * programs (plan-units.c) and the closure check (closure.c) skip it. */
bool plan_shell_excludes(const BuildConfig *c, const char *path);

/* With --no-shell, run after everything else is planned (the user's --add-file included): fails if
 * any shell made it into the image, else adds the marker FOYER_NO_SHELL_MARKER. */
int plan_shell_finish(Manifest *m, const BuildConfig *c);
