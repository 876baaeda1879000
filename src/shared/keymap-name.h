/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The names of console keymaps the image can carry: foyer build compiles a keymap into
 * FOYER_KEYMAP_DIR/NAME.map, and foyer-vconsole-generator looks up the one vconsole.keymap= or the
 * image's vconsole.conf names there and passes the path to loadkeys in ExecStart=. */

#include <stdbool.h>

#define KEYMAP_NAME_MAX 64

/* Whether name can be a keymap's name: 1 to KEYMAP_NAME_MAX ASCII letters, digits and "-_.+", not
 * starting with '.' or '-'. So it is a file name (never "..", never a path) and one word of a unit's
 * ExecStart= that needs no quoting or escaping, and never taken for an option of loadkeys. NULL is
 * not. */
bool keymap_name_is_valid(const char *name);
