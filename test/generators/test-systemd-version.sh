#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-systemd-version.sh ROOT_GENERATOR CRYPT_GENERATOR
#
# The generators follow the image's systemd version file (FOYER_SYSTEMD_VERSION_PATH, here through
# $FOYER_SYSTEMD_VERSION_FILE): without it they write systemd 252's paths and timeouts, with
# VERSION=257 (as the builder records for Debian 13) what 257's generators write
# (docs/systemd-257.md: fsck, cryptsetup, growfs and /usr units), and a LIBEXECDIR= from the file is
# the one in the units. (differential-257 compares everything with trixie's own generators.)
set -u

root=$(realpath "$1")
crypt=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
fake_fsck_bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$fakebin"' EXIT
fail=0

# run NAME GENERATOR VERSION_FILE CMDLINE [VAR=value...]: runs into $tmp/NAME/{normal,early,late}, with
# the extra environment (e.g. SYSTEMD_FSTAB=FILE) last, so that it wins.
run() {
        mkdir -p "$tmp/$1"/{normal,early,late}
        env -i PATH="$fakebin:/usr/bin:/bin" SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= FOYER_CMDLINE_DIR=/nonexistent \
                SYSTEMD_FSTAB=/dev/null SYSTEMD_SYSROOT_FSTAB=/dev/null SYSTEMD_CRYPTTAB=/dev/null \
                FOYER_SYSTEMD_VERSION_FILE="$3" SYSTEMD_PROC_CMDLINE="$4" "${@:5}" \
                "$2" "$tmp/$1/normal" "$tmp/$1/early" "$tmp/$1/late" 2>"$tmp/$1.log" ||
                { echo "FAIL $1: exit $?"; cat "$tmp/$1.log"; fail=1; }
}
# expect NAME FILE LINE: FILE (under $tmp/NAME/normal) has the line LINE.
expect() {
        if ! grep -qxF -- "$3" "$tmp/$1/normal/$2"; then
                echo "FAIL $1: $2 lacks \"$3\":"
                sed 's/^/    /' "$tmp/$1/normal/$2"
                fail=1
        fi
}

printf 'VERSION=257\nLIBEXECDIR=/usr/lib/systemd\nCRYPTSETUP=/usr/bin/systemd-cryptsetup\n' >"$tmp/257"
printf 'VERSION=257\nLIBEXECDIR=/opt/sd\n' >"$tmp/257-opt"
luks='rd.luks.uuid=3f5ad593-4546-4a94-a374-bcfb68aa11f7'
cs='systemd-cryptsetup@luks\x2d3f5ad593\x2d4546\x2d4a94\x2da374\x2dbcfb68aa11f7.service'

run root-252 "$root" "$tmp/absent" root=/dev/sda2
expect root-252 systemd-fsck-root.service "ExecStart=/lib/systemd/systemd-fsck /dev/sda2"
expect root-252 systemd-fsck-root.service "TimeoutSec=0"
run root-257 "$root" "$tmp/257" root=/dev/sda2
expect root-257 systemd-fsck-root.service "ExecStart=/usr/lib/systemd/systemd-fsck /dev/sda2"
expect root-257 systemd-fsck-root.service "TimeoutSec=infinity"
if ! sed -n '/^Documentation=/{n;p}' "$tmp/root-257/normal/systemd-fsck-root.service" | grep -qx ''; then
        echo "FAIL root-257: no empty line after Documentation= (257 writes one)"
        fail=1
fi
run root-opt "$root" "$tmp/257-opt" "root=/dev/sda2 systemd.volatile=yes"
expect root-opt systemd-fsck-root.service "ExecStart=/opt/sd/systemd-fsck /dev/sda2"
if [[ $(readlink "$tmp/root-opt/normal/initrd-root-fs.target.requires/systemd-volatile-root.service") != \
      /opt/sd/system/systemd-volatile-root.service ]]; then
        echo "FAIL root-opt: systemd-volatile-root.service link does not follow LIBEXECDIR="
        fail=1
fi

# A /usr line in the root's fstab: 257 mounts it on /sysusr/usr and binds it into /sysroot/usr.
printf '/dev/sda2 / ext4 defaults 0 1\n/dev/sdb1 /usr ext4 ro 0 2\n' >"$tmp/usr.fstab"
run usr-252 "$root" "$tmp/absent" root=/dev/sda2 SYSTEMD_SYSROOT_FSTAB="$tmp/usr.fstab"
expect usr-252 sysroot-usr.mount "What=/dev/sdb1"
[[ ! -e $tmp/usr-252/normal/sysusr-usr.mount ]] || { echo "FAIL usr-252: sysusr-usr.mount written"; fail=1; }
run usr-257 "$root" "$tmp/257" root=/dev/sda2 SYSTEMD_SYSROOT_FSTAB="$tmp/usr.fstab"
expect usr-257 sysroot-usr.mount "What=/sysusr/usr"
expect usr-257 sysroot-usr.mount "Options=bind"
expect usr-257 sysusr-usr.mount "What=/dev/sdb1"
expect usr-257 sysusr-usr.mount "Requires=systemd-fsck-usr.service"
if [[ $(readlink "$tmp/usr-257/normal/initrd-usr-fs.target.requires/sysusr-usr.mount") != ../sysusr-usr.mount ]]; then
        echo "FAIL usr-257: sysusr-usr.mount is not required by initrd-usr-fs.target"
        fail=1
fi

# x-systemd.growfs: 252 writes the growfs unit, 257 links the image's template instance.
printf '/dev/sdc1 /data ext4 x-systemd.growfs 0 0\n' >"$tmp/growfs.fstab"
run growfs-252 "$root" "$tmp/absent" root=/dev/sda2 SYSTEMD_FSTAB="$tmp/growfs.fstab"
expect growfs-252 'systemd-growfs@data.service' "ExecStart=/lib/systemd/systemd-growfs /data"
run growfs-257 "$root" "$tmp/257" root=/dev/sda2 SYSTEMD_FSTAB="$tmp/growfs.fstab"
if [[ $(readlink "$tmp/growfs-257/normal/data.mount.wants/systemd-growfs@data.service") != \
      /usr/lib/systemd/system/systemd-growfs@.service || -e $tmp/growfs-257/normal/systemd-growfs@data.service ]]; then
        echo "FAIL growfs-257: data.mount.wants/systemd-growfs@data.service is not a link to the image's template"
        fail=1
fi
expect growfs-257 local-fs.target.d/50-order-systemd-growfs@data.service.conf "After=systemd-growfs@data.service"

run crypt-252 "$crypt" "$tmp/absent" "$luks"
expect crypt-252 "$cs" "ExecStop=/lib/systemd/systemd-cryptsetup detach 'luks-3f5ad593-4546-4a94-a374-bcfb68aa11f7'"
expect crypt-252 "$cs" "TimeoutSec=0"
run crypt-257 "$crypt" "$tmp/257" "$luks"
expect crypt-257 "$cs" "ExecStop=/usr/bin/systemd-cryptsetup detach 'luks-3f5ad593-4546-4a94-a374-bcfb68aa11f7'"
expect crypt-257 "$cs" "TimeoutSec=infinity"
expect crypt-257 "$cs" "ImportCredential=cryptsetup.*"
expect crypt-257 "$cs" "After=cryptsetup-pre.target systemd-udevd-kernel.socket systemd-tpm2-setup-early.service"

# A volume named "root" or "usr" implies x-initrd.attach in 257 (no Conflicts=/Before=umount.target),
# also with its data on another device (rd.luks.data=); 252 treats the names as any other.
uuid=3f5ad593-4546-4a94-a374-bcfb68aa11f7
root_luks="rd.luks.name=$uuid=root rd.luks.data=$uuid=UUID=8e2d4c1a-1111-4222-8333-944455556666"
run crypt-root-252 "$crypt" "$tmp/absent" "$root_luks"
expect crypt-root-252 'systemd-cryptsetup@root.service' "Conflicts=umount.target"
run crypt-root-257 "$crypt" "$tmp/257" "$root_luks"
if grep -q 'umount\.target' "$tmp/crypt-root-257/normal/systemd-cryptsetup@root.service"; then
        echo "FAIL crypt-root-257: systemd-cryptsetup@root.service names umount.target (257 implies x-initrd.attach):"
        sed 's/^/    /' "$tmp/crypt-root-257/normal/systemd-cryptsetup@root.service"
        fail=1
fi
run crypt-other-257 "$crypt" "$tmp/257" "rd.luks.name=$uuid=rootfs"
expect crypt-other-257 'systemd-cryptsetup@rootfs.service' "Conflicts=umount.target"
expect crypt-other-257 'systemd-cryptsetup@rootfs.service' "Before=umount.target"

((fail == 0)) && echo "systemd-version: 252 and 257 outputs as expected"
exit $fail
