/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* rd.systemd.break= as systemd 258's systemd-debug-generator reads it in the initrd: four breakpoints,
 * each a unit of systemd's (a shell on the console, ordered at its point), all valid in the initrd;
 * pre-udev and pre-basic are valid on the host too (plain systemd.break=, which the real root's systemd
 * reads), pre-mount and pre-switch-root only in the initrd, and a bare rd.systemd.break means
 * pre-switch-root. foyer's generators only run in the initrd, so only the rd. spelling reaches here. */

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "strv.h"
#include "systemd-break.h"

typedef struct SystemdBreakInfo {
        const char *name;
        const char *unit;
        const char *nearest;    /* foyer's rd.break= at about that point: units/foyer-break@.service.in */
} SystemdBreakInfo;

static const SystemdBreakInfo systemd_breaks[_SYSTEMD_BREAK_MAX] = {
        [SYSTEMD_BREAK_PRE_UDEV] = { "pre-udev", "breakpoint-pre-udev.service", "rd.break=pre-udev" },
        /* After sysinit.target, so after udev's coldplug: foyer's initqueue is the closest. */
        [SYSTEMD_BREAK_PRE_BASIC] = { "pre-basic", "breakpoint-pre-basic.service", "rd.break=initqueue" },
        [SYSTEMD_BREAK_PRE_MOUNT] = { "pre-mount", "breakpoint-pre-mount.service", "rd.break=pre-mount" },
        /* After initrd.target, before initrd-cleanup.service: foyer's pre-pivot exactly. */
        [SYSTEMD_BREAK_PRE_SWITCH_ROOT] = { "pre-switch-root", "breakpoint-pre-switch-root.service", "rd.break=pre-pivot" },
};

const char *systemd_break_unit(SystemdBreakpoint b) {
        assert(b >= 0 && b < _SYSTEMD_BREAK_MAX);
        return systemd_breaks[b].unit;
}

const char *systemd_break_nearest(SystemdBreakpoint b) {
        assert(b >= 0 && b < _SYSTEMD_BREAK_MAX);
        return systemd_breaks[b].nearest;
}

static SystemdBreakpoint systemd_break_from_string(const char *s) {
        for (size_t i = 0; i < ELEMENTSOF(systemd_breaks); i++)
                if (streq(systemd_breaks[i].name, s))
                        return (SystemdBreakpoint) i;
        return _SYSTEMD_BREAK_INVALID;
}

static int add_word(const char *word, unsigned *breakpoints) {
        SystemdBreakpoint b = systemd_break_from_string(word);

        if (b < 0) {
                /* The name goes to the log only as printable text. */
                _cleanup_free_ char *shown = string_escape_unprintable(word, 0);

                if (!shown)
                        return -ENOMEM;
                log_warning("rd.systemd.break=: ignoring unknown breakpoint \"%s\" (known: pre-udev, pre-basic, pre-mount, pre-switch-root).",
                            shown);
                return 0;
        }
        *breakpoints |= 1U << b;
        return 0;
}

int systemd_break_parse(const char *value, unsigned *ret) {
        _cleanup_free_ char *word = NULL;
        unsigned breakpoints = 0;
        size_t n = 0;
        int r;

        assert(ret);

        if (isempty(value)) {
                *ret = 1U << SYSTEMD_BREAK_PRE_SWITCH_ROOT;
                return 0;
        }

        /* systemd's extract_first_word() with "," and no flags but "don't coalesce separators": every
         * comma ends a word (so "a,,b" and "a," hold an empty one), a backslash escapes the next byte, no
         * quotes, no white space trimmed. A backslash at the end is an error for the whole value. */
        word = malloc(strlen(value) + 1);
        if (!word)
                return -ENOMEM;
        for (const char *p = value;; p++) {
                if (*p == '\\') {
                        if (p[1] == '\0')
                                return -EINVAL;
                        word[n++] = *++p;
                        continue;
                }
                if (*p != ',' && *p != '\0') {
                        word[n++] = *p;
                        continue;
                }
                word[n] = '\0';
                r = add_word(word, &breakpoints);
                if (r < 0)
                        return r;
                n = 0;
                if (*p == '\0')
                        break;
        }
        *ret = breakpoints;
        return 0;
}
