#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd-repart in a built image (docs/image-based.md, "First boot: systemd-repart"):
#  - a tree without repart definitions gives an image without systemd-repart or its unit;
#  - a tree with definitions (/usr/lib/repart.d, /etc/repart.d; one of /usr/lib's masked by a link
#    to /dev/null in /etc) gives the tree's systemd-repart and systemd-repart.service, linked into
#    initrd-root-fs.target, the unmasked definitions byte for byte and not the masked one, and the
#    mkfs a Format= line names (Format=swap: mkswap); run inside the unpacked image, systemd-repart
#    grows a GPT disk file's small root partition to the end of the disk;
#  - Format= with a file system whose mkfs the tree lacks, or a value that is no file system type,
#    fails the build naming the definition (and the line); definitions that are all masked give no
#    systemd-repart;
#  - a tree with definitions but without systemd-repart (Debian 13's debootstrap tree: the package
#    systemd-repart is not installed) fails the build, naming the program and a definition.
# Without TREE the tree is lib.sh's fake-kernel copy of the build host's /usr (systemd 252, whose
# systemd package has systemd-repart); with TREE (made by mktree.sh, through test-foyer-tree.sh) a
# copy of that tree.
# Usage: test-foyer-repart.sh FOYER GENERATOR-DIR UNIT-DIR [TREE]
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
src=${4:-}
require_generator
make_tmp test-foyer-repart
if [ -n "$src" ]; then
        use_tree_copy "$src"
else
        use_fake_kernel
fi
prog=usr/bin/systemd-repart
unit=usr/lib/systemd/system/systemd-repart.service
echo "tree: ${src:-fake-kernel copy of /usr}, kernel $kver"

build() {       # build IMAGE: foyer build of $root, uncompressed, log in $tmp/build.log
        "$foyer" build --root "$root" --kver "$kver" --compress none -o "$1" >"$tmp/build.log" 2>&1
}
unpack() {      # unpack IMAGE DIR
        mkdir "$2"
        (cd "$2" && cpio -idm --quiet <"$1")
}
# build_fails WHAT PATTERN...: the build fails, and its log has each fixed string.
build_fails() {
        local what=$1 p
        shift
        echo "== $what"
        if build "$tmp/bad.img"; then
                cat "$tmp/build.log"
                fail "$what: the build succeeded"
        fi
        for p in "$@"; do
                grep -qF -- "$p" "$tmp/build.log" || { cat "$tmp/build.log"; fail "$what: the error does not name '$p'"; }
        done
}

echo "== a tree without repart definitions: no systemd-repart"
rm -rf "$root/usr/lib/repart.d" "$root/etc/repart.d" "$root/usr/local/lib/repart.d"
build "$tmp/none.img" || { cat "$tmp/build.log"; fail "foyer build"; }
unpack "$tmp/none.img" "$tmp/none"
[ ! -e "$tmp/none/$prog" ] || fail "an image without definitions has /$prog"
[ ! -e "$tmp/none/$unit" ] || fail "an image without definitions has /$unit"

mkdir -p "$root/usr/lib/repart.d" "$root/etc/repart.d"
printf '%s\n' '# the root grows to the end of the disk' '[Partition]' 'Type=root' 'GrowFileSystem=yes' \
        >"$root/usr/lib/repart.d/50-root.conf"
printf '%s\n' '[Partition]' 'Type=home' 'Format=foyerfs' >"$root/usr/lib/repart.d/60-home.conf"
ln -s /dev/null "$root/etc/repart.d/60-home.conf"
printf '%s\n' '[Partition]' 'Type=swap' 'Format = ext4' 'Format=' 'Format=swap' 'SizeMinBytes=64M' \
        >"$root/etc/repart.d/70-swap.conf"

if [ ! -x "$root/$prog" ]; then
        # Debian 13 splits systemd-repart out of systemd: its debootstrap tree has no such package.
        build_fails "definitions without systemd-repart" \
                "$root/usr/lib/repart.d/50-root.conf has repart definitions, but $root/$prog is not there" "package systemd-repart"
        echo "PASS (the tree has no /$prog, package systemd-repart: the image's cases need it)"
        exit 0
fi
[ -e "$root/$unit" ] || fail "the tree has /$prog but no /$unit"

echo "== the image holds systemd-repart, its unit and the unmasked definitions"
build "$tmp/a.img" || { cat "$tmp/build.log"; fail "foyer build"; }
r=$tmp/a
unpack "$tmp/a.img" "$r"
for f in "$prog" "$unit" usr/lib/repart.d/50-root.conf etc/repart.d/70-swap.conf; do
        [ -e "$r/$f" ] || fail "missing /$f"
        cmp -s "$r/$f" "$root/$f" || fail "/$f is not the tree's"
done
[ -x "$r/$prog" ] || fail "/$prog is not executable"
[ "$(readlink "$r/usr/lib/systemd/system/initrd-root-fs.target.wants/systemd-repart.service")" = ../systemd-repart.service ] ||
        fail "systemd-repart.service is not wanted by initrd-root-fs.target"
for f in usr/lib/repart.d/60-home.conf etc/repart.d/60-home.conf; do
        if [ -e "$r/$f" ] || [ -L "$r/$f" ]; then fail "the masked definition /$f is in the image"; fi
done
mkswap=$(chroot "$r" /usr/bin/sh -c 'command -v mkswap' 2>/dev/null || true)
if [ -z "$mkswap" ] || [ ! -x "$r$mkswap" ]; then fail "Format=swap: no mkswap in the image"; fi
# initrd-usr-fs.target (DefaultDependencies=no) requires sysroot.mount without ordering: the image
# orders the unit after the root's mount, which it works on.
grep -qx 'After=sysroot.mount' "$r/$unit.d/50-foyer-after-sysroot.conf" ||
        fail "systemd-repart.service is not ordered after sysroot.mount in the image"
grep -q '^ConditionDirectoryNotEmpty=|/usr/lib/repart.d$' "$r/$unit" ||
        fail "the unit does not run on the image's /usr/lib/repart.d (systemd changed?)"

echo "== systemd-repart runs in the image and grows the root partition of a disk file"
truncate -s 64M "$r/disk.img"
sfdisk -q --label gpt "$r/disk.img" <<'EOF'
label: gpt
first-lba: 2048
start=2048, size=16384, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, name=root
EOF
before=$(sfdisk -l -o Sectors "$r/disk.img" | awk 'END { print $1 }')
[ "$before" = 16384 ] || fail "the disk file's root partition has $before sectors before"
# It reopens the disk through /proc/self/fd: a /proc of its own, in a mount namespace of the test's.
command -v unshare >/dev/null || skip "unshare is not installed (util-linux)"
# shellcheck disable=SC2016 # the inner shell expands its own arguments
env -i SYSTEMD_LOG_LEVEL=info SYSTEMD_PROC_CMDLINE=quiet unshare --mount --propagation private /bin/sh -c \
        'mount -t proc proc "$1/proc" && exec /usr/sbin/chroot "$1" "$2" --dry-run=no --definitions=/usr/lib/repart.d \
                --seed=0f8c1d5e-5d0b-4c11-9d55-5e2f3a4b6c7d /disk.img' sh "$r" "/$prog" >"$tmp/repart.log" 2>&1 ||
        { cat "$tmp/repart.log"; fail "systemd-repart failed in the image"; }
after=$(sfdisk -l -o Sectors "$r/disk.img" | awk 'END { print $1 }')
echo "root partition: $before sectors before, $after after"
[ "$after" -gt 120000 ] || { cat "$tmp/repart.log"; fail "systemd-repart did not grow the root partition ($after sectors)"; }

rm "$root/etc/repart.d/60-home.conf"       # unmasked
build_fails "Format= of a file system whose mkfs the tree lacks" \
        "$root/usr/lib/repart.d/60-home.conf has Format=foyerfs, but the tree has no mkfs.foyerfs"

printf '%s\n' '[Partition]' 'Type=home' '' 'Format=Ext4;' >"$root/usr/lib/repart.d/60-home.conf"
build_fails "Format= that is no file system type" "$root/usr/lib/repart.d/60-home.conf:4: Format= is not a file system type"

echo "== every definition masked: no systemd-repart"
for f in 50-root.conf 60-home.conf 70-swap.conf; do
        rm -f "$root/etc/repart.d/$f"
        ln -s /dev/null "$root/etc/repart.d/$f"
done
: >"$root/etc/repart.d/50-root.conf"     # an empty file masks as well
build "$tmp/masked.img" || { cat "$tmp/build.log"; fail "foyer build"; }
unpack "$tmp/masked.img" "$tmp/masked"
[ ! -e "$tmp/masked/$prog" ] || fail "an image whose definitions are all masked has /$prog"

rm -rf "$root/etc/repart.d"
rm "$root/$prog"
build_fails "definitions without systemd-repart" \
        "$root/usr/lib/repart.d/50-root.conf has repart definitions, but $root/$prog is not there" "package systemd-repart"
echo "PASS"
