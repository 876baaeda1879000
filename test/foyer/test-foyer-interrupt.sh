#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An interrupted foyer leaves nothing behind and keeps the previous output:
#  - SIGTERM while depmod's temporary tree exists (strace holds foyer at the wait4() for depmod):
#    no foyer-* left in $TMPDIR, which foyer honours; the previous image is byte-identical;
#  - SIGINT, then SIGKILL, while the finished image with a key file waits to be published
#    (strace holds foyer at the fsync() of the image): the key's bytes are in no file of the
#    output directory or $TMPDIR, before and after; the previous image is byte-identical;
#  - foyer uki with a key file, held in sbsign (a stand-in in PATH that waits), SIGTERM and
#    SIGKILL: the key's bytes are in no file of the output directory, $TMPDIR or /var/tmp/foyer-*,
#    and the previous UKI is byte-identical;
#  - without O_TMPFILE (NO-TMPFILE-SHIM, an LD_PRELOAD library that fails it as vfat does), SIGKILL
#    twice while the image with a key waits to be published: one temporary file is left, the fixed
#    .#initrd.img.foyer-tmp, that no group or other may read, and the next build removes it;
#  - as root, with mkfs.vfat and a loop device: the same on a vfat file system mounted fmask=0077,
#    and mounted fmask=0022 (others may read every file) an image with a key is refused before any
#    key byte is written there.
# No hook in foyer exists for this: strace's syscall delay and a slow sbsign make it deterministic.
# Usage: test-foyer-interrupt.sh FOYER GENERATOR-DIR UNIT-DIR STUB NO-TMPFILE-SHIM
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$1" "$2" "$3"
stub=$4
shim=${5:-}
require_generator
require_kernel
make_tmp test-foyer-interrupt
vfat=
trap 'kill "$(cat "$tmp/sbsign.pid" 2>/dev/null)" 2>/dev/null || true; [ -z "$vfat" ] || umount "$vfat"; rm -rf "$tmp"' EXIT
command -v strace >/dev/null || skip "strace missing"
strace -f -qq -o /dev/null -e trace=getpid -e inject=getpid:delay_enter=1 true 2>/dev/null ||
        skip "strace cannot trace or delay here"

export TMPDIR=$tmp/tmpdir
mkdir "$TMPDIR" "$tmp/out"
key=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$key" > "$tmp/data.key"
head -c 4096 /dev/urandom > "$tmp/old"

# The key's bytes in no file under the given directories (and the key file itself aside).
no_key_anywhere() {
        local hits
        hits=$(grep -rlF -- "$key" "$@" 2>/dev/null | grep -vx "$tmp/data.key" || true)
        [ -z "$hits" ] || fail "$1: key bytes in $hits"
}
# wait_for TEST...: polls up to 60 s.
wait_for() {
        local _
        for _ in $(seq 600); do
                "$@" && return 0
                sleep 0.1
        done
        return 1
}
# The process strace runs (its only child).
traced_pid() { pgrep -P "$1" | head -n1; }

echo "== SIGTERM while depmod's tree exists"
cp "$tmp/old" "$tmp/out/initrd.img"
strace -f -qq -o /dev/null -e trace=wait4 -e inject=wait4:delay_enter=4000000 \
        "$foyer" build --kver "$kver" --compress none -o "$tmp/out/initrd.img" 2>"$tmp/err" &
spid=$!
depmod_done() { compgen -G "$TMPDIR/foyer-depmod.*/lib/modules/$kver/modules.dep" >/dev/null; }
wait_for depmod_done || { kill -KILL "$spid" 2>/dev/null || true; cat "$tmp/err"; fail "no depmod tree in \$TMPDIR (TMPDIR not honoured?)"; }
kill -TERM "$(traced_pid "$spid")"
rc=0; wait "$spid" || rc=$?
[ "$rc" -ne 0 ] || fail "the interrupted build exited 0"
[ -z "$(ls -A "$TMPDIR")" ] || fail "left in \$TMPDIR: $(ls -A "$TMPDIR")"
[ "$(ls -A "$tmp/out")" = initrd.img ] || fail "left in the output directory: $(ls -A "$tmp/out")"
cmp -s "$tmp/old" "$tmp/out/initrd.img" || fail "the previous image changed"

echo "== SIGINT, then SIGKILL, while the image with a key waits to be published"
for sig in INT KILL; do
        strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=4000000:when=1 \
                "$foyer" build --kver "$kver" --compress none -o "$tmp/out/initrd.img" \
                --add-key-file "$tmp/data.key:/etc/keys/data.key" 2>"$tmp/err" &
        spid=$!
        in_fsync() { grep -q 'holds key files' "$tmp/err"; }
        wait_for in_fsync || { kill -KILL "$spid" 2>/dev/null || true; cat "$tmp/err"; fail "the build did not reach the commit"; }
        sleep 0.5
        no_key_anywhere "$tmp/out" "$TMPDIR"
        kill -"$sig" "$(traced_pid "$spid")"
        rc=0; wait "$spid" || rc=$?
        [ "$rc" -ne 0 ] || fail "the build killed by SIG$sig exited 0"
        no_key_anywhere "$tmp/out" "$TMPDIR"
        [ "$(ls -A "$tmp/out")" = initrd.img ] || fail "SIG$sig: left in the output directory: $(ls -A "$tmp/out")"
        [ -z "$(ls -A "$TMPDIR")" ] || fail "SIG$sig: left in \$TMPDIR: $(ls -A "$TMPDIR")"
        cmp -s "$tmp/old" "$tmp/out/initrd.img" || fail "SIG$sig: the previous image changed"
done

echo "== foyer uki with a key file, held in sbsign"
kernel=/boot/vmlinuz-$kver
if [ -r "$stub" ] && [ -r "$kernel" ]; then
        mkdir "$tmp/bin"
        cat > "$tmp/bin/sbsign" <<EOF
#!/bin/sh
echo \$\$ > "$tmp/sbsign.pid"
exec sleep 60
EOF
        chmod +x "$tmp/bin/sbsign"
        touch "$tmp/sign.key" "$tmp/sign.crt"
        cp "$tmp/old" "$tmp/out/u.efi"
        for sig in TERM KILL; do
                rm -f "$tmp/sbsign.pid"
                PATH=$tmp/bin:$PATH "$foyer" uki -o "$tmp/out/u.efi" --stub "$stub" --kernel "$kernel" \
                        --kver "$kver" --compress none --add-key-file "$tmp/data.key:/etc/keys/data.key" \
                        --sign-key "$tmp/sign.key" --sign-cert "$tmp/sign.crt" 2>"$tmp/err" &
                fpid=$!
                wait_for test -s "$tmp/sbsign.pid" || { kill -KILL "$fpid" 2>/dev/null || true; cat "$tmp/err"; fail "sbsign never ran"; }
                no_key_anywhere "$tmp/out" "$TMPDIR" /var/tmp/foyer-uki.*
                kill -"$sig" "$fpid"
                rc=0; wait "$fpid" || rc=$?
                kill "$(cat "$tmp/sbsign.pid")" 2>/dev/null || true
                [ "$rc" -ne 0 ] || fail "foyer uki killed by SIG$sig exited 0"
                no_key_anywhere "$tmp/out" "$TMPDIR" /var/tmp/foyer-uki.*
                # shellcheck disable=SC2012 # the names to expect are plain
                [ "$(ls -A "$tmp/out" | paste -sd ' ')" = "initrd.img u.efi" ] || fail "SIG$sig: left in the output directory: $(ls -A "$tmp/out")"
                [ -z "$(ls -A "$TMPDIR")" ] || fail "SIG$sig: left in \$TMPDIR: $(ls -A "$TMPDIR")"
                cmp -s "$tmp/old" "$tmp/out/u.efi" || fail "SIG$sig: the previous UKI changed"
        done
else
        echo "no stub or kernel image: foyer uki not checked"
fi

# kill_in_commit DIR PRELOAD: a build of DIR/initrd.img with the key, SIGKILLed while it waits in
# the fsync() of the finished image (PRELOAD: the shim, or nothing).
kill_in_commit() {
        local spid rc
        strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=4000000:when=1 ${2:+-E LD_PRELOAD="$2"} \
                "$foyer" build --kver "$kver" --compress none -o "$1/initrd.img" \
                --add-key-file "$tmp/data.key:/etc/keys/data.key" 2>"$tmp/err" &
        spid=$!
        in_fsync() { grep -q 'holds key files' "$tmp/err"; }
        wait_for in_fsync || { kill -KILL "$spid" 2>/dev/null || true; cat "$tmp/err"; fail "the build did not reach the commit"; }
        sleep 0.5
        kill -KILL "$(traced_pid "$spid")"
        rc=0; wait "$spid" || rc=$?
        [ "$rc" -ne 0 ] || fail "the build killed by SIGKILL exited 0"
}
# left_after_kill DIR: after two SIGKILLed builds, at most one temporary file, the fixed one, kept
# from group and others; the previous image whole.
left_after_kill() {
        local f n=0
        for f in "$1"/.[!.]* "$1"/*; do
                [ -e "$f" ] || continue
                [ "$f" = "$1/initrd.img" ] && continue
                n=$((n + 1))
                [ $((0$(stat -c %a "$f") & 077)) = 0 ] || fail "$f, left by the killed build, has mode $(stat -c %a "$f")"
        done
        [ "$n" -le 1 ] || fail "$n temporary files left in $1: $(ls -A "$1")"
        [ "$n" = 0 ] || [ -e "$1/.#initrd.img.foyer-tmp" ] || fail "left in $1: $(ls -A "$1"), not .#initrd.img.foyer-tmp"
        cmp -s "$tmp/old" "$1/initrd.img" || fail "the previous image in $1 changed"
}
# next_build_cleans DIR PRELOAD: the next build (without the key) removes the leftover, and says so.
next_build_cleans() {
        env ${2:+LD_PRELOAD="$2"} "$foyer" build --kver "$kver" --compress none -o "$1/initrd.img" 2>"$tmp/err" ||
                { cat "$tmp/err"; fail "the build after the killed ones failed"; }
        [ "$(ls -A "$1")" = initrd.img ] || fail "left in $1 after the next build: $(ls -A "$1")"
        grep -q "Removed $1/.#initrd.img.foyer-tmp, left by an interrupted build" "$tmp/err" ||
                { cat "$tmp/err"; fail "the next build does not say it removed the leftover"; }
        no_key_anywhere "$1" "$TMPDIR"
}

echo "== without O_TMPFILE: SIGKILL twice while the image with a key waits to be published"
if [ -r "$shim" ]; then
        mkdir "$tmp/notmp"
        cp "$tmp/old" "$tmp/notmp/initrd.img"
        for _ in 1 2; do
                kill_in_commit "$tmp/notmp" "$shim"
                left_after_kill "$tmp/notmp"
        done
        [ -e "$tmp/notmp/.#initrd.img.foyer-tmp" ] || fail "no temporary file: the shim did not take O_TMPFILE away"
        next_build_cleans "$tmp/notmp" "$shim"
else
        echo "no O_TMPFILE shim given: not checked"
fi

echo "== vfat"
if [ "$(id -u)" != 0 ] || ! command -v mkfs.vfat >/dev/null; then
        echo "not root, or no mkfs.vfat (dosfstools): not checked"
elif ! { truncate -s 64M "$tmp/vfat.img" && mkfs.vfat "$tmp/vfat.img" >/dev/null && mkdir "$tmp/esp" &&
         mount -o loop,fmask=0022,dmask=0022 "$tmp/vfat.img" "$tmp/esp"; }; then
        echo "cannot mount a vfat image here: not checked"
else
        vfat=$tmp/esp
        cp "$tmp/old" "$tmp/esp/initrd.img"
        echo "-- fmask=0022: an image with a key is refused"
        rc=0
        "$foyer" build --kver "$kver" --compress none -o "$tmp/esp/initrd.img" \
                --add-key-file "$tmp/data.key:/etc/keys/data.key" 2>"$tmp/err" || rc=$?
        [ "$rc" -ne 0 ] || fail "an image with a key was written where others may read it"
        grep -q "holds keys, and a new file in $tmp/esp can be read by others there" "$tmp/err" || { cat "$tmp/err"; fail "no reason given"; }
        [ "$(ls -A "$tmp/esp")" = initrd.img ] || fail "left in the vfat directory: $(ls -A "$tmp/esp")"
        no_key_anywhere "$tmp/esp"
        cmp -s "$tmp/old" "$tmp/esp/initrd.img" || fail "the previous image changed"
        echo "-- fmask=0077: SIGKILL twice, then the next build"
        umount "$tmp/esp"
        vfat=
        mount -o loop,fmask=0077,dmask=0077 "$tmp/vfat.img" "$tmp/esp"
        vfat=$tmp/esp
        for _ in 1 2; do
                kill_in_commit "$tmp/esp" ""
                left_after_kill "$tmp/esp"
        done
        next_build_cleans "$tmp/esp" ""
fi
echo ok
