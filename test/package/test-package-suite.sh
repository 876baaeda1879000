#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-package-suite.sh SOURCE-ROOT OUTDIR SUITE
#
# foyer's package, built on Debian 12, installed in a chroot of a newer Debian (SUITE trixie or
# sid): its Depends resolve there, it takes the place of the initrd generator the suite's kernel
# came with, and the image it makes is foyer's, made with the tree's own systemd. The tree is
# test/foyer/mktree.sh's (debootstrap with systemd, udev and linux-image-amd64, which tools/test
# makes at its start; this waits for it under mktree.sh's lock), copied privately (cp -a):
# the shared cache is never written. apt reads the mirror the tree was made from (apt-get update,
# and in sid the two small packages of the kernel's metapackage).
#   * The tree's generator is the first alternative of the kernel's dependency: initramfs-tools on
#     trixie ("initramfs-tools | linux-initramfs-tool"), dracut on sid ("dracut | initramfs-tools |
#     linux-initramfs-tool"). `apt-get install ./foyer_VERSION_ARCH.deb` removes it (foyer conflicts
#     with every linux-initramfs-tool), keeps the kernel (foyer provides linux-initramfs-tool), and
#     foyer's trigger makes /boot/initrd.img-VERSION (mktree.sh's tree has none): foyer's
#     (`foyer ls`), with the tree's systemd recorded in it (VERSION= of usr/lib/foyer/systemd-version
#     is the tree's systemd package's, 257 or 262) and that systemd's libsystemd-shared-NNN.so.
#     The image the generator made (a stand-in) is kept as .foyer-prev, and the generator (with
#     dracut-core on sid) is named in /var/lib/foyer/removed-packages, for the way back.
#   * sid: dracut-core goes with dracut (foyer conflicts with it): dracut's kernel hook, a conffile
#     that `apt-get remove dracut` leaves, runs dracut as long as /usr/bin/dracut is there. Then the
#     kernel installed with foyer pulls no dracut: foyer and the kernel's two packages
#     (linux-image-amd64 and linux-image-VERSION, which carries the dependency; the modules and the
#     binary stay) are purged, leaving no initrd generator, only dracut's hook; `apt-get install
#     linux-image-amd64 ./foyer_VERSION_ARCH.deb` installs no dracut and no initramfs-tools, dracut's
#     hook makes no image, and the image is foyer's.
#   * trixie (whose kernel package is 100 MB): apt, asked to install another kernel flavour
#     (linux-image-cloud-amd64) with foyer installed, would install no initramfs-tools and remove
#     nothing (apt-get -s).
set -euo pipefail
src=$1 out=$2 suite=$3
fail() { echo "FAIL: $suite: $*"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "needs root (chroot); skipping"; exit 77; }
command -v debootstrap >/dev/null || { echo "debootstrap missing; skipping"; exit 77; }
case $suite in
        trixie) tool=initramfs-tools ;;
        sid) tool=dracut ;;
        *) echo "test-package-suite: SUITE must be trixie or sid, not '$suite'" >&2; exit 2 ;;
esac

rc=0
deb=$("$(dirname "$0")/build-deb.sh" "$src" "$out") || rc=$?
[[ $rc == 0 ]] || exit "$rc"

cache=${FOYER_TREE_CACHE:-/var/cache/foyer-trees}
start=$(date +%s)
# As the builder's tests on these trees (test/foyer/test-foyer-tree.sh): no tree (debootstrap
# failed, as sid's may) is a skip, with mktree.sh's messages.
if ! tree=$("$src/test/foyer/mktree.sh" "$suite" "$cache" 2>"$out/mktree-$suite.log"); then
        tail -20 "$out/mktree-$suite.log"
        echo "mktree.sh $suite failed (see above); skipping"
        exit 77
fi
# Its real path: the copy must not follow the suite's link, which a later recipe moves.
tree=$(realpath "$tree")
echo "== $suite tree $tree (waited $(( $(date +%s) - start )) s)"

tmp=$(mktemp -d "/var/tmp/test-package-$suite.XXXXXX")
root=$tmp/root
mounts=()
cleanup() {
        cp "$tmp"/*.log "$out/" 2>/dev/null || true
        for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
        rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$root"
# A private copy (a few hundred MB, seconds), not an overlay of the cache: the builder's tests
# hard-link and unlink the cached tree's files while this runs beside them, and foyer refuses a
# module whose identity changed between planning and reading it (seen once on the overlay).
cp -a "$tree/." "$root/"
for m in proc sys dev; do
        mount --rbind "/$m" "$root/$m"
        mount --make-rslave "$root/$m"
        mounts+=("$root/$m")
done
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
# shellcheck disable=SC2016 # dpkg-query expands the format, not the shell
status() { in_root dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true; }
cp "$deb" "$root/tmp/"
pkgfile=/tmp/$(basename "$deb")
# The logs of the last run of each suite stay in OUTDIR, named by it.
log() { echo "$tmp/$suite-$1.log"; }

echo "== foyer's Depends: $(dpkg-deb -f "$deb" Depends)"
# Without the Release file's Valid-Until, as debootstrap made the tree: the mirror may be a frozen
# snapshot, whose sid Release expires a week after it was taken.
in_root apt-get -q -o Acquire::Check-Valid-Until=false update >"$(log update)" 2>&1 ||
        { tail -20 "$(log update)"; fail "apt-get update"; }

kver=$(basename "$(ls -d "$root"/usr/lib/modules/*)")
kpkg=linux-image-$kver
[[ $(status "$kpkg") == installed ]] || fail "the tree has no $kpkg"
[[ $(status "$tool") == installed ]] || fail "the tree's kernel did not come with $tool (its first alternative)"
# shellcheck disable=SC2016 # dpkg-query expands the format, not the shell
systemd=$(in_root dpkg-query -W -f='${Version}' systemd)
systemd=${systemd%%[.~-]*}
echo "kernel $kver with $tool, systemd $systemd"
image=$root/boot/initrd.img-$kver

# The image in the chroot is foyer's and made with the tree's systemd.
check_image() {
        [[ -f $image ]] || fail "$1: no /boot/initrd.img-$kver"
        in_root foyer ls "/boot/initrd.img-$kver" >"$tmp/ls" 2>"$tmp/ls.err" || { cat "$tmp/ls.err"; fail "$1: foyer ls cannot read the image"; }
        in_root foyer ls "/boot/initrd.img-$kver" etc/initrd-release | grep -qx 'ID=foyer' || fail "$1: the image's initrd-release is not foyer's"
        grep -q ' usr/lib/systemd/system-generators/foyer-root-generator$' "$tmp/ls" || fail "$1: no foyer generators in the image"
        recorded=$(in_root foyer ls "/boot/initrd.img-$kver" usr/lib/foyer/systemd-version | sed -n 's/^VERSION=//p')
        [[ $recorded == "$systemd" ]] || fail "$1: the image records systemd '$recorded', the tree's is $systemd"
        grep -Eq " usr/lib/(x86_64-linux-gnu/)?systemd/libsystemd-shared-${systemd}[.-][^/]*so\$" "$tmp/ls" ||
                fail "$1: the image has no libsystemd-shared-$systemd (the tree's systemd)"
        echo "$1: /boot/initrd.img-$kver is foyer's, with systemd $recorded"
}
# No initrd generator was installed, and foyer was not removed.
no_other_generator() {
        local log=$1 p
        for p in dracut dracut-core initramfs-tools initramfs-tools-core tiny-initramfs; do
                ! grep -q "^Unpacking $p " "$log" || fail "$2: apt installed $p"
        done
        ! grep -q '^Removing foyer ' "$log" || fail "$2: apt removed foyer"
        for p in dracut dracut-core initramfs-tools; do
                [[ $(status "$p") != installed ]] || fail "$2: $p is installed"
        done
        [[ $(status foyer) == installed ]] || fail "$2: foyer is not installed: $(status foyer)"
        [[ $(status "$kpkg") == installed ]] || fail "$2: $kpkg is not installed: $(status "$kpkg")"
}

# mktree.sh's tree has no image: one stands for the one $tool made, which foyer's preinst keeps.
printf '%s image\n' "$tool" >"$image"
cp "$image" "$tmp/image.prev"

echo "== apt-get install ./$(basename "$deb") in place of $tool"
start=$(date +%s)
in_root apt-get -y install "$pkgfile" >"$(log install)" 2>&1 || { tail -40 "$(log install)"; fail "apt-get install ./$(basename "$deb")"; }
echo "installed in $(( $(date +%s) - start )) s"
grep -E '^(Removing|Processing triggers for foyer|update-initramfs:|foyer:)' "$(log install)" || true
grep -q "^Removing $tool " "$(log install)" || fail "apt did not remove $tool"
no_other_generator "$(log install)" "the installation"
n=$(grep -c '^update-initramfs: Generating ' "$(log install)" || true)
[[ $n == 1 ]] || fail "$n images made during the installation, not 1 (the trigger)"
check_image "the installation"
cmp "$tmp/image.prev" "$image.foyer-prev" || fail "$tool's image is not kept as $image.foyer-prev"
removed=$(cat "$root/var/lib/foyer/removed-packages" 2>&1 || true)
gone=("$tool")
[[ $tool != dracut ]] || gone+=(dracut-core)
for p in "${gone[@]}"; do
        grep -qx "$p" <<<"$removed" || fail "$p is not in /var/lib/foyer/removed-packages: $removed"
done
# dracut's kernel hook, a conffile that `apt-get remove dracut` leaves, runs dracut whenever
# /usr/bin/dracut is there: dracut-core, which has it, goes too (and its kernel-install plugin).
[[ $(status dracut-core) != installed ]] || fail "dracut-core is still installed (with it dracut's left kernel hook makes an image)"
[[ ! -e $root/usr/bin/dracut ]] || fail "/usr/bin/dracut is still there"

if [[ $suite == sid ]]; then
        echo "== the kernel installed with foyer: apt-get install linux-image-amd64 ./$(basename "$deb")"
        in_root apt-get -y purge foyer linux-image-amd64 "$kpkg" >"$(log purge)" 2>&1 || { tail -20 "$(log purge)"; fail "apt-get purge"; }
        for p in foyer "$kpkg" dracut initramfs-tools; do
                [[ $(status "$p") != installed ]] || fail "$p is still installed after the purge"
        done
        rm -f "$image"
        # What the next installation must not run.
        [[ -x $root/etc/kernel/postinst.d/dracut ]] || fail "no /etc/kernel/postinst.d/dracut left by apt-get remove dracut"
        in_root apt-get -y install linux-image-amd64 "$pkgfile" >"$(log with-kernel)" 2>&1 ||
                { tail -40 "$(log with-kernel)"; fail "apt-get install linux-image-amd64 ./$(basename "$deb")"; }
        grep -E '^(Unpacking|Removing|update-initramfs:)' "$(log with-kernel)" || true
        grep -q "^Unpacking $kpkg " "$(log with-kernel)" || fail "apt did not install $kpkg"
        no_other_generator "$(log with-kernel)" "the kernel with foyer"
        ! grep -Eq '^dracut(: |\[)' "$(log with-kernel)" || fail "dracut made an image during the kernel's installation"
        grep -q "^update-initramfs: Generating /boot/initrd.img-$kver" "$(log with-kernel)" || fail "foyer made no image for the kernel"
        check_image "the kernel with foyer"
else
        echo "== another kernel with foyer installed: apt-get -s install linux-image-cloud-amd64"
        in_root apt-get -s install linux-image-cloud-amd64 >"$(log cloud)" 2>&1 || { tail -20 "$(log cloud)"; fail "apt-get -s install linux-image-cloud-amd64"; }
        grep -E '^(Inst|Remv) ' "$(log cloud)" || true
        grep -q '^Inst linux-image-[^ ]*-cloud-amd64 ' "$(log cloud)" || fail "apt would not install the cloud kernel"
        ! grep -Eq '^Inst (dracut|initramfs-tools|tiny-initramfs)[ :]' "$(log cloud)" || fail "apt would install another initrd generator with the kernel"
        ! grep -q '^Remv ' "$(log cloud)" || fail "apt would remove packages to install the kernel"
fi
echo ok
