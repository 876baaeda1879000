/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The boot loader interface as the gpt-auto generator needs it: whether this is an EFI boot and which
 * partition the loader (systemd-boot or systemd-stub) came from. Reads efivarfs the way systemd 252
 * does, below sysfs_dir() ($FOYER_SYSFS replaces "/sys", so that tests can supply a fake firmware tree). */

#include <stdbool.h>
#include <stddef.h>

#define EFI_LOADER_VENDOR "4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
#define EFI_LOADER_DEVICE_PART_UUID "LoaderDevicePartUUID-" EFI_LOADER_VENDOR

/* Whether <sysfs_dir()>/firmware/efi/ exists. */
bool is_efi_boot(void);
/* Reads the EFI variable file "<name>-<vendor>": returns 0 with its data (after the 4-byte attribute word,
 * followed by three NUL bytes) in *ret and the data size in *ret_size; -ENOENT if it is not set, -ENODATA
 * if it is shorter than the attribute word, -E2BIG if it is larger than 4 MiB, or another negative errno. */
int efi_get_variable(const char *name, void **ret, size_t *ret_size);
/* Converts UTF-16LE data of size bytes to a NUL-terminated UTF-8 string as systemd's utf16_to_utf8() does
 * (unpaired surrogates are skipped, an odd trailing byte ignored, the string ends at the first NUL). */
char *efi_utf16le_to_utf8(const void *data, size_t size);
/* Reads LoaderDevicePartUUID and parses it as systemd 252 does (sscanf() of 16 "%02x" groups, so case,
 * leading white space and trailing text are accepted); on success stores the canonical lower-case form in
 * ret (37 bytes, may be NULL). Returns 0, -ENOENT if the variable is not set, -EIO if it does not parse,
 * or another negative errno. */
int efi_loader_get_device_part_uuid(char *ret);
