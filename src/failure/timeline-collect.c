/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>

#include "failed-units.h"
#include "fileio.h"
#include "foyer-contract.h"
#include "log.h"
#include "strv.h"
#include "timeline-collect.h"

#define TRACE_EVENT_ENABLE FOYER_TRACEFS_DIR "/events/module/module_load/enable"

static int write_file(const char *path, const char *text) {
        _cleanup_fclose_ FILE *f = fopen(path, "we");

        if (!f)
                return negative_errno();
        fputs(text, f);
        return fflush_and_check(f);
}

int timeline_trace_start(void) {
        _cleanup_free_ char *enabled = NULL;
        int r;

        if (access(FOYER_TRACEFS_DIR "/trace", F_OK) < 0 &&
            mount("tracefs", FOYER_TRACEFS_DIR, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return log_warning_errno(errno, "Failed to mount tracefs on %s, module loads will be missing from the timeline: %m",
                                         FOYER_TRACEFS_DIR);
        r = read_full_file(TRACE_EVENT_ENABLE, &enabled, NULL);
        if (r < 0)
                return log_warning_errno(r, "Failed to read %s (a kernel without module tracepoints?), module loads will be missing from the timeline: %m",
                                         TRACE_EVENT_ENABLE);
        if (enabled[0] == '1') {
                log_debug("module:module_load is on already (kernel command line), leaving the trace clock as it is.");
                return 0;
        }
        r = write_file(FOYER_TRACEFS_DIR "/trace_clock", "mono");
        if (r < 0)
                log_warning_errno(r, "Failed to set the trace clock to mono, module load times may be off: %m");
        r = write_file(TRACE_EVENT_ENABLE, "1");
        if (r < 0)
                return log_warning_errno(r, "Failed to turn module:module_load on: %m");
        return 0;
}

static int collect_units(Timeline *t, char **ret_units) {
        char *list_argv[] = { (char *) "systemctl", (char *) "list-units", (char *) "--all", (char *) "--plain",
                              (char *) "--no-legend", (char *) "--full", NULL };
        _cleanup_free_ char *list = NULL, *show = NULL;
        _cleanup_strv_free_ char **units = NULL, **argv = NULL;
        int r;

        r = run_capture(list_argv, &list);
        if (r < 0)
                return log_warning_errno(r, "Failed to list the units (systemctl list-units): %m");
        r = failed_units_parse(list, &units);
        if (r < 0)
                return log_oom();
        if (strv_isempty(units))
                return 0;
        if (strv_extend(&argv, "systemctl") < 0 || strv_extend(&argv, "show") < 0 ||
            strv_extend(&argv, "-p") < 0 ||
            strv_extend(&argv, "Id,InactiveExitTimestampMonotonic,ActiveEnterTimestampMonotonic,"
                               "InactiveEnterTimestampMonotonic,After") < 0 ||
            strv_extend(&argv, "--") < 0)
                return log_oom();
        STRV_FOREACH(u, units)
                if (strv_extend(&argv, *u) < 0)
                        return log_oom();
        r = run_capture(argv, &show);
        if (r < 0)
                return log_warning_errno(r, "Failed to read the units' timestamps (systemctl show): %m");
        r = timeline_parse_units(t, show);
        if (r < 0)
                return log_oom();
        if (ret_units)
                *ret_units = TAKE_PTR(show);
        return 0;
}

static int collect_devices(Timeline *t) {
        char *argv[] = { (char *) "udevadm", (char *) "info", (char *) "--export-db", NULL };
        _cleanup_free_ char *db = NULL;
        int r;

        r = run_capture(argv, &db);
        if (r < 0)
                return log_warning_errno(r, "Failed to read udev's database (udevadm info --export-db): %m");
        r = timeline_parse_udev_db(t, db);
        return r < 0 ? log_oom() : 0;
}

static int collect_modules(Timeline *t) {
        _cleanup_free_ char *trace = NULL, *enabled = NULL;
        int r;

        if (read_full_file(TRACE_EVENT_ENABLE, &enabled, NULL) < 0 || enabled[0] != '1') {
                log_debug("module:module_load is not on, no module loads in the timeline.");
                return 0;
        }
        r = read_full_file(FOYER_TRACEFS_DIR "/trace", &trace, NULL);
        if (r < 0)
                return log_warning_errno(r, "Failed to read %s: %m", FOYER_TRACEFS_DIR "/trace");
        r = timeline_parse_trace(t, trace);
        return r < 0 ? log_oom() : 0;
}

int timeline_collect(Timeline *t, char **ret_units) {
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                return negative_errno();
        t->recorded_us = (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
        /* Each source on its own: a missing one leaves the others worth recording. Only running out
         * of memory stops the collection. */
        if (collect_units(t, ret_units) == -ENOMEM || collect_devices(t) == -ENOMEM ||
            collect_modules(t) == -ENOMEM)
                return -ENOMEM;
        timeline_sort(t);
        return 0;
}

int timeline_save(const Timeline *t) {
        _cleanup_free_ char *text = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;
        int r;

        if (mkdir(FOYER_TIMELINE_DIR, 0755) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Failed to create %s: %m", FOYER_TIMELINE_DIR);
        f = open_memstream(&text, &size);
        if (!f)
                return log_oom();
        r = timeline_write_table(t, f);
        if (r >= 0)
                r = fflush_and_check(f);
        if (r < 0)
                return log_error_errno(r, "Failed to format the timeline: %m");
        fclose(TAKE_PTR(f));
        r = write_string_file_atomic(FOYER_TIMELINE_PATH, text);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s: %m", FOYER_TIMELINE_PATH);
        return 0;
}
