#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What foyer build adds for LUKS: systemd-cryptsetup and its libraries, the tools, units, rules
# and modules; --crypttab (Crypttab=) as /etc/crypttab; key files at mode 0400, from
# --add-key-file, from --add-file when the crypttab, rd.luks.key= in --cmdline or
# /etc/cryptsetup-keys.d/ names them; an image holding one is written 0600 with a warning naming
# them; bad input fails with one clear error and no output.
# Usage: test-foyer-crypt.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator
require_kernel
[ -x /usr/lib/systemd/systemd-cryptsetup ] || skip "systemd-cryptsetup is not installed"
make_tmp test-foyer-crypt
build() { "$foyer" build --kver "$kver" -c none "$@"; }
# mode_of IMAGE PATH: the mode column of foyer ls for PATH
mode_of() { "$foyer" ls "$1" | awk -v p="$2" '$3 == p { print $1 }'; }

echo "== no crypttab, no keys: what unlocking needs, image 0644, no warning"
build -o "$tmp/plain.img" 2>"$tmp/stderr"
cat "$tmp/stderr"
[ "$(stat -c %a "$tmp/plain.img")" = 644 ] || fail "plain image mode $(stat -c %a "$tmp/plain.img")"
grep -qi "key file" "$tmp/stderr" && fail "warning without key files"
"$foyer" ls "$tmp/plain.img" | awk '{ print $3 }' >"$tmp/plain.list"
for f in usr/lib/systemd/systemd-cryptsetup usr/sbin/cryptsetup usr/sbin/dmsetup \
         usr/bin/systemd-ask-password usr/bin/systemd-tty-ask-password-agent \
         usr/lib/systemd/system/cryptsetup.target usr/lib/systemd/system/cryptsetup-pre.target \
         usr/lib/systemd/system/systemd-ask-password-console.path \
         usr/lib/systemd/system/systemd-ask-password-console.service \
         'usr/lib/systemd/system/system-systemd\x2dcryptsetup.slice' \
         usr/lib/systemd/system/sysinit.target.wants/cryptsetup.target \
         usr/lib/systemd/system/sysinit.target.wants/systemd-ask-password-console.path \
         usr/lib/udev/rules.d/55-dm.rules usr/lib/udev/rules.d/60-persistent-storage-dm.rules \
         usr/lib/udev/rules.d/95-dm-notify.rules usr/lib/udev/rules.d/11-foyer-dm-persist.rules \
         usr/lib/systemd/system-generators/foyer-crypt-generator; do
        grep -qxF "$f" "$tmp/plain.list" || fail "missing /$f"
done
grep -q '^usr/lib/x86_64-linux-gnu/libcryptsetup\.so\.12' "$tmp/plain.list" || fail "libcryptsetup not resolved"
grep -q '^usr/lib/x86_64-linux-gnu/libdevmapper\.so' "$tmp/plain.list" || fail "libdevmapper not resolved"
grep -qx etc/crypttab "$tmp/plain.list" && fail "/etc/crypttab without --crypttab"
# dm-crypt and the cipher modules of aes-xts-plain64, unless the kernel has them built in
for mod in dm-crypt dm-mod xts algif_skcipher; do
        if ! grep -q "/$mod\.ko" "/usr/lib/modules/$kver/modules.builtin"; then
                grep -q "/$mod\.ko" "$tmp/plain.list" || fail "module $mod missing"
        fi
done
mkdir "$tmp/root"
(cd "$tmp/root" && cpio -idm --quiet <"$tmp/plain.img")
for cmd in "cryptsetup --version" "dmsetup --version" "/usr/lib/systemd/systemd-cryptsetup --help"; do
        # shellcheck disable=SC2086 # $cmd is a command and its arguments, split on purpose
        chroot "$tmp/root" $cmd >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "chroot: $cmd"; }
done
grep -q 'db_persist' "$tmp/root/usr/lib/udev/rules.d/11-foyer-dm-persist.rules" || fail "dm rule"
chroot "$tmp/root" modprobe -S "$kver" -n -v dm_crypt | grep -q 'dm-crypt\.ko' || fail "modprobe dm_crypt"
rm -rf "$tmp/root"

echo "== --crypttab and a key file it names, added with --add-file"
printf '# test crypttab\nroot UUID=3f5ad593-4546-4a94-a374-bcfb68aa11f7 /etc/keys/root.key luks\nswap /dev/sdb2 /dev/urandom swap\n' \
        >"$tmp/crypttab"
printf 'root-key-bytes' >"$tmp/root.key"
printf 'data-key-bytes' >"$tmp/data.key"
printf 'cmdline-key-bytes' >"$tmp/cmdline.key"
printf 'named-key-bytes' >"$tmp/named.key"
printf 'not-a-key' >"$tmp/other"
chmod 0644 "$tmp"/*.key "$tmp/other"
build -o "$tmp/keys.img" --crypttab "$tmp/crypttab" \
        --add-file "$tmp/root.key:/etc/keys/root.key" \
        --add-key-file "$tmp/data.key:/etc/keys/data.key" \
        --cmdline "rd.luks.key=3f5ad593-4546-4a94-a374-bcfb68aa11f7=/etc/keys/cmdline.key rd.luks.key=/other:LABEL=usb" \
        --add-file "$tmp/cmdline.key:/etc/keys/cmdline.key" \
        --add-file "$tmp/named.key:/etc/cryptsetup-keys.d/root.key" \
        --add-file "$tmp/other:/etc/keys/other" 2>"$tmp/stderr"
cat "$tmp/stderr"
[ "$(stat -c %a "$tmp/keys.img")" = 600 ] || fail "image with keys has mode $(stat -c %a "$tmp/keys.img")"
for k in /etc/keys/root.key /etc/keys/data.key /etc/keys/cmdline.key /etc/cryptsetup-keys.d/root.key; do
        [ "$(mode_of "$tmp/keys.img" "${k#/}")" = "-r--------" ] ||
                fail "$k has mode $(mode_of "$tmp/keys.img" "${k#/}")"
        grep "warning\|holds key files" "$tmp/stderr" | grep -qF "$k" || fail "warning does not name $k"
done
[ "$(mode_of "$tmp/keys.img" etc/keys/other)" = "-rw-r--r--" ] || fail "a file no one names as a key became one"
grep -F "holds key files" "$tmp/stderr" | grep -qF /etc/keys/other && fail "warning names a non-key"
[ "$(grep -c 'holds key files' "$tmp/stderr")" -eq 1 ] || fail "expected one warning about key files"
mkdir "$tmp/root"
(cd "$tmp/root" && cpio -idm --quiet <"$tmp/keys.img")
cmp "$tmp/crypttab" "$tmp/root/etc/crypttab" || fail "/etc/crypttab differs from --crypttab"
cmp "$tmp/root.key" "$tmp/root/etc/keys/root.key" || fail "key content"
rm -rf "$tmp/root"

echo "== rd.luks.key= naming no valid UUID: the generator ignores it, its file is kept secret still"
build -o "$tmp/baduuid.img" --cmdline "rd.luks.key=not-a-uuid=/etc/keys/other" \
        --add-file "$tmp/other:/etc/keys/other" 2>"$tmp/stderr"
cat "$tmp/stderr"
grep -qF '"not-a-uuid" in luks.key= is not a UUID' "$tmp/stderr" || fail "no warning about the UUID that is not one"
[ "$(mode_of "$tmp/baduuid.img" etc/keys/other)" = "-r--------" ] || fail "the key of a bad UUID is not kept secret"

echo "== a crypttab naming a key file the image lacks: warning, no key, image 0644"
build -o "$tmp/nokey.img" --crypttab "$tmp/crypttab" 2>"$tmp/stderr"
cat "$tmp/stderr"
grep -q "/etc/keys/root.key.*does not hold it" "$tmp/stderr" || fail "no warning about the missing key file"
[ "$(stat -c %a "$tmp/nokey.img")" = 644 ] || fail "image without keys has mode $(stat -c %a "$tmp/nokey.img")"

echo "== Crypttab= and AddKeyFiles= in foyer.conf"
mkdir -p "$tmp/conf/etc/foyer"
printf '[Build]\nCrypttab=%s\nAddKeyFiles=%s:/etc/keys/root.key\n' "$tmp/crypttab" "$tmp/root.key" \
        >"$tmp/conf/etc/foyer/foyer.conf"
FOYER_CONFIG_ROOT="$tmp/conf" build -o "$tmp/conf.img" 2>"$tmp/stderr"
cat "$tmp/stderr"
[ "$(stat -c %a "$tmp/conf.img")" = 600 ] || fail "Crypttab=/AddKeyFiles= image mode"
[ "$(mode_of "$tmp/conf.img" etc/keys/root.key)" = "-r--------" ] || fail "AddKeyFiles= mode"
[ -n "$(mode_of "$tmp/conf.img" etc/crypttab)" ] || fail "Crypttab= not installed"
rm -f "$tmp"/*.img

out=$tmp/out.img
expect_error "missing crypttab" "crypttab $tmp/no-such-crypttab: No such file" \
        build -o "$out" --crypttab "$tmp/no-such-crypttab"
expect_error "crypttab is a directory" "crypttab $tmp: not a regular file" build -o "$out" --crypttab "$tmp"
expect_error "missing key file" "add-key-file $tmp/no.key.*No such file" build -o "$out" --add-key-file "$tmp/no.key"
expect_error "relative key destination" "destination must be absolute" \
        build -o "$out" --add-key-file "$tmp/root.key:etc/root.key"
expect_error "key file is a directory" "not a regular file" build -o "$out" --add-key-file "$tmp/conf:/etc/keys"
expect_error "key file clashes with --crypttab" "conflicts" \
        build -o "$out" --crypttab "$tmp/crypttab" --add-key-file "$tmp/root.key:/etc/crypttab"

echo "all foyer crypt checks passed"
