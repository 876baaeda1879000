#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer preview --image (issue 30): the units an image's generators write, from what the image holds.
#  - an image built with --cmdline "root=UUID=…" and --crypttab: sysroot.mount with that What= and the
#    crypttab's volume, with no --cmdline given to preview (the image's /etc/cmdline.d read, the host's
#    /proc/cmdline after it); --crypttab given to preview replaces the image's;
#  - SSH: a FOYER_SSH_DROPBEAR that exists on the host gives no foyer-ssh.service, with the image (built
#    without --ssh-unlock) or without --image at all; an image built with --ssh-unlock gives it (when
#    dropbear and foyer-unlock are there to build one);
#  - only the generators the image holds run; an image built with --no-shell ignores rd.break; the
#    image's mdadm.conf reaches foyer-md-generator;
#  - a UKI made of the image: its .cmdline is the default command line, --cmdline replaces it;
#  - refused, one line naming the file: a missing image, a directory, an empty file, text, a cpio
#    archive without foyer's generators; hostile archives: a cmdline.d name with "..", symlinks under
#    taken names (nothing escapes the temporary tree, nothing is read through them), a cmdline.d file
#    over 1 MiB.
# Usage: test-foyer-preview-image.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR STUB
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
helper_dir=${4:?usage: test-foyer-preview-image.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR STUB}
stub_arg=${5:?usage: test-foyer-preview-image.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR STUB}
require_generator foyer-root-generator
require_generator foyer-crypt-generator
require_generator foyer-network-generator
command -v cpio >/dev/null || skip "cpio is not installed"
make_tmp test-foyer-preview-image
use_fake_kernel
mkdir "$tmp/t"
export TMPDIR=$tmp/t

uuid=8d5a4b0e-1c3f-4d2a-9e6b-1f2e3d4c5b6a
luks=0b1c2d3e-4f50-4617-8a9b-0c1d2e3f4a5b
luks2=5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b
cryptunit() { echo "/run/systemd/generator/systemd-cryptsetup@${1//-/\\x2d}.service"; }

# A dropbear on "the host", as the network generator would find it without preview's override.
mkdir "$tmp/hostbin"
printf '#!/bin/sh\nexit 0\n' >"$tmp/hostbin/dropbear"
chmod +x "$tmp/hostbin/dropbear"
export FOYER_SSH_DROPBEAR=$tmp/hostbin/dropbear

preview() {     # preview OUT ARGS...: foyer preview ARGS, stdout to OUT, must succeed and clean up
        local out=$1
        shift
        "$foyer" preview "$@" >"$out" 2>"$out.err" || { cat "$out.err"; fail "foyer preview $*"; }
        [ -z "$(ls -A "$tmp/t")" ] || fail "preview $* left $(ls -A "$tmp/t") in TMPDIR"
        ! grep -q "$tmp/t" "$out" || fail "preview $*: the temporary tree shows in the units"
}
has_unit() { grep -qxF "# $2" "$1" || fail "$3: no $2"; }
lacks_unit() { ! grep -qF "# $2" "$1" || fail "$3: $2 is there"; }
unit_has() {    # unit_has OUT UNIT LINE WHAT
        awk -v u="# $2" '/^# \// { on = ($0 == u) } on' "$1" | grep -qxF "$3" || fail "$4: $2 has no $3"
}

printf 'data UUID=%s none luks\n' "$luks" >"$tmp/crypttab"
echo "== foyer build --cmdline root=UUID=$uuid --crypttab (no --ssh-unlock)"
"$foyer" build --root "$root" --kver "$kver" --cmdline "root=UUID=$uuid" --crypttab "$tmp/crypttab" \
        -o "$tmp/plain.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }

echo "== preview --image: the image's cmdline.d and crypttab"
preview "$tmp/p1" --image "$tmp/plain.img" --cmdline quiet
has_unit "$tmp/p1" /run/systemd/generator/sysroot.mount "image's cmdline.d"
unit_has "$tmp/p1" /run/systemd/generator/sysroot.mount "What=/dev/disk/by-uuid/$uuid" "image's cmdline.d"
has_unit "$tmp/p1" "$(cryptunit data)" "image's crypttab"
lacks_unit "$tmp/p1" /run/systemd/generator/foyer-ssh.service "image without --ssh-unlock, host dropbear"
lacks_unit "$tmp/p1" /run/systemd/generator/foyer-network-cleanup.service "image without --ssh-unlock"
! grep -q 'systemd-networkd.service$' "$tmp/p1" || fail "image without --ssh-unlock: networkd wanted"

echo "== preview --image --crypttab: the given crypttab replaces the image's"
printf 'other UUID=%s none luks\n' "$luks2" >"$tmp/crypttab2"
preview "$tmp/p2" --image "$tmp/plain.img" --cmdline quiet --crypttab "$tmp/crypttab2"
has_unit "$tmp/p2" "$(cryptunit other)" "--crypttab"
lacks_unit "$tmp/p2" "$(cryptunit data)" "--crypttab"

echo "== preview without --image: no SSH units, though the host has dropbear; no image cmdline.d"
preview "$tmp/p3" --cmdline "rd.luks.uuid=$luks"
lacks_unit "$tmp/p3" /run/systemd/generator/foyer-ssh.service "no --image, host dropbear"
lacks_unit "$tmp/p3" /run/systemd/generator/sysroot.mount "no --image"

echo "== only the image's generators run"
mkdir "$tmp/gens"
for g in "$FOYER_GENERATOR_DIR"/foyer-*; do
        case $g in *-asan) continue ;; esac
        if [ -f "$g" ] && [ -x "$g" ]; then cp "$g" "$tmp/gens/"; fi
done
printf '#!/bin/sh\necho ran >"%s"\n' "$tmp/extra-ran" >"$tmp/gens/foyer-extra-generator"
chmod +x "$tmp/gens/foyer-extra-generator"
FOYER_GENERATOR_DIR=$tmp/gens preview "$tmp/p4" --image "$tmp/plain.img" --cmdline quiet
[ ! -e "$tmp/extra-ran" ] || fail "a generator the image does not hold ran"
has_unit "$tmp/p4" /run/systemd/generator/sysroot.mount "with an extra host generator"
FOYER_GENERATOR_DIR=$tmp/gens preview "$tmp/p4" --cmdline quiet
[ -e "$tmp/extra-ran" ] || fail "without --image, the extra generator did not run (the check above proves nothing)"

echo "== a UKI: its .cmdline is the default command line"
uki=
if [ "$stub_arg" = none ] || ! compgen -G '/boot/vmlinuz-*' >/dev/null; then
        echo "no stub or no kernel in /boot: UKI part skipped"
else
        require_stub "$stub_arg"
        require_boot_kernel
        "$foyer" uki -o "$tmp/a.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/plain.img" \
                --cmdline "rd.luks.uuid=$luks2 quiet" --os-release /etc/os-release >"$tmp/uki.log" 2>&1 ||
                { cat "$tmp/uki.log"; fail "foyer uki"; }
        uki=$tmp/a.efi
        preview "$tmp/u1" --image "$uki"
        has_unit "$tmp/u1" "$(cryptunit "luks-$luks2")" "UKI .cmdline"
        unit_has "$tmp/u1" /run/systemd/generator/sysroot.mount "What=/dev/disk/by-uuid/$uuid" "UKI: the initrd's cmdline.d"
        preview "$tmp/u2" --image "$uki" --cmdline quiet
        lacks_unit "$tmp/u2" "$(cryptunit "luks-$luks2")" "UKI with --cmdline"
fi

echo "== an image built with --ssh-unlock gives the SSH units"
IFS=: read -ra helper_dirs <<<"$helper_dir"
unlock=
for d in "${helper_dirs[@]}"; do [ ! -x "$d/foyer-unlock" ] || unlock=1; done
if [ -x /usr/sbin/dropbear ] && command -v dropbearkey >/dev/null && [ -x /usr/lib/systemd/systemd-networkd ] &&
   [ -n "$unlock" ]; then
        printf 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPJ7F2c0GfXuUS4y9cP6c8vQ0Pp4lQnPqk3G2nYH3k8f test key\n' >"$tmp/keys"
        FOYER_HELPER_DIR=$helper_dir "$foyer" build --root "$root" --kver "$kver" --cmdline "root=UUID=$uuid" \
                --ssh-unlock "$tmp/keys" --ssh-host-keys "$tmp/hostkeys" -o "$tmp/ssh.img" >"$tmp/build.log" 2>&1 ||
                { cat "$tmp/build.log"; fail "foyer build --ssh-unlock"; }
        # The host's dropbear missing now: the image's counts.
        FOYER_SSH_DROPBEAR=$tmp/nonexistent preview "$tmp/s1" --image "$tmp/ssh.img" --cmdline quiet
        has_unit "$tmp/s1" /run/systemd/generator/foyer-ssh.service "image with --ssh-unlock"
        has_unit "$tmp/s1" /run/systemd/generator/foyer-network-cleanup.service "image with --ssh-unlock"
        # The image's host keys named (the host's /etc/foyer/ssh is not looked at).
        for k in ed25519 ecdsa; do
                awk '/^# \// { on = ($0 == "# /run/systemd/generator/foyer-ssh.service") } on' "$tmp/s1" |
                        grep -q "^ExecStart=.* -r /etc/foyer/ssh/dropbear_${k}_host_key" ||
                        fail "image with --ssh-unlock: dropbear is not given the $k host key"
        done
        unit_has "$tmp/s1" /run/systemd/generator/sysroot.mount "What=/dev/disk/by-uuid/$uuid" "image with --ssh-unlock"
        preview "$tmp/s2" --image "$tmp/ssh.img" --cmdline "rd.neednet=0"
        lacks_unit "$tmp/s2" /run/systemd/generator/foyer-ssh.service "image with --ssh-unlock, rd.neednet=0"
else
        echo "no dropbear, dropbearkey, systemd-networkd or foyer-unlock: SSH image part skipped"
fi

echo "== the image's --no-shell marker and mdadm.conf"
if [ -x "$FOYER_GENERATOR_DIR/foyer-debug-generator" ]; then
        "$foyer" build --root "$root" --kver "$kver" --no-shell -o "$tmp/noshell.img" >"$tmp/build.log" 2>&1 ||
                { cat "$tmp/build.log"; fail "foyer build --no-shell"; }
        preview "$tmp/n1" --image "$tmp/noshell.img" --cmdline rd.break=pre-mount
        grep -q 'Ignoring rd.break: this image was built with --no-shell' "$tmp/n1.err" || fail "--no-shell image: rd.break not ignored"
        lacks_unit "$tmp/n1" /run/systemd/generator.early/initrd.target.wants/foyer-break@pre-mount.service "--no-shell image"
        preview "$tmp/n2" --image "$tmp/plain.img" --cmdline rd.break=pre-mount
        grep -qF '# /run/systemd/generator.early/initrd.target.wants/foyer-break@pre-mount.service ->' "$tmp/n2" ||
                fail "image with a shell: no breakpoint (the check above proves nothing)"
else
        echo "foyer-debug-generator not built: --no-shell part skipped"
fi
if [ -x "$FOYER_GENERATOR_DIR/foyer-md-generator" ]; then
        md=$tmp/md
        mkdir -p "$md/etc/foyer" "$md/usr/lib/systemd/system-generators"
        cp "$FOYER_GENERATOR_DIR/foyer-md-generator" "$md/usr/lib/systemd/system-generators/"
        echo 'ARRAY /dev/md/data metadata=1.2 UUID=0a1b2c3d:4e5f6a7b:8c9d0e1f:2a3b4c5d' >"$md/etc/foyer/mdadm.conf"
        (cd "$md" && find . | cpio -o -H newc --quiet) >"$tmp/md.img"
        preview "$tmp/m1" --image "$tmp/md.img" --cmdline quiet
        grep -q 'UUID=0a1b2c3d:4e5f6a7b:8c9d0e1f:2a3b4c5d' "$tmp/m1" || fail "the image's mdadm.conf was not read"
else
        echo "foyer-md-generator not built: mdadm.conf part skipped"
fi

echo "== bad images are refused, naming the file"
expect_error "an empty --image=" "--image= needs the path of an image" "$foyer" preview --image= --cmdline quiet
expect_error "missing image" "Cannot read $tmp/nonexistent.img" \
        "$foyer" preview --image "$tmp/nonexistent.img" --cmdline quiet
expect_error "a directory" "$tmp/gens is not a regular file" "$foyer" preview --image "$tmp/gens" --cmdline quiet
: >"$tmp/empty.img"
expect_error "an empty file" "$tmp/empty.img is empty" "$foyer" preview --image "$tmp/empty.img" --cmdline quiet
echo "not an initrd" >"$tmp/text.img"
expect_error "a text file" "$tmp/text.img is not an initrd" "$foyer" preview --image "$tmp/text.img" --cmdline quiet
mkdir -p "$tmp/src/etc/cmdline.d"
echo root=/dev/sda1 >"$tmp/src/etc/cmdline.d/50-x.conf"
(cd "$tmp/src" && find . | cpio -o -H newc --quiet) >"$tmp/nogen.img"
expect_error "no generators" "$tmp/nogen.img has no foyer generators" \
        "$foyer" preview --image "$tmp/nogen.img" --cmdline quiet
[ -z "$(ls -A "$tmp/t")" ] || fail "a refused image left $(ls -A "$tmp/t") in TMPDIR"

echo "== hostile images: names and links stay out of the host"
h=$tmp/hostile
mkdir -p "$h/a/b/c/etc/cmdline.d" "$h/a/b/c/usr/lib/systemd/system-generators" "$h/a/b/c/etc/foyer"
cp "$FOYER_GENERATOR_DIR/foyer-root-generator" "$h/a/b/c/usr/lib/systemd/system-generators/"
printf 'root=UUID=%s\n' "$uuid" >"$h/a/b/c/etc/cmdline.d/10-ok.conf"
# A name climbing out of cmdline.d, and out of the tree: t/foyer-preview.XXXXXX/etc/cmdline.d/../../../escape.conf.
echo "rd.luks.uuid=$luks2" >"$h/a/b/escape.conf"
ln -s /etc/passwd "$h/a/b/c/etc/cmdline.d/20-link.conf"
ln -s /etc/shadow "$h/a/b/c/etc/crypttab"
ln -s "$tmp/target" "$h/a/b/c/etc/foyer/mdadm.conf"
(cd "$h/a/b/c" && printf '%s\n' etc etc/cmdline.d etc/cmdline.d/10-ok.conf etc/cmdline.d/20-link.conf \
        etc/cmdline.d/../../../escape.conf etc/crypttab etc/foyer etc/foyer/mdadm.conf usr usr/lib usr/lib/systemd \
        usr/lib/systemd/system-generators usr/lib/systemd/system-generators/foyer-root-generator |
        cpio -o -H newc --quiet) >"$tmp/hostile.img"
cpio -t --quiet <"$tmp/hostile.img" | grep -qx 'etc/cmdline.d/../../../escape.conf' ||
        fail "the hostile archive does not hold the climbing name (cpio changed it)"
preview "$tmp/h1" --image "$tmp/hostile.img" --cmdline quiet
for f in "$tmp/escape.conf" "$tmp/t/escape.conf"; do [ ! -e "$f" ] || fail "a name with .. escaped the tree: $f"; done
[ ! -e "$tmp/target" ] || fail "something was written through the image's mdadm.conf link"
unit_has "$tmp/h1" /run/systemd/generator/sysroot.mount "What=/dev/disk/by-uuid/$uuid" "hostile image's plain cmdline.d file"
! grep -q "$luks2" "$tmp/h1" || fail "the climbing cmdline.d name was read"
head -c 1100000 /dev/zero | tr '\0' 'x' >"$h/a/b/c/etc/cmdline.d/30-big.conf"
(cd "$h/a/b/c" && printf '%s\n' etc etc/cmdline.d etc/cmdline.d/30-big.conf usr usr/lib usr/lib/systemd \
        usr/lib/systemd/system-generators usr/lib/systemd/system-generators/foyer-root-generator |
        cpio -o -H newc --quiet) >"$tmp/big.img"
expect_error "a cmdline.d file over 1 MiB" "$tmp/big.img: /etc/cmdline.d/30-big.conf is larger than" \
        "$foyer" preview --image "$tmp/big.img" --cmdline quiet
[ -z "$(ls -A "$tmp/t")" ] || fail "a refused image left $(ls -A "$tmp/t") in TMPDIR"

echo "OK"
