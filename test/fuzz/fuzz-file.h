/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* For harnesses whose code under test reads a file by path (crypttab, fstab, EFI variables): the
 * input goes into one memfd per process, reused for every input, so that no run touches the disk. */

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

/* Replaces the memfd's contents with data; returns its path ("/proc/self/fd/N"), or NULL on error. */
static inline const char *fuzz_file_path(const uint8_t *data, size_t size) {
        static char path[64];
        static int fd = -1;

        if (fd < 0) {
                fd = memfd_create("fuzz-input", MFD_CLOEXEC);
                if (fd < 0)
                        return NULL;
                snprintf(path, sizeof(path), "/proc/self/fd/%i", fd);
        }
        if (ftruncate(fd, 0) < 0)
                return NULL;
        if (size > 0 && pwrite(fd, data, size, 0) != (ssize_t) size)
                return NULL;
        return path;
}
