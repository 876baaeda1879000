/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The block devices that did appear, probed with libblkid, for the "root device not found" message. */

#include <stddef.h>

typedef struct BlockDevice {
        char *node;                     /* /dev/vda1, or the file that was probed */
        char *type, *uuid, *label;      /* file system (or partition table: PTTYPE/PTUUID) */
        char *partuuid, *partlabel;     /* GPT/MBR entry of a partition */
        int probe_error;                /* 0, or the negative errno that kept it from being probed */
        int ambiguous;                  /* 1 if libblkid found conflicting signatures */
} BlockDevice;

void block_device_done(BlockDevice *d);
/* Frees an array of n devices and the array itself; NULL-safe. */
void block_devices_free(BlockDevice *l, size_t n);

/* Probes node (a block device or a regular file holding an image) for its file system or partition
 * table and, for a partition, its entry. Returns 0 and fills *ret, also when nothing was found or the
 * node could not be opened (then ret->probe_error says why); returns -ENOMEM only. */
int block_device_probe(const char *node, BlockDevice *ret);

/* Probes every block device listed in sys_block (normally /sys/class/block) with a non-zero size, as
 * dev_dir/<name> ('!' in a name stands for '/'), in name order. Returns 0 with a new array in *ret and
 * its length in *ret_n, or a negative errno (the directory could not be read, or out of memory). */
int block_devices_list(const char *sys_block, const char *dev_dir, BlockDevice **ret, size_t *ret_n);

/* "/dev/vda1  TYPE=ext4 UUID=… LABEL=… PARTUUID=… PARTLABEL=…" (values with spaces or odd bytes are
 * quoted and C-escaped), or the reason nothing is known. Returns 0 and a new string, or -ENOMEM. */
int block_device_format(const BlockDevice *d, char **ret);
