/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Kernel modules through libkmod: the closure of dependencies, soft dependencies and firmware,
 * then the module index regenerated for exactly that set with depmod. */

#include "manifest.h"
#include "probe.h"

/* Adds wanted modules (missing ones are skipped with a debug message) and required ones (missing
 * ones are an error naming them), with classes the hardware classes of module-classes.c, with
 * everything they need, plus modules.dep and friends. */
int modules_add(Manifest *m, const Probe *p, char * const *wanted, char * const *required, bool classes);
