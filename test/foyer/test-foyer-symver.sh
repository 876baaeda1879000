#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer's own programs (the generators, foyer-explain) are built on the build host and run with the
# tree's libraries. When the tree's library lacks a symbol version one of them needs, the build
# fails naming the program, the library, the missing version and what to do:
#  - the tree's libmount.so.1 is a library of our own, made with a version script, that defines
#    only MOUNT_2.19 (foyer-root-generator needs later ones, as the build host's libmount has them);
#  - the tree's libc.so.6 defines only GLIBC_2.2.5 (every program needs later ones).
# The unchanged tree builds without a word about versions. The tree is a hard-linked copy of the
# host's /usr parts with a fake kernel (lib.sh); the libraries are replaced, never written through.
# Usage: test-foyer-symver.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
export FOYER_HELPER_DIR=${4:?usage: test-foyer-symver.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR}
require_generator foyer-root-generator
[ -x "${FOYER_HELPER_DIR%%:*}/foyer-explain" ] || skip "foyer-explain is not built in ${FOYER_HELPER_DIR%%:*} yet"
make_tmp test-foyer-symver
use_fake_kernel
libdir=$root/usr/lib/x86_64-linux-gnu
if [ ! -e "$libdir/libmount.so.1" ] || [ ! -e "$libdir/libc.so.6" ]; then
        skip "no multiarch libmount and libc on this host"
fi

build() { "$foyer" build --root "$root" --kver "$kver" --compress none -o "$tmp/image" 2>"$tmp/err"; }

echo "== the tree as it is"
build || { cat "$tmp/err"; fail "build of the unchanged tree"; }
grep -i 'version' "$tmp/err" && fail "a version complaint about the unchanged tree"
"$foyer" ls "$tmp/image" | grep -q 'usr/lib/foyer/foyer-explain' || fail "foyer-explain is not in the image"
rm -f "$tmp/image"

# A stand-in library: soname SONAME, defining only VERSION (with one symbol in it).
make_lib() {    # SONAME VERSION FILE
        printf '%s { global: foyer_test_symbol; local: *; };\n' "$2" >"$tmp/lib.map"
        echo 'int foyer_test_symbol(void) { return 0; }' >"$tmp/lib.c"
        gcc -shared -fPIC -nostdlib -Wl,-soname,"$1" -Wl,--version-script="$tmp/lib.map" -o "$3.new" "$tmp/lib.c"
        rm -f "$3"
        mv "$3.new" "$3"
}
# expect_refused LIB VERSION PROGRAM...: the build fails, and for each program (image path) names the
# library's file in the tree, a version it needs and the advice.
expect_refused() {
        local lib=$1 version=$2 real prog
        shift 2
        real=$(realpath "$libdir/$lib")
        make_lib "$lib" "$version" "$real"
        if build; then
                fail "build succeeded with a $lib that defines only $version"
        fi
        cat "$tmp/err"
        for prog in "$@"; do
                grep -E "^foyer: $prog \(foyer's own, built on the build host as [^)]*\) needs [A-Z]+_[0-9._]+(, [A-Z]+_[0-9._]+)* of $lib, which $real in $root does not define \(its newest is $version\)" "$tmp/err" ||
                        fail "$prog, $lib and the missing version are not named"
        done
        grep -q "build foyer on, or for, a system no newer than the tree (for example inside a chroot of the tree's suite)" "$tmp/err" ||
                fail "the advice is missing"
        grep -q '^foyer: Closure check: .* symbol version(s) missing' "$tmp/err" || fail "no closure check summary"
        [ ! -e "$tmp/image" ] || fail "a failed build left its output"
        # Nothing from the tree is checked: its own programs match its libraries by construction.
        if grep -F "(foyer's own" "$tmp/err" | grep -vE "^foyer: (/usr/lib/systemd/system-generators/foyer-|/usr/lib/foyer/)"; then
                fail "a program of the tree was checked as foyer's own"
        fi
}

echo "== libmount.so.1 with MOUNT_2.19 only"
cp -a "$(realpath "$libdir/libmount.so.1")" "$tmp/libmount.saved"
expect_refused libmount.so.1 MOUNT_2.19 /usr/lib/systemd/system-generators/foyer-root-generator
rm -f "$(realpath "$libdir/libmount.so.1")"
mv "$tmp/libmount.saved" "$(realpath "$libdir/libmount.so.1")"

echo "== libc.so.6 with GLIBC_2.2.5 only"
expect_refused libc.so.6 GLIBC_2.2.5 /usr/lib/systemd/system-generators/foyer-root-generator \
        /usr/lib/systemd/system-generators/foyer-crypt-generator /usr/lib/foyer/foyer-explain
echo "ok"
