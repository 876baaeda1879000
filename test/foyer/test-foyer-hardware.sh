#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The generic image's hardware classes (src/foyer/module-classes.c) on the installed kernel: the
# storage controllers and keyboards a generic image must drive are in it, as modules or built into
# the kernel; modules of a class that the symbol filter or an exclusion rejects are not, for the
# reason the build logs; every firmware file a module of the image declares and the tree has is in
# the image, and one the tree lacks is no error.
# Usage: test-foyer-hardware.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator
require_kernel
make_tmp test-foyer-hardware
moddir=/usr/lib/modules/$kver

echo "== build the generic image for $kver"
"$foyer" build -v --kver "$kver" -o "$tmp/a.img" 2>"$tmp/log" || { tail -n 20 "$tmp/log"; fail "build"; }
"$foyer" ls "$tmp/a.img" 2>/dev/null | awk '{print $3}' >"$tmp/list"
grep -q "^usr/lib/modules/$kver/modules.dep.bin$" "$tmp/list" || fail "no module index in the image"

# in_image NAME: a module file of that name (- or _, compressed or not) is in the image.
in_image() {
        local re=${1//[-_]/[-_]}
        grep -qE "^usr/lib/modules/$kver/.*/${re}\.ko(\.xz|\.zst|\.gz)?$" "$tmp/list"
}
# builtin NAME: the kernel has it built in.
builtin() {
        local re=${1//[-_]/[-_]}
        grep -qE "/${re}\.ko$" "$moddir/modules.builtin"
}
# in_tree NAME: the kernel has it as a module file; prints its modules.dep path.
in_tree() {
        local re=${1//[-_]/[-_]}
        grep -oE "^[^:]*/${re}\.ko(\.xz|\.zst|\.gz)?:" "$moddir/modules.dep" | tr -d :
}

echo "== storage controllers and keyboards are in the image"
for m in megaraid_sas mpt3sas mptsas mptspi vmw_pvscsi hv_storvsc xen_blkfront vmd hpsa aacraid smartpqi \
         nvme ahci ata_piix sym53c8xx virtio_scsi virtio_blk usb_storage uas mmc_block \
         i2c_hid_acpi i2c_hid hid_generic usbhid hyperv_keyboard hid_hyperv atkbd i8042; do
        if builtin "$m"; then
                echo "   $m: built into $kver"
                ! in_image "$m" || fail "$m is built in, yet a module file of it is in the image"
                continue
        fi
        [ -n "$(in_tree "$m")" ] || fail "$kver has no module $m (neither built in nor in modules.dep)"
        in_image "$m" || fail "$m is missing from the generic image"
done

# A class's module that its filter must reject: it exists in the tree under the class's directory,
# it is not in the image, and the build says why (the rule that rejected it, not an accident).
echo "== modules of a class that are not what the class is for stay out"
# shellcheck disable=SC2016 # the patterns are for grep -F
while IFS='|' read -r m dir why; do
        path=$(in_tree "$m")
        [ -n "$path" ] || fail "$kver has no module $m: pick another one for this test"
        case $path in "kernel/$dir/"*) ;; *) fail "$m is at $path, not in the class's kernel/$dir" ;; esac
        ! in_image "$m" || fail "$m ($why) is in the image"
        grep -qF "Not adding ${m//-/_} for its class (" "$tmp/log" || fail "the build does not say it leaves out $m"
        grep -F "Not adding ${m//-/_} for its class (" "$tmp/log" | grep -qF ": $why." ||
                fail "$m left out, but not as '$why': $(grep -F "Not adding ${m//-/_} for its class (" "$tmp/log")"
done <<'EOF'
st|drivers/scsi|uses none of the class's functions
ses|drivers/scsi|uses none of the class's functions
xen-blkback|drivers/block|uses none of the class's functions
nbd|drivers/block|needs the network
lpfc|drivers/scsi|SAN host adapter (Fibre Channel)
pata_via|drivers/ata|parallel ATA (IDE) controller
EOF
# and one the filter keeps that no name list asks for: a SAS HBA found only through its class
in_image pm80xx || fail "pm80xx (kernel/drivers/scsi, a block driver) is missing: the SCSI class is not taken"
grep -q 'module pm80xx (SCSI/SAS/RAID controllers)' "$tmp/log" || fail "pm80xx not added for its class"

echo "== firmware: what the image's modules declare and the tree has is in the image"
present=0 absent=0
while read -r ko; do
        while read -r fw; do
                [ -n "$fw" ] || continue
                found=
                for s in "" .zst .xz; do
                        if [ -e "/usr/lib/firmware/$fw$s" ]; then
                                found=1
                                grep -qxF "usr/lib/firmware/$fw$s" "$tmp/list" ||
                                        fail "firmware $fw$s of ${ko##*/} is missing from the image"
                        fi
                done
                if [ -n "$found" ]; then present=$((present + 1)); else absent=$((absent + 1)); fi
        done < <(modinfo -F firmware "/$ko")
done < <(grep -E '\.ko(\.xz|\.zst|\.gz)?$' "$tmp/list")
echo "   $present declared firmware files in the image, $absent not installed"
[ "$present" -gt 0 ] || fail "no module of the image has its firmware installed (isci's is in linux-image)"
# Firmware the tree lacks is a debug message: the (non-verbose) build says nothing of it.
[ "$absent" -gt 0 ] || fail "every declared firmware is installed: the missing-firmware case is not exercised"
"$foyer" build --kver "$kver" -o "$tmp/b.img" 2>"$tmp/quiet" || fail "build without -v"
! grep -qi firmware "$tmp/quiet" || fail "a build reports missing firmware: $(grep -i firmware "$tmp/quiet")"
grep -q 'Firmware .* is not installed, skipping' "$tmp/log" || fail "-v does not log the missing firmware"
echo "OK"
