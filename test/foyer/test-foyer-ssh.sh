#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Remote unlocking over SSH in a built image (docs/foyer.md, "Remote unlocking over SSH"):
#  - without --ssh-unlock: no dropbear, no systemd-networkd, no authorized_keys, no host keys, no
#    network driver, and the image is 0644;
#  - with --ssh-unlock FILE: dropbear, systemd-networkd and systemd-network-generator with their units,
#    udev's 80-net-setup-link.rules, the default DHCP network, foyer-unlock, foyer-network-cleanup,
#    FILE as root's authorized_keys (0600 in a 0700 /root/.ssh), the two host keys (0600) and
#    systemd-networkd's user; the image is 0600; the host keys are made once (0600, .pub 0644) in
#    --ssh-host-keys DIR, reused by the next build, which is byte for byte the same image; the
#    generic image takes the network drivers (virtio_net of the fake kernel);
#  - foyer-network-generator run inside the image writes foyer-ssh.service: dropbear with both host
#    keys and foyer-unlock as its forced command, pulled in by initrd.target with systemd-networkd;
#    rd.neednet=0 leaves all of it out; ip= of the --cmdline defaults reaches
#    systemd-network-generator through its drop-in;
#  - with --no-shell: root's login shell is foyer-unlock, the only one /etc/shells lists, and there
#    is no /bin/sh;
#  - without --ssh-host-keys the keys are made in the tree's /etc/foyer/ssh (with --root, inside it);
#  - SshUnlock= and SshHostKeys= in foyer.conf do what the options do;
#  - errors, one line each: an authorized_keys path that does not exist (named), one that holds no
#    key, a directory, and a host key that others may read.
# Usage: test-foyer-ssh.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
export FOYER_HELPER_DIR=${4:?usage: test-foyer-ssh.sh FOYER GENERATOR-DIR UNIT-DIR HELPER-DIR}
require_generator foyer-network-generator
IFS=: read -ra helper_dirs <<<"$FOYER_HELPER_DIR"
found=
for d in "${helper_dirs[@]}"; do [ ! -x "$d/foyer-unlock" ] || found=1; done
[ -n "$found" ] || skip "foyer-unlock is not built in $FOYER_HELPER_DIR yet"
[ -x /usr/sbin/dropbear ] || skip "dropbear is not installed on the host (package dropbear-bin)"
command -v dropbearkey >/dev/null || skip "dropbearkey is not installed on the host (package dropbear-bin)"
[ -x /usr/lib/systemd/systemd-networkd ] || skip "systemd-networkd is not on the host"
make_tmp test-foyer-ssh
use_fake_kernel
# A network driver for the fake kernel, which the generic image takes only for SSH.
mkdir -p "$root/usr/lib/modules/$kver/kernel/drivers/net"
printf 'license=GPL\0name=virtio_net\0vermagic=%s SMP mod_unload\0' "$kver" >"$tmp/modinfo"
objcopy --remove-section .modinfo --add-section .modinfo="$tmp/modinfo" --set-section-flags .modinfo=alloc,readonly,data \
        "$tmp/plain.o" "$root/usr/lib/modules/$kver/kernel/drivers/net/virtio_net.ko"
echo kernel/drivers/net/virtio_net.ko >>"$root/usr/lib/modules/$kver/modules.order"
depmod -b "$root" "$kver"

ssh-keygen -q -t ed25519 -N '' -C 'test key' -f "$tmp/client" 2>/dev/null ||
        printf 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPJ7F2c0GfXuUS4y9cP6c8vQ0Pp4lQnPqk3G2nYH3k8f test key\n' >"$tmp/client.pub"
cp "$tmp/client.pub" "$tmp/authorized_keys"
out=$tmp/out.img

unpack() {      # unpack IMAGE DIR
        mkdir "$2"
        (cd "$2" && zstd -dcq "$1" | cpio -idm --quiet)
}
mode() { stat -c %a "$1"; }

echo "== without --ssh-unlock"
"$foyer" build --root "$root" --kver "$kver" -o "$tmp/plain.img" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build"; }
[ "$(mode "$tmp/plain.img")" = 644 ] || fail "the image without SSH is $(mode "$tmp/plain.img"), not 644"
unpack "$tmp/plain.img" "$tmp/plain"
for f in usr/sbin/dropbear usr/lib/systemd/systemd-networkd usr/lib/systemd/systemd-network-generator \
         usr/lib/systemd/system/systemd-networkd.service root/.ssh etc/foyer/ssh usr/lib/foyer/foyer-unlock \
         usr/lib/systemd/network/99-foyer-default.network etc/shells; do
        [ ! -e "$tmp/plain/$f" ] || fail "/$f is in an image without --ssh-unlock"
done
find "$tmp/plain" -name 'virtio_net.ko*' | grep -q . && fail "a network driver is in an image without --ssh-unlock"
grep -q systemd-network "$tmp/plain/etc/passwd" && fail "systemd-networkd's user is in an image without --ssh-unlock"
# The generator is in every image; in one without dropbear it writes nothing.
mkdir -p "$tmp/plain/run/gen"
env -i SYSTEMD_IN_INITRD=1 SYSTEMD_PROC_CMDLINE="ip=dhcp" /usr/sbin/chroot "$tmp/plain" \
        /usr/lib/systemd/system-generators/foyer-network-generator /run/gen /run/gen /run/gen ||
        fail "foyer-network-generator failed in an image without SSH"
[ -z "$(ls -A "$tmp/plain/run/gen")" ] || fail "foyer-network-generator wrote units in an image without SSH: $(ls "$tmp/plain/run/gen")"

echo "== --ssh-unlock"
"$foyer" build --root "$root" --kver "$kver" -o "$out" --ssh-unlock "$tmp/authorized_keys" \
        --ssh-host-keys "$tmp/keys" --cmdline "ip=10.0.2.15::10.0.2.2:255.255.255.0:::off rd.luks=1" >"$tmp/build.log" 2>&1 ||
        { cat "$tmp/build.log"; fail "foyer build --ssh-unlock"; }
cat "$tmp/build.log"
[ "$(mode "$out")" = 600 ] || fail "the image with host keys is $(mode "$out"), not 600"
grep -q 'holds the SSH host keys .*0600' "$tmp/build.log" || fail "the build does not say why the image is 0600"
for k in dropbear_ed25519_host_key dropbear_ecdsa_host_key; do
        [ "$(mode "$tmp/keys/$k")" = 600 ] || fail "$tmp/keys/$k is $(mode "$tmp/keys/$k"), not 600"
        [ "$(mode "$tmp/keys/$k.pub")" = 644 ] || fail "$tmp/keys/$k.pub is missing or not 644"
        grep -qE '^(ssh-ed25519|ecdsa-sha2-nistp256) AAAA' "$tmp/keys/$k.pub" || fail "$k.pub holds no public key"
        grep -q "SSH host key $tmp/keys/$k: SHA256:" "$tmp/build.log" || fail "the build does not print $k's fingerprint"
done
[ "$(mode "$tmp/keys")" = 700 ] || fail "$tmp/keys is $(mode "$tmp/keys"), not 700"
"$foyer" ls "$out" >"$tmp/ls" 2>/dev/null || fail "foyer ls"
for k in dropbear_ed25519_host_key dropbear_ecdsa_host_key; do
        grep -qE "^-rw------- .* etc/foyer/ssh/$k\$" "$tmp/ls" || fail "/etc/foyer/ssh/$k is not 0600 in the image"
done
grep -qE '^-rw------- .* root/.ssh/authorized_keys$' "$tmp/ls" || fail "/root/.ssh/authorized_keys is not 0600 in the image"
grep -qE '^drwx------ .* root/.ssh$' "$tmp/ls" || fail "/root/.ssh is not 0700 in the image"
r=$tmp/a
unpack "$out" "$r"
cmp "$tmp/authorized_keys" "$r/root/.ssh/authorized_keys" || fail "authorized_keys is not the file given"
cmp "$tmp/keys/dropbear_ed25519_host_key" "$r/etc/foyer/ssh/dropbear_ed25519_host_key" || fail "the image's host key is not the kept one"
for f in usr/sbin/dropbear usr/lib/systemd/systemd-networkd usr/lib/systemd/systemd-network-generator \
         usr/lib/systemd/system/systemd-networkd.service usr/lib/systemd/system/systemd-networkd.socket \
         usr/lib/systemd/system/systemd-network-generator.service usr/lib/foyer/foyer-unlock \
         usr/lib/foyer/foyer-network-cleanup usr/lib/systemd/network/99-foyer-default.network \
         usr/lib/udev/rules.d/80-net-setup-link.rules usr/lib/systemd/network/99-default.link; do
        [ -e "$r/$f" ] || fail "missing /$f"
done
find "$r/usr/lib/modules" -name 'virtio_net.ko*' | grep -q . || fail "the generic SSH image has no virtio_net"
grep -q '^systemd-network:x:[0-9]*:[0-9]*:' "$r/etc/passwd" || fail "no systemd-network user"
grep -q '^systemd-network:x:' "$r/etc/group" || fail "no systemd-network group"
grep -q '^root:x:0:0:root:/root:/bin/sh$' "$r/etc/passwd" || fail "root's shell is not /bin/sh in an image with shells"
grep -qx /bin/sh "$r/etc/shells" || fail "/etc/shells does not list /bin/sh"
env -i PATH=/usr/bin:/usr/sbin /usr/sbin/chroot "$r" dropbear -V >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "dropbear does not run in the image"; }

echo "== foyer-network-generator inside the image"
gen() {         # gen DIR CMDLINE
        mkdir -p "$r/run/$1"
        env -i SYSTEMD_IN_INITRD=1 SYSTEMD_PROC_CMDLINE="$2" /usr/sbin/chroot "$r" \
                /usr/lib/systemd/system-generators/foyer-network-generator "/run/$1" "/run/$1" "/run/$1" 2>"$tmp/gen.log" ||
                { cat "$tmp/gen.log"; fail "foyer-network-generator failed ($2)"; }
}
gen g1 "root=/dev/vda"
u=$r/run/g1/foyer-ssh.service
[ -f "$u" ] || fail "no foyer-ssh.service"
grep -qx 'ExecStart=/usr/sbin/dropbear -F -E -s -j -k -p 22 -P /run/foyer-dropbear.pid -r /etc/foyer/ssh/dropbear_ed25519_host_key -r /etc/foyer/ssh/dropbear_ecdsa_host_key -c /usr/lib/foyer/foyer-unlock' "$u" ||
        { cat "$u"; fail "foyer-ssh.service does not run dropbear with the host keys and foyer-unlock as forced command"; }
grep -qx 'Conflicts=initrd-switch-root.target shutdown.target' "$u" || fail "foyer-ssh.service is not stopped before the switch"
for w in foyer-ssh.service systemd-networkd.service systemd-network-generator.service foyer-network-cleanup.service; do
        [ -L "$r/run/g1/initrd.target.wants/$w" ] || fail "initrd.target does not want $w"
done
grep -qx 'ExecStop=-/usr/lib/foyer/foyer-network-cleanup' "$r/run/g1/foyer-network-cleanup.service" || fail "no cleanup before the switch"
# ip= of --cmdline (cmdline.d) first, then the kernel's.
grep -qx 'Environment="SYSTEMD_PROC_CMDLINE=ip=10.0.2.15::10.0.2.2:255.255.255.0:::off"' \
        "$r/run/g1/systemd-network-generator.service.d/50-foyer-cmdline.conf" ||
        fail "systemd-network-generator does not get ip= of the --cmdline defaults"
gen g2 "ip=dhcp nameserver=10.0.2.3"
grep -qx 'Environment="SYSTEMD_PROC_CMDLINE=ip=10.0.2.15::10.0.2.2:255.255.255.0:::off ip=dhcp nameserver=10.0.2.3"' \
        "$r/run/g2/systemd-network-generator.service.d/50-foyer-cmdline.conf" || fail "the kernel's ip= does not follow the defaults"
gen g3 "rd.neednet=0"
[ -z "$(ls -A "$r/run/g3")" ] || fail "rd.neednet=0 still wrote $(ls "$r/run/g3")"
grep -q 'rd.neednet=0: no network and no SSH server' "$tmp/gen.log" || fail "rd.neednet=0 is not logged"

echo "== the host keys are reused: the same bytes again"
cp -a "$tmp/keys" "$tmp/keys.before"
"$foyer" build --root "$root" --kver "$kver" -o "$tmp/again.img" --ssh-unlock "$tmp/authorized_keys" \
        --ssh-host-keys "$tmp/keys" --cmdline "ip=10.0.2.15::10.0.2.2:255.255.255.0:::off rd.luks=1" >"$tmp/build2.log" 2>&1 ||
        { cat "$tmp/build2.log"; fail "second build"; }
grep -q 'Making the SSH host key' "$tmp/build2.log" && fail "the second build made new host keys"
diff -r "$tmp/keys.before" "$tmp/keys" || fail "the second build changed the kept host keys"
cmp "$out" "$tmp/again.img" || fail "two builds with the same host keys differ"

echo "== --no-shell"
"$foyer" build --root "$root" --kver "$kver" -o "$tmp/ns.img" --ssh-unlock "$tmp/authorized_keys" \
        --ssh-host-keys "$tmp/keys" --no-shell >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "foyer build --no-shell"; }
unpack "$tmp/ns.img" "$tmp/ns"
grep -qx 'root:x:0:0:root:/root:/usr/lib/foyer/foyer-unlock' "$tmp/ns/etc/passwd" || fail "root's shell is not foyer-unlock with --no-shell"
[ "$(cat "$tmp/ns/etc/shells")" = /usr/lib/foyer/foyer-unlock ] || fail "/etc/shells lists more than foyer-unlock with --no-shell"
if [ -e "$tmp/ns/usr/bin/sh" ] || [ -e "$tmp/ns/bin/sh" ]; then fail "a shell in a --no-shell image"; fi
[ -e "$tmp/ns/etc/foyer/no-shell" ] || fail "no no-shell marker"
r=$tmp/ns
gen g1 ""
grep -q -- ' -c /usr/lib/foyer/foyer-unlock$' "$r/run/g1/foyer-ssh.service" || fail "no forced command with --no-shell"

echo "== the tree's /etc/foyer/ssh by default, foyer.conf"
mkdir -p "$tmp/conf/etc/foyer"
printf '[Build]\nSshUnlock=%s\n' "$tmp/authorized_keys" >"$tmp/conf/etc/foyer/foyer.conf"
FOYER_CONFIG_ROOT=$tmp/conf "$foyer" build --root "$root" --kver "$kver" -o "$tmp/conf.img" >"$tmp/build.log" 2>&1 ||
        { cat "$tmp/build.log"; fail "foyer build with SshUnlock= in foyer.conf"; }
[ "$(mode "$root/etc/foyer/ssh/dropbear_ed25519_host_key")" = 600 ] || fail "no host key in the tree's /etc/foyer/ssh"
[ "$(mode "$tmp/conf.img")" = 600 ] || fail "SshUnlock= in foyer.conf: the image is not 0600"
"$foyer" ls "$tmp/conf.img" 2>/dev/null | grep -q ' usr/sbin/dropbear$' || fail "SshUnlock= in foyer.conf: no dropbear"
printf 'SshHostKeys=%s\n' "$tmp/keys" >>"$tmp/conf/etc/foyer/foyer.conf"
FOYER_CONFIG_ROOT=$tmp/conf "$foyer" build --root "$root" --kver "$kver" -o "$tmp/conf2.img" >"$tmp/build.log" 2>&1 ||
        { cat "$tmp/build.log"; fail "foyer build with SshHostKeys= in foyer.conf"; }
"$foyer" ls "$tmp/conf2.img" etc/foyer/ssh/dropbear_ed25519_host_key 2>/dev/null | cmp - "$tmp/keys/dropbear_ed25519_host_key" ||
        fail "SshHostKeys= in foyer.conf: the image's key is not the one kept there"

expect_error "--ssh-unlock of a missing file" "--ssh-unlock) $tmp/nonexistent: No such file or directory" \
        "$foyer" build --root "$root" --kver "$kver" -o "$out.x" --ssh-unlock "$tmp/nonexistent" --ssh-host-keys "$tmp/keys"
printf '# nobody\n' >"$tmp/empty_keys"
expect_error "--ssh-unlock of a file without keys" "$tmp/empty_keys holds no public key" \
        "$foyer" build --root "$root" --kver "$kver" -o "$out.x" --ssh-unlock "$tmp/empty_keys" --ssh-host-keys "$tmp/keys"
expect_error "--ssh-unlock of a directory" "$tmp/keys is not a regular file" \
        "$foyer" build --root "$root" --kver "$kver" -o "$out.x" --ssh-unlock "$tmp/keys" --ssh-host-keys "$tmp/keys"
chmod 0644 "$tmp/keys/dropbear_ecdsa_host_key"
expect_error "a host key others may read" "SSH host key $tmp/keys/dropbear_ecdsa_host_key may be read by others (mode 0644)" \
        "$foyer" build --root "$root" --kver "$kver" -o "$out.x" --ssh-unlock "$tmp/authorized_keys" --ssh-host-keys "$tmp/keys"
echo "OK"
