/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The shells foyer-debug-generator may start: systemd's debug-shell.service (rd.systemd.debug_shell,
 * run with /bin/sh by units/debug-shell.service.d) and the breakpoint shell of
 * units/foyer-break@.service (rd.break=). The generator's drop-in tells the breakpoint shell where the
 * boot stopped (FOYER_BREAK, FOYER_BREAK_WHERE, FOYER_BREAK_NEXT); it says so before the prompt. */

#include "log.h"
#include "plan-shell.h"

#define BREAK_SHELL "/usr/lib/foyer/foyer-break-shell"

static const char break_shell[] =
        "#!/bin/sh\n"
        "# foyer-break-shell: the shell of a breakpoint (foyer-break@.service, rd.break=).\n"
        "# Leaving it ends the unit, and the units ordered after it start.\n"
        "printf '\\n'\n"
        "printf 'foyer: %s: the boot stopped here.\\n' \"${FOYER_BREAK:-rd.break}\"\n"
        "printf 'foyer:   done: %s\\n' \"${FOYER_BREAK_WHERE:-?}\"\n"
        "printf 'foyer:   next: %s\\n' \"${FOYER_BREAK_NEXT:-?}\"\n"
        "printf 'foyer: \"systemctl list-jobs\" shows what waits, \"journalctl -b\" the log so far.\\n'\n"
        "printf 'foyer: type \"exit\" (or Ctrl-D) to leave this shell and resume the boot.\\n\\n'\n"
        "PS1=\"${FOYER_BREAK:-rd.break}# \" exec /bin/sh -i\n";

int plan_shell(Manifest *m, const BuildConfig *c) {
        int r;

        r = plan_add_item(m, UNITDIR "/debug-shell.service", NEED_REQUIRED, "rd.systemd.debug_shell");
        if (r < 0)
                return r;
        return plan_add_text(m, BREAK_SHELL, 0755, break_shell, "rd.break= (foyer-break@.service)");
}
