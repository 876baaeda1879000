/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The FDO ELF dlopen metadata (https://systemd.io/ELF_DLOPEN_METADATA/): a note of owner "FDO",
 * type 0x407c0c0a, whose descriptor is a JSON array of objects
 *   { "feature": "tpm", "description": "...", "priority": "suggested", "soname": ["libtss2-esys.so.0"] }
 * and, for libsystemd-shared older than 256 (no notes), the one list of what it dlopen()s. */

#include <stddef.h>

#include "macro.h"

#define NOTE_FDO_DLOPEN 0x407c0c0aU

typedef enum DlopenPriority {
        DLOPEN_REQUIRED,
        DLOPEN_RECOMMENDED,     /* the spec's default */
        DLOPEN_SUGGESTED,
        _DLOPEN_PRIORITY_MAX,
        _DLOPEN_PRIORITY_INVALID = -EINVAL,
} DlopenPriority;

typedef struct DlopenFeature {
        char *feature;          /* NULL when the note names none */
        DlopenPriority priority;
        char **sonames;         /* never empty */
} DlopenFeature;

const char *dlopen_priority_to_string(DlopenPriority p);

/* Parses one note descriptor (trailing NUL padding allowed) strictly: JSON syntax, the top level an
 * array of objects, "soname" a non-empty array of file names (no '/'), "feature" and "description"
 * strings, "priority" one of the three; other keys may hold any JSON value. The top level may also be
 * one such object, and "soname" one string (the spec's first form). Appends the features
 * to (*features, *n). Returns 0, -EBADMSG on anything else (nothing appended), or -ENOMEM. */
int dlopen_note_parse(const char *json, size_t len, DlopenFeature **features, size_t *n);
void dlopen_features_free(DlopenFeature *features, size_t n);

/* The features libsystemd-shared-NNN.so dlopen()s when NNN < 256, which has no notes: returns
 * the number of table entries appended to (*features, *n) (0 for any other file name), or -ENOMEM. */
int dlopen_legacy_features(const char *filename, DlopenFeature **features, size_t *n);
