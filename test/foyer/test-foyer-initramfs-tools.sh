#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A tree that initramfs-tools was configured in (docs/foyer.md, "Coming from initramfs-tools"):
#  - the modules of /etc/initramfs-tools/modules are in the image (one with options: a warning
#    naming the line and the modprobe.d line to write); a line that is no module name is a warning;
#  - COMPRESS= of conf.d (after initramfs.conf's) is the image's compression when foyer's
#    configuration and command line set none; Compression= of foyer.conf wins, with a warning
#    naming COMPRESS=, and --compress too, with a -v message;
#  - MODULES=dep, COMPRESSLEVEL= and the hooks of other packages are named in warnings (the hooks
#    in one line once the image is written, /etc's hook replacing /usr/share's of the same name, a non-executable one left
#    out as mkinitramfs does), the hooks whose work foyer does itself in a -v message (RESUME= is
#    test-target.c's);
#  - a tree without /etc/initramfs-tools, and --no-target-settings, give none of this.
# Usage: test-foyer-initramfs-tools.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
make_tmp test-foyer-initramfs-tools
use_fake_kernel

# A module outside foyer's default set, which only /etc/initramfs-tools/modules brings in.
m=kernel/drivers/misc/foyer_extra
mkdir -p "$root/usr/lib/modules/$kver/kernel/drivers/misc"
printf 'license=GPL\0name=foyer_extra\0vermagic=%s SMP mod_unload\0' "$kver" >"$tmp/modinfo"
objcopy --remove-section .modinfo --add-section .modinfo="$tmp/modinfo" \
        --set-section-flags .modinfo=alloc,readonly,data "$tmp/plain.o" "$root/usr/lib/modules/$kver/$m.ko"
echo "$m.ko" >>"$root/usr/lib/modules/$kver/modules.order"
depmod -b "$root" "$kver"

build() {       # IMAGE [OPTION...]
        local out=$1
        shift
        "$foyer" build --root "$root" --kver "$kver" -o "$out" "$@" >"$tmp/build.log" 2>&1 ||
                { cat "$tmp/build.log"; fail "foyer build $*"; }
}
has_module() { "$foyer" ls "$1" 2>/dev/null | grep -q "/foyer_extra\.ko\(\.[a-z]*\)\?$"; }
compression() { "$foyer" ls "$1" 2>&1 >/dev/null | grep "^Offset" | tail -n1; }

echo "== a tree without /etc/initramfs-tools"
build "$tmp/plain.img"
has_module "$tmp/plain.img" && fail "foyer_extra is in an image of a tree without initramfs-tools"
grep -q 'etc/initramfs-tools\|initramfs-tools hooks' "$tmp/build.log" && { cat "$tmp/build.log"; fail "a message about initramfs-tools without it"; }
compression "$tmp/plain.img" | grep -q zstd || fail "foyer's default compression is not zstd: $(compression "$tmp/plain.img")"

echo "== the tree's initramfs-tools configuration"
c=$root/etc/initramfs-tools
mkdir -p "$c/conf.d" "$c/hooks" "$root/usr/share/initramfs-tools/hooks"
printf '# comment\n\nfoyer_extra\nloop max_loop=8\nnot/a/module\n' >"$c/modules"
printf 'MODULES=dep\nCOMPRESS=zstd\nRESUME=UUID=0000-resume\n' >"$c/initramfs.conf"
printf '# the last one counts\nCOMPRESS="gzip"\nCOMPRESSLEVEL=9\n' >"$c/conf.d/x"
printf 'COMPRESS=xz\n' >"$c/conf.d/x.dpkg-old"         # not read, as by mkinitramfs
printf '#!/bin/sh\n' >"$c/hooks/foo"
printf '#!/bin/sh\n' >"$c/hooks/disabled"
printf '#!/bin/sh\n' >"$root/usr/share/initramfs-tools/hooks/foo"
printf '#!/bin/sh\n' >"$root/usr/share/initramfs-tools/hooks/udev"
printf '#!/bin/sh\n' >"$root/usr/share/initramfs-tools/hooks/plymouth"
chmod 755 "$c/hooks/foo" "$root/usr/share/initramfs-tools/hooks/"*
chmod 644 "$c/hooks/disabled"
build "$tmp/it.img"
cat "$tmp/build.log"
has_module "$tmp/it.img" || fail "foyer_extra of /etc/initramfs-tools/modules is not in the image"
compression "$tmp/it.img" | grep -q gzip || fail "COMPRESS=gzip was not taken: $(compression "$tmp/it.img")"
expect_line() { grep -q -- "$1" "$tmp/build.log" || fail "no line matching '$1'"; }
expect_line "Adding the modules of $c/modules: foyer_extra loop\.$"
expect_line "$c/modules:4: foyer adds module loop but not its options \"max_loop=8\": put \"options loop max_loop=8\" in /etc/modprobe.d/loop.conf"
expect_line "$c/modules:5: not a module name, ignoring the line\.$"
expect_line "Compression gzip, from COMPRESS= in $c\.$"
expect_line "$c: COMPRESSLEVEL= is not read"
expect_line "$c: MODULES=dep is not taken: foyer makes its generic image; HostOnly=yes"
# One warning line names the other packages' hooks, /etc's foo and not /usr/share's, nor the
# non-executable one; udev's work is foyer's own.
n=$(grep -c 'foyer does not run initramfs-tools hooks' "$tmp/build.log" || true)
[ "$n" = 1 ] || fail "$n lines about the hooks, not 1"
expect_line "foyer does not run initramfs-tools hooks; not run: $c/hooks/foo $root/usr/share/initramfs-tools/hooks/plymouth\. .*--add-file"
grep -q 'hooks/disabled' "$tmp/build.log" && fail "a non-executable hook was named"
grep -q 'hooks/udev' "$tmp/build.log" && fail "the udev hook is named without -v"
echo "== --compress wins over COMPRESS=, and -v says so; -v names the hooks whose work is foyer's"
build "$tmp/zstd.img" --compress zstd -v
expect_line "initramfs-tools hooks whose work foyer does itself, not run: $root/usr/share/initramfs-tools/hooks/udev\.$"
compression "$tmp/zstd.img" | grep -q zstd || fail "--compress zstd was not taken"
expect_line "$c: COMPRESS=gzip is not taken: foyer's command line says zstd\.$"

echo "== Compression= of foyer.conf wins too"
mkdir -p "$tmp/conf/etc/foyer"
printf '[Build]\nCompression=lz4\n' >"$tmp/conf/etc/foyer/foyer.conf"
FOYER_CONFIG_ROOT=$tmp/conf build "$tmp/lz4.img"
compression "$tmp/lz4.img" | grep -q lz4 || fail "Compression=lz4 of foyer.conf was not taken"
expect_line "COMPRESS=gzip is not taken: foyer's configuration says lz4\.$"

echo "== --no-target-settings reads none of it"
build "$tmp/nts.img" --no-target-settings
has_module "$tmp/nts.img" && fail "foyer_extra is in the image with --no-target-settings"
grep -q 'etc/initramfs-tools\|initramfs-tools hooks' "$tmp/build.log" && { cat "$tmp/build.log"; fail "a message about initramfs-tools with --no-target-settings"; }

echo "== a module the kernel does not have fails the build, after the line naming where it came from"
# A failed build names no hooks: only why it failed, and where the module came from.
printf 'foyer_missing\n' >"$c/modules"
if "$foyer" build --root "$root" --kver "$kver" -o "$tmp/missing.img" >"$tmp/build.log" 2>&1; then
        fail "a missing module of /etc/initramfs-tools/modules did not fail the build"
fi
expect_line "Adding the modules of $c/modules: foyer_missing\.$"
expect_line "Module foyer_missing not found for kernel $kver"
grep -q 'hooks' "$tmp/build.log" && fail "a failed build named the hooks"
echo ok
