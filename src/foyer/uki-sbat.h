/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The UKI's SBAT, shim's revocation metadata (https://github.com/rhboot/shim/blob/main/SBAT.md), a
 * CSV text in the .sbat section. The stub carries its own entries. Since systemd 258 the stub's
 * .sbat section is larger than its text (1 KiB, zeros after the entries): room for the UKI builder
 * to write there the entries of everything the UKI is made of, in place, so that the UKI has one
 * .sbat and its layout stays the stub's. ukify writes the stub's entries, then the kernel's (from
 * the kernel's own .sbat, when it has one), then one "uki" entry; foyer writes the same. */

#include <stdint.h>

#include "pe.h"

#define UKI_SBAT_HEADER "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n"
#define UKI_SBAT_ENTRY  "uki,1,UKI,uki,1,https://uapi-group.org/specifications/specs/unified_kernel_image/\n"

/* stub_data is the stub's file, which stub (its parsed headers) borrows; kernel may be NULL.
 * Writes the merged text into the stub's .sbat where the section (as much of it as the file holds
 * and is mapped) has room for it and a NUL, zeros after it; section headers are not changed.
 * Returns 1 when written, 0 when left as it was (*ret_reason says why: no .sbat, no room, not
 * SBAT text). Nothing here logs. */
int uki_sbat_merge(uint8_t *stub_data, const PeImage *stub, const PeImage *kernel, const char **ret_reason);
