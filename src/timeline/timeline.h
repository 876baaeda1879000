/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The initrd's boot timeline: when each unit of the initrd's systemd started and finished, when each
 * device appeared to udev and when each kernel module loaded, in microseconds of CLOCK_MONOTONIC
 * (since the kernel started). foyer-timeline (src/failure) collects it in the initrd from what
 * systemctl, udevadm and tracefs say there, and leaves it as a table in FOYER_TIMELINE_PATH, which
 * survives the switch-root with /run; "foyer timeline" prints that table, or draws it as an SVG. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum TimelineKind {
        TIMELINE_UNIT,
        TIMELINE_DEVICE,
        TIMELINE_MODULE,
        _TIMELINE_KIND_MAX,
        _TIMELINE_KIND_INVALID = -22,
} TimelineKind;

/* An end not known: a unit still activating when the record was made, or a point event. */
#define TIMELINE_NONE UINT64_MAX

typedef struct TimelineEvent {
        TimelineKind kind;
        char *name;             /* unit name, device node (or sysfs path), module name */
        uint64_t start_us;
        uint64_t end_us;        /* >= start_us, or TIMELINE_NONE */
} TimelineEvent;

typedef struct Timeline {
        TimelineEvent *events;
        size_t n_events;
        uint64_t recorded_us;   /* when the record was made, or TIMELINE_NONE */
} Timeline;

const char *timeline_kind_to_string(TimelineKind k);
TimelineKind timeline_kind_from_string(const char *s);

void timeline_done(Timeline *t);
/* Adds one event (name copied, with what is not printable text escaped as \xNN by
 * string_escape_unprintable(): C0 and C1 controls and bytes of no valid UTF-8 sequence). end may be
 * TIMELINE_NONE; an end before start is -EINVAL. */
int timeline_add(Timeline *t, TimelineKind kind, const char *name, uint64_t start_us, uint64_t end_us);
/* Orders by start, then kind, then name (then end): the order of the table and of the chart's rows. */
void timeline_sort(Timeline *t);

/* The parsers of what the initrd says. Each adds what it finds to t and skips what it cannot read
 * (a record is still worth having without one odd line). -ENOMEM is the only error. */

/* "systemctl show -p Id,InactiveExitTimestampMonotonic,ActiveEnterTimestampMonotonic,
 * InactiveEnterTimestampMonotonic UNIT..." output: blocks of KEY=VALUE lines, one per unit, separated
 * by empty lines. A unit that never left "inactive" (InactiveExit 0) is left out; its end is when it
 * became active, else (failed) when it became inactive again, else not known yet. */
int timeline_parse_units(Timeline *t, const char *text);

/* "udevadm info --export-db" output: a device appeared at its E: USEC_INITIALIZED=. Only devices with
 * a device node (N:, named /dev/N) or handed to systemd (G: systemd, named by their P: path) count:
 * the rest (CPUs, buses, ...) nothing waits for. */
int timeline_parse_udev_db(Timeline *t, const char *text);
/* The rule above for one device, from wherever it was read: devpath is its path under /sys ("/devices/
 * ..."), node its device node without "/dev/" (or NULL), systemd whether it has udev's "systemd" tag.
 * A device left out is not an error. -ENOMEM is the only error. */
int timeline_add_device(Timeline *t, const char *devpath, const char *node, bool systemd, uint64_t initialized_us);

/* tracefs "trace" output with the module:module_load event: "TASK-PID [CPU] FLAGS SECONDS.MICROS:
 * module_load: NAME [TAINTS]". The trace clock must count from boot (mono, the default local, ...). */
int timeline_parse_trace(Timeline *t, const char *text);

/* The table, as timeline_write_table() writes it: the record file, and "foyer timeline"'s output.
 *   # foyer boot timeline: ms since the kernel started; recorded at 5123.456
 *   kind<TAB>name<TAB>start_ms<TAB>end_ms
 *   unit<TAB>systemd-udevd.service<TAB>812.345<TAB>830.001
 * end_ms is "-" when not known. Lines that are not rows are skipped, and so are rows that do not parse. */
int timeline_parse_table(Timeline *t, const char *text);
int timeline_write_table(const Timeline *t, FILE *f);

/* An SVG chart of t (sorted) like systemd-analyze plot: one row per event, a bar from start to end
 * (a thin mark for a point), colored by kind, with the time axis in seconds. Each bar is a <rect>
 * with data-kind, data-name, data-start-ms and data-end-ms attributes, the values of the table, so
 * that scripts (and the tests) can read the chart back. */
int timeline_write_svg(const Timeline *t, FILE *f);

/* Milliseconds with three decimals, as the table writes them ("-" for TIMELINE_NONE). */
#define TIMELINE_MS_MAX sizeof("18446744073709551.615")
char *timeline_format_ms(char buf[static TIMELINE_MS_MAX], uint64_t us);
/* The inverse: "812.345" (up to three decimals) to microseconds; "-" is TIMELINE_NONE. */
int timeline_parse_ms(const char *s, uint64_t *ret);
