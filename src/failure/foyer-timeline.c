/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* foyer-timeline: the initrd's half of the boot timeline (src/timeline/timeline.h).
 *   foyer-timeline trace    (foyer-timeline-trace.service, early) turns the kernel's
 *                           module:module_load tracepoint on;
 *   foyer-timeline record   (foyer-timeline-record.service, before initrd.target) writes the
 *                           timeline to FOYER_TIMELINE_PATH, where the real root finds it, and logs
 *                           it in one journal entry, for a persistent journal. */

#include <inttypes.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "foyer-contract.h"
#include "log.h"
#include "macro.h"
#include "strv.h"
#include "timeline-collect.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

/* One binary-safe field of journald's native protocol: NAME\n, the size as 64-bit little endian,
 * the value, \n. */
typedef struct BinaryField {
        const char *name;
        uint64_t size_le;
        const char *value;
} BinaryField;

static void binary_field(struct iovec *iov, BinaryField *b, const char *name, const char *value) {
        uint64_t size = strlen(value);

        b->name = name;
        b->value = value;
        b->size_le = htole64(size);
        iov[0] = (struct iovec) { (void *) name, strlen(name) };
        iov[1] = (struct iovec) { (void *) "\n", 1 };
        iov[2] = (struct iovec) { &b->size_le, sizeof(b->size_le) };
        iov[3] = (struct iovec) { (void *) value, size };
        iov[4] = (struct iovec) { (void *) "\n", 1 };
}

/* Logs one journal entry with the table and systemctl's answer. Without journald (or with entries
 * too large for a datagram) the file is still there; say so at debug level only. */
static int journal_send(const char *message, const char *table, const char *units) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        _cleanup_close_ int fd = -EBADF;
        BinaryField fields[2];
        struct iovec iov[3 + 2 * 5];
        size_t n = 0;

        iov[n++] = (struct iovec) { (void *) "PRIORITY=6\nSYSLOG_IDENTIFIER=foyer-timeline\n",
                                    strlen("PRIORITY=6\nSYSLOG_IDENTIFIER=foyer-timeline\n") };
        iov[n++] = (struct iovec) { (void *) "MESSAGE=", strlen("MESSAGE=") };
        iov[n++] = (struct iovec) { (void *) message, strlen(message) };
        /* The message must end in a newline before the next field. */
        binary_field(iov + n, &fields[0], "\n" FOYER_TIMELINE_FIELD, table);
        n += 5;
        if (units) {
                binary_field(iov + n, &fields[1], FOYER_TIMELINE_UNITS_FIELD, units);
                n += 5;
        }

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (sendmsg(fd, &(struct msghdr) { .msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = iov,
                                          .msg_iovlen = n }, MSG_NOSIGNAL) < 0)
                return negative_errno();
        return 0;
}

static uint64_t clock_ms(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Milliseconds since this process started: now less its start time (field 22 of /proc/self/stat,
 * in clock ticks since boot; CLOCK_BOOTTIME, which the initrd's boot has no suspend to tell from
 * CLOCK_MONOTONIC). 0 if not known. */
static uint64_t process_runtime_ms(void) {
        _cleanup_free_ char *stat = NULL;
        unsigned long long start;
        const char *p;
        long hz = sysconf(_SC_CLK_TCK);

        if (hz <= 0 || read_full_file("/proc/self/stat", &stat, NULL) < 0)
                return 0;
        p = strrchr(stat, ')');         /* the command name may hold spaces */
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                         &start) != 1)
                return 0;
        return clock_ms(CLOCK_BOOTTIME) - (uint64_t) start * 1000 / (uint64_t) hz;
}

static int verb_record(void) {
        _cleanup_(timeline_done) Timeline t = { .recorded_us = TIMELINE_NONE };
        _cleanup_free_ char *units = NULL, *table = NULL, *message = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0, counts[_TIMELINE_KIND_MAX] = {};
        uint64_t source_us[_TIMELINE_KIND_MAX];
        int r;

        r = timeline_collect(&t, &units, source_us);
        if (r < 0)
                return log_oom();
        r = timeline_save(&t);
        if (r < 0)
                return r;

        for (size_t i = 0; i < t.n_events; i++)
                counts[t.events[i].kind]++;
        /* What the record cost the boot, from this process's start (the kernel's count of its
         * runtime, which includes loading it) to the table on disk: it runs on the critical path. */
        if (asprintf(&message, "Recorded the boot timeline in %s: %zu units, %zu devices, %zu modules, "
                     "in %" PRIu64 " ms (%" PRIu64 " ms of CPU; reading the units took %" PRIu64 " ms, the devices %"
                     PRIu64 " ms, the modules %" PRIu64 " ms).",
                     FOYER_TIMELINE_PATH, counts[TIMELINE_UNIT], counts[TIMELINE_DEVICE],
                     counts[TIMELINE_MODULE], process_runtime_ms(), clock_ms(CLOCK_PROCESS_CPUTIME_ID),
                     source_us[TIMELINE_UNIT] / 1000, source_us[TIMELINE_DEVICE] / 1000,
                     source_us[TIMELINE_MODULE] / 1000) < 0)
                return log_oom();
        f = open_memstream(&table, &size);
        if (!f || timeline_write_table(&t, f) < 0)
                return log_oom();
        fclose(TAKE_PTR(f));
        r = journal_send(message, table, units);
        if (r == -EMSGSIZE)
                r = journal_send(message, table, NULL);
        if (r < 0) {
                log_debug_errno(r, "Failed to log the timeline to the journal: %m");
                log_info("%s", message);
        }
        return 0;
}

int main(int argc, char *argv[]) {
        int r;

        log_set_target(LOG_TARGET_CONSOLE);
        log_parse_environment();
        log_open();
        if (argc != 2 || (!streq(argv[1], "trace") && !streq(argv[1], "record"))) {
                log_error("Usage: %s trace|record", program_invocation_short_name);
                return EXIT_FAILURE;
        }
        if (streq(argv[1], "trace")) {
                /* A kernel without the tracepoint boots as well, with a timeline without modules:
                 * timeline_trace_start() said so; the unit does not fail for it. */
                (void) timeline_trace_start();
                return EXIT_SUCCESS;
        }
        r = verb_record();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
