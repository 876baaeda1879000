#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What plan-debug.c puts into an image: foyer-explain and foyer-timeline from $FOYER_HELPER_DIR
# (and nothing, without failing, when they are not there), the units that run them and their
# drop-ins, the shell's tools and the terminal descriptions, as far as the build host has them.
# Usage: test-plan-debug.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR
set -eu
foyer=$1 helper=$4
export FOYER_GENERATOR_DIR=$2 FOYER_UNIT_DIR=$3

if ! compgen -G "$FOYER_GENERATOR_DIR/foyer-*" >/dev/null; then
        echo "no foyer generators built in $FOYER_GENERATOR_DIR yet; skipping"
        exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
has() {         # LISTING PATH [MODE-REGEX]: the image lists PATH (with a mode matching MODE-REGEX)
        awk -v p="$2" -v m="${3:-.}" '$3 == p && $1 ~ m { found = 1 } END { exit !found }' "$1"
}

FOYER_HELPER_DIR=$helper "$foyer" build --compress none -o "$tmp/with" 2>"$tmp/with.err" ||
        { cat "$tmp/with.err"; fail "foyer build with FOYER_HELPER_DIR=$helper"; exit 1; }
"$foyer" ls "$tmp/with" >"$tmp/with.ls"

has "$tmp/with.ls" usr/lib/foyer/foyer-explain '^-..x' || fail "usr/lib/foyer/foyer-explain is not in the image (or not executable)"
size=$(awk '$3 == "usr/lib/foyer/foyer-explain" { print $2 }' "$tmp/with.ls")
[ "$size" = "$(stat -c %s "${helper%%:*}/foyer-explain")" ] ||
        fail "usr/lib/foyer/foyer-explain has $size bytes, $helper/foyer-explain $(stat -c %s "${helper%%:*}/foyer-explain")"
has "$tmp/with.ls" usr/lib/systemd/system/foyer-failure-report.service || fail "foyer-failure-report.service is missing"
has "$tmp/with.ls" usr/lib/systemd/system/emergency.target.d/10-foyer-failure-report.conf ||
        fail "emergency.target.d/10-foyer-failure-report.conf is missing"
# The boot timeline: foyer-timeline and the units that run it, pulled in by their drop-ins.
has "$tmp/with.ls" usr/lib/foyer/foyer-timeline '^-..x' || fail "usr/lib/foyer/foyer-timeline is not in the image (or not executable)"
for f in foyer-timeline-trace.service foyer-timeline-record.service sysinit.target.d/10-foyer-timeline.conf \
         initrd.target.d/10-foyer-timeline.conf; do
        has "$tmp/with.ls" "usr/lib/systemd/system/$f" || fail "$f is missing"
done
# "exit" in the emergency shell runs "systemctl default": default.target must be initrd.target.
grep -q '^l.* usr/lib/systemd/system/default.target -> initrd.target$' "$tmp/with.ls" ||
        fail "usr/lib/systemd/system/default.target is not a link to initrd.target"

for tool in less lsblk findmnt dmesg; do
        if [ -x "/usr/bin/$tool" ]; then
                has "$tmp/with.ls" "usr/bin/$tool" '^-..x' || fail "the host has /usr/bin/$tool, the image does not"
        fi
done
for t in l/linux v/vt102 v/vt220; do
        for d in usr/lib/terminfo usr/share/terminfo; do
                if [ -f "/$d/$t" ]; then
                        has "$tmp/with.ls" "$d/$t" || fail "the host has /$d/$t, the image does not"
                fi
        done
done

# Without foyer-explain the build still succeeds; the unit's condition then skips it at boot.
mkdir "$tmp/empty"
FOYER_HELPER_DIR=$tmp/empty "$foyer" build --compress none -o "$tmp/without" 2>"$tmp/without.err" ||
        { cat "$tmp/without.err"; fail "foyer build without foyer-explain failed"; }
if [ -s "$tmp/without" ]; then
        "$foyer" ls "$tmp/without" >"$tmp/without.ls"
        ! has "$tmp/without.ls" usr/lib/foyer/foyer-explain || fail "foyer-explain in the image although $tmp/empty has none"
        ! has "$tmp/without.ls" usr/lib/foyer/foyer-timeline || fail "foyer-timeline in the image although $tmp/empty has none"
fi
grep -q 'ConditionFileIsExecutable=/usr/lib/foyer/foyer-explain' "$FOYER_UNIT_DIR/foyer-failure-report.service" ||
        fail "foyer-failure-report.service does not check for foyer-explain"
for u in foyer-timeline-trace.service foyer-timeline-record.service; do
        grep -q 'ConditionFileIsExecutable=/usr/lib/foyer/foyer-timeline' "$FOYER_UNIT_DIR/$u" ||
                fail "$u does not check for foyer-timeline"
done

[ "$fails" -eq 0 ] && echo "ok"
