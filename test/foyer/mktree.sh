#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mktree.sh SUITE CACHEDIR
#
# Builds (once) a Debian tree of SUITE (trixie, sid, bookworm, ...) for `foyer build --root`:
# debootstrap --variant=minbase with systemd, udev, the cryptsetup and LVM tools and the
# suite's kernel, so the builder is tested against that suite's own systemd, libraries and
# modules. The tree is cached as CACHEDIR/SUITE-<hash>, where <hash> covers this script, and
# CACHEDIR/SUITE links to it. A lock per suite lets concurrent callers share one build.
# Prints the tree's path on stdout.
set -euo pipefail

suite=${1:?usage: mktree.sh SUITE CACHEDIR}
cachedir=${2:?usage: mktree.sh SUITE CACHEDIR}
mirror=${FOYER_DEBIAN_MIRROR:-$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)}
mirror=${mirror:-http://deb.debian.org/debian}

# shellcheck source=SCRIPTDIR/../lib/cache.sh
source "$(dirname "$(realpath "$0")")/../lib/cache.sh"

mkdir -p "$cachedir"
hash=$(cache_key "$0")
tree=$cachedir/$suite-$hash

if cache_begin "$cachedir/$suite.lock" "$tree"; then
        ln -sfn "$suite-$hash" "$cachedir/$suite"
        echo "$tree"
        exit 0
fi

packages=systemd,systemd-sysv,udev,cryptsetup-bin,lvm2,e2fsprogs,kmod,linux-image-amd64
# Since trixie (systemd 256) systemd-cryptsetup is a package of its own.
case $suite in
        bookworm|bullseye) ;;
        *) packages+=,systemd-cryptsetup ;;
esac
echo "mktree: debootstrap $suite ($packages) from $mirror into $tree" >&2
# INITRD=No: the kernel's postinst hooks (initramfs-tools', dracut's) make no image, which would
# only be deleted below; minutes of CPU under the suite's other work.
INITRD=No debootstrap --variant=minbase --include="$packages" "$suite" "$tree.tmp" "$mirror" >&2

t=$tree.tmp
rm -rf "$t"/usr/share/doc/* "$t"/usr/share/man/* "$t"/usr/share/info/* \
       "$t"/usr/share/locale/* "$t"/var/lib/apt/lists/* "$t"/var/cache/apt/*.bin \
       "$t"/var/cache/apt/archives/*.deb "$t"/var/log/*.log
# The tree is only read by the builder; an initramfs-tools image would only take room.
rm -f "$t"/boot/initrd.img-*

cache_commit "$tree"
ln -sfn "$suite-$hash" "$cachedir/$suite"
# Trees of earlier recipes of this suite are garbage now.
for old in "$cachedir/$suite"-*; do
        [[ $old == "$tree" || $old == "$tree.ok" ]] || rm -rf "$old"
done
echo "$tree"
