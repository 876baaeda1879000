/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer ls: lists an initrd like lsinitrd (mode, size, path, link target). Reads every
 * compression foyer writes, and several concatenated archives (for example an uncompressed early
 * microcode archive followed by a compressed main one). */

#include <stdint.h>
#include <stdio.h>

int ls_image(const char *path);

/* Lists the image in data (named path in messages) to out. Memory use is bounded whatever the
 * input; max_expanded > 0 also refuses (-EFBIG) input that decompresses to more than that many
 * bytes in all, for callers that bound time too (the fuzzer). Logs its errors. */
int ls_data(const char *path, const uint8_t *data, size_t size, FILE *out, uint64_t max_expanded);
