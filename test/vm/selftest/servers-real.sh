#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# servers-real.sh TESTDIR CACHEDIR: the network-root test servers (TESTDIR/servers/*.sh) started for
# real and probed from the host, as the guest would use them, each also in a way it must refuse:
#   - nbd.sh: `qemu-img info nbd://127.0.0.1:PORT/EXPORT` sees the image's size; another export name
#     is refused;
#   - nfs.sh: NULL calls to NFS v4 and v3 and MOUNT v3, MOUNT's MNT of the export (rpc-probe.py); the
#     MNT of another path is refused;
#   - iscsi.sh: an iSCSI login as the allowed initiator is accepted, as another refused
#     (iscsi-probe.py);
#   - tang.sh: GET /adv answers 200 with the keys' advertisement; with no keys, not 200;
#   - each listens on 127.0.0.1 only, and leaves no process and no per-run copy behind after SIGTERM.
# Needs root (chroot, unshare, mounts) and the server tree (roots/net-server.sh, made if need be in
# CACHEDIR, or $FOYER_VM_SHARED_CACHE as the scenarios do: minutes, from the Debian mirror); skipped
# without root.
set -euo pipefail

testdir=$(realpath "${1:?usage: servers-real.sh TESTDIR CACHEDIR}")
cachedir=${FOYER_VM_SHARED_CACHE:-${2:?usage: servers-real.sh TESTDIR CACHEDIR}}
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "SKIP: the servers need root (chroot, unshare)"; exit 77; }
command -v qemu-nbd >/dev/null || { echo "SKIP: no qemu-nbd (qemu-utils)"; exit 77; }
mkdir -p "$cachedir"
tree=$("$testdir/roots/net-server.sh" "$cachedir")
servers=$testdir/servers

tmp=$(mktemp -d)
export TMPDIR=$tmp/run
mkdir -p "$TMPDIR"
pid=
stop() {
        [[ -n $pid ]] || return 0
        kill "$pid"
        wait "$pid" || true
        pid=
        ! pgrep -f "$tmp/" >/dev/null || fail "$1: a process outlived the server's SIGTERM"
        [[ -z $(ls -A "$TMPDIR") ]] || fail "$1: left behind: $(ls "$TMPDIR")"
}
trap 'stop cleanup 2>/dev/null || true; rm -rf "$tmp"' EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Wait for the port, and check nothing of the server listens anywhere but 127.0.0.1.
wait_port() {
        local what=$1 port=$2
        for _ in $(seq 300); do
                kill -0 "$pid" 2>/dev/null || { cat "$tmp/$what.log"; fail "$what exited before it listened"; }
                ss -Htln "sport = :$port" | grep -q . && break
                sleep 0.1
        done
        ss -Htln "sport = :$port" | grep -q . || { cat "$tmp/$what.log"; fail "$what does not listen on $port"; }
        if ss -Htln "sport = :$port" | awk '{ print $4 }' | grep -v -e '^127\.0\.0\.1:' -e '^\[::ffff:127\.0\.0\.1\]:'; then
                fail "$what listens beyond 127.0.0.1"
        fi
}

truncate -s 24M "$tmp/disk.img"
mkfs.ext4 -q -L probe "$tmp/disk.img"

echo "== nbd.sh"
port=$(free_port)
"$servers/nbd.sh" "$port" root "$tmp/disk.img" >"$tmp/nbd.log" 2>&1 & pid=$!
wait_port nbd "$port"
qemu-img info "nbd://127.0.0.1:$port/root" | grep -q 'virtual size: 24 MiB' || fail "nbd: qemu-img info does not see 24 MiB"
! qemu-img info "nbd://127.0.0.1:$port/other" >/dev/null 2>&1 || fail "nbd: export 'other' was served"
stop nbd

echo "== nfs.sh"
mkdir -p "$tmp/root/etc" "$tmp/root/sbin"
echo "/dev/vda / ext4 defaults 0 1" >"$tmp/root/etc/fstab"
nfs=$(free_port) mnt=$(free_port)
[[ $nfs != "$mnt" ]] || mnt=$(free_port)
"$servers/nfs.sh" "$tree" "$tmp/root" /srv/root "$nfs" "$mnt" >"$tmp/nfs.log" 2>&1 & pid=$!
wait_port nfs "$nfs"
wait_port nfs "$mnt"
"$servers/rpc-probe.py" "$nfs" 100003 4 || fail "nfs: no NFSv4"
"$servers/rpc-probe.py" "$nfs" 100003 3 || fail "nfs: no NFSv3"
"$servers/rpc-probe.py" "$mnt" 100005 3 || fail "nfs: no MOUNT v3"
"$servers/rpc-probe.py" "$mnt" 100005 3 /srv/root || fail "nfs: MNT /srv/root refused"
! "$servers/rpc-probe.py" "$mnt" 100005 3 /srv/other || fail "nfs: MNT /srv/other accepted"
grep -q '/dev/vda' "$tmp/root/etc/fstab" || fail "nfs: the exported tree itself was changed"
stop nfs

echo "== iscsi.sh"
port=$(free_port)
"$servers/iscsi.sh" "$tree" "$port" iqn.2025-01.org.foyer:root "$tmp/disk.img" iqn.2025-01.org.foyer:guest \
        >"$tmp/iscsi.log" 2>&1 & pid=$!
wait_port iscsi "$port"
for _ in $(seq 50); do grep -q 'Backing store path: /mnt/disk.img' "$tmp/iscsi.log" && break; sleep 0.1; done
"$servers/iscsi-probe.py" "$port" iqn.2025-01.org.foyer:root iqn.2025-01.org.foyer:guest || { cat "$tmp/iscsi.log"; fail "iscsi: login refused"; }
! "$servers/iscsi-probe.py" "$port" iqn.2025-01.org.foyer:root iqn.2025-01.org.foyer:other || fail "iscsi: another initiator got in"
! "$servers/iscsi-probe.py" "$port" iqn.2025-01.org.foyer:nothere iqn.2025-01.org.foyer:guest || fail "iscsi: a missing target answered"
stop iscsi

echo "== tang.sh"
mkdir -p "$tmp/keys" "$tmp/nokeys"
# shellcheck disable=SC2016 # the inner shell's own arguments
unshare --mount --propagation private sh -c 'mount --bind "$1" "$2/mnt" && chroot "$2" /usr/libexec/tangd-keygen /mnt' \
        keygen "$tmp/keys" "$tree"
adv() { printf 'GET /adv HTTP/1.1\r\nHost: 10.0.2.100\r\n\r\n' | "$servers/tang.sh" "$tree" "$1" "$tmp/tang.log"; }
adv "$tmp/keys" >"$tmp/adv"
head -n1 "$tmp/adv" | grep -q '^HTTP/1.1 200' || { cat "$tmp/adv"; fail "tang: GET /adv not answered 200"; }
grep -q '"payload"' "$tmp/adv" || fail "tang: no advertisement"
grep -q 'GET /adv => 200' "$tmp/tang.log" || fail "tang: its log line is not in the log"
! grep -q 'GET /adv =>' "$tmp/adv" || fail "tang: its log went into the answer"
adv "$tmp/nokeys" >"$tmp/adv" || true
! head -n1 "$tmp/adv" | grep -q '^HTTP/1.1 200' || fail "tang: answered 200 without keys"
echo "ok"
