#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/mkhostonly.sh BUILDDIR KVER KERNEL INITRD ROOTTREE UUID OUTDIR
#
# The host-only images of bench/boot.sh, made for the bench VM's hardware, not the bench machine's
# (this machine's root is on virtio-mmio, the VM's on virtio-blk-pci): boots a VM like the bench's
# (same QEMU settings, KERNEL, INITRD to boot it) whose root is a copy of ROOTTREE (the bench's real
# root) with this build of foyer, the host's dracut-core (the same suite's .debs, unpacked with
# dpkg) and the kernel's modules added, on an ext4 with the bench disk's UUID on the same
# virtio-blk-pci disk. In it, "foyer build --hostonly" and "dracut --hostonly" each write an image
# for KVER; a unit tars them onto a scratch disk, which the host unpacks into OUTDIR as
# foyer-hostonly.img and dracut-hostonly.img. Takes minutes under TCG (dracut most of it).
set -euo pipefail

builddir=$(realpath "${1:?usage: mkhostonly.sh BUILDDIR KVER KERNEL INITRD ROOTTREE UUID OUTDIR}")
kver=${2:?} kernel=${3:?} initrd=${4:?} roottree=${5:?} uuid=${6:?} out=$(realpath "${7:?}")

work=$out/hostonly-work
rm -f "$out/foyer-hostonly.img" "$out/dracut-hostonly.img"
rm -rf "$work"
mkdir -p "$work/debs"
t=$work/tree
cp -a "$roottree" "$t"
# The bench root's own report would power the machine off at multi-user.target: not here.
rm -f "$t/etc/systemd/system/multi-user.target.wants/foyer-report.service"

mkdir -p "$t/usr/lib/modules"
cp -a "/usr/lib/modules/$kver" "$t/usr/lib/modules/"
# Stripped, as bench_stage (bench/lib.sh) and a package install foyer's programs.
DESTDIR=$t meson install -C "$builddir" --no-rebuild --quiet --strip >/dev/null
(cd "$work/debs" && apt-get download -q dracut-core cpio kmod kpartx >/dev/null)
cp "$work"/debs/*.deb "$t/tmp/"
chroot "$t" sh -c 'dpkg --force-depends -i /tmp/*.deb >/dev/null && rm -f /tmp/*.deb'

install -D -m 0755 /dev/stdin "$t/usr/local/sbin/bench-hostonly" <<EOF
#!/bin/sh
# Runs in the bench's VM: both host-only images of this machine, onto the scratch disk (vdb) as tar.
out=\$(mktemp -d)
if foyer build --hostonly --kver $kver -o "\$out/foyer-hostonly.img" &&
   dracut --quiet --force --hostonly --kver $kver "\$out/dracut-hostonly.img"; then
        tar -C "\$out" -cf /dev/vdb foyer-hostonly.img dracut-hostonly.img && sync
        echo BENCH-HOSTONLY-DONE
else
        echo BENCH-HOSTONLY-FAILED
fi
systemctl --no-block poweroff
EOF
cat >"$t/etc/systemd/system/bench-hostonly.service" <<'EOF'
[Unit]
Description=Build the host-only images for bench/boot.sh
After=local-fs.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/bench-hostonly
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
EOF
ln -sf /etc/systemd/system/bench-hostonly.service "$t/etc/systemd/system/multi-user.target.wants/bench-hostonly.service"

size=$(( $(du -sm "$t" | cut -f1) * 13 / 10 + 256 ))
mkfs.ext4 -q -F -U "$uuid" -d "$t" "$work/root.img" "${size}M"
truncate -s 256M "$work/scratch.img"
rm -rf "$t"

cat >"$work/build.scenario" <<EOF
append   root=UUID=$uuid rw
timeout  3600
fail     BENCH-HOSTONLY-FAILED
boot
expect   3000 BENCH-HOSTONLY-DONE
poweroff 300
host     300 qemu-img convert -O raw "\$FOYER_VM_DISK1" "$work/scratch.raw" && tar -C "$out" -xf "$work/scratch.raw"
EOF
"$builddir/test/vm/vm-run" --smp "${FOYER_VM_SMP:-2}" --kernel "$kernel" --initrd "$initrd" \
        --drive "$work/root.img" --drive "$work/scratch.img" --log "$work/build.log" "$work/build.scenario" >/dev/null
test -s "$out/foyer-hostonly.img" && test -s "$out/dracut-hostonly.img"
rm -rf "$work"
