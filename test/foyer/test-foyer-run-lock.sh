#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# /run/lock in an image of a tree whose systemd mounts a tmpfs there (Debian 13's run-lock.mount,
# enabled in local-fs.target.wants): the image carries the tree's unit, its wants link and foyer's
# drop-in ordering it before udev, so the real root finds /run/lock mounted (plan-run-lock.c). A copy
# of the tree that does not enable the unit, or masks it in /etc, gets none of it.
# Usage: test-foyer-run-lock.sh FOYER GENERATOR-DIR UNIT-DIR TREE (run by test-foyer-tree.sh)
set -euo pipefail
foyer=$1 tree=$4
export FOYER_GENERATOR_DIR=$2 FOYER_UNIT_DIR=$3
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unitdir=usr/lib/systemd/system
kver=$(find "$tree/usr/lib/modules" -mindepth 1 -maxdepth 1 -printf "%f\n" | sort | head -n1)

build() {       # TREE NAME: builds and lists the image
        "$foyer" build --root "$1" --kver "$kver" --compress none -o "$work/$2.img" >"$work/$2.log" 2>&1 ||
                { cat "$work/$2.log"; fail "foyer build of $2 failed"; }
        "$foyer" ls "$work/$2.img" >"$work/$2.ls" 2>/dev/null
}

[[ -L $tree/$unitdir/local-fs.target.wants/run-lock.mount ]] ||
        { echo "the tree does not enable run-lock.mount; skipping"; exit 77; }

echo "== the tree enables run-lock.mount: the image mounts /run/lock before udev"
build "$tree" enabled
grep -q " $unitdir/run-lock.mount\$" "$work/enabled.ls" || fail "run-lock.mount is not in the image"
grep -q " $unitdir/local-fs.target.wants/run-lock.mount -> ../run-lock.mount\$" "$work/enabled.ls" ||
        fail "the image lacks local-fs.target.wants/run-lock.mount"
mkdir "$work/x"
(cd "$work/x" && cpio -id --quiet "$unitdir/run-lock.mount.d/*" "$unitdir/run-lock.mount" <"$work/enabled.img")
dropin=$work/x/$unitdir/run-lock.mount.d/foyer-initrd.conf
[[ -f $dropin ]] || fail "no foyer drop-in for run-lock.mount"
grep -qx 'Before=systemd-udevd.service systemd-udev-trigger.service' "$dropin" ||
        fail "the drop-in does not order run-lock.mount before udev: $(cat "$dropin")"
cmp -s "$work/x/$unitdir/run-lock.mount" "$tree/$unitdir/run-lock.mount" ||
        fail "run-lock.mount in the image is not the tree's"

# Copies of the tree (hard links: nothing of the cached tree is changed in place).
cp -al "$tree" "$work/off"
rm "$work/off/$unitdir/local-fs.target.wants/run-lock.mount"
echo "== the unit is not enabled: no run-lock.mount"
build "$work/off" off
! grep -q "run-lock" "$work/off.ls" || fail "run-lock.mount is in the image of a tree that does not enable it"

cp -al "$tree" "$work/masked"
mkdir -p "$work/masked/etc/systemd/system"
ln -s /dev/null "$work/masked/etc/systemd/system/run-lock.mount"
echo "== the unit is masked in /etc: no run-lock.mount"
build "$work/masked" masked
! grep -q "run-lock" "$work/masked.ls" || fail "run-lock.mount is in the image of a tree that masks it"
echo OK
