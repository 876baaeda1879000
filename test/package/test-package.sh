#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-package.sh SOURCE-ROOT OUTDIR
#
# foyer's Debian package as debian/ describes it: dpkg-buildpackage builds foyer_VERSION_ARCH.deb
# (build-deb.sh), lintian finds no error in it, and its control fields and files are the ones that
# make foyer the system's initrd generator: linux-initramfs-tool provided and conflicted with (so
# initramfs-tools or dracut goes), dracut-core conflicted with, the kernel hooks, update-initramfs, the kernel-install plugin, the
# update-initramfs trigger, and the maintainer scripts' diversion of systemd's initrd plugins.
set -euo pipefail
src=$1 out=$2
fail() { echo "FAIL: $*"; exit 1; }
command -v lintian >/dev/null || { echo "lintian missing (apt-get install lintian); skipping"; exit 77; }

rc=0
deb=$("$(dirname "$0")/build-deb.sh" "$src" "$out") || rc=$?
[[ $rc == 0 ]] || exit "$rc"
echo "== $deb"

echo "== lintian"
# Errors fail the test; warnings are shown.
lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v '^running with root privileges' | tee "$out/lintian.log" || true
grep -q '^E: ' "$out/lintian.log" && fail "lintian reports errors"

echo "== control fields"
field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == foyer ]] || fail "Package is $(field Package)"
for f in Provides Conflicts Replaces; do
        grep -qw linux-initramfs-tool <<<"$(field "$f")" || fail "$f does not name linux-initramfs-tool: $(field "$f")"
done
# dracut-core's /usr/bin/dracut would make dracut's kernel hook, a conffile left by `apt-get remove
# dracut`, build an image at each kernel installation (test-package-sid shows it).
grep -Eq "(^|, )dracut-core(,|$)" <<<"$(field Conflicts)" || fail "Conflicts does not name dracut-core: $(field Conflicts)"
for d in systemd udev kmod linux-base; do
        grep -Eq "(^|, )$d( |,|$)" <<<"$(field Depends)" || fail "Depends lacks $d: $(field Depends)"
done

echo "== files"
dpkg-deb -c "$deb" | awk '{ print $1, $6 }' >"$out/contents"
for f in ./etc/kernel/postinst.d/foyer ./etc/kernel/postrm.d/foyer ./usr/sbin/update-initramfs \
         ./usr/lib/kernel/install.d/50-foyer.install ./usr/bin/foyer; do
        grep -q "^-rwxr-xr-x $f\$" "$out/contents" || fail "$f is not in the package as an executable"
done
grep -q ' ./usr/lib/foyer/generators/foyer-root-generator$' "$out/contents" || fail "no generators in the package"
grep -Eq '/test-|-asan$' "$out/contents" && fail "test programs or sanitizer builds in the package"

echo "== maintainer scripts"
ctrl=$out/control
rm -rf "$ctrl" && dpkg-deb -e "$deb" "$ctrl"
grep -qx 'interest-noawait update-initramfs' "$ctrl/triggers" || fail "no interest-noawait update-initramfs trigger"
for f in /etc/kernel/postinst.d/foyer /etc/kernel/postrm.d/foyer; do
        grep -qx "$f" "$ctrl/conffiles" || fail "$f is not a conffile"
done
grep -q 'triggered)' "$ctrl/postinst" || fail "the postinst does not handle triggered"
for f in 85-initrd.install 55-initrd.install; do
        grep -q "$f" "$ctrl/preinst" || fail "the preinst does not divert $f"
        grep -q "$f" "$ctrl/postrm" || fail "the postrm does not put $f back"
done
echo ok
