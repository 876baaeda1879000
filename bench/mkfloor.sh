#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/mkfloor.sh KVER OUT: the floor of bench/boot.sh, the least an initrd can do to boot the
# bench's ext4 disk: busybox and a shell /init that mounts /proc, /sys and /dev, loads the modules
# of virtio-blk-pci and ext4 (and what they depend on, from modprobe --show-depends of the kernel
# in /usr/lib/modules/KVER) with insmod, waits for root=UUID= with findfs, mounts it and
# switch_roots to its /sbin/init. No udev, no systemd, no fsck: a time no real initrd can beat on
# the same machine, to compare against. zstd -19 like foyer's default, newc cpio.
set -euo pipefail

kver=${1:?usage: mkfloor.sh KVER OUT}
out=${2:?usage: mkfloor.sh KVER OUT}
busybox=$(command -v busybox) || { echo "mkfloor: busybox is not installed" >&2; exit 1; }

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t"/{bin,dev,proc,sys,sysroot,modules}
cp "$busybox" "$t/bin/busybox"
# busybox may be linked dynamically (Debian's "busybox" package): its libraries and loader too.
ldd "$busybox" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
        mkdir -p "$t$(dirname "$lib")"
        cp -L "$lib" "$t$lib"
done
for applet in sh mount insmod findfs switch_root sleep cat; do
        ln -s busybox "$t/bin/$applet"
done

i=0
for m in virtio_pci virtio_blk ext4; do
        modprobe -S "$kver" --show-depends "$m"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
        # Load order is the file names' order.
        case $ko in
        *.ko) cp "$ko" "$t/modules/$(printf %02d $i).ko" ;;
        *.ko.xz) xz -dc "$ko" >"$t/modules/$(printf %02d $i).ko" ;;
        *.ko.zst) zstd -q -dc "$ko" >"$t/modules/$(printf %02d $i).ko" ;;
        *) echo "mkfloor: cannot load $ko" >&2; exit 1 ;;
        esac
        i=$((i + 1))
done

cat >"$t/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in /modules/*.ko; do
        insmod "$m"
done
root=
for w in $(cat /proc/cmdline); do
        case $w in root=UUID=*) root=${w#root=} ;; esac
done
until dev=$(findfs "$root" 2>/dev/null); do
        sleep 0.01
done
mount -o rw "$dev" /sysroot
mount --move /dev /sysroot/dev
exec switch_root /sysroot /sbin/init
EOF
chmod 0755 "$t/init"
(cd "$t" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) | zstd -q -19 -T0 >"$out"
