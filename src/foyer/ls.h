/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer ls: lists an initrd like lsinitrd (mode, size, path, link target). Reads every
 * compression foyer writes, and several concatenated archives (for example an uncompressed early
 * microcode archive followed by a compressed main one). */

int ls_image(const char *path);
