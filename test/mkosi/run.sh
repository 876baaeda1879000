#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run.sh MKOSI-VM OUTPUT-DIR
#
# Runs tools/mkosi-vm (build and boot), then checks its console log on its own: foyer's initrd
# banner comes before the switch-root, and the booted image's report says the real root was
# reached with no failed units. Prints the time from starting the VM to the report.
set -euo pipefail

mkosi_vm=${1:?usage: run.sh MKOSI-VM OUTPUT-DIR}
outdir=${2:?usage: run.sh MKOSI-VM OUTPUT-DIR}
console=$outdir/console.log

fail() {
        echo "FAIL: $*" >&2
        [[ -e $console ]] && { echo "--- last 30 lines of $console ---" >&2; tail -n 30 "$console" >&2; }
        exit 1
}

rm -f "$console"
"$mkosi_vm" --quiet --output-dir "$outdir" || fail "tools/mkosi-vm failed (console: $console, build log: $outdir/build.log)"
[[ -s $console ]] || fail "no console log at $console"

# Lines are "[SECONDS.MS] text"; escape sequences are dropped before matching.
plain=$(sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$console")
banner=$(grep -n -m1 'Welcome to foyer [^ ]* initrd' <<<"$plain") ||
        fail "foyer's initrd banner (Welcome to foyer VERSION initrd ...) is not on the console"
switch=$(grep -n -m1 'Starting initrd-switch-root\.service' <<<"$plain") ||
        fail "the initrd never started initrd-switch-root.service"
[[ ${banner%%:*} -lt ${switch%%:*} ]] || fail "foyer's banner comes after the switch-root"
# The real root's systemd greets with the image's own os-release after that.
realroot=$(grep -n -m1 'Welcome to Debian GNU/Linux 12' <<<"$plain") ||
        fail "the image's own systemd never started (no 'Welcome to Debian GNU/Linux 12')"
[[ ${switch%%:*} -lt ${realroot%%:*} ]] || fail "the image's banner comes before the switch-root"
report=$(grep -m1 'FOYER-MKOSI-REPORT ' <<<"$plain") || fail "no FOYER-MKOSI-REPORT line on the console"
grep -q ' root=reached ' <<<"$report" || fail "the report does not say root=reached: $report"
grep -q ' failed_units=0 ' <<<"$report" || fail "units failed in the booted image: $report"

echo "banner:    ${banner#*:}"
echo "report:    ${report}"
t=$(sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p' <<<"$report")
echo "time from power-on (start of the VM) to the report: ${t} s"
