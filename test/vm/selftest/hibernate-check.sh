#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# hibernate-check.sh CHECKER: the hibernate* scenarios' host checks (test/vm/hibernate-check.sh)
# on made-up console logs and disks, each of which must pass or fail as stated:
#   - resumed: the same token and boot ID in boot 1's "before" and boot 2's "after" line, image
#     loading before any mount or fsck of the root, passes; a changed token, a changed boot ID, a
#     mount of the root before the image, no image loading, and an "after" line in boot 1 fail;
#   - fresh: two "before" lines with different boot IDs and no image loading pass; the same boot
#     ID, or an image loaded in boot 2, fail;
#   - signature: a qcow2 overlay whose swap partition (at 1025 MiB) carries S1SUSPEND passes; one
#     with a plain swap signature fails; a swap at a page given to the check (a swap file's
#     resume_offset=) is found there, and a check at another page fails.
set -euo pipefail

checker=$(realpath "${1:?usage: hibernate-check.sh CHECKER}")
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
T1=0123456789abcdef T2=fedcba9876543210
B1=11111111-2222-3333-4444-555555555555 B2=66666666-7777-8888-9999-000000000000

# log FILE BOOT1-LINES BOOT2-LINES: a console log of two boots, as vm-run writes it (CR LF).
log() {
        { printf '%b\n' "$2"; printf '\n# vm-run: boot 2 of 2\n'; printf '%b\n' "$3"; } | sed 's/$/\r/' >"$1"
}
expect() {     # pass|fail CHECK LOG WHAT [ARG...]
        local rc=0
        FOYER_VM_LOG=$3 "$checker" "$2" "${@:5}" >"$tmp/out" 2>&1 || rc=$?
        if [[ $1 == pass && $rc != 0 ]] || [[ $1 == fail && $rc == 0 ]]; then
                cat "$tmp/out"
                fail "$2 on $4: exit status $rc, expected to $1"
        fi
        echo "ok: $2: ${1} expected and seen on $4"
}

before1="[   80.1] FOYER-HIBERNATE before token=$T1 boot_id=$B1"
saving='[   90.2] PM: Image saving progress:  10%'
resume2='[    5.0] PM: Image loading progress:   0%'
after2="FOYER-HIBERNATE after token=$T1 file=$T1 boot_id=$B1"

log "$tmp/good" "$before1\n$saving" "Starting systemd-hibernate-resume@x.service\n$resume2\n$after2\n[ 99.0] EXT4-fs (vda1): re-mounted"
expect pass resumed "$tmp/good" "a resume"
log "$tmp/token" "$before1\n$saving" "$resume2\nFOYER-HIBERNATE after token=$T2 file=$T2 boot_id=$B1"
expect fail resumed "$tmp/token" "a changed token"
log "$tmp/bootid" "$before1\n$saving" "$resume2\nFOYER-HIBERNATE after token=$T1 file=$T1 boot_id=$B2"
expect fail resumed "$tmp/bootid" "a changed boot ID"
log "$tmp/mounted" "$before1\n$saving" "[ 4.0] EXT4-fs (vda1): mounted filesystem\n$resume2\n$after2"
expect fail resumed "$tmp/mounted" "a mount before the image"
log "$tmp/fsck" "$before1\n$saving" "Starting systemd-fsck-root.service - File System Check on /dev/vda1...\n$resume2\n$after2"
expect fail resumed "$tmp/fsck" "an fsck before the image"
log "$tmp/noimage" "$before1\n$saving" "$after2"
expect fail resumed "$tmp/noimage" "no image loading"
log "$tmp/early" "$before1\nFOYER-HIBERNATE after token=$T1 file=$T1 boot_id=$B1\n$saving" "$resume2\n$after2"
expect fail resumed "$tmp/early" "an 'after' line in boot 1"

log "$tmp/fresh" "$before1\n$saving" "[ 70.0] EXT4-fs (vda1): mounted\nFOYER-HIBERNATE before token=$T2 boot_id=$B2"
expect pass fresh "$tmp/fresh" "a fresh boot"
log "$tmp/same" "$before1\n$saving" "FOYER-HIBERNATE before token=$T2 boot_id=$B1"
expect fail fresh "$tmp/same" "boot 1's boot ID"
log "$tmp/loaded" "$before1\n$saving" "$resume2\nFOYER-HIBERNATE before token=$T2 boot_id=$B2"
expect fail fresh "$tmp/loaded" "an image loaded in boot 2"

for t in qemu-img mkswap blkid; do
        command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (signature check)"; exit 77; }
done
# disk SIGNATURE [PAGE]: a qcow2 disk with a swap (mkswap) at 1025 MiB, or at PAGE (4096-byte
# pages), whose signature is then SIGNATURE.
disk() {
        rm -f "$tmp/swap" "$tmp/disk.raw" "$tmp/disk.qcow2"
        truncate -s 4M "$tmp/swap"
        mkswap -q "$tmp/swap"
        printf '%s' "$1" | dd of="$tmp/swap" bs=1 seek=4086 conv=notrunc status=none
        truncate -s 1030M "$tmp/disk.raw"
        dd if="$tmp/swap" of="$tmp/disk.raw" bs=4096 seek="${2:-$((1025 * 256))}" conv=notrunc,sparse status=none
        qemu-img convert -f raw -O qcow2 "$tmp/disk.raw" "$tmp/disk.qcow2"
}
disk S1SUSPEND
FOYER_VM_DISK0=$tmp/disk.qcow2 expect pass signature /dev/null "a hibernation image"
disk SWAPSPACE2
FOYER_VM_DISK0=$tmp/disk.qcow2 expect fail signature /dev/null "a plain swap"
disk S1SUSPEND 34816
FOYER_VM_DISK0=$tmp/disk.qcow2 expect pass signature /dev/null "a swap file's image at page 34816" 34816
FOYER_VM_DISK0=$tmp/disk.qcow2 expect fail signature /dev/null "page 34817, past the swap file's start" 34817
echo "ok"
