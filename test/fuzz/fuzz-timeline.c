/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The boot timeline's parsers (src/timeline/timeline.c) on arbitrary text, as each of them: systemctl
 * show, udevadm's database, tracefs, and the table itself. No crash; every event has a valid kind, a
 * name of printable text only (no C0 or C1 control, valid UTF-8: string_is_printable()), a start and
 * an end not before it; the table written from what was parsed reads back to the same table; the SVG
 * of it is written. */
#include "fuzz.h"
#include "strv.h"
#include "timeline.h"

static void check(Timeline *t, const char *input) {
        _cleanup_(timeline_done) Timeline back = { .recorded_us = TIMELINE_NONE };
        _cleanup_free_ char *table = NULL, *again = NULL, *svg = NULL;
        size_t size = 0;
        FILE *f;

        for (size_t i = 0; i < t->n_events; i++) {
                const TimelineEvent *e = t->events + i;

                if (!timeline_kind_to_string(e->kind))
                        fuzz_fail("an event of no kind", input);
                if (isempty(e->name) || !string_is_printable(e->name))
                        fuzz_fail("an empty name, or one that is not printable text", input);
                if (e->start_us == TIMELINE_NONE || (e->end_us != TIMELINE_NONE && e->end_us < e->start_us))
                        fuzz_fail("no start, or an end before it", input);
        }
        timeline_sort(t);
        f = open_memstream(&table, &size);
        if (!f)
                return;
        if (timeline_write_table(t, f) < 0)
                fuzz_fail("writing the table failed", input);
        fclose(f);
        if (timeline_parse_table(&back, table) < 0)
                return;
        timeline_sort(&back);
        f = open_memstream(&again, &size);
        if (!f)
                return;
        (void) timeline_write_table(&back, f);
        fclose(f);
        if (!streq(table, again))
                fuzz_fail("the table does not read back to itself", input);
        f = open_memstream(&svg, &size);
        if (!f)
                return;
        if (timeline_write_svg(t, f) < 0)
                fuzz_fail("writing the SVG failed", input);
        fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        int (*const parsers[])(Timeline *, const char *) = {
                timeline_parse_units, timeline_parse_udev_db, timeline_parse_trace, timeline_parse_table,
        };
        _cleanup_free_ char *input = NULL;

        log_set_max_level(LOG_CRIT);
        input = fuzz_strndup(data, size);
        if (!input)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(parsers); i++) {
                _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };

                if (parsers[i](&t, input) < 0)
                        continue;
                check(&t, input);
        }
        return 0;
}
