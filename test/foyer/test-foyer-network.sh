#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The network and the network roots' tools in generic images (docs/foyer.md, "The network and
# network roots"), from a --root tree with a fake kernel whose modules include the network ones:
#  - a tree without network-root tools, without --ssh-unlock: no systemd-networkd, no network driver,
#    no tools (as before);
#  - --network (yes) alone: systemd-networkd, systemd-network-generator, systemd-networkd-wait-online,
#    their units, network-online.target, the default DHCP network, systemd-networkd's user, virtio_net
#    and af_packet; no tool;
#  - a tree with nbd-client only (a fake: a copy of true): nbd-client, the nbd module and the network;
#    no mount.nfs, no NFS or iSCSI module;
#  - a tree with mount.nfs (+ mount.nfs4), nbd-client and iscsistart: all three (foyer ls), sunrpc,
#    nfs, nfsv3, nfsv4, nbd, iscsi_tcp (with libiscsi_tcp, libiscsi, scsi_transport_iscsi, its
#    dependencies), iscsi_ibft, /etc/netconfig, and the network;
#  - the same tree with --network=no, and with Network=no in foyer.conf: no tool, no network;
#  - errors, one line each: --network=maybe, Network=maybe in foyer.conf, and --ssh-unlock with
#    --network=no.
# Usage: test-foyer-network.sh FOYER GENERATOR-DIR UNIT-DIR
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
[ -x /usr/lib/systemd/systemd-networkd ] || skip "systemd-networkd is not on the host"
[ -x /usr/lib/systemd/systemd-networkd-wait-online ] || skip "systemd-networkd-wait-online is not on the host"
make_tmp test-foyer-network
use_fake_kernel

# The network's modules in the fake kernel; iscsi_tcp imports a symbol of libiscsi_tcp, which imports
# one of libiscsi, which imports one of scsi_transport_iscsi, so that depmod records the chain.
fake_module() {         # fake_module PATH [IMPORTS] [EXPORTS]
        local name c=$tmp/mod.c
        name=$(basename "$1" | tr - _)
        : >"$c"
        [ -z "${2:-}" ] || printf 'extern int %s(void); int %s_uses(void) { return %s(); }\n' "$2" "$name" "$2" >>"$c"
        [ -z "${3:-}" ] || printf 'const char __kstrtab_%s[] __attribute__((section("__ksymtab_strings"))) = "%s";\nint %s(void) { return 0; }\n' \
                "$3" "$3" "$3" >>"$c"
        gcc -c -O0 -o "$tmp/mod.o" "$c"
        printf 'license=GPL\0name=%s\0vermagic=%s SMP mod_unload\0' "$name" "$kver" >"$tmp/modinfo"
        mkdir -p "$root/usr/lib/modules/$kver/$(dirname "$1")"
        objcopy --remove-section .modinfo --add-section .modinfo="$tmp/modinfo" \
                --set-section-flags .modinfo=alloc,readonly,data "$tmp/mod.o" "$root/usr/lib/modules/$kver/$1.ko"
        echo "$1.ko" >>"$root/usr/lib/modules/$kver/modules.order"
}
# nbd and the iSCSI modules sit in a directory of their own, not in drivers/block and drivers/scsi as
# in a real kernel: the generic image takes those directories whole when, as here, the modules record
# no symbol versions to filter on (module-classes.c), and would then hold them in every image.
for m in drivers/net/virtio_net drivers/net/ethernet/intel/e1000e/e1000e net/packet/af_packet \
         net/sunrpc/sunrpc fs/nfs/nfs fs/nfs/nfsv3 fs/nfs/nfsv4 netstorage/nbd drivers/firmware/iscsi_ibft; do
        fake_module "kernel/$m"
done
fake_module kernel/netstorage/scsi_transport_iscsi "" iscsi_fake_transport
fake_module kernel/netstorage/libiscsi iscsi_fake_transport iscsi_fake_lib
fake_module kernel/netstorage/libiscsi_tcp iscsi_fake_lib iscsi_fake_tcp_lib
fake_module kernel/netstorage/iscsi_tcp iscsi_fake_tcp_lib
depmod -b "$root" "$kver"
grep '^kernel/netstorage/iscsi_tcp.ko:' "$root/usr/lib/modules/$kver/modules.dep" | grep -q 'scsi_transport_iscsi.ko' ||
        fail "fake kernel: depmod did not record iscsi_tcp's dependencies"

network_files="usr/lib/systemd/systemd-networkd usr/lib/systemd/systemd-network-generator
        usr/lib/systemd/systemd-networkd-wait-online usr/lib/systemd/system/systemd-networkd.service
        usr/lib/systemd/system/systemd-networkd.socket usr/lib/systemd/system/systemd-network-generator.service
        usr/lib/systemd/system/systemd-networkd-wait-online.service usr/lib/systemd/system/network-online.target
        usr/lib/systemd/network/99-foyer-default.network usr/lib/udev/rules.d/80-net-setup-link.rules"
tools="usr/sbin/mount.nfs usr/sbin/mount.nfs4 usr/sbin/nbd-client usr/sbin/iscsistart"

# build NAME OPTIONS...: $tmp/NAME.img from $root, its listing (paths) in $tmp/NAME.list.
build() {
        local name=$1
        shift
        "$foyer" build --root "$root" --kver "$kver" -o "$tmp/$name.img" "$@" >"$tmp/$name.log" 2>&1 ||
                { cat "$tmp/$name.log"; fail "$name: foyer build"; }
        "$foyer" ls "$tmp/$name.img" 2>/dev/null | awk '{print $3}' >"$tmp/$name.list"
}
has() { grep -qx "$2" "$tmp/$1.list"; }
has_module() { grep -qE "^usr/lib/modules/$kver/.*/$2\.ko$" "$tmp/$1.list"; }
expect() { local f; for f in "${@:2}"; do has "$1" "$f" || fail "$1: /$f is not in the image"; done; }
expect_not() { local f; for f in "${@:2}"; do ! has "$1" "$f" || fail "$1: /$f is in the image"; done; }
expect_modules() { local m; for m in "${@:2}"; do has_module "$1" "$m" || fail "$1: module $m is not in the image"; done; }
expect_no_modules() { local m; for m in "${@:2}"; do ! has_module "$1" "$m" || fail "$1: module $m is in the image"; done; }
# shellcheck disable=SC2086 # the lists are words
expect_network() {
        expect "$1" $network_files
        expect_modules "$1" virtio_net e1000e af_packet
        grep -q '^systemd-network:x:' <("$foyer" ls "$tmp/$1.img" etc/passwd 2>/dev/null) || fail "$1: no systemd-network user"
}
# shellcheck disable=SC2086
expect_no_network() {
        expect_not "$1" $network_files
        expect_no_modules "$1" virtio_net e1000e af_packet
}

echo "== no tools, no SSH: no network"
build plain
expect_no_network plain
# shellcheck disable=SC2086
expect_not plain $tools
expect_no_modules plain sunrpc nfs nbd iscsi_tcp

echo "== --network: the network alone"
build yes --network
expect_network yes
# shellcheck disable=SC2086
expect_not yes $tools
expect_no_modules yes nfs nbd iscsi_tcp
grep -qx 'DHCP=yes' <("$foyer" ls "$tmp/yes.img" usr/lib/systemd/network/99-foyer-default.network 2>/dev/null) ||
        fail "yes: the default network does not ask for DHCP"

echo "== nbd-client in the tree"
cp /usr/bin/true "$root/usr/sbin/nbd-client"
build nbd
expect nbd usr/sbin/nbd-client
expect_network nbd
expect_modules nbd nbd
expect_not nbd usr/sbin/mount.nfs usr/sbin/iscsistart
expect_no_modules nbd nfs sunrpc iscsi_tcp

echo "== mount.nfs, nbd-client and iscsistart in the tree"
cp /usr/bin/true "$root/usr/sbin/mount.nfs"
ln -s mount.nfs "$root/usr/sbin/mount.nfs4"
cp /usr/bin/true "$root/usr/sbin/iscsistart"
printf 'tcp tpi_cots_ord v inet tcp - -\n' >"$root/etc/netconfig"
build all
# shellcheck disable=SC2086
expect all $tools etc/netconfig
[ "$("$foyer" ls "$tmp/all.img" 2>/dev/null | awk '$3 == "usr/sbin/mount.nfs4" { print $5 }')" = mount.nfs ] ||
        fail "all: /usr/sbin/mount.nfs4 is not the link to mount.nfs"
expect_network all
expect_modules all sunrpc nfs nfsv3 nfsv4 nbd iscsi_tcp libiscsi_tcp libiscsi scsi_transport_iscsi iscsi_ibft

echo "== --network=no, Network=no: no tools, no network"
build no --network=no
expect_no_network no
# shellcheck disable=SC2086
expect_not no $tools
expect_no_modules no sunrpc nfs nbd iscsi_tcp
mkdir -p "$tmp/conf/etc/foyer"
printf '[Build]\nNetwork=no\n' >"$tmp/conf/etc/foyer/foyer.conf"
FOYER_CONFIG_ROOT=$tmp/conf build confno
expect_no_network confno
expect_not confno usr/sbin/mount.nfs
FOYER_CONFIG_ROOT=$tmp/conf build confauto --network=auto
expect_network confauto
expect confauto usr/sbin/mount.nfs

out=$tmp/bad.img
expect_error "--network=maybe" 'foyer: --network takes auto, yes or no, not "maybe"\.$' \
        "$foyer" build --root "$root" --kver "$kver" -o "$out" --network=maybe
printf '[Build]\nNetwork=maybe\n' >"$tmp/conf/etc/foyer/foyer.conf"
expect_error "Network=maybe" 'foyer.conf:2: Network= takes auto, yes or no, not "maybe"\.$' \
        env FOYER_CONFIG_ROOT="$tmp/conf" "$foyer" build --root "$root" --kver "$kver" -o "$out"
printf 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPJ7F2c0GfXuUS4y9cP6c8vQ0Pp4lQnPqk3G2nYH3k8f test key\n' >"$tmp/authorized_keys"
expect_error "--ssh-unlock with --network=no" \
        'SshUnlock= (--ssh-unlock) needs the network, which Network=no (--network=no) leaves out of the image\.$' \
        "$foyer" build --root "$root" --kver "$kver" -o "$out" --network=no --ssh-unlock "$tmp/authorized_keys" \
        --ssh-host-keys "$tmp/keys"
[ ! -e "$tmp/keys" ] || fail "--ssh-unlock with --network=no made host keys"
echo "OK"
