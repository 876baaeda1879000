#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel module configuration in a built image (docs/kernel-command-line.md, "rd.driver.*"):
#  - the tree's /usr/lib/modprobe.d/*.conf and /etc/modprobe.d/*.conf are in the image, byte for
#    byte, and their options apply: modprobe inside the unpacked image passes them to insmod;
#  - foyer-driver-generator and the templates foyer-driver-pre@.service and foyer-driver-post@.service
#    are there, and /etc/modprobe.d/foyer-driver.conf links to what the generator writes;
#  - run inside the image with rd.driver.blacklist=loop, the generator's file reaches modprobe through
#    that link: "modprobe -b" (udev's and modprobe@.service's way) refuses loop, a plain
#    "modprobe loop" (rd.driver.pre=, rd.driver.post=, as dracut's) still loads it.
# Usage: test-foyer-modprobe-d.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator foyer-driver-generator
make_tmp test-foyer-modprobe-d
# The modules are not what is tested here: a fake kernel's will do.
use_fake_kernel

# The tree's own configuration, which differs from the host's (replaced, never written through the
# hard links of use_fake_kernel's copy).
mkdir -p "$root/usr/lib/modprobe.d" "$root/etc/modprobe.d"
echo 'options loop max_loop=42' >"$root/usr/lib/modprobe.d/foyer-test-usr.conf"
echo 'options dm_mod major=7' >"$root/etc/modprobe.d/foyer-test-etc.conf"
echo 'options dm_mod major=8' >"$root/etc/modprobe.d/foyer-test-ignored.txt"

"$foyer" build --root "$root" --kver "$kver" -o "$tmp/a.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
mkdir "$tmp/root"
(cd "$tmp/root" && zstd -dcq "$tmp/a.img" | cpio -idm --quiet)
r=$tmp/root

for f in $(cd "$root" && find usr/lib/modprobe.d etc/modprobe.d -name '*.conf'); do
        [ -f "$r/$f" ] || fail "the tree's /$f is not in the image"
        cmp -s "$root/$f" "$r/$f" || fail "/$f differs from the tree's"
done
[ ! -e "$r/etc/modprobe.d/foyer-test-ignored.txt" ] || fail "a modprobe.d file not named *.conf is in the image"
for f in usr/lib/systemd/system-generators/foyer-driver-generator \
         usr/lib/systemd/system/foyer-driver-pre@.service usr/lib/systemd/system/foyer-driver-post@.service; do
        [ -e "$r/$f" ] || fail "missing /$f"
done
[ "$(readlink "$r/etc/modprobe.d/foyer-driver.conf")" = /run/systemd/generator/foyer-driver/modprobe.conf ] ||
        fail "/etc/modprobe.d/foyer-driver.conf -> $(readlink "$r/etc/modprobe.d/foyer-driver.conf")"

# The options of the image's modprobe.d reach insmod.
modprobe_in_image() {
        env -i PATH=/usr/bin:/usr/sbin /usr/sbin/chroot "$r" modprobe -S "$kver" -n -v "$@" 2>&1
}
modprobe_in_image loop | grep -q 'loop\.ko max_loop=42 *$' || fail "options of /usr/lib/modprobe.d do not apply: $(modprobe_in_image loop)"
modprobe_in_image dm_mod | grep -q 'dm-mod\.ko major=7 *$' || fail "options of /etc/modprobe.d do not apply: $(modprobe_in_image dm_mod)"

# Before the generator ran (the link dangles), "modprobe -b" loads both: the control of the checks below.
modprobe_in_image -b loop | grep -q 'loop\.ko' || fail "modprobe -b loop without a blacklist: $(modprobe_in_image -b loop)"
modprobe_in_image -b dm_mod | grep -q 'dm-mod\.ko' || fail "modprobe -b dm_mod without a blacklist: $(modprobe_in_image -b dm_mod)"

# The generator, run inside the image, writes where the link points.
mkdir -p "$r/run/systemd/generator" "$r/run/systemd/generator.early" "$r/run/systemd/generator.late"
env -i SYSTEMD_IN_INITRD=1 SYSTEMD_PROC_CMDLINE="rd.driver.blacklist=loop rd.driver.post=dm_mod" SYSTEMD_EFI_OPTIONS= \
        /usr/sbin/chroot "$r" /usr/lib/systemd/system-generators/foyer-driver-generator \
        /run/systemd/generator /run/systemd/generator.early /run/systemd/generator.late 2>"$tmp/gen.log" ||
        { cat "$tmp/gen.log"; fail "foyer-driver-generator failed in the image"; }
[ -L "$r/run/systemd/generator/initrd-root-device.target.wants/foyer-driver-post@dm_mod.service" ] ||
        fail "no foyer-driver-post@dm_mod.service linked"
modprobe_in_image -b loop | grep -q 'loop\.ko' && fail "rd.driver.blacklist=loop: modprobe -b still loads loop"
modprobe_in_image -b dm_mod | grep -q 'dm-mod\.ko' && fail "rd.driver.post=dm_mod: modprobe -b (udev) still loads dm_mod early"
modprobe_in_image loop | grep -q 'loop\.ko max_loop=42 *$' || fail "an explicit modprobe loop no longer loads it: $(modprobe_in_image loop)"
modprobe_in_image dm_mod | grep -q 'dm-mod\.ko major=7 *$' || fail "rd.driver.post=dm_mod: the explicit load fails: $(modprobe_in_image dm_mod)"
echo ok
