#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/mkfloor-systemd.sh FOYER IMAGE OUTDIR: the least a systemd initrd does here, as two images
# made from foyer's host-only IMAGE (same kernel modules, same libraries, same size to unpack), for
# bench/boot.sh:
#   OUTDIR/systemd-floor.img  systemd as PID 1 and one service: modprobe virtio and ext4, mount
#                             /dev/vda, systemctl switch-root;
#   OUTDIR/udev-floor.img     systemd as PID 1, udevd with its coldplug trigger, and one service
#                             that waits for udev's dev-vda.device, mounts it and switches root.
# Neither runs a generator (all of IMAGE's are masked), journald, fsck, foyer's units or the stock
# initrd units: they are booted with rd.systemd.unit=floor.target, which replaces initrd.target.
# They cannot boot anything but the bench's disk; they show what is left for everything else a real
# initrd does (docs/performance.md). FOYER is the foyer binary that lists IMAGE's generators.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

foyer=${1:?usage: mkfloor-systemd.sh FOYER IMAGE OUTDIR}
image=${2:?usage: mkfloor-systemd.sh FOYER IMAGE OUTDIR}
outdir=${3:?usage: mkfloor-systemd.sh FOYER IMAGE OUTDIR}

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# IMAGE's generators, listed once: both floors mask all of them. (Process substitution: a failed
# foyer ls or no match ends in the message below, not in a silent exit.)
mapfile -t generators < <(bench_generators "$foyer" "$image")
((${#generators[@]} > 0)) || {
        echo "mkfloor-systemd: no generators found in $image" >&2
        exit 1
}

# overlay NAME SERVICE-BODY: OUTDIR/NAME.img, IMAGE with an archive appended that masks every
# generator and adds floor.target and floor.service (the kernel unpacks an appended archive over the
# ones before it).
overlay() {
        local name=$1 service=$2 o=$t/$1 g
        mkdir -p "$o/etc/systemd/system" "$o/etc/systemd/system-generators"
        for g in "${generators[@]}"; do
                ln -s /dev/null "$o/etc/systemd/system-generators/$g"
        done
        cat >"$o/etc/systemd/system/floor.target" <<-EOF
	[Unit]
	Description=The $name of the bench
	AllowIsolate=yes
	Requires=floor.service
	After=floor.service
	EOF
        printf '%s\n' "$service" >"$o/etc/systemd/system/floor.service"
        # IMAGE's udev rules start this as soon as udev finds an ext4; the floors leave it to mount.
        ln -s /dev/null "$o/etc/systemd/system/foyer-fs-module@.service"
        bench_append_archive "$image" "$o" "$outdir/$name.img"
}

overlay systemd-floor '[Unit]
Description=Load the disk and file system drivers, mount the root, switch to it
DefaultDependencies=no

[Service]
Type=oneshot
ExecStart=/usr/sbin/modprobe -a virtio_pci virtio_blk ext4
ExecStart=/usr/bin/mount -o rw /dev/vda /sysroot
ExecStart=/usr/bin/systemctl --no-block switch-root /sysroot'

overlay udev-floor '[Unit]
Description=Mount the root udev found, switch to it
DefaultDependencies=no
Wants=systemd-udevd.service systemd-udev-trigger.service
Requires=dev-vda.device
After=dev-vda.device

[Service]
Type=oneshot
ExecStart=/usr/bin/mount -o rw /dev/vda /sysroot
ExecStart=/usr/bin/systemctl --no-block switch-root /sysroot'
