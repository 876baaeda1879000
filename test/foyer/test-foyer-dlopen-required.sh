#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd 262's .note.dlopen priorities on a real tree (Debian sid): systemd-cryptsetup marks its
# feature "cryptsetup" (libcryptsetup.so.12) required, so an image of a copy of the tree without
# libcryptsetup must not be built: the build fails naming systemd-cryptsetup, the feature and the
# soname, and an image already at the output path stays as it was. The tree itself builds. The
# cryptsetup-bin programs, which need libcryptsetup by DT_NEEDED (a failure of its own), are removed
# from the copy too, so that only the note can fail the build.
# Usage: test-foyer-dlopen-required.sh FOYER GENERATOR-DIR UNIT-DIR TREE (run by test-foyer-tree.sh)
set -euo pipefail
foyer=$1 tree=$4
export FOYER_GENERATOR_DIR=$2 FOYER_UNIT_DIR=$3
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kver=$(find "$tree/usr/lib/modules" -mindepth 1 -maxdepth 1 -printf "%f\n" | sort | head -n1)
# An encrypted root: the image must unlock it with systemd-cryptsetup.
cmdline="rd.luks.uuid=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e01 root=/dev/mapper/luks-5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e01"

prog=
for p in usr/bin/systemd-cryptsetup usr/lib/systemd/systemd-cryptsetup; do
        [[ -f $tree/$p && ! -L $tree/$p ]] && { prog=$p; break; }
done
[[ $prog ]] || fail "the tree has no systemd-cryptsetup"
# The note as systemd's macro writes it: {"feature":"cryptsetup",...,"priority":"...",...}.
note=$(grep -a -o '{"feature":"cryptsetup"[^}]*}' "$tree/$prog" | head -n1) || true
[[ $note ]] || fail "$prog has no .note.dlopen feature \"cryptsetup\" (systemd before 262?)"
priority=$(sed -n 's/.*"priority":"\([a-z]*\)".*/\1/p' <<<"$note")
echo "$prog: $note"

build() {       # TREE NAME: foyer build's exit status; its stderr in NAME.log
        local rc=0
        "$foyer" build --root "$1" --kver "$kver" --compress none --cmdline "$cmdline" \
                -o "$work/$2.img" >"$work/$2.log" 2>&1 || rc=$?
        return "$rc"
}

echo "== the tree as it is: the image has systemd-cryptsetup and libcryptsetup"
build "$tree" whole || { cat "$work/whole.log"; fail "foyer build of the tree failed"; }
"$foyer" ls "$work/whole.img" >"$work/whole.ls" 2>/dev/null
grep -q " $prog\$" "$work/whole.ls" || fail "$prog is not in the image"
grep -q "/libcryptsetup\.so\.12" "$work/whole.ls" || fail "libcryptsetup.so.12 is not in the image"

# A copy of the tree (hard links: the cached tree is not changed) without libcryptsetup. Its
# directories are new ones (TREE may be a symlink, which cp would copy as such): removing names
# there never touches the cached tree.
mkdir "$work/tree"
cp -al "$tree/." "$work/tree/" 2>/dev/null || { rm -rf "$work/tree" && mkdir "$work/tree" && cp -a "$tree/." "$work/tree/"; }
[[ ! -L $work/tree/usr/lib && $(stat -c %d:%i "$work/tree/usr/lib") != "$(stat -L -c %d:%i "$tree/usr/lib")" ]] ||
        fail "the copy shares its directories with the cached tree"
find "$work/tree/usr/lib" "$work/tree/usr/lib64" -name 'libcryptsetup.so*' -delete 2>/dev/null || true
rm -f "$work/tree/usr/sbin/cryptsetup" "$work/tree/usr/sbin/veritysetup" "$work/tree/usr/sbin/integritysetup"
! find "$work/tree/usr" -name 'libcryptsetup.so*' | grep -q . || fail "libcryptsetup is still in the copy"
[[ -e $tree/usr/sbin/cryptsetup ]] || fail "the cached tree lost cryptsetup"

echo "previous image" >"$work/nolib.img"
cp "$work/nolib.img" "$work/previous.img"
case $priority in
required)
        echo "== no libcryptsetup, \"cryptsetup\" required: the build fails naming the program and the feature"
        if build "$work/tree" nolib; then
                cat "$work/nolib.log"
                fail "foyer build succeeded without the library of a required feature"
        fi
        cat "$work/nolib.log"
        grep -q "/systemd-cryptsetup: required feature \"cryptsetup\" is missing, libcryptsetup\.so\.12 is not in $work/tree" \
                "$work/nolib.log" || fail "the error does not name systemd-cryptsetup, \"cryptsetup\" and libcryptsetup.so.12"
        cmp -s "$work/nolib.img" "$work/previous.img" || fail "the failed build changed the output file"
        leftover=$(find "$work" -maxdepth 1 -newer "$work/previous.img" ! -name nolib.log ! -path "$work")
        [[ -z $leftover ]] || fail "the failed build left files: $leftover"
        ;;
recommended)
        echo "== no libcryptsetup, \"cryptsetup\" recommended: a warning, and the image is built"
        build "$work/tree" nolib || { cat "$work/nolib.log"; fail "foyer build failed"; }
        grep -q "warning: .*/systemd-cryptsetup: recommended feature \"cryptsetup\"" "$work/nolib.log" ||
                { cat "$work/nolib.log"; fail "no warning naming systemd-cryptsetup and \"cryptsetup\""; }
        ;;
*)
        fail "$prog marks \"cryptsetup\" \"$priority\", which this test does not expect"
        ;;
esac
echo OK
