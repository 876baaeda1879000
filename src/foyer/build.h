/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The pipeline of foyer build: config → probe → plan → resolve → emit (cpio → compress) → commit. */

#include "foyer-config.h"

int build_image(const BuildConfig *c);
