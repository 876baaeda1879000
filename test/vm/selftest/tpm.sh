#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tpm.sh VM_RUN stub|swtpm: vm-run's tpm line, against fake-qemu.sh (which asks the TPM's control
# socket for its capabilities, as QEMU does at start, and shows the answer on the console).
#   stub:  with fake-swtpm.py as swtpm ($FOYER_VM_SWTPM):
#     - each boot of tpm.scenario starts a swtpm on the same state directory (the second start finds
#       what the first left there) and stops it (SIGTERM) after the boot; QEMU's command line has
#       -chardev socket,id=chrtpm,path=SOCK -tpmdev emulator,id=tpm0,chardev=chrtpm
#       -device tpm-crb,tpmdev=tpm0 with swtpm's own SOCK, the same on both boots;
#     - tpm-reset.scenario's third boot ("boot tpm-reset") starts on an empty state, the second on the
#       first one's; tpm-reset on the first boot, or without a tpm line, is an error;
#     - the directory, under $TMPDIR, is removed at the end, also after a failure and after SIGTERM
#       (swtpm is gone then too), and a swtpm that cannot start fails the run.
#   swtpm: the same scenario with the real swtpm (skipped, 77, when swtpm is not installed): it
#     answers on its socket, and is gone with its directory at the end.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
mode=${2:?usage: tpm.sh VM_RUN stub|swtpm}
selftest_begin "$1" "usage: tpm.sh VM_RUN stub|swtpm"
mkdir "$tmp/tmpdir"
export FOYER_VM_QEMU=$here/fake-qemu.sh FAKE_MODE=pass FAKE_ARGS_LOG=$tmp/args TMPDIR=$tmp/tmpdir

run() {
        "$vm_run" --kernel /dev/null --accel tcg --log "$tmp/console.log" "$@"
}
left_behind() { [[ -z $(ls -A "$tmp/tmpdir") ]] || { ls -lR "$tmp/tmpdir"; fail "$1: left behind in \$TMPDIR"; }; }
# The ctrl socket on QEMU's command line: the same on every boot, in the run's tpm directory.
chardev_sock() {
        [[ $(sort -u "$tmp/args" | wc -l) == 1 ]] || { cat "$tmp/args"; fail "the command lines differ between boots"; }
        grep -o -- '-chardev socket,id=chrtpm,path=[^ ]* -tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-crb,tpmdev=tpm0' \
                "$tmp/args" | head -n1 | sed 's/.*path=//; s/ .*//'
}

if [[ $mode == swtpm ]]; then
        command -v swtpm >/dev/null || { echo "SKIP: swtpm is not installed (package swtpm)"; exit 77; }
        echo "== tpm.scenario with $(command -v swtpm)"
        run "$here/tpm.scenario" 2>&1 || fail "tpm.scenario failed with the real swtpm"
        sock=$(chardev_sock)
        [[ $sock == "$tmp/tmpdir/vm-run-tpm-"*/swtpm.sock ]] || fail "no TPM on QEMU's command line, or not under \$TMPDIR"
        [[ $(grep -c '^TPM: ctrl answered result=0 caps=0x' "$tmp/console.log") == 2 ]] || fail "swtpm did not answer on both boots"
        ! grep -q 'caps=0x5354' "$tmp/console.log" || fail "the stub answered, not swtpm"
        if pgrep -f "swtpm socket .*${sock%/swtpm.sock}" >/dev/null; then
                fail "swtpm still runs"
        fi
        left_behind "swtpm"
        echo "ok"
        exit 0
fi

export FOYER_VM_SWTPM=$here/fake-swtpm.py FAKE_SWTPM_LOG=$tmp/swtpm.log
echo "== two boots"
run "$here/tpm.scenario" || fail "tpm.scenario failed"
cat "$tmp/swtpm.log"
sock=$(chardev_sock)
[[ $sock == "$tmp/tmpdir/vm-run-tpm-"*/swtpm.sock ]] || { cat "$tmp/args"; fail "no TPM with a socket under \$TMPDIR on QEMU's command line"; }
dir=${sock%/swtpm.sock}
want="socket --tpm2 --tpmstate dir=$dir/state --ctrl type=unixio,path=$sock"
mapfile -t lines <"$tmp/swtpm.log"
[[ ${#lines[@]} == 4 ]] || fail "expected start, stop, start, stop in the swtpm log"
read -r _ pid1 n1 args1 <<<"${lines[0]}"
read -r _ pid2 n2 args2 <<<"${lines[2]}"
[[ ${lines[0]} == start* && ${lines[2]} == start* ]] || fail "no start before each boot"
[[ $args1 == "$want" && $args2 == "$want" ]] || fail "swtpm's command line is not '$want'"
[[ $n1 == 1 && $n2 == 2 ]] || fail "the second swtpm did not find the first one's state (starts $n1, $n2)"
[[ ${lines[1]} == "stop $pid1" && ${lines[3]} == "stop $pid2" ]] || fail "a swtpm was not stopped by SIGTERM"
[[ $(tr -d '\r' <"$tmp/console.log" | grep -c '^TPM: ctrl answered result=0 caps=0x5354$') == 2 ]] || fail "QEMU did not reach swtpm on both boots"
left_behind "two boots"

echo "== boot tpm-reset"
: >"$tmp/swtpm.log"
run "$here/tpm-reset.scenario" || fail "tpm-reset.scenario failed"
cat "$tmp/swtpm.log"
starts=$(awk '$1 == "start" { printf "%s ", $3 }' "$tmp/swtpm.log")
[[ $starts == "1 2 1 " ]] || fail "starts on the state: $starts, not 1 2 1 (the third boot's state was not reset)"
[[ $(grep -c '^stop ' "$tmp/swtpm.log") == 3 ]] || fail "not every swtpm was stopped"
left_behind "boot tpm-reset"
for bad in "boot tpm-reset" "boot tpm-resets"; do
        printf 'tpm\n%s\nexpect 1 x\n' "$bad" >"$tmp/bad.scenario"
        if run "$tmp/bad.scenario" 2>"$tmp/stderr"; then
                fail "'$bad' accepted"
        fi
        grep -q "bad.scenario:2: " "$tmp/stderr" || { cat "$tmp/stderr"; fail "'$bad': no error naming line 2"; }
done
printf 'boot\nexpect 1 x\nboot tpm-reset\nexpect 1 x\n' >"$tmp/bad.scenario"
if run "$tmp/bad.scenario" 2>"$tmp/stderr"; then
        fail "tpm-reset without tpm accepted"
fi
grep -q "boot tpm-reset without a tpm line" "$tmp/stderr" || { cat "$tmp/stderr"; fail "tpm-reset without tpm: no error"; }
left_behind "bad tpm-reset lines"

echo "== a failing boot"
: >"$tmp/swtpm.log"
printf 'tpm\nexpect 15 ^TPM: ctrl answered\nexpect 1 ^never$\n' >"$tmp/fail.scenario"
if run "$tmp/fail.scenario" 2>"$tmp/stderr"; then
        fail "fail.scenario passed"
fi
grep -q "no /^never\$/ within 1s" "$tmp/stderr" || { cat "$tmp/stderr"; fail "not the expected failure"; }
cat "$tmp/swtpm.log"
read -r _ pid _ <"$tmp/swtpm.log"
[[ $(sed -n 2p "$tmp/swtpm.log") == "stop $pid" ]] || fail "swtpm was not stopped after the failure"
left_behind "a failing boot"

echo "== SIGTERM"
: >"$tmp/swtpm.log"
# The console log of the boot before holds the line waited for below: without it, the wait ended at
# once and, on a loaded machine, read found no swtpm started yet.
rm -f "$tmp/console.log"
printf 'tpm\nexpect 15 ^TPM: ctrl answered\nexpect 60 ^never$\n' >"$tmp/term.scenario"
# (vm-run itself in the background, not a subshell running run)
"$vm_run" --kernel /dev/null --accel tcg --log "$tmp/console.log" "$tmp/term.scenario" 2>"$tmp/stderr" & vm=$!
for _ in $(seq 150); do
        grep -q '^TPM: ctrl answered' "$tmp/console.log" 2>/dev/null && [[ -s $tmp/swtpm.log ]] && break
        sleep 0.1
done
grep -q '^TPM: ctrl answered' "$tmp/console.log" || fail "the TPM did not come up"
read -r _ pid _ <"$tmp/swtpm.log" || fail "no swtpm start in the stub's log"
kill -TERM "$vm"
rc=0
wait "$vm" || rc=$?
[[ $rc == 143 ]] || fail "vm-run exited $rc after SIGTERM, not 143"
sleep 0.2
if kill -0 "$pid" 2>/dev/null; then
        fail "swtpm $pid outlived vm-run"
fi
left_behind "SIGTERM"

echo "== a swtpm that cannot start"
: >"$tmp/args"
rc=0
FOYER_VM_SWTPM=$tmp/no-such-swtpm run "$here/tpm.scenario" 2>"$tmp/stderr" || rc=$?
cat "$tmp/stderr"
[[ $rc == 2 ]] || fail "exit status $rc, not 2"
grep -q "no-such-swtpm exited (status 127) before its socket .* appeared" "$tmp/stderr" || fail "no message"
[[ ! -s $tmp/args ]] || fail "QEMU was started without its TPM"
left_behind "no swtpm"
echo "ok"
