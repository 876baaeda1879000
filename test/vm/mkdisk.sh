#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkdisk.sh CACHEDIR TREE RECIPE
#
# Makes the disk images of one recipe from the test root TREE (see mkroot.sh) and prints their
# paths, one per line, in the order they are attached (vda, vdb, ...). Images are cached in
# CACHEDIR/disk-RECIPE-<hash>/, keyed by this script, the tree and the recipe name. All UUIDs
# and labels are fixed, so scenarios can name them. No device-mapper is needed; xfs and btrfs
# use a loop mount.
set -euo pipefail

cachedir=${1:?usage: mkdisk.sh CACHEDIR TREE RECIPE}
tree=${2:?}
recipe=${3:?}

# Fixed identities, referred to by the scenarios.
ROOT_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e01
LABEL_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e02
GPT_FS_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e03
GPT_PARTUUID=6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3b02
GPT_PARTLABEL=foyer-root
XFS_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e04
BTRFS_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e05
SPLIT_ROOT_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e06
SPLIT_USR_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e07
DIRTY_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e08
SIZE=1G
# LUKS2 test volumes (recipes luks*): the LUKS UUIDs and the ext4 inside. The passphrase and the
# key file (test/vm/luks-test.key, which scenarios add to the image) are test data, in the clear.
LUKS_UUID=4c554b53-2d70-4000-8000-000000000001
LUKS_FS_UUID=4c554b53-6673-4000-8000-000000000001
LUKS_KEY_UUID=4c554b53-2d6b-4000-8000-000000000002
LUKS_KEY_FS_UUID=4c554b53-6673-4000-8000-000000000002
LUKS_PASSPHRASE=foyer-luks-pass-7Rq2
LUKS_KEY_FILE=$(dirname "$(realpath "$0")")/luks-test.key
LUKS_SIZE=320M          # the ext4 inside; the header takes 16M more

hash=$( { sha256sum "$0"; [[ $recipe != luks* ]] || sha256sum "$LUKS_KEY_FILE"; echo "$tree $recipe"; } |
        sha256sum | cut -c1-12)
out=$cachedir/disk-$recipe-$hash
work=$out.tmp

mkdir -p "$cachedir"
# Only the image paths go to stdout; the tools' chatter goes to stderr.
exec 3>&1 1>&2
exec 9>"$cachedir/disk-$recipe.lock"
flock 9
if [[ -e $out.ok ]]; then
        ls -1 "$out"/*.img >&3
        exit 0
fi
rm -rf "$out" "$out.ok" "$work"
mkdir -p "$work"
cleanup() {
        if [[ -n ${mnt:-} ]] && mountpoint -q "$mnt"; then umount "$mnt"; fi
        rm -rf "$work"
}
trap cleanup EXIT

# A private copy of the tree (hard links: cheap) whose /etc/fstab can be replaced.
stage() {
        cp -al "$tree" "$work/stage"
        rm -f "$work/stage/etc/fstab"
        printf '# written by test/vm/mkdisk.sh, recipe %s\n' "$recipe" > "$work/stage/etc/fstab"
        for line in "$@"; do
                printf '%s\n' "$line" >> "$work/stage/etc/fstab"
        done
}

mkext4() {      # IMG LABEL UUID DIR
        truncate -s "$SIZE" "$1"
        mkfs.ext4 -q -F -L "$2" -U "$3" -d "$4" "$1"
}

# mkluks IMG UUID FS_UUID KEYFILE PBKDF...: the stage as ext4 in LUKS2, encrypted in place
# (cryptsetup's offline reencryption needs no device-mapper). The cheap PBKDF settings keep the
# unlock quick under TCG; test volumes only.
mkluks() {
        local img=$1 uuid=$2 fs_uuid=$3 key=$4
        shift 4
        truncate -s "$LUKS_SIZE" "$img"
        truncate -s +16M "$img"
        mkfs.ext4 -q -F -L foyer-root -U "$fs_uuid" -d "$work/stage" "$img" "$LUKS_SIZE"
        cryptsetup reencrypt --encrypt --type luks2 --reduce-device-size 16M --force-offline-reencrypt \
                --batch-mode --key-file "$key" --uuid "$uuid" --label foyer-luks "$@" "$img"
}

mount_copy() {  # IMG [SUBDIR]: loop-mount IMG and copy the stage into it
        mnt=$work/mnt
        mkdir -p "$mnt"
        mount -o loop "$1" "$mnt"
        local dest=$mnt
        if [[ -n ${2:-} ]]; then
                btrfs -q subvolume create "$mnt/$2"
                dest=$mnt/$2
        fi
        cp -a "$work/stage/." "$dest/"
        umount "$mnt"
}

case $recipe in
ext4)           # bare ext4, no partition table
        stage "UUID=$ROOT_UUID / ext4 defaults 0 1"
        mkext4 "$work/1.img" foyer-root "$ROOT_UUID" "$work/stage"
        ;;
ext4-label)     # a label that needs escaping
        stage 'LABEL=my\040root / ext4 defaults 0 1'
        mkext4 "$work/1.img" "my root" "$LABEL_UUID" "$work/stage"
        ;;
gpt)            # GPT: a small first partition, the root as partition 2
        stage "PARTUUID=$GPT_PARTUUID / ext4 defaults 0 1"
        truncate -s 1040M "$work/1.img"
        sfdisk -q --label gpt "$work/1.img" <<EOF
label: gpt
label-id: 6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3b00
first-lba: 2048
start=2048, size=14336, type=21686148-6449-6E6F-744E-656564454649, uuid=6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3b01, name=bios
start=16384, size=2097152, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$GPT_PARTUUID, name=$GPT_PARTLABEL
EOF
        mkext4 "$work/root.ext4" foyer-root "$GPT_FS_UUID" "$work/stage"
        dd if="$work/root.ext4" of="$work/1.img" bs=1M seek=8 conv=notrunc,sparse status=none
        rm "$work/root.ext4"
        ;;
xfs)
        stage "UUID=$XFS_UUID / xfs defaults 0 0"
        truncate -s "$SIZE" "$work/1.img"
        mkfs.xfs -q -f -L foyer-xfs -m uuid="$XFS_UUID" "$work/1.img"
        mount_copy "$work/1.img"
        ;;
btrfs)          # the root is subvolume @, not the top level
        stage "UUID=$BTRFS_UUID / btrfs defaults,subvol=@ 0 0"
        truncate -s "$SIZE" "$work/1.img"
        mkfs.btrfs -q -f -L foyer-btrfs -U "$BTRFS_UUID" "$work/1.img"
        mount_copy "$work/1.img" @
        ;;
usr-cmdline|usr-fstab)  # / and /usr on two disks
        if [[ $recipe == usr-fstab ]]; then
                stage "UUID=$SPLIT_ROOT_UUID / ext4 defaults 0 1" \
                      "UUID=$SPLIT_USR_UUID /usr ext4 defaults 0 2"
        else
                stage "UUID=$SPLIT_ROOT_UUID / ext4 defaults 0 1"
        fi
        mkdir "$work/usr"
        mv "$work/stage/usr/"* "$work/usr/"
        mkext4 "$work/1.img" foyer-root "$SPLIT_ROOT_UUID" "$work/stage"
        mkext4 "$work/2.img" foyer-usr "$SPLIT_USR_UUID" "$work/usr"
        ;;
ext4-dirty)     # marked as not cleanly unmounted: fsck must check it
        stage "UUID=$DIRTY_UUID / ext4 defaults 0 1"
        mkext4 "$work/1.img" foyer-root "$DIRTY_UUID" "$work/stage"
        debugfs -w -R "ssv state 0" "$work/1.img" 2>/dev/null
        ;;
luks)           # ext4 in LUKS2 on the whole disk, passphrase, argon2id (default KDF, small cost)
        stage "UUID=$LUKS_FS_UUID / ext4 defaults 0 1"
        printf '%s' "$LUKS_PASSPHRASE" > "$work/passphrase"
        mkluks "$work/1.img" "$LUKS_UUID" "$LUKS_FS_UUID" "$work/passphrase" \
                --pbkdf argon2id --pbkdf-memory 32768 --pbkdf-parallel 1 --pbkdf-force-iterations 4
        rm "$work/passphrase"
        ;;
luks-keyfile)   # the same, unlocked by the key file test/vm/luks-test.key, pbkdf2
        stage "UUID=$LUKS_KEY_FS_UUID / ext4 defaults 0 1"
        mkluks "$work/1.img" "$LUKS_KEY_UUID" "$LUKS_KEY_FS_UUID" "$LUKS_KEY_FILE" \
                --pbkdf pbkdf2 --pbkdf-force-iterations 1000
        ;;
*)
        echo "mkdisk: unknown recipe '$recipe'" >&2
        exit 2
        ;;
esac

rm -rf "$work/stage" "$work/usr" "$work/mnt"
mv "$work" "$out"
touch "$out.ok"
# Images of earlier recipes or trees are garbage now.
for old in "$cachedir/disk-$recipe-"????????????{,.ok}; do
        [[ -e $old && $old != "$out" && $old != "$out.ok" ]] && rm -rf "$old"
done
ls -1 "$out"/*.img >&3
