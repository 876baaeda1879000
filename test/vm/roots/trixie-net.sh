#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# trixie-net.sh CACHEDIR: roots/trixie.sh's tree with the clients of the network roots and of
# network-bound unlocking: nfs-common (mount.nfs), nbd-client, open-iscsi (iscsistart, iscsiadm),
# clevis, clevis-luks and clevis-systemd (with jose, curl, luksmeta: what clevis's tang pin and LUKS
# binding need) and netbase (/etc/protocols, which mount.nfs reads for NFSv3's MOUNT call; a Debian
# system has it, a minbase tree does not). `foyer build --root` of it puts them into the image
# (docs/foyer.md); the tree is also what servers/nfs.sh exports as an NFS root, so its real root has
# to come up on a disk and on NFS.
#
# What these packages would start in the booted real root and that the tests have no use for (no
# failed unit may be left: the scenarios check failed_units=0) is masked:
#   rpcbind.service, rpcbind.socket  the portmapper (nfs-common pulls it in): an NFS root is mounted
#                                    with nolock or v4, which need none
#   rpc-statd.service, rpc-statd-notify.service, rpc-gssd.service, rpc-svcgssd.service,
#   nfs-idmapd.service, nfs-blkmap.service
#                                    NFSv3 locking, Kerberos, ID mapping and pNFS block layouts
#   iscsid.service, iscsid.socket, open-iscsi.service
#                                    the iSCSI daemon and the login to the nodes of /etc/iscsi/nodes;
#                                    an iSCSI root's session is the initrd's iscsistart's
#   nbd-client.service               the connections of /etc/nbdtab (an NBD root's is the initrd's)
#   clevis-luks-askpass.path         the real root unlocks nothing with it (the root is unlocked in
#                                    the initrd)
# The units are masked by links to /dev/null in /etc/systemd/system, not removed, so that a scenario
# can unmask one. Nothing is started while the packages are installed (policy-rc.d, removed after).
# A copy of the trixie tree, cached as CACHEDIR/tree-trixie-net-<hash>, keyed by this script's text
# and the trixie tree's path. Prints the tree's path.
set -euo pipefail

cachedir=${1:?usage: trixie-net.sh CACHEDIR}
here=$(dirname "$(realpath "$0")")
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
base=$("$here/trixie.sh" "$cachedir")
apt_tree_begin "$cachedir" trixie-net "$base" "$0"
apt_tree_install nfs-common nbd-client open-iscsi clevis clevis-luks clevis-systemd jose curl luksmeta netbase
rm -f "$t/usr/sbin/policy-rc.d"
apt_tree_mask rpcbind.service rpcbind.socket rpc-statd.service rpc-statd-notify.service rpc-gssd.service \
        rpc-svcgssd.service nfs-idmapd.service nfs-blkmap.service iscsid.service iscsid.socket open-iscsi.service \
        nbd-client.service clevis-luks-askpass.path
# The programs `foyer build --root` looks for; a tree without them tests nothing.
apt_tree_require /usr/sbin/mount.nfs /usr/sbin/nbd-client /usr/sbin/iscsistart /usr/bin/clevis
apt_tree_commit
