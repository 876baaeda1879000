#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A --root tree is hostile (docs/security.md, "What a --root tree may do"). The builder runs as root;
# whoever controls the tree must not get a byte of the build host into the image, nor make the build
# write anything outside the tree's SSH key directory and the output, nor hang it.
#
# Every attack points at OUTSIDE, a directory beside the tree standing for the build host: its files
# are copies of what the tree's files would be, with a marker appended, so that an attack that works
# yields a good image carrying the marker. After every build OUTSIDE must be as it was, the image
# (uncompressed) must not hold the marker, and the build must end (a FIFO once hung it forever).
#
#  1. the SSH host-key directory: symlinks at the keys, their .pub, every temporary name; a key that is
#     a link (absolute, ../); etc/foyer a link with ".." after a missing component;
#  2. special files: a FIFO or a device node (/dev/zero) at a library's name, in the module directory
#     (which libkmod opens itself) and at etc/crypttab;
#  3. etc/modprobe.d a link to the host's, and a modprobe.d file linking out (libkmod read them);
#  4. foyer uki --root: boot/ a link that dangles inside the tree but not on the host;
#  5. the property: FOYER_HOSTILE_ROUNDS (default 16) builds from copies of the tree with random
#     mutations (links out of the tree, absolute and ../, links past a missing directory, FIFOs,
#     device nodes, a directory on the way replaced by a link to OUTSIDE), half of them with the tree
#     changed during the build (a directory swapped with a link to OUTSIDE in a loop). The seed is
#     printed; FOYER_HOSTILE_SEED replays a run.
# Usage: test-foyer-hostile-tree.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR [STUB]
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
export FOYER_HELPER_DIR=${4:?usage: test-foyer-hostile-tree.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR [STUB]}
stub=${5:-}
[ "$(id -u)" = 0 ] || skip "not root (the builder runs as root; device nodes need it)"
require_generator
make_tmp test-foyer-hostile-tree
use_fake_kernel
chmod 0755 "$tmp"

outside=$tmp/outside
mkdir -p "$outside"
marker="FOYER-HOSTILE-$RANDOM$RANDOM$RANDOM"
libdir=usr/lib/x86_64-linux-gnu
[ -e "$root/$libdir/libc.so.6" ] || skip "the tree has no $libdir/libc.so.6"

# outside_copy TREE-FILE NAME: OUTSIDE/NAME, the tree file's bytes and the marker.
outside_copy() {
        mkdir -p "$(dirname "$outside/$2")"
        { cat "$1"; printf '%s' "$marker"; } >"$outside/$2"
        chmod "$(stat -c %a "$1")" "$outside/$2"
}
# plant TREE TREE-FILE NAME: OUTSIDE/NAME as outside_copy makes it, and the same path inside the tree
# (TREE/OUTSIDE/NAME) with the tree file's own bytes: a link to OUTSIDE/NAME then resolves, inside the
# tree, to a good file, and the build goes on; the image must hold the tree's bytes, not OUTSIDE's.
plant() {
        outside_copy "$2" "$3"
        mkdir -p "$(dirname "$1$outside/$3")"
        cp -p "$2" "$1$outside/$3"
}
# What OUTSIDE holds, to the byte and the mode: compared after each build.
outside_state() { (cd "$outside" && find . -printf '%p %y %m %s %l\n' | sort && find . -type f -print0 | sort -z | xargs -0r sha256sum); }

# build NAME ARGS...: foyer build of an uncompressed image $tmp/NAME.img, in at most 120 s; sets rc.
build() {
        local name=$1
        shift
        rc=0
        timeout -k 5 120 "$foyer" build --kver "$kver" --compress none -o "$tmp/$name.img" "$@" >"$tmp/$name.log" 2>&1 || rc=$?
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
                tail -n 5 "$tmp/$name.log"
                fail "$name: the build hung (killed after 120 s)"
        fi
        [ "$rc" -lt 128 ] || { tail -n 20 "$tmp/$name.log"; fail "$name: the build died of signal $((rc - 128))"; }
        if [ "$rc" -eq 0 ] && grep -qaF "$marker" "$tmp/$name.img"; then
                fail "$name: bytes from outside the tree are in the image"
        fi
        [ "$(outside_state)" = "$before" ] || { diff <(echo "$before") <(outside_state) || true; fail "$name: a file outside the tree was written"; }
        # Nothing beside the output: no temporary file left in its directory.
        if compgen -G "$tmp/.*$name*" >/dev/null || compgen -G "$tmp/$name.img.*" >/dev/null; then
                find "$tmp" -maxdepth 1 -name "*$name*"
                fail "$name: a temporary file was left beside the output"
        fi
}
expect_ok() { [ "$rc" -eq 0 ] || { tail -n 20 "$tmp/$1.log"; fail "$1: build failed"; }; }
expect_refused() {
        local name=$1 pattern=$2
        [ "$rc" -ne 0 ] || fail "$name: the build succeeded"
        [ ! -e "$tmp/$name.img" ] || fail "$name: an image was written"
        grep -qE -- "$pattern" "$tmp/$name.log" || { cat "$tmp/$name.log"; fail "$name: no message matching '$pattern'"; }
        echo "   refused: $(grep -E -- "$pattern" "$tmp/$name.log" | head -n 1)"
}
# A copy of the tree (hard links: files are replaced, never written in place).
copy_tree() { rm -rf "$2" && cp -al "$1" "$2"; }

ssh=
if [ -x "$root/usr/sbin/dropbear" ] && command -v dropbearkey >/dev/null; then
        ssh=1
        printf 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPJ7F2c0GfXuUS4y9cP6c8vQ0Pp4lQnPqk3G2nYH3k8f test\n' >"$tmp/authorized_keys"
        dropbearkey -t ed25519 -f "$outside/host_key" >/dev/null 2>&1 || fail "dropbearkey"
        printf '%s' "$marker" >>"$outside/host_key"
fi
printf 'VICTIM %s\n' "$marker" >"$outside/victim"
chmod 0640 "$outside/victim"
outside_copy "$root/$libdir/libc.so.6" libc.so.6
before=$(outside_state)

echo "== a clean tree builds"
build clean --root "$root"
expect_ok clean
"$foyer" ls "$tmp/clean.img" | awk '$1 ~ /^-/ {print $NF}' >"$tmp/clean.list"
[ -s "$tmp/clean.list" ] || fail "foyer ls listed no files"

if [ -n "$ssh" ]; then
        echo "== 1. the SSH host-key directory"
        t=$tmp/ssh-tree
        copy_tree "$root" "$t"
        keys=$t/etc/foyer/ssh
        mkdir -p "$keys"
        for k in dropbear_ed25519_host_key dropbear_ecdsa_host_key; do
                for n in "$k.pub" "$k.pub.new" ".$k.new" ".$k.pub.new"; do
                        ln -s "$outside/victim" "$keys/$n"
                done
        done
        build ssh-links --root "$t" --ssh-unlock "$tmp/authorized_keys"
        expect_ok ssh-links
        for k in dropbear_ed25519_host_key dropbear_ecdsa_host_key; do
                if [ ! -f "$keys/$k" ] || [ -L "$keys/$k" ] || [ "$(stat -c %a "$keys/$k")" != 600 ]; then
                        fail "$k not made 0600 in the tree"
                fi
                if [ ! -f "$keys/$k.pub" ] || [ -L "$keys/$k.pub" ]; then
                        fail "$k.pub is not a file of the tree"
                fi
        done

        for link in "$outside/host_key" "../../../../../../../../../..$outside/host_key"; do
                rm -f "$keys/dropbear_ed25519_host_key"
                ln -s "$link" "$keys/dropbear_ed25519_host_key"
                build ssh-key-link --root "$t" --ssh-unlock "$tmp/authorized_keys"
                expect_refused ssh-key-link "SSH host key .*/etc/foyer/ssh/dropbear_ed25519_host_key is a symlink"
        done

        rm -rf "$t/etc/foyer"
        ln -s "nonexist/../../../../../../../..$outside" "$t/etc/foyer"
        build ssh-dotdot --root "$t" --ssh-unlock "$tmp/authorized_keys"
        expect_refused ssh-dotdot "Failed to create /etc/foyer/ssh inside"
        [ ! -e "$outside/ssh" ] || fail "etc/foyer -> nonexist/../..: a key directory was made outside the tree"
        rm -rf "$t"
else
        echo "== 1. skipped: dropbear is not installed (package dropbear-bin)"
fi

echo "== 2. a FIFO or a device node where a regular file is read"
t=$tmp/special-tree
copy_tree "$root" "$t"
rm "$t/$libdir/libc.so.6" && mkfifo "$t/$libdir/libc.so.6"
build fifo-lib --root "$t"
expect_refused fifo-lib "libc.so.6.* is a FIFO"
rm "$t/$libdir/libc.so.6" && mknod "$t/$libdir/libc.so.6" c 1 5
build device-lib --root "$t"
expect_refused device-lib "libc.so.6.* is a character device"
rm "$t/$libdir/libc.so.6" && ln "$root/$libdir/libc.so.6" "$t/$libdir/libc.so.6"
# libkmod opens the module directory's files itself: refused before it starts.
rm -rf "$t/usr/lib/modules/$kver" && cp -a "$root/usr/lib/modules/$kver" "$t/usr/lib/modules/$kver"
rm "$t/usr/lib/modules/$kver/modules.symbols.bin" && mkfifo "$t/usr/lib/modules/$kver/modules.symbols.bin"
build fifo-modules --root "$t"
expect_refused fifo-modules "modules.symbols.bin is a FIFO"
rm "$t/usr/lib/modules/$kver/modules.symbols.bin"
ko=$(cd "$t/usr/lib/modules/$kver" && find kernel -name 'loop.ko*' | head -n 1)
rm "$t/usr/lib/modules/$kver/$ko" && mknod "$t/usr/lib/modules/$kver/$ko" c 1 5
build device-module --root "$t"
expect_refused device-module "loop.ko.* is a character device"
rm -f "$t/etc/crypttab" && mkfifo "$t/etc/crypttab"
build fifo-crypttab --root "$t"
expect_refused fifo-crypttab "/etc/crypttab is not a regular file"
rm -rf "$t"

echo "== 3. modprobe.d linking out of the tree"
# A module of the fake kernel that no image takes unless a softdep names it.
mod=kernel/drivers/misc/foyer_canary.ko
t=$tmp/modprobe-tree
copy_tree "$root" "$t"
rm -rf "$t/usr/lib/modules/$kver" && cp -a "$root/usr/lib/modules/$kver" "$t/usr/lib/modules/$kver"
mkdir -p "$t/usr/lib/modules/$kver/kernel/drivers/misc"
printf 'license=GPL\0name=foyer_canary\0vermagic=%s SMP mod_unload\0' "$kver" >"$tmp/modinfo"
objcopy --remove-section .modinfo --add-section .modinfo="$tmp/modinfo" \
        --set-section-flags .modinfo=alloc,readonly,data "$tmp/plain.o" "$t/usr/lib/modules/$kver/$mod"
echo "$mod" >>"$t/usr/lib/modules/$kver/modules.order"
depmod -b "$t" "$kver"
echo 'softdep virtio_blk pre: foyer_canary' >"$outside/canary.conf"
before=$(outside_state)
mkdir -p "$t/etc/modprobe.d"
# The check can fail: the tree's own softdep brings the module in.
cp "$outside/canary.conf" "$t/etc/modprobe.d/canary.conf"
build modprobe-tree --root "$t"
expect_ok modprobe-tree
"$foyer" ls "$tmp/modprobe-tree.img" | grep -q 'foyer_canary\.ko' || fail "the tree's own softdep did not bring foyer_canary in"
for link in "$outside/canary.conf" "../../..$outside/canary.conf"; do
        rm "$t/etc/modprobe.d/canary.conf" && ln -s "$link" "$t/etc/modprobe.d/canary.conf"
        build modprobe-link --root "$t"
        expect_ok modprobe-link
        ! "$foyer" ls "$tmp/modprobe-link.img" | grep -q 'foyer_canary\.ko' || fail "modprobe.d/canary.conf -> $link was read on the host"
done
rm -rf "$t/etc/modprobe.d" && ln -s "$outside" "$t/etc/modprobe.d"
build modprobe-dir --root "$t"
expect_ok modprobe-dir
! "$foyer" ls "$tmp/modprobe-dir.img" | grep -q 'foyer_canary\.ko' || fail "etc/modprobe.d -> OUTSIDE was read on the host"
rm -rf "$t"

echo "== 4. foyer uki --root: the kernel of the tree, not the host's"
host_kernel=$(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort | tail -n 1)
if [ -n "$stub" ] && [ -f "$stub" ] && [ -n "$host_kernel" ]; then
        outside_copy "$host_kernel" "vmlinuz-$kver"
        before=$(outside_state)
        t=$tmp/uki-tree
        copy_tree "$root" "$t"
        # Inside the tree /proc does not exist: the link dangles there; on the host it reaches OUTSIDE.
        rm -rf "${t:?}/boot" && ln -s "/proc/..$outside" "$t/boot"
        rc=0
        timeout 120 "$foyer" uki --root "$t" --kver "$kver" --stub "$stub" --compress none -o "$tmp/uki.efi" >"$tmp/uki.log" 2>&1 || rc=$?
        [ "$rc" -ne 0 ] || fail "foyer uki --root took the kernel through a link out of the tree"
        [ ! -e "$tmp/uki.efi" ] || fail "foyer uki --root wrote a UKI"
        grep -q "kernel $t/boot/vmlinuz-$kver" "$tmp/uki.log" || { cat "$tmp/uki.log"; fail "foyer uki: no message naming the tree's kernel"; }
        echo "   refused: $(grep "kernel $t/boot" "$tmp/uki.log" | head -n 1)"
        [ "$(outside_state)" = "$before" ] || fail "uki: a file outside the tree was written"
        rm -rf "$t"
else
        echo "   skipped: no stub or no kernel in /boot"
fi

echo "== 5. random hostile trees"
rounds=${FOYER_HOSTILE_ROUNDS:-16}
seed=${FOYER_HOSTILE_SEED:-$RANDOM}
echo "   seed $seed (FOYER_HOSTILE_SEED=$seed replays this run), $rounds rounds"
RANDOM=$seed
mapfile -t candidates < <(while read -r p; do [ -f "$root/$p" ] && [ ! -L "$root/$p" ] && echo "$p"; done <"$tmp/clean.list")
[ "${#candidates[@]}" -gt 10 ] || fail "too few files to mutate (${#candidates[@]})"

# mutate TREE PATH: one random attack on PATH (an image path of a regular file of the tree).
mutate() {
        local t=$1 p=$2 name kind dir kinds real
        # Only a regular file of the tree as it is now: an earlier mutation may have made this path
        # (or a directory on its way) a link, and copying through it on the host would bring
        # OUTSIDE's marked bytes into the tree itself.
        real=$(realpath -m "$t/$p")
        if [ -L "$t/$p" ] || [ ! -f "$t/$p" ] || [[ $real != "$t"/* ]]; then
                echo "   $p: already changed, left"
                return
        fi
        name=$(echo "$p" | tr / _)
        # Links that resolve inside the tree (the build goes on) more often than what refuses it.
        kinds=(0 0 0 1 1 1 5 5 5 2 3 4)
        kind=${kinds[RANDOM % ${#kinds[@]}]}
        case $kind in
        0) plant "$t" "$t/$p" "$name"; rm "$t/$p"; ln -s "$outside/$name" "$t/$p"; echo "   $p -> OUTSIDE (absolute)" ;;
        1) plant "$t" "$t/$p" "$name"; rm "$t/$p"; ln -s "../../../../../../../../../../..$outside/$name" "$t/$p"; echo "   $p -> ../..OUTSIDE" ;;
        2) outside_copy "$t/$p" "$name"; rm "$t/$p"; ln -s "nonexist/../../../../../../../../..$outside/$name" "$t/$p"; echo "   $p -> missing/../..OUTSIDE" ;;
        3) rm "$t/$p"; mkfifo "$t/$p"; echo "   $p: FIFO" ;;
        4) rm "$t/$p"; mknod "$t/$p" c 1 5; echo "   $p: /dev/zero" ;;
        5) dir=$(dirname "$p")
           small_dir "$t/$dir" || { mutate "$t" "$p"; return; }
           mirror "$t/$dir" "$name.d"
           mv "$t/$dir" "$t/$dir.gone"; ln -s "$outside/$name.d" "$t/$dir"; echo "   $dir/ -> OUTSIDE" ;;
        esac
}
# small_dir DIR: a directory of the tree small enough to mirror (at most 40 entries, 16 MiB).
small_dir() {
        [ -d "$1" ] && [ ! -L "$1" ] && [ "$1" != "$t/." ] || return 1
        [ "$(find "$1" -maxdepth 1 | wc -l)" -le 41 ] && [ "$(du -sm "$1" | cut -f1)" -le 16 ]
}
# mirror DIR NAME: OUTSIDE/NAME with DIR's regular files, each with the marker (and the tree's
# own OUTSIDE/NAME with them as they are: see plant).
mirror() {
        local f
        mkdir -p "$outside/$2" "$t$outside/$2"
        for f in "$1"/*; do
                if [ ! -f "$f" ] || [ -L "$f" ]; then continue; fi
                plant "$t" "$f" "$2/$(basename "$f")"
        done
}
# swapper DIR MIRROR: while the build runs, DIR is replaced by a link to MIRROR and back.
swapper() {
        local d=$1 m=$2
        while :; do
                mv -T "$d" "$d.away" 2>/dev/null && ln -sfn "$m" "$d"
                sleep 0.0$((RANDOM % 9 + 1))
                rm -f "$d" 2>/dev/null; mv -T "$d.away" "$d" 2>/dev/null
                sleep 0.0$((RANDOM % 9 + 1))
        done
}

built=0
for ((i = 1; i <= rounds; i++)); do
        t=$tmp/round-tree
        copy_tree "$root" "$t"
        echo "-- round $i"
        for ((k = RANDOM % 3 + 1; k > 0; k--)); do
                mutate "$t" "${candidates[RANDOM % ${#candidates[@]}]}"
        done
        args=(--root "$t")
        if [ -n "$ssh" ] && ((RANDOM % 2)); then
                mkdir -p "$t/etc/foyer/ssh"
                ln -s "$outside/victim" "$t/etc/foyer/ssh/dropbear_ecdsa_host_key.pub.new"
                ln -s "$outside/victim" "$t/etc/foyer/ssh/.dropbear_ecdsa_host_key.new"
                args+=(--ssh-unlock "$tmp/authorized_keys")
                echo "   --ssh-unlock, links at the key directory's names"
        fi
        swap_pid=
        if ((i % 2 == 0)); then
                p=${candidates[RANDOM % ${#candidates[@]}]}
                dir=$(dirname "$p")
                if small_dir "$t/$dir"; then
                        mirror "$t/$dir" "swap-$i"
                        echo "   during the build: $dir/ <-> link to OUTSIDE"
                        swapper "$t/$dir" "$outside/swap-$i" &
                        swap_pid=$!
                fi
        fi
        before=$(outside_state)
        build "round-$i" "${args[@]}"
        if [ -n "$swap_pid" ]; then
                kill "$swap_pid" 2>/dev/null || true
                wait "$swap_pid" 2>/dev/null || true
        fi
        # The build ran while the swapper ran: OUTSIDE was compared at its end; once more now.
        [ "$(outside_state)" = "$before" ] || fail "round $i: a file outside the tree was written"
        if [ "$rc" -eq 0 ]; then
                echo "   built"
                built=$((built + 1))
        else
                echo "   refused: $(grep -E 'foyer' "$tmp/round-$i.log" | tail -n 1)"
        fi
        rm -rf "$t" "$tmp/round-$i.img"
done
echo "$built of $rounds hostile trees built, none with a byte from outside"
echo "PASS"
