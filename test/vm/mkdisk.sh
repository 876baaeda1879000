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
BTRFS_RAID1_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e09  # btrfs-raid1: the file system on both members
SPLIT_ROOT_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e06
SPLIT_USR_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e07
DIRTY_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e08
BROKEN_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e20
# gpt-auto*: an ESP (for a UKI, see mkuki.sh) and a root partition found by its type alone.
GPTAUTO_DISK_UUID=9a7e0f3c-1b2d-4c5e-8f60-7a8b9c0d1e00
GPTAUTO_ESP_PARTUUID=9a7e0f3c-1b2d-4c5e-8f60-7a8b9c0d1e01
GPTAUTO_ROOT_PARTUUID=9a7e0f3c-1b2d-4c5e-8f60-7a8b9c0d1e02
GPTAUTO_FS_UUID=9a7e0f3c-1b2d-4c5e-8f60-7a8b9c0d1e03
GPTAUTO_LUKS_UUID=9a7e0f3c-1b2d-4c5e-8f60-7a8b9c0d1e04
# gpt-auto-usr: the root partition (grow-fs flag) and the /usr partition found by type; usr-2 is no-auto.
GPTAUTO_USR_ROOT_PARTUUID=9a7e0f3c-1b2d-4c5e-8f60-7a8b9c0d1e12
GPTAUTO_USR_PARTUUID=9a7e0f3c-1b2d-4c5e-8f60-7a8b9c0d1e13
GPTAUTO_USR_NOAUTO_PARTUUID=9a7e0f3c-1b2d-4c5e-8f60-7a8b9c0d1e14
GPTAUTO_PASSPHRASE=foyer-uki-pass-3Kd8                  # test data, typed at the prompt
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
# luks-tang: the luks disk with a Clevis tang binding (a LUKS2 "clevis" token and a keyslot of its
# own) to the test Tang server at TANG_URL, made offline from the server's advertisement, which
# test/vm/tang-keys/adv.jws holds (signed with that directory's test keys; see its README).
TANG_URL=http://10.0.2.100
TANG_ADV=$(dirname "$(realpath "$0")")/tang-keys/adv.jws
# hibernate*: the root (GPT partition 1) and the swap the real root hibernates to (partition 2, at
# 1025 MiB, where hibernate-check.sh looks; in LUKS2 with LUKS_PASSPHRASE for hibernate-luks).
HIB_ROOT_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e30
HIB_SWAP_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e31
HIB_SWAP_LUKS_UUID=4c554b53-2d70-4000-8000-000000000031
# hibernate-swapfile: the root ext4 on the whole disk, holding /swapfile (400M), whose first block
# the scenario names in resume_offset= (in pages): checked here against what filefrag says.
HIB_FILE_ROOT_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e32
HIB_FILE_OFFSET=34816
# verity-root, verity-root-corrupt: GPT, the root's ext4 (read-only) in partition 1 and its
# dm-verity hash tree in partition 2, of the x86-64 root and root-verity types; the root hash is left
# in the disk's directory as roothash, which run-scenario.sh puts where a scenario says
# @DISK_ROOTHASH@. The salt and the verity UUID are fixed; the hash follows the tree.
# verity-root-corrupt is the same disk with bytes of the data's first block changed after the hash
# was taken.
VERITY_DISK_UUID=76657269-7479-4000-8000-000000000000
VERITY_DATA_PARTUUID=76657269-7479-4000-8000-000000000001
VERITY_HASH_PARTUUID=76657269-7479-4000-8000-000000000002
VERITY_FS_UUID=76657269-7479-4000-8000-000000000003
VERITY_UUID=76657269-7479-4000-8000-000000000004
VERITY_SALT=666f7965722d7665726974792d746573742d73616c742d30303030303030303031
# verity-usr: GPT, the root's ext4 without /usr's contents in partition 1 (plain, writable), /usr's
# ext4 in partition 2 and its hash tree in 3 (x86-64 usr and usr-verity types); the /usr hash is left
# as roothash as well, for @DISK_ROOTHASH@.
VERITY_USR_ROOT_PARTUUID=76657269-7479-4000-8000-000000000011
VERITY_USR_DATA_PARTUUID=76657269-7479-4000-8000-000000000012
VERITY_USR_HASH_PARTUUID=76657269-7479-4000-8000-000000000013
VERITY_USR_ROOT_FS_UUID=76657269-7479-4000-8000-000000000014
VERITY_USR_FS_UUID=76657269-7479-4000-8000-000000000015
# verity-root-uki: an ESP (for the UKI, mkuki.sh), the verity root and its hash tree, whose partition
# UUIDs are not fixed but derived from the root hash as systemd-repart makes them (the first 128 bits
# name the data partition, the last 128 the hash partition), so that roothash= alone finds them.
# Beside them roothash.p7s: the root hash (its hex string, what dm-verity checks a signature of)
# signed with Debian's snakeoil Secure Boot key (package ovmf), a detached PKCS#7 signature without
# certificates, for run-scenario.sh's @DISK_ROOTHASH_SIG@: on firmware whose db holds that key the
# kernel has its certificate in the platform keyring and can check the signature.
VERITY_UKI_ESP_PARTUUID=76657269-7479-4000-8000-000000000021
# repart-root: GPT on a 2 GiB disk whose root partition (x86-64 root type, with the grow-fs flag,
# bit 59, as systemd-repart's GrowFileSystem=yes leaves it) holds a 400 MiB ext4 in its first 400 MiB;
# the root's fstab line has x-systemd.growfs. The root recipe trixie-repart's definition grows it.
REPART_DISK_UUID=72657061-7274-4000-8000-000000000000
REPART_ROOT_PARTUUID=72657061-7274-4000-8000-000000000001
REPART_FS_UUID=72657061-7274-4000-8000-000000000002

# shellcheck source=SCRIPTDIR/../lib/cache.sh
source "$(dirname "$(realpath "$0")")/../lib/cache.sh"
key_files=("$0")
[[ $recipe != luks* ]] || key_files+=("$LUKS_KEY_FILE")
[[ $recipe != luks-tang ]] || key_files+=("$TANG_ADV")
hash=$(cache_key "${key_files[@]}" -- "$tree $recipe")
out=$cachedir/disk-$recipe-$hash
work=$out.tmp

mkdir -p "$cachedir"
# Only the image paths go to stdout; the tools' chatter goes to stderr.
exec 3>&1 1>&2
if cache_begin "$cachedir/disk-$recipe.lock" "$out"; then
        ls -1 "$out"/*.img >&3
        exit 0
fi
mkdir -p "$work"
cleanup() {
        if [[ -n ${mnt:-} ]] && mountpoint -q "$mnt"; then umount "$mnt"; fi
        for l in ${lvm_loops[@]+"${lvm_loops[@]}"}; do losetup -d "$l" 2>/dev/null || true; done
        # btrfs-raid1: the host kernel forgets the members it scanned, then they are detached.
        if [[ ${#btrfs_loops[@]} -gt 0 ]]; then
                btrfs device scan --forget "${btrfs_loops[@]}" 2>/dev/null || true
                losetup -d "${btrfs_loops[@]}" 2>/dev/null || true
        fi
        rm -rf "$work"
}
trap cleanup EXIT

# LVM (recipes lvm*) without device-mapper: lvm2 itself writes the PV labels and the VG metadata,
# from a text description, onto loop devices of the image files (pvcreate --restorefile,
# vgcfgrestore; it cannot activate anything here, and need not). Each LV's file system is then
# copied to the LV's extents with dd. 4 MiB extents, the first one 1 MiB into each PV.
LVM_VG_UUID=foyerV-g000-0000-0000-0000-0000-000001
LVM_ROOT_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e11
LVM_OTHER_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e12
LVM_USR_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e13
LVM_LUKS_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e14     # LUKS2 holding the PV (lvm-on-luks)
LVM_LV_LUKS_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e15  # LUKS2 inside an LV (lvm-luks-lv)
LVM_PASSPHRASE=foyer-lvm-pass-5Tw9                      # test data, typed at the prompt
# installer: the LUKS2 volume of the tree's /etc/crypttab (mkroot.sh's INSTALLER_LUKS_UUID).
INSTALLER_LUKS_UUID=4c554b53-2d70-4000-8000-000000000051
INSTALLER_ROOT_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e51
INSTALLER_SWAP_UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e52
LVM_HOST_CONF='devices { use_devicesfile = 0 obtain_device_list_from_udev = 0 }
        backup { backup = 0 archive = 0 } global { use_lvmpolld = 0 }
        activation { udev_sync = 0 udev_rules = 0 monitoring = 0 }'
lvm_loops=()
btrfs_loops=()

lvm_host() {    # lvm2 on the host, seeing only our loop devices, writing no backups to /etc/lvm
        local devs
        devs=$(IFS=,; echo "${lvm_loops[*]}")
        LVM_SUPPRESS_FD_WARNINGS=1 lvm "$@" --config "$LVM_HOST_CONF" --devices "$devs" 2>&1 |
                grep -v -e device-mapper -e '/dev/mapper/control' -e 'Failed to check for active' -e "Couldn't find device" >&2 || true
}

# lvm_vg VG PVIMG... -- LV:PV:START:COUNT[+PV:START:COUNT...]...: writes VG onto the PV images
# (pv0, pv1, ... in order; PV UUIDs foyerP-v000-...-00000N), with linear LVs made of the given
# segments (extents of PV number PV).
lvm_vg() {
        local vg=$1 meta=$work/$1.meta i=0 img sectors lv segs seg n start count le
        shift
        {
                printf 'contents = "Text Format Volume Group"\nversion = 1\n\n%s {\n' "$vg"
                printf '\tid = "%s"\n\tseqno = 1\n\tformat = "lvm2"\n' "$LVM_VG_UUID"
                printf '\tstatus = ["RESIZEABLE", "READ", "WRITE"]\n\tflags = []\n'
                printf '\textent_size = 8192\n\tmax_lv = 0\n\tmax_pv = 0\n\tmetadata_copies = 0\n\n'
                printf '\tphysical_volumes {\n'
                while [[ $1 != -- ]]; do
                        sectors=$(( $(stat -c %s "$1") / 512 ))
                        printf '\t\tpv%d {\n\t\t\tid = "foyerP-v000-0000-0000-0000-0000-00000%d"\n' $i $i
                        printf '\t\t\tdevice = "/dev/null"\n\t\t\tstatus = ["ALLOCATABLE"]\n\t\t\tflags = []\n'
                        printf '\t\t\tdev_size = %d\n\t\t\tpe_start = 2048\n\t\t\tpe_count = %d\n\t\t}\n' \
                                "$sectors" $(( (sectors - 2048) / 8192 ))
                        lvm_loops+=("$(losetup -f --show "$1")")
                        i=$((i + 1))
                        shift
                done
                shift
                printf '\t}\n\n\tlogical_volumes {\n'
                n=1
                for lv in "$@"; do
                        IFS=+ read -ra segs <<<"${lv#*:}"
                        printf '\t\t%s {\n\t\t\tid = "foyerL-v000-0000-0000-0000-0000-00000%d"\n' "${lv%%:*}" $n
                        printf '\t\t\tstatus = ["READ", "WRITE", "VISIBLE"]\n\t\t\tflags = []\n'
                        printf '\t\t\tsegment_count = %d\n' ${#segs[@]}
                        le=0 i=1
                        for seg in "${segs[@]}"; do
                                IFS=: read -r pv start count <<<"$seg"
                                printf '\t\t\tsegment%d {\n\t\t\t\tstart_extent = %d\n\t\t\t\textent_count = %d\n' $i $le "$count"
                                printf '\t\t\t\ttype = "striped"\n\t\t\t\tstripe_count = 1\n'
                                printf '\t\t\t\tstripes = [ "pv%d", %d ]\n\t\t\t}\n' "$pv" "$start"
                                le=$((le + count)) i=$((i + 1))
                        done
                        printf '\t\t}\n'
                        n=$((n + 1))
                done
                printf '\t}\n}\n'
        } > "$meta"
        i=0
        for l in "${lvm_loops[@]}"; do
                lvm_host pvcreate -q --uuid "foyerP-v000-0000-0000-0000-0000-00000$i" --restorefile "$meta" "$l"
                i=$((i + 1))
        done
        lvm_host vgcfgrestore -q -f "$meta" "$vg"
        lvm_host vgs -o vg_name,vg_uuid,pv_count,lv_count
        for l in "${lvm_loops[@]}"; do losetup -d "$l"; done
        lvm_loops=()
}

lvm_ext4() {    # IMG LABEL UUID DIR SIZE
        truncate -s "$5" "$1"
        mkfs.ext4 -q -F -L "$2" -U "$3" -d "$4" "$1"
}

lvm_put() {     # FSIMG PVIMG START COUNT [SKIP]: COUNT extents of FSIMG (from extent SKIP) at START
        dd if="$1" of="$2" bs=1M skip=$(( ${5:-0} * 4 )) seek=$(( 1 + $3 * 4 )) count=$(( $4 * 4 )) \
                conv=notrunc,sparse status=none
}

lvm_luks() {    # IMG UUID: encrypts IMG in place as LUKS2 (the last 16M must be free: the header goes first)
        printf '%s' "$LVM_PASSPHRASE" > "$work/passphrase"
        cryptsetup reencrypt --encrypt --type luks2 --reduce-device-size 16M --force-offline-reencrypt \
                --batch-mode --key-file "$work/passphrase" --uuid "$2" --pbkdf pbkdf2 \
                --pbkdf-force-iterations 1000 "$1"
        rm "$work/passphrase"
}

# A private copy of the tree (hard links: cheap) whose /etc/fstab can be replaced. A tree that
# builds its own initrd (mkroot.sh SUITE) has its kernel and modules: the real root needs
# neither, and they would not fit the smaller file systems.
stage() {
        cp -al "$tree" "$work/stage"
        rm -rf "$work/stage/boot/"* "$work/stage/usr/lib/modules/"*
        rm -f "$work/stage/etc/fstab"
        printf '# written by test/vm/mkdisk.sh, recipe %s\n' "$recipe" > "$work/stage/etc/fstab"
        for line in "$@"; do
                printf '%s\n' "$line" >> "$work/stage/etc/fstab"
        done
}

# verity_format DIR LABEL FS_UUID SIZE: DIR as ext4 in $work/data.img and its dm-verity hash tree in
# $work/hash.img (8M), the root hash in $work/roothash (for @DISK_ROOTHASH@), verified.
verity_format() {
        local dir=$1 label=$2 fs_uuid=$3 size=$4
        truncate -s "$size" "$work/data.img"
        # 4K blocks: a verity device has the logical block size of its data blocks, and ext4 mounts no
        # smaller blocks than that (mkfs.ext4 would pick 1K for a file system this small).
        mkfs.ext4 -q -F -b 4096 -L "$label" -U "$fs_uuid" -d "$dir" "$work/data.img"
        truncate -s 8M "$work/hash.img"
        # veritysetup format works on plain files (no device-mapper); 4K blocks, sha256 (its defaults).
        veritysetup format --salt "$VERITY_SALT" --uuid "$VERITY_UUID" "$work/data.img" "$work/hash.img" \
                >"$work/format.log"
        cat "$work/format.log" >&2
        sed -n 's/^Root hash:[[:space:]]*\([0-9a-f]\{64\}\)$/\1/p' "$work/format.log" >"$work/roothash"
        rm "$work/format.log"
        [[ -s $work/roothash ]] || { echo "mkdisk: no root hash from veritysetup format" >&2; exit 1; }
        veritysetup verify "$work/data.img" "$work/hash.img" "$(cat "$work/roothash")"
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

# hibernate*: foyer-hibernate-test.service in the stage, which hibernates the real root once
# (foyer.hibernate-test on the command line; see hibernate-check.sh).
hibernate_hook() {
        # New files only: the stage is hard-linked to the tree, whose files must not change.
        install -m 0755 /dev/stdin "$work/stage/usr/local/sbin/foyer-hibernate-test" <<'EOS'
#!/bin/bash
# foyer test root, disk recipes hibernate*: with foyer.hibernate-test on the command line, once
# the system is up, hibernates with a random token held only in memory (this script's variable and
# a file in /run, a tmpfs), and prints the token and the boot ID before and after (see
# test/vm/hibernate-check.sh). After a resume it runs foyer-report, which powers off.
token=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$token" >/run/foyer-hibernate-token
echo "FOYER-HIBERNATE-STATE power_state=$(tr ' ' , </sys/power/state) power_disk=$(tr ' ' , </sys/power/disk)" \
     "resume=$(cat /sys/power/resume) swap=$(swapon --noheadings --show=NAME,TYPE | tr -s ' ' : | paste -sd, -)"
echo "FOYER-HIBERNATE before token=$token boot_id=$(cat /proc/sys/kernel/random/boot_id)"
# "systemctl hibernate" would return at once here (no D-Bus, no logind); "start" waits for the job,
# which ends once systemd-hibernate.service has, that is once the system is back.
if ! systemctl start hibernate.target; then
        echo "FOYER-HIBERNATE failed"
        exit 1
fi
echo "FOYER-HIBERNATE after token=$token file=$(cat /run/foyer-hibernate-token) boot_id=$(cat /proc/sys/kernel/random/boot_id)"
exec /usr/local/sbin/foyer-report
EOS
        cat >"$work/stage/etc/systemd/system/foyer-hibernate-test.service" <<'EOS'
[Unit]
Description=foyer test: hibernate once, report after the resume
After=multi-user.target
ConditionKernelCommandLine=foyer.hibernate-test

[Service]
Type=simple
ExecStart=/usr/local/sbin/foyer-hibernate-test
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
EOS
        ln -s ../foyer-hibernate-test.service \
                "$work/stage/etc/systemd/system/multi-user.target.wants/foyer-hibernate-test.service"
}

# btrfs-raid1: foyer-btrfs-report.service in the stage, which prints, before the report, the
# members of the root file system and its block group profiles as the kernel has them in sysfs:
# FOYER-BTRFS fsid=UUID devices=vda,vdb data=raid1 metadata=raid1 system=raid1
btrfs_report_hook() {
        # New files only: the stage is hard-linked to the tree, whose files must not change.
        install -m 0755 /dev/stdin "$work/stage/usr/local/sbin/foyer-btrfs-report" <<'EOS'
#!/bin/bash
# foyer test root, disk recipe btrfs-raid1: the root's btrfs as the kernel sees it (the test root
# has no btrfs-progs). Members are /sys/fs/btrfs/FSID/devices/*, profiles the directories under
# allocation/{data,metadata,system}/ (one per profile in use, "+" between several).
fsid=$(findmnt -n -o UUID /)
sys=/sys/fs/btrfs/$fsid
list() { find "$1" -mindepth 1 -maxdepth 1 ${2:+-type "$2"} -printf '%f\n' 2>/dev/null | sort | paste -sd "$3" -; }
echo "FOYER-BTRFS fsid=${fsid:--} devices=$(list "$sys/devices" '' ,)" \
     "data=$(list "$sys/allocation/data" d +) metadata=$(list "$sys/allocation/metadata" d +)" \
     "system=$(list "$sys/allocation/system" d +)"
EOS
        cat >"$work/stage/etc/systemd/system/foyer-btrfs-report.service" <<'EOS'
[Unit]
Description=foyer test: the root's btrfs members and profiles
Before=foyer-report.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/foyer-btrfs-report
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
EOS
        ln -s ../foyer-btrfs-report.service \
                "$work/stage/etc/systemd/system/multi-user.target.wants/foyer-btrfs-report.service"
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
btrfs-raid1)    # one btrfs on two disks, data and metadata RAID1, and foyer-btrfs-report.service
        stage "UUID=$BTRFS_RAID1_UUID / btrfs defaults 0 0"
        btrfs_report_hook
        truncate -s 512M "$work/1.img" "$work/2.img"
        # mkfs.btrfs --rootdir takes a single device: the file system is made on both members, then
        # mounted through loop devices that the host kernel is told about (device=), and filled.
        # (mkfs.btrfs refuses a UUID that libblkid's cache knows; with a cache of its own it does
        # not see stale entries for image files that someone ran blkid on.)
        BLKID_FILE=$work/blkid.tab mkfs.btrfs -q -f -L foyer-btrfs-raid1 -U "$BTRFS_RAID1_UUID" \
                -d raid1 -m raid1 "$work/1.img" "$work/2.img"
        btrfs_loops=("$(losetup -f --show "$work/1.img")" "$(losetup -f --show "$work/2.img")")
        mnt=$work/mnt
        mkdir -p "$mnt"
        mount -o "device=${btrfs_loops[0]},device=${btrfs_loops[1]}" "${btrfs_loops[0]}" "$mnt"
        cp -a "$work/stage/." "$mnt/"
        btrfs filesystem df "$mnt" >&2
        umount "$mnt"
        btrfs device scan --forget "${btrfs_loops[@]}"
        losetup -d "${btrfs_loops[@]}"
        btrfs_loops=()
        # Both images must carry the same file system, as members 1 and 2 of 2.
        for i in 1 2; do
                btrfs inspect-internal dump-super "$work/$i.img" |
                        awk -v want="$BTRFS_RAID1_UUID" -v devid=$i '
                                $1 == "fsid" { fsid = $2 } $1 == "num_devices" { n = $2 }
                                $1 == "dev_item.devid" { d = $2 }
                                END { exit !(fsid == want && n == 2 && d == devid) }' ||
                        { echo "mkdisk: $i.img is not member $i of 2 of $BTRFS_RAID1_UUID" >&2; exit 1; }
        done
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
ext4-broken)    # beyond what fsck -a may repair: root inode cleared, marked not clean (no tree needed)
        truncate -s 64M "$work/1.img"
        mkfs.ext4 -q -F -L foyer-broken -U "$BROKEN_UUID" "$work/1.img"
        debugfs -w -R "clri <2>" "$work/1.img" 2>/dev/null
        debugfs -w -R "ssv state 0" "$work/1.img" 2>/dev/null
        ;;
luks|luks-tang) # ext4 in LUKS2 on the whole disk, passphrase, argon2id (default KDF, small cost);
                # luks-tang: and bound to Tang at TANG_URL with Clevis (token 0, keyslot 1)
        if [[ $recipe == luks-tang ]] && ! command -v clevis >/dev/null; then
                echo "mkdisk: luks-tang needs clevis and clevis-luks on the host (tools/packages)" >&2
                exit 1
        fi
        stage "UUID=$LUKS_FS_UUID / ext4 defaults 0 1"
        printf '%s' "$LUKS_PASSPHRASE" > "$work/passphrase"
        mkluks "$work/1.img" "$LUKS_UUID" "$LUKS_FS_UUID" "$work/passphrase" \
                --pbkdf argon2id --pbkdf-memory 32768 --pbkdf-parallel 1 --pbkdf-force-iterations 4
        if [[ $recipe == luks-tang ]]; then
                # No server: the advertisement is given, so clevis-encrypt-tang fetches nothing (and
                # -y trusts its keys). clevis adds its own random key in a new keyslot (pbkdf2) and
                # the JWE that recovers it as a LUKS2 token; no device-mapper is needed.
                clevis luks bind -y -k "$work/passphrase" -d "$work/1.img" tang \
                        "{\"url\":\"$TANG_URL\",\"adv\":\"$TANG_ADV\"}" </dev/null
                cryptsetup token export --token-id 0 "$work/1.img" | jose fmt -j- -Og type -q clevis -EUU \
                        -Og jwe -Og protected -Su- | jose b64 dec -i- | jose fmt -j- -Og clevis -Og tang -Og url -q \
                        "$TANG_URL" -EUU || { echo "mkdisk: luks-tang: no clevis token for $TANG_URL" >&2; exit 1; }
        fi
        rm "$work/passphrase"
        ;;
luks-keyfile)   # the same, unlocked by the key file test/vm/luks-test.key, pbkdf2
        stage "UUID=$LUKS_KEY_FS_UUID / ext4 defaults 0 1"
        mkluks "$work/1.img" "$LUKS_KEY_UUID" "$LUKS_KEY_FS_UUID" "$LUKS_KEY_FILE" \
                --pbkdf pbkdf2 --pbkdf-force-iterations 1000
        ;;
lvm|lvm-span)    # VG vg0: LVs root (320M) and other (32M); lvm-span: root across two disks
        stage "/dev/vg0/root / ext4 defaults 0 1"
        lvm_ext4 "$work/root.fs" foyer-lvm-root "$LVM_ROOT_UUID" "$work/stage" 320M
        mkdir "$work/empty"
        lvm_ext4 "$work/other.fs" foyer-lvm-other "$LVM_OTHER_UUID" "$work/empty" 32M
        if [[ $recipe == lvm ]]; then
                truncate -s 400M "$work/1.img"
                lvm_vg vg0 "$work/1.img" -- root:0:0:80 other:0:80:8
                lvm_put "$work/root.fs" "$work/1.img" 0 80
                lvm_put "$work/other.fs" "$work/1.img" 80 8
        else
                truncate -s 220M "$work/1.img" "$work/2.img"
                lvm_vg vg0 "$work/1.img" "$work/2.img" -- root:0:0:50+1:0:30 other:1:30:8
                lvm_put "$work/root.fs" "$work/1.img" 0 50
                lvm_put "$work/root.fs" "$work/2.img" 0 30 50
                lvm_put "$work/other.fs" "$work/2.img" 30 8
        fi
        rm "$work/root.fs" "$work/other.fs"
        ;;
lvm-on-luks)    # GPT partition 1: LUKS2 holding the PV of vg0, LVs root and usr (in fstab)
        stage "/dev/mapper/vg0-root / ext4 defaults 0 1" "/dev/vg0/usr /usr ext4 defaults 0 2"
        mkdir "$work/usr"
        mv "$work/stage/usr/"* "$work/usr/"
        lvm_ext4 "$work/root.fs" foyer-lvm-root "$LVM_ROOT_UUID" "$work/stage" 64M
        lvm_ext4 "$work/usr.fs" foyer-lvm-usr "$LVM_USR_UUID" "$work/usr" 192M
        truncate -s 272M "$work/pv.img"         # 1M + 66 extents + 7M, then 16M for LUKS
        lvm_vg vg0 "$work/pv.img" -- root:0:0:16 usr:0:16:48
        lvm_put "$work/root.fs" "$work/pv.img" 0 16
        lvm_put "$work/usr.fs" "$work/pv.img" 16 48
        truncate -s +16M "$work/pv.img"
        lvm_luks "$work/pv.img" "$LVM_LUKS_UUID"
        truncate -s 300M "$work/1.img"
        sfdisk -q --label gpt "$work/1.img" <<EOF
label: gpt
label-id: 6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3c00
first-lba: 2048
start=2048, size=$(( $(stat -c %s "$work/pv.img") / 512 )), type=CA7D7CCB-63ED-4C53-861C-1742536059CC, uuid=6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3c01, name=foyer-luks
EOF
        dd if="$work/pv.img" of="$work/1.img" bs=1M seek=1 conv=notrunc,sparse status=none
        rm "$work/root.fs" "$work/usr.fs" "$work/pv.img"
        ;;
installer)      # debian-installer 12's guided "encrypted LVM" (roots/bookworm-installer.sh): MBR,
                # vda1 (/boot there; empty here), vda5 a logical partition holding LUKS2 (with
                # LVM_PASSPHRASE) holding the PV of VG debian-vg, LVs root and swap_1; the tree's
                # own /etc/crypttab and /etc/fstab name them. The root keeps the kernel's modules:
                # the booted system builds its own host-only image. 2.img (vdb) is an empty
                # scratch disk, where the guest writes that image for the host to read.
        [[ -e $tree/etc/crypttab ]] || { echo "mkdisk: recipe installer needs the bookworm-installer root" >&2; exit 2; }
        stage "/dev/mapper/debian--vg-root /               ext4    errors=remount-ro 0       1" \
              "/dev/mapper/debian--vg-swap_1 none            swap    sw              0       0"
        cp -al "$tree/usr/lib/modules/." "$work/stage/usr/lib/modules/"
        lvm_ext4 "$work/root.fs" foyer-inst-root "$INSTALLER_ROOT_UUID" "$work/stage" 880M
        truncate -s 64M "$work/swap.fs"
        mkswap -q -U "$INSTALLER_SWAP_UUID" -L foyer-inst-swap "$work/swap.fs"
        truncate -s 948M "$work/pv.img"         # 1M + 236 extents + 3M, then 16M for LUKS
        LVM_VG_UUID=foyerV-g000-0000-0000-0000-0000-000051 lvm_vg debian-vg "$work/pv.img" -- root:0:0:220 swap_1:0:220:16
        lvm_put "$work/root.fs" "$work/pv.img" 0 220
        lvm_put "$work/swap.fs" "$work/pv.img" 220 16
        truncate -s +16M "$work/pv.img"
        lvm_luks "$work/pv.img" "$INSTALLER_LUKS_UUID"
        truncate -s 1024M "$work/1.img"
        # vda1 at 1 MiB (32 MiB), the extended vda2 from 34 MiB, vda5 in it from 35 MiB.
        sfdisk -q --label dos "$work/1.img" <<EOF
label: dos
label-id: 0x51f0e1a5
start=2048, size=65536, type=83, bootable
start=69632, size=$(( 2048 + $(stat -c %s "$work/pv.img") / 512 )), type=5
start=71680, size=$(( $(stat -c %s "$work/pv.img") / 512 )), type=83
EOF
        dd if="$work/pv.img" of="$work/1.img" bs=1M seek=35 conv=notrunc,sparse status=none
        rm "$work/root.fs" "$work/swap.fs" "$work/pv.img"
        truncate -s 64M "$work/2.img"
        ;;
lvm-luks-lv)    # vg0/cryptroot holds LUKS2 holding the root ext4
        stage "/dev/mapper/root / ext4 defaults 0 1"
        truncate -s 336M "$work/luks.img"
        mkfs.ext4 -q -F -L foyer-lvm-root -U "$LVM_ROOT_UUID" -d "$work/stage" "$work/luks.img" 320M
        lvm_luks "$work/luks.img" "$LVM_LV_LUKS_UUID"
        truncate -s 400M "$work/1.img"
        lvm_vg vg0 "$work/1.img" -- cryptroot:0:0:84
        lvm_put "$work/luks.img" "$work/1.img" 0 84
        rm "$work/luks.img"
        ;;
gpt-auto|gpt-auto-luks)  # ESP + x86-64 root partition (plain ext4, or LUKS2 holding it); no fstab entry for /
        stage
        truncate -s 520M "$work/1.img"
        sfdisk -q --label gpt "$work/1.img" <<EOF
label: gpt
label-id: $GPTAUTO_DISK_UUID
first-lba: 2048
start=2048, size=131072, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=$GPTAUTO_ESP_PARTUUID, name=esp
start=133120, size=921600, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$GPTAUTO_ROOT_PARTUUID, name=root
EOF
        # The ESP: FAT32 written in place with mtools, no mount. mkuki.sh adds the UKI.
        mkfs.vfat -F 32 -s 1 -n ESP -i 9a7e0f3c --offset 2048 "$work/1.img" $((131072 / 2)) >/dev/null 2>&1
        mmd -i "$work/1.img@@1M" ::/EFI ::/EFI/BOOT
        if [[ $recipe == gpt-auto-luks ]]; then
                # ext4 in LUKS2, encrypted in place (no device-mapper); cheap PBKDF for TCG.
                truncate -s 434M "$work/root.img"
                mkfs.ext4 -q -F -L foyer-root -U "$GPTAUTO_FS_UUID" -d "$work/stage" "$work/root.img" 418M
                printf '%s' "$GPTAUTO_PASSPHRASE" > "$work/passphrase"
                cryptsetup reencrypt --encrypt --type luks2 --reduce-device-size 16M --force-offline-reencrypt \
                        --batch-mode --key-file "$work/passphrase" --uuid "$GPTAUTO_LUKS_UUID" \
                        --pbkdf pbkdf2 --pbkdf-force-iterations 1000 "$work/root.img"
                rm "$work/passphrase"
        else
                truncate -s 450M "$work/root.img"
                mkfs.ext4 -q -F -L foyer-root -U "$GPTAUTO_FS_UUID" -d "$work/stage" "$work/root.img"
        fi
        dd if="$work/root.img" of="$work/1.img" bs=1M seek=65 conv=notrunc,sparse status=none
        rm "$work/root.img"
        ;;
gpt-auto-usr)   # ESP + x86-64 root (grow-fs flag; a 32M file system in 64M) + x86-64 /usr, and a /usr
                # partition with a newer label but the no-auto flag that discovery must pass over
        stage
        mkdir "$work/usr"
        mv "$work/stage/usr/"* "$work/usr/"
        truncate -s 360M "$work/1.img"
        sfdisk -q --label gpt "$work/1.img" <<EOF
label: gpt
label-id: $GPTAUTO_DISK_UUID
first-lba: 2048
start=2048, size=131072, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=$GPTAUTO_ESP_PARTUUID, name=esp
start=133120, size=131072, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$GPTAUTO_USR_ROOT_PARTUUID, name=root, attrs="GUID:59"
start=264192, size=409600, type=8484680C-9521-48C6-9C11-B0720656F69E, uuid=$GPTAUTO_USR_PARTUUID, name=usr-1
start=673792, size=32768, type=8484680C-9521-48C6-9C11-B0720656F69E, uuid=$GPTAUTO_USR_NOAUTO_PARTUUID, name=usr-2, attrs="GUID:63"
EOF
        mkfs.vfat -F 32 -s 1 -n ESP -i 9a7e0f3c --offset 2048 "$work/1.img" $((131072 / 2)) >/dev/null 2>&1
        mmd -i "$work/1.img@@1M" ::/EFI ::/EFI/BOOT
        truncate -s 64M "$work/root.img"
        mkfs.ext4 -q -F -L foyer-root -d "$work/stage" "$work/root.img" 32M
        truncate -s 200M "$work/usr.img"
        mkfs.ext4 -q -F -L foyer-usr -d "$work/usr" "$work/usr.img"
        truncate -s 16M "$work/noauto.img"
        mkfs.ext4 -q -F -L foyer-usr-noauto "$work/noauto.img"
        dd if="$work/root.img" of="$work/1.img" bs=1M seek=65 conv=notrunc,sparse status=none
        dd if="$work/usr.img" of="$work/1.img" bs=1M seek=129 conv=notrunc,sparse status=none
        dd if="$work/noauto.img" of="$work/1.img" bs=1M seek=329 conv=notrunc,sparse status=none
        rm "$work/root.img" "$work/usr.img" "$work/noauto.img"
        ;;
hibernate|hibernate-luks)       # GPT: the root ext4 and a 512M swap (plain, or in LUKS2 as
                                # /dev/mapper/cryptswap, which the initrd opens), both in fstab, and
                                # foyer-hibernate-test.service, which hibernates the real root
        if [[ $recipe == hibernate ]]; then
                swap_fstab="UUID=$HIB_SWAP_UUID none swap sw 0 0"
        else
                swap_fstab="/dev/mapper/cryptswap none swap sw 0 0"
        fi
        stage "UUID=$HIB_ROOT_UUID / ext4 defaults 0 1" "$swap_fstab"
        hibernate_hook
        mkext4 "$work/root.ext4" foyer-root "$HIB_ROOT_UUID" "$work/stage"
        truncate -s 1540M "$work/1.img"
        sfdisk -q --label gpt "$work/1.img" <<EOS
label: gpt
label-id: 6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3d00
first-lba: 2048
start=2048, size=2097152, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3d01, name=foyer-root
start=2099200, size=1048576, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3d02, name=foyer-swap
EOS
        # (The swap partition is of the generic data type: the real root's systemd-gpt-auto-generator
        # would make a second swap unit for one of the swap type.)
        dd if="$work/root.ext4" of="$work/1.img" bs=1M seek=1 conv=notrunc,sparse status=none
        if [[ $recipe == hibernate ]]; then
                truncate -s 512M "$work/swap.img"
                mkswap -q -U "$HIB_SWAP_UUID" -L foyer-swap "$work/swap.img"
        else
                # The swap signature inside, then LUKS2 around it, in place (the header takes the
                # last 16M first, as for lvm_luks).
                truncate -s 496M "$work/swap.img"
                mkswap -q -U "$HIB_SWAP_UUID" -L foyer-swap "$work/swap.img"
                truncate -s +16M "$work/swap.img"
                printf '%s' "$LUKS_PASSPHRASE" > "$work/passphrase"
                cryptsetup reencrypt --encrypt --type luks2 --reduce-device-size 16M --force-offline-reencrypt \
                        --batch-mode --key-file "$work/passphrase" --uuid "$HIB_SWAP_LUKS_UUID" \
                        --label foyer-swap-luks --pbkdf pbkdf2 --pbkdf-force-iterations 1000 "$work/swap.img"
                rm "$work/passphrase"
        fi
        dd if="$work/swap.img" of="$work/1.img" bs=1M seek=1025 conv=notrunc,sparse status=none
        rm "$work/root.ext4" "$work/swap.img"
        ;;
hibernate-swapfile)     # the root ext4 on the whole disk, with /swapfile in fstab, and
                        # foyer-hibernate-test.service, which hibernates the real root to the file
        stage "UUID=$HIB_FILE_ROOT_UUID / ext4 defaults 0 1" "/swapfile none swap sw 0 0"
        hibernate_hook
        truncate -s "$SIZE" "$work/1.img"
        mkfs.ext4 -q -F -L foyer-root -U "$HIB_FILE_ROOT_UUID" "$work/1.img"
        mnt=$work/mnt
        mkdir -p "$mnt"
        mount -o loop "$work/1.img" "$mnt"
        # The swap file first, on the empty file system, so that where it lands does not depend on
        # the tree: written out with dd (swapon and the kernel's hibernation take no holes, and
        # fallocate's unwritten extents are not what this tests), then made swap.
        dd if=/dev/zero of="$mnt/swapfile" bs=1M count=400 conv=fsync status=none
        chmod 0600 "$mnt/swapfile"
        mkswap -q -U "$HIB_SWAP_UUID" -L foyer-swap "$mnt/swapfile"
        sync -f "$mnt/swapfile"
        # resume_offset= is the file's first physical block in pages (PAGE_SIZE 4096).
        filefrag -v "$mnt/swapfile" >&2
        block=$(filefrag -v "$mnt/swapfile" | sed -n 's/^ *0: *[0-9]*\.\. *[0-9]*: *\([0-9]*\)\.\..*/\1/p')
        offset=$(( block * $(stat -f -c %S "$mnt") / 4096 ))
        if [[ $offset != "$HIB_FILE_OFFSET" ]]; then
                echo "mkdisk: /swapfile starts at page ${offset:-?}, not $HIB_FILE_OFFSET (resume_offset= of hibernate-swapfile)" >&2
                exit 1
        fi
        cp -a "$work/stage/." "$mnt/"
        umount "$mnt"
        ;;
hibernate-lvm)  # VG vg0: LVs root (320M) and swap (400M), both in fstab by their /dev/mapper names (the
                # test root has no lvm2: the initrd activates both), and foyer-hibernate-test.service
        stage "/dev/mapper/vg0-root / ext4 defaults 0 1" "/dev/mapper/vg0-swap none swap sw 0 0"
        hibernate_hook
        lvm_ext4 "$work/root.fs" foyer-lvm-root "$LVM_ROOT_UUID" "$work/stage" 320M
        truncate -s 400M "$work/swap.fs"
        mkswap -q -U "$HIB_SWAP_UUID" -L foyer-swap "$work/swap.fs"
        truncate -s 800M "$work/1.img"
        lvm_vg vg0 "$work/1.img" -- root:0:0:80 swap:0:80:100
        lvm_put "$work/root.fs" "$work/1.img" 0 80
        lvm_put "$work/swap.fs" "$work/1.img" 80 100
        rm "$work/root.fs" "$work/swap.fs"
        ;;
verity-root|verity-root-corrupt)
        stage "/dev/mapper/root / ext4 ro 0 0"
        verity_format "$work/stage" foyer-verity-root "$VERITY_FS_UUID" 320M
        if [[ $recipe == verity-root-corrupt ]]; then
                # Bytes of the superblock (data block 0, which every reader reads first) changed; the
                # hash tree still says what they were.
                printf 'corrupted by mkdisk' | dd of="$work/data.img" bs=1 seek=1144 conv=notrunc status=none
                if veritysetup verify "$work/data.img" "$work/hash.img" "$(cat "$work/roothash")" 2>/dev/null; then
                        echo "mkdisk: verity-root-corrupt still verifies" >&2
                        exit 1
                fi
        fi
        truncate -s 330M "$work/1.img"
        sfdisk -q --label gpt "$work/1.img" <<EOF
label: gpt
label-id: $VERITY_DISK_UUID
first-lba: 2048
start=2048, size=655360, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$VERITY_DATA_PARTUUID, name=root
start=657408, size=16384, type=2C7357ED-EBD2-46D9-AEC1-23D437EC2BF5, uuid=$VERITY_HASH_PARTUUID, name=root-verity
EOF
        dd if="$work/data.img" of="$work/1.img" bs=1M seek=1 conv=notrunc,sparse status=none
        dd if="$work/hash.img" of="$work/1.img" bs=1M seek=321 conv=notrunc,sparse status=none
        rm "$work/data.img" "$work/hash.img"
        ;;
verity-usr)     # the root plain and writable, /usr a verity volume (mount.usr= and usrhash=): no fstab line
                # for /usr, the command line mounts it
        stage "UUID=$VERITY_USR_ROOT_FS_UUID / ext4 defaults 0 1"
        mkdir "$work/usr"
        mv "$work/stage/usr/"* "$work/usr/"
        verity_format "$work/usr" foyer-verity-usr "$VERITY_USR_FS_UUID" 256M
        truncate -s 64M "$work/root.img"
        mkfs.ext4 -q -F -L foyer-root -U "$VERITY_USR_ROOT_FS_UUID" -d "$work/stage" "$work/root.img"
        truncate -s 340M "$work/1.img"
        sfdisk -q --label gpt "$work/1.img" <<EOF
label: gpt
label-id: $VERITY_DISK_UUID
first-lba: 2048
start=2048, size=131072, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$VERITY_USR_ROOT_PARTUUID, name=root
start=133120, size=524288, type=8484680C-9521-48C6-9C11-B0720656F69E, uuid=$VERITY_USR_DATA_PARTUUID, name=usr
start=657408, size=16384, type=77FF5F63-E7B6-4633-ACF4-1565B864C0E6, uuid=$VERITY_USR_HASH_PARTUUID, name=usr-verity
EOF
        dd if="$work/root.img" of="$work/1.img" bs=1M seek=1 conv=notrunc,sparse status=none
        dd if="$work/data.img" of="$work/1.img" bs=1M seek=65 conv=notrunc,sparse status=none
        dd if="$work/hash.img" of="$work/1.img" bs=1M seek=321 conv=notrunc,sparse status=none
        rm "$work/root.img" "$work/data.img" "$work/hash.img"
        ;;
verity-root-uki)        # ESP + the verity root and its hash tree, found by the UUIDs derived from the hash
        stage "/dev/mapper/root / ext4 ro 0 0"
        verity_format "$work/stage" foyer-verity-root "$VERITY_FS_UUID" 320M
        # The hash does not depend on the partition UUIDs, so they are set after it is known: the
        # first 16 bytes of the hash in UUID form for the data, the last 16 for the hash tree.
        h=$(cat "$work/roothash")
        t=${h: -32}
        data_uuid=${h:0:8}-${h:8:4}-${h:12:4}-${h:16:4}-${h:20:12}
        hash_uuid=${t:0:8}-${t:8:4}-${t:12:4}-${t:16:4}-${t:20:12}
        truncate -s 400M "$work/1.img"
        sfdisk -q --label gpt "$work/1.img" <<EOF
label: gpt
label-id: $VERITY_DISK_UUID
first-lba: 2048
start=2048, size=131072, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=$VERITY_UKI_ESP_PARTUUID, name=esp
start=133120, size=655360, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$data_uuid, name=root
start=788480, size=16384, type=2C7357ED-EBD2-46D9-AEC1-23D437EC2BF5, uuid=$hash_uuid, name=root-verity
EOF
        mkfs.vfat -F 32 -s 1 -n ESP -i 76657269 --offset 2048 "$work/1.img" $((131072 / 2)) >/dev/null 2>&1
        mmd -i "$work/1.img@@1M" ::/EFI ::/EFI/BOOT
        dd if="$work/data.img" of="$work/1.img" bs=1M seek=65 conv=notrunc,sparse status=none
        dd if="$work/hash.img" of="$work/1.img" bs=1M seek=385 conv=notrunc,sparse status=none
        rm "$work/data.img" "$work/hash.img"
        sfdisk -d "$work/1.img" | grep -qi "uuid=$data_uuid" ||
                { echo "mkdisk: the data partition did not get the UUID $data_uuid" >&2; exit 1; }
        keydir=${FOYER_VM_SNAKEOIL_DIR:-/usr/share/ovmf}
        printf '%s' "$h" >"$work/roothash.txt"
        # (The key is encrypted with the password "snakeoil", the package's README says.)
        openssl smime -sign -nocerts -noattr -binary -in "$work/roothash.txt" -passin pass:snakeoil \
                -inkey "$keydir/PkKek-1-snakeoil.key" -signer "$keydir/PkKek-1-snakeoil.pem" \
                -outform der -out "$work/roothash.p7s"
        openssl smime -verify -binary -inform der -in "$work/roothash.p7s" -content "$work/roothash.txt" \
                -certfile "$keydir/PkKek-1-snakeoil.pem" -nointern -noverify >/dev/null
        rm "$work/roothash.txt"
        ;;
repart-root)    # GPT, 2 GiB: the root partition in the first 401 MiB only, for systemd-repart to grow
        stage "PARTUUID=$REPART_ROOT_PARTUUID / ext4 defaults,x-systemd.growfs 0 1"
        truncate -s 400M "$work/root.ext4"
        # 4K blocks, as a larger file system would have: the grown one is online-resized from it.
        mkfs.ext4 -q -F -b 4096 -L foyer-root -U "$REPART_FS_UUID" -d "$work/stage" "$work/root.ext4"
        truncate -s 2G "$work/1.img"
        sfdisk -q --label gpt "$work/1.img" <<EOF
label: gpt
label-id: $REPART_DISK_UUID
first-lba: 2048
start=2048, size=819200, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$REPART_ROOT_PARTUUID, name=root-x86-64, attrs="GUID:59"
EOF
        dd if="$work/root.ext4" of="$work/1.img" bs=1M seek=1 conv=notrunc,sparse status=none
        rm "$work/root.ext4"
        ;;
*)
        echo "mkdisk: unknown recipe '$recipe'" >&2
        exit 2
        ;;
esac

rm -rf "${work:?}/stage" "${work:?}/usr" "${work:?}/mnt"
cache_commit "$out" "$tree"
# Images of earlier recipes made from this tree, or from a tree that is gone, are garbage now;
# another tree's (another root recipe's) are not. (An .ok without a tree is an older mkdisk.sh's,
# perhaps still in use by another checkout sharing the cache: left alone.)
for old in "$cachedir/disk-$recipe-"????????????; do
        [[ -e $old.ok && $old != "$out" ]] || continue
        old_tree=$(cat "$old.ok")
        [[ -n $old_tree ]] || continue
        if [[ $old_tree == "$tree" || ! -d $old_tree ]]; then
                rm -rf "$old" "$old.ok"
        fi
done
ls -1 "$out"/*.img >&3
