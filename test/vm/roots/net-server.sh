#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# net-server.sh CACHEDIR: the tree the network-root tests' daemons run from (test/vm/servers/): a
# copy of mkroot.sh's bookworm tree (the cheapest cached tree: no kernel) with nfs-ganesha and its
# VFS backend (NFS v3 and v4), tgt (iSCSI) and tang (tangd, jose). They never run on the host, where
# their packages would start daemons on every address: the server scripts start them from this tree
# (chroot), each bound to 127.0.0.1 only. Nothing is started while they are installed (policy-rc.d
# says no; its file stays) and their units are masked, should the tree ever be booted. Cached as
# CACHEDIR/tree-net-server-<hash>, keyed by this script's text and the base tree's path. Prints the
# tree's path.
set -euo pipefail

cachedir=${1:?usage: net-server.sh CACHEDIR}
here=$(dirname "$(realpath "$0")")
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
base=$("$here/bookworm.sh" "$cachedir")
apt_tree_begin "$cachedir" net-server "$base" "$0"
apt_tree_install nfs-ganesha nfs-ganesha-vfs tgt tang jose
# Should the tree ever be booted, none of the daemons starts on its own.
apt_tree_mask nfs-ganesha.service nfs-ganesha-lock.service nfs-ganesha-config.service tgt.service \
        tangd.socket tangd-update.path tangd-update.service tangd-keygen.service rpcbind.service rpcbind.socket
# The programs the server scripts run; a tree without them is no server tree.
apt_tree_require /usr/bin/ganesha.nfsd /usr/sbin/tgtd /usr/sbin/tgtadm /usr/libexec/tangd /usr/libexec/tangd-keygen
apt_tree_commit
