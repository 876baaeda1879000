#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kernel-install add with foyer's plugin and systemd's 90-loaderentry.install, into a throwaway
# boot directory (BOOT_ROOT, KERNEL_INSTALL_CONF_ROOT and MACHINE_ID point into a temporary
# directory; the host's /boot and /etc/kernel are not used): the entry's initrd is foyer's, as
# foyer ls shows. With another initrd generator configured, the plugin stays out of the way; with
# layout=uki and uki_generator=foyer (254's variables, set by hand here) it also stages uki.efi.
# With layout=bls the plugin writes the entry's initrd itself, so an image with a key file stays
# 0600 there (90-loaderentry copies staged initrds with 0644). The plugins run are the plugin and
# 90-loaderentry, as on a system with foyer's package, which diverts Debian's 85-initrd.install.
# Usage: test-kernel-install.sh FOYER GENERATOR-DIR UNIT-DIR PLUGIN
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
plugin=$(realpath "$4")
loaderentry=/usr/lib/kernel/install.d/90-loaderentry.install

# shellcheck disable=SC2015 # skips when either is missing
command -v kernel-install >/dev/null && [[ -x $loaderentry ]] ||
        { echo "kernel-install or $loaderentry missing (package systemd); skipping"; exit 77; }
compgen -G "$FOYER_GENERATOR_DIR/foyer-*" >/dev/null || { echo "no generators built; skipping"; exit 77; }
kver=
for d in /usr/lib/modules/*/; do
        [[ -e $d/modules.order && -r /boot/vmlinuz-$(basename "$d") ]] && kver=$(basename "$d")
done
[[ -n $kver ]] || { echo "no kernel with modules and image installed; skipping"; exit 77; }

tmp=$(mktemp -d /tmp/test-kernel-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

machine_id=0123456789abcdef0123456789abcdef
setup() {       # install.conf lines...
        rm -rf "${tmp:?}/boot" "$tmp/conf"
        mkdir -p "$tmp/boot/$machine_id" "$tmp/conf"
        printf '%s\n' "$@" > "$tmp/conf/install.conf"
        echo "root=PARTUUID=00000000-0000-0000-0000-000000000001 rw" > "$tmp/conf/cmdline"
}
run_kernel_install() {
        BOOT_ROOT=$tmp/boot KERNEL_INSTALL_CONF_ROOT=$tmp/conf MACHINE_ID=$machine_id \
        KERNEL_INSTALL_PLUGINS="$plugin $loaderentry" FOYER=$foyer \
                kernel-install "$@" add "$kver" "/boot/vmlinuz-$kver"
}

echo "== initrd_generator=foyer, layout=bls"
setup layout=bls initrd_generator=foyer
run_kernel_install --verbose
entry=$tmp/boot/loader/entries/$machine_id-$kver.conf
[[ -f $entry ]] || fail "no entry $entry"
grep -Eq "^initrd +(.*)?/$machine_id/$kver/initrd$" "$entry" || { cat "$entry"; fail "the entry names no initrd"; }
[[ $(grep -c '^initrd' "$entry") == 1 ]] || fail "more than one initrd in the entry"
"$foyer" ls "$tmp/boot/$machine_id/$kver/initrd" > "$tmp/ls"
grep -q ' usr/lib/systemd/systemd$' "$tmp/ls" || fail "the entry's initrd has no systemd"
grep -q ' etc/initrd-release$' "$tmp/ls" || fail "the entry's initrd is not a foyer image"
grep -q ' usr/lib/systemd/system-generators/foyer-' "$tmp/ls" || fail "no foyer generator in the initrd"

[[ $(stat -c %a "$tmp/boot/$machine_id/$kver/initrd") == 644 ]] ||
        fail "the entry's initrd without key files has mode $(stat -c %a "$tmp/boot/$machine_id/$kver/initrd")"

echo "== layout=bls with a key file: the entry's initrd stays 0600"
setup layout=bls initrd_generator=foyer
head -c 32 /dev/urandom > "$tmp/bls.key"
FOYER_INSTALL_ARGS="--add-key-file $tmp/bls.key:/etc/keys/bls.key" run_kernel_install 2>/dev/null
[[ $(grep -c '^initrd' "$entry") == 1 ]] || { cat "$entry"; fail "not exactly one initrd in the entry"; }
[[ $(stat -c %a "$tmp/boot/$machine_id/$kver/initrd") == 600 ]] ||
        fail "the entry's initrd with a key file has mode $(stat -c %a "$tmp/boot/$machine_id/$kver/initrd")"
grep -q ' etc/keys/bls.key$' <("$foyer" ls "$tmp/boot/$machine_id/$kver/initrd" 2>/dev/null) || fail "the key is not in the entry's initrd"
[[ -z $(find "$tmp/boot" -name '.#*') ]] || fail "a temporary file was left in the entry directory"

echo "== no initrd_generator configured: foyer is used"
setup layout=bls
run_kernel_install
[[ -f $tmp/boot/$machine_id/$kver/initrd ]] || fail "no initrd without initrd_generator="

echo "== initrd_generator=dracut: the plugin does nothing"
setup layout=bls initrd_generator=dracut
run_kernel_install
[[ ! -e $tmp/boot/$machine_id/$kver/initrd ]] || fail "the plugin built an initrd for another generator"
grep -q '^initrd' "$tmp/boot/loader/entries/$machine_id-$kver.conf" && fail "the entry has an initrd"

echo "== layout=uki, uki_generator=foyer: the plugin stages uki.efi"
stage=$tmp/stage
mkdir -p "$stage"
KERNEL_INSTALL_STAGING_AREA=$stage KERNEL_INSTALL_LAYOUT=uki KERNEL_INSTALL_UKI_GENERATOR=foyer \
KERNEL_INSTALL_CONF_ROOT=$tmp/conf KERNEL_INSTALL_INITRD_GENERATOR=foyer FOYER=$foyer \
        "$plugin" add "$kver" "$tmp/entry" "/boot/vmlinuz-$kver"
[[ -s $stage/initrd && -s $stage/uki.efi ]] || fail "no initrd and uki.efi in the staging area"
"$foyer" ls "$stage/uki.efi" > "$tmp/ls"
grep -q '^  \.cmdline .*"root=PARTUUID=00000000-0000-0000-0000-000000000001 rw"$' "$tmp/ls" ||
        { head -20 "$tmp/ls"; fail "uki.efi has not the configured command line"; }
grep -q ' etc/initrd-release$' "$tmp/ls" || fail "uki.efi's initrd is not foyer's"

[[ $(stat -c %a "$stage/uki.efi") == 644 ]] || fail "uki.efi without key files has mode $(stat -c %a "$stage/uki.efi")"

echo "== layout=uki with a key file: initrd and uki.efi are 0600"
rm -rf "$stage" && mkdir "$stage"
head -c 32 /dev/urandom > "$tmp/data.key"
KERNEL_INSTALL_STAGING_AREA=$stage KERNEL_INSTALL_LAYOUT=uki KERNEL_INSTALL_UKI_GENERATOR=foyer \
KERNEL_INSTALL_CONF_ROOT=$tmp/conf KERNEL_INSTALL_INITRD_GENERATOR=foyer FOYER=$foyer \
FOYER_INSTALL_ARGS="--add-key-file $tmp/data.key:/etc/keys/data.key" \
        "$plugin" add "$kver" "$tmp/entry" "/boot/vmlinuz-$kver" 2>/dev/null
for f in initrd uki.efi; do
        [[ $(stat -c %a "$stage/$f") == 600 ]] || fail "$f with a key file has mode $(stat -c %a "$stage/$f")"
done
grep -q ' etc/keys/data.key$' <("$foyer" ls "$stage/uki.efi") || fail "the key is not in uki.efi"

echo "== initrds given on the command line: the plugin does nothing"
rm -rf "$stage" && mkdir "$stage"
KERNEL_INSTALL_STAGING_AREA=$stage FOYER=$foyer "$plugin" add "$kver" "$tmp/entry" "/boot/vmlinuz-$kver" /boot/some-initrd
[[ -z $(ls -A "$stage") ]] || fail "the plugin staged something despite explicit initrds"
echo ok
