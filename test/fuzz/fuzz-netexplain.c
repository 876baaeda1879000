/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* foyer-explain's readers for a network root (src/failure/netroot-explain.c) on arbitrary input: the
 * input is read as systemd-networkd's state file of a link, as a DHCP lease file and as the log of
 * mount.nfs or nbd-client, and the blocks are written from what came out. No crash; every value kept
 * and every line written is printable (no control character reaches the console); the cause of a log
 * is the cause of the line it names. */
#include <stdio.h>
#include <stdlib.h>

#include "failed-units.h"
#include "fuzz.h"
#include "macro.h"
#include "netroot-explain.h"
#include "strv.h"

static void check_printable(const char *s, const char *what, const char *input) {
        if (s && !string_is_printable(s))
                fuzz_fail(what, input);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *input = fuzz_strndup(data, size), *address = NULL, *out = NULL;
        _cleanup_(net_link_done) NetLink l = {};
        _cleanup_strv_free_ char **log = NULL;
        size_t line, outsize = 0;
        NetrootCause cause;
        FILE *f;

        if (!input)
                return 0;
        if (net_link_state_parse(input, &l) < 0 || net_lease_address_parse(input, &address) < 0)
                return 0;
        check_printable(l.admin_state, "unprintable ADMIN_STATE kept", input);
        check_printable(l.oper_state, "unprintable OPER_STATE kept", input);
        check_printable(address, "unprintable ADDRESS kept", input);
        l.name = strdup("eth0");
        l.address = TAKE_PTR(address);
        if (!l.name)
                return 0;

        if (log_tail_parse(input, 4, &log) < 0)
                return 0;
        cause = netroot_cause_of_log(log, &line);
        if (line > strv_length(log) || (cause != NETROOT_CAUSE_UNKNOWN) != (line < strv_length(log)))
                fuzz_fail("the line of the cause is out of range", input);
        if (cause != NETROOT_CAUSE_UNKNOWN && netroot_cause_of_line(log[line]) != cause)
                fuzz_fail("the cause of the log is not the cause of its line", input);

        f = open_memstream(&out, &outsize);
        if (!f)
                return 0;
        (void) explain_netroot_failure(f, &(NetrootFailure) { .kind = NETROOT_NFS, .given = input, .server = input,
                                                              .export = input, .options = input, .unit = "sysroot.mount",
                                                              .result = "exit-code" }, log);
        (void) explain_netroot_failure(f, &(NetrootFailure) { .kind = NETROOT_NBD, .given = input, .server = input,
                                                              .port = "10809", .unit = "foyer-nbd-root.service",
                                                              .result = "timeout" }, NULL);
        (void) explain_no_network(f, NULL, NULL, input, &l, 1);
        if (fclose(f) != 0)
                return 0;
        /* Lines end in '\n'; no other byte the console obeys. */
        for (char *p = out; p && *p; p++)
                if (*p == '\n')
                        *p = ' ';
        check_printable(out, "a block with an unprintable byte", input);
        return 0;
}
