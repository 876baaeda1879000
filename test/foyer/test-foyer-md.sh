#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# MD RAID in a built image (docs/kernel-command-line.md, "MD RAID"):
#  - with mdadm in the tree: mdadm, the programs its udev rules run, its rules and the
#    mdadm-last-resort@ timer and service are in the image; the tree's /etc/mdadm/mdadm.conf is
#    in it byte for byte as /etc/foyer/mdadm.conf, and mdadm's two configuration paths link to what
#    foyer-md-generator writes;
#  - run inside the image with rd.md.uuid=, the generator's file is what mdadm finds at
#    /etc/mdadm/mdadm.conf: auto-assembly off, the array named, the tree's ARRAY line commented out;
#  - a tree whose mdadm.conf has a line with a control character or a trailing backslash fails to
#    build, naming the file and line; foyer-md-generator given such a file leaves the line out with a
#    warning naming file and line, and keeps the rest and rd.md.uuid=;
#  - a tree with only /etc/mdadm.conf gives that file; a tree with mdadm's rules and units but
#    without mdadm fails to build, naming a unit that runs it; a tree without the mdadm package gives
#    an image without any of it (and a build that says so).
# Usage: test-foyer-md.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
require_generator foyer-md-generator
make_tmp test-foyer-md
# The modules are not what is tested here: a fake kernel's will do.
use_fake_kernel
[ -x "$root/usr/sbin/mdadm" ] || skip "mdadm is not installed on the host (package mdadm)"

unpack() {      # unpack IMAGE DIR
        mkdir "$2"
        (cd "$2" && zstd -dcq "$1" | cpio -idm --quiet)
}

echo "== a tree with mdadm and /etc/mdadm/mdadm.conf"
mkdir -p "$root/etc/mdadm"
printf '%s\n' '# the tree'\''s own' 'HOMEHOST <system>' 'ARRAY /dev/md/root UUID=3a6e1f52:8c4d4b7e:9f10a2b3:c4d5e6f7' \
        'DEVICE partitions' >"$root/etc/mdadm/mdadm.conf"
"$foyer" build --root "$root" --kver "$kver" -o "$tmp/a.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
r=$tmp/a
unpack "$tmp/a.img" "$r"
for f in usr/sbin/mdadm usr/bin/readlink usr/bin/basename usr/lib/udev/rules.d/63-md-raid-arrays.rules \
         usr/lib/udev/rules.d/64-md-raid-assembly.rules usr/lib/systemd/system/mdadm-last-resort@.timer \
         usr/lib/systemd/system/mdadm-last-resort@.service usr/lib/systemd/system-generators/foyer-md-generator; do
        [ -e "$r/$f" ] || fail "missing /$f"
done
cmp "$root/etc/mdadm/mdadm.conf" "$r/etc/foyer/mdadm.conf" || fail "/etc/foyer/mdadm.conf is not the tree's mdadm.conf"
for l in etc/mdadm/mdadm.conf etc/mdadm.conf; do
        [ "$(readlink "$r/$l")" = /run/systemd/generator/foyer-md/mdadm.conf ] || fail "/$l -> $(readlink "$r/$l")"
done
env -i PATH=/usr/bin:/usr/sbin /usr/sbin/chroot "$r" mdadm --version >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "mdadm does not run in the image"; }

echo "== foyer-md-generator inside the image, rd.md.uuid="
mkdir -p "$r/run/systemd/generator" "$r/run/systemd/generator.early" "$r/run/systemd/generator.late"
env -i SYSTEMD_IN_INITRD=1 SYSTEMD_PROC_CMDLINE="rd.md.uuid=01234567-89ab-cdef-0123-456789abcdef" \
        /usr/sbin/chroot "$r" /usr/lib/systemd/system-generators/foyer-md-generator \
        /run/systemd/generator /run/systemd/generator.early /run/systemd/generator.late 2>"$tmp/gen.log" ||
        { cat "$tmp/gen.log"; fail "foyer-md-generator failed in the image"; }
# What mdadm opens: the link, resolved inside the image.
conf=$(chroot "$r" /usr/bin/readlink -e /etc/mdadm/mdadm.conf) || fail "/etc/mdadm/mdadm.conf dangles after the generator ran"
conf=$r$conf
grep -qx 'AUTO -all' "$conf" || fail "rd.md.uuid=: no AUTO -all"
grep -qx 'ARRAY UUID=01234567:89abcdef:01234567:89abcdef' "$conf" || fail "rd.md.uuid=: no ARRAY line for it"
grep -qx '#foyer: ARRAY /dev/md/root UUID=3a6e1f52:8c4d4b7e:9f10a2b3:c4d5e6f7' "$conf" || fail "the tree's ARRAY line is not commented out"
grep -qx 'HOMEHOST <system>' "$conf" || fail "the tree's HOMEHOST line is gone"

echo "== a tree whose mdadm.conf has a control character or a trailing backslash"
# foyer-md-generator would have to leave such a line out at boot: the build refuses the file, naming it
# and the line, instead of an image that loses it (or, before, the whole file and rd.md.uuid= with it).
good=$tmp/good-mdadm.conf
cp "$root/etc/mdadm/mdadm.conf" "$good"
for bad in 'MAILADDR root\0033[2J' 'DEVICE partitions\r' 'POLICY action=re-add\0000x' "DEVICE /dev/sd*\\\\" 'HOMEHOST \0302\0233x'; do
        { head -n 2 "$good"; printf '%b\n' "$bad"; tail -n +3 "$good"; } >"$root/etc/mdadm/mdadm.conf"
        # U+009B passes: the check is the unit files' (C0 controls, DEL, a trailing backslash).
        if [ "$bad" = 'HOMEHOST \0302\0233x' ]; then
                "$foyer" build --root "$root" --kver "$kver" -o "$tmp/bad.img" >"$tmp/build.log" 2>&1 ||
                        { cat "$tmp/build.log"; fail "a C1 control in mdadm.conf failed the build"; }
                continue
        fi
        if "$foyer" build --root "$root" --kver "$kver" -o "$tmp/bad.img" >"$tmp/build.log" 2>&1; then
                fail "the build took an mdadm.conf with '$bad' on line 3"
        fi
        grep -qF "$root/etc/mdadm/mdadm.conf:3: " "$tmp/build.log" ||
                { cat "$tmp/build.log"; fail "the error for '$bad' does not name $root/etc/mdadm/mdadm.conf:3"; }
done
cp "$good" "$root/etc/mdadm/mdadm.conf"

echo "== foyer-md-generator on an image's mdadm.conf with such a line (an image made otherwise)"
# The line is left out with a warning naming the file and line, its entry commented out; the rest of the
# file and the rd.md.uuid= restriction stay (the golden cases md/11-* and md/12-* show the whole file).
printf 'HOMEHOST <system>\nARRAY /dev/md/x UUID=3a6e1f52:8c4d4b7e:9f10a2b3:c4d5e6f7\r\n  name=any:x\nMAILADDR root\n' >"$tmp/image-mdadm.conf"
gen=$tmp/gen
mkdir -p "$gen/normal" "$gen/early" "$gen/late"
env -i SYSTEMD_IN_INITRD=1 SYSTEMD_LOG_LEVEL=info FOYER_MDADM_IMAGE_CONF="$tmp/image-mdadm.conf" \
        SYSTEMD_PROC_CMDLINE="rd.md.uuid=01234567-89ab-cdef-0123-456789abcdef" \
        "$FOYER_GENERATOR_DIR/foyer-md-generator" "$gen/normal" "$gen/early" "$gen/late" 2>"$tmp/gen.log" ||
        { cat "$tmp/gen.log"; fail "foyer-md-generator failed on an mdadm.conf with a CR"; }
grep -qF "$tmp/image-mdadm.conf:2: " "$tmp/gen.log" || { cat "$tmp/gen.log"; fail "no warning naming $tmp/image-mdadm.conf:2"; }
conf=$gen/normal/foyer-md/mdadm.conf
[ -f "$conf" ] || fail "no mdadm.conf written"
grep -qx 'AUTO -all' "$conf" || fail "rd.md.uuid=: no AUTO -all"
grep -qx 'ARRAY UUID=01234567:89abcdef:01234567:89abcdef' "$conf" || fail "rd.md.uuid=: no ARRAY line for it"
grep -qx 'HOMEHOST <system>' "$conf" || fail "the HOMEHOST line is gone"
grep -qx 'MAILADDR root' "$conf" || fail "the MAILADDR line is gone"
grep -qx '#foyer:   name=any:x' "$conf" || fail "the rest of the bad entry is not commented out"
if LC_ALL=C grep -q "$(printf '\r')" "$conf"; then fail "the CR reached the generated mdadm.conf"; fi

echo "== a tree with /etc/mdadm.conf only"
rm "$root/etc/mdadm/mdadm.conf"
echo 'ARRAY /dev/md/alt UUID=fedcba98:76543210:fedcba98:76543210' >"$root/etc/mdadm.conf"
"$foyer" build --root "$root" --kver "$kver" -o "$tmp/b.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
unpack "$tmp/b.img" "$tmp/b"
cmp "$root/etc/mdadm.conf" "$tmp/b/etc/foyer/mdadm.conf" || fail "/etc/foyer/mdadm.conf is not the tree's /etc/mdadm.conf"

echo "== a tree with mdadm's units but without mdadm"
mv "$root/usr/sbin/mdadm" "$tmp/mdadm"
if "$foyer" build --root "$root" --kver "$kver" -o "$tmp/x.img" >"$tmp/build.log" 2>&1; then
        fail "the build succeeded without /usr/sbin/mdadm"
fi
grep -F 'Unit mdadm-last-resort@.service: ' "$tmp/build.log" | grep -qF ' /usr/sbin/mdadm ' ||
        { cat "$tmp/build.log"; fail "the error does not name mdadm-last-resort@.service and /usr/sbin/mdadm"; }

echo "== a tree without the mdadm package"
rm -f "$root"/usr/lib/udev/rules.d/*-md-*.rules "$root"/usr/lib/systemd/system/md*.service \
      "$root"/usr/lib/systemd/system/md*.timer "$root"/usr/lib/systemd/system/mdadm*
"$foyer" build --root "$root" --kver "$kver" -o "$tmp/c.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
grep -q 'mdadm is not installed' "$tmp/build.log" || fail "the build does not say that the image has no MD support"
unpack "$tmp/c.img" "$tmp/c"
for f in usr/sbin/mdadm etc/foyer/mdadm.conf etc/mdadm/mdadm.conf etc/mdadm.conf usr/lib/udev/rules.d/64-md-raid-assembly.rules; do
        if [ -e "$tmp/c/$f" ] || [ -L "$tmp/c/$f" ]; then fail "/$f is in an image of a tree without mdadm"; fi
done
echo ok
