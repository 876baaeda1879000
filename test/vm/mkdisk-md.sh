#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkdisk-md.sh CACHEDIR TREE RECIPE VM_RUN KERNEL INITRD LOGDIR
#
# The MD RAID disks (recipes md-*), which mkdisk.sh cannot make: the build host's kernel may have
# no md driver, and only the kernel writes an array's superblocks. The members are prepared here,
# then a setup VM (vm-run, KERNEL with INITRD, a foyer image: it has mdadm and md's modules, which
# the test root lacks) creates the array on them from a debug shell and powers off. Prints the
# image paths, one per line, as mkdisk.sh does; cached the same way, keyed by this script, the tree
# and the array's recipe (not by the setup image: what the array holds does not depend on it).
#
# Recipes:
#   md-raid1           two members of a RAID1 (metadata 1.0, homehost "any") holding the test
#                      root as ext4 (UUID MD_FS_UUID), array UUID MD_UUID
#   md-raid1-degraded  the same array's first member only (the second one is missing)
#   md-raid1-luks-lvm  two members of a RAID1 (metadata 1.2, array UUID MD_LUKS_ARRAY_UUID) holding
#                      LUKS2 (UUID MD_LUKS_UUID, passphrase MD_PASSPHRASE) holding the PV of VG
#                      vgmd, whose LV root holds the test root as ext4
#
# md-raid1: metadata 1.0 keeps the superblock at the end of each member, so the file system is put
# on both members beforehand and the array is created over it with --assume-clean: no copy in the
# VM. md-raid1-luks-lvm: the VM formats and opens the LUKS2 volume and makes the VG (the image has
# cryptsetup and lvm), and copies the file system from a third disk into the LV. The homehost
# "any" makes an array local to every host, as one created on the machine itself is, so that
# mdadm's udev rule starts mdadm-last-resort@ for it when it is degraded.
set -euo pipefail

cachedir=${1:?usage: mkdisk-md.sh CACHEDIR TREE RECIPE VM_RUN KERNEL INITRD LOGDIR}
tree=${2:?}
recipe=${3:?}
vm_run=${4:?}
kernel=${5:?}
initrd=${6:?}
logdir=${7:?}

# Fixed identities, referred to by the scenarios.
MD_UUID=6d645241:49443100:666f7965:72000001             # mdadm's form
MD_FS_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e30         # the ext4 in the array
FS_SIZE=1G
MEMBER_EXTRA=4M         # room for metadata 1.0 at the end of each member
MD_LUKS_ARRAY_UUID=6d645241:49443100:666f7965:72000002
MD_LUKS_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e31
MD_LVM_FS_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e32
MD_PASSPHRASE=foyer-md-pass-8Vx3                        # test data, typed at the prompt

case $recipe in
md-raid1) array=md-raid1 members=(1 2) ;;
md-raid1-degraded) array=md-raid1 members=(1) ;;
md-raid1-luks-lvm) array=md-raid1-luks-lvm members=(1 2) ;;
*) echo "mkdisk-md: unknown recipe '$recipe'" >&2; exit 2 ;;
esac

hash=$( { sha256sum "$0"; echo "$tree $array"; } | sha256sum | cut -c1-12)
out=$cachedir/disk-$array-$hash
work=$out.tmp

print_members() {
        for i in "${members[@]}"; do echo "$out/$i.img"; done >&3
}

mkdir -p "$cachedir" "$logdir"
# Only the image paths go to stdout; the tools' chatter goes to stderr.
exec 3>&1 1>&2
exec 9>"$cachedir/disk-$array.lock"
flock 9
if [[ -e $out.ok ]]; then
        print_members
        exit 0
fi
rm -rf "$out" "$out.ok" "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
# QEMU's -drive takes the path in a comma-separated list, and qemu-args lines split at blanks.
[[ $work =~ ^[A-Za-z0-9/._+-]+$ ]] || { echo "mkdisk-md: $work: the cache path must be plain (no blanks or commas)" >&2; exit 1; }

# The root file system, as mkdisk.sh's stage(): the tree without kernel and modules, its own fstab.
stage() {       # FSTAB-LINE
        cp -al "$tree" "$work/stage"
        rm -rf "${work:?}/stage/boot/"* "${work:?}/stage/usr/lib/modules/"*
        rm -f "$work/stage/etc/fstab"
        printf '# written by test/vm/mkdisk-md.sh, recipe %s\n%s\n' "$array" "$1" > "$work/stage/etc/fstab"
}

# The setup VM: the foyer image's debug shell (rd.break=initqueue, udev has seen the disks),
# rd.md=0 so that udev leaves the new array to mdadm --create. The disks are attached writable
# through qemu-args (vm-run's own --drive disks are snapshots). Each step of the shell is one
# "send" whose command prints MARK-42 at its end on success. The image has no sync(1): what is
# written reaches the disks when the last user of a device closes it (cat, cryptsetup close,
# mdadm --stop write their superblocks and flush).
setup_head() {  # DISK...
        local drives=() d
        for d in "$@"; do drives+=("-drive file=$d,format=raw,if=virtio,cache=unsafe"); done
        printf 'append     rd.break=initqueue rd.md=0 foyer.noreport\n'
        printf 'qemu-args  %s\n' "${drives[*]}"
        printf 'expect     240 rd.break=initqueue#[[:space:]]*$\n'
}
setup_step() {  # SECONDS MARK COMMAND
        # shellcheck disable=SC2016 # $((6*7)) is for the VM's shell: its output, not the echoed command, matches
        printf 'send       %s && echo %s-$((6*7))\\n\n' "$3" "$2"
        printf 'expect     %s %s-42\n' "$1" "$2"
}
setup_tail() {
        printf 'send       systemctl poweroff --force --force\\n\n'
        printf 'poweroff   60\n'
}

case $array in
md-raid1)
        stage "UUID=$MD_FS_UUID / ext4 defaults 0 1"
        truncate -s "$FS_SIZE" "$work/1.img"
        mkfs.ext4 -q -F -L foyer-md-root -U "$MD_FS_UUID" -d "$work/stage" "$work/1.img"
        truncate -s "+$MEMBER_EXTRA" "$work/1.img"
        cp --sparse=always "$work/1.img" "$work/2.img"
        {
                setup_head "$work/1.img" "$work/2.img"
                setup_step 120 MD-CREATED "udevadm settle; modprobe raid1 && mdadm --create /dev/md/root --run --assume-clean --metadata=1.0 --level=1 --raid-devices=2 --bitmap=none --homehost=any --name=root --uuid=$MD_UUID /dev/vda /dev/vdb && udevadm settle && mdadm --stop /dev/md/root"
                setup_tail
        } > "$work/setup.scenario"
        md_uuid=$MD_UUID
        ;;
md-raid1-luks-lvm)
        stage "/dev/mapper/vgmd-root / ext4 defaults 0 1"
        truncate -s 320M "$work/root.fs"
        mkfs.ext4 -q -F -L foyer-md-lvm-root -U "$MD_LVM_FS_UUID" -d "$work/stage" "$work/root.fs"
        truncate -s 400M "$work/1.img" "$work/2.img"
        {
                setup_head "$work/1.img" "$work/2.img" "$work/root.fs"
                setup_step 120 MD-CREATED "udevadm settle; modprobe raid1 && mdadm --create /dev/md/crypt --run --metadata=1.2 --level=1 --raid-devices=2 --bitmap=none --homehost=any --name=crypt --uuid=$MD_LUKS_ARRAY_UUID /dev/vda /dev/vdb && udevadm settle"
                setup_step 120 LUKS-OPEN "printf %s $MD_PASSPHRASE | cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --uuid $MD_LUKS_UUID --key-file - /dev/md/crypt && printf %s $MD_PASSPHRASE | cryptsetup open --key-file - /dev/md/crypt mdcrypt && udevadm settle"
                setup_step 300 LV-WRITTEN "lvm pvcreate /dev/mapper/mdcrypt && lvm vgcreate vgmd /dev/mapper/mdcrypt && lvm lvcreate -y -n root -L 340M vgmd && udevadm settle && cat /dev/vdc > /dev/vgmd/root"
                setup_step 120 MD-STOPPED "lvm vgchange -an vgmd && cryptsetup close mdcrypt && udevadm settle && mdadm --stop /dev/md/crypt"
                setup_tail
        } > "$work/setup.scenario"
        md_uuid=$MD_LUKS_ARRAY_UUID
        ;;
esac
rm -rf "$work/stage"

"$vm_run" --kernel "$kernel" --initrd "$initrd" --log "$logdir/setup-$array.log" "$work/setup.scenario" ||
        { echo "mkdisk-md: the setup VM failed (log: $logdir/setup-$array.log)" >&2; exit 1; }

# What the VM wrote, checked here: each member carries the array's superblock (libblkid reads it,
# no md driver needed).
for i in 1 2; do
        type=$(blkid -p -o value -s TYPE "$work/$i.img" || true)
        uuid=$(blkid -p -o value -s UUID "$work/$i.img" || true)
        [[ $type == linux_raid_member && ${uuid//-/} == "${md_uuid//:/}" ]] ||
                { echo "mkdisk-md: member $i is '$type' with UUID '$uuid', not a member of $md_uuid" >&2; exit 1; }
done

rm -f "$work/setup.scenario" "$work/root.fs"
mv "$work" "$out"
printf '%s\n' "$tree" > "$out.ok"
# Arrays of earlier versions of this script made from this tree, or from a tree that is gone, are
# garbage now (as in mkdisk.sh).
for old in "$cachedir/disk-$array-"????????????; do
        [[ -e $old.ok && $old != "$out" ]] || continue
        old_tree=$(cat "$old.ok")
        [[ -n $old_tree ]] || continue
        if [[ $old_tree == "$tree" || ! -d $old_tree ]]; then
                rm -rf "$old" "$old.ok"
        fi
done
print_members
