#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/mktree-dracut.sh SUITE CACHEDIR
#
# The tree both builders read for a suite other than the host's: test/foyer/mktree.sh's tree of
# SUITE (shared with the tests in CACHEDIR, never written to) copied to
# CACHEDIR/bench/SUITE-dracut-<hash> (a directory of its own: mktree.sh removes CACHEDIR/SUITE-* it
# did not make),
# with that suite's dracut (and zstd, without which dracut --zstd falls back to gzip) installed in it
# by apt-get in a chroot, so that dracut runs as that suite
# ships it against the same files foyer build --root reads. <hash> covers this script and the
# tree's name (a new mktree.sh recipe makes a new copy). Prints the copy's path on stdout.
set -euo pipefail

suite=${1:?usage: mktree-dracut.sh SUITE CACHEDIR}
cachedir=${2:?usage: mktree-dracut.sh SUITE CACHEDIR}
topdir=$(cd "$(dirname "$0")/.." && pwd)

src=$("$topdir/test/foyer/mktree.sh" "$suite" "$cachedir")
hash=$( (sha256sum <"$0"; basename "$src") | sha256sum | cut -c1-12)
mkdir -p "$cachedir/bench"
tree=$cachedir/bench/$suite-dracut-$hash

exec 9>"$cachedir/bench/$suite-dracut.lock"
flock 9
if [[ -e $tree.ok && -d $tree ]]; then
        echo "$tree"
        exit 0
fi

rm -rf "$tree" "$tree.tmp" "$tree.ok"
echo "mktree-dracut: copying $src and installing dracut-core into $tree" >&2
cp -a "$src" "$tree.tmp"
t=$tree.tmp
cleanup() {
        for m in dev/pts dev proc sys; do
                mountpoint -q "$t/$m" && umount "$t/$m"
        done
        return 0
}
trap cleanup EXIT
mount --bind /dev "$t/dev"
mount --bind /dev/pts "$t/dev/pts"
mount -t proc proc "$t/proc"
mount -t sysfs sysfs "$t/sys"
cp /etc/resolv.conf "$t/etc/resolv.conf" 2>/dev/null || true
chroot "$t" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
# No recommends: the tree has no initramfs-tools to replace, and dracut-core is what the
# bookworm run uses from the host as well.
chroot "$t" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dracut-core zstd >&2
rm -rf "$t"/var/lib/apt/lists/* "$t"/var/cache/apt/*.bin "$t"/var/cache/apt/archives/*.deb
cleanup
trap - EXIT

mv "$t" "$tree"
touch "$tree.ok"
for old in "$cachedir/bench/$suite-dracut"-*; do
        [[ $old == "$tree" || $old == "$tree.ok" ]] || rm -rf "$old"
done
echo "$tree"
