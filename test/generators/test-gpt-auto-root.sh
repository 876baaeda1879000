#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-gpt-auto-root.sh GENERATOR
#
# The runtime half of foyer-gpt-auto-generator ("--root-discovered", run by foyer-gpt-auto-root.service)
# on a real GPT disk image: inside a chroot (private mount namespace, tmpfs /run, its own /dev), the disk
# is a loop device over the whole image and each partition one over its extent; a fake sysfs
# ($FOYER_SYSFS) ties them together as the kernel would (loop partition scanning does not work in every
# container), and /dev/gpt-auto-root points at the root partition as udev would link it. Checks:
#   1. /sysroot mounted rw from a root partition with the read-only flag (bit 60) is remounted ro; the
#      log names the root partition by its PARTUUID; the /usr partition is mounted on /sysroot/usr (rw,
#      as "rw" is given) and named in the log by its PARTUUID, and the higher-labelled one with the
#      no-auto flag (bit 63) is not mounted;
#   2. mount.usr= on the command line: no /usr discovery;
#   3. the grow-fs flag (bit 59) with /sysroot mounted rw: the file system grows to the partition;
#   4. /sysroot from another device: nothing is done (no remount, no /usr mount);
#   5. an extra argument is refused.
# Needs root, four loop devices and unshare; exits 77 (skipped) otherwise.
set -u
generator=$(realpath "$1")

if ((EUID != 0)) || ! unshare -m --propagation private true 2>/dev/null || ! command -v sfdisk >/dev/null ||
   ! command -v mkfs.ext4 >/dev/null; then
        echo "SKIP: needs root, unshare, sfdisk and mkfs.ext4"
        exit 77
fi

tmp=$(mktemp -d)
loops=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
        local l
        for l in "${loops[@]}"; do losetup -d "$l"; done
        rm -rf "$tmp"
}
trap cleanup EXIT

attach() { # OFFSET_SECTORS SIZE_SECTORS (0 0: the whole image); sets $attached
        if (($2 == 0)); then
                attached=$(losetup -f --show "$tmp/disk.img") || return 1
        else
                attached=$(losetup -f --show -o $(($1 * 512)) --sizelimit $(($2 * 512)) "$tmp/disk.img") || return 1
        fi
        loops+=("$attached")
}
majmin() { printf '%d:%d' "0x$(stat -c %t "$1")" "0x$(stat -c %T "$1")"; }

root_uuid=7a1b6c2d-0000-4000-8000-00000000a001
usr_uuid=7a1b6c2d-0000-4000-8000-00000000a003
# 2: root with the read-only flag; 3: /usr "usr-1"; 4: /usr "usr-2" with no-auto; 5: root with grow-fs.
truncate -s 96M "$tmp/disk.img"
sfdisk -q "$tmp/disk.img" <<EOF || { echo "FAIL: sfdisk"; exit 1; }
label: gpt
size=8M, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=esp
size=24M, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$root_uuid, name=root, attrs="GUID:60"
size=16M, type=8484680C-9521-48C6-9C11-B0720656F69E, uuid=$usr_uuid, name=usr-1
size=16M, type=8484680C-9521-48C6-9C11-B0720656F69E, name=usr-2, attrs="GUID:63"
size=24M, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, name=root-grow, attrs="GUID:59"
EOF
declare -A dev
attach 0 0 || { echo "SKIP: no loop device"; exit 77; }
disk=$attached
while read -r n start size; do
        attach "$start" "$size" || { echo "SKIP: not enough loop devices"; exit 77; }
        dev[$n]=$attached
done < <(sfdisk -d "$tmp/disk.img" | sed -n 's/^.*img\([235]\) : start= *\([0-9]*\), size= *\([0-9]*\),.*/\1 \2 \3/p')
if [[ -z ${dev[5]:-} ]]; then
        echo "FAIL: cannot read the partition layout"
        exit 1
fi
# shellcheck disable=SC2015 # fails when any mkfs fails
mkfs.ext4 -q -F "${dev[2]}" && mkfs.ext4 -q -F "${dev[3]}" && mkfs.ext4 -q -F "${dev[5]}" 8M ||
        { echo "FAIL: mkfs"; exit 1; }
# The root file systems need a /usr mount point; usr-1 gets a marker to recognise it.
mkdir -p "$tmp/m"
for p in 2 5; do mount "${dev[$p]}" "$tmp/m" && mkdir "$tmp/m/usr" && umount "$tmp/m" || exit 1; done
mount "${dev[3]}" "$tmp/m" && touch "$tmp/m/usr-1" && umount "$tmp/m" || exit 1

# sysfs as the kernel shows a partitioned disk "vdx", with the loop devices' numbers (partition 4 has no
# device: it must never be needed, as it is no-auto).
sys=$tmp/fakesys
mkdir -p "$sys/dev/block" "$sys/devices/vdx"
majmin "$disk" >"$sys/devices/vdx/dev"
ln -s ../../devices/vdx "$sys/dev/block/$(majmin "$disk")"
for p in 2 3 5; do
        mkdir -p "$sys/devices/vdx/vdx$p"
        echo "$p" >"$sys/devices/vdx/vdx$p/partition"
        majmin "${dev[$p]}" >"$sys/devices/vdx/vdx$p/dev"
        ln -s "../../devices/vdx/vdx$p" "$sys/dev/block/$(majmin "${dev[$p]}")"
done

export generator tmp root_uuid usr_uuid disk dev2=${dev[2]} dev3=${dev[3]} dev5=${dev[5]}
export -f majmin
unshare -m --propagation private bash -s <<'EOF'
set -u
fail=0
root=$tmp/root
mkdir -p "$root" && mount -t tmpfs tmpfs "$root" || exit 1
for d in usr etc proc sys; do mkdir -p "$root/$d" && mount --rbind "/$d" "$root/$d" || exit 1; done
for d in bin sbin lib lib64; do [[ -L /$d ]] && ln -s "$(readlink "/$d")" "$root/$d"; done
mkdir -p "$root/dev" "$root/run" "$root/sysroot" "$root/fakesys" "$root$(dirname "$generator")"
mount -t tmpfs tmpfs "$root/dev" && mount -t tmpfs tmpfs "$root/run" &&
        mount --bind "$(dirname "$generator")" "$root$(dirname "$generator")" &&
        mount --bind "$tmp/fakesys" "$root/fakesys" || exit 1
mkdir -p "$root/dev/block"
for n in "$disk" "$dev2" "$dev3" "$dev5"; do
        cp -a "$n" "$root/dev/" || { echo "FAIL: cannot copy $n"; exit 1; }
        ln -s "../$(basename "$n")" "$root/dev/block/$(majmin "$n")"
done
touch "$root/dev/null" && mount --bind /dev/null "$root/dev/null"

setup() { # CMDLINE [ARG...]
        chroot "$root" env -i PATH=/usr/bin:/bin SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console \
                FOYER_CMDLINE_DIR=/nonexistent SYSTEMD_EFI_OPTIONS= FOYER_SYSFS=/fakesys \
                SYSTEMD_PROC_CMDLINE="$1" "$generator" --root-discovered "${@:2}" 2>"$tmp/log"
}
check() { # DESCRIPTION COMMAND...
        local what=$1
        shift
        if ! "$@"; then
                echo "FAIL: $what"
                sed 's/^/    /' "$tmp/log"
                fail=1
        fi
}
opt() { findmnt -n -o OPTIONS "$root/$1" | tr ',' '\n' | grep -qx "$2"; }
not() { ! "$@"; }

# 1. read-only flag, /usr discovery, what the log says.
ln -s "$(basename "$dev2")" "$root/dev/gpt-auto-root"
mount "$dev2" "$root/sysroot" || exit 1
setup "rw"
check "exit status 0" test $? = 0
check "the log names the root partition" grep -q "discovered root partition .*PARTUUID=$root_uuid" "$tmp/log"
check "read-only flag: /sysroot remounted ro" opt sysroot ro
check "/usr partition usr-1 mounted" test -e "$root/sysroot/usr/usr-1"
check "/usr is usr-1, not the no-auto usr-2" test "$(findmnt -n -o MAJ:MIN "$root/sysroot/usr" | tr -d ' ')" = "$(majmin "$dev3")"
check "/usr mounted rw with rw" opt sysroot/usr rw
check "the log names the /usr partition" grep -q "discovered /usr partition .*PARTUUID=$usr_uuid" "$tmp/log"
umount "$root/sysroot/usr"; umount "$root/sysroot"

# 2. mount.usr= given: /usr is left to the root generator.
mount -o ro "$dev2" "$root/sysroot" || exit 1
setup "ro mount.usr=/dev/sdb1"
check "exit status 0 with mount.usr=" test $? = 0
check "no /usr mount with mount.usr=" not findmnt -n "$root/sysroot/usr"
check "root still handled with mount.usr=" grep -q "discovered root partition .*PARTUUID=$root_uuid" "$tmp/log"
umount "$root/sysroot"

# 3. grow-fs flag on a rw root (and /usr read-only without rw).
rm "$root/dev/gpt-auto-root" && ln -s "$(basename "$dev5")" "$root/dev/gpt-auto-root"
mount "$dev5" "$root/sysroot" || exit 1
before=$(df -k --output=size "$root/sysroot" | tail -1)
setup ""
check "exit status 0 with grow-fs" test $? = 0
after=$(df -k --output=size "$root/sysroot" | tail -1)
if [[ -x /lib/systemd/systemd-growfs ]]; then
        check "grow-fs flag: systemd-growfs runs on /sysroot" grep -q 'Resizing "/sysroot"' "$tmp/log"
        # Online resizing needs CAP_SYS_RESOURCE, which a container may lack.
        if grep -q "Operation not permitted" "$tmp/log"; then
                echo "NOTE: this machine does not allow online resizing; not checking the new size"
        else
                check "grow-fs flag: file system grew ($before -> $after KiB)" test "$after" -gt "$((before + 8000))"
        fi
fi
check "grow-fs root stays rw" not opt sysroot ro
check "/usr mounted ro without rw" opt sysroot/usr ro
umount "$root/sysroot/usr"; umount "$root/sysroot"

# 4. /sysroot not from the discovered partition.
mount "$dev3" "$root/sysroot" || exit 1
setup "rw"
check "exit status 0 for another root" test $? = 0
check "another root: /sysroot stays rw" not opt sysroot ro
check "another root: no /usr mount" not findmnt -n "$root/sysroot/usr"
check "another root: the log says nothing is done" grep -q "not mounted from /dev/gpt-auto-root, nothing to do" "$tmp/log"
umount "$root/sysroot"

# 5. Bad usage.
setup "" extra
check "an extra argument is refused" test $? = 1
exit "$fail"
EOF
rc=$?
echo "test-gpt-auto-root: $([[ $rc == 0 ]] && echo ok || echo FAILED)"
exit $rc
