#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-package-chroot.sh SOURCE-ROOT OUTDIR
#
# foyer's package installed the way a user does it, in a chroot of a copy of a debootstrapped
# Debian 12 tree (never on the build machine itself, whose initramfs-tools it would remove):
#   * the kernel, cryptsetup-initramfs and dropbear-initramfs first, with initramfs-tools' image;
#     then `apt-get install ./foyer_VERSION_ARCH.deb`: initramfs-tools and dropbear-initramfs go
#     (cryptsetup-initramfs, which takes any linux-initramfs-tool, stays; the hooks left are named),
#     /boot/initrd.img-VERSION is foyer's (foyer ls), initramfs-tools' is kept as
#     /boot/initrd.img-VERSION.foyer-prev, /var/lib/foyer/removed-packages names what apt removed,
#     and systemd's 85-initrd.install is diverted away;
#   * update-initramfs -u from another package's postinst defers through the trigger, and foyer's
#     postinst then remakes the image (a new file, renamed over the old one);
#   * a build that fails during the kernel's postinst (a keyscript= line in /etc/crypttab, which
#     foyer refuses with an error naming the line) makes dpkg report the error, and the previous
#     image stays byte-identical;
#   * `apt-get remove` of the kernel removes its image (and the kept one); installing it again
#     makes foyer's image through the kernel hook;
#   * README's way back (apt-get install initramfs-tools $(cat /var/lib/foyer/removed-packages),
#     update-initramfs -u -k all) removes foyer, brings dropbear-initramfs back, makes the image
#     initramfs-tools' again and puts 85-initrd.install back.
# The base tree (debootstrap minbase + systemd, udev and initramfs-tools, with the kernel's packages
# downloaded) is made once into $FOYER_TREE_CACHE (default /var/cache/foyer-trees) and copied for
# each run.
set -euo pipefail
src=$1 out=$2
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "needs root (chroot); skipping"; exit 77; }
command -v debootstrap >/dev/null || { echo "debootstrap missing; skipping"; exit 77; }

rc=0
deb=$("$(dirname "$0")/build-deb.sh" "$src" "$out") || rc=$?
[[ $rc == 0 ]] || exit "$rc"

# The base tree, once.
cache=${FOYER_TREE_CACHE:-/var/cache/foyer-trees}
mirror=${FOYER_DEBIAN_MIRROR:-$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)}
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$cache"
# The tree's name holds a hash of its recipe: a changed recipe makes a new tree.
recipe="debootstrap --variant=minbase --include=systemd,systemd-sysv,udev,kmod,initramfs-tools bookworm; apt-get --download-only install linux-image-amd64 cryptsetup-initramfs dropbear-initramfs"
base=$cache/package-bookworm-$(sha256sum <<<"$recipe" | cut -c1-12)
(
        flock 9
        if [[ ! -e $base.ok ]]; then
                rm -rf "$base" "$base.tmp"
                echo "== debootstrap bookworm into $base (once)"
                start=$(date +%s)
                debootstrap --variant=minbase --include=systemd,systemd-sysv,udev,kmod,initramfs-tools \
                        bookworm "$base.tmp" "$mirror" >"$out/debootstrap.log" 2>&1 ||
                        { tail -20 "$out/debootstrap.log"; echo "debootstrap failed"; exit 1; }
                chroot "$base.tmp" apt-get -q update >/dev/null
                chroot "$base.tmp" apt-get -qy --download-only install linux-image-amd64 cryptsetup-initramfs dropbear-initramfs >/dev/null
                mv "$base.tmp" "$base"
                touch "$base.ok"
                echo "base tree made in $(( $(date +%s) - start )) s"
        fi
) 9>"$cache/package-bookworm.lock" || exit 1
# Trees of other recipes go once unused for a day: another work tree's run may be using one now.
for old in "$cache"/package-bookworm-*.ok; do
        [[ -e $old && $old != "$base.ok" ]] || continue
        [[ -n $(find "$old" -maxdepth 0 -mmin +1440) ]] || continue
        rm -rf "${old%.ok}" "$old"
done
touch "$base.ok"

tmp=$(mktemp -d /var/tmp/test-package-chroot.XXXXXX)
root=$tmp/root
mounts=()
cleanup() {
        for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
        rm -rf "$tmp"
}
trap cleanup EXIT
cp -a "$base" "$root"
for m in proc sys dev; do
        mount --rbind "/$m" "$root/$m"
        mount --make-rslave "$root/$m"
        mounts+=("$root/$m")
done
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
cp "$deb" "$root/tmp/"
pkgfile=/tmp/$(basename "$deb")

echo "== initramfs-tools' image first: apt-get install linux-image-amd64 cryptsetup-initramfs dropbear-initramfs"
in_root dpkg -s initramfs-tools >/dev/null || fail "the base tree has no initramfs-tools"
# The logs stay in OUTDIR for a look after the run.
trap 'cp "$tmp"/*.log "$out/" 2>/dev/null || true; cleanup' EXIT
# shellcheck disable=SC2016 # dpkg-query expands the format, not the shell
status() { in_root dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true; }
in_root apt-get -y install linux-image-amd64 cryptsetup-initramfs dropbear-initramfs >"$tmp/install-it.log" 2>&1 ||
        { tail -40 "$tmp/install-it.log"; fail "apt-get install linux-image-amd64 cryptsetup-initramfs dropbear-initramfs"; }
for p in cryptsetup-initramfs dropbear-initramfs; do
        [[ $(status "$p") == installed ]] || fail "$p is not installed"
done
kver=$(basename "$(ls -d "$root"/usr/lib/modules/*)")
image=$root/boot/initrd.img-$kver
[[ -f $image ]] || fail "initramfs-tools made no $image"
cp "$image" "$tmp/image.initramfs-tools"

echo "== apt-get install ./$(basename "$deb")"
start=$(date +%s)
in_root apt-get -y install "$pkgfile" >"$tmp/install.log" 2>&1 ||
        { tail -40 "$tmp/install.log"; fail "apt-get install"; }
echo "installed in $(( $(date +%s) - start )) s"
grep -E '^(Removing|Processing triggers for foyer|update-initramfs:|foyer:)' "$tmp/install.log" || true
# The kernel's image, remade once, by foyer's trigger.
n=$(grep -c '^update-initramfs: Generating ' "$tmp/install.log" || true)
[[ $n == 1 ]] || fail "$n images made during the installation, not 1 (the trigger)"
# dropbear-initramfs needs initramfs-tools itself and goes; cryptsetup-initramfs takes any
# linux-initramfs-tool and stays.
[[ $(status dropbear-initramfs) != installed ]] || fail "dropbear-initramfs is still installed"
[[ $(status cryptsetup-initramfs) == installed ]] || fail "cryptsetup-initramfs was removed"
[[ $(status initramfs-tools) != installed ]] || fail "initramfs-tools is still installed"
[[ $(status foyer) == installed ]] || fail "foyer is not installed: $(status foyer)"
[[ -f $image ]] || fail "no $image"
in_root foyer ls "/boot/initrd.img-$kver" >"$tmp/ls" 2>/dev/null || fail "foyer ls cannot read the image"
grep -q ' etc/initrd-release$' "$tmp/ls" || fail "the image is not foyer's"
in_root foyer ls "/boot/initrd.img-$kver" etc/initrd-release | grep -qx 'ID=foyer' || fail "the image's initrd-release is not foyer's"
grep -q ' usr/lib/systemd/system-generators/foyer-root-generator$' "$tmp/ls" || fail "no foyer generators in the image"
[[ ! -e $root/usr/lib/kernel/install.d/85-initrd.install && -e $root/usr/lib/kernel/install.d/85-initrd.install.foyer-diverted ]] ||
        fail "85-initrd.install is not diverted"

echo "== the way back is kept: initramfs-tools' image and what apt removed"
cmp "$tmp/image.initramfs-tools" "$image.foyer-prev" || fail "initramfs-tools' image is not kept as $image.foyer-prev"
grep -qx 'dropbear-initramfs' "$root/var/lib/foyer/removed-packages" ||
        fail "dropbear-initramfs is not in /var/lib/foyer/removed-packages: $(cat "$root/var/lib/foyer/removed-packages" 2>&1)"
! grep -qx 'cryptsetup-initramfs' "$root/var/lib/foyer/removed-packages" ||
        fail "cryptsetup-initramfs, still installed, is in /var/lib/foyer/removed-packages"
# The hooks of the packages left are named, not run.
# The hooks of the packages left are not run; initramfs-tools-core's thermal is named.
grep -q "^foyer: warning: foyer does not run initramfs-tools hooks; not run: .*/usr/share/initramfs-tools/hooks/thermal" "$tmp/install.log" ||
        fail "the thermal hook is not named in a warning"
grep -qx 'initramfs-tools' "$root/var/lib/foyer/removed-packages" || fail "initramfs-tools is not in /var/lib/foyer/removed-packages"

echo "== update-initramfs -u from another package's postinst: deferred to foyer's trigger"
mkdir -p "$tmp/dummy/DEBIAN"
cat >"$tmp/dummy/DEBIAN/control" <<CONTROL
Package: foyer-test-hook
Version: 1
Architecture: all
Maintainer: foyer tests <tests@example.invalid>
Description: calls update-initramfs -u from its postinst, as cryptsetup or lvm2 do
CONTROL
printf '#!/bin/sh\nset -e\nupdate-initramfs -u\n' >"$tmp/dummy/DEBIAN/postinst"
chmod 755 "$tmp/dummy/DEBIAN/postinst"
dpkg-deb -b "$tmp/dummy" "$root/tmp/foyer-test-hook.deb" >/dev/null
before=$(stat -c %i "$image")
in_root dpkg -i /tmp/foyer-test-hook.deb >"$tmp/trigger.log" 2>&1 || { cat "$tmp/trigger.log"; fail "dpkg -i of the test package"; }
cat "$tmp/trigger.log"
grep -q 'update-initramfs: deferring update (trigger activated)' "$tmp/trigger.log" || fail "update-initramfs did not defer"
grep -q 'Processing triggers for foyer' "$tmp/trigger.log" || fail "foyer's trigger did not run"
grep -q "update-initramfs: Generating /boot/initrd.img-$kver" "$tmp/trigger.log" || fail "the trigger did not remake the image"
[[ $(stat -c %i "$image") != "$before" ]] || fail "the image was not replaced"
in_root foyer ls "/boot/initrd.img-$kver" >/dev/null 2>&1 || fail "the remade image cannot be read"

echo "== a failed build during the kernel's postinst: a keyscript= line in /etc/crypttab"
cp -a "$image" "$tmp/image.before"
# cryptsetup's own /etc/crypttab (comments) is put back afterwards.
[[ ! -e $root/etc/crypttab ]] || mv "$root/etc/crypttab" "$tmp/crypttab.orig"
# A volume the initrd must unlock (Debian's "initramfs" option) through a key script, which the
# image cannot run: the build must fail and name the line, not leave the option out.
printf '# <target name> <source device> <key file> <options>\ncryptdata UUID=4c554b53-2d70-4000-8000-0000000000ee none luks,initramfs,keyscript=/lib/cryptsetup/scripts/passdev\n' \
        >"$root/etc/crypttab"
kpkg=linux-image-$kver
rc=0
in_root apt-get -y install --reinstall "$kpkg" >"$tmp/fail.log" 2>&1 || rc=$?
tail -15 "$tmp/fail.log"
[[ $rc != 0 ]] || fail "apt-get succeeded although the build failed"
grep -q '/etc/crypttab:2: volume cryptdata: option keyscript=/lib/cryptsetup/scripts/passdev cannot be honoured' "$tmp/fail.log" ||
        fail "the build's error does not name the crypttab line and its keyscript= option"
grep -Eq "dpkg: error processing package $kpkg" "$tmp/fail.log" || fail "dpkg did not report the kernel package's failure"
cmp "$tmp/image.before" "$image" || fail "the previous image changed"
leftover=$(find "$root/boot" -mindepth 1 -maxdepth 1 ! -name 'initrd.img-*' ! -name 'vmlinuz-*' ! -name 'config-*' ! -name 'System.map-*')
[[ -z $leftover ]] || fail "a temporary file was left in /boot: $leftover"
rm "$root/etc/crypttab"
[[ ! -e $tmp/crypttab.orig ]] || mv "$tmp/crypttab.orig" "$root/etc/crypttab"
in_root dpkg --configure -a >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "dpkg --configure -a after the fix"; }

echo "== apt-get remove of the kernel removes its image, and the kept one"
[[ -f $image ]] || fail "no image before the removal"
in_root apt-get -y remove "$kpkg" linux-image-amd64 >"$tmp/remove.log" 2>&1 || { tail -20 "$tmp/remove.log"; fail "apt-get remove"; }
[[ ! -e $image ]] || fail "$image is still there after the kernel's removal"
[[ ! -e $image.foyer-prev ]] || fail "$image.foyer-prev is still there after the kernel's removal"

echo "== the kernel again: foyer's kernel hook makes its image"
in_root apt-get -y install linux-image-amd64 >"$tmp/install-kernel.log" 2>&1 ||
        { tail -20 "$tmp/install-kernel.log"; fail "apt-get install linux-image-amd64"; }
n=$(grep -c '^update-initramfs: Generating ' "$tmp/install-kernel.log" || true)
[[ $n == 1 ]] || fail "$n images made by the kernel's installation, not 1"
in_root foyer ls "/boot/initrd.img-$kver" etc/initrd-release | grep -qx 'ID=foyer' || fail "the kernel's new image is not foyer's"

echo "== the way back, as README says: initramfs-tools and what apt removed with it"
# shellcheck disable=SC2016 # the chroot's shell expands it
in_root sh -c 'apt-get -y install initramfs-tools $(cat /var/lib/foyer/removed-packages) && update-initramfs -u -k all' \
        >"$tmp/rollback.log" 2>&1 || { tail -30 "$tmp/rollback.log"; fail "the rollback"; }
grep -E '^(Removing|update-initramfs:)' "$tmp/rollback.log" || true
[[ $(status foyer) != installed ]] || fail "foyer is still installed after the rollback"
[[ $(status initramfs-tools) == installed ]] || fail "initramfs-tools is not installed after the rollback"
[[ $(status dropbear-initramfs) == installed ]] || fail "dropbear-initramfs is not back after the rollback"
[[ $(status cryptsetup-initramfs) == installed ]] || fail "cryptsetup-initramfs is not installed after the rollback"
in_root lsinitramfs "/boot/initrd.img-$kver" >"$tmp/lsinitramfs" 2>&1 || fail "lsinitramfs cannot read the image"
grep -qx 'conf/initramfs.conf' "$tmp/lsinitramfs" || fail "the image is not initramfs-tools' after the rollback"
! grep -q 'foyer-root-generator$' "$tmp/lsinitramfs" || fail "the image still holds foyer's generators"
[[ -e $root/usr/lib/kernel/install.d/85-initrd.install && ! -e $root/usr/lib/kernel/install.d/85-initrd.install.foyer-diverted ]] ||
        fail "85-initrd.install is not back after foyer's removal"
echo ok
