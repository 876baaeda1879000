#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What root discovery needs is in a built image, and works there: foyer-gpt-auto-generator with its
# libraries (run inside the unpacked image: with a fake firmware tree it writes sysroot.mount for
# /dev/gpt-auto-root; its --root-discovered mode starts and refuses a stray argument), the udev rules
# that make /dev/gpt-auto-root (60-persistent-storage.rules runs the blkid builtin, 99-systemd.rules
# links it), the efivarfs module, systemd-growfs for the grow-fs flag, and not systemd's own
# systemd-gpt-auto-generator.
# Usage: test-foyer-gptauto.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator foyer-gpt-auto-generator
make_tmp test-foyer-gptauto
# The modules are not what is tested here: a fake kernel's will do.
use_fake_kernel

"$foyer" build --root "$root" --kver "$kver" -o "$tmp/a.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
mkdir "$tmp/root"
(cd "$tmp/root" && zstd -dcq "$tmp/a.img" | cpio -idm --quiet)
r=$tmp/root

for f in usr/lib/systemd/system-generators/foyer-gpt-auto-generator \
         usr/lib/udev/rules.d/60-persistent-storage.rules usr/lib/udev/rules.d/99-systemd.rules \
         usr/lib/systemd/systemd-growfs; do
        [ -e "$r/$f" ] || fail "missing /$f"
done
grep -q 'IMPORT{builtin}="blkid' "$r/usr/lib/udev/rules.d/60-persistent-storage.rules" || fail "blkid builtin not run"
grep -q 'gpt-auto-root' "$r/usr/lib/udev/rules.d/99-systemd.rules" || fail "99-systemd.rules without gpt-auto-root"
find "$r/usr/lib/modules/$kver" -name 'efivarfs.ko*' | grep -q . ||
        grep -q '/efivarfs.ko$' "/usr/lib/modules/$kver/modules.builtin" || fail "no efivarfs module"
[ ! -e "$r/usr/lib/systemd/system-generators/systemd-gpt-auto-generator" ] || fail "systemd's gpt-auto generator in the image"

# The generator runs inside the image with the image's libraries.
mkdir -p "$r/tmp/fw/firmware/efi/efivars" "$r/tmp/out"
{ printf '\x07\x00\x00\x00'; printf 'c12a7328-0000-4000-8000-00000000e5f0\0' | iconv -f UTF-8 -t UTF-16LE; } \
        >"$r/tmp/fw/firmware/efi/efivars/LoaderDevicePartUUID-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
env -i SYSTEMD_IN_INITRD=1 SYSTEMD_PROC_CMDLINE="rw" SYSTEMD_EFI_OPTIONS= FOYER_SYSFS=/tmp/fw \
        /usr/sbin/chroot "$r" /usr/lib/systemd/system-generators/foyer-gpt-auto-generator /tmp/out /tmp/out /tmp/out 2>"$tmp/gen.log" ||
        { cat "$tmp/gen.log"; fail "generator failed in the image"; }
grep -qx 'What=/dev/gpt-auto-root' "$r/tmp/out/sysroot.mount" || fail "no sysroot.mount for /dev/gpt-auto-root"
grep -qx 'Options=rw' "$r/tmp/out/sysroot.mount" || fail "sysroot.mount not rw"
[ -e "$r/tmp/out/foyer-gpt-auto-root.service" ] || fail "no foyer-gpt-auto-root.service"
exe=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$r/tmp/out/foyer-gpt-auto-root.service")
[ -x "$r$exe" ] || fail "foyer-gpt-auto-root.service runs $exe, which is not in the image"
if env -i /usr/sbin/chroot "$r" "$exe" --root-discovered stray 2>"$tmp/rd.log"; then
        fail "--root-discovered accepted a stray argument"
fi
grep -q "takes no further arguments" "$tmp/rd.log" || { cat "$tmp/rd.log"; fail "--root-discovered did not start"; }
echo "test-foyer-gptauto: ok"
