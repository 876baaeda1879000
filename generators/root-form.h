/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private interface of foyer-root-generator: the special values of root= and mount.usr= that name no
 * device (root-form.c), which systemd version knows each one, and the unit that refuses one the image's
 * systemd does not know or foyer does not implement. */

#include <errno.h>

typedef enum RootForm {
        ROOT_FORM_SPEC,           /* a device spec or path: handled as before */
        ROOT_FORM_OFF,            /* "off": nothing is mounted */
        ROOT_FORM_BIND,           /* "bind:PATH": PATH is bind-mounted */
        ROOT_FORM_FSTAB,          /* "fstab": the initrd's fstab names the mount */
        ROOT_FORM_GPT_AUTO_FORCE, /* "gpt-auto-force": discovery, ignoring factory reset mode */
        ROOT_FORM_DISSECT,        /* "dissect": discovery by dissecting the whole image */
        ROOT_FORM_DISSECT_FORCE,  /* "dissect-force" */
        _ROOT_FORM_MAX,
        _ROOT_FORM_INVALID = -EINVAL,
} RootForm;

/* The form of value; for ROOT_FORM_BIND *ret_bind_path (may be NULL) points into value after "bind:". */
RootForm root_form_from_string(const char *value, const char **ret_bind_path);

/* The first systemd version whose fstab generator knows form (0 for ROOT_FORM_SPEC). */
unsigned root_form_since(RootForm form);

/* Whether foyer writes what that version writes for form (off and bind:); the others are refused. */
int root_form_implemented(RootForm form);

/* Refuses key=value: logs why (reason), writes no mount for it and instead the target
 * foyer-refused-ROLE.target (role "root" or "usr"), required by target_unit (initrd-root-fs.target,
 * initrd-usr-fs.target), whose assertion always fails. That fails target_unit, whose OnFailure= starts
 * emergency.target and foyer's failure report, instead of a wait for a device that cannot come. */
int root_form_refuse(const char *dest, const char *role, const char *key, const char *value,
                     const char *target_unit, const char *reason);
