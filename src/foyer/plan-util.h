/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers for the planners (plan-*.c): adding paths of the source tree, trees of the build host
 * and generated files, each with the reason it is in the image. plan-util.c calls nothing in
 * plan.c or in a planner; plan.c only orders the planners (test-plan-layering.sh checks both). */

#include <stddef.h>
#include <stdint.h>

#include "manifest.h"

typedef enum Need {
        NEED_REQUIRED,          /* missing → the build fails */
        NEED_OPTIONAL,          /* missing → debug message */
} Need;

typedef struct Item {
        const char *path;
        Need need;
        const char *why;
} Item;

#define UNITDIR "/usr/lib/systemd/system"
#define RULESDIR "/usr/lib/udev/rules.d"

/* Whether the tree has path (its symlinks followed inside the tree) and access(2) grants mode on it:
 * F_OK for a file, X_OK for a program. */
bool plan_tree_has(Manifest *m, const char *path, int mode);

/* Adds a path of the source tree (and what its symlinks point to); a missing NEED_REQUIRED path
 * fails the build naming it and why it is needed. */
int plan_add_item(Manifest *m, const char *path, Need need, const char *why);
/* plan_add_item() of the tree's unit UNITDIR/name and its link from target's .wants/, unless the
 * tree's links already brought one. */
int plan_add_unit_wanted(Manifest *m, const char *name, const char *target, const char *why);
/* plan_add_item() for each of n items. */
int plan_add_items(Manifest *m, const Item *items, size_t n);
/* Splits an option's "SRC[:DEST]" (DEST defaults to SRC and must be absolute); errors name the
 * option and the value. */
int plan_split_file_spec(const char *option, const char *spec, char **ret_src, char **ret_dest);
/* Adds a file or directory tree of the build host under dest. */
int plan_add_tree(Manifest *m, const char *src, const char *dest, const char *reason);
/* Adds a file with the given content. */
int plan_add_text(Manifest *m, const char *path, uint32_t mode, const char *text, const char *reason);
/* Adds one of foyer's boot-time programs (foyer-explain, foyer-timeline, foyer-unlock, ...) at
 * dest, from $FOYER_HELPER_DIR (a build tree; a list of directories like $PATH) or foyer's library
 * directory.
 * without: what the image goes without if the program is missing, which is then only logged (the
 * unit that runs it is skipped by its condition); NULL: the program is required and its absence
 * fails the build naming it. why says what it is in the image for. */
int plan_add_helper(Manifest *m, const char *dest, const char *why, const char *without);
