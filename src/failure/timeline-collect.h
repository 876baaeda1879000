/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The boot timeline as the initrd knows it right now (src/timeline/timeline.h): PID 1's units
 * (sd-bus), udev's devices (its database) and tracefs's module loads. */

#include "timeline.h"

/* Turns the module:module_load tracepoint on, with the trace clock "mono" (CLOCK_MONOTONIC, the
 * clock of systemd's and udev's timestamps), mounting tracefs first if needed. If the event is on
 * already (trace_event=module:module_load on the kernel command line), leaves the clock as it is:
 * changing it would clear what the kernel recorded since it started. */
int timeline_trace_start(void);

/* Collects the timeline: the units from PID 1 (sd-bus), the devices from udev's database, the module
 * loads from tracefs. A source that cannot be read is logged and left out. If ret_units is not NULL,
 * it gets PID 1's answer in the form of "systemctl show -p Id,...,After UNIT...", which includes each
 * unit's After=. If ret_source_us is not NULL, its _TIMELINE_KIND_MAX entries get how long each
 * source took, by kind. */
int timeline_collect(Timeline *t, char **ret_units, uint64_t *ret_source_us);

/* Writes the table to FOYER_TIMELINE_PATH (atomically). */
int timeline_save(const Timeline *t);
