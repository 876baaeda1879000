#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# nfs.sh SERVER_TREE ROOT_TREE EXPORT NFS_PORT MOUNT_PORT: serves a copy of ROOT_TREE (a root file
# system tree, roots/trixie-net.sh's) over NFS at the path EXPORT (/srv/root, say) with nfs-ganesha's
# VFS backend from SERVER_TREE (roots/net-server.sh), until killed (SIGTERM): NFSv4 and NFSv3 on
# 127.0.0.1:NFS_PORT, NFSv3's MOUNT protocol on 127.0.0.1:MOUNT_PORT, TCP only, no portmapper (the
# clients are told the ports), no locking (NLM), no quotas, root not squashed (the guest's root owns
# the files). The copy (cp -a) is this run's own (the guest writes into it) and removed at the end;
# its /etc/fstab names no disk (an NFS root's fstab has no line for /).
#
# ganesha runs chrooted in SERVER_TREE, in a mount namespace of its own (unshare) in which the copy is
# bind-mounted at the tree's /mnt and /run, /tmp and ganesha's state are fresh tmpfs: the cached
# tree is not written, and runs in parallel do not meet.
#
# Clients (the guest reaches the host's 127.0.0.1 as 10.0.2.2 on QEMU's user network):
#   v4: mount -t nfs4 -o port=NFS_PORT 10.0.2.2:EXPORT DIR
#       root=nfs4:10.0.2.2:EXPORT:port=NFS_PORT
#   v3: mount -t nfs -o vers=3,proto=tcp,port=NFS_PORT,mountport=MOUNT_PORT,mountproto=tcp,nolock 10.0.2.2:EXPORT DIR
#       root=nfs:10.0.2.2:EXPORT:vers=3,proto=tcp,port=NFS_PORT,mountport=MOUNT_PORT,mountproto=tcp,nolock
# For a scenario: `server NFS 2 servers/nfs.sh SERVER_TREE ROOT_TREE /srv/root @PORT_NFS@ @PORT_NFS_2@`.
set -euo pipefail

usage="usage: nfs.sh SERVER_TREE ROOT_TREE EXPORT NFS_PORT MOUNT_PORT"
server_tree=$(realpath "${1:?$usage}")
root_tree=$(realpath "${2:?$usage}")
export_path=${3:?$usage}
nfs_port=${4:?$usage}
mount_port=${5:?$usage}
[[ $export_path =~ ^(/[A-Za-z0-9._-]+)+$ ]] || { echo "nfs.sh: EXPORT is an absolute path, not '$export_path'" >&2; exit 1; }
[[ $nfs_port =~ ^[0-9]+$ && $mount_port =~ ^[0-9]+$ ]] || { echo "nfs.sh: the ports are numbers" >&2; exit 1; }
[[ -x $server_tree/usr/bin/ganesha.nfsd ]] || { echo "nfs.sh: no ganesha.nfsd in $server_tree" >&2; exit 1; }
[[ -d $root_tree/etc ]] || { echo "nfs.sh: $root_tree is no root tree" >&2; exit 1; }

# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
server_scratch nfs

cp -a "$root_tree" "$dir/export"
printf '# an NFS root (servers/nfs.sh): no line for /, no disk\n' >"$dir/export/etc/fstab"
cat >"$dir/ganesha.conf" <<EOF2
NFS_CORE_PARAM {
        Bind_addr = 127.0.0.1;
        NFS_Port = $nfs_port;
        MNT_Port = $mount_port;
        Protocols = 3, 4;
        Enable_NLM = false;
        Enable_RQUOTA = false;
        Enable_UDP = false;
        # v3 clients mount EXPORT too (the pseudo path), not the path inside the chroot.
        Mount_Path_Pseudo = true;
}
NFSV4 {
        # No grace period: there is no earlier instance whose clients would reclaim locks.
        Graceless = true;
        # Owners as numbers ("0", not "root@domain"): the kernel's client takes them as they are
        # (nfs4_disable_idmapping, its default with sec=sys). A name would need the idmapper upcall,
        # which the initrd does not have (every file would be nobody's) and which, once the root is
        # the NFS root, runs request-key from that same root.
        Only_Numeric_Owners = true;
        # NFSv4.0 and 4.1: Linux 6.12's client reads with 4.2's READ_PLUS, which ganesha 4.3 answers
        # wrongly for some files (the guest's reads of programs failed with EIO).
        Minor_Versions = 0, 1;
}
EXPORT {
        Export_Id = 1;
        Path = /mnt;
        Pseudo = $export_path;
        Protocols = 3, 4;
        Transports = TCP;
        Access_Type = RW;
        Squash = No_Root_Squash;
        SecType = sys;
        FSAL {
                Name = VFS;
        }
}
LOG {
        Default_Log_Level = EVENT;
}
EOF2
echo "nfs.sh: $root_tree (copy $dir/export) as $export_path, NFS on 127.0.0.1:$nfs_port, MOUNT on 127.0.0.1:$mount_port"
# The private mounts, then ganesha in the foreground (-F), its log on stderr.
# shellcheck disable=SC2016 # the script's own variables, for the inner bash
unshare --mount --propagation private bash -euc '
        t=$1 d=$2
        mount --bind "$d/export" "$t/mnt"
        for m in run tmp var/lib/nfs; do
                mount -t tmpfs tmpfs "$t/$m"
        done
        mkdir "$t/var/lib/nfs/ganesha"
        mount -t proc proc "$t/proc"
        cp "$d/ganesha.conf" "$t/run/ganesha.conf"
        # ganesha registers NFSv3 with the rpcbind of /run/rpcbind.sock or fails: this one says yes.
        python3 "$3" "$t/run/rpcbind.sock" &
        stub=$!
        for _ in $(seq 50); do [[ -S $t/run/rpcbind.sock ]] && break; sleep 0.1; done
        chroot "$t" /usr/bin/ganesha.nfsd -F -L /dev/stderr -f /run/ganesha.conf -p /run/ganesha.pid &
        ganesha=$!
        trap "kill \$ganesha 2>/dev/null" TERM INT
        rc=0
        wait "$ganesha" || rc=$?
        # (After a signal, wait returns before ganesha is gone: wait again.)
        wait "$ganesha" 2>/dev/null || true
        kill "$stub"
        exit "$rc"
' nfs.sh "$server_tree" "$dir" "$(dirname "$(realpath "$0")")/rpcbind-stub.py" &
pid=$!
wait "$pid"
