#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# hostonly-image.sh: the host side of scenario installer-encrypted-lvm's host-only test. The booted
# test root (roots/bookworm-installer.sh's foyer-hostonly-test) builds `foyer build --hostonly` and
# writes it to its scratch disk: 4 KiB of header ("FOYER-SCRATCH SIZE\n"), then the image. The root
# itself is inside LUKS and LVM, which this machine cannot read; the scratch disk it can.
#
#   hostonly-image.sh extract SCRATCH OUT NEXT_INITRD
#       reads the image from the scratch disk SCRATCH (raw or the run's qcow2 overlay), checks that
#       it is foyer's (foyer ls, $FOYER_VM_FOYER or foyer) with dm-crypt and virtio_blk and without
#       nvme, ahci and usb-storage, prints its size, and writes it to OUT (kept, for the bench) and
#       to NEXT_INITRD (vm-run's $FOYER_VM_INITRD: the initrd of the next boot)
#   hostonly-image.sh booted LOG IMAGE
#       the last boot of console log LOG was given IMAGE: the kernel's "Freeing initrd memory: NK",
#       which the test root prints as "FOYER-INITRD freed=NK", is IMAGE's size in whole pages
set -euo pipefail
fail() { echo "hostonly-image: FAIL: $*" >&2; exit 1; }

case ${1:-} in
extract)
        scratch=${2:?} out=${3:?} next=${4:?}
        tmp=$(mktemp -d)
        trap 'rm -rf "$tmp"' EXIT
        qemu-img convert -U -O raw "$scratch" "$tmp/scratch.raw"
        read -r magic size < <(head -c 4096 "$tmp/scratch.raw" | head -n1 | tr -d '\0')
        [[ ${magic:-} == FOYER-SCRATCH && ${size:-} =~ ^[0-9]+$ && $size -gt 0 ]] ||
                fail "no image on the scratch disk (header '${magic:-} ${size:-}')"
        dd if="$tmp/scratch.raw" of="$tmp/image" bs=4096 skip=1 count="$size" iflag=count_bytes status=none
        [[ $(stat -c %s "$tmp/image") == "$size" ]] || fail "the scratch disk holds less than $size bytes"
        foyer=${FOYER_VM_FOYER:-foyer}
        "$foyer" ls "$tmp/image" etc/initrd-release 2>/dev/null | grep -x 'ID=foyer' >/dev/null || fail "the image is not foyer's"
        "$foyer" ls "$tmp/image" >"$tmp/list" 2>/dev/null
        for m in dm-crypt virtio_blk; do
                grep -Eq "/$m\.ko(\.(xz|zst|gz))?\$" "$tmp/list" || fail "the host-only image lacks $m"
        done
        for m in nvme ahci usb-storage; do
                ! grep -Eq "/$m\.ko(\.(xz|zst|gz))?\$" "$tmp/list" || fail "the host-only image holds $m"
        done
        mkdir -p "$(dirname "$out")"
        cp "$tmp/image" "$out.tmp" && mv "$out.tmp" "$out"
        cp "$tmp/image" "$next"
        echo "hostonly-image: the host-only image is $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1048576 }') MiB," \
             "$(grep -c '\.ko' "$tmp/list") modules), saved as $out; the next boot's initrd"
        ;;
booted)
        log=${2:?} image=${3:?}
        freed=$(sed -n 's/.*FOYER-INITRD freed=\([0-9]*\)K.*/\1/p' "$log" | tail -n1)
        [[ -n $freed ]] || fail "no FOYER-INITRD line in $log"
        size=$(stat -c %s "$image")
        # The kernel frees the image's memory in whole pages.
        (( freed * 1024 > size - 4096 && freed * 1024 < size + 4096 )) ||
                fail "the kernel freed ${freed}K of initrd, but the image $image is $size bytes"
        echo "hostonly-image: the last boot's initrd was the $size-byte image (the kernel freed ${freed}K)"
        ;;
*)
        echo "usage: hostonly-image.sh extract SCRATCH OUT NEXT_INITRD | booted LOG IMAGE" >&2
        exit 2
        ;;
esac
