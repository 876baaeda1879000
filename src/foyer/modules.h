/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Kernel modules through libkmod: the closure of dependencies, soft dependencies and firmware,
 * then the module index regenerated for exactly that set with depmod. */

#include "manifest.h"
#include "probe.h"

typedef struct ModuleRequest {
        char * const *wanted;   /* names or aliases; missing ones are skipped with a debug message */
        char * const *required; /* --add-module: missing ones are an error naming them */
        /* Host-only: what the host's devices need (missing: an error naming needed_by[i] too). */
        char * const *needed;
        char * const *needed_by;
        bool classes;           /* the hardware classes of module-classes.c */
} ModuleRequest;

/* Adds the modules of the request, with everything they need, plus modules.dep and friends. */
int modules_add(Manifest *m, const Probe *p, const ModuleRequest *req);
