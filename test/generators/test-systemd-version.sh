#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-systemd-version.sh ROOT_GENERATOR CRYPT_GENERATOR
#
# The generators follow the image's systemd version file (FOYER_SYSTEMD_VERSION_PATH, here through
# $FOYER_SYSTEMD_VERSION_FILE): without it they write systemd 252's paths and timeouts, with
# VERSION=257 (as the builder records for Debian 13) what 257's generators write
# (docs/systemd-257.md), and a LIBEXECDIR= from the file is the one in the units.
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

# run NAME GENERATOR VERSION_FILE CMDLINE: runs into $tmp/NAME/{normal,early,late}.
run() {
        mkdir -p "$tmp/$1"/{normal,early,late}
        env -i PATH="$fakebin:/usr/bin:/bin" SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= FOYER_CMDLINE_DIR=/nonexistent \
                SYSTEMD_FSTAB=/dev/null SYSTEMD_SYSROOT_FSTAB=/dev/null SYSTEMD_CRYPTTAB=/dev/null \
                FOYER_SYSTEMD_VERSION_FILE="$3" SYSTEMD_PROC_CMDLINE="$4" \
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

run crypt-252 "$crypt" "$tmp/absent" "$luks"
expect crypt-252 "$cs" "ExecStop=/lib/systemd/systemd-cryptsetup detach 'luks-3f5ad593-4546-4a94-a374-bcfb68aa11f7'"
expect crypt-252 "$cs" "TimeoutSec=0"
run crypt-257 "$crypt" "$tmp/257" "$luks"
expect crypt-257 "$cs" "ExecStop=/usr/bin/systemd-cryptsetup detach 'luks-3f5ad593-4546-4a94-a374-bcfb68aa11f7'"
expect crypt-257 "$cs" "TimeoutSec=infinity"
expect crypt-257 "$cs" "ImportCredential=cryptsetup.*"
expect crypt-257 "$cs" "After=cryptsetup-pre.target systemd-udevd-kernel.socket systemd-tpm2-setup-early.service"

((fail == 0)) && echo "systemd-version: 252 and 257 outputs as expected"
exit $fail
