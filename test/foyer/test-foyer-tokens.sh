#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Unlocking with TPM2, FIDO2 and PKCS#11 tokens (src/foyer/plan-tokens.c), on a --root tree made
# from the host's /usr (lib.sh's use_fake_kernel) with stand-ins for tpm2-tss's libraries (the host
# need not have them) and a p11-kit module configuration:
#   - a generic image takes all three: the libtss2 libraries systemd-cryptsetup dlopen()s (the TCTI
#     too, which no dlopen note names), libfido2, libp11-kit, libcryptsetup's three token plugins,
#     the fido_id rule and program, the PCR phase unit with its stock link, the module p11-kit names;
#   - without a p11-kit module configured, a generic image leaves PKCS#11 out (libp11-kit finds no
#     token without one), but pkcs11-uri= in --crypttab still takes it;
#   - without libtss2-tcti-device.so.0 a generic image leaves TPM2 out quietly, but a volume that
#     asks for it (tpm2-device= in --crypttab, or rd.luks.options= in --cmdline) fails the build
#     with one line naming the library and what asked;
#   - a FIDO2 option asks for FIDO2 only in a host-only image: test-foyer-hostonly.sh (the LUKS2
#     header's token).
# Usage: test-foyer-tokens.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator
[ -x /usr/lib/systemd/systemd-cryptsetup ] || skip "systemd-cryptsetup is not installed"
make_tmp test-foyer-tokens
use_fake_kernel
libdir=usr/lib/x86_64-linux-gnu
[ -e "/$libdir/cryptsetup/libcryptsetup-token-systemd-tpm2.so" ] || skip "no systemd token plugins in /$libdir/cryptsetup"
[ -e "/$libdir/libfido2.so.1" ] || skip "libfido2 is not installed (libfido2-1)"
[ -e "/$libdir/libp11-kit.so.0" ] || skip "p11-kit is not installed (libp11-kit0)"

# Stand-ins: a small real library of the host under each soname (the builder reads their ELF
# headers and dependencies, nothing else).
small=$(readlink -f "/$libdir/libcap.so.2")
for n in libtss2-esys.so.0 libtss2-rc.so.0 libtss2-mu.so.0 libtss2-tcti-device.so.0; do
        rm -f "$root/$libdir/$n"
        cp "$small" "$root/$libdir/$n"
done
mkdir -p "$root/usr/share/p11-kit/modules" "$root/$libdir/pkcs11"
printf 'module: foyer-test-pkcs11.so\ncritical: no\n' >"$root/usr/share/p11-kit/modules/foyer-test.module"
cp "$small" "$root/$libdir/pkcs11/foyer-test-pkcs11.so"

build() { "$foyer" build --root "$root" --kver "$kver" -c none "$@"; }
list() { "$foyer" ls "$1" | awk '{ print $3 }'; }

echo "== generic image: TPM2, FIDO2 and PKCS#11"
build -o "$tmp/all.img"
list "$tmp/all.img" >"$tmp/all.list"
for f in $libdir/libtss2-esys.so.0 $libdir/libtss2-rc.so.0 $libdir/libtss2-mu.so.0 $libdir/libtss2-tcti-device.so.0 \
         $libdir/cryptsetup/libcryptsetup-token-systemd-tpm2.so \
         $libdir/cryptsetup/libcryptsetup-token-systemd-fido2.so \
         $libdir/cryptsetup/libcryptsetup-token-systemd-pkcs11.so \
         $libdir/libfido2.so.1 $libdir/libp11-kit.so.0 \
         usr/lib/udev/rules.d/60-fido-id.rules usr/lib/udev/fido_id \
         usr/share/p11-kit/modules/foyer-test.module $libdir/pkcs11/foyer-test-pkcs11.so; do
        grep -qxF "$f" "$tmp/all.list" || fail "generic: missing /$f"
done
# systemd 252 has systemd-pcrphase, later versions run systemd-pcrextend from the same unit.
if [ -e "$root/usr/lib/systemd/system/systemd-pcrphase-initrd.service" ]; then
        grep -qx usr/lib/systemd/system/systemd-pcrphase-initrd.service "$tmp/all.list" || fail "generic: no PCR phase unit"
        grep -qx usr/lib/systemd/system/initrd.target.wants/systemd-pcrphase-initrd.service "$tmp/all.list" ||
                fail "generic: the PCR phase unit's stock link is missing"
        grep -Eqx 'usr/lib/systemd/systemd-pcr(phase|extend)' "$tmp/all.list" || fail "generic: the PCR phase unit's program is missing"
fi
# The plugins' own libraries come with them (libsystemd-shared, through their RUNPATH).
grep -q "^$libdir/systemd/libsystemd-shared-" "$tmp/all.list" || fail "generic: libsystemd-shared missing"

echo "== no p11-kit module configured: the generic image leaves PKCS#11 out, a volume that asks gets it"
mv "$root/usr/share/p11-kit/modules/foyer-test.module" "$tmp/foyer-test.module"
build -o "$tmp/nop11.img"
list "$tmp/nop11.img" >"$tmp/nop11.list"
grep -qxF "$libdir/libp11-kit.so.0" "$tmp/nop11.list" && fail "nop11: libp11-kit without a PKCS#11 module to load"
grep -q 'libcryptsetup-token-systemd-pkcs11' "$tmp/nop11.list" && fail "nop11: the PKCS#11 plugin without a PKCS#11 module"
grep -q 'libcryptsetup-token-systemd-fido2' "$tmp/nop11.list" || fail "nop11: FIDO2 went with PKCS#11"
grep -q 'libcryptsetup-token-systemd-tpm2' "$tmp/nop11.list" || fail "nop11: TPM2 went with PKCS#11"
printf 'root UUID=3f5ad593-4546-4a94-a374-bcfb68aa11f7 none pkcs11-uri=auto\n' >"$tmp/crypttab"
build --crypttab "$tmp/crypttab" -o "$tmp/p11asked.img"
list "$tmp/p11asked.img" | grep -qxF "$libdir/libp11-kit.so.0" || fail "p11asked: pkcs11-uri= in --crypttab without libp11-kit"
mv "$tmp/foyer-test.module" "$root/usr/share/p11-kit/modules/foyer-test.module"

echo "== no TCTI: the generic image leaves TPM2 out quietly"
rm "$root/$libdir/libtss2-tcti-device.so.0"
build -o "$tmp/notcti.img" 2>"$tmp/stderr"
cat "$tmp/stderr"
grep -qi tpm2 "$tmp/stderr" && fail "notcti: a message about TPM2 in a generic build nobody asked it of"
list "$tmp/notcti.img" >"$tmp/notcti.list"
grep -q 'libcryptsetup-token-systemd-tpm2' "$tmp/notcti.list" && fail "notcti: the TPM2 plugin without the TCTI"
grep -q 'libcryptsetup-token-systemd-fido2' "$tmp/notcti.list" || fail "notcti: FIDO2 went with TPM2"

out=$tmp/asked.img
printf 'root UUID=3f5ad593-4546-4a94-a374-bcfb68aa11f7 none tpm2-device=auto,discard\n' >"$tmp/crypttab"
expect_error "tpm2-device= in --crypttab without libtss2-tcti-device.so.0" \
        "the image's /etc/crypttab asks for TPM2 unlocking, but $root lacks libtss2-tcti-device.so.0 (Debian: " \
        build --crypttab "$tmp/crypttab" -o "$out"
expect_error "rd.luks.options= tpm2-device= in --cmdline without libtss2-tcti-device.so.0" \
        "tpm2-device= in rd.luks.options= of --cmdline asks for TPM2 unlocking, but .* lacks libtss2-tcti-device.so.0" \
        build --cmdline "rd.luks.options=3f5ad593-4546-4a94-a374-bcfb68aa11f7=discard,tpm2-device=auto" -o "$out"
echo "== rd.luks.options= naming no valid UUID asks for nothing: foyer-crypt-generator ignores it"
build --cmdline "rd.luks.options=3f5ad593=tpm2-device=auto" -o "$out" 2>"$tmp/stderr"
cat "$tmp/stderr"
grep -qF '"3f5ad593" in luks.options= is not a UUID' "$tmp/stderr" || fail "no warning about the UUID that is not one"
list "$out" | grep -q 'libcryptsetup-token-systemd-tpm2' && fail "baduuid: the TPM2 plugin without the TCTI"
rm "$root/$libdir/libtss2-rc.so.0"
expect_error "two libraries missing" "lacks libtss2-rc.so.0, libtss2-tcti-device.so.0 (Debian: " \
        build --cmdline "rd.luks.options=tpm2-device=/dev/tpmrm0" -o "$out"
echo "== a FIDO2 volume in a tree without TPM2 builds"
printf 'root UUID=3f5ad593-4546-4a94-a374-bcfb68aa11f7 none fido2-device=auto\n' >"$tmp/crypttab"
build --crypttab "$tmp/crypttab" -o "$tmp/fido.img"
list "$tmp/fido.img" | grep -q 'libcryptsetup-token-systemd-fido2' || fail "fido: no FIDO2 plugin"
echo ok
