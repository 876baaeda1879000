#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# servers.sh VM_RUN: vm-run's net, socket-net, server and guestfwd lines, against fake-qemu.sh and
# fake-server.py:
#   - servers.scenario: each server's ports are the run's own and all different, in the kernel
#     command line, the environment and host steps, which reach the servers on 127.0.0.1; a guestfwd
#     command gets its port and its comma doubled in -netdev user, net makes one card; the servers
#     are stopped (SIGTERM, which they see) when the run ends, their output kept beside the log;
#   - hostfwd with net and guestfwd: still one -netdev and one card; socket-net a second card, on
#     the server's port;
#   - a server that exits, or never listens, fails the run before the boot, naming the server and
#     showing its output; servers are stopped when the run fails and when vm-run gets SIGTERM;
#   - the lines' errors are refused with the file and line: a duplicate name, a placeholder with no
#     server (or beyond its ports, or malformed), a bad name or port count, a bad guestfwd.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
selftest_begin "${1:-}" "usage: servers.sh VM_RUN"
export FOYER_VM_QEMU=$here/fake-qemu.sh FAKE_MODE=pass FOYER_VM_TESTDIR=${here%/selftest}
export MARKER_DIR=$tmp/markers
mkdir -p "$MARKER_DIR"

run() {
        local id=$1
        shift
        rm -f "$MARKER_DIR"/*
        FAKE_ARGS_LOG=$tmp/args.$id "$vm_run" --kernel /dev/null --accel tcg --log "$tmp/console.$id" "$@" \
                2>"$tmp/stderr.$id"
}
alive() { pgrep -f "fake-server.py $1 $MARKER_DIR/" >/dev/null; }

echo "== servers.scenario"
run a "$here/servers.scenario" || { cat "$tmp/stderr.a"; fail "servers.scenario failed"; }
cat "$tmp/stderr.a"
args=$(cat "$tmp/args.a")
ports=$(grep -o 'server ECHO (pid [0-9]*)\|server [A-Z0-9]*: [0-9.:,]*' "$tmp/stderr.a" | grep -o '127\.0\.0\.1:[0-9]*' | cut -d: -f2)
[[ $(wc -l <<<"$ports") == 3 && $(sort -u <<<"$ports" | wc -l) == 3 ]] || fail "not three different ports: $ports"
read -r echo1 echo2 b2 <<<"$(tr '\n' ' ' <<<"$ports")"
[[ $args == *" nfsroot=10.0.2.2:/srv,port=$echo1,mountport=$echo2 other=$b2 "* ]] || fail "ports not in -append: $args"
[[ $args == *" -netdev user,id=n0,guestfwd=tcp:10.0.2.100:80-cmd:printf a,,b $b2 -device virtio-net-pci,netdev=n0"* ]] ||
        fail "no guestfwd on -netdev: $args"
[[ $(grep -o -- '-device virtio-net-pci' <<<"$args" | wc -l) == 1 ]] || fail "not one network card"
for w in "ports $echo1 $echo2 $b2" "host got: SERVER ECHO $echo1" "host got: SERVER ECHO $echo2" "host got: SERVER B2 $b2"; do
        grep -qx "$w" "$tmp/stderr.a" || fail "host steps: no line '$w'"
done
for s in ECHO B2; do
        [[ $(cat "$MARKER_DIR/$s" 2>/dev/null) == stopped ]] || fail "server $s did not get SIGTERM at the end"
        ! alive "$s" || fail "server $s outlived the run"
        grep -q "fake server $s listening" "$tmp/console.a.server-$s" || fail "server $s's output not in console.a.server-$s"
done

echo "== hostfwd, net and guestfwd: one card"
printf 'hostfwd 22\nnet\nguestfwd 10.0.2.100:80 cat\nexpect 15 ^HOSTFWD: listening\n' >"$tmp/one.scenario"
run b "$tmp/one.scenario" || { cat "$tmp/stderr.b"; fail "one.scenario failed"; }
grep -q -- "-netdev user,id=n0,hostfwd=tcp:127\.0\.0\.1:[0-9]*-:22,guestfwd=tcp:10\.0\.2\.100:80-cmd:cat -device virtio-net-pci,netdev=n0\$" \
        "$tmp/args.b" || { cat "$tmp/args.b"; fail "not one -netdev with both forwards and one card"; }
printf 'net\nexpect 15 Press Enter\n' >"$tmp/net.scenario"
run c "$tmp/net.scenario" || { cat "$tmp/stderr.c"; fail "net.scenario failed"; }
grep -q -- "-netdev user,id=n0 -device virtio-net-pci,netdev=n0\$" "$tmp/args.c" || { cat "$tmp/args.c"; fail "net: no plain card"; }

echo "== socket-net: a second card on a server's port, after the user network's"
printf '%s\nnet\nsocket-net @PORT_DHCP@\nexpect 15 Press Enter\n' \
        "server DHCP 1 python3 \"\$FOYER_VM_TESTDIR/selftest/fake-server.py\" DHCP \"\$MARKER_DIR/DHCP\" @PORT_DHCP@" \
        >"$tmp/socket.scenario"
run d "$tmp/socket.scenario" || { cat "$tmp/stderr.d"; fail "socket.scenario failed"; }
dport=$(grep -o 'server DHCP: 127\.0\.0\.1:[0-9]*' "$tmp/stderr.d" | cut -d: -f3)
[[ -n $dport ]] || { cat "$tmp/stderr.d"; fail "socket-net: no port for server DHCP"; }
grep -q -- "-netdev user,id=n0 -device virtio-net-pci,netdev=n0 -netdev socket,id=n1,connect=127\.0\.0\.1:$dport -device virtio-net-pci,netdev=n1,mac=52:54:00:12:34:57\( \|\$\)" \
        "$tmp/args.d" || { cat "$tmp/args.d"; fail "socket-net: no second card on 127.0.0.1:$dport after the first"; }

# shellcheck disable=SC2016 # the variables are for the server's shell
srv() { printf 'server %s 1 python3 "$FOYER_VM_TESTDIR/selftest/fake-server.py" %s "$MARKER_DIR/%s" @PORT_%s@' "$1" "$1" "$1" "$1"; }

echo "== a server that does not start"
bad "server exits" "server DEAD (script line 1) exited with status 3 before it listened on 127\.0\.0\.1:" 2 \
        'server DEAD 1 echo "broken config here"; exit 3\nexpect 5 x\n'
grep -q "^broken config here" "$tmp/stderr.x" || fail "the server's output was not shown"
[[ ! -s $tmp/args.x ]] || fail "QEMU started although a server did not"
start=$SECONDS
# (MUTE first: its deadline runs out before OK, which is started too, is waited for; a slow
# python3 under load cannot make OK the one that times out.)
FOYER_VM_SERVER_SECS=2 bad "never listens" "server MUTE (script line 1) did not listen on 127\.0\.0\.1:[0-9]* within 2s" 2 \
        "server MUTE 1 echo quiet; exec sleep 31.4142\n$(srv OK)\nexpect 5 x\n"
(( SECONDS - start < 15 )) || fail "the listen deadline was not kept"
! pgrep -f 'sleep 31\.4142' >/dev/null || fail "the silent server outlived the run"
! alive OK || fail "server OK outlived the failed run"

echo "== servers are stopped when the run fails, and on SIGTERM"
bad "failed run" "no /no-such-line/ within 2s" 1 "$(srv S1)\nexpect 5 Press Enter\nexpect 2 no-such-line\n"
[[ $(cat "$MARKER_DIR/S1" 2>/dev/null) == stopped ]] || fail "server S1 not stopped with SIGTERM after the failure"
! alive S1 || fail "server S1 outlived the failed run"
printf '%b' "$(srv S2)\nexpect 5 Press Enter\nsleep 30\n" >"$tmp/term.scenario"
rm -f "$MARKER_DIR"/*
"$vm_run" --kernel /dev/null --accel tcg "$tmp/term.scenario" 2>"$tmp/stderr.t" & pid=$!
for _ in $(seq 100); do grep -q 'matched /Press Enter/' "$tmp/stderr.t" 2>/dev/null && break; sleep 0.1; done
alive S2 || fail "server S2 is not running during the run"
kill -TERM "$pid"
wait "$pid" || true
[[ $(cat "$MARKER_DIR/S2" 2>/dev/null) == stopped ]] || fail "server S2 not stopped with SIGTERM when vm-run got it"
! alive S2 || fail "server S2 outlived vm-run's SIGTERM"

echo "== syntax"
bad "duplicate" ":2: server OK named twice (the first is line 1)" 2 "$(srv OK)\n$(srv OK)\nexpect 5 x\n"
bad "no server" ":1: @PORT_NFS@: no server line of that name before it" 2 'append root=nfs:10.0.2.2:/x,port=@PORT_NFS@\nexpect 5 x\n'
bad "server after use" ":1: @PORT_NFS@: no server line" 2 "host 5 echo @PORT_NFS@\n$(srv NFS)\nexpect 5 x\n"
bad "beyond ports" ":2: @PORT_OK_2@: beyond the ports of its server line" 2 "$(srv OK)\nappend x=@PORT_OK_2@\nexpect 5 x\n"
bad "malformed" ":2: @PORT_OK_1@: not @PORT_NAME@ or @PORT_NAME_N@ (N from 2)" 2 "$(srv OK)\nappend x=@PORT_OK_1@\nexpect 5 x\n"
bad "lower case" ":1: @PORT_nfs@: not @PORT_NAME@" 2 'append x=@PORT_nfs@\nexpect 5 x\n'
bad "bad name" ":1: server name 'nfs-1': A-Z and 0-9" 2 'server nfs-1 1 true\nexpect 5 x\n'
bad "no port count" ":1: server NFS needs its number of ports (1 to 4) before the command, not 'true'" 2 \
        'server NFS true\nexpect 5 x\n'
bad "five ports" ":1: server NFS needs its number of ports (1 to 4)" 2 'server NFS 5 true\nexpect 5 x\n'
bad "no command" ":1: server NFS needs a command" 2 'server NFS 1\nexpect 5 x\n'
bad "guestfwd no port" ":1: guestfwd needs an IPv4 ADDR:PORT of the guest's network, not '10.0.2.100:x'" 2 \
        'guestfwd 10.0.2.100:x cat\nexpect 5 x\n'
bad "guestfwd no address" ":1: guestfwd needs ADDR:PORT and a command" 2 'guestfwd cat\nexpect 5 x\n'
bad "guestfwd no command" ":1: guestfwd needs a command" 2 'guestfwd 10.0.2.100:80\nexpect 5 x\n'
bad "guestfwd twice" ":2: guestfwd 10.0.2.100:80 twice (the first is line 1)" 2 \
        'guestfwd 10.0.2.100:80 cat\nguestfwd 10.0.2.100:80 cat\nexpect 5 x\n'
bad "net with an argument" ":1: net takes no arguments" 2 'net 1\nexpect 5 x\n'
bad "socket-net no port" ":1: socket-net needs a loopback TCP port (a number or a server's @PORT_NAME@), not 'x'" 2 \
        'socket-net x\nexpect 5 x\n'
bad "socket-net no server" ":1: @PORT_DHCP@: no server line of that name before it" 2 'socket-net @PORT_DHCP@\nexpect 5 x\n'
bad "socket-net twice" ":2: only one socket-net line (the first is line 1)" 2 'socket-net 5000\nsocket-net 5001\nexpect 5 x\n'
bad "server after boot" ":2: 'server' belongs before the first boot line" 2 "boot\n$(srv OK)\nexpect 5 x\n"
echo "ok"
