#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds an image from the host for the installed kernel and checks it from the outside:
# unpacked and chrooted into, the core tools and modprobe work; cpio -t agrees with foyer ls;
# two builds are byte-identical; configuration files apply; and each kind of bad input ends in
# one clear error, a non-zero exit and nothing at the output path.
# Usage: test-foyer-build.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator
require_kernel
make_tmp test-foyer

echo "== build for $kver"
"$foyer" build --kver "$kver" -o "$tmp/a.img" --cmdline "rd.foyer.test=1 quiet"
[ -s "$tmp/a.img" ] || fail "no image"
[ "$(stat -c %a "$tmp/a.img")" = 644 ] || fail "image mode $(stat -c %a "$tmp/a.img")"
# The default zstd stream: a 16 MiB window (src/foyer/compress.c), which the kernel allocates to unpack it.
zstd -lv "$tmp/a.img" 2>/dev/null | grep -q '^Window Size: .*(16777216 B)' || fail "the image's zstd window is not 16 MiB"
compgen -G "$tmp/.#*" >/dev/null && fail "temporary file left behind"

echo "== unpack and chroot"
mkdir "$tmp/root"
(cd "$tmp/root" && zstd -dcq "$tmp/a.img" | cpio -idm --quiet)
for cmd in "systemctl --version" "udevadm --version" "journalctl --version" \
           "modprobe -S $kver -n -v virtio_blk" "sh -c true" "mount --version" "blkid -V" \
           "kmod --version" "sulogin --help" "e2fsck -V"; do
        # shellcheck disable=SC2086 # $cmd is a command and its arguments, split on purpose
        chroot "$tmp/root" $cmd >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "chroot: $cmd"; }
done
chroot "$tmp/root" modprobe -S "$kver" -n -v virtio_blk | grep -q 'virtio_blk\.ko' || fail "modprobe virtio_blk"
for f in init etc/initrd-release etc/os-release etc/passwd etc/group etc/shadow etc/nsswitch.conf \
         etc/machine-id usr/lib/systemd/system/initrd.target usr/lib/systemd/system/initrd-switch-root.service \
         usr/lib/systemd/system/initrd-parse-etc.service.d/10-foyer.conf \
         usr/lib/systemd/system/emergency.service.d/10-foyer.conf \
         usr/lib/systemd/system/systemd-udevd.service.d/10-foyer.conf \
         usr/lib/udev/rules.d/99-systemd.rules "usr/lib/modules/$kver/modules.dep.bin"; do
        [ -e "$tmp/root/$f" ] || fail "missing /$f"
done
[ "$(readlink "$tmp/root/init")" = usr/lib/systemd/systemd ] || fail "/init target"
[ ! -s "$tmp/root/etc/machine-id" ] || fail "machine-id not empty"
grep -q '^NAME="foyer"' "$tmp/root/etc/initrd-release" || fail "initrd-release"
grep -q '^root:\*:' "$tmp/root/etc/shadow" || fail "root not locked"
grep -qx 'rd.foyer.test=1 quiet' "$tmp/root/etc/cmdline.d/50-foyer.conf" || fail "--cmdline not stored"
compgen -G "$tmp/root/usr/lib/systemd/system-generators/foyer-*" >/dev/null || fail "no foyer generators"
# foyer's generators replace these; systemd's hibernate-resume generator is the one of systemd's
# in the image (test-foyer-resume).
for g in systemd-fstab-generator systemd-cryptsetup-generator systemd-gpt-auto-generator \
         systemd-debug-generator; do
        [ ! -e "$tmp/root/usr/lib/systemd/system-generators/$g" ] || fail "$g must not be in the image"
done
# No dangling symlinks inside the image (resolved within it), except links into /run, which only
# exists at boot (/etc/lvm/lvmlocal.conf points to what foyer-lvm-generator writes there).
while read -r l; do
        t=$(readlink "$l")
        case $t in /run/*) continue ;; esac
        case $t in /*) p="$tmp/root$t" ;; *) p="$(dirname "$l")/$t" ;; esac
        [ -e "$p" ] || [ -L "$p" ] || fail "dangling symlink ${l#"$tmp/root"} -> $t"
done < <(find "$tmp/root" -type l -not -path "$tmp/root/bin" -not -path "$tmp/root/sbin" \
                              -not -path "$tmp/root/lib" -not -path "$tmp/root/lib64")

echo "== LVM: lvm2, its rules, the image's lvm.conf, the dm targets"
for f in usr/lib/udev/rules.d/69-lvm.rules usr/lib/udev/rules.d/56-lvm.rules usr/bin/systemd-run usr/sbin/dmsetup; do
        [ -e "$tmp/root/$f" ] || fail "missing /$f"
done
[ -x "$tmp/root/usr/sbin/lvm" ] || fail "missing /usr/sbin/lvm"
# lvm needs /proc, so the host's lvm2 (in tools/packages) reads the image's configuration.
if command -v lvmconfig >/dev/null; then
        LVM_SYSTEM_DIR=$tmp/root/etc/lvm lvmconfig global/event_activation activation/monitoring \
                devices/use_devicesfile 2>/dev/null | tr '\n' ' ' |
                grep -qx 'event_activation=1 monitoring=0 use_devicesfile=0 ' || fail "lvm.conf of the image"
fi
chroot "$tmp/root" modprobe -S "$kver" -n -v dm_thin_pool | grep -q 'dm-thin-pool\.ko' || fail "modprobe dm_thin_pool"

echo "== file system modules load beside fsck; no systemd-sysctl"
for u in systemd-sysctl.service sysinit.target.wants/systemd-sysctl.service; do
        [ ! -e "$tmp/root/usr/lib/systemd/system/$u" ] || fail "$u must not be in the image"
done
# shellcheck disable=SC2016 # udev's own $env{}, not the shell's
grep -q 'ENV{SYSTEMD_WANTS}+="foyer-fs-module@$env{ID_FS_TYPE}.service"' \
        "$tmp/root/usr/lib/udev/rules.d/61-foyer-fs-module.rules" || fail "no file system module rule"
grep -qx 'ExecStart=-/usr/sbin/modprobe -bq fs-%I' "$tmp/root/usr/lib/systemd/system/foyer-fs-module@.service" ||
        fail "foyer-fs-module@.service"

echo "== cpio -t equals foyer ls"
zstd -dcq "$tmp/a.img" | cpio -t --quiet >"$tmp/cpio.list"
"$foyer" ls "$tmp/a.img" | awk '{print $3}' >"$tmp/foyer.list"
diff -u "$tmp/cpio.list" "$tmp/foyer.list" || fail "listings differ"

echo "== reproducible"
"$foyer" build --kver "$kver" -o "$tmp/b.img" --cmdline "rd.foyer.test=1 quiet" 2>/dev/null
cmp "$tmp/a.img" "$tmp/b.img" || fail "two builds differ"
# The same bytes whatever the number of compression threads (one per CPU the build may use): zstd's
# jobs and xz's blocks have fixed sizes.
if [ "$(nproc)" -gt 1 ]; then
        taskset -c 0 "$foyer" build --kver "$kver" -o "$tmp/b.img" --cmdline "rd.foyer.test=1 quiet" 2>/dev/null
        cmp "$tmp/a.img" "$tmp/b.img" || fail "zstd: one thread and $(nproc) give different images"
fi

echo "== every compression, read back by foyer ls"
for c in gzip lz4 xz none; do
        "$foyer" build --kver "$kver" -c "$c" --compress-level 1 -o "$tmp/$c.img" --cmdline "rd.foyer.test=1 quiet" 2>/dev/null
        "$foyer" ls "$tmp/$c.img" | cmp -s - <("$foyer" ls "$tmp/a.img") || fail "$c listing differs"
done
if [ "$(nproc)" -gt 1 ]; then
        taskset -c 0 "$foyer" build --kver "$kver" -c xz --compress-level 1 -o "$tmp/xz1.img" \
                --cmdline "rd.foyer.test=1 quiet" 2>/dev/null
        cmp "$tmp/xz.img" "$tmp/xz1.img" || fail "xz: one thread and $(nproc) give different images"
fi
# The reference tools read what foyer wrote (lz4 in the kernel's legacy format).
gzip -dc "$tmp/gzip.img" | cpio -t --quiet | cmp -s - "$tmp/cpio.list" || fail "gzip -d"
xz -dc "$tmp/xz.img" | cpio -t --quiet | cmp -s - "$tmp/cpio.list" || fail "xz -d"
if command -v lz4 >/dev/null; then
        lz4 -dc "$tmp/lz4.img" | cpio -t --quiet | cmp -s - "$tmp/cpio.list" || fail "lz4 -d"
fi
# Concatenated archives: an uncompressed one followed by a compressed one.
cat "$tmp/none.img" "$tmp/a.img" >"$tmp/concat.img"
[ "$("$foyer" ls "$tmp/concat.img" | wc -l)" -eq $((2 * $(wc -l <"$tmp/foyer.list"))) ] || fail "concatenated listing"
rm -f "$tmp"/{b,gzip,lz4,xz,xz1,none,concat}.img

echo "== configuration files"
mkdir -p "$tmp/conf/etc/foyer/conf.d" "$tmp/conf/usr/lib/foyer/conf.d"
printf '[Build]\nCompression=gzip\n' >"$tmp/conf/etc/foyer/foyer.conf"
printf 'Cmdline=from-usr\n' >"$tmp/conf/usr/lib/foyer/conf.d/10-x.conf"
printf 'Cmdline=from-usr-20\n' >"$tmp/conf/usr/lib/foyer/conf.d/20-y.conf"
printf 'Cmdline=from-etc\n' >"$tmp/conf/etc/foyer/conf.d/20-y.conf"       # masks /usr/lib's 20-y.conf
FOYER_CONFIG_ROOT="$tmp/conf" "$foyer" build --kver "$kver" -o "$tmp/c.img" 2>/dev/null
head -c2 "$tmp/c.img" | od -An -tx1 | grep -q '1f 8b' || fail "Compression= from foyer.conf"
mkdir "$tmp/c" && (cd "$tmp/c" && gzip -dc "$tmp/c.img" | cpio -id --quiet etc/cmdline.d/50-foyer.conf)
grep -qx from-etc "$tmp/c/etc/cmdline.d/50-foyer.conf" || fail "drop-in precedence"
FOYER_CONFIG_ROOT="$tmp/conf" "$foyer" build --kver "$kver" -c zstd --cmdline from-cli -o "$tmp/c.img" 2>/dev/null
"$foyer" ls "$tmp/c.img" >/dev/null
head -c4 "$tmp/c.img" | od -An -tx1 | grep -q '28 b5 2f fd' || fail "command line must win"
rm -rf "$tmp/c" "$tmp/c.img"


out=$tmp/out.img
expect_error "unknown kernel version" "present: .*$kver" "$foyer" build --kver 0.0-none -o "$out"
[ ! -e "$out" ] || fail "output left behind"
expect_error "unknown module" "no_such_module_foyer" "$foyer" build --kver "$kver" --add-module no_such_module_foyer -o "$out"
[ ! -e "$out" ] || fail "output left behind"

# A binary needing a library that does not exist: libc.so.6 renamed in its dynamic section.
perl -pe 's/libc\.so\.6/libq.so.6/g' /usr/bin/true >"$tmp/broken" && chmod +x "$tmp/broken"
expect_error "missing library" "libq.so.6 needed by /usr/bin/broken" \
        "$foyer" build --kver "$kver" --add-file "$tmp/broken:/usr/bin/broken" -o "$out"
[ ! -e "$out" ] || fail "output left behind"

# A source tree without systemd: a required binary is missing.
# Its modules are a hard-linked copy: an absolute symlink to the host's would resolve inside the
# tree (as chroot(2) would) and find nothing.
mkdir -p "$tmp/fakeroot/usr/lib/modules"
cp -al "/usr/lib/modules/$kver" "$tmp/fakeroot/usr/lib/modules/" 2>/dev/null ||
        cp -a "/usr/lib/modules/$kver" "$tmp/fakeroot/usr/lib/modules/"
expect_error "missing binary" "usr/lib/systemd/systemd is missing" \
        "$foyer" build --root "$tmp/fakeroot" --kver "$kver" -o "$out"
[ ! -e "$out" ] || fail "output left behind"

# A quote left open in the stored defaults would end at the end of /etc/cmdline.d/50-foyer.conf at
# boot, and the value meant would be lost: the builder refuses it, from the command line or a
# configuration file, naming the parameter, and leaves an existing image untouched.
expect_error "unbalanced quote in --cmdline" '^.*--cmdline: unbalanced quote .*rd\.luks\.options="discard' \
        "$foyer" build --kver "$kver" --cmdline 'rd.luks.options="discard' -o "$out"
expect_error "unbalanced quote after a balanced one" "--cmdline: unbalanced quote .*b='c" \
        "$foyer" build --kver "$kver" --cmdline "quiet a=\"x y\" b='c" -o "$out"
expect_error "newline in --cmdline" "--cmdline: .*one line" \
        "$foyer" build --kver "$kver" --cmdline "$(printf 'quiet\n# root=/dev/sda2')" -o "$out"
mkdir -p "$tmp/badconf/etc/foyer"
printf '[Build]\nCmdline=rd.luks.options="discard root=/dev/sda2\n' >"$tmp/badconf/etc/foyer/foyer.conf"
cp "$tmp/a.img" "$out"
FOYER_CONFIG_ROOT="$tmp/badconf" expect_error "unbalanced quote in Cmdline=" \
        'foyer.conf:2: Cmdline: unbalanced quote .*rd\.luks\.options="discard' \
        "$foyer" build --kver "$kver" -o "$out"
cmp -s "$tmp/a.img" "$out" || fail "existing image was modified"
rm -rf "$out" "$tmp/badconf"

expect_error "missing output directory" "/nonexistent-foyer-dir" \
        "$foyer" build --kver "$kver" -o /nonexistent-foyer-dir/x.img
expect_error "unwritable output directory" "/proc" "$foyer" build --kver "$kver" -o /proc/foyer-test.img
[ ! -e /proc/foyer-test.img ] || fail "output in /proc"

# An existing image survives a failed build untouched.
cp "$tmp/a.img" "$out"
expect_error "failed build over an existing image" "no_such_module_foyer" \
        "$foyer" build --kver "$kver" --add-module no_such_module_foyer -o "$out"
cmp -s "$tmp/a.img" "$out" || fail "existing image was modified"
compgen -G "$tmp/.#*" >/dev/null && fail "temporary file left behind"
rm -f "$out"

# expect_ls_error DESCRIPTION PATTERN IMAGE: foyer ls fails with one error line matching PATTERN;
# the rest of stderr is the header foyer ls writes there before the entries, and no summary.
expect_ls_error() {
        local what=$1 pattern=$2 image=$3
        echo "== bad image: $what"
        if "$foyer" ls "$image" >/dev/null 2>"$tmp/stderr"; then
                fail "$what: exit status 0"
        fi
        cat "$tmp/stderr"
        grep -v -e '^Image: ' -e '^Offset [0-9]*: ' "$tmp/stderr" >"$tmp/errors" || true
        [ "$(grep -c . "$tmp/errors")" -eq 1 ] || fail "$what: expected exactly one error line"
        grep -q -- "$pattern" "$tmp/errors" || fail "$what: message does not match '$pattern'"
        ! grep -q '^Summary:' "$tmp/stderr" || fail "$what: a summary after an error"
}
size=$(stat -c %s "$tmp/a.img")
head -c $((size / 2)) "$tmp/a.img" >"$tmp/truncated.img"
expect_ls_error "truncated image" "truncated" "$tmp/truncated.img"
cp "$tmp/a.img" "$tmp/corrupt.img"
printf 'garbage!garbage!garbage!' | dd of="$tmp/corrupt.img" bs=1 seek=$((size / 3)) conv=notrunc status=none
expect_ls_error "corrupt image" "corrupt" "$tmp/corrupt.img"
head -c 4096 /dev/urandom >"$tmp/random.img"
expect_ls_error "not an image" "neither a cpio archive" "$tmp/random.img"
zstd -dcq "$tmp/a.img" | head -c 100000 >"$tmp/short.cpio"
expect_ls_error "truncated cpio" "truncated" "$tmp/short.cpio"
expect_error "missing image" "No such file" "$foyer" ls "$tmp/does-not-exist.img"

echo "all foyer build checks passed"
