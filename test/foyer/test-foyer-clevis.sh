#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Clevis unlocking in a built image (src/foyer/plan-clevis.c, docs/foyer.md "Clevis and Tang"), on a
# --root tree made from the host's /usr (lib.sh's use_fake_kernel), which has clevis and clevis-luks
# (tools/packages); clevis-systemd's askpass units and script, and tpm2-tools for the tpm2 pin, are
# stand-ins written here (the host need not have them, and the builder only copies them):
#   - a tree without clevis-systemd gives an image without any of it: no clevis, jose, curl, bash,
#     askpass units, drop-in;
#   - with clevis-systemd: the askpass path and service units, the path linked into
#     cryptsetup.target.wants/, the askpass script, clevis's scripts and pins, jose, luksmeta,
#     cryptsetup, curl, systemd-reply-password, bash and every program the scripts run, and the tang
#     pin's drop-in ordering the service after network-online.target; foyer ls lists them;
#   - inside the unpacked image (chroot), clevis decrypts a JWE of the null pin and of the sss pin,
#     and "clevis luks list" and "clevis luks unlock -t" read a LUKS2 volume's clevis token: the
#     scripts, their interpreter and the programs they run are all there;
#   - a tree without the tang pin gives no curl and no drop-in; a tree with clevis-tpm2 and tpm2-tools
#     gives the tpm2 pin, the tpm2_* programs it runs and the device TCTI;
#   - --no-shell with clevis-systemd in the tree fails with one line naming Clevis.
# Usage: test-foyer-clevis.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator
[ -x /usr/lib/systemd/systemd-cryptsetup ] || skip "systemd-cryptsetup is not installed"
for p in clevis clevis-decrypt-tang clevis-luks-list jose luksmeta curl; do
        [ -x "/usr/bin/$p" ] || skip "/usr/bin/$p is not installed (packages clevis, clevis-luks)"
done
make_tmp test-foyer-clevis
use_fake_kernel
unit=usr/lib/systemd/system
libdir=usr/lib/x86_64-linux-gnu
out=$tmp/x.img

build() { "$foyer" build --root "$root" --kver "$kver" -c none "$@"; }
list() { "$foyer" ls "$1" | awk '{ print $3 }'; }
unpack() {      # unpack IMAGE DIR
        mkdir "$2"
        (cd "$2" && cpio -idm --quiet <"$1")
}

# What the image must hold for Clevis (with the tang pin), read from clevis 19's scripts: the
# askpass loop, clevis-luks-common-functions, clevis luks list, clevis decrypt and the pins.
clevis_files="$unit/clevis-luks-askpass.path $unit/clevis-luks-askpass.service
        $unit/cryptsetup.target.wants/clevis-luks-askpass.path usr/libexec/clevis-luks-askpass
        usr/bin/clevis usr/bin/clevis-decrypt usr/bin/clevis-decrypt-null usr/bin/clevis-decrypt-sss
        usr/bin/clevis-luks-common-functions usr/bin/clevis-luks-list usr/bin/clevis-luks-unlock
        usr/bin/jose usr/bin/luksmeta usr/sbin/cryptsetup usr/lib/systemd/systemd-reply-password
        usr/bin/bash usr/bin/cat usr/bin/grep usr/bin/sed usr/bin/cut usr/bin/tr usr/bin/ls
        usr/bin/sleep usr/bin/mkdir usr/bin/mktemp usr/bin/rm"
tang_files="usr/bin/clevis-decrypt-tang usr/bin/curl $unit/clevis-luks-askpass.service.d/10-foyer-tang.conf"
tpm2_files="usr/bin/clevis-decrypt-tpm2 usr/bin/tpm2_createprimary usr/bin/tpm2_flushcontext usr/bin/tpm2_load
        usr/bin/tpm2_unseal $libdir/libtss2-tcti-device.so.0"

echo "== a tree without clevis-systemd"
build -o "$tmp/plain.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
list "$tmp/plain.img" >"$tmp/plain.ls"
grep -qx usr/lib/systemd/systemd-cryptsetup "$tmp/plain.ls" || fail "the image has no systemd-cryptsetup: nothing to compare with"
# Only what is Clevis's own: the programs its scripts share with the rest of the image (sed, cat, ...)
# may be there for other reasons.
for f in $unit/clevis-luks-askpass.path $unit/clevis-luks-askpass.service usr/libexec/clevis-luks-askpass \
         usr/bin/clevis usr/bin/clevis-decrypt usr/bin/clevis-luks-common-functions usr/bin/jose usr/bin/luksmeta \
         usr/bin/curl usr/bin/bash usr/lib/systemd/systemd-reply-password $tang_files; do
        if grep -qx "$f" "$tmp/plain.ls"; then fail "/$f is in an image of a tree without clevis-systemd"; fi
done
if grep -q 'clevis' "$tmp/plain.ls"; then fail "Clevis files in an image of a tree without clevis-systemd: $(grep clevis "$tmp/plain.ls")"; fi

echo "== a tree with clevis-systemd (stand-ins of Debian's clevis 19 files)"
mkdir -p "$root/usr/libexec"
# The builder copies these; only ExecStart= is read (the service's program must be in the image).
printf '%s\n' '[Unit]' 'Description=Forward Password Requests to Clevis Directory Watch' 'DefaultDependencies=no' \
        'Before=cryptsetup-pre.target' 'Wants=cryptsetup-pre.target' '' '[Path]' \
        'DirectoryNotEmpty=/run/systemd/ask-password' 'MakeDirectory=yes' '' '[Install]' \
        'WantedBy=cryptsetup.target' >"$root/$unit/clevis-luks-askpass.path"
printf '%s\n' '[Unit]' 'Description=Forward Password Requests to Clevis' 'DefaultDependencies=no' '' '[Service]' \
        'Type=simple' 'ExecStart=/usr/libexec/clevis-luks-askpass -l' >"$root/$unit/clevis-luks-askpass.service"
printf '#!/bin/bash\n. clevis-luks-common-functions\n' >"$root/usr/libexec/clevis-luks-askpass"
chmod 0755 "$root/usr/libexec/clevis-luks-askpass"
build -o "$out" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
list "$out" >"$tmp/clevis.ls"
for f in $clevis_files $tang_files; do
        grep -qx "$f" "$tmp/clevis.ls" || fail "foyer ls: /$f is not in the image"
done
# The ELF programs bring their libraries (jose's libjose, curl's libcurl).
grep -q "^$libdir/libjose\.so\.0" "$tmp/clevis.ls" || fail "no libjose.so.0 in the image"
grep -q "^$libdir/libcurl\.so\.4" "$tmp/clevis.ls" || fail "no libcurl.so.4 in the image"
unpack "$out" "$tmp/c"
[ "$(readlink "$tmp/c/$unit/cryptsetup.target.wants/clevis-luks-askpass.path")" = ../clevis-luks-askpass.path ] ||
        fail "cryptsetup.target.wants/clevis-luks-askpass.path -> $(readlink "$tmp/c/$unit/cryptsetup.target.wants/clevis-luks-askpass.path")"
dropin=$tmp/c/$unit/clevis-luks-askpass.service.d/10-foyer-tang.conf
grep -qx 'After=network-online.target' "$dropin" || fail "the tang drop-in does not order the service after network-online.target"
grep -qx 'Wants=network-online.target' "$dropin" || fail "the tang drop-in does not want network-online.target"
if grep -q '^Before=\|^Requires=\|cryptsetup' "$dropin"; then fail "the tang drop-in orders more than the service: $(cat "$dropin")"; fi
[ -e "$tmp/c/$unit/network-online.target" ] || fail "no network-online.target in the image"

echo "== clevis runs inside the image"
# chroot with nothing of the host but /proc and /dev, which the initrd has too (bash's <(...) opens
# /dev/fd/N), mounted in a mount namespace of its own that goes with the command; PATH as systemd
# gives services.
command -v unshare >/dev/null || skip "unshare is not installed (util-linux)"
# shellcheck disable=SC2016 # expanded by the inner sh, with the image as $0
in_image() {
        unshare --mount --propagation private -- /bin/sh -c 'mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" &&
                exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin /usr/sbin/chroot "$0" "$@"' "$tmp/c" "$@"
}
printf 'foyer-clevis-7' | clevis encrypt null '{}' >"$tmp/c/null.jwe" 2>/dev/null || fail "clevis encrypt null on the host"
[ "$(in_image /usr/bin/clevis decrypt <"$tmp/c/null.jwe" 2>/dev/null)" = foyer-clevis-7 ] ||
        fail "clevis decrypt (null pin) in the image: $(in_image /usr/bin/clevis decrypt <"$tmp/c/null.jwe" 2>&1)"
printf 'foyer-clevis-8' | clevis encrypt sss '{"t":1,"pins":{"null":[{}]}}' >"$tmp/c/sss.jwe" 2>/dev/null ||
        fail "clevis encrypt sss on the host"
[ "$(in_image /usr/bin/clevis decrypt <"$tmp/c/sss.jwe" 2>/dev/null)" = foyer-clevis-8 ] ||
        fail "clevis decrypt (sss pin) in the image: $(in_image /usr/bin/clevis decrypt <"$tmp/c/sss.jwe" 2>&1)"
# A LUKS2 volume bound with the null pin: what the askpass loop reads (clevis_luks_unlock_device).
truncate -s 32M "$tmp/c/v.img"
printf 'foyer-luks-pass' >"$tmp/pass"
cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file "$tmp/pass" \
        "$tmp/c/v.img" || fail "cryptsetup luksFormat"
clevis luks bind -y -k "$tmp/pass" -d "$tmp/c/v.img" null '{}' </dev/null >"$tmp/bind.log" 2>&1 ||
        { cat "$tmp/bind.log"; fail "clevis luks bind (null pin) on the host"; }
in_image /usr/bin/clevis luks list -d /v.img >"$tmp/list.out" 2>&1 || { cat "$tmp/list.out"; fail "clevis luks list in the image"; }
grep -q "^1: .*null" "$tmp/list.out" || { cat "$tmp/list.out"; fail "clevis luks list in the image does not show the binding"; }
in_image /usr/bin/clevis luks unlock -d /v.img -t 1 >"$tmp/unlock.out" 2>&1 ||
        { cat "$tmp/unlock.out"; fail "clevis luks unlock -t 1 in the image"; }

echo "== --no-shell with clevis-systemd in the tree"
expect_error "--no-shell with Clevis" 'no-shell.*Clevis' build --no-shell -o "$out.noshell"

echo "== a tree without the tang pin"
mv "$root/usr/bin/clevis-decrypt-tang" "$tmp/clevis-decrypt-tang"
build -o "$tmp/notang.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
list "$tmp/notang.img" >"$tmp/notang.ls"
grep -qx usr/bin/clevis "$tmp/notang.ls" || fail "no clevis in the image of a tree without the tang pin"
for f in $tang_files; do
        if grep -qx "$f" "$tmp/notang.ls"; then fail "/$f is in an image of a tree without the tang pin"; fi
done
mv "$tmp/clevis-decrypt-tang" "$root/usr/bin/clevis-decrypt-tang"

echo "== a tree with clevis-tpm2 and tpm2-tools (stand-ins)"
printf '#!/bin/bash\ntpm2_createprimary -v\n' >"$root/usr/bin/clevis-decrypt-tpm2"
chmod 0755 "$root/usr/bin/clevis-decrypt-tpm2"
# tpm2-tools 5: one program under each name; a small ELF program of the host stands in for it.
cp /usr/bin/true "$root/usr/bin/tpm2"
for t in createprimary flushcontext load unseal pcrread; do ln -sf tpm2 "$root/usr/bin/tpm2_$t"; done
rm -f "$root/$libdir/libtss2-tcti-device.so.0"
cp "$(readlink -f "/$libdir/libcap.so.2")" "$root/$libdir/libtss2-tcti-device.so.0"
build -o "$tmp/tpm2.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
list "$tmp/tpm2.img" >"$tmp/tpm2.ls"
for f in $tpm2_files usr/bin/tpm2; do
        grep -qx "$f" "$tmp/tpm2.ls" || fail "foyer ls: /$f is not in the image of a tree with the tpm2 pin"
done
# (The TCTI may be there without the pin: plan-tokens.c's TPM2 unlocking takes it too.)
for f in $tpm2_files; do
        [ "$f" != "$libdir/libtss2-tcti-device.so.0" ] || continue
        if grep -qx "$f" "$tmp/clevis.ls"; then fail "/$f is in the image of a tree without the tpm2 pin"; fi
done
echo ok
