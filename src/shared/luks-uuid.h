/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* How the rd.luks.* (and, in the initrd, luks.*) kernel command line names a LUKS volume by its UUID,
 * as systemd 252's systemd-cryptsetup-generator reads it. foyer-crypt-generator reads the boot's
 * command line with these; foyer build reads --cmdline with them (the key files and token options it
 * names), so that both take the same words to name the same volume.
 *
 *   luks.uuid=[luks-]UUID
 *   luks.name=UUID=NAME, luks.options=UUID=OPTIONS      UUID a run of [0-9a-fA-F-]
 *   luks.key=UUID=FILE[:DEVICE], luks.data=UUID=DEVICE  UUID a run of [0-9a-zA-Z-]
 *
 * The UUID is kept as written: no case folding, dashes neither added nor removed, so that volumes
 * match by plain string comparison as in 252. Whether a UUID can name a volume at all is
 * id128_is_valid() (id128-util.h); foyer's generator ignores a parameter whose UUID is not, where 252
 * would write a unit for a device that never appears. */

/* A volume named by luks.uuid= alone is called "luks-UUID"; a crypttab line of that name is the volume
 * of that UUID. */
#define LUKS_UUID_NAME_PREFIX "luks-"

/* The UUID of luks.uuid=VALUE: VALUE with one leading "luks-" taken off. Not validated. */
const char *luks_uuid_skip_prefix(const char *value);

/* "UUID=WORD" of luks.name= and luks.options= (252's sscanf("%m[0-9a-fA-F-]=%ms")): UUID a non-empty
 * run of hex digits and dashes, then '=', then WORD, the first whitespace-separated word after it.
 * Returns 1 with both as new strings, 0 if value is not of that form (then the parameter has no UUID:
 * for luks.options= it is the default of all command-line volumes), or -ENOMEM. The UUID is not
 * validated. */
int luks_uuid_split_word(const char *value, char **ret_uuid, char **ret_word);

/* "UUID=REST" of luks.key= and luks.data=: UUID a run of letters, digits and dashes (252 ends it at
 * the first other character), possibly empty, then '='. Returns 1 with the UUID as a new string and
 * *ret_rest pointing into value after the '=', 0 if there is no such prefix (for luks.key= the value
 * is then the default key of all command-line volumes), or -ENOMEM. The UUID is not validated. */
int luks_uuid_split_prefix(const char *value, char **ret_uuid, const char **ret_rest);
