/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-device.h>

#include "devspec.h"
#include "fileio.h"
#include "foyer-contract.h"
#include "log.h"
#include "parse-util.h"
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

/* PID 1's own socket: there is no D-Bus broker in the initrd (systemctl talks to PID 1 here too). */
#define PID1_PRIVATE_BUS "unix:path=/run/systemd/private"

static const char *const unit_timestamps[] = {
        "InactiveExitTimestampMonotonic", "ActiveEnterTimestampMonotonic", "InactiveEnterTimestampMonotonic",
};

/* What the record needs of one unit: its three timestamps and After=, each asked for with a Get call
 * of its own. The calls are sent before any answer is read, so that the record costs PID 1 a burst
 * of work instead of a round trip per property; and in two rounds: InactiveExitTimestampMonotonic of
 * every loaded unit first, then the rest only of the units that ever started (about half of them). */
typedef struct UnitTimes {
        char *id;
        uint64_t stamps[ELEMENTSOF(unit_timestamps)];
        char **after;
} UnitTimes;

#define UNIT_PROPERTIES (ELEMENTSOF(unit_timestamps) + 1)       /* and After= */

typedef struct PropertyCall {
        UnitTimes *unit;
        size_t index;           /* into unit_timestamps, or ELEMENTSOF(unit_timestamps) for After= */
        size_t *pending;
} PropertyCall;

static int property_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        PropertyCall *c = userdata;
        int r;

        (void) ret_error;
        (*c->pending)--;
        if (sd_bus_message_is_method_error(m, NULL))
                return 0;       /* a unit gone since ListUnits: left out */
        if (c->index < ELEMENTSOF(unit_timestamps)) {
                r = sd_bus_message_read(m, "v", "t", &c->unit->stamps[c->index]);
        } else {
                r = sd_bus_message_enter_container(m, 'v', "as");
                if (r > 0)
                        r = sd_bus_message_read_strv(m, &c->unit->after);
        }
        if (r < 0)
                log_debug_errno(r, "Failed to read a property of %s: %m", c->unit->id);
        return r == -ENOMEM ? r : 0;
}

/* Sends Get calls for properties [first, last) of each unit that passes the filter (all when
 * started_only is false), then reads every answer. */
static int get_properties(sd_bus *bus, UnitTimes *units, size_t n, PropertyCall *calls, size_t first,
                          size_t last, bool started_only) {
        size_t pending = 0;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *path = NULL;

                if (started_only && units[i].stamps[0] == 0)
                        continue;
                r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", units[i].id, &path);
                for (size_t j = first; r >= 0 && j < last; j++) {
                        PropertyCall *c = &calls[i * UNIT_PROPERTIES + j];

                        *c = (PropertyCall) { .unit = &units[i], .index = j, .pending = &pending };
                        r = sd_bus_call_method_async(bus, NULL, "org.freedesktop.systemd1", path,
                                                     "org.freedesktop.DBus.Properties", "Get",
                                                     property_reply, c, "ss", "org.freedesktop.systemd1.Unit",
                                                     j < ELEMENTSOF(unit_timestamps) ? unit_timestamps[j] : "After");
                        if (r >= 0)
                                pending++;
                }
        }
        /* The answers: the callbacks count pending down. */
        while (r >= 0 && pending > 0) {
                r = sd_bus_process(bus, NULL);
                if (r == 0)
                        r = sd_bus_wait(bus, UINT64_MAX);
        }
        return r < 0 ? r : 0;
}

static int list_unit_names(sd_bus *bus, char ***ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_strv_free_ char **names = NULL;
        const char *id;
        int r;

        r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "ListUnits", &error, &reply, NULL);
        if (r < 0)
                return log_warning_errno(r, "Failed to list the units (ListUnits: %s): %m",
                                         error.message ?: "no answer");
        r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(reply, "(ssssssouso)", &id, NULL, NULL, NULL, NULL, NULL, NULL,
                                        NULL, NULL, NULL)) > 0)
                if (strv_extend(&names, id) < 0)
                        return -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(names);
        return 0;
}

/* The answer in the form "systemctl show -p Id,...,After" gives (the journal field's form, which
 * timeline-check.py reads, and timeline_parse_units()'s). */
static int format_units(const UnitTimes *units, size_t n, char **ret) {
        _cleanup_free_ char *text = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "Id=%s\n", units[i].id);
                for (size_t j = 0; j < ELEMENTSOF(unit_timestamps); j++)
                        fprintf(f, "%s=%" PRIu64 "\n", unit_timestamps[j], units[i].stamps[j]);
                fputs("After=", f);
                STRV_FOREACH(a, units[i].after)
                        fprintf(f, "%s%s", a == units[i].after ? "" : " ", *a);
                fputs("\n\n", f);
        }
        if (fflush_and_check(f) < 0)
                return -ENOMEM;
        fclose(TAKE_PTR(f));
        *ret = TAKE_PTR(text);
        return 0;
}

static void unit_times_free_many(UnitTimes *units, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(units[i].id);
                strv_free(units[i].after);
        }
        free(units);
}

static int collect_units(Timeline *t, char **ret_units) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ PropertyCall *calls = NULL;
        _cleanup_free_ char *show = NULL;
        UnitTimes *units = NULL;
        size_t n;
        int r;

        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, PID1_PRIVATE_BUS);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0)
                return log_warning_errno(r, "Failed to connect to PID 1 (%s): %m", PID1_PRIVATE_BUS);
        r = list_unit_names(bus, &names);
        if (r < 0)
                return r;
        n = strv_length(names);
        units = calloc(n, sizeof(UnitTimes));
        calls = calloc(n * UNIT_PROPERTIES, sizeof(PropertyCall));
        if (!units || !calls) {
                free(units);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                units[i].id = TAKE_PTR(names[i]);

        r = get_properties(bus, units, n, calls, 0, 1, false);
        if (r >= 0)
                r = get_properties(bus, units, n, calls, 1, UNIT_PROPERTIES, true);
        if (r >= 0)
                r = format_units(units, n, &show);
        unit_times_free_many(units, n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return log_warning_errno(r, "Failed to read the units' timestamps from PID 1: %m");
        r = timeline_parse_units(t, show);
        if (r < 0)
                return r;
        if (ret_units)
                *ret_units = TAKE_PTR(show);
        return 0;
}

/* udev's database: one file per device it finished with, named by the device's id ("b252:0",
 * "c4:64", "n2", "+pci:0000:00:01.0"), with "I:USEC" (when udev finished with it, USEC_INITIALIZED)
 * and "G:TAG" lines. Only a device with a node (a "b" or "c" id) or the systemd tag counts
 * (timeline_add_device()); only those are looked up in /sys, through sd-device, for the node's name
 * and the path. Cheaper than enumerating /sys as udevadm --export-db does, and the same devices:
 * USEC_INITIALIZED comes from this file. */
#define UDEV_DATA_DIR "/run/udev/data"

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

static int udev_db_entry(int dir_fd, const char *id, uint64_t *ret_usec, bool *ret_systemd) {
        _cleanup_fclose_ FILE *f = NULL;
        char line[256];
        int fd, r;

        fd = openat(dir_fd, id, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "re");
        if (!f) {
                r = negative_errno();
                close(fd);
                return r;
        }
        *ret_usec = 0;
        *ret_systemd = false;
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                if (startswith(line, "I:")) {
                        if (safe_atou64(line + 2, ret_usec) < 0)
                                *ret_usec = 0;
                } else if (streq(line, "G:systemd"))
                        *ret_systemd = true;
        }
        return 0;
}

static int collect_devices(Timeline *t) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        d = opendir(UDEV_DATA_DIR);
        if (!d)
                return log_warning_errno(errno, "Failed to read udev's database (%s): %m", UDEV_DATA_DIR);
        while ((de = readdir(d))) {
                _cleanup_(sd_device_unrefp) sd_device *dev = NULL;
                const char *devpath = NULL, *devname = NULL;
                bool systemd, node = IN_SET(de->d_name[0], 'b', 'c');
                uint64_t usec;
                int r;

                if (de->d_name[0] == '.')
                        continue;
                if (udev_db_entry(dirfd(d), de->d_name, &usec, &systemd) < 0 || usec == 0 ||
                    (!node && !systemd))
                        continue;
                if (sd_device_new_from_device_id(&dev, de->d_name) < 0 ||
                    sd_device_get_devpath(dev, &devpath) < 0)
                        continue;       /* gone since */
                if (!node || sd_device_get_devname(dev, &devname) < 0)
                        devname = NULL;
                else
                        devname = path_startswith(devname, "/dev") ?: devname;
                r = timeline_add_device(t, devpath, devname, systemd, usec);
                if (r < 0)
                        return r;
        }
        return 0;
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

static uint64_t now_us(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int timeline_collect(Timeline *t, char **ret_units, uint64_t *ret_source_us) {
        uint64_t us[_TIMELINE_KIND_MAX + 1];

        assert(t);

        t->recorded_us = us[0] = now_us();
        /* Each source on its own: a missing one leaves the others worth recording. Only running out
         * of memory stops the collection. */
        if (collect_units(t, ret_units) == -ENOMEM)
                return -ENOMEM;
        us[TIMELINE_UNIT + 1] = now_us();
        if (collect_devices(t) == -ENOMEM)
                return -ENOMEM;
        us[TIMELINE_DEVICE + 1] = now_us();
        if (collect_modules(t) == -ENOMEM)
                return -ENOMEM;
        us[TIMELINE_MODULE + 1] = now_us();
        if (ret_source_us)
                for (size_t k = 0; k < _TIMELINE_KIND_MAX; k++)
                        ret_source_us[k] = us[k + 1] - us[k];
        timeline_sort(t);
        return 0;
}

int timeline_save(const Timeline *t) {
        _cleanup_free_ char *text = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;
        int r;

        assert(t);

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
