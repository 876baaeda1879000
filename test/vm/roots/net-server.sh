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
base=$("$here/bookworm.sh" "$cachedir")
# shellcheck source=SCRIPTDIR/../../lib/cache.sh
source "$here/../../lib/cache.sh"
hash=$(cache_key "$0" -- "$base")
tree=$cachedir/tree-net-server-$hash

if cache_begin "$cachedir/tree-net-server.lock" "$tree"; then
        echo "$tree"
        exit 0
fi
cp -a "$base" "$tree.tmp"
t=$tree.tmp
# invoke-rc.d asks policy-rc.d before starting anything: 101, "action forbidden".
printf '#!/bin/sh\nexit 101\n' >"$t/usr/sbin/policy-rc.d"
chmod 0755 "$t/usr/sbin/policy-rc.d"
{
        chroot "$t" apt-get update -q
        chroot "$t" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
                nfs-ganesha nfs-ganesha-vfs tgt tang jose
} >&2
rm -rf "$t"/var/lib/apt/lists/* "$t"/var/cache/apt/*.bin "$t"/var/cache/apt/archives/*.deb "$t"/var/log/*.log
# Should the tree ever be booted, none of the daemons starts on its own.
for u in nfs-ganesha.service nfs-ganesha-lock.service nfs-ganesha-config.service tgt.service \
         tangd.socket tangd-update.path tangd-update.service tangd-keygen.service rpcbind.service rpcbind.socket; do
        ln -sf /dev/null "$t/etc/systemd/system/$u"
done
# The programs the server scripts run; a tree without them is no server tree.
for p in /usr/bin/ganesha.nfsd /usr/sbin/tgtd /usr/sbin/tgtadm /usr/libexec/tangd /usr/libexec/tangd-keygen; do
        [[ -x $t$p ]] || { echo "net-server: $p is missing from the tree" >&2; exit 1; }
done
cache_commit "$tree"
for old in "$cachedir"/tree-net-server-*; do
        [[ $old == "$tree" || $old == "$tree.ok" || $old == *.lock ]] || rm -rf "$old"
done
echo "$tree"
