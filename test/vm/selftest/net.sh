#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# net.sh VM_RUN: vm-run's hostfwd line and host steps, against fake-qemu.sh (whose user network,
# fake-hostfwd.py, listens on the forwarded port as QEMU does, with SO_REUSEADDR, and answers with
# the "guest's" $FAKE_GUEST_ID):
#   - two runs in parallel get different ports, each reaches its own guest, each command line has
#     -netdev user,id=n0,hostfwd=tcp:127.0.0.1:PORT-:22 -device virtio-net-pci,netdev=n0;
#   - the port is the same on both boots of a multi-boot scenario;
#   - a host step that exits non-zero, or outlives its deadline (it is killed), fails the run, and
#     one still running when the console fails the run is killed;
#   - @PORT@ without a hostfwd line, and a bad hostfwd line, are refused.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
selftest_begin "${1:-}" "usage: net.sh VM_RUN"
export FOYER_VM_QEMU=$here/fake-qemu.sh FAKE_MODE=pass

run() {
        local id=$1
        shift
        FAKE_GUEST_ID=$id FAKE_ARGS_LOG=$tmp/args.$id "$vm_run" --kernel /dev/null --accel tcg \
                --log "$tmp/console.$id" "$@" 2>"$tmp/stderr.$id"
}
port_of() { grep -o 'hostfwd=tcp:127\.0\.0\.1:[0-9]*-:' "$1" | sed 's/.*:\([0-9]*\)-:$/\1/' | sort -u; }

echo "== two runs in parallel"
run a "$here/hostfwd.scenario" & pid_a=$!
run b "$here/hostfwd.scenario" & pid_b=$!
wait "$pid_a" || { cat "$tmp/stderr.a"; fail "run a failed"; }
wait "$pid_b" || { cat "$tmp/stderr.b"; fail "run b failed"; }
cat "$tmp/stderr.a"
port_a=$(port_of "$tmp/args.a")
port_b=$(port_of "$tmp/args.b")
echo "ports: a=$port_a b=$port_b"
[[ $port_a =~ ^[0-9]+$ && $port_b =~ ^[0-9]+$ ]] || fail "no single forwarded port on a command line"
[[ $port_a != "$port_b" ]] || fail "both runs got port $port_a"
for id in a b; do
        port=$(port_of "$tmp/args.$id")
        grep -q -- "-netdev user,id=n0,hostfwd=tcp:127\.0\.0\.1:$port-:22 -device virtio-net-pci,netdev=n0" "$tmp/args.$id" ||
                fail "run $id: no -netdev/-device pair on the command line"
        grep -q "^host port $port\$" "$tmp/stderr.$id" || fail "run $id: the host step did not see port $port"
        grep -q "^host got: FAKE-GUEST $id 22\$" "$tmp/stderr.$id" || fail "run $id: the host step did not reach its guest"
        grep -q "host port $port forwarded to the guest's port 22" "$tmp/stderr.$id" || fail "run $id: port not announced"
done

echo "== two boots"
run m "$here/hostfwd-multiboot.scenario" || { cat "$tmp/stderr.m"; fail "hostfwd-multiboot.scenario failed"; }
[[ $(wc -l <"$tmp/args.m") == 2 ]] || fail "expected 2 QEMU starts"
[[ $(sort -u "$tmp/args.m" | wc -l) == 1 ]] || { cat "$tmp/args.m"; fail "the command lines differ between boots"; }
[[ $(grep -c 'host command ok' "$tmp/stderr.m") == 2 ]] || fail "not both host steps ran"

echo "== a host step that fails"
bad "exit 3" "the host command of script line 3 exited with status 3" 1 \
        'hostfwd 22\nexpect 5 ^HOSTFWD\nhost 5 exit 3\n'
start=$SECONDS
bad "deadline" "the host command of script line 2 did not finish within 1s" 1 \
        'expect 5 Press Enter\nhost 1 sleep 31.4159\n'
(( SECONDS - start < 10 )) || fail "the host step's deadline was not kept"
if pgrep -f 'sleep 31\.4159' >/dev/null; then
        fail "the host command outlived its deadline"
fi

bad "console failure meanwhile" "console showed forbidden pattern /HOSTFWD: a connection/" 1 \
        'hostfwd 22\nfail HOSTFWD: a connection\nexpect 15 ^HOSTFWD: listening\nhost 60 bash -c "exec 3<>/dev/tcp/127.0.0.1/@PORT@; sleep 31.2718"\n'
sleep 0.2
if pgrep -f 'sleep 31\.2718' >/dev/null; then
        fail "the host command outlived the run"
fi

echo "== syntax"
bad "@PORT@ without hostfwd" ":1: @PORT@ needs a hostfwd line before it" 2 'host 5 echo @PORT@\n'
bad "hostfwd without a port" ":1: hostfwd needs the guest's TCP port, not ''" 2 'hostfwd\nexpect 5 x\n'
bad "hostfwd 70000" "hostfwd needs the guest's TCP port, not '70000'" 2 'hostfwd 70000\nexpect 5 x\n'
bad "hostfwd after boot" ":2: 'hostfwd' belongs before the first boot line" 2 'boot\nhostfwd 22\nexpect 5 x\n'
echo "ok"
