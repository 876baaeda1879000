#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkvmlinux.sh MKVMLINUX: the PVH copy of the host's kernel is a complete ELF with the PVH entry
# note, cached (a second call gives the same file without unpacking again); a file that is no
# kernel, and FOYER_VM_BZIMAGE=1, give the bzImage back.
set -euo pipefail
mkvmlinux=$(realpath "${1:?usage: mkvmlinux.sh MKVMLINUX}")
fail() { echo "FAIL: $*"; exit 1; }
# shellcheck disable=SC2012 # kernel file names are plain: vmlinuz-VERSION
kernel=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n1 || true)
[[ -n $kernel && -r $kernel ]] || { echo "SKIP: no kernel in /boot"; exit 77; }
grep -q '^CONFIG_PVH=y' "/boot/config-${kernel#/boot/vmlinuz-}" 2>/dev/null ||
        { echo "SKIP: $kernel has no PVH entry"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$mkvmlinux" "$tmp/cache" "$kernel")
[[ $out == "$tmp/cache/vmlinux-"* ]] || fail "host kernel: got '$out', not a copy in the cache"
readelf -h "$out" | grep -q 'Type: *EXEC' || fail "$out is not an ELF executable"
readelf -nW "$out" | grep -q 'Xen .*(0x00000012)' || fail "$out has no PVH entry note"
# The kernel's own banner is in the copy: it is the same build.
banner=$(LC_ALL=C grep -aom1 'Linux version [^ ]* ([^)]*)' "$out")
[[ $banner == "Linux version ${kernel#/boot/vmlinuz-} "* ]] || fail "banner '$banner' does not name ${kernel#/boot/vmlinuz-}"
touch -d '2000-01-01' "$out"
again=$("$mkvmlinux" "$tmp/cache" "$kernel")
[[ $again == "$out" ]] || fail "second call: '$again', not '$out'"
[[ $(stat -c %Y "$out") == $(date -d '2000-01-01' +%s) ]] || fail "second call unpacked again"

echo "not a kernel" >"$tmp/vmlinuz-fake"
out=$("$mkvmlinux" "$tmp/cache" "$tmp/vmlinuz-fake" 2>"$tmp/err")
[[ $out == "$tmp/vmlinuz-fake" ]] || fail "no kernel: got '$out'"
grep -q 'no PVH-capable ELF kernel inside' "$tmp/err" || fail "no kernel: no message"

out=$(FOYER_VM_BZIMAGE=1 "$mkvmlinux" "$tmp/cache2" "$kernel")
[[ $out == "$kernel" ]] || fail "FOYER_VM_BZIMAGE=1: got '$out'"
echo "PASS"
