/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Early microcode: the uncompressed cpio archive in front of the compressed image from which the
 * x86 kernel loads CPU microcode before anything else runs (the kernel's
 * Documentation/arch/x86/microcode.rst). It holds kernel/x86/microcode/GenuineIntel.bin, the
 * files of Debian's intel-microcode (/lib/firmware/intel-ucode/) concatenated, and
 * AuthenticAMD.bin, the *.bin files of amd64-microcode (/lib/firmware/amd-ucode/) concatenated,
 * both read from the source tree; a vendor whose package is not installed is left out. */

#include <errno.h>
#include <stdint.h>

typedef enum MicrocodeMode {
        MICROCODE_ALL,          /* every vendor's microcode that the tree holds (the default) */
        MICROCODE_HOST,         /* only that of the vendor of the CPU foyer runs on */
        MICROCODE_NONE,         /* no early archive */
        _MICROCODE_MODE_MAX,
        _MICROCODE_MODE_INVALID = -EINVAL,
} MicrocodeMode;

const char *microcode_mode_to_string(MicrocodeMode m);
MicrocodeMode microcode_mode_from_string(const char *s);

/* In the byte order of their files' names, which is the order of the archive. */
typedef enum MicrocodeVendor {
        MICROCODE_VENDOR_AMD,           /* AuthenticAMD.bin */
        MICROCODE_VENDOR_INTEL,         /* GenuineIntel.bin */
        _MICROCODE_VENDOR_MAX,
        _MICROCODE_VENDOR_INVALID = -EINVAL,
} MicrocodeVendor;

/* The vendor whose microcode the kernel loads on the CPU that /proc/cpuinfo (its text in cpuinfo)
 * describes, from the first "vendor_id" line: GenuineIntel is Intel, AuthenticAMD and
 * HygonGenuine (the kernel's AMD loader serves Hygon) are AMD. -ENOENT without a vendor_id line,
 * -EOPNOTSUPP for a vendor the kernel loads no early microcode for. */
MicrocodeVendor microcode_vendor_from_cpuinfo(const char *cpuinfo);
/* The same for the running CPU, reading /proc/cpuinfo. Logs what is wrong. */
MicrocodeVendor microcode_host_vendor(void);

/* The name of the vendor's file in the archive, "GenuineIntel.bin" or "AuthenticAMD.bin". */
const char *microcode_vendor_file(MicrocodeVendor v);

/* Writes the early archive to fd (uncompressed, entries with mtime, owners 0, padded to 512
 * bytes after its trailer, so that the compressed archive written after it starts aligned) when
 * mode lets in a vendor whose microcode root holds. Returns 1 when an archive was written (with
 * its size in *ret_size, if given), 0 when there was nothing to write (nothing is written), or a
 * negative errno, logged. */
int microcode_write_early_cpio(const char *root, MicrocodeMode mode, uint64_t mtime, int fd, uint64_t *ret_size);
