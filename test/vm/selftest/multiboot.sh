#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# multiboot.sh VM_RUN: vm-run's scenarios of several boots, against fake-qemu.sh (FAKE_MODE=disk,
# whose "guest" counts its boots in the first byte of its disk):
#   - every boot gets the very same QEMU command line;
#   - a host step gets the console log and the overlay in $FOYER_VM_LOG and $FOYER_VM_DISK0;
#   - the initrd is the run's own copy ($FOYER_VM_INITRD), which a host step of boot 1 replaces and
#     boot 2 loads (multiboot-initrd.scenario); the given file is not written;
#   - the disk is a qcow2 overlay of the given image, kept across the boots (multiboot.scenario
#     sees the count go up) and removed at the end; the image itself is not written;
#   - a failure in boot 2 fails the run and the message names the boot;
#   - the scenario syntax: steps before the first boot line, a boot without steps, and a line
#     that shapes the machine after a boot line are refused, each with its own message.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
for t in qemu-img qemu-io; do
        command -v "$t" >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
selftest_begin "${1:-}" "usage: multiboot.sh VM_RUN"
mkdir "$tmp/tmpdir"
truncate -s 1M "$tmp/disk.img"
cp "$tmp/disk.img" "$tmp/pristine.img"
export FOYER_VM_QEMU=$here/fake-qemu.sh FAKE_MODE=disk FAKE_ARGS_LOG=$tmp/args TMPDIR=$tmp/tmpdir

run() {
        "$vm_run" --kernel /dev/null --accel tcg --drive "$tmp/disk.img" --log "$tmp/console.log" "$@"
}

echo "== three boots"
export MULTIBOOT_HOST_OUT=$tmp/host-env
run "$here/multiboot.scenario" || fail "multiboot.scenario failed"
# The host step of boot 1 saw the console log and the disk as QEMU had it: the overlay.
[[ $(sed -n 1p "$tmp/host-env") == "$tmp/console.log" ]] || fail "host step: FOYER_VM_LOG is '$(sed -n 1p "$tmp/host-env")'"
[[ $(sed -n 2p "$tmp/host-env") == "$tmp/tmpdir/"*.qcow2 ]] || fail "host step: FOYER_VM_DISK0 '$(sed -n 2p "$tmp/host-env")' is not the overlay"
[[ $(wc -l <"$tmp/args") == 3 ]] || fail "expected 3 QEMU starts, got $(wc -l <"$tmp/args")"
[[ $(sort -u "$tmp/args" | wc -l) == 1 ]] || { cat "$tmp/args"; fail "the command lines differ between boots"; }
overlay=$(grep -o 'file=[^,]*,format=qcow2,if=virtio,cache=unsafe ' "$tmp/args" | head -n1 | sed 's/^file=//; s/,.*//')
[[ -n $overlay ]] || { cat "$tmp/args"; fail "no qcow2 overlay without snapshot=on on the command line"; }
[[ $overlay == "$tmp/tmpdir/"* ]] || fail "overlay $overlay is not under \$TMPDIR"
[[ ! -e $overlay && -z $(ls -A "$tmp/tmpdir") ]] || fail "overlay $overlay (or its directory) left behind"
cmp "$tmp/disk.img" "$tmp/pristine.img" || fail "the disk image itself was written"
[[ $(grep -c '^# vm-run: boot [23] of 3$' "$tmp/console.log") == 2 ]] || fail "console log does not mark boots 2 and 3"

echo "== a host step replaces the initrd for the next boot"
: >"$tmp/args"
echo "the given image" >"$tmp/initrd"
cp "$tmp/initrd" "$tmp/initrd.pristine"
run --initrd "$tmp/initrd" "$here/multiboot-initrd.scenario" || fail "multiboot-initrd.scenario failed"
# The host step saw the run's own copy, not the given file, which is unchanged; the copy is gone.
copy=$(cat "$tmp/host-env")
[[ $copy == "$tmp/tmpdir/"*/initrd ]] || fail "host step: FOYER_VM_INITRD '$copy' is not the run's own copy"
cmp "$tmp/initrd" "$tmp/initrd.pristine" || fail "the given initrd was written"
[[ ! -e $copy && -z $(ls -A "$tmp/tmpdir") ]] || fail "the initrd's copy $copy (or its directory) left behind"
[[ $(wc -l <"$tmp/args") == 2 && $(sort -u "$tmp/args" | wc -l) == 1 ]] || { cat "$tmp/args"; fail "the command lines differ between boots"; }
grep -q -- "-initrd $copy " "$tmp/args" || { cat "$tmp/args"; fail "QEMU was not given the copy"; }

echo "== a failure in boot 2"
: >"$tmp/args"
if run "$here/multiboot-fail.scenario" 2>"$tmp/stderr"; then
        fail "multiboot-fail.scenario passed"
fi
cat "$tmp/stderr"
grep -q '^FAIL in boot 2 of 2 after .*no /\^DISK: format=qcow2 boots-before=0\$/ within 3s (script line 6)$' "$tmp/stderr" ||
        fail "the failure does not name boot 2 and its step"
[[ $(wc -l <"$tmp/args") == 2 ]] || fail "expected 2 QEMU starts"
[[ -z $(ls -A "$tmp/tmpdir") ]] || fail "overlay left behind after a failure"

echo "== scenario syntax"
bad() {
        local what=$1 pattern=$2
        printf '%b' "$3" >"$tmp/bad.scenario"
        if run "$tmp/bad.scenario" 2>"$tmp/stderr"; then
                fail "$what: accepted"
        fi
        cat "$tmp/stderr"
        grep -q -- "$pattern" "$tmp/stderr" || fail "$what: message does not match '$pattern'"
}
bad "step before the first boot" "a step (line 1) before the first boot line" \
        'expect 5 x\nboot\nexpect 5 y\n'
bad "empty boot" ":3: boot 1 has no steps" \
        'timeout 9\nboot\nboot\nexpect 5 y\n'
bad "empty last boot" "boot 2 has no steps" \
        'boot\nexpect 5 x\nboot\n'
bad "append after boot" ":3: 'append' belongs before the first boot line" \
        'boot\nexpect 5 x\nappend rw\n'
bad "disk after boot" ":2: 'disk' belongs before the first boot line" \
        'boot\ndisk ext4\nexpect 5 x\n'
echo "ok"
