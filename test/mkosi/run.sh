#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run.sh MKOSI-VM OUTPUT-DIR DEBIAN-VERSION SYSTEMD-VERSION [MKOSI-VM-ARGS...]
#
# Runs tools/mkosi-vm (build and boot; MKOSI-VM-ARGS such as --profile trixie --qemu go to it),
# then checks its console log on its own: the initrd's PID 1 is systemd SYSTEMD-VERSION (the
# image's own, not one from the build host), foyer's initrd banner names the image's Debian
# DEBIAN-VERSION and comes before the switch-root, the real root's systemd (the same version)
# greets with the image's banner after it and reaches multi-user.target, and the image's report
# says the real root was reached with no failed units. Prints the time from starting the VM to
# the report.
set -euo pipefail

usage="usage: run.sh MKOSI-VM OUTPUT-DIR DEBIAN-VERSION SYSTEMD-VERSION [MKOSI-VM-ARGS...]"
mkosi_vm=${1:?$usage}
outdir=${2:?$usage}
debian=${3:?$usage}
systemd=${4:?$usage}
shift 4
console=$outdir/console.log

fail() {
        echo "FAIL: $*" >&2
        [[ -e $console ]] && { echo "--- last 30 lines of $console ---" >&2; tail -n 30 "$console" >&2; }
        exit 1
}

rm -f "$console"
"$mkosi_vm" --quiet --output-dir "$outdir" "$@" ||
        fail "tools/mkosi-vm $* failed (console: $console, build log: $outdir/build.log)"
[[ -s $console ]] || fail "no console log at $console"

# Lines are "[SECONDS.MS] text"; escape sequences are dropped before matching. A line number
# (grep -n) orders two messages.
plain=$(sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$console")
line() { echo "${1%%:*}"; }
pid1_version() {
        local re=' systemd ([0-9]+)[^ ]* running in system mode'
        [[ $1 =~ $re ]] && echo "${BASH_REMATCH[1]}"
}
# PID 1 logs "systemd[1]: systemd 257.9-1~deb13u1 running in system mode (...)" to the kernel
# log, once in the initrd and once in the real root: the first must come before foyer's banner.
versions=$(grep -n 'systemd\[1\]: systemd [0-9][^ ]* running in system mode' <<<"$plain") ||
        fail "no 'systemd NNN running in system mode' line on the console"
initrd_pid1=$(head -n1 <<<"$versions")
# PID 1 greets with "Welcome to NAME!" up to systemd 255 and "Booting initrd of NAME." in an
# initrd from 256 on; NAME is foyer's initrd-release.
banner=$(grep -E -n -m1 '(Welcome to|Booting initrd of) foyer [^ ]* initrd' <<<"$plain") ||
        fail "foyer's initrd banner (Welcome to / Booting initrd of foyer VERSION initrd ...) is not on the console"
[[ $(line "$initrd_pid1") -lt $(line "$banner") ]] ||
        fail "no systemd version line before foyer's banner: $initrd_pid1"
initrd_version=$(pid1_version "$initrd_pid1")
[[ $initrd_version == "$systemd" ]] ||
        fail "the initrd ran systemd $initrd_version, not the image's $systemd: ${initrd_pid1#*:}"
grep -q "foyer [^ ]* initrd (Debian GNU/Linux $debian (" <<<"$banner" ||
        fail "foyer's banner does not name Debian $debian: ${banner#*:}"
switch=$(grep -n -m1 'Starting initrd-switch-root\.service' <<<"$plain") ||
        fail "the initrd never started initrd-switch-root.service"
[[ $(line "$banner") -lt $(line "$switch") ]] || fail "foyer's banner comes after the switch-root"
# The real root's systemd, the same version, greets with the image's own os-release after that.
root_pid1=$(awk -F: -v s="$(line "$switch")" '$1 > s' <<<"$versions" | head -n1)
[[ -n $root_pid1 ]] || fail "no systemd version line after the switch-root"
root_version=$(pid1_version "$root_pid1")
[[ $root_version == "$systemd" ]] || fail "the real root ran systemd $root_version, not $systemd: ${root_pid1#*:}"
realroot=$(grep -n -m1 "Welcome to Debian GNU/Linux $debian" <<<"$plain") ||
        fail "the image's own systemd never started (no 'Welcome to Debian GNU/Linux $debian')"
[[ $(line "$switch") -lt $(line "$realroot") ]] || fail "the image's banner comes before the switch-root"
multiuser=$(grep -n -m1 'Reached target .*multi-user\.target\|Reached target .*Multi-User System' <<<"$plain") ||
        fail "the real root never reached multi-user.target"
[[ $(line "$realroot") -lt $(line "$multiuser") ]] || fail "multi-user.target was reached before the real root started"
report=$(grep -m1 'FOYER-MKOSI-REPORT ' <<<"$plain") || fail "no FOYER-MKOSI-REPORT line on the console"
grep -q ' root=reached ' <<<"$report" || fail "the report does not say root=reached: $report"
grep -q " os=debian-$debian " <<<"$report" || fail "the report does not say os=debian-$debian: $report"
grep -q ' failed_units=0 ' <<<"$report" || fail "units failed in the booted image: $report"

echo "initrd:    ${initrd_pid1#*:}"
echo "banner:    ${banner#*:}"
echo "report:    ${report}"
t=$(sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p' <<<"$report")
echo "time from power-on (start of the VM) to the report: ${t} s"
