#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer build --root TREE takes every file from TREE, never from the build host: symlinks in the
# tree, absolute or relative, intermediate or final, are resolved inside it as chroot(2) would.
#  - an intermediate absolute symlink whose target exists on the host with other content
#    (TREE/usr/lib/systemd/system -> /lib/systemd/system, TREE/lib a real directory, as in an
#    unmerged tree): the image holds the tree's unit, not the host's;
#  - a final absolute symlink that dangles on the host (libc.so.6 -> /opt/foyer-tree/libc.so.6):
#    the library is found in the tree and the image holds the tree's bytes;
#  - a PT_INTERP naming a file that is not an ELF program is refused with an error naming it.
# The tree is a hard-linked copy of the host's /usr parts an image needs; files the test changes
# are replaced, never written through the links.
# Usage: test-foyer-root.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator
require_kernel
make_tmp test-foyer-root

tree=$tmp/tree
mkdir -p "$tree/usr/lib/modules" "$tree/etc"
for d in bin sbin lib64 lib/x86_64-linux-gnu lib/systemd lib/udev lib/os-release lib/modprobe.d; do
        [ -e "/usr/$d" ] || continue
        mkdir -p "$tree/usr/$(dirname "$d")"
        cp -al "/usr/$d" "$tree/usr/$d" 2>/dev/null || cp -a "/usr/$d" "$tree/usr/$d"
done
cp -al "/usr/lib/modules/$kver" "$tree/usr/lib/modules/" 2>/dev/null || cp -a "/usr/lib/modules/$kver" "$tree/usr/lib/modules/"
for l in bin sbin lib64; do ln -s "usr/$l" "$tree/$l"; done
cp -a /etc/ld.so.conf /etc/ld.so.conf.d "$tree/etc/"

# The tree's units live in a real /lib/systemd/system; /usr/lib/systemd/system points there with
# an absolute link. On the host, /lib/systemd/system is the host's own unit directory.
mkdir -p "$tree/lib/systemd"
mv "$tree/usr/lib/systemd/system" "$tree/lib/systemd/system"
ln -s /lib/systemd/system "$tree/usr/lib/systemd/system"
unit=$tree/lib/systemd/system/initrd.target
{ cat "$unit"; echo "# foyer-test: the tree's initrd.target"; } > "$unit.new"
rm "$unit" && mv "$unit.new" "$unit"

# libc.so.6 is an absolute link to a place only the tree has; its bytes carry a marker.
libdir=$tree/usr/lib/x86_64-linux-gnu
mkdir -p "$tree/opt/foyer-tree"
{ cat /usr/lib/x86_64-linux-gnu/libc.so.6; printf 'foyer-test: the tree libc'; } > "$tree/opt/foyer-tree/libc.so.6"
chmod 0755 "$tree/opt/foyer-tree/libc.so.6"
rm "$libdir/libc.so.6" && ln -s /opt/foyer-tree/libc.so.6 "$libdir/libc.so.6"
[ ! -e /opt/foyer-tree ] || skip "/opt/foyer-tree exists on this host"

# extract IMAGE PATH: the bytes of PATH in an uncompressed image.
extract() { cpio -i --quiet --to-stdout "${2#/}" < "$1"; }

echo "== build --root with absolute symlinks in the tree"
"$foyer" build --root "$tree" --kver "$kver" --compress none -o "$tmp/a.img" 2>"$tmp/err" || { cat "$tmp/err"; fail "build"; }
extract "$tmp/a.img" /usr/lib/systemd/system/initrd.target > "$tmp/unit"
cmp -s "$tmp/unit" "$unit" || fail "initrd.target is not the tree's (intermediate absolute symlink followed on the host)"
extract "$tmp/a.img" /opt/foyer-tree/libc.so.6 > "$tmp/libc"
cmp -s "$tmp/libc" "$tree/opt/foyer-tree/libc.so.6" || fail "libc.so.6 is not the tree's"
"$foyer" ls "$tmp/a.img" > "$tmp/ls"
grep -q ' usr/lib/x86_64-linux-gnu/libc.so.6 -> /opt/foyer-tree/libc.so.6$' "$tmp/ls" || fail "libc.so.6 link not kept"

echo "== a relative link that climbs above the root stays in it"
rm "$libdir/libc.so.6" && ln -s ../../../../../../../../opt/foyer-tree/libc.so.6 "$libdir/libc.so.6"
"$foyer" build --root "$tree" --kver "$kver" --compress none -o "$tmp/b.img" 2>"$tmp/err" || { cat "$tmp/err"; fail "build"; }
extract "$tmp/b.img" /opt/foyer-tree/libc.so.6 | cmp -s - "$tree/opt/foyer-tree/libc.so.6" || fail "libc.so.6 (../ link) is not the tree's"

echo "== PT_INTERP naming a file that is not ELF"
command -v cc >/dev/null || skip "no C compiler for the PT_INTERP case"
echo 'int main(void) { return 0; }' > "$tmp/prog.c"
cc -o "$tmp/prog" "$tmp/prog.c" -Wl,--dynamic-linker=/usr/lib/foyer-test/ld.so || skip "cc cannot set the interpreter"
mkdir -p "$tree/usr/lib/foyer-test"
printf '#!/bin/sh\necho not a loader\n' > "$tree/usr/lib/foyer-test/ld.so"
chmod 0755 "$tree/usr/lib/foyer-test/ld.so"
out=$tmp/interp.img
expect_error "PT_INTERP is a script" "Interpreter /usr/lib/foyer-test/ld.so of /usr/bin/foyer-prog.*not an ELF" \
        "$foyer" build --root "$tree" --kver "$kver" --compress none -o "$out" --add-file "$tmp/prog:/usr/bin/foyer-prog"
echo ok
