#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# dm-verity in a built image (docs/image-based.md):
#  - the tree's systemd-veritysetup-generator and systemd-veritysetup are in every image, byte for
#    byte, with dm_verity and the module it depends on (dm_mod, through libkmod) and
#    veritysetup.target wanted by sysinit.target; the generator, run inside the unpacked image with
#    roothash= and systemd.verity_root_{data,hash}=, writes a unit, required by veritysetup.target,
#    whose program the image has;
#  - the tree's /etc/veritytab is in the image byte for byte; one that is a symlink out of the tree
#    (absolute or with "..") is resolved inside the tree, so the host's file never reaches the image;
#  - a tree without the generator (or the program) builds, with a warning naming it, an image
#    without verity; with roothash= (or systemd.verity_usr_data=) in --cmdline the build fails
#    naming the missing file and the word asking for it; rd.systemd.verity=0 asks for nothing.
# Usage: test-foyer-verity.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator
make_tmp test-foyer-verity
use_fake_kernel
gen=usr/lib/systemd/system-generators/systemd-veritysetup-generator
prog=usr/lib/systemd/systemd-veritysetup
{ [ -x "$root/$gen" ] && [ -x "$root/$prog" ]; } || skip "the host has no /$gen or /$prog (systemd without libcryptsetup)"

# A fake dm_verity that uses dm_mod's symbol, as dm_crypt does, so that depmod records the dependency.
mod=$root/usr/lib/modules/$kver/kernel/drivers/md/dm-verity.ko
printf 'license=GPL\0name=dm_verity\0vermagic=%s SMP mod_unload\0' "$kver" >"$tmp/modinfo"
objcopy --remove-section .modinfo --add-section .modinfo="$tmp/modinfo" \
        --set-section-flags .modinfo=alloc,readonly,data "$tmp/dm_crypt.o" "$mod"
echo kernel/drivers/md/dm-verity.ko >>"$root/usr/lib/modules/$kver/modules.order"
depmod -b "$root" "$kver"
grep -q '^kernel/drivers/md/dm-verity.ko: kernel/drivers/md/dm-mod.ko$' "$root/usr/lib/modules/$kver/modules.dep" ||
        fail "fake kernel: depmod did not record dm_verity's dependency on dm_mod"

build() {       # build IMAGE [ARGS...]: foyer build of $root, uncompressed, log in $tmp/build.log
        local img=$1
        shift
        "$foyer" build --root "$root" --kver "$kver" --compress none -o "$img" "$@" >"$tmp/build.log" 2>&1
}
unpack() {      # unpack IMAGE DIR
        mkdir "$2"
        (cd "$2" && cpio -idm --quiet <"$1")
}

hash=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
data=6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3e01
hashdev=6b0f2d4a-1c3e-4f5a-8b7c-9d0e1f2a3e02

echo "== the image holds the tree's veritysetup, dm_verity and the veritytab"
printf '%s\n' '# the tree'\''s own' "data /dev/disk/by-partuuid/$data /dev/disk/by-partuuid/$hashdev $hash" \
        >"$root/etc/veritytab"
build "$tmp/a.img" || { cat "$tmp/build.log"; fail "foyer build"; }
r=$tmp/a
unpack "$tmp/a.img" "$r"
for f in "$gen" "$prog"; do
        [ -x "$r/$f" ] || fail "missing /$f"
        cmp -s "$r/$f" "$root/$f" || fail "/$f is not the tree's"
done
for f in kernel/drivers/md/dm-verity.ko kernel/drivers/md/dm-mod.ko; do
        [ -e "$r/usr/lib/modules/$kver/$f" ] || fail "missing module $f"
done
grep -q '^kernel/drivers/md/dm-verity.ko: kernel/drivers/md/dm-mod.ko$' "$r/usr/lib/modules/$kver/modules.dep" ||
        fail "the image's modules.dep does not say that dm_verity needs dm_mod"
[ -e "$r/usr/lib/systemd/system/veritysetup.target" ] || fail "no veritysetup.target in the image"
[ -L "$r/usr/lib/systemd/system/sysinit.target.wants/veritysetup.target" ] ||
        fail "veritysetup.target is not wanted by sysinit.target in the image"
cmp -s "$root/etc/veritytab" "$r/etc/veritytab" || fail "/etc/veritytab is not the tree's"
"$foyer" ls "$tmp/a.img" >"$tmp/ls" 2>&1 || { cat "$tmp/ls"; fail "foyer ls"; }
grep -q 'systemd-veritysetup-generator$' "$tmp/ls" || fail "foyer ls does not list the generator"

echo "== the generator runs in the image"
mkdir -p "$r/tmp/out"
env -i SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= SYSTEMD_LOG_LEVEL=info \
        SYSTEMD_PROC_CMDLINE="roothash=$hash systemd.verity_root_data=PARTUUID=$data systemd.verity_root_hash=PARTUUID=$hashdev ro" \
        /usr/sbin/chroot "$r" "/$gen" /tmp/out /tmp/out /tmp/out 2>"$tmp/gen.log" ||
        { cat "$tmp/gen.log"; fail "the generator failed in the image"; }
unit=$r/tmp/out/systemd-veritysetup@root.service
[ -f "$unit" ] || { ls -R "$r/tmp/out"; fail "no systemd-veritysetup@root.service"; }
[ -L "$r/tmp/out/veritysetup.target.requires/systemd-veritysetup@root.service" ] ||
        fail "systemd-veritysetup@root.service is not required by veritysetup.target"
exe=$(sed -n 's/^ExecStart=\([^ ]*\) attach .*/\1/p' "$unit")
if [ -z "$exe" ] || [ ! -x "$r$exe" ]; then
        fail "systemd-veritysetup@root.service runs '$exe', which is not in the image"
fi
grep -q "^ExecStart=.* attach 'root' '/dev/disk/by-partuuid/$data' '/dev/disk/by-partuuid/$hashdev' '$hash'" "$unit" ||
        { cat "$unit"; fail "the unit does not attach the data and hash partitions with the root hash"; }
env -i PATH=/usr/bin:/usr/sbin /usr/sbin/chroot "$r" "/$prog" --help >"$tmp/out" 2>&1 ||
        { cat "$tmp/out"; fail "systemd-veritysetup does not run in the image"; }

echo "== a veritytab that links out of the tree"
secret=$tmp/host-veritytab
echo "host-only-secret $hash" >"$secret"
for target in "$secret" "../../../../../../../../..$secret"; do
        ln -sfn "$target" "$root/etc/veritytab"
        rm -rf "$tmp/b" "$tmp/b.img"
        build "$tmp/b.img" || { cat "$tmp/build.log"; fail "foyer build with /etc/veritytab -> $target"; }
        unpack "$tmp/b.img" "$tmp/b"
        if grep -rqs host-only-secret "$tmp/b/etc"; then
                fail "/etc/veritytab -> $target: the host's file reached the image"
        fi
done
rm "$root/etc/veritytab"

echo "== a tree without the generator"
mv "$root/$gen" "$tmp/generator"
build "$tmp/c.img" || { cat "$tmp/build.log"; fail "foyer build without the generator"; }
grep -q "warning: .*/$gen is not there" "$tmp/build.log" || { cat "$tmp/build.log"; fail "no warning naming /$gen"; }
unpack "$tmp/c.img" "$tmp/c"
for f in "$prog" "usr/lib/modules/$kver/kernel/drivers/md/dm-verity.ko"; do
        [ ! -e "$tmp/c/$f" ] || fail "/$f is in an image without the generator"
done
out=$tmp/d.img
if build "$out" --cmdline "ro roothash=$hash"; then
        fail "the build succeeded without /$gen, with roothash= in --cmdline"
fi
grep -q "/$gen is not there, but --cmdline's roothash=$hash asks for dm-verity" "$tmp/build.log" ||
        { cat "$tmp/build.log"; fail "the error does not name /$gen and roothash="; }
[ ! -e "$out" ] || fail "a failed build left $out"
build "$tmp/e.img" --cmdline "roothash=$hash rd.systemd.verity=0" ||
        { cat "$tmp/build.log"; fail "rd.systemd.verity=0 roothash= failed the build without the generator"; }
mv "$tmp/generator" "$root/$gen"

echo "== a tree without systemd-veritysetup"
mv "$root/$prog" "$tmp/program"
if build "$tmp/f.img" --cmdline "rd.systemd.verity-usr-data=PARTUUID=$data"; then
        fail "the build succeeded without /$prog, with rd.systemd.verity-usr-data= in --cmdline"
fi
grep -q "/$prog is not there, but --cmdline's rd.systemd.verity-usr-data=PARTUUID=$data asks" "$tmp/build.log" ||
        { cat "$tmp/build.log"; fail "the error does not name /$prog and the parameter"; }
mv "$tmp/program" "$root/$prog"
echo ok
