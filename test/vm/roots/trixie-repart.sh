#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# trixie-repart.sh CACHEDIR: roots/trixie.sh's tree with systemd-repart (a package of its own since
# systemd 256) and a repart definition for the root partition, /usr/lib/repart.d/50-root.conf (the
# x86-64 root type, GrowFileSystem=yes, no size limit: it takes the rest of the disk), for the
# trixie-repart-grow-root scenario: `foyer build --root` of it puts systemd-repart and the definition
# into the image, whose systemd-repart.service grows the root partition in the initrd. The real
# root's own systemd-repart.service is masked, so that only the initrd can have grown it; its
# foyer-repart-check.service (after systemd-growfs-root.service, before foyer-report.service) prints
# on ttyS0 what the boot's systemd-repart logged (FOYER-REPART-LOG:) and one line with the root
# partition's, the disk's and the ext4 file system's sizes and the partition's GPT flags
# (FOYER-REPART:). A copy of the trixie tree (apt writes into it), cached as
# CACHEDIR/tree-trixie-repart-<hash>, keyed by this script's text and the trixie tree's path.
# Prints the tree's path.
set -euo pipefail

cachedir=${1:?usage: trixie-repart.sh CACHEDIR}
here=$(dirname "$(realpath "$0")")
base=$("$here/trixie.sh" "$cachedir")
# shellcheck source=SCRIPTDIR/../../lib/cache.sh
source "$here/../../lib/cache.sh"
hash=$(cache_key "$0" -- "$base")
tree=$cachedir/tree-trixie-repart-$hash

if cache_begin "$cachedir/tree-trixie-repart.lock" "$tree"; then
        echo "$tree"
        exit 0
fi
cp -a "$base" "$tree.tmp"
t=$tree.tmp
{
        chroot "$t" apt-get update -q
        chroot "$t" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends systemd-repart
} >&2
rm -rf "$t"/var/lib/apt/lists/* "$t"/var/cache/apt/*.bin "$t"/var/cache/apt/archives/*.deb "$t"/var/log/*.log

install -D -m 0644 /dev/stdin "$t/usr/lib/repart.d/50-root.conf" <<'EOF'
# foyer test root: on first boot the root partition takes the rest of the disk; its file system
# follows (GrowFileSystem=yes: the GPT grow-fs flag, and x-systemd.growfs in the disk's fstab).
[Partition]
Type=root
GrowFileSystem=yes
EOF
# Only the initrd's systemd-repart may grow the partition in this test.
ln -sf /dev/null "$t/etc/systemd/system/systemd-repart.service"

install -D -m 0755 /dev/stdin "$t/usr/local/sbin/foyer-repart-check" <<'EOF'
#!/bin/bash
# What systemd-repart did in this boot (the initrd's: the root's own is masked), and the sizes after
# it and systemd-growfs-root.service.
journalctl -b -q -o cat --no-pager -t systemd-repart 2>/dev/null | sed 's/^/FOYER-REPART-LOG: /'
journalctl -b -q -o cat --no-pager -u systemd-growfs-root.service -t systemd-growfs 2>/dev/null |
        sed 's/^/FOYER-GROWFS-LOG: /'
src=$(findmnt -n -o SOURCE /)
disk=/dev/$(lsblk -n -o PKNAME "$src")
part_bytes=$(lsblk -b -n -d -o SIZE "$src" | tr -d ' ')
disk_bytes=$(lsblk -b -n -d -o SIZE "$disk" | tr -d ' ')
flags=$(blkid -p -o value -s PART_ENTRY_FLAGS "$src" 2>/dev/null)
fs_bytes=$(dumpe2fs -h "$src" 2>/dev/null | awk -F: '/^Block count:/ { c = $2 } /^Block size:/ { s = $2 } END { printf "%d", c * s }')
# Grown: the partition holds all but the last 2% of the disk, the file system all but 2% of it.
part_grown=$(( part_bytes * 100 >= disk_bytes * 98 ))
fs_grown=$(( fs_bytes * 100 >= part_bytes * 98 ))
echo "FOYER-REPART: part=$src disk=$disk part_mib=$((part_bytes >> 20)) disk_mib=$((disk_bytes >> 20))" \
     "fs_mib=$((fs_bytes >> 20)) partflags=${flags:--} part_grown=$part_grown fs_grown=$fs_grown"
EOF
cat >"$t/etc/systemd/system/foyer-repart-check.service" <<'EOF'
[Unit]
Description=foyer test: the root partition and file system after systemd-repart
After=systemd-growfs-root.service local-fs.target
Before=foyer-report.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/foyer-repart-check
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0

[Install]
WantedBy=multi-user.target
EOF
chroot "$t" systemctl enable foyer-repart-check.service >/dev/null 2>&1
cache_commit "$tree"
# Trees of earlier recipes (or of an earlier trixie tree) are garbage now.
for old in "$cachedir"/tree-trixie-repart-*; do
        [[ $old == "$tree" || $old == "$tree.ok" || $old == *.lock ]] || rm -rf "$old"
done
echo "$tree"
