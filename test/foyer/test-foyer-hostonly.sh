#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host-only images (foyer build --hostonly, src/foyer/hostonly.c) on the installed kernel, from fake
# sysfs, /proc and /dev trees ($FOYER_SYSFS, $FOYER_PROCFS, $FOYER_DEVFS) laid out as the kernel
# lays out these machines:
#   - a virtio-blk disk: its drivers and ext4 in, no other controller, no LVM, MD or cryptsetup;
#   - an NVMe partition under LUKS2 (aes-cbc-essiv:sha256) under LVM, with a USB keyboard and a PS/2
#     mouse: nvme, dm-crypt, essiv (and not xts: the header was read), the keyboard's chain, lvm2
#     and systemd-cryptsetup in, FIDO2 unlocking for the header's systemd-fido2 token (not TPM2 or
#     PKCS#11); the mouse's driver and mdadm out;
#   - an md RAID1 on two AHCI disks: ahci, sd_mod, raid1 and mdadm in; LVM and cryptsetup out;
#   - a dm-verity root on two partitions: dm_verity and veritysetup in, cryptsetup out (and neither
#     in the virtio-blk machine's image);
#   - a driver the kernel does not have: the build fails naming the device and the driver;
#   - an NFSv3 root (fstype nfs in mountinfo, no block device): without mount.nfs in the tree an
#     error naming nfs-common; with it (a fake tool, in a mount namespace of the build's own) sunrpc,
#     nfs and nfsv3 (required), mount.nfs, systemd-networkd, wait-online, the default network and
#     the host's network interface's driver in, and no disk driver; --network=no refused;
#   - an NBD root (nbd0) and an iSCSI root (a disk below an iSCSI session): nbd and nbd-client,
#     iscsi_tcp, sd_mod and iscsistart, each with the network and without the other's tool;
#   - a chroot (no / in mountinfo) and --root: a warning, and the generic image;
#   - HostOnly=yes in foyer.conf, and -N over it.
# Usage: test-foyer-hostonly.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator
require_kernel
make_tmp test-foyer-hostonly
command -v cryptsetup >/dev/null || skip "cryptsetup is not installed (the LUKS header of the fake volume)"
moddir=/usr/lib/modules/$kver

# A fresh machine: $sys, $proc and $dev, empty.
machine() {
        m=$tmp/$1
        sys=$m/sys proc=$m/proc dev=$m/dev
        mkdir -p "$sys/devices" "$sys/dev/block" "$sys/class/block" "$sys/class/input" "$sys/module" \
                "$sys/bus/fake/drivers" "$proc/self" "$dev/block"
        : >"$proc/swaps"
}
# blockdev DEVPATH MAJ:MIN [partition]: a block device below /sys/devices, as /sys/dev/block and
# /sys/class/block link it.
blockdev() {
        local d=$sys/devices/$1
        mkdir -p "$d"
        echo "$2" >"$d/dev"
        [ "${3:-}" != partition ] || : >"$d/partition"
        ln -s "../../devices/$1" "$sys/dev/block/$2"
        ln -s "../../devices/$1" "$sys/class/block/$(basename "$1")"
}
# bind DEVPATH DRIVER [MODULE]: DRIVER bound to the device; with MODULE, its module link.
bind() {
        local drv=$sys/bus/fake/drivers/$2
        mkdir -p "$sys/devices/$1" "$drv"
        ln -sfn "$drv" "$sys/devices/$1/driver"
        if [ -n "${3:-}" ]; then
                mkdir -p "$sys/module/$3"
                ln -sfn "$sys/module/$3" "$drv/module"
        fi
}
modalias() { mkdir -p "$sys/devices/$1"; echo "$2" >"$sys/devices/$1/modalias"; }
# slave DEVPATH SLAVE-DEVPATH
slave() { mkdir -p "$sys/devices/$1/slaves"; ln -s "$sys/devices/$2" "$sys/devices/$1/slaves/$(basename "$2")"; }
root_mount() { echo "26 1 $1 / / rw,relatime - $2 $3 rw" >"$proc/self/mountinfo"; }
# input NAME DEVPATH EV KEY: an input device with its capabilities, in /sys/class/input.
input() {
        local d=$sys/devices/$2
        mkdir -p "$d/capabilities"
        echo "$3" >"$d/capabilities/ev"
        echo "$4" >"$d/capabilities/key"
        ln -s "../../devices/$2" "$sys/class/input/$1"
}

# build NAME [OPTIONS...]: foyer build --hostonly -v of machine NAME into $tmp/NAME.img, its listing
# in $tmp/NAME.list, its log in $tmp/NAME.log.
build() {
        local name=$1
        shift
        FOYER_SYSFS=$tmp/$name/sys FOYER_PROCFS=$tmp/$name/proc FOYER_DEVFS=$tmp/$name/dev \
                "$foyer" build -v --kver "$kver" -o "$tmp/$name.img" "$@" 2>"$tmp/$name.log" ||
                { grep -v ' Entry ' "$tmp/$name.log" | tail -n 20; fail "$name: build"; }
        "$foyer" ls "$tmp/$name.img" 2>/dev/null | awk '{print $3}' >"$tmp/$name.list"
}
# has NAME MODULE / hasnt NAME MODULE: a module file (- or _, compressed or not) is (not) in the image.
has_module() { grep -qE "^usr/lib/modules/$kver/.*/${2//[-_]/[-_]}\.ko(\.xz|\.zst|\.gz)?$" "$tmp/$1.list"; }
builtin() { grep -qE "/${1//[-_]/[-_]}\.ko$" "$moddir/modules.builtin"; }
expect_module() {
        local name=$1 m
        shift
        for m in "$@"; do
                if builtin "$m"; then
                        echo "   $m: built into $kver"
                        continue
                fi
                has_module "$name" "$m" || fail "$name: module $m is not in the image"
        done
}
expect_no_module() {
        local name=$1 m
        shift
        for m in "$@"; do
                ! has_module "$name" "$m" || fail "$name: module $m is in the image"
        done
}
expect_file() { grep -qx "${2#/}" "$tmp/$1.list" || fail "$1: $2 is not in the image"; }
expect_no_file() { ! grep -qx "${2#/}" "$tmp/$1.list" || fail "$1: $2 is in the image"; }

echo "== a virtio-blk disk"
machine virtio
pci=pci0000:00/0000:00:04.0
blockdev "$pci/virtio1/block/vda" 252:0
blockdev "$pci/virtio1/block/vda/vda1" 252:1 partition
bind "$pci/virtio1" virtio_blk virtio_blk
modalias "$pci/virtio1" virtio:d00000002v00001AF4
bind "$pci" virtio-pci virtio_pci
modalias "$pci" pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00
root_mount 252:1 ext4 /dev/vda1
build virtio --hostonly
grep -q 'Host-only: root on vda1 vda\.' "$tmp/virtio.log" || fail "virtio: no summary of the host's stack"
expect_module virtio virtio_blk virtio_pci ext4
expect_no_module virtio nvme ahci sd_mod dm_mod dm_crypt raid1 xfs btrfs usbhid virtio_scsi
expect_no_file virtio /usr/sbin/lvm
expect_no_file virtio /usr/lib/systemd/systemd-networkd
expect_no_file virtio /usr/sbin/mdadm
expect_no_file virtio /usr/lib/systemd/systemd-cryptsetup
expect_no_file virtio /usr/sbin/xfs_repair
expect_no_file virtio /usr/lib/udev/rules.d/55-dm.rules
expect_file virtio /usr/sbin/e2fsck
grep -q 'module virtio_blk (block device vda of / (driver virtio_blk of devices/pci0000:00/0000:00:04.0/virtio1))' \
        "$tmp/virtio.log" || fail "virtio: virtio_blk is not there for the root's disk"
[ "$(grep -c '\.ko$' "$tmp/virtio.list")" -lt 20 ] ||
        fail "virtio: $(grep -c '\.ko$' "$tmp/virtio.list") modules, more than the disk and ext4 need"

echo "== an NVMe partition under LUKS2 (aes-cbc-essiv) under LVM, a USB keyboard, a PS/2 mouse"
machine nvme
pci=pci0000:00/0000:00:05.0
blockdev "$pci/nvme/nvme0/nvme0n1" 259:0
blockdev "$pci/nvme/nvme0/nvme0n1/nvme0n1p2" 259:2 partition
bind "$pci" nvme nvme
modalias "$pci" pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02
blockdev virtual/block/dm-0 254:0
mkdir -p "$sys/devices/virtual/block/dm-0/dm"
echo CRYPT-LUKS2-8f7a5c1e0d7b4a3c9e2f1a0b3c4d5e6f-luks-root >"$sys/devices/virtual/block/dm-0/dm/uuid"
slave virtual/block/dm-0 "$pci/nvme/nvme0/nvme0n1/nvme0n1p2"
blockdev virtual/block/dm-1 254:1
mkdir -p "$sys/devices/virtual/block/dm-1/dm"
echo LVM-Xb1aC2dE3fG4hI5jK6lM7nO8pQ9rS0tUvWxYz1234567890abcdefghijkl >"$sys/devices/virtual/block/dm-1/dm/uuid"
slave virtual/block/dm-1 virtual/block/dm-0
mkdir -p "$sys/module/dm_snapshot"
root_mount 254:1 ext4 /dev/mapper/vg0-root
truncate -s 20M "$dev/block/259:2"
printf pw >"$tmp/key"
cryptsetup luksFormat --type luks2 --batch-mode --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
        --cipher aes-cbc-essiv:sha256 --key-size 256 "$dev/block/259:2" "$tmp/key"
# Enrolled for a FIDO2 key (a token of that type; --disable-external-tokens: the host's plugin
# would check the rest of systemd's token data).
printf '{"type":"systemd-fido2","keyslots":["0"]}' >"$tmp/token.json"
cryptsetup --disable-external-tokens token import --json-file "$tmp/token.json" "$dev/block/259:2"
usb=pci0000:00/0000:00:14.0
bind "$usb" xhci_hcd xhci_pci
bind "$usb/usb1/1-1" usb
bind "$usb/usb1/1-1/1-1:1.0" usbhid usbhid
bind "$usb/usb1/1-1/1-1:1.0/0003:046D:C31C.0001" hid-generic hid_generic
input input5 "$usb/usb1/1-1/1-1:1.0/0003:046D:C31C.0001/input/input5" 120013 \
        "1000000000007 ff9f207ac14057ff febeffdfffefffff fffffffffffffffe"
bind platform/i8042/serio1 psmouse psmouse
input input4 platform/i8042/serio1/input/input4 7 "70000 0 0 0 0"
build nvme --hostonly
grep -q 'Host-only: root on dm-1 dm-0 nvme0n1p2 nvme0n1, LVM, dm-crypt, keyboards\.' "$tmp/nvme.log" ||
        fail "nvme: no summary of the host's stack: $(grep 'Host-only: root' "$tmp/nvme.log")"
grep -q 'Host-only: dm-0 uses the cipher aes-cbc-essiv:sha256\.' "$tmp/nvme.log" || fail "nvme: the LUKS header's cipher not read"
expect_module nvme nvme dm_mod dm_crypt dm_snapshot algif_skcipher essiv aesni_intel xhci_pci usbhid hid_generic ext4
# xts is what the fallback for an unreadable header (and the generic image) would bring
expect_no_module nvme xts psmouse ahci virtio_blk raid1 md_mod dm_thin_pool
expect_file nvme /usr/sbin/lvm
expect_file nvme /usr/lib/systemd/systemd-cryptsetup
expect_file nvme /usr/lib/udev/rules.d/55-dm.rules
expect_no_file nvme /usr/sbin/mdadm
# FIDO2, which the header's token asks for; not PKCS#11 or TPM2, which nothing asks for
expect_file nvme /usr/lib/x86_64-linux-gnu/cryptsetup/libcryptsetup-token-systemd-fido2.so
expect_file nvme /usr/lib/x86_64-linux-gnu/libfido2.so.1
expect_file nvme /usr/lib/udev/rules.d/60-fido-id.rules
expect_no_file nvme /usr/lib/x86_64-linux-gnu/cryptsetup/libcryptsetup-token-systemd-pkcs11.so
expect_no_file nvme /usr/lib/x86_64-linux-gnu/cryptsetup/libcryptsetup-token-systemd-tpm2.so

echo "== an md RAID1 on two AHCI disks"
machine md
ahci=pci0000:00/0000:00:1f.2
bind "$ahci" ahci ahci
modalias "$ahci" pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01
disks=(sda sdb)
for n in 0 1; do
        disk=${disks[n]}
        scsi=$ahci/ata$((n + 1))/host$n/target$n:0:0/$n:0:0:0
        blockdev "$scsi/block/$disk" "8:$((16 * n))"
        blockdev "$scsi/block/$disk/${disk}1" "8:$((16 * n + 1))" partition
        bind "$scsi" sd sd_mod
        modalias "$scsi" scsi:t-0x00
        slave virtual/block/md127 "$scsi/block/$disk/${disk}1"
done
blockdev virtual/block/md127 9:127
mkdir -p "$sys/devices/virtual/block/md127/md"
echo raid1 >"$sys/devices/virtual/block/md127/md/level"
root_mount 9:127 ext4 /dev/md127
build md --hostonly
grep -q 'Host-only: root on md127 sda1 sda sdb1 sdb, MD RAID\.' "$tmp/md.log" ||
        fail "md: no summary of the host's stack: $(grep 'Host-only: root' "$tmp/md.log")"
expect_module md ahci sd_mod raid1 md_mod ext4
expect_no_module md nvme virtio_blk dm_crypt raid456 raid10 usbhid
expect_file md /usr/sbin/mdadm
expect_no_file md /usr/sbin/lvm
expect_no_file md /usr/lib/systemd/systemd-cryptsetup

echo "== a verity root: data and hash partitions of a virtio-blk disk"
machine verity
pci=pci0000:00/0000:00:04.0
blockdev "$pci/virtio1/block/vda" 252:0
blockdev "$pci/virtio1/block/vda/vda1" 252:1 partition
blockdev "$pci/virtio1/block/vda/vda2" 252:2 partition
bind "$pci/virtio1" virtio_blk virtio_blk
bind "$pci" virtio-pci virtio_pci
blockdev virtual/block/dm-0 254:0
mkdir -p "$sys/devices/virtual/block/dm-0/dm"
# systemd-veritysetup's uuid: CRYPT-VERITY-<the root hash's first 32 hex digits>-<name>
echo CRYPT-VERITY-0123456789abcdef0123456789abcdef-root >"$sys/devices/virtual/block/dm-0/dm/uuid"
slave virtual/block/dm-0 "$pci/virtio1/block/vda/vda1"
slave virtual/block/dm-0 "$pci/virtio1/block/vda/vda2"
root_mount 254:0 ext4 /dev/mapper/root
build verity --hostonly
grep -q 'Host-only: root on dm-0 vda1 vda vda2, dm-verity\.' "$tmp/verity.log" ||
        fail "verity: no summary of the host's stack: $(grep 'Host-only: root' "$tmp/verity.log")"
expect_module verity dm_verity dm_mod virtio_blk ext4
expect_no_module verity dm_crypt nvme
expect_file verity /usr/lib/systemd/systemd-veritysetup
expect_file verity /usr/lib/systemd/system-generators/systemd-veritysetup-generator
expect_no_file verity /usr/lib/systemd/systemd-cryptsetup
# ... and a host-only image of a host without verity has none of it.
expect_no_module virtio dm_verity
expect_no_file virtio /usr/lib/systemd/systemd-veritysetup

echo "== a driver the kernel does not have"
machine missing
pci=pci0000:00/0000:00:06.0
blockdev "$pci/host2/target2:0:0/2:0:0:0/block/sdc" 8:32
bind "$pci/host2/target2:0:0/2:0:0:0" sd sd_mod
bind "$pci" foyer-hba foyer_hba
root_mount 8:32 xfs /dev/sdc
out=$tmp/missing.img
if FOYER_SYSFS=$tmp/missing/sys FOYER_PROCFS=$tmp/missing/proc FOYER_DEVFS=$tmp/missing/dev \
        "$foyer" build --hostonly --kver "$kver" -o "$out" 2>"$tmp/missing.err"; then
        fail "missing: the build succeeded"
fi
cat "$tmp/missing.err"
grep -q "Host-only: block device sdc of / (driver foyer-hba of devices/$pci) needs module foyer_hba, which kernel $kver has neither as a module nor built in\." \
        "$tmp/missing.err" || fail "missing: the error does not name the device and the driver"
[ "$(grep -c . "$tmp/missing.err")" -le 2 ] || fail "missing: more than the summary and the error on stderr"
[ ! -e "$out" ] || fail "missing: an image was written"

# A network interface eth0 of the machine, a virtio-net device driven by virtio_net.
nic() {
        local dev=pci0000:00/0000:00:03.0/virtio0
        bind "$dev" virtio_net virtio_net
        mkdir -p "$sys/devices/$dev/net/eth0" "$sys/class/net"
        ln -s "../../devices/$dev/net/eth0" "$sys/class/net/eth0"
        ln -s ../.. "$sys/devices/$dev/net/eth0/device"
}
# netbuild NAME OPTIONS...: build NAME as build does, in a mount namespace of its own whose /usr/sbin
# also holds the network roots' tools (copies of true at mount.nfs, mount.nfs4, nbd-client and
# iscsistart): host-only reads the running system's "/", and a build host has none of them (nfs-common
# would bring rpcbind, listening on every address).
netbuild() {
        local name=$1 up=$tmp/sbin-up
        shift
        if [ ! -d "$up" ]; then
                mkdir -p "$up" "$tmp/sbin-work"
                for t in mount.nfs nbd-client iscsistart; do cp /usr/bin/true "$up/$t"; done
                ln -s mount.nfs "$up/mount.nfs4"
        fi
        # shellcheck disable=SC2016 # sh -c expands them
        FOYER_SYSFS=$tmp/$name/sys FOYER_PROCFS=$tmp/$name/proc FOYER_DEVFS=$tmp/$name/dev \
                unshare -m sh -c 'mount -t overlay overlay -o "lowerdir=/usr/sbin,upperdir=$1,workdir=$2" /usr/sbin &&
                        shift 2 && exec "$@"' sh "$up" "$tmp/sbin-work" \
                "$foyer" build -v --kver "$kver" -o "$tmp/$name.img" "$@" 2>"$tmp/$name.log" ||
                { grep -v ' Entry ' "$tmp/$name.log" | tail -n 20; fail "$name: build"; }
        "$foyer" ls "$tmp/$name.img" 2>/dev/null | awk '{print $3}' >"$tmp/$name.list"
}
expect_network() {
        local f
        for f in /usr/lib/systemd/systemd-networkd /usr/lib/systemd/systemd-network-generator \
                 /usr/lib/systemd/systemd-networkd-wait-online /usr/lib/systemd/system/network-online.target \
                 /usr/lib/systemd/system/systemd-networkd-wait-online.service \
                 /usr/lib/systemd/network/99-foyer-default.network; do
                expect_file "$1" "$f"
        done
        expect_module "$1" virtio_net
}

echo "== an NFSv3 root"
machine nfs
nic
echo "26 1 0:52 / / rw,relatime shared:1 - nfs 10.0.2.2:/srv/root rw,vers=3,proto=tcp,nolock,addr=10.0.2.2" \
        >"$proc/self/mountinfo"
# fails WHAT ERROR OPTIONS...: the build of machine $m fails with the line ERROR (after the summary).
fails() {
        local what=$1 error=$2
        shift 2
        echo "== bad input: $what"
        if FOYER_SYSFS=$sys FOYER_PROCFS=$proc FOYER_DEVFS=$dev "$foyer" build --hostonly --kver "$kver" \
                -o "$tmp/bad.img" "$@" 2>"$tmp/bad.log"; then
                fail "$what: exit status 0"
        fi
        cat "$tmp/bad.log"
        grep -qxF "foyer: $error" "$tmp/bad.log" || fail "$what: no error \"$error\""
        [ ! -e "$tmp/bad.img" ] || fail "$what: $tmp/bad.img left behind"
}
[ -e /usr/sbin/mount.nfs ] || fails "an NFS root, no mount.nfs" \
        "Host-only: this host's root is on NFS, which needs /usr/sbin/mount.nfs, which is not there (Debian package nfs-common)."
if unshare -m true 2>/dev/null; then
        netbuild nfs --hostonly
        grep -q 'Host-only: root on 10.0.2.2:/srv/root, NFS\.' "$tmp/nfs.log" || fail "nfs: no summary of the host's NFS root"
        grep -q 'module nfsv3 (the nfs file system of / (10.0.2.2:/srv/root))' "$tmp/nfs.log" ||
                fail "nfs: nfsv3 is not required for the root"
        expect_module nfs sunrpc nfs nfsv3
        expect_file nfs /usr/sbin/mount.nfs
        expect_network nfs
        expect_no_file nfs /usr/sbin/nbd-client
        expect_no_file nfs /usr/sbin/iscsistart
        expect_no_file nfs /usr/sbin/e2fsck
        expect_no_module nfs virtio_blk ahci nvme nbd iscsi_tcp e1000e
        fails "an NFS root, --network=no" "Host-only: this host's root is on NFS, which needs the network, and Network=no (--network=no) leaves it out." \
                --network=no

        echo "== an NBD root"
        machine nbd
        nic
        blockdev virtual/block/nbd0 43:0
        root_mount 43:0 ext4 /dev/nbd0
        netbuild nbd --hostonly
        grep -q 'Host-only: root on nbd0, NBD\.' "$tmp/nbd.log" || fail "nbd: no summary of the host's NBD root"
        expect_module nbd nbd ext4
        expect_file nbd /usr/sbin/nbd-client
        expect_network nbd
        expect_no_file nbd /usr/sbin/mount.nfs
        expect_no_module nbd nfs iscsi_tcp

        echo "== an iSCSI root"
        machine iscsi
        nic
        disk=platform/host2/session1/target2:0:0/2:0:0:0
        blockdev "$disk/block/sda" 8:0
        blockdev "$disk/block/sda/sda1" 8:1 partition
        bind "$disk" sd sd_mod
        mkdir -p "$sys/devices/platform/host2/session1/iscsi_session/session1"
        root_mount 8:1 ext4 /dev/sda1
        netbuild iscsi --hostonly
        grep -q 'Host-only: root on sda1 sda, iSCSI\.' "$tmp/iscsi.log" || fail "iscsi: no summary of the host's iSCSI root"
        expect_module iscsi iscsi_tcp sd_mod ext4
        expect_file iscsi /usr/sbin/iscsistart
        expect_network iscsi
        expect_no_file iscsi /usr/sbin/nbd-client
        expect_no_module iscsi nbd nfs
else
        echo "   no mount namespaces here (unshare -m): the host-only network roots with their tools are not tested"
fi

echo "== a chroot: no / in mountinfo"
machine chroot
cp -a "$tmp/virtio/sys" "$tmp/chroot/"
echo "21 26 0:20 / /proc rw,relatime - proc proc rw" >"$tmp/chroot/proc/self/mountinfo"
build chroot --hostonly
grep -q 'Host-only: .*has no mount at / (a chroot?): the devices of this system are not present; building the generic image\.' \
        "$tmp/chroot.log" || fail "chroot: no warning"
expect_module chroot nvme ahci virtio_blk dm_crypt usbhid
expect_file chroot /usr/sbin/lvm

echo "== HostOnly=yes in foyer.conf; -N over it"
mkdir -p "$tmp/conf/etc/foyer"
printf '[Build]\nHostOnly=yes\n' >"$tmp/conf/etc/foyer/foyer.conf"
FOYER_CONFIG_ROOT=$tmp/conf build virtio
expect_no_module virtio nvme
FOYER_CONFIG_ROOT=$tmp/conf build virtio -N
expect_module virtio nvme ahci
printf '[Build]\nHostOnly=maybe\n' >"$tmp/conf/etc/foyer/foyer.conf"
out=$tmp/bad.img
expect_error "HostOnly=maybe" 'foyer.conf:2: HostOnly= takes a boolean, not "maybe"\.' \
        env FOYER_CONFIG_ROOT="$tmp/conf" "$foyer" build --kver "$kver" -o "$out"

echo "== --root: not the running system"
use_fake_kernel
build virtio --hostonly --root "$root" --kver "$kver"
grep -q "Host-only: --root $root is not the running system, whose devices host-only follows: building the generic image\." \
        "$tmp/virtio.log" || fail "--root: no warning"
has_module virtio nvme || fail "--root: not the generic image"
echo "PASS"
