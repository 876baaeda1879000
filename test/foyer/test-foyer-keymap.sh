#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The console keymap (plan-keymap.c, keymap.c): foyer build --root of a tree whose
# /etc/default/keyboard says XKBLAYOUT=de gives an image with the compiled de keymap (the Y key
# types z), /etc/vconsole.conf naming it, loadkeys and foyer-vconsole-generator; --add-keymap adds
# more; a layout ckbcomp cannot compile gives a warning naming it and its file, and the build goes
# on without it; vconsole.conf's KEYMAP= wins over default/keyboard; --keymap over both;
# --no-target-settings reads neither; the plain us layout alone is the kernel's and adds nothing.
# Usage: test-foyer-keymap.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator foyer-vconsole-generator
command -v ckbcomp >/dev/null || skip "ckbcomp is not installed (console-setup)"
[ -x /usr/bin/loadkeys ] || skip "loadkeys is not installed (kbd)"
make_tmp test-foyer-keymap
[ -z "${KEEP:-}" ] || trap - EXIT
use_fake_kernel

build() { "$foyer" build --root "$root" --kver "$kver" -c none "$@"; }
extract() { cpio -i --quiet --to-stdout "${2#/}" < "$1"; }
listing() { "$foyer" ls "$1" 2>/dev/null | awk 'NF >= 3 { print "/" $3 }'; }
dir=/usr/share/keymaps/foyer

rm -f "$root/etc/vconsole.conf" "$root/etc/default/keyboard"
mkdir -p "$root/etc/default"
printf 'XKBMODEL="pc105"\nXKBLAYOUT="de"\nXKBVARIANT=""\nXKBOPTIONS=""\n\nBACKSPACE="guess"\n' \
        >"$root/etc/default/keyboard"

# The tree's layout, and two added ones, one of which does not exist.
build -o "$tmp/de.img" --add-keymap us --add-keymap nosuchlayout 2>"$tmp/de.log" ||
        { cat "$tmp/de.log" >&2; fail "the build with a layout that cannot be compiled failed"; }
[ "$(extract "$tmp/de.img" /etc/vconsole.conf)" = "KEYMAP=de" ] || fail "vconsole.conf does not say KEYMAP=de"
# de swaps Y and Z: keycode 21 (the key right of T) types z, keycode 44 (left of X) y.
extract "$tmp/de.img" "$dir/de.map" | grep -Eq '^keycode +21 = \+?U\+007a' ||
        fail "the de keymap does not type z on keycode 21"
extract "$tmp/de.img" "$dir/us.map" | grep -Eq '^keycode +21 = \+?U\+0079' ||
        fail "the us keymap does not type y on keycode 21"
listing "$tmp/de.img" >"$tmp/de.list"
for p in /usr/bin/loadkeys /usr/lib/systemd/system-generators/foyer-vconsole-generator; do
        grep -qx "$p" "$tmp/de.list" || fail "$p is not in the image"
done
grep -q "nosuchlayout" "$tmp/de.list" && fail "the layout that cannot be compiled is in the image"
grep -q 'Keymap nosuchlayout .*from AddKeymaps=.* cannot be compiled' "$tmp/de.log" ||
        { cat "$tmp/de.log" >&2; fail "no warning naming the layout that cannot be compiled and where it came from"; }

# vconsole.conf's KEYMAP= (the kbd name) wins over default/keyboard; a bad one is warned about,
# naming the file, and the image goes without a keymap.
printf 'KEYMAP=xx-nosuch\n' >"$root/etc/vconsole.conf"
build -o "$tmp/bad.img" 2>"$tmp/bad.log" || { cat "$tmp/bad.log" >&2; fail "the build with a bad layout failed"; }
grep -q 'Keymap xx-nosuch .*from /etc/vconsole.conf.* cannot be compiled' "$tmp/bad.log" ||
        { cat "$tmp/bad.log" >&2; fail "no warning naming the bad layout and /etc/vconsole.conf"; }
listing "$tmp/bad.img" >"$tmp/bad.list"
grep -Eq "^/etc/vconsole.conf$|^$dir/" "$tmp/bad.list" && fail "an image without a keymap has vconsole.conf or a keymap"

# --keymap wins over the tree's; --no-target-settings reads nothing of the tree.
build -o "$tmp/fr.img" --keymap fr 2>"$tmp/fr.log" || { cat "$tmp/fr.log" >&2; fail "the --keymap build failed"; }
[ "$(extract "$tmp/fr.img" /etc/vconsole.conf)" = "KEYMAP=fr" ] || fail "--keymap fr: vconsole.conf does not say KEYMAP=fr"
extract "$tmp/fr.img" "$dir/fr.map" | grep -Eq '^keycode +16 = \+?U\+0061' || fail "the fr keymap does not type a on keycode 16"
build -o "$tmp/none.img" --no-target-settings 2>"$tmp/none.log" || { cat "$tmp/none.log" >&2; fail "the build failed"; }
listing "$tmp/none.img" >"$tmp/none.list"
grep -Eq "^/etc/vconsole.conf$|^$dir/|^/usr/bin/loadkeys$" "$tmp/none.list" &&
        fail "--no-target-settings: the image holds the tree's keymap"

# The plain US layout is the kernel's own keymap: alone, it puts nothing in the image (no keymap, no
# loadkeys, no vconsole.conf); a US variant is a layout of its own and is compiled.
rm -f "$root/etc/vconsole.conf"
printf 'XKBMODEL="pc105"\nXKBLAYOUT="us"\nXKBVARIANT=""\nXKBOPTIONS=""\n' >"$root/etc/default/keyboard"
build -o "$tmp/us.img" 2>"$tmp/us.log" || { cat "$tmp/us.log" >&2; fail "the build with the us layout failed"; }
listing "$tmp/us.img" >"$tmp/us.list"
grep -Eq "^/etc/vconsole.conf$|^$dir/|^/usr/bin/loadkeys$" "$tmp/us.list" &&
        fail "the plain us layout put a keymap, vconsole.conf or loadkeys into the image"
printf 'XKBMODEL="pc105"\nXKBLAYOUT="us"\nXKBVARIANT="dvorak"\nXKBOPTIONS=""\n' >"$root/etc/default/keyboard"
build -o "$tmp/dvorak.img" 2>"$tmp/dvorak.log" || { cat "$tmp/dvorak.log" >&2; fail "the build with us dvorak failed"; }
listing "$tmp/dvorak.img" >"$tmp/dvorak.list"
for p in /usr/bin/loadkeys /etc/vconsole.conf; do
        grep -qx "$p" "$tmp/dvorak.list" || fail "the us dvorak layout is not in the image: no $p"
done
echo "PASS: test-foyer-keymap"
