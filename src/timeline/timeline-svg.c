/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The timeline as an SVG chart, in the manner of systemd-analyze plot: time runs left to right from
 * the kernel's start, one row per event in the order of the table, a bar from start to end. Bars
 * carry the table's values as data-* attributes, and the <svg> element the scale, so that the
 * chart can be checked against the table it was drawn from (test/vm/timeline-check.py). */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>

#include "macro.h"
#include "timeline.h"

/* Pixels per second of boot, and of a row. */
#define SCALE_X 200
#define ROW_HEIGHT 16
#define LEFT 20
#define TOP 40
/* A point event (a device appearing, a module loading) or a bar shorter than this is drawn this wide. */
#define MIN_WIDTH 2.0
#define MAX_TICKS 1000

static const char *const kind_colors[_TIMELINE_KIND_MAX] = {
        [TIMELINE_UNIT] = "#6d9eeb",
        [TIMELINE_DEVICE] = "#93c47d",
        [TIMELINE_MODULE] = "#f6b26b",
};

static void write_escaped(FILE *f, const char *s) {
        for (; *s; s++)
                switch (*s) {
                case '&': fputs("&amp;", f); break;
                case '<': fputs("&lt;", f); break;
                case '>': fputs("&gt;", f); break;
                case '"': fputs("&quot;", f); break;
                case '\'': fputs("&apos;", f); break;
                default: fputc(*s, f);
                }
}

static double x_of(uint64_t us) {
        return LEFT + (double) us * SCALE_X / 1000000.0;
}

int timeline_write_svg(const Timeline *t, FILE *f) {
        uint64_t last = 0, seconds, step;
        double width, height;

        assert(t);
        assert(f);
        for (size_t i = 0; i < t->n_events; i++) {
                last = MAX(last, t->events[i].start_us);
                if (t->events[i].end_us != TIMELINE_NONE)
                        last = MAX(last, t->events[i].end_us);
        }
        if (t->recorded_us != TIMELINE_NONE)
                last = MAX(last, t->recorded_us);
        seconds = last / 1000000 + 1;
        /* A tick every second, but not more than MAX_TICKS of them (a record with absurd times). */
        step = seconds / MAX_TICKS + 1;
        /* Room for the names right of the last bar. */
        width = LEFT + (double) seconds * SCALE_X + 400;
        height = TOP + (double) t->n_events * ROW_HEIGHT + 20;

        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                   "data-px-per-s=\"%d\" data-left=\"%d\">\n"
                   "<title>foyer boot timeline (initrd)</title>\n"
                   "<style>text { font-family: sans-serif; font-size: 11px; } "
                   ".axis { stroke: #ccc; stroke-width: 1; } "
                   ".unit { fill: %s; } .device { fill: %s; } .module { fill: %s; }</style>\n"
                   "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
                   "<text x=\"%d\" y=\"14\">foyer boot timeline: the initrd, in seconds since the kernel "
                   "started (units blue, devices green, modules orange)</text>\n",
                width, height, SCALE_X, LEFT,
                kind_colors[TIMELINE_UNIT], kind_colors[TIMELINE_DEVICE], kind_colors[TIMELINE_MODULE], LEFT);
        for (uint64_t s = 0; s <= seconds; s += step)
                fprintf(f, "<line class=\"axis\" x1=\"%.0f\" y1=\"%d\" x2=\"%.0f\" y2=\"%.0f\"/>"
                           "<text x=\"%.0f\" y=\"%d\">%" PRIu64 "s</text>\n",
                        x_of(s * 1000000), TOP - 10, x_of(s * 1000000), height - 20, x_of(s * 1000000) + 2,
                        TOP - 12, s);

        for (size_t i = 0; i < t->n_events; i++) {
                const TimelineEvent *e = t->events + i;
                const char *kind = timeline_kind_to_string(e->kind);
                char a[TIMELINE_MS_MAX], b[TIMELINE_MS_MAX];
                double x = x_of(e->start_us), w = 0;
                double y = TOP + (double) i * ROW_HEIGHT;

                if (e->end_us != TIMELINE_NONE)
                        w = x_of(e->end_us) - x;
                fprintf(f, "<g><rect class=\"%s\" x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" height=\"%d\" "
                           "data-kind=\"%s\" data-name=\"",
                        kind, x, y, MAX(w, MIN_WIDTH), ROW_HEIGHT - 4, kind);
                write_escaped(f, e->name);
                fprintf(f, "\" data-start-ms=\"%s\" data-end-ms=\"%s\"/><text x=\"%.3f\" y=\"%.0f\">",
                        timeline_format_ms(a, e->start_us), timeline_format_ms(b, e->end_us),
                        x + MAX(w, MIN_WIDTH) + 4, y + ROW_HEIGHT - 6);
                write_escaped(f, e->name);
                if (e->end_us != TIMELINE_NONE)
                        fprintf(f, " (%" PRIu64 " ms)", (e->end_us - e->start_us + 500) / 1000);
                fputs("</text></g>\n", f);
        }
        fputs("</svg>\n", f);
        return ferror(f) ? -EIO : 0;
}
