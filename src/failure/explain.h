/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The console messages of foyer-explain: one block per failure, each naming what to look at next. */

#include <stdint.h>
#include <stdio.h>

#include "blockdev.h"
#include "failed-units.h"

typedef struct MissingDevice {
        const char *role;       /* "root", "/usr" */
        const char *given;      /* as written: "root=UUID=…" */
        const char *source;     /* where it was written: "kernel command line", "sysroot.mount" */
        const char *path;       /* what was waited for: "/dev/disk/by-uuid/…" */
        const char *unit;       /* the mount that needed it: "sysroot.mount" */
        const char *vanished;   /* its device unit if that was plugged earlier in this boot (the device
                                 * came and went: unplugged, or its disk failed), else NULL */
} MissingDevice;

/* Writes the "device did not appear" block (or "disappeared", with m->vanished): the spec as given, the
 * path waited for, and each device in devs (n of them) with its identifiers. Returns 0 or the negative errno of a failed write. */
int explain_missing_device(FILE *f, const MissingDevice *m, const BlockDevice *devs, size_t n);

/* Writes the block for a device that is there now but came after the wait for it had ended (a slow
 * disk or driver, or a passphrase typed late): nothing failed, so without this block the emergency
 * shell would come with no word. appeared_usec is when its device unit became active (µs since
 * boot; 0 if unknown) and timeout the wait as systemd prints it ("1min 30s"; NULL if unknown).
 * Returns 0 or the negative errno of a failed write. */
int explain_late_device(FILE *f, const MissingDevice *m, uint64_t appeared_usec, const char *timeout);

/* Writes the block for a device that is there but whose data dm-verity found corrupted (volume, its
 * /dev/mapper name): udev cannot read its file system, so its device unit never becomes ready and the
 * wait for it runs out, which would otherwise read as a device that came too late. Returns 0 or the
 * negative errno of a failed write. */
int explain_corrupted_device(FILE *f, const MissingDevice *m, const char *volume);

/* Writes the block for one failed unit of the given kind; result (e.g. "exit-code") and what (the
 * device of a mount, of a file system check or of an unlock) may be NULL; log (may be NULL or empty)
 * is the end of the unit's own output, quoted in the block (fsck's verdict). Returns 0 or a negative
 * errno. */
int explain_failed_unit(FILE *f, const char *unit, FailureKind kind, const char *result, const char *what,
                        char * const *log);

/* One message of dm-verity about corrupted blocks, as the kernel logs it (verity_handle_err()):
 * "device-mapper: verity: 254:1: data block 0 is corrupted", "... metadata block 9 is corrupted" or
 * "...: reached maximum errors"; message is the text after the ";" of a /dev/kmsg record. Returns 1
 * with the data device as the kernel names it ("254:1") in *ret_devnum and what it said ("data block
 * 0 is corrupted") in *ret_what, 0 if the message is not one of those, or -ENOMEM. */
int verity_message_parse(const char *message, char **ret_devnum, char **ret_what);

/* Writes the block for corruption found by dm-verity: the verity volume (its /dev/mapper name; NULL
 * if unknown), its data device (node, e.g. "vda1"; NULL if unknown) and devnum, and what the kernel
 * said. Returns 0 or a negative errno. */
int explain_verity_corruption(FILE *f, const char *volume, const char *node, const char *devnum, const char *what);
