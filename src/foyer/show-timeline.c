/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <getopt.h>

#include "cli.h"
#include "fileio.h"
#include "foyer-contract.h"
#include "log.h"
#include "show-timeline.h"
#include "timeline.h"

static void help_timeline(void) {
        printf("%s timeline [OPTIONS...] [FILE]\n\n"
               "Show the initrd's boot timeline: when each of its units started and finished,\n"
               "each device appeared and each kernel module loaded, in ms since the kernel\n"
               "started. The initrd leaves it in " FOYER_TIMELINE_PATH " (or give FILE).\n\n"
               "     --svg                 Draw it as an SVG chart instead of the table\n"
               "  -h --help                 Show this help\n",
               program_invocation_short_name);
}

int verb_timeline(int argc, char *argv[]) {
        enum { ARG_SVG = 0x100 };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h'     },
                { "svg",  no_argument, NULL, ARG_SVG },
                {}
        };
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };
        _cleanup_free_ char *text = NULL;
        const char *path = FOYER_TIMELINE_PATH;
        bool svg = false;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (opt) {
                case 'h':
                        help_timeline();
                        return 0;
                case ARG_SVG:
                        svg = true;
                        break;
                default:
                        return usage_hint("timeline");
                }
        if (argc - optind > 1) {
                log_error("timeline takes at most one file.");
                return usage_hint("timeline");
        }
        if (optind < argc)
                path = argv[optind];

        r = read_full_file(path, &text, NULL);
        if (r == -ENOENT && optind >= argc)
                return log_error_errno(r, "%s is missing: this boot's initrd recorded no timeline "
                                       "(rd.foyer.timeline was not on the kernel command line, or not a foyer "
                                       "initrd, or one older than the timeline).", path);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);
        r = timeline_parse_table(&t, text);
        if (r < 0)
                return log_oom();
        timeline_sort(&t);
        r = svg ? timeline_write_svg(&t, stdout) : timeline_write_table(&t, stdout);
        if (r >= 0)
                r = fflush_and_check(stdout);
        if (r < 0)
                return log_error_errno(r, "Failed to write the timeline: %m");
        return 0;
}
