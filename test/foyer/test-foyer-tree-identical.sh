#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer build --root TREE of a Debian tree of another systemd than the host's (trixie: 257) builds,
# carries that systemd (its libsystemd-shared, systemd-executor from 255 on, systemd-cryptsetup),
# and every file it copies from the tree is byte-identical to the tree's: kernel modules compared
# after decompression when the image holds them decompressed; the generated files (depmod's
# output, foyer's own programs, units and /etc files) are checked against where they come from.
# A file planted in a copy of the tree, differing from the build host's at the same path, must be
# the tree's in the image.
# Usage: test-foyer-tree-identical.sh FOYER GENERATOR-DIR UNIT-DIR TREE
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
src=${4:?usage: test-foyer-tree-identical.sh FOYER GENERATOR-DIR UNIT-DIR TREE}
require_generator
make_tmp test-foyer-tree-identical

tree=$tmp/tree
mkdir "$tree"
cp -al "$src/." "$tree/" 2>/dev/null || cp -a "$src/." "$tree/"
kver=$(find "$tree/usr/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tail -n1)
[ -n "$kver" ] || fail "no kernel in $src"

# Planted: a rule file of the tree with a line the host's copy lacks (replaced, not written
# through the hard link).
planted=usr/lib/udev/rules.d/60-block.rules
{ cat "$tree/$planted"; echo "# foyer-test: planted in the tree"; } > "$tmp/planted"
rm "$tree/$planted" && mv "$tmp/planted" "$tree/$planted"
cmp -s "$tree/$planted" "/$planted" && fail "the planted file equals the host's"

echo "== build --root $src --kver $kver"
"$foyer" build --root "$tree" --kver "$kver" --compress none -o "$tmp/img" 2>"$tmp/err" || { cat "$tmp/err"; fail "build"; }
cat "$tmp/err"
mkdir "$tmp/x"
(cd "$tmp/x" && cpio -id --quiet --no-absolute-filenames < "$tmp/img")
x=$tmp/x

echo "== the tree's systemd"
shared=$(find "$tree/usr/lib" -name 'libsystemd-shared-*.so' -printf '%f\n' | head -n1)
[ -n "$shared" ] || fail "no libsystemd-shared in the tree"
version=${shared#libsystemd-shared-}; version=${version%%[!0-9]*}
echo "systemd $version"
found=$(find "$x/usr/lib" -name 'libsystemd-shared-*.so' -printf '%f\n' | sort | tr '\n' ' ')
[ "$found" = "$shared " ] || fail "image holds libsystemd-shared '$found', the tree '$shared'"
if [ "$version" -ge 255 ]; then
        [ -f "$x/usr/lib/systemd/systemd-executor" ] || fail "no systemd-executor (systemd $version)"
fi
[ -f "$x/usr/lib/systemd/systemd-cryptsetup" ] || [ -f "$x/usr/bin/systemd-cryptsetup" ] ||
        fail "no systemd-cryptsetup"
[ -e "$x/usr/lib/systemd/systemd-cryptsetup" ] || fail "/usr/lib/systemd/systemd-cryptsetup does not resolve"
grep -q 'foyer-test: planted in the tree' "$x/$planted" || fail "the planted file is not the tree's"

echo "== every file from the tree is the tree's"
unitdir=$FOYER_UNIT_DIR gendir=$FOYER_GENERATOR_DIR
n=0 generated=0
while IFS= read -r -d '' f; do
        p=${f#"$x"/}
        case $p in
                # depmod's output for the modules in the image
                usr/lib/modules/"$kver"/modules.*)
                        generated=$((generated + 1)); continue ;;
                # foyer's own programs and files
                usr/lib/systemd/system-generators/foyer-*)
                        cmp -s "$f" "$gendir/${p##*/}" || fail "$p is not foyer's generator"
                        generated=$((generated + 1)); continue ;;
                usr/lib/foyer/*|usr/lib/udev/rules.d/[0-9][0-9]-foyer-*|etc/foyer/*|etc/lvm/lvm.conf)
                        generated=$((generated + 1)); continue ;;
                # plan-run-lock.c's drop-in for the tree's run-lock.mount
                usr/lib/systemd/system/run-lock.mount.d/foyer-initrd.conf)
                        generated=$((generated + 1)); continue ;;
                # plan-stub.c's (tmpfiles-setup only with /.extra) and plan-repart.c's (after sysroot.mount)
                usr/lib/systemd/system/systemd-tmpfiles-setup.service.d/10-foyer-stub.conf|\
                usr/lib/systemd/system/systemd-repart.service.d/50-foyer-after-sysroot.conf)
                        generated=$((generated + 1)); continue ;;
                etc/initrd-release|etc/passwd|etc/shadow|etc/group|etc/nsswitch.conf|etc/machine-id|etc/fstab)
                        generated=$((generated + 1)); continue ;;
        esac
        if [ -e "$unitdir/${p#usr/lib/systemd/system/}" ] && [[ $p == usr/lib/systemd/system/* ]] &&
           [ ! -e "$tree/$p" ]; then
                cmp -s "$f" "$unitdir/${p#usr/lib/systemd/system/}" || fail "$p is not foyer's unit"
                generated=$((generated + 1)); continue
        fi
        if [ -f "$tree/$p" ]; then
                cmp -s "$f" "$tree/$p" || fail "$p differs from the tree's"
        elif [[ $p == *.ko ]] && compgen -G "$tree/$p.*" >/dev/null; then
                c=$(compgen -G "$tree/$p.*" | head -n1)
                case $c in
                        *.xz) xz -dc "$c" ;; *.zst) zstd -dcq "$c" ;; *.gz) gzip -dc "$c" ;; *) fail "$c: unknown compression" ;;
                esac | cmp -s - "$f" || fail "$p differs from the tree's $c after decompression"
        else
                fail "$p is neither in the tree nor a file foyer generates"
        fi
        n=$((n + 1))
done < <(find "$x" -type f -print0)
echo "$n files identical to the tree's, $generated generated"
[ "$n" -ge 100 ] || fail "only $n files compared"
echo ok
