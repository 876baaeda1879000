#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The planners (plan-*.c) use the helpers of plan-util.c, never plan.c: plan.c is only the ordered
# table of planners. Fails if a planner object uses (U) a symbol plan.c's object defines, or if
# there is no planner object to look at.
# Usage: test-plan-layering.sh LIBFOYER_CORE_A
set -eu

lib=$1
command -v nm >/dev/null || { echo "nm is not installed; skipping"; exit 77; }
[ -f "$lib" ] || { echo "FAIL: $lib does not exist"; exit 1; }

# "nm -A" prefixes each line with "ARCHIVE:MEMBER:" (the member is a path in a thin archive);
# keep "OBJECT TYPE SYMBOL", the object by its file name, for defined and undefined symbols.
listing=$(nm -A "$lib" | awk -F: 'NF >= 3 { n = split($2, p, "/"); m = split($NF, f, " ");
        if (m == 3) print p[n], f[2], f[3]; else if (m == 2) print p[n], f[1], f[2] }')
objects=$(awk '{ print $1 }' <<<"$listing" | sort -u)
grep -qx 'plan\.c\.o' <<<"$objects" || { echo "FAIL: no plan.c object in $lib"; exit 1; }

symbols() { # OBJECT TYPE-REGEX
        awk -v o="$1" -v t="$2" '$1 == o && $2 ~ t { print $3 }' <<<"$listing" | sort -u
}
defined=$(symbols plan.c.o '^[TDBR]$')
[ -n "$defined" ] || { echo "FAIL: plan.c's object defines no symbol"; exit 1; }

planners=$(grep -E '^plan-.*\.o$' <<<"$objects" | grep -vx 'plan-util\.c\.o' || true)
[ -n "$planners" ] || { echo "FAIL: no planner objects (plan-*.o) in $lib"; exit 1; }

fail=0
for o in $planners; do
        used=$(symbols "$o" "^U$")
        bad=$(comm -12 <(echo "$defined") <(echo "$used"))
        if [ -n "$bad" ]; then
                echo "FAIL: $o uses what plan.c defines: $(tr "\n" " " <<<"$bad")"
                fail=1
        fi
done
# plan-util.c is below the planners and plan.c: it uses neither.
if grep -qx 'plan-util\.c\.o' <<<"$objects"; then
        used=$(symbols plan-util.c.o '^U$')
        bad=$(grep -E '^plan_' <<<"$used" || true)
        if [ -n "$bad" ]; then
                echo "FAIL: plan-util.c.o calls into the planners or plan.c: $(tr "\n" " " <<<"$bad")"
                fail=1
        fi
fi
[ $fail = 0 ] || exit 1
echo "OK: $(wc -w <<<"$planners") planner objects use nothing of plan.c ($(tr "\n" " " <<<"$defined"))"
