#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# iscsi.sh SERVER_TREE PORT TARGET IMAGE [INITIATOR]: serves the raw disk image IMAGE as LUN 1 of the
# iSCSI target TARGET (an IQN) on the portal 127.0.0.1:PORT, with tgtd from SERVER_TREE
# (roots/net-server.sh), until killed (SIGTERM). Only the initiator named INITIATOR may log in (any,
# without it); no CHAP. The guest writes into a sparse copy of this run's own (IMAGE, a cached disk,
# is never written), removed at the end.
#
# tgtd runs chrooted in SERVER_TREE in a mount namespace of its own (unshare), whose /run is a fresh
# tmpfs: its control socket (/run/tgtd/socket.0) is this instance's, so runs in parallel do not meet,
# and the cached tree is not written.
#
# For a scenario: `server ISCSI 1 servers/iscsi.sh SERVER_TREE @PORT_ISCSI@ IQN IMAGE INITIATOR`, and
# in the guest netroot=iscsi:10.0.2.2::@PORT_ISCSI@:1:IQN rd.iscsi.initiator=INITIATOR
# (dracut's netroot=iscsi:[SERVER]:[PROTOCOL]:[PORT]:[LUN]:TARGET).
set -euo pipefail

usage="usage: iscsi.sh SERVER_TREE PORT TARGET IMAGE [INITIATOR]"
server_tree=$(realpath "${1:?$usage}")
port=${2:?$usage}
target=${3:?$usage}
image=$(realpath "${4:?$usage}")
initiator=${5:-ALL}
[[ $port =~ ^[0-9]+$ ]] || { echo "iscsi.sh: PORT is a number, not '$port'" >&2; exit 1; }
[[ $target =~ ^iqn\.[0-9]{4}-[0-9]{2}\.[a-z0-9.-]+(:[A-Za-z0-9.:_-]+)?$ ]] || { echo "iscsi.sh: TARGET is an IQN, not '$target'" >&2; exit 1; }
[[ $initiator == ALL || $initiator =~ ^iqn\.[0-9]{4}-[0-9]{2}\.[a-z0-9.-]+(:[A-Za-z0-9.:_-]+)?$ ]] ||
        { echo "iscsi.sh: INITIATOR is an IQN, not '$initiator'" >&2; exit 1; }
[[ -x $server_tree/usr/sbin/tgtd ]] || { echo "iscsi.sh: no tgtd in $server_tree" >&2; exit 1; }
[[ -r $image ]] || { echo "iscsi.sh: no image $image" >&2; exit 1; }

# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
server_scratch iscsi

cp --sparse=always "$image" "$dir/disk.img"
echo "iscsi.sh: $image (copy $dir/disk.img) as $target LUN 1 on 127.0.0.1:$port, initiator $initiator"
# shellcheck disable=SC2016 # the script's own variables, for the inner bash
unshare --mount --propagation private bash -euc '
        t=$1 d=$2 port=$3 target=$4 initiator=$5
        mount --bind "$d" "$t/mnt"
        mount -t tmpfs tmpfs "$t/run"
        mount -t proc proc "$t/proc"
        chroot "$t" /usr/sbin/tgtd -f --iscsi "portal=127.0.0.1:$port" &
        tgtd=$!
        # tgtd does not stop on SIGTERM; it keeps nothing that SIGKILL would lose (the backing
        # file is written with pwrite, each write done before its response).
        trap "kill -KILL \$tgtd 2>/dev/null" TERM INT
        adm() { chroot "$t" /usr/sbin/tgtadm --lld iscsi "$@"; }
        # Ready when it answers (its socket appears a moment before it listens).
        for _ in $(seq 100); do adm --op show --mode sys >/dev/null 2>&1 && break; sleep 0.1; done
        adm --op new --mode target --tid 1 --targetname "$target"
        adm --op new --mode logicalunit --tid 1 --lun 1 --backing-store /mnt/disk.img
        if [[ $initiator == ALL ]]; then
                adm --op bind --mode target --tid 1 --initiator-address ALL
        else
                adm --op bind --mode target --tid 1 --initiator-name "$initiator"
        fi
        adm --op show --mode target
        rc=0
        wait "$tgtd" || rc=$?
        wait "$tgtd" 2>/dev/null || true
        exit "$rc"
' iscsi.sh "$server_tree" "$dir" "$port" "$target" "$initiator" &
pid=$!
wait "$pid"
