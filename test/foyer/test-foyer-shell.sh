#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shells of an image and --no-shell: a default image carries /bin/sh, sulogin, debug-shell.service
# and the breakpoint shell, which (run in the unpacked image) says where the boot stopped and how to
# go on; an image built with --no-shell (or NoShell=yes) carries none of them but the marker
# /etc/foyer/no-shell, with which foyer-debug-generator turns rd.shell=1 and rd.break into the
# emergency action; a bad NoShell= value fails the build naming the setting.
# Usage: test-foyer-shell.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
generator=$FOYER_GENERATOR_DIR/foyer-debug-generator
require_generator foyer-debug-generator
make_tmp test-foyer-shell
# The modules are not what is tested here: a fake kernel's will do.
use_fake_kernel
shells="usr/bin/sh usr/bin/dash usr/sbin/sulogin usr/lib/systemd/systemd-sulogin-shell
        usr/lib/foyer/foyer-break-shell usr/lib/systemd/system/debug-shell.service"

unpack() {
        mkdir "$tmp/$2"
        (cd "$tmp/$2" && zstd -dcq "$tmp/$1" | cpio -idm --quiet)
}

echo "== default image"
"$foyer" build --root "$root" --kver "$kver" -o "$tmp/std.img" --add-module ext4 >/dev/null 2>&1 || fail "default build failed"
unpack std.img std
for f in $shells; do
        [[ -e $tmp/std/$f || -L $tmp/std/$f ]] || fail "default image lacks $f"
done
[[ -e $tmp/std/etc/foyer/no-shell ]] && fail "default image has the --no-shell marker"
[[ $(stat -c %a "$tmp/std/usr/lib/foyer/foyer-break-shell") == 755 ]] || fail "foyer-break-shell is not executable"
# shellcheck disable=SC2016 # $((6*7)) is for the break shell to expand
out=$(printf 'echo IN-SHELL-$((6*7))\nexit\n' |
      env -i FOYER_BREAK=rd.break=pre-mount FOYER_BREAK_WHERE="the root device is there" \
              FOYER_BREAK_NEXT=sysroot.mount /usr/sbin/chroot "$tmp/std" /usr/lib/foyer/foyer-break-shell 2>&1) ||
        fail "foyer-break-shell failed: $out"
for want in "foyer: rd.break=pre-mount: the boot stopped here." "done: the root device is there" \
            "next: sysroot.mount" 'type "exit"' "IN-SHELL-42"; do
        grep -qF -- "$want" <<<"$out" || fail "foyer-break-shell output lacks '$want': $out"
done

echo "== --no-shell and NoShell=yes"
"$foyer" build --root "$root" --kver "$kver" -o "$tmp/ns.img" --add-module ext4 --no-shell >/dev/null 2>&1 || fail "--no-shell build failed"
mkdir -p "$tmp/cfg/etc/foyer"
# lib.sh's configuration (zstd's level) and NoShell=yes: the same image as --no-shell with lib.sh's.
{ cat "$FOYER_CONFIG_ROOT/etc/foyer/foyer.conf"; printf 'NoShell=yes\n'; } >"$tmp/cfg/etc/foyer/foyer.conf"
FOYER_CONFIG_ROOT=$tmp/cfg "$foyer" build --root "$root" --kver "$kver" -o "$tmp/ns2.img" --add-module ext4 >/dev/null 2>&1 ||
        fail "NoShell=yes build failed"
cmp -s "$tmp/ns.img" "$tmp/ns2.img" || fail "--no-shell and NoShell=yes give different images"
unpack ns.img ns
for f in $shells usr/bin/bash usr/bin/rbash usr/bin/busybox; do
        [[ -e $tmp/ns/$f || -L $tmp/ns/$f ]] && fail "--no-shell image has $f"
done
[[ -s $tmp/ns/etc/foyer/no-shell ]] || fail "--no-shell image lacks /etc/foyer/no-shell"
# A shell added by hand is caught too, whichever planner or option brings it.
if "$foyer" build --root "$root" --kver "$kver" -o "$tmp/ns3.img" --no-shell --add-file /usr/bin/dash:/usr/bin/sh \
        >"$tmp/ns3.log" 2>&1; then
        fail "--no-shell accepted --add-file of a shell"
fi
grep -q -- "--no-shell: /usr/bin/sh is in the image" "$tmp/ns3.log" || fail "--no-shell refusal does not name /usr/bin/sh"
[[ -e $tmp/ns3.img ]] && fail "--no-shell left an image behind after refusing"

echo "== the generator honours the image's marker over the command line"
mkdir -p "$tmp/out"
env -i SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= FOYER_CMDLINE_DIR=/nonexistent \
        FOYER_NO_SHELL_MARKER="$tmp/ns/etc/foyer/no-shell" \
        SYSTEMD_PROC_CMDLINE="rd.shell=1 rd.break=pre-mount rd.systemd.debug_shell rd.emergency=poweroff" \
        "$generator" "$tmp/out" 2>"$tmp/gen.log" || fail "generator failed: $(cat "$tmp/gen.log")"
grep -qx 'ExecStart=-systemctl --no-block poweroff' "$tmp/out/emergency.service.d/50-no-shell.conf" ||
        fail "no emergency action drop-in"
[[ $(readlink "$tmp/out/debug-shell.service") == /dev/null ]] || fail "debug-shell.service not masked"
[[ $(readlink "$tmp/out/foyer-break@.service") == /dev/null ]] || fail "foyer-break@.service not masked"
compgen -G "$tmp/out/*foyer-break@pre-mount*" >/dev/null && fail "a breakpoint was written"
grep -q "Ignoring rd.shell: this image was built with --no-shell" "$tmp/gen.log" || fail "rd.shell=1 not reported as ignored"

echo "== bad NoShell="
printf '[Build]\nNoShell=maybe\n' >"$tmp/cfg/etc/foyer/foyer.conf"
if FOYER_CONFIG_ROOT=$tmp/cfg "$foyer" build --root "$root" --kver "$kver" -o "$tmp/bad.img" >"$tmp/bad.log" 2>&1; then
        fail "NoShell=maybe was accepted"
fi
grep -q 'NoShell= takes a boolean, not "maybe"' "$tmp/bad.log" || fail "unclear error: $(cat "$tmp/bad.log")"
[[ -e $tmp/bad.img ]] && fail "output written despite the error"
echo "ok"
