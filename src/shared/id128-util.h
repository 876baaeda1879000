/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* 128-bit IDs (UUIDs) as systemd spells them in text. */

#include <stdbool.h>

/* Whether s is one 128-bit ID as systemd's id128_is_valid() and sd_id128_from_string() take it: 32 hex
 * digits, or 36 characters with dashes at offsets 8, 13, 18 and 23 and hex digits elsewhere. Either
 * case; nothing may precede or follow it. NULL is not. */
bool id128_is_valid(const char *s);
