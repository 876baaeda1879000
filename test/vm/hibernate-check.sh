#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# hibernate-check.sh CHECK [ARG]: the host's half of the hibernate* scenarios, run by their `host` steps
# (vm-run sets $FOYER_VM_LOG, the console log of all boots so far, and $FOYER_VM_DISK0, the first
# disk's overlay). The test root's foyer-hibernate-test (mkdisk.sh, recipes hibernate*) prints
#   FOYER-HIBERNATE before token=T boot_id=B      before it hibernates (T: random, kept only in
#                                                 the script's memory and a file in /run)
#   FOYER-HIBERNATE after token=T file=T boot_id=B once systemctl start hibernate.target returns: after a resume
# CHECK is one of:
#   signature [PAGE]
#               the swap on the first disk carries the kernel's hibernation signature: blkid says
#               TYPE=swsuspend, and the bytes before the end of its first page are S1SUSPEND. The
#               swap starts at PAGE (in 4096-byte pages from the start of the disk, as
#               resume_offset= counts for a swap file on a whole-disk file system), by default at
#               SWAP_MIB (partition 2 of the hibernate recipe)
#   resumed     boot 2 went on with boot 1's system: its "after" line has the token and the boot ID
#               of boot 1's "before" line (and the /run file kept the token), and the kernel's
#               "PM: Image loading" came in boot 2 before any fsck or mount of the root
#   fresh       boot 2 started afresh: a "before" line in each boot with different boot IDs, and
#               no "after" line and no image loading in boot 2
set -euo pipefail

# Where mkdisk.sh's hibernate recipe puts the swap partition (sector 2099200 = 1025 MiB).
SWAP_MIB=1025

check=${1:?usage: hibernate-check.sh signature [PAGE] | resumed | fresh}
log=${FOYER_VM_LOG:?FOYER_VM_LOG is not set (run from a vm-run host step)}
fail() { echo "hibernate-check $check: FAIL: $*" >&2; exit 1; }

# boot_lines N: the console lines of boot N (the log marks each later boot with "# vm-run: boot N of M").
boot_lines() {
        tr -d '\r' <"$log" | awk -v n="$1" '/^# vm-run: boot [0-9]+ of [0-9]+$/ { b = $4; next }
                                            { if ((b ? b : 1) == n) print }'
}
# field LINE KEY: the value of KEY=VALUE in LINE.
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }

case $check in
signature)
        disk=${FOYER_VM_DISK0:?FOYER_VM_DISK0 is not set}
        tmp=$(mktemp -d)
        trap 'rm -rf "$tmp"' EXIT
        [[ $disk != *,* ]] || fail "a disk path with a comma cannot be named in --image-opts: $disk"
        page=${2:-$((SWAP_MIB * 256))}
        [[ $page =~ ^[0-9]+$ ]] || fail "the swap's page '$page' is not a number"
        # The first MiB of the swap, through a raw node with an offset over the qcow2 (qemu-img
        # dd's skip= fails on qcow2 in QEMU 7.2).
        qemu-img convert -U -O raw --image-opts \
                "driver=raw,offset=$((page * 4096)),size=1048576,file.driver=qcow2,file.file.driver=file,file.file.filename=$disk" \
                "$tmp/swap-head"
        type=$(blkid -p -o value -s TYPE "$tmp/swap-head" || true)
        sig=$(dd if="$tmp/swap-head" bs=1 skip=4086 count=9 status=none)
        echo "hibernate-check signature: at page $page: blkid TYPE=${type:-none}, signature '$sig'"
        [[ $type == swsuspend ]] || fail "blkid does not see a hibernation image on the swap (TYPE=${type:-none})"
        [[ $sig == S1SUSPEND ]] || fail "no S1SUSPEND signature at the end of the swap's first page"
        ;;
resumed)
        before=$(boot_lines 1 | grep -o -m1 'FOYER-HIBERNATE before .*' || true)
        after=$(boot_lines 2 | grep -o -m1 'FOYER-HIBERNATE after .*' || true)
        [[ -n $before ]] || fail "boot 1 printed no 'FOYER-HIBERNATE before' line"
        [[ -n $after ]] || fail "boot 2 printed no 'FOYER-HIBERNATE after' line"
        echo "hibernate-check resumed: boot 1: $before"
        echo "hibernate-check resumed: boot 2: $after"
        token=$(field "$before" token)
        [[ $token =~ ^[0-9a-f]{16}$ ]] || fail "boot 1's token '$token' is not 16 hex digits"
        [[ $(field "$after" token) == "$token" ]] || fail "the token changed: a fresh boot, not a resume"
        [[ $(field "$after" file) == "$token" ]] || fail "the token in /run changed"
        [[ $(field "$after" boot_id) == "$(field "$before" boot_id)" ]] || fail "the boot ID changed"
        if boot_lines 1 | grep -q 'FOYER-HIBERNATE after '; then
                fail "boot 1 printed its 'after' line: systemctl returned without hibernating"
        fi
        # Boot 2, up to the image: the kernel's loading message, and no fsck or mount of the root before it.
        upto=$(boot_lines 2 | sed '/PM: Image loading/q')
        grep -q 'PM: Image loading' <<<"$upto" || fail "no 'PM: Image loading' in boot 2"
        if grep -E 'EXT4-fs \(|systemd-fsck-root|systemd-fsck@|File System Check|sysroot\.mount|Mounting .*/sysroot' <<<"$upto"; then
                fail "the root was checked or mounted before the image was loaded (lines above)"
        fi
        ;;
fresh)
        b1=$(boot_lines 1 | grep -o -m1 'FOYER-HIBERNATE before .*' || true)
        b2=$(boot_lines 2 | grep -o -m1 'FOYER-HIBERNATE before .*' || true)
        [[ -n $b1 && -n $b2 ]] || fail "a boot printed no 'FOYER-HIBERNATE before' line"
        echo "hibernate-check fresh: boot 1: $b1"
        echo "hibernate-check fresh: boot 2: $b2"
        [[ $(field "$b1" boot_id) != "$(field "$b2" boot_id)" ]] || fail "boot 2 has boot 1's boot ID"
        [[ $(field "$b1" token) != "$(field "$b2" token)" ]] || fail "boot 2 has boot 1's token"
        if boot_lines 2 | grep -E 'FOYER-HIBERNATE after |PM: Image loading'; then
                fail "boot 2 resumed (lines above)"
        fi
        ;;
*)
        fail "unknown check"
        ;;
esac
echo "hibernate-check $check: ok"
