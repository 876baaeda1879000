#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bookworm-installer.sh CACHEDIR: Debian 12 as the installer's guided "encrypted LVM" leaves it
# (mkroot.sh's suite bookworm-installer: its own kernel, cryptsetup and lvm2, the installer's
# /etc/crypttab and /etc/fstab; the disk is mkdisk.sh's recipe "installer"), then switched to foyer
# the way a user does it, in a chroot of a copy of that tree (never on the build machine itself,
# whose initramfs-tools it would remove):
#
#     apt-get install ./foyer_VERSION_amd64.deb linux-image-amd64
#
# The kernel is purged first, so that it is installed with foyer in place and its postinst's
# /etc/kernel/postinst.d/foyer makes /boot/initrd.img-VERSION from the tree's own crypttab and
# fstab; that it is foyer's image is checked here (foyer ls). The scenario boots that image
# (`initrd tree`). The tree also gets foyer-hostonly-test.service: on the first boot it runs
# `foyer build --hostonly` for the running kernel and writes the image to the scratch disk /dev/vdb
# (see test/vm/hostonly-image.sh).
#
# The package is $FOYER_VM_DEB if set, else test/package/build-deb.sh's (built once, shared with
# the package tests through its output directory $FOYER_DEB_OUTDIR, default CACHEDIR/deb, and its
# lock). The tree is CACHEDIR/tree-installer-foyer-<hash>, keyed by this script, the debootstrapped
# tree (its path holds mkroot.sh's hash) and the package's bytes: a new package makes a new tree,
# and so new disks. Needs the mirror (apt-get update, the kernel's packages).
set -euo pipefail

cachedir=${1:?usage: bookworm-installer.sh CACHEDIR}
here=$(dirname "$(realpath "$0")")
base=$("$here/../mkroot.sh" "$cachedir" bookworm-installer)
if [[ -n ${FOYER_VM_DEB:-} ]]; then
        deb=$(realpath "$FOYER_VM_DEB")
else
        rc=0
        deb=$("$here/../../package/build-deb.sh" "$here/../../.." "${FOYER_DEB_OUTDIR:-$cachedir/deb}") || rc=$?
        [[ $rc == 0 ]] || exit "$rc"
fi
[[ -s $deb ]] || { echo "bookworm-installer: no package $deb" >&2; exit 1; }

# shellcheck source=SCRIPTDIR/../../lib/cache.sh
source "$here/../../lib/cache.sh"
hash=$(cache_key "$0" "$deb" -- "$base")
prefix="tree-installer-foyer"
tree=$cachedir/$prefix-$hash
if cache_begin "$cachedir/$prefix.lock" "$tree"; then
        echo "$tree"
        exit 0
fi

t=$tree.tmp
mounts=()
cleanup() {
        for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
        rm -rf "$t"
}
trap cleanup EXIT
echo "bookworm-installer: apt-get install ./$(basename "$deb") linux-image-amd64 in a copy of $base" >&2
start=$(date +%s)
cp -a "$base" "$t"
for m in proc sys dev; do
        mount --rbind "/$m" "$t/$m"
        mount --make-rslave "$t/$m"
        mounts+=("$t/$m")
done
in_root() { chroot "$t" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
log=$cachedir/$prefix.log
{
        in_root apt-get -q update
        # The installer's kernel goes (initramfs-tools stays, as on the installed system) ...
        # shellcheck disable=SC2016 # dpkg-query expands the format, not the shell
        mapfile -t kpkgs < <(in_root dpkg-query -W -f='${Package}\n' 'linux-image-*')
        in_root apt-get -qy purge "${kpkgs[@]}"
        cp "$deb" "$t/tmp/"
        # ... and comes back with foyer, which replaces initramfs-tools.
        in_root apt-get -qy install "/tmp/$(basename "$deb")" linux-image-amd64
} >"$log" 2>&1 || { tail -40 "$log" >&2; echo "bookworm-installer: apt-get failed (log: $log)" >&2; exit 1; }
rm -f "$t/tmp/$(basename "$deb")"
grep -E '^(Removing initramfs-tools|update-initramfs:)' "$log" >&2 || true

# /boot/initrd.img-VERSION is foyer's: its initrd-release and generators.
# shellcheck disable=SC2012 # kernel file names are plain: vmlinuz-VERSION
kver=$(ls "$t"/boot/vmlinuz-* | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)
[[ -n $kver && -s $t/boot/initrd.img-$kver ]] || { echo "bookworm-installer: no /boot/initrd.img-$kver after the installation" >&2; exit 1; }
# shellcheck disable=SC2016 # dpkg-query expands the format, not the shell
[[ $(in_root dpkg-query -W -f='${db:Status-Status}' initramfs-tools 2>/dev/null || true) != installed ]] ||
        { echo "bookworm-installer: initramfs-tools is still installed" >&2; exit 1; }
in_root foyer ls "/boot/initrd.img-$kver" etc/initrd-release 2>/dev/null | grep -x 'ID=foyer' >/dev/null ||
        { echo "bookworm-installer: /boot/initrd.img-$kver is not foyer's" >&2; exit 1; }
in_root foyer ls "/boot/initrd.img-$kver" 2>/dev/null | grep ' usr/lib/systemd/system-generators/foyer-root-generator$' >/dev/null ||
        { echo "bookworm-installer: /boot/initrd.img-$kver has no foyer generators" >&2; exit 1; }
in_root foyer ls "/boot/initrd.img-$kver" etc/crypttab 2>/dev/null | grep '^vda5_crypt ' >/dev/null ||
        { echo "bookworm-installer: /boot/initrd.img-$kver has no vda5_crypt line from the tree's /etc/crypttab" >&2; exit 1; }
echo "bookworm-installer: /boot/initrd.img-$kver is foyer's ($(stat -c %s "$t/boot/initrd.img-$kver") bytes)" >&2
for m in "${mounts[@]}"; do umount -l "$m"; done
mounts=()
rm -rf "$t"/var/lib/apt/lists/* "$t"/var/cache/apt/*.bin "$t"/var/cache/apt/archives/*.deb

# The host-only test, from inside the booted system (its first boot only: the scenario's second
# boot runs the image it made). The image goes to the scratch disk /dev/vdb: 4 KiB of header
# ("FOYER-SCRATCH SIZE"), then the image; hostonly-image.sh reads it back on the host. Every boot
# prints the size of the initrd the kernel was given ("Freeing initrd memory"), which tells the
# host-only image from the package's.
install -m 0755 /dev/stdin "$t/usr/local/sbin/foyer-hostonly-test" <<'EOF'
#!/bin/bash
set -u
freed=$(dmesg 2>/dev/null | grep -o 'Freeing initrd memory: [0-9]*K' | head -n1)
[[ -n $freed ]] || freed=$(journalctl -k -b -q -o cat 2>/dev/null | grep -o 'Freeing initrd memory: [0-9]*K' | head -n1)
echo "FOYER-INITRD freed=$(sed 's/.*: //' <<<"${freed:-none}")"
done=/var/lib/foyer-hostonly-test/done
[[ ! -e $done ]] || exit 0
# (In /run, a tmpfs: written on the root, the image would go through dm-crypt, slow under TCG.)
kver=$(uname -r) img=/run/foyer-hostonly.img
[[ -b /dev/vdb ]] || { echo "FOYER-HOSTONLY failed: no scratch disk /dev/vdb"; exit 1; }
start=$(date +%s%N)
if ! foyer build --hostonly --kver "$kver" -o "$img" >/run/foyer-hostonly.log 2>&1; then
        sed 's/^/FOYER-HOSTONLY-LOG: /' /run/foyer-hostonly.log
        echo "FOYER-HOSTONLY failed"
        exit 1
fi
ms=$(( ($(date +%s%N) - start) / 1000000 ))
sed 's/^/FOYER-HOSTONLY-LOG: /' /run/foyer-hostonly.log
list=$(foyer ls "$img" 2>/dev/null)
has() { grep -Eq "/$1\.ko(\.(xz|zst|gz))?\$" <<<"$list" && echo 1 || echo 0; }
size=$(stat -c %s "$img")
{ printf 'FOYER-SCRATCH %s\n' "$size"; head -c 4096 /dev/zero; } | head -c 4096 | dd of=/dev/vdb bs=4096 conv=fsync status=none
dd if="$img" of=/dev/vdb bs=4096 seek=1 conv=fsync status=none
mkdir -p "${done%/*}" && touch "$done" && sync
echo "FOYER-HOSTONLY kver=$kver size=$size build_ms=$ms modules=$(grep -c '\.ko' <<<"$list")" \
     "dm_crypt=$(has dm-crypt) virtio_blk=$(has virtio_blk) nvme=$(has nvme) ahci=$(has ahci) usb_storage=$(has usb-storage)"
EOF
cat >"$t/etc/systemd/system/foyer-hostonly-test.service" <<'EOF'
[Unit]
Description=foyer test: a host-only image of the running system, to the scratch disk
After=local-fs.target
Before=foyer-report.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/foyer-hostonly-test
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0

[Install]
WantedBy=multi-user.target
EOF
chroot "$t" systemctl enable foyer-hostonly-test.service >/dev/null 2>&1
# The kernel's Recommends brought apparmor, as on an installed system; compiling its profiles at
# each boot (the cache is new on every disk) holds up sysinit.target for a minute under TCG, and
# says nothing about the initrd.
chroot "$t" systemctl mask apparmor.service >/dev/null 2>&1

cache_commit "$tree"
trap - EXIT
echo "bookworm-installer: made in $(( $(date +%s) - start )) s" >&2
# Trees of earlier packages or recipes are garbage now.
for old in "$cachedir/$prefix"-????????????{,.ok}; do
        [[ $old == "$tree" || $old == "$tree.ok" ]] || rm -rf "$old"
done
echo "$tree"
