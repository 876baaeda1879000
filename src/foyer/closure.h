/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The closure check: what the image's units and udev rules run, the units they need and the
 * libraries of every program are in the image. Each miss is logged naming who needs it (the unit,
 * or the rule's file:line) and the missing file; a miss that only an optional feature needs is a
 * warning naming the feature. */

#include "foyer-config.h"
#include "manifest.h"

/* The units' part, as a planner (plan.c runs it before the fixed binary list, so that a program
 * missing from the tree is reported with the unit that runs it): every Exec*= program of every unit
 * in the image, every unit named by a hard dependency, systemd-executor where PID 1 needs it. */
int plan_closure_units(Manifest *m, const BuildConfig *c);

/* After the library closure: every program a udev rule in the image runs (RUN{program},
 * IMPORT{program}, PROGRAM), and the interpreter and DT_NEEDED libraries of every ELF file. */
int closure_check(Manifest *m);
