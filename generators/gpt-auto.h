/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The two halves of foyer-gpt-auto-generator: the generator (gpt-auto-generator.c) and the setup that
 * foyer-gpt-auto-root.service runs once the discovered root is mounted (gpt-auto-root.c). */

#include "foyer-contract.h"

#define GPT_AUTO_ROOT_SERVICE "foyer-gpt-auto-root.service"
#define GPT_AUTO_ROOT_SETUP_ARG "--root-discovered"

/* Discoverable Partitions Specification: x86-64 types and the GPT attribute bits. */
#define GPT_ROOT_X86_64 "4f68bce3-e8cd-4db1-96e7-fbcaf984b709"
#define GPT_USR_X86_64 "8484680c-9521-48c6-9c11-b0720656f69e"
#define GPT_FLAG_NO_AUTO (1ULL << 63)
#define GPT_FLAG_READ_ONLY (1ULL << 60)
#define GPT_FLAG_GROWFS (1ULL << 59)

/* main() for "foyer-gpt-auto-generator --root-discovered": if /sysroot is mounted from /dev/gpt-auto-root,
 * honours the partition's read-only and grow-fs flags and mounts a /usr partition of the same disk on
 * /sysroot/usr (unless mount.usr= is given), logging the PARTUUIDs of the partitions used. Returns an
 * exit status. */
int gpt_auto_root_setup(int argc, char *argv[]);
