#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer build --root of a tree laid out as the Debian installer's guided "encrypted LVM" (docs/
# foyer.md, "The target system's own settings"), with no --crypttab and no --cmdline:
#  - the image's /etc/crypttab is the line of the volume under the root (through the VG's
#    metadata backup in the tree), not the /home line; its key file is in the image 0400 and the
#    image is 0600; /etc/cmdline.d/40-foyer-target.conf says root= of the tree's fstab;
#  - --cmdline with root= stores no default root; --crypttab FILE wins over the tree's crypttab;
#    --no-target-settings (and TargetSettings=no) reads none of it: no crypttab, no root, 0644;
#  - a keyscript= on the root's line fails the build with one error naming the file and line,
#    and leaves no output; on a line the image does not take it does not matter.
# Usage: test-foyer-target.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator foyer-crypt-generator
make_tmp test-foyer-target
# The modules are not what is tested here: a fake kernel's will do.
use_fake_kernel
[ -x "$root/usr/lib/systemd/systemd-cryptsetup" ] || skip "systemd-cryptsetup is not installed"

build() { "$foyer" build --root "$root" --kver "$kver" -c none "$@"; }
# extract IMAGE PATH: the bytes of PATH in an uncompressed image.
extract() { cpio -i --quiet --to-stdout "${2#/}" < "$1"; }
mode_of() { "$foyer" ls "$1" | awk -v p="$2" '$3 == p { print $1 }'; }

mkdir -p "$root/etc/keys" "$root/etc/lvm/backup"
rm -f "$root/etc/fstab" "$root/etc/crypttab"   # never write through the tree's hard links
cat >"$root/etc/fstab" <<'FSTAB'
# <file system> <mount point>   <type>  <options>       <dump>  <pass>
/dev/mapper/debian--vg-root /               ext4    errors=remount-ro 0       1
UUID=0b3c0a24-0d1a-4b5c-9e6f-7a8b9c0d1e2f /boot           ext2    defaults        0       2
/dev/mapper/debian--vg-swap_1 none            swap    sw              0       0
FSTAB
crypttab_line='sda5_crypt UUID=4c554b53-2d70-4000-8000-000000000051 /etc/keys/root.key luks,discard'
printf '%s\nhome UUID=4c554b53-2d70-4000-8000-000000000052 /etc/keys/home.key luks\n' "$crypttab_line" \
        >"$root/etc/crypttab"
printf 'root-key-bytes' >"$root/etc/keys/root.key"
printf 'home-key-bytes' >"$root/etc/keys/home.key"
chmod 0644 "$root/etc/keys/"*.key
printf 'debian-vg {\n\tphysical_volumes {\n\t\tpv0 {\n\t\t\tdevice = "/dev/mapper/sda5_crypt"\t# Hint only\n\t\t}\n\t}\n}\n' \
        >"$root/etc/lvm/backup/debian-vg"

echo "== the installer's layout: the root's volume, its key, the default root"
build -o "$tmp/a.img" 2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "build"; }
cat "$tmp/stderr"
[ "$(extract "$tmp/a.img" /etc/crypttab)" = "$crypttab_line" ] ||
        fail "image crypttab: $(extract "$tmp/a.img" /etc/crypttab)"
[ "$(extract "$tmp/a.img" /etc/keys/root.key)" = root-key-bytes ] || fail "root.key not in the image"
[ "$(mode_of "$tmp/a.img" etc/keys/root.key)" = "-r--------" ] || fail "root.key mode $(mode_of "$tmp/a.img" etc/keys/root.key)"
"$foyer" ls "$tmp/a.img" | grep -q ' etc/keys/home.key$' && fail "home.key of a line not taken is in the image"
[ "$(stat -c %a "$tmp/a.img")" = 600 ] || fail "image with a key has mode $(stat -c %a "$tmp/a.img")"
[ "$(extract "$tmp/a.img" /etc/cmdline.d/40-foyer-target.conf)" = "root=/dev/mapper/debian--vg-root" ] ||
        fail "default root: $(extract "$tmp/a.img" /etc/cmdline.d/40-foyer-target.conf)"
grep -q "From the tree's /etc/crypttab: sda5_crypt\." "$tmp/stderr" || fail "no message naming the volume taken"
# The root LV above the volume: no job timeout while the passphrase prompt waits.
dropin='usr/lib/systemd/system/dev-mapper-debian\x2d\x2dvg\x2droot.device.d/40-foyer-target-timeout.conf'
"$foyer" ls -f "$dropin" "$tmp/a.img" | grep -qx "JobTimeoutSec=0" || fail "no JobTimeoutSec=0 for the root LV's device"

echo "== without the VG's backup: every line without noauto"
mv "$root/etc/lvm/backup/debian-vg" "$tmp/backup"
build -o "$tmp/b.img" 2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "build"; }
grep -q "cannot be told" "$tmp/stderr" || fail "no message about taking every line"
[ "$(extract "$tmp/b.img" /etc/crypttab | wc -l)" = 2 ] || fail "not both lines: $(extract "$tmp/b.img" /etc/crypttab)"
[ "$(mode_of "$tmp/b.img" etc/keys/home.key)" = "-r--------" ] || fail "home.key missing or not 0400"
mv "$tmp/backup" "$root/etc/lvm/backup/debian-vg"

echo "== --cmdline with root=: no default root"
build -o "$tmp/c.img" --cmdline "root=UUID=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e01 rw" 2>/dev/null || fail "build"
"$foyer" ls "$tmp/c.img" | grep -q 'cmdline.d/40-foyer-target.conf' && fail "default root despite --cmdline root="

echo "== --crypttab wins"
printf 'other UUID=4c554b53-2d70-4000-8000-000000000053 none luks\n' >"$tmp/crypttab"
build -o "$tmp/d.img" --crypttab "$tmp/crypttab" 2>/dev/null || fail "build"
extract "$tmp/d.img" /etc/crypttab | cmp -s - "$tmp/crypttab" || fail "the image's crypttab is not --crypttab's"
"$foyer" ls "$tmp/d.img" | grep -q ' etc/keys/root.key$' && fail "the tree's key file with --crypttab"

echo "== --no-target-settings and TargetSettings=no"
build -o "$tmp/e.img" --no-target-settings 2>/dev/null || fail "build"
mkdir -p "$tmp/conf/etc/foyer"
printf '[Build]\nTargetSettings=no\n' >"$tmp/conf/etc/foyer/foyer.conf"
FOYER_CONFIG_ROOT=$tmp/conf build -o "$tmp/f.img" 2>/dev/null || fail "build"
for img in "$tmp/e.img" "$tmp/f.img"; do
        "$foyer" ls "$img" | grep -E -q ' etc/crypttab$| etc/keys/| etc/cmdline.d/40-foyer-target.conf$|40-foyer-target-timeout' &&
                fail "$img has the tree's settings"
        [ "$(stat -c %a "$img")" = 644 ] || fail "$img mode $(stat -c %a "$img")"
done

echo "== keyscript= on the root's line fails the build, naming the line"
rm "$root/etc/crypttab"
printf '# Debian\n%s,keyscript=/lib/cryptsetup/scripts/passdev\n' "$crypttab_line" >"$root/etc/crypttab"
out=$tmp/g.img
expect_error "keyscript=" "$root/etc/crypttab:2: volume sda5_crypt: option keyscript=/lib/cryptsetup/scripts/passdev cannot be honoured" \
        build -o "$out"
echo "== keyscript= on a line the image does not take"
rm "$root/etc/crypttab"
printf '%s\nhome UUID=4c554b53-2d70-4000-8000-000000000052 none luks,keyscript=decrypt_keyctl\n' "$crypttab_line" \
        >"$root/etc/crypttab"
build -o "$tmp/h.img" 2>/dev/null || fail "a keyscript= on an unneeded line failed the build"
echo ok
