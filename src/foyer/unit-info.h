/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the builder needs to know of a unit: the units it pulls in, the programs it runs, and
 * whether it is for the initrd only. Read from the unit file and its drop-ins, as they are in the
 * image or, for a unit not yet in it, in the source tree. */

#include <stdbool.h>

#include "manifest.h"

typedef struct UnitInfo {
        char *name;
        char **hard;            /* Requires=, Requisite=, BindsTo=, OnFailure=, OnSuccess=, Upholds=, .requires/ */
        char **soft;            /* Wants=, .wants/ */
        char **exec;            /* "ExecStart=/usr/bin/prog": the Exec*= setting and the program, in order;
                                 * "ExecStartPre=-prog" when a failure is ignored ('-' prefix) */
        bool initrd_only;       /* ConditionPathExists=/etc/initrd-release or AssertPathExists= of it */
        char **guards;          /* paths of ConditionPathExists=/ConditionFileIsExecutable= (not negated) */
        bool found;             /* the unit file exists (in the image or the tree) */
} UnitInfo;

void unit_info_done(UnitInfo *u);

/* Reads unit name (foo.service, or an instance foo@bar.service, read from foo@.service): from the
 * image when it holds the unit, else from m->root; drop-ins from both. u->found tells whether the
 * unit file exists. Returns 0 or a negative errno (logged). */
int unit_info_read(Manifest *m, const char *name, UnitInfo *u);

/* Whether the image holds the unit (or, for an instance, its template). */
bool unit_in_image(Manifest *m, const char *name);

/* The program of an Exec*= value: the prefixes -@:+!| stripped, the first word unquoted, and
 * whether '-' (ignore failure) was among them. NULL (returned as 0 with *ret NULL) when the value
 * is empty. Returns 0 or -ENOMEM. */
int unit_exec_program(const char *value, char **ret, bool *ret_ignore_failure);

/* Resolves a program name of an Exec*= line as PID 1 would in the image: absolute (in merged-/usr
 * form), or searched in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, first in the image,
 * then in the tree. Returns 0 with the image path in *ret when the image or the tree has it, or
 * -ENOENT with *ret set to the path looked for. */
int unit_program_find(Manifest *m, const char *program, char **ret);
